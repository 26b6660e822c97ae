/* Accumulators and the log-linear histogram. */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rxray/inject.h"
#include "rxray/probe.h"
#include "rxray/result.h"

Test(acc, exact_on_known_input)
{
	struct rxp_acc a;
	rxp_acc_reset(&a);
	uint64_t v[] = {5, 17, 17, 100, 3000, 1};
	for (size_t i = 0; i < 6; i++)
		rxp_acc_record(&a, v[i], 2);
	cr_assert_eq(a.count, 6);
	cr_assert_eq(a.packets, 12);
	cr_assert_eq(a.cycles, 5 + 17 + 17 + 100 + 3000 + 1);
	cr_assert_eq(a.min, 1);
	cr_assert_eq(a.max, 3000);
	cr_assert_eq(a.hist[5], 1);
	cr_assert_eq(a.hist[1], 1);
	cr_assert_eq(a.hist[rxp_hist_bucket(17)], 2);
	uint64_t total = 0;
	for (unsigned b = 0; b < RXP_HIST_BUCKETS; b++)
		total += a.hist[b];
	cr_assert_eq(total, 6);
	cr_assert_eq(rxp_acc_percentile(&a, 0.0), 1);
	cr_assert_eq(rxp_acc_percentile(&a, 1.0), 3000);
}

Test(acc, buckets_tile_the_range)
{
	/* every bucket starts where the previous one ended, width <= low/16 */
	for (unsigned b = 1; b < RXP_HIST_BUCKETS; b++) {
		uint64_t lo = rxp_hist_bucket_low(b), w = rxp_hist_bucket_width(b);
		cr_assert_eq(rxp_hist_bucket_low(b - 1) + rxp_hist_bucket_width(b - 1), lo, "b=%u", b);
		cr_assert_eq(rxp_hist_bucket(lo), b);
		cr_assert_eq(rxp_hist_bucket(lo + w - 1), b);
		if (lo >= RXP_HIST_SUB)
			cr_assert_leq(w * 16, lo);
	}
	cr_assert_eq(rxp_hist_bucket(UINT64_MAX), RXP_HIST_BUCKETS - 1);
}

static int cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

Test(acc, percentiles_within_one_sixteenth)
{
	enum { N = 50001 };
	uint64_t *v = malloc(N * sizeof(*v));
	struct rxp_acc *a = malloc(sizeof(*a));
	rxp_acc_reset(a);
	srand(7);
	for (int i = 0; i < N; i++) {
		/* heavy-tailed: 20..~2e6 */
		double u = (double)rand() / RAND_MAX;
		v[i] = (uint64_t)(20.0 * exp(u * u * 11.5));
		rxp_acc_record(a, v[i], 1);
	}
	qsort(v, N, sizeof(*v), cmp);
	double qs[] = {0.5, 0.9, 0.99, 0.999};
	for (size_t i = 0; i < 4; i++) {
		uint64_t rank = (uint64_t)ceil(qs[i] * N);
		uint64_t exact = v[rank - 1];
		uint64_t got = rxp_acc_percentile(a, qs[i]);
		double err = fabs((double)got - (double)exact) / (double)exact;
		cr_assert_leq(err, 1.0 / 16, "q=%g exact %lu got %lu", qs[i], (unsigned long)exact,
			      (unsigned long)got);
	}
	free(v);
	free(a);
}

Test(acc, merge_equals_recording_everything_once)
{
	struct rxp_acc *x = malloc(sizeof(*x)), *y = malloc(sizeof(*y)), *all = malloc(sizeof(*all));
	rxp_acc_reset(x);
	rxp_acc_reset(y);
	rxp_acc_reset(all);
	for (uint64_t i = 1; i < 5000; i++) {
		uint64_t c = (i * 2654435761u) % 100000;
		rxp_acc_record((i & 1) ? x : y, c, (uint32_t)(i % 64));
		rxp_acc_record(all, c, (uint32_t)(i % 64));
	}
	struct rxp_acc *empty = malloc(sizeof(*empty));
	rxp_acc_reset(empty);
	rxp_acc_merge(x, y);
	rxp_acc_merge(x, empty);
	cr_assert_eq(x->count, all->count);
	cr_assert_eq(x->packets, all->packets);
	cr_assert_eq(x->cycles, all->cycles);
	cr_assert_eq(x->min, all->min);
	cr_assert_eq(x->max, all->max);
	cr_assert_arr_eq(x->hist, all->hist, sizeof(all->hist));
	cr_assert_eq(rxp_acc_percentile(x, 0.99), rxp_acc_percentile(all, 0.99));
	free(x);
	free(y);
	free(all);
	free(empty);
}

Test(acc, probe_merge_and_busy_cycles)
{
	struct rxp_probe *a = NULL, *b = NULL;
	rxp_probe_open("rx", 0, 0, 0, &a, NULL, 0);
	rxp_probe_open("rx", 1, 0, 0, &b, NULL, 0);
	cr_assert(a && b);
	rxp_acc_record(&a->st[RXP_ST_CQE_POLL], 100, 32);
	rxp_acc_record(&a->st[RXP_ST_IDLE], 1000, 0);
	rxp_acc_record(&b->st[RXP_ST_FREE], 50, 32);
	a->busy_packets = 32;
	b->busy_packets = 32;
	cr_assert_eq(rxp_probe_busy_cycles(a), 100);
	rxp_probe_merge(a, b);
	cr_assert_eq(rxp_probe_busy_cycles(a), 150);
	cr_assert_eq(a->busy_packets, 64);
	cr_assert_eq(a->core, 0);
	rxp_probe_free(a);
	rxp_probe_free(b);
	rxp_probe_free(NULL);
	struct rxp_probe *bad = a;
	char err[128] = "";
	cr_assert_eq(rxp_probe_open("much-too-long-role", 0, 0, 0, &bad, err, sizeof(err)), -EINVAL);
	cr_assert_null(bad);
	cr_assert(strstr(err, "much-too-long-role"), "%s", err);
}

/* ------------------------------------------------------ cost model */

static void sums_of(const struct rxp_acc *a, struct rxp_lapsums *s)
{
	rxp_acc_sums(a, s);
}

Test(lapfit, recovers_a_and_b_exactly_from_synthetic_laps)
{
	/* catches: wrong centring, a and b swapped, sums not kept per lap */
	struct rxp_acc *a = malloc(sizeof(*a));
	rxp_acc_reset(a);
	for (uint32_t i = 0; i < 1000; i++) {
		uint32_t n = 1 + i % 64;
		rxp_acc_record(a, 40 + 7 * (uint64_t)n, n);
	}
	struct rxp_lapsums s;
	struct rxp_lapfit f;
	sums_of(a, &s);
	rxp_lapsums_fit(&s, &f);
	cr_assert_eq(f.basis, RXP_LAPFIT_LINEAR);
	cr_assert_float_eq(f.a, 40.0, 1e-6);
	cr_assert_float_eq(f.b, 7.0, 1e-9);
	cr_assert_float_eq(f.r2, 1.0, 1e-9);
	/* sums are those of the laps */
	uint64_t pp = 0;
	for (uint32_t i = 0; i < 1000; i++)
		pp += (uint64_t)(1 + i % 64) * (1 + i % 64);
	cr_assert_eq(a->sum_pp, pp);
	free(a);
}

Test(lapfit, noise_lowers_r2_and_fixed_counts_fall_back_to_per_packet)
{
	struct rxp_acc *a = malloc(sizeof(*a));
	rxp_acc_reset(a);
	for (uint32_t i = 0; i < 2000; i++) {
		uint32_t n = 1 + i % 8;
		uint64_t noise = (i * 2654435761u) % 61; /* 0..60 */
		rxp_acc_record(a, 100 + 10 * (uint64_t)n + noise, n);
	}
	struct rxp_lapsums s;
	struct rxp_lapfit f;
	sums_of(a, &s);
	rxp_lapsums_fit(&s, &f);
	cr_assert_eq(f.basis, RXP_LAPFIT_LINEAR);
	cr_assert_lt(f.r2, 0.99);
	cr_assert_gt(f.r2, 0.1);
	cr_assert_float_eq(f.b, 10.0, 1.0);
	/* laps of one fixed count (a refill batch): no spread to fit */
	rxp_acc_reset(a);
	for (uint32_t i = 0; i < 100; i++)
		rxp_acc_record(a, 640 + i % 3, 64);
	sums_of(a, &s);
	rxp_lapsums_fit(&s, &f);
	cr_assert_eq(f.basis, RXP_LAPFIT_PER_PACKET);
	cr_assert_float_eq(f.a, 0.0, 1e-12);
	cr_assert_float_eq(f.b, (double)a->cycles / (double)a->packets, 1e-9);
	/* no packets at all (idle) */
	rxp_acc_reset(a);
	rxp_acc_record(a, 500, 0);
	sums_of(a, &s);
	rxp_lapsums_fit(&s, &f);
	cr_assert_eq(f.basis, RXP_LAPFIT_NONE);
	free(a);
}

Test(lapfit, merge_of_two_equals_one_over_both)
{
	/* catches: a sum the merge forgets (sum_pp, sum_cp or sum_cc) */
	struct rxp_acc *x = malloc(sizeof(*x)), *y = malloc(sizeof(*y)), *all = malloc(sizeof(*all));
	rxp_acc_reset(x);
	rxp_acc_reset(y);
	rxp_acc_reset(all);
	for (uint64_t i = 1; i < 3000; i++) {
		uint32_t n = (uint32_t)(i < 1500 ? 1 + i % 3 : 64);  /* light laps, then full */
		uint64_t c = 50 + 6 * n + (i * 2654435761u) % 17;
		rxp_acc_record(i < 1500 ? x : y, c, n);
		rxp_acc_record(all, c, n);
	}
	rxp_acc_merge(x, y);
	cr_assert_eq(x->sum_pp, all->sum_pp);
	cr_assert_eq(x->sum_cp, all->sum_cp);
	cr_assert_float_eq(x->sum_cc, all->sum_cc, 1e-6 * all->sum_cc);
	struct rxp_lapsums sx, sy, sa;
	struct rxp_lapfit fx, fa;
	/* the portable sums add the same way */
	rxp_acc_reset(y);
	sums_of(x, &sx);
	sums_of(all, &sa);
	rxp_lapsums_fit(&sx, &fx);
	rxp_lapsums_fit(&sa, &fa);
	cr_assert_float_eq(fx.a, fa.a, 1e-9);
	cr_assert_float_eq(fx.b, fa.b, 1e-12);
	sums_of(y, &sy);
	rxp_lapsums_add(&sx, &sy);
	rxp_lapsums_fit(&sx, &fx);
	cr_assert_float_eq(fx.b, fa.b, 1e-12);
	free(x);
	free(y);
	free(all);
}

