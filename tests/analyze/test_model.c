/* SPDX-License-Identifier: MIT */
/*
 * The cost model on hand-built sweeps: light-load prediction from lap
 * sums, never from the NDR trial; load-dependent stages; what-if
 * arithmetic, bad what-if input and generator-limited baselines through
 * the CLI.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>

#include "rxray/analyze.h"
#include "rxray/model.h"
#include "testutil.h"

#define HZ 3.0e9


/*
 * A run: nic thread (never the bottleneck), rx thread with cqe_poll
 * a=300 b=20 (laps of n packets), buf_alloc per packet 50 x load_factor
 * (lapped per burst too, a=0), and a handoff of fixed batches of 64
 * (100 cycles per batch). burst 64.
 */
static struct rxr_result *mk_run(double offered_mpps, double loss, double n, double load_factor)
{
	struct rxr_result *r = NULL;
	rxr_result_open(&r);
	cr_assert(r);
	r->clock.hz = HZ;
	snprintf(r->clock.source, sizeof(r->clock.source), "tsc");
	r->offered_mpps = offered_mpps;
	r->rx_mpps = offered_mpps * (1 - loss);
	r->loss = loss;
	r->seconds = 1;
	r->c.offered = (uint64_t)(offered_mpps * 1e6);
	r->c.received = (uint64_t)(r->rx_mpps * 1e6);
	r->c.out_of_buffer = r->c.offered - r->c.received;
	json_object_set_new(r->config, "burst", json_integer(64));
	json_object_set_new(r->config, "batch", json_integer(64));
	json_object_set_new(r->config, "engine", json_string("dpdk"));
	r->nthreads = 2;
	r->threads = calloc(2, sizeof(*r->threads));
	struct rxr_thread_result *nic = &r->threads[0], *rx = &r->threads[1];
	snprintf(nic->role, sizeof(nic->role), "nic");
	snprintf(rx->role, sizeof(rx->role), "rx");
	double pk = 64000; /* packets per run */
	nic->packets = (uint64_t)pk;
	tu_laps_add(&nic->st[RXP_ST_HDR_WRITE], pk / n, n, 0, 9000);
	nic->stage_mask = 1u << RXP_ST_HDR_WRITE;
	nic->busy_cycles = nic->st[RXP_ST_HDR_WRITE].cycles;
	rx->packets = (uint64_t)pk;
	tu_laps_add(&rx->st[RXP_ST_CQE_POLL], pk / n, n, 300, 20);
	tu_laps_add(&rx->st[RXP_ST_BUF_ALLOC], pk / n, n, 0, 50 * load_factor);
	tu_laps_add(&rx->st[RXP_ST_HANDOFF], pk / 64, 64, 0, 100.0 / 64);
	rx->stage_mask = 1u << RXP_ST_CQE_POLL | 1u << RXP_ST_BUF_ALLOC | 1u << RXP_ST_HANDOFF;
	for (int s = 0; s < RXP_ST_COUNT; s++)
		rx->busy_cycles += rx->st[s].cycles;
	return r;
}

/* Append r as a trial line of point "k" (marked calibration if asked). */
static void put_trial(FILE *f, struct rxr_result *r, int n, bool calib)
{
	json_t *doc = rxr_result_to_json(r);
	cr_assert(doc);
	json_t *tr = json_pack("{s:s,s:i,s:f,s:f,s:s}", "key", "engine=dpdk", "n", n, "target_pps",
			       r->offered_mpps * 1e6, "seconds", 1.0, "status", "ok");
	if (calib)
		json_object_set_new(tr, "purpose", json_string("calibration"));
	json_object_set_new(doc, "trial", tr);
	char *s = json_dumps(doc, JSON_COMPACT);
	fprintf(f, "%s\n", s);
	free(s);
	json_decref(doc);
}

static void put_summary(FILE *f, struct rxr_result *ndr, double ndr_mpps)
{
	json_t *doc = json_pack("{s:s,s:s,s:{s:s},s:s,s:f,s:f,s:i,s:o,s:o}", "schema", "rxray.point/1",
				"key", "engine=dpdk", "knobs", "engine", "dpdk", "status", "ok",
				"ndr_mpps", ndr_mpps, "pdr_mpps", ndr_mpps, "trials", 3, "ndr_run",
				rxr_result_to_json(ndr), "top_run", rxr_result_to_json(ndr));
	char *s = json_dumps(doc, JSON_COMPACT);
	fprintf(f, "%s\n", s);
	free(s);
	json_decref(doc);
}

/*
 * The expected prediction: cqe_poll 300/64 + 20, buf_alloc 50, handoff
 * 100/64 (fixed batches: cost per packet as measured), x queues 1.
 */
static double expected_mpps(void)
{
	double cpp = 300.0 / 64 + 20 + 50 + 100.0 / 64;
	return HZ / cpp / 1e6;
}

/*
 * A sweep of point "k": a light trial (laps of 2), the n trials up[] in
 * that order, the NDR trial nd (at ndr Mpps), and a calibration trial
 * (coalesced), then the summary. Frees nd and up[].
 */
static struct rxa_set *mk_sweep_up(char *dir, size_t dn, struct rxr_result *nd, double ndr,
				   struct rxr_result **up, size_t n)
{
	char path[600];
	cr_assert(tu_tmpdir(dir, dn));
	snprintf(path, sizeof(path), "%s/results.jsonl", dir);
	FILE *f = fopen(path, "w");
	cr_assert(f);
	struct rxr_result *l1 = mk_run(1.0, 0, 2, 1), *cal = mk_run(2.5, 0, 64, 1);
	json_object_set_new(cal->config, "coalesce", json_integer(64));
	put_trial(f, l1, 1, false);
	for (size_t i = 0; i < n; i++) {
		put_trial(f, up[i], 2 + (int)i, false);
		rxr_result_free(up[i]);
	}
	put_trial(f, nd, 20, false);
	put_trial(f, cal, 21, true);
	put_summary(f, nd, ndr);
	fclose(f);
	rxr_result_free(l1);
	rxr_result_free(cal);
	rxr_result_free(nd);
	char err[RXA_ERR_LEN] = "";
	struct rxa_set *s = NULL;
	cr_assert_eq(rxa_set_load(dir, &s, err, sizeof(err)), 0, "%s", err);
	return s;
}

