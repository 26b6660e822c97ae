/* SPDX-License-Identifier: MIT */
/*
 * bench_gpudirect: the seed's GPUDirect table, replayed on the software
 * NIC. The dpdk engine receives with payloads in GPU memory: single
 * segment (whole frames in GPU memory, the kernel reads each header) with
 * no GPU work and with the reorder kernel, against header-data split
 * (header to host, payload to GPU), at 1064/2064/4064/8064 B. Each
 * configuration runs in a child process (one EAL per process); the
 * median of --runs runs (by received rate) is printed.
 *
 * USAGE
 *   bench_gpudirect [--cores LIST] [--seconds S] [--runs N] [--rate PPS]
 *                   [--gpu-launch kernel|graph|persistent] [--dma-writers W|auto]
 *                   [--queues N] [--batch B] [--only TEXT] [--frames LIST]
 *                   [--ndr-search [--ndr-floor PPS] [--ndr-precision P]
 *                    [--ndr-trials N]] [--self-test]
 * EXAMPLES
 *   bench_gpudirect --cores 2-7 --runs 3 --seconds 1
 *   bench_gpudirect --rate 20M --gpu-launch persistent
 *   bench_gpudirect --queues 2 --batch 256 --only single --frames 1064
 *   bench_gpudirect --ndr-search --only single --frames 1064 --seconds 1 --runs 3
 *   bench_gpudirect --self-test
 *
 * --queues and --batch are the run's own options (receive queues, each
 * with its rx thread, consumer and the NIC's writers; packets a hand-off,
 * so a kernel launch, carries). --only keeps the rows whose path contains
 * TEXT ("single", "hds", "reorder", "single, reorder"); --frames the
 * frame sizes listed.
 *
 * Columns: offered and received Mpps (rates.offered_mpps, rx_mpps), loss,
 * where the lost packets went (out_of_buffer: no WQE posted; app_dropped:
 * the hand-off ring was full), the GPU's own ceiling (gpu_bound_mpps: its
 * kernel time per packet), and the stage that sets the ceiling: the
 * busiest thread (busy cycles over the run's cycles; nic, rx, app or the
 * GPU; the NIC only when nothing was lost) and that thread's costliest
 * stage in cycles per packet.
 * --ndr-search replaces the flat-out table by each row's NDR: the highest
 * offered rate at which nothing was lost (out_of_buffer + nombuf +
 * app_dropped == 0 and received == offered), searched --runs times (each
 * run one whole search; the median of them is printed). A search's trials
 * (each a child process of --seconds, at least 1 s) are: one unpaced trial
 * (no loss there: the NDR is at least the flat-out rate, generator-limited;
 * otherwise its offered rate is the first failed rate), then --ndr-floor
 * (default 1M; loss there: NDR below it), then the flat-out trial's
 * received rate, then steps away from it of the precision, doubling, while
 * they keep the same verdict, then bisection (geometric) of [highest passed,
 * lowest failed] until (hi - lo) / hi <= --ndr-precision (default 0.02 or
 * "2%") or --ndr-trials trials (default 10). A trial whose result says the
 * host disturbed it (validity.disturbed) is run again once. The trials are
 * listed as they run. Without --only/--frames the search takes the single
 * segment rows at 1064 B. --self-test runs the search on simulated receivers
 * (no GPU, no EAL) and prints PASS/FAIL.
 * Needs a CUDA GPU (exit 77 without one; not for --self-test).
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_run.h"
#include "rxray/core.h"
#include "rxray/dpdk.h"
#include "rxray/gpu.h"
#include "rxray/result.h"
#include "rxray/util.h"

struct opts {
	struct bench_opts b;
	double rate;
	enum rx_gpu_launch launch;
	uint32_t writers; /* --dma-writers (0 = auto) */
	uint32_t queues, batch; /* 0: the engine's default */
	char only[48];
	uint32_t frames[8], nframes; /* 0: all of frames[] */
	bool ndr;		     /* --ndr-search */
	double ndr_floor;	     /* pps; must pass, else "NDR < floor" */
	double ndr_precision;	     /* stop at (hi - lo) / hi <= this */
	int ndr_trials;		     /* trials a search at most */
};

struct point {
	const char *name;
	enum rx_mode mode;
	enum rx_gpu_work work;
};

static const struct point points[] = {
    {"single, work none", RX_MODE_SINGLE, RX_GPU_WORK_NONE},
    {"single, reorder", RX_MODE_SINGLE, RX_GPU_WORK_REORDER},
    {"hds, work none", RX_MODE_HDS, RX_GPU_WORK_NONE},
    {"hds, reorder", RX_MODE_HDS, RX_GPU_WORK_REORDER},
};
static const uint32_t frames[] = {1064, 2064, 4064, 8064};

