/* SPDX-License-Identifier: MIT */
/*
 * Loading results into points: sweep folders (results.jsonl + spec.yaml),
 * .jsonl files, single run results and folders of them. Trial lines of a
 * point that has no summary line (a sweep still running, or killed) are
 * turned into a "partial" point: NDR = best lossless trial, PDR = best
 * trial within 0.5% loss, top = the highest offered rate.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rxray/analyze.h"

#define PDR_LOSS_DEFAULT 0.005

struct loader {
	struct rxr_set *s;
	char *err;
	size_t errlen;
	/* trials of points without a summary line, by key */
	struct pending {
		char *key;
		struct rxr_result *ndr, *pdr, *top;
		json_t *top_doc;
		int trials;
		struct rxr_result **light; /* passing trials, for the cost model */
		size_t nlight;
	} *pend;
	size_t npend;
};

static void point_free(struct rxr_point *p)
{
	free(p->key);
	json_decref(p->knobs);
	free(p->reason);
	if (p->top_run != p->ndr_run)
		rxr_result_free(p->top_run);
	rxr_result_free(p->ndr_run);
	json_decref(p->top_doc);
	for (size_t i = 0; i < p->nlight; i++)
		rxr_result_free(p->light[i]);
	free(p->light);
}

void rxr_set_free(struct rxr_set *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		point_free(&s->pts[i]);
	free(s->pts);
	free(s->src);
	free(s->spec_text);
	free(s->spec_path);
	free(s);
}

static struct rxr_point *point_add(struct rxr_set *s)
{
	struct rxr_point *np = realloc(s->pts, (s->n + 1) * sizeof(*np));
	if (!np)
		return NULL;
	s->pts = np;
	struct rxr_point *p = &s->pts[s->n++];
	memset(p, 0, sizeof(*p));
	p->ndr_mpps = p->pdr_mpps = p->max_offered_mpps = p->nic_max_mpps = NAN;
	p->pdr_loss = PDR_LOSS_DEFAULT;
	return p;
}

const struct rxr_result *rxr_point_run(const struct rxr_point *p)
{
	return p->ndr_run ? p->ndr_run : p->top_run;
}

const char *rxr_knob_str(const json_t *knobs, const char *name, char *buf, size_t n)
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
	return buf;
}

double rxr_knob_num(const json_t *knobs, const char *name, double def)
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

/* Knobs of a standalone run: the config's scalar members. */
static json_t *knobs_from_config(const json_t *config)
{
	json_t *k = json_object();
	const char *name;
	json_t *v;
	json_object_foreach((json_t *)config, name, v)
		if (json_is_string(v) || json_is_number(v) || json_is_boolean(v))
			json_object_set(k, name, v);
	return k;
}

static char *key_from_knobs(const json_t *knobs)
{
	size_t cap = 256, len = 0;
	char *key = malloc(cap);
	if (!key)
		return NULL;
	key[0] = '\0';
	const char *name;
	json_t *v;
	json_object_foreach((json_t *)knobs, name, v) {
		char vb[256];
		if (!rxr_knob_str(knobs, name, vb, sizeof(vb)))
			continue;
		size_t need = strlen(name) + strlen(vb) + 3;
		if (len + need >= cap) {
			cap = (len + need) * 2;
			char *nk = realloc(key, cap);
			if (!nk) {
				free(key);
				return NULL;
			}
			key = nk;
		}
		len += (size_t)snprintf(key + len, cap - len, "%s%s=%s", len ? "," : "", name, vb);
	}
	return key;
}

