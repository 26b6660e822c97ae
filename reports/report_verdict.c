/* SPDX-License-Identifier: MIT */
/*
 * The report's opening: the answer before the evidence. One verdict per
 * configuration (its ceiling as the search's NDR interval, the thread
 * that sets it and that thread's top stages, the bound, the GPU stage
 * where there is one) and one per comparison ("dpdk hds vs verbs hds:
 * +270 cycles/packet, buf_alloc +136, chain +42; ceiling >= 10.8 -> 5.1
 * Mpps"). A point that cannot be read as a ceiling says so in its own
 * line: oversubscribed (disturbed by construction), disturbed, unresolved.
 * Also the GPU evidence table. Every pass here is linear in the points
 * (the comparisons are the diffs report_parts.c already paired).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report_priv.h"
#include "rxray/util.h"

/* Verdict lines before "and N more" (a report of 10,000 points stays readable). */
#define RPT_MAX_VERDICTS 48
#define RPT_MAX_COMPARISONS 8

/* The thread of role in r, or -1. */
static int thread_of(const struct rxr_result *r, const char *role)
{
	for (size_t i = 0; r && i < r->nthreads; i++)
		if (!strcmp(r->threads[i].role, role))
			return (int)i;
	return -1;
}

bool rxo_rpt_has_gpu(const struct rxr_result *r)
{
	if (!r)
		return false;
	if (thread_of(r, "gpu") >= 0)
		return true;
	for (size_t i = 0; i < r->nthreads; i++)
		if (r->threads[i].stage_mask &
		    ((1u << RXP_ST_GPU_LAUNCH) | (1u << RXP_ST_GPU_WAIT) | (1u << RXP_ST_GPU_KERNEL)))
			return true;
	return false;
}

/* A CPU stage's cycles/packet summed over the non-gpu threads (the app's
 * gpu_launch and gpu_wait, wherever the engine runs them). */
static double cpu_stage_cpp(const struct rxr_result *r, int st)
{
	double v = 0;
	for (size_t i = 0; i < r->nthreads; i++)
		if (strcmp(r->threads[i].role, "gpu"))
			v += rxa_thread_stage_cpp(&r->threads[i], st);
	return v;
}

/* GPU figures of a point's basis run: 0, or -1 when it has no GPU stage. */
static int rpt_gpu_figures(const struct rxa_ceiling *c, struct rpt_gpu *g)
{
	memset(g, 0, sizeof(*g));
	g->kernel_cpp = g->kernel_ns = g->gpu_mpps = NAN;
	const struct rxr_result *r = c->basis;
	if (!rxo_rpt_has_gpu(r))
		return -1;
	int t = thread_of(r, "gpu");
	if (t >= 0) {
		g->kernel_cpp = rxa_thread_busy_cpp(&r->threads[t]);
		if (r->clock.hz > 0 && g->kernel_cpp > 0) {
			g->kernel_ns = g->kernel_cpp / r->clock.hz * 1e9;
			g->gpu_mpps = r->clock.hz / g->kernel_cpp * c->queues / 1e6;
		}
	}
	g->launch_cpp = cpu_stage_cpp(r, RXP_ST_GPU_LAUNCH);
	g->wait_cpp = cpu_stage_cpp(r, RXP_ST_GPU_WAIT);
	g->bound = c->thread >= 0 && !strcmp(r->threads[c->thread].role, "gpu");
	return 0;
}

/* "dpdk hds frame=1064": engine and mode bare, other varying knobs k=v. */
static void short_label(const struct rpt *R, const struct rxa_point *p, char *buf, size_t n)
{
	size_t len = 0;
	buf[0] = '\0';
	for (size_t k = 0; k < R->nvary && len < n; k++) {
		char b[128];
		const char *v = rxa_result_knob_str(p->knobs, R->vary[k], b, sizeof(b));
		if (!v)
			continue;
		bool bare = !strcmp(R->vary[k], "engine") || !strcmp(R->vary[k], "mode");
		len += (size_t)snprintf(buf + len, n - len, "%s%s%s%s", len ? " " : "", bare ? "" : R->vary[k],
					bare ? "" : "=", v);
	}
	if (!len)
		rxa_point_label(p, R->vary, R->nvary, buf, n);
	rxu_utf8_trim(buf);
}

