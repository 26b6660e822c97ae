/* SPDX-License-Identifier: MIT */
/*
 * rxray analyzers: load run results and sweep results into a set of
 * points, compute the ceiling model per point, classify ceilings as
 * per-packet or per-byte bound over frame sizes, diff two configurations
 * stage by stage, and render tables (markdown, CSV, HTML; JSON objects).
 *
 * Inputs (docs/design.md "Formats", sweeps/include/rxray/sweep.h):
 *  - a sweep folder: <dir>/results.jsonl ("rxray.run/1" trial lines with a
 *    "trial" object, "rxray.trial/1" lines for trials without a result,
 *    "rxray.point/1" summary lines) and <dir>/spec.yaml;
 *  - a .jsonl file of the same lines;
 *  - one run result (.json), or a folder of run results (*.json): each run
 *    is one point whose knobs are its config's scalar members.
 *
 * Ceiling model: cycles/packet of a thread = its busy cycles / packets it
 * handled; the bottleneck is the non-nic thread with the most. The
 * accounting (Mpps) = clock_hz / bottleneck cycles/packet x parallel
 * queues (knob "queues", default 1), of the NDR run when there is one,
 * else of the highest-rate run. That run is saturated, so this describes
 * it and is never called a prediction (rxa_ceiling.predicted_mpps keeps
 * its old name); "predicted" is the light-load cost model's alone, as are
 * the stages dearer under load and what-ifs: rxray/model.h.
 *
 * Error rule: 0 or a negative errno; bad input (-EINVAL) comes with one
 * line "<file>:<line>: <field>: <what>" in err. Free functions accept NULL.
 */
#ifndef RXRAY_ANALYZE_H
#define RXRAY_ANALYZE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "rxray/result.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RXA_POINT_SCHEMA "rxray.point/1"
#define RXA_TRIAL_SCHEMA "rxray.trial/1"
#define RXA_ERR_LEN 512

/* ---------------------------------------------------------------- set */

/* the lossy trials above the NDR a point keeps (rxa_point.above_runs) */
#define RXA_POINT_ABOVE_MAX 4

struct rxa_point {
	char *key;           /* owned: "engine=verbs,mode=hds,frame=1064,..." */
	/* owned object: knob -> value, in the key's order (a run's: engine,
	 * mode, frame, queues, then by name), never the input's member order */
	json_t *knobs;
	char status[16];     /* ok | infeasible | failed | partial | run */
	char *reason;        /* owned or NULL */
	double ndr_mpps;     /* NAN when unknown */
	double pdr_mpps;     /* NAN when unknown */
	double pdr_loss;     /* the PDR loss ratio the search used */
	double max_offered_mpps, nic_max_mpps; /* NAN when unknown */
	bool generator_limited;
	int trials;
	/*
	 * The search's intervals (sweep.h): ndr_mpps/pdr_mpps are their lower
	 * ends, these the upper ends (NAN: none, e.g. the generator could not
	 * offer more). has_interval: the summary carried them (older sweeps
	 * and single runs do not). unresolved: wider than the precision goal;
	 * disturbed: a bound rests on disturbed trials. Such points are marked
	 * and left out of fits (rxa_point_clean).
	 */
	double ndr_upper_mpps, pdr_upper_mpps;
	bool has_interval, unresolved, disturbed;
	bool oversubscribed; /* the summary says "oversubscribed": true */
	struct rxr_result *ndr_run; /* owned or NULL */
	struct rxr_result *top_run; /* owned or NULL; may equal ndr_run */
	json_t *top_doc;     /* owned raw JSON of top_run for a partial point, else NULL
				(a large sweep does not keep 10,000 documents twice) */
	/*
	 * Passing trials (no loss) of a sweep point, in file order: what the
	 * cost model (rxray/model.h) pools its light-load fit from. A point
	 * with a summary line keeps its calibration trials ("trial":
	 * {"purpose": "calibration"}) and the search trials asked for a rate
	 * (target_pps > 0) at most its NDR; a point without one, every
	 * passing trial. The same however the lines are written (whitespace,
	 * key order). Owned; empty for points that are single runs.
	 */
	struct rxr_result **light;
	size_t nlight;
	/*
	 * The lossy search trials asked for the least above the NDR: of the
	 * RXA_POINT_ABOVE_MAX least rates asked for above it, the first trial
	 * at each that lost, in order of the rate asked for. above_least:
	 * above_runs[0] was asked for the least of them (false where that
	 * one passed). Where the bottleneck broke, the other witnesses of
	 * the stages dearer under load: the least may still lap a few
	 * packets; in those further up the receiver saturated at full
	 * bursts. Owned; none for a single run or a point without a summary
	 * line.
	 */
	struct rxr_result *above_runs[RXA_POINT_ABOVE_MAX];
	size_t nabove;
	bool above_least;
};

