/* SPDX-License-Identifier: MIT */
/*
 * The GPU consumer stage (engines/gpu): the kernels compute what they
 * claim on payloads in GPU memory, buffers are released only after their
 * kernel completed, and gaps are counted. Needs a CUDA device: skips
 * visibly without one (CI has the toolkit, no GPU).
 */
#include <criterion/criterion.h>
#include <cuda_runtime.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rxray/gpu.h"

#define PAY 96u
#define NPKT 256u

static void need_gpu(void)
{
	char why[160];
	if (!rxg_available(why, sizeof(why)))
		cr_skip_test("needs a CUDA GPU: %s", why);
}

/* NPKT payloads in device memory, payload i filled with bytes (i*7+j). */
static uint8_t *payloads(void *ptrs[NPKT], uint8_t *host)
{
	uint8_t *d = NULL;
	cr_assert_eq(cudaMalloc((void **)&d, NPKT * PAY), cudaSuccess);
	for (uint32_t i = 0; i < NPKT; i++)
		for (uint32_t j = 0; j < PAY; j++)
			host[i * PAY + j] = (uint8_t)(i * 7 + j);
	cr_assert_eq(cudaMemcpy(d, host, NPKT * PAY, cudaMemcpyHostToDevice), cudaSuccess);
	for (uint32_t i = 0; i < NPKT; i++)
		ptrs[i] = d + (size_t)i * PAY;
	return d;
}

static void reorder_in(enum rxg_launch launch)
{
	static uint8_t host[NPKT * PAY], out[NPKT * PAY];
	void *ptrs[NPKT];
	uint8_t *d = payloads(ptrs, host);
	struct rxg_params p = {RXG_WORK_REORDER, 128, 4, PAY, NPKT, 0, launch, 0};
	struct rxg_consumer *g = NULL;
	char err[256];
	cr_assert_eq(rxg_consumer_open(&p, &g, err, sizeof(err)), 0, "%s", err);
	/* batch 1: payload i carries seq (127 - i), reversed; batch 2: seqs
	 * 128..255 except 200 (a gap), payload 200's slot stays untouched */
	uint64_t seq[128];
	void *addr[128];
	for (uint32_t i = 0; i < 128; i++) {
		addr[i] = ptrs[i];
		seq[i] = 127 - i;
	}
	cr_assert_eq(rxg_submit(g, addr, seq, 128), 0);
	uint32_t n = 0;
	for (uint32_t i = 128; i < NPKT; i++) {
		if (i == 200)
			continue;
		addr[n] = ptrs[i];
		seq[n++] = i;
	}
	cr_assert_eq(rxg_submit(g, addr, seq, n), 0);
	cr_expect_eq(rxg_inflight(g), 2);
	cr_expect_eq(rxg_retire(g, true), 128);
	cr_expect_eq(rxg_retire(g, true), (int)n);
	cr_expect_eq(rxg_inflight(g), 0);
	struct rxg_stats st;
	rxg_consumer_stats(g, &st);
	cr_expect_eq(st.packets, 128 + n);
	cr_expect_eq(st.gaps, 1, "seq 200 is missing");
	cr_expect_eq(st.dups, 0);
	cr_expect_gt(st.kernel_ms, 0);
	cr_assert_eq(cudaMemcpy(out, rxg_consumer_output(g), sizeof(out), cudaMemcpyDeviceToHost),
		     cudaSuccess);
	/* slot s holds the payload whose seq is s: batch 1 reversed */
	cr_expect_eq(memcmp(out + 5 * PAY, host + 122 * PAY, PAY), 0);
	cr_expect_eq(memcmp(out + 127 * PAY, host + 0 * PAY, PAY), 0);
	cr_expect_eq(memcmp(out + 130 * PAY, host + 130 * PAY, PAY), 0);
	rxg_consumer_close(g);
	cudaFree(d);
}

Test(gpu_stage, reorder_places_by_sequence_and_counts_gaps, .timeout = 60)
{
	need_gpu();
	reorder_in(RXG_LAUNCH_KERNEL);
}

Test(gpu_stage, reorder_through_a_graph, .timeout = 60)
{
	need_gpu();
	reorder_in(RXG_LAUNCH_GRAPH);
}

Test(gpu_stage, reorder_through_the_persistent_kernel, .timeout = 60)
{
	need_gpu();
	reorder_in(RXG_LAUNCH_PERSISTENT);
}

/* The CPU's 16-bit ones' complement sum of len bytes (big-endian pairs). */
static uint32_t cpu_csum(const uint8_t *b, uint32_t len)
{
	uint32_t s = 0;
	for (uint32_t j = 0; j < len; j += 2) {
		uint32_t w = (uint32_t)b[j] << 8;
		if (j + 1 < len)
			w |= b[j + 1];
		s += w;
		s = (s & 0xffff) + (s >> 16);
	}
	return s & 0xffff;
}

