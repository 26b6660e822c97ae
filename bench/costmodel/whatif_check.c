/* SPDX-License-Identifier: MIT */
/*
 * bench/whatif_check: is `rxray whatif` right? For each stage/engine pair,
 * one sweep measures the point uninjected and with --inject STAGE=K; the
 * what-if prediction is the cost model of the uninjected point with
 * STAGE=+K applied, compared with the NDR measured with the injection.
 * The model: calibrated at the NDR trial where the receiver limits the
 * point (rxray whatif's "at NDR" columns: each stage at its cost there,
 * and after the change at the cost of the rate it predicts, linear in the
 * rate between light load and the NDR trial), else the light-load model
 * (its light trials, never its NDR trial); the light-load figures are
 * printed beside it either way. Also the relative
 * view (predicted after/before vs NDR injected/uninjected), which cancels
 * the model's error at the uninjected point.
 *
 * A pair whose baseline (uninjected) or treatment (injected) point is
 * generator-limited in any sweep is invalid, not judged: that NDR is the
 * software NIC's pace, a lower bound, so neither "within" nor "OFF" would
 * be a figure; the verdict names the side and the pair leaves the count.
 *
 * Target (issue 11, 16-core host): within 10% for 4 stage/engine pairs.
 * Prints a table; never passes or fails.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_cm.h"
#include "rxray/analyze.h"
#include "rxray/model.h"

static const struct pair {
	const char *name;
	const char *axes; /* spec lines */
	const char *stage;
	int k;
} pairs[] = {
    {"verbs hds, rx cqe_poll", "engines: verbs\nmodes: hds\napps: thread\n", "cqe_poll", 300},
    {"verbs hds, app hdr_read", "engines: verbs\nmodes: hds\napps: thread\n", "hdr_read", 300},
    {"dpdk hds cache 256, rx buf_alloc",
     "engines: dpdk\nmodes: hds\nmempool_caches: 256\napps: thread\n", "buf_alloc", 150},
    {"dpdk single (vector) cache 256, rx cqe_poll",
     "engines: dpdk\nmodes: single\nmempool_caches: 256\napps: thread\n", "cqe_poll", 100},
    /* the vector point's uninjected NDR is often the generator's on the
     * 16-core host (a lower bound: the pair is then invalid); a second
     * dpdk pair whose receiver limits it */
    {"dpdk hds cache 256, rx sge_setup",
     "engines: dpdk\nmodes: hds\nmempool_caches: 256\napps: thread\n", "sge_setup", 150},
};

static const char *usage =
    "USAGE\n  bench_whatif_check [--rxray PATH] [--noisy] [--dir D] [--reps N]\n"
    "                     [--from D]...\n\n"
    "Per stage/engine pair: `rxray sweep` with inject [none, STAGE=K] into\n"
    "D/<pair>-<rep> (default /tmp/rxray-whatif-check), then the what-if\n"
    "prediction from the uninjected point against the NDR measured with the\n"
    "injection. --reps N: N sweeps per pair (default 1); the verdict is on\n"
    "the median of their ratios, each rep's ratio printed beside it (the\n"
    "NDRs move between processes, so one sweep decides nothing alone).\n"
    "--noisy: a shared host (exceed_ratio 0.5, oversubscription allowed).\n"
    "--from D (up to 4): no sweeps, the table from those already stored in\n"
    "each D (D/<pair>-<rep>, as a run with --dir D left them), pooled: the\n"
    "medians over every stored sweep of a pair.\n";

/* One sweep of a pair and what the what-if says of it. */
struct rep {
	bool ok;
	bool at_ndr;		/* basis: calibrated at the NDR, else light load */
	bool oversub;		/* the injected point's */
	bool genlim_base;	/* generator-limited (NDR a lower bound): */
	bool genlim_inj;	/* the uninjected point, the injected one */
	bool no_ndr;		/* a point's search found no NDR (0: even its
				 * lowest load lost): left out of the medians */
	double nb, ni;		/* NDR before, injected */
	double before, after;	/* predicted, on the basis */
	double lbefore, lafter; /* predicted from light load */
};

/* The pair's sweep into out (unless from: a stored one) and what the
 * what-if says of it; r->ok false where the sweep failed or a point is
 * missing. -1 on a bench failure. */
