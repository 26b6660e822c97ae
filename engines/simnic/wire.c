/* SPDX-License-Identifier: MIT */
/*
 * What the wire carries: per-flow Ethernet/IPv4/UDP header templates, RSS
 * spreading (Toeplitz with the widely published default key, then a
 * 128-entry indirection table filled round robin, as drivers do by
 * default), each NIC thread's share of the flows, and the NIC parameters
 * derived from a run config.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nic_priv.h"
#ifdef RXRAY_HAVE_GPU
#include "rxray/gpu.h"
#endif
#include "rxray/util.h"

static const uint8_t nic_rss_key[40] = {
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
	0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
	0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

/* Toeplitz hash of the bytes in with the default 40-byte RSS key. */
static uint32_t nic_toeplitz(const uint8_t *in, size_t len)
{
	uint32_t h = 0;
	/* window = the 32 key bits starting at the current input bit */
	uint32_t win = ((uint32_t)nic_rss_key[0] << 24) | ((uint32_t)nic_rss_key[1] << 16) |
		       ((uint32_t)nic_rss_key[2] << 8) | nic_rss_key[3];
	for (size_t i = 0; i < len && i + 4 < sizeof(nic_rss_key); i++) {
		for (int b = 7; b >= 0; b--) {
			if (in[i] & (1u << b))
				h ^= win;
			win = (win << 1) | ((nic_rss_key[i + 4] >> b) & 1u);
		}
	}
	return h;
}