/*
 * The marks a point's lines open with, NULL when it has none: each mark
 * with its own reason (rxa_marks_phrase). The wording is what a reader
 * must not miss: an oversubscribed run measured the scheduler too and is
 * never a ceiling; an unresolved search's ceiling lies in its interval.
 */
const char *rxo_rpt_mark(const struct rxa_point *p, char *buf, size_t n)
{
	unsigned m = rxa_point_marks(p);
	if (!m || n < 3)
		return NULL;
	buf[0] = '[';
	size_t o = 1 + rxa_marks_phrase(p, m, true, buf + 1, n - 2);
	buf[o] = ']';
	buf[o + 1] = '\0';
	return buf;
}

/* "light-load model predicts 63.79; NDR-trial accounting 32.56": the
 * prediction is the cost model's alone, the accounting named as one */
static void model_phrase(const struct rxa_ceiling *c, bool ndr, char *buf, size_t n)
{
	char mo[32], ac[32];
	rxa_fmt_num(mo, sizeof(mo), c->model_mpps, 2);
	rxa_fmt_num(ac, sizeof(ac), c->predicted_mpps, 2);
	const char *what = ndr ? "NDR-trial accounting" : "accounting of the highest-rate trial";
	if (isfinite(c->model_mpps))
		snprintf(buf, n, "light-load model predicts %s; %s %s", mo, what, ac);
	else
		snprintf(buf, n, "no light-load prediction; %s %s", what, ac);
}

/* "ceiling NDR [3.80, 3.95] Mpps" or what stands in for it. */
static void ceiling_phrase(const struct rxa_ceiling *c, bool clean, char *buf, size_t n)
{
	const struct rxa_point *p = c->p;
	char iv[64], mp[160];
	rxa_fmt_interval(iv, sizeof(iv), p, false);
	const char *what = clean ? "ceiling NDR" : "NDR (not a ceiling)";
	if (isfinite(p->ndr_mpps)) {
		model_phrase(c, true, mp, sizeof(mp));
		snprintf(buf, n, "%s %s Mpps (%s%s)", what, iv,
			 p->generator_limited ? "generator-limited: a lower bound; " : "", mp);
	} else if (isfinite(c->top_rx_mpps) && c->top_loss > 0) {
		/* a lossy run's accounting is the rate it received: no second figure */
		snprintf(buf, n, "no NDR search: one run received %.2f of %.2f Mpps offered (%.1f%% loss: "
			 "saturated, so that rate is all it measured)",
			 c->top_rx_mpps, c->top_offered_mpps, 100 * c->top_loss);
	} else if (isfinite(c->top_rx_mpps)) {
		model_phrase(c, false, mp, sizeof(mp));
		snprintf(buf, n, "no NDR search: one run received %.2f of %.2f Mpps offered (no loss; %s)",
			 c->top_rx_mpps, c->top_offered_mpps, mp);
	} else {
		model_phrase(c, false, mp, sizeof(mp));
		snprintf(buf, n, "no NDR (%s)", mp);
	}
}

static void bound_phrase(const struct rxa_family *f, char *buf, size_t n)
{
	buf[0] = '\0';
	if (!f || f->n < 2)
		return;
	if (f->have_cost && !f->cost.declined)
		snprintf(buf, n, "; %s bound across frames", rxa_bound_name(f->cost.bound));
	else
		snprintf(buf, n, "; bound not classified (%s)",
			 f->have_cost ? f->cost.declined : "fewer than 3 clean frame sizes");
}

