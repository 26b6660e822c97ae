/* SPDX-License-Identifier: MIT */
/* The bound classifier on synthetic per-packet, per-byte and mixed data. */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>

#include "rxray/analyze.h"

static const double frames[] = {64, 1064, 2064, 4064, 8064};
#define NF (sizeof(frames) / sizeof(frames[0]))

/* Deterministic +-amp noise. */
static double wiggle(size_t i, double amp)
{
	static const double w[] = {0.3, -0.8, 0.5, -0.1, 0.9, -0.6};
	return amp * w[i % 6];
}

Test(bound, per_packet_flat_with_noise)
{
	double y[NF];
	for (size_t i = 0; i < NF; i++)
		y[i] = 250 + wiggle(i, 3); /* ns/packet, flat */
	struct rxa_fit f;
	cr_assert_eq(rxa_bound_fit(frames, y, NF, &f), 0);
	cr_expect_eq(f.bound, RXA_BOUND_PACKET, "share %f", f.byte_share);
	cr_expect(fabs(f.b) < 0.001, "b %f", f.b);
	cr_expect(fabs(f.a - 250) < 3, "a %f", f.a);
	cr_expect(f.rms > 0 && f.rms < 3, "rms %f", f.rms);
	cr_expect_str_eq(rxa_bound_name(f.bound), "per-packet");
}

Test(bound, per_byte_linear)
{
	double y[NF];
	for (size_t i = 0; i < NF; i++)
		y[i] = 5 + 0.08 * frames[i] + wiggle(i, 1); /* 0.08 ns/byte ~ 100 Gb/s */
	struct rxa_fit f;
	cr_assert_eq(rxa_bound_fit(frames, y, NF, &f), 0);
	cr_expect_eq(f.bound, RXA_BOUND_BYTE, "share %f", f.byte_share);
	cr_expect_float_eq(f.b, 0.08, 0.001);
	cr_expect(f.r2 > 0.999, "r2 %f", f.r2);
	cr_expect_str_eq(rxa_bound_name(f.bound), "per-byte");
}

Test(bound, exact_fit_values)
{
	/* y = 100 + 0.05x exactly: a, b recovered, R^2 = 1, residual 0 */
	double y[NF];
	for (size_t i = 0; i < NF; i++)
		y[i] = 100 + 0.05 * frames[i];
	struct rxa_fit f;
	cr_assert_eq(rxa_bound_fit(frames, y, NF, &f), 0);
	cr_expect_float_eq(f.a, 100, 1e-9);
	cr_expect_float_eq(f.b, 0.05, 1e-12);
	cr_expect_float_eq(f.r2, 1, 1e-12);
	cr_expect_float_eq(f.rms, 0, 1e-9);
	/* 0.05 x 8064 = 403.2 of 503.2 ns: 80% -> per-byte */
	cr_expect_float_eq(f.byte_share, 403.2 / 503.2, 1e-9);
	cr_expect_eq(f.bound, RXA_BOUND_BYTE);
	cr_expect_eq(f.n, NF);
}

Test(bound, mixed_between_thresholds)
{
	double y[NF];
	for (size_t i = 0; i < NF; i++)
		y[i] = 300 + 0.05 * frames[i]; /* 403 / 703 = 57% */
	struct rxa_fit f;
	cr_assert_eq(rxa_bound_fit(frames, y, NF, &f), 0);
	cr_expect_eq(f.bound, RXA_BOUND_MIXED, "share %f", f.byte_share);
}

Test(bound, residual_measures_misfit)
{
	/* a step is not a line: R^2 below 1 and a visible residual */
	double y[NF] = {100, 100, 100, 400, 400};
	struct rxa_fit f;
	cr_assert_eq(rxa_bound_fit(frames, y, NF, &f), 0);
	cr_expect(f.r2 < 0.95 && f.r2 > 0, "r2 %f", f.r2);
	cr_expect(f.rms > 20, "rms %f", f.rms);
	cr_expect(f.poor, "rel_rms %f", f.rel_rms); /* a step is not a line: flagged */
}

Test(bound, noisy_data_is_flagged)
{
	/* flat with +-60% scatter: a verdict, but marked not conclusive */
	double y[NF] = {1000, 300, 1600, 500, 1400};
	struct rxa_fit f;
	cr_assert_eq(rxa_bound_fit(frames, y, NF, &f), 0);
	cr_expect(f.poor, "rel_rms %f", f.rel_rms);
	cr_expect(f.rel_rms > 0.3);
	/* and clean data is not */
	double z[NF];
	for (size_t i = 0; i < NF; i++)
		z[i] = 250 + wiggle(i, 3);
	cr_assert_eq(rxa_bound_fit(frames, z, NF, &f), 0);
	cr_expect(!f.poor);
}

