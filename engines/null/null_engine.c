/* SPDX-License-Identifier: MIT */
/*
 * The null engine: a device that offers nothing and a receive loop that
 * polls it until the run is over. It exists as the template for a new
 * engine (copy this folder, add one line to engines/registry/registry.c)
 * and as the test that the core's run sequence, the knob table, `rxray
 * run` and `rxray sweep` need nothing engine-specific. Device: "sim"
 * (caps of an ideal device, no software NIC thread) or "null".
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "rxray/core.h"
#include "rxray/util.h"

struct null_queue {
	_Atomic int *done;     /* the run's: set by stop */
	uint64_t polls;        /* empty polls (nothing ever arrives) */
};

struct null_run {
	_Atomic int done;
	struct null_queue *q;
};

static int null_caps(const struct rx_config *c, struct rx_caps *caps, char *err, size_t errlen)
{
	if (strcmp(c->device, "null") && strcmp(c->device, "sim"))
		return rxu_errf(err, errlen, -EINVAL,
				"device: '%s' is not a null engine device (null or sim)", c->device);
	snprintf(caps->name, sizeof(caps->name), "null");
	caps->max_ring = 1u << 16;
	caps->max_sges = 2;
	caps->max_queues = RX_MAX_QUEUES;
	caps->max_frame = 9216;
	caps->buffer_split = true;
	return 0;
}

static int null_open(struct rx_run *core, char *err, size_t errlen)
{
	struct null_run *run = calloc(1, sizeof(*run));
	if (run)
		run->q = calloc(core->nq, sizeof(*run->q));
	core->priv = run;
	if (!run || !run->q)
		return rxu_errf(err, errlen, -ENOMEM, "queues: out of memory");
	for (uint32_t i = 0; i < core->nq; i++) {
		run->q[i].done = &run->done;
		core->q[i].priv = &run->q[i];
	}
	return 0;
}

static int null_rx_loop(struct rx_worker *w, void *arg)
{
	struct null_queue *q = arg;
	rxp_lap_start(w->probe);
	while (!atomic_load_explicit(q->done, memory_order_acquire)) {
		rxp_burst_begin(w->probe);
		q->polls++;
		rxp_lap(w->probe, RXP_ST_IDLE, 0);
		rxp_burst_end(w->probe, 0);
	}
	return 0;
}

static void null_stop(struct rx_run *core, bool abort)
{
	struct null_run *run = core->priv;
	if (run)
		atomic_store_explicit(&run->done, 1, memory_order_release);
}

static int null_collect(struct rx_run *core, struct rxr_result *r, char *err, size_t errlen)
{
	struct null_run *run = core->priv;
	uint64_t polls = 0;
	for (uint32_t i = 0; i < core->nq; i++)
		polls += run->q[i].polls;
	memset(&r->c, 0, sizeof(r->c)); /* nothing offered, nothing lost */
	if (!r->extra && !(r->extra = json_object()))
		return rxu_errf(err, errlen, -ENOMEM, "result: out of memory");
	json_object_set_new(r->extra, "null", json_pack("{s:I}", "polls", (json_int_t)polls));
	return 0;
}

static void null_close(struct rx_run *core)
{
	struct null_run *run = core->priv;
	if (run)
		free(run->q);
	free(run);
	core->priv = NULL;
}

const struct rx_engine_ops rx_engine_null = {
	.name = "null",
	.summary = "template engine: a device that offers nothing (tests)",
	.test_only = true,
	.caps = null_caps,
	.open = null_open,
	.rx_loop = null_rx_loop,
	.stop = null_stop,
	.collect = null_collect,
	.close = null_close,
};
