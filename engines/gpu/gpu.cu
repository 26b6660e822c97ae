// SPDX-License-Identifier: MIT
// The GPU consumer stage (rxray/gpu.h). A batch reaches its kernel as
// kernel parameters (launch kernel), as the device copy of a pinned slot
// that the graph's copy node makes before its kernel (graph), or through
// mapped pinned memory (persistent); a warp handles a packet; the grid's last block
// writes the batch's statistics and its number into mapped host memory,
// so retiring a batch is a memory read and a batch costs the host one
// CUDA call (kernel, graph) or none (persistent).
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_int.cuh"
#include "rxray/gpu.h"
#include "rxray/probe.h"

#define RXG_WARPS 4u            // packets per block: a warp each
#define RXG_PARAM_MAX 1024u     // batches up to this ride in the parameters

static char rxg_stall_line[400];
static int rxg_stall_set; // 0 none, 1 being written, 2 there

void rxg_stall_note(const char *fmt, ...)
{
	int none = 0;
	if (!__atomic_compare_exchange_n(&rxg_stall_set, &none, 1, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE))
		return; // the first stall is the one reported
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(rxg_stall_line, sizeof(rxg_stall_line), fmt, ap);
	va_end(ap);
	__atomic_store_n(&rxg_stall_set, 2, __ATOMIC_RELEASE);
}

