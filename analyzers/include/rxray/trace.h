/* SPDX-License-Identifier: MIT */
/*
 * Chrome trace-event JSON (opens in Perfetto and chrome://tracing) from run
 * results: one process per run, one track per thread ("rx (core 1)").
 * Threads that carry sampled per-packet laps (full probe mode) get one
 * complete ("X") event per lap at its real time (cat "lap", named by its
 * stage), nested in a span per sampled burst (cat "burst", args seq);
 * threads without samples get one representative packet laid out from the
 * stage summaries (each stage a span of its mean cycles/packet), marked
 * "summary" in args.
 *
 * GPU records: a run result may carry "gpu_trace" (written when the CUPTI
 * injection library was loaded into the run, see rxray/cupti.h):
 *   {"source": "cupti",
 *    "clock": {"domain": "monotonic_ns", "anchor_ticks": T, "anchor_ns": N},
 *    "fields": ["kind", "name", "start_ns", "end_ns", "stream", "bytes",
 *               "correlation"],
 *    "data": [["kernel", "rxg_reorder", 123, 456, 13, 0, 77], ...],
 *    "dropped": 0}
 * kind is kernel | memcpy | memset; times are CLOCK_MONOTONIC ns, and the
 * anchor is one instant read on both clocks, so a record sits at
 * T + (ns - N) x hz / 1e9 run ticks, on the laps' time line. Each CUDA
 * stream becomes a track "gpu stream S" after the CPU threads; kernels
 * have cat "gpu_kernel", copies "gpu_copy", memsets "memset".
 */
#ifndef RXRAY_TRACE_H
#define RXRAY_TRACE_H

#include <stddef.h>
#include <stdio.h>

#include "rxray/result.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Check r's gpu_trace member (absent is fine): 0, or -EINVAL with one line
 * naming the field ("gpu_trace.data[3][2]: ...") in err.
 */
int rxa_trace_gpu_check(const struct rxr_result *r, char *err, size_t errlen);

/*
 * Write runs[0..n-1] (names[i] labels process i; NULL = "run i") as one
 * trace document. 0, -EINVAL (n == 0, a run without clock hz or with a
 * malformed gpu_trace), -EIO, -ENOMEM.
 */
int rxa_trace_write(const struct rxr_result *const *runs, const char *const *names, size_t n,
		    FILE *out);

#ifdef __cplusplus
}
#endif
#endif
