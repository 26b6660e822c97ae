/* SPDX-License-Identifier: MIT */
/*
 * The verbs engine end to end, through its ops table, on the software NIC:
 * conservation on every run, both modes, many ring revolutions, sequence
 * numbers, overload -> out_of_buffer, --inject attribution, the app-thread
 * hand-off, several queues, and the mlx5 backend's no-device error (also
 * through the rxray binary when it has the run verb).
 * Runs are 0.3 s: the machine's two cores are shared.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rxray/core.h"
#include "rxray/result.h"
#include "rxray/util.h"
#include "rxray/verbs.h"

static volatile sig_atomic_t never_stop;

static void cfg_base(struct rx_config *c, enum rx_mode mode)
{
	rx_config_defaults(c);
	c->mode = mode;
	c->seconds = 0.3;
	c->ring = 1024;
	c->quiet = true;
}

/* validate exactly as `rxray run` does, then run; the result is returned */
static struct rxr_result *run_cfg(const struct rx_config *c, char *err, size_t errlen, int *rcp)
{
	struct rx_caps caps;
	int rc = rx_engine_verbs.caps(c, &caps, err, errlen);
	if (rc == 0)
		rc = rx_config_validate(c, &caps, err, errlen);
	if (rc == 0)
		rc = rx_engine_verbs.validate(c, &caps, err, errlen);
	struct rxr_result *r = NULL;
	if (rc == 0) {
		rxr_result_open(&r);
		cr_assert_not_null(r);
		rc = rx_run_exec(&rx_engine_verbs, c, r, &never_stop, err, errlen);
	}
	*rcp = rc;
	return r;
}

static struct rxr_result *run_ok(const struct rx_config *c)
{
	char err[512] = "";
	int rc;
	struct rxr_result *r = run_cfg(c, err, sizeof(err), &rc);
	cr_assert_eq(rc, 0, "run failed: %d %s", rc, err);
	return r;
}

static const struct rxr_thread_result *thread_of(const struct rxr_result *r, const char *role)
{
	for (size_t i = 0; i < r->nthreads; i++)
		if (!strcmp(r->threads[i].role, role))
			return &r->threads[i];
	return NULL;
}

static double stage_cpp(const struct rxr_result *r, const char *role, enum rxp_stage s)
{
	const struct rxr_thread_result *t = thread_of(r, role);
	cr_assert_not_null(t, "no %s thread", role);
	const struct rxr_stage_sum *ss = &t->st[s];
	return ss->packets ? (double)ss->cycles / (double)ss->packets : 0;
}

static json_int_t verbs_extra_int(const struct rxr_result *r, const char *key)
{
	json_t *v = json_object_get(r->extra, "verbs");
	cr_assert_not_null(v, "no extra.verbs");
	json_t *k = json_object_get(v, key);
	cr_assert(json_is_integer(k), "extra.verbs.%s missing", key);
	return json_integer_value(k);
}

/*
 * The software NIC reports when it could not reach its paced target: on
 * two cores shared with other work that means this process was starved,
 * and a figure that needs throughput says nothing. Skip visibly.
 */
static void skip_if_starved(const struct rxr_result *r)
{
	json_t *nic = json_object_get(r->extra, "nic");
	if (json_is_true(json_object_get(nic, "generator_limited")))
		cr_skip_test("machine overloaded: the software NIC offered only %.3f Mpps of its target",
			     r->offered_mpps);
}

/* What every run must satisfy. */
static void check_run(const struct rxr_result *r)
{
	const struct rxr_counters *c = &r->c;
	cr_assert(rxr_counters_conserved(c),
		  "not conserved: offered %lu != received %lu + oob %lu + nombuf %lu + app_dropped %lu",
		  (unsigned long)c->offered, (unsigned long)c->received,
		  (unsigned long)c->out_of_buffer, (unsigned long)c->nombuf,
		  (unsigned long)c->app_dropped);
	cr_assert_gt(c->received, 0);
	cr_assert_eq(c->nombuf, 0);
	cr_assert_eq(c->errors, 0, "errors %lu", (unsigned long)c->errors);
	cr_assert_eq(verbs_extra_int(r, "sequence_faults"), 0);
	cr_assert_not_null(thread_of(r, "nic"));
	cr_assert_not_null(thread_of(r, "rx"));
	/* the document round-trips through the reader */
	json_t *doc = rxr_result_to_json(r);
	cr_assert_not_null(doc);
	char err[256] = "";
	struct rxr_result *back = NULL;
	rxr_result_from_json(doc, "test", &back, err, sizeof(err));
	cr_assert_not_null(back, "reader rejected the result: %s", err);
	cr_assert_eq(back->c.offered, c->offered);
	rxr_result_free(back);
	json_decref(doc);
}

