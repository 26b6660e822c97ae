/* SPDX-License-Identifier: MIT */
/* The run result: "rxray.run/1" writer and reader (jansson). */
#include <ctype.h>
#include <dlfcn.h>
#include <sched.h>
#include <stdint.h>
#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "rxray/afile.h"
#include "rxray/inject.h"
#include "rxray/input.h"
#include "rxray/result.h"
#include "rxray/util.h"

/* Cap on sampled laps carried per thread, so a result stays small. */
#define RESULT_MAX_SAMPLES 4096

static const char *const required_keys[] = {"schema", "config", "env", "counters",
					     "rates", "clock", "threads"};

int rxr_result_open(struct rxr_result **out)
{
	*out = NULL;
	struct rxr_result *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->config = json_object();
	r->env = json_object();
	r->extra = json_object();
	if (!r->config || !r->env || !r->extra) {
		rxr_result_free(r);
		return -ENOMEM;
	}
	snprintf(r->clock.source, sizeof(r->clock.source), "unknown");
	*out = r;
	return 0;
}

void rxr_result_free(struct rxr_result *r)
{
	if (!r)
		return;
	json_decref(r->config);
	json_decref(r->env);
	json_decref(r->extra);
	for (size_t i = 0; i < r->nthreads; i++)
		free(r->threads[i].samples);
	free(r->threads);
	free(r);
}

static struct rxr_thread_result *add_thread(struct rxr_result *r)
{
	struct rxr_thread_result *t = realloc(r->threads, (r->nthreads + 1) * sizeof(*t));
	if (!t)
		return NULL;
	r->threads = t;
	t = &r->threads[r->nthreads++];
	memset(t, 0, sizeof(*t));
	return t;
}

int rxr_result_add_thread(struct rxr_result *r, const struct rxr_thread_result *src)
{
	struct rxr_thread_result *t = add_thread(r);
	if (!t)
		return -ENOMEM;
	*t = *src;
	t->samples = NULL;
	t->nsamples = 0;
	return 0;
}

json_t *rxr_json_real_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

json_t *rxr_json_by_name(json_t *j)
{
	json_t *o = NULL, *v;
	if (json_is_array(j)) {
		size_t i;
		o = json_array();
		json_array_foreach(j, i, v)
			if (!o || json_array_append_new(o, rxr_json_by_name(v)))
				goto fail;
		return o;
	}
	if (!json_is_object(j))
		return json_incref(j);
	size_t n = json_object_size(j), i = 0;
	const char **names = malloc((n ? n : 1) * sizeof(*names));
	const char *k;
	o = json_object();
	if (!names || !o) {
		free(names);
		goto fail;
	}
	json_object_foreach(j, k, v)
		names[i++] = k;
	qsort(names, n, sizeof(*names), name_cmp);
	for (i = 0; i < n; i++)
		if (json_object_set_new_nocheck(o, names[i],
						rxr_json_by_name(json_object_get(j, names[i])))) {
			free(names);
			goto fail;
		}
	free(names);
	return o;
fail:
	json_decref(o);
	return NULL;
}

/*
 * Inject A/B (rxp_probe_set_inject_ab): per injected, gated (op_gate: the
 * operation delays of its laps, rxp_probe_set_op_gate) or observed stage
 * of the thread, its two halves' laps with packets, and the difference per
 * packet two ways: the halves' means over the laps a fit keeps (a lap
 * longer than RXP_LAPFIT_MAX_TICKS is a preemption, which would land in
 * one half by chance), and the paired laps' median and trimmed mean
 * (probe.h "Inject A/B pairs"; pairs_unmatched: a period's first laps left
 * without a partner: another packet count, none in the other half, a wait
 * before one of the two only). k: the injection per packet; 0 on an
 * observed or gated stage, and on an A/A run's stage (`--inject STAGE=0`,
 * RXP_INJECT_NULL: the turns kept, nothing spun). An observed stage also
 * gives same_burst: its pairs of laps in the injected lap's own burst only
 * (rxp_probe.abp); an injected one work, its pairs over its own work (the
 * spin left out), and added_by_parts: that plus what its spins ran per
 * packet, less the dropped credit. Appended to extra.inject_ab.
 */
static json_t *ab_half(uint64_t laps, uint64_t pk, uint64_t cyc, uint64_t xl, uint64_t xp,
		       uint64_t xc)
{
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}", "laps", (json_int_t)laps, "packets",
			 (json_int_t)pk, "cycles", (json_int_t)cyc, "kept_laps",
			 (json_int_t)(laps - xl), "kept_packets", (json_int_t)(pk - xp),
			 "kept_cycles", (json_int_t)(cyc - xc));
}

/* A pairs' summary (the second slot of rxp_probe.abp: an observed stage's
 * same_burst, an injected one's work); blank: the figures NAN (sparse).
 * *tm gets the trimmed mean (may be NULL). */
static json_t *ab_pairs_json(const struct rxp_ab_pairs *q, bool blank, double *tm)
{
	uint64_t pairs = 0, kept = 0;
	double med = rxp_ab_pairs_median(q, &pairs);
	double mean = rxp_ab_pairs_trimmed_mean(q, &kept);
	if (blank)
		med = mean = NAN;
	if (tm)
		*tm = mean;
	return json_pack("{s:I, s:I, s:o, s:o, s:I}", "pairs", (json_int_t)pairs, "pairs_unmatched",
			 (json_int_t)q->unmatched, "added_median_cycles_per_packet",
			 rxr_json_real_or_null(med), "added_trimmed_cycles_per_packet",
			 rxr_json_real_or_null(mean), "pairs_kept", (json_int_t)kept);
}

