/* SPDX-License-Identifier: MIT */
/*
 * The evidence report (see rxray/report.h): collect -> compute ceilings,
 * fits and diffs -> write plots and flames -> write report.md and
 * report.html side by side through doc.h.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "doc.h"
#include "plot.h"
#include "rxray/afile.h"
#include "rxray/flame.h"
#include "rxray/model.h"
#include "rxray/report.h"
#include "rxray/util.h"
#include "report_priv.h"

static int mkdir_p(const char *dir)
{
	struct stat st;
	if (!stat(dir, &st))
		return S_ISDIR(st.st_mode) ? 0 : -EEXIST;
	return mkdir(dir, 0755) ? -errno : 0;
}

/* Render into memory with fn, then save as dir/rel and keep the text. */
int rxo_rpt_save(struct rpt *R, const char *rel, char *text, size_t len)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", R->dir, rel);
	int rc = rxr_afile_write_string(path, text, len);
	if (rc)
		snprintf(R->err, R->errlen, "%s: %s", path, strerror(-rc));
	return rc;
}

static void section_summary(struct rpt *R, struct doc *d)
{
	rxo_doc_h(d, 2, "summary", "Summary");
	rxo_doc_p(d, "Source: %s (%zu points, %zu trials). Predicted: the light-load cost model's ceiling "
		 "(it never reads the NDR trial). NDR-trial accounting: clock_hz / busy cycles per packet "
		 "of the NDR trial's bottleneck thread (the software NIC excluded) x queues, the rate that "
		 "trial received, not a prediction. Bound: time/packet = a + b x frame bytes fitted per "
		 "config.",
	      R->s->src, R->s->n, R->s->ntrials);
	for (size_t j = 0; j < R->nf; j++) {
		const struct rxa_family *f = &R->f[j];
		char head[768];
		if (f->have_cost && !f->cost.declined)
			snprintf(head, sizeof(head), "%s: %s bound (%.0f%% of time/packet at %.0f B grows with bytes, R^2 %.3f, residual %.0f%% of the mean, %zu clean points)",
				 f->label, rxa_bound_name(f->cost.bound), 100 * f->cost.byte_share, f->cost.xmax,
				 f->cost.r2, 100 * f->cost.rel_rms, f->cost.n);
		else if (f->have_cost)
			snprintf(head, sizeof(head), "%s: bound not classified: %s (%zu clean points)", f->label,
				 f->cost.declined, f->cost.n);
		else
			snprintf(head, sizeof(head), "%s: bound not classified (needs %d or more clean frame sizes)",
				 f->label, RXA_BOUND_MIN_POINTS);
		rxu_utf8_trim(head);
		rxo_doc_h(d, 3, "", head);
		rxo_doc_ul_begin(d);
		for (size_t k = 0; k < f->n; k++) {
			const struct rxa_ceiling *c = &R->c[f->idx[k]];
			char fb[32], nd[64], pr[32], mo[64], mk[1536];
			const char *fr = rxa_result_knob_str(c->p->knobs, "frame", fb, sizeof(fb));
			rxa_fmt_interval(nd, sizeof(nd), c->p, false);
			const char *mark = rxo_rpt_mark(c->p, mk, sizeof(mk));
			rxa_fmt_num(pr, sizeof(pr), c->predicted_mpps, 2);
			if (isfinite(c->model_mpps))
				snprintf(mo, sizeof(mo), "predicted (light-load model) %.2f Mpps", c->model_mpps);
			else
				snprintf(mo, sizeof(mo), "no light-load prediction");
			if (c->thread < 0) {
				rxo_doc_li(d, "warn", "frame %s B: %s%s%s", fr ? fr : "?", c->p->status,
				       c->p->reason ? ": " : "", c->p->reason ? c->p->reason : "");
				continue;
			}
			char stages[256] = "";
			size_t len = 0;
			for (size_t i = 0; i < c->ntop && len < sizeof(stages); i++)
				len += (size_t)snprintf(stages + len, sizeof(stages) - len, "%s%s %.0f (%.0f%%)",
							i ? ", " : "", rxp_stage_name((enum rxp_stage)c->top[i].stage),
							c->top[i].cpp, 100 * c->top[i].share);
			rxo_doc_li(d, mark ? "warn" : NULL, "frame %s B: NDR %s Mpps%s, %s, %s %s Mpps; bottleneck %s thread, %.0f cycles/packet, top stages %s; %s%s%s",
			       fr ? fr : "?", nd, c->p->generator_limited ? " (generator-limited: lower bound)" : "",
			       mo, isfinite(c->p->ndr_mpps) ? "NDR-trial accounting" : "highest-rate trial's accounting",
			       pr, c->thread_label, c->cpp,
			       c->ntop ? stages : "-",
			       f->have_cost && !f->cost.declined ? rxa_bound_name(f->cost.bound) : "bound unknown",
			       mark ? " " : "", mark ? mark : "");
		}
		rxo_doc_ul_end(d);
	}
}

