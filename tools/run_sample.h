/* SPDX-License-Identifier: MIT */
/*
 * rxray run --sample: attach's BPF stack sampler on run's own rx threads
 * for the measured phase, splitting the cqe_poll lap of a real DPDK port
 * (rte_eth_rx_burst, opaque to laps) into the functions it spent its time
 * in (rxray/lapsplit.h). Estimates from samples, labelled as such in the
 * summary and in the result ("cqe_poll_sampled", rxray/result.h).
 */
#ifndef RXRAY_TOOLS_RUN_SAMPLE_H
#define RXRAY_TOOLS_RUN_SAMPLE_H

#include <jansson.h>
#include <stdio.h>

#include "rxray/core.h"
#include "rxray/result.h"

struct run_sample; /* the sampling of one run */

/*
 * Whether this run can be sampled, asked before anything starts: a real
 * DPDK port (--engine dpdk --device dpdk:...), a build with the BPF
 * sampler, the privileges to load it. 0, or RXU_EXIT_USAGE after one
 * line "rxray run: --sample: <why>".
 */
int rxt_run_sample_check(const struct rx_config *c);

/*
 * A sampling at hz for one run: its watch (begin: the sampler on the rx
 * threads; end: sampling stopped) in *w. 0 or -ENOMEM.
 */
int rxt_run_sample_open(unsigned hz, struct run_sample **out, struct rx_run_watch *w);
/*
 * After the run: the samples folded and put beside the counted figures
 * as r->extra "cqe_poll_sampled". 0, or -errno with a line in err.
 */
int rxt_run_sample_finish(struct run_sample *s, struct rxr_result *r, char *err, size_t errlen);
void rxt_run_sample_close(struct run_sample *s);

/* The summary's lines for a "cqe_poll_sampled" member (nothing for NULL). */
void rxt_run_sample_print(FILE *f, const json_t *smp);

/* run --help's lines for --sample and --sample-freq. */
void rxt_run_sample_help(FILE *f);

#endif