struct rxa_set {
	struct rxa_point *pts; /* owned, in input order */
	size_t n;
	char *src;             /* owned: the path loaded */
	char *spec_text;       /* owned: spec.yaml contents, or NULL */
	char *spec_path;       /* owned or NULL */
	size_t ntrials;        /* trial lines seen */
	/*
	 * A last line without a newline that is not valid JSON (what a sweep
	 * killed mid-write leaves) is skipped, not an error: its line number,
	 * 0 when none.
	 */
	int truncated_line;
};

/*
 * Load a sweep folder, a .jsonl file, a run result or a folder of run
 * results. One meaning whatever the bytes: a file re-written with other
 * whitespace or its keys in another order loads to the same set (the
 * loader skims the store's own compact trial lines, and defers any other
 * trial line to the same rules). 0 and *out (free with rxa_set_free);
 * -EINVAL with err on bad input (a line that is not JSON, a wrong schema,
 * a missing field, two summary lines of one point - err names both
 * lines -, no results at all); -ENOENT/-EACCES/... with err "<path>:
 * <strerror>".
 */
int rxa_set_load(const char *path, struct rxa_set **out, char *err, size_t errlen);
void rxa_set_free(struct rxa_set *s);
/* The run to analyse for a point: ndr_run, else top_run, else NULL. */
const struct rxr_result *rxa_point_run(const struct rxa_point *p);
/*
 * Whether p may enter a fit: false when its search was unresolved or
 * disturbed, or its run says it was oversubscribed ("oversubscribed":
 * true, more threads than cores: disturbed by construction), disturbed
 * ("validity": {"disturbed": true}) or interrupted ("interrupted": true):
 * rxa_point_marks & RXA_MARKS_UNCLEAN. *why (may be NULL) gets a static
 * word for the first that applies ("oversubscribed", "disturbed",
 * "unresolved", "interrupted"), NULL when clean. Each mark's own reason:
 * rxa_marks_phrase.
 */
bool rxa_point_clean(const struct rxa_point *p, const char **why);
/* The run (may be NULL) was oversubscribed: extra "oversubscribed": true. */
bool rxa_run_oversubscribed(const struct rxr_result *r);

/* ---------------------------------------------------------------- marks */

/*
 * What a figure carries wherever it goes (run summary, ceiling table,
 * diff, flame, report), each mark with its own reason. The first four
 * keep a point out of fits and off the word "ceiling" (rxa_point_clean);
 * an external generator is a fact about the figures, not a fault.
 */
enum rxa_mark {
	RXA_MARK_OVERSUBSCRIBED = 1u << 0, /**< threads shared cores */
	RXA_MARK_DISTURBED = 1u << 1,      /**< the host interfered (validity) */
	RXA_MARK_UNRESOLVED = 1u << 2,     /**< the search ended wider than its goal */
	RXA_MARK_INTERRUPTED = 1u << 3,    /**< the run was stopped early */
	RXA_MARK_EXTERNAL = 1u << 4,       /**< the load came from an external generator */
};
#define RXA_MARK_COUNT 5
/* The marks that make a point not clean (rxa_point_clean). */
#define RXA_MARKS_UNCLEAN                                                                   \
	(RXA_MARK_OVERSUBSCRIBED | RXA_MARK_DISTURBED | RXA_MARK_UNRESOLVED |               \
	 RXA_MARK_INTERRUPTED)
/*
 * The run's marks (0 for NULL): extra "oversubscribed": true; "validity":
 * {"disturbed": true} (of an oversubscribed run, only for a reason besides
 * the oversubscription); "interrupted": true (or the generator object's
 * "interrupted": true); a "generator" object whose "kind" is not the
 * software NIC's.
 */
