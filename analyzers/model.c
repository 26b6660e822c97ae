/* SPDX-License-Identifier: MIT */
/*
 * The cost model: a ceiling predicted from light load (rxray/model.h).
 * Why from light load: at the NDR the bottleneck thread is saturated, so
 * clock_hz / its busy cycles per packet is the rate it received; only
 * runs that did not saturate can predict anything. Their laps hold few
 * packets, so each stage is fitted as a + b x packets and extrapolated to
 * the burst a saturated thread sees; calibration runs (--coalesce B) give
 * the fit laps of B packets without load.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rxray/model.h"
#include "rxray/util.h"

void rxa_model_init(struct rxa_model *m)
{
	memset(m, 0, sizeof(*m));
	m->bottleneck = -1;
	m->predicted_mpps = NAN;
	m->queues = 1;
	for (size_t i = 0; i < RXA_MODEL_MAX_THREADS; i++)
		for (int s = 0; s < RXP_ST_COUNT; s++)
			m->th[i].scale[s] = 1;
}

/* B of a thread: the configured burst (rx) or batch (app). */
static double thread_burst(const struct rxr_result *r, const char *role)
{
	double burst = rxa_knob_num(r->config, "burst", 64);
	double batch = rxa_knob_num(r->config, "batch", 64);
	double b = !strcmp(role, "app") ? batch : burst;
	return b >= 1 ? b : 1;
}

int rxa_model_add_run(struct rxa_model *m, const struct rxr_result *r)
{
	bool any = false;
	for (size_t i = 0; i < r->nthreads; i++) {
		const struct rxr_thread_result *t = &r->threads[i];
		if (!strcmp(t->role, "nic") || !t->packets)
			continue;
		char label[24];
		rxa_thread_label(r, i, label, sizeof(label));
		size_t k = 0;
		while (k < m->nthreads && strcmp(m->th[k].label, label))
			k++;
		if (k == m->nthreads) {
			if (k == RXA_MODEL_MAX_THREADS)
				return -ENOSPC;
			struct rxa_model_thread *nt = &m->th[k];
			snprintf(nt->label, sizeof(nt->label), "%s", label);
			snprintf(nt->role, sizeof(nt->role), "%s", t->role);
			nt->burst = thread_burst(r, t->role);
			m->nthreads++;
		}
		struct rxa_model_thread *mt = &m->th[k];
		bool laps = false;
		for (int s = 0; s < RXP_ST_COUNT; s++) {
			if (s == RXP_ST_IDLE || !(t->stage_mask & (1u << s)) || !t->st[s].has_laps)
				continue;
			rxp_lapsums_add(&mt->st[s], &t->st[s].laps);
			mt->have[s] = true;
			laps = true;
		}
		if (laps)
			mt->packets += (double)t->packets;
		any |= laps;
	}
	if (any) {
		if (!m->nruns)
			m->hz = r->clock.hz;
		m->offered_mpps =
		    (m->offered_mpps * (double)m->nruns + r->offered_mpps) / (double)(m->nruns + 1);
		m->nruns++;
		if (rxa_knob_num(r->config, "coalesce", 0) > 0)
			m->ncoalesced++;
	}
	return 0;
}

double rxa_model_stage_cpp(const struct rxa_model_thread *t, int s, double n)
{
	if (s < 0 || s >= RXP_ST_COUNT || !t->have[s])
		return 0;
	const struct rxp_lapfit *f = &t->fit[s];
	double per;
	switch (f->basis) {
	case RXP_LAPFIT_LINEAR:
		per = f->a / (n > 0 ? n : t->burst) + f->b;
		break;
	case RXP_LAPFIT_PER_PACKET:
		per = f->b;
		break;
	default:
		return 0;
	}
	return t->share[s] * (per * t->scale[s] + t->delta_b[s]);
}

/*
 * A noisy fit can come out with a < 0 or b < 0, which extrapolates to
 * nonsense (a negative cost at some burst). Fall back to what the laps
 * certainly say: b < 0 -> the cost is per lap (a = mean lap, b = 0);
 * a < 0 -> the cost is per packet (b = cycles / packets).
 */
