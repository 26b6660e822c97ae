/* SPDX-License-Identifier: MIT */
/*
 * The one run sequence every engine goes through (core.h rx_run_exec):
 * check -> clock -> open -> queues -> workers -> start -> wait -> stop ->
 * join -> collect -> result -> teardown. Engines fill hooks; nothing here
 * knows an engine by name.
 */
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rxray/core.h"
#include "rxray/cupti.h"
#include "rxray/util.h"

int rx_clock_once(char *err, size_t errlen)
{
	const struct rxp_clock *clk = rxp_clock_get();
	if (clk->hz > 0 && clk->lap_cost_cycles > 0)
		return 0;
	int rc = rxp_clock_init(RX_CLOCK_CALIB_MS);
	if (rc < 0)
		return rxu_errf(err, errlen, rc, "clock: cannot calibrate: %s", strerror(-rc));
	return 0;
}

int rx_run_check(const struct rx_engine_ops *ops, const struct rx_config *c, unsigned flags,
		 struct rx_caps *caps, struct rx_placement *pl, char *err, size_t errlen)
{
	struct rx_caps k;
	struct rx_placement p;
	struct rx_dev dev;
	int rc = rx_dev_parse(c->device, &dev, err, errlen);
	if (rc < 0)
		return rc;
	/* an option the engine does not read: refused before any device opens */
	if ((rc = rx_config_check_engine(c, err, errlen)) < 0)
		return rc;
	memset(&k, 0, sizeof(k));
	if (err && errlen)
		err[0] = '\0';
	if (flags & RX_CHECK_NO_DEVICE) {
		rx_caps_ideal(&k);
		rc = 0;
	} else {
		rc = ops->caps(c, &k, err, errlen);
	}
	if (rc < 0) {
		if (err && errlen && !err[0])
			snprintf(err, errlen, "device: %s", strerror(-rc));
		return rc;
	}
	rc = rx_config_validate_fields(c, &k, err, errlen);
	if (!rc && ops->validate)
		rc = ops->validate(c, &k, err, errlen);
	memset(&p, 0, sizeof(p));
	if (!rc && !(flags & RX_CHECK_NO_PLACE))
		rc = rx_place(c, &k, &p, err, errlen);
	if (rc < 0)
		return rc;
	if (caps)
		*caps = k;
	if (pl)
		*pl = p;
	return 0;
}

/* How long a phase waits for its workers to reach their loops. */
#define RX_WORKERS_START_S 10.0

static double run_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The process's first GPU stall (rxray/gpu.h rxg_stall): weak, so the
 * core links without the GPU code; present whenever an engine uses it. */
extern const char *rxg_stall(void) __attribute__((weak));

static const char *run_gpu_stalled(void)
{
	return rxg_stall ? rxg_stall() : NULL;
}

/* A GPU kernel or copy that made no progress for 2 s is the run's
 * failure, whatever else went wrong after it. */
static int run_gpu_stall_rc(int rc, char *err, size_t errlen)
{
	const char *s = run_gpu_stalled();
	if (!s)
		return rc;
	return rxu_errf(err, errlen, -ETIMEDOUT, "gpu stalled: %s", s);
}

/* The core's timer for engines without a wait hook. */
static int run_wait_timer(struct rx_run *run)
{
	double t0 = run_now_s(), el = 0;
	while (!*run->stop && !run_gpu_stalled() && (el = run_now_s() - t0) < run->c->seconds) {
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
	}
	run->seconds = run_now_s() - t0;
	return 0;
}

/* Start every queue's app thread (when placed) and rx worker. */
static int run_workers_start(struct rx_run *run, char *err, size_t errlen)
{
	for (uint32_t i = 0; i < run->nq; i++) {
		struct rx_queue *q = &run->q[i];
		int rc;
		if (!q->inline_app) {
			rc = rx_worker_start(&q->appw, "app", q->app_core, run->c,
					     run->ops->app_loop, q->priv);
			if (rc < 0)
				return rxu_errf(err, errlen, rc,
						"queue %u: cannot start the app thread: %s", i,
						strerror(-rc));
		}
		rc = rx_worker_start(&q->rxw, "rx", q->rx_core, run->c, run->ops->rx_loop, q->priv);
		if (rc < 0)
			return rxu_errf(err, errlen, rc, "queue %u: cannot start the rx worker: %s", i,
					strerror(-rc));
	}
	return 0;
}

/*
 * Join rx workers first, then apps (which end once their rx side is done).
 * A worker that could not pin never ran its loop: abort the rest so no app
 * waits for an rx side that will never finish. First failure -> err.
 */
