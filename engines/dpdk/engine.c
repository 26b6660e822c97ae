/* SPDX-License-Identifier: MIT */
/*
 * The DPDK engine's ops table: pick the backend from the device string,
 * place threads, bring the EAL up, run the workers, and turn counters,
 * probes and mempool operation counts into a run result.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_lcore.h>
#include <rte_version.h>

#include "dpdk_int.h"

_Static_assert(RX_MEMPOOL_CACHE_MAX == RTE_MEMPOOL_CACHE_MAX_SIZE,
	       "rx_mempool_cache_fits states DPDK's cache limit");
#ifdef RXRAY_HAVE_GPU
#include "rxray/gpu.h"
#include "rxray/simnic.h"
#endif
#include "rxray/util.h"

static uint32_t engine_runs;

const struct rxd_backend_ops *rxd_backend_find(const char *device)
{
	if (!strcmp(device, "sim") || !strncmp(device, "sim:", 4))
		return &rxd_backend_sim;
	if (!strncmp(device, "dpdk:", 5))
		return &rxd_backend_ethdev;
	return NULL;
}

static const struct rxd_backend_ops *engine_backend(const struct rx_config *c, char *err,
						    size_t errlen)
{
	const struct rxd_backend_ops *be = rxd_backend_find(c->device);
	if (!be)
		snprintf(err, errlen,
			 "device: '%s' is not a DPDK engine device (use sim, sim:<opts> or "
			 "dpdk:<eal args>, e.g. dpdk:--vdev=net_null0)",
			 c->device);
	return be;
}

static uint32_t engine_hring(const struct rx_config *c)
{
	return c->hring ? c->hring : 32;
}

/* MiB the EAL needs for the run's pools (and rings), with headroom. */
static size_t engine_mem_mb(const struct rx_config *c)
{
	uint32_t q = c->queues ? c->queues : 1;
	/* the mbuf header, its data room and a cache line of object header */
	uint64_t per_mbuf = 128 + 64 + (uint64_t)rxd_mbuf_room(c->frame);
	uint64_t pools = (uint64_t)q * (c->mode == RX_MODE_HDS ? 2 : 1);
	uint64_t bytes = pools * rxd_pool_buffers(c, engine_hring(c)) * per_mbuf;
	bytes += (uint64_t)q * c->ring * 64 * 2;
	return (size_t)(bytes >> 20) + 128;
}

int rxd_eal_for_config(const struct rx_config *c, char *note, size_t notelen, char *err,
		       size_t errlen)
{
	const char *args = !strncmp(c->device, "dpdk:", 5) ? c->device + 5 : "";
	/* two lcores per queue (RX + EAL app), at least for 4 queues, so a
	 * later run in the same process with more queues can reuse the EAL */
	unsigned q = c->queues > 4 ? c->queues : 4;
	unsigned lcores = 1 + 2 * q;
	return rxd_eal_ensure(args, lcores, engine_mem_mb(c), note, notelen, err, errlen);
}

static int dpdk_caps(const struct rx_config *c, struct rx_caps *caps, char *err, size_t errlen)
{
	const struct rxd_backend_ops *be = engine_backend(c, err, errlen);
	if (!be)
		return -EINVAL;
	memset(caps, 0, sizeof(*caps));
	return be->caps(c, caps, err, errlen);
}

static int dpdk_validate(const struct rx_config *c, const struct rx_caps *caps, char *err,
			 size_t errlen)
{
	if (c->op_delay_repost || c->op_delay_dbrec || c->op_delay_hdr_read)
		return rxu_errf(err, errlen, -EINVAL,
			    "op-delay: %s is an operation of the verbs engine; the dpdk engine's "
			    "are mempool, mr (and hdr_write on the software NIC)",
			    c->op_delay_repost ? "repost" : c->op_delay_dbrec ? "dbrec" : "hdr_read");
	const struct rxd_backend_ops *be = engine_backend(c, err, errlen);
	if (!be)
		return -EINVAL;
	if (!rx_mempool_cache_fits(c->mempool_cache)) {
		snprintf(err, errlen, "mempool-cache: %u is above DPDK's %d", c->mempool_cache,
			 RX_MEMPOOL_CACHE_MAX);
		return -EINVAL;
	}
	if (c->batch > 65535 || c->batch < 1) {
		snprintf(err, errlen, "batch: %u out of range 1..65535", c->batch);
		return -EINVAL;
	}
	uint32_t segs = c->mode == RX_MODE_HDS ? 2 : 1;
	/* the RX lcore's and the app lcore's caches each keep up to a flush
	 * threshold of buffers out of the ring's reach */
	uint32_t floor = c->ring + c->batch +
			 (uint32_t)(2 * rx_mempool_cache_flushthresh(c->mempool_cache));
	if (c->buffers && c->buffers < floor) {
		snprintf(err, errlen,
			 "buffers: %u per pool cannot fill a ring of %u and a batch of %u with "
			 "caches of %u (need at least %u per pool, %u segment%s per packet)",
			 c->buffers, c->ring, c->batch, c->mempool_cache, floor, segs,
			 segs > 1 ? "s" : "");
		return -EINVAL;
	}
	return be->validate ? be->validate(c, caps, err, errlen) : 0;
}

