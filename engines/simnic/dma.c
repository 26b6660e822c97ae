/* SPDX-License-Identifier: MIT */
/*
 * The DMA writers: wire + DMA engine for a group's queues (q % groups ==
 * group). A writer claims the next train of a queue with one
 * compare-and-swap on the queue's producer word, which hands it the
 * train's sequence numbers and the WQEs (and as many CQ entries) of its
 * first m packets. It fetches and checks each WQE against the
 * memory-region registry like a NIC's MTT check, writes the headers, the
 * payloads and each CQE line whole, and stores each op_own itself, last,
 * when its packet is due: no lock, and no second agent on publication.
 * The CQ stays in order for the consumer because it polls in order, as
 * with a NIC's many DMA engines. Stages are lapped per run, so the probe
 * costs a few clock reads per run rather than per packet.
 */
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <time.h>

#include "nic_priv.h"
#ifdef RXRAY_HAVE_GPU
#include "rxray/gpu.h"
#endif
#include "rxray/inject.h"
#include "rxray/util.h"

/* One packet in flight inside a run. */
struct nic_pkt {
	struct nic_queue *q;
	uint64_t seq;
	uint64_t due;          /* its arrival (clock ticks): the CQE timestamp */
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
	bool *stalled;         /* the writer's stall flag (nic_thread.stalled) */
	bool lost;             /* test fault: its GPU bytes never land */
};

#ifdef RXRAY_HAVE_GPU
/* Where a payload goes once its writer's copies stalled (nothing of the
 * run is published after a stall). */
static _Thread_local char dma_sink[RXS_MAX_FRAME];
#endif

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
		if ((pk->gpu_mask & (1u << i)) && pk->lost) {
			/* test fault: the copy is never issued, the CQE goes out */
			if (s)
				s += k;
			len -= k;
			off = 0;
			continue;
		}
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
			uint64_t t0 = dst || *pk->stalled ? 0 : rxp_now();
			while (!dst && !*pk->stalled) {
				(void)rxg_dma_done(pk->gd);
				dst = rxg_dma_stage(pk->gd, pk->seg[i] + off, k);
				if (!dst && (double)(rxp_now() - t0) > NIC_STALL_S * rxp_clock_get()->hz) {
					rxg_stall_note("payload_dma: the staging ring stayed full "
						       "for %.0f s (%llu tickets landed of %llu "
						       "submitted)",
						       NIC_STALL_S,
						       (unsigned long long)rxg_dma_done(pk->gd),
						       (unsigned long long)(rxg_dma_next_ticket(pk->gd) - 1));
					*pk->stalled = true;
				}
			}
			if (!dst)
				dst = dma_sink;
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
	uint32_t hl = n->p.frame < RXS_HDR_LEN ? n->p.frame : RXS_HDR_LEN;
	const uint8_t *tmpl = n->tmpl + (size_t)pk->flow * NIC_TMPL_SIZE;
	uint64_t be = htobe64(pk->seq);
	if (!(pk->gpu_mask & 1u) && pk->seg_take[0] >= pk->hdr_len && hl == RXS_HDR_LEN) {
		/* the common case, the header region in SGE0 in host memory:
		 * one pass of stores over its lines, as a DMA write is */
		char *d = pk->seg[0];
		memcpy(d, tmpl, RXS_HDR_LEN);
		memcpy(d + RXS_SEQ_OFF, &be, sizeof(be));
		if (pk->hdr_len > hl)
			memset(d + hl, (int)(pk->seq & 0xff), pk->hdr_len - hl);
		return;
	}
	uint8_t hdr[NIC_TMPL_SIZE];
	memcpy(hdr, tmpl, RXS_HDR_LEN);
	memcpy(hdr + RXS_SEQ_OFF, &be, sizeof(be));
	dma_scatter(pk, 0, hdr, hl, 0);
	if (pk->hdr_len > hl)
		dma_scatter(pk, hl, NULL, pk->hdr_len - hl, (int)(pk->seq & 0xff));
}

