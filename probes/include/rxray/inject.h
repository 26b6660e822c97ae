/* SPDX-License-Identifier: MIT */
/*
 * Verification by injection (`--inject`, `--inject-ab`, `--op-delay`):
 * known cycles added inside a stage's laps, or inside operations, so a run
 * can check that rxray attributes them where they were put. A probe's
 * inject[s] holds the ticks per packet stage s spins, or a marker
 * (RXP_INJECT_OBSERVE, _GATE, _PAY, _NULL); rxp_lap takes the injected
 * path (rxp_lap_injected) only where it is set, so a run without
 * injection pays one test per lap. A/B mode splits an injected stage's
 * laps into injected and plain halves of one run and pairs them
 * (struct rxp_ab_pairs), free of run-to-run drift.
 *
 * Error rule as in rxray/probe.h. The state lives in struct rxp_probe and
 * is reset and merged with it (rxp_inject_reset, rxp_inject_merge).
 */
#ifndef RXRAY_INJECT_H
#define RXRAY_INJECT_H

#include <stdbool.h>
#include <stdint.h>

#include "rxray/probe.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Inject A/B turns: an injected (or gate) stage's laps with packets take
 * RXP_AB_PERIOD turns: one of the first and the third is injected
 * (RXP_AB_INJ), the other is the plain half (RXP_AB_PLAIN), which one drawn
 * at random each period (rxp_ab_turn); the second and fourth are shadows,
 * in neither half. A lap's cost depends on the lap before it (a spin lets the
 * NIC's writes settle and the next lap finds them cheaper or dearer), so a
 * plain lap right after an injected one would carry the spin's aftermath
 * and an injected lap after a plain one would not: their difference would
 * be K minus that aftermath. With the shadows, both halves follow a plain
 * lap. Observed stages count by the same turns. (What the aftermath
 * measured, and why a longer period does not help: bench/costmodel/
 * README.md, "Why the A/B is built as it is".)
 */
#define RXP_AB_PERIOD 4
#define RXP_AB_INJ 0
#define RXP_AB_PLAIN 2
/*
 * Which half comes first in a period is drawn at random, per period: the
 * turn of a lap at place raw (0-3) of its period, with the halves swapped
 * or not. A fixed order makes "the first half" and "the injected half" one
 * thing, so whatever differs between a period's first and third lap for
 * its own reasons (the pairing's bookkeeping after the second one, a
 * thread's state that follows the period) reads as the injection. An A/A
 * run (RXP_INJECT_NULL: nothing spun) shows that bias when the order is
 * fixed and not when it is drawn (bench/costmodel/README.md).
 */
static inline unsigned rxp_ab_turn(unsigned raw, bool swap)
{
	return swap && !(raw & 1) ? raw ^ RXP_AB_PLAIN : raw;
}
static inline bool rxp_ab_coin(uint64_t *rng)
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
 * bins centred on the whole numbers from RXP_AB_LO (rounded to the
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
 * plain turn's first would compare a lap before an empty poll's refill
 * with one after it.)
 * The two laps must also agree on whether a wait lap (idle, gpu_wait)
 * came just before them; a pair that does not is left unpaired (counted
 * apart too). At light load a spin late in one burst lets the next packet
 * arrive meanwhile, so the next burst's first lap follows no wait and
 * finds the completion written, where its plain partner ends a wait and
 * meets the NIC at work on the line, a difference the spin did not add.
 * Work charged to the wrong stage moves every pair, matched or not.
 */
