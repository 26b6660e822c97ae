/* SPDX-License-Identifier: MIT */
/*
 * Software NIC lifecycle: rings, memory-region registry, the NIC threads,
 * counters and the NIC's part of a run result.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nic_priv.h"
#ifdef RXRAY_HAVE_GPU
#include "rxray/gpu.h"
#endif
#include "rxray/inject.h"
#include "rxray/util.h"

/* one error line (rxu_errf) */
#define nerr(err, errlen, ...) ((void)rxu_errf(err, errlen, 0, __VA_ARGS__))

static bool pow2(uint32_t v)
{
	return v && !(v & (v - 1));
}

static int nic_params_check(const struct rxs_params *p, char *err, size_t errlen)
{
	if (p->queues < 1 || p->queues > RXS_MAX_QUEUES)
		nerr(err, errlen, "queues: %u out of range 1..%u", p->queues, RXS_MAX_QUEUES);
	else if (!pow2(p->ring) || p->ring < 2 || p->ring > RXS_MAX_RING)
		nerr(err, errlen, "ring: %u must be a power of two 2..%u", p->ring, RXS_MAX_RING);
	else if (p->cq_depth && (!pow2(p->cq_depth) || p->cq_depth < 2))
		nerr(err, errlen, "cq: %u must be a power of two >= 2", p->cq_depth);
	else if (p->sges < 1 || p->sges > RXS_MAX_SGES)
		nerr(err, errlen, "sges: %u out of range 1..%u", p->sges, RXS_MAX_SGES);
	else if (p->frame < RXS_MIN_FRAME || p->frame > RXS_MAX_FRAME)
		nerr(err, errlen, "frame: %u out of range %u..%u", p->frame, RXS_MIN_FRAME,
		     RXS_MAX_FRAME);
	else if (!(p->rate_pps >= 0) || !(p->seconds >= 0))
		nerr(err, errlen, "rate: negative rate or seconds");
	else if (p->train > RXS_BURST)
		nerr(err, errlen, "train: %u packets out of range 1..%u", p->train, RXS_BURST);
	else if (p->line_gbps != 0 && !(p->line_gbps >= RXS_MIN_LINE_GBPS &&
					p->line_gbps <= RXS_MAX_LINE_GBPS))
		nerr(err, errlen, "line: %g Gb/s out of range %g..%g", p->line_gbps,
		     RXS_MIN_LINE_GBPS, RXS_MAX_LINE_GBPS);
	else
		return rxs_threads_check(p->queues, p->ring,
					 &(struct rx_dev_threads){p->threads, p->writers}, 0, err,
					 errlen);
	return -EINVAL;
}

bool rxs_sim_legacy(const char *what)
{
	const char *v = getenv("RXRAY_SIM_LEGACY");
	size_t l = strlen(what);
	for (const char *p = v; p && *p;) {
		if (!strncmp(p, what, l) && (p[l] == ',' || p[l] == '\0'))
			return true;
		p = strchr(p, ',');
		p = p ? p + 1 : NULL;
	}
	return false;
}

/* Clock ticks as microseconds. */
static double nic_ticks_us(uint64_t ticks)
{
	double hz = rxp_clock_get()->hz;
	return hz > 0 ? (double)ticks * 1e6 / hz : 0;
}

static void *nic_zalloc(size_t len)
{
	size_t alen = (len + 63) & ~(size_t)63;
	void *p = aligned_alloc(64, alen);
	if (p)
		memset(p, 0, alen);
	return p;
}

