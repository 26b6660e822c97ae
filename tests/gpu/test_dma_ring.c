/* SPDX-License-Identifier: MIT */
/*
 * The GPU DMA engine's staging ring (engines/gpu/dma_ring.c), without a
 * GPU: space is handed out in order, given back a ticket at a time, never
 * twice at once, and a full ring says so instead of overwriting.
 */
#include <criterion/criterion.h>
#include <stdint.h>

#include "../../engines/gpu/dma_ring.h"

static struct rxg_ring_slot slot[4];

Test(gpu_dma_ring, pieces_are_aligned_like_their_destination)
{
	struct rxg_ring r;
	cr_assert_eq(rxg_ring_init(&r, 4096, 16, 4, slot), 0);
	uint64_t pos;
	int64_t a = rxg_ring_alloc(&r, 100, 0x1000, &pos);
	cr_expect_eq(a, 0);
	cr_expect_eq(pos, 0);
	int64_t b = rxg_ring_alloc(&r, 10, 0x2007, &pos);
	cr_expect_eq(b % 16, 7, "offset %ld", (long)b);
	cr_expect_geq(b, 100);
	cr_expect_eq(pos, 1);
	cr_expect_eq(rxg_ring_open_pieces(&r), 2);
}

Test(gpu_dma_ring, tickets_free_space_in_order)
{
	struct rxg_ring r;
	cr_assert_eq(rxg_ring_init(&r, 1024, 64, 4, slot), 0);
	uint64_t pos, first;
	uint32_t n;
	cr_expect_eq(rxg_ring_submit(&r, &first, &n), 0, "nothing staged: no ticket");
	for (int i = 0; i < 4; i++)
		cr_assert_geq(rxg_ring_alloc(&r, 256, 0, &pos), 0);
	cr_expect_lt(rxg_ring_alloc(&r, 1, 0, &pos), 0, "1024 bytes are used");
	cr_expect_eq(rxg_ring_submit(&r, &first, &n), 1);
	cr_expect_eq(first, 0);
	cr_expect_eq(n, 4);
	cr_expect_lt(rxg_ring_alloc(&r, 1, 0, &pos), 0, "submitted is not landed");
	rxg_ring_complete(&r);
	cr_expect_eq(r.done, 1);
	int64_t at = rxg_ring_alloc(&r, 512, 0, &pos);
	cr_expect_eq(at, 0, "the next lap starts at 0");
	cr_expect_eq(pos, 4);
	cr_expect_eq(rxg_ring_submit(&r, &first, &n), 2);
	cr_expect_eq(first, 4);
	cr_expect_eq(n, 1);
}

Test(gpu_dma_ring, a_piece_never_wraps)
{
	struct rxg_ring r;
	cr_assert_eq(rxg_ring_init(&r, 1000, 64, 4, slot), 0);
	uint64_t pos, first;
	uint32_t n;
	cr_assert_eq(rxg_ring_alloc(&r, 600, 0, &pos), 0);
	cr_assert_eq(rxg_ring_submit(&r, &first, &n), 1);
	rxg_ring_complete(&r);
	/* 608..1000 is too short for 500: the piece starts the next lap */
	cr_expect_eq(rxg_ring_alloc(&r, 500, 0, &pos), 0);
	/* the skipped tail 608..1000 stays taken until the ticket that
	 * skipped it lands: 96 bytes are left (504..600), 97 do not fit */
	cr_expect_lt(rxg_ring_alloc(&r, 97, 0, &pos), 0);
	cr_expect_eq(rxg_ring_alloc(&r, 96, 0, &pos), 504);
	cr_expect_lt(rxg_ring_alloc(&r, 1, 0, &pos), 0);
	cr_expect_lt(rxg_ring_alloc(&r, 2000, 0, &pos), 0, "larger than the ring");
}

Test(gpu_dma_ring, pieces_and_tickets_are_bounded)
{
	struct rxg_ring r;
	cr_assert_eq(rxg_ring_init(&r, 1 << 20, 3, 2, slot), 0);
	uint64_t pos, first;
	uint32_t n;
	for (int i = 0; i < 3; i++)
		cr_assert_geq(rxg_ring_alloc(&r, 8, 0, &pos), 0);
	cr_expect_lt(rxg_ring_alloc(&r, 8, 0, &pos), 0, "three pieces at most");
	cr_expect_eq(rxg_ring_submit(&r, &first, &n), 1);
	rxg_ring_complete(&r);
	cr_assert_geq(rxg_ring_alloc(&r, 8, 0, &pos), 0);
	cr_expect_eq(rxg_ring_submit(&r, &first, &n), 2);
	cr_assert_geq(rxg_ring_alloc(&r, 8, 0, &pos), 0);
	cr_expect_eq(rxg_ring_submit(&r, &first, &n), 3);
	cr_expect_lt(rxg_ring_alloc(&r, 8, 0, &pos), 0,
		     "two tickets in flight: the next submit would have no slot");
	rxg_ring_complete(&r);
	rxg_ring_complete(&r);
	rxg_ring_complete(&r);
	cr_expect_eq(r.done, 3, "completing past the last ticket does nothing");
	cr_expect_geq(rxg_ring_alloc(&r, 8, 0, &pos), 0);
}
