/* SPDX-License-Identifier: MIT */
/*
 * The fixed-slot datapath shared by the sim and mlx5 backends.
 *
 * RX worker, per loop: poll up to `burst` CQEs (owner bit + opcode, error
 * CQEs counted and their slot released at once), hand the burst to the app
 * (SPSC ring) or run the app inline, and once `batch` slots have been
 * released rewrite their WQEs and ring the doorbell record once.
 * App (own thread): take what queued, up to `batch` packets, per lap;
 * read each header's sequence number, do the per-packet work (length
 * check), release each slot with one atomic add (daqiri's discipline).
 *
 * The loop variant (CQ consumer x mode x inline/thread x WQE terminator)
 * is picked once in verbs_queue_setup from a table, as rdma-core's mlx5
 * provider picks its poll functions; the per-packet code never looks at
 * the configuration. The consumer (--consumer) decides the barrier per
 * CQE: devx (daqiri's, the default) orders its owner-byte load and no
 * more; rdma-core adds udma_from_device_barrier as mlx5_get_next_cqe does.
 *
 * Memory ordering, per ring (correct on arm64's weaker ordering, not only
 * on x86): WQE stores, then udma_to_device_barrier + release store of the
 * RQ doorbell record; owner byte loaded with acquire before any other CQE
 * field; CQ consumer index stored with release after the CQEs were read;
 * slots released by the app with release adds, acquired by the refill.
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rxray/inject.h"
#include "rxray/util.h"
#include "verbs_int.h"
#ifdef RXRAY_HAVE_GPU
#include "rxray/gpu.h"
#endif

#define ALWAYS_INLINE static inline __attribute__((always_inline))
#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)

/*
 * --inject STAGE=CYCLES is per packet: rxp_lap itself spins inject x n
 * ticks on a lap of n packets (rx_worker_start copies c->inject in), so
 * this wrapper only laps; it stays so the call sites read the same.
 */
ALWAYS_INLINE void dp_lap(struct rxp_probe *p, enum rxp_stage s, uint32_t n)
{
	rxp_lap(p, s, n);
}

/* --------------------------------------------------------------- rings */

/*
 * rdma-core's udma barriers (util/udma_barrier.h): descriptors must be
 * visible to the device before the doorbell record, and a CQE's fields
 * may be read only after its owner byte. x86 orders stores already; arm64
 * needs the outer-shareable forms, as rdma-core and DPDK emit.
 */
ALWAYS_INLINE void dp_udma_to_device_barrier(void)
{
#if defined(__aarch64__)
	__asm__ __volatile__("dmb oshst" ::: "memory");
#else
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
#endif
}

/*
 * The read barrier rdma-core's consumer issues per CQE (mlx5_get_next_cqe
 * calls udma_from_device_barrier once the owner bit says software owns
 * it): lfence on x86-64, dmb oshld on arm64. A DevX consumer such as
 * daqiri's issues none beyond the ordering of its owner-byte load (the
 * C11 acquire in dp_cqe_next: a plain load on x86, ldar on arm64).
 * --consumer picks which, once, through the loop table below.
 */
ALWAYS_INLINE void dp_udma_from_device_barrier(void)
{
#if defined(__aarch64__)
	__asm__ __volatile__("dmb oshld" ::: "memory");
#elif defined(__x86_64__) || defined(__i386__)
	__asm__ __volatile__("lfence" ::: "memory");
#else
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
#endif
}

ALWAYS_INLINE struct mlx5_cqe64 *dp_cqe(const struct verbs_queue *q, uint32_t ci)
{
	return (struct mlx5_cqe64 *)((uint8_t *)q->cq.buf + ((size_t)(ci & q->cq_mask) << q->cqe_shift) +
				     q->cqe64_off);
}

/* Ownership as rdma-core's get_sw_cqe reads it: valid opcode, owner bit
 * equal to the consumer index's wrap parity; the owner byte is loaded
 * with acquire, so the CQE's other fields are read after it. rdma: the
 * rdma-core consumer's extra barrier per CQE. */
