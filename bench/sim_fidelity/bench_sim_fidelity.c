/* SPDX-License-Identifier: MIT */
/*
 * bench_sim_fidelity: what each fidelity fix of the software NIC and the
 * DPDK sim routines (issue 17) does to the figures, per discipline: RX
 * total and per-stage cycles/packet, the NIC's, received Mpps, loss, with
 * every fix on ("after"), every fix off ("before": the behaviour the
 * code had before the fixes) and each fix off alone. Fixes are switched
 * at run time: --cqe-comp off, --consumer, and RXRAY_SIM_LEGACY=<names>
 * (simnic.h, read once at setup). Each run is a child process (one EAL
 * each); the median of --runs runs is printed.
 *
 * The overload table (fix 8) runs dpdk hds with cache 256 at --ndr (its
 * NDR on the host, default 6.5M) and at the NIC's maximum, with the NIC's
 * back-off and done flag on and off: collapse is rx at max below rx at
 * the NDR; the NIC's dbrec fetch count is in each run's result.
 *
 * The phasing table (fix 4) compares the scalar model phased over the
 * burst with groups of 4 and with one packet at a time
 * (RXRAY_SIM_SCALAR_GROUP). Its "sat" column is the RX thread's total
 * cycles/packet from the received rate alone (clock Hz / rx pps), valid
 * when the RX thread saturates (loss > 1%: tiny frames, no payload, no
 * mempool cache make the consumer the slower side) and free of probe
 * cost: build with -DRXRAY_PROBES=off for that table.
 *
 * USAGE
 *   bench_sim_fidelity [--cores LIST] [--seconds S] [--runs N] [--rate PPS]
 *                      [--frame BYTES] [--ring N] [--ndr PPS]
 *                      [--only fixes|phasing|overload]
 * EXAMPLES
 *   bench_sim_fidelity --runs 1 --seconds 0.3        # 2-core VM: a smoke run
 *   bench_sim_fidelity --cores 2-5 --runs 5 --seconds 2
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rxray/core.h"
#include "rxray/dpdk.h"
#include "rxray/result.h"
#include "rxray/util.h"
#include "rxray/verbs.h"

#define MAX_RUNS 15
#define ALL_DPDK "nextnull,noprefetch,wqecheck,ptype,mrsplit,ringwqes,state,dbrec"

struct opts {
	char cores[256];
	double seconds;
	int runs;
	double rate;
	double ndr;
	uint32_t frame;
	uint32_t ring;
	char only[16];
};

/* One configuration: a discipline and which fixes are off. */
struct point {
	const char *disc;  /* row group */
	const char *label; /* "after", "before", "-<fix>" */
	const char *engine;
	enum rx_mode mode;
	enum rx_discipline d;
	enum rx_consumer consumer;
	enum rx_cqe_comp comp;
	const char *legacy; /* RXRAY_SIM_LEGACY, NULL = none */
	const char *group;  /* RXRAY_SIM_SCALAR_GROUP, NULL = burst */
	uint32_t cache;
	bool sat; /* phasing point: tiny frames, no payload */
	int rate; /* 0: --rate, 1: --ndr, 2: max */
};

#define DP(disc, lab, mode, d, comp, leg)                                                          \
	{                                                                                          \
		disc, lab, "dpdk", mode, d, RX_CONSUMER_DEVX, comp, leg, NULL, 256, false, 0       \
	}
#define DPDK_ROWS(disc, mode, d)                                                                   \
	DP(disc, "after", mode, d, RX_CQE_COMP_AUTO, NULL),                                        \
	    DP(disc, "before", mode, d, RX_CQE_COMP_OFF, ALL_DPDK),                                \
	    DP(disc, "-cqe_comp", mode, d, RX_CQE_COMP_OFF, NULL),                                 \
	    DP(disc, "-nextnull", mode, d, RX_CQE_COMP_AUTO, "nextnull"),                          \
	    DP(disc, "-wqecheck", mode, d, RX_CQE_COMP_AUTO, "wqecheck"),                          \
	    DP(disc, "-ptype", mode, d, RX_CQE_COMP_AUTO, "ptype"),                                \
	    DP(disc, "-mrsplit", mode, d, RX_CQE_COMP_AUTO, "mrsplit"),                            \
	    DP(disc, "-state", mode, d, RX_CQE_COMP_AUTO, "state"),                                \
	    DP(disc, "-dbrec", mode, d, RX_CQE_COMP_AUTO, "dbrec")

