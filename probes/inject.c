/* SPDX-License-Identifier: MIT */
/* Injection and operation delays (rxray/inject.h): the injected lap path,
 * the A/B turns and pairs, the thread's operation-delay payments. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rxray/inject.h"
#include "rxray/util.h"

/* The operation-delay gate's pairs trim at its own window (the delays'
 * own stage only; rxp_probe_set_op_gate). */
static void ab_gate_trim(struct rxp_probe *p)
{
	for (int s = 0; p->op_gate && p->abp && s < RXP_ST_COUNT; s++)
		if (p->inject[s] == RXP_INJECT_GATE)
			p->abp[s].trim = p->ab_trim;
}

void rxp_inject_reset(struct rxp_probe *p)
{
	memset(p->inject_debt, 0, sizeof(p->inject_debt));
	memset(p->inject_spun, 0, sizeof(p->inject_spun));
	memset(p->inject_spun_pkts, 0, sizeof(p->inject_spun_pkts));
	memset(p->inject_dropped, 0, sizeof(p->inject_dropped));
	memset(p->inject_drops, 0, sizeof(p->inject_drops));
	for (int s = 0; p->ab && s < 2 * RXP_ST_COUNT; s++)
		rxp_acc_reset(&p->ab[s]);
	if (p->abp) {
		memset(p->abp, 0, 2 * RXP_ST_COUNT * sizeof(*p->abp));
		ab_gate_trim(p);
	}
	/* the last lap was a shadow: nothing observed counts until a turn
	 * starts (gate_turn goes on: the thread's armed state follows it) */
	p->ab_phase = RXP_AB_PERIOD - 1;
}

void rxp_probe_set_inject(struct rxp_probe *p, enum rxp_stage s, uint64_t ticks)
{
	if ((unsigned)s < RXP_ST_COUNT)
		p->inject[s] = ticks;
}

int rxp_probe_set_inject_ab(struct rxp_probe *p, bool on)
{
	if (!on) {
		free(p->ab);
		free(p->abp);
		p->ab = NULL;
		p->abp = NULL;
		for (int s = 0; s < RXP_ST_COUNT; s++)
			if (p->inject[s] >= RXP_INJECT_NULL) /* observed, the gate,
							      * paying, nothing */
				p->inject[s] = 0;
		p->op_gate = false;
		return 0;
	}
	if (!p->ab) {
		struct rxp_acc *ab = malloc(2 * RXP_ST_COUNT * sizeof(*ab));
		struct rxp_ab_pairs *abp = calloc(2 * RXP_ST_COUNT, sizeof(*abp));
		if (!ab || !abp) {
			free(ab);
			free(abp);
			return -ENOMEM;
		}
		for (int s = 0; s < 2 * RXP_ST_COUNT; s++)
			rxp_acc_reset(&ab[s]);
		p->ab = ab;
		p->abp = abp;
	}
	/* a probe with an injected stage observes all its others (a thread
	 * with none keeps its laps as they are: nothing to compare) */
	bool any = false;
	for (int s = 0; s < RXP_ST_COUNT; s++)
		any |= p->inject[s] != 0 && p->inject[s] != RXP_INJECT_OBSERVE &&
		       p->inject[s] != RXP_INJECT_PAY;
	for (int s = 0; any && s < RXP_ST_COUNT; s++)
		if (!p->inject[s] && !rxp_stage_is_wait(s))
			p->inject[s] = RXP_INJECT_OBSERVE;
	p->ab_phase = RXP_AB_PERIOD - 1;
	if (!p->ab_rng)
		p->ab_rng = (rxp_now() ^ (uint64_t)(uintptr_t)p) | 1;
	return 0;
}

__thread bool rxp_op_armed = true;
__thread uint64_t rxp_op_owed;
static __thread int64_t op_debt; /* ticks paid beyond (+) or short of (-) */

uint64_t rxp_op_pay(uint64_t t0)
{
	/* the carried over-run stays within RXP_INJECT_STRETCH_MAX: a longer
	 * one is dropped (rxp_inject_settle) */
	int64_t want = (int64_t)rxp_op_owed, dropped;
	rxp_op_owed = 0;
	if (!rxp_op_armed)
		return t0;
	return rxp_spin_owed(t0, want, &op_debt, RXP_INJECT_STRETCH_MAX, &dropped);
}

