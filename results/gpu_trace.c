/* SPDX-License-Identifier: MIT */
/*
 * The run result's "gpu_trace" from the CUPTI injection library (see
 * rxray/cupti.h): looked up by symbol in the already-loaded library, so
 * rxray carries no CUPTI dependency and a run without it pays nothing.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "rxray/cupti.h"
#include "rxray/result.h"

static const char *const kind_names[] = {"kernel", "memcpy", "memset"};

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static json_t *gpu_trace_json(const struct rxc_cupti_rec *rec, size_t n, uint64_t dropped)
{
	/* one instant on both clocks: the monotonic read between two run-clock
	 * reads, paired with their midpoint */
	uint64_t a = rxp_now(), ns = mono_ns(), b = rxp_now();
	json_t *data = json_array();
	for (size_t i = 0; data && i < n; i++) {
		const struct rxc_cupti_rec *e = &rec[i];
		if (json_array_append_new(
			    data, json_pack("[s,s,I,I,I,I,I]",
					    e->kind < 3 ? kind_names[e->kind] : "other", e->name,
					    (json_int_t)e->start_ns, (json_int_t)e->end_ns,
					    (json_int_t)e->stream, (json_int_t)e->bytes,
					    (json_int_t)e->correlation))) {
			json_decref(data);
			return NULL;
		}
	}
	if (!data)
		return NULL;
	return json_pack("{s:s,s:{s:s,s:I,s:I},s:[s,s,s,s,s,s,s],s:o,s:I}", "source", "cupti",
			 "clock", "domain", "monotonic_ns", "anchor_ticks",
			 (json_int_t)(a + (b - a) / 2), "anchor_ns", (json_int_t)ns, "fields", "kind",
			 "name", "start_ns", "end_ns", "stream", "bytes", "correlation", "data", data,
			 "dropped", (json_int_t)dropped);
}

int rxr_result_add_gpu_trace(struct rxr_result *r, size_t max)
{
	const char *path = getenv("CUDA_INJECTION64_PATH");
	if (!path || !*path)
		return 0;
	void *h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
	if (!h)
		return 0; /* not loaded: no CUDA in this run, or another tool */
	int rc = 0;
	rxc_cupti_take_fn take = (rxc_cupti_take_fn)dlsym(h, RXC_CUPTI_TAKE_SYMBOL);
	struct rxc_cupti_rec *rec = NULL;
	if (!take)
		goto out;
	if (!max)
		max = 4096;
	rec = calloc(max, sizeof(*rec));
	if (!rec) {
		rc = -ENOMEM;
		goto out;
	}
	uint64_t dropped = 0;
	size_t n = take(rec, max, &dropped);
	if (!n)
		goto out;
	if (!r->extra && !(r->extra = json_object())) {
		rc = -ENOMEM;
		goto out;
	}
	json_t *g = gpu_trace_json(rec, n, dropped);
	if (!g || json_object_set_new(r->extra, "gpu_trace", g)) {
		rc = -ENOMEM;
		goto out;
	}
	rc = (int)n;
out:
	free(rec);
	dlclose(h);
	return rc;
}
