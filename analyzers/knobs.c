/* SPDX-License-Identifier: MIT */
/*
 * Groups of loaded points that agree on the shared knobs (see
 * rxray/analyze.h), and the pairing of points that agree (rxray/pair.h)
 * built on those groups; a knob's value as text, the varying knobs and
 * point labels are point.c's. Every pass here is points x knobs, never
 * points^2: a sweep can hold 10,000 points.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rxray/analyze.h"
#include "rxray/pair.h"
#include "rxray/util.h"

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
