/* SPDX-License-Identifier: MIT */
/* Internals shared by flame.c, flame_svg.c and flame_export.c. */
#ifndef RXRAY_FLAME_PRIV_H
#define RXRAY_FLAME_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include "rxray/flame.h"

#define FLAME_NONE UINT32_MAX
/*
 * A node with at most this many children finds them by walking its child
 * list (siblings are created close together, so the walk stays in cache);
 * wider nodes also index their children in the (parent, name) hash.
 */
#define FLAME_LIST_MAX 8

struct flame_node {
	uint32_t name;    /* index into names */
	uint32_t parent;  /* FLAME_NONE for the root */
	uint32_t child;   /* first child (insertion order) */
	uint32_t sibling; /* next sibling */
	uint32_t depth;   /* root = 0 */
	uint32_t nchild;  /* children; above FLAME_LIST_MAX they are also hashed */
	double total;     /* weight of this frame and everything above it */
	double self;      /* weight of stacks ending here */
};

struct rxa_flame {
	/* interned names: offsets into an arena */
	char *arena;
	size_t arena_len, arena_cap;
	size_t *name_off;
	uint32_t *name_len;
	uint32_t nnames, names_cap;
	uint32_t *name_hash; /* open addressing: name id + 1, 0 = empty */
	uint32_t name_hash_cap;

	struct flame_node *nodes; /* nodes[0] is the root */
	uint32_t nnodes, nodes_cap;
	uint32_t *child_hash; /* (parent, name) -> node id + 1, wide parents only */
	uint32_t child_hash_cap, child_hashed;
	uint32_t maxdepth;

	/*
	 * The previous folded line's stack: bytes, frame end offsets and node
	 * ids. Sorted folded input shares long prefixes between neighbours, so
	 * a line only looks up the frames after the common prefix.
	 */
	char *pl;
	size_t pl_len, pl_cap;
	uint32_t *pl_end, *pl_node;
	uint32_t pl_n, pl_capn;
};

static inline const char *flame_name(const struct rxa_flame *f, uint32_t id)
{
	return f->arena + f->name_off[id];
}

/* Child of parent with this name, or FLAME_NONE. */
uint32_t rxa_flame_child_find(const struct rxa_flame *f, uint32_t parent, const char *name,
			  size_t len);
/* Children of node sorted by name; caller frees. NULL on ENOMEM (n=0: NULL ok). */
uint32_t *rxa_flame_children_sorted(const struct rxa_flame *f, uint32_t node, uint32_t *n);
/* Name hash (FNV-1a), also used for colours. */
uint32_t rxa_flame_hash(const char *s, size_t len);

#endif
