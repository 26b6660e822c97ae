/* SPDX-License-Identifier: MIT */
/*
 * Throughput search for one point: NDR and PDR together, after the ideas
 * of FD.io CSIT MLRsearch (RFC 9971) and RFC 2544's binary search, written
 * for rxray: short trials, both goals bracketed by the same trials, the
 * NIC's maximum rate as the first upper bound, a precision goal on the
 * relative bracket width, a re-test of the final lower bound and a cap.
 *
 * State is not kept between trials: after each trial the brackets are
 * recomputed from every trial so far, grouped by the rate asked (a load).
 * A load fails a goal when any of its trials lost more than the goal
 * allows, or with an exceed ratio, when those trials make up more than
 * that share of its trial seconds (so a re-test that fails demotes a
 * lower bound). Its rate is the lowest offered rate its deciding trials
 * achieved: what the device really saw, not what was asked.
 *
 * The host is part of every trial: a trial the run marked disturbed
 * (validity.h) that lost only judges a load that has nothing else, and
 * such a load is re-run while it bounds a goal; a disturbed trial that
 * met the goal judges like any other (the host only takes capacity away). Trials that disagree at one load are
 * settled there. When a lower bound falls, the search walks down from the
 * failing rate in steps whose width doubles (MLRsearch's external search)
 * instead of jumping to a rate one slow trial received: on a shared host a
 * disturbed run receives a third of what the datapath can.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rxray/sweep.h"

#define MAX_BROKEN 3
/* A trial offered this much less than asked did not test the rate asked. */
#define SHORTFALL 0.10
/* Trials at one rate before its verdict stands, disagreeing or not. */
#define SETTLE_MAX 4
/* A step down never takes more than half the rate away. */
#define MAX_STEP_DOWN 0.5
enum { G_NDR = 0, G_PDR, G_N };

const char *sweep_trial_status_name(enum sweep_trial_status s)
{
	static const char *const n[] = {"ok", "timeout", "crashed", "failed", "failed"};
	return (unsigned)s < sizeof(n) / sizeof(n[0]) ? n[s] : "failed";
}

const char *sweep_point_status_name(enum sweep_point_status s)
{
	static const char *const n[] = {"ok", "infeasible", "failed"};
	return (unsigned)s < sizeof(n) / sizeof(n[0]) ? n[s] : "failed";
}

void sweep_search_cfg_defaults(struct sweep_search_cfg *s)
{
	s->ndr_loss = 0;
	s->pdr_loss = 0.005;
	s->precision = 0.01;
	s->trial_seconds = 1;
	s->initial_seconds = 0; /* 0: same as trial_seconds */
	s->max_trials = 12;
	s->min_rate = 10e3;
	s->max_rate = 0;
	s->timeout = 0; /* 0: 3 x trial_seconds + 20 */
	s->exceed_ratio = 0;
	s->budget_seconds = 0; /* 0: max_trials x (trial_seconds + the trials' mean
				* set-up time, at least 0.7 s) */
	s->max_retries = 3;
	s->total_budget_seconds = 0;
	s->calibration_frac = 0.25;
	s->budget_cap_seconds = 0;
}

/* One rate asked (all trials with that target), judged for one goal. */
struct load {
	double target;
	double rate;       /* fails: lowest offered among its failing trials;
			    * passes: lowest offered among its sustained trials */
	double reach;      /* passes: the higher of rate and the rate asked (a
			    * shortfall under 10% still tested the rate asked) */
	double min_rx;     /* lowest received rate of its measured trials */
	int ntrials, nfull, last_pass; /* judged trials; last_pass: index or -1 */
	int npass, nbad;   /* judged trials that met / missed the loss ratio */
	double bad_s, all_s;
	bool fails;
	bool lossy;        /* a trial lost too much or broke (not only fell short) */
	bool tainted;      /* judged from disturbed trials only */
	bool passed_once;  /* any trial here met the loss ratio (disturbed too) */
};

struct state {
	const struct sweep_search_cfg *cfg;
	struct sweep_search_result *r;
	struct load *g;
	size_t ng;
	bool retry;        /* the trial goal_next asked for re-runs a disturbed load */
};

