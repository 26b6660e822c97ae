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

#include "rxray/sweep.h"

/* Knobs every point names, with the value used when the spec does not. */
static const struct sweep_value def_engine = {"verbs", 0, {0, 0}};
static const struct sweep_value def_mode = {"single", 0, {0, 0}};
static const struct sweep_value def_frame = {"1064", 1064, {0, 0}};
static const struct sweep_value def_queues = {"1", 1, {0, 0}};
static const struct sweep_value def_ring = {"8192", 8192, {0, 0}};
static const struct sweep_value def_device = {"sim", 0, {0, 0}};

static const struct sweep_value *const defaults[SWEEP_K_COUNT] = {
	[SWEEP_K_ENGINE] = &def_engine, [SWEEP_K_MODE] = &def_mode,
	[SWEEP_K_FRAME] = &def_frame,   [SWEEP_K_QUEUES] = &def_queues,
	[SWEEP_K_RING] = &def_ring,     [SWEEP_K_DEVICE] = &def_device,
};

static bool is_numeric(enum sweep_knob k)
{
	switch (k) {
	case SWEEP_K_FRAME:
	case SWEEP_K_SPLIT:
	case SWEEP_K_QUEUES:
	case SWEEP_K_RING:
	case SWEEP_K_BATCH:
	case SWEEP_K_BURST:
	case SWEEP_K_BUFFERS:
	case SWEEP_K_MEMPOOL_CACHE:
		return true;
	default:
		return false;
	}
}

static bool dpdk_only(enum sweep_knob k)
{
	return k == SWEEP_K_BUFFERS || k == SWEEP_K_MEMPOOL_CACHE || k == SWEEP_K_FREE ||
	       k == SWEEP_K_DISCIPLINE;
}

bool sweep_point_is_sim(const struct sweep_point *p)
{
	const char *d = p->k[SWEEP_K_DEVICE]->text;
	return !strcmp(d, "sim") || !strncmp(d, "sim:", 4);
}

