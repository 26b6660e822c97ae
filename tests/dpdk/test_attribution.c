/* SPDX-License-Identifier: MIT */
/*
 * Attribution ground truth on the DPDK engine's paths that test_opdelay.c
 * (scalar, hds) does not run: the vector routine, the app's stages, and
 * the rx and app threads' roles. Each test fails when two stages' (or
 * roles') labels are swapped in the engine; which swap each catches is
 * written above it and in tests/README.md.
 *
 * The technique is test_opdelay.c's: --op-delay adds K clock ticks per
 * real operation (a mempool driver get or put, an MR lookup), paid by the
 * lap the operation ran in, so it must show up in the stage that performs
 * the operation, by K x operations, and nowhere else. --inject, which
 * spins at a lap, always lands in the stage the lap names: it checks a
 * thread's role, never which stage holds the work.
 *
 * Robust on a shared 2-core host: every bound is a share of K (100,000
 * ticks, far above what the host's load moves a stage by), figures are
 * median laps (a preempted lap is an outlier, not the median; a lap's
 * length does not depend on how many packets the host's speed let
 * gather), the rate is low. The delay is K ticks of wall time whatever
 * the load. The one check without K (hdr_read against app, below) is a
 * ratio of two stages' median laps in one run, one of them empty.
 *
 * Not here: the software NIC's own stages (hdr_write, payload_write,
 * cqe_write; tests/simnic) and the scalar routine on two segments
 * (test_opdelay.c).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dpdk_test.h"
#include "rxray/inject.h"

#define K 100000.0

/* As test_opdelay.c: an unoptimised (sanitizer) build or an emulator puts
 * the delay's own bookkeeping on either side of the spin; the bugs these
 * tests are for move a stage by the whole delay (or none of it). */
#if defined(__OPTIMIZE__) && !defined(__SANITIZE_ADDRESS__)
#define TOL_NATIVE 0.15
#define OTHER_NATIVE 0.10
#else
#define TOL_NATIVE 0.35
#define OTHER_NATIVE 0.25
#endif
static bool emulated(void)
{
	return getenv("RXRAY_EMULATOR") != NULL;
}
#define TOL (emulated() ? 0.35 : TOL_NATIVE)
#define OTHER (emulated() ? 0.25 : OTHER_NATIVE)

/* ------------------------------------------------------------ helpers */

static bool has(const struct rxr_thread_result *t, int s)
{
	return (t->stage_mask & (1u << s)) && t->st[s].count;
}

/* Median lap (ticks): 0 when the stage never lapped. */
static double med_lap(const struct rxr_thread_result *t, int s)
{
	return has(t, s) ? (double)t->st[s].p50 : 0;
}

static double dnum(const struct rxr_result *r, const char *path)
{
	return dt_num(json_object_get(r->extra, "dpdk"), path);
}

static const char *sname(int s)
{
	return rxp_stage_name((enum rxp_stage)s);
}

/*
 * The delay must land in stage s of thread d: its median lap rose from the
 * base run b's by K x ops (the delayed operations one of its laps
 * performs), within TOL. Every other busy stage of the thread (but those
 * in `also`, a mask) keeps its median lap within OTHER x K: a delayed
 * operation charged to a stage lengthens its laps by K or more. Laps, not
 * cycles per packet: a lap's length does not depend on how many packets
 * the host's speed let gather.
 */
static void lands_in(const struct rxr_thread_result *b, const struct rxr_thread_result *d, int s,
		     double ops, uint32_t also, const char *what)
{
	double rise = med_lap(d, s) - med_lap(b, s), want = K * ops;
	cr_log_info("%s: %s thread's %s lap rose by %.0f (want K x %.2f = %.0f)", what, d->role,
		    sname(s), rise, ops, want);
	cr_assert_lt(fabs(rise - want), TOL * want,
		     "%s: %s thread's %s median lap rose by %.0f, want K x %.2f operations = %.0f",
		     what, d->role, sname(s), rise, ops, want);
	for (int o = 0; o < RXP_ST_COUNT; o++) {
		if (o == s || rxp_stage_is_wait(o) || (also & (1u << o)))
			continue;
		double mv = med_lap(d, o) - med_lap(b, o);
		cr_assert_lt(fabs(mv), OTHER * K,
			     "%s: %s thread's %s median lap moved by %.0f (K = %.0f, in %s)", what,
			     d->role, sname(o), mv, K, sname(s));
	}
}

