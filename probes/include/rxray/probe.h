/* SPDX-License-Identifier: MIT */
/*
 * rxray probe library: where each cycle of a receive path goes.
 *
 * A measured thread owns one struct rxp_probe. Its hot loop calls
 * rxp_lap(p, STAGE, pkts) at every stage boundary: one clock read, and the
 * cycles since the previous lap are charged to STAGE, with the number of
 * packets that stage handled. Per stage the probe keeps count, packets,
 * cycles, min, max and a log-linear histogram of lap lengths.
 *
 * Modes are chosen at compile time with RXRAY_PROBE_MODE (the CMake option
 * RXRAY_PROBES): 0 = off (every call compiles to nothing), 1 = counters,
 * 2 = full (counters + sampled per-packet laps, idle ones left out, into a
 * bounded ring + NVTX ranges per sampled burst and per lapped stage in it).
 * A translation unit may define RXRAY_PROBE_MODE itself before including
 * this header (the probe_cost bench does, to compare modes in one binary).
 *
 * This header is the hot-path lap API only. Verification by injection
 * (--inject, --inject-ab, --op-delay) is rxray/inject.h; the run result
 * that carries a probe's figures out is rxray/result.h (results/).
 *
 * Error rule (the project's, written out in rxray/util.h): functions that
 * can fail return 0 or a negative errno; constructors are
 * int x_open(..., struct x **out, char *err, size_t errlen). Free
 * functions accept NULL. Usable from C and C++.
 */
#ifndef RXRAY_PROBE_H
#define RXRAY_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef RXRAY_PROBE_MODE
#define RXRAY_PROBE_MODE 1
#endif
#define RXP_MODE_OFF 0
#define RXP_MODE_COUNTERS 1
#define RXP_MODE_FULL 2

/*
 * Stage ids. Extend at the end, never renumber: result files name stages
 * by string (rxp_stage_name), but bench tables and traces use the ids.
 * Adding a stage: an id before RXP_ST_COUNT, its name in probe.c's
 * stage_names, a rxp_lap() where the work ends; analyzers, flame graphs
 * and reports pick it up by name (stage_mask is 32 bits wide).
 */
enum rxp_stage {
	RXP_ST_CQE_POLL = 0,   /* poll completions / rte_eth_rx_burst */
	RXP_ST_BUF_ALLOC,      /* replacement buffer allocation */
	RXP_ST_SGE_SETUP,      /* WQE data segment rewrite (+ lkey lookup) */
	RXP_ST_HDR_WRITE,      /* NIC: header bytes land in host memory */
	RXP_ST_HDR_READ,       /* app/RX: first touch of the header */
	RXP_ST_CHAIN,          /* mbuf chain link / segment bookkeeping */
	RXP_ST_DOORBELL,       /* doorbell record update */
	RXP_ST_HANDOFF,        /* burst hand-off to the app thread */
	RXP_ST_APP,            /* the application's per-packet work */
	RXP_ST_FREE,           /* buffer release / rte_pktmbuf_free_bulk */
	RXP_ST_GPU,            /* GPU-side work */
	RXP_ST_IDLE,           /* nothing to do: empty poll, pacing wait */
	RXP_ST_PAYLOAD_WRITE,  /* NIC: payload bytes (or stamp) placed */
	RXP_ST_CQE_WRITE,      /* NIC: completion entry written */
	RXP_ST_PAYLOAD_DMA,    /* NIC: staged payloads copied into GPU memory */
	RXP_ST_GPU_LAUNCH,     /* CPU: prepare and launch a GPU batch */
	RXP_ST_GPU_WAIT,       /* CPU: wait for a GPU batch to complete */
	RXP_ST_GPU_KERNEL,     /* GPU (thread role "gpu"): the batch's kernel */
	RXP_ST_COUNT
};

/* Stages that are waiting, not work: idle, and the CPU's wait for a GPU
 * batch (the GPU's own time is the gpu thread's). Not in busy cycles. */
static inline int rxp_stage_is_wait(int s)
{
	return s == RXP_ST_IDLE || s == RXP_ST_GPU_WAIT;
}

/* Name of a stage ("cqe_poll", ...) or NULL when out of range. */
const char *rxp_stage_name(enum rxp_stage s);
/* Stage id for a name, or -1 when unknown. */
int rxp_stage_from_name(const char *name);

/* ---------------------------------------------------------------- clock */

#include "rxray/clock.h"

