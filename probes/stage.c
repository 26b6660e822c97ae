/* SPDX-License-Identifier: MIT */
/* The stage ids' names: the one table every layer reads them from (laps,
 * NVTX ranges, results). A leaf: it calls nothing else of probes. */
#include <string.h>

#include "rxray/probe.h"

static const char *const stage_names[RXP_ST_COUNT] = {
    [RXP_ST_CQE_POLL] = "cqe_poll",
    [RXP_ST_BUF_ALLOC] = "buf_alloc",
    [RXP_ST_SGE_SETUP] = "sge_setup",
    [RXP_ST_HDR_WRITE] = "hdr_write",
    [RXP_ST_HDR_READ] = "hdr_read",
    [RXP_ST_CHAIN] = "chain",
    [RXP_ST_DOORBELL] = "doorbell",
    [RXP_ST_HANDOFF] = "handoff",
    [RXP_ST_APP] = "app",
    [RXP_ST_FREE] = "free",
    [RXP_ST_GPU] = "gpu",
    [RXP_ST_IDLE] = "idle",
    [RXP_ST_PAYLOAD_WRITE] = "payload_write",
    [RXP_ST_CQE_WRITE] = "cqe_write",
    [RXP_ST_PAYLOAD_DMA] = "payload_dma",
    [RXP_ST_GPU_LAUNCH] = "gpu_launch",
    [RXP_ST_GPU_WAIT] = "gpu_wait",
    [RXP_ST_GPU_KERNEL] = "gpu_kernel",
};

const char *rxp_stage_name(enum rxp_stage s)
{
	return (unsigned)s < RXP_ST_COUNT ? stage_names[s] : NULL;
}

int rxp_stage_from_name(const char *name)
{
	for (int i = 0; name && i < RXP_ST_COUNT; i++)
		if (!strcmp(stage_names[i], name))
			return i;
	return -1;
}
