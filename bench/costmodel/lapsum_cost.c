/* SPDX-License-Identifier: MIT */
/*
 * bench/lapsum_cost: what the cost model's lap sums add to a lap in
 * counters mode. The same loop of laps (four stages per burst, as
 * bench_probe_cost's) runs with rxp_lap (which keeps sum packets^2, sum
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
static inline void lap_plain(struct rxp_probe *p, enum rxp_stage s, uint32_t pkts)
{
	uint64_t t = rxp_now();
	uint64_t d = t - p->last;
	p->last = t;
	struct rxp_acc *a = &p->st[s];
	a->count++;
	a->packets += pkts;
	a->cycles += d;
	if (d < a->min)
		a->min = d;
	if (d > a->max)
		a->max = d;
	a->hist[rxp_hist_bucket(d)]++;
}

static uint64_t loop_plain(struct rxp_probe *p, uint64_t *lines, unsigned burst)
{
	uint64_t t0 = rxp_now();
	p->last = rxp_now();
	for (unsigned b = 0; b < BURSTS; b++) {
		for (unsigned i = 0; i < burst; i++)
			lines[(size_t)i * 8] += i;
		lap_plain(p, RXP_ST_CQE_POLL, burst);
		for (unsigned i = 0; i < burst; i++)
			lines[(size_t)i * 8 + 1] = b;
		lap_plain(p, RXP_ST_SGE_SETUP, burst);
		for (unsigned i = 0; i < burst; i++)
			lines[(size_t)i * 8 + 2] ^= lines[(size_t)i * 8];
		lap_plain(p, RXP_ST_APP, burst);
		__asm__ __volatile__("" ::: "memory");
		lap_plain(p, RXP_ST_DOORBELL, burst);
	}
	return rxp_now() - t0;
}

static uint64_t loop_sums(struct rxp_probe *p, uint64_t *lines, unsigned burst)
{
	uint64_t t0 = rxp_now();
	rxp_lap_start(p);
	for (unsigned b = 0; b < BURSTS; b++) {
		for (unsigned i = 0; i < burst; i++)
			lines[(size_t)i * 8] += i;
		rxp_lap(p, RXP_ST_CQE_POLL, burst);
		for (unsigned i = 0; i < burst; i++)
			lines[(size_t)i * 8 + 1] = b;
		rxp_lap(p, RXP_ST_SGE_SETUP, burst);
		for (unsigned i = 0; i < burst; i++)
			lines[(size_t)i * 8 + 2] ^= lines[(size_t)i * 8];
		rxp_lap(p, RXP_ST_APP, burst);
		__asm__ __volatile__("" ::: "memory");
		rxp_lap(p, RXP_ST_DOORBELL, burst);
	}
	return rxp_now() - t0;
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
	if (rxp_clock_init(100) < 0)
		return 1;
	uint64_t *lines = calloc(64 * 8, sizeof(uint64_t));
	struct rxp_probe *p = NULL;
	rxp_probe_open("rx", -1, 0, 0, &p, NULL, 0);
	if (!lines || !p)
		return 1;
	printf("# lapsum_cost: counters-mode lap with vs without the cost model's sums,\n"
	       "# alternating rounds of %d bursts x 4 laps, median of %d (clock %s)\n\n", BURSTS,
	       ROUNDS, rxp_clock_source_name(rxp_clock_get()->source));
	printf("| burst | plain ticks/lap | with sums ticks/lap | added ticks/lap | added "
	       "ticks/packet |\n|---:|---:|---:|---:|---:|\n");
	const unsigned bursts[] = {1, 32, 64};
	for (size_t k = 0; k < 3; k++) {
		double plain[ROUNDS], sums[ROUNDS], diff[ROUNDS];
		for (int r = 0; r < ROUNDS; r++) {
			rxp_probe_reset(p);
			plain[r] = (double)loop_plain(p, lines, bursts[k]);
			rxp_probe_reset(p);
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
	rxp_probe_free(p);
	free(lines);
	return 0;
}
