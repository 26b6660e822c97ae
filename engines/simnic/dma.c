/* SPDX-License-Identifier: MIT */
/*
 * A NIC thread: wire + DMA engine for the queues it owns (q % threads ==
 * its index; no other thread touches them). Each burst takes the packets
 * that are due on its flows, fetches one posted WQE per packet (in order per queue), checks its
 * data segments against the memory-region registry like a NIC's MTT check,
 * scatters the header, then the payload, then writes the completions
 * (plain CQEs, or compressed sessions when asked). Stages are lapped per
 * burst, so the probe costs a few clock reads per burst rather than per
 * packet. While a queue's RQ is dry the NIC fetches its doorbell record
 * once per burst, not per due packet (a NIC's descriptor fetch is batched
 * and triggered, it does not poll host memory per dropped packet).
 */
#include <errno.h>
#include <string.h>

#include "nic_priv.h"
#ifdef RXRAY_HAVE_GPU
#include "rxray/gpu.h"
#endif
#include "rxray/inject.h"
#include "rxray/util.h"

/* One packet in flight inside a burst. */
struct nic_pkt {
	struct nic_queue *q;
	uint64_t seq;
	uint32_t flow;
	uint32_t cqe_idx;      /* CQ producer index reserved for it */
	uint16_t wqe_counter;
	uint8_t syndrome;      /* 0 = good */
	uint8_t nseg;
	uint32_t hdr_len;      /* header region [0, hdr_len) */
	char *seg[RXS_MAX_SGES];
	uint32_t seg_take[RXS_MAX_SGES]; /* bytes of the frame landing in each */
	uint8_t gpu_mask;      /* bit i: seg[i] is GPU memory */
	struct rxg_dma *gd;    /* the thread's DMA engine for those */
	uint64_t *ticket;      /* asynchronous copies: the run's last ticket */
};

static const struct nic_mr *dma_mr_find(const struct rxs_nic *n, uint32_t lkey)
{
	uint32_t idx = (lkey >> 12) - 1;
	if (idx >= n->nmr)
		return NULL;
	const struct nic_mr *mr = &n->mr[idx];
	return (mr->valid && mr->lkey == lkey) ? mr : NULL;
}

/* Fetch + check the WQE for pkt: fills segments or a syndrome. */
static void dma_wqe_fetch(const struct rxs_nic *n, struct nic_pkt *pk, const char *wqe)
{
	uint32_t remaining = n->p.frame;
	pk->nseg = 0;
	pk->gpu_mask = 0;
	for (uint32_t i = 0; i < n->p.sges; i++) {
		const struct mlx5_wqe_data_seg *ds = (const struct mlx5_wqe_data_seg *)wqe + i;
		uint32_t lkey = be32toh(ds->lkey);
		if (lkey == MLX5_INVALID_LKEY)
			break;
		uint32_t bc = be32toh(ds->byte_count);
		uintptr_t addr = (uintptr_t)be64toh(ds->addr);
		const struct nic_mr *mr = dma_mr_find(n, lkey);
		if (!mr || addr < mr->addr || addr - mr->addr > mr->len ||
		    (size_t)bc > mr->len - (addr - mr->addr)) {
			pk->syndrome = MLX5_CQE_SYNDROME_LOCAL_PROT_ERR;
			return;
		}
		uint32_t take = bc < remaining ? bc : remaining;
		if (mr->gpu)
			pk->gpu_mask |= (uint8_t)(1u << pk->nseg);
		pk->seg[pk->nseg] = (char *)addr;
		pk->seg_take[pk->nseg] = take;
		pk->nseg++;
		remaining -= take;
	}
	if (remaining) {
		pk->syndrome = MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR;
		return;
	}
	pk->syndrome = 0;
	if (pk->nseg > 1)
		pk->hdr_len = pk->seg_take[0];
	else
		pk->hdr_len = n->p.frame < RXS_SINGLE_HDR ? n->p.frame : RXS_SINGLE_HDR;
}

/* Copy frame bytes [off, off+len) from src into the packet's segments. */
static void dma_scatter(const struct nic_pkt *pk, uint32_t off, const void *src, uint32_t len,
			int fill)
{
	const char *s = src;
	for (uint32_t i = 0; i < pk->nseg && len; i++) {
		uint32_t take = pk->seg_take[i];
		if (off >= take) {
			off -= take;
			continue;
		}
		uint32_t k = take - off < len ? take - off : len;
		char *dst = pk->seg[i] + off;
#ifdef RXRAY_HAVE_GPU
		if (pk->gpu_mask & (1u << i)) {
			/* GPU memory: into the DMA engine's staging area */
			dst = rxg_dma_stage(pk->gd, dst, k);
			/* staging full: send what is staged (its ticket is older
			 * than this run's) and poll until earlier copies land */
			if (!dst && rxg_dma_pending(pk->gd)) {
				int64_t tk = rxg_dma_submit(pk->gd);
				if (tk > 0 && pk->ticket)
					*pk->ticket = (uint64_t)tk;
			}
			while (!dst) {
				(void)rxg_dma_done(pk->gd);
				dst = rxg_dma_stage(pk->gd, pk->seg[i] + off, k);
			}
		}
#endif
		if (s)
			memcpy(dst, s, k);
		else
			memset(dst, fill, k);
		if (s)
			s += k;
		len -= k;
		off = 0;
	}
}

static inline void dma_flush_line(const void *p)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_clflush(p);
#elif defined(__aarch64__)
	__asm__ __volatile__("dc civac, %0" : : "r"(p) : "memory");
#else
	(void)p;
#endif
}

