/* SPDX-License-Identifier: MIT */
/*
 * rxray diff: stage-by-stage delta of cycles/packet between two
 * configurations selected by their knobs, the verdict line, and what the
 * ceiling would be if one stage cost what it costs in A.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "rxray/analyze.h"
#include "rxray/util.h"

#define VERB "diff"

static void diff_usage(FILE *f)
{
	fprintf(f,
		"USAGE\n"
		"  rxray diff RESULTS A B [--format md|json] [-n ROWS] [-o FILE]\n"
		"  rxray diff RUN_A.json RUN_B.json [options]\n"
		"\n"
		"Two run results (or two result sets holding one measured point each)\n"
		"are compared as they are, whatever their knobs.\n"
		"\n"
		"A and B select points by knobs: knob=value[,knob=value]. Points of A\n"
		"and B are paired when every other knob is equal (mode=single vs\n"
		"mode=hds pairs each frame size with itself); each pair gets its stage\n"
		"deltas per thread (sorted by size), a verdict line, and B's predicted\n"
		"ceiling if one stage cost what it costs in A. RESULTS as for ceiling.\n"
		"\n"
		"OPTIONS\n"
		"  -f, --format FMT   md (default) or json\n"
		"  -n, --rows N       stage rows per pair (default 12, 0 = all)\n"
		"  -o, --output FILE  default '-' (stdout)\n"
		"  -h, --help\n"
		"\n"
		"EXAMPLES\n"
		"  rxray diff results/sweep mode=single mode=hds\n"
		"  rxray diff verbs.json daqiri.json\n"
		"  rxray diff results/sweep engine=verbs,mode=hds engine=dpdk,mode=hds --format json\n"
		"\n"
		"Exit codes: 0 ok, 1 runtime failure, 2 bad input.\n");
}

/*
 * a and b pair when every knob both carry, the selectors' keys aside, is
 * equal (a knob only one side has, like split on hds, does not count).
 * rest gets the shared knobs.
 */
static bool pair_on(const struct rxr_point *a, const struct rxr_point *b, const struct rxr_sel *sa,
		    const struct rxr_sel *sb, char *rest, size_t n)
{
	size_t len = 0;
	const char *k;
	json_t *v;
	rest[0] = '\0';
	json_object_foreach(a->knobs, k, v) {
		bool sel = false;
		for (size_t i = 0; i < sa->n; i++)
			sel |= !strcmp(sa->k[i], k);
		for (size_t i = 0; i < sb->n; i++)
			sel |= !strcmp(sb->k[i], k);
		char x[256], y[256];
		if (sel || !rxr_result_knob_str(a->knobs, k, x, sizeof(x)) ||
		    !rxr_result_knob_str(b->knobs, k, y, sizeof(y)))
			continue;
		if (strcmp(x, y))
			return false;
		if (len < n)
			len += (size_t)snprintf(rest + len, n - len, "%s%s=%s", len ? "," : "", k, x);
	}
	rxr_utf8_trim(rest); /* a long list is cut at a character */
	return true;
}

static int pair_cmp(const void *a, const void *b)
{
	const size_t *x = a, *y = b;
	return x[0] != y[0] ? (x[0] > y[0]) - (x[0] < y[0]) : (x[1] > y[1]) - (x[1] < y[1]);
}

/*
 * Candidate pairs (a of A, b of B, a != b) in the order a plain double
 * loop visits them, but only within groups of points that agree on the
 * knobs every measured point has (rxr_set_group, selector keys aside):
 * pair_on cannot hold across groups, and a 10,000-point sweep must not
 * cost 10,000^2 comparisons. any: A and B are one point each, which pair
 * whatever their knobs. *out (pairs of indices) owned by the caller.
 */
