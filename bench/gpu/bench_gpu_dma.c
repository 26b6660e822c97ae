/* SPDX-License-Identifier: MIT */
/*
 * bench_gpu_dma: how fast the software NIC's DMA engine into GPU memory
 * (rxray/gpu.h, rxg_dma_*) moves packets on its own, with T CPU threads
 * (each its own engine, as each NIC writer has) doing what a NIC writer
 * does: stage each payload (memcpy into the pinned ring), submit every
 * `per-submit` pieces, retire landed tickets by polling, never waiting
 * unless the ring is full. Both ways of starting the copies
 * (rxg_dma_mode): a resident copy kernel fed through a doorbell, and a
 * kernel launch per submit.
 *
 *   Mpps, GB/s     pieces and bytes landed per second of wall time, all
 *                  threads together
 *   stage ns/pkt   CPU time writing the staging ring per piece
 *   submit ns/pkt  CPU time in rxg_dma_submit per piece (resident: a few
 *                  stores; launch: one scatter launch per submit)
 *   CPU ns/pkt     all threads' wall time over the pieces landed: the
 *                  NIC side's whole cost of a piece
 *   full waits     times a ring was full and its thread spun on
 *                  rxg_dma_done (the copies, not the CPU, were the limit)
 *
 * USAGE  bench_gpu_dma [--seconds S] [--mode resident|launch|both]
 *                      [--threads LIST] [--bytes LIST] [--per LIST]
 * EXAMPLE bench_gpu_dma --seconds 0.5 --threads 1,4 --bytes 1064,4064
 * Needs a CUDA GPU (exit 77 without one).
 */
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rxray/gpu.h"

#define POOL (64u << 20) /* destination buffers in GPU memory */
#define MAXT 16u
#define MAXL 8u

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

struct worker {
	struct rxg_dma *d;
	uint8_t *dst;   /* its own part of the pool */
	uint32_t slots; /* 16 KiB slots in it */
	uint32_t len, per;
	double t_end;
	uint64_t pieces, waits;
	double stage, submit, wall;
	int rc;
	pthread_t tid;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	static uint8_t src[16384];
	double t0 = now_ns();
	while (now_ns() < w->t_end) {
		for (uint32_t k = 0; k < w->per; k++) {
			uint8_t *to = w->dst + (size_t)((w->pieces + k) % w->slots) * 16384 + 128;
			void *s;
			double since = 0;
			while (!(s = rxg_dma_stage(w->d, to, w->len))) {
				w->waits++;
				rxg_dma_done(w->d);
				if (!since)
					since = now_ns();
				else if (now_ns() - since > 2e9) { /* copies stopped landing */
					rxg_stall_note("bench_gpu_dma: the staging ring stayed full 2 s");
					w->rc = -1;
					return NULL;
				}
			}
			double a = now_ns();
			memcpy(s, src, w->len);
			w->stage += now_ns() - a;
		}
		double a = now_ns();
		int64_t t = rxg_dma_submit(w->d);
		w->submit += now_ns() - a;
		if (t < 0) {
			w->rc = -1;
			break;
		}
		w->pieces += w->per;
		rxg_dma_done(w->d);
	}
	if (rxg_dma_drain(w->d) < 0)
		w->rc = -1;
	w->wall = now_ns() - t0;
	return NULL;
}