static void fit_sane(const struct rxp_lapsums *s, struct rxp_lapfit *f)
{
	rxp_lapsums_fit(s, f);
	if (f->basis != RXP_LAPFIT_LINEAR)
		return;
	if (f->b < 0) {
		f->b = 0;
		f->a = s->sy / s->n;
	} else if (f->a < 0) {
		f->basis = RXP_LAPFIT_PER_PACKET;
		f->a = 0;
		f->b = s->sy / s->sx;
	}
}

void rxa_model_finish(struct rxa_model *m, double queues)
{
	m->queues = queues >= 1 ? queues : 1;
	m->bottleneck = -1;
	m->predicted_mpps = NAN;
	double worst = 0;
	for (size_t i = 0; i < m->nthreads; i++) {
		struct rxa_model_thread *t = &m->th[i];
		t->cpp = 0;
		t->mpps = NAN;
		for (int s = 0; s < RXP_ST_COUNT; s++) {
			if (!t->have[s])
				continue;
			fit_sane(&t->st[s], &t->fit[s]);
			t->share[s] = t->packets > 0 ? t->st[s].sx / t->packets : 0;
			t->cpp += rxa_model_stage_cpp(t, s, 0);
		}
		if (t->cpp > 0 && m->hz > 0)
			t->mpps = m->hz / t->cpp / 1e6;
		if (t->cpp > worst) {
			worst = t->cpp;
			m->bottleneck = (int)i;
		}
	}
	if (m->bottleneck >= 0 && m->hz > 0)
		m->predicted_mpps = m->hz / worst * m->queues / 1e6;
}

void rxa_run_headroom(const struct rxr_result *r, struct rxa_model *m, double *predicted_mpps,
		      double *headroom)
{
	struct rxa_model local;
	if (!m)
		m = &local;
	rxa_model_init(m);
	*predicted_mpps = *headroom = NAN;
	if (rxa_model_add_run(m, r) < 0 || !m->nruns)
		return;
	rxa_model_finish(m, rxa_run_queues(r, NULL));
	snprintf(m->basis, sizeof(m->basis), "this run%s",
		 m->ncoalesced ? " (coalesced)" : "");
	*predicted_mpps = m->predicted_mpps;
	if (isfinite(m->predicted_mpps) && r->offered_mpps > 0)
		*headroom = m->predicted_mpps / r->offered_mpps;
}

/* ------------------------------------------------------- point model */

static int named_cmp(const void *a, const void *b)
{
	const struct rxa_loaddep *x = a, *y = b;
	double ex = x->ndr_cpp - x->model_cpp, ey = y->ndr_cpp - y->model_cpp;
	return (ex < ey) - (ex > ey);
}

/* the biggest saving first */
static int cheaper_cmp(const void *a, const void *b)
{
	return named_cmp(b, a);
}

/* The model's thread for run r's thread i; -1 for the NIC (the
 * generator), a thread without packets, or one the model has not seen. */
static int run_model_thread(const struct rxa_model *m, const struct rxr_result *r, size_t i)
{
	const struct rxr_thread_result *t = &r->threads[i];
	if (!strcmp(t->role, "nic") || !t->packets)
		return -1;
	char label[24];
	rxa_thread_label(r, i, label, sizeof(label));
	for (size_t k = 0; k < m->nthreads; k++)
		if (!strcmp(m->th[k].label, label))
			return (int)k;
	return -1;
}

/*
 * Stage s of run thread t against its model thread mt: the stage's mean
 * packets per lap in the run (*nb), and per thread packet what it cost
 * there (*meas) and what the model says at that lap size with the run's
 * share of packets (*model). Like the fit, the measurement leaves out the
 * laps a preemption stretched: a cost under load means the work, not the
 * scheduler. false when either lacks the stage or the model says 0.
 */
static bool stage_in_run(const struct rxr_thread_result *t, const struct rxa_model_thread *mt,
			 int s, double *nb, double *meas, double *model)
{
	const struct rxr_stage_sum *st = &t->st[s];
	if (s == RXP_ST_IDLE || !mt->have[s] || !(mt->share[s] > 0) ||
	    !(t->stage_mask & (1u << s)) || !st->count || !st->packets || !t->packets)
		return false;
	*nb = (double)st->packets / (double)st->count;
	double share = (double)st->packets / (double)t->packets;
	*model = rxa_model_stage_cpp(mt, s, *nb) / mt->share[s] * share;
	*meas = (double)st->cycles / (double)t->packets;
	if (st->has_laps && st->excl_count && st->laps.sx > 0)
		*meas = st->laps.sy / st->laps.sx * share;
	return *model > 0;
}

