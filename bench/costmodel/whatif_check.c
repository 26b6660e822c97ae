/* SPDX-License-Identifier: MIT */
/*
 * bench/whatif_check: is `rxray whatif` right? For each stage/engine pair,
 * one sweep measures the point uninjected and with --inject STAGE=K; the
 * what-if prediction is the cost model of the uninjected point with
 * STAGE=+K applied, compared with the NDR measured with the injection.
 * The model: calibrated at the NDR trial where the receiver limits the
 * point (rxray whatif's "at NDR" columns: each stage at its cost there,
 * so stages dearer under load stay dearer), else the light-load model
 * (its light trials, never its NDR trial); the light-load figures are
 * printed beside it either way. Also the relative
 * view (predicted after/before vs NDR injected/uninjected), which cancels
 * the model's error at the uninjected point.
 *
 * Target (issue 11, 16-core host): within 10% for 4 stage/engine pairs.
 * Prints a table; never passes or fails.
 */
#include <math.h>
#include <stdio.h>
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
};

static const char *usage =
    "USAGE\n  bench_whatif_check [--rxray PATH] [--noisy] [--dir D]\n\n"
    "Per stage/engine pair: `rxray sweep` with inject [none, STAGE=K] into\n"
    "D/<n> (default /tmp/rxray-whatif-check), then the what-if prediction\n"
    "from the uninjected point against the NDR measured with the injection.\n"
    "--noisy: a shared host (exceed_ratio 0.5, oversubscription allowed).\n";

int main(int argc, char **argv)
{
	cm_args(argc, argv, usage);
	bool noisy = false;
	const char *dir = "/tmp/rxray-whatif-check";
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--noisy"))
			noisy = true;
		else if (!strcmp(argv[i], "--dir") && i + 1 < argc)
			dir = argv[++i];
	}
	printf("# whatif_check: what-if from the uninjected point's light-load model vs the NDR\n"
	       "# measured with the same change injected (frame 1064, 1 queue)\n\n");
	printf(
	    "| pair | change | NDR before | basis | predicted before | predicted after (whatif) | "
	    "NDR injected | NDR inj / predicted | relative: pred after/before | NDR inj/before | "
	    "light load: before / after (NDR inj / after) | verdict |\n");
	printf("|---|---|---:|---|---:|---:|---:|---:|---:|---:|---|---|\n");
	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		const struct pair *pp = &pairs[i];
		char out[600], spec[620], cmd[1600];
		snprintf(out, sizeof(out), "%s/%zu", dir, i);
		snprintf(spec, sizeof(spec), "%s.yaml", out);
		snprintf(cmd, sizeof(cmd), "mkdir -p '%s' && rm -rf '%s'", dir, out);
		if (system(cmd))
			return 1;
		FILE *f = fopen(spec, "w");
		if (!f) {
			perror(spec);
			return 1;
		}
		fprintf(f,
			"%sframes: 1064\ninject: [none, \"%s=%d\"]\ndevice: sim\noutput: %s\n%s"
			"search:\n  ndr_loss: 0\n  precision: 0.03\n  initial_seconds: 0.25\n"
			"  trial_seconds: 0.5\n  max_trials: 9\n  exceed_ratio: %s\n  timeout: 20s\n",
			pp->axes, pp->stage, pp->k, out, noisy ? "allow_oversubscribe: true\n" : "",
			noisy ? "0.5" : "0");
		fclose(f);
		snprintf(cmd, sizeof(cmd), "%s sweep '%s' -o '%s' >/dev/null", cm_rxray, spec, out);
		fprintf(stderr, "bench_whatif_check: %s\n", cmd);
		if (system(cmd)) {
			printf("| %s | sweep failed |\n", pp->name);
			continue;
		}
		char err[RXR_ERR_LEN];
		struct rxr_set *s = NULL;
		if (rxr_set_load(out, &s, err, sizeof(err))) {
			fprintf(stderr, "%s\n", err);
			continue;
		}
		const struct rxr_point *base = NULL, *inj = NULL;
		for (size_t j = 0; j < s->n; j++) {
			char b[64];
			const char *v = rxr_knob_str(s->pts[j].knobs, "inject", b, sizeof(b));
			if (v && !strcmp(v, "none"))
				base = &s->pts[j];
			else
				inj = &s->pts[j];
		}
		struct rxr_point_model *pm = malloc(sizeof(*pm));
		if (!base || !inj || !pm) {
			printf("| %s | points missing |\n", pp->name);
			free(pm);
			rxr_set_free(s);
			continue;
		}
		rxr_point_model_compute(base, 0, pm);
		/* the basis rxray whatif prints first for the point: calibrated
		 * at the NDR where the receiver limits it, else light load */
		struct rxr_model at;
		bool at_ndr = rxr_point_model_at_ndr(base, pm, &at) == 0;
		double lbefore = pm->m.predicted_mpps, lafter = NAN, after = NAN;
		double before = at_ndr ? at.predicted_mpps : lbefore;
		char change[64];
		snprintf(change, sizeof(change), "%s=+%d", pp->stage, pp->k);
		struct rxr_whatif_change ch;
		if (!rxr_whatif_parse(change, &ch, err, sizeof(err)) &&
		    !rxr_model_apply(&pm->m, &ch, 1, err, sizeof(err)))
			lafter = pm->m.predicted_mpps;
		if (at_ndr && !rxr_model_apply(&at, &ch, 1, err, sizeof(err)))
			after = at.predicted_mpps;
		else if (!at_ndr)
			after = lafter;
		double nb = base->ndr_mpps, ni = inj->ndr_mpps;
		double r_abs = ni / after, r_pred = after / before, r_meas = ni / nb;
		const char *verdict = !(nb > 0) || !(ni > 0)	       ? "no NDR lower bound"
				      : !isfinite(r_abs)		       ? "-"
				      : inj->oversubscribed	       ? "oversubscribed"
				      : inj->generator_limited	       ? "generator-limited"
				      : fabs(r_abs - 1) <= 0.10	       ? "within 10%"
				      : fabs(r_meas / r_pred - 1) <= 0.10 ? "relative within 10%"
								       : "OFF";
		printf(
		    "| %s | %s | %.2f | %s | %.2f | %.2f | %.2f | %.2f | %.3f | %.3f | %.2f / %.2f "
		    "(%.2f) | %s |\n",
		    pp->name, change, nb, at_ndr ? "at NDR" : "light load", before, after, ni,
		    r_abs, r_pred, r_meas, lbefore, lafter, ni / lafter, verdict);
		fflush(stdout);
		free(pm);
		rxr_set_free(s);
	}
	return 0;
}
