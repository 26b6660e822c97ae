/* SPDX-License-Identifier: MIT */
/*
 * The BPF side's user half: load attach.bpf.o through its skeleton, open
 * one sampling perf event per CPU, attach through BPF links (closing the
 * link and the event detaches; nothing is pinned), walk the count map.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "attach.skel.h"
#include "attach_bpf.h"
#include "rxray/attach.h"

struct rxb_uprobe_slot {
	char path[256];
	uint64_t off;
	struct bpf_link *entry, *ret;
};

/* dwarf mode: unwound stacks counted in user space, in a fixed table */
struct raw_entry {
	uint64_t hash;
	uint32_t tid;
	int32_t kern_stack;
	uint32_t n;
	uint64_t count;
	uint64_t *ips; /* n, owned */
};

#define RAW_SLOTS (2 * RXB_BPF_MAX_KEYS) /* open addressing, at most half full */

struct rxb_sampler {
	struct rxb_attach_bpf *skel;
	enum rxb_stack_mode mode;
	rxb_unwind_fn unwind;
	void *unwind_ctx;
	struct ring_buffer *rb;
	struct raw_entry *raw; /* RAW_SLOTS, dwarf mode */
	size_t nraw;
	uint64_t raw_dropped;
	uint64_t raw_cut; /* unwinding needed more stack than was copied */
	uint64_t ips[RXB_BPF_STACK_DEPTH];
	int ncpus;
	int nfds;     /* slots in pfds/links: CPUs or target threads */
	bool per_thread;
	unsigned stack_bytes;
	int *pfds;
	struct bpf_link **links;
	char event[16];
	unsigned nevents;
	int pid;
	int nup;
	struct rxb_uprobe_slot up[RXB_ATTACH_MAX_UPROBES];
};

_Static_assert(RXB_ATTACH_MAX_UPROBES == RXB_BPF_MAX_UPROBES, "uprobe table sizes");
_Static_assert(RXB_ATTACH_MAX_THREADS == RXB_BPF_MAX_TIDS, "tid table sizes");
_Static_assert(RXB_ATTACH_MAX_STACKS == RXB_BPF_MAX_KEYS, "count map sizes");

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	/* libbpf's warnings would break the one-line error rule; debug via env */
	if (getenv("RXRAY_BPF_DEBUG"))
		return vfprintf(stderr, fmt, ap);
	return 0;
}

