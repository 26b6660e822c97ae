/* SPDX-License-Identifier: MIT */
/*
 * Labels that say exactly what a figure is (issue 43): a synthetic sweep
 * whose figures and marks are chosen, through the report, the ceiling
 * table, diff and flame.
 *
 *   dpdk hds 1064     [10.00, 10.10]; light-load trials: the model predicts
 *                     39.34, the NDR trial (buf_alloc x2) accounts 23.47
 *   dpdk single 1064  [5.00, 5.10]: separates from dpdk hds 1064
 *   verbs single 1064 >= 15.33 unresolved, verbs hds 1064 >= 4.86 unresolved:
 *                     two lower bounds
 *   dpdk single 2064  [3.00, 3.50] and dpdk hds 2064 [3.20, 3.90]: overlap
 *   verbs single 2064 [8.00, 8.10] disturbed (steal); verbs hds 2064 clean
 *   verbs single 4064 [6.00, 6.10] from an external generator ("command")
 *   verbs hds 4064    [6.50, 6.60] interrupted
 *   verbs single 8064 [3.00, 3.10] clean (with 4064, a fit holding an
 *                     external generator's figures)
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <sys/stat.h>

#include "../analyze/testutil.h"
#include "rxray/report.h"

#define HZ 3.0e9

/*
 * A run at `offered` Mpps: nic thread; rx with cqe_poll a=300 b=20 in laps
 * of n, buf_alloc 50 x f per packet, handoff in batches of 64 (100 each);
 * knobs copied into its config. As JSON (the caller owns it).
 */
static json_t *run_doc(json_t *knobs, double offered, double loss, double n, double f)
{
	struct rxr_result *r = NULL;
	rxr_result_open(&r);
	cr_assert(r);
	r->clock.hz = HZ;
	snprintf(r->clock.source, sizeof(r->clock.source), "tsc");
	r->offered_mpps = offered;
	r->seconds = 1;
	r->c.offered = (uint64_t)(offered * 1e6);
	r->c.received = (uint64_t)(offered * 1e6 * (1 - loss));
	r->c.out_of_buffer = r->c.offered - r->c.received;
	r->rx_mpps = (double)r->c.received / 1e6;
	r->loss = 1.0 - (double)r->c.received / (double)r->c.offered;
	json_object_update(r->config, knobs);
	json_object_set_new(r->config, "burst", json_integer(64));
	json_object_set_new(r->config, "batch", json_integer(64));
	r->nthreads = 2;
	r->threads = calloc(2, sizeof(*r->threads));
	struct rxr_thread_result *nic = &r->threads[0], *rx = &r->threads[1];
	snprintf(nic->role, sizeof(nic->role), "nic");
	snprintf(rx->role, sizeof(rx->role), "rx");
	double pk = 64000;
	nic->packets = rx->packets = (uint64_t)pk;
	tu_laps_add(&nic->st[RXP_ST_HDR_WRITE], pk / n, n, 0, 9000);
	nic->stage_mask = 1u << RXP_ST_HDR_WRITE;
	nic->busy_cycles = nic->st[RXP_ST_HDR_WRITE].cycles;
	tu_laps_add(&rx->st[RXP_ST_CQE_POLL], pk / n, n, 300, 20);
	tu_laps_add(&rx->st[RXP_ST_BUF_ALLOC], pk / n, n, 0, 50 * f);
	tu_laps_add(&rx->st[RXP_ST_HANDOFF], pk / 64, 64, 0, 100.0 / 64);
	rx->stage_mask = 1u << RXP_ST_CQE_POLL | 1u << RXP_ST_BUF_ALLOC | 1u << RXP_ST_HANDOFF;
	for (int s = 0; s < RXP_ST_COUNT; s++)
		rx->busy_cycles += rx->st[s].cycles;
	json_t *doc = rxr_result_to_json(r);
	rxr_result_free(r);
	cr_assert(doc);
	return doc;
}

