/* SPDX-License-Identifier: MIT */
/*
 * Placement: which cores a point's trial gets. The decision is the
 * engines' own (core.h rx_place_on, asked with the point's config): the
 * software NIC's threads, one RX worker per queue, one app thread per
 * queue unless the app runs inline. The point is handed exactly the cores
 * it needs, so rx_place in the trial comes out the same.
 * The sweep decides before a trial starts, so a point that cannot get its
 * cores is recorded as infeasible instead of being measured oversubscribed.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rxray/engines.h"
#include "rxray/sweep.h"
#include "rxray/util.h"

int sweep_cores_available(const struct sweep_spec *spec, int *cores, int max)
{
	if (spec && spec->ncores > 0) {
		int n = spec->ncores < max ? spec->ncores : max;
		memcpy(cores, spec->cores, (size_t)n * sizeof(*cores));
		return n;
	}
	int n = rxu_cores_available();
	if (n > max)
		n = max;
	int got = 0;
	for (int i = 0; i < n; i++) {
		int c = rxu_core_nth(i);
		if (c >= 0)
			cores[got++] = c;
	}
	return got;
}

int sweep_place_point(const struct sweep_point *p, const int *avail, int navail, bool allow_over,
		      struct sweep_place *pl)
{
	struct rx_config c;
	struct rx_caps caps;
	struct rx_placement rp;
	char err[SWEEP_ERR_LEN] = "";
	memset(pl, 0, sizeof(*pl));
	if (navail <= 0)
		return -EINVAL;
	pl->available = navail;
	pl->rx = (int)sweep_point_knob(p, "queues")->num;
	/* the engines' own rule (rx_place_on), asked with oversubscription
	 * allowed so it reports what the point needs; the sweep decides */
	int rc = sweep_point_config(NULL, p, &c, err, sizeof(err));
	if (!rc) {
		unsigned flags = RX_CHECK_NO_PLACE;
		if (!rx_dev_caps_offline(c.device))
			flags |= RX_CHECK_NO_DEVICE;
		rc = rxe_check(&c, flags, &caps, NULL, err, sizeof(err));
	}
	if (!rc) {
		c.allow_oversubscribe = true;
		c.ncores = 0;
		rc = rx_place_on(&c, &caps, avail, navail, &rp, err, sizeof(err));
	}
	if (rc < 0) {
		/* cut at the reason's size, never mid-character */
		size_t n = rxu_utf8_prefix(err, strlen(err), sizeof(pl->reason) - 1);
		memcpy(pl->reason, err, n);
		pl->reason[n] = '\0';
		return 0;
	}
	pl->nic = rp.nic_all; /* every device thread (NIC threads x writers) */
	pl->app = rp.app == RX_APP_INLINE ? 0 : pl->rx;
	snprintf(pl->app_mode, sizeof(pl->app_mode), "%s", rx_app_name(rp.app));
	pl->needed = rp.needed;
	pl->feasible = true;
	if (pl->needed > navail) {
		if (!allow_over) {
			pl->feasible = false;
			snprintf(pl->reason, sizeof(pl->reason),
				 "needs %d cores (%d nic + %d rx + %d app), %d available; set "
				 "allow_oversubscribe to run it anyway",
				 pl->needed, pl->nic, pl->rx, pl->app, navail);
			return 0;
		}
		pl->oversubscribed = true;
	}
	/* oversubscribed: hand over every core, the engine doubles up */
	pl->ncores = pl->oversubscribed ? navail : pl->needed;
	if (pl->ncores > SWEEP_MAX_CORES)
		pl->ncores = SWEEP_MAX_CORES;
	memcpy(pl->cores, avail, (size_t)pl->ncores * sizeof(*avail));
	return 0;
}
