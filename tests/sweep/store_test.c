/* SPDX-License-Identifier: MIT */
/*
 * The store, the trial child process and resume, driven through a fake
 * `rxray run` (fake_run.c) whose ceiling is known: C = 20 Mpps x 1064 /
 * frame (a quarter in hds), generator 30 Mpps.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rxray/result.h"
#include "rxray/sweep.h"
#include "rxray/util.h"
#include "sweep_test_util.h"

Test(sweep_trial, traffic_command_template)
{
	char out[128];
	cr_expect_eq(sweep_template_expand("gen --pps {rate_pps} --len {frame} -t {seconds}", 1.5e6,
					   1064, 0.25, out, sizeof(out)),
		     0);
	cr_expect_str_eq(out, "gen --pps 1500000 --len 1064 -t 0.25");
	cr_expect_eq(sweep_template_expand("{rate_pps}{rate_pps}", 12345678.4, 64, 1, out,
					   sizeof(out)),
		     0);
	cr_expect_str_eq(out, "1234567812345678");
	cr_expect_eq(sweep_template_expand("x {pps} y", 1, 64, 1, out, sizeof(out)), -EINVAL);
	cr_expect_str_eq(out, "pps");
	cr_expect_eq(sweep_template_expand("x {rate_pps", 1, 64, 1, out, sizeof(out)), -EINVAL);
	cr_expect_eq(sweep_template_expand("{frame}", 1, 1064, 1, out, 4), -ENOSPC);
}

static json_t *doc_point(const char *key)
{
	return json_pack("{s:s, s:s, s:s}", "schema", SWEEP_POINT_SCHEMA, "key", key, "status",
			 "ok");
}

static json_t *doc_trial(const char *key, int n)
{
	return json_pack("{s:s, s:{s:s, s:i, s:f, s:s}}", "schema", "rxray.run/1", "trial", "key",
			 key, "n", n, "target_pps", 0.0, "status", "ok");
}

Test(sweep_store, append_resume_and_a_truncated_last_line)
{
	char *dir = sw_tmpdir(), err[SWEEP_ERR_LEN], note[SWEEP_ERR_LEN], path[600];
	struct sweep_store st;
	cr_assert_eq(sweep_store_open(&st, dir, false, note, sizeof(note), err, sizeof(err)), 0,
		     "%s", err);
	json_t *d1 = doc_trial("a", 1), *d2 = doc_point("a"), *d3 = doc_trial("b", 1);
	cr_expect_eq(sweep_store_append(&st, d1), 0);
	cr_expect_eq(sweep_store_append(&st, d2), 0);
	cr_expect_eq(sweep_store_append(&st, d3), 0);
	sweep_store_close(&st);
	snprintf(path, sizeof(path), "%s/results.jsonl", dir);
	cr_expect_eq(sw_count_lines(path, NULL), 3);

	/* a second sweep into the same folder must say --resume */
	cr_expect_eq(sweep_store_open(&st, dir, false, note, sizeof(note), err, sizeof(err)),
		     -EEXIST);
	cr_expect(strstr(err, "pass --resume"), "%s", err);

	/* what a SIGKILL in the middle of a write leaves */
	int fd = open(path, O_WRONLY | O_APPEND);
	cr_assert(write(fd, "{\"schema\": \"rxray.run/1\", \"trial\": {\"ke", 38) == 38);
	close(fd);
	cr_assert_eq(sweep_store_open(&st, dir, true, note, sizeof(note), err, sizeof(err)), 0,
		     "%s", err);
	char want[700];
	snprintf(want, sizeof(want),
		 "%s:4: dropped a truncated last line (38 bytes): the trial in flight when the "
		 "sweep stopped",
		 path);
	cr_expect_str_eq(note, want);
	cr_expect_eq(st.lines, 3);
	cr_expect_not_null(json_object_get(st.done, "a"));
	cr_expect_null(json_object_get(st.partial, "a"), "a finished: no partial trials");
	cr_expect_eq(json_array_size(json_object_get(st.partial, "b")), 1);
	cr_expect_eq(sweep_store_append(&st, d2), 0);
	sweep_store_close(&st);
	cr_expect_eq(sw_count_lines(path, NULL), 4, "the cut line is gone, the new one whole");

	/* a broken line in the middle is an error, not silently skipped */
	fd = open(path, O_WRONLY | O_TRUNC);
	cr_assert(write(fd, "{}\nnot json\n{}\n", 15) == 15);
	close(fd);
	cr_expect_eq(sweep_store_open(&st, dir, true, note, sizeof(note), err, sizeof(err)),
		     -EINVAL);
	json_decref(d1);
	json_decref(d2);
	json_decref(d3);
	sw_rmtree(dir);
}

