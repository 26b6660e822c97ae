/* SPDX-License-Identifier: MIT */
/*
 * The verbs engine's ops table and run orchestration: device -> memory ->
 * registration -> queues -> workers -> traffic -> drain -> result. The
 * datapath itself is verbs_dp.c; the devices are verbs_sim.c and
 * verbs_mlx5.c.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rxray/simnic.h"
#include "rxray/util.h"
#include "rxray/verbs.h"
#include "verbs_int.h"
#ifdef RXRAY_HAVE_GPU
#include "rxray/gpu.h"
#endif

#define VERBS_SLOT_ALIGN 64u

/* one error line, -EINVAL (rxu_errf) */
#define verr(err, errlen, ...) rxu_errf(err, errlen, -EINVAL, __VA_ARGS__)

/* Same, returning rc (a runtime -errno) instead of -EINVAL. */
#define verr_rc(rc, err, errlen, ...) rxu_errf(err, errlen, rc, __VA_ARGS__)

const struct verbs_backend_ops *verbs_backend_find(const char *kind)
{
	static const struct verbs_backend_ops *const backends[] = {
		&verbs_backend_sim,
		&verbs_backend_mlx5,
	};
	for (size_t i = 0; i < sizeof(backends) / sizeof(backends[0]); i++)
		if (!strcmp(backends[i]->name, kind))
			return backends[i];
	return NULL;
}

static int verbs_backend_of(const struct rx_config *c, struct rx_dev *dev,
			    const struct verbs_backend_ops **be, char *err, size_t errlen)
{
	int rc = rx_dev_parse(c->device, dev, err, errlen);
	if (rc < 0)
		return rc;
	*be = verbs_backend_find(dev->kind);
	if (!*be)
		return verr(err, errlen,
			    "device: '%s' is not a verbs device (sim[:opts] or mlx5:<ibdev|pci>)",
			    c->device);
	return 0;
}

static int verbs_caps(const struct rx_config *c, struct rx_caps *caps, char *err, size_t errlen)
{
	struct rx_dev dev;
	const struct verbs_backend_ops *be;
	int rc = verbs_backend_of(c, &dev, &be, err, errlen);
	if (rc < 0)
		return rc;
	memset(caps, 0, sizeof(*caps));
	rc = be->caps(c, caps, err, errlen);
	if (rc < 0)
		return rc;
	/* the engine's own limits: 16-bit wqe_counter / doorbell, 16-bit lengths */
	if (!caps->max_ring || caps->max_ring > VERBS_MAX_RING)
		caps->max_ring = VERBS_MAX_RING;
	if (!caps->max_frame || caps->max_frame > UINT16_MAX)
		caps->max_frame = UINT16_MAX;
	if (caps->min_split < RXS_SEQ_OFF + 8)
		caps->min_split = RXS_SEQ_OFF + 8;
	if (caps->min_frame < RXS_SEQ_OFF + 8)
		caps->min_frame = RXS_SEQ_OFF + 8;
	return 0;
}

static int verbs_validate(const struct rx_config *c, const struct rx_caps *caps, char *err,
			  size_t errlen)
{
	struct rx_dev dev;
	const struct verbs_backend_ops *be;
	/* the device kind, even when its caps were not asked (sweeps) */
	int rc = verbs_backend_of(c, &dev, &be, err, errlen);
	if (rc < 0)
		return rc;
	if (c->op_delay_mempool || c->op_delay_mr)
		return verr(err, errlen,
			    "op-delay: %s is an operation of the dpdk engine; the verbs engine's "
			    "are repost, dbrec, hdr_read (and hdr_write on the software NIC)",
			    c->op_delay_mempool ? "mempool" : "mr");
	if (c->ring > VERBS_MAX_RING)
		return verr(err, errlen,
			    "ring: %u exceeds %u (wqe_counter and the doorbell record are 16-bit)",
			    c->ring, VERBS_MAX_RING);
	if (c->frame > UINT16_MAX)
		return verr(err, errlen, "frame: %u exceeds %u", c->frame, UINT16_MAX);
	if (c->frame < RXS_SEQ_OFF + 8)
		return verr(err, errlen,
			    "frame: %u bytes cannot carry the sequence number at bytes %u..%u",
			    c->frame, RXS_SEQ_OFF, RXS_SEQ_OFF + 7);
	if (c->mode == RX_MODE_HDS && c->split < RXS_SEQ_OFF + 8)
		return verr(err, errlen,
			    "split: %u puts the sequence number (bytes %u..%u) outside the header segment",
			    c->split, RXS_SEQ_OFF, RXS_SEQ_OFF + 7);
	if (c->mode == RX_MODE_SINGLE && !rx_mem_cpu_visible(c->payload_mem))
		return verr(err, errlen,
			    "payload-mem: %s with mode single: the app reads headers from the payload slots",
			    rx_mem_kind_name(c->payload_mem));
	if (c->app == RX_APP_EAL)
		return verr(err, errlen, "app: eal is a dpdk placement; verbs takes thread or inline");
	return 0;
}

