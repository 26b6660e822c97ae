/* A small CUDA program for the injection test: memset, copies both ways and
 * two NVTX ranges. Exit 3 when no GPU is usable (the test then skips). */
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
	int n = 0;
	if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
		fprintf(stderr, "no CUDA device\n");
		return 3;
	}
	size_t bytes = 1 << 20;
	void *d = NULL;
	char *h = malloc(bytes);
	if (!h || cudaMalloc(&d, bytes) != cudaSuccess)
		return 1;
	memset(h, 7, bytes);
	nvtxRangePushA("rxray-smoke-copy");
	for (int i = 0; i < 4; i++) {
		cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice);
		cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost);
	}
	nvtxRangePop();
	nvtxRangePushA("rxray-smoke-memset");
	cudaMemset(d, 0, bytes);
	cudaDeviceSynchronize();
	nvtxRangePop();
	cudaFree(d);
	free(h);
	return 0;
}
