/* SPDX-License-Identifier: MIT */
/*
 * Attribution ground truth (--op-delay): a delay owed by an operation (a
 * mempool driver get/put, an MR lookup, a NIC header write) and paid by
 * the lap the operation ran in must show up in the stage that performs
 * that operation, by K x operations per packet, and nowhere else. Unlike
 * --inject, which spins at a lap and so always lands in the stage the lap
 * names, this catches work charged to the wrong stage: swap the buf_alloc
 * and sge_setup laps in sim_scalar.c and this test fails.
 *
 * Robust on a shared host: every rx lap holds one packet (burst 1, low
 * rate), so the median lap of a stage is its typical cost; rx stages are
 * compared by median lap x laps / packets, which ignores the laps a
 * preempted thread stretches; the NIC's by their shortest lap (one
 * packet). The delay itself is K clock ticks of wall time, so the host's
 * load does not change it.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dpdk_test.h"
#include "rxray/inject.h"

/*
 * The bounds scale with K, the host's noise does not: under ASan the rx
 * thread's stages cost up to ~4,500 cycles/packet (buf_alloc), and a slow
 * phase of the 2-core host (x3) in one run but not the other moves them
 * by ~9,000. K = 20,000 gave bounds of 2,000-4,000 cycles and failed once
 * in CI that way; at 100,000 the tightest bound (5% of K x 2 operations)
 * is 10,000. The rate is halved so the delays keep the rx thread under
 * ~20% busy.
 */
#define K 100000.0

/*
 * The target (10% of K x operations) is bench_inject_accuracy's,
 * on the 16-core host. Here the free stage's rise ran past it now and
 * then (2,205 for 2,000 in the A/B run, once in nine; 230,848 for
 * 200,000 under ASan once, a bench running beside it), so the tests allow
 * 15%: the bugs they are for are off by 50% of the delay or more (a delay
 * split over both halves, free in the wrong half, a delay in the wrong
 * stage). In an unoptimised
 * (sanitizer) build the delay's own bookkeeping (the clock reads, the
 * overhead it subtracts, the per-thread debt) is instrumented calls that
 * land on either side of the spin: seen there, 4-26% too much in the A/B
 * pairs (the MR lookup's 2,000 came out 2,156-2,515 in five runs) and
 * other stages moved by up to 17% of the delay.
 */
#if defined(__OPTIMIZE__) && !defined(__SANITIZE_ADDRESS__)
#define OD_TOL_NATIVE 0.15
#define OD_OTHER_NATIVE 0.10
#else
#define OD_TOL_NATIVE 0.35
#define OD_OTHER_NATIVE 0.25
#endif
/*
 * Under an emulator (the arm64 suite in qemu-user: RXRAY_EMULATOR) every
 * clock read and the code around it is translated, so a delay's own
 * bookkeeping lands on either side of the spin as in an unoptimised
 * build: the NIC's shortest header-write lap rose by 125,625 for 100,000
 * once there. The unoptimised bounds still catch a delay split over both
 * halves or charged to the wrong stage (off by 50% or more).
 */
static bool emulated(void)
{
	return getenv("RXRAY_EMULATOR") != NULL;
}
#define OD_TOL (emulated() ? 0.35 : OD_TOL_NATIVE)
#define OD_OTHER (emulated() ? 0.25 : OD_OTHER_NATIVE)

static void cfg(struct rx_config *c)
{
	rx_config_defaults(c);
	snprintf(c->engine, sizeof(c->engine), "dpdk");
	/* one packet a train: the NIC's laps hold one header each, so its
	 * stages' medians rest on a lap per packet, not one per 32 */
	snprintf(c->device, sizeof(c->device), "sim:train=1");
	c->mode = RX_MODE_HDS;
	c->seconds = 1.0;
	c->rate_pps = 1000;
	c->ring = 1024;
	c->burst = 1;      /* one packet per rx lap, no look-ahead allocation */
	c->batch = 4;
	c->mempool_cache = 0; /* every get and put reaches the driver */
	c->app = RX_APP_INLINE;
	c->discipline = RX_DISC_SCALAR;
	c->quiet = true;
}

