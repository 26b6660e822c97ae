/* SPDX-License-Identifier: MIT */
/*
 * bench_simnic_rate: the software NIC's maximum rate per frame size and
 * DMA placement, so reports know the generator's headroom. Two views:
 *   solo     the NIC alone fills a fully posted ring (ring packets, no
 *            consumer, nothing bounces between cores): its own ceiling.
 *            Short runs, median of --solo-reps, so a busy host's
 *            preemptions fall out of the median.
 *   paired   unpaced for --seconds against a minimal consumer on another
 *            core that only checks CQE owner bits and re-posts WQEs (the
 *            lines bounce between cores as they would with an engine;
 *            out_of_buffer drops cost wire time, see simnic.h);
 *            median of --runs: CQEs written per second.
 * nic cyc/pkt = NIC busy cycles (hdr+payload+cqe writes) per written
 * packet, all writers together. --writers 1,2,4,8 prints, instead, the
 * paired rate (one queue, a trivial consumer draining it) per frame size
 * and DMA writer count (simnic.h "Writer path"; writers on their own
 * cores where the host has them): the generator's own ceiling, which a
 * sweep point's NDR must stay under to be the receiver's.
 * Never pass/fail: it prints a table.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rxray/simnic.h"
#include "rxray/util.h"

struct bench_opts {
	double seconds;
	int runs, solo_reps;
	uint32_t ring;
	int nic_core, rx_core;
	enum rx_payload payload;
	bool payload_set; /* else: a table for stamp and one for full */
	enum rx_mode mode;
	uint32_t writers[8];    /* --writers: the scaling table's counts */
	int cores[256];         /* the process's cores, before main pins itself */
	int ncores;
	int nwriters;
};

struct bench_point {
	double written_mpps, cyc_per_pkt;
};

/*
 * Minimal consumer: takes completions strictly in CQ order, each by its
 * own owner bit (up to 64 a pass), re-posts the same fixed slots, and
 * rings once a pass. It does not look ahead and infer that earlier
 * entries are complete, as an earlier version did (it read one entry in
 * 32): with several DMA writers that version was seen to run its CQ
 * index 31 entries past the NIC's published count, re-post WQEs for
 * completions that had not happened, and let a writer claim a run whose
 * publication mark then overwrote an unpublished one; the writers stalled
 * and the table's W >= 2 rows fell to 1/W of one writer's. One line read
 * per completion, no buffer touched: still far faster than the NIC.
 */
static void bench_consume(struct rxs_nic *n, struct rxs_ring *r)
{
	uint32_t ci = 0, posted = r->wqe_cnt;
	for (;;) {
		bool done = rxs_nic_done(n);
		uint32_t k = 0;
		while (k < 64 && rxs_cq_peek(r, ci + k))
			k++;
		if (!k) {
			if (done)
				break;
			continue;
		}
		ci += k;
		posted += k; /* WQE contents are unchanged: fixed slots */
		rxs_cq_set_ci(r, ci);
		rxs_rq_doorbell(r, posted);
	}
}

/* Keep the NIC's core busy for a moment so a solo fill (a fraction of a
 * millisecond) does not start on a core that just woke from idle. */
static void *bench_warm_main(void *arg)
{
	int core = *(const int *)arg;
	if (core >= 0)
		rxu_pin_self(core);
	double t = rxu_mono_seconds();
	while (rxu_mono_seconds() - t < 0.005)
		;
	return NULL;
}

static void bench_warm(int core)
{
	pthread_t t;
	if (pthread_create(&t, NULL, bench_warm_main, &core) == 0)
		pthread_join(t, NULL);
}

