/* SPDX-License-Identifier: MIT */
/*
 * What the wire carries: per-flow Ethernet/IPv4/UDP header templates, RSS
 * spreading (Toeplitz with the widely published default key, then a
 * 128-entry indirection table filled round robin, as drivers do by
 * default), and each NIC thread's share of the flows.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nic_priv.h"

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