/* Median lap x laps / thread packets: a stage's typical cost per packet. */
static double med_cpp(const struct rxr_thread_result *t, int s)
{
	if (!t->packets || !(t->stage_mask & (1u << s)))
		return 0;
	return (double)t->st[s].p50 * (double)t->st[s].count / (double)t->packets;
}

static double num(const struct rxr_result *r, const char *a, const char *b, const char *c)
{
	json_t *v = json_object_get(json_object_get(json_object_get(r->extra, "dpdk"), a), b);
	if (c)
		v = json_object_get(v, c);
	cr_assert(json_is_number(v), "dpdk.%s.%s%s%s missing", a, b, c ? "." : "", c ? c : "");
	return json_number_value(v);
}

/*
 * The delay must land in `stage` (rise within OD_TOL of want cycles/packet)
 * and move no other busy stage of the thread by more than 5% of it.
 */
static void check(const struct rxr_thread_result *base, const struct rxr_thread_result *d,
		  int stage, double want, const char *what)
{
	double rise = med_cpp(d, stage) - med_cpp(base, stage);
	cr_assert_lt(fabs(rise - want), OD_TOL * want,
		     "%s: %s rose by %.0f cycles/packet, want %.0f", what,
		     rxp_stage_name((enum rxp_stage)stage), rise, want);
	for (int s = 0; s < RXP_ST_COUNT; s++) {
		if (s == stage || s == RXP_ST_IDLE)
			continue;
		double mv = med_cpp(d, s) - med_cpp(base, s);
		cr_assert_lt(fabs(mv), 0.05 * want, "%s: %s moved by %.0f cycles/packet (the delay is "
						    "%.0f in %s)",
			     what, rxp_stage_name((enum rxp_stage)s), mv, want,
			     rxp_stage_name((enum rxp_stage)stage));
	}
}