Test(verbs_run, single_conserves)
{
	struct rx_config c;
	cfg_base(&c, RX_MODE_SINGLE);
	struct rxr_result *r = run_ok(&c);
	check_run(r);
	cr_assert_gt(stage_cpp(r, "rx", RXP_ST_CQE_POLL), 0);
	cr_assert_gt(stage_cpp(r, "rx", RXP_ST_HDR_READ), 0); /* inline app on 2 cores */
	rxr_result_free(r);
}

Test(verbs_run, hds_conserves)
{
	struct rx_config c;
	cfg_base(&c, RX_MODE_HDS);
	c.split = 64;
	struct rxr_result *r = run_ok(&c);
	check_run(r);
	cr_assert_eq(verbs_extra_int(r, "hdr_slot_bytes"), 64);
	cr_assert_eq(verbs_extra_int(r, "payload_slot_bytes"), 1024); /* 1000 up to 64 */
	/* every stage of the fixed-slot path was measured */
	enum rxp_stage st[] = {RXP_ST_CQE_POLL, RXP_ST_HDR_READ, RXP_ST_APP, RXP_ST_FREE,
			       RXP_ST_SGE_SETUP, RXP_ST_DOORBELL};
	for (size_t i = 0; i < sizeof(st) / sizeof(st[0]); i++)
		cr_assert_gt(stage_cpp(r, "rx", st[i]), 0, "stage %s", rxp_stage_name(st[i]));
	rxr_result_free(r);
}

/*
 * Calibration (--coalesce B) past the warm-up: the warm-up's drain ends
 * with the wire quiet, which switches coalescing off; the measured phase
 * must turn it back on. It did not: every coalesced verbs calibration
 * trial of a sweep polled 1-1.2 packets per lap, like a plain one.
 */
Test(verbs_run, coalescing_survives_the_warm_up)
{
	struct rx_config c;
	cfg_base(&c, RX_MODE_HDS);
	c.rate_pps = 2e4; /* the warm-up uses the 1024 WQEs in ~50 ms */
	c.burst = 64;
	c.coalesce = 64;
	cr_assert_eq(c.warmup, RX_WARMUP_AUTO);
	struct rxr_result *r = run_ok(&c);
	check_run(r);
	json_t *warm = json_object_get(r->extra, "warmup");
	cr_assert_gt(json_integer_value(json_object_get(warm, "offered")), 0, "no warm-up ran");
	const struct rxr_thread_result *rx = thread_of(r, "rx");
	cr_assert_not_null(rx);
	const struct rxr_stage_sum *cq = &rx->st[RXP_ST_CQE_POLL];
	cr_assert_gt(cq->count, 0);
	/* full bursts, but for the drain at the end; uncoalesced at this
	 * rate a lap holds about one packet */
	cr_assert_geq((double)cq->packets / (double)cq->count, 16, "%llu packets in %llu laps",
		      (unsigned long long)cq->packets, (unsigned long long)cq->count);
	rxr_result_free(r);
}