/* Memory placement: push the header region's lines out of the caches. */
static void dma_flush(const struct nic_pkt *pk)
{
	uintptr_t a = (uintptr_t)pk->seg[0] & ~(uintptr_t)63;
	uintptr_t end = (uintptr_t)pk->seg[0] + pk->hdr_len;
	for (; a < end; a += 64)
		dma_flush_line((const void *)a);
}

static void dma_header(const struct rxs_nic *n, const struct nic_pkt *pk)
{
	uint8_t hdr[NIC_TMPL_SIZE];
	uint32_t hl = n->p.frame < RXS_HDR_LEN ? n->p.frame : RXS_HDR_LEN;
	memcpy(hdr, n->tmpl + (size_t)pk->flow * NIC_TMPL_SIZE, RXS_HDR_LEN);
	uint64_t be = htobe64(pk->seq);
	memcpy(hdr + RXS_SEQ_OFF, &be, sizeof(be));
	dma_scatter(pk, 0, hdr, hl, 0);
	if (pk->hdr_len > hl)
		dma_scatter(pk, hl, NULL, pk->hdr_len - hl, (int)(pk->seq & 0xff));
}

/* The headers of a burst's packets that found a buffer, each owing the
 * header write's --op-delay, pushed out of the caches for --dma memory. */
static void dma_headers(const struct rxs_nic *n, const struct nic_pkt *pk, uint32_t np)
{
	for (uint32_t i = 0; i < np; i++) {
		if (pk[i].syndrome)
			continue;
		dma_header(n, &pk[i]);
		rxp_op_delay(n->p.op_delay_hdr);
		if (n->p.dma == RX_DMA_MEMORY && !(pk[i].gpu_mask & 1u))
			dma_flush(&pk[i]);
	}
}

static void dma_payload(const struct rxs_nic *n, const struct nic_pkt *pk)
{
	uint32_t off = pk->hdr_len > RXS_HDR_LEN ? pk->hdr_len : RXS_HDR_LEN;
	if (off >= n->p.frame)
		return;
	uint32_t len = n->p.frame - off;
	if (n->p.payload == RX_PAYLOAD_STAMP) {
		uint64_t be = htobe64(pk->seq);
		dma_scatter(pk, off, &be, len < 8 ? len : 8, 0);
	} else if (n->p.payload == RX_PAYLOAD_FULL) {
		dma_scatter(pk, off, NULL, len, (int)(pk->seq & 0xff));
	}
}

/* What the parser reports for every packet of the wire (eth/IPv4/UDP),
 * in the byte the PMD's packet-type table is indexed by. */
#define DMA_L4_L3_UDP4 ((uint8_t)((RXS_CQE_L4_UDP << 4) | (MLX5_CQE_L3_HDR_TYPE_IPV4 << 2)))

/* The fields of a good completion other than op_own (a plain CQE, or a
 * session's title, whose byte_cnt the caller then overwrites). */
static void dma_cqe_good(const struct rxs_nic *n, struct mlx5_cqe64 *cqe, const struct nic_pkt *pk,
			 uint32_t qi, uint64_t ts)
{
	uint32_t hash = htobe32(n->flow_hash[pk->flow]);
	/* byte 0 carries the tunnel bits of the packet-type index: cleared,
	 * as the entry may hold a mini array's bytes from an earlier lap */
	((uint8_t *)cqe)[0] = 0;
	memcpy((char *)cqe + RXS_CQE_HASH_OFF, &hash, sizeof(hash));
	((uint8_t *)cqe)[RXS_CQE_HASH_TYPE_OFF] = RXS_CQE_HASH_TYPE_IPV4_UDP;
	cqe->l4_hdr_type_etc = DMA_L4_L3_UDP4;
	cqe->sop_drop_qpn = htobe32(qi);
	cqe->wqe_counter = htobe16(pk->wqe_counter);
	cqe->byte_cnt = htobe32(n->p.frame);
	cqe->timestamp = htobe64(ts);
}

/* A completion's fields and counters; returns the op_own that makes it
 * visible, for the caller to store last (release). cnt: the counters to
 * add to (the queue's, or a writer's own for that queue). */
static uint8_t dma_cqe_fill(const struct rxs_nic *n, const struct nic_pkt *pk, uint32_t qi,
			    uint64_t ts, struct rxs_counters *cnt)
{
	struct mlx5_cqe64 *cqe = &pk->q->cq_buf[pk->cqe_idx & (n->cq_depth - 1)];
	uint8_t owner = (uint8_t)((pk->cqe_idx >> n->cq_shift) & 1);
	uint8_t opcode;
	if (pk->syndrome) {
		struct mlx5_err_cqe *e = (struct mlx5_err_cqe *)(void *)cqe;
		cqe->sop_drop_qpn = htobe32(qi);
		cqe->wqe_counter = htobe16(pk->wqe_counter);
		e->vendor_err_synd = 0;
		e->syndrome = pk->syndrome;
		cqe->byte_cnt = 0;
		opcode = MLX5_CQE_RESP_ERR;
		NIC_CNT_ADD(cnt->errors, 1);
	} else {
		dma_cqe_good(n, cqe, pk, qi, ts);
		opcode = MLX5_CQE_RESP_SEND;
		NIC_CNT_ADD(cnt->bytes, n->p.frame);
	}
	NIC_CNT_ADD(cnt->received, 1);
	return (uint8_t)((opcode << 4) | owner);
}

static void dma_cqe(const struct rxs_nic *n, const struct nic_pkt *pk, uint32_t qi, uint64_t ts)
{
	uint8_t op = dma_cqe_fill(n, pk, qi, ts, &pk->q->cnt);
	/* the completion becomes visible after everything it describes */
	__atomic_store_n(&pk->q->cq_buf[pk->cqe_idx & (n->cq_depth - 1)].op_own, op,
			 __ATOMIC_RELEASE);
}

