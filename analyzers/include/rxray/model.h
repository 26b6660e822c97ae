/* SPDX-License-Identifier: MIT */
/*
 * The cost model (docs/method.md "The ceiling model"): a ceiling predicted from
 * runs that did not saturate, the load-dependent stages of a point, and
 * what-ifs on it.
 *
 * Each stage of each receive thread is modelled from its laps: a fixed
 * cost per lap a and a marginal cost per packet b (least squares of
 * cycles = a + b x packets over the laps, rxp_lapsums_fit), pooled over
 * light-load runs by adding their lap sums. Stages that lap a fixed count
 * (a refill or hand-off batch) have no packet-count spread and keep their
 * measured cost per packet. At saturation a thread's laps hold B packets
 * (the configured burst for an "rx" thread, the batch for an "app"
 * thread), so a thread costs sum over stages of share x (a/B + b) cycles
 * per packet (share = the stage's packets per thread packet) and its
 * ceiling is clock_hz / that. The point's prediction is the bottleneck
 * thread's (the software NIC excluded: it is the generator) x queues.
 *
 * Error rule: 0 or a negative errno; bad input (-EINVAL) comes with one
 * line in err. Structures are plain values owned by the caller.
 */
#ifndef RXRAY_MODEL_H
#define RXRAY_MODEL_H

#include <stdbool.h>
#include <stddef.h>

#include "rxray/analyze.h"
#include "rxray/result.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RXA_MODEL_MAX_THREADS 32
/* A stage more than this much dearer per packet under load is named. */
#define RXA_MODEL_LOAD_FACTOR 1.25
/* Default: fit only from passing trials at or below this share of the NDR. */
#define RXA_MODEL_LIGHT_FRAC 0.5
/* Calibrated at the NDR only when the calibrated model gives back the NDR
 * within this fraction (the NDR trial saturated a modelled thread). */
#define RXA_MODEL_AT_NDR_TOL 0.15

struct rxa_model_thread {
	char label[24];         /* "rx", "app", "rx#1" (rxa_thread_label) */
	char role[8];
	double burst;           /* B: laps hold this many packets when saturated */
	double packets;         /* thread packets pooled */
	bool have[RXP_ST_COUNT];
	struct rxp_lapsums st[RXP_ST_COUNT]; /* pooled lap sums */
	/* filled by rxa_model_finish */
	struct rxp_lapfit fit[RXP_ST_COUNT];
	double share[RXP_ST_COUNT];  /* stage packets per thread packet */
	double delta_b[RXP_ST_COUNT];/* what-if: cycles/packet added to b */
	double scale[RXP_ST_COUNT];  /* what-if: factor on a and b (1) */
	double cpp;             /* modelled busy cycles/packet at B */
	double mpps;            /* clock_hz / cpp (one queue), NAN unknown */
};

struct rxa_model {
	size_t nthreads;
	struct rxa_model_thread th[RXA_MODEL_MAX_THREADS];
	double hz;              /* clock of the runs pooled (the first one's) */
	double queues;
	size_t nruns;           /* runs pooled */
	size_t ncoalesced;      /* of which calibration runs with --coalesce */
	double offered_mpps;	/* the load it stands for: the mean offered
				 * rate of the runs pooled; the NDR trial's
				 * when calibrated at the NDR */
	int bottleneck;         /* thread index, -1 none */
	double predicted_mpps;  /* bottleneck's ceiling x queues; NAN unknown */
	char basis[96];         /* "3 trials <= NDR/2 (1 coalesced)", "this run" */
};

/* Start an empty model (no runs, nothing predicted). */
void rxa_model_init(struct rxa_model *m);
/*
 * Pool a run's lap sums into m: threads matched by label; software NIC
 * threads skipped. Threads without lap sums (results older than the
 * model) add nothing. 0, or -ENOSPC past RXA_MODEL_MAX_THREADS.
 */
int rxa_model_add_run(struct rxa_model *m, const struct rxr_result *r);
/* Fit every stage and predict (queues >= 1). Call after the last add and
 * after changing delta_b/scale. */