/* The GPU consumer of each queue (--gpu-work): a kernel per app batch. */
static int engine_gpu(struct rxd_run *run, char *err, size_t errlen)
{
#ifdef RXRAY_HAVE_GPU
	const struct rx_config *c = run->c;
	for (uint32_t i = 0; i < run->nq; i++) {
		struct rxd_queue *q = &run->q[i];
		struct rxg_params gp = {
		    .work = c->gpu_work == RX_GPU_WORK_REORDER ? RXG_WORK_REORDER
							       : RXG_WORK_CHECKSUM,
		    .max_batch = c->batch,
		    .depth = RXD_GPU_DEPTH,
		    /* hds: the payload after the split; single: the whole
		     * frame, its header read by the kernel */
		    .payload_bytes = c->mode == RX_MODE_SINGLE ? c->frame
				     : c->frame > c->split ? c->frame - c->split
							   : 1,
		    .window = c->ring,
		    .device = 0,
		    .launch = (enum rxg_launch)c->gpu_launch,
		    .seq_at = RXS_SEQ_OFF,
		};
		q->gaddr = calloc(c->batch, sizeof(*q->gaddr));
		q->gseq = calloc(c->batch, sizeof(*q->gseq));
		if (!q->gaddr || !q->gseq)
			return rxu_errf(err, errlen, -ENOMEM, "gpu-work: out of memory");
		int rc = rxg_consumer_open(&gp, &q->gpu, err, errlen);
		if (rc)
			return rc;
	}
	return 0;
#else
	(void)run;
	return rxu_errf(err, errlen, -EINVAL,
			"gpu-work: this build has no CUDA (nvcc was not found)");
#endif
}

/* Add each queue's GPU consumer to the result (after draining it). */
static int engine_gpu_result(struct rxd_run *run, struct rxr_result *r)
{
#ifdef RXRAY_HAVE_GPU
	for (uint32_t i = 0; i < run->nq; i++) {
		struct rxd_queue *q = &run->q[i];
		if (!q->gpu)
			continue;
		rxd_gpu_drain(q);
		struct rxg_stats st;
		rxg_consumer_stats(q->gpu, &st);
		struct rx_gpu_tally g = {
		    rx_knob_value_name(rx_knob_find("gpu-work"), (int)run->c->gpu_work),
		    st.batches, st.packets, st.gaps, st.dups, st.checksum, st.kernel_ms,
		    st.max_batch_ms,
		    rx_knob_value_name(rx_knob_find("gpu-launch"), (int)run->c->gpu_launch)};
		int rc = rx_gpu_result_add(r, &g, i);
		if (rc)
			return rc;
	}
#else
	(void)run;
	(void)r;
#endif
	return 0;
}

/* The engine's queues, one per core queue (core.h struct rx_queue). */
static int engine_queues(struct rxd_run *run, struct rx_run *core)
{
	const struct rx_config *c = run->c;
	run->q = calloc(run->nq, sizeof(*run->q));
	if (!run->q)
		return -ENOMEM;
	for (uint32_t i = 0; i < run->nq; i++) {
		struct rxd_queue *q = &run->q[i];
		q->index = i;
		q->run = run;
		q->batch = c->batch;
		q->burst = c->burst;
		q->per_pool_free = c->free_mode == RX_FREE_PER_POOL;
		q->app = core->q[i].inline_app ? RX_APP_INLINE : run->pl.app;
		core->q[i].priv = q;
	}
	return 0;
}

