// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * flame_tree.c: the flame graph's merged stack tree: interned, sanitised
 * frame names, nodes with their two weights, adding stacks, clearing, freeing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/flame_priv.h"
#include "support/util.h"

static uint64_t str_hash(const char *s)
{
	uint64_t h = gt_hash64(s, strlen(s), 0x9e3779b97f4a7c15ULL);

	return h;
}

static enum flame_frame_kind guess_kind(const char *s, size_t depth)
{
	size_t n = strlen(s);

	if (depth == 0)
		return FLAME_FRAME_CATEGORY;
	if (s[0] == '[') {
		if (depth == 1)
			return FLAME_FRAME_THREAD;
		if (strstr(s, "+0x") || !strncmp(s, "[unknown]", 9))
			return FLAME_FRAME_UNRESOLVED;
		return FLAME_FRAME_SYNTHETIC;
	}
	if (n > 4 && !strcmp(s + n - 4, "_[k]"))
		return FLAME_FRAME_KERNEL;
	if (n > strlen(FLAME_INLINED_SUFFIX) &&
	    !strcmp(s + n - strlen(FLAME_INLINED_SUFFIX), FLAME_INLINED_SUFFIX))
		return FLAME_FRAME_INLINED;
	return FLAME_FRAME_USER;
}

/*
 * Copies a frame name into out: valid UTF-8 only (bad bytes become '?'),
 * no control characters, ';' as ':' (the folded format's separator), at
 * most FLAME_MAX_NAME bytes with "…" where it was cut.
 */
void flame__sanitize(const char *in, char *out)
{
	const unsigned char *p = (const unsigned char *)in;
	size_t o = 0, limit = FLAME_MAX_NAME - 4;

	while (*p) {
		size_t len = gt_utf8_len((const char *)p);
		bool bad = gt_char_unsafe((const char *)p, len);

		if (!len)
			len = 1;
		if (o + len > limit) {
			memcpy(out + o, "\xe2\x80\xa6", 3);
			o += 3;
			break;
		}
		/* One '?' per invalid byte or per control character (C1 included). */
		if (bad) {
			out[o++] = '?';
			p += len;
			continue;
		}
		if (len == 1 && *p == ';')
			out[o++] = ':';
		else
			memcpy(out + o, p, len), o += len;
		p += len;
	}
	if (!o)
		out[o++] = '?';
	out[o] = '\0';
}

/* Interns an already sanitised name. */
uint32_t flame__intern_clean(struct flame *fl, const char *s, enum flame_frame_kind kind)
{
	uint64_t h = str_hash(s);
	uint32_t id = flame__map_get(&fl->str_idx, h);

	for (uint32_t i = id; i != FLAME_NONE; i = fl->str_next[i])
		if (!strcmp(fl->str[i], s))
			return i;
	if (fl->nstr >= fl->str_cap) {
		fl->str_cap = fl->str_cap ? fl->str_cap * 2 : 256;
		fl->str = gt_xrealloc(fl->str, fl->str_cap * sizeof(*fl->str));
		fl->str_next = gt_xrealloc(fl->str_next, fl->str_cap * sizeof(*fl->str_next));
		fl->str_kind = gt_xrealloc(fl->str_kind, fl->str_cap);
	}
	fl->str[fl->nstr] = gt_xstrdup(s);
	fl->str_kind[fl->nstr] = (unsigned char)kind;
	fl->str_next[fl->nstr] = id;
	u64map_put(&fl->str_idx, h, (uint32_t)fl->nstr);
	return (uint32_t)fl->nstr++;
}

uint32_t flame__intern(struct flame *fl, const char *s, enum flame_frame_kind kind)
{
	char clean[FLAME_MAX_NAME];

	flame__sanitize(s, clean);
	return flame__intern_clean(fl, clean, kind);
}

