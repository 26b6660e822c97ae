/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: one reader, one meaning (issue 43). The input is a
 * result file (first byte: even = .jsonl, odd = .json, as fuzz_set.c),
 * read three ways: as it is; re-written with a space after every ':' and
 * ',' (one record a line, as Python's json.dumps writes; a .json document
 * indented over many lines, as `jq .` writes); and with every object's
 * keys in reverse order. A line jansson refuses stays as it is in every
 * form, and every line keeps its newline (or its lack of one), so the
 * forms differ only in how each record is written. Each form is written
 * to the same path in turn and loaded with rxa_set_load.
 *
 * Oracle: the loader takes all three forms or none, and what the
 * analysis verbs print from them - the set's points, the ceiling table
 * and JSON, the bound table, the cost model's table, stage diffs and
 * what-ifs of neighbouring points, a what-if on every point - is
 * byte-identical. Any difference aborts (a finding): a reader whose
 * meaning depends on the bytes, not on the JSON they hold.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rxray/analyze.h"
#include "rxray/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum form { FORM_AS_IS, FORM_SPACED, FORM_REVERSED, FORM_N };

/* j with every object's members in reverse order (a new reference, NULL on ENOMEM). */
static json_t *reversed(json_t *j)
{
	json_t *o = NULL, *v;
	if (json_is_array(j)) {
		size_t i;
		o = json_array();
		json_array_foreach(j, i, v)
			if (!o || json_array_append_new(o, reversed(v)))
				goto fail;
		return o;
	}
	if (!json_is_object(j))
		return json_incref(j);
	size_t n = json_object_size(j), i = 0;
	const char **keys = malloc((n ? n : 1) * sizeof(*keys));
	const char *k;
	o = json_object();
	if (!keys || !o) {
		free(keys);
		goto fail;
	}
	json_object_foreach(j, k, v)
		keys[i++] = k;
	while (i-- > 0)
		if (json_object_set_new_nocheck(o, keys[i], reversed(json_object_get(j, keys[i])))) {
			free(keys);
			goto fail;
		}
	free(keys);
	return o;
fail:
	json_decref(o);
	return NULL;
}

/* One record in form f (not FORM_AS_IS), or NULL when jansson refuses it. */
static char *record(const char *text, size_t len, enum form f, bool one_line)
{
	json_error_t je;
	json_t *doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (!doc)
		return NULL;
	char *s = NULL;
	if (f == FORM_REVERSED) {
		json_t *r = reversed(doc);
		s = r ? json_dumps(r, JSON_COMPACT) : NULL;
		json_decref(r);
	} else {
		/* without JSON_COMPACT: ", " and ": "; without an indent: one line */
		s = json_dumps(doc, one_line ? 0 : JSON_INDENT(2));
	}
	json_decref(doc);
	if (!s)
		abort(); /* out of memory in the harness: say so */
	return s;
}

/* text in form f into path; false when the harness could not write it. */
static bool form_write(const char *path, const char *text, size_t len, bool jsonl, enum form f)
{
	FILE *o = fopen(path, "wb");
	if (!o)
		return false;
	if (f == FORM_AS_IS || !jsonl) {
		char *s = f == FORM_AS_IS ? NULL : record(text, len, f, false);
		if (s)
			fputs(s, o);
		else
			fwrite(text, 1, len, o);
		free(s);
	}
	for (size_t at = 0; f != FORM_AS_IS && jsonl && at < len;) {
		const char *nl = memchr(text + at, '\n', len - at);
		size_t end = nl ? (size_t)(nl - text) : len, n = end - at;
		/* blank lines, and lines jansson refuses, as they are */
		bool blank = true;
		for (size_t i = at; i < end && blank; i++)
			blank = text[i] == ' ' || text[i] == '\r' || text[i] == '\t';
		char *s = blank ? NULL : record(text + at, n, f, true);
		if (s)
			fputs(s, o);
		else
			fwrite(text + at, 1, n, o);
		free(s);
		if (nl)
			fputc('\n', o);
		at = end + 1;
	}
	return fclose(o) == 0;
}

static void table_out(FILE *m, int rc, struct rxa_table *t)
{
	fprintf(m, "table rc %d\n", rc);
	if (!rc)
		rxa_table_write_md(t, m);
	rxa_table_free(t);
}

static void json_out(FILE *m, json_t *j)
{
	char *s = j ? json_dumps(j, JSON_INDENT(1)) : NULL;
	fprintf(m, "%s\n", s ? s : "(null)");
	free(s);
	json_decref(j);
}