/* A 16-slot ring turned over thousands of times: slot reuse stays exact. */
Test(verbs_run, many_revolutions)
{
	struct rx_config c;
	cfg_base(&c, RX_MODE_HDS);
	c.seconds = 0.5;
	c.rate_pps = 1e6;
	c.ring = 16;
	c.batch = 8;
	c.burst = 8;
	/* Unloaded, this is tens of thousands; a slot-reuse stall stops at 1.
	 * A 16-slot ring covers 16 us at this rate, so a host that takes the
	 * rx thread's core drops most packets: a run the host disturbed (its
	 * validity says so) is run again, up to three times (once, beside
	 * the other tests on two cores, one received 1,424). A stall loses
	 * every time, and a run the host left alone is judged at once. */
	struct rxr_result *r = NULL;
	for (int attempt = 0; attempt < 3; attempt++) {
		if (r)
			rxr_result_free(r);
		r = run_ok(&c);
		check_run(r);
		if (r->c.received / c.ring > 200)
			break;
		bool disturbed = json_is_true(
		    json_object_get(json_object_get(r->extra, "validity"), "disturbed"));
		fprintf(stderr, "note: run %d turned the ring %lu times (%s)\n", attempt + 1,
			(unsigned long)(r->c.received / c.ring),
			disturbed ? "the host disturbed it" : "undisturbed");
		if (!disturbed)
			break;
	}
	if (r->c.received / c.ring <= 200)
		skip_if_starved(r);
	cr_assert_gt(r->c.received / c.ring, 200, "only %lu revolutions",
		     (unsigned long)(r->c.received / c.ring));
	rxr_result_free(r);
}

/* Per queue the numbers never seen equal what was counted as dropped. */
Test(verbs_run, sequence_accounts_for_every_gap)
{
	struct rx_config c;
	cfg_base(&c, RX_MODE_SINGLE);
	c.ring = 128;
	c.batch = 64;
	c.inject[RXP_ST_APP] = 300; /* slow enough that the NIC finds no WQE at times */
	struct rxr_result *r = run_ok(&c);
	check_run(r);
	json_t *q0 = json_array_get(json_object_get(json_object_get(r->extra, "verbs"), "queues"), 0);
	cr_assert_not_null(q0);
	json_int_t gaps = json_integer_value(json_object_get(q0, "seq_gaps"));
	json_int_t oob = json_integer_value(json_object_get(q0, "out_of_buffer"));
	cr_assert_gt(oob, 0);
	cr_assert_gt(gaps, 0, "drops inside the run must show as sequence gaps");
	cr_assert_leq(gaps, oob);
	cr_assert_eq(json_integer_value(json_object_get(q0, "seq_dup")), 0);
	cr_assert_eq(json_integer_value(json_object_get(q0, "seq_uncounted")), 0);
	rxr_result_free(r);
}

/* Offered above what the RX side can take: out_of_buffer, still conserved. */
Test(verbs_run, overload_counts_out_of_buffer)
{
	struct rx_config c;
	cfg_base(&c, RX_MODE_HDS);
	c.rate_pps = 2e6;
	c.inject[RXP_ST_HDR_READ] = 3000; /* capacity well under 1 Mpps */
	struct rxr_result *r = run_ok(&c);
	check_run(r);
	cr_assert_gt(r->c.out_of_buffer, 0);
	cr_assert_gt(r->loss, 0.2, "loss %.3f", r->loss);
	rxr_result_free(r);
}

/* The rx thread's entry for a stage in the run's in-run A/B figures
 * (extra.inject_ab), or fail. */
static json_t *ab_entry(const struct rxr_result *r, enum rxp_stage s)
{
	json_t *arr = json_object_get(r->extra, "inject_ab"), *e;
	size_t i;
	json_array_foreach(arr, i, e)
	{
		if (!strcmp(json_string_value(json_object_get(e, "role")), "rx") &&
		    !strcmp(json_string_value(json_object_get(e, "stage")), rxp_stage_name(s)))
			return e;
	}
	cr_assert_fail("no inject_ab entry for rx %s", rxp_stage_name(s));
	return NULL;
}

static double ab_num(json_t *e, const char *key)
{
	json_t *v = json_object_get(e, key);
	cr_assert(json_is_number(v), "inject_ab %s: no %s",
		  json_string_value(json_object_get(e, "stage")), key);
	return json_number_value(v);
}

/*
 * --inject STAGE=N raises that stage's cycles/packet by about N, measured
 * in one run (--inject-ab: the stage's laps take turns spun and not, and
 * laps of one packet count are paired), so a process's own speed drops
 * out: the ASan build's median lap moves by a few hundred cycles from one
 * process to the next, and a comparison of two runs failed CI once at
 * 0.89 x N. Catches a spin that is not added (~0), one paid per lap
 * instead of per packet or twice (a multiple), and a spin charged to the
 * stage that follows (the neighbour moves by N).
 */
