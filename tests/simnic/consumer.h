/* SPDX-License-Identifier: MIT */
/*
 * A tiny fixed-slot consumer of the software NIC for the tests and the
 * rate bench: WQE i always points at slot i of one registered region
 * (hds: header slot i and payload slot i of two regions); poll CQE ->
 * slot = wqe_counter & mask -> check the sequence number -> re-post.
 */
#ifndef RXRAY_TEST_SIMNIC_CONSUMER_H
#define RXRAY_TEST_SIMNIC_CONSUMER_H

#include <stdlib.h>
#include <string.h>

#include "rxray/simnic.h"

struct tc_queue {
	struct rxs_ring r;
	uint32_t posted, ci;
	uint64_t next_seq;   /* lowest sequence number not seen yet */
	uint64_t good;       /* good CQEs */
	uint64_t errors;     /* error CQEs */
	uint64_t gaps;       /* sequence numbers skipped */
	uint64_t backwards;  /* seq below next_seq: duplicate or reorder */
	uint64_t bad_hdr;    /* wrong magic or queue field */
	uint64_t bad_len;    /* byte_cnt != frame */
	uint64_t bad_stamp;  /* payload stamp != seq */
	uint8_t last_synd;
	uint64_t sessions;   /* compressed sessions read */
	uint64_t minis;      /* completions read from mini-CQEs */
	uint64_t bad_session; /* session crossing the CQ's end, or k < 2 */
	uint64_t bad_hash;   /* RSS hash that does not spread to this queue */
	uint64_t bad_ptype;  /* parser fields (packet-type index) not UDP/IPv4 */
	uint64_t bad_wqe;    /* wqe_counter not the next WQE posted (16 bits) */
	uint64_t bad_order;  /* a later CQ entry published before entry ci */
	uint64_t seen_early; /* a CQE seen before its timestamp (its arrival) */
};

struct tc {
	struct rxs_nic *nic;
	struct rxs_params p;
	uint32_t nq, slot, split;
	char *hdr, *pay;     /* regions */
	size_t hdr_len, pay_len;
	uint32_t hkey, pkey;
	uint64_t spin_per_pkt; /* clock ticks of "app work" per packet */
	bool check_order;    /* plain CQEs: look ahead for out-of-order ones */
	uint64_t *ts_log;    /* plain CQEs of queue 0: timestamp by sequence number */
	uint32_t ts_cap;
	struct tc_queue q[RXS_MAX_QUEUES];
};

static inline char *tc_hdr_slot(struct tc *t, uint32_t qi, uint32_t s)
{
	return t->hdr + ((size_t)qi * t->p.ring + s) * t->slot;
}
static inline char *tc_pay_slot(struct tc *t, uint32_t qi, uint32_t s)
{
	return t->pay + ((size_t)qi * t->p.ring + s) * t->slot;
}

static inline void tc_post(struct tc *t, uint32_t qi, uint32_t idx)
{
	struct tc_queue *q = &t->q[qi];
	uint32_t s = idx & (t->p.ring - 1);
	struct mlx5_wqe_data_seg *d0 = rxs_wqe_seg(&q->r, idx, 0);
	if (t->p.sges == 2) {
		rxs_seg_set(d0, tc_hdr_slot(t, qi, s), t->split, t->hkey);
		rxs_seg_set(rxs_wqe_seg(&q->r, idx, 1), tc_pay_slot(t, qi, s), t->slot, t->pkey);
	} else {
		rxs_seg_set(d0, tc_hdr_slot(t, qi, s), t->slot, t->hkey);
	}
}