int rxs_nic_open(const struct rxs_params *p, struct rxs_nic **out, char *err, size_t errlen)
{
	struct rxs_nic *n = NULL;
	*out = NULL;
	int rc = nic_params_check(p, err, errlen);
	if (rc < 0)
		goto fail;
	if (rxp_clock_get()->hz <= 0 && (rc = rxp_clock_init(0)) < 0) {
		nerr(err, errlen, "simnic: clock init failed: %s", strerror(-rc));
		goto fail;
	}
	rc = -ENOMEM;
	n = nic_zalloc(sizeof(*n));
	if (!n)
		goto fail;
	n->p = *p;
	n->p.stop = p->stop;
	n->stride = p->sges > 1 ? 32 : 16;
	n->cq_depth = p->cq_depth ? p->cq_depth : p->ring;
	n->cq_shift = (uint32_t)__builtin_ctz(n->cq_depth);
	n->nflows = p->flows ? p->flows : 64 * p->queues;
	n->mr_gen = 0x5a;
	n->legacy_dbrec = rxs_sim_legacy("dbrec");
	n->legacy_state = rxs_sim_legacy("state");
	n->q = nic_zalloc(sizeof(*n->q) * p->queues);
	if (!n->q)
		goto fail;
	for (uint32_t i = 0; i < p->queues; i++) {
		struct nic_queue *q = &n->q[i];
		q->rq_buf = nic_zalloc((size_t)p->ring * n->stride);
		q->rq_dbrec = nic_zalloc(64);
		q->cq_buf = nic_zalloc((size_t)n->cq_depth * sizeof(struct mlx5_cqe64));
		q->cq_dbrec = nic_zalloc(64);
		if (!q->rq_buf || !q->rq_dbrec || !q->cq_buf || !q->cq_dbrec)
			goto fail;
		for (uint32_t k = 0; k < n->cq_depth; k++)
			q->cq_buf[k].op_own = MLX5_CQE_INVALID << 4;
	}
	if (rxs_nic_flows_build(n) < 0)
		goto fail;
	n->groups = p->threads ? p->threads : 1;
	n->writers = p->writers ? p->writers : 1;
	n->nthreads = n->groups * n->writers;
	n->train = p->train ? p->train : RXS_BURST;
	double gbps = p->line_gbps > 0 ? p->line_gbps : NIC_LINE_GBPS_DEFAULT;
	n->line_pps = gbps * 1e9 / (8.0 * (p->frame + NIC_WIRE_OVERHEAD));
	n->twire = rxp_clock_get()->hz / n->line_pps;
	n->t = nic_zalloc(sizeof(*n->t) * n->nthreads);
	if (!n->t)
		goto fail;
	for (uint32_t i = 0; i < n->nthreads; i++) {
		struct nic_thread *t = &n->t[i];
		t->n = n;
		t->idx = i;
		t->group = i / n->writers;
		t->writer = i % n->writers;
		t->core = i == 0 ? p->core : p->thread_core[i];
		t->qcnt = nic_zalloc(sizeof(*t->qcnt) * p->queues);
		t->rq_posted = nic_zalloc(sizeof(uint32_t) * p->queues);
		t->rq_seen = nic_zalloc(sizeof(uint32_t) * p->queues);
		t->cq_ci = nic_zalloc(sizeof(uint32_t) * p->queues);
		t->cq_seen = nic_zalloc(sizeof(uint32_t) * p->queues);
		t->runs = nic_zalloc(sizeof(*t->runs) * NIC_RUNS_MAX);
		t->hol = nic_zalloc(sizeof(uint64_t) * p->queues);
		if (!t->qcnt || !t->rq_posted || !t->rq_seen || !t->cq_ci || !t->cq_seen ||
		    !t->runs || !t->hol)
			goto fail;
		for (uint32_t q = 0; q < p->queues; q++)
			t->hol[q] = UINT64_MAX;
		if (rxp_probe_open("nic", t->core, p->sample_shift, 0, &t->probe, NULL, 0) < 0)
			goto fail;
		for (int s = 0; s < RXP_ST_COUNT; s++)
			if (p->inject[s])
				rxp_probe_set_inject(t->probe, (enum rxp_stage)s, p->inject[s]);
		if (p->inject_ab && rxp_probe_set_inject_ab(t->probe, true) < 0)
			goto fail;
		/* --op-delay hdr_write in A/B: the header writes of one
		 * hdr_write lap in four owe their delays (rxp_probe_set_op_gate) */
		if (p->inject_ab && p->op_delay_hdr &&
		    rxp_probe_set_op_gate(t->probe, RXP_ST_HDR_WRITE, p->op_delay_hdr) < 0)
			goto fail;
		/* without A/B every NIC lap pays the header writes' delays */
		if (!p->inject_ab && p->op_delay_hdr && rxp_probe_set_op_pay(t->probe) < 0)
			goto fail;
	}
	if (rxs_nic_queues_share(n) < 0)
		goto fail;
	*out = n;
	return 0;
fail:
	if (rc == -ENOMEM)
		nerr(err, errlen, "simnic: out of memory");
	rxs_nic_free(n);
	return rc;
}

