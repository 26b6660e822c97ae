/* SPDX-License-Identifier: MIT */
/*
 * Loading results into points: sweep folders (results.jsonl + spec.yaml),
 * .jsonl files, single run results and folders of them. Trial lines of a
 * point that has no summary line (a sweep still running, or killed) are
 * turned into a "partial" point: NDR = best lossless trial, PDR = best
 * trial within 0.5% loss, top = the highest offered rate.
 *
 * Scale (a sweep of 10,000 points and 100,000 trials loads in seconds):
 * points and pending trials are found by key through hash tables, and a
 * trial line is read in full only when its point has no summary line;
 * otherwise only its "trial" object is parsed and checked (the summary's
 * embedded runs carry the figures). Run documents (the summary's runs,
 * the light trials replayed for the cost model) are read by the fast
 * path of rxray/result.h straight into results; a line it gives up on
 * takes the checked path (jansson), which names what is wrong. Inputs
 * are checked (rxray/input.h) and every figure read is range-checked,
 * naming file, line and field.
 *
 * One meaning however a file is written (issue 43): a trial line that is
 * not in the store's compact shape is parsed in full, and then deferred
 * like a skimmed one, so the same rules (trial_replay) pick what it
 * gives; knobs take no order from a JSON object (knobs_ordered); two
 * summaries of one point are refused.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rxray/analyze.h"
#include "rxray/input.h"
#include "rxray/util.h"

#define PDR_LOSS_DEFAULT 0.005

struct loader {
	struct rxa_set *s;
	size_t cap;      /* room in s->pts: grown by doubling */
	char *err;
	size_t errlen;
	/*
	 * key -> index + 1 of the points (pkeys) and the pending trials
	 * (pidx), as JSON integers in jansson's hash table: a 10,000-point
	 * sweep with 100,000 trials must not search its points per line.
	 */
	json_t *pkeys, *pidx;
	json_t *psum; /* key -> [file, line] of its summary line: one a point */
	/* trials of points without a summary line, by key */
	struct pending {
		char *key;
		struct rxr_result *ndr, *pdr, *top;
		json_t *top_doc;
		int trials;
		/* trial lines not parsed yet: where to find them if this key
		 * turns out to have no summary line */
		struct tline {
			uint32_t file; /* index in files */
			int line;
			uint64_t off;
			size_t len;
			double target; /* trial.target_pps */
			bool calib;    /* trial.purpose "calibration" */
		} *tl;
		size_t ntl, captl;
		struct rxr_result **light; /* passing trials, for the cost model */
		size_t nlight;
		/* the lossy trials least above the NDR, by the rate asked for;
		 * above_least: above[0] is the least asked */
		struct rxr_result *above[RXA_POINT_ABOVE_MAX];
		size_t nabove;
		bool above_least;
	} *pend;
	size_t npend;
	char **files; /* the JSONL files read (owned), for deferred trial lines */
	size_t nfiles;
	FILE *rf;         /* the file deferred lines are read from (rf_file), or NULL */
	uint32_t rf_file;
	char *rbuf;       /* their line buffer (rcap bytes) */
	size_t rcap;
};

static void point_free(struct rxa_point *p)
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
	for (size_t i = 0; i < p->nabove; i++)
		rxr_result_free(p->above_runs[i]);
}

void rxa_set_free(struct rxa_set *s)
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

static struct rxa_point *point_add(struct loader *L)
{
	struct rxa_set *s = L->s;
	if (s->n == L->cap) {
		size_t ncap = L->cap ? L->cap * 2 : 16;
		struct rxa_point *np = realloc(s->pts, ncap * sizeof(*np));
		if (!np)
			return NULL;
		s->pts = np;
		L->cap = ncap;
	}
	struct rxa_point *p = &s->pts[s->n++];
	memset(p, 0, sizeof(*p));
	p->ndr_mpps = p->pdr_mpps = p->max_offered_mpps = p->nic_max_mpps = NAN;
	p->ndr_upper_mpps = p->pdr_upper_mpps = NAN;
	p->pdr_loss = PDR_LOSS_DEFAULT;
	return p;
}

/*
 * Knob order is meaning (labels, the varying columns, a diff's heading
 * and the reproduce commands follow it); a JSON object's member order is
 * not (jq, Python and a reversed writer keep the same object). So knobs
 * are ordered by what survives any re-writing: a sweep point's by where
 * each sits in its key (a string: the spec's axis order), a run's by
 * main_knobs, then the rest by name; a knob the key does not name comes
 * after those it names, by name.
 */
static const char *const main_knobs[] = {"engine", "mode", "frame", "queues"};

struct knob_at {
	const char *name;
	size_t rank;
};