static int add_inject_ab(struct rxr_result *r, const struct rxp_probe *p)
{
	json_t *arr = json_object_get(r->extra, "inject_ab");
	if (!arr) {
		arr = json_array();
		if (!arr || json_object_set_new(r->extra, "inject_ab", arr))
			return -ENOMEM;
	}
	for (int s = 0; s < RXP_ST_COUNT; s++) {
		const struct rxp_acc *i = &p->ab[s], *pl = &p->ab[RXP_ST_COUNT + s];
		if (!p->inject[s] || !(i->count + pl->count))
			continue;
		double ip = (double)(i->packets - i->excl_packets),
		       pp = (double)(pl->packets - pl->excl_packets);
		double added = ip > 0 && pp > 0 ? (double)(i->cycles - i->excl_cycles) / ip -
							(double)(pl->cycles - pl->excl_cycles) / pp
						: NAN;
		/* observed: not injected, its laps split by the injected
		 * stage's half (RXP_INJECT_OBSERVE) */
		bool observed = p->inject[s] == RXP_INJECT_OBSERVE;
		uint64_t pairs = 0, kept = 0;
		double med = rxp_ab_pairs_median(&p->abp[s], &pairs);
		double tm = rxp_ab_pairs_trimmed_mean(&p->abp[s], &kept);
		/* an observed stage that laps more often than the injected one
		 * (per burst vs per batch) pairs only across the half's change:
		 * its few pairs are the laps at the boundary, not a sample, and
		 * the halves' means are its figure */
		uint64_t tried = pairs + p->abp[s].unmatched;
		bool sparse = observed && tried * 2 < (i->count < pl->count ? i->count : pl->count);
		if (sparse)
			med = tm = NAN;
		bool gate = p->inject[s] == RXP_INJECT_GATE;
		/* what the spins themselves ran per packet of the injected
		 * half: K when the spin is right, so a figure off K with this
		 * at K is the stage's own work, not the injection's count */
		double spun = !observed && !gate && p->inject_spun_pkts[s]
				  ? (double)p->inject_spun[s] / (double)p->inject_spun_pkts[s]
				  : NAN;
		json_t *o = json_pack(
		    "{s:s, s:i, s:s, s:I, s:b, s:b, s:o, s:o, s:o, s:I, s:I, s:o, s:o, s:I, s:f}",
		    "role", p->role, "core", p->core, "stage", rxp_stage_name((enum rxp_stage)s),
		    "k", (json_int_t)rxp_inject_ticks(p->inject[s]), "observed", observed,
		    "op_gate", gate, "injected",
		    ab_half(i->count, i->packets, i->cycles, i->excl_count, i->excl_packets,
			    i->excl_cycles),
		    "plain",
		    ab_half(pl->count, pl->packets, pl->cycles, pl->excl_count, pl->excl_packets,
			    pl->excl_cycles),
		    "added_cycles_per_packet", rxr_json_real_or_null(added), "pairs",
		    (json_int_t)pairs, "pairs_unmatched", (json_int_t)p->abp[s].unmatched,
		    "added_median_cycles_per_packet", rxr_json_real_or_null(med),
		    "added_trimmed_cycles_per_packet", rxr_json_real_or_null(tm), "pairs_kept",
		    (json_int_t)kept, "trim_cycles_per_packet", rxp_ab_pairs_trim(&p->abp[s]));
		if (!o)
			return -ENOMEM;
		/* over-runs past RXP_INJECT_STRETCH_MAX per packet, dropped
		 * (a preemption), not repaid: what the stage grew beyond K x
		 * packets, per injected-half packet, and the spins (laps) */
		double dropped = !observed && !gate && p->inject_spun_pkts[s]
				     ? (double)p->inject_dropped[s] / (double)p->inject_spun_pkts[s]
				     : NAN;
		if (json_object_set_new(o, "spun_cycles_per_packet", rxr_json_real_or_null(spun)) ||
		    json_object_set_new(o, "dropped_credit_cycles_per_packet",
					rxr_json_real_or_null(dropped)) ||
		    json_object_set_new(o, "pairs_unmatched_wait",
					json_integer((json_int_t)p->abp[s].unmatched_wait)) ||
		    json_object_set_new(o, "dropped_credit_spins",
					json_integer((json_int_t)p->inject_drops[s]))) {
			json_decref(o);
			return -ENOMEM;
		}
		/* an observed stage: its pairs again, of the laps in the
		 * spin's own burst only (after the injected lap, before the
		 * burst ends): a move here is the burst's, one in the laps of
		 * the bursts after it only is the next burst's state (the
		 * producer got further while the spin ran) */
		if (observed) {
			json_t *sb = ab_pairs_json(&p->abp[RXP_ST_COUNT + s], sparse, NULL);
			if (!sb || json_object_set_new(o, "same_burst", sb)) {
				json_decref(o);
				return -ENOMEM;
			}
		}
		/* an injected stage: its own work paired without the spin, and
		 * the stage's growth by parts: that change plus what the spins
		 * ran per packet net of the stretches dropped. The pairs of
		 * whole laps carry each spin's over-run into the next spin's
		 * credit, across laps the pairing keeps or leaves out alike;
		 * the parts do not: the spins' sum is over every injected
		 * lap, the pairs see the work alone */
		if (!observed && !gate) {
			double wtm;
			json_t *w = ab_pairs_json(&p->abp[RXP_ST_COUNT + s], false, &wtm);
			double net = isfinite(spun) ? spun - (isfinite(dropped) ? dropped : 0)
				     : p->inject[s] == RXP_INJECT_NULL ? 0
								       : NAN;
			double parts = wtm + net;
			if (!w || json_object_set_new(o, "work", w) ||
			    json_object_set_new(o, "added_by_parts_cycles_per_packet",
						rxr_json_real_or_null(parts))) {
				json_decref(o);
				return -ENOMEM;
			}
		}
		if (json_array_append_new(arr, o))
			return -ENOMEM;
	}
	return 0;
}