#define RXP_AB_LO (-1024)
#define RXP_AB_BINS 4096
struct rxp_ab_pairs {
	double pend;		/* the period's first lap's cycles per
				 * packet (of either half: pend_inj) */
	uint32_t pend_pkts;	/* and its packets */
	uint32_t pend_period;	/* and its period (rxp_probe.ab_period) */
	bool pend_wait;		/* and whether a wait lap came just before it */
	uint8_t turn;		/* an injected stage: its next lap's turn in
				 * the period, before the swap */
	bool swap;		/* an injected stage: this period's halves
				 * swapped (rxp_ab_turn) */
	bool pending;
	bool pend_inj; /* the held lap is of the injected half */
	bool done;     /* paired, or tried, in period done_period */
	uint32_t done_period;
	uint64_t n, under, over; /* pairs; clamped below RXP_AB_LO / above */
	uint64_t unmatched;	 /* a period's first laps not paired: the
				  * other half's lap held another packet
				  * count, or it had none, or only one of
				  * the two followed a wait */
	uint64_t unmatched_wait; /* of those: only one followed a wait */
	uint32_t bin[RXP_AB_BINS]; /* pairs per bin */
	/* the same weighted by the pair's packets (a lap's count): the
	 * figures below are per packet, as K x packets is, not per lap */
	uint64_t wn, wunder, wover;
	uint64_t wbin[RXP_AB_BINS];
	double trim; /* the window of rxp_ab_pairs_trimmed_mean (0: RXP_AB_TRIM) */
};
/* Record one A/B lap of stage s, injected or plain half (the injected
 * path only: stages injected or observed, laps with packets). */
void rxp_probe_ab_pair(struct rxp_probe *p, enum rxp_stage s, uint64_t cycles, uint32_t pkts,
		       bool injected);
/* The same into the pairs a (rxp_probe_ab_pair: a = &p->abp[s]). */
void rxp_probe_ab_pair_into(struct rxp_probe *p, struct rxp_ab_pairs *a, uint64_t cycles,
			    uint32_t pkts, bool injected);
/* The median paired difference of stage s in cycles per packet, each pair
 * weighted by its packets; NAN when there are no pairs or half the weight
 * fell outside the bins; *pairs gets the number of pairs (may be NULL). */
double rxp_ab_pairs_median(const struct rxp_ab_pairs *a, uint64_t *pairs);
/*
 * The mean paired difference over the pairs within RXP_AB_TRIM cycles per
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
#define RXP_AB_TRIM 1024.0
double rxp_ab_pairs_trimmed_mean(const struct rxp_ab_pairs *a, uint64_t *kept);
/* The window in force: a->trim, else RXP_AB_TRIM (an operation-delay
 * gate's is wider: rxp_probe_set_op_gate). */
double rxp_ab_pairs_trim(const struct rxp_ab_pairs *a);

/* Spin `ticks` clock ticks per packet inside stage s on every lap that
 * closes it (a lap of n packets spins ticks x n; laps of no packets none). */
void rxp_probe_set_inject(struct rxp_probe *p, enum rxp_stage s, uint64_t ticks);
/*
 * Inject A/B (verification, `--inject-ab`): an injected stage spins on
 * one lap with packets in RXP_AB_PERIOD only; those laps are also recorded
 * in p->ab[s], the plain turn's laps in p->ab[RXP_ST_COUNT + s]. The
 * stage's own accumulator keeps every lap as always. Both halves share
 * the run's load, bursts and host, so injected minus plain cycles per
 * packet is what the injection adds, free of run-to-run drift and of the
 * load the injection itself changes (bench/inject_accuracy). Reset with
 * the probe. 0, or -ENOMEM.
 */
int rxp_probe_set_inject_ab(struct rxp_probe *p, bool on);
/*
 * With A/B on and a stage injected, every other stage of the probe is
 * observed: inject[o] = RXP_INJECT_OBSERVE (no spin), its laps with
 * packets take the injected path and count to the half of the injected
 * stage's last lap's turn, in ab[] and in the pairs (after a shadow:
 * neither). What the injection leaks into
 * the stages around it (a spin's exit charged to the next stage, caches it
 * cooled) is then their injected-half minus plain-half cost, measured in
 * the same run as the injection itself. A stage that laps more often than
 * the injected one (a burst stage against a batch stage) pairs only across
 * the change of half; the result then gives its halves' means alone.
 * Call after rxp_probe_set_inject.
 */
