/* SPDX-License-Identifier: MIT */
/*
 * What rxray attach costs the process it profiles, and what each setting
 * buys: dpdk-testpmd rxonly on net_null (--mbcache=0, so the mempool
 * driver shows), its packet rate read from its own telemetry socket.
 *
 * Precision: one testpmd instance throughout; short windows alternate
 * U A U A U ... (U: nothing attached; A: `rxray attach --lcore 1` at one
 * setting, measured only while its perf events are live), settings in
 * turn, round after round until the time budget is spent. Each A window
 * is compared with the mean of the U windows either side of it, so drift
 * (turbo, neighbours, thermal) cancels to first order; a setting's
 * overhead is the median of its per-pair figures, with a distribution-free
 * 95% interval for that median (order statistics of the binomial). The
 * "null" row pairs two unattached windows the same way: its interval is
 * the bench's own noise floor. testpmd's worker (core 1) and main lcore
 * (core 0) keep their cores; the bench and rxray run on the other cores,
 * away from the worker's hyperthread sibling, when the host has them.
 *
 * Accuracy, against the reference row (999 Hz DWARF 8 KiB, rxray's
 * earlier default): attach's cycles/packet (median per window); the RX
 * burst's and the mempool get/put cycles/packet (share of samples pooled
 * over all windows x cycles/packet), whose difference from the
 * reference's counts as bias only beyond twice its sampling error; and
 * the RX burst figure's sampling error (2 sigma) in a default 5 s window
 * at the samples per second the setting gets. And the cost in the kernel
 * per sample, which noise does not move: the BPF program's run time
 * (BPF_ENABLE_STATS, which itself adds two clock reads per run).
 *
 * Prints a table; never fails on figures. SIGINT/SIGTERM end the rounds
 * after the window in progress and print what was measured.
 * usage: bench_attach_overhead [budget seconds (default 360)] [window seconds (default 1)]
 * env RXRAY_BIN: the rxray binary (default: the build's)
 * env RXRAY_ATTACH_ROWS: rows to measure besides null and reference, as
 *     indices into conf[] (e.g. "5": the defaults only; a short budget)
 */
#include <bpf/bpf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rxray/attach.h"
#include "testpmd_launch.h"

struct setting {
	unsigned freq; /* 0 with stacks NULL: rxray's defaults; 0 with "-": not attached */
	const char *stacks;
	const char *bytes;
	const char *on;
	const char *note;
};

enum { ROW_NULL = 0, ROW_REF = 1 };

static const struct setting conf[] = {
	{0, "-", "-", "-", "null: both windows unattached (the bench's noise)"},
	{999, "dwarf", "8192", "threads", "reference: the earlier default"},
	{999, "dwarf", "8192", "cpus", "the earlier default, events on every CPU"},
	{249, "dwarf", "8192", "threads", "previous default"},
	{249, "dwarf", "4096", "threads", ""},
	{0, NULL, NULL, NULL, "rxray's defaults (no options)"},
	{249, "dwarf", "1024", "threads", "RX frames fit in 1 KiB here"},
	{99, "dwarf", "2048", "threads", ""},
	{249, "fp", "-", "threads", "leaf only"},
};
#define NCONF (sizeof(conf) / sizeof(conf[0]))
/* rows measured: all, or those named by RXRAY_ATTACH_ROWS (indices into
 * conf[], e.g. "5" for the defaults only); the null and reference rows
 * always run, the overhead and accuracy are relative to them */
static bool sel[NCONF];
#define MAXR 128
#define DEFAULT_WINDOW_S 5.0 /* rxray attach --seconds default */

static bool attached(size_t c)
{
	return !conf[c].stacks || strcmp(conf[c].stacks, "-");
}

/* One window's reading: packets, time, the worker's CPU time. */
struct win {
	double pps, cpu; /* packets/s, worker CPU s per s */
	bool ok;
};

/* What one attached window's attach.json said. */
struct att {
	double cpp, samples, seconds, rx, mp_get, mp_put, cut, hz;
	unsigned freq, bytes;
	char stacks[8], on[8];
};

