/* SPDX-License-Identifier: MIT */
/*
 * rxray diff: stage-by-stage delta of cycles/packet between two
 * configurations selected by their knobs, the verdict line, and what the
 * ceiling would be if one stage cost what it costs in A.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "rxray/analyze.h"
#include "rxray/pair.h"
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
		"deltas per thread (sorted by size), a verdict line, and what the side\n"
		"with the lower accounting (clock / busy cycles per packet; never a\n"
		"prediction) would account for if one stage cost what it costs in the\n"
		"other. A side's marks\n"
		"(oversubscribed, disturbed, unresolved, interrupted, external\n"
		"generator) open the pair, each with its reason. RESULTS as for ceiling.\n"
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

/* The knobs the selectors name: a pair differs there by construction. */
static size_t diff_skip(const struct rxa_sel *sa, const struct rxa_sel *sb, const char **skip)
{
	size_t n = 0;
	for (size_t i = 0; i < sa->n; i++)
		skip[n++] = sa->k[i];
	for (size_t i = 0; i < sb->n; i++)
		skip[n++] = sb->k[i];
	return n;
}

/* Why a point's figures are not clean ("oversubscribed", "disturbed",
 * "unresolved", "interrupted"), or NULL; each mark's reason: rxa_marks_phrase. */
static const char *diff_mark(const struct rxa_point *p)
{
	const char *why = NULL;
	return rxa_point_clean(p, &why) ? NULL : why;
}

static int diff_pair(FILE *o, bool json, json_t *arr, const struct rxa_point *pa,
		     const struct rxa_point *pb, const char *la, const char *lb, const char *rest,
		     size_t rows)
{
	struct rxa_diff d;
	int rc = rxa_diff_compute(rxa_point_run(pa), rxa_point_run(pb), pb->knobs, la, lb, &d);
	if (rc)
		return rc;
	if (json) {
		json_t *j = rxa_diff_json(&d, la, lb);
		if (j) {
			json_object_set_new(j, "point_a", json_string(pa->key));
			json_object_set_new(j, "point_b", json_string(pb->key));
			const char *ma = diff_mark(pa), *mb = diff_mark(pb);
			char ra[2048], rb[2048];
			rxa_marks_phrase(pa, rxa_point_marks(pa), true, ra, sizeof(ra));
			rxa_marks_phrase(pb, rxa_point_marks(pb), true, rb, sizeof(rb));
			json_object_set_new(j, "marks",
					    json_pack("{s:o,s:o,s:o,s:o}", "a", ma ? json_string(ma) : json_null(),
						      "b", mb ? json_string(mb) : json_null(), "a_reasons",
						      ra[0] ? json_string(ra) : json_null(), "b_reasons",
						      rb[0] ? json_string(rb) : json_null()));
		}
		rc = j ? json_array_append_new(arr, j) : -ENOMEM;
		rxa_diff_free(&d);
		return rc ? -ENOMEM : 0;
	}
	struct rxa_table *t = NULL;
	rxa_diff_table(&d, la, lb, rows, &t);
	struct rxa_table *w = NULL;
	rxa_whatif_table(&d, &w);
	if (!t || !w) {
		rc = -ENOMEM;
		goto out;
	}
	fprintf(o, "## %s vs %s%s%s\n\n", la, lb, rest[0] ? " at " : "", rest);
	/* each side's marks, each with its own reason (rxa_marks_phrase) */
	char ra[2048], rb[2048];
	rxa_marks_phrase(pa, rxa_point_marks(pa), true, ra, sizeof(ra));
	rxa_marks_phrase(pb, rxa_point_marks(pb), true, rb, sizeof(rb));
	if (ra[0] || rb[0])
		fprintf(o, "> MARKED: %s%s%s%s%s%s%s\n\n", ra[0] ? la : "", ra[0] ? " " : "", ra,
			ra[0] && rb[0] ? " / " : "", rb[0] ? lb : "", rb[0] ? " " : "", rb);
	fprintf(o, "**%s**\n\n", d.verdict);
	rc = rxa_table_write_md(t, o);
	if (!rc && w->nrows) {
		fprintf(o, "\nWhat %s would reach if one stage of its %s thread cost what it costs in %s:\n\n",
			d.whatif_run, d.whatif_thread, d.whatif_from);
		rc = rxa_table_write_md(w, o);
	}
	fputc('\n', o);
out:
	rxa_table_free(t);
	rxa_table_free(w);
	rxa_diff_free(&d);
	return rc;
}

/* The one measured point of a set, or NULL (with the count in *n). */
static const struct rxa_point *only_point(const struct rxa_set *s, size_t *n)
{
	const struct rxa_point *p = NULL;
	*n = 0;
	for (size_t i = 0; i < s->n; i++)
		if (rxa_point_run(&s->pts[i])) {
			p = &s->pts[i];
			(*n)++;
		}
	return *n == 1 ? p : NULL;
}