/* A sweep: two light trials (one calibration, coalesced), one at 0.9 x
 * NDR, and the NDR trial whose buf_alloc costs `ndr_factor` x more. */
static struct rxa_set *mk_sweep(char *dir, size_t dn, double ndr_factor, double ndr_cqe_a)
{
	const double ndr = 10.0;
	struct rxr_result *hi = mk_run(9.0, 0, 40, 1); /* passing, above NDR/2: not used */
	struct rxr_result *nd = mk_run(ndr, 0, 48, ndr_factor);
	/* doctoring the NDR trial's cqe_poll must not move the prediction */
	nd->threads[1].st[RXP_ST_CQE_POLL].laps.sy *= ndr_cqe_a;
	nd->threads[1].st[RXP_ST_CQE_POLL].laps.sxy *= ndr_cqe_a;
	struct rxr_result *lost = mk_run(12.0, 0.1, 64, 3);  /* failing: buf_alloc x3 */
	struct rxr_result *lost2 = mk_run(15.0, 0.3, 64, 9); /* failing further up */
	/* the hi trial's fit is skewed: if it were pooled the prediction moves */
	hi->threads[1].st[RXP_ST_CQE_POLL].laps.sy *= 3;
	hi->threads[1].st[RXP_ST_CQE_POLL].laps.sxy *= 3;
	struct rxr_result *up[] = {lost2, lost, hi};
	return mk_sweep_up(dir, dn, nd, ndr, up, 3);
}

Test(model, light_load_prediction_from_pooled_laps)
{
	char dir[64];
	struct rxa_set *s = mk_sweep(dir, sizeof(dir), 1, 1);
	cr_assert_eq(s->n, 1);
	const struct rxa_point *p = &s->pts[0];
	/* light (1.0), ndr (10), hi (9.0) and calibration (2.5) pass; lost does not */
	cr_assert_eq(p->nlight, 4);
	cr_assert_eq(p->trials, 3, "calibration counted as a search trial: %d", p->trials);
	struct rxa_point_model pm;
	rxa_point_model_compute(p, 0, &pm);
	cr_assert_eq(pm.m.nruns, 2, "pooled %zu runs (want the light and calibration trials)",
		     pm.m.nruns);
	cr_assert_eq(pm.m.ncoalesced, 1);
	cr_assert_float_eq(pm.m.predicted_mpps, expected_mpps(), 1e-6 * expected_mpps(),
			   "predicted %f want %f", pm.m.predicted_mpps, expected_mpps());
	cr_assert_str_eq(pm.m.th[pm.m.bottleneck].label, "rx");
	cr_assert_float_eq(pm.ratio, 10.0 / expected_mpps(), 1e-6);
	/* the NDR trial is not dearer; the lossy trial asked for the least
	 * above it (12, not 15) is, in buf_alloc, x3 */
	cr_assert_eq(pm.nnamed, 1, "named %zu", pm.nnamed);
	cr_assert_eq(pm.named[0].stage, RXP_ST_BUF_ALLOC, "named %s",
		     rxp_stage_name((enum rxp_stage)pm.named[0].stage));
	cr_assert_str_eq(pm.named[0].thread, "rx");
	cr_assert(pm.named[0].above);
	cr_assert_float_eq(pm.named[0].offered_mpps, 12.0, 1e-9);
	cr_assert_float_eq(pm.named[0].factor, 3.0, 1e-6);
	char cell[96];
	rxa_loaddep_fmt(&pm.named[0], "", cell, sizeof(cell));
	cr_assert_str_eq(cell, "rx buf_alloc x3.00 above NDR (12.00 Mpps)");
	/* the model at the NDR trial's laps (48 packets; handoff's fixed 64):
	 * not at B (39.34), nor the trial's measured costs */
	const double nb = 64000.0 / (double)(uint64_t)(64000.0 / 48); /* whole laps */
	const double at48 = HZ / (300.0 / nb + 20 + 50 + 100.0 / 64) / 1e6;
	cr_assert_float_eq(pm.ndr_laps_mpps, at48, 1e-9 * at48, "at the NDR's laps %f want %f",
			   pm.ndr_laps_mpps, at48);
	cr_assert_float_eq(pm.ndr_laps, nb, 1e-9);
	cr_assert_str_eq(pm.ndr_laps_thread, "rx");
	rxa_ndr_laps_fmt(&pm, cell, sizeof(cell));
	cr_assert_str_eq(cell, "38.55 (rx laps of 48.0)");
	json_t *j = rxa_point_model_json(&pm);
	cr_assert_float_eq(
	    json_number_value(json_object_get(json_object_get(j, "at_ndr_laps"), "predicted_mpps")),
	    at48, 1e-9 * at48);
	json_decref(j);
	/* a larger fraction pools the 0.9 x NDR trial, whose fit is skewed */
	struct rxa_point_model pm2;
	rxa_point_model_compute(p, 0.95, &pm2);
	cr_assert_eq(pm2.m.nruns, 3);
	cr_assert_gt(fabs(pm2.m.predicted_mpps - pm.m.predicted_mpps), 0.01);
	rxa_set_free(s);
	tu_rmrf(dir);
}

