/* SPDX-License-Identifier: MIT */
/*
 * Trial validity: did the host leave the measured threads alone?
 *
 * A run records, over its measured window:
 *   per measured thread  voluntary and involuntary context switches
 *                        (getrusage RUSAGE_THREAD), CPU migrations (a
 *                        per-thread software perf event, else the
 *                        thread's /proc sched file, else sched_getcpu at
 *                        both ends; the source is named), and the time it
 *                        waited on a run queue (/proc/thread-self/schedstat)
 *   host                 steal time (/proc/stat), in total and on each
 *                        measured thread's core
 *   canary               a fixed workload (one write per cache line over a
 *                        buffer the size of the run's working set, then a
 *                        dependent integer loop) timed before and after the
 *                        run, against the host's calibrated value; both
 *                        timings (and the buffer's first touch) pinned to
 *                        one CPU, so a main thread that wakes on another
 *                        memory node does not time remote memory
 * and calls the run "disturbed" when (the limits and their reasons are in
 * struct rxr_valid_limits):
 *   - a measured thread waited for its CPU (run-queue wait, plus steal on
 *     its core) longer than its limit ("preempted"), or, where schedstat is
 *     missing, had more involuntary switches than the fallback limit;
 *   - a measured thread migrated to another CPU;
 *   - the canary ran more than canary_ratio (1.5) times slower than
 *     calibrated, before or after the run;
 *   - the caller added a reason (e.g. an oversubscribed placement).
 *
 * Use (the run sequence; the per-thread calls run ON the measured thread):
 *
 *     struct rxr_valid_limits lim;
 *     rxr_valid_limits_default(&lim);
 *     lim.ring_cover_s = ring_packets / rate_pps;     // when known
 *     struct rxr_validity *v;
 *     rxr_validity_open(&lim, &v, err, errlen);
 *     rxr_validity_canary_before(v, working_set_bytes, err, errlen);
 *     rxr_validity_host_begin(v);
 *       each worker, on its thread, when its counters start:
 *         rxr_valid_thread_begin(&w->valid, "rx", core, err, errlen);
 *       ... and when they stop:
 *         rxr_valid_thread_end(&w->valid);
 *     rxr_validity_host_end(v);
 *     after join, for each worker: rxr_validity_add_thread(v, &w->valid);
 *     rxr_validity_canary_after(v, err, errlen);
 *     json_object_set_new(extra, "validity", rxr_validity_json(v));
 *     rxr_validity_free(v);
 *
 * The canary's calibration: a sweep calibrates once (rxr_canary_calibrate)
 * and hands the value to every trial in the environment variable
 * RXRAY_CANARY (rxr_canary_cal_format); a run without it calibrates itself
 * once, before its first canary, and the result says which ("sweep" |
 * "self").
 *
 * Prefix rxr_valid / rxr_validity / rxr_canary. Functions return 0 or a
 * negative errno and fill err (when given) on failure; a missing signal
 * source (no perf events, no schedstat) is not an error: the result names
 * the source used or says "none". Free functions accept NULL.
 */
#ifndef RXRAY_VALIDITY_H
#define RXRAY_VALIDITY_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RXR_CANARY_ENV "RXRAY_CANARY"
/* Canary buffers are powers of two from 2^18 (256 KiB) to 2^26 (64 MiB). */
#define RXR_CANARY_MIN_LOG2 18
#define RXR_CANARY_MAX_LOG2 26
#define RXR_CANARY_CLASSES (RXR_CANARY_MAX_LOG2 - RXR_CANARY_MIN_LOG2 + 1)
#define RXR_VALID_MAX_THREADS 256
#define RXR_VALID_MAX_REASONS 16
#define RXR_VALID_REASON_LEN 160

