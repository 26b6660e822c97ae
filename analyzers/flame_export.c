/* SPDX-License-Identifier: MIT */
/* Flame exporters: folded text and the speedscope file format. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "flame_priv.h"

struct dfs_ent {
	uint32_t node;
	uint32_t nk, k;
	uint32_t *kids;
};

/*
 * Depth-first walk in name order; visit(node, path, depth) is called for
 * every node with self weight, path[0..depth-1] = node ids root-side first.
 */
typedef int (*dfs_visit_fn)(const struct rxa_flame *f, const uint32_t *path, uint32_t depth,
			    void *ctx);

static int dfs_walk(const struct rxa_flame *f, dfs_visit_fn visit, void *ctx)
{
	size_t cap = (size_t)f->maxdepth + 2;
	struct dfs_ent *st = calloc(cap, sizeof(*st));
	uint32_t *path = calloc(cap, sizeof(uint32_t));
	int rc = 0;
	if (!st || !path) {
		rc = -ENOMEM;
		goto out;
	}
	size_t sp = 0;
	st[sp].node = 0;
	st[sp].kids = rxa_flame_children_sorted(f, 0, &st[sp].nk);
	if (st[sp].nk && !st[sp].kids) {
		rc = -ENOMEM;
		goto out;
	}
	sp++;
	while (sp && !rc) {
		struct dfs_ent *e = &st[sp - 1];
		if (e->k == e->nk) {
			free(e->kids);
			e->kids = NULL;
			sp--;
			continue;
		}
		uint32_t c = e->kids[e->k++];
		path[sp - 1] = c;
		if (f->nodes[c].self > 0)
			rc = visit(f, path, (uint32_t)sp, ctx);
		st[sp].node = c;
		st[sp].k = 0;
		st[sp].kids = rxa_flame_children_sorted(f, c, &st[sp].nk);
		if (st[sp].nk && !st[sp].kids)
			rc = -ENOMEM;
		sp++;
	}
out:
	if (st)
		for (size_t i = 0; i < cap; i++)
			free(st[i].kids);
	free(st);
	free(path);
	return rc;
}

static int folded_visit(const struct rxa_flame *f, const uint32_t *path, uint32_t depth, void *ctx)
{
	FILE *o = ctx;
	for (uint32_t i = 0; i < depth; i++) {
		if (i)
			fputc(';', o);
		uint32_t nm = f->nodes[path[i]].name;
		fwrite(flame_name(f, nm), 1, f->name_len[nm], o);
	}
	double w = f->nodes[path[depth - 1]].self;
	if (w == floor(w) && w < 1e15)
		fprintf(o, " %.0f\n", w);
	else
		fprintf(o, " %.10g\n", w);
	return ferror(o) ? -EIO : 0;
}

int rxa_flame_folded_write(const struct rxa_flame *f, FILE *out)
{
	if (!f)
		return -EINVAL;
	int rc = dfs_walk(f, folded_visit, out);
	if (!rc && (fflush(out) || ferror(out)))
		rc = -EIO;
	return rc;
}

/* A JSON string for possibly invalid UTF-8: bad bytes become '?'. */
static json_t *json_str_safe(const char *s, size_t len)
{
	json_t *j = json_stringn(s, len);
	if (j)
		return j;
	char *c = malloc(len + 1);
	if (!c)
		return NULL;
	for (size_t i = 0; i < len; i++)
		c[i] = (unsigned char)s[i] < 0x80 && s[i] ? s[i] : '?';
	j = json_stringn(c, len);
	free(c);
	return j;
}

struct ss_ctx {
	json_t *samples, *weights;
};

static int ss_visit(const struct rxa_flame *f, const uint32_t *path, uint32_t depth, void *ctx)
{
	struct ss_ctx *c = ctx;
	json_t *s = json_array();
	if (!s)
		return -ENOMEM;
	for (uint32_t i = 0; i < depth; i++)
		json_array_append_new(s, json_integer(f->nodes[path[i]].name));
	if (json_array_append_new(c->samples, s) ||
	    json_array_append_new(c->weights, json_real(f->nodes[path[depth - 1]].self)))
		return -ENOMEM;
	return 0;
}

int rxa_flame_speedscope_write(const struct rxa_flame *f, FILE *out, const char *name,
			       const char *unit)
{
	static const char *const units[] = {"none", "nanoseconds", "microseconds", "milliseconds",
					    "seconds", "bytes"};
	if (!f)
		return -EINVAL;
	if (!unit)
		unit = "none";
	bool ok = false;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		ok |= !strcmp(unit, units[i]);
	if (!ok)
		return -EINVAL;
	int rc = -ENOMEM;
	json_t *doc = json_object(), *frames = json_array(), *prof = json_object();
	struct ss_ctx c = {json_array(), json_array()};
	if (!doc || !frames || !prof || !c.samples || !c.weights)
		goto out;
	for (uint32_t i = 0; i < f->nnames; i++) {
		json_t *fr = json_object();
		if (!fr || json_array_append_new(frames, fr))
			goto out;
		json_object_set_new(fr, "name", json_str_safe(flame_name(f, i), f->name_len[i]));
	}
	rc = dfs_walk(f, ss_visit, &c);
	if (rc)
		goto out;
	json_object_set_new(doc, "$schema", json_string("https://www.speedscope.app/file-format-schema.json"));
	json_object_set_new(doc, "shared", json_pack("{s:O}", "frames", frames));
	json_object_set_new(prof, "type", json_string("sampled"));
	json_object_set_new(prof, "name", json_str_safe(name ? name : "rxray", strlen(name ? name : "rxray")));
	json_object_set_new(prof, "unit", json_string(unit));
	json_object_set_new(prof, "startValue", json_real(0));
	json_object_set_new(prof, "endValue", json_real(f->nodes[0].total));
	json_object_set(prof, "samples", c.samples);
	json_object_set(prof, "weights", c.weights);
	json_object_set_new(doc, "profiles", json_pack("[O]", prof));
	json_object_set_new(doc, "name", json_str_safe(name ? name : "rxray", strlen(name ? name : "rxray")));
	json_object_set_new(doc, "activeProfileIndex", json_integer(0));
	json_object_set_new(doc, "exporter", json_string("rxray"));
	rc = json_dumpf(doc, out, JSON_COMPACT) ? -EIO : 0;
	if (!rc && (fputc('\n', out) == EOF || fflush(out)))
		rc = -EIO;
out:
	json_decref(doc);
	json_decref(frames);
	json_decref(prof);
	json_decref(c.samples);
	json_decref(c.weights);
	return rc;
}