int rxr_result_add_probe(struct rxr_result *r, const struct rxp_probe *p)
{
	if (p->ab) {
		int rc = add_inject_ab(r, p);
		if (rc < 0)
			return rc;
	}
	struct rxr_thread_result *t = add_thread(r);
	if (!t)
		return -ENOMEM;
	snprintf(t->role, sizeof(t->role), "%s", p->role);
	t->core = p->core;
	t->busy_cycles = rxp_probe_busy_cycles(p);
	t->packets = p->busy_packets;
	if (!t->packets) /* a thread that never closed a burst: best evidence */
		for (int s = 0; s < RXP_ST_COUNT; s++)
			if (!rxp_stage_is_wait(s) && p->st[s].packets > t->packets)
				t->packets = p->st[s].packets;
	for (int s = 0; s < RXP_ST_COUNT; s++) {
		const struct rxp_acc *a = &p->st[s];
		if (!a->count)
			continue;
		struct rxr_stage_sum *ss = &t->st[s];
		ss->count = a->count;
		ss->packets = a->packets;
		ss->cycles = a->cycles;
		ss->min = a->min;
		ss->max = a->max;
		ss->p50 = rxp_acc_percentile(a, 0.50);
		ss->p90 = rxp_acc_percentile(a, 0.90);
		ss->p99 = rxp_acc_percentile(a, 0.99);
		uint64_t den = t->packets ? t->packets : a->packets;
		ss->cycles_per_packet = den ? (double)a->cycles / (double)den : 0;
		rxp_acc_sums(a, &ss->laps);
		ss->excl_count = a->excl_count;
		ss->excl_packets = a->excl_packets;
		ss->excl_cycles = a->excl_cycles;
		ss->has_laps = true;
		t->stage_mask |= 1u << s;
	}
	if (p->ring_size && p->ring_head) {
		size_t want = p->ring_head < p->ring_size ? p->ring_head : p->ring_size;
		if (want > RESULT_MAX_SAMPLES)
			want = RESULT_MAX_SAMPLES;
		t->samples = malloc(want * sizeof(*t->samples));
		if (!t->samples)
			return -ENOMEM;
		t->nsamples = rxp_probe_samples(p, t->samples, want);
	}
	return 0;
}

void rxr_result_set_clock(struct rxr_result *r)
{
	const struct rxp_clock *c = rxp_clock_get();
	snprintf(r->clock.source, sizeof(r->clock.source), "%s",
		 rxp_clock_source_name(c->source));
	r->clock.hz = c->hz;
	r->clock.lap_cost_cycles = c->lap_cost_cycles;
	r->clock.resolution_ns = c->resolution_ns;
}

void rxr_result_set_rates(struct rxr_result *r, double seconds)
{
	r->seconds = seconds;
	if (seconds > 0) {
		r->offered_mpps = (double)r->c.offered / seconds / 1e6;
		r->rx_mpps = (double)r->c.received / seconds / 1e6;
	}
	r->loss = r->c.offered ? 1.0 - (double)r->c.received / (double)r->c.offered : 0;
}

static void read_first_line(const char *path, const char *key, char *out, size_t len)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	char line[512];
	while (fgets(line, sizeof(line), f)) {
		if (key && strncmp(line, key, strlen(key)))
			continue;
		char *v = key ? strchr(line, ':') : line;
		if (!v)
			continue;
		v += key ? 1 : 0;
		while (*v == ' ' || *v == '\t')
			v++;
		v[strcspn(v, "\n")] = '\0';
		snprintf(out, len, "%s", v);
		break;
	}
	fclose(f);
}

typedef int (*cu_init_fn)(unsigned);
typedef int (*cu_count_fn)(int *);
typedef int (*cu_get_fn)(int *, int);
typedef int (*cu_name_fn)(char *, int, int);

/* GPU names through the driver, loaded only if present (never linked). */
static json_t *gpu_list(void)
{
	json_t *arr = json_array();
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return arr;
	cu_init_fn init = (cu_init_fn)(uintptr_t)dlsym(h, "cuInit");
	cu_count_fn count = (cu_count_fn)(uintptr_t)dlsym(h, "cuDeviceGetCount");
	cu_get_fn get = (cu_get_fn)(uintptr_t)dlsym(h, "cuDeviceGet");
	cu_name_fn name = (cu_name_fn)(uintptr_t)dlsym(h, "cuDeviceGetName");
	int n = 0;
	if (init && count && get && name && init(0) == 0 && count(&n) == 0) {
		for (int i = 0; i < n; i++) {
			int dev;
			char nm[128] = "";
			if (get(&dev, i) == 0 && name(nm, (int)sizeof(nm), dev) == 0)
				json_array_append_new(arr, json_string(nm));
		}
	}
	dlclose(h);
	return arr;
}

