// SPDX-License-Identifier: MIT
// The host <-> GPU link's own figures (rxray/gpu.h, rxg_link_*): what a
// GPU read of pinned host memory costs, what the copy engine and the
// launch path cost, and how long a doorbell takes to cross. The DMA engine
// and the consumer's launch modes are designed against these; bench_gpu_link
// prints them.
#include <cuda_runtime.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpu_int.cuh"
#include "rxray/gpu.h"

static double link_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

// One thread follows a chain of indices: each load waits for the last.
__global__ static void link_chase(const unsigned *next, unsigned hops, unsigned *out)
{
	unsigned i = 0;
	for (unsigned h = 0; h < hops; h++)
		i = __ldcv(&next[i]);
	*out = i;
}

// Every thread reads 16-byte words of the buffer, grid-stride.
__global__ static void link_read(const uint4 *src, size_t n, unsigned *out)
{
	unsigned acc = 0;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		uint4 v = __ldcv(&src[i]);
		acc ^= v.x ^ v.y ^ v.z ^ v.w;
	}
	if (acc == 0x9e3779b9u)
		*out = acc; // never, in practice: keeps the loads
}

template <unsigned B> struct link_params {
	unsigned char b[B];
};

template <unsigned B> __global__ static void link_empty(const __grid_constant__ link_params<B> p)
{
	if (p.b[0] == 0xee && threadIdx.x == 1000)
		asm volatile("trap;");
}

// The GPU side of a doorbell: waits for ping == k, answers pong = k.
__global__ static void link_pong(const volatile unsigned long long *ping,
				 volatile unsigned long long *pong, unsigned rounds)
{
	for (unsigned long long k = 1; k <= rounds; k++) {
		while (*ping < k)
			;
		__threadfence_system();
		*pong = k;
	}
}

// The time of a dependent read of pinned host memory (write-combined or
// not) or, with where == 2, device memory: microseconds per hop.
extern "C" double rxg_link_chase_us(int where, unsigned hops)
{
	const unsigned n = 1u << 16; // 256 KiB of indices, a page apart
	unsigned *h = NULL, *d = NULL, *dout = NULL;
	cudaEvent_t a = NULL, b = NULL;
	double us = -1;
	unsigned flags = cudaHostAllocMapped | (where == 1 ? cudaHostAllocWriteCombined : 0);
	unsigned *tmp = (unsigned *)malloc(n * sizeof(unsigned));
	if (!tmp)
		return -1;
	// a chain that jumps 1 KiB + 4 B ahead each hop (mod n): no two
	// hops share a line
	for (unsigned i = 0; i < n; i++)
		tmp[i] = (i + 257) % n;
	if (where == 2) {
		if (cudaMalloc((void **)&d, n * sizeof(unsigned)) != cudaSuccess ||
		    cudaMemcpy(d, tmp, n * sizeof(unsigned), cudaMemcpyHostToDevice) != cudaSuccess)
			goto out;
	} else {
		if (cudaHostAlloc((void **)&h, n * sizeof(unsigned), flags) != cudaSuccess)
			goto out;
		memcpy(h, tmp, n * sizeof(unsigned));
		if (cudaHostGetDevicePointer((void **)&d, h, 0) != cudaSuccess)
			goto out;
	}
	if (cudaMalloc((void **)&dout, sizeof(unsigned)) != cudaSuccess ||
	    cudaEventCreate(&a) != cudaSuccess || cudaEventCreate(&b) != cudaSuccess)
		goto out;
	link_chase<<<1, 1>>>(d, 8, dout); // warm: module, TLB
	cudaEventRecord(a);
	link_chase<<<1, 1>>>(d, hops, dout);
	cudaEventRecord(b);
	if (cudaEventSynchronize(b) == cudaSuccess) {
		float ms = 0;
		cudaEventElapsedTime(&ms, a, b);
		us = ms * 1e3 / hops;
	}
out:
	if (a)
		cudaEventDestroy(a);
	if (b)
		cudaEventDestroy(b);
	cudaFree(dout);
	if (where == 2)
		cudaFree(d);
	else
		cudaFreeHost(h);
	free(tmp);
	return us;
}