/* Create NIC + regions, post every WQE. 0 or -errno. split: hds only. */
static inline int tc_init(struct tc *t, const struct rxs_params *p, uint32_t split)
{
	char err[256];
	memset(t, 0, sizeof(*t));
	t->p = *p;
	t->nq = p->queues;
	t->split = split;
	t->slot = (p->frame + 63) & ~63u;
	int rc = rxs_nic_open(p, &t->nic, err, sizeof(err));
	if (rc < 0)
		return rc;
	t->hdr_len = (size_t)t->slot * p->ring * p->queues;
	t->hdr = aligned_alloc(64, t->hdr_len);
	t->pay_len = t->hdr_len;
	t->pay = aligned_alloc(64, t->pay_len);
	if (!t->hdr || !t->pay)
		return -ENOMEM;
	memset(t->hdr, 0, t->hdr_len);
	memset(t->pay, 0, t->pay_len);
	rc = rxs_mr_reg(t->nic, t->hdr, t->hdr_len, &t->hkey);
	if (rc == 0)
		rc = rxs_mr_reg(t->nic, t->pay, t->pay_len, &t->pkey);
	if (rc < 0)
		return rc;
	for (uint32_t qi = 0; qi < t->nq; qi++) {
		struct tc_queue *q = &t->q[qi];
		rxs_nic_ring(t->nic, qi, &q->r);
		for (uint32_t i = 0; i < p->ring; i++)
			tc_post(t, qi, i);
		q->posted = p->ring;
		rxs_rq_doorbell(&q->r, q->posted);
	}
	return 0;
}

static inline void tc_fini(struct tc *t)
{
	rxs_nic_free(t->nic);
	free(t->hdr);
	free(t->pay);
	t->nic = NULL;
	t->hdr = t->pay = NULL;
}

/* One good completion: slot s of queue qi holds a frame of len bytes. */
static inline void tc_good(struct tc *t, uint32_t qi, uint32_t s, uint32_t len)
{
	struct tc_queue *q = &t->q[qi];
	{
		const char *h = tc_hdr_slot(t, qi, s);
		uint64_t seq = rxs_hdr_seq(h);
		if (!rxs_hdr_valid(h) || rxs_hdr_queue(h) != qi)
			q->bad_hdr++;
		if (len != t->p.frame)
			q->bad_len++;
		if (seq < q->next_seq) {
			q->backwards++;
		} else {
			q->gaps += seq - q->next_seq;
			q->next_seq = seq + 1;
		}
		if (t->p.sges == 2 && t->p.payload == RX_PAYLOAD_STAMP) {
			uint64_t v;
			memcpy(&v, tc_pay_slot(t, qi, s), 8);
			if (be64toh(v) != seq)
				q->bad_stamp++;
		}
		q->good++;
		if (t->spin_per_pkt)
			rxp_spin_until(rxp_now(), t->spin_per_pkt);
	}
}

/* The RSS hash must be the one that spread the packet to this queue
 * (indirection table of 128 filled round robin, simnic.h). */
static inline void tc_hash(struct tc *t, uint32_t qi, uint32_t hash)
{
	if ((hash & 127u) % t->nq != qi)
		t->q[qi].bad_hash++;
}

/*
 * A compressed session at q->ci (simnic.h): k completions for WQEs
 * wqe_counter .. wqe_counter + k - 1, lengths and hashes in the minis;
 * every entry invalidated before the consumer index passes it.
 */
static inline uint32_t tc_session(struct tc *t, uint32_t qi, const struct mlx5_cqe64 *title)
{
	struct tc_queue *q = &t->q[qi];
	uint32_t k = rxs_cqe_session_len(title);
	uint32_t wc = be16toh(title->wqe_counter);
	if (k < 2 || (q->ci & (q->r.cqe_cnt - 1)) + k > q->r.cqe_cnt)
		q->bad_session++;
	for (uint32_t i = 0; i < k; i++) {
		const struct rxs_mini_cqe8 *mc = rxs_mini_cqe(&q->r, q->ci, i);
		tc_hash(t, qi, be32toh(mc->rx_hash_result));
		tc_good(t, qi, (wc + i) & (t->p.ring - 1), be32toh(mc->byte_cnt));
	}
	for (uint32_t i = 0; i < k; i++)
		rxs_cqe_invalidate(&q->r, q->ci + i);
	q->sessions++;
	q->minis += k;
	return k;
}