unsigned rxa_run_marks(const struct rxr_result *r);
/* The point's marks: its run's, and its summary's oversubscribed,
 * disturbed and unresolved. */
unsigned rxa_point_marks(const struct rxa_point *p);
/* The external generator's kind of r ("command", ...; "unknown" when the
 * object has none), NULL when r has no generator object or it is the
 * software NIC. Borrowed from r. */
const char *rxa_run_generator(const struct rxr_result *r);
/* A mark's word: "oversubscribed", "disturbed", "unresolved",
 * "interrupted", "external generator"; "?" for anything else. */
const char *rxa_mark_word(unsigned bit);
/*
 * One mark of p into buf (cut at n, as snprintf): with reason, its own
 * reason ("unresolved: the search ended at NDR [a, b] Mpps, wider than its
 * precision goal: ..."); without, its short form ("unresolved",
 * "oversubscribed (3 threads on 2 cores)", "external generator: command").
 */
void rxa_mark_reason(const struct rxa_point *p, unsigned bit, bool reason, char *buf, size_t n);
/* Every mark of marks for p in a fixed order, "; "-joined with reasons,
 * ", "-joined without; empty when marks is 0. Returns the length written. */
size_t rxa_marks_phrase(const struct rxa_point *p, unsigned marks, bool reasons, char *buf,
			size_t n);

/*
 * A knob's value as text (numbers without decimals when integral) into
 * buf; NULL when absent.
 */
const char *rxa_result_knob_str(const json_t *knobs, const char *name, char *buf, size_t n);
/* A knob as a number; def when absent or not numeric. */
double rxa_knob_num(const json_t *knobs, const char *name, double def);
/*
 * Knob names whose value differs between points of s, in first-seen
 * order: an owned NULL-terminated array of borrowed strings (free the
 * array only). NULL on ENOMEM.
 */
const char **rxa_set_varying(const struct rxa_set *s, size_t *n);
/*
 * Group the measured points (rxa_point_run not NULL) of s by the values
 * of the knobs every measured point carries, the names in skip aside:
 * group[i] gets a group number (equal numbers = equal values), SIZE_MAX
 * for a point without a run. Points that pair on "every other knob both
 * carry" (diff, report) are always in one group, so a pairing pass need
 * only look within groups: points x knobs instead of points^2. group has
 * s->n entries (caller's). 0 or -ENOMEM.
 */
int rxa_set_group(const struct rxa_set *s, const char *const *skip, size_t nskip, size_t *group);
/*
 * "engine=verbs mode=hds" from the varying knobs the point has (one its
 * engine lacks is left out); with none, from engine, mode, frame and
 * queues when present, else the key.
 */
void rxa_point_label(const struct rxa_point *p, const char *const *vary, size_t nvary, char *buf,
		     size_t n);

/* ----------------------------------------------------------- selectors */

#define RXA_SEL_MAX 16
/* "mode=single" or "engine=dpdk,mode=hds": all terms must match. */
struct rxa_sel {
	size_t n;
	char *k[RXA_SEL_MAX], *v[RXA_SEL_MAX]; /* owned */
	char *text;                            /* owned copy of the input */
};

/* 0, or -EINVAL with err naming the bad term; -ENOMEM. Free rxa_sel_free. */
int rxa_sel_parse(const char *text, struct rxa_sel *out, char *err, size_t errlen);
void rxa_sel_free(struct rxa_sel *s);
bool rxa_sel_match(const struct rxa_sel *s, const json_t *knobs);
/* The selector's values joined by ',' ("hds", "dpdk,hds") into buf. */
void rxa_sel_label(const struct rxa_sel *s, char *buf, size_t n);
/*
 * Labels for a pair: the values of the terms that differ between a and b
 * ("engine=dpdk,mode=single" vs "engine=dpdk,mode=hds" -> "single", "hds");
 * falls back to the full selector texts when that leaves them equal.
 */
void rxa_sel_labels(const struct rxa_sel *a, const struct rxa_sel *b, char *la, char *lb, size_t n);