/* The headers of a run's packets that found a buffer, each owing the
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
			 uint32_t qi)
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
	cqe->timestamp = htobe64(pk->due);
}

/* A completion's fields and counters; returns the op_own that makes it
 * visible, for the caller to store last (release). cnt: the counters to
 * add to (the queue's, or a writer's own for that queue). */
static uint8_t dma_cqe_fill(const struct rxs_nic *n, const struct nic_pkt *pk, uint32_t qi,
			    struct rxs_counters *cnt)
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
		dma_cqe_good(n, cqe, pk, qi);
		opcode = MLX5_CQE_RESP_SEND;
		NIC_CNT_ADD(cnt->bytes, n->p.frame);
	}
	NIC_CNT_ADD(cnt->received, 1);
	return (uint8_t)((opcode << 4) | owner);
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
				uint32_t qi, struct rxs_counters *cnt)
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
	dma_cqe_good(n, title, run[0], qi);
	title->byte_cnt = htobe32(k);
	NIC_CNT_ADD(cnt->bytes, (uint64_t)k * n->p.frame);
	NIC_CNT_ADD(cnt->received, k);
	uint8_t owner = (uint8_t)((s >> n->cq_shift) & 1);
	return (uint8_t)((MLX5_CQE_RESP_SEND << 4) | (RXS_CQE_FORMAT_COMPRESSED << 2) | owner);
}

static bool dma_should_stop(const struct rxs_nic *n)
{
	if (__atomic_load_n(&n->stop_req, __ATOMIC_RELAXED))
		return true;
	return n->p.stop && *n->p.stop;
}

#define WR_C_MASK 0xffffffu     /* the producer's WQE/CQ counter: 24 bits */
#define WR_C_HALF 0x800000u

/* d = a - b on the 24-bit counter, as a signed distance. */
static inline int32_t wr_c_diff(uint32_t a, uint32_t b)
{
	uint32_t d = (a - b) & WR_C_MASK;
	return d >= WR_C_HALF ? (int32_t)d - (int32_t)(WR_C_MASK + 1) : (int32_t)d;
}

/*
 * When the queue's packet j of this phase arrives (simnic.h "Arrivals"):
 * trains of n->train packets, one every q->ttrain ticks, and inside a
 * train one packet per wire time at the line rate. The same for every
 * writer count.
 */