void rxr_result_fill_env(struct rxr_result *r)
{
	struct utsname u;
	if (!uname(&u)) {
		json_object_set_new(r->env, "kernel", json_string(u.release));
		json_object_set_new(r->env, "machine", json_string(u.machine));
		json_object_set_new(r->env, "hostname", json_string(u.nodename));
	}
	char cpu[256] = "";
	read_first_line("/proc/cpuinfo", "model name", cpu, sizeof(cpu));
	if (!cpu[0])
		read_first_line("/proc/cpuinfo", "CPU part", cpu, sizeof(cpu));
	json_object_set_new(r->env, "cpu", json_string(cpu[0] ? cpu : "unknown"));
	json_object_set_new(r->env, "cores_online", json_integer(sysconf(_SC_NPROCESSORS_ONLN)));
	json_object_set_new(r->env, "cores_available", json_integer(rxu_cores_available()));
	const struct rxp_clock *c = rxp_clock_get();
	json_object_set_new(r->env, "clock_note", json_string(c->note));
	json_object_set_new(r->env, "tsc_invariant", json_boolean(rxp_clock_tsc_invariant()));
	/* what this build was configured with; the NULL row keeps the table non-empty */
	static const struct {
		const char *key, *value;
	} built_with[] = {
#ifdef RXRAY_BUILD_PROBES
	    {"probes", RXRAY_BUILD_PROBES},
#endif
#ifdef RXRAY_RDMA_CORE_VERSION
	    {"rdma_core", RXRAY_RDMA_CORE_VERSION},
#endif
#ifdef RXRAY_CUDA_VERSION
	    {"cuda", RXRAY_CUDA_VERSION},
#endif
	    {NULL, NULL},
	};
	for (size_t i = 0; built_with[i].key; i++)
		json_object_set_new(r->env, built_with[i].key, json_string(built_with[i].value));
#ifdef RXRAY_DPDK_VERSION
	/* an object for every engine, as the dpdk engine writes it (version,
	 * eal_args, ...): one type per env field (rxr_result_check) */
	json_object_set_new(r->env, "dpdk", json_pack("{s:s}", "version", RXRAY_DPDK_VERSION));
#endif
	json_object_set_new(r->env, "gpu", gpu_list());
	time_t now = time(NULL);
	struct tm tm;
	char date[40];
	if (gmtime_r(&now, &tm) && strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", &tm))
		json_object_set_new(r->env, "date", json_string(date));
}

static json_t *stage_to_json_base(const struct rxr_stage_sum *s);

const char *rxr_lapfit_basis_name(enum rxp_lapfit_basis b)
{
	switch (b) {
	case RXP_LAPFIT_LINEAR: return "linear";
	case RXP_LAPFIT_PER_PACKET: return "per_packet";
	case RXP_LAPFIT_NONE: break;
	}
	return "none";
}

/* The cost model's lap sums and fit (added to a stage object). */
static int stage_laps_to_json(json_t *o, const struct rxr_stage_sum *s)
{
	struct rxp_lapfit f;
	rxp_lapsums_fit(&s->laps, &f);
	json_t *sums = json_pack("{s:f,s:f,s:f,s:I,s:I,s:I}", "packets_sq", s->laps.sxx,
				 "cycles_x_packets", s->laps.sxy, "cycles_sq", s->laps.syy,
				 "excluded_laps", (json_int_t)s->excl_count, "excluded_packets",
				 (json_int_t)s->excl_packets, "excluded_cycles",
				 (json_int_t)s->excl_cycles);
	json_t *fit = json_pack("{s:s,s:f,s:f,s:f}", "basis", rxr_lapfit_basis_name(f.basis), "a",
				f.a, "b", f.b, "r2", f.r2);
	if (!sums || !fit || json_object_set_new(o, "lap_sums", sums) ||
	    json_object_set_new(o, "lap_fit", fit))
		return -ENOMEM;
	return 0;
}

static json_t *stage_to_json(const struct rxr_stage_sum *s)
{
	json_t *o = stage_to_json_base(s);
	if (o && s->has_laps && stage_laps_to_json(o, s) < 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *stage_to_json_base(const struct rxr_stage_sum *s)
{
	return json_pack("{s:I,s:I,s:I,s:f,s:I,s:I,s:I,s:I,s:I}", "count", (json_int_t)s->count,
			 "packets", (json_int_t)s->packets, "cycles", (json_int_t)s->cycles,
			 "cycles_per_packet", s->cycles_per_packet, "min", (json_int_t)s->min,
			 "max", (json_int_t)s->max, "p50", (json_int_t)s->p50, "p90",
			 (json_int_t)s->p90, "p99", (json_int_t)s->p99);
}

static json_t *samples_to_json(const struct rxr_thread_result *t)
{
	json_t *data = json_array();
	for (size_t i = 0; data && i < t->nsamples; i++) {
		const struct rxp_sample *s = &t->samples[i];
		json_array_append_new(data, json_pack("[I,I,s,I]", (json_int_t)s->start,
						      (json_int_t)s->cycles,
						      rxp_stage_name(s->stage) ? rxp_stage_name(s->stage) : "?",
						      (json_int_t)s->seq));
	}
	return json_pack("{s:[s,s,s,s],s:o}", "fields", "start", "cycles", "stage", "seq", "data",
			 data);
}

/* Laps this short are a few clock ticks each: their min/max/percentiles
 * are quantisation, only the summed cycles over many laps carry meaning. */
static bool stage_below_resolution(const struct rxr_stage_sum *s)
{
	return s->count && s->cycles < (uint64_t)RXR_RESULT_MIN_LAP_TICKS * s->count;
}

json_t *rxr_result_to_json(const struct rxr_result *r)
{
	size_t coarse = 0; /* stages flagged below_resolution */
	json_t *threads = json_array();
	if (!threads)
		return NULL;
	for (size_t i = 0; i < r->nthreads; i++) {
		const struct rxr_thread_result *t = &r->threads[i];
		json_t *stages = json_object();
		for (int s = 0; s < RXP_ST_COUNT; s++)
			if (t->stage_mask & (1u << s)) {
				json_t *js = stage_to_json(&t->st[s]);
				if (js && stage_below_resolution(&t->st[s])) {
					json_object_set_new(js, "below_resolution", json_true());
					coarse++;
				}
				json_object_set_new(stages, rxp_stage_name((enum rxp_stage)s), js);
			}
		json_t *jt = json_pack("{s:s,s:i,s:I,s:I,s:f,s:o}", "role", t->role, "core", t->core,
				       "packets", (json_int_t)t->packets, "busy_cycles",
				       (json_int_t)t->busy_cycles, "cycles_per_packet",
				       rxr_thread_cycles_per_packet(t), "stages", stages);
		if (jt && t->nsamples)
			json_object_set_new(jt, "samples", samples_to_json(t));
		json_array_append_new(threads, jt);
	}
	const struct rxr_counters *c = &r->c;
	json_t *doc = json_pack(
		"{s:s,s:O,s:O,s:{s:I,s:I,s:I,s:I,s:I,s:I,s:b},s:{s:f,s:f,s:f,s:f},"
		"s:{s:s,s:f,s:f},s:o}",
		"schema", RXR_RUN_SCHEMA, "config", r->config, "env", r->env, "counters", "offered",
		(json_int_t)c->offered, "received", (json_int_t)c->received, "out_of_buffer",
		(json_int_t)c->out_of_buffer, "nombuf", (json_int_t)c->nombuf, "app_dropped",
		(json_int_t)c->app_dropped, "errors", (json_int_t)c->errors, "conserved",
		rxr_counters_conserved(c), "rates", "offered_mpps", r->offered_mpps, "rx_mpps",
		r->rx_mpps, "loss", r->loss, "seconds", r->seconds, "clock", "source",
		r->clock.source, "hz", r->clock.hz, "lap_cost_cycles", r->clock.lap_cost_cycles,
		"threads", threads);
	if (!doc)
		return NULL;
	json_t *jclock = json_object_get(doc, "clock");
	if (r->clock.resolution_ns > 0)
		json_object_set_new(jclock, "resolution_ns", json_real(r->clock.resolution_ns));
	if (coarse)
		json_object_set_new(
			jclock, "note",
			json_sprintf("%zu stage(s) marked below_resolution: mean lap under %d ticks, "
				     "below the clock's resolution; their per-lap figures (min, max, "
				     "p50, p90, p99) mean nothing, only the burst totals (cycles, "
				     "packets, cycles_per_packet) count",
				     coarse, RXR_RESULT_MIN_LAP_TICKS));
	const char *k;
	json_t *v;
	json_object_foreach(r->extra, k, v)
		if (!json_object_get(doc, k))
			json_object_set(doc, k, v);
	return doc;
}

int rxr_result_write(const struct rxr_result *r, const char *path)
{
	json_t *doc = rxr_result_to_json(r);
	if (!doc)
		return -ENOMEM;
	/* the project's one writer: stdout for "-", devices written through, else atomic */
	struct rxr_afile af;
	int rc = rxr_afile_open(&af, path);
	if (rc)
		goto out;
	if (json_dumpf(doc, af.f, JSON_INDENT(2) | JSON_REAL_PRECISION(10)) || fputc('\n', af.f) == EOF) {
		/* why the stream failed (a full disk, the file size limit), not just EIO */
		rc = rxr_afile_write_error(&af);
		rxr_afile_abort(&af);
		goto out;
	}
	rc = rxr_afile_commit(&af);
out:
	json_decref(doc);
	return rc;
}

/* ------------------------------------------------------------- reading */

struct rd {
	const char *src;
	int line;
	char *err;
	size_t errlen;
	int rc; /* -EINVAL for bad input unless set to -ENOMEM */
};

static void rd_fail(struct rd *d, const char *field, const char *fmt, ...)
{
	char what[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (!d->err || !d->errlen)
		return;
	if (d->line > 0)
		snprintf(d->err, d->errlen, "%s:%d: %s: %s", d->src, d->line, field, what);
	else
		snprintf(d->err, d->errlen, "%s: %s: %s", d->src, field, what);
}

static const char *type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "object";
	case JSON_ARRAY: return "array";
	case JSON_STRING: return "string";
	case JSON_INTEGER: return "integer";
	case JSON_REAL: return "number";
	case JSON_TRUE:
	case JSON_FALSE: return "boolean";
	case JSON_NULL: return "null";
	}
	return "?";
}

static json_t *get_typed(struct rd *d, const json_t *obj, const char *path, const char *key,
			 json_type want)
{
	json_t *v = json_object_get(obj, key);
	if (v && (json_typeof(v) == want || (want == JSON_REAL && json_typeof(v) == JSON_INTEGER)))
		return v; /* the common case: no message to build */
	char field[128];
	snprintf(field, sizeof(field), "%s%s%s", path, *path ? "." : "", key);
	if (!v) {
		rd_fail(d, field, "missing");
		return NULL;
	}
	bool ok = json_typeof(v) == want ||
		  (want == JSON_REAL && json_typeof(v) == JSON_INTEGER);
	if (!ok) {
		rd_fail(d, field, "expected %s, got %s",
			want == JSON_REAL ? "number" : want == JSON_INTEGER ? "integer"
						     : want == JSON_OBJECT ? "object"
						     : want == JSON_ARRAY ? "array" : "string",
			type_name(v));
		return NULL;
	}
	return v;
}

static int get_u64(struct rd *d, const json_t *obj, const char *path, const char *key,
		   uint64_t *out)
{
	json_t *v = get_typed(d, obj, path, key, JSON_INTEGER);
	if (!v)
		return -1;
	if (json_integer_value(v) < 0) {
		rd_fail(d, path, "%s: negative", key);
		return -1;
	}
	*out = (uint64_t)json_integer_value(v);
	return 0;
}

static int get_num(struct rd *d, const json_t *obj, const char *path, const char *key, double *out)
{
	json_t *v = get_typed(d, obj, path, key, JSON_REAL);
	if (!v)
		return -1;
	*out = json_number_value(v);
	return 0;
}

/*
 * A number in [lo, hi] (NaN and infinities fail both tests). The reader's
 * range checks: a run result is evidence, so a loss of 7 or a clock of 0
 * Hz is an error naming the field, not a figure to print.
 */
static int get_range(struct rd *d, const json_t *obj, const char *path, const char *key,
		     double lo, double hi, double *out)
{
	if (get_num(d, obj, path, key, out))
		return -1;
	if (!(*out >= lo && *out <= hi)) {
		rd_fail(d, path, "%s: %g is out of range [%g, %g]", key, *out, lo, hi);
		return -1;
	}
	return 0;
}

static int read_stage(struct rd *d, const json_t *js, const char *path, struct rxr_stage_sum *s)
{
	if (get_u64(d, js, path, "count", &s->count) || get_u64(d, js, path, "packets", &s->packets) ||
	    get_u64(d, js, path, "cycles", &s->cycles) ||
	    get_range(d, js, path, "cycles_per_packet", 0, 1e15, &s->cycles_per_packet) ||
	    get_u64(d, js, path, "min", &s->min) || get_u64(d, js, path, "max", &s->max) ||
	    get_u64(d, js, path, "p50", &s->p50) || get_u64(d, js, path, "p99", &s->p99))
		return -1;
	/* p90: optional (older results lack it), checked like the others */
	s->p90 = s->p99;
	if (json_object_get(js, "p90") && get_u64(d, js, path, "p90", &s->p90))
		return -1;
	/* the cost model's sums: optional (results older than them lack them) */
	json_t *ls = json_object_get(js, "lap_sums");
	if (ls) {
		char lp[160];
		snprintf(lp, sizeof(lp), "%s.lap_sums", path);
		if (!json_is_object(ls)) {
			rd_fail(d, lp, "expected object, got %s", type_name(ls));
			return -1;
		}
		if (get_num(d, ls, lp, "packets_sq", &s->laps.sxx) ||
		    get_num(d, ls, lp, "cycles_x_packets", &s->laps.sxy) ||
		    get_num(d, ls, lp, "cycles_sq", &s->laps.syy))
			return -1;
		if (s->laps.sxx < 0 || s->laps.sxy < 0 || s->laps.syy < 0) {
			rd_fail(d, lp, "negative sum");
			return -1;
		}
		/* optional: laps left out of the fit (preempted) */
		json_t *ex;
		if ((ex = json_object_get(ls, "excluded_laps")) &&
		    get_u64(d, ls, lp, "excluded_laps", &s->excl_count))
			return -1;
		if ((ex = json_object_get(ls, "excluded_packets")) &&
		    get_u64(d, ls, lp, "excluded_packets", &s->excl_packets))
			return -1;
		if ((ex = json_object_get(ls, "excluded_cycles")) &&
		    get_u64(d, ls, lp, "excluded_cycles", &s->excl_cycles))
			return -1;
		if (s->excl_count > s->count || s->excl_packets > s->packets ||
		    s->excl_cycles > s->cycles) {
			rd_fail(d, lp, "more laps excluded than recorded");
			return -1;
		}
		s->laps.n = (double)(s->count - s->excl_count);
		s->laps.sx = (double)(s->packets - s->excl_packets);
		s->laps.sy = (double)(s->cycles - s->excl_cycles);
		s->has_laps = true;
	}
	return 0;
}

static int read_samples(struct rd *d, const json_t *jt, const char *path,
			struct rxr_thread_result *t)
{
	json_t *js = json_object_get(jt, "samples");
	if (!js)
		return 0;
	json_t *data = json_object_get(js, "data");
	if (!json_is_array(data)) {
		rd_fail(d, path, "samples.data: expected array");
		return -1;
	}
	size_t n = json_array_size(data);
	t->samples = calloc(n ? n : 1, sizeof(*t->samples));
	if (!t->samples) {
		d->rc = -ENOMEM;
		rd_fail(d, path, "samples: out of memory");
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		json_t *row = json_array_get(data, i);
		int st = rxp_stage_from_name(json_string_value(json_array_get(row, 2)));
		if (!json_is_array(row) || json_array_size(row) != 4 || st < 0 ||
		    !json_is_integer(json_array_get(row, 0)) ||
		    !json_is_integer(json_array_get(row, 1))) {
			rd_fail(d, path, "samples.data[%zu]: expected [start, cycles, stage, seq]", i);
			return -1;
		}
		if (json_integer_value(json_array_get(row, 0)) < 0 ||
		    json_integer_value(json_array_get(row, 1)) < 0 ||
		    json_integer_value(json_array_get(row, 1)) > UINT32_MAX ||
		    !json_is_integer(json_array_get(row, 3)) ||
		    json_integer_value(json_array_get(row, 3)) < 0) {
			rd_fail(d, path, "samples.data[%zu]: start, seq >= 0 and cycles in 0..%u expected",
				i, UINT32_MAX);
			return -1;
		}
		struct rxp_sample *s = &t->samples[t->nsamples++];
		s->start = (uint64_t)json_integer_value(json_array_get(row, 0));
		s->cycles = (uint32_t)json_integer_value(json_array_get(row, 1));
		s->stage = (uint16_t)st;
		s->seq = (uint64_t)json_integer_value(json_array_get(row, 3));
	}
	return 0;
}

static int read_thread(struct rd *d, const json_t *jt, size_t idx, struct rxr_thread_result *t)
{
	char path[64];
	snprintf(path, sizeof(path), "threads[%zu]", idx);
	if (!json_is_object(jt)) {
		rd_fail(d, path, "expected object, got %s", type_name(jt));
		return -1;
	}
	json_t *role = get_typed(d, jt, path, "role", JSON_STRING);
	if (!role)
		return -1;
	if (strlen(json_string_value(role)) >= sizeof(t->role)) {
		rd_fail(d, path, "role: too long");
		return -1;
	}
	snprintf(t->role, sizeof(t->role), "%s", json_string_value(role));
	json_t *core = get_typed(d, jt, path, "core", JSON_INTEGER);
	if (!core)
		return -1;
	/* -1: not pinned; else a CPU a cpu_set_t can name */
	if (json_integer_value(core) < -1 || json_integer_value(core) >= CPU_SETSIZE) {
		rd_fail(d, path, "core: %lld is out of range [-1, %d)",
			(long long)json_integer_value(core), CPU_SETSIZE);
		return -1;
	}
	t->core = (int)json_integer_value(core);
	if (get_u64(d, jt, path, "packets", &t->packets) ||
	    get_u64(d, jt, path, "busy_cycles", &t->busy_cycles))
		return -1;
	json_t *stages = get_typed(d, jt, path, "stages", JSON_OBJECT);
	if (!stages)
		return -1;
	const char *name;
	json_t *js;
	json_object_foreach(stages, name, js) {
		char sp[128];
		snprintf(sp, sizeof(sp), "%s.stages.%s", path, name);
		int s = rxp_stage_from_name(name);
		if (s < 0) {
			rd_fail(d, sp, "unknown stage");
			return -1;
		}
		if (!json_is_object(js)) {
			rd_fail(d, sp, "expected object, got %s", type_name(js));
			return -1;
		}
		if (read_stage(d, js, sp, &t->st[s]))
			return -1;
		t->stage_mask |= 1u << s;
	}
	return read_samples(d, jt, path, t);
}

static struct rxr_result *from_json(const json_t *doc, struct rd *d)
{
	if (!json_is_object(doc)) {
		rd_fail(d, "(document)", "expected a JSON object");
		return NULL;
	}
	json_t *schema = json_object_get(doc, "schema");
	if (!json_is_string(schema)) {
		rd_fail(d, "schema", schema ? "expected string" : "missing");
		return NULL;
	}
	if (strcmp(json_string_value(schema), RXR_RUN_SCHEMA)) {
		rd_fail(d, "schema", "expected \"%s\", got \"%s\"", RXR_RUN_SCHEMA,
			json_string_value(schema));
		return NULL;
	}
	struct rxr_result *r = NULL;
	if (rxr_result_open(&r) < 0) {
		d->rc = -ENOMEM;
		rd_fail(d, "(document)", "out of memory");
		return NULL;
	}
	json_t *config = get_typed(d, doc, "", "config", JSON_OBJECT);
	json_t *env = config ? get_typed(d, doc, "", "env", JSON_OBJECT) : NULL;
	json_t *ctr = env ? get_typed(d, doc, "", "counters", JSON_OBJECT) : NULL;
	json_t *rates = ctr ? get_typed(d, doc, "", "rates", JSON_OBJECT) : NULL;
	json_t *clock = rates ? get_typed(d, doc, "", "clock", JSON_OBJECT) : NULL;
	json_t *threads = clock ? get_typed(d, doc, "", "threads", JSON_ARRAY) : NULL;
	if (!threads)
		goto fail;
	json_decref(r->config);
	json_decref(r->env);
	/* config shared, not copied: a read result never changes it, and a
	 * sweep of 10,000 points would copy 20,000 objects for nothing. env
	 * is listed member by member (the report), so it is kept in name
	 * order: the same, however the text ordered it */
	r->config = json_incref(config);
	r->env = rxr_json_by_name(env);
	if (!r->env) {
		d->rc = -ENOMEM;
		rd_fail(d, "env", "out of memory");
		goto fail;
	}
	struct rxr_counters *c = &r->c;
	if (get_u64(d, ctr, "counters", "offered", &c->offered) ||
	    get_u64(d, ctr, "counters", "received", &c->received) ||
	    get_u64(d, ctr, "counters", "out_of_buffer", &c->out_of_buffer) ||
	    get_u64(d, ctr, "counters", "nombuf", &c->nombuf) ||
	    get_u64(d, ctr, "counters", "app_dropped", &c->app_dropped) ||
	    get_u64(d, ctr, "counters", "errors", &c->errors))
		goto fail;
	if (get_range(d, rates, "rates", "offered_mpps", 0, 1e6, &r->offered_mpps) ||
	    get_range(d, rates, "rates", "rx_mpps", 0, 1e6, &r->rx_mpps) ||
	    get_range(d, rates, "rates", "loss", 0, 1, &r->loss))
		goto fail;
	json_t *secs = json_object_get(rates, "seconds");
	r->seconds = 0;
	if (secs && get_range(d, rates, "rates", "seconds", 0, 1e9, &r->seconds))
		goto fail;
	json_t *src = get_typed(d, clock, "clock", "source", JSON_STRING);
	if (!src || get_num(d, clock, "clock", "hz", &r->clock.hz) ||
	    get_range(d, clock, "clock", "lap_cost_cycles", 0, 1e9, &r->clock.lap_cost_cycles))
		goto fail;
	if (!(r->clock.hz > 0 && r->clock.hz <= 1e12)) {
		rd_fail(d, "clock", "hz: %g is out of range (0, 1e12]", r->clock.hz);
		goto fail;
	}
	snprintf(r->clock.source, sizeof(r->clock.source), "%s", json_string_value(src));
	json_t *res = json_object_get(clock, "resolution_ns"); /* optional */
	r->clock.resolution_ns = json_is_number(res) ? json_number_value(res) : 0;
	size_t n = json_array_size(threads);
	if (n) {
		r->threads = calloc(n, sizeof(*r->threads));
		if (!r->threads) {
			d->rc = -ENOMEM;
			rd_fail(d, "threads", "out of memory");
			goto fail;
		}
	}
	for (size_t i = 0; i < n; i++) {
		r->nthreads = i + 1;
		if (read_thread(d, json_array_get(threads, i), i, &r->threads[i]))
			goto fail;
	}
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)doc, k, v) {
		bool known = false;
		for (size_t i = 0; i < sizeof(required_keys) / sizeof(required_keys[0]); i++)
			known |= !strcmp(k, required_keys[i]);
		if (!known)
			json_object_set(r->extra, k, v);
	}
	char cf[96], cw[256];
	if (rxr_result_check(r, cf, sizeof(cf), cw, sizeof(cw))) {
		rd_fail(d, cf, "%s", cw);
		goto fail;
	}
	return r;
fail:
	rxr_result_free(r);
	return NULL;
}

