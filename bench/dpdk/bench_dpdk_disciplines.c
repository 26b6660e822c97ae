/* SPDX-License-Identifier: MIT */
/*
 * bench_dpdk_disciplines: where the DPDK receive path's cycles go, per
 * stage, for the mlx5 PMD's disciplines and daqiri's worker choices, on
 * the software NIC. The table tests docs/design.md's leading hypothesis
 * (shared-ring mempool operations per packet, cache 0, mixed frees, app
 * on another core) on this CPU. Each configuration runs in a child
 * process (one EAL per process); the median of --runs runs is printed.
 *
 * USAGE
 *   bench_dpdk_disciplines [--cores LIST] [--seconds S] [--runs N]
 *                          [--rate PPS] [--frame BYTES] [--ring N] [--mean]
 * EXAMPLES
 *   bench_dpdk_disciplines                      # 2-core VM, 3 runs of 0.5 s
 *   bench_dpdk_disciplines --cores 2-7 --runs 5 --seconds 2
 *
 * Columns: RX-thread cycles per packet by stage (busy cycles / packets the
 * RX thread handled), the app thread's busy cycles per packet (0 when the
 * app runs on the RX core), shared-ring mempool calls per packet (gets,
 * puts), received Mpps and loss. "os" marks runs whose threads had to
 * share cores (fewer cores than NIC + RX + app).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_run.h"
#include "rxray/core.h"
#include "rxray/dpdk.h"
#include "rxray/result.h"

struct opts {
	struct bench_opts b;
	double rate;
	uint32_t frame;
	uint32_t ring;
	bool mean;
};

struct point {
	const char *name;
	const char *device; /* NULL = sim */
	enum rx_mode mode;
	enum rx_discipline disc;
	uint32_t cache;
	enum rx_app app;
	enum rx_free free_mode;
};

static const struct point points[] = {
    {"vector-single c0 same", NULL, RX_MODE_SINGLE, RX_DISC_VECTOR, 0, RX_APP_INLINE,
     RX_FREE_MIXED},
    {"vector-single c256 same", NULL, RX_MODE_SINGLE, RX_DISC_VECTOR, 256, RX_APP_INLINE,
     RX_FREE_MIXED},
    {"scalar-single c0 same", NULL, RX_MODE_SINGLE, RX_DISC_SCALAR, 0, RX_APP_INLINE,
     RX_FREE_MIXED},
    {"scalar-single c256 same", NULL, RX_MODE_SINGLE, RX_DISC_SCALAR, 256, RX_APP_INLINE,
     RX_FREE_MIXED},
    {"scalar-hds c0 same mixed", NULL, RX_MODE_HDS, RX_DISC_SCALAR, 0, RX_APP_INLINE,
     RX_FREE_MIXED},
    {"scalar-hds c0 same perpool", NULL, RX_MODE_HDS, RX_DISC_SCALAR, 0, RX_APP_INLINE,
     RX_FREE_PER_POOL},
    {"scalar-hds c256 same mixed", NULL, RX_MODE_HDS, RX_DISC_SCALAR, 256, RX_APP_INLINE,
     RX_FREE_MIXED},
    {"scalar-hds c256 same perpool", NULL, RX_MODE_HDS, RX_DISC_SCALAR, 256, RX_APP_INLINE,
     RX_FREE_PER_POOL},
    /* daqiri: cache 0, app on another core, not an EAL thread, mixed */
    {"scalar-hds c0 non-eal mixed", NULL, RX_MODE_HDS, RX_DISC_SCALAR, 0, RX_APP_THREAD,
     RX_FREE_MIXED},
    {"scalar-hds c0 non-eal perpool", NULL, RX_MODE_HDS, RX_DISC_SCALAR, 0, RX_APP_THREAD,
     RX_FREE_PER_POOL},
    {"scalar-hds c256 eal mixed", NULL, RX_MODE_HDS, RX_DISC_SCALAR, 256, RX_APP_EAL,
     RX_FREE_MIXED},
    {"scalar-hds c256 eal perpool", NULL, RX_MODE_HDS, RX_DISC_SCALAR, 256, RX_APP_EAL,
     RX_FREE_PER_POOL},
    {"vector-single c256 eal mixed", NULL, RX_MODE_SINGLE, RX_DISC_VECTOR, 256, RX_APP_EAL,
     RX_FREE_MIXED},
    /* net_null has no NIC thread: RX and app get a core each even on a
     * 2-core box, so the shared ring is fought over by two cores for
     * real (single segment: one get per packet without a cache) */
    {"null c0 same", "dpdk:--vdev=net_null0", RX_MODE_SINGLE, RX_DISC_AUTO, 0, RX_APP_INLINE,
     RX_FREE_MIXED},
    {"null c0 non-eal", "dpdk:--vdev=net_null0", RX_MODE_SINGLE, RX_DISC_AUTO, 0, RX_APP_THREAD,
     RX_FREE_MIXED},
    {"null c256 same", "dpdk:--vdev=net_null0", RX_MODE_SINGLE, RX_DISC_AUTO, 256, RX_APP_INLINE,
     RX_FREE_MIXED},
    {"null c256 eal", "dpdk:--vdev=net_null0", RX_MODE_SINGLE, RX_DISC_AUTO, 256, RX_APP_EAL,
     RX_FREE_MIXED},
};
#define NPOINTS (sizeof(points) / sizeof(points[0]))

