/* SPDX-License-Identifier: MIT */
/*
 * rxray run --sample (rxray/lapsplit.h): attach's sampler on this
 * process's own rx threads, and the classifier that turns each sampled
 * stack into a part of the cqe_poll lap. The session reads as: open
 * (privileges -> threads -> symbols -> sampler, its events disabled ->
 * drain thread) before the ports start; start enables the events once
 * they did; stop joins the drain thread, reads the DPDK tables (the ports
 * still run) and closes the events; fold symbolises every counted stack
 * and classifies it.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "rxray/lapsplit.h"
#include "rxray/util.h"

/* ---------------------------------------------------------- classifier */

const char *rxb_lappart_kind_name(enum rxb_lappart_kind k)
{
	static const char *const names[] = {"rx_burst", "mempool_get", "mempool_put",
					    "mempool",	"replenish",   "callee",
					    "kernel",	"lap_site",    "other"};
	_Static_assert(sizeof(names) / sizeof(names[0]) == RXB_PART_NKINDS, "kind names");
	return (unsigned)k < RXB_PART_NKINDS ? names[k] : NULL;
}

void rxb_lapsplit_init(struct rxb_lapsplit *sp)
{
	memset(sp, 0, sizeof(*sp));
}

static bool frame_is_mempool(const struct rxb_lapframe *f)
{
	const char *dso = f->dso ? f->dso : "";
	return f->role == RXB_ROLE_MP_GET || f->role == RXB_ROLE_MP_PUT ||
	       f->role == RXB_ROLE_MP_OTHER || strstr(dso, "mempool") ||
	       strstr(f->name, "mempool") || !strncmp(f->name, "rte_ring", 8) ||
	       !strncmp(f->name, "common_ring", 11);
}

/* A PMD's buffer refill, by the names DPDK's drivers give it. */
static bool frame_is_replenish(const struct rxb_lapframe *f)
{
	static const char *const words[] = {"replenish", "refill", "rearm", "alloc_bufs"};
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strcasestr(f->name, words[i]))
			return true;
	return false;
}

static void part_count(struct rxb_lapsplit *sp, const char *name, enum rxb_lappart_kind kind,
		       uint64_t count)
{
	size_t i;
	for (i = 0; i < sp->nparts; i++)
		if (sp->parts[i].kind == kind && !strcmp(sp->parts[i].name, name))
			break;
	if (i == sp->nparts) {
		/* the last slot holds everything beyond the table */
		if (i >= RXB_LAPSPLIT_MAX_PARTS - 1) {
			name = "(other functions)";
			kind = RXB_PART_REST;
			for (i = 0; i < sp->nparts; i++)
				if (sp->parts[i].kind == RXB_PART_REST)
					break;
		}
		if (i == sp->nparts) {
			snprintf(sp->parts[i].name, sizeof(sp->parts[i].name), "%s", name);
			sp->parts[i].kind = kind;
			sp->parts[i].samples = 0;
			sp->nparts++;
		}
	}
	sp->parts[i].samples += count;
}

/* Count name in a small table; false when it is full (the name is then not
 * kept: one function per port driver competes, more are not named). */
static bool name_count(struct rxb_lapname *t, size_t *n, size_t cap, const char *name,
		       uint64_t count)
{
	size_t i;
	for (i = 0; i < *n; i++)
		if (!strcmp(t[i].name, name))
			break;
	if (i == *n) {
		if (i == cap)
			return false;
		snprintf(t[i].name, sizeof(t[i].name), "%s", name);
		t[i].samples = 0;
		(*n)++;
	}
	t[i].samples += count;
	return true;
}

static const char *name_top(const struct rxb_lapname *t, size_t n)
{
	size_t best = 0;
	for (size_t j = 1; j < n; j++)
		if (t[j].samples > t[best].samples)
			best = j;
	return n ? t[best].name : "";
}

