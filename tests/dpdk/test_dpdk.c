/* SPDX-License-Identifier: MIT */
/*
 * The DPDK engine, run for real: EAL (in-memory, --no-huge when needed),
 * mempools with the counting driver, the software NIC or net_null.
 * Criterion runs every test in its own process, so each gets a fresh EAL.
 * Runs are short (0.2-0.3 s) and rate-limited where counts must be exact.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dpdk_test.h"
#include "sim_int.h"

static void cfg_base(struct rx_config *c, const char *device)
{
	rx_config_defaults(c);
	snprintf(c->engine, sizeof(c->engine), "dpdk");
	snprintf(c->device, sizeof(c->device), "%s", device);
	c->seconds = 0.25;
	c->ring = 1024;
	c->batch = 32;
	c->app = RX_APP_INLINE;
	c->quiet = true;
}

static json_t *dx(const struct rxr_result *r)
{
	json_t *d = json_object_get(r->extra, "dpdk");
	cr_assert_not_null(d, "result has no dpdk extras");
	return d;
}

static void assert_conserved(const struct rxr_result *r)
{
	const struct rxr_counters *k = &r->c;
	cr_assert(rxr_counters_conserved(k),
		  "offered %lu != received %lu + oob %lu + nombuf %lu + app_dropped %lu",
		  (unsigned long)k->offered, (unsigned long)k->received,
		  (unsigned long)k->out_of_buffer, (unsigned long)k->nombuf,
		  (unsigned long)k->app_dropped);
	cr_assert_gt(k->received, 0);
	cr_assert_eq(k->errors, 0, "errors %lu", (unsigned long)k->errors);
}

Test(dpdk, sim_scalar_hds_conserves_and_allocates_per_segment)
{
	struct rx_config c;
	cfg_base(&c, "sim");
	c.mode = RX_MODE_HDS;
	c.rate_pps = 2e6;
	c.mempool_cache = 0;
	/* each pool larger than a 2 MiB hugepage: no pool gets a page-wide
	 * MR, so the MR layout is the same with hugepages and without */
	c.buffers = 8192;
	struct rxr_result *r = dt_run(&c);
	json_t *d = dx(r);
	assert_conserved(r);
	cr_assert_str_eq(json_string_value(json_object_get(d, "discipline")), "scalar");
	double delivered = dt_num(d, "delivered");
	/* scalar: one replacement allocation per segment, two segments */
	cr_assert_eq(dt_num(d, "allocs"), 2 * delivered);
	/* cache 0: every allocation is a call on the shared ring, plus the
	 * PMD's look-ahead allocation at the end of a short burst */
	json_t *q0 = json_array_get(json_object_get(d, "sim_queues"), 0);
	double look = dt_num(q0, "lookahead_allocs");
	cr_assert_eq(dt_num(d, "mempool.rx.get_calls"), dt_num(d, "allocs") + look);
	/* empty polls' look-ahead get+put, counted apart */
	cr_assert_eq(dt_num(d, "mempool.rx_idle.get_calls"), dt_num(q0, "idle_allocs"));
	cr_assert_eq(dt_num(d, "mempool.rx_idle.put_calls"), dt_num(q0, "idle_allocs"));
	/* pools of ring-sized depth span several pages, hugepages or not:
	 * one MR each, so the MRU entry never holds the next segment's */
	cr_assert_eq(dt_num(d, "mrs"), 2);
	cr_assert_eq(dt_num(d, "mr_shared_pools"), 0);
	cr_assert_eq(dt_num(d, "mr_overlaps"), 0);
	cr_assert_eq(dt_num(d, "mr_cache.mru_hits"), 0);
	cr_assert_eq(dt_num(d, "mr_cache.lookups"), dt_num(d, "allocs"));
	cr_assert_eq(dt_num(d, "seq.dup"), 0);
	rxr_result_free(r);
}

/* Small pools: on hugepages both fit inside one page and share its MR
 * (every lookup hits the MRU entry); on 4 KiB pages each keeps its own
 * MRs and the MRU entry never holds the other segment's. Whichever layout
 * the host gave, the cache must behave as that layout says. */
