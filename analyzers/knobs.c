/* SPDX-License-Identifier: MIT */
/*
 * Knob values of loaded points (see rxray/analyze.h): as text and as
 * numbers, which knobs vary across a set, groups of points that agree on
 * the shared knobs, point labels, and the pairing of points that agree
 * (rxray/pair.h) built on those groups. Every pass here is points x
 * knobs, never points^2: a sweep can hold 10,000 points.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rxray/analyze.h"
#include "rxray/pair.h"
#include "rxray/util.h"

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

struct sig {
	size_t i;
	char *s;
};

static int sig_cmp(const void *a, const void *b)
{
	const struct sig *x = a, *y = b;
	int c = strcmp(x->s, y->s);
	return c ? c : (x->i > y->i) - (x->i < y->i);
}

int rxa_set_group(const struct rxa_set *s, const char *const *skip, size_t nskip, size_t *group)
{
	json_t *count = json_object();
	struct sig *sg = calloc(s->n ? s->n : 1, sizeof(*sg));
	size_t nrun = 0, ns = 0;
	int rc = -ENOMEM;
	if (!count || !sg)
		goto out;
	for (size_t i = 0; i < s->n; i++) {
		group[i] = SIZE_MAX;
		if (!rxa_point_run(&s->pts[i]))
			continue;
		nrun++;
		const char *k;
		json_t *v;
		json_object_foreach(s->pts[i].knobs, k, v) {
			if (json_is_null(v))
				continue;
			json_int_t c = json_integer_value(json_object_get(count, k));
			if (json_object_set_new_nocheck(count, k, json_integer(c + 1)))
				goto out;
		}
	}
	for (size_t i = 0; i < s->n; i++) {
		if (!rxa_point_run(&s->pts[i]))
			continue;
		char *txt = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&txt, &len);
		if (!m)
			goto out;
		const char *k;
		json_t *v;
		/* the count object's order is the same for every point */
		json_object_foreach(count, k, v) {
			bool skipped = (size_t)json_integer_value(v) != nrun;
			for (size_t q = 0; q < nskip && !skipped; q++)
				skipped = !strcmp(k, skip[q]);
			if (skipped)
				continue;
			char x[256];
			fprintf(m, "%s=%s\x1f", k,
				rxa_result_knob_str(s->pts[i].knobs, k, x, sizeof(x)) ? x : "");
		}
		if (fclose(m) || !txt) {
			free(txt);
			goto out;
		}
		sg[ns++] = (struct sig){i, txt};
	}
	if (ns)
		qsort(sg, ns, sizeof(*sg), sig_cmp);
	for (size_t g = 0, id = 0; g < ns; id++) {
		size_t e = g;
		while (e < ns && !strcmp(sg[e].s, sg[g].s))
			group[sg[e++].i] = id;
		g = e;
	}
	rc = 0;
out:
	for (size_t i = 0; i < ns; i++)
		free(sg[i].s);
	free(sg);
	json_decref(count);
	return rc;
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

bool rxa_pair_agrees(const struct rxa_point *a, const struct rxa_point *b,
		     const char *const *skip, size_t nskip, char *rest, size_t n)
{
	size_t len = 0;
	const char *k;
	json_t *v;
	if (n)
		rest[0] = '\0';
	json_object_foreach(a->knobs, k, v) {
		bool skipped = false;
		for (size_t i = 0; i < nskip && !skipped; i++)
			skipped = !strcmp(skip[i], k);
		char x[256], y[256];
		if (skipped || !rxa_result_knob_str(a->knobs, k, x, sizeof(x)) ||
		    !rxa_result_knob_str(b->knobs, k, y, sizeof(y)))
			continue;
		if (strcmp(x, y))
			return false;
		if (len < n)
			len += (size_t)snprintf(rest + len, n - len, "%s%s=%s", len ? "," : "", k, x);
	}
	if (n)
		rxu_utf8_trim(rest); /* a long list is cut at a character */
	return true;
}

static int pair_cmp(const void *a, const void *b)
{
	const size_t *x = a, *y = b;
	return x[0] != y[0] ? (x[0] > y[0]) - (x[0] < y[0]) : (x[1] > y[1]) - (x[1] < y[1]);
}

int rxa_pair_candidates(const struct rxa_set *s, const char *const *skip, size_t nskip,
			const struct rxa_sel *sa, const struct rxa_sel *sb, unsigned flags,
			size_t **out, size_t *nout)
{
	size_t np = 0, cap = 0, *pairs = NULL, *start = NULL;
	size_t *group = calloc(s->n ? s->n : 1, sizeof(*group));
	size_t *ord = calloc(s->n ? s->n : 1, sizeof(*ord));
	int rc = -ENOMEM;
	*out = NULL;
	*nout = 0;
	if (!group || !ord || rxa_set_group(s, skip, nskip, group))
		goto out;
	size_t ngroups = 0, n = 0;
	for (size_t i = 0; i < s->n; i++) {
		if (group[i] != SIZE_MAX && (flags & RXA_PAIR_ANY))
			group[i] = 0;
		if (group[i] != SIZE_MAX && group[i] + 1 > ngroups)
			ngroups = group[i] + 1;
	}
	/* points by group (counting sort on the group number), index order within */
	start = calloc(ngroups + 2, sizeof(*start));
	if (!start)
		goto out;
	for (size_t i = 0; i < s->n; i++)
		if (group[i] != SIZE_MAX)
			start[group[i] + 1]++;
	for (size_t g = 1; g < ngroups + 2; g++)
		start[g] += start[g - 1];
	for (size_t i = 0; i < s->n; i++)
		if (group[i] != SIZE_MAX)
			ord[start[group[i]]++] = i, n++;
	/* start[g] now holds the end of group g; group g begins at start[g - 1] (0 for g 0) */
	for (size_t g = 0, b0 = 0; g < ngroups && b0 < n; b0 = start[g++]) {
		for (size_t x = b0; x < start[g]; x++) {
			if (sa && !rxa_sel_match(sa, s->pts[ord[x]].knobs))
				continue;
			for (size_t y = b0; y < start[g]; y++) {
				if (y == x || ((flags & RXA_PAIR_UNORDERED) && ord[y] < ord[x]) ||
				    (sb && !rxa_sel_match(sb, s->pts[ord[y]].knobs)))
					continue;
				if (np == cap) {
					size_t nc = cap ? cap * 2 : 64;
					size_t *nn = realloc(pairs, nc * 2 * sizeof(size_t));
					if (!nn)
						goto out;
					pairs = nn;
					cap = nc;
				}
				pairs[2 * np] = ord[x];
				pairs[2 * np + 1] = ord[y];
				np++;
			}
		}
	}
	if (np)
		qsort(pairs, np, 2 * sizeof(size_t), pair_cmp);
	*out = pairs;
	*nout = np;
	pairs = NULL;
	rc = 0;
out:
	free(start);
	free(group);
	free(ord);
	free(pairs);
	return rc;
}
