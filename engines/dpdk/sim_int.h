/* SPDX-License-Identifier: MIT */
/*
 * Private to the "sim" backend: one receive queue modelled on the mlx5
 * PMD's struct mlx5_rxq_data (software ring of mbufs beside the hardware
 * WQE ring, consumer indexes, compressed-CQE state, the per-queue MR
 * cache), driven over the software NIC's mlx5-format rings.
 *
 * engines/FIDELITY.md lists, per operation, what the PMD does (file and
 * function), what these routines do, and what difference remains with its
 * measured effect (bench/sim_fidelity).
 */
#ifndef RXRAY_DPDK_SIM_INT_H
#define RXRAY_DPDK_SIM_INT_H

#include <stdint.h>

#include "dpdk_int.h"
#include "rxray/inject.h"
#include "rxray/simnic.h"

/* ------------------------------------------------------------ MR cache */

/*
 * Address-range -> lkey. The table is the "global" registry (every region
 * registered with the NIC, sorted by start: the PMD's mempool/MR
 * database); the cache is the per-queue front end the PMD keeps in
 * mlx5_mr_ctrl: a handful of entries, a most-recently-used index checked
 * first, then a linear scan, then the bottom half (here: a binary search
 * of the table) whose answer replaces the oldest cache entry.
 */
#define RXD_MR_CACHE_N 8
#define RXD_MR_MAX 64

struct rxd_mr {
	uintptr_t start, end;
	uint32_t lkey;
};

struct rxd_mr_table {
	uint32_t n;
	struct rxd_mr mr[RXD_MR_MAX];
};

struct rxd_mr_cache {
	struct rxd_mr e[RXD_MR_CACHE_N];
	uint16_t mru, head;
	const struct rxd_mr_table *table;
	uint64_t lookups, mru_hits, scan_hits, misses;
	uint32_t delay; /* --op-delay mr=K: cycles spun per lookup (0 = off) */
};

/*
 * Which MRs the mlx5 PMD registers for a set of mempools (its mempool
 * registration, mlx5_mr_mempool_register, as in DPDK 22.11): each pool on
 * its own, never merged with another pool's memory. A pool's chunks are
 * widened to the host's page size and merged where they touch, one MR per
 * contiguous range; a pool whose whole memory lies inside one page of its
 * memseg list (a hugepage under EAL) registers that whole page instead, and
 * shares the MR of an earlier pool registered on the same page. So two
 * pools share an lkey only when both fit inside one hugepage.
 */
#define RXD_MR_POOL_MAX 16

struct rxd_mr_chunk {
	uintptr_t start, end;
};

/* One pool's memory, in its registration order. */
struct rxd_mr_pool_mem {
	const struct rxd_mr_chunk *chunk;
	uint32_t n;
	size_t seg_page; /* page size of the memseg list it sits on (0: none) */
};

struct rxd_mr_plan {
	uint32_t n;                 /* distinct MRs, mr[0..n) */
	struct rxd_mr mr[RXD_MR_MAX];
	uint32_t pool_mr[RXD_MR_POOL_MAX][RXD_MR_MAX / 4]; /* pool -> mr[] */
	uint32_t pool_nmr[RXD_MR_POOL_MAX];
};

/* Plan the registration of npools pools (sys_page: the host's page size).
 * mr[].lkey is left 0 for the caller. 0, -EINVAL (no chunk, a bad page
 * size), -E2BIG (more pools or MRs than the plan holds), -ENOMEM. */
int rxd_mr_plan(const struct rxd_mr_pool_mem *pools, uint32_t npools, size_t sys_page,
		struct rxd_mr_plan *out);

/* Add [start, end) -> lkey keeping the table sorted. 0 or -ENOSPC. */
int rxd_mr_table_add(struct rxd_mr_table *t, uintptr_t start, uintptr_t end, uint32_t lkey);
void rxd_mr_cache_init(struct rxd_mr_cache *c, const struct rxd_mr_table *t);
/* Bottom half: table search + cache fill. MLX5_INVALID_LKEY on no match. */
uint32_t rxd_mr_lookup_slow(struct rxd_mr_cache *c, uintptr_t addr);

/* The PMD's fast path: MRU entry, then a short scan, then the bottom half. */
static inline uint32_t rxd_mr_lookup(struct rxd_mr_cache *c, uintptr_t addr)
{
	c->lookups++;
	rxp_op_delay(c->delay);
	const struct rxd_mr *m = &c->e[c->mru];
	if (__builtin_expect(addr >= m->start && addr < m->end, 1)) {
		c->mru_hits++;
		return m->lkey;
	}
	for (uint16_t i = 0; i < RXD_MR_CACHE_N; i++) {
		m = &c->e[i];
		if (m->start == 0 && m->end == 0)
			break;
		if (addr >= m->start && addr < m->end) {
			c->mru = i;
			c->scan_hits++;
			return m->lkey;
		}
	}
	return rxd_mr_lookup_slow(c, addr);
}

/* ------------------------------------------------------ CQE decoding */

