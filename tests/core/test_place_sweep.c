/* SPDX-License-Identifier: MIT */
/*
 * The sweep places a point before its trial starts (sweeps/place.c); the
 * trial's `rxray run` places again with rx_place on the cores the sweep
 * handed over. The two must agree: same cores needed, same NIC threads,
 * and infeasible exactly when rx_place refuses.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rxray/core.h"
#include "rxray/sweep.h"

Test(place_sweep, sweep_and_rx_place_agree)
{
	/* nics=2 on one queue is a config `rxray run` rejects, and so does the
	 * spec (tests/sweep/spec_test.c): queues start at 2 here */
	static const char yaml[] = "queues: [2, 3, 4]\n"
				   "app: [auto, inline, thread]\n"
				   "device: [sim, 'sim:nics=2', 'sim:rate=1M,nics=1']\n";
	struct sweep_spec *sp = NULL;
	struct sweep_point *pts = NULL;
	size_t n = 0;
	char err[SWEEP_ERR_LEN] = "";
	cr_assert_eq(sweep_spec_parse(yaml, strlen(yaml), "p.yaml", &sp, err, sizeof(err)), 0,
		     "%s", err);
	cr_assert_eq(sweep_matrix_expand(sp, &pts, &n, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(n, 27);
	int avail[16];
	for (int i = 0; i < 16; i++)
		avail[i] = i;
	int checked = 0, multi = 0;
	for (size_t i = 0; i < n; i++) {
		const struct sweep_point *p = &pts[i];
		for (int navail = 1; navail <= 16; navail++) {
			for (int over = 0; over < 2; over++) {
				struct sweep_place sw;
				struct rx_config c;
				struct rx_placement pl;
				char e[256] = "";
				cr_assert_eq(sweep_place_point(p, avail, navail, over, &sw), 0);
				rx_config_defaults(&c);
				c.queues = (uint32_t)p->k[SWEEP_K_QUEUES]->num;
				cr_assert_eq(rx_config_set(&c, "app", p->k[SWEEP_K_APP]->text, e,
							   sizeof(e)), 0, "%s", e);
				cr_assert_eq(rx_config_set(&c, "device", p->k[SWEEP_K_DEVICE]->text,
							   e, sizeof(e)), 0, "%s", e);
				c.allow_oversubscribe = over;
				const char *what = p->k[SWEEP_K_DEVICE]->text;
				if (!sw.feasible) {
					cr_assert_eq(rx_place_on(&c, true, avail, navail, &pl, e,
								 sizeof(e)),
						     -EINVAL, "%s q%u %s on %d: sweep says infeasible",
						     what, c.queues, p->k[SWEEP_K_APP]->text, navail);
					continue;
				}
				cr_assert_eq(rx_place_on(&c, true, sw.cores, sw.ncores, &pl, e,
							 sizeof(e)),
					     0, "%s q%u on %d: %s", what, c.queues, navail, e);
				cr_assert_eq(pl.needed, sw.needed, "%s q%u %s on %d cores", what,
					     c.queues, p->k[SWEEP_K_APP]->text, navail);
				cr_assert_eq(pl.nic_threads, sw.nic, "%s q%u on %d cores", what,
					     c.queues, navail);
				cr_assert_eq(pl.app == RX_APP_INLINE ? 0 : (int)c.queues, sw.app);
				cr_assert_eq(pl.oversubscribed, sw.oversubscribed);
				checked++;
				multi += pl.nic_threads > 1;
			}
		}
	}
	cr_assert_gt(checked, 100);
	cr_assert_gt(multi, 0, "some points ran several NIC threads");
	free(pts);
	sweep_spec_free(sp);
}