struct row {
	double ovh[MAXR], ovh_cpu[MAXR], cpp[MAXR], bpfns[MAXR];
	int n, ncpp, nbpf, failed;
	/* pooled over windows: samples, sample-weighted shares, seconds */
	double samples, rx, mp, cut, seconds;
	struct att last;
};

static struct tpmd pmd;
static struct rxb_tele *tele;
static volatile sig_atomic_t stop_requested; /* SIGINT/SIGTERM: print what there is */
static const char *rxray_bin = RXRAY_BIN;

static void on_stop(int sig)
{
	stop_requested = sig;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_s(double s)
{
	struct timespec ts = {.tv_sec = (time_t)s, .tv_nsec = (long)((s - (double)(time_t)s) * 1e9)};
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Port 0's received packets and the time of the read (middle of the query). */
static int packets_read(uint64_t *pk, double *t)
{
	json_t *v = NULL;
	double t0 = now_s();
	int rc = rxb_tele_query(tele, "/ethdev/stats,0", &v);
	double t1 = now_s();

	if (rc)
		return rc;
	*pk = (uint64_t)json_integer_value(json_object_get(v, "ipackets"));
	*t = (t0 + t1) / 2;
	json_decref(v);
	return 0;
}

/* Measure a window of w seconds from now. */
static struct win window_measure(double w)
{
	struct win r = {0};
	uint64_t k0, k1;
	double t0, t1;
	unsigned long long c0 = tpmd_worker_cpu_ns(&pmd), c1;

	if (packets_read(&k0, &t0))
		return r;
	sleep_s(w);
	if (packets_read(&k1, &t1))
		return r;
	c1 = tpmd_worker_cpu_ns(&pmd);
	if (t1 <= t0 || k1 < k0)
		return r;
	r.pps = (double)(k1 - k0) / (t1 - t0);
	r.cpu = c1 > c0 ? (double)(c1 - c0) / 1e9 / (t1 - t0) : 0;
	r.ok = r.pps > 0;
	return r;
}

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
			    !strncmp(info.name, "rxb_sample", 10) && info.run_cnt)
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

/*
 * Sampling is live when pid holds perf event fds and as many BPF links:
 * rxray opens the events, then attaches one link per event.
 */
static bool sampling_live(pid_t pid)
{
	char path[96], to[64];
	struct dirent *de;
	int events = 0, links = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	while (d && (de = readdir(d))) {
		snprintf(path, sizeof(path), "/proc/%d/fd/%.40s", (int)pid, de->d_name);
		ssize_t n = readlink(path, to, sizeof(to) - 1);
		if (n <= 0)
			continue;
		to[n] = '\0';
		events += !strcmp(to, "anon_inode:[perf_event]");
		links += !strcmp(to, "anon_inode:bpf_link");
	}
	if (d)
		closedir(d);
	return events > 0 && links >= events;
}

static void outdir(char *out, size_t len)
{
	snprintf(out, len, "/tmp/rxray-bench-attach-%d", (int)getpid());
}

static pid_t attach_spawn(size_t c, double seconds)
{
	const struct setting *s = &conf[c];
	char pid[16], hz[16], secs[32], out[96];
	const char *argv[32];
	int n = 0;
	pid_t r;

	snprintf(pid, sizeof(pid), "%d", (int)pmd.pid);
	snprintf(hz, sizeof(hz), "%u", s->freq);
	snprintf(secs, sizeof(secs), "%.1f", seconds);
	outdir(out, sizeof(out));
	argv[n++] = rxray_bin;
	argv[n++] = "attach";
	argv[n++] = "--pid";
	argv[n++] = pid;
	argv[n++] = "--lcore";
	argv[n++] = "1";
	argv[n++] = "--seconds";
	argv[n++] = secs;
	if (s->stacks) { /* else rxray's own defaults */
		argv[n++] = "--freq";
		argv[n++] = hz;
		argv[n++] = "--stacks";
		argv[n++] = s->stacks;
		if (strcmp(s->bytes, "-")) {
			argv[n++] = "--stack-bytes";
			argv[n++] = s->bytes;
		}
		argv[n++] = "--sample-on";
		argv[n++] = s->on;
	}
	argv[n++] = "-o";
	argv[n++] = out;
	argv[n++] = "-q";
	argv[n] = NULL;
	r = fork();
	if (r == 0) {
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 1);
		execv(rxray_bin, (char *const *)argv);
		_exit(127);
	}
	return r;
}

