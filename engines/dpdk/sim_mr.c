/* SPDX-License-Identifier: MIT */
/*
 * The MR lookup the mlx5 PMD does for every replacement buffer: a small
 * per-queue cache in front of the registry of regions (sim_int.h). This
 * file holds the cold parts: the sorted registry and the bottom half.
 */
#include <errno.h>
#include <string.h>

#include "sim_int.h"

int rxd_mr_table_add(struct rxd_mr_table *t, uintptr_t start, uintptr_t end, uint32_t lkey)
{
	if (t->n == RXD_MR_MAX)
		return -ENOSPC;
	uint32_t i = t->n;
	while (i > 0 && t->mr[i - 1].start > start) {
		t->mr[i] = t->mr[i - 1];
		i--;
	}
	t->mr[i] = (struct rxd_mr){.start = start, .end = end, .lkey = lkey};
	t->n++;
	return 0;
}

void rxd_mr_cache_init(struct rxd_mr_cache *c, const struct rxd_mr_table *t)
{
	memset(c, 0, sizeof(*c));
	c->table = t;
}

uint32_t rxd_mr_lookup_slow(struct rxd_mr_cache *c, uintptr_t addr)
{
	const struct rxd_mr_table *t = c->table;
	uint32_t lo = 0, hi = t->n;
	c->misses++;
	/* binary search for the last region starting at or below addr, as
	 * the PMD's B-tree lookup does over its sorted table */
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (t->mr[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || addr >= t->mr[lo - 1].end)
		return MLX5_INVALID_LKEY;
	/* the answer replaces the oldest cache entry and becomes the MRU */
	c->e[c->head] = t->mr[lo - 1];
	c->mru = c->head;
	c->head = (uint16_t)((c->head + 1) % RXD_MR_CACHE_N);
	return t->mr[lo - 1].lkey;
}
