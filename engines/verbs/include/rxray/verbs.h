/* SPDX-License-Identifier: MIT */
/*
 * The verbs engine: fixed receive slots, direct CQE polling (docs/design.md
 * "The two engines", "daqiri's ibverbs engine").
 *
 * WQE i always points at header slot i and payload slot i; the RX worker
 * polls mlx5 CQEs itself (owner bit, opcode), takes slot = wqe_counter &
 * mask, hands bursts to the app (an SPSC ring to an app thread, or inline
 * in the RX worker), the app reads each header's sequence number and
 * releases its slot with one atomic add, and the RX worker rewrites the
 * released WQEs and rings the doorbell record once per batch (and on a
 * poll that finds nothing, so released slots never wait on traffic that
 * needs them). No allocator on the packet path.
 *
 * Devices (rx_config.device):
 *   "sim[:opts]"            the software NIC's rings (rxray/simnic.h)
 *   "mlx5:<ibdev|pci>[,udp=PORT]"  rdma-core: PD, MRs, CQ + receive WQ per
 *                           queue, RSS raw-packet QP, UDP-port flow rule,
 *                           rings through mlx5dv_init_obj. With no RDMA
 *                           device, caps/run fail with "no RDMA device: ..."
 *                           (-ENODEV).
 *
 * Modes: single (one data segment, the whole frame into the payload slot)
 * and hds (c->split bytes into the header slot, the rest into the payload
 * slot). Probes: rx thread cqe_poll, handoff, sge_setup, doorbell, idle
 * (and hdr_read, app, free when the app runs inline); app thread handoff,
 * hdr_read, app, free, idle. --inject adds its cycles per packet inside
 * the stage.
 *
 * run() fills the result's counters (offered, received, out_of_buffer,
 * nombuf = 0, app_dropped, errors = error CQEs + sequence faults + length
 * errors), threads (nic, rx per queue, app per queue), config (with
 * placement), env, and extra "verbs" (per-queue figures).
 */
#ifndef RXRAY_VERBS_H
#define RXRAY_VERBS_H

#include "rxray/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The engine's ops table (name "verbs"). */
extern const struct rx_engine_ops rx_engine_verbs;

#ifdef __cplusplus
}
#endif
#endif /* RXRAY_VERBS_H */
