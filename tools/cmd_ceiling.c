/* SPDX-License-Identifier: MIT */
/*
 * rxray ceiling: per point, measured NDR/PDR against the ceiling predicted
 * from the bottleneck thread's cycles/packet; the bound classification
 * over frame sizes; and the seed report's table.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "rxray/analyze.h"
#include "rxray/model.h"
#include "rxray/util.h"

#define VERB "ceiling"

static void ceiling_usage(FILE *f)
{
	fprintf(f,
		"USAGE\n"
		"  rxray ceiling RESULTS [--format md|csv|json] [--table T] [-o FILE] [-s SEL]\n"
		"\n"
		"RESULTS is a sweep folder (results.jsonl), a .jsonl file, a run result\n"
		"(.json) or a folder of run results. Per point: NDR/PDR measured by the\n"
		"sweep, the ceiling the light-load cost model predicts, the NDR trial's\n"
		"accounting (clock_hz / cycles per packet of the bottleneck thread, nic\n"
		"threads excluded, x queues: the rate that trial received, not a\n"
		"prediction), the ratios, the bottleneck's top stages and the highest\n"
		"trial's loss; a marked point's status names its marks (oversubscribed,\n"
		"disturbed, unresolved, interrupted, external generator) and its notes\n"
		"give each one's reason. Then the bound\n"
		"classification (fit time/packet = a + b x frame bytes per config) and\n"
		"the seed report's table (frame, TX offered, RX received, Mpps, loss).\n"
		"\n"
		"OPTIONS\n"
		"  -f, --format FMT   md (default), csv, json\n"
		"      --table T      csv: ceiling (default), bounds, seed or model\n"
		"      --light-frac F cost model: fit from passing trials offered at or\n"
		"                     below F x NDR (default 0.5; the NDR trial never)\n"
		"  -o, --output FILE  default '-' (stdout)\n"
		"  -s, --select SEL   only points matching knob=value[,knob=value]\n"
		"  -h, --help\n"
		"\n"
		"EXAMPLES\n"
		"  rxray ceiling results/sweep\n"
		"  rxray ceiling results/sweep --format csv --table bounds\n"
		"  rxray ceiling results/sweep -s engine=dpdk --format json -o ceiling.json\n"
		"\n"
		"Exit codes: 0 ok, 1 runtime failure, 2 bad input.\n");
}

static double ceiling_light_frac = RXA_MODEL_LIGHT_FRAC;

/* The cost model's table (light-load prediction, NDR, ratio, named stages). */
static struct rxa_table *ceiling_model_table(const struct rxa_set *s)
{
	struct rxa_point_model *pm = calloc(s->n ? s->n : 1, sizeof(*pm));
	if (!pm)
		return NULL;
	for (size_t i = 0; i < s->n; i++)
		rxa_point_model_compute(&s->pts[i], ceiling_light_frac, &pm[i]);
	struct rxa_table *t = NULL;
	rxa_model_table(s, pm, s->n, &t);
	free(pm);
	return t;
}