static int chk(char *field, size_t flen, char *what, size_t wlen, const char *f, const char *fmt,
	       ...) __attribute__((format(printf, 6, 7)));
static int chk(char *field, size_t flen, char *what, size_t wlen, const char *f, const char *fmt,
	       ...)
{
	va_list ap;
	snprintf(field, flen, "%s", f);
	va_start(ap, fmt);
	vsnprintf(what, wlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static bool role_ok(const char *s)
{
	size_t n = strlen(s);
	if (n < 1 || n > 7)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '.' && s[i] != '-')
			return false;
	return true;
}

/*
 * The env members rxray writes, one JSON type each whichever engine wrote
 * the result (docs/design.md "Formats"); absent is fine, other members
 * are free. 'b' stands for a boolean.
 */
static const struct {
	const char *key;
	char type; /* 's' string, 'i' integer, 'b' boolean, 'o' object, 'a' array */
} env_types[] = {
	{"kernel", 's'},	{"machine", 's'},	 {"hostname", 's'}, {"cpu", 's'},
	{"cores_online", 'i'},	{"cores_available", 'i'}, {"clock_note", 's'},
	{"tsc_invariant", 'b'}, {"probes", 's'},	 {"dpdk", 'o'},	    {"rdma_core", 's'},
	{"cuda", 's'},		{"gpu", 'a'},		 {"date", 's'},
};

static bool env_type_ok(const json_t *v, char t)
{
	switch (t) {
	case 's': return json_is_string(v);
	case 'i': return json_is_integer(v);
	case 'b': return json_is_boolean(v);
	case 'o': return json_is_object(v);
	default: return json_is_array(v);
	}
}

static const char *env_type_name(char t)
{
	switch (t) {
	case 's': return "string";
	case 'i': return "integer";
	case 'b': return "boolean";
	case 'o': return "object";
	default: return "array";
	}
}

int rxr_result_check(const struct rxr_result *r, char *field, size_t flen, char *what,
		     size_t wlen)
{
	for (size_t i = 0; r->env && i < sizeof(env_types) / sizeof(env_types[0]); i++) {
		const json_t *v = json_object_get(r->env, env_types[i].key);
		char f[64];
		if (!v || env_type_ok(v, env_types[i].type))
			continue;
		snprintf(f, sizeof(f), "env.%s", env_types[i].key);
		return chk(field, flen, what, wlen, f, "expected %s, got %s (one type whichever engine "
			   "wrote the result%s)", env_type_name(env_types[i].type), type_name(v),
			   !strcmp(env_types[i].key, "dpdk") ? ": {\"version\": ...}" : "");
	}
	if (!(r->clock.hz >= RXR_CLOCK_HZ_MIN && r->clock.hz <= RXR_CLOCK_HZ_MAX))
		return chk(field, flen, what, wlen, "clock",
			   "hz: %g is no clock rxray reads (%g..%g)", r->clock.hz, RXR_CLOCK_HZ_MIN,
			   RXR_CLOCK_HZ_MAX);
	if (!r->nthreads)
		return chk(field, flen, what, wlen, "threads", "empty: a run has at least one thread");
	for (size_t i = 0; i < r->nthreads; i++) {
		const struct rxr_thread_result *t = &r->threads[i];
		char f[96];
		snprintf(f, sizeof(f), "threads[%zu]", i);
		if (!role_ok(t->role))
			return chk(field, flen, what, wlen, f,
				   "role: '%s' is not 1-7 characters of [A-Za-z0-9_.-]", t->role);
		for (int s = 0; s < RXP_ST_COUNT; s++) {
			const struct rxr_stage_sum *st = &t->st[s];
			if (!(t->stage_mask & (1u << s)) || !st->count)
				continue;
			if (!(st->min <= st->p50 && st->p50 <= st->p90 && st->p90 <= st->p99 &&
			      st->p99 <= st->max)) {
				snprintf(f, sizeof(f), "threads[%zu].stages.%s", i,
					 rxp_stage_name((enum rxp_stage)s));
				return chk(field, flen, what, wlen, f,
					   "min %llu, p50 %llu, p90 %llu, p99 %llu, max %llu are "
					   "out of order",
					   (unsigned long long)st->min, (unsigned long long)st->p50,
					   (unsigned long long)st->p90, (unsigned long long)st->p99,
					   (unsigned long long)st->max);
			}
		}
	}
	const struct rxr_counters *c = &r->c;
	const uint64_t parts[] = {c->received, c->out_of_buffer, c->nombuf, c->app_dropped};
	static const char *const names[] = {"received", "out_of_buffer", "nombuf", "app_dropped"};
	for (size_t i = 0; i < 4; i++)
		if (parts[i] > c->offered)
			return chk(field, flen, what, wlen, "counters",
				   "%s: %llu is more than the %llu offered", names[i],
				   (unsigned long long)parts[i], (unsigned long long)c->offered);
	double loss = c->offered ? 1.0 - (double)c->received / (double)c->offered : 0;
	if (fabs(loss - r->loss) > 1e-6)
		return chk(field, flen, what, wlen, "rates",
			   "loss: %g, but the counters give %g (received %llu of %llu)", r->loss,
			   loss, (unsigned long long)c->received, (unsigned long long)c->offered);
	const json_t *smp = r->extra ? json_object_get(r->extra, RXR_RESULT_SAMPLED) : NULL;
	if (smp)
		return rxr_result_check_sampled(smp, field, flen, what, wlen);
	return 0;
}

/* from_json's NULL as the constructor convention's return code. */
static int from_json_out(const json_t *doc, struct rd *d, struct rxr_result **out)
{
	d->rc = -EINVAL;
	*out = from_json(doc, d);
	return *out ? 0 : d->rc;
}

int rxr_result_from_json(const json_t *doc, const char *src, struct rxr_result **out, char *err,
			 size_t errlen)
{
	struct rd d = {.src = src ? src : "(json)", .line = 0, .err = err, .errlen = errlen};
	return from_json_out(doc, &d, out);
}

/* A jansson load failure as -errno: out of memory, the file's own errno
 * (saved by the caller right after the load), else bad JSON. */
static int load_rc(const json_error_t *je, int saved_errno)
{
	switch (json_error_code(je)) {
	case json_error_out_of_memory:
		return -ENOMEM;
	case json_error_cannot_open_file:
		return saved_errno > 0 ? -saved_errno : -EIO;
	default:
		return -EINVAL;
	}
}

int rxr_result_parse(const char *text, const char *src, int line, struct rxr_result **out,
		     char *err, size_t errlen)
{
	*out = NULL;
	struct rd d = {.src = src ? src : "(json)", .line = line, .err = err, .errlen = errlen};
	json_error_t je;
	json_t *doc = json_loads(text, JSON_REJECT_DUPLICATES, &je);
	if (!doc) {
		if (err && errlen)
			snprintf(err, errlen, "%s:%d: (json): %s", d.src,
				 line > 0 ? line : je.line, je.text);
		return load_rc(&je, 0);
	}
	int rc = from_json_out(doc, &d, out);
	json_decref(doc);
	return rc;
}

int rxr_result_read(const char *path, struct rxr_result **out, char *err, size_t errlen)
{
	*out = NULL;
	json_error_t je;
	errno = 0;
	json_t *doc = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
	int saved = errno;
	if (!doc) {
		if (err && errlen) {
			if (je.line > 0)
				snprintf(err, errlen, "%s:%d: (json): %s", path, je.line, je.text);
			else
				snprintf(err, errlen, "%s: %s", path, je.text);
		}
		return load_rc(&je, saved);
	}
	struct rd d = {.src = path, .line = 0, .err = err, .errlen = errlen};
	int rc = from_json_out(doc, &d, out);
	json_decref(doc);
	return rc;
}

double rxr_thread_cycles_per_packet(const struct rxr_thread_result *t)
{
	return t->packets ? (double)t->busy_cycles / (double)t->packets : 0;
}