ALWAYS_INLINE struct mlx5_cqe64 *dp_cqe_next(const struct verbs_queue *q, bool rdma)
{
	struct mlx5_cqe64 *cqe = dp_cqe(q, q->ci);
	uint8_t op_own = __atomic_load_n(&cqe->op_own, __ATOMIC_ACQUIRE);
	if ((op_own >> 4) == MLX5_CQE_INVALID)
		return NULL;
	if ((op_own & MLX5_CQE_OWNER_MASK) ^ !!(q->ci & q->cq.cqe_cnt))
		return NULL;
	if (rdma)
		dp_udma_from_device_barrier();
	return cqe;
}

ALWAYS_INLINE void dp_cq_update_ci(struct verbs_queue *q)
{
	/* the CQEs were read before the device may reuse them: the PMD's
	 * rte_io_wmb before *cq_db, rdma-core's barrier before
	 * update_cons_index (free on x86, dmb oshst on arm64) */
	dp_udma_to_device_barrier();
	__atomic_store_n(q->cq.dbrec, htobe32(q->ci & 0xffffff), __ATOMIC_RELEASE);
}

/*
 * Poll up to q->burst completions into b: good ones as packets (b->n),
 * every one as a slot to release after them (b->nfree). Error CQEs are
 * counted and reach no app. Returns the completions polled. cqe_poll is
 * announced at the first completion (an empty poll is idle).
 */
ALWAYS_INLINE uint32_t dp_poll(struct verbs_queue *q, struct rxp_probe *p, struct verbs_burst *b,
			       bool rdma)
{
	uint32_t n = 0, polled = 0;
	while (polled < q->burst) {
		struct mlx5_cqe64 *cqe = dp_cqe_next(q, rdma);
		if (!cqe)
			break;
		if (!polled)
			rxp_stage_begin(p, RXP_ST_CQE_POLL);
		uint8_t opcode = cqe->op_own >> 4;
		uint16_t wc = be16toh(cqe->wqe_counter);
		if (LIKELY(opcode == MLX5_CQE_RESP_SEND || opcode == MLX5_CQE_RESP_SEND_IMM ||
			   opcode == MLX5_CQE_RESP_SEND_INV)) {
			b->pkt[n].slot = (uint16_t)(wc & q->mask);
			b->pkt[n].len = (uint16_t)be32toh(cqe->byte_cnt);
			n++;
		} else {
			const struct mlx5_err_cqe *e = (const struct mlx5_err_cqe *)cqe;
			q->rx.last_syndrome = e->syndrome;
			q->rx.last_opcode = opcode;
			q->rx.err_cqes++;
		}
		q->ci++;
		polled++;
	}
	if (polled)
		dp_cq_update_ci(q);
	b->n = n;
	b->nfree = polled;
	q->rx.cqes += n;
	return polled;
}

/* WQE rewrite for one slot: its data segments always point at slot i. */
ALWAYS_INLINE void dp_sge_write(struct verbs_queue *q, uint32_t slot, bool hds, bool term)
{
	struct mlx5_wqe_data_seg *d =
		(struct mlx5_wqe_data_seg *)((uint8_t *)q->rq.buf + ((size_t)slot << q->rq_shift));
	unsigned k = 0;
	if (hds)
		mlx5dv_set_data_seg(&d[k++], q->sge0_len, q->hdr_lkey,
				    (uintptr_t)(q->hdr_base + (size_t)slot * q->hdr_stride));
	mlx5dv_set_data_seg(&d[k++], q->sge1_len, q->pay_lkey,
			    (uintptr_t)(q->pay_base + (size_t)slot * q->pay_stride));
	if (term) /* fewer SGEs than the WQE holds: end the list as rdma-core does */
		mlx5dv_set_data_seg(&d[k], 0, MLX5_INVALID_LKEY, 0);
}

/*
 * Repost released slots (at most ring - outstanding), then one doorbell:
 * once `batch` are released, or on an idle poll while the NIC starves
 * (force, dp_starving). The forced flush matters: slots of dropped bursts
 * are only counted with the next burst handed off, which needs
 * completions, which need posted WQEs.
 */
