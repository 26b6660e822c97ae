/* SPDX-License-Identifier: MIT */
/*
 * Backend "sim": real DPDK mempools and mbufs behind the software NIC's
 * mlx5-format rings, received with a model of the mlx5 PMD's scalar or
 * vector routine (sim_scalar.c, sim_vector.c). Setup mirrors the PMD's
 * queue start: pools registered as memory regions (one per memory chunk,
 * as mlx5 registers mempools), every WQE filled from the pools, one
 * doorbell.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_lcore.h>

#include "sim_int.h"
#include "rxray/util.h"

struct sim_priv {
	struct rxs_nic *nic;
	struct rxd_mr_table mrs;
	uint32_t nmrs;       /* MRs registered with the NIC */
	uint32_t mr_shared_pools; /* pools on an earlier pool's MR (one hugepage) */
	uint32_t mr_overlaps; /* pairs of MRs that cover common bytes */
	struct rxd_simq *sq; /* nq entries */
	struct rxs_params prm;
	/* --payload-mem gpu: each queue's payload buffers (cudaMalloc) */
	void **gpu_mem;
	size_t *gpu_len;
};

static int sim_caps(const struct rx_config *c, struct rx_caps *caps, char *err, size_t errlen)
{
	(void)c;
	(void)err;
	(void)errlen;
	rxs_caps(caps);
	/* mlx5 counts an RQ's descriptors in segments: a ring of N with two
	 * segments per packet is N/2 WQEs, as the ethdev backend's queue
	 * gets; the NIC's checks and its ring follow it (rxs_ring_wqes) */
	caps->rq_segments = true;
	return 0;
}

static int sim_validate(const struct rx_config *c, const struct rx_caps *caps, char *err,
			size_t errlen)
{
	/* the device string's options and the NIC's thread counts, on the
	 * ring it will get, are the NIC's own check (caps->dev) */
	if (c->discipline == RX_DISC_VECTOR && c->mode == RX_MODE_HDS) {
		snprintf(err, errlen,
			 "discipline: vector needs a single segment per WQE; buffer "
			 "split (--mode hds) forces scalar, as in the mlx5 PMD");
		return -EINVAL;
	}
	if (c->discipline != RX_DISC_SCALAR && c->mode == RX_MODE_SINGLE && c->burst < 4) {
		snprintf(err, errlen,
			 "burst: the vector routine takes completions four at a time; "
			 "use --burst >= 4 or --discipline scalar");
		return -EINVAL;
	}
	if (c->payload_mem == RX_MEM_GPU && !caps->gpu_mem) {
		snprintf(err, errlen,
			 "payload-mem: gpu needs a build with CUDA (the software NIC copies "
			 "payloads into GPU memory with a kernel)");
		return -EINVAL;
	}
	if (c->burst > RXD_MAX_BURST) {
		snprintf(err, errlen, "burst: at most %u", RXD_MAX_BURST);
		return -EINVAL;
	}
	if (c->mode == RX_MODE_HDS && c->ring < 4) {
		/* mlx5 counts descriptors in segments: two per WQE with split */
		snprintf(err, errlen,
			 "ring: %u descriptors hold fewer than two WQEs of two segments", c->ring);
		return -EINVAL;
	}
	if (c->mode == RX_MODE_HDS && c->split < RXS_HDR_LEN) {
		snprintf(err, errlen,
			 "split: the software NIC's header is %u bytes; --split must "
			 "be at least that",
			 RXS_HDR_LEN);
		return -EINVAL;
	}
	return 0;
}

/* ------------------------------------------------------------------ MRs */

#define SIM_MAX_CHUNKS 512
/* sim_start waits this long at most for the RX loops to poll */
#define SIM_RX_START_S 10.0

struct mr_ctx {
	struct rxd_mr_chunk r[SIM_MAX_CHUNKS];
	uint32_t n;
	int rc;
};

