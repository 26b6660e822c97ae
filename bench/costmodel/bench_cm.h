/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the cost-model benches: run the rxray binary (one
 * process per run, as a sweep does), read its result, pick stages.
 * Header-only; each bench is one .c file.
 */
#ifndef RXRAY_BENCH_CM_H
#define RXRAY_BENCH_CM_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rxray/result.h"

/* The rxray binary: --rxray PATH, else $RXRAY, else ./tools/rxray. */
static const char *cm_rxray = "./tools/rxray";
/* Appended to every run (--noisy: a shared host with too few cores). */
static const char *cm_extra = "";

static inline void cm_args(int argc, char **argv, const char *usage)
{
	const char *env = getenv("RXRAY");
	if (env && *env)
		cm_rxray = env;
	bool from = false; /* a stored sweep only: no rxray to run */
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--from")) {
			from = true;
		} else if (!strcmp(argv[i], "--rxray") && i + 1 < argc) {
			cm_rxray = argv[++i];
		} else if (!strcmp(argv[i], "--noisy")) {
			cm_extra = "--allow-oversubscribe";
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			printf("%s", usage);
			exit(0);
		}
	}
	if (!from && access(cm_rxray, X_OK)) {
		fprintf(stderr, "%s: no rxray binary (run from the build dir or pass --rxray PATH)\n",
			cm_rxray);
		exit(1);
	}
}

/* Run "rxray run ARGS -o tmp --quiet"; the result or NULL (failure printed). */
static inline struct rxr_result *cm_run(const char *fmt, ...)
{
	char args[1024], cmd[1400], out[64];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	snprintf(out, sizeof(out), "/tmp/rxray-bench-%d.json", (int)getpid());
	snprintf(cmd, sizeof(cmd), "%s run %s %s -o %s --quiet 2>/tmp/rxray-bench-%d.err", cm_rxray,
		 args, cm_extra, out, (int)getpid());
	int st = system(cmd);
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "run failed (exit %d): rxray run %s\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1,
			args);
		return NULL;
	}
	char err[512];
	struct rxr_result *r = NULL;
	rxr_result_read(out, &r, err, sizeof(err));
	if (!r)
		fprintf(stderr, "%s\n", err);
	unlink(out);
	return r;
}

/* Thread of a role (first one), or NULL. */
static inline const struct rxr_thread_result *cm_thread(const struct rxr_result *r, const char *role)
{
	for (size_t i = 0; r && i < r->nthreads; i++)
		if (!strcmp(r->threads[i].role, role))
			return &r->threads[i];
	return NULL;
}

/* Stage s's cycles per packet of the thread (stage cycles / thread packets). */
static inline double cm_cpp(const struct rxr_thread_result *t, int s)
{
	if (!t || !t->packets || !(t->stage_mask & (1u << s)))
		return NAN;
	return (double)t->st[s].cycles / (double)t->packets;
}

static inline int cm_cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Median of n values (NANs last, ignored); NAN when none. */
static inline double cm_median(double *v, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (isfinite(v[i]))
			v[k++] = v[i];
	if (!k)
		return NAN;
	qsort(v, k, sizeof(*v), cm_cmp_d);
	return k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
}

#endif