#define NAMES_CAP(t) (sizeof(t) / sizeof((t)[0]))

/* The innermost user frame with the rx burst role, or n. */
static size_t burst_index(const struct rxb_lapframe *f, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!f[i].kernel && f[i].role == RXB_ROLE_RX_BURST)
			return i;
	return n;
}

/* The kernel part of a sample taken in the kernel: its outermost kernel
 * frame (the entry: an interrupt, a fault, a system call). */
static const char *kernel_entry(const struct rxb_lapframe *f, size_t n)
{
	size_t k = 0;
	while (k + 1 < n && f[k + 1].kernel)
		k++;
	return f[k].name;
}

void rxb_lapsplit_learn(struct rxb_lapsplit *sp, const struct rxb_lapframe *f, size_t n,
			uint64_t count)
{
	size_t b = burst_index(f, n);
	if (b + 1 < n)
		name_count(sp->sites, &sp->nsites, NAMES_CAP(sp->sites), f[b + 1].name, count);
	if (b + 2 < n)
		name_count(sp->loops, &sp->nloops, NAMES_CAP(sp->loops), f[b + 2].name, count);
}

static bool name_in(const struct rxb_lapname *t, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(t[i].name, name))
			return true;
	return false;
}

static bool is_site(const struct rxb_lapsplit *sp, const char *name)
{
	return name_in(sp->sites, sp->nsites, name);
}

/* Whether a stack outside the lap reached the rx loop: one that did not
 * (cut short, or unwound astray) might have been in the lap. */
static bool reached_loop(const struct rxb_lapsplit *sp, const struct rxb_lapframe *f, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!f[i].kernel && name_in(sp->loops, sp->nloops, f[i].name))
			return true;
	return false;
}

void rxb_lapsplit_add(struct rxb_lapsplit *sp, const struct rxb_lapframe *f, size_t n,
		      uint64_t count)
{
	size_t b = burst_index(f, n), k, hit = n;

	sp->samples += count;
	if (b == n) {
		/* in the lap site's own code (rte_eth_rx_burst's inline part
		 * around the call, the lap's clock read), or another stage */
		for (k = 0; k < n && f[k].kernel; k++)
			;
		if (k == n || !is_site(sp, f[k].name)) {
			if (sp->nloops && !reached_loop(sp, f, n))
				sp->unplaced += count;
			return;
		}
		sp->at_site += count;
		part_count(sp, k ? kernel_entry(f, n) : f[k].name,
			   k ? RXB_PART_KERNEL : RXB_PART_LAP_SITE, count);
		return;
	}
	sp->in_burst += count;
	if (name_count(sp->bursts, &sp->nbursts, NAMES_CAP(sp->bursts), f[b].name, count))
		snprintf(sp->burst_fn, sizeof(sp->burst_fn), "%s",
			 name_top(sp->bursts, sp->nbursts));
	if (f[0].kernel) {
		part_count(sp, kernel_entry(f, n), RXB_PART_KERNEL, count);
		return;
	}
	/* a mempool ops entry inside the burst says get or put */
	for (k = 0; k < b && hit == n; k++)
		if (f[k].role == RXB_ROLE_MP_GET || f[k].role == RXB_ROLE_MP_PUT ||
		    f[k].role == RXB_ROLE_MP_OTHER)
			hit = k;
	if (hit < n) {
		enum rxb_lappart_kind kind = f[hit].role == RXB_ROLE_MP_GET   ? RXB_PART_MP_GET
					     : f[hit].role == RXB_ROLE_MP_PUT ? RXB_PART_MP_PUT
									      : RXB_PART_MEMPOOL;
		part_count(sp, f[hit].name, kind, count);
		return;
	}
	/* mempool code below a refill is the mempool's time; the refill's own
	 * (inlined allocations included) is the replenish part */
	for (k = 0; k < b; k++)
		if (frame_is_mempool(&f[k])) {
			part_count(sp, f[k].name, RXB_PART_MEMPOOL, count);
			return;
		}
	for (k = 0; k < b; k++)
		if (frame_is_replenish(&f[k])) {
			part_count(sp, f[k].name, RXB_PART_REPLENISH, count);
			return;
		}
	part_count(sp, f[0].name, b == 0 ? RXB_PART_RX_BURST : RXB_PART_CALLEE, count);
}