ALWAYS_INLINE void dp_refill(struct verbs_queue *q, struct rxp_probe *p, bool hds, bool term,
			     bool force)
{
	uint32_t rel = atomic_load_explicit(&q->released, memory_order_acquire);
	uint32_t can = rel + q->ring - q->head;
	if (LIKELY(can < q->batch) && !(force && can))
		return;
	rxp_stage_begin(p, RXP_ST_SGE_SETUP);
	for (uint32_t k = 0; k < can; k++) {
		dp_sge_write(q, (q->head + k) & q->mask, hds, term);
		rxp_op_delay(q->od_repost);
	}
	dp_lap(p, RXP_ST_SGE_SETUP, can);
	rxp_stage_begin(p, RXP_ST_DOORBELL);
	q->head += can;
	/* descriptors before the doorbell record */
	dp_udma_to_device_barrier();
	__atomic_store_n(q->rq.dbrec, htobe32(q->head & 0xffff), __ATOMIC_RELEASE);
	rxp_op_delay(q->od_dbrec);
	q->rx.doorbells++;
	q->rx.posted += can;
	dp_lap(p, RXP_ST_DOORBELL, can);
}

/* ----------------------------------------------------------------- app */

ALWAYS_INLINE const uint8_t *dp_hdr(const struct verbs_queue *q, uint32_t slot, bool hds)
{
	return hds ? q->hdr_base + (size_t)slot * q->hdr_stride
		   : q->pay_base + (size_t)slot * q->pay_stride;
}

/* The sequence number in a slot's header. */
ALWAYS_INLINE uint64_t dp_hdr_seq(const struct verbs_queue *q, uint32_t slot, bool hds)
{
	uint64_t raw;
	memcpy(&raw, dp_hdr(q, slot, hds) + q->seq_off, sizeof(raw));
	return be64toh(raw);
}

/* One packet's sequence check against the next number expected. */
ALWAYS_INLINE void dp_seq_note(uint64_t seq, uint64_t *next, uint64_t *missing, uint64_t *dup)
{
	if (LIKELY(seq == *next)) {
		(*next)++;
	} else if (seq > *next) {
		*missing += seq - *next;
		*next = seq + 1;
	} else {
		(*dup)++;
	}
}

/* The end of hdr_read (its sequence tallies) and the app stage, the
 * per-packet work of a minimal consumer (pkt_len): the host and the GPU
 * paths share both, so each charges its own stages alike. */
ALWAYS_INLINE void dp_read_end_and_app(struct verbs_queue *q, struct rxp_probe *p,
					const struct verbs_burst *b, uint64_t next,
					uint64_t missing, uint64_t dup)
{
	struct verbs_app_stats *a = &q->app;
	uint32_t n = b->n;
	a->next_seq = next;
	a->seq_missing += missing;
	a->seq_dup += dup;
	dp_lap(p, RXP_ST_HDR_READ, n);
	rxp_stage_begin(p, RXP_ST_APP);
	uint64_t bytes = 0, bad = 0;
	for (uint32_t i = 0; i < n; i++) {
		bytes += b->pkt[i].len;
		bad += b->pkt[i].len != q->frame;
	}
	a->bytes += bytes;
	a->len_errors += bad;
	a->received += n;
	dp_lap(p, RXP_ST_APP, n);
}

/* The app's work on one burst: hdr_read, app, free, each lapped. */
ALWAYS_INLINE void dp_app_burst(struct verbs_queue *q, struct rxp_probe *p,
				const struct verbs_burst *b, bool hds)
{
	uint32_t n = b->n;

	/* hdr_read: first touch of each header, sequence check per queue */
	uint64_t next = q->app.next_seq;
	uint64_t dup = 0, missing = 0;
	for (uint32_t i = 0; i < n; i++) {
		dp_seq_note(dp_hdr_seq(q, b->pkt[i].slot, hds), &next, &missing, &dup);
		rxp_op_delay(q->od_hdr_read);
	}
	dp_read_end_and_app(q, p, b, next, missing, dup);
	rxp_stage_begin(p, RXP_ST_FREE);

	/* free: one atomic add per packet, as daqiri releases slots; then
	 * error/dropped slots that had to wait for these */
	for (uint32_t i = 0; i < n; i++)
		atomic_fetch_add_explicit(&q->released, 1, memory_order_release);
	if (UNLIKELY(b->nfree > n))
		atomic_fetch_add_explicit(&q->released, b->nfree - n, memory_order_release);
	dp_lap(p, RXP_ST_FREE, n);
}

