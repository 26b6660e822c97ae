/* SPDX-License-Identifier: MIT */
/*
 * attach reads rte_eth_fp_ops and rte_mempool_ops_table out of a target
 * with hard-coded offsets (attach/attach_dpdk_layout.h). Checked here
 * against the installed DPDK's own headers: a DPDK that moves a field
 * fails this test instead of labelling the wrong function.
 */
#include <criterion/criterion.h>
#include <stddef.h>

#include <rte_ethdev.h>
#include <rte_mempool.h>

#include "attach_dpdk_layout.h"

Test(attach_dpdk_layout, eth_fp_ops)
{
	cr_assert_eq(sizeof(struct rte_eth_fp_ops), RXB_FP_OPS_SIZE);
	cr_assert_eq(offsetof(struct rte_eth_fp_ops, rx_pkt_burst), RXB_FP_RX_PKT_BURST);
	cr_assert_eq(offsetof(struct rte_eth_fp_ops, rx_queue_count), RXB_FP_RX_QUEUE_COUNT);
	cr_assert_eq(offsetof(struct rte_eth_fp_ops, rx_descriptor_status),
		     RXB_FP_RX_DESCRIPTOR_STATUS);
	cr_assert_eq(offsetof(struct rte_eth_fp_ops, tx_pkt_burst), RXB_FP_TX_PKT_BURST);
	cr_assert_eq(offsetof(struct rte_eth_fp_ops, tx_pkt_prepare), RXB_FP_TX_PKT_PREPARE);
	cr_assert_eq(offsetof(struct rte_eth_fp_ops, tx_descriptor_status),
		     RXB_FP_TX_DESCRIPTOR_STATUS);
	cr_assert_eq(sizeof(rte_eth_fp_ops) % RXB_FP_OPS_SIZE, 0);
}

Test(attach_dpdk_layout, mempool_ops_table)
{
	cr_assert_eq(sizeof(struct rte_mempool_ops_table), RXB_MP_TABLE_SIZE);
	cr_assert_eq(offsetof(struct rte_mempool_ops_table, num_ops), RXB_MP_TABLE_NUM_OPS);
	cr_assert_eq(offsetof(struct rte_mempool_ops_table, ops), RXB_MP_TABLE_OPS);
	cr_assert_eq(RTE_MEMPOOL_MAX_OPS_IDX, RXB_MP_OPS_MAX);
	cr_assert_eq(RTE_MEMPOOL_OPS_NAMESIZE, RXB_MP_OPS_NAMESIZE);
	cr_assert_eq(sizeof(struct rte_mempool_ops), RXB_MP_OPS_SIZE);
	cr_assert_eq(offsetof(struct rte_mempool_ops, name), RXB_MP_OPS_NAME);
	cr_assert_eq(offsetof(struct rte_mempool_ops, alloc), RXB_MP_OPS_ALLOC);
	cr_assert_eq(offsetof(struct rte_mempool_ops, free), RXB_MP_OPS_FREE);
	cr_assert_eq(offsetof(struct rte_mempool_ops, enqueue), RXB_MP_OPS_ENQUEUE);
	cr_assert_eq(offsetof(struct rte_mempool_ops, dequeue), RXB_MP_OPS_DEQUEUE);
	cr_assert_eq(offsetof(struct rte_mempool_ops, get_count), RXB_MP_OPS_GET_COUNT);
	cr_assert_eq(offsetof(struct rte_mempool_ops, calc_mem_size), RXB_MP_OPS_CALC_MEM_SIZE);
	cr_assert_eq(offsetof(struct rte_mempool_ops, populate), RXB_MP_OPS_POPULATE);
	cr_assert_eq(offsetof(struct rte_mempool_ops, get_info), RXB_MP_OPS_GET_INFO);
	cr_assert_eq(offsetof(struct rte_mempool_ops, dequeue_contig_blocks),
		     RXB_MP_OPS_DEQUEUE_CONTIG_BLOCKS);
}
