/* SPDX-License-Identifier: MIT */
/*
 * rxray probe library: where each cycle of a receive path goes.
 *
 * A measured thread owns one struct rxr_probe. Its hot loop calls
 * rxr_lap(p, STAGE, pkts) at every stage boundary: one clock read, and the
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
#define RXR_MODE_OFF 0
#define RXR_MODE_COUNTERS 1
#define RXR_MODE_FULL 2

/*
 * Stage ids. Extend at the end, never renumber: result files name stages
 * by string (rxr_stage_name), but bench tables and traces use the ids.
 * Adding a stage: an id before RXR_ST_COUNT, its name in probe.c's
 * stage_names, a rxr_lap() where the work ends; analyzers, flame graphs
 * and reports pick it up by name (stage_mask is 32 bits wide).
 */
enum rxr_stage {
	RXR_ST_CQE_POLL = 0,   /* poll completions / rte_eth_rx_burst */
	RXR_ST_BUF_ALLOC,      /* replacement buffer allocation */
	RXR_ST_SGE_SETUP,      /* WQE data segment rewrite (+ lkey lookup) */
	RXR_ST_HDR_WRITE,      /* NIC: header bytes land in host memory */
	RXR_ST_HDR_READ,       /* app/RX: first touch of the header */
	RXR_ST_CHAIN,          /* mbuf chain link / segment bookkeeping */
	RXR_ST_DOORBELL,       /* doorbell record update */
	RXR_ST_HANDOFF,        /* burst hand-off to the app thread */
	RXR_ST_APP,            /* the application's per-packet work */
	RXR_ST_FREE,           /* buffer release / rte_pktmbuf_free_bulk */
	RXR_ST_GPU,            /* GPU-side work */
	RXR_ST_IDLE,           /* nothing to do: empty poll, pacing wait */
	RXR_ST_PAYLOAD_WRITE,  /* NIC: payload bytes (or stamp) placed */
	RXR_ST_CQE_WRITE,      /* NIC: completion entry written */
	RXR_ST_PAYLOAD_DMA,    /* NIC: staged payloads copied into GPU memory */
	RXR_ST_GPU_LAUNCH,     /* CPU: prepare and launch a GPU batch */
	RXR_ST_GPU_WAIT,       /* CPU: wait for a GPU batch to complete */
	RXR_ST_GPU_KERNEL,     /* GPU (thread role "gpu"): the batch's kernel */
	RXR_ST_COUNT
};

/* Stages that are waiting, not work: idle, and the CPU's wait for a GPU
 * batch (the GPU's own time is the gpu thread's). Not in busy cycles. */
static inline int rxr_stage_is_wait(int s)
{
	return s == RXR_ST_IDLE || s == RXR_ST_GPU_WAIT;
}

/* Name of a stage ("cqe_poll", ...) or NULL when out of range. */
const char *rxr_stage_name(enum rxr_stage s);
/* Stage id for a name, or -1 when unknown. */
int rxr_stage_from_name(const char *name);

/* ---------------------------------------------------------------- clock */

enum rxr_clock_source {
	RXR_CLOCK_TSC = 0,      /* x86 rdtsc (invariant TSC required) */
	RXR_CLOCK_CNTVCT,       /* aarch64 generic timer: coarse, says so */
	RXR_CLOCK_PMU,          /* perf_event mmap page user read (aarch64) */
	RXR_CLOCK_MONOTONIC,    /* clock_gettime: last resort, ns units */
};

struct rxr_clock {
	enum rxr_clock_source source;
	double hz;              /* ticks per second, calibrated */
	double resolution_ns;   /* smallest observable step */
	bool invariant;         /* TSC: constant + nonstop; else true */
	double lap_cost_cycles; /* median cost of one lap, measured */
	char note[96];          /* e.g. "cntvct_el0 at 25 MHz: coarse" */
};

/*
 * Pick the best clock this machine allows, calibrate it against
 * CLOCK_MONOTONIC over calib_ms milliseconds (0 = 100 ms), measure the
 * lap cost, and make it the clock used by every probe in this process.
 * Thread-safe to call once before measured threads start. Returns 0 or
 * -errno. The result is readable through rxr_clock_get().
 * RXRAY_CLOCK=monotonic|tsc|cntvct|pmu in the environment forces a source.
 * On aarch64, cntvct_el0 runs at cntfrq_el0 (hz is that figure unless the
 * calibration disagrees by more than 2%): a coarse clock, often 16-40 ns a
 * tick, so resolution_ns matters there.
 */
int rxr_clock_init(unsigned calib_ms);
/* The active clock: clock_gettime at 1 GHz with lap_cost_cycles 0 until
 * rxr_clock_init succeeds (callers may test lap_cost_cycles == 0). */
const struct rxr_clock *rxr_clock_get(void);
/*
 * Why the active source was chosen, and why a better one was not: e.g.
 * "PMU cycle counter not readable from user space (kernel.perf_user_access=0):
 * cntvct_el0 instead". A static string, valid for the process's life; a
 * placeholder before rxr_clock_init. Never NULL.
 */
const char *rxr_clock_why(void);
/* Name of a clock source ("tsc", "cntvct", "pmu", "monotonic"). */
const char *rxr_clock_source_name(enum rxr_clock_source s);
/* Calibrate a specific source over ms milliseconds; hz out. 0 or -errno. */
int rxr_clock_calibrate(enum rxr_clock_source s, unsigned ms, double *hz);
/* True when this x86 CPU reports constant and nonstop TSC. */
bool rxr_clock_tsc_invariant(void);

/* Slow-path read of the active clock (function pointer behind it). */
uint64_t rxr_clock_read(void);
/* Ticks -> nanoseconds with the calibrated frequency. */
double rxr_clock_to_ns(uint64_t ticks);

extern uint64_t (*rxr_clock_read_fn)(void);
extern int rxr_clock_native;

/* Inline fast read: the native counter when it is the active source. */
static inline uint64_t rxr_now(void)
{
#if defined(__x86_64__) || defined(__i386__)
	if (__builtin_expect(rxr_clock_native, 1)) {
		uint32_t lo, hi;
		__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
		return ((uint64_t)hi << 32) | lo;
	}
#elif defined(__aarch64__)
	if (__builtin_expect(rxr_clock_native, 1)) {
		uint64_t v;
		__asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(v));
		return v;
	}
