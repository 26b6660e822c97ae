/* SPDX-License-Identifier: MIT */
/*
 * rxray attach's findings and flame graph, read from the profile that
 * attach/ measured. The findings name what a reader acts on: the
 * counters that rose, the pool without a cache and what its ring costs
 * (split into get and put by the DPDK mempool ops the samples ran in),
 * and the PMD receive function by the name the target's own tables give.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rxray/attach_findings.h"
#include "rxray/flame.h"

static void finding(struct rxb_profile *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void finding(struct rxb_profile *p, const char *fmt, ...)
{
	va_list ap;

	if (p->nfindings == RXB_ATTACH_MAX_FINDINGS)
		return;
	va_start(ap, fmt);
	vsnprintf(p->findings[p->nfindings++], sizeof(p->findings[0]), fmt, ap);
	va_end(ap);
}

/* "; called from A (80%), B (20%)" for the two biggest mempool callers. */
static void mempool_callers_text(const struct rxb_profile *p, char *out, size_t len)
{
	uint64_t total = 0;
	size_t a = SIZE_MAX, b = SIZE_MAX, o = 0;

	for (size_t i = 0; i < p->nmempool_callers; i++) {
		total += p->mempool_callers[i].samples;
		if (a == SIZE_MAX || p->mempool_callers[i].samples > p->mempool_callers[a].samples) {
			b = a;
			a = i;
		} else if (b == SIZE_MAX ||
			   p->mempool_callers[i].samples > p->mempool_callers[b].samples) {
			b = i;
		}
	}
	out[0] = '\0';
	if (!total)
		return;
	o += (size_t)snprintf(out, len, "; called from %.80s (%.0f%%)", p->mempool_callers[a].name,
			      100.0 * (double)p->mempool_callers[a].samples / (double)total);
	if (b != SIZE_MAX && o < len)
		snprintf(out + o, len - o, ", %.80s (%.0f%%)", p->mempool_callers[b].name,
			 100.0 * (double)p->mempool_callers[b].samples / (double)total);
}

/* " (get 20.1%: ring_mp_mc dequeue; put 18.0%: ring_mp_mc enqueue)" */
static void mempool_split_text(const struct rxb_profile *p, char *out, size_t len)
{
	out[0] = '\0';
	if (p->mempool_get_share <= 0 && p->mempool_put_share <= 0)
		return;
	snprintf(out, len, " (get %.1f%%%s%.96s; put %.1f%%%s%.96s)", 100 * p->mempool_get_share,
		 p->mempool_get_top[0] ? ": " : "", p->mempool_get_top,
		 100 * p->mempool_put_share, p->mempool_put_top[0] ? ": " : "",
		 p->mempool_put_top);
}

/*
 * A pktmbuf pool has rte_pktmbuf_pool_private as private data; its data
 * room is elt_size - sizeof(struct rte_mbuf) (128) - the mbuf private
 * area. A port's rx_mbuf_size_min is the smallest data room among the
 * pools of its RX queues, so an equal data room names the feeding pool.
 */
static void finding_pools(struct rxb_profile *p)
{
	const struct rxb_tele_snap *s = &p->t1;
	uint64_t rxq = 0;

	for (size_t i = 0; i < s->nports; i++)
		rxq += s->ports[i].nb_rx_queues;
	for (size_t i = 0; i < s->npools; i++) {
		const struct rxb_tele_pool *mp = &s->pools[i];
		char feeds[96] = "", what[128], callers[200], split[240];
		size_t fl = 0;
		if (mp->cache_size || !mp->private_data_size || !rxq || mp->elt_size <= 128)
			continue;
		for (size_t k = 0; k < s->nports; k++)
			if (s->ports[k].nb_rx_queues && s->ports[k].rx_mbuf_size_min == mp->elt_size - 128 &&
			    fl + 24 < sizeof(feeds))
				fl += (size_t)snprintf(feeds + fl, sizeof(feeds) - fl, "%s%u",
						       fl ? "," : "", s->ports[k].id);
		if (fl)
			snprintf(what, sizeof(what), "feeds RX of port %s", feeds);
		else
			snprintf(what, sizeof(what), "is a pktmbuf pool while ports receive");
		mempool_callers_text(p, callers, sizeof(callers));
		mempool_split_text(p, split, sizeof(split));
		finding(p, "mempool %s has cache_size 0 and %s: every mbuf alloc and free goes to "
			"the pool's shared ring; mempool code is %.1f%% of samples (%.1f cycles/packet)"
			"%s%s", mp->name, what, 100 * p->mempool_share,
			p->mempool_share * p->cycles_per_packet, split, callers);
	}
}