Test(verbs_run, inject_raises_the_stage)
{
	if (getenv("RXRAY_EMULATOR")) /* set by ctest in a cross build (tools/test.sh arm64) */
		cr_skip_test("under %s a lap's length is the emulator's, not the code's: the "
			     "lap bounds need a real CPU",
			     getenv("RXRAY_EMULATOR"));
	/* large against what a neighbour moves for reasons that are not
	 * attribution (a spin changes when the NIC thread writes the next
	 * header: a header read that takes a cross-core miss moves by ~200-300
	 * in a comparison of two runs; in pairs, -6 to +13 were seen in both
	 * builds), and inside the pairs' bins (< 3,072 a packet). The pairs
	 * gave 0.995-1.002 x N in both builds on the 2-core VM. */
	const double inj = 1500;
	struct rx_config c;
	cfg_base(&c, RX_MODE_HDS);
	c.rate_pps = 50e3;
	c.inject_ab = true;
	/* one packet a train: every burst holds one packet, so hdr_read laps
	 * per burst and sge_setup per batch, as the pairing below expects */
	snprintf(c.device, sizeof(c.device), "sim:train=1");
	enum rxp_stage st[] = {RXP_ST_HDR_READ, RXP_ST_SGE_SETUP};
	for (size_t i = 0; i < sizeof(st) / sizeof(st[0]); i++) {
		struct rx_config ci = c;
		ci.inject[st[i]] = (uint64_t)inj;
		struct rxr_result *r = run_ok(&ci);
		check_run(r);
		const char *name = rxp_stage_name(st[i]);
		json_t *e = ab_entry(r, st[i]);
		/* every packet of the spun half pays N: that half's mean is at
		 * least N */
		json_t *half = json_object_get(e, "injected");
		double spun = ab_num(half, "cycles") / ab_num(half, "packets");
		cr_assert_geq(spun, inj, "%s: the spun laps' mean %.1f is below the injected %.0f",
			      name, spun, inj);
		/* paired laps differ by N a packet, not a multiple or a fraction */
		double dm = ab_num(e, "added_trimmed_cycles_per_packet");
		cr_assert(dm > inj * 0.95 && dm < inj * 1.1,
			  "%s rose by %.1f in its pairs, injected %.0f", name, dm, inj);
		/* by parts (its own work paired, the spins summed): N too, and
		 * the work alone moved by little against N */
		double bp = ab_num(e, "added_by_parts_cycles_per_packet");
		double wk = ab_num(json_object_get(e, "work"), "added_trimmed_cycles_per_packet");
		cr_assert(bp > inj * 0.95 && bp < inj * 1.05,
			  "%s rose by %.1f by parts, injected %.0f", name, bp, inj);
		cr_assert_lt(fabs(wk), inj * 0.05, "%s's own work moved %.1f", name, wk);
		/* a stage not injected stays put: in the same pairs, or, where
		 * it laps per burst and the injected stage per batch (sge_setup:
		 * the rx thread reposts once a batch is released, not on idle
		 * polls while the NIC has half the ring), over the halves' means,
		 * its pairs then only the laps at a half's change (sparse: null) */
		enum rxp_stage other = st[i] == RXP_ST_HDR_READ ? RXP_ST_APP : RXP_ST_HDR_READ;
		json_t *oe = ab_entry(r, other);
		bool sparse = st[i] == RXP_ST_SGE_SETUP;
		cr_assert_eq(json_is_null(json_object_get(oe, "added_trimmed_cycles_per_packet")),
			     sparse, "%s's pairs with %s injected: %s", rxp_stage_name(other), name,
			     sparse ? "not marked sparse" : "missing");
		double od = ab_num(oe, sparse ? "added_cycles_per_packet"
					      : "added_trimmed_cycles_per_packet");
		cr_log_info("%s=%.0f: spun half %.1f, pairs +%.1f, %s %+.1f", name, inj, spun, dm,
			    rxp_stage_name(other), od);
		cr_assert_lt(fabs(od), inj * 0.1, "%s moved by %.1f with %s injected",
			     rxp_stage_name(other), od, name);
		rxr_result_free(r);
	}
}

