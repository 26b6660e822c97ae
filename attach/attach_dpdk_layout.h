/* SPDX-License-Identifier: MIT */
/*
 * The DPDK tables attach_dpdk.c reads out of a target, as laid out in
 * DPDK 22.11 (rte_ethdev_core.h: struct rte_eth_fp_ops; rte_mempool.h:
 * struct rte_mempool_ops_table) on 64-bit hosts with 64-byte cache lines.
 * rxray does not link DPDK for this: the target's DPDK may not be the
 * build's. tests/attach/test_dpdk_layout.c checks every offset against
 * the installed DPDK headers with offsetof.
 */
#ifndef RXRAY_ATTACH_DPDK_LAYOUT_H
#define RXRAY_ATTACH_DPDK_LAYOUT_H

/* struct rte_eth_fp_ops: one per port, 2 cache lines */
#define RXB_FP_OPS_SIZE 128
#define RXB_FP_RX_PKT_BURST 0
#define RXB_FP_RX_QUEUE_COUNT 8
#define RXB_FP_RX_DESCRIPTOR_STATUS 16
#define RXB_FP_TX_PKT_BURST 64
#define RXB_FP_TX_PKT_PREPARE 72
#define RXB_FP_TX_DESCRIPTOR_STATUS 80

/* struct rte_mempool_ops_table: spinlock, num_ops, then cache-aligned ops */
#define RXB_MP_TABLE_NUM_OPS 4
#define RXB_MP_TABLE_OPS 64
#define RXB_MP_OPS_MAX 16 /* RTE_MEMPOOL_MAX_OPS_IDX */
#define RXB_MP_TABLE_SIZE (RXB_MP_TABLE_OPS + RXB_MP_OPS_MAX * RXB_MP_OPS_SIZE)
/* struct rte_mempool_ops */
#define RXB_MP_OPS_SIZE 128
#define RXB_MP_OPS_NAME 0
#define RXB_MP_OPS_NAMESIZE 32 /* RTE_MEMPOOL_OPS_NAMESIZE */
#define RXB_MP_OPS_ALLOC 32
#define RXB_MP_OPS_FREE 40
#define RXB_MP_OPS_ENQUEUE 48
#define RXB_MP_OPS_DEQUEUE 56
#define RXB_MP_OPS_GET_COUNT 64
#define RXB_MP_OPS_CALC_MEM_SIZE 72
#define RXB_MP_OPS_POPULATE 80
#define RXB_MP_OPS_GET_INFO 88
#define RXB_MP_OPS_DEQUEUE_CONTIG_BLOCKS 96

#endif