Test(model, the_ndr_trial_never_changes_the_prediction)
{
	char d1[64], d2[64];
	struct rxa_set *a = mk_sweep(d1, sizeof(d1), 1, 1);
	/* same sweep, the NDR trial (and the summary's copy) doctored: its
	 * cqe_poll cycles x 7 and buf_alloc x 4 */
	struct rxa_set *b = mk_sweep(d2, sizeof(d2), 4, 7);
	struct rxa_point_model pa, pb;
	rxa_point_model_compute(&a->pts[0], 0, &pa);
	rxa_point_model_compute(&b->pts[0], 0, &pb);
	cr_assert_float_eq(pa.m.predicted_mpps, pb.m.predicted_mpps, 1e-12,
			   "NDR trial moved the prediction: %f -> %f", pa.m.predicted_mpps,
			   pb.m.predicted_mpps);
	/* ... but it is what names the load-dependent stage */
	cr_assert_geq(pb.nnamed, 1);
	cr_assert_eq(pb.named[0].stage, RXP_ST_BUF_ALLOC, "named %s",
		     rxp_stage_name((enum rxp_stage)pb.named[0].stage));
	cr_assert_float_eq(pb.named[0].factor, 4.0, 1e-6);
	cr_assert_str_eq(pb.named[0].thread, "rx");
	/* named once, from the NDR trial; the trial above says it too */
	cr_assert_eq(pb.nnamed, 1, "named %zu", pb.nnamed);
	cr_assert(!pb.named[0].above);
	/* the model at the NDR's laps is the model's, not the doctored costs */
	cr_assert_float_eq(pa.ndr_laps_mpps, pb.ndr_laps_mpps, 1e-12);
	rxa_set_free(a);
	rxa_set_free(b);
	tu_rmrf(d1);
	tu_rmrf(d2);
}

/*
 * A stage cheaper under load is named apart, from the NDR trial only: its
 * buf_alloc at half the model's cost there (25 against 50 per packet)
 * reads x0.50 in "cheaper", not in "dearer", where the lossy trial above
 * still names it x3. Catches a ratio above 1 left without its reason, a
 * saving named as load-dependent (or a sign flipped: the x4 sweep must
 * name nothing cheaper), and a trial above the NDR used for it.
 */
Test(model, a_stage_cheaper_under_load_is_named_apart)
{
	char d1[64], d2[64], d3[64];
	struct rxa_set *a = mk_sweep(d1, sizeof(d1), 0.5, 1);
	struct rxa_set *b = mk_sweep(d2, sizeof(d2), 1, 1);
	struct rxa_set *c = mk_sweep(d3, sizeof(d3), 4, 1);
	struct rxa_point_model pa, pb, pc;
	rxa_point_model_compute(&a->pts[0], 0, &pa);
	rxa_point_model_compute(&b->pts[0], 0, &pb);
	rxa_point_model_compute(&c->pts[0], 0, &pc);
	cr_assert_eq(pa.ncheaper, 1, "cheaper %zu", pa.ncheaper);
	cr_assert_eq(pa.cheaper[0].stage, RXP_ST_BUF_ALLOC, "cheaper %s",
		     rxp_stage_name((enum rxp_stage)pa.cheaper[0].stage));
	cr_assert_str_eq(pa.cheaper[0].thread, "rx");
	cr_assert_float_eq(pa.cheaper[0].factor, 0.5, 1e-6);
	cr_assert(!pa.cheaper[0].above);
	/* dearer: only the trial above names buf_alloc (x3 there) */
	cr_assert_eq(pa.nnamed, 1, "named %zu", pa.nnamed);
	cr_assert(pa.named[0].above);
	cr_assert_float_eq(pa.named[0].factor, 3.0, 1e-6);
	cr_assert_eq(pb.ncheaper, 0, "as the model: nothing cheaper (%zu)", pb.ncheaper);
	cr_assert_eq(pc.ncheaper, 0, "dearer x4: nothing cheaper (%zu)", pc.ncheaper);
	json_t *j = rxa_point_model_json(&pa);
	json_t *e = json_array_get(json_object_get(j, "cheaper_under_load"), 0);
	cr_assert_str_eq(json_string_value(json_object_get(e, "stage")), "buf_alloc");
	cr_assert_float_eq(json_number_value(json_object_get(e, "factor")), 0.5, 1e-6);
	cr_assert_eq(json_array_size(json_object_get(j, "load_dependent")), 1);
	json_decref(j);
	/* the cost-model table's cell */
	struct rxa_table *t = NULL;
	cr_assert_eq(rxa_model_table(a, &pa, 1, &t), 0);
	char *md = NULL;
	size_t mdn = 0;
	FILE *m = open_memstream(&md, &mdn);
	cr_assert(m);
	rxa_table_write_md(t, m);
	fclose(m);
	cr_assert(strstr(md, "| rx buf_alloc x0.50 |"), "%s", md);
	free(md);
	rxa_table_free(t);
	rxa_set_free(a);
	rxa_set_free(b);
	rxa_set_free(c);
	tu_rmrf(d1);
	tu_rmrf(d2);
	tu_rmrf(d3);
}

/*
 * A rate asked for again counts once, and the first trial above the NDR
 * is exempt from the prediction bound only where it is the least asked
 * for. (a) 12 Mpps four times (lossy, no dearer stage), then 15 (buf_alloc
 * x3): names buf_alloc from 15; a loader that counted each 12 as one of
 * the four never reads 15. (b) 12 passes, 45 (above the prediction, 39.34)
 * loses with handoff x5: nothing named; a model that exempts whatever
 * comes first names handoff.
 */
