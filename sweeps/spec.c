/* SPDX-License-Identifier: MIT */
/*
 * Sweep spec: YAML (libyaml's document API, which keeps each node's start
 * mark) into struct sweep_spec. Every error names file:line:column and the
 * field, so a user can jump to the offending node.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "rxray/engines.h"
#include "rxray/probe.h"
#include "rxray/sweep.h"
#include "rxray/util.h"
#include "spec_int.h"

/* The fields a spec knows, for its "unknown field" line. */
static const char *known_fields(char *buf, size_t n)
{
	size_t len = 0;
	buf[0] = '\0';
	for (size_t k = 0; k < sweep_knob_count(); k++)
		if (sweep_knob_name(k) && len < n)
			len += (size_t)snprintf(buf + len, n - len, "%s, ", sweep_knob_name(k));
	if (len < n)
		snprintf(buf + len, n - len,
			 "cores, allow_oversubscribe, output, traffic_cmd, generator, search");
	return buf;
}

struct ctx {
	yaml_document_t *doc;
	const char *file;
	char *err;
	size_t errlen;
	struct sweep_spec *spec;
};

static int fail(struct ctx *c, const yaml_node_t *n, const char *field, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(struct ctx *c, const yaml_node_t *n, const char *field, const char *fmt, ...)
{
	char what[300];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(c->err, c->errlen, "%s:%zu:%zu: %s: %s", c->file, n->start_mark.line + 1,
		 n->start_mark.column + 1, field, what);
	return -EINVAL;
}

static struct sweep_mark mark_of(const yaml_node_t *n)
{
	return (struct sweep_mark){(int)n->start_mark.line + 1, (int)n->start_mark.column + 1};
}

static const char *scalar(const yaml_node_t *n)
{
	return n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static const char *node_kind(const yaml_node_t *n)
{
	switch (n->type) {
	case YAML_SCALAR_NODE:
		return "a scalar";
	case YAML_SEQUENCE_NODE:
		return "a list";
	case YAML_MAPPING_NODE:
		return "a mapping";
	default:
		return "nothing";
	}
}

static bool is_null(const yaml_node_t *n)
{
	const char *s = scalar(n);
	return s && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
	       (!*s || !strcmp(s, "~") || !strcmp(s, "null"));
}

static int parse_value(struct ctx *c, size_t k, const yaml_node_t *n,
		       struct sweep_value *v)
{
	const char *name = sweep_knob_name(k);
	const struct rx_knob *rk = sweep_row(k);
	const char *s = scalar(n);
	if (!s || is_null(n))
		return fail(c, n, name, "expected a value, got %s", s ? "nothing" : node_kind(n));
	memset(v, 0, sizeof(*v));
	v->mark = mark_of(n);
	if (strlen(s) >= sizeof(v->text))
		return fail(c, n, name, "value too long (%zu characters, at most %zu)", strlen(s),
			    sizeof(v->text) - 1);
	if ((int)k == sweep_knob_find("engine")) {
		const struct rx_engine_ops *e = rxe_find(s);
		char list[160];
		if (!e)
			return fail(c, n, name, "unknown value '%s' (expected %s)", s,
				    rxe_list(list, sizeof(list), " | "));
		snprintf(v->text, sizeof(v->text), "%s", s);
		return 0;
	}
	if ((int)k == sweep_knob_find("inject") && !strcmp(s, "none")) {
		snprintf(v->text, sizeof(v->text), "none");
		return 0;
	}
	if ((int)k == sweep_knob_find("inject")) {
		/* the run's parser skips empty entries: "a=1," would run as
		 * "a=1", and "," with nothing, keyed "inject=+" */
		size_t e = 1;
		for (const char *p = s;; p++, e++) {
			size_t len = strcspn(p, ",+");
			if (!len)
				return fail(c, n, name,
					    "entry %zu of '%s' is empty (STAGE=CYCLES entries "
					    "joined by ',', or none)",
					    e, s);
			p += len;
			if (!*p)
				break;
		}
	}
	struct rx_config cfg;
	char e[SWEEP_ERR_LEN];
	rx_config_defaults(&cfg);
	memset(cfg.inject, 0, sizeof(cfg.inject));
	if (rx_config_set(&cfg, rk->name, s, e, sizeof(e)) < 0) {
		/* "<knob>: <what>": the spec names the field its own way */
		const char *what = strstr(e, ": ");
		return fail(c, n, name, "%s", what ? what + 2 : e);
	}
	const void *field = (const char *)&cfg + rk->offset;
	switch (rk->type) {
	case RX_KT_UINT:
		v->num = *(const uint32_t *)field;
		snprintf(v->text, sizeof(v->text), "%llu", (unsigned long long)v->num);
		break;
	case RX_KT_ENUM:
		/* one name per meaning in keys: the canonical one */
		snprintf(v->text, sizeof(v->text), "%s",
			 rx_knob_value_name(rk, *(const int *)field));
		break;
	case RX_KT_INJECT:
		/* keys are comma-joined: store with '+' between entries */
		snprintf(v->text, sizeof(v->text), "%s", s);
		for (char *p = v->text; *p; p++)
			if (*p == ',')
				*p = '+';
		break;
	default:
		snprintf(v->text, sizeof(v->text), "%s", s);
		break;
	}
	return 0;
}

static int parse_axis(struct ctx *c, size_t k, const yaml_node_t *key,
		      const yaml_node_t *n)
{
	struct sweep_axis *a = &c->spec->axis[k];
	const char *name = sweep_knob_name(k);
	if (a->n)
		return fail(c, key, name, "given twice (as %s and %s)", name, scalar(key));
	a->mark = mark_of(key);
	size_t cnt = 1;
	if (n->type == YAML_SEQUENCE_NODE) {
		cnt = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
		if (!cnt)
			return fail(c, n, name, "empty list (an axis needs at least one value)");
	} else if (n->type != YAML_SCALAR_NODE) {
		return fail(c, n, name, "expected a value or a list, got %s", node_kind(n));
	}
	a->v = calloc(cnt, sizeof(*a->v));
	if (!a->v)
		return -ENOMEM;
	a->n = cnt;
	for (size_t i = 0; i < cnt; i++) {
		const yaml_node_t *item = n;
		if (n->type == YAML_SEQUENCE_NODE)
			item = yaml_document_get_node(c->doc, n->data.sequence.items.start[i]);
		int rc = parse_value(c, k, item, &a->v[i]);
		if (rc < 0)
			return rc;
		for (size_t j = 0; j < i; j++)
			if (!strcmp(a->v[j].text, a->v[i].text))
				return fail(c, item, name, "'%s' is listed twice", a->v[i].text);
	}
	return 0;
}

static int parse_bool(struct ctx *c, const yaml_node_t *n, const char *field, bool *out)
{
	const char *s = scalar(n);
	if (s && (!strcmp(s, "true") || !strcmp(s, "yes") || !strcmp(s, "on"))) {
		*out = true;
		return 0;
	}
	if (s && (!strcmp(s, "false") || !strcmp(s, "no") || !strcmp(s, "off"))) {
		*out = false;
		return 0;
	}
	return fail(c, n, field, "expected true or false, got %s%s%s", s ? "'" : "",
		    s ? s : node_kind(n), s ? "'" : "");
}

static int parse_string(struct ctx *c, const yaml_node_t *n, const char *field, char *out,
			size_t outlen)
{
	const char *s = scalar(n);
	if (!s || is_null(n) || !*s)
		return fail(c, n, field, "expected a non-empty string, got %s",
			    s ? "nothing" : node_kind(n));
	if (strlen(s) >= outlen)
		return fail(c, n, field, "too long (at most %zu characters)", outlen - 1);
	snprintf(out, outlen, "%s", s);
	return 0;
}

static int parse_cores(struct ctx *c, const yaml_node_t *n)
{
	struct sweep_spec *sp = c->spec;
	if (n->type == YAML_SCALAR_NODE) {
		char why[160];
		int cnt = rxu_cores_parse(scalar(n), sp->cores, SWEEP_MAX_CORES, why, sizeof(why));
		if (cnt <= 0)
			return fail(c, n, "cores", "%s", why + strlen("cores: "));
		sp->ncores = cnt;
		return 0;
	}
	if (n->type != YAML_SEQUENCE_NODE)
		return fail(c, n, "cores", "expected a list of cores, got %s", node_kind(n));
	size_t cnt = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
	if (!cnt)
		return fail(c, n, "cores", "empty list");
	if (cnt > SWEEP_MAX_CORES)
		return fail(c, n, "cores", "more than %d cores", SWEEP_MAX_CORES);
	for (size_t i = 0; i < cnt; i++) {
		const yaml_node_t *it = yaml_document_get_node(c->doc, n->data.sequence.items.start[i]);
		uint64_t v;
		const char *s = scalar(it);
		if (!s || rxu_parse_u64(s, 0, 4095, &v) < 0)
			return fail(c, it, "cores", "expected a core number 0..4095, got %s%s%s",
				    s ? "'" : "", s ? s : node_kind(it), s ? "'" : "");
		for (size_t j = 0; j < i; j++)
			if (sp->cores[j] == (int)v)
				return fail(c, it, "cores", "core %llu is listed twice",
					    (unsigned long long)v);
		sp->cores[i] = (int)v;
	}
	sp->ncores = (int)cnt;
	return 0;
}

static int parse_ratio(struct ctx *c, const yaml_node_t *n, const char *field, double min,
		       double max, double *out)
{
	const char *s = scalar(n);
	if (!s || rxu_parse_double(s, min, max, out) < 0)
		return fail(c, n, field, "expected a number in [%g, %g], got %s%s%s", min, max,
			    s ? "'" : "", s ? s : node_kind(n), s ? "'" : "");
	return 0;
}

static int parse_search(struct ctx *c, const yaml_node_t *n)
{
	struct sweep_search_cfg *s = &c->spec->search;
	if (n->type != YAML_MAPPING_NODE)
		return fail(c, n, "search", "expected a mapping, got %s", node_kind(n));
	const yaml_node_t *ndr_node = NULL, *seen[16] = {0};
	int nseen = 0;
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		const yaml_node_t *k = yaml_document_get_node(c->doc, p->key);
		const yaml_node_t *v = yaml_document_get_node(c->doc, p->value);
		const char *name = scalar(k);
		char field[64];
		snprintf(field, sizeof(field), "search.%s", name ? name : "?");
		if (!name)
			return fail(c, k, "search", "keys must be names");
		for (int i = 0; i < nseen; i++)
			if (!strcmp(scalar(seen[i]), name))
				return fail(c, k, field, "given twice");
		if (nseen < 16)
			seen[nseen++] = k;
		const char *sv = scalar(v);
		int rc;
		if (!strcmp(name, "ndr_loss")) {
			rc = parse_ratio(c, v, field, 0, 0.5, &s->ndr_loss);
			ndr_node = v;
		} else if (!strcmp(name, "pdr_loss")) {
			rc = parse_ratio(c, v, field, 0, 0.5, &s->pdr_loss);
		} else if (!strcmp(name, "exceed_ratio")) {
			rc = parse_ratio(c, v, field, 0, 0.9, &s->exceed_ratio);
		} else if (!strcmp(name, "calibration_frac")) {
			/* the model pools trials offered at most half the NDR,
			 * and a trial asked for half can offer a hair more */
			rc = parse_ratio(c, v, field, 0, 0.45, &s->calibration_frac);
		} else if (!strcmp(name, "precision")) {
			rc = parse_ratio(c, v, field, 0.0001, 0.5, &s->precision);
		} else if (!strcmp(name, "trial_seconds") || !strcmp(name, "initial_seconds") ||
			   !strcmp(name, "timeout")) {
			double *dst = name[0] == 't' && name[1] == 'r' ? &s->trial_seconds
				      : name[0] == 'i'		   ? &s->initial_seconds
									   : &s->timeout;
			rc = (!sv || rxu_parse_seconds(sv, 0.01, 3600, dst) < 0)
				     ? fail(c, v, field,
					    "expected a duration in [10ms, 1h] like 0.25, 250ms or "
					    "2s, got %s%s%s",
					    sv ? "'" : "", sv ? sv : node_kind(v), sv ? "'" : "")
				     : 0;
		} else if (!strcmp(name, "total_budget")) {
			rc = (!sv || rxu_parse_seconds(sv, 0, 7 * 86400, &s->total_budget_seconds) < 0)
				     ? fail(c, v, field,
					    "expected a duration in [0, 7 days] like 170s or 3600, got %s%s%s",
					    sv ? "'" : "", sv ? sv : node_kind(v), sv ? "'" : "")
				     : 0;
		} else if (!strcmp(name, "budget")) {
			/* time per point: the trials' wall time (0 = max_trials x
			 * (trial_seconds + 0.7 s)) */
			rc = (!sv || rxu_parse_seconds(sv, 0, 86400, &s->budget_seconds) < 0)
				     ? fail(c, v, field,
					    "expected a duration in [0, 24h] like 30 or 90s, got %s%s%s",
					    sv ? "'" : "", sv ? sv : node_kind(v), sv ? "'" : "")
				     : 0;
		} else if (!strcmp(name, "max_retries")) {
			uint64_t t;
			rc = (!sv || rxu_parse_u64(sv, 0, 100, &t) < 0)
				     ? fail(c, v, field, "expected an integer in [0, 100], got %s%s%s",
					    sv ? "'" : "", sv ? sv : node_kind(v), sv ? "'" : "")
				     : 0;
			if (!rc)
				s->max_retries = (unsigned)t;
		} else if (!strcmp(name, "max_trials")) {
			uint64_t t;
			rc = (!sv || rxu_parse_u64(sv, 1, 1000, &t) < 0)
				     ? fail(c, v, field, "expected an integer in [1, 1000], got %s%s%s",
					    sv ? "'" : "", sv ? sv : node_kind(v), sv ? "'" : "")
				     : 0;
			if (!rc)
				s->max_trials = (unsigned)t;
		} else if (!strcmp(name, "min_rate") || !strcmp(name, "max_rate")) {
			double *dst = name[1] == 'i' ? &s->min_rate : &s->max_rate;
			rc = (!sv || rxu_parse_rate(sv, dst) < 0 || (name[1] == 'i' && *dst <= 0))
				     ? fail(c, v, field,
					    "expected a rate in packets/s like 500k or 12M%s, got %s%s%s",
					    name[1] == 'a' ? " or max" : "", sv ? "'" : "",
					    sv ? sv : node_kind(v), sv ? "'" : "")
				     : 0;
		} else {
			return fail(
			    c, k, field,
			    "unknown field (known: ndr_loss, pdr_loss, precision, "
			    "trial_seconds, initial_seconds, max_trials, min_rate, max_rate, "
			    "timeout, exceed_ratio, budget, total_budget, max_retries, "
			    "calibration_frac)");
		}
		if (rc < 0)
			return rc;
	}
	if (ndr_node && s->ndr_loss > s->pdr_loss)
		return fail(c, ndr_node, "search.ndr_loss", "%g is above pdr_loss %g", s->ndr_loss,
			    s->pdr_loss);
	if (s->max_rate > 0 && s->max_rate <= s->min_rate)
		return fail(c, n, "search.max_rate", "%g pps is not above min_rate %g pps",
			    s->max_rate, s->min_rate);
	return 0;
}

/* Whether name is one of the comma-joined names in list. */
static bool in_list(const char *list, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = list; p && *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ',')) {
		if (strcspn(p, ",") == n && !strncmp(p, name, n))
			return true;
	}
	return false;
}

