/* SPDX-License-Identifier: MIT */
/*
 * Accessors of a loaded point, its run and its threads (rxray/analyze.h):
 * the run that stands for a point, its NDR/PDR interval as text, its
 * knobs as text and as numbers, which knobs vary across a set, point and
 * thread labels, a run's queues and oversubscription, and a thread's
 * cycles per packet, by stage and busy.
 *
 * Every other analyzer reads points through these, so this file calls
 * no other file of analyzers/: the others call down into it, never
 * across one another for these reads.
 *
 * A stage's share of a thread is charged per packet of the thread (stage
 * cycles / thread packets), so a thread's stages add up to its busy
 * cycles/packet and the flame graph's widths read the same numbers.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rxray/analyze.h"
#include "rxray/util.h"

/* The run a point's figures come from: its NDR trial, else its highest trial. */
const struct rxr_result *rxa_point_run(const struct rxa_point *p)
{
	return p->ndr_run ? p->ndr_run : p->top_run;
}

void rxa_fmt_interval(char *buf, size_t n, const struct rxa_point *p, bool pdr)
{
	double lo = pdr ? p->pdr_mpps : p->ndr_mpps, hi = pdr ? p->pdr_upper_mpps : p->ndr_upper_mpps;
	if (!(lo > 0) && isfinite(hi) && p->has_interval)
		snprintf(buf, n, "< %.2f", hi); /* no rate passed; the lowest that failed */
	else if (!isfinite(lo))
		snprintf(buf, n, "-");
	else if (p->generator_limited || (p->has_interval && !isfinite(hi)))
		snprintf(buf, n, ">= %.2f", lo);
	else if (!p->has_interval)
		snprintf(buf, n, "%.2f", lo); /* a single run or an older sweep: no interval known */
	else
		snprintf(buf, n, "[%.2f, %.2f]", lo, hi);
}

const char *rxa_result_knob_str(const json_t *knobs, const char *name, char *buf, size_t n)
{
	json_t *v = json_object_get(knobs, name);
	if (!v || json_is_null(v))
		return NULL;
	if (json_is_string(v))
		snprintf(buf, n, "%s", json_string_value(v));
	else if (json_is_integer(v))
		snprintf(buf, n, "%lld", (long long)json_integer_value(v));
	else if (json_is_real(v)) {
		double d = json_real_value(v);
		if (d == floor(d) && fabs(d) < 1e15)
			snprintf(buf, n, "%.0f", d);
		else
			snprintf(buf, n, "%g", d);
	} else if (json_is_boolean(v))
		snprintf(buf, n, "%s", json_is_true(v) ? "true" : "false");
	else
		return NULL;
	rxu_utf8_trim(buf); /* a long value is cut at a character, never inside one */
	return buf;
}

double rxa_knob_num(const json_t *knobs, const char *name, double def)
{
	json_t *v = json_object_get(knobs, name);
	if (json_is_number(v))
		return json_number_value(v);
	if (json_is_string(v)) {
		char *end;
		double d = strtod(json_string_value(v), &end);
		if (end != json_string_value(v) && !*end)
			return d;
	}
	return def;
}

const char **rxa_set_varying(const struct rxa_set *s, size_t *n)
{
	size_t cap = 8;
	const char **v = calloc(cap + 1, sizeof(*v));
	/* every knob name is judged once (a set of the names seen), so the pass
	 * is points x knobs, not points^2 x knobs */
	json_t *seen = json_object();
	*n = 0;
	if (!v || !seen) {
		free(v);
		json_decref(seen);
		return NULL;
	}
	for (size_t i = 0; i < s->n; i++) {
		const char *name;
		json_t *val;
		json_object_foreach(s->pts[i].knobs, name, val) {
			if (json_object_get(seen, name))
				continue;
			if (json_object_set_new_nocheck(seen, name, json_true())) {
				free(v);
				json_decref(seen);
				return NULL;
			}
			char a[256], b[256];
			const char *first =
			    rxa_result_knob_str(s->pts[0].knobs, name, a, sizeof(a));
			bool differs = false;
			for (size_t j = 0; j < s->n && !differs; j++) {
				const char *o =
				    rxa_result_knob_str(s->pts[j].knobs, name, b, sizeof(b));
				differs = (!first != !o) || (first && o && strcmp(first, o));
			}
			if (!differs)
				continue;
			if (*n == cap) {
				const char **nv = realloc(v, (cap * 2 + 1) * sizeof(*nv));
				if (!nv) {
					free(v);
					json_decref(seen);
					return NULL;
				}
				v = nv;
				cap *= 2;
			}
			v[(*n)++] = name;
			v[*n] = NULL;
		}
	}
	json_decref(seen);
	return v;
}

