/* SPDX-License-Identifier: MIT */
/*
 * Flame graph core: interned frame names and a tree of frames keyed by
 * (parent, name) in one open-addressing table, so adding a stack costs one
 * hash probe per frame. 1M folded lines must become an SVG in <= 2 s on a
 * small machine (bench/flame), so the parser never allocates per line.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "flame_priv.h"
#include "rxray/input.h"
#include "rxray/result.h"
#include "rxray/util.h"

uint32_t rxa_flame_hash(const char *s, size_t len)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 16777619u;
	}
	return h;
}

static uint32_t child_key_hash(uint32_t parent, uint32_t name)
{
	uint64_t k = ((uint64_t)parent << 32) | name;
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	return (uint32_t)k;
}

static int grow(void **p, uint32_t *cap, uint32_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	uint32_t nc = *cap ? *cap : 64;
	while (nc < need)
		nc *= 2;
	void *np = realloc(*p, (size_t)nc * elem);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = nc;
	return 0;
}

int rxa_flame_open(struct rxa_flame **out)
{
	*out = NULL;
	struct rxa_flame *f = calloc(1, sizeof(*f));
	if (!f)
		goto fail;
	f->name_hash_cap = 1024;
	f->child_hash_cap = 1024;
	f->name_hash = calloc(f->name_hash_cap, sizeof(uint32_t));
	f->child_hash = calloc(f->child_hash_cap, sizeof(uint32_t));
	if (!f->name_hash || !f->child_hash)
		goto fail;
	if (grow((void **)&f->nodes, &f->nodes_cap, 1, sizeof(struct flame_node)))
		goto fail;
	f->nodes[0] = (struct flame_node){.name = FLAME_NONE, .parent = FLAME_NONE,
					  .child = FLAME_NONE, .sibling = FLAME_NONE};
	f->nnodes = 1;
	*out = f;
	return 0;
fail:
	rxa_flame_free(f);
	return -ENOMEM;
}

void rxa_flame_free(struct rxa_flame *f)
{
	if (!f)
		return;
	free(f->arena);
	free(f->name_off);
	free(f->name_len);
	free(f->name_hash);
	free(f->nodes);
	free(f->child_hash);
	free(f->pl);
	free(f->pl_end);
	free(f->pl_node);
	free(f);
}

static int name_rehash(struct rxa_flame *f)
{
	uint32_t cap = f->name_hash_cap * 2;
	uint32_t *t = calloc(cap, sizeof(uint32_t));
	if (!t)
		return -ENOMEM;
	for (uint32_t id = 0; id < f->nnames; id++) {
		uint32_t i = rxa_flame_hash(flame_name(f, id), f->name_len[id]) & (cap - 1);
		while (t[i])
			i = (i + 1) & (cap - 1);
		t[i] = id + 1;
	}
	free(f->name_hash);
	f->name_hash = t;
	f->name_hash_cap = cap;
	return 0;
}

/* Intern a name; returns its id, or -ENOMEM. */
static int64_t name_intern(struct rxa_flame *f, const char *s, size_t len)
{
	uint32_t mask = f->name_hash_cap - 1;
	uint32_t i = rxa_flame_hash(s, len) & mask;
	while (f->name_hash[i]) {
		uint32_t id = f->name_hash[i] - 1;
		if (f->name_len[id] == len && !memcmp(flame_name(f, id), s, len))
			return id;
		i = (i + 1) & mask;
	}
	if (grow((void **)&f->name_off, &f->names_cap, f->nnames + 1, sizeof(size_t)))
		return -ENOMEM;
	void *nl = realloc(f->name_len, (size_t)f->names_cap * sizeof(uint32_t));
	if (!nl)
		return -ENOMEM;
	f->name_len = nl;
	if (f->arena_len + len + 1 > f->arena_cap) {
		size_t nc = f->arena_cap ? f->arena_cap : 4096;
		while (nc < f->arena_len + len + 1)
			nc *= 2;
		char *na = realloc(f->arena, nc);
		if (!na)
			return -ENOMEM;
		f->arena = na;
		f->arena_cap = nc;
	}
	uint32_t id = f->nnames++;
	f->name_off[id] = f->arena_len;
	f->name_len[id] = (uint32_t)len;
	memcpy(f->arena + f->arena_len, s, len);
	f->arena[f->arena_len + len] = '\0';
	f->arena_len += len + 1;
	f->name_hash[i] = id + 1;
	if ((uint64_t)f->nnames * 2 > f->name_hash_cap && name_rehash(f))
		return -ENOMEM;
	return id;
}

