/* SPDX-License-Identifier: MIT */
/* Report parts: mode/engine diffs, plots and flame graphs. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plot.h"
#include "report_priv.h"
#include "rxray/flame.h"
#include "rxray/pair.h"
#include "rxray/util.h"

static const char *const diff_axes[] = {"mode", "engine"};

static int diff_cmp(const void *a, const void *b)
{
	const struct rpt_diff *x = a, *y = b;
	int c = strcmp(x->axis, y->axis);
	if (c)
		return -c; /* mode before engine */
	double dx = fabs(x->d.busy_b - x->d.busy_a), dy = fabs(y->d.busy_b - y->d.busy_a);
	return (dx < dy) - (dx > dy);
}

int rxo_rpt_diffs_collect(struct rpt *R)
{
	const struct rxa_set *s = R->s;
	size_t cap = 0;
	for (size_t ax = 0; ax < 2; ax++) {
		const char *axis = diff_axes[ax];
		size_t *pairs, np;
		if (rxa_pair_candidates(s, &axis, 1, NULL, NULL, RXA_PAIR_UNORDERED, &pairs, &np))
			return -ENOMEM;
		for (size_t q = 0; q < np; q++) {
			size_t i = pairs[2 * q], j = pairs[2 * q + 1];
			char ri[512], vi[64], vj[64];
			if (!rxa_result_knob_str(s->pts[i].knobs, axis, vi, sizeof(vi)) ||
			    !rxa_result_knob_str(s->pts[j].knobs, axis, vj, sizeof(vj)) ||
			    !strcmp(vi, vj) ||
			    !rxa_pair_agrees(&s->pts[i], &s->pts[j], &axis, 1, ri, sizeof(ri)))
				continue;
			if (R->ndiffs == cap) {
				size_t nc = cap ? cap * 2 : 16;
				struct rpt_diff *nd = realloc(R->diffs, nc * sizeof(*nd));
				if (!nd) {
					free(pairs);
					return -ENOMEM;
				}
				R->diffs = nd;
				cap = nc;
			}
			struct rpt_diff *e = &R->diffs[R->ndiffs];
			memset(e, 0, sizeof(*e));
			/* A = the point with the higher NDR lower end, so the verdict
			 * reads "B adds ..."; by the NDR-trial accounting only where
			 * neither point has an NDR (which is faster is said only where
			 * the intervals separate: report_verdict.c) */
			double pi = s->pts[i].ndr_mpps, pj = s->pts[j].ndr_mpps;
			if (!isfinite(pi) && !isfinite(pj)) {
				pi = R->c[i].predicted_mpps;
				pj = R->c[j].predicted_mpps;
			}
			bool swap = isfinite(pj) && (!isfinite(pi) || pj > pi);
			e->axis = axis;
			e->ia = swap ? j : i;
			e->ib = swap ? i : j;
			snprintf(e->la, sizeof(e->la), "%s", swap ? vj : vi);
			snprintf(e->lb, sizeof(e->lb), "%s", swap ? vi : vj);
			snprintf(e->rest, sizeof(e->rest), "%s", ri);
			int rc = rxa_diff_compute(rxa_point_run(&s->pts[e->ia]), rxa_point_run(&s->pts[e->ib]),
						  s->pts[e->ib].knobs, e->la, e->lb, &e->d);
			if (rc == -ENOMEM) {
				free(pairs);
				return rc;
			}
			if (!rc)
				R->ndiffs++;
		}
		free(pairs);
	}
	if (R->ndiffs)
		qsort(R->diffs, R->ndiffs, sizeof(R->diffs[0]), diff_cmp);
	return 0;
}

void rxo_rpt_diffs_free(struct rpt *R)
{
	for (size_t i = 0; i < R->ndiffs; i++)
		rxa_diff_free(&R->diffs[i].d);
	free(R->diffs);
	for (int i = 0; i < RPT_PLOTS; i++)
		free(R->plot[i]);
	for (size_t i = 0; R->flame && i < R->s->n; i++)
		free(R->flame[i]);
	free(R->flame);
	free(R->dflame[0]);
	free(R->dflame[1]);
}