static int knob_at_cmp(const void *a, const void *b)
{
	const struct knob_at *x = a, *y = b;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Where "name=" starts a term of key ("a=1,b=x"), SIZE_MAX when none does. */
static size_t key_rank(const char *key, const char *name)
{
	size_t n = strlen(name);
	for (const char *t = key; t; t = strchr(t, ',')) {
		if (*t == ',')
			t++;
		if (!strncmp(t, name, n) && t[n] == '=')
			return (size_t)(t - key);
	}
	return SIZE_MAX;
}

static size_t main_rank(const char *name)
{
	for (size_t i = 0; i < sizeof(main_knobs) / sizeof(main_knobs[0]); i++)
		if (!strcmp(name, main_knobs[i]))
			return i;
	return SIZE_MAX;
}

/*
 * The members of src that are knobs (scalars only, with scalars_only)
 * in knob order (key: a point's key, NULL for a run), a new object;
 * NULL on ENOMEM.
 */
static json_t *knobs_ordered(const json_t *src, const char *key, bool scalars_only)
{
	size_t n = 0, cap = json_object_size(src);
	struct knob_at *at = malloc((cap ? cap : 1) * sizeof(*at));
	json_t *k = json_object();
	if (!at || !k)
		goto fail;
	const char *name;
	json_t *v;
	json_object_foreach((json_t *)src, name, v)
		if (!scalars_only || json_is_string(v) || json_is_number(v) || json_is_boolean(v))
			at[n++] = (struct knob_at){name, key ? key_rank(key, name) : main_rank(name)};
	qsort(at, n, sizeof(*at), knob_at_cmp);
	for (size_t i = 0; i < n; i++) {
		json_t *c = json_deep_copy(json_object_get(src, at[i].name));
		if (!c || json_object_set_new(k, at[i].name, c))
			goto fail;
	}
	free(at);
	return k;
fail:
	free(at);
	json_decref(k);
	return NULL;
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
		/* the whole value: a key cut short could name two points alike */
		char nb[64];
		const char *vb = json_is_string(v)
				     ? json_string_value(v)
				     : rxa_result_knob_str(knobs, name, nb, sizeof(nb));
		if (!vb)
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

/* A run reader's error ("<src>: <field>: <what>") without its "<src>: ",
 * for a line that names the file and line itself. */
static const char *run_err(const char *e, const char *src)
{
	size_t n = strlen(src);
	return !strncmp(e, src, n) && e[n] == ':' && e[n + 1] == ' ' ? e + n + 2 : e;
}

/*
 * A run embedded in a summary line (ndr_run/top_run): null allowed.
 * *pre: the run already read by the fast path (rxr_json_scan_runs),
 * taken over (set NULL); pre NULL: read it from doc.
 */
static int embedded_run(struct loader *L, json_t *doc, const char *field, const char *src, int line,
			struct rxr_result **out, json_t **raw, struct rxr_result **pre)
{
	if (pre) {
		*out = *pre;
		*pre = NULL;
		return 0;
	}
	json_t *j = json_object_get(doc, field);
	*out = NULL;
	if (!j || json_is_null(j))
		return 0;
	char e2[RXA_ERR_LEN];
	rxr_result_from_json(j, src, out, e2, sizeof(e2));
	if (!*out) {
		snprintf(L->err, L->errlen, "%s:%d: %s: %s", src, line, field, run_err(e2, src));
		return -EINVAL;
	}
	if (raw)
		*raw = json_incref(j);
	return 0;
}

/*
 * A rate or ratio field of a summary line: absent or null -> NAN; else a
 * number in [lo, hi]. 0 or -EINVAL with "src:line: field: why".
 */
static int num_field(struct loader *L, const json_t *o, const char *k, double lo, double hi,
		     const char *src, int line, double *out)
{
	json_t *v = json_object_get(o, k);
	*out = NAN;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_number(v))
		return rxu_errf(L->err, L->errlen, -EINVAL, "%s:%d: %s: expected a number", src, line, k);
	double d = json_number_value(v);
	if (!(d >= lo && d <= hi))
		return rxu_errf(L->err, L->errlen, -EINVAL, "%s:%d: %s: %g is out of range [%g, %g]", src,
				line, k, d, lo, hi);
	*out = d;
	return 0;
}

static const char *const point_statuses[] = {"ok", "infeasible", "failed"};
static const char *const trial_statuses[] = {"ok", "timeout", "crashed", "failed"};

static bool known(const char *s, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(s, list[i]))
			return true;
	return false;
}

