/* SPDX-License-Identifier: MIT */
/* Probe contexts, accumulators, histograms and sampled laps. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rxray/probe.h"
#include "rxray/util.h"

static const char *const stage_names[RXR_ST_COUNT] = {
    [RXR_ST_CQE_POLL] = "cqe_poll",
    [RXR_ST_BUF_ALLOC] = "buf_alloc",
    [RXR_ST_SGE_SETUP] = "sge_setup",
    [RXR_ST_HDR_WRITE] = "hdr_write",
    [RXR_ST_HDR_READ] = "hdr_read",
    [RXR_ST_CHAIN] = "chain",
    [RXR_ST_DOORBELL] = "doorbell",
    [RXR_ST_HANDOFF] = "handoff",
    [RXR_ST_APP] = "app",
    [RXR_ST_FREE] = "free",
    [RXR_ST_GPU] = "gpu",
    [RXR_ST_IDLE] = "idle",
    [RXR_ST_PAYLOAD_WRITE] = "payload_write",
    [RXR_ST_CQE_WRITE] = "cqe_write",
    [RXR_ST_PAYLOAD_DMA] = "payload_dma",
    [RXR_ST_GPU_LAUNCH] = "gpu_launch",
    [RXR_ST_GPU_WAIT] = "gpu_wait",
    [RXR_ST_GPU_KERNEL] = "gpu_kernel",
};

const char *rxr_stage_name(enum rxr_stage s)
{
	return (unsigned)s < RXR_ST_COUNT ? stage_names[s] : NULL;
}

int rxr_stage_from_name(const char *name)
{
	for (int i = 0; name && i < RXR_ST_COUNT; i++)
		if (!strcmp(stage_names[i], name))
			return i;
	return -1;
}

uint64_t rxr_hist_bucket_low(unsigned b)
{
	if (b < RXR_HIST_SUB)
		return b;
	unsigned e = (b - RXR_HIST_SUB) / RXR_HIST_SUB + RXR_HIST_SUB_BITS;
	unsigned sub = (b - RXR_HIST_SUB) % RXR_HIST_SUB;
	return (1ull << e) + ((uint64_t)sub << (e - RXR_HIST_SUB_BITS));
}

uint64_t rxr_hist_bucket_width(unsigned b)
{
	if (b < RXR_HIST_SUB)
		return 1;
	unsigned e = (b - RXR_HIST_SUB) / RXR_HIST_SUB + RXR_HIST_SUB_BITS;
	return 1ull << (e - RXR_HIST_SUB_BITS);
}

void rxr_acc_reset(struct rxr_acc *a)
{
	memset(a, 0, sizeof(*a));
	a->min = UINT64_MAX;
}

void rxr_acc_merge(struct rxr_acc *dst, const struct rxr_acc *src)
{
	if (!src->count)
		return;
	dst->count += src->count;
	dst->packets += src->packets;
	dst->cycles += src->cycles;
	dst->sum_pp += src->sum_pp;
	dst->sum_cp += src->sum_cp;
	dst->sum_cc += src->sum_cc;
	dst->excl_count += src->excl_count;
	dst->excl_packets += src->excl_packets;
	dst->excl_cycles += src->excl_cycles;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
	for (unsigned i = 0; i < RXR_HIST_BUCKETS; i++)
		dst->hist[i] += src->hist[i];
}

void rxr_acc_sums(const struct rxr_acc *a, struct rxr_lapsums *out)
{
	out->n = (double)(a->count - a->excl_count);
	out->sx = (double)(a->packets - a->excl_packets);
	out->sy = (double)(a->cycles - a->excl_cycles);
	out->sxx = (double)a->sum_pp;
	out->sxy = (double)a->sum_cp;
	out->syy = a->sum_cc;
}

void rxr_lapsums_add(struct rxr_lapsums *dst, const struct rxr_lapsums *src)
{
	dst->n += src->n;
	dst->sx += src->sx;
	dst->sy += src->sy;
	dst->sxx += src->sxx;
	dst->sxy += src->sxy;
	dst->syy += src->syy;
}

void rxr_lapsums_fit(const struct rxr_lapsums *s, struct rxr_lapfit *f)
{
	memset(f, 0, sizeof(*f));
	if (s->n <= 0 || s->sx <= 0) {
		f->basis = RXR_LAPFIT_NONE;
		return;
	}
	/* centred sums in long double: raw sums reach 1e20 and the
	 * differences that matter are far smaller */
	long double n = s->n, mx = s->sx / n, my = s->sy / n;
	long double cxx = s->sxx - n * mx * mx;
	long double cxy = s->sxy - n * mx * my;
	long double cyy = s->syy - n * my * my;
	f->mean_pkts = (double)mx;
	/* relative spread of packets per lap: below 10%, a and b cannot be
	 * told apart (laps of a fixed count); the cost per packet is then
	 * the only thing the laps say */
	long double var = cxx / n;
	if (var <= 0 || var < 0.01L * mx * mx) {
		f->basis = RXR_LAPFIT_PER_PACKET;
		f->b = s->sy / s->sx;
		return;
	}
	f->basis = RXR_LAPFIT_LINEAR;
	long double b = cxy / cxx;
	f->b = (double)b;
	f->a = (double)(my - b * mx);
	if (cyy > 0) {
		long double r2 = (b * cxy) / cyy;
		f->r2 = (double)(r2 < 0 ? 0 : r2 > 1 ? 1 : r2);
	} else {
		f->r2 = 1; /* every lap on the line */
	}
}