/* ------------------------------------------------- vector, --mode single */

/*
 * The vector routine, as --mode single runs it by default (discipline
 * auto): a ring of 64 is refilled 16 WQEs at a time (the replenish
 * threshold is a quarter of a small ring), one bulk mempool get per
 * refill (buf_alloc), then one MR lookup per WQE while its data segment
 * is rewritten (sge_setup), then one doorbell. Packets one a train at 1000
 * per second: a burst holds one packet. The inline app frees each batch
 * of four with one put (free).
 */
static void cfg_vector(struct rx_config *c)
{
	rx_config_defaults(c);
	snprintf(c->engine, sizeof(c->engine), "dpdk");
	snprintf(c->device, sizeof(c->device), "sim:train=1");
	c->mode = RX_MODE_SINGLE;
	c->discipline = RX_DISC_AUTO; /* the default: vector for single */
	c->seconds = 1.0;
	c->rate_pps = 1000;
	c->ring = 64;
	c->burst = 4;
	c->batch = 4;
	c->mempool_cache = 0; /* every get and put reaches the driver */
	c->app = RX_APP_INLINE;
	c->quiet = true;
}

/*
 * Catches: engines/dpdk/sim_vector.c vec_replenish, buf_alloc <->
 * sge_setup (the labels of the bulk get's lap and of the SGE rewrite's
 * lap swapped, in the rxp_lap calls with or without their
 * rxp_stage_begin). The mempool delay then lands in sge_setup: "mempool:
 * rx thread's buf_alloc median lap rose by -384, want K x 1.00
 * operations" fails; the MR delay would land in buf_alloc.
 *
 * buf_alloc and sge_setup lap once per refill each: one bulk get per
 * buf_alloc lap (K a lap), n lookups per sge_setup lap (K x n).
 */
Test(attribution, vector_refill_get_in_buf_alloc_lookup_in_sge_setup, .timeout = 120)
{
	cr_assert_eq(rxp_clock_init(50), 0);
	struct rx_config c;
	cfg_vector(&c);
	struct rxr_result *base = dt_run_ok(&c);
	cr_assert_str_eq(
	    json_string_value(json_object_get(json_object_get(base->extra, "dpdk"), "discipline")),
	    "vector", "--mode single's default routine");
	const struct rxr_thread_result *b = dt_thread(base, "rx");

	/* mempool: one driver get per refill, in buf_alloc; the inline
	 * app's puts (one per batch) in free */
	cfg_vector(&c);
	c.op_delay_mempool = (uint32_t)K;
	/* about 60 refills a run; a host that takes the run's cores leaves
	 * fewer, and its validity says so: such a run is run again, up to
	 * three times (once, beside the other tests on two cores, one made 7) */
	struct rxr_result *mp = NULL;
	double refills = 0;
	for (int attempt = 0; attempt < 3; attempt++) {
		if (mp)
			rxr_result_free(mp);
		mp = dt_run_ok(&c);
		refills = json_number_value(json_object_get(
		    json_array_get(json_object_get(json_object_get(mp->extra, "dpdk"), "sim_queues"),
				   0),
		    "bulk_gets"));
		bool disturbed = json_is_true(
		    json_object_get(json_object_get(mp->extra, "validity"), "disturbed"));
		if (refills > 20 || !disturbed)
			break;
		fprintf(stderr, "note: run %d made %.0f refills of %llu packets offered (the host "
				"disturbed it)\n",
			attempt + 1, refills, (unsigned long long)mp->c.offered);
	}
	const struct rxr_thread_result *d = dt_thread(mp, "rx");
	double gets = dnum(mp, "mempool.rx.get_calls"), puts = dnum(mp, "mempool.rx.put_calls");
	double alaps = (double)d->st[RXP_ST_BUF_ALLOC].count;
	double flaps = (double)d->st[RXP_ST_FREE].count;
	cr_assert_gt(refills, 20, "%.0f refills (offered %llu, received %llu)", refills,
		     (unsigned long long)mp->c.offered, (unsigned long long)mp->c.received);
	cr_assert_float_eq(gets, refills, 0.5, "driver gets %.0f, bulk refills %.0f", gets,
			   refills);
	cr_assert_gt(flaps, 20, "%.0f free laps", flaps);
	lands_in(b, d, RXP_ST_BUF_ALLOC, gets / alaps, 1u << RXP_ST_FREE, "mempool");
	lands_in(b, d, RXP_ST_FREE, puts / flaps, 1u << RXP_ST_BUF_ALLOC, "mempool");

	/* MR lookup: one per WQE rewritten, in sge_setup */
	cfg_vector(&c);
	c.op_delay_mr = (uint32_t)K;
	struct rxr_result *mr = dt_run_ok(&c);
	d = dt_thread(mr, "rx");
	double lookups = dnum(mr, "mr_cache.lookups");
	cr_assert_float_eq(lookups / (double)d->packets, 1.0, 0.05, "lookups per packet %.3f",
			   lookups / (double)d->packets);
	lands_in(b, d, RXP_ST_SGE_SETUP, lookups / (double)d->st[RXP_ST_SGE_SETUP].count, 0, "mr");

	rxr_result_free(base);
	rxr_result_free(mp);
	rxr_result_free(mr);
}