static int knob_lookup(const char *name)
{
	for (size_t k = 0; k < sweep_knob_count(); k++) {
		const char *kn = sweep_knob_name(k);
		const struct rx_knob *rk = sweep_row(k);
		if ((kn && !strcmp(name, kn)) || (rk && in_list(rk->spec, name)))
			return (int)k;
	}
	return -1;
}

static int parse_root(struct ctx *c, const yaml_node_t *root)
{
	struct sweep_spec *sp = c->spec;
	if (!root) {
		snprintf(c->err, c->errlen, "%s:1:1: spec: empty document (expected a mapping)",
			 c->file);
		return -EINVAL;
	}
	if (root->type != YAML_MAPPING_NODE)
		return fail(c, root, "spec", "expected a mapping of fields, got %s", node_kind(root));
	bool seen_over = false, seen_out = false, seen_cmd = false, seen_cores = false,
	     seen_search = false, seen_gen = false;
	const yaml_node_t *cmd_node = NULL, *gen_node = NULL;
	for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top;
	     p++) {
		const yaml_node_t *k = yaml_document_get_node(c->doc, p->key);
		const yaml_node_t *v = yaml_document_get_node(c->doc, p->value);
		const char *name = scalar(k);
		if (!name)
			return fail(c, k, "spec", "field names must be plain names");
		int knob = knob_lookup(name);
		int rc;
		bool *seen = NULL;
		if (knob >= 0) {
			rc = parse_axis(c, (size_t)knob, k, v);
		} else if (!strcmp(name, "cores")) {
			seen = &seen_cores;
			rc = seen_cores ? 0 : parse_cores(c, v);
		} else if (!strcmp(name, "allow_oversubscribe")) {
			seen = &seen_over;
			rc = seen_over ? 0 : parse_bool(c, v, name, &sp->allow_oversubscribe);
		} else if (!strcmp(name, "output")) {
			seen = &seen_out;
			rc = seen_out ? 0 : parse_string(c, v, name, sp->output, sizeof(sp->output));
		} else if (!strcmp(name, "traffic_cmd")) {
			seen = &seen_cmd;
			cmd_node = v;
			rc = seen_cmd ? 0
				      : parse_string(c, v, name, sp->traffic_cmd,
						     sizeof(sp->traffic_cmd));
			if (!rc && !seen_cmd) {
				char probe[2048];
				int te = sweep_template_expand(sp->traffic_cmd, 1, 64, 1, probe,
							       sizeof(probe));
				if (te == -EINVAL)
					rc = fail(c, v, name,
						  "unknown placeholder {%s} (known: {rate_pps} "
						  "{frame} {seconds})", probe);
			}
		} else if (!strcmp(name, "generator")) {
			seen = &seen_gen;
			gen_node = k;
			rc = seen_gen ? 0
				      : sweep_gen_from_node(c->doc, v, c->file, &sp->gen, c->err,
							    c->errlen);
			sp->have_gen = !seen_gen && rc == 0;
		} else if (!strcmp(name, "search")) {
			seen = &seen_search;
			rc = seen_search ? 0 : parse_search(c, v);
		} else {
			char known[SWEEP_KNOBS_CAP * 32 + 64];
			return fail(c, k, name, "unknown field (known: %s)",
				    known_fields(known, sizeof(known)));
		}
		if (seen && *seen)
			return fail(c, k, name, "given twice");
		if (seen)
			*seen = true;
		if (rc < 0)
			return rc;
	}
	if (sp->traffic_cmd[0] && sp->have_gen)
		return fail(c, gen_node, "generator",
			    "traffic_cmd and generator are two ways to send a trial's traffic: "
			    "keep one (generator counts what it sent)");
	const yaml_node_t *src = sp->have_gen ? gen_node : cmd_node;
	const char *what = sp->have_gen ? "generator" : "traffic_cmd";
	if (src) {
		struct sweep_axis *dev = &sp->axis[sweep_knob_find("device")];
		for (size_t i = 0; i < dev->n; i++)
			if (!strncmp(dev->v[i].text, "sim", 3))
				return fail(c, src, what,
					    "needs a real device (mlx5:... or dpdk:...); device '%s' "
					    "generates its own traffic", dev->v[i].text);
		if (!dev->n)
			return fail(c, src, what,
				    "needs a real device (mlx5:... or dpdk:...); the default "
				    "device sim generates its own traffic");
		if (sp->search.max_rate <= 0)
			return fail(c, src, what,
				    "needs search.max_rate (the rate the first trial asks of the "
				    "traffic source)");
	}
	return 0;
}

