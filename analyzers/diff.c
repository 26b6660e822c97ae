/* SPDX-License-Identifier: MIT */
/*
 * Selectors ("mode=hds,engine=dpdk") and the stage-by-stage diff of two
 * runs: per thread (matched by label), per stage, cycles/packet in A and
 * B, sorted by the size of the change; a one-line verdict; and what-ifs
 * that put one of B's stages back at A's cost and re-run the ceiling model.
 * The diff's tables and JSON (stage deltas, what-ifs) are here too.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rxray/analyze.h"

void rxa_sel_free(struct rxa_sel *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++) {
		free(s->k[i]);
		free(s->v[i]);
	}
	free(s->text);
	memset(s, 0, sizeof(*s));
}

int rxa_sel_parse(const char *text, struct rxa_sel *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	int rc = -ENOMEM;
	char *dup = strdup(text);
	out->text = strdup(text);
	if (!dup || !out->text)
		goto fail;
	char *save = NULL;
	for (char *t = strtok_r(dup, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(t, '=');
		if (!eq || eq == t || !eq[1]) {
			snprintf(err, errlen, "selector '%s': term '%s' is not knob=value", text, t);
			rc = -EINVAL;
			goto fail;
		}
		if (out->n == RXA_SEL_MAX) {
			snprintf(err, errlen, "selector '%s': more than %d terms", text, RXA_SEL_MAX);
			rc = -EINVAL;
			goto fail;
		}
		*eq = '\0';
		out->k[out->n] = strdup(t);
		out->v[out->n] = strdup(eq + 1);
		out->n++;
		if (!out->k[out->n - 1] || !out->v[out->n - 1])
			goto fail;
	}
	if (!out->n) {
		snprintf(err, errlen, "selector '%s': empty (expected knob=value[,knob=value])", text);
		rc = -EINVAL;
		goto fail;
	}
	free(dup);
	return 0;
fail:
	if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	free(dup);
	rxa_sel_free(out);
	return rc;
}

bool rxa_sel_match(const struct rxa_sel *s, const json_t *knobs)
{
	for (size_t i = 0; i < s->n; i++) {
		char b[256];
		const char *v = rxa_result_knob_str(knobs, s->k[i], b, sizeof(b));
		if (!v || strcmp(v, s->v[i]))
			return false;
	}
	return true;
}

void rxa_sel_label(const struct rxa_sel *s, char *buf, size_t n)
{
	size_t len = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < s->n && len < n; i++)
		len += (size_t)snprintf(buf + len, n - len, "%s%s", i ? "," : "", s->v[i]);
}

static bool sel_has(const struct rxa_sel *s, const char *k, const char *v)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->k[i], k) && !strcmp(s->v[i], v))
			return true;
	return false;
}

static void sel_label_unique(const struct rxa_sel *s, const struct rxa_sel *o, char *buf, size_t n)
{
	size_t len = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < s->n && len < n; i++)
		if (!sel_has(o, s->k[i], s->v[i]))
			len += (size_t)snprintf(buf + len, n - len, "%s%s", len ? "," : "", s->v[i]);
}

void rxa_sel_labels(const struct rxa_sel *a, const struct rxa_sel *b, char *la, char *lb, size_t n)
{
	sel_label_unique(a, b, la, n);
	sel_label_unique(b, a, lb, n);
	if (!la[0] || !lb[0] || !strcmp(la, lb)) {
		snprintf(la, n, "%s", a->text);
		snprintf(lb, n, "%s", b->text);
	}
}

void rxa_diff_free(struct rxa_diff *d)
{
	if (!d)
		return;
	free(d->d);
	free(d->w);
	memset(d, 0, sizeof(*d));
}

static int thread_find(const struct rxr_result *r, const char *label)
{
	for (size_t t = 0; t < r->nthreads; t++) {
		char l[24];
		rxa_thread_label(r, t, l, sizeof(l));
		if (!strcmp(l, label))
			return (int)t;
	}
	return -1;
}

static int delta_cmp(const void *a, const void *b)
{
	const struct rxa_stage_delta *x = a, *y = b;
	double fx = fabs(x->delta), fy = fabs(y->delta);
	if (fx != fy)
		return (fx < fy) - (fx > fy);
	int c = strcmp(x->thread, y->thread);
	return c ? c : x->stage - y->stage;
}

static int whatif_cmp(const void *a, const void *b)
{
	const struct rxa_whatif *x = a, *y = b;
	return (x->mpps < y->mpps) - (x->mpps > y->mpps);
}

/* Append the deltas of one thread label (present in a, b or both). */
static int deltas_add(struct rxa_diff *d, const struct rxr_result *a, int ta, const struct rxr_result *b,
		      int tb, const char *label)
{
	for (int s = 0; s < RXP_ST_COUNT; s++) {
		if (s == RXP_ST_IDLE)
			continue;
		double va = ta >= 0 ? rxa_thread_stage_cpp(&a->threads[ta], s) : 0;
		double vb = tb >= 0 ? rxa_thread_stage_cpp(&b->threads[tb], s) : 0;
		if (va == 0 && vb == 0)
			continue;
		struct rxa_stage_delta *nd = realloc(d->d, (d->n + 1) * sizeof(*nd));
		if (!nd)
			return -ENOMEM;
		d->d = nd;
		struct rxa_stage_delta *e = &d->d[d->n++];
		snprintf(e->thread, sizeof(e->thread), "%s", label);
		e->stage = s;
		e->a = va;
		e->b = vb;
		e->delta = vb - va;
	}
	return 0;
}

