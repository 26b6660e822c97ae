/* SPDX-License-Identifier: MIT */
/*
 * librxray_nvtx.so: an NVTX tool. NVTX (header-only nvtx3) loads the
 * library named by NVTX_INJECTION64_PATH at a process's first NVTX call
 * and calls its InitializeInjectionNvtx2(); there we take over the push,
 * pop, start and end entry points of the core and domain modules. No GPU
 * and no CUDA library is needed, so it is the listener rxray's tests and
 * bench/probe_cost attach anywhere (CUPTI's NVTX capture needs a driver).
 *
 * Each range becomes a record {name, domain, thread, depth, parent, start,
 * end, payload} in a bounded array (past RXC_NVTX_MAX_RANGES they are
 * counted as dropped, never lost silently); a per-thread stack gives the
 * nesting. At exit the records are written to $RXRAY_NVTX_OUT (default
 * rxray-nvtx.json): {"schema": "rxray.nvtx/1", "clock": "monotonic_ns",
 * "ranges": [...], "dropped", "open"}, through a temp file and a rename.
 */
#include <nvtx3/nvToolsExt.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "json_out.h"

#define RXC_NVTX_MAX_RANGES (1u << 20)
#define RXC_NVTX_MAX_NAMES 1024
#define RXC_NVTX_MAX_DEPTH 64

struct rec {
	uint64_t start, end; /* CLOCK_MONOTONIC ns; end 0 = never closed */
	uint64_t payload;
	int32_t parent;      /* index of the enclosing push range or -1 */
	uint32_t tid;
	uint16_t name, domain;
	uint8_t depth, has_payload, pushed;
};

/* A domain or registered-string handle points at one of these. */
struct handle {
	uint16_t name;
};

static struct {
	pthread_mutex_t lock; /* names and handles */
	char *names[RXC_NVTX_MAX_NAMES];
	unsigned nnames;
	struct rec *rec;
	atomic_uint nrec;
	atomic_ulong dropped;
} L = {.lock = PTHREAD_MUTEX_INITIALIZER};

static _Thread_local struct {
	int32_t stack[RXC_NVTX_MAX_DEPTH];
	unsigned depth; /* may exceed RXC_NVTX_MAX_DEPTH: counted, not stored */
	uint32_t tid;
} T;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Index of name in the table (added when new); 0 ("?") when full. */
static uint16_t intern(const char *s)
{
	if (!s)
		return 0;
	pthread_mutex_lock(&L.lock);
	unsigned i;
	for (i = 0; i < L.nnames; i++)
		if (!strcmp(L.names[i], s))
			break;
	if (i == L.nnames) {
		char *d = i < RXC_NVTX_MAX_NAMES ? strdup(s) : NULL;
		if (d)
			L.names[L.nnames++] = d;
		else
			i = 0;
	}
	pthread_mutex_unlock(&L.lock);
	return (uint16_t)i;
}

static struct handle *handle_new(const char *s)
{
	struct handle *h = malloc(sizeof(*h)); /* lives as long as the process */
	if (h)
		h->name = intern(s);
	return h;
}

static uint16_t attr_name(const nvtxEventAttributes_t *a)
{
	if (!a)
		return 0;
	if (a->messageType == NVTX_MESSAGE_TYPE_ASCII)
		return intern(a->message.ascii);
	if (a->messageType == NVTX_MESSAGE_TYPE_REGISTERED && a->message.registered)
		return ((const struct handle *)a->message.registered)->name;
	return 0;
}