/*
 * Nesting depth cap of a spec (a real one nests 3 deep). Checked on the
 * event stream before the document is built: libyaml's scanner rescans
 * its open simple keys per token, so a deep flow ("[[[[...") costs time
 * quadratic in its depth and hung the loader. 0 when within the cap (a
 * syntax error is left for the loader to report), else -EINVAL with
 * "<name>:<line>:<col>: yaml: nesting deeper than N".
 */
#define SWEEP_SPEC_MAX_DEPTH 32
int sweep_yaml_check(const char *text, size_t len, const char *name, char *err, size_t errlen)
{
	yaml_parser_t p;
	yaml_event_t ev;
	int depth = 0, rc = 0, docs = 0;
	if (!yaml_parser_initialize(&p))
		return -ENOMEM;
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	for (bool done = false; !done && !rc;) {
		/* the whole stream parses, not only the document a spec reads */
		if (!yaml_parser_parse(&p, &ev)) {
			snprintf(err, errlen, "%s:%zu:%zu: yaml: %s%s%s", name,
				 p.problem_mark.line + 1, p.problem_mark.column + 1,
				 p.problem ? p.problem : "parse error", p.context ? " " : "",
				 p.context ? p.context : "");
			rc = -EINVAL;
			break;
		}
		if (ev.type == YAML_DOCUMENT_START_EVENT && ++docs > 1) {
			snprintf(err, errlen,
				 "%s:%zu:%zu: yaml: a second document: a spec is one document (drop "
				 "the '---' and what follows)",
				 name, ev.start_mark.line + 1, ev.start_mark.column + 1);
			rc = -EINVAL;
		} else if (ev.type == YAML_SEQUENCE_START_EVENT || ev.type == YAML_MAPPING_START_EVENT) {
			if (++depth > SWEEP_SPEC_MAX_DEPTH) {
				snprintf(err, errlen, "%s:%zu:%zu: yaml: nesting deeper than %d levels",
					 name, ev.start_mark.line + 1, ev.start_mark.column + 1,
					 SWEEP_SPEC_MAX_DEPTH);
				rc = -EINVAL;
			}
		} else if (ev.type == YAML_SEQUENCE_END_EVENT || ev.type == YAML_MAPPING_END_EVENT) {
			depth--;
		}
		done = ev.type == YAML_STREAM_END_EVENT;
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&p);
	return rc;
}