static bool exceeds(const struct sweep_search_cfg *c, double bad_s, double all_s)
{
	return c->exceed_ratio > 0 ? bad_s > c->exceed_ratio * all_s + 1e-12 : bad_s > 0;
}

/* A trial that met the goal at the rate asked: offered it (no
 * shortfall) and lost no more than loss. */
static bool trial_clean(const struct sweep_trial *t, double loss)
{
	return t->status == SWEEP_TRIAL_OK && t->loss <= loss + 1e-12 &&
	       !(t->target_pps > 0 && t->offered_pps < t->target_pps * (1 - SHORTFALL));
}

/* Undisturbed trials and broken ones judge a load, and so does a
 * disturbed trial that met the goal anyway: the host can only take
 * capacity away, so a pass it disturbed still stands. A disturbed trial
 * that lost judges only a load that has nothing else (then the load is
 * tainted: its failure may be the host's). */
static bool trial_judges(const struct sweep_trial *t, bool tainted, double loss)
{
	bool disturbed = t->status == SWEEP_TRIAL_OK && t->disturbed;
	if (disturbed && trial_clean(t, loss))
		return !tainted;
	return tainted ? disturbed : !disturbed;
}

/*
 * Judge every load for the loss ratio: a load fails when the seconds of
 * its judged trials that lost more than loss (or broke) exceed
 * exceed_ratio of their trial seconds (exceed_ratio 0: any such trial).
 */
static void loads_build(struct state *s, double loss)
{
	const struct sweep_search_cfg *c = s->cfg;
	s->ng = 0;
	for (size_t i = 0; i < s->r->ntrials; i++) {
		double target = s->r->trials[i].target_pps;
		bool seen = false;
		for (size_t j = 0; j < s->ng && !seen; j++)
			seen = s->g[j].target == target;
		if (seen)
			continue;
		struct load *ld = &s->g[s->ng++];
		double pass_rate = INFINITY, fail_rate = INFINITY, best_clean = -1;
		int best_at = -1;
		*ld = (struct load){.target = target, .min_rx = INFINITY, .last_pass = -1,
				    .tainted = true};
		for (size_t k = i; k < s->r->ntrials; k++) {
			const struct sweep_trial *t = &s->r->trials[k];
			if (t->target_pps == target && trial_judges(t, false, loss))
				ld->tainted = false;
		}
		for (size_t k = i; k < s->r->ntrials; k++) {
			const struct sweep_trial *t = &s->r->trials[k];
			if (t->target_pps != target)
				continue;
			bool ok = t->status == SWEEP_TRIAL_OK;
			bool shortfall =
				ok && target > 0 && t->offered_pps < target * (1 - SHORTFALL);
			bool lossy = ok && t->loss > loss + 1e-12;
			ld->passed_once |= trial_clean(t, loss);
			if (!trial_judges(t, ld->tainted, loss))
				continue;
			ld->ntrials++;
			ld->all_s += t->seconds;
			if (t->seconds >= c->trial_seconds * 0.999)
				ld->nfull++;
			if (!ok) {
				ld->lossy = true;
				ld->nbad++;
				ld->bad_s += t->seconds;
				fail_rate = fmin(fail_rate, target > 0 ? target : INFINITY);
				continue;
			}
			ld->min_rx = fmin(ld->min_rx, t->rx_pps);
			/* the same rate for every goal: what the sustained trials got;
			 * unpaced (target 0) the generator sets the rate, and every
			 * clean trial shows the receiver kept up with what it got */
			if (!shortfall)
				pass_rate = fmin(pass_rate, t->offered_pps);
			if (!shortfall && !lossy && target <= 0 && t->offered_pps > best_clean) {
				best_clean = t->offered_pps;
				best_at = (int)k;
			}
			if (lossy || shortfall) {
				ld->lossy |= lossy;
				ld->nbad++;
				ld->bad_s += t->seconds;
				fail_rate = fmin(fail_rate, lossy ? t->offered_pps : target);
			} else {
				ld->npass++;
				ld->last_pass = (int)k;
			}
		}
		ld->fails = exceeds(c, ld->bad_s, ld->all_s);
		ld->rate = ld->fails ? fail_rate : best_clean >= 0 ? best_clean : pass_rate;
		if (!ld->fails && best_at >= 0)
			ld->last_pass = best_at; /* the trial that shows the bound */
		ld->reach = ld->fails ? ld->rate : fmax(ld->rate, target);
	}
}

