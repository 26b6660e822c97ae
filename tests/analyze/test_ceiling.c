/* SPDX-License-Identifier: MIT */
/* The ceiling model on hand-built results (numbers in data/make_fixtures.py). */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>

#include "rxray/analyze.h"
#include "testutil.h"

static struct rxa_set *load(const char *path)
{
	char err[RXA_ERR_LEN] = "";
	struct rxa_set *s = NULL;
	int rc = rxa_set_load(path, &s, err, sizeof(err));
	cr_assert_eq(rc, 0, "load %s: %s", path, err);
	return s;
}

static const struct rxa_point *find(const struct rxa_set *s, const char *key)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->pts[i].key, key))
			return &s->pts[i];
	cr_assert_fail("no point %s", key);
	return NULL;
}

/* A run with one rx thread of the given stage cycles/packet and hz. */
static struct rxr_result *mk_run(double hz, uint64_t packets, const double *rx_cpp, double app_cpp,
				 int queues)
{
	struct rxr_result *r = NULL;
	rxr_result_open(&r);
	cr_assert(r);
	r->clock.hz = hz;
	r->nthreads = 3;
	r->threads = calloc(3, sizeof(*r->threads));
	const char *roles[] = {"nic", "rx", "app"};
	for (int t = 0; t < 3; t++) {
		snprintf(r->threads[t].role, sizeof(r->threads[t].role), "%s", roles[t]);
		r->threads[t].packets = packets;
	}
	/* the nic is the most expensive thread: it must never be the bottleneck */
	r->threads[0].st[RXP_ST_HDR_WRITE].cycles = packets * 5000;
	r->threads[0].stage_mask = 1u << RXP_ST_HDR_WRITE;
	r->threads[0].busy_cycles = packets * 5000;
	uint64_t busy = 0;
	for (int s = 0; s < RXP_ST_COUNT; s++) {
		if (!rx_cpp[s])
			continue;
		r->threads[1].st[s].cycles = (uint64_t)(rx_cpp[s] * (double)packets);
		r->threads[1].stage_mask |= 1u << s;
		busy += r->threads[1].st[s].cycles;
	}
	r->threads[1].st[RXP_ST_IDLE].cycles = packets * 100000; /* idle never counts */
	r->threads[1].stage_mask |= 1u << RXP_ST_IDLE;
	r->threads[1].busy_cycles = busy;
	r->threads[2].st[RXP_ST_APP].cycles = (uint64_t)(app_cpp * (double)packets);
	r->threads[2].stage_mask = 1u << RXP_ST_APP;
	r->threads[2].busy_cycles = r->threads[2].st[RXP_ST_APP].cycles;
	if (queues)
		json_object_set_new(r->config, "queues", json_integer(queues));
	return r;
}

Test(ceiling, predicted_from_bottleneck_cycles)
{
	double cpp[RXP_ST_COUNT] = {0};
	cpp[RXP_ST_CQE_POLL] = 100;
	cpp[RXP_ST_BUF_ALLOC] = 300; /* rx: 400 cycles/packet */
	struct rxr_result *r = mk_run(3.0e9, 1000000, cpp, 250, 0);
	int b = -1;
	double m = rxa_run_predict(r, NULL, rxa_run_queues(r, NULL), &b);
	cr_expect_eq(b, 1, "bottleneck thread %d, expected rx (1)", b);
	cr_expect_float_eq(m, 3.0e9 / 400 / 1e6, 1e-9, "predicted %f", m);
	cr_expect_float_eq(rxa_thread_busy_cpp(&r->threads[1]), 400, 1e-9);
	cr_expect_float_eq(rxa_thread_stage_cpp(&r->threads[1], RXP_ST_BUF_ALLOC), 300, 1e-9);

	/* app becomes the bottleneck when it costs more */
	struct rxr_result *r2 = mk_run(3.0e9, 1000000, cpp, 600, 0);
	m = rxa_run_predict(r2, NULL, 1, &b);
	cr_expect_eq(b, 2);
	cr_expect_float_eq(m, 5.0, 1e-9);

	/* queues multiply: config "queues", overridden by the point's knobs */
	struct rxr_result *r4 = mk_run(3.0e9, 1000000, cpp, 250, 4);
	cr_expect_float_eq(rxa_run_queues(r4, NULL), 4, 1e-12);
	cr_expect_float_eq(rxa_run_predict(r4, NULL, rxa_run_queues(r4, NULL), NULL), 30.0, 1e-9);
	json_t *k = json_pack("{s:i}", "queues", 2);
	cr_expect_float_eq(rxa_run_queues(r4, k), 2, 1e-12);
	json_decref(k);

	/* a point around the run: ratio = NDR / predicted, top stages ordered */
	struct rxa_point p = {.key = "x", .knobs = json_object(), .ndr_mpps = 6.0, .pdr_mpps = 6.5,
			      .ndr_run = r, .top_run = r};
	struct rxa_ceiling c;
	rxa_ceiling_compute(&p, &c);
	cr_expect_float_eq(c.predicted_mpps, 7.5, 1e-9);
	cr_expect_float_eq(c.ratio, 0.8, 1e-9);
	cr_expect_str_eq(c.thread_label, "rx");
	cr_expect_str_eq(c.basis_name, "ndr");
	/* no NDR: the highest trial is accounted for, but no ratio is made
	 * of its RX rate (it is no ceiling) */
	struct rxa_point q = {.key = "y", .knobs = p.knobs, .ndr_mpps = NAN, .pdr_mpps = NAN,
			      .top_run = r};
	struct rxa_ceiling cq;
	rxa_ceiling_compute(&q, &cq);
	cr_expect_float_eq(cq.predicted_mpps, 7.5, 1e-9);
	cr_expect_str_eq(cq.basis_name, "top");
	cr_expect(isnan(cq.ratio), "a ratio without an NDR: %f", cq.ratio);
	cr_assert_eq(c.ntop, 2);
	cr_expect_eq(c.top[0].stage, RXP_ST_BUF_ALLOC);
	cr_expect_float_eq(c.top[0].share, 0.75, 1e-9);
	cr_expect_eq(c.top[1].stage, RXP_ST_CQE_POLL);
	json_decref(p.knobs);
	rxr_result_free(r);
	rxr_result_free(r2);
	rxr_result_free(r4);
}

