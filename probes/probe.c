/* SPDX-License-Identifier: MIT */
/* Probe contexts, accumulators, histograms and sampled laps. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rxray/inject.h"
#include "rxray/probe.h"
#include "rxray/util.h"

uint64_t rxp_hist_bucket_low(unsigned b)
{
	if (b < RXP_HIST_SUB)
		return b;
	unsigned e = (b - RXP_HIST_SUB) / RXP_HIST_SUB + RXP_HIST_SUB_BITS;
	unsigned sub = (b - RXP_HIST_SUB) % RXP_HIST_SUB;
	return (1ull << e) + ((uint64_t)sub << (e - RXP_HIST_SUB_BITS));
}

uint64_t rxp_hist_bucket_width(unsigned b)
{
	if (b < RXP_HIST_SUB)
		return 1;
	unsigned e = (b - RXP_HIST_SUB) / RXP_HIST_SUB + RXP_HIST_SUB_BITS;
	return 1ull << (e - RXP_HIST_SUB_BITS);
}

void rxp_acc_reset(struct rxp_acc *a)
{
	memset(a, 0, sizeof(*a));
	a->min = UINT64_MAX;
}

void rxp_acc_merge(struct rxp_acc *dst, const struct rxp_acc *src)
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
	for (unsigned i = 0; i < RXP_HIST_BUCKETS; i++)
		dst->hist[i] += src->hist[i];
}

void rxp_acc_sums(const struct rxp_acc *a, struct rxp_lapsums *out)
{
	out->n = (double)(a->count - a->excl_count);
	out->sx = (double)(a->packets - a->excl_packets);
	out->sy = (double)(a->cycles - a->excl_cycles);
	out->sxx = (double)a->sum_pp;
	out->sxy = (double)a->sum_cp;
	out->syy = a->sum_cc;
}

void rxp_lapsums_add(struct rxp_lapsums *dst, const struct rxp_lapsums *src)
{
	dst->n += src->n;
	dst->sx += src->sx;
	dst->sy += src->sy;
	dst->sxx += src->sxx;
	dst->sxy += src->sxy;
	dst->syy += src->syy;
}

void rxp_lapsums_fit(const struct rxp_lapsums *s, struct rxp_lapfit *f)
{
	memset(f, 0, sizeof(*f));
	if (s->n <= 0 || s->sx <= 0) {
		f->basis = RXP_LAPFIT_NONE;
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
		f->basis = RXP_LAPFIT_PER_PACKET;
		f->b = s->sy / s->sx;
		return;
	}
	f->basis = RXP_LAPFIT_LINEAR;
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

uint64_t rxp_acc_percentile(const struct rxp_acc *a, double q)
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
	for (unsigned b = 0; b < RXP_HIST_BUCKETS; b++) {
		seen += a->hist[b];
		if (seen < rank)
			continue;
		uint64_t w = rxp_hist_bucket_width(b);
		uint64_t v = rxp_hist_bucket_low(b) + (w - 1) / 2;
		if (v < a->min)
			v = a->min;
		if (v > a->max)
			v = a->max;
		return v;
	}
	return a->max;
}

int rxp_probe_open(const char *role, int core, unsigned sample_shift, uint32_t ring_size,
		   struct rxp_probe **out, char *err, size_t errlen)
{
	*out = NULL;
	if (!role || strlen(role) >= sizeof(((struct rxp_probe *)0)->role))
		return rxu_errf(err, errlen, -EINVAL, "probe: role \"%s\" missing or > %zu bytes",
				role ? role : "(null)", sizeof(((struct rxp_probe *)0)->role) - 1);
	if (sample_shift > 31)
		return rxu_errf(err, errlen, -EINVAL, "probe: sample shift %u is above 31",
				sample_shift);
	struct rxp_probe *p = aligned_alloc(64, sizeof(*p));
	if (!p)
		return rxu_errf(err, errlen, -ENOMEM, "probe: out of memory");
	memset(p, 0, sizeof(*p));
	snprintf(p->role, sizeof(p->role), "%s", role);
	p->core = core;
	p->sample_mask = (1u << sample_shift) - 1;
	for (int s = 0; s < RXP_ST_COUNT; s++)
		rxp_acc_reset(&p->st[s]);
	/* The ring exists in full builds, or when a caller asks for one (a
	 * translation unit compiled in full mode over a counters library). */
	if (RXRAY_PROBE_MODE == RXP_MODE_FULL || ring_size) {
		uint32_t n = ring_size ? ring_size : 4096;
		uint32_t pow2 = 1;
		while (pow2 < n && pow2 < (1u << 24))
			pow2 <<= 1;
		p->ring = calloc(pow2, sizeof(*p->ring));
		if (!p->ring) {
			free(p);
			return rxu_errf(err, errlen, -ENOMEM, "probe: out of memory");
		}
		p->ring_size = pow2;
	}
	p->last = rxp_now();
	*out = p;
	return 0;
}