static int run_rep(const struct pair *pp, const char *out, bool noisy, bool from, struct rep *r)
{
	char spec[700], cmd[1700], err[RXA_ERR_LEN];
	memset(r, 0, sizeof(*r));
	if (from)
		goto analyse;
	snprintf(spec, sizeof(spec), "%.600s.yaml", out);
	snprintf(cmd, sizeof(cmd), "rm -rf '%.600s'", out);
	if (system(cmd))
		return -1;
	FILE *f = fopen(spec, "w");
	if (!f) {
		perror(spec);
		return -1;
	}
	fprintf(f,
		"%sframes: 1064\ninject: [none, \"%s=%d\"]\ndevice: sim\noutput: %s\n%s"
		"search:\n  ndr_loss: 0\n  precision: 0.03\n  initial_seconds: 0.25\n"
		"  trial_seconds: 0.5\n  max_trials: 9\n  exceed_ratio: %s\n  timeout: 20s\n",
		pp->axes, pp->stage, pp->k, out, noisy ? "allow_oversubscribe: true\n" : "",
		noisy ? "0.5" : "0");
	fclose(f);
	snprintf(cmd, sizeof(cmd), "%s sweep '%s' -o '%.600s' >/dev/null", cm_rxray, spec, out);
	fprintf(stderr, "bench_whatif_check: %s\n", cmd);
	if (system(cmd))
		return 0; /* the sweep failed: r->ok stays false */
analyse:;
	struct rxa_set *s = NULL;
	if (rxa_set_load(out, &s, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return 0;
	}
	const struct rxa_point *base = NULL, *inj = NULL;
	for (size_t j = 0; j < s->n; j++) {
		char b[64];
		const char *v = rxa_result_knob_str(s->pts[j].knobs, "inject", b, sizeof(b));
		if (v && !strcmp(v, "none"))
			base = &s->pts[j];
		else
			inj = &s->pts[j];
	}
	struct rxa_whatif_point *w = malloc(sizeof(*w));
	char change[64];
	snprintf(change, sizeof(change), "%s=+%d", pp->stage, pp->k);
	struct rxa_whatif_change ch;
	if (base && inj && (!(base->ndr_mpps > 0) || !(inj->ndr_mpps > 0))) {
		/* the trial cap came before a passing load (an NDR of 0 is
		 * "none found", not a rate): no ratio to take */
		r->no_ndr = true;
	} else if (base && inj && w && !rxa_whatif_parse(change, &ch, err, sizeof(err)) &&
		   rxa_whatif_point(base, 0, &ch, 1, w, err, sizeof(err)) != -ENOMEM) {
		/* calibrated at the NDR where the receiver limits the point
		 * (rxray whatif's "at NDR" columns), else light load */
		r->at_ndr = isfinite(w->ndr_before.predicted_mpps);
		r->lbefore = w->before.predicted_mpps;
		r->lafter = w->after.predicted_mpps;
		r->before = r->at_ndr ? w->ndr_before.predicted_mpps : r->lbefore;
		r->after = r->at_ndr ? w->ndr_after.predicted_mpps : r->lafter;
		r->nb = base->ndr_mpps;
		r->ni = inj->ndr_mpps;
		r->oversub = inj->oversubscribed;
		r->genlim_base = base->generator_limited;
		r->genlim_inj = inj->generator_limited;
		r->ok = true;
	}
	free(w);
	rxa_set_free(s);
	return 0;
}

#define MAXREPS 16
#define MAXFROM 4

/* With --from: the stored sweeps of pair i, D/<i>-<k> for every D and k
 * that exist, in order; their count. */
static int stored_reps(const char *const *froms, size_t nfrom, size_t i, char outs[][640], int max)
{
	int n = 0;
	for (size_t d = 0; d < nfrom; d++)
		for (int k = 0; k < MAXREPS && n < max; k++) {
			char res[700];
			snprintf(outs[n], 640, "%s/%zu-%d", froms[d], i, k);
			snprintf(res, sizeof(res), "%s/results.jsonl", outs[n]);
			if (!access(res, R_OK))
				n++;
		}
	return n;
}

int main(int argc, char **argv)
{
	cm_args(argc, argv, usage);
	bool noisy = false;
	int reps = 1;
	const char *dir = "/tmp/rxray-whatif-check";
	const char *froms[MAXFROM];
	size_t nfrom = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--noisy"))
			noisy = true;
		else if (!strcmp(argv[i], "--dir") && i + 1 < argc)
			dir = argv[++i];
		else if (!strcmp(argv[i], "--from") && i + 1 < argc) {
			if (nfrom == MAXFROM) {
				fprintf(stderr, "bench_whatif_check: --from: at most %d\n",
					MAXFROM);
				return 2;
			}
			froms[nfrom++] = argv[++i];
		} else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			reps = atoi(argv[++i]);
	}
	if (reps < 1 || reps > MAXREPS) {
		fprintf(stderr, "bench_whatif_check: --reps: 1..%d\n", MAXREPS);
		return 2;
	}
	char cmd[700];
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", dir);
	if (!nfrom && system(cmd))
		return 1;
	snprintf(cmd, sizeof(cmd), "%d", reps); /* the header's count */
	printf("# whatif_check: what-if from the uninjected point's cost model vs the NDR\n"
	       "# measured with the same change injected (frame 1064, 1 queue); basis N:\n"
	       "# calibrated at the NDR, its costs following the rate the change leads to\n"
	       "# (the receiver limits the point), L: light load;\n"
	       "# %s sweep(s) per pair, figures their medians\n\n",
	       nfrom ? "the stored" : cmd);
	printf("| pair | change | NDR before | predicted before | predicted after (whatif) | "
	       "NDR injected | NDR inj / predicted (median) | per sweep | relative: pred "
	       "after/before | NDR inj/before | light load: NDR inj / after | verdict |\n");
	printf("|---|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---|\n");
	size_t within = 0, invalid = 0, npairs = sizeof(pairs) / sizeof(pairs[0]);
	for (size_t i = 0; i < npairs; i++) {
		const struct pair *pp = &pairs[i];
		struct rep rr[MAXREPS];
		double v[8][MAXREPS];
		char per[MAXREPS * 16] = "";
		size_t pl = 0;
		int n = 0;
		bool oversub = false;
		/* sweeps with that side, and with either, generator-limited */
		int gl_base = 0, gl_inj = 0, gl_any = 0;
		char outs[MAXREPS][640];
		int nrep = reps;
		if (nfrom)
			nrep = stored_reps(froms, nfrom, i, outs, MAXREPS);
		for (int k = 0; k < nrep; k++) {
			if (!nfrom)
				snprintf(outs[k], sizeof(outs[k]), "%s/%zu-%d", dir, i, k);
			if (run_rep(pp, outs[k], noisy, nfrom > 0, &rr[k]) < 0)
				return 1;
			const struct rep *r = &rr[k];
			if (r->no_ndr && pl < sizeof(per))
				pl += (size_t)snprintf(per + pl, sizeof(per) - pl, "%s- (no NDR)",
						       pl ? ", " : "");
			if (!r->ok)
				continue;
			v[0][n] = r->nb;
			v[1][n] = r->before;
			v[2][n] = r->after;
			v[3][n] = r->ni;
			v[4][n] = r->ni / r->after;
			v[5][n] = r->after / r->before;
			v[6][n] = r->ni / r->nb;
			v[7][n] = r->ni / r->lafter;
			oversub |= r->oversub;
			gl_base += r->genlim_base;
			gl_inj += r->genlim_inj;
			gl_any += r->genlim_base || r->genlim_inj;
			if (pl < sizeof(per)) /* snprintf returns what it would have written */
				pl += (size_t)snprintf(per + pl, sizeof(per) - pl, "%s%.2f %s",
						       pl ? ", " : "", v[4][n],
						       r->at_ndr ? "N" : "L");
			n++;
		}
		if (!n) {
			printf("| %s | sweeps failed or points missing |\n", pp->name);
			continue;
		}
		double m[8];
		for (int j = 0; j < 8; j++)
			m[j] = cm_median(v[j], (size_t)n);
		/* a side generator-limited in any sweep: its NDR is a lower
		 * bound, so the pair is neither within nor OFF */
		char genlim[128];
		snprintf(genlim, sizeof(genlim),
			 "invalid: generator-limited (%s%s%s, %d of %d sweeps)",
			 gl_base ? "baseline" : "", gl_base && gl_inj ? " and " : "",
			 gl_inj ? "treatment" : "", gl_any, n);
		const char *verdict = gl_base || gl_inj		      ? genlim
				      : !(m[0] > 0) || !(m[3] > 0)    ? "no NDR lower bound"
				      : !isfinite(m[4])		      ? "-"
				      : oversub			      ? "oversubscribed"
				      : fabs(m[4] - 1) <= 0.10	      ? "within 10%"
				      : fabs(m[6] / m[5] - 1) <= 0.10 ? "relative within 10%"
								      : "OFF";
		invalid += gl_base || gl_inj;
		within += !strcmp(verdict, "within 10%");
		printf("| %s | %s=+%d | %.2f | %.2f | %.2f | %.2f | %.2f | %s | %.3f | %.3f | %.2f "
		       "| %s "
		       "|\n",
		       pp->name, pp->stage, pp->k, m[0], m[1], m[2], m[3], m[4], per, m[5], m[6],
		       m[7], verdict);
		fflush(stdout);
	}
	printf("\n%zu of %zu pairs within 10%% (the median's ratio, not the relative view); "
	       "%zu invalid: generator-limited (not counted).\n",
	       within, npairs - invalid, invalid);
	return 0;
}
