/* SPDX-License-Identifier: MIT */
/*
 * Trial validity signals (validity.h): what the scheduler, the hypervisor
 * and a canary workload say about the measured window. Everything here
 * runs outside the packet loop: at the two ends of the window and around
 * the run.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "rxray/util.h"
#include "rxray/validity.h"

#define MAX_CPUS 1024
/* The compute loop: long enough to span a few scheduler ticks' worth of
 * frequency behaviour (~1-3 ms), short enough to run twice per trial. */
#define CANARY_CPU_ITERS (1u << 21)
/* Runs per canary measurement: the best of two rides out one unlucky
 * interrupt without hiding a host that is slow throughout. */
#define CANARY_REPS 2

void rxr_valid_limits_default(struct rxr_valid_limits *lim)
{
	lim->wait_share = 0.01;
	lim->ring_cover_s = 0;
	lim->wait_floor_s = 0.0002;
	lim->nivcsw_per_s = 20;
	lim->canary_ratio = 1.5;
}

const char *rxr_mig_source_name(enum rxr_mig_source s)
{
	static const char *const n[] = {"none", "perf", "sched", "getcpu"};
	return (unsigned)s < sizeof(n) / sizeof(n[0]) ? n[s] : "none";
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ------------------------------------------------------ per thread */

/* Fields 1 and 2 of schedstat: ns spent running, and runnable on a run
 * queue but not running. */
static int schedstat_read(uint64_t *run_ns, uint64_t *wait_ns)
{
	FILE *f = fopen("/proc/thread-self/schedstat", "re");
	if (!f)
		return -errno;
	unsigned long long run, wait;
	int n = fscanf(f, "%llu %llu", &run, &wait);
	fclose(f);
	if (n != 2)
		return -EINVAL;
	*run_ns = run;
	*wait_ns = wait;
	return 0;
}

/* se.nr_migrations from the thread's sched file (CONFIG_SCHED_DEBUG). */
static int sched_migrations(uint64_t *out)
{
	FILE *f = fopen("/proc/thread-self/sched", "re");
	if (!f)
		return -errno;
	char line[256];
	int rc = -ENOENT;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long v;
		if (sscanf(line, "se.nr_migrations : %llu", &v) == 1) {
			*out = v;
			rc = 0;
			break;
		}
	}
	fclose(f);
	return rc;
}

/* A software event needs no PMU. exclude_kernel must stay 0: migrations
 * are counted in kernel context and would always read 0 without it. */
static int perf_migrations_open(void)
{
	const char *off = getenv("RXRAY_VALIDITY_NO_PERF");
	if (off && *off && strcmp(off, "0"))
		return -EPERM;
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_MIGRATIONS;
	long fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : (int)fd;
}

static int perf_read(int fd, uint64_t *v)
{
	ssize_t n = read(fd, v, sizeof(*v));
	return n == (ssize_t)sizeof(*v) ? 0 : -EIO;
}

int rxr_valid_thread_begin(struct rxr_valid_thread *t, const char *role, int core, char *err,
			   size_t errlen)
{
	memset(t, 0, sizeof(*t));
	snprintf(t->role, sizeof(t->role), "%s", role ? role : "?");
	t->core = core;
	t->perf_fd = -1;
	t->wait_s = -1;
	struct rusage ru;
	if (getrusage(RUSAGE_THREAD, &ru) < 0)
		return rxu_errf(err, errlen, -errno, "getrusage(RUSAGE_THREAD): %s",
				strerror(errno));
	t->nvcsw0 = ru.ru_nvcsw;
	t->nivcsw0 = ru.ru_nivcsw;
	int fd = perf_migrations_open();
	if (fd >= 0 && perf_read(fd, &t->mig0) == 0) {
		t->perf_fd = fd;
		t->mig_source = RXR_MIG_PERF;
	} else {
		if (fd >= 0)
			close(fd);
		t->mig_source = sched_migrations(&t->mig0) == 0 ? RXR_MIG_SCHED : RXR_MIG_GETCPU;
	}
	/* wait0_ns == UINT64_MAX marks schedstat as missing */
	t->cpu_begin = sched_getcpu();
	t->begun = true;
	if (schedstat_read(&t->run0_ns, &t->wait0_ns) < 0)
		t->wait0_ns = UINT64_MAX;
	/* last, so the bookkeeping above is outside the window */
	t->t_begin = now_s();
	return 0;
}

