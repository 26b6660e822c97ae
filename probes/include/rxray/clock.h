/* SPDX-License-Identifier: MIT */
/*
 * The clock every lap reads (probes/clock.c): its sources, calibration,
 * the inline fast read and the spin on it. It knows nothing of laps:
 * rxray/probe.h includes it and adds rxp_clock_init, which calibrates and
 * then measures the lap cost.
 */
#ifndef RXRAY_CLOCK_H
#define RXRAY_CLOCK_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum rxp_clock_source {
	RXP_CLOCK_TSC = 0,      /* x86 rdtsc (invariant TSC required) */
	RXP_CLOCK_CNTVCT,       /* aarch64 generic timer: coarse, says so */
	RXP_CLOCK_PMU,          /* perf_event mmap page user read (aarch64) */
	RXP_CLOCK_MONOTONIC,    /* clock_gettime: last resort, ns units */
};

struct rxp_clock {
	enum rxp_clock_source source;
	double hz;              /* ticks per second, calibrated */
	double resolution_ns;   /* smallest observable step */
	bool invariant;         /* TSC: constant + nonstop; else true */
	double lap_cost_cycles; /* median cost of one lap, measured */
	char note[96];          /* e.g. "cntvct_el0 at 25 MHz: coarse" */
};

/* rxp_clock_init's two halves (rxray/probe.h): pick and calibrate the clock
 * and make it active with lap_cost_cycles 0, then record the lap cost that
 * probe.c measured on it. */
int rxp_clock_pick(unsigned calib_ms);
void rxp_clock_set_lap_cost(double cycles);
/* The active clock: clock_gettime at 1 GHz with lap_cost_cycles 0 until
 * rxp_clock_init succeeds (callers may test lap_cost_cycles == 0). */
const struct rxp_clock *rxp_clock_get(void);
/*
 * Why the active source was chosen, and why a better one was not: e.g.
 * "PMU cycle counter not readable from user space (kernel.perf_user_access=0):
 * cntvct_el0 instead". A static string, valid for the process's life; a
 * placeholder before rxp_clock_init. Never NULL.
 */
const char *rxp_clock_why(void);
/* Name of a clock source ("tsc", "cntvct", "pmu", "monotonic"). */
const char *rxp_clock_source_name(enum rxp_clock_source s);
/* Calibrate a specific source over ms milliseconds; hz out. 0 or -errno. */
int rxp_clock_calibrate(enum rxp_clock_source s, unsigned ms, double *hz);
/* True when this x86 CPU reports constant and nonstop TSC. */
bool rxp_clock_tsc_invariant(void);

/* Slow-path read of the active clock (function pointer behind it). */
uint64_t rxp_clock_read(void);
/* Ticks -> nanoseconds with the calibrated frequency. */
double rxp_clock_to_ns(uint64_t ticks);

extern uint64_t (*rxp_clock_read_fn)(void);
extern int rxp_clock_native;

/* The architecture's native counter (rdtsc, cntvct_el0); 0 where there is
 * none (RXP_NATIVE_COUNTER is 0 there). */
#if defined(__x86_64__) || defined(__i386__) || defined(__aarch64__)
#define RXP_NATIVE_COUNTER 1
#else
#define RXP_NATIVE_COUNTER 0
#endif
static inline uint64_t rxp_native_read(void)
{
#if defined(__x86_64__) || defined(__i386__)
	uint32_t lo, hi;
	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
#elif defined(__aarch64__)
	uint64_t v;
	__asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(v));
	return v;
#else
	return 0;
#endif
}

/* Inline fast read: the native counter when it is the active source. */
static inline uint64_t rxp_now(void)
{
#if RXP_NATIVE_COUNTER
	if (__builtin_expect(rxp_clock_native, 1))
		return rxp_native_read();
#endif
	return rxp_clock_read_fn();
}

/* Open the hardware cycle counter for this thread as the pmu clock does
 * (user space only; on arm64 asking for user access): a file descriptor,
 * or -errno. `rxray doctor` asks whether the clock could have one. */
int rxp_clock_pmu_open(void);

/* Spin until `ticks` clock ticks have passed since `from`; returns now. */
static inline uint64_t rxp_spin_until(uint64_t from, uint64_t ticks)
{
	uint64_t t;
	do {
		t = rxp_now();
	} while (t - from < ticks);
	return t;
}

#ifdef __cplusplus
}
#endif

#endif
