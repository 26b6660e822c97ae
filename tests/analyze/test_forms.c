/* SPDX-License-Identifier: MIT */
/*
 * One reader, one meaning (issue 43): results read the same however they
 * are written. Every input is read three ways - compact, as rxray writes
 * it; re-indented, with a space after every ':' and ',' as Python's
 * json.dumps writes (one document a line, so JSONL stays JSONL; a lone
 * .json document is indented over many lines, as `jq .` writes it); and
 * with every object's keys in reverse order - and the analysis must be
 * byte-identical: the ceiling table (md and json), the cost model's
 * table, diff, whatif, and the report's markdown and ceiling.json. Each
 * form is written to the same path in turn, so outputs that name the
 * input agree.
 *
 * Inputs: the fixtures of tests/analyze/data (a sweep folder, a partial
 * sweep, a run, a folder of runs); a sweep built here with the trials the
 * loader's two readers once read apart (a passing unpaced trial, lossy
 * trials above the NDR); a fresh tiny sweep on the software NIC.
 *
 * Catches: a reader whose meaning depends on the bytes (the skimmed trial
 * lines were deferred to the cost model's rules while the same lines
 * written with spaces were pooled whole: another light-load fit, no
 * trials above the NDR), knob order taken from a JSON object's member
 * order (labels, the varying columns, diff headings, keys of runs), and
 * a run's env listed in member order (the report). The fuzz target
 * fuzz/fuzz_forms.c checks the same on fuzzed input; its seeds and
 * findings are replayed here through its harness. Also: two summaries of
 * one point are refused, naming both lines.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <sys/stat.h>

#include "rxray/analyze.h"
#include "testutil.h"

enum form { FORM_COMPACT, FORM_SPACED, FORM_REVERSED, FORM_N };
static const char *const form_name[FORM_N] = {"compact", "re-indented", "keys reversed"};

/* j with every object's members in reverse order (a new reference). */
static json_t *reversed(json_t *j)
{
	if (json_is_array(j)) {
		json_t *a = json_array();
		size_t i;
		json_t *v;
		json_array_foreach(j, i, v)
			json_array_append_new(a, reversed(v));
		return a;
	}
	if (!json_is_object(j))
		return json_incref(j);
	size_t n = json_object_size(j), i = 0;
	const char **keys = calloc(n ? n : 1, sizeof(*keys));
	cr_assert(keys);
	const char *k;
	json_t *v;
	json_object_foreach(j, k, v)
		keys[i++] = k;
	json_t *o = json_object();
	while (i-- > 0)
		json_object_set_new(o, keys[i], reversed(json_object_get(j, keys[i])));
	free(keys);
	return o;
}

/* One document in form f, as text (malloc'd). */
static char *form_dump(json_t *doc, enum form f, bool one_line)
{
	if (f == FORM_REVERSED) {
		json_t *r = reversed(doc);
		char *s = json_dumps(r, JSON_COMPACT);
		json_decref(r);
		return s;
	}
	/* no JSON_COMPACT: ", " and ": "; no indent: no newlines */
	return json_dumps(doc, f == FORM_COMPACT ? JSON_COMPACT : one_line ? 0 : JSON_INDENT(2));
}

/*
 * src in form f into dst. Compact: src's bytes as they are (what rxray
 * wrote). A .jsonl file line by line (blank lines kept, so line numbers
 * agree); anything else as one document.
 */
static void form_write(const char *src, const char *dst, enum form f)
{
	char *text = tu_slurp(src);
	cr_assert(text, "%s", src);
	FILE *o = fopen(dst, "w");
	cr_assert(o, "%s", dst);
	size_t len = strlen(text), sl = strlen(src);
	bool jsonl = sl > 6 && !strcmp(src + sl - 6, ".jsonl");
	if (f == FORM_COMPACT) {
		fwrite(text, 1, len, o);
	} else if (!jsonl) {
		json_error_t je;
		json_t *doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
		cr_assert(doc, "%s: %s", src, je.text);
		char *s = form_dump(doc, f, false);
		fprintf(o, "%s\n", s);
		free(s);
		json_decref(doc);
	} else {
		for (char *p = text; *p;) {
			size_t n = strcspn(p, "\n");
			if (n) {
				json_error_t je;
				json_t *doc = json_loadb(p, n, JSON_REJECT_DUPLICATES, &je);
				cr_assert(doc, "%s: %s", src, je.text);
				char *s = form_dump(doc, f, true);
				fputs(s, o);
				free(s);
				json_decref(doc);
			}
			fputc('\n', o);
			p += n + (p[n] == '\n');
		}
	}
	cr_assert_eq(fclose(o), 0);
	free(text);
}