/*
 * Packet type from the CQE, as the PMD does (mlx5_set_ptype_table,
 * rxq_cq_to_pkt_type): a 256-entry table indexed by the parser's L3/L4
 * header types (l4_hdr_type_etc >> 2) and the tunnel bits of the CQE's
 * first byte (<< 6). Filled by rxd_ptype_table_init (sim_ptype.c) when
 * the backend opens.
 */
extern uint32_t rxd_ptype_table[256];
void rxd_ptype_table_init(void);

static inline uint32_t rxd_cqe_ptype(const struct mlx5_cqe64 *c)
{
	const uint8_t *b = (const uint8_t *)c;
	return rxd_ptype_table[(uint8_t)((c->l4_hdr_type_etc >> 2) | ((b[0] & 3u) << 6))];
}

/* What the routines keep of one completion between polling it and
 * filling the mbuf: len 0 = error completion. */
struct rxd_comp {
	uint32_t len;
	uint32_t hash;
	uint32_t ptype;
};

/* Scalar routine: packets per phase group, 0 = the whole burst (phased).
 * bench/sim_fidelity's phasing table decides it: phases stay while the
 * phased total (probes off) is within 5% of the per-packet one, else 4. */
#define RXD_SCALAR_GROUP 0u

/* 1 in 2^RXD_WQE_CHECK_SHIFT bursts checks its first completion's
 * wqe_counter (the PMD checks none: it trusts in-order completion). */
#define RXD_WQE_CHECK_SHIFT 6

/* --------------------------------------------------------------- queue */

struct rxd_simq {
	struct rxs_ring ring;
	uint32_t wqe_mask, cqe_mask;
	uint32_t sges;			/* segments per WQE (1 or 2) */
	uint32_t seg_len[RXD_MAX_SEGS]; /* WQE byte_count per segment */
	struct rte_mempool *mp[RXD_MAX_SEGS];
	struct rte_mbuf **elts; /* wqe_cnt * sges (+ slack): the software ring */
	uint32_t rq_ci;		/* WQEs posted (scalar: also consumed + wqe_cnt) */
	uint32_t rq_pi;		/* vector: WQEs whose mbufs went to the app */
	uint32_t cq_ci;		/* CQ consumer index */
	uint32_t repl_thresh;	/* vector: replenish when this many are free */
	bool lkey_per_seg;	/* more than one MR: rewrite lkeys (PMD check) */
	uint32_t lkey0;		/* the only lkey when !lkey_per_seg */
	uint16_t port;
	bool rss_hash;		/* more than one queue: mbufs carry the CQE's hash */
	struct rxd_mr_cache mrc;

	/* compressed CQE session being read (scalar: mlx5_rxq_data.zip) */
	uint32_t zip_n;		/* completions in it; 0 = none open */
	uint32_t zip_ai;	/* next mini-CQE to read */
	uint32_t zip_ca;	/* first entry not yet invalidated */
	uint32_t zip_na;	/* entry holding the next mini array */
	/* scalar: completions polled but not delivered (an allocation
	 * failed behind them); delivered first by the next burst */
	uint32_t carry_n;
	struct rxd_comp *carry; /* [RXD_MAX_BURST] */
	/* vector: mbufs decompressed but not yet returned (the PMD's
	 * rxq->decompressed), from elts[rq_pi] on */
	uint32_t decompressed;
	uint32_t group;		/* scalar: packets per phase group (0 = the burst) */
	uint32_t bursts;	/* polls, for the sampled wqe_counter check */
	/* RXRAY_SIM_LEGACY switches (measurement only, read at setup) */
	bool legacy_nextnull, legacy_noprefetch, legacy_wqecheck, legacy_ptype;

	/* counters (RX lcore only) */
	uint64_t allocs;	/* replacement buffers taken into the ring */
	uint64_t nombuf_pkts;	/* packets dropped: allocation failed mid-chain */
	uint64_t nombuf_events; /* allocation failures (the PMD's rx_nombuf) */
	uint64_t err_cqes;
	uint64_t wqe_counter_faults; /* CQE names another WQE than expected */
	uint64_t wqe_checks;	     /* completions whose wqe_counter was checked */
	uint64_t sessions;	     /* compressed sessions opened */
	uint64_t mini_cqes;	     /* completions read from mini-CQEs */
	uint64_t carried;	     /* scalar: completions kept for the next burst */
	uint64_t spec_allocs;	     /* scalar: look-ahead alloc+free ending a short burst */
	uint64_t idle_allocs;	     /* scalar: the same on an empty poll */
	uint64_t doorbells;
	uint64_t replenish_calls; /* vector: bulk gets */
} __attribute__((aligned(64))); /* one RX lcore each: no line shared between queues */

/* The disciplines' burst functions (rxd_burst_fn). */
uint16_t rxd_sim_burst_scalar(struct rxd_queue *q, struct rxp_probe *p, struct rte_mbuf **pkts,
			      uint16_t n);
uint16_t rxd_sim_burst_vector(struct rxd_queue *q, struct rxp_probe *p, struct rte_mbuf **pkts,
			      uint16_t n);
/* Vector setup check: the PMD requires CQ size == ring size. */
uint32_t rxd_sim_vector_thresh(uint32_t wqe_cnt);

#endif /* RXRAY_DPDK_SIM_INT_H */