Test(ceiling, median_view_and_heavy_tails)
{
	double cpp[RXP_ST_COUNT] = {0};
	cpp[RXP_ST_CQE_POLL] = 1000; /* mostly a few huge laps: preemption */
	cpp[RXP_ST_BUF_ALLOC] = 100;
	struct rxr_result *r = mk_run(2e9, 1000, cpp, 50, 0);
	struct rxr_thread_result *t = &r->threads[1];
	t->st[RXP_ST_CQE_POLL].count = 100; /* mean lap 10,000 cycles */
	t->st[RXP_ST_CQE_POLL].p50 = 200;   /* median lap 200: 20 cycles/packet */
	t->st[RXP_ST_BUF_ALLOC].count = 100;
	t->st[RXP_ST_BUF_ALLOC].p50 = 1000; /* 100 cycles/packet, no tail */
	r->threads[2].st[RXP_ST_APP].count = 1000;
	r->threads[2].st[RXP_ST_APP].p50 = 50;
	cr_expect_float_eq(rxa_thread_stage_median_cpp(t, RXP_ST_CQE_POLL), 20, 1e-9);
	struct rxa_point p = {.key = "x", .knobs = json_object(), .ndr_mpps = NAN, .top_run = r};
	struct rxa_ceiling c;
	rxa_ceiling_compute(&p, &c);
	cr_expect_float_eq(c.predicted_mpps, 2e9 / 1100 / 1e6, 1e-9);
	/* medians: rx 120 cycles/packet (nic excluded), app 50 */
	cr_expect_float_eq(c.median_mpps, 2e9 / 120 / 1e6, 1e-9);
	cr_expect_eq(c.tail_stage, RXP_ST_CQE_POLL);
	cr_expect_float_eq(c.tail_ratio, 50, 1e-9);
	cr_expect(c.tail_ratio > RXA_TAIL_RATIO);
	cr_expect_str_eq(c.basis_name, "top");
	json_decref(p.knobs);
	rxr_result_free(r);
}

Test(ceiling, no_receiver_thread_is_unknown)
{
	double cpp[RXP_ST_COUNT] = {0};
	struct rxr_result *r = mk_run(2e9, 100, cpp, 0, 0);
	r->threads[1].packets = r->threads[2].packets = 0; /* only the nic handled packets */
	int b = 7;
	cr_expect(isnan(rxa_run_predict(r, NULL, 1, &b)));
	cr_expect_eq(b, -1);
	rxr_result_free(r);
}

