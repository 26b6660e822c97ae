/* SPDX-License-Identifier: MIT */
/*
 * Thread placement and device strings. Placement is decided once, before
 * anything starts: the NIC threads first (sim only), then one RX worker per
 * queue, then app threads when they get cores of their own. Sharing a core between two
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

int rx_place(const struct rx_config *c, bool sim_nic, struct rx_placement *pl, char *err,
	     size_t errlen)
{
	int cores[RX_MAX_CORES];
	place_reset(pl);
	int avail = place_cores(c, cores, err, errlen);
	if (avail < 0)
		return avail;
	return rx_place_on(c, sim_nic, cores, avail, pl, err, errlen);
}

/* "nics=N" among a sim device string's options; 0 when absent. */
static int place_dev_nics(const struct rx_config *c, uint32_t *n, char *err, size_t errlen)
{
	struct rx_dev d;
	*n = 0;
	if (rx_dev_parse(c->device, &d, NULL, 0) < 0 || strcmp(d.kind, "sim") != 0)
		return 0; /* not a software NIC: nothing to read */
	char *save = NULL;
	for (char *tok = strtok_r(d.args, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (strncmp(tok, "nics=", 5) != 0)
			continue;
		uint64_t v = 0;
		if (rxu_parse_u64(tok + 5, 1, RX_MAX_QUEUES, &v) < 0)
			return perr(err, errlen, "device: nics=%s out of range 1..%d", tok + 5,
				    RX_MAX_QUEUES);
		*n = (uint32_t)v;
	}
	return 0;
}

/* DMA writers per NIC thread asked for: c->dma_writers, or "writers=W"
 * among a sim device string's options (both set: they must agree); 0 =
 * auto. */
static int place_dev_writers(const struct rx_config *c, uint32_t *w, char *err, size_t errlen)
{
	struct rx_dev d;
	uint64_t v = 0;
	*w = c->dma_writers;
	if (rx_dev_parse(c->device, &d, NULL, 0) < 0 || strcmp(d.kind, "sim") != 0)
		return 0;
	char *save = NULL;
	for (char *tok = strtok_r(d.args, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		if (!strncmp(tok, "writers=", 8) && strcmp(tok + 8, "auto") != 0 &&
		    rxu_parse_u64(tok + 8, 1, RX_MAX_WRITERS, &v) < 0)
			return perr(err, errlen, "device: writers=%s out of range 1..%d or auto",
				    tok + 8, RX_MAX_WRITERS);
	/* both given: they must agree (auto, 0, yields) */
	if (v && c->dma_writers && v != c->dma_writers)
		return perr(err, errlen, "dma-writers: %u disagrees with the device option writers=%u",
			    c->dma_writers, (uint32_t)v);
	if (v)
		*w = (uint32_t)v;
	return 0;
}

int rx_nic_threads_asked(const struct rx_config *c, uint32_t *n, char *err, size_t errlen)
{
	uint32_t dev = 0;
	int rc = place_dev_nics(c, &dev, err, errlen);
	*n = 0;
	if (rc < 0)
		return rc;
	if (dev && c->nic_threads && dev != c->nic_threads)
		return perr(err, errlen, "nic-threads: %u disagrees with the device option nics=%u",
			    c->nic_threads, dev);
	*n = c->nic_threads ? c->nic_threads : dev;
	if (*n > c->queues)
		return perr(err, errlen,
			    "nic-threads: %u NIC threads for %u queues; each NIC thread owns at least one queue",
			    *n, c->queues);
	return 0;
}

int rx_place_on(const struct rx_config *c, bool sim_nic, const int *cores, int avail,
		struct rx_placement *pl, char *err, size_t errlen)
{
	place_reset(pl);
	if (c->queues < 1 || c->queues > RX_MAX_QUEUES)
		return perr(err, errlen, "queues: %u out of range 1..%u", c->queues, RX_MAX_QUEUES);
	if (avail <= 0)
		return perr(err, errlen, "cores: no core available");
	uint32_t asked = 0;
	if (sim_nic) {
		int rc = rx_nic_threads_asked(c, &asked, err, errlen);
		if (rc < 0)
			return rc;
	}
	int q = (int)c->queues;
	/* AUTO app is decided as if the NIC had the threads asked for, or 1 */
	int nic = sim_nic ? (asked ? (int)asked : 1) : 0;
	enum rx_app app = c->app;
	if (app == RX_APP_AUTO)
		app = nic + 2 * q <= avail ? RX_APP_THREAD : RX_APP_INLINE;
	int napp = app == RX_APP_INLINE ? 0 : q;
	if (sim_nic && !asked) {
		/* auto: the cores the rx workers and app threads leave, 1..q */
		int left = avail - q - napp;
		nic = left < 1 ? 1 : left > q ? q : left;
	}
	int writers = 0;
	if (sim_nic) {
		uint32_t w = 0;
		int rc = place_dev_writers(c, &w, err, errlen);
		if (rc < 0)
			return rc;
		if (!w) {
			/* auto: the cores every other role leaves, shared by the
			 * NIC threads, at most RX_AUTO_WRITERS each (a writer the
			 * hypervisor stops holds back the packets behind its run,
			 * so no more than the rate needs); a writer needs
			 * RXS_MIN_RUN (8) WQEs */
			int left = avail - nic - q - napp;
			int cap = (int)(c->ring / 8) < RX_AUTO_WRITERS ? (int)(c->ring / 8) : RX_AUTO_WRITERS;
			w = (uint32_t)(1 + (left > 0 ? left / nic : 0));
			w = (int)w > cap ? (uint32_t)(cap > 0 ? cap : 1) : w;
			while (nic * (int)w > RX_MAX_QUEUES)
				w--;
		}
		writers = (int)w;
		if (nic * writers > RX_MAX_QUEUES)
			return perr(err, errlen, "dma-writers: %d NIC threads x %d writers exceed %d",
				    nic, writers, RX_MAX_QUEUES);
		nic *= writers; /* every writer is a thread with a core */
	}
	int base = nic + q; /* nic threads + rx workers */
	int needed = base + napp;
	pl->app = app;
	pl->needed = needed;
	pl->available = avail;
	pl->nic_threads = writers ? nic / writers : nic;
	pl->dma_writers = writers;
	char nics[32] = "";
	if (sim_nic)
		snprintf(nics, sizeof(nics), "NIC %d + ", nic);
	if (needed > avail && !c->allow_oversubscribe) {
		if (writers > 1 && nic / writers + q + napp <= avail)
			return perr(err, errlen,
				    "dma-writers: %d writers x %d NIC threads need %d cores (%sRX %d + app %d), %d available; use fewer --dma-writers, more --cores, or --allow-oversubscribe",
				    writers, nic / writers, needed, nics, q, napp, avail);
		if (nic > 1 && 1 + q + napp <= avail)
			return perr(err, errlen,
				    "nic-threads: %d NIC threads need %d cores (%sRX %d + app %d), %d available; use fewer --nic-threads, more --cores, or --allow-oversubscribe",
				    nic, needed, nics, q, napp, avail);
		if (base > avail && q == 1)
			return perr(err, errlen,
				    "cores: %s needs %d cores (%sRX 1), %d available; give more --cores or --allow-oversubscribe",
				    sim_nic ? "a software NIC run" : "one queue", base, nics, avail);
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
	int nic_all = pl->nic_threads * (pl->dma_writers > 0 ? pl->dma_writers : 1);
	for (int i = 0; i < nic_all && i < RX_MAX_QUEUES; i++)
		json_array_append_new(nic, json_integer(pl->nic_cores[i]));
	for (int i = 0; i < RX_MAX_QUEUES && pl->rx_core[i] >= 0; i++) {
		json_array_append_new(rx, json_integer(pl->rx_core[i]));
		json_array_append_new(app, json_integer(pl->app_core[i]));
	}
	json_object_set_new(o, "nic", json_integer(pl->nic_core));
	json_object_set_new(o, "nic_threads", json_integer(pl->nic_threads));
	json_object_set_new(o, "dma_writers", json_integer(pl->dma_writers));
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