#ifdef RXRAY_HAVE_GPU
/* Release the oldest batch's slots once its kernel completed (or wait). */
static int dp_gpu_retire(struct verbs_queue *q, bool block)
{
	int n = rxg_retire(q->gpu, block);
	if (n > 0) {
		uint32_t nfree = q->gfree[q->gtail++ % 64];
		atomic_fetch_add_explicit(&q->released, nfree, memory_order_release);
	}
	return n;
}

void verbs_app_gpu(struct verbs_queue *q, struct rxp_probe *p, const struct verbs_burst *b)
{
	struct verbs_app_stats *a = &q->app;
	uint32_t n = b->n;
	/* hdr_read: headers are on the host (hds); the payload addresses and
	 * sequence numbers go to the GPU */
	uint64_t next = a->next_seq, dup = 0, missing = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t slot = b->pkt[i].slot;
		q->gseq[i] = dp_hdr_seq(q, slot, true);
		q->gaddr[i] = q->pay_base + (size_t)slot * q->pay_stride;
		dp_seq_note(q->gseq[i], &next, &missing, &dup);
	}
	dp_read_end_and_app(q, p, b, next, missing, dup);
	/* depth 64 (verbs_engine.c): rxg_submit is busy exactly when 64 wait */
	rxp_stage_begin(p, !n ? RXP_ST_FREE
			      : rxg_inflight(q->gpu) >= 64 ? RXP_ST_GPU_WAIT : RXP_ST_GPU_LAUNCH);
	if (n) {
		/* every batch slot in flight: wait for the oldest kernel */
		if (rxg_inflight(q->gpu) >= 64 || rxg_submit(q->gpu, q->gaddr, q->gseq, n) == -EBUSY) {
			dp_gpu_retire(q, true);
			dp_lap(p, RXP_ST_GPU_WAIT, 0);
			rxp_stage_begin(p, RXP_ST_GPU_LAUNCH);
			rxg_submit(q->gpu, q->gaddr, q->gseq, n);
		}
		q->gfree[q->ghead++ % 64] = b->nfree > n ? b->nfree : n;
		dp_lap(p, RXP_ST_GPU_LAUNCH, n);
		rxp_stage_begin(p, RXP_ST_FREE);
	} else if (b->nfree) {
		/* only error/dropped slots: they wait behind the batches in flight */
		while (rxg_inflight(q->gpu))
			dp_gpu_retire(q, true);
		atomic_fetch_add_explicit(&q->released, b->nfree, memory_order_release);
	}
	/* free: the slots of every batch whose kernel completed */
	while (dp_gpu_retire(q, false) > 0)
		;
	dp_lap(p, RXP_ST_FREE, n);
}

void verbs_app_gpu_drain(struct verbs_queue *q)
{
	while (q->gpu && rxg_inflight(q->gpu))
		if (dp_gpu_retire(q, true) < 0)
			break;
}
#endif

static void dp_app_single(struct verbs_queue *q, struct rxp_probe *p, const struct verbs_burst *b)
{
	dp_app_burst(q, p, b, false);
}

static void dp_app_hds(struct verbs_queue *q, struct rxp_probe *p, const struct verbs_burst *b)
{
	dp_app_burst(q, p, b, true);
}

/* ------------------------------------------------------------ hand-off */

/* Copy a burst into the SPSC ring, adding `carry` slots to release after
 * it; false when full (the burst is dropped). */