/*
 * Pick the best clock this machine allows, calibrate it against
 * CLOCK_MONOTONIC over calib_ms milliseconds (0 = 100 ms), measure the
 * lap cost, and make it the clock used by every probe in this process.
 * Thread-safe to call once before measured threads start. Returns 0 or
 * -errno. The result is readable through rxp_clock_get().
 * RXRAY_CLOCK=monotonic|tsc|cntvct|pmu in the environment forces a source.
 * On aarch64, cntvct_el0 runs at cntfrq_el0 (hz is that figure unless the
 * calibration disagrees by more than 2%): a coarse clock, often 16-40 ns a
 * tick, so resolution_ns matters there.
 */
int rxp_clock_init(unsigned calib_ms);

/* ------------------------------------------------------------ histogram */

/*
 * Log-linear histogram: values < 16 exact; above, 16 linear sub-buckets
 * per power of two, so a bucket is at most 1/16 of its lower bound wide.
 * Percentiles report the bucket midpoint (relative error <= 1/32), clamped
 * to the recorded min and max.
 */
#define RXP_HIST_SUB_BITS 4
#define RXP_HIST_SUB (1u << RXP_HIST_SUB_BITS)
#define RXP_HIST_MAX_EXP 44 /* values >= 2^44 land in the last bucket */
#define RXP_HIST_BUCKETS (RXP_HIST_SUB + (RXP_HIST_MAX_EXP - RXP_HIST_SUB_BITS + 1) * RXP_HIST_SUB)

static inline unsigned rxp_hist_bucket(uint64_t v)
{
	if (v < RXP_HIST_SUB)
		return (unsigned)v;
	unsigned e = 63u - (unsigned)__builtin_clzll(v);
	if (e > RXP_HIST_MAX_EXP)
		return RXP_HIST_BUCKETS - 1;
	unsigned sub = (unsigned)(v >> (e - RXP_HIST_SUB_BITS)) & (RXP_HIST_SUB - 1);
	return RXP_HIST_SUB + (e - RXP_HIST_SUB_BITS) * RXP_HIST_SUB + sub;
}
/* Lowest value that falls in bucket b, and the bucket's width. */
uint64_t rxp_hist_bucket_low(unsigned b);
uint64_t rxp_hist_bucket_width(unsigned b);

/*
 * One stage's accumulator. Besides count/packets/cycles it keeps the sums
 * a least-squares fit of cycles = a + b x packets over the laps needs
 * (sum packets^2, sum cycles x packets, sum cycles^2 for R^2), so every
 * run yields a fixed cost per lap and a marginal cost per packet, and two
 * accumulators merge by adding (docs/method.md "Probes: laps and stages"). A lap longer than
 * RXP_LAPFIT_MAX_TICKS is a preemption, not work (the first busy lap after
 * a thread is descheduled absorbs the whole wait): it counts in cycles as
 * every lap does, but is left out of the fit and tallied in excl_*.
 */
#define RXP_LAPFIT_MAX_TICKS (1ull << 22)
struct rxp_acc {
	uint64_t count;   /* laps */
	uint64_t packets; /* packets those laps handled */
	uint64_t cycles;  /* sum of lap lengths */
	uint64_t min, max;
	uint64_t sum_pp;  /* sum over laps of packets^2 */
	uint64_t sum_cp;  /* sum over laps of cycles x packets */
	double sum_cc;    /* sum over laps of cycles^2 (double: overflows u64) */
	uint64_t excl_count, excl_packets, excl_cycles; /* laps left out of the fit */
	uint64_t hist[RXP_HIST_BUCKETS];
};

void rxp_acc_reset(struct rxp_acc *a);
static inline void rxp_acc_record(struct rxp_acc *a, uint64_t cyc, uint32_t pkts)
{
	a->count++;
	a->packets += pkts;
	a->cycles += cyc;
	if (__builtin_expect(cyc < RXP_LAPFIT_MAX_TICKS, 1)) {
		a->sum_pp += (uint64_t)pkts * pkts;
		a->sum_cp += cyc * pkts;
		a->sum_cc += (double)(int64_t)cyc * (double)(int64_t)cyc;
	} else {
		a->excl_count++;
		a->excl_packets += pkts;
		a->excl_cycles += cyc;
	}
	if (cyc < a->min)
		a->min = cyc;
	if (cyc > a->max)
		a->max = cyc;
	a->hist[rxp_hist_bucket(cyc)]++;
}
/* dst += src (counts, sums, min/max, histograms). */
void rxp_acc_merge(struct rxp_acc *dst, const struct rxp_acc *src);
/* Value at quantile q in [0,1] (0 when empty). */
uint64_t rxp_acc_percentile(const struct rxp_acc *a, double q);

