/* SPDX-License-Identifier: MIT */
/*
 * The MR lookup the mlx5 PMD does for every replacement buffer: a small
 * per-queue cache in front of the registry of regions (sim_int.h). This
 * file holds the cold parts: the sorted registry and the bottom half.
 */
#include <errno.h>
#include <stdlib.h>
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

static int mr_chunk_cmp(const void *a, const void *b)
{
	const struct rxd_mr_chunk *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* The MR of [start, end) in the plan: an earlier pool's when a single-page
 * pool lands on a page already registered (shared), else a new one. */
static int mr_plan_add(struct rxd_mr_plan *p, uint32_t pool, uintptr_t start, uintptr_t end,
		       bool share)
{
	uint32_t m = p->n;
	if (share)
		for (m = 0; m < p->n; m++)
			if (p->mr[m].start == start)
				break;
	if (m == p->n) {
		if (p->n == RXD_MR_MAX)
			return -E2BIG;
		p->mr[p->n++] = (struct rxd_mr){.start = start, .end = end};
	}
	if (p->pool_nmr[pool] == sizeof(p->pool_mr[0]) / sizeof(p->pool_mr[0][0]))
		return -E2BIG;
	p->pool_mr[pool][p->pool_nmr[pool]++] = m;
	return 0;
}

int rxd_mr_plan(const struct rxd_mr_pool_mem *pools, uint32_t npools, size_t sys_page,
		struct rxd_mr_plan *out)
{
	if (npools > RXD_MR_POOL_MAX)
		return -E2BIG;
	if (!sys_page || (sys_page & (sys_page - 1)))
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	for (uint32_t p = 0; p < npools; p++) {
		const struct rxd_mr_pool_mem *pm = &pools[p];
		size_t hp = pm->seg_page;
		if (!pm->n || (hp & (hp - 1)))
			return -EINVAL;
		struct rxd_mr_chunk *r = malloc(pm->n * sizeof(*r));
		if (!r)
			return -ENOMEM;
		for (uint32_t i = 0; i < pm->n; i++) {
			r[i].start = pm->chunk[i].start & ~(uintptr_t)(sys_page - 1);
			r[i].end = (pm->chunk[i].end + sys_page - 1) & ~(uintptr_t)(sys_page - 1);
		}
		qsort(r, pm->n, sizeof(*r), mr_chunk_cmp);
		/* ranges that touch become one; a gap starts the next */
		uint32_t k = 1;
		for (uint32_t i = 1; i < pm->n; i++) {
			if (r[i].start == r[k - 1].end)
				r[k - 1].end = r[i].end;
			else
				r[k++] = r[i];
		}
		int rc = 0;
		uintptr_t page = hp ? r[0].start & ~(uintptr_t)(hp - 1) : 0;
		if (hp && r[k - 1].end < page + hp) {
			/* the whole pool inside one page of its memseg list */
			rc = mr_plan_add(out, p, page, page + hp, true);
		} else {
			for (uint32_t i = 0; i < k && !rc; i++)
				rc = mr_plan_add(out, p, r[i].start, r[i].end, false);
		}
		free(r);
		if (rc)
			return rc;
	}
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
	/* a pool's hugepage-wide MR may overlap another pool's range: then
	 * an earlier region can cover addr where the last one does not */
	while (lo > 0 && addr >= t->mr[lo - 1].end)
		lo--;
	if (lo == 0)
		return MLX5_INVALID_LKEY;
	/* the answer replaces the oldest cache entry and becomes the MRU */
	c->e[c->head] = t->mr[lo - 1];
	c->mru = c->head;
	c->head = (uint16_t)((c->head + 1) % RXD_MR_CACHE_N);
	return t->mr[lo - 1].lkey;
}