void rxa_model_finish(struct rxa_model *m, double queues);
/*
 * Modelled cycles per thread packet of stage s on thread t when its laps
 * hold n packets (n <= 0: the thread's B), what-ifs applied. 0 for a
 * stage the thread does not lap.
 */
double rxa_model_stage_cpp(const struct rxa_model_thread *t, int s, double n);

/* A stage dearer (or, in rxa_point_model.cheaper, cheaper) under load
 * than the light-load model says. */
struct rxa_loaddep {
	char thread[24];
	int stage;
	double mean_burst;      /* packets per lap of the stage in the trial */
	double model_cpp;       /* model's cycles/packet at that burst */
	double ndr_cpp;         /* measured in that trial (above: which one) */
	double factor;          /* ndr_cpp / model_cpp */
	/* the trial that showed it: the NDR trial, or (above) a lossy one
	 * above the NDR (offered_mpps says which), where the bottleneck broke */
	bool above;
	double offered_mpps;    /* that trial's offered rate */
};

#define RXA_MODEL_MAX_NAMED 8
struct rxa_point_model {
	struct rxa_model m;
	double ndr_mpps;        /* NAN when unknown */
	double ratio;           /* NDR / predicted; NAN unknown */
	double light_frac;      /* the fraction of the NDR trials were taken below */
	size_t nnamed;
	struct rxa_loaddep named[RXA_MODEL_MAX_NAMED]; /* biggest excess first */
	/* Stages cheaper under load: in the NDR trial they cost less than
	 * 1 / RXA_MODEL_LOAD_FACTOR of the model at their mean burst there
	 * (and by 5% of the thread's busy cycles), biggest saving first. What
	 * a ratio above 1 comes with: the light-load trials cost more than
	 * load did (bench/costmodel/README.md, "Measurements behind
	 * constants"). */
	size_t ncheaper;
	struct rxa_loaddep cheaper[RXA_MODEL_MAX_NAMED];
	/* The model at the NDR trial's own lap sizes (each stage at its mean
	 * packets per lap there, not at B) x queues, the thread that limits
	 * it, and that thread's poll lap (packets per lap of its most lapped
	 * stage). A ratio below 1 that this gives back is lap size, not load:
	 * at its NDR the receiver polled small laps and lost packets before
	 * they grew to B (bench/costmodel/README.md). NAN without an NDR
	 * run. */
	double ndr_laps_mpps;
	double ndr_laps;
	char ndr_laps_thread[24];
};

/*
 * The light-load model of a sweep point: pooled from the point's passing
 * trials (p->light) offered at or below light_frac x NDR (<= 0: 0.5),
 * calibration trials included, never the NDR trial; for a point that is
 * one run (status "run"), from that run. Then the stages of the NDR run
 * more than RXA_MODEL_LOAD_FACTOR dearer than the model at the NDR
 * trial's mean burst, that carry at least 5% of their thread's cycles;
 * then likewise those of the lossy trials above the NDR (p->above_runs):
 * the one asked for the least above it, and the others offered no more
 * than the prediction. At the NDR the bottleneck's laps may hold a few
 * packets, where its costs are still light-load costs; the trials that
 * lost are where they broke, and where one offered no more than the
 * prediction saturated the receiver at full bursts, a stage dearer there
 * is what kept the receiver below the prediction (bench/costmodel/
 * README.md, "Measurements behind constants"). And the model at the
 * NDR trial's lap sizes (ndr_laps_mpps).
 * Never fails: with no usable run, predicted_mpps is NAN.
 */
void rxa_point_model_compute(const struct rxa_point *p, double light_frac,
			     struct rxa_point_model *out);