static void verdict_point(struct rpt *R, struct doc *d, size_t i, const struct rxa_family *f)
{
	const struct rxa_ceiling *c = &R->c[i];
	const struct rxa_point *p = c->p;
	char label[256], mark[1536], ceil[384], st[256], bnd[160], gpu[256] = "";
	short_label(R, p, label, sizeof(label));
	if (c->thread < 0) {
		rxo_doc_li(d, "warn", "%s: %s%s%s", label, p->status, p->reason ? ": " : "",
		       p->reason ? p->reason : "");
		return;
	}
	const char *m = rxo_rpt_mark(p, mark, sizeof(mark));
	ceiling_phrase(c, rxa_point_clean(p, NULL), ceil, sizeof(ceil));
	rxa_top_stages_phrase(c, st, sizeof(st));
	bound_phrase(f, bnd, sizeof(bnd));
	struct rpt_gpu g;
	if (!rpt_gpu_figures(c, &g))
		snprintf(gpu, sizeof(gpu), "; GPU stage gpu_kernel %.0f ns/packet (GPU alone: %.2f Mpps), "
			 "gpu_launch %.0f and gpu_wait %.0f cycles/packet on the CPU",
			 g.kernel_ns, g.gpu_mpps, g.launch_cpp, g.wait_cpp);
	rxo_doc_li(d, m ? "warn" : NULL, "%s%s%s: %s%s; set by the %s thread, %.0f cycles/packet: %s%s%s", m ? m : "",
	       m ? " " : "", label, g.bound ? "GPU-bound: " : "", ceil, c->thread_label, c->cpp,
	       c->ntop ? st : "-", gpu, bnd);
}

/* "+270 cycles/packet on the rx thread, buf_alloc +136, chain +42" */
static void delta_phrase(const struct rxa_diff *df, char *buf, size_t n)
{
	size_t len = (size_t)snprintf(buf, n, "%+.0f cycles/packet on the %s thread", df->busy_b - df->busy_a,
				      df->thread);
	for (size_t i = 0, k = 0; i < df->n && k < 3 && len < n; i++) {
		const struct rxa_stage_delta *e = &df->d[i];
		if (strcmp(e->thread, df->thread) || !(fabs(e->delta) >= 1))
			continue;
		len += (size_t)snprintf(buf + len, n - len, ", %s %+.0f", rxp_stage_name((enum rxp_stage)e->stage),
					e->delta);
		k++;
	}
}

/* A point's marks as words, ", "-joined, into buf ("" when none). */
static void mark_words(const struct rxa_point *p, char *buf, size_t n)
{
	unsigned m = rxa_point_marks(p);
	size_t o = 0;
	buf[0] = '\0';
	for (unsigned bit = 1; bit < (1u << RXA_MARK_COUNT) && o < n; bit <<= 1)
		if (m & bit)
			o += (size_t)snprintf(buf + o, n - o, "%s%s", o ? ", " : "", rxa_mark_word(bit));
}

/* The measured ceiling of a comparison side: NDR lower end, ">=" when
 * capped, with the marks of its figures. */
static void side_ceiling(const struct rxa_ceiling *c, char *buf, size_t n)
{
	const struct rxa_point *p = c->p;
	char iv[64], w[128];
	mark_words(p, w, sizeof(w));
	rxa_fmt_interval(iv, sizeof(iv), p, false);
	/* a resolved interval reads as its lower end; the others as they are */
	if (p->has_interval && !p->unresolved && p->ndr_mpps > 0 && isfinite(p->ndr_upper_mpps) &&
	    !p->generator_limited)
		snprintf(iv, sizeof(iv), "%.2f", p->ndr_mpps);
	if (!isfinite(p->ndr_mpps) && !strcmp(iv, "-")) {
		if (c->top_loss > 0) /* a lossy run: what it received, nothing more */
			snprintf(iv, sizeof(iv), "received %.2f (lossy, no NDR)", c->top_rx_mpps);
		else
			snprintf(iv, sizeof(iv), "accounting %.2f (no NDR)", c->predicted_mpps);
	}
	snprintf(buf, n, "%s%s%s%s", iv, w[0] ? " (" : "", w, w[0] ? ")" : "");
}

/*
 * The NDR of p as [lo, hi] for ordering: lo 0 when no rate passed, hi
 * +inf where only a lower bound is known (generator-limited, or no upper
 * end). false without an NDR.
 */
static bool ndr_bounds(const struct rxa_point *p, double *lo, double *hi)
{
	double l = p->ndr_mpps, h = p->has_interval ? p->ndr_upper_mpps : p->ndr_mpps;
	if (!(l > 0) && p->has_interval && isfinite(h))
		l = 0; /* "< hi": nothing passed */
	else if (!isfinite(l))
		return false;
	if (p->generator_limited || !isfinite(h))
		h = INFINITY;
	*lo = l;
	*hi = h;
	return true;
}