static bool load_confirmed(const struct state *s, const struct load *ld)
{
	(void)s;
	return ld->nfull >= 1 && ld->ntrials >= 2;
}

/*
 * Nothing failed: the bound is the generator's, at its best. Its speed
 * differs from one trial process to the next for reasons of the host
 * (bench/sweep_repeatability/README.md, "Measurements behind
 * constants"). The best of GEN_TRIALS clean trials moves by what the
 * generator can do, not by its worst process.
 */
#define GEN_TRIALS 3
static bool load_confirmed_unpaced(const struct state *s, const struct load *ld)
{
	return load_confirmed(s, ld) && (ld->target > 0 || ld->ntrials >= GEN_TRIALS);
}

/* Trials at one load disagree and one more full trial could flip it. */
static bool load_unsettled(const struct state *s, const struct load *ld)
{
	const struct sweep_search_cfg *c = s->cfg;
	const double T = c->trial_seconds;
	if (ld->tainted || !ld->npass || !ld->nbad || ld->ntrials >= SETTLE_MAX)
		return false;
	return exceeds(c, ld->bad_s, ld->all_s + T) != ld->fails ||
	       exceeds(c, ld->bad_s + T, ld->all_s + T) != ld->fails;
}

struct bracket {
	int lo, hi;       /* load indices, -1 none */
	int nfail, npass; /* loads failing / passing (below hi) the goal */
	int above;        /* a passing load above hi (noise), -1 none */
};

static struct bracket bracket_of(struct state *s, double loss)
{
	struct bracket b = {-1, -1, 0, 0, -1};
	loads_build(s, loss);
	for (size_t j = 0; j < s->ng; j++)
		if (s->g[j].fails) {
			b.nfail++;
			if (b.hi < 0 || s->g[j].rate < s->g[b.hi].rate)
				b.hi = (int)j;
		}
	for (size_t j = 0; j < s->ng; j++) {
		if (s->g[j].fails)
			continue;
		if (b.hi >= 0 && s->g[j].rate >= s->g[b.hi].rate) {
			b.above = (int)j;
			continue;
		}
		b.npass++;
		if (b.lo < 0 || s->g[j].rate > s->g[b.lo].rate ||
		    (s->g[j].rate == s->g[b.lo].rate && s->g[j].reach > s->g[b.lo].reach))
			b.lo = (int)j;
	}
	return b;
}

/*
 * Below the lowest failing load hi with nothing passing under it.
 * Before anything passed (the first descent from the maximum rate): the
 * rate received at hi, backing off by doubling steps while that fails, as
 * the received rate of an undisturbed overloaded trial is the best
 * estimate there is (MLRsearch starts from it too). Once a lower bound
 * has fallen (a load that passed now fails): geometric from hi, the width
 * doubling per step (2, 4, 8, ... x precision, counted as the failing
 * loads under the lowest load that passed), never a disturbed trial's
 * received rate. Either way no step takes more than half of hi's rate,
 * but the very first jump from the maximum rate to the rate received.
 */
static double step_down(struct state *s, const struct bracket *b, double loss)
{
	const struct sweep_search_cfg *c = s->cfg;
	const struct load *hi = &s->g[b->hi];
	double anchor = INFINITY;
	for (size_t j = 0; j < s->ng; j++)
		if (s->g[j].passed_once && s->g[j].rate >= hi->rate)
			anchor = fmin(anchor, s->g[j].rate);
	double floor = hi->rate * (1 - MAX_STEP_DOWN);
	if (isfinite(anchor)) {
		int k = 0;
		for (size_t j = 0; j < s->ng; j++)
			k += s->g[j].fails && s->g[j].rate < anchor;
		double w = c->precision * ldexp(1, k + 1 > 30 ? 30 : k + 1);
		return fmax(hi->rate * (1 - w), floor);
	}
	double est = isfinite(hi->min_rx) && !hi->tainted ? hi->min_rx / (1 - loss) : hi->rate / 2;
	double back = b->nfail <= 1 ? 0 : fmin(0.9, c->precision * ldexp(1, b->nfail - 1));
	double cand = fmin(est, hi->rate * (1 - c->precision)) * (1 - back);
	bool first = b->nfail <= 1 && hi->target == s->g[0].target;
	return first ? cand : fmax(cand, floor);
}

