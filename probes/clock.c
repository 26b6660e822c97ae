/* SPDX-License-Identifier: MIT */
/*
 * Clock sources for laps. The inline rxp_now() reads the native counter
 * (TSC on x86, cntvct_el0 on aarch64) when that is the active source;
 * anything else goes through rxp_clock_read_fn, chosen once here.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "rxray/clock.h"

static uint64_t read_monotonic(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t (*rxp_clock_read_fn)(void) = read_monotonic;
int rxp_clock_native;
static struct rxp_clock active = {.source = RXP_CLOCK_MONOTONIC, .hz = 1e9, .invariant = true};
/* Why the active source was chosen (and why the better ones were not). */
static char clock_why[256];

#if defined(__aarch64__)
/* The generic timer's frequency as firmware programmed it (Hz). */
static uint64_t read_cntfrq(void)
{
	uint64_t f;
	__asm__ __volatile__("mrs %0, cntfrq_el0" : "=r"(f));
	return f;
}
#endif

static uint64_t read_native(void)
{
#if RXP_NATIVE_COUNTER
	return rxp_native_read();
#else
	return read_monotonic();
#endif
}

/*
 * PMU cycle counter through a perf_event mmap page. The counter is per
 * thread, so each thread opens its own event on first read. Reads follow
 * the page's seqlock protocol (lock/index/offset, see perf_event.h).
 */
static __thread struct perf_event_mmap_page *pmu_page;
static __thread int pmu_failed;
static __thread int pmu_errno; /* why the first open failed (positive errno) */

int rxp_clock_pmu_open(void)
{
	struct perf_event_attr attr;
	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_HARDWARE;
	attr.size = sizeof(attr);
	attr.config = PERF_COUNT_HW_CPU_CYCLES;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
#if defined(__aarch64__)
	attr.config1 = 0x2; /* arm64: request user access (perf_user_access sysctl) */
#endif
	int fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
	return fd < 0 ? -errno : fd;
}

static int pmu_open_self(void)
{
	int fd = rxp_clock_pmu_open();
	if (fd < 0)
		return fd;
	void *p = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ, MAP_SHARED, fd, 0);
	close(fd); /* the mapping keeps the event alive */
	if (p == MAP_FAILED)
		return -errno;
	struct perf_event_mmap_page *pg = p;
	if (!pg->cap_user_rdpmc || !pg->index) {
		munmap(p, (size_t)sysconf(_SC_PAGESIZE));
		return -EOPNOTSUPP;
	}
	pmu_page = pg;
	return 0;
}

static uint64_t pmu_rdpmc(uint32_t idx)
{
#if defined(__x86_64__) || defined(__i386__)
	uint32_t lo, hi;
	__asm__ __volatile__("rdpmc" : "=a"(lo), "=d"(hi) : "c"(idx));
	return ((uint64_t)hi << 32) | lo;
#elif defined(__aarch64__)
	uint64_t v = 0;
	if (idx == 31) /* perf index 32 = the dedicated cycle counter */
		__asm__ __volatile__("mrs %0, pmccntr_el0" : "=r"(v));
	else /* the kernel put the event on a general counter: select it */
		__asm__ __volatile__("msr pmselr_el0, %1\n\tisb\n\tmrs %0, pmxevcntr_el0"
				     : "=r"(v)
				     : "r"((uint64_t)idx));
	return v;
#else
	(void)idx;
	return 0;
#endif
}

static uint64_t read_pmu(void)
{
	if (!pmu_page) {
		int rc = pmu_failed ? -pmu_errno : pmu_open_self();
		if (rc < 0) {
			pmu_failed = 1;
			pmu_errno = -rc;
			return 0;
		}
	}
	struct perf_event_mmap_page *pg = pmu_page;
	uint32_t seq, idx;
	uint64_t count;
	do {
		seq = __atomic_load_n(&pg->lock, __ATOMIC_ACQUIRE);
		idx = pg->index;
		count = (uint64_t)pg->offset;
		if (idx) {
			uint64_t pmc = pmu_rdpmc(idx - 1);
			unsigned width = pg->pmc_width ? pg->pmc_width : 64;
			if (width < 64) {
				pmc <<= 64 - width;
				count += (uint64_t)((int64_t)pmc >> (64 - width));
			} else {
				count += pmc;
			}
		}
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
	} while (__atomic_load_n(&pg->lock, __ATOMIC_RELAXED) != seq);
	return count;
}