static void child_hash_put(uint32_t *t, uint32_t cap, const struct rxa_flame *f, uint32_t n)
{
	uint32_t i = child_key_hash(f->nodes[n].parent, f->nodes[n].name) & (cap - 1);
	while (t[i])
		i = (i + 1) & (cap - 1);
	t[i] = n + 1;
}

static int child_rehash(struct rxa_flame *f)
{
	uint32_t cap = f->child_hash_cap * 2;
	uint32_t *t = calloc(cap, sizeof(uint32_t));
	if (!t)
		return -ENOMEM;
	for (uint32_t n = 1; n < f->nnodes; n++)
		if (f->nodes[f->nodes[n].parent].nchild > FLAME_LIST_MAX)
			child_hash_put(t, cap, f, n);
	free(f->child_hash);
	f->child_hash = t;
	f->child_hash_cap = cap;
	return 0;
}

/* Room for extra more entries at <= 50% load (a rehash indexes wide parents). */
static int child_hash_reserve(struct rxa_flame *f, uint32_t extra)
{
	while ((uint64_t)(f->child_hashed + extra) * 2 > f->child_hash_cap)
		if (child_rehash(f))
			return -ENOMEM;
	return 0;
}

static uint32_t child_lookup(const struct rxa_flame *f, uint32_t parent, uint32_t name)
{
	const struct flame_node *p = &f->nodes[parent];
	if (p->nchild <= FLAME_LIST_MAX) {
		for (uint32_t c = p->child; c != FLAME_NONE; c = f->nodes[c].sibling)
			if (f->nodes[c].name == name)
				return c;
		return FLAME_NONE;
	}
	uint32_t mask = f->child_hash_cap - 1;
	for (uint32_t i = child_key_hash(parent, name) & mask; f->child_hash[i]; i = (i + 1) & mask) {
		uint32_t n = f->child_hash[i] - 1;
		if (f->nodes[n].parent == parent && f->nodes[n].name == name)
			return n;
	}
	return FLAME_NONE;
}

/* Child of parent named id, created when absent; returns node id or -ENOMEM. */
static int64_t child_get(struct rxa_flame *f, uint32_t parent, uint32_t name)
{
	uint32_t found = child_lookup(f, parent, name);
	if (found != FLAME_NONE)
		return found;
	if (grow((void **)&f->nodes, &f->nodes_cap, f->nnodes + 1, sizeof(struct flame_node)))
		return -ENOMEM;
	uint32_t nc = f->nodes[parent].nchild;
	/* reserve before this parent counts as wide, so a rehash cannot index it twice */
	if (nc >= FLAME_LIST_MAX && child_hash_reserve(f, nc == FLAME_LIST_MAX ? nc + 1 : 1))
		return -ENOMEM;
	uint32_t n = f->nnodes++;
	struct flame_node *p = &f->nodes[parent];
	f->nodes[n] = (struct flame_node){.name = name, .parent = parent, .child = FLAME_NONE,
					  .sibling = p->child, .depth = p->depth + 1};
	p->child = n;
	p->nchild++;
	if (f->nodes[n].depth > f->maxdepth)
		f->maxdepth = f->nodes[n].depth;
	if (nc == FLAME_LIST_MAX) { /* just became wide: index all its children */
		for (uint32_t c = p->child; c != FLAME_NONE; c = f->nodes[c].sibling) {
			child_hash_put(f->child_hash, f->child_hash_cap, f, c);
			f->child_hashed++;
		}
	} else if (nc > FLAME_LIST_MAX) {
		child_hash_put(f->child_hash, f->child_hash_cap, f, n);
		f->child_hashed++;
	}
	return n;
}

