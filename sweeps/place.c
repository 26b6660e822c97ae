/* SPDX-License-Identifier: MIT */
/*
 * Placement: which core each of a point's threads gets. The rule matches
 * the engines' own (core.h rx_place): the software NIC's threads on sim
 * devices (the device's "nics=N", else as many as the cores left over allow,
 * one per queue at most, like rx_place), one RX worker per queue, one app
 * thread per queue unless the app runs inline. The point is handed exactly
 * the cores it needs, so rx_place's automatic NIC thread count (the cores
 * left after RX and app threads, at least 1) comes out the same.
 * The sweep decides before a trial starts, so a point that cannot get its
 * cores is recorded as infeasible instead of being measured oversubscribed.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rxray/sweep.h"
#include "rxray/util.h"

int sweep_cores_parse(const char *s, int *cores, int max)
{
	int n = 0;
	if (!s || !*s)
		return -EINVAL;
	while (*s) {
		if (!isdigit((unsigned char)*s))
			return -EINVAL;
		char *end;
		long a = strtol(s, &end, 10), b = a;
		if (*end == '-') {
			if (!isdigit((unsigned char)end[1]))
				return -EINVAL;
			b = strtol(end + 1, &end, 10);
		}
		if (a < 0 || b < a || b > 4095)
			return -EINVAL;
		for (long c = a; c <= b; c++) {
			if (n >= max)
				return -EINVAL;
			for (int j = 0; j < n; j++)
				if (cores[j] == c)
					return -EINVAL;
			cores[n++] = (int)c;
		}
		if (*end == ',')
			end++;
		else if (*end)
			return -EINVAL;
		s = end;
	}
	return n;
}

int sweep_cores_available(const struct sweep_spec *spec, int *cores, int max)
{
	if (spec && spec->ncores > 0) {
		int n = spec->ncores < max ? spec->ncores : max;
		memcpy(cores, spec->cores, (size_t)n * sizeof(*cores));
		return n;
	}
	int n = rxr_cores_available();
	if (n > max)
		n = max;
	int got = 0;
	for (int i = 0; i < n; i++) {
		int c = rxr_core_nth(i);
		if (c >= 0)
			cores[got++] = c;
	}
	return got;
}

/* NIC threads a point asks for: 0 off sim, the device's nics=N, -2 when
 * the device leaves it to placement (auto), -1 when nics= is not a number
 * in 1..64. */
static int place_nics(const struct sweep_point *p)
{
	if (!sweep_point_is_sim(p))
		return 0;
	int n = -2;
	for (const char *s = strstr(p->k[SWEEP_K_DEVICE]->text, "nics="); s;
	     s = strstr(s + 1, "nics=")) {
		if (s[-1] != ':' && s[-1] != ',')
			continue;
		char *end;
		long v = strtol(s + 5, &end, 10);
		if (!isdigit((unsigned char)s[5]) || (*end && *end != ',') || v < 1 || v > 64)
			return -1;
		n = (int)v;
	}
	return n;
}

int sweep_place_point(const struct sweep_point *p, const int *avail, int navail, bool allow_over,
		      struct sweep_place *pl)
{
	memset(pl, 0, sizeof(*pl));
	if (navail <= 0)
		return -EINVAL;
	int q = (int)p->k[SWEEP_K_QUEUES]->num;
	const char *app = p->k[SWEEP_K_APP] ? p->k[SWEEP_K_APP]->text : "auto";
	pl->nic = place_nics(p);
	pl->rx = q;
	pl->available = navail;
	/* auto: the app is decided as if with one NIC thread, then the NIC gets
	 * what is left, one thread per queue at most (the rule of rx_place) */
	bool nic_auto = pl->nic == -2;
	if (nic_auto)
		pl->nic = 1;
	if (pl->nic < 0 || pl->nic > q) {
		pl->nic = pl->nic < 0 ? 0 : pl->nic;
		if (pl->nic)
			snprintf(pl->reason, sizeof(pl->reason),
				 "nics=%d NIC threads for %d queues; each NIC thread owns a queue",
				 pl->nic, q);
		else
			snprintf(pl->reason, sizeof(pl->reason),
				 "device: nics= is not a number in 1..64");
		return 0;
	}
	if (!strcmp(app, "inline")) {
		pl->app = 0;
	} else if (!strcmp(app, "auto")) {
		/* an app thread per queue when the cores allow, else inline */
		pl->app = pl->nic + 2 * q <= navail ? q : 0;
		app = pl->app ? "thread" : "inline";
	} else {
		pl->app = q; /* thread, eal */
	}
	snprintf(pl->app_mode, sizeof(pl->app_mode), "%.15s", app);
	if (nic_auto) {
		int left = navail - pl->rx - pl->app;
		pl->nic = left < 1 ? 1 : left > q ? q : left;
	}
	pl->needed = pl->nic + pl->rx + pl->app;
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