static const enum rxp_stage cols[] = {RXP_ST_CQE_POLL, RXP_ST_BUF_ALLOC, RXP_ST_SGE_SETUP,
				      RXP_ST_CHAIN,    RXP_ST_DOORBELL,	 RXP_ST_HANDOFF,
				      RXP_ST_HDR_READ, RXP_ST_FREE};
#define NCOLS (sizeof(cols) / sizeof(cols[0]))

/* What one run yields. */
struct sample {
	double rx_cpp, st[NCOLS], app_cpp, gets, puts, mpps, loss;
	bool os;
};

/* One point's config (one_run runs it in a child: bench_run). */
static void point_config(const struct opts *o, const struct point *pt, struct rx_config *c)
{
	rx_config_defaults(c);
	snprintf(c->engine, sizeof(c->engine), "dpdk");
	snprintf(c->device, sizeof(c->device), "%s", pt->device ? pt->device : "sim");
	c->mode = pt->mode;
	c->discipline = pt->disc;
	c->mempool_cache = pt->cache;
	c->app = pt->app;
	c->free_mode = pt->free_mode;
	c->rate_pps = o->rate;
	c->frame = o->frame;
	c->ring = o->ring;
	c->allow_oversubscribe = true;
	c->quiet = true;
}

static double jnum(json_t *o, const char *a, const char *b)
{
	json_t *v = json_object_get(o, a);
	if (b)
		v = json_object_get(v, b);
	return json_number_value(v);
}

static int one_run(const struct opts *o, const struct point *pt, struct sample *s)
{
	struct rx_config c;
	struct rxr_result *r;
	point_config(o, pt, &c);
	int rc = bench_run(&o->b, &rx_engine_dpdk, &c, NULL, pt->name, &r);
	if (rc)
		return rc;
	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < r->nthreads; i++) {
		const struct rxr_thread_result *t = &r->threads[i];
		if (!strcmp(t->role, "rx")) {
			s->rx_cpp =
			    o->mean ? rxr_thread_cycles_per_packet(t) : bench_robust_busy(t);
			for (size_t k = 0; k < NCOLS; k++)
				s->st[k] = o->mean ? t->st[cols[k]].cycles_per_packet
						   : bench_robust(t, cols[k]);
		} else if (!strcmp(t->role, "app")) {
			s->app_cpp =
			    o->mean ? rxr_thread_cycles_per_packet(t) : bench_robust_busy(t);
		}
	}
	json_t *d = json_object_get(r->extra, "dpdk");
	json_t *mp = json_object_get(d, "mempool");
	s->gets = jnum(mp, "gets_per_pkt", NULL);
	s->puts = jnum(mp, "puts_per_pkt", NULL);
	s->mpps = r->rx_mpps;
	s->loss = r->loss;
	json_t *pl = json_object_get(r->config, "placement");
	s->os = json_is_true(json_object_get(pl, "oversubscribed"));
	rxr_result_free(r);
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f, "USAGE\n  bench_dpdk_disciplines [--cores LIST] [--seconds S] [--runs N] "
		   "[--rate PPS] [--frame BYTES] [--ring N] [--mean]\n"
		   "EXAMPLES\n  bench_dpdk_disciplines\n"
		   "  bench_dpdk_disciplines --cores 2-7 --runs 5 --seconds 2\n");
}

