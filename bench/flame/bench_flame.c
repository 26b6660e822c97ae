/* SPDX-License-Identifier: MIT */
/*
 * bench_flame: how long folded stacks take to become a flame graph SVG.
 * Generates N folded lines (default 1,000,000). Shape "perf" (default) is
 * like stackcollapse output: sorted, so each line shares most of its stack
 * with the previous one (about 2 new frames per line), names from a
 * 2,000-name vocabulary with hot low ids. Shape "random" draws every stack
 * independently (about 12 new frames per line: the worst case). Times
 * read+merge and SVG writing, median of R runs (default 3). Prints a
 * table; never fails on time.
 * USAGE: bench_flame [lines] [runs] [perf|random]
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rxray/flame.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static long file_size(const char *p)
{
	FILE *f = fopen(p, "r");
	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fclose(f);
	return n;
}

int main(int argc, char **argv)
{
	long lines = argc > 1 ? atol(argv[1]) : 1000000;
	int runs = argc > 2 ? atoi(argv[2]) : 3;
	bool shape_random = argc > 3 && !strcmp(argv[3], "random");
	if (lines <= 0 || runs <= 0 || runs > 99 || (argc > 3 && !shape_random && strcmp(argv[3], "perf"))) {
		fprintf(stderr, "USAGE: bench_flame [lines > 0] [runs 1..99] [perf|random]\n");
		return 2;
	}
	char in[] = "/tmp/bench_flame_inXXXXXX", out[] = "/tmp/bench_flame_outXXXXXX";
	int fd = mkstemp(in), fd2 = mkstemp(out);
	if (fd < 0 || fd2 < 0) {
		perror("mkstemp");
		return 1;
	}
	close(fd2);
	FILE *f = fdopen(fd, "w");
	uint64_t seed = 0x9e3779b97f4a7c15ULL;
	unsigned stack[64];
	int depth = 0;
	for (long i = 0; i < lines; i++) {
		if (shape_random) {
			/* adversarial: independent stacks, little prefix sharing */
			depth = 4 + (int)(rng_next(&seed) % 25);
			for (int d = 0; d < depth; d++) {
				unsigned spread = 2u + (unsigned)d * 80u;
				unsigned r = (unsigned)(rng_next(&seed) % spread);
				stack[d] = (r * r) / spread % 2000;
			}
		} else {
			/* perf-like: sorted folded output, each line a neighbour of the
			 * previous one (pop a few frames, push a few) */
			int pop = 1 + (int)(rng_next(&seed) % 3);
			if (rng_next(&seed) % 50 == 0)
				pop += (int)(rng_next(&seed) % 20);
			depth = depth - pop < 3 ? 3 : depth - pop;
			int push = 1 + (int)(rng_next(&seed) % 3);
			for (int k = 0; k < push && depth < 48; k++) {
				unsigned r = (unsigned)(rng_next(&seed) % 2000);
				stack[depth++] = (r * r) / 2000; /* skewed: low ids are hot */
			}
		}
		for (int d = 0; d < depth; d++)
			fprintf(f, "%sfunc_%u_%s", d ? ";" : "", stack[d], d % 3 ? "rx" : "lib");
		fprintf(f, " %u\n", 1 + (unsigned)(rng_next(&seed) % 100));
	}
	fclose(f);

	double *tr = calloc((size_t)runs, sizeof(double)), *ts = calloc((size_t)runs, sizeof(double));
	double *tc = calloc((size_t)runs, sizeof(double));
	size_t frames = 0;
	double total = 0;
	for (int r = 0; r < runs; r++) {
		struct rxa_flame *fl = NULL;
		rxa_flame_open(&fl);
		char err[256];
		double t0 = now_s(), c0 = cpu_s();
		if (!fl || rxa_flame_read_folded_file(fl, in, err, sizeof(err))) {
			fprintf(stderr, "bench_flame: read failed: %s\n", err);
			return 1;
		}
		double t1 = now_s();
		struct rxa_flame_svg_opts o = {.title = "bench_flame"};
		if (rxa_flame_svg_write_file(fl, out, &o)) {
			fprintf(stderr, "bench_flame: svg write failed\n");
			return 1;
		}
		double t2 = now_s();
		tc[r] = cpu_s() - c0;
		tr[r] = t1 - t0;
		ts[r] = t2 - t1;
		frames = rxa_flame_frames(fl);
		total = rxa_flame_total(fl);
		rxa_flame_free(fl);
	}
	double *tt = calloc((size_t)runs, sizeof(double));
	for (int r = 0; r < runs; r++)
		tt[r] = tr[r] + ts[r];
	qsort(tr, (size_t)runs, sizeof(double), cmp_d);
	qsort(ts, (size_t)runs, sizeof(double), cmp_d);
	qsort(tt, (size_t)runs, sizeof(double), cmp_d);
	qsort(tc, (size_t)runs, sizeof(double), cmp_d);
	printf("shape: %s\n", shape_random ? "random" : "perf");
	printf("| lines | input MB | frames | total weight | read+merge s | svg s | folded->svg s (median of %d) | CPU s | svg KB |\n",
	       runs);
	printf("|---|---|---|---|---|---|---|---|---|\n");
	printf("| %ld | %.1f | %zu | %.0f | %.3f | %.3f | %.3f | %.3f | %.0f |\n", lines,
	       (double)file_size(in) / 1e6, frames, total, tr[runs / 2], ts[runs / 2], tt[runs / 2],
	       tc[runs / 2], (double)file_size(out) / 1e3);
	printf("(wall clock on a shared machine; CPU s = this process's CPU time for folded->svg)\n");
	unlink(in);
	unlink(out);
	free(tr);
	free(ts);
	free(tt);
	free(tc);
	return 0;
}
