/* SPDX-License-Identifier: MIT */
/*
 * rxray sweeps: a YAML spec expands into a matrix of points (one engine
 * configuration each); every point gets a throughput search that finds the
 * non-drop rate (NDR, loss <= ndr_loss, default 0) and the partial-drop
 * rate (PDR, loss <= pdr_loss, default 0.5%) together, after FD.io CSIT
 * MLRsearch (RFC 9971) and RFC 2544. Each trial is one `rxray run` in a
 * child process. Results go to a JSONL file, appended and fsync'd.
 *
 * Prefix: sweep_. Error rule: functions return 0 or a negative errno and
 * fill out-pointers; parse errors also write one line
 * "<file>:<line>:<column>: <field>: <what>" into the caller's buffer and
 * return -EINVAL (bad input, exit 2 in the CLI). Free functions accept NULL.
 *
 * ------------------------------------------------------------ the spec
 * A YAML mapping. Every field that takes a value also takes a list of
 * values: a list makes that field an axis of the matrix. Singular and
 * plural names are the same field (frame/frames, ring/rings, ...).
 *   engines         verbs | dpdk                          default verbs
 *   device          sim | sim:... | mlx5:<pci> | dpdk:<eal args>   sim
 *   modes           single | hds                          default single
 *   frames          bytes on the wire (64..65535)         default 1064
 *   split           hds header bytes (< frame)            engine default
 *   queues          1..64                                 default 1
 *   rings           power of two >= 2                     default 8192
 *   batches, bursts 1..ring                               engine default
 *   buffers         dpdk mbufs per pool, >= ring + batch  engine default
 *   mempool_caches  dpdk, 0..512                          engine default
 *   free            mixed | per-pool (dpdk)               engine default
 *   app             auto | thread | inline | eal | non-eal | same-core
 *   discipline      auto | scalar | vector (dpdk; vector needs single)
 *   dma             cache | memory;  payload  none | stamp | full
 *   inject          "STAGE=CYCLES[,STAGE=CYCLES]" or "none" (no empty entry)
 *   payload_mem     host | huge | gpu;  gpu_work  none | reorder | checksum
 *   cores           the cores trials may use: [0, 1] or "0-3,6"
 *                   (default: this process's affinity mask). Not an axis.
 *   allow_oversubscribe  bool (default false)
 *   output          result folder, relative to the current directory
 *                   (default "results/sweep"; -o overrides it)
 *   traffic_cmd     real-hardware mode: a shell command that starts
 *                   traffic, templated with {rate_pps} {frame} {seconds};
 *                   run per trial next to `rxray run`, which reads
 *                   received/missed from the port counters.
 *   generator:      real-hardware mode with an external generator that
 *                   says what it sent (rxray/generator.h): kind (command),
 *                   name, start, count, iface, flows, drain, rx_iface.
 *                   Each trial is `rxray run --rate R --generator <spec>`:
 *                   the run starts the generator once the port receives
 *                   and accounts against its count; the trial's offered
 *                   rate, received rate and loss are the run result's
 *                   "generator" figures. Needs a real device and
 *                   search.max_rate; not with traffic_cmd. No calibration
 *                   trials (they need the software NIC's rings).
 *   search:         ndr_loss (0), pdr_loss (0.005), precision (0.01,
 *                   relative bracket width), trial_seconds (final trials,
 *                   1s), initial_seconds (search trials, = trial_seconds),
 *                   max_trials (12), min_rate (10k pps), max_rate (pps or
 *                   "max": the generator's own; required with traffic_cmd),
 *                   timeout (per trial, default 3 x trial_seconds + 20 s),
 *                   exceed_ratio (0: one lossy trial fails its rate; e.g.
 *                   0.5: a rate fails when more than half of its trial
 *                   seconds exceeded the loss ratio, for noisy hosts),
 *                   budget (time per point, the trials' wall time; 0 =
 *                   max_trials x (trial_seconds + the trials' mean set-up
 *                   time, at least 0.7 s)), max_retries
 *                   (re-runs of disturbed trials per point, 3),
 *                   total_budget (the whole sweep's time, 0 = none: each
 *                   point's budget is at most the time left, less two
 *                   calibration trials, over the points left),
 *                   calibration_frac (the cost model's two light-load
 *                   trials after each point's search run at this fraction
 *                   of its NDR, one plain and one coalesced; 0.25; at most
 *                   0.45, under the model's light-load limit of 0.5 with
 *                   room for the rate a trial achieves; 0 = none)
 * Knobs not named in the spec are not passed to `rxray run` (its defaults
 * apply) and are not part of the point key. dpdk-only knobs (buffers,
 * mempool_caches, free, discipline) are dropped from verbs points and
 * split from single points, so such points collapse into one.
 * Unknown fields, wrong types, empty lists and impossible points (a value
 * that no engine accepts, e.g. split >= frame, batch > ring, vector with
 * hds) are errors pointing at the offending node.
 *
 * ----------------------------------------------------------- the output
 * <output>/spec.yaml      a copy of the spec the sweep ran
 * <output>/results.jsonl  one JSON document per line, in this order per
 *                         point: its trials, then its summary.
 *  trial line: a full "rxray.run/1" run result (result.h) with one added
 *    top-level object
 *      "trial": {"key": <point key>, "n": <1-based trial number>,
 *                "target_pps": <rate asked, 0 = the generator's max>,
 *                "seconds": <duration asked>,
 *                "status": "ok"|"timeout"|"crashed"|"failed"}
 *    Trials that produced no run result (timeout, crash, failure) are
 *    written as {"schema": "rxray.trial/1", "trial": {..., "reason"}}.
 *  point summary line:
 *      {"schema": "rxray.point/1", "key": "engine=verbs,mode=hds,...",
 *       "knobs": {"engine": .., "mode": .., "frame": .., every knob},
 *       "status": "ok"|"infeasible"|"failed", "reason": "...",
 *       "ndr_mpps": x, "pdr_mpps": y, "ndr_loss": 0, "pdr_loss": 0.005,
 *       "max_offered_mpps": highest achieved offered rate,
 *       "nic_max_mpps": the highest rate the NIC offered in any trial at
 *       "max" (flat out against this receiver; an NDR at or above it is
 *       generator-limited),
 *       "generator_limited": bool (the ceiling is a lower bound),
 *       "line_limited": bool (generator-limited at the line rate the
 *       software NIC's trials recorded: the receiver took the wire's
 *       rate), "line_mpps": that line rate (0 = none recorded),
 *       "trials": n, "ndr_run": <trial line at the NDR> | null,
 *       "top_run": <trial line of the highest-rate trial> | null,
 *       the intervals (ndr_mpps/pdr_mpps are their lower ends):
 *       "ndr_upper_mpps", "pdr_upper_mpps": x | null, "ndr_width",
 *       "pdr_width": (upper - lower) / upper | null, "precision",
 *       "ndr_resolved", "pdr_resolved", "resolved": bool,
 *       "disturbed": bool, "disturbed_trials", "retries",
 *       "budget_seconds", "spent_seconds", "oversubscribed": bool,
 *       "generator_unsteady": bool (generator-limited, its clean flat-out
 *       trials more than 5% apart: unresolved, the reason gives the range),
 *       "flags": ["unresolved", "disturbed", "oversubscribed"] as they
 *       apply,
 *       "generator": {"kind", "name", "start", "count"} with a generator
 *       block (what drove every figure of the point), else absent}
 *    (sweep_summary_add_search; a trial is disturbed when its run result
 *    says "validity": {"disturbed": true} or "oversubscribed": true)
 * The key is the knobs in a fixed order, "name=value" joined by commas:
 * engine, mode, frame, split, queues, ring, batch, burst, buffers,
 * mempool_cache, free, app, discipline, dma, payload, inject, payload_mem,
 * gpu_work, then any knob registered after the table's (rx_knob_register),
 * device always last
 * (inject entries joined with '+'; device last, so it may hold commas).
 * Readers should skip lines whose schema they do not know.
 * Resume (--resume) skips points with a summary line, replays the trial
 * lines of an unfinished point into its search, and drops a truncated
 * last line (what a SIGKILL mid-write leaves) after reporting it.
 */