/* The first line where a and b differ, for the failure message. */
static void first_diff(const char *a, const char *b, char *buf, size_t n)
{
	int line = 1;
	const char *la = a, *lb = b;
	for (; *a && *a == *b; a++, b++)
		if (*a == '\n') {
			line++;
			la = a + 1;
			lb = b + 1;
		}
	snprintf(buf, n, "line %d:\n  < %.*s\n  > %.*s", line, (int)strcspn(la, "\n"), la,
		 (int)strcspn(lb, "\n"), lb);
}

#define NCMD 10

/*
 * What the analysis verbs print for the input at `in` (its forms are
 * written there in turn), with `out` a scratch folder: each command's
 * exit status and output, then the report's files. %1$s is the input.
 */
struct reading {
	char *text[NCMD + 2];
	int rc[NCMD];
};

static void read_all(const char *in, const char *out, const char *const *cmds, size_t ncmd,
		     struct reading *r)
{
	char cmd[2048], path[700];
	memset(r, 0, sizeof(*r));
	for (size_t i = 0; i < ncmd; i++) {
		/* the commands are ours: each names the input once */
		snprintf(cmd, sizeof(cmd), "%s ", RXRAY_BIN);
		size_t at = strlen(cmd);
		const char *pct = strstr(cmds[i], "%s");
		cr_assert(pct);
		snprintf(cmd + at, sizeof(cmd) - at, "%.*s'%s'%s", (int)(pct - cmds[i]), cmds[i], in,
			 pct + 2);
		r->rc[i] = tu_run(cmd, &r->text[i]);
		cr_assert(r->text[i], "%s", cmd);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && %s report '%s' -o '%s' >/dev/null 2>&1", out,
		 RXRAY_BIN, in, out);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	snprintf(path, sizeof(path), "%s/report.md", out);
	r->text[NCMD] = tu_slurp(path);
	snprintf(path, sizeof(path), "%s/ceiling.json", out);
	r->text[NCMD + 1] = tu_slurp(path);
	cr_assert(r->text[NCMD] && r->text[NCMD + 1], "%s: no report", in);
}

static void reading_free(struct reading *r)
{
	for (size_t i = 0; i < NCMD + 2; i++)
		free(r->text[i]);
}

/*
 * src (a file, or a folder whose *.json, *.jsonl and spec.yaml are taken)
 * read in every form at dir/<name>: every verb's output equals the
 * compact reading's, exit status and all. The first command must succeed
 * on the compact form: the input is one the verbs analyse.
 */
static void same_in_every_form(const char *src, const char *dir, const char *name,
			       const char *const *cmds, size_t ncmd)
{
	char in[600], out[600], s[700], d[700], cmd[1600];
	snprintf(in, sizeof(in), "%s/%s", dir, name);
	snprintf(out, sizeof(out), "%s/report", dir);
	struct stat st;
	cr_assert_eq(stat(src, &st), 0, "%s", src);
	bool folder = S_ISDIR(st.st_mode);
	struct reading base;
	for (int f = 0; f < FORM_N; f++) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", in);
		cr_assert_eq(system(cmd), 0);
		if (!folder) {
			form_write(src, in, (enum form)f);
		} else {
			cr_assert_eq(mkdir(in, 0755), 0, "%s", in);
			snprintf(cmd, sizeof(cmd), "cd '%s' && ls", src);
			char *names = NULL;
			cr_assert_eq(tu_run(cmd, &names), 0);
			for (char *p = names, *save = NULL, *t; (t = strtok_r(p, "\n", &save)); p = NULL) {
				snprintf(s, sizeof(s), "%s/%s", src, t);
				snprintf(d, sizeof(d), "%s/%s", in, t);
				if (!strcmp(t, "spec.yaml")) {
					snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", s, d);
					cr_assert_eq(system(cmd), 0);
				} else if (strstr(t, ".json")) {
					form_write(s, d, (enum form)f);
				}
			}
			free(names);
		}
		struct reading r;
		read_all(in, out, cmds, ncmd, &r);
		if (f == FORM_COMPACT) {
			base = r;
			cr_assert_eq(base.rc[0], 0, "%s: %s", name, base.text[0]);
			continue;
		}
		for (size_t i = 0; i < NCMD + 2; i++) {
			if (i < NCMD && i >= ncmd)
				continue;
			const char *what = i < ncmd ? cmds[i] : i == NCMD ? "report.md" : "ceiling.json";
			if (i < ncmd)
				cr_expect_eq(r.rc[i], base.rc[i], "%s, %s: `%s` exits %d, compact %d", name,
					     form_name[f], what, r.rc[i], base.rc[i]);
			if (strcmp(r.text[i], base.text[i])) {
				char diff[2048];
				first_diff(base.text[i], r.text[i], diff, sizeof(diff));
				cr_expect_fail("%s, %s: `%s` differs from the compact reading at %s", name,
					       form_name[f], what, diff);
			}
		}
		reading_free(&r);
	}
	reading_free(&base);
}