/*
 * A run's stages against the model at their own mean burst: those dearer
 * by RXA_MODEL_LOAD_FACTOR (cheaper: by as much the other way) are
 * appended to all[*n] (cap entries), unless the same thread and stage is
 * there already (the NDR trial comes first).
 */
static void run_loaddep(const struct rxr_result *r, bool above, bool cheaper,
			const struct rxa_point_model *pm, struct rxa_loaddep *all, size_t *np,
			size_t cap)
{
	size_t n = *np;
	for (size_t i = 0; i < r->nthreads; i++) {
		const struct rxr_thread_result *t = &r->threads[i];
		int mi = run_model_thread(&pm->m, r, i);
		if (mi < 0)
			continue;
		const struct rxa_model_thread *mt = &pm->m.th[mi];
		const char *label = mt->label;
		double busy = rxa_thread_busy_cpp(t);
		for (int s = 0; s < RXP_ST_COUNT; s++) {
			double nb, meas, model;
			if (!stage_in_run(t, mt, s, &nb, &meas, &model) || n == cap)
				continue;
			/* dearer: the measured cost above the model's; cheaper:
			 * the model's above the measured */
			double hi = cheaper ? model : meas, lo = cheaper ? meas : model;
			if (hi <= RXA_MODEL_LOAD_FACTOR * lo || hi - lo < 0.05 * busy)
				continue;
			bool seen = false;
			for (size_t k = 0; k < *np && !seen; k++)
				seen = all[k].stage == s && !strcmp(all[k].thread, label);
			if (seen)
				continue;
			struct rxa_loaddep *d = &all[n++];
			snprintf(d->thread, sizeof(d->thread), "%s", label);
			d->stage = s;
			d->mean_burst = nb;
			d->model_cpp = model;
			d->ndr_cpp = meas;
			d->factor = meas / model;
			d->above = above;
			d->offered_mpps = r->offered_mpps;
		}
	}
	*np = n;
}

size_t rxa_loaddep_fmt(const struct rxa_loaddep *d, const char *sep, char *buf, size_t n)
{
	int w = d->above ? snprintf(buf, n, "%s%s %s x%.2f above NDR (%.2f Mpps)", sep, d->thread,
				    rxp_stage_name((enum rxp_stage)d->stage), d->factor,
				    d->offered_mpps)
			 : snprintf(buf, n, "%s%s %s x%.2f", sep, d->thread,
				    rxp_stage_name((enum rxp_stage)d->stage), d->factor);
	return w < 0 ? 0 : (size_t)w < n ? (size_t)w : n;
}

size_t rxa_loaddeps_fmt(const struct rxa_loaddep *d, size_t n, const char *none, char *buf,
			size_t len)
{
	size_t w = 0;
	buf[0] = '\0';
	for (size_t j = 0; j < n && w + 1 < len; j++)
		w += rxa_loaddep_fmt(&d[j], j ? ", " : "", buf + w, len - w);
	if (!n)
		snprintf(buf, len, "%s", none);
	return n ? (w < len ? w : len - 1) : strlen(buf);
}

size_t rxa_ndr_laps_fmt(const struct rxa_point_model *pm, char *buf, size_t n)
{
	int w = isfinite(pm->ndr_laps_mpps)
		    ? snprintf(buf, n, "%.2f (%s laps of %.1f)", pm->ndr_laps_mpps,
			       pm->ndr_laps_thread, pm->ndr_laps)
		    : snprintf(buf, n, "-");
	return w < 0 ? 0 : (size_t)w < n ? (size_t)w : n;
}

/*
 * The NDR run's stages, then those of the lossy trials above it: the one
 * asked for the least above, and the others offered no more than the
 * prediction (where the model says the receiver keeps up, so a stage
 * dearer there is what held it below the prediction), least first.
 */