static void sim_mr_chunk(struct rte_mempool *mp, void *arg, struct rte_mempool_memhdr *mh,
			 unsigned idx)
{
	struct mr_ctx *x = arg;
	(void)mp;
	(void)idx;
	if (x->n == SIM_MAX_CHUNKS) {
		x->rc = -ENOSPC;
		return;
	}
	x->r[x->n++] = (struct rxd_mr_chunk){(uintptr_t)mh->addr, (uintptr_t)mh->addr + mh->len};
}

/* Register the planned MRs with the NIC and in the queue's MR table. */
static int sim_mr_add(struct sim_priv *sp, uintptr_t a, uintptr_t b)
{
	uint32_t lkey;
	int rc = rxs_mr_reg(sp->nic, (void *)a, b - a, &lkey);
	if (!rc)
		rc = rxd_mr_table_add(&sp->mrs, a, b, lkey);
	if (!rc)
		sp->nmrs++;
	return rc;
}

/*
 * Register every pool's memory the way the mlx5 PMD registers mempools
 * (rxd_mr_plan says how): pools in the order the queues' segments take
 * them. With RXRAY_SIM_LEGACY=mrsplit: one MR per chunk as it is.
 */
static int sim_mr_register(struct rxd_run *run, struct sim_priv *sp, char *err, size_t errlen)
{
	struct mr_ctx *x = calloc(1, sizeof(*x));
	struct rxd_mr_plan *plan = calloc(1, sizeof(*plan));
	struct rxd_mr_pool_mem pm[RXD_MR_POOL_MAX];
	uint32_t np = 0;
	int rc = x && plan ? 0 : -ENOMEM;
	bool legacy = rxs_sim_legacy("mrsplit");

	for (uint32_t i = 0; i < run->nq && !rc; i++)
		for (uint32_t g = 0; g < sp->sq[i].sges && !rc; g++) {
			uint32_t first = x->n;
			rte_mempool_mem_iter(sp->sq[i].mp[g], sim_mr_chunk, x);
			rc = x->rc;
			if (!rc && np == RXD_MR_POOL_MAX)
				rc = -E2BIG;
			if (rc || x->n == first)
				continue;
			uintptr_t low = x->r[first].start;
			for (uint32_t k = first; k < x->n; k++)
				if (x->r[k].start < low)
					low = x->r[k].start;
			const struct rte_memseg_list *msl = rte_mem_virt2memseg_list((void *)low);
			pm[np++] = (struct rxd_mr_pool_mem){.chunk = &x->r[first],
							    .n = x->n - first,
							    .seg_page = msl ? msl->page_sz : 0};
		}
	if (!rc && legacy) {
		for (uint32_t k = 0; k < x->n && !rc; k++)
			rc = sim_mr_add(sp, x->r[k].start, x->r[k].end);
	} else if (!rc) {
		rc = rxd_mr_plan(pm, np, (size_t)sysconf(_SC_PAGESIZE), plan);
		for (uint32_t m = 0; m < plan->n && !rc; m++)
			rc = sim_mr_add(sp, plan->mr[m].start, plan->mr[m].end);
		/* pools that reuse an earlier pool's MR (one hugepage shared) */
		for (uint32_t p = 0; p < np && !rc; p++)
			for (uint32_t q = 0; q < p; q++)
				if (plan->pool_nmr[p] == 1 && plan->pool_nmr[q] == 1 &&
				    plan->pool_mr[p][0] == plan->pool_mr[q][0]) {
					sp->mr_shared_pools++;
					break;
				}
	}
	/* MRs over the same bytes (a pool's hugepage-wide MR and another
	 * pool's range in that page): either lkey is valid there */
	for (uint32_t a = 0; !rc && a < sp->mrs.n; a++)
		for (uint32_t b = a + 1; b < sp->mrs.n; b++)
			if (sp->mrs.mr[b].start < sp->mrs.mr[a].end)
				sp->mr_overlaps++;
	/* GPU payload buffers: one MR each, in GPU memory */
	for (uint32_t i = 0; !rc && sp->gpu_mem && i < run->nq; i++) {
		uint32_t lkey;
		if (!sp->gpu_mem[i])
			continue;
		uintptr_t a = (uintptr_t)sp->gpu_mem[i];
		rc = rxs_mr_reg_gpu(sp->nic, sp->gpu_mem[i], sp->gpu_len[i], &lkey);
		if (!rc)
			rc = rxd_mr_table_add(&sp->mrs, a, a + sp->gpu_len[i], lkey);
		if (!rc)
			sp->nmrs++;
	}
	free(plan);
	free(x);
	if (rc)
		snprintf(err, errlen, "buffers: cannot register pool memory with the NIC: %s",
			 strerror(-rc));
	return rc;
}