/* --------------------------------------------------------- ceiling model */

/* Busy cycles/packet of a thread: busy_cycles, else the non-idle stages. */
double rxa_thread_busy_cpp(const struct rxr_thread_result *t);
/* Stage s's cycles per packet of the thread (stage cycles / thread packets). */
double rxa_thread_stage_cpp(const struct rxr_thread_result *t, int s);
/* "rx", or "rx#1" when the role repeats in r. buf gets the label. */
void rxa_thread_label(const struct rxr_result *r, size_t t, char *buf, size_t n);
/* Parallel queues of a run: knobs "queues", else config "queues", else 1. */
double rxa_run_queues(const struct rxr_result *r, const json_t *knobs);
/*
 * Predicted ceiling of a run in Mpps given per-thread busy cycles/packet
 * (cpp[i] for thread i; NULL = measured): hz / max non-nic cpp x queues.
 * *bottleneck gets the thread index (may be NULL). NAN when no non-nic
 * thread handled packets or hz is unknown.
 */
double rxa_run_predict(const struct rxr_result *r, const double *cpp, double queues,
		       int *bottleneck);

#define RXA_TOP_STAGES 3
struct rxa_stage_share {
	int stage;    /* enum rxp_stage */
	double cpp;   /* cycles/packet */
	double share; /* of the thread's busy cycles/packet, 0..1 */
};

struct rxa_ceiling {
	const struct rxa_point *p;      /* borrowed */
	const struct rxr_result *basis; /* borrowed: the run predicted from */
	const char *basis_name;         /* "ndr", "top" or "-" */
	int thread;                     /* bottleneck thread in basis, -1 none */
	char thread_label[24];
	double cpp;                     /* its busy cycles/packet */
	double hz, queues;
	/* clock_hz / the basis trial's bottleneck busy cycles per packet x
	 * queues: an accounting of that trial (at the NDR, the rate it
	 * received), not a prediction; NAN when unknown */
	double predicted_mpps;
	double ratio;                   /* NDR / predicted_mpps; NAN without an NDR */
	/* the light-load cost model's ceiling (rxa_ceiling_model) and NDR /
	 * it: the prediction; NAN when unknown or not computed */
	double model_mpps, model_ratio;
	double top_offered_mpps, top_rx_mpps, top_loss; /* highest trial; NAN */
	size_t ntop;
	struct rxa_stage_share top[RXA_TOP_STAGES];
	/*
	 * Robust view for noisy hosts: the same model with each stage charged
	 * its median lap (p50 x laps / packets) instead of its mean, so a few
	 * laps stretched by preemption do not set the ceiling. tail_ratio is
	 * the largest mean-lap / median-lap of the bottleneck thread's stages
	 * that carry >= 10% of its cycles (tail_stage); > 20 means the mean is
	 * dominated by outliers.
	 */
	double median_mpps; /* NAN when unknown */
	double tail_ratio;
	int tail_stage;     /* -1 none */
};

/* Heavy-tail threshold for rxa_ceiling.tail_ratio. */
#define RXA_TAIL_RATIO 20.0
/* Stage s of a thread charged its median lap: p50 x laps / thread packets. */
double rxa_thread_stage_median_cpp(const struct rxr_thread_result *t, int s);

/* Fill c for p (never fails; unknowns are NAN / -1). */
void rxa_ceiling_compute(const struct rxa_point *p, struct rxa_ceiling *c);
/* Add the light-load model's prediction (rxa_point_model_compute with
 * light_frac) and NDR / it to c (computed for c->p). */
void rxa_ceiling_model(struct rxa_ceiling *c, double light_frac);

/* ------------------------------------------------------ bound classifier */

enum rxa_bound { RXA_BOUND_UNKNOWN = 0, RXA_BOUND_PACKET, RXA_BOUND_BYTE, RXA_BOUND_MIXED };
/* "per-packet", "per-byte", "mixed", "unknown". */
const char *rxa_bound_name(enum rxa_bound b);

