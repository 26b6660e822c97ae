/* SPDX-License-Identifier: MIT */
/*
 * librxray_cupti.so: a CUDA injection library. The CUDA driver loads the
 * library named by CUDA_INJECTION64_PATH at cuInit and calls its exported
 * InitializeInjection(); from there we subscribe to CUPTI activity
 * records: kernels, memcpy, memset and NVTX markers. At exit the records are
 * written as a Chrome trace-event JSON (opens in Perfetto) to
 * $RXRAY_CUPTI_OUT (default rxray-cupti.json), with a summary object
 * "rxray" {"schema": "rxray.cupti/1", counts and GPU busy time}.
 *
 * Records are copied into a bounded array under a mutex in the buffer
 * completion callback (CUPTI's own thread); past the bound they are
 * counted as dropped, never lost silently.
 *
 * Timestamps are CLOCK_MONOTONIC nanoseconds (a CUPTI timestamp callback;
 * where CUPTI lacks it, an offset measured at take time), so the measured
 * process can put GPU records on its own clock: rxc_cupti_take (see
 * rxray/cupti.h) hands the newest kernel/copy/memset records to the rxray
 * run, which stores them in its result for `rxray flame --format trace`.
 * NVTX ranges: point NVTX_INJECTION64_PATH at this library too. NVTX then
 * calls our InitializeInjectionNvtx2, which hands NVTX to the libcupti
 * this library was loaded with: the copy whose MARKER activity we enabled.
 * Naming a libcupti file directly works only when the dynamic loader
 * resolves it to that same copy; another file (a bundle's copy of
 * libcupti beside /usr/local/cuda's) is a second copy, with its own state
 * and no activity enabled, and its ranges are never recorded. At start-up
 * the library says so on stderr. (Or point it at librxray_nvtx.so, our
 * own listener, which needs no GPU.)
 */
#include <cupti.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "rxray/cupti.h"

#include "json_out.h"

#define CUPTI_BUF_SIZE (1u << 20)
#define CUPTI_MAX_EVENTS (1u << 18)
#define CUPTI_NAME_MAX 96

enum ev_kind { EV_KERNEL, EV_MEMCPY, EV_MEMSET, EV_RANGE };

struct ev {
	enum ev_kind kind;
	uint64_t start, end; /* ns, CUPTI timestamps */
	uint64_t bytes;
	uint32_t stream, id;
	char name[CUPTI_NAME_MAX];
};

/* Open NVTX ranges: START records wait here for their END. */
struct open_range {
	uint32_t id;
	uint64_t start;
	char name[CUPTI_NAME_MAX];
};

static struct {
	pthread_mutex_t lock;
	struct ev *ev;
	size_t nev, dropped;
	struct open_range open[256];
	size_t nopen;
	uint64_t cupti_dropped;
	int ready;
} st = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void CUPTIAPI buf_requested(uint8_t **buf, size_t *size, size_t *max_records)
{
	*buf = aligned_alloc(8, CUPTI_BUF_SIZE);
	*size = *buf ? CUPTI_BUF_SIZE : 0;
	*max_records = 0;
}

static struct ev *ev_push(enum ev_kind k)
{
	if (st.nev >= CUPTI_MAX_EVENTS) {
		st.dropped++;
		return NULL;
	}
	struct ev *e = &st.ev[st.nev++];
	memset(e, 0, sizeof(*e));
	e->kind = k;
	return e;
}

/* A GPU operation's event: its span on one stream, correlation id and bytes (0: none). */
static struct ev *ev_push_op(enum ev_kind k, uint64_t start, uint64_t end, uint32_t stream,
			     uint32_t id, uint64_t bytes)
{
	struct ev *e = ev_push(k);
	if (e) {
		e->start = start;
		e->end = end;
		e->stream = stream;
		e->id = id;
		e->bytes = bytes;
	}
	return e;
}

