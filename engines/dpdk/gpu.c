/* SPDX-License-Identifier: MIT */
/*
 * Payload pool in GPU memory for an ethdev port: the GPUDirect setup the
 * report's application uses. cudaMalloc'd memory is made known to DPDK as
 * external memory (rte_extmem_register), mapped for the port's DMA
 * (rte_dev_dma_map), and carved into mbuf data buffers by
 * rte_pktmbuf_pool_create_extbuf; the mbuf headers stay in host memory.
 * Compiled with CUDA only (RXRAY_HAVE_CUDA).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_dev.h>
#include <rte_ethdev.h>
#include <rte_mbuf_pool_ops.h>
#include <rte_memory.h>

#include "dpdk_int.h"

#ifdef RXRAY_HAVE_CUDA
#include <cuda_runtime_api.h>

#define GPU_PAGE 65536u

bool rxd_gpu_available(void)
{
	int n = 0;
	return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

struct rte_mempool *rxd_gpu_pool_create(const char *name, uint16_t port, uint32_t n, uint32_t cache,
					uint32_t room, void **gpu_mem, size_t *gpu_len, char *err,
					size_t errlen)
{
	struct rte_eth_dev_info di;
	struct rte_pktmbuf_extmem ext;
	struct rte_mempool *mp = NULL;
	void *ptr = NULL;
	size_t len = RTE_ALIGN_CEIL((size_t)n * room, GPU_PAGE);
	bool registered = false, mapped = false;
	cudaError_t ce;

	*gpu_mem = NULL;
	*gpu_len = 0;
	if (rte_eth_dev_info_get(port, &di)) {
		snprintf(err, errlen, "payload-mem: cannot read port %u info", port);
		return NULL;
	}
	ce = cudaMalloc(&ptr, len);
	if (ce != cudaSuccess) {
		snprintf(err, errlen, "payload-mem: cudaMalloc(%zu): %s", len,
			 cudaGetErrorString(ce));
		return NULL;
	}
	if (rte_extmem_register(ptr, len, NULL, 0, GPU_PAGE)) {
		snprintf(err, errlen, "payload-mem: rte_extmem_register: %s",
			 rte_strerror(rte_errno));
		goto fail;
	}
	registered = true;
	if (rte_dev_dma_map(di.device, ptr, RTE_BAD_IOVA, len)) {
		snprintf(err, errlen, "payload-mem: rte_dev_dma_map on %s: %s", di.driver_name,
			 rte_strerror(rte_errno));
		goto fail;
	}
	mapped = true;
	memset(&ext, 0, sizeof(ext));
	ext.buf_ptr = ptr;
	ext.buf_iova = RTE_BAD_IOVA;
	ext.buf_len = len;
	ext.elt_size = (uint16_t)room;
	mp = rte_pktmbuf_pool_create_extbuf(name, n, cache, 0, (uint16_t)room,
					    rte_eth_dev_socket_id(port), &ext, 1);
	if (!mp) {
		snprintf(err, errlen, "payload-mem: rte_pktmbuf_pool_create_extbuf: %s",
			 rte_strerror(rte_errno));
		goto fail;
	}
	*gpu_mem = ptr;
	*gpu_len = len;
	return mp;
fail:
	if (mapped)
		rte_dev_dma_unmap(di.device, ptr, RTE_BAD_IOVA, len);
	if (registered)
		rte_extmem_unregister(ptr, len);
	cudaFree(ptr);
	return NULL;
}

void rxd_gpu_unmap(uint16_t port, void *gpu_mem, size_t gpu_len)
{
	struct rte_eth_dev_info di;
	if (gpu_mem && rte_eth_dev_info_get(port, &di) == 0)
		rte_dev_dma_unmap(di.device, gpu_mem, RTE_BAD_IOVA, gpu_len);
}

void rxd_gpu_pool_free(struct rte_mempool *mp, void *gpu_mem, size_t gpu_len)
{
	rte_mempool_free(mp);
	if (!gpu_mem)
		return;
	rte_extmem_unregister(gpu_mem, gpu_len);
	cudaFree(gpu_mem);
}

struct rte_mempool *rxd_gpu_pool_create_sim(const char *name, uint32_t n, uint32_t cache,
					    uint32_t room, void **gpu_mem, size_t *gpu_len,
					    char *err, size_t errlen)
{
	struct rte_pktmbuf_extmem ext;
	void *ptr = NULL;
	size_t len = RTE_ALIGN_CEIL((size_t)n * room, GPU_PAGE);
	*gpu_mem = NULL;
	*gpu_len = 0;
	cudaError_t ce = cudaMalloc(&ptr, len);
	if (ce != cudaSuccess) {
		snprintf(err, errlen, "payload-mem: gpu: cudaMalloc(%zu): %s", len,
			 cudaGetErrorString(ce));
		return NULL;
	}
	memset(&ext, 0, sizeof(ext));
	ext.buf_ptr = ptr;
	ext.buf_iova = RTE_BAD_IOVA; /* no port maps it: the software NIC's DMA copies */
	ext.buf_len = len;
	ext.elt_size = (uint16_t)room;
	/* the counting driver, as every other pool, so gets and puts stay exact */
	rte_mbuf_set_user_mempool_ops(RXD_MPOPS_NAME);
	struct rte_mempool *mp = rte_pktmbuf_pool_create_extbuf(name, n, cache, 0, (uint16_t)room,
								(int)rte_socket_id(), &ext, 1);
	if (!mp) {
		snprintf(err, errlen, "payload-mem: rte_pktmbuf_pool_create_extbuf: %s",
			 rte_strerror(rte_errno));
		cudaFree(ptr);
		return NULL;
	}
	*gpu_mem = ptr;
	*gpu_len = len;
	return mp;
}

void rxd_gpu_mem_free(void *gpu_mem)
{
	cudaFree(gpu_mem);
}

#else /* !RXRAY_HAVE_CUDA */

bool rxd_gpu_available(void)
{
	return false;
}

struct rte_mempool *rxd_gpu_pool_create(const char *name, uint16_t port, uint32_t n, uint32_t cache,
					uint32_t room, void **gpu_mem, size_t *gpu_len, char *err,
					size_t errlen)
{
	(void)name;
	(void)port;
	(void)n;
	(void)cache;
	(void)room;
	*gpu_mem = NULL;
	*gpu_len = 0;
	snprintf(err, errlen, "payload-mem: gpu needs CUDA; this build has none");
	errno = ENOTSUP;
	return NULL;
}

void rxd_gpu_unmap(uint16_t port, void *gpu_mem, size_t gpu_len)
{
	(void)port;
	(void)gpu_mem;
	(void)gpu_len;
}

void rxd_gpu_pool_free(struct rte_mempool *mp, void *gpu_mem, size_t gpu_len)
{
	(void)gpu_mem;
	(void)gpu_len;
	rte_mempool_free(mp);
}

struct rte_mempool *rxd_gpu_pool_create_sim(const char *name, uint32_t n, uint32_t cache,
					    uint32_t room, void **gpu_mem, size_t *gpu_len,
					    char *err, size_t errlen)
{
	(void)name;
	(void)n;
	(void)cache;
	(void)room;
	*gpu_mem = NULL;
	*gpu_len = 0;
	snprintf(err, errlen, "payload-mem: gpu needs CUDA; this build has none");
	errno = ENOTSUP;
	return NULL;
}

void rxd_gpu_mem_free(void *gpu_mem)
{
	(void)gpu_mem;
}
#endif