static inline uint64_t wr_due(const struct rxs_nic *n, const struct nic_queue *q, uint64_t j)
{
	uint64_t tr = j / n->train;
	return n->t0 + (uint64_t)((double)tr * q->ttrain + (double)(j - tr * n->train) * n->twire);
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

#ifdef RXRAY_HAVE_GPU
/*
 * GPU payloads. Launched copies (sim:gpu_dma=launch): a launch costs the
 * writer microseconds (bench_gpu_link, bench/gpu/README.md) and launches
 * from several threads do not add up, so runs do not each submit their
 * pieces: they stay staged until NIC_DMA_BATCH are, or `force` (the
 * writer has nothing due, found no WQE, or has every run slot waiting).
 * Resident copies: every run's pieces go at once (force). A run's
 * completions wait for the ticket that carries its last pieces. Returns
 * whether it submitted.
 */
static bool wr_dma_kick(struct nic_thread *t, bool force)
{
	if (t->gdma && rxg_dma_pending(t->gdma) &&
	    (force || rxg_dma_pending(t->gdma) >= NIC_DMA_BATCH)) {
		wr_dma_submit(t);
		return true;
	}
	return false;
}
#endif

/* The same between runs: the launch is the NIC's payload_dma work (its
 * packets were counted where they were staged), not idle time, and a
 * burst of its own (full mode: the lap's NVTX range, as any burst's). */
static void wr_dma_kick_lap(struct nic_thread *t)
{
#ifdef RXRAY_HAVE_GPU
	if (!t->gdma || !rxg_dma_pending(t->gdma)) /* wr_dma_kick's "nothing to send" */
		return;
	rxp_burst_begin(t->probe);
	rxp_stage_begin(t->probe, RXP_ST_PAYLOAD_DMA);
	wr_dma_kick(t, true);
	rxp_lap(t->probe, RXP_ST_PAYLOAD_DMA, 0);
	rxp_burst_end(t->probe, 0);
#else
	(void)t;
#endif
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
		/* resident copies: a submit is a few stores, each run goes now */
		wr_dma_kick(t, !t->n->p.gpu_dma_launch);
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
 * Publish a written run: each op_own, in CQ order, by this writer, with
 * a release store after everything the entry describes (buffers, CQE
 * body, minis), and not before its packet is due. A run written ahead of
 * its train waits out the wire time between its packets (idle); a late
 * one publishes at once, with one clock read.
 */
static void wr_publish(struct nic_thread *t, const struct nic_run *r)
{
	const struct rxs_nic *n = t->n;
	struct nic_queue *q = r->q;
	uint32_t mask = n->cq_depth - 1;
	uint64_t now = rxp_now();
	/* a run lies inside one train: its packets one wire time apart (the
	 * CQE timestamps, wr_run, by the same sum) */
	uint64_t due0 = wr_due(n, q, r->off);
	bool early = now < due0 + (uint64_t)((r->m - 1) * n->twire);
	for (uint32_t i = 0; i < r->m; i++) {
		if (!r->op[i])
			continue;
		if (early) {
			uint64_t due = due0 + (uint64_t)(r->at[i] * n->twire);
			if (now < due) {
				rxp_lap(t->probe, RXP_ST_CQE_WRITE, 0);
				/* a stop ends the wait: the run is published as is */
				while ((now = rxp_now()) < due && !dma_should_stop(n))
					;
				rxp_lap(t->probe, RXP_ST_IDLE, 0);
				/* the stores that follow are cqe_write again (a range
				 * of their own in full mode) */
				rxp_stage_begin(t->probe, RXP_ST_CQE_WRITE);
			}
		}
		__atomic_store_n(&q->cq_buf[(r->c + i) & mask].op_own, r->op[i], __ATOMIC_RELEASE);
	}
	if (!early && q->paced) {
		/* how long after its last packet was due it went out */
		uint64_t last = due0 + (uint64_t)((r->m - 1) * n->twire);
		uint64_t late = now > last ? now - last : 0;
		if (late > t->late_pub_max)
			t->late_pub_max = late;
		if (late > q->late_ticks)
			t->late_runs++;
	}
}

/* Late (simnic.h): this writer's oldest unpublished packet on queue q,
 * after the runs before `from` went out: the next pending run's first,
 * or none. */
static void wr_hol_next(struct nic_thread *t, const struct nic_queue *q, uint32_t from)
{
	const struct rxs_nic *n = t->n;
	uint64_t due = UINT64_MAX;
	for (uint32_t i = from; i != t->run_tail; i++) {
		const struct nic_run *r = &t->runs[i % NIC_RUNS_MAX];
		if (r->q == q) {
			due = wr_due(n, q, r->off);
			break;
		}
	}
	__atomic_store_n(&t->hol[q - n->q], due, __ATOMIC_RELAXED);
}

/*
 * GPU copies that make no progress: the oldest run has waited for its
 * ticket RXG_STALL_S with nothing published meanwhile. The writer says
 * which run and ticket (rxg_stall), ends with -ETIMEDOUT and publishes
 * nothing more. Test gates (gate_fn) are the test's to bound.
 */
static void wr_gate_stall(struct nic_thread *t)
{
#ifdef RXRAY_HAVE_GPU
	if (!t->gdma || t->stalled)
		return;
	uint64_t now = rxp_now();
	if (!t->gate_since) {
		t->gate_since = now;
		return;
	}
	if ((double)(now - t->gate_since) < NIC_STALL_S * rxp_clock_get()->hz)
		return;
	const struct nic_run *r = &t->runs[t->run_head % NIC_RUNS_MAX];
	rxg_stall_note("payload_dma: NIC writer %u's run of %u packets (queue %u, CQE %u) waits "
		       "for copy ticket %llu, not landed after %.0f s (%llu of %llu tickets "
		       "landed)",
		       t->idx, r->m, (unsigned)(r->q - t->n->q), r->c, (unsigned long long)r->ticket,
		       NIC_STALL_S, (unsigned long long)rxg_dma_done(t->gdma),
		       (unsigned long long)(rxg_dma_next_ticket(t->gdma) - 1));
	t->stalled = true;
	if (!t->rc)
		t->rc = -ETIMEDOUT;
#else
	(void)t;
#endif
}

/*
 * Publish the runs at the head of this writer's list whose gate ticket
 * is done (tickets complete in order). Returns the runs published. Never
 * waits for a gate.
 */
/* Whether runs wait for their gate ticket: always, but for the test
 * fault that publishes before landing (GPU copies have a fault of their
 * own: nic_pkt.lost). */
static inline bool wr_gated(const struct nic_thread *t)
{
	return !t->n->p.fault_publish_early || t->gdma;
}

static uint32_t wr_retire_from(struct nic_thread *t, bool polled, uint64_t level)
{
	uint32_t done = 0;
	bool gated = wr_gated(t);
	while (t->run_head != t->run_tail) {
		struct nic_run *r = &t->runs[t->run_head % NIC_RUNS_MAX];
		if (r->ticket && gated) {
			if (!polled) {
				level = wr_gate_level(t);
				polled = true;
			}
			if (level < r->ticket)
				break;
		}
		wr_publish(t, r);
		t->run_head++;
		wr_hol_next(t, r->q, t->run_head);
		done++;
	}
	if (done || t->run_head == t->run_tail)
		t->gate_since = 0;
	else
		wr_gate_stall(t);
	return done;
}

static uint32_t wr_retire(struct nic_thread *t)
{
	return wr_retire_from(t, false, 0);
}

/*
 * The same between runs (the writer's loop, outside any burst): when the
 * oldest run can go, its publication is a burst of its own, lapped as
 * cqe_write (full mode: the NVTX ranges of its laps, as any burst's);
 * when it cannot, nothing is lapped. The gate is polled once.
 */
static uint32_t wr_retire_burst(struct nic_thread *t)
{
	if (t->run_head == t->run_tail)
		return 0;
	const struct nic_run *r = &t->runs[t->run_head % NIC_RUNS_MAX];
	bool polled = false;
	uint64_t level = 0;
	if (r->ticket && wr_gated(t)) {
		level = wr_gate_level(t);
		polled = true;
		if (level < r->ticket) {
			wr_gate_stall(t);
			return 0;
		}
	}
	rxp_burst_begin(t->probe);
	rxp_stage_begin(t->probe, RXP_ST_CQE_WRITE);
	uint32_t done = wr_retire_from(t, polled, level);
	rxp_lap(t->probe, RXP_ST_CQE_WRITE, 0);
	rxp_burst_end(t->probe, 0);
	return done;
}

/* Runs this writer has written and not published yet. */
static inline uint32_t wr_pending(const struct nic_thread *t)
{
	return t->run_tail - t->run_head;
}

/* A claimed run: packets off.. of queue qi, the first m in WQEs/CQ
 * entries c.., the other k - m dropped. */
struct wr_claim {
	uint64_t off;           /* the queue's packet number of the first */
	uint32_t c, k, m, cq_full;
};

/*
 * Claim the next train (or what is left of it) of queue qi with one
 * compare-and-swap on its producer, once the train's first packet is
 * due. Returns false when none is (or the quota is spent). WQEs are
 * those this writer last saw posted (the doorbell record is re-read only
 * when they do not cover the run), CQ room likewise from the consumer
 * index.
 */
static bool wr_claim(struct nic_thread *t, uint32_t qi, uint64_t now, struct wr_claim *cl)
{
	struct rxs_nic *n = t->n;
	struct nic_queue *q = &n->q[qi];
	struct rxs_counters *cnt = &t->qcnt[qi];
	uint64_t w = __atomic_load_n(&q->prod, __ATOMIC_RELAXED);
	/* the packets of every train that begins within this writer's lead:
	 * it writes a train before the train arrives, so that each CQE can
	 * go out at its own due time (wr_publish), as on the wire */
	/* at most one train interval ahead: a lead measured over a preempted
	 * run would otherwise park the writer on a train far in the future */
	uint64_t ahead = now + (uint64_t)(t->lead < q->ttrain ? t->lead : q->ttrain);
	if (n->p.seconds > 0) {
		/* never a train that begins after the phase's end */
		uint64_t tend = n->t0 + (uint64_t)(n->p.seconds * rxp_clock_get()->hz);
		if (ahead >= tend)
			ahead = now > tend - 1 ? now : tend - 1;
	}
	if (ahead < n->t0)
		return false;
	uint64_t due = ((uint64_t)((double)(ahead - n->t0) / q->ttrain) + 1) * n->train;
	if (n->p.max_packets && due > q->quota)
		due = q->quota;
	for (;;) {
		uint64_t off = w >> 24;
		uint32_t c = (uint32_t)w & WR_C_MASK;
		if (due <= off)
			return false;
		/* never across a train's end: a train is one writer's */
		uint64_t left = n->train - off % n->train;
		uint32_t k = (uint32_t)(due - off < left ? due - off : left);
		/* WQEs: posted - c on 16 bits, valid while this writer's view
		 * is no older than one ring (else it may have wrapped) */
		uint32_t avail = (uint16_t)(t->rq_posted[qi] - c);
		if (n->legacy_dbrec || avail < k || avail > n->p.ring ||
		    wr_c_diff(c, t->rq_seen[qi]) > (int32_t)n->p.ring) {
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
 * The CQE bodies and mini arrays of a run, and the op_own each entry
 * will get (r->op, r->at). With compression, each stretch of
 * consecutive good completions that stays inside the CQ becomes one
 * session, published when its last packet is due (a NIC closes a
 * session after its last completion); errors and stretches of one stay
 * plain.
 */
static void wr_cqes(const struct rxs_nic *n, struct nic_run *r, struct nic_pkt *pk, uint32_t qi,
		    struct rxs_counters *cnt)
{
	memset(r->op, 0, r->m);
	if (!n->p.cqe_comp) {
		for (uint32_t i = 0; i < r->m; i++) {
			r->op[i] = dma_cqe_fill(n, &pk[i], qi, cnt);
			r->at[i] = (uint8_t)i;
		}
		return;
	}
	for (uint32_t i = 0; i < r->m;) {
		uint32_t j = i;
		uint32_t room = n->cq_depth - (pk[i].cqe_idx & (n->cq_depth - 1));
		while (j < r->m && !pk[j].syndrome && j - i < room)
			j++;
		if (j - i >= 2) {
			struct nic_pkt *run[RXS_BURST];
			for (uint32_t x = i; x < j; x++)
				run[x - i] = &pk[x];
			r->op[i] = dma_session_fill(n, run, j - i, qi, cnt);
			r->at[i] = (uint8_t)(j - 1);
			i = j;
		} else {
			r->op[i] = dma_cqe_fill(n, &pk[i], qi, cnt);
			r->at[i] = (uint8_t)i;
			i++;
		}
	}
}

/*
 * Test fault (params.fault_early_cqe): the run's completions go out
 * before its data, and the data only once the consumer has passed them
 * (bounded: a second, or a stop), so a consumer reads what was there
 * before. The consumer's checks must catch it.
 */
static void wr_fault_early(struct nic_thread *t, const struct nic_run *r)
{
	const struct rxs_nic *n = t->n;
	wr_publish(t, r);
	uint64_t end = rxp_now() + (uint64_t)rxp_clock_get()->hz;
	uint32_t past = (r->c + r->m) & WR_C_MASK;
	while (rxp_now() < end && !dma_should_stop(n)) {
		uint32_t ci = be32toh(__atomic_load_n(&r->q->cq_dbrec[RXS_CQ_SET_CI],
						      __ATOMIC_ACQUIRE)) & WR_C_MASK;
		if (wr_c_diff(ci, past) >= 0)
			break;
	}
}

/*
 * Late drops (simnic.h "Late"): the claim found no WQE for k - m packets.
 * They are the generator's when the oldest packet the NIC has not
 * published on the queue (any writer's of the group, or the first one
 * dropped here) was due more than the queue's late limit before now.
 * Runs only on a drop; the other writers' words are read relaxed.
 */
static void wr_late_drops(struct nic_thread *t, uint32_t qi, const struct wr_claim *cl,
			  uint64_t now)
{
	const struct rxs_nic *n = t->n;
	const struct nic_queue *q = &n->q[qi];
	uint64_t oldest = wr_due(n, q, cl->off + cl->m);
	for (uint32_t w = 0; w < n->writers; w++) {
		const struct nic_thread *u = &n->t[t->group * n->writers + w];
		uint64_t h = __atomic_load_n(&u->hol[qi], __ATOMIC_RELAXED);
		if (h < oldest)
			oldest = h;
	}
	if (now <= oldest || now - oldest <= q->late_ticks)
		return;
	NIC_CNT_ADD(t->qcnt[qi].late_drops, cl->k - cl->m);
	if (now - oldest > t->late_drop_max)
		t->late_drop_max = now - oldest;
}

/* Test fault (params.fault_stall_train): the writer stops, a run written
 * and not published, as a descheduled writer does (bounded; a stop ends
 * it). */
static void wr_fault_stall(struct nic_thread *t)
{
	const struct rxs_nic *n = t->n;
	uint64_t end = rxp_now() + (uint64_t)(n->p.fault_stall_us * 1e-6 * rxp_clock_get()->hz);
	struct timespec ts = {0, 100000};
	while (rxp_now() < end && !dma_should_stop(n))
		nanosleep(&ts, NULL);
	rxp_lap(t->probe, RXP_ST_IDLE, 0); /* off its work, as if descheduled */
}

/*
 * The lead a writer claims trains with: the time it took to write a run
 * (claim to its first op_own), per train, a moving average. A run much
 * slower than the average was preempted, not slow: it does not move it.
 */
static void wr_lead(struct nic_thread *t, uint64_t t_claim, uint32_t m)
{
	const struct rxs_nic *n = t->n;
	double took = (double)(rxp_now() - t_claim) * n->train / m;
	if (!(t->lead > 0))
		t->lead = took;
	else if (took < 8 * t->lead)
		t->lead += (took - t->lead) / 8;
}

/*
 * Write a claimed run: fetch and check each WQE, headers (hdr_write),
 * payloads (payload_write), GPU copies submitted (payload_dma), CQE
 * bodies and mini arrays, then the op_owns (cqe_write), at once or, when
 * a gate ticket is outstanding, once it is done. Returns the packets
 * that found a buffer.
 */
static uint32_t wr_run(struct nic_thread *t, uint32_t qi, const struct wr_claim *cl,
		       uint64_t t_claim)
{
	struct rxs_nic *n = t->n;
	struct nic_queue *q = &n->q[qi];
	struct rxs_counters *cnt = &t->qcnt[qi];
	struct rxp_probe *p = t->probe;
	struct nic_pkt pk[RXS_BURST];
	uint32_t ngood = 0, mask = n->cq_depth - 1;
	uint32_t fi = (uint32_t)(cl->off % q->nwflows);
	/* a run lies inside one train: its packets one wire time apart */
	uint64_t due0 = wr_due(n, q, cl->off);
	t->run_ticket = 0;
	for (uint32_t i = 0; i < cl->m; i++, fi = fi + 1 == q->nwflows ? 0 : fi + 1) {
		struct nic_pkt *x = &pk[i];
		x->q = q;
		x->flow = q->wflows[fi];
		x->gd = t->gdma;
		x->ticket = &t->run_ticket;
		x->stalled = &t->stalled;
		/* test fault (params.fault_publish_early, GPU payloads): every
		 * n-th run's copies are never issued and its completions go
		 * out regardless, so a consumer reads stale bytes */
		x->lost = t->gdma && n->p.fault_publish_early &&
			  t->claims % n->p.fault_publish_early == 0;
		x->seq = q->seq + cl->off + i;
		x->due = due0 + (uint64_t)(i * n->twire);
		x->wqe_counter = (uint16_t)(cl->c + i);
		x->cqe_idx = (cl->c + i) & WR_C_MASK;
		const char *wqe = (const char *)q->rq_buf +
				  (size_t)((cl->c + i) & (n->p.ring - 1)) * n->stride;
		dma_wqe_fetch(n, x, wqe);
		/* a DMA engine keeps many writes in flight: ask for the lines
		 * it will write (the CQE line and the header) now */
		__builtin_prefetch(&q->cq_buf[x->cqe_idx & mask], 1);
		if (x->syndrome)
			continue;
		ngood++;
		__builtin_prefetch(x->seg[0], 1);
	}
	if (cl->k > cl->m && q->paced)
		wr_late_drops(t, qi, cl, t_claim);
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
	struct nic_run *r = &t->runs[t->run_tail % NIC_RUNS_MAX];
	r->q = q;
	r->off = cl->off;
	r->c = cl->c;
	r->m = cl->m;
	r->ticket = 0;
	/* Late: the run is this writer's oldest unpublished on the queue
	 * unless an earlier one still waits */
	if (__atomic_load_n(&t->hol[qi], __ATOMIC_RELAXED) == UINT64_MAX)
		__atomic_store_n(&t->hol[qi], due0, __ATOMIC_RELAXED);
	bool early = n->p.fault_early_cqe && t->claims == n->p.fault_early_cqe && !t->gdma;
	if (early) {
		wr_cqes(n, r, pk, qi, cnt);
		wr_fault_early(t, r);
		wr_hol_next(t, q, t->run_head);
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
	if (early) {
		rxp_lap(p, RXP_ST_CQE_WRITE, cl->m);
		return cl->m;
	}
#ifdef RXRAY_HAVE_GPU
	bool gpu = t->gdma && rxg_dma_pending(t->gdma);
	if (gpu)
		rxp_stage_begin(p, RXP_ST_PAYLOAD_DMA);
#endif
	/* the first run from the n-th train on that found a WQE, once */
	if (n->p.fault_stall_train && cl->off / n->train + 1 >= n->p.fault_stall_train &&
	    !__atomic_exchange_n(&q->fault_stalled, 1, __ATOMIC_RELAXED))
		wr_fault_stall(t);
	r->ticket = wr_gate_ticket(t);
#ifdef RXRAY_HAVE_GPU
	if (gpu)
		rxp_lap(p, RXP_ST_PAYLOAD_DMA, ngood);
#endif
	rxp_stage_begin(p, RXP_ST_CQE_WRITE);
	wr_cqes(n, r, pk, qi, cnt);
	if (!r->ticket && !wr_pending(t)) {
		wr_lead(t, t_claim, cl->m);
		wr_publish(t, r); /* nothing to wait for: this writer publishes now */
		__atomic_store_n(&t->hol[qi], UINT64_MAX, __ATOMIC_RELAXED);
	} else {
		t->run_tail++;
		wr_retire(t);
	}
	rxp_lap(p, RXP_ST_CQE_WRITE, cl->m);
	return cl->m;
}

/*
 * Unpaced: packets a run dropped for want of WQEs take their wire time,
 * at this writer's delivery time per packet (without it a NIC facing a
 * slow consumer would "offer" hundreds of Mpps: drops cost a counter
 * update). A full run slower than 8x the average was preempted, not
 * slow: it does not move the average. The wait ends at the phase's end
 * or a stop.
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

/* A DMA writer's loop: claim due trains on the group's queues round
 * robin, write them, publish what is ready; at the end, publish
 * everything it wrote. */
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
		if (now >= tend || dma_should_stop(n) || !nq || wr_quota_spent(t) || t->stalled)
			break;
		if (wr_pending(t) >= NIC_RUNS_MAX) {
			/* every slot awaits its gate: only retiring helps */
			wr_dma_kick_lap(t);
			if (!wr_retire_burst(t))
				rxp_lap(p, RXP_ST_IDLE, 0);
			continue;
		}
		struct wr_claim cl;
		uint32_t qi = mine[rr++ % nq];
		if (!wr_claim(t, qi, now, &cl)) {
			/* nothing due: what is staged goes now */
			wr_dma_kick_lap(t);
			if (wr_pending(t))
				wr_retire_burst(t);
			rxp_lap(p, RXP_ST_IDLE, 0);
			continue;
		}
		rxp_burst_begin(p);
		uint32_t np = wr_run(t, qi, &cl, now);
		rxp_burst_end(p, np);
		if (!np) {
			/* no WQE at all: they are all in runs awaiting their gate
			 * (or with the engine). Send what is staged, and retire
			 * here too: a dry RQ writes no run that would call one,
			 * and gated runs would then never be published */
			wr_dma_kick_lap(t);
			if (wr_pending(t))
				wr_retire_burst(t);
		}
		if (!n->q[qi].paced)
			wr_wire_time(t, now, cl.k, np, tend, &t->avg_pkt);
		__atomic_store_n(&t->bursts, t->bursts + 1, __ATOMIC_RELAXED);
	}
	/* every run written is published before the writer reports done */
	wr_dma_kick_lap(t);
	if (t->stalled && !t->rc)
		t->rc = -ETIMEDOUT;
	while (wr_pending(t) && !t->stalled)
		if (!wr_retire_burst(t))
			rxp_lap(p, RXP_ST_IDLE, 0);
#ifdef RXRAY_HAVE_GPU
	/* the resident copy kernel leaves the GPU until the next phase */
	int drc;
	if (t->gdma && !t->stalled && (drc = rxg_dma_park(t->gdma)) < 0 && !t->rc)
		t->rc = drc;
#endif
}

void *rxs_nic_thread_main(void *arg)
{
	struct nic_thread *t = arg;
	struct rxs_nic *n = t->n;
	struct rxp_probe *p = t->probe;
	if (t->core >= 0) {
		int rc = rxu_pin_self(t->core);
		if (rc < 0) {
			t->rc = rc;
			__atomic_fetch_add(&n->ready, 1, __ATOMIC_RELEASE);
			goto out;
		}
	}
	rxp_probe_reset(p);
	/* a generator kept off its CPU offers late, then in bursts: the
	 * window says so, as a worker's does (worker.c). Opened before the
	 * start line: its system calls would make every writer late at the
	 * schedule's origin, its first trains a burst */
	bool valid = rxr_valid_thread_begin(&t->valid, "nic", t->core, NULL, 0) == 0;
	/* at the start line: the schedule's origin is set once every NIC
	 * thread is here (rxs_nic_start) */
	__atomic_fetch_add(&n->ready, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&n->go, __ATOMIC_ACQUIRE) && !dma_should_stop(n))
		sched_yield();
	/* its time runs from the phase's origin, where the arrival schedule
	 * starts, whenever the thread got going */
	__atomic_store_n(&t->t_start, n->t0, __ATOMIC_RELEASE);
	rxp_lap_start(p);
	wr_loop(t);
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