static json_t *kn(const char *engine, const char *mode, int frame)
{
	return json_pack("{s:s,s:s,s:i,s:i,s:i}", "engine", engine, "mode", mode, "frame", frame,
			 "queues", 1, "ring", 1024);
}

static void key_of(const char *engine, const char *mode, int frame, char *buf, size_t n)
{
	snprintf(buf, n, "engine=%s,mode=%s,frame=%d,queues=1,ring=1024", engine, mode, frame);
}

static void put_line(FILE *f, json_t *doc)
{
	char *s = json_dumps(doc, JSON_COMPACT);
	cr_assert(s);
	fprintf(f, "%s\n", s);
	free(s);
	json_decref(doc);
}

/* A trial line of point key (a calibration trial if asked). */
static void put_trial(FILE *f, const char *key, json_t *run, int n, bool calib)
{
	json_t *tr = json_pack("{s:s,s:i,s:f,s:f,s:s}", "key", key, "n", n, "target_pps",
			       json_number_value(json_object_get(json_object_get(run, "rates"),
								 "offered_mpps")) * 1e6,
			       "seconds", 1.0, "status", "ok");
	if (calib)
		json_object_set_new(tr, "purpose", json_string("calibration"));
	json_object_set_new(run, "trial", tr);
	put_line(f, run);
}

enum mark { NONE, DISTURBED, UNRESOLVED, EXTERNAL, INTERRUPTED };

/* A summary line; hi NAN: no upper end. ndr and top are stolen (top may be NULL: ndr). */
static void put_point(FILE *f, const char *engine, const char *mode, int frame, double lo, double hi,
		      enum mark m, json_t *ndr, json_t *top)
{
	char key[128];
	key_of(engine, mode, frame, key, sizeof(key));
	if (m == DISTURBED)
		json_object_set_new(ndr, "validity", json_pack("{s:b,s:[s]}", "disturbed", 1, "reasons",
							       "steal: 30 ms in 1 s"));
	if (m == EXTERNAL)
		json_object_set_new(ndr, "generator",
				    json_pack("{s:s,s:s}", "kind", "command", "command", "trafgen -b {rate_pps}"));
	if (m == INTERRUPTED)
		json_object_set_new(ndr, "interrupted", json_true());
	json_t *s = json_pack("{s:s,s:s,s:o,s:s,s:f,s:f,s:f,s:f,s:f,s:f,s:b,s:i,s:O,s:o,s:o,s:o,s:b,s:b}",
			      "schema", "rxray.point/1", "key", key, "knobs", kn(engine, mode, frame),
			      "status", "ok", "ndr_mpps", lo, "pdr_mpps", lo, "ndr_loss", 0.0,
			      "pdr_loss", 0.005, "max_offered_mpps", 30.0, "nic_max_mpps", 30.0,
			      "generator_limited", 0, "trials", 6, "ndr_run", ndr, "top_run",
			      top ? top : json_incref(ndr), "ndr_upper_mpps",
			      isfinite(hi) ? json_real(hi) : json_null(), "pdr_upper_mpps",
			      isfinite(hi) ? json_real(hi) : json_null(), "resolved", m != UNRESOLVED,
			      "disturbed", m == DISTURBED);
	json_decref(ndr);
	put_line(f, s);
}

/* A clean point's run at lo Mpps. */
static json_t *plain(const char *engine, const char *mode, int frame, double lo)
{
	json_t *k = kn(engine, mode, frame);
	json_t *r = run_doc(k, lo, 0, 64, 1);
	json_decref(k);
	return r;
}

static char dir[128], sweep[256];
static char *md;
static json_t *cj;