static void section_warnings(struct rpt *R, struct doc *d)
{
	size_t n = 0;
	for (size_t i = 0; i < R->s->n; i++) {
		const struct rxa_point *p = &R->s->pts[i];
		n += p->generator_limited || strcmp(p->status, "ok") || R->c[i].tail_ratio > RXA_TAIL_RATIO ||
		     rxa_point_marks(p);
	}
	n += R->s->truncated_line != 0;
	rxo_doc_h(d, 2, "warnings", "Warnings");
	if (!n) {
		rxo_doc_p(d, "None: every point was searched to completion and no NDR was capped by the generator.");
		return;
	}
	rxo_doc_ul_begin(d);
	if (R->s->truncated_line)
		rxo_doc_li(d, "warn", "%s: the last line (%d) was truncated (a sweep killed mid-write?) and was skipped",
		       R->s->src, R->s->truncated_line);
	for (size_t i = 0; i < R->s->n; i++) {
		const struct rxa_point *p = &R->s->pts[i];
		char label[512], a[32], b[32];
		rxa_point_label(p, R->vary, R->nvary, label, sizeof(label));
		char mk[1536];
		if (rxo_rpt_mark(p, mk, sizeof(mk))) {
			char iv[64];
			rxa_fmt_interval(iv, sizeof(iv), p, false);
			rxo_doc_li(d, "warn", "%s: %s%s%s%s", label, mk, strcmp(iv, "-") ? "; NDR " : "",
			       strcmp(iv, "-") ? iv : "", strcmp(iv, "-") ? " Mpps" : "");
		}
		if (p->generator_limited) {
			rxa_fmt_num(a, sizeof(a), p->nic_max_mpps, 2);
			rxa_fmt_num(b, sizeof(b), p->ndr_mpps, 2);
			char mo[32];
			rxa_fmt_num(mo, sizeof(mo), R->c[i].model_mpps, 2);
			rxo_doc_li(d, "warn", "%s: generator-limited: the generator reached %s Mpps at most, so NDR %s Mpps "
			       "is a lower bound on the receiver's ceiling (predicted by the light-load model: %s "
			       "Mpps)",
			       label, a, b, mo);
		}
		if (R->c[i].tail_ratio > RXA_TAIL_RATIO) {
			const struct rxa_ceiling *c = &R->c[i];
			rxa_fmt_num(a, sizeof(a), c->median_mpps, 2);
			rxo_doc_li(d, "warn", "%s: heavy tail: %s's mean lap on the %s thread is %.0fx its median, so a few "
			       "laps (preemption, interrupts, a stalled core) dominate its cycles/packet; with median "
			       "laps the trial's accounting is %s Mpps instead of %.2f",
			       label, rxp_stage_name((enum rxp_stage)c->tail_stage), c->thread_label, c->tail_ratio,
			       a, c->predicted_mpps);
		}
		if (strcmp(p->status, "ok") && strcmp(p->status, "run"))
			rxo_doc_li(d, "warn", "%s: %s%s%s", label, p->status, p->reason ? ": " : "",
			       p->reason ? p->reason : "");
		if (!strcmp(p->status, "run") && isfinite(R->c[i].top_loss) && R->c[i].top_loss > 0)
			rxo_doc_li(d, "warn", "%s: a single run, not a search: %.1f%% loss, no NDR", label,
			       100 * R->c[i].top_loss);
	}
	rxo_doc_ul_end(d);
}