uint32_t rxa_flame_child_find(const struct rxa_flame *f, uint32_t parent, const char *name,
			  size_t len)
{
	uint32_t mask = f->name_hash_cap - 1;
	for (uint32_t i = rxa_flame_hash(name, len) & mask; f->name_hash[i]; i = (i + 1) & mask) {
		uint32_t c = f->name_hash[i] - 1;
		if (f->name_len[c] == len && !memcmp(flame_name(f, c), name, len))
			return child_lookup(f, parent, c);
	}
	return FLAME_NONE;
}

/* Charge w to the path root..leaf. */
static void path_charge(struct rxa_flame *f, uint32_t leaf, double w)
{
	f->nodes[leaf].self += w;
	for (uint32_t n = leaf; n != FLAME_NONE; n = f->nodes[n].parent)
		f->nodes[n].total += w;
}

static bool name_ok(const char *s, size_t len)
{
	if (!len)
		return false;
	for (size_t i = 0; i < len; i++)
		if (s[i] == ';' || s[i] == '\n' || s[i] == '\r')
			return false;
	return true;
}

/* One frame down from node: its name interned, the child made if new.
 * The child's id (>= 0), or -errno. */
static int64_t descend(struct rxa_flame *f, uint32_t node, const char *name, size_t len)
{
	int64_t id = name_intern(f, name, len);
	return id < 0 ? id : child_get(f, node, (uint32_t)id);
}

int rxa_flame_add(struct rxa_flame *f, const char *const *frames, size_t n, double w)
{
	if (!f || (n && !frames) || !isfinite(w) || w < 0)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!frames[i] || !name_ok(frames[i], strlen(frames[i])))
			return -EINVAL;
	uint32_t node = 0;
	for (size_t i = 0; i < n; i++) {
		int64_t c = descend(f, node, frames[i], strlen(frames[i]));
		if (c < 0)
			return (int)c;
		node = (uint32_t)c;
	}
	path_charge(f, node, w);
	return 0;
}

/* Count at the end of a folded line: integer fast path, decimal otherwise. */
static bool count_parse(const char *s, size_t len, double *out)
{
	if (!len)
		return false;
	uint64_t v = 0;
	size_t i = 0;
	/* up to 19 digits cannot overflow 64 bits; the cap is INT64_MAX (counts below 2^63) */
	for (; i < len && s[i] >= '0' && s[i] <= '9' && i < 19; i++)
		v = v * 10 + (uint64_t)(s[i] - '0');
	if (i == len) {
		if (v > (uint64_t)INT64_MAX)
			return false;
		*out = (double)v;
		return true;
	}
	char buf[64];
	if (len >= sizeof(buf))
		return false;
	memcpy(buf, s, len);
	buf[len] = '\0';
	char *end;
	errno = 0;
	double d = strtod(buf, &end);
	/* below 2^63: a count a 64-bit signed counter could have held */
	if (errno || *end || !isfinite(d) || d < 0 || d >= 9223372036854775808.0 || buf[0] == '-' ||
	    buf[0] == '+' || buf[0] == ' ')
		return false;
	*out = d;
	return true;
}