/*
 * A compressed session (simnic.h): k >= 2 good completions of one queue in
 * CQ entries S..S+k-1, S = run[0]->cqe_idx. Mini arrays and the title's
 * fields; returns the title's op_own, which the caller stores last
 * (release), so a consumer that sees the title sees every mini. A mini
 * array overwrites the byte where op_own sits: that byte is stored
 * atomically (a consumer may be loading it as an op_own while it looks
 * ahead), the rest plainly.
 */
static uint8_t dma_session_fill(const struct rxs_nic *n, struct nic_pkt *const *run, uint32_t k,
				uint32_t qi, uint64_t ts, struct rxs_counters *cnt)
{
	struct nic_queue *q = run[0]->q;
	uint32_t mask = n->cq_depth - 1;
	uint32_t s = run[0]->cqe_idx;
	for (uint32_t a = 0; a * RXS_MINI_PER_CQE < k; a++) {
		struct rxs_mini_cqe8 arr[RXS_MINI_PER_CQE];
		memset(arr, 0, sizeof(arr));
		for (uint32_t j = 0; j < RXS_MINI_PER_CQE && a * RXS_MINI_PER_CQE + j < k; j++) {
			const struct nic_pkt *pk = run[a * RXS_MINI_PER_CQE + j];
			arr[j].rx_hash_result = htobe32(n->flow_hash[pk->flow]);
			arr[j].byte_cnt = htobe32(n->p.frame);
		}
		uint8_t *dst = (uint8_t *)&q->cq_buf[(s + (a ? a * RXS_MINI_PER_CQE : 1)) & mask];
		memcpy(dst, arr, sizeof(arr) - 1);
		__atomic_store_n(&dst[sizeof(arr) - 1], ((const uint8_t *)arr)[sizeof(arr) - 1],
				 __ATOMIC_RELAXED);
	}
	struct mlx5_cqe64 *title = &q->cq_buf[s & mask];
	dma_cqe_good(n, title, run[0], qi, ts);
	title->byte_cnt = htobe32(k);
	NIC_CNT_ADD(cnt->bytes, (uint64_t)k * n->p.frame);
	NIC_CNT_ADD(cnt->received, k);
	uint8_t owner = (uint8_t)((s >> n->cq_shift) & 1);
	return (uint8_t)((MLX5_CQE_RESP_SEND << 4) | (RXS_CQE_FORMAT_COMPRESSED << 2) | owner);
}

static void dma_cqe_session(const struct rxs_nic *n, struct nic_pkt *const *run, uint32_t k,
			    uint32_t qi, uint64_t ts)
{
	uint8_t op = dma_session_fill(n, run, k, qi, ts, &run[0]->q->cnt);
	__atomic_store_n(&run[0]->q->cq_buf[run[0]->cqe_idx & (n->cq_depth - 1)].op_own, op,
			 __ATOMIC_RELEASE);
}

/*
 * Completions of a burst with compression on: per queue, each run of
 * consecutive good completions that stays inside the CQ (no wrap inside a
 * session, as hardware closes a session at the CQ's end) becomes one
 * session; a run of one, and every error, a plain CQE.
 */
static void dma_cqes_compressed(const struct rxs_nic *n, struct nic_pkt *pk, uint32_t np,
				uint64_t ts)
{
	uint8_t next[RXS_BURST], last[RXS_MAX_QUEUES];
	bool done[RXS_BURST];
	struct nic_pkt *run[RXS_BURST];
	memset(last, 0xff, n->p.queues);
	memset(done, 0, np);
	for (uint32_t i = np; i-- > 0;) {
		uint32_t qi = (uint32_t)(pk[i].q - n->q);
		next[i] = last[qi];
		last[qi] = (uint8_t)i;
	}
	for (uint32_t i = 0; i < np; i++) {
		if (done[i])
			continue;
		uint32_t qi = (uint32_t)(pk[i].q - n->q);
		if (pk[i].syndrome) {
			dma_cqe(n, &pk[i], qi, ts);
			continue;
		}
		uint32_t k = 0, room = n->cq_depth - (pk[i].cqe_idx & (n->cq_depth - 1));
		for (uint32_t j = i; j != 0xff && !pk[j].syndrome && k < room; j = next[j]) {
			run[k++] = &pk[j];
			done[j] = true;
		}
		if (k == 1)
			dma_cqe(n, run[0], qi, ts);
		else
			dma_cqe_session(n, run, k, qi, ts);
	}
}

/*
 * Claim a WQE and a CQE for a packet due on q. Returns false (and counts
 * out_of_buffer) when either is missing; cq_full when only the CQ was.
 * Doorbell records are re-read only when the cached view says empty, as a
 * NIC caches its descriptors.
 */
