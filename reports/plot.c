/* SPDX-License-Identifier: MIT */
/* Hand-drawn SVG line and stacked-bar charts (see plot.h). */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "plot.h"
#include "rxray/analyze.h"

#define PW 820
#define ML 70  /* left margin: y labels */
#define MR 250 /* right margin: legend */
#define MT 40

/* Height and bottom margin differ: bar labels are rotated and need room. */
struct geom {
	int ph, mb;
};

static const char *const palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
				      "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
				      "#393b79", "#ad494a", "#637939", "#e7ba52"};

/* Palette colour i as "#rrggbb". */
static const char *plot_colour(unsigned i)
{
	return palette[i % (sizeof(palette) / sizeof(palette[0]))];
}

/* A "nice" tick step covering range in about n steps. */
static double nice_step(double range, int n)
{
	double raw = range / n, mag = pow(10, floor(log10(raw))), f = raw / mag;
	return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
}

static void head(FILE *o, const struct geom *g, const char *title)
{
	const int PH = g->ph;
	fprintf(o, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"rxp\" width=\"%d\" height=\"%d\" "
		   "viewBox=\"0 0 %d %d\" font-family=\"Verdana,sans-serif\" font-size=\"12\">\n",
		PW, PH, PW, PH);
	fprintf(o, "<rect width=\"%d\" height=\"%d\" fill=\"#fff\"/>\n", PW, PH);
	fprintf(o, "<text x=\"%d\" y=\"22\" font-size=\"15\" text-anchor=\"middle\">", (PW - MR + ML) / 2);
	rxa_xml_puts(o, title);
	fputs("</text>\n", o);
}

