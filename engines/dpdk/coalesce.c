/* SPDX-License-Identifier: MIT */
/*
 * Calibration mode (--coalesce B) for the DPDK engine: the RX lcore waits,
 * lapped as idle, until B completions are ready, so that light-load laps
 * hold B packets and the cost model (docs/method.md "The ceiling model") can tell a
 * burst's fixed cost from its per-packet cost without driving the queue
 * into loss. Only the software NIC's rings can be looked at without
 * polling; on a real port the wait is skipped (always ready).
 */
#include "sim_int.h"

bool rxd_coalesce_ready(struct rxd_queue *q, uint32_t want)
{
	if (!want || !q->run->be->soft_rings)
		return true;
	const struct rxd_simq *s = q->be;
	/*
	 * Count what is ready from the consumer index on, a compressed
	 * session (CQE compression, on by default here) as the k completions
	 * its title says: peeking at entry cq_ci + want - 1 alone finds an
	 * untouched entry inside a session and waited for ever (the RQ ran
	 * dry, the rest was lost). Already decoded but not yet returned
	 * completions (an open scalar session, the vector routine's
	 * decompressed mbufs) count too.
	 */
	uint32_t have = s->decompressed, ci = s->cq_ci;
	if (s->zip_n) {
		have += s->zip_n - s->zip_ai;
		ci += s->zip_n;
	}
	while (have < want) {
		const struct mlx5_cqe64 *c = rxs_cq_peek(&s->ring, ci);
		if (!c)
			return false;
		uint32_t k = rxs_cqe_compressed(c) ? rxs_cqe_session_len(c) : 1;
		have += k;
		ci += k;
	}
	return true;
}