/* Payloads at offsets 0..NPKT-1 bytes into a buffer (every alignment, odd
 * ones too), lengths PAY or odd: the GPU's sums equal the CPU's. */
static void checksum_in(enum rxg_launch launch, uint32_t len)
{
	static uint8_t host[NPKT * 2 + NPKT * PAY];
	size_t total = sizeof(host);
	for (size_t i = 0; i < total; i++)
		host[i] = (uint8_t)(i * 131 + (i >> 7));
	uint8_t *d = NULL;
	cr_assert_eq(cudaMalloc((void **)&d, total), cudaSuccess);
	cr_assert_eq(cudaMemcpy(d, host, total, cudaMemcpyHostToDevice), cudaSuccess);
	struct rxg_params p = {RXG_WORK_CHECKSUM, NPKT, 2, len, 0, 0, launch, 0};
	struct rxg_consumer *g = NULL;
	char err[256];
	cr_assert_eq(rxg_consumer_open(&p, &g, err, sizeof(err)), 0, "%s", err);
	void *ptrs[NPKT];
	uint64_t seq[NPKT], want = 0;
	uint32_t each[NPKT], got[NPKT];
	for (uint32_t i = 0; i < NPKT; i++) {
		size_t off = (size_t)i * (len + 1) % (total - len);
		ptrs[i] = d + off;
		seq[i] = i;
		each[i] = cpu_csum(host + off, len);
		want += each[i];
	}
	cr_assert_eq(rxg_submit(g, ptrs, seq, NPKT), 0);
	cr_expect_eq(rxg_retire(g, true), (int)NPKT);
	struct rxg_stats st;
	rxg_consumer_stats(g, &st);
	cr_expect_eq(st.checksum, want, "launch %s, %u B", rxg_launch_name(launch), len);
	cr_assert_eq(cudaMemcpy(got, rxg_consumer_output(g), sizeof(got), cudaMemcpyDeviceToHost),
		     cudaSuccess);
	for (uint32_t i = 0; i < NPKT; i++)
		cr_expect_eq(got[i], each[i], "packet %u at %p", i, ptrs[i]);
	rxg_consumer_close(g);
	cudaFree(d);
}

Test(gpu_stage, checksum_matches_the_cpu, .timeout = 60)
{
	need_gpu();
	checksum_in(RXG_LAUNCH_KERNEL, PAY);
	checksum_in(RXG_LAUNCH_KERNEL, 1001);
}

Test(gpu_stage, checksum_through_a_graph_and_the_persistent_kernel, .timeout = 60)
{
	need_gpu();
	checksum_in(RXG_LAUNCH_GRAPH, 1001);
	checksum_in(RXG_LAUNCH_PERSISTENT, 1001);
}

/* Many batches through each mode: every batch retires once, in order,
 * with its own packet count, and the sequence accounting sees no gap. */
Test(gpu_stage, batches_stream_through_every_mode, .timeout = 60)
{
	need_gpu();
	static uint8_t host[NPKT * PAY];
	void *ptrs[NPKT];
	uint8_t *d = payloads(ptrs, host);
	for (int m = RXG_LAUNCH_KERNEL; m <= RXG_LAUNCH_PERSISTENT; m++) {
		struct rxg_params p = {RXG_WORK_REORDER, 64, 8, PAY, 1024, 0, (enum rxg_launch)m, 0};
		struct rxg_consumer *g = NULL;
		char err[256];
		cr_assert_eq(rxg_consumer_open(&p, &g, err, sizeof(err)), 0, "%s", err);
		uint64_t seq[64], s = 0, retired = 0;
		for (uint32_t b = 0; b < 500; b++) {
			uint32_t n = 1 + b % 64;
			for (uint32_t k = 0; k < n; k++)
				seq[k] = s++;
			while (rxg_inflight(g) >= 8) {
				int r = rxg_retire(g, true);
				cr_assert_gt(r, 0);
				retired += (uint64_t)r;
			}
			cr_assert_eq(rxg_submit(g, ptrs, seq, n), 0);
			int r;
			while ((r = rxg_retire(g, false)) > 0)
				retired += (uint64_t)r;
			cr_assert_geq(r, 0);
		}
		int r;
		while ((r = rxg_retire(g, true)) > 0)
			retired += (uint64_t)r;
		struct rxg_stats st;
		rxg_consumer_stats(g, &st);
		cr_expect_eq(retired, s, "%s", rxg_launch_name((enum rxg_launch)m));
		cr_expect_eq(st.batches, 500);
		cr_expect_eq(st.packets, s);
		cr_expect_eq(st.gaps, 0);
		cr_expect_eq(st.dups, 0);
		rxg_consumer_close(g);
	}
	cudaFree(d);
}