/* ----------------------------------------------------------------- run */

static uint32_t verbs_align(uint32_t v)
{
	return (v + VERBS_SLOT_ALIGN - 1) & ~(VERBS_SLOT_ALIGN - 1);
}

/* Memory for every queue's slots, registered with the device. */
static int verbs_mem_setup(struct verbs_run *run, char *err, size_t errlen)
{
	const struct rx_config *c = run->c;
	bool hds = c->mode == RX_MODE_HDS;
	size_t slots = (size_t)run->nq * c->ring;
	uint32_t hdr_lkey = 0, pay_lkey = 0;
	int rc;

	run->hdr_stride = hds ? verbs_align(c->split) : 0;
	run->pay_stride = verbs_align(hds ? c->frame - c->split : c->frame);
	run->seq_off = RXS_SEQ_OFF;
	if (hds) {
		rc = rx_mem_alloc(&run->hdr_mem, RX_MEM_HOST, slots * run->hdr_stride, err, errlen);
		if (rc < 0)
			return rc;
		rc = run->be->reg(run, run->hdr_mem.addr, run->hdr_mem.len, false, &hdr_lkey, err,
				  errlen);
		if (rc < 0)
			return rc;
		run->hdr_mem.lkey = hdr_lkey;
	}
	/* Host payload slots go on hugepages when the host has them free, as
	 * the DPDK engine's pools do: with 4 KiB pages every large slot costs
	 * the software NIC a TLB miss a real NIC's DMA does not pay. */
	rc = -ENOMEM;
	if (c->payload_mem == RX_MEM_HOST)
		rc = rx_mem_alloc(&run->pay_mem, RX_MEM_HUGE, slots * run->pay_stride, NULL, 0);
	if (rc < 0)
		rc = rx_mem_alloc(&run->pay_mem, c->payload_mem, slots * run->pay_stride, err,
				  errlen);
	if (rc < 0)
		return rc;
	rc = run->be->reg(run, run->pay_mem.addr, run->pay_mem.len,
			  run->pay_mem.kind == RX_MEM_GPU, &pay_lkey, err, errlen);
	if (rc < 0)
		return rc;
	run->pay_mem.lkey = pay_lkey;
	for (uint32_t i = 0; i < run->nq; i++) {
		struct verbs_queue *q = &run->q[i];
		q->hdr_base = hds ? (uint8_t *)run->hdr_mem.addr + (size_t)i * c->ring * run->hdr_stride
				  : NULL;
		q->pay_base = (uint8_t *)run->pay_mem.addr + (size_t)i * c->ring * run->pay_stride;
		q->hdr_lkey = hdr_lkey;
		q->pay_lkey = pay_lkey;
	}
	return 0;
}

static json_t *verbs_queue_json(const struct verbs_queue *q, const struct verbs_dev_counters *d,
				uint64_t uncounted)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	json_object_set_new(o, "queue", json_integer(q->index));
	json_object_set_new(o, "rx_core", json_integer(q->rx_core));
	json_object_set_new(o, "app_core", json_integer(q->inline_app ? -1 : q->app_core));
	json_object_set_new(o, "offered", json_integer((json_int_t)d->offered));
	json_object_set_new(o, "out_of_buffer", json_integer((json_int_t)d->out_of_buffer));
	json_object_set_new(o, "received", json_integer((json_int_t)q->app.received));
	json_object_set_new(o, "app_dropped", json_integer((json_int_t)q->rx.app_dropped));
	json_object_set_new(o, "err_cqes", json_integer((json_int_t)q->rx.err_cqes));
	json_object_set_new(o, "last_syndrome", json_integer(q->rx.last_syndrome));
	json_object_set_new(o, "seq_dup", json_integer((json_int_t)q->app.seq_dup));
	json_object_set_new(o, "seq_gaps", json_integer((json_int_t)q->app.seq_missing));
	json_object_set_new(o, "seq_uncounted", json_integer((json_int_t)uncounted));
	json_object_set_new(o, "len_errors", json_integer((json_int_t)q->app.len_errors));
	json_object_set_new(o, "doorbells", json_integer((json_int_t)q->rx.doorbells));
	json_object_set_new(o, "wqes_reposted", json_integer((json_int_t)q->rx.posted));
	return o;
}

