/* SPDX-License-Identifier: MIT */
/*
 * The mlx5 PMD's scalar receive routine (mlx5_rx_burst), the one buffer
 * split forces, over the software NIC's rings.
 *
 * The PMD walks one data segment at a time: take the buffer the WQE
 * slot holds, allocate its replacement from the same pool, copy a few
 * fields into the replacement, write the replacement's address (and lkey)
 * into the WQE, link the old buffer into the packet's chain. Here the same
 * operations run phase by phase over a group of packets (poll every
 * completion, then every allocation, then every WQE rewrite, then every
 * chain link) so each stage is lapped once per group instead of once per
 * segment. The work per packet and every call into the mempool are the
 * same; only the interleaving differs. The group is the whole burst by
 * default; RXRAY_SIM_SCALAR_GROUP=G (read at setup) laps groups of G
 * packets instead (G = 1: per packet), which bench/sim_fidelity uses to
 * check that phasing does not change the total.
 *
 * Completions are read as mlx5_rx_poll_len reads them: a plain CQE, or a
 * compressed session (simnic.h) whose title stays at the consumer index
 * while its mini-CQEs are read one by one, each fully read mini array's
 * entries invalidated as it is left and the rest at the session's end.
 */
#include <string.h>

#include "sim_int.h"

#define SC_LEGACY_PTYPE (RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV4 | RTE_PTYPE_L4_UDP)

/* Invalidate entries [from, to) of the CQ: they held a session. */
static inline void sc_invalidate(const struct rxd_simq *s, uint32_t from, uint32_t to)
{
	for (uint32_t i = from; i != to; i++)
		rxs_cqe_invalidate(&s->ring, i);
}

/* One completion, k-th of this burst (for the legacy per-CQE check).
 * False when software owns none. */
static inline bool sc_poll_one(struct rxd_simq *s, struct rxd_comp *c, uint32_t k)
{
	const uint32_t mask = s->cqe_mask;
	if (!s->zip_n) {
		const struct mlx5_cqe64 *cqe = rxs_cq_peek(&s->ring, s->cq_ci);
		if (!cqe)
			return false;
		if (__builtin_expect(s->legacy_wqecheck, 0)) {
			s->wqe_checks++;
			if (be16toh(cqe->wqe_counter) !=
			    (uint16_t)(s->rq_ci - s->ring.wqe_cnt + k))
				s->wqe_counter_faults++;
		}
		if (rxs_cqe_opcode(cqe) != MLX5_CQE_RESP_SEND) {
			c->len = 0;
			s->cq_ci++;
			return true;
		}
		c->ptype = s->legacy_ptype ? SC_LEGACY_PTYPE : rxd_cqe_ptype(cqe);
		if (!rxs_cqe_compressed(cqe)) {
			c->len = be32toh(cqe->byte_cnt);
			if (s->rss_hash)
				c->hash = rxs_cqe_hash(cqe);
			s->cq_ci++;
			return true;
		}
		/* a session opens: the title stays at cq_ci until it ends;
		 * prefetch every entry it will invalidate, as the PMD does */
		s->zip_n = rxs_cqe_session_len(cqe);
		s->zip_ai = 0;
		s->zip_ca = s->cq_ci + 1;
		s->zip_na = s->zip_ca + 7;
		s->sessions++;
		for (uint32_t i = s->zip_ca; i != s->cq_ci + s->zip_n; i++)
			__builtin_prefetch(&s->ring.cq_buf[i & mask], 1);
	} else {
		/* the PMD reads the packet type from the title each time */
		const struct mlx5_cqe64 *title = &s->ring.cq_buf[s->cq_ci & mask];
		c->ptype = s->legacy_ptype ? SC_LEGACY_PTYPE : rxd_cqe_ptype(title);
	}
	const struct rxs_mini_cqe8 *mc = rxs_mini_cqe(&s->ring, s->cq_ci, s->zip_ai);
	c->len = be32toh(mc->byte_cnt);
	if (s->rss_hash)
		c->hash = be32toh(mc->rx_hash_result);
	s->mini_cqes++;
	if ((++s->zip_ai & (RXS_MINI_PER_CQE - 1)) == 0) {
		/* a mini array is used up: give its entries back */
		sc_invalidate(s, s->zip_ca, s->zip_na);
		s->zip_ca = s->zip_na;
		s->zip_na += RXS_MINI_PER_CQE;
	}
	if (s->zip_ai == s->zip_n) {
		uint32_t end = s->cq_ci + s->zip_n;
		sc_invalidate(s, s->zip_ca, end);
		s->cq_ci = end;
		s->zip_n = 0;
	}
	return true;
}