static void copy_name(char *dst, const char *src)
{
	snprintf(dst, CUPTI_NAME_MAX, "%s", src ? src : "?");
}

static void on_marker(const CUpti_ActivityMarker2 *m)
{
	if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
		if (st.nopen < sizeof(st.open) / sizeof(st.open[0])) {
			struct open_range *o = &st.open[st.nopen++];
			o->id = m->id;
			o->start = m->timestamp;
			copy_name(o->name, m->name);
		} else {
			st.dropped++;
		}
		return;
	}
	if (!(m->flags & CUPTI_ACTIVITY_FLAG_MARKER_END))
		return;
	for (size_t i = 0; i < st.nopen; i++) {
		if (st.open[i].id != m->id)
			continue;
		struct ev *e = ev_push(EV_RANGE);
		if (e) {
			e->start = st.open[i].start;
			e->end = m->timestamp;
			e->id = m->id;
			memcpy(e->name, st.open[i].name, CUPTI_NAME_MAX);
		}
		st.open[i] = st.open[--st.nopen];
		return;
	}
}

static void on_record(const CUpti_Activity *r)
{
	struct ev *e;
	switch (r->kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
	case CUPTI_ACTIVITY_KIND_KERNEL: {
		const CUpti_ActivityKernel10 *k = (const void *)r;
		e = ev_push_op(EV_KERNEL, k->start, k->end, k->streamId, k->correlationId, 0);
		if (e)
			copy_name(e->name, k->name);
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMCPY: {
		const CUpti_ActivityMemcpy6 *m = (const void *)r;
		e = ev_push_op(EV_MEMCPY, m->start, m->end, m->streamId, m->correlationId,
			       m->bytes);
		if (e) {
			unsigned ck = (unsigned)m->copyKind;
			const char *dir = ck == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD   ? "HtoD"
					  : ck == CUPTI_ACTIVITY_MEMCPY_KIND_DTOH ? "DtoH"
					  : ck == CUPTI_ACTIVITY_MEMCPY_KIND_DTOD ? "DtoD"
										  : NULL;
			if (dir)
				snprintf(e->name, CUPTI_NAME_MAX, "memcpy %s", dir);
			else
				snprintf(e->name, CUPTI_NAME_MAX, "memcpy kind %u", ck);
		}
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMSET: {
		const CUpti_ActivityMemset4 *m = (const void *)r;
		e = ev_push_op(EV_MEMSET, m->start, m->end, m->streamId, m->correlationId,
			       m->bytes);
		if (e)
			copy_name(e->name, "memset");
		break;
	}
	case CUPTI_ACTIVITY_KIND_MARKER:
		on_marker((const void *)r);
		break;
	default:
		break;
	}
}

static void CUPTIAPI buf_completed(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size,
				   size_t valid)
{
	(void)ctx;
	(void)size;
	CUpti_Activity *r = NULL;
	pthread_mutex_lock(&st.lock);
	while (cuptiActivityGetNextRecord(buf, valid, &r) == CUPTI_SUCCESS)
		on_record(r);
	size_t dropped = 0;
	if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS)
		st.cupti_dropped += dropped;
	pthread_mutex_unlock(&st.lock);
	free(buf);
}

static const char *const kind_name[] = {"kernel", "memcpy", "memset", "nvtx"};

static int write_trace(const char *path)
{
	char tmp[4096];
	FILE *f = rxc_inj_tmp_open(path, tmp, sizeof(tmp));
	if (!f)
		return -errno;
	uint64_t t0 = UINT64_MAX, busy[4] = {0}, count[4] = {0};
	for (size_t i = 0; i < st.nev; i++)
		if (st.ev[i].start < t0)
			t0 = st.ev[i].start;
	fprintf(f, "{\"traceEvents\":[\n");
	for (size_t i = 0; i < st.nev; i++) {
		const struct ev *e = &st.ev[i];
		uint64_t dur = e->end > e->start ? e->end - e->start : 0;
		busy[e->kind] += dur;
		count[e->kind]++;
		fprintf(f, "%s{\"ph\":\"X\",\"cat\":\"%s\",\"name\":", i ? ",\n" : "",
			kind_name[e->kind]);
		rxc_inj_json_str(f, e->name);
		fprintf(f, ",\"pid\":\"gpu\",\"tid\":\"%s %u\",\"ts\":%.3f,\"dur\":%.3f,"
			   "\"args\":{\"bytes\":%llu,\"correlation\":%u}}",
			e->kind == EV_RANGE ? "nvtx" : "stream", e->kind == EV_RANGE ? 0 : e->stream,
			(double)(e->start - t0) / 1e3, (double)dur / 1e3, (unsigned long long)e->bytes,
			e->id);
	}
	fprintf(f, "\n],\"displayTimeUnit\":\"ns\",\"rxray\":{\"schema\":\"rxray.cupti/1\"");
	for (int k = 0; k < 4; k++)
		fprintf(f, ",\"%s\":{\"count\":%llu,\"busy_ns\":%llu}", kind_name[k],
			(unsigned long long)count[k], (unsigned long long)busy[k]);
	fprintf(f, ",\"dropped\":%llu,\"open_ranges\":%zu}}\n",
		(unsigned long long)(st.dropped + st.cupti_dropped), st.nopen);
	return rxc_inj_tmp_commit(f, tmp, path);
}

static void at_exit(void)
{
	if (!st.ready)
		return;
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	const char *out = getenv("RXRAY_CUPTI_OUT");
	pthread_mutex_lock(&st.lock);
	int rc = write_trace(out && *out ? out : "rxray-cupti.json");
	pthread_mutex_unlock(&st.lock);
	if (rc)
		fprintf(stderr, "rxray-cupti: cannot write trace: %s\n", strerror(-rc));
}

static uint64_t CUPTIAPI mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int ts_mono; /* CUPTI timestamps are mono_ns() already */

__attribute__((visibility("default"))) size_t rxc_cupti_take(struct rxc_cupti_rec *out,
								size_t max, uint64_t *dropped);

size_t rxc_cupti_take(struct rxc_cupti_rec *out, size_t max, uint64_t *dropped)
{
	if (!st.ready)
		return 0;
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	/* CUPTI's clock minus ours, when it is not ours (0 when it is) */
	int64_t off = 0;
	uint64_t cts = 0;
	if (!ts_mono && cuptiGetTimestamp(&cts) == CUPTI_SUCCESS)
		off = (int64_t)(cts - mono_ns());
	pthread_mutex_lock(&st.lock);
	size_t n = 0, first = st.nev;
	/* newest first back to max records, then copied oldest first */
	while (first > 0 && n < max)
		if (st.ev[--first].kind != EV_RANGE)
			n++;
	size_t k = 0;
	for (size_t i = first; i < st.nev && k < n; i++) {
		const struct ev *e = &st.ev[i];
		if (e->kind == EV_RANGE)
			continue;
		struct rxc_cupti_rec *o = &out[k++];
		o->start_ns = (uint64_t)((int64_t)e->start - off);
		o->end_ns = (uint64_t)((int64_t)e->end - off);
		o->bytes = e->bytes;
		o->stream = e->stream;
		o->correlation = e->id;
		o->kind = e->kind == EV_KERNEL ? RXC_CUPTI_KERNEL
			  : e->kind == EV_MEMCPY ? RXC_CUPTI_MEMCPY
						 : RXC_CUPTI_MEMSET;
		snprintf(o->name, sizeof(o->name), "%s", e->name);
	}
	if (dropped)
		*dropped = st.dropped + st.cupti_dropped;
	pthread_mutex_unlock(&st.lock);
	return k;
}

/* The path of the libcupti this library uses (its cuptiActivityEnable). */
static const char *our_libcupti(void)
{
	Dl_info di;
	void *fn = (void *)(uintptr_t)cuptiActivityEnable;
	return dladdr(fn, &di) && di.dli_fname ? di.dli_fname : NULL;
}

/* Whether two paths name one file (symbolic links followed). */
static int same_file(const char *a, const char *b)
{
	struct stat x, y;
	return a && b && stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev &&
	       x.st_ino == y.st_ino;
}

/* Say on stderr when NVTX ranges cannot reach the MARKER records. */
static void nvtx_diagnose(void)
{
	const char *nv = getenv("NVTX_INJECTION64_PATH");
	const char *ours = our_libcupti();
	Dl_info self;
	const char *me = dladdr((void *)(uintptr_t)nvtx_diagnose, &self) ? self.dli_fname : NULL;
	if (!nv || !*nv) {
		fprintf(stderr, "rxray-cupti: NVTX_INJECTION64_PATH is not set: no NVTX ranges "
				"(set it to %s)\n",
			me ? me : "librxray_cupti.so");
		return;
	}
	if (same_file(nv, me) || same_file(nv, ours))
		return;
	if (strstr(nv, "cupti") && !strstr(nv, "rxray"))
		fprintf(stderr,
			"rxray-cupti: NVTX_INJECTION64_PATH=%s is not the libcupti this library "
			"uses (%s): NVTX would load a second copy with no activity enabled and "
			"its ranges would be lost; set it to %s\n",
			nv, ours ? ours : "?", me ? me : "librxray_cupti.so");
}

__attribute__((visibility("default"))) int InitializeInjection(void);

static int inject_init(void)
{
	if (st.ready)
		return 1;
	st.ev = calloc(CUPTI_MAX_EVENTS, sizeof(*st.ev));
	if (!st.ev)
		return 0;
	/* before any kind is enabled, so every record uses it */
	ts_mono = cuptiActivityRegisterTimestampCallback(mono_ns) == CUPTI_SUCCESS;
	if (cuptiActivityRegisterCallbacks(buf_requested, buf_completed) != CUPTI_SUCCESS) {
		fprintf(stderr, "rxray-cupti: failed to register activity callbacks\n");
		return 0;
	}
	const CUpti_ActivityKind kinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
					    CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
					    CUPTI_ACTIVITY_KIND_MARKER};
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (cuptiActivityEnable(kinds[i]) != CUPTI_SUCCESS)
			fprintf(stderr, "rxray-cupti: activity kind %d not available\n", (int)kinds[i]);
	st.ready = 1;
	atexit(at_exit);
	nvtx_diagnose();
	return 1;
}