/*
 * Counters, sequence check, threads, config, env. The sequence number
 * counts every packet offered to a queue, so per queue the numbers the app
 * never saw (gaps + the tail after the last one seen) must equal what the
 * NIC dropped (out_of_buffer), what erred (error CQEs) and what the
 * hand-off dropped. Anything else is a fault: counted in errors.
 */
static int verbs_result_fill(struct verbs_run *run, struct rxr_result *r)
{
	struct verbs_dev_counters tot = {0};
	struct verbs_dev_counters *perq = calloc(run->nq, sizeof(*perq));
	json_t *qs = json_array(), *vx = json_object();
	int rc = -ENOMEM;
	if (!perq || !qs || !vx)
		goto out;
	rc = run->be->collect(run, r, &tot, perq);
	if (rc < 0)
		goto out;

	uint64_t received = 0, dropped = 0, errors = tot.errors, faults = 0;
	for (uint32_t i = 0; i < run->nq; i++) {
		const struct verbs_queue *q = &run->q[i];
		uint64_t uncounted = 0;
		received += q->app.received;
		dropped += q->rx.app_dropped;
		/* device errors are already in tot.errors; count only the rest */
		errors += q->rx.err_cqes > perq[i].errors ? q->rx.err_cqes - perq[i].errors : 0;
		errors += q->app.len_errors + q->app.seq_dup;
		if (perq[i].known) {
			/* sequence numbers run on across a warm-up; the counters
			 * are this phase's */
			uint64_t end = q->seq_base + perq[i].offered;
			uint64_t unseen = q->app.seq_missing +
					  (end > q->app.next_seq ? end - q->app.next_seq : 0);
			uint64_t counted = perq[i].out_of_buffer + q->rx.err_cqes + q->rx.app_dropped;
			uncounted = unseen > counted ? unseen - counted : counted - unseen;
			if (q->app.next_seq > end) /* numbers never offered */
				uncounted += q->app.next_seq - end;
		}
		faults += uncounted + q->app.seq_dup;
		errors += uncounted;
		json_array_append_new(qs, verbs_queue_json(q, &perq[i], uncounted));
	}
	r->c.offered = tot.offered;
	r->c.out_of_buffer = tot.out_of_buffer;
	r->c.received = received;
	r->c.nombuf = 0;
	r->c.app_dropped = dropped;
	r->c.errors = errors;

	json_object_set_new(r->config, "backend", json_string(run->be->name));
	json_object_set_new(r->config, "hring",
			    json_integer(run->q[0].inline_app ? 0 : run->q[0].hr.size));

	json_object_set_new(vx, "backend", json_string(run->be->name));
	json_object_set_new(vx, "app", json_string(rx_app_name(run->pl.app)));
	json_object_set_new(vx, "hdr_slot_bytes", json_integer(run->hdr_stride));
	json_object_set_new(vx, "payload_slot_bytes", json_integer(run->pay_stride));
	json_object_set_new(vx, "payload_pages",
			    json_string(run->pay_mem.kind == RX_MEM_HUGE ? "huge" : "4k"));
	json_object_set_new(vx, "wqe_stride", json_integer(run->q[0].rq.stride));
	json_object_set_new(vx, "conserved", json_boolean(rxr_counters_conserved(&r->c)));
	json_object_set_new(vx, "sequence_faults", json_integer((json_int_t)faults));
	json_object_set_new(vx, "queues", qs);
	qs = NULL;
	if (!r->extra)
		r->extra = json_object();
	if (r->extra)
		json_object_set_new(r->extra, "verbs", vx);
	else
		json_decref(vx);
	vx = NULL;
	rc = 0;
out:
	json_decref(qs);
	json_decref(vx);
	free(perq);
	return rc;
}

/* ------------------------------------------------------------- hooks */

static struct verbs_run *verbs_of(struct rx_run *core)
{
	return core->priv;
}