static int bad(const struct sweep_spec *s, const struct sweep_value *v, enum sweep_knob k,
	       char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static int bad(const struct sweep_spec *s, const struct sweep_value *v, enum sweep_knob k,
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

#define TXT(p, kn) ((p)->k[kn] ? (p)->k[kn]->text : "")
#define NUM(p, kn) ((p)->k[kn] ? (p)->k[kn]->num : 0)

static int point_check(const struct sweep_spec *s, const struct sweep_point *p, char *err,
		       size_t errlen)
{
	bool verbs = !strcmp(TXT(p, SWEEP_K_ENGINE), "verbs");
	bool hds = !strcmp(TXT(p, SWEEP_K_MODE), "hds");
	uint64_t frame = NUM(p, SWEEP_K_FRAME), ring = NUM(p, SWEEP_K_RING);
	const char *dev = TXT(p, SWEEP_K_DEVICE);

	if (verbs && !strncmp(dev, "dpdk:", 5))
		return bad(s, p->k[SWEEP_K_DEVICE], SWEEP_K_DEVICE, err, errlen,
			   "the verbs engine drives sim or mlx5 devices, not '%s'", dev);
	if (verbs && p->k[SWEEP_K_APP] && !strcmp(TXT(p, SWEEP_K_APP), "eal"))
		return bad(s, p->k[SWEEP_K_APP], SWEEP_K_APP, err, errlen,
			   "eal needs engine dpdk (this point's engine is verbs)");
	if (hds && p->k[SWEEP_K_SPLIT] && NUM(p, SWEEP_K_SPLIT) >= frame)
		return bad(s, p->k[SWEEP_K_SPLIT], SWEEP_K_SPLIT, err, errlen,
			   "%llu is not smaller than frame %llu (mode hds)",
			   (unsigned long long)NUM(p, SWEEP_K_SPLIT), (unsigned long long)frame);
	if (p->k[SWEEP_K_BATCH] && NUM(p, SWEEP_K_BATCH) > ring)
		return bad(s, p->k[SWEEP_K_BATCH], SWEEP_K_BATCH, err, errlen,
			   "%llu is larger than ring %llu (the batch would never fill)",
			   (unsigned long long)NUM(p, SWEEP_K_BATCH), (unsigned long long)ring);
	if (p->k[SWEEP_K_BURST] && NUM(p, SWEEP_K_BURST) > ring)
		return bad(s, p->k[SWEEP_K_BURST], SWEEP_K_BURST, err, errlen,
			   "%llu is larger than ring %llu", (unsigned long long)NUM(p, SWEEP_K_BURST),
			   (unsigned long long)ring);
	if (p->k[SWEEP_K_BUFFERS] && NUM(p, SWEEP_K_BUFFERS)) {
		uint64_t batch = p->k[SWEEP_K_BATCH] ? NUM(p, SWEEP_K_BATCH) : 64;
		if (NUM(p, SWEEP_K_BUFFERS) < ring + batch)
			return bad(s, p->k[SWEEP_K_BUFFERS], SWEEP_K_BUFFERS, err, errlen,
				   "%llu is below ring + batch = %llu (the ring could never be "
				   "refilled)",
				   (unsigned long long)NUM(p, SWEEP_K_BUFFERS),
				   (unsigned long long)(ring + batch));
		/* rte_mempool_create refuses a cache larger than n / 1.5 */
		if (p->k[SWEEP_K_MEMPOOL_CACHE] &&
		    NUM(p, SWEEP_K_MEMPOOL_CACHE) * 3 > NUM(p, SWEEP_K_BUFFERS) * 2)
			return bad(s, p->k[SWEEP_K_MEMPOOL_CACHE], SWEEP_K_MEMPOOL_CACHE, err,
				   errlen, "%llu is above buffers / 1.5 (DPDK refuses the pool)",
				   (unsigned long long)NUM(p, SWEEP_K_MEMPOOL_CACHE));
	}
	if (hds && p->k[SWEEP_K_DISCIPLINE] && !strcmp(TXT(p, SWEEP_K_DISCIPLINE), "vector"))
		return bad(s, p->k[SWEEP_K_DISCIPLINE], SWEEP_K_DISCIPLINE, err, errlen,
			   "vector needs mode single (buffer split forces the scalar routine)");
	return 0;
}

static void point_key(struct sweep_point *p)
{
	size_t off = 0;
	p->key[0] = '\0';
	for (int k = 0; k < SWEEP_K_COUNT; k++) {
		if (!p->k[k])
			continue;
		int n = snprintf(p->key + off, sizeof(p->key) - off, "%s%s=%s", off ? "," : "",
				 sweep_knob_name((enum sweep_knob)k), p->k[k]->text);
		if (n < 0 || (size_t)n >= sizeof(p->key) - off)
			break;
		off += (size_t)n;
	}
}

int sweep_matrix_expand(const struct sweep_spec *spec, struct sweep_point **pts, size_t *npts,
			char *err, size_t errlen)
{
	size_t total = 1;
	for (int k = 0; k < SWEEP_K_COUNT; k++) {
		size_t n = spec->axis[k].n ? spec->axis[k].n : 1;
		if (total > SWEEP_MAX_POINTS / n) {
			snprintf(err, errlen, "%s:%d:%d: %s: the matrix has more than %d points",
				 spec->path, spec->axis[k].mark.line, spec->axis[k].mark.column,
				 sweep_knob_name((enum sweep_knob)k), SWEEP_MAX_POINTS);
			return -EINVAL;
		}
		total *= n;
	}
	struct sweep_point *out = calloc(total, sizeof(*out));
	if (!out)
		return -ENOMEM;
	size_t idx[SWEEP_K_COUNT] = {0}, n = 0;
	int rc = 0;
	for (size_t i = 0; i < total; i++) {
		struct sweep_point *p = &out[n];
		memset(p, 0, sizeof(*p));
		for (int k = 0; k < SWEEP_K_COUNT; k++)
			p->k[k] = spec->axis[k].n ? &spec->axis[k].v[idx[k]] : defaults[k];
		bool verbs = !strcmp(p->k[SWEEP_K_ENGINE]->text, "verbs");
		for (int k = 0; k < SWEEP_K_COUNT; k++)
			if (verbs && dpdk_only((enum sweep_knob)k))
				p->k[k] = NULL;
		if (strcmp(p->k[SWEEP_K_MODE]->text, "hds"))
			p->k[SWEEP_K_SPLIT] = NULL;
		rc = point_check(spec, p, err, errlen);
		if (rc < 0)
			break;
		point_key(p);
		bool dup = false;
		for (size_t j = 0; j < n && !dup; j++)
			dup = !strcmp(out[j].key, p->key);
		if (!dup) {
			p->index = n;
			n++;
		}
		/* odometer: the last knob turns fastest */
		for (int k = SWEEP_K_COUNT - 1; k >= 0; k--) {
			size_t lim = spec->axis[k].n ? spec->axis[k].n : 1;
			if (++idx[k] < lim)
				break;
			idx[k] = 0;
		}
	}
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
	for (int k = 0; o && k < SWEEP_K_COUNT; k++) {
		if (!p->k[k])
			continue;
		json_t *v = is_numeric((enum sweep_knob)k) ? json_integer((json_int_t)p->k[k]->num)
							    : json_string(p->k[k]->text);
		if (json_object_set_new(o, sweep_knob_name((enum sweep_knob)k), v) < 0) {
			json_decref(o);
			return NULL;
		}
	}
	return o;
}