static void point_loaddep(const struct rxa_point *p, struct rxa_point_model *pm)
{
	struct rxa_loaddep all[RXA_MODEL_MAX_THREADS * 4 * (1 + RXA_POINT_ABOVE_MAX)];
	size_t n = 0, cap = sizeof(all) / sizeof(all[0]);
	run_loaddep(p->ndr_run, false, false, pm, all, &n, cap);
	for (size_t i = 0; i < p->nabove; i++)
		if ((!i && p->above_least) ||
		    p->above_runs[i]->offered_mpps <= pm->m.predicted_mpps)
			run_loaddep(p->above_runs[i], true, false, pm, all, &n, cap);
	qsort(all, n, sizeof(all[0]), named_cmp);
	pm->nnamed = n < RXA_MODEL_MAX_NAMED ? n : RXA_MODEL_MAX_NAMED;
	memcpy(pm->named, all, pm->nnamed * sizeof(all[0]));
	/* cheaper: the NDR trial only (above it the receiver broke) */
	n = 0;
	run_loaddep(p->ndr_run, false, true, pm, all, &n, cap);
	qsort(all, n, sizeof(all[0]), cheaper_cmp);
	pm->ncheaper = n < RXA_MODEL_MAX_NAMED ? n : RXA_MODEL_MAX_NAMED;
	memcpy(pm->cheaper, all, pm->ncheaper * sizeof(all[0]));
}

/* The model at run r's own lap sizes: per thread, each stage at its mean
 * packets per lap in r; the slowest thread sets it. */
static void point_ndr_laps(const struct rxr_result *r, struct rxa_point_model *pm)
{
	for (size_t i = 0; i < r->nthreads; i++) {
		const struct rxr_thread_result *t = &r->threads[i];
		int mi = run_model_thread(&pm->m, r, i);
		if (mi < 0)
			continue;
		const struct rxa_model_thread *mt = &pm->m.th[mi];
		double cpp = 0, laps = NAN;
		uint64_t most = 0;
		for (int s = 0; s < RXP_ST_COUNT; s++) {
			double nb, meas, model;
			if (!stage_in_run(t, mt, s, &nb, &meas, &model))
				continue;
			cpp += model;
			if (t->st[s].count > most) {
				most = t->st[s].count;
				laps = nb;
			}
		}
		if (!(cpp > 0) || !(pm->m.hz > 0))
			continue;
		double mpps = pm->m.hz / cpp * pm->m.queues / 1e6;
		if (!(mpps >= pm->ndr_laps_mpps)) { /* the first, or a slower one */
			pm->ndr_laps_mpps = mpps;
			pm->ndr_laps = laps;
			snprintf(pm->ndr_laps_thread, sizeof(pm->ndr_laps_thread), "%s", mt->label);
		}
	}
}

void rxa_point_model_compute(const struct rxa_point *p, double light_frac,
			     struct rxa_point_model *out)
{
	memset(out, 0, sizeof(*out));
	rxa_model_init(&out->m);
	out->ndr_mpps = out->ratio = out->ndr_laps_mpps = out->ndr_laps = NAN;
	out->light_frac = light_frac > 0 ? light_frac : RXA_MODEL_LIGHT_FRAC;
	double ndr = isfinite(p->ndr_mpps) && p->ndr_mpps > 0 ? p->ndr_mpps : NAN;
	out->ndr_mpps = ndr;
	const struct rxr_result *any = rxa_point_run(p);
	if (!strcmp(p->status, "run")) {
		/* one run: it is its own light-load evidence */
		if (any)
			rxa_model_add_run(&out->m, any);
		snprintf(out->m.basis, sizeof(out->m.basis), "this run%s",
			 out->m.ncoalesced ? " (coalesced)" : "");
		out->ndr_mpps = NAN; /* a single run has no NDR search */
	} else if (isfinite(ndr)) {
		for (size_t i = 0; i < p->nlight; i++) {
			const struct rxr_result *r = p->light[i];
			/* light by what was offered: at or below the fraction of
			 * the NDR, which excludes the NDR trial itself */
			if (r->offered_mpps > out->light_frac * ndr || r == p->ndr_run)
				continue;
			rxa_model_add_run(&out->m, r);
			if (!any)
				any = r;
		}
		snprintf(out->m.basis, sizeof(out->m.basis), "%zu trial%s <= %g x NDR (%zu coalesced)",
			 out->m.nruns, out->m.nruns == 1 ? "" : "s", out->light_frac,
			 out->m.ncoalesced);
	} else {
		snprintf(out->m.basis, sizeof(out->m.basis), "no NDR: nothing to fit");
	}
	if (!out->m.nruns)
		return;
	double q = rxa_run_queues(any, p->knobs);
	rxa_model_finish(&out->m, q);
	if (isfinite(ndr) && isfinite(out->m.predicted_mpps) && out->m.predicted_mpps > 0)
		out->ratio = ndr / out->m.predicted_mpps;
	if (p->ndr_run && isfinite(ndr) && strcmp(p->status, "run")) {
		point_loaddep(p, out);
		point_ndr_laps(p->ndr_run, out);
	}
}