int rxp_probe_set_op_pay(struct rxp_probe *p)
{
	for (int s = 0; s < RXP_ST_COUNT; s++)
		if (!p->inject[s])
			p->inject[s] = rxp_stage_is_wait(s) ? RXP_INJECT_PAY : RXP_INJECT_OBSERVE;
	return 0;
}

int rxp_probe_set_op_gate(struct rxp_probe *p, enum rxp_stage s, uint32_t k)
{
	if ((unsigned)s >= RXP_ST_COUNT || rxp_stage_is_wait(s))
		return -EINVAL;
	p->inject[s] = RXP_INJECT_GATE;
	p->op_gate = true;
	p->gate_turn = RXP_AB_INJ; /* rxp_op_armed starts true */
	p->ab_trim = RXP_AB_TRIM + 2.0 * k;
	int rc = rxp_probe_set_inject_ab(p, true);
	if (!rc) {
		ab_gate_trim(p);
		rc = rxp_probe_set_op_pay(p); /* the waits pay their operations */
	}
	return rc;
}

void rxp_probe_ab_pair(struct rxp_probe *p, enum rxp_stage s, uint64_t cycles, uint32_t pkts,
		       bool injected)
{
	rxp_probe_ab_pair_into(p, &p->abp[s], cycles, pkts, injected);
}

void rxp_probe_ab_pair_into(struct rxp_probe *p, struct rxp_ab_pairs *a, uint64_t cycles,
			    uint32_t pkts, bool injected)
{
	double cpp = (double)cycles / (pkts ? pkts : 1);
	if (a->done && a->done_period == p->ab_period)
		return; /* paired (or tried) already this period */
	bool held = a->pending && a->pend_period == p->ab_period;
	if (held && a->pend_inj == injected)
		return; /* the period's first lap of this half holds */
	if (!held) {	/* the period's first lap: hold it for the other half */
		if (a->pending)
			a->unmatched++; /* an earlier period's, never partnered */
		a->pend = cpp;
		a->pend_pkts = pkts;
		a->pend_period = p->ab_period;
		a->pend_wait = p->ab_after_wait;
		a->pend_inj = injected;
		a->pending = true;
		return;
	}
	a->pending = false;
	a->done = true;
	a->done_period = p->ab_period;
	if (pkts != a->pend_pkts) {
		a->unmatched++;
		return;
	}
	/* Both laps must have followed a wait, or neither. A lap that ends a
	 * wait starts by meeting the producer at work on the same lines (a
	 * poll that catches the NIC writing the completion), one that follows
	 * work finds them written: at light load a spin before the next
	 * burst's first lap turns the one into the other. Charging work to
	 * the wrong stage still moves every pair. */
	if (a->pend_wait != p->ab_after_wait) {
		a->unmatched++;
		a->unmatched_wait++;
		return;
	}
	/* the nearest bin, ties to even: a pair of 1-packet laps differs by a
	 * whole number of cycles, and a bin taken as [b, b + 1) added half a
	 * cycle to each (+1% of K = 50) */
	double d = nearbyint(injected ? cpp - a->pend : a->pend - cpp) - RXP_AB_LO;
	uint64_t w = pkts ? pkts : 1;
	a->n++;
	a->wn += w;
	if (d < 0) {
		a->under++;
		a->wunder += w;
	} else if (d >= RXP_AB_BINS) {
		a->over++;
		a->wover += w;
	} else {
		a->bin[(size_t)d]++;
		a->wbin[(size_t)d] += w;
	}
}

double rxp_ab_pairs_median(const struct rxp_ab_pairs *a, uint64_t *pairs)
{
	if (pairs)
		*pairs = a->n;
	double half = (double)a->wn / 2;
	if (!a->wn || (double)a->wunder >= half || (double)a->wover >= half)
		return NAN;
	double cum = (double)a->wunder;
	for (size_t b = 0; b < RXP_AB_BINS; b++) {
		double w = (double)a->wbin[b];
		if (cum + w >= half && w > 0)
			/* spread evenly over the bin [b - 1/2, b + 1/2) */
			return RXP_AB_LO + (double)b - 0.5 + (half - cum) / w;
		cum += w;
	}
	return NAN;
}