static bool dma_claim(const struct rxs_nic *n, struct nic_queue *q, struct nic_pkt *pk,
		      uint64_t burst)
{
	uint16_t avail = (uint16_t)(q->rq_posted - q->rq_ci);
	if (!avail) {
		/* Back off while the RQ is dry: one fetch of the doorbell
		 * record per burst, as a NIC's descriptor fetch runs once per
		 * batch; re-reading it for every due packet would pull the
		 * line the engine writes to this core all the time (traffic a
		 * real NIC does not make). legacy_dbrec restores that. */
		if (q->dry_burst == burst && !n->legacy_dbrec) {
			NIC_CNT_ADD(q->cnt.out_of_buffer, 1);
			return false;
		}
		q->rq_posted = be32toh(__atomic_load_n(&q->rq_dbrec[MLX5_RCV_DBR],
						       __ATOMIC_ACQUIRE)) & 0xffffu;
		NIC_CNT_ADD(q->cnt.dbrec_reads, 1);
		avail = (uint16_t)(q->rq_posted - q->rq_ci);
		if (!avail) {
			q->dry_burst = burst;
			NIC_CNT_ADD(q->cnt.out_of_buffer, 1);
			return false;
		}
	}
	/* a WQE is there; the CQ must have room too (a CQ overrun on real
	 * hardware is fatal; here the packet is dropped and counted) */
	uint32_t used = (q->cq_pi - q->cq_ci) & 0xffffffu;
	if (used >= n->cq_depth) {
		q->cq_ci = be32toh(__atomic_load_n(&q->cq_dbrec[RXS_CQ_SET_CI], __ATOMIC_ACQUIRE)) &
			   0xffffffu;
		used = (q->cq_pi - q->cq_ci) & 0xffffffu;
		if (used >= n->cq_depth) {
			NIC_CNT_ADD(q->cnt.cq_full, 1);
			NIC_CNT_ADD(q->cnt.out_of_buffer, 1);
			return false;
		}
	}
	pk->wqe_counter = (uint16_t)q->rq_ci;
	pk->cqe_idx = q->cq_pi;
	const char *wqe = (const char *)q->rq_buf + (size_t)(q->rq_ci & (n->p.ring - 1)) * n->stride;
	/* descriptors are fetched ahead of use, as a NIC's WQE cache does */
	__builtin_prefetch((const char *)q->rq_buf +
			   (size_t)((q->rq_ci + 16) & (n->p.ring - 1)) * n->stride);
	q->rq_ci++;
	q->cq_pi++;
	dma_wqe_fetch(n, pk, wqe);
	return true;
}

/* Offer k packets starting at the thread's packet number `first`; returns
 * how many found a buffer (good or error completion). */
static uint32_t dma_burst(struct nic_thread *t, uint64_t first, uint32_t k, uint64_t ts)
{
	struct rxs_nic *n = t->n;
	struct nic_pkt pk[RXS_BURST];
	uint32_t np = 0, ngood = 0;
	struct rxp_probe *p = t->probe;
	uint32_t fi = (uint32_t)(first % t->nflows);
	for (uint32_t i = 0; i < k; i++, fi = fi + 1 == t->nflows ? 0 : fi + 1) {
		uint32_t flow = t->flows[fi];
		struct nic_queue *q = &n->q[n->flow_q[flow]];
		struct nic_pkt *x = &pk[np];
		x->q = q;
		x->flow = flow;
		x->gd = NULL; /* GPU memory always takes the writer path (rxs_nic_start) */
		x->ticket = NULL;
		x->seq = q->seq++;
		NIC_CNT_ADD(q->cnt.offered, 1);
		if (!dma_claim(n, q, x, t->bursts + 1))
			continue;
		np++;
		if (x->syndrome)
			continue;
		ngood++;
		/* a DMA engine keeps many writes in flight: ask for the header
		 * lines now, write them in the next pass */
		__builtin_prefetch(x->seg[0], 1);
	}
	rxp_stage_begin(p, np ? RXP_ST_HDR_WRITE : RXP_ST_IDLE);
	dma_headers(n, pk, np);
	NIC_CNT_ADD(t->offered, k);
	NIC_CNT_ADD(t->received, np);
	NIC_CNT_ADD(t->out_of_buffer, k - np);
	if (!np) {
		/* nothing landed: the NIC only waited for buffers */
		rxp_lap(p, RXP_ST_IDLE, 0);
		rxp_burst_end(p, 0);
		return 0;
	}
	rxp_lap(p, RXP_ST_HDR_WRITE, np);
	if (n->p.payload != RX_PAYLOAD_NONE) {
		rxp_stage_begin(p, RXP_ST_PAYLOAD_WRITE);
		for (uint32_t i = 0; i < np; i++)
			if (!pk[i].syndrome)
				dma_payload(n, &pk[i]);
		rxp_lap(p, RXP_ST_PAYLOAD_WRITE, ngood);
	}
	rxp_stage_begin(p, RXP_ST_CQE_WRITE);
	if (n->p.cqe_comp)
		dma_cqes_compressed(n, pk, np, ts);
	else
		for (uint32_t i = 0; i < np; i++)
			dma_cqe(n, &pk[i], (uint32_t)(pk[i].q - n->q), ts);
	rxp_lap(p, RXP_ST_CQE_WRITE, np);
	rxp_burst_end(p, np);
	return np;
}

/*
 * Unpaced ("max") runs: a packet dropped for want of a buffer still takes
 * its time on the wire. Without this, drops cost a counter update and a
 * NIC facing a slow consumer would "offer" hundreds of Mpps. The NIC
 * waits (idle) the average time it takes to deliver one packet, measured
 * over its recent full bursts, so max = the NIC's own delivery rate.
 */
static void dma_wire_time(struct nic_thread *t, uint64_t t0, uint32_t k, uint32_t np,
			  double *avg)
{
	uint64_t t1 = rxp_now();
	if (np == k) {
		double per = (double)(t1 - t0) / k;
		*avg = *avg > 0 ? *avg + (per - *avg) / 8 : per;
	} else if (*avg > 0) {
		rxp_spin_until(t1, (uint64_t)(*avg * (k - np)));
		rxp_lap(t->probe, RXP_ST_IDLE, 0);
	}
}

static bool dma_should_stop(const struct rxs_nic *n)
{
	if (__atomic_load_n(&n->stop_req, __ATOMIC_RELAXED))
		return true;
	return n->p.stop && *n->p.stop;
}

/* ------------------------------------------------------ the writer path */

