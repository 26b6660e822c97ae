/* SPDX-License-Identifier: MIT */
/*
 * bench_gpu_stage: what the GPU consumer stage costs per packet, and the
 * receive ceiling it sets, for each work kind and launch mode over batch
 * sizes and frame sizes, on payloads already in GPU memory (as GPUDirect
 * lands them).
 *
 *   GPU ns/pkt     kernel time per packet (the GPU's global timer, first
 *                  block's start to last block's end), median of --runs
 *   GPU Mpps       1000 / GPU ns/pkt: the ceiling if the GPU's work were
 *                  the bottleneck
 *   GB/s, % peak   bytes the kernel moves (reorder: payload read + written;
 *                  checksum: read) over its time, and that as a share of
 *                  the device's peak (2 x memory clock x bus width, from
 *                  the device's attributes)
 *   launch ns/pkt  CPU time in rxg_submit per packet (stage gpu_launch);
 *   launch us/b    the same per batch
 *   stream Mpps    packets / wall time of the whole loop, 8 batches in
 *                  flight: what one app thread gets end to end
 *
 * USAGE  bench_gpu_stage [--runs N] [--batches N] [--work W] [--launch L] [--frame F]
 *                        [--batch B]   (the last four: only those rows)
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

#define HDR 64u	    /* hds: the header stays on the host */
#define POOL 32768u /* payload buffers of 8 KiB: 256 MiB, several times the L2 */
#define DEPTH 8u

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
	double gpu_ns, launch_ns, stream_mpps;
};

static int one(enum rxg_work w, enum rxg_launch l, uint32_t batch, uint32_t frame,
	       uint32_t nbatches, uint8_t *pool, struct res *out)
{
	uint32_t pay = frame - HDR;
	struct rxg_params p = {w, batch, DEPTH, pay, POOL, 0, l, 0};
	struct rxg_consumer *g = NULL;
	char err[256];
	if (rxg_consumer_open(&p, &g, err, sizeof(err)) < 0) {
		fprintf(stderr, "bench_gpu_stage: %s\n", err);
		return -1;
	}
	void **addr = calloc(batch, sizeof(*addr));
	uint64_t *seq = calloc(batch, sizeof(*seq));
	int rc = -1;
	if (!addr || !seq)
		goto out;
	uint64_t s = 0;
	double launch = 0, t_start = 0;
	/* warm-up: module load and first launches stay out of the figures */
	for (uint32_t b = 0; b < nbatches + 8; b++) {
		if (b == 8) {
			while (rxg_retire(g, true) > 0)
				;
			rxg_consumer_stats_reset(g);
			launch = 0;
			t_start = now_ns();
		}
		for (uint32_t k = 0; k < batch; k++, s++) {
			addr[k] = pool + (size_t)(s % POOL) * 8192;
			seq[k] = s;
		}
		while (rxg_inflight(g) >= DEPTH)
			if (rxg_retire(g, true) < 0)
				goto out;
		double t0 = now_ns();
		int sr = rxg_submit(g, addr, seq, batch);
		launch += now_ns() - t0;
		if (sr < 0) {
			fprintf(stderr, "bench_gpu_stage: submit: %s\n", strerror(-sr));
			goto out;
		}
	}
	int r;
	while ((r = rxg_retire(g, true)) > 0)
		;
	if (r < 0)
		goto out;
	double wall = now_ns() - t_start;
	struct rxg_stats st;
	rxg_consumer_stats(g, &st);
	double pk = (double)nbatches * batch;
	out->gpu_ns = st.kernel_ms * 1e6 / pk;
	out->launch_ns = launch / pk;
	out->stream_mpps = pk * 1e3 / wall;
	rc = 0;
out:
	free(addr);
	free(seq);
	rxg_consumer_close(g);
	return rc;
}

