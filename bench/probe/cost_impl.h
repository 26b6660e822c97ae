/*
 * The measured loop, compiled once per probe mode (the including file sets
 * RXRAY_PROBE_MODE and COST_FN). A "burst" of n packets goes through four
 * stages; each packet's work is a load and a store to its own cache line,
 * like touching a header. Returns clock ticks for the whole loop.
 */
#include <stdint.h>

#include "rxray/probe.h"

#include "cost.h"

uint64_t COST_FN(struct rxr_probe *p, uint64_t *lines, unsigned burst, unsigned bursts)
{
	uint64_t t0 = rxr_now();
	rxr_lap_start(p);
	for (unsigned b = 0; b < bursts; b++) {
		rxr_burst_begin(p);
		for (unsigned i = 0; i < burst; i++)
			lines[(size_t)i * 8] += i; /* poll: read the completion */
		rxr_lap(p, RXR_ST_CQE_POLL, burst);
		for (unsigned i = 0; i < burst; i++)
			lines[(size_t)i * 8 + 1] = b; /* refill */
		rxr_lap(p, RXR_ST_SGE_SETUP, burst);
		for (unsigned i = 0; i < burst; i++)
			lines[(size_t)i * 8 + 2] ^= lines[(size_t)i * 8]; /* app */
		rxr_lap(p, RXR_ST_APP, burst);
		__asm__ __volatile__("" ::: "memory"); /* doorbell */
		rxr_lap(p, RXR_ST_DOORBELL, burst);
		rxr_burst_end(p, burst);
	}
	return rxr_now() - t0;
}

uint64_t COST_LAPS_FN(struct rxr_probe *p, unsigned laps)
{
	uint64_t t0 = rxr_now();
	rxr_lap_start(p);
	for (unsigned i = 0; i < laps; i++)
		rxr_lap(p, (enum rxr_stage)(i & 3), 1);
	return rxr_now() - t0;
}