#ifndef RXRAY_SWEEP_H
#define RXRAY_SWEEP_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "rxray/core.h"
#include "rxray/generator.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SWEEP_POINT_SCHEMA "rxray.point/1"
#define SWEEP_TRIAL_SCHEMA "rxray.trial/1"
#define SWEEP_MAX_CORES 256
#define SWEEP_MAX_QUEUES 64
#define SWEEP_ERR_LEN 512
#define SWEEP_MAX_POINTS 10000

/* ---------------------------------------------------------------- spec */

/*
 * A sweep's knobs are the knob table's rows with a sweep position
 * (struct rx_knob's sweep, engines/core options.c), in key order: knob k
 * is the row at position k + 1. The table is the only list of them: the
 * sweep code finds a knob it handles itself (engine, device, ...) by its
 * name (sweep_knob_find), never by a position of its own.
 * SWEEP_KNOBS_CAP is the capacity of the per-knob arrays below, not a
 * list; rx_knob_register refuses a row past it.
 */
#define SWEEP_KNOBS_CAP RX_KNOB_SWEEP_MAX

/*
 * Number of sweep knobs: the highest sweep position in the knob table, at
 * most SWEEP_KNOBS_CAP (a table past it fails sweep_knobs_check, so no
 * spec loads with it).
 */
