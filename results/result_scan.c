/* SPDX-License-Identifier: MIT */
/*
 * Reading run results without jansson's tree (rxray/result.h,
 * rxr_result_scan): a sweep of 100,000 trials spends most of its load
 * time building and freeing a json_t per number of the threads' stages,
 * only to copy each into a struct. This reader fills the struct straight
 * from the text and builds json_t only for the members a result keeps as
 * JSON (config, env, extra).
 *
 * It is a fast path, never a second judge: it accepts only what the
 * checked path (json_loadb with JSON_REJECT_DUPLICATES, then
 * rxr_result_from_json) accepts with the same result, and gives up
 * (NULL) on anything else - a syntax error, a duplicate or missing key,
 * a wrong type, a figure out of range, but also any string with an
 * escape or a byte outside printable ASCII, a "samples" member, deep
 * nesting. The caller then takes the checked path, which says what is
 * wrong in its own words. Numbers are converted as jansson converts them
 * (strtoll for integers, strtod for the rest, the same overflow rule).
 */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rxray/result.h"

#define SCAN_MAX_DEPTH 64 /* deeper: leave it to jansson */
#define SCAN_MAX_KEYS 64  /* keys of one natively read object, for the duplicate check */

struct scan {
	const char *p, *end;
};

struct span {
	const char *s;
	size_t n;
};

/* a number token: integer (no '.', 'e', 'E') or real, as jansson lexes it */
struct num {
	bool is_int;
	long long i;
	double d;
};

static void ws(struct scan *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
		c->p++;
}

static bool eat(struct scan *c, char ch)
{
	ws(c);
	if (c->p < c->end && *c->p == ch) {
		c->p++;
		return true;
	}
	return false;
}

static bool peek(struct scan *c, char ch)
{
	ws(c);
	return c->p < c->end && *c->p == ch;
}

/* A string of printable ASCII without escapes (anything else: give up). */
static bool str(struct scan *c, struct span *out)
{
	if (!eat(c, '"'))
		return false;
	const char *s = c->p;
	while (c->p < c->end && *c->p != '"') {
		unsigned char ch = (unsigned char)*c->p;
		if (ch < 0x20 || ch > 0x7e || ch == '\\')
			return false;
		c->p++;
	}
	if (c->p >= c->end)
		return false;
	out->s = s;
	out->n = (size_t)(c->p - s);
	c->p++;
	return true;
}

static bool is_digit(char ch)
{
	return ch >= '0' && ch <= '9';
}

static bool number(struct scan *c, struct num *out)
{
	ws(c);
	const char *s = c->p, *q = c->p;
	if (q < c->end && *q == '-')
		q++;
	if (q < c->end && *q == '0') {
		q++;
		if (q < c->end && is_digit(*q))
			return false;
	} else if (q < c->end && is_digit(*q)) {
		while (q < c->end && is_digit(*q))
			q++;
	} else {
		return false;
	}
	bool is_int = true;
	if (q < c->end && *q == '.') {
		is_int = false;
		q++;
		if (q >= c->end || !is_digit(*q))
			return false;
		while (q < c->end && is_digit(*q))
			q++;
	}
	if (q < c->end && (*q == 'e' || *q == 'E')) {
		is_int = false;
		q++;
		if (q < c->end && (*q == '+' || *q == '-'))
			q++;
		if (q >= c->end || !is_digit(*q))
			return false;
		while (q < c->end && is_digit(*q))
			q++;
	}
	/* the token must end before the buffer does: strto* need a stop */
	if (q >= c->end || (size_t)(q - s) > 64)
		return false;
	out->is_int = is_int;
	size_t nd = (size_t)(q - s) - (*s == '-');
	if (is_int && nd <= 18) {
		/* up to 18 digits cannot overflow: strtoll's value, without its cost */
		long long v = 0;
		for (const char *d = s + (*s == '-'); d < q; d++)
			v = v * 10 + (*d - '0');
		out->i = *s == '-' ? -v : v;
		out->d = (double)out->i;
		c->p = q;
		return true;
	}
	char tok[72];
	memcpy(tok, s, (size_t)(q - s));
	tok[q - s] = '\0';
	char *e;
	errno = 0;
	if (is_int) {
		out->i = strtoll(tok, &e, 10);
		if (errno == ERANGE)
			return false; /* jansson: "too big integer" */
		out->d = (double)out->i;
	} else {
		out->d = strtod(tok, &e);
		if (errno == ERANGE && out->d != 0)
			return false; /* jansson: "real number overflow" */
	}
	if (e != tok + (q - s))
		return false;
	c->p = q;
	return true;
}