/* One run's figure for the verdict: its accounting, or what a lossy run received. */
static void diff_side(char *buf, size_t n, const char *label, double acct, double loss, double rx)
{
	if (loss > 0)
		snprintf(buf, n, "%s lost %.1f%% (received %.2f Mpps: its own rate, not a ceiling)",
			 label, 100 * loss, rx);
	else
		snprintf(buf, n, "%s %.2f Mpps", label, acct);
}

static void verdict_write(struct rxa_diff *d, const char *la, const char *lb)
{
	double delta = d->busy_b - d->busy_a;
	size_t len = (size_t)snprintf(d->verdict, sizeof(d->verdict), "%s %s %.0f cycles/packet on the %s thread vs %s (%.0f -> %.0f)",
				      lb, delta >= 0 ? "adds" : "saves", fabs(delta), d->thread, la,
				      d->busy_a, d->busy_b);
	int shown = 0;
	for (size_t i = 0; i < d->n && shown < 4 && len < sizeof(d->verdict); i++) {
		const struct rxa_stage_delta *e = &d->d[i];
		if (strcmp(e->thread, d->thread) || fabs(e->delta) < 0.5)
			continue;
		len += (size_t)snprintf(d->verdict + len, sizeof(d->verdict) - len, "%s %s %+.0f",
					shown ? "," : ":", rxp_stage_name((enum rxp_stage)e->stage), e->delta);
		shown++;
	}
	if (len >= sizeof(d->verdict) || !isfinite(d->acct_a) || !isfinite(d->acct_b))
		return;
	/* an accounting, not a prediction; a lossy run's is its own received
	 * rate, so it is given as that */
	char sa[128], sb[128];
	diff_side(sa, sizeof(sa), la, d->acct_a, d->loss_a, d->rx_a);
	diff_side(sb, sizeof(sb), lb, d->acct_b, d->loss_b, d->rx_b);
	snprintf(d->verdict + len, sizeof(d->verdict) - len,
		 "; accounting (clock / busy cycles per packet): %s -> %s", sa, sb);
}