#define WR_C_MASK 0xffffffu     /* the producer's WQE/CQ counter: 24 bits */
#define WR_C_HALF 0x800000u

/* d = a - b on the 24-bit counter, as a signed distance. */
static inline int32_t wr_c_diff(uint32_t a, uint32_t b)
{
	uint32_t d = (a - b) & WR_C_MASK;
	return d >= WR_C_HALF ? (int32_t)d - (int32_t)(WR_C_MASK + 1) : (int32_t)d;
}

/* The completion gate's level: every ticket <= it is done. Polls only. */
static uint64_t wr_gate_level(struct nic_thread *t)
{
	const struct rxs_params *p = &t->n->p;
	if (p->gate_fn)
		return p->gate_fn(p->gate_arg, t->idx);
#ifdef RXRAY_HAVE_GPU
	if (t->gdma)
		return rxg_dma_done(t->gdma);
#endif
	if (p->gate_polls)
		return ++t->gate_polls;
	return UINT64_MAX;
}

#ifdef RXRAY_HAVE_GPU
/* Submit what is staged as one ticket (one scatter launch). */
static void wr_dma_submit(struct nic_thread *t)
{
	NIC_CNT_ADD(t->dma_pieces, rxg_dma_pending(t->gdma));
	NIC_CNT_ADD(t->dma_flushes, 1);
	int64_t tk = rxg_dma_submit(t->gdma);
	if (tk < 0 && !t->rc)
		t->rc = (int)tk;
}
#endif

/*
 * GPU payloads: a launch costs the writer microseconds (bench_gpu_link,
 * bench/gpu/README.md) and launches from several threads do not add up,
 * so runs do not each submit
 * their pieces: they stay staged until NIC_DMA_BATCH are, or `force` (the
 * writer has nothing due, found no WQE, or has every run slot waiting).
 * A run's completions wait for the ticket that carries its last pieces.
 * Returns whether it submitted.
 */
static bool wr_dma_kick(struct nic_thread *t, bool force)
{
#ifdef RXRAY_HAVE_GPU
	if (t->gdma && rxg_dma_pending(t->gdma) &&
	    (force || rxg_dma_pending(t->gdma) >= NIC_DMA_BATCH)) {
		wr_dma_submit(t);
		return true;
	}
#endif
	(void)t;
	(void)force;
	return false;
}

/* The same between runs: the launch is the NIC's payload_dma work (its
 * packets were counted where they were staged), not idle time. */
static void wr_dma_kick_lap(struct nic_thread *t)
{
	if (wr_dma_kick(t, true))
		rxp_lap(t->probe, RXP_ST_PAYLOAD_DMA, 0);
}

/* A ticket for the run just written: what must land before it is
 * published. 0 when nothing is outstanding. */
static uint64_t wr_gate_ticket(struct nic_thread *t)
{
	const struct rxs_params *p = &t->n->p;
	if (p->gate_fn)
		return ++t->tickets;
#ifdef RXRAY_HAVE_GPU
	if (t->gdma && rxg_dma_pending(t->gdma)) {
		/* the submit that will carry this run's last pieces: this one
		 * when the batch is full, else a later one (wr_dma_kick) */
		t->run_ticket = rxg_dma_next_ticket(t->gdma);
		wr_dma_kick(t, false);
		return t->run_ticket;
	}
#endif
	/* pieces this run sent early (staging was full) */
	if (t->run_ticket)
		return t->run_ticket;
	if (p->gate_polls)
		return t->gate_polls + p->gate_polls;
	return 0;
}

/*
 * Publish queue q's CQ in order as far as runs are ready: whoever holds
 * the queue's publisher flag stores the op_owns of the ready run that
 * starts at `published`, then the next, so no run waits for its own
 * writer to come back. A writer that marks a run ready calls this; when
 * the flag is taken, the holder re-checks after dropping it (the marks
 * and the flag are sequentially consistent, so one of the two sees the
 * other), and nothing ready is left behind.
 */
static void wr_publish(const struct rxs_nic *n, struct nic_queue *q)
{
	uint32_t mask = n->cq_depth - 1;
	for (;;) {
		if (__atomic_exchange_n(&q->pub_lock, 1, __ATOMIC_SEQ_CST))
			return;
		uint32_t pub = __atomic_load_n(&q->published, __ATOMIC_RELAXED);
		for (;;) {
			uint32_t rd = __atomic_load_n(&q->ready[pub & mask], __ATOMIC_ACQUIRE);
			uint32_t m = rd & 0xffu;
			if (rd >> 8 != pub || !m)
				break;
			/* cleared before the op_owns go out: the next mark at this
			 * index comes after the consumer has seen them, and a mark
			 * of a lap 2^24 entries back never matches again */
			__atomic_store_n(&q->ready[pub & mask], 0, __ATOMIC_RELAXED);
			/* the run's buffers and CQE bodies were written before its
			 * mark; each op_own is stored last (release), in CQ order */
			for (uint32_t i = 0; i < m; i++) {
				uint8_t op = q->op_pend[(pub + i) & mask];
				if (op)
					__atomic_store_n(&q->cq_buf[(pub + i) & mask].op_own, op,
							 __ATOMIC_RELEASE);
			}
			pub = (pub + m) & WR_C_MASK;
			__atomic_store_n(&q->published, pub, __ATOMIC_RELEASE);
		}
		__atomic_store_n(&q->pub_lock, 0, __ATOMIC_SEQ_CST);
		uint32_t rd = __atomic_load_n(&q->ready[pub & mask], __ATOMIC_SEQ_CST);
		if (rd >> 8 != pub || !(rd & 0xffu))
			return;
	}
}