static bool span_eq(struct span a, const char *lit)
{
	return a.n == strlen(lit) && !memcmp(a.s, lit, a.n);
}

/* Keys seen in one object: a repeat is what JSON_REJECT_DUPLICATES refuses. */
struct keys {
	struct span k[SCAN_MAX_KEYS];
	size_t n;
};

static bool key_new(struct keys *ks, struct span k)
{
	for (size_t i = 0; i < ks->n; i++)
		if (ks->k[i].n == k.n && ks->k[i].s[0] == k.s[0] && !memcmp(ks->k[i].s, k.s, k.n))
			return false;
	if (ks->n == SCAN_MAX_KEYS)
		return false;
	ks->k[ks->n++] = k;
	return true;
}

/* Any JSON value as a new json_t (jansson's types and conversions). */
static json_t *value(struct scan *c, int depth)
{
	if (depth > SCAN_MAX_DEPTH)
		return NULL;
	ws(c);
	if (c->p >= c->end)
		return NULL;
	char ch = *c->p;
	if (ch == '"') {
		struct span s;
		return str(c, &s) ? json_stringn_nocheck(s.s, s.n) : NULL;
	}
	if (ch == '{') {
		c->p++;
		json_t *o = json_object();
		if (!o || eat(c, '}'))
			return o;
		do {
			struct span k;
			char kb[256];
			json_t *v;
			if (!str(c, &k) || k.n >= sizeof(kb) || !eat(c, ':'))
				goto bad_obj;
			memcpy(kb, k.s, k.n);
			kb[k.n] = '\0';
			if (json_object_get(o, kb) || !(v = value(c, depth + 1)))
				goto bad_obj;
			if (json_object_set_new_nocheck(o, kb, v))
				goto bad_obj;
		} while (eat(c, ','));
		if (eat(c, '}'))
			return o;
	bad_obj:
		json_decref(o);
		return NULL;
	}
	if (ch == '[') {
		c->p++;
		json_t *a = json_array();
		if (!a || eat(c, ']'))
			return a;
		do {
			json_t *v = value(c, depth + 1);
			if (!v || json_array_append_new(a, v))
				goto bad_arr;
		} while (eat(c, ','));
		if (eat(c, ']'))
			return a;
	bad_arr:
		json_decref(a);
		return NULL;
	}
	static const struct {
		const char *lit;
		size_t n;
	} lits[] = {{"true", 4}, {"false", 5}, {"null", 4}};
	for (int i = 0; i < 3; i++)
		if ((size_t)(c->end - c->p) > lits[i].n && !memcmp(c->p, lits[i].lit, lits[i].n)) {
			c->p += lits[i].n;
			return i == 0 ? json_true() : i == 1 ? json_false() : json_null();
		}
	struct num n;
	if (!number(c, &n))
		return NULL;
	return n.is_int ? json_integer(n.i) : json_real(n.d);
}

/* A value the reader does not use: checked, then dropped. */
static bool skip(struct scan *c)
{
	json_t *v = value(c, 1);
	json_decref(v);
	return v != NULL;
}

/*
 * The members of one object, each handed to fn(key, arg) positioned at
 * its value; fn consumes the value. Keys are checked for repeats.
 */
typedef bool (*member_fn)(struct scan *c, struct span key, void *arg);

