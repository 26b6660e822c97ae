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
#include <stdio.h>
#include <string.h>

#include <rte_lcore.h>

#include "sim_int.h"

struct sim_priv {
	struct rxs_nic *nic;
	struct rxd_mr_table mrs;
	struct rxd_simq *sq; /* nq entries */
	struct rxs_params prm;
};

static int sim_caps(const struct rx_config *c, struct rx_caps *caps, char *err, size_t errlen)
{
	(void)c;
	(void)err;
	(void)errlen;
	rxs_caps(caps);
	return 0;
}

static int sim_validate(const struct rx_config *c, const struct rx_caps *caps, char *err,
			size_t errlen)
{
	(void)caps;
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
	if (c->payload_mem == RX_MEM_GPU) {
		snprintf(err, errlen,
			 "payload-mem: the software NIC writes with the CPU; gpu "
			 "payload needs --device dpdk:<a GPU-capable port>");
		return -EINVAL;
	}
	if (c->burst > RXD_MAX_BURST) {
		snprintf(err, errlen, "burst: at most %u", RXD_MAX_BURST);
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

struct mr_ctx {
	struct sim_priv *sp;
	int rc;
	unsigned regs;
};

static void sim_mr_cb(struct rte_mempool *mp, void *arg, struct rte_mempool_memhdr *mh,
		      unsigned idx)
{
	struct mr_ctx *x = arg;
	uint32_t lkey;
	(void)mp;
	(void)idx;
	if (x->rc)
		return;
	x->rc = rxs_mr_reg(x->sp->nic, mh->addr, mh->len, &lkey);
	if (!x->rc)
		x->rc = rxd_mr_table_add(&x->sp->mrs, (uintptr_t)mh->addr,
					 (uintptr_t)mh->addr + mh->len, lkey);
	x->regs++;
}

static uint32_t room_for(uint32_t bytes)
{
	return RTE_PKTMBUF_HEADROOM + (bytes > 2048 ? RTE_ALIGN_CEIL(bytes, 64) : 2048);
}

static int sim_queue_open(struct rxd_run *run, struct sim_priv *sp, uint32_t i, char *err,
			  size_t errlen)
{
	const struct rx_config *c = run->c;
	struct rxd_queue *q = &run->q[i];
	struct rxd_simq *s = &sp->sq[i];
	char name[RTE_MEMPOOL_NAMESIZE];
	struct mr_ctx x = {.sp = sp};
	int rc = rxs_nic_ring(sp->nic, i, &s->ring);
	if (rc) {
		snprintf(err, errlen, "queues: no ring %u on the software NIC", i);
		return rc;
	}
	s->wqe_mask = s->ring.wqe_cnt - 1;
	s->cqe_mask = s->ring.cqe_cnt - 1;
	s->sges = c->mode == RX_MODE_HDS ? 2 : 1;
	if (s->ring.sges != s->sges) {
		snprintf(err, errlen, "device: the software NIC made %u SGEs per WQE, expected %u",
			 s->ring.sges, s->sges);
		return -EINVAL;
	}
	s->port = (uint16_t)i;
	if (s->sges == 1) {
		uint32_t room = room_for(c->frame);
		s->seg_len[0] = room - RTE_PKTMBUF_HEADROOM;
		snprintf(name, sizeof(name), "rxd%u_s%u", run->run_id, i);
		s->mp[0] =
		    rxd_pool_create(name, run->pool_buffers, c->mempool_cache, room, err, errlen);
		if (!s->mp[0])
			return -ENOMEM;
	} else {
		/* segment 0: exactly --split bytes (rxseg length); segment 1:
		 * length 0 = the payload pool's whole buffer */
		uint32_t hroom = RTE_PKTMBUF_HEADROOM + RTE_ALIGN_CEIL(c->split, 64);
		uint32_t proom = room_for(c->frame > c->split ? c->frame - c->split : 64);
		s->seg_len[0] = c->split;
		s->seg_len[1] = proom - RTE_PKTMBUF_HEADROOM;
		snprintf(name, sizeof(name), "rxd%u_sh%u", run->run_id, i);
		s->mp[0] =
		    rxd_pool_create(name, run->pool_buffers, c->mempool_cache, hroom, err, errlen);
		snprintf(name, sizeof(name), "rxd%u_sp%u", run->run_id, i);
		s->mp[1] = s->mp[0] ? rxd_pool_create(name, run->pool_buffers, c->mempool_cache,
						      proom, err, errlen)
				    : NULL;
		if (!s->mp[0] || !s->mp[1])
			return -ENOMEM;
	}
	for (uint32_t g = 0; g < s->sges; g++) {
		rte_mempool_mem_iter(s->mp[g], sim_mr_cb, &x);
		if (x.rc) {
			snprintf(err, errlen,
				 "buffers: cannot register pool memory with the NIC: %s",
				 strerror(-x.rc));
			return x.rc;
		}
	}
	rxd_mr_cache_init(&s->mrc, &sp->mrs);
	/* the PMD rewrites lkeys when its per-queue B-tree holds more than
	 * its sentinel: true as soon as one region is known */
	s->lkey_per_seg = x.regs + 1 > 1;

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
	q->check_tag = true;
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
	sp->sq = calloc(run->nq, sizeof(*sp->sq));
	if (!sp->sq)
		return -ENOMEM;
	rc = rxs_params_from_config(c, run->pl.nic_core, &sp->prm, err, errlen);
	if (rc)
		return rc;
	rxs_params_place(&sp->prm, &run->pl);
	sp->prm.stop = run->stop;
	sp->nic = rxs_nic_new(&sp->prm, err, errlen);
	if (!sp->nic)
		return -errno;
	for (uint32_t i = 0; i < run->nq; i++) {
		rc = sim_queue_open(run, sp, i, err, errlen);
		if (rc)
			return rc;
	}
	return 0;
}

static int sim_start(struct rxd_run *run, char *err, size_t errlen)
{
	struct sim_priv *sp = run->be_priv;
	int rc = rxs_nic_start(sp->nic);
	if (rc)
		snprintf(err, errlen, "device: cannot start the software NIC: %s", strerror(-rc));
	return rc;
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
	return rxs_cq_peek(&s->ring, s->cq_ci) != NULL;
}

static json_t *sim_queue_json(const struct rxd_simq *s)
{
	return json_pack(
	    "{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:{s:I,s:I,s:I,s:I}}", "allocs",
	    (json_int_t)s->allocs, "nombuf_pkts", (json_int_t)s->nombuf_pkts, "rx_nombuf",
	    (json_int_t)s->nombuf_events, "err_cqes", (json_int_t)s->err_cqes, "wqe_counter_faults",
	    (json_int_t)s->wqe_counter_faults, "lookahead_allocs", (json_int_t)s->spec_allocs,
	    "idle_allocs", (json_int_t)s->idle_allocs, "doorbells", (json_int_t)s->doorbells,
	    "bulk_gets", (json_int_t)s->replenish_calls, "mr_cache", "lookups",
	    (json_int_t)s->mrc.lookups, "mru_hits", (json_int_t)s->mrc.mru_hits, "scan_hits",
	    (json_int_t)s->mrc.scan_hits, "misses", (json_int_t)s->mrc.misses);
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
		rte_mempool_free(s->mp[0]);
		rte_mempool_free(s->mp[1]);
	}
	free(sp->sq);
	free(sp);
	run->be_priv = NULL;
}

const struct rxd_backend_ops rxd_backend_sim = {
    .name = "sim",
    .caps = sim_caps,
    .validate = sim_validate,
    .open = sim_open,
    .start = sim_start,
    .quiet = sim_quiet,
    .pending = sim_pending,
    .collect = sim_collect,
    .close = sim_close,
};