int rxa_flame_add_folded(struct rxa_flame *f, const char *line, size_t len, char *err,
			 size_t errlen)
{
	while (len && (line[len - 1] == '\n' || line[len - 1] == '\r' || line[len - 1] == ' ' ||
		       line[len - 1] == '\t'))
		len--;
	if (!len || line[0] == '#')
		return 0;
	size_t sp = len;
	while (sp > 0 && line[sp - 1] != ' ' && line[sp - 1] != '\t')
		sp--;
	if (sp == 0) {
		snprintf(err, errlen, "missing count (expected \"frame;frame;... N\")");
		return -EINVAL;
	}
	double w;
	if (!count_parse(line + sp, len - sp, &w)) {
		snprintf(err, errlen, "bad count '%.*s' (expected a number in [0, 2^63))",
			 (int)(len - sp > 32 ? 32 : len - sp), line + sp);
		return -EINVAL;
	}
	size_t slen = sp - 1;
	while (slen && (line[slen - 1] == ' ' || line[slen - 1] == '\t'))
		slen--;
	if (!slen) {
		snprintf(err, errlen, "empty stack before the count");
		return -EINVAL;
	}
	if (slen >= UINT32_MAX) {
		snprintf(err, errlen, "stack longer than 4 GiB");
		return -EINVAL;
	}
	/* frames shared with the previous line: reuse their nodes */
	size_t common = 0, lim = slen < f->pl_len ? slen : f->pl_len;
	while (common < lim && line[common] == f->pl[common])
		common++;
	uint32_t k = 0, node = 0;
	while (k < f->pl_n && f->pl_end[k] <= common &&
	       (f->pl_end[k] == slen || line[f->pl_end[k]] == ';'))
		node = f->pl_node[k++];
	size_t start = k ? f->pl_end[k - 1] + 1 : 0;
	f->pl_n = k;
	f->pl_len = 0; /* invalid until the line is complete */
	for (size_t i = start; i <= slen; i++) {
		if (i < slen && line[i] != ';')
			continue;
		if (i == start) {
			snprintf(err, errlen, "empty frame name at column %zu", i + 1);
			f->pl_n = 0;
			return -EINVAL;
		}
		int64_t c = descend(f, node, line + start, i - start);
		if (c < 0)
			return (int)c;
		node = (uint32_t)c;
		if (f->pl_n == f->pl_capn) {
			uint32_t nc = f->pl_capn ? f->pl_capn * 2 : 64;
			uint32_t *ne = realloc(f->pl_end, nc * sizeof(uint32_t));
			if (ne)
				f->pl_end = ne;
			uint32_t *nn = ne ? realloc(f->pl_node, nc * sizeof(uint32_t)) : NULL;
			if (!nn) {
				f->pl_n = 0;
				return -ENOMEM;
			}
			f->pl_node = nn;
			f->pl_capn = nc;
		}
		f->pl_end[f->pl_n] = (uint32_t)i;
		f->pl_node[f->pl_n++] = node;
		start = i + 1;
	}
	if (slen > f->pl_cap) {
		size_t nc = slen * 2;
		char *np = realloc(f->pl, nc);
		if (!np) {
			f->pl_n = 0;
			return -ENOMEM;
		}
		f->pl = np;
		f->pl_cap = nc;
	}
	memcpy(f->pl, line, slen);
	f->pl_len = slen;
	path_charge(f, node, w);
	return 0;
}

int rxa_flame_read_folded(struct rxa_flame *f, FILE *in, const char *src, char *err,
			  size_t errlen)
{
	struct rxr_lines lr;
	size_t n;
	bool nl;
	int rc = 0, got;
	char why[160];
	rxr_lines_init(&lr, in, src, RXR_IN_MAX_LINE);
	while ((got = rxr_lines_next(&lr, &n, &nl, err, errlen)) > 0) {
		if (memchr(lr.buf, '\0', n)) {
			snprintf(err, errlen, "%s:%d: NUL byte in line", src, lr.line);
			rc = -EINVAL;
			goto out;
		}
		rc = rxa_flame_add_folded(f, lr.buf, n, why, sizeof(why));
		if (rc == -EINVAL) {
			snprintf(err, errlen, "%s:%d: %s", src, lr.line, why);
			goto out;
		}
		if (rc) {
			snprintf(err, errlen, "%s:%d: %s", src, lr.line, strerror(-rc));
			goto out;
		}
	}
	/* too long a line, no memory or a read error: an error, never the end of the input */
	if (got < 0)
		rc = got == -E2BIG ? -EINVAL : got;
out:
	rxr_lines_free(&lr);
	return rc;
}