static int one(uint8_t *dst, enum rxg_dma_mode mode, uint32_t nt, uint32_t len, uint32_t per,
	       double seconds)
{
	struct worker w[MAXT];
	char err[256];
	int rc = 0;
	memset(w, 0, sizeof(w));
	/* every engine opened before any runs: an allocation waits for a
	 * resident kernel */
	for (uint32_t i = 0; i < nt; i++) {
		/* room for 16 submits in flight */
		if (rxg_dma_open(per * 16, (size_t)per * 16 * len, mode, &w[i].d, err,
				 sizeof(err)) < 0) {
			fprintf(stderr, "bench_gpu_dma: %s\n", err);
			rc = -1;
			break;
		}
		w[i].dst = dst + (size_t)i * (POOL / nt);
		w[i].slots = POOL / nt / 16384;
		w[i].len = len;
		w[i].per = per;
	}
	double t_end = now_ns() + seconds * 1e9;
	uint32_t started = 0;
	for (uint32_t i = 0; !rc && i < nt; i++) {
		w[i].t_end = t_end;
		if (pthread_create(&w[i].tid, NULL, work, &w[i]) != 0) {
			rc = -1;
			break;
		}
		started++;
	}
	for (uint32_t i = 0; i < started; i++)
		pthread_join(w[i].tid, NULL);
	/* every resident kernel off the GPU before anything is freed */
	for (uint32_t i = 0; i < nt; i++)
		if (w[i].d && rxg_dma_park(w[i].d) < 0)
			rc = -1;
	uint64_t pieces = 0, waits = 0;
	double stage = 0, submit = 0, wall = 0;
	for (uint32_t i = 0; i < started; i++) {
		rc |= w[i].rc;
		pieces += w[i].pieces;
		waits += w[i].waits;
		stage += w[i].stage;
		submit += w[i].submit;
		wall = w[i].wall > wall ? w[i].wall : wall;
	}
	if (!rc && pieces)
		printf("| %s | %u | %u | %u | %.2f | %.1f | %.1f | %.1f | %.1f | %llu |\n",
		       rxg_dma_mode_name(mode), nt, len, per, pieces * 1e3 / wall,
		       pieces * (double)len / wall, stage / pieces, submit / pieces,
		       wall * nt / pieces, (unsigned long long)waits);
	else
		fprintf(stderr, "bench_gpu_dma: a copy failed%s%s\n", rxg_stall() ? ": " : "",
			rxg_stall() ? rxg_stall() : "");
	for (uint32_t i = 0; i < nt; i++)
		rxg_dma_close(w[i].d);
	return rc;
}

static int parse_list(const char *s, uint32_t *out, uint32_t max, uint32_t lo, uint32_t hi)
{
	uint32_t n = 0;
	char buf[128];
	snprintf(buf, sizeof(buf), "%s", s);
	for (char *sv = NULL, *t = strtok_r(buf, ",", &sv); t; t = strtok_r(NULL, ",", &sv)) {
		char *end;
		unsigned long v = strtoul(t, &end, 10);
		if (*end || v < lo || v > hi || n == max)
			return -1;
		out[n++] = (uint32_t)v;
	}
	return (int)n;
}

int main(int argc, char **argv)
{
	double seconds = 0.5;
	int modes = 3; /* bit 0 resident, bit 1 launch */
	uint32_t threads[MAXL] = {1, 4}, lens[MAXL] = {1064, 4064}, pers[MAXL] = {32, 128, 512};
	int nthr = 2, nlen = 2, nper = 3;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--seconds") && v)
			seconds = atof(v);
		else if (!strcmp(a, "--mode") && v)
			modes = !strcmp(v, "resident") ? 1 : !strcmp(v, "launch") ? 2 : !strcmp(v, "both") ? 3 : 0;
		else if (!strcmp(a, "--threads") && v)
			nthr = parse_list(v, threads, MAXL, 1, MAXT);
		else if (!strcmp(a, "--bytes") && v)
			nlen = parse_list(v, lens, MAXL, 64, 16000);
		else if (!strcmp(a, "--per") && v)
			nper = parse_list(v, pers, MAXL, 1, 1024);
		else {
			fprintf(stderr, "USAGE bench_gpu_dma [--seconds S] [--mode resident|launch|both] "
					"[--threads LIST] [--bytes LIST] [--per LIST]\n");
			return 2;
		}
		i++;
		if (!modes || nthr <= 0 || nlen <= 0 || nper <= 0) {
			fprintf(stderr, "bench_gpu_dma: %s %s: bad value (modes resident, launch, both; "
					"threads 1..%u; bytes 64..16000; per 1..1024)\n",
				a, v, MAXT);
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
		printf("# bench_gpu_dma on %s: %.1f s per row, each thread its own engine with a "
		       "staging ring of 16 submits\n\n",
		       di.name, seconds);
	printf("| copies | threads | bytes | per submit | Mpps | GB/s | stage ns/pkt | submit ns/pkt "
	       "| CPU ns/pkt | full waits |\n");
	printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
	for (int m = 0; m < 2; m++)
		for (int ti = 0; ti < nthr; ti++)
			for (int li = 0; li < nlen; li++)
				for (int pi = 0; pi < nper; pi++)
					if ((modes >> m & 1) &&
					    one(dst, m ? RXG_DMA_LAUNCH : RXG_DMA_RESIDENT, threads[ti],
						lens[li], pers[pi], seconds) < 0)
						return 1;
	cudaFree(dst);
	return 0;
}