double rxp_ab_pairs_trim(const struct rxp_ab_pairs *a)
{
	return a->trim > RXP_AB_TRIM ? a->trim : RXP_AB_TRIM;
}

double rxp_ab_pairs_trimmed_mean(const struct rxp_ab_pairs *a, uint64_t *kept)
{
	double m = rxp_ab_pairs_median(a, NULL), sum = 0, w = 0;
	uint64_t n = 0;
	if (kept)
		*kept = 0;
	if (!isfinite(m))
		return NAN;
	for (size_t b = 0; b < RXP_AB_BINS; b++) {
		double v = RXP_AB_LO + (double)b; /* the bin's centre */
		if (!a->bin[b] || fabs(v - m) > rxp_ab_pairs_trim(a))
			continue;
		sum += v * (double)a->wbin[b];
		w += (double)a->wbin[b];
		n += a->bin[b];
	}
	if (kept)
		*kept = n;
	return w > 0 ? sum / w : NAN;
}

/* Pairs add (what is held unpaired stays the destination's). */
static void ab_pairs_merge(struct rxp_ab_pairs *d, const struct rxp_ab_pairs *o)
{
	d->n += o->n;
	d->unmatched += o->unmatched;
	d->unmatched_wait += o->unmatched_wait;
	d->under += o->under;
	d->over += o->over;
	d->wn += o->wn;
	d->wunder += o->wunder;
	d->wover += o->wover;
	d->trim = fmax(d->trim, o->trim);
	for (size_t b = 0; b < RXP_AB_BINS; b++) {
		d->bin[b] += o->bin[b];
		d->wbin[b] += o->wbin[b];
	}
}

void rxp_inject_merge(struct rxp_probe *dst, const struct rxp_probe *src)
{
	for (int s = 0; s < RXP_ST_COUNT; s++) {
		dst->inject_spun[s] += src->inject_spun[s];
		dst->inject_spun_pkts[s] += src->inject_spun_pkts[s];
		dst->inject_dropped[s] += src->inject_dropped[s];
		dst->inject_drops[s] += src->inject_drops[s];
		if (dst->ab && src->ab) {
			rxp_acc_merge(&dst->ab[s], &src->ab[s]);
			rxp_acc_merge(&dst->ab[RXP_ST_COUNT + s], &src->ab[RXP_ST_COUNT + s]);
			ab_pairs_merge(&dst->abp[s], &src->abp[s]);
			ab_pairs_merge(&dst->abp[RXP_ST_COUNT + s], &src->abp[RXP_ST_COUNT + s]);
		}
	}
}