Test(ceiling, fixture_sweep)
{
	struct rxa_set *s = load(FIXTURES "/sweep");
	cr_expect_eq(s->n, 17, "points: %zu", s->n);
	cr_expect(s->spec_text && strstr(s->spec_text, "engines: [verbs, dpdk]"));
	cr_expect_eq(s->ntrials, 33);

	struct rxa_ceiling c;
	/* dpdk hds: rx 500 cycles/packet at 2 GHz -> 4 Mpps; NDR 0.95 of it */
	const struct rxa_point *p = find(s, "engine=dpdk,mode=hds,frame=1064,queues=1,ring=8192");
	rxa_ceiling_compute(p, &c);
	cr_expect_float_eq(c.predicted_mpps, 4.0, 1e-6);
	cr_expect_float_eq(c.cpp, 500, 1e-6);
	cr_expect_str_eq(c.thread_label, "rx");
	cr_expect_float_eq(c.ratio, 0.95, 1e-6);
	cr_expect_eq(c.top[0].stage, RXP_ST_BUF_ALLOC);
	cr_expect_float_eq(c.top[0].cpp, 200, 1e-6);
	cr_expect_eq(c.top[1].stage, RXP_ST_SGE_SETUP);
	cr_expect_float_eq(c.top_loss, 1 - 3.92 / (200e9 / (1084 * 8) / 1e6), 1e-6);
	cr_expect(!p->generator_limited);

	/* verbs single: the app thread (per-byte) is the bottleneck: 55 + 0.05 x frame */
	p = find(s, "engine=verbs,mode=single,frame=8064,queues=1,ring=8192");
	rxa_ceiling_compute(p, &c);
	cr_expect_str_eq(c.thread_label, "app");
	cr_expect_float_eq(c.cpp, 55 + 0.05 * 8064, 1e-3);
	cr_expect(p->generator_limited);

	p = find(s, "engine=dpdk,mode=hds,frame=1064,queues=4,ring=8192");
	cr_expect_str_eq(p->status, "infeasible");
	cr_expect_str_eq(p->reason, "needs 9 cores, 2 available");
	rxa_ceiling_compute(p, &c);
	cr_expect(isnan(c.predicted_mpps));
	cr_expect_eq(c.thread, -1);
	rxa_set_free(s);
}

Test(ceiling, partial_sweep_from_trials)
{
	struct rxa_set *s = load(FIXTURES "/partial.jsonl");
	cr_assert_eq(s->n, 1);
	const struct rxa_point *p = &s->pts[0];
	cr_expect_str_eq(p->status, "partial");
	cr_expect_eq(p->trials, 2);
	cr_expect_float_eq(p->ndr_mpps, 15.0, 1e-9);       /* the lossless trial */
	cr_expect_float_eq(p->max_offered_mpps, 23.0, 1e-9); /* the highest offered */
	cr_expect_float_eq(rxa_knob_num(p->knobs, "frame", 0), 1064, 0);
	rxa_set_free(s);
}

Test(ceiling, standalone_runs_and_folder)
{
	struct rxa_set *s = load(FIXTURES "/run_dpdk_single.json");
	cr_assert_eq(s->n, 1);
	cr_expect_str_eq(s->pts[0].status, "run");
	cr_expect_float_eq(s->pts[0].ndr_mpps, 3.0, 1e-9);
	char b[64];
	cr_expect_str_eq(rxa_result_knob_str(s->pts[0].knobs, "mode", b, sizeof(b)), "single");
	rxa_set_free(s);

	char dir[64];
	cr_assert(tu_tmpdir(dir, sizeof(dir)));
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "cp %s/run_dpdk_single.json %s/run_dpdk_hds.json %s/", FIXTURES, FIXTURES, dir);
	cr_assert_eq(system(cmd), 0);
	s = load(dir);
	cr_expect_eq(s->n, 2);
	size_t nv = 0;
	const char **v = rxa_set_varying(s, &nv);
	cr_expect_eq(nv, 1);
	cr_expect_str_eq(v[0], "mode");
	free(v);
	rxa_set_free(s);
	tu_rmrf(dir);
}