Test(model, repeated_rates_and_a_passing_least_above)
{
	char d1[64], d2[64];
	struct rxr_result *a[5] = {mk_run(12.0, 0.01, 8, 1), mk_run(12.0, 0.02, 8, 1),
				   mk_run(12.0, 0.01, 8, 1), mk_run(12.0, 0.03, 8, 1),
				   mk_run(15.0, 0.1, 64, 3)};
	struct rxa_set *sa = mk_sweep_up(d1, sizeof(d1), mk_run(10.0, 0, 8, 1), 10.0, a, 5);
	const struct rxa_point *p = &sa->pts[0];
	cr_assert_eq(p->nabove, 2, "kept %zu (one per rate asked for)", p->nabove);
	cr_assert(p->above_least);
	cr_expect_float_eq(p->above_runs[0]->loss, 0.01, 1e-12, "not the first at 12 to lose");
	struct rxa_point_model pm;
	rxa_point_model_compute(p, 0, &pm);
	cr_assert_eq(pm.nnamed, 1, "named %zu", pm.nnamed);
	cr_assert_eq(pm.named[0].stage, RXP_ST_BUF_ALLOC);
	cr_assert_float_eq(pm.named[0].offered_mpps, 15.0, 1e-9);
	struct rxr_result *b[2] = {mk_run(12.0, 0, 8, 1), mk_run(45.0, 0.3, 64, 1)};
	b[1]->threads[1].st[RXP_ST_HANDOFF].cycles *= 5;
	b[1]->threads[1].st[RXP_ST_HANDOFF].laps.sy *= 5;
	b[1]->threads[1].st[RXP_ST_HANDOFF].laps.sxy *= 5;
	struct rxa_set *sb = mk_sweep_up(d2, sizeof(d2), mk_run(10.0, 0, 8, 1), 10.0, b, 2);
	const struct rxa_point *q = &sb->pts[0];
	cr_assert_eq(q->nabove, 1, "kept %zu", q->nabove);
	cr_assert(!q->above_least, "the least asked for above the NDR passed");
	rxa_point_model_compute(q, 0, &pm);
	cr_assert_gt(45.0, pm.m.predicted_mpps);
	cr_assert_eq(pm.nnamed, 0, "named %zu from a trial above the prediction", pm.nnamed);
	rxa_set_free(sa);
	rxa_set_free(sb);
	tu_rmrf(d1);
	tu_rmrf(d2);
}

/*
 * The lossy trials above the NDR, up to RXA_POINT_ABOVE_MAX of the least,
 * in order of the rate asked for (written out of order here): the least
 * above (12) laps like the NDR trial and is no dearer, the next (15) has
 * buf_alloc x3, one at 45 (above the prediction, 39.34) handoff x5, and
 * those at 50 and 60 are past the four kept. Names buf_alloc from the 15
 * Mpps trial and not handoff: catches a loader that keeps only the least
 * above (nothing named), one that keeps the wrong four or out of order,
 * and a model that names what a trial above its own prediction says.
 */
Test(model, dearer_stages_from_every_lossy_trial_up_to_the_prediction)
{
	char dir[64];
	struct rxr_result *up[5] = {mk_run(60.0, 0.5, 64, 1), mk_run(15.0, 0.1, 64, 3),
				    mk_run(50.0, 0.4, 64, 1), mk_run(12.0, 0.01, 8, 1),
				    mk_run(45.0, 0.3, 64, 1)};
	up[4]->threads[1].st[RXP_ST_HANDOFF].cycles *= 5;
	up[4]->threads[1].st[RXP_ST_HANDOFF].laps.sy *= 5;
	up[4]->threads[1].st[RXP_ST_HANDOFF].laps.sxy *= 5;
	up[0]->threads[1].st[RXP_ST_CQE_POLL].cycles *= 9; /* past the four kept */
	struct rxa_set *s = mk_sweep_up(dir, sizeof(dir), mk_run(10.0, 0, 8, 1), 10.0, up, 5);
	const struct rxa_point *p = &s->pts[0];
	cr_assert_eq(p->nabove, RXA_POINT_ABOVE_MAX, "kept %zu", p->nabove);
	const double want[] = {12, 15, 45, 50};
	for (size_t i = 0; i < p->nabove; i++)
		cr_expect_float_eq(p->above_runs[i]->offered_mpps, want[i], 1e-9,
				   "above_runs[%zu] %f want %f", i, p->above_runs[i]->offered_mpps,
				   want[i]);
	struct rxa_point_model pm;
	rxa_point_model_compute(p, 0, &pm);
	cr_assert_float_eq(pm.m.predicted_mpps, expected_mpps(), 1e-6 * expected_mpps());
	cr_assert_lt(45.0, pm.m.predicted_mpps * 1.2); /* 45 is above it, not far */
	cr_assert_gt(45.0, pm.m.predicted_mpps);
	cr_assert_eq(pm.nnamed, 1, "named %zu", pm.nnamed);
	cr_assert_eq(pm.named[0].stage, RXP_ST_BUF_ALLOC, "named %s",
		     rxp_stage_name((enum rxp_stage)pm.named[0].stage));
	cr_assert(pm.named[0].above);
	cr_assert_float_eq(pm.named[0].offered_mpps, 15.0, 1e-9);
	cr_assert_float_eq(pm.named[0].factor, 3.0, 1e-6);
	rxa_set_free(s);
	tu_rmrf(dir);
}

/*
 * Calibrated at the NDR: every stage at its cost per packet in the NDR
 * trial (buf_alloc 5.4 x 50 there; cqe_poll at that trial's laps of 48,
 * not extrapolated to 64), and a what-if adds to that. Catches a calibration
 * that keeps the light-load cost of a stage dearer under load, one that
 * extrapolates the trial's costs to full bursts, one applied to a point
 * whose NDR the generator limited or whose NDR trial the calibration
 * does not give back (neither saturated the receiver), and a what-if
 * change scaled by the calibration.
 */
