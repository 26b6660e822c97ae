/* SPDX-License-Identifier: MIT */
/*
 * What `rxray run` and `rxray caps` share on the command line: options
 * from the knob table (engines/core options.c) and error lines that name
 * the option. The engines themselves are in rxray/engines.h.
 */
#ifndef RXRAY_TOOLS_ENGINE_LIST_H
#define RXRAY_TOOLS_ENGINE_LIST_H

#include <stddef.h>
#include <stdio.h>

#include "rxray/core.h"
#include "rxray/engines.h"

/*
 * Prefix an "<field>: <what>" validation line with "--" so it names the
 * command-line option: "--batch: ...". Lines without a field are copied.
 */
void rxt_engine_opt_line(const char *err, char *out, size_t len);

/* --sample's default frequency: ~2000 samples in run's default 2 s */
#define RXT_RUN_SAMPLE_HZ 999

/* What `rxray run` takes beyond the knob table (not part of a config). */
struct rxt_run_opts {
	unsigned sample_hz; /* --sample / --sample-freq HZ: BPF stack samples of
			     * the rx threads (tools/run_sample.h); 0 = off */
	const char *generator; /* --generator FILE (tools/run_gen.h); NULL = none */
};

/*
 * Parse `rxray run`/`rxray caps` options (the knob table rx_knobs plus -o/--out,
 * -q/--quiet, -h/--help; with ro, run's own: --sample, --sample-freq) into
 * c, already holding defaults. Returns 0, RXU_EXIT_USAGE after one line
 * "rxray <verb>: --<opt>: <what>", or -1 when --help was asked for (the
 * caller prints its help, exits 0).
 */
int rxt_config_parse_argv(const char *verb, int argc, char **argv, struct rx_config *c,
			  struct rxt_run_opts *ro);
/* The option lines of the help text (rx_knobs, -o, -q, -h). */
void rxt_config_print_options(FILE *f);

#endif
