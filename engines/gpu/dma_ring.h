/* SPDX-License-Identifier: MIT */
/*
 * The staging ring of the GPU DMA engine (rxray/gpu.h, rxg_dma_*), as plain
 * C so it can be tested without a GPU. Private to engines/gpu.
 *
 * Bytes and pieces are handed out in order and given back in order, a
 * ticket at a time: positions are monotonic 64-bit counters, an offset in
 * the ring is a position mod its size. A piece never wraps: when it would
 * cross the end of the byte ring it starts at the next lap.
 */
#ifndef RXG_DMA_RING_H
#define RXG_DMA_RING_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct rxg_ring_slot {
	uint64_t bend, pend; /**< byte and piece positions one past the ticket's last */
};

struct rxg_ring {
	size_t bcap;		    /**< staging bytes */
	uint32_t pcap;		    /**< pieces */
	uint32_t scap;		    /**< tickets outstanding at most */
	uint64_t bhead, btail;	    /**< bytes handed out, given back */
	uint64_t phead, ptail;	    /**< pieces handed out, given back */
	uint64_t popen;		    /**< first piece not yet in a ticket */
	uint64_t submitted;	    /**< tickets issued (the last one's number) */
	uint64_t done;		    /**< tickets given back (in order) */
	struct rxg_ring_slot *slot; /**< scap entries, ticket t at t % scap */
};

/* Set up for the three capacities (each > 0); slot has scap entries, owned
 * by the caller. 0, -EINVAL. */
int rxg_ring_init(struct rxg_ring *r, size_t bcap, uint32_t pcap, uint32_t scap,
		  struct rxg_ring_slot *slot);
/*
 * Room for len bytes whose offset is congruent to align_to mod 16 (so a
 * copy can use 16-byte accesses at both ends). Returns the byte offset in
 * the ring and sets *piece to the piece's position, or -1 when the bytes,
 * the pieces or the tickets (the next submit needs a free one) are used up.
 */
int64_t rxg_ring_alloc(struct rxg_ring *r, uint32_t len, uintptr_t align_to, uint64_t *piece);
/* Pieces handed out since the last submit. */
static inline uint32_t rxg_ring_open_pieces(const struct rxg_ring *r)
{
	return (uint32_t)(r->phead - r->popen);
}
/* Close the open pieces into a ticket: its number (> 0) with the piece
 * positions [*first, *first + *n), or 0 when none is open. */
uint64_t rxg_ring_submit(struct rxg_ring *r, uint64_t *first, uint32_t *n);
/* Ticket done + 1 has landed: its bytes and pieces are free again. */
void rxg_ring_complete(struct rxg_ring *r);

#ifdef __cplusplus
}
#endif
#endif /* RXG_DMA_RING_H */