Test(bound, degenerate_inputs)
{
	double x[] = {1064, 1064, 1064}, y[] = {1, 2, 3};
	struct rxa_fit f;
	cr_expect_eq(rxa_bound_fit(x, y, 3, &f), -EINVAL);
	cr_expect_eq(rxa_bound_fit(frames, y, 1, &f), -EINVAL);
	double yn[NF] = {1, NAN, 3, 4, 5};
	cr_expect_eq(rxa_bound_fit(frames, yn, NF, &f), -EINVAL);
}

Test(bound, families_from_fixture)
{
	char err[RXA_ERR_LEN];
	struct rxa_set *s = NULL;
	cr_assert_eq(rxa_set_load(RXRAY_SRC_DIR "/tests/analyze/data/sweep", &s, err, sizeof(err)), 0, "%s", err);
	struct rxa_ceiling *c = calloc(s->n, sizeof(*c));
	for (size_t i = 0; i < s->n; i++)
		rxa_ceiling_compute(&s->pts[i], &c[i]);
	struct rxa_family *f = NULL;
	size_t nf = 0;
	cr_assert_eq(rxa_families_build(s, c, s->n, &f, &nf), 0);
	cr_expect_eq(nf, 5);
	int seen = 0;
	for (size_t i = 0; i < nf; i++) {
		if (!strcmp(f[i].label, "engine=verbs mode=single queues=1")) {
			seen++;
			cr_expect(f[i].have_cost);
			cr_expect_eq(f[i].cost.bound, RXA_BOUND_BYTE);
			/* app: 55 + 0.05 x frame cycles at 2 GHz -> ns = cycles / 2 */
			cr_expect_float_eq(f[i].cost.b, 0.025, 1e-9);
			cr_expect_float_eq(f[i].cost.a, 27.5, 1e-6);
			/* frames sorted */
			for (size_t k = 1; k < f[i].n; k++)
				cr_expect(rxa_knob_num(c[f[i].idx[k]].p->knobs, "frame", 0) >
					  rxa_knob_num(c[f[i].idx[k - 1]].p->knobs, "frame", 0));
		}
		if (!strcmp(f[i].label, "engine=dpdk mode=hds queues=1")) {
			seen++;
			cr_expect_eq(f[i].cost.bound, RXA_BOUND_PACKET);
			cr_expect_float_eq(f[i].cost.a, 250, 1e-6);
			/* measured: the generator-limited 8064 B point is left out */
			cr_expect(f[i].have_rate);
			cr_expect_eq(f[i].rate.n, 3);
			cr_expect_eq(f[i].rate.bound, RXA_BOUND_PACKET);
		}
		if (!strcmp(f[i].label, "engine=dpdk mode=hds queues=4")) {
			seen++;
			cr_expect(!f[i].have_cost && !f[i].have_rate);
		}
	}
	cr_expect_eq(seen, 3);
	rxa_families_free(f, nf);
	free(c);
	rxa_set_free(s);
}

/*
 * A point's label names the varying knobs it has: a verbs point in a sweep
 * that varies the dpdk mempool cache has no cache, and its label leaves the
 * knob out (it read "mempool_cache=-"); a dpdk point keeps it. Catches the
 * placeholder back, and a knob dropped from the points that have it.
 */
Test(label, leaves_out_a_varying_knob_the_point_lacks)
{
	const char *const vary[] = {"engine", "mempool_cache"};
	struct rxa_point v = {.knobs = json_pack("{s:s}", "engine", "verbs")};
	struct rxa_point d = {.knobs =
				  json_pack("{s:s,s:i}", "engine", "dpdk", "mempool_cache", 256)};
	cr_assert(v.knobs && d.knobs);
	char buf[128];
	rxa_point_label(&v, vary, 2, buf, sizeof(buf));
	cr_expect_str_eq(buf, "engine=verbs");
	rxa_point_label(&d, vary, 2, buf, sizeof(buf));
	cr_expect_str_eq(buf, "engine=dpdk mempool_cache=256");
	json_decref(v.knobs);
	json_decref(d.knobs);
}
