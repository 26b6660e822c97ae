/* SPDX-License-Identifier: MIT */
/*
 * The engine registry (testpmd's forwarding-engine table): one const ops
 * table per engine, listed in tools/engines.c when its library is part of
 * the build (RXRAY_ENGINE_<NAME>). Adding an engine = one file + one line.
 */
#ifndef RXRAY_TOOLS_ENGINES_H
#define RXRAY_TOOLS_ENGINES_H

#include <stddef.h>
#include <stdio.h>

#include "rxray/core.h"

/* Defined by the engine libraries (engines/verbs, engines/dpdk). */
extern const struct rx_engine_ops rx_engine_verbs;
extern const struct rx_engine_ops rx_engine_dpdk;

/* Engine by name, or NULL when unknown or not in this build. */
const struct rx_engine_ops *rxr_engine_find(const char *name);
/* Number of engines in this build, and the i-th (NULL past the end). */
size_t rxr_engine_count(void);
const struct rx_engine_ops *rxr_engine_at(size_t i);
/* "verbs, dpdk" (or "none") into buf, for error lines. Returns buf. */
const char *rxr_engine_list(char *buf, size_t len);
/*
 * Prefix an "<field>: <what>" validation line with "--" so it names the
 * command-line option: "--batch: ...". Lines without a field are copied.
 */
void rxr_engine_opt_line(const char *err, char *out, size_t len);

/*
 * Parse `rxray run`/`rxray caps` options (rx_config_keys plus -o/--out,
 * -q/--quiet, -h/--help) into c, already holding defaults. Returns 0,
 * RXR_EXIT_USAGE after one line "rxray <verb>: --<opt>: <what>", or -1
 * when --help was asked for (the caller prints its help, exits 0).
 */
int rxr_config_parse_argv(const char *verb, int argc, char **argv, struct rx_config *c);
/* The option lines of the help text (rx_config_keys, -o, -q, -h). */
void rxr_config_print_options(FILE *f);

#endif