/* The queue's ring view and pools (before any MR is registered). */
static int sim_queue_pools(struct rxd_run *run, struct sim_priv *sp, uint32_t i, char *err,
			   size_t errlen)
{
	const struct rx_config *c = run->c;
	struct rxd_simq *s = &sp->sq[i];
	char name[RTE_MEMPOOL_NAMESIZE];
	int rc = rxs_nic_ring(sp->nic, i, &s->ring);
	if (rc) {
		snprintf(err, errlen, "queues: no ring %u on the software NIC", i);
		return rc;
	}
	s->wqe_mask = s->ring.wqe_cnt - 1;
	s->cqe_mask = s->ring.cqe_cnt - 1;
	/* what the queue holds before the NIC drops: its WQEs (a packet
	 * each), or its CQ where that is shallower (sim:cq=N) */
	uint32_t holds = s->ring.cqe_cnt < s->ring.wqe_cnt ? s->ring.cqe_cnt : s->ring.wqe_cnt;
	if (!run->ring_pkts || holds < run->ring_pkts)
		run->ring_pkts = holds;
	s->sges = c->mode == RX_MODE_HDS ? 2 : 1;
	if (s->ring.sges != s->sges) {
		snprintf(err, errlen, "device: the software NIC made %u SGEs per WQE, expected %u",
			 s->ring.sges, s->sges);
		return -EINVAL;
	}
	s->port = (uint16_t)i;
	if (s->sges == 1) {
		uint32_t room = rxd_mbuf_room(c->frame);
		s->seg_len[0] = room - RTE_PKTMBUF_HEADROOM;
		snprintf(name, sizeof(name), "rxd%u_s%u", run->run_id, i);
		if (c->payload_mem == RX_MEM_GPU)
			/* single-segment GPUDirect: whole frames in GPU memory */
			s->mp[0] = rxd_gpu_pool_create_sim(name, run->pool_buffers,
							   c->mempool_cache, room,
							   &sp->gpu_mem[i], &sp->gpu_len[i], err,
							   errlen);
		else
			s->mp[0] = rxd_pool_create(name, run->pool_buffers, c->mempool_cache,
						   room, err, errlen);
		if (!s->mp[0])
			return -ENOMEM;
	} else {
		/* segment 0: exactly --split bytes (rxseg length); segment 1:
		 * length 0 = the payload pool's whole buffer */
		uint32_t hroom = rxd_mbuf_hdr_room(c->split);
		uint32_t proom = rxd_mbuf_room(c->frame > c->split ? c->frame - c->split : 64);
		s->seg_len[0] = c->split;
		s->seg_len[1] = proom - RTE_PKTMBUF_HEADROOM;
		snprintf(name, sizeof(name), "rxd%u_sh%u", run->run_id, i);
		s->mp[0] =
		    rxd_pool_create(name, run->pool_buffers, c->mempool_cache, hroom, err, errlen);
		snprintf(name, sizeof(name), "rxd%u_sp%u", run->run_id, i);
		if (!s->mp[0])
			s->mp[1] = NULL;
		else if (c->payload_mem == RX_MEM_GPU)
			/* GPUDirect: payload buffers in GPU memory, the NIC's DMA
			 * engine writes them (rxs_mr_reg_gpu) */
			s->mp[1] = rxd_gpu_pool_create_sim(name, run->pool_buffers,
							   c->mempool_cache, proom,
							   &sp->gpu_mem[i], &sp->gpu_len[i], err,
							   errlen);
		else
			s->mp[1] = rxd_pool_create(name, run->pool_buffers, c->mempool_cache,
						   proom, err, errlen);
		if (!s->mp[0] || !s->mp[1])
			return -ENOMEM;
	}
	return 0;
}