Test(dpdk, sim_scalar_hds_small_pools_follow_their_mr_layout)
{
	struct rx_config c;
	cfg_base(&c, "sim");
	c.mode = RX_MODE_HDS;
	c.frame = 128;
	c.ring = 64;
	c.batch = 8;
	c.buffers = 400;
	c.rate_pps = 2e5;
	c.mempool_cache = 0;
	struct rxr_result *r = dt_run(&c);
	json_t *d = dx(r);
	assert_conserved(r);
	json_t *ed = json_object_get(r->env, "dpdk");
	double shared = dt_num(d, "mr_shared_pools"), lookups = dt_num(d, "mr_cache.lookups");
	cr_assert_gt(lookups, 0);
	if (json_is_true(json_object_get(ed, "no_huge")))
		cr_assert_eq(shared, 0, "4 KiB pages cannot hold a pool: no MR to share");
	cr_log_info("layout (%s pages): %.0f MRs, %.0f pool(s) on a shared hugepage MR, "
		    "%.0f/%.0f MRU hits",
		    json_is_true(json_object_get(ed, "no_huge")) ? "4k" : "huge", dt_num(d, "mrs"),
		    shared, dt_num(d, "mr_cache.mru_hits"), lookups);
	cr_assert_eq(dt_num(d, "mr_cache.mru_hits") + dt_num(d, "mr_cache.scan_hits") +
			 dt_num(d, "mr_cache.misses"),
		     lookups);
	if (shared) {
		cr_assert_eq(dt_num(d, "mrs"), 1);
		cr_assert_eq(dt_num(d, "mr_cache.mru_hits"), lookups);
	} else if (dt_num(d, "mr_overlaps") == 0) {
		cr_assert_eq(dt_num(d, "mrs"), 2);
		cr_assert_eq(dt_num(d, "mr_cache.mru_hits"), 0);
	} else {
		/* one pool's page-wide MR over part of the other: buffers in that
		 * page hit whichever MR is the MRU, as in the PMD's cache */
		cr_log_info("MRs overlap: the MRU figure depends on where buffers sit");
	}
	rxr_result_free(r);
}

Test(dpdk, sim_scalar_single_one_alloc_per_packet)
{
	struct rx_config c;
	cfg_base(&c, "sim");
	c.discipline = RX_DISC_SCALAR;
	c.rate_pps = 2e6;
	c.mempool_cache = 0;
	struct rxr_result *r = dt_run(&c);
	json_t *d = dx(r);
	assert_conserved(r);
	cr_assert_eq(dt_num(d, "allocs"), dt_num(d, "delivered"));
	/* the EAL arguments are in the result, --no-huge said when used */
	json_t *ed = json_object_get(r->env, "dpdk");
	const char *args = json_string_value(json_object_get(ed, "eal_args"));
	cr_assert(args && strstr(args, "--mbuf-pool-ops-name=" RXD_MPOPS_NAME), "%s", args);
	if (json_is_true(json_object_get(ed, "no_huge")))
		cr_assert(strstr(json_string_value(json_object_get(ed, "note")), "--no-huge"));
	/* one pool: with --no-huge it is one region, so the MRU entry always
	 * hits; on hugepages chunks that do not touch are MRs of their own and
	 * buffers come back in no address order, so only the lookup count is
	 * certain */
	cr_assert_eq(dt_num(d, "mr_cache.lookups"), dt_num(d, "allocs"));
	if (json_is_true(json_object_get(ed, "no_huge")))
		cr_assert_eq(dt_num(d, "mr_cache.mru_hits"), dt_num(d, "mr_cache.lookups"));
	rxr_result_free(r);
}