/*
 * The next trial for one goal: 1 with target and secs set, 0 when the goal
 * is done, -1 when it cannot be met at min_rate.
 */
static int goal_next(struct state *s, double loss, double *target, double *secs)
{
	const struct sweep_search_cfg *c = s->cfg;
	struct bracket b = bracket_of(s, loss);
	s->retry = false;
	/* a bound decided by disturbed trials alone: run it again */
	if (s->r->retries < c->max_retries) {
		const int bound[2] = {b.lo, b.hi};
		for (int k = 0; k < 2; k++)
			if (bound[k] >= 0 && s->g[bound[k]].tainted) {
				*target = s->g[bound[k]].target;
				*secs = s->g[bound[k]].nfull ? c->trial_seconds
							      : c->initial_seconds;
				s->retry = true;
				return 1;
			}
	}
	/* trials that disagree at one rate: settle it there first */
	for (size_t j = 0; j < s->ng; j++)
		if (load_unsettled(s, &s->g[j])) {
			*target = s->g[j].target;
			*secs = c->trial_seconds;
			return 1;
		}
	if (b.hi < 0) { /* nothing failed: the generator's max is a lower bound */
		if (b.lo < 0 || load_confirmed_unpaced(s, &s->g[b.lo]))
			return 0;
		*target = s->g[b.lo].target;
		*secs = c->trial_seconds;
		return 1;
	}
	const struct load *hi = &s->g[b.hi];
	if (c->exceed_ratio > 0 && ((b.above >= 0 && hi->ntrials < 3) ||
				    (!hi->lossy && hi->ntrials < 2))) {
		/* a failure below a pass, or a rate the generator once did not
		 * sustain: noise or real; more trials let the exceed ratio decide */
		*target = hi->target;
		*secs = c->trial_seconds;
		return 1;
	}
	if (b.lo < 0) {
		double cand = step_down(s, &b, loss);
		if (cand <= c->min_rate) {
			for (size_t j = 0; j < s->ng; j++)
				if (s->g[j].target == c->min_rate)
					return -1; /* failed there already */
			cand = c->min_rate;
		}
		*target = cand;
		*secs = c->initial_seconds;
		return 1;
	}
	const struct load *lo = &s->g[b.lo];
	double mid = (lo->reach + hi->rate) / 2;
	double cand = mid;
	if (b.nfail <= 1) {
		/* only the max rate failed: go to the rate received there, then
		 * step up from it by doubling steps until something fails */
		const struct load *top = &s->g[0];
		double est = isfinite(top->min_rx) && !top->tainted ? top->min_rx / (1 - loss) : 0;
		int m = 0;
		for (size_t j = 0; j < s->ng; j++)
			m += !s->g[j].fails && s->g[j].rate < hi->rate &&
			     s->g[j].rate >= est * (1 - 2 * c->precision);
		if (!m && est > lo->reach * (1 + c->precision))
			cand = est;
		else
			cand = lo->reach * (1 + 0.95 * c->precision * ldexp(1, m > 0 ? m - 1 : 0));
		cand = fmin(cand, mid);
	}
	/* narrow enough; or the generator's own limit is in the bracket (the
	 * top only fell short, the bottom already got less than it asked);
	 * or asked before (the generator cannot resolve more) */
	bool done = (hi->rate - lo->reach) / hi->rate <= c->precision ||
		    (!hi->lossy && lo->reach > lo->rate * (1 + c->precision));
	for (size_t j = 0; j < s->ng && !done; j++)
		done = fabs(s->g[j].target - cand) <= 1e-9 * cand;
	if (done) {
		/* re-test the final bracket: the lower end always; the upper
		 * end too when the exceed ratio lets a re-test overturn it */
		const struct load *re = !load_confirmed(s, lo)			 ? lo
					: c->exceed_ratio > 0 && hi->ntrials < 2 ? hi
										 : NULL;
		if (!re)
			return 0;
		cand = re->target;
		*secs = c->trial_seconds;
	} else {
		*secs = c->initial_seconds;
	}
	*target = cand;
	return 1;
}