/* The app on its own thread: bursts cross the SPSC ring. */
Test(verbs_run, app_thread_handoff)
{
	struct rx_config c;
	cfg_base(&c, RX_MODE_HDS);
	c.app = RX_APP_THREAD;
	c.allow_oversubscribe = true; /* nic + rx + app on 2 cores */
	c.rate_pps = 200e3;
	struct rxr_result *r = run_ok(&c);
	check_run(r);
	cr_assert_not_null(thread_of(r, "app"));
	cr_assert_gt(stage_cpp(r, "rx", RXP_ST_HANDOFF), 0);
	cr_assert_gt(stage_cpp(r, "app", RXP_ST_HDR_READ), 0);
	cr_assert_gt(stage_cpp(r, "app", RXP_ST_FREE), 0);
	cr_assert_eq(thread_of(r, "rx")->st[RXP_ST_HDR_READ].count, 0,
		     "hdr_read belongs to the app thread");
	rxr_result_free(r);
}

/* A hand-off ring too small for the app's pace drops, and says so. */
Test(verbs_run, app_ring_full_counts_app_dropped)
{
	struct rx_config c;
	cfg_base(&c, RX_MODE_SINGLE);
	c.app = RX_APP_THREAD;
	c.allow_oversubscribe = true;
	c.hring = 64;
	c.batch = 8; /* the app takes at most 8 packets a lap */
	c.burst = 8;
	c.inject[RXP_ST_APP] = 20000; /* an app far slower than any NIC here */
	struct rxr_result *r = run_ok(&c);
	check_run(r);
	cr_assert_gt(r->c.app_dropped, 0, "offered %lu, received %lu, out_of_buffer %lu in %.3f s",
		     (unsigned long)r->c.offered, (unsigned long)r->c.received,
		     (unsigned long)r->c.out_of_buffer, r->seconds);
	rxr_result_free(r);
}

Test(verbs_run, two_queues)
{
	struct rx_config c;
	cfg_base(&c, RX_MODE_HDS);
	c.queues = 2;
	c.allow_oversubscribe = true;
	c.rate_pps = 400e3;
	struct rxr_result *r = run_ok(&c);
	check_run(r);
	json_t *qs = json_object_get(json_object_get(r->extra, "verbs"), "queues");
	cr_assert_eq(json_array_size(qs), 2);
	for (size_t i = 0; i < 2; i++) {
		json_t *q = json_array_get(qs, i);
		cr_assert_gt(json_integer_value(json_object_get(q, "received")), 0, "queue %zu idle", i);
		cr_assert_eq(json_integer_value(json_object_get(q, "seq_uncounted")), 0);
	}
	size_t rx = 0;
	for (size_t i = 0; i < r->nthreads; i++)
		rx += !strcmp(r->threads[i].role, "rx");
	cr_assert_eq(rx, 2);
	rxr_result_free(r);
}

Test(verbs_run, engine_rejects)
{
	struct rx_config c;
	struct rx_caps caps;
	char err[512];
	cfg_base(&c, RX_MODE_HDS);
	cr_assert_eq(rx_engine_verbs.caps(&c, &caps, err, sizeof(err)), 0, "%s", err);
	c.split = 40; /* the sequence number would land in the payload */
	cr_assert_eq(rx_engine_verbs.validate(&c, &caps, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "split:"), "%s", err);
	cfg_base(&c, RX_MODE_SINGLE);
	c.ring = 65536;
	cr_assert_eq(rx_engine_verbs.validate(&c, &caps, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "ring:"), "%s", err);
	cfg_base(&c, RX_MODE_SINGLE);
	snprintf(c.device, sizeof(c.device), "bogus:0");
	cr_assert_eq(rx_engine_verbs.caps(&c, &caps, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "device:"), "%s", err);
}

