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

Test(gpu_stage, reorder_places_by_sequence_and_counts_gaps)
{
	need_gpu();
	static uint8_t host[NPKT * PAY], out[NPKT * PAY];
	void *ptrs[NPKT];
	uint8_t *d = payloads(ptrs, host);
	struct rxg_params p = {RXG_WORK_REORDER, 128, 4, PAY, NPKT, 0};
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

Test(gpu_stage, checksum_matches_the_cpu)
{
	need_gpu();
	static uint8_t host[NPKT * PAY];
	void *ptrs[NPKT];
	uint8_t *d = payloads(ptrs, host);
	struct rxg_params p = {RXG_WORK_CHECKSUM, NPKT, 2, PAY, 0, 0};
	struct rxg_consumer *g = NULL;
	char err[256];
	cr_assert_eq(rxg_consumer_open(&p, &g, err, sizeof(err)), 0, "%s", err);
	uint64_t seq[NPKT], want = 0;
	for (uint32_t i = 0; i < NPKT; i++) {
		seq[i] = i;
		uint32_t s = 0;
		for (uint32_t j = 0; j < PAY; j += 2) {
			s += (uint32_t)host[i * PAY + j] << 8 | host[i * PAY + j + 1];
			s = (s & 0xffff) + (s >> 16);
		}
		want += s & 0xffff;
	}
	cr_assert_eq(rxg_submit(g, ptrs, seq, NPKT), 0);
	cr_expect_eq(rxg_retire(g, true), (int)NPKT);
	struct rxg_stats st;
	rxg_consumer_stats(g, &st);
	cr_expect_eq(st.checksum, want);
	rxg_consumer_close(g);
	cudaFree(d);
}

Test(gpu_stage, depth_bounds_batches_in_flight)
{
	need_gpu();
	static uint8_t host[NPKT * PAY];
	void *ptrs[NPKT];
	uint8_t *d = payloads(ptrs, host);
	struct rxg_params p = {RXG_WORK_NONE, 8, 2, PAY, 0, 0};
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

Test(gpu_stage, bad_parameters_are_refused)
{
	struct rxg_params p = {RXG_WORK_REORDER, 64, 4, 64, 1000, 0}; /* window not 2^k */
	struct rxg_consumer *g = NULL;
	char err[256] = "";
	cr_expect_eq(rxg_consumer_open(&p, &g, err, sizeof(err)), -EINVAL);
	cr_expect(strstr(err, "gpu-work:") == err, "%s", err);
	cr_expect_null(g);
	cr_expect_str_eq(rxg_work_name(RXG_WORK_CHECKSUM), "checksum");
}