static void result_fill(struct state *s, const int gstate[G_N])
{
	struct sweep_search_result *r = s->r;
	const double loss[G_N] = {s->cfg->ndr_loss, s->cfg->pdr_loss};
	r->top_trial = -1;
	r->max_offered_pps = 0;
	r->disturbed_trials = 0;
	for (size_t i = 0; i < r->ntrials; i++) {
		const struct sweep_trial *t = &r->trials[i];
		if (t->status != SWEEP_TRIAL_OK)
			continue;
		r->disturbed_trials += t->disturbed;
		if (r->top_trial < 0 || t->offered_pps > r->max_offered_pps) {
			r->top_trial = (int)i;
			r->max_offered_pps = t->offered_pps;
		}
	}
	/* the NIC flat out against this receiver: the highest rate it
	 * offered in any trial at "max" (the first trial alone is one draw) */
	r->nic_max_pps = 0;
	for (size_t i = 0; i < r->ntrials; i++) {
		const struct sweep_trial *t = &r->trials[i];
		if (t->status == SWEEP_TRIAL_OK && t->target_pps == 0 &&
		    t->offered_pps > r->nic_max_pps)
			r->nic_max_pps = t->offered_pps;
	}
	for (int g = 0; g < G_N; g++) {
		struct bracket b = bracket_of(s, loss[g]);
		double lo = b.lo >= 0 ? s->g[b.lo].rate : 0;
		double hi = b.hi >= 0 && isfinite(s->g[b.hi].rate) ? s->g[b.hi].rate : 0;
		int tr = b.lo >= 0 ? s->g[b.lo].last_pass : -1;
		bool resolved = gstate[g] <= 0;
		r->disturbed |= (b.lo >= 0 && s->g[b.lo].tainted) ||
				(b.hi >= 0 && s->g[b.hi].tainted);
		if (gstate[g] < 0)
			lo = 0, tr = -1;
		bool hi_short = b.hi >= 0 && !s->g[b.hi].lossy;
		if (g == G_NDR) {
			r->ndr_pps = lo, r->ndr_hi_pps = hi, r->ndr_trial = tr;
			r->ndr_resolved = resolved;
			r->ndr_hi_short = hi_short;
		} else if (lo < r->ndr_pps) {
			/* what meets the NDR meets the PDR */
			r->pdr_pps = r->ndr_pps, r->pdr_hi_pps = hi, r->pdr_trial = r->ndr_trial;
			r->pdr_resolved = resolved;
			r->pdr_hi_short = hi_short;
		} else {
			r->pdr_pps = lo, r->pdr_hi_pps = hi, r->pdr_trial = tr;
			r->pdr_resolved = resolved;
			r->pdr_hi_short = hi_short;
		}
		/* done, and no wider than asked: a bracket left wide is
		 * unresolved whatever stopped the search, unless its upper end
		 * is only the generator's (then the goal is a lower bound) */
		double rlo = g == G_NDR ? r->ndr_pps : r->pdr_pps;
		double rhi = g == G_NDR ? r->ndr_hi_pps : r->pdr_hi_pps;
		if (!hi_short && rlo > 0 && rhi > 0 &&
		    (rhi - rlo) / rhi > s->cfg->precision + 1e-12)
			*(g == G_NDR ? &r->ndr_resolved : &r->pdr_resolved) = false;
		/* nothing lost at the top, or the top was only not sustained */
		if (g == G_PDR)
			r->generator_limited = b.lo >= 0 && (b.hi < 0 || !s->g[b.hi].lossy);
	}
	/* an NDR the NIC could not offer more than is the NIC's */
	if (r->nic_max_pps > 0 && r->ndr_pps >= r->nic_max_pps)
		r->generator_limited = true;
	/* the wire's rate, as the software NIC's trials recorded it; a
	 * bound at it (within the NIC's 2% shortfall) is the line's */
	r->line_pps = 0;
	for (size_t i = 0; i < r->ntrials; i++) {
		json_t *nic = r->trials[i].doc ? json_object_get(r->trials[i].doc, "nic") : NULL;
		double l = json_number_value(json_object_get(nic, "line_mpps")) * 1e6;
		if (l > r->line_pps)
			r->line_pps = l;
	}
	r->line_limited = r->generator_limited && r->line_pps > 0 &&
			  fmax(r->nic_max_pps, r->max_offered_pps) >= 0.98 * r->line_pps;
}

