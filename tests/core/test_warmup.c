/* SPDX-License-Identifier: MIT */
/*
 * The warm-up phase (core run.c): the run first runs at its rate until
 * every WQE was used once, then counters and laps start. Warm-up packets
 * are not counted, counters conserve across the boundary, and the
 * sequence checks (which run on across it) find no fault.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "rxray/engines.h"
#include "rxray/result.h"

static struct rxr_result *run(const char *engine, double rate, double seconds, uint32_t ring,
			      enum rx_warmup w, uint64_t app_inject)
{
	struct rx_config c;
	char err[512] = "";
	rx_config_defaults(&c);
	snprintf(c.engine, sizeof(c.engine), "%s", engine);
	c.rate_pps = rate;
	c.seconds = seconds;
	c.ring = ring;
	c.batch = 32;
	c.burst = 32;
	c.mode = RX_MODE_HDS;
	c.app = RX_APP_INLINE;
	c.allow_oversubscribe = true;
	c.warmup = w;
	c.inject[RXP_ST_APP] = app_inject;
	struct rxr_result *r = NULL;
	rxr_result_open(&r);
	cr_assert_not_null(r);
	int rc = rx_run_exec(rxe_find(engine), &c, r, NULL, err, sizeof(err));
	cr_assert_eq(rc, 0, "%s: %s", engine, err);
	return r;
}

static void check(const char *engine)
{
	const double rate = 200e3, secs = 0.2;
	struct rxr_result *r = run(engine, rate, secs, 256, RX_WARMUP_AUTO, 0);
	json_t *w = json_object_get(r->extra, "warmup");
	cr_assert_not_null(w);
	cr_expect_str_eq(json_string_value(json_object_get(w, "mode")), "auto");
	json_int_t woff = json_integer_value(json_object_get(w, "offered"));
	/* 50 ms at 200 kpps: far more than the ring's 256 WQEs */
	cr_expect_gt(woff, 256, "warm-up offered %lld", (long long)woff);
	cr_expect(json_is_true(json_object_get(w, "every_wqe_used")));
	/* the measured phase alone: paced, so at most rate x seconds (plus a
	 * burst of slack), never warm-up + run */
	cr_expect_leq((double)r->c.offered, rate * secs + 64, "offered %llu counts the warm-up",
		      (unsigned long long)r->c.offered);
	cr_expect(rxr_counters_conserved(&r->c));
	cr_expect_eq(r->c.errors, 0);
	rxr_result_free(r);

	/* overloaded (the app spins 50k cycles per packet): drops on both
	 * sides of the boundary, and the sequence accounting still closes */
	r = run(engine, rate, secs, 64, RX_WARMUP_AUTO, 50000);
	cr_expect_gt(r->c.out_of_buffer + r->c.app_dropped, 0, "no drops: not overloaded");
	cr_expect(rxr_counters_conserved(&r->c));
	cr_expect_eq(r->c.errors, 0, "sequence faults across the warm-up: %llu",
		     (unsigned long long)r->c.errors);
	json_t *seq = json_object_get(json_object_get(r->extra, "dpdk"), "seq");
	if (seq) {
		/* the app's gaps are this phase's losses, never the warm-up's */
		json_int_t missing = json_integer_value(json_object_get(seq, "missing"));
		cr_expect_leq((uint64_t)missing, r->c.out_of_buffer + r->c.nombuf + r->c.app_dropped,
			      "gaps %lld > losses", (long long)missing);
	}
	rxr_result_free(r);

	/* a warm-up longer than the run (50 ms against 20): its seconds are
	 * its own, not the run's (RX_WARMUP_MIN_S as the software NIC timed
	 * its wire: 0.047 s seen, so held to well over the run's 0.02, not to
	 * 0.05), and a paced generator cannot have offered more than rate x
	 * them. (Not "about rate x them": a generator starved of its core
	 * falls behind its pace, as the sanitizer build did on a loaded
	 * 2-core host: 6,301 in 0.069 s at 200 kpps.) */
	const double run_secs = 0.02;
	r = run(engine, rate, run_secs, 256, RX_WARMUP_AUTO, 0);
	w = json_object_get(r->extra, "warmup");
	woff = json_integer_value(json_object_get(w, "offered"));
	double wsec = json_number_value(json_object_get(w, "seconds"));
	cr_expect_gt(wsec, 1.5 * run_secs, "%s: warm-up seconds %.3f: the run's %.2f?", engine,
		     wsec, run_secs);
	cr_expect(woff > 0 && woff <= 1.3 * rate * wsec + 64,
		  "%s: warm-up offered %lld in a reported %.3f s at %.0f pps", engine,
		  (long long)woff, wsec, rate);
	rxr_result_free(r);

	r = run(engine, rate, secs, 256, RX_WARMUP_OFF, 0);
	cr_expect_str_eq(json_string_value(json_object_get(json_object_get(r->extra, "warmup"),
							   "mode")),
			 "off");
	rxr_result_free(r);
}

Test(warmup, verbs_sim)
{
	check("verbs");
}

Test(warmup, dpdk_sim)
{
	check("dpdk");
}