static int verbs_open(struct rx_run *core, char *err, size_t errlen)
{
	const struct rx_config *c = core->c;
	struct verbs_run *run = calloc(1, sizeof(*run));
	if (!run)
		return verr_rc(-ENOMEM, err, errlen, "queues: out of memory");
	core->priv = run;
	run->c = c;
	run->pl = core->pl;
	run->dev = core->dev;
	run->be = verbs_backend_find(core->dev.kind);
	if (!run->be)
		return verr(err, errlen,
			    "device: '%s' is not a verbs device (sim[:opts] or mlx5:<ibdev|pci>)",
			    c->device);
	run->nq = core->nq;
	/* queues carry cache-line-aligned members: allocate them aligned */
	size_t qbytes = (size_t)run->nq * sizeof(*run->q);
	qbytes = (qbytes + VERBS_CACHELINE - 1) & ~(size_t)(VERBS_CACHELINE - 1);
	run->q = aligned_alloc(VERBS_CACHELINE, qbytes);
	if (!run->q)
		return verr_rc(-ENOMEM, err, errlen, "queues: out of memory");
	memset(run->q, 0, qbytes);
	for (uint32_t i = 0; i < run->nq; i++) {
		run->q[i].index = i;
		run->q[i].inline_app = core->q[i].inline_app;
		run->q[i].rx_core = core->q[i].rx_core;
		run->q[i].app_core = core->q[i].app_core;
		core->q[i].priv = &run->q[i];
	}
	if (!run->be->rearm)
		core->warmup_s = 0; /* a real device's traffic is not ours to restart */
	run->nic_seconds = core->warmup_s > 0 ? core->warmup_s : c->seconds;
	int rc = run->be->open(run, err, errlen);
	if (rc < 0)
		return rc;
	return verbs_mem_setup(run, err, errlen);
}

/* The GPU consumer of one queue (--gpu-work): a kernel per app batch. */
static int verbs_gpu_setup(struct verbs_run *run, struct verbs_queue *q, char *err,
			   size_t errlen)
{
#ifdef RXRAY_HAVE_GPU
	const struct rx_config *c = run->c;
	struct rxg_params gp = {
		.work = c->gpu_work == RX_GPU_WORK_REORDER ? RXG_WORK_REORDER : RXG_WORK_CHECKSUM,
		.max_batch = c->burst,
		.depth = 64,
		.payload_bytes = run->pay_stride < c->frame - c->split ? run->pay_stride
								       : c->frame - c->split,
		.window = c->ring,
		.device = 0,
		.launch = (enum rxg_launch)c->gpu_launch,
	};
	q->gaddr = calloc(c->burst, sizeof(*q->gaddr));
	q->gseq = calloc(c->burst, sizeof(*q->gseq));
	if (!q->gaddr || !q->gseq)
		return verr_rc(-ENOMEM, err, errlen, "gpu-work: out of memory");
	int rc = rxg_consumer_open(&gp, &q->gpu, err, errlen);
	if (rc < 0)
		return rc;
	q->app_fn = verbs_app_gpu;
	return 0;
#else
	(void)run;
	(void)q;
	return verr(err, errlen, "gpu-work: this build has no CUDA (nvcc was not found)");
#endif
}

static int verbs_queue_setup_hook(struct rx_run *core, struct rx_queue *q, char *err,
				  size_t errlen)
{
	struct verbs_run *run = verbs_of(core);
	int rc = verbs_queue_setup(run, q->priv, err, errlen);
	if (!rc && run->c->gpu_work != RX_GPU_WORK_NONE)
		rc = verbs_gpu_setup(run, q->priv, err, errlen);
	return rc;
}

static int verbs_start(struct rx_run *core, char *err, size_t errlen)
{
	struct verbs_run *run = verbs_of(core);
	return run->be->start(run, err, errlen);
}

static int verbs_wait(struct rx_run *core, char *err, size_t errlen)
{
	struct verbs_run *run = verbs_of(core);
	return run->be->wait(run, core->stop, &core->seconds, err, errlen);
}

static void verbs_stop(struct rx_run *core, bool abort)
{
	struct verbs_run *run = verbs_of(core);
	if (!run)
		return;
	atomic_store(&run->wire_done, 1);
	/* an rx worker that never ran must not leave its app waiting */
	for (uint32_t i = 0; abort && run->q && i < run->nq; i++)
		atomic_store(&run->q[i].rx_done, 1);
}

