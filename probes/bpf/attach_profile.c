/* SPDX-License-Identifier: MIT */
/*
 * The window's profile: fold the sampled stacks into named frames, merge
 * equal folded stacks, rank leaf functions, and turn telemetry deltas
 * into packets, cycles per packet and findings.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdarg.h>
#include <string.h>
#include <linux/types.h>

#include "attach_bpf.h"
#include "rxray/attach.h"

/* ------------------------------------------- string -> index hash table */

struct strmap {
	size_t cap;   /* power of two */
	size_t n;
	char **keys;  /* borrowed from the owner's array */
	size_t *vals;
};

static uint64_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

static int strmap_grow(struct strmap *m)
{
	size_t cap = m->cap ? m->cap * 2 : 1024;
	char **k = calloc(cap, sizeof(*k));
	size_t *v = calloc(cap, sizeof(*v));

	if (!k || !v) {
		free(k);
		free(v);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->keys[i])
			continue;
		size_t j = str_hash(m->keys[i]) & (cap - 1);
		while (k[j])
			j = (j + 1) & (cap - 1);
		k[j] = m->keys[i];
		v[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = k;
	m->vals = v;
	m->cap = cap;
	return 0;
}

/* Slot index for key; *found says whether it was present. -ENOMEM. */
static long strmap_slot(struct strmap *m, const char *key, bool *found)
{
	size_t j;

	if ((m->n + 1) * 2 > m->cap && strmap_grow(m))
		return -ENOMEM;
	j = str_hash(key) & (m->cap - 1);
	while (m->keys[j] && strcmp(m->keys[j], key))
		j = (j + 1) & (m->cap - 1);
	*found = m->keys[j] != NULL;
	return (long)j;
}

static void strmap_free(struct strmap *m)
{
	free(m->keys);
	free(m->vals);
}

/* ------------------------------------------------------------- folding */

#define FRAMES_MAX 256
#define FRAME_NAME FRAME_NAME_MAX

struct fold_ctx {
	struct rxr_profile *p;
	struct rxr_syms *sy;
	const struct rxr_attach_target *t;
	struct strmap stacks, funcs;
	size_t stacks_cap, funcs_cap;
	char names[FRAMES_MAX][FRAME_NAME];
	char dsos[FRAMES_MAX][64];
	int rc;
};

static void frame_name(const struct rxr_frame *f, bool kernel, char *out, size_t len,
		       char *dso, size_t dlen)
{
	if (f->sym)
		snprintf(out, len, kernel ? "%s_[k]" : "%s", f->sym);
	else
		snprintf(out, len, "%s+0x%" PRIx64, f->dso, f->off);
	snprintf(dso, dlen, "%s", f->dso ? f->dso : "");
	for (char *c = out; *c; c++)
		if (*c == ';' || *c == '\n')
			*c = ':';
}

/* Append a process/thread name (the target's to choose) and ';', keeping the format. */
static size_t name_put(char *out, const char *name)
{
	size_t n = 0;

	for (; name[n]; n++)
		out[n] = name[n] == ';' || name[n] == '\n' ? ':' : name[n];
	out[n++] = ';';
	out[n] = '\0';
	return n;
}

static const char *thread_comm(const struct rxr_attach_target *t, uint32_t tid)
{
	for (size_t i = 0; i < t->nthreads; i++)
		if ((uint32_t)t->threads[i].tid == tid)
			return t->threads[i].comm;
	return NULL;
}

static long func_index(struct fold_ctx *c, const char *name, const char *dso)
{
	struct rxr_profile *p = c->p;
	bool found;
	long j = strmap_slot(&c->funcs, name, &found);

	if (j < 0)
		return j;
	if (found)
		return (long)c->funcs.vals[j];
	if (p->nfuncs == c->funcs_cap) {
		size_t cap = c->funcs_cap ? c->funcs_cap * 2 : 256;
		struct rxr_profile_func *f = realloc(p->funcs, cap * sizeof(*f));
		if (!f)
			return -ENOMEM;
		p->funcs = f;
		c->funcs_cap = cap;
	}
	struct rxr_profile_func *f = &p->funcs[p->nfuncs];
	memset(f, 0, sizeof(*f));
	f->name = strdup(name);
	if (!f->name)
		return -ENOMEM;
	snprintf(f->dso, sizeof(f->dso), "%s", dso);
	c->funcs.keys[j] = f->name;
	c->funcs.vals[j] = p->nfuncs;
	c->funcs.n++;
	return (long)p->nfuncs++;
}

static int stack_add(struct fold_ctx *c, const char *folded, uint64_t count)
{
	struct rxr_profile *p = c->p;
	bool found;
	long j = strmap_slot(&c->stacks, folded, &found);

	if (j < 0)
		return (int)j;
	if (found) {
		p->stacks[c->stacks.vals[j]].count += count;
		return 0;
	}
	if (p->nstacks == c->stacks_cap) {
		size_t cap = c->stacks_cap ? c->stacks_cap * 2 : 256;
		struct rxr_profile_stack *s = realloc(p->stacks, cap * sizeof(*s));
		if (!s)
			return -ENOMEM;
		p->stacks = s;
		c->stacks_cap = cap;
	}
	p->stacks[p->nstacks].folded = strdup(folded);
	if (!p->stacks[p->nstacks].folded)
		return -ENOMEM;
	p->stacks[p->nstacks].count = count;
	c->stacks.keys[j] = p->stacks[p->nstacks].folded;
	c->stacks.vals[j] = p->nstacks++;
	c->stacks.n++;
	return 0;
}

static bool is_mempool(const char *name, const char *dso)
{
	return strstr(dso, "mempool") || strstr(name, "mempool") ||
	       !strncmp(name, "rte_ring", 8) || !strncmp(name, "common_ring", 11);
}

static bool is_pmd(const char *dso)
{
	return !strncmp(dso, "librte_net_", 11) || !strncmp(dso, "librte_common_", 14);
}

static void mempool_caller_add(struct rxr_profile *p, const char *name, uint64_t count)
{
	size_t i;

	for (i = 0; i < p->nmempool_callers; i++)
		if (!strcmp(p->mempool_callers[i].name, name))
			break;
	if (i == p->nmempool_callers) {
		if (i == sizeof(p->mempool_callers) / sizeof(p->mempool_callers[0]))
			return; /* bounded: the big ones come first in practice */
		snprintf(p->mempool_callers[i].name, sizeof(p->mempool_callers[i].name), "%s", name);
		p->mempool_callers[i].samples = 0;
		p->nmempool_callers++;
	}
	p->mempool_callers[i].samples += count;
}

static int fold_one(void *ctx, uint32_t tid, const uint64_t *uip, size_t nu, const uint64_t *kip,
		    size_t nk, uint64_t count)
{
	struct fold_ctx *c = ctx;
	struct rxr_profile *p = c->p;
	const char *tcomm = thread_comm(c->t, tid);
	struct rxr_frame f;
	size_t n = 0; /* frames collected leaf first: kernel, then user */
	char *folded;
	size_t flen = 0;
	long leaf_fn = -1;
	int rc;

	for (size_t i = 0; i < nk && n < FRAMES_MAX; i++, n++) {
		if (rxr_syms_kernel(c->sy, kip[i], &f)) {
			snprintf(c->names[n], FRAME_NAME, "0x%" PRIx64 "_[k]", kip[i]);
			snprintf(c->dsos[n], sizeof(c->dsos[n]), "[kernel]");
		} else {
			frame_name(&f, true, c->names[n], FRAME_NAME, c->dsos[n], sizeof(c->dsos[n]));
		}
	}
	for (size_t i = 0; i < nu && n < FRAMES_MAX; i++, n++) {
		/* callers hold return addresses: look up the call instruction */
		if (rxr_syms_user(c->sy, i ? uip[i] - 1 : uip[i], &f))
			break; /* an address in no object: the walk went astray */
		frame_name(&f, false, c->names[n], FRAME_NAME, c->dsos[n], sizeof(c->dsos[n]));
	}
	if (!n) {
		snprintf(c->names[0], FRAME_NAME, "[unknown]");
		c->dsos[0][0] = '\0';
		n = 1;
	}

	folded = malloc((size_t)(n + 2) * (FRAME_NAME + 1) + 64);
	if (!folded)
		return -ENOMEM;
	flen += name_put(folded + flen, p->comm[0] ? p->comm : "process");
	if (tcomm)
		flen += name_put(folded + flen, tcomm);
	else
		flen += (size_t)sprintf(folded + flen, "tid %u;", tid);
	for (size_t i = n; i-- > 0;)
		flen += (size_t)sprintf(folded + flen, "%s%s", c->names[i], i ? ";" : "");
	rc = stack_add(c, folded, count);
	free(folded);
	if (rc)
		return rc;

	/* self for the leaf, total once per distinct function in the stack */
	for (size_t i = 0; i < n; i++) {
		long fi = func_index(c, c->names[i], c->dsos[i]);
		bool seen = false;
		if (fi < 0)
			return (int)fi;
		if (i == 0) {
			leaf_fn = fi;
			p->funcs[fi].self += count;
		}
		for (size_t k = 0; k < i && !seen; k++)
			seen = !strcmp(c->names[k], c->names[i]);
		if (!seen)
			p->funcs[fi].total += count;
	}
	if (leaf_fn >= 0) {
		const struct rxr_profile_func *lf = &p->funcs[leaf_fn];
		if (is_mempool(lf->name, lf->dso)) {
			p->mempool_share += (double)count;
			/* first caller outside the mempool code */
			size_t k = 1;
			while (k < n && is_mempool(c->names[k], c->dsos[k]))
				k++;
			if (k < n)
				mempool_caller_add(p, c->names[k], count);
		}
		if (is_pmd(lf->dso))
			p->pmd_share += (double)count;
	}
	return 0;
}

static int stack_cmp(const void *a, const void *b)
{
	const struct rxr_profile_stack *x = a, *y = b;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return strcmp(x->folded, y->folded);
}

static int func_cmp(const void *a, const void *b)
{
	const struct rxr_profile_func *x = a, *y = b;
	if (x->self != y->self)
		return x->self < y->self ? 1 : -1;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return strcmp(x->name, y->name);
}

int rxr_profile_fold(struct rxr_profile *p, struct rxr_sampler *s, struct rxr_syms *sy,
		     const struct rxr_attach_target *t)
{
	struct fold_ctx *c = calloc(1, sizeof(*c));
	uint64_t total = 0;
	int rc;

	if (!c)
		return -ENOMEM;
	c->p = p;
	c->sy = sy;
	c->t = t;
	rc = rxr_sampler_foreach(s, fold_one, c);
	strmap_free(&c->stacks);
	strmap_free(&c->funcs);
	free(c);
	if (rc)
		return rc;
	if (p->nstacks)
		qsort(p->stacks, p->nstacks, sizeof(*p->stacks), stack_cmp);
	if (p->nfuncs)
		qsort(p->funcs, p->nfuncs, sizeof(*p->funcs), func_cmp);
	for (size_t i = 0; i < p->nstacks; i++)
		total += p->stacks[i].count;
	if (total) {
		p->mempool_share /= (double)total;
		p->pmd_share /= (double)total;
	}
	return 0;
}

/* ------------------------------------------------------------ findings */

static void finding(struct rxr_profile *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void finding(struct rxr_profile *p, const char *fmt, ...)
{
	va_list ap;

	if (p->nfindings == RXR_ATTACH_MAX_FINDINGS)
		return;
	va_start(ap, fmt);
	vsnprintf(p->findings[p->nfindings++], sizeof(p->findings[0]), fmt, ap);
	va_end(ap);
}

static const struct rxr_tele_port *port_find(const struct rxr_tele_snap *s, uint16_t id)
{
	for (size_t i = 0; i < s->nports; i++)
		if (s->ports[i].id == id)
			return &s->ports[i];
	return NULL;
}

static uint64_t delta(uint64_t a, uint64_t b)
{
	return b > a ? b - a : 0;
}

/* "; called from A (80%), B (20%)" for the two biggest mempool callers. */
static void mempool_callers_text(const struct rxr_profile *p, char *out, size_t len)
{
	uint64_t total = 0;
	size_t a = SIZE_MAX, b = SIZE_MAX, o = 0;

	for (size_t i = 0; i < p->nmempool_callers; i++) {
		total += p->mempool_callers[i].samples;
		if (a == SIZE_MAX || p->mempool_callers[i].samples > p->mempool_callers[a].samples) {
			b = a;
			a = i;
		} else if (b == SIZE_MAX ||
			   p->mempool_callers[i].samples > p->mempool_callers[b].samples) {
			b = i;
		}
	}
	out[0] = '\0';
	if (!total)
		return;
	o += (size_t)snprintf(out, len, "; called from %.80s (%.0f%%)", p->mempool_callers[a].name,
			      100.0 * (double)p->mempool_callers[a].samples / (double)total);
	if (b != SIZE_MAX && o < len)
		snprintf(out + o, len - o, ", %.80s (%.0f%%)", p->mempool_callers[b].name,
			 100.0 * (double)p->mempool_callers[b].samples / (double)total);
}

/*
 * A pktmbuf pool has rte_pktmbuf_pool_private as private data; its data
 * room is elt_size - sizeof(struct rte_mbuf) (128) - the mbuf private
 * area. A port's rx_mbuf_size_min is the smallest data room among the
 * pools of its RX queues, so an equal data room names the feeding pool.
 */
static void finding_pools(struct rxr_profile *p)
{
	const struct rxr_tele_snap *s = &p->t1;
	uint64_t rxq = 0;

	for (size_t i = 0; i < s->nports; i++)
		rxq += s->ports[i].nb_rx_queues;
	for (size_t i = 0; i < s->npools; i++) {
		const struct rxr_tele_pool *mp = &s->pools[i];
		char feeds[96] = "";
		size_t fl = 0;
		if (mp->cache_size || !mp->private_data_size || !rxq || mp->elt_size <= 128)
			continue;
		for (size_t k = 0; k < s->nports; k++)
			if (s->ports[k].nb_rx_queues && s->ports[k].rx_mbuf_size_min == mp->elt_size - 128 &&
			    fl + 24 < sizeof(feeds))
				fl += (size_t)snprintf(feeds + fl, sizeof(feeds) - fl, "%s%u",
						       fl ? "," : "", s->ports[k].id);
		char what[128];
		if (fl)
			snprintf(what, sizeof(what), "feeds RX of port %s", feeds);
		else
			snprintf(what, sizeof(what), "is a pktmbuf pool while ports receive");
		char callers[200] = "";
		mempool_callers_text(p, callers, sizeof(callers));
		finding(p, "mempool %s has cache_size 0 and %s: every mbuf alloc and free goes to "
			"the pool's shared ring; mempool code is %.1f%% of samples (%.1f cycles/packet)%s",
			mp->name, what, 100 * p->mempool_share, p->mempool_share * p->cycles_per_packet,
			callers);
	}
}

void rxr_profile_finish(struct rxr_profile *p)
{
	p->packets = p->imissed = p->rx_nombuf = p->ierrors = 0;
	p->nfindings = 0;
	p->busy_cycles = (double)p->busy_ns * p->clock_hz / 1e9;
	if (p->have_tele) {
		for (size_t i = 0; i < p->t1.nports; i++) {
			const struct rxr_tele_port *b = &p->t1.ports[i];
			const struct rxr_tele_port *a = port_find(&p->t0, b->id);
			if (!a)
				continue;
			uint64_t dm = delta(a->imissed, b->imissed);
			uint64_t dn = delta(a->rx_nombuf, b->rx_nombuf);
			uint64_t dp = delta(a->ipackets, b->ipackets);
			p->packets += dp;
			p->imissed += dm;
			p->rx_nombuf += dn;
			p->ierrors += delta(a->ierrors, b->ierrors);
			if (dn)
				finding(p, "port %u (%s): rx_nombuf rose by %" PRIu64 " in the window: "
					"the RX path could not allocate replacement mbufs", b->id,
					b->name, dn);
			if (dm)
				finding(p, "port %u (%s): imissed rose by %" PRIu64 " (%.2f%% of %" PRIu64
					" received): descriptors were not replenished in time", b->id,
					b->name, dm, dp ? 100.0 * (double)dm / (double)dp : 100.0, dp);
		}
	}
	p->cycles_per_packet = p->packets ? p->busy_cycles / (double)p->packets : 0;
	if (p->have_tele)
		finding_pools(p);
	if (!p->sst.samples)
		finding(p, "warning: no samples of the chosen threads in the window: they did not "
			"run, or sampling failed");
	if (p->sst.dropped)
		finding(p, "note: %" PRIu64 " samples dropped (count map full at %d stacks)",
			p->sst.dropped, RXR_BPF_MAX_KEYS);
	if (p->nuprobes)
		finding(p, "note: uprobes cost 1.5-7.5 us per hit here; they were attached %.2f s "
			"of the window", p->uprobe_attached_s);
}

struct rxr_profile *rxr_profile_new(void)
{
	struct rxr_profile *p = calloc(1, sizeof(*p));
	if (p)
		p->lcore = -1;
	return p;
}

void rxr_profile_free(struct rxr_profile *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nstacks; i++)
		free(p->stacks[i].folded);
	for (size_t i = 0; i < p->nfuncs; i++)
		free(p->funcs[i].name);
	free(p->stacks);
	free(p->funcs);
	free(p);
}
