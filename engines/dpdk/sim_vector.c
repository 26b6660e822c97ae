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
 * first one hardware still owns), the next four prefetched meanwhile. A
 * compressed session's title ends the group: its mini-CQEs fill the
 * session's mbufs at once (rxq_cq_decompress_v), what does not fit in
 * this call's burst is returned first by the next call.
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
static void vec_replenish(struct rxd_simq *s, struct rxp_probe *p)
{
	const uint32_t wqe_cnt = s->ring.wqe_cnt;
	uint32_t free_n = wqe_cnt - (s->rq_ci - s->rq_pi);
	if (free_n < s->repl_thresh)
		return;
	rxp_stage_begin(p, RXP_ST_BUF_ALLOC);
	uint32_t idx = s->rq_ci & s->wqe_mask;
	/* not across the ring's end (the PMD also keeps a few slots back
	 * for its vector padding, which this model does not need) */
	uint32_t n = free_n < wqe_cnt - idx ? free_n : wqe_cnt - idx;
	if (rte_mempool_get_bulk(s->mp[0], (void **)&s->elts[idx], n) < 0) {
		/* the PMD counts every mbuf it could not get and retries on
		 * the next burst; the WQEs stay unposted */
		s->nombuf_events += n;
		rxp_lap(p, RXP_ST_BUF_ALLOC, 0);
		return;
	}
	s->allocs += n;
	s->replenish_calls++;
	rxp_lap(p, RXP_ST_BUF_ALLOC, n);
	rxp_stage_begin(p, RXP_ST_SGE_SETUP);
	for (uint32_t i = 0; i < n; i++) {
		struct mlx5_wqe_data_seg *d = rxs_wqe_seg(&s->ring, s->rq_ci + i, 0);
		const struct rte_mbuf *m = s->elts[idx + i];
		d->addr = htobe64((uint64_t)(uintptr_t)m->buf_addr + RTE_PKTMBUF_HEADROOM);
		if (s->lkey_per_seg)
			d->lkey = htobe32(rxd_mr_lookup(&s->mrc, (uintptr_t)m->buf_addr));
	}
	rxp_lap(p, RXP_ST_SGE_SETUP, n);
	rxp_stage_begin(p, RXP_ST_DOORBELL);
	s->rq_ci += n;
	rxs_rq_doorbell(&s->ring, s->rq_ci);
	s->doorbells++;
	rxp_lap(p, RXP_ST_DOORBELL, 0);
}

/* The rearm fields plus what the CQE (or mini-CQE) says. The tail's next
 * is NULL by the pool's guarantee: the PMD's 8-byte rearm store does not
 * include it. */
static inline void vec_fill(const struct rxd_simq *s, struct rte_mbuf *m, uint32_t len,
			    uint32_t ptype, uint32_t hash)
{
	m->data_off = RTE_PKTMBUF_HEADROOM;
	rte_mbuf_refcnt_set(m, 1);
	m->nb_segs = 1;
	m->port = s->port;
	if (s->legacy_nextnull)
		m->next = NULL;
	m->ol_flags = 0;
	if (s->rss_hash) {
		m->hash.rss = hash;
		m->ol_flags = RTE_MBUF_F_RX_RSS_HASH;
	}
	m->packet_type = ptype;
	m->pkt_len = len;
	m->data_len = (uint16_t)len;
}

static inline uint32_t vec_ptype(const struct rxd_simq *s, const struct mlx5_cqe64 *c)
{
	return s->legacy_ptype ? (RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV4 | RTE_PTYPE_L4_UDP)
			       : rxd_cqe_ptype(c);
}

/*
 * rxq_cq_decompress_v: the session whose title is at CQ index ci fills
 * elts[0..k): the title's fields (packet type) as the template, each
 * mini-CQE's byte count and hash; every entry of the session is
 * invalidated, eight as each mini array is left, the rest at the end.
 * Returns k.
 */
static uint32_t vec_decompress(struct rxd_simq *s, uint32_t ci, struct rte_mbuf **elts)
{
	const struct mlx5_cqe64 *title = &s->ring.cq_buf[ci & s->cqe_mask];
	uint32_t k = rxs_cqe_session_len(title), inv = 0;
	uint32_t ptype = vec_ptype(s, title);
	for (uint32_t pos = 0; pos < k; pos++) {
		const struct rxs_mini_cqe8 *mc = rxs_mini_cqe(&s->ring, ci, pos);
		vec_fill(s, elts[pos], be32toh(mc->byte_cnt), ptype,
			 s->rss_hash ? be32toh(mc->rx_hash_result) : 0);
		if (((pos + 1) & (RXS_MINI_PER_CQE - 1)) == 0 && pos + 1 < k) {
			if (pos + 1 + RXS_MINI_PER_CQE < k)
				__builtin_prefetch(&s->ring.cq_buf[(ci + pos + 1 + RXS_MINI_PER_CQE) &
								   s->cqe_mask]);
			for (uint32_t i = 0; i < RXS_MINI_PER_CQE; i++)
				rxs_cqe_invalidate(&s->ring, ci + inv++);
		}
	}
	for (; inv < k; inv++)
		rxs_cqe_invalidate(&s->ring, ci + inv);
	s->sessions++;
	s->mini_cqes += k;
	return k;
}