/* One environment entry as a cell: a scalar as it is; an object (env.dpdk:
 * version, eal_args, ...) as its version then its other scalar members; an
 * array (env.gpu) as its entries' names, "none" when empty. NULL when absent. */
static const char *env_cell(json_t *env, const char *key, char *b, size_t n)
{
	json_t *v = json_object_get(env, key);
	if (!v)
		return NULL;
	if (!json_is_object(v) && !json_is_array(v))
		return rxa_result_knob_str(env, key, b, n);
	size_t o = 0;
	char one[256];
	b[0] = '\0';
	if (json_is_array(v)) {
		size_t i;
		json_t *e;
		json_array_foreach(v, i, e) {
			json_t *name = json_is_object(e) ? json_object_get(e, "name") : e;
			const char *s = json_is_string(name) ? json_string_value(name) : "?";
			o += (size_t)snprintf(b + o, o < n ? n - o : 0, "%s%s", i ? ", " : "", s);
		}
		return json_array_size(v) ? b : "none";
	}
	if (rxa_result_knob_str(v, "version", one, sizeof(one)))
		o += (size_t)snprintf(b + o, o < n ? n - o : 0, "%s", one);
	const char *k;
	json_t *m;
	json_object_foreach(v, k, m) {
		if (!strcmp(k, "version") || !rxa_result_knob_str(v, k, one, sizeof(one)))
			continue;
		o += (size_t)snprintf(b + o, o < n ? n - o : 0, "%s%s %s", o ? "; " : "", k, one);
	}
	return o ? b : NULL;
}

static void section_env(struct rpt *R, struct doc *d)
{
	rxo_doc_h(d, 2, "environment", "Environment");
	const struct rxr_result *r = NULL;
	for (size_t i = 0; i < R->s->n && !r; i++)
		r = rxa_point_run(&R->s->pts[i]);
	if (!r) {
		rxo_doc_p(d, "No measured run: environment not recorded.");
		return;
	}
	static const char *const head[] = {"item", "value"};
	struct rxa_table *t = NULL;
	rxa_table_open("Environment", 2, head, &t);
	if (!t)
		return;
	/* the facts a bug report needs first, then everything else recorded */
	static const struct {
		const char *key, *label;
	} want[] = {{"cpu", "CPU"},           {"cores_online", "cores online"},
		    {"cores_available", "cores available"}, {"kernel", "kernel"},
		    {"machine", "architecture"}, {"dpdk", "DPDK"},
		    {"rdma_core", "rdma-core"},  {"cuda", "CUDA"},
		    {"device", "device"},        {"nic", "NIC"},
		    {"gpu", "GPU"}};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		char b[1024];
		const char *v = env_cell(r->env, want[i].key, b, sizeof(b));
		if (!v && (!strcmp(want[i].key, "device")))
			v = rxa_result_knob_str(R->s->pts[0].knobs, "device", b, sizeof(b));
		rxa_table_row(t);
		rxa_table_cell(t, "%s", want[i].label);
		rxa_table_cell(t, "%s", v ? v : "not recorded (not present, or not captured by the run)");
	}
	rxa_table_row(t);
	rxa_table_cell(t, "clock");
	rxa_table_cell(t, "%s at %.4g GHz, lap cost %.1f cycles", r->clock.source, r->clock.hz / 1e9,
		       r->clock.lap_cost_cycles);
	const char *k;
	json_t *v;
	json_object_foreach(r->env, k, v) {
		bool known = false;
		for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
			known |= !strcmp(want[i].key, k);
		char b[256];
		if (known || !rxa_result_knob_str(r->env, k, b, sizeof(b)))
			continue;
		rxa_table_row(t);
		rxa_table_cell(t, "%s", k);
		rxa_table_cell(t, "%s", b);
	}
	rxo_doc_table(d, t);
	rxa_table_free(t);
}