Test(dpdk, sim_vector_bulk_replenish_under_0_1_calls_per_packet)
{
	struct rx_config c;
	cfg_base(&c, "sim");
	c.discipline = RX_DISC_VECTOR;
	c.rate_pps = 2e6;
	c.mempool_cache = 0;
	struct rxr_result *r = dt_run(&c);
	json_t *d = dx(r);
	assert_conserved(r);
	cr_assert_str_eq(json_string_value(json_object_get(d, "discipline")), "vector");
	double calls = dt_num(d, "mempool.get_calls") + dt_num(d, "mempool.put_calls");
	double pkts = dt_num(d, "delivered");
	cr_assert_lt(calls / pkts, 0.1, "%.3f mempool calls per packet", calls / pkts);
	/* every bulk get is at least the replenish threshold (64 here),
	 * except one that stops at the ring's end (the PMD does not refill
	 * across it): at most one such short get per pass over the ring.
	 * A per-burst refill (gets of 1-32) fails this. */
	double objs = dt_num(d, "mempool.rx.get_objs"), gets = dt_num(d, "mempool.rx.get_calls");
	double short_max = floor(objs / c.ring) + 1;
	cr_assert_geq(objs, 64 * (gets - short_max), "%.0f objects in %.0f bulk gets (ring %u)",
		      objs, gets, c.ring);
	rxr_result_free(r);
}

Test(dpdk, sim_vector_rejects_split)
{
	struct rx_config c;
	struct rx_caps caps;
	char err[256] = "";
	cfg_base(&c, "sim");
	c.mode = RX_MODE_HDS;
	c.discipline = RX_DISC_VECTOR;
	cr_assert_eq(rx_engine_dpdk.caps(&c, &caps, err, sizeof(err)), 0);
	cr_assert_eq(rx_engine_dpdk.validate(&c, &caps, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "discipline:"), "%s", err);
}

static void conserved_check(const struct rxr_result *r, void *arg)
{
	(void)arg;
	cr_assert(rxr_counters_conserved(&r->c));
}

/* enough packets that the cache's first fills do not weigh per packet */
static bool thousand_received(const struct rxr_result *r, void *arg, char *why, size_t len)
{
	(void)arg;
	return r->c.received > 1000 ||
	       dt_short_of(why, len, "received %llu (a host too busy to run it)",
			   (unsigned long long)r->c.received);
}

/* docs/design.md ("daqiri's DPDK engine"): cache 0 and an app that is not an EAL thread: mixed
 * free_bulk flushes on every pool change, one put per segment. */
static void free_cfg(struct rx_config *c, enum rx_free f, enum rx_app app, uint32_t cache)
{
	cfg_base(c, "sim");
	c->mode = RX_MODE_HDS;
	c->rate_pps = 2e5;
	c->mempool_cache = cache;
	c->app = app;
	c->free_mode = f;
	c->hring = 512;
	c->allow_oversubscribe = true;
}

/* a host too busy to give the NIC its CPU may offer nothing in a short
 * run: run again, longer (dt_run_until) */
static struct rxr_result *free_run(enum rx_free f, enum rx_app app, uint32_t cache)
{
	struct rx_config c;
	free_cfg(&c, f, app, cache);
	return dt_run_until(&c, conserved_check, thousand_received, NULL);
}

Test(dpdk, free_mixed_is_one_put_per_segment_without_cache)
{
	struct rxr_result *r = free_run(RX_FREE_MIXED, RX_APP_THREAD, 0);
	json_t *d = dx(r);
	cr_assert(rxr_counters_conserved(&r->c));
	cr_assert_gt(r->c.received, 0);
	cr_assert_eq(dt_num(d, "mempool.app.put_calls"), 2.0 * (double)r->c.received);
	cr_assert_eq(dt_num(d, "mempool.app.put_objs"), 2.0 * (double)r->c.received);
	rxr_result_free(r);
}

Test(dpdk, free_per_pool_is_bulk_puts_without_cache)
{
	struct rxr_result *r = free_run(RX_FREE_PER_POOL, RX_APP_THREAD, 0);
	json_t *d = dx(r);
	cr_assert(rxr_counters_conserved(&r->c));
	cr_assert_gt(r->c.received, 0);
	double per_pkt = dt_num(d, "mempool.app.puts_per_pkt");
	/* batches of 32: two puts (one per pool) per batch */
	cr_assert_lt(per_pkt, 2.0 / 32 + 0.01, "%.4f puts per packet", per_pkt);
	cr_assert_eq(dt_num(d, "mempool.app.put_objs"), 2.0 * (double)r->c.received);
	rxr_result_free(r);
}