uint64_t rxr_acc_percentile(const struct rxr_acc *a, double q)
{
	if (!a->count)
		return 0;
	if (q < 0)
		q = 0;
	if (q > 1)
		q = 1;
	/* rank of the wanted value, 1-based: the smallest r with r >= q*count */
	uint64_t rank = (uint64_t)(q * (double)a->count);
	if ((double)rank < q * (double)a->count)
		rank++;
	if (rank == 0)
		rank = 1;
	uint64_t seen = 0;
	for (unsigned b = 0; b < RXR_HIST_BUCKETS; b++) {
		seen += a->hist[b];
		if (seen < rank)
			continue;
		uint64_t w = rxr_hist_bucket_width(b);
		uint64_t v = rxr_hist_bucket_low(b) + (w - 1) / 2;
		if (v < a->min)
			v = a->min;
		if (v > a->max)
			v = a->max;
		return v;
	}
	return a->max;
}

int rxr_probe_open(const char *role, int core, unsigned sample_shift, uint32_t ring_size,
		   struct rxr_probe **out, char *err, size_t errlen)
{
	*out = NULL;
	if (!role || strlen(role) >= sizeof(((struct rxr_probe *)0)->role))
		return rxr_errf(err, errlen, -EINVAL, "probe: role \"%s\" missing or > %zu bytes",
				role ? role : "(null)", sizeof(((struct rxr_probe *)0)->role) - 1);
	if (sample_shift > 31)
		return rxr_errf(err, errlen, -EINVAL, "probe: sample shift %u is above 31",
				sample_shift);
	struct rxr_probe *p = aligned_alloc(64, sizeof(*p));
	if (!p)
		return rxr_errf(err, errlen, -ENOMEM, "probe: out of memory");
	memset(p, 0, sizeof(*p));
	snprintf(p->role, sizeof(p->role), "%s", role);
	p->core = core;
	p->sample_mask = (1u << sample_shift) - 1;
	for (int s = 0; s < RXR_ST_COUNT; s++)
		rxr_acc_reset(&p->st[s]);
	/* The ring exists in full builds, or when a caller asks for one (a
	 * translation unit compiled in full mode over a counters library). */
	if (RXRAY_PROBE_MODE == RXR_MODE_FULL || ring_size) {
		uint32_t n = ring_size ? ring_size : 4096;
		uint32_t pow2 = 1;
		while (pow2 < n && pow2 < (1u << 24))
			pow2 <<= 1;
		p->ring = calloc(pow2, sizeof(*p->ring));
		if (!p->ring) {
			free(p);
			return rxr_errf(err, errlen, -ENOMEM, "probe: out of memory");
		}
		p->ring_size = pow2;
	}
	p->last = rxr_now();
	*out = p;
	return 0;
}

void rxr_probe_free(struct rxr_probe *p)
{
	if (!p)
		return;
	free(p->ring);
	free(p->ab);
	free(p->abp);
	free(p);
}