bool rxp_clock_tsc_invariant(void)
{
#if defined(__x86_64__) || defined(__i386__)
	unsigned a, b, c, d;
	if (!__get_cpuid(0x80000000, &a, &b, &c, &d) || a < 0x80000007)
		return false;
	__get_cpuid(0x80000007, &a, &b, &c, &d);
	if (d & (1u << 8)) /* advanced power management: invariant TSC */
		return true;
	/* Hypervisors often hide the CPUID bit; the kernel's flags say it. */
	FILE *f = fopen("/proc/cpuinfo", "r");
	if (!f)
		return false;
	char line[4096];
	bool constant = false, nonstop = false;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "flags", 5))
			continue;
		constant = strstr(line, " constant_tsc") != NULL;
		nonstop = strstr(line, " nonstop_tsc") != NULL;
		break;
	}
	fclose(f);
	return constant && nonstop;
#else
	return false;
#endif
}

const char *rxp_clock_source_name(enum rxp_clock_source s)
{
	switch (s) {
	case RXP_CLOCK_TSC: return "tsc";
	case RXP_CLOCK_CNTVCT: return "cntvct";
	case RXP_CLOCK_PMU: return "pmu";
	case RXP_CLOCK_MONOTONIC: return "monotonic";
	}
	return "unknown";
}

static uint64_t (*source_reader(enum rxp_clock_source s))(void)
{
	switch (s) {
	case RXP_CLOCK_TSC:
	case RXP_CLOCK_CNTVCT: return read_native;
	case RXP_CLOCK_PMU: return read_pmu;
	case RXP_CLOCK_MONOTONIC: return read_monotonic;
	}
	return read_monotonic;
}

/* One (monotonic ns, ticks) pair, taken where the two reads sit closest. */
static void pair_sample(uint64_t (*rd)(void), uint64_t *ns, uint64_t *ticks)
{
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < 16; i++) {
		uint64_t a = read_monotonic();
		uint64_t t = rd();
		uint64_t b = read_monotonic();
		if (b - a < best) {
			best = b - a;
			*ns = a + (b - a) / 2;
			*ticks = t;
		}
	}
}

int rxp_clock_calibrate(enum rxp_clock_source s, unsigned ms, double *hz)
{
	uint64_t (*rd)(void) = source_reader(s);
#if !defined(__x86_64__) && !defined(__i386__)
	if (s == RXP_CLOCK_TSC)
		return -ENOTSUP;
#endif
#if !defined(__aarch64__)
	if (s == RXP_CLOCK_CNTVCT)
		return -ENOTSUP;
#endif
	if (s == RXP_CLOCK_MONOTONIC) {
		*hz = 1e9;
		return 0;
	}
	if (s == RXP_CLOCK_PMU) {
		rd();
		if (!pmu_page)
			return -EOPNOTSUPP;
	}
	if (!ms)
		ms = 100;
	uint64_t ns0 = 0, t0 = 0, ns1 = 0, t1 = 0;
	pair_sample(rd, &ns0, &t0);
	struct timespec req = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
	while (nanosleep(&req, &req) && errno == EINTR)
		;
	pair_sample(rd, &ns1, &t1);
	if (ns1 <= ns0 || t1 <= t0)
		return -EIO;
	*hz = (double)(t1 - t0) * 1e9 / (double)(ns1 - ns0);
	return 0;
}

static double measure_resolution_ns(uint64_t (*rd)(void), double hz)
{
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < 1000; i++) {
		uint64_t a = rd(), b;
		do {
			b = rd();
		} while (b == a);
		if (b - a < best)
			best = b - a;
	}
	return (double)best * 1e9 / hz;
}

#if defined(__aarch64__)
/*
 * Why the PMU cycle counter is not readable from user space, in the
 * kernel's own terms: arm64 gates EL0 counter reads behind the
 * kernel.perf_user_access sysctl (Linux 5.17+), on top of whatever
 * perf_event_open itself refuses.
 */
static void pmu_why_not(char *out, size_t len)
{
	FILE *f = fopen("/proc/sys/kernel/perf_user_access", "r");
	int ua = -1;
	if (f) {
		if (fscanf(f, "%d", &ua) != 1)
			ua = -1;
		fclose(f);
	}
	if (pmu_errno == EOPNOTSUPP && ua == 0)
		snprintf(out, len, "kernel.perf_user_access=0");
	else if (pmu_errno == EOPNOTSUPP && !f)
		snprintf(out, len, "no kernel.perf_user_access (kernel before 5.17)");
	else if (pmu_errno == EOPNOTSUPP)
		snprintf(out, len, "the kernel mapped no user-readable counter");
	else
		snprintf(out, len, "perf_event_open: %s%s", strerror(pmu_errno),
			 pmu_errno == ENOSYS ? " (emulated or PMU-less kernel)" : "");
}
#endif