/* The verbs on a sweep (two modes to diff, a stage every engine laps). */
static const char *const sweep_cmds[] = {
    "ceiling %s",
    "ceiling %s -f json",
    "ceiling %s -f csv --table model",
    "ceiling %s -f csv --table bounds",
    "diff %s mode=single mode=hds -n 0",
    "diff %s mode=single mode=hds -f json",
    "whatif %s cqe_poll=x0.5",
    "whatif %s cqe_poll=+20 -f csv",
};
#define NSWEEP (sizeof(sweep_cmds) / sizeof(sweep_cmds[0]))

/* ---------------------------------------------------- a sweep built here */

#define HZ 3.0e9


/*
 * A run of `mode`: a nic thread and an rx thread (cqe_poll a=300 b=20 in
 * laps of n packets x skew, buf_alloc 50 x load per packet, hand-off in
 * batches of 64).
 */
static struct rxr_result *mk_run(const char *mode, double offered_mpps, double loss, double n,
				 double load, double skew)
{
	struct rxr_result *r = NULL;
	cr_assert_eq(rxr_result_open(&r), 0);
	r->clock.hz = HZ;
	snprintf(r->clock.source, sizeof(r->clock.source), "tsc");
	r->offered_mpps = offered_mpps;
	r->rx_mpps = offered_mpps * (1 - loss);
	r->loss = loss;
	r->seconds = 1;
	r->c.offered = (uint64_t)(offered_mpps * 1e6);
	r->c.received = (uint64_t)(r->rx_mpps * 1e6);
	r->c.out_of_buffer = r->c.offered - r->c.received;
	json_object_set_new(r->config, "engine", json_string("dpdk"));
	json_object_set_new(r->config, "mode", json_string(mode));
	json_object_set_new(r->config, "burst", json_integer(64));
	json_object_set_new(r->config, "batch", json_integer(64));
	json_object_set_new(r->env, "hostname", json_string("fixture"));
	json_object_set_new(r->env, "date", json_string("2026-12-01T10:00:00Z"));
	r->nthreads = 2;
	r->threads = calloc(2, sizeof(*r->threads));
	cr_assert(r->threads);
	struct rxr_thread_result *nic = &r->threads[0], *rx = &r->threads[1];
	snprintf(nic->role, sizeof(nic->role), "nic");
	snprintf(rx->role, sizeof(rx->role), "rx");
	double pk = 64000;
	nic->packets = (uint64_t)pk;
	tu_laps_add(&nic->st[RXP_ST_HDR_WRITE], pk / n, n, 0, 9000);
	nic->stage_mask = 1u << RXP_ST_HDR_WRITE;
	nic->busy_cycles = nic->st[RXP_ST_HDR_WRITE].cycles;
	rx->packets = (uint64_t)pk;
	tu_laps_add(&rx->st[RXP_ST_CQE_POLL], pk / n, n, 300 * skew, 20 * skew);
	tu_laps_add(&rx->st[RXP_ST_BUF_ALLOC], pk / n, n, 0, 50 * load);
	tu_laps_add(&rx->st[RXP_ST_HANDOFF], pk / 64, 64, 0, 100.0 / 64);
	rx->stage_mask = 1u << RXP_ST_CQE_POLL | 1u << RXP_ST_BUF_ALLOC | 1u << RXP_ST_HANDOFF;
	for (int s = 0; s < RXP_ST_COUNT; s++)
		rx->busy_cycles += rx->st[s].cycles;
	return r;
}

