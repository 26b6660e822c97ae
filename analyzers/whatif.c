/* SPDX-License-Identifier: MIT */
/*
 * What-if on the cost model (rxray whatif): change a stage's cost per
 * packet (+K, -K) or scale it (xF) on every receive thread that laps it,
 * and predict the ceiling again from the same light-load model
 * (rxray/model.h), and, where the receiver limits a point, from that
 * model calibrated at the NDR trial (rxa_point_model_at_ndr), so the
 * answer can be checked by injecting the same change (--inject
 * STAGE=K) and measuring the NDR (bench/whatif_check).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rxray/model.h"
#include "rxray/util.h"

/* ------------------------------------------------------------ what-if */

int rxa_whatif_parse(const char *text, struct rxa_whatif_change *out, char *err, size_t errlen)
{
	const char *eq = text ? strchr(text, '=') : NULL;
	char name[32];
	if (!eq || eq == text || (size_t)(eq - text) >= sizeof(name))
		return rxu_errf(err, errlen, -EINVAL,
				"'%s' is not STAGE=+K, STAGE=-K or STAGE=xF", text ? text : "");
	memcpy(name, text, (size_t)(eq - text));
	name[eq - text] = '\0';
	int s = rxp_stage_from_name(name);
	if (s < 0)
		return rxu_errf(err, errlen, -EINVAL, "%s: unknown stage '%s'", text, name);
	if (s == RXP_ST_IDLE)
		return rxu_errf(err, errlen, -EINVAL, "%s: idle is waiting, not a cost", text);
	const char *v = eq + 1;
	char *end = NULL;
	out->stage = s;
	if (*v == 'x' || *v == '*') {
		out->op = RXA_WHATIF_MUL;
		out->v = strtod(v + 1, &end);
		if (end == v + 1 || *end || !isfinite(out->v))
			return rxu_errf(err, errlen, -EINVAL, "%s: '%s' is not a factor (x0.5, x2)", text, v);
		if (!(out->v > 0))
			return rxu_errf(err, errlen, -EINVAL,
					"%s: factor must be > 0 (x0 would make the stage free)", text);
		return 0;
	}
	if (*v != '+' && *v != '-')
		return rxu_errf(err, errlen, -EINVAL,
				"%s: say +K, -K (cycles per packet) or xF (factor)", text);
	uint64_t k = 0;
	if (rxu_parse_u64(v + 1, 0, 1000000000ull, &k) < 0)
		return rxu_errf(err, errlen, -EINVAL, "%s: '%s' is not a cycle count", text, v + 1);
	out->op = RXA_WHATIF_ADD;
	out->v = *v == '-' ? -(double)k : (double)k;
	return 0;
}

int rxa_model_apply(struct rxa_model *m, const struct rxa_whatif_change *c, size_t n, char *err,
		    size_t errlen)
{
	for (size_t i = 0; i < n; i++) {
		int s = c[i].stage;
		bool hit = false;
		for (size_t k = 0; k < m->nthreads; k++) {
			struct rxa_model_thread *t = &m->th[k];
			if (!t->have[s] || !(t->share[s] > 0))
				continue;
			hit = true;
			if (c[i].op == RXA_WHATIF_MUL)
				t->scale[s] *= c[i].v;
			else
				t->delta_b[s] += c[i].v;
			if (rxa_model_stage_cpp(t, s, 0) < 0)
				return rxu_errf(err, errlen, -EINVAL,
						"%s=%+g: drives %s on thread %s below zero (it costs %.1f "
						"cycles/packet in the model)",
						rxp_stage_name((enum rxp_stage)s), c[i].v,
						rxp_stage_name((enum rxp_stage)s), t->label,
						rxa_model_stage_cpp(t, s, 0) - t->share[s] * t->delta_b[s]);
		}
		if (!hit)
			return rxu_errf(err, errlen, -ENOENT, "%s: no receive thread laps this stage",
					rxp_stage_name((enum rxp_stage)s));
	}
	rxa_model_finish(m, m->queues);
	return 0;
}