/*
 * The model calibrated at the point's NDR, for what-ifs on a point the
 * receiver limits: the light-load model (pm, of p) with every stage of
 * every thread scaled to cost, per packet, what it cost in the NDR trial
 * (at that trial's lap sizes, not extrapolated to full bursts: a receiver
 * at its NDR laps what it laps there). There the bottleneck ran at
 * saturation, so a stage that is
 * dearer under load (pm->named) is dearer in it, which the light-load
 * model alone misses (rxa_whatif_point moves it with the rate a change
 * leads to); its "before" is the NDR trial's own
 * rate by construction (the tautology a prediction must not be), its
 * "after" is the what-if. 0 with *out finished (basis "NDR trial (R Mpps)
 * at its lap sizes"); with *out = pm->m, -ENOENT when p has no NDR trial,
 * is one run, or its NDR is generator-limited or oversubscribed, and
 * -ERANGE when the calibrated model misses the NDR by more than
 * RXA_MODEL_AT_NDR_TOL: in both the trial did not saturate the receiver
 * (loss above it came from elsewhere) and the light-load model is the
 * basis.
 */
int rxa_point_model_at_ndr(const struct rxa_point *p, const struct rxa_point_model *pm,
			   struct rxa_model *out);

/*
 * `rxray run --rate R`'s headroom: the model of one run (light load) and
 * predicted / offered. *predicted_mpps NAN and *headroom NAN when the run
 * has no lap sums or no offered rate. m may be NULL.
 */
void rxa_run_headroom(const struct rxr_result *r, struct rxa_model *m, double *predicted_mpps,
		      double *headroom);

/*
 * A point model as JSON (new reference, NULL on ENOMEM): {"predicted_mpps",
 * "basis", "runs", "coalesced", "ndr_mpps", "ratio", "bottleneck",
 * "threads": [{"thread", "burst", "cycles_per_packet", "mpps", "stages":
 * {"<stage>": {"basis", "a", "b", "r2", "share", "cycles_per_packet"}}}],
 * "load_dependent": [{"thread", "stage", "mean_burst", "model_cpp",
 * "ndr_cpp", "factor", "trial": "ndr" | "above_ndr", "offered_mpps"}],
 * "cheaper_under_load": [the same fields, "trial": "ndr"], "at_ndr_laps":
 * {"predicted_mpps", "thread", "laps"} | null}; NANs as null.
 */
json_t *rxa_point_model_json(const struct rxa_point_model *pm);
/* "<sep>rx buf_alloc x1.56", "... above NDR (3.40 Mpps)" from the trial
 * above; the characters written into buf (n > 0), cut at n - 1. */
size_t rxa_loaddep_fmt(const struct rxa_loaddep *d, const char *sep, char *buf, size_t n);
/* n stages in one cell, ", " between them; none (e.g. "none") when n is
 * 0. Returns the length written, as snprintf's but capped at len - 1. */
size_t rxa_loaddeps_fmt(const struct rxa_loaddep *d, size_t n, const char *none, char *buf,
			size_t len);
/* "13.30 (rx laps of 8.2)": the model at the NDR trial's lap sizes, or
 * "-"; as rxa_loaddep_fmt. */
size_t rxa_ndr_laps_fmt(const struct rxa_point_model *pm, char *buf, size_t n);

/* --------------------------------------------------------------- what-if */

enum rxa_whatif_op { RXA_WHATIF_ADD = 0, RXA_WHATIF_MUL };
struct rxa_whatif_change {
	int stage;
	enum rxa_whatif_op op;
	double v;               /* cycles/packet added (may be < 0), or factor */
};

/*
 * Parse "STAGE=+K", "STAGE=-K" or "STAGE=xF" (K cycles per packet with
 * k/M suffixes allowed, F > 0). 0, or -EINVAL with one line in err
 * (unknown stage, idle, missing sign, x0 or a negative factor).
 */
int rxa_whatif_parse(const char *text, struct rxa_whatif_change *out, char *err, size_t errlen);
/*
 * Apply changes to a finished model (every non-NIC thread that laps the
 * stage) and re-finish it. 0; -EINVAL with one line in err when a change
 * drives a stage's cost below zero (bad input whatever the point);
 * -ENOENT with one line in err when no thread laps a changed stage (a
 * point without that stage: bad input only when no point has it).
 */