/*
 * When a run counts as disturbed. Defaults (rxr_valid_limits_default):
 *   wait_share 0.01: a thread that spent more than 1% of its window
 *     waiting for its CPU measured a capacity up to 1% low, half of the
 *     default sweep's precision goal (2%): beyond it the host, not the
 *     datapath, can move a bound.
 *   ring_cover_s 0 (unknown): the time the receive ring covers at the
 *     run's rate (the packets a queue holds / its rate: its WQEs, or
 *     its CQ if shallower; a DPDK hds ring of N descriptors holds N/2
 *     packets, rx_run.ring_pkts). A busy-polling RX thread kept off
 *     its CPU that long overflows its ring whatever the datapath costs,
 *     so a wait this long is a disturbance even below wait_share. The
 *     total wait is compared (schedstat does not split it into waits), so
 *     this errs on the side of flagging.
 *   wait_floor_s 0.0002: waits below 0.2 ms in total are never flagged;
 *     on a quiet core kernel threads (kworker, ksoftirqd, RCU) take a few
 *     wake-ups of tens of microseconds per second from a pinned thread.
 *   nivcsw_per_s 20: only where schedstat is missing, more involuntary
 *     switches than this per second of window count as preempted (each
 *     costs the thread a time slice of the task that preempted it, up to
 *     a few ms under CFS/EEVDF).
 *   canary_ratio 1.5: the canary slower than 1.5x its calibrated time
 *     means the host ran the whole run slower (the hosts fell to a
 *     third of their speed for seconds), beyond run-to-run jitter (<20%).
 */
struct rxr_valid_limits {
	double wait_share;
	double ring_cover_s;
	double wait_floor_s;
	double nivcsw_per_s;
	double canary_ratio;
};

void rxr_valid_limits_default(struct rxr_valid_limits *lim);

enum rxr_mig_source {
	RXR_MIG_NONE = 0, /* nothing could be read */
	RXR_MIG_PERF,	  /* PERF_COUNT_SW_CPU_MIGRATIONS on the thread */
	RXR_MIG_SCHED,	  /* se.nr_migrations in /proc/thread-self/sched */
	RXR_MIG_GETCPU,	  /* sched_getcpu at both ends: 0 or 1, a lower bound */
};
const char *rxr_mig_source_name(enum rxr_mig_source s);

/*
 * One measured thread's window. Owned by the caller (e.g. inside its
 * worker struct); filled by begin/end on the thread itself, then copied
 * into the run's record with rxr_validity_add_thread.
 */
struct rxr_valid_thread {
	char role[8];
	int core;	       /* the core it is pinned to, -1 none */
	double t_begin, t_end; /* CLOCK_MONOTONIC seconds */
	long nvcsw, nivcsw;    /* switches over the window (after end) */
	uint64_t migrations;
	enum rxr_mig_source mig_source;
	double wait_s;		/* run-queue wait over the window, < 0 unknown */
	/* time it ran over the window (schedstat), when run_known: the rest
	 * of the window, less wait_s, it was neither running nor waiting to
	 * run (hypervisor steal and interrupt time, which the kernel leaves
	 * out of a task's run time, or sleep) */
	double run_s;
	bool run_known;
	int cpu_begin, cpu_end; /* sched_getcpu at both ends */
	bool begun, ended;
	/* private to begin/end */
	int perf_fd;
	long nvcsw0, nivcsw0;
	uint64_t mig0, wait0_ns, run0_ns;
};

/*
 * Start the window of the calling thread: snapshots its switch counts,
 * run-queue wait and migration count, opening a per-thread perf event for
 * migrations where the kernel allows (RXRAY_VALIDITY_NO_PERF=1 in the
 * environment skips it, to exercise the fallbacks). Call on the measured
 * thread, after pinning. 0, or -errno (getrusage failed) with err filled.
 */
int rxr_valid_thread_begin(struct rxr_valid_thread *t, const char *role, int core, char *err,
			   size_t errlen);
/* End the window on the same thread; closes the perf event. 0 or -EINVAL
 * (never begun, or ended already). */
int rxr_valid_thread_end(struct rxr_valid_thread *t);

struct rxr_validity;

/* New record with the given limits (NULL: defaults). 0 or -ENOMEM. */
int rxr_validity_open(const struct rxr_valid_limits *lim, struct rxr_validity **out, char *err,
		      size_t errlen);
void rxr_validity_free(struct rxr_validity *v);

/* Snapshot host steal (/proc/stat) at the start / end of the window;
 * without /proc/stat the host section says "unknown". */
void rxr_validity_host_begin(struct rxr_validity *v);
void rxr_validity_host_end(struct rxr_validity *v);

/* Copy an ended thread window in. 0, -EINVAL (not ended), -ENOSPC. */
int rxr_validity_add_thread(struct rxr_validity *v, const struct rxr_valid_thread *t);
/* Add a reason the run is disturbed (printf-style), e.g. "oversubscribed:
 * 3 threads on 2 cores". 0 or -ENOSPC. */