/* The operation-delay gate's pairs trim at its own window (the delays'
 * own stage only; rxr_probe_set_op_gate). */
static void ab_gate_trim(struct rxr_probe *p)
{
	for (int s = 0; p->op_gate && p->abp && s < RXR_ST_COUNT; s++)
		if (p->inject[s] == RXR_INJECT_GATE)
			p->abp[s].trim = p->ab_trim;
}

void rxr_probe_reset(struct rxr_probe *p)
{
	for (int s = 0; s < RXR_ST_COUNT; s++)
		rxr_acc_reset(&p->st[s]);
	p->busy_packets = 0;
	p->bursts = 0;
	p->sample_seq = 0;
	p->ring_head = 0;
	p->ring_overflow = 0;
	memset(p->inject_debt, 0, sizeof(p->inject_debt));
	memset(p->inject_spun, 0, sizeof(p->inject_spun));
	memset(p->inject_spun_pkts, 0, sizeof(p->inject_spun_pkts));
	memset(p->inject_dropped, 0, sizeof(p->inject_dropped));
	memset(p->inject_drops, 0, sizeof(p->inject_drops));
	for (int s = 0; p->ab && s < 2 * RXR_ST_COUNT; s++)
		rxr_acc_reset(&p->ab[s]);
	if (p->abp) {
		memset(p->abp, 0, 2 * RXR_ST_COUNT * sizeof(*p->abp));
		ab_gate_trim(p);
	}
	/* the last lap was a shadow: nothing observed counts until a turn
	 * starts (gate_turn goes on: the thread's armed state follows it) */
	p->ab_phase = RXR_AB_PERIOD - 1;
	p->last = rxr_now();
}

void rxr_probe_set_inject(struct rxr_probe *p, enum rxr_stage s, uint64_t ticks)
{
	if ((unsigned)s < RXR_ST_COUNT)
		p->inject[s] = ticks;
}

int rxr_probe_set_inject_ab(struct rxr_probe *p, bool on)
{
	if (!on) {
		free(p->ab);
		free(p->abp);
		p->ab = NULL;
		p->abp = NULL;
		for (int s = 0; s < RXR_ST_COUNT; s++)
			if (p->inject[s] >= RXR_INJECT_NULL) /* observed, the gate,
							      * paying, nothing */
				p->inject[s] = 0;
		p->op_gate = false;
		return 0;
	}
	if (!p->ab) {
		struct rxr_acc *ab = malloc(2 * RXR_ST_COUNT * sizeof(*ab));
		struct rxr_ab_pairs *abp = calloc(2 * RXR_ST_COUNT, sizeof(*abp));
		if (!ab || !abp) {
			free(ab);
			free(abp);
			return -ENOMEM;
		}
		for (int s = 0; s < 2 * RXR_ST_COUNT; s++)
			rxr_acc_reset(&ab[s]);
		p->ab = ab;
		p->abp = abp;
	}
	/* a probe with an injected stage observes all its others (a thread
	 * with none keeps its laps as they are: nothing to compare) */
	bool any = false;
	for (int s = 0; s < RXR_ST_COUNT; s++)
		any |= p->inject[s] != 0 && p->inject[s] != RXR_INJECT_OBSERVE &&
		       p->inject[s] != RXR_INJECT_PAY;
	for (int s = 0; any && s < RXR_ST_COUNT; s++)
		if (!p->inject[s] && !rxr_stage_is_wait(s))
			p->inject[s] = RXR_INJECT_OBSERVE;
	p->ab_phase = RXR_AB_PERIOD - 1;
	if (!p->ab_rng)
		p->ab_rng = (rxr_now() ^ (uint64_t)(uintptr_t)p) | 1;
	return 0;
}

__thread bool rxr_op_armed = true;
__thread uint64_t rxr_op_owed;
static __thread int64_t op_debt; /* ticks paid beyond (+) or short of (-) */

