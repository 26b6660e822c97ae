/* SPDX-License-Identifier: MIT */
/*
 * Calibration mode (--coalesce B) for the DPDK engine: the RX lcore waits,
 * lapped as idle, until B completions are ready, so that light-load laps
 * hold B packets and the cost model (DESIGN.md "Ceiling model") can tell a
 * burst's fixed cost from its per-packet cost without driving the queue
 * into loss. Only the software NIC's rings can be looked at without
 * polling; on a real port the wait is skipped (always ready).
 */
#include "sim_int.h"

bool rxd_coalesce_ready(struct rxd_queue *q, uint32_t want)
{
	if (!want || q->run->be != &rxd_backend_sim)
		return true;
	const struct rxd_simq *s = q->be;
	/* completions land in order: the want-th one ready means all are */
	return rxs_cq_peek(&s->ring, s->cq_ci + want - 1) != NULL;
}