/* r as a trial line of point `key` (as the store writes: the trial last). */
static void put_trial(FILE *f, const char *key, struct rxr_result *r, int n, double target,
		      bool calib)
{
	json_t *doc = rxr_result_to_json(r);
	cr_assert(doc);
	json_t *tr = json_pack("{s:s,s:i,s:f,s:f,s:s}", "key", key, "n", n, "target_pps", target,
			       "seconds", 1.0, "status", "ok");
	if (calib)
		json_object_set_new(tr, "purpose", json_string("calibration"));
	json_object_set_new(doc, "trial", tr);
	char *s = json_dumps(doc, JSON_COMPACT);
	fprintf(f, "%s\n", s);
	free(s);
	json_decref(doc);
	rxr_result_free(r);
}

/*
 * Point engine=dpdk,mode=<mode> (NDR 10 Mpps, buf_alloc `load` x dearer
 * at the NDR): an unpaced first trial that passed at 3 Mpps (the
 * generator's pace; 0.3 x NDR, but asked for no rate: not light-load
 * evidence, and its skewed fit would move the prediction), a light trial,
 * two lossy trials above the NDR, a passing one below it, the NDR trial,
 * a calibration trial, then the summary.
 */
static void put_point(FILE *f, const char *mode, double load)
{
	char key[64];
	snprintf(key, sizeof(key), "engine=dpdk,mode=%s", mode);
	put_trial(f, key, mk_run(mode, 3.0, 0, 32, 1, 4), 1, 0, false);
	put_trial(f, key, mk_run(mode, 1.0, 0, 2, 1, 1), 2, 1e6, false);
	put_trial(f, key, mk_run(mode, 15.0, 0.3, 64, 9 * load, 1), 3, 15e6, false);
	put_trial(f, key, mk_run(mode, 12.0, 0.1, 64, 3 * load, 1), 4, 12e6, false);
	put_trial(f, key, mk_run(mode, 9.0, 0, 40, 1, 3), 5, 9e6, false);
	struct rxr_result *nd = mk_run(mode, 10.0, 0, 48, load, 1);
	json_t *ndj = rxr_result_to_json(nd);
	put_trial(f, key, nd, 6, 10e6, false);
	struct rxr_result *cal = mk_run(mode, 2.5, 0, 64, 1, 1);
	json_object_set_new(cal->config, "coalesce", json_integer(64));
	put_trial(f, key, cal, 7, 2.5e6, true);
	json_t *doc = json_pack("{s:s,s:s,s:{s:s,s:s},s:s,s:f,s:f,s:i,s:O,s:o}", "schema",
				RXA_POINT_SCHEMA, "key", key, "knobs", "engine", "dpdk", "mode", mode,
				"status", "ok", "ndr_mpps", 10.0, "pdr_mpps", 10.0, "trials", 6,
				"ndr_run", ndj, "top_run", ndj);
	cr_assert(doc);
	char *s = json_dumps(doc, JSON_COMPACT);
	fprintf(f, "%s\n", s);
	free(s);
	json_decref(doc);
}

Test(forms, fixtures_read_the_same_in_every_form, .timeout = 300)
{
	char dir[64];
	cr_assert(tu_tmpdir(dir, sizeof(dir)));
	same_in_every_form(FIXTURES "/sweep", dir, "sweep", sweep_cmds, NSWEEP);
	static const char *const partial_cmds[] = {"ceiling %s", "ceiling %s -f json",
						   "ceiling %s -f csv --table model",
						   "whatif %s cqe_poll=x0.5"};
	same_in_every_form(FIXTURES "/partial.jsonl", dir, "partial.jsonl", partial_cmds, 4);
	static const char *const run_cmds[] = {"ceiling %s", "ceiling %s -f json",
					       "ceiling %s -f csv --table model",
					       "whatif %s cqe_poll=x0.5"};
	same_in_every_form(FIXTURES "/run_dpdk_hds.json", dir, "run.json", run_cmds, 4);
	/* a folder of runs: two modes to diff */
	char runs[600], cmd[1400];
	snprintf(runs, sizeof(runs), "%s/runs-src", dir);
	snprintf(cmd, sizeof(cmd), "mkdir '%s' && cp %s/run_dpdk_single.json %s/run_dpdk_hds.json '%s'",
		 runs, FIXTURES, FIXTURES, runs);
	cr_assert_eq(system(cmd), 0);
	same_in_every_form(runs, dir, "runs", sweep_cmds, NSWEEP);
	tu_rmrf(dir);
}

/*
 * The trials that the skimming reader (compact lines) and the checked
 * reader (any other bytes) once took apart: a passing unpaced trial
 * pooled into the light-load fit by one only, the lossy trials above the
 * NDR kept by one only.
 */