/*
 * Entry ci is not software's yet: no later entry may be (plain CQEs, in
 * order per queue). A later entry is read first (acquire), then ci again:
 * a NIC that publishes in order made ci visible before the later one.
 */
static inline void tc_order_check(struct tc *t, uint32_t qi)
{
	struct tc_queue *q = &t->q[qi];
	for (uint32_t d = 1; d <= 2 * RXS_BURST && d < q->r.cqe_cnt; d++) {
		uint32_t e = q->ci + d;
		const struct mlx5_cqe64 *c = rxs_cq_peek(&q->r, e);
		if (!c || be16toh(c->wqe_counter) != (uint16_t)e)
			continue;
		if (!rxs_cq_peek(&q->r, q->ci))
			q->bad_order++;
		return;
	}
}

/* Handle one CQE (or one compressed session) of queue qi; returns the
 * completions consumed. */
static inline int tc_poll_one(struct tc *t, uint32_t qi)
{
	struct tc_queue *q = &t->q[qi];
	struct mlx5_cqe64 *cqe = rxs_cq_peek(&q->r, q->ci);
	uint32_t k = 1;
	if (!cqe && t->check_order)
		tc_order_check(t, qi);
	if (!cqe)
		return 0;
	uint32_t s = be16toh(cqe->wqe_counter) & (t->p.ring - 1);
	/* one CQ entry per WQE, WQEs consumed in order: the n-th entry
	 * completes the n-th WQE posted */
	if (be16toh(cqe->wqe_counter) != (uint16_t)q->ci)
		q->bad_wqe++;
	if (rxs_cqe_opcode(cqe) == MLX5_CQE_RESP_SEND) {
		/* the PMD's packet-type index: l4_hdr_type_etc >> 2 and the
		 * tunnel bits of byte 0 */
		if (cqe->l4_hdr_type_etc != ((RXS_CQE_L4_UDP << 4) | (MLX5_CQE_L3_HDR_TYPE_IPV4 << 2)) ||
		    (((const uint8_t *)cqe)[0] & 3) != 0)
			q->bad_ptype++;
		if (rxs_cqe_compressed(cqe)) {
			k = tc_session(t, qi, cqe);
		} else {
			/* the NIC stamps each CQE with its packet's arrival */
			uint64_t ts = be64toh(cqe->timestamp), seq = rxs_hdr_seq(tc_hdr_slot(t, qi, s));
			/* early by more than 50 ns: two cores' clocks agree
			 * that closely, and rdtsc may run ahead of the load
			 * that saw the entry; a train published at once is
			 * early by up to its length in wire times */
			if (rxp_now() + (uint64_t)(50e-9 * rxp_clock_get()->hz) < ts)
				q->seen_early++;
			if (t->ts_log && qi == 0 && seq < t->ts_cap)
				t->ts_log[seq] = ts;
			tc_good(t, qi, s, be32toh(cqe->byte_cnt));
		}
		tc_hash(t, qi, rxs_cqe_hash(cqe));
	} else {
		q->errors++;
		q->last_synd = rxs_cqe_syndrome(cqe);
	}
	q->ci += k;
	rxs_cq_set_ci(&q->r, q->ci);
	for (uint32_t i = 0; i < k; i++)
		tc_post(t, qi, q->posted++);
	rxs_rq_doorbell(&q->r, q->posted);
	return (int)k;
}

/* Poll every queue until the NIC is done and the CQs are drained. */
static inline void tc_run(struct tc *t)
{
	for (;;) {
		bool done = rxs_nic_done(t->nic);
		int got = 0;
		for (uint32_t qi = 0; qi < t->nq; qi++)
			got += tc_poll_one(t, qi);
		if (!got && done)
			break;
	}
}

#endif
