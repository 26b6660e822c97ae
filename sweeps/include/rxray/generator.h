/* SPDX-License-Identifier: MIT */
/*
 * An external traffic generator driving a run on a real port (issue 44):
 * a sweep spec's `generator:` block, and `rxray run --generator FILE`.
 *
 * A real port's traffic is not rxray's to pace. The generator is started
 * at the trial's rate, frame size and duration once the port receives,
 * and asked afterwards what it sent; that count is the trial's offered
 * count. The window is ordered and recorded (generator.timeline):
 *   port started (rx loops polling, counters zeroed) -> loss baselines
 *   read -> generator started -> generator exited -> drained (the
 *   receiving interface quiet, then `drain` seconds for the PMD's ring)
 *   -> rx loops stopped -> loss counters read -> count asked.
 * No warm-up: the generator's first frame is counted, so the port's
 * counters and the generator's cover the same window.
 *
 * Conservation against the generator (checked on every run):
 *   sent = received + out_of_buffer + app_dropped + lost_before_port
 * rx_nombuf stays out (it counts allocation events, not packets).
 * lost_before_port is only what a counter measured: the receiving kernel
 * interface's rx_dropped (a veth under net_af_packet: the backlog's and
 * the stack's drops) and the af_packet sockets' drops (PACKET_STATISTICS
 * tp_drops, read on the PMD's own sockets: DPDK 22.11's af_packet PMD
 * does not report them). What is left is "unattributed", shown and never
 * counted as lost; the run conserves when |unattributed| <=
 * SWEEP_GEN_UNATTRIBUTED_MAX of sent.
 *
 * The one kind today is "command": shell templates (through /bin/sh),
 *   start  runs the traffic for the trial and exits when it is done;
 *          its stdout and stderr go to the file {output}
 *   count  run after start exited; its last non-empty line is the count
 *          sent: an integer, or a JSON object {"sent": N} with optional
 *          "seconds" (the generator's own sending time; else the time
 *          from start to exit is used)
 * Placeholders: {rate_pps} {frame} {seconds} {flows} {iface}, and
 * {packets} (rate x seconds, rounded), {rate_bps} (rate x frame x 8),
 * {gap_ns} (1e9 / rate), {output}; "{{" and "}}" are literal braces.
 * A TRex STL client script or a
 * pktgen-dpdk Lua script fits the same slot (docs/generators.md).
 *
 * Prefix sweep_gen_. Error rule as sweep.h: 0 or -errno with one line in err.
 */
#ifndef RXRAY_GENERATOR_H
#define RXRAY_GENERATOR_H

#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "rxray/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most of a generator's count that may be left unattributed in a run
 * that conserves: 0.1% (issue 44's bound). */
#define SWEEP_GEN_UNATTRIBUTED_MAX 0.001
/* A generator that sent less than this share of the rate asked fell
 * short: the trial is generator-limited (the search's own 10% rule). */
#define SWEEP_GEN_SHORT_RATIO 0.9
/* Default wait after the receiving interface went quiet, for the PMD to
 * empty its ring (af_packet: 512 frames by default). */
#define SWEEP_GEN_DRAIN_S 0.2

struct sweep_gen {
	char kind[16];          /**< "command" */
	char name[64];          /**< label in results and summaries */
	char start[1024];       /**< template: runs the traffic, exits */
	char count[1024];       /**< template: prints the count sent */
	char iface[64];         /**< {iface}: the generator's interface */
	unsigned flows;         /**< {flows} (default 1) */
	double drain_s;         /**< grace after the interface went quiet */
	char rx_iface[64];      /**< kernel interface at the port; "" = the
				 *   device's iface= (net_af_packet) */
	char setup[1024];       /**< a sweep runs it (sh -c) once before its
				 *   first trial, "" none: links, namespaces */
	char teardown[1024];    /**< and this once after its last, "" none */
};

/* What a trial asks of the generator. */
struct sweep_gen_ask {
	double rate_pps;        /**< > 0 */
	unsigned frame;
	double seconds;
	const char *output;     /**< {output}; NULL = "" */
};

/* Defaults: kind command, flows 1, drain SWEEP_GEN_DRAIN_S. */
void sweep_gen_defaults(struct sweep_gen *g);

/*
 * Expand tmpl's placeholders for g and a into out. 0; -EINVAL for an
 * unknown or unclosed {name} (the name, or "(unclosed)", in out);
 * -ENOSPC when it does not fit.
 */
int sweep_gen_expand(const char *tmpl, const struct sweep_gen *g, const struct sweep_gen_ask *a,
		     char *out, size_t outlen);

/*
 * Read the `generator:` block of a YAML file: a sweep spec (its
 * "generator" field) or a file holding only the block. 0, -EINVAL with
 * "<path>:<line>:<col>: generator.<field>: <what>" in err, -ENOENT etc.
 * with "<path>: <strerror>".
 */
int sweep_gen_load(const char *path, struct sweep_gen *g, char *err, size_t errlen);

/* The generator's identity as results carry it: {"kind", "name",
 * "start", "count"} (templates as written). New ref, NULL on ENOMEM. */
json_t *sweep_gen_identity(const struct sweep_gen *g);

/* ------------------------------------------------------- one run */

struct sweep_gen_run;

/*
 * Prepare a run driven by g: checks c (a real device, a rate), and
 * fills *watch (wrapping inner, e.g. --sample's; NULL none) for
 * rx_run_exec_watched. Run it with *stop_out as the run's stop flag and
 * c->seconds raised to sweep_gen_run_seconds(): the generator's monitor
 * sets that flag once the generator is done and the port drained, and
 * forwards user_stop (Ctrl-C) by killing the generator. 0, -EINVAL (bad
 * input: one "--generator: <what>" line), -ENOMEM.
 */
int sweep_gen_run_open(const struct sweep_gen *g, const struct rx_config *c,
		       const struct rx_run_watch *inner, volatile sig_atomic_t *user_stop,
		       struct sweep_gen_run **out, struct rx_run_watch *watch,
		       volatile sig_atomic_t **stop_out, char *err, size_t errlen);
/* The bound the run's timer gets: the generator's time, twice, + 10 s. */
double sweep_gen_run_seconds(double seconds);
/*
 * After rx_run_exec_watched returned 0: ask the generator its count, add
 * r's top-level "generator" object (identity, asked, sent, seconds,
 * offered_pps, rx_pps, loss, generator_limited, conservation, timeline,
 * output_tail), put config.seconds back to what was asked and
 * "interrupted" to the user's stop. *conserved: the account held.
 * 0, or -errno with a line in err (the count could not be read: a
 * runtime failure).
 */
int sweep_gen_run_finish(struct sweep_gen_run *gr, struct rxr_result *r, bool *conserved,
			 char *err, size_t errlen);
/* Kill what is left, join the monitor, remove the work folder. NULL ok. */
void sweep_gen_run_close(struct sweep_gen_run *gr);

/* The human lines of a result's "generator" object (nothing without). */
void sweep_gen_print(FILE *f, const json_t *gen);

#ifdef __cplusplus
}
#endif
#endif /* RXRAY_GENERATOR_H */