/*
 * Least-squares fit of y = a + b*x (time/packet in ns against frame
 * bytes). byte_share = b*xmax / (a + b*xmax): the part of the time per
 * packet at the largest frame that grows with bytes. Classified per-packet
 * below 0.25, per-byte above 0.75, mixed between. r2 is 1 - SSres/SStot
 * (1 when y is constant), rms the residual root mean square (ns),
 * rel_rms = rms / mean y. poor is set when rel_rms > 0.2: the points
 * scatter too much around any line for the verdict to be trusted (noisy
 * measurements, e.g. threads preempted on an oversubscribed host).
 */
struct rxa_fit {
	size_t n;
	double a, b, r2, rms, rel_rms, xmin, xmax, byte_share;
	enum rxa_bound bound;
	bool poor;
	/*
	 * Why the classifier declined (bound RXA_BOUND_UNKNOWN), a static
	 * phrase, or NULL when it classified: fewer than RXA_BOUND_MIN_POINTS
	 * points, a poor fit, or time/packet falling with bytes (a slope no
	 * receiver has: byte_share is then NAN). A share in (-0.1, 0) is
	 * noise around flat and reads 0: a share is never negative.
	 */
	const char *declined;
};
#define RXA_BOUND_MIN_POINTS 3
/* 0, or -EINVAL when n < 2 or fewer than 2 distinct x or a non-finite value. */
int rxa_bound_fit(const double *x, const double *y, size_t n, struct rxa_fit *out);

/* A config family: points equal in every knob except frame. */
struct rxa_family {
	char *label;     /* owned: the knobs that define it, varying ones only */
	size_t *idx;     /* owned: indices into the ceiling array, by frame */
	size_t n;
	bool have_cost, have_rate;
	struct rxa_fit cost; /* y = 1000 / NDR-trial accounting Mpps (receiver cost) */
	struct rxa_fit rate; /* y = 1000 / measured Mpps (NDR, else top RX) */
	/* the marks of the points each fit took (rxa_point_marks; clean
	 * points carry at most RXA_MARK_EXTERNAL) */
	unsigned cost_marks, rate_marks;
};

/* Group ceilings into families (>= 1 point each) and fit each. 0/-ENOMEM. */
int rxa_families_build(const struct rxa_set *s, const struct rxa_ceiling *c, size_t n,
		       struct rxa_family **out, size_t *nout);
void rxa_families_free(struct rxa_family *f, size_t n);

/* ---------------------------------------------------------------- diff */

struct rxa_stage_delta {
	char thread[24]; /* thread label: "rx", "app", "nic", "rx#1" */
	int stage;
	double a, b;     /* cycles/packet in A and B */
	double delta;    /* b - a */
};

struct rxa_whatif {
	char thread[24];
	int stage;
	double cpp_now;       /* the stage in the slower run */
	double cpp_fast;      /* the stage in the faster run */
	double mpps;          /* the slower run's accounting (Mpps) at cpp_fast */
};

struct rxa_diff {
	struct rxa_stage_delta *d; /* owned, sorted by |delta| descending */
	size_t n;
	struct rxa_whatif *w;      /* owned, biggest gain first */
	size_t nw;
	char thread[24];           /* the thread the verdict is about */
	double busy_a, busy_b;     /* its busy cycles/packet in A and B */
	/* clock / the bottleneck's busy cycles per packet x queues of each run
	 * (Mpps, NAN unknown): an accounting, never a prediction; of a run
	 * that lost packets it is the rate it received */
	double acct_a, acct_b;
	double loss_a, loss_b;     /* each run's loss ratio (> 0: saturated) */
	double rx_a, rx_b;         /* each run's received Mpps */
	char verdict[512];         /* one line */
	/* the what-ifs change the slower run (lower accounting; B when either
	 * is unknown), one stage at a time, to the faster one's cost */
	char whatif_run[64], whatif_from[64]; /* their labels */
	char whatif_thread[24];    /* the slower run's thread they change */
};

/*
 * Stage-by-stage delta of cycles/packet from run a to run b (threads
 * matched by label), the verdict line naming the thread with the largest
 * busy change (B's bottleneck when it exists in A) and its biggest stage
 * deltas, and what-ifs: what the slower run (by accounting: clock / busy
 * cycles per packet) would reach if one stage of its bottleneck thread
 * cost what it costs in the faster one, whichever order the runs come
 * in. label_b names B in the verdict ("hds"). The verdict calls no
 * figure a prediction: each run's accounting is named so, and a run
 * that lost packets is given as the rate it received.
 * 0, -EINVAL (a run without threads), -ENOMEM.
 */