int rxr_valid_thread_end(struct rxr_valid_thread *t)
{
	if (!t || !t->begun || t->ended)
		return -EINVAL;
	t->t_end = now_s();
	/* first after the window's end, as it was last before its start:
	 * run + wait then span the window and little else */
	uint64_t w = 0, run = 0;
	if (t->wait0_ns != UINT64_MAX && schedstat_read(&run, &w) == 0) {
		t->wait_s = (double)(w - t->wait0_ns) * 1e-9;
		t->run_s = (double)(run - t->run0_ns) * 1e-9;
		t->run_known = true;
	}
	t->cpu_end = sched_getcpu();
	struct rusage ru;
	if (getrusage(RUSAGE_THREAD, &ru) == 0) {
		t->nvcsw = ru.ru_nvcsw - t->nvcsw0;
		t->nivcsw = ru.ru_nivcsw - t->nivcsw0;
	}
	uint64_t m = 0;
	switch (t->mig_source) {
	case RXR_MIG_PERF:
		if (perf_read(t->perf_fd, &m) == 0)
			t->migrations = m - t->mig0;
		else
			t->mig_source = RXR_MIG_NONE;
		break;
	case RXR_MIG_SCHED:
		if (sched_migrations(&m) == 0)
			t->migrations = m - t->mig0;
		else
			t->mig_source = RXR_MIG_NONE;
		break;
	default:
		t->migrations = t->cpu_begin >= 0 && t->cpu_end >= 0 && t->cpu_begin != t->cpu_end;
		if (t->cpu_begin < 0 || t->cpu_end < 0)
			t->mig_source = RXR_MIG_NONE;
		break;
	}
	if (t->perf_fd >= 0)
		close(t->perf_fd);
	t->perf_fd = -1;
	t->ended = true;
	return 0;
}

/* ------------------------------------------------------------ the run */

struct rxr_validity {
	struct rxr_valid_limits lim;
	/* host steal, in USER_HZ ticks: [0] begin, [1] end; -1 = unknown */
	long long steal_total[2];
	long long *steal_cpu[2]; /* per cpu, MAX_CPUS each */
	int ncpu;
	double host_t[2];
	/* canary */
	void *buf;
	size_t bytes;
	bool canary_before, canary_after;
	int canary_cpu;		     /* the CPU both timings ran on, -1 unpinned */
	int cpu_seen[2];	     /* sched_getcpu during before / after */
	char cal_source[16];
	double cal_mem_ns, cal_cpu_ns;
	double before_mem_ns, before_cpu_ns, after_mem_ns, after_cpu_ns;
	size_t nthreads;
	struct rxr_valid_thread th[RXR_VALID_MAX_THREADS];
	size_t nreasons;
	char reasons[RXR_VALID_MAX_REASONS][RXR_VALID_REASON_LEN];
	bool loss_noted;             /* rxr_validity_note_loss */
	uint64_t lost;
};

void rxr_validity_note_loss(struct rxr_validity *v, uint64_t lost)
{
	if (!v)
		return;
	v->loss_noted = true;
	v->lost = lost;
}

int rxr_validity_open(const struct rxr_valid_limits *lim, struct rxr_validity **out, char *err,
		      size_t errlen)
{
	struct rxr_validity *v = calloc(1, sizeof(*v));
	long long *a = calloc(2 * MAX_CPUS, sizeof(*a));
	if (!v || !a) {
		free(v);
		free(a);
		return rxu_errf(err, errlen, -ENOMEM, "validity: out of memory");
	}
	v->canary_cpu = v->cpu_seen[0] = v->cpu_seen[1] = -1;
	if (lim)
		v->lim = *lim;
	else
		rxr_valid_limits_default(&v->lim);
	v->steal_cpu[0] = a;
	v->steal_cpu[1] = a + MAX_CPUS;
	v->steal_total[0] = v->steal_total[1] = -1;
	snprintf(v->cal_source, sizeof(v->cal_source), "none");
	*out = v;
	return 0;
}