/* Bytes of a file, or -1 when absent. */
static long file_size(const char *path)
{
	struct stat sb;
	return stat(path, &sb) ? -1 : (long)sb.st_size;
}

Test(sweep_store, resume_never_cuts_a_complete_line)
{
	char *dir = sw_tmpdir(), err[SWEEP_ERR_LEN], note[SWEEP_ERR_LEN], path[600], want[700];
	struct sweep_store st;
	snprintf(path, sizeof(path), "%s/results.jsonl", dir);
	json_t *d1 = doc_trial("a", 1);
	char *l1 = json_dumps(d1, JSON_COMPACT);
	cr_assert(l1);

	/* a complete last line that does not parse: somebody's data, stop */
	char *text = NULL;
	cr_assert(asprintf(&text, "%s\n{\"schema\": \"rxray.run/1\", oops\n", l1) > 0);
	free(sw_write(dir, "results.jsonl", text));
	long before = file_size(path);
	cr_expect_eq(sweep_store_open(&st, dir, true, note, sizeof(note), err, sizeof(err)),
		     -EINVAL, "a complete bad last line was accepted");
	snprintf(want, sizeof(want), "%s:2: a complete line that is not a JSON document", path);
	cr_expect(!strncmp(err, want, strlen(want)), "names file and line: %s", err);
	cr_expect_eq(file_size(path), before, "the file was changed");
	char *now = sw_read(path);
	cr_expect_str_eq(now, text, "the complete line was cut");
	free(now);
	free(text);

	/* a lone complete bad line (also the last one) */
	free(sw_write(dir, "results.jsonl", "not json\n"));
	cr_expect_eq(sweep_store_open(&st, dir, true, note, sizeof(note), err, sizeof(err)),
		     -EINVAL);
	cr_expect_eq(file_size(path), 9, "the only line was cut");

	/* a torn last line that still parses: its newline is restored, said */
	cr_assert(asprintf(&text, "%s\n%s", l1, l1) > 0);
	free(sw_write(dir, "results.jsonl", text));
	cr_assert_eq(sweep_store_open(&st, dir, true, note, sizeof(note), err, sizeof(err)), 0,
		     "%s", err);
	snprintf(want, sizeof(want), "%s:2: the last line had lost its newline; restored it",
		 path);
	cr_expect_str_eq(note, want);
	cr_expect_eq(json_array_size(json_object_get(st.partial, "a")), 2);
	sweep_store_close(&st);
	cr_expect_eq(file_size(path), (long)strlen(text) + 1);
	free(text);

	/* and through the CLI: exit 2, one line naming file and line */
	char *spec = sw_write(dir, "spec.yaml", "frames: 1064\n");
	static const char bad[] = "{\"schema\":\"rxray.point/1\"\n";
	free(sw_write(dir, "results.jsonl", bad));
	char *argv[] = {RXRAY_BIN, "sweep", spec, "-o", dir, "--runner", FAKE_RUN, "--resume",
			NULL};
	char *cerr = NULL;
	cr_expect_eq(sw_run(argv, NULL, &cerr), 2, "%s", cerr);
	snprintf(want, sizeof(want), "%s:1: a complete line", path);
	cr_expect(cerr && strstr(cerr, want), "%s", cerr);
	cr_expect_eq(file_size(path), (long)strlen(bad), "the CLI cut the line");
	free(cerr);
	free(spec);
	free(l1);
	json_decref(d1);
	sw_rmtree(dir);
}

/*
 * --resume reads every line with keys checked: a line with a key given
 * twice (never what the store writes) stops it with one line naming file,
 * line and the key's path, and the file is left as it is - also when it
 * is the last line and has no newline (not a torn write to drop).
 */
