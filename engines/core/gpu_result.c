/* SPDX-License-Identifier: MIT */
/*
 * The GPU as a thread of the run result (role "gpu"): its time comes from
 * the GPU's own timer, not from laps, so the engines hand over a tally per queue
 * and this turns it into a thread with stage gpu_kernel, so the ceiling
 * model and the bound classifier can name the GPU as the bottleneck like
 * any thread, plus a "gpu" entry per queue in the result's extras.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "rxray/core.h"

int rx_gpu_result_add(struct rxr_result *r, const struct rx_gpu_tally *g, uint32_t queue)
{
	double hz = r->clock.hz > 0 ? r->clock.hz : rxp_clock_get()->hz;
	if (!(hz > 0))
		return -EINVAL;
	struct rxr_thread_result t;
	memset(&t, 0, sizeof(t));
	snprintf(t.role, sizeof(t.role), "gpu");
	t.core = -1;
	t.packets = g->packets;
	/* GPU time in the run's clock ticks, so cycles/packet compare */
	uint64_t cycles = (uint64_t)(g->kernel_ms * 1e-3 * hz);
	t.busy_cycles = cycles;
	struct rxr_stage_sum *s = &t.st[RXP_ST_GPU_KERNEL];
	s->count = g->batches;
	s->packets = g->packets;
	s->cycles = cycles;
	uint64_t mean = g->batches ? cycles / g->batches : 0;
	s->min = s->p50 = s->p90 = mean; /* per batch: only the mean and the max are known */
	s->max = s->p99 = (uint64_t)(g->max_batch_ms * 1e-3 * hz);
	s->cycles_per_packet = g->packets ? (double)cycles / (double)g->packets : 0;
	t.stage_mask = 1u << RXP_ST_GPU_KERNEL;
	int rc = rxr_result_add_thread(r, &t);
	if (rc < 0)
		return rc;
	if (!r->extra && !(r->extra = json_object()))
		return -ENOMEM;
	json_t *arr = json_object_get(r->extra, "gpu");
	if (!arr) {
		arr = json_array();
		if (!arr || json_object_set_new(r->extra, "gpu", arr) < 0)
			return -ENOMEM;
	}
	double ns = g->packets ? g->kernel_ms * 1e6 / (double)g->packets : 0;
	json_t *o = json_pack("{s:i,s:s,s:s,s:I,s:I,s:f,s:f,s:f,s:I,s:I,s:I,s:s}", "queue",
			      (int)queue, "work", g->work, "launch", g->launch ? g->launch : "kernel",
			      "batches", (json_int_t)g->batches, "packets",
			      (json_int_t)g->packets, "kernel_ms", g->kernel_ms, "ns_per_packet", ns,
			      "gpu_bound_mpps", ns > 0 ? 1e3 / ns : 0.0, "gaps", (json_int_t)g->gaps,
			      "dups", (json_int_t)g->dups, "checksum", (json_int_t)g->checksum,
			      "timing", "GPU global timer, first block's start to last block's end");
	return o && json_array_append_new(arr, o) == 0 ? 0 : -ENOMEM;
}