/* "+12.3%" from before to after, "-" when either is unknown. */
static void whatif_change(char *buf, size_t n, double before, double after)
{
	double d = after / before - 1;
	if (isfinite(d))
		snprintf(buf, n, "%+.1f%%", 100 * d);
	else
		snprintf(buf, n, "-");
}

/*
 * The calibrated model moved toward light load: each stage's calibration
 * (scale: its NDR-trial cost over its light-load one) taken x of the way
 * (x = 1: at the NDR, 0: light load), the changes applied. Its prediction,
 * NAN when a change does not apply.
 */
static double ndr_after_at(const struct rxa_model *ndr, double x, const struct rxa_whatif_change *c,
			   size_t n, struct rxa_model *m)
{
	*m = *ndr;
	for (size_t i = 0; i < m->nthreads; i++)
		for (int s = 0; s < RXP_ST_COUNT; s++)
			m->th[i].scale[s] = 1 + (ndr->th[i].scale[s] - 1) * x;
	rxa_model_finish(m, m->queues);
	char ignored[RXA_ERR_LEN];
	if (rxa_model_apply(m, c, n, ignored, sizeof(ignored)) < 0)
		m->predicted_mpps = NAN;
	return m->predicted_mpps;
}

/*
 * ndr_after (rxa_whatif_point): the rate r at which the model with its
 * costs at r predicts r, costs linear in the rate between lo (the
 * light-load trials' rate) and hi (the NDR trial's). At or above hi (a
 * change that speeds the receiver up) the NDR trial's costs stand; at or
 * below lo the light-load ones. Between, the model's prediction falls as
 * its costs rise with the rate, so the rate that predicts itself is
 * found by bisection.
 */
static void ndr_after_follow_load(struct rxa_whatif_point *w, const struct rxa_whatif_change *c,
				  size_t n)
{
	const double lo = w->before.offered_mpps, hi = w->ndr_before.offered_mpps;
	struct rxa_model *m = &w->ndr_after;
	double at_hi = ndr_after_at(&w->ndr_before, 1, c, n, m);
	if (!(lo > 0 && hi > lo) || !isfinite(at_hi) || at_hi >= hi)
		return;
	if (!(ndr_after_at(&w->ndr_before, 0, c, n, m) > lo))
		return; /* slower than the light-load trials even at their costs */
	double a = lo, b = hi;
	for (int i = 0; i < 60 && b - a > 1e-9 * hi; i++) {
		double r = (a + b) / 2;
		double got = ndr_after_at(&w->ndr_before, (r - lo) / (hi - lo), c, n, m);
		if (got > r)
			a = r;
		else
			b = r; /* below, or a change that no longer applies */
	}
	if (!isfinite(ndr_after_at(&w->ndr_before, (a - lo) / (hi - lo), c, n, m)))
		return;
	snprintf(m->basis, sizeof(m->basis), "NDR trial (%.2f Mpps), costs at %.2f Mpps", hi, a);
	m->offered_mpps = a;
}

int rxa_whatif_point(const struct rxa_point *p, double light_frac,
		     const struct rxa_whatif_change *c, size_t n, struct rxa_whatif_point *out,
		     char *err, size_t errlen)
{
	/* the NIC set the pace: whatever is computed below is no figure */
	out->generator_limited = p->generator_limited;
	struct rxa_point_model *pm = malloc(sizeof(*pm));
	if (!pm)
		return rxu_errf(err, errlen, -ENOMEM, "what-if: out of memory");
	rxa_point_model_compute(p, light_frac, pm);
	out->before = out->after = pm->m;
	/* calibrated at the NDR where the receiver limits the point */
	if (rxa_point_model_at_ndr(p, pm, &out->ndr_before) < 0)
		out->ndr_before.predicted_mpps = NAN;
	out->ndr_after = out->ndr_before;
	free(pm);
	if (!isfinite(out->before.predicted_mpps)) {
		out->ndr_before.predicted_mpps = out->ndr_after.predicted_mpps = NAN;
		return -ENODATA;
	}
	int rc = rxa_model_apply(&out->after, c, n, err, errlen);
	if (rc < 0) { /* a change may have been half applied: none shown */
		out->after = out->before;
		out->after.predicted_mpps = out->ndr_after.predicted_mpps = NAN;
		return rc;
	}
	if (isfinite(out->ndr_after.predicted_mpps))
		ndr_after_follow_load(out, c, n);
	return 0;
}