ALWAYS_INLINE bool dp_hring_push(struct verbs_hring *h, const struct verbs_burst *b,
				 uint32_t carry)
{
	uint32_t head = atomic_load_explicit(&h->head, memory_order_relaxed);
	if (UNLIKELY(head - h->tail_cache >= h->size)) {
		h->tail_cache = atomic_load_explicit(&h->tail, memory_order_acquire);
		if (head - h->tail_cache >= h->size)
			return false;
	}
	struct verbs_burst *e =
		(struct verbs_burst *)(h->entries + (size_t)(head & h->mask) * h->entry_bytes);
	e->n = b->n;
	e->nfree = b->nfree + carry;
	memcpy(e->pkt, b->pkt, b->n * sizeof(b->pkt[0]));
	atomic_store_explicit(&h->head, head + 1, memory_order_release);
	return true;
}

ALWAYS_INLINE const struct verbs_burst *dp_hring_peek(struct verbs_hring *h)
{
	uint32_t tail = atomic_load_explicit(&h->tail, memory_order_relaxed);
	if (tail == h->head_cache) {
		h->head_cache = atomic_load_explicit(&h->head, memory_order_acquire);
		if (tail == h->head_cache)
			return NULL;
	}
	return (const struct verbs_burst *)(h->entries + (size_t)(tail & h->mask) * h->entry_bytes);
}

ALWAYS_INLINE void dp_hring_pop(struct verbs_hring *h)
{
	uint32_t tail = atomic_load_explicit(&h->tail, memory_order_relaxed);
	atomic_store_explicit(&h->tail, tail + 1, memory_order_release);
}

/* ------------------------------------------------------------ rx loops */

/* WQEs posted whose completion the software has not taken yet: what the
 * NIC can still fill (one CQE per WQE, error CQEs included). */
ALWAYS_INLINE uint32_t dp_outstanding(const struct verbs_queue *q)
{
	return q->head - q->ci;
}

/*
 * An idle poll reposts only when the NIC is down to half the ring or less.
 * daqiri's rx thread looks at what its app released once per 64 CQEs; one
 * that read `released` on every empty poll would keep that line shared
 * while the app's per-packet add wants it exclusive, and charge the app's
 * free stage a coherence miss per packet the real engine does not pay
 * (bench/costmodel/README.md, "Measurements behind constants"). Below
 * half the ring every
 * idle poll reposts what is released, so a ring the app holds most of
 * (dropped bursts' slots wait for the next push) cannot stall.
 */
ALWAYS_INLINE bool dp_starving(const struct verbs_queue *q)
{
	return dp_outstanding(q) <= q->ring / 2;
}

/*
 * Calibration (--coalesce B): true once the B-th completion from the
 * consumer index is the software's; CQEs land in order, so all B are.
 */
ALWAYS_INLINE bool dp_coalesce_ready(const struct verbs_queue *q)
{
	uint32_t ci = q->ci + q->coalesce - 1;
	const struct mlx5_cqe64 *cqe = dp_cqe(q, ci);
	uint8_t op_own = __atomic_load_n(&cqe->op_own, __ATOMIC_ACQUIRE);
	return (op_own >> 4) != MLX5_CQE_INVALID &&
	       !((op_own & MLX5_CQE_OWNER_MASK) ^ !!(ci & q->cq.cqe_cnt));
}

/*
 * One RX worker loop, specialised by the constant arguments. Runs until
 * the wire is quiet (wire_done) and the CQ is drained.
 */