// GB/s of SM reads of pinned host memory (bytes read once, uncached).
extern "C" double rxg_link_read_gbs(int wc, unsigned blocks, size_t bytes)
{
	uint8_t *h = NULL;
	uint4 *d = NULL;
	unsigned *dout = NULL;
	cudaEvent_t a = NULL, b = NULL;
	double gbs = -1;
	unsigned flags = cudaHostAllocMapped | (wc ? cudaHostAllocWriteCombined : 0);
	if (cudaHostAlloc((void **)&h, bytes, flags) != cudaSuccess)
		return -1;
	memset(h, 1, bytes);
	if (cudaHostGetDevicePointer((void **)&d, h, 0) != cudaSuccess ||
	    cudaMalloc((void **)&dout, sizeof(unsigned)) != cudaSuccess ||
	    cudaEventCreate(&a) != cudaSuccess || cudaEventCreate(&b) != cudaSuccess)
		goto out;
	link_read<<<blocks, 256>>>(d, bytes / 16, dout);
	cudaEventRecord(a);
	link_read<<<blocks, 256>>>(d, bytes / 16, dout);
	cudaEventRecord(b);
	if (cudaEventSynchronize(b) == cudaSuccess) {
		float ms = 0;
		cudaEventElapsedTime(&ms, a, b);
		gbs = (double)bytes / (ms * 1e-3) / 1e9;
	}
out:
	if (a)
		cudaEventDestroy(a);
	if (b)
		cudaEventDestroy(b);
	cudaFree(dout);
	cudaFreeHost(h);
	return gbs;
}

// Copy engine, pinned host to device: microseconds per copy of `bytes`
// with `inflight` copies queued on one stream (1: each waited for), and
// the GB/s that gives.
extern "C" double rxg_link_h2d_us(size_t bytes, unsigned inflight, unsigned copies, double *gbs)
{
	uint8_t *h = NULL, *d = NULL;
	cudaStream_t s = NULL;
	double us = -1;
	if (cudaHostAlloc((void **)&h, bytes, cudaHostAllocDefault) != cudaSuccess)
		return -1;
	memset(h, 1, bytes);
	if (cudaMalloc((void **)&d, bytes) != cudaSuccess ||
	    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess)
		goto out;
	cudaMemcpyAsync(d, h, bytes, cudaMemcpyHostToDevice, s);
	cudaStreamSynchronize(s);
	{
		double t0 = link_now_ns();
		for (unsigned i = 0; i < copies; i++) {
			cudaMemcpyAsync(d, h, bytes, cudaMemcpyHostToDevice, s);
			if ((i + 1) % inflight == 0)
				cudaStreamSynchronize(s);
		}
		if (cudaStreamSynchronize(s) == cudaSuccess) {
			double ns = link_now_ns() - t0;
			us = ns / 1e3 / copies;
			if (gbs)
				*gbs = (double)bytes * copies / ns;
		}
	}
out:
	if (s)
		cudaStreamDestroy(s);
	cudaFree(d);
	cudaFreeHost(h);
	return us;
}

template <unsigned B> static void link_launch_one(cudaStream_t s)
{
	link_params<B> p;
	memset(&p, 0, sizeof(p));
	link_empty<B><<<1, 32, 0, s>>>(p);
}