struct sample {
	double offered, mpps, loss, gpu_mpps;
	uint64_t oob, app_dropped, nombuf, offered_n, received_n;
	bool conserved, disturbed;
	char limit[96];
};

/* One point's config (one_run runs it in a child: bench_run). */
static void point_config(const struct opts *o, const struct point *pt, uint32_t frame,
			 struct rx_config *c)
{
	rx_config_defaults(c);
	snprintf(c->engine, sizeof(c->engine), "dpdk");
	snprintf(c->device, sizeof(c->device), "sim");
	c->mode = pt->mode;
	c->payload_mem = RX_MEM_GPU;
	c->payload = RX_PAYLOAD_FULL;
	c->gpu_work = pt->work;
	c->gpu_launch = pt->work == RX_GPU_WORK_NONE ? RX_GPU_LAUNCH_KERNEL : o->launch;
	c->rate_pps = o->rate;
	c->dma_writers = o->writers;
	if (o->queues)
		c->queues = o->queues;
	if (o->batch)
		c->batch = o->batch;
	c->frame = frame;
	c->allow_oversubscribe = true;
	c->quiet = true;
}

/* The busiest thread (busy cycles over the run's) and its costliest stage.
 * With losses the receiver is the limit, so the NIC (busy whenever it is
 * offered flat out) is left out; without, a NIC at its maximum is. */
static void name_limit(const struct rxr_result *r, char *out, size_t len)
{
	double hz = r->clock.hz, best = -1;
	const struct rxr_thread_result *bt = NULL;
	snprintf(out, len, "-");
	if (!(hz > 0) || !(r->seconds > 0))
		return;
	for (size_t i = 0; i < r->nthreads; i++) {
		const struct rxr_thread_result *t = &r->threads[i];
		if (r->loss > 1e-3 && !strcmp(t->role, "nic"))
			continue;
		double u = (double)t->busy_cycles / (hz * r->seconds);
		if (u > best) {
			best = u;
			bt = t;
		}
	}
	if (!bt)
		return;
	int top = -1;
	for (int s = 0; s < RXP_ST_COUNT; s++)
		if (s != RXP_ST_IDLE && (bt->stage_mask & (1u << s)) &&
		    (top < 0 || bt->st[s].cycles_per_packet > bt->st[top].cycles_per_packet))
			top = s;
	snprintf(out, len, "%s %.0f%% busy: %s %.0f cyc/pkt", bt->role, 100 * best,
		 top >= 0 ? rxp_stage_name((enum rxp_stage)top) : "-",
		 top >= 0 ? bt->st[top].cycles_per_packet : 0);
}

static int one_run(const struct opts *o, const struct point *pt, uint32_t frame, struct sample *s)
{
	struct rx_config c;
	struct rxr_result *r;
	char what[96];
	snprintf(what, sizeof(what), "%s %u B", pt->name, frame);
	point_config(o, pt, frame, &c);
	int rc = bench_run(&o->b, &rx_engine_dpdk, &c, NULL, what, &r);
	if (rc)
		return rc;
	memset(s, 0, sizeof(*s));
	s->offered = r->offered_mpps;
	s->mpps = r->rx_mpps;
	s->loss = r->loss;
	s->offered_n = r->c.offered;
	s->oob = r->c.out_of_buffer;
	s->app_dropped = r->c.app_dropped;
	s->nombuf = r->c.nombuf;
	s->received_n = r->c.received;
	s->conserved = rxr_counters_conserved(&r->c);
	s->disturbed =
	    json_is_true(json_object_get(json_object_get(r->extra, "validity"), "disturbed"));
	json_t *g = json_array_get(json_object_get(r->extra, "gpu"), 0);
	s->gpu_mpps = json_number_value(json_object_get(g, "gpu_bound_mpps"));
	name_limit(r, s->limit, sizeof(s->limit));
	rxr_result_free(r);
	return 0;
}

static int cmp_s(const void *a, const void *b)
{
	double x = ((const struct sample *)a)->mpps, y = ((const struct sample *)b)->mpps;
	return x < y ? -1 : x > y;
}