static int run_workers_join(struct rx_run *run, char *err, size_t errlen)
{
	int first = 0;
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t i = 0; i < run->nq; i++) {
			struct rx_worker *w = pass ? &run->q[i].appw : &run->q[i].rxw;
			if (!w->started)
				continue;
			int rc = rx_worker_join(w);
			if (rc < 0 && !first) {
				first = rc;
				run->ops->stop(run, true);
				rxu_errf(err, errlen, rc, "queue %u: %s thread on core %d: %s", i,
					 w->role, w->core, strerror(-rc));
			}
		}
	}
	return first;
}

/* The arrival pattern as the receiver saw it, beside the one the software
 * NIC offered (extra "nic": train, line rate): completions per poll that
 * found any, over the rx threads' cqe_poll laps. */
static void run_nic_pattern(struct rxr_result *r)
{
	json_t *nic = json_object_get(r->extra, "nic");
	uint64_t laps = 0, pkts = 0;
	if (!nic)
		return;
	for (size_t i = 0; i < r->nthreads; i++)
		if (!strcmp(r->threads[i].role, "rx")) {
			laps += r->threads[i].st[RXP_ST_CQE_POLL].count;
			pkts += r->threads[i].st[RXP_ST_CQE_POLL].packets;
		}
	json_object_set_new(nic, "rx_packets_per_poll",
			    json_real(laps ? (double)pkts / (double)laps : 0));
}

/* What the core adds to every result once the engine collected. */
static int run_result(struct rx_run *run, struct rxr_result *r, bool interrupted)
{
	json_t *cfg = rx_config_to_json(run->c);
	if (!cfg)
		return -ENOMEM;
	/* the engine may have put its own config fields in already */
	json_object_update_missing(r->config, cfg);
	json_decref(cfg);
	json_object_set_new(r->config, "placement", rx_placement_to_json(&run->pl));
	if (!json_object_size(r->env))
		rxr_result_fill_env(r);
	for (uint32_t i = 0; i < run->nq; i++) {
		struct rx_worker *ws[2] = {&run->q[i].rxw, &run->q[i].appw};
		for (int k = 0; k < 2; k++) {
			int rc;
			if (ws[k]->probe && (rc = rxr_result_add_probe(r, ws[k]->probe)) < 0)
				return rc;
		}
	}
	rxr_result_set_clock(r);
	rxr_result_set_rates(r, run->seconds > 0 ? run->seconds : run->c->seconds);
	if (!r->extra && !(r->extra = json_object()))
		return -ENOMEM;
	run_nic_pattern(r);
	json_object_set_new(r->extra, "interrupted", json_boolean(interrupted));
	json_object_set_new(r->extra, "caps", rx_caps_to_json(&run->caps));
	/* threads sharing cores measure the scheduler too: never a ceiling */
	json_object_set_new(r->extra, "oversubscribed", json_boolean(run->pl.oversubscribed));
	return 0;
}

static void run_teardown(struct rx_run *run)
{
	for (uint32_t i = 0; run->q && i < run->nq; i++) {
		rx_worker_destroy(&run->q[i].rxw);
		rx_worker_destroy(&run->q[i].appw);
		if (run->ops->queue_teardown)
			run->ops->queue_teardown(run, &run->q[i]);
	}
	if (run->ops->close)
		run->ops->close(run);
	free(run->q);
	run->q = NULL;
}

/*
 * Warm-up length: long enough for every queue to use each of its WQEs
 * once at the offered rate (a quarter more for pacing slack), at least
 * RX_WARMUP_MIN_S, at most RX_WARMUP_MAX_S. Unpaced runs ("max") fill a
 * ring in well under the minimum.
 */
static double run_warmup_seconds(const struct rx_config *c)
{
	if (c->warmup == RX_WARMUP_OFF)
		return 0;
	double w = RX_WARMUP_MIN_S;
	if (c->rate_pps > 0) {
		double need = 1.25 * (double)c->ring * c->queues / c->rate_pps;
		if (need > w)
			w = need;
	}
	return w > RX_WARMUP_MAX_S ? RX_WARMUP_MAX_S : w;
}

/*
 * Validity of the measured phase (rxray/validity.h): the host's steal and
 * a canary workload the size of the run's working set around it; each
 * worker's own window is taken on its thread (worker.c), and a device's
 * own threads (the software NIC's) add theirs in collect (r->validity).
 */
static int run_validity_begin(struct rx_run *run, struct rxr_validity **out, char *err,
			      size_t errlen)
{
	const struct rx_config *c = run->c;
	struct rxr_valid_limits lim;
	rxr_valid_limits_default(&lim);
	if (c->rate_pps > 0) { /* the time the ring covers at the offered rate */
		uint32_t pkts = run->ring_pkts ? run->ring_pkts : c->ring;
		lim.ring_cover_s = (double)pkts * c->queues / c->rate_pps;
	}
	int rc = rxr_validity_open(&lim, out, err, errlen);
	if (rc < 0)
		return rc;
	size_t ws = (size_t)c->ring * c->queues * (c->frame + 64);
	rc = rxr_validity_canary_before(*out, ws, err, errlen);
	if (rc < 0)
		return rc;
	rxr_validity_host_begin(*out);
	return 0;
}