void rxs_nic_free(struct rxs_nic *n)
{
	if (!n)
		return;
	if (n->started && !n->joined) {
		rxs_nic_stop(n);
		rxs_nic_join(n);
	}
	if (n->q)
		for (uint32_t i = 0; i < n->p.queues; i++) {
			free(n->q[i].rq_buf);
			free(n->q[i].rq_dbrec);
			free(n->q[i].cq_buf);
			free(n->q[i].cq_dbrec);
			free(n->q[i].wflows);
		}
	free(n->q);
	free(n->tmpl);
	free(n->flow_q);
	free(n->flow_hash);
	if (n->t)
		for (uint32_t i = 0; i < n->nthreads; i++) {
			free(n->t[i].qcnt);
			free(n->t[i].rq_posted);
			free(n->t[i].rq_seen);
			free(n->t[i].cq_ci);
			free(n->t[i].cq_seen);
			free(n->t[i].runs);
			free(n->t[i].hol);
			rxp_probe_free(n->t[i].probe);
#ifdef RXRAY_HAVE_GPU
			rxg_dma_close(n->t[i].gdma);
#endif
		}
	free(n->t);
	free(n);
}

const struct rxs_params *rxs_nic_params(const struct rxs_nic *n)
{
	return &n->p;
}

int rxs_nic_ring(struct rxs_nic *n, uint32_t qi, struct rxs_ring *out)
{
	if (qi >= n->p.queues)
		return -EINVAL;
	struct nic_queue *q = &n->q[qi];
	out->rq_buf = q->rq_buf;
	out->wqe_cnt = n->p.ring;
	out->stride = n->stride;
	out->sges = n->p.sges;
	out->rq_dbrec = q->rq_dbrec;
	out->cq_buf = q->cq_buf;
	out->cqe_cnt = n->cq_depth;
	out->cqe_shift = n->cq_shift;
	out->cq_dbrec = q->cq_dbrec;
	return 0;
}

static bool nic_running(const struct rxs_nic *n)
{
	return n->started && !n->joined;
}

int rxs_mr_reg_gpu(struct rxs_nic *n, void *addr, size_t len, uint32_t *lkey)
{
#ifdef RXRAY_HAVE_GPU
	int rc = rxs_mr_reg(n, addr, len, lkey);
	if (rc == 0) {
		n->mr[n->nmr - 1].gpu = true;
		n->gpu_mrs = true;
	}
	return rc;
#else
	(void)n;
	(void)addr;
	(void)len;
	(void)lkey;
	return -ENOTSUP;
#endif
}

int rxs_mr_reg(struct rxs_nic *n, void *addr, size_t len, uint32_t *lkey)
{
	if (!addr || !len || (uintptr_t)addr + len < (uintptr_t)addr)
		return -EINVAL;
	if (nic_running(n))
		return -EBUSY;
	if (n->nmr >= RXS_MAX_MRS)
		return -ENOSPC;
	uint32_t idx = n->nmr++;
	/* index in the high bits for an O(1) lookup, a generation in the low
	 * 12 so a stale key never matches; never MLX5_INVALID_LKEY (0x100) */
	n->mr_gen = (n->mr_gen + 1) & 0xfff;
	n->mr[idx] = (struct nic_mr){.addr = (uintptr_t)addr, .len = len,
				     .lkey = ((idx + 1) << 12) | n->mr_gen, .valid = true};
	*lkey = n->mr[idx].lkey;
	return 0;
}

int rxs_mr_dereg(struct rxs_nic *n, uint32_t lkey)
{
	if (nic_running(n))
		return -EBUSY;
	uint32_t idx = (lkey >> 12) - 1;
	if (idx >= n->nmr || !n->mr[idx].valid || n->mr[idx].lkey != lkey)
		return -EINVAL;
	n->mr[idx].valid = false;
	return 0;
}

/*
 * The arrival schedule's origin, shared by every writer: once all NIC
 * threads are running (pinned, at the start line), or NIC_START_WAIT_S
 * after they were created. A thread the host starts late would otherwise
 * find its phase's trains overdue, or the phase over (a short warm-up on a
 * loaded host offered nothing), and the engine's timer, which starts when
 * this returns, would count time the NIC never had.
 */
static void nic_start_line(struct rxs_nic *n)
{
	uint64_t hz = (uint64_t)rxp_clock_get()->hz, t = rxp_now();
	while (__atomic_load_n(&n->ready, __ATOMIC_ACQUIRE) < (int)n->nthreads &&
	       rxp_now() - t < (uint64_t)(NIC_START_WAIT_S * (double)hz) &&
	       !__atomic_load_n(&n->stop_req, __ATOMIC_RELAXED)) {
		struct timespec ts = {0, 50000};
		nanosleep(&ts, NULL);
	}
	n->t0 = rxp_now();
	__atomic_store_n(&n->go, 1, __ATOMIC_RELEASE);
}

