/* SPDX-License-Identifier: MIT */
/*
 * The run result ("rxray.run/1"): one JSON document per run. The writer
 * builds it from live probes; the reader parses it back into the same
 * struct (per-stage summaries instead of histograms) for the analyzers.
 *
 * Required fields (never renamed, see docs/design.md "Formats"):
 *   schema, config{}, env{}, counters{offered, received, out_of_buffer,
 *   nombuf, app_dropped, errors}, rates{offered_mpps, rx_mpps, loss},
 *   clock{source, hz, lap_cost_cycles},
 *   threads[{role, core, packets, busy_cycles, stages{<name>{count,
 *   packets, cycles, cycles_per_packet, min, max, p50, p99}}}]
 * Added here: stages also carry p90; a thread may carry "samples" (full
 * probe mode: sampled per-packet laps, {"fields": [...], "data": [[...]]}).
 * clock{} also carries resolution_ns (when known); a stage whose mean lap
 * is under RXR_RESULT_MIN_LAP_TICKS ticks carries "below_resolution": true
 * and clock{} then a "note" saying only its burst totals count (a coarse
 * clock such as aarch64's cntvct_el0 cannot time such laps one by one).
 * Every other top-level member is kept in r->extra: the writer emits each
 * member of r->extra at the top level and the reader puts every top-level
 * member it does not know there (e.g. "trial", "nic", "mempool").
 *
 * "cqe_poll_sampled" (rxray run --sample, a real DPDK port; checked by
 * rxr_result_check): the cqe_poll lap, opaque to laps there (one
 * rte_eth_rx_burst call), split by BPF stack samples of the rx threads.
 * Estimates from samples, never counted figures:
 *   lap "cqe_poll"; what: one line saying what the figures are;
 *   event "cycles" | "cpu-clock", freq_hz (samples per second per rx
 *   thread), stacks "dwarf" | "fp", rx_threads, seconds (the window);
 *   samples: every sample of the rx threads; lap_samples = in_rx_burst
 *   (the PMD's rx burst function on the stack) + at_lap_site (in the
 *   function that calls it, lap_site_function: rte_eth_rx_burst's inline
 *   code around the call and the lap's clock read); rx_burst_function;
 *   sampled_share_of_thread = lap_samples / samples (null: no samples);
 *   unplaced: samples outside the lap whose stacks never reached the rx
 *   loop (cut short or unwound astray: they may have been the lap's);
 *   dropped, stack_errors, stacks_cut: the sampler's losses;
 *   counted{cqe_poll_cycles, idle_cycles, thread_cycles (every lap),
 *   packets} of the rx threads, lap_share_of_thread = (cqe_poll + idle) /
 *   thread_cycles and cqe_poll_share_of_lap = cqe_poll / (cqe_poll +
 *   idle) (null where the denominator is 0): the counted figures the
 *   samples stand beside (rte_eth_rx_burst is lapped cqe_poll when it
 *   returned packets, idle when it returned none);
 *   parts[{name, kind, samples, share = samples / lap_samples,
 *   est_cycles_per_packet = samples / samples x thread_cycles / packets
 *   (null: no packets)}], most samples first; kind one of
 *   rxr_sampled_part_kinds: rx_burst (the burst function itself),
 *   mempool_get, mempool_put, mempool (mempool driver entries and other
 *   mempool code), replenish, callee (another function the burst
 *   called), kernel, lap_site, other (functions beyond the table). The
 *   parts' samples add up to lap_samples.
 *
 * Ownership: a struct rxr_result owns its json_t references (config, env,
 * extra) and its threads array; rxr_result_free releases all of it.
 */
#ifndef RXRAY_RESULT_H
#define RXRAY_RESULT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "rxray/probe.h"

struct rxr_validity;

