/*
 * The clock's choice and its reason, per architecture, and what a result
 * says about laps shorter than the clock can time (aarch64's cntvct_el0 is
 * coarse: 16-40 ns a tick). Runs natively and under qemu-user
 * (tools/test.sh arm64).
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rxray/result.h"

Test(clock_arch, why_names_the_choice)
{
	cr_assert_eq(rxp_clock_init(20), 0);
	const struct rxp_clock *c = rxp_clock_get();
	const char *why = rxp_clock_why();
	cr_assert_not_null(why);
	/* catches: a why left as the placeholder (init never filled it) */
	cr_assert_null(strstr(why, "not initialised"), "why: %s", why);
#if defined(__x86_64__) || defined(__i386__)
	/* catches: the x86 choice changing (TSC when invariant, else monotonic) */
	if (rxp_clock_tsc_invariant()) {
		cr_assert_eq(c->source, RXP_CLOCK_TSC);
		cr_assert(strstr(why, "invariant TSC"), "why: %s", why);
	} else {
		cr_assert_eq(c->source, RXP_CLOCK_MONOTONIC);
	}
#elif defined(__aarch64__)
	/* catches: falling back to clock_gettime although cntvct_el0 always works */
	cr_assert(c->source == RXP_CLOCK_CNTVCT || c->source == RXP_CLOCK_PMU, "source %s",
		  rxp_clock_source_name(c->source));
	if (c->source == RXP_CLOCK_CNTVCT) {
		/* catches: a why that does not say why the PMU was refused */
		cr_assert(strstr(why, "PMU cycle counter not readable"), "why: %s", why);
		cr_assert(strstr(why, "perf_user_access") || strstr(why, "perf_event_open") ||
				  strstr(why, "counter"),
			  "why: %s", why);
		uint64_t frq;
		__asm__ __volatile__("mrs %0, cntfrq_el0" : "=r"(frq));
		/* catches: the frequency calibrated (noisy) instead of read from
		 * cntfrq_el0, when the two agree */
		if (!strstr(why, "cntfrq_el0 says"))
			cr_assert_float_eq(c->hz, (double)frq, 0.5, "hz %.1f cntfrq %lu", c->hz,
					   (unsigned long)frq);
		/* catches: a coarse clock that does not say so */
		cr_assert(strstr(c->note, "coarse"), "note: %s", c->note);
	}
#endif
}

Test(clock_arch, forced_source_says_forced)
{
	setenv("RXRAY_CLOCK", "monotonic", 1);
	cr_assert_eq(rxp_clock_init(20), 0);
	unsetenv("RXRAY_CLOCK");
	/* catches: the why describing the auto choice while a forced one runs */
	cr_assert(strstr(rxp_clock_why(), "forced by RXRAY_CLOCK=monotonic"), "why: %s",
		  rxp_clock_why());
	cr_assert_eq(rxp_clock_init(20), 0);
}

static json_t *stage_of(json_t *doc, const char *role, const char *stage)
{
	size_t i;
	json_t *t;
	json_array_foreach(json_object_get(doc, "threads"), i, t)
		if (!strcmp(json_string_value(json_object_get(t, "role")), role))
			return json_object_get(json_object_get(t, "stages"), stage);
	return NULL;
}

Test(clock_arch, short_laps_are_flagged_below_resolution)
{
	cr_assert_eq(rxp_clock_init(20), 0);
	struct rxr_result *r = NULL;
	rxr_result_open(&r);
	cr_assert_not_null(r);
	struct rxp_probe *rx = NULL;
	rxp_probe_open("rx", -1, 0, 0, &rx, NULL, 0);
	cr_assert_not_null(rx);
	for (int i = 0; i < 100; i++) {
		rxp_acc_record(&rx->st[RXP_ST_CQE_POLL], 3, 32);  /* mean 3 ticks */
		rxp_acc_record(&rx->st[RXP_ST_DOORBELL], 9, 1);   /* mean 9: still under */
		rxp_acc_record(&rx->st[RXP_ST_SGE_SETUP], 10, 32); /* exactly 10: fine */
	}
	rx->busy_packets = 3200;
	cr_assert_eq(rxr_result_add_probe(r, rx), 0);
	rxp_probe_free(rx);
	r->c = (struct rxr_counters){.offered = 3200, .received = 3200};
	rxr_result_set_rates(r, 1.0);
	rxr_result_set_clock(r);
	json_t *doc = rxr_result_to_json(r);
	cr_assert_not_null(doc);

	/* catches: the flag missing, or set on a stage at the threshold */
	cr_assert(json_is_true(json_object_get(stage_of(doc, "rx", "cqe_poll"), "below_resolution")));
	cr_assert(json_is_true(json_object_get(stage_of(doc, "rx", "doorbell"), "below_resolution")));
	cr_assert_null(json_object_get(stage_of(doc, "rx", "sge_setup"), "below_resolution"));
	/* catches: the result not saying what the flag means, nor the resolution */
	json_t *clock = json_object_get(doc, "clock");
	const char *note = json_string_value(json_object_get(clock, "note"));
	cr_assert(note && strstr(note, "2 stage(s)") && strstr(note, "burst totals"), "note: %s",
		  note ? note : "(none)");
	cr_assert_gt(json_number_value(json_object_get(clock, "resolution_ns")), 0);

	/* catches: resolution_ns lost when a result is read back (sweeps, diff) */
	char path[] = "/tmp/rxray_clock_arch_XXXXXX";
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	close(fd);
	cr_assert_eq(rxr_result_write(r, path), 0);
	char err[256];
	struct rxr_result *back = NULL;
	rxr_result_read(path, &back, err, sizeof(err));
	unlink(path);
	cr_assert_not_null(back, "%s", err);
	cr_assert_float_eq(back->clock.resolution_ns, r->clock.resolution_ns, 1e-6);
	rxr_result_free(back);
	json_decref(doc);
	rxr_result_free(r);
}

Test(clock_arch, no_note_when_every_lap_is_long_enough)
{
	struct rxr_result *r = NULL;
	rxr_result_open(&r);
	struct rxp_probe *rx = NULL;
	rxp_probe_open("rx", -1, 0, 0, &rx, NULL, 0);
	cr_assert(r && rx);
	for (int i = 0; i < 10; i++)
		rxp_acc_record(&rx->st[RXP_ST_CQE_POLL], 400, 32);
	cr_assert_eq(rxr_result_add_probe(r, rx), 0);
	rxp_probe_free(rx);
	json_t *doc = rxr_result_to_json(r);
	/* catches: a note written unconditionally (every x86 result would carry it) */
	cr_assert_null(json_object_get(json_object_get(doc, "clock"), "note"));
	cr_assert_null(json_object_get(stage_of(doc, "rx", "cqe_poll"), "below_resolution"));
	json_decref(doc);
	rxr_result_free(r);
}
