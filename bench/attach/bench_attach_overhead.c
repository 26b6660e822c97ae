/* SPDX-License-Identifier: MIT */
/*
 * What rxray attach costs the process it profiles, and what each setting
 * buys: dpdk-testpmd rxonly on net_null (--mbcache=0, so the mempool
 * driver shows), its own reported rate (the "Rx-pps" of its periodic
 * stats) with nothing attached and with `rxray attach --lcore 1` at each
 * setting of the table below (frequency, stack mode, stack bytes copied,
 * events on the target thread or on every CPU). Configurations are
 * interleaved round by round, each round starting one later, so a noisy
 * neighbour and drift hit them alike; the table shows medians. Prints a table, never fails on figures.
 *
 * Overhead: testpmd's rate vs not attached, and its rate per second of CPU
 * the worker actually got (Rx-pps over the worker's schedstat run time):
 * what the sampler's own cost moves and neighbours stealing the core do
 * not. Accuracy: attach's cycles/packet vs the first attached setting
 * (the defaults before this bench chose new ones) and vs testpmd's own
 * figure (clock Hz / unattached rate per worker CPU-second); the share of
 * samples in the RX burst function's stacks; the share of samples whose
 * stack was unwound to the thread's start (whole stacks). And the cost
 * in the kernel per sample, which the machine's noise does not move: the
 * BPF program's run time per run (BPF_ENABLE_STATS), and that times the
 * frequency as a share of the sampled thread's time (the perf interrupt
 * itself comes on top).
 *
 * usage: bench_attach_overhead [rounds (default 3)] [window seconds (default 3)]
 */
#include <bpf/bpf.h>
#include <dirent.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testpmd_launch.h"

struct setting {
	unsigned freq; /* 0: not attached */
	const char *stacks;
	const char *bytes;
	const char *on;
	const char *note;
};

static const struct setting conf[] = {
	{0, "-", "-", "-", "not attached"},
	{999, "dwarf", "8192", "cpus", "old default (less its per-sample wakeup)"},
	{999, "dwarf", "8192", "threads", ""},
	{499, "dwarf", "8192", "threads", ""},
	{249, "dwarf", "8192", "threads", "default"},
	{249, "dwarf", "6144", "threads", ""},
	{499, "dwarf", "4096", "threads", "testpmd's stacks cut"},
	{999, "fp", "-", "threads", "leaf only"},
	{249, "fp", "-", "threads", "leaf only"},
};
#define NCONF (sizeof(conf) / sizeof(conf[0]))
#define MAXR 64

struct meas {
	double rate, per_cpu, cpp, hz, rx_share, whole, bpf_ns;
	bool have_attach;
};

/* ns per run of the sampling program held by process pid (0: unknown). */
static double sample_prog_ns(pid_t pid)
{
	char path[96], line[256];
	struct dirent *de;
	double ns = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo", (int)pid);
	d = opendir(path);
	while (d && (de = readdir(d)) && !ns) {
		snprintf(path, sizeof(path), "/proc/%d/fdinfo/%.40s", (int)pid, de->d_name);
		FILE *f = fopen(path, "re");
		unsigned id;
		while (f && fgets(line, sizeof(line), f)) {
			if (sscanf(line, "prog_id: %u", &id) != 1)
				continue;
			int fd = bpf_prog_get_fd_by_id(id);
			struct bpf_prog_info info = {0};
			__u32 len = sizeof(info);
			if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len) &&
			    !strncmp(info.name, "rxr_sample", 10) && info.run_cnt)
				ns = (double)info.run_time_ns / (double)info.run_cnt;
			if (fd >= 0)
				close(fd);
		}
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
	return ns;
}

static void outdir(char *out, size_t len, size_t c)
{
	snprintf(out, len, "/tmp/rxray-bench-attach-%d-%zu", (int)getpid(), c);
}