/* The injected path of rxp_lap, A/B or not (out of the hot path's way). */
void rxp_lap_injected(struct rxp_probe *p, enum rxp_stage s, uint64_t t, uint32_t pkts)
{
	/* the lap's operations' delays (rxp_op_delay), before all else: the
	 * lap ran them */
	if (__builtin_expect(rxp_op_owed != 0, 0))
		t = rxp_op_pay(t);
	if (!p->ab) {
		if (p->inject[s] < RXP_INJECT_NULL)
			t = rxp_inject_run(p, s, t, pkts);
		rxp_lap_close(p, s, t, pkts);
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
	uint64_t waits = p->st[RXP_ST_IDLE].count + p->st[RXP_ST_GPU_WAIT].count;
	p->ab_after_wait = waits != p->ab_waits_seen;
	p->ab_waits_seen = waits;
	if (p->inject[s] == RXP_INJECT_OBSERVE) { /* observed: no spin */
		turn = p->op_gate ? rxp_ab_turn(p->gate_turn, p->gate_swap) : p->ab_phase;
	} else if (p->inject[s] == RXP_INJECT_GATE) {
		/* the lap ran in the gate's turn; what follows runs in the next */
		turn = rxp_ab_turn(p->gate_turn, p->gate_swap);
		p->gate_turn = (uint8_t)((p->gate_turn + 1) % RXP_AB_PERIOD);
		if (!p->gate_turn) { /* the laps that follow begin a period */
			p->gate_swap = rxp_ab_coin(&p->ab_rng);
			p->ab_period++;
		}
		rxp_op_armed = rxp_ab_turn(p->gate_turn, p->gate_swap) == RXP_AB_INJ;
		p->ab_inj_burst = p->bursts;
	} else {
		struct rxp_ab_pairs *a = &p->abp[s];
		if (!a->turn) { /* this lap begins a period */
			a->swap = rxp_ab_coin(&p->ab_rng);
			p->ab_period++;
		}
		turn = rxp_ab_turn(a->turn, a->swap);
		a->turn = (uint8_t)((a->turn + 1) % RXP_AB_PERIOD);
		p->ab_phase = (uint8_t)turn;
		p->ab_inj_burst = p->bursts;
		if (turn == RXP_AB_INJ && p->inject[s] < RXP_INJECT_NULL)
			t = rxp_inject_run(p, s, t, pkts);
	}
	rxp_lap_close(p, s, t, pkts);
	if (turn == RXP_AB_INJ || turn == RXP_AB_PLAIN) { /* shadows: neither */
		bool inj = turn == RXP_AB_INJ;
		rxp_acc_record(&p->ab[inj ? (int)s : RXP_ST_COUNT + (int)s], t - last, pkts);
		rxp_probe_ab_pair(p, s, t - last, pkts, inj);
		/* an observed lap in the spin's own burst: no burst has ended
		 * since the injected (gated) lap whose turn it counts to */
		if (p->inject[s] == RXP_INJECT_OBSERVE && p->bursts == p->ab_inj_burst)
			rxp_probe_ab_pair_into(p, &p->abp[RXP_ST_COUNT + s], t - last, pkts, inj);
		/* an injected stage: its work alone, the spin left out (the
		 * clock where the lap would have ended; a plain lap's is its
		 * end): paired, what the spin did to the stage's own work,
		 * free of the credit one lap's spin hands the next */
		else if (p->inject[s] <= RXP_INJECT_NULL)
			rxp_probe_ab_pair_into(p, &p->abp[RXP_ST_COUNT + s], t0 - last, pkts, inj);
		if (inj && p->inject[s] < RXP_INJECT_NULL) { /* what the spin ran */
			p->inject_spun[s] += t - t0;
			p->inject_spun_pkts[s] += pkts;
		}
	}
	/* Invariant: the bookkeeping above, loads and stores alike, has
	 * completed before the next lap's clock read. An unordered read
	 * lets the bookkeeping run on into the next lap, and its stores (the
	 * pairs' bins, the half's sums; the injected half also writes the
	 * spin's sums) drain from the store buffer while the next laps run:
	 * unequal work in the two halves, read as the injection's effect.
	 * The measurements behind this fence: bench/costmodel/README.md,
	 * "Why the A/B is built as it is". */
#if defined(__x86_64__) || defined(__i386__)
	__asm__ __volatile__("mfence\n\tlfence" ::: "memory");
#elif defined(__aarch64__)
	__asm__ __volatile__("dsb ish\n\tisb" ::: "memory");
#endif
	p->last = rxp_now();
}

int rxp_inject_parse(const char *spec, enum rxp_stage *s, uint64_t *cycles)
{
	const char *eq = spec ? strchr(spec, '=') : NULL;
	if (!eq || eq == spec)
		return -EINVAL;
	char name[32];
	size_t len = (size_t)(eq - spec);
	if (len >= sizeof(name))
		return -EINVAL;
	memcpy(name, spec, len);
	name[len] = '\0';
	int id = rxp_stage_from_name(name);
	if (id < 0)
		return -EINVAL;
	uint64_t v;
	if (rxu_parse_u64(eq + 1, 0, 1000000000ull, &v) < 0)
		return -EINVAL;
	*s = (enum rxp_stage)id;
	*cycles = v;
	return 0;
}