static json_t *mp_json(const struct rxd_mpops_pool *t, double pkts)
{
	double d = pkts > 0 ? pkts : 1;
	return json_pack("{s:f,s:f,s:f,s:f,s:I,s:I,s:I,s:I,s:I}", "gets_per_pkt",
			 (double)t->deq_calls / d, "puts_per_pkt", (double)t->enq_calls / d,
			 "get_objs_per_pkt", (double)t->deq_objs / d, "put_objs_per_pkt",
			 (double)t->enq_objs / d, "get_calls", (json_int_t)t->deq_calls,
			 "put_calls", (json_int_t)t->enq_calls, "get_objs", (json_int_t)t->deq_objs,
			 "put_objs", (json_int_t)t->enq_objs, "get_fails", (json_int_t)t->deq_fail);
}

/* Counters, threads and the "dpdk" extras after the workers ended. */
static int engine_result(struct rxd_run *run, struct rxr_result *r, char *err, size_t errlen)
{
	const struct rx_config *c = run->c;
	struct rxd_mpops_counts rx_all, app_all, idle_all, both;
	struct rxd_mpops_pool trx, tapp, tall, tidle;
	uint64_t delivered = 0, seq_missing = 0, seq_dup = 0, tag_err = 0, len_err = 0;
	json_t *dx = json_object(), *mp = NULL, *pools = json_array();
	int rc = 0;

	if (!dx || !pools) {
		rc = -ENOMEM;
		goto out;
	}
	if (!r->extra && !(r->extra = json_object())) {
		rc = -ENOMEM;
		goto out;
	}
	memset(&rx_all, 0, sizeof(rx_all));
	memset(&app_all, 0, sizeof(app_all));
	memset(&idle_all, 0, sizeof(idle_all));
	rc = run->be->collect(run, r, dx);
	if (rc) {
		snprintf(err, errlen, "dpdk: collecting results: %s", strerror(-rc));
		goto out;
	}
	for (uint32_t i = 0; i < run->nq; i++) {
		struct rxd_queue *q = &run->q[i];
		r->c.received += q->appst.received;
		r->c.app_dropped += q->rx.app_dropped;
		delivered += q->rx.delivered;
		seq_missing += q->appst.seq_missing;
		seq_dup += q->appst.seq_dup;
		tag_err += q->appst.tag_errors;
		len_err += q->appst.len_errors;
		rxd_mpops_add(&rx_all, &q->rx_ops);
		rxd_mpops_add(&app_all, &q->app_ops);
		rxd_mpops_add(&idle_all, &q->rx_idle_ops);
		for (uint32_t g = 0; g < q->segs; g++) {
			int slot = rxd_mpops_pool_slot(q->mp[g]);
			if (slot < 0)
				continue;
			struct rxd_mpops_pool pc = rx_all.pool[slot];
			pc.deq_calls =
			    q->rx_ops.pool[slot].deq_calls + q->app_ops.pool[slot].deq_calls;
			pc.enq_calls =
			    q->rx_ops.pool[slot].enq_calls + q->app_ops.pool[slot].enq_calls;
			pc.deq_objs =
			    q->rx_ops.pool[slot].deq_objs + q->app_ops.pool[slot].deq_objs;
			pc.enq_objs =
			    q->rx_ops.pool[slot].enq_objs + q->app_ops.pool[slot].enq_objs;
			pc.deq_fail =
			    q->rx_ops.pool[slot].deq_fail + q->app_ops.pool[slot].deq_fail;
			json_t *pj = mp_json(&pc, (double)q->rx.delivered);
			json_object_set_new(pj, "queue", json_integer(i));
			json_object_set_new(
			    pj, "segment",
			    json_string(g ? "payload" : (q->segs > 1 ? "header" : "single")));
			json_object_set_new(pj, "name", json_string(q->mp[g]->name));
			/* the payload pool (or the only one) is where --payload-mem lands */
			bool payload = g == 1 || q->segs == 1;
			json_object_set_new(
			    pj, "memory",
			    json_string(payload ? rx_mem_kind_name(c->payload_mem) : "host"));
			json_array_append_new(pools, pj);
		}
	}
	r->c.errors += seq_dup + tag_err + len_err;
	both = rx_all;
	rxd_mpops_add(&both, &app_all);
	rxd_mpops_total(&rx_all, &trx);
	rxd_mpops_total(&app_all, &tapp);
	rxd_mpops_total(&both, &tall);
	rxd_mpops_total(&idle_all, &tidle);
	mp = mp_json(&tall, (double)delivered);
	if (!mp) {
		rc = -ENOMEM;
		goto out;
	}
	json_object_set_new(mp, "rx", mp_json(&trx, (double)delivered));
	/* the app's calls per packet it freed; the RX lcore's per packet it
	 * delivered (it also frees what the hand-off ring drops) */
	json_object_set_new(mp, "app", mp_json(&tapp, (double)r->c.received));
	/* empty polls' calls, per delivered packet, kept out of the totals */
	json_object_set_new(mp, "rx_idle", mp_json(&tidle, (double)delivered));
	json_object_set_new(mp, "pools", pools);
	pools = NULL;
	json_object_set_new(mp, "cache_size", json_integer(c->mempool_cache));
	json_object_set_new(mp, "driver", json_string(RXD_MPOPS_NAME));
	json_object_set_new(mp, "note",
			    json_string("calls that reached the shared ring "
					"(cache misses/flushes, or every call without a cache)"));
	json_object_set_new(dx, "mempool", mp);
	json_object_set_new(dx, "backend", json_string(run->be->name));
	json_object_set_new(
	    dx, "discipline",
	    json_string(!strcmp(run->be->name, "sim") ? rx_discipline_name(run->disc) : "pmd"));
	json_object_set_new(dx, "app",
			    json_string(run->pl.app == RX_APP_EAL      ? "eal"
					: run->pl.app == RX_APP_THREAD ? "non-eal"
								       : "same-core"));
	json_object_set_new(dx, "free",
			    json_string(c->free_mode == RX_FREE_PER_POOL ? "per-pool" : "mixed"));
	json_object_set_new(dx, "segments_per_pkt", json_integer(run->q[0].segs));
	json_object_set_new(dx, "buffers_per_pool", json_integer(run->pool_buffers));
	json_object_set_new(dx, "hring", json_integer(run->hring));
	json_object_set_new(dx, "delivered", json_integer((json_int_t)delivered));
	json_object_set_new(dx, "seq",
			    json_pack("{s:I,s:I,s:I,s:I}", "missing", (json_int_t)seq_missing,
				      "dup", (json_int_t)seq_dup, "tag_errors", (json_int_t)tag_err,
				      "len_errors", (json_int_t)len_err));
	json_t *allocs = json_object_get(dx, "allocs");
	if (allocs && delivered)
		json_object_set_new(
		    dx, "allocs_per_pkt",
		    json_real((double)json_integer_value(allocs) / (double)delivered));
	json_object_set_new(r->extra, "dpdk", dx);
	dx = NULL;
out:
	json_decref(dx);
	json_decref(pools);
	return rc;
}