/*
 * Which side is faster, said only when the NDR intervals separate;
 * otherwise that they overlap, or that both are lower bounds.
 */
static void order_phrase(const struct rxa_point *pa, const char *la, const struct rxa_point *pb,
			 const char *lb, char *buf, size_t n)
{
	double alo, ahi, blo, bhi;
	bool ha = ndr_bounds(pa, &alo, &ahi), hb = ndr_bounds(pb, &blo, &bhi);
	if (!ha || !hb)
		snprintf(buf, n, "no NDR for %s: neither is shown faster", !ha ? la : lb);
	else if (alo > bhi)
		snprintf(buf, n, "%s is faster: the NDR intervals separate", la);
	else if (blo > ahi)
		snprintf(buf, n, "%s is faster: the NDR intervals separate", lb);
	else if (isinf(ahi) && isinf(bhi))
		snprintf(buf, n, "both are lower bounds: neither is shown faster");
	else
		snprintf(buf, n, "the NDR intervals overlap: neither is shown faster");
}

/* "; marked: B: <reasons>; A: <reasons>" for the sides that carry marks. */
static void pair_marks(const struct rxa_point *pa, const char *la, const struct rxa_point *pb,
		       const char *lb, char *buf, size_t n)
{
	size_t o = 0;
	const struct rxa_point *ps[2] = {pb, pa};
	const char *ls[2] = {lb, la};
	buf[0] = '\0';
	for (int i = 0; i < 2 && o < n; i++) {
		unsigned m = rxa_point_marks(ps[i]);
		char ph[1024];
		if (!m)
			continue;
		rxa_marks_phrase(ps[i], m, true, ph, sizeof(ph));
		o += (size_t)snprintf(buf + o, n - o, "%s%s: %s", o ? " / " : "; marked: ", ls[i], ph);
	}
}

void rxo_rpt_section_verdicts(struct rpt *R, struct doc *d)
{
	rxo_doc_h(d, 2, "verdicts", "Verdicts");
	rxo_doc_p(d, "The answer first; the evidence follows. Per configuration: its ceiling as the NDR search's "
		 "interval [lower, upper] Mpps ('>=' where only a lower bound is known), the thread that sets "
		 "it and that thread's top stages (cycles/packet, share); 'predicted' is the light-load cost "
		 "model's alone, the NDR trial's own figure is named its accounting. Marked points "
		 "(oversubscribed, disturbed, unresolved, interrupted) are not read as ceilings and are left "
		 "out of every fit; every mark, an external generator's too, opens the point's line with its "
		 "reason.");
	size_t *fam = malloc((R->s->n ? R->s->n : 1) * sizeof(*fam));
	for (size_t j = 0; fam && j < R->nf; j++)
		for (size_t k = 0; k < R->f[j].n; k++)
			fam[R->f[j].idx[k]] = j;
	rxo_doc_h(d, 3, "verdict-configs", "Configurations");
	rxo_doc_ul_begin(d);
	size_t shown = 0;
	for (size_t i = 0; i < R->s->n && shown < RPT_MAX_VERDICTS; i++, shown++)
		verdict_point(R, d, i, fam && R->nf ? &R->f[fam[i]] : NULL);
	rxo_doc_ul_end(d);
	free(fam);
	if (R->s->n > shown)
		rxo_doc_p(d, "... and %zu more configurations: every point is in the ceiling table below.",
		      R->s->n - shown);
	rxo_doc_h(d, 3, "verdict-comparisons", "Comparisons");
	if (!R->ndiffs) {
		rxo_doc_p(d, "No two measured points differ in mode or engine alone.");
		return;
	}
	rxo_doc_p(d, "B vs A (A the one with the higher NDR lower end): what B adds per packet on the thread that "
		 "changed most, its biggest stage deltas, the measured ceiling A -> B (NDR lower ends, Mpps), "
		 "and which is faster, said only where the NDR intervals separate (else that they overlap, "
		 "or that both are lower bounds). A side's marks follow, each with its reason.");
	rxo_doc_ul_begin(d);
	/* clean pairs first (biggest change first within each axis), marked ones after */
	size_t shown_cmp = 0;
	for (size_t k = 0; k < 2 * R->ndiffs && shown_cmp < RPT_MAX_COMPARISONS; k++) {
		const struct rpt_diff *e = &R->diffs[k % R->ndiffs];
		const struct rxa_point *pa = &R->s->pts[e->ia], *pb = &R->s->pts[e->ib];
		bool marked = !rxa_point_clean(pa, NULL) || !rxa_point_clean(pb, NULL);
		if (marked != (k >= R->ndiffs))
			continue;
		shown_cmp++;
		char la[256], lb[256], dl[384], ca[192], cb[192], ord[640], mk[2200];
		short_label(R, pa, la, sizeof(la));
		short_label(R, pb, lb, sizeof(lb));
		delta_phrase(&e->d, dl, sizeof(dl));
		side_ceiling(&R->c[e->ia], ca, sizeof(ca));
		side_ceiling(&R->c[e->ib], cb, sizeof(cb));
		order_phrase(pa, la, pb, lb, ord, sizeof(ord));
		pair_marks(pa, la, pb, lb, mk, sizeof(mk));
		rxo_doc_li(d, marked || mk[0] ? "warn" : NULL, "%s vs %s: %s; ceiling %s -> %s Mpps; %s%s", lb, la,
		       dl, ca, cb, ord, mk);
	}
	rxo_doc_ul_end(d);
	if (R->ndiffs > shown_cmp)
		rxo_doc_p(d, "... and %zu more comparisons under 'Biggest differences'.", R->ndiffs - shown_cmp);
}