static uint16_t ip_csum(const uint8_t *ip, size_t len)
{
	uint32_t s = 0;
	for (size_t i = 0; i + 1 < len; i += 2)
		s += ((uint32_t)ip[i] << 8) | ip[i + 1];
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

int rxs_nic_flows_build(struct rxs_nic *n)
{
	n->tmpl = calloc(n->nflows, NIC_TMPL_SIZE);
	n->flow_q = calloc(n->nflows, 1);
	n->flow_hash = calloc(n->nflows, sizeof(*n->flow_hash));
	if (!n->tmpl || !n->flow_q || !n->flow_hash)
		return -ENOMEM;
	uint32_t frame = n->p.frame;
	for (uint32_t f = 0; f < n->nflows; f++) {
		uint8_t *h = n->tmpl + (size_t)f * NIC_TMPL_SIZE;
		static const uint8_t dmac[6] = {0x02, 0, 0, 0, 0, 0x01};
		static const uint8_t smac[6] = {0x02, 0, 0, 0, 0, 0x02};
		memcpy(h, dmac, 6);
		memcpy(h + 6, smac, 6);
		put16(h + 12, 0x0800);
		uint8_t *ip = h + 14;
		ip[0] = 0x45;
		put16(ip + 2, (uint16_t)(frame - 14));
		put16(ip + 4, 0);
		put16(ip + 6, 0x4000); /* DF */
		ip[8] = 64;
		ip[9] = 17;
		ip[12] = 10;  /* src 10.<f>.<f>.<f>: one source per flow */
		ip[13] = (uint8_t)(f >> 16);
		ip[14] = (uint8_t)(f >> 8);
		ip[15] = (uint8_t)(f + 1);
		ip[16] = 10; /* dst 10.255.0.1 */
		ip[17] = 255;
		ip[18] = 0;
		ip[19] = 1;
		put16(ip + 10, ip_csum(ip, 20));
		uint8_t *udp = ip + 20;
		put16(udp, (uint16_t)(1024 + (f & 0xffff) % 60000));
		put16(udp + 2, RXS_UDP_DST_PORT);
		put16(udp + 4, (uint16_t)(frame - 34));
		put16(udp + 6, 0);
		/* tag: seq patched per packet; queue and magic fixed per flow */
		uint8_t tuple[12];
		memcpy(tuple, ip + 12, 8);
		memcpy(tuple + 8, udp, 4);
		uint32_t hash = nic_toeplitz(tuple, sizeof(tuple));
		uint32_t q = (hash & (NIC_RETA_SIZE - 1)) % n->p.queues;
		n->flow_q[f] = (uint8_t)q;
		n->flow_hash[f] = hash;
		put16(h + RXS_QUEUE_OFF, (uint16_t)q);
		put16(h + RXS_MAGIC_OFF, RXS_TAG_MAGIC);
	}
	return 0;
}

int rxs_nic_queues_share(struct rxs_nic *n)
{
	double hz = rxp_clock_get()->hz;
	uint32_t done = 0; /* flows of queues before this one */
	for (uint32_t qi = 0; qi < n->p.queues; qi++) {
		struct nic_queue *q = &n->q[qi];
		uint32_t mine = 0;
		for (uint32_t f = 0; f < n->nflows; f++)
			mine += n->flow_q[f] == qi;
		q->wflows = calloc(mine ? mine : 1, sizeof(*q->wflows));
		if (!q->wflows)
			return -ENOMEM;
		q->nwflows = 0;
		for (uint32_t f = 0; f < n->nflows; f++)
			if (n->flow_q[f] == qi)
				q->wflows[q->nwflows++] = f;
		/* every flow keeps rate / flows: the queue's share is its flows.
		 * Unpaced, or asked above the line rate: the line rate. Trains
		 * of n->train packets at that rate; inside one, a packet per
		 * wire time (n->twire, the port's line rate) */
		double port = n->p.rate_pps > 0 && n->p.rate_pps < n->line_pps ? n->p.rate_pps
										: n->line_pps;
		double rate = port * q->nwflows / n->nflows;
		q->paced = n->p.rate_pps > 0;
		q->ttrain = rate > 0 ? n->train * hz / rate : 0;
		/* late limit: a tenth of the time the ring covers at this
		 * queue's packet interval, at least NIC_LATE_MIN_S */
		double cover = rate > 0 ? (double)n->p.ring * hz / rate : 0;
		double lim = fmax(cover / 10, NIC_LATE_MIN_S * hz);
		q->late_ticks = q->paced && rate > 0 ? (uint64_t)lim : UINT64_MAX;
		uint64_t lo = (uint64_t)((unsigned __int128)n->p.max_packets * done / n->nflows);
		uint64_t hi = (uint64_t)((unsigned __int128)n->p.max_packets *
					 (done + q->nwflows) / n->nflows);
		q->quota = hi - lo;
		done += q->nwflows;
	}
	return 0;
}

void rxs_params_defaults(struct rxs_params *p)
{
	memset(p, 0, sizeof(*p));
	p->queues = 1;
	p->ring = 1024;
	p->sges = 1;
	p->frame = 1064;
	p->seconds = 1;
	p->dma = RX_DMA_CACHE;
	p->payload = RX_PAYLOAD_STAMP;
	p->threads = 1;
	p->writers = 1;
	p->core = -1;
	for (uint32_t i = 0; i < RXS_MAX_QUEUES; i++)
		p->thread_core[i] = -1;
}

void rxs_params_place(struct rxs_params *p, const struct rx_placement *pl)
{
	p->threads = pl->nic_threads > 0 ? (uint32_t)pl->nic_threads : 1;
	if (pl->dma_writers > 0)
		p->writers = (uint32_t)pl->dma_writers;
	uint32_t all = p->threads * (p->writers ? p->writers : 1);
	p->core = pl->nic_cores[0];
	for (uint32_t i = 1; i < RXS_MAX_QUEUES; i++)
		p->thread_core[i] = i < all ? pl->nic_cores[i] : -1;
}

void rxs_caps(struct rx_caps *caps)
{
	memset(caps, 0, sizeof(*caps));
	snprintf(caps->name, sizeof(caps->name), "simnic");
	caps->max_ring = RXS_MAX_RING;
	caps->max_sges = RXS_MAX_SGES;
	caps->max_queues = RXS_MAX_QUEUES;
	caps->max_frame = RXS_MAX_FRAME;
	caps->min_frame = RXS_MIN_FRAME;
	caps->min_split = RXS_HDR_LEN;
	caps->buffer_split = true;
#ifdef RXRAY_HAVE_GPU
	/* payloads staged and copied (rxs_mr_reg_gpu): built in, and a GPU
	 * with its driver on this host (asked once per process) */
	static int gpu = -1;
	static char why[sizeof(caps->gpu_why)];
	if (gpu < 0)
		gpu = rxg_available(why, sizeof(why));
	caps->gpu_mem = gpu > 0;
	if (!caps->gpu_mem)
		snprintf(caps->gpu_why, sizeof(caps->gpu_why), "%s", why);
#else
	caps->gpu_mem = false;
#endif
	caps->max_rate_pps = 0;
	caps->sim_nic = true;
}

/* one error line, -EINVAL (rxu_errf) */
#define werr(err, errlen, ...) rxu_errf(err, errlen, -EINVAL, __VA_ARGS__)

/* One "key=value" device option. */
static int wire_dev_option(struct rxs_params *p, const char *key, const char *val, char *err,
			   size_t errlen)
{
	uint64_t v;
	if (!strcmp(key, "rate")) {
		if (rxu_parse_rate(val, &p->rate_pps) < 0)
			return werr(err, errlen, "device: rate=%s is not a rate (e.g. 12M, max)", val);
	} else if (!strcmp(key, "flows")) {
		if (rxu_parse_u64(val, 1, 1u << 20, &v) < 0)
			return werr(err, errlen, "device: flows=%s out of range 1..1Mi", val);
		p->flows = (uint32_t)v;
	} else if (!strcmp(key, "cq")) {
		if (rxu_parse_u64(val, 2, 1u << 22, &v) < 0 || (v & (v - 1)))
			return werr(err, errlen, "device: cq=%s must be a power of two 2..4Mi", val);
		p->cq_depth = (uint32_t)v;
	} else if (!strcmp(key, "nics")) {
		if (rxu_parse_u64(val, 1, RXS_MAX_QUEUES, &v) < 0)
			return werr(err, errlen, "device: nics=%s out of range 1..%u", val,
				    RXS_MAX_QUEUES);
		p->threads = (uint32_t)v;
	} else if (!strcmp(key, "line")) {
		/* Gb/s, the unit written or not: 400G, 100 */
		char *end = NULL;
		errno = 0;
		double g = strtod(val, &end);
		if (end == val || errno || (strcmp(end, "") && strcmp(end, "G") && strcmp(end, "g")) ||
		    !(g >= RXS_MIN_LINE_GBPS && g <= RXS_MAX_LINE_GBPS))
			return werr(err, errlen,
				    "device: line=%s is not a line rate %g..%gG (e.g. 400G, 100G)", val,
				    RXS_MIN_LINE_GBPS, RXS_MAX_LINE_GBPS);
		p->line_gbps = g;
	} else if (!strcmp(key, "train")) {
		if (rxu_parse_u64(val, 1, RXS_BURST, &v) < 0)
			return werr(err, errlen, "device: train=%s out of range 1..%u packets", val,
				    RXS_BURST);
		p->train = (uint32_t)v;
	} else if (!strcmp(key, "writers")) {
		if (!strcmp(val, "auto")) {
			p->writers = 0; /* the placement decides (rxs_params_place) */
			return 0;
		}
		if (rxu_parse_u64(val, 1, RXS_MAX_WRITERS, &v) < 0)
			return werr(err, errlen, "device: writers=%s out of range 1..%u or auto", val,
				    RXS_MAX_WRITERS);
		p->writers = (uint32_t)v;
	} else if (!strcmp(key, "gpu_dma")) {
		/* how GPU payloads' copies start (rxray/gpu.h rxg_dma_mode) */
		if (!strcmp(val, "resident"))
			p->gpu_dma_launch = false;
		else if (!strcmp(val, "launch"))
			p->gpu_dma_launch = true;
		else
			return werr(err, errlen, "device: gpu_dma=%s is not resident or launch", val);
	} else if (!strcmp(key, "fault")) {
		/* tests and benches: the NIC breaks a rule a consumer must catch */
		if (!strcmp(val, "publish_before_landing")) {
			p->fault_publish_early = 64; /* GPU copies: every 64th run */
		} else if (!strcmp(val, "writer_stall")) {
			p->fault_stall_train = 64; /* each queue's 64th train waits 20 ms */
			p->fault_stall_us = 20000;
		} else {
			return werr(err, errlen,
				    "device: fault=%s is not publish_before_landing or writer_stall",
				    val);
		}
	} else {
		return werr(err, errlen,
			    "device: unknown sim option '%s' (rate, flows, cq, nics, writers, line, "
			    "train, gpu_dma, fault)",
			    key);
	}
	return 0;
}

int rxs_params_from_config(const struct rx_config *c, int nic_core, struct rxs_params *p,
			   char *err, size_t errlen)
{
	struct rx_dev d;
	int rc = rx_dev_parse(c->device, &d, err, errlen);
	if (rc < 0)
		return rc;
	if (strcmp(d.kind, "sim") != 0)
		return werr(err, errlen, "device: '%s' is not a software NIC (sim[:opts])", c->device);
	rxs_params_defaults(p);
	p->queues = c->queues;
	p->ring = c->ring;
	p->sges = c->mode == RX_MODE_HDS ? 2 : 1;
	p->frame = c->frame;
	p->rate_pps = c->rate_pps;
	p->seconds = c->seconds;
	p->dma = c->dma;
	p->payload = c->payload;
	p->core = nic_core;
	p->threads = 0; /* set below from the device string or the config */
	p->writers = 0; /* likewise */
	p->sample_shift = c->sample_shift;
	/* the engine's backend decides what auto means (dpdk: on) */
	p->cqe_comp = c->cqe_comp == RX_CQE_COMP_ON;
	static const enum rxp_stage nic_stages[] = {RXP_ST_HDR_WRITE, RXP_ST_PAYLOAD_WRITE,
						    RXP_ST_CQE_WRITE};
	for (size_t i = 0; i < sizeof(nic_stages) / sizeof(nic_stages[0]); i++)
		p->inject[nic_stages[i]] = c->inject[nic_stages[i]];
	p->inject_ab = c->inject_ab;
	p->op_delay_hdr = c->op_delay_hdr_write;

	char opts[sizeof(d.args)];
	snprintf(opts, sizeof(opts), "%s", d.args);
	char *save = NULL;
	for (char *tok = strtok_r(opts, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		if (!eq)
			return werr(err, errlen, "device: sim option '%s' needs key=value", tok);
		*eq = '\0';
		rc = wire_dev_option(p, tok, eq + 1, err, errlen);
		if (rc < 0)
			return rc;
	}
	if (p->threads && c->nic_threads && p->threads != c->nic_threads)
		return werr(err, errlen, "nic-threads: %u disagrees with the device option nics=%u",
			    c->nic_threads, p->threads);
	if (p->threads > p->queues)
		return werr(err, errlen,
			    "device: nics=%u NIC threads for %u queues; each NIC thread owns at least one queue",
			    p->threads, p->queues);
	if (c->nic_threads > p->queues)
		return werr(err, errlen,
			    "nic-threads: %u NIC threads for %u queues; each NIC thread owns at least one queue",
			    c->nic_threads, p->queues);
	if (!p->threads)
		p->threads = c->nic_threads ? c->nic_threads : 1;
	/* both given: they must agree (auto, 0, yields) */
	if (p->writers && c->dma_writers && p->writers != c->dma_writers)
		return werr(err, errlen, "dma-writers: %u disagrees with the device option writers=%u",
			    c->dma_writers, p->writers);
	/* neither --dma-writers nor writers= asked: the placement decides */
	p->writers_auto = !p->writers && !c->dma_writers;
	if (!p->writers)
		p->writers = c->dma_writers ? c->dma_writers : 1; /* auto: rxs_params_place */
	if (p->writers * RXS_MIN_RUN > p->ring)
		return werr(err, errlen,
			    "dma-writers: %u writers need a ring of at least %u WQEs (%u each), ring is %u",
			    p->writers, p->writers * RXS_MIN_RUN, RXS_MIN_RUN, p->ring);
	if (p->threads * p->writers > RXS_MAX_QUEUES)
		return werr(err, errlen, "dma-writers: %u NIC threads x %u writers exceed %u threads",
			    p->threads, p->writers, RXS_MAX_QUEUES);
	return 0;
}