Test(sweep_store, resume_refuses_a_key_given_twice)
{
	char *dir = sw_tmpdir(), err[SWEEP_ERR_LEN], note[SWEEP_ERR_LEN], path[600], want[1000];
	struct sweep_store st;
	snprintf(path, sizeof(path), "%s/results.jsonl", dir);
	json_t *d1 = doc_trial("a", 1);
	char *l1 = json_dumps(d1, JSON_COMPACT);
	cr_assert(l1);
	static const struct {
		const char *line, *field;
	} bad[] = {
		{"{\"schema\":\"rxray.run/1\",\"trial\":{\"key\":\"a\",\"n\":2,\"n\":3}}",
		 "trial.n"},
		{"{\"schema\":\"rxray.run/1\",\"env\":{\"a\":1,\"a\":1},\"trial\":{\"key\":\"a\"}}",
		 "env.a"},
		{"{\"schema\":\"rxray.point/1\",\"key\":\"a\",\"status\":\"ok\",\"key\":\"b\"}", "key"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		for (int nl = 1; nl >= 0; nl--) {
			char *text = NULL;
			cr_assert(asprintf(&text, "%s\n%s%s", l1, bad[i].line, nl ? "\n" : "") > 0);
			free(sw_write(dir, "results.jsonl", text));
			cr_expect_eq(sweep_store_open(&st, dir, true, note, sizeof(note), err,
						      sizeof(err)),
				     -EINVAL, "case %zu%s: taken", i, nl ? "" : " (no newline)");
			snprintf(want, sizeof(want),
				 "%s:2: %s: key given twice; the file is left as it is: fix or remove "
				 "that line, then resume",
				 path, bad[i].field);
			cr_expect_str_eq(err, want, "case %zu%s", i, nl ? "" : " (no newline)");
			char *now = sw_read(path);
			cr_expect_str_eq(now, text, "case %zu: the file was changed", i);
			free(now);
			free(text);
		}

	/* through the CLI: exit 2, that one line */
	char *spec = sw_write(dir, "spec.yaml", "frames: 1064\n");
	char *text = NULL;
	cr_assert(asprintf(&text, "%s\n%s\n", l1, bad[1].line) > 0);
	free(sw_write(dir, "results.jsonl", text));
	char *argv[] = {RXRAY_BIN, "sweep", spec, "-o", dir, "--runner", FAKE_RUN, "--resume",
			NULL};
	char *cerr = NULL;
	cr_expect_eq(sw_run(argv, NULL, &cerr), 2, "%s", cerr);
	snprintf(want, sizeof(want),
		 "rxray sweep: %s:2: env.a: key given twice; the file is left as it is: fix or "
		 "remove that line, then resume\n",
		 path);
	cr_expect_str_eq(cerr, want);
	char *now = sw_read(path);
	cr_expect_str_eq(now, text, "the CLI changed the file");
	free(now);
	free(cerr);
	free(text);
	free(spec);
	free(l1);
	json_decref(d1);
	sw_rmtree(dir);
}

struct trial_fixture {
	char *dir;
	struct sweep_spec *sp;
	struct sweep_point *pts;
	size_t n;
	struct sweep_place pl;
	struct sweep_exec x;
};

static void trial_setup(struct trial_fixture *f, const char *yaml)
{
	char err[SWEEP_ERR_LEN] = "";
	f->dir = sw_tmpdir();
	cr_assert_eq(sweep_spec_parse(yaml, strlen(yaml), "t.yaml", &f->sp, err, sizeof(err)), 0,
		     "%s", err);
	cr_assert_eq(sweep_matrix_expand(f->sp, &f->pts, &f->n, err, sizeof(err)), 0, "%s", err);
	const int cores[] = {0, 1};
	sweep_place_point(&f->pts[0], cores, 2, false, &f->pl);
	f->x = (struct sweep_exec){.runner = FAKE_RUN, .tmpdir = f->dir, .spec = f->sp,
				   .point = &f->pts[0], .place = &f->pl};
}

static void trial_teardown(struct trial_fixture *f)
{
	free(f->pts);
	sweep_spec_free(f->sp);
	sw_rmtree(f->dir);
}

static struct sweep_trial trial_at(struct trial_fixture *f, double target)
{
	struct sweep_trial t = {.n = 1, .target_pps = target, .seconds = 0.05};
	cr_assert_eq(sweep_trial_exec(&f->x, &t), 0);
	return t;
}

Test(sweep_trial, ok_trial_reads_the_run_result)
{
	struct trial_fixture f;
	trial_setup(&f, "frames: 2128\nmodes: single\n");
	struct sweep_trial t = trial_at(&f, 0);
	cr_expect_eq(t.status, SWEEP_TRIAL_OK, "%s", t.reason);
	cr_expect_float_eq(t.offered_pps, 30e6, 30e6 * 1e-6);
	cr_expect_float_eq(t.rx_pps, 10e6, 10e6 * 1e-6);
	cr_expect_float_eq(t.loss, 2.0 / 3, 1e-6);
	json_t *tr = json_object_get(t.doc, "trial");
	cr_expect_str_eq(json_string_value(json_object_get(tr, "key")), f.pts[0].key);
	cr_expect_str_eq(json_string_value(json_object_get(tr, "status")), "ok");
	cr_expect_eq(json_integer_value(json_object_get(tr, "n")), 1);
	char err[256];
	struct rxr_result *r = NULL;
	rxr_result_from_json(t.doc, "t", &r, err, sizeof(err));
	cr_expect_not_null(r, "%s", err);
	rxr_result_free(r);
	json_decref(t.doc);
	t = trial_at(&f, 4e6);
	cr_expect_float_eq(t.offered_pps, 4e6, 4);
	cr_expect_eq(t.loss, 0);
	json_decref(t.doc);
	trial_teardown(&f);
}

Test(sweep_trial, crash_timeout_reject_and_failure_are_recorded)
{
	static const struct {
		const char *yaml;
		enum sweep_trial_status st;
		const char *reason;
	} cases[] = {
		{"frames: 666\n", SWEEP_TRIAL_CRASHED, "killed by signal 11 (Segmentation fault)"},
		{"frames: 777\nsearch: {timeout: 0.5}\n", SWEEP_TRIAL_TIMEOUT,
		 "no result after 0 s, killed"},
		{"frames: 888\n", SWEEP_TRIAL_REJECTED,
		 "rxray run: --frame: 888 is refused by the fake engine"},
		{"frames: 999\n", SWEEP_TRIAL_FAILED, "exit 1: rxray run: the fake engine failed"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct trial_fixture f;
		trial_setup(&f, cases[i].yaml);
		double t0 = (double)time(NULL);
		struct sweep_trial t = trial_at(&f, 1e6);
		cr_expect_eq(t.status, cases[i].st, "case %zu: status %d (%s)", i, t.status,
			     t.reason);
		if (getenv("RXRAY_EMULATOR") && cases[i].st == SWEEP_TRIAL_CRASHED)
			/* qemu-user writes its own "uncaught target signal" line to the
			 * child's stderr, which the reason then quotes */
			cr_expect(!strncmp(t.reason, cases[i].reason, strlen(cases[i].reason)),
				  "case %zu: %s", i, t.reason);
		else
			cr_expect_str_eq(t.reason, cases[i].reason, "case %zu", i);
		/* killed at the spec's own 0.5 s, not at the default timeout (20 s
		 * or more): a bound far from both, as a loaded host stretches */
		if (cases[i].st == SWEEP_TRIAL_TIMEOUT)
			cr_expect_lt((double)time(NULL) - t0, 7.5,
				     "case %zu: killed after the default timeout, not the spec's", i);
		json_t *tr = json_object_get(t.doc, "trial");
		cr_expect_str_eq(json_string_value(json_object_get(t.doc, "schema")),
				 SWEEP_TRIAL_SCHEMA);
		cr_expect_str_eq(json_string_value(json_object_get(tr, "reason")), t.reason);
		json_decref(t.doc);
		trial_teardown(&f);
	}
}

/*
 * A runner that cannot write its result because the sweep's folder is
 * full (here: the file size limit, EFBIG) fails the sweep, not the point:
 * recorded as "failed", the point would be skipped by --resume for good.
 */
Test(sweep_trial, a_result_the_disk_cannot_take_stops_the_sweep)
{
	struct trial_fixture f;
	trial_setup(&f, "frames: 1064\n");
	/* the result (~1 KB) is over the limit, the runner's error line is not */
	signal(SIGXFSZ, SIG_IGN);
	struct rlimit fl = {300, RLIM_INFINITY}, was;
	cr_assert_eq(getrlimit(RLIMIT_FSIZE, &was), 0);
	cr_assert_eq(setrlimit(RLIMIT_FSIZE, &fl), 0);
	struct sweep_trial t = {.n = 1, .target_pps = 1e6, .seconds = 0.05};
	int rc = sweep_trial_exec(&f.x, &t);
	cr_assert_eq(setrlimit(RLIMIT_FSIZE, &was), 0);
	cr_expect_eq(rc, -EFBIG, "rc %d, status %d (%s)", rc, t.status, t.reason);
	cr_expect_null(t.doc, "a doc to record for a trial the disk stopped");
	json_decref(t.doc);
	trial_teardown(&f);
}

static const char fake_spec[] = "modes: [single, hds]\n"
				"frames: [1064, 2128, 4256]\n"
				"cores: [0, 1]\n"
				"search:\n"
				"  initial_seconds: 0.05\n"
				"  trial_seconds: 0.06\n"
				"  precision: 0.01\n"
				"  max_trials: 12\n";

static json_t *load_lines(const char *path, size_t *ntrial, size_t *npoint)
{
	json_t *pts = json_object();
	FILE *f = fopen(path, "r");
	cr_assert(f, "%s", path);
	char *line = NULL;
	size_t cap = 0;
	*ntrial = *npoint = 0;
	while (getline(&line, &cap, f) > 0) {
		json_error_t je;
		json_t *d = json_loads(line, 0, &je);
		cr_assert(d, "%s: not JSON: %s", path, je.text);
		const char *schema = json_string_value(json_object_get(d, "schema"));
		if (!strcmp(schema, SWEEP_POINT_SCHEMA)) {
			const char *key = json_string_value(json_object_get(d, "key"));
			cr_expect_null(json_object_get(pts, key), "point %s twice", key);
			json_object_set(pts, key, d);
			(*npoint)++;
		} else {
			char err[256];
			struct rxr_result *r = NULL;
			rxr_result_from_json(d, path, &r, err, sizeof(err));
			cr_expect_not_null(r, "trial line not a run result: %s", err);
			rxr_result_free(r);
			(*ntrial)++;
		}
		json_decref(d);
	}
	free(line);
	fclose(f);
	return pts;
}

static void check_fake_points(json_t *pts)
{
	const char *key;
	json_t *p;
	json_object_foreach(pts, key, p) {
		json_t *k = json_object_get(p, "knobs");
		double frame = (double)json_integer_value(json_object_get(k, "frame"));
		bool hds = !strcmp(json_string_value(json_object_get(k, "mode")), "hds");
		double C = 20.0 * 1064 / frame * (hds ? 0.25 : 1);
		double ndr = json_real_value(json_object_get(p, "ndr_mpps"));
		cr_expect_str_eq(json_string_value(json_object_get(p, "status")), "ok", "%s", key);
		cr_expect(ndr <= C * (1 + 1e-6) && ndr >= C * (1 - 0.01), "%s: ndr %g, C %g", key,
			  ndr, C);
		cr_expect_float_eq(json_real_value(json_object_get(p, "nic_max_mpps")), 30, 1e-3);
		cr_expect_leq(json_integer_value(json_object_get(p, "trials")), 12);
		cr_expect(json_is_object(json_object_get(p, "ndr_run")), "%s: ndr_run", key);
		cr_expect(json_is_object(json_object_get(p, "top_run")), "%s: top_run", key);
		cr_expect(json_is_false(json_object_get(p, "generator_limited")));
	}
}

Test(sweep_run, fake_sweep_end_to_end)
{
	char *dir = sw_tmpdir(), *out = NULL, *err = NULL, res[700], copy[700];
	char *spec = sw_write(dir, "spec.yaml", fake_spec);
	char outdir[600];
	snprintf(outdir, sizeof(outdir), "%s/out", dir);
	char *argv[] = {RXRAY_BIN, "sweep", spec, "-o", outdir, "--runner", FAKE_RUN, NULL};
	cr_assert_eq(sw_run(argv, &out, &err), 0, "%s", err);
	snprintf(res, sizeof(res), "%s/results.jsonl", outdir);
	size_t nt, np;
	json_t *pts = load_lines(res, &nt, &np);
	cr_expect_eq(np, 6);
	check_fake_points(pts);
	json_decref(pts);
	snprintf(copy, sizeof(copy), "%s/spec.yaml", outdir);
	char *c = sw_read(copy);
	cr_expect_str_eq(c, fake_spec);
	free(c);
	/* the table: varying knobs as columns, one row per point */
	cr_expect(strstr(out, "all points: engine=verbs, queues=1, ring=8192, device=sim\n"), "%s",
		  out);
	cr_expect(strstr(out, "| mode | frame | NDR Mpps | PDR Mpps | NIC flat-out Mpps | trials |"),
		  "%s", out);
	cr_expect(strstr(out, "| single | 1064 | 20.000 |") || strstr(out, "| single | 1064 | 19.9"),
		  "%s", out);
	cr_expect(strstr(err, "rxray sweep: [6/6] "), "plain progress lines: %s", err);
	free(out);
	free(err);
	/* --table prints the same table again */
	char *argv2[] = {RXRAY_BIN, "sweep", "--table", outdir, NULL};
	cr_expect_eq(sw_run(argv2, &out, NULL), 0);
	cr_expect(strstr(out, "| hds | 4256 |"), "%s", out);
	free(out);
	/* a second run into the same folder needs --resume */
	cr_expect_eq(sw_run(argv, NULL, &err), 2);
	cr_expect(strstr(err, "pass --resume"), "%s", err);
	free(err);
	free(spec);
	sw_rmtree(dir);
}

/* A point where no load passes has no NDR: its progress line says so and
 * names the lowest load that failed, never "NDR 0.000 Mpps" (read as a
 * rate), and the table shows "-". */
Test(sweep_run, a_point_without_an_ndr_says_none_found)
{
	char *dir = sw_tmpdir(), *out = NULL, *err = NULL, outdir[600];
	char *spec = sw_write(dir, "spec.yaml",
			      "frames: 555\nsearch:\n  initial_seconds: 0.05\n"
			      "  trial_seconds: 0.06\n  max_trials: 4\n");
	snprintf(outdir, sizeof(outdir), "%s/out", dir);
	char *argv[] = {RXRAY_BIN, "sweep", spec, "-o", outdir, "--runner", FAKE_RUN, NULL};
	cr_assert_eq(sw_run(argv, &out, &err), 0, "%s", err);
	cr_expect(strstr(err, "NDR none found (< "), "%s", err);
	cr_expect(!strstr(err, "NDR 0.000"), "%s", err);
	cr_expect(strstr(err, "PDR "), "%s", err);
	/* the one point's row: no NDR, no PDR, and both intervals open below */
	cr_expect(strstr(out, "\n| - | - | 30.000 | 4 | < "), "%s", out);
	free(out);
	free(err);
	free(spec);
	sw_rmtree(dir);
}

/* search.total_budget: each point's budget is at most the time left over
 * the points left, less two calibration trials (2 x (0.05 + 0.7) s here).
 * Without it the fake spec's auto budget is 12 x (0.06 + 0.7) = 9.1 s. */
Test(sweep_run, a_total_budget_caps_each_point_by_its_share)
{
	char *dir = sw_tmpdir(), *err = NULL, res[700], outdir[600];
	size_t n = strlen(fake_spec);
	char *text = malloc(n + 64);
	cr_assert(text);
	snprintf(text, n + 64, "%s  total_budget: 12s\n", fake_spec);
	char *spec = sw_write(dir, "spec.yaml", text);
	free(text);
	snprintf(outdir, sizeof(outdir), "%s/out", dir);
	char *argv[] = {RXRAY_BIN, "sweep", spec, "-o", outdir, "--runner", FAKE_RUN, NULL};
	cr_assert_eq(sw_run(argv, NULL, &err), 0, "%s", err);
	free(err);
	snprintf(res, sizeof(res), "%s/results.jsonl", outdir);
	FILE *f = fopen(res, "r");
	cr_assert(f, "%s", res);
	char *line = NULL;
	size_t cap = 0;
	int k = 0;
	while (getline(&line, &cap, f) > 0) {
		json_t *d = json_loads(line, 0, NULL);
		cr_assert(d);
		if (!strcmp(json_string_value(json_object_get(d, "schema")), SWEEP_POINT_SCHEMA)) {
			double b = json_number_value(json_object_get(d, "budget_seconds"));
			double bound = 12.0 / (6 - k) - 2 * (0.05 + 0.7);
			cr_expect(b > 0 && b <= bound + 1e-9, "point %d: budget %.3f s, share at most %.3f",
				  k + 1, b, bound);
			k++;
		}
		json_decref(d);
	}
	free(line);
	fclose(f);
	cr_expect_eq(k, 6);
	free(spec);
	sw_rmtree(dir);
}

Test(sweep_run, resume_after_sigkill_loses_at_most_the_trial_in_flight)
{
	char *dir = sw_tmpdir(), *err = NULL, outdir[600], res[700];
	char *spec = sw_write(dir, "spec.yaml", fake_spec);
	snprintf(outdir, sizeof(outdir), "%s/out", dir);
	snprintf(res, sizeof(res), "%s/results.jsonl", outdir);
	char *argv[] = {RXRAY_BIN, "sweep", spec, "-o", outdir, "--runner", FAKE_RUN, "--quiet",
			NULL};
	pid_t pid = sw_spawn(argv);
	/* kill it once a point is done and the next one has trials (polled
	 * every 5 ms, for at most 60 s) */
	for (double end = rxu_mono_seconds() + 60; rxu_mono_seconds() < end;) {
		size_t pts = sw_count_lines(res, SWEEP_POINT_SCHEMA);
		size_t all = sw_count_lines(res, NULL);
		if (pts >= 2 && all > pts + 9 + 2)
			break;
		struct timespec ts = {0, 5000000};
		nanosleep(&ts, NULL); /* the poll interval */
	}
	kill(pid, SIGKILL);
	int st;
	waitpid(pid, &st, 0);
	cr_assert(WIFSIGNALED(st), "the sweep finished before it was killed");
	/* the kill may itself have cut a line: cut it back to whole lines, so
	 * that the torn tail below is the one the resume must name */
	FILE *rf = fopen(res, "r");
	cr_assert_not_null(rf);
	long whole = 0, at = 0;
	for (int ch; (ch = fgetc(rf)) != EOF;)
		if (at++, ch == '\n')
			whole = at;
	fclose(rf);
	cr_assert_eq(truncate(res, whole), 0);
	size_t before_pts = sw_count_lines(res, SWEEP_POINT_SCHEMA);
	size_t before_all = sw_count_lines(res, NULL);
	cr_assert_lt(before_pts, 6);
	/* and the half-written line a kill mid-write would leave */
	int fd = open(res, O_WRONLY | O_APPEND);
	cr_assert(write(fd, "{\"schema\":\"rxray.run/1\",\"con", 28) == 28);
	close(fd);

	char *argv2[] = {RXRAY_BIN, "sweep", spec, "-o", outdir, "--runner", FAKE_RUN, "--resume",
			 NULL};
	cr_assert_eq(sw_run(argv2, NULL, &err), 0, "%s", err);
	cr_expect(strstr(err, "dropped a truncated last line (28 bytes)"), "%s", err);
	char skipped[64];
	snprintf(skipped, sizeof(skipped), "(%zu from an earlier run)", before_pts);
	cr_expect(strstr(err, skipped), "%s", err);
	size_t nt, np;
	json_t *pts = load_lines(res, &nt, &np);
	cr_expect_eq(np, 6, "every point once");
	check_fake_points(pts);
	/* the trials of the interrupted point were reused, not run again:
	 * every point's trial lines number 1..trials exactly once */
	size_t sum = 0;
	const char *key;
	json_t *p;
	json_object_foreach(pts, key, p) sum += (size_t)json_integer_value(json_object_get(p, "trials"));
	cr_expect_eq(nt, sum, "%zu trial lines for %zu trials (lines before the kill: %zu)", nt,
		     sum, before_all);
	json_decref(pts);
	free(err);
	free(spec);
	sw_rmtree(dir);
}

/*
 * A sweep whose result file cannot grow (a full disk, the file size
 * limit) stops with exit 1 and one line that says which; the file holds
 * only whole lines (the line being appended is cut again, no torn tail);
 * and --resume, once there is room, finishes it from where it stopped,
 * every trial already recorded reused.
 */
static const char small_spec[] = "frames: [1064, 2128]\n"
				 "cores: [0, 1]\n"
				 "search:\n"
				 "  initial_seconds: 0.05\n"
				 "  trial_seconds: 0.06\n"
				 "  precision: 0.05\n"
				 "  max_trials: 6\n";

/* After the failed run: exit 1, its one line saying why, whole lines only. */
static void check_stopped(int rc, const char *err, const char *why, const char *res)
{
	cr_expect_eq(rc, 1, "exit %d: %s", rc, err);
	cr_expect(err && strstr(err, why) && strstr(err, "rxray sweep --resume"), "%s", err);
	cr_expect(err && strchr(err, '\n') && !strchr(err, '\n')[1], "not one line: %s", err);
	char *text = sw_read(res);
	cr_assert(text, "%s: gone", res);
	size_t n = strlen(text);
	cr_expect(n == 0 || text[n - 1] == '\n', "a torn line left: ...%s", n > 80 ? text + n - 80 : text);
	free(text);
	size_t nt, np;
	json_decref(load_lines(res, &nt, &np)); /* every line a document */
	cr_expect_lt(np, 2, "the sweep finished: nothing was stopped");
}

/* Then --resume with room: every point once, the recorded trials reused. */
static void check_resumed(char **argv, const char *res)
{
	char *err = NULL;
	cr_assert_eq(sw_run(argv, NULL, &err), 0, "%s", err);
	cr_expect(err && !strstr(err, "dropped"), "%s", err);
	free(err);
	size_t nt, np;
	json_t *pts = load_lines(res, &nt, &np);
	cr_expect_eq(np, 2, "every point once");
	check_fake_points(pts);
	size_t sum = 0;
	const char *key;
	json_t *p;
	json_object_foreach(pts, key, p) sum += (size_t)json_integer_value(json_object_get(p, "trials"));
	cr_expect_eq(nt, sum, "%zu trial lines for %zu trials", nt, sum);
	json_decref(pts);
}

Test(sweep_run, the_file_size_limit_stops_it_and_resume_finishes_it)
{
	char *dir = sw_tmpdir(), *err = NULL, outdir[600], res[700];
	char *spec = sw_write(dir, "spec.yaml", small_spec);
	snprintf(outdir, sizeof(outdir), "%s/out", dir);
	snprintf(res, sizeof(res), "%s/results.jsonl", outdir);
	char *argv[] = {RXRAY_BIN, "sweep", spec, "-o", outdir, "--runner", FAKE_RUN, "--quiet",
			NULL};
	/*
	 * ~6 KB: the first point (4 trial lines of ~630 bytes and a summary of
	 * ~2 KB) fits, the second point's third trial line does not; a
	 * trial's own result (~1 KB) always does. SIGXFSZ is left as it is:
	 * the sweep must ignore it itself, or die of it.
	 */
	sw_run_fsize = 6000;
	int rc = sw_run(argv, NULL, &err);
	sw_run_fsize = 0;
	check_stopped(rc, err, "results.jsonl: a result line could not be appended: the file size "
			       "limit was hit, ulimit -f (File too large); the points done are kept",
		      res);
	free(err);
	char *argv2[] = {RXRAY_BIN, "sweep", spec, "-o", outdir, "--runner", FAKE_RUN, "--resume",
			 NULL};
	check_resumed(argv2, res);
	free(spec);
	sw_rmtree(dir);
}

Test(sweep_run, a_full_disk_stops_it_and_resume_finishes_it)
{
	if (geteuid())
		cr_skip_test("needs root (mounts a 16 KiB tmpfs)");
	char *dir = sw_tmpdir(), *err = NULL, outdir[600], res[700], opts[64];
	char *spec = sw_write(dir, "spec.yaml", small_spec);
	snprintf(outdir, sizeof(outdir), "%s/out", dir);
	snprintf(res, sizeof(res), "%s/results.jsonl", outdir);
	cr_assert_eq(mkdir(outdir, 0755), 0);
	/* four pages: the spec's copy, a trial's result, and the first point's lines */
	snprintf(opts, sizeof(opts), "size=16k,mode=0755");
	if (mount("tmpfs", outdir, "tmpfs", 0, opts)) {
		int e = errno;
		sw_rmtree(dir);
		free(spec);
		cr_skip_test("cannot mount a tmpfs here: %s", strerror(e));
	}
	char *argv[] = {RXRAY_BIN, "sweep", spec, "-o", outdir, "--runner", FAKE_RUN, "--quiet",
			NULL};
	int rc = sw_run(argv, NULL, &err);
	/* which write meets the full disk first varies (the result line, or a
	 * trial's result): both say so */
	check_stopped(rc, err, ": the disk is full (No space left on device); the points done are kept",
		      res);
	free(err);
	cr_assert_eq(mount("tmpfs", outdir, "tmpfs", MS_REMOUNT, "size=4m,mode=0755"), 0, "%s",
		     strerror(errno));
	char *argv2[] = {RXRAY_BIN, "sweep", spec, "-o", outdir, "--runner", FAKE_RUN, "--resume",
			 NULL};
	check_resumed(argv2, res);
	cr_expect_eq(umount2(outdir, MNT_DETACH), 0, "%s", strerror(errno));
	free(spec);
	sw_rmtree(dir);
}