uint16_t rxd_sim_burst_vector(struct rxd_queue *q, struct rxp_probe *p, struct rte_mbuf **pkts,
			      uint16_t n)
{
	struct rxd_simq *s = q->be;
	const uint32_t wqe_cnt = s->ring.wqe_cnt;
	uint32_t tot = 0;

	/* the sampled wqe_counter check (the PMD has none) */
	if (__builtin_expect((s->bursts++ & ((1u << RXD_WQE_CHECK_SHIFT) - 1)) == 0, 0) &&
	    !s->decompressed && !s->legacy_wqecheck) {
		const struct mlx5_cqe64 *cqe = rxs_cq_peek(&s->ring, s->cq_ci);
		if (cqe) {
			s->wqe_checks++;
			if (be16toh(cqe->wqe_counter) != (uint16_t)s->rq_pi)
				s->wqe_counter_faults++;
		}
	}
	while (tot < n) {
		vec_replenish(s, p);
		if (s->decompressed) {
			/* mbufs of a session decompressed by an earlier call */
			rxp_stage_begin(p, RXP_ST_CQE_POLL);
			uint32_t k = s->decompressed < n - tot ? s->decompressed : n - tot;
			memcpy(&pkts[tot], &s->elts[s->rq_pi & s->wqe_mask], k * sizeof(*pkts));
			s->rq_pi += k;
			s->decompressed -= k;
			tot += k;
			rxp_lap(p, RXP_ST_CQE_POLL, k);
			if (tot == n)
				break;
		}
		/* a poll after this call's first is cqe_poll even when empty;
		 * the first is announced once it finds a completion */
		if (tot)
			rxp_stage_begin(p, RXP_ST_CQE_POLL);
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
		if (!s->legacy_noprefetch)
			for (uint32_t i = 0; i < VEC_DESCS_PER_LOOP; i++)
				__builtin_prefetch(&s->ring.cq_buf[(s->cq_ci + i) & s->cqe_mask]);
		uint32_t got = 0, out = 0, errs = 0;
		bool zip = false;
		while (got < lim) {
			/* four completions per step; stop at the first one
			 * hardware still owns, or after a session's title; the
			 * next four are prefetched while these are decoded */
			uint32_t v = 0;
			const struct mlx5_cqe64 *c[VEC_DESCS_PER_LOOP];
			if (!s->legacy_noprefetch && lim - got >= 2 * VEC_DESCS_PER_LOOP)
				for (uint32_t i = 0; i < VEC_DESCS_PER_LOOP; i++)
					__builtin_prefetch(
					    &s->ring.cq_buf[(s->cq_ci + got + VEC_DESCS_PER_LOOP + i) &
							    s->cqe_mask]);
			for (; v < VEC_DESCS_PER_LOOP && got + v < lim; v++) {
				c[v] = rxs_cq_peek(&s->ring, s->cq_ci + got + v);
				if (!c[v])
					break;
				if (!got && !v)
					rxp_stage_begin(p, RXP_ST_CQE_POLL);
				if (s->legacy_wqecheck) {
					s->wqe_checks++;
					if (be16toh(c[v]->wqe_counter) != (uint16_t)(s->rq_pi + got + v))
						s->wqe_counter_faults++;
				}
				if (rxs_cqe_opcode(c[v]) == MLX5_CQE_RESP_SEND &&
				    rxs_cqe_compressed(c[v])) {
					zip = true;
					break;
				}
			}
			for (uint32_t j = 0; j < v; j++) {
				struct rte_mbuf *m = s->elts[eidx + got + j];
				if (rxs_cqe_opcode(c[j]) != MLX5_CQE_RESP_SEND) {
					/* errored completion: the PMD marks the mbuf
					 * and frees it before returning */
					rte_pktmbuf_free_seg(m);
					errs++;
					continue;
				}
				vec_fill(s, m, be32toh(c[j]->byte_cnt), vec_ptype(s, c[j]),
					 s->rss_hash ? rxs_cqe_hash(c[j]) : 0);
				pkts[tot + out++] = m;
			}
			got += v;
			if (zip || v < VEC_DESCS_PER_LOOP)
				break;
		}
		if (got == 0 && !zip) {
			rxp_lap(p, tot ? RXP_ST_CQE_POLL : RXP_ST_IDLE, 0);
			break;
		}
		s->err_cqes += errs;
		s->rq_pi += got;
		s->cq_ci += got;
		if (zip) {
			/* the title went through the four-wide decode as the
			 * template; the session now fills its k mbufs, returns
			 * what this call has room for and keeps the rest */
			uint32_t k = vec_decompress(s, s->cq_ci, &s->elts[eidx + got]);
			uint32_t room = lim - got, give = k < room ? k : room;
			s->cq_ci += k;
			memcpy(&pkts[tot + out], &s->elts[eidx + got], give * sizeof(*pkts));
			s->rq_pi += give;
			s->decompressed = k - give;
			out += give;
		}
		rxp_lap(p, RXP_ST_CQE_POLL, out);
		rxp_stage_begin(p, RXP_ST_DOORBELL);
		rxs_cq_set_ci(&s->ring, s->cq_ci);
		s->doorbells++;
		rxp_lap(p, RXP_ST_DOORBELL, out);
		tot += out;
		if (got < lim && !zip)
			break;
	}
	return (uint16_t)tot;
}
