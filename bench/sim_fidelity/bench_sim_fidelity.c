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
 * The writers table (issue 41) asks whether the NIC's DMA writer count
 * changes what the receiver pays: verbs single segment at fixed rates
 * (--wrates, default 5.7M and 20M), app on a thread of its own, W = 1
 * against each of --writer-counts (default 2,4,8): every receiver stage's
 * cycles/packet, loss, packets per poll, and the NIC's cqe_write per
 * writer; then a verdict per rate (every stage within 10%, or 2 cycles
 * for stages under 20; loss within 0.1 points). Beside it, the host's
 * physical reference: one core publishing runs of 32 (header line, 8-byte
 * stamp, CQE line, owner bit last) to a consumer on another core that
 * polls the owner bits, flat out: what one writer core can do here.
 *
 * USAGE
 *   bench_sim_fidelity [--cores LIST] [--seconds S] [--runs N] [--rate PPS]
 *                      [--frame BYTES] [--ring N] [--ndr PPS]
 *                      [--wrates R1,R2] [--writer-counts W1,W2,...]
 *                      [--only fixes|phasing|overload|writers]
 * EXAMPLES
 *   bench_sim_fidelity --runs 1 --seconds 0.3        # 2-core VM: a smoke run
 *   bench_sim_fidelity --cores 2-5 --runs 5 --seconds 2
 *   bench_sim_fidelity --cores 2-15 --runs 3 --seconds 1 --only writers
 */
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_run.h"
#include "rxray/core.h"
#include "rxray/dpdk.h"
#include "rxray/result.h"
#include "rxray/simnic.h"
#include "rxray/util.h"
#include "rxray/verbs.h"

#define BENCH_MAX_RUNS 15
#define ALL_DPDK "nextnull,noprefetch,wqecheck,ptype,mrsplit,ringwqes,state,dbrec"

struct opts {
	struct bench_opts b;
	double rate;
	double ndr;
	uint32_t frame;
	uint32_t ring;
	char only[16];
	double wrates[4];
	int nwrates;
	uint32_t wcounts[8];
	int nwcounts;
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
	int rate; /* 0: --rate, 1: --ndr, 2: max, 3: wrate */
	uint32_t writers; /* DMA writers (0: auto) */
	double wrate;     /* rate 3: this rate */
	bool app_thread;  /* the app on a core of its own (else inline) */
};

#define DP(disc, lab, mode, d, comp, leg)                                                          \
	{                                                                                          \
		disc, lab, "dpdk", mode, d, RX_CONSUMER_DEVX, comp, leg, NULL, 256, false, 0, 0, 0, \
		    false                                                                      \
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
     NULL, NULL, 0, false, 0, 0, 0, false},
    {"verbs hds", "rdma-core", "verbs", RX_MODE_HDS, RX_DISC_AUTO, RX_CONSUMER_RDMA_CORE,
     RX_CQE_COMP_AUTO, NULL, NULL, 0, false, 0, 0, 0, false},
    {"verbs hds", "devx -state,dbrec", "verbs", RX_MODE_HDS, RX_DISC_AUTO, RX_CONSUMER_DEVX,
     RX_CQE_COMP_AUTO, "state,dbrec", NULL, 0, false, 0, 0, 0, false},
};