/* A new record, or -1 when the array is full (counted). */
static int32_t rec_new(uint16_t name, uint16_t domain, const nvtxEventAttributes_t *a)
{
	unsigned i = atomic_fetch_add(&L.nrec, 1);
	if (!L.rec || i >= RXC_NVTX_MAX_RANGES) {
		atomic_store(&L.nrec, RXC_NVTX_MAX_RANGES);
		atomic_fetch_add(&L.dropped, 1);
		return -1;
	}
	if (!T.tid)
		T.tid = (uint32_t)gettid();
	struct rec *r = &L.rec[i];
	r->name = name;
	r->domain = domain;
	r->tid = T.tid;
	r->depth = (uint8_t)(T.depth < 255 ? T.depth : 255);
	r->parent = T.depth && T.depth <= RXC_NVTX_MAX_DEPTH ? T.stack[T.depth - 1] : -1;
	if (a && a->payloadType == NVTX_PAYLOAD_TYPE_UNSIGNED_INT64) {
		r->payload = a->payload.ullValue;
		r->has_payload = 1;
	}
	r->start = now_ns();
	return (int32_t)i;
}

static int push(uint16_t name, uint16_t domain, const nvtxEventAttributes_t *a)
{
	int32_t i = rec_new(name, domain, a);
	if (i >= 0)
		L.rec[i].pushed = 1;
	if (T.depth < RXC_NVTX_MAX_DEPTH)
		T.stack[T.depth] = i;
	return (int)T.depth++;
}

static int pop(void)
{
	uint64_t t = now_ns();
	if (!T.depth)
		return -1;
	T.depth--;
	if (T.depth < RXC_NVTX_MAX_DEPTH && T.stack[T.depth] >= 0)
		L.rec[T.stack[T.depth]].end = t;
	return (int)T.depth;
}

static uint64_t start(uint16_t name, uint16_t domain, const nvtxEventAttributes_t *a)
{
	int32_t i = rec_new(name, domain, a);
	return i < 0 ? 0 : (uint64_t)i + 1;
}

static void end(uint64_t id)
{
	uint64_t t = now_ns();
	if (id && id <= RXC_NVTX_MAX_RANGES)
		L.rec[id - 1].end = t;
}

/* ----------------------------------------------------- the entry points */

static uint16_t dom_name(nvtxDomainHandle_t d)
{
	return d ? ((const struct handle *)d)->name : 0;
}

static int NVTX_API core_push_ex(const nvtxEventAttributes_t *a)
{
	return push(attr_name(a), 0, a);
}

static int NVTX_API core_push_a(const char *m)
{
	return push(intern(m), 0, NULL);
}

static int NVTX_API core_pop(void)
{
	return pop();
}

static nvtxRangeId_t NVTX_API core_start_ex(const nvtxEventAttributes_t *a)
{
	return start(attr_name(a), 0, a);
}

static nvtxRangeId_t NVTX_API core_start_a(const char *m)
{
	return start(intern(m), 0, NULL);
}

static void NVTX_API core_end(nvtxRangeId_t id)
{
	end(id);
}

static int NVTX_API dom_push(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	return push(attr_name(a), dom_name(d), a);
}

static int NVTX_API dom_pop(nvtxDomainHandle_t d)
{
	(void)d;
	return pop();
}

static nvtxRangeId_t NVTX_API dom_start(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	return start(attr_name(a), dom_name(d), a);
}

static void NVTX_API dom_end(nvtxDomainHandle_t d, nvtxRangeId_t id)
{
	(void)d;
	end(id);
}

static nvtxDomainHandle_t NVTX_API dom_create(const char *name)
{
	return (nvtxDomainHandle_t)handle_new(name);
}

static nvtxStringHandle_t NVTX_API dom_string(nvtxDomainHandle_t d, const char *s)
{
	(void)d;
	return (nvtxStringHandle_t)handle_new(s);
}

/* ---------------------------------------------------------------- output */

