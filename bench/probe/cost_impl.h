/*
 * The measured loop, compiled once per probe mode (the including file sets
 * RXRAY_PROBE_MODE and COST_FN). A "burst" of n packets goes through four
 * stages; each packet's work is a load and a store to its own cache line,
 * like touching a header. Returns clock ticks for the whole loop.
 */
#include <stdint.h>

#include "rxray/probe.h"

#include "cost.h"

uint64_t COST_FN(struct rxp_probe *p, uint64_t *lines, unsigned burst, unsigned bursts)
{
	uint64_t t0 = rxp_now();
	rxp_lap_start(p);
	for (unsigned b = 0; b < bursts; b++) {
		rxp_burst_begin(p);
		for (unsigned i = 0; i < burst; i++)
			lines[(size_t)i * 8] += i; /* poll: read the completion */
		rxp_lap(p, RXP_ST_CQE_POLL, burst);
		for (unsigned i = 0; i < burst; i++)
			lines[(size_t)i * 8 + 1] = b; /* refill */
		rxp_lap(p, RXP_ST_SGE_SETUP, burst);
		for (unsigned i = 0; i < burst; i++)
			lines[(size_t)i * 8 + 2] ^= lines[(size_t)i * 8]; /* app */
		rxp_lap(p, RXP_ST_APP, burst);
		__asm__ __volatile__("" ::: "memory"); /* doorbell */
		rxp_lap(p, RXP_ST_DOORBELL, burst);
		rxp_burst_end(p, burst);
	}
	return rxp_now() - t0;
}

uint64_t COST_LAPS_FN(struct rxp_probe *p, unsigned laps)
{
	uint64_t t0 = rxp_now();
	rxp_lap_start(p);
	for (unsigned i = 0; i < laps; i++)
		rxp_lap(p, (enum rxp_stage)(i & 3), 1);
	return rxp_now() - t0;
}