/* "[hds disturbed: ...; single unresolved: ...] ": the marks of both
 * points of a diff, each with its reason; "" when neither has any. */
static void diff_marks(const struct rpt *R, const struct rpt_diff *x, char *buf, size_t n)
{
	size_t o = 0;
	const size_t side[2] = {x->ia, x->ib};
	const char *lab[2] = {x->la, x->lb};
	buf[0] = '\0';
	for (int k = 0; k < 2 && o < n; k++) {
		const struct rxa_point *p = &R->s->pts[side[k]];
		unsigned m = rxa_point_marks(p);
		char ph[1024];
		if (!m)
			continue;
		rxa_marks_phrase(p, m, true, ph, sizeof(ph));
		o += (size_t)snprintf(buf + o, n - o, "%s%s %s", o ? "; " : "[", lab[k], ph);
	}
	if (o && o < n)
		snprintf(buf + o, n - o, "] ");
}

void rxo_rpt_section_diffs(struct rpt *R, struct doc *d)
{
	rxo_doc_h(d, 2, "diffs", "Biggest differences between modes and engines");
	if (!R->ndiffs) {
		rxo_doc_p(d, "No two measured points differ in mode or engine alone.");
		return;
	}
	for (size_t ax = 0; ax < 2; ax++) {
		size_t first = R->ndiffs, n = 0;
		for (size_t i = 0; i < R->ndiffs; i++)
			if (!strcmp(R->diffs[i].axis, diff_axes[ax])) {
				if (first == R->ndiffs)
					first = i;
				n++;
			}
		if (!n)
			continue;
		rxo_doc_h(d, 3, ax ? "diff-engine" : "diff-mode", ax ? "Between engines" : "Between modes");
		rxo_doc_ul_begin(d);
		for (size_t i = first; i < first + n && i < first + 8; i++) {
			char mk[2200];
			diff_marks(R, &R->diffs[i], mk, sizeof(mk));
			rxo_doc_li(d, mk[0] ? "warn" : NULL, "%s%s: %s", mk, R->diffs[i].rest,
			       R->diffs[i].d.verdict);
		}
		rxo_doc_ul_end(d);
		const struct rpt_diff *e = &R->diffs[first];
		char emk[2200];
		diff_marks(R, e, emk, sizeof(emk));
		rxo_doc_p(d, "%sLargest change (%s vs %s at %s), stage by stage:", emk, e->la, e->lb, e->rest);
		struct rxa_table *t = NULL;
		rxa_diff_table(&e->d, e->la, e->lb, 10, &t);
		if (t)
			rxo_doc_table(d, t);
		rxa_table_free(t);
		rxa_whatif_table(&e->d, &t);
		if (t && t->nrows) {
			rxo_doc_p(d, "What %s would reach if one stage of its %s thread cost what it costs in %s:",
			      e->d.whatif_run, e->d.whatif_thread, e->d.whatif_from);
			rxo_doc_table(d, t);
		}
		rxa_table_free(t);
		if (R->dflame[ax]) {
			char rel[64], cap[3072];
			snprintf(rel, sizeof(rel), "flames/diff_%s.svg", diff_axes[ax]);
			snprintf(cap, sizeof(cap), "%sDifferential flame graph, %s -> %s at %s (red grows, blue shrinks)",
				 emk, e->la, e->lb, e->rest);
			rxo_doc_svg(d, cap, rel, R->dflame[ax], 0);
		}
	}
}

/* Render with a writer into a string. */
static char *mem_render(int (*fn)(FILE *, void *), void *ctx, int *rc)
{
	char *s = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&s, &len);
	if (!m) {
		*rc = -ENOMEM;
		return NULL;
	}
	*rc = fn(m, ctx);
	fclose(m);
	if (*rc) {
		free(s);
		return NULL;
	}
	return s;
}

struct lines_ctx {
	struct rpt *R;
	int which; /* 0 = rx Mpps, 1 = loss */
};