/* Up to n completions into comp[]: carried ones first. */
static uint32_t sc_poll(struct rxd_simq *s, struct rxp_probe *p, struct rxd_comp *comp,
			uint32_t n)
{
	uint32_t k = 0;
	if (__builtin_expect(s->carry_n != 0, 0)) {
		k = s->carry_n < n ? s->carry_n : n;
		memcpy(comp, s->carry, k * sizeof(*comp));
		s->carry_n -= k;
		memmove(s->carry, s->carry + k, s->carry_n * sizeof(*comp));
		rxp_stage_begin(p, RXP_ST_CQE_POLL);
	}
	for (; k < n; k++) {
		if (!sc_poll_one(s, &comp[k], k))
			break;
		/* cqe_poll once a completion is found: an empty poll is idle,
		 * or no lap at all after a group that did work */
		if (!k)
			rxp_stage_begin(p, RXP_ST_CQE_POLL);
	}
	return k;
}

/* Completions polled but not delivered go back in front of the carry. */
static void sc_carry(struct rxd_simq *s, const struct rxd_comp *comp, uint32_t n)
{
	memmove(s->carry + n, s->carry, s->carry_n * sizeof(*comp));
	memcpy(s->carry, comp, n * sizeof(*comp));
	s->carry_n += n;
	s->carried += n;
}

/*
 * One group: poll up to n completions and deliver them into pkts.
 * *delivered = packets handed out; returns the completions consumed
 * (delivered, dropped or errored); *more = false when the group ended
 * early (CQ empty or an allocation failed).
 */
static uint32_t sc_group(struct rxd_queue *q, struct rxp_probe *p, struct rte_mbuf **pkts,
			 uint32_t n, uint32_t *delivered, bool *more)
{
	struct rxd_simq *s = q->be;
	const uint32_t S = s->sges;
	struct rte_mbuf *old[RXD_MAX_BURST][RXD_MAX_SEGS];
	struct rte_mbuf *rep[RXD_MAX_BURST][RXD_MAX_SEGS];
	struct rxd_comp comp[RXD_MAX_BURST];
	uint8_t used[RXD_MAX_BURST]; /* segments the packet filled; 0 = error CQE */
	uint32_t avail, done, out = 0, fail_k = UINT32_MAX, fail_seg = 0;

	*delivered = 0;
	*more = false;
	/* cqe_poll: completions software owns, in order */
	avail = sc_poll(s, p, comp, n);
	if (avail == 0)
		return 0;
	for (uint32_t k = 0; k < avail; k++) {
		uint32_t rem = comp[k].len, u = 1;
		while (u < S && rem > s->seg_len[u - 1]) {
			rem -= s->seg_len[u - 1];
			u++;
		}
		used[k] = comp[k].len ? (uint8_t)u : 0;
	}
	rxp_lap(p, RXP_ST_CQE_POLL, avail);
	rxp_stage_begin(p, RXP_ST_BUF_ALLOC);

	/* buf_alloc: one rte_mbuf_raw_alloc per filled segment, from the
	 * pool of the buffer being replaced; the replacement inherits that
	 * buffer's data length, packet length, data offset and port. */
	done = avail;
	for (uint32_t k = 0; k < avail; k++) {
		uint32_t base = (uint32_t)((s->rq_ci + k) & s->wqe_mask) * S;
		for (uint32_t g = 0; g < used[k]; g++) {
			struct rte_mbuf *o = s->elts[base + g];
			/* the PMD prefetches the segment's mbuf and WQE before
			 * allocating its replacement */
			if (!s->legacy_noprefetch) {
				__builtin_prefetch(o);
				__builtin_prefetch(rxs_wqe_seg(&s->ring, s->rq_ci + k, g));
			}
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
				sc_carry(s, comp + done, avail - done);
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
	*more = avail == n;
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
	rxp_lap(p, RXP_ST_BUF_ALLOC, done);
	if (done == 0)
		return 0;
	rxp_stage_begin(p, RXP_ST_SGE_SETUP);

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
	rxp_lap(p, RXP_ST_SGE_SETUP, done);
	rxp_stage_begin(p, RXP_ST_CHAIN);

	/* chain: the buffers that held the data become the packet: head
	 * metadata from the CQE (packet type through the table, the RSS
	 * hash when there are several queues), each segment's length, next
	 * links. The tail's next is already NULL: the pool guarantees it of
	 * every free mbuf, so the PMD never writes it. */
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
		uint32_t rem = comp[k].len;
		head->packet_type = comp[k].ptype;
		head->ol_flags = 0;
		if (s->rss_hash) {
			head->hash.rss = comp[k].hash;
			head->ol_flags = RTE_MBUF_F_RX_RSS_HASH;
		}
		head->pkt_len = comp[k].len;
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
				if (s->legacy_nextnull)
					m->next = NULL;
			}
			prev = m;
		}
		pkts[out++] = head;
	}
	rxp_lap(p, RXP_ST_CHAIN, out);
	s->rq_ci += done;
	*delivered = out;
	return done;
}