/* Mark a written run whose gate is done ready for publication. */
static void wr_ready(const struct rxs_nic *n, const struct nic_run *r)
{
	__atomic_store_n(&r->q->ready[r->c & (n->cq_depth - 1)], (r->c << 8) | r->m,
			 __ATOMIC_SEQ_CST);
	wr_publish(n, r->q);
}

/*
 * Mark ready the runs at the head of this writer's list whose gate ticket
 * is done (tickets complete in order). Returns the runs marked. Never
 * waits.
 */
static uint32_t wr_retire(struct nic_thread *t)
{
	const struct rxs_nic *n = t->n;
	uint32_t done = 0;
	uint64_t level = 0;
	bool polled = false;
	while (t->run_head != t->run_tail) {
		struct nic_run *r = &t->runs[t->run_head % NIC_RUNS_MAX];
		if (r->ticket) {
			if (!polled) {
				level = wr_gate_level(t);
				polled = true;
			}
			if (level < r->ticket)
				break;
		}
		wr_ready(n, r);
		t->run_head++;
		done++;
	}
	return done;
}

/* Runs this writer has written and not published yet. */
static inline uint32_t wr_pending(const struct nic_thread *t)
{
	return t->run_tail - t->run_head;
}

/* A claimed run: packets seq0.. of queue qi, the first m in WQEs/CQ
 * entries c.., the other k - m dropped. */
struct wr_claim {
	uint64_t off;           /* the queue's packet number of the first */
	uint32_t c, k, m, cq_full;
};

/*
 * Claim the next run of due packets on queue qi with one compare-and-swap
 * on its producer. Returns false when none is due (or the quota is
 * spent). A run takes up to RXS_BURST packets; WQEs are those this
 * writer last saw posted (the doorbell record is re-read only when they
 * do not cover the run), CQ room likewise from the consumer index.
 */
static bool wr_claim(struct nic_thread *t, uint32_t qi, uint64_t now, struct wr_claim *cl)
{
	struct rxs_nic *n = t->n;
	struct nic_queue *q = &n->q[qi];
	struct rxs_counters *cnt = &t->qcnt[qi];
	uint64_t w = __atomic_load_n(&q->prod, __ATOMIC_RELAXED);
	for (;;) {
		uint64_t off = w >> 24;
		uint32_t c = (uint32_t)w & WR_C_MASK;
		uint64_t due = UINT64_MAX;
		if (q->tpp > 0)
			due = now > n->t0 ? (uint64_t)((double)(now - n->t0) / q->tpp) + 1 : 1;
		if (n->p.max_packets && due > q->quota)
			due = q->quota;
		if (due <= off)
			return false;
		uint32_t k = due - off < RXS_BURST ? (uint32_t)(due - off) : RXS_BURST;
		/* WQEs: posted - c on 16 bits, valid while this writer's view
		 * is no older than one ring (else it may have wrapped) */
		uint32_t avail = (uint16_t)(t->rq_posted[qi] - c);
		if (avail < k || avail > n->p.ring || wr_c_diff(c, t->rq_seen[qi]) > (int32_t)n->p.ring) {
			t->rq_posted[qi] = be32toh(__atomic_load_n(&q->rq_dbrec[MLX5_RCV_DBR],
								   __ATOMIC_ACQUIRE)) & 0xffffu;
			t->rq_seen[qi] = c;
			NIC_CNT_ADD(cnt->dbrec_reads, 1);
			avail = (uint16_t)(t->rq_posted[qi] - c);
			if (avail > n->p.ring)
				avail = 0; /* a view older than this claim: none known */
		}
		uint32_t mrq = k < avail ? k : avail;
		/* CQ room: entries up to cq_ci + depth, on 24 bits */
		int32_t used = wr_c_diff(c, t->cq_ci[qi]);
		if (used < 0 || used + (int32_t)mrq > (int32_t)n->cq_depth ||
		    wr_c_diff(c, t->cq_seen[qi]) > (int32_t)n->cq_depth) {
			t->cq_ci[qi] = be32toh(__atomic_load_n(&q->cq_dbrec[RXS_CQ_SET_CI],
							       __ATOMIC_ACQUIRE)) & WR_C_MASK;
			t->cq_seen[qi] = c;
			used = wr_c_diff(c, t->cq_ci[qi]);
		}
		int32_t room = (int32_t)n->cq_depth - used;
		uint32_t m = room <= 0 ? 0 : mrq < (uint32_t)room ? mrq : (uint32_t)room;
		uint64_t nw = ((off + k) << 24) | ((c + m) & WR_C_MASK);
		bool fault = n->p.fault_dup_claim && t->claims + 1 == n->p.fault_dup_claim && m;
		if (fault)
			nw = ((off + k) << 24) | c; /* test fault: the WQEs stay unclaimed */
		if (__atomic_compare_exchange_n(&q->prod, &w, nw, false, __ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED)) {
			cl->off = off;
			cl->c = c;
			cl->k = k;
			cl->m = m;
			cl->cq_full = mrq - m;
			t->claims++;
			return true;
		}
	}
}

/*
 * Write a claimed run: fetch and check each WQE, headers (hdr_write),
 * payloads (payload_write), GPU copies submitted (payload_dma), CQE bodies
 * and mini arrays (cqe_write), then queue it for publication. Returns the
 * packets that found a buffer.
 */