extern "C" const char *rxg_stall(void)
{
	return __atomic_load_n(&rxg_stall_set, __ATOMIC_ACQUIRE) == 2 ? rxg_stall_line : NULL;
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

extern "C" const char *rxg_launch_name(enum rxg_launch l)
{
	switch (l) {
	case RXG_LAUNCH_KERNEL: return "kernel";
	case RXG_LAUNCH_GRAPH: return "graph";
	case RXG_LAUNCH_PERSISTENT: return "persistent";
	}
	return NULL;
}

extern "C" int rxg_available(char *why, size_t whylen)
{
	/* the runtime reports a missing driver as an insufficient one: ask
	 * for the driver library first, so the reason names what is absent */
	void *drv = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!drv) {
		rxu_errf(why, whylen, 0, "no NVIDIA driver: libcuda.so.1 cannot be loaded");
		return 0;
	}
	dlclose(drv);
	// every module loaded when the context starts: a kernel loaded on its
	// first launch while another is resident (a persistent consumer, the
	// NIC's resident copies) waits for the GPU to go idle, for ever. The
	// kernels are also loaded by hand (rxg_dma_preload, rxg_consumer_open)
	// where the context began before this was read.
	setenv("CUDA_MODULE_LOADING", "EAGER", 0);
	int n = 0, dv = 0, rv = 0;
	cudaError_t e = cudaGetDeviceCount(&n);
	if (e == cudaErrorInsufficientDriver) {
		cudaDriverGetVersion(&dv);
		cudaRuntimeGetVersion(&rv);
		rxu_errf(why, whylen, 0,
			"the NVIDIA driver supports CUDA %d.%d, rxray was built with CUDA %d.%d",
			dv / 1000, dv % 1000 / 10, rv / 1000, rv % 1000 / 10);
		return 0;
	}
	if (e != cudaSuccess || n < 1) {
		rxu_errf(why, whylen, 0, "no CUDA device (%s)",
			e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
		return 0;
	}
	return 1;
}

extern "C" int rxg_device_info(int device, struct rxg_device_info *out, char *err, size_t errlen)
{
	int rc = 0, clk = 0, bus = 0;
	cudaDeviceProp prop;
	memset(out, 0, sizeof(*out));
	CU(cudaGetDeviceProperties(&prop, device));
	CU(cudaDeviceGetAttribute(&clk, cudaDevAttrMemoryClockRate, device));
	CU(cudaDeviceGetAttribute(&bus, cudaDevAttrGlobalMemoryBusWidth, device));
	snprintf(out->name, sizeof(out->name), "%s", prop.name);
	out->sms = (uint32_t)prop.multiProcessorCount;
	out->l2_bytes = (uint64_t)prop.l2CacheSize;
	out->mem_clock_khz = (uint32_t)clk;
	out->bus_bits = (uint32_t)bus;
	// double data rate: two transfers per memory clock
	out->peak_gbs = 2.0 * clk * 1e3 * (bus / 8.0) / 1e9;
	return 0;
fail:
	return rc;
}

// ------------------------------------------------------------ the batch

// One batch's statistics, written by the grid's last block into mapped
// host memory; batch is stored last (after a system fence): the flag.
struct rxg_snap {
	unsigned long long min_seq, max_seq, csum, ns;
	unsigned long long batch;
};

// Device scratch per slot: the grid's blocks accumulate into it; the last
// block folds it into the snapshot and sets it back to empty.
struct rxg_scratch {
	unsigned long long min_seq, max_seq, csum, t0;
	unsigned blocks;
};

// A batch in mapped memory (graph, persistent): the header and the arrays.
struct rxg_hdr {
	unsigned long long batch;
	uint32_t n, seq_in_pkt;
};

// Doorbell of the persistent kernel (mapped): batches posted, and quit.
struct rxg_bell {
	unsigned long long posted;
	unsigned long long quit;
};

template <unsigned P> struct rxg_arg {
	unsigned long long batch;
	uint32_t n, slot, seq_in_pkt;
	void *addr[P];
	unsigned long long seq[P];
};

// What every launch mode's kernel needs besides the batch itself.
struct rxg_ctx {
	rxg_scratch *scratch;   // device, depth entries
	rxg_snap *snap;         // device view of mapped, depth entries
	uint8_t *out;           // reorder: window x stride
	uint32_t *csum;         // checksum: per packet of the batch
	uint32_t mask, bytes, stride;
	uint32_t seq_at;        // seq_in_pkt: the sequence number's offset in the packet
	int work;
};

__device__ static inline unsigned long long rxg_now(void)
{
	unsigned long long t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

// The 16-bit ones' complement sum of one packet, by a warp: lanes add
// 32-bit little-endian words (16-byte loads), the warp reduces with
// shuffles, the sum folds to 16 bits and is swapped to network order
// (the sum of byte-swapped words is the byte-swapped sum). A byte at an
// odd address is the high byte of its little-endian pair.
// CV: every load fetched again past the SM's cache (a resident kernel
// reads buffers that other kernels rewrite while it runs).
template <bool CV>
__device__ static uint32_t rxg_warp_csum(const uint8_t *src, uint32_t len, unsigned lane)
{
	unsigned long long s = 0;
	uint32_t head = (uint32_t)((16 - ((uintptr_t)src & 15)) & 15);
	if (head > len)
		head = len;
	if (lane < head)
		s += (unsigned long long)rxg_ld<CV>(src + lane) << (((uintptr_t)(src + lane) & 1) * 8);
	const uint8_t *a = src + head;
	uint32_t rest = len - head, nv = rest / 16;
	const uint4 *v = (const uint4 *)a;
	uint32_t i = lane;
	for (; i + 32 < nv; i += 64) {
		uint4 x = rxg_ld<CV>(v + i), y = rxg_ld<CV>(v + i + 32);
		s += (unsigned long long)x.x + x.y + x.z + x.w;
		s += (unsigned long long)y.x + y.y + y.z + y.w;
	}
	for (; i < nv; i += 32) {
		uint4 x = rxg_ld<CV>(v + i);
		s += (unsigned long long)x.x + x.y + x.z + x.w;
	}
	for (uint32_t j = nv * 16 + lane; j < rest; j += 32)
		s += (unsigned long long)rxg_ld<CV>(a + j) << (((uintptr_t)(a + j) & 1) * 8);
	for (int o = 16; o > 0; o >>= 1)
		s += __shfl_down_sync(0xffffffffu, s, o);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	// the pairs start at src: from an odd address they are the other way
	if ((uintptr_t)src & 1)
		s = ((s & 0xff) << 8) | (s >> 8);
	return (uint32_t)(((s & 0xff) << 8) | (s >> 8));
}

// A grid's share of one batch: a warp per packet (grid-stride), then the
// last block's completion. addr/seq are in the parameters or in mapped
// memory (read once per packet, uncached).
// The big-endian 64-bit sequence number at p (any alignment), by lane 0,
// given to the whole warp.
template <bool CV>
__device__ static unsigned long long rxg_pkt_seq(const uint8_t *p, unsigned lane)
{
	unsigned long long q = 0;
	if (lane == 0)
		for (int i = 0; i < 8; i++)
			q = q << 8 | rxg_ld<CV>(p + i);
	return __shfl_sync(0xffffffffu, q, 0);
}

// One packet by a warp: its sequence number (given, or read from the
// packet by lane 0), its work, and the warp's statistics. CV: the
// resident kernel's loads of payloads (rxg_ld).
template <bool CV>
__device__ static inline void rxg_packet(const rxg_ctx &c, const uint8_t *src,
					 unsigned long long q, uint32_t k, bool seq_in_pkt,
					 unsigned lane, unsigned long long *wmin,
					 unsigned long long *wmax, unsigned long long *wsum)
{
	if (seq_in_pkt)
		q = rxg_pkt_seq<CV>(src + c.seq_at, lane);
	if (c.work == RXG_WORK_REORDER) {
		rxg_warp_copy<CV>(c.out + (size_t)(q & c.mask) * c.stride, src, c.bytes, lane);
	} else {
		uint32_t v = rxg_warp_csum<CV>(src, c.bytes, lane);
		if (lane == 0) {
			c.csum[k] = v;
			*wsum += v;
		}
	}
	*wmin = q < *wmin ? q : *wmin;
	*wmax = q > *wmax ? q : *wmax;
}

template <bool MAPPED>
__device__ static void rxg_batch(const rxg_ctx &c, void *const *addr,
				 const unsigned long long *seq, uint32_t n, uint32_t slot,
				 unsigned long long batch, bool seq_in_pkt)
{
	__shared__ bool last;
	rxg_scratch *sc = &c.scratch[slot];
	unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
	if (threadIdx.x == 0)
		atomicMin(&sc->t0, rxg_now());
	// the warp's own statistics, added to the batch's once at its end
	unsigned long long wmin = ~0ull, wmax = 0, wsum = 0;
	if (!MAPPED) {
		// A warp's packets are k, k + stride, ...; their addresses and
		// sequence numbers are in the kernel's parameters.
		const uint32_t stride = gridDim.x * RXG_WARPS;
		for (uint32_t k = blockIdx.x * RXG_WARPS + warp; k < n; k += stride)
			rxg_packet<false>(c, (const uint8_t *)addr[k], seq_in_pkt ? 0 : seq[k], k, seq_in_pkt,
				   lane, &wmin, &wmax, &wsum);
	} else {
		// From mapped memory: the block takes a contiguous share of the
		// batch and reads it a chunk at a time, one 8-byte word a
		// thread, side by side, into shared memory; the header was read
		// once a block: side by side, the reads of one chunk are in
		// flight together. Still slow: a GPU read of a line the CPU has
		// just written is a round trip over PCIe, and such reads barely
		// overlap (bench/gpu/README.md, "Measurements behind the
		// kernels").
		__shared__ unsigned long long s_addr[RXG_WARPS * 32], s_seq[RXG_WARPS * 32];
		const uint32_t per = (n + gridDim.x - 1) / gridDim.x;
		const uint32_t lo = blockIdx.x * per, hi = lo + per < n ? lo + per : n;
		for (uint32_t c0 = lo; c0 < hi; c0 += RXG_WARPS * 32) {
			const uint32_t cn = hi - c0 < RXG_WARPS * 32 ? hi - c0 : RXG_WARPS * 32;
			if (threadIdx.x < cn) {
				s_addr[threadIdx.x] =
				    __ldcv((const unsigned long long *)&addr[c0 + threadIdx.x]);
				if (!seq_in_pkt)
					s_seq[threadIdx.x] = __ldcv(&seq[c0 + threadIdx.x]);
			}
			__syncthreads();
			for (uint32_t j = warp; j < cn; j += RXG_WARPS)
				rxg_packet<true>(c, (const uint8_t *)s_addr[j], seq_in_pkt ? 0 : s_seq[j], c0 + j,
					   seq_in_pkt, lane, &wmin, &wmax, &wsum);
			__syncthreads();
		}
	}
	if (lane == 0 && wmax >= wmin) {
		atomicMin(&sc->min_seq, wmin);
		atomicMax(&sc->max_seq, wmax);
		if (wsum)
			atomicAdd(&sc->csum, wsum);
	}
	// the block's writes are visible at GPU scope before its count
	__threadfence();
	__syncthreads();
	if (threadIdx.x == 0)
		last = atomicAdd(&sc->blocks, 1u) == gridDim.x - 1;
	__syncthreads();
	if (!last || threadIdx.x != 0)
		return;
	// every block has counted: the scratch is complete
	volatile rxg_scratch *v = sc;
	volatile rxg_snap *o = &c.snap[slot];
	o->min_seq = v->min_seq;
	o->max_seq = v->max_seq;
	o->csum = v->csum;
	o->ns = rxg_now() - v->t0;
	v->min_seq = ~0ull;
	v->max_seq = 0;
	v->csum = 0;
	v->t0 = ~0ull;
	v->blocks = 0;
	__threadfence_system();
	o->batch = batch;
}

template <unsigned P> __global__ static void rxg_k_param(const rxg_ctx c, const __grid_constant__ rxg_arg<P> a)
{
	rxg_batch<false>(c, a.addr, a.seq, a.n, a.slot, a.batch, a.seq_in_pkt != 0);
}

// Slot slot's batch from device memory, where the graph's copy node has
// just put it (the graph's kernel node): every thread reads the header,
// a warp a packet as in kernel mode. The copy engine reads the pinned
// slot with many reads in flight; the kernel's own reads of mapped memory
// that the CPU had just written barely overlap (bench/gpu/README.md,
// bench_gpu_link).
__global__ static void rxg_k_dev(const rxg_ctx c, const uint8_t *slots, size_t slot_bytes,
				 uint32_t slot, uint32_t max_batch)
{
	const uint8_t *b = slots + slot * slot_bytes;
	const rxg_hdr *h = (const rxg_hdr *)b;
	void *const *addr = (void *const *)(b + sizeof(rxg_hdr));
	const unsigned long long *seq = (const unsigned long long *)(addr + max_batch);
	rxg_batch<false>(c, addr, seq, h->n, slot, h->batch, h->seq_in_pkt != 0);
}

// Resident: waits on the doorbell for batch after batch, until quit.
__global__ static void rxg_k_persistent(const rxg_ctx c, const uint8_t *slots, size_t slot_bytes,
					uint32_t depth, uint32_t max_batch, const rxg_bell *bell)
{
	__shared__ unsigned long long go, hw;
	unsigned long long p = 0; // thread 0: the last posted count it read
	for (unsigned long long b = 1;; b++) {
		if (threadIdx.x == 0) {
			// a doorbell read is a round trip over PCIe: read it again
			// only once the batches it announced are done
			while (p < b && (p = __ldcv(&bell->posted)) < b && !__ldcv(&bell->quit))
				__nanosleep(64);
			go = p >= b;
			if (go) {
				uint32_t sl = (uint32_t)((b - 1) % depth);
				hw = __ldcv((const unsigned long long *)&((const rxg_hdr *)(slots + sl * slot_bytes))->n);
			}
		}
		__syncthreads();
		if (!go)
			return;
		uint32_t slot = (uint32_t)((b - 1) % depth);
		const uint8_t *s = slots + slot * slot_bytes;
		void *const *addr = (void *const *)(s + sizeof(rxg_hdr));
		const unsigned long long *seq = (const unsigned long long *)(addr + max_batch);
		rxg_batch<true>(c, addr, seq, (uint32_t)hw, slot, b, (hw >> 32) != 0);
		__syncthreads();
	}
}

__global__ static void rxg_k_scratch_init(rxg_scratch *sc, uint32_t n)
{
	for (uint32_t i = threadIdx.x; i < n; i += blockDim.x)
		sc[i] = rxg_scratch{~0ull, 0, 0, ~0ull, 0};
}

// ------------------------------------------------------------------ host

struct rxg_consumer;
typedef int (*rxg_launch_fn)(rxg_consumer *g, void *const *payloads, const uint64_t *seqs,
			     uint32_t n, uint32_t slot, uint64_t batch);

struct rxg_consumer {
	rxg_params p;
	rxg_launch_fn launch;   // chosen once at open
	cudaStream_t stream;
	rxg_ctx ctx;
	rxg_snap *snap;         // mapped, depth entries
	uint8_t *slots;         // mapped: depth x slot_bytes (graph, persistent)
	uint8_t *d_slots;       // device view of slots (persistent)
	uint8_t *dev_slots;     // device memory: the graph's copy of each slot
	size_t slot_bytes;
	rxg_bell *bell;         // mapped (persistent)
	rxg_bell *d_bell;
	bool running;           // the persistent kernel was launched
	cudaGraphExec_t *exec;  // graph: one per slot
	unsigned grid;          // graph, persistent: blocks
	void *arg;              // kernel: the parameter block (host)
	uint32_t *n;            // packets per slot
	uint64_t *nvtx;         // NVTX range per slot, submit to retire
	uint64_t head, tail;    // batches submitted, retired
	rxg_stats st;
	bool seq_started;
	uint64_t next_seq;
};

template <unsigned P>
static int rxg_launch_param(rxg_consumer *g, void *const *payloads, const uint64_t *seqs,
			    uint32_t n, uint32_t slot, uint64_t batch)
{
	rxg_arg<P> *a = (rxg_arg<P> *)g->arg;
	a->batch = batch;
	a->n = n;
	a->slot = slot;
	a->seq_in_pkt = !seqs;
	memcpy(a->addr, payloads, n * sizeof(void *));
	if (seqs)
		memcpy(a->seq, seqs, n * sizeof(uint64_t));
	unsigned blocks = (n + RXG_WARPS - 1) / RXG_WARPS;
	rxg_k_param<P><<<blocks, RXG_WARPS * 32, 0, g->stream>>>(g->ctx, *a);
	return cudaGetLastError() == cudaSuccess ? 0 : -EIO;
}

// The batch into its mapped slot (graph, persistent); its stores are
// ordered before whatever tells the GPU to read them.
static void rxg_slot_write(rxg_consumer *g, void *const *payloads, const uint64_t *seqs,
			   uint32_t n, uint32_t slot, uint64_t batch)
{
	uint8_t *s = g->slots + slot * g->slot_bytes;
	rxg_hdr *h = (rxg_hdr *)s;
	h->batch = batch;
	h->n = n;
	h->seq_in_pkt = !seqs;
	memcpy(s + sizeof(rxg_hdr), payloads, n * sizeof(void *));
	if (seqs)
		memcpy(s + sizeof(rxg_hdr) + (size_t)g->p.max_batch * sizeof(void *), seqs,
		       n * sizeof(uint64_t));
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

static int rxg_launch_graph(rxg_consumer *g, void *const *payloads, const uint64_t *seqs,
			    uint32_t n, uint32_t slot, uint64_t batch)
{
	rxg_slot_write(g, payloads, seqs, n, slot, batch);
	return cudaGraphLaunch(g->exec[slot], g->stream) == cudaSuccess ? 0 : -EIO;
}

static int rxg_launch_bell(rxg_consumer *g, void *const *payloads, const uint64_t *seqs,
			   uint32_t n, uint32_t slot, uint64_t batch)
{
	if (!g->running) {
		// launched with the first batch, not at open: while it is
		// resident every pinned or device allocation of the process
		// (the software NIC's DMA engines, a pool) waits for it, for
		// ever. By the first batch the run has allocated all it needs.
		uint32_t depth = g->p.depth, mb = g->p.max_batch;
		void *kargs[] = {&g->ctx, &g->d_slots, &g->slot_bytes, &depth, &mb, &g->d_bell};
		// no block waits for another, only for the host: a grid of at
		// most half the SMs in small blocks is resident beside the rest
		cudaError_t e = cudaLaunchKernel((const void *)rxg_k_persistent, g->grid,
						 RXG_WARPS * 32, kargs, 0, g->stream);
		if (e != cudaSuccess)
			return -EIO;
		g->running = true;
	}
	rxg_slot_write(g, payloads, seqs, n, slot, batch);
	__atomic_store_n(&g->bell->posted, (unsigned long long)batch, __ATOMIC_RELEASE);
	return 0;
}

static int rxg_launch_none(rxg_consumer *g, void *const *payloads, const uint64_t *seqs,
			   uint32_t n, uint32_t slot, uint64_t batch)
{
	(void)payloads;
	(void)seqs;
	(void)n;
	// no kernel: the batch is complete as submitted
	g->snap[slot] = rxg_snap{~0ull, 0, 0, 0, batch};
	return 0;
}

static size_t rxg_arg_bytes(uint32_t max_batch)
{
	return max_batch <= 64 ? sizeof(rxg_arg<64>)
	       : max_batch <= 256 ? sizeof(rxg_arg<256>)
				  : sizeof(rxg_arg<RXG_PARAM_MAX>);
}

static rxg_launch_fn rxg_param_fn(uint32_t max_batch)
{
	return max_batch <= 64 ? rxg_launch_param<64>
	       : max_batch <= 256 ? rxg_launch_param<256>
				  : rxg_launch_param<RXG_PARAM_MAX>;
}

extern "C" int rxg_consumer_open(const struct rxg_params *p, struct rxg_consumer **out, char *err,
				 size_t errlen)
{
	int rc = 0;
	*out = NULL;
	if (!p || p->max_batch < 1 || p->max_batch > 65536 || p->depth < 1 || p->depth > 64 ||
	    p->payload_bytes < 1 || (p->work == RXG_WORK_REORDER &&
				     (!p->window || (p->window & (p->window - 1)))) ||
	    !rxg_work_name(p->work))
		return rxu_errf(err, errlen, -EINVAL,
			       "gpu-work: bad consumer parameters (batch 1..65536, depth 1..64, "
			       "payload > 0, reorder window a power of two)");
	if (!rxg_launch_name(p->launch))
		return rxu_errf(err, errlen, -EINVAL, "gpu-launch: unknown launch mode %d",
			       (int)p->launch);
	if (p->launch == RXG_LAUNCH_KERNEL && p->work != RXG_WORK_NONE &&
	    p->max_batch > RXG_PARAM_MAX)
		return rxu_errf(err, errlen, -EINVAL,
			       "gpu-launch: kernel passes a batch in its parameters: batch %u > %u "
			       "(use graph or persistent)",
			       p->max_batch, RXG_PARAM_MAX);
	char why[160];
	if (!rxg_available(why, sizeof(why)))
		return rxu_errf(err, errlen, -ENODEV, "gpu-work: %s", why);
	rxg_consumer *g = (rxg_consumer *)calloc(1, sizeof(*g));
	if (!g)
		return rxu_errf(err, errlen, -ENOMEM, "gpu-work: out of memory");
	g->p = *p;
	g->n = (uint32_t *)calloc(p->depth, sizeof(*g->n));
	g->nvtx = (uint64_t *)calloc(p->depth, sizeof(*g->nvtx));
	if (!g->n || !g->nvtx) {
		rc = rxu_errf(err, errlen, -ENOMEM, "gpu-work: out of memory");
		goto fail;
	}
	CU(cudaSetDevice(p->device));
	// every kernel the run may start, loaded before any is resident
	{
		cudaFuncAttributes fa;
		CU(cudaFuncGetAttributes(&fa, (const void *)rxg_k_param<64>));
		CU(cudaFuncGetAttributes(&fa, (const void *)rxg_k_param<256>));
		CU(cudaFuncGetAttributes(&fa, (const void *)rxg_k_param<RXG_PARAM_MAX>));
		CU(cudaFuncGetAttributes(&fa, (const void *)rxg_k_dev));
		CU(cudaFuncGetAttributes(&fa, (const void *)rxg_k_persistent));
		CU(cudaFuncGetAttributes(&fa, (const void *)rxg_k_scratch_init));
		CU(rxg_dma_preload());
	}
	CU(cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking));
	CU(cudaHostAlloc((void **)&g->snap, p->depth * sizeof(rxg_snap), cudaHostAllocMapped));
	memset(g->snap, 0, p->depth * sizeof(rxg_snap));
	CU(cudaHostGetDevicePointer((void **)&g->ctx.snap, g->snap, 0));
	g->ctx.work = (int)p->work;
	g->ctx.bytes = p->payload_bytes;
	g->ctx.stride = (p->payload_bytes + 15) & ~15u;
	g->ctx.mask = p->window ? p->window - 1 : 0;
	g->ctx.seq_at = p->seq_at;
	if (p->work == RXG_WORK_NONE) {
		g->launch = rxg_launch_none;
		*out = g;
		return 0;
	}
	CU(cudaMalloc((void **)&g->ctx.scratch, p->depth * sizeof(rxg_scratch)));
	rxg_k_scratch_init<<<1, 64, 0, g->stream>>>(g->ctx.scratch, p->depth);
	CU(cudaGetLastError());
	if (p->work == RXG_WORK_REORDER)
		CU(cudaMalloc((void **)&g->ctx.out, (size_t)p->window * g->ctx.stride));
	if (p->work == RXG_WORK_CHECKSUM)
		CU(cudaMalloc((void **)&g->ctx.csum, (size_t)p->max_batch * sizeof(uint32_t)));
	if (p->launch == RXG_LAUNCH_KERNEL) {
		g->arg = calloc(1, rxg_arg_bytes(p->max_batch));
		if (!g->arg) {
			rc = rxu_errf(err, errlen, -ENOMEM, "gpu-work: out of memory");
			goto fail;
		}
		g->launch = rxg_param_fn(p->max_batch);
	} else {
		g->slot_bytes = (sizeof(rxg_hdr) + (size_t)p->max_batch * 16 + 127) & ~(size_t)127;
		CU(cudaHostAlloc((void **)&g->slots, p->depth * g->slot_bytes, cudaHostAllocMapped));
		memset(g->slots, 0, p->depth * g->slot_bytes);
		CU(cudaHostGetDevicePointer((void **)&g->d_slots, g->slots, 0));
		int sms = 0;
		CU(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, p->device));
		unsigned need = (p->max_batch + RXG_WARPS - 1) / RXG_WARPS;
		g->grid = need;
		if (p->launch == RXG_LAUNCH_PERSISTENT && g->grid > (unsigned)(sms > 1 ? sms / 2 : 1))
			g->grid = sms > 1 ? (unsigned)sms / 2 : 1; // half the SMs stay free
	}
	CU(cudaStreamSynchronize(g->stream));
	if (p->launch == RXG_LAUNCH_GRAPH) {
		g->exec = (cudaGraphExec_t *)calloc(p->depth, sizeof(*g->exec));
		if (!g->exec) {
			rc = rxu_errf(err, errlen, -ENOMEM, "gpu-work: out of memory");
			goto fail;
		}
		// each slot's graph: a copy node (the pinned slot into device
		// memory), then the kernel that reads it there
		CU(cudaMalloc((void **)&g->dev_slots, p->depth * g->slot_bytes));
		for (uint32_t s = 0; s < p->depth; s++) {
			cudaGraph_t graph = NULL;
			CU(cudaStreamBeginCapture(g->stream, cudaStreamCaptureModeThreadLocal));
			cudaError_t me = cudaMemcpyAsync(g->dev_slots + s * g->slot_bytes,
							 g->slots + s * g->slot_bytes, g->slot_bytes,
							 cudaMemcpyHostToDevice, g->stream);
			rxg_k_dev<<<g->grid, RXG_WARPS * 32, 0, g->stream>>>(
			    g->ctx, g->dev_slots, g->slot_bytes, s, p->max_batch);
			cudaError_t le = me != cudaSuccess ? me : cudaGetLastError();
			cudaError_t ce = cudaStreamEndCapture(g->stream, &graph);
			CU(le);
			CU(ce);
			cudaError_t ie = cudaGraphInstantiate(&g->exec[s], graph, 0);
			cudaGraphDestroy(graph);
			CU(ie);
		}
		g->launch = rxg_launch_graph;
	} else if (p->launch == RXG_LAUNCH_PERSISTENT) {
		CU(cudaHostAlloc((void **)&g->bell, sizeof(rxg_bell), cudaHostAllocMapped));
		memset(g->bell, 0, sizeof(*g->bell));
		CU(cudaHostGetDevicePointer((void **)&g->d_bell, g->bell, 0));
		g->launch = rxg_launch_bell; // launches the kernel with the first batch
	}
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
	if (g->running) {
		// the resident kernel returns once it sees quit with every
		// posted batch done; bounded: a kernel that never returns is
		// reported, and everything it might touch is left allocated
		__atomic_store_n(&g->bell->quit, 1ull, __ATOMIC_RELEASE);
		if (rxg_resident_wait(g->stream) == cudaErrorNotReady) {
			rxg_stall_note("gpu_kernel: the persistent kernel did not return within %.0f s "
				       "of its quit (batches posted %llu, retired %llu)",
				       RXG_STALL_S,
				       (unsigned long long)__atomic_load_n(&g->bell->posted,
									   __ATOMIC_ACQUIRE),
				       (unsigned long long)g->tail);
			return;
		}
	}
	if (g->stream)
		cudaStreamSynchronize(g->stream);
	for (uint32_t s = 0; g->exec && s < g->p.depth; s++)
		if (g->exec[s])
			cudaGraphExecDestroy(g->exec[s]);
	free(g->exec);
	cudaFreeHost(g->bell);
	cudaFreeHost(g->slots);
	cudaFree(g->dev_slots);
	cudaFreeHost(g->snap);
	cudaFree(g->ctx.scratch);
	cudaFree(g->ctx.out);
	cudaFree(g->ctx.csum);
	if (g->stream)
		cudaStreamDestroy(g->stream);
	free(g->arg);
	free(g->n);
	free(g->nvtx);
	free(g);
}

extern "C" uint32_t rxg_inflight(const struct rxg_consumer *g)
{
	return (uint32_t)(g->head - g->tail);
}

extern "C" int rxg_submit(struct rxg_consumer *g, void *const *payloads, const uint64_t *seqs,
			  uint32_t n)
{
	if (n == 0 || n > g->p.max_batch)
		return -EINVAL;
	if (rxg_inflight(g) >= g->p.depth)
		return -EBUSY;
	uint64_t b = g->head + 1;
	uint32_t slot = (uint32_t)(g->head % g->p.depth);
	g->n[slot] = n;
	int rc = g->launch(g, payloads, seqs, n, slot, b);
	if (rc)
		return rc;
	g->nvtx[slot] = rxp_nvtx_range_start("gpu_kernel");
	g->head = b;
	return 0;
}

// Gaps and duplicates of a retired reorder batch, against what came before.
static void rxg_account_seq(rxg_consumer *g, const rxg_snap *b, uint32_t n)
{
	uint64_t span = b->max_seq - b->min_seq + 1;
	if (span > n)
		g->st.gaps += span - n;
	else if (span < n)
		g->st.dups += n - span;
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
	uint64_t b = g->tail + 1;
	uint32_t slot = (uint32_t)(g->tail % g->p.depth);
	rxg_snap *s = &g->snap[slot];
	double t0 = 0;
	// after a stall anywhere in the process nothing more is waited for
	if (block && rxg_stall() && __atomic_load_n(&s->batch, __ATOMIC_ACQUIRE) != b)
		return -ETIMEDOUT;
	for (uint32_t spin = 0;; spin++) {
		if (__atomic_load_n(&s->batch, __ATOMIC_ACQUIRE) == b)
			break;
		if (!block)
			return 0;
		if ((spin & 1023) == 1023) {
			// a kernel that faulted never writes its flag
			cudaError_t e = cudaStreamQuery(g->stream);
			if (e != cudaSuccess && e != cudaErrorNotReady)
				return -EIO;
			if (e == cudaSuccess && __atomic_load_n(&s->batch, __ATOMIC_ACQUIRE) != b)
				return -EIO;
			// no progress for RXG_STALL_S: say what was waited for
			if (!t0)
				t0 = rxg_now_s();
			else if (rxg_now_s() - t0 > RXG_STALL_S) {
				rxg_stall_note(
				    "gpu_kernel: batch %llu (slot %u, %u packets, launch %s, work %s) "
				    "not complete after %.0f s; waited for its flag in mapped "
				    "memory%s%llu), batches retired %llu",
				    (unsigned long long)b, slot, g->n[slot], rxg_launch_name(g->p.launch),
				    rxg_work_name(g->p.work), RXG_STALL_S,
				    g->bell ? " (doorbell posted " : " (submitted ",
				    g->bell ? __atomic_load_n(&g->bell->posted, __ATOMIC_ACQUIRE)
					    : (unsigned long long)g->head,
				    (unsigned long long)g->tail);
				return -ETIMEDOUT;
			}
		}
	}
	rxp_nvtx_range_end(g->nvtx[slot]);
	uint32_t n = g->n[slot];
	double ms = (double)s->ns / 1e6;
	g->st.batches++;
	g->st.packets += n;
	g->st.kernel_ms += ms;
	if (ms > g->st.max_batch_ms)
		g->st.max_batch_ms = ms;
	if (g->p.work == RXG_WORK_REORDER)
		rxg_account_seq(g, s, n);
	else if (g->p.work == RXG_WORK_CHECKSUM)
		g->st.checksum += s->csum;
	g->tail = b;
	return (int)n;
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
	return g->p.work == RXG_WORK_CHECKSUM ? (const void *)g->ctx.csum : g->ctx.out;
}