/* Fill the queue's ring like the PMD's queue start and pick its routine. */
static int sim_queue_fill(struct rxd_run *run, struct sim_priv *sp, uint32_t i, char *err,
			  size_t errlen)
{
	const struct rx_config *c = run->c;
	struct rxd_queue *q = &run->q[i];
	struct rxd_simq *s = &sp->sq[i];
	const char *grp = getenv("RXRAY_SIM_SCALAR_GROUP");

	rxd_mr_cache_init(&s->mrc, &sp->mrs);
	/* the PMD rewrites lkeys when its per-queue B-tree holds more than
	 * its sentinel: true as soon as one region is known */
	s->lkey_per_seg = sp->nmrs + 1 > 1;
	/* the PMD fills hash.rss when RSS spreads over several queues */
	s->rss_hash = run->nq > 1;
	s->group = grp ? (uint32_t)strtoul(grp, NULL, 10) : RXD_SCALAR_GROUP;
	s->legacy_nextnull = rxs_sim_legacy("nextnull");
	s->legacy_noprefetch = rxs_sim_legacy("noprefetch");
	s->legacy_wqecheck = rxs_sim_legacy("wqecheck");
	s->legacy_ptype = rxs_sim_legacy("ptype");
	s->carry = calloc(RXD_MAX_BURST, sizeof(*s->carry));
	if (!s->carry)
		return -ENOMEM;

	/* the software ring, filled like the PMD's queue start: one buffer
	 * per segment of every WQE, all posted, one doorbell */
	uint32_t nelts = s->ring.wqe_cnt * s->sges;
	s->elts = calloc(nelts, sizeof(*s->elts));
	if (!s->elts)
		return -ENOMEM;
	for (uint32_t w = 0; w < s->ring.wqe_cnt; w++) {
		for (uint32_t g = 0; g < s->sges; g++) {
			struct rte_mbuf *m = rte_mbuf_raw_alloc(s->mp[g]);
			if (!m) {
				snprintf(err, errlen,
					 "buffers: %u mbufs per pool cannot fill a ring of %u",
					 run->pool_buffers, s->ring.wqe_cnt);
				return -EINVAL;
			}
			m->data_off = RTE_PKTMBUF_HEADROOM;
			m->data_len = (uint16_t)s->seg_len[g];
			m->pkt_len = s->seg_len[g];
			m->port = s->port;
			s->elts[w * s->sges + g] = m;
			rxs_seg_set(rxs_wqe_seg(&s->ring, w, g), rte_pktmbuf_mtod(m, void *),
				    s->seg_len[g], rxd_mr_lookup(&s->mrc, (uintptr_t)m->buf_addr));
		}
	}
	/* setup lookups are not the datapath's */
	s->mrc.lookups = s->mrc.mru_hits = s->mrc.scan_hits = s->mrc.misses = 0;
	s->mrc.delay = c->op_delay_mr;
	s->rq_ci = s->ring.wqe_cnt;
	s->rq_pi = 0;
	s->cq_ci = 0;
	rxs_rq_doorbell(&s->ring, s->rq_ci);

	q->be = s;
	q->segs = s->sges;
	q->mp[0] = s->mp[0];
	q->mp[1] = s->mp[1];
	q->frame = c->frame;
	/* headers in GPU memory (single segment, payload-mem gpu) are the
	 * GPU's to read: the app counts lengths, the kernel the sequence */
	q->check_tag = !(c->payload_mem == RX_MEM_GPU && s->sges == 1);
	if (run->disc == RX_DISC_VECTOR) {
		if (s->ring.cqe_cnt != s->ring.wqe_cnt) {
			snprintf(err, errlen,
				 "device: the vector routine needs a CQ as deep as the "
				 "ring (cq=%u, ring=%u)",
				 s->ring.cqe_cnt, s->ring.wqe_cnt);
			return -EINVAL;
		}
		s->repl_thresh = rxd_sim_vector_thresh(s->ring.wqe_cnt);
		q->burst_fn = rxd_sim_burst_vector;
	} else {
		q->burst_fn = rxd_sim_burst_scalar;
	}
	return rxd_queue_workers_init(run, q, err, errlen);
}