static void make_sweep(void)
{
	cr_assert(tu_tmpdir(dir, sizeof(dir)));
	snprintf(sweep, sizeof(sweep), "%s/sw", dir);
	cr_assert_eq(mkdir(sweep, 0755), 0);
	char p[300], key[128];
	snprintf(p, sizeof(p), "%s/results.jsonl", sweep);
	FILE *f = fopen(p, "w");
	cr_assert(f);
	/* the modelled point: light and calibration trials, a dearer NDR trial */
	json_t *k = kn("dpdk", "hds", 1064);
	key_of("dpdk", "hds", 1064, key, sizeof(key));
	json_t *cal = run_doc(k, 2.5, 0, 64, 1);
	json_object_set_new(json_object_get(cal, "config"), "coalesce", json_integer(64));
	put_trial(f, key, run_doc(k, 1.0, 0, 2, 1), 1, false);
	put_trial(f, key, run_doc(k, 12.0, 0.1, 64, 3), 2, false);
	put_trial(f, key, run_doc(k, 10.0, 0, 48, 2), 3, false);
	put_trial(f, key, cal, 4, true);
	put_point(f, "dpdk", "hds", 1064, 10.0, 10.1, NONE, run_doc(k, 10.0, 0, 48, 2),
		  run_doc(k, 12.0, 0.1, 64, 3));
	json_decref(k);
	put_point(f, "dpdk", "single", 1064, 5.0, 5.1, NONE, plain("dpdk", "single", 1064, 5.0), NULL);
	put_point(f, "verbs", "single", 1064, 15.33, NAN, UNRESOLVED, plain("verbs", "single", 1064, 15.33),
		  NULL);
	put_point(f, "verbs", "hds", 1064, 4.86, NAN, UNRESOLVED, plain("verbs", "hds", 1064, 4.86), NULL);
	put_point(f, "dpdk", "single", 2064, 3.0, 3.5, NONE, plain("dpdk", "single", 2064, 3.0), NULL);
	put_point(f, "dpdk", "hds", 2064, 3.2, 3.9, NONE, plain("dpdk", "hds", 2064, 3.2), NULL);
	put_point(f, "verbs", "single", 2064, 8.0, 8.1, DISTURBED, plain("verbs", "single", 2064, 8.0), NULL);
	put_point(f, "verbs", "hds", 2064, 9.0, 9.1, NONE, plain("verbs", "hds", 2064, 9.0), NULL);
	put_point(f, "verbs", "single", 4064, 6.0, 6.1, EXTERNAL, plain("verbs", "single", 4064, 6.0), NULL);
	put_point(f, "verbs", "hds", 4064, 6.5, 6.6, INTERRUPTED, plain("verbs", "hds", 4064, 6.5), NULL);
	put_point(f, "verbs", "single", 8064, 3.0, 3.1, NONE, plain("verbs", "single", 8064, 3.0), NULL);
	fclose(f);
}

static void setup(void)
{
	make_sweep();
	char p[300], err[RXA_ERR_LEN];
	struct rxa_set *s = NULL;
	cr_assert_eq(rxa_set_load(sweep, &s, err, sizeof(err)), 0, "%s", err);
	snprintf(p, sizeof(p), "%s/rep", dir);
	cr_assert_eq(rxo_report_write(s, p, NULL, err, sizeof(err)), 0, "%s", err);
	rxa_set_free(s);
	snprintf(p, sizeof(p), "%s/rep/report.md", dir);
	md = tu_slurp(p);
	snprintf(p, sizeof(p), "%s/rep/ceiling.json", dir);
	cj = json_load_file(p, 0, NULL);
	cr_assert(md && cj);
}

static void teardown(void)
{
	free(md);
	json_decref(cj);
	md = NULL;
	cj = NULL;
	if (!getenv("RXRAY_TEST_KEEP"))
		tu_rmrf(dir);
	else
		fprintf(stderr, "kept %s\n", dir);
}

TestSuite(report_labels, .init = setup, .fini = teardown, .timeout = 120);

/* Cell c (0-based) of a markdown table row, copied. */
static char *cell_of(const char *row, int c)
{
	const char *p = row;
	for (int i = 0; p && i < c; i++)
		p = strchr(p + 1, '|');
	const char *e = p ? strchr(p + 1, '|') : NULL;
	cr_assert(p && e, "no cell %d in %s", c, row);
	while (e > p + 1 && e[-1] == ' ')
		e--;
	return strndup(p + 2, (size_t)(e - p - 2));
}