static void section_tables(struct rpt *R, struct doc *d)
{
	rxo_doc_h(d, 2, "spec", "Sweep spec");
	if (R->s->spec_text)
		rxo_doc_code(d, R->s->spec_text);
	else
		rxo_doc_p(d, "No spec.yaml next to the results (single runs or a bare .jsonl).");

	struct rxa_table *t = NULL;
	rxa_seed_table(R->s, R->c, R->s->n, &t);
	rxo_doc_h(d, 2, "seed", "Results in the seed report's shape (highest-rate trial per point)");
	if (t)
		rxo_doc_table(d, t);
	rxa_table_free(t);

	rxa_ceiling_table(R->s, R->c, R->s->n, &t);
	rxo_doc_h(d, 2, "ceiling", "Ceiling: measured vs predicted");
	if (t)
		rxo_doc_table(d, t);
	rxa_table_free(t);
	rxo_doc_p(d, "NDR: the measured ceiling. Model: the light-load cost model's prediction (it never "
		 "reads the NDR trial). NDR-trial accounting: clock_hz / the NDR trial's bottleneck "
		 "cycles per packet, the rate that trial received, not a prediction (the highest-rate "
		 "trial's where no NDR was found, and then no ratio). '>=' marks generator-limited "
		 "points, whose NDR is a lower bound. A marked point's status names its marks "
		 "(oversubscribed, disturbed, unresolved, interrupted, external generator) instead of "
		 "'ok'; its notes give each mark's reason.");

	rxa_bound_table(R->f, R->nf, &t);
	rxo_doc_h(d, 2, "bounds", "Bound classification");
	if (t && t->nrows)
		rxo_doc_table(d, t);
	else
		rxo_doc_p(d, "No config has two or more clean frame sizes (oversubscribed, disturbed and unresolved "
			 "points are left out): nothing to fit.");
	rxa_table_free(t);
	rxo_doc_p(d, "per-packet: under 25%% of the time per packet at the largest frame grows with bytes; "
		 "per-byte: over 75%%; mixed between. 'receiver cost' fits 1/NDR-trial accounting (the "
		 "bottleneck thread's cost), 'measured' fits 1/NDR without generator-limited points. "
		 "Oversubscribed, disturbed, unresolved and interrupted points are left out of both; a "
		 "config's other marks (an external generator) follow its name. With fewer than %d clean "
		 "frame sizes, a poor fit or time/packet falling with bytes the classifier declines.",
		 RXA_BOUND_MIN_POINTS);
}

/*
 * One shell word: s as the shell must see it (rxu_shell_quote: left bare
 * when it holds only safe characters, else single-quoted), after a space.
 * A value with ';', spaces or quotes pastes as exactly that value.
 */
static void put_word(FILE *m, const char *s)
{
	char small[256];
	size_t need = rxu_shell_quote(s, small, sizeof(small));
	fputc(' ', m);
	if (need < sizeof(small)) {
		fputs(small, m);
		return;
	}
	char *big = malloc(need + 1);
	if (big) {
		rxu_shell_quote(s, big, need + 1);
		fputs(big, m);
	} else {
		fputs("''", m); /* no memory: an empty word, never an unquoted one */
	}
	free(big);
}

/* " --opt value" with both words quoted (a knob name is data too) */
static void put_opt(FILE *m, const char *knob, const char *value)
{
	char opt[160];
	snprintf(opt, sizeof(opt), "--%s", knob);
	for (char *c = opt + 2; *c; c++)
		if (*c == '_')
			*c = '-';
	put_word(m, opt);
	put_word(m, value);
}