#ifdef __cplusplus
extern "C" {
#endif

#define RXR_RUN_SCHEMA "rxray.run/1"

struct rxr_counters {
	uint64_t offered;       /* packets the wire/generator offered */
	uint64_t received;      /* packets delivered to the application */
	uint64_t out_of_buffer; /* arrived with no WQE posted (imissed) */
	uint64_t nombuf;        /* replacement allocation failed (rx_nombuf) */
	uint64_t app_dropped;   /* hand-off ring full */
	uint64_t errors;        /* error CQEs, bad SGEs, sequence faults */
};

/* offered == received + out_of_buffer + nombuf + app_dropped */
static inline bool rxr_counters_conserved(const struct rxr_counters *c)
{
	return c->offered == c->received + c->out_of_buffer + c->nombuf + c->app_dropped;
}

struct rxr_stage_sum {
	uint64_t count, packets, cycles, min, max;
	uint64_t p50, p90, p99;
	double cycles_per_packet;
	/*
	 * The lap sums of the stage's cost model (count, packets, cycles and
	 * the accumulator's squares), written as "lap_sums" {"packets_sq",
	 * "cycles_x_packets", "cycles_sq"} with the fit "lap_fit" {"basis",
	 * "a", "b", "r2"} beside them (laps longer than RXP_LAPFIT_MAX_TICKS are
 * left out of both and counted in "lap_sums" {"excluded_laps",
 * "excluded_packets", "excluded_cycles"}); has_laps is false for a result written
	 * before they existed (the reader then leaves laps zero).
	 */
	bool has_laps;
	struct rxp_lapsums laps;       /* of the laps the fit keeps */
	uint64_t excl_count, excl_packets, excl_cycles; /* laps left out (preempted) */
};

struct rxr_thread_result {
	char role[8];
	int core;
	uint64_t packets;
	uint64_t busy_cycles;
	struct rxr_stage_sum st[RXP_ST_COUNT];
	uint32_t stage_mask; /* bit s set when stage s was present/recorded */
	struct rxp_sample *samples; /* owned; sampled laps (full mode) or NULL */
	size_t nsamples;
};

struct rxr_result {
	json_t *config;  /* owned; object */
	json_t *env;     /* owned; object */
	json_t *extra;   /* owned; object: other top-level members */
	struct rxr_counters c;
	double offered_mpps, rx_mpps, loss, seconds;
	struct {
		char source[16];
		double hz;
		double lap_cost_cycles;
		double resolution_ns; /* smallest step the clock shows; 0 = unknown */
	} clock;
	size_t nthreads;
	struct rxr_thread_result *threads; /* owned */
	/*
	 * Borrowed, NULL unless the run sequence sets it while its engine
	 * collects the measured phase (engines/core run.c): the phase's
	 * validity record, to which a device with measured threads of its own
	 * (the software NIC's generators) adds their windows
	 * (rxr_validity_add_thread). Never freed or written with the result.
	 */
	struct rxr_validity *validity;
};

/* New empty result with empty config/env objects into *out (the caller
 * owns it: rxr_result_free). 0, or -ENOMEM with *out NULL (nothing the
 * caller passes can make it fail, hence no err). */
int rxr_result_open(struct rxr_result **out);
void rxr_result_free(struct rxr_result *r);

/* Append a thread measured otherwise (the GPU's, from CUDA events): src is
 * copied, its samples are not. 0 or -ENOMEM. */
int rxr_result_add_thread(struct rxr_result *r, const struct rxr_thread_result *src);
/* Append a thread from a live probe (summarises its accumulators). */
int rxr_result_add_probe(struct rxr_result *r, const struct rxp_probe *p);
/* Mean lap length (ticks) under which per-lap figures mean nothing. */
#define RXR_RESULT_MIN_LAP_TICKS 10
/* Fill clock{} from the calibrated process clock. */
void rxr_result_set_clock(struct rxr_result *r);
/* Derive rates{} from counters and seconds. */
void rxr_result_set_rates(struct rxr_result *r, double seconds);
/* Fill env{} with host facts (kernel, cpu model, cores, hostname, date). */
void rxr_result_fill_env(struct rxr_result *r);

/* Build the JSON document (new reference). NULL on ENOMEM. */
json_t *rxr_result_to_json(const struct rxr_result *r);
/*
 * Write the document to path through rxray/afile.h: atomically (temp
 * file + fsync + rename) for a file, stdout for "-", written through for
 * a device or FIFO. 0 or -errno (-EISDIR for a directory).
 */
int rxr_result_write(const struct rxr_result *r, const char *path);

/*
 * Parse a document into *out (the caller owns it: rxr_result_free).
 * Returns 0, or on error -EINVAL (bad input), -ENOMEM, or for _read the
 * file's errno (-ENOENT, -EACCES, ...), with *out NULL and one line
 * "<src>:<line>: <field>: <what>" in err (errlen bytes); src names the
 * input in messages (a file path). Rejects wrong or missing schema,
 * missing required fields and wrong types.
 */
int rxr_result_from_json(const json_t *doc, const char *src, struct rxr_result **out, char *err,
			 size_t errlen);
int rxr_result_read(const char *path, struct rxr_result **out, char *err, size_t errlen);
/* Parse from a string (one JSONL line); line is the 1-based line number. */
int rxr_result_parse(const char *text, const char *src, int line, struct rxr_result **out,
		     char *err, size_t errlen);

/*
 * The fast path for large inputs (results/result_scan.c): parse the run
 * document at text[0..len) straight into a result, without building a
 * JSON tree for its threads. Returns what rxr_result_from_json returns
 * for the same text parsed with JSON_REJECT_DUPLICATES: 0 and *out set;
 * -EINVAL (nothing said, *out NULL) whenever the text is not a valid run
 * document in the plain shape the writer emits: printable ASCII strings
 * without escapes, no "samples"; then the caller takes the checked path,
 * whose message names what is wrong. -ENOMEM. used NULL: the document
 * must fill text (trailing whitespace allowed); else *used gets where it
 * ends. The result is owned by the caller (rxr_result_free).
 */
int rxr_result_scan(const char *text, size_t len, size_t *used, struct rxr_result **out);

/*
 * What a parsed run result must mean, checked by every reader (the checked
 * path and the fast scanner alike): a clock of RXR_CLOCK_HZ_MIN..MAX, at
 * least one thread, thread roles of 1-7 characters from [A-Za-z0-9_.-],
 * each stage's min <= p50 <= p90 <= p99 <= max (percentiles are unsigned
 * already), no counter above the offered count, the loss the counters
 * give, and each env member rxray writes of its one type whichever engine
 * wrote it (env.dpdk an object, env.gpu an array, ...: docs/design.md
 * "Formats"). 0, or -EINVAL with the field's path in field ("clock",
 * "threads", "threads[1].stages.buf_alloc", "counters", "env.dpdk") and
 * what is wrong in what.
 */
#define RXR_CLOCK_HZ_MIN 1e6  /* 1 MHz: below any counter rxray reads */
#define RXR_CLOCK_HZ_MAX 1e11 /* 100 GHz */
int rxr_result_check(const struct rxr_result *r, char *field, size_t flen, char *what,
		     size_t wlen);
/* The extra member rxray run --sample writes (documented above). */
#define RXR_RESULT_SAMPLED "cqe_poll_sampled"
/* Its part kinds, NULL-terminated. */
extern const char *const rxr_sampled_part_kinds[];
/*
 * rxr_result_check's part for that member: every count an integer >= 0,
 * lap_samples = in_rx_burst + at_lap_site <= samples, unplaced <= samples
 * - lap_samples, each share the
 * ratio of its counts within 1e-6 and in [0, 1] (null exactly where the
 * denominator is 0), counted cqe_poll + idle <= thread_cycles, known
 * part kinds, parts' samples adding up to lap_samples and their shares to
 * at most 1. 0, or -EINVAL with field ("cqe_poll_sampled.parts[1].share")
 * and what set.
 */
int rxr_result_check_sampled(const json_t *smp, char *field, size_t flen, char *what,
			     size_t wlen);
/*
 * The same fast path for any JSON object or array: a new reference, or
 * NULL where json_loadb(..., JSON_REJECT_DUPLICATES) might not agree.
 */
json_t *rxr_json_scan(const char *text, size_t len, size_t *used);
/*
 * A key given twice in one object anywhere in the JSON text[0..len), which
 * json_loadb(..., JSON_REJECT_DUPLICATES) refuses, found without parsing
 * (results/json_dup.c). Returns 1 with the repeated key's path in path
 * ("config.frame", "threads[1].stages.free.count"; cut to pathlen), 0 when
 * text is one JSON object or array (trailing whitespace allowed) with no
 * key repeated, -1 when the scan cannot tell: not JSON, a key with an
 * escape, a string jansson refuses (bad UTF-8, \u0000), a number that may
 * overflow, deep nesting.
 * On -1 the caller parses text with jansson, which decides.
 */
int rxr_json_dup_find(const char *text, size_t len, char *path, size_t pathlen);
/* A JSON real, or null for a NAN or infinite value (a new reference). */
json_t *rxr_json_real_or_null(double v);
/*
 * j with every object's members in name order, nested ones too (a new
 * reference; arrays keep their order). Member order means nothing in
 * JSON, so what a reader lists member by member (a run's env) it keeps
 * in this order: the same whatever order the text gave. NULL on ENOMEM.
 */
json_t *rxr_json_by_name(json_t *j);
/*
 * The fast path for a line that embeds run documents (a sweep's summary
 * line): the object at text[0..len) (nothing after it but whitespace),
 * whose members named run_keys[0..nrun) are each an object, parsed with
 * rxr_result_scan into runs[i], or null (runs[i] NULL); they are left
 * out of the returned object. NULL (every runs[i] NULL) where the checked
 * path might not agree. The caller owns the object and the runs.
 */
json_t *rxr_json_scan_runs(const char *text, size_t len, const char *const *run_keys, size_t nrun,
			   struct rxr_result **runs);

/* Name of a lap-fit basis: "none", "linear", "per_packet". */
const char *rxr_lapfit_basis_name(enum rxp_lapfit_basis b);

/* busy cycles per packet of a thread (0 when it handled none). */
double rxr_thread_cycles_per_packet(const struct rxr_thread_result *t);

#ifdef __cplusplus
}
#endif
#endif /* RXRAY_RESULT_H */