Test(forms, built_sweep_reads_the_same_in_every_form, .timeout = 300)
{
	char dir[64], src[600];
	cr_assert(tu_tmpdir(dir, sizeof(dir)));
	snprintf(src, sizeof(src), "%s/built-src", dir);
	cr_assert_eq(mkdir(src, 0755), 0);
	char path[700];
	snprintf(path, sizeof(path), "%s/results.jsonl", src);
	FILE *f = fopen(path, "w");
	cr_assert(f);
	put_point(f, "single", 1);
	put_point(f, "hds", 2);
	fclose(f);
	/* the compact reading is the one the cost model's rules give: the
	 * calibration, light and passing trials at or below the NDR, of which
	 * those at or below 0.5 x NDR pool (2), and the two lossy above it */
	struct rxa_set *s = NULL;
	char err[RXA_ERR_LEN] = "";
	cr_assert_eq(rxa_set_load(src, &s, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(s->n, 2);
	cr_expect_eq(s->pts[0].nlight, 4, "light trials: %zu", s->pts[0].nlight);
	cr_expect_eq(s->pts[0].nabove, 2, "trials above the NDR: %zu", s->pts[0].nabove);
	rxa_set_free(s);
	same_in_every_form(src, dir, "built", sweep_cmds, NSWEEP);
	tu_rmrf(dir);
}

/* A fresh sweep on the software NIC, as small as a sweep gets. */
Test(forms, fresh_sweep_reads_the_same_in_every_form, .timeout = 400)
{
#ifndef RXRAY_TEST_HAVE_SWEEP
	cr_skip_test("needs the sweep verb: this build has no libyaml");
#endif
	char dir[64], spec[600], out[600], cmd[2000];
	cr_assert(tu_tmpdir(dir, sizeof(dir)));
	snprintf(spec, sizeof(spec), "%s/tiny.yaml", dir);
	snprintf(out, sizeof(out), "%s/fresh-src", dir);
	FILE *f = fopen(spec, "w");
	cr_assert(f);
	fputs("engines: [verbs]\nmodes: [single, hds]\nframes: [1064]\nsplit: 64\nqueues: 1\n"
	      "rings: 1024\ndevice: sim\nsearch:\n  ndr_loss: 0\n  pdr_loss: 0.005\n"
	      "  precision: 0.2\n  initial_seconds: 0.05\n  trial_seconds: 0.05\n"
	      "  max_trials: 4\n  min_rate: 10k\n  timeout: 20s\n  total_budget: 8s\n",
	      f);
	fclose(f);
	char *log = NULL;
	snprintf(cmd, sizeof(cmd), "%s sweep '%s' -o '%s' -q", RXRAY_BIN, spec, out);
	int rc = tu_run(cmd, &log);
	cr_assert_eq(rc, 0, "%s: %s", cmd, log ? log : "");
	free(log);
	same_in_every_form(out, dir, "fresh", sweep_cmds, NSWEEP);
	tu_rmrf(dir);
}

/*
 * Two summaries of one point: which is the point? Refused by every verb
 * that reads it, exit 2, one line naming the file and both lines.
 */
Test(forms, two_summaries_of_one_point_are_refused)
{
	char dir[64], path[600], cmd[1400];
	cr_assert(tu_tmpdir(dir, sizeof(dir)));
	snprintf(path, sizeof(path), "%s/results.jsonl", dir);
	/* the fixture sweep's first point (trials, summary), its summary again */
	snprintf(cmd, sizeof(cmd),
		 "grep -n '\"schema\":\"rxray.point/1\"' %s/sweep/results.jsonl | head -1 | cut -d: -f1",
		 FIXTURES);
	char *at = NULL;
	cr_assert_eq(tu_run(cmd, &at), 0);
	int first = atoi(at);
	free(at);
	cr_assert(first > 1);
	snprintf(cmd, sizeof(cmd), "head -n %d %s/sweep/results.jsonl > '%s' && sed -n '%dp' %s/sweep/results.jsonl >> '%s'",
		 first, FIXTURES, path, first, FIXTURES, path);
	cr_assert_eq(system(cmd), 0);
	struct rxa_set *s = NULL;
	char err[RXA_ERR_LEN] = "", want[700];
	cr_expect_eq(rxa_set_load(dir, &s, err, sizeof(err)), -EINVAL);
	cr_expect_null(s);
	rxa_set_free(s);
	s = NULL;
	snprintf(want, sizeof(want), "%s:%d: key: a second summary of point", path, first + 1);
	cr_expect(strstr(err, want), "err: %s (want '%s')", err, want);
	snprintf(want, sizeof(want), "(the first at line %d)", first);
	cr_expect(strstr(err, want), "err: %s (want '%s')", err, want);
	static const char *const verbs[] = {"ceiling %s", "diff %s mode=single mode=hds",
					    "whatif %s cqe_poll=x0.5", "report %s -o %s/rep"};
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++) {
		char args[1200], *out = NULL;
		snprintf(args, sizeof(args), verbs[i], dir, dir);
		snprintf(cmd, sizeof(cmd), "%s %s", RXRAY_BIN, args);
		cr_expect_eq(tu_run(cmd, &out), 2, "%s: %s", cmd, out);
		cr_expect(out && strstr(out, want) && strcspn(out, "\n") + 1 >= strlen(out),
			  "%s: not one line naming both lines: %s", cmd, out);
		free(out);
	}
	/* the same point summarised in two files of a folder: each named */
	snprintf(cmd, sizeof(cmd),
		 "rm '%s' && head -n %d %s/sweep/results.jsonl > '%s/a.jsonl' && "
		 "sed -n '%dp' %s/sweep/results.jsonl > '%s/b.jsonl'",
		 path, first, FIXTURES, dir, first, FIXTURES, dir);
	cr_assert_eq(system(cmd), 0);
	cr_expect_eq(rxa_set_load(dir, &s, err, sizeof(err)), -EINVAL);
	rxa_set_free(s);
	snprintf(want, sizeof(want), "b.jsonl:1: key: a second summary of point");
	cr_expect(strstr(err, want), "err: %s (want '%s')", err, want);
	snprintf(want, sizeof(want), "(the first at %s/a.jsonl:%d)", dir, first);
	cr_expect(strstr(err, want), "err: %s (want '%s')", err, want);
	tu_rmrf(dir);
}

/* fuzz/fuzz_forms.c, its entry point renamed (CMakeLists.txt) */
int fuzz_one_forms(const uint8_t *data, size_t size);

/*
 * The fuzz target's seeds and findings (fuzz/seeds/forms,
 * fuzz/regress/forms) through its harness in this build: it aborts where
 * the three forms of an input read apart.
 */
Test(forms, fuzz_inputs_read_the_same_in_every_form, .timeout = 300)
{
	static const char *const dirs[] = {FORMS_FUZZ_DIR "/seeds/forms",
					   FORMS_FUZZ_DIR "/regress/forms"};
	size_t n = 0;
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		DIR *d = opendir(dirs[i]);
		struct dirent *de;
		while (d && (de = readdir(d))) {
			char path[900];
			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", dirs[i], de->d_name);
			char *text = NULL;
			size_t len = 0;
			FILE *f = fopen(path, "rb"), *m = open_memstream(&text, &len);
			cr_assert(f && m, "%s", path);
			char b[65536];
			size_t k;
			while ((k = fread(b, 1, sizeof(b), f)) > 0)
				fwrite(b, 1, k, m);
			fclose(f);
			fclose(m);
			cr_log_info("%s: %zu bytes", path, len);
			fuzz_one_forms((const uint8_t *)text, len);
			free(text);
			n++;
		}
		if (d)
			closedir(d);
	}
	cr_expect(n >= 5, "%zu inputs replayed (the seeds are gone?)", n);
}

/*
 * fuzz/regress/forms/trial_object_nested_in_another_member: a run line
 * in the store's compact shape whose last member holds a "trial" object
 * one level down. The skimming reader took it for the line's own trial
 * (a trial of point "k"); read in full it is a standalone run, which it
 * is, however it is written.
 */
Test(forms, a_nested_trial_object_is_not_the_lines_trial)
{
	char dir[64], path[600];
	cr_assert(tu_tmpdir(dir, sizeof(dir)));
	char *text = tu_slurp(FORMS_FUZZ_DIR "/regress/forms/trial_object_nested_in_another_member");
	cr_assert(text && text[0] == '\0');
	snprintf(path, sizeof(path), "%s/nested.jsonl", dir);
	FILE *f = fopen(path, "w");
	cr_assert(f);
	fputs(text + 1, f);
	fclose(f);
	free(text);
	struct rxa_set *s = NULL;
	char err[RXA_ERR_LEN] = "";
	cr_assert_eq(rxa_set_load(path, &s, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(s->n, 1);
	cr_expect_str_eq(s->pts[0].status, "run");
	cr_expect_eq(s->ntrials, 0, "read as a trial line");
	rxa_set_free(s);
	tu_rmrf(dir);
}
