/* SPDX-License-Identifier: MIT */
/*
 * Hand-drawn SVG plots for the report: a line chart (several series over
 * a numeric x axis, solid or dashed) and a stacked bar chart. Each writes
 * one self-contained <svg> element (no XML prolog, so it can be inlined
 * in HTML or saved as a file). Returns 0 or -EIO / -EINVAL (no data).
 */
#ifndef RXRAY_REPORT_PLOT_H
#define RXRAY_REPORT_PLOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct plot_series {
	const char *name;
	size_t n;
	const double *x, *y; /* NAN points are skipped */
	bool dashed;
	unsigned colour;     /* palette index */
};

int rxo_plot_lines_svg(FILE *o, const char *title, const char *xlabel, const char *ylabel,
		   const struct plot_series *s, size_t ns, bool ypercent);

/* values[b * nseg + k]: bar b, segment k (stacked bottom-up). */
int rxo_plot_stacked_svg(FILE *o, const char *title, const char *ylabel, const char *const *segs,
		     size_t nseg, const char *const *bars, const double *values, size_t nbar);

#endif
