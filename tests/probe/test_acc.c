/* Accumulators and the log-linear histogram. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "rxray/probe.h"

Test(acc, exact_on_known_input)
{
	struct rxr_acc a;
	rxr_acc_reset(&a);
	uint64_t v[] = {5, 17, 17, 100, 3000, 1};
	for (size_t i = 0; i < 6; i++)
		rxr_acc_record(&a, v[i], 2);
	cr_assert_eq(a.count, 6);
	cr_assert_eq(a.packets, 12);
	cr_assert_eq(a.cycles, 5 + 17 + 17 + 100 + 3000 + 1);
	cr_assert_eq(a.min, 1);
	cr_assert_eq(a.max, 3000);
	cr_assert_eq(a.hist[5], 1);
	cr_assert_eq(a.hist[1], 1);
	cr_assert_eq(a.hist[rxr_hist_bucket(17)], 2);
	uint64_t total = 0;
	for (unsigned b = 0; b < RXR_HIST_BUCKETS; b++)
		total += a.hist[b];
	cr_assert_eq(total, 6);
	cr_assert_eq(rxr_acc_percentile(&a, 0.0), 1);
	cr_assert_eq(rxr_acc_percentile(&a, 1.0), 3000);
}

Test(acc, buckets_tile_the_range)
{
	/* every bucket starts where the previous one ended, width <= low/16 */
	for (unsigned b = 1; b < RXR_HIST_BUCKETS; b++) {
		uint64_t lo = rxr_hist_bucket_low(b), w = rxr_hist_bucket_width(b);
		cr_assert_eq(rxr_hist_bucket_low(b - 1) + rxr_hist_bucket_width(b - 1), lo, "b=%u", b);
		cr_assert_eq(rxr_hist_bucket(lo), b);
		cr_assert_eq(rxr_hist_bucket(lo + w - 1), b);
		if (lo >= RXR_HIST_SUB)
			cr_assert_leq(w * 16, lo);
	}
	cr_assert_eq(rxr_hist_bucket(UINT64_MAX), RXR_HIST_BUCKETS - 1);
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
	struct rxr_acc *a = malloc(sizeof(*a));
	rxr_acc_reset(a);
	srand(7);
	for (int i = 0; i < N; i++) {
		/* heavy-tailed: 20..~2e6 */
		double u = (double)rand() / RAND_MAX;
		v[i] = (uint64_t)(20.0 * exp(u * u * 11.5));
		rxr_acc_record(a, v[i], 1);
	}
	qsort(v, N, sizeof(*v), cmp);
	double qs[] = {0.5, 0.9, 0.99, 0.999};
	for (size_t i = 0; i < 4; i++) {
		uint64_t rank = (uint64_t)ceil(qs[i] * N);
		uint64_t exact = v[rank - 1];
		uint64_t got = rxr_acc_percentile(a, qs[i]);
		double err = fabs((double)got - (double)exact) / (double)exact;
		cr_assert_leq(err, 1.0 / 16, "q=%g exact %lu got %lu", qs[i], (unsigned long)exact,
			      (unsigned long)got);
	}
	free(v);
	free(a);
}

Test(acc, merge_equals_recording_everything_once)
{
	struct rxr_acc *x = malloc(sizeof(*x)), *y = malloc(sizeof(*y)), *all = malloc(sizeof(*all));
	rxr_acc_reset(x);
	rxr_acc_reset(y);
	rxr_acc_reset(all);
	for (uint64_t i = 1; i < 5000; i++) {
		uint64_t c = (i * 2654435761u) % 100000;
		rxr_acc_record((i & 1) ? x : y, c, (uint32_t)(i % 64));
		rxr_acc_record(all, c, (uint32_t)(i % 64));
	}
	struct rxr_acc *empty = malloc(sizeof(*empty));
	rxr_acc_reset(empty);
	rxr_acc_merge(x, y);
	rxr_acc_merge(x, empty);
	cr_assert_eq(x->count, all->count);
	cr_assert_eq(x->packets, all->packets);
	cr_assert_eq(x->cycles, all->cycles);
	cr_assert_eq(x->min, all->min);
	cr_assert_eq(x->max, all->max);
	cr_assert_arr_eq(x->hist, all->hist, sizeof(all->hist));
	cr_assert_eq(rxr_acc_percentile(x, 0.99), rxr_acc_percentile(all, 0.99));
	free(x);
	free(y);
	free(all);
	free(empty);
}

Test(acc, probe_merge_and_busy_cycles)
{
	struct rxr_probe *a = rxr_probe_new("rx", 0, 0, 0), *b = rxr_probe_new("rx", 1, 0, 0);
	cr_assert(a && b);
	rxr_acc_record(&a->st[RXR_ST_CQE_POLL], 100, 32);
	rxr_acc_record(&a->st[RXR_ST_IDLE], 1000, 0);
	rxr_acc_record(&b->st[RXR_ST_FREE], 50, 32);
	a->busy_packets = 32;
	b->busy_packets = 32;
	cr_assert_eq(rxr_probe_busy_cycles(a), 100);
	rxr_probe_merge(a, b);
	cr_assert_eq(rxr_probe_busy_cycles(a), 150);
	cr_assert_eq(a->busy_packets, 64);
	cr_assert_eq(a->core, 0);
	rxr_probe_free(a);
	rxr_probe_free(b);
	rxr_probe_free(NULL);
	cr_assert_null(rxr_probe_new("much-too-long-role", 0, 0, 0));
}