static void yaxis(FILE *o, const struct geom *g, double ymax, const char *ylabel, bool percent)
{
	double step = nice_step(ymax, 5);
	int y0 = g->ph - g->mb, h = g->ph - g->mb - MT;
	for (double v = 0; v <= ymax * 1.0001; v += step) {
		double y = y0 - v / ymax * h;
		fprintf(o, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", ML,
			PW - MR, y, y);
		if (percent)
			fprintf(o, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g%%</text>\n", ML - 6, y + 4,
				100 * v);
		else
			fprintf(o, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n", ML - 6, y + 4, v);
	}
	fprintf(o, "<text transform=\"translate(16,%d) rotate(-90)\" text-anchor=\"middle\">", MT + h / 2);
	rxa_xml_puts(o, ylabel);
	fputs("</text>\n", o);
	fprintf(o, "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"#333\"/>\n", ML, PW - MR, y0, y0);
	fprintf(o, "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"#333\"/>\n", ML, ML, MT, y0);
}

static void legend(FILE *o, size_t i, const char *name, const char *colour, bool dashed, bool box)
{
	int y = MT + 8 + (int)i * 18;
	if (box)
		fprintf(o, "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"10\" fill=\"%s\"/>", PW - MR + 12,
			y - 9, colour);
	else
		fprintf(o, "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"2\"%s/>",
			PW - MR + 10, PW - MR + 30, y - 4, y - 4, colour,
			dashed ? " stroke-dasharray=\"5,4\"" : "");
	fprintf(o, "<text x=\"%d\" y=\"%d\" font-size=\"10.5\">", PW - MR + 36, y);
	rxa_xml_puts(o, name);
	fputs("</text>\n", o);
}

int rxo_plot_lines_svg(FILE *o, const char *title, const char *xlabel, const char *ylabel,
		   const struct plot_series *s, size_t ns, bool ypercent)
{
	double xmin = INFINITY, xmax = -INFINITY, ymax = 0;
	size_t pts = 0;
	for (size_t i = 0; i < ns; i++)
		for (size_t k = 0; k < s[i].n; k++) {
			if (!isfinite(s[i].x[k]) || !isfinite(s[i].y[k]))
				continue;
			xmin = fmin(xmin, s[i].x[k]);
			xmax = fmax(xmax, s[i].x[k]);
			ymax = fmax(ymax, s[i].y[k]);
			pts++;
		}
	if (!pts)
		return -EINVAL;
	if (!(xmax > xmin)) {
		xmin -= 1;
		xmax += 1;
	}
	if (!(ymax > 0))
		ymax = ypercent ? 0.01 : 1;
	ymax *= 1.08;
	double step = nice_step(ymax, 5);
	ymax = ceil(ymax / step) * step;
	const struct geom g = {380, 56};
	const int PH = g.ph;
	int w = PW - ML - MR, h = PH - MT - g.mb, y0 = PH - g.mb;
	head(o, &g, title);
	yaxis(o, &g, ymax, ylabel, ypercent);
	/* x ticks at the data's x values (frame sizes) */
	double seen[64];
	size_t nseen = 0;
	for (size_t i = 0; i < ns; i++)
		for (size_t k = 0; k < s[i].n && nseen < 64; k++) {
			bool dup = !isfinite(s[i].x[k]);
			for (size_t j = 0; j < nseen && !dup; j++)
				dup = seen[j] == s[i].x[k];
			if (dup)
				continue;
			seen[nseen++] = s[i].x[k];
			double x = ML + (s[i].x[k] - xmin) / (xmax - xmin) * w;
			fprintf(o, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"#333\"/>", x, x, y0,
				y0 + 5);
			fprintf(o, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g</text>\n", x, y0 + 19,
				s[i].x[k]);
		}
	fprintf(o, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">", ML + w / 2, PH - 12);
	rxa_xml_puts(o, xlabel);
	fputs("</text>\n", o);
	size_t nleg = 0;
	bool any_dashed = false;
	for (size_t i = 0; i < ns; i++) {
		const char *c = plot_colour(s[i].colour);
		fprintf(o, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s points=\"", c,
			s[i].dashed ? " stroke-dasharray=\"5,4\" opacity=\"0.6\"" : "");
		for (size_t k = 0; k < s[i].n; k++)
			if (isfinite(s[i].x[k]) && isfinite(s[i].y[k]))
				fprintf(o, "%.1f,%.1f ", ML + (s[i].x[k] - xmin) / (xmax - xmin) * w,
					y0 - s[i].y[k] / ymax * h);
		fputs("\"/>\n", o);
		for (size_t k = 0; k < s[i].n && !s[i].dashed; k++) {
			if (!isfinite(s[i].x[k]) || !isfinite(s[i].y[k]))
				continue;
			fprintf(o, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"><title>",
				ML + (s[i].x[k] - xmin) / (xmax - xmin) * w, y0 - s[i].y[k] / ymax * h, c);
			rxa_xml_puts(o, s[i].name);
			if (ypercent)
				fprintf(o, ": %g B, %.2f%%</title></circle>\n", s[i].x[k], 100 * s[i].y[k]);
			else
				fprintf(o, ": %g B, %.3g</title></circle>\n", s[i].x[k], s[i].y[k]);
		}
		if (!s[i].dashed) /* dashed twins share the solid series' colour */
			legend(o, nleg++, s[i].name, c, false, false);
		any_dashed |= s[i].dashed;
	}
	if (any_dashed)
		legend(o, nleg++, "dashed: offered rate", "#777", true, false);
	fputs("</svg>\n", o);
	return ferror(o) ? -EIO : 0;
}

int rxo_plot_stacked_svg(FILE *o, const char *title, const char *ylabel, const char *const *segs,
		     size_t nseg, const char *const *bars, const double *values, size_t nbar)
{
	double ymax = 0;
	for (size_t b = 0; b < nbar; b++) {
		double sum = 0;
		for (size_t k = 0; k < nseg; k++)
			sum += isfinite(values[b * nseg + k]) ? values[b * nseg + k] : 0;
		ymax = fmax(ymax, sum);
	}
	if (!nbar || !(ymax > 0))
		return -EINVAL;
	ymax *= 1.05;
	double step = nice_step(ymax, 5);
	ymax = ceil(ymax / step) * step;
	const struct geom g = {480, 150};
	int w = PW - ML - MR, h = g.ph - MT - g.mb, y0 = g.ph - g.mb;
	head(o, &g, title);
	yaxis(o, &g, ymax, ylabel, false);
	double slot = (double)w / (double)nbar, bw = fmin(slot * 0.7, 48);
	for (size_t b = 0; b < nbar; b++) {
		double x = ML + slot * ((double)b + 0.5) - bw / 2, acc = 0;
		for (size_t k = 0; k < nseg; k++) {
			double v = values[b * nseg + k];
			if (!isfinite(v) || v <= 0)
				continue;
			double y = y0 - (acc + v) / ymax * h;
			fprintf(o, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>",
				x, y, bw, v / ymax * h, plot_colour((unsigned)k));
			rxa_xml_puts(o, bars[b]);
			fputs(": ", o);
			rxa_xml_puts(o, segs[k]);
			fprintf(o, " %.1f</title></rect>\n", v);
			acc += v;
		}
		fprintf(o, "<text transform=\"translate(%.1f,%d) rotate(-50)\" text-anchor=\"end\" font-size=\"10\">",
			x + bw / 2, y0 + 12);
		rxa_xml_puts(o, bars[b]);
		fputs("</text>\n", o);
	}
	for (size_t k = 0; k < nseg; k++)
		legend(o, k, segs[k], plot_colour((unsigned)k), false, true);
	fputs("</svg>\n", o);
	return ferror(o) ? -EIO : 0;
}
