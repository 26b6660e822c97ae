/* SPDX-License-Identifier: MIT */
/*
 * The ceiling model (docs/method.md "The ceiling model") and the bound classifier.
 * It reads a thread's cycles per packet through point.c, where a stage's
 * share of a thread is charged per packet of the thread, so the shares
 * here and the flame graph's widths read the same numbers.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rxray/analyze.h"
#include "rxray/model.h"
#include "rxray/util.h"

/* Median-lap view of a run: predicted Mpps with stages at p50 x laps. */
static double predict_median(const struct rxr_result *r, double queues)
{
	double *cpp = calloc(r->nthreads ? r->nthreads : 1, sizeof(double));
	if (!cpp)
		return NAN;
	for (size_t i = 0; i < r->nthreads; i++)
		for (int s = 0; s < RXP_ST_COUNT; s++)
			if (s != RXP_ST_IDLE)
				cpp[i] += rxa_thread_stage_median_cpp(&r->threads[i], s);
	double m = rxa_run_predict(r, cpp, queues, NULL);
	free(cpp);
	return m;
}

double rxa_run_predict(const struct rxr_result *r, const double *cpp, double queues, int *bottleneck)
{
	int best = -1;
	double worst = 0;
	for (size_t i = 0; i < r->nthreads; i++) {
		const struct rxr_thread_result *t = &r->threads[i];
		if (!strcmp(t->role, "nic") || !t->packets)
			continue;
		double c = cpp ? cpp[i] : rxa_thread_busy_cpp(t);
		if (best < 0 || c > worst) {
			worst = c;
			best = (int)i;
		}
	}
	if (bottleneck)
		*bottleneck = best;
	if (best < 0 || !(worst > 0) || !(r->clock.hz > 0))
		return NAN;
	return r->clock.hz / worst * queues / 1e6;
}

static int share_cmp(const void *a, const void *b)
{
	const struct rxa_stage_share *x = a, *y = b;
	return (x->cpp < y->cpp) - (x->cpp > y->cpp);
}

void rxa_ceiling_compute(const struct rxa_point *p, struct rxa_ceiling *c)
{
	memset(c, 0, sizeof(*c));
	c->p = p;
	c->thread = -1;
	c->cpp = c->hz = c->predicted_mpps = c->ratio = c->median_mpps = NAN;
	c->model_mpps = c->model_ratio = NAN;
	c->tail_stage = -1;
	c->top_offered_mpps = c->top_rx_mpps = c->top_loss = NAN;
	c->queues = 1;
	c->basis_name = "-";
	snprintf(c->thread_label, sizeof(c->thread_label), "-");
	if (p->top_run) {
		c->top_offered_mpps = p->top_run->offered_mpps;
		c->top_rx_mpps = p->top_run->rx_mpps;
		c->top_loss = p->top_run->loss;
	}
	const struct rxr_result *r = rxa_point_run(p);
	if (!r)
		return;
	c->basis = r;
	c->basis_name = r == p->ndr_run ? "ndr" : "top";
	c->hz = r->clock.hz;
	c->queues = rxa_run_queues(r, p->knobs);
	c->predicted_mpps = rxa_run_predict(r, NULL, c->queues, &c->thread);
	if (c->thread < 0)
		return;
	const struct rxr_thread_result *t = &r->threads[c->thread];
	rxa_thread_label(r, (size_t)c->thread, c->thread_label, sizeof(c->thread_label));
	c->cpp = rxa_thread_busy_cpp(t);
	/* only an NDR is a measured ceiling: without one there is no ratio
	 * (the highest trial's RX rate is shown for itself) */
	if (isfinite(c->predicted_mpps) && c->predicted_mpps > 0 && isfinite(p->ndr_mpps) &&
	    p->ndr_mpps > 0)
		c->ratio = p->ndr_mpps / c->predicted_mpps;
	struct rxa_stage_share all[RXP_ST_COUNT];
	size_t n = 0;
	for (int s = 0; s < RXP_ST_COUNT; s++) {
		double v = rxa_thread_stage_cpp(t, s);
		if (s == RXP_ST_IDLE || !(v > 0))
			continue;
		all[n++] = (struct rxa_stage_share){s, v, c->cpp > 0 ? v / c->cpp : 0};
	}
	qsort(all, n, sizeof(all[0]), share_cmp);
	c->median_mpps = predict_median(r, c->queues);
	for (size_t i = 0; i < n; i++) {
		const struct rxr_stage_sum *st = &t->st[all[i].stage];
		if (all[i].share < 0.10 || !st->count || !st->p50)
			continue;
		double ratio = ((double)st->cycles / (double)st->count) / (double)st->p50;
		if (ratio > c->tail_ratio) {
			c->tail_ratio = ratio;
			c->tail_stage = all[i].stage;
		}
	}
	c->ntop = n < RXA_TOP_STAGES ? n : RXA_TOP_STAGES;
	memcpy(c->top, all, c->ntop * sizeof(all[0]));
}