int rxa_point_model_at_ndr(const struct rxa_point *p, const struct rxa_point_model *pm,
			   struct rxa_model *out)
{
	*out = pm->m;
	const struct rxr_result *r = p->ndr_run;
	if (!r || !strcmp(p->status, "run") || !isfinite(pm->ndr_mpps) || p->generator_limited ||
	    p->oversubscribed || !isfinite(pm->m.predicted_mpps))
		return -ENOENT;
	bool any = false;
	for (size_t i = 0; i < r->nthreads; i++) {
		int k = run_model_thread(out, r, i);
		if (k < 0)
			continue;
		struct rxa_model_thread *mt = &out->th[k];
		for (int s = 0; s < RXP_ST_COUNT; s++) {
			double nb, meas, model;
			double cur = rxa_model_stage_cpp(mt, s, 0);
			if (!stage_in_run(&r->threads[i], mt, s, &nb, &meas, &model) || !(cur > 0))
				continue;
			/* the trial's cost per packet, cheaper as well as dearer,
			 * as it was at the trial's lap sizes: a receiver at its
			 * NDR laps what it laps there, not the full bursts the
			 * light model extrapolates to */
			mt->scale[s] *= meas / cur;
			any = true;
		}
	}
	if (!any)
		return -ENOENT;
	rxa_model_finish(out, out->queues);
	if (!(fabs(out->predicted_mpps / pm->ndr_mpps - 1) <= RXA_MODEL_AT_NDR_TOL)) {
		*out = pm->m;
		return -ERANGE;
	}
	snprintf(out->basis, sizeof(out->basis), "NDR trial (%.2f Mpps) at its lap sizes",
		 r->offered_mpps);
	out->offered_mpps = r->offered_mpps;
	return 0;
}

/* ------------------------------------------------------------ tables */

int rxa_model_table(const struct rxa_set *s, const struct rxa_point_model *pm, size_t n,
		    struct rxa_table **out)
{
	static const char *const head[] = {"point",
					   "predicted (light load) Mpps",
					   "basis",
					   "NDR Mpps",
					   "NDR/predicted",
					   "bottleneck",
					   "dearer under load (factor)",
					   "cheaper under load (factor)",
					   "at the NDR's lap sizes Mpps"};
	size_t nvary = 0;
	const char **vary = rxa_set_varying(s, &nvary);
	struct rxa_table *t = NULL;
	if (vary)
		rxa_table_open("Cost model", 9, head, &t);
	for (size_t i = 0; t && i < n; i++) {
		const struct rxa_point_model *k = &pm[i];
		const struct rxa_point *p = &s->pts[i];
		char label[512], pr[32], nd[32], ra[32], named[512], cheap[512], laps[64];
		rxa_point_label(p, vary, nvary, label, sizeof(label));
		rxa_fmt_num(pr, sizeof(pr), k->m.predicted_mpps, 2);
		/* the NDR as every table shows it: its interval [lower, upper] */
		if (isfinite(k->ndr_mpps))
			rxa_fmt_interval(nd, sizeof(nd), p, false);
		else
			rxa_fmt_num(nd, sizeof(nd), k->ndr_mpps, 2);
		rxa_fmt_num(ra, sizeof(ra), k->ratio, 2);
		if (p->generator_limited && isfinite(k->ratio))
			snprintf(ra, sizeof(ra), ">= %.2f", k->ratio);
		const char *none = isfinite(k->ratio) ? "none" : "-";
		rxa_loaddeps_fmt(k->named, k->nnamed, none, named, sizeof(named));
		rxa_loaddeps_fmt(k->cheaper, k->ncheaper, none, cheap, sizeof(cheap));
		const char *bn = k->m.bottleneck >= 0 ? k->m.th[k->m.bottleneck].label : "-";
		rxa_ndr_laps_fmt(k, laps, sizeof(laps));
		if (rxa_table_row(t) || rxa_table_cell(t, "%s", label) ||
		    rxa_table_cell(t, "%s", pr) || rxa_table_cell(t, "%s", k->m.basis) ||
		    rxa_table_cell(t, "%s", nd) || rxa_table_cell(t, "%s", ra) ||
		    rxa_table_cell(t, "%s", bn) || rxa_table_cell(t, "%s", named) ||
		    rxa_table_cell(t, "%s", cheap) || rxa_table_cell(t, "%s", laps)) {
			rxa_table_free(t);
			t = NULL;
		}
	}
	free(vary);
	*out = t;
	return t ? 0 : -ENOMEM;
}