/* The NIC's DMA engine: pieces of every alignment and length land at their
 * GPU addresses; tickets complete in order; a full ring refuses. Resident:
 * the kernel is parked before each synchronous copy, and a submit after a
 * park starts it again at the next ticket. */
static void dma_pieces_land(enum rxg_dma_mode mode)
{
	need_gpu();
	enum { BUF = 1 << 20 };
	uint8_t *d = NULL;
	static uint8_t want[BUF], got[BUF];
	cr_assert_eq(cudaMalloc((void **)&d, BUF), cudaSuccess);
	cr_assert_eq(cudaMemset(d, 0, BUF), cudaSuccess);
	memset(want, 0, BUF);
	struct rxg_dma *dma = NULL;
	char err[256];
	cr_assert_eq(rxg_dma_open(256, 64 * 1024, mode, &dma, err, sizeof(err)), 0, "%s", err);
	uint64_t off = 0, last = 0;
	for (uint32_t i = 0; i < 600; i++) {
		uint32_t len = 1 + (i * 977) % 3000;
		off += 1 + i % 37;
		if (off + len > BUF)
			off = i % 16;
		uint8_t *src;
		/* bounded: copies that stop landing fail the test at once */
		for (long spin = 0; !(src = rxg_dma_stage(dma, d + off, len)); spin++) {
			cr_assert_lt(spin, 50000000L, "piece %u: the ring stayed full (%s)", i,
				     rxg_stall() ? rxg_stall() : "no ticket landed");
			if (rxg_dma_pending(dma)) {
				int64_t t = rxg_dma_submit(dma);
				cr_assert_gt(t, (int64_t)last, "tickets increase");
				last = (uint64_t)t;
			}
			cr_assert_leq(rxg_dma_done(dma), last);
		}
		for (uint32_t j = 0; j < len; j++)
			want[off + j] = src[j] = (uint8_t)(i + j * 7);
		off += len;
		if (i % 5 == 4) {
			int64_t t = rxg_dma_submit(dma);
			cr_assert_gt(t, (int64_t)last);
			last = (uint64_t)t;
		}
	}
	cr_expect_eq(rxg_dma_submit(dma) >= 0, 1);
	cr_expect_eq(rxg_dma_drain(dma), 0);
	cr_expect_eq(rxg_dma_pending(dma), 0);
	cr_expect_geq(rxg_dma_done(dma), last);
	cr_expect_eq(rxg_dma_submit(dma), 0, "nothing staged: no ticket");
	cr_assert_eq(rxg_dma_park(dma), 0);
	cr_assert_eq(cudaMemcpy(got, d, BUF, cudaMemcpyDeviceToHost), cudaSuccess);
	for (size_t i = 0; i < BUF; i++)
		if (got[i] != want[i])
			cr_assert_fail("byte %zu: %u, want %u", i, got[i], want[i]);
	/* the synchronous form still works */
	uint8_t *src = rxg_dma_stage(dma, d + 3, 5);
	cr_assert_not_null(src);
	memcpy(src, "hello", 5);
	cr_expect_eq(rxg_dma_flush(dma), 0);
	cr_assert_eq(rxg_dma_park(dma), 0);
	cr_assert_eq(cudaMemcpy(got, d, 8, cudaMemcpyDeviceToHost), cudaSuccess);
	cr_expect_eq(memcmp(got + 3, "hello", 5), 0);
	rxg_dma_close(dma);
	cudaFree(d);
}

Test(gpu_stage, dma_pieces_land_where_they_were_sent_resident, .timeout = 60)
{
	dma_pieces_land(RXG_DMA_RESIDENT);
}

Test(gpu_stage, dma_pieces_land_where_they_were_sent_launch, .timeout = 60)
{
	dma_pieces_land(RXG_DMA_LAUNCH);
}

Test(gpu_stage, depth_bounds_batches_in_flight, .timeout = 60)
{
	need_gpu();
	static uint8_t host[NPKT * PAY];
	void *ptrs[NPKT];
	uint8_t *d = payloads(ptrs, host);
	struct rxg_params p = {RXG_WORK_NONE, 8, 2, PAY, 0, 0, RXG_LAUNCH_KERNEL, 0};
	struct rxg_consumer *g = NULL;
	char err[256];
	cr_assert_eq(rxg_consumer_open(&p, &g, err, sizeof(err)), 0, "%s", err);
	uint64_t seq[8] = {0};
	cr_expect_eq(rxg_submit(g, ptrs, seq, 8), 0);
	cr_expect_eq(rxg_submit(g, ptrs, seq, 8), 0);
	cr_expect_eq(rxg_submit(g, ptrs, seq, 8), -EBUSY, "two in flight at most");
	cr_expect_eq(rxg_submit(g, ptrs, seq, 9), -EINVAL);
	cr_expect_eq(rxg_retire(g, true), 8);
	cr_expect_eq(rxg_submit(g, ptrs, seq, 8), 0);
	rxg_consumer_close(g);
	cudaFree(d);
}