static int write_out(const char *path)
{
	char tmp[4096];
	FILE *f = rxc_inj_tmp_open(path, tmp, sizeof(tmp));
	if (!f)
		return -errno;
	unsigned n = atomic_load(&L.nrec);
	if (n > RXC_NVTX_MAX_RANGES)
		n = RXC_NVTX_MAX_RANGES;
	unsigned open = 0;
	fprintf(f, "{\"schema\":\"rxray.nvtx/1\",\"clock\":\"monotonic_ns\",\"ranges\":[\n");
	for (unsigned i = 0; i < n; i++) {
		const struct rec *r = &L.rec[i];
		open += !r->end;
		fprintf(f, "%s{\"name\":", i ? ",\n" : "");
		rxc_inj_json_str(f, L.names[r->name]);
		fprintf(f, ",\"domain\":");
		rxc_inj_json_str(f, L.names[r->domain]);
		fprintf(f, ",\"tid\":%u,\"depth\":%u,\"parent\":%d,\"kind\":\"%s\",\"start_ns\":%llu,"
			   "\"end_ns\":%llu",
			r->tid, r->depth, r->parent, r->pushed ? "push" : "start",
			(unsigned long long)r->start, (unsigned long long)r->end);
		if (r->has_payload)
			fprintf(f, ",\"payload\":%llu", (unsigned long long)r->payload);
		fputc('}', f);
	}
	fprintf(f, "\n],\"dropped\":%lu,\"open\":%u}\n", atomic_load(&L.dropped), open);
	return rxc_inj_tmp_commit(f, tmp, path);
}

static void at_exit(void)
{
	const char *out = getenv("RXRAY_NVTX_OUT");
	int rc = write_out(out && *out ? out : "rxray-nvtx.json");
	if (rc)
		fprintf(stderr, "rxray-nvtx: cannot write ranges: %s\n", strerror(-rc));
}

struct hook {
	unsigned id; /* NVTX_CBID_* of the module */
	NvtxFunctionPointer fn;
};

/* Points the module's slots at our hooks; false when NVTX has no such module. */
static bool hooks_set(const NvtxExportTableCallbacks *cb, NvtxCallbackModule mod,
		      const struct hook *h, size_t n)
{
	NvtxFunctionTable t = NULL;
	unsigned size = 0;
	if (!cb->GetModuleFunctionTable(mod, &t, &size))
		return false;
	for (size_t i = 0; i < n; i++)
		if (t && h[i].id < size && t[h[i].id])
			*t[h[i].id] = h[i].fn;
	return true;
}

__attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get);

int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get)
{
	const NvtxExportTableCallbacks *cb = get ? get(NVTX_ETID_CALLBACKS) : NULL;
	if (!cb)
		return 0;
	L.rec = calloc(RXC_NVTX_MAX_RANGES, sizeof(*L.rec));
	if (!L.rec)
		return 0;
	L.names[0] = "?"; /* unnamed; also the default domain */
	L.nnames = 1;
	static const struct hook core[] = {
	    {NVTX_CBID_CORE_RangePushEx, (NvtxFunctionPointer)core_push_ex},
	    {NVTX_CBID_CORE_RangePushA, (NvtxFunctionPointer)core_push_a},
	    {NVTX_CBID_CORE_RangePop, (NvtxFunctionPointer)core_pop},
	    {NVTX_CBID_CORE_RangeStartEx, (NvtxFunctionPointer)core_start_ex},
	    {NVTX_CBID_CORE_RangeStartA, (NvtxFunctionPointer)core_start_a},
	    {NVTX_CBID_CORE_RangeEnd, (NvtxFunctionPointer)core_end},
	};
	static const struct hook core2[] = {
	    {NVTX_CBID_CORE2_DomainRangePushEx, (NvtxFunctionPointer)dom_push},
	    {NVTX_CBID_CORE2_DomainRangePop, (NvtxFunctionPointer)dom_pop},
	    {NVTX_CBID_CORE2_DomainRangeStartEx, (NvtxFunctionPointer)dom_start},
	    {NVTX_CBID_CORE2_DomainRangeEnd, (NvtxFunctionPointer)dom_end},
	    {NVTX_CBID_CORE2_DomainCreateA, (NvtxFunctionPointer)dom_create},
	    {NVTX_CBID_CORE2_DomainRegisterStringA, (NvtxFunctionPointer)dom_string},
	};
	if (!hooks_set(cb, NVTX_CB_MODULE_CORE, core, sizeof(core) / sizeof(core[0])) ||
	    !hooks_set(cb, NVTX_CB_MODULE_CORE2, core2, sizeof(core2) / sizeof(core2[0])))
		return 0;
	atexit(at_exit);
	return 1;
}
