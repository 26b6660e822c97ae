/* SPDX-License-Identifier: MIT */
/*
 * The DPDK sim routines over compressed CQE sessions (--cqe-comp, on by
 * default for dpdk as in the mlx5 PMD): every packet delivered once and in
 * order, conservation, across ring wraps and with bursts that end inside
 * a session; and the other fidelity points the result makes visible
 * (packet type from the CQE, RSS hash with several queues, the sampled
 * wqe_counter check, MRs merged). Criterion forks per test: a fresh EAL.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dpdk_test.h"

static void cfg(struct rx_config *c, enum rx_mode mode, enum rx_discipline d, uint32_t burst)
{
	rx_config_defaults(c);
	snprintf(c->engine, sizeof(c->engine), "dpdk");
	snprintf(c->device, sizeof(c->device), "sim");
	c->seconds = 0.3;
	c->mode = mode;
	c->discipline = d;
	c->ring = 64; /* hundreds of laps in a run */
	c->burst = burst;
	c->batch = 16;
	c->rate_pps = 0; /* the NIC's full rate: full bursts, long sessions */
	c->app = RX_APP_INLINE;
	c->quiet = true;
}



static double q0(json_t *d, const char *key)
{
	json_t *q = json_array_get(json_object_get(d, "sim_queues"), 0);
	cr_assert_not_null(q);
	return dt_num(q, key);
}

/* In order, once each, conserved, no errors: true of every run. */
static void check_correct(const struct rxr_result *r, void *arg)
{
	bool comp = *(const bool *)arg;
	json_t *d = json_object_get(r->extra, "dpdk");
	cr_assert_not_null(d);
	const struct rxr_counters *k = &r->c;
	cr_assert(rxr_counters_conserved(k),
		  "offered %lu != received %lu + oob %lu + nombuf %lu + app_dropped %lu",
		  (unsigned long)k->offered, (unsigned long)k->received,
		  (unsigned long)k->out_of_buffer, (unsigned long)k->nombuf,
		  (unsigned long)k->app_dropped);
	cr_assert_eq(k->errors, 0, "errors %lu (error CQEs or wqe_counter faults)",
		     (unsigned long)k->errors);
	/* duplicates or reordering show as a sequence going backwards; a
	 * mis-read mini-CQE as a tag or length error */
	cr_assert_eq(dt_num(d, "seq.dup"), 0);
	cr_assert_eq(dt_num(d, "seq.tag_errors"), 0);
	cr_assert_eq(dt_num(d, "seq.len_errors"), 0);
	cr_assert_leq(dt_num(d, "seq.missing"),
		      (double)(k->out_of_buffer + k->nombuf + k->app_dropped));
	cr_assert_eq(json_is_true(json_object_get(d, "cqe_comp")), comp);
	if (!comp)
		cr_assert_eq(q0(d, "cqe_sessions"), 0);
	cr_assert_eq(q0(d, "wqe_counter_faults"), 0);
}

/* The run exercised what the test is about: 20 ring laps, sessions read
 * (compression on), the sampled wqe_counter check ran (1 in 64 polls that
 * found a completion). A host too busy to give the run its CPU can leave
 * these short in a fixed window; that is not a defect, so run_enough
 * runs again, longer (dt_run_until). */
static bool enough_activity(const struct rxr_result *r, void *arg, char *why, size_t len)
{
	bool comp = *(const bool *)arg;
	json_t *d = json_object_get(r->extra, "dpdk");
	if (r->c.received <= 64 * 20)
		return dt_short_of(why, len, "fewer than 20 ring laps received (%lu)",
				(unsigned long)r->c.received);
	if (comp && !(q0(d, "cqe_sessions") > 0 && q0(d, "mini_cqes") > q0(d, "cqe_sessions")))
		return dt_short_of(why, len, "no compressed session read (%.0f sessions, %.0f mini-CQEs)",
				q0(d, "cqe_sessions"), q0(d, "mini_cqes"));
	if (!(q0(d, "wqe_checks") > 0))
		return dt_short_of(why, len, "the sampled wqe_counter check never ran");
	return true;
}

/* Every run correct, the last one enough (dpdk_test.h). */
static struct rxr_result *run_enough(struct rx_config *c, bool comp,
				     bool (*enough)(const struct rxr_result *, void *, char *, size_t))
{
	return dt_run_until(c, check_correct, enough, &comp);
}

/* Bursts of 5: most sessions (up to 32 long) end in a later burst. */
Test(dpdk_cqe, scalar_single_sessions_across_bursts)
{
	struct rx_config c;
	cfg(&c, RX_MODE_SINGLE, RX_DISC_SCALAR, 5);
	struct rxr_result *r = run_enough(&c, true, enough_activity);
	/* single segment: the ring is WQEs as given */
	cr_assert_eq(dt_num(json_object_get(r->extra, "dpdk"), "nic_wqes"), 64);
	rxr_result_free(r);
}