/*
 * The lap sums of one stage in a portable form (doubles: they travel
 * through the run result and add across trials).
 */
struct rxp_lapsums {
	double n;   /* laps */
	double sx;  /* sum packets */
	double sy;  /* sum cycles */
	double sxx; /* sum packets^2 */
	double sxy; /* sum cycles x packets */
	double syy; /* sum cycles^2 */
};

/* How a stage's cost per packet is modelled. */
enum rxp_lapfit_basis {
	RXP_LAPFIT_NONE = 0,   /* no laps with packets: nothing to say */
	RXP_LAPFIT_LINEAR,     /* a + b x packets fitted over laps with spread */
	RXP_LAPFIT_PER_PACKET, /* no packet-count spread (laps of a fixed count,
			     * e.g. a refill or hand-off batch): b = cycles /
			     * packets, a = 0 */
};

struct rxp_lapfit {
	enum rxp_lapfit_basis basis;
	double a;   /* fixed cycles per lap */
	double b;   /* cycles per packet */
	double r2;  /* coefficient of determination (1 when exact; 0 when
		     * there is nothing to explain or basis is per-packet) */
	double mean_pkts; /* mean packets per lap */
};

/* Lap sums of an accumulator (the laps the fit keeps). */
void rxp_acc_sums(const struct rxp_acc *a, struct rxp_lapsums *out);
/* dst += src. */
void rxp_lapsums_add(struct rxp_lapsums *dst, const struct rxp_lapsums *src);
/*
 * Least squares of cycles = a + b x packets over the laps summarised in s.
 * Laps whose packet counts vary by less than 10% of their mean (relative
 * standard deviation) have no spread to fit: basis PER_PACKET. Laps with
 * no packets at all: basis NONE. Never fails; f is always filled.
 */
void rxp_lapsums_fit(const struct rxp_lapsums *s, struct rxp_lapfit *f);

/* ---------------------------------------------------------------- probe */

/* One sampled per-packet lap (full mode), for traces. */
struct rxp_sample {
	uint64_t start;  /* clock ticks at the start of the stage */
	uint32_t cycles; /* stage length (saturated) */
	uint16_t stage;
	uint16_t thread; /* rxp_probe.thread_id */
	uint64_t seq;    /* sampled packet/burst number */
};

struct rxp_probe {
	/* hot: written every lap */
	uint64_t last;          /* clock at the previous lap */
	uint64_t busy_packets;  /* packets this thread handled */
	uint64_t bursts;	/* bursts ended, with packets or none */
	uint64_t sample_seq;    /* full mode: bursts seen */
	uint32_t sample_mask;   /* full mode: sample 1 in (mask+1) */
	uint32_t sampling;      /* full mode: current burst is sampled */
	uint64_t inject[RXP_ST_COUNT]; /* ticks to spin per packet inside a stage */
	int64_t inject_debt[RXP_ST_COUNT]; /* ticks spun beyond (+) or short of
					    * (-) inject x packets so far */
	struct rxp_acc st[RXP_ST_COUNT];

