/* SPDX-License-Identifier: MIT */
/*
 * The mlx5 PMD's vectorised receive routine (mlx5_rx_burst_vec /
 * rxq_burst_v), single segment only, over the software NIC's rings.
 *
 * Unlike the scalar routine it never allocates per packet: the mbuf a
 * WQE holds is handed to the application as is, and the emptied slots are
 * refilled in bulk, one rte_mempool_get_bulk for a run of at least
 * repl_thresh slots, at the start of a burst. Completions are taken four
 * at a time (the SSE/NEON code decodes four CQEs per loop and stops at the
 * first one hardware still owns).
 */
#include <string.h>

#include "sim_int.h"

#define VEC_DESCS_PER_LOOP 4u
#define VEC_MAX_BURST 64u

uint32_t rxd_sim_vector_thresh(uint32_t wqe_cnt)
{
	/* the PMD's replenish threshold: a full vector burst, or a quarter
	 * of a small ring */
	uint32_t t = wqe_cnt / 4;
	return t < VEC_MAX_BURST ? t : VEC_MAX_BURST;
}

/* Bulk replenish (mlx5_rx_replenish_bulk_mbuf). */
static void vec_replenish(struct rxd_simq *s, struct rxr_probe *p)
{
	const uint32_t wqe_cnt = s->ring.wqe_cnt;
	uint32_t free_n = wqe_cnt - (s->rq_ci - s->rq_pi);
	if (free_n < s->repl_thresh)
		return;
	uint32_t idx = s->rq_ci & s->wqe_mask;
	/* not across the ring's end (the PMD also keeps a few slots back
	 * for its vector padding, which this model does not need) */
	uint32_t n = free_n < wqe_cnt - idx ? free_n : wqe_cnt - idx;
	if (rte_mempool_get_bulk(s->mp[0], (void **)&s->elts[idx], n) < 0) {
		/* the PMD counts every mbuf it could not get and retries on
		 * the next burst; the WQEs stay unposted */
		s->nombuf_events += n;
		rxr_lap(p, RXR_ST_BUF_ALLOC, 0);
		return;
	}
	s->allocs += n;
	s->replenish_calls++;
	rxr_lap(p, RXR_ST_BUF_ALLOC, n);
	for (uint32_t i = 0; i < n; i++) {
		struct mlx5_wqe_data_seg *d = rxs_wqe_seg(&s->ring, s->rq_ci + i, 0);
		const struct rte_mbuf *m = s->elts[idx + i];
		d->addr = htobe64((uint64_t)(uintptr_t)m->buf_addr + RTE_PKTMBUF_HEADROOM);
		if (s->lkey_per_seg)
			d->lkey = htobe32(rxd_mr_lookup(&s->mrc, (uintptr_t)m->buf_addr));
	}
	rxr_lap(p, RXR_ST_SGE_SETUP, n);
	s->rq_ci += n;
	rxs_rq_doorbell(&s->ring, s->rq_ci);
	s->doorbells++;
	rxr_lap(p, RXR_ST_DOORBELL, 0);
}

uint16_t rxd_sim_burst_vector(struct rxd_queue *q, struct rxr_probe *p, struct rte_mbuf **pkts,
			      uint16_t n)
{
	struct rxd_simq *s = q->be;
	const uint32_t wqe_cnt = s->ring.wqe_cnt;
	uint32_t tot = 0;

	while (tot < n) {
		vec_replenish(s, p);
		uint32_t eidx = s->rq_pi & s->wqe_mask;
		uint32_t cidx = s->cq_ci & s->cqe_mask;
		uint32_t lim = n - tot;
		if (lim > VEC_MAX_BURST)
			lim = VEC_MAX_BURST;
		lim &= ~(VEC_DESCS_PER_LOOP - 1);
		if (lim > wqe_cnt - eidx)
			lim = wqe_cnt - eidx;
		if (lim > s->ring.cqe_cnt - cidx)
			lim = s->ring.cqe_cnt - cidx;
		uint32_t got = 0, out = 0, errs = 0;
		while (got < lim) {
			/* four completions per step; stop at the first one
			 * hardware still owns */
			uint32_t v = 0;
			const struct mlx5_cqe64 *c[VEC_DESCS_PER_LOOP];
			for (; v < VEC_DESCS_PER_LOOP && got + v < lim; v++) {
				c[v] = rxs_cq_peek(&s->ring, s->cq_ci + got + v);
				if (!c[v])
					break;
			}
			for (uint32_t j = 0; j < v; j++) {
				struct rte_mbuf *m = s->elts[eidx + got + j];
				if (be16toh(c[j]->wqe_counter) != (uint16_t)(s->rq_pi + got + j))
					s->wqe_counter_faults++;
				if (rxs_cqe_opcode(c[j]) != MLX5_CQE_RESP_SEND) {
					/* errored completion: the PMD marks the mbuf
					 * and frees it before returning */
					rte_pktmbuf_free_seg(m);
					errs++;
					continue;
				}
				uint32_t len = be32toh(c[j]->byte_cnt);
				/* the rearm fields plus what the CQE says */
				m->data_off = RTE_PKTMBUF_HEADROOM;
				rte_mbuf_refcnt_set(m, 1);
				m->nb_segs = 1;
				m->port = s->port;
				m->next = NULL;
				m->ol_flags = 0;
				m->packet_type =
				    RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV4 | RTE_PTYPE_L4_UDP;
				m->pkt_len = len;
				m->data_len = (uint16_t)len;
				pkts[tot + out++] = m;
			}
			got += v;
			if (v < VEC_DESCS_PER_LOOP)
				break;
		}
		if (got == 0) {
			rxr_lap(p, tot ? RXR_ST_CQE_POLL : RXR_ST_IDLE, 0);
			break;
		}
		s->err_cqes += errs;
		s->rq_pi += got;
		s->cq_ci += got;
		rxr_lap(p, RXR_ST_CQE_POLL, out);
		rxs_cq_set_ci(&s->ring, s->cq_ci);
		s->doorbells++;
		rxr_lap(p, RXR_ST_DOORBELL, out);
		tot += out;
		if (got < lim)
			break;
	}
	return (uint16_t)tot;
}
