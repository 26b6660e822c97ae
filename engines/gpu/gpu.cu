// SPDX-License-Identifier: MIT
// The GPU consumer stage (rxray/gpu.h): batches of payload addresses in,
// a kernel per batch on the consumer's stream, CUDA events to time it and
// to know when its buffers may go back.
#include <cuda_runtime.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rxray/gpu.h"
#include "rxray/probe.h"

#define RXG_THREADS 128

// What one batch's kernel reports back (device, copied to pinned host).
struct rxg_batch_stats {
	unsigned long long min_seq, max_seq, n, csum;
};

struct rxg_slot {
	void **h_addr;          // pinned host: payload addresses
	uint64_t *h_seq;        // pinned host: sequence numbers
	void **d_addr;
	uint64_t *d_seq;
	rxg_batch_stats *d_st;  // device
	rxg_batch_stats *h_st;  // pinned host copy
	cudaEvent_t start, stop;
	uint32_t n;
	uint64_t nvtx;          // NVTX range from submit to retire (0: no tool)
};

struct rxg_consumer {
	rxg_params p;
	cudaStream_t stream;
	rxg_slot *slot;
	uint32_t head, tail;    // submitted, retired (mod 2^32)
	void *d_out;            // reorder: window x payload_bytes
	uint32_t *d_csum;       // checksum: per packet of the last batch
	rxg_stats st;
	bool seq_started;
	uint64_t next_seq;      // reorder: one past the highest seen
};