// CPU nanoseconds per call of one API path, `calls` times on one stream
// (a sync every 256 keeps the launch queue from filling):
//   0..3  an empty kernel with 16 B, 1 KiB, 4 KiB, 16 KiB of parameters
//   4     cudaGraphLaunch of a one-kernel graph (16 B parameters)
//   5     cudaMemcpyAsync of 4 KiB pinned host to device
//   6     cudaEventRecord
extern "C" double rxg_link_api_ns(int what, unsigned calls)
{
	cudaStream_t s = NULL;
	cudaGraph_t g = NULL;
	cudaGraphExec_t ge = NULL;
	cudaEvent_t ev = NULL;
	uint8_t *h = NULL, *d = NULL;
	double ns = -1, spent = 0;
	if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess)
		return -1;
	if (what == 4) {
		if (cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) != cudaSuccess)
			goto out;
		link_launch_one<16>(s);
		if (cudaStreamEndCapture(s, &g) != cudaSuccess ||
		    cudaGraphInstantiate(&ge, g, 0) != cudaSuccess)
			goto out;
	}
	if (what == 5 && (cudaHostAlloc((void **)&h, 4096, cudaHostAllocDefault) != cudaSuccess ||
			  cudaMalloc((void **)&d, 4096) != cudaSuccess))
		goto out;
	if (what == 6 && cudaEventCreateWithFlags(&ev, cudaEventDisableTiming) != cudaSuccess)
		goto out;
	for (unsigned i = 0; i < calls + 64; i++) {
		if (i % 256 == 0)
			cudaStreamSynchronize(s);
		double t0 = link_now_ns();
		switch (what) {
		case 0: link_launch_one<16>(s); break;
		case 1: link_launch_one<1024>(s); break;
		case 2: link_launch_one<4096>(s); break;
		case 3: link_launch_one<16384>(s); break;
		case 4: cudaGraphLaunch(ge, s); break;
		case 5: cudaMemcpyAsync(d, h, 4096, cudaMemcpyHostToDevice, s); break;
		case 6: cudaEventRecord(ev, s); break;
		}
		if (i >= 64) // the first calls load the module
			spent += link_now_ns() - t0;
	}
	if (cudaStreamSynchronize(s) == cudaSuccess && cudaGetLastError() == cudaSuccess)
		ns = spent / calls;
out:
	if (ge)
		cudaGraphExecDestroy(ge);
	if (g)
		cudaGraphDestroy(g);
	if (ev)
		cudaEventDestroy(ev);
	cudaFreeHost(h);
	cudaFree(d);
	cudaStreamDestroy(s);
	return ns;
}

struct link_thr {
	unsigned calls;
	pthread_barrier_t *bar;
	int rc;
};

static void *link_launcher(void *arg)
{
	link_thr *t = (link_thr *)arg;
	cudaStream_t s = NULL;
	t->rc = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess ? 0 : -EIO;
	pthread_barrier_wait(t->bar);
	for (unsigned i = 0; !t->rc && i < t->calls; i++) {
		if (i % 256 == 0)
			cudaStreamSynchronize(s);
		link_launch_one<1024>(s);
	}
	if (s) {
		cudaStreamSynchronize(s);
		cudaStreamDestroy(s);
	}
	return NULL;
}

// Launches per second (millions) of `threads` threads, each launching
// empty kernels with 1 KiB of parameters on a stream of its own.
extern "C" double rxg_link_launch_mps(unsigned threads, unsigned calls)
{
	if (threads < 1 || threads > 64)
		return -1;
	link_launch_one<1024>(0);
	cudaDeviceSynchronize();
	pthread_t tid[64];
	link_thr t[64];
	pthread_barrier_t bar;
	pthread_barrier_init(&bar, NULL, threads + 1);
	for (unsigned i = 0; i < threads; i++) {
		t[i] = link_thr{calls, &bar, 0};
		pthread_create(&tid[i], NULL, link_launcher, &t[i]);
	}
	pthread_barrier_wait(&bar);
	double t0 = link_now_ns();
	int rc = 0;
	for (unsigned i = 0; i < threads; i++) {
		pthread_join(tid[i], NULL);
		rc |= t[i].rc;
	}
	double ns = link_now_ns() - t0;
	pthread_barrier_destroy(&bar);
	return rc ? -1 : (double)threads * calls / ns * 1e3;
}

