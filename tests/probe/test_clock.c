/* Clock calibration and injection. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <time.h>

#include "rxray/inject.h"
#include "rxray/probe.h"

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * A reading of both clocks at one moment: the tick bracketed by two
 * CLOCK_MONOTONIC reads, the tightest bracket of a few tries, its middle.
 * Preemption between the reads (a loaded host) then costs a retry, not
 * an error in the measurement.
 */
static void both_clocks(uint64_t *ns, uint64_t *tick)
{
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < 20; i++) {
		uint64_t a = mono_ns(), t = rxp_now(), b = mono_ns();
		if (b - a < best) {
			best = b - a;
			*ns = a + (b - a) / 2;
			*tick = t;
		}
	}
}

/*
 * The interval is the measurement itself: 200 ms of CLOCK_MONOTONIC,
 * spent in a loop on its deadline (a sleep would hand the wait to the
 * scheduler; nothing here waits for a condition).
 */
Test(clock, calibrated_within_1pct_of_monotonic_over_200ms)
{
	cr_assert_eq(rxp_clock_init(100), 0);
	const struct rxp_clock *c = rxp_clock_get();
	cr_assert_gt(c->hz, 1e6, "hz %f", c->hz);
	uint64_t n0 = 0, t0 = 0, n1 = 0, t1 = 0;
	both_clocks(&n0, &t0);
	while (mono_ns() - n0 < 200000000ull)
		;
	both_clocks(&n1, &t1);
	double measured = (double)(t1 - t0) * 1e9 / (double)(n1 - n0);
	double rel = fabs(measured - c->hz) / c->hz;
	cr_assert_lt(rel, 0.01, "calibrated %.0f Hz, measured %.0f Hz (%.3f%%)", c->hz, measured,
		     rel * 100);
	cr_assert_gt(c->lap_cost_cycles, 0);
	cr_assert_gt(c->resolution_ns, 0);
	cr_assert_str_neq(rxp_clock_source_name(c->source), "unknown");
}

Test(clock, monotonic_fallback_is_selectable)
{
	setenv("RXRAY_CLOCK", "monotonic", 1);
	cr_assert_eq(rxp_clock_init(20), 0);
	unsetenv("RXRAY_CLOCK");
	const struct rxp_clock *c = rxp_clock_get();
	cr_assert_eq(c->source, RXP_CLOCK_MONOTONIC);
	cr_assert_float_eq(c->hz, 1e9, 1);
	uint64_t a = rxp_now(), b = rxp_now();
	cr_assert_geq(b, a);
	cr_assert_eq(rxp_clock_init(50), 0); /* back to the best source */
}

Test(clock, injection_adds_requested_cycles_within_5pct)
{
	if (RXRAY_PROBE_MODE == RXP_MODE_OFF)
		cr_skip_test("probes compiled out (RXRAY_PROBES=off): laps and injection do nothing");
	cr_assert_eq(rxp_clock_init(50), 0);
	struct rxp_probe *p = NULL;
	rxp_probe_open("rx", -1, 0, 0, &p, NULL, 0);
	cr_assert_not_null(p);
	/* large enough that a lap repaying the most credit carried
	 * (RXP_INJECT_STRETCH_MAX) stays within 5% */
	const uint64_t inj = 50000;
	rxp_lap_start(p);
	for (int i = 0; i < 2000; i++) {
		rxp_lap(p, RXP_ST_CQE_POLL, 1);
		rxp_lap(p, RXP_ST_APP, 1);
	}
	uint64_t base_min = p->st[RXP_ST_APP].min;
	rxp_probe_reset(p);
	rxp_probe_set_inject(p, RXP_ST_APP, inj);
	rxp_lap_start(p);
	for (int i = 0; i < 2000; i++) {
		rxp_lap(p, RXP_ST_CQE_POLL, 1);
		rxp_lap(p, RXP_ST_APP, 1);
	}
	/* min is robust to preemption on a shared machine (a preempted spin's
	 * excess is dropped, not repaid by the laps after it) */
	uint64_t got = p->st[RXP_ST_APP].min - base_min;
	/* a lap is short of K x n by at most the credit a spin carried over
	 * (at most RXP_INJECT_STRETCH_MAX per packet) */
	cr_assert_geq(p->st[RXP_ST_APP].min + RXP_INJECT_STRETCH_MAX, inj);
	cr_assert_lt(fabs((double)got - (double)inj) / (double)inj, 0.05, "added %lu of %lu",
		     (unsigned long)got, (unsigned long)inj);
	/* the other stage did not absorb the spin */
	cr_assert_lt(p->st[RXP_ST_CQE_POLL].min, inj / 10);
	rxp_probe_free(p);
}

Test(clock, nvtx_calls_are_safe_without_a_tool)
{
	unsetenv("NVTX_INJECTION64_PATH");
	rxp_nvtx_init();
	rxp_nvtx_init();
	for (int i = 0; i < 100000; i++) {
		rxp_nvtx_push((enum rxp_stage)(i % RXP_ST_COUNT));
		rxp_nvtx_pop();
	}
	rxp_nvtx_push((enum rxp_stage)999); /* out of range: unnamed range, no crash */
	rxp_nvtx_pop();
}

Test(clock, inject_spec_parsing)
{
	enum rxp_stage s;
	uint64_t c;
	cr_assert_eq(rxp_inject_parse("buf_alloc=150", &s, &c), 0);
	cr_assert_eq(s, RXP_ST_BUF_ALLOC);
	cr_assert_eq(c, 150);
	cr_assert_eq(rxp_inject_parse("free=2k", &s, &c), 0);
	cr_assert_eq(c, 2000);
	cr_assert_lt(rxp_inject_parse("nosuch=1", &s, &c), 0);
	cr_assert_lt(rxp_inject_parse("free=", &s, &c), 0);
	cr_assert_lt(rxp_inject_parse("=5", &s, &c), 0);
	cr_assert_lt(rxp_inject_parse("free=-5", &s, &c), 0);
	cr_assert_lt(rxp_inject_parse("free", &s, &c), 0);
	cr_assert_eq(rxp_stage_from_name("cqe_poll"), RXP_ST_CQE_POLL);
	cr_assert_str_eq(rxp_stage_name(RXP_ST_CQE_WRITE), "cqe_write");
	cr_assert_null(rxp_stage_name(RXP_ST_COUNT));
}
