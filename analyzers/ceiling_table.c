/* SPDX-License-Identifier: MIT */
/*
 * The ceiling's tables and JSON: the ceiling table (one row a point, with
 * its marks' reasons), the seed report's highest-trial table, the bound
 * classification table, and the rxray.ceiling/1 document. The generic
 * text table they fill is table.c's.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rxray/analyze.h"

/* 77660160 -> "77,660,160" */
static void fmt_count(char *buf, size_t n, uint64_t v)
{
	char tmp[32];
	int len = snprintf(tmp, sizeof(tmp), "%llu", (unsigned long long)v);
	size_t o = 0;
	for (int i = 0; i < len && o + 2 < n; i++) {
		if (i && (len - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = tmp[i];
	}
	buf[o] = '\0';
}

static void fmt_pct(char *buf, size_t n, double v)
{
	if (!isfinite(v))
		snprintf(buf, n, "-");
	else if (v > 0 && v < 0.001)
		snprintf(buf, n, "%.3f%%", 100 * v);
	else
		snprintf(buf, n, "%.1f%%", 100 * v);
}

void rxa_top_stages_phrase(const struct rxa_ceiling *c, char *buf, size_t n)
{
	size_t len = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < c->ntop && len < n; i++)
		len += (size_t)snprintf(buf + len, n - len, "%s%s %.0f (%.0f%%)", i ? ", " : "",
					rxp_stage_name((enum rxp_stage)c->top[i].stage), c->top[i].cpp,
					100 * c->top[i].share);
}

static void top_stages(char *buf, size_t n, const struct rxa_ceiling *c)
{
	rxa_top_stages_phrase(c, buf, n);
	if (!buf[0])
		snprintf(buf, n, "-");
}

int rxa_ceiling_table(const struct rxa_set *s, const struct rxa_ceiling *c, size_t n,
		      struct rxa_table **out)
{
	static const char *const head[] = {"point", "status", "NDR Mpps",
					   "model Mpps (light load)", "NDR/model", "PDR Mpps",
					   "NDR-trial accounting Mpps", "NDR/accounting", "bottleneck",
					   "cycles/pkt", "top stages (cycles/pkt, share)",
					   "highest trial: offered -> RX Mpps, loss",
					   "accounting at median laps Mpps", "notes"};
	size_t nvary = 0;
	const char **vary = rxa_set_varying(s, &nvary);
	struct rxa_table *t = NULL;
	if (vary)
		rxa_table_open("Ceiling", 14, head, &t);
	for (size_t i = 0; t && i < n; i++) {
		const struct rxa_ceiling *k = &c[i];
		char label[512], a[32], b[32], p[32], r[32], cp[32], st[256], top[128], o1[32], o2[32],
			l1[32];
		rxa_point_label(k->p, vary, nvary, label, sizeof(label));
		rxa_fmt_interval(a, sizeof(a), k->p, false);
		rxa_fmt_interval(b, sizeof(b), k->p, true);
		rxa_fmt_num(p, sizeof(p), k->predicted_mpps, 2);
		rxa_fmt_num(r, sizeof(r), k->ratio, 2);
		if (k->p->generator_limited && isfinite(k->ratio)) /* NDR is a lower bound */
			snprintf(r, sizeof(r), ">= %.2f", k->ratio);
		char mo[32], mr[32];
		rxa_fmt_num(mo, sizeof(mo), k->model_mpps, 2);
		rxa_fmt_num(mr, sizeof(mr), k->model_ratio, 2);
		if (k->p->generator_limited && isfinite(k->model_ratio))
			snprintf(mr, sizeof(mr), ">= %.2f", k->model_ratio);
		rxa_fmt_num(cp, sizeof(cp), k->cpp, 0);
		top_stages(st, sizeof(st), k);
		rxa_fmt_num(o1, sizeof(o1), k->top_offered_mpps, 2);
		rxa_fmt_num(o2, sizeof(o2), k->top_rx_mpps, 2);
		fmt_pct(l1, sizeof(l1), k->top_loss);
		snprintf(top, sizeof(top), "%s -> %s, %s", o1, o2, l1);
		char med[32];
		rxa_fmt_num(med, sizeof(med), k->median_mpps, 2);
		char notes[2048], status[512];
		size_t nl = 0;
		notes[0] = '\0';
		/* a marked point's status says so, never a bare "ok"; its notes
		 * give each mark's own reason */
		unsigned mk = rxa_point_marks(k->p);
		snprintf(status, sizeof(status), "%s", k->p->status);
		if (mk) {
			char words[384];
			rxa_marks_phrase(k->p, mk, false, words, sizeof(words));
			if (!strcmp(k->p->status, "ok") && (mk & RXA_MARKS_UNCLEAN))
				snprintf(status, sizeof(status), "%s", words);
			else
				snprintf(status, sizeof(status), "%s; %s", k->p->status, words);
			nl = rxa_marks_phrase(k->p, mk, true, notes, sizeof(notes) - 2);
			notes[nl++] = ';';
			notes[nl++] = ' ';
			notes[nl] = '\0';
		}
		if (k->p->generator_limited && nl < sizeof(notes))
			nl += (size_t)snprintf(notes + nl, sizeof(notes) - nl,
					       "generator-limited: NDR is a lower bound; ");
		if (k->p->reason && nl < sizeof(notes))
			nl += (size_t)snprintf(notes + nl, sizeof(notes) - nl, "%s; ", k->p->reason);
		if (k->tail_ratio > RXA_TAIL_RATIO && nl < sizeof(notes))
			nl += (size_t)snprintf(notes + nl, sizeof(notes) - nl,
					       "heavy tail: %s mean lap is %.0fx its median (preempted or stalled?); ",
					       rxp_stage_name((enum rxp_stage)k->tail_stage), k->tail_ratio);
		if (!strcmp(k->basis_name, "top") && nl < sizeof(notes))
			nl += (size_t)snprintf(notes + nl, sizeof(notes) - nl,
					       "no NDR: accounting of the highest-rate trial; ");
		if (nl >= 2 && nl < sizeof(notes))
			notes[nl - 2] = '\0';
		if (rxa_table_row(t) || rxa_table_cell(t, "%s", label) ||
		    rxa_table_cell(t, "%s", status) || rxa_table_cell(t, "%s", a) ||
		    rxa_table_cell(t, "%s", mo) || rxa_table_cell(t, "%s", mr) ||
		    rxa_table_cell(t, "%s", b) || rxa_table_cell(t, "%s", p) ||
		    rxa_table_cell(t, "%s", r) || rxa_table_cell(t, "%s", k->thread_label) ||
		    rxa_table_cell(t, "%s", cp) || rxa_table_cell(t, "%s", st) ||
		    rxa_table_cell(t, "%s", top) || rxa_table_cell(t, "%s", med) ||
		    rxa_table_cell(t, "%s", notes)) {
			rxa_table_free(t);
			t = NULL;
		}
	}
	free(vary);
	*out = t;
	return t ? 0 : -ENOMEM;
}

int rxa_seed_table(const struct rxa_set *s, const struct rxa_ceiling *c, size_t n,
		   struct rxa_table **out)
{
	static const char *const head[] = {"config", "frame", "TX offered", "RX received",
					   "TX Mpps", "RX Mpps", "loss", "marks"};
	struct rxa_family *f = NULL;
	size_t nf = 0;
	if (rxa_families_build(s, c, n, &f, &nf)) {
		*out = NULL;
		return -ENOMEM;
	}
	struct rxa_table *t = NULL;
	rxa_table_open("Highest-rate trial per point (the seed report's shape)", 8, head, &t);
	for (size_t j = 0; t && j < nf; j++) {
		for (size_t i = 0; t && i < f[j].n; i++) {
			const struct rxa_ceiling *k = &c[f[j].idx[i]];
			const struct rxr_result *r = k->p->top_run;
			if (!r)
				continue;
			char fr[32], off[40], rx[40], tx[32], rm[32], l[32], fb[32];
			const char *frame =
			    rxa_result_knob_str(k->p->knobs, "frame", fb, sizeof(fb));
			snprintf(fr, sizeof(fr), "%s B", frame ? frame : "?");
			fmt_count(off, sizeof(off), r->c.offered);
			fmt_count(rx, sizeof(rx), r->c.received);
			rxa_fmt_num(tx, sizeof(tx), r->offered_mpps, 2);
			rxa_fmt_num(rm, sizeof(rm), r->rx_mpps, 2);
			fmt_pct(l, sizeof(l), r->loss);
			/* the row's figures are that trial's: its own marks */
			char mk[512];
			rxa_marks_phrase(k->p, rxa_run_marks(r), false, mk, sizeof(mk));
			if (rxa_table_row(t) || rxa_table_cell(t, "%s", f[j].label) ||
			    rxa_table_cell(t, "%s", fr) || rxa_table_cell(t, "%s", off) ||
			    rxa_table_cell(t, "%s", rx) || rxa_table_cell(t, "%s", tx) ||
			    rxa_table_cell(t, "%s", rm) || rxa_table_cell(t, "%s", l) ||
			    rxa_table_cell(t, "%s", mk[0] ? mk : "-")) {
				rxa_table_free(t);
				t = NULL;
			}
		}
	}
	rxa_families_free(f, nf);
	*out = t;
	return t ? 0 : -ENOMEM;
}

static int bound_row(struct rxa_table *t, const struct rxa_family *f, const char *basis,
		     const struct rxa_fit *x, unsigned marks)
{
	/* the marks of the figures the fit took (clean points: an external generator at most) */
	char mk[256] = "";
	for (unsigned bit = 1; bit < (1u << RXA_MARK_COUNT); bit <<= 1)
		if (marks & bit)
			snprintf(mk + strlen(mk), sizeof(mk) - strlen(mk), "%s%s", mk[0] ? ", " : " [",
				 rxa_mark_word(bit));
	if (mk[0])
		snprintf(mk + strlen(mk), sizeof(mk) - strlen(mk), "]");
	return rxa_table_row(t) || rxa_table_cell(t, "%s%s", f->label, mk) ||
	       rxa_table_cell(t, "%s", basis) || rxa_table_cell(t, "%zu (%.0f-%.0f B)", x->n, x->xmin, x->xmax) ||
	       rxa_table_cell(t, "%.1f", x->a) || rxa_table_cell(t, "%.4f", x->b) ||
	       rxa_table_cell(t, "%.3f", x->r2) || rxa_table_cell(t, "%.2f", x->rms) ||
	       (isfinite(x->byte_share) ? rxa_table_cell(t, "%.0f%%", 100 * x->byte_share)
					: rxa_table_cell(t, "-")) ||
	       (x->declined ? rxa_table_cell(t, "not classified: %s", x->declined)
			    : rxa_table_cell(t, "%s", rxa_bound_name(x->bound)));
}

int rxa_bound_table(const struct rxa_family *f, size_t n, struct rxa_table **out)
{
	static const char *const head[] = {"config", "basis", "frames", "a (ns/pkt)", "b (ns/byte)",
					   "R^2", "residual rms (ns)", "byte share at max frame", "bound"};
	struct rxa_table *t = NULL;
	rxa_table_open("Bound classification: time/packet = a + b x frame bytes", 9, head, &t);
	for (size_t i = 0; t && i < n; i++) {
		int rc = 0;
		if (f[i].have_cost)
			rc = bound_row(t, &f[i], "receiver cost (1/NDR-trial accounting)", &f[i].cost,
				       f[i].cost_marks);
		if (!rc && f[i].have_rate)
			rc = bound_row(t, &f[i], "measured (1/NDR, generator-limited points left out)",
				       &f[i].rate, f[i].rate_marks);
		if (rc) {
			rxa_table_free(t);
			t = NULL;
		}
	}
	*out = t;
	return t ? 0 : -ENOMEM;
}

static json_t *fit_json(const struct rxa_fit *x)
{
	return json_pack(
	    "{s:I,s:o,s:o,s:o,s:o,s:o,s:f,s:f,s:o,s:s,s:b,s:o}", "n", (json_int_t)x->n, "a_ns",
	    rxr_json_real_or_null(x->a), "b_ns_per_byte", rxr_json_real_or_null(x->b), "r2",
	    rxr_json_real_or_null(x->r2), "rms_ns", rxr_json_real_or_null(x->rms), "rel_rms",
	    rxr_json_real_or_null(x->rel_rms), "frame_min", x->xmin, "frame_max", x->xmax,
	    "byte_share", rxr_json_real_or_null(x->byte_share), "bound", rxa_bound_name(x->bound),
	    "poor_fit", x->poor, "declined", x->declined ? json_string(x->declined) : json_null());
}

json_t *rxa_ceiling_json(const struct rxa_set *s, const struct rxa_ceiling *c, size_t n,
			 const struct rxa_family *f, size_t nf)
{
	json_t *pts = json_array(), *fams = json_array();
	for (size_t i = 0; pts && i < n; i++) {
		const struct rxa_ceiling *k = &c[i];
		json_t *st = json_array();
		for (size_t j = 0; st && j < k->ntop; j++)
			json_array_append_new(st, json_pack("{s:s,s:f,s:f}", "stage",
							    rxp_stage_name((enum rxp_stage)k->top[j].stage),
							    "cycles_per_packet", k->top[j].cpp, "share",
							    k->top[j].share));
		json_t *o = json_pack(
		    "{s:s,s:O,s:s,s:o,s:o,s:o,s:o,s:s,s:s,s:o,s:o,s:f,s:o,s:o,s:o,s:o,s:b,s:i}",
		    "key", k->p->key, "knobs", k->p->knobs, "status", k->p->status, "ndr_mpps",
		    rxr_json_real_or_null(k->p->ndr_mpps), "pdr_mpps",
		    rxr_json_real_or_null(k->p->pdr_mpps), "predicted_mpps",
		    rxr_json_real_or_null(k->predicted_mpps), "ratio",
		    rxr_json_real_or_null(k->ratio), "basis", k->basis_name, "bottleneck",
		    k->thread_label, "bottleneck_cycles_per_packet", rxr_json_real_or_null(k->cpp),
		    "clock_hz", rxr_json_real_or_null(k->hz), "queues", k->queues, "top_stages", st,
		    "top_offered_mpps", rxr_json_real_or_null(k->top_offered_mpps), "top_rx_mpps",
		    rxr_json_real_or_null(k->top_rx_mpps), "top_loss",
		    rxr_json_real_or_null(k->top_loss), "generator_limited",
		    k->p->generator_limited, "trials", k->p->trials);
		if (o) {
			json_object_set_new(o, "median_mpps",
					    rxr_json_real_or_null(k->median_mpps));
			/* predicted_mpps is the basis trial's accounting: named so, and
			 * under its own name (predicted_mpps kept for older readers) */
			json_object_set_new(o, "predicted_mpps_is",
					    json_string("accounting of the basis trial: clock_hz / "
							"its bottleneck's busy cycles per packet"));
			json_object_set_new(o, "accounting_mpps",
					    rxr_json_real_or_null(k->predicted_mpps));
			json_t *ms = json_array();
			unsigned mk = rxa_point_marks(k->p);
			for (unsigned bit = 1; ms && bit < (1u << RXA_MARK_COUNT); bit <<= 1) {
				char why[512];
				if (!(mk & bit))
					continue;
				rxa_mark_reason(k->p, bit, true, why, sizeof(why));
				json_array_append_new(ms, json_pack("{s:s,s:s}", "mark",
								    rxa_mark_word(bit), "reason",
								    why));
			}
			json_object_set_new(o, "marks", ms ? ms : json_null());
			json_object_set_new(o, "model_mpps", rxr_json_real_or_null(k->model_mpps));
			json_object_set_new(o, "model_ratio",
					    rxr_json_real_or_null(k->model_ratio));
			const char *why = NULL;
			if (k->p->has_interval) {
				json_object_set_new(o, "ndr_upper_mpps",
						    rxr_json_real_or_null(k->p->ndr_upper_mpps));
				json_object_set_new(o, "pdr_upper_mpps",
						    rxr_json_real_or_null(k->p->pdr_upper_mpps));
			}
			if (!rxa_point_clean(k->p, &why))
				json_object_set_new(o, "not_fitted", json_string(why));
			json_object_set_new(o, "tail_ratio", json_real(k->tail_ratio));
			if (k->tail_stage >= 0)
				json_object_set_new(o, "tail_stage",
						    json_string(rxp_stage_name((enum rxp_stage)k->tail_stage)));
		}
		if (o && k->p->reason)
			json_object_set_new(o, "reason", json_string(k->p->reason));
		/* a point that cannot be written fails the document: never dropped silently */
		if (!o || json_array_append_new(pts, o)) {
			json_decref(pts);
			json_decref(fams);
			return NULL;
		}
	}
	for (size_t i = 0; fams && i < nf; i++) {
		json_t *keys = json_array();
		for (size_t j = 0; keys && j < f[i].n; j++)
			json_array_append_new(keys, json_string(c[f[i].idx[j]].p->key));
		json_t *fo = json_pack("{s:s,s:o,s:o,s:o}", "config", f[i].label, "points", keys, "cost",
				       f[i].have_cost ? fit_json(&f[i].cost) : json_null(), "measured",
				       f[i].have_rate ? fit_json(&f[i].rate) : json_null());
		if (!fo || json_array_append_new(fams, fo)) {
			json_decref(pts);
			json_decref(fams);
			return NULL;
		}
	}
	return json_pack("{s:s,s:s,s:o,s:o}", "schema", "rxray.ceiling/1", "source", s->src, "points",
			 pts, "bounds", fams);
}