int rxs_nic_start(struct rxs_nic *n)
{
	if (n->started)
		return -EBUSY;
	int rc = 0;
#ifdef RXRAY_HAVE_GPU
	/* every thread's DMA engine before any thread runs, on this thread:
	 * a pinned or device allocation waits for the GPU's work in flight,
	 * and a persistent GPU consumer is in flight for as long as packets
	 * flow (room for 16 submits of NIC_DMA_BATCH pieces in flight, at
	 * most 16 MiB of staging a writer) */
	for (uint32_t i = 0; i < n->nthreads && n->gpu_mrs; i++) {
		if (n->t[i].gdma)
			continue;
		size_t bytes = (size_t)16 * NIC_DMA_BATCH * (n->p.frame + 16);
		rc = rxg_dma_open(16 * NIC_DMA_BATCH, bytes < (16u << 20) ? bytes : (16u << 20),
				  n->p.gpu_dma_launch ? RXG_DMA_LAUNCH : RXG_DMA_RESIDENT,
				  &n->t[i].gdma, NULL, 0);
		if (rc < 0)
			return rc;
	}
#endif
	for (uint32_t i = 0; i < n->nthreads; i++)
		__atomic_store_n(&n->t[i].state, NIC_RUNNING, __ATOMIC_RELEASE);
	__atomic_store_n(&n->ready, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&n->go, 0, __ATOMIC_RELAXED);
	n->t0 = rxp_now();
	for (uint32_t i = 0; i < n->nthreads && !rc; i++) {
		rc = pthread_create(&n->t[i].tid, NULL, rxs_nic_thread_main, &n->t[i]);
		n->t[i].started = rc == 0;
		if (!rc) { /* "rxray-nic0", ...: what top, perf and /proc show */
			char name[16];
			snprintf(name, sizeof(name), "rxray-nic%u", i % 1000);
			pthread_setname_np(n->t[i].tid, name);
		}
	}
	if (rc != 0) {
		/* leave nothing running: stop and join the threads that started */
		rxs_nic_stop(n);
		for (uint32_t i = 0; i < n->nthreads; i++) {
			if (n->t[i].started)
				pthread_join(n->t[i].tid, NULL);
			n->t[i].started = false;
			__atomic_store_n(&n->t[i].state, NIC_IDLE, __ATOMIC_RELEASE);
		}
		__atomic_store_n(&n->stop_req, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&n->ndone, 0, __ATOMIC_RELAXED);
		return -rc;
	}
	nic_start_line(n);
	n->started = true;
	return 0;
}