int rxa_flame_read_folded_file(struct rxa_flame *f, const char *path, char *err, size_t errlen)
{
	FILE *in;
	int rc = rxr_in_open(path, 0, &in, err, errlen);
	if (rc)
		return rc;
	rc = rxa_flame_read_folded(f, in, in == stdin ? "<stdin>" : path, err, errlen);
	if (in != stdin)
		fclose(in);
	return rc;
}

int rxa_flame_add_result(struct rxa_flame *f, const struct rxr_result *r, const char *prefix)
{
	if (!f || !r || !r->nthreads)
		return -EINVAL;
	for (size_t t = 0; t < r->nthreads; t++) {
		const struct rxr_thread_result *th = &r->threads[t];
		if (!th->packets)
			continue;
		/* role#i when a role repeats (one rx worker per queue) */
		size_t same = 0, idx = 0;
		for (size_t u = 0; u < r->nthreads; u++) {
			if (strcmp(r->threads[u].role, th->role))
				continue;
			if (u < t)
				idx++;
			same++;
		}
		char role[64];
		if (same > 1)
			snprintf(role, sizeof(role), "%s#%zu", th->role, idx);
		else
			snprintf(role, sizeof(role), "%s", th->role[0] ? th->role : "thread");
		/* a role is free text: ';' would split the frame, a newline end the line */
		for (char *c = role; *c; c++)
			if (*c == ';' || *c == '\n' || *c == '\r')
				*c = '_';
		rxu_utf8_trim(role);
		for (int s = 0; s < RXP_ST_COUNT; s++) {
			if (s == RXP_ST_IDLE || !(th->stage_mask & (1u << s)) || !th->st[s].cycles)
				continue;
			const char *st[3];
			size_t n = 0;
			if (prefix)
				st[n++] = prefix;
			st[n++] = role;
			st[n++] = rxp_stage_name((enum rxp_stage)s);
			int rc = rxa_flame_add(f, st, n, (double)th->st[s].cycles / (double)th->packets);
			if (rc)
				return rc;
		}
	}
	return 0;
}

double rxa_flame_total(const struct rxa_flame *f)
{
	return f ? f->nodes[0].total : 0;
}

size_t rxa_flame_frames(const struct rxa_flame *f)
{
	return f ? f->nnodes - 1 : 0;
}

void rxa_flame_scale(struct rxa_flame *f, double k)
{
	if (!f || !(k > 0))
		return;
	for (uint32_t n = 0; n < f->nnodes; n++) {
		f->nodes[n].total *= k;
		f->nodes[n].self *= k;
	}
}

static int name_cmp(const void *a, const void *b, void *ctx)
{
	const struct rxa_flame *f = ctx;
	return strcmp(flame_name(f, f->nodes[*(const uint32_t *)a].name),
		      flame_name(f, f->nodes[*(const uint32_t *)b].name));
}

uint32_t *rxa_flame_children_sorted(const struct rxa_flame *f, uint32_t node, uint32_t *n)
{
	uint32_t cnt = 0;
	for (uint32_t c = f->nodes[node].child; c != FLAME_NONE; c = f->nodes[c].sibling)
		cnt++;
	*n = cnt;
	if (!cnt)
		return NULL;
	uint32_t *v = malloc(cnt * sizeof(uint32_t));
	if (!v)
		return NULL;
	uint32_t i = 0;
	for (uint32_t c = f->nodes[node].child; c != FLAME_NONE; c = f->nodes[c].sibling)
		v[i++] = c;
	qsort_r(v, cnt, sizeof(uint32_t), name_cmp, (void *)f);
	return v;
}