static const struct point fixes[] = {
    DPDK_ROWS("vector single", RX_MODE_SINGLE, RX_DISC_VECTOR),
    DP("vector single", "-prefetch", RX_MODE_SINGLE, RX_DISC_VECTOR, RX_CQE_COMP_AUTO,
       "noprefetch"),
    DPDK_ROWS("scalar single", RX_MODE_SINGLE, RX_DISC_SCALAR),
    DP("scalar single", "-prefetch", RX_MODE_SINGLE, RX_DISC_SCALAR, RX_CQE_COMP_AUTO,
       "noprefetch"),
    DPDK_ROWS("scalar hds", RX_MODE_HDS, RX_DISC_SCALAR),
    DP("scalar hds", "-ringsegs", RX_MODE_HDS, RX_DISC_SCALAR, RX_CQE_COMP_AUTO, "ringwqes"),
    {"verbs hds", "devx", "verbs", RX_MODE_HDS, RX_DISC_AUTO, RX_CONSUMER_DEVX, RX_CQE_COMP_AUTO,
     NULL, NULL, 0, false, 0},
    {"verbs hds", "rdma-core", "verbs", RX_MODE_HDS, RX_DISC_AUTO, RX_CONSUMER_RDMA_CORE,
     RX_CQE_COMP_AUTO, NULL, NULL, 0, false, 0},
    {"verbs hds", "devx -state,dbrec", "verbs", RX_MODE_HDS, RX_DISC_AUTO, RX_CONSUMER_DEVX,
     RX_CQE_COMP_AUTO, "state,dbrec", NULL, 0, false, 0},
};

#define PH(disc, lab, mode, grp)                                                                   \
	{                                                                                          \
		disc, lab, "dpdk", mode, RX_DISC_SCALAR, RX_CONSUMER_DEVX, RX_CQE_COMP_AUTO, NULL, \
		    grp, 0, true, 2                                                                \
	}
static const struct point phasing[] = {
    PH("scalar single", "phased", RX_MODE_SINGLE, NULL),
    PH("scalar single", "groups of 4", RX_MODE_SINGLE, "4"),
    PH("scalar single", "per packet", RX_MODE_SINGLE, "1"),
    PH("scalar hds", "phased", RX_MODE_HDS, NULL),
    PH("scalar hds", "groups of 4", RX_MODE_HDS, "4"),
    PH("scalar hds", "per packet", RX_MODE_HDS, "1"),
};

/* Fix 8: does dpdk hds with cache 256 receive less at the NIC's maximum
 * rate than at its NDR (--ndr), and does that go away with the NIC's
 * doorbell-record back-off and its done flag off the counters' line? */
#define OV(lab, leg, r)                                                                            \
	{                                                                                          \
		"hds c256", lab, "dpdk", RX_MODE_HDS, RX_DISC_SCALAR, RX_CONSUMER_DEVX,            \
		    RX_CQE_COMP_AUTO, leg, NULL, 256, false, r                                     \
	}
static const struct point overload[] = {
    OV("after @ndr", NULL, 1),
    OV("after @max", NULL, 2),
    OV("-dbrec,state @ndr", "dbrec,state", 1),
    OV("-dbrec,state @max", "dbrec,state", 2),
    OV("-dbrec @max", "dbrec", 2),
    OV("-state @max", "state", 2),
    OV("before @ndr", ALL_DPDK, 1),
    OV("before @max", ALL_DPDK, 2),
};

static const enum rxp_stage cols[] = {RXP_ST_CQE_POLL, RXP_ST_BUF_ALLOC, RXP_ST_SGE_SETUP,
				      RXP_ST_CHAIN,    RXP_ST_DOORBELL,	 RXP_ST_HANDOFF,
				      RXP_ST_HDR_READ, RXP_ST_FREE};