uint16_t rxd_sim_burst_scalar(struct rxd_queue *q, struct rxp_probe *p, struct rte_mbuf **pkts,
			      uint16_t n)
{
	struct rxd_simq *s = q->be;
	uint32_t group = s->group && s->group < n ? s->group : n;
	uint32_t out = 0, consumed = 0;
	bool more = true;

	/* the sampled wqe_counter check (the PMD has none): the next
	 * completion must name the oldest WQE not yet consumed */
	if (__builtin_expect((s->bursts++ & ((1u << RXD_WQE_CHECK_SHIFT) - 1)) == 0, 0) &&
	    !s->zip_n && !s->carry_n && !s->legacy_wqecheck) {
		const struct mlx5_cqe64 *cqe = rxs_cq_peek(&s->ring, s->cq_ci);
		if (cqe) {
			s->wqe_checks++;
			if (be16toh(cqe->wqe_counter) != (uint16_t)(s->rq_ci - s->ring.wqe_cnt))
				s->wqe_counter_faults++;
		}
	}
	while (more && consumed < n) {
		uint32_t got = 0, want = n - consumed < group ? n - consumed : group;
		uint32_t c = sc_group(q, p, pkts + out, want, &got, &more);
		if (c == 0 && consumed == 0 && s->carry_n == 0) {
			/* The PMD allocates the first replacement before it
			 * looks at the CQ and gives it back when the CQ is
			 * empty: an empty poll costs one get and one put on the
			 * pool. Counted apart from the per-packet calls (an
			 * idle queue polls all the time). */
			rxd_mpops_bind(&q->rx_idle_ops);
			struct rte_mbuf *m = rte_mbuf_raw_alloc(s->mp[0]);
			if (m) {
				rte_mbuf_raw_free(m);
				s->idle_allocs++;
			} else {
				s->nombuf_events++;
			}
			rxd_mpops_bind(&q->rx_ops);
			rxp_lap(p, RXP_ST_IDLE, 0);
			return 0;
		}
		consumed += c;
		out += got;
		if (c < want)
			break;
	}
	if (consumed == 0)
		return 0;
	rxp_stage_begin(p, RXP_ST_DOORBELL);

	/* doorbell: CQ consumer index first (inside a session it stays at
	 * the title), then the RQ counter for the re-posted WQEs, once per
	 * burst */
	rxs_cq_set_ci(&s->ring, s->cq_ci);
	rxs_rq_doorbell(&s->ring, s->rq_ci);
	s->doorbells++;
	rxp_lap(p, RXP_ST_DOORBELL, out);
	return (uint16_t)out;
}