static int diff_candidates(const struct rxr_set *s, const struct rxr_sel *sa,
			   const struct rxr_sel *sb, bool any, size_t **out, size_t *nout)
{
	size_t nskip = sa->n + sb->n, np = 0, cap = 0, *pairs = NULL;
	const char **skip = calloc(nskip ? nskip : 1, sizeof(*skip));
	size_t *group = calloc(s->n ? s->n : 1, sizeof(*group));
	size_t *ord = calloc(s->n ? s->n : 1, sizeof(*ord));
	int rc = -ENOMEM;
	*out = NULL;
	*nout = 0;
	if (!skip || !group || !ord)
		goto out;
	for (size_t i = 0; i < sa->n; i++)
		skip[i] = sa->k[i];
	for (size_t i = 0; i < sb->n; i++)
		skip[sa->n + i] = sb->k[i];
	if (rxr_set_group(s, skip, nskip, group))
		goto out;
	/* points by group (counting sort on the group number), index order within */
	size_t ngroups = 0, n = 0;
	for (size_t i = 0; i < s->n; i++)
		if (group[i] != SIZE_MAX && group[i] + 1 > ngroups)
			ngroups = group[i] + 1;
	if (any)
		for (size_t i = 0; i < s->n; i++)
			group[i] = group[i] == SIZE_MAX ? SIZE_MAX : 0;
	size_t *start = calloc(ngroups + 2, sizeof(*start));
	if (!start)
		goto out;
	for (size_t i = 0; i < s->n; i++)
		if (group[i] != SIZE_MAX)
			start[group[i] + 1]++;
	for (size_t g = 1; g < ngroups + 2; g++)
		start[g] += start[g - 1];
	for (size_t i = 0; i < s->n; i++)
		if (group[i] != SIZE_MAX)
			ord[start[group[i]]++] = i, n++;
	/* start[g] now holds the end of group g; group g begins at start[g - 1] (0 for g 0) */
	for (size_t g = 0, b0 = 0; g < ngroups && b0 < n; b0 = start[g++]) {
		for (size_t x = b0; x < start[g]; x++) {
			if (!rxr_sel_match(sa, s->pts[ord[x]].knobs))
				continue;
			for (size_t y = b0; y < start[g]; y++) {
				if (y == x || !rxr_sel_match(sb, s->pts[ord[y]].knobs))
					continue;
				if (np == cap) {
					size_t nc = cap ? cap * 2 : 64;
					size_t *nn = realloc(pairs, nc * 2 * sizeof(size_t));
					if (!nn) {
						free(start);
						goto out;
					}
					pairs = nn;
					cap = nc;
				}
				pairs[2 * np] = ord[x];
				pairs[2 * np + 1] = ord[y];
				np++;
			}
		}
	}
	free(start);
	if (np)
		qsort(pairs, np, 2 * sizeof(size_t), pair_cmp);
	*out = pairs;
	*nout = np;
	pairs = NULL;
	rc = 0;
out:
	free(skip);
	free(group);
	free(ord);
	free(pairs);
	return rc;
}

/* Why a point's figures are not clean ("oversubscribed", "disturbed",
 * "unresolved"), or NULL. */
static const char *diff_mark(const struct rxr_point *p)
{
	const char *why = NULL;
	return rxr_point_clean(p, &why) ? NULL : why;
}

static int diff_pair(FILE *o, bool json, json_t *arr, const struct rxr_point *pa,
		     const struct rxr_point *pb, const char *la, const char *lb, const char *rest,
		     size_t rows)
{
	struct rxr_diff d;
	int rc = rxr_diff_compute(rxr_point_run(pa), rxr_point_run(pb), pb->knobs, la, lb, &d);
	if (rc)
		return rc;
	if (json) {
		json_t *j = rxr_diff_json(&d, la, lb);
		if (j) {
			json_object_set_new(j, "point_a", json_string(pa->key));
			json_object_set_new(j, "point_b", json_string(pb->key));
			const char *ma = diff_mark(pa), *mb = diff_mark(pb);
			json_object_set_new(j, "marks",
					    json_pack("{s:o,s:o}", "a", ma ? json_string(ma) : json_null(),
						      "b", mb ? json_string(mb) : json_null()));
		}
		rc = j ? json_array_append_new(arr, j) : -ENOMEM;
		rxr_diff_free(&d);
		return rc ? -ENOMEM : 0;
	}
	struct rxr_table *t = NULL;
	rxr_diff_table(&d, la, lb, rows, &t);
	struct rxr_table *w = NULL;
	rxr_whatif_table(&d, &w);
	if (!t || !w) {
		rc = -ENOMEM;
		goto out;
	}
	fprintf(o, "## %s vs %s%s%s\n\n", la, lb, rest[0] ? " at " : "", rest);
	const char *ma = diff_mark(pa), *mb = diff_mark(pb);
	if (ma || mb)
		fprintf(o, "> MARKED: %s%s%s%s%s%s%s: the host's share is in these figures; never "
			   "read them as a ceiling\n\n",
			ma ? la : "", ma ? " " : "", ma ? ma : "", ma && mb ? "; " : "", mb ? lb : "",
			mb ? " " : "", mb ? mb : "");
	fprintf(o, "**%s**\n\n", d.verdict);
	rc = rxr_table_write_md(t, o);
	if (!rc && w->nrows) {
		fprintf(o, "\nWhat %s would reach if one stage of its %s thread cost what it costs in %s:\n\n",
			d.whatif_run, d.whatif_thread, d.whatif_from);
		rc = rxr_table_write_md(w, o);
	}
	fputc('\n', o);
out:
	rxr_table_free(t);
	rxr_table_free(w);
	rxr_diff_free(&d);
	return rc;
}