int rxa_model_apply(struct rxa_model *m, const struct rxa_whatif_change *c, size_t n, char *err,
		    size_t errlen);

/*
 * The mark of a figure whose point is generator-limited (rxa_point): the
 * software NIC set the pace, its NDR is a lower bound, so neither the
 * point's ceiling nor a what-if on it is a figure.
 */
#define RXA_GENLIM_MARK "generator-limited: lower bound, not a ceiling"

/* One point's what-if on both bases (rxray whatif, bench/whatif_check). */
struct rxa_whatif_point {
	struct rxa_model before, after;		/* the light-load model */
	struct rxa_model ndr_before, ndr_after; /* calibrated at the NDR
						 * (rxa_point_model_at_ndr);
						 * NAN predictions where the
						 * point has none */
	bool generator_limited;			/* the point's: not a figure (RXA_GENLIM_MARK) */
};
/*
 * The what-if of point p: its light-load model (light_frac as in
 * rxa_point_model_compute) and that model calibrated at the NDR, each
 * before and after the n changes; out->generator_limited copies p's flag
 * whatever the return (the caller marks or refuses such a point's
 * figures, RXA_GENLIM_MARK). 0; -ENODATA when p has no light-load
 * model (every prediction NAN); rxa_model_apply's -EINVAL or -ENOENT with
 * one line in err (both afters NAN); -ENOMEM. A change the light model takes and the
 * calibrated one does not (a stage the NDR trial found cheaper, driven
 * below zero) leaves ndr_after's prediction NAN alone.
 *
 * The calibrated "after" follows the load: a change that slows the
 * receiver moves it to a lower rate, where a stage dearer under load
 * costs less again. Each stage's cost per packet is taken as linear in
 * the offered rate between the light-load model (at its trials' mean
 * rate) and the NDR trial (at its rate), held at the nearer end outside
 * them, and ndr_after is the model at the rate it predicts for itself
 * (its basis names that rate). Carrying the NDR trial's costs unchanged
 * to the slower point over-predicted the slowdown in every sweep of
 * bench_whatif_check's dpdk hds pair on the 16-core host (NDR injected /
 * predicted 1.02-1.32 in 6 sweeps, median 1.10; 0.94-1.21 so, median
 * 1.03).
 */
int rxa_whatif_point(const struct rxa_point *p, double light_frac,
		     const struct rxa_whatif_change *c, size_t n, struct rxa_whatif_point *out,
		     char *err, size_t errlen);

/*
 * For the report's "what if this stage cost what it costs in the other
 * configuration": set stage s on the thread labelled `thread` (NULL: every
 * thread that laps it) to cost cpp cycles per thread packet at its B, and
 * re-finish. Typically cpp = rxa_model_stage_cpp(<thread of the other
 * model>, s, 0). -EINVAL with one line in err when no such thread laps s
 * or cpp < 0.
 */
int rxa_model_set_stage(struct rxa_model *m, const char *thread, int s, double cpp, char *err,
			size_t errlen);

/*
 * Tables: the cost model per point (point, predicted at light load, basis,
 * NDR, NDR/predicted, bottleneck, load-dependent stages) and what-ifs
 * (point, before, after, change, bottlenecks, basis; then the same
 * calibrated at the NDR). 0 with the table in *out (the caller
 * owns it: rxa_table_free), or -ENOMEM with *out NULL.
 */
int rxa_model_table(const struct rxa_set *s, const struct rxa_point_model *pm, size_t n,
		    struct rxa_table **out);
/* w: per point, from rxa_whatif_point (a NAN prediction prints '-'); its
 * last column, notes, carries RXA_GENLIM_MARK where w is generator-limited. */
int rxa_whatif_table_model(const struct rxa_set *s, const struct rxa_point *const *pts,
			   const struct rxa_whatif_point *w, size_t n, const char *changes,
			   struct rxa_table **out);

#ifdef __cplusplus
}
#endif
#endif /* RXRAY_MODEL_H */