static double num_or_nan(const json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* A run embedded in a summary line (ndr_run/top_run): null allowed. */
static int embedded_run(struct loader *L, json_t *doc, const char *field, const char *src, int line,
			struct rxr_result **out, json_t **raw)
{
	json_t *j = json_object_get(doc, field);
	*out = NULL;
	if (!j || json_is_null(j))
		return 0;
	char e2[RXR_ERR_LEN];
	*out = rxr_result_from_json(j, src, e2, sizeof(e2));
	if (!*out) {
		snprintf(L->err, L->errlen, "%s:%d: %s: %s", src, line, field, e2);
		return -EINVAL;
	}
	if (raw)
		*raw = json_incref(j);
	return 0;
}

static int line_point(struct loader *L, json_t *doc, const char *src, int line)
{
	json_t *key = json_object_get(doc, "key"), *knobs = json_object_get(doc, "knobs");
	json_t *status = json_object_get(doc, "status");
	if (!json_is_string(key) || !json_is_object(knobs) || !json_is_string(status)) {
		snprintf(L->err, L->errlen, "%s:%d: %s: missing or wrong type (point needs key, knobs, status)",
			 src, line, !json_is_string(key) ? "key" : !json_is_object(knobs) ? "knobs" : "status");
		return -EINVAL;
	}
	struct rxr_point *p = point_add(L->s);
	if (!p)
		return -ENOMEM;
	p->key = strdup(json_string_value(key));
	p->knobs = json_deep_copy(knobs);
	if (!p->key || !p->knobs)
		return -ENOMEM;
	snprintf(p->status, sizeof(p->status), "%s", json_string_value(status));
	json_t *reason = json_object_get(doc, "reason");
	if (json_is_string(reason) && json_string_length(reason))
		p->reason = strdup(json_string_value(reason));
	p->ndr_mpps = num_or_nan(doc, "ndr_mpps");
	p->pdr_mpps = num_or_nan(doc, "pdr_mpps");
	double pl = num_or_nan(doc, "pdr_loss");
	if (isfinite(pl))
		p->pdr_loss = pl;
	p->max_offered_mpps = num_or_nan(doc, "max_offered_mpps");
	p->nic_max_mpps = num_or_nan(doc, "nic_max_mpps");
	p->generator_limited = json_is_true(json_object_get(doc, "generator_limited"));
	json_t *tr = json_object_get(doc, "trials");
	p->trials = json_is_integer(tr) ? (int)json_integer_value(tr) : 0;
	int rc = embedded_run(L, doc, "ndr_run", src, line, &p->ndr_run, NULL);
	if (!rc)
		rc = embedded_run(L, doc, "top_run", src, line, &p->top_run, &p->top_doc);
	return rc;
}

static struct pending *pending_get(struct loader *L, const char *key)
{
	for (size_t i = 0; i < L->npend; i++)
		if (!strcmp(L->pend[i].key, key))
			return &L->pend[i];
	struct pending *np = realloc(L->pend, (L->npend + 1) * sizeof(*np));
	if (!np)
		return NULL;
	L->pend = np;
	struct pending *p = &L->pend[L->npend];
	memset(p, 0, sizeof(*p));
	p->key = strdup(key);
	if (!p->key)
		return NULL;
	L->npend++;
	return p;
}

/* Keep the better run in *slot (by rx rate or offered rate); frees the other. */
static void keep_best(struct rxr_result **slot, struct rxr_result *r, bool by_offered)
{
	double nv = by_offered ? r->offered_mpps : r->rx_mpps;
	double ov = *slot ? (by_offered ? (*slot)->offered_mpps : (*slot)->rx_mpps) : -1;
	if (nv > ov) {
		rxr_result_free(*slot);
		*slot = r;
	} else {
		rxr_result_free(r);
	}
}

static int line_trial(struct loader *L, json_t *doc, const char *src, int line, bool has_run)
{
	json_t *trial = json_object_get(doc, "trial");
	json_t *key = json_object_get(trial, "key");
	L->s->ntrials++;
	if (!json_is_string(key)) {
		snprintf(L->err, L->errlen, "%s:%d: trial.key: missing or not a string", src, line);
		return -EINVAL;
	}
	struct pending *p = pending_get(L, json_string_value(key));
	if (!p)
		return -ENOMEM;
	/* calibration trials (cost model) are never NDR/PDR evidence */
	const char *purpose = json_string_value(json_object_get(trial, "purpose"));
	bool calib = purpose && !strcmp(purpose, "calibration");
	if (!calib)
		p->trials++;
	if (!has_run)
		return 0;
	char e2[RXR_ERR_LEN];
	struct rxr_result *r = rxr_result_from_json(doc, src, e2, sizeof(e2));
	if (!r) {
		snprintf(L->err, L->errlen, "%s:%d: %s", src, line, e2);
		return -EINVAL;
	}
	if (r->loss <= 0) {
		struct rxr_result *lr = calib ? r : rxr_result_from_json(doc, src, e2, sizeof(e2));
		struct rxr_result **nl =
		    lr ? realloc(p->light, (p->nlight + 1) * sizeof(*nl)) : NULL;
		if (!nl) {
			if (lr != r)
				rxr_result_free(lr);
			rxr_result_free(r);
			return -ENOMEM;
		}
		p->light = nl;
		p->light[p->nlight++] = lr;
		if (calib)
			return 0;
	} else if (calib) {
		rxr_result_free(r);
		return 0;
	}
	struct rxr_result *r2 = NULL, *r3 = NULL;
	char e3[8];
	if (r->loss <= 0 && !(r2 = rxr_result_from_json(doc, src, e3, sizeof(e3))))
		goto nomem;
	if (r->loss <= PDR_LOSS_DEFAULT && !(r3 = rxr_result_from_json(doc, src, e3, sizeof(e3))))
		goto nomem;
	if (!p->top || r->offered_mpps > p->top->offered_mpps) {
		json_decref(p->top_doc);
		p->top_doc = json_incref(doc);
	}
	keep_best(&p->top, r, true);
	if (r2)
		keep_best(&p->ndr, r2, false);
	if (r3)
		keep_best(&p->pdr, r3, false);
	return 0;
nomem:
	rxr_result_free(r);
	rxr_result_free(r2);
	return -ENOMEM;
}

static int line_run(struct loader *L, json_t *doc, const char *src, int line)
{
	char e2[RXR_ERR_LEN];
	struct rxr_result *r = rxr_result_from_json(doc, src, e2, sizeof(e2));
	if (!r) {
		if (line > 0)
			snprintf(L->err, L->errlen, "%s:%d: %s", src, line, e2);
		else
			snprintf(L->err, L->errlen, "%s", e2);
		return -EINVAL;
	}
	struct rxr_point *p = point_add(L->s);
	if (!p) {
		rxr_result_free(r);
		return -ENOMEM;
	}
	p->ndr_run = p->top_run = NULL;
	p->top_run = r;
	p->top_doc = json_incref(doc);
	p->knobs = knobs_from_config(r->config);
	p->key = p->knobs ? key_from_knobs(p->knobs) : NULL;
	if (!p->key)
		return -ENOMEM;
	snprintf(p->status, sizeof(p->status), "run");
	p->trials = 1;
	if (r->loss <= 0) {
		p->ndr_run = r;
		p->ndr_mpps = r->rx_mpps;
	}
	if (r->loss <= p->pdr_loss)
		p->pdr_mpps = r->rx_mpps;
	p->max_offered_mpps = r->offered_mpps;
	return 0;
}

static int doc_dispatch(struct loader *L, json_t *doc, const char *src, int line, bool in_jsonl)
{
	json_t *schema = json_object_get(doc, "schema");
	const char *sc = json_string_value(schema);
	if (!json_is_object(doc) || !sc) {
		snprintf(L->err, L->errlen, "%s:%d: schema: missing (expected %s, %s or %s)", src, line,
			 RXR_RUN_SCHEMA, RXR_POINT_SCHEMA, RXR_TRIAL_SCHEMA);
		return -EINVAL;
	}
	if (!strcmp(sc, RXR_POINT_SCHEMA))
		return line_point(L, doc, src, line);
	if (!strcmp(sc, RXR_TRIAL_SCHEMA))
		return line_trial(L, doc, src, line, false);
	if (!strcmp(sc, RXR_RUN_SCHEMA)) {
		if (json_is_object(json_object_get(doc, "trial")))
			return line_trial(L, doc, src, line, true);
		return line_run(L, doc, src, in_jsonl ? line : 0);
	}
	snprintf(L->err, L->errlen, "%s:%d: schema: unknown '%s'", src, line, sc);
	return -EINVAL;
}

static int load_jsonl(struct loader *L, const char *path)
{
	FILE *in = fopen(path, "r");
	if (!in) {
		int e = errno;
		snprintf(L->err, L->errlen, "%s: %s", path, strerror(e));
		return -e;
	}
	char *buf = NULL;
	size_t cap = 0;
	ssize_t n;
	int line = 0, rc = 0;
	while (!rc && (n = getline(&buf, &cap, in)) >= 0) {
		line++;
		size_t len = (size_t)n;
		while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r' || buf[len - 1] == ' '))
			len--;
		if (!len)
			continue;
		json_error_t je;
		json_t *doc = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
		if (!doc && buf[n - 1] != '\n' && feof(in)) {
			L->s->truncated_line = line; /* killed mid-write: skip it */
			break;
		}
		if (!doc) {
			snprintf(L->err, L->errlen, "%s:%d: (json): %s", path, line, je.text);
			rc = -EINVAL;
			break;
		}
		rc = doc_dispatch(L, doc, path, line, true);
		json_decref(doc);
	}
	free(buf);
	fclose(in);
	if (rc == -ENOMEM)
		snprintf(L->err, L->errlen, "%s: out of memory", path);
	return rc;
}

static int load_json(struct loader *L, const char *path)
{
	json_error_t je;
	json_t *doc = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
	if (!doc) {
		if (je.line > 0)
			snprintf(L->err, L->errlen, "%s:%d: (json): %s", path, je.line, je.text);
		else
			snprintf(L->err, L->errlen, "%s: %s", path, je.text);
		return errno == ENOENT ? -ENOENT : -EINVAL;
	}
	int rc = doc_dispatch(L, doc, path, 1, false);
	json_decref(doc);
	return rc;
}

static bool ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && !strcmp(s + a - b, suf);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int load_dir(struct loader *L, const char *dir)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/results.jsonl", dir);
	struct stat st;
	if (!stat(path, &st)) {
		int rc = load_jsonl(L, path);
		if (rc)
			return rc;
		snprintf(path, sizeof(path), "%s/spec.yaml", dir);
		FILE *f = fopen(path, "r");
		if (f) {
			char *text = NULL;
			size_t len = 0;
			FILE *m = open_memstream(&text, &len);
			char b[4096];
			size_t k;
			while (m && (k = fread(b, 1, sizeof(b), f)) > 0)
				fwrite(b, 1, k, m);
			if (m)
				fclose(m);
			fclose(f);
			L->s->spec_text = text;
			L->s->spec_path = strdup(path);
		}
		return 0;
	}
	DIR *d = opendir(dir);
	if (!d) {
		int e = errno;
		snprintf(L->err, L->errlen, "%s: %s", dir, strerror(e));
		return -e;
	}
	char **names = NULL;
	size_t n = 0;
	int rc = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || (!ends_with(de->d_name, ".json") && !ends_with(de->d_name, ".jsonl")))
			continue;
		char **nn = realloc(names, (n + 1) * sizeof(*nn));
		if (!nn || !(nn[n] = strdup(de->d_name))) {
			names = nn ? nn : names;
			rc = -ENOMEM;
			break;
		}
		names = nn;
		n++;
	}
	closedir(d);
	if (!rc && n)
		qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; !rc && i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		rc = ends_with(names[i], ".jsonl") ? load_jsonl(L, path) : load_json(L, path);
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}

