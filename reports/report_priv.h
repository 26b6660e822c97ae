/* SPDX-License-Identifier: MIT */
/* Report internals shared by report.c and report_parts.c. */
#ifndef RXRAY_REPORT_PRIV_H
#define RXRAY_REPORT_PRIV_H

#include "doc.h"
#include "rxray/analyze.h"
#include "rxray/report.h"

#define RPT_PLOTS 3
/* Per-point flame graphs a report draws at most (the first measured points). */
#define RPT_MAX_POINT_FLAMES 100

struct rpt_diff {
	const char *axis;   /* "mode" or "engine" */
	size_t ia, ib;      /* points: A the faster (higher NDR; predicted if no NDR) */
	char la[64], lb[64];
	char rest[512];     /* the knobs both share, for the line's prefix */
	struct rxa_diff d;
};

struct rpt {
	const struct rxa_set *s;
	const char *dir;
	char *err;
	size_t errlen;
	struct rxo_report_opts o;
	struct rxa_ceiling *c; /* one per point */
	const char **vary;
	size_t nvary;
	struct rxa_family *f;
	size_t nf;
	struct rpt_diff *diffs; /* grouped by axis, biggest change first */
	size_t ndiffs;
	char *plot[RPT_PLOTS];  /* SVG text, NULL when there was nothing to plot */
	char **flame;           /* per point, NULL without a run */
	char *dflame[2];        /* differential flame of the biggest diff per axis */
};

/* Save text as dir/rel atomically; err filled on failure. 0 or -errno. */
int rxo_rpt_save(struct rpt *R, const char *rel, char *text, size_t len);
/* Pairs differing in mode or engine only, with their diffs. 0/-ENOMEM. */
int rxo_rpt_diffs_collect(struct rpt *R);
/* Frees diffs, plots and flames. */
void rxo_rpt_diffs_free(struct rpt *R);
/* Write the plot and flame SVG files (kept in R for the HTML). 0/-errno. */
int rxo_rpt_plots(struct rpt *R);
int rxo_rpt_flames(struct rpt *R);
void rxo_rpt_section_diffs(struct rpt *R, struct doc *d);
void rxo_rpt_section_plots(struct rpt *R, struct doc *d);
void rxo_rpt_section_flames(struct rpt *R, struct doc *d);

/* report_verdict.c: the opening verdicts and the GPU stage. */
struct rpt_gpu {
	double kernel_cpp, kernel_ns; /* the gpu thread's busy time per packet; NAN none */
	double gpu_mpps;              /* the ceiling the GPU stage allows alone; NAN */
	double launch_cpp, wait_cpp;  /* gpu_launch, gpu_wait on the CPU threads */
	bool bound;                   /* the gpu thread is the bottleneck */
};
/* The run has a gpu thread or gpu_* stages. */
bool rxo_rpt_has_gpu(const struct rxr_result *r);
/* "[oversubscribed: ...]" etc. into buf for a point that is not clean, else NULL. */
const char *rxo_rpt_mark(const struct rxa_point *p, char *buf, size_t n);
void rxo_rpt_section_verdicts(struct rpt *R, struct doc *d);
void rxo_rpt_section_gpu(struct rpt *R, struct doc *d);

#endif