static void engine_config_json(const struct rxd_run *run, struct rxr_result *r)
{
	json_object_set_new(r->config, "backend", json_string(run->be->name));
	json_object_set_new(
	    r->config, "discipline_resolved",
	    json_string(!strcmp(run->be->name, "sim") ? rx_discipline_name(run->disc) : "pmd"));
	json_object_set_new(r->config, "buffers_resolved", json_integer(run->pool_buffers));
	json_object_set_new(r->config, "hring_resolved", json_integer(run->hring));
	if (json_object_size(r->env) == 0)
		rxr_result_fill_env(r);
	json_object_set_new(r->env, "dpdk",
			    json_pack("{s:s,s:s,s:b,s:s}", "version", rte_version(), "eal_args",
				      rxd_eal_args(), "no_huge", run->no_huge, "note",
				      run->eal_note));
}

/* ------------------------------------------------------------- hooks */

static int dpdk_open(struct rx_run *core, char *err, size_t errlen)
{
	const struct rx_config *c = core->c;
	struct rxd_run *run = calloc(1, sizeof(*run));
	int rc;
	if (!run)
		return -ENOMEM;
	core->priv = run;
	run->c = c;
	run->stop = core->stop;
	run->pl = core->pl;
	run->be = engine_backend(c, err, errlen);
	if (!run->be)
		return -EINVAL;
	run->nq = core->nq;
	run->hring = engine_hring(c);
	run->pool_buffers = rxd_pool_buffers(c, run->hring);
	run->disc = c->discipline != RX_DISC_AUTO ? c->discipline
		    : c->mode == RX_MODE_HDS	  ? RX_DISC_SCALAR
						  : RX_DISC_VECTOR;
	rc = rxd_eal_for_config(c, run->eal_note, sizeof(run->eal_note), err, errlen);
	if (rc)
		return rc;
	run->no_huge = strstr(rxd_eal_args(), "--no-huge") != NULL;
	run->run_id = __atomic_fetch_add(&engine_runs, 1, __ATOMIC_RELAXED);
	rc = engine_queues(run, core);
	if (rc)
		return rxu_errf(err, errlen, rc, "queues: out of memory");
	if (c->gpu_work != RX_GPU_WORK_NONE && (rc = engine_gpu(run, err, errlen)))
		return rc;
	if (!run->be->rearm)
		core->warmup_s = 0; /* a real port's traffic is not ours to restart */
	run->nic_seconds = core->warmup_s > 0 ? core->warmup_s : c->seconds;
	run->opened = true;
	rc = run->be->open(run, err, errlen);
	for (uint32_t i = 0; !rc && i < run->nq; i++)
		rxd_queue_variants(&run->q[i]);
	core->ring_pkts = run->ring_pkts;
	return rc;
}