/* ------------------------------------------------------ rx and app roles */

/*
 * The app on its own thread (--app thread, the dpdk engine's non-EAL
 * app), the scalar routine on a single segment, one packet a burst: the
 * rx thread gets one buffer per packet (buf_alloc) and hands batches of
 * four over the ring; the app thread reads them (hdr_read), works (app)
 * and frees each batch with one put (free).
 */
static void cfg_roles(struct rx_config *c)
{
	rx_config_defaults(c);
	snprintf(c->engine, sizeof(c->engine), "dpdk");
	snprintf(c->device, sizeof(c->device), "sim:train=1");
	c->mode = RX_MODE_SINGLE;
	c->discipline = RX_DISC_SCALAR;
	c->seconds = 1.0;
	c->rate_pps = 1000;
	c->ring = 256;
	c->burst = 1;
	c->batch = 4;
	c->hring = 1024; /* more batches than a run has: never full, the rx
			  * thread never frees */
	c->mempool_cache = 0;
	c->app = RX_APP_THREAD;
	c->allow_oversubscribe = true; /* nic + rx + app on a 2-core host */
	c->quiet = true;
}

/*
 * Three polling threads (nic, rx, app) on two cores take turns: the lap
 * that ends a thread's wait for the other one (the app's dequeue,
 * handoff; the rx thread's first poll that finds a completion, cqe_poll)
 * holds whatever time the thread was off its core just before, at times
 * in most of its laps. Those two are not compared; no operation runs in
 * them.
 */
#define WAKE_RX (1u << RXP_ST_CQE_POLL)
#define WAKE_APP (1u << RXP_ST_HANDOFF)

/*
 * Catches:
 * - the rx and app roles swapped in engines/core/run.c run_workers_start
 *   (the rx loop's worker named "app", the app loop's "rx"): "the thread
 *   named rx never polled or allocated" fails;
 * - the two threads' mempool counts swapped: engines/dpdk/worker.c's
 *   rxd_mpops_bind(&q->app_ops) in the app loop and (&q->rx_ops) in the
 *   rx loop exchanged (the app thread's free rose by K, its puts read 0:
 *   "want K x 0.00 operations"), or the "rx" and "app" keys of engine.c's
 *   mempool extras exchanged (the rx thread's buf_alloc likewise);
 * - engines/dpdk/sim_scalar.c buf_alloc <-> sge_setup on a single segment
 *   (buf_alloc "rose by 0, want K"; test_opdelay.c catches it on two).
 * An injection into app must land in the app thread's app stage, none of
 * it in the rx thread.
 */