// Round trip of a doorbell in mapped memory: the CPU stores ping = k, a
// resident GPU thread sees it and stores pong = k, the CPU sees that.
// Microseconds per round trip.
extern "C" double rxg_link_doorbell_us(unsigned rounds)
{
	unsigned long long *h = NULL, *d = NULL;
	cudaStream_t s = NULL;
	double us = -1;
	if (cudaHostAlloc((void **)&h, 256, cudaHostAllocMapped) != cudaSuccess)
		return -1;
	memset(h, 0, 256);
	if (cudaHostGetDevicePointer((void **)&d, h, 0) != cudaSuccess ||
	    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess)
		goto out;
	link_pong<<<1, 1, 0, s>>>(d, d + 16, rounds);
	if (cudaGetLastError() != cudaSuccess)
		goto out;
	{
		volatile unsigned long long *ping = h, *pong = h + 16;
		double t0 = 0;
		for (unsigned long long k = 1; k <= rounds; k++) {
			if (k == 2)
				t0 = link_now_ns(); // the first round waits for the launch
			__atomic_store_n((unsigned long long *)ping, k, __ATOMIC_RELEASE);
			double until = link_now_ns() + 1e9;
			while (*pong != k)
				if (link_now_ns() > until)
					goto out; // 1 s: the kernel is not running
		}
		us = (link_now_ns() - t0) / 1e3 / (rounds - 1);
	}
out:
	if (s) {
		if (us < 0) // unstick the kernel: every round rung at once
			__atomic_store_n(h, (unsigned long long)rounds, __ATOMIC_RELEASE);
		cudaStreamSynchronize(s);
		cudaStreamDestroy(s);
	}
	cudaFreeHost(h);
	return us;
}

// A batch of n addresses read by the kernel from mapped host memory (one
// 8-byte word per lane) or from its parameters, a word written to each;
// the last thread stores the batch's number into a mapped flag.
struct link_batch_arg {
	unsigned long long b;
	uint32_t n;
	const unsigned long long *mapped; // NULL: addresses in a[]
	unsigned long long a[64];
};

__device__ static void link_batch_body(const link_batch_arg &p, unsigned long long b,
				       volatile unsigned long long *flag)
{
	unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
	if (t < p.n) {
		unsigned long long a = p.mapped ? __ldcv(&p.mapped[t]) : p.a[t];
		*(unsigned *)a = t;
	}
	__syncthreads();
	if (threadIdx.x == 0) {
		__threadfence_system();
		*flag = b;
	}
}

__global__ static void link_batch_k(const __grid_constant__ link_batch_arg p,
				    volatile unsigned long long *flag)
{
	link_batch_body(p, p.b, flag);
}

__global__ static void link_batch_graph(const unsigned long long *slot, uint32_t n,
					volatile unsigned long long *flag)
{
	link_batch_arg p;
	p.n = n;
	p.mapped = slot + 1;
	link_batch_body(p, __ldcv(&slot[0]), flag);
}

__global__ static void link_batch_resident(const unsigned long long *slot, uint32_t n,
					   const volatile unsigned long long *bell,
					   volatile unsigned long long *flag, unsigned rounds)
{
	for (unsigned long long b = 1; b <= rounds; b++) {
		while (*bell < b)
			;
		link_batch_arg p;
		p.n = n;
		p.mapped = slot + 1;
		link_batch_body(p, b, flag);
	}
}

// The consumer's shape: 16 blocks of 4 warps, packet k = warp k (lane 0
// reads its address and sequence number from mapped memory, scattered),
// or the block's 4 addresses read by its first 4 lanes at once (coalesced).
__global__ static void link_batch_shape(const unsigned long long *slot, uint32_t n, int coalesced,
					volatile unsigned long long *flag, unsigned *done)
{
	__shared__ unsigned long long sa[4];
	unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
	unsigned k = blockIdx.x * 4 + warp;
	unsigned long long a = 0, q = 0;
	if (coalesced) {
		if (threadIdx.x < 4 && blockIdx.x * 4 + threadIdx.x < n)
			sa[threadIdx.x] = __ldcv(&slot[1 + blockIdx.x * 4 + threadIdx.x]);
		__syncthreads();
		a = k < n ? sa[warp] : 0;
	} else if (lane == 0 && k < n) {
		a = __ldcv(&slot[1 + k]);
		q = __ldcv(&slot[1 + 64 + k]);
	}
	a = __shfl_sync(0xffffffffu, a, 0);
	if (lane == 0 && k < n)
		*(unsigned *)a = (unsigned)q + 1;
	__threadfence();
	__syncthreads();
	if (threadIdx.x == 0 && atomicAdd(done, 1u) == gridDim.x - 1) {
		*done = 0;
		__threadfence_system();
		*flag = __ldcv(&slot[0]);
	}
}