static void section_repro(struct rpt *R, struct doc *d)
{
	const char *rx = R->o.rxray ? R->o.rxray : "rxray";
	char *s = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&s, &len);
	if (!m)
		return;
	fprintf(m, "# this report\n%s report", rx);
	put_word(m, R->s->src);
	fputs(" -o", m);
	put_word(m, R->o.outdir_arg ? R->o.outdir_arg : R->dir);
	fputc('\n', m);
	if (R->s->spec_path) {
		char rerun[4096];
		snprintf(rerun, sizeof(rerun), "%s.rerun", R->s->src);
		fprintf(m, "# the whole sweep again, into a new folder\n%s sweep", rx);
		put_word(m, R->s->spec_path);
		fputs(" -o", m);
		put_word(m, rerun);
		fputc('\n', m);
	}
	fprintf(m, "# tables\n%s ceiling", rx);
	put_word(m, R->s->src);
	fputc('\n', m);
	fprintf(m, "# each point once, at its NDR (or the generator's max when none)\n");
	for (size_t i = 0; i < R->s->n; i++) {
		const struct rxa_point *p = &R->s->pts[i];
		if (!rxa_point_run(p))
			continue;
		fprintf(m, "%s run", rx);
		const char *k;
		json_t *v;
		json_object_foreach(p->knobs, k, v) {
			/* the whole value (a cut one would reproduce another configuration) */
			char nb[64];
			const char *b = json_is_string(v)
					    ? json_string_value(v)
					    : rxa_result_knob_str(p->knobs, k, nb, sizeof(nb));
			if (!b || (!strcmp(k, "inject") && !strcmp(b, "none")))
				continue;
			if (!strcmp(k, "inject")) {
				char *dup = strdup(b), *save = NULL;
				for (char *t = dup ? strtok_r(dup, "+", &save) : NULL; t;
				     t = strtok_r(NULL, "+", &save))
					put_opt(m, "inject", t);
				free(dup);
				continue;
			}
			put_opt(m, k, b);
		}
		if (isfinite(p->ndr_mpps) && p->ndr_mpps > 0)
			fprintf(m, " --rate %.0f", p->ndr_mpps * 1e6);
		else
			fprintf(m, " --rate max");
		const struct rxr_result *r = rxa_point_run(p);
		/* the duration the trial asked for (its config), else the one it ran */
		double secs = rxa_knob_num(r->config, "seconds", r->seconds > 0 ? r->seconds : 2.0);
		fprintf(m, " --seconds %.3g -o point%zu.json\n", secs, i);
	}
	fclose(m);
	rxo_doc_h(d, 2, "reproduce", "Reproduce");
	rxo_doc_code(d, s);
	free(s);
}

static void ctx_free(struct rpt *R)
{
	rxa_families_free(R->f, R->nf);
	free(R->c);
	free(R->vary);
	rxo_rpt_diffs_free(R);
}