/* The one measured point of a set, or NULL (with the count in *n). */
static const struct rxr_point *only_point(const struct rxr_set *s, size_t *n)
{
	const struct rxr_point *p = NULL;
	*n = 0;
	for (size_t i = 0; i < s->n; i++)
		if (rxr_point_run(&s->pts[i])) {
			p = &s->pts[i];
			(*n)++;
		}
	return *n == 1 ? p : NULL;
}

/* Write doc-or-markdown for one pair to output; the common tail of both forms. */
static int diff_emit(const struct rxr_point *pa, const struct rxr_point *pb, const char *la,
		     const char *lb, bool json, const char *output, size_t rows)
{
	struct rxr_afile af = {0};
	json_t *arr = json ? json_array() : NULL;
	int rc;
	if (json && !arr)
		return RXR_EXIT_RUNTIME;
	if ((rc = rxr_cli_out_open(VERB, output, &af))) {
		json_decref(arr);
		return rc;
	}
	rc = diff_pair(af.f, json, arr, pa, pb, la, lb, "", rows);
	if (!rc && json) {
		json_t *doc = json_pack("{s:s,s:s,s:s,s:O}", "schema", "rxray.diff/1", "a", la, "b",
					lb, "pairs", arr);
		rc = doc && !json_dumpf(doc, af.f, JSON_INDENT(2)) ? 0 : -EIO;
		fputc('\n', af.f);
		json_decref(doc);
	}
	json_decref(arr);
	return rxr_cli_out_finish(VERB, output, &af, rc);
}

static int diff_files(const char *fa, const char *fb, bool json, const char *output, size_t rows)
{
	struct rxr_set *sa = NULL, *sb = NULL;
	int ec = RXR_EXIT_OK;
	const char *files[2] = {fa, fb};
	struct rxr_set **sets[2] = {&sa, &sb};
	const struct rxr_point *p[2] = {NULL, NULL};
	for (int i = 0; i < 2; i++) {
		size_t n;
		if ((ec = rxr_cli_set_load(VERB, files[i], sets[i])))
			goto out;
		p[i] = only_point(*sets[i], &n);
		if (!p[i]) {
			ec = rxr_usage_err(VERB,
					   "%s: holds %zu measured points; name them: rxray diff "
					   "RESULTS A B",
					   files[i], n);
			goto out;
		}
	}
	const char *la = strrchr(fa, '/') ? strrchr(fa, '/') + 1 : fa;
	const char *lb = strrchr(fb, '/') ? strrchr(fb, '/') + 1 : fb;
	ec = diff_emit(p[0], p[1], la, lb, json, output, rows);
out:
	rxr_set_free(sa);
	rxr_set_free(sb);
	return ec;
}