void rxr_validity_free(struct rxr_validity *v)
{
	if (!v)
		return;
	free(v->buf);
	free(v->steal_cpu[0]);
	free(v);
}

/* steal is the 8th value of a "cpu" line of /proc/stat */
static void steal_read(struct rxr_validity *v, int end)
{
	FILE *f = fopen("/proc/stat", "re");
	v->steal_total[end] = -1;
	if (!f)
		return;
	char line[512];
	int ncpu = 0;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "cpu", 3))
			continue;
		unsigned long long x[8];
		int id = -1, off = 0;
		if (line[3] == ' ') {
			off = 4;
		} else if (sscanf(line + 3, "%d%n", &id, &off) == 1) {
			off += 3;
		} else {
			continue;
		}
		if (sscanf(line + off, "%llu %llu %llu %llu %llu %llu %llu %llu", &x[0], &x[1],
			   &x[2], &x[3], &x[4], &x[5], &x[6], &x[7]) != 8)
			continue;
		if (id < 0)
			v->steal_total[end] = (long long)x[7];
		else if (id < MAX_CPUS) {
			v->steal_cpu[end][id] = (long long)x[7];
			ncpu = id + 1 > ncpu ? id + 1 : ncpu;
		}
	}
	fclose(f);
	v->ncpu = ncpu;
}

void rxr_validity_host_begin(struct rxr_validity *v)
{
	steal_read(v, 0);
	v->host_t[0] = now_s();
}

void rxr_validity_host_end(struct rxr_validity *v)
{
	v->host_t[1] = now_s();
	steal_read(v, 1);
}

int rxr_validity_add_thread(struct rxr_validity *v, const struct rxr_valid_thread *t)
{
	if (!t->ended)
		return -EINVAL;
	if (v->nthreads >= RXR_VALID_MAX_THREADS)
		return -ENOSPC;
	v->th[v->nthreads++] = *t;
	return 0;
}

int rxr_validity_add_reason(struct rxr_validity *v, const char *fmt, ...)
{
	if (v->nreasons >= RXR_VALID_MAX_REASONS)
		return -ENOSPC;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(v->reasons[v->nreasons++], RXR_VALID_REASON_LEN, fmt, ap);
	va_end(ap);
	return 0;
}

/* ---------------------------------------------------------- the canary */

int rxr_canary_class(size_t bytes)
{
	int l = RXR_CANARY_MIN_LOG2;
	while (l < RXR_CANARY_MAX_LOG2 && ((size_t)1 << l) < bytes)
		l++;
	return l - RXR_CANARY_MIN_LOG2;
}

static void *canary_alloc(size_t bytes)
{
	void *p = aligned_alloc(64, bytes);
	if (p)
		memset(p, 1, bytes); /* fault the pages in outside any timing */
	return p;
}

