/* SPDX-License-Identifier: MIT */
/*
 * Matrix expansion: the cartesian product of the spec's axes, knobs that
 * do not apply to a point dropped (so equal points collapse), and the
 * checks no engine would pass, reported at the offending spec node.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rxray/engines.h"
#include "rxray/sweep.h"

/* Knobs every point names, with the value used when the spec does not. */
static const struct {
	const char *knob;
	struct sweep_value v;
} defaults[] = {
	{"engine", {"verbs", 0, {0, 0}}}, {"mode", {"single", 0, {0, 0}}},
	{"frame", {"1064", 1064, {0, 0}}}, {"queues", {"1", 1, {0, 0}}},
	{"ring", {"8192", 8192, {0, 0}}},  {"device", {"sim", 0, {0, 0}}},
};

static const struct rx_knob *knob_of(size_t k)
{
	return rx_knob_find(sweep_knob_name(k));
}

static bool is_numeric(size_t k)
{
	return knob_of(k)->type == RX_KT_UINT;
}

const struct sweep_value *sweep_point_knob(const struct sweep_point *p, const char *name)
{
	int k = sweep_knob_find(name);
	return k < 0 ? NULL : p->k[k];
}

bool sweep_point_is_sim(const struct sweep_point *p)
{
	const char *d = sweep_point_knob(p, "device")->text;
	return !strcmp(d, "sim") || !strncmp(d, "sim:", 4);
}

