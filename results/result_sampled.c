/* SPDX-License-Identifier: MIT */
/*
 * What a run result's "cqe_poll_sampled" member (rxray run --sample,
 * rxray/result.h) must hold to mean what it says: counts that add up,
 * shares that are the counts' ratios and lie in [0, 1], parts that sum to
 * the lap's samples. Every reader checks it through rxr_result_check.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "rxray/result.h"

/* A share written with %.10g or so is its ratio to well within this. */
#define SHARE_TOL 1e-6

const char *const rxr_sampled_part_kinds[] = {"rx_burst",  "mempool_get", "mempool_put", "mempool",
					      "replenish", "callee",	  "kernel",	 "lap_site",
					      "other",	   NULL};

struct sck {
	char *field, *what;
	size_t flen, wlen;
};

static int bad(struct sck *k, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int bad(struct sck *k, const char *field, const char *fmt, ...)
{
	va_list ap;
	snprintf(k->field, k->flen, "%s%s%s", RXR_RESULT_SAMPLED, field[0] ? "." : "", field);
	va_start(ap, fmt);
	vsnprintf(k->what, k->wlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* o[key] as a count (integer >= 0) into *v. */
static int count_get(struct sck *k, const json_t *o, const char *path, const char *key, uint64_t *v)
{
	char f[96];
	const json_t *j = json_object_get(o, key);
	snprintf(f, sizeof(f), "%s%s%s", path, path[0] ? "." : "", key);
	if (!json_is_integer(j) || json_integer_value(j) < 0)
		return bad(k, f, "expected a count (an integer >= 0)");
	*v = (uint64_t)json_integer_value(j);
	return 0;
}

static int string_get(struct sck *k, const json_t *o, const char *key, bool empty_ok,
		      const char **v)
{
	const json_t *j = json_object_get(o, key);
	if (!json_is_string(j) || (!empty_ok && !json_string_length(j)))
		return bad(k, key, "expected a%s string", empty_ok ? "" : " non-empty");
	*v = json_string_value(j);
	return 0;
}

/*
 * o[key]: a share num/den in [0, 1], or null exactly when den is 0 (a
 * share of nothing is no share).
 */
static int share_check(struct sck *k, const json_t *o, const char *path, const char *key,
		       uint64_t num, uint64_t den)
{
	char f[96];
	const json_t *j = json_object_get(o, key);
	snprintf(f, sizeof(f), "%s%s%s", path, path[0] ? "." : "", key);
	if (!den)
		return json_is_null(j) ? 0 : bad(k, f, "expected null: a share of no samples");
	if (!json_is_number(j))
		return bad(k, f, "expected a share (a number in [0, 1])");
	double v = json_number_value(j), want = (double)num / (double)den;
	if (!(v >= 0 && v <= 1))
		return bad(k, f, "%g is not a share in [0, 1]", v);
	if (fabs(v - want) > SHARE_TOL)
		return bad(k, f, "%g, but its counts give %llu / %llu = %g", v,
			   (unsigned long long)num, (unsigned long long)den, want);
	return 0;
}

static bool kind_known(const char *s)
{
	for (size_t i = 0; rxr_sampled_part_kinds[i]; i++)
		if (!strcmp(rxr_sampled_part_kinds[i], s))
			return true;
	return false;
}

static int counted_check(struct sck *k, const json_t *c)
{
	uint64_t cqe = 0, idle = 0, all = 0, pk = 0;
	int rc;
	if (!json_is_object(c))
		return bad(k, "counted", "expected an object");
	if ((rc = count_get(k, c, "counted", "cqe_poll_cycles", &cqe)) ||
	    (rc = count_get(k, c, "counted", "idle_cycles", &idle)) ||
	    (rc = count_get(k, c, "counted", "thread_cycles", &all)) ||
	    (rc = count_get(k, c, "counted", "packets", &pk)))
		return rc;
	if (cqe + idle > all)
		return bad(k, "counted",
			   "cqe_poll %llu + idle %llu cycles are more than the "
			   "thread's %llu",
			   (unsigned long long)cqe, (unsigned long long)idle,
			   (unsigned long long)all);
	if ((rc = share_check(k, c, "counted", "lap_share_of_thread", cqe + idle, all)))
		return rc;
	return share_check(k, c, "counted", "cqe_poll_share_of_lap", cqe, cqe + idle);
}

static int parts_check(struct sck *k, const json_t *parts, uint64_t lap)
{
	uint64_t sum = 0;
	double shares = 0;
	size_t i;
	const json_t *p;
	char f[64];
	int rc;
	if (!json_is_array(parts))
		return bad(k, "parts", "expected an array");
	json_array_foreach(parts, i, p)
	{
		uint64_t n = 0;
		snprintf(f, sizeof(f), "parts[%zu]", i);
		const json_t *name = json_object_get(p, "name");
		const json_t *kind = json_object_get(p, "kind");
		const json_t *est = json_object_get(p, "est_cycles_per_packet");
		if (!json_is_object(p))
			return bad(k, f, "expected an object");
		if (!json_is_string(name) || !json_string_length(name))
			return bad(k, f, "name: expected a non-empty string");
		if (!json_is_string(kind) || !kind_known(json_string_value(kind)))
			return bad(k, f,
				   "kind: '%s' is none of rx_burst, mempool_get, mempool_put, "
				   "mempool, replenish, callee, kernel, lap_site, other",
				   json_is_string(kind) ? json_string_value(kind) : "?");
		if ((rc = count_get(k, p, f, "samples", &n)) ||
		    (rc = share_check(k, p, f, "share", n, lap)))
			return rc;
		if (!json_is_null(est) && !(json_is_number(est) && json_number_value(est) >= 0))
			return bad(k, f, "est_cycles_per_packet: expected a number >= 0 or null");
		sum += n;
		shares += lap ? json_number_value(json_object_get(p, "share")) : 0;
	}
	if (sum != lap)
		return bad(k, "parts", "their samples add up to %llu, not the lap's %llu",
			   (unsigned long long)sum, (unsigned long long)lap);
	if (shares > 1 + SHARE_TOL)
		return bad(k, "parts", "their shares add up to %g, more than the whole lap",
			   shares);
	return 0;
}

int rxr_result_check_sampled(const json_t *smp, char *field, size_t flen, char *what, size_t wlen)
{
	struct sck k = {.field = field, .what = what, .flen = flen, .wlen = wlen};
	uint64_t samples = 0, lap = 0, in = 0, site = 0, v = 0, hz = 0, threads = 0, unplaced = 0;
	const char *s = "";
	int rc;
	if (!json_is_object(smp))
		return bad(&k, "", "expected an object");
	if ((rc = string_get(&k, smp, "lap", false, &s)))
		return rc;
	if (strcmp(s, "cqe_poll"))
		return bad(&k, "lap", "'%s': only the cqe_poll lap is sampled", s);
	if ((rc = string_get(&k, smp, "event", false, &s)) ||
	    (rc = string_get(&k, smp, "what", false, &s)) ||
	    (rc = string_get(&k, smp, "stacks", false, &s)))
		return rc;
	if (strcmp(s, "dwarf") && strcmp(s, "fp"))
		return bad(&k, "stacks", "'%s' is neither dwarf nor fp", s);
	if ((rc = string_get(&k, smp, "rx_burst_function", true, &s)) ||
	    (rc = string_get(&k, smp, "lap_site_function", true, &s)) ||
	    (rc = count_get(&k, smp, "", "freq_hz", &hz)) ||
	    (rc = count_get(&k, smp, "", "rx_threads", &threads)) ||
	    (rc = count_get(&k, smp, "", "samples", &samples)) ||
	    (rc = count_get(&k, smp, "", "lap_samples", &lap)) ||
	    (rc = count_get(&k, smp, "", "in_rx_burst", &in)) ||
	    (rc = count_get(&k, smp, "", "at_lap_site", &site)) ||
	    (rc = count_get(&k, smp, "", "unplaced", &unplaced)) ||
	    (rc = count_get(&k, smp, "", "dropped", &v)) ||
	    (rc = count_get(&k, smp, "", "stack_errors", &v)) ||
	    (rc = count_get(&k, smp, "", "stacks_cut", &v)))
		return rc;
	if (hz < 1 || hz > 100000)
		return bad(&k, "freq_hz", "%llu is not a sampling frequency (1-100000 Hz)",
			   (unsigned long long)hz);
	if (!threads)
		return bad(&k, "rx_threads", "0: sampling needs an rx thread");
	const json_t *sec = json_object_get(smp, "seconds");
	if (!json_is_number(sec) || !(json_number_value(sec) >= 0))
		return bad(&k, "seconds", "expected a duration (a number >= 0)");
	if (lap != in + site)
		return bad(&k, "lap_samples", "%llu, but in_rx_burst %llu + at_lap_site %llu",
			   (unsigned long long)lap, (unsigned long long)in,
			   (unsigned long long)site);
	if (lap > samples)
		return bad(&k, "lap_samples", "%llu is more than the %llu samples taken",
			   (unsigned long long)lap, (unsigned long long)samples);
	if (unplaced > samples - lap)
		return bad(&k, "unplaced", "%llu, but only %llu samples were outside the lap",
			   (unsigned long long)unplaced, (unsigned long long)(samples - lap));
	if ((rc = share_check(&k, smp, "", "sampled_share_of_thread", lap, samples)) ||
	    (rc = counted_check(&k, json_object_get(smp, "counted"))))
		return rc;
	return parts_check(&k, json_object_get(smp, "parts"), lap);
}