#define RXP_INJECT_OBSERVE UINT64_MAX
/*
 * Operation delays in A/B (`--op-delay ... --inject-ab`): the delays sit
 * inside operations (a mempool get, an MR lookup, a header write), not at
 * laps. Every operation owes its delay, armed or not, and a payment spins
 * only while the paying thread's rxp_op_armed is true (it is, unless a
 * gate turned it off), so a delayed operation runs the same instructions
 * in both halves and the two differ only by the spin. The operation must
 * not test rxp_op_armed itself: a branch taken only in the armed turn
 * shows up as cost in the gated laps with no delay paid at all.
 * rxp_probe_set_op_gate makes stage s the thread's gate: its laps with
 * packets take the A/B turns (armed in RXP_AB_INJ only) and each counts to the turn it ran in; closing it moves
 * the turn on for what follows. Every other stage of the probe is
 * observed and counts to the turn it ran in, so an operation of another
 * stage of the thread (a free on an inline app) pairs too. Call
 * on the probe's owner before its thread runs; the state is the running
 * thread's (rxp_op_armed is thread-local, set on the probe's thread as its
 * gate laps). k: the delay of the gated operation, in ticks. The gate's
 * pairs trim at RXP_AB_TRIM + 2k (kept across rxp_probe_reset; the
 * observed stages keep RXP_AB_TRIM): what a lap adds per packet there
 * depends on its size (a per-burst look-ahead get beside the per-packet
 * ones: 4 delays per packet in a lap of 1, towards 2 in long ones), so
 * the pairs spread over up to 2k per packet, and RXP_AB_TRIM alone cut
 * the long laps of a delay of 600 out as if preempted (their figure then
 * read 1.36 x K x ops on the 2-core VM). 0, or -ENOMEM.
 */
#define RXP_INJECT_GATE (UINT64_MAX - 1)
/* RXP_INJECT_PAY (rxray/probe.h: the lap tests it): a wait stage whose
 * laps pay the thread's operation delays and do nothing else. */
/*
 * An injection of nothing (`--inject STAGE=0 --inject-ab`): STAGE keeps the
 * A/B turns as an injected stage does and spins nothing, so every figure
 * of the run is what the A/B reads when nothing was changed: its own bias
 * and noise, the control beside a run that injects K. Values below it
 * are injections in ticks.
 */
#define RXP_INJECT_NULL (UINT64_MAX - 3)
/* The ticks per packet an inject[] value spins: itself, or 0 for the
 * markers (observed, gate, paying, nothing): what configs and results
 * report as K. */
static inline uint64_t rxp_inject_ticks(uint64_t v)
{
	return v < RXP_INJECT_NULL ? v : 0;
}
extern __thread bool rxp_op_armed; /* __thread: the header is also C++ (nvcc) */
int rxp_probe_set_op_gate(struct rxp_probe *p, enum rxp_stage s, uint32_t k);
/*
 * An operation delay of k ticks (`--op-delay`): the operation adds k to
 * what its thread owes (rxp_op_owed), and the thread's next lap pays it,
 * spun from that lap's clock read as a lap's injection is (rxp_op_pay).
 * The next lap is the one the operation ran in, whatever the engine calls
 * it, so a lap charged to the wrong stage carries the delay with it: what
 * the delay tests, and no probe label decides where it lands. The delay
 * is never spun inside the operation: a spin in the middle of a stage's
 * work exposes the latency of what is in flight around it and adds more
 * or less than k (bench/costmodel/README.md). Ops in a wait lap (idle) are
 * paid by that wait lap (RXP_INJECT_PAY). Laps pay only on a probe whose
 * stages take the injected path (rxp_probe_set_op_pay, which an op gate in
 * A/B calls too).
 */
/* rxp_op_owed and rxp_op_pay, which the lap itself calls, are declared in
 * rxray/probe.h. */
/* Make every stage of p take the injected path (non-wait stages not
 * injected: observed, no spin of their own; wait stages: RXP_INJECT_PAY),
 * so its laps pay the thread's operation delays: for --op-delay without
 * A/B (rxp_probe_set_op_gate calls it in A/B). 0. */
int rxp_probe_set_op_pay(struct rxp_probe *p);
/* An operation delay of k ticks (0: none), owed whether or not a gate
 * disarmed the thread: the payment decides (rxp_op_pay). */
static inline void rxp_op_delay(uint32_t k)
{
	if (__builtin_expect(k != 0, 0))
		rxp_op_owed += k;
}
/* Zero p's injection state with its accumulators, keeping what was set
 * (rxp_probe_reset calls it). */