/* ---------------------------------------------------------------- JSON */

json_t *rxa_point_model_json(const struct rxa_point_model *pm)
{
	const struct rxa_model *m = &pm->m;
	json_t *threads = json_array(), *named = json_array(), *cheaper = json_array();
	json_t *o = json_object();
	if (!threads || !named || !cheaper || !o)
		goto fail;
	for (size_t i = 0; i < m->nthreads; i++) {
		const struct rxa_model_thread *t = &m->th[i];
		json_t *st = json_object();
		for (int s = 0; st && s < RXP_ST_COUNT; s++) {
			if (!t->have[s])
				continue;
			json_object_set_new(
			    st, rxp_stage_name((enum rxp_stage)s),
			    json_pack("{s:s,s:o,s:o,s:o,s:o,s:o}", "basis",
				      rxr_lapfit_basis_name(t->fit[s].basis), "a",
				      rxr_json_real_or_null(t->fit[s].a), "b",
				      rxr_json_real_or_null(t->fit[s].b), "r2",
				      rxr_json_real_or_null(t->fit[s].r2), "share",
				      rxr_json_real_or_null(t->share[s]), "cycles_per_packet",
				      rxr_json_real_or_null(rxa_model_stage_cpp(t, s, 0))));
		}
		json_array_append_new(
		    threads,
		    json_pack("{s:s,s:f,s:o,s:o,s:o}", "thread", t->label, "burst", t->burst,
			      "cycles_per_packet", rxr_json_real_or_null(t->cpp), "mpps",
			      rxr_json_real_or_null(t->mpps), "stages", st ? st : json_null()));
	}
	for (size_t i = 0; i < pm->nnamed + pm->ncheaper; i++) {
		bool dear = i < pm->nnamed;
		const struct rxa_loaddep *d = dear ? &pm->named[i] : &pm->cheaper[i - pm->nnamed];
		json_array_append_new(
		    dear ? named : cheaper,
		    json_pack("{s:s,s:s,s:f,s:f,s:f,s:f,s:s,s:f}", "thread", d->thread, "stage",
			      rxp_stage_name((enum rxp_stage)d->stage), "mean_burst", d->mean_burst,
			      "model_cpp", d->model_cpp, "ndr_cpp", d->ndr_cpp, "factor", d->factor,
			      "trial", d->above ? "above_ndr" : "ndr", "offered_mpps",
			      d->offered_mpps));
	}
	json_object_set_new(o, "predicted_mpps", rxr_json_real_or_null(m->predicted_mpps));
	json_object_set_new(o, "basis", json_string(m->basis));
	json_object_set_new(o, "runs", json_integer((json_int_t)m->nruns));
	json_object_set_new(o, "coalesced", json_integer((json_int_t)m->ncoalesced));
	json_object_set_new(o, "light_frac", json_real(pm->light_frac));
	json_object_set_new(o, "ndr_mpps", rxr_json_real_or_null(pm->ndr_mpps));
	json_object_set_new(o, "ratio", rxr_json_real_or_null(pm->ratio));
	json_object_set_new(o, "bottleneck", m->bottleneck >= 0
						 ? json_string(m->th[m->bottleneck].label)
						 : json_null());
	json_object_set_new(o, "threads", threads);
	json_object_set_new(o, "load_dependent", named);
	json_object_set_new(o, "cheaper_under_load", cheaper);
	json_object_set_new(o, "at_ndr_laps",
			    isfinite(pm->ndr_laps_mpps)
				? json_pack("{s:f,s:s,s:f}", "predicted_mpps", pm->ndr_laps_mpps,
					    "thread", pm->ndr_laps_thread, "laps", pm->ndr_laps)
				: json_null());
	return o;
fail:
	json_decref(threads);
	json_decref(named);
	json_decref(cheaper);
	json_decref(o);
	return NULL;
}