Test(ceiling, bad_input_names_file_and_line)
{
	char dir[64], path[128], err[RXA_ERR_LEN] = "";
	cr_assert(tu_tmpdir(dir, sizeof(dir)));
	snprintf(path, sizeof(path), "%s/results.jsonl", dir);
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "head -n 2 %s/sweep/results.jsonl > %s && echo '{\"schema\": \"rxray.point/1\", \"key\": 3}' >> %s",
		 FIXTURES, path, path);
	cr_assert_eq(system(cmd), 0);
	struct rxa_set *s = NULL;
	cr_expect_eq(rxa_set_load(dir, &s, err, sizeof(err)), -EINVAL);
	cr_expect(strstr(err, "results.jsonl:3: key"), "err: %s", err);
	cr_expect_null(s);

	snprintf(cmd, sizeof(cmd), "echo '{\"schema\": \"rxray.run/1\"' > %s", path);
	cr_assert_eq(system(cmd), 0);
	cr_expect_eq(rxa_set_load(dir, &s, err, sizeof(err)), -EINVAL);
	cr_expect(strstr(err, "results.jsonl:1: (json)"), "err: %s", err);

	/* a truncated last line (sweep killed mid-write) is skipped, not fatal */
	snprintf(cmd, sizeof(cmd), "head -n 3 %s/sweep/results.jsonl > %s && printf '{\"schema\": \"rxray.po' >> %s",
		 FIXTURES, path, path);
	cr_assert_eq(system(cmd), 0);
	cr_expect_eq(rxa_set_load(dir, &s, err, sizeof(err)), 0, "%s", err);
	cr_assert(s);
	cr_expect_eq(s->truncated_line, 4);
	cr_expect_eq(s->n, 1);
	rxa_set_free(s);
	s = NULL;
	/* the verbs refuse it (exit 2, one line naming the line); only a
	 * sweep's --resume drops it (tests/sweep/store_test.c) */
	char *msg = NULL;
	snprintf(cmd, sizeof(cmd), "%s ceiling %s", RXRAY_BIN, dir);
	cr_expect_eq(tu_run(cmd, &msg), 2, "%s", msg);
	cr_expect(msg && strstr(msg, "line 4 is not a whole record") && strstr(msg, "--resume"),
		  "%s", msg);
	free(msg);
	/* ... but the same text followed by more lines is an error */
	snprintf(cmd, sizeof(cmd), "printf '\\n{}\\n' >> %s", path);
	cr_assert_eq(system(cmd), 0);
	cr_expect_eq(rxa_set_load(dir, &s, err, sizeof(err)), -EINVAL);
	cr_expect(strstr(err, "results.jsonl:4: (json)"), "err: %s", err);

	snprintf(cmd, sizeof(cmd), "echo '{\"schema\": \"rxray.run/1\"' > %s", path);
	cr_assert_eq(system(cmd), 0);

	/* the CLI: one line, exit 2 */
	char *out = NULL;
	snprintf(cmd, sizeof(cmd), "%s ceiling %s", RXRAY_BIN, dir);
	cr_expect_eq(tu_run(cmd, &out), 2);
	cr_expect(out && strstr(out, "results.jsonl:1:"), "out: %s", out);
	free(out);
	snprintf(cmd, sizeof(cmd), "%s ceiling %s/nonexistent", RXRAY_BIN, dir);
	cr_expect_eq(tu_run(cmd, NULL), 2);
	tu_rmrf(dir);
}

/*
 * A key given twice anywhere in any line is refused, naming file, line
 * and the key's path, whichever way the loader reads the line: most
 * trial lines of a sweep are only skimmed for their "trial" object (their
 * point's summary holds the figures), and those took a repeated key
 * outside it (env, a stage, the schema) as if nothing were wrong.
 */
Test(ceiling, a_key_given_twice_in_any_line_is_refused)
{
	static const struct {
		const char *find, *repl, *key;
	} edits[] = {
		{"\"hostname\":\"fixture\",", "\"hostname\":\"fixture\",\"hostname\":\"x\",", "hostname"},
		{"{\"count\":", "{\"count\":0,\"count\":", "count"},
		{"{\"schema\":", "{\"schema\":\"x\",\"schema\":", "schema"},
		{"\"trial\":{\"key\":", "\"trial\":{\"key\":\"k\",\"key\":", "key"},
	};
	char *text = tu_slurp(FIXTURES "/sweep/results.jsonl");
	cr_assert(text);
	char dir[64], path[128];
	cr_assert(tu_tmpdir(dir, sizeof(dir)));
	snprintf(path, sizeof(path), "%s/results.jsonl", dir);
	int lines = 0, tried = 0;
	for (const char *l = text; *l; l = strchr(l, '\n') + 1) {
		lines++;
		const char *eol = strchr(l, '\n');
		cr_assert(eol);
		for (size_t e = 0; e < sizeof(edits) / sizeof(edits[0]); e++) {
			const char *at = strstr(l, edits[e].find);
			if (!at || at > eol)
				continue;
			FILE *f = fopen(path, "w");
			cr_assert(f);
			fwrite(text, 1, (size_t)(at - text), f);
			fputs(edits[e].repl, f);
			fputs(at + strlen(edits[e].find), f);
			fclose(f);
			char err[RXA_ERR_LEN] = "", want[160], tail[64];
			struct rxa_set *s = NULL;
			cr_expect_eq(rxa_set_load(dir, &s, err, sizeof(err)), -EINVAL,
				     "line %d, %s given twice: taken", lines, edits[e].key);
			rxa_set_free(s);
			snprintf(want, sizeof(want), "%s:%d: ", path, lines);
			snprintf(tail, sizeof(tail), "%s: key given twice", edits[e].key);
			size_t el = strlen(err), tl = strlen(tail);
			cr_expect(!strncmp(err, want, strlen(want)) && el >= tl &&
				      !strcmp(err + el - tl, tail),
				  "line %d, %s given twice: %s", lines, edits[e].key, err);
			tried++;
		}
	}
	cr_expect_eq(lines, 50);
	cr_expect_gt(tried, 150);

	/* the CLI: exit 2, one line naming file, line and field */
	char cmd[512], *out = NULL, want[300];
	FILE *f = fopen(path, "w");
	cr_assert(f);
	const char *l2 = strchr(text, '\n') + 1, *at = strstr(text, "\"stages\":{\"hdr_write\":{");
	cr_assert(at && at < l2);
	at = strstr(at, "\"p90\":");
	fwrite(text, 1, (size_t)(at - text), f);
	fputs("\"p90\":1,", f);
	fputs(at, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "%s ceiling %s", RXRAY_BIN, dir);
	cr_expect_eq(tu_run(cmd, &out), 2, "%s", out);
	snprintf(want, sizeof(want),
		 "rxray ceiling: %s:1: threads[0].stages.hdr_write.p90: key given twice\n", path);
	cr_expect_str_eq(out, want);
	free(out);
	free(text);
	tu_rmrf(dir);
}