static bool object(struct scan *c, member_fn fn, void *arg)
{
	struct keys ks = {.n = 0};
	if (!eat(c, '{'))
		return false;
	if (eat(c, '}'))
		return true;
	do {
		struct span k;
		if (!str(c, &k) || !key_new(&ks, k) || !eat(c, ':') || !fn(c, k, arg))
			return false;
	} while (eat(c, ','));
	return eat(c, '}');
}

/* u64 (a non-negative integer), a number in [lo, hi] */
static bool get_u64(struct scan *c, uint64_t *out)
{
	struct num n;
	if (!number(c, &n) || !n.is_int || n.i < 0)
		return false;
	*out = (uint64_t)n.i;
	return true;
}

static bool get_range(struct scan *c, double lo, double hi, double *out)
{
	struct num n;
	if (!number(c, &n) || !(n.d >= lo && n.d <= hi))
		return false;
	*out = n.d;
	return true;
}

/* ------------------------------------------------------------ stages */

enum { F_COUNT = 1, F_PACKETS = 2, F_CYCLES = 4, F_CPP = 8, F_MIN = 16, F_MAX = 32, F_P50 = 64,
       F_P99 = 128, F_ALL = 255 };

struct stage_rd {
	struct rxr_stage_sum *s;
	unsigned seen;
	bool p90_int;
	uint64_t p90;
	bool laps;
};

static bool lapsums_member(struct scan *c, struct span k, void *arg)
{
	struct rxr_stage_sum *s = arg;
	if (span_eq(k, "packets_sq"))
		return get_range(c, 0, HUGE_VAL, &s->laps.sxx);
	if (span_eq(k, "cycles_x_packets"))
		return get_range(c, 0, HUGE_VAL, &s->laps.sxy);
	if (span_eq(k, "cycles_sq"))
		return get_range(c, 0, HUGE_VAL, &s->laps.syy);
	if (span_eq(k, "excluded_laps"))
		return get_u64(c, &s->excl_count);
	if (span_eq(k, "excluded_packets"))
		return get_u64(c, &s->excl_packets);
	if (span_eq(k, "excluded_cycles"))
		return get_u64(c, &s->excl_cycles);
	return skip(c);
}

static bool stage_member(struct scan *c, struct span k, void *arg)
{
	struct stage_rd *d = arg;
	struct rxr_stage_sum *s = d->s;
	static const struct {
		const char *name;
		size_t n;
		unsigned bit;
		size_t off;
	} u[] = {
		{"count", 5, F_COUNT, offsetof(struct rxr_stage_sum, count)},
		{"packets", 7, F_PACKETS, offsetof(struct rxr_stage_sum, packets)},
		{"cycles", 6, F_CYCLES, offsetof(struct rxr_stage_sum, cycles)},
		{"min", 3, F_MIN, offsetof(struct rxr_stage_sum, min)},
		{"max", 3, F_MAX, offsetof(struct rxr_stage_sum, max)},
		{"p50", 3, F_P50, offsetof(struct rxr_stage_sum, p50)},
		{"p99", 3, F_P99, offsetof(struct rxr_stage_sum, p99)},
	};
	for (size_t i = 0; i < sizeof(u) / sizeof(u[0]); i++)
		if (k.n == u[i].n && !memcmp(k.s, u[i].name, k.n)) {
			d->seen |= u[i].bit;
			return get_u64(c, (uint64_t *)(void *)((char *)s + u[i].off));
		}
	if (span_eq(k, "cycles_per_packet")) {
		d->seen |= F_CPP;
		return get_range(c, 0, 1e15, &s->cycles_per_packet);
	}
	if (span_eq(k, "p90")) {
		/* optional, but a count like the others when there (the checked
		 * path: get_u64) */
		d->p90_int = true;
		return get_u64(c, &d->p90);
	}
	if (span_eq(k, "lap_sums")) {
		/* the three sums are required once lap_sums is there */
		d->laps = true;
		s->laps.sxx = s->laps.sxy = s->laps.syy = -1;
		return object(c, lapsums_member, s) && s->laps.sxx >= 0 && s->laps.sxy >= 0 &&
		       s->laps.syy >= 0;
	}
	return skip(c);
}