static pid_t attach_spawn(pid_t target, size_t c, double seconds)
{
	const struct setting *s = &conf[c];
	char pid[16], hz[16], secs[32], out[96];
	const char *argv[32];
	int n = 0;
	pid_t r;

	snprintf(pid, sizeof(pid), "%d", (int)target);
	snprintf(hz, sizeof(hz), "%u", s->freq);
	snprintf(secs, sizeof(secs), "%.1f", seconds);
	outdir(out, sizeof(out), c);
	argv[n++] = RXRAY_BIN;
	argv[n++] = "attach";
	argv[n++] = "--pid";
	argv[n++] = pid;
	argv[n++] = "--lcore";
	argv[n++] = "1";
	argv[n++] = "--freq";
	argv[n++] = hz;
	argv[n++] = "--seconds";
	argv[n++] = secs;
	argv[n++] = "--stacks";
	argv[n++] = s->stacks;
	if (strcmp(s->bytes, "-")) {
		argv[n++] = "--stack-bytes";
		argv[n++] = s->bytes;
	}
	argv[n++] = "--sample-on";
	argv[n++] = s->on;
	argv[n++] = "-o";
	argv[n++] = out;
	argv[n++] = "-q";
	argv[n] = NULL;
	r = fork();
	if (r == 0) {
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 1);
		execv(RXRAY_BIN, (char *const *)argv);
		_exit(127);
	}
	return r;
}

/* cycles/packet, clock, RX-burst share and whole-stack share of one run. */
static void attach_read(size_t c, struct meas *m)
{
	char dir[96], p[160], line[16384];
	json_error_t je;
	json_t *d;
	FILE *f;
	double tot = 0, whole = 0;

	outdir(dir, sizeof(dir), c);
	snprintf(p, sizeof(p), "%s/attach.json", dir);
	d = json_load_file(p, 0, &je);
	if (!d)
		return;
	m->cpp = json_number_value(json_object_get(d, "cycles_per_packet"));
	m->hz = json_number_value(json_object_get(json_object_get(json_object_get(d, "window"),
								 "clock"), "hz"));
	m->rx_share = json_number_value(json_object_get(json_object_get(d, "shares"), "rx_burst"));
	json_decref(d);
	snprintf(p, sizeof(p), "%s/stacks.folded", dir);
	f = fopen(p, "re");
	while (f && fgets(line, sizeof(line), f)) {
		char *sp = strrchr(line, ' ');
		double n = sp ? atof(sp + 1) : 0;
		tot += n;
		if (strstr(line, "start_thread") || strstr(line, ";main;") || strstr(line, "clone"))
			whole += n;
	}
	if (f)
		fclose(f);
	m->whole = tot > 0 ? whole / tot : 0;
	m->have_attach = true;
}

static int dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	double t[MAXR];

	if (!n)
		return 0;
	memcpy(t, v, sizeof(*v) * (size_t)n);
	qsort(t, (size_t)n, sizeof(*t), dcmp);
	return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