static int ceiling_emit(FILE *o, const char *fmt, const char *table, const struct rxa_set *s,
			const struct rxa_ceiling *c, size_t n, const struct rxa_family *f, size_t nf)
{
	if (!strcmp(fmt, "json")) {
		json_t *j = rxa_ceiling_json(s, c, n, f, nf);
		/* the cost model per point, beside the ceiling rows */
		json_t *cm = json_array();
		struct rxa_point_model *pm = malloc(sizeof(*pm));
		for (size_t i = 0; j && cm && pm && i < s->n; i++) {
			rxa_point_model_compute(&s->pts[i], ceiling_light_frac, pm);
			json_t *one = rxa_point_model_json(pm);
			if (one)
				json_object_set_new(one, "point", json_string(s->pts[i].key ? s->pts[i].key : "-"));
			json_array_append_new(cm, one ? one : json_null());
		}
		free(pm);
		if (j && cm)
			json_object_set_new(j, "cost_model", cm);
		else
			json_decref(cm);
		int rc = j ? json_dumpf(j, o, JSON_INDENT(2)) : -1;
		json_decref(j);
		fputc('\n', o);
		return rc ? -EIO : 0;
	}
	struct rxa_table *tc = NULL;
	rxa_ceiling_table(s, c, n, &tc);
	struct rxa_table *tb = NULL;
	rxa_bound_table(f, nf, &tb);
	struct rxa_table *ts = NULL;
	rxa_seed_table(s, c, n, &ts);
	struct rxa_table *tm = ceiling_model_table(s);
	int rc = -ENOMEM;
	if (!tc || !tb || !ts || !tm)
		goto out;
	if (!strcmp(fmt, "csv")) {
		rc = rxa_table_write_csv(!strcmp(table, "bounds") ? tb : !strcmp(table, "seed") ? ts
								 : !strcmp(table, "model") ? tm : tc, o);
		goto out;
	}
	fprintf(o, "## Ceiling: NDR (measured) vs the light-load model (predicted) (%s)\n\n", s->src);
	rc = rxa_table_write_md(tc, o);
	fprintf(o, "\nNDR: the search's measured ceiling. Model: the light-load cost model's"
		   " prediction (below, never reading the NDR trial). NDR-trial accounting ="
		   " clock_hz / busy cycles per packet of the NDR trial's bottleneck thread x"
		   " queues: at the NDR that is the rate it received, an accounting, not a"
		   " prediction (the highest-rate trial's where no NDR was found; then no"
		   " ratio is given).\n");
	fprintf(o, "\n## Cost model: ceiling predicted from light load\n\n");
	if (!rc)
		rc = rxa_table_write_md(tm, o);
	fprintf(o,
		"\nPredicted = clock_hz / sum over the bottleneck thread's stages of (a/B + b)"
		" x queues, a and b fitted per stage over the laps of passing trials at or below"
		" %g x NDR (calibration trials included, never the NDR trial); B = burst (rx) or"
		" batch (app). Named stages cost more than %.2fx the model per packet in the NDR"
		" trial (at its mean burst); stages cheaper under load cost less than 1/%.2f of"
		" it there, what a ratio above 1 comes with (the light-load trials cost more)."
		" \"At the NDR's lap sizes\": the same model with each"
		" stage at its packets per lap in the NDR trial, and the thread that limits it"
		" with its poll lap; a ratio below 1 that it gives back is lap size, not load:"
		" the receiver lost packets while its laps were still short of B.\n",
		ceiling_light_frac, RXA_MODEL_LOAD_FACTOR, RXA_MODEL_LOAD_FACTOR);
	fprintf(o, "\n## Bound classification\n\n");
	if (!rc && tb->nrows)
		rc = rxa_table_write_md(tb, o);
	else if (!rc)
		fprintf(o, "No config has two or more clean frame sizes (oversubscribed, disturbed and "
			   "unresolved points are left out): nothing to fit.\n");
	fprintf(o, "\n## %s\n\n", ts->title);
	if (!rc)
		rc = rxa_table_write_md(ts, o);
out:
	rxa_table_free(tc);
	rxa_table_free(tb);
	rxa_table_free(ts);
	rxa_table_free(tm);
	return rc;
}

int rxt_cmd_ceiling(int argc, char **argv)
{
	static const char *const formats[] = {"md", "csv", "json", NULL};
	static const char *const tables[] = {"ceiling", "bounds", "seed", "model", NULL};
	static const struct rxt_ana_spec spec = {
	    .want =
		RXT_AO_FORMAT | RXT_AO_TABLE | RXT_AO_OUTPUT | RXT_AO_SELECT | RXT_AO_LIGHT_FRAC,
	    .formats = formats,
	    .tables = tables,
	    .output = "-",
	    .light_frac = RXA_MODEL_LIGHT_FRAC,
	    .min_operands = 1,
	    .max_operands = 1,
	    .operands = "one RESULTS path",
	    .usage = ceiling_usage,
	};
	struct rxt_ana_opts ao;
	int ec = rxt_cli_ana_parse(VERB, argc, argv, &spec, &ao);
	if (ec != RXT_CLI_GO)
		return ec;
	const char *fmt = ao.format, *table = ao.table, *output = ao.output;
	ceiling_light_frac = ao.light_frac;
	struct rxa_set *s = NULL, view = {0};
	struct rxa_ceiling *cs = NULL;
	struct rxa_family *f = NULL;
	struct rxr_afile af = {0};
	size_t n = 0, nf = 0;
	/* a view of the selected points (borrowed), so labels show what varies among them */
	if ((ec = rxt_cli_set_select(VERB, ao.operand[0], ao.select, &s, &view)))
		return ec;
	cs = calloc(view.n, sizeof(*cs));
	if (!cs) {
		ec = RXU_EXIT_RUNTIME;
		goto out;
	}
	for (; n < view.n; n++) {
		rxa_ceiling_compute(&view.pts[n], &cs[n]);
		rxa_ceiling_model(&cs[n], ceiling_light_frac);
	}
	if (rxa_families_build(&view, cs, n, &f, &nf)) {
		ec = RXU_EXIT_RUNTIME;
		goto out;
	}
	if ((ec = rxt_cli_out_open(VERB, output, &af)))
		goto out;
	ec = rxt_cli_out_finish(VERB, output, &af, ceiling_emit(af.f, fmt, table, &view, cs, n, f, nf));
out:
	rxa_families_free(f, nf);
	free(cs);
	free(view.pts);
	rxa_set_free(s);
	return ec;
}
