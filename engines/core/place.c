/* SPDX-License-Identifier: MIT */
/*
 * Thread placement and device strings. Placement is decided once, before
 * anything starts: the device's own threads first (the software NIC, which
 * sizes them: rx_dev_ops), then one RX worker per queue, then app threads
 * when they get cores of their own. Sharing a core between two spinning
 * threads would measure the scheduler, not the datapath, so it is an
 * error unless the user asks for it.
 */
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "rxray/core.h"
#include "rxray/util.h"

/* one error line, -EINVAL (rxu_errf) */
#define perr(err, errlen, ...) rxu_errf(err, errlen, -EINVAL, __VA_ARGS__)

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

static void place_reset(struct rx_placement *pl)
{
	memset(pl, 0, sizeof(*pl));
	pl->nic_core = -1;
	for (int i = 0; i < RX_MAX_QUEUES; i++)
		pl->rx_core[i] = pl->app_core[i] = pl->nic_cores[i] = -1;
}

int rx_place(const struct rx_config *c, const struct rx_caps *caps, struct rx_placement *pl,
	     char *err, size_t errlen)
{
	int cores[RX_MAX_CORES];
	place_reset(pl);
	int avail = place_cores(c, cores, err, errlen);
	if (avail < 0)
		return avail;
	return rx_place_on(c, caps, cores, avail, pl, err, errlen);
}

int rx_place_on(const struct rx_config *c, const struct rx_caps *caps, const int *cores,
		int avail, struct rx_placement *pl, char *err, size_t errlen)
{
	const struct rx_dev_ops *dev = caps->dev;
	struct rx_dev_threads asked = {0, 0}, got = {0, 0};
	place_reset(pl);
	if (c->queues < 1 || c->queues > RX_MAX_QUEUES)
		return perr(err, errlen, "queues: %u out of range 1..%u", c->queues, RX_MAX_QUEUES);
	if (avail <= 0)
		return perr(err, errlen, "cores: no core available");
	/* a device without threads of its own: none may be asked for */
	if (!dev && c->nic_threads)
		return perr(err, errlen,
			    "nic-threads: %s has no software NIC threads (only device sim)",
			    caps->name);
	if (!dev && c->dma_writers > 1)
		return perr(err, errlen,
			    "dma-writers: %s has no software NIC writers (only device sim)",
			    caps->name);
	int rc = dev ? dev->check(c, caps, &asked, err, errlen) : 0;
	if (rc < 0)
		return rc;
	int q = (int)c->queues;
	/* AUTO app is decided as if the device had the threads asked for, or 1 */
	int nic = dev ? (asked.threads ? (int)asked.threads : 1) : 0;
	enum rx_app app = c->app;
	if (app == RX_APP_AUTO)
		app = nic + 2 * q <= avail ? RX_APP_THREAD : RX_APP_INLINE;
	int napp = app == RX_APP_INLINE ? 0 : q;
	if (dev) {
		rc = dev->size(c, caps, &asked, avail - q - napp, &got, err, errlen);
		if (rc < 0)
			return rc;
		/* nic_cores[] is the core's: a device asking past it is a bug */
		if (!got.threads || !got.writers || got.threads * got.writers > RX_MAX_QUEUES)
			return perr(err, errlen, "device: %s sized %u x %u threads, out of 1..%d",
				    dev->name, got.threads, got.writers, RX_MAX_QUEUES);
		nic = (int)(got.threads * got.writers); /* every writer is a thread with a core */
	}
	int groups = (int)got.threads, writers = (int)got.writers;
	int base = nic + q; /* device threads + rx workers */
	int needed = base + napp;
	pl->app = app;
	pl->needed = needed;
	pl->available = avail;
	pl->nic_threads = groups;
	pl->dma_writers = writers;
	pl->nic_all = nic;
	char nics[32] = "";
	if (dev)
		snprintf(nics, sizeof(nics), "NIC %d + ", nic);
	if (needed > avail && !c->allow_oversubscribe) {
		if (writers > 1 && groups + q + napp <= avail)
			return perr(err, errlen,
				    "dma-writers: %d writers x %d NIC threads need %d cores (%sRX %d + app %d), %d available; use fewer --dma-writers, more --cores, or --allow-oversubscribe",
				    writers, groups, needed, nics, q, napp, avail);
		if (nic > 1 && 1 + q + napp <= avail)
			return perr(err, errlen,
				    "nic-threads: %d NIC threads need %d cores (%sRX %d + app %d), %d available; use fewer --nic-threads, more --cores, or --allow-oversubscribe",
				    nic, needed, nics, q, napp, avail);
		if (base > avail && q == 1)
			return perr(err, errlen,
				    "cores: %s needs %d cores (%sRX 1), %d available; give more --cores or --allow-oversubscribe",
				    dev ? "a software NIC run" : "one queue", base, nics, avail);
		if (base > avail)
			return perr(err, errlen,
				    "queues: %d queues need %d cores (%sRX %d), %d available; use fewer queues, more --cores, or --allow-oversubscribe",
				    q, base, nics, q, avail);
		return perr(err, errlen,
			    "app: an app thread on a core of its own per queue (--app %s) needs %d cores (%sRX %d + app %d), %d available; use --app inline, fewer queues, or --allow-oversubscribe",
			    app == RX_APP_THREAD ? "thread, non-eal" : rx_app_name(app), needed, nics,
			    q, q, avail);
	}
	pl->oversubscribed = needed > avail;
	int k = 0;
	for (int i = 0; i < nic; i++)
		pl->nic_cores[i] = cores[k++ % avail];
	pl->nic_core = pl->nic_cores[0];
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
	json_t *nic = json_array();
	if (!o || !rx || !app || !nic) {
		json_decref(o);
		json_decref(rx);
		json_decref(app);
		json_decref(nic);
		return NULL;
	}
	for (int i = 0; i < pl->nic_all && i < RX_MAX_QUEUES; i++)
		json_array_append_new(nic, json_integer(pl->nic_cores[i]));
	for (int i = 0; i < RX_MAX_QUEUES && pl->rx_core[i] >= 0; i++) {
		json_array_append_new(rx, json_integer(pl->rx_core[i]));
		json_array_append_new(app, json_integer(pl->app_core[i]));
	}
	json_object_set_new(o, "nic", json_integer(pl->nic_core));
	json_object_set_new(o, "nic_cores", nic);
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
		if (!colon[1])
			return perr(err, errlen,
				    "device: '%s' has nothing after ':' (name the device, or drop the "
				    "':')",
				    device);
		if (strlen(colon + 1) >= sizeof(d->args))
			return perr(err, errlen, "device: options too long");
		snprintf(d->args, sizeof(d->args), "%s", colon + 1);
	}
	return 0;
}