Test(ceiling, cli_formats)
{
	char *out = NULL;
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "%s ceiling %s/sweep --format json", RXRAY_BIN, FIXTURES);
	cr_assert_eq(tu_run(cmd, &out), 0, "%s", out);
	json_error_t je;
	json_t *j = json_loads(out, 0, &je);
	cr_assert(j, "json: %s", je.text);
	json_t *pts = json_object_get(j, "points");
	cr_expect_eq(json_array_size(pts), 17);
	int found = 0;
	size_t i;
	json_t *p;
	json_array_foreach(pts, i, p) {
		if (strcmp(json_string_value(json_object_get(p, "key")),
			   "engine=dpdk,mode=hds,frame=2064,queues=1,ring=8192"))
			continue;
		found = 1;
		cr_expect_float_eq(json_real_value(json_object_get(p, "predicted_mpps")), 4.0, 1e-6);
		cr_expect_str_eq(json_string_value(json_object_get(p, "bottleneck")), "rx");
	}
	cr_expect(found);
	cr_expect_eq(json_array_size(json_object_get(j, "bounds")), 5);
	json_decref(j);
	free(out);

	snprintf(cmd, sizeof(cmd), "%s ceiling %s/sweep --format csv --table seed", RXRAY_BIN, FIXTURES);
	cr_assert_eq(tu_run(cmd, &out), 0);
	cr_expect(!strncmp(out, "config,frame,TX offered,RX received,TX Mpps,RX Mpps,loss,marks\n", 63), "%s", out);
	cr_expect(strstr(out, "engine=dpdk mode=hds queues=1,1064 B,\"23,062,731\",\"3,920,000\",23.06,3.92,83.0%"),
		  "%s", out);
	free(out);

	snprintf(cmd, sizeof(cmd), "%s ceiling %s/sweep -s engine=dpdk,mode=hds,queues=1", RXRAY_BIN, FIXTURES);
	cr_assert_eq(tu_run(cmd, &out), 0);
	/* NDR, then the model (no light-load trials in the fixture: none),
	 * then the NDR trial's accounting, named as such */
	cr_expect(strstr(out, "| NDR Mpps | model Mpps (light load) | NDR/model | PDR Mpps | "
			      "NDR-trial accounting Mpps | NDR/accounting |"),
		  "%s", out);
	cr_expect(strstr(out, "| frame=1064 | ok | 3.80 | - | - | 3.80 | 4.00 | 0.95 | rx | 500 | buf_alloc 200 (40%)"),
		  "%s", out);
	cr_expect(strstr(out, "per-packet"));
	free(out);

	snprintf(cmd, sizeof(cmd), "%s ceiling %s/sweep --format xml", RXRAY_BIN, FIXTURES);
	cr_expect_eq(tu_run(cmd, &out), 2);
	cr_expect(strstr(out, "--format"));
	free(out);
	snprintf(cmd, sizeof(cmd), "%s ceiling --help", RXRAY_BIN);
	cr_expect_eq(tu_run(cmd, &out), 0);
	cr_expect(strstr(out, "USAGE") && strstr(out, "EXAMPLES"));
	free(out);
}
