/* SPDX-License-Identifier: MIT */
/*
 * bench/lapsum_cost: what the cost model's lap sums add to a lap in
 * counters mode. The same loop of laps (four stages per burst, as
 * bench_probe_cost's) runs with rxr_lap (which keeps sum packets^2, sum
 * cycles x packets and sum cycles^2) and with a copy of the lap without
 * the three sums, in alternating rounds in one process; median of rounds.
 * Prints a table; never passes or fails.
 */
/* counters mode whatever the build's RXRAY_PROBES says (off or full
 * builds define it on the command line) */
#undef RXRAY_PROBE_MODE
#define RXRAY_PROBE_MODE 1
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rxray/probe.h"

#define ROUNDS 31
#define BURSTS 20000

/* The lap as it was before the cost model: no sums, no injection credit. */
static inline void lap_plain(struct rxr_probe *p, enum rxr_stage s, uint32_t pkts)
{
	uint64_t t = rxr_now();
	uint64_t d = t - p->last;
	p->last = t;
	struct rxr_acc *a = &p->st[s];
	a->count++;
	a->packets += pkts;
	a->cycles += d;
	if (d < a->min)
		a->min = d;
	if (d > a->max)
		a->max = d;
	a->hist[rxr_hist_bucket(d)]++;
}

static uint64_t loop_plain(struct rxr_probe *p, uint64_t *lines, unsigned burst)
{
	uint64_t t0 = rxr_now();
	p->last = rxr_now();
	for (unsigned b = 0; b < BURSTS; b++) {
		for (unsigned i = 0; i < burst; i++)
			lines[(size_t)i * 8] += i;
		lap_plain(p, RXR_ST_CQE_POLL, burst);
		for (unsigned i = 0; i < burst; i++)
			lines[(size_t)i * 8 + 1] = b;
		lap_plain(p, RXR_ST_SGE_SETUP, burst);
		for (unsigned i = 0; i < burst; i++)
			lines[(size_t)i * 8 + 2] ^= lines[(size_t)i * 8];
		lap_plain(p, RXR_ST_APP, burst);
		__asm__ __volatile__("" ::: "memory");
		lap_plain(p, RXR_ST_DOORBELL, burst);
	}
	return rxr_now() - t0;
}

static uint64_t loop_sums(struct rxr_probe *p, uint64_t *lines, unsigned burst)
{
	uint64_t t0 = rxr_now();
	rxr_lap_start(p);
	for (unsigned b = 0; b < BURSTS; b++) {
		for (unsigned i = 0; i < burst; i++)
			lines[(size_t)i * 8] += i;
		rxr_lap(p, RXR_ST_CQE_POLL, burst);
		for (unsigned i = 0; i < burst; i++)
			lines[(size_t)i * 8 + 1] = b;
		rxr_lap(p, RXR_ST_SGE_SETUP, burst);
		for (unsigned i = 0; i < burst; i++)
			lines[(size_t)i * 8 + 2] ^= lines[(size_t)i * 8];
		rxr_lap(p, RXR_ST_APP, burst);
		__asm__ __volatile__("" ::: "memory");
		rxr_lap(p, RXR_ST_DOORBELL, burst);
	}
	return rxr_now() - t0;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	(void)argv;
	if (argc > 1) {
		printf("USAGE\n  bench_lapsum_cost\n\nCycles per lap and per packet the lap sums add "
		       "(counters mode), bursts 1, 32, 64.\n");
		return 0;
	}
	if (rxr_clock_init(100) < 0)
		return 1;
	uint64_t *lines = calloc(64 * 8, sizeof(uint64_t));
	struct rxr_probe *p = NULL;
	rxr_probe_open("rx", -1, 0, 0, &p, NULL, 0);
	if (!lines || !p)
		return 1;
	printf("# lapsum_cost: counters-mode lap with vs without the cost model's sums,\n"
	       "# alternating rounds of %d bursts x 4 laps, median of %d (clock %s)\n\n", BURSTS,
	       ROUNDS, rxr_clock_source_name(rxr_clock_get()->source));
	printf("| burst | plain ticks/lap | with sums ticks/lap | added ticks/lap | added "
	       "ticks/packet |\n|---:|---:|---:|---:|---:|\n");
	const unsigned bursts[] = {1, 32, 64};
	for (size_t k = 0; k < 3; k++) {
		double plain[ROUNDS], sums[ROUNDS], diff[ROUNDS];
		for (int r = 0; r < ROUNDS; r++) {
			rxr_probe_reset(p);
			plain[r] = (double)loop_plain(p, lines, bursts[k]);
			rxr_probe_reset(p);
			sums[r] = (double)loop_sums(p, lines, bursts[k]);
			diff[r] = sums[r] - plain[r];
		}
		qsort(plain, ROUNDS, sizeof(double), cmp_d);
		qsort(sums, ROUNDS, sizeof(double), cmp_d);
		qsort(diff, ROUNDS, sizeof(double), cmp_d);
		double laps = 4.0 * BURSTS;
		printf("| %u | %.2f | %.2f | %+.2f | %+.3f |\n", bursts[k], plain[ROUNDS / 2] / laps,
		       sums[ROUNDS / 2] / laps, diff[ROUNDS / 2] / laps,
		       diff[ROUNDS / 2] / (BURSTS * (double)bursts[k]));
	}
	rxr_probe_free(p);
	free(lines);
	return 0;
}