Test(dpdk_cqe, scalar_hds_sessions_across_bursts)
{
	struct rx_config c;
	cfg(&c, RX_MODE_HDS, RX_DISC_SCALAR, 7);
	c.ring = 128; /* 64 WQEs of two segments */
	struct rxr_result *r = run_enough(&c, true, enough_activity);
	json_t *d = json_object_get(r->extra, "dpdk");
	/* the ring is counted in segments: 128 descriptors, 64 WQEs */
	cr_assert_eq(dt_num(d, "nic_wqes"), 64);
	/* two pools: one MR shared when both sit inside one hugepage, else
	 * their own; a wrong range would make the NIC write error CQEs
	 * (errors == 0) */
	cr_assert(dt_num(d, "mrs") >= 1 && dt_num(d, "mrs") <= 2, "%.0f MRs", dt_num(d, "mrs"));
	if (dt_num(d, "mrs") == 1)
		cr_assert_eq(dt_num(d, "mr_cache.mru_hits"), dt_num(d, "mr_cache.lookups"));
	rxr_result_free(r);
}

/* Vector: bursts of 8 take a session's mbufs over several calls (the
 * PMD's rxq->decompressed). */
Test(dpdk_cqe, vector_sessions_across_bursts)
{
	struct rx_config c;
	cfg(&c, RX_MODE_SINGLE, RX_DISC_VECTOR, 8);
	struct rxr_result *r = run_enough(&c, true, enough_activity);
	rxr_result_free(r);
}

Test(dpdk_cqe, vector_long_bursts)
{
	struct rx_config c;
	cfg(&c, RX_MODE_SINGLE, RX_DISC_VECTOR, 64);
	c.ring = 256;
	struct rxr_result *r = run_enough(&c, true, enough_activity);
	rxr_result_free(r);
}

Test(dpdk_cqe, off_means_plain_cqes)
{
	struct rx_config c;
	cfg(&c, RX_MODE_SINGLE, RX_DISC_SCALAR, 5);
	c.cqe_comp = RX_CQE_COMP_OFF;
	struct rxr_result *r = run_enough(&c, false, enough_activity);
	rxr_result_free(r);
}

/* Two queues: both routines still deliver in order per queue (the app
 * checks each queue's own sequence) with the RSS hash in the CQEs. */
Test(dpdk_cqe, two_queues_conserve)
{
	struct rx_config c;
	cfg(&c, RX_MODE_SINGLE, RX_DISC_VECTOR, 16);
	c.queues = 2;
	c.allow_oversubscribe = true;
	struct rxr_result *r = dt_run(&c);
	json_t *d = json_object_get(r->extra, "dpdk");
	cr_assert(rxr_counters_conserved(&r->c));
	cr_assert_gt(r->c.received, 0);
	cr_assert_eq(dt_num(d, "seq.dup"), 0);
	cr_assert_eq(dt_num(d, "seq.tag_errors"), 0);
	rxr_result_free(r);
}

/* The scalar model lapped in groups (RXRAY_SIM_SCALAR_GROUP, fix 4's
 * alternative to phases): same packets, same order, one doorbell per
 * burst whatever the group. */
static void scalar_group(const char *g, enum rx_mode mode)
{
	struct rx_config c;
	setenv("RXRAY_SIM_SCALAR_GROUP", g, 1);
	cfg(&c, mode, RX_DISC_SCALAR, 16);
	c.ring = 128;
	struct rxr_result *r = run_enough(&c, true, enough_activity);
#if RXRAY_PROBE_MODE != RXP_MODE_OFF /* laps recorded */
	json_t *d = json_object_get(r->extra, "dpdk");
	double bursts = 0;
	for (size_t i = 0; i < r->nthreads; i++)
		if (!strcmp(r->threads[i].role, "rx"))
			bursts = (double)r->threads[i].st[RXP_ST_DOORBELL].count;
	cr_assert_eq(q0(d, "doorbells"), bursts, "one doorbell lap per doorbell");
#endif
	rxr_result_free(r);
}

Test(dpdk_cqe, scalar_groups_of_4)
{
	scalar_group("4", RX_MODE_HDS);
}

Test(dpdk_cqe, scalar_per_packet)
{
	scalar_group("1", RX_MODE_SINGLE);
}

static bool nombuf_inside_sessions(const struct rxr_result *r, void *arg, char *why, size_t len)
{
	json_t *d = json_object_get(r->extra, "dpdk");
	(void)arg;
	if (!(dt_num(d, "rx_nombuf") > 0))
		return dt_short_of(why, len, "no allocation failed");
	if (!(q0(d, "cqe_sessions") > 0))
		return dt_short_of(why, len, "no compressed session read");
	if (!(q0(d, "carried") > 0))
		return dt_short_of(why, len, "no completion waited for the next burst");
	return true;
}

/* Allocation failures in the middle of sessions: the scalar routine keeps
 * the completions it read but could not deliver and delivers them first
 * next time; nothing lost twice, nothing out of order. */
Test(dpdk_cqe, scalar_nombuf_inside_sessions)
{
	struct rx_config c;
	cfg(&c, RX_MODE_HDS, RX_DISC_SCALAR, 32);
	c.ring = 256;
	c.batch = 32;
	c.hring = 64;
	c.buffers = 300;
	c.mempool_cache = 0;
	c.app = RX_APP_THREAD;
	c.allow_oversubscribe = true;
	c.inject[RXP_ST_APP] = 200000; /* a slow app holds the buffers */
	struct rxr_result *r = run_enough(&c, true, nombuf_inside_sessions);
	rxr_result_free(r);
}