/* Knobs from a key "a=1,b=x" (trial-only points have no knobs object). */
static json_t *knobs_from_key(const char *key)
{
	json_t *k = json_object();
	char *dup = strdup(key);
	if (!k || !dup)
		goto out;
	char *save = NULL;
	for (char *t = strtok_r(dup, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(t, '=');
		if (!eq)
			continue;
		*eq = '\0';
		char *end;
		long long v = strtoll(eq + 1, &end, 10);
		json_object_set_new(k, t, *end || end == eq + 1 ? json_string(eq + 1) : json_integer(v));
	}
out:
	free(dup);
	return k;
}

/* Trials whose key has no summary line become partial points. */
static int pending_flush(struct loader *L)
{
	int rc = 0;
	for (size_t i = 0; i < L->npend; i++) {
		struct pending *q = &L->pend[i];
		struct rxr_point *have = NULL;
		for (size_t j = 0; j < L->s->n; j++)
			if (L->s->pts[j].key && !strcmp(L->s->pts[j].key, q->key))
				have = &L->s->pts[j];
		if (have) {
			if (!have->trials)
				have->trials = q->trials;
			if (!have->light) {
				have->light = q->light;
				have->nlight = q->nlight;
				q->light = NULL;
				q->nlight = 0;
			}
			continue;
		}
		if (!q->top)
			continue;
		struct rxr_point *p = point_add(L->s);
		if (!p) {
			rc = -ENOMEM;
			break;
		}
		p->key = q->key;
		q->key = NULL;
		p->knobs = knobs_from_key(p->key);
		snprintf(p->status, sizeof(p->status), "partial");
		p->reason = strdup("no summary line (sweep unfinished): figures from its trials");
		p->trials = q->trials;
		p->top_run = q->top;
		p->ndr_run = q->ndr;
		p->top_doc = q->top_doc;
		p->light = q->light;
		p->nlight = q->nlight;
		q->light = NULL;
		q->nlight = 0;
		q->top = q->ndr = NULL;
		q->top_doc = NULL;
		p->ndr_mpps = p->ndr_run ? p->ndr_run->rx_mpps : NAN;
		p->pdr_mpps = q->pdr ? q->pdr->rx_mpps : NAN;
		p->max_offered_mpps = p->top_run->offered_mpps;
	}
	return rc;
}

int rxr_set_load(const char *path, struct rxr_set **out, char *err, size_t errlen)
{
	struct loader L = {.err = err, .errlen = errlen};
	int rc;
	*out = NULL;
	L.s = calloc(1, sizeof(*L.s));
	if (!L.s || !(L.s->src = strdup(path))) {
		rc = -ENOMEM;
		goto fail;
	}
	struct stat st;
	if (stat(path, &st)) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto fail;
	}
	if (S_ISDIR(st.st_mode))
		rc = load_dir(&L, path);
	else if (ends_with(path, ".jsonl"))
		rc = load_jsonl(&L, path);
	else
		rc = load_json(&L, path);
	if (!rc)
		rc = pending_flush(&L);
	if (!rc && !L.s->n) {
		snprintf(err, errlen, "%s: no run results or sweep points found", path);
		rc = -EINVAL;
	}
	if (rc)
		goto fail;
	*out = L.s;
	L.s = NULL;
fail:
	if (rc == -ENOMEM)
		snprintf(err, errlen, "%s: out of memory", path);
	for (size_t i = 0; i < L.npend; i++) {
		free(L.pend[i].key);
		if (L.pend[i].top != L.pend[i].ndr)
			rxr_result_free(L.pend[i].top);
		rxr_result_free(L.pend[i].ndr);
		rxr_result_free(L.pend[i].pdr);
		json_decref(L.pend[i].top_doc);
		for (size_t j = 0; j < L.pend[i].nlight; j++)
			rxr_result_free(L.pend[i].light[j]);
		free(L.pend[i].light);
	}
	free(L.pend);
	rxr_set_free(L.s);
	return rc;
}