#define PH(disc, lab, mode, grp)                                                                   \
	{                                                                                          \
		disc, lab, "dpdk", mode, RX_DISC_SCALAR, RX_CONSUMER_DEVX, RX_CQE_COMP_AUTO, NULL, \
		    grp, 0, true, 2, 0, 0, false                                                   \
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
		    RX_CQE_COMP_AUTO, leg, NULL, 256, false, r, 0, 0, false                        \
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
/* rx total, stages, nic, sat, mpps, loss, NIC doorbell-record fetches per
 * offered packet, then (writers table) packets per poll, the NIC's
 * cqe_write per writer, app total */
#define NVALS (NCOLS + 9)
#define V_PPP (NCOLS + 6)
#define V_CQEW (NCOLS + 7)
#define V_APP (NCOLS + 8)

/* One point's config (one_run runs it in a child: bench_run). */
static void point_config(const struct opts *o, const struct point *pt, struct rx_config *c)
{
	rx_config_defaults(c);
	snprintf(c->engine, sizeof(c->engine), "%s", pt->engine);
	c->mode = pt->mode;
	c->discipline = pt->d;
	c->consumer = pt->consumer;
	c->cqe_comp = pt->comp;
	/* verbs has no mempool, and a run refuses a knob its engine does not
	 * read: its rows leave the cache at the default */
	if (strcmp(pt->engine, "verbs"))
		c->mempool_cache = pt->cache;
	c->app = pt->app_thread ? RX_APP_THREAD : RX_APP_INLINE;
	c->dma_writers = pt->writers;
	c->rate_pps = pt->rate == 3   ? pt->wrate
		      : pt->rate == 2 ? 0
		      : pt->rate == 1 ? o->ndr
				      : o->rate;
	c->frame = pt->sat ? 128 : o->frame;
	c->payload = pt->sat ? RX_PAYLOAD_NONE : c->payload;
	c->ring = o->ring;
	c->allow_oversubscribe = true;
	c->quiet = true;
}

static int one_run(const struct opts *o, const struct point *pt, double *v)
{
	const struct rx_engine_ops *eng =
	    strcmp(pt->engine, "verbs") ? &rx_engine_dpdk : &rx_engine_verbs;
	/* read once at the NIC's setup, in the child */
	const char *const env[] = {"RXRAY_SIM_LEGACY", pt->legacy, "RXRAY_SIM_SCALAR_GROUP",
				   pt->group, NULL};
	struct rx_config c;
	struct rxr_result *r;
	char what[96];
	snprintf(what, sizeof(what), "%s %s", pt->disc, pt->label);
	point_config(o, pt, &c);
	int rc = bench_run(&o->b, eng, &c, env, what, &r);
	if (rc)
		return rc;
	memset(v, 0, NVALS * sizeof(*v));
	int nnic = 0;
	for (size_t i = 0; i < r->nthreads; i++) {
		const struct rxr_thread_result *t = &r->threads[i];
		if (!strcmp(t->role, "rx")) {
			v[0] = bench_robust_busy(t);
			for (size_t k = 0; k < NCOLS; k++)
				v[1 + k] = bench_robust(t, cols[k]);
		} else if (!strcmp(t->role, "app")) {
			v[V_APP] = bench_robust_busy(t);
		} else if (!strcmp(t->role, "nic")) {
			/* one writer's figures, averaged over the writers */
			v[1 + NCOLS] += bench_robust_busy(t);
			v[V_CQEW] += bench_robust(t, RXP_ST_CQE_WRITE);
			nnic++;
		}
	}
	if (nnic) {
		v[1 + NCOLS] /= nnic;
		v[V_CQEW] /= nnic;
	}
	v[V_PPP] = json_number_value(
	    json_object_get(json_object_get(r->extra, "nic"), "rx_packets_per_poll"));
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

/* Medians of --runs runs of one point into med[NVALS]; the runs done. */
static int point_median(const struct opts *o, const struct point *pt, double *med)
{
	double v[NVALS][BENCH_MAX_RUNS], one[NVALS];
	int ok = 0;
	for (int k = 0; k < o->b.runs; k++) {
		if (one_run(o, pt, one))
			continue;
		for (size_t c = 0; c < NVALS; c++)
			v[c][ok] = one[c];
		ok++;
	}
	for (size_t c = 0; ok && c < NVALS; c++)
		med[c] = bench_median(v[c], ok);
	return ok;
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
		double m[NVALS] = {0};
		if (!point_median(o, &pts[i], m)) {
			printf("%-14s %-18s failed\n", pts[i].disc, pts[i].label);
			failed++;
			continue;
		}
		if (sat)
			sat[i] = m[2 + NCOLS];
		printf("%-14s %-18s %7.1f", pts[i].disc, pts[i].label, m[0]);
		for (size_t c = 0; c < NCOLS; c++)
			printf(" %9.1f", m[1 + c]);
		printf(" %7.1f %7.1f %7.3f %5.1f%% %7.3f\n", m[1 + NCOLS], m[2 + NCOLS],
		       m[3 + NCOLS], 100 * m[4 + NCOLS], m[5 + NCOLS]);
		fflush(stdout);
	}
	return failed;
}

/*
 * The physical reference: one writer core publishing runs of 32 to a
 * consumer core, each packet a 64-byte header line, an 8-byte stamp in a
 * 2 KiB payload slot and a 64-byte CQE line whose first word (the owner
 * mark) is stored last with release; the consumer polls the marks in
 * order, up to 64 at a time, and hands ring space back every 64.
 */
#define REF_N 8192u
#define REF_RUN 32u
#define REF_SLOT 2048u
struct ref_line {
	uint64_t w[8];
} __attribute__((aligned(64)));
struct ref_state {
	struct ref_line *cq, *hdr;
	uint8_t *pay;
	_Alignas(64) uint64_t credit; /* consumer index, every 64 */
	_Alignas(64) int stop;
	uint64_t written, consumed;
	int wcore, ccore;
};

static void ref_pin(int core)
{
	cpu_set_t s;
	if (core < 0)
		return;
	CPU_ZERO(&s);
	CPU_SET(core, &s);
	(void)pthread_setaffinity_np(pthread_self(), sizeof(s), &s);
}

static void *ref_writer(void *arg)
{
	struct ref_state *st = arg;
	ref_pin(st->wcore);
	uint64_t i = 0;
	while (!__atomic_load_n(&st->stop, __ATOMIC_RELAXED)) {
		if (i + REF_RUN - __atomic_load_n(&st->credit, __ATOMIC_ACQUIRE) > REF_N - 64)
			continue; /* ring full */
		for (uint64_t j = i; j < i + REF_RUN; j++) {
			uint32_t s = (uint32_t)(j & (REF_N - 1));
			for (int k = 0; k < 8; k++)
				st->hdr[s].w[k] = j ^ (uint64_t)k;
			memcpy(st->pay + (size_t)s * REF_SLOT + 64, &j, sizeof(j));
			for (int k = 1; k < 8; k++)
				st->cq[s].w[k] = j;
			__atomic_store_n(&st->cq[s].w[0], ((j / REF_N) & 1) + 1, __ATOMIC_RELEASE);
		}
		i += REF_RUN;
	}
	st->written = i;
	return NULL;
}

static void *ref_consumer(void *arg)
{
	struct ref_state *st = arg;
	ref_pin(st->ccore);
	uint64_t ci = 0, sum = 0;
	while (!__atomic_load_n(&st->stop, __ATOMIC_RELAXED)) {
		uint32_t k = 0;
		for (; k < 64; k++) {
			uint64_t j = ci + k;
			uint32_t s = (uint32_t)(j & (REF_N - 1));
			if (__atomic_load_n(&st->cq[s].w[0], __ATOMIC_ACQUIRE) != ((j / REF_N) & 1) + 1)
				break;
			uint64_t stamp;
			memcpy(&stamp, st->pay + (size_t)s * REF_SLOT + 64, sizeof(stamp));
			sum += st->cq[s].w[1] + st->hdr[s].w[1] + stamp;
		}
		if (!k)
			continue;
		if ((ci + k) / 64 != ci / 64)
			__atomic_store_n(&st->credit, ci + k, __ATOMIC_RELEASE);
		ci += k;
	}
	st->consumed = ci + (sum == 42); /* keeps the reads */
	return NULL;
}

/* One flat-out run of `seconds`; Mpps the consumer took, or -1. */
static double ref_once(double seconds, int wcore, int ccore)
{
	struct ref_state st = {.wcore = wcore, .ccore = ccore};
	double mpps = -1;
	st.cq = aligned_alloc(64, REF_N * sizeof(struct ref_line));
	st.hdr = aligned_alloc(64, REF_N * sizeof(struct ref_line));
	st.pay = aligned_alloc(64, (size_t)REF_N * REF_SLOT);
	pthread_t w, c;
	if (!st.cq || !st.hdr || !st.pay)
		goto out;
	memset(st.cq, 0, REF_N * sizeof(struct ref_line));
	memset(st.hdr, 0, REF_N * sizeof(struct ref_line));
	memset(st.pay, 0, (size_t)REF_N * REF_SLOT);
	if (pthread_create(&c, NULL, ref_consumer, &st))
		goto out;
	if (pthread_create(&w, NULL, ref_writer, &st)) {
		__atomic_store_n(&st.stop, 1, __ATOMIC_RELAXED);
		pthread_join(c, NULL);
		goto out;
	}
	uint64_t t0 = rxp_now();
	rxp_spin_until(t0, (uint64_t)(seconds * rxp_clock_get()->hz));
	__atomic_store_n(&st.stop, 1, __ATOMIC_RELAXED);
	pthread_join(w, NULL);
	pthread_join(c, NULL);
	mpps = (double)st.consumed / seconds / 1e6;
out:
	free(st.cq);
	free(st.hdr);
	free(st.pay);
	return mpps;
}

/* The first two cores of --cores (or of the affinity mask). */
static void ref_cores(const struct opts *o, int *wcore, int *ccore)
{
	struct rx_config c;
	char err[256];
	*wcore = *ccore = -1;
	rx_config_defaults(&c);
	if (o->b.cores[0] && rx_config_set(&c, "cores", o->b.cores, err, sizeof(err)) == 0 &&
	    c.ncores >= 2) {
		*ccore = c.cores[0];
		*wcore = c.cores[1];
	}
}

/* Receiver stages of the writers table (verbs single, app on a thread). */
static const enum rxp_stage wcols[] = {RXP_ST_CQE_POLL, RXP_ST_HDR_READ, RXP_ST_DOORBELL,
				       RXP_ST_HANDOFF, RXP_ST_SGE_SETUP};
#define NWCOLS (sizeof(wcols) / sizeof(wcols[0]))

static size_t col_of(enum rxp_stage s)
{
	for (size_t k = 0; k < NCOLS; k++)
		if (cols[k] == s)
			return k;
	return 0;
}

/* Within the fidelity bound: 10%, or 2 cycles under 20. */
static bool close_enough(double a, double b)
{
	if (a < 20 && b < 20)
		return fabs(a - b) <= 2;
	return fabs(a - b) <= 0.1 * fmax(a, b);
}

static int writers_table(const struct opts *o)
{
	int failed = 0, wc, cc;
	ref_cores(o, &wc, &cc);
	double ref[BENCH_MAX_RUNS];
	int nref = 0;
	for (int k = 0; k < o->b.runs; k++) {
		double m = ref_once(o->b.seconds, wc, cc);
		if (m > 0)
			ref[nref++] = m;
	}
	printf("\n## writers: does the DMA writer count change what the receiver pays?\n");
	printf("# physical reference: one writer core publishing runs of 32 (header line, "
	       "stamp, CQE line, owner bit last) to a polling consumer, flat out: %.1f Mpps "
	       "(median of %d; writer core %d, consumer core %d)\n",
	       nref ? bench_median(ref, nref) : 0.0, nref, wc, cc);
	printf("# verbs single %u B, app thread, fixed rates; cycles/packet (median lap x laps / "
	       "packets); ppp = packets per poll that found any; nic = one writer's busy, "
	       "cqe_w its cqe_write\n",
	       o->frame);
	printf("%-8s %3s %7s", "rate", "W", "rx");
	for (size_t k = 0; k < NWCOLS; k++)
		printf(" %9.9s", rxp_stage_name(wcols[k]));
	printf(" %7s %6s %7s %7s %7s %7s\n", "app", "ppp", "loss", "rx_Mpps", "nic", "cqe_w");
	for (int ri = 0; ri < o->nwrates; ri++) {
		double base[NVALS] = {0};
		bool have_base = false, all_close = true;
		for (int wi = -1; wi < o->nwcounts; wi++) {
			uint32_t w = wi < 0 ? 1 : o->wcounts[wi];
			if (wi >= 0 && w == 1)
				continue;
			struct point pt = {"writers", "", "verbs", RX_MODE_SINGLE, RX_DISC_AUTO,
					   RX_CONSUMER_DEVX, RX_CQE_COMP_AUTO, NULL, NULL, 0, false,
					   3, w, o->wrates[ri], true};
			double m[NVALS] = {0};
			if (!point_median(o, &pt, m)) {
				printf("%-8.2f %3u failed\n", o->wrates[ri] / 1e6, w);
				failed++;
				all_close = false;
				continue;
			}
			printf("%-8.2f %3u %7.1f", o->wrates[ri] / 1e6, w, m[0]);
			for (size_t k = 0; k < NWCOLS; k++)
				printf(" %9.1f", m[1 + col_of(wcols[k])]);
			printf(" %7.1f %6.1f %6.2f%% %7.3f %7.1f %7.1f\n", m[V_APP], m[V_PPP],
			       100 * m[4 + NCOLS], m[3 + NCOLS], m[1 + NCOLS], m[V_CQEW]);
			fflush(stdout);
			if (wi < 0) {
				memcpy(base, m, sizeof(base));
				have_base = true;
				continue;
			}
			if (!have_base)
				continue;
			bool ok = close_enough(base[0], m[0]) && close_enough(base[V_APP], m[V_APP]) &&
				  fabs(base[4 + NCOLS] - m[4 + NCOLS]) <= 0.001;
			for (size_t k = 0; k < NWCOLS; k++)
				ok = ok && close_enough(base[1 + col_of(wcols[k])],
							m[1 + col_of(wcols[k])]);
			if (!ok) {
				all_close = false;
				printf("#   W=%u differs from W=1 beyond the bound at %.2f Mpps\n", w,
				       o->wrates[ri] / 1e6);
			}
		}
		printf("# %.2f Mpps: %s\n", o->wrates[ri] / 1e6,
		       all_close ? "every W within the bound of W=1 (stages 10% or 2 cycles, "
				   "loss 0.1 points)"
				 : "NOT within the bound (above)");
	}
	return failed;
}

static void usage(FILE *f)
{
	fprintf(f,
		"USAGE\n  bench_sim_fidelity [--cores LIST] [--seconds S] [--runs N] [--rate PPS]\n"
		"                     [--frame BYTES] [--ring N] [--ndr PPS]\n"
		"                     [--wrates R1,R2] [--writer-counts W1,W2,...]\n"
		"                     [--only fixes|phasing|overload|writers]\n"
		"EXAMPLES\n  bench_sim_fidelity --runs 1 --seconds 0.3\n"
		"  bench_sim_fidelity --cores 2-5 --runs 5 --seconds 2\n"
		"  bench_sim_fidelity --cores 2-15 --runs 3 --seconds 1 --only writers\n");
}

int main(int argc, char **argv)
{
	struct opts o = {.b = {.seconds = 0.5, .runs = 3},
			 .rate = 0,
			 .ndr = 6.5e6,
			 .frame = 1064,
			 .ring = 8192,
			 .wrates = {5.7e6, 20e6},
			 .nwrates = 2,
			 .wcounts = {2, 4, 8},
			 .nwcounts = 3};
	bool bad_list = false;
	static const struct option lo[] = {
	    BENCH_LONG_OPTS,
	    {"rate", required_argument, NULL, 'r'},   {"frame", required_argument, NULL, 'f'},
	    {"ring", required_argument, NULL, 'R'},   {"only", required_argument, NULL, 'o'},
	    {"ndr", required_argument, NULL, 'N'},    {"wrates", required_argument, NULL, 'W'},
	    {"writer-counts", required_argument, NULL, 'C'}, {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0}};
	int ch, rc;
	while ((ch = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (ch) {
		case 'r':
			if (rxu_parse_rate(optarg, &o.rate) < 0)
				o.b.seconds = -1; /* reported below */
			break;
		case 'f': o.frame = (uint32_t)atoi(optarg); break;
		case 'R': o.ring = (uint32_t)atoi(optarg); break;
		case 'o': snprintf(o.only, sizeof(o.only), "%s", optarg); break;
		case 'N':
			if (rxu_parse_rate(optarg, &o.ndr) < 0)
				o.ndr = -1;
			break;
		case 'W':
		case 'C': {
			char buf[256], *save = NULL;
			int n = 0;
			snprintf(buf, sizeof(buf), "%s", optarg);
			for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
				uint64_t v;
				if (ch == 'W' && n < 4 && rxu_parse_rate(t, &o.wrates[n]) == 0 &&
				    o.wrates[n] > 0)
					n++;
				else if (ch == 'C' && n < 8 &&
					 rxu_parse_u64(t, 1, RXS_MAX_WRITERS, &v) == 0)
					o.wcounts[n++] = (uint32_t)v;
				else
					bad_list = true;
			}
			if (!n)
				bad_list = true;
			if (ch == 'W')
				o.nwrates = n;
			else
				o.nwcounts = n;
			break;
		}
		default:
			if ((rc = bench_opt(ch, optarg, &o.b, usage)) != BENCH_OPT_TAKEN)
				return rc;
			break;
		}
	}
	if (!bench_opts_ok(&o.b) || o.frame < 64 || o.ring < 4 || o.ndr <= 0 || bad_list ||
	    (o.only[0] && strcmp(o.only, "fixes") && strcmp(o.only, "phasing") &&
	     strcmp(o.only, "overload") && strcmp(o.only, "writers"))) {
		fprintf(stderr,
			"bench_sim_fidelity: --runs 1..%d, --seconds > 0, --frame >= 64, "
			"--ring >= 4, --rate/--ndr rates (e.g. 6.5M), --wrates up to 4 rates, "
			"--writer-counts up to 8 counts 1..16, --only "
			"fixes|phasing|overload|writers\n",
			BENCH_MAX_RUNS);
		return 2;
	}
	if (rxp_clock_init(50)) {
		fprintf(stderr, "bench_sim_fidelity: cannot calibrate the clock\n");
		return 1;
	}
	printf("# bench_sim_fidelity: frame %u, ring %u, %.2f s x %d runs (median), rate %s, "
	       "cores %s, TSC %.2f GHz, probes %s\n",
	       o.frame, o.ring, o.b.seconds, o.b.runs, o.rate > 0 ? "limited" : "max",
	       o.b.cores[0] ? o.b.cores : "affinity", rxp_clock_get()->hz / 1e9,
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
	if (!o.only[0] || !strcmp(o.only, "writers"))
		failed += writers_table(&o);
	return failed ? 1 : 0;
}