void rxa_point_label(const struct rxa_point *p, const char *const *vary, size_t nvary, char *buf,
		     size_t n)
{
	size_t len = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < nvary && len < n; i++) {
		char vb[256];
		const char *v = rxa_result_knob_str(p->knobs, vary[i], vb, sizeof(vb));
		/* a knob this point's engine does not have (a verbs point in a
		 * sweep that varies the mempool cache) is left out, not "=-" */
		if (v)
			len += (size_t)snprintf(buf + len, n - len, "%s%s=%s", len ? " " : "",
						vary[i], v);
	}
	/* nothing varies (one point): name it by the knobs a reader looks for first */
	static const char *const main_knobs[] = {"engine", "mode", "frame", "queues"};
	for (size_t i = 0; !nvary && i < sizeof(main_knobs) / sizeof(main_knobs[0]) && len < n; i++) {
		char vb[256];
		const char *v = rxa_result_knob_str(p->knobs, main_knobs[i], vb, sizeof(vb));
		if (v)
			len += (size_t)snprintf(buf + len, n - len, "%s%s=%s", len ? " " : "", main_knobs[i], v);
	}
	if (!len)
		snprintf(buf, n, "%s", p->key ? p->key : "-");
	rxu_utf8_trim(buf);
}

double rxa_thread_stage_cpp(const struct rxr_thread_result *t, int s)
{
	if (s < 0 || s >= RXP_ST_COUNT || !t->packets || !(t->stage_mask & (1u << s)))
		return 0;
	return (double)t->st[s].cycles / (double)t->packets;
}

double rxa_thread_stage_median_cpp(const struct rxr_thread_result *t, int s)
{
	if (s < 0 || s >= RXP_ST_COUNT || !t->packets || !(t->stage_mask & (1u << s)))
		return 0;
	return (double)t->st[s].p50 * (double)t->st[s].count / (double)t->packets;
}

double rxa_thread_busy_cpp(const struct rxr_thread_result *t)
{
	if (!t->packets)
		return 0;
	if (t->busy_cycles)
		return (double)t->busy_cycles / (double)t->packets;
	double sum = 0;
	for (int s = 0; s < RXP_ST_COUNT; s++)
		if (s != RXP_ST_IDLE)
			sum += rxa_thread_stage_cpp(t, s);
	return sum;
}

void rxa_thread_label(const struct rxr_result *r, size_t t, char *buf, size_t n)
{
	const char *role = r->threads[t].role[0] ? r->threads[t].role : "thread";
	size_t same = 0, idx = 0;
	for (size_t u = 0; u < r->nthreads; u++) {
		if (strcmp(r->threads[u].role, r->threads[t].role))
			continue;
		if (u < t)
			idx++;
		same++;
	}
	if (same > 1)
		snprintf(buf, n, "%s#%zu", role, idx);
	else
		snprintf(buf, n, "%s", role);
	rxu_utf8_trim(buf);
}

double rxa_run_queues(const struct rxr_result *r, const json_t *knobs)
{
	double q = rxa_knob_num(knobs, "queues", NAN);
	if (!isfinite(q) && r)
		q = rxa_knob_num(r->config, "queues", NAN);
	return isfinite(q) && q >= 1 ? q : 1;
}

bool rxa_run_oversubscribed(const struct rxr_result *r)
{
	return r && json_is_true(json_object_get(r->extra, "oversubscribed"));
}
