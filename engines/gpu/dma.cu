// SPDX-License-Identifier: MIT
// The software NIC's DMA engine into GPU memory (rxray/gpu.h, rxg_dma_*):
// a ring of pinned, mapped staging space that the GPU reads over PCIe and
// writes piece by piece to each piece's GPU address; a ticket's flag in
// mapped host memory says when its copies have landed. Two ways to start
// the copies (enum rxg_dma_mode):
// - resident: one kernel per engine stays on the GPU while its writer
//   runs and waits on a doorbell in mapped memory; a submit is a few
//   stores (the ticket's descriptor, then the doorbell), no CUDA call.
// - launch: a submit is one scatter kernel launch carrying its pieces in
//   the parameters (a CUDA call, microseconds of the writer's time).
#include <cuda_runtime.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dma_ring.h"
#include "gpu_int.cuh"
#include "rxray/gpu.h"

#define RXG_DMA_STREAMS 4u   // launch: submits in flight on separate streams
#define RXG_DMA_TICKETS 1024u
#define RXG_DMA_WARPS 4u     // launch: pieces per block, a warp each
// resident: tickets copied at once (block b takes tickets t = b + 1 mod
// the grid), warps a block, pieces a block reads into shared memory at once
#define RXG_PULL_BLOCKS 4u
#define RXG_PULL_WARPS 16u
#define RXG_PULL_CHUNK 256u

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

// The resident engine's doorbell and its tickets (mapped host memory,
// written by the CPU, read by the GPU with loads that never hit a cache).
struct rxg_pull_bell {
	unsigned long long posted; // tickets whose descriptors are written
	unsigned long long quit;   // nonzero: return once posted ones are done
};
struct rxg_tdesc {
	unsigned long long first; // piece position
	unsigned long long n;     // pieces
};

// Resident: block b copies tickets base + b + 1, then every grid-th, as they are
// posted; each ticket's pieces first into shared memory (one round trip
// for all), then a warp a piece with loads that fetch the staging bytes
// again every lap of the ring; its flag goes out after a system fence.
__global__ static void rxg_pull(const uint8_t *staging, const rxg_dma_piece *pieces, uint32_t pcap,
				const rxg_tdesc *tick, const rxg_pull_bell *bell,
				unsigned long long *flag, unsigned long long base)
{
	__shared__ rxg_dma_piece pc[RXG_PULL_CHUNK];
	__shared__ unsigned long long first, n;
	__shared__ int go;
	unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32, nw = blockDim.x / 32;
	unsigned long long seen = base; // thread 0: the last posted count it read
	for (unsigned long long t = base + blockIdx.x + 1;; t += gridDim.x) {
		if (threadIdx.x == 0) {
			// a doorbell read is a round trip over PCIe: read it again
			// only once the tickets it announced are taken, and less
			// often while none comes (every engine's blocks poll: their
			// reads share the link with the copies and launches)
			unsigned nap = 64;
			while (seen < t && (seen = __ldcv(&bell->posted)) < t && !__ldcv(&bell->quit)) {
				__nanosleep(nap);
				nap = nap < 2048 ? nap * 2 : nap;
			}
			go = seen >= t;
			if (go) {
				const rxg_tdesc *d = &tick[t % RXG_DMA_TICKETS];
				first = __ldcv(&d->first);
				n = __ldcv(&d->n);
			}
		}
		__syncthreads();
		if (!go)
			return;
		for (unsigned long long at = 0; at < n; at += RXG_PULL_CHUNK) {
			unsigned m = (unsigned)(n - at < RXG_PULL_CHUNK ? n - at : RXG_PULL_CHUNK);
			for (unsigned i = threadIdx.x; i < m; i += blockDim.x) {
				uint4 v = __ldcv((const uint4 *)&pieces[(first + at + i) % pcap]);
				memcpy(&pc[i], &v, sizeof(v));
			}
			__syncthreads();
			for (unsigned k = warp; k < m; k += nw)
				rxg_warp_copy<true>((uint8_t *)pc[k].dst, staging + pc[k].off, pc[k].len,
						    lane);
			__syncthreads();
		}
		__threadfence();
		__syncthreads();
		if (threadIdx.x == 0) {
			__threadfence_system();
			*(volatile unsigned long long *)&flag[t % RXG_DMA_TICKETS] = t;
		}
	}
}

struct rxg_dma {
	rxg_ring r;
	enum rxg_dma_mode mode;
	rxg_ring_slot *slot;
	rxg_dma_piece *pieces;   // pcap entries, piece position mod pcap
				 // (resident: pinned and mapped, the GPU reads them)
	rxg_dma_piece *d_pieces;
	uint8_t *staging;        // pinned, mapped, write-combined
	uint8_t *d_staging;
	unsigned long long *flag;   // pinned, mapped: a ticket's flag at t % tickets
	unsigned long long *d_flag;
	unsigned *d_blocks;      // launch: a counter per stream
	rxg_tdesc *tick;         // resident: pinned, mapped, t % tickets
	rxg_tdesc *d_tick;
	rxg_pull_bell *bell;     // resident: pinned, mapped
	rxg_pull_bell *d_bell;
	bool resident;           // resident: the kernel is on the GPU
	cudaStream_t st[RXG_DMA_STREAMS];
	int broken;              // a CUDA call failed: submit refuses
	rxg_scatter_arg<512> big;
};

