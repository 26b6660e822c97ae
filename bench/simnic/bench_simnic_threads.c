/* SPDX-License-Identifier: MIT */
/*
 * bench_simnic_threads: does the software NIC's ceiling scale with NIC
 * threads? For a fixed number of queues, runs the NIC unpaced with 1, 2,
 * 4 ... NIC threads (never more than the queues), one minimal consumer
 * thread per queue (checks CQE owner bits, re-posts fixed slots), NIC
 * threads on the first cores and consumers on the next ones. Prints, per
 * thread count, the median over --runs of: offered and written Mpps (all
 * threads), out_of_buffer share, NIC busy cycles per written packet, and
 * whether the NIC (not the consumers) set the pace. When NIC threads +
 * consumers exceed the cores, the row is marked oversubscribed: it then
 * measures the scheduler as much as the NIC. Never pass/fail.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rxray/simnic.h"
#include "rxray/util.h"

struct bt_opts {
	double seconds;
	int runs;
	uint32_t queues, frame, ring;
};

struct bt_consumer {
	struct rxs_nic *n;
	struct rxs_ring r;
	int core;
};

/* Consume queue r until the NIC is done: CQEs in order, same slots. */
static void *bt_consume_main(void *arg)
{
	struct bt_consumer *c = arg;
	uint32_t ci = 0, posted = c->r.wqe_cnt;
	if (c->core >= 0)
		rxu_pin_self(c->core);
	for (;;) {
		bool done = rxs_nic_done(c->n);
		uint32_t k = 32;
		while (k && !rxs_cq_peek(&c->r, ci + k - 1))
			k >>= 1;
		if (!k) {
			if (done)
				break;
			continue;
		}
		ci += k;
		posted += k;
		rxs_cq_set_ci(&c->r, ci);
		rxs_rq_doorbell(&c->r, posted);
	}
	return NULL;
}

struct bt_point {
	double offered_mpps, written_mpps, oob_pct, cyc_per_pkt;
	bool generator_limited;
};

static int bt_once(const struct bt_opts *o, uint32_t threads, struct bt_point *pt)
{
	struct rxs_params p;
	struct bt_consumer cons[RXS_MAX_QUEUES];
	pthread_t tid[RXS_MAX_QUEUES];
	uint32_t started = 0, key = 0;
	char err[256] = "";
	int rc = -ENOMEM, ncores = rxu_cores_available();
	uint32_t slot = (o->frame + 63) & ~63u;
	rxs_params_defaults(&p);
	p.sample_shift = 0; /* the writers alone: no sampled laps */
	p.queues = o->queues;
	p.threads = threads;
	p.ring = o->ring;
	p.frame = o->frame;
	p.seconds = o->seconds;
	p.rate_pps = 0;
	for (uint32_t t = 0; t < threads; t++)
		*(t == 0 ? &p.core : &p.thread_core[t]) = rxu_core_nth((int)t % ncores);
	struct rxs_nic *n = NULL;
	rxs_nic_open(&p, &n, err, sizeof(err));
	size_t len = (size_t)slot * p.ring * p.queues;
	char *buf = aligned_alloc(64, len);
	if (!n || !buf)
		goto out;
	memset(buf, 0, len);
	if ((rc = rxs_mr_reg(n, buf, len, &key)) < 0)
		goto out;
	for (uint32_t q = 0; q < p.queues; q++) {
		struct bt_consumer *c = &cons[q];
		c->n = n;
		c->core = rxu_core_nth((int)(threads + q) % ncores);
		rxs_nic_ring(n, q, &c->r);
		char *base = buf + (size_t)slot * p.ring * q;
		for (uint32_t i = 0; i < p.ring; i++)
			rxs_seg_set(rxs_wqe_seg(&c->r, i, 0), base + (size_t)i * slot, slot, key);
		rxs_rq_doorbell(&c->r, p.ring);
	}
	if ((rc = rxs_nic_start(n)) < 0)
		goto out;
	for (; started < p.queues; started++)
		if ((rc = -pthread_create(&tid[started], NULL, bt_consume_main, &cons[started])) <
		    0)
			break;
	rc = rxs_nic_join(n);
	for (uint32_t q = 0; q < started; q++)
		pthread_join(tid[q], NULL);
	if (rc < 0 || started < p.queues)
		goto out;
	struct rxs_counters c;
	struct rxs_stats st;
	rxs_nic_counters(n, UINT32_MAX, &c);
	rxs_nic_stats(n, &st);
	pt->offered_mpps = st.achieved_pps / 1e6;
	pt->written_mpps = st.seconds > 0 ? (double)c.received / st.seconds / 1e6 : 0;
	pt->oob_pct = c.offered ? 100.0 * (double)c.out_of_buffer / (double)c.offered : 0;
	pt->cyc_per_pkt = st.busy_cycles_per_pkt;
	pt->generator_limited = st.generator_limited;
	rc = 0;
out:
	if (rc < 0)
		fprintf(stderr, "bench_simnic_threads: %s\n", err[0] ? err : strerror(-rc));
	rxs_nic_free(n); /* stops and joins when still running */
	free(buf);
	return rc;
}