void rxr_canary_time(void *buf, size_t bytes, double *mem_ns, double *cpu_ns)
{
	/* volatile: the stores are the workload, nothing reads them back */
	volatile uint64_t *w = buf;
	double t0 = now_s();
	for (size_t i = 0; i < bytes / sizeof(uint64_t); i += 64 / sizeof(uint64_t))
		w[i] += i;
	double t1 = now_s();
	/* a dependent chain (xorshift): no memory, no overlap between steps */
	uint64_t x = 88172645463325252ull;
	for (unsigned i = 0; i < CANARY_CPU_ITERS; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	double t2 = now_s();
	w[0] += x & 1;
	*mem_ns = (t1 - t0) * 1e9;
	*cpu_ns = (t2 - t1) * 1e9;
}

/*
 * Start every timing from the same cache state: the buffer's lines out of
 * every cache level, written back. Otherwise the calibration (taken on an
 * idle host, its buffer warm from the previous repetition) and the timing
 * after a run (whose buffers just evicted it) differ by the cache, not by
 * what the host did (seen on the 16-core host: 1.3-2x on a 16 MiB canary).
 * Where the CPU lets a process flush a line (x86 clflush, aarch64 dc civac)
 * the canary flushes its own lines: a few ms for 16 MiB. Elsewhere it
 * writes twice the LLC's size of other memory. That was the only way
 * before, and it cost every trial ~0.6 s on the 2-core host: glibc reports
 * the whole socket's L3 there (256 MiB, where a core's share is 32), so
 * each trial process first touched a 512 MiB buffer.
 */
#if defined(__x86_64__) || defined(__i386__)
#include <emmintrin.h>
static bool canary_flush(volatile void *buf, size_t bytes)
{
	for (size_t i = 0; i < bytes; i += 64)
		_mm_clflush((const void *)((const volatile char *)buf + i));
	_mm_mfence();
	return true;
}
#elif defined(__aarch64__)
static bool canary_flush(volatile void *buf, size_t bytes)
{
	uint64_t ctr;
	__asm__ volatile("mrs %0, ctr_el0" : "=r"(ctr));
	size_t line = (size_t)4 << ((ctr >> 16) & 0xf); /* DminLine, in words */
	for (size_t i = 0; i < bytes; i += line)
		__asm__ volatile("dc civac, %0" ::"r"((const volatile char *)buf + i) : "memory");
	__asm__ volatile("dsb ish" ::: "memory");
	return true;
}
#else
static bool canary_flush(volatile void *buf, size_t bytes)
{
	(void)buf;
	(void)bytes;
	return false;
}
#endif

static void canary_evict(void *buf, size_t bytes)
{
	if (canary_flush(buf, bytes))
		return;
	static volatile uint8_t *ev;
	static size_t evlen;
	long llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
	size_t want = (size_t)(llc > 0 ? llc : 32l << 20) * 2;
	if (bytes > want / 2)
		return; /* larger than the cache: it never stays there anyway */
	if (!ev) {
		ev = aligned_alloc(64, want);
		if (!ev)
			return;
		evlen = want;
	}
	for (size_t i = 0; i < evlen; i += 64)
		ev[i] = (uint8_t)i;
}

/*
 * The canary runs pinned: its buffer is first touched, and both timings
 * taken, on one CPU. The run's main thread is not pinned, and sleeps while
 * the workers run; on a host with more than one memory node it can wake
 * on another node, and its "after" pass then times remote memory, not the
 * host's state (on the 16-core host, unpinned, the memory canary read
 * after/before 1.33x in the median with quiet trials). The caller's
 * affinity is put back afterwards.
 */
struct canary_pin {
	cpu_set_t old;
	bool saved;
};

static int canary_pin_enter(struct canary_pin *p, int cpu)
{
	p->saved = false;
	if (cpu < 0 || cpu >= CPU_SETSIZE)
		return -EINVAL;
	if (sched_getaffinity(0, sizeof(p->old), &p->old) != 0)
		return -errno;
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (sched_setaffinity(0, sizeof(one), &one) != 0)
		return -errno;
	p->saved = true;
	return 0;
}

static void canary_pin_leave(struct canary_pin *p)
{
	if (p->saved)
		(void)sched_setaffinity(0, sizeof(p->old), &p->old);
	p->saved = false;
}

static void canary_best(void *buf, size_t bytes, int reps, double *mem_ns, double *cpu_ns)
{
	*mem_ns = *cpu_ns = INFINITY;
	for (int r = 0; r < reps; r++) {
		double m, c;
		canary_evict(buf, bytes);
		rxr_canary_time(buf, bytes, &m, &c);
		*mem_ns = fmin(*mem_ns, m);
		*cpu_ns = fmin(*cpu_ns, c);
	}
}

int rxr_canary_calibrate(struct rxr_canary_cal *cal, size_t min_bytes, size_t max_bytes, int reps)
{
	memset(cal, 0, sizeof(*cal));
	int lo = rxr_canary_class(min_bytes), hi = rxr_canary_class(max_bytes);
	/* as a trial measures: pinned, and each size in a buffer of its own,
	 * allocated and first touched as the trial's is */
	struct canary_pin pin;
	canary_pin_enter(&pin, sched_getcpu());
	double cpu = INFINITY;
	int rc = 0;
	for (int c = lo; c <= hi && !rc; c++) {
		size_t bytes = (size_t)1 << (c + RXR_CANARY_MIN_LOG2);
		void *buf = canary_alloc(bytes);
		if (!buf) {
			rc = -ENOMEM;
			break;
		}
		double m, k;
		canary_best(buf, bytes, reps < 1 ? 1 : reps, &m, &k);
		free(buf);
		cal->mem_ns[c] = m;
		cpu = fmin(cpu, k);
	}
	canary_pin_leave(&pin);
	if (rc)
		return rc;
	cal->cpu_ns = cpu;
	return 0;
}

int rxr_canary_cal_format(const struct rxr_canary_cal *cal, char *out, size_t len)
{
	size_t o = (size_t)snprintf(out, len, "cpu=%.0f", cal->cpu_ns);
	for (int c = 0; c < RXR_CANARY_CLASSES && o < len; c++)
		if (cal->mem_ns[c] > 0)
			o += (size_t)snprintf(out + o, len - o, ",m%d=%.0f",
					      c + RXR_CANARY_MIN_LOG2, cal->mem_ns[c]);
	return o < len ? 0 : -ENOSPC;
}

int rxr_canary_cal_parse(const char *s, struct rxr_canary_cal *cal, char *err, size_t errlen)
{
	memset(cal, 0, sizeof(*cal));
	const char *p = s;
	while (p && *p) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);
		char part[64];
		if (n >= sizeof(part))
			return rxu_errf(err, errlen, -EINVAL, "%s: part too long: %.40s",
					RXR_CANARY_ENV, p);
		memcpy(part, p, n);
		part[n] = '\0';
		char *eq = strchr(part, '='), *end;
		double ns = eq ? strtod(eq + 1, &end) : 0;
		int l = 0;
		bool ok = eq && end != eq + 1 && !*end && isfinite(ns) && ns > 0;
		if (ok && !strncmp(part, "cpu=", 4))
			cal->cpu_ns = ns;
		else if (ok && sscanf(part, "m%d=", &l) == 1 && l >= RXR_CANARY_MIN_LOG2 &&
			 l <= RXR_CANARY_MAX_LOG2)
			cal->mem_ns[l - RXR_CANARY_MIN_LOG2] = ns;
		else
			return rxu_errf(err, errlen, -EINVAL,
					"%s: '%s': expected cpu=<ns> or m<18..26>=<ns>",
					RXR_CANARY_ENV, part);
		p = comma ? comma + 1 : NULL;
	}
	if (!(cal->cpu_ns > 0))
		return rxu_errf(err, errlen, -EINVAL, "%s: no cpu=<ns>", RXR_CANARY_ENV);
	return 0;
}