// Microseconds per batch of n (<= 64) addresses, each batch waited for by
// polling its flag: mode 0 a launch with the addresses in its parameters,
// 1 a launch whose kernel reads them from mapped memory, 2 a graph launch
// of that kernel, 3 a resident kernel rung through mapped memory; 4 and 5
// the consumer's grid (16 x 128) launched, its addresses rewritten by the
// CPU before each batch and read scattered (4) or coalesced (5).
extern "C" double rxg_link_batch_us(int mode, uint32_t n, unsigned rounds)
{
	unsigned long long *h = NULL, *d = NULL, *dst = NULL;
	unsigned *dn = NULL;
	cudaStream_t s = NULL;
	cudaGraph_t g = NULL;
	cudaGraphExec_t ge = NULL;
	double us = -1, t0 = 0;
	if (n < 1 || n > 64 || rounds < 2)
		return -1;
	// [0..127]: slot (batch number, addresses); [128]: bell; [136]: flag
	if (cudaHostAlloc((void **)&h, 4096, cudaHostAllocMapped) != cudaSuccess)
		return -1;
	memset(h, 0, 4096);
	volatile unsigned long long *flag = h + 136, *bell = h + 128;
	if (cudaHostGetDevicePointer((void **)&d, h, 0) != cudaSuccess ||
	    cudaMalloc((void **)&dst, 64 * 256) != cudaSuccess ||
	    cudaMalloc((void **)&dn, sizeof(unsigned)) != cudaSuccess ||
	    cudaMemset(dn, 0, sizeof(unsigned)) != cudaSuccess ||
	    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess)
		goto out;
	for (uint32_t i = 0; i < n; i++)
		h[1 + i] = (unsigned long long)(uintptr_t)(dst + i * 32);
	if (mode == 2) {
		if (cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) != cudaSuccess)
			goto out;
		link_batch_graph<<<1, 64, 0, s>>>(d, n, d + 136);
		if (cudaStreamEndCapture(s, &g) != cudaSuccess ||
		    cudaGraphInstantiate(&ge, g, 0) != cudaSuccess)
			goto out;
	}
	if (mode == 3) {
		link_batch_resident<<<1, 64, 0, s>>>(d, n, d + 128, d + 136, rounds);
		if (cudaGetLastError() != cudaSuccess)
			goto out;
	}
	for (unsigned long long b = 1; b <= rounds; b++) {
		if (b == 2)
			t0 = link_now_ns();
		h[0] = b;
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (mode == 0 || mode == 1) {
			link_batch_arg p;
			memset(&p, 0, sizeof(p));
			p.b = b;
			p.n = n;
			p.mapped = mode == 1 ? d + 1 : NULL;
			for (uint32_t i = 0; i < n; i++)
				p.a[i] = h[1 + i];
			link_batch_k<<<1, 64, 0, s>>>(p, d + 136);
		} else if (mode == 4 || mode == 5) {
			unsigned long long tmp[128];
			for (uint32_t i = 0; i < n; i++) {
				tmp[i] = (unsigned long long)(uintptr_t)(dst + i * 32);
				tmp[64 + i] = b * 64 + i;
			}
			memcpy(h + 1, tmp, sizeof(tmp));
			__atomic_thread_fence(__ATOMIC_SEQ_CST);
			link_batch_shape<<<16, 128, 0, s>>>(d, n, mode == 5, d + 136, dn);
		} else if (mode == 2) {
			cudaGraphLaunch(ge, s);
		} else {
			__atomic_store_n((unsigned long long *)bell, b, __ATOMIC_RELEASE);
		}
		double until = link_now_ns() + 1e9;
		while (*flag != b)
			if (link_now_ns() > until)
				goto out;
	}
	us = (link_now_ns() - t0) / 1e3 / (rounds - 1);
out:
	if (mode == 3 && h)
		__atomic_store_n(h + 128, (unsigned long long)rounds, __ATOMIC_RELEASE);
	if (s) {
		cudaStreamSynchronize(s);
		cudaStreamDestroy(s);
	}
	if (ge)
		cudaGraphExecDestroy(ge);
	if (g)
		cudaGraphDestroy(g);
	cudaFree(dst);
	cudaFree(dn);
	cudaFreeHost(h);
	return us;
}