/* Fixed work: a stage of known, steady cost. */
static void known_work(unsigned n)
{
	volatile unsigned sink = 0;
	for (unsigned i = 0; i < 8 * n; i++)
		sink += i;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/*
 * The bound (5%, 3 cycles) holds for optimised code. In an
 * unoptimised (sanitizer) build every line of the spin's bookkeeping is a
 * call with checks, tens of cycles that land on either side of the clock
 * reads; there the test still tells per packet from per lap and "adds"
 * from "at least" (both off by 40% or more), with a wider bound.
 */
#if defined(__OPTIMIZE__) && !defined(__SANITIZE_ADDRESS__)
/* 10%: the bench (bench/costmodel/bench_inject_accuracy) holds the 5%
 * target; on a shared 2-core host the median still wanders past 5% now
 * and then (157.7 for K=150 seen), while the bugs this test is for are
 * off by 40% or more */
#define INJ_TOL 0.10
#define INJ_OTHER 3.0
#define INJ_WHY ""
#else
#define INJ_TOL 0.35
/* The spin's instrumented bookkeeping after its last clock read lands in
 * the next stage: seen 27-37 cycles/packet at K = 50 (37.2 once in CI,
 * against a bound of 35 then). A lap charged to its neighbour moves that
 * one by about K plus the same, 77 or more at K = 50; and the added check
 * above fails for it first (about 0 added). */
#define INJ_OTHER 60.0
#define INJ_WHY ", unoptimised build"
#endif

/*
 * The K the per-packet test injects. Optimised: the range from its
 * floor (50). Unoptimised: the injected path's own instrumented
 * bookkeeping before the spin's first clock read is charged to the stage,
 * tens of cycles a lap that a loaded host stretches (CI's ASan run once
 * read 70.9 added at K = 50, 42% over, on a host the 2-core VM's
 * slowdowns hit), so K starts where that is a small part of it. Every
 * bug the test is for still shows at these K: a spin per lap adds K / 2.5
 * (laps of 1-4 packets), max(own, K) adds K less the stage's own cost, a
 * spin twice adds 2K.
 */
#if defined(__OPTIMIZE__) && !defined(__SANITIZE_ADDRESS__)
static const uint64_t inj_ks[] = {50, 150, 500};
#else
static const uint64_t inj_ks[] = {150, 500, 1500};
#endif

/* Tests that time injected laps: they need probes compiled in, and a real
 * CPU (ctest sets RXRAY_EMULATOR in a cross build: tools/test.sh arm64). */
static void timed_laps_or_skip(void)
{
	if (RXRAY_PROBE_MODE == RXP_MODE_OFF)
		cr_skip_test("probes compiled out (RXRAY_PROBES=off)");
	if (getenv("RXRAY_EMULATOR"))
		cr_skip_test("under %s a lap's length is the emulator's, not the code's: the "
			     "added cycles need a real CPU", getenv("RXRAY_EMULATOR"));
	cr_assert_eq(rxp_clock_init(50), 0);
}

/* p's inject_ab entries as the run result gives them; *res owns them
 * (rxr_result_free). */
static json_t *inject_ab_of(const struct rxp_probe *p, struct rxr_result **res)
{
	*res = NULL;
	cr_assert_eq(rxr_result_open(res), 0);
	cr_assert_eq(rxr_result_add_probe(*res, p), 0);
	return json_object_get((*res)->extra, "inject_ab");
}

/*
 * Injection adds K per packet: two probes, one injected, run in
 * alternating rounds in this process so both see the same host; the
 * added cycles/packet is the median over rounds of the difference of the
 * probes' accounted stage cycles (not wall time). Catches the old
 * max(own cost, K) semantics, a spin per lap instead of per packet, and
 * uncompensated spin overshoot (~half a clock read per lap at n = 1).
 */
Test(inject, adds_k_per_packet_within_5pct_on_a_stage_of_known_cost)
{
	timed_laps_or_skip();
	enum { ROUNDS = 61, LAPS = 256 };
	for (size_t ki = 0; ki < sizeof(inj_ks) / sizeof(inj_ks[0]); ki++) {
		struct rxp_probe *base = NULL;
		rxp_probe_open("rx", -1, 0, 0, &base, NULL, 0);
		struct rxp_probe *inj = NULL;
		rxp_probe_open("rx", -1, 0, 0, &inj, NULL, 0);
		cr_assert(base && inj);
		rxp_probe_set_inject(inj, RXP_ST_APP, inj_ks[ki]);
		double add[ROUNDS], other[ROUNDS];
		for (int r = 0; r < ROUNDS; r++) {
			double cpp[2], poll[2];
			for (int w = 0; w < 2; w++) {
				struct rxp_probe *p = w ? inj : base;
				rxp_probe_reset(p);
				rxp_lap_start(p);
				for (unsigned i = 0; i < LAPS; i++) {
					uint32_t n = 1 + i % 4; /* light-load laps */
					known_work(n);
					rxp_lap(p, RXP_ST_CQE_POLL, n);
					known_work(n);
					rxp_lap(p, RXP_ST_APP, n);
				}
				cpp[w] = (double)p->st[RXP_ST_APP].cycles / (double)p->st[RXP_ST_APP].packets;
				poll[w] = (double)p->st[RXP_ST_CQE_POLL].cycles /
					  (double)p->st[RXP_ST_CQE_POLL].packets;
			}
			add[r] = cpp[1] - cpp[0];
			other[r] = poll[1] - poll[0];
		}
		qsort(add, ROUNDS, sizeof(add[0]), cmp_d);
		qsort(other, ROUNDS, sizeof(other[0]), cmp_d);
		double k = (double)inj_ks[ki], got = add[ROUNDS / 2], moved = other[ROUNDS / 2];
		cr_log_info("K=%g: added %.1f cycles/packet, cqe_poll moved %.1f%s", k, got, moved,
			    INJ_WHY);
		/* freed before the checks: a failed one leaks nothing to LSan */
		rxp_probe_free(base);
		rxp_probe_free(inj);
		cr_assert_lt(fabs(got - k) / k, INJ_TOL,
			     "K=%g: added %.1f cycles/packet (tolerance %g%s)", k, got, INJ_TOL,
			     INJ_WHY);
		/* the other stage does not absorb the spin: a lap that charged it
		 * to its neighbour would move that one by about K; half of K
		 * (at least INJ_OTHER) leaves room for a shared host's noise */
		cr_assert_lt(fabs(moved), fmax(INJ_OTHER, 0.5 * k), "K=%g: cqe_poll moved %.1f%s",
			     k, moved, INJ_WHY);
	}
}

/*
 * Inject A/B: one lap in four with packets is injected and also recorded
 * in p->ab; the stage keeps all laps. Injected minus plain cycles/packet
 * (median over rounds) is K; the halves take their turns (equal lap counts); the
 * result carries both halves. Catches injecting every lap (no plain
 * half), recording the wrong half in ab (added ~ -K), a half that counts
 * laps without packets, and a spin per lap instead of per packet.
 */
Test(inject, ab_halves_alternate_and_differ_by_k)
{
	timed_laps_or_skip();
	enum { ROUNDS = 41, LAPS = 256 };
	const uint64_t k = 150;
	struct rxp_probe *p = NULL;
	rxp_probe_open("rx", -1, 0, 0, &p, NULL, 0);
	cr_assert_not_null(p);
	rxp_probe_set_inject(p, RXP_ST_APP, k);
	cr_assert_eq(rxp_probe_set_inject_ab(p, true), 0);
	double add[ROUNDS];
	for (int r = 0; r < ROUNDS; r++) {
		rxp_probe_reset(p);
		rxp_lap_start(p);
		for (unsigned i = 0; i < LAPS; i++) {
			/* pairs hold laps of one count: app's pairs are laps
			 * (4j, 4j + 2) (turns RXP_AB_INJ, RXP_AB_PLAIN) */
			uint32_t n = 1 + (i / 4) % 4;
			known_work(n);
			rxp_lap(p, RXP_ST_CQE_POLL, 2);
			known_work(n);
			rxp_lap(p, RXP_ST_APP, n);
			rxp_lap(p, RXP_ST_APP, 0); /* no packets: neither half */
		}
		const struct rxp_acc *inj = &p->ab[RXP_ST_APP], *pl = &p->ab[RXP_ST_COUNT + RXP_ST_APP];
		/* one lap in four each; the shadows (after an injected lap
		 * and after a plain one) in neither half */
		cr_assert_eq(inj->count, LAPS / 4, "round %d: %lu injected laps of %u with packets",
			     r, (unsigned long)inj->count, LAPS);
		cr_assert_eq(pl->count, LAPS / 4, "round %d: %lu plain laps of %u with packets", r,
			     (unsigned long)pl->count, LAPS);
		cr_assert_eq(p->st[RXP_ST_APP].count, 2 * LAPS, "the stage keeps every lap");
		cr_assert_eq(p->abp[RXP_ST_APP].n, LAPS / 4, "pairs (4j, 4j + 2)");
		/* a stage not injected is observed: its laps split by the
		 * injected stage's last half (each round's cqe_poll follows
		 * the previous round's app lap) */
		const struct rxp_acc *oi = &p->ab[RXP_ST_CQE_POLL],
				     *op = &p->ab[RXP_ST_COUNT + RXP_ST_CQE_POLL];
		cr_assert_eq(oi->count + op->count, LAPS / 2, "round %d: observed laps %lu + %lu",
			     r, (unsigned long)oi->count, (unsigned long)op->count);
		cr_assert_eq(oi->count, LAPS / 4,
			     "round %d: cqe_poll after an injected app lap: %lu, want %u", r,
			     (unsigned long)oi->count, LAPS / 4);
		/* pairs: the lap after the injected one with the lap after
		 * the plain one (laps 4j + 1, 4j + 3) */
		cr_assert_eq(p->abp[RXP_ST_CQE_POLL].n, LAPS / 4);
		cr_assert_eq(p->inject[RXP_ST_IDLE], 0, "a wait stage is never observed");
		add[r] = (double)inj->cycles / (double)inj->packets -
			 (double)pl->cycles / (double)pl->packets;
	}
	qsort(add, ROUNDS, sizeof(add[0]), cmp_d);
	double got = add[ROUNDS / 2];
	cr_assert_lt(fabs(got - (double)k) / (double)k, INJ_TOL,
		     "A/B: injected - plain = %.1f cycles/packet, K = %lu%s", got, (unsigned long)k,
		     INJ_WHY);
	/* the result carries both halves */
	struct rxr_result *res;
	json_t *arr = inject_ab_of(p, &res), *e = NULL, *x;
	size_t ix;
	int nobs = 0;
	json_array_foreach(arr, ix, x) {
		if (json_is_false(json_object_get(x, "observed")))
			e = x;
		else
			nobs++;
	}
	cr_expect_eq(nobs, 1, "one observed stage (cqe_poll) with laps, %d", nobs);
	cr_assert_not_null(e, "no inject_ab entry");
	cr_expect_str_eq(json_string_value(json_object_get(e, "stage")), "app");
	cr_expect_eq(json_integer_value(json_object_get(e, "k")), (json_int_t)k);
	cr_expect_eq(json_integer_value(json_object_get(json_object_get(e, "injected"), "laps")),
		     LAPS / 4);
	/* plain: the plain turn's laps with packets, none without */
	cr_expect_eq(json_integer_value(json_object_get(json_object_get(e, "plain"), "laps")),
		     LAPS / 4);
	cr_expect(json_is_real(json_object_get(e, "added_cycles_per_packet")));
	cr_expect(json_is_real(json_object_get(e, "added_trimmed_cycles_per_packet")));
	cr_expect_eq(json_integer_value(json_object_get(e, "pairs")), LAPS / 4);
	cr_expect_eq(json_array_size(arr), 2);
	rxr_result_free(res);
	rxp_probe_free(p);
}

/* A clock that advances a fixed step per read: a spin's overshoot and a
 * stage's own length are then known exactly. */
#define COARSE_STEP 60
static uint64_t fake_now, fake_step = COARSE_STEP;
static uint64_t fake_jump, fake_jump_in; /* fake_jump more on the read
					  * fake_jump_in reads from now */
static uint64_t fake_read(void)
{
	if (fake_jump_in && --fake_jump_in == 0)
		fake_now += fake_jump;
	return fake_now += fake_step;
}

/* The fake clock in place of the real one, step ticks a read (the probe's
 * clock initialised first, on the real one); fake_clock_off puts the real
 * one back. */
static int saved_native;
static uint64_t (*saved_read)(void);
static void fake_clock_on(uint64_t step)
{
	cr_assert_eq(rxp_clock_init(50), 0);
	saved_native = rxp_clock_native;
	saved_read = rxp_clock_read_fn;
	rxp_clock_native = 0;
	rxp_clock_read_fn = fake_read;
	fake_step = step;
}

static void fake_clock_off(void)
{
	rxp_clock_read_fn = saved_read;
	rxp_clock_native = saved_native;
	fake_step = COARSE_STEP;
}

/* An rx probe under the fake clock of COARSE_STEP ticks a read. */
static struct rxp_probe *coarse_rx_probe(void)
{
	fake_clock_on(COARSE_STEP);
	struct rxp_probe *p = NULL;
	rxp_probe_open("rx", -1, 0, 0, &p, NULL, 0);
	cr_assert_not_null(p);
	return p;
}

/* The A/B result's entries: app injected (spun per packet = k, nothing
 * dropped), cqe_poll observed (no spin: null). */
static void check_spun_in_result(const struct rxp_probe *p, double k)
{
	struct rxr_result *res;
	json_t *arr = inject_ab_of(p, &res), *e;
	size_t i;
	int seen = 0;
	json_array_foreach(arr, i, e)
	{
		const char *st = json_string_value(json_object_get(e, "stage"));
		json_t *v = json_object_get(e, "spun_cycles_per_packet");
		if (!strcmp(st, "app")) {
			cr_assert(json_is_number(v));
			cr_assert_lt(fabs(json_number_value(v) - k), 0.01 * k + 0.5);
			/* nothing stretched past the window: nothing dropped */
			json_t *dc = json_object_get(e, "dropped_credit_cycles_per_packet");
			cr_assert(json_is_number(dc) && json_number_value(dc) == 0.0);
			cr_assert_eq(json_integer_value(json_object_get(e, "dropped_credit_spins")),
				     0);
			cr_assert(json_is_integer(json_object_get(e, "dropped_credit_spins")));
			seen++;
		} else if (!strcmp(st, "cqe_poll")) {
			cr_assert(json_is_null(v), "an observed stage spins nothing");
			seen++;
		}
	}
	cr_assert_eq(seen, 2);
	rxr_result_free(res);
}

/*
 * A spin that runs past its target by less than the pairs' window (a
 * clock read, loads still in flight, a short stall: 600 ticks here) is
 * repaid in full by the spins after it; one stretched past the window (a
 * preemption: 5,000) is not repaid, since the laps after it must not
 * shorten, and is counted as dropped. Catches a cap on the credit below
 * the window (256 once: it dropped 344 of the 600 and the stage grew by
 * them), a preemption repaid, and a drop not counted. Fake clock: exact.
 */
Test(inject, repays_a_short_overrun_and_drops_a_preemption)
{
	if (RXRAY_PROBE_MODE == RXP_MODE_OFF)
		cr_skip_test("probes compiled out (RXRAY_PROBES=off)");
	fake_clock_on(COARSE_STEP);
	const uint64_t jumps[] = {600, 5000}, k = 150;
	enum { LAPS = 1000 };
	for (int j = 0; j < 2; j++) {
		struct rxp_probe *p = NULL;
		rxp_probe_open("rx", -1, 0, 0, &p, NULL, 0);
		cr_assert(p);
		rxp_probe_set_inject(p, RXP_ST_APP, k);
		rxp_lap_start(p);
		for (unsigned i = 0; i < LAPS; i++) {
			rxp_lap(p, RXP_ST_CQE_POLL, 1);
			if (i == LAPS / 2) /* the spin's first read: inside it */
				fake_jump = jumps[j], fake_jump_in = 2;
			rxp_lap(p, RXP_ST_APP, 1);
		}
		/* the stage: one read per lap, K per packet, the credit left at
		 * the end (a read or two) and what was dropped */
		const struct rxp_acc *a = &p->st[RXP_ST_APP];
		int64_t beyond = (int64_t)a->cycles - (int64_t)LAPS * (COARSE_STEP + (int64_t)k) -
				 (int64_t)p->inject_dropped[RXP_ST_APP];
		cr_assert(beyond >= 0 && beyond <= 2 * COARSE_STEP,
			  "jump %lu: the stage grew %ld beyond K x packets and the drops",
			  (unsigned long)jumps[j], (long)beyond);
		if (j == 0) {
			cr_assert_eq(p->inject_drops[RXP_ST_APP], 0,
				     "600 ticks: repaid, not dropped");
			cr_assert_eq(p->inject_dropped[RXP_ST_APP], 0);
		} else {
			cr_assert_eq(p->inject_drops[RXP_ST_APP], 1, "5,000 ticks: one drop");
			cr_assert(p->inject_dropped[RXP_ST_APP] >= jumps[j] &&
				      p->inject_dropped[RXP_ST_APP] <= jumps[j] + 2 * COARSE_STEP,
				  "dropped %lu", (unsigned long)p->inject_dropped[RXP_ST_APP]);
		}
		cr_assert_eq(p->st[RXP_ST_CQE_POLL].cycles, (uint64_t)LAPS * COARSE_STEP,
			     "jump %lu: the neighbour moved", (unsigned long)jumps[j]);
		rxp_probe_free(p);
	}
	fake_clock_off();
}

/*
 * Operation delays are owed and the thread's next lap pays them: under a
 * clock of coarse reads (60 ticks each) a stage with three delays of 500
 * before its lap grows by 1,500 a lap (the spins' over-runs repaid, as an
 * injection's are), the stage after it by nothing, a lap without packets
 * pays what was owed in it, and a disarmed thread's operations owe as
 * ever while its laps pay nothing. Catches delays that are not paid (the
 * stage stays at one read), paid by the following lap (cqe_poll grows),
 * paid twice, paid while disarmed, or an operation that tests the armed
 * state itself (a branch one A/B half takes and the other does not).
 * Deterministic: no timing, every count exact.
 */
Test(inject, op_delays_are_owed_and_the_next_lap_pays)
{
	if (RXRAY_PROBE_MODE == RXP_MODE_OFF)
		cr_skip_test("probes compiled out (RXRAY_PROBES=off)");
	struct rxp_probe *p = coarse_rx_probe();
	cr_assert_eq(rxp_probe_set_op_pay(p), 0);
	cr_assert_eq(p->inject[RXP_ST_IDLE], RXP_INJECT_PAY, "a wait stage is never observed");
	rxp_op_owed = 12345; /* owed before the first lap: no lap's */
	rxp_lap_start(p);
	cr_assert_eq(rxp_op_owed, 0);
	enum { LAPS = 1000 };
	for (unsigned i = 0; i < LAPS; i++) {
		rxp_op_delay(500);
		rxp_op_delay(500);
		rxp_op_delay(500);
		rxp_lap(p, RXP_ST_BUF_ALLOC, 1);
		rxp_lap(p, RXP_ST_CQE_POLL, 1);
	}
	cr_assert_eq(rxp_op_owed, 0, "all paid");
	double paid = (double)p->st[RXP_ST_BUF_ALLOC].cycles - (double)LAPS * COARSE_STEP;
	/* the read after the spin (the spin's exit is the paying lap's)
	 * counts to what was paid; what is left over is one carried over-run */
	double want = (double)LAPS * 1500;
	cr_expect_lt(fabs(paid - want), 2.0 * COARSE_STEP, "paid %.0f over %d laps, want %.0f",
		     paid, LAPS, want);
	cr_expect_eq(p->st[RXP_ST_CQE_POLL].cycles, (uint64_t)LAPS * COARSE_STEP,
		     "the lap after the paying one moved");
	/* a lap without packets pays too */
	rxp_op_delay(800);
	uint64_t before = p->st[RXP_ST_SGE_SETUP].cycles;
	rxp_lap(p, RXP_ST_SGE_SETUP, 0);
	double lap0 = (double)(p->st[RXP_ST_SGE_SETUP].cycles - before) - COARSE_STEP;
	cr_expect_lt(fabs(lap0 - 800), 2.0 * COARSE_STEP, "a lap without packets paid %.0f of 800",
		     lap0);
	cr_expect_eq(rxp_op_owed, 0);
	/* a wait lap pays what its operations owe (an empty poll's get and
	 * put), not the next lap with work */
	rxp_op_delay(700);
	before = p->st[RXP_ST_IDLE].cycles;
	uint64_t cq = p->st[RXP_ST_CQE_POLL].cycles;
	rxp_lap(p, RXP_ST_IDLE, 0);
	rxp_lap(p, RXP_ST_CQE_POLL, 1);
	lap0 = (double)(p->st[RXP_ST_IDLE].cycles - before) - COARSE_STEP;
	cr_expect_lt(fabs(lap0 - 700), 2.0 * COARSE_STEP, "an idle lap paid %.0f of 700", lap0);
	cr_expect_eq(p->st[RXP_ST_CQE_POLL].cycles - cq, COARSE_STEP, "cqe_poll paid for idle");
	/* disarmed: the operation owes as ever (the same instructions in
	 * both A/B halves), and the lap pays nothing */
	rxp_op_armed = false;
	rxp_op_delay(500);
	cr_expect_eq(rxp_op_owed, 500, "a disarmed operation owed %lu, not 500",
		     (unsigned long)rxp_op_owed);
	before = p->st[RXP_ST_SGE_SETUP].cycles;
	rxp_lap(p, RXP_ST_SGE_SETUP, 1);
	cr_expect_eq(p->st[RXP_ST_SGE_SETUP].cycles - before, COARSE_STEP,
		     "a disarmed lap spun %lu ticks past its clock read",
		     (unsigned long)(p->st[RXP_ST_SGE_SETUP].cycles - before - COARSE_STEP));
	cr_expect_eq(rxp_op_owed, 0, "what a disarmed lap owed is forgotten");
	rxp_op_armed = true;
	rxp_probe_free(p);
	fake_clock_off();
}

/*
 * The A/A control, and why the halves' order is drawn: nothing injected
 * (`--inject doorbell=0 --inject-ab`: RXP_INJECT_NULL) on a stage whose lap
 * costs 400 ticks more at the first place of every period (a cost that
 * follows the period, not the injection), under a clock of 60-tick reads.
 * The pairs read ~0 (a fixed order reads +400: the first place is always
 * the injected half), both orders are drawn about as often, nothing is
 * spun, and the result gives k = 0 for the stage. Catches a fixed order,
 * an A/A stage that spins, and a swapped period paired with the wrong
 * sign (its -400 then reads +400: the mean far from 0).
 */
Test(inject, a_a_reads_nothing_where_a_cost_follows_the_period)
{
	if (RXRAY_PROBE_MODE == RXP_MODE_OFF)
		cr_skip_test("probes compiled out (RXRAY_PROBES=off)");
	struct rxp_probe *p = coarse_rx_probe();
	const enum rxp_stage s = RXP_ST_DOORBELL;
	rxp_probe_set_inject(p, s, RXP_INJECT_NULL);
	cr_assert_eq(rxp_probe_set_inject_ab(p, true), 0);
	rxp_lap_start(p);
	unsigned periods = 0, swapped = 0;
	for (unsigned i = 0; i < 40000; i++) {
		rxp_lap(p, RXP_ST_CQE_POLL, 1);
		if (p->abp[s].turn == 0)
			fake_now += 400; /* the doorbell lap that begins a period */
		rxp_lap(p, s, 1);
		if (p->abp[s].turn == 1) {
			periods++;
			swapped += p->abp[s].swap;
		}
	}
	uint64_t kept = 0;
	double aa = rxp_ab_pairs_trimmed_mean(&p->abp[s], &kept);
	cr_expect_eq(periods, 10000);
	cr_expect_geq(kept, 9900, "pairs kept %lu", (unsigned long)kept);
	cr_expect_lt(fabs(aa), 40, "A/A read %.1f per packet: the period's first place is +400",
		     aa);
	cr_expect(swapped > 4700 && swapped < 5300, "%u of %u periods swapped", swapped, periods);
	cr_expect_eq(p->inject_spun[s], 0, "an A/A stage spun %lu ticks",
		     (unsigned long)p->inject_spun[s]);
	cr_expect_eq(p->st[RXP_ST_CQE_POLL].cycles, 40000ull * COARSE_STEP,
		     "the stage beside it moved");
	struct rxr_result *res;
	json_t *arr = inject_ab_of(p, &res), *x;
	size_t ix;
	bool found = false;
	json_array_foreach(arr, ix, x)
	{
		if (strcmp(json_string_value(json_object_get(x, "stage")), "doorbell"))
			continue;
		found = true;
		cr_expect_eq(json_integer_value(json_object_get(x, "k")), 0);
		cr_expect(json_is_false(json_object_get(x, "observed")));
		cr_expect(json_is_null(json_object_get(x, "spun_cycles_per_packet")));
	}
	cr_expect(found);
	rxr_result_free(res);
	rxp_probe_free(p);
	fake_clock_off();
}

/*
 * Injection adds exactly K per packet where a stage's own work is shorter
 * than the spin's overshoot: under a clock of coarse reads (60 ticks each)
 * the stage lasts one read and each spin overshoots by one to two reads,
 * so the credit must come off the next spin even though the lap then
 * totals less than K x n. Catches a floor that keeps every lap >= K x n
 * (it never repaid the credit: +10 per packet at K = 500 here, as the
 * 16-core host's light-load laps showed), and a neighbour charged the
 * spin's exit. Deterministic: no timing, every count exact.
 */
Test(inject, adds_k_exactly_where_the_stage_is_shorter_than_a_clock_read)
{
	if (RXRAY_PROBE_MODE == RXP_MODE_OFF)
		cr_skip_test("probes compiled out (RXRAY_PROBES=off)");
	fake_clock_on(COARSE_STEP);
	const uint64_t ks[] = {50, 150, 500};
	enum { LAPS = 3996 }; /* a multiple of 12: turns x counts */
	for (size_t ki = 0; ki < 3; ki++) {
		for (int ab = 0; ab < 2; ab++) {
			struct rxp_probe *base = NULL, *inj = NULL;
			rxp_probe_open("rx", -1, 0, 0, &base, NULL, 0);
			rxp_probe_open("rx", -1, 0, 0, &inj, NULL, 0);
			cr_assert(base && inj);
			rxp_probe_set_inject(inj, RXP_ST_APP, ks[ki]);
			if (ab)
				cr_assert_eq(rxp_probe_set_inject_ab(inj, true), 0);
			for (int w = 0; w < 2; w++) {
				struct rxp_probe *p = w ? inj : base;
				rxp_lap_start(p);
				for (unsigned i = 0; i < LAPS; i++) {
					/* 1-3 packets, one count a period (four
					 * laps), so both halves hold the same mix
					 * whichever comes first in a period */
					uint32_t n = 1 + (i / 4) % 3;
					rxp_lap(p, RXP_ST_CQE_POLL, n);
					rxp_lap(p, RXP_ST_APP, n);
				}
			}
			const struct rxp_acc *a0 = &base->st[RXP_ST_APP],
					     *a1 = &inj->st[RXP_ST_APP];
			cr_assert_eq(a0->cycles, (uint64_t)LAPS * COARSE_STEP,
				     "the stage: one read");
			double k = (double)ks[ki];
			double got;
			if (!ab) {
				got =
				    ((double)a1->cycles - (double)a0->cycles) / (double)a1->packets;
			} else {
				/* the halves: injected minus plain cycles per packet */
				const struct rxp_acc *hi = &inj->ab[RXP_ST_APP],
						     *hp = &inj->ab[RXP_ST_COUNT + RXP_ST_APP];
				cr_assert(hi->packets && hp->packets);
				got = (double)hi->cycles / (double)hi->packets -
				      (double)hp->cycles / (double)hp->packets;
			}
			/* exact but for the credit left at the end (a read or two over
			 * thousands of packets) and, in A/B, the halves' packet mix */
			cr_assert_lt(fabs(got - k), 0.01 * k + 0.5, "K=%g%s: added %.2f per packet",
				     k, ab ? " (A/B halves)" : "", got);
			/* the neighbour lap is one read in both probes: nothing leaked */
			cr_assert_eq(inj->st[RXP_ST_CQE_POLL].cycles,
				     base->st[RXP_ST_CQE_POLL].cycles, "K=%g%s: cqe_poll moved", k,
				     ab ? " (A/B)" : "");
			/* in A/B, the spins themselves ran K per packet of their
			 * laps (counted there only: nothing else reports them) */
			if (ab) {
				double spun = (double)inj->inject_spun[RXP_ST_APP] /
					      (double)inj->inject_spun_pkts[RXP_ST_APP];
				cr_assert_lt(fabs(spun - k), 0.01 * k + 0.5,
					     "K=%g (A/B): spun %.2f per packet", k, spun);
				cr_assert_eq(inj->inject_spun_pkts[RXP_ST_CQE_POLL], 0);
				check_spun_in_result(inj, k);
			}
			rxp_probe_free(base);
			rxp_probe_free(inj);
		}
	}
	fake_clock_off();
}

/*
 * The pairs' figures are exact on exact differences: under a clock of one
 * tick per read every pair of 1-packet laps differs by K exactly, and the
 * median and trimmed mean must read K, not K plus half a bin. Catches
 * bins taken as [b, b + 1) with b + 1/2 reported (50.5 for K = 50: 1% of
 * K on every light-load figure).
 */
Test(inject, ab_pairs_read_an_exact_difference_exactly)
{
	if (RXRAY_PROBE_MODE == RXP_MODE_OFF)
		cr_skip_test("probes compiled out (RXRAY_PROBES=off)");
	fake_clock_on(1);
	struct rxp_probe *p = NULL;
	rxp_probe_open("rx", -1, 0, 0, &p, NULL, 0);
	cr_assert_not_null(p);
	rxp_probe_set_inject(p, RXP_ST_APP, 50);
	cr_assert_eq(rxp_probe_set_inject_ab(p, true), 0);
	rxp_lap_start(p);
	for (int i = 0; i < 4000; i++) {
		rxp_lap(p, RXP_ST_CQE_POLL, 1);
		rxp_lap(p, RXP_ST_APP, 1);
	}
	uint64_t pairs = 0, kept = 0;
	double med = rxp_ab_pairs_median(&p->abp[RXP_ST_APP], &pairs);
	double tm = rxp_ab_pairs_trimmed_mean(&p->abp[RXP_ST_APP], &kept);
	cr_assert_geq(pairs, 900);
	cr_assert_eq(kept, pairs);
	/* the first spin overshoots by one read, repaid by the next: at most
	 * one pair of a thousand is off by one */
	cr_assert_float_eq(tm, 50.0, 0.01, "trimmed mean %.3f", tm);
	cr_assert_float_eq(med, 50.0, 0.01, "median %.3f", med);
	rxp_probe_free(p);
	fake_clock_off();
}

Test(inject, laps_without_packets_spin_nothing)
{
	if (RXRAY_PROBE_MODE == RXP_MODE_OFF)
		cr_skip_test("probes compiled out (RXRAY_PROBES=off)");
	struct rxp_probe *p = NULL;
	rxp_probe_open("rx", -1, 0, 0, &p, NULL, 0);
	cr_assert_not_null(p);
	rxp_probe_set_inject(p, RXP_ST_DOORBELL, 1000000);
	rxp_lap_start(p);
	for (int i = 0; i < 100; i++)
		rxp_lap(p, RXP_ST_DOORBELL, 0);
	/* a million cycles per lap would make the mean >= 1e6 */
	cr_assert_lt(p->st[RXP_ST_DOORBELL].cycles / 100, 1000000);
	rxp_probe_free(p);
}

Test(lapfit, preempted_laps_are_left_out_of_the_fit_not_the_cycles)
{
	/* catches: the first busy lap after a preemption (millions of ticks)
	 * setting the fixed cost per lap */
	struct rxp_acc *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	rxp_acc_reset(a);
	rxp_acc_reset(b);
	for (uint32_t i = 0; i < 1000; i++) {
		uint32_t n = 1 + i % 8;
		rxp_acc_record(a, 40 + 7 * (uint64_t)n, n);
	}
	rxp_acc_record(a, RXP_LAPFIT_MAX_TICKS * 3, 2); /* descheduled mid-poll */
	rxp_acc_record(b, RXP_LAPFIT_MAX_TICKS + 1, 1);
	rxp_acc_merge(a, b);
	cr_assert_eq(a->excl_count, 2);
	cr_assert_eq(a->cycles - a->excl_cycles, a->cycles - (RXP_LAPFIT_MAX_TICKS * 4 + 1));
	struct rxp_lapsums s;
	struct rxp_lapfit f;
	rxp_acc_sums(a, &s);
	rxp_lapsums_fit(&s, &f);
	cr_assert_eq(f.basis, RXP_LAPFIT_LINEAR);
	cr_assert_float_eq(f.a, 40.0, 1e-6);
	cr_assert_float_eq(f.b, 7.0, 1e-9);
	free(a);
	free(b);
}

/* One A/B period's pair fed by hand: a new period, then its injected lap
 * (ci cycles, ni packets) and its plain one (cp, np), the plain one first
 * in every other period, as a period with its halves swapped has them
 * (rxp_ab_turn): the figure must not depend on which comes first. */
static void ab_feed(struct rxp_probe *p, enum rxp_stage s, uint64_t ci, uint32_t ni, uint64_t cp,
		    uint32_t np)
{
	p->ab_period++;
	if (p->ab_period & 1) {
		rxp_probe_ab_pair(p, s, cp, np, false);
		rxp_probe_ab_pair(p, s, ci, ni, true);
	} else {
		rxp_probe_ab_pair(p, s, ci, ni, true);
		rxp_probe_ab_pair(p, s, cp, np, false);
	}
}

/* An rx probe with inject A/B on (its pairs fed by hand). */
static struct rxp_probe *ab_probe(void)
{
	struct rxp_probe *p = NULL;
	rxp_probe_open("rx", -1, 0, 0, &p, NULL, 0);
	cr_assert_not_null(p);
	cr_assert_eq(rxp_probe_set_inject_ab(p, true), 0);
	return p;
}

/*
 * The pair statistics on laps given by hand: the plain lap costs 200 per
 * packet, the injected one 200 + the amount spun, which alternates 20 and
 * 80 (mean K = 50: a spin that overshoots and repays, as the debt makes
 * it). Every tenth pair has a preempted lap (+1,000,000 cycles), injected
 * and plain sides alike. The trimmed mean is K; the median is not (it sits
 * in one of the two modes: why it is not the figure); the untrimmed mean of
 * the halves is ruined by the preemptions.
 */
Test(inject, ab_pairs_trimmed_mean_is_k_through_spread_and_preemption)
{
	struct rxp_probe *p = ab_probe();
	const enum rxp_stage s = RXP_ST_SGE_SETUP;
	double inj_sum = 0, pl_sum = 0, kept_added = 0, kept_pkts = 0;
	for (int i = 0; i < 1000; i++) {
		uint32_t n = 1 + (uint32_t)(i % 3);
		uint64_t spun = (i % 2 ? 80 : 20) * n;
		bool preempted = i % 20 == 0 || i % 20 == 11;
		uint64_t ci = 200 * n + spun + (i % 20 == 0 ? 1000000 : 0);
		uint64_t cp = 200 * n + (i % 20 == 11 ? 1000000 : 0);
		ab_feed(p, s, ci, n, cp, n);
		inj_sum += (double)ci / n;
		pl_sum += (double)cp / n;
		if (!preempted) { /* what the kept pairs add, over their packets */
			kept_added += (double)spun;
			kept_pkts += n;
		}
	}
	/* a plain lap with no injected one in its period pairs with nothing */
	p->ab_period++;
	rxp_probe_ab_pair(p, s, 123, 1, false);
	cr_expect_eq(p->abp[s].unmatched, 0);
	uint64_t pairs = 0, kept = 0;
	double med = rxp_ab_pairs_median(&p->abp[s], &pairs);
	double tm = rxp_ab_pairs_trimmed_mean(&p->abp[s], &kept);
	cr_expect_eq(pairs, 1000);
	cr_expect_eq(kept, 900, "the 100 preempted pairs are out of the window: kept %lu",
		     (unsigned long)kept);
	/* per packet: the kept pairs' added cycles over their packets (the
	 * preempted pairs held 100 packets of 20 and 101 of 80: 49.967) */
	cr_expect_float_eq(tm, kept_added / kept_pkts, 1e-9, "trimmed mean %.4f, want %.4f", tm,
			   kept_added / kept_pkts);
	cr_expect(fabs(tm - 50.0) < 0.1, "trimmed mean %.3f (K = 50)", tm);
	cr_expect(fabs(med - 50) > 10, "median %.1f should sit in a mode, not at K", med);
	/* merging two probes' pairs: the same figure over twice the pairs */
	struct rxp_probe *q = ab_probe();
	rxp_probe_merge(q, p);
	rxp_probe_merge(q, p);
	cr_expect_float_eq(rxp_ab_pairs_trimmed_mean(&q->abp[s], &kept), tm, 1e-9);
	cr_expect_eq(kept, 1800);
	/* nothing paired: no figure */
	cr_expect(isnan(rxp_ab_pairs_trimmed_mean(&q->abp[RXP_ST_APP], NULL)));
	rxp_probe_free(q);
	rxp_probe_free(p);
}

/*
 * The pairs' figure is per packet, as the engine's operations per packet
 * are: each pair weighs by its packets. A delay of K on each of a lap's
 * operations where a lap of n packets performs n + 1 of them (a per-burst
 * look-ahead get beside one per packet) adds K x (n + 1) / n per packet:
 * 2K in a lap of 1, 1.125K in a lap of 8. Nine laps of 1 for one of 8
 * (light load's mix): by packets the pairs add 27K / 17 = 1.59K, what K x
 * the operations per packet counted over the run says; a mean over laps
 * says 1.91K (the over-count the op-delay bench read as 1.35 x K on the
 * 2-core VM).
 */
Test(inject, ab_pairs_weigh_each_pair_by_its_packets)
{
	struct rxp_probe *p = ab_probe();
	const enum rxp_stage s = RXP_ST_BUF_ALLOC;
	const double k = 80; /* 90 per packet in a lap of 8: whole cycles, as the bins are */
	double ops = 0, pkts = 0;
	for (int i = 0; i < 1000; i++) {
		uint32_t n = i % 10 == 9 ? 8 : 1;
		uint64_t base = 300 * n, delay = (uint64_t)(k * (n + 1));
		ab_feed(p, s, base + delay, n, base, n);
		ops += n + 1;
		pkts += n;
	}
	uint64_t pairs = 0, kept = 0;
	double tm = rxp_ab_pairs_trimmed_mean(&p->abp[s], &kept);
	rxp_ab_pairs_median(&p->abp[s], &pairs);
	cr_expect_eq(pairs, 1000);
	cr_expect_eq(kept, 1000);
	cr_expect_float_eq(tm, k * ops / pkts, 1e-9, "added %.2f per packet, K x ops/packet %.2f",
			   tm, k * ops / pkts);
	/* by laps it would read (900 x 2K + 100 x 1.125K) / 1000 */
	cr_expect(fabs(tm - k * (900 * 2 + 100 * 1.125) / 1000) > 0.3 * k,
		  "added %.2f: the mean over laps, not over packets", tm);
	rxp_probe_free(p);
}

/*
 * An operation delay's pairs spread with lap size: a delay of 600 on
 * n + 1 operations a lap (plus a look-ahead put in laps of 1) adds 2,400
 * per packet in a lap of 1, 1,350 in a lap of 8 (600 x (2 + 2/n) for an
 * hds refill's 2n + 2 operations). RXP_AB_TRIM alone (1,024 about the
 * median, 2,400) cuts the laps of 8 out as if preempted; the window
 * rxp_probe_set_op_gate sets for operation delays (RXP_AB_TRIM + 2 x K)
 * keeps them, and still drops a preempted pair.
 */
Test(inject, ab_pairs_trim_window_keeps_the_long_laps_of_an_operation_delay)
{
	const double k = 600;
	for (int widen = 0; widen < 2; widen++) {
		struct rxp_probe *p = ab_probe();
		const enum rxp_stage s = RXP_ST_BUF_ALLOC;
		/* no delay given: the window RXP_AB_TRIM alone */
		cr_assert_eq(rxp_probe_set_op_gate(p, s, widen ? (uint32_t)k : 0), 0);
		double ops = 0, pkts = 0;
		for (int i = 0; i < 1000; i++) {
			uint32_t n = i % 10 == 9 ? 8 : 1;
			uint64_t base = 300 * n, delay = (uint64_t)(k * (2 * n + 2));
			uint64_t preempt = i == 500 ? 5000000 : 0;
			ab_feed(p, s, base + delay + preempt, n, base, n);
			if (!preempt) {
				ops += 2 * n + 2;
				pkts += n;
			}
		}
		/* the gate's window only: another stage's pairs keep RXP_AB_TRIM */
		ab_feed(p, RXP_ST_CQE_POLL, 200, 1, 100, 1);
		cr_expect_float_eq(rxp_ab_pairs_trim(&p->abp[RXP_ST_CQE_POLL]), RXP_AB_TRIM, 1e-9);
		cr_expect_float_eq(rxp_ab_pairs_trim(&p->abp[s]),
				   widen ? RXP_AB_TRIM + 2 * k : RXP_AB_TRIM, 1e-9);
		uint64_t kept = 0;
		double tm = rxp_ab_pairs_trimmed_mean(&p->abp[s], &kept);
		if (widen) {
			cr_expect_eq(kept, 999, "kept %lu: all but the preempted pair",
				     (unsigned long)kept);
			cr_expect_float_eq(tm, k * ops / pkts, 1e-9,
					   "added %.2f, K x ops/packet %.2f", tm, k * ops / pkts);
		} else {
			cr_expect_eq(kept, 899, "kept %lu: the laps of 8 cut at RXP_AB_TRIM",
				     (unsigned long)kept);
			cr_expect(tm > 1.2 * k * ops / pkts, "added %.2f", tm);
		}
		rxp_probe_free(p);
	}
}

/* A timed A/B probe with app injected (K = 100), its other stages
 * observed, its lap clock started. */
static struct rxp_probe *app_ab_probe(void)
{
	timed_laps_or_skip();
	struct rxp_probe *p = NULL;
	rxp_probe_open("rx", -1, 0, 0, &p, NULL, 0);
	cr_assert_not_null(p);
	rxp_probe_set_inject(p, RXP_ST_APP, 100);
	cr_assert_eq(rxp_probe_set_inject_ab(p, true), 0);
	cr_assert_eq(p->inject[RXP_ST_CQE_POLL], RXP_INJECT_OBSERVE);
	rxp_lap_start(p);
	return p;
}

/*
 * An observed stage shows what leaks into it: here cqe_poll does extra
 * work (a spin of 1,500 ticks) only in rounds that follow an injected app
 * lap, as a spin's aftermath would. Its injected-half minus plain-half
 * figure must show it (>= half of it: a generous bound, the test is about
 * which half the laps land in); the injected stage's own figure stays K.
 * With the halves swapped (the phase not followed) the figure would be
 * -1,500, with no split no figure at all.
 */
Test(inject, ab_observed_stages_show_what_leaks_into_them)
{
	struct rxp_probe *p = app_ab_probe();
	for (unsigned i = 0; i < 2000; i++) {
		if (p->ab_phase == RXP_AB_INJ) /* the last app lap was injected */
			rxp_spin_until(rxp_now(), 1500);
		rxp_lap(p, RXP_ST_CQE_POLL, 1);
		known_work(1);
		rxp_lap(p, RXP_ST_APP, 1);
	}
	double leak = rxp_ab_pairs_trimmed_mean(&p->abp[RXP_ST_CQE_POLL], NULL);
	double add = rxp_ab_pairs_trimmed_mean(&p->abp[RXP_ST_APP], NULL);
	cr_expect(leak > 750, "observed leak %.1f ticks/packet, 1500 spun there", leak);
	cr_expect(add > 50 && add < 200, "app's own A/B figure %.1f, K = 100", add);
	rxp_probe_free(p);
}

/*
 * same_burst: an observed stage's pairs again over its laps in the
 * injected lap's own burst only. Under the coarse fake clock, a burst of
 * cqe_poll, buf_alloc (injected), sge_setup, doorbell: cqe_poll costs 300
 * ticks less after a burst whose buf_alloc spun (the next burst's state),
 * sge_setup 200 more after the spin in its own burst (a leak). Over every
 * lap cqe_poll reads -300 and sge_setup +200; in same_burst cqe_poll has
 * no pairs, sge_setup reads +200, the doorbell 0; merging carries them.
 * Catches laps of later bursts counted as the spin's own (cqe_poll's -300
 * in same_burst), laps of the spin's burst left out (no pairs for
 * sge_setup), and a burst's end that does not end it.
 */
Test(inject, same_burst_tells_the_spins_burst_from_the_ones_after)
{
	if (RXRAY_PROBE_MODE == RXP_MODE_OFF)
		cr_skip_test("probes compiled out (RXRAY_PROBES=off)");
	struct rxp_probe *p = coarse_rx_probe();
	rxp_probe_set_inject(p, RXP_ST_BUF_ALLOC, 100);
	cr_assert_eq(rxp_probe_set_inject_ab(p, true), 0);
	rxp_lap_start(p);
	for (unsigned i = 0; i < 8000; i++) {
		if (p->ab_phase != RXP_AB_INJ) /* the burst before did not spin */
			fake_now += 300;
		rxp_lap(p, RXP_ST_CQE_POLL, 1);
		rxp_lap(p, RXP_ST_BUF_ALLOC, 1);
		if (p->ab_phase == RXP_AB_INJ) /* this burst's lap spun */
			fake_now += 200;
		rxp_lap(p, RXP_ST_SGE_SETUP, 1);
		rxp_lap(p, RXP_ST_DOORBELL, 1);
		rxp_burst_end(p, 1);
	}
	const struct rxp_ab_pairs *all = p->abp, *own = p->abp + RXP_ST_COUNT;
	uint64_t n = 0;
	cr_expect_float_eq(rxp_ab_pairs_trimmed_mean(&all[RXP_ST_CQE_POLL], NULL), -300.0, 1.0);
	cr_expect_float_eq(rxp_ab_pairs_trimmed_mean(&all[RXP_ST_SGE_SETUP], NULL), 200.0, 1.0);
	cr_expect_float_eq(rxp_ab_pairs_trimmed_mean(&all[RXP_ST_BUF_ALLOC], NULL), 100.0, 1.0);
	rxp_ab_pairs_median(&own[RXP_ST_CQE_POLL], &n);
	cr_expect_eq(n, 0, "cqe_poll laps before the injected one in their burst paired: %lu",
		     (unsigned long)n);
	cr_expect_eq(own[RXP_ST_CQE_POLL].unmatched, 0);
	double sg = rxp_ab_pairs_trimmed_mean(&own[RXP_ST_SGE_SETUP], &n);
	cr_expect_float_eq(sg, 200.0, 1.0, "sge_setup in the spin's burst %.1f", sg);
	cr_expect_eq(n, 2000, "one pair per period: %lu", (unsigned long)n);
	cr_expect_float_eq(rxp_ab_pairs_trimmed_mean(&own[RXP_ST_DOORBELL], NULL), 0.0, 1.0);
	/* the injected stage's slot holds its own work, the spin left out */
	cr_expect_float_eq(rxp_ab_pairs_trimmed_mean(&own[RXP_ST_BUF_ALLOC], NULL), 0.0, 1.0);
	/* in the result, for observed stages only */
	struct rxr_result *res;
	json_t *arr = inject_ab_of(p, &res), *x;
	size_t ix;
	int seen = 0;
	json_array_foreach(arr, ix, x)
	{
		const char *st = json_string_value(json_object_get(x, "stage"));
		json_t *sb = json_object_get(x, "same_burst");
		if (!strcmp(st, "buf_alloc")) {
			cr_expect_null(sb);
			continue;
		}
		cr_assert_not_null(sb, "%s: no same_burst", st);
		json_t *v = json_object_get(sb, "added_trimmed_cycles_per_packet");
		if (!strcmp(st, "cqe_poll")) {
			seen++;
			cr_expect(json_is_null(v));
			cr_expect_eq(json_integer_value(json_object_get(sb, "pairs")), 0);
		} else if (!strcmp(st, "sge_setup")) {
			seen++;
			cr_expect_float_eq(json_number_value(v), 200.0, 1.0);
		}
	}
	cr_expect_eq(seen, 2);
	rxr_result_free(res);
	/* merged: the pairs add */
	struct rxp_probe *q = NULL;
	rxp_probe_open("rx", -1, 0, 0, &q, NULL, 0);
	cr_assert_not_null(q);
	rxp_probe_set_inject(q, RXP_ST_BUF_ALLOC, 100);
	cr_assert_eq(rxp_probe_set_inject_ab(q, true), 0);
	rxp_probe_merge(q, p);
	rxp_probe_merge(q, p);
	cr_expect_eq(q->abp[RXP_ST_COUNT + RXP_ST_SGE_SETUP].n, 4000);
	cr_expect_float_eq(
	    rxp_ab_pairs_trimmed_mean(&q->abp[RXP_ST_COUNT + RXP_ST_SGE_SETUP], NULL), 200.0, 1.0);
	rxp_probe_free(q);
	rxp_probe_free(p);
	fake_clock_off();
}

/*
 * The figure by parts (probe result's work and added_by_parts): a spin's
 * over-run is repaid by the next injected lap, and the pairs keep only
 * laps of one packet count. Under the coarse fake clock (60 ticks a read)
 * a spin of K x n ticks over-runs by what the read lands past it, so
 * whole laps carry one lap's over-run into the next one's spin; with the
 * laps' packet counts drawn, the pairs keep some laps and leave the ones
 * that repay them, and their difference is not K. The stage's own work
 * (one clock read a lap, injected or not) is paired alike in both halves:
 * 0; the spins summed over every injected lap are K per packet, so the
 * figure by parts is K. Catches a figure by parts taken over whole laps
 * (off K as the whole laps are), the work's pairs taken with the spin in
 * (+K), and the spins' sum left out (0).
 */
Test(inject, by_parts_is_k_where_whole_laps_carry_credit_across_pairs)
{
	if (RXRAY_PROBE_MODE == RXP_MODE_OFF)
		cr_skip_test("probes compiled out (RXRAY_PROBES=off)");
	struct rxp_probe *p = coarse_rx_probe();
	const uint64_t k = 100;
	rxp_probe_set_inject(p, RXP_ST_BUF_ALLOC, k);
	cr_assert_eq(rxp_probe_set_inject_ab(p, true), 0);
	rxp_lap_start(p);
	for (unsigned i = 0; i < 40000; i++) {
		/* periods of four laps: in even ones every lap holds 1 packet
		 * (paired), in odd ones the first two 1 and the last two 2 (the
		 * halves never agree: left out) */
		unsigned per = i / RXP_AB_PERIOD, turn = i % RXP_AB_PERIOD;
		uint32_t n = per % 2 && turn >= 2 ? 2 : 1;
		rxp_lap(p, RXP_ST_CQE_POLL, n);
		rxp_lap(p, RXP_ST_BUF_ALLOC, n);
		rxp_burst_end(p, n);
	}
	const struct rxp_ab_pairs *all = p->abp, *work = p->abp + RXP_ST_COUNT;
	double whole = rxp_ab_pairs_trimmed_mean(&all[RXP_ST_BUF_ALLOC], NULL);
	double w = rxp_ab_pairs_trimmed_mean(&work[RXP_ST_BUF_ALLOC], NULL);
	cr_expect_float_eq(w, 0.0, 1e-9, "the stage's own work moved %.2f", w);
	struct rxr_result *res;
	json_t *arr = inject_ab_of(p, &res), *x;
	size_t ix;
	bool seen = false;
	json_array_foreach(arr, ix, x)
	{
		if (strcmp(json_string_value(json_object_get(x, "stage")), "buf_alloc"))
			continue;
		seen = true;
		double parts =
		    json_number_value(json_object_get(x, "added_by_parts_cycles_per_packet"));
		double spun = json_number_value(json_object_get(x, "spun_cycles_per_packet"));
		cr_expect(fabs(parts - (double)k) < 0.01 * (double)k,
			  "by parts %.2f, K = %lu (whole laps %.2f, spun %.2f)", parts,
			  (unsigned long)k, whole, spun);
		cr_expect_float_eq(
		    json_number_value(json_object_get(json_object_get(x, "work"),
						      "added_trimmed_cycles_per_packet")),
		    w, 1e-9);
	}
	cr_expect(seen);
	cr_log_info("whole laps %.2f, K = %lu", whole, (unsigned long)k);
	cr_expect(fabs(whole - (double)k) > 0.03 * (double)k,
		  "whole laps %.2f: the case no longer carries credit across pairs", whole);
	rxr_result_free(res);
	rxp_probe_free(p);
	fake_clock_off();
}

/*
 * A burst that ends empty ends too: verbs reposts after an empty poll,
 * so the injected lap (sge_setup) sits in a burst of no packets (an idle
 * lap, the repost, its end), and the next burst's cqe_poll, 300 ticks
 * cheaper after a spin (the poll finds what arrived meanwhile), is a
 * later burst's. Over every lap cqe_poll reads -300; in same_burst it has
 * no pairs. Catches a burst's end told by the thread's packets (an empty
 * burst adds none), which counted that poll as the spin's own.
 */
Test(inject, same_burst_ends_with_an_empty_burst)
{
	if (RXRAY_PROBE_MODE == RXP_MODE_OFF)
		cr_skip_test("probes compiled out (RXRAY_PROBES=off)");
	struct rxp_probe *p = coarse_rx_probe();
	rxp_probe_set_inject(p, RXP_ST_SGE_SETUP, 100);
	cr_assert_eq(rxp_probe_set_inject_ab(p, true), 0);
	rxp_lap_start(p);
	for (unsigned i = 0; i < 8000; i++) {
		if (p->ab_phase != RXP_AB_INJ) /* the repost before did not spin */
			fake_now += 300;
		rxp_lap(p, RXP_ST_CQE_POLL, 1);
		rxp_lap(p, RXP_ST_HANDOFF, 1);
		rxp_burst_end(p, 1);
		rxp_lap(p, RXP_ST_IDLE, 0); /* an empty poll */
		rxp_lap(p, RXP_ST_SGE_SETUP, 1);
		rxp_burst_end(p, 0);
	}
	const struct rxp_ab_pairs *all = p->abp, *own = p->abp + RXP_ST_COUNT;
	uint64_t n = 0;
	cr_expect_float_eq(rxp_ab_pairs_trimmed_mean(&all[RXP_ST_CQE_POLL], &n), -300.0, 1.0);
	cr_expect_eq(n, 2000, "cqe_poll: one pair per period over every lap: %lu",
		     (unsigned long)n);
	cr_expect_float_eq(rxp_ab_pairs_trimmed_mean(&all[RXP_ST_SGE_SETUP], NULL), 100.0, 1.0);
	rxp_ab_pairs_median(&own[RXP_ST_CQE_POLL], &n);
	cr_expect_eq(n, 0, "cqe_poll of the next burst paired as the spin's own: %lu",
		     (unsigned long)n);
	cr_expect_eq(own[RXP_ST_HANDOFF].n, 0);
	cr_expect_eq(p->bursts, 16000);
	rxp_probe_free(p);
	fake_clock_off();
}

/*
 * An observed stage that laps twice per turn, dear first (600 ticks spun
 * before it) and cheap second (50): its pairs are the first lap of the
 * injected turn and the first of the plain turn, both dear, so what leaks
 * into it reads about 0. Catches pairing the injected turn's last lap
 * with the plain turn's first (about -550: the place in the turn, not
 * the injection) and pairs across periods.
 */
Test(inject, ab_observed_pairs_hold_laps_of_one_place_in_the_turn)
{
	struct rxp_probe *p = app_ab_probe();
	for (unsigned i = 0; i < 4000; i++) {
		rxp_lap(p, RXP_ST_APP, 1);
		rxp_spin_until(rxp_now(), 600);
		rxp_lap(p, RXP_ST_CQE_POLL, 1);
		rxp_spin_until(rxp_now(), 50);
		rxp_lap(p, RXP_ST_CQE_POLL, 1);
	}
	uint64_t pairs = 0;
	double leak = rxp_ab_pairs_trimmed_mean(&p->abp[RXP_ST_CQE_POLL], NULL);
	rxp_ab_pairs_median(&p->abp[RXP_ST_CQE_POLL], &pairs);
	cr_expect(fabs(leak) < 150, "observed cqe_poll %.1f ticks/packet; nothing leaks into it",
		  leak);
	/* one pair per period: 4000 app laps, a period every 4 */
	cr_expect(pairs > 900 && pairs <= 1000, "pairs %lu", (unsigned long)pairs);
	double add = rxp_ab_pairs_trimmed_mean(&p->abp[RXP_ST_APP], NULL);
	cr_expect(add > 50 && add < 200, "app's own A/B figure %.1f, K = 100", add);
	rxp_probe_free(p);
}

/*
 * Pairs hold laps that both followed a wait, or neither. At light load the
 * first lap of a burst usually ends a wait (idle polls), and a poll that
 * catches the producer at work on the line costs more (here 800 ticks);
 * a spin late in the burst before lets the next packet arrive meanwhile,
 * so the injected turn's first lap often follows no wait and is cheap. In
 * this loop the injected turn skips its wait every other period, the plain
 * turn never does: pairs across that read -800 x 1/2; matched on the wait
 * they read 0, and the ones left out are counted. Catches a probe that
 * ignores the wait (about -400), one that counts the laps since the wait
 * wrongly (no pairs at all, or all of them), and a lost count.
 */
Test(inject, ab_pairs_hold_laps_that_agree_on_a_wait_before_them)
{
	struct rxp_probe *p = app_ab_probe();
	const unsigned rounds = 4000;
	for (unsigned i = 0; i < rounds; i++) {
		bool inj = p->ab_phase == RXP_AB_INJ; /* the last app lap was spun */
		bool wait = !inj || p->ab_period % 2;
		if (wait) {
			rxp_lap(p, RXP_ST_IDLE, 0);
			rxp_spin_until(rxp_now(), 800);
		}
		rxp_lap(p, RXP_ST_CQE_POLL, 1);
		known_work(1);
		rxp_lap(p, RXP_ST_APP, 1);
	}
	uint64_t pairs = 0;
	const struct rxp_ab_pairs *a = &p->abp[RXP_ST_CQE_POLL];
	double d = rxp_ab_pairs_trimmed_mean(a, NULL);
	rxp_ab_pairs_median(a, &pairs);
	cr_expect(fabs(d) < 150, "cqe_poll %.1f ticks/packet: pairs across a wait", d);
	/* a period every 4 rounds: half pair, half are left out for the wait */
	uint64_t periods = rounds / RXP_AB_PERIOD;
	cr_expect(pairs > periods / 2 - 20 && pairs < periods / 2 + 20, "pairs %lu of %lu periods",
		  (unsigned long)pairs, (unsigned long)periods);
	cr_expect(a->unmatched_wait > periods / 2 - 20 && a->unmatched_wait <= a->unmatched,
		  "left out for the wait: %lu (unmatched %lu)", (unsigned long)a->unmatched_wait,
		  (unsigned long)a->unmatched);
	/* the app's own figure is unchanged: its laps never follow a wait */
	double add = rxp_ab_pairs_trimmed_mean(&p->abp[RXP_ST_APP], NULL);
	cr_expect(add > 50 && add < 200, "app's own A/B figure %.1f, K = 100", add);
	rxp_probe_free(p);
}

/*
 * Pairs hold laps of one packet count. At light load a spin lets packets
 * gather, so the plain lap after an injected one often holds more, and a
 * stage's fixed cost per lap (here 300) spread over more packets looks
 * cheaper: injected laps of 1 packet (300 + 40 + K) against plain laps of
 * 2 (300 + 2 x 40, 190 per packet) would read K + 150. Such pairs are left
 * out and counted; the laps of equal count give K. Catches pairing across
 * counts (the figure K + 150, or a mix) and losing the count of the
 * unpaired.
 */
Test(inject, ab_pairs_hold_laps_of_one_packet_count)
{
	struct rxp_probe *p = ab_probe();
	const enum rxp_stage s = RXP_ST_BUF_ALLOC;
	const uint64_t k = 100, a = 300, b = 40;
	for (int i = 0; i < 300; i++) {
		/* two of three pairs: 1 packet injected, 2 plain */
		uint32_t ni = 1, np = i % 3 ? 2 : 1;
		ab_feed(p, s, a + (b + k) * ni, ni, a + b * np, np);
	}
	uint64_t pairs = 0;
	double tm = rxp_ab_pairs_trimmed_mean(&p->abp[s], NULL);
	rxp_ab_pairs_median(&p->abp[s], &pairs);
	cr_expect_eq(pairs, 100, "pairs of equal counts: %lu", (unsigned long)pairs);
	cr_expect_eq(p->abp[s].unmatched, 200);
	cr_expect_float_eq(tm, (double)k, 1e-9, "added %.2f, K = %lu", tm, (unsigned long)k);
	/* the result says how many were left unpaired */
	struct rxr_result *res;
	rxp_probe_set_inject(p, s, k);			    /* the result lists injected stages */
	p->ab[s].count = p->ab[RXP_ST_COUNT + s].count = 1; /* laps to report */
	json_t *e = json_array_get(inject_ab_of(p, &res), 0);
	cr_assert_not_null(e);
	cr_expect_eq(json_integer_value(json_object_get(e, "pairs_unmatched")), 200);
	cr_expect_eq(json_integer_value(json_object_get(e, "pairs")), 100);
	rxr_result_free(res);
	rxp_probe_free(p);
}

/*
 * Operation delays in A/B: a gate stage (buf_alloc, two delayed operations
 * per packet, as two gets) takes the A/B turns, armed in one lap of four;
 * another stage performing the operation after it in the same lap (free,
 * one put) runs in the turn the gate moved on to and counts to it (free
 * is armed in the lap before the gate's armed one); a stage without
 * operations (cqe_poll) shows nothing. Catches: delays not gated (added
 * ~0: every lap spins), the observed stage counted by the gate's last lap
 * instead of the state it ran under (free's figure -K), a gate that does
 * not alternate (no plain half), and delays paid by the wrong lap (free's
 * delay in cqe_poll's next lap: free ~0, cqe_poll ~K).
 */
Test(inject, op_gate_alternates_and_observed_operations_follow_it)
{
	timed_laps_or_skip();
	const uint32_t k = 300;
	struct rxp_probe *p = NULL;
	rxp_probe_open("rx", -1, 0, 0, &p, NULL, 0);
	cr_assert_not_null(p);
	cr_assert_eq(rxp_probe_set_op_gate(p, RXP_ST_BUF_ALLOC, k), 0);
	cr_assert_eq(p->inject[RXP_ST_FREE], RXP_INJECT_OBSERVE);
	cr_assert_eq(p->inject[RXP_ST_IDLE], RXP_INJECT_PAY,
		     "a wait stage is never observed, and pays its operations");
	rxp_lap_start(p);
	for (unsigned i = 0; i < 4000; i++) {
		known_work(1);
		rxp_lap(p, RXP_ST_CQE_POLL, 1);
		rxp_op_delay(k);
		rxp_op_delay(k);
		rxp_lap(p, RXP_ST_BUF_ALLOC, 1);
		rxp_op_delay(k);
		rxp_lap(p, RXP_ST_FREE, 1);
		rxp_lap(p, RXP_ST_IDLE, 0);
	}
	const struct rxp_acc *inj = &p->ab[RXP_ST_BUF_ALLOC],
			     *pl = &p->ab[RXP_ST_COUNT + RXP_ST_BUF_ALLOC];
	cr_expect_eq(inj->count, 1000);
	cr_expect_eq(pl->count, 1000);
	double gate = rxp_ab_pairs_trimmed_mean(&p->abp[RXP_ST_BUF_ALLOC], NULL);
	double fr = rxp_ab_pairs_trimmed_mean(&p->abp[RXP_ST_FREE], NULL);
	double cq = rxp_ab_pairs_trimmed_mean(&p->abp[RXP_ST_CQE_POLL], NULL);
	cr_expect_lt(fabs(gate - 2.0 * k), INJ_TOL * 2 * k, "gate stage: %.1f added, 2K = %u%s",
		     gate, 2 * k, INJ_WHY);
	cr_expect_lt(fabs(fr - k), INJ_TOL * k, "free after it: %.1f added, K = %u%s", fr, k,
		     INJ_WHY);
	cr_expect_lt(fabs(cq), 0.5 * k, "cqe_poll (no operation): %.1f added", cq);
	/* the result marks the gate */
	struct rxr_result *res;
	json_t *arr = inject_ab_of(p, &res), *x;
	size_t ix;
	int gates = 0;
	json_array_foreach(arr, ix, x)
	{
		if (json_is_true(json_object_get(x, "op_gate"))) {
			gates++;
			cr_expect_str_eq(json_string_value(json_object_get(x, "stage")),
					 "buf_alloc");
			cr_expect_eq(json_integer_value(json_object_get(x, "k")), 0);
		}
	}
	cr_expect_eq(gates, 1);
	rxr_result_free(res);
	/* turning A/B off forgets the gate: no lap takes the injected path */
	cr_assert_eq(rxp_probe_set_inject_ab(p, false), 0);
	cr_expect_eq(p->inject[RXP_ST_BUF_ALLOC], 0);
	cr_expect_eq(p->inject[RXP_ST_FREE], 0);
	rxp_op_armed = true;
	rxp_probe_free(p);
}

/*
 * The mean lap of an accumulator over its laps below the 99th percentile
 * (bucket midpoints): one lap a preemption stretched by 100,000 ticks
 * moves a mean of 1,000 laps by 100, which is K here; the slowest 1% are
 * left out of both halves alike.
 */
static double mean_below_p99(const struct rxp_acc *a)
{
	uint64_t keep = a->count - a->count / 100, seen = 0;
	double sum = 0;
	for (unsigned b = 0; b < RXP_HIST_BUCKETS && seen < keep; b++) {
		uint64_t c = a->hist[b] < keep - seen ? a->hist[b] : keep - seen;
		sum += (double)c *
		       ((double)rxp_hist_bucket_low(b) + (double)rxp_hist_bucket_width(b) / 2);
		seen += c;
	}
	return seen ? sum / (double)seen : NAN;
}

/*
 * The plain half is not the lap right after an injected one: that lap
 * carries the spin's aftermath (here 1,500 ticks of extra work in the lap
 * after each injected one, as a stage whose next lap finds the NIC's
 * writes settled or cooled would), and is a shadow. The injected stage's
 * figure stays K. Catches pairing an injected lap with the next one (the
 * figure K - 1,500), and shadows counted in the plain half (its mean
 * pulled down by half of that; the means leave out the slowest 1% of laps,
 * as a preemption in a plain lap once made them differ by -11).
 */
Test(inject, ab_plain_half_is_not_the_lap_after_an_injected_one)
{
	timed_laps_or_skip();
	const uint64_t k = 100;
	struct rxp_probe *p = ab_probe();
	rxp_probe_set_inject(p, RXP_ST_APP, k);
	rxp_lap_start(p);
	for (unsigned i = 0; i < 4000; i++) {
		if (p->ab_phase == RXP_AB_INJ) /* the last app lap was injected */
			rxp_spin_until(rxp_now(), 1500);
		known_work(1);
		rxp_lap(p, RXP_ST_APP, 1);
	}
	double add = rxp_ab_pairs_trimmed_mean(&p->abp[RXP_ST_APP], NULL);
	cr_expect_lt(fabs(add - (double)k), INJ_TOL * (double)k + 2, "added %.1f, K = %lu%s", add,
		     (unsigned long)k, INJ_WHY);
	const struct rxp_acc *inj = &p->ab[RXP_ST_APP], *pl = &p->ab[RXP_ST_COUNT + RXP_ST_APP];
	double means = mean_below_p99(inj) - mean_below_p99(pl);
	cr_expect_gt(means, 0.5 * (double)k, "the halves' means (laps below p99) differ by %.1f",
		     means);
	rxp_probe_free(p);
}