static double pct(double v, double ref)
{
	return ref > 0 ? 100.0 * (v - ref) / ref : 0.0;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 3;
	double window = argc > 2 ? atof(argv[2]) : 3;
	static double rate[NCONF][MAXR], per_cpu[NCONF][MAXR], cpp[NCONF][MAXR], rx[NCONF][MAXR],
		whole[NCONF][MAXR], hz[NCONF][MAXR], bpfns[NCONF][MAXR];
	int nbpf[NCONF] = {0};
	int nrate[NCONF] = {0}, natt[NCONF] = {0}, failed[NCONF] = {0};
	const char *why = tpmd_unavailable();
	struct tpmd pmd;
	char err[256];

	if (rounds < 1 || rounds > MAXR || window < 2 || window > 60) {
		fprintf(stderr, "usage: %s [rounds 1-%d] [window seconds 2-60]\n", argv[0], MAXR);
		return 2;
	}
	if (why) {
		printf("bench_attach_overhead: skipped: %s\n", why);
		return 0;
	}
	if (tpmd_start(&pmd, "bench", "--mbcache=0", err, sizeof(err))) {
		printf("bench_attach_overhead: skipped: testpmd: %s\n", err);
		return 0;
	}
	/* BPF programs count their run time while this fd is open */
	int stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	sleep(1);
	for (int r = 0; r < rounds; r++) {
		/* each round starts one configuration later: drift spreads over all */
		for (size_t k = 0; k < NCONF; k++) {
			size_t c = (k + (size_t)r) % NCONF;
			pid_t a = conf[c].freq ? attach_spawn(pmd.pid, c, window + 2.5) : 0;
			struct meas m = {0};
			long off0, off1;
			int n, st;
			/* count only stats lines whose second started with sampling live */
			usleep(1500000);
			off0 = tpmd_log_size(&pmd);
			unsigned long long ns0 = tpmd_worker_cpu_ns(&pmd);
			usleep((useconds_t)(window * 1e6));
			unsigned long long ns1 = tpmd_worker_cpu_ns(&pmd);
			m.rate = tpmd_rx_pps_median(&pmd, off0, &off1, &n);
			if (a > 0 && stats_fd >= 0 && (m.bpf_ns = sample_prog_ns(a)) > 0)
				bpfns[c][nbpf[c]++] = m.bpf_ns;
			if (a > 0) {
				waitpid(a, &st, 0);
				if (!WIFEXITED(st) || WEXITSTATUS(st))
					failed[c]++;
				else
					attach_read(c, &m);
			}
			if (n && ns1 > ns0) {
				/* rate / share of the window the worker was on a CPU */
				per_cpu[c][nrate[c]] = m.rate / ((double)(ns1 - ns0) / 1e9 / window);
				rate[c][nrate[c]++] = m.rate;
			}
			if (m.have_attach) {
				cpp[c][natt[c]] = m.cpp;
				rx[c][natt[c]] = m.rx_share;
				whole[c][natt[c]] = m.whole;
				hz[c][natt[c]++] = m.hz;
			}
		}
	}
	tpmd_stop(&pmd);
	if (stats_fd >= 0)
		close(stats_fd);
	for (size_t c = 0; c < NCONF; c++) {
		char cmd[160], dir[96];
		outdir(dir, sizeof(dir), c);
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (conf[c].freq && system(cmd))
			fprintf(stderr, "could not remove %s\n", dir);
	}

	double base = median(rate[0], nrate[0]);
	double base_cpu = median(per_cpu[0], nrate[0]);
	double cpp_old = median(cpp[1], natt[1]);
	double clock = median(hz[1], natt[1]);
	double cpp_truth = base_cpu > 0 ? clock / base_cpu : 0;
	printf("\nrxray attach overhead and accuracy: dpdk-testpmd rxonly on net_null "
	       "(--mbcache=0), lcore 1 sampled\n");
	printf("(testpmd's own Rx-pps; median of %d rounds x %.0f s, configurations interleaved;\n"
	       " testpmd's own cycles/packet, clock / unattached rate per worker CPU-s: %.1f)\n\n",
	       rounds, window, cpp_truth);
	printf("| Hz | stacks | stack bytes | events on | testpmd Mpps | overhead | per worker "
	       "CPU-s | BPF ns/sample | BPF share of thread | cyc/pkt | vs old default | vs testpmd "
	       "| rx burst share | whole stacks | failed | note |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
	for (size_t c = 0; c < NCONF; c++) {
		const struct setting *s = &conf[c];
		double m = median(rate[c], nrate[c]), mc = median(per_cpu[c], nrate[c]);
		if (!s->freq) {
			printf("| - | - | - | - | %.2f | - | %.2f | - | - | - | - | - | - | - | - | %s |\n",
			       m / 1e6, mc / 1e6, s->note);
			continue;
		}
		double cp = median(cpp[c], natt[c]);
		double bn = median(bpfns[c], nbpf[c]);
		printf("| %u | %s | %s | %s | %.2f | %.1f%% | %.1f%% | %.0f | %.2f%% | %.1f | %+.1f%% | "
		       "%+.1f%% | %.1f%% | %.0f%% | %d | %s |\n", s->freq, s->stacks, s->bytes, s->on,
		       m / 1e6, -pct(m, base), -pct(mc, base_cpu), bn, bn * s->freq / 1e7, cp,
		       pct(cp, cpp_old), pct(cp, cpp_truth),
		       100 * median(rx[c], natt[c]), 100 * median(whole[c], natt[c]), failed[c],
		       s->note);
	}
	printf("\noverhead: rate lost vs not attached (positive = slower); per worker CPU-s: the "
	       "same per second the worker ran; BPF share: ns/sample x Hz (the perf interrupt "
	       "comes on top; events on cpus: ns averaged over every CPU's samples, most of them "
	       "other processes' and dropped at once)\n");
	return 0;
}
