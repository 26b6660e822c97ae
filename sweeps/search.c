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
}

/* One rate asked (all trials with that target), judged for one goal. */
struct load {
	double target;
	double rate;       /* fails: lowest offered among its failing trials;
			    * passes: lowest offered among its sustained trials */
	double reach;      /* passes: the higher of rate and the rate asked (a
			    * shortfall under 10% still tested the rate asked) */
	double min_rx;     /* lowest received rate of its measured trials */
	int ntrials, nfull, last_pass; /* last_pass: trial index or -1 */
	bool fails;
	bool lossy;        /* a trial lost too much or broke (not only fell short) */
};

struct state {
	const struct sweep_search_cfg *cfg;
	struct sweep_search_result *r;
	struct load *g;
	size_t ng;
};

/*
 * Judge every load for the loss ratio: a load fails when the seconds of
 * its trials that lost more than loss (or broke) exceed exceed_ratio of
 * its trial seconds (exceed_ratio 0: any such trial fails it).
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
		double bad_s = 0, all_s = 0, pass_rate = INFINITY, fail_rate = INFINITY;
		*ld = (struct load){target, 0, 0, INFINITY, 0, 0, -1, false, false};
		for (size_t k = i; k < s->r->ntrials; k++) {
			const struct sweep_trial *t = &s->r->trials[k];
			if (t->target_pps != target)
				continue;
			ld->ntrials++;
			all_s += t->seconds;
			if (t->seconds >= c->trial_seconds * 0.999)
				ld->nfull++;
			if (t->status != SWEEP_TRIAL_OK) {
				ld->lossy = true;
				bad_s += t->seconds;
				fail_rate = fmin(fail_rate, target > 0 ? target : INFINITY);
				continue;
			}
			ld->min_rx = fmin(ld->min_rx, t->rx_pps);
			/* the generator fell short: the rate asked was not sustained */
			bool shortfall = target > 0 && t->offered_pps < target * (1 - SHORTFALL);
			/* the same rate for every goal: what the sustained trials got */
			if (!shortfall)
				pass_rate = fmin(pass_rate, t->offered_pps);
			if (t->loss > loss + 1e-12 || shortfall) {
				ld->lossy |= t->loss > loss + 1e-12;
				bad_s += t->seconds;
				fail_rate = fmin(fail_rate, t->loss > loss + 1e-12 ? t->offered_pps
										     : target);
			} else {
				ld->last_pass = (int)k;
			}
		}
		ld->fails = c->exceed_ratio > 0 ? bad_s > c->exceed_ratio * all_s + 1e-12 : bad_s > 0;
		ld->rate = ld->fails ? fail_rate : pass_rate;
		ld->reach = ld->fails ? ld->rate : fmax(ld->rate, target);
	}
}

static bool load_confirmed(const struct state *s, const struct load *ld)
{
	return ld->nfull >= 1 && ld->ntrials >= 2;
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
 * The next trial for one goal: 1 with target and secs set, 0 when the goal
 * is done, -1 when it cannot be met at min_rate.
 */
static int goal_next(struct state *s, double loss, double *target, double *secs)
{
	const struct sweep_search_cfg *c = s->cfg;
	struct bracket b = bracket_of(s, loss);
	if (b.hi < 0) { /* nothing failed: the generator's max is a lower bound */
		if (b.lo < 0 || load_confirmed(s, &s->g[b.lo]))
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
		/* below every failure: try the rate the device did receive there,
		 * backing off by doubling steps while that fails */
		double est = isfinite(hi->min_rx) ? hi->min_rx / (1 - loss) : hi->rate / 2;
		double back = b.nfail <= 1 ? 0 : fmin(0.9, c->precision * ldexp(1, b.nfail - 1));
		double cand = fmin(est, hi->rate * (1 - c->precision)) * (1 - back);
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
		double est = isfinite(top->min_rx) ? top->min_rx / (1 - loss) : 0;
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

static void result_fill(struct state *s, int ndr_state, int pdr_state)
{
	struct sweep_search_result *r = s->r;
	const double loss[G_N] = {s->cfg->ndr_loss, s->cfg->pdr_loss};
	r->top_trial = -1;
	r->max_offered_pps = 0;
	for (size_t i = 0; i < r->ntrials; i++) {
		const struct sweep_trial *t = &r->trials[i];
		if (t->status != SWEEP_TRIAL_OK)
			continue;
		if (r->top_trial < 0 || t->offered_pps > r->max_offered_pps) {
			r->top_trial = (int)i;
			r->max_offered_pps = t->offered_pps;
		}
	}
	if (r->ntrials && r->trials[0].status == SWEEP_TRIAL_OK)
		r->nic_max_pps = r->trials[0].offered_pps;
	for (int g = 0; g < G_N; g++) {
		struct bracket b = bracket_of(s, loss[g]);
		double lo = b.lo >= 0 ? s->g[b.lo].rate : 0;
		double hi = b.hi >= 0 && isfinite(s->g[b.hi].rate) ? s->g[b.hi].rate : 0;
		int tr = b.lo >= 0 ? s->g[b.lo].last_pass : -1;
		if ((g == G_NDR ? ndr_state : pdr_state) < 0)
			lo = 0, tr = -1;
		if (g == G_NDR) {
			r->ndr_pps = lo, r->ndr_hi_pps = hi, r->ndr_trial = tr;
		} else if (lo < r->ndr_pps) {
			/* what meets the NDR meets the PDR */
			r->pdr_pps = r->ndr_pps, r->pdr_hi_pps = hi, r->pdr_trial = r->ndr_trial;
		} else {
			r->pdr_pps = lo, r->pdr_hi_pps = hi, r->pdr_trial = tr;
		}
		/* nothing lost at the top, or the top was only not sustained */
		if (g == G_PDR)
			r->generator_limited = b.lo >= 0 && (b.hi < 0 || !s->g[b.hi].lossy);
	}
}

int sweep_search_run(const struct sweep_search_cfg *cfg, sweep_trial_fn fn, void *ctx,
		     struct sweep_search_result *r)
{
	memset(r, 0, sizeof(*r));
	r->ndr_trial = r->pdr_trial = r->top_trial = -1;
	unsigned cap = cfg->max_trials ? cfg->max_trials : 12;
	r->trials = calloc(cap, sizeof(*r->trials));
	struct state s = {cfg, r, calloc(cap, sizeof(struct load)), 0};
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
		if (r->ntrials) {
			bool want = false;
			for (int g = 0; g < G_N && !want; g++) {
				if (gstate[g] < 0)
					continue;
				gstate[g] = goal_next(&s, loss[g], &target, &secs);
				want = gstate[g] > 0;
			}
			if (!want)
				break;
			if (r->ntrials >= cap) {
				snprintf(r->reason, sizeof(r->reason),
					 "trial cap (%u) reached before the precision goal", cap);
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
		if (t->status == SWEEP_TRIAL_OK && !(t->offered_pps > 0)) {
			t->status = SWEEP_TRIAL_FAILED;
			snprintf(t->reason, sizeof(t->reason), "no packets offered");
		}
		if (t->status == SWEEP_TRIAL_OK)
			continue;
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
	result_fill(&s, gstate[G_NDR], gstate[G_PDR]);
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
	} else if (r->status == SWEEP_POINT_OK && !r->reason[0] && r->generator_limited) {
		snprintf(r->reason, sizeof(r->reason),
			 "generator-limited: %s, the ceiling is a lower bound",
			 r->pdr_hi_pps > 0 ? "the generator did not sustain a higher rate"
					   : "no loss at the highest rate offered");
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
