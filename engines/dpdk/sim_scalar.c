/* SPDX-License-Identifier: MIT */
/*
 * The mlx5 PMD's scalar receive routine (mlx5_rx_burst), the one buffer
 * split forces, over the software NIC's rings.
 *
 * The PMD walks one data segment at a time: take the buffer the WQE
 * slot holds, allocate its replacement from the same pool, copy a few
 * fields into the replacement, write the replacement's address (and lkey)
 * into the WQE, link the old buffer into the packet's chain. Here the same
 * operations run phase by phase over a whole burst (poll every completion,
 * then every allocation, then every WQE rewrite, then every chain link)
 * so each stage is lapped once per burst instead of once per segment. The
 * work per packet and every call into the mempool are the same; only the
 * interleaving differs.
 */
#include <string.h>

#include "sim_int.h"

uint16_t rxd_sim_burst_scalar(struct rxd_queue *q, struct rxr_probe *p, struct rte_mbuf **pkts,
			      uint16_t n)
{
	struct rxd_simq *s = q->be;
	const uint32_t S = s->sges;
	const uint32_t wqe_cnt = s->ring.wqe_cnt;
	struct rte_mbuf *old[RXD_MAX_BURST][RXD_MAX_SEGS];
	struct rte_mbuf *rep[RXD_MAX_BURST][RXD_MAX_SEGS];
	uint32_t len[RXD_MAX_BURST];
	uint8_t used[RXD_MAX_BURST]; /* segments the packet filled; 0 = error CQE */
	uint32_t avail, done, out = 0, fail_k = UINT32_MAX, fail_seg = 0;

	/* cqe_poll: completions software owns, in order. The PMD checks each
	 * CQE's owner bit and takes the byte count; the wqe_counter must name
	 * the WQE the consumer index is at (strict in-order consumption). */
	for (avail = 0; avail < n; avail++) {
		const struct mlx5_cqe64 *cqe = rxs_cq_peek(&s->ring, s->cq_ci + avail);
		if (!cqe)
			break;
		if (be16toh(cqe->wqe_counter) != (uint16_t)(s->rq_ci - wqe_cnt + avail))
			s->wqe_counter_faults++;
		if (rxs_cqe_opcode(cqe) != MLX5_CQE_RESP_SEND) {
			len[avail] = 0;
			used[avail] = 0;
			continue;
		}
		uint32_t l = be32toh(cqe->byte_cnt), rem = l, u = 1;
		while (u < S && rem > s->seg_len[u - 1]) {
			rem -= s->seg_len[u - 1];
			u++;
		}
		len[avail] = l;
		used[avail] = (uint8_t)u;
	}
	if (avail == 0) {
		/* The PMD allocates the first replacement before it looks at
		 * the CQ and gives it back when the CQ is empty: an empty poll
		 * costs one get and one put on the pool. Counted apart from
		 * the per-packet calls (an idle queue polls all the time). */
		rxd_mpops_bind(&q->rx_idle_ops);
		struct rte_mbuf *m = rte_mbuf_raw_alloc(s->mp[0]);
		if (m) {
			rte_mbuf_raw_free(m);
			s->idle_allocs++;
		} else {
			s->nombuf_events++;
		}
		rxd_mpops_bind(&q->rx_ops);
		rxr_lap(p, RXR_ST_IDLE, 0);
		return 0;
	}
	rxr_lap(p, RXR_ST_CQE_POLL, avail);

	/* buf_alloc: one rte_mbuf_raw_alloc per filled segment, from the
	 * pool of the buffer being replaced; the replacement inherits that
	 * buffer's data length, packet length, data offset and port. */
	done = avail;
	for (uint32_t k = 0; k < avail; k++) {
		uint32_t base = (uint32_t)((s->rq_ci + k) & s->wqe_mask) * S;
		for (uint32_t g = 0; g < used[k]; g++) {
			struct rte_mbuf *o = s->elts[base + g];
			struct rte_mbuf *r = rte_mbuf_raw_alloc(o->pool);
			if (__builtin_expect(r == NULL, 0)) {
				s->nombuf_events++;
				if (g == 0) {
					/* nothing taken yet: the PMD bails out and
					 * the completion waits for the next burst */
					done = k;
				} else {
					/* mid-chain: the packet is dropped, the
					 * failing slot keeps its old buffer */
					fail_k = k;
					fail_seg = g;
					done = k + 1;
				}
				goto alloc_done;
			}
			r->data_len = o->data_len;
			r->pkt_len = o->pkt_len;
			r->data_off = o->data_off;
			r->port = o->port;
			old[k][g] = o;
			rep[k][g] = r;
			s->allocs++;
		}
	}
	if (avail < n) {
		/* the burst ended on an empty CQ: the PMD's look-ahead
		 * allocation for the next slot, given back at once */
		struct rte_mbuf *m = rte_mbuf_raw_alloc(s->mp[0]);
		if (m) {
			rte_mbuf_raw_free(m);
			s->spec_allocs++;
		} else {
			s->nombuf_events++;
		}
	}
alloc_done:
	rxr_lap(p, RXR_ST_BUF_ALLOC, done);
	if (done == 0)
		return 0;

	/* sge_setup: the replacement goes into the software ring and its
	 * address into the WQE data segment; the byte count stays. The PMD
	 * rewrites the lkey only when the queue's MR B-tree holds more than
	 * its sentinel entry, i.e. once any region is registered: always in
	 * practice, so every segment pays the MR cache lookup. */
	for (uint32_t k = 0; k < done; k++) {
		uint32_t base = (uint32_t)((s->rq_ci + k) & s->wqe_mask) * S;
		uint32_t segs = k == fail_k ? fail_seg : used[k];
		for (uint32_t g = 0; g < segs; g++) {
			struct rte_mbuf *r = rep[k][g];
			struct mlx5_wqe_data_seg *d = rxs_wqe_seg(&s->ring, s->rq_ci + k, g);
			s->elts[base + g] = r;
			d->addr = htobe64((uint64_t)rte_pktmbuf_mtod(r, uintptr_t));
			if (s->lkey_per_seg)
				d->lkey = htobe32(rxd_mr_lookup(&s->mrc, (uintptr_t)r->buf_addr));
		}
	}
	rxr_lap(p, RXR_ST_SGE_SETUP, done);

	/* chain: the buffers that held the data become the packet: head
	 * metadata from the CQE, each segment's length, next links. */
	for (uint32_t k = 0; k < done; k++) {
		if (k == fail_k || used[k] == 0) {
			/* dropped: give back the old buffers already replaced */
			uint32_t segs = k == fail_k ? fail_seg : 0;
			for (uint32_t g = 0; g < segs; g++)
				rte_mbuf_raw_free(old[k][g]);
			if (k == fail_k)
				s->nombuf_pkts++;
			else
				s->err_cqes++;
			continue;
		}
		struct rte_mbuf *head = old[k][0], *prev = NULL;
		uint32_t rem = len[k];
		head->ol_flags = 0;
		head->packet_type = RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV4 | RTE_PTYPE_L4_UDP;
		head->pkt_len = len[k];
		head->port = s->port;
		head->nb_segs = (uint16_t)used[k];
		for (uint32_t g = 0; g < used[k]; g++) {
			struct rte_mbuf *m = old[k][g];
			if (prev)
				prev->next = m;
			if (g + 1 < used[k]) {
				rem -= m->data_len;
			} else {
				m->data_len = (uint16_t)rem;
				m->next = NULL;
			}
			prev = m;
		}
		pkts[out++] = head;
	}
	rxr_lap(p, RXR_ST_CHAIN, out);

	/* doorbell: CQ consumer index first, then the RQ counter for the
	 * re-posted WQEs, once per burst */
	s->cq_ci += done;
	s->rq_ci += done;
	rxs_cq_set_ci(&s->ring, s->cq_ci);
	rxs_rq_doorbell(&s->ring, s->rq_ci);
	s->doorbells++;
	rxr_lap(p, RXR_ST_DOORBELL, out);
	return (uint16_t)out;
}