	/* cold */
	char role[8];           /* "rx", "app", "nic" */
	int core;               /* pinned core or -1 */
	uint16_t thread_id;
	struct rxp_sample *ring;/* full mode: sampled laps */
	uint32_t ring_size;     /* power of two */
	uint64_t ring_head;     /* records written (mod ring_size) */
	uint64_t ring_overflow; /* records that overwrote older ones */
	uint64_t ring_readers;  /* reserved */
	struct rxp_acc *ab;     /* inject A/B, or NULL: [s] the injected laps of
				 * stage s, [RXP_ST_COUNT + s] its plain laps
				 * with packets */
	struct rxp_ab_pairs *abp; /* inject A/B: per stage, the paired
				   * differences (allocated with ab); [s]
				   * every lap of s, [RXP_ST_COUNT + s] an
				   * observed s's laps in the burst of the
				   * injected (or gated) stage's lap whose
				   * turn they count to, after it: the
				   * spin's own burst, not the ones after;
				   * an injected s's laps without their spin
				   * (its own work) */
	uint64_t ab_inj_burst;	  /* inject A/B: bursts when the injected
				   * or gated stage last lapped (unchanged:
				   * no burst has ended since; an empty one
				   * too, whose refill may spin: verbs reposts
				   * after an empty poll) */
	uint8_t ab_phase;	  /* inject A/B: the turn of the injected
				   * stage's last lap (RXP_AB_PERIOD; observed
				   * stages' laps count to its half) */
	uint8_t gate_turn;	  /* the turn the operation delays are in now
				   * (the gate's next lap; observed laps count
				   * to it), before the swap */
	bool gate_swap;		  /* the gate's period has its halves swapped */
	uint64_t ab_rng;	  /* inject A/B: xorshift state for the swaps */
	bool op_gate;		  /* a stage is the operation delays' gate */
	double ab_trim;		  /* the op gate's pairs' trim window,
				   * cycles/packet (rxp_probe_set_op_gate) */
	uint32_t ab_period;	  /* inject A/B: periods begun (a lap's pair
				   * partner is in the same one) */
	uint64_t ab_waits_seen;	  /* inject A/B: wait laps (idle, gpu_wait)
				   * counted at the last lap with packets */
	bool ab_after_wait;	  /* that lap followed a wait lap (a pair's
				   * laps must agree: rxp_probe_ab_pair) */
	uint64_t inject_spun[RXP_ST_COUNT];	 /* inject A/B: ticks stage s's
						  * spins ran, from where its
						  * laps would have ended,
						  * counted with the halves'
						  * bookkeeping (out of every
						  * lap, so none of it is
						  * charged to the next stage) */
	uint64_t inject_spun_pkts[RXP_ST_COUNT]; /* packets of those laps
						  * (a lap repaying credit
						  * spins 0) */
	uint64_t inject_dropped[RXP_ST_COUNT];	 /* ticks spins ran beyond
						  * their targets by more than
						  * RXP_INJECT_STRETCH_MAX per
						  * packet, not repaid: what
						  * the stage grew beyond K x
						  * packets */
	uint64_t inject_drops[RXP_ST_COUNT];	 /* the spins (laps) */
} __attribute__((aligned(64)));

/*
 * Allocate a probe for a thread with the given role ("rx", "app", "nic")
 * pinned to core (-1 = unpinned). sample_shift k: in full mode, sample one
 * burst in 2^k into a ring of ring_size records (rounded up to a power of
 * two; 0 = 4096 in full builds, no ring otherwise). Returns 0 and the probe
 * in *out (the caller owns it: rxp_probe_free), or -EINVAL (role NULL or
 * longer than 7 bytes, sample_shift > 31) / -ENOMEM with *out NULL and one
 * line in err (err may be NULL).
 */
int rxp_probe_open(const char *role, int core, unsigned sample_shift, uint32_t ring_size,
		   struct rxp_probe **out, char *err, size_t errlen);
void rxp_probe_free(struct rxp_probe *p);
/* Zero the accumulators and restart the lap clock (keeps injection). */
void rxp_probe_reset(struct rxp_probe *p);

/*
 * The verification hooks a lap calls (rxray/inject.h documents them:
 * --inject, --inject-ab, --op-delay). A lap on a stage with inject[s] set
 * takes rxp_lap_injected (out of line, in probes/inject.c); with none set
 * it tests one word and calls nothing.
 *
 * RXP_INJECT_PAY marks a wait stage (idle, gpu_wait) of a thread whose
 * operations are delayed: its laps pay what the operations in them owe
 * (rxp_op_delay), and do nothing else (never observed, no spin of their
 * own). An empty poll of the mlx5 PMD allocates its replacement buffer and
 * frees it again, so idle laps owe delays too. Values below it are
 * injections in ticks.
 */
#define RXP_INJECT_PAY (UINT64_MAX - 2)
/* Ticks the calling thread's operations owe (rxp_op_delay). */
extern __thread uint64_t rxp_op_owed; /* __thread: the header is also C++ (nvcc) */
/* Spin what the calling thread owes from t (a lap's clock read), or
 * nothing while a gate has it disarmed (what was owed is forgotten either
 * way); returns the clock after. What a spin ran over its target is carried to the
 * thread's next payment (past RXP_INJECT_STRETCH_MAX: dropped, a
 * preemption); a shortfall likewise, bounded by RXP_INJECT_DEBT_MAX. */