int main(int argc, char **argv)
{
	struct opts o = {.b = {.seconds = 0.5, .runs = 3}, .rate = 0, .frame = 1064, .ring = 8192};
	static const struct option lo[] = {BENCH_LONG_OPTS,
					   {"rate", required_argument, NULL, 'r'},
					   {"frame", required_argument, NULL, 'f'},
					   {"ring", required_argument, NULL, 'R'},
					   {"mean", no_argument, NULL, 'm'},
					   {"help", no_argument, NULL, 'h'},
					   {NULL, 0, NULL, 0}};
	int ch, rc;
	while ((ch = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (ch) {
		case 'r': o.rate = atof(optarg); break;
		case 'f': o.frame = (uint32_t)atoi(optarg); break;
		case 'R': o.ring = (uint32_t)atoi(optarg); break;
		case 'm': o.mean = true; break;
		default:
			if ((rc = bench_opt(ch, optarg, &o.b, usage)) != BENCH_OPT_TAKEN)
				return rc;
			break;
		}
	}
	if (!bench_opts_ok(&o.b) || o.frame < 64 || !o.ring) {
		fprintf(stderr,
			"bench_dpdk_disciplines: --runs 1..%d, --seconds > 0, --frame >= 64, "
			"--ring > 0\n",
			BENCH_MAX_RUNS);
		return 2;
	}
	if (rxp_clock_init(50)) {
		fprintf(stderr, "bench_dpdk_disciplines: cannot calibrate the clock\n");
		return 1;
	}
	printf("# bench_dpdk_disciplines: frame %u, ring %u, %.2f s x %d runs (median), rate %s, "
	       "cores %s, TSC %.2f GHz\n",
	       o.frame, o.ring, o.b.seconds, o.b.runs, o.rate > 0 ? "limited" : "max",
	       o.b.cores[0] ? o.b.cores : "affinity", rxp_clock_get()->hz / 1e9);
	printf("# RX-thread cycles/packet by stage (%s); app = app thread busy cycles/packet; "
	       "gets/puts = shared-ring mempool calls per packet (empty polls excluded)\n",
	       o.mean ? "mean" : "median lap x laps / packets");
	printf("%-31s %7s", "config", "rx");
	for (size_t k = 0; k < NCOLS; k++)
		printf(" %9.9s", rxp_stage_name(cols[k]));
	printf(" %7s %6s %6s %7s %6s\n", "app", "gets", "puts", "rx_Mpps", "loss");
	int failed = 0;
	for (size_t i = 0; i < NPOINTS; i++) {
		double v[7 + NCOLS][BENCH_MAX_RUNS];
		int ok = 0;
		bool os = false;
		for (int k = 0; k < o.b.runs; k++) {
			struct sample s = {0};
			if (one_run(&o, &points[i], &s))
				continue;
			v[0][ok] = s.rx_cpp;
			for (size_t c = 0; c < NCOLS; c++)
				v[1 + c][ok] = s.st[c];
			v[1 + NCOLS][ok] = s.app_cpp;
			v[2 + NCOLS][ok] = s.gets;
			v[3 + NCOLS][ok] = s.puts;
			v[4 + NCOLS][ok] = s.mpps;
			v[5 + NCOLS][ok] = s.loss;
			os = os || s.os;
			ok++;
		}
		if (!ok) {
			printf("%-31s failed\n", points[i].name);
			failed++;
			continue;
		}
		char name[40];
		snprintf(name, sizeof(name), "%s%s", points[i].name, os ? " os" : "");
		printf("%-31s %7.1f", name, bench_median(v[0], ok));
		for (size_t c = 0; c < NCOLS; c++)
			printf(" %9.1f", bench_median(v[1 + c], ok));
		printf(" %7.1f %6.3f %6.3f %7.3f %5.1f%%\n", bench_median(v[1 + NCOLS], ok),
		       bench_median(v[2 + NCOLS], ok), bench_median(v[3 + NCOLS], ok),
		       bench_median(v[4 + NCOLS], ok), 100 * bench_median(v[5 + NCOLS], ok));
		fflush(stdout);
	}
	return failed ? 1 : 0;
}