uint64_t rxr_op_pay(uint64_t t0)
{
	/* the carried over-run stays within RXR_INJECT_STRETCH_MAX: a longer
	 * one is dropped (rxr_inject_settle) */
	int64_t want = (int64_t)rxr_op_owed, dropped;
	rxr_op_owed = 0;
	if (!rxr_op_armed)
		return t0;
	return rxr_spin_owed(t0, want, &op_debt, RXR_INJECT_STRETCH_MAX, &dropped);
}

int rxr_probe_set_op_pay(struct rxr_probe *p)
{
	for (int s = 0; s < RXR_ST_COUNT; s++)
		if (!p->inject[s])
			p->inject[s] = rxr_stage_is_wait(s) ? RXR_INJECT_PAY : RXR_INJECT_OBSERVE;
	return 0;
}

int rxr_probe_set_op_gate(struct rxr_probe *p, enum rxr_stage s, uint32_t k)
{
	if ((unsigned)s >= RXR_ST_COUNT || rxr_stage_is_wait(s))
		return -EINVAL;
	p->inject[s] = RXR_INJECT_GATE;
	p->op_gate = true;
	p->gate_turn = RXR_AB_INJ; /* rxr_op_armed starts true */
	p->ab_trim = RXR_AB_TRIM + 2.0 * k;
	int rc = rxr_probe_set_inject_ab(p, true);
	if (!rc) {
		ab_gate_trim(p);
		rc = rxr_probe_set_op_pay(p); /* the waits pay their operations */
	}
	return rc;
}

void rxr_probe_ab_pair(struct rxr_probe *p, enum rxr_stage s, uint64_t cycles, uint32_t pkts,
		       bool injected)
{
	rxr_probe_ab_pair_into(p, &p->abp[s], cycles, pkts, injected);
}

void rxr_probe_ab_pair_into(struct rxr_probe *p, struct rxr_ab_pairs *a, uint64_t cycles,
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
	double d = nearbyint(injected ? cpp - a->pend : a->pend - cpp) - RXR_AB_LO;
	uint64_t w = pkts ? pkts : 1;
	a->n++;
	a->wn += w;
	if (d < 0) {
		a->under++;
		a->wunder += w;
	} else if (d >= RXR_AB_BINS) {
		a->over++;
		a->wover += w;
	} else {
		a->bin[(size_t)d]++;
		a->wbin[(size_t)d] += w;
	}
}

double rxr_ab_pairs_median(const struct rxr_ab_pairs *a, uint64_t *pairs)
{
	if (pairs)
		*pairs = a->n;
	double half = (double)a->wn / 2;
	if (!a->wn || (double)a->wunder >= half || (double)a->wover >= half)
		return NAN;
	double cum = (double)a->wunder;
	for (size_t b = 0; b < RXR_AB_BINS; b++) {
		double w = (double)a->wbin[b];
		if (cum + w >= half && w > 0)
			/* spread evenly over the bin [b - 1/2, b + 1/2) */
			return RXR_AB_LO + (double)b - 0.5 + (half - cum) / w;
		cum += w;
	}
	return NAN;
}

double rxr_ab_pairs_trim(const struct rxr_ab_pairs *a)
{
	return a->trim > RXR_AB_TRIM ? a->trim : RXR_AB_TRIM;
}

double rxr_ab_pairs_trimmed_mean(const struct rxr_ab_pairs *a, uint64_t *kept)
{
	double m = rxr_ab_pairs_median(a, NULL), sum = 0, w = 0;
	uint64_t n = 0;
	if (kept)
		*kept = 0;
	if (!isfinite(m))
		return NAN;
	for (size_t b = 0; b < RXR_AB_BINS; b++) {
		double v = RXR_AB_LO + (double)b; /* the bin's centre */
		if (!a->bin[b] || fabs(v - m) > rxr_ab_pairs_trim(a))
			continue;
		sum += v * (double)a->wbin[b];
		w += (double)a->wbin[b];
		n += a->bin[b];
	}
	if (kept)
		*kept = n;
	return w > 0 ? sum / w : NAN;
}

uint64_t rxr_probe_busy_cycles(const struct rxr_probe *p)
{
	uint64_t sum = 0;
	for (int s = 0; s < RXR_ST_COUNT; s++)
		if (!rxr_stage_is_wait(s))
			sum += p->st[s].cycles;
	return sum;
}