size_t sweep_knob_count(void);
/* Knob name as used in keys, knobs{} and `rxray run --<name>` (with _ -> -);
 * NULL past sweep_knob_count(). */
const char *sweep_knob_name(size_t k);
/* The sweep index of the knob called name ('-' or '_', as rx_knob_find),
 * -1 when the table has no such knob or it is no sweep axis. */
int sweep_knob_find(const char *name);
/*
 * The knobs the sweep code handles by name (defaults, the key's last
 * field, inject's syntax, the placement's queues, ...), NULL-terminated.
 * sweep_knobs_check requires each to be a sweep row of the table.
 */
extern const char *const sweep_knobs_used[];
/*
 * Whether the knob table can drive a sweep: its sweep positions are
 * 1..n with one row each, n <= SWEEP_KNOBS_CAP, and every name in
 * sweep_knobs_used is one of them. 0, or -ENOSPC (past the capacity) /
 * -EINVAL (a gap, a shared position, a missing knob) with one line
 * "knob table: <what>" in err. sweep_spec_parse checks it first.
 */
int sweep_knobs_check(char *err, size_t errlen);

/* Where a value came from in the spec file (1-based), for error lines. */
struct sweep_mark {
	int line, column;
};

/* One value of an axis: text as written (normalised) and its number. */
struct sweep_value {
	char text[256];
	uint64_t num;             /* numeric knobs; 0 for names */
	struct sweep_mark mark;
};

struct sweep_axis {
	size_t n;                 /* 0 = not given in the spec */
	struct sweep_value *v;    /* owned */
	struct sweep_mark mark;   /* the field's key */
};

/* What a trial costs beyond its seconds when nobody measured it (the 0.3 s
 * of quiet before it, process and EAL start, the canary; ~0.6 s measured
 * on a 2-core host): the auto budget's, and the runner's estimate of a
 * calibration trial under total_budget. */
#define SWEEP_TRIAL_OVERHEAD_S 0.7

struct sweep_search_cfg {
	double ndr_loss, pdr_loss; /* loss ratios, 0 <= ndr <= pdr < 1 */
	double precision;          /* goal: (hi - lo) / hi <= precision */
	double trial_seconds;      /* final (confirming) trial duration */
	double initial_seconds;    /* search trial duration */
	unsigned max_trials;       /* cap per point */
	double min_rate, max_rate; /* pps; max_rate 0 = the generator's max */
	double timeout;            /* seconds per trial, child killed after */
	double exceed_ratio;       /* 0: any lossy trial fails its rate; else
				    * the share of a rate's trial seconds that
				    * may exceed the loss ratio (MLRsearch) */
	double budget_seconds;     /* time per point (trials' wall time); 0 =
				    * max_trials x (trial_seconds + 0.7 s: the
				    * quiet before a trial, start-up, canary) */
	unsigned max_retries;      /* re-runs of disturbed trials per point (3) */
	double total_budget_seconds; /* the whole sweep (0 = none): a point's
				      * search gets at most the time left, less
				      * its calibration trials, over the points
				      * left */
	double calibration_frac;     /* calibration trials at this x NDR (0:
				      * none; at most 0.45) */
	double budget_cap_seconds; /* not a spec field: the runner's per-point
				    * share of total_budget_seconds (0 = none) */
};