void rxp_inject_reset(struct rxp_probe *p);
/* Add src's injection figures and A/B pairs to dst's (rxp_probe_merge). */
void rxp_inject_merge(struct rxp_probe *dst, const struct rxp_probe *src);

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
 * One exception: a lap whose spin ran more than RXP_INJECT_STRETCH_MAX
 * ticks per packet beyond its target was stretched by something else (a
 * preemption, an interrupt) and is noise like any other stage's: that
 * excess is not carried (it must not shorten the laps after it) but
 * counted in inject_dropped. The bound is the A/B pairs' window
 * (RXP_AB_TRIM), so a lap the pairs leave out is one whose excess is not
 * repaid either, and one they keep is repaid in full: neither biases
 * their mean, while K per packet is within the window too (a lap repaying
 * credit reads 0 to K: past RXP_AB_TRIM its pair falls out). (A cap of
 * 256 ticks on the credit once dropped what spins
 * over-ran on the 16-core host at light load, 256-4,096 ticks, where the
 * pairs kept those laps: 1.10-1.37 x K at K = 50 on stages whose loads
 * were still in flight at t0, all of it the dropped credit.)
 * A shortfall (a skipped spin) is carried up to RXP_INJECT_DEBT_MAX.
 */
#define RXP_INJECT_STRETCH_MAX 1024 /* ticks per packet: RXP_AB_TRIM */
#define RXP_INJECT_DEBT_MAX 1024

/* The credit (debt) after a spin asked for target ticks (>= 0; 0: it was
 * skipped) that ran ran of them toward want: what it ran beyond the target
 * is carried, unless that exceeds stretch (a preemption), when *dropped
 * gets it and none is carried. Injection's laps and operation delays
 * (rxp_op_pay) both settle through it. */
static inline int64_t rxp_inject_settle(int64_t debt, int64_t want, int64_t target, int64_t ran,
					int64_t stretch, int64_t *dropped)
{
	int64_t over = ran - target;
	*dropped = over > stretch ? over : 0;
	debt += target + over - *dropped - want;
	return debt < -RXP_INJECT_DEBT_MAX ? -RXP_INJECT_DEBT_MAX : debt;
}

/* Spin want ticks less *debt from t0 and settle *debt (rxp_inject_settle);
 * returns the clock after. Injection's laps and operation delays'
 * payments both spin through it. */
static inline uint64_t rxp_spin_owed(uint64_t t0, int64_t want, int64_t *debt, int64_t stretch,
				     int64_t *dropped)
{
	int64_t target = want - *debt;
	uint64_t t = t0;
	if (target > 0) {
		rxp_spin_until(t0, (uint64_t)target);
		/* read again: the loop's exit (a mispredicted branch) belongs
		 * to the lap that spun, not to the next one */
		t = rxp_now();
	} else {
		target = 0;
	}
	*debt = rxp_inject_settle(*debt, want, target, (int64_t)(t - t0), stretch, dropped);
	return t;
}

static inline uint64_t rxp_inject_run(struct rxp_probe *p, enum rxp_stage s, uint64_t t0,
				      uint32_t pkts)
{
	int64_t dropped;
	uint64_t t = rxp_spin_owed(t0, (int64_t)(p->inject[s] * pkts), &p->inject_debt[s],
				   (int64_t)RXP_INJECT_STRETCH_MAX * pkts, &dropped);
	if (__builtin_expect(dropped > 0, 0)) {
		p->inject_dropped[s] += (uint64_t)dropped;
		p->inject_drops[s]++;
	}
	return t;
}

/*
 * Inject spin without a lap: for stages an engine does not lap itself
 * (rarely needed; rxp_lap already spins).
 */
static inline void rxp_inject_spin(struct rxp_probe *p, enum rxp_stage s)
{
#if RXRAY_PROBE_MODE != RXP_MODE_OFF
	if (p->inject[s] && p->inject[s] < RXP_INJECT_NULL)
		rxp_spin_until(rxp_now(), p->inject[s]);
#else
	(void)p;
	(void)s;
#endif
}

/* Parse "STAGE=CYCLES" (cycles with k/M suffixes). 0 or -EINVAL. */
int rxp_inject_parse(const char *spec, enum rxp_stage *s, uint64_t *cycles);

#ifdef __cplusplus
}
#endif
#endif /* RXRAY_INJECT_H */