/*
 * The NDR search, pure: rates in, the next rate or a verdict out. The
 * caller runs a trial at s->next (0: flat out, unpaced) and feeds back the
 * rates it offered and received and whether it lost anything. Loss is
 * taken to rise with the rate; [lo, hi] is the highest offered rate that
 * lost nothing below the lowest that lost, rebuilt from every trial so a
 * noisy loss under a pass lowers lo rather than leaving a bracket that
 * contradicts a trial.
 */
#define NDR_MAX_TRIALS 40

enum ndr_verdict {
	NDR_GOING,     /* run a trial at next */
	NDR_FOUND,     /* (hi - lo) / hi <= precision; the NDR is lo */
	NDR_CAPPED,    /* the trial cap came first; lo passed, not to precision */
	NDR_BELOW,     /* the floor (or less) lost: NDR < hi */
	NDR_GENERATOR, /* flat out lost nothing: NDR >= lo, generator-limited */
};

struct ndr_trial {
	double rate; /**< offered pps */
	bool lost;   /**< anything lost */
};

struct ndr_search {
	double floor;			    /**< pps tried second; must pass */
	double precision;		    /**< relative width to stop at */
	int max_trials;			    /**< trials at most */
	struct ndr_trial t[NDR_MAX_TRIALS]; /**< trials fed, in order */
	int n;				    /**< trials fed */
	int probe;			    /**< t[] index of the probe at flat_rx; -1: none */
	double flat_rx;			    /**< received pps of the flat-out trial */
	double lo, hi; /**< pps: highest passed below hi (0: none), lowest lost */
	double next;   /**< pps of the next trial (0: flat out) */
	enum ndr_verdict verdict;
};

static void ndr_search_init(struct ndr_search *s, double floor_pps, double precision,
			    int max_trials)
{
	memset(s, 0, sizeof(*s));
	s->floor = floor_pps;
	s->precision = precision;
	s->max_trials = max_trials < NDR_MAX_TRIALS ? max_trials : NDR_MAX_TRIALS;
	s->probe = -1;
	s->verdict = NDR_GOING;
}

/* The next rate inside (lo, hi). An overloaded receiver delivers about its
 * ceiling, so the NDR is usually near the flat-out received rate: from that
 * probe, step away while the verdicts agree (by the precision, doubling), so
 * the first bracket is narrow; then halve the log rate (the precision is
 * relative, and [1, 40] Mpps to 2% by halving rates would outrun the cap). */
static double ndr_search_pick(const struct ndr_search *s)
{
	double mid = sqrt(s->lo * s->hi);
	if (s->probe < 0)
		return mid;
	bool lost = s->t[s->probe].lost;
	for (int i = s->probe + 1; i < s->n; i++)
		if (s->t[i].lost != lost)
			return mid;
	double step = ldexp(s->precision, s->n - 1 - s->probe);
	if (step >= 0.5)
		return mid;
	double r = s->t[s->n - 1].rate;
	double x = lost ? r * (1 - step) : r / (1 - step);
	return x > s->lo && x < s->hi ? x : mid;
}

static void ndr_search_feed(struct ndr_search *s, double offered, double received, bool lost)
{
	if (s->verdict != NDR_GOING || s->n >= NDR_MAX_TRIALS)
		return;
	s->t[s->n++] = (struct ndr_trial){offered, lost};
	if (s->n == 1) {
		s->flat_rx = received;
		if (!lost) {
			s->lo = s->hi = offered;
			s->verdict = NDR_GENERATOR;
			return;
		}
	}
	s->hi = INFINITY;
	for (int i = 0; i < s->n; i++)
		if (s->t[i].lost && s->t[i].rate < s->hi)
			s->hi = s->t[i].rate;
	s->lo = 0;
	for (int i = 0; i < s->n; i++)
		if (!s->t[i].lost && s->t[i].rate < s->hi && s->t[i].rate > s->lo)
			s->lo = s->t[i].rate;
	if (!(s->lo > 0)) {
		if (s->n == 1 && s->floor < s->hi)
			s->next = s->floor;
		else
			s->verdict = NDR_BELOW;
		return;
	}
	if (s->hi - s->lo <= s->precision * s->hi * (1 + 1e-9)) {
		s->verdict = NDR_FOUND;
		return;
	}
	if (s->n >= s->max_trials) {
		s->verdict = NDR_CAPPED;
		return;
	}
	if (s->n == 2 && s->flat_rx > s->lo && s->flat_rx < s->hi) {
		s->probe = 2;
		s->next = s->flat_rx;
		return;
	}
	s->next = ndr_search_pick(s);
}

/* The search's NDR in pps for the median: a bound below the floor counts 0. */
static double ndr_value(const struct ndr_search *s)
{
	return s->verdict == NDR_BELOW ? 0 : s->lo;
}