static void run_validity_end(struct rx_run *run, struct rxr_validity *v)
{
	rxr_validity_host_end(v);
	for (uint32_t i = 0; i < run->nq; i++) {
		const struct rx_worker *ws[2] = {&run->q[i].rxw, &run->q[i].appw};
		for (int k = 0; k < 2; k++)
			if (ws[k]->started && ws[k]->valid_ok)
				rxr_validity_add_thread(v, &ws[k]->valid);
	}
	rxr_validity_canary_after(v, NULL, 0);
	if (run->pl.oversubscribed)
		rxr_validity_add_reason(v, "oversubscribed: %d threads on %d cores", run->pl.needed,
					run->pl.available);
}

/*
 * The watch's begin: the rx workers' kernel thread ids, each set on its
 * thread as it starts (after run_workers_entered), then the watcher's own
 * begin.
 */
static int run_watch_begin(struct rx_run *run, char *err, size_t errlen)
{
	int tids[RX_MAX_QUEUES];
	uint32_t n = 0;
	for (uint32_t i = 0; i < run->nq && n < RX_MAX_QUEUES; i++) {
		const struct rx_worker *w = &run->q[i].rxw;
		if (!w->started)
			continue;
		/* set before the worker entered its loop or ended, which
		 * run_workers_entered waited for */
		int tid = __atomic_load_n(&w->ktid, __ATOMIC_ACQUIRE);
		if (!tid)
			return rxu_errf(err, errlen, -EINVAL,
					"queue %u: the rx worker has no thread id", i);
		tids[n++] = tid;
	}
	return run->watch->begin(run->watch->ctx, tids, n, err, errlen);
}

/*
 * Every worker started is in its loop (or ended, unable to pin) before
 * the device starts: a software NIC's arrivals begin at its start, and a
 * receiver still being set up (a new thread pinned, its validity window
 * opened) would find the ring full and lose packets the run would charge
 * to it. Bounded: a worker that never gets there fails the run.
 */
static int run_workers_entered(struct rx_run *run, char *err, size_t errlen)
{
	double t0 = run_now_s();
	for (uint32_t i = 0; i < run->nq; i++) {
		const struct rx_worker *ws[2] = {&run->q[i].rxw, &run->q[i].appw};
		for (int k = 0; k < 2; k++) {
			const struct rx_worker *w = ws[k];
			while (w->started && !__atomic_load_n(&w->entered, __ATOMIC_ACQUIRE) &&
			       !__atomic_load_n(&w->finished, __ATOMIC_ACQUIRE)) {
				if (run_now_s() - t0 > RX_WORKERS_START_S)
					return rxu_errf(err, errlen, -ETIMEDOUT,
							"queue %u: the %s worker on core %d did not "
							"start within %.0f s",
							i, w->role, w->core, RX_WORKERS_START_S);
				sched_yield();
			}
		}
	}
	return 0;
}

/* One phase: workers, traffic, wait, stop, join. */
static int run_phase(struct rx_run *run, char *err, size_t errlen)
{
	const struct rx_engine_ops *ops = run->ops;
	bool watched = false;
	int rc = run_workers_start(run, err, errlen);
	if (!rc)
		rc = run_workers_entered(run, err, errlen);
	if (!rc && run->watch && !run->warming)
		watched = (rc = run_watch_begin(run, err, errlen)) == 0;
	if (!rc && ops->start)
		rc = ops->start(run, err, errlen);
	if (!rc && watched && run->watch->started)
		rc = run->watch->started(run->watch->ctx, err, errlen);
	if (!rc)
		rc = ops->wait ? ops->wait(run, err, errlen) : run_wait_timer(run);
	if (watched)
		run->watch->end(run->watch->ctx);
	ops->stop(run, rc < 0);
	int jrc = run_workers_join(run, rc < 0 ? NULL : err, errlen);
	return run_gpu_stall_rc(rc ? rc : jrc, err, errlen);
}

/*
 * The warm-up phase, then the engine rearmed for the measured one: what
 * the warm-up offered and received goes into *warm (the engine's collect
 * into a scratch result), its workers and their probes are discarded.
 */