static int bench_once(const struct bench_opts *o, uint32_t frame, enum rx_dma dma, bool solo,
		      uint32_t writers, struct bench_point *pt)
{
	struct rxs_params p;
	struct rxs_ring r;
	char err[256];
	int rc = -ENOMEM;
	uint32_t slot = (frame + 63) & ~63u, hkey = 0, pkey = 0, split = 64;
	rxs_params_defaults(&p);
	p.sample_shift = 0; /* the writers alone: no sampled laps */
	p.ring = o->ring;
	p.frame = frame;
	p.sges = o->mode == RX_MODE_HDS ? 2 : 1;
	p.seconds = solo ? 0 : o->seconds;
	p.max_packets = solo ? p.ring : 0;
	p.dma = dma;
	p.payload = o->payload;
	p.core = o->nic_core;
	p.writers = writers;
	/* writer w >= 1 on the w-th core that is neither the NIC's nor the
	 * consumer's (shared when the host has too few). The cores are the
	 * process's affinity as main found it, before it pinned itself to the
	 * consumer's core: asked here, affinity is that one core, and every
	 * extra writer landed on the consumer's core (the table's W >= 2 rows
	 * then fell to 1/W of one writer's, on any host). */
	int avail = o->ncores;
	for (uint32_t w = 1, k = 0; w < writers && avail > 0; w++) {
		int c = -1;
		for (int tries = 0; tries < avail; tries++) {
			c = o->cores[k++ % (uint32_t)avail];
			if (c != o->nic_core && c != o->rx_core)
				break;
		}
		p.thread_core[w] = c;
	}
	struct rxs_nic *n = NULL;
	rxs_nic_open(&p, &n, err, sizeof(err));
	char *buf = aligned_alloc(64, (size_t)slot * p.ring * 2);
	if (!n || !buf)
		goto out;
	memset(buf, 0, (size_t)slot * p.ring * 2);
	char *pay = buf + (size_t)slot * p.ring;
	if ((rc = rxs_mr_reg(n, buf, (size_t)slot * p.ring * 2, &hkey)) < 0)
		goto out;
	pkey = hkey;
	rxs_nic_ring(n, 0, &r);
	for (uint32_t i = 0; i < p.ring; i++) {
		if (p.sges == 2) {
			rxs_seg_set(rxs_wqe_seg(&r, i, 0), buf + (size_t)i * slot, split, hkey);
			rxs_seg_set(rxs_wqe_seg(&r, i, 1), pay + (size_t)i * slot, slot, pkey);
		} else {
			rxs_seg_set(rxs_wqe_seg(&r, i, 0), buf + (size_t)i * slot, slot, hkey);
		}
	}
	rxs_rq_doorbell(&r, p.ring);
	if (solo)
		bench_warm(o->nic_core);
	if ((rc = rxs_nic_start(n)) < 0)
		goto out;
	if (!solo)
		bench_consume(n, &r);
	if ((rc = rxs_nic_join(n)) < 0)
		goto out;
	struct rxs_counters c;
	struct rxs_stats st;
	rxs_nic_counters(n, UINT32_MAX, &c);
	rxs_nic_stats(n, &st);
	uint64_t busy = 0;
	for (uint32_t t = 0; t < rxs_nic_threads(n); t++)
		busy += rxp_probe_busy_cycles(rxs_nic_thread_probe(n, t));
	pt->written_mpps = st.seconds > 0 ? (double)c.received / st.seconds / 1e6 : 0;
	pt->cyc_per_pkt = c.received ? (double)busy / (double)c.received : 0;
	rc = 0;
out:
	if (rc < 0 && !n)
		fprintf(stderr, "bench_simnic_rate: %s\n", err);
	rxs_nic_free(n);
	free(buf);
	return rc;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_dbl);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}


static void bench_usage(void)
{
	printf("USAGE\n  bench_simnic_rate [--seconds T] [--runs N] [--solo-reps N] [--ring N] [--payload none|stamp|full]\n"
	       "                    [--mode single|hds] [--frames 64,128,...] [--nic-core C] [--rx-core C]\n"
	       "                    [--writers 1,2,4,8]\n"
	       "\nEXAMPLES\n  bench_simnic_rate\n  bench_simnic_rate --payload full --runs 5\n"
	       "  bench_simnic_rate --writers 1,2,4,8 --frames 1064,8064 --runs 3\n");
}