Test(opdelay, each_delay_lands_in_the_stage_that_performs_the_operation, .timeout = 170)
{
	cr_assert_eq(rxp_clock_init(50), 0);
	struct rx_config c;
	cfg(&c);
	struct rxr_result *base = dt_run_ok(&c);

	/* mempool: 2 gets per packet (header, payload) in buf_alloc */
	cfg(&c);
	c.op_delay_mempool = (uint32_t)K;
	struct rxr_result *mp = dt_run_ok(&c);
	const struct rxr_thread_result *rx = dt_thread(mp, "rx");
	double gets = num(mp, "mempool", "rx", "get_calls") / (double)rx->packets;
	cr_assert_float_eq(gets, 2.0, 0.05, "gets per packet %.3f", gets);
	/* the same delay on the free side: puts land in free */
	double puts = num(mp, "mempool", "rx", "put_calls") / (double)rx->packets;
	double rise_alloc = med_cpp(rx, RXP_ST_BUF_ALLOC) - med_cpp(dt_thread(base, "rx"), RXP_ST_BUF_ALLOC);
	cr_assert_lt(fabs(rise_alloc - K * gets), OD_TOL * K * gets,
		     "mempool: buf_alloc rose by %.0f, want K x gets = %.0f", rise_alloc, K * gets);
	double rise_free = med_cpp(rx, RXP_ST_FREE) - med_cpp(dt_thread(base, "rx"), RXP_ST_FREE);
	cr_assert_lt(fabs(rise_free - K * puts), OD_TOL * K * puts,
		     "mempool: free rose by %.0f, want K x puts = %.0f", rise_free, K * puts);
	for (int s = 0; s < RXP_ST_COUNT; s++) {
		if (s == RXP_ST_BUF_ALLOC || s == RXP_ST_FREE || s == RXP_ST_IDLE)
			continue;
		double mv = med_cpp(rx, s) - med_cpp(dt_thread(base, "rx"), s);
		cr_assert_lt(fabs(mv), 0.05 * K * gets, "mempool: %s moved by %.0f",
			     rxp_stage_name((enum rxp_stage)s), mv);
	}

	/* MR lookup: one per segment, in sge_setup */
	cfg(&c);
	c.op_delay_mr = (uint32_t)K;
	struct rxr_result *mr = dt_run_ok(&c);
	rx = dt_thread(mr, "rx");
	double lookups = num(mr, "mr_cache", "lookups", NULL) / (double)rx->packets;
	cr_assert_float_eq(lookups, 2.0, 0.05, "lookups per packet %.3f", lookups);
	check(dt_thread(base, "rx"), rx, RXP_ST_SGE_SETUP, K * lookups, "mr");

	/* NIC header write: one per packet, in the NIC's hdr_write */
	cfg(&c);
	c.op_delay_hdr_write = (uint32_t)K;
	struct rxr_result *hw = dt_run_ok(&c);
	/* the NIC's laps are its runs (a train, one packet here): compare
	 * its cost per packet (median lap x laps / packets) */
	const struct rxr_thread_result *nb = dt_thread(base, "nic"), *nd = dt_thread(hw, "nic");
	double rise = med_cpp(nd, RXP_ST_HDR_WRITE) - med_cpp(nb, RXP_ST_HDR_WRITE);
	cr_assert_lt(fabs(rise - K), OD_TOL * K, "hdr_write: cost per packet rose by %.0f, want %.0f",
		     rise, K);
	for (int s = 0; s < RXP_ST_COUNT; s++) {
		if (s == RXP_ST_HDR_WRITE || s == RXP_ST_IDLE || !(nd->stage_mask & (1u << s)))
			continue;
		double mv = med_cpp(nd, s) - med_cpp(nb, s);
		cr_assert_lt(fabs(mv), 0.05 * K, "hdr_write: nic %s moved by %.0f",
			     rxp_stage_name((enum rxp_stage)s), mv);
	}
	/* The receive side is not compared: its laps cannot hold the NIC's
	 * work (another thread), and a slower NIC changes the RX thread's
	 * bursts and so its per-packet costs (measured on this 2-core host:
	 * buf_alloc moved by 1472 cycles/packet with K on the NIC), which
	 * is load, not attribution. */

	rxr_result_free(base);
	rxr_result_free(mp);
	rxr_result_free(mr);
	rxr_result_free(hw);
}

/* A stage's A/B entry in r's extra.inject_ab (the rx thread's), or NULL. */
static json_t *ab_entry(const struct rxr_result *r, const char *role, const char *stage)
{
	json_t *arr = json_object_get(r->extra, "inject_ab"), *e;
	size_t i;
	json_array_foreach(arr, i, e)
	{
		if (!strcmp(json_string_value(json_object_get(e, "role")), role) &&
		    !strcmp(json_string_value(json_object_get(e, "stage")), stage))
			return e;
	}
	return NULL;
}

/* How far a stage without the operation may move: 5% of its own cost
 * (under ASan buf_alloc costs ~4,500 a packet) or 10% of the delay,
 * whichever is larger. On the 2-core VM buf_alloc's pairs moved by 16-118
 * with 2,000 of MR delay in sge_setup after it; work charged to the wrong
 * stage moves it by the whole delay. (The bench reports the issue's
 * bound, 5% of the stage's cost or 3 cycles.) */
static double other_bound(const struct rxr_thread_result *t, int s, double want)
{
	return fmax(0.05 * (double)t->st[s].cycles / (double)t->packets, OD_OTHER * want);
}

static double ab_added(const struct rxr_result *r, const char *stage)
{
	json_t *e = ab_entry(r, "rx", stage);
	cr_assert_not_null(e, "no inject_ab entry for rx %s", stage);
	json_t *v = json_object_get(e, "added_trimmed_cycles_per_packet");
	cr_assert(json_is_number(v), "rx %s: no paired figure", stage);
	return json_number_value(v);
}