void rxr_validity_set_calibration(struct rxr_validity *v, double mem_ns, double cpu_ns,
				  const char *source)
{
	v->cal_mem_ns = mem_ns;
	v->cal_cpu_ns = cpu_ns;
	snprintf(v->cal_source, sizeof(v->cal_source), "%s", source ? source : "given");
}

int rxr_validity_canary_before(struct rxr_validity *v, size_t working_set_bytes, char *err,
			       size_t errlen)
{
	int c = rxr_canary_class(working_set_bytes);
	v->bytes = (size_t)1 << (c + RXR_CANARY_MIN_LOG2);
	free(v->buf);
	struct canary_pin pin;
	int cpu = sched_getcpu();
	v->canary_cpu = canary_pin_enter(&pin, cpu) == 0 ? cpu : -1;
	v->buf = canary_alloc(v->bytes);
	if (!v->buf) {
		canary_pin_leave(&pin);
		return rxu_errf(err, errlen, -ENOMEM, "canary: cannot allocate %zu bytes",
				v->bytes);
	}
	if (!(v->cal_mem_ns > 0 && v->cal_cpu_ns > 0)) {
		const char *env = getenv(RXR_CANARY_ENV);
		struct rxr_canary_cal cal;
		if (env && *env) {
			int rc = rxr_canary_cal_parse(env, &cal, err, errlen);
			if (rc < 0) {
				canary_pin_leave(&pin);
				return rc;
			}
		} else {
			memset(&cal, 0, sizeof(cal));
		}
		if (cal.mem_ns[c] > 0 && cal.cpu_ns > 0) {
			rxr_validity_set_calibration(v, cal.mem_ns[c], cal.cpu_ns, "sweep");
		} else {
			/* calibrate this size once, here: the best of three */
			double m, k;
			canary_best(v->buf, v->bytes, 3, &m, &k);
			rxr_validity_set_calibration(v, m, k, "self");
		}
	}
	canary_best(v->buf, v->bytes, CANARY_REPS, &v->before_mem_ns, &v->before_cpu_ns);
	v->cpu_seen[0] = sched_getcpu();
	canary_pin_leave(&pin);
	v->canary_before = true;
	return 0;
}

