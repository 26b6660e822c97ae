/* SPDX-License-Identifier: MIT */
/*
 * GPU activity from the CUPTI injection library into the run result.
 *
 * librxray_cupti.so (cupti/) is loaded by the CUDA driver when
 * CUDA_INJECTION64_PATH names it; it keeps CUPTI's kernel, memcpy and
 * memset records with CLOCK_MONOTONIC times and exports
 * RXC_CUPTI_TAKE_SYMBOL so the measured process can copy them out before
 * it writes its result. rxray never links CUPTI: rxr_result_add_gpu_trace
 * finds the library already loaded (dlopen RTLD_NOLOAD) or does nothing.
 */
#ifndef RXRAY_CUPTI_H
#define RXRAY_CUPTI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum rxc_cupti_kind { RXC_CUPTI_KERNEL = 0, RXC_CUPTI_MEMCPY, RXC_CUPTI_MEMSET };

#define RXC_CUPTI_NAME_MAX 96

/* One GPU activity record; times are CLOCK_MONOTONIC nanoseconds. */
struct rxc_cupti_rec {
	uint64_t start_ns, end_ns;
	uint64_t bytes;       /* copies and memsets; 0 for kernels */
	uint32_t stream;      /* CUDA stream id */
	uint32_t correlation; /* CUPTI correlation id (ties a launch to its API call) */
	uint32_t kind;        /* enum rxc_cupti_kind */
	char name[RXC_CUPTI_NAME_MAX]; /* kernel name, "memcpy HtoD", ... */
};

/*
 * The library's export: flush CUPTI's buffers, copy the newest records (up
 * to max, oldest first) into out, return how many; *dropped = records
 * CUPTI or the library's bound lost so far. Thread-safe.
 */
typedef size_t (*rxc_cupti_take_fn)(struct rxc_cupti_rec *out, size_t max, uint64_t *dropped);
#define RXC_CUPTI_TAKE_SYMBOL "rxc_cupti_take"

struct rxr_result;

/*
 * When librxray_cupti.so is loaded in this process (the path in
 * CUDA_INJECTION64_PATH), add its newest max records (0 = 4096) to r as the
 * member "gpu_trace" (format in rxray/trace.h) with an anchor pair read on
 * the run clock and CLOCK_MONOTONIC. Returns the number of records added
 * (0 when the library is absent or held none), or -ENOMEM.
 */
int rxr_result_add_gpu_trace(struct rxr_result *r, size_t max);

#ifdef __cplusplus
}
#endif
#endif /* RXRAY_CUPTI_H */
