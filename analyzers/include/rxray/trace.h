/* SPDX-License-Identifier: MIT */
/*
 * Chrome trace-event JSON (opens in Perfetto and chrome://tracing) from run
 * results: one process per run, one track per thread ("rx (core 1)").
 * Threads that carry sampled per-packet laps (full probe mode) get one
 * complete ("X") event per lap at its real time; threads without samples
 * get one representative packet laid out from the stage summaries (each
 * stage a span of its mean cycles/packet), marked "summary" in args.
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
 * Write runs[0..n-1] (names[i] labels process i; NULL = "run i") as one
 * trace document. 0, -EINVAL (n == 0 or a run without clock hz), -EIO,
 * -ENOMEM.
 */
int rxr_trace_write(const struct rxr_result *const *runs, const char *const *names, size_t n,
		    FILE *out);

#ifdef __cplusplus
}
#endif
#endif