extern "C" const char *rxg_dma_mode_name(enum rxg_dma_mode m)
{
	switch (m) {
	case RXG_DMA_RESIDENT: return "resident";
	case RXG_DMA_LAUNCH: return "launch";
	}
	return NULL;
}

extern "C" int rxg_dma_open(uint32_t max_pieces, size_t staging_bytes, enum rxg_dma_mode mode,
			    struct rxg_dma **out, char *err, size_t errlen)
{
	int rc = 0;
	*out = NULL;
	if (!max_pieces || !staging_bytes || staging_bytes > UINT32_MAX / 2 ||
	    !rxg_dma_mode_name(mode))
		return rxu_errf(err, errlen, -EINVAL,
			       "payload-mem: gpu: DMA engine needs pieces > 0, 1 B..2 GiB of "
			       "staging and a mode (resident or launch)");
	char why[160];
	if (!rxg_available(why, sizeof(why)))
		return rxu_errf(err, errlen, -ENODEV, "payload-mem: gpu: %s", why);
	rxg_dma *g = (rxg_dma *)calloc(1, sizeof(*g));
	if (!g)
		return rxu_errf(err, errlen, -ENOMEM, "payload-mem: out of memory");
	g->mode = mode;
	// slack for each piece's 16-byte alignment at both ends
	size_t bcap = staging_bytes + (size_t)32 * max_pieces;
	g->slot = (rxg_ring_slot *)calloc(RXG_DMA_TICKETS, sizeof(*g->slot));
	if (!g->slot) {
		rc = rxu_errf(err, errlen, -ENOMEM, "payload-mem: out of memory");
		goto fail;
	}
	rxg_ring_init(&g->r, bcap, max_pieces, RXG_DMA_TICKETS, g->slot);
	// every kernel this engine may start is loaded now: a kernel loaded
	// on first launch, beside a resident one, waits for the GPU to idle
	CU(rxg_dma_preload());
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
	if (mode == RXG_DMA_RESIDENT) {
		CU(cudaHostAlloc((void **)&g->pieces, max_pieces * sizeof(*g->pieces),
				 cudaHostAllocMapped));
		CU(cudaHostGetDevicePointer((void **)&g->d_pieces, g->pieces, 0));
		CU(cudaHostAlloc((void **)&g->tick, RXG_DMA_TICKETS * sizeof(*g->tick),
				 cudaHostAllocMapped));
		CU(cudaHostGetDevicePointer((void **)&g->d_tick, g->tick, 0));
		CU(cudaHostAlloc((void **)&g->bell, sizeof(*g->bell), cudaHostAllocMapped));
		memset(g->bell, 0, sizeof(*g->bell));
		CU(cudaHostGetDevicePointer((void **)&g->d_bell, g->bell, 0));
	} else {
		g->pieces = (rxg_dma_piece *)calloc(max_pieces, sizeof(*g->pieces));
		if (!g->pieces) {
			rc = rxu_errf(err, errlen, -ENOMEM, "payload-mem: out of memory");
			goto fail;
		}
		CU(cudaMalloc((void **)&g->d_blocks, RXG_DMA_STREAMS * sizeof(unsigned)));
		CU(cudaMemset(g->d_blocks, 0, RXG_DMA_STREAMS * sizeof(unsigned)));
	}
	*out = g;
	return 0;
fail:
	rxg_dma_close(g);
	return rc;
}

extern "C" int rxg_dma_park(struct rxg_dma *d)
{
	int rc = rxg_dma_drain(d);
	if (!d->resident)
		return rc;
	// the kernel returns once it sees quit with nothing posted left
	__atomic_store_n(&d->bell->quit, 1ull, __ATOMIC_RELEASE);
	cudaError_t e = rxg_resident_wait(d->st[0]);
	if (e == cudaErrorNotReady) {
		rxg_stall_note("payload_dma: the resident copy kernel did not return within %.0f s "
			       "of its quit (tickets %llu landed of %llu posted)",
			       RXG_STALL_S, (unsigned long long)d->r.done,
			       (unsigned long long)d->r.submitted);
		d->broken = 1;
		return -ETIMEDOUT;
	}
	d->resident = false;
	if (e != cudaSuccess) {
		d->broken = 1;
		return rc ? rc : -EIO;
	}
	return rc;
}