#define NCOLS (sizeof(cols) / sizeof(cols[0]))
/* rx total, stages, nic, sat, mpps, loss, NIC doorbell-record fetches per offered packet */
#define NVALS (NCOLS + 6)

static int child_run(const struct opts *o, const struct point *pt, const char *path)
{
	static volatile sig_atomic_t stop;
	const struct rx_engine_ops *eng =
	    strcmp(pt->engine, "verbs") ? &rx_engine_dpdk : &rx_engine_verbs;
	struct rx_config c;
	struct rx_caps caps;
	char err[512] = "";
	if (pt->legacy)
		setenv("RXRAY_SIM_LEGACY", pt->legacy, 1);
	if (pt->group)
		setenv("RXRAY_SIM_SCALAR_GROUP", pt->group, 1);
	rx_config_defaults(&c);
	snprintf(c.engine, sizeof(c.engine), "%s", pt->engine);
	c.mode = pt->mode;
	c.discipline = pt->d;
	c.consumer = pt->consumer;
	c.cqe_comp = pt->comp;
	c.mempool_cache = pt->cache;
	c.app = RX_APP_INLINE;
	c.seconds = o->seconds;
	c.rate_pps = pt->rate == 2 ? 0 : pt->rate == 1 ? o->ndr : o->rate;
	c.frame = pt->sat ? 128 : o->frame;
	c.payload = pt->sat ? RX_PAYLOAD_NONE : c.payload;
	c.ring = o->ring;
	c.allow_oversubscribe = true;
	c.quiet = true;
	if (o->cores[0] && rx_config_set(&c, "cores", o->cores, err, sizeof(err)))
		goto fail;
	if (rx_run_check(eng, &c, 0, &caps, NULL, err, sizeof(err)))
		goto fail;
	struct rxr_result *r = NULL;
	rxr_result_open(&r);
	if (!r || rx_run_exec(eng, &c, r, &stop, err, sizeof(err)) || rxr_result_write(r, path)) {
		rxr_result_free(r);
		goto fail;
	}
	rxr_result_free(r);
	return 0;
fail:
	fprintf(stderr, "bench_sim_fidelity: %s %s: %s\n", pt->disc, pt->label, err);
	return 1;
}

/* Median lap x laps / packets: robust to preemption on a shared VM. */
static double robust(const struct rxr_thread_result *t, enum rxp_stage s)
{
	return t->packets ? (double)t->st[s].p50 * (double)t->st[s].count / (double)t->packets : 0;
}

static double robust_busy(const struct rxr_thread_result *t)
{
	double sum = 0;
	for (int s = 0; s < RXP_ST_COUNT; s++)
		if (s != RXP_ST_IDLE)
			sum += robust(t, (enum rxp_stage)s);
	return sum;
}

