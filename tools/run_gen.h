/* SPDX-License-Identifier: MIT */
/*
 * rxray run --generator FILE: the point's traffic comes from an external
 * generator (the sweep spec's `generator:` block, rxray/generator.h),
 * started once the port receives; the run accounts against its count.
 */
#ifndef RXRAY_TOOLS_RUN_GEN_H
#define RXRAY_TOOLS_RUN_GEN_H

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>

#include "rxray/core.h"
#include "rxray/result.h"

struct run_gen; /* the generator of one run */

/*
 * Before the run: read FILE's generator block, check c (a real device, a
 * rate), and wrap inner (NULL: none) into *w. c->seconds becomes the
 * run's bound (the generator ends the phase). *stop is the flag to hand
 * the run. 0, RXU_EXIT_USAGE after one line naming --generator (bad
 * input), or RXU_EXIT_RUNTIME.
 */
int rxt_run_gen_open(const char *file, struct rx_config *c, const struct rx_run_watch *inner,
		 volatile sig_atomic_t *user_stop, struct run_gen **out, struct rx_run_watch *w,
		 volatile sig_atomic_t **stop);
/*
 * After a run that returned 0: the generator's count and account into
 * r ("generator"). 0 and *conserved, or RXU_EXIT_RUNTIME after a line.
 */
int rxt_run_gen_finish(struct run_gen *g, struct rxr_result *r, bool *conserved);
void rxt_run_gen_close(struct run_gen *g);
/* The summary's lines for r's "generator" (nothing without one). */
void rxt_run_gen_print(FILE *f, const struct rxr_result *r);
/* run --help's line for --generator. */
void rxt_run_gen_help(FILE *f);

#endif