const char *rxa_bound_name(enum rxa_bound b)
{
	switch (b) {
	case RXA_BOUND_PACKET: return "per-packet";
	case RXA_BOUND_BYTE: return "per-byte";
	case RXA_BOUND_MIXED: return "mixed";
	default: return "unknown";
	}
}

int rxa_bound_fit(const double *x, const double *y, size_t n, struct rxa_fit *out)
{
	memset(out, 0, sizeof(*out));
	if (n < 2)
		return -EINVAL;
	double sx = 0, sy = 0, xmin = INFINITY, xmax = -INFINITY;
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(x[i]) || !isfinite(y[i]))
			return -EINVAL;
		sx += x[i];
		sy += y[i];
		xmin = fmin(xmin, x[i]);
		xmax = fmax(xmax, x[i]);
	}
	if (!(xmax > xmin))
		return -EINVAL;
	double mx = sx / (double)n, my = sy / (double)n, sxx = 0, sxy = 0, syy = 0;
	for (size_t i = 0; i < n; i++) {
		sxx += (x[i] - mx) * (x[i] - mx);
		sxy += (x[i] - mx) * (y[i] - my);
		syy += (y[i] - my) * (y[i] - my);
	}
	out->n = n;
	out->b = sxy / sxx;
	out->a = my - out->b * mx;
	double ssr = 0;
	for (size_t i = 0; i < n; i++) {
		double e = y[i] - (out->a + out->b * x[i]);
		ssr += e * e;
	}
	out->rms = sqrt(ssr / (double)n);
	out->rel_rms = my != 0 ? out->rms / fabs(my) : 0;
	out->poor = out->rel_rms > 0.2;
	out->r2 = syy > 0 ? 1 - ssr / syy : 1;
	out->xmin = xmin;
	out->xmax = xmax;
	double at_max = out->a + out->b * xmax;
	out->byte_share = at_max > 0 ? out->b * xmax / at_max : 0;
	if (out->byte_share < 0.25)
		out->bound = RXA_BOUND_PACKET;
	else if (out->byte_share > 0.75)
		out->bound = RXA_BOUND_BYTE;
	else
		out->bound = RXA_BOUND_MIXED;
	/*
	 * Decline rather than mislead (docs/method.md "Bound classifier"): two
	 * points always fit a line exactly, a scattered set fits none, and
	 * time/packet that falls with bytes is noise or a disturbed point,
	 * not a receiver (a share of -339% was once printed as "per-packet").
	 */
	if (out->byte_share < -0.1 || !(at_max > 0)) {
		out->byte_share = NAN;
		out->declined = "time/packet falls with frame size";
	} else if (out->byte_share < 0) {
		out->byte_share = 0; /* flat within noise */
	}
	if (!out->declined && out->poor)
		out->declined = "poor fit: residual over 20% of the mean";
	if (!out->declined && n < RXA_BOUND_MIN_POINTS)
		out->declined = "fewer than 3 clean frame sizes";
	if (out->declined)
		out->bound = RXA_BOUND_UNKNOWN;
	return 0;
}

bool rxa_point_clean(const struct rxa_point *p, const char **why)
{
	unsigned m = rxa_point_marks(p) & RXA_MARKS_UNCLEAN;
	const char *w = NULL;
	/* the first in the marks' order: oversubscribed, disturbed, unresolved, interrupted */
	for (unsigned bit = 1; m && !w; bit <<= 1)
		if (m & bit)
			w = rxa_mark_word(bit);
	if (why)
		*why = w;
	return !w;
}

/* Family key: every knob but frame, in the point's order. */
static char *family_key(const struct rxa_point *p)
{
	char *s = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&s, &len);
	if (!m)
		return NULL;
	const char *name;
	json_t *v;
	json_object_foreach(p->knobs, name, v) {
		char b[256];
		if (strcmp(name, "frame") && rxa_result_knob_str(p->knobs, name, b, sizeof(b)))
			fprintf(m, "%s=%s,", name, b);
	}
	fclose(m);
	return s;
}

static int frame_cmp(const void *a, const void *b, void *ctx)
{
	const struct rxa_ceiling *sort_c = ctx;
	double fa = rxa_knob_num(sort_c[*(const size_t *)a].p->knobs, "frame", 0);
	double fb = rxa_knob_num(sort_c[*(const size_t *)b].p->knobs, "frame", 0);
	return (fa > fb) - (fa < fb);
}