struct sweep_spec {
	char path[512];            /* the file it was read from */
	struct sweep_axis axis[SWEEP_KNOBS_CAP]; /* by sweep index */
	int cores[SWEEP_MAX_CORES];
	int ncores;                /* 0 = the affinity mask */
	bool allow_oversubscribe;
	char output[512];
	char traffic_cmd[1024];    /* "" = none */
	struct sweep_gen gen;      /* the `generator:` block, when have_gen */
	bool have_gen;
	struct sweep_search_cfg search;
};

/* Defaults of the search settings (the values listed above). */
void sweep_search_cfg_defaults(struct sweep_search_cfg *s);

/*
 * Parse a spec file. On success *out owns a new spec (free with
 * sweep_spec_free) and 0 is returned. -EINVAL: bad spec, with one line
 * "<path>:<line>:<col>: <field>: <what>" in err; -ENOENT etc: cannot
 * read, with "<path>: <strerror>" in err; -ENOSPC etc: the knob table
 * cannot drive a sweep (sweep_knobs_check's line in err). Also checks
 * every point of the matrix (sweep_matrix_expand), so a spec that parses
 * runs.
 */
int sweep_spec_load(const char *path, struct sweep_spec **out, char *err, size_t errlen);
/* Same from a string; name is used as the file in messages. */
int sweep_spec_parse(const char *text, size_t len, const char *name, struct sweep_spec **out,
		     char *err, size_t errlen);
void sweep_spec_free(struct sweep_spec *s);

/* -------------------------------------------------------------- matrix */

struct sweep_point {
	size_t index;                         /* 0-based in the matrix */
	const struct sweep_value *k[SWEEP_KNOBS_CAP]; /* by sweep index; NULL = not set
						 * (engine default) */
	char key[1024];
};

/*
 * The rx_config a point's trial runs with: `rxray run`'s defaults, the
 * point's knobs (through rx_config_set) and the spec's cores and
 * allow_oversubscribe. 0 or -EINVAL with a line in err.
 */
struct rx_config;
int sweep_point_config(const struct sweep_spec *s, const struct sweep_point *p,
		       struct rx_config *c, char *err, size_t errlen);

/*
 * Expand the axes into points (cartesian product, last knob varies
 * fastest... engines outermost), drop knobs that do not apply (dpdk-only
 * knobs on verbs, split on single), deduplicate by key, and check each
 * point. *pts is a new array of *npts points referring into spec (keep
 * spec alive); free with free(). -EINVAL with "<path>:<line>:<col>:
 * <field>: <what>" in err for an impossible point; -ENOMEM.
 */
int sweep_matrix_expand(const struct sweep_spec *spec, struct sweep_point **pts, size_t *npts,
			char *err, size_t errlen);
/* The point's knobs as a JSON object (numbers for numeric knobs). New ref. */
json_t *sweep_point_knobs(const struct sweep_point *p);
/* Is the point on the software NIC (needs a NIC core)? */
bool sweep_point_is_sim(const struct sweep_point *p);
/* The point's value of the knob called name (sweep_knob_find); NULL when
 * that is no sweep knob or the point leaves it unset. */
const struct sweep_value *sweep_point_knob(const struct sweep_point *p, const char *name);

/* ----------------------------------------------------------- placement */

struct sweep_place {
	bool feasible;
	bool oversubscribed;
	int needed;                /* cores the point's threads want */
	int available;
	int nic, rx, app;          /* cores per role (nic = NIC threads, app 0 = inline) */
	char app_mode[16];         /* resolved: "thread" | "inline" | as given */
	int cores[SWEEP_MAX_CORES];/* in order: nic, rx workers, app threads */
	int ncores;
	char reason[160];          /* why infeasible, or "" */
};

/*
 * Place a point's threads on the available cores avail[0..navail):
 * a NIC core on sim devices, one RX core per queue, one app core per
 * queue when app is thread/eal/non-eal; "auto" takes app cores when they
 * fit and runs inline otherwise; inline/same-core take none. A point
 * needing more cores than exist is infeasible (reason filled) unless
 * allow_over: then every available core is handed over (the engine
 * doubles threads up) and oversubscribed is set.
 * Returns 0; -EINVAL when navail <= 0.
 */
int sweep_place_point(const struct sweep_point *p, const int *avail, int navail, bool allow_over,
		      struct sweep_place *pl);
/* The cores to use: spec->cores, or this process's affinity mask. */
int sweep_cores_available(const struct sweep_spec *spec, int *cores, int max);

/* -------------------------------------------------------------- search */