static void ndr_cell(const struct ndr_search *s, char *out, size_t len)
{
	switch (s->verdict) {
	case NDR_FOUND: snprintf(out, len, "%.2f", s->lo / 1e6); break;
	case NDR_CAPPED: snprintf(out, len, "%.2f (trial cap)", s->lo / 1e6); break;
	case NDR_BELOW: snprintf(out, len, "< %.2f", s->hi / 1e6); break;
	case NDR_GENERATOR: snprintf(out, len, ">= %.2f (generator-limited)", s->lo / 1e6); break;
	default: snprintf(out, len, "-"); break;
	}
}

static void ndr_interval(const struct ndr_search *s, char *out, size_t len)
{
	if (s->verdict == NDR_GENERATOR)
		snprintf(out, len, "[%.2f, -]", s->lo / 1e6);
	else
		snprintf(out, len, "[%.2f, %.2f]", s->lo / 1e6, s->hi / 1e6);
}

/* A receiver that loses nothing up to ceiling pps and delivers overload_rx
 * pps when offered more; a generator that offers flat pps at most. */
struct ndr_sim {
	double ceiling, overload_rx, flat;
};

static void ndr_sim_trial(const struct ndr_sim *m, double ask, double *offered, double *received,
			  bool *lost)
{
	*offered = ask > 0 && ask < m->flat ? ask : m->flat;
	*lost = *offered > m->ceiling;
	*received = *lost ? fmin(m->overload_rx, *offered) : *offered;
}

static int ndr_self_test(void)
{
	static const struct {
		double ceiling, overload_rx;
		enum ndr_verdict want;
	} cases[] = {
	    {3e6, 3e6, NDR_FOUND},
	    {12.5e6, 12.5e6, NDR_FOUND},
	    {20e6, 20e6, NDR_FOUND},
	    {35e6, 35e6, NDR_FOUND},
	    {12.5e6, 11.25e6, NDR_FOUND}, /* overloaded: 90% */
	    {12.5e6, 13.9e6, NDR_FOUND},  /* loses before it saturates */
	    /* collapses when overloaded (livelock): no probe, bisection alone */
	    {3e6, 0.5e6, NDR_FOUND},
	    {12.5e6, 0.5e6, NDR_FOUND},
	    {20e6, 0.5e6, NDR_FOUND},
	    {35e6, 0.5e6, NDR_FOUND},
	    {0.5e6, 0.5e6, NDR_BELOW},
	    {45e6, 40e6, NDR_GENERATOR},
	};
	const double flat = 40e6, floor_pps = 1e6, prec = 0.02;
	const int cap = 10;
	int bad = 0;
	printf("# bench_gpudirect --self-test: the NDR search on simulated receivers (loss above "
	       "the ceiling), flat out %.0f Mpps, floor %.0f Mpps, precision %.0f%%, at most %d "
	       "trials\n",
	       flat / 1e6, floor_pps / 1e6, 100 * prec, cap);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct ndr_sim m = {cases[i].ceiling, cases[i].overload_rx, flat};
		struct ndr_search s;
		ndr_search_init(&s, floor_pps, prec, cap);
		while (s.verdict == NDR_GOING) {
			double off, rx;
			bool lost;
			ndr_sim_trial(&m, s.next, &off, &rx, &lost);
			ndr_search_feed(&s, off, rx, lost);
		}
		bool ok = s.verdict == cases[i].want && s.n <= cap;
		if (cases[i].want == NDR_FOUND)
			ok = ok && s.lo <= m.ceiling && m.ceiling < s.hi &&
			     s.hi - s.lo <= prec * s.hi * (1 + 1e-9);
		else if (cases[i].want == NDR_BELOW)
			ok = ok && m.ceiling < s.hi && s.hi <= floor_pps;
		else
			ok = ok && s.lo == flat;
		char cell[48], iv[48];
		ndr_cell(&s, cell, sizeof(cell));
		ndr_interval(&s, iv, sizeof(iv));
		printf("%s ceiling %.2f Mpps (overloaded: %.2f received): NDR %s, interval %s, "
		       "%d trial%s:",
		       ok ? "PASS" : "FAIL", m.ceiling / 1e6, m.overload_rx / 1e6, cell, iv, s.n,
		       s.n == 1 ? "" : "s");
		for (int k = 0; k < s.n; k++)
			printf(" %.3f%s", s.t[k].rate / 1e6, s.t[k].lost ? "x" : "");
		printf("\n");
		bad |= !ok;
	}
	printf("%s (rates in Mpps, x: lost)\n", bad ? "FAIL" : "PASS");
	return bad;
}