Test(verbs_run, mlx5_no_device)
{
	struct rx_config c;
	struct rx_caps caps;
	char err[512] = "";
	cfg_base(&c, RX_MODE_HDS);
	snprintf(c.device, sizeof(c.device), "mlx5:mlx5_0");
	int rc = rx_engine_verbs.caps(&c, &caps, err, sizeof(err));
	if (rc == 0)
		cr_skip_test("an RDMA device is present here: no-device path not reachable");
	cr_assert_eq(rc, -ENODEV, "rc %d: %s", rc, err);
	cr_assert(!strncmp(err, "no RDMA device: ", 16), "got '%s'", err);
	struct rxr_result *r = NULL;
	rxr_result_open(&r);
	rc = rx_run_exec(&rx_engine_verbs, &c, r, &never_stop, err, sizeof(err));
	cr_assert_eq(rc, -ENODEV);
	cr_assert(!strncmp(err, "no RDMA device: ", 16), "got '%s'", err);
	cr_assert_eq(r->nthreads, 0);
	rxr_result_free(r);
}

/* `rxray run` answers the same: exit 1 and the line on stderr. */
Test(verbs_run, mlx5_no_device_cli)
{
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "%s run --help >/dev/null 2>&1", RXRAY_BIN);
	int st = system(cmd);
	/* the run verb is built with every engine: a failing --help is a failure */
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "`rxray run --help` failed");
	snprintf(cmd, sizeof(cmd),
		 "%s run --engine verbs --device mlx5:mlx5_0 --mode hds --seconds 0.2 2>&1 >/dev/null",
		 RXRAY_BIN);
	FILE *f = popen(cmd, "r");
	cr_assert_not_null(f);
	char out[2048] = "";
	size_t n = fread(out, 1, sizeof(out) - 1, f);
	out[n] = '\0';
	st = pclose(f);
	if (strstr(out, "no RDMA device") == NULL && WIFEXITED(st) && WEXITSTATUS(st) == 0)
		cr_skip_test("an RDMA device is present here");
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 1, "exit %d, stderr: %s", WEXITSTATUS(st), out);
	cr_assert(strstr(out, "no RDMA device: "), "stderr: %s", out);
}

/* The acceptance command, shortened: exit 0 and a readable result. */
Test(verbs_run, cli_hds_run_writes_result)
{
	char cmd[1024], path[] = "/tmp/rxray-verbs-test-XXXXXX";
	snprintf(cmd, sizeof(cmd), "%s run --help >/dev/null 2>&1", RXRAY_BIN);
	int st = system(cmd);
	/* the run verb is built with every engine: a failing --help is a failure */
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "`rxray run --help` failed");
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	close(fd);
	snprintf(cmd, sizeof(cmd),
		 "%s run --engine verbs --device sim --mode hds --frame 1064 --seconds 0.3 -o %s --quiet",
		 RXRAY_BIN, path);
	st = system(cmd);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "exit %d", WEXITSTATUS(st));
	char err[256] = "";
	struct rxr_result *r = NULL;
	rxr_result_read(path, &r, err, sizeof(err));
	unlink(path);
	cr_assert_not_null(r, "reader: %s", err);
	cr_assert(rxr_counters_conserved(&r->c));
	cr_assert_gt(r->c.received, 0);
	cr_assert_eq(r->c.errors, 0);
	cr_assert_not_null(thread_of(r, "rx"));
	cr_assert_not_null(thread_of(r, "nic"));
	rxr_result_free(r);
}

/*
 * Attribution ground truth for the verbs path (--op-delay): a delay owed
 * by an operation (a slot's repost, the RQ doorbell record, a header the
 * app reads) is paid by the lap the operation ran in, so it must show in
 * the stage that performs it and in no other. Swap two laps' labels in
 * verbs_dp.c (hdr_read and app, sge_setup and doorbell) and the delay
 * rises in the wrong stage: this fails. One packet per lap (1,000 pps,
 * inline app), so a stage's median lap is its typical cost and the laps a
 * preempted thread stretches drop out; the delay is K ticks of wall time
 * whatever the host's load. Bounds as tests/dpdk/test_opdelay.c has them.
 */
#define OD_K 100000.0
#if defined(__OPTIMIZE__) && !defined(__SANITIZE_ADDRESS__)
#define OD_TOL_NATIVE 0.15
#else
#define OD_TOL_NATIVE 0.35
#endif
#define OD_TOL (getenv("RXRAY_EMULATOR") ? 0.35 : OD_TOL_NATIVE)

