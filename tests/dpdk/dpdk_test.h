/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the DPDK engine tests (test_dpdk.c, test_dpdk_cqe.c,
 * test_opdelay.c): run a configuration as the CLI does, read a dotted
 * path of the result's extras, and run until a condition holds, bounded.
 * Criterion forks per test, so each run gets a fresh EAL.
 */
#ifndef RXRAY_TEST_DPDK_H
#define RXRAY_TEST_DPDK_H

#include <criterion/criterion.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rxray/core.h"
#include "rxray/dpdk.h"
#include "rxray/result.h"

/* caps -> validate -> run, as the CLI does; the result (asserts success). */
static inline struct rxr_result *dt_run(const struct rx_config *c)
{
	static volatile sig_atomic_t stop;
	char err[512] = "";
	struct rx_caps caps;
	cr_assert_eq(rx_engine_dpdk.caps(c, &caps, err, sizeof(err)), 0, "caps: %s", err);
	cr_assert_eq(rx_config_validate(c, &caps, err, sizeof(err)), 0, "validate: %s", err);
	cr_assert_eq(rx_engine_dpdk.validate(c, &caps, err, sizeof(err)), 0, "engine: %s", err);
	struct rxr_result *r = NULL;
	rxr_result_open(&r);
	cr_assert_not_null(r);
	cr_assert_eq(rx_run_exec(&rx_engine_dpdk, c, r, &stop, err, sizeof(err)), 0, "run: %s", err);
	return r;
}

/* The number at a dotted path under o ("mempool.rx.get_calls"); asserts it is there. */
static inline double dt_num(json_t *o, const char *path)
{
	char buf[128];
	snprintf(buf, sizeof(buf), "%s", path);
	json_t *v = o;
	for (char *tok = strtok(buf, "."); tok; tok = strtok(NULL, "."))
		v = json_object_get(v, tok);
	cr_assert_not_null(v, "missing %s", path);
	return json_number_value(v);
}

/* Say why a run fell short (for an enough() below); returns false. */
static inline bool dt_short_of(char *why, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static inline bool dt_short_of(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return false;
}

/*
 * Wait on a condition, with a bound. A test that runs for a fixed time and
 * then needs some activity (ring laps, an allocation failure) can find a
 * host too busy to give the run its CPU; that is not a defect, so: run
 * for c->seconds, and while the run was correct (check asserts what must
 * hold of every run) but too short to show what the test needs (enough
 * says why not), again for 4x as long, three runs at most (0.3 s becomes
 * 0.3 + 1.2 + 4.8 s). The last run must be enough; it is returned.
 */
static inline struct rxr_result *
dt_run_until(struct rx_config *c, void (*check)(const struct rxr_result *r, void *arg),
	     bool (*enough)(const struct rxr_result *r, void *arg, char *why, size_t len),
	     void *arg)
{
	char why[200] = "";
	for (int attempt = 0; attempt < 3; attempt++, c->seconds *= 4) {
		struct rxr_result *r = dt_run(c);
		check(r, arg);
		if (enough(r, arg, why, sizeof(why)))
			return r;
		rxr_result_free(r);
	}
	cr_assert_fail("after 3 runs (the last %.1f s): %s", c->seconds / 4, why);
	return NULL;
}

/* The result's thread of that role (the first); fails the test when none. */
static inline const struct rxr_thread_result *dt_thread(const struct rxr_result *r,
							 const char *role)
{
	for (size_t i = 0; i < r->nthreads; i++)
		if (!strcmp(r->threads[i].role, role))
			return &r->threads[i];
	cr_assert_fail("no %s thread", role);
	return NULL;
}

/* A correct run: it conserves and had no errors (dt_run_ok's check). */
static inline void dt_check_correct(const struct rxr_result *r, void *arg)
{
	(void)arg;
	cr_assert(rxr_counters_conserved(&r->c));
	cr_assert_eq(r->c.errors, 0, "errors %lu", (unsigned long)r->c.errors);
}

/* At least 100 packets received (dt_run_ok's "enough"); why says how far
 * short, with the warm-up's figures. */
static inline bool dt_enough_packets(const struct rxr_result *r, void *arg, char *why,
				     size_t len)
{
	(void)arg;
	if (r->c.received > 100)
		return true;
	char *w = json_dumps(json_object_get(r->extra, "warmup"), JSON_COMPACT);
	dt_short_of(why, len, "received %lu of %lu offered in %.3f s (warm-up %s; a host too "
			      "busy to run it)",
		    (unsigned long)r->c.received, (unsigned long)r->c.offered, r->seconds,
		    w ? w : "none");
	free(w);
	return false;
}

/* Run c (a copy: a host too busy to give the run its CPU, whose NIC once
 * offered 4 packets in a second, gets a longer one, dt_run_until): a
 * correct run with at least 100 packets received. */
static inline struct rxr_result *dt_run_ok(const struct rx_config *c)
{
	struct rx_config cc = *c;
	return dt_run_until(&cc, dt_check_correct, dt_enough_packets, NULL);
}

#endif