Test(dpdk, eal_app_has_a_cache)
{
	struct rx_config c;
	free_cfg(&c, RX_FREE_MIXED, RX_APP_EAL, 256);
	struct rxr_result *r = dt_run_until(&c, conserved_check, thousand_received, NULL);
	json_t *d = dx(r);
	/* the EAL lcore's cache absorbs the alternating puts */
	cr_assert_lt(dt_num(d, "mempool.app.puts_per_pkt"), 0.2);
	rxr_result_free(r);
}

/* Every run conserves and never duplicates. */
static void nombuf_check(const struct rxr_result *r, void *arg)
{
	(void)arg;
	cr_assert(rxr_counters_conserved(&r->c));
	cr_assert_eq(dt_num(dx(r), "seq.dup"), 0);
}

static bool nombuf_seen(const struct rxr_result *r, void *arg, char *why, size_t len)
{
	(void)arg;
	return dt_num(dx(r), "rx_nombuf") > 0 || dt_short_of(why, len, "no allocation failed");
}

Test(dpdk, nombuf_when_the_pool_is_too_small)
{
	struct rx_config c;
	cfg_base(&c, "sim");
	c.mode = RX_MODE_HDS;
	c.ring = 256;
	c.batch = 32;
	c.hring = 64;
	c.buffers = 300;
	c.mempool_cache = 0;
	c.rate_pps = 2e6;
	c.app = RX_APP_THREAD;
	c.allow_oversubscribe = true;
	c.inject[RXP_ST_APP] = 200000; /* a slow app holds the buffers */
	/* a host too busy to run the slow app at all in 0.25 s leaves the
	 * pool full: wait on the condition, with a bound */
	struct rxr_result *r = dt_run_until(&c, nombuf_check, nombuf_seen, NULL);
	cr_assert_gt(r->c.out_of_buffer + r->c.nombuf, 0);
	rxr_result_free(r);
}

Test(dpdk, sequence_gaps_match_losses)
{
	struct rx_config c;
	cfg_base(&c, "sim");
	c.mode = RX_MODE_HDS;
	c.rate_pps = 0; /* as fast as the NIC goes: losses expected */
	struct rxr_result *r = dt_run(&c);
	json_t *d = dx(r);
	assert_conserved(r);
	cr_assert_eq(dt_num(d, "seq.dup"), 0);
	cr_assert_eq(dt_num(d, "seq.tag_errors"), 0);
	cr_assert_eq(dt_num(d, "seq.len_errors"), 0);
	/* gaps are losses before the last received packet */
	cr_assert_leq(dt_num(d, "seq.missing"),
		      (double)(r->c.out_of_buffer + r->c.nombuf + r->c.app_dropped));
	rxr_result_free(r);
}

Test(dpdk, ethdev_null_conserves)
{
	struct rx_config c;
	cfg_base(&c, "dpdk:--vdev=net_null0");
	c.seconds = 0.2;
	struct rxr_result *r = dt_run(&c);
	json_t *d = dx(r);
	assert_conserved(r);
	cr_assert_eq(dt_num(d, "port.ipackets"), (double)(r->c.received + r->c.app_dropped));
	cr_assert_str_eq(json_string_value(json_object_get(d, "backend")), "ethdev");
	rxr_result_free(r);
}

Test(dpdk, ethdev_null_rejects_buffer_split)
{
	struct rx_config c;
	struct rx_caps caps;
	char err[512] = "";
	cfg_base(&c, "dpdk:--vdev=net_null0");
	c.mode = RX_MODE_HDS;
	cr_assert_eq(rx_engine_dpdk.caps(&c, &caps, err, sizeof(err)), 0, "%s", err);
	cr_assert(!caps.buffer_split);
	cr_assert_eq(rx_engine_dpdk.validate(&c, &caps, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "BUFFER_SPLIT"), "%s", err);
}

Test(dpdk, cli_split_on_null_exits_2)
{
	char cmd[512];
	/* the binary is part of every build: its absence is a failure */
	cr_assert_eq(access(RXRAY_BIN, X_OK), 0, "%s is not built", RXRAY_BIN);
	snprintf(cmd, sizeof(cmd),
		 "%s run --engine dpdk --device dpdk:--vdev=net_null0 --mode hds --seconds 0.1 "
		 "-q 2>/dev/null",
		 RXRAY_BIN);
	int st = system(cmd);
	cr_assert(WIFEXITED(st));
	cr_assert_eq(WEXITSTATUS(st), 2);
}

