/* SPDX-License-Identifier: MIT */
/*
 * The "sim" backend's packet-type table, the mlx5 PMD's (see
 * rxd_cqe_ptype in sim_int.h). A leaf of its own: the receive routines
 * (sim_scalar.c, sim_vector.c) read it and the backend (sim.c) fills it,
 * so neither reaches the other through it.
 */
#include <rte_mbuf_ptype.h>

#include "sim_int.h"

uint32_t rxd_ptype_table[256];

void rxd_ptype_table_init(void)
{
	/* index: bits 1:0 L3 (1 IPv6, 2 IPv4), bits 4:2 L4 (1 TCP, 2 UDP,
	 * 3-4 TCP with flags), bits 7:6 tunnel (none here); unknown = 0 */
	static const uint32_t l3[3] = {0, RTE_PTYPE_L3_IPV6_EXT_UNKNOWN,
				       RTE_PTYPE_L3_IPV4_EXT_UNKNOWN};
	static const uint32_t l4[5] = {RTE_PTYPE_L4_NONFRAG, RTE_PTYPE_L4_TCP, RTE_PTYPE_L4_UDP,
				       RTE_PTYPE_L4_TCP, RTE_PTYPE_L4_TCP};
	rxd_ptype_table[0] = RTE_PTYPE_L2_ETHER;
	for (uint32_t a = 1; a < 3; a++)
		for (uint32_t b = 0; b < 5; b++)
			rxd_ptype_table[a | (b << 2)] = RTE_PTYPE_L2_ETHER | l3[a] | l4[b];
}