int rxr_validity_canary_after(struct rxr_validity *v, char *err, size_t errlen)
{
	if (!v->canary_before || !v->buf)
		return rxu_errf(err, errlen, -EINVAL, "canary: after without before");
	struct canary_pin pin;
	canary_pin_enter(&pin, v->canary_cpu); /* the CPU of the first timing */
	canary_best(v->buf, v->bytes, CANARY_REPS, &v->after_mem_ns, &v->after_cpu_ns);
	v->cpu_seen[1] = sched_getcpu();
	canary_pin_leave(&pin);
	v->canary_after = true;
	free(v->buf);
	v->buf = NULL;
	return 0;
}

/* ------------------------------------------------------------ judging */

static double steal_tick_s(void)
{
	long hz = sysconf(_SC_CLK_TCK);
	return hz > 0 ? 1.0 / (double)hz : 0.01;
}

static bool host_known(const struct rxr_validity *v)
{
	return v->steal_total[0] >= 0 && v->steal_total[1] >= 0;
}

/* Steal ticks on a core over the host window, -1 unknown. */
static long long core_steal_ticks(const struct rxr_validity *v, int core)
{
	if (!host_known(v) || core < 0 || core >= v->ncpu)
		return -1;
	long long d = v->steal_cpu[1][core] - v->steal_cpu[0][core];
	return d > 0 ? d : 0;
}

static double thread_wait_limit(const struct rxr_validity *v, const struct rxr_valid_thread *t)
{
	double win = t->t_end - t->t_begin, lim = v->lim.wait_share * win;
	if (v->lim.ring_cover_s > 0)
		lim = fmin(lim, v->lim.ring_cover_s);
	return fmax(lim, v->lim.wait_floor_s);
}

/* Seconds of the window the thread neither ran nor waited to run, < 0
 * unknown. */
static double thread_offcpu_s(const struct rxr_valid_thread *t)
{
	if (!t->run_known || t->wait_s < 0)
		return -1;
	return fmax(0, t->t_end - t->t_begin - t->run_s - t->wait_s);
}

struct reasons {
	size_t n;
	char r[4][RXR_VALID_REASON_LEN];
};