static int part_cmp(const void *a, const void *b)
{
	const struct rxb_lappart *x = a, *y = b;
	if (x->samples != y->samples)
		return x->samples < y->samples ? 1 : -1;
	return strcmp(x->name, y->name);
}

void rxb_lapsplit_sort(struct rxb_lapsplit *sp)
{
	if (sp->nparts > 1)
		qsort(sp->parts, sp->nparts, sizeof(sp->parts[0]), part_cmp);
}

/* ---------------------------------------------------------------- JSON */

static json_t *share_or_null(uint64_t num, uint64_t den)
{
	return den ? json_real((double)num / (double)den) : json_null();
}

json_t *rxb_lapsplit_json(const struct rxb_lapsplit *sp, const struct rxr_result *r)
{
	uint64_t cqe = 0, idle = 0, all = 0, packets = 0, lap = sp->in_burst + sp->at_site;

	for (size_t i = 0; r && i < r->nthreads; i++) {
		const struct rxr_thread_result *t = &r->threads[i];
		if (strcmp(t->role, "rx"))
			continue;
		cqe += t->st[RXP_ST_CQE_POLL].cycles;
		idle += t->st[RXP_ST_IDLE].cycles;
		packets += t->packets;
		for (int s = 0; s < RXP_ST_COUNT; s++)
			all += t->st[s].cycles;
	}
	json_t *counted =
	    json_pack("{s:I,s:I,s:I,s:I,s:o,s:o}", "cqe_poll_cycles", (json_int_t)cqe,
		      "idle_cycles", (json_int_t)idle, "thread_cycles", (json_int_t)all, "packets",
		      (json_int_t)packets, "lap_share_of_thread", share_or_null(cqe + idle, all),
		      "cqe_poll_share_of_lap", share_or_null(cqe, cqe + idle));
	json_t *parts = json_array();
	json_t *o = NULL;
	if (!counted || !parts)
		goto fail;
	for (size_t i = 0; i < sp->nparts; i++) {
		const struct rxb_lappart *p = &sp->parts[i];
		double share = lap ? (double)p->samples / (double)lap : 0;
		/* the profile's normalisation (as attach's): the part's share of
		 * every sample x every counted cycle, per packet */
		json_t *est = packets ? json_real((double)p->samples / (double)sp->samples *
						  (double)all / (double)packets)
				      : json_null();
		json_t *e =
		    json_pack("{s:s,s:s,s:I,s:f,s:o}", "name", p->name, "kind",
			      rxb_lappart_kind_name(p->kind), "samples", (json_int_t)p->samples,
			      "share", share, "est_cycles_per_packet", est);
		if (!e || json_array_append_new(parts, e))
			goto fail;
	}
	o = json_pack("{s:s,s:s,s:s,s:I,s:s,s:I,s:f,s:I,s:I,s:I,s:I,s:I,s:s,s:s,s:o,s:I,s:I,s:I}",
		      "lap", "cqe_poll", "what",
		      "estimates from BPF stack samples of the rx threads, not counted cycles: "
		      "share = a part's samples / lap_samples, the samples inside "
		      "rte_eth_rx_burst (the PMD's rx burst function and the inline code around "
		      "its call, which rxray laps as cqe_poll, or as idle when it returned no "
		      "packets); est_cycles_per_packet = a part's samples / samples x the rx "
		      "threads' counted cycles (every lap) / packets",
		      "event", sp->event, "freq_hz", (json_int_t)sp->freq_hz, "stacks", sp->stacks,
		      "rx_threads", (json_int_t)sp->rx_threads, "seconds", sp->seconds, "samples",
		      (json_int_t)sp->samples, "lap_samples", (json_int_t)lap, "in_rx_burst",
		      (json_int_t)sp->in_burst, "at_lap_site", (json_int_t)sp->at_site, "unplaced",
		      (json_int_t)sp->unplaced, "rx_burst_function", sp->burst_fn,
		      "lap_site_function", name_top(sp->sites, sp->nsites),
		      "sampled_share_of_thread", share_or_null(lap, sp->samples), "dropped",
		      (json_int_t)sp->dropped, "stack_errors", (json_int_t)sp->stack_errors,
		      "stacks_cut", (json_int_t)sp->stacks_cut);
	if (!o || json_object_set_new(o, "counted", counted) ||
	    json_object_set_new(o, "parts", parts)) {
		json_decref(o);
		return NULL; /* counted and parts went with the failed sets */
	}
	return o;
fail:
	json_decref(counted);
	json_decref(parts);
	return NULL;
}