/* The figures of a summary line, range-checked, into p. */
static int point_figures(struct loader *L, json_t *doc, const char *src, int line,
			 struct rxa_point *p)
{
	double pl, nl;
	int rc;
	if ((rc = num_field(L, doc, "ndr_mpps", 0, 1e6, src, line, &p->ndr_mpps)) ||
	    (rc = num_field(L, doc, "pdr_mpps", 0, 1e6, src, line, &p->pdr_mpps)) ||
	    (rc = num_field(L, doc, "max_offered_mpps", 0, 1e6, src, line, &p->max_offered_mpps)) ||
	    (rc = num_field(L, doc, "nic_max_mpps", 0, 1e6, src, line, &p->nic_max_mpps)) ||
	    (rc = num_field(L, doc, "pdr_loss", 0, 1, src, line, &pl)) ||
	    (rc = num_field(L, doc, "ndr_loss", 0, 1, src, line, &nl)))
		return rc;
	if (isfinite(pl))
		p->pdr_loss = pl;
	/* the search's intervals (sweep.h), when this summary has them */
	if ((rc = num_field(L, doc, "ndr_upper_mpps", 0, 1e6, src, line, &p->ndr_upper_mpps)) ||
	    (rc = num_field(L, doc, "pdr_upper_mpps", 0, 1e6, src, line, &p->pdr_upper_mpps)))
		return rc;
	p->has_interval = json_object_get(doc, "ndr_upper_mpps") != NULL;
	p->unresolved = !strcmp(p->status, "ok") && json_is_false(json_object_get(doc, "resolved"));
	p->disturbed = json_is_true(json_object_get(doc, "disturbed"));
	p->oversubscribed = json_is_true(json_object_get(doc, "oversubscribed"));
	/* NDR is the best rate at the stricter loss: above PDR it is not an NDR */
	if (isfinite(p->ndr_mpps) && isfinite(p->pdr_mpps) &&
	    p->ndr_mpps > p->pdr_mpps * (1 + 1e-9) + 1e-12)
		return rxu_errf(L->err, L->errlen, -EINVAL,
				"%s:%d: ndr_mpps: %g is above pdr_mpps %g (NDR <= PDR)", src, line,
				p->ndr_mpps, p->pdr_mpps);
	json_t *tr = json_object_get(doc, "trials");
	if (tr && !json_is_null(tr) &&
	    (!json_is_integer(tr) || json_integer_value(tr) < 0 || json_integer_value(tr) > INT_MAX))
		return rxu_errf(L->err, L->errlen, -EINVAL,
				"%s:%d: trials: expected a count in 0..%d", src, line, INT_MAX);
	p->trials = json_is_integer(tr) ? (int)json_integer_value(tr) : 0;
	return 0;
}

/* Remember key -> index + 1 in map; -ENOMEM. */
static int map_put(json_t *map, const char *key, size_t idx)
{
	return json_object_set_new_nocheck(map, key, json_integer((json_int_t)idx + 1)) ? -ENOMEM : 0;
}

/* index + 1 for key in map, 0 when absent */
static size_t map_get(const json_t *map, const char *key)
{
	return (size_t)json_integer_value(json_object_get(map, key));
}

/*
 * "src:line: why" for text that jansson refused: a key given twice is
 * named by its path (rxr_json_dup_find), anything else in jansson's words.
 */
static int json_refused(struct loader *L, const char *src, int line, const char *text,
			size_t len, const json_error_t *je)
{
	char field[160];
	if (json_error_code(je) == json_error_duplicate_key &&
	    rxr_json_dup_find(text, len, field, sizeof(field)) == 1)
		return rxu_errf(L->err, L->errlen, -EINVAL, "%s:%d: %s: key given twice", src, line,
				field);
	return rxu_errf(L->err, L->errlen, -EINVAL, "%s:%d: (json): %s", src, line, je->text);
}

/* A summary line; pre: its ndr_run and top_run read by the fast path, or NULL. */
static int line_point(struct loader *L, json_t *doc, const char *src, int line,
		      struct rxr_result **pre)
{
	json_t *key = json_object_get(doc, "key"), *knobs = json_object_get(doc, "knobs");
	json_t *status = json_object_get(doc, "status");
	if (!json_is_string(key) || !json_is_object(knobs) || !json_is_string(status)) {
		snprintf(L->err, L->errlen, "%s:%d: %s: missing or wrong type (point needs key, knobs, status)",
			 src, line, !json_is_string(key) ? "key" : !json_is_object(knobs) ? "knobs" : "status");
		return -EINVAL;
	}
	if (!known(json_string_value(status), point_statuses, 3))
		return rxu_errf(L->err, L->errlen, -EINVAL,
				"%s:%d: status: unknown '%.64s' (expected ok, infeasible or failed)", src,
				line, json_string_value(status));
	/* two summaries of one point: which is it? Neither is taken */
	const char *k = json_string_value(key);
	json_t *first = json_object_get(L->psum, k);
	if (first) {
		const char *fsrc = json_string_value(json_array_get(first, 0));
		int fline = (int)json_integer_value(json_array_get(first, 1));
		if (!strcmp(fsrc, src))
			return rxu_errf(L->err, L->errlen, -EINVAL,
					"%s:%d: key: a second summary of point '%.160s' (the first at "
					"line %d); keep one", src, line, k, fline);
		return rxu_errf(L->err, L->errlen, -EINVAL,
				"%s:%d: key: a second summary of point '%.160s' (the first at %s:%d); "
				"keep one", src, line, k, fsrc, fline);
	}
	if (json_object_set_new_nocheck(L->psum, k, json_pack("[si]", src, line)))
		return -ENOMEM;
	struct rxa_point *p = point_add(L);
	if (!p)
		return -ENOMEM;
	if (!map_get(L->pkeys, json_string_value(key)) &&
	    map_put(L->pkeys, json_string_value(key), L->s->n - 1))
		return -ENOMEM;
	p->key = strdup(json_string_value(key));
	p->knobs = knobs_ordered(knobs, json_string_value(key), false);
	if (!p->key || !p->knobs)
		return -ENOMEM;
	snprintf(p->status, sizeof(p->status), "%s", json_string_value(status));
	json_t *reason = json_object_get(doc, "reason");
	if (json_is_string(reason) && json_string_length(reason))
		p->reason = strdup(json_string_value(reason));
	int rc = point_figures(L, doc, src, line, p);
	if (rc)
		return rc;
	p->generator_limited = json_is_true(json_object_get(doc, "generator_limited"));
	rc = embedded_run(L, doc, "ndr_run", src, line, &p->ndr_run, NULL, pre ? &pre[0] : NULL);
	if (!rc)
		rc = embedded_run(L, doc, "top_run", src, line, &p->top_run, NULL, pre ? &pre[1] : NULL);
	return rc;
}