int rxa_diff_compute(const struct rxr_result *a, const struct rxr_result *b, const json_t *knobs_b,
		     const char *label_a, const char *label_b, struct rxa_diff *out);
void rxa_diff_free(struct rxa_diff *d);

/* ---------------------------------------------------------------- tables */

/* A text table rendered as markdown, CSV or HTML. */
struct rxa_table {
	char *title;      /* owned or NULL */
	size_t ncols, nrows;
	char **head;      /* owned, ncols */
	char **cells;     /* owned, nrows * ncols */
	size_t cap;       /* rows allocated */
	size_t cur;       /* cells filled in the last row */
};

/* An empty table of ncols columns (head: their names, copied) into *out
 * (the caller owns it: rxa_table_free). 0, or -ENOMEM with *out NULL. */
int rxa_table_open(const char *title, size_t ncols, const char *const *head,
		   struct rxa_table **out);
void rxa_table_free(struct rxa_table *t);
/* Start a row, then add ncols cells. 0 / -ENOMEM / -EINVAL (too many). */
int rxa_table_row(struct rxa_table *t);
int rxa_table_cell(struct rxa_table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/*
 * Write s (len bytes) XML/HTML-escaped: & < > " ' as entities, control
 * characters and invalid UTF-8 as '?'. For SVG and HTML alike.
 */
void rxa_xml_put(FILE *o, const char *s, size_t len);
void rxa_xml_puts(FILE *o, const char *s);

/* Renderers. 0 or -EIO. HTML is escaped; markdown escapes '|'. */
int rxa_table_write_md(const struct rxa_table *t, FILE *o);
int rxa_table_write_csv(const struct rxa_table *t, FILE *o);
int rxa_table_write_html(const struct rxa_table *t, FILE *o);

/*
 * Tables built from analysed data, each into *out (the caller owns it:
 * rxa_table_free): 0, or -ENOMEM with *out NULL.
 * The ceiling table (one row per ceiling).
 */
int rxa_ceiling_table(const struct rxa_set *s, const struct rxa_ceiling *c, size_t n,
		      struct rxa_table **out);
/* The seed report's shape: frame, TX offered, RX received, TX Mpps, RX Mpps, loss. */
int rxa_seed_table(const struct rxa_set *s, const struct rxa_ceiling *c, size_t n,
		   struct rxa_table **out);
/* One row per family and basis: fit, R^2, residual, verdict. */
int rxa_bound_table(const struct rxa_family *f, size_t n, struct rxa_table **out);
/* Stage deltas (top max rows, 0 = all) and what-ifs of one diff. */
int rxa_diff_table(const struct rxa_diff *d, const char *la, const char *lb, size_t max,
		   struct rxa_table **out);
int rxa_whatif_table(const struct rxa_diff *d, struct rxa_table **out);

/* JSON documents (new references, NULL on ENOMEM). */
json_t *rxa_ceiling_json(const struct rxa_set *s, const struct rxa_ceiling *c, size_t n,
			 const struct rxa_family *f, size_t nf);
json_t *rxa_diff_json(const struct rxa_diff *d, const char *la, const char *lb);

/*
 * A point's NDR (pdr false) or PDR as its search interval: "[lo, hi]",
 * ">= lo" without an upper end (or generator-limited), "< hi" when no
 * rate passed, "lo" alone when the input carried no interval, "-" when
 * unknown.
 */
void rxa_fmt_interval(char *buf, size_t n, const struct rxa_point *p, bool pdr);
/* The ceiling's top stages as "buf_alloc 300 (60%), chain 100 (20%)" into
 * buf (n bytes; empty when it has none; cut at n, as snprintf). */
void rxa_top_stages_phrase(const struct rxa_ceiling *c, char *buf, size_t n);
/* Format a number of Mpps/cycles for tables: "-" for NAN. */
void rxa_fmt_num(char *buf, size_t n, double v, int decimals);

#ifdef __cplusplus
}
#endif
#endif /* RXRAY_ANALYZE_H */