int rxa_diff_compute(const struct rxr_result *a, const struct rxr_result *b, const json_t *knobs_b,
		     const char *label_a, const char *label_b, struct rxa_diff *out)
{
	memset(out, 0, sizeof(*out));
	if (!a || !b || !a->nthreads || !b->nthreads)
		return -EINVAL;
	int rc = 0;
	double qa = rxa_run_queues(a, NULL), qb = rxa_run_queues(b, knobs_b);
	int bb = -1, ba = -1;
	out->acct_a = rxa_run_predict(a, NULL, qa, &ba);
	out->acct_b = rxa_run_predict(b, NULL, qb, &bb);
	out->loss_a = a->loss;
	out->loss_b = b->loss;
	out->rx_a = a->rx_mpps;
	out->rx_b = b->rx_mpps;
	/* threads of B, then threads only A has */
	for (size_t t = 0; t < b->nthreads && !rc; t++) {
		char l[24];
		rxa_thread_label(b, t, l, sizeof(l));
		rc = deltas_add(out, a, thread_find(a, l), b, (int)t, l);
	}
	for (size_t t = 0; t < a->nthreads && !rc; t++) {
		char l[24];
		rxa_thread_label(a, t, l, sizeof(l));
		if (thread_find(b, l) < 0)
			rc = deltas_add(out, a, (int)t, b, -1, l);
	}
	if (rc)
		goto fail;
	if (out->n)
		qsort(out->d, out->n, sizeof(out->d[0]), delta_cmp);

	/* the verdict's thread: B's bottleneck when A has it, else biggest change */
	int tb = -1, ta = -1;
	if (bb >= 0) {
		rxa_thread_label(b, (size_t)bb, out->thread, sizeof(out->thread));
		ta = thread_find(a, out->thread);
		tb = ta >= 0 ? bb : -1;
	}
	if (tb < 0) {
		double best = -1;
		for (size_t t = 0; t < b->nthreads; t++) {
			char l[24];
			rxa_thread_label(b, t, l, sizeof(l));
			int u = thread_find(a, l);
			if (u < 0 || !strcmp(b->threads[t].role, "nic"))
				continue;
			double ch = fabs(rxa_thread_busy_cpp(&b->threads[t]) - rxa_thread_busy_cpp(&a->threads[u]));
			if (ch > best) {
				best = ch;
				tb = (int)t;
				ta = u;
				snprintf(out->thread, sizeof(out->thread), "%s", l);
			}
		}
	}
	if (tb < 0) {
		snprintf(out->verdict, sizeof(out->verdict), "%s and %s share no measured thread", label_a,
			 label_b);
		return 0;
	}
	out->busy_a = rxa_thread_busy_cpp(&a->threads[ta]);
	out->busy_b = rxa_thread_busy_cpp(&b->threads[tb]);
	verdict_write(out, label_a, label_b);
	if (bb >= 0 && bb != tb) {
		/* B is bound by a thread A does not have (e.g. an app thread of
		 * its own vs an inline app): say so, or the ceiling reads wrong */
		char l[24];
		size_t len = strlen(out->verdict);
		rxa_thread_label(b, (size_t)bb, l, sizeof(l));
		if (len < sizeof(out->verdict))
			snprintf(out->verdict + len, sizeof(out->verdict) - len,
				 "; %s is bound by its %s thread (%.0f cycles/packet), which %s "
				 "does not have",
				 label_b, l, rxa_thread_busy_cpp(&b->threads[bb]), label_a);
	}

	/* what-ifs on the slower run: one stage of its thread at the faster
	 * run's cost */
	bool slow_a = isfinite(out->acct_a) && isfinite(out->acct_b) && out->acct_a < out->acct_b;
	const struct rxr_result *slow = slow_a ? a : b, *fast = slow_a ? b : a;
	int ts = slow_a ? ta : tb, tf = slow_a ? tb : ta;
	snprintf(out->whatif_thread, sizeof(out->whatif_thread), "%s", out->thread);
	if (slow_a && ba >= 0) {
		/* A's own bottleneck, where B has that thread too */
		char l[24];
		rxa_thread_label(a, (size_t)ba, l, sizeof(l));
		if (thread_find(b, l) >= 0) {
			ts = ba;
			tf = thread_find(b, l);
			snprintf(out->whatif_thread, sizeof(out->whatif_thread), "%s", l);
		}
	}
	double qs = slow_a ? qa : qb;
	snprintf(out->whatif_run, sizeof(out->whatif_run), "%s", slow_a ? label_a : label_b);
	snprintf(out->whatif_from, sizeof(out->whatif_from), "%s", slow_a ? label_b : label_a);
	double *cpp = calloc(slow->nthreads, sizeof(double));
	if (!cpp) {
		rc = -ENOMEM;
		goto fail;
	}
	for (int s = 0; s < RXP_ST_COUNT; s++) {
		if (rxp_stage_is_wait(s))
			continue;
		double vs = rxa_thread_stage_cpp(&slow->threads[ts], s);
		double vf = rxa_thread_stage_cpp(&fast->threads[tf], s);
		if (vs == vf)
			continue;
		for (size_t t = 0; t < slow->nthreads; t++)
			cpp[t] = rxa_thread_busy_cpp(&slow->threads[t]);
		cpp[ts] = fmax(cpp[ts] - vs + vf, 1e-9);
		struct rxa_whatif *nw = realloc(out->w, (out->nw + 1) * sizeof(*nw));
		if (!nw) {
			free(cpp);
			rc = -ENOMEM;
			goto fail;
		}
		out->w = nw;
		struct rxa_whatif *w = &out->w[out->nw++];
		snprintf(w->thread, sizeof(w->thread), "%s", out->whatif_thread);
		w->stage = s;
		w->cpp_now = vs;
		w->cpp_fast = vf;
		w->mpps = rxa_run_predict(slow, cpp, qs, NULL);
	}
	free(cpp);
	if (out->nw) /* qsort of NULL is undefined, even for 0 items */
		qsort(out->w, out->nw, sizeof(out->w[0]), whatif_cmp);
	return 0;
fail:
	rxa_diff_free(out);
	return rc;
}