static uint32_t wr_run(struct nic_thread *t, uint32_t qi, const struct wr_claim *cl, uint64_t ts)
{
	struct rxs_nic *n = t->n;
	struct nic_queue *q = &n->q[qi];
	struct rxs_counters *cnt = &t->qcnt[qi];
	struct rxp_probe *p = t->probe;
	struct nic_pkt pk[RXS_BURST];
	uint32_t ngood = 0;
	uint32_t fi = (uint32_t)(cl->off % q->nwflows);
	t->run_ticket = 0;
	for (uint32_t i = 0; i < cl->m; i++, fi = fi + 1 == q->nwflows ? 0 : fi + 1) {
		struct nic_pkt *x = &pk[i];
		x->q = q;
		x->flow = q->wflows[fi];
		x->gd = t->gdma;
		x->ticket = &t->run_ticket;
		x->seq = q->seq + cl->off + i;
		x->wqe_counter = (uint16_t)(cl->c + i);
		x->cqe_idx = (cl->c + i) & WR_C_MASK;
		const char *wqe = (const char *)q->rq_buf +
				  (size_t)((cl->c + i) & (n->p.ring - 1)) * n->stride;
		dma_wqe_fetch(n, x, wqe);
		if (x->syndrome)
			continue;
		ngood++;
		__builtin_prefetch(x->seg[0], 1);
	}
	NIC_CNT_ADD(cnt->offered, cl->k);
	NIC_CNT_ADD(cnt->out_of_buffer, cl->k - cl->m);
	NIC_CNT_ADD(cnt->cq_full, cl->cq_full);
	NIC_CNT_ADD(t->offered, cl->k);
	NIC_CNT_ADD(t->received, cl->m);
	NIC_CNT_ADD(t->out_of_buffer, cl->k - cl->m);
	if (!cl->m) {
		rxp_lap(p, RXP_ST_IDLE, 0);
		return 0;
	}
	rxp_stage_begin(p, RXP_ST_HDR_WRITE);
	dma_headers(n, pk, cl->m);
	rxp_lap(p, RXP_ST_HDR_WRITE, cl->m);
	if (n->p.payload != RX_PAYLOAD_NONE) {
		rxp_stage_begin(p, RXP_ST_PAYLOAD_WRITE);
		for (uint32_t i = 0; i < cl->m; i++)
			if (!pk[i].syndrome)
				dma_payload(n, &pk[i]);
		rxp_lap(p, RXP_ST_PAYLOAD_WRITE, ngood);
	}
	struct nic_run *r = &t->runs[t->run_tail % NIC_RUNS_MAX];
#ifdef RXRAY_HAVE_GPU
	bool gpu = t->gdma && rxg_dma_pending(t->gdma);
	if (gpu)
		rxp_stage_begin(p, RXP_ST_PAYLOAD_DMA);
#endif
	r->ticket = wr_gate_ticket(t);
#ifdef RXRAY_HAVE_GPU
	if (gpu)
		rxp_lap(p, RXP_ST_PAYLOAD_DMA, ngood);
#endif
	rxp_stage_begin(p, RXP_ST_CQE_WRITE);
	r->q = q;
	r->c = cl->c;
	r->m = cl->m;
	uint8_t *op = q->op_pend;
	uint32_t mask = n->cq_depth - 1;
	for (uint32_t i = 0; i < cl->m; i++)
		op[(cl->c + i) & mask] = 0;
	if (n->p.cqe_comp) {
		/* runs of consecutive good completions become sessions (never
		 * across the CQ's end); errors and runs of one stay plain */
		for (uint32_t i = 0; i < cl->m;) {
			uint32_t j = i;
			uint32_t room = n->cq_depth - (pk[i].cqe_idx & (n->cq_depth - 1));
			while (j < cl->m && !pk[j].syndrome && j - i < room)
				j++;
			if (j - i >= 2) {
				struct nic_pkt *run[RXS_BURST];
				for (uint32_t x = i; x < j; x++)
					run[x - i] = &pk[x];
				op[(cl->c + i) & mask] = dma_session_fill(n, run, j - i, qi, ts, cnt);
				i = j;
			} else {
				op[(cl->c + i) & mask] = dma_cqe_fill(n, &pk[i], qi, ts, cnt);
				i++;
			}
		}
	} else {
		for (uint32_t i = 0; i < cl->m; i++)
			op[(cl->c + i) & mask] = dma_cqe_fill(n, &pk[i], qi, ts, cnt);
	}
	t->run_tail++;
	wr_retire(t);
	rxp_lap(p, RXP_ST_CQE_WRITE, cl->m);
	return cl->m;
}

/*
 * Unpaced: packets a run dropped for want of WQEs take their wire time
 * (dma_wire_time's rule), at this writer's delivery time per packet. A
 * full run slower than 8x the average was preempted, not slow: it does
 * not move the average. The wait ends at the phase's end or a stop.
 */
static void wr_wire_time(struct nic_thread *t, uint64_t t0, uint32_t k, uint32_t np,
			 uint64_t tend, double *avg)
{
	uint64_t t1 = rxp_now();
	if (np == k) {
		double per = (double)(t1 - t0) / k;
		if (!(*avg > 0))
			*avg = per;
		else if (per < 8 * *avg)
			*avg += (per - *avg) / 8;
	} else if (*avg > 0) {
		uint64_t until = t1 + (uint64_t)(*avg * (k - np));
		if (until > tend)
			until = tend;
		while (rxp_now() < until && !dma_should_stop(t->n))
			;
		rxp_lap(t->probe, RXP_ST_IDLE, 0);
	}
}

/* True when every queue of the writer's group has offered its quota. */
static bool wr_quota_spent(const struct nic_thread *t)
{
	const struct rxs_nic *n = t->n;
	if (!n->p.max_packets)
		return false;
	for (uint32_t qi = t->group; qi < n->p.queues; qi += n->groups) {
		const struct nic_queue *q = &n->q[qi];
		if ((__atomic_load_n(&q->prod, __ATOMIC_RELAXED) >> 24) < q->quota)
			return false;
	}
	return true;
}