static int sim_open(struct rxd_run *run, char *err, size_t errlen)
{
	const struct rx_config *c = run->c;
	struct sim_priv *sp = calloc(1, sizeof(*sp));
	int rc;
	if (!sp)
		return -ENOMEM;
	rxd_mpops_set_delay(c->op_delay_mempool); /* --op-delay; 0 = off */
	run->be_priv = sp;
	sp->sq = aligned_alloc(64, run->nq * sizeof(*sp->sq));
	if (!sp->sq)
		return -ENOMEM;
	memset(sp->sq, 0, run->nq * sizeof(*sp->sq));
	if (c->payload_mem == RX_MEM_GPU) {
		sp->gpu_mem = calloc(run->nq, sizeof(*sp->gpu_mem));
		sp->gpu_len = calloc(run->nq, sizeof(*sp->gpu_len));
		if (!sp->gpu_mem || !sp->gpu_len)
			return -ENOMEM;
	}
	struct rx_caps caps;
	sim_caps(c, &caps, err, errlen);
	rc = rxs_params_of_run(c, &caps, &run->pl, &sp->prm, err, errlen);
	if (rc)
		return rc;
	sp->prm.stop = run->stop;
	sp->prm.seconds = run->nic_seconds; /* the warm-up first, when there is one */
	/* the PMD asks for compressed CQEs unless told not to */
	sp->prm.cqe_comp = c->cqe_comp != RX_CQE_COMP_OFF;
	rxd_ptype_table_init();
	rc = rxs_nic_open(&sp->prm, &sp->nic, err, errlen);
	if (rc < 0)
		return rc;
	for (uint32_t i = 0; i < run->nq; i++) {
		rc = sim_queue_pools(run, sp, i, err, errlen);
		if (rc)
			return rc;
	}
	rc = sim_mr_register(run, sp, err, errlen);
	for (uint32_t i = 0; !rc && i < run->nq; i++)
		rc = sim_queue_fill(run, sp, i, err, errlen);
	return rc;
}

static int sim_start(struct rxd_run *run, char *err, size_t errlen)
{
	struct sim_priv *sp = run->be_priv;
	/* the software NIC's queues can be polled before it runs: every RX
	 * loop polls (it naps until `live`) before the first arrival, so
	 * the ring is not charged with the loops' wake-up (bounded) */
	atomic_store_explicit(&run->live, 1, memory_order_release);
	double t0 = rxu_mono_seconds();
	for (uint32_t i = 0; i < run->nq; i++)
		while (!atomic_load_explicit(&run->q[i].rx_started, memory_order_acquire) &&
		       !atomic_load_explicit(&run->q[i].rx_done, memory_order_acquire)) {
			if (rxu_mono_seconds() - t0 > SIM_RX_START_S) {
				snprintf(err, errlen,
					 "device: queue %u's RX loop did not start polling within "
					 "%.0f s",
					 i, SIM_RX_START_S);
				return -ETIMEDOUT;
			}
			sched_yield();
		}
	int rc = rxs_nic_start(sp->nic);
	if (rc)
		snprintf(err, errlen, "device: cannot start the software NIC: %s", strerror(-rc));
	return rc;
}

/* After the warm-up: the queues' counters start again, their rings, MR
 * caches and compressed sessions carry on; the NIC runs `seconds` more. */