Test(dpdk, eal_reused_for_a_second_run)
{
	struct rx_config c;
	cfg_base(&c, "sim");
	c.rate_pps = 1e6;
	c.seconds = 0.1;
	struct rxr_result *r = dt_run(&c);
	assert_conserved(r);
	rxr_result_free(r);
	/* same process: the EAL stays, pools and rings get fresh names */
	c.mode = RX_MODE_HDS;
	r = dt_run(&c);
	assert_conserved(r);
	rxr_result_free(r);
	/* other EAL arguments cannot be applied to a running EAL */
	struct rx_caps caps;
	char err[512] = "";
	cfg_base(&c, "dpdk:--vdev=net_null0");
	cr_assert_eq(rx_engine_dpdk.caps(&c, &caps, err, sizeof(err)), -EBUSY);
	cr_assert(strstr(err, "fresh process"), "%s", err);
}

/*
 * Calibration (--coalesce B): the RX loop waits for B completions. With
 * CQE compression (the default) a session's k completions sit in k
 * entries only the title of which is written: peeking at entry B-1 waited
 * for ever, the RQ ran dry (the run received about one ring) and, once
 * the wire ended, the loop never did (every coalesced DPDK calibration
 * trial of a sweep was killed at its timeout).
 */
Test(dpdk, a_coalesced_run_counts_compressed_sessions_and_ends, .timeout = 90)
{
	struct rx_config c;
	cfg_base(&c, "sim");
	c.rate_pps = 5e3; /* ~3000 packets, three rings' worth */
	c.seconds = 0.6;
	c.burst = 64;
	c.coalesce = 64;
	c.cqe_comp = RX_CQE_COMP_ON;
	/* far more than the one ring a stalled RQ takes (a ring covers 0.2 s
	 * here: only a host that stops a thread that long loses more). A run
	 * the host disturbed (its validity says so) may be run again, up to
	 * three times: once in CI one received 1,792 of 3,000 and the next
	 * 70 here received all; a stalled RQ loses every time, and a loss in
	 * a run the host left alone fails at once. */
	struct rxr_result *r = NULL;
	for (int attempt = 0; attempt < 3; attempt++) {
		if (r)
			rxr_result_free(r);
		r = dt_run(&c);
		assert_conserved(r);
		if ((double)r->c.received >= 0.6 * (double)r->c.offered)
			break;
		json_t *v = json_object_get(r->extra, "validity");
		bool disturbed = json_is_true(json_object_get(v, "disturbed"));
		/* stderr, not cr_log_warn: Criterion 2.4 ends a program that
		 * logged a warning with status 1 though every test passed */
		fprintf(stderr, "note: coalesced run %d received %llu of %llu (%s)\n", attempt + 1,
			(unsigned long long)r->c.received, (unsigned long long)r->c.offered,
			disturbed ? "the host disturbed it" : "undisturbed");
		if (!disturbed)
			break;
	}
	cr_expect_geq((double)r->c.received, 0.6 * (double)r->c.offered, "received %llu of %llu",
		      (unsigned long long)r->c.received, (unsigned long long)r->c.offered);
	/* still coalesced: the RX thread's polls mostly held full bursts */
	const struct rxr_thread_result *rx = NULL;
	for (size_t i = 0; i < r->nthreads && !rx; i++)
		if (!strcmp(r->threads[i].role, "rx"))
			rx = &r->threads[i];
	cr_assert_not_null(rx);
	const struct rxr_stage_sum *cq = &rx->st[RXP_ST_CQE_POLL];
	cr_expect_gt(cq->count, 0);
	cr_expect_geq((double)cq->packets / (double)cq->count, 16, "%llu packets in %llu laps",
		      (unsigned long long)cq->packets, (unsigned long long)cq->count);
	rxr_result_free(r);
}