static struct pending *pending_get(struct loader *L, const char *key)
{
	size_t at = map_get(L->pidx, key);
	if (at)
		return &L->pend[at - 1];
	/* capacity doubles: npend is a power of two (>= 16) or 0 whenever it is full */
	if (!L->npend || (L->npend >= 16 && !(L->npend & (L->npend - 1)))) {
		struct pending *np = realloc(L->pend, (L->npend ? L->npend * 2 : 16) * sizeof(*np));
		if (!np)
			return NULL;
		L->pend = np;
	}
	struct pending *p = &L->pend[L->npend];
	memset(p, 0, sizeof(*p));
	p->key = strdup(key);
	if (!p->key || map_put(L->pidx, key, L->npend)) {
		free(p->key);
		return NULL;
	}
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

/* The fields of a "trial" object, range-checked. */
static int trial_check(struct loader *L, const json_t *trial, const char *src, int line)
{
	json_t *st = json_object_get(trial, "status");
	if (st && (!json_is_string(st) || !known(json_string_value(st), trial_statuses, 4)))
		return rxu_errf(L->err, L->errlen, -EINVAL,
				"%s:%d: trial.status: unknown '%.64s' (expected ok, timeout, crashed or "
				"failed)", src, line, json_is_string(st) ? json_string_value(st) : "?");
	json_t *n = json_object_get(trial, "n");
	if (n && (!json_is_integer(n) || json_integer_value(n) < 0 || json_integer_value(n) > INT_MAX))
		return rxu_errf(L->err, L->errlen, -EINVAL, "%s:%d: trial.n: expected a count", src, line);
	double tv;
	int rc;
	if ((rc = num_field(L, trial, "target_pps", 0, 1e12, src, line, &tv)) ||
	    (rc = num_field(L, trial, "seconds", 0, 1e6, src, line, &tv)))
		return rc;
	return 0;
}

static int line_trial(struct loader *L, json_t *doc, const char *src, int line, bool has_run,
		      bool counted)
{
	json_t *trial = json_object_get(doc, "trial");
	json_t *key = json_object_get(trial, "key");
	if (!counted)
		L->s->ntrials++;
	if (!json_is_string(key)) {
		snprintf(L->err, L->errlen, "%s:%d: trial.key: missing or not a string", src, line);
		return -EINVAL;
	}
	int trc = trial_check(L, trial, src, line);
	if (trc)
		return trc;
	struct pending *p = pending_get(L, json_string_value(key));
	if (!p)
		return -ENOMEM;
	/* calibration trials (cost model) are never NDR/PDR evidence */
	const char *purpose = json_string_value(json_object_get(trial, "purpose"));
	bool calib = purpose && !strcmp(purpose, "calibration");
	if (!counted && !calib)
		p->trials++;
	if (!has_run)
		return 0;
	char e2[RXA_ERR_LEN];
	struct rxr_result *r = NULL;
	rxr_result_from_json(doc, src, &r, e2, sizeof(e2));
	if (!r) {
		snprintf(L->err, L->errlen, "%s:%d: %s", src, line, run_err(e2, src));
		return -EINVAL;
	}
	if (r->loss <= 0) {
		struct rxr_result *lr = r;
		if (!calib)
			rxr_result_from_json(doc, src, &lr, e2, sizeof(e2));
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
	if (r->loss <= 0 && rxr_result_from_json(doc, src, &r2, e3, sizeof(e3)) < 0)
		goto nomem;
	if (r->loss <= PDR_LOSS_DEFAULT && rxr_result_from_json(doc, src, &r3, e3, sizeof(e3)) < 0)
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
	char e2[RXA_ERR_LEN];
	struct rxr_result *r = NULL;
	rxr_result_from_json(doc, src, &r, e2, sizeof(e2));
	if (!r) {
		if (line > 0)
			snprintf(L->err, L->errlen, "%s:%d: %s", src, line, run_err(e2, src));
		else
			snprintf(L->err, L->errlen, "%s", e2);
		return -EINVAL;
	}
	struct rxa_point *p = point_add(L);
	if (!p) {
		rxr_result_free(r);
		return -ENOMEM;
	}
	p->ndr_run = p->top_run = NULL;
	p->top_run = r;
	p->knobs = knobs_ordered(r->config, NULL, true);
	p->key = p->knobs ? key_from_knobs(p->knobs) : NULL;
	if (!p->key)
		return -ENOMEM;
	if (!map_get(L->pkeys, p->key) && map_put(L->pkeys, p->key, L->s->n - 1))
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
			 RXR_RUN_SCHEMA, RXA_POINT_SCHEMA, RXA_TRIAL_SCHEMA);
		return -EINVAL;
	}
	if (!strcmp(sc, RXA_POINT_SCHEMA))
		return line_point(L, doc, src, line, NULL);
	if (!strcmp(sc, RXA_TRIAL_SCHEMA))
		return line_trial(L, doc, src, line, false, false);
	if (!strcmp(sc, RXR_RUN_SCHEMA)) {
		if (json_is_object(json_object_get(doc, "trial")))
			return line_trial(L, doc, src, line, true, false);
		return line_run(L, doc, src, in_jsonl ? line : 0);
	}
	snprintf(L->err, L->errlen, "%s:%d: schema: unknown '%s'", src, line, sc);
	return -EINVAL;
}