static int bad(const struct sweep_spec *s, const struct sweep_value *v, size_t k,
	       char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static int bad(const struct sweep_spec *s, const struct sweep_value *v, size_t k,
	       char *err, size_t errlen, const char *fmt, ...)
{
	char what[300];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	struct sweep_mark m = v->mark.line ? v->mark : s->axis[k].mark;
	if (!m.line)
		m = (struct sweep_mark){1, 1};
	snprintf(err, errlen, "%s:%d:%d: %s: %s", s->path, m.line, m.column, sweep_knob_name(k),
		 what);
	return -EINVAL;
}

int sweep_point_config(const struct sweep_spec *s, const struct sweep_point *p,
		       struct rx_config *c, char *err, size_t errlen)
{
	const int inject = sweep_knob_find("inject");
	rx_config_defaults(c);
	for (int k = 0; k < (int)sweep_knob_count(); k++) {
		if (!p->k[k] || (k == inject && !strcmp(p->k[k]->text, "none")))
			continue;
		char val[sizeof(p->k[k]->text)];
		snprintf(val, sizeof(val), "%s", p->k[k]->text);
		if (k == inject)
			for (char *q = val; *q; q++)
				if (*q == '+')
					*q = ',';
		int rc = rx_config_set(c, sweep_knob_name((size_t)k), val, err, errlen);
		if (rc < 0)
			return rc;
	}
	c->ncores = s ? s->ncores : 0;
	if (c->ncores > 0)
		memcpy(c->cores, s->cores, (size_t)c->ncores * sizeof(c->cores[0]));
	c->allow_oversubscribe = s && s->allow_oversubscribe;
	return 0;
}

/* The spec knob an "<field>: <what>" line is about (the engine's when the
 * field is no spec knob). */
static size_t knob_of_line(const char *line)
{
	const size_t engine = (size_t)sweep_knob_find("engine");
	char field[32];
	size_t n = strcspn(line, ":");
	if (n >= sizeof(field))
		return engine;
	memcpy(field, line, n);
	field[n] = '\0';
	int k = sweep_knob_find(field);
	return k < 0 ? engine : (size_t)k;
}

/*
 * The point's configuration checked exactly as `rxray run` checks it
 * (rxe_check): the same acceptance, the same message, pinned to the
 * spec node of the knob it names. Placement is the sweep's own (cores are
 * handed to each point), and real devices are not opened here: their
 * caps are checked by the trial.
 */
static int point_check(const struct sweep_spec *s, const struct sweep_point *p, char *err,
		       size_t errlen)
{
	struct rx_config c;
	char line[SWEEP_ERR_LEN] = "";
	int rc = sweep_point_config(s, p, &c, line, sizeof(line));
	if (!rc) {
		unsigned flags = RX_CHECK_NO_PLACE;
		if (!rx_dev_caps_offline(c.device))
			flags |= RX_CHECK_NO_DEVICE;
		rc = rxe_check(&c, flags, NULL, NULL, line, sizeof(line));
	}
	if (!rc)
		return 0;
	size_t k = knob_of_line(line);
	const char *what = strstr(line, ": ");
	const struct sweep_value *v = p->k[k] ? p->k[k] : sweep_point_knob(p, "engine");
	return bad(s, v, k, err, errlen, "%s", what ? what + 2 : line);
}

static void point_key(struct sweep_point *p)
{
	size_t off = 0;
	p->key[0] = '\0';
	/* device last whatever the table adds: its value may hold commas */
	const size_t nk = sweep_knob_count(), device = (size_t)sweep_knob_find("device");
	for (size_t i = 0; i < nk; i++) {
		size_t k = i == nk - 1 ? device : i >= device ? i + 1 : i;
		if (!p->k[k])
			continue;
		int n = snprintf(p->key + off, sizeof(p->key) - off, "%s%s=%s", off ? "," : "",
				 sweep_knob_name(k), p->k[k]->text);
		if (n < 0 || (size_t)n >= sizeof(p->key) - off)
			break;
		off += (size_t)n;
	}
}

int sweep_matrix_expand(const struct sweep_spec *spec, struct sweep_point **pts, size_t *npts,
			char *err, size_t errlen)
{
	size_t total = 1;
	for (int k = 0; k < (int)sweep_knob_count(); k++) {
		size_t n = spec->axis[k].n ? spec->axis[k].n : 1;
		if (total > SWEEP_MAX_POINTS / n) {
			snprintf(err, errlen, "%s:%d:%d: %s: the matrix has more than %d points",
				 spec->path, spec->axis[k].mark.line, spec->axis[k].mark.column,
				 sweep_knob_name((size_t)k), SWEEP_MAX_POINTS);
			return -EINVAL;
		}
		total *= n;
	}
	struct sweep_point *out = calloc(total, sizeof(*out));
	json_t *seen = json_object();
	if (!out || !seen) {
		free(out);
		json_decref(seen);
		return -ENOMEM;
	}
	/* the defaults by sweep index, and the knobs read below, looked up by
	 * name once per matrix */
	const struct sweep_value *def[SWEEP_KNOBS_CAP] = {NULL};
	const int kengine = sweep_knob_find("engine"), kmode = sweep_knob_find("mode");
	for (size_t d = 0; d < sizeof(defaults) / sizeof(defaults[0]); d++) {
		int k = sweep_knob_find(defaults[d].knob);
		if (k >= 0)
			def[k] = &defaults[d].v;
	}
	size_t idx[SWEEP_KNOBS_CAP] = {0}, n = 0;
	int rc = 0;
	for (size_t i = 0; i < total; i++) {
		struct sweep_point *p = &out[n];
		memset(p, 0, sizeof(*p));
		for (int k = 0; k < (int)sweep_knob_count(); k++)
			p->k[k] = spec->axis[k].n ? &spec->axis[k].v[idx[k]] : def[k];
		/* knobs the point's engine (or mode) does not take are dropped,
		 * so such points collapse into one */
		const char *engine = p->k[kengine]->text;
		bool hds = !strcmp(p->k[kmode]->text, "hds");
		for (int k = 0; k < (int)sweep_knob_count(); k++) {
			const struct rx_knob *rk = knob_of((size_t)k);
			if (!rx_knob_applies(rk, engine) || (!hds && (rk->flags & RX_KNOB_HDS_ONLY)))
				p->k[k] = NULL;
		}
		rc = point_check(spec, p, err, errlen);
		if (rc < 0)
			break;
		point_key(p);
		/* a set of keys seen: no pass over the points per point */
		if (!json_object_get(seen, p->key)) {
			if (json_object_set_new(seen, p->key, json_true()) < 0) {
				rc = -ENOMEM;
				break;
			}
			p->index = n;
			n++;
		}
		/* odometer: the last knob turns fastest */
		for (int k = (int)sweep_knob_count() - 1; k >= 0; k--) {
			size_t lim = spec->axis[k].n ? spec->axis[k].n : 1;
			if (++idx[k] < lim)
				break;
			idx[k] = 0;
		}
	}
	json_decref(seen);
	if (rc < 0) {
		free(out);
		return rc;
	}
	*pts = out;
	*npts = n;
	return 0;
}

json_t *sweep_point_knobs(const struct sweep_point *p)
{
	json_t *o = json_object();
	for (int k = 0; o && k < (int)sweep_knob_count(); k++) {
		if (!p->k[k])
			continue;
		json_t *v = is_numeric((size_t)k) ? json_integer((json_int_t)p->k[k]->num)
						   : json_string(p->k[k]->text);
		if (json_object_set_new(o, sweep_knob_name((size_t)k), v) < 0) {
			json_decref(o);
			return NULL;
		}
	}
	return o;
}