/*
 * --op-delay with --inject-ab: the operations of one lap in four of the
 * stage performing them are delayed (the gate: buf_alloc for the mempool,
 * sge_setup for the MR lookup), and paired laps are compared in one
 * run. An operation of another stage on the thread (the inline app's
 * free, its puts) counts to the half it ran in. Each stage's paired figure
 * is K x its operations per packet within OD_TOL; a stage without the
 * operation stays within other_bound. Catches the gate not wired to the
 * stage performing the operation (no entry, or the delay split over both
 * halves: ~0), free counted to the wrong half (-K x puts), and delays
 * that every lap spins (~0).
 */
Test(opdelay, ab_pairs_delayed_and_plain_laps_in_one_run, .timeout = 120)
{
	cr_assert_eq(rxp_clock_init(50), 0);
	const double k = 1000; /* pairs' figures are binned up to 3,072 */
	struct rx_config c;
	cfg(&c);
	/* the inline app laps once per batch: with a batch of 4 every free
	 * would run under one state of the gate (it turns each rx lap) */
	c.batch = 1;
	c.rate_pps = 4000; /* 2,000 pairs a run: the figures' noise halves */
	c.inject_ab = true;
	c.op_delay_mempool = (uint32_t)k;
	struct rxr_result *mp = dt_run_ok(&c);
	const struct rxr_thread_result *rx = dt_thread(mp, "rx");
	double gets = num(mp, "mempool", "rx", "get_calls") / (double)rx->packets;
	double puts = num(mp, "mempool", "rx", "put_calls") / (double)rx->packets;
	cr_assert(json_is_true(json_object_get(ab_entry(mp, "rx", "buf_alloc"), "op_gate")));
	/* the gate's pairs trim at RXP_AB_TRIM + 2K (a lap's delays per
	 * packet vary with its size); the stages it observes at RXP_AB_TRIM */
	cr_expect_float_eq(json_number_value(json_object_get(ab_entry(mp, "rx", "buf_alloc"),
							     "trim_cycles_per_packet")),
			   RXP_AB_TRIM + 2 * k, 1e-9, "buf_alloc's trim window");
	cr_expect_float_eq(json_number_value(json_object_get(ab_entry(mp, "rx", "sge_setup"),
							     "trim_cycles_per_packet")),
			   RXP_AB_TRIM, 1e-9, "sge_setup's trim window");
	double a = ab_added(mp, "buf_alloc"), f = ab_added(mp, "free");
	cr_expect_lt(fabs(a - k * gets), OD_TOL * k * gets, "buf_alloc: %.0f added, K x gets %.0f",
		     a, k * gets);
	cr_expect_lt(fabs(f - k * puts), OD_TOL * k * puts, "free: %.0f added, K x puts %.0f", f,
		     k * puts);
	double sg = ab_added(mp, "sge_setup");
	cr_log_info("mempool=%.0f: buf_alloc %.0f (K x gets %.0f), free %.0f (K x puts %.0f), "
		    "sge_setup %.0f",
		    k, a, k * gets, f, k * puts, sg);
	cr_expect_lt(fabs(sg), other_bound(rx, RXP_ST_SGE_SETUP, k * gets),
		     "sge_setup (no mempool call) moved %.0f", sg);
	rxr_result_free(mp);

	cfg(&c);
	c.rate_pps = 4000;
	c.inject_ab = true;
	c.op_delay_mr = (uint32_t)k;
	struct rxr_result *mr = dt_run_ok(&c);
	rx = dt_thread(mr, "rx");
	double lookups = num(mr, "mr_cache", "lookups", NULL) / (double)rx->packets;
	double s = ab_added(mr, "sge_setup"), b = ab_added(mr, "buf_alloc");
	cr_log_info("mr=%.0f: sge_setup %.0f (K x lookups %.0f), buf_alloc %.0f", k, s, k * lookups,
		    b);
	cr_expect_lt(fabs(s - k * lookups), OD_TOL * k * lookups,
		     "sge_setup: %.0f added, want %.0f", s, k * lookups);
	cr_expect_lt(fabs(b), other_bound(rx, RXP_ST_BUF_ALLOC, k * lookups),
		     "buf_alloc (no lookup) moved %.0f", b);
	rxr_result_free(mr);
}
