/* SPDX-License-Identifier: MIT */
/*
 * bench_gpu_link: the host <-> GPU link's own figures (rxray/gpu.h,
 * rxg_link_*), which bound the software NIC's DMA engine into GPU memory
 * and the consumer's launch modes: a GPU's dependent read of pinned host
 * memory, SM read bandwidth from it, the copy engine's time per copy, the
 * CPU cost of the launch path's calls, launch rate from several threads,
 * and a doorbell's round trip through mapped memory. Median of --runs.
 *
 * USAGE  bench_gpu_link [--runs N]
 * Needs a CUDA GPU (exit 77 without one).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rxray/gpu.h"

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double med(double *v, unsigned n)
{
	qsort(v, n, sizeof(*v), cmp_d);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#define MED(expr)                                                                            \
	({                                                                                   \
		double v_[16];                                                               \
		for (unsigned r_ = 0; r_ < runs; r_++)                                       \
			v_[r_] = (expr);                                                     \
		med(v_, runs);                                                               \
	})

int main(int argc, char **argv)
{
	unsigned runs = 3;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--runs") && i + 1 < argc)
			runs = (unsigned)atoi(argv[++i]);
		else {
			fprintf(stderr, "USAGE bench_gpu_link [--runs N]\n");
			return 2;
		}
	}
	if (runs < 1 || runs > 15) {
		fprintf(stderr, "bench_gpu_link: --runs 1..15\n");
		return 2;
	}
	char why[160];
	if (!rxg_available(why, sizeof(why))) {
		printf("bench_gpu_link: skipped: %s\n", why);
		return 77;
	}
	struct rxg_device_info di;
	char err[256];
	if (rxg_device_info(0, &di, err, sizeof(err)) == 0)
		printf("# %s, %u SMs, median of %u runs\n", di.name, di.sms, runs);

	printf("\n| dependent GPU read of | us per read |\n|---|---:|\n");
	static const char *where[] = {"pinned host memory", "pinned host memory, write-combined",
				      "device memory"};
	for (int w = 0; w < 3; w++)
		printf("| %s | %.3f |\n", where[w], MED(rxg_link_chase_us(w, w == 2 ? 4096 : 256)));

	printf("\n| SM reads of pinned host memory | blocks | GB/s |\n|---|---:|---:|\n");
	static const unsigned blocks[] = {4, 16, 66, 132, 528};
	for (int wc = 0; wc < 2; wc++)
		for (unsigned b = 0; b < sizeof(blocks) / sizeof(blocks[0]); b++)
			printf("| %s | %u | %.1f |\n", wc ? "write-combined" : "cached", blocks[b],
			       MED(rxg_link_read_gbs(wc, blocks[b], 64u << 20)));

	printf("\n| copy engine, pinned -> device | bytes | in flight | us per copy | GB/s |\n"
	       "|---|---:|---:|---:|---:|\n");
	static const size_t sz[] = {4096, 65536, 1u << 20};
	static const unsigned fl[] = {1, 16};
	for (unsigned s = 0; s < 3; s++)
		for (unsigned f = 0; f < 2; f++) {
			double g = 0, us = MED(rxg_link_h2d_us(sz[s], fl[f], 256, &g));
			printf("| | %zu | %u | %.2f | %.1f |\n", sz[s], fl[f], us, g);
		}

	printf("\n| CPU cost of | ns per call |\n|---|---:|\n");
	static const char *api[] = {"launch, 16 B parameters", "launch, 1 KiB parameters",
				    "launch, 4 KiB parameters", "launch, 16 KiB parameters",
				    "cudaGraphLaunch (one kernel)", "cudaMemcpyAsync 4 KiB H2D",
				    "cudaEventRecord"};
	for (int a = 0; a < 7; a++)
		printf("| %s | %.0f |\n", api[a], MED(rxg_link_api_ns(a, 4096)));

	printf("\n| launching threads (a stream each, 1 KiB parameters) | M launches/s |\n"
	       "|---:|---:|\n");
	static const unsigned th[] = {1, 2, 4, 8};
	for (unsigned t = 0; t < 4; t++)
		printf("| %u | %.3f |\n", th[t], MED(rxg_link_launch_mps(th[t], 4096)));

	printf("\n| doorbell round trip through mapped memory | us |\n|---|---:|\n");
	printf("| CPU store -> resident GPU thread -> CPU | %.2f |\n",
	       MED(rxg_link_doorbell_us(2000)));

	printf("\n| a batch of 64 addresses to a kernel and back, one at a time | us per batch |\n"
	       "|---|---:|\n");
	static const char *bm[] = {"launch, addresses in parameters",
				   "launch, addresses read from mapped memory",
				   "graph launch, addresses read from mapped memory",
				   "resident kernel rung through mapped memory",
				   "consumer's grid, rewritten addresses read scattered",
				   "consumer's grid, rewritten addresses read coalesced"};
	for (int m = 0; m < 6; m++)
		printf("| %s | %.2f |\n", bm[m], MED(rxg_link_batch_us(m, 64, 2000)));
	return 0;
}