static void od_cfg(struct rx_config *c)
{
	cfg_base(c, RX_MODE_HDS);
	c->seconds = 1.0;
	c->rate_pps = 1000;
	c->burst = 1; /* one packet per poll ... */
	c->batch = 1; /* ... one repost and one doorbell after it: every lap one */
	c->app = RX_APP_INLINE;
}

/* Median lap x laps / thread packets: a stage's typical cost per packet. */
static double od_med_cpp(const struct rxr_thread_result *t, int s)
{
	if (!t->packets || !(t->stage_mask & (1u << s)))
		return 0;
	return (double)t->st[s].p50 * (double)t->st[s].count / (double)t->packets;
}

static double od_queue0(const struct rxr_result *r, const char *key)
{
	json_t *q = json_array_get(json_object_get(json_object_get(r->extra, "verbs"), "queues"), 0);
	json_t *v = json_object_get(q, key);
	cr_assert(json_is_integer(v), "extra.verbs.queues[0].%s missing", key);
	return (double)json_integer_value(v);
}

/* The rise in `stage` is want (within OD_TOL); no other busy stage of the
 * rx thread moves by 5% of it. */
static void od_check(const struct rxr_result *base, const struct rxr_result *d, int stage,
		     double want, const char *what)
{
	const struct rxr_thread_result *b = thread_of(base, "rx"), *t = thread_of(d, "rx");
	cr_assert(b && t);
	double rise = od_med_cpp(t, stage) - od_med_cpp(b, stage);
	cr_log_info("%s: %s rose by %.0f cycles/packet, want %.0f (laps %lu, p50 %lu, packets %lu)",
		    what, rxp_stage_name((enum rxp_stage)stage), rise, want,
		    (unsigned long)t->st[stage].count, (unsigned long)t->st[stage].p50,
		    (unsigned long)t->packets);
	cr_assert_lt(fabs(rise - want), OD_TOL * want, "%s: %s rose by %.0f cycles/packet, want %.0f",
		     what, rxp_stage_name((enum rxp_stage)stage), rise, want);
	for (int s = 0; s < RXP_ST_COUNT; s++) {
		if (s == stage || rxp_stage_is_wait(s))
			continue;
		double mv = od_med_cpp(t, s) - od_med_cpp(b, s);
		cr_assert_lt(fabs(mv), 0.05 * want,
			     "%s: %s moved by %.0f cycles/packet (the delay is %.0f in %s)", what,
			     rxp_stage_name((enum rxp_stage)s), mv, want,
			     rxp_stage_name((enum rxp_stage)stage));
	}
}

Test(verbs_run, each_op_delay_lands_in_the_stage_that_performs_it, .timeout = 110)
{
	cr_assert_eq(rxp_clock_init(50), 0);
	struct rx_config c;
	od_cfg(&c);
	struct rxr_result *base = run_ok(&c);
	check_run(base);

	/* repost: one per slot reposted, in sge_setup */
	od_cfg(&c);
	c.op_delay_repost = (uint32_t)OD_K;
	struct rxr_result *rp = run_ok(&c);
	check_run(rp);
	double pk = (double)thread_of(rp, "rx")->packets;
	od_check(base, rp, RXP_ST_SGE_SETUP, OD_K * od_queue0(rp, "wqes_reposted") / pk, "repost");

	/* doorbell record: one per doorbell, in doorbell */
	od_cfg(&c);
	c.op_delay_dbrec = (uint32_t)OD_K;
	struct rxr_result *db = run_ok(&c);
	check_run(db);
	pk = (double)thread_of(db, "rx")->packets;
	od_check(base, db, RXP_ST_DOORBELL, OD_K * od_queue0(db, "doorbells") / pk, "dbrec");

	/* header read: one per packet the app reads, in hdr_read */
	od_cfg(&c);
	c.op_delay_hdr_read = (uint32_t)OD_K;
	struct rxr_result *hr = run_ok(&c);
	check_run(hr);
	od_check(base, hr, RXP_ST_HDR_READ, OD_K, "hdr_read");

	rxr_result_free(base);
	rxr_result_free(rp);
	rxr_result_free(db);
	rxr_result_free(hr);
}