/* The validity's ring cover (the time a stalled thread may take before
 * the NIC drops, the bound on a wait that still counts as undisturbed)
 * is what the queue really holds over its rate: DPDK counts an RQ's
 * descriptors in segments, so an hds ring of N holds N/2 packets, and a
 * CQ shallower than the ring holds less again. Counting N for hds let a
 * stall of up to twice the real cover pass as an undisturbed trial. */
static double ring_cover_ms(const struct rxr_result *r)
{
	json_t *lim = json_object_get(json_object_get(r->extra, "validity"), "limits");
	json_t *v = json_object_get(lim, "ring_cover_ms");
	cr_assert(json_is_number(v), "validity.limits.ring_cover_ms missing");
	return json_number_value(v);
}

Test(dpdk, ring_cover_counts_the_packets_a_queue_holds)
{
	static const struct {
		enum rx_mode mode;
		const char *device;
		double want_ms; /* packets held / 1 Mpps */
	} cases[] = {
	    {RX_MODE_SINGLE, "sim", 1.024},	   /* 1024 WQEs of one segment */
	    {RX_MODE_HDS, "sim", 0.512},	   /* 512 WQEs of two */
	    {RX_MODE_SINGLE, "sim:cq=256", 0.256}, /* the CQ holds less */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rx_config c;
		cfg_base(&c, cases[i].device);
		c.mode = cases[i].mode;
		c.discipline = RX_DISC_SCALAR; /* vector wants a CQ as deep as the ring */
		c.rate_pps = 1e6;
		c.seconds = 0.1;
		struct rxr_result *r = dt_run(&c);
		assert_conserved(r);
		double got = ring_cover_ms(r);
		cr_assert(fabs(got - cases[i].want_ms) < 1e-6,
			  "%s %s: ring cover %.6f ms, want %.3f",
			  cases[i].mode == RX_MODE_HDS ? "hds" : "single", cases[i].device, got,
			  cases[i].want_ms);
		rxr_result_free(r);
	}
}

/*
 * A software-NIC run's rates are over the NIC's own phase, the time its
 * offered packets were due in: offered_mpps is the NIC's achieved rate
 * and the asked rate. Over the RX loops' clock (which starts when the
 * last loop polls, after the NIC) the 16-core host read dpdk single 4064
 * B as 12.63 Mpps offered for 12.24 asked (catches: the rates' seconds
 * taken from the RX loops' wait).
 */
Test(dpdk, a_sim_runs_rates_are_over_the_nics_phase)
{
	struct rx_config c;
	cfg_base(&c, "sim");
	c.rate_pps = 2e6;
	c.seconds = 0.1;
	struct rxr_result *r = dt_run(&c);
	assert_conserved(r);
	json_t *nic = json_object_get(r->extra, "nic");
	double nic_s = json_number_value(json_object_get(nic, "seconds"));
	double nic_mpps = json_number_value(json_object_get(nic, "achieved_mpps"));
	cr_assert_gt(nic_s, 0);
	cr_expect(fabs(r->seconds - nic_s) < 1e-9, "run %.6f s, NIC %.6f s", r->seconds, nic_s);
	cr_expect(fabs(r->offered_mpps - nic_mpps) < 1e-6 * nic_mpps, "offered %.6f, NIC %.6f",
		  r->offered_mpps, nic_mpps);
	/* never above the rate asked (a busy host may make it less: the NIC
	 * then says it fell short); trains of 32 round a count up by one */
	cr_expect_leq(r->offered_mpps, 2.0 * 1.005, "offered %.4f Mpps for 2 asked",
		      r->offered_mpps);
	rxr_result_free(r);
}

/* ------------------------------------------------ the MR plan, by layout */

#define MIB ((uintptr_t)1 << 20)
#define HP (2 * MIB)

static struct rxd_mr_plan *plan_of(const struct rxd_mr_pool_mem *pm, uint32_t n)
{
	static struct rxd_mr_plan p;
	cr_assert_eq(rxd_mr_plan(pm, n, 4096, &p), 0);
	return &p;
}