int rxr_cmd_diff(int argc, char **argv)
{
	static const struct option lo[] = {{"format", required_argument, NULL, 'f'},
					   {"rows", required_argument, NULL, 'n'},
					   {"output", required_argument, NULL, 'o'},
					   {"help", no_argument, NULL, 'h'},
					   {NULL, 0, NULL, 0}};
	const char *fmt = "md", *output = "-";
	uint64_t rows = 12;
	int c;
	optind = 1;
	while ((c = rxr_cli_getopt(VERB, argc, argv, "f:n:o:h", lo)) != -1) {
		switch (c) {
		case 'f': fmt = optarg; break;
		case 'o': output = optarg; break;
		case 'n':
			if (rxr_parse_u64(optarg, 0, 100000, &rows))
				return rxr_usage_err(VERB, "--rows: '%s' is not a count in 0..100000", optarg);
			break;
		case 'h': diff_usage(stdout); return RXR_EXIT_OK;
		default: return RXR_EXIT_USAGE;
		}
	}
	if (strcmp(fmt, "md") && strcmp(fmt, "json"))
		return rxr_usage_err(VERB, "--format: '%s' (expected md or json)", fmt);
	if (argc - optind == 2)
		return diff_files(argv[optind], argv[optind + 1], !strcmp(fmt, "json"), output,
				  (size_t)rows);
	if (argc - optind != 3)
		return rxr_usage_err(VERB, "expected RUN_A RUN_B or RESULTS A B, got %d argument%s "
					   "(rxray diff --help)", argc - optind, argc - optind == 1 ? "" : "s");
	char err[RXR_ERR_LEN];
	struct rxr_set *s = NULL;
	struct rxr_sel sa = {0}, sb = {0};
	struct rxr_afile af = {0};
	json_t *arr = NULL;
	int ec = 0, rc;
	if (rxr_sel_parse(argv[optind + 1], &sa, err, sizeof(err)) ||
	    rxr_sel_parse(argv[optind + 2], &sb, err, sizeof(err))) {
		ec = rxr_usage_err(VERB, "%s", err);
		goto out;
	}
	if ((ec = rxr_cli_set_load(VERB, argv[optind], &s)))
		goto out;
	char la[128], lb[128];
	rxr_sel_labels(&sa, &sb, la, lb, sizeof(la));
	size_t na = 0, nb = 0;
	for (size_t i = 0; i < s->n; i++) {
		na += rxr_sel_match(&sa, s->pts[i].knobs) && rxr_point_run(&s->pts[i]);
		nb += rxr_sel_match(&sb, s->pts[i].knobs) && rxr_point_run(&s->pts[i]);
	}
	if (!na || !nb) {
		ec = rxr_usage_err(VERB, "%s: no measured point matches %s", argv[optind],
				   !na ? sa.text : sb.text);
		goto out;
	}
	bool json = !strcmp(fmt, "json");
	arr = json ? json_array() : NULL;
	if (json && !arr) {
		ec = RXR_EXIT_RUNTIME;
		goto out;
	}
	if ((ec = rxr_cli_out_open(VERB, output, &af)))
		goto out;
	size_t pairs = 0, ncand = 0, *cand = NULL;
	if ((rc = diff_candidates(s, &sa, &sb, na == 1 && nb == 1, &cand, &ncand))) {
		rxr_afile_abort(&af);
		ec = RXR_EXIT_RUNTIME;
		rxr_err(VERB, "%s", strerror(-rc));
		goto out;
	}
	for (size_t q = 0; q < ncand && !rc; q++) {
		const struct rxr_point *pa = &s->pts[cand[2 * q]], *pb = &s->pts[cand[2 * q + 1]];
		char ra[1024];
		if (!pair_on(pa, pb, &sa, &sb, ra, sizeof(ra)) && !(na == 1 && nb == 1))
			continue;
		rc = diff_pair(af.f, json, arr, pa, pb, la, lb, ra, (size_t)rows);
		pairs++;
	}
	free(cand);
	if (!rc && !pairs) {
		rxr_afile_abort(&af);
		ec = rxr_usage_err(VERB, "%s: no pair of points matching %s and %s agrees on the other knobs",
				   argv[optind], sa.text, sb.text);
		goto out;
	}
	if (!rc && json) {
		json_t *doc = json_pack("{s:s,s:s,s:s,s:O}", "schema", "rxray.diff/1", "a", sa.text, "b",
					sb.text, "pairs", arr);
		rc = doc && !json_dumpf(doc, af.f, JSON_INDENT(2)) ? 0 : -EIO;
		fputc('\n', af.f);
		json_decref(doc);
	}
	ec = rxr_cli_out_finish(VERB, output, &af, rc);
out:
	json_decref(arr);
	rxr_sel_free(&sa);
	rxr_sel_free(&sb);
	rxr_set_free(s);
	return ec;
}
