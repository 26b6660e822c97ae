// SPDX-License-Identifier: MIT
// The software NIC's DMA engine into GPU memory (rxray/gpu.h, rxg_dma_*):
// a ring of pinned, mapped staging space; a submit is one scatter kernel
// that reads the ring in place over PCIe and writes each piece to its GPU
// address; its last block stores the ticket into mapped host memory.
#include <cuda_runtime.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dma_ring.h"
#include "gpu_int.cuh"
#include "rxray/gpu.h"

#define RXG_DMA_STREAMS 4u   // submits in flight on separate streams
#define RXG_DMA_TICKETS 1024u
#define RXG_DMA_WARPS 4u     // pieces per block: a warp each

struct rxg_dma_piece {
	void *dst;
	uint32_t off; // in the staging ring
	uint32_t len;
};

// Pieces ride in the kernel's parameters (no copy, no mapped read for
// them): up to P per launch.
template <unsigned P> struct rxg_scatter_arg {
	const uint8_t *staging;      // device view of the mapped ring
	unsigned *blocks;            // device counter: blocks finished
	unsigned long long *flag;    // device view of the ticket's mapped flag
	unsigned long long ticket;   // 0: not the submit's last launch
	uint32_t n;
	rxg_dma_piece pc[P];
};

template <unsigned P> __global__ static void rxg_scatter(const __grid_constant__ rxg_scatter_arg<P> a)
{
	unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
	unsigned k = blockIdx.x * RXG_DMA_WARPS + warp;
	if (k < a.n)
		rxg_warp_copy((uint8_t *)a.pc[k].dst, a.staging + a.pc[k].off, a.pc[k].len, lane);
	// every byte of the block lands at GPU scope before its count does
	__threadfence();
	__syncthreads();
	if (threadIdx.x == 0) {
		unsigned done = atomicAdd(a.blocks, 1u);
		if (done == gridDim.x - 1) {
			// the last block: every block's writes are visible, the
			// staging bytes all read; the counter is free for the next
			// launch on this stream, the host may reuse the bytes
			*a.blocks = 0;
			if (a.ticket) {
				__threadfence_system();
				*(volatile unsigned long long *)a.flag = a.ticket;
			}
		}
	}
}

struct rxg_dma {
	rxg_ring r;
	rxg_ring_slot *slot;
	rxg_dma_piece *pieces;   // host: pcap entries, piece position mod pcap
	uint8_t *staging;        // pinned, mapped, write-combined
	uint8_t *d_staging;
	unsigned long long *flag;   // pinned, mapped: a ticket's flag at t % tickets
	unsigned long long *d_flag;
	unsigned *d_blocks;      // a counter per stream
	cudaStream_t st[RXG_DMA_STREAMS];
	int broken;              // a CUDA call failed: submit refuses
	rxg_scatter_arg<512> big;
};

extern "C" int rxg_dma_open(uint32_t max_pieces, size_t staging_bytes, struct rxg_dma **out,
			    char *err, size_t errlen)
{
	int rc = 0;
	*out = NULL;
	if (!max_pieces || !staging_bytes || staging_bytes > UINT32_MAX / 2)
		return rxg_err(err, errlen, -EINVAL,
			       "payload-mem: gpu: DMA engine needs pieces > 0 and 1 B..2 GiB of "
			       "staging");
	char why[160];
	if (!rxg_available(why, sizeof(why)))
		return rxg_err(err, errlen, -ENODEV, "payload-mem: gpu: %s", why);
	rxg_dma *g = (rxg_dma *)calloc(1, sizeof(*g));
	if (!g)
		return rxg_err(err, errlen, -ENOMEM, "payload-mem: out of memory");
	// slack for each piece's 16-byte alignment at both ends
	size_t bcap = staging_bytes + (size_t)32 * max_pieces;
	g->slot = (rxg_ring_slot *)calloc(RXG_DMA_TICKETS, sizeof(*g->slot));
	g->pieces = (rxg_dma_piece *)calloc(max_pieces, sizeof(*g->pieces));
	if (!g->slot || !g->pieces) {
		rc = rxg_err(err, errlen, -ENOMEM, "payload-mem: out of memory");
		goto fail;
	}
	rxg_ring_init(&g->r, bcap, max_pieces, RXG_DMA_TICKETS, g->slot);
	for (unsigned i = 0; i < RXG_DMA_STREAMS; i++)
		CU(cudaStreamCreateWithFlags(&g->st[i], cudaStreamNonBlocking));
	// the CPU only writes the staging ring and the GPU only reads it:
	// write-combined, so the GPU's reads skip the CPU's caches
	CU(cudaHostAlloc((void **)&g->staging, bcap,
			 cudaHostAllocMapped | cudaHostAllocWriteCombined));
	CU(cudaHostGetDevicePointer((void **)&g->d_staging, g->staging, 0));
	CU(cudaHostAlloc((void **)&g->flag, RXG_DMA_TICKETS * sizeof(*g->flag), cudaHostAllocMapped));
	memset(g->flag, 0, RXG_DMA_TICKETS * sizeof(*g->flag));
	CU(cudaHostGetDevicePointer((void **)&g->d_flag, g->flag, 0));
	CU(cudaMalloc((void **)&g->d_blocks, RXG_DMA_STREAMS * sizeof(unsigned)));
	CU(cudaMemset(g->d_blocks, 0, RXG_DMA_STREAMS * sizeof(unsigned)));
	*out = g;
	return 0;
fail:
	rxg_dma_close(g);
	return rc;
}

