/* SPDX-License-Identifier: MIT */
#include "dma_ring.h"

#include <errno.h>

int rxg_ring_init(struct rxg_ring *r, size_t bcap, uint32_t pcap, uint32_t scap,
		  struct rxg_ring_slot *slot)
{
	if (!r || !bcap || !pcap || !scap || !slot)
		return -EINVAL;
	*r = (struct rxg_ring){.bcap = bcap, .pcap = pcap, .scap = scap, .slot = slot};
	return 0;
}

int64_t rxg_ring_alloc(struct rxg_ring *r, uint32_t len, uintptr_t align_to, uint64_t *piece)
{
	if (r->phead - r->ptail >= r->pcap || r->submitted - r->done >= r->scap)
		return -1;
	uint64_t at = (r->bhead + 15) & ~(uint64_t)15;
	at += align_to & 15;
	if (at % r->bcap + len > r->bcap) {
		/* the piece would cross the end: it starts the next lap */
		at = (at / r->bcap + 1) * r->bcap + (align_to & 15);
		if (len + (align_to & 15) > r->bcap)
			return -1;
	}
	if (at + len - r->btail > r->bcap)
		return -1;
	r->bhead = at + len;
	*piece = r->phead++;
	return (int64_t)(at % r->bcap);
}

uint64_t rxg_ring_submit(struct rxg_ring *r, uint64_t *first, uint32_t *n)
{
	if (r->phead == r->popen)
		return 0;
	uint64_t t = ++r->submitted;
	r->slot[t % r->scap] = (struct rxg_ring_slot){r->bhead, r->phead};
	*first = r->popen;
	*n = (uint32_t)(r->phead - r->popen);
	r->popen = r->phead;
	return t;
}

void rxg_ring_complete(struct rxg_ring *r)
{
	if (r->done == r->submitted)
		return;
	uint64_t t = ++r->done;
	r->btail = r->slot[t % r->scap].bend;
	r->ptail = r->slot[t % r->scap].pend;
}
