// SPDX-License-Identifier: MIT
// Shared by engines/gpu's CUDA files: the error line, the CUDA-call check,
// and the warp copy both the NIC's DMA and the reorder kernel use.
#ifndef RXG_GPU_INT_CUH
#define RXG_GPU_INT_CUH

#include <cuda_runtime.h>
#include <stdint.h>
#include <stddef.h>
#include <time.h>

#include "rxray/gpu.h"
#include "rxray/util.h" // rxu_errf: the error line every room writes

// In a function with `int rc`, `char *err, size_t errlen` and a fail label.
#define CU(call)                                                                             \
	do {                                                                                 \
		cudaError_t e_ = (call);                                                     \
		if (e_ != cudaSuccess) {                                                     \
			rc = rxu_errf(err, errlen, -EIO, "gpu: %s: %s", #call,                \
				     cudaGetErrorString(e_));                                \
			goto fail;                                                           \
		}                                                                            \
	} while (0)

// How long a GPU kernel or copy may make no progress before the wait on
// it gives up and says what it waited for (rxg_stall_note).
#define RXG_STALL_S 2.0

// Every kernel of dma.cu loaded (rxg_dma_preload): before any resident one.
extern "C" cudaError_t rxg_dma_preload(void);

// Monotonic seconds (the bounds of the GPU waits).
static inline double rxg_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

// Wait for a resident kernel on stream st to return after its quit,
// polling, RXG_STALL_S at most: its stream's state (cudaSuccess, an
// error), or cudaErrorNotReady when it did not return in time.
static inline cudaError_t rxg_resident_wait(cudaStream_t st)
{
	const double t0 = rxg_now_s();
	cudaError_t e;
	while ((e = cudaStreamQuery(st)) == cudaErrorNotReady && rxg_now_s() - t0 <= RXG_STALL_S) {
		struct timespec ts = {0, 100000};
		nanosleep(&ts, NULL);
	}
	return e;
}

// A load from src: cached (CV false), or fetched again every time (CV
// true: host memory that the CPU rewrites while a resident kernel reads it).
template <bool CV, typename T> __device__ static inline T rxg_ld(const T *p)
{
	if (CV)
		return __ldcv(p);
	return *p;
}

// A warp copies len bytes: 16-byte loads and stores when both ends share
// their offset mod 16 (bytes up to the first boundary, then vectors, four
// in flight per lane before the first store), words or bytes otherwise.
template <bool CV = false>
__device__ static inline void rxg_warp_copy(uint8_t *dst, const uint8_t *src, uint32_t len,
					    unsigned lane)
{
	uintptr_t mis = ((uintptr_t)dst ^ (uintptr_t)src);
	if ((mis & 15) == 0) {
		uint32_t head = (uint32_t)((16 - ((uintptr_t)dst & 15)) & 15);
		if (head > len)
			head = len;
		if (lane < head)
			dst[lane] = rxg_ld<CV>(src + lane);
		dst += head;
		src += head;
		len -= head;
		const uint4 *s = (const uint4 *)src;
		uint4 *d = (uint4 *)dst;
		uint32_t nv = len / 16;
		uint32_t i = lane;
		for (; i + 96 < nv; i += 128) {
			uint4 a = rxg_ld<CV>(s + i), b = rxg_ld<CV>(s + i + 32), c = rxg_ld<CV>(s + i + 64),
			      e = rxg_ld<CV>(s + i + 96);
			d[i] = a;
			d[i + 32] = b;
			d[i + 64] = c;
			d[i + 96] = e;
		}
		// the rest (under 2 KiB): its loads all issued before a store,
		// so a piece read over PCIe costs one round trip, not one per
		// 512 bytes
		if (i < nv) {
			bool hb = i + 32 < nv, hc = i + 64 < nv;
			uint4 a = rxg_ld<CV>(s + i), b = a, c = a;
			if (hb)
				b = rxg_ld<CV>(s + i + 32);
			if (hc)
				c = rxg_ld<CV>(s + i + 64);
			d[i] = a;
			if (hb)
				d[i + 32] = b;
			if (hc)
				d[i + 64] = c;
		}
		for (uint32_t j = nv * 16 + lane; j < len; j += 32)
			dst[j] = rxg_ld<CV>(src + j);
	} else if ((mis & 3) == 0) {
		uint32_t head = (uint32_t)((4 - ((uintptr_t)dst & 3)) & 3);
		if (head > len)
			head = len;
		if (lane < head)
			dst[lane] = rxg_ld<CV>(src + lane);
		dst += head;
		src += head;
		len -= head;
		const uint32_t *s = (const uint32_t *)src;
		uint32_t *d = (uint32_t *)dst;
		for (uint32_t i = lane; i < len / 4; i += 32)
			d[i] = rxg_ld<CV>(s + i);
		for (uint32_t j = len / 4 * 4 + lane; j < len; j += 32)
			dst[j] = rxg_ld<CV>(src + j);
	} else {
		for (uint32_t j = lane; j < len; j += 32)
			dst[j] = rxg_ld<CV>(src + j);
	}
}

#endif