static int dpdk_start(struct rx_run *core, char *err, size_t errlen)
{
	struct rxd_run *run = core->priv;
	return run->be->start(run, err, errlen);
}

static int dpdk_wait(struct rx_run *core, char *err, size_t errlen)
{
	struct rxd_run *run = core->priv;
	int rc = rxd_workers_wait(run, core);
	core->seconds = run->seconds;
	return rc;
}

static void dpdk_stop(struct rx_run *core, bool abort)
{
	struct rxd_run *run = core->priv;
	if (!run)
		return;
	if (abort) {
		/* release whatever started: loops end now, apps once rx_done */
		atomic_store(&run->quit, 2);
		for (uint32_t i = 0; run->q && i < run->nq; i++)
			atomic_store_explicit(&run->q[i].rx_done, 1, memory_order_release);
	} else if (!atomic_load(&run->quit)) {
		atomic_store(&run->quit, 1);
	}
}

static int dpdk_rearm(struct rx_run *core, char *err, size_t errlen)
{
	struct rxd_run *run = core->priv;
	for (uint32_t i = 0; i < run->nq; i++) {
		struct rxd_queue *q = &run->q[i];
#ifdef RXRAY_HAVE_GPU
		if (q->gpu) {
			rxd_gpu_drain(q);
			rxg_consumer_stats_reset(q->gpu);
		}
#endif
		/* counters start again; the device's rearm says where the
		 * measured phase's sequence numbers start */
		memset(&q->rx, 0, sizeof(q->rx));
		memset(&q->appst, 0, sizeof(q->appst));
		memset(&q->rx_ops, 0, sizeof(q->rx_ops));
		memset(&q->rx_idle_ops, 0, sizeof(q->rx_idle_ops));
		memset(&q->app_ops, 0, sizeof(q->app_ops));
		atomic_store(&q->rx_done, 0);
		atomic_store(&q->rx_started, 0);
	}
	int rc = run->be->rearm(run, run->c->seconds, err, errlen);
	if (rc)
		return rc;
	atomic_store(&run->quit, 0);
	run->seconds = 0;
	return 0;
}

static int dpdk_collect(struct rx_run *core, struct rxr_result *r, char *err, size_t errlen)
{
	struct rxd_run *run = core->priv;
	engine_config_json(run, r);
	int rc = engine_gpu_result(run, r);
	if (rc)
		return rxu_errf(err, errlen, rc, "result: %s", strerror(-rc));
	rc = engine_result(run, r, err, errlen);
	/* the backend's collect may give the phase's length better than the
	 * RX loops' clock (the software NIC's own: what it offered was in
	 * that time) */
	if (run->seconds > 0)
		core->seconds = run->seconds;
	return rc;
}

static void dpdk_close(struct rx_run *core)
{
	struct rxd_run *run = core->priv;
	if (!run)
		return;
	for (uint32_t i = 0; run->q && i < run->nq; i++) {
		struct rxd_queue *q = &run->q[i];
#ifdef RXRAY_HAVE_GPU
		/* nothing of the pools may be in flight when they go */
		rxd_gpu_drain(q);
		rxg_consumer_close(q->gpu);
#endif
		free(q->gaddr);
		free(q->gseq);
	}
	if (run->opened)
		run->be->close(run);
	free(run->q);
	free(run);
	core->priv = NULL;
}

const struct rx_engine_ops rx_engine_dpdk = {
    .name = "dpdk",
    .summary = "DPDK mbufs + mempools, daqiri-like workers; ethdev port or mlx5 PMD model on "
	       "the software NIC",
    .caps = dpdk_caps,
    .validate = dpdk_validate,
    .open = dpdk_open,
    .rx_loop = rxd_rx_loop,
    .app_loop = rxd_app_loop,
    .start = dpdk_start,
    .wait = dpdk_wait,
    .stop = dpdk_stop,
    .collect = dpdk_collect,
    .rearm = dpdk_rearm,
    .close = dpdk_close,
};
