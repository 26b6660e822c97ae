/* SPDX-License-Identifier: MIT */
/*
 * bench_gpu_stage: what the GPU consumer stage costs per packet, and the
 * receive ceiling it sets, for each work kind over batch sizes and frame
 * sizes, on payloads already in GPU memory (as GPUDirect lands them).
 *
 *   GPU ns/pkt   kernel time (CUDA events, the address-list copy included)
 *                per packet, median of --runs runs
 *   GPU Mpps     1000 / GPU ns/pkt: the ceiling if the GPU were the
 *                bottleneck (one stream, one batch at a time in flight
 *                being timed; `depth` batches queued)
 *   launch ns/pkt CPU time in rxg_submit per packet (what the app thread
 *                pays to launch: stage gpu_launch)
 *
 * USAGE  bench_gpu_stage [--runs N] [--batches N]
 * Prints a markdown table. Needs a CUDA GPU (exit 77 without one).
 */
#include <cuda_runtime.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rxray/gpu.h"

#define HDR 64u         /* hds: the header stays on the host */
#define POOL 8192u      /* payload buffers, as a ring of 8192 */

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

struct res {
	double gpu_ns, launch_ns;
};

static int one(enum rxg_work w, uint32_t batch, uint32_t frame, uint32_t nbatches, uint8_t *pool,
	       struct res *out)
{
	uint32_t pay = frame - HDR;
	struct rxg_params p = {w, batch, 8, pay, POOL, 0};
	struct rxg_consumer *g = NULL;
	char err[256];
	if (rxg_consumer_open(&p, &g, err, sizeof(err)) < 0) {
		fprintf(stderr, "bench_gpu_stage: %s\n", err);
		return -1;
	}
	void **addr = calloc(batch, sizeof(*addr));
	uint64_t *seq = calloc(batch, sizeof(*seq));
	if (!addr || !seq) {
		free(addr);
		free(seq);
		rxg_consumer_close(g);
		return -1;
	}
	uint64_t s = 0;
	double launch = 0;
	/* warm-up: module load and first launches stay out of the figures */
	for (uint32_t b = 0; b < nbatches + 8; b++) {
		if (b == 8) {
			while (rxg_retire(g, true) > 0)
				;
			struct rxg_stats z;
			rxg_consumer_stats(g, &z);
			launch = 0;
			out->gpu_ns = z.kernel_ms; /* subtracted below */
		}
		for (uint32_t k = 0; k < batch; k++, s++) {
			addr[k] = pool + (size_t)(s % POOL) * 8192;
			seq[k] = s;
		}
		while (rxg_inflight(g) >= 8)
			rxg_retire(g, true);
		double t0 = now_ns();
		rxg_submit(g, addr, seq, batch);
		launch += now_ns() - t0;
	}
	while (rxg_retire(g, true) > 0)
		;
	struct rxg_stats st;
	rxg_consumer_stats(g, &st);
	double pk = (double)nbatches * batch;
	out->gpu_ns = (st.kernel_ms - out->gpu_ns) * 1e6 / pk;
	out->launch_ns = launch / pk;
	free(addr);
	free(seq);
	rxg_consumer_close(g);
	return 0;
}

int main(int argc, char **argv)
{
	uint32_t runs = 5, nbatches = 200;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--runs") && i + 1 < argc)
			runs = (uint32_t)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--batches") && i + 1 < argc)
			nbatches = (uint32_t)atoi(argv[++i]);
		else {
			fprintf(stderr, "USAGE bench_gpu_stage [--runs N] [--batches N]\n");
			return 2;
		}
	}
	if (runs < 1 || runs > 99 || nbatches < 1) {
		fprintf(stderr, "bench_gpu_stage: --runs 1..99, --batches >= 1\n");
		return 2;
	}
	char why[160];
	if (!rxg_available(why, sizeof(why))) {
		fprintf(stderr, "bench_gpu_stage: needs a CUDA GPU: %s\n", why);
		return 77;
	}
	uint8_t *pool = NULL;
	if (cudaMalloc((void **)&pool, (size_t)POOL * 8192) != cudaSuccess) {
		fprintf(stderr, "bench_gpu_stage: cudaMalloc failed\n");
		return 1;
	}
	cudaMemset(pool, 0x5a, (size_t)POOL * 8192);
	struct cudaDeviceProp prop;
	cudaGetDeviceProperties(&prop, 0);
	printf("# bench_gpu_stage on %s: median of %u runs x %u batches, payload pool of %u "
	       "buffers in GPU memory (header %u B on the host)\n\n",
	       prop.name, runs, nbatches, POOL, HDR);
	printf("| work | frame | batch | GPU ns/pkt | GPU-bound Mpps | launch ns/pkt |\n");
	printf("|---|---:|---:|---:|---:|---:|\n");
	static const enum rxg_work works[] = {RXG_WORK_NONE, RXG_WORK_REORDER, RXG_WORK_CHECKSUM};
	static const uint32_t frames[] = {1064, 4064, 8064};
	static const uint32_t batches[] = {16, 64, 256, 1024};
	double g[99], l[99];
	for (size_t wi = 0; wi < 3; wi++)
		for (size_t fi = 0; fi < 3; fi++)
			for (size_t bi = 0; bi < 4; bi++) {
				for (uint32_t r = 0; r < runs; r++) {
					struct res x = {0, 0};
					if (one(works[wi], batches[bi], frames[fi], nbatches, pool,
						&x) < 0)
						return 1;
					g[r] = x.gpu_ns;
					l[r] = x.launch_ns;
				}
				qsort(g, runs, sizeof(g[0]), cmp_d);
				qsort(l, runs, sizeof(l[0]), cmp_d);
				double gm = g[runs / 2], lm = l[runs / 2];
				printf("| %s | %u | %u | %.2f | %.1f | %.1f |\n",
				       rxg_work_name(works[wi]), frames[fi], batches[bi], gm,
				       gm > 0 ? 1e3 / gm : 0, lm);
			}
	cudaFree(pool);
	return 0;
}