/* Two pools inside one hugepage: the page is registered once, for both. */
Test(dpdk_mr, pools_inside_one_hugepage_share_its_mr)
{
	const uintptr_t base = 64 * HP;
	struct rxd_mr_chunk a = {base + 4096, base + 300000}, b = {base + 300000, base + MIB};
	struct rxd_mr_pool_mem pm[2] = {{&a, 1, HP}, {&b, 1, HP}};
	struct rxd_mr_plan *p = plan_of(pm, 2);
	cr_assert_eq(p->n, 1);
	cr_assert_eq(p->mr[0].start, base);
	cr_assert_eq(p->mr[0].end, base + HP);
	cr_assert_eq(p->pool_mr[0][0], 0);
	cr_assert_eq(p->pool_mr[1][0], 0);
}

/* The same bytes on 4 KiB pages: each pool its own MR, though they touch
 * (a registration that merged across pools would give one). */
Test(dpdk_mr, touching_pools_on_small_pages_keep_their_own_mrs)
{
	const uintptr_t base = 64 * HP;
	struct rxd_mr_chunk a = {base + 4096, base + 300000}, b = {base + 300000, base + MIB};
	struct rxd_mr_pool_mem pm[2] = {{&a, 1, 4096}, {&b, 1, 4096}};
	struct rxd_mr_plan *p = plan_of(pm, 2);
	cr_assert_eq(p->n, 2);
	/* widened to 4 KiB pages: the page they share is in both */
	cr_assert_eq(p->mr[0].start, base + 4096);
	cr_assert_eq(p->mr[0].end, base + 303104);
	cr_assert_eq(p->mr[1].start, base + 299008);
	cr_assert_eq(p->mr[1].end, base + MIB);
	cr_assert_neq(p->pool_mr[0][0], p->pool_mr[1][0]);
}

/* A pool that reaches a hugepage's last byte is not "inside" it (the
 * PMD's test is end < page end): its own range, not the page. */
Test(dpdk_mr, a_pool_ending_at_the_page_end_is_not_inside_it)
{
	const uintptr_t base = 64 * HP;
	struct rxd_mr_chunk a = {base + MIB, base + HP};
	struct rxd_mr_pool_mem pm[1] = {{&a, 1, HP}};
	struct rxd_mr_plan *p = plan_of(pm, 1);
	cr_assert_eq(p->n, 1);
	cr_assert_eq(p->mr[0].start, base + MIB);
	cr_assert_eq(p->mr[0].end, base + HP);
}

/* A large pool beside a small one in the small one's page: MRs that
 * overlap; a pool's chunks that touch (after widening) merge. */
Test(dpdk_mr, chunks_merge_where_they_touch)
{
	const uintptr_t base = 64 * HP;
	struct rxd_mr_chunk a = {base + 4096, base + 8192};
	struct rxd_mr_chunk b[3] = {{base + 3 * HP, base + 4 * HP},
				    {base + MIB, base + HP},
				    {base + HP, base + 3 * HP - 100}};
	struct rxd_mr_chunk c[2] = {{base + 10 * HP, base + 10 * HP + 8192},
				    {base + 10 * HP + 65536, base + 11 * HP - 4096}};
	struct rxd_mr_pool_mem pm[3] = {{&a, 1, HP}, {b, 3, HP}, {c, 2, HP}};
	struct rxd_mr_plan *p = plan_of(pm, 3);
	cr_assert_eq(p->n, 3);
	cr_assert_eq(p->pool_nmr[0], 1);
	cr_assert_eq(p->mr[p->pool_mr[0][0]].end, base + HP);
	/* b: [1M, HP), [HP, 3HP - 100 widened to 3HP) and [3HP, 4HP) touch:
	 * one range, over part of a's page */
	cr_assert_eq(p->pool_nmr[1], 1);
	cr_assert_eq(p->mr[p->pool_mr[1][0]].start, base + MIB);
	cr_assert_eq(p->mr[p->pool_mr[1][0]].end, base + 4 * HP);
	/* c: a gap between its chunks, but all of it inside one page: that
	 * page, one MR */
	cr_assert_eq(p->pool_nmr[2], 1);
	cr_assert_eq(p->mr[p->pool_mr[2][0]].start, base + 10 * HP);
	cr_assert_eq(p->mr[p->pool_mr[2][0]].end, base + 11 * HP);
}