int rxa_whatif_table_model(const struct rxa_set *s, const struct rxa_point *const *pts,
			   const struct rxa_whatif_point *w, size_t n, const char *changes,
			   struct rxa_table **out)
{
	static const char *const head[] = {
	    "point",	     "before Mpps",	    "after Mpps",
	    "change",	     "bottleneck before",   "bottleneck after",
	    "basis",	     "at NDR: before Mpps", "at NDR: after Mpps",
	    "at NDR: change", "notes"};
	size_t nvary = 0;
	const char **vary = s ? rxa_set_varying(s, &nvary) : NULL;
	char title[300];
	snprintf(title, sizeof(title), "What if %s", changes ? changes : "");
	struct rxa_table *t = NULL;
	if (!s || vary)
		rxa_table_open(title, 11, head, &t);
	for (size_t i = 0; t && i < n; i++) {
		char label[512], b[32], a[32], ch[32], nb[32], na[32], nch[32];
		if (s)
			rxa_point_label(pts[i], vary, nvary, label, sizeof(label));
		else
			snprintf(label, sizeof(label), "%s", pts[i] && pts[i]->key ? pts[i]->key : "run");
		const struct rxa_model *before = &w[i].before, *after = &w[i].after;
		double x = w[i].ndr_before.predicted_mpps, y = w[i].ndr_after.predicted_mpps;
		rxa_fmt_num(b, sizeof(b), before->predicted_mpps, 2);
		rxa_fmt_num(a, sizeof(a), after->predicted_mpps, 2);
		whatif_change(ch, sizeof(ch), before->predicted_mpps, after->predicted_mpps);
		rxa_fmt_num(nb, sizeof(nb), x, 2);
		rxa_fmt_num(na, sizeof(na), y, 2);
		whatif_change(nch, sizeof(nch), x, y);
		const char *bb =
		    before->bottleneck >= 0 ? before->th[before->bottleneck].label : "-";
		const char *ba = after->bottleneck >= 0 ? after->th[after->bottleneck].label : "-";
		if (rxa_table_row(t) || rxa_table_cell(t, "%s", label) ||
		    rxa_table_cell(t, "%s", b) || rxa_table_cell(t, "%s", a) ||
		    rxa_table_cell(t, "%s", ch) || rxa_table_cell(t, "%s", bb) ||
		    rxa_table_cell(t, "%s", ba) || rxa_table_cell(t, "%s", before->basis) ||
		    rxa_table_cell(t, "%s", nb) || rxa_table_cell(t, "%s", na) ||
		    rxa_table_cell(t, "%s", nch) ||
		    rxa_table_cell(t, "%s", w[i].generator_limited ? RXA_GENLIM_MARK : "")) {
			rxa_table_free(t);
			t = NULL;
		}
	}
	free(vary);
	*out = t;
	return t ? 0 : -ENOMEM;
}

int rxa_model_set_stage(struct rxa_model *m, const char *thread, int s, double cpp, char *err,
			size_t errlen)
{
	if (s < 0 || s >= RXP_ST_COUNT || !(cpp >= 0))
		return rxu_errf(err, errlen, -EINVAL, "stage %d: cost %.1f out of range", s, cpp);
	bool hit = false;
	for (size_t k = 0; k < m->nthreads; k++) {
		struct rxa_model_thread *t = &m->th[k];
		if ((thread && strcmp(t->label, thread)) || !t->have[s] || !(t->share[s] > 0))
			continue;
		/* the stage's modelled cost is share x (per x scale + delta_b) */
		t->delta_b[s] += (cpp - rxa_model_stage_cpp(t, s, 0)) / t->share[s];
		hit = true;
	}
	if (!hit)
		return rxu_errf(err, errlen, -EINVAL, "%s: not lapped by %s",
				rxp_stage_name((enum rxp_stage)s), thread ? thread : "any receive thread");
	rxa_model_finish(m, m->queues);
	return 0;
}