/* Loss as the NDR counts it: anything offered and not received. */
static bool sample_lost(const struct sample *m, uint64_t *n)
{
	uint64_t drops = m->oob + m->nombuf + m->app_dropped;
	uint64_t gap = m->offered_n > m->received_n ? m->offered_n - m->received_n : 0;
	*n = drops > gap ? drops : gap;
	return *n > 0;
}

static void ndr_trial_print(int k, double ask, const struct sample *m, int attempt)
{
	uint64_t n;
	bool lost = sample_lost(m, &n);
	char at[32] = "flat out";
	if (ask > 0)
		snprintf(at, sizeof(at), "%.3f Mpps", ask / 1e6);
	char why[96] = "";
	if (lost)
		snprintf(why, sizeof(why),
			 " (%.3f%%: out_of_buffer %llu, nombuf %llu, app_dropped %llu)",
			 m->offered_n ? 100.0 * (double)n / (double)m->offered_n : 0.0,
			 (unsigned long long)m->oob, (unsigned long long)m->nombuf,
			 (unsigned long long)m->app_dropped);
	printf("- trial %d%s at %s: offered %.3f Mpps, received %.3f, lost %llu%s: %s%s%s\n", k,
	       attempt ? " (re-run)" : "", at, m->offered, m->mpps, (unsigned long long)n, why,
	       lost ? "fail" : "pass",
	       m->disturbed ? (attempt ? " [disturbed, kept]" : " [disturbed: run again]") : "",
	       m->conserved ? "" : " (NOT CONSERVED)");
	fflush(stdout);
}

/* One search of one row, its trials in child processes like the flat-out
 * rows. 0, or -EIO when a trial failed (its error on stderr). */
static int ndr_search_run(const struct opts *o, const struct point *pt, uint32_t frame, int run,
			  struct ndr_search *s, int *reruns, bool *conserved)
{
	struct opts to = *o;
	ndr_search_init(s, o->ndr_floor, o->ndr_precision, o->ndr_trials);
	*reruns = 0;
	*conserved = true;
	printf("%s, %u B, search %d:\n", pt->name, frame, run);
	while (s->verdict == NDR_GOING) {
		struct sample m;
		to.rate = s->next;
		for (int attempt = 0;; attempt++) {
			if (one_run(&to, pt, frame, &m)) {
				printf("- trial %d: failed (see stderr)\n\n", s->n + 1);
				return -EIO;
			}
			ndr_trial_print(s->n + 1, to.rate, &m, attempt);
			if (!m.disturbed || attempt)
				break;
			(*reruns)++;
		}
		uint64_t n;
		bool lost = sample_lost(&m, &n);
		*conserved &= m.conserved;
		ndr_search_feed(s, m.offered * 1e6, m.mpps * 1e6, lost);
	}
	char cell[48], iv[48];
	ndr_cell(s, cell, sizeof(cell));
	ndr_interval(s, iv, sizeof(iv));
	printf("- NDR (Mpps) %s, interval %s, %d trial%s", cell, iv, s->n, s->n == 1 ? "" : "s");
	if (*reruns)
		printf(" (+%d re-run)", *reruns);
	printf("\n\n");
	fflush(stdout);
	return 0;
}

struct ndr_row {
	const struct point *pt;
	uint32_t frame;
	struct ndr_search s[BENCH_MAX_RUNS];
	int reruns[BENCH_MAX_RUNS];
	bool ok[BENCH_MAX_RUNS];
};

static int ndr_cmp(const void *a, const void *b)
{
	double x = ndr_value(*(const struct ndr_search *const *)a);
	double y = ndr_value(*(const struct ndr_search *const *)b);
	return x < y ? -1 : x > y;
}

/* Every selected row's searches, then the table. 0, or 1 when a search
 * failed or a trial's counters did not add up. */