/* The PMD's receive function by its DPDK name, with its share and cost. */
static void finding_rx_burst(struct rxb_profile *p)
{
	const struct rxb_profile_func *self = NULL;

	if (!p->rx_burst_top[0])
		return;
	for (size_t i = 0; i < p->nfuncs && !self; i++)
		if (!strcmp(p->funcs[i].name, p->rx_burst_top))
			self = &p->funcs[i];
	uint64_t total = 0;
	for (size_t i = 0; i < p->nstacks; i++)
		total += p->stacks[i].count;
	double self_share = self && total ? (double)self->self / (double)total : 0;
	if (p->cycles_per_packet > 0)
		finding(p, "PMD receive function: %s, %.1f%% of samples in its own code (%.1f "
			"cycles/packet), %.1f%% with what it calls", p->rx_burst_top,
			100 * self_share, self_share * p->cycles_per_packet, 100 * p->rx_burst_share);
	else
		finding(p, "PMD receive function: %s, %.1f%% of samples in its own code, %.1f%% "
			"with what it calls", p->rx_burst_top, 100 * self_share,
			100 * p->rx_burst_share);
}

void rxa_attach_findings(struct rxb_profile *p)
{
	p->nfindings = 0;
	for (size_t i = 0; p->have_tele && i < p->t1.nports; i++) {
		const struct rxb_tele_port *b = &p->t1.ports[i];
		const struct rxb_tele_port *a = rxb_tele_port_find(&p->t0, b->id);
		if (!a)
			continue;
		uint64_t dm = rxb_tele_delta(a->imissed, b->imissed);
		uint64_t dn = rxb_tele_delta(a->rx_nombuf, b->rx_nombuf);
		uint64_t dp = rxb_tele_delta(a->ipackets, b->ipackets);
		if (dn)
			finding(p, "port %u (%s): rx_nombuf rose by %" PRIu64 " in the window: "
				"the RX path could not allocate replacement mbufs", b->id, b->name, dn);
		if (dm)
			finding(p, "port %u (%s): imissed rose by %" PRIu64 " (%.2f%% of %" PRIu64
				" received): descriptors were not replenished in time", b->id,
				b->name, dm, dp ? 100.0 * (double)dm / (double)dp : 100.0, dp);
	}
	if (p->have_tele)
		finding_pools(p);
	finding_rx_burst(p);
	if (!p->sst.samples)
		finding(p, "warning: no samples of the chosen threads in the window: they did not "
			"run, or sampling failed");
	if (p->sst.dropped)
		finding(p, "note: %" PRIu64 " samples dropped (count map full at %d stacks)",
			p->sst.dropped, RXB_ATTACH_MAX_STACKS);
	if (p->nuprobes)
		finding(p, "note: uprobes cost 1.5-7.5 us per hit here; they were attached %.2f s "
			"of the window", p->uprobe_attached_s);
}

/* ------------------------------------------------------------ flame */

static int flame_write(const void *ctx, FILE *f)
{
	const struct rxb_profile *p = ctx;
	struct rxa_flame *fl = NULL;
	rxa_flame_open(&fl);
	char title[192], sub[512];
	uint64_t total = 0;
	int rc = 0;

	if (!fl)
		return -ENOMEM;
	for (size_t i = 0; i < p->nstacks; i++)
		total += p->stacks[i].count;
	for (size_t i = 0; i < p->nstacks && !rc; i++) {
		const char *frames[300];
		size_t n = 0;
		char *copy = strdup(p->stacks[i].folded), *save = NULL;
		if (!copy) {
			rc = -ENOMEM;
			break;
		}
		for (char *tok = strtok_r(copy, ";", &save); tok && n < 300;
		     tok = strtok_r(NULL, ";", &save))
			frames[n++] = tok;
		rc = rxa_flame_add(fl, frames, n, (double)p->stacks[i].count);
		free(copy);
	}
	bool per_packet = p->packets > 0 && total > 0 && p->cycles_per_packet > 0;
	if (!rc && per_packet)
		rxa_flame_scale(fl, p->cycles_per_packet / (double)total);
	snprintf(title, sizeof(title), "rxray attach: pid %d (%s)%s", p->pid, p->comm,
		 per_packet ? ", cycles per packet" : ", samples");
	snprintf(sub, sizeof(sub), "%s; %.2f s, %s at %u Hz, %s stacks; %.1f cycles/packet over %"
		 PRIu64 " packets", p->how, p->seconds, p->event, p->freq_hz, p->stack_mode,
		 p->cycles_per_packet, p->packets);
	struct rxa_flame_svg_opts o = {.title = title, .subtitle = sub,
				       .units = per_packet ? "cycles/packet" : "samples"};
	if (!rc)
		rc = rxa_flame_svg_write(fl, f, &o);
	rxa_flame_free(fl);
	return rc;
}

int rxa_attach_flame_write(const struct rxb_profile *p, const char *dir, char *err,
			   size_t errlen)
{
	if (!p->nstacks)
		return 0;
	if (mkdir(dir, 0755) && errno != EEXIST) {
		int rc = -errno;
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return rc;
	}
	return rxb_profile_file_write(dir, "flame.svg", flame_write, p, err, errlen);
}
