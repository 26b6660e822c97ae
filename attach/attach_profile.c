/* SPDX-License-Identifier: MIT */
/*
 * The window's profile: fold the sampled stacks into named frames, merge
 * equal folded stacks, rank leaf functions, and turn telemetry deltas
 * into packets and cycles per packet. (What they mean, the findings, is
 * analyzers/attach_findings.c's job.)
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>

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
	struct rxb_profile *p;
	struct rxb_syms *sy;
	const struct rxb_attach_target *t;
	struct strmap stacks, funcs;
	size_t stacks_cap, funcs_cap;
	char names[FRAMES_MAX][FRAME_NAME];
	char dsos[FRAMES_MAX][64];
	enum rxb_name_src srcs[FRAMES_MAX];
	enum rxb_dpdk_role roles[FRAMES_MAX];
	/* hottest frames per DPDK role, for the profile's *_top names */
	struct top_names {
		size_t n;
		struct {
			char name[FRAME_NAME];
			uint64_t count;
		} e[8];
	} get, put, rx;
	int rc;
};

static void frame_name(const struct rxb_frame *f, bool kernel, char *out, size_t len,
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

static const char *thread_comm(const struct rxb_attach_target *t, uint32_t tid)
{
	for (size_t i = 0; i < t->nthreads; i++)
		if ((uint32_t)t->threads[i].tid == tid)
			return t->threads[i].comm;
	return NULL;
}

static long func_index(struct fold_ctx *c, const char *name, const char *dso,
		       enum rxb_name_src src, enum rxb_dpdk_role role)
{
	struct rxb_profile *p = c->p;
	bool found;
	long j = strmap_slot(&c->funcs, name, &found);

	if (j < 0)
		return j;
	if (found)
		return (long)c->funcs.vals[j];
	if (p->nfuncs == c->funcs_cap) {
		size_t cap = c->funcs_cap ? c->funcs_cap * 2 : 256;
		struct rxb_profile_func *f = realloc(p->funcs, cap * sizeof(*f));
		if (!f)
			return -ENOMEM;
		p->funcs = f;
		c->funcs_cap = cap;
	}
	struct rxb_profile_func *f = &p->funcs[p->nfuncs];
	memset(f, 0, sizeof(*f));
	f->name = strdup(name);
	if (!f->name)
		return -ENOMEM;
	snprintf(f->dso, sizeof(f->dso), "%s", dso);
	f->src = src;
	f->role = role;
	c->funcs.keys[j] = f->name;
	c->funcs.vals[j] = p->nfuncs;
	c->funcs.n++;
	return (long)p->nfuncs++;
}

static int stack_add(struct fold_ctx *c, const char *folded, uint64_t count)
{
	struct rxb_profile *p = c->p;
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
		struct rxb_profile_stack *s = realloc(p->stacks, cap * sizeof(*s));
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

static bool is_mp_role(enum rxb_dpdk_role r)
{
	return r == RXB_ROLE_MP_GET || r == RXB_ROLE_MP_PUT || r == RXB_ROLE_MP_OTHER;
}

/* Count samples per frame name; bounded (the big ones come first in practice). */
static void top_add(struct top_names *t, const char *name, uint64_t count)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (!strcmp(t->e[i].name, name))
			break;
	if (i == t->n) {
		if (i == sizeof(t->e) / sizeof(t->e[0]))
			return;
		size_t l = strnlen(name, sizeof(t->e[i].name) - 1);
		memcpy(t->e[i].name, name, l); /* names and table share the context */
		t->e[i].name[l] = '\0';
		t->e[i].count = 0;
		t->n++;
	}
	t->e[i].count += count;
}

static void top_name(const struct top_names *t, char *out, size_t len)
{
	size_t best = SIZE_MAX;

	for (size_t i = 0; i < t->n; i++)
		if (best == SIZE_MAX || t->e[i].count > t->e[best].count)
			best = i;
	snprintf(out, len, "%s", best == SIZE_MAX ? "" : t->e[best].name);
}

static void mempool_caller_add(struct rxb_profile *p, const char *name, uint64_t count)
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
	struct rxb_profile *p = c->p;
	const char *tcomm = thread_comm(c->t, tid);
	struct rxb_frame f;
	size_t n = 0; /* frames collected leaf first: kernel, then user */
	char *folded;
	size_t flen = 0;
	long leaf_fn = -1;
	int rc;

	for (size_t i = 0; i < nk && n < FRAMES_MAX; i++, n++) {
		if (rxb_syms_kernel(c->sy, kip[i], &f)) {
			snprintf(c->names[n], FRAME_NAME, "0x%" PRIx64 "_[k]", kip[i]);
			snprintf(c->dsos[n], sizeof(c->dsos[n]), "[kernel]");
			f.src = RXB_NAME_NONE;
		} else {
			frame_name(&f, true, c->names[n], FRAME_NAME, c->dsos[n], sizeof(c->dsos[n]));
		}
		c->srcs[n] = f.src;
		c->roles[n] = RXB_ROLE_NONE;
	}
	for (size_t i = 0; i < nu && n < FRAMES_MAX; i++, n++) {
		/* callers hold return addresses: look up the call instruction */
		if (rxb_syms_user(c->sy, i ? uip[i] - 1 : uip[i], &f))
			break; /* an address in no object: the walk went astray */
		frame_name(&f, false, c->names[n], FRAME_NAME, c->dsos[n], sizeof(c->dsos[n]));
		c->srcs[n] = f.src;
		c->roles[n] = f.role;
	}
	if (!n) {
		snprintf(c->names[0], FRAME_NAME, "[unknown]");
		c->dsos[0][0] = '\0';
		c->srcs[0] = RXB_NAME_NONE;
		c->roles[0] = RXB_ROLE_NONE;
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
		long fi = func_index(c, c->names[i], c->dsos[i], c->srcs[i], c->roles[i]);
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
		const struct rxb_profile_func *lf = &p->funcs[leaf_fn];
		if (is_mempool(lf->name, lf->dso) || is_mp_role(lf->role)) {
			p->mempool_share += (double)count;
			/* first caller outside the mempool code; on the way, the
			 * nearest mempool ops frame says get or put */
			size_t k = 0;
			bool split = false;
			while (k < n && (is_mempool(c->names[k], c->dsos[k]) || is_mp_role(c->roles[k]))) {
				if (!split && (c->roles[k] == RXB_ROLE_MP_GET ||
					       c->roles[k] == RXB_ROLE_MP_PUT)) {
					bool get = c->roles[k] == RXB_ROLE_MP_GET;
					*(get ? &p->mempool_get_share : &p->mempool_put_share) +=
						(double)count;
					top_add(get ? &c->get : &c->put, c->names[k], count);
					split = true;
				}
				k++;
			}
			if (k < n && k > 0)
				mempool_caller_add(p, c->names[k], count);
		}
		if (is_pmd(lf->dso) || lf->role == RXB_ROLE_RX_BURST || lf->role == RXB_ROLE_TX_BURST)
			p->pmd_share += (double)count;
	}
	/* the RX burst function anywhere in the stack (once per stack) */
	for (size_t i = 0; i < n; i++)
		if (c->roles[i] == RXB_ROLE_RX_BURST) {
			p->rx_burst_share += (double)count;
			top_add(&c->rx, c->names[i], count);
			break;
		}
	return 0;
}