static int sim_rearm(struct rxd_run *run, double seconds, char *err, size_t errlen)
{
	struct sim_priv *sp = run->be_priv;
	/* every packet offered so far was delivered or dropped (the warm-up
	 * drained): each queue's sequence check expects the next one */
	for (uint32_t i = 0; i < run->nq; i++) {
		struct rxs_counters k;
		rxs_nic_counters(sp->nic, i, &k);
		run->q[i].appst.next_seq += k.offered;
		run->q[i].appst.seq_started = true;
	}
	int rc = rxs_nic_rearm(sp->nic, seconds);
	if (rc)
		return rxu_errf(err, errlen, rc, "device: cannot rearm the software NIC: %s",
				strerror(-rc));
	for (uint32_t i = 0; i < run->nq; i++) {
		struct rxd_simq *s = &sp->sq[i];
		s->allocs = s->nombuf_pkts = s->nombuf_events = s->err_cqes = 0;
		s->wqe_counter_faults = s->wqe_checks = s->sessions = s->mini_cqes = 0;
		s->carried = s->spec_allocs = s->idle_allocs = s->doorbells = 0;
		s->replenish_calls = 0;
		s->mrc.lookups = s->mrc.mru_hits = s->mrc.scan_hits = s->mrc.misses = 0;
	}
	return 0;
}

static bool sim_quiet(struct rxd_run *run, struct rxd_queue *q)
{
	struct sim_priv *sp = run->be_priv;
	(void)q;
	/* quit > 1: the main thread's hang guard stops the wire; the queue
	 * still drains what the NIC delivered */
	if (atomic_load_explicit(&run->quit, memory_order_relaxed) > 1)
		rxs_nic_stop(sp->nic);
	return rxs_nic_done(sp->nic);
}

static bool sim_pending(struct rxd_run *run, struct rxd_queue *q)
{
	(void)run;
	const struct rxd_simq *s = q->be;
	/* completions already read but not delivered count too */
	return s->carry_n || s->decompressed || s->zip_n || rxs_cq_peek(&s->ring, s->cq_ci) != NULL;
}

static json_t *sim_queue_json(const struct rxd_simq *s)
{
	json_t *o = json_pack(
	    "{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:{s:I,s:I,s:I,s:I}}", "allocs",
	    (json_int_t)s->allocs, "nombuf_pkts", (json_int_t)s->nombuf_pkts, "rx_nombuf",
	    (json_int_t)s->nombuf_events, "err_cqes", (json_int_t)s->err_cqes, "wqe_counter_faults",
	    (json_int_t)s->wqe_counter_faults, "lookahead_allocs", (json_int_t)s->spec_allocs,
	    "idle_allocs", (json_int_t)s->idle_allocs, "doorbells", (json_int_t)s->doorbells,
	    "bulk_gets", (json_int_t)s->replenish_calls, "mr_cache", "lookups",
	    (json_int_t)s->mrc.lookups, "mru_hits", (json_int_t)s->mrc.mru_hits, "scan_hits",
	    (json_int_t)s->mrc.scan_hits, "misses", (json_int_t)s->mrc.misses);
	if (o) {
		json_object_set_new(o, "wqe_checks", json_integer((json_int_t)s->wqe_checks));
		json_object_set_new(o, "cqe_sessions", json_integer((json_int_t)s->sessions));
		json_object_set_new(o, "mini_cqes", json_integer((json_int_t)s->mini_cqes));
		json_object_set_new(o, "carried", json_integer((json_int_t)s->carried));
	}
	return o;
}

