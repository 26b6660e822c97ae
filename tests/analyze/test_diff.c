/* SPDX-License-Identifier: MIT */
/* rxray diff: selectors, ordering of stage deltas, verdict, what-ifs. */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>

#include "rxray/analyze.h"
#include "testutil.h"

static struct rxa_set *fixture(void)
{
	char err[RXA_ERR_LEN];
	struct rxa_set *s = NULL;
	cr_assert_eq(rxa_set_load(FIXTURES "/sweep", &s, err, sizeof(err)), 0, "%s", err);
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

Test(diff, selectors)
{
	struct rxa_sel a, b;
	char err[256];
	cr_assert_eq(rxa_sel_parse("engine=dpdk,mode=single", &a, err, sizeof(err)), 0);
	cr_assert_eq(rxa_sel_parse("engine=dpdk,mode=hds", &b, err, sizeof(err)), 0);
	json_t *k = json_pack("{s:s,s:s,s:i}", "engine", "dpdk", "mode", "hds", "frame", 1064);
	cr_expect(!rxa_sel_match(&a, k));
	cr_expect(rxa_sel_match(&b, k));
	char la[64], lb[64];
	rxa_sel_labels(&a, &b, la, lb, sizeof(la));
	cr_expect_str_eq(la, "single");
	cr_expect_str_eq(lb, "hds");
	rxa_sel_free(&a);
	rxa_sel_free(&b);
	/* numbers match by their text */
	cr_assert_eq(rxa_sel_parse("frame=1064", &a, err, sizeof(err)), 0);
	cr_expect(rxa_sel_match(&a, k));
	rxa_sel_free(&a);
	json_decref(k);

	cr_expect_eq(rxa_sel_parse("mode", &a, err, sizeof(err)), -EINVAL);
	cr_expect(strstr(err, "'mode' is not knob=value"), "%s", err);
	cr_expect_eq(rxa_sel_parse("=x", &a, err, sizeof(err)), -EINVAL);
	cr_expect_eq(rxa_sel_parse(",", &a, err, sizeof(err)), -EINVAL);
}

Test(diff, ordering_verdict_whatif)
{
	struct rxa_set *s = fixture();
	const struct rxa_point *a = find(s, "engine=dpdk,mode=single,frame=1064,queues=1,ring=8192");
	const struct rxa_point *b = find(s, "engine=dpdk,mode=hds,frame=1064,queues=1,ring=8192");
	struct rxa_diff d;
	cr_assert_eq(rxa_diff_compute(rxa_point_run(a), rxa_point_run(b), b->knobs, "single", "hds", &d), 0);
	/* sorted by |delta|, largest first */
	for (size_t i = 1; i < d.n; i++)
		cr_expect(fabs(d.d[i - 1].delta) >= fabs(d.d[i].delta), "row %zu out of order", i);
	cr_assert(d.n >= 3);
	cr_expect_str_eq(d.d[0].thread, "rx");
	cr_expect_eq(d.d[0].stage, RXP_ST_BUF_ALLOC);
	cr_expect_float_eq(d.d[0].delta, 170, 1e-6);
	cr_expect_str_eq(d.d[1].thread, "app");
	cr_expect_eq(d.d[1].stage, RXP_ST_FREE);
	cr_expect_float_eq(d.d[1].delta, 110, 1e-6);
	cr_expect_eq(d.d[2].stage, RXP_ST_SGE_SETUP);
	/* idle is never a stage delta */
	for (size_t i = 0; i < d.n; i++)
		cr_expect_neq(d.d[i].stage, RXP_ST_IDLE);

	cr_expect_str_eq(d.thread, "rx");
	cr_expect_float_eq(d.busy_a, 120, 1e-6);
	cr_expect_float_eq(d.busy_b, 500, 1e-6);
	cr_expect(strstr(d.verdict, "hds adds 380 cycles/packet on the rx thread"), "%s", d.verdict);
	cr_expect(strstr(d.verdict, "buf_alloc +170, sge_setup +100, chain +60"), "%s", d.verdict);
	/* each run's figure is an accounting, named so: never "predicted" */
	cr_expect(strstr(d.verdict, "accounting (clock / busy cycles per packet): single 16.67 Mpps -> "
				    "hds 4.00 Mpps"), "%s", d.verdict);
	cr_expect(!strstr(d.verdict, "predicted"), "%s", d.verdict);

	/* buf_alloc at single's cost: rx 500 - 200 + 30 = 330 -> 2e9/330 */
	cr_assert(d.nw >= 1);
	cr_expect_eq(d.w[0].stage, RXP_ST_BUF_ALLOC);
	cr_expect_float_eq(d.w[0].mpps, 2e9 / 330 / 1e6, 1e-6);
	for (size_t i = 1; i < d.nw; i++)
		cr_expect(d.w[i - 1].mpps >= d.w[i].mpps);
	cr_expect_str_eq(d.whatif_run, "hds");
	cr_expect_str_eq(d.whatif_from, "single");
	cr_expect_float_eq(d.w[0].cpp_now, 200, 1e-6);
	cr_expect_float_eq(d.w[0].cpp_fast, 30, 1e-6);
	rxa_diff_free(&d);

	/* reversed: single saves; the what-ifs still ask what the slower
	 * (hds) gains at the faster one's cost, never the other way round */
	cr_assert_eq(rxa_diff_compute(rxa_point_run(b), rxa_point_run(a), a->knobs, "hds", "single", &d), 0);
	cr_expect(strstr(d.verdict, "single saves 380 cycles/packet"), "%s", d.verdict);
	cr_expect_str_eq(d.whatif_run, "hds");
	cr_expect_str_eq(d.whatif_from, "single");
	cr_expect_str_eq(d.whatif_thread, "rx");
	cr_assert(d.nw >= 1);
	cr_expect_eq(d.w[0].stage, RXP_ST_BUF_ALLOC);
	cr_expect_float_eq(d.w[0].mpps, 2e9 / 330 / 1e6, 1e-6);
	for (size_t i = 0; i < d.nw; i++)
		cr_expect_leq(d.w[i].mpps, 2e9 / 120 / 1e6 + 1e-9, "a what-if past single's ceiling");
	rxa_diff_free(&d);
	rxa_set_free(s);
}

/*
 * A run that lost packets saturated: clock / its busy cycles per packet is
 * the rate it received, so the diff gives it as that and calls nothing
 * predicted. Catches "predicted ceiling 1.69" for a lossy run's own rate.
 */
Test(diff, lossy_run_is_given_as_what_it_received)
{
	struct rxa_set *s = fixture();
	const struct rxa_point *a = find(s, "engine=dpdk,mode=single,frame=1064,queues=1,ring=8192");
	const struct rxa_point *b = find(s, "engine=dpdk,mode=hds,frame=1064,queues=1,ring=8192");
	cr_assert(a->top_run && b->top_run && b->top_run->loss > 0.5 && a->top_run->loss > 0.1);
	struct rxa_diff d;
	cr_assert_eq(rxa_diff_compute(a->top_run, b->top_run, b->knobs, "single", "hds", &d), 0);
	cr_expect(!strstr(d.verdict, "predicted"), "%s", d.verdict);
	cr_expect(strstr(d.verdict, "hds lost 83.0% (received 3.92 Mpps: its own rate, not a ceiling)"),
		  "%s", d.verdict);
	cr_expect(strstr(d.verdict, "single lost 29.2% (received 16.33 Mpps"), "%s", d.verdict);
	rxa_diff_free(&d);
	/* through the CLI, markdown and JSON */
	char dir[64], pa[128], pb[128], cmd[600], *out = NULL;
	cr_assert(tu_tmpdir(dir, sizeof(dir)));
	snprintf(pa, sizeof(pa), "%s/single.json", dir);
	snprintf(pb, sizeof(pb), "%s/hds.json", dir);
	cr_assert_eq(rxr_result_write(a->top_run, pa), 0);
	cr_assert_eq(rxr_result_write(b->top_run, pb), 0);
	snprintf(cmd, sizeof(cmd), "%s diff %s %s", RXRAY_BIN, pa, pb);
	cr_assert_eq(tu_run(cmd, &out), 0, "%s", out);
	cr_expect(out && !strstr(out, "predicted"), "%s", out);
	cr_expect(out && strstr(out, "hds.json lost 83.0% (received 3.92 Mpps"), "%s", out);
	free(out);
	snprintf(cmd, sizeof(cmd), "%s diff %s %s --format json", RXRAY_BIN, pa, pb);
	cr_assert_eq(tu_run(cmd, &out), 0, "%s", out);
	json_t *j = json_loads(out, 0, NULL);
	cr_assert(j, "%s", out);
	json_t *p = json_array_get(json_object_get(j, "pairs"), 0);
	cr_expect(json_is_true(json_object_get(p, "lossy_b")));
	cr_expect(!json_object_get(p, "predicted_b"), "a lossy run's rate named predicted");
	cr_expect(out && !strstr(out, "predicted"), "%s", out);
	json_decref(j);
	free(out);
	tu_rmrf(dir);
	rxa_set_free(s);
}

Test(diff, whatif_moves_the_bottleneck)
{
	/* verbs hds (rx 100, app 90) vs dpdk hds (rx 500, app 220): fixing rx in
	 * dpdk leaves the app thread (220) as the new bottleneck */
	struct rxa_set *s = fixture();
	const struct rxa_point *a = find(s, "engine=verbs,mode=hds,frame=1064,queues=1,ring=8192");
	const struct rxa_point *b = find(s, "engine=dpdk,mode=hds,frame=1064,queues=1,ring=8192");
	struct rxa_diff d;
	cr_assert_eq(rxa_diff_compute(rxa_point_run(a), rxa_point_run(b), b->knobs, "verbs", "dpdk", &d), 0);
	for (size_t i = 0; i < d.nw; i++)
		cr_expect(d.w[i].mpps <= 2e9 / 220 / 1e6 + 1e-9, "%s %f", rxp_stage_name(d.w[i].stage), d.w[i].mpps);
	rxa_diff_free(&d);
	rxa_set_free(s);
}

Test(diff, cli)
{
	char cmd[512], *out = NULL;
	snprintf(cmd, sizeof(cmd), "%s diff %s/sweep mode=single mode=hds", RXRAY_BIN, FIXTURES);
	cr_assert_eq(tu_run(cmd, &out), 0, "%s", out);
	/* one section per pair: 2 engines x 4 frames */
	int n = 0;
	for (const char *p = out; (p = strstr(p, "## single vs hds")); p++)
		n++;
	cr_expect_eq(n, 8, "%s", out);
	cr_expect(strstr(out, "**hds adds 380 cycles/packet on the rx thread vs single (120 -> 500)"), "%s", out);
	free(out);

	snprintf(cmd, sizeof(cmd), "%s diff %s/sweep engine=verbs engine=dpdk --format json", RXRAY_BIN, FIXTURES);
	cr_assert_eq(tu_run(cmd, &out), 0);
	json_t *j = json_loads(out, 0, NULL);
	cr_assert(j, "%s", out);
	cr_expect_eq(json_array_size(json_object_get(j, "pairs")), 8);
	json_decref(j);
	free(out);

	snprintf(cmd, sizeof(cmd), "%s diff %s/sweep mode=single mode=nope", RXRAY_BIN, FIXTURES);
	cr_expect_eq(tu_run(cmd, &out), 2);
	cr_expect(strstr(out, "no measured point matches mode=nope"), "%s", out);
	free(out);
	snprintf(cmd, sizeof(cmd), "%s diff %s/sweep mode single", RXRAY_BIN, FIXTURES);
	cr_expect_eq(tu_run(cmd, &out), 2);
	free(out);
}

Test(diff, two_run_files)
{
	char cmd[1024], *out = NULL;
	snprintf(cmd, sizeof(cmd), "%s diff %s/run_dpdk_single.json %s/run_dpdk_hds.json", RXRAY_BIN,
		 FIXTURES, FIXTURES);
	cr_assert_eq(tu_run(cmd, &out), 0, "%s", out);
	cr_expect(strstr(out, "## run_dpdk_single.json vs run_dpdk_hds.json"), "%s", out);
	cr_expect(strstr(out, "**run_dpdk_hds.json adds "), "%s", out);
	cr_expect(strstr(out, "| rx | buf_alloc |"), "%s", out);
	free(out);
	/* a sweep holds many points: the two-file form refuses it, naming why */
	snprintf(cmd, sizeof(cmd), "%s diff %s/sweep %s/run_dpdk_hds.json", RXRAY_BIN, FIXTURES,
		 FIXTURES);
	cr_expect_eq(tu_run(cmd, &out), 2);
	cr_expect(strstr(out, "measured points; name them"), "%s", out);
	free(out);
	snprintf(cmd, sizeof(cmd), "%s diff /nonexistent.json %s/run_dpdk_hds.json", RXRAY_BIN,
		 FIXTURES);
	cr_expect_eq(tu_run(cmd, &out), 2);
	cr_expect(strstr(out, "/nonexistent.json"), "%s", out);
	free(out);
}

/* Two real runs, one of them oversubscribed (disturbed by construction):
 * diff's markdown and JSON and flame --diff carry the mark, naming which. */
Test(diff, disturbed_inputs_are_marked_in_diff_and_flame)
{
	char dir[128], cmd[1024], *out = NULL;
	cr_assert(tu_tmpdir(dir, sizeof(dir)));
	snprintf(cmd, sizeof(cmd),
		 "%s run --rate 200k --ring 1024 --seconds 100ms --app inline -q -o %s/clean.json && "
		 "%s run --rate 200k --ring 1024 --seconds 100ms --app inline --cores 0 "
		 "--allow-oversubscribe -q -o %s/shared.json",
		 RXRAY_BIN, dir, RXRAY_BIN, dir);
	int rc = tu_run(cmd, &out);
	if (rc && out && strstr(out, "engine"))
		cr_skip_test("no run engine in this build: %s", out);
	cr_assert_eq(rc, 0, "%s", out);
	free(out);
	/* the first run may be disturbed too on a busy host: its mark follows
	 * its own validity record */
	snprintf(cmd, sizeof(cmd), "%s/clean.json", dir);
	json_t *cj = json_load_file(cmd, 0, NULL);
	cr_assert(cj);
	bool a_dist = json_is_true(json_object_get(json_object_get(cj, "validity"), "disturbed"));
	json_decref(cj);
	snprintf(cmd, sizeof(cmd), "%s diff %s/clean.json %s/shared.json", RXRAY_BIN, dir, dir);
	cr_assert_eq(tu_run(cmd, &out), 0, "%s", out);
	cr_expect(strstr(out, "> MARKED: ") && strstr(out, "shared.json oversubscribed"), "%s", out);
	cr_expect(!strstr(out, "clean.json oversubscribed"), "%s", out);
	cr_expect_eq(strstr(out, "clean.json disturbed") != NULL, a_dist, "%s", out);
	free(out);
	snprintf(cmd, sizeof(cmd), "%s diff %s/clean.json %s/shared.json --format json", RXRAY_BIN,
		 dir, dir);
	cr_assert_eq(tu_run(cmd, &out), 0, "%s", out);
	json_t *j = json_loads(out, 0, NULL);
	cr_assert(j, "%s", out);
	json_t *m = json_object_get(json_array_get(json_object_get(j, "pairs"), 0), "marks");
	if (a_dist)
		cr_expect_str_eq(json_string_value(json_object_get(m, "a")), "disturbed");
	else
		cr_expect(json_is_null(json_object_get(m, "a")));
	cr_expect_str_eq(json_string_value(json_object_get(m, "b")), "oversubscribed");
	json_decref(j);
	free(out);
	snprintf(cmd, sizeof(cmd), "%s flame --diff %s/clean.json %s/shared.json -o %s/d.svg",
		 RXRAY_BIN, dir, dir, dir);
	cr_assert_eq(tu_run(cmd, &out), 0, "%s", out);
	free(out);
	snprintf(cmd, sizeof(cmd), "%s/d.svg", dir);
	char *svg = tu_slurp(cmd);
	cr_assert(svg);
	cr_expect(strstr(svg, "MARKED") && strstr(svg, "oversubscribed"), "no mark in the SVG");
	free(svg);
}
