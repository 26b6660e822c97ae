/* SPDX-License-Identifier: MIT */
/*
 * The bottleneck is computed in one place (analyzers, rxa_run_predict):
 * the receive-side thread with the most busy cycles per packet, never the
 * software NIC (it is the generator).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rxray/analyze.h"

static void thread(struct rxr_thread_result *t, const char *role, uint64_t pkts, uint64_t busy)
{
	memset(t, 0, sizeof(*t));
	snprintf(t->role, sizeof(t->role), "%s", role);
	t->packets = pkts;
	t->busy_cycles = busy;
}

Test(bottleneck, the_nic_is_never_the_bottleneck)
{
	struct rxr_result *r = NULL;
	rxr_result_open(&r);
	cr_assert_not_null(r);
	r->threads = calloc(3, sizeof(*r->threads));
	r->nthreads = 3;
	r->clock.hz = 2e9;
	thread(&r->threads[0], "nic", 1000, 900000); /* 900 cycles/packet: dearest */
	thread(&r->threads[1], "rx", 1000, 400000);  /* 400 */
	thread(&r->threads[2], "app", 1000, 250000); /* 250 */
	int b = -1;
	double mpps = rxa_run_predict(r, NULL, 2, &b);
	cr_expect_eq(b, 1);
	cr_expect_float_eq(mpps, 2e9 / 400 * 2 / 1e6, 1e-9);
	/* a thread that handled nothing is never named */
	r->threads[1].packets = 0;
	rxa_run_predict(r, NULL, 1, &b);
	cr_expect_eq(b, 2);
	rxr_result_free(r);
}
