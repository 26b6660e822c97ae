/* Full mode: sampled per-burst laps in a bounded ring with overflow count. */
#undef RXRAY_PROBE_MODE
#define RXRAY_PROBE_MODE 2
#include <criterion/criterion.h>

#include "rxray/probe.h"

Test(modes, full_mode_samples_one_in_2k_into_bounded_ring)
{
	cr_assert_eq(rxp_clock_init(20), 0);
	struct rxp_probe *p = NULL;
	rxp_probe_open("rx", -1, 2, 64, &p, NULL, 0); /* 1 in 4 bursts */
	cr_assert_not_null(p);
	cr_assert_eq(p->ring_size, 64);
	rxp_lap_start(p);
	for (int b = 0; b < 40; b++) {
		rxp_burst_begin(p);
		rxp_lap(p, RXP_ST_CQE_POLL, 8);
		rxp_lap(p, RXP_ST_FREE, 8);
		rxp_burst_end(p, 8);
	}
	/* 10 sampled bursts x 2 laps = 20 records, no overflow */
	cr_assert_eq(p->ring_head, 20);
	cr_assert_eq(p->ring_overflow, 0);
	cr_assert_eq(p->busy_packets, 320);
	cr_assert_eq(p->st[RXP_ST_CQE_POLL].count, 40);
	struct rxp_sample s[64];
	size_t n = rxp_probe_samples(p, s, 64);
	cr_assert_eq(n, 20);
	cr_assert_eq(s[0].stage, RXP_ST_CQE_POLL);
	cr_assert_eq(s[1].stage, RXP_ST_FREE);
	cr_assert_eq(s[0].seq, 0);
	cr_assert_eq(s[2].seq, 4);
	cr_assert_geq(s[1].start, s[0].start);
	for (int b = 0; b < 400; b++) {
		rxp_burst_begin(p);
		rxp_lap(p, RXP_ST_CQE_POLL, 8);
		rxp_burst_end(p, 8);
	}
	cr_assert_eq(p->ring_head, 120);
	cr_assert_eq(p->ring_overflow, 120 - 64);
	cr_assert_eq(rxp_probe_samples(p, s, 64), 64);
	cr_assert_eq(s[63].seq, 436); /* the newest sampled burst */
	rxp_probe_free(p);
}