/*
 * "predicted" is the light-load model's figure alone. Catches the verdict
 * calling the NDR trial's accounting (23.47) a prediction, as it did.
 */
Test(report_labels, verdict_names_the_accounting_and_the_models_prediction)
{
	char *l = tu_line_of(strstr(md, "### Configurations"), "- dpdk hds frame=1064:");
	cr_assert(l, "%s", md);
	cr_expect(strstr(l, "ceiling NDR [10.00, 10.10] Mpps (light-load model predicts 39.34; "
			    "NDR-trial accounting 23.47)"), "%s", l);
	cr_expect(!strstr(l, "predicted 23.47"), "%s", l);
	free(l);
	/* the summary line too */
	l = tu_line_of(strstr(md, "## Summary"), "- frame 1064 B: NDR [10.00, 10.10]");
	cr_assert(l, "%s", strstr(md, "## Summary"));
	cr_expect(strstr(l, "predicted (light-load model) 39.34 Mpps, NDR-trial accounting 23.47 Mpps"),
		  "%s", l);
	free(l);
	/* without a light-load fit nothing is called predicted */
	l = tu_line_of(strstr(md, "### Configurations"), "- dpdk single frame=1064:");
	cr_assert(l);
	cr_expect(strstr(l, "no light-load prediction; NDR-trial accounting") && !strstr(l, "predicted"),
		  "%s", l);
	free(l);
}

/*
 * "faster" only where the intervals separate. Catches "A the faster" over
 * two lower bounds (">= 15.33 (unresolved) -> >= 4.86 (unresolved)") and
 * over overlapping intervals.
 */
Test(report_labels, faster_only_where_the_intervals_separate)
{
	const char *cmp = strstr(md, "### Comparisons");
	cr_assert(cmp);
	cr_expect(!strstr(md, "A the faster"), "the header still asserts A is the faster");
	char *l = tu_line_of(cmp, "- verbs hds frame=1064 vs verbs single frame=1064:");
	cr_assert(l, "%s", cmp);
	cr_expect(strstr(l, "ceiling >= 15.33 (unresolved) -> >= 4.86 (unresolved) Mpps"), "%s", l);
	cr_expect(strstr(l, "both are lower bounds: neither is shown faster"), "%s", l);
	cr_expect(!strstr(l, "is faster"), "%s", l);
	free(l);
	l = tu_line_of(cmp, "- dpdk single frame=2064 vs dpdk hds frame=2064:");
	cr_assert(l, "%s", cmp);
	cr_expect(strstr(l, "the NDR intervals overlap: neither is shown faster"), "%s", l);
	cr_expect(!strstr(l, "is faster"), "%s", l);
	free(l);
	l = tu_line_of(cmp, "- dpdk single frame=1064 vs dpdk hds frame=1064:");
	cr_assert(l, "%s", cmp);
	cr_expect(strstr(l, "dpdk hds frame=1064 is faster: the NDR intervals separate"), "%s", l);
	free(l);
}

/*
 * A marked point's status is never a bare "ok", and its notes give each
 * mark's own reason. Catches the status column reading "ok" for bounds
 * that rest on disturbed trials.
 */