int rxr_validity_add_reason(struct rxr_validity *v, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/*
 * Time the canary before the run on a buffer of working_set_bytes (rounded
 * up to a power of two in [256 KiB, 64 MiB]). Takes the calibration from
 * RXRAY_CANARY, or calibrates that size once here. Keeps the buffer for
 * canary_after. 0, -ENOMEM, -EINVAL (RXRAY_CANARY malformed, err names it).
 */
int rxr_validity_canary_before(struct rxr_validity *v, size_t working_set_bytes, char *err,
			       size_t errlen);
/* Time it again after the run and release the buffer. 0, -EINVAL (no
 * canary_before). */
int rxr_validity_canary_after(struct rxr_validity *v, char *err, size_t errlen);
/* Give the canary a calibration directly (tests; a caller with its own). */
void rxr_validity_set_calibration(struct rxr_validity *v, double mem_ns, double cpu_ns,
				  const char *source);

/*
 * What the run lost (out_of_buffer + nombuf + app_dropped), once known.
 * Off-CPU time (rxr_valid_thread.run_s) is judged against the thread's
 * wait limit when the run lost packets (or nothing was noted): a thread
 * off its CPU longer than the ring covers can empty the ring. A run that
 * lost nothing is judged against wait_share of the window only: stolen
 * time then shifts its figures, it cannot have caused a loss.
 */
void rxr_validity_note_loss(struct rxr_validity *v, uint64_t lost);

/* Judge the run: true when disturbed. */
bool rxr_validity_disturbed(const struct rxr_validity *v);
/*
 * The "validity" object of the run result (new reference, NULL on ENOMEM):
 *   {"disturbed": bool, "reasons": [..], "limits": {..},
 *    "host": {"source": "/proc/stat", "steal_ms", "steal_share", "cpus",
 *             "window_s"} | {"source": "unknown"},
 *    "canary": {"bytes", "cpu" (pinned to; null: could not pin),
 *               "cpu_before", "cpu_after" (sched_getcpu during each timing),
 *               "calibration": "sweep"|"self"|"given"|"none",
 *               "cal_mem_ms", "cal_cpu_ms", "before_mem_ms", "before_cpu_ms",
 *               "after_mem_ms", "after_cpu_ms", "ratio"} | null,
 *    "threads": [{"role", "core", "window_s", "voluntary_switches",
 *                 "involuntary_switches", "migrations", "migrations_source":
 *                 "perf"|"sched"|"getcpu"|"none", "runqueue_wait_ms" | null,
 *                 "wait_source": "schedstat"|"none", "offcpu_ms" | null,
 *                 "steal_ms" | null,
 *                 "wait_limit_ms", "disturbed", "reasons": [..]}]}
 * Reasons name the thread ("rx on core 3: preempted: waited 4.10 ms for
 * its CPU (1.4% of 300 ms; limit 3.00 ms)"), the canary ("canary 1.72x
 * slower than calibrated after the run (memory)") or the caller's text.
 */
json_t *rxr_validity_json(const struct rxr_validity *v);

/* ---------------------------------------------------------- the canary */

/* Calibrated canary times in ns: mem[c] for a buffer of 2^(c + MIN_LOG2)
 * bytes (0 = not calibrated), cpu for the compute loop. */
struct rxr_canary_cal {
	double mem_ns[RXR_CANARY_CLASSES];
	double cpu_ns;
};

/* The size class of a working set (rounded up, clamped). */
int rxr_canary_class(size_t working_set_bytes);
/*
 * Calibrate every class from min_bytes to max_bytes (clamped) and the
 * compute loop: the best of reps runs each, on the calling thread pinned
 * to the CPU it is on, each size in a buffer of its own as a trial's is
 * (the host's undisturbed speed, measured the way a trial measures; the
 * thread's affinity is restored). 0 or -ENOMEM.
 */
int rxr_canary_calibrate(struct rxr_canary_cal *cal, size_t min_bytes, size_t max_bytes, int reps);
/* Run the canary once on buf (bytes, a multiple of 64): ns for the memory
 * pass and for the compute loop. */
void rxr_canary_time(void *buf, size_t bytes, double *mem_ns, double *cpu_ns);
/* "cpu=<ns>,m18=<ns>,...,m26=<ns>" (calibrated classes only). 0 or -ENOSPC. */
int rxr_canary_cal_format(const struct rxr_canary_cal *cal, char *out, size_t len);
/* Parse the format above. 0, or -EINVAL with the offending part in err. */
int rxr_canary_cal_parse(const char *s, struct rxr_canary_cal *cal, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif /* RXRAY_VALIDITY_H */