static int rxg_err(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

extern "C" const char *rxg_work_name(enum rxg_work w)
{
	switch (w) {
	case RXG_WORK_NONE: return "none";
	case RXG_WORK_REORDER: return "reorder";
	case RXG_WORK_CHECKSUM: return "checksum";
	}
	return NULL;
}

extern "C" int rxg_available(char *why, size_t whylen)
{
	int n = 0;
	cudaError_t e = cudaGetDeviceCount(&n);
	if (e != cudaSuccess || n < 1) {
		rxg_err(why, whylen, 0, "no CUDA device (%s)",
			e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
		return 0;
	}
	return 1;
}

// --------------------------------------------------------------- kernels

__device__ static void batch_note(rxg_batch_stats *st, unsigned long long seq)
{
	atomicMin(&st->min_seq, seq);
	atomicMax(&st->max_seq, seq);
	atomicAdd(&st->n, 1ull);
}

// One block per packet: copy its payload to the slot its sequence number
// names. Words when both ends are 4-byte aligned, bytes otherwise.
__global__ static void rxg_reorder(void *const *addr, const uint64_t *seq, uint32_t n,
				   uint8_t *out, uint32_t mask, uint32_t bytes,
				   rxg_batch_stats *st)
{
	uint32_t k = blockIdx.x;
	if (k >= n)
		return;
	const uint8_t *src = (const uint8_t *)addr[k];
	uint8_t *dst = out + (size_t)(seq[k] & mask) * bytes;
	if (threadIdx.x == 0)
		batch_note(st, seq[k]);
	if ((((uintptr_t)src | (uintptr_t)dst | bytes) & 3) == 0) {
		const uint32_t *s = (const uint32_t *)src;
		uint32_t *d = (uint32_t *)dst;
		for (uint32_t i = threadIdx.x; i < bytes / 4; i += blockDim.x)
			d[i] = s[i];
	} else {
		for (uint32_t i = threadIdx.x; i < bytes; i += blockDim.x)
			dst[i] = src[i];
	}
}

// One block per packet: 16-bit ones' complement sum of its payload (bytes
// taken as big-endian pairs, as the Internet checksum does).
__global__ static void rxg_checksum(void *const *addr, const uint64_t *seq, uint32_t n,
				    uint32_t bytes, uint32_t *out, rxg_batch_stats *st)
{
	__shared__ uint32_t part[RXG_THREADS];
	uint32_t k = blockIdx.x;
	if (k >= n)
		return;
	const uint8_t *src = (const uint8_t *)addr[k];
	uint32_t sum = 0;
	for (uint32_t i = threadIdx.x * 2; i < bytes; i += blockDim.x * 2) {
		uint32_t w = (uint32_t)src[i] << 8;
		if (i + 1 < bytes)
			w |= src[i + 1];
		sum += w;
		sum = (sum & 0xffff) + (sum >> 16);
	}
	part[threadIdx.x] = sum;
	__syncthreads();
	for (uint32_t s = blockDim.x / 2; s > 0; s >>= 1) {
		if (threadIdx.x < s) {
			uint32_t v = part[threadIdx.x] + part[threadIdx.x + s];
			part[threadIdx.x] = (v & 0xffff) + (v >> 16);
		}
		__syncthreads();
	}
	if (threadIdx.x == 0) {
		uint32_t v = part[0];
		v = (v & 0xffff) + (v >> 16);
		out[k] = v & 0xffff;
		atomicAdd(&st->csum, (unsigned long long)(v & 0xffff));
		batch_note(st, seq[k]);
	}
}

__global__ static void rxg_stats_init(rxg_batch_stats *st)
{
	st->min_seq = ~0ull;
	st->max_seq = 0;
	st->n = 0;
	st->csum = 0;
}

// ------------------------------------------------------------------ host

#define CU(call)                                                                             \
	do {                                                                                 \
		cudaError_t e_ = (call);                                                     \
		if (e_ != cudaSuccess) {                                                     \
			rc = rxg_err(err, errlen, -EIO, "gpu: %s: %s", #call,                \
				     cudaGetErrorString(e_));                                \
			goto fail;                                                           \
		}                                                                            \
	} while (0)

extern "C" int rxg_consumer_open(const struct rxg_params *p, struct rxg_consumer **out, char *err,
				 size_t errlen)
{
	int rc = 0;
	*out = NULL;
	if (!p || p->max_batch < 1 || p->max_batch > 65536 || p->depth < 1 || p->depth > 64 ||
	    p->payload_bytes < 1 || (p->work == RXG_WORK_REORDER &&
				     (!p->window || (p->window & (p->window - 1)))) ||
	    !rxg_work_name(p->work))
		return rxg_err(err, errlen, -EINVAL,
			       "gpu-work: bad consumer parameters (batch 1..65536, depth 1..64, "
			       "payload > 0, reorder window a power of two)");
	char why[160];
	if (!rxg_available(why, sizeof(why)))
		return rxg_err(err, errlen, -ENODEV, "gpu-work: %s", why);
	rxg_consumer *g = (rxg_consumer *)calloc(1, sizeof(*g));
	if (!g)
		return rxg_err(err, errlen, -ENOMEM, "gpu-work: out of memory");
	g->p = *p;
	g->slot = (rxg_slot *)calloc(p->depth, sizeof(*g->slot));
	if (!g->slot) {
		free(g);
		return rxg_err(err, errlen, -ENOMEM, "gpu-work: out of memory");
	}
	CU(cudaSetDevice(p->device));
	CU(cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking));
	for (uint32_t i = 0; i < p->depth; i++) {
		rxg_slot *s = &g->slot[i];
		size_t na = (size_t)p->max_batch;
		CU(cudaHostAlloc((void **)&s->h_addr, na * sizeof(void *), cudaHostAllocDefault));
		CU(cudaHostAlloc((void **)&s->h_seq, na * sizeof(uint64_t), cudaHostAllocDefault));
		CU(cudaHostAlloc((void **)&s->h_st, sizeof(rxg_batch_stats), cudaHostAllocDefault));
		CU(cudaMalloc((void **)&s->d_addr, na * sizeof(void *)));
		CU(cudaMalloc((void **)&s->d_seq, na * sizeof(uint64_t)));
		CU(cudaMalloc((void **)&s->d_st, sizeof(rxg_batch_stats)));
		CU(cudaEventCreate(&s->start));
		CU(cudaEventCreate(&s->stop));
	}
	if (p->work == RXG_WORK_REORDER)
		CU(cudaMalloc(&g->d_out, (size_t)p->window * p->payload_bytes));
	if (p->work == RXG_WORK_CHECKSUM)
		CU(cudaMalloc((void **)&g->d_csum, (size_t)p->max_batch * sizeof(uint32_t)));
	*out = g;
	return 0;
fail:
	rxg_consumer_close(g);
	return rc;
}

extern "C" void rxg_consumer_close(struct rxg_consumer *g)
{
	if (!g)
		return;
	if (g->stream)
		cudaStreamSynchronize(g->stream);
	for (uint32_t i = 0; g->slot && i < g->p.depth; i++) {
		rxg_slot *s = &g->slot[i];
		cudaFreeHost(s->h_addr);
		cudaFreeHost(s->h_seq);
		cudaFreeHost(s->h_st);
		cudaFree(s->d_addr);
		cudaFree(s->d_seq);
		cudaFree(s->d_st);
		if (s->start)
			cudaEventDestroy(s->start);
		if (s->stop)
			cudaEventDestroy(s->stop);
	}
	cudaFree(g->d_out);
	cudaFree(g->d_csum);
	if (g->stream)
		cudaStreamDestroy(g->stream);
	free(g->slot);
	free(g);
}

extern "C" uint32_t rxg_inflight(const struct rxg_consumer *g)
{
	return g->head - g->tail;
}

extern "C" int rxg_submit(struct rxg_consumer *g, void *const *payloads, const uint64_t *seqs,
			  uint32_t n)
{
	if (n == 0 || n > g->p.max_batch)
		return -EINVAL;
	if (rxg_inflight(g) >= g->p.depth)
		return -EBUSY;
	rxg_slot *s = &g->slot[g->head % g->p.depth];
	memcpy(s->h_addr, payloads, n * sizeof(void *));
	memcpy(s->h_seq, seqs, n * sizeof(uint64_t));
	s->n = n;
	cudaStream_t st = g->stream;
	if (cudaEventRecord(s->start, st) != cudaSuccess)
		return -EIO;
	if (g->p.work != RXG_WORK_NONE) {
		cudaMemcpyAsync(s->d_addr, s->h_addr, n * sizeof(void *), cudaMemcpyHostToDevice, st);
		cudaMemcpyAsync(s->d_seq, s->h_seq, n * sizeof(uint64_t), cudaMemcpyHostToDevice, st);
		rxg_stats_init<<<1, 1, 0, st>>>(s->d_st);
		if (g->p.work == RXG_WORK_REORDER)
			rxg_reorder<<<n, RXG_THREADS, 0, st>>>(s->d_addr, s->d_seq, n,
							       (uint8_t *)g->d_out, g->p.window - 1,
							       g->p.payload_bytes, s->d_st);
		else
			rxg_checksum<<<n, RXG_THREADS, 0, st>>>(s->d_addr, s->d_seq, n,
								g->p.payload_bytes, g->d_csum, s->d_st);
		cudaMemcpyAsync(s->h_st, s->d_st, sizeof(*s->h_st), cudaMemcpyDeviceToHost, st);
	}
	if (cudaGetLastError() != cudaSuccess || cudaEventRecord(s->stop, st) != cudaSuccess)
		return -EIO;
	s->nvtx = rxr_nvtx_range_start("gpu_batch");
	g->head++;
	return 0;
}

// Gaps and duplicates of a retired reorder batch, against what came before.
static void rxg_account_seq(rxg_consumer *g, const rxg_batch_stats *b)
{
	if (!b->n)
		return;
	uint64_t span = b->max_seq - b->min_seq + 1;
	if (span > b->n)
		g->st.gaps += span - b->n;
	else if (span < b->n)
		g->st.dups += b->n - span;
	if (g->seq_started) {
		if (b->min_seq > g->next_seq)
			g->st.gaps += b->min_seq - g->next_seq;
		else if (b->min_seq < g->next_seq)
			g->st.dups++;
	}
	if (!g->seq_started || b->max_seq + 1 > g->next_seq)
		g->next_seq = b->max_seq + 1;
	g->seq_started = true;
}

extern "C" int rxg_retire(struct rxg_consumer *g, bool block)
{
	if (!rxg_inflight(g))
		return 0;
	rxg_slot *s = &g->slot[g->tail % g->p.depth];
	cudaError_t e = block ? cudaEventSynchronize(s->stop) : cudaEventQuery(s->stop);
	if (e == cudaErrorNotReady)
		return 0;
	if (e != cudaSuccess)
		return -EIO;
	rxr_nvtx_range_end(s->nvtx);
	float ms = 0;
	cudaEventElapsedTime(&ms, s->start, s->stop);
	g->st.batches++;
	g->st.packets += s->n;
	g->st.kernel_ms += ms;
	if (ms > g->st.max_batch_ms)
		g->st.max_batch_ms = ms;
	if (g->p.work == RXG_WORK_REORDER)
		rxg_account_seq(g, s->h_st);
	else if (g->p.work == RXG_WORK_CHECKSUM)
		g->st.checksum += s->h_st->csum;
	g->tail++;
	return (int)s->n;
}

extern "C" void rxg_consumer_stats(const struct rxg_consumer *g, struct rxg_stats *s)
{
	*s = g->st;
}

extern "C" void rxg_consumer_stats_reset(struct rxg_consumer *g)
{
	memset(&g->st, 0, sizeof(g->st));
	g->seq_started = false;
}

extern "C" const void *rxg_consumer_output(const struct rxg_consumer *g)
{
	return g->p.work == RXG_WORK_CHECKSUM ? (const void *)g->d_csum : g->d_out;
}

// ----------------------------------------------------------- DMA engine

struct rxg_piece {
	void *dst;
	const void *src;
	uint32_t len;
};

struct rxg_dma {
	cudaStream_t stream;
	rxg_piece *pieces;      // pinned, mapped: the kernel reads it in place
	uint8_t *staging;       // pinned, mapped
	uint32_t max_pieces, n;
	size_t cap, used;
};

// One block per piece: staged bytes (host, mapped) to their GPU address.
__global__ static void rxg_scatter(const rxg_piece *pc, uint32_t n)
{
	uint32_t k = blockIdx.x;
	if (k >= n)
		return;
	const uint8_t *s = (const uint8_t *)pc[k].src;
	uint8_t *d = (uint8_t *)pc[k].dst;
	uint32_t len = pc[k].len;
	if ((((uintptr_t)s | (uintptr_t)d | len) & 3) == 0) {
		for (uint32_t i = threadIdx.x; i < len / 4; i += blockDim.x)
			((uint32_t *)d)[i] = ((const uint32_t *)s)[i];
	} else {
		for (uint32_t i = threadIdx.x; i < len; i += blockDim.x)
			d[i] = s[i];
	}
}

extern "C" int rxg_dma_open(uint32_t max_pieces, size_t staging_bytes, struct rxg_dma **out,
			    char *err, size_t errlen)
{
	int rc = 0;
	*out = NULL;
	char why[160];
	if (!rxg_available(why, sizeof(why)))
		return rxg_err(err, errlen, -ENODEV, "payload-mem: gpu: %s", why);
	rxg_dma *g = (rxg_dma *)calloc(1, sizeof(*g));
	if (!g)
		return rxg_err(err, errlen, -ENOMEM, "payload-mem: out of memory");
	g->max_pieces = max_pieces;
	g->cap = staging_bytes;
	CU(cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking));
	CU(cudaHostAlloc((void **)&g->pieces, (size_t)max_pieces * sizeof(rxg_piece),
			 cudaHostAllocMapped));
	CU(cudaHostAlloc((void **)&g->staging, staging_bytes, cudaHostAllocMapped));
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
	if (d->stream) {
		cudaStreamSynchronize(d->stream);
		cudaStreamDestroy(d->stream);
	}
	cudaFreeHost(d->pieces);
	cudaFreeHost(d->staging);
	free(d);
}

extern "C" void *rxg_dma_stage(struct rxg_dma *d, void *dst, uint32_t len)
{
	size_t at = (d->used + 15) & ~(size_t)15; // 16-byte aligned pieces
	if (d->n >= d->max_pieces || at + len > d->cap)
		return NULL;
	rxg_piece *p = &d->pieces[d->n++];
	p->dst = dst;
	p->src = d->staging + at;
	p->len = len;
	d->used = at + len;
	return d->staging + at;
}

extern "C" uint32_t rxg_dma_pending(const struct rxg_dma *d)
{
	return d->n;
}

extern "C" int rxg_dma_flush(struct rxg_dma *d)
{
	if (!d->n)
		return 0;
	rxg_scatter<<<d->n, RXG_THREADS, 0, d->stream>>>(d->pieces, d->n);
	cudaError_t e = cudaGetLastError();
	if (e == cudaSuccess)
		e = cudaStreamSynchronize(d->stream);
	d->n = 0;
	d->used = 0;
	return e == cudaSuccess ? 0 : -EIO;
}