extern "C" void rxg_dma_close(struct rxg_dma *d)
{
	if (!d)
		return;
	for (unsigned i = 0; i < RXG_DMA_STREAMS; i++)
		if (d->st[i]) {
			cudaStreamSynchronize(d->st[i]);
			cudaStreamDestroy(d->st[i]);
		}
	cudaFreeHost(d->staging);
	cudaFreeHost(d->flag);
	cudaFree(d->d_blocks);
	free(d->pieces);
	free(d->slot);
	free(d);
}

extern "C" void *rxg_dma_stage(struct rxg_dma *d, void *dst, uint32_t len)
{
	uint64_t pos;
	int64_t at = rxg_ring_alloc(&d->r, len, (uintptr_t)dst, &pos);
	if (at < 0)
		return NULL;
	rxg_dma_piece *p = &d->pieces[pos % d->r.pcap];
	p->dst = dst;
	p->off = (uint32_t)at;
	p->len = len;
	return d->staging + at;
}

extern "C" uint32_t rxg_dma_pending(const struct rxg_dma *d)
{
	return rxg_ring_open_pieces(&d->r);
}

extern "C" uint64_t rxg_dma_next_ticket(const struct rxg_dma *d)
{
	return d->r.submitted + 1;
}

// One launch of n pieces from position first; ticket 0 unless it is the
// submit's last.
template <unsigned P>
static cudaError_t rxg_dma_launch(rxg_dma *d, rxg_scatter_arg<P> *a, uint64_t first, uint32_t n,
				  uint64_t ticket, unsigned si)
{
	a->staging = d->d_staging;
	a->blocks = d->d_blocks + si;
	a->flag = d->d_flag + ticket % RXG_DMA_TICKETS;
	a->ticket = ticket;
	a->n = n;
	for (uint32_t i = 0; i < n; i++)
		a->pc[i] = d->pieces[(first + i) % d->r.pcap];
	unsigned blocks = (n + RXG_DMA_WARPS - 1) / RXG_DMA_WARPS;
	rxg_scatter<P><<<blocks, RXG_DMA_WARPS * 32, 0, d->st[si]>>>(*a);
	return cudaGetLastError();
}

extern "C" int64_t rxg_dma_submit(struct rxg_dma *d)
{
	if (d->broken)
		return -EIO;
	uint64_t first;
	uint32_t n;
	uint64_t t = rxg_ring_submit(&d->r, &first, &n);
	if (!t)
		return 0;
	// the staged bytes (write-combined stores) reach memory before the
	// kernel can read them
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	unsigned si = (unsigned)(t % RXG_DMA_STREAMS);
	cudaError_t e = cudaSuccess;
	while (n && e == cudaSuccess) {
		if (n <= 64) {
			rxg_scatter_arg<64> a;
			e = rxg_dma_launch<64>(d, &a, first, n, t, si);
			n = 0;
		} else {
			uint32_t k = n < 512 ? n : 512;
			e = rxg_dma_launch<512>(d, &d->big, first, k, k == n ? t : 0, si);
			first += k;
			n -= k;
		}
	}
	if (e != cudaSuccess) {
		d->broken = 1;
		return -EIO;
	}
	return (int64_t)t;
}

extern "C" uint64_t rxg_dma_done(struct rxg_dma *d)
{
	while (d->r.done < d->r.submitted) {
		uint64_t t = d->r.done + 1;
		// acquire: the staging bytes are reused only after the flag
		if (__atomic_load_n(&d->flag[t % RXG_DMA_TICKETS], __ATOMIC_ACQUIRE) != t)
			break;
		rxg_ring_complete(&d->r);
	}
	return d->r.done;
}

extern "C" int rxg_dma_drain(struct rxg_dma *d)
{
	// spin on the flags (no CUDA call while copies land); now and then
	// ask the next ticket's stream whether its kernel failed
	for (uint32_t spin = 1; !d->broken && rxg_dma_done(d) < d->r.submitted; spin++) {
		if (spin % 1024)
			continue;
		uint64_t want = d->r.done + 1;
		cudaError_t e = cudaStreamQuery(d->st[want % RXG_DMA_STREAMS]);
		if (e == cudaErrorNotReady)
			continue;
		// an idle stream whose ticket never landed: its kernel failed
		if (e != cudaSuccess || rxg_dma_done(d) < want)
			d->broken = 1;
	}
	if (!d->broken)
		return 0;
	// nothing more will land: the space is given back all the same
	while (d->r.done < d->r.submitted)
		rxg_ring_complete(&d->r);
	return -EIO;
}

extern "C" int rxg_dma_flush(struct rxg_dma *d)
{
	int64_t t = rxg_dma_submit(d);
	if (t < 0)
		return (int)t;
	return rxg_dma_drain(d);
}