void rxo_rpt_section_gpu(struct rpt *R, struct doc *d)
{
	size_t n = 0;
	for (size_t i = 0; i < R->s->n; i++)
		n += rxo_rpt_has_gpu(R->c[i].basis);
	if (!n)
		return; /* no GPU in this set: no section */
	rxo_doc_h(d, 2, "gpu", "GPU stage");
	rxo_doc_p(d, "Points with a GPU consumer: gpu_kernel is the GPU's time per packet (thread role 'gpu', from "
		 "CUDA events), gpu_launch and gpu_wait the CPU's cost of preparing a batch and waiting for it. "
		 "'GPU alone' is the ceiling the GPU stage allows by itself; GPU-bound when the gpu thread is "
		 "the bottleneck.");
	static const char *const head[] = {"point", "gpu_kernel ns/pkt", "gpu_kernel cycles/pkt",
					   "GPU alone Mpps", "gpu_launch cycles/pkt", "gpu_wait cycles/pkt",
					   "bottleneck", "verdict"};
	struct rxa_table *t = NULL;
	(void)rxa_table_open("GPU stage", 8, head, &t);
	for (size_t i = 0; t && i < R->s->n; i++) {
		struct rpt_gpu g;
		if (rpt_gpu_figures(&R->c[i], &g))
			continue;
		char label[1800], ns[32], cy[32], mp[32], mk[1536];
		short_label(R, R->c[i].p, label, sizeof(label));
		/* the row's figures carry the point's marks */
		if (rxo_rpt_mark(R->c[i].p, mk, sizeof(mk)))
			snprintf(label + strlen(label), sizeof(label) - strlen(label), " %s", mk);
		rxa_fmt_num(ns, sizeof(ns), g.kernel_ns, 1);
		rxa_fmt_num(cy, sizeof(cy), g.kernel_cpp, 0);
		rxa_fmt_num(mp, sizeof(mp), g.gpu_mpps, 2);
		if (rxa_table_row(t) || rxa_table_cell(t, "%s", label) || rxa_table_cell(t, "%s", ns) ||
		    rxa_table_cell(t, "%s", cy) || rxa_table_cell(t, "%s", mp) ||
		    rxa_table_cell(t, "%.0f", g.launch_cpp) || rxa_table_cell(t, "%.0f", g.wait_cpp) ||
		    rxa_table_cell(t, "%s", R->c[i].thread_label) ||
		    rxa_table_cell(t, "%s", g.bound ? "GPU-bound" : "CPU-bound")) {
			rxa_table_free(t);
			t = NULL;
		}
	}
	if (t)
		rxo_doc_table(d, t);
	rxa_table_free(t);
}