static int bt_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double bt_median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), bt_cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void bt_table(const struct bt_opts *o)
{
	int ncores = rxu_cores_available();
	printf("# software NIC scaling: %u queues, frame %u, ring %u, unpaced, median of %d "
	       "runs x %.2f s, %d cores\n",
	       o->queues, o->frame, o->ring, o->runs, o->seconds, ncores);
	printf("\n| nic threads | offered Mpps | written Mpps | oob %% | nic cyc/pkt | generator "
	       "limited | cores |\n");
	printf("|------------:|-------------:|-------------:|------:|------------:|--------"
	       "----------|-------|\n");
	/* 1, 2, 4 ... and the queue count itself */
	for (uint32_t t = 1; t <= o->queues; t = (t < o->queues && t * 2 > o->queues) ? o->queues
										      : t * 2) {
		double off[99], wr[99], oob[99], cyc[99];
		int ok = 0, lim = 0;
		for (int i = 0; i < o->runs; i++) {
			struct bt_point pt = {0};
			if (bt_once(o, t, &pt) < 0)
				continue;
			off[ok] = pt.offered_mpps;
			wr[ok] = pt.written_mpps;
			oob[ok] = pt.oob_pct;
			cyc[ok++] = pt.cyc_per_pkt;
			lim += pt.generator_limited;
		}
		int need = (int)(t + o->queues);
		if (!ok) {
			printf("| %11u | failed |\n", t);
			continue;
		}
		printf("| %11u | %12.2f | %12.2f | %5.1f | %11.1f | %d of %-10d | %d%s |\n", t,
		       bt_median(off, ok), bt_median(wr, ok), bt_median(oob, ok),
		       bt_median(cyc, ok), lim, ok, need,
		       need > ncores ? " oversubscribed" : "");
	}
}

int main(int argc, char **argv)
{
	struct bt_opts o = {.seconds = 0.25, .runs = 3, .queues = 4, .frame = 64, .ring = 4096};
	static const struct option opts[] = {
		{"seconds", required_argument, NULL, 's'}, {"runs", required_argument, NULL, 'r'},
		{"queues", required_argument, NULL, 'q'},  {"frame", required_argument, NULL, 'f'},
		{"ring", required_argument, NULL, 'R'},    {"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0}};
	int ch;
	uint64_t v;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case 's':
			if (rxu_parse_seconds(optarg, 0.01, 60, &o.seconds) < 0)
				return rxu_usage_err("bench_simnic_threads", "--seconds: bad '%s'", optarg);
			break;
		case 'r':
			if (rxu_parse_u64(optarg, 1, 99, &v) < 0)
				return rxu_usage_err("bench_simnic_threads", "--runs: bad '%s'", optarg);
			o.runs = (int)v;
			break;
		case 'q':
			if (rxu_parse_u64(optarg, 1, RXS_MAX_QUEUES, &v) < 0)
				return rxu_usage_err("bench_simnic_threads", "--queues: bad '%s'", optarg);
			o.queues = (uint32_t)v;
			break;
		case 'f':
			if (rxu_parse_u64(optarg, RXS_MIN_FRAME, RXS_MAX_FRAME, &v) < 0)
				return rxu_usage_err("bench_simnic_threads", "--frame: bad '%s'", optarg);
			o.frame = (uint32_t)v;
			break;
		case 'R':
			if (rxu_parse_u64(optarg, 64, RXS_MAX_RING, &v) < 0 || (v & (v - 1)))
				return rxu_usage_err("bench_simnic_threads", "--ring: bad '%s'", optarg);
			o.ring = (uint32_t)v;
			break;
		case 'h':
			printf("USAGE\n  bench_simnic_threads [--queues N] [--frame B] [--ring N] "
			       "[--seconds T] [--runs N]\n\nEXAMPLES\n  bench_simnic_threads --queues 4\n");
			return 0;
		default:
			return rxu_usage_err("bench_simnic_threads", "unknown option (see --help)");
		}
	}
	if (rxp_clock_init(0) < 0) {
		fprintf(stderr, "bench_simnic_threads: clock init failed\n");
		return 1;
	}
	bt_table(&o);
	return 0;
}