extern "C" void rxg_dma_close(struct rxg_dma *d)
{
	if (!d)
		return;
	// a kernel still resident would hold every free below for ever
	if (d->resident && rxg_dma_park(d) == -ETIMEDOUT)
		return; // leaked: the process ends with its context
	for (unsigned i = 0; i < RXG_DMA_STREAMS; i++)
		if (d->st[i]) {
			cudaStreamSynchronize(d->st[i]);
			cudaStreamDestroy(d->st[i]);
		}
	cudaFreeHost(d->staging);
	cudaFreeHost(d->flag);
	if (d->mode == RXG_DMA_RESIDENT) {
		cudaFreeHost(d->pieces);
		cudaFreeHost(d->tick);
		cudaFreeHost(d->bell);
	} else {
		free(d->pieces);
		cudaFree(d->d_blocks);
	}
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

// Resident: the kernel on the GPU with the first submit after open or a
// park (not at open: while it is resident, a pinned or device allocation
// anywhere in the process waits for it), first copying ticket base + 1
// (every ticket before it has landed: a park drains them).
static cudaError_t rxg_dma_resident(rxg_dma *d, unsigned long long base)
{
	if (d->resident)
		return cudaSuccess;
	// tickets continue from where the last kernel left them
	d->bell->quit = 0;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	uint32_t pcap = d->r.pcap;
	void *kargs[] = {&d->d_staging, &d->d_pieces, &pcap, &d->d_tick, &d->d_bell, &d->d_flag,
			 &base};
	cudaError_t e = cudaLaunchKernel((const void *)rxg_pull, RXG_PULL_BLOCKS,
					 RXG_PULL_WARPS * 32, kargs, 0, d->st[0]);
	d->resident = e == cudaSuccess;
	return e;
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
	cudaError_t e = cudaSuccess;
	if (d->mode == RXG_DMA_RESIDENT) {
		d->tick[t % RXG_DMA_TICKETS] = rxg_tdesc{first, n};
		// the staged bytes (write-combined stores), the pieces and the
		// descriptor reach memory before the doorbell says they are there
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		__atomic_store_n(&d->bell->posted, (unsigned long long)t, __ATOMIC_RELEASE);
		// ticket t is the grid's first when it starts now
		e = rxg_dma_resident(d, t - 1);
	} else {
		// the staged bytes (write-combined stores) reach memory before
		// the kernel can read them
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		unsigned si = (unsigned)(t % RXG_DMA_STREAMS);
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

// The stream that tells whether ticket t's copy failed.
static cudaStream_t rxg_dma_stream(const rxg_dma *d, uint64_t t)
{
	return d->mode == RXG_DMA_RESIDENT ? d->st[0] : d->st[t % RXG_DMA_STREAMS];
}

extern "C" int rxg_dma_drain(struct rxg_dma *d)
{
	// spin on the flags (no CUDA call while copies land); now and then
	// ask the next ticket's stream whether its kernel failed, and give up
	// on a ticket that made no progress for RXG_STALL_S
	double t0 = rxg_now_s();
	uint64_t last = d->r.done;
	for (uint32_t spin = 1; !d->broken && rxg_dma_done(d) < d->r.submitted; spin++) {
		if (spin % 1024)
			continue;
		uint64_t want = d->r.done + 1;
		if (d->r.done != last) {
			last = d->r.done;
			t0 = rxg_now_s();
		} else if (rxg_now_s() - t0 > RXG_STALL_S) {
			const rxg_ring_slot *s = &d->r.slot[want % d->r.scap];
			const rxg_ring_slot *p = &d->r.slot[(want - 1) % d->r.scap];
			rxg_stall_note("payload_dma: ticket %llu (%llu pieces, %s copy) not landed "
				       "%.0f s after the engine was drained (%llu of %llu tickets "
				       "landed)",
				       (unsigned long long)want,
				       (unsigned long long)(s->pend - (want > 1 ? p->pend : 0)),
				       rxg_dma_mode_name(d->mode), RXG_STALL_S,
				       (unsigned long long)d->r.done,
				       (unsigned long long)d->r.submitted);
			d->broken = 1;
			return -ETIMEDOUT;
		}
		cudaError_t e = cudaStreamQuery(rxg_dma_stream(d, want));
		if (e == cudaErrorNotReady)
			continue;
		// an idle stream whose ticket never landed: its kernel failed
		// (or, resident, returned early)
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

extern "C" cudaError_t rxg_dma_preload(void)
{
	// loading a kernel is a context-wide operation: done for all of them
	// before anything resident runs (a first launch beside a resident
	// kernel waits for the GPU to go idle, which it never does)
	cudaFuncAttributes fa;
	cudaError_t e = cudaFuncGetAttributes(&fa, (const void *)rxg_scatter<64>);
	if (e == cudaSuccess)
		e = cudaFuncGetAttributes(&fa, (const void *)rxg_scatter<512>);
	if (e == cudaSuccess)
		e = cudaFuncGetAttributes(&fa, (const void *)rxg_pull);
	return e;
}