/* ------------------------------------------------------------- session */

struct rxb_lapsamp {
	struct rxb_attach_target *t;
	struct rxb_syms *sy;
	struct rxb_sampler *s;
	enum rxb_stack_mode mode;
	unsigned freq;
	pthread_t drain;
	bool draining, started, stopped;
	atomic_int quit;
	double t0, seconds;
	int labels_rc;	      /* rxb_syms_dpdk_read at stop: 0 with an rx burst label */
	char labels_err[256]; /* why not */
};

/* dwarf mode: the ring drained and unwound every 10 ms, off the rx cores */
static void *drain_main(void *arg)
{
	struct rxb_lapsamp *ls = arg;
	while (!atomic_load_explicit(&ls->quit, memory_order_acquire))
		rxb_sampler_poll(ls->s, 10);
	return NULL;
}

static int drain_start(struct rxb_lapsamp *ls, char *err, size_t errlen)
{
	pthread_attr_t a;
	cpu_set_t set, keep;
	int rc = pthread_attr_init(&a);
	if (rc)
		goto fail;
	/* what rxray costs should not come out of the measured threads' time */
	if (!sched_getaffinity(0, sizeof(set), &set)) {
		keep = set;
		for (size_t i = 0; i < ls->t->nthreads; i++) {
			int c = ls->t->threads[i].pinned_core;
			if (c >= 0 && c < CPU_SETSIZE)
				CPU_CLR(c, &keep);
		}
		if (CPU_COUNT(&keep) > 0)
			pthread_attr_setaffinity_np(&a, sizeof(keep), &keep);
	}
	rc = pthread_create(&ls->drain, &a, drain_main, ls);
	pthread_attr_destroy(&a);
	if (rc)
		goto fail;
	pthread_setname_np(ls->drain, "rxray-sample");
	ls->draining = true;
	return 0;
fail:
	snprintf(err, errlen, "failed to start the sample drain thread: %s", strerror(rc));
	return -rc;
}

static bool has_rx_burst_label(const struct rxb_syms *sy)
{
	size_t n = 0;
	const struct rxb_dpdk_label *l = rxb_syms_dpdk_labels(sy, &n);
	for (size_t i = 0; i < n; i++)
		if (l[i].role == RXB_ROLE_RX_BURST)
			return true;
	return false;
}