/* A DMA writer's loop (the writer path): claim due runs on the group's
 * queues round robin, write them, publish what is ready; at the end,
 * publish everything it wrote. */
static void wr_loop(struct nic_thread *t)
{
	struct rxs_nic *n = t->n;
	struct rxp_probe *p = t->probe;
	double hz = rxp_clock_get()->hz;
	uint64_t tend = n->p.seconds > 0 ? n->t0 + (uint64_t)(n->p.seconds * hz) : UINT64_MAX;
	uint32_t nq = 0, mine[RXS_MAX_QUEUES];
	for (uint32_t qi = t->group; qi < n->p.queues; qi += n->groups)
		if (n->q[qi].nwflows)
			mine[nq++] = qi;
	uint32_t rr = t->writer; /* writers start on different queues */
	for (;;) {
		uint64_t now = rxp_now();
		if (now >= tend || dma_should_stop(n) || !nq || wr_quota_spent(t))
			break;
		if (wr_pending(t) >= NIC_RUNS_MAX) {
			/* every slot awaits publication: only retiring helps */
			wr_dma_kick_lap(t);
			if (!wr_retire(t))
				rxp_lap(p, RXP_ST_IDLE, 0);
			continue;
		}
		struct wr_claim cl;
		uint32_t qi = mine[rr++ % nq];
		if (!wr_claim(t, qi, now, &cl)) {
			/* nothing due: what is staged goes now */
			wr_dma_kick_lap(t);
			if (wr_pending(t))
				wr_retire(t);
			rxp_lap(p, RXP_ST_IDLE, 0);
			continue;
		}
		rxp_burst_begin(p);
		uint32_t np = wr_run(t, qi, &cl, now);
		rxp_burst_end(p, np);
		if (!np) {
			/* no WQE at all: they are all in runs awaiting publication
			 * (or with the engine). Send what is staged, and retire
			 * here too: runs written earlier are published only by a
			 * retire, and a dry RQ writes no run that would call one
			 * (that stalled the queue for good once their gate opened
			 * after the RQ ran dry: GPU hds with 8 writers) */
			wr_dma_kick_lap(t);
			if (wr_pending(t))
				wr_retire(t);
		}
		if (n->q[qi].tpp == 0)
			wr_wire_time(t, now, cl.k, np, tend, &t->avg_pkt);
		__atomic_store_n(&t->bursts, t->bursts + 1, __ATOMIC_RELAXED);
	}
	/* every run written is published before the writer reports done */
	wr_dma_kick_lap(t);
	while (wr_pending(t))
		if (!wr_retire(t))
			rxp_lap(p, RXP_ST_IDLE, 0);
#ifdef RXRAY_HAVE_GPU
	if (t->gdma && rxg_dma_drain(t->gdma) < 0 && !t->rc)
		t->rc = -EIO;
#endif
}

void *nic_thread_main(void *arg)
{
	struct nic_thread *t = arg;
	struct rxs_nic *n = t->n;
	struct rxp_probe *p = t->probe;
	double hz = rxp_clock_get()->hz;
	if (t->core >= 0) {
		int rc = rxp_pin_self(t->core);
		if (rc < 0) {
			t->rc = rc;
			goto out;
		}
	}
	rxp_probe_reset(p);
	/* a generator kept off its CPU offers late, then in bursts: the
	 * window says so, as a worker's does (worker.c) */
	bool valid = rxr_valid_thread_begin(&t->valid, "nic", t->core, NULL, 0) == 0;
	double tpp = t->rate_pps > 0 ? hz / t->rate_pps : 0;
	uint64_t t0 = rxp_now();
	uint64_t tend = n->p.seconds > 0 ? t0 + (uint64_t)(n->p.seconds * hz) : UINT64_MAX;
	uint64_t sent = 0;
	double avg_pkt = 0; /* ticks per delivered packet, unpaced runs */
	__atomic_store_n(&t->t_start, t0, __ATOMIC_RELEASE);
	rxp_lap_start(p);
	/* a thread whose queues got no flow, or no quota, offers nothing */
	bool idle = !t->nflows || (t->limited && !t->max_packets);
	if (n->writer_path) {
		wr_loop(t);
		idle = true;
	}
	for (; !idle;) {
		uint64_t now = rxp_now();
		if (now >= tend || dma_should_stop(n))
			break;
		uint64_t k = RXS_BURST;
		if (tpp > 0) {
			uint64_t due = (uint64_t)((double)(now - t0) / tpp) + 1;
			if (due <= sent) {
				rxp_lap(p, RXP_ST_IDLE, 0);
				continue;
			}
			if (due - sent < k)
				k = due - sent;
		}
		if (t->limited) {
			if (sent >= t->max_packets)
				break;
			if (t->max_packets - sent < k)
				k = t->max_packets - sent;
		}
		rxp_burst_begin(p);
		uint32_t np = dma_burst(t, sent, (uint32_t)k, now);
		if (tpp == 0)
			dma_wire_time(t, now, (uint32_t)k, np, &avg_pkt);
		sent += k;
		__atomic_store_n(&t->bursts, t->bursts + 1, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&t->t_end, rxp_now(), __ATOMIC_RELEASE);
	t->valid_ok = valid && rxr_valid_thread_end(&t->valid) == 0;
out:
	if (!t->t_end)
		__atomic_store_n(&t->t_end, t->t_start, __ATOMIC_RELEASE);
	/* every CQE written above happens-before an acquire that sees DONE,
	 * or that sees the count of ended threads include this one */
	__atomic_store_n(&t->state, NIC_DONE, __ATOMIC_RELEASE);
	__atomic_fetch_add(&n->ndone, 1, __ATOMIC_RELEASE);
	return NULL;
}