int InitializeInjection(void)
{
	return inject_init();
}

/* NVTX's entry point (NVTX_INJECTION64_PATH naming this library): the
 * activity set up first (NVTX may come before the first CUDA call), then
 * NVTX handed to our libcupti's own handler, so its MARKER records land
 * in the buffers registered above. Returns what that handler returns
 * (non-zero: NVTX keeps the tool). */
typedef int (*nvtx_init_fn)(const void *(*get_export_table)(uint32_t));
__attribute__((visibility("default"))) int
InitializeInjectionNvtx2(const void *(*get_export_table)(uint32_t));

int InitializeInjectionNvtx2(const void *(*get_export_table)(uint32_t))
{
	if (!inject_init())
		return 0;
	const char *ours = our_libcupti();
	void *h = ours ? dlopen(ours, RTLD_NOW | RTLD_NOLOAD) : NULL;
	nvtx_init_fn fn = h ? (nvtx_init_fn)(uintptr_t)dlsym(h, "InitializeInjectionNvtx2") : NULL;
	if (!fn) {
		fprintf(stderr, "rxray-cupti: %s has no InitializeInjectionNvtx2: no NVTX ranges\n",
			ours ? ours : "libcupti");
		if (h)
			dlclose(h);
		return 0;
	}
	/* the handle stays open: NVTX calls into that library from now on */
	return fn(get_export_table);
}