/* Reap pid within limit seconds (SIGKILL after). Exit status, or -1. */
static int reap(pid_t pid, double limit)
{
	double t0 = now_s();
	int st;

	while (waitpid(pid, &st, WNOHANG) != pid) {
		if (now_s() - t0 > limit) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return -1;
		}
		usleep(5000);
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static double jnum(json_t *o, const char *a, const char *b)
{
	json_t *v = json_object_get(o, a);
	return json_number_value(b ? json_object_get(v, b) : v);
}

static int attach_read(struct att *m)
{
	char dir[96], p[160];
	json_error_t je;
	json_t *d, *smp;

	outdir(dir, sizeof(dir));
	snprintf(p, sizeof(p), "%s/attach.json", dir);
	d = json_load_file(p, 0, &je);
	if (!d)
		return -1;
	smp = json_object_get(d, "sampler");
	m->cpp = jnum(d, "cycles_per_packet", NULL);
	m->seconds = jnum(d, "window", "seconds");
	m->hz = json_number_value(json_object_get(json_object_get(json_object_get(d, "window"),
								  "clock"), "hz"));
	m->samples = jnum(smp, "samples", NULL);
	m->cut = jnum(smp, "stacks_cut", NULL);
	m->freq = (unsigned)jnum(smp, "freq_hz", NULL);
	m->bytes = (unsigned)jnum(smp, "stack_bytes", NULL);
	snprintf(m->stacks, sizeof(m->stacks), "%s",
		 json_string_value(json_object_get(smp, "stacks")) ?: "?");
	snprintf(m->on, sizeof(m->on), "%s",
		 json_string_value(json_object_get(smp, "events_on")) ?: "?");
	m->rx = jnum(d, "shares", "rx_burst");
	m->mp_get = jnum(d, "shares", "mempool_get");
	m->mp_put = jnum(d, "shares", "mempool_put");
	json_decref(d);
	unlink(p);
	return m->samples > 0 && m->cpp > 0 ? 0 : -1;
}

/*
 * One attached window: start rxray, wait until its events are live, measure
 * w seconds, read the BPF cost, end it with SIGINT (it still writes its
 * output) and read that. A failed run is counted, its window not measured
 * (.ok false).
 */
static struct win attached_window(size_t c, double w, struct row *r, struct att *m)
{
	struct win bad = {0};
	pid_t a = attach_spawn(c, w + 20);
	double t0 = now_s();

	if (a < 0)
		return bad;
	while (!sampling_live(a)) {
		if (waitpid(a, NULL, WNOHANG) == a) { /* it gave up */
			r->failed++;
			return bad;
		}
		if (now_s() - t0 > 30) {
			kill(a, SIGKILL);
			waitpid(a, NULL, 0);
			r->failed++;
			return bad;
		}
		usleep(2000);
	}
	sleep_s(0.02);
	struct win x = window_measure(w);
	double ns = sample_prog_ns(a);
	bool live = sampling_live(a);
	kill(a, SIGINT);
	int st = reap(a, 60);
	/* the kernel frees the BPF maps and events in deferred work that may
	 * run on the worker's CPU: let it pass before the next U window */
	sleep_s(0.05);
	if (!live || st != 0 || attach_read(m)) {
		r->failed++;
		return bad;
	}
	if (ns > 0 && r->nbpf < MAXR)
		r->bpfns[r->nbpf++] = ns;
	return x;
}

static int dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(const double *v, int n)
{
	double t[MAXR];

	if (n <= 0)
		return NAN;
	memcpy(t, v, sizeof(*v) * (size_t)n);
	qsort(t, (size_t)n, sizeof(*t), dcmp);
	return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

/*
 * Distribution-free interval for the median of n values: [x(k), x(n-k+1)]
 * with the largest k for which P(Binomial(n, 1/2) < k) <= 2.5%, so it
 * covers the median at >= 95%. Needs n >= 6; else the range.
 */
static void median_ci(const double *v, int n, double *lo, double *hi)
{
	double t[MAXR], cdf = 0, pk = pow(0.5, n); /* P(X = 0) */
	int k = 0;

	*lo = *hi = NAN;
	if (n <= 0)
		return;
	memcpy(t, v, sizeof(*v) * (size_t)n);
	qsort(t, (size_t)n, sizeof(*t), dcmp);
	/* k = how many values from each end fall outside */
	for (int i = 0; i < n; i++) {
		if (cdf + pk > 0.025)
			break;
		cdf += pk;
		k = i + 1;
		pk = pk * (double)(n - i) / (double)(i + 1);
	}
	*lo = t[k > 0 ? k - 1 : 0];
	*hi = t[k > 0 ? n - k : n - 1];
}

static double pct(double v, double ref)
{
	return ref > 0 ? 100.0 * (v - ref) / ref : NAN;
}

/* Pooled share x cycles/packet, and its relative sampling error (1 sigma). */
static double stage(const struct row *r, double pooled, double cpp, double *rel)
{
	double p = r->samples > 0 ? pooled / r->samples : 0;
	*rel = p > 0 && p < 1 ? sqrt((1 - p) / (p * r->samples)) : 0;
	return p * cpp;
}

/* Keep the bench and rxray off testpmd's cores 0-1 and their siblings. */
static void pin_away(char *how, size_t len)
{
	cpu_set_t set, keep;
	int total;

	if (sched_getaffinity(0, sizeof(set), &set)) {
		snprintf(how, len, "not pinned (affinity unreadable)");
		return;
	}
	keep = set;
	total = CPU_COUNT(&set);
	for (int c = 0; c < 2; c++) {
		char p[96], buf[128];
		CPU_CLR(c, &keep);
		snprintf(p, sizeof(p), "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list",
			 c);
		FILE *f = fopen(p, "re");
		if (f && fgets(buf, sizeof(buf), f)) {
			/* "1,9" or "0-1" */
			for (char *s = buf, *e; *s && *s != '\n'; s = *e ? e + 1 : e) {
				long a = strtol(s, &e, 10), b = a;
				if (*e == '-')
					b = strtol(e + 1, &e, 10);
				for (long x = a; x <= b && x < CPU_SETSIZE; x++)
					CPU_CLR((int)x, &keep);
				if (*e != ',')
					break;
			}
		}
		if (f)
			fclose(f);
	}
	if (CPU_COUNT(&keep) >= 2 && !sched_setaffinity(0, sizeof(keep), &keep))
		snprintf(how, len, "bench and rxray on %d of %d CPUs, off testpmd's cores 0-1 and "
			 "their siblings", CPU_COUNT(&keep), total);
	else
		snprintf(how, len, "not pinned: %d CPUs, too few to keep testpmd's cores apart",
			 total);
}

/* A setting's figures against the reference row. */
struct eval {
	double med, lo, hi, med_cpu; /* overhead % */
	const char *two;             /* at most 2%: yes / no / not shown */
	double cpp, d_cpp, rx, d_rx, e_rx, mp, d_mp, e_mp, prec, cut;
	bool acc;
};

static void row_eval(const struct row *r, const struct row *ref, struct eval *e)
{
	double ref_cpp = median(ref->cpp, ref->ncpp), rel_ref_rx, rel_ref_mp, rel_rx, rel_mp;
	double ref_rx = stage(ref, ref->rx, ref_cpp, &rel_ref_rx);
	double ref_mp = stage(ref, ref->mp, ref_cpp, &rel_ref_mp);

	e->med = median(r->ovh, r->n);
	e->med_cpu = median(r->ovh_cpu, r->n);
	median_ci(r->ovh, r->n, &e->lo, &e->hi);
	e->two = r->n < 6 ? "too few pairs" : e->hi <= 2 ? "yes" : e->lo > 2 ? "no" : "not shown";
	e->cpp = median(r->cpp, r->ncpp);
	e->rx = stage(r, r->rx, e->cpp, &rel_rx);
	e->mp = stage(r, r->mp, e->cpp, &rel_mp);
	e->d_cpp = pct(e->cpp, ref_cpp);
	e->d_rx = pct(e->rx, ref_rx);
	e->d_mp = pct(e->mp, ref_mp);
	/* bias beyond 5% only where the pooled samples can tell (2 sigma) */
	e->e_rx = 200 * sqrt(rel_rx * rel_rx + rel_ref_rx * rel_ref_rx);
	e->e_mp = 200 * sqrt(rel_mp * rel_mp + rel_ref_mp * rel_ref_mp);
	/* sampling error alone: the reference's share at this setting's rate */
	double sps = r->seconds > 0 ? r->samples / r->seconds : 0;
	double p_rx = ref->samples > 0 ? ref->rx / ref->samples : 0;
	e->prec = p_rx > 0 && p_rx < 1 && sps > 0
			  ? 200 * sqrt((1 - p_rx) / (p_rx * sps * DEFAULT_WINDOW_S)) : NAN;
	e->cut = r->samples > 0 ? 100 * r->cut / r->samples : 0;
	e->acc = r->ncpp && fabs(e->d_cpp) <= 5 && fabs(e->d_rx) <= 5 + e->e_rx &&
		 fabs(e->d_mp) <= 5 + e->e_mp && e->prec <= 5;
}

/* Unattached windows' medians: packets/s and the worker's CPU share. */
static double u_pps[MAXR * NCONF + 1], u_cpu[MAXR * NCONF + 1];
static int nu;

static void u_add(struct win u)
{
	if (u.ok && nu < (int)(MAXR * NCONF + 1)) {
		u_pps[nu] = u.pps;
		u_cpu[nu++] = u.cpu;
	}
}

/* Account one A window against the U windows either side of it. */
static void pair_add(size_t c, struct row *r, struct win prev, struct win a, struct win next,
		     const struct att *m)
{
	if (!a.ok || !prev.ok || !next.ok || r->n == MAXR)
		return;
	r->ovh[r->n] = -pct(a.pps, (prev.pps + next.pps) / 2);
	r->ovh_cpu[r->n++] = a.cpu > 0 && prev.cpu > 0 && next.cpu > 0
		? -pct(a.pps / a.cpu, (prev.pps / prev.cpu + next.pps / next.cpu) / 2) : NAN;
	if (!attached(c))
		return;
	r->cpp[r->ncpp++] = m->cpp;
	r->samples += m->samples;
	r->rx += m->rx * m->samples;
	r->mp += (m->mp_get + m->mp_put) * m->samples;
	r->cut += m->cut;
	r->seconds += m->seconds;
	r->last = *m;
}

/*
 * U, then per setting A U, round after round (each starting one setting
 * later, so order effects spread over all) while another round fits in
 * the budget. Returns the rounds run.
 */
static int rounds_run(struct row *rows, double budget, double w, double *elapsed)
{
	double start = now_s(), last_round = 0;
	struct win u = window_measure(w);
	int rounds = 0;

	u_add(u);
	while (rounds < MAXR && !stop_requested) {
		double r0 = now_s();
		if (rounds && r0 - start + 1.1 * last_round > budget)
			break;
		for (size_t k = 0; k < NCONF && !stop_requested; k++) {
			size_t c = (k + (size_t)rounds) % NCONF;
			if (!sel[c])
				continue;
			struct att m = {0};
			struct win a = attached(c) ? attached_window(c, w, &rows[c], &m)
						   : window_measure(w);
			struct win prev = u;
			u = window_measure(w);
			u_add(u);
			pair_add(c, &rows[c], prev, a, u, &m);
		}
		last_round = now_s() - r0;
		rounds++;
		fprintf(stderr, "bench_attach_overhead: round %d took %.1f s\n", rounds, last_round);
	}
	*elapsed = now_s() - start;
	return rounds;
}

static const char *hz_str(size_t c)
{
	static char b[16];
	snprintf(b, sizeof(b), "%u", conf[c].freq);
	return b;
}

static void table_print(const struct row *rows, int rounds, double w, double elapsed,
			const char *pin)
{
	const struct row *ref = &rows[ROW_REF];
	double upps = median(u_pps, nu), ucpu = median(u_cpu, nu);
	struct eval e;

	printf("\nrxray attach overhead and accuracy: dpdk-testpmd rxonly on net_null (--mbcache=0), "
	       "lcore 1 sampled\n");
	printf("%ld CPUs; %s; %d rounds of U A U A ... windows of %.1f s in %.0f s; unattached: "
	       "%.2f Mpps, worker on CPU %.0f%% of the time, testpmd's own cycles/packet "
	       "(clock / rate per worker CPU-s) %.1f\n\n", sysconf(_SC_NPROCESSORS_ONLN), pin,
	       rounds, w, elapsed, upps / 1e6, 100 * ucpu,
	       ref->last.hz > 0 && upps > 0 && ucpu > 0 ? ref->last.hz / (upps / ucpu) : NAN);
	printf("| Hz | stacks | stack bytes | events on | pairs | overhead median | 95%% interval "
	       "| per worker CPU-s | <= 2%% | BPF ns/sample | cyc/pkt | vs ref | rx burst cyc/pkt "
	       "| vs ref (+-2 sigma) | mempool get+put cyc/pkt | vs ref (+-2 sigma) | stacks cut "
	       "| rx burst 2 sigma at 5 s | accurate | failed | note |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
	       "---|\n");
	for (size_t c = 0; c < NCONF; c++) {
		const struct row *r = &rows[c];
		const struct att *m = &r->last;
		char bytes[16];

		if (!sel[c])
			continue;
		row_eval(r, ref, &e);
		if (!attached(c)) {
			printf("| - | - | - | - | %d | %+.2f%% | [%+.2f%%, %+.2f%%] | %+.2f%% | - | - | - "
			       "| - | - | - | - | - | - | - | - | - | %s |\n", r->n, e.med, e.lo, e.hi,
			       e.med_cpu, conf[c].note);
			continue;
		}
		if (!r->ncpp) { /* nothing measured: the setting as asked */
			printf("| %s | %s | %s | %s | %d | no attached window measured (failed: %d) "
			       "||||||||||||||| %s |\n", conf[c].stacks ? hz_str(c) : "default",
			       conf[c].stacks ? conf[c].stacks : "default",
			       conf[c].bytes ? conf[c].bytes : "default", conf[c].on ? conf[c].on
										: "default",
			       r->n, r->failed, conf[c].note);
			continue;
		}
		snprintf(bytes, sizeof(bytes), "%u", m->bytes);
		printf("| %u | %s | %s | %s | %d | %+.2f%% | [%+.2f%%, %+.2f%%] | %+.2f%% | %s | %.0f "
		       "| %.1f | %+.1f%% | %.1f | %+.1f%% (%.1f) | %.1f | %+.1f%% (%.1f) | %.0f%% "
		       "| %.1f%% | %s | %d | %s |\n",
		       m->freq, m->stacks, m->bytes ? bytes : "-", m->on, r->n, e.med, e.lo, e.hi,
		       e.med_cpu, e.two, median(r->bpfns, r->nbpf), e.cpp, e.d_cpp, e.rx, e.d_rx,
		       e.e_rx, e.mp, e.d_mp, e.e_mp, e.cut, e.prec, e.acc ? "yes" : "no", r->failed,
		       conf[c].note);
	}
	printf("\noverhead: testpmd's packet rate lost while attached vs the mean of the unattached "
	       "windows either side (positive = slower), median over pairs, 95%% interval of that "
	       "median; per worker CPU-s: the same per second the worker ran; <= 2%%: yes when the "
	       "interval's top is at most 2%%. Accuracy vs the reference row: cyc/pkt median per "
	       "window within 5%%; rx burst and mempool cyc/pkt (pooled shares x cyc/pkt) within 5%% "
	       "beyond their 2 sigma sampling error; the rx burst figure's 2 sigma sampling error in "
	       "a default %.0f s window at most 5%%. stacks cut: unwinding needed more stack than "
	       "was copied (the outer frames are missing, the RX loop's may not be).\n",
	       DEFAULT_WINDOW_S);
	for (size_t c = 0; c < NCONF; c++) {
		const struct att *m = &rows[c].last;
		if (conf[c].stacks || !rows[c].ncpp)
			continue;
		row_eval(&rows[c], ref, &e);
		printf("\nat rxray's defaults (%u Hz, %s stacks of %u bytes, events on %s): overhead "
		       "%+.2f%% [%+.2f%%, %+.2f%%] over %d pairs, at most 2%%: %s; cycles/packet "
		       "%+.1f%% vs 999 Hz DWARF 8 KiB, accurate: %s\n", m->freq, m->stacks, m->bytes,
		       m->on, e.med, e.lo, e.hi, rows[c].n, e.two, e.d_cpp, e.acc ? "yes" : "no");
	}
}

int main(int argc, char **argv)
{
	double budget = argc > 1 ? atof(argv[1]) : 360;
	double w = argc > 2 ? atof(argv[2]) : 1;
	static struct row rows[NCONF];
	const char *why = tpmd_unavailable();
	char err[256], pin[160], dir[96], cmd[160];
	double elapsed;

	if (budget < 10 || budget > 3600 || w < 0.2 || w > 30) {
		fprintf(stderr, "usage: %s [budget seconds 10-3600] [window seconds 0.2-30]\n",
			argv[0]);
		return 2;
	}
	if (getenv("RXRAY_BIN") && *getenv("RXRAY_BIN"))
		rxray_bin = getenv("RXRAY_BIN");
	const char *only = getenv("RXRAY_ATTACH_ROWS");
	for (size_t c = 0; c < NCONF; c++)
		sel[c] = !only || !*only || c == ROW_NULL || c == ROW_REF;
	for (const char *p = only; p && *p;) {
		char *end;
		unsigned long c = strtoul(p, &end, 10);
		if (end == p || c >= NCONF || (*end && *end != ',')) {
			fprintf(stderr, "%s: RXRAY_ATTACH_ROWS: '%s' is not a list of row numbers "
					"0-%zu\n", argv[0], only, NCONF - 1);
			return 2;
		}
		sel[c] = true;
		p = *end ? end + 1 : end;
	}
	if (why) {
		printf("bench_attach_overhead: skipped: %s\n", why);
		return 0;
	}
	if (access(rxray_bin, X_OK)) {
		printf("bench_attach_overhead: skipped: no rxray at %s (set RXRAY_BIN)\n", rxray_bin);
		return 0;
	}
	if (tpmd_start(&pmd, "bench", "--mbcache=0", err, sizeof(err))) {
		printf("bench_attach_overhead: skipped: testpmd: %s\n", err);
		return 0;
	}
	if (rxb_tele_open(pmd.pid, pmd.prefix, &tele, err, sizeof(err))) {
		printf("bench_attach_overhead: skipped: telemetry: %s\n", err);
		tpmd_stop(&pmd);
		return 0;
	}
	pin_away(pin, sizeof(pin));
	struct sigaction sa = {.sa_handler = on_stop};
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* BPF programs count their run time while this fd is open */
	int stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	sleep_s(1);
	int rounds = rounds_run(rows, budget, w, &elapsed);
	rxb_tele_close(tele);
	tpmd_stop(&pmd);
	if (stats_fd >= 0)
		close(stats_fd);
	outdir(dir, sizeof(dir));
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (!access(dir, F_OK) && system(cmd))
		fprintf(stderr, "could not remove %s\n", dir);
	table_print(rows, rounds, w, elapsed, pin);
	return 0;
}