#endif
	return rxr_clock_read_fn();
}

/* Spin until `ticks` clock ticks have passed since `from`; returns now. */
static inline uint64_t rxr_spin_until(uint64_t from, uint64_t ticks)
{
	uint64_t t;
	do {
		t = rxr_now();
	} while (t - from < ticks);
	return t;
}

/* ------------------------------------------------------------ histogram */

/*
 * Log-linear histogram: values < 16 exact; above, 16 linear sub-buckets
 * per power of two, so a bucket is at most 1/16 of its lower bound wide.
 * Percentiles report the bucket midpoint (relative error <= 1/32), clamped
 * to the recorded min and max.
 */
#define RXR_HIST_SUB_BITS 4
#define RXR_HIST_SUB (1u << RXR_HIST_SUB_BITS)
#define RXR_HIST_MAX_EXP 44 /* values >= 2^44 land in the last bucket */
#define RXR_HIST_BUCKETS (RXR_HIST_SUB + (RXR_HIST_MAX_EXP - RXR_HIST_SUB_BITS + 1) * RXR_HIST_SUB)

static inline unsigned rxr_hist_bucket(uint64_t v)
{
	if (v < RXR_HIST_SUB)
		return (unsigned)v;
	unsigned e = 63u - (unsigned)__builtin_clzll(v);
	if (e > RXR_HIST_MAX_EXP)
		return RXR_HIST_BUCKETS - 1;
	unsigned sub = (unsigned)(v >> (e - RXR_HIST_SUB_BITS)) & (RXR_HIST_SUB - 1);
	return RXR_HIST_SUB + (e - RXR_HIST_SUB_BITS) * RXR_HIST_SUB + sub;
}
/* Lowest value that falls in bucket b, and the bucket's width. */
uint64_t rxr_hist_bucket_low(unsigned b);
uint64_t rxr_hist_bucket_width(unsigned b);

/*
 * One stage's accumulator. Besides count/packets/cycles it keeps the sums
 * a least-squares fit of cycles = a + b x packets over the laps needs
 * (sum packets^2, sum cycles x packets, sum cycles^2 for R^2), so every
 * run yields a fixed cost per lap and a marginal cost per packet, and two
 * accumulators merge by adding (DESIGN.md "Probes"). A lap longer than
 * RXR_LAPFIT_MAX_TICKS is a preemption, not work (the first busy lap after
 * a thread is descheduled absorbs the whole wait): it counts in cycles as
 * every lap does, but is left out of the fit and tallied in excl_*.
 */
#define RXR_LAPFIT_MAX_TICKS (1ull << 22)
struct rxr_acc {
	uint64_t count;   /* laps */
	uint64_t packets; /* packets those laps handled */
	uint64_t cycles;  /* sum of lap lengths */
	uint64_t min, max;
	uint64_t sum_pp;  /* sum over laps of packets^2 */
	uint64_t sum_cp;  /* sum over laps of cycles x packets */
	double sum_cc;    /* sum over laps of cycles^2 (double: overflows u64) */
	uint64_t excl_count, excl_packets, excl_cycles; /* laps left out of the fit */
	uint64_t hist[RXR_HIST_BUCKETS];
};