Test(report_labels, ceiling_table_status_names_the_marks)
{
	const char *tab = strstr(md, "## Ceiling");
	cr_assert(tab);
	char *row = tu_line_of(tab, "| engine=verbs mode=single frame=2064 ");
	cr_assert(row, "%s", tab);
	char *st = cell_of(row, 1), *notes = cell_of(row, 13);
	cr_expect_str_eq(st, "disturbed");
	cr_expect(strstr(notes, "disturbed: the host interfered (steal: 30 ms in 1 s)"), "%s", notes);
	free(st);
	free(notes);
	free(row);
	/* unresolved: its own reason, never the disturbed one */
	row = tu_line_of(tab, "| engine=verbs mode=hds frame=1064 ");
	cr_assert(row);
	st = cell_of(row, 1);
	notes = cell_of(row, 13);
	cr_expect_str_eq(st, "unresolved");
	cr_expect(strstr(notes, "unresolved: the search ended at NDR >= 4.86 Mpps, wider than its "
				"precision goal"), "%s", notes);
	cr_expect(!strstr(notes, "host"), "%s", notes);
	free(st);
	free(notes);
	free(row);
	/* interrupted: marked and left out; an external generator: marked, still ok */
	row = tu_line_of(tab, "| engine=verbs mode=hds frame=4064 ");
	cr_assert(row);
	st = cell_of(row, 1);
	cr_expect_str_eq(st, "interrupted");
	free(st);
	free(row);
	row = tu_line_of(tab, "| engine=verbs mode=single frame=4064 ");
	cr_assert(row);
	st = cell_of(row, 1);
	cr_expect_str_eq(st, "ok; external generator: command");
	free(st);
	free(row);
	/* a clean point stays ok */
	row = tu_line_of(tab, "| engine=verbs mode=hds frame=2064 ");
	cr_assert(row);
	st = cell_of(row, 1);
	cr_expect_str_eq(st, "ok");
	free(st);
	free(row);
	/* ceiling.json: each mark with its reason */
	size_t i;
	json_t *p;
	int seen = 0;
	json_array_foreach(json_object_get(cj, "points"), i, p) {
		const char *key = json_string_value(json_object_get(p, "key"));
		json_t *m = json_object_get(p, "marks");
		if (!strcmp(key, "engine=verbs,mode=hds,frame=4064,queues=1,ring=1024")) {
			cr_expect_eq(json_array_size(m), 1);
			cr_expect_str_eq(json_string_value(json_object_get(json_array_get(m, 0), "mark")),
					 "interrupted");
			seen++;
		}
		if (!strcmp(key, "engine=dpdk,mode=hds,frame=1064,queues=1,ring=1024")) {
			cr_expect_eq(json_array_size(m), 0);
			cr_expect_float_eq(json_number_value(json_object_get(p, "accounting_mpps")),
					   3e9 / (300.0 / 48 + 20 + 100 + 100.0 / 64) / 1e6, 1e-6);
			seen++;
		}
	}
	cr_expect_eq(seen, 2);
}

/*
 * Every line and table row carries the marks of its figures. Catches the
 * "Between modes/engines" lines without marks, and an external generator
 * or an interrupted run going unmarked.
 */
Test(report_labels, comparison_lines_and_rows_carry_marks)
{
	const char *modes = strstr(md, "### Between modes");
	cr_assert(modes);
	char *l = tu_line_of(modes, "- [single disturbed: the host interfered (steal: 30 ms in 1 s)");
	cr_assert(l, "%s", modes);
	cr_expect(strstr(l, "] engine=verbs,frame=2064,queues=1,ring=1024: "), "%s", l);
	free(l);
	l = tu_line_of(modes, "- [single unresolved: the search ended at NDR >= 15.33 Mpps");
	cr_assert(l, "%s", modes);
	cr_expect(strstr(l, "hds unresolved: the search ended at NDR >= 4.86 Mpps"), "%s", l);
	free(l);
	/* a clean pair stays unmarked */
	char *c = tu_line_of(modes, "- engine=dpdk,frame=1064,");
	cr_expect(c != NULL, "%s", modes);
	free(c);
	/* the verdicts */
	const char *cfg = strstr(md, "### Configurations");
	l = tu_line_of(cfg, "- [external generator: command (the load came from outside rxray");
	cr_assert(l, "%s", cfg);
	cr_expect(strstr(l, "verbs single frame=4064: ceiling NDR [6.00, 6.10]"), "%s", l);
	free(l);
	l = tu_line_of(cfg, "- [interrupted: stopped before its planned length");
	cr_assert(l, "%s", cfg);
	cr_expect(strstr(l, "verbs hds frame=4064: NDR (not a ceiling)"), "%s", l);
	free(l);
	/* the comparison of those two names both marks with their reasons */
	l = tu_line_of(strstr(md, "### Comparisons"), "- verbs single frame=4064 vs verbs hds frame=4064:");
	cr_assert(l, "%s", strstr(md, "### Comparisons"));
	cr_expect(strstr(l, "6.50 (interrupted) -> 6.00 (external generator) Mpps"), "%s", l);
	cr_expect(strstr(l, "verbs single frame=4064: external generator: command (the load came") &&
		  strstr(l, "verbs hds frame=4064: interrupted: stopped before"), "%s", l);
	free(l);
	/* the bound table: the fit that took the external generator's figures says so */
	cr_expect(strstr(md, "| engine=verbs mode=single [external generator] | receiver cost"), "%s",
		  strstr(md, "## Bound"));
	/* the seed table: the row's own marks */
	cr_expect(strstr(md, "| 0.0% | interrupted |"), "%s",
		  strstr(md, "## Results"));
	/* the plots: a series and a bar name the marks of their points */
	char p[300];
	snprintf(p, sizeof(p), "%s/rep/plots/rx_mpps.svg", dir);
	char *svg = tu_slurp(p);
	cr_assert(svg);
	cr_expect(strstr(svg, "engine=verbs mode=single [marked: 1064 B unresolved; 2064 B disturbed; "
			      "4064 B external generator: command]"), "no marks in the rx_mpps plot");
	free(svg);
	snprintf(p, sizeof(p), "%s/rep/plots/cycles.svg", dir);
	svg = tu_slurp(p);
	cr_assert(svg);
	cr_expect(strstr(svg, "rx [interrupted]"), "no mark on the bar");
	free(svg);
}