static int one_run(const struct opts *o, const struct point *pt, double *v)
{
	char path[64], err[512];
	snprintf(path, sizeof(path), "/tmp/bench_sim_fidelity_%d.json", (int)getpid());
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0)
		_exit(child_run(o, pt, path));
	int st;
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
		return -EIO;
	struct rxr_result *r = NULL;
	rxr_result_read(path, &r, err, sizeof(err));
	unlink(path);
	if (!r) {
		fprintf(stderr, "bench_sim_fidelity: %s\n", err);
		return -EIO;
	}
	memset(v, 0, NVALS * sizeof(*v));
	for (size_t i = 0; i < r->nthreads; i++) {
		const struct rxr_thread_result *t = &r->threads[i];
		if (!strcmp(t->role, "rx")) {
			v[0] = robust_busy(t);
			for (size_t k = 0; k < NCOLS; k++)
				v[1 + k] = robust(t, cols[k]);
		} else if (!strcmp(t->role, "nic")) {
			v[1 + NCOLS] = robust_busy(t);
		}
	}
	double hz = r->clock.hz > 0 ? r->clock.hz : rxp_clock_get()->hz;
	v[2 + NCOLS] = r->rx_mpps > 0 && r->loss > 0.01 ? hz / (r->rx_mpps * 1e6) : 0;
	v[3 + NCOLS] = r->rx_mpps;
	v[4 + NCOLS] = r->loss;
	json_t *tot = json_object_get(json_object_get(json_object_get(r->extra, "nic"), "totals"),
				      "dbrec_reads");
	v[5 + NCOLS] = r->c.offered ? json_number_value(tot) / (double)r->c.offered : 0;
	rxr_result_free(r);
	return 0;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(double), cmp_d);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int table(const struct opts *o, const struct point *pts, size_t n, const char *title,
		 double *sat)
{
	int failed = 0;
	printf("\n## %s\n", title);
	printf("%-14s %-18s %7s", "discipline", "fixes", "rx");
	for (size_t k = 0; k < NCOLS; k++)
		printf(" %9.9s", rxp_stage_name(cols[k]));
	printf(" %7s %7s %7s %6s %7s\n", "nic", "sat", "rx_Mpps", "loss", "dbrec/p");
	for (size_t i = 0; i < n; i++) {
		double v[NVALS][MAX_RUNS], one[NVALS];
		int ok = 0;
		for (int k = 0; k < o->runs; k++) {
			if (one_run(o, &pts[i], one))
				continue;
			for (size_t c = 0; c < NVALS; c++)
				v[c][ok] = one[c];
			ok++;
		}
		if (!ok) {
			printf("%-14s %-18s failed\n", pts[i].disc, pts[i].label);
			failed++;
			continue;
		}
		if (sat)
			sat[i] = median(v[2 + NCOLS], ok);
		printf("%-14s %-18s %7.1f", pts[i].disc, pts[i].label, median(v[0], ok));
		for (size_t c = 0; c < NCOLS; c++)
			printf(" %9.1f", median(v[1 + c], ok));
		printf(" %7.1f %7.1f %7.3f %5.1f%% %7.3f\n", median(v[1 + NCOLS], ok),
		       median(v[2 + NCOLS], ok), median(v[3 + NCOLS], ok),
		       100 * median(v[4 + NCOLS], ok), median(v[5 + NCOLS], ok));
		fflush(stdout);
	}
	return failed;
}

static void usage(FILE *f)
{
	fprintf(f,
		"USAGE\n  bench_sim_fidelity [--cores LIST] [--seconds S] [--runs N] [--rate PPS]\n"
		"                     [--frame BYTES] [--ring N] [--ndr PPS]\n"
		"                     [--only fixes|phasing|overload]\n"
		"EXAMPLES\n  bench_sim_fidelity --runs 1 --seconds 0.3\n"
		"  bench_sim_fidelity --cores 2-5 --runs 5 --seconds 2\n");
}

