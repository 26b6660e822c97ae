/* SPDX-License-Identifier: MIT */
/*
 * What the benches that drive an engine share (bench/common, linked into
 * them as rxray_bench_run): one run in a forked child, and the per-packet
 * figures and medians they print.
 */
#ifndef RXRAY_BENCH_RUN_H
#define RXRAY_BENCH_RUN_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "rxray/core.h"
#include "rxray/result.h"

/* --runs at the most (the medians are taken over arrays of this size). */
#define BENCH_MAX_RUNS 15

/* The options every engine bench takes: BENCH_LONG_OPTS in its struct
 * option table (1: required_argument), bench_opt in its getopt_long loop. */
struct bench_opts {
	char cores[256]; /* --cores LIST; "": the process's affinity */
	double seconds;	 /* --seconds S, per run */
	int runs;	 /* --runs N */
};
#define BENCH_LONG_OPTS                                                                            \
	{"cores", 1, NULL, 'c'}, {"seconds", 1, NULL, 's'}, {"runs", 1, NULL, 'n'}
/*
 * One option from getopt_long (ch, arg: optarg) that is not the bench's
 * own: --cores, --seconds or --runs into b, --help (usage on stdout), or
 * a bad one (usage on stderr). Returns BENCH_OPT_TAKEN for b's, else the
 * exit code for main: 0 after --help, 2.
 */
#define BENCH_OPT_TAKEN (-1)
int bench_opt(int ch, const char *arg, struct bench_opts *b, void (*usage)(FILE *f));
/* b in range: --runs 1..BENCH_MAX_RUNS, --seconds > 0. */
bool bench_opts_ok(const struct bench_opts *b);

/*
 * bench_run_forked with b's cores and seconds set into c, printing on
 * failure "<program>: <what>: <why>" on stderr. 0, or the negative errno.
 */
int bench_run(const struct bench_opts *b, const struct rx_engine_ops *ops, struct rx_config *c,
	      const char *const *env, const char *what, struct rxr_result **out);

/*
 * One run of c on ops in a forked child, so each run gets a fresh DPDK EAL
 * and CUDA context (neither can be set up twice in one process):
 *  - the child sets env (NAME, VALUE pairs ending at a NULL NAME; a NULL
 *    VALUE leaves NAME alone; env NULL: none), runs rx_run_exec (which
 *    checks c first: rx_run_check) and writes the result to a mkstemp file
 *    in $TMPDIR (default /tmp);
 *  - the parent waits, reads the result into *out (rxr_result_read) and
 *    unlinks the file whatever happened.
 * A failing child's one line comes back through a pipe into err.
 * Returns 0; -EIO when the child failed (its line is in err); -ECHILD when
 * it died of a signal; or -errno from mkstemp, pipe, fork or the read, with
 * a line in err. *out is NULL on failure.
 */
int bench_run_forked(const struct rx_engine_ops *ops, const struct rx_config *c,
		     const char *const *env, struct rxr_result **out, char *err, size_t errlen);

/*
 * Per-packet cost of a stage that resists preemption: the median lap times
 * the number of laps, over the packets the thread handled. A lap the
 * scheduler interrupts lands in the tail, not in the median; on a shared
 * VM the mean is dominated by those.
 */
double bench_robust(const struct rxr_thread_result *t, enum rxp_stage s);
/* The same summed over every stage but idle: the thread's busy cycles. */
double bench_robust_busy(const struct rxr_thread_result *t);
/* Median of v[0..n), n > 0 (sorts v). */
double bench_median(double *v, int n);

#endif