int rxs_nic_rearm(struct rxs_nic *n, double seconds)
{
	if (!n->started || !n->joined)
		return -EINVAL;
	/* rings, posted WQEs, CQ positions and sequence numbers carry on as
	 * they are: only the counters and the run's clock start again */
	for (uint32_t i = 0; i < n->p.queues; i++) {
		struct nic_queue *q = &n->q[i];
		/* the phase's offered packets move into the sequence base;
		 * the WQE/CQ counter carries on */
		uint64_t w = __atomic_load_n(&q->prod, __ATOMIC_RELAXED);
		q->seq += w >> 24;
		__atomic_store_n(&q->prod, w & 0xffffffu, __ATOMIC_RELAXED);
		q->fault_stalled = 0;
	}
	for (uint32_t i = 0; i < n->nthreads; i++) {
		struct nic_thread *t = &n->t[i];
		t->started = t->joined = false;
		t->rc = 0;
		t->t_start = t->t_end = 0;
		t->bursts = 0;
		t->offered = t->received = t->out_of_buffer = 0;
		memset(t->qcnt, 0, sizeof(*t->qcnt) * n->p.queues);
		t->claims = 0;
		t->gate_since = 0;
		t->late_pub_max = t->late_runs = t->late_drop_max = 0;
		for (uint32_t q = 0; q < n->p.queues; q++)
			t->hol[q] = UINT64_MAX;
		t->valid_ok = false;
		__atomic_store_n(&t->state, NIC_IDLE, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&n->stop_req, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&n->ndone, 0, __ATOMIC_RELAXED);
	n->p.seconds = seconds;
	n->started = n->joined = false;
	return 0;
}

void rxs_nic_stop(struct rxs_nic *n)
{
	__atomic_store_n(&n->stop_req, 1, __ATOMIC_RELAXED);
}

bool rxs_nic_done(const struct rxs_nic *n)
{
	/* one acquire of the count of ended threads: each thread's CQEs
	 * happen-before its increment, and the increments form one release
	 * sequence, so seeing them all makes every CQE visible */
	if (n->legacy_state) {
		/* before: each thread's state word, on the line of the
		 * counters that thread writes every burst */
		for (uint32_t i = 0; i < n->nthreads; i++)
			if (__atomic_load_n(&n->t[i].state, __ATOMIC_ACQUIRE) != NIC_DONE)
				return false;
		return true;
	}
	return (uint32_t)__atomic_load_n(&n->ndone, __ATOMIC_ACQUIRE) == n->nthreads;
}

int rxs_nic_join(struct rxs_nic *n)
{
	if (!n->started)
		return -EINVAL;
	if (!n->joined) {
		for (uint32_t i = 0; i < n->nthreads; i++)
			if (!n->t[i].joined) {
				pthread_join(n->t[i].tid, NULL);
				n->t[i].joined = true;
			}
		n->joined = true;
	}
	for (uint32_t i = 0; i < n->nthreads; i++)
		if (n->t[i].rc < 0)
			return n->t[i].rc;
	return 0;
}

void rxs_nic_counters(const struct rxs_nic *n, uint32_t qi, struct rxs_counters *out)
{
	memset(out, 0, sizeof(*out));
	for (uint32_t i = 0; i < n->p.queues; i++) {
		if (qi != UINT32_MAX && i != qi)
			continue;
		/* each writer's part of the queue */
		for (uint32_t w = 0; w < n->nthreads; w++) {
			const struct rxs_counters *c = &n->t[w].qcnt[i];
			out->offered += __atomic_load_n(&c->offered, __ATOMIC_RELAXED);
			out->received += __atomic_load_n(&c->received, __ATOMIC_RELAXED);
			out->out_of_buffer += __atomic_load_n(&c->out_of_buffer, __ATOMIC_RELAXED);
			out->cq_full += __atomic_load_n(&c->cq_full, __ATOMIC_RELAXED);
			out->errors += __atomic_load_n(&c->errors, __ATOMIC_RELAXED);
			out->bytes += __atomic_load_n(&c->bytes, __ATOMIC_RELAXED);
			out->dbrec_reads += __atomic_load_n(&c->dbrec_reads, __ATOMIC_RELAXED);
			out->late_drops += __atomic_load_n(&c->late_drops, __ATOMIC_RELAXED);
		}
	}
}

void rxs_nic_stats(const struct rxs_nic *n, struct rxs_stats *out)
{
	struct rxs_counters tot;
	rxs_nic_counters(n, UINT32_MAX, &tot);
	memset(out, 0, sizeof(*out));
	double hz = rxp_clock_get()->hz;
	uint64_t t0 = UINT64_MAX, t1 = 0, busy = 0;
	for (uint32_t i = 0; i < n->nthreads; i++) {
		const struct nic_thread *t = &n->t[i];
		uint64_t a = __atomic_load_n(&t->t_start, __ATOMIC_ACQUIRE);
		uint64_t b = __atomic_load_n(&t->t_end, __ATOMIC_ACQUIRE);
		if (!a)
			continue; /* never ran */
		t0 = a < t0 ? a : t0;
		t1 = b > t1 ? b : t1;
		busy += rxp_probe_busy_cycles(t->probe);
		out->bursts += __atomic_load_n(&t->bursts, __ATOMIC_RELAXED);
	}
	out->seconds = (t1 > t0 && hz > 0) ? (double)(t1 - t0) / hz : 0;
	out->target_pps = n->p.rate_pps;
	out->achieved_pps = out->seconds > 0 ? (double)tot.offered / out->seconds : 0;
	out->busy_cycles_per_pkt = tot.received ? (double)busy / (double)tot.received : 0;
	out->threads = n->nthreads;
	if (n->p.rate_pps > 0)
		out->generator_limited = out->achieved_pps < 0.98 * n->p.rate_pps;
	else /* max: the consumer took (nearly) all the NIC could make */
		out->generator_limited = tot.offered > 0 &&
					 tot.out_of_buffer * 1000 <= tot.offered;
}

uint32_t rxs_nic_threads(const struct rxs_nic *n)
{
	return n->nthreads;
}

void rxs_nic_thread_stats(const struct rxs_nic *n, uint32_t ti, struct rxs_thread_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (ti >= n->nthreads)
		return;
	const struct nic_thread *t = &n->t[ti];
	double hz = rxp_clock_get()->hz;
	out->core = t->core;
	/* a writer offers its group's flows with the other writers */
	for (uint32_t q = 0; q < n->p.queues; q++)
		if (nic_thread_owns(n, ti, q))
			out->flows += n->q[q].nwflows;
	out->target_pps = n->p.rate_pps * out->flows / n->nflows / n->writers;
	for (uint32_t q = 0; q < n->p.queues; q++) {
		if (!nic_thread_owns(n, ti, q))
			continue;
		const struct rxs_counters c = t->qcnt[q]; /* this writer's part of the queue */
		out->queues++;
		out->cnt.cq_full += c.cq_full;
		out->cnt.errors += c.errors;
		out->cnt.bytes += c.bytes;
		out->cnt.late_drops += c.late_drops;
	}
	out->cnt.offered = __atomic_load_n(&t->offered, __ATOMIC_RELAXED);
	out->cnt.received = __atomic_load_n(&t->received, __ATOMIC_RELAXED);
	out->cnt.out_of_buffer = __atomic_load_n(&t->out_of_buffer, __ATOMIC_RELAXED);
	uint64_t t0 = __atomic_load_n(&t->t_start, __ATOMIC_ACQUIRE);
	uint64_t t1 = __atomic_load_n(&t->t_end, __ATOMIC_ACQUIRE);
	out->seconds = (t1 > t0 && hz > 0) ? (double)(t1 - t0) / hz : 0;
	out->achieved_pps = out->seconds > 0 ? (double)out->cnt.offered / out->seconds : 0;
	uint64_t busy = rxp_probe_busy_cycles(t->probe);
	out->busy_cycles_per_pkt =
		out->cnt.received ? (double)busy / (double)out->cnt.received : 0;
	out->bursts = __atomic_load_n(&t->bursts, __ATOMIC_RELAXED);
}

const struct rxp_probe *rxs_nic_probe(const struct rxs_nic *n)
{
	return n->t[0].probe;
}

const struct rxp_probe *rxs_nic_thread_probe(const struct rxs_nic *n, uint32_t t)
{
	return t < n->nthreads ? n->t[t].probe : NULL;
}

static json_t *nic_counters_json(const struct rxs_counters *c)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	json_object_set_new(o, "offered", json_integer((json_int_t)c->offered));
	json_object_set_new(o, "received", json_integer((json_int_t)c->received));
	json_object_set_new(o, "out_of_buffer", json_integer((json_int_t)c->out_of_buffer));
	json_object_set_new(o, "cq_full", json_integer((json_int_t)c->cq_full));
	json_object_set_new(o, "errors", json_integer((json_int_t)c->errors));
	json_object_set_new(o, "bytes", json_integer((json_int_t)c->bytes));
	json_object_set_new(o, "dbrec_reads", json_integer((json_int_t)c->dbrec_reads));
	json_object_set_new(o, "late_drops", json_integer((json_int_t)c->late_drops));
	return o;
}