int rxb_lapsamp_open(const struct rxb_lapsamp_opts *o, struct rxb_lapsamp **out, char *err,
		     size_t errlen)
{
	struct rxb_lapsamp *ls = NULL;
	char why[256];
	int rc, pid = getpid();

	*out = NULL;
	if (!o->ntids || o->freq_hz > 20000) {
		snprintf(err, errlen,
			 o->ntids ? "sampling frequency %u Hz: not 1-20000"
				  : "no rx thread to sample",
			 o->freq_hz);
		return -EINVAL;
	}
	rc = rxb_attach_caps_check(why, sizeof(why));
	if (rc) {
		snprintf(err, errlen, "needs root or CAP_BPF+CAP_PERFMON: missing %s", why);
		return rc;
	}
	ls = calloc(1, sizeof(*ls));
	if (!ls || !(ls->t = calloc(1, sizeof(*ls->t)))) {
		rc = -ENOMEM;
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	ls->freq = o->freq_hz ? o->freq_hz : RXB_LAPSPLIT_DEFAULT_HZ;
	rc = rxb_attach_target_resolve(pid, o->tids, o->ntids, -1, ls->t, why, sizeof(why));
	if (rc) {
		snprintf(err, errlen, "an rx thread ended before sampling began (%s)", why);
		goto fail;
	}
	rc = rxb_syms_open(pid, NULL, &ls->sy, err, errlen);
	if (rc)
		goto fail;
	struct rxb_sampler_opts so = {.target = ls->t,
				      .freq_hz = ls->freq,
				      .mode = RXB_STACKS_DWARF,
				      .scope = RXB_SCOPE_THREADS,
				      .stack_bytes = RXB_LAPSPLIT_STACK_BYTES,
				      .unwind = rxb_syms_unwind,
				      .unwind_ctx = ls->sy};
	rc = rxb_sampler_open(&so, &ls->s, err, errlen);
	if (!ls->s && rc != -EPERM) { /* no dwarf stacks here: frame pointers */
		so.mode = RXB_STACKS_FP;
		rc = rxb_sampler_open(&so, &ls->s, err, errlen);
	}
	if (!ls->s)
		goto fail;
	ls->mode = so.mode;
	if (ls->mode == RXB_STACKS_DWARF && (rc = drain_start(ls, err, errlen)))
		goto fail;
	*out = ls;
	return 0;
fail:
	rxb_lapsamp_close(ls);
	return rc < 0 ? rc : -EIO;
}

int rxb_lapsamp_start(struct rxb_lapsamp *ls, char *err, size_t errlen)
{
	int rc = rxb_sampler_enable(ls->s);
	if (rc) {
		snprintf(err, errlen, "failed to start the perf events: %s", strerror(-rc));
		return rc;
	}
	ls->started = true;
	ls->t0 = rxu_mono_seconds();
	return 0;
}

void rxb_lapsamp_stop(struct rxb_lapsamp *ls)
{
	if (!ls || ls->stopped)
		return;
	ls->stopped = true;
	if (ls->draining) { /* the session is the drain thread's until it ends */
		atomic_store_explicit(&ls->quit, 1, memory_order_release);
		pthread_join(ls->drain, NULL);
		ls->draining = false;
	}
	/* the tables now, while the ports run: a stopped port's entries
	 * are ethdev's dummies */
	ls->labels_err[0] = '\0';
	ls->labels_rc = rxb_syms_dpdk_read(ls->sy, NULL, ls->labels_err, sizeof(ls->labels_err));
	if (ls->labels_rc >= 0)
		ls->labels_rc = has_rx_burst_label(ls->sy) ? 0 : -ENOENT;
	if (ls->started)
		ls->seconds = rxu_mono_seconds() - ls->t0;
	rxb_sampler_stop(ls->s); /* dwarf: what is left in the ring, unwound here */
}

#define FOLD_FRAMES 128

struct fold {
	struct rxb_syms *sy;
	struct rxb_lapsplit *sp;
	bool learn; /* the first pass: the lap sites */
	struct rxb_lapframe f[FOLD_FRAMES];
	char names[FOLD_FRAMES][FRAME_NAME_MAX];
	char dsos[FOLD_FRAMES][64];
};

static void fold_name(struct fold *c, size_t n, const struct rxb_frame *f, bool kernel)
{
	if (f->sym)
		snprintf(c->names[n], FRAME_NAME_MAX, kernel ? "%s_[k]" : "%s", f->sym);
	else
		snprintf(c->names[n], FRAME_NAME_MAX, "%s+0x%" PRIx64, f->dso ? f->dso : "?",
			 f->off);
	snprintf(c->dsos[n], sizeof(c->dsos[n]), "%s", f->dso ? f->dso : "");
	c->f[n].name = c->names[n];
	c->f[n].dso = c->dsos[n];
	c->f[n].role = f->role;
}

static int fold_stack(void *ctx, uint32_t tid, const uint64_t *uip, size_t nu, const uint64_t *kip,
		      size_t nk, uint64_t count)
{
	struct fold *c = ctx;
	struct rxb_frame f;
	size_t n = 0;

	(void)tid; /* the BPF filter kept rx threads only */
	for (size_t i = 0; i < nk && n < FOLD_FRAMES; i++, n++) {
		if (rxb_syms_kernel(c->sy, kip[i], &f)) {
			memset(&f, 0, sizeof(f));
			f.dso = "[kernel]";
			f.off = kip[i];
		}
		fold_name(c, n, &f, true);
		snprintf(c->dsos[n], sizeof(c->dsos[n]), "[kernel]");
		c->f[n].role = RXB_ROLE_NONE;
		c->f[n].kernel = true;
	}
	for (size_t i = 0; i < nu && n < FOLD_FRAMES; i++, n++) {
		/* callers hold return addresses: look up the call instruction */
		if (rxb_syms_user(c->sy, i ? uip[i] - 1 : uip[i], &f))
			break; /* an address in no object: the walk went astray */
		fold_name(c, n, &f, false);
		c->f[n].kernel = false;
	}
	(c->learn ? rxb_lapsplit_learn : rxb_lapsplit_add)(c->sp, c->f, n, count);
	return 0;
}

int rxb_lapsamp_fold(struct rxb_lapsamp *ls, struct rxb_lapsplit *sp, char *err, size_t errlen)
{
	struct rxb_sampler_stats st;
	struct fold *c = NULL;

	rxb_lapsplit_init(sp);
	rxb_lapsamp_stop(ls);
	if (ls->labels_rc) {
		snprintf(err, errlen,
			 "no rx burst function in rte_eth_fp_ops to split the lap by%s%s",
			 ls->labels_err[0] ? ": " : "", ls->labels_err);
		return ls->labels_rc;
	}
	if (!(c = calloc(1, sizeof(*c)))) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	c->sy = ls->sy;
	c->sp = sp;
	c->learn = true;
	int rc = rxb_sampler_foreach(ls->s, fold_stack, c);
	c->learn = false;
	if (!rc)
		rc = rxb_sampler_foreach(ls->s, fold_stack, c);
	free(c);
	if (rc) {
		snprintf(err, errlen, "failed to read the samples: %s", strerror(-rc));
		return rc;
	}
	rxb_lapsplit_sort(sp);
	rxb_sampler_stats(ls->s, &st);
	snprintf(sp->event, sizeof(sp->event), "%s", rxb_sampler_event(ls->s));
	snprintf(sp->stacks, sizeof(sp->stacks), "%s",
		 ls->mode == RXB_STACKS_DWARF ? "dwarf" : "fp");
	sp->freq_hz = ls->freq;
	sp->rx_threads = (unsigned)ls->t->nthreads;
	sp->seconds = ls->seconds;
	sp->dropped = st.dropped;
	sp->stack_errors = st.stack_errors;
	sp->stacks_cut = st.stacks_cut;
	return 0;
}

void rxb_lapsamp_close(struct rxb_lapsamp *ls)
{
	if (!ls)
		return;
	rxb_lapsamp_stop(ls);
	rxb_sampler_close(ls->s);
	rxb_syms_close(ls->sy);
	free(ls->t);
	free(ls);
}