static int verbs_rearm(struct rx_run *core, char *err, size_t errlen)
{
	struct verbs_run *run = verbs_of(core);
	struct verbs_dev_counters tot = {0};
	struct verbs_dev_counters *perq = calloc(run->nq, sizeof(*perq));
	struct rxr_result *scratch = NULL;
	rxr_result_open(&scratch);
	int rc = -ENOMEM;
	if (!perq || !scratch)
		goto out;
	/* what each queue was offered in the warm-up: the measured phase's
	 * sequence numbers start there */
	rc = run->be->collect(run, scratch, &tot, perq);
	if (rc < 0)
		goto out;
	rc = run->be->rearm(run, run->c->seconds, err, errlen);
	if (rc < 0)
		goto out;
	for (uint32_t i = 0; i < run->nq; i++) {
		struct verbs_queue *q = &run->q[i];
#ifdef RXRAY_HAVE_GPU
		if (q->gpu) {
			verbs_app_gpu_drain(q);
			rxg_consumer_stats_reset(q->gpu);
		}
#endif
		struct verbs_app_stats keep = q->app;
		q->seq_base += perq[i].offered;
		memset(&q->rx, 0, sizeof(q->rx));
		memset(&q->app, 0, sizeof(q->app));
		/* every packet offered so far was delivered or dropped (the
		 * warm-up drained): the measured phase expects the next one */
		q->app.next_seq = q->seq_base > keep.next_seq ? q->seq_base : keep.next_seq;
		q->app.seq_started = keep.seq_started;
		atomic_store(&q->rx_done, 0);
		/* the warm-up's drain ended calibration (wire_done clears
		 * q->coalesce): the measured phase coalesces again */
		q->coalesce = run->c->coalesce;
	}
	atomic_store(&run->wire_done, 0);
out:
	if (rc == -ENOMEM)
		verr_rc(rc, err, errlen, "warm-up: out of memory");
	rxr_result_free(scratch);
	free(perq);
	return rc;
}

static int verbs_collect(struct rx_run *core, struct rxr_result *r, char *err, size_t errlen)
{
	struct verbs_run *run = verbs_of(core);
#ifdef RXRAY_HAVE_GPU
	for (uint32_t i = 0; i < run->nq; i++)
		if (run->q[i].gpu) {
			/* the workers ended: what is still in flight completes now */
			verbs_app_gpu_drain(&run->q[i]);
			struct rxg_stats st;
			rxg_consumer_stats(run->q[i].gpu, &st);
			struct rx_gpu_tally g = {
			    rx_knob_value_name(rx_knob_find("gpu-work"), (int)run->c->gpu_work),
			    st.batches, st.packets, st.gaps, st.dups, st.checksum, st.kernel_ms,
			    st.max_batch_ms,
		    rx_knob_value_name(rx_knob_find("gpu-launch"), (int)run->c->gpu_launch)};
			int grc = rx_gpu_result_add(r, &g, i);
			if (grc < 0)
				return verr_rc(grc, err, errlen, "result: %s", strerror(-grc));
		}
#endif
	int rc = verbs_result_fill(run, r);
	if (rc < 0)
		verr_rc(rc, err, errlen, "result: %s", strerror(-rc));
	return rc;
}

static void verbs_queue_teardown_hook(struct rx_run *core, struct rx_queue *q)
{
	struct verbs_queue *vq = q->priv;
	if (!vq)
		return;
#ifdef RXRAY_HAVE_GPU
	rxg_consumer_close(vq->gpu);
	vq->gpu = NULL;
#endif
	free(vq->gaddr);
	free(vq->gseq);
	vq->gaddr = NULL;
	vq->gseq = NULL;
	verbs_queue_teardown(vq);
}

static void verbs_close(struct rx_run *core)
{
	struct verbs_run *run = verbs_of(core);
	if (!run)
		return;
	if (run->be)
		run->be->close(run); /* NULL-safe on a partial open; deregisters before the memory goes */
	rx_mem_free(&run->pay_mem);
	rx_mem_free(&run->hdr_mem);
	free(run->q);
	free(run);
	core->priv = NULL;
}

const struct rx_engine_ops rx_engine_verbs = {
	.name = "verbs",
	.summary = "fixed slots, direct mlx5 CQE poll, doorbell per batch (sim | mlx5)",
	.caps = verbs_caps,
	.validate = verbs_validate,
	.open = verbs_open,
	.queue_setup = verbs_queue_setup_hook,
	.rx_loop = verbs_rx_worker,
	.app_loop = verbs_app_worker,
	.start = verbs_start,
	.wait = verbs_wait,
	.stop = verbs_stop,
	.collect = verbs_collect,
	.rearm = verbs_rearm,
	.queue_teardown = verbs_queue_teardown_hook,
	.close = verbs_close,
};