ALWAYS_INLINE void dp_rx_loop(struct verbs_queue *q, struct rxp_probe *p, bool hds, bool term,
			      bool inl, bool rdma)
{
	struct verbs_burst *b = q->scratch;
	bool draining = false;

	rxp_lap_start(p);
	for (;;) {
		rxp_burst_begin(p);
		if (UNLIKELY(q->coalesce) && !dp_coalesce_ready(q)) {
			/* calibration: wait, lapped idle, for a full burst so
			 * light-load laps hold B packets; once the wire is
			 * quiet, drain as usual */
			rxp_lap(p, RXP_ST_IDLE, 0);
			/* force a repost when too few WQEs are out for B
			 * completions to ever arrive (a small ring, a big batch);
			 * else leave `released` alone (dp_starving) */
			if (dp_outstanding(q) < 2 * q->coalesce)
				dp_refill(q, p, hds, term, true);
			rxp_burst_end(p, 0);
			if (atomic_load_explicit(q->wire_done, memory_order_acquire))
				q->coalesce = 0;
			continue;
		}
		uint32_t polled = dp_poll(q, p, b, rdma);
		if (polled == 0) {
			rxp_lap(p, RXP_ST_IDLE, 0);
			if (dp_starving(q))
				dp_refill(q, p, hds, term, true);
			rxp_burst_end(p, 0);
			if (UNLIKELY(draining))
				break;
			/* read the flag, then poll once more: nothing lands after it */
			if (UNLIKELY(atomic_load_explicit(q->wire_done, memory_order_acquire)))
				draining = true;
			continue;
		}
		uint32_t n = b->n;
		dp_lap(p, RXP_ST_CQE_POLL, n);
		rxp_stage_begin(p, inl ? RXP_ST_HDR_READ : RXP_ST_HANDOFF);
		if (inl) {
			dp_app_burst(q, p, b, hds);
		} else if (LIKELY(dp_hring_push(&q->hr, b, q->carry))) {
			q->carry = 0;
			dp_lap(p, RXP_ST_HANDOFF, n);
		} else {
			/* ring full: the burst is dropped; its slots are released
			 * after the bursts ahead of it, with the next one pushed */
			q->rx.app_dropped += n;
			q->carry += b->nfree;
			dp_lap(p, RXP_ST_HANDOFF, n);
		}
		dp_refill(q, p, hds, term, false);
		rxp_burst_end(p, n);
	}
	atomic_store_explicit(&q->rx_done, 1, memory_order_release);
}

#define DP_RX_VARIANT(name, hds, term, inl, rdma)                                                  \
	static void name(struct verbs_queue *q, struct rxp_probe *p)                               \
	{                                                                                          \
		dp_rx_loop(q, p, hds, term, inl, rdma);                                            \
	}
DP_RX_VARIANT(dp_rx_single_thr, false, false, false, false)
DP_RX_VARIANT(dp_rx_single_thr_term, false, true, false, false)
DP_RX_VARIANT(dp_rx_single_inl, false, false, true, false)
DP_RX_VARIANT(dp_rx_single_inl_term, false, true, true, false)
DP_RX_VARIANT(dp_rx_hds_thr, true, false, false, false)
DP_RX_VARIANT(dp_rx_hds_thr_term, true, true, false, false)
DP_RX_VARIANT(dp_rx_hds_inl, true, false, true, false)
DP_RX_VARIANT(dp_rx_hds_inl_term, true, true, true, false)
DP_RX_VARIANT(dp_rx_single_thr_rc, false, false, false, true)
DP_RX_VARIANT(dp_rx_single_thr_term_rc, false, true, false, true)
DP_RX_VARIANT(dp_rx_single_inl_rc, false, false, true, true)
DP_RX_VARIANT(dp_rx_single_inl_term_rc, false, true, true, true)
DP_RX_VARIANT(dp_rx_hds_thr_rc, true, false, false, true)
DP_RX_VARIANT(dp_rx_hds_thr_term_rc, true, true, false, true)
DP_RX_VARIANT(dp_rx_hds_inl_rc, true, false, true, true)
DP_RX_VARIANT(dp_rx_hds_inl_term_rc, true, true, true, true)

/* [consumer][hds][inline][terminator] */
static const verbs_rx_fn dp_rx_table[2][2][2][2] = {
	/* devx */ {
		/* single */ {{dp_rx_single_thr, dp_rx_single_thr_term},
				{dp_rx_single_inl, dp_rx_single_inl_term}},
		/* hds */ {{dp_rx_hds_thr, dp_rx_hds_thr_term}, {dp_rx_hds_inl, dp_rx_hds_inl_term}},
	},
	/* rdma-core */ {
		/* single */ {{dp_rx_single_thr_rc, dp_rx_single_thr_term_rc},
				{dp_rx_single_inl_rc, dp_rx_single_inl_term_rc}},
		/* hds */ {{dp_rx_hds_thr_rc, dp_rx_hds_thr_term_rc},
			   {dp_rx_hds_inl_rc, dp_rx_hds_inl_term_rc}},
	},
};