struct thread_rd {
	struct rxr_thread_result *t;
	unsigned seen; /* 1 role, 2 core, 4 packets, 8 busy_cycles, 16 stages */
};

static bool stages_member(struct scan *c, struct span k, void *arg)
{
	struct rxr_thread_result *t = arg;
	char name[32];
	if (k.n >= sizeof(name))
		return false;
	memcpy(name, k.s, k.n);
	name[k.n] = '\0';
	int si = rxp_stage_from_name(name);
	if (si < 0)
		return false;
	struct rxr_stage_sum *s = &t->st[si];
	struct stage_rd d = {.s = s};
	if (!object(c, stage_member, &d) || d.seen != F_ALL)
		return false;
	s->p90 = d.p90_int ? d.p90 : s->p99;
	if (d.laps) {
		if (s->excl_count > s->count || s->excl_packets > s->packets ||
		    s->excl_cycles > s->cycles)
			return false;
		s->laps.n = (double)(s->count - s->excl_count);
		s->laps.sx = (double)(s->packets - s->excl_packets);
		s->laps.sy = (double)(s->cycles - s->excl_cycles);
		s->has_laps = true;
	}
	t->stage_mask |= 1u << si;
	return true;
}

static bool thread_member(struct scan *c, struct span k, void *arg)
{
	struct thread_rd *d = arg;
	struct rxr_thread_result *t = d->t;
	if (span_eq(k, "role")) {
		struct span s;
		if (!str(c, &s) || s.n >= sizeof(t->role))
			return false;
		memcpy(t->role, s.s, s.n);
		t->role[s.n] = '\0';
		d->seen |= 1;
		return true;
	}
	if (span_eq(k, "core")) {
		struct num n;
		if (!number(c, &n) || !n.is_int || n.i < -1 || n.i >= CPU_SETSIZE)
			return false;
		t->core = (int)n.i;
		d->seen |= 2;
		return true;
	}
	if (span_eq(k, "packets")) {
		d->seen |= 4;
		return get_u64(c, &t->packets);
	}
	if (span_eq(k, "busy_cycles")) {
		d->seen |= 8;
		return get_u64(c, &t->busy_cycles);
	}
	if (span_eq(k, "stages")) {
		d->seen |= 16;
		return object(c, stages_member, t);
	}
	if (span_eq(k, "samples"))
		return false; /* sampled laps: the checked path reads them */
	return skip(c);
}

static bool threads(struct scan *c, struct rxr_result *r)
{
	if (!eat(c, '['))
		return false;
	if (eat(c, ']'))
		return true;
	/*
	 * Read into a local array, then one allocation of the exact size, as
	 * the checked path sizes it: a thread is ~3 KB, 100,000 results are
	 * held, and growing allocations of that size make malloc consolidate
	 * its free lists each time.
	 */
	struct rxr_thread_result local[4];
	struct rxr_thread_result *t = local;
	size_t n = 0, cap = 4;
	bool ok = false;
	do {
		if (n == cap) {
			struct rxr_thread_result *nt =
			    malloc(cap * 2 * sizeof(*nt));
			if (!nt)
				goto out;
			memcpy(nt, t, n * sizeof(*nt));
			if (t != local)
				free(t);
			t = nt;
			cap *= 2;
		}
		memset(&t[n], 0, sizeof(t[n]));
		struct thread_rd d = {.t = &t[n++]};
		if (!object(c, thread_member, &d) || d.seen != 31)
			goto out;
	} while (eat(c, ','));
	if (!eat(c, ']') || !(r->threads = malloc(n * sizeof(*t))))
		goto out;
	memcpy(r->threads, t, n * sizeof(*t));
	r->nthreads = n;
	ok = true;
out:
	if (t != local)
		free(t);
	return ok;
}

