/* SPDX-License-Identifier: MIT */
/*
 * rxray run --sample (run_sample.h): the checks made before the run, the
 * watch that starts and stops attach's sampler on the rx threads, the
 * result member and its summary lines. The summary reads the member from
 * the result, so it is the same whether this build can sample or not.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "engine_list.h"
#include "run_sample.h"
#include "rxray/util.h"
#ifdef RXRAY_RUN_SAMPLE
#include "rxray/attach.h"
#include "rxray/lapsplit.h"
#endif

#define VERB "run"
#define STR_(x) #x
#define STR(x) STR_(x)

int rxt_run_sample_check(const struct rx_config *c)
{
	bool verbs = strcmp(c->engine, "dpdk") != 0;
	if (verbs || strncmp(c->device, "dpdk:", 5))
		return rxu_usage_err(
		    VERB,
		    "--sample: samples the PMD inside rte_eth_rx_burst, for --engine dpdk on a "
		    "real port (--device dpdk:<eal args>); with %s%s every stage is rxray's own "
		    "code and already lapped",
		    verbs ? "--engine " : "--device ", verbs ? c->engine : c->device);
#ifdef RXRAY_RUN_SAMPLE
	char why[160];
	if (rxb_attach_caps_check(why, sizeof(why)))
		return rxu_usage_err(VERB,
				     "--sample: cannot load the BPF sampler: needs root or "
				     "CAP_BPF+CAP_PERFMON, missing %s",
				     why);
	return 0;
#else
	return rxu_usage_err(VERB,
			     "--sample: not available in this build (the BPF sampler, "
			     "attach/, was not built: cmake's \"rxray: attach\" line says why)");
#endif
}

#ifdef RXRAY_RUN_SAMPLE
struct run_sample {
	unsigned hz;
	struct rxb_lapsamp *ls;
};

static int sample_begin(void *ctx, const int *tids, uint32_t n, char *err, size_t errlen)
{
	struct run_sample *s = ctx;
	struct rxb_lapsamp_opts o = {.tids = tids, .ntids = n, .freq_hz = s->hz};
	char why[400];
	int rc = rxb_lapsamp_open(&o, &s->ls, why, sizeof(why));
	if (rc)
		snprintf(err, errlen, "--sample: %s", why);
	return rc;
}

static int sample_started(void *ctx, char *err, size_t errlen)
{
	struct run_sample *s = ctx;
	char why[300];
	int rc = rxb_lapsamp_start(s->ls, why, sizeof(why));
	if (rc)
		snprintf(err, errlen, "--sample: %s", why);
	return rc;
}

static void sample_end(void *ctx)
{
	struct run_sample *s = ctx;
	rxb_lapsamp_stop(s->ls);
}

int rxt_run_sample_open(unsigned hz, struct run_sample **out, struct rx_run_watch *w)
{
	struct run_sample *s = calloc(1, sizeof(*s));
	*out = s;
	if (!s)
		return -ENOMEM;
	s->hz = hz;
	*w = (struct rx_run_watch){
	    .begin = sample_begin, .started = sample_started, .end = sample_end, .ctx = s};
	return 0;
}

int rxt_run_sample_finish(struct run_sample *s, struct rxr_result *r, char *err, size_t errlen)
{
	struct rxb_lapsplit *sp = malloc(sizeof(*sp));
	char why[400] = "";
	json_t *j = NULL;
	int rc = sp ? 0 : -ENOMEM;
	if (!rc && !s->ls) { /* the run ended before its rx threads could be sampled */
		snprintf(why, sizeof(why), "the rx threads were never sampled");
		rc = -ENODATA;
	}
	if (!rc)
		rc = rxb_lapsamp_fold(s->ls, sp, why, sizeof(why));
	if (!rc && !(j = rxb_lapsplit_json(sp, r)))
		rc = -ENOMEM;
	if (!rc && json_object_set_new(r->extra, RXR_RESULT_SAMPLED, j))
		rc = -ENOMEM;
	if (rc)
		snprintf(err, errlen, "--sample: %s", why[0] ? why : strerror(-rc));
	free(sp);
	return rc;
}

void rxt_run_sample_close(struct run_sample *s)
{
	if (!s)
		return;
	rxb_lapsamp_close(s->ls);
	free(s);
}
#else
int rxt_run_sample_open(unsigned hz, struct run_sample **out, struct rx_run_watch *w)
{
	(void)hz;
	(void)w;
	*out = NULL;
	return -EOPNOTSUPP;
}