Test(model, at_ndr_calibration)
{
	char dir[64];
	/* buf_alloc at the NDR such that the rx thread costs 300 cycles a
	 * packet: 10 Mpps at 3 GHz, the NDR (the trial saturated it) */
	const double f = (300 - (300.0 / 48 + 20 + 100.0 / 64)) / 50;
	struct rxa_set *s = mk_sweep(dir, sizeof(dir), f, 1);
	struct rxa_point *p = &s->pts[0];
	struct rxa_point_model pm;
	rxa_point_model_compute(p, 0, &pm);
	struct rxa_model at;
	cr_assert_eq(rxa_point_model_at_ndr(p, &pm, &at), 0);
	double cpp = 300.0 / 48 + 20 + f * 50 + 100.0 / 64;
	cr_assert_float_eq(at.predicted_mpps, HZ / cpp / 1e6, 1e-6 * HZ / cpp / 1e6,
			   "at NDR %f want %f", at.predicted_mpps, HZ / cpp / 1e6);
	cr_assert(strstr(at.basis, "NDR trial (10.00 Mpps)"), "%s", at.basis);
	/* the light model is untouched */
	cr_assert_float_eq(pm.m.predicted_mpps, expected_mpps(), 1e-6 * expected_mpps());
	char err[256] = "";
	struct rxa_whatif_change c;
	cr_assert_eq(rxa_whatif_parse("buf_alloc=+150", &c, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(rxa_model_apply(&at, &c, 1, err, sizeof(err)), 0, "%s", err);
	cr_assert_float_eq(at.predicted_mpps, HZ / (cpp + 150) / 1e6, 1e-6 * HZ / cpp / 1e6,
			   "after %f want %f", at.predicted_mpps, HZ / (cpp + 150) / 1e6);
	/* The what-if follows the load: the rx thread's cost per packet is
	 * linear in the rate between light load (76.25 at the light trials'
	 * mean rate, 1.75 Mpps) and the NDR trial (300 at 10), and +150 lands
	 * where the rate predicts itself: r (A + s r) = H with s = 223.75 /
	 * 8.25, A = 76.25 - 1.75 s + 150, H = 3000 cycles per us. Carrying
	 * the NDR trial's costs to the slower rate gave 6.67; light load's
	 * costs alone 13.1. */
	const double sl = (cpp - 76.25) / (10 - 1.75), A = 76.25 - 1.75 * sl + 150,
		     want = (-A + sqrt(A * A + 4 * sl * (HZ / 1e6))) / (2 * sl);
	struct rxa_whatif_point w;
	cr_assert_eq(rxa_whatif_point(p, 0, &c, 1, &w, err, sizeof(err)), 0, "%s", err);
	cr_assert_float_eq(w.ndr_before.predicted_mpps, HZ / cpp / 1e6, 1e-6);
	cr_assert_float_eq(w.ndr_after.predicted_mpps, want, 1e-6 * want, "after %f want %f",
			   w.ndr_after.predicted_mpps, want);
	cr_assert(strstr(w.ndr_after.basis, "costs at 7.73 Mpps"), "%s", w.ndr_after.basis);
	cr_assert_float_eq(w.after.predicted_mpps, HZ / (76.25 + 150) / 1e6, 1e-6);
	/* a change that speeds the receiver up keeps the NDR trial's costs
	 * (nothing measured above the NDR to move them toward) */
	struct rxa_whatif_change up;
	cr_assert_eq(rxa_whatif_parse("buf_alloc=-40", &up, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(rxa_whatif_point(p, 0, &up, 1, &w, err, sizeof(err)), 0, "%s", err);
	cr_assert_float_eq(w.ndr_after.predicted_mpps, HZ / (cpp - 40) / 1e6, 1e-6);
	/* rxray whatif prints it beside the light model: 10.00 -> 7.73 */
	char cmd[600], *out = NULL;
	snprintf(cmd, sizeof(cmd), "%s whatif -f csv %s buf_alloc=+150", RXRAY_BIN, dir);
	cr_assert_eq(tu_run(cmd, &out), 0, "%s", out);
	cr_assert(strstr(out, ",10.00,7.73,-22.7%"), "no calibrated columns: %s", out);
	free(out);
	/* bad changes exit 2 from the analyzer's error value, one line each:
	 * a stage no point laps (-ENOENT), a cost below zero (-EINVAL) */
	static const char *const bad[][2] = {{"chain=+5", "chain: no receive thread laps"},
					     {"buf_alloc=-100000", "below zero"}};
	for (size_t i = 0; i < 2; i++) {
		snprintf(cmd, sizeof(cmd), "%s whatif %s %s", RXRAY_BIN, dir, bad[i][0]);
		cr_assert_eq(tu_run(cmd, &out), 2, "%s: %s", bad[i][0], out);
		cr_assert(strstr(out, bad[i][1]) && strchr(out, '\n') == out + strlen(out) - 1,
			  "%s: %s", bad[i][0], out);
		free(out);
	}
	/* generator-limited or oversubscribed: no calibration, the light model */
	p->generator_limited = true;
	cr_assert_eq(rxa_point_model_at_ndr(p, &pm, &at), -ENOENT);
	cr_assert_float_eq(at.predicted_mpps, pm.m.predicted_mpps, 1e-12);
	p->generator_limited = false;
	p->oversubscribed = true;
	cr_assert_eq(rxa_point_model_at_ndr(p, &pm, &at), -ENOENT);
	rxa_set_free(s);
	tu_rmrf(dir);
	/* an NDR trial that did not saturate the rx thread (buf_alloc x4:
	 * 13.2 Mpps of work at an NDR of 10): loss above came from
	 * elsewhere, so its costs are no ceiling's */
	s = mk_sweep(dir, sizeof(dir), 4, 1);
	rxa_point_model_compute(&s->pts[0], 0, &pm);
	cr_assert_eq(rxa_point_model_at_ndr(&s->pts[0], &pm, &at), -ERANGE);
	cr_assert_float_eq(at.predicted_mpps, pm.m.predicted_mpps, 1e-12);
	rxa_set_free(s);
	tu_rmrf(dir);
}

/* The cost-model table shows the NDR as every table does, as its search
 * interval, not as the bare lower bound. */
Test(model, the_table_shows_the_ndr_interval)
{
	char dir[64];
	struct rxa_set *s = mk_sweep(dir, sizeof(dir), 1, 1);
	s->pts[0].ndr_upper_mpps = 10.5;
	s->pts[0].has_interval = true;
	struct rxa_point_model pm;
	rxa_point_model_compute(&s->pts[0], 0, &pm);
	struct rxa_table *t = NULL;
	cr_assert_eq(rxa_model_table(s, &pm, 1, &t), 0);
	char *buf = NULL;
	size_t len = 0;
	FILE *o = open_memstream(&buf, &len);
	cr_assert_eq(rxa_table_write_md(t, o), 0);
	fclose(o);
	cr_expect(strstr(buf, "| [10.00, 10.50] |"), "%s", buf);
	free(buf);
	rxa_table_free(t);
	rxa_set_free(s);
	tu_rmrf(dir);
}

Test(model, headroom_of_one_run)
{
	struct rxr_result *r = mk_run(1.0, 0, 2, 1);
	/* one run alone: laps of 2 only, but the fit of a + b x n is exact */
	r->threads[1].st[RXP_ST_CQE_POLL] = (struct rxr_stage_sum){0};
	tu_laps_add(&r->threads[1].st[RXP_ST_CQE_POLL], 16000, 1, 300, 20);
	tu_laps_add(&r->threads[1].st[RXP_ST_CQE_POLL], 16000, 3, 300, 20);
	double pred, head;
	rxa_run_headroom(r, NULL, &pred, &head);
	cr_assert_float_eq(pred, expected_mpps(), 1e-6 * expected_mpps());
	cr_assert_float_eq(head, expected_mpps() / 1.0, 1e-6 * expected_mpps());
	rxr_result_free(r);
}

Test(whatif, arithmetic)
{
	struct rxr_result *r = mk_run(1.0, 0, 2, 1);
	r->threads[1].st[RXP_ST_CQE_POLL] = (struct rxr_stage_sum){0};
	tu_laps_add(&r->threads[1].st[RXP_ST_CQE_POLL], 16000, 1, 300, 20);
	tu_laps_add(&r->threads[1].st[RXP_ST_CQE_POLL], 16000, 3, 300, 20);
	struct rxa_model m;
	double pred, head;
	rxa_run_headroom(r, &m, &pred, &head);
	char err[256] = "";
	struct rxa_whatif_change c[3];
	cr_assert_eq(rxa_whatif_parse("buf_alloc=+30", &c[0], err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(rxa_whatif_parse("cqe_poll=x0.5", &c[1], err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(rxa_whatif_parse("handoff=-1", &c[2], err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(rxa_model_apply(&m, c, 3, err, sizeof(err)), 0, "%s", err);
	double cpp = (300.0 / 64 + 20) * 0.5 + (50 + 30) + (100.0 / 64 - 1);
	cr_assert_float_eq(m.predicted_mpps, HZ / cpp / 1e6, 1e-6, "after %f want %f",
			   m.predicted_mpps, HZ / cpp / 1e6);
	/* below zero: handoff costs 100/64 per packet */
	struct rxa_model m2;
	rxa_run_headroom(r, &m2, &pred, &head);
	cr_assert_eq(rxa_whatif_parse("handoff=-2", &c[0], err, sizeof(err)), 0);
	cr_assert_eq(rxa_model_apply(&m2, c, 1, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "below zero"), "%s", err);
	/* a stage no receive thread laps */
	cr_assert_eq(rxa_whatif_parse("chain=+5", &c[0], err, sizeof(err)), 0);
	cr_assert_eq(rxa_model_apply(&m2, c, 1, err, sizeof(err)), -ENOENT);
	cr_assert(strstr(err, "no receive thread laps"), "%s", err);
	/* parse errors */
	const char *bad[] = {"nosuch=+5", "buf_alloc=x0", "buf_alloc=5", "idle=+5", "buf_alloc=x-1",
			     "=+5", "buf_alloc", "buf_alloc=+abc"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(rxa_whatif_parse(bad[i], &c[0], err, sizeof(err)), -EINVAL, "%s", bad[i]);
	rxr_result_free(r);
}

/* The CLI: bad input exits 2 with exactly one line; good input prints. */
Test(whatif, cli_bad_input_exits_2_with_one_line)
{
	char dir[64];
	struct rxa_set *s = mk_sweep(dir, sizeof(dir), 1, 1);
	rxa_set_free(s);
	const char *cases[] = {"buf_alloc=x0", "nosuch=+5", "handoff=-1000"};
	for (size_t i = 0; i < 3; i++) {
		char cmd[600], *out = NULL;
		snprintf(cmd, sizeof(cmd), "%s whatif %s %s", RXRAY_BIN, dir, cases[i]);
		int st = tu_run(cmd, &out);
		cr_assert_eq(st, 2, "%s: exit %d: %s", cases[i], st, out ? out : "");
		int lines = 0;
		for (char *c = out; c && *c; c++)
			lines += *c == '\n';
		cr_assert_eq(lines, 1, "%s: %d lines: %s", cases[i], lines, out);
		free(out);
	}
	char cmd[600], *out = NULL;
	snprintf(cmd, sizeof(cmd), "%s whatif %s buf_alloc=+50", RXRAY_BIN, dir);
	cr_assert_eq(tu_run(cmd, &out), 0, "%s", out);
	cr_assert(strstr(out, "before Mpps"), "%s", out);
	free(out);
	/* options may come before, between and after the operands; a change
	 * with a '-' in it (handoff=-1) is never taken for an option */
	out = NULL;
	snprintf(cmd, sizeof(cmd), "%s whatif -f csv %s buf_alloc=+50 -o - handoff=-1 --light-frac 0.5",
		 RXRAY_BIN, dir);
	cr_assert_eq(tu_run(cmd, &out), 0, "%s", out);
	cr_assert(strstr(out, "before Mpps,"), "not csv: %s", out);
	char *same = NULL;
	snprintf(cmd, sizeof(cmd), "%s whatif -f csv -o - --light-frac 0.5 %s buf_alloc=+50 handoff=-1",
		 RXRAY_BIN, dir);
	cr_assert_eq(tu_run(cmd, &same), 0, "%s", same);
	cr_assert_str_eq(out, same, "the order of options and operands changed the answer");
	free(same);
	free(out);
	tu_rmrf(dir);
}

Test(whatif, set_stage_to_another_configs_cost)
{
	struct rxr_result *r = mk_run(1.0, 0, 2, 1);
	r->threads[1].st[RXP_ST_CQE_POLL] = (struct rxr_stage_sum){0};
	tu_laps_add(&r->threads[1].st[RXP_ST_CQE_POLL], 16000, 1, 300, 20);
	tu_laps_add(&r->threads[1].st[RXP_ST_CQE_POLL], 16000, 3, 300, 20);
	struct rxa_model m;
	double pred, head;
	char err[256] = "";
	rxa_run_headroom(r, &m, &pred, &head);
	/* buf_alloc as cheap as 10 cycles/packet: only that stage changes */
	cr_assert_eq(rxa_model_set_stage(&m, "rx", RXP_ST_BUF_ALLOC, 10, err, sizeof(err)), 0, "%s",
		     err);
	double cpp = 300.0 / 64 + 20 + 10 + 100.0 / 64;
	cr_assert_float_eq(m.predicted_mpps, HZ / cpp / 1e6, 1e-6);
	cr_assert_float_eq(rxa_model_stage_cpp(&m.th[0], RXP_ST_BUF_ALLOC, 0), 10, 1e-9);
	cr_assert_eq(rxa_model_set_stage(&m, "app", RXP_ST_BUF_ALLOC, 10, err, sizeof(err)), -EINVAL);
	rxr_result_free(r);
}

/* path's text with every `from` replaced by `to`, written to out */
static void rewrite(const char *path, const char *out, const char *from, const char *to)
{
	char *t = tu_slurp(path);
	cr_assert(t);
	FILE *f = fopen(out, "w");
	cr_assert(f);
	for (char *p = t, *at; *p; p = at + strlen(from)) {
		if (!(at = strstr(p, from))) {
			fputs(p, f);
			break;
		}
		fprintf(f, "%.*s%s", (int)(at - p), p, to);
	}
	fclose(f);
	free(t);
}

static char *run_text(const struct rxr_result *r)
{
	json_t *j = rxr_result_to_json(r);
	char *s = json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(17));
	json_decref(j);
	return s;
}

static void same_run(const struct rxr_result *a, const struct rxr_result *b, const char *what)
{
	cr_assert_eq(!a, !b, "%s: present in one load only", what);
	if (!a)
		return;
	char *x = run_text(a), *y = run_text(b);
	cr_expect_str_eq(x, y, "%s differs between the fast and the checked path", what);
	free(x);
	free(y);
}

/*
 * The loader's fast path (compact lines read by rxr_result_scan) and its
 * checked path (jansson) give the same set. The same sweep twice: every
 * document carries a member "note" - plain "A" in one file, "\u0041" (the
 * same string, escaped) in the other, which the fast path leaves to the
 * checked one. Catches a fast path that drops or misreads a point's runs,
 * its figures or its light trials.
 */
Test(model, fast_and_checked_loads_agree)
{
	char dir[64], d2[64], src[600], dst[600];
	struct rxa_set *s0 = mk_sweep(dir, sizeof(dir), 1, 1);
	rxa_set_free(s0);
	cr_assert(tu_tmpdir(d2, sizeof(d2)));
	snprintf(src, sizeof(src), "%s/results.jsonl", dir);
	snprintf(dst, sizeof(dst), "%s/results.jsonl", d2);
	rewrite(src, dst, "1\",", "1\",\"note\":\"\\u0041\",");
	snprintf(dst, sizeof(dst), "%s/fast.jsonl", dir);
	rewrite(src, dst, "1\",", "1\",\"note\":\"A\",");
	rename(dst, src);
	char err[RXA_ERR_LEN] = "";
	struct rxa_set *a = NULL, *b = NULL;
	cr_assert_eq(rxa_set_load(dir, &a, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(rxa_set_load(d2, &b, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(a->n, b->n);
	cr_expect_eq(a->ntrials, b->ntrials);
	for (size_t i = 0; i < a->n; i++) {
		const struct rxa_point *p = &a->pts[i], *q = &b->pts[i];
		cr_expect_str_eq(p->key, q->key);
		cr_expect_str_eq(p->status, q->status);
		/* bit for bit: NAN (absent) equals NAN */
		cr_expect(!memcmp(&p->ndr_mpps, &q->ndr_mpps, sizeof(double)) &&
			  !memcmp(&p->pdr_mpps, &q->pdr_mpps, sizeof(double)) &&
			  !memcmp(&p->max_offered_mpps, &q->max_offered_mpps, sizeof(double)) &&
			  p->trials == q->trials);
		same_run(p->ndr_run, q->ndr_run, "ndr_run");
		same_run(p->top_run, q->top_run, "top_run");
		cr_assert_eq(p->nlight, q->nlight);
		cr_expect_eq(p->nlight, 4);
		for (size_t l = 0; l < p->nlight; l++)
			same_run(p->light[l], q->light[l], "a light trial");
		cr_assert(p->nabove && p->nabove == q->nabove,
			  "trials above the NDR kept: %zu, %zu", p->nabove, q->nabove);
		cr_expect_float_eq(p->above_runs[0]->offered_mpps, 12.0, 1e-9);
		for (size_t k = 0; k < p->nabove; k++)
			same_run(p->above_runs[k], q->above_runs[k], "a trial above the NDR");
		/* the note is read, whichever the path */
		cr_expect_str_eq(json_string_value(json_object_get(p->ndr_run->extra, "note")), "A");
		cr_expect_str_eq(json_string_value(json_object_get(q->light[0]->extra, "note")), "A");
	}
	rxa_set_free(a);
	rxa_set_free(b);
	tu_rmrf(dir);
	tu_rmrf(d2);
}

/* The line of text holding `at` (a row of a table), into buf; "" when absent. */
static const char *line_of(const char *text, const char *at, char *buf, size_t n)
{
	const char *p = text ? strstr(text, at) : NULL;
	buf[0] = '\0';
	if (!p)
		return buf;
	while (p > text && p[-1] != '\n')
		p--;
	size_t len = strcspn(p, "\n");
	snprintf(buf, n, "%.*s", (int)(len < n ? len : n - 1), p);
	return buf;
}

/*
 * Two points of one sweep in dir/<name>: "engine=dpdk" (generator-limited
 * when asked: the summary line says "generator_limited": true, as the
 * sweep's store writes it) and "engine=verbs", each mk_sweep's point.
 */
static void mk_pair_jsonl(const char *dir, const char *name, bool dpdk_genlim)
{
	char a[64], b[64], src[600], tmp[600], dst[600], cmd[2000];
	rxa_set_free(mk_sweep(a, sizeof(a), 1, 1));
	rxa_set_free(mk_sweep(b, sizeof(b), 1, 1));
	snprintf(src, sizeof(src), "%s/results.jsonl", a);
	snprintf(dst, sizeof(dst), "%s/%s.dpdk", dir, name);
	if (dpdk_genlim)
		rewrite(src, dst, "\"schema\":\"" RXA_POINT_SCHEMA "\",",
			"\"schema\":\"" RXA_POINT_SCHEMA "\",\"generator_limited\":true,");
	else
		rewrite(src, dst, "\"engine=dpdk\"", "\"engine=dpdk\"");
	snprintf(src, sizeof(src), "%s/results.jsonl", b);
	snprintf(tmp, sizeof(tmp), "%s/%s.tmp", dir, name);
	rewrite(src, tmp, "\"engine=dpdk\"", "\"engine=verbs\"");
	snprintf(src, sizeof(src), "%s/%s.verbs", dir, name);
	rewrite(tmp, src, "\"knobs\":{\"engine\":\"dpdk\"}", "\"knobs\":{\"engine\":\"verbs\"}");
	snprintf(cmd, sizeof(cmd), "cat '%s' '%s' >'%s/%s.jsonl'", dst, src, dir, name);
	cr_assert_eq(system(cmd), 0);
	tu_rmrf(a);
	tu_rmrf(b);
}

/*
 * A what-if whose baseline is generator-limited is no figure: rxray
 * whatif still prints the point's row, figures and all, marks it
 * RXA_GENLIM_MARK (the generator-limited row only, in md and csv) and
 * exits 1 with one line naming the point. Catches a flag the reader
 * drops, a mark on every row or on the wrong one, a row left out, and an
 * exit 0 over a lower bound.
 */
Test(whatif, generator_limited_baseline_is_marked_and_exits_1)
{
	char dir[64], cmd[700], row[2048], *out = NULL;
	cr_assert(tu_tmpdir(dir, sizeof(dir)));
	mk_pair_jsonl(dir, "genlim", true);
	snprintf(cmd, sizeof(cmd), "%s whatif %s/genlim.jsonl buf_alloc=+150", RXRAY_BIN, dir);
	cr_assert_eq(tu_run(cmd, &out), 1, "%s", out);
	line_of(out, "| engine=dpdk |", row, sizeof(row));
	cr_assert(strstr(row, RXA_GENLIM_MARK), "the generator-limited row unmarked: %s", out);
	/* still the figure it printed before: the light model's 39.34 */
	cr_assert(strstr(row, "| 39.34 |"), "the row's figures are gone: %s", row);
	line_of(out, "| engine=verbs |", row, sizeof(row));
	cr_assert(row[0], "the other point's row is gone: %s", out);
	cr_assert(!strstr(row, RXA_GENLIM_MARK), "a point the receiver limits marked: %s", row);
	cr_assert(strstr(out, "rxray whatif: ") &&
		      strstr(out, "1 of 2 points generator-limited (engine=dpdk)"),
		  "no error line naming the point: %s", out);
	free(out);
	snprintf(cmd, sizeof(cmd), "%s whatif -f csv %s/genlim.jsonl buf_alloc=+150 2>/dev/null",
		 RXRAY_BIN, dir);
	cr_assert_eq(tu_run(cmd, &out), 1, "%s", out);
	line_of(out, "engine=dpdk,", row, sizeof(row));
	/* quoted: the mark holds a comma */
	cr_assert(strstr(row, ",\"" RXA_GENLIM_MARK "\""), "csv row unmarked: %s", out);
	line_of(out, "engine=verbs,", row, sizeof(row));
	cr_assert(row[0] && !strstr(row, "generator-limited"), "csv: %s", out);
	free(out);
	tu_rmrf(dir);
}

/* Neither point generator-limited: exit 0 and no mark anywhere. */
Test(whatif, no_generator_limited_point_exits_0_unmarked)
{
	char dir[64], cmd[700], row[2048], *out = NULL;
	cr_assert(tu_tmpdir(dir, sizeof(dir)));
	mk_pair_jsonl(dir, "clean", false);
	snprintf(cmd, sizeof(cmd), "%s whatif %s/clean.jsonl buf_alloc=+150", RXRAY_BIN, dir);
	cr_assert_eq(tu_run(cmd, &out), 0, "%s", out);
	cr_assert(!strstr(out, RXA_GENLIM_MARK), "marked: %s", out);
	line_of(out, "| engine=dpdk |", row, sizeof(row));
	cr_assert(strstr(row, "| 39.34 |"), "%s", out);
	line_of(out, "| engine=verbs |", row, sizeof(row));
	cr_assert(strstr(row, "| 39.34 |"), "%s", out);
	free(out);
	snprintf(cmd, sizeof(cmd), "%s whatif -f csv %s/clean.jsonl buf_alloc=+150", RXRAY_BIN,
		 dir);
	cr_assert_eq(tu_run(cmd, &out), 0, "%s", out);
	cr_assert(!strstr(out, "generator-limited"), "csv: %s", out);
	free(out);
	tu_rmrf(dir);
}
