/* SPDX-License-Identifier: MIT */
/*
 * bench_gpu_dma: how fast the software NIC's DMA engine into GPU memory
 * (rxray/gpu.h, rxg_dma_*) moves packets on its own, with one CPU thread
 * doing what a NIC thread does: stage each payload (memcpy into the
 * pinned ring), submit every `per-submit` pieces, retire landed tickets by
 * polling, never waiting unless the ring is full.
 *
 *   Mpps, GB/s     pieces and bytes landed per second of wall time
 *   stage ns/pkt   CPU time writing the staging ring per piece
 *   submit us      CPU time per rxg_dma_submit (one scatter launch)
 *   full waits     times the ring was full and the thread spun on
 *                  rxg_dma_done (the copies, not the CPU, were the limit)
 *
 * USAGE  bench_gpu_dma [--seconds S]
 * Needs a CUDA GPU (exit 77 without one).
 */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rxray/gpu.h"

#define POOL (64u << 20) /* destination buffers in GPU memory */

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int one(uint8_t *dst, uint32_t len, uint32_t per, double seconds)
{
	struct rxg_dma *d = NULL;
	char err[256];
	/* room for 16 submits in flight */
	if (rxg_dma_open(per * 16, (size_t)per * 16 * len, &d, err, sizeof(err)) < 0) {
		fprintf(stderr, "bench_gpu_dma: %s\n", err);
		return -1;
	}
	static uint8_t src[16384];
	memset(src, 0xa5, sizeof(src));
	uint32_t slots = POOL / 16384;
	uint64_t pieces = 0, submits = 0, waits = 0;
	double stage = 0, submit = 0, t_end = now_ns() + seconds * 1e9, t0 = now_ns();
	int rc = 0;
	while (now_ns() < t_end) {
		for (uint32_t k = 0; k < per; k++) {
			uint8_t *to = dst + (size_t)((pieces + k) % slots) * 16384 + 128;
			void *s;
			while (!(s = rxg_dma_stage(d, to, len))) {
				waits++;
				rxg_dma_done(d);
			}
			double a = now_ns();
			memcpy(s, src, len);
			stage += now_ns() - a;
		}
		double a = now_ns();
		int64_t t = rxg_dma_submit(d);
		submit += now_ns() - a;
		if (t < 0) {
			rc = -1;
			break;
		}
		submits++;
		pieces += per;
		rxg_dma_done(d);
	}
	if (rxg_dma_drain(d) < 0)
		rc = -1;
	double wall = now_ns() - t0;
	if (!rc)
		printf("| %u | %u | %.2f | %.1f | %.1f | %.2f | %llu |\n", len, per,
		       pieces * 1e3 / wall, pieces * (double)len / wall, stage / pieces,
		       submit / submits / 1e3, (unsigned long long)waits);
	else
		fprintf(stderr, "bench_gpu_dma: a copy failed\n");
	rxg_dma_close(d);
	return rc;
}

int main(int argc, char **argv)
{
	double seconds = 0.5;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			seconds = atof(argv[++i]);
		else {
			fprintf(stderr, "USAGE bench_gpu_dma [--seconds S]\n");
			return 2;
		}
	}
	if (!(seconds > 0)) {
		fprintf(stderr, "bench_gpu_dma: --seconds > 0\n");
		return 2;
	}
	char why[160];
	if (!rxg_available(why, sizeof(why))) {
		fprintf(stderr, "bench_gpu_dma: needs a CUDA GPU: %s\n", why);
		return 77;
	}
	uint8_t *dst = NULL;
	if (cudaMalloc((void **)&dst, POOL) != cudaSuccess) {
		fprintf(stderr, "bench_gpu_dma: cudaMalloc failed\n");
		return 1;
	}
	struct rxg_device_info di;
	char err[256];
	if (rxg_device_info(0, &di, err, sizeof(err)) == 0)
		printf("# bench_gpu_dma on %s: one thread, %.1f s per row, staging ring of 16 "
		       "submits\n\n",
		       di.name, seconds);
	printf("| bytes | per submit | Mpps | GB/s | stage ns/pkt | submit us | full waits |\n");
	printf("|---:|---:|---:|---:|---:|---:|---:|\n");
	static const uint32_t lens[] = {1000, 2000, 4000, 8000};
	static const uint32_t pers[] = {32, 64, 128, 256, 512};
	for (size_t li = 0; li < 4; li++)
		for (size_t pi = 0; pi < 5; pi++)
			if (one(dst, lens[li], pers[pi], seconds) < 0)
				return 1;
	cudaFree(dst);
	return 0;
}