uint64_t rxp_op_pay(uint64_t t);
/* The injected path of rxp_lap, A/B or not: the lap of pkts (> 0) packets
 * on stage s, read at t, whose inject[s] is set and not RXP_INJECT_PAY.
 * Compiled with the probe library's RXRAY_PROBE_MODE. */
void rxp_lap_injected(struct rxp_probe *p, enum rxp_stage s, uint64_t t, uint32_t pkts);

/* Sum of cycles over every stage except idle. */
uint64_t rxp_probe_busy_cycles(const struct rxp_probe *p);
/* Merge src's accumulators into dst (dst's role/core unchanged). */
void rxp_probe_merge(struct rxp_probe *dst, const struct rxp_probe *src);
/* Copy up to max sampled laps (oldest first) into out; returns count. */
size_t rxp_probe_samples(const struct rxp_probe *p, struct rxp_sample *out, size_t max);

/*
 * NVTX (probes/nvtx.c; no-ops in a build without the NVTX headers). The
 * ranges live in domain "rxray"; with no tool loaded (NVTX_INJECTION64_PATH
 * unset) each call is a branch on a null pointer.
 * rxp_nvtx_init registers the domain and the stage strings (idempotent,
 * thread-safe; every other call runs it on first use).
 * rxp_nvtx_push/pop: a range named by a stage on the calling thread.
 * rxp_nvtx_range_push/pop: a range of any name (the run, a phase), in
 * every probe mode. rxp_nvtx_range_start/end: a range that may end on
 * another call or thread (a GPU batch from launch to retire); start
 * returns its id (0 when no tool listens), end accepts 0.
 * rxp_nvtx_burst_begin/lap/burst_end/stage_begin: full mode's sampled
 * bursts (called from rxp_burst_begin, rxp_lap, rxp_burst_end and
 * rxp_stage_begin below, never in counters mode): a range "burst"
 * (payload: the burst number) holding one range per lapped stage, pushed
 * where the engine announces the stage (rxp_stage_begin) and popped at the
 * lap that closes it. The burst's range opens with its first stage range,
 * so a burst that lapped only idle (an empty poll) shows nothing. Where no
 * stage was announced, the range is guessed at the previous lap from what
 * followed that stage last time on this thread (a first-order chain, only
 * after stages never followed by an announcement, never after idle; a
 * transition seen to vary is guessed no more).
 */
void rxp_nvtx_init(void);
void rxp_nvtx_push(enum rxp_stage s);
void rxp_nvtx_pop(void);
void rxp_nvtx_range_push(const char *name);
void rxp_nvtx_range_pop(void);
uint64_t rxp_nvtx_range_start(const char *name);
void rxp_nvtx_range_end(uint64_t id);
struct rxp_probe;
void rxp_nvtx_burst_begin(const struct rxp_probe *p);
void rxp_nvtx_lap(const struct rxp_probe *p, enum rxp_stage s);
void rxp_nvtx_burst_end(const struct rxp_probe *p);
void rxp_nvtx_stage_begin(const struct rxp_probe *p, enum rxp_stage s);

/* Append one sampled lap to p's ring (full mode's rxp_lap calls it). */
void rxp_sample_record(struct rxp_probe *p, enum rxp_stage s, uint64_t start, uint64_t cyc);

/* Start (or restart) the lap clock, e.g. at the top of the hot loop. */
static inline void rxp_lap_start(struct rxp_probe *p)
{
#if RXRAY_PROBE_MODE != RXP_MODE_OFF
	/* operations before the first lap (a queue's set-up) are no lap's */
	rxp_op_owed = 0;
	p->last = rxp_now();
#else
	(void)p;
#endif
}

static inline void rxp_lap_close(struct rxp_probe *p, enum rxp_stage s, uint64_t t,
				 uint32_t pkts);

/*
 * Close stage s: charge the ticks since the previous lap to s, attributing
 * pkts packets to it. One clock read. When an injection is set for s, the
 * lap spins inject x pkts ticks more inside s (rxp_inject_run).
 */
static inline void rxp_lap(struct rxp_probe *p, enum rxp_stage s, uint32_t pkts)
{
#if RXRAY_PROBE_MODE != RXP_MODE_OFF
	uint64_t t = rxp_now();
	if (__builtin_expect(p->inject[s] != 0, 0)) {
		if (pkts && p->inject[s] != RXP_INJECT_PAY) {
			rxp_lap_injected(p, s, t, pkts);
			return;
		}
		/* a lap without packets, or a wait, pays its operations too */
		if (rxp_op_owed)
			t = rxp_op_pay(t);
	}
	rxp_lap_close(p, s, t, pkts);
#else
	(void)p;
	(void)s;
	(void)pkts;
#endif
}

