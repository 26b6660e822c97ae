/* SPDX-License-Identifier: MIT */
/* A stand-in for librxray_cupti.so's export (no GPU): two records, a copy
 * then a kernel, ending 1 us before the call on CLOCK_MONOTONIC. */
#include <stdio.h>
#include <time.h>

#include "rxray/cupti.h"

__attribute__((visibility("default"))) size_t rxc_cupti_take(struct rxc_cupti_rec *out,
								size_t max, uint64_t *dropped);

size_t rxc_cupti_take(struct rxc_cupti_rec *out, size_t max, uint64_t *dropped)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	if (max < 2)
		return 0;
	out[0] = (struct rxc_cupti_rec){.start_ns = now - 5000, .end_ns = now - 4000, .bytes = 4096,
					.stream = 13, .correlation = 7, .kind = RXC_CUPTI_MEMCPY};
	snprintf(out[0].name, sizeof(out[0].name), "memcpy HtoD");
	out[1] = (struct rxc_cupti_rec){.start_ns = now - 3000, .end_ns = now - 1000, .stream = 13,
					.correlation = 8, .kind = RXC_CUPTI_KERNEL};
	snprintf(out[1].name, sizeof(out[1].name), "rxg_reorder");
	*dropped = 3;
	return 2;
}
