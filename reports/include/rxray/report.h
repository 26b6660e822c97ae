/* SPDX-License-Identifier: MIT */
/*
 * rxray evidence report: from a loaded result set (rxray/analyze.h) write
 * into a folder
 *   report.md     markdown for a bug report (plots and flames linked)
 *   report.html   one self-contained page: tables, inline SVG plots and
 *                 interactive flame graphs, no external resources
 *   plots/NAME.svg  RX Mpps vs frame size (with the offered rate), loss vs
 *                 frame size, stacked cycles/packet per stage per config
 *   flames/NAME.svg one flame graph per measured point, one differential
 *                 graph per compared axis (mode, engine)
 *   ceiling.json  the ceiling table and bound fits as JSON
 * Sections: verdicts first (per configuration: the NDR interval, the
 * thread that sets the ceiling and its top stages, the bound, the GPU
 * stage and a GPU-bound verdict where a gpu thread exists; per
 * comparison: what B adds per packet, its biggest stage deltas and the
 * ceilings A -> B; oversubscribed, disturbed and unresolved points marked
 * and never read as ceilings), then the evidence: summary (bottleneck
 * stage and bound per point), warnings (generator-limited, infeasible,
 * failed, partial, marked points), environment, sweep spec, the seed
 * report's table, ceiling table (NDR/PDR intervals), bound classification
 * (marked points left out of fits), the GPU stage table (only with GPU
 * points), biggest differences between modes and between engines, plots,
 * flame graphs, and the commands that reproduce each point.
 */
#ifndef RXRAY_REPORT_H
#define RXRAY_REPORT_H

#include <stddef.h>

#include "rxray/analyze.h"

#ifdef __cplusplus
extern "C" {
#endif

struct rxo_report_opts {
	const char *title;   /* NULL = "rxray report" */
	const char *rxray;   /* command name in reproduce lines; NULL = "rxray" */
	const char *version; /* rxray version string for the header; NULL = none */
	const char *outdir_arg; /* the -o argument as typed, for the reproduce line */
};

/*
 * Write the report for s into dir (created when missing; existing report
 * files are replaced atomically one by one). o may be NULL. Returns 0;
 * -errno with err "<path>: <what>" when a file cannot be written
 * (-EEXIST when dir exists and is not a directory), -ENOMEM.
 */
int rxo_report_write(const struct rxa_set *s, const char *dir, const struct rxo_report_opts *o,
		     char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