void rxp_probe_free(struct rxp_probe *p)
{
	if (!p)
		return;
	free(p->ring);
	free(p->ab);
	free(p->abp);
	free(p);
}

void rxp_probe_reset(struct rxp_probe *p)
{
	for (int s = 0; s < RXP_ST_COUNT; s++)
		rxp_acc_reset(&p->st[s]);
	p->busy_packets = 0;
	p->bursts = 0;
	p->sample_seq = 0;
	p->ring_head = 0;
	p->ring_overflow = 0;
	rxp_inject_reset(p);
	p->last = rxp_now();
}

uint64_t rxp_probe_busy_cycles(const struct rxp_probe *p)
{
	uint64_t sum = 0;
	for (int s = 0; s < RXP_ST_COUNT; s++)
		if (!rxp_stage_is_wait(s))
			sum += p->st[s].cycles;
	return sum;
}

void rxp_probe_merge(struct rxp_probe *dst, const struct rxp_probe *src)
{
	for (int s = 0; s < RXP_ST_COUNT; s++)
		rxp_acc_merge(&dst->st[s], &src->st[s]);
	rxp_inject_merge(dst, src);
	dst->busy_packets += src->busy_packets;
	dst->bursts += src->bursts;
	dst->ring_overflow += src->ring_overflow;
}

void rxp_sample_record(struct rxp_probe *p, enum rxp_stage s, uint64_t start, uint64_t cyc)
{
	if (!p->ring_size)
		return;
	if (p->ring_head >= p->ring_size)
		p->ring_overflow++;
	struct rxp_sample *r = &p->ring[p->ring_head & (p->ring_size - 1)];
	r->start = start;
	r->cycles = cyc > UINT32_MAX ? UINT32_MAX : (uint32_t)cyc;
	r->stage = (uint16_t)s;
	r->thread = p->thread_id;
	r->seq = p->sample_seq - 1;
	p->ring_head++;
}

size_t rxp_probe_samples(const struct rxp_probe *p, struct rxp_sample *out, size_t max)
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

int rxp_clock_init(unsigned calib_ms)
{
	int rc = rxp_clock_pick(calib_ms);
	if (rc)
		return rc;
	rxp_clock_set_lap_cost(rxp_probe_measure_lap_cost(0));
	return 0;
}

double rxp_probe_measure_lap_cost(unsigned iters)
{
	enum { PER_ROUND = 256, MAX_ROUNDS = 2048 };
	if (!iters)
		iters = 100000;
	unsigned rounds = iters / PER_ROUND;
	if (rounds < 9)
		rounds = 9;
	if (rounds > MAX_ROUNDS)
		rounds = MAX_ROUNDS;
	struct rxp_probe *p = NULL;
	rxp_probe_open("cal", -1, 0, 0, &p, NULL, 0);
	uint64_t *cost = malloc(rounds * sizeof(*cost));
	if (!p || !cost) {
		rxp_probe_free(p);
		free(cost);
		return 0;
	}
	for (unsigned r = 0; r < rounds; r++) {
		uint64_t t0 = rxp_now();
		rxp_lap_start(p);
		for (unsigned i = 0; i < PER_ROUND; i++)
			rxp_lap(p, (enum rxp_stage)(i & 3), 1);
		cost[r] = rxp_now() - t0;
	}
	qsort(cost, rounds, sizeof(*cost), cmp_u64);
	double med = (double)cost[rounds / 2] / PER_ROUND;
	free(cost);
	rxp_probe_free(p);
	return med;
}