Test(attribution, rx_gets_in_rx_buf_alloc_app_puts_and_work_in_app, .timeout = 120)
{
	cr_assert_eq(rxp_clock_init(50), 0);
	struct rx_config c;
	cfg_roles(&c);
	struct rxr_result *base = dt_run_ok(&c);
	const struct rxr_thread_result *brx = dt_thread(base, "rx"), *bapp = dt_thread(base, "app");
	/* the roles' stages: the app's on the app thread only */
	cr_assert(has(brx, RXP_ST_BUF_ALLOC) && has(brx, RXP_ST_CQE_POLL),
		  "the thread named rx never polled or allocated: not the rx loop");
	cr_assert(has(bapp, RXP_ST_HDR_READ) && has(bapp, RXP_ST_FREE),
		  "the thread named app never read or freed: not the app loop");
	static const int app_only[] = {RXP_ST_HDR_READ, RXP_ST_APP, RXP_ST_FREE};
	for (size_t i = 0; i < sizeof(app_only) / sizeof(app_only[0]); i++)
		cr_assert(!has(brx, app_only[i]), "the rx thread lapped %s: the app's",
			  sname(app_only[i]));
	static const int rx_only[] = {RXP_ST_CQE_POLL, RXP_ST_BUF_ALLOC, RXP_ST_SGE_SETUP,
				      RXP_ST_CHAIN, RXP_ST_DOORBELL};
	for (size_t i = 0; i < sizeof(rx_only) / sizeof(rx_only[0]); i++)
		cr_assert(!has(bapp, rx_only[i]), "the app thread lapped %s: the rx thread's",
			  sname(rx_only[i]));

	/* mempool: gets on the rx thread (buf_alloc), puts on the app
	 * thread (free), each thread's counted apart */
	cfg_roles(&c);
	c.op_delay_mempool = (uint32_t)K;
	struct rxr_result *mp = dt_run_ok(&c);
	const struct rxr_thread_result *rx = dt_thread(mp, "rx"), *app = dt_thread(mp, "app");
	cr_assert_eq(mp->c.app_dropped, 0, "the hand-off ring dropped %lu packets",
		     (unsigned long)mp->c.app_dropped);
	double gets = dnum(mp, "mempool.rx.get_calls"), puts = dnum(mp, "mempool.app.put_calls");
	cr_assert_gt(rx->st[RXP_ST_BUF_ALLOC].count, 100);
	cr_assert_gt(app->st[RXP_ST_FREE].count, 20);
	lands_in(brx, rx, RXP_ST_BUF_ALLOC, gets / (double)rx->st[RXP_ST_BUF_ALLOC].count, WAKE_RX,
		 "mempool");
	lands_in(bapp, app, RXP_ST_FREE, puts / (double)app->st[RXP_ST_FREE].count, WAKE_APP,
		 "mempool");
	/* what a thread does not do, its counts do not hold */
	cr_assert_eq(dnum(mp, "mempool.rx.put_calls"), 0, "puts counted to the rx thread");
	cr_assert_eq(dnum(mp, "mempool.app.get_calls"), 0, "gets counted to the app thread");

	/* --inject app=K: K per packet in the app thread's app stage */
	cfg_roles(&c);
	c.inject[RXP_ST_APP] = (uint64_t)K;
	struct rxr_result *inj = dt_run_ok(&c);
	rx = dt_thread(inj, "rx");
	app = dt_thread(inj, "app");
	lands_in(bapp, app, RXP_ST_APP,
		 (double)app->st[RXP_ST_APP].packets / (double)app->st[RXP_ST_APP].count, WAKE_APP,
		 "inject app");
	cr_assert(!has(rx, RXP_ST_APP), "the rx thread lapped app");
	for (int s = 0; s < RXP_ST_COUNT; s++)
		if (!rxp_stage_is_wait(s) && !(WAKE_RX & (1u << s)))
			cr_assert_lt(fabs(med_lap(rx, s) - med_lap(brx, s)), OTHER * K,
				     "inject app: the rx thread's %s moved by %.0f", sname(s),
				     med_lap(rx, s) - med_lap(brx, s));

	rxr_result_free(base);
	rxr_result_free(mp);
	rxr_result_free(inj);
}