static int run_warmup(struct rx_run *run, json_t **warm, char *err, size_t errlen)
{
	struct rxr_result *w = NULL;
	rxr_result_open(&w);
	if (!w)
		return rxu_errf(err, errlen, -ENOMEM, "warm-up: out of memory");
	run->warming = true;
	int rc = run_phase(run, err, errlen);
	run->warming = false;
	if (!rc)
		rc = run->ops->collect(run, w, err, errlen);
	if (!rc) {
		const struct rxr_counters *k = &w->c;
		uint64_t per_q = k->offered / (run->nq ? run->nq : 1);
		*warm = json_pack("{s:s,s:f,s:I,s:I,s:I,s:b}", "mode", "auto", "seconds",
				  run->seconds, "offered", (json_int_t)k->offered, "received",
				  (json_int_t)k->received, "out_of_buffer",
				  (json_int_t)k->out_of_buffer, "every_wqe_used",
				  per_q >= run->c->ring);
		rc = run->ops->rearm(run, err, errlen);
	}
	rxr_result_free(w);
	for (uint32_t i = 0; i < run->nq; i++) {
		rx_worker_destroy(&run->q[i].rxw);
		rx_worker_destroy(&run->q[i].appw);
		memset(&run->q[i].rxw, 0, sizeof(run->q[i].rxw));
		memset(&run->q[i].appw, 0, sizeof(run->q[i].appw));
	}
	run->seconds = 0;
	return rc;
}

int rx_run_exec(const struct rx_engine_ops *ops, const struct rx_config *c, struct rxr_result *r,
		volatile sig_atomic_t *stop, char *err, size_t errlen)
{
	return rx_run_exec_watched(ops, c, r, stop, NULL, err, errlen);
}

int rx_run_exec_watched(const struct rx_engine_ops *ops, const struct rx_config *c,
			struct rxr_result *r, volatile sig_atomic_t *stop,
			const struct rx_run_watch *w, char *err, size_t errlen)
{
	static volatile sig_atomic_t never;
	struct rx_run run;
	int rc;

	memset(&run, 0, sizeof(run));
	run.c = c;
	run.ops = ops;
	run.stop = stop ? stop : &never;
	run.watch = w;
	rc = rx_run_check(ops, c, 0, &run.caps, &run.pl, err, errlen);
	if (rc < 0)
		return rc;
	rc = rx_dev_parse(c->device, &run.dev, err, errlen);
	if (rc < 0)
		return rc;
	rc = rx_clock_once(err, errlen);
	if (rc < 0)
		return rc;
	run.nq = c->queues;
	run.q = calloc(run.nq, sizeof(*run.q));
	if (!run.q)
		return rxu_errf(err, errlen, -ENOMEM, "queues: out of memory");
	for (uint32_t i = 0; i < run.nq; i++) {
		struct rx_queue *q = &run.q[i];
		q->index = i;
		q->run = &run;
		q->rx_core = run.pl.rx_core[i];
		q->app_core = run.pl.app == RX_APP_INLINE ? -1 : run.pl.app_core[i];
		q->inline_app = q->app_core < 0 || !ops->app_loop;
	}
	run.warmup_s = ops->rearm ? run_warmup_seconds(c) : 0;
	rc = ops->open(&run, err, errlen);
	for (uint32_t i = 0; !rc && ops->queue_setup && i < run.nq; i++)
		rc = ops->queue_setup(&run, &run.q[i], err, errlen);
	json_t *warm = NULL;
	struct rxr_validity *v = NULL;
	if (!rc && run.warmup_s > 0)
		rc = run_warmup(&run, &warm, err, errlen);
	if (!rc)
		rc = run_validity_begin(&run, &v, err, errlen);
	if (!rc) {
		rxp_nvtx_range_push("run"); /* the measured phase, for Nsight/CUPTI */
		rc = run_phase(&run, err, errlen);
		rxp_nvtx_range_pop();
	}
	if (!rc)
		run_validity_end(&run, v);
	if (!rc) {
		r->validity = v; /* a device's own threads (the NIC's) add their windows */
		rc = run_gpu_stall_rc(ops->collect(&run, r, err, errlen), err, errlen);
		r->validity = NULL;
		if (!rc && (rc = run_result(&run, r, *run.stop != 0)) < 0)
			rxu_errf(err, errlen, rc, "result: %s", strerror(-rc));
		/* GPU kernels and copies when the CUPTI library was injected */
		int g = rc ? 0 : rxr_result_add_gpu_trace(r, 0);
		if (g < 0)
			rc = rxu_errf(err, errlen, g, "result: gpu_trace: %s", strerror(-g));
	}
	if (!rc && v) {
		/* off-CPU time is judged by whether the run lost anything */
		rxr_validity_note_loss(v, r->c.out_of_buffer + r->c.nombuf + r->c.app_dropped);
		json_object_set_new(r->extra, "validity", rxr_validity_json(v));
	}
	rxr_validity_free(v);
	if (!rc) {
		if (!warm)
			warm = json_pack("{s:s}", "mode",
					 c->warmup == RX_WARMUP_OFF ? "off" : "unsupported");
		json_object_set(r->extra, "warmup", warm);
	}
	json_decref(warm);
	run_teardown(&run);
	return rc;
}