/* The host's verdict on a trial that carries a run result. */
static void trial_validity(struct sweep_trial *t)
{
	json_t *v = json_object_get(t->doc, "validity");
	t->disturbed |= json_is_true(json_object_get(v, "disturbed")) ||
			json_is_true(json_object_get(t->doc, "oversubscribed"));
}

/* Seconds the next trial will likely take: its length plus the mean
 * overhead (start-up, quiet, canary) of the trials so far. */
static double trial_estimate(const struct sweep_search_result *r, double secs)
{
	double over = 0;
	int n = 0;
	for (size_t i = 0; i < r->ntrials; i++)
		if (r->trials[i].wall_seconds > 0) {
			over += fmax(0, r->trials[i].wall_seconds - r->trials[i].seconds);
			n++;
		}
	return secs + (n ? over / n : 0);
}

/*
 * A generator-limited bound is only as repeatable as the generator. Its
 * clean flat-out trials (zero loss, undisturbed) say how steady it was:
 * when they differ by more than GEN_UNSTEADY of the best (or twice the
 * precision goal, if that is wider), the bound would move with the
 * generator's next draw, and the point is left unresolved with the range.
 * Measured on the 16-core host: the software NIC's flat-out rate moved up
 * to 1.8x between trial processes of one point, and such bounds 12-17%
 * between sweeps; where the three trials stayed within 5%, so did the
 * bound.
 */
#define GEN_UNSTEADY 0.05
static void generator_steadiness(const struct sweep_search_cfg *cfg,
				 struct sweep_search_result *r)
{
	double lo = INFINITY, hi = 0;
	int n = 0;
	for (size_t i = 0; i < r->ntrials; i++) {
		const struct sweep_trial *t = &r->trials[i];
		if (t->target_pps > 0 || t->status != SWEEP_TRIAL_OK || t->disturbed ||
		    t->loss > cfg->ndr_loss + 1e-12)
			continue;
		lo = fmin(lo, t->offered_pps);
		hi = fmax(hi, t->offered_pps);
		n++;
	}
	if (n < 2 || !(hi > 0) || (hi - lo) / hi <= fmax(GEN_UNSTEADY, 2 * cfg->precision))
		return;
	r->ndr_resolved = r->pdr_resolved = false;
	r->generator_unsteady = true;
	size_t k = strlen(r->reason);
	snprintf(r->reason + k, sizeof(r->reason) - k,
		 "%sgenerator unsteady: its %d clean flat-out trials offered %.3f-%.3f Mpps, "
		 "so the bound moves with it",
		 k ? "; " : "", n, lo / 1e6, hi / 1e6);
}