Test(dpdk_mr, a_gap_across_pages_makes_two_mrs)
{
	const uintptr_t base = 64 * HP;
	struct rxd_mr_chunk c[2] = {{base, base + HP + 8192}, {base + 2 * HP, base + 3 * HP}};
	struct rxd_mr_pool_mem pm[1] = {{c, 2, HP}};
	struct rxd_mr_plan *p = plan_of(pm, 1);
	cr_assert_eq(p->n, 2);
	cr_assert_eq(p->mr[0].end, base + HP + 8192);
	cr_assert_eq(p->mr[1].start, base + 2 * HP);
}

Test(dpdk_mr, bad_layouts_are_refused)
{
	struct rxd_mr_plan p;
	struct rxd_mr_chunk a = {4096, 8192};
	struct rxd_mr_pool_mem none = {&a, 0, HP}, odd = {&a, 1, 3000};
	cr_assert_eq(rxd_mr_plan(&none, 1, 4096, &p), -EINVAL);
	cr_assert_eq(rxd_mr_plan(&odd, 1, 4096, &p), -EINVAL);
	cr_assert_eq(rxd_mr_plan(&none, 0, 0, &p), -EINVAL);
	cr_assert_eq(rxd_mr_plan(&none, RXD_MR_POOL_MAX + 1, 4096, &p), -E2BIG);
}

/* The bottom half over overlapping regions: the last region starting at
 * or below the address may end before it while an earlier one covers it. */
Test(dpdk_mr, the_bottom_half_finds_a_covering_region_behind_a_nested_one)
{
	struct rxd_mr_table t = {0};
	struct rxd_mr_cache c;
	cr_assert_eq(rxd_mr_table_add(&t, 0x10000, 0x20000, 7), 0);
	cr_assert_eq(rxd_mr_table_add(&t, 0x11000, 0x12000, 9), 0);
	rxd_mr_cache_init(&c, &t);
	cr_assert_eq(rxd_mr_lookup(&c, 0x11800), 9);
	cr_assert_eq(rxd_mr_lookup(&c, 0x18000), 7);
	cr_assert_eq(rxd_mr_lookup(&c, 0x20000), MLX5_INVALID_LKEY);
	cr_assert_eq(c.misses, 3);
}

/* rxray's statement of DPDK's mempool rules agrees with rte_mempool:
 * the largest cache, the flush threshold a pool must hold, and the mbuf
 * data room the engine asks for. */
Test(dpdk, mempool_rules_match_rte_mempool)
{
	struct rx_config c;
	char note[256] = "", err[256] = "";
	cfg_base(&c, "sim");
	cr_assert_eq(rxd_eal_for_config(&c, note, sizeof(note), err, sizeof(err)), 0, "%s", err);
	const uint32_t caches[] = {1, 3, 101, 256, RX_MEMPOOL_CACHE_MAX};
	for (size_t i = 0; i < sizeof(caches) / sizeof(caches[0]); i++) {
		uint32_t cache = caches[i];
		unsigned n = (unsigned)rx_mempool_cache_flushthresh(cache);
		struct rte_mempool *mp =
		    rte_mempool_create_empty("rules_ok", n, 64, cache, 0, SOCKET_ID_ANY, 0);
		cr_assert_not_null(mp, "cache %u, %u objects refused", cache, n);
		rte_mempool_free(mp);
		mp = rte_mempool_create_empty("rules_short", n - 1, 64, cache, 0, SOCKET_ID_ANY, 0);
		cr_assert_null(mp, "cache %u, %u objects accepted", cache, n - 1);
	}
	cr_assert_null(rte_mempool_create_empty("rules_big", 4096, 64, RX_MEMPOOL_CACHE_MAX + 1, 0,
						SOCKET_ID_ANY, 0));
	cr_assert_eq(rxd_mbuf_room(64), RTE_MBUF_DEFAULT_BUF_SIZE);
	cr_assert_eq(rxd_mbuf_room(2048), RTE_MBUF_DEFAULT_BUF_SIZE);
	cr_assert_eq(rxd_mbuf_room(2049), RTE_PKTMBUF_HEADROOM + 2112);
	cr_assert_eq(rxd_mbuf_hdr_room(54), RTE_PKTMBUF_HEADROOM + 64);
}