void rxr_acc_reset(struct rxr_acc *a);
static inline void rxr_acc_record(struct rxr_acc *a, uint64_t cyc, uint32_t pkts)
{
	a->count++;
	a->packets += pkts;
	a->cycles += cyc;
	if (__builtin_expect(cyc < RXR_LAPFIT_MAX_TICKS, 1)) {
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
	a->hist[rxr_hist_bucket(cyc)]++;
}
/* dst += src (counts, sums, min/max, histograms). */
void rxr_acc_merge(struct rxr_acc *dst, const struct rxr_acc *src);
/* Value at quantile q in [0,1] (0 when empty). */
uint64_t rxr_acc_percentile(const struct rxr_acc *a, double q);

/*
 * The lap sums of one stage in a portable form (doubles: they travel
 * through the run result and add across trials).
 */
struct rxr_lapsums {
	double n;   /* laps */
	double sx;  /* sum packets */
	double sy;  /* sum cycles */
	double sxx; /* sum packets^2 */
	double sxy; /* sum cycles x packets */
	double syy; /* sum cycles^2 */
};

/* How a stage's cost per packet is modelled. */
enum rxr_lapfit_basis {
	RXR_LAPFIT_NONE = 0,   /* no laps with packets: nothing to say */
	RXR_LAPFIT_LINEAR,     /* a + b x packets fitted over laps with spread */
	RXR_LAPFIT_PER_PACKET, /* no packet-count spread (laps of a fixed count,
			     * e.g. a refill or hand-off batch): b = cycles /
			     * packets, a = 0 */
};

struct rxr_lapfit {
	enum rxr_lapfit_basis basis;
	double a;   /* fixed cycles per lap */
	double b;   /* cycles per packet */
	double r2;  /* coefficient of determination (1 when exact; 0 when
		     * there is nothing to explain or basis is per-packet) */
	double mean_pkts; /* mean packets per lap */
};

/* Lap sums of an accumulator (the laps the fit keeps). */
void rxr_acc_sums(const struct rxr_acc *a, struct rxr_lapsums *out);
/* dst += src. */
void rxr_lapsums_add(struct rxr_lapsums *dst, const struct rxr_lapsums *src);
/*
 * Least squares of cycles = a + b x packets over the laps summarised in s.
 * Laps whose packet counts vary by less than 10% of their mean (relative
 * standard deviation) have no spread to fit: basis PER_PACKET. Laps with
 * no packets at all: basis NONE. Never fails; f is always filled.
 */
void rxr_lapsums_fit(const struct rxr_lapsums *s, struct rxr_lapfit *f);

/* ---------------------------------------------------------------- probe */

/* One sampled per-packet lap (full mode), for traces. */
struct rxr_sample {
	uint64_t start;  /* clock ticks at the start of the stage */
	uint32_t cycles; /* stage length (saturated) */
	uint16_t stage;
	uint16_t thread; /* rxr_probe.thread_id */
	uint64_t seq;    /* sampled packet/burst number */
};

struct rxr_probe {
	/* hot: written every lap */
	uint64_t last;          /* clock at the previous lap */
	uint64_t busy_packets;  /* packets this thread handled */
	uint64_t bursts;	/* bursts ended, with packets or none */
	uint64_t sample_seq;    /* full mode: bursts seen */
	uint32_t sample_mask;   /* full mode: sample 1 in (mask+1) */
	uint32_t sampling;      /* full mode: current burst is sampled */
	uint64_t inject[RXR_ST_COUNT]; /* ticks to spin per packet inside a stage */
	int64_t inject_debt[RXR_ST_COUNT]; /* ticks spun beyond (+) or short of
					    * (-) inject x packets so far */
	struct rxr_acc st[RXR_ST_COUNT];

	/* cold */
	char role[8];           /* "rx", "app", "nic" */
	int core;               /* pinned core or -1 */
	uint16_t thread_id;
	struct rxr_sample *ring;/* full mode: sampled laps */
	uint32_t ring_size;     /* power of two */
	uint64_t ring_head;     /* records written (mod ring_size) */
	uint64_t ring_overflow; /* records that overwrote older ones */
	uint64_t ring_readers;  /* reserved */
	struct rxr_acc *ab;     /* inject A/B, or NULL: [s] the injected laps of
				 * stage s, [RXR_ST_COUNT + s] its plain laps
				 * with packets */
	struct rxr_ab_pairs *abp; /* inject A/B: per stage, the paired
				   * differences (allocated with ab); [s]
				   * every lap of s, [RXR_ST_COUNT + s] an
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
				   * stage's last lap (RXR_AB_PERIOD; observed
				   * stages' laps count to its half) */
	uint8_t gate_turn;	  /* the turn the operation delays are in now
				   * (the gate's next lap; observed laps count
				   * to it), before the swap */
	bool gate_swap;		  /* the gate's period has its halves swapped */
	uint64_t ab_rng;	  /* inject A/B: xorshift state for the swaps */
	bool op_gate;		  /* a stage is the operation delays' gate */
	double ab_trim;		  /* the op gate's pairs' trim window,
				   * cycles/packet (rxr_probe_set_op_gate) */
	uint32_t ab_period;	  /* inject A/B: periods begun (a lap's pair
				   * partner is in the same one) */
	uint64_t ab_waits_seen;	  /* inject A/B: wait laps (idle, gpu_wait)
				   * counted at the last lap with packets */
	bool ab_after_wait;	  /* that lap followed a wait lap (a pair's
				   * laps must agree: rxr_probe_ab_pair) */
	uint64_t inject_spun[RXR_ST_COUNT];	 /* inject A/B: ticks stage s's
						  * spins ran, from where its
						  * laps would have ended,
						  * counted with the halves'
						  * bookkeeping (out of every
						  * lap: counted right after the
						  * spin, a sanitizer build
						  * charged ~10 cycles of it to
						  * the next stage) */
	uint64_t inject_spun_pkts[RXR_ST_COUNT]; /* packets of those laps
						  * (a lap repaying credit
						  * spins 0) */
	uint64_t inject_dropped[RXR_ST_COUNT];	 /* ticks spins ran beyond
						  * their targets by more than
						  * RXR_INJECT_STRETCH_MAX per
						  * packet, not repaid: what
						  * the stage grew beyond K x
						  * packets */
	uint64_t inject_drops[RXR_ST_COUNT];	 /* the spins (laps) */
} __attribute__((aligned(64)));

/*
 * Inject A/B turns: an injected (or gate) stage's laps with packets take
 * RXR_AB_PERIOD turns: one of the first and the third is injected
 * (RXR_AB_INJ), the other is the plain half (RXR_AB_PLAIN), which one drawn
 * at random each period (rxr_ab_turn); the second and fourth are shadows,
 * in neither half. A lap's cost depends on the lap before it (a spin lets the
 * NIC's writes settle and the next lap finds them cheaper or dearer), so a
 * plain lap right after an injected one would carry the spin's aftermath
 * and an injected lap after a plain one would not: their difference was K
 * minus that aftermath (on the 16-core host 0.72-1.29 x K at light load,
 * its sign changing between processes). With the shadows, both halves
 * follow a plain lap. Observed stages count by the same turns. (Longer
 * periods, the plain lap 4 or 8 laps after the injected one, were tried
 * there: light-load laps at K = 50 added 2-15 cycles/packet too much at
 * every period alike, so a longer aftermath is not what is left.)
 */
#define RXR_AB_PERIOD 4
#define RXR_AB_INJ 0
#define RXR_AB_PLAIN 2
/*
 * Which half comes first in a period is drawn at random, per period: the
 * turn of a lap at place raw (0-3) of its period, with the halves swapped
 * or not. A fixed order makes "the first half" and "the injected half" one
 * thing, so whatever differs between a period's first and third lap for
 * its own reasons (the pairing's bookkeeping after the second one, a
 * thread's state that follows the period) reads as the injection. On the
 * 16-core host, A/A runs (RXR_INJECT_NULL: nothing spun) with the
 * injected turn always first read the NIC's cqe_write beside hdr_write=0
 * at +25 to +33 cycles/packet, dpdk rx sge_setup beside doorbell=0 at +8
 * to +11; drawn, -2 to +1 and -1 to +1.
 */
static inline unsigned rxr_ab_turn(unsigned raw, bool swap)
{
	return swap && !(raw & 1) ? raw ^ RXR_AB_PLAIN : raw;
}
static inline bool rxr_ab_coin(uint64_t *rng)
{
	uint64_t x = *rng;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*rng = x;
	return x >> 63;
}

/*
 * Inject A/B pairs: each injected lap of a stage is paired with the plain
 * lap of its period when both hold the same number of packets, and the
 * difference of their cycles per packet goes into a histogram of 1-cycle
 * bins centred on the whole numbers from RXR_AB_LO (rounded to the
 * nearest, ties to even; clamped at both ends). The two laps of a pair are
 * neighbours in time, so their difference is distributed symmetrically
 * around what the injection adds, and a lap that was preempted (a mean's
 * ruin on a shared host) lands far out in a tail. Equal packet counts
 * matter at light load: a spin lets packets gather, so the plain lap after
 * an injected one tends to hold more, and a stage's fixed cost per lap
 * spread over more packets made it look cheaper (a stage with a per-lap
 * cost a, injected laps of 1 packet and plain laps of 2: a / 2 too much
 * added). A plain lap of another count is left unpaired (counted).
 * An observed stage may lap several times in a turn, or in none: its
 * period's first lap in the injected turn pairs with its first in the
 * plain turn of the same period, so both sit at the same place after the
 * injected stage's lap. (Pairing the injected turn's last lap with the
 * plain turn's first compared a lap before an empty poll's refill with
 * one after it: on the 16-core host cqe_poll read +96 to +148 cycles
 * where its halves' means differed by -2 to +3.)
 * The two laps must also agree on whether a wait lap (idle, gpu_wait)
 * came just before them; a pair that does not is left unpaired (counted
 * apart too). At light load a spin late in one burst lets the next packet
 * arrive meanwhile, so the next burst's first lap follows no wait and
 * finds the completion written, where its plain partner ends a wait and
 * meets the NIC at work on the line: on the 16-core host dpdk rx cqe_poll
 * read -32 to -105 cycles/packet after a spin of 150-500 in a later stage.
 * Work charged to the wrong stage moves every pair, matched or not.
 */
#define RXR_AB_LO (-1024)
#define RXR_AB_BINS 4096
struct rxr_ab_pairs {
	double pend;		/* the period's first lap's cycles per
				 * packet (of either half: pend_inj) */
	uint32_t pend_pkts;	/* and its packets */
	uint32_t pend_period;	/* and its period (rxr_probe.ab_period) */
	bool pend_wait;		/* and whether a wait lap came just before it */
	uint8_t turn;		/* an injected stage: its next lap's turn in
				 * the period, before the swap */
	bool swap;		/* an injected stage: this period's halves
				 * swapped (rxr_ab_turn) */
	bool pending;
	bool pend_inj; /* the held lap is of the injected half */
	bool done;     /* paired, or tried, in period done_period */
	uint32_t done_period;
	uint64_t n, under, over; /* pairs; clamped below RXR_AB_LO / above */
	uint64_t unmatched;	 /* a period's first laps not paired: the
				  * other half's lap held another packet
				  * count, or it had none, or only one of
				  * the two followed a wait */
	uint64_t unmatched_wait; /* of those: only one followed a wait */
	uint32_t bin[RXR_AB_BINS]; /* pairs per bin */
	/* the same weighted by the pair's packets (a lap's count): the
	 * figures below are per packet, as K x packets is, not per lap */
	uint64_t wn, wunder, wover;
	uint64_t wbin[RXR_AB_BINS];
	double trim; /* the window of rxr_ab_pairs_trimmed_mean (0: RXR_AB_TRIM) */
};
/* Record one A/B lap of stage s, injected or plain half (the injected
 * path only: stages injected or observed, laps with packets). */
void rxr_probe_ab_pair(struct rxr_probe *p, enum rxr_stage s, uint64_t cycles, uint32_t pkts,
		       bool injected);
/* The same into the pairs a (rxr_probe_ab_pair: a = &p->abp[s]). */
void rxr_probe_ab_pair_into(struct rxr_probe *p, struct rxr_ab_pairs *a, uint64_t cycles,
			    uint32_t pkts, bool injected);
/* The median paired difference of stage s in cycles per packet, each pair
 * weighted by its packets; NAN when there are no pairs or half the weight
 * fell outside the bins; *pairs gets the number of pairs (may be NULL). */
double rxr_ab_pairs_median(const struct rxr_ab_pairs *a, uint64_t *pairs);
/*
 * The mean paired difference over the pairs within RXR_AB_TRIM cycles per
 * packet of the median, each pair weighted by its packets: the cycles the
 * kept pairs' injected laps ran beyond their plain partners over their
 * packets (NAN as above; *kept: the pairs it averaged). Weighted by
 * packets, not by laps: where what a lap adds per packet depends on its
 * size (an operation delay on a per-burst look-ahead get: 4 delayed gets
 * in a lap of 1 packet, 2 + 2/n in one of n), a mean over laps
 * over-counts the many small laps of light load against the engine's
 * operations per packet (1.35 x K x ops on the 2-core VM, 0.98 by
 * packets). For a lap injection (K per packet at any size) it changes
 * nothing but the noise: a lap of more packets varies less per packet. The
 * median alone is not the figure: an injection of K per packet spins a
 * little more or less on each lap (the clock read's granularity, repaid
 * by the next lap), so the injected amount is spread, even bimodal, and
 * only its mean is K. The window keeps that spread and the laps' own
 * jitter, and drops what a preemption or an interrupt puts into one lap
 * of a pair (on either side alike, so the mean stays centred).
 */
#define RXR_AB_TRIM 1024.0
double rxr_ab_pairs_trimmed_mean(const struct rxr_ab_pairs *a, uint64_t *kept);
/* The window in force: a->trim, else RXR_AB_TRIM (an operation-delay
 * gate's is wider: rxr_probe_set_op_gate). */
double rxr_ab_pairs_trim(const struct rxr_ab_pairs *a);

/*
 * Allocate a probe for a thread with the given role ("rx", "app", "nic")
 * pinned to core (-1 = unpinned). sample_shift k: in full mode, sample one
 * burst in 2^k into a ring of ring_size records (rounded up to a power of
 * two; 0 = 4096 in full builds, no ring otherwise). Returns 0 and the probe
 * in *out (the caller owns it: rxr_probe_free), or -EINVAL (role NULL or
 * longer than 7 bytes, sample_shift > 31) / -ENOMEM with *out NULL and one
 * line in err (err may be NULL).
 */
int rxr_probe_open(const char *role, int core, unsigned sample_shift, uint32_t ring_size,
		   struct rxr_probe **out, char *err, size_t errlen);
void rxr_probe_free(struct rxr_probe *p);
/* Zero the accumulators and restart the lap clock (keeps injection). */
void rxr_probe_reset(struct rxr_probe *p);
/* Spin `ticks` clock ticks per packet inside stage s on every lap that
 * closes it (a lap of n packets spins ticks x n; laps of no packets none). */
void rxr_probe_set_inject(struct rxr_probe *p, enum rxr_stage s, uint64_t ticks);
/*
 * Inject A/B (verification, `--inject-ab`): an injected stage spins on
 * one lap with packets in RXR_AB_PERIOD only; those laps are also recorded
 * in p->ab[s], the plain turn's laps in p->ab[RXR_ST_COUNT + s]. The
 * stage's own accumulator keeps every lap as always. Both halves share
 * the run's load, bursts and host, so injected minus plain cycles per
 * packet is what the injection adds, free of run-to-run drift and of the
 * load the injection itself changes (bench/inject_accuracy). Reset with
 * the probe. 0, or -ENOMEM.
 */
int rxr_probe_set_inject_ab(struct rxr_probe *p, bool on);
/*
 * With A/B on and a stage injected, every other stage of the probe is
 * observed: inject[o] = RXR_INJECT_OBSERVE (no spin), its laps with
 * packets take the injected path and count to the half of the injected
 * stage's last lap's turn, in ab[] and in the pairs (after a shadow:
 * neither). What the injection leaks into
 * the stages around it (a spin's exit charged to the next stage, caches it
 * cooled) is then their injected-half minus plain-half cost, measured in
 * the same run as the injection itself. A stage that laps more often than
 * the injected one (a burst stage against a batch stage) pairs only across
 * the change of half; the result then gives its halves' means alone.
 * Call after rxr_probe_set_inject.
 */
#define RXR_INJECT_OBSERVE UINT64_MAX
/*
 * Operation delays in A/B (`--op-delay ... --inject-ab`): the delays sit
 * inside operations (a mempool get, an MR lookup, a header write), not at
 * laps. Every operation owes its delay, armed or not, and a payment spins
 * only while the paying thread's rxr_op_armed is true (it is, unless a
 * gate turned it off), so a delayed operation runs the same instructions
 * in both halves and the two differ only by the spin. The operation must
 * not test rxr_op_armed itself: a branch taken only in the armed turn
 * shows up as cost in the gated laps with no delay paid at all.
 * rxr_probe_set_op_gate makes stage s the thread's gate: its laps with
 * packets take the A/B turns (armed in RXR_AB_INJ only) and each counts to the turn it ran in; closing it moves
 * the turn on for what follows. Every other stage of the probe is
 * observed and counts to the turn it ran in, so an operation of another
 * stage of the thread (a free on an inline app) pairs too. Call
 * on the probe's owner before its thread runs; the state is the running
 * thread's (rxr_op_armed is thread-local, set on the probe's thread as its
 * gate laps). k: the delay of the gated operation, in ticks. The gate's
 * pairs trim at RXR_AB_TRIM + 2k (kept across rxr_probe_reset; the
 * observed stages keep RXR_AB_TRIM): what a lap adds per packet there
 * depends on its size (a per-burst look-ahead get beside the per-packet
 * ones: 4 delays per packet in a lap of 1, towards 2 in long ones), so
 * the pairs spread over up to 2k per packet, and RXR_AB_TRIM alone cut
 * the long laps of a delay of 600 out as if preempted (their figure then
 * read 1.36 x K x ops on the 2-core VM). 0, or -ENOMEM.
 */
#define RXR_INJECT_GATE (UINT64_MAX - 1)
/*
 * A wait stage (idle, gpu_wait) of a thread whose operations are delayed:
 * its laps pay what the operations in them owe (rxr_op_delay), and do
 * nothing else (never observed, no spin of its own). An empty poll of the
 * mlx5 PMD allocates its replacement buffer and frees it again, so idle
 * laps owe delays too. Values below it are injections in ticks.
 */
#define RXR_INJECT_PAY (UINT64_MAX - 2)
/*
 * An injection of nothing (`--inject STAGE=0 --inject-ab`): STAGE keeps the
 * A/B turns as an injected stage does and spins nothing, so every figure
 * of the run is what the A/B reads when nothing was changed: its own bias
 * and noise, the control beside a run that injects K. Values below it
 * are injections in ticks.
 */
#define RXR_INJECT_NULL (UINT64_MAX - 3)
/* The ticks per packet an inject[] value spins: itself, or 0 for the
 * markers (observed, gate, paying, nothing): what configs and results
 * report as K. */
static inline uint64_t rxr_inject_ticks(uint64_t v)
{
	return v < RXR_INJECT_NULL ? v : 0;
}
extern __thread bool rxr_op_armed; /* __thread: the header is also C++ (nvcc) */
int rxr_probe_set_op_gate(struct rxr_probe *p, enum rxr_stage s, uint32_t k);
/*
 * An operation delay of k ticks (`--op-delay`): the operation adds k to
 * what its thread owes (rxr_op_owed), and the thread's next lap pays it,
 * spun from that lap's clock read as a lap's injection is (rxr_op_pay).
 * The next lap is the one the operation ran in, whatever the engine calls
 * it, so a lap charged to the wrong stage carries the delay with it: what
 * the delay tests, and no probe label decides where it lands. (Until this
 * session each operation spun in place, fenced, with its calibrated
 * overhead taken off. A spin in the middle of a stage's work exposes the
 * latency of what is in flight around it: on the 16-core host a put on
 * the app thread and a header write on the NIC thread added ~70-100
 * cycles more than K each, wherever in the operation the spin sat, while
 * the rx thread's gets came out 10% short.) Ops in a wait lap (idle) are
 * paid by that wait lap (RXR_INJECT_PAY). Laps pay only on a probe whose
 * stages take the injected path (rxr_probe_set_op_pay, which an op gate in
 * A/B calls too).
 */
extern __thread uint64_t rxr_op_owed;
/* Spin what the calling thread owes from t (a lap's clock read), or
 * nothing while a gate has it disarmed (what was owed is forgotten either
 * way); returns the clock after. What a spin ran over its target is carried to the
 * thread's next payment (past RXR_INJECT_STRETCH_MAX: dropped, a
 * preemption); a shortfall likewise, bounded by RXR_INJECT_DEBT_MAX. */
uint64_t rxr_op_pay(uint64_t t);
/* Make every stage of p take the injected path (non-wait stages not
 * injected: observed, no spin of their own; wait stages: RXR_INJECT_PAY),
 * so its laps pay the thread's operation delays: for --op-delay without
 * A/B (rxr_probe_set_op_gate calls it in A/B). 0. */
int rxr_probe_set_op_pay(struct rxr_probe *p);
/* An operation delay of k ticks (0: none), owed whether or not a gate
 * disarmed the thread: the payment decides (rxr_op_pay). */
static inline void rxr_op_delay(uint32_t k)
{
	if (__builtin_expect(k != 0, 0))
		rxr_op_owed += k;
}
/* Sum of cycles over every stage except idle. */
uint64_t rxr_probe_busy_cycles(const struct rxr_probe *p);
/* Merge src's accumulators into dst (dst's role/core unchanged). */
void rxr_probe_merge(struct rxr_probe *dst, const struct rxr_probe *src);
/* Copy up to max sampled laps (oldest first) into out; returns count. */
size_t rxr_probe_samples(const struct rxr_probe *p, struct rxr_sample *out, size_t max);

/*
 * NVTX (probes/nvtx.c; no-ops in a build without the NVTX headers). The
 * ranges live in domain "rxray"; with no tool loaded (NVTX_INJECTION64_PATH
 * unset) each call is a branch on a null pointer.
 * rxr_nvtx_init registers the domain and the stage strings (idempotent,
 * thread-safe; every other call runs it on first use).
 * rxr_nvtx_push/pop: a range named by a stage on the calling thread.
 * rxr_nvtx_range_push/pop: a range of any name (the run, a phase), in
 * every probe mode. rxr_nvtx_range_start/end: a range that may end on
 * another call or thread (a GPU batch from launch to retire); start
 * returns its id (0 when no tool listens), end accepts 0.
 * rxr_nvtx_burst_begin/lap/burst_end/stage_begin: full mode's sampled
 * bursts (called from rxr_burst_begin, rxr_lap, rxr_burst_end and
 * rxr_stage_begin below, never in counters mode): a range "burst"
 * (payload: the burst number) holding one range per lapped stage, pushed
 * where the engine announces the stage (rxr_stage_begin) and popped at the
 * lap that closes it. The burst's range opens with its first stage range,
 * so a burst that lapped only idle (an empty poll) shows nothing. Where no
 * stage was announced, the range is guessed at the previous lap from what
 * followed that stage last time on this thread (a first-order chain, only
 * after stages never followed by an announcement, never after idle; a
 * transition seen to vary is guessed no more).
 */
void rxr_nvtx_init(void);
void rxr_nvtx_push(enum rxr_stage s);
void rxr_nvtx_pop(void);
void rxr_nvtx_range_push(const char *name);
void rxr_nvtx_range_pop(void);
uint64_t rxr_nvtx_range_start(const char *name);
void rxr_nvtx_range_end(uint64_t id);
struct rxr_probe;
void rxr_nvtx_burst_begin(const struct rxr_probe *p);
void rxr_nvtx_lap(const struct rxr_probe *p, enum rxr_stage s);
void rxr_nvtx_burst_end(const struct rxr_probe *p);
void rxr_nvtx_stage_begin(const struct rxr_probe *p, enum rxr_stage s);

/* Append one sampled lap to p's ring (full mode's rxr_lap calls it). */
void rxr_sample_record(struct rxr_probe *p, enum rxr_stage s, uint64_t start, uint64_t cyc);

/* Start (or restart) the lap clock, e.g. at the top of the hot loop. */
static inline void rxr_lap_start(struct rxr_probe *p)
{
#if RXRAY_PROBE_MODE != RXR_MODE_OFF
	/* operations before the first lap (a queue's set-up) are no lap's */
	rxr_op_owed = 0;
	p->last = rxr_now();
#else
	(void)p;
#endif
}

/*
 * Injection: a lap of n packets on a stage with inject K spins K x n ticks
 * after the stage's own work, from a clock read t0 taken where the lap
 * would have ended. What a spin runs beyond its target (its last clock
 * read lands up to one read past it; the stage's own loads still in
 * flight at t0 run on the spin's clock) is carried per stage in
 * inject_debt and taken off the next lap's target, so over the run the
 * stage grows by exactly K per packet however short the laps are: the
 * spin accounts for its own clock reads without a calibrated constant.
 * The credit is taken off the next spin whatever the lap's own length (it
 * once was not where that would make the lap shorter than K x n: where a
 * stage's own work is shorter than a clock read or two, the credit was
 * never repaid and every lap added K x n plus the difference).
 *
 * One exception: a lap whose spin ran more than RXR_INJECT_STRETCH_MAX
 * ticks per packet beyond its target was stretched by something else (a
 * preemption, an interrupt) and is noise like any other stage's: that
 * excess is not carried (it must not shorten the laps after it) but
 * counted in inject_dropped. The bound is the A/B pairs' window
 * (RXR_AB_TRIM), so a lap the pairs leave out is one whose excess is not
 * repaid either, and one they keep is repaid in full: neither biases
 * their mean, while K per packet is within the window too (a lap repaying
 * credit reads 0 to K: past RXR_AB_TRIM its pair falls out). (A cap of
 * 256 ticks on the credit once dropped what spins
 * over-ran on the 16-core host at light load, 256-4,096 ticks, where the
 * pairs kept those laps: 1.10-1.37 x K at K = 50 on stages whose loads
 * were still in flight at t0, all of it the dropped credit.)
 * A shortfall (a skipped spin) is carried up to RXR_INJECT_DEBT_MAX.
 */
#define RXR_INJECT_STRETCH_MAX 1024 /* ticks per packet: RXR_AB_TRIM */
#define RXR_INJECT_DEBT_MAX 1024

/* The credit (debt) after a spin asked for target ticks (>= 0; 0: it was
 * skipped) that ran ran of them toward want: what it ran beyond the target
 * is carried, unless that exceeds stretch (a preemption), when *dropped
 * gets it and none is carried. Injection's laps and operation delays
 * (rxr_op_pay) both settle through it. */
static inline int64_t rxr_inject_settle(int64_t debt, int64_t want, int64_t target, int64_t ran,
					int64_t stretch, int64_t *dropped)
{
	int64_t over = ran - target;
	*dropped = over > stretch ? over : 0;
	debt += target + over - *dropped - want;
	return debt < -RXR_INJECT_DEBT_MAX ? -RXR_INJECT_DEBT_MAX : debt;
}

/* Spin want ticks less *debt from t0 and settle *debt (rxr_inject_settle);
 * returns the clock after. Injection's laps and operation delays'
 * payments both spin through it. */
static inline uint64_t rxr_spin_owed(uint64_t t0, int64_t want, int64_t *debt, int64_t stretch,
				     int64_t *dropped)
{
	int64_t target = want - *debt;
	uint64_t t = t0;
	if (target > 0) {
		rxr_spin_until(t0, (uint64_t)target);
		/* read again: the loop's exit (a mispredicted branch) belongs
		 * to the lap that spun, not to the next one */
		t = rxr_now();
	} else {
		target = 0;
	}
	*debt = rxr_inject_settle(*debt, want, target, (int64_t)(t - t0), stretch, dropped);
	return t;
}

static inline uint64_t rxr_inject_run(struct rxr_probe *p, enum rxr_stage s, uint64_t t0,
				      uint32_t pkts)
{
	int64_t dropped;
	uint64_t t = rxr_spin_owed(t0, (int64_t)(p->inject[s] * pkts), &p->inject_debt[s],
				   (int64_t)RXR_INJECT_STRETCH_MAX * pkts, &dropped);
	if (__builtin_expect(dropped > 0, 0)) {
		p->inject_dropped[s] += (uint64_t)dropped;
		p->inject_drops[s]++;
	}
	return t;
}

static inline void rxr_lap_close(struct rxr_probe *p, enum rxr_stage s, uint64_t t,
				 uint32_t pkts);

/* The injected path of rxr_lap, A/B or not (out of the hot path's way). */
static inline void rxr_lap_injected(struct rxr_probe *p, enum rxr_stage s, uint64_t t,
				    uint32_t pkts)
{
	/* the lap's operations' delays (rxr_op_delay), before all else: the
	 * lap ran them */
	if (__builtin_expect(rxr_op_owed != 0, 0))
		t = rxr_op_pay(t);
	if (!p->ab) {
		if (p->inject[s] < RXR_INJECT_NULL)
			t = rxr_inject_run(p, s, t, pkts);
		rxr_lap_close(p, s, t, pkts);
		return;
	}
	/* The A/B bookkeeping after a lap closes is kept out of every lap: the
	 * next one starts when it is done. (It differs between the halves:
	 * pairing costs more than holding; charged to the next stage it would
	 * make that stage look dearer in one half.) */
	uint64_t last = p->last, t0 = t;
	unsigned turn;
	/* did a wait lap come between this lap and the last one with packets
	 * (every lap with packets passes here in A/B: all are observed)? */
	uint64_t waits = p->st[RXR_ST_IDLE].count + p->st[RXR_ST_GPU_WAIT].count;
	p->ab_after_wait = waits != p->ab_waits_seen;
	p->ab_waits_seen = waits;
	if (p->inject[s] == RXR_INJECT_OBSERVE) { /* observed: no spin */
		turn = p->op_gate ? rxr_ab_turn(p->gate_turn, p->gate_swap) : p->ab_phase;
	} else if (p->inject[s] == RXR_INJECT_GATE) {
		/* the lap ran in the gate's turn; what follows runs in the next */
		turn = rxr_ab_turn(p->gate_turn, p->gate_swap);
		p->gate_turn = (uint8_t)((p->gate_turn + 1) % RXR_AB_PERIOD);
		if (!p->gate_turn) { /* the laps that follow begin a period */
			p->gate_swap = rxr_ab_coin(&p->ab_rng);
			p->ab_period++;
		}
		rxr_op_armed = rxr_ab_turn(p->gate_turn, p->gate_swap) == RXR_AB_INJ;
		p->ab_inj_burst = p->bursts;
	} else {
		struct rxr_ab_pairs *a = &p->abp[s];
		if (!a->turn) { /* this lap begins a period */
			a->swap = rxr_ab_coin(&p->ab_rng);
			p->ab_period++;
		}
		turn = rxr_ab_turn(a->turn, a->swap);
		a->turn = (uint8_t)((a->turn + 1) % RXR_AB_PERIOD);
		p->ab_phase = (uint8_t)turn;
		p->ab_inj_burst = p->bursts;
		if (turn == RXR_AB_INJ && p->inject[s] < RXR_INJECT_NULL)
			t = rxr_inject_run(p, s, t, pkts);
	}
	rxr_lap_close(p, s, t, pkts);
	if (turn == RXR_AB_INJ || turn == RXR_AB_PLAIN) { /* shadows: neither */
		bool inj = turn == RXR_AB_INJ;
		rxr_acc_record(&p->ab[inj ? (int)s : RXR_ST_COUNT + (int)s], t - last, pkts);
		rxr_probe_ab_pair(p, s, t - last, pkts, inj);
		/* an observed lap in the spin's own burst: no burst has ended
		 * since the injected (gated) lap whose turn it counts to */
		if (p->inject[s] == RXR_INJECT_OBSERVE && p->bursts == p->ab_inj_burst)
			rxr_probe_ab_pair_into(p, &p->abp[RXR_ST_COUNT + s], t - last, pkts, inj);
		/* an injected stage: its work alone, the spin left out (the
		 * clock where the lap would have ended; a plain lap's is its
		 * end): paired, what the spin did to the stage's own work,
		 * free of the credit one lap's spin hands the next */
		else if (p->inject[s] <= RXR_INJECT_NULL)
			rxr_probe_ab_pair_into(p, &p->abp[RXR_ST_COUNT + s], t0 - last, pkts, inj);
		if (inj && p->inject[s] < RXR_INJECT_NULL) { /* what the spin ran */
			p->inject_spun[s] += t - t0;
			p->inject_spun_pkts[s] += pkts;
		}
	}
	/* the clock is read once the bookkeeping has completed: an unordered
	 * read lets it run on into the next lap, and by more in one half
	 * (measured: +20 cycles/packet on an inline app stage after injected
	 * laps, none with the fence). Its stores too: the pairs' bins and
	 * the half's sums, misses some of them, left in the store buffer,
	 * drain while the next laps run and slow their own stores, and not
	 * alike in the two halves (the injected half writes the spin's sums
	 * as well). bench_inject_accuracy --quick, both engines, one device
	 * call on the 16-core host: without the store fence the NIC's
	 * cqe_write read -37 and -26 cycles/packet beside hdr_write=50 and
	 * 500 (verbs), -9 and -61 beside payload_write=50 and 500 (dpdk);
	 * with it -0.1 to +0.1, or smaller than the row's largest move
	 * (rows within every bound: 27 of 44 without, 33 of 44 with). */
#if defined(__x86_64__) || defined(__i386__)
	__asm__ __volatile__("mfence\n\tlfence" ::: "memory");
#elif defined(__aarch64__)
	__asm__ __volatile__("dsb ish\n\tisb" ::: "memory");
#endif
	p->last = rxr_now();
}

/*
 * Close stage s: charge the ticks since the previous lap to s, attributing
 * pkts packets to it. One clock read. When an injection is set for s, the
 * lap spins inject x pkts ticks more inside s (rxr_inject_run).
 */
static inline void rxr_lap(struct rxr_probe *p, enum rxr_stage s, uint32_t pkts)
{
#if RXRAY_PROBE_MODE != RXR_MODE_OFF
	uint64_t t = rxr_now();
	if (__builtin_expect(p->inject[s] != 0, 0)) {
		if (pkts && p->inject[s] != RXR_INJECT_PAY) {
			rxr_lap_injected(p, s, t, pkts);
			return;
		}
		/* a lap without packets, or a wait, pays its operations too */
		if (rxr_op_owed)
			t = rxr_op_pay(t);
	}
	rxr_lap_close(p, s, t, pkts);
#else
	(void)p;
	(void)s;
	(void)pkts;
#endif
}

/* Charge t - p->last to s (the tail of every lap). */
static inline void rxr_lap_close(struct rxr_probe *p, enum rxr_stage s, uint64_t t,
				 uint32_t pkts)
{
#if RXRAY_PROBE_MODE != RXR_MODE_OFF
	uint64_t d = t - p->last;
#if RXRAY_PROBE_MODE == RXR_MODE_FULL
	if (p->sampling) {
		/* idle laps are not kept: at light load they would crowd the
		 * work out of the ring, and a timeline shows them as gaps */
		if (s != RXR_ST_IDLE)
			rxr_sample_record(p, s, p->last, d);
		rxr_nvtx_lap(p, s);
	}
#endif
	p->last = t;
	rxr_acc_record(&p->st[s], d, pkts);
#else
	(void)p;
	(void)s;
	(void)t;
	(void)pkts;
#endif
}

/*
 * Inject spin without a lap: for stages an engine does not lap itself
 * (rarely needed; rxr_lap already spins).
 */
static inline void rxr_inject_spin(struct rxr_probe *p, enum rxr_stage s)
{
#if RXRAY_PROBE_MODE != RXR_MODE_OFF
	if (p->inject[s] && p->inject[s] < RXR_INJECT_NULL)
		rxr_spin_until(rxr_now(), p->inject[s]);
#else
	(void)p;
	(void)s;
#endif
}

/*
 * Announce that stage s begins now: the next rxr_lap on p closes it and
 * must name s. Engines call it where the next stage is known, right after
 * the lap before it or where the code decides which stage comes (a refill
 * that may not be needed: inside, once it is). In full mode a sampled
 * burst's range for s opens here and closes at that lap; in the off and
 * counters modes it is nothing at all: the macro does not evaluate its
 * arguments (sizeof), so the hot paths of those builds are unchanged.
 * Both arguments may be evaluated twice: pass plain expressions.
 *
 * Rules, so that the ranges are the laps (tests/gpu/test_nvtx_run.c):
 *  - s == RXR_ST_IDLE announces a wait: no range (idle never has one).
 *  - A poll announces cqe_poll when it finds its first completion, not
 *    when it starts: it cannot know it will be empty, and a range opened
 *    before it knew would be a range per empty poll (millions a second on
 *    an idle queue: they overran the listener's 1M ranges in 0.3 s on a
 *    16-core host). So an empty poll opens nothing, and the first poll's
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
#if RXRAY_PROBE_MODE == RXR_MODE_FULL
#define rxr_stage_begin(p, s) ((p)->sampling ? rxr_nvtx_stage_begin((p), (s)) : (void)0)
#else
#define rxr_stage_begin(p, s) ((void)sizeof((p)->sampling + (s)))
#endif

/*
 * Burst brackets: count packets the thread handled and, in full mode,
 * decide whether this burst is sampled and open/close an NVTX range.
 */
static inline void rxr_burst_begin(struct rxr_probe *p)
{
#if RXRAY_PROBE_MODE == RXR_MODE_FULL
	p->sampling = (p->sample_seq++ & p->sample_mask) == 0;
	if (p->sampling)
		rxr_nvtx_burst_begin(p);
#else
	(void)p;
#endif
}

static inline void rxr_burst_end(struct rxr_probe *p, uint32_t pkts)
{
#if RXRAY_PROBE_MODE != RXR_MODE_OFF
	p->busy_packets += pkts;
	p->bursts++;
#if RXRAY_PROBE_MODE == RXR_MODE_FULL
	if (p->sampling)
		rxr_nvtx_burst_end(p);
	p->sampling = 0;
#endif
#else
	(void)p;
	(void)pkts;
#endif
}

/*
 * Lap cost self-calibration: median ticks of one rxr_lap in this build's
 * mode, measured over `iters` laps (0 = 100000). Also stored in the clock.
 */
double rxr_probe_measure_lap_cost(unsigned iters);

/* Parse "STAGE=CYCLES" (cycles with k/M suffixes). 0 or -EINVAL. */
int rxr_inject_parse(const char *spec, enum rxr_stage *s, uint64_t *cycles);

#ifdef __cplusplus
}
#endif
#endif /* RXRAY_PROBE_H */