/* What the analysis verbs make of s, as text (malloc'd). */
static char *analyse(const struct rxa_set *s)
{
	char *buf = NULL, label[512], err[RXA_ERR_LEN];
	size_t len = 0, n = s->n, nv = 0, nf = 0;
	FILE *m = open_memstream(&buf, &len);
	struct rxa_ceiling *c = calloc(n ? n : 1, sizeof(*c));
	struct rxa_point_model *pm = calloc(n ? n : 1, sizeof(*pm));
	struct rxa_whatif_point *w = calloc(n ? n : 1, sizeof(*w));
	const struct rxa_point **pts = calloc(n ? n : 1, sizeof(*pts));
	const char **vary = rxa_set_varying(s, &nv);
	if (!m || !c || !pm || !w || !pts || !vary)
		abort();
	fprintf(m, "%zu points, %zu trials, torn line %d\n", n, s->ntrials, s->truncated_line);
	for (size_t i = 0; i < n; i++) {
		const struct rxa_point *p = &s->pts[i];
		rxa_point_label(p, vary, nv, label, sizeof(label));
		fprintf(m, "%s | %s | %s | %s | %d trials, %zu light, %zu above%s | %a %a %a %a\n",
			label, p->key, p->status, p->reason ? p->reason : "-", p->trials, p->nlight,
			p->nabove, p->above_least ? " (least)" : "", p->ndr_mpps, p->pdr_mpps,
			p->ndr_upper_mpps, p->max_offered_mpps);
		rxa_ceiling_compute(p, &c[i]);
		rxa_ceiling_model(&c[i], 0);
		rxa_point_model_compute(p, 0, &pm[i]);
		pts[i] = p;
	}
	struct rxa_table *t = NULL;
	int rc = rxa_ceiling_table(s, c, n, &t);
	table_out(m, rc, t);
	rc = rxa_model_table(s, pm, n, &t);
	table_out(m, rc, t);
	struct rxa_family *f = NULL;
	if (!rxa_families_build(s, c, n, &f, &nf)) {
		rc = rxa_bound_table(f, nf, &t);
		table_out(m, rc, t);
		json_out(m, rxa_ceiling_json(s, c, n, f, nf));
		rxa_families_free(f, nf);
	}
	struct rxa_whatif_change chg;
	if (rxa_whatif_parse("cqe_poll=x0.5", &chg, err, sizeof(err)))
		abort();
	for (size_t i = 0; i < n; i++) {
		err[0] = '\0';
		rc = rxa_whatif_point(&s->pts[i], 0, &chg, 1, &w[i], err, sizeof(err));
		fprintf(m, "whatif %zu: %d %s\n", i, rc, err);
	}
	rc = rxa_whatif_table_model(s, pts, w, n, "cqe_poll=x0.5", &t);
	table_out(m, rc, t);
	for (size_t i = 0; i + 1 < n; i++) {
		const struct rxr_result *a = rxa_point_run(&s->pts[i]), *b = rxa_point_run(&s->pts[i + 1]);
		struct rxa_diff d;
		if (!a || !b)
			continue;
		memset(&d, 0, sizeof(d));
		rc = rxa_diff_compute(a, b, s->pts[i + 1].knobs, "A", "B", &d);
		fprintf(m, "diff %zu rc %d\n", i, rc);
		if (rc)
			continue;
		rc = rxa_diff_table(&d, "A", "B", 0, &t);
		table_out(m, rc, t);
		rc = rxa_whatif_table(&d, &t);
		table_out(m, rc, t);
		json_out(m, rxa_diff_json(&d, "A", "B"));
		rxa_diff_free(&d);
	}
	fclose(m);
	free(c);
	free(pm);
	free(w);
	free(pts);
	free(vary);
	return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	static const char *base = "/dev/shm";
	char path[96], err[RXA_ERR_LEN];
	const bool jsonl = !(data[0] & 1);
	snprintf(path, sizeof(path), "%s/rxray-fuzz-forms-%d.%s", base, (int)getpid(),
		 jsonl ? "jsonl" : "json");
	const char *text = (const char *)data + 1;
	char *seen[FORM_N] = {NULL};
	int rcs[FORM_N];
	for (int f = 0; f < FORM_N; f++) {
		if (!form_write(path, text, size - 1, jsonl, (enum form)f)) {
			if (f == 0 && strcmp(base, "/tmp")) {
				/* no tmpfs at /dev/shm (some containers): slower, but works */
				base = "/tmp";
				return LLVMFuzzerTestOneInput(data, size);
			}
			abort(); /* the harness itself is broken: say so, loudly */
		}
		struct rxa_set *s = NULL;
		rcs[f] = rxa_set_load(path, &s, err, sizeof(err));
		if (!rcs[f]) {
			seen[f] = analyse(s);
			rxa_set_free(s);
		}
		/* taken by one form and not by another, or read otherwise */
		if (f && (rcs[f] != rcs[0] || (seen[0] && strcmp(seen[0], seen[f]))))
			abort();
	}
	for (int f = 0; f < FORM_N; f++)
		free(seen[f]);
	unlink(path);
	return 0;
}