int sweep_search_run(const struct sweep_search_cfg *cfg, sweep_trial_fn fn, void *ctx,
		     struct sweep_search_result *r)
{
	memset(r, 0, sizeof(*r));
	r->ndr_trial = r->pdr_trial = r->top_trial = -1;
	unsigned cap = cfg->max_trials ? cfg->max_trials : 12;
	r->budget_seconds = cfg->budget_seconds > 0 ? cfg->budget_seconds
						    : cap * (cfg->trial_seconds + SWEEP_TRIAL_OVERHEAD_S);
	if (cfg->budget_cap_seconds > 0)
		r->budget_seconds = fmin(r->budget_seconds, cfg->budget_cap_seconds);
	/* re-runs of disturbed trials replace trials, they do not eat the cap */
	size_t room = cap + cfg->max_retries;
	r->trials = calloc(room, sizeof(*r->trials));
	struct state s = {cfg, r, calloc(room, sizeof(struct load)), 0, false};
	int rc = 0, broken = 0, gstate[G_N] = {1, 1};
	const double loss[G_N] = {cfg->ndr_loss, cfg->pdr_loss};
	if (!r->trials || !s.g) {
		free(s.g);
		free(r->trials);
		r->trials = NULL;
		return -ENOMEM;
	}
	for (;;) {
		double target = cfg->max_rate, secs = cfg->initial_seconds;
		bool retry = false;
		if (r->ntrials) {
			bool want = false;
			for (int g = 0; g < G_N && !want; g++) {
				if (gstate[g] < 0)
					continue;
				gstate[g] = goal_next(&s, loss[g], &target, &secs);
				want = gstate[g] > 0;
				retry = s.retry;
			}
			if (!want)
				break;
			if (r->ntrials >= cap + r->retries + retry) {
				snprintf(r->reason, sizeof(r->reason),
					 "trial cap (%u) reached before the precision goal", cap);
				break;
			}
			/* the automatic budget follows the trials' own overhead
			 * (process start, EAL, warm-up, canary: ~1.5 s a DPDK trial
			 * on the 16-core host), so it never ends a point before the
			 * trial cap only because trials cost more than 0.7 s to set up */
			if (!(cfg->budget_seconds > 0))
				r->budget_seconds =
				    cap * (cfg->trial_seconds +
					   fmax(SWEEP_TRIAL_OVERHEAD_S,
						trial_estimate(r, cfg->trial_seconds) -
						    cfg->trial_seconds));
			if (cfg->budget_cap_seconds > 0)
				r->budget_seconds = fmin(r->budget_seconds, cfg->budget_cap_seconds);
			if (r->spent_seconds + trial_estimate(r, secs) > r->budget_seconds + 1e-9) {
				snprintf(r->reason, sizeof(r->reason),
					 "time budget (%.1f s) spent before the precision goal",
					 r->budget_seconds);
				break;
			}
		}
		struct sweep_trial *t = &r->trials[r->ntrials];
		memset(t, 0, sizeof(*t));
		t->n = (int)r->ntrials + 1;
		t->target_pps = target;
		t->seconds = secs;
		rc = fn(ctx, t);
		if (rc < 0) {
			json_decref(t->doc);
			t->doc = NULL;
			break;
		}
		r->ntrials++;
		r->retries += retry;
		r->spent_seconds += t->wall_seconds > 0 ? t->wall_seconds : t->seconds;
		if (t->status == SWEEP_TRIAL_OK && !(t->offered_pps > 0)) {
			t->status = SWEEP_TRIAL_FAILED;
			snprintf(t->reason, sizeof(t->reason), "no packets offered");
		}
		if (t->status == SWEEP_TRIAL_OK) {
			trial_validity(t);
			continue;
		}
		if (r->ntrials == 1) {
			r->status = t->status == SWEEP_TRIAL_REJECTED ? SWEEP_POINT_INFEASIBLE
								       : SWEEP_POINT_FAILED;
			snprintf(r->reason, sizeof(r->reason), "trial 1 %s: %.220s",
				 sweep_trial_status_name(t->status), t->reason);
			break;
		}
		if (++broken >= MAX_BROKEN) {
			r->status = SWEEP_POINT_FAILED;
			snprintf(r->reason, sizeof(r->reason), "%d trials broke; last: %s: %.200s",
				 broken, sweep_trial_status_name(t->status), t->reason);
			break;
		}
	}
	/* where each goal stands now: 0 done, -1 below min_rate, 1 unresolved */
	for (int g = 0; g < G_N; g++) {
		double t_, s_;
		if (gstate[g] >= 0 && r->ntrials)
			gstate[g] = goal_next(&s, loss[g], &t_, &s_);
	}
	result_fill(&s, gstate);
	if (r->status == SWEEP_POINT_OK && !r->reason[0] && (gstate[G_NDR] < 0 || gstate[G_PDR] < 0)) {
		int g = gstate[G_NDR] < 0 ? G_NDR : G_PDR;
		bool lossy = false;
		for (size_t i = 0; i < r->ntrials; i++)
			lossy |= r->trials[i].target_pps == cfg->min_rate &&
				 (r->trials[i].status != SWEEP_TRIAL_OK || r->trials[i].loss > loss[g]);
		if (lossy)
			snprintf(r->reason, sizeof(r->reason),
				 "%s: loss above %g even at min_rate %.0f pps", g ? "PDR" : "NDR",
				 loss[g], cfg->min_rate);
		else
			snprintf(r->reason, sizeof(r->reason),
				 "%s: the generator did not sustain even min_rate %.0f pps (host too "
				 "busy?)", g ? "PDR" : "NDR", cfg->min_rate);
	} else if (r->status == SWEEP_POINT_OK && !r->reason[0] && r->line_limited) {
		snprintf(r->reason, sizeof(r->reason),
			 "line-rate-limited: the receiver took the line rate (%.3f Mpps), its "
			 "ceiling is above it (a lower bound)",
			 r->line_pps / 1e6);
	} else if (r->status == SWEEP_POINT_OK && !r->reason[0] && r->generator_limited) {
		snprintf(r->reason, sizeof(r->reason),
			 "generator-limited: %s, the ceiling is a lower bound",
			 r->pdr_hi_pps > 0 ? "the generator did not sustain a higher rate"
					   : "no loss at the highest rate offered");
	}
	if (r->status == SWEEP_POINT_OK && r->generator_limited)
		generator_steadiness(cfg, r);
	if (r->status == SWEEP_POINT_OK && r->disturbed) {
		size_t n = strlen(r->reason);
		snprintf(r->reason + n, sizeof(r->reason) - n,
			 "%sa bound rests on disturbed trials (%u re-runs spent)", n ? "; " : "",
			 r->retries);
	}
	free(s.g);
	return rc;
}

