/* SPDX-License-Identifier: MIT */
/*
 * The DPDK engine (docs/design.md "The two engines", "The DPDK receive path"): mbufs from
 * real DPDK mempools, daqiri-like workers, two backends.
 *
 *   ethdev  --device "dpdk:<eal args>": rte_eth_rx_burst on a real port
 *           (a PCI address with devargs, or a vdev such as net_null0);
 *           single segment or buffer split (rte_eth_rxseg_split).
 *   sim     --device "sim[:opts]": the mlx5 PMD's receive disciplines
 *           (scalar / vector) modelled over the software NIC's rings.
 *
 * Workers: one RX lcore per queue collects bursts into batches of
 * c->batch packets and hands them to an app over an SP/SC rte_ring (full
 * ring -> app_dropped); the app reads pkt_len (and the rxray tag on sim)
 * and frees with rte_pktmbuf_free_bulk, mixed or grouped per pool. The
 * app runs as an EAL lcore (mempool cache), a plain pthread (no cache) or
 * inline on the RX lcore.
 *
 * The EAL can be initialised once per process: a second run in the same
 * process reuses it (lcores are re-pinned per run) as long as it needs no
 * more lcores and the EAL arguments are the same; otherwise it fails with
 * a line saying to use a fresh process. Tests and benches fork.
 *
 * Error rule: 0 or -errno with one line in err.
 */
#ifndef RXRAY_DPDK_H
#define RXRAY_DPDK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rxray/core.h"

#ifdef __cplusplus
extern "C" {
#endif

struct rte_mempool;

/* The engine's ops table (name "dpdk"). */
extern const struct rx_engine_ops rx_engine_dpdk;

/* ------------------------------------------------------------- mempool */

/*
 * Counting mempool driver "rxray_ring": the same multi-producer /
 * multi-consumer rte_ring discipline as DPDK's ring_mp_mc driver, plus a
 * count of every enqueue/dequeue call that reaches the shared ring (a
 * call the per-lcore mempool cache absorbs never gets here). Counts go to
 * the calling thread's bound slot (rxd_mpops_bind); calls from unbound
 * threads (pool population, teardown) land in a global "unbound" slot.
 */
#define RXD_MPOPS_NAME "rxray_ring"
#define RXD_MPOPS_MAX_POOLS 16

struct rxd_mpops_pool {
	uint64_t enq_calls, enq_objs; /* puts reaching the shared ring */
	uint64_t deq_calls, deq_objs; /* gets reaching the shared ring */
	uint64_t deq_fail;	      /* gets the ring could not satisfy */
};

/* One thread's counts, per pool slot (rxd_mpops_pool_slot). */
struct rxd_mpops_counts {
	struct rxd_mpops_pool pool[RXD_MPOPS_MAX_POOLS];
} __attribute__((aligned(64)));

/*
 * Register the driver with the mempool library (idempotent, thread-safe).
 * May run before or after rte_eal_init. 0 or -errno.
 */
int rxd_mpops_register(void);
/*
 * Attribution ground truth (--op-delay mempool=K): every driver get and
 * put owes K clock cycles, paid by the lap it ran in (rxp_op_delay), so
 * the stage that calls it grows by K a call. 0 = off (the default).
 * Process-wide; set before the workers start.
 */
void rxd_mpops_set_delay(uint32_t cycles);
/* Count this thread's calls into *slot from now on (NULL = stop). The
 * caller owns slot and reads it after the thread stops. */
void rxd_mpops_bind(struct rxd_mpops_counts *slot);
/* Slot index of a pool using the driver (0..15), or -1 for other pools. */
int rxd_mpops_pool_slot(const struct rte_mempool *mp);
/* Sum of calls over every pool in c. */
void rxd_mpops_total(const struct rxd_mpops_counts *c, struct rxd_mpops_pool *out);
/* dst += src. */
void rxd_mpops_add(struct rxd_mpops_counts *dst, const struct rxd_mpops_counts *src);

/* ----------------------------------------------------------------- EAL */

/*
 * Build the EAL argument vector for a run and initialise the EAL once:
 * user arguments (after "dpdk:" in the device string; none for sim),
 * --no-huge and -m when no hugepages are free, --no-pci when no device
 * is allowed with -a, --no-shconf, --no-telemetry, a log level, lcores
 * for the run (re-pinned at launch) and -d for the driver plugins when
 * the EAL will not find them itself. `note` (may be NULL) receives what
 * was added and why, e.g. "no hugepages free: --no-huge -m 512".
 * Returns 0 (also when the EAL is already up with the same user arguments
 * and enough lcores: reused, note says so); -EBUSY when it is up with
 * other arguments or too few lcores; -EINVAL for bad arguments (lcore
 * options, unbalanced quotes); -errno from rte_eal_init. A line in err.
 * Registers the counting mempool driver first.
 */
int rxd_eal_ensure(const char *user_args, unsigned lcores_needed, size_t mem_mb, char *note,
		   size_t notelen, char *err, size_t errlen);
/* True once the EAL is up in this process. */
bool rxd_eal_ready(void);
/* The arguments the EAL was initialised with, space separated ("" before). */
const char *rxd_eal_args(void);
/*
 * The plugin .so files the engine passes with -d when the EAL's own
 * plugin directory (RTE_EAL_PMD_PATH) is missing, taken from
 * $RXRAY_DPDK_PMD_DIR or a usual install path, for a device kind ("sim",
 * "null", "ring", "mlx5"). Space separated file names.
 */
const char *rxd_eal_plugins_for(const char *kind);

#ifdef __cplusplus
}
#endif
#endif /* RXRAY_DPDK_H */