/*
 * diff and flame give each mark's own reason. Catches an unresolved point
 * given the disturbed reason ("the host's share is in these figures").
 */
Test(report_labels, diff_and_flame_give_the_unresolved_reason)
{
	char cmd[1024], *out = NULL;
	snprintf(cmd, sizeof(cmd), "%s diff %s engine=verbs,mode=single engine=verbs,mode=hds", RXRAY_BIN,
		 sweep);
	cr_assert_eq(tu_run(cmd, &out), 0, "%s", out);
	char *l = tu_line_of(strstr(out, "frame=1064"), "> MARKED: ");
	cr_assert(l, "%s", out);
	cr_expect(strstr(l, "unresolved: the search ended at NDR >= 15.33 Mpps, wider than its precision "
			    "goal"), "%s", l);
	cr_expect(!strstr(l, "host"), "%s", l);
	free(l);
	l = tu_line_of(strstr(out, "frame=2064"), "> MARKED: ");
	cr_assert(l, "%s", out);
	cr_expect(strstr(l, "disturbed: the host interfered (steal: 30 ms in 1 s)"), "%s", l);
	free(l);
	free(out);
	snprintf(cmd, sizeof(cmd), "%s flame %s --select engine=verbs,mode=hds,frame=1064 -o %s/u.svg",
		 RXRAY_BIN, sweep, dir);
	cr_assert_eq(tu_run(cmd, &out), 0, "%s", out);
	free(out);
	snprintf(cmd, sizeof(cmd), "%s/u.svg", dir);
	char *svg = tu_slurp(cmd);
	cr_assert(svg);
	cr_expect(strstr(svg, "MARKED") &&
		  strstr(svg, "unresolved: the search ended at NDR &gt;= 4.86 Mpps"), "%s", svg);
	cr_expect(!strstr(svg, "host&#39;s share") && !strstr(svg, "host's share"), "disturbed reason in the SVG");
	free(svg);
	/* an external generator's figures are marked in the graph too */
	snprintf(cmd, sizeof(cmd), "%s flame %s --select engine=verbs,mode=single,frame=4064 -o %s/e.svg",
		 RXRAY_BIN, sweep, dir);
	cr_assert_eq(tu_run(cmd, &out), 0, "%s", out);
	free(out);
	snprintf(cmd, sizeof(cmd), "%s/e.svg", dir);
	svg = tu_slurp(cmd);
	cr_assert(svg);
	cr_expect(strstr(svg, "external generator: command"), "no mark in the SVG");
	free(svg);
}