static void family_fit(struct rxa_family *f, const struct rxa_ceiling *c)
{
	double *x = calloc(f->n, sizeof(double)), *yc = calloc(f->n, sizeof(double));
	double *xr = calloc(f->n, sizeof(double)), *yr = calloc(f->n, sizeof(double));
	size_t nc = 0, nr = 0;
	for (size_t i = 0; x && yc && xr && yr && i < f->n; i++) {
		const struct rxa_ceiling *k = &c[f->idx[i]];
		double fr = rxa_knob_num(k->p->knobs, "frame", NAN);
		/* oversubscribed, disturbed, unresolved and interrupted points are marked, not fitted */
		if (!isfinite(fr) || !rxa_point_clean(k->p, NULL))
			continue;
		unsigned mk = rxa_point_marks(k->p);
		if (isfinite(k->predicted_mpps) && k->predicted_mpps > 0) {
			x[nc] = fr;
			yc[nc++] = 1000.0 / k->predicted_mpps;
			f->cost_marks |= mk;
		}
		/* a generator-limited NDR is the generator's ceiling, not the receiver's */
		double m = isfinite(k->p->ndr_mpps) && k->p->ndr_mpps > 0 ? k->p->ndr_mpps : k->top_rx_mpps;
		if (isfinite(m) && m > 0 && !k->p->generator_limited) {
			xr[nr] = fr;
			yr[nr++] = 1000.0 / m;
			f->rate_marks |= mk;
		}
	}
	f->have_cost = x && yc && !rxa_bound_fit(x, yc, nc, &f->cost);
	f->have_rate = xr && yr && !rxa_bound_fit(xr, yr, nr, &f->rate);
	free(x);
	free(yc);
	free(xr);
	free(yr);
}

int rxa_families_build(const struct rxa_set *s, const struct rxa_ceiling *c, size_t n,
		       struct rxa_family **out, size_t *nout)
{
	struct rxa_family *fam = NULL;
	char **keys = NULL;
	size_t nf = 0;
	int rc = 0;
	size_t nvary = 0;
	const char **vary = rxa_set_varying(s, &nvary);
	/* family key -> index + 1: one hash probe per point, not a scan of the families */
	json_t *idx_of = json_object();
	if (!vary || !idx_of) {
		free(vary);
		json_decref(idx_of);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n && !rc; i++) {
		char *k = family_key(c[i].p);
		if (!k) {
			rc = -ENOMEM;
			break;
		}
		size_t j = (size_t)json_integer_value(json_object_get(idx_of, k));
		j = j ? j - 1 : nf;
		if (j == nf) {
			if (json_object_set_new_nocheck(idx_of, k, json_integer((json_int_t)nf + 1))) {
				free(k);
				rc = -ENOMEM;
				break;
			}
			struct rxa_family *nfam = realloc(fam, (nf + 1) * sizeof(*nfam));
			char **nk = nfam ? realloc(keys, (nf + 1) * sizeof(*nk)) : NULL;
			if (nfam)
				fam = nfam;
			if (!nk) {
				free(k);
				rc = -ENOMEM;
				break;
			}
			keys = nk;
			keys[nf] = k;
			memset(&fam[nf], 0, sizeof(fam[nf]));
			char label[512];
			size_t len = 0;
			label[0] = '\0';
			for (size_t v = 0; v < nvary; v++) {
				char b[256];
				if (!strcmp(vary[v], "frame") ||
				    !rxa_result_knob_str(c[i].p->knobs, vary[v], b, sizeof(b)))
					continue;
				len += (size_t)snprintf(label + len, sizeof(label) - len, "%s%s=%s",
							len ? " " : "", vary[v], b);
				if (len >= sizeof(label))
					break;
			}
			rxu_utf8_trim(label);
			fam[nf].label = strdup(len ? label : "all");
			nf++;
		} else {
			free(k);
		}
		/* room doubles: n is 0 or a power of two whenever the array is full */
		if (!(fam[j].n & (fam[j].n - 1))) {
			size_t *ni = realloc(fam[j].idx, (fam[j].n ? fam[j].n * 2 : 1) * sizeof(size_t));
			if (!ni || !fam[j].label) {
				rc = -ENOMEM;
				break;
			}
			fam[j].idx = ni;
		}
		fam[j].idx[fam[j].n++] = i;
	}
	for (size_t j = 0; j < nf; j++)
		free(keys[j]);
	free(keys);
	free(vary);
	json_decref(idx_of);
	if (rc) {
		rxa_families_free(fam, nf);
		return rc;
	}
	for (size_t j = 0; j < nf; j++) {
		qsort_r(fam[j].idx, fam[j].n, sizeof(size_t), frame_cmp, (void *)c);
		family_fit(&fam[j], c);
	}
	*out = fam;
	*nout = nf;
	return 0;
}

void rxa_families_free(struct rxa_family *f, size_t n)
{
	if (!f)
		return;
	for (size_t i = 0; i < n; i++) {
		free(f[i].label);
		free(f[i].idx);
	}
	free(f);
}

void rxa_ceiling_model(struct rxa_ceiling *c, double light_frac)
{
	struct rxa_point_model *pm = malloc(sizeof(*pm));
	if (!pm)
		return;
	rxa_point_model_compute(c->p, light_frac, pm);
	c->model_mpps = pm->m.predicted_mpps;
	if (isfinite(c->model_mpps) && c->model_mpps > 0 && isfinite(c->p->ndr_mpps) &&
	    c->p->ndr_mpps > 0)
		c->model_ratio = c->p->ndr_mpps / c->model_mpps;
	free(pm);
}