static int ndr_table(const struct opts *o)
{
	struct ndr_row *rows =
	    calloc(sizeof(points) / sizeof(points[0]) * (sizeof(frames) / sizeof(frames[0])),
		   sizeof(*rows));
	size_t nrows = 0;
	int bad = 0;
	if (!rows) {
		fprintf(stderr, "bench_gpudirect: out of memory\n");
		return 1;
	}
	for (size_t pi = 0; pi < sizeof(points) / sizeof(points[0]); pi++)
		for (size_t fi = 0; fi < sizeof(frames) / sizeof(frames[0]); fi++) {
			bool listed = false;
			for (uint32_t k = 0; k < o->nframes; k++)
				listed |= o->frames[k] == frames[fi];
			if (!listed || !strstr(points[pi].name, o->only))
				continue;
			struct ndr_row *w = &rows[nrows++];
			w->pt = &points[pi];
			w->frame = frames[fi];
			for (int r = 0; r < o->b.runs; r++) {
				bool conserved;
				w->ok[r] = !ndr_search_run(o, w->pt, w->frame, r + 1, &w->s[r],
							   &w->reruns[r], &conserved);
				bad |= !w->ok[r] || !conserved;
			}
		}
	printf("NDR: highest offered rate with zero loss, trials of %g s, median of %d search%s "
	       "(Mpps)\n\n| path | frame |",
	       o->b.seconds, o->b.runs, o->b.runs == 1 ? "" : "es");
	for (int r = 0; r < o->b.runs; r++)
		printf(" run %d NDR |", r + 1);
	printf(" median NDR | interval of the median run | trials |\n|---|---:|");
	for (int r = 0; r < o->b.runs; r++)
		printf("---:|");
	printf("---:|---|---:|\n");
	for (size_t i = 0; i < nrows; i++) {
		const struct ndr_row *w = &rows[i];
		const struct ndr_search *done[BENCH_MAX_RUNS];
		int nd = 0;
		printf("| %s | %u |", w->pt->name, w->frame);
		for (int r = 0; r < o->b.runs; r++) {
			char cell[48] = "failed";
			if (w->ok[r]) {
				ndr_cell(&w->s[r], cell, sizeof(cell));
				done[nd++] = &w->s[r];
			}
			printf(" %s |", cell);
		}
		if (!nd) {
			printf(" failed (see stderr) | | |\n");
			continue;
		}
		qsort(done, (size_t)nd, sizeof(done[0]), ndr_cmp);
		const struct ndr_search *m = done[nd / 2];
		char cell[48], iv[48];
		ndr_cell(m, cell, sizeof(cell));
		ndr_interval(m, iv, sizeof(iv));
		int re = w->reruns[m - w->s];
		printf(" %s | %s | %d", cell, iv, m->n);
		if (re)
			printf(" (+%d re-run)", re);
		printf(" |\n");
	}
	free(rows);
	return bad;
}

static void usage(FILE *f)
{
	fprintf(f,
		"USAGE\n  bench_gpudirect [--cores LIST] [--seconds S] [--runs N] [--rate PPS] "
		"[--gpu-launch kernel|graph|persistent] [--dma-writers W|auto]\n"
		"                  [--queues N] [--batch B] [--only TEXT] [--frames LIST]\n"
		"                  [--ndr-search [--ndr-floor PPS] [--ndr-precision P] "
		"[--ndr-trials N]] [--self-test]\n"
		"EXAMPLES\n  bench_gpudirect --cores 2-7 --runs 3 --seconds 1\n"
		"  bench_gpudirect --rate 20M --gpu-launch persistent\n"
		"  bench_gpudirect --queues 2 --batch 256 --only single --frames 1064\n"
		"  bench_gpudirect --ndr-search --only single --frames 1064 --seconds 1 --runs 3\n"
		"  bench_gpudirect --self-test\n"
		"--ndr-search: each row's NDR (highest offered rate with zero loss), --runs "
		"searches, their median;\n"
		"  trials of --seconds (>= 1): flat out, --ndr-floor (default 1M), then "
		"bisection to\n"
		"  --ndr-precision (default 0.02 or 2%%) or --ndr-trials (default 10); rows "
		"default to single at 1064 B.\n"
		"--self-test: the search on simulated receivers (no GPU), PASS/FAIL.\n");
}

