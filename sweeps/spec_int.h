/* SPDX-License-Identifier: MIT */
/* What the sweep library's files share among themselves. */
#ifndef RXRAY_SWEEPS_SPEC_INT_H
#define RXRAY_SWEEPS_SPEC_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <yaml.h>

#include "rxray/generator.h"

struct rx_knob;

/* The knob table's row at sweep index k, or NULL (knobs.c). */
const struct rx_knob *sweep_row(size_t k);

/*
 * The whole YAML stream parses, is one document and nests at most
 * SWEEP_SPEC_MAX_DEPTH deep (libyaml's scanner is quadratic in a deep
 * flow's depth). 0, or -EINVAL with "<name>:<line>:<col>: yaml: <what>".
 */
int sweep_yaml_check(const char *text, size_t len, const char *name, char *err, size_t errlen);

/*
 * A spec or generator file, whole, into *buf (malloc'd, NUL-terminated;
 * *len bytes before the NUL). 0, or -errno with "<path>: <what>" (over 16
 * MiB: -EFBIG).
 */
int sweep_file_read(const char *path, char **buf, size_t *len, char *err, size_t errlen);

/*
 * A `generator:` mapping node into g (sweep_gen_defaults first). 0, or
 * -EINVAL with "<file>:<line>:<col>: generator[.<field>]: <what>".
 */
int sweep_gen_from_node(yaml_document_t *doc, const yaml_node_t *n, const char *file,
			struct sweep_gen *g, char *err, size_t errlen);

/*
 * Start argv (argv[0] a path) in its own process group that dies with
 * its parent (PR_SET_PDEATHSIG), stdin /dev/null, no descriptor of the
 * parent's but stdio; outfd (>= 0) becomes its stderr, and with shell
 * its stdout too (else /dev/null). The child's pid, or -1.
 */
pid_t sweep_spawn(char *const argv[], int outfd, bool shell);

#endif