static void reason_add(struct reasons *rs, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void reason_add(struct reasons *rs, const char *fmt, ...)
{
	if (rs->n >= sizeof(rs->r) / sizeof(rs->r[0]))
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(rs->r[rs->n++], RXR_VALID_REASON_LEN, fmt, ap);
	va_end(ap);
}

static void thread_judge(const struct rxr_validity *v, const struct rxr_valid_thread *t,
			 struct reasons *rs)
{
	memset(rs, 0, sizeof(*rs));
	double win = t->t_end - t->t_begin, lim = thread_wait_limit(v, t);
	if (t->wait_s >= 0 && t->wait_s > lim)
		reason_add(
		    rs, "preempted: waited %.2f ms for its CPU (%.1f%% of %.0f ms; limit %.2f ms)",
		    t->wait_s * 1e3, win > 0 ? 100 * t->wait_s / win : 0, win * 1e3, lim * 1e3);
	else if (t->wait_s < 0 && (double)t->nivcsw > v->lim.nivcsw_per_s * win && t->nivcsw > 0)
		reason_add(rs,
			   "preempted: %ld involuntary switches in %.0f ms (limit %.0f/s; no "
			   "schedstat)",
			   t->nivcsw, win * 1e3, v->lim.nivcsw_per_s);
	/* off its CPU, neither running nor waiting to run: the host's (a
	 * thread that slept on its own says nothing by it) */
	double off = thread_offcpu_s(t);
	double off_lim = v->loss_noted && !v->lost ? fmax(v->lim.wait_share * win, lim) : lim;
	if (off >= 0 && !t->nvcsw && off > off_lim)
		reason_add(rs, "off its CPU %.2f ms, not running nor waiting (steal, interrupts; "
			   "limit %.2f ms)",
			   off * 1e3, off_lim * 1e3);
	if (t->migrations > 0)
		reason_add(rs, "migrated %llu time%s (%s)", (unsigned long long)t->migrations,
			   t->migrations > 1 ? "s" : "", rxr_mig_source_name(t->mig_source));
	/* /proc/stat counts steal in ticks: two ticks are surely stolen time */
	long long st = core_steal_ticks(v, t->core);
	double st_s = st > 0 ? (double)st * steal_tick_s() : 0;
	if (st >= 2 && st_s > lim)
		reason_add(rs, "steal: %.0f ms of core %d taken by the hypervisor (limit %.2f ms)",
			   st_s * 1e3, t->core, lim * 1e3);
}

static double canary_ratio(const struct rxr_validity *v, bool after, const char **what)
{
	double m = after ? v->after_mem_ns : v->before_mem_ns;
	double c = after ? v->after_cpu_ns : v->before_cpu_ns;
	double rm = v->cal_mem_ns > 0 ? m / v->cal_mem_ns : 0;
	double rc = v->cal_cpu_ns > 0 ? c / v->cal_cpu_ns : 0;
	*what = rm >= rc ? "memory" : "compute";
	return fmax(rm, rc);
}

/* Every run-level reason, in order: threads, canary, added. */
static void run_reasons(const struct rxr_validity *v, json_t *arr, bool *disturbed)
{
	*disturbed = v->nreasons > 0;
	for (size_t i = 0; i < v->nthreads; i++) {
		struct reasons rs;
		thread_judge(v, &v->th[i], &rs);
		for (size_t k = 0; k < rs.n; k++) {
			*disturbed = true;
			if (arr)
				json_array_append_new(arr, json_sprintf("%s on core %d: %s",
									v->th[i].role,
									v->th[i].core, rs.r[k]));
		}
	}
	for (int after = 0; after < 2; after++) {
		if (!(after ? v->canary_after : v->canary_before))
			continue;
		const char *what;
		double r = canary_ratio(v, after, &what);
		if (r > v->lim.canary_ratio) {
			*disturbed = true;
			if (arr)
				json_array_append_new(
				    arr, json_sprintf("canary %.2fx slower than calibrated "
						      "%s the run (%s)",
						      r, after ? "after" : "before", what));
		}
	}
	for (size_t k = 0; k < v->nreasons && arr; k++)
		json_array_append_new(arr, json_string(v->reasons[k]));
}

bool rxr_validity_disturbed(const struct rxr_validity *v)
{
	bool d;
	run_reasons(v, NULL, &d);
	return d;
}

static json_t *ms_or_null(double s)
{
	return s >= 0 ? json_real(s * 1e3) : json_null();
}

static json_t *thread_json(const struct rxr_validity *v, const struct rxr_valid_thread *t)
{
	struct reasons rs;
	thread_judge(v, t, &rs);
	json_t *r = json_array();
	for (size_t k = 0; k < rs.n; k++)
		json_array_append_new(r, json_string(rs.r[k]));
	long long st = core_steal_ticks(v, t->core);
	return json_pack(
	    "{s:s, s:i, s:f, s:I, s:I, s:I, s:s, s:o, s:s, s:o, s:o, s:f, s:b, s:o}", "role",
	    t->role,
	    "core", t->core, "window_s", t->t_end - t->t_begin, "voluntary_switches",
	    (json_int_t)t->nvcsw, "involuntary_switches", (json_int_t)t->nivcsw, "migrations",
	    (json_int_t)t->migrations, "migrations_source", rxr_mig_source_name(t->mig_source),
	    "runqueue_wait_ms", ms_or_null(t->wait_s), "wait_source",
	    t->wait_s >= 0 ? "schedstat" : "none", "offcpu_ms", ms_or_null(thread_offcpu_s(t)),
	    "steal_ms",
	    st >= 0 ? json_real((double)st * steal_tick_s() * 1e3) : json_null(), "wait_limit_ms",
	    thread_wait_limit(v, t) * 1e3, "disturbed", rs.n > 0, "reasons", r);
}

static json_t *canary_json(const struct rxr_validity *v)
{
	if (!v->canary_before)
		return json_null();
	const char *w0, *w1 = "";
	double r = canary_ratio(v, false, &w0);
	if (v->canary_after)
		r = fmax(r, canary_ratio(v, true, &w1));
	return json_pack(
	    "{s:I, s:o, s:i, s:o, s:s, s:f, s:f, s:f, s:f, s:o, s:o, s:f}", "bytes",
	    (json_int_t)v->bytes, "cpu", v->canary_cpu >= 0 ? json_integer(v->canary_cpu) : json_null(),
	    "cpu_before", v->cpu_seen[0], "cpu_after",
	    v->canary_after ? json_integer(v->cpu_seen[1]) : json_null(),
	    "calibration", v->cal_source, "cal_mem_ms", v->cal_mem_ns * 1e-6, "cal_cpu_ms",
	    v->cal_cpu_ns * 1e-6, "before_mem_ms", v->before_mem_ns * 1e-6, "before_cpu_ms",
	    v->before_cpu_ns * 1e-6, "after_mem_ms",
	    v->canary_after ? json_real(v->after_mem_ns * 1e-6) : json_null(), "after_cpu_ms",
	    v->canary_after ? json_real(v->after_cpu_ns * 1e-6) : json_null(), "ratio", r);
}

static json_t *host_json(const struct rxr_validity *v)
{
	if (!host_known(v))
		return json_pack("{s:s}", "source", "unknown");
	double st = (double)(v->steal_total[1] - v->steal_total[0]) * steal_tick_s();
	double win = v->host_t[1] - v->host_t[0];
	double share = win > 0 && v->ncpu > 0 ? st / (win * v->ncpu) : 0;
	return json_pack("{s:s, s:f, s:f, s:i, s:f}", "source", "/proc/stat", "steal_ms", st * 1e3,
			 "steal_share", share, "cpus", v->ncpu, "window_s", win);
}

json_t *rxr_validity_json(const struct rxr_validity *v)
{
	json_t *reasons = json_array(), *threads = json_array();
	bool d = false;
	if (!reasons || !threads)
		goto fail;
	run_reasons(v, reasons, &d);
	for (size_t i = 0; i < v->nthreads; i++)
		if (json_array_append_new(threads, thread_json(v, &v->th[i])) < 0)
			goto fail;
	json_t *lim =
	    json_pack("{s:f, s:o, s:f, s:f, s:f}", "wait_share", v->lim.wait_share, "ring_cover_ms",
		      v->lim.ring_cover_s > 0 ? json_real(v->lim.ring_cover_s * 1e3) : json_null(),
		      "wait_floor_ms", v->lim.wait_floor_s * 1e3, "nivcsw_per_s",
		      v->lim.nivcsw_per_s, "canary_ratio", v->lim.canary_ratio);
	return json_pack("{s:b, s:o, s:o, s:o, s:o, s:o}", "disturbed", d, "reasons", reasons,
			 "limits", lim, "host", host_json(v), "canary", canary_json(v), "threads",
			 threads);
fail:
	json_decref(reasons);
	json_decref(threads);
	return NULL;
}