int sweep_spec_parse(const char *text, size_t len, const char *name, struct sweep_spec **out,
		     char *err, size_t errlen)
{
	/* a table the sweep cannot hold fails here, before any knob is read */
	int drc = sweep_knobs_check(err, errlen);
	if (drc < 0)
		return drc;
	drc = sweep_yaml_check(text, len, name, err, errlen);
	if (drc < 0)
		return drc;
	struct sweep_spec *sp = calloc(1, sizeof(*sp));
	if (!sp)
		return -ENOMEM;
	snprintf(sp->path, sizeof(sp->path), "%s", name);
	snprintf(sp->output, sizeof(sp->output), "results/sweep");
	sweep_search_cfg_defaults(&sp->search);

	yaml_parser_t parser;
	yaml_document_t doc;
	bool have_doc = false;
	int rc = -EINVAL;
	struct ctx c = {&doc, name, err, errlen, sp};
	if (!yaml_parser_initialize(&parser)) {
		rc = -ENOMEM;
		goto out_free;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &doc)) {
		snprintf(err, errlen, "%s:%zu:%zu: yaml: %s%s%s", name,
			 parser.problem_mark.line + 1, parser.problem_mark.column + 1,
			 parser.problem ? parser.problem : "parse error",
			 parser.context ? " " : "", parser.context ? parser.context : "");
		goto out_parser;
	}
	have_doc = true;
	rc = parse_root(&c, yaml_document_get_root_node(&doc));
	if (rc < 0)
		goto out_parser;
	if (sp->search.initial_seconds <= 0)
		sp->search.initial_seconds = sp->search.trial_seconds;
	if (sp->search.timeout <= 0)
		sp->search.timeout = 3 * sp->search.trial_seconds + 20;

	struct sweep_point *pts = NULL;
	size_t npts = 0;
	rc = sweep_matrix_expand(sp, &pts, &npts, err, errlen);
	free(pts);