/* The loop variant for a queue (exposed for the tests). */
verbs_rx_fn verbs_rx_fn_pick(enum rx_consumer consumer, bool hds, bool inl, bool term)
{
	return dp_rx_table[consumer == RX_CONSUMER_RDMA_CORE][hds][inl][term];
}

/* Same for the initial post (not timed): whole ring, one doorbell. */
static void dp_post_all(struct verbs_queue *q, bool hds, bool term)
{
	for (uint32_t i = 0; i < q->ring; i++)
		dp_sge_write(q, i, hds, term);
	q->head = q->ring;
	dp_udma_to_device_barrier();
	__atomic_store_n(q->rq.dbrec, htobe32(q->head & 0xffff), __ATOMIC_RELEASE);
}

/* ----------------------------------------------------------- threads */

int verbs_rx_worker(struct rx_worker *w, void *arg)
{
	struct verbs_queue *q = arg;
	q->rx_fn(q, w->probe);
	return 0;
}

/*
 * The app's batch: the oldest hand-off entry and, while they fit in
 * `batch` packets, the entries queued behind it, copied out (their ring
 * slots free at once). The RX worker hands off every burst it polls, and
 * below its own saturation those hold a few packets; an app that took
 * one entry per lap would lap that few however far behind it fell, so
 * its fixed cost per lap would grow with the load. Taking what has
 * queued up to a batch, as a DPDK app dequeues a burst from its ring,
 * makes a saturated app lap full batches, the B the cost model assumes.
 */
static const struct verbs_burst *dp_app_gather(struct verbs_queue *q, const struct verbs_burst *b)
{
	struct verbs_burst *g = q->gather;
	uint32_t n = 0, nfree = 0;
	do {
		memcpy(g->pkt + n, b->pkt, b->n * sizeof(b->pkt[0]));
		n += b->n;
		nfree += b->nfree; /* >= n per entry, so the sum releases each */
		dp_hring_pop(&q->hr);
		b = dp_hring_peek(&q->hr);
	} while (b && n + b->n <= q->batch);
	g->n = n;
	g->nfree = nfree;
	return g;
}

int verbs_app_worker(struct rx_worker *w, void *arg)
{
	struct verbs_queue *q = arg;
	struct rxp_probe *p = w->probe;
	verbs_app_fn app = q->app_fn;
	/* a GPU consumer launches a kernel per entry (up to a burst) */
	bool gather = !q->gpu;
	rxp_lap_start(p);
	for (;;) {
		const struct verbs_burst *b = dp_hring_peek(&q->hr);
		if (!b) {
			rxp_lap(p, RXP_ST_IDLE, 0);
			if (atomic_load_explicit(&q->rx_done, memory_order_acquire) &&
			    !dp_hring_peek(&q->hr))
				break;
			continue;
		}
		rxp_burst_begin(p);
		rxp_stage_begin(p, RXP_ST_HANDOFF);
		if (gather)
			b = dp_app_gather(q, b);
		uint32_t n = b->n;
		dp_lap(p, RXP_ST_HANDOFF, n);
		rxp_stage_begin(p, RXP_ST_HDR_READ);
		app(q, p, b);
		if (!gather)
			dp_hring_pop(&q->hr);
		rxp_burst_end(p, n);
	}
	return 0;
}

/* -------------------------------------------------------------- setup */

static int dp_log2(uint32_t v)
{
	return v && !(v & (v - 1)) ? __builtin_ctz(v) : -1;
}

static uint32_t dp_pow2_up(uint32_t v)
{
	uint32_t p = 1;
	while (p < v)
		p <<= 1;
	return p;
}