/* Pairs add (what is held unpaired stays the destination's). */
static void ab_pairs_merge(struct rxr_ab_pairs *d, const struct rxr_ab_pairs *o)
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
	for (size_t b = 0; b < RXR_AB_BINS; b++) {
		d->bin[b] += o->bin[b];
		d->wbin[b] += o->wbin[b];
	}
}

void rxr_probe_merge(struct rxr_probe *dst, const struct rxr_probe *src)
{
	for (int s = 0; s < RXR_ST_COUNT; s++) {
		rxr_acc_merge(&dst->st[s], &src->st[s]);
		dst->inject_spun[s] += src->inject_spun[s];
		dst->inject_spun_pkts[s] += src->inject_spun_pkts[s];
		dst->inject_dropped[s] += src->inject_dropped[s];
		dst->inject_drops[s] += src->inject_drops[s];
		if (dst->ab && src->ab) {
			rxr_acc_merge(&dst->ab[s], &src->ab[s]);
			rxr_acc_merge(&dst->ab[RXR_ST_COUNT + s], &src->ab[RXR_ST_COUNT + s]);
			ab_pairs_merge(&dst->abp[s], &src->abp[s]);
			ab_pairs_merge(&dst->abp[RXR_ST_COUNT + s], &src->abp[RXR_ST_COUNT + s]);
		}
	}
	dst->busy_packets += src->busy_packets;
	dst->bursts += src->bursts;
	dst->ring_overflow += src->ring_overflow;
}

void rxr_sample_record(struct rxr_probe *p, enum rxr_stage s, uint64_t start, uint64_t cyc)
{
	if (!p->ring_size)
		return;
	if (p->ring_head >= p->ring_size)
		p->ring_overflow++;
	struct rxr_sample *r = &p->ring[p->ring_head & (p->ring_size - 1)];
	r->start = start;
	r->cycles = cyc > UINT32_MAX ? UINT32_MAX : (uint32_t)cyc;
	r->stage = (uint16_t)s;
	r->thread = p->thread_id;
	r->seq = p->sample_seq - 1;
	p->ring_head++;
}

size_t rxr_probe_samples(const struct rxr_probe *p, struct rxr_sample *out, size_t max)
{
	if (!p->ring_size)
		return 0;
	uint64_t n = p->ring_head < p->ring_size ? p->ring_head : p->ring_size;
	uint64_t first = p->ring_head - n;
	size_t k = 0;
	for (uint64_t i = first; i < p->ring_head && k < max; i++)
		out[k++] = p->ring[i & (p->ring_size - 1)];
	return k;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

double rxr_probe_measure_lap_cost(unsigned iters)
{
	enum { PER_ROUND = 256, MAX_ROUNDS = 2048 };
	if (!iters)
		iters = 100000;
	unsigned rounds = iters / PER_ROUND;
	if (rounds < 9)
		rounds = 9;
	if (rounds > MAX_ROUNDS)
		rounds = MAX_ROUNDS;
	struct rxr_probe *p = NULL;
	rxr_probe_open("cal", -1, 0, 0, &p, NULL, 0);
	uint64_t *cost = malloc(rounds * sizeof(*cost));
	if (!p || !cost) {
		rxr_probe_free(p);
		free(cost);
		return 0;
	}
	for (unsigned r = 0; r < rounds; r++) {
		uint64_t t0 = rxr_now();
		rxr_lap_start(p);
		for (unsigned i = 0; i < PER_ROUND; i++)
			rxr_lap(p, (enum rxr_stage)(i & 3), 1);
		cost[r] = rxr_now() - t0;
	}
	qsort(cost, rounds, sizeof(*cost), cmp_u64);
	double med = (double)cost[rounds / 2] / PER_ROUND;
	free(cost);
	rxr_probe_free(p);
	return med;
}

int rxr_inject_parse(const char *spec, enum rxr_stage *s, uint64_t *cycles)
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
	int id = rxr_stage_from_name(name);
	if (id < 0)
		return -EINVAL;
	uint64_t v;
	if (rxr_parse_u64(eq + 1, 0, 1000000000ull, &v) < 0)
		return -EINVAL;
	*s = (enum rxr_stage)id;
	*cycles = v;
	return 0;
}