/* ------------------------------------------------ the app's hdr_read, app */

/*
 * engines/dpdk/worker.c rxd_app_process: hdr_read is the app's first
 * touch of each packet (its mbuf's length, the header's tag and sequence
 * number: the NIC wrote the header from another core), app is an empty
 * lap (the injection point for the application's own work). No operation
 * the dpdk engine can delay runs in either (its --op-delay hdr_read is
 * the verbs engine's: engine.c refuses it), and an injection spins at the
 * lap that names the stage, wherever that lap is: so this test compares
 * the two stages' own cost. Reading a batch of 128 headers costs many
 * times an empty lap's two clock reads, on any host: hdr_read's median
 * lap must be at least four times app's.
 *
 * Catches: worker.c hdr_read <-> app (the read then runs in the lap
 * named app, the lap named hdr_read is empty: "hdr_read's median lap ...
 * is not 4 x app's" fails, e.g. 97 against 5,759), on the inline app (the
 * rx thread) and on the app thread. A check of this swap by K (a delay per
 * header read, as the verbs engine's --op-delay hdr_read has it) needs the
 * dpdk engine to delay its header reads: it does not.
 */
static void cfg_read(struct rx_config *c, enum rx_app app)
{
	rx_config_defaults(c);
	snprintf(c->engine, sizeof(c->engine), "dpdk");
	snprintf(c->device, sizeof(c->device), "sim");
	c->mode = RX_MODE_SINGLE;
	c->seconds = 0.5;
	c->rate_pps = 40000;
	c->ring = 1024;
	c->burst = 32;
	c->batch = 128;
	c->app = app;
	c->allow_oversubscribe = true;
	c->quiet = true;
}

static void read_before_work(enum rx_app which, const char *role)
{
	cr_assert_eq(rxp_clock_init(50), 0);
	struct rx_config c;
	cfg_read(&c, which);
	struct rxr_result *r = dt_run_ok(&c);
	const struct rxr_thread_result *t = dt_thread(r, role);
	cr_assert(has(t, RXP_ST_HDR_READ) && has(t, RXP_ST_APP), "%s thread: no hdr_read or app",
		  role);
	/* one lap of each per batch, with the batch's packets */
	cr_assert_eq(t->st[RXP_ST_HDR_READ].count, t->st[RXP_ST_APP].count);
	cr_assert_eq(t->st[RXP_ST_HDR_READ].packets, t->st[RXP_ST_APP].packets);
	double ppl = (double)t->st[RXP_ST_HDR_READ].packets / (double)t->st[RXP_ST_HDR_READ].count;
	double hr = med_lap(t, RXP_ST_HDR_READ), ap = med_lap(t, RXP_ST_APP);
	cr_log_info("%s: hdr_read median lap %.0f, app %.0f (%.1f packets a lap, lap cost %.0f)",
		    role, hr, ap, ppl, r->clock.lap_cost_cycles);
	cr_assert_gt(ppl, 8, "%.1f packets a batch", ppl);
	cr_assert_geq(hr, 4 * ap,
		      "%s thread: hdr_read's median lap (%.0f cycles, %.1f header reads) is not "
		      "4 x app's (%.0f, nothing but the lap): the header reads are not hdr_read's",
		      role, hr, ppl, ap);
	rxr_result_free(r);
}

Test(attribution, inline_app_reads_headers_in_hdr_read_not_app, .timeout = 60)
{
	read_before_work(RX_APP_INLINE, "rx");
}

Test(attribution, app_thread_reads_headers_in_hdr_read_not_app, .timeout = 60)
{
	read_before_work(RX_APP_THREAD, "app");
}