static int lines_fn(FILE *o, void *vctx)
{
	struct lines_ctx *L = vctx;
	struct rpt *R = L->R;
	size_t ns = 0;
	struct plot_series *s = calloc(2 * R->nf + 1, sizeof(*s));
	double *buf = calloc(6 * R->s->n + 1, sizeof(double));
	/* a series' name carries the marks of its points: "[marked: 512 B disturbed]" */
	char (*names)[512] = calloc(R->nf + 1, sizeof(*names));
	int rc = -ENOMEM;
	if (!s || !buf || !names)
		goto out;
	double *p = buf;
	for (size_t j = 0; j < R->nf; j++) {
		const struct rxa_family *f = &R->f[j];
		double *x = p, *y = p + f->n, *yo = p + 2 * f->n;
		p += 3 * f->n;
		size_t k = 0;
		for (size_t i = 0; i < f->n; i++) {
			const struct rxa_ceiling *c = &R->c[f->idx[i]];
			if (!c->p->top_run && !c->p->ndr_run)
				continue;
			x[k] = rxa_knob_num(c->p->knobs, "frame", NAN);
			unsigned m = rxa_point_marks(c->p);
			if (m) {
				char w[256], fb[32];
				const char *fr = rxa_result_knob_str(c->p->knobs, "frame", fb, sizeof(fb));
				size_t nl = strlen(names[j]);
				rxa_marks_phrase(c->p, m, false, w, sizeof(w));
				snprintf(names[j] + nl, sizeof(names[j]) - nl, "%s%s B %s", nl ? "; " : "",
					 fr ? fr : "?", w);
			}
			if (L->which == 0) {
				y[k] = isfinite(c->p->ndr_mpps) ? c->p->ndr_mpps : c->top_rx_mpps;
				yo[k] = c->top_offered_mpps;
			} else {
				y[k] = c->top_loss;
			}
			k++;
		}
		if (!k)
			continue;
		if (names[j][0]) {
			char tmp[512];
			snprintf(tmp, sizeof(tmp), "%s [marked: %s]", f->label, names[j]);
			memcpy(names[j], tmp, sizeof(tmp));
		} else {
			snprintf(names[j], sizeof(names[j]), "%s", f->label);
		}
		s[ns++] = (struct plot_series){.name = names[j], .n = k, .x = x, .y = y, .colour = (unsigned)j};
		if (L->which == 0)
			s[ns++] = (struct plot_series){.name = "offered (highest trial)", .n = k, .x = x, .y = yo,
						       .dashed = true, .colour = (unsigned)j};
	}
	rc = L->which == 0
		     ? rxo_plot_lines_svg(o, "RX rate vs frame size (solid: NDR; dashed: offered)", "frame size (bytes)",
				      "Mpps", s, ns, false)
		     : rxo_plot_lines_svg(o, "Loss at the highest-rate trial vs frame size", "frame size (bytes)",
				      "loss", s, ns, true);
out:
	free(s);
	free(buf);
	free(names);
	return rc;
}

static int stacked_fn(FILE *o, void *vctx)
{
	struct rpt *R = vctx;
	const char *segs[RXP_ST_COUNT];
	int segid[RXP_ST_COUNT];
	size_t nseg = 0, nbar = 0;
	for (int st = 0; st < RXP_ST_COUNT; st++) {
		bool used = false;
		for (size_t i = 0; i < R->s->n && !used; i++)
			used = R->c[i].thread >= 0 &&
			       rxa_thread_stage_cpp(&R->c[i].basis->threads[R->c[i].thread], st) > 0;
		if (used && st != RXP_ST_IDLE) {
			segid[nseg] = st;
			segs[nseg++] = rxp_stage_name((enum rxp_stage)st);
		}
	}
	char **labels = calloc(R->s->n + 1, sizeof(char *));
	double *v = calloc((R->s->n + 1) * (nseg + 1), sizeof(double));
	int rc = -ENOMEM;
	if (!labels || !v)
		goto out;
	for (size_t i = 0; i < R->s->n; i++) {
		const struct rxa_ceiling *c = &R->c[i];
		if (c->thread < 0)
			continue;
		char lb[512];
		size_t len = 0;
		lb[0] = '\0';
		for (size_t k = 0; k < R->nvary && len < sizeof(lb); k++) {
			char b[64];
			const char *x = rxa_result_knob_str(c->p->knobs, R->vary[k], b, sizeof(b));
			len += (size_t)snprintf(lb + len, sizeof(lb) - len, "%s%s", k ? "/" : "", x ? x : "-");
		}
		if (len < sizeof(lb))
			len += (size_t)snprintf(lb + len, sizeof(lb) - len, " %s", c->thread_label);
		unsigned m = rxa_point_marks(c->p);
		if (m && len < sizeof(lb)) { /* the bar's figures carry the point's marks */
			char w[200];
			rxa_marks_phrase(c->p, m, false, w, sizeof(w));
			snprintf(lb + len, sizeof(lb) - len, " [%s]", w);
		}
		if (!(labels[nbar] = strdup(lb)))
			goto out;
		for (size_t k = 0; k < nseg; k++)
			v[nbar * nseg + k] = rxa_thread_stage_cpp(&c->basis->threads[c->thread], segid[k]);
		nbar++;
	}
	rc = rxo_plot_stacked_svg(o, "Cycles per packet of the bottleneck thread, by stage", "cycles/packet", segs,
			      nseg, (const char *const *)labels, v, nbar);
out:
	for (size_t i = 0; labels && i < nbar; i++)
		free(labels[i]);
	free(labels);
	free(v);
	return rc;
}