int main(int argc, char **argv)
{
	uint32_t runs = 5, nbatches = 200, only_frame = 0, only_batch = 0;
	const char *only_work = NULL, *only_launch = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--runs") && i + 1 < argc)
			runs = (uint32_t)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--work") && i + 1 < argc)
			only_work = argv[++i];
		else if (!strcmp(argv[i], "--launch") && i + 1 < argc)
			only_launch = argv[++i];
		else if (!strcmp(argv[i], "--frame") && i + 1 < argc)
			only_frame = (uint32_t)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--batch") && i + 1 < argc)
			only_batch = (uint32_t)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--batches") && i + 1 < argc)
			nbatches = (uint32_t)atoi(argv[++i]);
		else {
			fprintf(stderr, "USAGE bench_gpu_stage [--runs N] [--batches N] [--work W] "
					"[--launch L] [--frame F] [--batch B]\n");
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
	struct rxg_device_info di;
	char err[256];
	if (rxg_device_info(0, &di, err, sizeof(err)) < 0) {
		fprintf(stderr, "bench_gpu_stage: %s\n", err);
		return 1;
	}
	uint8_t *pool = NULL;
	if (cudaMalloc((void **)&pool, (size_t)POOL * 8192) != cudaSuccess ||
	    cudaMemset(pool, 0x5a, (size_t)POOL * 8192) != cudaSuccess ||
	    cudaDeviceSynchronize() != cudaSuccess) {
		fprintf(stderr, "bench_gpu_stage: cannot set up the payload pool in GPU memory\n");
		return 1;
	}
	printf("# bench_gpu_stage on %s (%u SMs, L2 %.0f MiB, memory %u kHz x %u bit: peak "
	       "%.0f GB/s): median of %u runs x %u batches, %u in flight, payload pool of %u "
	       "buffers (%.0f MiB) in GPU memory (header %u B on the host)\n\n",
	       di.name, di.sms, (double)di.l2_bytes / 1048576.0, di.mem_clock_khz, di.bus_bits,
	       di.peak_gbs, runs, nbatches, DEPTH, POOL, POOL * 8192.0 / 1048576.0, HDR);
	printf("| work | launch | frame | batch | GPU ns/pkt | GPU Mpps | GB/s | %% peak | "
	       "launch ns/pkt | launch us/b | stream Mpps |\n");
	printf("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
	static const enum rxg_work works[] = {RXG_WORK_NONE, RXG_WORK_REORDER, RXG_WORK_CHECKSUM};
	static const enum rxg_launch launches[] = {RXG_LAUNCH_KERNEL, RXG_LAUNCH_GRAPH,
						   RXG_LAUNCH_PERSISTENT};
	static const uint32_t frames[] = {1064, 2064, 4064, 8064};
	static const uint32_t batches[] = {16, 64, 256, 1024};
	double g[99], l[99], m[99];
	for (size_t wi = 0; wi < 3; wi++)
		for (size_t li = 0; li < 3; li++) {
			/* no kernel for work none: every launch mode is the same */
			if (works[wi] == RXG_WORK_NONE && li > 0)
				continue;
			if ((only_work && strcmp(only_work, rxg_work_name(works[wi]))) ||
			    (only_launch && strcmp(only_launch, rxg_launch_name(launches[li]))))
				continue;
			for (size_t fi = 0; fi < 4; fi++)
				for (size_t bi = 0; bi < 4; bi++) {
					if ((only_frame && only_frame != frames[fi]) ||
					    (only_batch && only_batch != batches[bi]))
						continue;
					for (uint32_t r = 0; r < runs; r++) {
						struct res x = {0, 0, 0};
						if (one(works[wi], launches[li], batches[bi],
							frames[fi], nbatches, pool, &x) < 0)
							return 1;
						g[r] = x.gpu_ns;
						l[r] = x.launch_ns;
						m[r] = x.stream_mpps;
					}
					qsort(g, runs, sizeof(g[0]), cmp_d);
					qsort(l, runs, sizeof(l[0]), cmp_d);
					qsort(m, runs, sizeof(m[0]), cmp_d);
					double gm = g[runs / 2], lm = l[runs / 2];
					uint32_t pay = frames[fi] - HDR;
					double bytes = works[wi] == RXG_WORK_REORDER ? 2.0 * pay
						       : works[wi] == RXG_WORK_CHECKSUM
							   ? (double)pay
							   : 0.0;
					double gbs = gm > 0 ? bytes / gm : 0;
					printf("| %s | %s | %u | %u | %.2f | %.1f | %.0f | %.1f | "
					       "%.1f | "
					       "%.2f | %.2f |\n",
					       rxg_work_name(works[wi]),
					       works[wi] == RXG_WORK_NONE
						   ? "-"
						   : rxg_launch_name(launches[li]),
					       frames[fi], batches[bi], gm, gm > 0 ? 1e3 / gm : 0,
					       gbs, di.peak_gbs > 0 ? 100.0 * gbs / di.peak_gbs : 0,
					       lm, lm * batches[bi] / 1e3, m[runs / 2]);
					fflush(stdout);
				}
		}
	cudaFree(pool);
	return 0;
}