int verbs_queue_setup(struct verbs_run *run, struct verbs_queue *q, char *err, size_t errlen)
{
	const struct rx_config *c = run->c;
	bool hds = c->mode == RX_MODE_HDS;
	unsigned nsge = hds ? 2 : 1;

	int rs = dp_log2(q->rq.stride), cs = dp_log2(q->cq.cqe_size);
	if (rs < 4 || q->rq.stride / sizeof(struct mlx5_wqe_data_seg) < nsge) {
		snprintf(err, errlen, "queue %u: receive WQE stride %u holds fewer than %u data segments",
			 q->index, q->rq.stride, nsge);
		return -EINVAL;
	}
	if (cs < 0 || (q->cq.cqe_size != 64 && q->cq.cqe_size != 128)) {
		snprintf(err, errlen, "queue %u: CQE size %u is not 64 or 128", q->index, q->cq.cqe_size);
		return -EINVAL;
	}
	if (dp_log2(q->rq.wqe_cnt) < 0 || q->rq.wqe_cnt < c->ring || dp_log2(q->cq.cqe_cnt) < 0 ||
	    q->cq.cqe_cnt < c->ring) {
		snprintf(err, errlen, "queue %u: device rings (rq %u, cq %u) do not fit ring %u",
			 q->index, q->rq.wqe_cnt, q->cq.cqe_cnt, c->ring);
		return -EINVAL;
	}
	q->ring = c->ring;
	q->mask = c->ring - 1;
	q->rq_shift = (uint32_t)rs;
	q->cqe_shift = (uint32_t)cs;
	q->cqe64_off = q->cq.cqe_size == 128 ? 64 : 0;
	q->cq_mask = q->cq.cqe_cnt - 1;
	q->frame = c->frame;
	q->batch = c->batch;
	q->burst = c->burst;
	q->coalesce = c->coalesce;
	q->hdr_stride = run->hdr_stride;
	q->pay_stride = run->pay_stride;
	q->sge0_len = hds ? c->split : 0;
	q->sge1_len = run->pay_stride;
	q->seq_off = run->seq_off;
	q->od_repost = c->op_delay_repost;
	q->od_dbrec = c->op_delay_dbrec;
	q->od_hdr_read = c->op_delay_hdr_read;
	q->ci = 0;
	q->wire_done = &run->wire_done;
	bool term = q->rq.stride / sizeof(struct mlx5_wqe_data_seg) > nsge;

	q->scratch = calloc(1, sizeof(struct verbs_burst) + c->burst * sizeof(struct verbs_pkt));
	if (!q->scratch)
		goto nomem;
	if (!q->inline_app) {
		uint32_t sz = dp_pow2_up(c->hring ? c->hring : c->ring);
		q->hr.size = sz;
		q->hr.mask = sz - 1;
		q->hr.entry_pkts = c->burst;
		q->hr.entry_bytes = (sizeof(struct verbs_burst) + c->burst * sizeof(struct verbs_pkt) + 7) &
				    ~(size_t)7;
		q->hr.entries = calloc(sz, q->hr.entry_bytes);
		uint32_t gmax = c->batch > c->burst ? c->batch : c->burst;
		q->gather = calloc(1, sizeof(struct verbs_burst) + gmax * sizeof(struct verbs_pkt));
		if (!q->hr.entries || !q->gather)
			goto nomem;
	}
	q->rx_fn = verbs_rx_fn_pick(c->consumer, hds, q->inline_app, term);
	q->app_fn = hds ? dp_app_hds : dp_app_single;
	dp_post_all(q, hds, term);
	return 0;
nomem:
	verbs_queue_teardown(q);
	snprintf(err, errlen, "queue %u: out of memory for the hand-off ring", q->index);
	return -ENOMEM;
}

void verbs_queue_teardown(struct verbs_queue *q)
{
	if (!q)
		return;
	free(q->scratch);
	q->scratch = NULL;
	free(q->hr.entries);
	q->hr.entries = NULL;
	free(q->gather);
	q->gather = NULL;
}
