/* SPDX-License-Identifier: MIT */
/*
 * rxray whatif: the ceiling before and after changing what stages cost,
 * from the light-load cost model (rxray/model.h). Reads as: parse options
 * -> parse changes -> load -> per selected point: model, apply, table.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "rxray/afile.h"
#include "rxray/analyze.h"
#include "rxray/model.h"
#include "rxray/util.h"

#define VERB "whatif"
#define WHATIF_MAX_CHANGES 16

static void whatif_usage(FILE *f)
{
	fprintf(f,
		"USAGE\n"
		"  rxray whatif INPUT CHANGE... [-s SEL] [--light-frac F] [-f md|csv] [-o FILE]\n"
		"\n"
		"INPUT is a run result (.json; best a light-load run, e.g. rxray run --rate R)\n"
		"or a sweep folder / .jsonl (points selected with -s). CHANGE is\n"
		"  STAGE=+K   the stage costs K more cycles per packet (what --inject adds)\n"
		"  STAGE=-K   K fewer (must not drive it below zero)\n"
		"  STAGE=xF   F times its cost (F > 0), e.g. buf_alloc=x0.5\n"
		"applied on every receive thread that laps STAGE. Per point it prints\n"
		"the ceiling predicted by the cost model before and after: clock_hz /\n"
		"sum over the bottleneck thread's stages of (a/B + b) x queues, a and b\n"
		"fitted over the laps of light-load trials (<= F x NDR, never the NDR\n"
		"trial); and, on a point the receiver limits (an NDR trial and a lossy\n"
		"one above it), the same calibrated at the NDR: each stage at its cost\n"
		"in the NDR trial, and after a change that slows the receiver, at the\n"
		"cost its rate implies (linear in the rate between light load and the\n"
		"NDR trial), so a stage dearer under load costs less at a slower rate.\n"
		"bench/whatif_check measures the same change by injection. A point\n"
		"whose NDR is generator-limited (the software NIC set the pace, the\n"
		"NDR is a lower bound) is no baseline: its row is marked\n"
		"\"" RXA_GENLIM_MARK "\" and the exit status is 1.\n"
		"\n"
		"OPTIONS\n"
		"  -s, --select SEL   only points matching knob=value[,knob=value]\n"
		"      --light-frac F fit from passing trials at or below F x NDR (0.5)\n"
		"  -f, --format FMT   md (default) or csv\n"
		"  -o, --output FILE  default '-' (stdout)\n"
		"  -h, --help\n"
		"\n"
		"EXAMPLES\n"
		"  rxray run --engine dpdk --mode hds --rate 1M -o light.json\n"
		"  rxray whatif light.json buf_alloc=x0.5\n"
		"  rxray whatif results/sweep -s engine=dpdk,mode=hds buf_alloc=-100 free=x0.5\n"
		"\n"
		"Exit codes: 0 ok, 1 runtime failure or a generator-limited point (its\n"
		"row is printed, marked), 2 bad input.\n");
}

int rxt_cmd_whatif(int argc, char **argv)
{
	static const char *const formats[] = {"md", "csv", NULL};
	/* options may follow INPUT and the changes; a change never starts
	 * with '-' (it starts with a stage name: STAGE=-K), so none is taken
	 * for an option */
	static const struct rxt_ana_spec spec = {
	    .want = RXT_AO_FORMAT | RXT_AO_OUTPUT | RXT_AO_SELECT | RXT_AO_LIGHT_FRAC,
	    .formats = formats,
	    .output = "-",
	    .light_frac = RXA_MODEL_LIGHT_FRAC,
	    .min_operands = 2,
	    .max_operands = -1,
	    .operands = "INPUT and at least one CHANGE",
	    .usage = whatif_usage,
	};
	struct rxt_ana_opts ao;
	int ec = rxt_cli_ana_parse(VERB, argc, argv, &spec, &ao);
	if (ec != RXT_CLI_GO)
		return ec;
	const char *fmt = ao.format, *output = ao.output;
	double frac = ao.light_frac;
	const char *input = ao.operand[0];
	struct rxa_whatif_change ch[WHATIF_MAX_CHANGES];
	size_t nch = 0;
	char err[RXA_ERR_LEN], changes[512] = "";
	size_t cl = 0;
	for (int i = 1; i < ao.noperands; i++) {
		if (nch == WHATIF_MAX_CHANGES)
			return rxu_usage_err(VERB, "more than %d changes", WHATIF_MAX_CHANGES);
		if (rxa_whatif_parse(ao.operand[i], &ch[nch], err, sizeof(err)))
			return rxu_usage_err(VERB, "%s", err);
		nch++;
		if (cl < sizeof(changes))
			cl += (size_t)snprintf(changes + cl, sizeof(changes) - cl, "%s%s",
					       cl ? " " : "", ao.operand[i]);
	}

	struct rxa_set *s = NULL, view = {0};
	struct rxa_whatif_point *w = NULL;
	const struct rxa_point **pts = NULL;
	struct rxr_afile af = {0};
	struct rxa_table *t = NULL;
	if ((ec = rxt_cli_set_select(VERB, input, ao.select, &s, &view)))
		return ec;
	pts = calloc(view.n, sizeof(*pts));
	w = calloc(view.n, sizeof(*w));
	if (!pts || !w) {
		ec = RXU_EXIT_RUNTIME;
		goto out;
	}
	size_t applied = 0, modelled = 0, genlim = 0;
	const char *genlim_key = NULL;
	char first_err[RXA_ERR_LEN] = "";
	for (size_t i = 0; i < view.n; i++) {
		pts[i] = &view.pts[i];
		int rc = rxa_whatif_point(&view.pts[i], frac, ch, nch, &w[i], err, sizeof(err));
		if (w[i].generator_limited && !genlim++)
			genlim_key = view.pts[i].key;
		if (rc == -ENODATA)
			continue;
		if (rc == 0 || rc == -ENOENT || rc == -EINVAL)
			modelled++;
		if (rc == 0) {
			applied++;
		} else if (rc == -EINVAL) { /* a change no point can take */
			ec = rxu_usage_err(VERB, "%s: %s", input, err);
			goto out;
		} else if (rc == -ENOENT) { /* bad input only when no point laps the stage */
			if (!first_err[0])
				snprintf(first_err, sizeof(first_err), "%s", err);
		} else if (rc < 0) {
			ec = RXU_EXIT_RUNTIME;
			if (rc != -ENOMEM)
				rxu_err(VERB, "%s: %s", input, err);
			goto out;
		}
	}
	if (!modelled) {
		ec = rxu_usage_err(VERB, "%s: no point has light-load laps to model (lap sums are "
					 "written by this version's rxray run; sweep points need "
					 "passing trials at or below %g x NDR)", input, frac);
		goto out;
	}
	if (!applied) {
		ec = rxu_usage_err(VERB, "%s: %s", input, first_err);
		goto out;
	}
	rxa_whatif_table_model(&view, pts, w, view.n, changes, &t);
	if (!t) {
		ec = RXU_EXIT_RUNTIME;
		goto out;
	}
	if (rxr_afile_open(&af, output)) {
		rxu_err(VERB, "%s: %s", output, strerror(errno));
		ec = RXU_EXIT_RUNTIME;
		goto out;
	}
	int rc = !strcmp(fmt, "csv") ? rxa_table_write_csv(t, af.f) : rxa_table_write_md(t, af.f);
	if (!rc && strcmp(fmt, "csv")) {
		fprintf(af.f,
			"\nCost model from light load (rxray ceiling: \"Cost model\"); '-' where "
			"a point has no model or does not lap a changed stage. \"At NDR\": "
			"the same model with each stage scaled to its cost in the NDR trial, "
			"where the receiver limits the point (not generator-limited): its "
			"before is that trial's rate; its after has each stage at the cost "
			"of the rate it predicts (linear in the rate between light load and "
			"the NDR trial), so a stage dearer under load costs less again at a "
			"slower rate.\n");
		if (genlim)
			fprintf(af.f, "\nNotes \"" RXA_GENLIM_MARK "\": the software NIC set the "
				      "point's pace; its NDR is a lower bound, not the receiver's "
				      "ceiling, so its what-if is not a figure.\n");
	}
	if (rc) {
		rxr_afile_abort(&af);
		rxu_err(VERB, "writing %s: %s", output, strerror(-rc));
		ec = RXU_EXIT_RUNTIME;
	} else if ((rc = rxr_afile_commit(&af))) {
		rxu_err(VERB, "%s: %s", output, strerror(-rc));
		ec = RXU_EXIT_RUNTIME;
	} else if (genlim) { /* printed, marked; but a lower bound is no baseline */
		rxu_err(VERB,
			"%s: %zu of %zu points generator-limited (%s%s): the software NIC set "
			"the pace, so the NDR is a lower bound, not a ceiling, and the what-if "
			"on it is not a figure",
			input, genlim, view.n, genlim_key ? genlim_key : "run",
			genlim > 1 ? ", ..." : "");
		ec = RXU_EXIT_RUNTIME;
	}
out:
	rxa_table_free(t);
	free(w);
	free(pts);
	free(view.pts);
	rxa_set_free(s);
	return ec;
}