/* extra "nic".threads: one object per NIC thread. */
static json_t *nic_threads_json(const struct rxs_nic *n)
{
	json_t *a = json_array();
	for (uint32_t i = 0; a && i < n->nthreads; i++) {
		struct rxs_thread_stats ts;
		rxs_nic_thread_stats(n, i, &ts);
		json_t *o = json_object();
		json_t *qs = json_array();
		if (!o || !qs) {
			json_decref(o);
			json_decref(qs);
			json_decref(a);
			return NULL;
		}
		for (uint32_t q = 0; q < n->p.queues; q++)
			if (nic_thread_owns(n, i, q))
				json_array_append_new(qs, json_integer(q));
		json_object_set_new(o, "thread", json_integer(i));
		json_object_set_new(o, "group", json_integer(n->t[i].group));
		json_object_set_new(o, "writer", json_integer(n->t[i].writer));
		json_object_set_new(o, "core", json_integer(ts.core));
		json_object_set_new(o, "queues", qs);
		json_object_set_new(o, "flows", json_integer(ts.flows));
		json_object_set_new(o, "target_pps", json_real(ts.target_pps));
		json_object_set_new(o, "achieved_mpps", json_real(ts.achieved_pps / 1e6));
		json_object_set_new(o, "seconds", json_real(ts.seconds));
		json_object_set_new(o, "busy_cycles_per_packet", json_real(ts.busy_cycles_per_pkt));
		json_object_set_new(o, "bursts", json_integer((json_int_t)ts.bursts));
		json_object_set_new(o, "offered", json_integer((json_int_t)ts.cnt.offered));
		json_object_set_new(o, "received", json_integer((json_int_t)ts.cnt.received));
		json_object_set_new(o, "out_of_buffer",
				    json_integer((json_int_t)ts.cnt.out_of_buffer));
		/* Late (simnic.h): how far behind its schedule it fell */
		json_object_set_new(o, "late_drops", json_integer((json_int_t)ts.cnt.late_drops));
		json_object_set_new(o, "late_runs", json_integer((json_int_t)n->t[i].late_runs));
		json_object_set_new(o, "late_publish_max_us",
				    json_real(nic_ticks_us(n->t[i].late_pub_max)));
		json_array_append_new(a, o);
	}
	return a;
}