enum sweep_trial_status {
	SWEEP_TRIAL_OK = 0,
	SWEEP_TRIAL_TIMEOUT,
	SWEEP_TRIAL_CRASHED,
	SWEEP_TRIAL_FAILED,      /* exit 1, or no readable result */
	SWEEP_TRIAL_REJECTED,    /* exit 2: the engine refused the config */
};
const char *sweep_trial_status_name(enum sweep_trial_status s);

struct sweep_trial {
	int n;                   /* 1-based */
	double target_pps;       /* 0 = the generator's max */
	double seconds;          /* duration asked */
	enum sweep_trial_status status;
	double offered_pps;      /* achieved offered rate */
	double rx_pps;
	double loss;             /* (offered - received) / offered */
	json_t *doc;             /* the trial line (owned), or NULL */
	char reason[256];
	bool disturbed;          /* the host disturbed it: set by the callback,
				  * or by the search from doc's
				  * "validity": {"disturbed": true} or
				  * "oversubscribed": true */
	double wall_seconds;     /* what it took, start-up included; 0 =
				  * unknown (the budget counts seconds) */
};

/*
 * A trial: measure at target_pps (0 = max) for seconds, fill t (status,
 * rates, loss, doc, reason, optionally disturbed and wall_seconds;
 * n/target/seconds are already set). Return 0, or a negative errno to
 * abort the whole search (interrupted).
 */
typedef int (*sweep_trial_fn)(void *ctx, struct sweep_trial *t);

enum sweep_point_status { SWEEP_POINT_OK = 0, SWEEP_POINT_INFEASIBLE, SWEEP_POINT_FAILED };
const char *sweep_point_status_name(enum sweep_point_status s);

struct sweep_search_result {
	enum sweep_point_status status;
	char reason[256];
	double ndr_pps, pdr_pps;   /* lower ends of the final brackets, 0 none */
	double ndr_hi_pps, pdr_hi_pps; /* upper ends, 0 = none (lower bound) */
	double max_offered_pps, nic_max_pps;
	bool generator_limited;
	/* generator-limited at the wire's rate: the NIC offered its line
	 * rate (the trials' "nic" line_mpps, line_pps) and the receiver
	 * took it, so the ceiling is above the line rate, not the NIC's */
	bool line_limited;
	double line_pps;
	bool generator_unsteady;   /* generator-limited, and its clean
				    * flat-out trials differ by > 5% (or 2x
				    * precision): left unresolved */
	bool ndr_resolved, pdr_resolved; /* the goal finished within precision
				    * (or is a lower bound by the generator,
				    * or below min_rate); false: unresolved */
	bool ndr_hi_short, pdr_hi_short; /* the upper end is a rate the
				    * generator did not sustain, not a loss:
				    * no bound on the device */
	bool disturbed;            /* a final bound rests on disturbed trials only */
	unsigned disturbed_trials, retries;
	double budget_seconds, spent_seconds;
	int ndr_trial, pdr_trial, top_trial; /* indices into trials, -1 none */
	size_t ntrials;
	struct sweep_trial *trials; /* owned, with their docs */
};

/*
 * The search, for one point, after MLRsearch (RFC 9971). Trial 1 at
 * max_rate (0 = the generator's max, which also measures the NIC's max).
 * Rates are grouped by the rate asked (a load) and judged from all their
 * trials, per goal (NDR, PDR), in this order:
 *  1. a disturbed trial (sweep_trial.disturbed) never decides a bound
 *     alone: a load's verdict comes from its undisturbed trials; a load
 *     with only disturbed ones that bounds a goal is re-run (at most
 *     max_retries re-runs per point); past that it is used, and the point
 *     is marked disturbed;
 *  2. trials that disagree at one load are settled there before the search
 *     moves: with exceed_ratio > 0 the load is re-tested at trial_seconds
 *     while one more trial could flip its verdict (at most 4 trials);
 *     with exceed_ratio 0 a loss fails the load for good;
 *  3. below the lowest failing load, with nothing passing below it: from
 *     the maximum rate's first failure, the rate received there (its MRR,
 *     as MLRsearch starts); otherwise -- a lower bound fell -- step down
 *     from the failing rate geometrically, the relative width doubling
 *     per step (2, 4, 8, ... x precision; MLRsearch's external search),
 *     never more than halving the rate in one step;
 *  4. above the highest passing load with only the top failing: the rate
 *     received at the top, then steps up by doubling widths;
 *  5. bisect until (hi - lo) / hi <= precision, then re-test the lower
 *     end at trial_seconds (it must have passed twice; with exceed_ratio
 *     the upper end is re-tested too).
 * Rates are the achieved offered rates; a trial whose generator fell more
 * than 10% short of the rate asked counts against that rate. A rate that
 * met the loss ratio at the generator's max leaves no upper bound:
 * generator-limited, a lower bound: the best offered rate of three clean
 * trials there (each shows the receiver kept up at its own rate). The budget is time: no trial starts
 * once the point's trials (wall_seconds, else seconds) would pass
 * budget_seconds; max_trials stays as a cap. A goal that ends wider than
 * its precision (budget or cap) is unresolved, its bracket kept and the
 * reason saying so. A rejected first trial makes the point infeasible;
 * three broken trials (timeout, crash, failure) fail it.
 * Returns 0 (r filled; free with sweep_search_result_free) or the
 * callback's negative errno (r filled with the trials so far).
 */