/*
 * The "trial" object of a trial line in the store's own shape (a
 * "rxray.run/1" result whose first member is the schema and whose last is
 * "trial": {...}) without parsing the rest of the line: NULL when the line
 * does not have that shape (it is then parsed in full, and its trial
 * object taken from the tree: line_trial_of; either way the line is
 * deferred alike). Inside a JSON string every '"' is escaped, so the
 * unescaped pattern can only be structure; jansson reads just the object
 * (JSON_DISABLE_EOF_CHECK stops after it). Only the closing brace of the
 * line may follow it, so it is the outermost object's member, not one
 * nested deeper (the caller holds the line to one JSON object).
 */
static json_t *fast_trial(const char *line, size_t len)
{
	static const char run[] = "\"schema\":\"" RXR_RUN_SCHEMA "\"";
	static const char pat[] = "\"trial\":{";
	/* the trial object last: looked for from the end, so a 3 KB line is
	 * not scanned three times */
	if (len <= sizeof(run) || line[0] != '{' || memcmp(line + 1, run, sizeof(run) - 1))
		return NULL;
	size_t tail = len > 1024 ? 1024 : len;
	const char *t = memmem(line + len - tail, tail, pat, sizeof(pat) - 1);
	if (!t)
		return NULL;
	t += sizeof(pat) - 2; /* at the '{' */
	size_t used = 0, left = len - (size_t)(t - line);
	json_t *o = rxr_json_scan(t, left, &used);
	json_error_t je;
	if (!o && (o = json_loadb(t, left, JSON_DISABLE_EOF_CHECK | JSON_REJECT_DUPLICATES, &je)))
		used = (size_t)je.position;
	size_t end = used;
	while (end < left && strchr(" \t\r\n", t[end]))
		end++;
	bool last = end < left && t[end] == '}';
	for (end++; last && end < left; end++)
		last = strchr(" \t\r\n", t[end]) != NULL;
	if (o && (!last || !json_is_string(json_object_get(o, "key")))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* The trial object of a parsed trial line ("rxray.run/1" with a "trial"
 * whose key is a string), borrowed; NULL for any other line. */
static json_t *line_trial_of(json_t *doc)
{
	json_t *tr = json_object_get(doc, "trial");
	if (!json_is_object(tr) || !json_is_string(json_object_get(tr, "key")) ||
	    !json_is_string(json_object_get(doc, "schema")) ||
	    strcmp(json_string_value(json_object_get(doc, "schema")), RXR_RUN_SCHEMA))
		return NULL;
	return tr;
}

/* Count a trial line and remember where it is; parsed only if its point has no summary. */
static int trial_defer(struct loader *L, json_t *trial, uint32_t file, int line, uint64_t off,
		       size_t len)
{
	struct pending *p = pending_get(L, json_string_value(json_object_get(trial, "key")));
	if (!p)
		return -ENOMEM;
	const char *purpose = json_string_value(json_object_get(trial, "purpose"));
	bool calib = purpose && !strcmp(purpose, "calibration");
	double target = json_number_value(json_object_get(trial, "target_pps"));
	L->s->ntrials++;
	if (!calib) /* calibration trials (cost model) are never NDR/PDR evidence */
		p->trials++;
	if (p->ntl == p->captl) {
		size_t nc = p->captl ? p->captl * 2 : 8;
		struct tline *nt = realloc(p->tl, nc * sizeof(*nt));
		if (!nt)
			return -ENOMEM;
		p->tl = nt;
		p->captl = nc;
	}
	p->tl[p->ntl++] = (struct tline){file, line, off, len, target, calib};
	return 0;
}

/*
 * A replayed trial of a point with a summary line: only its place among
 * the passing trials (p->light) is wanted, or with `above` (the place of
 * its rate among those above the NDR) its place among the lossy trials
 * there, so it is read once, not the
 * four times line_trial reads it to also keep the best runs, which the
 * summary line already holds. The trial object was checked when the
 * line was first read (fast_trial, trial_check).
 */
static int light_add(struct loader *L, struct pending *q, const json_t *doc, const char *src,
		     int line, struct rxr_result *r, struct rxr_result **above)
{
	char e2[RXA_ERR_LEN];
	if (!r && rxr_result_from_json(doc, src, &r, e2, sizeof(e2)))
		return rxu_errf(L->err, L->errlen, -EINVAL, "%s:%d: %s", src, line, run_err(e2, src));
	if (above) {
		/* kept only where it lost (a passing one broke nothing): the
		 * first of its rate to lose */
		if (r->loss > 0 && !*above)
			*above = r;
		else
			rxr_result_free(r);
		return 0;
	}
	if (r->loss > 0) {
		rxr_result_free(r);
		return 0;
	}
	struct rxr_result **nl = realloc(q->light, (q->nlight + 1) * sizeof(*nl));
	if (!nl) {
		rxr_result_free(r);
		return -ENOMEM;
	}
	q->light = nl;
	q->light[q->nlight++] = r;
	return 0;
}

/*
 * Parse the deferred trial lines of q: all of them for a point without a
 * summary line (light_below < 0); for one with a summary, only what the
 * cost model pools from (rxray/model.h): calibration trials and trials
 * asked for at most light_below pps (its NDR) - a few lines per point -
 * and the search trials asked for the RXA_POINT_ABOVE_MAX least above it
 * (q->above, those that lost).
 */
static int trial_replay(struct loader *L, struct pending *q, double light_below)
{
	/* the file and buffer stay open across points (L->rf...): 10,000
	 * points must not open the sweep's file 10,000 times */
	FILE *f = L->rf;
	char *buf = L->rbuf;
	size_t cap = L->rcap;
	int rc = 0;
	/* asked for at most the NDR: a rate the NDR trial was asked for,
	 * within rounding */
	const double light_max = light_below * 1.0001;
	/* the search trials asked for the least above it: the
	 * RXA_POINT_ABOVE_MAX least targets (a target asked for again counts
	 * once), the last of them the bound */
	double least[RXA_POINT_ABOVE_MAX] = {0};
	size_t nleast = 0;
	for (size_t i = 0; light_below > 0 && i < q->ntl; i++) {
		const struct tline *t = &q->tl[i];
		if (t->calib || !(t->target > light_max))
			continue;
		if (nleast == RXA_POINT_ABOVE_MAX && t->target >= least[nleast - 1])
			continue;
		bool seen = false;
		for (size_t k = 0; k < nleast && !seen; k++)
			seen = least[k] == t->target;
		if (seen)
			continue;
		size_t at = nleast < RXA_POINT_ABOVE_MAX ? nleast++ : nleast - 1;
		for (; at > 0 && least[at - 1] > t->target; at--)
			least[at] = least[at - 1];
		least[at] = t->target;
	}
	/* the lossy trial kept for each of those rates, in their order */
	struct rxr_result *at_rate[RXA_POINT_ABOVE_MAX] = {0};
	for (size_t i = 0; i < q->ntl && !rc; i++) {
		const struct tline *t = &q->tl[i];
		struct rxr_result **above = NULL;
		for (size_t k = 0; k < nleast && !t->calib && !above; k++)
			if (least[k] == t->target)
				above = &at_rate[k];
		if (light_below >= 0 && !t->calib && !above &&
		    !(t->target > 0 && t->target <= light_max))
			continue;
		const char *src = L->files[t->file];
		if (!f || t->file != L->rf_file) {
			if (f)
				fclose(f);
			f = NULL;
			if ((rc = rxr_in_open(src, 0, &f, L->err, L->errlen)))
				break;
			L->rf_file = t->file;
		}
		if (t->len + 1 > cap) {
			char *nb = realloc(buf, t->len + 1);
			if (!nb) {
				rc = -ENOMEM;
				break;
			}
			buf = nb;
			cap = t->len + 1;
		}
		if (fseeko(f, (off_t)t->off, SEEK_SET) || fread(buf, 1, t->len, f) != t->len) {
			rc = rxu_errf(L->err, L->errlen, -EIO, "%s:%d: read error (file changed?)", src,
				      t->line);
			break;
		}
		/* the fast path first (rxray/result.h): most trial lines are plain */
		struct rxr_result *fr = NULL;
		if (light_below >= 0)
			(void)rxr_result_scan(buf, t->len, NULL, &fr); /* declined: fr NULL */
		const char *fk = fr ? json_string_value(json_object_get(
						 json_object_get(fr->extra, "trial"), "key"))
				    : NULL;
		if (fk && !strcmp(fk, q->key)) {
			rc = light_add(L, q, NULL, src, t->line, fr, above);
			continue;
		}
		rxr_result_free(fr);
		json_error_t je;
		json_t *doc = json_loadb(buf, t->len, JSON_REJECT_DUPLICATES, &je);
		if (!doc) {
			rc = json_refused(L, src, t->line, buf, t->len, &je);
			break;
		}
		const char *k = json_string_value(json_object_get(json_object_get(doc, "trial"), "key"));
		if (!k || strcmp(k, q->key))
			rc = rxu_errf(L->err, L->errlen, -EINVAL, "%s:%d: trial.key: not a plain string",
				      src, t->line);
		else if (light_below >= 0)
			rc = light_add(L, q, doc, src, t->line, NULL, above);
		else
			rc = line_trial(L, doc, src, t->line, true, true);
		json_decref(doc);
	}
	/* in the order of the rates; the first is the least asked for
	 * above the NDR where that one lost */
	q->above_least = at_rate[0] != NULL;
	for (size_t k = 0; k < nleast; k++)
		if (at_rate[k])
			q->above[q->nabove++] = at_rate[k];
	L->rf = f;
	L->rbuf = buf;
	L->rcap = cap;
	return rc;
}

/*
 * A summary line through the fast path (rxray/result.h): its two runs
 * (most of its bytes) are read straight into results. 1 when the line is
 * not a plain summary line (the caller parses it as any other line), else
 * line_point's 0 or error.
 */
static int point_fast(struct loader *L, const char *buf, size_t len, const char *src, int line)
{
	static const char point[] = "{\"schema\":\"" RXA_POINT_SCHEMA "\"";
	static const char *const run_keys[] = {"ndr_run", "top_run"};
	if (len < sizeof(point) || memcmp(buf, point, sizeof(point) - 1))
		return 1;
	struct rxr_result *runs[2];
	json_t *doc = rxr_json_scan_runs(buf, len, run_keys, 2, runs);
	if (!doc)
		return 1;
	int rc = line_point(L, doc, src, line, runs);
	rxr_result_free(runs[0]);
	rxr_result_free(runs[1]);
	json_decref(doc);
	return rc;
}

static int load_jsonl(struct loader *L, const char *path)
{
	FILE *in;
	int rc = rxr_in_open(path, 0, &in, L->err, L->errlen);
	if (rc)
		return rc;
	char **nf = realloc(L->files, (L->nfiles + 1) * sizeof(*nf));
	if (!nf || !(nf[L->nfiles] = strdup(path))) {
		if (nf)
			L->files = nf;
		fclose(in);
		return -ENOMEM;
	}
	L->files = nf;
	uint32_t fi = (uint32_t)L->nfiles++;
	struct rxr_lines lr;
	rxr_lines_init(&lr, in, path, RXR_IN_MAX_LINE);
	size_t len;
	bool nl;
	int got;
	while (!rc && (got = rxr_lines_next(&lr, &len, &nl, L->err, L->errlen)) > 0) {
		char *buf = lr.buf;
		while (len && (buf[len - 1] == '\r' || buf[len - 1] == ' '))
			len--;
		if (!len)
			continue;
		/*
		 * A trial line (most of a big sweep's bytes): only its "trial"
		 * object is read and checked now; its point's summary line, later
		 * in the file, holds the figures (and its runs are checked). A
		 * point without one (a sweep still running) has its trial lines
		 * parsed in full at the end. The rest of the line is still held
		 * to what jansson takes (JSON, no key given twice) by a scan
		 * that builds nothing; where the scan cannot tell, the line is
		 * parsed in full below.
		 */
		json_t *tr = nl ? fast_trial(buf, len) : NULL;
		if (tr) {
			char field[160];
			int dup = rxr_json_dup_find(buf, len, field, sizeof(field));
			if (dup > 0)
				rc = rxu_errf(L->err, L->errlen, -EINVAL, "%s:%d: %s: key given twice",
					      path, lr.line, field);
			else if (!dup && !(rc = trial_check(L, tr, path, lr.line)))
				rc = trial_defer(L, tr, fi, lr.line, lr.off, len);
			json_decref(tr);
			if (dup >= 0)
				continue;
		}
		if (nl && (rc = point_fast(L, buf, len, path, lr.line)) != 1)
			continue; /* a summary line read by the fast path (0), or its error */
		rc = 0;
		json_error_t je;
		json_t *doc = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
		/* a key given twice is wrong however the line ends */
		if (!doc && !nl && json_error_code(&je) != json_error_duplicate_key) {
			L->s->truncated_line = lr.line; /* killed mid-write: skip it */
			break;
		}
		if (!doc) {
			rc = json_refused(L, path, lr.line, buf, len, &je);
			break;
		}
		/* a trial line read in full is deferred as a skimmed one is:
		 * which reader took it must not change what it means */
		json_t *tr_full = line_trial_of(doc);
		if (tr_full && !(rc = trial_check(L, tr_full, path, lr.line)))
			rc = trial_defer(L, tr_full, fi, lr.line, lr.off, len);
		else if (!tr_full)
			rc = doc_dispatch(L, doc, path, lr.line, true);
		json_decref(doc);
	}
	if (!rc && got < 0)
		rc = got; /* an over-long line, a read error or no memory: never end of file */
	rxr_lines_free(&lr);
	if (in != stdin)
		fclose(in);
	if (rc == -ENOMEM)
		snprintf(L->err, L->errlen, "%s: out of memory", path);
	return rc;
}

static int load_json(struct loader *L, const char *path)
{
	char *text;
	size_t len;
	int rc = rxr_in_read_all(path, RXR_IN_MAX_FILE, &text, &len, L->err, L->errlen);
	if (rc)
		return rc;
	json_error_t je;
	json_t *doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (!doc) {
		if (je.line > 0)
			json_refused(L, path, je.line, text, len, &je);
		else
			snprintf(L->err, L->errlen, "%s: %s", path, je.text);
		free(text);
		return -EINVAL;
	}
	free(text);
	rc = doc_dispatch(L, doc, path, 1, false);
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
	if (!lstat(path, &st) || errno != ENOENT) {
		int rc = load_jsonl(L, path);
		if (rc)
			return rc;
		snprintf(path, sizeof(path), "%s/spec.yaml", dir);
		if (stat(path, &st) && errno == ENOENT)
			return 0; /* a folder of results without its spec: fine */
		char *text;
		size_t len;
		rc = rxr_in_read_all(path, RXR_IN_MAX_SPEC, &text, &len, L->err, L->errlen);
		if (rc)
			return rc;
		L->s->spec_text = text;
		L->s->spec_path = strdup(path);
		return L->s->spec_path ? 0 : -ENOMEM;
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
		size_t at = map_get(L->pkeys, q->key);
		struct rxa_point *have = at ? &L->s->pts[at - 1] : NULL;
		if (have) {
			if (!have->trials)
				have->trials = q->trials;
			double ndr = isfinite(have->ndr_mpps) ? have->ndr_mpps * 1e6 : 0;
			if (!have->light && (rc = trial_replay(L, q, ndr)))
				break;
			if (!have->light) {
				have->light = q->light;
				have->nlight = q->nlight;
				q->light = NULL;
				q->nlight = 0;
			}
			if (!have->nabove) {
				memcpy(have->above_runs, q->above, q->nabove * sizeof(q->above[0]));
				have->nabove = q->nabove;
				have->above_least = q->above_least;
				q->nabove = 0;
			}
			continue;
		}
		if ((rc = trial_replay(L, q, -1)))
			break;
		if (!q->top)
			continue;
		struct rxa_point *p = point_add(L);
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

int rxa_set_load(const char *path, struct rxa_set **out, char *err, size_t errlen)
{
	struct loader L = {.err = err, .errlen = errlen};
	int rc;
	*out = NULL;
	L.s = calloc(1, sizeof(*L.s));
	L.pkeys = json_object();
	L.pidx = json_object();
	L.psum = json_object();
	if (!L.s || !L.pkeys || !L.pidx || !L.psum || !(L.s->src = strdup(path))) {
		rc = -ENOMEM;
		goto fail;
	}
	bool is_dir = false;
	if ((rc = rxr_in_check(path, true, 0, &is_dir, err, errlen)))
		goto fail;
	if (is_dir)
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
		free(L.pend[i].tl);
		for (size_t j = 0; j < L.pend[i].nlight; j++)
			rxr_result_free(L.pend[i].light[j]);
		free(L.pend[i].light);
		for (size_t j = 0; j < L.pend[i].nabove; j++)
			rxr_result_free(L.pend[i].above[j]);
	}
	free(L.pend);
	if (L.rf && L.rf != stdin)
		fclose(L.rf);
	free(L.rbuf);
	for (size_t i = 0; i < L.nfiles; i++)
		free(L.files[i]);
	free(L.files);
	json_decref(L.pkeys);
	json_decref(L.pidx);
	json_decref(L.psum);
	rxa_set_free(L.s);
	return rc;
}