/* The smallest late limit of the paced queues, in ticks (UINT64_MAX: none). */
static uint64_t nic_late_limit(const struct rxs_nic *n)
{
	uint64_t lim = UINT64_MAX;
	for (uint32_t q = 0; q < n->p.queues; q++)
		if (n->q[q].nwflows && n->q[q].late_ticks < lim)
			lim = n->q[q].late_ticks;
	return lim;
}

int rxs_nic_validity_add(const struct rxs_nic *n, struct rxr_validity *v)
{
	int added = 0;
	uint64_t worst = 0;
	for (uint32_t i = 0; v && i < n->nthreads; i++) {
		if (n->t[i].late_drop_max > worst)
			worst = n->t[i].late_drop_max;
		/* the thread ended (joined by the caller): its window is final */
		if (!n->t[i].valid_ok)
			continue;
		int rc = rxr_validity_add_thread(v, &n->t[i].valid);
		if (rc < 0)
			return rc;
		added++;
	}
	struct rxs_counters tot;
	rxs_nic_counters(n, UINT32_MAX, &tot);
	/* the generator's own loss (simnic.h "Late"): a receiver is never
	 * judged by it */
	if (v && tot.late_drops) {
		int rc = rxr_validity_add_reason(
		    v,
		    "nic: %llu of %llu drops while the NIC ran up to %.0f us behind its schedule "
		    "(limit %.0f us): the generator's loss, not the receiver's",
		    (unsigned long long)tot.late_drops, (unsigned long long)tot.out_of_buffer,
		    nic_ticks_us(worst), nic_ticks_us(nic_late_limit(n)));
		if (rc < 0)
			return rc;
	}
	return added;
}

/* One count of the record: asked (0: "auto"), resolved (0: 1) and run. */
static json_t *nic_count_json(uint32_t asked, uint32_t resolved, uint32_t actual)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	json_object_set_new(o, "asked", asked ? json_integer(asked) : json_string("auto"));
	json_object_set_new(o, "resolved", json_integer(resolved ? resolved : 1));
	json_object_set_new(o, "actual", json_integer(actual));
	return o;
}

/* One count of a result's record into its three; false when it has the
 * shape results had before the record: a number, the count run. */
static bool nic_count_read(const json_t *v, uint32_t *asked, uint32_t *resolved,
			   uint32_t *actual)
{
	if (!json_is_object(v)) {
		*asked = *resolved = *actual = (uint32_t)json_integer_value(v);
		return false;
	}
	*asked = (uint32_t)json_integer_value(json_object_get(v, "asked")); /* "auto": 0 */
	*resolved = (uint32_t)json_integer_value(json_object_get(v, "resolved"));
	*actual = (uint32_t)json_integer_value(json_object_get(v, "actual"));
	return true;
}

/* An old shape's count: its number in o under key when there is one. */
static void nic_old_count(const json_t *o, const char *key, uint32_t *v)
{
	const json_t *x = json_object_get(o, key);
	if (json_is_integer(x))
		*v = (uint32_t)json_integer_value(x);
}

int rxs_nic_record(const struct rxr_result *r, struct rx_dev_record *out)
{
	const json_t *nic = r->extra ? json_object_get(r->extra, "nic") : NULL;
	memset(out, 0, sizeof(*out));
	if (!json_is_object(nic) || !json_object_get(nic, "dma_writers"))
		return -ENOENT;
	bool nt = nic_count_read(json_object_get(nic, "nic_threads"), &out->asked.threads,
				 &out->resolved.threads, &out->actual.threads);
	bool nw = nic_count_read(json_object_get(nic, "dma_writers"), &out->asked.writers,
				 &out->resolved.writers, &out->actual.writers);
	/* Before the record, the config held the knobs (0 = auto; a device
	 * option was not seen), the placement the resolved counts, and later
	 * dma_writers_auto said whether any writer count was asked. */
	const json_t *cfg = r->config, *pl = json_object_get(cfg, "placement");
	if (!nt) {
		nic_old_count(cfg, "nic_threads", &out->asked.threads);
		nic_old_count(pl, "nic_threads", &out->resolved.threads);
	}
	if (!nw) {
		const json_t *autow = json_object_get(nic, "dma_writers_auto");
		uint32_t knob = out->asked.writers;
		nic_old_count(cfg, "dma_writers", &knob);
		/* auto false with the knob auto: the device's writers= asked */
		if (json_is_true(autow))
			out->asked.writers = 0;
		else
			out->asked.writers = knob ? knob : autow ? out->actual.writers : 0;
		nic_old_count(pl, "dma_writers", &out->resolved.writers);
	}
	return 0;
}