out_parser:
	if (have_doc)
		yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
out_free:
	if (rc < 0)
		sweep_spec_free(sp);
	else
		*out = sp;
	return rc;
}

int sweep_file_read(const char *path, char **bufp, size_t *lenp, char *err, size_t errlen)
{
	*bufp = NULL;
	*lenp = 0;
	FILE *f = fopen(path, "rb");
	if (!f) {
		int e = errno;
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		return -e;
	}
	char *buf = NULL;
	size_t len = 0, cap = 0;
	int rc = 0;
	for (;;) {
		if (len + 4096 > cap) {
			cap = cap ? cap * 2 : 8192;
			if (cap > (16u << 20)) {
				snprintf(err, errlen, "%s: larger than 16 MiB", path);
				rc = -EFBIG;
				break;
			}
			char *nb = realloc(buf, cap);
			if (!nb) {
				rc = -ENOMEM;
				break;
			}
			buf = nb;
		}
		size_t got = fread(buf + len, 1, cap - len - 1, f);
		len += got;
		if (got == 0)
			break;
	}
	if (!rc && ferror(f)) {
		rc = -EIO;
		snprintf(err, errlen, "%s: read error", path);
	}
	fclose(f);
	if (rc) {
		free(buf);
		return rc;
	}
	if (!buf && !(buf = malloc(1)))
		return -ENOMEM;
	buf[len] = '\0';
	*bufp = buf;
	*lenp = len;
	return 0;
}

int sweep_spec_load(const char *path, struct sweep_spec **out, char *err, size_t errlen)
{
	char *buf;
	size_t len;
	int rc = sweep_file_read(path, &buf, &len, err, errlen);
	if (!rc)
		rc = sweep_spec_parse(buf, len, path, out, err, errlen);
	free(buf);
	return rc;
}

void sweep_spec_free(struct sweep_spec *s)
{
	if (!s)
		return;
	for (size_t k = 0; k < SWEEP_KNOBS_CAP; k++)
		free(s->axis[k].v);
	free(s);
}