static void bench_table(const struct bench_opts *o, const uint32_t *frames, size_t nframes,
			int ncores)
{
	const struct rxp_clock *clk = rxp_clock_get();
	printf("# software NIC max rate: %s, payload %s, ring %u, NIC core %d, consumer core %d\n",
	       rx_mode_name(o->mode), rx_payload_name(o->payload), o->ring, o->nic_core, o->rx_core);
	printf("# clock %s %.3f GHz; solo: median of %d fills of %u packets; paired: median of %d runs x %.2f s; probes %s\n",
	       rxp_clock_source_name(clk->source), clk->hz / 1e9, o->solo_reps, o->ring, o->runs,
	       o->seconds,
	       RXRAY_PROBE_MODE == 0 ? "off (cyc/pkt n/a)" : "on");
	FILE *la = fopen("/proc/loadavg", "r");
	double load = -1;
	if (la) {
		if (fscanf(la, "%lf", &load) != 1)
			load = -1;
		fclose(la);
	}
	printf("# load average %.2f on %d cores (a busy host lowers every figure)\n", load,
	       ncores);
	printf("\n| frame | dma    | solo Mpps | solo cyc/pkt | solo Gbit/s | paired Mpps | paired cyc/pkt |\n");
	printf("|------:|--------|----------:|-------------:|------------:|------------:|---------------:|\n");
	for (size_t f = 0; f < nframes; f++) {
		for (int d = 0; d < 2; d++) {
			double sw[99], sc[99], pw[99], pc[99];
			int ns = 0, np = 0;
			struct bench_point pt;
			for (int i = 0; i < o->solo_reps; i++)
				if (bench_once(o, frames[f], (enum rx_dma)d, true, 1, &pt) == 0) {
					sw[ns] = pt.written_mpps;
					sc[ns++] = pt.cyc_per_pkt;
				}
			for (int i = 0; i < o->runs; i++)
				if (bench_once(o, frames[f], (enum rx_dma)d, false, 1, &pt) == 0) {
					pw[np] = pt.written_mpps;
					pc[np++] = pt.cyc_per_pkt;
				}
			if (!ns || !np) {
				printf("| %5u | %-6s | failed |\n", frames[f], rx_dma_name((enum rx_dma)d));
				continue;
			}
			double sm = median(sw, ns);
			printf("| %5u | %-6s | %9.2f | %12.1f | %11.2f | %11.2f | %14.1f |\n", frames[f],
			       rx_dma_name((enum rx_dma)d), sm, median(sc, ns), sm * frames[f] * 8 / 1e3,
			       median(pw, np), median(pc, np));
			fflush(stdout);
		}
	}
}

/* The generator's ceiling per frame and writer count: paired runs into
 * one queue, dma cache, median of --runs. */
static void bench_writers_table(const struct bench_opts *o, const uint32_t *frames,
				size_t nframes, int ncores)
{
	const struct rxp_clock *clk = rxp_clock_get();
	printf("# software NIC flat out into one queue a trivial consumer drains: %s, payload %s, "
	       "ring %u, dma cache, median of %d runs x %.2f s\n",
	       rx_mode_name(o->mode), rx_payload_name(o->payload), o->ring, o->runs, o->seconds);
	printf("# clock %s %.3f GHz; %d cores (writers + consumer beyond that share cores)\n",
	       rxp_clock_source_name(clk->source), clk->hz / 1e9, ncores);
	printf("\n| frame | writers | NIC Mpps | x W=1 | nic cyc/pkt | Gbit/s |\n");
	printf("|------:|--------:|---------:|------:|------------:|-------:|\n");
	for (size_t f = 0; f < nframes; f++) {
		double base = 0;
		for (int wi = 0; wi < o->nwriters; wi++) {
			double pw[99], pc[99];
			int np = 0;
			struct bench_point pt;
			for (int i = 0; i < o->runs; i++)
				if (bench_once(o, frames[f], RX_DMA_CACHE, false, o->writers[wi], &pt) == 0) {
					pw[np] = pt.written_mpps;
					pc[np++] = pt.cyc_per_pkt;
				}
			if (!np) {
				printf("| %5u | %7u | failed |\n", frames[f], o->writers[wi]);
				continue;
			}
			double m = median(pw, np);
			if (wi == 0)
				base = m;
			printf("| %5u | %7u | %8.2f | %5.2f | %11.1f | %6.1f |\n", frames[f],
			       o->writers[wi], m, base > 0 ? m / base : 0, median(pc, np),
			       m * frames[f] * 8 / 1e3);
			fflush(stdout);
		}
	}
}