static int sim_collect(struct rxd_run *run, struct rxr_result *r, json_t *extra)
{
	struct sim_priv *sp = run->be_priv;
	struct rxs_stats st;
	uint64_t allocs = 0, nombuf = 0, events = 0, lookups = 0, mru = 0, scan = 0, miss = 0;
	json_t *qs = json_array();
	int rc = rxs_nic_join(sp->nic);
	if (rc)
		fprintf(stderr, "rxray run: software NIC thread: %s\n", strerror(-rc));
	rc = rxs_nic_result_add(sp->nic, r);
	if (rc || !qs) {
		json_decref(qs);
		return rc ? rc : -ENOMEM;
	}
	rxs_nic_stats(sp->nic, &st);
	run->seconds = st.seconds;
	for (uint32_t i = 0; i < run->nq; i++) {
		const struct rxd_simq *s = &sp->sq[i];
		allocs += s->allocs;
		nombuf += s->nombuf_pkts;
		events += s->nombuf_events;
		lookups += s->mrc.lookups;
		mru += s->mrc.mru_hits;
		scan += s->mrc.scan_hits;
		miss += s->mrc.misses;
		r->c.errors += s->err_cqes + s->wqe_counter_faults;
		json_array_append_new(qs, sim_queue_json(s));
	}
	r->c.nombuf = nombuf;
	json_object_set_new(extra, "cqe_comp", json_boolean(sp->prm.cqe_comp));
	json_object_set_new(extra, "mrs", json_integer(sp->nmrs));
	json_object_set_new(extra, "mr_shared_pools", json_integer(sp->mr_shared_pools));
	json_object_set_new(extra, "mr_overlaps", json_integer(sp->mr_overlaps));
	json_object_set_new(extra, "nic_wqes", json_integer(sp->prm.ring));
	json_object_set_new(extra, "sim_queues", qs);
	json_object_set_new(extra, "rx_nombuf", json_integer((json_int_t)events));
	json_object_set_new(extra, "allocs", json_integer((json_int_t)allocs));
	json_object_set_new(extra, "mr_cache",
			    json_pack("{s:I,s:I,s:I,s:I,s:f}", "lookups", (json_int_t)lookups,
				      "mru_hits", (json_int_t)mru, "scan_hits", (json_int_t)scan,
				      "misses", (json_int_t)miss, "mru_hit_ratio",
				      lookups ? (double)mru / (double)lookups : 0.0));
	return 0;
}

static void sim_close(struct rxd_run *run)
{
	rxd_mpops_set_delay(0);
	struct sim_priv *sp = run->be_priv;
	if (!sp)
		return;
	rxs_nic_free(sp->nic); /* stops and joins when still running */
	for (uint32_t i = 0; i < run->nq && sp->sq; i++) {
		struct rxd_simq *s = &sp->sq[i];
		if (run->q)
			rxd_queue_workers_fini(&run->q[i]);
		/* buffers in the ring go back before the pools go away */
		if (s->elts) {
			uint32_t lo = run->disc == RX_DISC_VECTOR ? s->rq_pi : 0;
			uint32_t hi =
			    run->disc == RX_DISC_VECTOR ? s->rq_ci : s->ring.wqe_cnt * s->sges;
			for (uint32_t k = lo; k != hi; k++) {
				uint32_t idx = run->disc == RX_DISC_VECTOR ? (k & s->wqe_mask) : k;
				if (s->elts[idx]) /* NULL: setup stopped half way */
					rte_mbuf_raw_free(s->elts[idx]);
			}
		}
		free(s->elts);
		free(s->carry);
		rte_mempool_free(s->mp[0]);
		rte_mempool_free(s->mp[1]);
		if (sp->gpu_mem && sp->gpu_mem[i])
			rxd_gpu_mem_free(sp->gpu_mem[i]);
	}
	free(sp->gpu_mem);
	free(sp->gpu_len);
	free(sp->sq);
	free(sp);
	run->be_priv = NULL;
}

const struct rxd_backend_ops rxd_backend_sim = {
    .name = "sim",
    .soft_rings = true,
    .caps = sim_caps,
    .validate = sim_validate,
    .open = sim_open,
    .start = sim_start,
    .quiet = sim_quiet,
    .pending = sim_pending,
    .collect = sim_collect,
    .rearm = sim_rearm,
    .close = sim_close,
};