int main(int argc, char **argv)
{
	struct opts o = {.b = {.seconds = 1.0, .runs = 3},
			 .launch = RX_GPU_LAUNCH_KERNEL,
			 .writers = 1,
			 .ndr_floor = 1e6,
			 .ndr_precision = 0.02,
			 .ndr_trials = 10};
	bool ndr_knobs = false, self_test = false;
	static const struct option lo[] = {
	    BENCH_LONG_OPTS,
	    {"rate", 1, NULL, 'r'}, {"gpu-launch", 1, NULL, 'l'}, {"help", 0, NULL, 'h'},
	    {"dma-writers", 1, NULL, 'w'}, {"queues", 1, NULL, 'q'}, {"batch", 1, NULL, 'b'},
	    {"only", 1, NULL, 'o'}, {"frames", 1, NULL, 'f'}, {"ndr-search", 0, NULL, 'N'},
	    {"ndr-floor", 1, NULL, 'F'}, {"ndr-precision", 1, NULL, 'P'},
	    {"ndr-trials", 1, NULL, 'T'}, {"self-test", 0, NULL, 'S'}, {NULL, 0, NULL, 0}};
	int ch, rc;
	char err[256];
	struct rx_config tmp;
	rx_config_defaults(&tmp);
	while ((ch = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (ch) {
		case 'r':
		case 'l':
		case 'w':
		case 'q':
		case 'b':
			/* the run's own parser: the same rules and messages */
			if (rx_config_set(&tmp,
					  ch == 'r'   ? "rate"
					  : ch == 'l' ? "gpu-launch"
					  : ch == 'w' ? "dma-writers"
					  : ch == 'q' ? "queues"
						      : "batch",
					  optarg, err, sizeof(err))) {
				fprintf(stderr, "bench_gpudirect: %s\n", err);
				return 2;
			}
			o.rate = tmp.rate_pps;
			o.launch = tmp.gpu_launch;
			o.writers = tmp.dma_writers;
			if (ch == 'q')
				o.queues = tmp.queues;
			if (ch == 'b')
				o.batch = tmp.batch;
			break;
		case 'o': snprintf(o.only, sizeof(o.only), "%s", optarg); break;
		case 'f': {
			char *save = NULL, buf[128];
			snprintf(buf, sizeof(buf), "%s", optarg);
			o.nframes = 0;
			for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
				size_t k = 0;
				while (k < sizeof(frames) / sizeof(frames[0]) &&
				       strtoul(t, NULL, 10) != frames[k])
					k++;
				if (k == sizeof(frames) / sizeof(frames[0]) || o.nframes == 8) {
					fprintf(stderr,
						"bench_gpudirect: --frames: '%s' is not one of "
						"1064, 2064, 4064, 8064\n",
						t);
					return 2;
				}
				o.frames[o.nframes++] = frames[k];
			}
			break;
		}
		case 'N': o.ndr = true; break;
		case 'S': self_test = true; break;
		case 'F':
			ndr_knobs = true;
			if (rxu_parse_rate(optarg, &o.ndr_floor) || !(o.ndr_floor > 0)) {
				fprintf(stderr,
					"bench_gpudirect: --ndr-floor: '%s' is not a rate > 0 "
					"(e.g. 1M, "
					"500k)\n",
					optarg);
				return 2;
			}
			break;
		case 'P': {
			/* "0.02" or "2%" */
			char buf[32];
			size_t len = strlen(optarg);
			bool pct = len && optarg[len - 1] == '%';
			ndr_knobs = true;
			snprintf(buf, sizeof(buf), "%.*s", (int)(pct ? len - 1 : len), optarg);
			if (rxu_parse_double(buf, pct ? 0.01 : 1e-4, pct ? 50 : 0.5,
					     &o.ndr_precision)) {
				fprintf(
				    stderr,
				    "bench_gpudirect: --ndr-precision: '%s' is not in 0.0001..0.5 "
				    "(or 0.01%%..50%%)\n",
				    optarg);
				return 2;
			}
			if (pct)
				o.ndr_precision /= 100;
			break;
		}
		case 'T': {
			uint64_t v;
			ndr_knobs = true;
			if (rxu_parse_u64(optarg, 2, NDR_MAX_TRIALS, &v)) {
				fprintf(stderr,
					"bench_gpudirect: --ndr-trials: '%s' is not in 2..%d\n",
					optarg, NDR_MAX_TRIALS);
				return 2;
			}
			o.ndr_trials = (int)v;
			break;
		}
		default:
			if ((rc = bench_opt(ch, optarg, &o.b, usage)) != BENCH_OPT_TAKEN)
				return rc;
			break;
		}
	}
	if (optind < argc || !bench_opts_ok(&o.b)) {
		fprintf(stderr, "bench_gpudirect: --runs 1..%d, --seconds > 0\n", BENCH_MAX_RUNS);
		return 2;
	}
	if (self_test)
		return ndr_self_test();
	if (ndr_knobs && !o.ndr) {
		fprintf(stderr, "bench_gpudirect: --ndr-floor, --ndr-precision and --ndr-trials go "
				"with --ndr-search\n");
		return 2;
	}
	if (o.ndr && o.b.seconds < 1) {
		fprintf(
		    stderr,
		    "bench_gpudirect: --ndr-search needs --seconds >= 1 (trials of at least 1 s; "
		    "got %g)\n",
		    o.b.seconds);
		return 2;
	}
	if (o.ndr && o.rate > 0) {
		fprintf(stderr,
			"bench_gpudirect: --ndr-search sets each trial's rate itself; leave "
			"out --rate\n");
		return 2;
	}
	if (o.ndr && !o.nframes)
		o.frames[o.nframes++] = 1064;
	if (o.ndr && !o.only[0])
		snprintf(o.only, sizeof(o.only), "single");
	/* asked in a child: CUDA initialised here would be unusable in the
	 * forked runs ("initialization error") */
	fflush(NULL);
	pid_t ck = fork();
	if (ck == 0) {
		char why[160];
		int ok = rxg_available(why, sizeof(why));
		if (!ok)
			fprintf(stderr, "bench_gpudirect: needs a CUDA GPU: %s\n", why);
		_exit(ok ? 0 : 77);
	}
	int cst;
	if (ck < 0 || waitpid(ck, &cst, 0) < 0 || !WIFEXITED(cst))
		return 1;
	if (WEXITSTATUS(cst))
		return 77;
	if (o.ndr) {
		printf("# bench_gpudirect --ndr-search: dpdk on the software NIC, payloads in GPU "
		       "memory, GPU launch %s (reorder rows), %u queue(s), batch %u; rows '%s' at",
		       rx_knob_value_name(rx_knob_find("gpu-launch"), (int)o.launch),
		       o.queues ? o.queues : tmp.queues, o.batch ? o.batch : tmp.batch, o.only);
		for (uint32_t k = 0; k < o.nframes; k++)
			printf("%s %u", k ? "," : "", o.frames[k]);
		printf(" B; trials of %g s, floor %.2f Mpps, precision %g%%, at most %d trials a "
		       "search, %d searches a row\n\n",
		       o.b.seconds, o.ndr_floor / 1e6, 100 * o.ndr_precision, o.ndr_trials,
		       o.b.runs);
		return ndr_table(&o);
	}
	printf("# bench_gpudirect: dpdk on the software NIC, payloads in GPU memory, offered "
	       "%s, %.1f s per run, median of %d runs, GPU launch %s (reorder rows), %u "
	       "queue(s), batch %u\n\n",
	       o.rate > 0 ? "at --rate" : "at the NIC's maximum", o.b.seconds, o.b.runs,
	       rx_knob_value_name(rx_knob_find("gpu-launch"), (int)o.launch),
	       o.queues ? o.queues : tmp.queues, o.batch ? o.batch : tmp.batch);
	if (o.rate > 0)
		printf("offered rate: %.2f Mpps\n\n", o.rate / 1e6);
	printf("| path | frame | offered Mpps | received Mpps | loss | out_of_buffer | "
	       "app_dropped | GPU-bound Mpps | ceiling set by |\n");
	printf("|---|---:|---:|---:|---:|---:|---:|---:|---|\n");
	int bad = 0;
	for (size_t pi = 0; pi < sizeof(points) / sizeof(points[0]); pi++)
		for (size_t fi = 0; fi < sizeof(frames) / sizeof(frames[0]); fi++) {
			bool listed = !o.nframes;
			for (uint32_t k = 0; k < o.nframes; k++)
				listed |= o.frames[k] == frames[fi];
			if (!listed || (o.only[0] && !strstr(points[pi].name, o.only)))
				continue;
			struct sample s[BENCH_MAX_RUNS];
			int n = 0;
			for (int r = 0; r < o.b.runs; r++)
				if (one_run(&o, &points[pi], frames[fi], &s[n]) == 0)
					n++;
			if (!n) {
				printf("| %s | %u | failed (see stderr) | | | | | | |\n",
				       points[pi].name, frames[fi]);
				bad = 1;
				continue;
			}
			qsort(s, (size_t)n, sizeof(s[0]), cmp_s);
			const struct sample *m = &s[n / 2];
			char gpu[32] = "-";
			if (points[pi].work != RX_GPU_WORK_NONE)
				snprintf(gpu, sizeof(gpu), "%.1f", m->gpu_mpps);
			printf("| %s | %u | %.2f | %.2f | %.2f%% | %llu | %llu | %s | %s%s |\n",
			       points[pi].name, frames[fi], m->offered, m->mpps, 100 * m->loss,
			       (unsigned long long)m->oob, (unsigned long long)m->app_dropped, gpu,
			       m->limit, m->conserved ? "" : " (NOT CONSERVED)");
			fflush(stdout);
			bad |= !m->conserved;
		}
	return bad;
}