int sweep_search_run(const struct sweep_search_cfg *cfg, sweep_trial_fn fn, void *ctx,
		     struct sweep_search_result *r);
void sweep_search_result_free(struct sweep_search_result *r);

/* --------------------------------------------------------------- trial */

struct sweep_exec {
	const char *runner;        /* the rxray binary (argv[0] of trials) */
	const char *tmpdir;        /* where trial JSON and stderr land */
	const struct sweep_spec *spec;
	const struct sweep_point *point;
	const struct sweep_place *place;
	volatile int *stop;        /* nonzero: kill the child, return -EINTR */
	const char *const *extra_args; /* NULL-terminated, appended to the
					* trial's argv (calibration: --coalesce B); NULL none */
};

/*
 * Build the argv of one trial: runner run --engine .. --rate R --seconds
 * S --cores LIST -o json --quiet. 0 with a NULL-terminated array of
 * strings in *out (free with sweep_argv_free), or -ENOMEM with *out NULL.
 */
int sweep_trial_argv(const struct sweep_exec *x, double target_pps, double seconds,
		     const char *json_path, char ***out);
void sweep_argv_free(char **argv);
/*
 * A command template's expansion: each {name} replaced by what field
 * writes for it into piece (0; -EINVAL for a name it does not know),
 * "{{" and "}}" by one brace. 0, -ENOSPC when it does not fit, -EINVAL on
 * an unknown or unclosed {name} (its name, or "(unclosed)", in out).
 */
typedef int (*sweep_tmpl_field_fn)(const char *name, size_t len, char *piece, size_t piecelen,
				   void *ctx);
int sweep_tmpl_expand(const char *tmpl, sweep_tmpl_field_fn field, void *ctx, char *out,
		      size_t outlen);
/* Whether the template field name[0..len) is word. */
static inline bool sweep_tmpl_is(const char *name, size_t len, const char *word)
{
	return len == strlen(word) && !strncmp(name, word, len);
}
/*
 * Expand {rate_pps} {frame} {seconds} in tmpl into out (sweep_tmpl_expand).
 */
int sweep_template_expand(const char *tmpl, double rate_pps, uint64_t frame, double seconds,
			  char *out, size_t outlen);
/*
 * A sweep_trial_fn running the trial in a child process (ctx: struct
 * sweep_exec): fork + exec of runner with a timeout (SIGKILL, status
 * timeout), a signal death recorded as crashed, exit 2 as rejected,
 * otherwise the result read back with rxr_result_read. With traffic_cmd,
 * the command runs through /bin/sh next to the trial. 0 (the trial's
 * status and doc set), -EINTR when stopped, -ENOMEM, or -ENOSPC, -EDQUOT,
 * -EFBIG (no doc) when the runner failed because tmpdir's filesystem or
 * the file size limit could not take its result: the sweep stops there
 * instead of recording the point as failed.
 */
int sweep_trial_exec(void *ctx, struct sweep_trial *t);
/*
 * Make sure no trial of an earlier sweep into this folder is alive: kill
 * (SIGKILL) the process groups that sweep recorded in <tmpdir>/pids and
 * are still alive, and wait (bounded) until they are gone. 0 (note says
 * what was killed, empty when nothing was), or -EBUSY with a line in err
 * when one survives.
 */