/* Charge t - p->last to s (the tail of every lap). */
static inline void rxp_lap_close(struct rxp_probe *p, enum rxp_stage s, uint64_t t,
				 uint32_t pkts)
{
#if RXRAY_PROBE_MODE != RXP_MODE_OFF
	uint64_t d = t - p->last;
#if RXRAY_PROBE_MODE == RXP_MODE_FULL
	if (p->sampling) {
		/* idle laps are not kept: at light load they would crowd the
		 * work out of the ring, and a timeline shows them as gaps */
		if (s != RXP_ST_IDLE)
			rxp_sample_record(p, s, p->last, d);
		rxp_nvtx_lap(p, s);
	}
#endif
	p->last = t;
	rxp_acc_record(&p->st[s], d, pkts);
#else
	(void)p;
	(void)s;
	(void)t;
	(void)pkts;
#endif
}

/*
 * Announce that stage s begins now: the next rxp_lap on p closes it and
 * must name s. Engines call it where the next stage is known, right after
 * the lap before it or where the code decides which stage comes (a refill
 * that may not be needed: inside, once it is). In full mode a sampled
 * burst's range for s opens here and closes at that lap; in the off and
 * counters modes it is nothing at all: the macro does not evaluate its
 * arguments (sizeof), so the hot paths of those builds are unchanged.
 * Both arguments may be evaluated twice: pass plain expressions.
 *
 * Rules, so that the ranges are the laps (tests/gpu/test_nvtx_run.c):
 *  - s == RXP_ST_IDLE announces a wait: no range (idle never has one).
 *  - A poll announces cqe_poll when it finds its first completion, not
 *    when it starts: it cannot know it will be empty, and a range opened
 *    before it knew would be a range per empty poll (millions a second on
 *    an idle queue, more than an NVTX listener keeps). So an empty poll
 *    opens nothing, and the first poll's
 *    range (and its burst's) leaves out the load that found the first
 *    completion. A poll inside a burst that already did work, whose empty
 *    result is lapped cqe_poll rather than idle, announces it at its start.
 *  - Where the code learns the stage only after its work started (a real
 *    PMD's rte_eth_rx_burst), the announcement comes then: the range is
 *    short, but it is there and named right.
 *  - Where the stage depends on a branch, the announcement names the
 *    branch's stage (a GPU launch that must first wait for a free slot
 *    announces gpu_wait, then gpu_launch after that lap).
 *  - Announcing another stage while one is open closes that one there, a
 *    range with no lap of its own: a mistake, which the NVTX test catches.
 */
#if RXRAY_PROBE_MODE == RXP_MODE_FULL
#define rxp_stage_begin(p, s) ((p)->sampling ? rxp_nvtx_stage_begin((p), (s)) : (void)0)
#else
#define rxp_stage_begin(p, s) ((void)sizeof((p)->sampling + (s)))
#endif

/*
 * Burst brackets: count packets the thread handled and, in full mode,
 * decide whether this burst is sampled and open/close an NVTX range.
 */
static inline void rxp_burst_begin(struct rxp_probe *p)
{
#if RXRAY_PROBE_MODE == RXP_MODE_FULL
	p->sampling = (p->sample_seq++ & p->sample_mask) == 0;
	if (p->sampling)
		rxp_nvtx_burst_begin(p);
#else
	(void)p;
#endif
}

static inline void rxp_burst_end(struct rxp_probe *p, uint32_t pkts)
{
#if RXRAY_PROBE_MODE != RXP_MODE_OFF
	p->busy_packets += pkts;
	p->bursts++;
#if RXRAY_PROBE_MODE == RXP_MODE_FULL
	if (p->sampling)
		rxp_nvtx_burst_end(p);
	p->sampling = 0;
#endif
#else
	(void)p;
	(void)pkts;
#endif
}

/*
 * Lap cost self-calibration: median ticks of one rxp_lap in this build's
 * mode, measured over `iters` laps (0 = 100000). Also stored in the clock.
 */
double rxp_probe_measure_lap_cost(unsigned iters);


#ifdef __cplusplus
}
#endif
#endif /* RXRAY_PROBE_H */