int rxt_run_sample_finish(struct run_sample *s, struct rxr_result *r, char *err, size_t errlen)
{
	(void)s;
	(void)r;
	snprintf(err, errlen, "--sample: not available in this build");
	return -EOPNOTSUPP;
}

void rxt_run_sample_close(struct run_sample *s)
{
	(void)s;
}
#endif

static long long num_i(const json_t *o, const char *k)
{
	return (long long)json_integer_value(json_object_get(o, k));
}

/* A share as "12.3%", or "-" where the result has none (null). */
static const char *pct(const json_t *v, char *buf, size_t len)
{
	if (!json_is_number(v))
		return "-";
	snprintf(buf, len, "%.1f%%", 100 * json_number_value(v));
	return buf;
}

void rxt_run_sample_print(FILE *f, const json_t *smp)
{
	char a[16], b[16], c[16];
	if (!json_is_object(smp))
		return;
	const json_t *cnt = json_object_get(smp, "counted");
	long long samples = num_i(smp, "samples"), lap = num_i(smp, "lap_samples");
	long long threads = num_i(smp, "rx_threads");
	const char *stacks = json_string_value(json_object_get(smp, "stacks"));
	fprintf(f,
		"  cqe_poll lap, sampled (BPF stack samples: estimates, not counted): %s event at "
		"%lld Hz per rx thread, %s stacks, %lld rx thread%s\n",
		json_string_value(json_object_get(smp, "event")), num_i(smp, "freq_hz"), stacks,
		threads, threads == 1 ? "" : "s");
	fprintf(f,
		"    in the lap: %lld of %lld samples (%s): %lld in the PMD's rx burst, %lld in "
		"%s around its call (rte_eth_rx_burst's inline code, the lap's clock read); "
		"counted: cqe_poll + idle laps %s of the rx cycles, cqe_poll %s of those\n",
		lap, samples, pct(json_object_get(smp, "sampled_share_of_thread"), a, sizeof(a)),
		num_i(smp, "in_rx_burst"), num_i(smp, "at_lap_site"),
		json_string_value(json_object_get(smp, "lap_site_function"))[0]
		    ? json_string_value(json_object_get(smp, "lap_site_function"))
		    : "its caller",
		pct(json_object_get(cnt, "lap_share_of_thread"), b, sizeof(b)),
		pct(json_object_get(cnt, "cqe_poll_share_of_lap"), c, sizeof(c)));
	if (num_i(smp, "unplaced"))
		fprintf(
		    f,
		    "    %lld samples outside it never reached the rx loop (stacks cut short or "
		    "unwound astray): the lap may hold up to that many more\n",
		    num_i(smp, "unplaced"));
	if (stacks && !strcmp(stacks, "fp"))
		fprintf(f, "    frame-pointer stacks: code built without frame pointers shows its "
			   "leaf only, so samples below the PMD's burst count outside the lap\n");
	if (!lap) {
		fprintf(f, "    no sample fell in the lap: nothing to split (run longer "
			   "or raise --sample-freq)\n");
		return;
	}
	if (!num_i(cnt, "cqe_poll_cycles"))
		fprintf(f, "    the rx burst returned no packets: these are samples of empty polls "
			   "(the idle lap)\n");
	fprintf(f, "    %7s %8s %9s  %-12s %s\n", "share", "samples", "~cyc/pkt", "kind",
		"function");
	size_t i;
	const json_t *p;
	json_array_foreach(json_object_get(smp, "parts"), i, p)
	{
		const json_t *est = json_object_get(p, "est_cycles_per_packet");
		char e[24] = "-";
		if (json_is_number(est))
			snprintf(e, sizeof(e), "%.1f", json_number_value(est));
		fprintf(f, "    %7s %8lld %9s  %-12s %s\n",
			pct(json_object_get(p, "share"), a, sizeof(a)), num_i(p, "samples"), e,
			json_string_value(json_object_get(p, "kind")),
			json_string_value(json_object_get(p, "name")));
	}
	fprintf(f, "    share: of the lap's samples; ~cyc/pkt: samples / all the rx threads' "
		   "samples x their counted cycles / packet\n");
}

void rxt_run_sample_help(FILE *f)
{
	fprintf(f, "  %-28s %s\n  %-28s %s\n", "--sample",
		"dpdk on a real port: sample the rx threads' stacks with attach's BPF sampler "
		"and split the cqe_poll lap (rte_eth_rx_burst) into the functions inside it "
		"(estimates; needs root or CAP_BPF+CAP_PERFMON)",
		"--sample-freq HZ",
		"samples per second per rx thread, 1..20000 (implies --sample; "
		"default " STR(RXT_RUN_SAMPLE_HZ) ")");
}