int rxo_rpt_plots(struct rpt *R)
{
	static const char *const rel[RPT_PLOTS] = {"plots/rx_mpps.svg", "plots/loss.svg", "plots/cycles.svg"};
	struct lines_ctx l0 = {R, 0}, l1 = {R, 1};
	for (int i = 0; i < RPT_PLOTS; i++) {
		int rc;
		R->plot[i] = i == 2 ? mem_render(stacked_fn, R, &rc) : mem_render(lines_fn, i ? &l1 : &l0, &rc);
		if (rc == -EINVAL) /* nothing to plot */
			continue;
		if (rc) {
			snprintf(R->err, R->errlen, "%s: %s", rel[i], strerror(-rc));
			return rc;
		}
		char *xml = NULL;
		if (asprintf(&xml, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n%s", R->plot[i]) < 0)
			return -ENOMEM;
		rc = rxo_rpt_save(R, rel[i], xml, strlen(xml));
		free(xml);
		if (rc)
			return rc;
	}
	return 0;
}

struct flame_ctx {
	const struct rxa_flame *a, *b;
	struct rxa_flame_svg_opts o;
};

static int flame_fn(FILE *o, void *vctx)
{
	struct flame_ctx *F = vctx;
	return F->a ? rxa_flame_diff_svg_write(F->a, F->b, o, &F->o) : rxa_flame_svg_write(F->b, o, &F->o);
}

static int flame_one(struct rpt *R, const struct rxr_result *a, const struct rxr_result *b,
		     struct rxa_flame_svg_opts *o, const char *rel, char **out)
{
	struct rxa_flame *fa = NULL, *fb = NULL;
	if (a)
		rxa_flame_open(&fa);
	rxa_flame_open(&fb);
	int rc = -ENOMEM;
	if (!fb || (a && !fa))
		goto out;
	if ((a && (rc = rxa_flame_add_result(fa, a, NULL))) || (rc = rxa_flame_add_result(fb, b, NULL)))
		goto out;
	if (!(rxa_flame_total(fb) > 0)) {
		rc = 0; /* no stage cycles recorded: nothing to draw */
		goto out;
	}
	struct flame_ctx F = {fa, fb, *o};
	*out = mem_render(flame_fn, &F, &rc);
	if (!rc)
		rc = rxo_rpt_save(R, rel, *out, strlen(*out));
	else
		snprintf(R->err, R->errlen, "%s: %s", rel, strerror(-rc));
out:
	/* every failure names itself: the caller prints R->err as is */
	if (rc && !R->err[0])
		snprintf(R->err, R->errlen, "%s: %s", rel, strerror(-rc));
	rxa_flame_free(fa);
	rxa_flame_free(fb);
	return rc;
}

int rxo_rpt_flames(struct rpt *R)
{
	R->flame = calloc(R->s->n + 1, sizeof(char *));
	if (!R->flame)
		return -ENOMEM;
	for (size_t i = 0, drawn = 0; i < R->s->n && drawn < RPT_MAX_POINT_FLAMES; i++) {
		const struct rxa_point *p = &R->s->pts[i];
		const struct rxr_result *r = rxa_point_run(p);
		if (!r || !r->nthreads)
			continue;
		drawn++;
		char label[512], rel[64], sub[1400], mk[1200] = "";
		rxa_point_label(p, R->vary, R->nvary, label, sizeof(label));
		snprintf(rel, sizeof(rel), "flames/point%zu.svg", i);
		/* a marked point's graph says so, each mark with its reason */
		if (rxa_point_marks(p))
			rxa_marks_phrase(p, rxa_point_marks(p), true, mk, sizeof(mk));
		snprintf(sub, sizeof(sub), "%s%s%swidths: cycles per packet by thread and stage, from the %s run",
			 mk[0] ? "MARKED: " : "", mk, mk[0] ? "  |  " : "",
			 r == p->ndr_run ? "NDR" : "highest-rate");
		struct rxa_flame_svg_opts o = {.title = label, .subtitle = sub, .units = "cycles/packet"};
		int rc = flame_one(R, NULL, r, &o, rel, &R->flame[i]);
		if (rc)
			return rc;
	}
	for (size_t ax = 0; ax < 2; ax++) {
		for (size_t i = 0; i < R->ndiffs; i++) {
			const struct rpt_diff *e = &R->diffs[i];
			if (strcmp(e->axis, diff_axes[ax]))
				continue;
			char rel[64], title[768];
			snprintf(rel, sizeof(rel), "flames/diff_%s.svg", diff_axes[ax]);
			snprintf(title, sizeof(title), "%s -> %s at %s", e->la, e->lb, e->rest);
			rxu_utf8_trim(title);
			struct rxa_flame_svg_opts o = {.title = title, .units = "cycles/packet",
						       .label_a = e->la, .label_b = e->lb};
			int rc = flame_one(R, rxa_point_run(&R->s->pts[e->ia]), rxa_point_run(&R->s->pts[e->ib]),
					   &o, rel, &R->dflame[ax]);
			if (rc)
				return rc;
			break;
		}
	}
	return 0;
}

void rxo_rpt_section_plots(struct rpt *R, struct doc *d)
{
	static const char *const rel[RPT_PLOTS] = {"plots/rx_mpps.svg", "plots/loss.svg", "plots/cycles.svg"};
	static const char *const cap[RPT_PLOTS] = {
		"RX Mpps vs frame size, with the offered rate",
		"Loss at the highest-rate trial vs frame size",
		"Stacked cycles/packet per stage of each point's bottleneck thread"};
	rxo_doc_h(d, 2, "plots", "Plots");
	for (int i = 0; i < RPT_PLOTS; i++)
		if (R->plot[i])
			rxo_doc_svg(d, cap[i], rel[i], R->plot[i], 0);
}

void rxo_rpt_section_flames(struct rpt *R, struct doc *d)
{
	rxo_doc_h(d, 2, "flames", "Flame graphs");
	rxo_doc_p(d, "One per measured point: frames are thread roles and their stages, widths are cycles per "
		 "packet. In the HTML report: hover for details, click to zoom, Search to highlight.");
	size_t measured = 0;
	for (size_t i = 0; i < R->s->n; i++)
		measured += rxa_point_run(&R->s->pts[i]) != NULL;
	if (measured > RPT_MAX_POINT_FLAMES)
		rxo_doc_p(d, "The first %d of %zu measured points (a report stays readable); draw any other "
			 "with: rxray flame RESULTS -s knob=value,... -o flame.svg",
		      RPT_MAX_POINT_FLAMES, measured);
	for (size_t i = 0; i < R->s->n; i++) {
		if (!R->flame[i])
			continue;
		char label[512], rel[64];
		rxa_point_label(&R->s->pts[i], R->vary, R->nvary, label, sizeof(label));
		snprintf(rel, sizeof(rel), "flames/point%zu.svg", i);
		rxo_doc_svg(d, label, rel, R->flame[i], 1);
	}
}
