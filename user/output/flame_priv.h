/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * flame_priv.h: the flame graph's tree as its own files see it (flame_tree.c,
 * flame_build.c, flame_stacks.c, flame_svg.c): nodes, interned names and the
 * per-result caches.  Not for other modules: they use output/flame.h.
 */
#ifndef GT_FLAME_PRIV_H
#define GT_FLAME_PRIV_H

#include <stdint.h>

#include "output/flame.h"
#include "support/u64map.h"

#define FLAME_NONE UINT32_MAX

/* ---- the tree ---- */

struct fnode {
	uint32_t name; /* string id */
	uint32_t parent, child, sibling;
	int16_t cat;
	uint8_t kind; /* enum flame_frame_kind */
	uint16_t depth;
	uint64_t w[2];	  /* total, children included, per side */
	uint64_t self[2]; /* stacks ending here */
};

/* Frames of one stack id, cached per result: ids into the string table. */
struct stack_frames {
	uint32_t off, n;
};

struct mapping {
	uint64_t start, end, pgoff;
	char *path;
};

struct flame {
	/* interned frame names */
	char **str;
	unsigned char *str_kind;
	size_t nstr, str_cap;
	struct u64map str_idx; /* name hash -> chain head; collisions resolved by strcmp */
	uint32_t *str_next;    /* chain of names sharing a hash */

	struct fnode *nodes;
	size_t nnodes, nodes_cap;
	struct u64map child_idx; /* parent << 32 | name -> node */
	uint64_t truncated_ns;

	/* per-result caches (valid while key_* match the result being added) */
	const struct an_result *key_r;
	const void *key_pieces, *key_model;
	size_t key_npieces;
	struct u64map stack_idx; /* stack id (| kernel << 32) -> index in sf */
	struct stack_frames *sf;
	size_t nsf, sf_cap;
	uint32_t *pool;
	size_t npool, pool_cap;
	struct u64map sym_idx;	  /* symbol name pointer -> string id */
	struct u64map thread_idx; /* tid -> string id */
	uint32_t *gap_start;	  /* pieces by gap (CSR), built for per-gap filters */
	uint32_t *gap_pieces;
	size_t gap_n;

	/* mappings, for [module+0xOFF] */
	const struct capture *maps_cap;
	struct mapping *maps;
	size_t nmaps;
};

/* u64map_get for the tree's maps, whose values are u32 ids: FLAME_NONE when absent. */
static inline uint32_t flame__map_get(const struct u64map *m, uint64_t key)
{
	uint64_t v;

	return u64map_get(m, key, &v) ? (uint32_t)v : FLAME_NONE;
}

/* flame_tree.c */
void flame__sanitize(const char *in, char *out);
uint32_t flame__intern_clean(struct flame *fl, const char *s, enum flame_frame_kind kind);
uint32_t flame__intern(struct flame *fl, const char *s, enum flame_frame_kind kind);
void flame__add_path(struct flame *fl, const uint32_t *path, size_t n, int cat, uint64_t ns,
		     enum flame_side side);
void flame__drop_result_caches(struct flame *fl);
void flame__drop_mappings(struct flame *fl);

#endif /* GT_FLAME_PRIV_H */