int rxo_report_write(const struct rxa_set *s, const char *dir, const struct rxo_report_opts *o,
		     char *err, size_t errlen)
{
	struct rpt R = {.s = s, .dir = dir, .err = err, .errlen = errlen};
	if (err && errlen)
		err[0] = '\0'; /* so a failure that forgets its message still prints a defined line */
	if (o)
		R.o = *o;
	struct rxr_afile md = {0}, html = {0};
	char path[4096];
	int rc = mkdir_p(dir);
	if (rc) {
		snprintf(err, errlen, "%s: %s", dir, rc == -EEXIST ? "exists and is not a folder" : strerror(-rc));
		return rc;
	}
	snprintf(path, sizeof(path), "%s/plots", dir);
	if (!rc && (rc = mkdir_p(path)))
		snprintf(err, errlen, "%s: %s", path, strerror(-rc));
	snprintf(path, sizeof(path), "%s/flames", dir);
	if (!rc && (rc = mkdir_p(path)))
		snprintf(err, errlen, "%s: %s", path, strerror(-rc));
	if (rc)
		return rc;
	rc = -ENOMEM;
	R.c = calloc(s->n ? s->n : 1, sizeof(*R.c));
	R.vary = rxa_set_varying(s, &R.nvary);
	if (!R.c || !R.vary)
		goto nomem;
	for (size_t i = 0; i < s->n; i++) {
		rxa_ceiling_compute(&s->pts[i], &R.c[i]);
		rxa_ceiling_model(&R.c[i], RXA_MODEL_LIGHT_FRAC);
	}
	if (rxa_families_build(s, R.c, s->n, &R.f, &R.nf))
		goto nomem;
	if (rxo_rpt_diffs_collect(&R))
		goto nomem;

	/* files next to the report first: plots, flames, ceiling.json */
	if ((rc = rxo_rpt_plots(&R)) || (rc = rxo_rpt_flames(&R)))
		goto out;
	json_t *cj = rxa_ceiling_json(s, R.c, s->n, R.f, R.nf);
	/* indented for a reader; a large sweep's is for programs (compact dumps faster) */
	char *cjs = cj ? json_dumps(cj, s->n <= 1000 ? JSON_INDENT(2) : JSON_COMPACT) : NULL;
	json_decref(cj);
	if (!cjs)
		goto nomem;
	rc = rxo_rpt_save(&R, "ceiling.json", cjs, strlen(cjs));
	free(cjs);
	if (rc)
		goto out;

	snprintf(path, sizeof(path), "%s/report.md", dir);
	if ((rc = rxr_afile_open(&md, path))) {
		snprintf(err, errlen, "%s: %s", path, strerror(-rc));
		goto out;
	}
	snprintf(path, sizeof(path), "%s/report.html", dir);
	if ((rc = rxr_afile_open(&html, path))) {
		snprintf(err, errlen, "%s: %s", path, strerror(-rc));
		goto out;
	}
	struct doc d = {md.f, html.f};
	rxo_doc_open(&d, R.o.title ? R.o.title : "rxray report");
	rxo_doc_p(&d, "Generated by rxray%s%s from %s.", R.o.version ? " " : "", R.o.version ? R.o.version : "",
	      s->src);
	static const char *const nav_id[] = {"verdicts", "summary", "warnings", "environment", "spec", "seed",
					     "ceiling", "bounds", "gpu", "diffs", "plots", "flames", "reproduce"};
	static const char *const nav_name[] = {"verdicts", "summary", "warnings", "environment", "spec",
					       "seed table", "ceiling", "bounds", "GPU", "diffs", "plots",
					       "flame graphs", "reproduce"};
	const char *ids[16], *names[16];
	size_t nn = 0, ngpu = 0;
	for (size_t i = 0; i < s->n; i++)
		ngpu += rxo_rpt_has_gpu(R.c[i].basis);
	for (size_t i = 0; i < sizeof(nav_id) / sizeof(nav_id[0]); i++)
		if (ngpu || strcmp(nav_id[i], "gpu")) { /* the GPU section exists only with GPU points */
			ids[nn] = nav_id[i];
			names[nn++] = nav_name[i];
		}
	rxo_doc_nav(&d, ids, names, nn);
	/* the answer first (docs/design.md "Formats": a report leads with its
	 * verdicts), then the evidence */
	rxo_rpt_section_verdicts(&R, &d);
	section_summary(&R, &d);
	section_warnings(&R, &d);
	section_env(&R, &d);
	section_tables(&R, &d);
	rxo_rpt_section_gpu(&R, &d);
	rxo_rpt_section_diffs(&R, &d);
	rxo_rpt_section_plots(&R, &d);
	rxo_rpt_section_flames(&R, &d);
	section_repro(&R, &d);
	rxo_doc_close(&d);
	rc = rxr_afile_commit(&md);
	if (!rc)
		rc = rxr_afile_commit(&html);
	if (rc)
		snprintf(err, errlen, "%s/report.*: %s", dir, strerror(-rc));
	goto out;
nomem:
	rc = -ENOMEM;
	snprintf(err, errlen, "out of memory");
out:
	rxr_afile_abort(&md);
	rxr_afile_abort(&html);
	ctx_free(&R);
	return rc;
}