Test(gpu_stage, bad_parameters_are_refused, .timeout = 60)
{
	struct rxg_params p = {RXG_WORK_REORDER, 64, 4, 64, 1000, 0, RXG_LAUNCH_KERNEL, 0}; /* window not 2^k */
	struct rxg_consumer *g = NULL;
	char err[256] = "";
	cr_expect_eq(rxg_consumer_open(&p, &g, err, sizeof(err)), -EINVAL);
	cr_expect(strstr(err, "gpu-work:") == err, "%s", err);
	cr_expect_null(g);
	cr_expect_str_eq(rxg_work_name(RXG_WORK_CHECKSUM), "checksum");
	cr_expect_str_eq(rxg_launch_name(RXG_LAUNCH_PERSISTENT), "persistent");
	cr_expect_null(rxg_launch_name((enum rxg_launch)7));
	struct rxg_params k = {RXG_WORK_CHECKSUM, 2048, 4, 64, 0, 0, RXG_LAUNCH_KERNEL, 0};
	cr_expect_eq(rxg_consumer_open(&k, &g, err, sizeof(err)), -EINVAL,
		     "kernel mode carries at most 1024 packets in its parameters");
	cr_expect(strstr(err, "gpu-launch:") == err, "%s", err);
	k.launch = (enum rxg_launch)7;
	cr_expect_eq(rxg_consumer_open(&k, &g, err, sizeof(err)), -EINVAL);
}

/* Single-segment GPUDirect: the headers are in GPU memory, so the kernel
 * reads each sequence number from its packet (big-endian at seq_at). */
Test(gpu_stage, sequence_numbers_read_from_the_packets, .timeout = 60)
{
	need_gpu();
	enum { N = 64, FR = 200, AT = 42 };
	static uint8_t host[N * FR], out[N * 208];
	uint8_t *d = NULL;
	cr_assert_eq(cudaMalloc((void **)&d, sizeof(host)), cudaSuccess);
	void *addr[N];
	for (uint32_t i = 0; i < N; i++) {
		uint8_t *f = host + i * FR;
		for (uint32_t j = 0; j < FR; j++)
			f[j] = (uint8_t)(i + 3 * j);
		/* packet i carries seq 1000 + (N - 1 - i), but seq 1010 is missing
		 * and 1011 appears twice */
		uint64_t s = 1000 + (N - 1 - i);
		if (s == 1010)
			s = 1011;
		for (int b = 0; b < 8; b++)
			f[AT + b] = (uint8_t)(s >> (56 - 8 * b));
		addr[i] = d + (size_t)i * FR;
	}
	cr_assert_eq(cudaMemcpy(d, host, sizeof(host), cudaMemcpyHostToDevice), cudaSuccess);
	for (int m = RXG_LAUNCH_KERNEL; m <= RXG_LAUNCH_PERSISTENT; m++) {
		struct rxg_params p = {RXG_WORK_REORDER, N, 2, FR, 64, 0, (enum rxg_launch)m, AT};
		struct rxg_consumer *g = NULL;
		char err[256];
		cr_assert_eq(rxg_consumer_open(&p, &g, err, sizeof(err)), 0, "%s", err);
		cr_assert_eq(rxg_submit(g, addr, NULL, N), 0);
		cr_expect_eq(rxg_retire(g, true), N);
		struct rxg_stats st;
		rxg_consumer_stats(g, &st);
		cr_expect_eq(st.gaps + st.dups, 0, "the span is N with N packets: %s",
			     rxg_launch_name((enum rxg_launch)m));
		cr_assert_eq(cudaMemcpy(out, rxg_consumer_output(g), sizeof(out),
					cudaMemcpyDeviceToHost),
			     cudaSuccess);
		/* slot (seq mod 64), stride 208 (200 rounded up to 16) */
		uint32_t i5 = N - 1 - 5; /* carries seq 1005: slot 1005 % 64 = 45 */
		cr_expect_eq(memcmp(out + (1005 % 64) * 208, host + i5 * FR, FR), 0);
		rxg_consumer_close(g);
	}
	cudaFree(d);
}