/* ------------------------------------------------------- top level */

struct top_rd {
	struct rxr_result *r;
	unsigned seen; /* 1 schema, 2 config, 4 env, 8 counters, 16 rates, 32 clock, 64 threads */
	unsigned cseen, rseen, kseen;
	bool has_source;
};

static bool counters_member(struct scan *c, struct span k, void *arg)
{
	struct top_rd *d = arg;
	struct rxr_counters *ct = &d->r->c;
	static const char *const names[] = {"offered", "received", "out_of_buffer",
					    "nombuf", "app_dropped", "errors"};
	uint64_t *f[] = {&ct->offered, &ct->received, &ct->out_of_buffer,
			 &ct->nombuf, &ct->app_dropped, &ct->errors};
	for (int i = 0; i < 6; i++)
		if (span_eq(k, names[i])) {
			d->cseen |= 1u << i;
			return get_u64(c, f[i]);
		}
	return skip(c);
}

static bool rates_member(struct scan *c, struct span k, void *arg)
{
	struct top_rd *d = arg;
	struct rxr_result *r = d->r;
	if (span_eq(k, "offered_mpps")) {
		d->rseen |= 1;
		return get_range(c, 0, 1e6, &r->offered_mpps);
	}
	if (span_eq(k, "rx_mpps")) {
		d->rseen |= 2;
		return get_range(c, 0, 1e6, &r->rx_mpps);
	}
	if (span_eq(k, "loss")) {
		d->rseen |= 4;
		return get_range(c, 0, 1, &r->loss);
	}
	if (span_eq(k, "seconds"))
		return get_range(c, 0, 1e9, &r->seconds);
	return skip(c);
}

static bool clock_member(struct scan *c, struct span k, void *arg)
{
	struct top_rd *d = arg;
	struct rxr_result *r = d->r;
	if (span_eq(k, "source")) {
		struct span s;
		if (!str(c, &s))
			return false;
		size_t n = s.n < sizeof(r->clock.source) - 1 ? s.n : sizeof(r->clock.source) - 1;
		memcpy(r->clock.source, s.s, n);
		r->clock.source[n] = '\0';
		d->kseen |= 1;
		return true;
	}
	if (span_eq(k, "hz")) {
		d->kseen |= 2;
		return get_range(c, 0, 1e12, &r->clock.hz) && r->clock.hz > 0;
	}
	if (span_eq(k, "lap_cost_cycles")) {
		d->kseen |= 4;
		return get_range(c, 0, 1e9, &r->clock.lap_cost_cycles);
	}
	if (span_eq(k, "resolution_ns")) {
		/* optional: a number, else 0 (as the checked path reads it) */
		json_t *v = value(c, 1);
		if (!v)
			return false;
		r->clock.resolution_ns = json_is_number(v) ? json_number_value(v) : 0;
		json_decref(v);
		return true;
	}
	return skip(c);
}

static bool top_member(struct scan *c, struct span k, void *arg)
{
	struct top_rd *d = arg;
	struct rxr_result *r = d->r;
	if (span_eq(k, "schema")) {
		struct span s;
		d->seen |= 1;
		return str(c, &s) && span_eq(s, RXR_RUN_SCHEMA);
	}
	if (span_eq(k, "config") || span_eq(k, "env")) {
		bool cfg = k.n == 6;
		if (!peek(c, '{'))
			return false;
		json_t *o = value(c, 1);
		if (o && !cfg) { /* env in name order, as the checked path keeps it */
			json_t *byname = rxr_json_by_name(o);
			json_decref(o);
			o = byname;
		}
		if (!o)
			return false;
		json_decref(cfg ? r->config : r->env);
		*(cfg ? &r->config : &r->env) = o;
		d->seen |= cfg ? 2 : 4;
		return true;
	}
	if (span_eq(k, "counters")) {
		d->seen |= 8;
		return object(c, counters_member, d) && d->cseen == 63;
	}
	if (span_eq(k, "rates")) {
		d->seen |= 16;
		return object(c, rates_member, d) && d->rseen == 7;
	}
	if (span_eq(k, "clock")) {
		d->seen |= 32;
		return object(c, clock_member, d) && d->kseen == 7;
	}
	if (span_eq(k, "threads")) {
		d->seen |= 64;
		return threads(c, r);
	}
	/* any other member is kept, in document order, in extra */
	char kb[256];
	if (k.n >= sizeof(kb))
		return false;
	memcpy(kb, k.s, k.n);
	kb[k.n] = '\0';
	json_t *v = value(c, 1);
	return v && !json_object_set_new_nocheck(r->extra, kb, v);
}

