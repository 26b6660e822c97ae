/* SPDX-License-Identifier: MIT */
/*
 * rx_mem: the memory a run's buffers live in. GPU memory goes through the
 * CUDA runtime loaded with dlopen, so the library builds and runs on hosts
 * without CUDA and says so clearly when asked for GPU memory there.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "rxray/core.h"
#include "rxray/util.h"

/* one error line (rxu_errf) */
#define merr(err, errlen, ...) ((void)rxu_errf(err, errlen, 0, __VA_ARGS__))

/* Default huge page size from /proc/meminfo (bytes), 2 MiB if unknown. */
static size_t mem_hugepage_size(void)
{
	size_t kb = 0;
	char line[128];
	FILE *f = fopen("/proc/meminfo", "r");
	if (!f)
		return 2u << 20;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Hugepagesize: %zu kB", &kb) == 1)
			break;
	fclose(f);
	return kb ? kb * 1024 : 2u << 20;
}

struct mem_cuda {
	void *lib;
	int (*get_count)(int *);
	int (*malloc_fn)(void **, size_t);
	int (*free_fn)(void *);
};

static int mem_gpu_alloc(struct rx_mem *m, size_t len, char *err, size_t errlen)
{
	static const char *const names[] = {"libcudart.so", "libcudart.so.12", "libcudart.so.11.0"};
	struct mem_cuda *cu = calloc(1, sizeof(*cu));
	int rc = -ENODEV, count = 0;
	if (!cu) {
		merr(err, errlen, "payload-mem: gpu: out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && !cu->lib; i++)
		cu->lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
	if (!cu->lib) {
		merr(err, errlen, "payload-mem: gpu: no CUDA runtime (libcudart.so not found)");
		goto fail;
	}
	*(void **)&cu->get_count = dlsym(cu->lib, "cudaGetDeviceCount");
	*(void **)&cu->malloc_fn = dlsym(cu->lib, "cudaMalloc");
	*(void **)&cu->free_fn = dlsym(cu->lib, "cudaFree");
	if (!cu->get_count || !cu->malloc_fn || !cu->free_fn) {
		merr(err, errlen, "payload-mem: gpu: CUDA runtime lacks cudaMalloc/cudaFree");
		goto fail;
	}
	if (cu->get_count(&count) != 0 || count <= 0) {
		merr(err, errlen, "payload-mem: gpu: no CUDA device");
		goto fail;
	}
	if (cu->malloc_fn(&m->addr, len) != 0 || !m->addr) {
		merr(err, errlen, "payload-mem: gpu: cudaMalloc of %zu bytes failed", len);
		rc = -ENOMEM;
		goto fail;
	}
	m->len = len;
	m->page_size = 64u << 10;
	m->priv = cu;
	return 0;
fail:
	if (cu->lib)
		dlclose(cu->lib);
	free(cu);
	m->addr = NULL;
	return rc;
}

int rx_mem_alloc(struct rx_mem *m, enum rx_mem_kind kind, size_t len, char *err, size_t errlen)
{
	memset(m, 0, sizeof(*m));
	m->kind = kind;
	if (len == 0) {
		merr(err, errlen, "payload-mem: zero-length region");
		return -EINVAL;
	}
	if (kind == RX_MEM_GPU)
		return mem_gpu_alloc(m, len, err, errlen);
	int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE;
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	if (kind == RX_MEM_HUGE) {
		pg = mem_hugepage_size();
		flags |= MAP_HUGETLB;
	}
	size_t maplen = (len + pg - 1) / pg * pg;
	void *p = mmap(NULL, maplen, PROT_READ | PROT_WRITE, flags, -1, 0);
	if (p == MAP_FAILED) {
		int e = errno;
		if (kind == RX_MEM_HUGE)
			merr(err, errlen,
			     "payload-mem: huge: cannot map %zu bytes of %zu kB hugepages: %s (reserve some: echo N > /proc/sys/vm/nr_hugepages)",
			     maplen, pg >> 10, strerror(e));
		else
			merr(err, errlen, "payload-mem: host: cannot map %zu bytes: %s", maplen,
			     strerror(e));
		return -e;
	}
	/* Touch every page: the run must not pay first-touch faults. */
	for (size_t off = 0; off < maplen; off += pg)
		((volatile char *)p)[off] = 0;
	m->addr = p;
	m->len = maplen;
	m->page_size = pg;
	return 0;
}

void rx_mem_free(struct rx_mem *m)
{
	if (!m || !m->addr) {
		if (m)
			memset(m, 0, sizeof(*m));
		return;
	}
	if (m->kind == RX_MEM_GPU) {
		struct mem_cuda *cu = m->priv;
		if (cu) {
			cu->free_fn(m->addr);
			dlclose(cu->lib);
			free(cu);
		}
	} else {
		munmap(m->addr, m->len);
	}
	memset(m, 0, sizeof(*m));
}

bool rx_mem_cpu_visible(enum rx_mem_kind kind)
{
	return kind != RX_MEM_GPU;
}
