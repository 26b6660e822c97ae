/* SPDX-License-Identifier: MIT */
/*
 * Thread placement and device strings. Placement is decided once, before
 * anything starts: NIC first (sim only), then one RX worker per queue, then
 * app threads when they get cores of their own. Sharing a core between two
 * spinning threads would measure the scheduler, not the datapath, so it is
 * an error unless the user asks for it.
 */
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "rxray/core.h"
#include "rxray/util.h"

__attribute__((format(printf, 3, 4))) static int perr(char *err, size_t errlen, const char *fmt,
						       ...)
{
	if (err && errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* The cores a run may use: --cores, else the affinity mask. */
static int place_cores(const struct rx_config *c, int *out, char *err, size_t errlen)
{
	cpu_set_t allowed;
	CPU_ZERO(&allowed);
	if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0)
		return perr(err, errlen, "cores: cannot read the affinity mask: %s",
			    strerror(errno));
	if (c->ncores <= 0) {
		int n = 0;
		for (int i = 0; i < CPU_SETSIZE && n < RX_MAX_CORES; i++)
			if (CPU_ISSET(i, &allowed))
				out[n++] = i;
		return n;
	}
	for (int i = 0; i < c->ncores; i++) {
		int k = c->cores[i];
		if (k < 0 || k >= CPU_SETSIZE || !CPU_ISSET(k, &allowed))
			return perr(err, errlen, "cores: core %d is not available to this process",
				    k);
		for (int j = 0; j < i; j++)
			if (c->cores[j] == k)
				return perr(err, errlen, "cores: core %d listed twice", k);
		out[i] = k;
	}
	return c->ncores;
}

int rx_place(const struct rx_config *c, bool sim_nic, struct rx_placement *pl, char *err,
	     size_t errlen)
{
	int cores[RX_MAX_CORES];
	memset(pl, 0, sizeof(*pl));
	pl->nic_core = -1;
	for (int i = 0; i < RX_MAX_QUEUES; i++)
		pl->rx_core[i] = pl->app_core[i] = -1;
	int avail = place_cores(c, cores, err, errlen);
	if (avail < 0)
		return avail;
	return rx_place_on(c, sim_nic, cores, avail, pl, err, errlen);
}

int rx_place_on(const struct rx_config *c, bool sim_nic, const int *cores, int avail,
		struct rx_placement *pl, char *err, size_t errlen)
{
	memset(pl, 0, sizeof(*pl));
	pl->nic_core = -1;
	for (int i = 0; i < RX_MAX_QUEUES; i++)
		pl->rx_core[i] = pl->app_core[i] = -1;
	if (c->queues < 1 || c->queues > RX_MAX_QUEUES)
		return perr(err, errlen, "queues: %u out of range 1..%u", c->queues, RX_MAX_QUEUES);
	if (avail <= 0)
		return perr(err, errlen, "cores: no core available");
	int q = (int)c->queues;
	int base = (sim_nic ? 1 : 0) + q; /* nic + rx workers */
	enum rx_app app = c->app;
	if (app == RX_APP_AUTO)
		app = base + q <= avail ? RX_APP_THREAD : RX_APP_INLINE;
	int needed = base + (app == RX_APP_INLINE ? 0 : q);
	pl->app = app;
	pl->needed = needed;
	pl->available = avail;
	if (needed > avail && !c->allow_oversubscribe) {
		if (base > avail && q == 1)
			return perr(err, errlen,
				    "cores: %s needs %d cores (%sRX 1), %d available; give more --cores or --allow-oversubscribe",
				    sim_nic ? "a software NIC run" : "one queue", base,
				    sim_nic ? "NIC 1 + " : "", avail);
		if (base > avail)
			return perr(err, errlen,
				    "queues: %d queues need %d cores (%sRX %d), %d available; use fewer queues, more --cores, or --allow-oversubscribe",
				    q, base, sim_nic ? "NIC 1 + " : "", q, avail);
		return perr(err, errlen,
			    "app: %s threads need %d cores (%sRX %d + app %d), %d available; use --app inline, fewer queues, or --allow-oversubscribe",
			    rx_app_name(app), needed, sim_nic ? "NIC 1 + " : "", q, q, avail);
	}
	pl->oversubscribed = needed > avail;
	int k = 0;
	if (sim_nic)
		pl->nic_core = cores[k++ % avail];
	for (int i = 0; i < q; i++)
		pl->rx_core[i] = cores[k++ % avail];
	if (app != RX_APP_INLINE)
		for (int i = 0; i < q; i++)
			pl->app_core[i] = cores[k++ % avail];
	return 0;
}

json_t *rx_placement_to_json(const struct rx_placement *pl)
{
	json_t *o = json_object();
	json_t *rx = json_array();
	json_t *app = json_array();
	if (!o || !rx || !app) {
		json_decref(o);
		json_decref(rx);
		json_decref(app);
		return NULL;
	}
	for (int i = 0; i < RX_MAX_QUEUES && pl->rx_core[i] >= 0; i++) {
		json_array_append_new(rx, json_integer(pl->rx_core[i]));
		json_array_append_new(app, json_integer(pl->app_core[i]));
	}
	json_object_set_new(o, "nic", json_integer(pl->nic_core));
	json_object_set_new(o, "rx", rx);
	json_object_set_new(o, "app", app);
	json_object_set_new(o, "app_mode", json_string(rx_app_name(pl->app)));
	json_object_set_new(o, "needed", json_integer(pl->needed));
	json_object_set_new(o, "available", json_integer(pl->available));
	json_object_set_new(o, "oversubscribed", json_boolean(pl->oversubscribed));
	return o;
}

int rx_dev_parse(const char *device, struct rx_dev *d, char *err, size_t errlen)
{
	memset(d, 0, sizeof(*d));
	if (!device || !*device)
		return perr(err, errlen, "device: empty device string");
	const char *colon = strchr(device, ':');
	size_t klen = colon ? (size_t)(colon - device) : strlen(device);
	if (klen == 0)
		return perr(err, errlen, "device: '%s' has no kind before ':'", device);
	if (klen >= sizeof(d->kind))
		return perr(err, errlen, "device: kind '%.*s' too long", (int)klen, device);
	memcpy(d->kind, device, klen);
	if (colon) {
		if (strlen(colon + 1) >= sizeof(d->args))
			return perr(err, errlen, "device: options too long");
		snprintf(d->args, sizeof(d->args), "%s", colon + 1);
	}
	return 0;
}