int rxs_nic_result_add(const struct rxs_nic *n, struct rxr_result *r)
{
	struct rxs_counters tot;
	struct rxs_stats st;
	for (uint32_t i = 0; i < n->nthreads; i++) {
		int rc = rxr_result_add_probe(r, n->t[i].probe);
		if (rc < 0)
			return rc;
	}
	int vrc = rxs_nic_validity_add(n, r->validity);
	if (vrc < 0)
		return vrc;
	rxs_nic_counters(n, UINT32_MAX, &tot);
	rxs_nic_stats(n, &st);
	if (!r->extra && !(r->extra = json_object()))
		return -ENOMEM;
	json_t *o = json_object();
	json_t *qs = json_array();
	json_t *ts = nic_threads_json(n);
	if (!o || !qs || !ts) {
		json_decref(o);
		json_decref(qs);
		json_decref(ts);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < n->p.queues; i++) {
		struct rxs_counters c;
		rxs_nic_counters(n, i, &c);
		json_array_append_new(qs, nic_counters_json(&c));
	}
	json_object_set_new(o, "target_pps", json_real(st.target_pps));
	json_object_set_new(o, "achieved_mpps", json_real(st.achieved_pps / 1e6));
	json_object_set_new(o, "seconds", json_real(st.seconds));
	json_object_set_new(o, "busy_cycles_per_packet", json_real(st.busy_cycles_per_pkt));
	json_object_set_new(o, "generator_limited", json_boolean(st.generator_limited));
	json_object_set_new(o, "dma", json_string(rx_dma_name(n->p.dma)));
	json_object_set_new(o, "payload", json_string(rx_payload_name(n->p.payload)));
	json_object_set_new(o, "flows", json_integer(n->nflows));
	json_object_set_new(o, "sges", json_integer(n->p.sges));
	json_object_set_new(o, "cq_depth", json_integer(n->cq_depth));
	json_object_set_new(o, "core", json_integer(n->p.core));
	/* asked, resolved and run, recorded here only (rxs_nic_record) */
	json_object_set_new(o, "nic_threads", nic_count_json(n->p.asked.threads, n->p.threads,
							      n->groups));
	json_object_set_new(o, "dma_writers", nic_count_json(n->p.asked.writers, n->p.writers,
							      n->writers));
	/* the arrival pattern (simnic.h "Arrivals"), the same for every
	 * writer count */
	json_object_set_new(o, "train", json_integer(n->train));
	json_object_set_new(o, "line_gbps", json_real(n->p.line_gbps > 0 ? n->p.line_gbps
								     : NIC_LINE_GBPS_DEFAULT));
	json_object_set_new(o, "line_mpps", json_real(n->line_pps / 1e6));
	json_object_set_new(o, "writer_threads", json_integer(n->nthreads));
	json_object_set_new(o, "cqe_comp", json_boolean(n->p.cqe_comp));
	uint64_t lim = nic_late_limit(n);
	json_object_set_new(o, "late_limit_us",
			    lim == UINT64_MAX ? json_null() : json_real(nic_ticks_us(lim)));
	if (n->p.fault_stall_train)
		json_object_set_new(o, "fault", json_string("writer_stall"));
	if (n->gpu_mrs)
		json_object_set_new(o, "gpu_dma",
				    json_string(n->p.gpu_dma_launch ? "launch" : "resident"));
	if (n->p.fault_publish_early)
		json_object_set_new(o, "fault", json_string("publish_before_landing"));
	json_object_set_new(o, "threads", ts);
	json_object_set_new(o, "totals", nic_counters_json(&tot));
	json_object_set_new(o, "queues", qs);
	json_object_set_new(r->extra, "nic", o);
	r->c.offered = tot.offered;
	r->c.out_of_buffer = tot.out_of_buffer;
	return 0;
}