const char **rxr_set_varying(const struct rxr_set *s, size_t *n)
{
	size_t cap = 8;
	const char **v = calloc(cap + 1, sizeof(*v));
	*n = 0;
	if (!v)
		return NULL;
	for (size_t i = 0; i < s->n; i++) {
		const char *name;
		json_t *val;
		json_object_foreach(s->pts[i].knobs, name, val) {
			bool seen = false;
			for (size_t k = 0; k < *n; k++)
				seen |= !strcmp(v[k], name);
			if (seen)
				continue;
			char a[256], b[256];
			const char *first = rxr_knob_str(s->pts[0].knobs, name, a, sizeof(a));
			bool differs = false;
			for (size_t j = 0; j < s->n && !differs; j++) {
				const char *o = rxr_knob_str(s->pts[j].knobs, name, b, sizeof(b));
				differs = (!first != !o) || (first && o && strcmp(first, o));
			}
			if (!differs)
				continue;
			if (*n == cap) {
				const char **nv = realloc(v, (cap * 2 + 1) * sizeof(*nv));
				if (!nv) {
					free(v);
					return NULL;
				}
				v = nv;
				cap *= 2;
			}
			v[(*n)++] = name;
			v[*n] = NULL;
		}
	}
	return v;
}

void rxr_point_label(const struct rxr_point *p, const char *const *vary, size_t nvary, char *buf,
		     size_t n)
{
	size_t len = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < nvary && len < n; i++) {
		char vb[256];
		const char *v = rxr_knob_str(p->knobs, vary[i], vb, sizeof(vb));
		len += (size_t)snprintf(buf + len, n - len, "%s%s=%s", len ? " " : "", vary[i], v ? v : "-");
	}
	/* nothing varies (one point): name it by the knobs a reader looks for first */
	static const char *const main_knobs[] = {"engine", "mode", "frame", "queues"};
	for (size_t i = 0; !nvary && i < sizeof(main_knobs) / sizeof(main_knobs[0]) && len < n; i++) {
		char vb[256];
		const char *v = rxr_knob_str(p->knobs, main_knobs[i], vb, sizeof(vb));
		if (v)
			len += (size_t)snprintf(buf + len, n - len, "%s%s=%s", len ? " " : "", main_knobs[i], v);
	}
	if (!len)
		snprintf(buf, n, "%s", p->key ? p->key : "-");
}