int main(int argc, char **argv)
{
	struct opts o = {
	    .seconds = 0.5, .runs = 3, .rate = 0, .ndr = 6.5e6, .frame = 1064, .ring = 8192};
	static const struct option lo[] = {
	    {"cores", required_argument, NULL, 'c'}, {"seconds", required_argument, NULL, 's'},
	    {"runs", required_argument, NULL, 'n'},  {"rate", required_argument, NULL, 'r'},
	    {"frame", required_argument, NULL, 'f'}, {"ring", required_argument, NULL, 'R'},
	    {"only", required_argument, NULL, 'o'},  {"ndr", required_argument, NULL, 'N'},
	    {"help", no_argument, NULL, 'h'},	     {NULL, 0, NULL, 0}};
	int ch;
	while ((ch = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (ch) {
		case 'c': snprintf(o.cores, sizeof(o.cores), "%s", optarg); break;
		case 's': o.seconds = atof(optarg); break;
		case 'n': o.runs = atoi(optarg); break;
		case 'r':
			if (rxp_parse_rate(optarg, &o.rate) < 0)
				o.seconds = -1; /* reported below */
			break;
		case 'f': o.frame = (uint32_t)atoi(optarg); break;
		case 'R': o.ring = (uint32_t)atoi(optarg); break;
		case 'o': snprintf(o.only, sizeof(o.only), "%s", optarg); break;
		case 'N':
			if (rxp_parse_rate(optarg, &o.ndr) < 0)
				o.ndr = -1;
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (o.runs < 1 || o.runs > MAX_RUNS || o.seconds <= 0 || o.frame < 64 || o.ring < 4 ||
	    o.ndr <= 0 ||
	    (o.only[0] && strcmp(o.only, "fixes") && strcmp(o.only, "phasing") &&
	     strcmp(o.only, "overload"))) {
		fprintf(stderr,
			"bench_sim_fidelity: --runs 1..%d, --seconds > 0, --frame >= 64, "
			"--ring >= 4, --rate/--ndr rates (e.g. 6.5M), --only "
			"fixes|phasing|overload\n",
			MAX_RUNS);
		return 2;
	}
	if (rxp_clock_init(50)) {
		fprintf(stderr, "bench_sim_fidelity: cannot calibrate the clock\n");
		return 1;
	}
	printf("# bench_sim_fidelity: frame %u, ring %u, %.2f s x %d runs (median), rate %s, "
	       "cores %s, TSC %.2f GHz, probes %s\n",
	       o.frame, o.ring, o.seconds, o.runs, o.rate > 0 ? "limited" : "max",
	       o.cores[0] ? o.cores : "affinity", rxp_clock_get()->hz / 1e9,
	       RXRAY_PROBE_MODE == RXP_MODE_OFF ? "off" : "on");
	printf("# cycles/packet: rx = RX thread busy (median lap x laps / packets, app inline), "
	       "nic = NIC thread busy; sat = clock Hz / rx pps when loss > 1%% (0 otherwise); "
	       "dbrec/p = NIC doorbell-record fetches per offered packet\n"
	       "# fixes: after = all on; before = all off; -<fix> = that one off\n");
	int failed = 0;
	if (!o.only[0] || !strcmp(o.only, "fixes"))
		failed += table(&o, fixes, sizeof(fixes) / sizeof(fixes[0]),
				"fixes on/off (mempool cache 256)", NULL);
	if (!o.only[0] || !strcmp(o.only, "phasing")) {
		double sat[sizeof(phasing) / sizeof(phasing[0])] = {0};
		failed += table(&o, phasing, sizeof(phasing) / sizeof(phasing[0]),
				"scalar phasing: frame 128, payload none, cache 0, max rate "
				"(compare sat; keep phases if within 5%)",
				sat);
		/* rows come in threes: phased, groups of 4, per packet */
		for (size_t i = 0; i + 2 < sizeof(phasing) / sizeof(phasing[0]); i += 3) {
			if (sat[i] <= 0 || sat[i + 2] <= 0) {
				printf("# %s: not saturated, no verdict (needs the RX thread on "
				       "a core of its own)\n",
				       phasing[i].disc);
				continue;
			}
			/* per packet is the PMD's order; groups of 4 is only worth
			 * its change when it lands closer to it than phases do */
			double d = (sat[i] - sat[i + 2]) / sat[i + 2];
			double g = sat[i + 1] > 0 ? (sat[i + 1] - sat[i + 2]) / sat[i + 2] : NAN;
			const char *v = fabs(d) < 0.05 ? "keep phases (RXD_SCALAR_GROUP 0)"
					: fabs(g) < fabs(d) ? "lap groups of 4 (RXD_SCALAR_GROUP 4)"
							    : "keep phases: groups of 4 is no closer "
							      "(phases understate/overstate the PMD's "
							      "order by the figure shown)";
			printf("# %s: phased %.1f, groups of 4 %.1f vs per packet %.1f cycles/packet "
			       "(%+.1f%%, %+.1f%%): %s\n",
			       phasing[i].disc, sat[i], sat[i + 1], sat[i + 2], 100 * d, 100 * g, v);
		}
		if (RXRAY_PROBE_MODE != RXP_MODE_OFF)
			printf("# probes are on in this build: sat includes their laps; "
			       "build with -DRXRAY_PROBES=off for the verdict\n");
	}
	if (!o.only[0] || !strcmp(o.only, "overload")) {
		char t[160];
		snprintf(t, sizeof(t),
			 "overload: hds cache 256 at --ndr %.2f Mpps and at max (collapse = rx at "
			 "max below rx at ndr)",
			 o.ndr / 1e6);
		failed += table(&o, overload, sizeof(overload) / sizeof(overload[0]), t, NULL);
	}
	return failed ? 1 : 0;
}