/* Write doc-or-markdown for one pair to output; the common tail of both forms. */
static int diff_emit(const struct rxa_point *pa, const struct rxa_point *pb, const char *la,
		     const char *lb, bool json, const char *output, size_t rows)
{
	struct rxr_afile af = {0};
	json_t *arr = json ? json_array() : NULL;
	int rc;
	if (json && !arr)
		return RXU_EXIT_RUNTIME;
	if ((rc = rxt_cli_out_open(VERB, output, &af))) {
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
	return rxt_cli_out_finish(VERB, output, &af, rc);
}

static int diff_files(const char *fa, const char *fb, bool json, const char *output, size_t rows)
{
	struct rxa_set *sa = NULL, *sb = NULL;
	int ec = RXU_EXIT_OK;
	const char *files[2] = {fa, fb};
	struct rxa_set **sets[2] = {&sa, &sb};
	const struct rxa_point *p[2] = {NULL, NULL};
	for (int i = 0; i < 2; i++) {
		size_t n;
		if ((ec = rxt_cli_set_load(VERB, files[i], sets[i])))
			goto out;
		p[i] = only_point(*sets[i], &n);
		if (!p[i]) {
			ec = rxu_usage_err(VERB,
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
	rxa_set_free(sa);
	rxa_set_free(sb);
	return ec;
}

int rxt_cmd_diff(int argc, char **argv)
{
	static const char *const formats[] = {"md", "json", NULL};
	static const struct rxt_ana_spec spec = {
	    .want = RXT_AO_FORMAT | RXT_AO_ROWS | RXT_AO_OUTPUT,
	    .formats = formats,
	    .output = "-",
	    .min_operands = 2,
	    .max_operands = 3,
	    .operands = "RUN_A RUN_B or RESULTS A B",
	    .counted = "argument",
	    .usage = diff_usage,
	};
	struct rxt_ana_opts ao;
	int ec = rxt_cli_ana_parse(VERB, argc, argv, &spec, &ao);
	if (ec != RXT_CLI_GO)
		return ec;
	const char *fmt = ao.format, *output = ao.output;
	char **arg = ao.operand;
	uint64_t rows = ao.rows;
	if (ao.noperands == 2)
		return diff_files(arg[0], arg[1], !strcmp(fmt, "json"), output, (size_t)rows);
	char err[RXA_ERR_LEN];
	struct rxa_set *s = NULL;
	struct rxa_sel sa = {0}, sb = {0};
	struct rxr_afile af = {0};
	json_t *arr = NULL;
	int rc;
	ec = RXU_EXIT_OK;
	if (rxa_sel_parse(arg[1], &sa, err, sizeof(err)) ||
	    rxa_sel_parse(arg[2], &sb, err, sizeof(err))) {
		ec = rxu_usage_err(VERB, "%s", err);
		goto out;
	}
	if ((ec = rxt_cli_set_load(VERB, arg[0], &s)))
		goto out;
	char la[128], lb[128];
	rxa_sel_labels(&sa, &sb, la, lb, sizeof(la));
	size_t na = 0, nb = 0;
	for (size_t i = 0; i < s->n; i++) {
		na += rxa_sel_match(&sa, s->pts[i].knobs) && rxa_point_run(&s->pts[i]);
		nb += rxa_sel_match(&sb, s->pts[i].knobs) && rxa_point_run(&s->pts[i]);
	}
	if (!na || !nb) {
		ec = rxu_usage_err(VERB, "%s: no measured point matches %s", arg[0],
				   !na ? sa.text : sb.text);
		goto out;
	}
	bool json = !strcmp(fmt, "json");
	arr = json ? json_array() : NULL;
	if (json && !arr) {
		ec = RXU_EXIT_RUNTIME;
		goto out;
	}
	if ((ec = rxt_cli_out_open(VERB, output, &af)))
		goto out;
	size_t pairs = 0, ncand = 0, *cand = NULL;
	const char *skip[2 * RXA_SEL_MAX];
	size_t nskip = diff_skip(&sa, &sb, skip);
	bool any = na == 1 && nb == 1; /* one point each: they pair whatever their knobs */
	if ((rc = rxa_pair_candidates(s, skip, nskip, &sa, &sb, any ? RXA_PAIR_ANY : 0, &cand,
				      &ncand))) {
		rxr_afile_abort(&af);
		ec = RXU_EXIT_RUNTIME;
		rxu_err(VERB, "%s", strerror(-rc));
		goto out;
	}
	for (size_t q = 0; q < ncand && !rc; q++) {
		const struct rxa_point *pa = &s->pts[cand[2 * q]], *pb = &s->pts[cand[2 * q + 1]];
		char ra[1024];
		if (!rxa_pair_agrees(pa, pb, skip, nskip, ra, sizeof(ra)) && !any)
			continue;
		rc = diff_pair(af.f, json, arr, pa, pb, la, lb, ra, (size_t)rows);
		pairs++;
	}
	free(cand);
	if (!rc && !pairs) {
		rxr_afile_abort(&af);
		ec = rxu_usage_err(
		    VERB, "%s: no pair of points matching %s and %s agrees on the other knobs",
		    arg[0], sa.text, sb.text);
		goto out;
	}
	if (!rc && json) {
		json_t *doc = json_pack("{s:s,s:s,s:s,s:O}", "schema", "rxray.diff/1", "a", sa.text, "b",
					sb.text, "pairs", arr);
		rc = doc && !json_dumpf(doc, af.f, JSON_INDENT(2)) ? 0 : -EIO;
		fputc('\n', af.f);
		json_decref(doc);
	}
	ec = rxt_cli_out_finish(VERB, output, &af, rc);
out:
	json_decref(arr);
	rxa_sel_free(&sa);
	rxa_sel_free(&sb);
	rxa_set_free(s);
	return ec;
}