static uint32_t new_node(struct flame *fl, uint32_t parent, uint32_t name, int cat)
{
	struct fnode *nd;

	gt_grow((void **)&fl->nodes, &fl->nodes_cap, fl->nnodes, sizeof(*fl->nodes));
	nd = &fl->nodes[fl->nnodes];
	memset(nd, 0, sizeof(*nd));
	nd->name = name;
	nd->parent = parent;
	nd->child = FLAME_NONE;
	nd->sibling = FLAME_NONE;
	nd->cat = (int16_t)cat;
	nd->kind = fl->str_kind[name];
	if (parent != FLAME_NONE) {
		nd->depth = (uint16_t)(fl->nodes[parent].depth + 1);
		nd->sibling = fl->nodes[parent].child;
		fl->nodes[parent].child = (uint32_t)fl->nnodes;
		u64map_put(&fl->child_idx, (uint64_t)parent << 32 | name, (uint32_t)fl->nnodes);
	}
	return (uint32_t)fl->nnodes++;
}

struct flame *flame__new(void)
{
	struct flame *fl = gt_xcalloc(1, sizeof(*fl));

	new_node(fl, FLAME_NONE, flame__intern_clean(fl, "all", FLAME_FRAME_CATEGORY), -1);
	return fl;
}

void flame__drop_result_caches(struct flame *fl)
{
	u64map_clear(&fl->stack_idx);
	u64map_clear(&fl->sym_idx);
	u64map_clear(&fl->thread_idx);
	fl->nsf = 0;
	fl->npool = 0;
	free(fl->gap_start);
	free(fl->gap_pieces);
	fl->gap_start = NULL;
	fl->gap_pieces = NULL;
	fl->gap_n = 0;
	fl->key_r = NULL;
}

void flame__drop_mappings(struct flame *fl)
{
	for (size_t i = 0; i < fl->nmaps; i++)
		free(fl->maps[i].path);
	free(fl->maps);
	fl->maps = NULL;
	fl->nmaps = 0;
	fl->maps_cap = NULL;
}

void flame__clear(struct flame *fl)
{
	fl->nnodes = 0;
	fl->truncated_ns = 0;
	u64map_clear(&fl->child_idx);
	new_node(fl, FLAME_NONE, flame__intern_clean(fl, "all", FLAME_FRAME_CATEGORY), -1);
}

void flame__free(struct flame *fl)
{
	if (!fl)
		return;
	flame__drop_result_caches(fl);
	flame__drop_mappings(fl);
	for (size_t i = 0; i < fl->nstr; i++)
		free(fl->str[i]);
	free(fl->str);
	free(fl->str_kind);
	free(fl->str_next);
	u64map_free(&fl->str_idx);
	free(fl->nodes);
	u64map_free(&fl->child_idx);
	u64map_free(&fl->stack_idx);
	u64map_free(&fl->sym_idx);
	u64map_free(&fl->thread_idx);
	free(fl->sf);
	free(fl->pool);
	free(fl);
}

uint64_t flame__total(const struct flame *fl, enum flame_side side)
{
	return fl->nodes[0].w[side];
}

uint64_t flame__truncated_ns(const struct flame *fl)
{
	return fl->truncated_ns;
}

/* Adds one path of string ids (root first) to the tree. */
void flame__add_path(struct flame *fl, const uint32_t *path, size_t n, int cat, uint64_t ns,
		     enum flame_side side)
{
	uint32_t cur = 0;

	if (!ns || !n)
		return;
	fl->nodes[0].w[side] += ns;
	for (size_t i = 0; i < n; i++) {
		uint32_t next = flame__map_get(&fl->child_idx, (uint64_t)cur << 32 | path[i]);

		if (next == FLAME_NONE) {
			/* A bounded tree: the rest of this stack stays with its parent. */
			if (fl->nnodes >= FLAME_MAX_NODES) {
				fl->truncated_ns += ns;
				break;
			}
			next = new_node(fl, cur, path[i], cat);
		}
		cur = next;
		fl->nodes[cur].w[side] += ns;
	}
	fl->nodes[cur].self[side] += ns;
}

void flame__add_stack(struct flame *fl, const char *const *frames, size_t n, int cat, uint64_t ns,
		      enum flame_side side)
{
	uint32_t path[FLAME_MAX_DEPTH];

	if (n > FLAME_MAX_DEPTH)
		n = FLAME_MAX_DEPTH;
	if (cat < 0 && n)
		cat = gt_cat_parse(frames[0]);
	for (size_t i = 0; i < n; i++) {
		char clean[FLAME_MAX_NAME];

		flame__sanitize(frames[i], clean);
		path[i] = flame__intern_clean(fl, clean, guess_kind(clean, i));
	}
	flame__add_path(fl, path, n, cat, ns, side);
}