int main(int argc, char **argv)
{
	static const uint32_t def_frames[] = {64, 128, 256, 512, 1024, 1518, 2048, 4096, 8064};
	uint32_t frames[32];
	size_t nframes = sizeof(def_frames) / sizeof(def_frames[0]);
	memcpy(frames, def_frames, sizeof(def_frames));
	struct bench_opts o = {.seconds = 0.25, .runs = 3, .solo_reps = 15, .ring = 4096, .nic_core = -1,
			       .rx_core = -1, .payload = RX_PAYLOAD_STAMP, .mode = RX_MODE_SINGLE};
	static const struct option opts[] = {
		{"seconds", required_argument, NULL, 's'}, {"runs", required_argument, NULL, 'r'},
		{"ring", required_argument, NULL, 'R'},    {"payload", required_argument, NULL, 'p'},
		{"mode", required_argument, NULL, 'm'},    {"frames", required_argument, NULL, 'f'},
		{"nic-core", required_argument, NULL, 'n'}, {"rx-core", required_argument, NULL, 'x'},
		{"solo-reps", required_argument, NULL, 'S'},
		{"writers", required_argument, NULL, 'w'},
		{"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0}};
	int ch;
	uint64_t v;
	struct rx_config cfg;
	char err[256];
	rx_config_defaults(&cfg);
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case 's':
			if (rxu_parse_seconds(optarg, 0.01, 60, &o.seconds) < 0)
				return rxu_usage_err("bench_simnic_rate", "--seconds: bad '%s'", optarg);
			break;
		case 'r':
			if (rxu_parse_u64(optarg, 1, 99, &v) < 0)
				return rxu_usage_err("bench_simnic_rate", "--runs: bad '%s'", optarg);
			o.runs = (int)v;
			break;
		case 'S':
			if (rxu_parse_u64(optarg, 1, 99, &v) < 0)
				return rxu_usage_err("bench_simnic_rate", "--solo-reps: bad '%s'", optarg);
			o.solo_reps = (int)v;
			break;
		case 'R':
			if (rxu_parse_u64(optarg, 64, RXS_MAX_RING, &v) < 0 || (v & (v - 1)))
				return rxu_usage_err("bench_simnic_rate", "--ring: bad '%s'", optarg);
			o.ring = (uint32_t)v;
			break;
		case 'p':
		case 'm':
			if (rx_config_set(&cfg, ch == 'p' ? "payload" : "mode", optarg, err,
					  sizeof(err)) < 0)
				return rxu_usage_err("bench_simnic_rate", "--%s", err);
			if (ch == 'p') {
				o.payload = cfg.payload;
				o.payload_set = true;
			}
			o.mode = cfg.mode;
			break;
		case 'f': {
			char *save = NULL, buf[256];
			snprintf(buf, sizeof(buf), "%s", optarg);
			nframes = 0;
			for (char *t = strtok_r(buf, ",", &save); t && nframes < 32;
			     t = strtok_r(NULL, ",", &save)) {
				if (rxu_parse_u64(t, RXS_MIN_FRAME, RXS_MAX_FRAME, &v) < 0)
					return rxu_usage_err("bench_simnic_rate", "--frames: bad '%s'", t);
				frames[nframes++] = (uint32_t)v;
			}
			break;
		}
		case 'w': {
			char *save = NULL, buf[128];
			snprintf(buf, sizeof(buf), "%s", optarg);
			o.nwriters = 0;
			for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
				if (o.nwriters == 8 || rxu_parse_u64(t, 1, RXS_MAX_WRITERS, &v) < 0)
					return rxu_usage_err("bench_simnic_rate",
							     "--writers: bad '%s' (up to 8 counts, 1..%u)",
							     t, RXS_MAX_WRITERS);
				o.writers[o.nwriters++] = (uint32_t)v;
			}
			break;
		}
		case 'n':
		case 'x':
			if (rxu_parse_u64(optarg, 0, 4095, &v) < 0)
				return rxu_usage_err("bench_simnic_rate", "--%s: bad '%s'",
						     ch == 'n' ? "nic-core" : "rx-core", optarg);
			*(ch == 'n' ? &o.nic_core : &o.rx_core) = (int)v;
			break;
		case 'h':
			bench_usage();
			return 0;
		default:
			return rxu_usage_err("bench_simnic_rate", "unknown option (see --help)");
		}
	}
	if (rxp_clock_init(0) < 0) {
		fprintf(stderr, "bench_simnic_rate: clock init failed\n");
		return 1;
	}
	int ncores = rxu_cores_available();
	for (int i = 0; i < ncores && o.ncores < 256; i++)
		o.cores[o.ncores++] = rxu_core_nth(i);
	if (o.nic_core < 0)
		o.nic_core = rxu_core_nth(0);
	if (o.rx_core < 0)
		o.rx_core = rxu_cores_available() > 1 ? rxu_core_nth(1) : rxu_core_nth(0);
	if (o.rx_core >= 0)
		rxu_pin_self(o.rx_core);
	if (o.nwriters) {
		for (int i = 0; i < o.nwriters; i++)
			if (o.ring < RXS_MIN_RUN * o.writers[i])
				return rxu_usage_err("bench_simnic_rate",
						     "--ring: %u WQEs too few for %u writers (%u each)",
						     o.ring, o.writers[i], RXS_MIN_RUN);
		bench_writers_table(&o, frames, nframes, ncores);
		return 0;
	}
	static const enum rx_payload both[] = {RX_PAYLOAD_STAMP, RX_PAYLOAD_FULL};
	for (int pi = 0; pi < (o.payload_set ? 1 : 2); pi++) {
		if (!o.payload_set)
			o.payload = both[pi];
		bench_table(&o, frames, nframes, ncores);
	}
	return 0;
}