static int perf_open(struct perf_event_attr *a, int tid, int cpu)
{
	return (int)syscall(__NR_perf_event_open, a, tid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/*
 * Hardware cycles where a PMU exists, else the cpu-clock software event;
 * one event per target thread (it follows the thread across CPUs, and no
 * other CPU is interrupted) or one per CPU.
 */
static int events_open(struct rxb_sampler *s, const struct rxb_attach_target *t, unsigned freq,
		       bool disabled, char *err, size_t errlen)
{
	struct perf_event_attr a = {
		.size = sizeof(a),
		.type = PERF_TYPE_HARDWARE,
		.config = PERF_COUNT_HW_CPU_CYCLES,
		.freq = 1,
		.sample_freq = freq,
		.disabled = disabled,
	};
	bool hw = true;

	for (int i = 0; i < s->nfds; i++) {
		int tid = s->per_thread ? t->threads[i].tid : -1, cpu = s->per_thread ? -1 : i;
		int fd = perf_open(&a, tid, cpu);
		if (fd < 0 && hw && i == 0 && (errno == ENOENT || errno == EOPNOTSUPP ||
						errno == ENODEV || errno == EINVAL)) {
			hw = false;
			a.type = PERF_TYPE_SOFTWARE;
			a.config = PERF_COUNT_SW_CPU_CLOCK;
			fd = perf_open(&a, tid, cpu);
		}
		if (fd < 0) {
			if (!s->per_thread && errno == ENODEV) /* offline CPU */
				continue;
			if (s->per_thread && errno == ESRCH) /* the thread ended */
				continue;
			if (s->per_thread)
				snprintf(err, errlen, "failed to open perf event on thread %d: %s", tid,
					 strerror(errno));
			else
				snprintf(err, errlen, "failed to open perf event on CPU %d: %s", cpu,
					 strerror(errno));
			return -errno;
		}
		s->pfds[i] = fd;
		s->nevents++;
	}
	if (!s->nevents) {
		snprintf(err, errlen, "failed to open perf events: the target threads ended");
		return -ESRCH;
	}
	snprintf(s->event, sizeof(s->event), "%s", hw ? "cycles" : "cpu-clock");
	return 0;
}

static uint64_t raw_hash(uint32_t tid, int32_t ks, const uint64_t *ips, size_t n)
{
	uint64_t h = 1469598103934665603ull ^ ((uint64_t)tid << 32 | (uint32_t)ks);
	for (size_t i = 0; i < n; i++)
		h = (h ^ ips[i]) * 1099511628211ull;
	return h ? h : 1;
}

static int raw_count(struct rxb_sampler *s, uint32_t tid, int32_t ks, const uint64_t *ips,
		     size_t n)
{
	uint64_t h = raw_hash(tid, ks, ips, n);
	size_t j = h & (RAW_SLOTS - 1);

	for (;; j = (j + 1) & (RAW_SLOTS - 1)) {
		struct raw_entry *e = &s->raw[j];
		if (!e->hash)
			break;
		if (e->hash == h && e->tid == tid && e->kern_stack == ks && e->n == n &&
		    !memcmp(e->ips, ips, n * sizeof(*ips))) {
			e->count++;
			return 0;
		}
	}
	if (s->nraw == RXB_BPF_MAX_KEYS) { /* bounded, like the kernel's map */
		s->raw_dropped++;
		return 0;
	}
	struct raw_entry *e = &s->raw[j];
	e->ips = malloc(n ? n * sizeof(*ips) : 1);
	if (!e->ips) {
		s->raw_dropped++;
		return 0;
	}
	memcpy(e->ips, ips, n * sizeof(*ips));
	e->hash = h;
	e->tid = tid;
	e->kern_stack = ks;
	e->n = (uint32_t)n;
	e->count = 1;
	s->nraw++;
	return 0;
}

static int raw_on_sample(void *ctx, void *data, size_t size)
{
	struct rxb_sampler *s = ctx;
	const struct rxb_bpf_raw_sample *e = data;
	size_t n = 0;
	bool cut = false;

	if (size < sizeof(*e))
		return 0;
	if (e->stack_len)
		n = s->unwind(s->unwind_ctx, e->tid, (const uint64_t *)e->regs, e->stack,
			      e->stack_len, s->ips, RXB_BPF_STACK_DEPTH, &cut);
	s->raw_cut += cut;
	if (!n) { /* at least the leaf */
		s->ips[0] = e->regs[16];
		n = 1;
	}
	return raw_count(s, e->tid, e->kern_stack, s->ips, n);
}

int rxb_sampler_open(const struct rxb_sampler_opts *o, struct rxb_sampler **out, char *err,
		     size_t errlen)
{
	struct rxb_sampler *s = calloc(1, sizeof(*s));
	const struct rxb_attach_target *t = o->target;
	int rc = 0;

	*out = NULL;
	libbpf_set_print(libbpf_quiet);
	if (!s) {
		rc = -ENOMEM;
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	s->ncpus = libbpf_num_possible_cpus();
	if (s->ncpus <= 0) {
		rc = s->ncpus ? s->ncpus : -ENOENT;
		snprintf(err, errlen, "failed to count CPUs");
		goto fail;
	}
	if (o->scope == RXB_SCOPE_THREADS && t->whole) {
		rc = -EINVAL;
		snprintf(err, errlen, "per-thread events need --lcore or --tid");
		goto fail;
	}
	s->per_thread = o->scope == RXB_SCOPE_THREADS || (o->scope == RXB_SCOPE_AUTO && !t->whole);
	s->nfds = s->per_thread ? (int)t->nthreads : s->ncpus;
	s->stack_bytes = o->stack_bytes ? o->stack_bytes : RXB_BPF_STACK_COPY;
	if (s->stack_bytes < 512 || s->stack_bytes > RXB_BPF_STACK_COPY || s->stack_bytes % 512) {
		rc = -EINVAL;
		snprintf(err, errlen, "stack bytes %u: not 512..%d in steps of 512", s->stack_bytes,
			 RXB_BPF_STACK_COPY);
		goto fail;
	}
	s->pfds = malloc(sizeof(int) * (size_t)s->nfds);
	s->links = calloc((size_t)s->nfds, sizeof(*s->links));
	if (!s->pfds || !s->links) {
		rc = -ENOMEM;
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	for (int i = 0; i < s->nfds; i++)
		s->pfds[i] = -1;

	s->skel = rxb_attach_bpf__open();
	if (!s->skel) {
		rc = -errno;
		snprintf(err, errlen, "failed to open BPF object: %s", strerror(errno));
		goto fail;
	}
	s->pid = t->pid;
	s->skel->rodata->target_tgid = (__u32)t->pid;
	s->skel->rodata->filter_tids = !t->whole;
	s->skel->rodata->stack_copy = s->stack_bytes;
	s->mode = o->mode;
	s->unwind = o->unwind;
	s->unwind_ctx = o->unwind_ctx;
	struct bpf_program *raw = bpf_object__find_program_by_name(s->skel->obj, "rxb_sample_raw");
	if (s->mode == RXB_STACKS_DWARF && (!raw || !s->unwind)) {
		rc = -EOPNOTSUPP;
		snprintf(err, errlen, "--stacks dwarf: not supported on this architecture");
		goto fail;
	}
	if (s->mode == RXB_STACKS_FP) {
		if (raw)
			bpf_program__set_autoload(raw, false);
		/* the ring is dwarf mode's; keep it at one page otherwise */
		bpf_map__set_max_entries(s->skel->maps.raw_samples, (__u32)sysconf(_SC_PAGESIZE));
	}
	rc = rxb_attach_bpf__load(s->skel);
	if (rc) {
		snprintf(err, errlen, "failed to load BPF object: %s", strerror(-rc));
		goto fail;
	}
	if (!t->whole) {
		for (size_t i = 0; i < t->nthreads; i++) {
			__u32 tid = (__u32)t->threads[i].tid;
			__u8 one = 1;
			if (bpf_map__update_elem(s->skel->maps.tids, &tid, sizeof(tid), &one,
						 sizeof(one), BPF_ANY)) {
				rc = -errno;
				snprintf(err, errlen, "failed to fill tid filter: %s", strerror(errno));
				goto fail;
			}
		}
	}
	if (s->mode == RXB_STACKS_DWARF) {
		s->raw = calloc(RAW_SLOTS, sizeof(*s->raw));
		s->rb = s->raw ? ring_buffer__new(bpf_map__fd(s->skel->maps.raw_samples),
						  raw_on_sample, s, NULL)
			       : NULL;
		if (!s->rb) {
			rc = s->raw ? -errno : -ENOMEM;
			snprintf(err, errlen, "failed to set up the sample ring: %s", strerror(-rc));
			goto fail;
		}
	}
	rc = events_open(s, t, o->freq_hz, o->start_disabled, err, errlen);
	if (rc)
		goto fail;
	for (int i = 0; i < s->nfds; i++) {
		if (s->pfds[i] < 0)
			continue;
		/* a BPF link owned by this process's fd: it goes with the fd */
		s->links[i] = bpf_program__attach_perf_event(
			s->mode == RXB_STACKS_DWARF ? raw : s->skel->progs.rxb_sample, s->pfds[i]);
		if (!s->links[i]) {
			rc = -errno;
			snprintf(err, errlen, "failed to attach to perf event %d: %s", i,
				 strerror(errno));
			goto fail;
		}
	}
	*out = s;
	return 0;
fail:
	rxb_sampler_close(s);
	return rc < 0 ? rc : -EIO;
}

int rxb_sampler_enable(struct rxb_sampler *s)
{
	for (int i = 0; i < s->nfds; i++)
		if (s->pfds[i] >= 0 && ioctl(s->pfds[i], PERF_EVENT_IOC_ENABLE, 0))
			return -errno;
	return 0;
}

const char *rxb_sampler_event(const struct rxb_sampler *s)
{
	return s->event;
}

int rxb_sampler_poll(struct rxb_sampler *s, int ms)
{
	int rc;

	/*
	 * dwarf mode: samples are submitted without a wakeup (a wakeup is an
	 * irq_work on the sampled CPU, per sample); the ring is drained here
	 * every 10 ms, well before it can fill (about 1000 samples).
	 */
	while (ms > 0) {
		int slice = s->rb && ms > 10 ? 10 : ms;
		struct timespec ts = {.tv_sec = slice / 1000,
				      .tv_nsec = (long)(slice % 1000) * 1000000};
		if (nanosleep(&ts, NULL) && errno == EINTR)
			ms = 0; /* a signal: return early */
		else
			ms -= slice;
		if (s->rb) {
			rc = ring_buffer__consume(s->rb);
			if (rc < 0 && rc != -EINTR)
				return rc;
		}
	}
	return 0;
}

void rxb_sampler_stop(struct rxb_sampler *s)
{
	for (int i = 0; i < s->nfds; i++) {
		bpf_link__destroy(s->links[i]);
		s->links[i] = NULL;
		if (s->pfds[i] >= 0)
			close(s->pfds[i]);
		s->pfds[i] = -1;
	}
	if (s->rb)
		ring_buffer__consume(s->rb);
}

void rxb_sampler_stats(const struct rxb_sampler *s, struct rxb_sampler_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->samples = s->skel->bss->samples;
	st->dropped = s->skel->bss->dropped + s->raw_dropped;
	st->stack_errors = s->skel->bss->stack_errors;
	st->ncpus = s->nevents;
	st->per_thread = s->per_thread;
	st->stack_bytes = s->mode == RXB_STACKS_DWARF ? s->stack_bytes : 0;
	st->stacks_cut = s->raw_cut;
}

static size_t stack_read(int fd, __s32 id, __u64 *ips)
{
	size_t n = 0;

	if (id < 0 || bpf_map_lookup_elem(fd, &id, ips))
		return 0;
	while (n < RXB_BPF_STACK_DEPTH && ips[n])
		n++;
	return n;
}

int rxb_sampler_foreach(struct rxb_sampler *s, rxb_stack_fn fn, void *ctx)
{
	int cfd = bpf_map__fd(s->skel->maps.counts);
	int sfd = bpf_map__fd(s->skel->maps.stacks);
	struct rxb_bpf_key key, next;
	__u64 uip[RXB_BPF_STACK_DEPTH], kip[RXB_BPF_STACK_DEPTH], count;
	void *prev = NULL;
	int rc;

	if (s->mode == RXB_STACKS_DWARF) {
		for (size_t j = 0; j < RAW_SLOTS; j++) {
			const struct raw_entry *e = &s->raw[j];
			if (!e->hash)
				continue;
			size_t nk = stack_read(sfd, e->kern_stack, kip);
			rc = fn(ctx, e->tid, e->ips, e->n, (const uint64_t *)kip, nk, e->count);
			if (rc)
				return rc;
		}
		return 0;
	}
	while (!bpf_map_get_next_key(cfd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(cfd, &key, &count))
			continue;
		size_t nu = stack_read(sfd, key.user_stack, uip);
		size_t nk = stack_read(sfd, key.kern_stack, kip);
		rc = fn(ctx, key.tid, (const uint64_t *)uip, nu, (const uint64_t *)kip, nk, count);
		if (rc)
			return rc;
	}
	return errno == ENOENT || !errno ? 0 : -errno;
}

int rxb_sampler_uprobe_add(struct rxb_sampler *s, const char *path, uint64_t off)
{
	if (s->nup == RXB_ATTACH_MAX_UPROBES)
		return -ENOSPC;
	snprintf(s->up[s->nup].path, sizeof(s->up[0].path), "%s", path);
	s->up[s->nup].off = off;
	return s->nup++;
}

static void uprobes_detach(struct rxb_sampler *s)
{
	for (int i = 0; i < s->nup; i++) {
		bpf_link__destroy(s->up[i].entry);
		bpf_link__destroy(s->up[i].ret);
		s->up[i].entry = s->up[i].ret = NULL;
	}
}

int rxb_sampler_uprobes_set(struct rxb_sampler *s, bool on)
{
	if (!on) {
		uprobes_detach(s);
		return 0;
	}
	/*
	 * Without the kernel's uprobe PMU libbpf would fall back to tracefs
	 * uprobe_events, which outlive a killed rxray; with it, every uprobe
	 * is a perf event fd + BPF link owned by this process.
	 */
	if (s->nup && access("/sys/bus/event_source/devices/uprobe/type", R_OK))
		return -EOPNOTSUPP;
	for (int i = 0; i < s->nup; i++) {
		struct rxb_uprobe_slot *u = &s->up[i];
		LIBBPF_OPTS(bpf_uprobe_opts, eo, .bpf_cookie = (__u64)i);
		LIBBPF_OPTS(bpf_uprobe_opts, ro, .bpf_cookie = (__u64)i, .retprobe = true);
		if (u->entry)
			continue;
		u->entry = bpf_program__attach_uprobe_opts(s->skel->progs.rxb_uprobe_entry,
							   s->pid, u->path, u->off, &eo);
		if (u->entry)
			u->ret = bpf_program__attach_uprobe_opts(s->skel->progs.rxb_uprobe_return,
								 s->pid, u->path, u->off, &ro);
		if (!u->entry || !u->ret) {
			int rc = -errno;
			uprobes_detach(s);
			return rc;
		}
	}
	return 0;
}

int rxb_sampler_uprobe_stat(struct rxb_sampler *s, int slot, struct rxb_uprobe_stat *st)
{
	struct rxb_bpf_uprobe_stat v;
	__u32 k = (__u32)slot;

	if (slot < 0 || slot >= s->nup)
		return -EINVAL;
	if (bpf_map__lookup_elem(s->skel->maps.ustats, &k, sizeof(k), &v, sizeof(v), 0))
		return -errno;
	st->calls = v.calls;
	st->returns = v.returns;
	st->ret_sum = v.ret_sum;
	st->ret_zero = v.ret_zero;
	return 0;
}

void rxb_sampler_close(struct rxb_sampler *s)
{
	if (!s)
		return;
	if (s->links && s->pfds)
		rxb_sampler_stop(s);
	if (s->skel)
		uprobes_detach(s);
	ring_buffer__free(s->rb);
	rxb_attach_bpf__destroy(s->skel);
	if (s->raw)
		for (size_t j = 0; j < RAW_SLOTS; j++)
			free(s->raw[j].ips);
	free(s->raw);
	free(s->links);
	free(s->pfds);
	free(s);
}