static int stack_cmp(const void *a, const void *b)
{
	const struct rxb_profile_stack *x = a, *y = b;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return strcmp(x->folded, y->folded);
}

static int func_cmp(const void *a, const void *b)
{
	const struct rxb_profile_func *x = a, *y = b;
	if (x->self != y->self)
		return x->self < y->self ? 1 : -1;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return strcmp(x->name, y->name);
}

int rxb_profile_fold(struct rxb_profile *p, struct rxb_sampler *s, struct rxb_syms *sy,
		     const struct rxb_attach_target *t)
{
	struct fold_ctx *c = calloc(1, sizeof(*c));
	uint64_t total = 0;
	int rc;

	if (!c)
		return -ENOMEM;
	c->p = p;
	c->sy = sy;
	c->t = t;
	rc = rxb_sampler_foreach(s, fold_one, c);
	top_name(&c->get, p->mempool_get_top, sizeof(p->mempool_get_top));
	top_name(&c->put, p->mempool_put_top, sizeof(p->mempool_put_top));
	top_name(&c->rx, p->rx_burst_top, sizeof(p->rx_burst_top));
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
		p->mempool_get_share /= (double)total;
		p->mempool_put_share /= (double)total;
		p->rx_burst_share /= (double)total;
	}
	return 0;
}

/* -------------------------------------------------------------- window */

void rxb_profile_finish(struct rxb_profile *p)
{
	p->packets = p->imissed = p->rx_nombuf = p->ierrors = 0;
	p->nfindings = 0;
	p->busy_cycles = (double)p->busy_ns * p->clock_hz / 1e9;
	for (size_t i = 0; p->have_tele && i < p->t1.nports; i++) {
		const struct rxb_tele_port *b = &p->t1.ports[i];
		const struct rxb_tele_port *a = rxb_tele_port_find(&p->t0, b->id);
		if (!a)
			continue;
		p->packets += rxb_tele_delta(a->ipackets, b->ipackets);
		p->imissed += rxb_tele_delta(a->imissed, b->imissed);
		p->rx_nombuf += rxb_tele_delta(a->rx_nombuf, b->rx_nombuf);
		p->ierrors += rxb_tele_delta(a->ierrors, b->ierrors);
	}
	p->cycles_per_packet = p->packets ? p->busy_cycles / (double)p->packets : 0;
}

int rxb_profile_open(struct rxb_profile **out)
{
	struct rxb_profile *p = calloc(1, sizeof(*p));
	*out = p;
	if (!p)
		return -ENOMEM;
	p->lcore = -1;
	return 0;
}

void rxb_profile_free(struct rxb_profile *p)
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