int rxa_diff_table(const struct rxa_diff *d, const char *la, const char *lb, size_t max,
		   struct rxa_table **out)
{
	char ha[64], hb[64];
	snprintf(ha, sizeof(ha), "%s cycles/pkt", la);
	snprintf(hb, sizeof(hb), "%s cycles/pkt", lb);
	const char *head[] = {"thread", "stage", ha, hb, "delta"};
	struct rxa_table *t = NULL;
	rxa_table_open("Stage deltas (sorted by size)", 5, head, &t);
	for (size_t i = 0; t && i < d->n && (!max || i < max); i++) {
		const struct rxa_stage_delta *e = &d->d[i];
		if (rxa_table_row(t) || rxa_table_cell(t, "%s", e->thread) ||
		    rxa_table_cell(t, "%s", rxp_stage_name((enum rxp_stage)e->stage)) ||
		    rxa_table_cell(t, "%.1f", e->a) || rxa_table_cell(t, "%.1f", e->b) ||
		    rxa_table_cell(t, "%+.1f", e->delta)) {
			rxa_table_free(t);
			t = NULL;
		}
	}
	*out = t;
	return t ? 0 : -ENOMEM;
}

int rxa_whatif_table(const struct rxa_diff *d, struct rxa_table **out)
{
	char h[256], hn[96], hf[96];
	snprintf(h, sizeof(h),
		 "%s's accounting Mpps (clock / busy cycles per packet) if the stage cost what it "
		 "costs in %s",
		 d->whatif_run, d->whatif_from);
	snprintf(hn, sizeof(hn), "cycles/pkt in %s", d->whatif_run);
	snprintf(hf, sizeof(hf), "cycles/pkt in %s", d->whatif_from);
	const char *head[] = {"thread", "stage", hn, hf, h};
	struct rxa_table *t = NULL;
	rxa_table_open("What if", 5, head, &t);
	for (size_t i = 0; t && i < d->nw; i++) {
		const struct rxa_whatif *w = &d->w[i];
		char m[32];
		rxa_fmt_num(m, sizeof(m), w->mpps, 2);
		if (rxa_table_row(t) || rxa_table_cell(t, "%s", w->thread) ||
		    rxa_table_cell(t, "%s", rxp_stage_name((enum rxp_stage)w->stage)) ||
		    rxa_table_cell(t, "%.1f", w->cpp_now) || rxa_table_cell(t, "%.1f", w->cpp_fast) ||
		    rxa_table_cell(t, "%s", m)) {
			rxa_table_free(t);
			t = NULL;
		}
	}
	*out = t;
	return t ? 0 : -ENOMEM;
}

json_t *rxa_diff_json(const struct rxa_diff *d, const char *la, const char *lb)
{
	json_t *ds = json_array(), *ws = json_array();
	for (size_t i = 0; ds && i < d->n; i++)
		json_array_append_new(ds, json_pack("{s:s,s:s,s:f,s:f,s:f}", "thread", d->d[i].thread, "stage",
						    rxp_stage_name((enum rxp_stage)d->d[i].stage), "a",
						    d->d[i].a, "b", d->d[i].b, "delta", d->d[i].delta));
	for (size_t i = 0; ws && i < d->nw; i++)
		json_array_append_new(
		    ws, json_pack("{s:s,s:s,s:f,s:f,s:o}", "thread", d->w[i].thread, "stage",
				  rxp_stage_name((enum rxp_stage)d->w[i].stage), "cycles_now",
				  d->w[i].cpp_now, "cycles_fast", d->w[i].cpp_fast, "accounting_mpps",
				  rxr_json_real_or_null(d->w[i].mpps)));
	/* accounting_*: clock / busy cycles per packet of that run, never a
	 * prediction; of a lossy run it is the rate it received */
	return json_pack("{s:s,s:s,s:s,s:s,s:f,s:f,s:o,s:o,s:b,s:b,s:o,s:o,s:s,s:s}", "a", la,
			 "b", lb, "verdict", d->verdict, "thread", d->thread, "busy_a", d->busy_a,
			 "busy_b", d->busy_b, "accounting_a", rxr_json_real_or_null(d->acct_a),
			 "accounting_b", rxr_json_real_or_null(d->acct_b), "lossy_a",
			 d->loss_a > 0, "lossy_b", d->loss_b > 0, "stages", ds, "what_if", ws,
			 "what_if_run", d->whatif_run, "what_if_costs_from", d->whatif_from);
}