static enum rxp_clock_source pick_source(void)
{
	const char *force = getenv("RXRAY_CLOCK");
	if (force) {
		enum rxp_clock_source s = RXP_CLOCK_MONOTONIC;
		bool known = true;
		if (!strcmp(force, "tsc"))
			s = RXP_CLOCK_TSC;
		else if (!strcmp(force, "cntvct"))
			s = RXP_CLOCK_CNTVCT;
		else if (!strcmp(force, "pmu"))
			s = RXP_CLOCK_PMU;
		else if (strcmp(force, "monotonic"))
			known = false;
		if (known) {
			snprintf(clock_why, sizeof(clock_why), "forced by RXRAY_CLOCK=%s", force);
			return s;
		}
	}
#if defined(__x86_64__) || defined(__i386__)
	bool inv = rxp_clock_tsc_invariant();
	snprintf(clock_why, sizeof(clock_why), "%s",
		 inv ? "invariant TSC (constant_tsc, nonstop_tsc): one rdtsc per lap"
		     : "TSC not invariant: clock_gettime instead");
	return inv ? RXP_CLOCK_TSC : RXP_CLOCK_MONOTONIC;
#elif defined(__aarch64__)
	read_pmu();
	if (pmu_page) {
		snprintf(clock_why, sizeof(clock_why),
			 "PMU cycle counter readable from user space (kernel.perf_user_access=1)");
		return RXP_CLOCK_PMU;
	}
	char why[128];
	pmu_why_not(why, sizeof(why));
	snprintf(clock_why, sizeof(clock_why),
		 "PMU cycle counter not readable from user space (%s): cntvct_el0 instead", why);
	return RXP_CLOCK_CNTVCT;
#else
	snprintf(clock_why, sizeof(clock_why), "no native counter on this architecture");
	return RXP_CLOCK_MONOTONIC;
#endif
}

int rxp_clock_pick(unsigned calib_ms)
{
	struct rxp_clock c;
	memset(&c, 0, sizeof(c));
	c.source = pick_source();
	c.invariant = true;
	double hz = 0;
	int rc = rxp_clock_calibrate(c.source, calib_ms, &hz);
	if (rc < 0 && c.source != RXP_CLOCK_MONOTONIC) {
		snprintf(c.note, sizeof(c.note), "%s unavailable (%s): clock_gettime fallback",
			 rxp_clock_source_name(c.source), strerror(-rc));
		snprintf(clock_why, sizeof(clock_why), "%s", c.note);
		c.source = RXP_CLOCK_MONOTONIC;
		rc = rxp_clock_calibrate(c.source, calib_ms, &hz);
	}
	if (rc < 0)
		return rc;
#if defined(__aarch64__)
	/*
	 * cntvct_el0 ticks at cntfrq_el0 by definition, exactly; the
	 * calibration only guards against firmware that programmed cntfrq
	 * wrong (then the measured rate wins, and the why says so).
	 */
	if (c.source == RXP_CLOCK_CNTVCT) {
		double frq = (double)read_cntfrq();
		size_t n = strlen(clock_why);
		if (frq > 0 && hz > 0.98 * frq && hz < 1.02 * frq)
			hz = frq;
		else if (n < sizeof(clock_why))
			snprintf(clock_why + n, sizeof(clock_why) - n,
				 "; cntfrq_el0 says %.3f MHz but it ticks at %.3f MHz (measured)",
				 frq / 1e6, hz / 1e6);
	}
#endif
	c.hz = hz;
	if (c.source == RXP_CLOCK_TSC)
		c.invariant = rxp_clock_tsc_invariant();
	if (c.source == RXP_CLOCK_PMU)
		c.invariant = false; /* cycles follow the core's frequency */

	rxp_clock_read_fn = source_reader(c.source);
	rxp_clock_native = (c.source == RXP_CLOCK_TSC || c.source == RXP_CLOCK_CNTVCT);
	c.resolution_ns = measure_resolution_ns(rxp_clock_read_fn, c.hz);
	if (!c.note[0]) {
		if (c.source == RXP_CLOCK_CNTVCT)
			snprintf(c.note, sizeof(c.note),
				 "cntvct_el0 at %.1f MHz: coarse, %.1f ns per tick", c.hz / 1e6,
				 1e9 / c.hz);
		else if (c.source == RXP_CLOCK_MONOTONIC)
			snprintf(c.note, sizeof(c.note), "clock_gettime: ns units, costly reads");
		else if (c.source == RXP_CLOCK_TSC && !c.invariant)
			snprintf(c.note, sizeof(c.note), "TSC is not invariant: forced");
	}
	active = c;
	return 0;
}

void rxp_clock_set_lap_cost(double cycles)
{
	active.lap_cost_cycles = cycles;
}

const struct rxp_clock *rxp_clock_get(void)
{
	return &active;
}

const char *rxp_clock_why(void)
{
	return clock_why[0] ? clock_why : "not initialised: clock_gettime until rxp_clock_init";
}

uint64_t rxp_clock_read(void)
{
	return rxp_now();
}

double rxp_clock_to_ns(uint64_t ticks)
{
	return active.hz > 0 ? (double)ticks * 1e9 / active.hz : (double)ticks;
}
