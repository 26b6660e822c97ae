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
 * EXAMPLES
 *   bench_gpudirect --cores 2-7 --runs 3 --seconds 1
 *   bench_gpudirect --rate 20M --gpu-launch persistent
 *   bench_gpudirect --queues 2 --batch 256 --only single --frames 1064
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
 * Needs a CUDA GPU (exit 77 without one).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rxray/core.h"
#include "rxray/dpdk.h"
#include "rxray/gpu.h"
#include "rxray/result.h"

#define MAX_RUNS 15

struct opts {
	char cores[256];
	double seconds;
	int runs;
	double rate;
	enum rx_gpu_launch launch;
	uint32_t writers; /* --dma-writers (0 = auto) */
	uint32_t queues, batch; /* 0: the engine's default */
	char only[48];
	uint32_t frames[8], nframes; /* 0: all of frames[] */
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
	uint64_t oob, app_dropped, offered_n;
	bool conserved;
	char limit[96];
};

static int child_run(const struct opts *o, const struct point *pt, uint32_t frame, const char *path)
{
	static volatile sig_atomic_t stop;
	struct rx_config c;
	struct rx_caps caps;
	char err[512] = "";
	rx_config_defaults(&c);
	snprintf(c.engine, sizeof(c.engine), "dpdk");
	snprintf(c.device, sizeof(c.device), "sim");
	c.mode = pt->mode;
	c.payload_mem = RX_MEM_GPU;
	c.payload = RX_PAYLOAD_FULL;
	c.gpu_work = pt->work;
	c.gpu_launch = pt->work == RX_GPU_WORK_NONE ? RX_GPU_LAUNCH_KERNEL : o->launch;
	c.seconds = o->seconds;
	c.rate_pps = o->rate;
	c.dma_writers = o->writers;
	if (o->queues)
		c.queues = o->queues;
	if (o->batch)
		c.batch = o->batch;
	c.frame = frame;
	c.allow_oversubscribe = true;
	c.quiet = true;
	if (o->cores[0] && rx_config_set(&c, "cores", o->cores, err, sizeof(err)))
		goto fail;
	if (rx_engine_dpdk.caps(&c, &caps, err, sizeof(err)) ||
	    rx_config_validate(&c, &caps, err, sizeof(err)) ||
	    rx_engine_dpdk.validate(&c, &caps, err, sizeof(err)))
		goto fail;
	struct rxr_result *r = NULL;
	rxr_result_open(&r);
	if (!r || rx_run_exec(&rx_engine_dpdk, &c, r, &stop, err, sizeof(err)) ||
	    rxr_result_write(r, path)) {
		rxr_result_free(r);
		goto fail;
	}
	rxr_result_free(r);
	return 0;
fail:
	fprintf(stderr, "bench_gpudirect: %s %u B: %s\n", pt->name, frame, err);
	return 1;
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
	char path[64], err[512];
	snprintf(path, sizeof(path), "/tmp/bench_gpudirect_%d.json", (int)getpid());
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0)
		_exit(child_run(o, pt, frame, path));
	int st;
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
		return -EIO;
	struct rxr_result *r = NULL;
	rxr_result_read(path, &r, err, sizeof(err));
	unlink(path);
	if (!r) {
		fprintf(stderr, "bench_gpudirect: %s\n", err);
		return -EIO;
	}
	memset(s, 0, sizeof(*s));
	s->offered = r->offered_mpps;
	s->mpps = r->rx_mpps;
	s->loss = r->loss;
	s->offered_n = r->c.offered;
	s->oob = r->c.out_of_buffer;
	s->app_dropped = r->c.app_dropped;
	s->conserved = rxr_counters_conserved(&r->c);
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

static void usage(FILE *f)
{
	fprintf(f, "USAGE\n  bench_gpudirect [--cores LIST] [--seconds S] [--runs N] [--rate PPS] "
		   "[--gpu-launch kernel|graph|persistent] [--dma-writers W|auto]\n"
		   "                  [--queues N] [--batch B] [--only TEXT] [--frames LIST]\n"
		   "EXAMPLES\n  bench_gpudirect --cores 2-7 --runs 3 --seconds 1\n"
		   "  bench_gpudirect --rate 20M --gpu-launch persistent\n"
		   "  bench_gpudirect --queues 2 --batch 256 --only single --frames 1064\n");
}

int main(int argc, char **argv)
{
	struct opts o = {"", 1.0, 3, 0, RX_GPU_LAUNCH_KERNEL, 1, 0, 0, "", {0}, 0};
	static const struct option lo[] = {
	    {"cores", 1, NULL, 'c'}, {"seconds", 1, NULL, 's'},	   {"runs", 1, NULL, 'n'},
	    {"rate", 1, NULL, 'r'},  {"gpu-launch", 1, NULL, 'l'}, {"help", 0, NULL, 'h'},
	    {"dma-writers", 1, NULL, 'w'}, {"queues", 1, NULL, 'q'},	   {"batch", 1, NULL, 'b'},
	    {"only", 1, NULL, 'o'},	   {"frames", 1, NULL, 'f'},
	    {NULL, 0, NULL, 0}};
	int ch;
	char err[256];
	struct rx_config tmp;
	rx_config_defaults(&tmp);
	while ((ch = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (ch) {
		case 'c': snprintf(o.cores, sizeof(o.cores), "%s", optarg); break;
		case 's': o.seconds = atof(optarg); break;
		case 'n': o.runs = atoi(optarg); break;
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
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc || o.runs < 1 || o.runs > MAX_RUNS || !(o.seconds > 0)) {
		fprintf(stderr, "bench_gpudirect: --runs 1..%d, --seconds > 0\n", MAX_RUNS);
		return 2;
	}
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
	printf("# bench_gpudirect: dpdk on the software NIC, payloads in GPU memory, offered "
	       "%s, %.1f s per run, median of %d runs, GPU launch %s (reorder rows), %u "
	       "queue(s), batch %u\n\n",
	       o.rate > 0 ? "at --rate" : "at the NIC's maximum", o.seconds, o.runs,
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
			struct sample s[MAX_RUNS];
			int n = 0;
			for (int r = 0; r < o.runs; r++)
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