int sweep_trial_reap(const char *tmpdir, char *note, size_t notelen, char *err,
		     size_t errlen);
/*
 * Fill t's status, rates and loss from a trial line (a run result with
 * "trial", or a broken trial's line); t->seconds must be set. Does not
 * take doc. 0, or -EINVAL with the reader's message in err.
 */
int sweep_trial_from_doc(const struct sweep_spec *spec, struct sweep_trial *t, json_t *doc,
			 const char *src, char *err, size_t errlen);

/* --------------------------------------------------------------- store */

struct sweep_store {
	int fd;                    /* results.jsonl, O_APPEND */
	char path[600];
	json_t *done;              /* object: key -> summary doc */
	json_t *partial;           /* object: key -> array of trial docs */
	size_t lines, dropped;     /* read on open; dropped: truncated tail */
};

/*
 * Open <dir>/results.jsonl. resume: read it back (points done, trials of
 * an unfinished point) and repair a torn last line (no newline),
 * reporting it in note; a complete line that does not parse is -EINVAL
 * and the file is left as it is. Not resume: the file must be absent or
 * empty (-EEXIST otherwise). Holds an exclusive flock on the file until
 * close: -EBUSY while another sweep writes into dir. Creates dir. 0 or
 * -errno with a line in err.
 */
int sweep_store_open(struct sweep_store *st, const char *dir, bool resume, char *note,
		     size_t notelen, char *err, size_t errlen);
/*
 * Append one document as one line and fsync. 0 or -errno (-ENOSPC a full
 * disk, -EDQUOT a used-up quota, -EFBIG the file size limit, with SIGXFSZ
 * ignored); on failure the part of the line already written is cut again,
 * so the file still ends with its last whole line.
 */
int sweep_store_append(struct sweep_store *st, const json_t *doc);
void sweep_store_close(struct sweep_store *st);
/* Build a point summary line (new ref) from a finished search. */
json_t *sweep_summary_json(const struct sweep_point *p, const struct sweep_search_cfg *cfg,
			   const struct sweep_search_result *r);
/*
 * Add the search's intervals and flags to a summary line (ndr_mpps and
 * pdr_mpps stay the lower bounds):
 *   "ndr_upper_mpps", "pdr_upper_mpps": upper ends, null = none (a lower
 *       bound: nothing failed, or the upper end is only a rate the
 *       generator did not sustain);
 *   "ndr_width", "pdr_width": (upper - lower) / upper, null without both;
 *   "precision": the goal; "ndr_resolved", "pdr_resolved", "resolved";
 *   "disturbed": a bound rests on disturbed trials only;
 *   "disturbed_trials", "retries"; "budget_seconds", "spent_seconds";
 *   "oversubscribed": a trial's run result says "oversubscribed": true
 *       (threads shared cores: never a ceiling);
 *   "flags": ["unresolved", "disturbed", "oversubscribed"] as they apply
 *       (ok points only).
 * 0 or -ENOMEM.
 */
int sweep_summary_add_search(json_t *sum, const struct sweep_search_cfg *cfg,
			     const struct sweep_search_result *r);

/* --------------------------------------------------------------- runner */

struct sweep_opts {
	const char *runner;        /* default: this binary */
	const char *output;        /* overrides spec->output */
	bool resume;
	bool quiet;
	bool dry_run;              /* print points and placement, run nothing */
	FILE *table;               /* where the NDR/PDR table goes (stdout) */
};

/*
 * Run the sweep: copy the spec to <output>/spec.yaml, then for each
 * point: placement, search (each trial appended as it ends), summary.
 * Prints progress on stderr (a live line on a TTY, log lines otherwise,
 * nothing with quiet) and the table at the end; failures are printed as
 * one line each. Returns 0 when every point has a summary, -EINVAL for
 * bad input (spec, folder), -EINTR when stopped, another -errno for a
 * runtime failure.
 * stop: set nonzero (a signal handler) to end after killing the trial.
 */
int sweep_run(const struct sweep_spec *spec, const struct sweep_opts *o, volatile int *stop);
/* Print the NDR/PDR table of the summaries in a results.jsonl. 0/-errno
 * (sweep_knobs_check's, first, when the knob table fails it). */
int sweep_table_print(FILE *f, const char *results_path);

#ifdef __cplusplus
}
#endif
#endif /* RXRAY_SWEEP_H */