int rxr_result_scan(const char *text, size_t len, size_t *used, struct rxr_result **out)
{
	struct scan c = {text, text + len};
	struct rxr_result *r = NULL;
	*out = NULL;
	int rc = rxr_result_open(&r);
	if (rc)
		return rc;
	struct top_rd d = {.r = r};
	char cf[8], cw[8]; /* the checked path names what is wrong */
	if (!object(&c, top_member, &d) || d.seen != 127 ||
	    rxr_result_check(r, cf, sizeof(cf), cw, sizeof(cw))) {
		rxr_result_free(r);
		return -EINVAL;
	}
	if (used) {
		*used = (size_t)(c.p - text);
	} else {
		ws(&c);
		if (c.p != c.end) {
			rxr_result_free(r);
			return -EINVAL;
		}
	}
	*out = r;
	return 0;
}

json_t *rxr_json_scan(const char *text, size_t len, size_t *used)
{
	struct scan c = {text, text + len};
	ws(&c);
	if (!peek(&c, '{') && !peek(&c, '['))
		return NULL;
	json_t *v = value(&c, 1);
	if (!v)
		return NULL;
	if (used) {
		*used = (size_t)(c.p - text);
	} else {
		ws(&c);
		if (c.p != c.end) {
			json_decref(v);
			return NULL;
		}
	}
	return v;
}

json_t *rxr_json_scan_runs(const char *text, size_t len, const char *const *run_keys, size_t nrun,
			   struct rxr_result **runs)
{
	struct scan c = {text, text + len};
	struct keys ks = {.n = 0};
	json_t *o = json_object();
	for (size_t i = 0; i < nrun; i++)
		runs[i] = NULL;
	if (!o || !eat(&c, '{'))
		goto fail;
	if (!eat(&c, '}')) {
		do {
			struct span k;
			char kb[256];
			if (!str(&c, &k) || !key_new(&ks, k) || k.n >= sizeof(kb) || !eat(&c, ':'))
				goto fail;
			size_t ri = nrun;
			for (size_t i = 0; i < nrun; i++)
				if (span_eq(k, run_keys[i]))
					ri = i;
			if (ri < nrun && peek(&c, '{')) {
				size_t used;
				if (rxr_result_scan(c.p, (size_t)(c.end - c.p), &used, &runs[ri]))
					goto fail;
				c.p += used;
				continue;
			}
			memcpy(kb, k.s, k.n);
			kb[k.n] = '\0';
			json_t *v = value(&c, 1);
			/* a run member is an object or null; anything else is the checked path's to name */
			if (!v || (ri < nrun && !json_is_null(v))) {
				json_decref(v);
				goto fail;
			}
			if (ri < nrun) {
				json_decref(v);
				continue;
			}
			if (json_object_set_new_nocheck(o, kb, v))
				goto fail;
		} while (eat(&c, ','));
		if (!eat(&c, '}'))
			goto fail;
	}
	ws(&c);
	if (c.p != c.end)
		goto fail;
	return o;
fail:
	for (size_t i = 0; i < nrun; i++) {
		rxr_result_free(runs[i]);
		runs[i] = NULL;
	}
	json_decref(o);
	return NULL;
}