void sweep_search_result_free(struct sweep_search_result *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->ntrials; i++)
		json_decref(r->trials[i].doc);
	free(r->trials);
	r->trials = NULL;
	r->ntrials = 0;
}

static json_t *mpps_or_null(double pps)
{
	return pps > 0 ? json_real(pps / 1e6) : json_null();
}

static json_t *width_or_null(double lo, double hi)
{
	return lo > 0 && hi > 0 ? json_real((hi - lo) / hi) : json_null();
}

int sweep_summary_add_search(json_t *sum, const struct sweep_search_cfg *cfg,
			     const struct sweep_search_result *r)
{
	bool ok = r->status == SWEEP_POINT_OK;
	bool resolved = ok && r->ndr_resolved && r->pdr_resolved;
	/* threads sharing cores (--allow-oversubscribe): every trial measured
	 * the scheduler too, so the point is never a ceiling, whatever the
	 * re-runs found (they are disturbed by construction) */
	bool over = false;
	for (size_t i = 0; i < r->ntrials && !over; i++)
		over = json_is_true(json_object_get(r->trials[i].doc, "oversubscribed"));
	json_t *flags = json_array();
	if (flags && ok && !resolved)
		json_array_append_new(flags, json_string("unresolved"));
	if (flags && ok && r->disturbed)
		json_array_append_new(flags, json_string("disturbed"));
	if (flags && ok && over)
		json_array_append_new(flags, json_string("oversubscribed"));
	/* an upper end the generator did not sustain bounds nothing */
	double ndr_hi = r->ndr_hi_short ? 0 : r->ndr_hi_pps;
	double pdr_hi = r->pdr_hi_short ? 0 : r->pdr_hi_pps;
	json_t *add = json_pack("{s:o, s:o, s:o, s:o, s:f, s:b, s:b, s:b, s:b, s:i, s:i, s:f, s:f, "
				"s:b, s:b, s:o}",
				"ndr_upper_mpps", mpps_or_null(ndr_hi), "pdr_upper_mpps",
				mpps_or_null(pdr_hi), "ndr_width", width_or_null(r->ndr_pps, ndr_hi),
				"pdr_width", width_or_null(r->pdr_pps, pdr_hi), "precision",
				cfg->precision,
				"ndr_resolved", ok && r->ndr_resolved, "pdr_resolved",
				ok && r->pdr_resolved, "resolved", resolved, "disturbed",
				ok && r->disturbed, "disturbed_trials", (int)r->disturbed_trials,
				"retries", (int)r->retries, "budget_seconds", r->budget_seconds,
				"spent_seconds", r->spent_seconds, "oversubscribed", over,
				"generator_unsteady", ok && r->generator_unsteady, "flags", flags);
	if (!add || json_object_update(sum, add) < 0) {
		json_decref(add);
		return -ENOMEM;
	}
	json_decref(add);
	return 0;
}
