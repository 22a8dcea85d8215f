// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * flame.c: `gaptrace flame` and the flame-graph library behind it — merges
 * the analysis's attributed pieces into a stack tree and writes it as folded
 * stacks or as an interactive SVG rendered here (no external resources).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/capture.h"
#include "cmds.h"
#include "symbols/demangle.h"
#include "output/flame.h"
#include "output/json.h"
#include "output/report.h"
#include "support/util.h"

/* Tableau 10: distinct for the common colour-vision deficiencies, calm on white. */
const char *const gt_cat_color[GT_CAT_MAX] = {
    [GT_CAT_SCHED] = "#e15759",	  /* red */
    [GT_CAT_LOCK] = "#f28e2b",	  /* orange */
    [GT_CAT_ALLOC] = "#edc948",	  /* yellow */
    [GT_CAT_WAIT] = "#76b7b2",	  /* teal */
    [GT_CAT_IO] = "#4e79a7",	  /* blue */
    [GT_CAT_SLEEP] = "#9c755f",	  /* brown */
    [GT_CAT_CUDA] = "#59a14f",	  /* green */
    [GT_CAT_CPU] = "#b07aa1",	  /* purple */
    [GT_CAT_UNKNOWN] = "#bab0ac", /* grey */
};

const unsigned char gt_cat_ansi[GT_CAT_MAX] = {
    [GT_CAT_SCHED] = 167, [GT_CAT_LOCK] = 208, [GT_CAT_ALLOC] = 221,
    [GT_CAT_WAIT] = 109,  [GT_CAT_IO] = 67,    [GT_CAT_SLEEP] = 137,
    [GT_CAT_CUDA] = 71,	  [GT_CAT_CPU] = 139,  [GT_CAT_UNKNOWN] = 248,
};

#define NONE	     UINT32_MAX
#define MAX_MAPPINGS 65536

/* ---- u64 -> u32 open-addressing map ---- */

struct map {
	uint64_t *keys;
	uint32_t *vals;
	size_t cap, n; /* cap: power of two; a slot is free when vals[i] == NONE */
};

static size_t map_slot(uint64_t key, size_t cap)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdULL;
	key ^= key >> 33;
	return (size_t)key & (cap - 1);
}

static uint32_t map_get(const struct map *m, uint64_t key)
{
	if (!m->cap)
		return NONE;
	for (size_t i = map_slot(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
		if (m->vals[i] == NONE)
			return NONE;
		if (m->keys[i] == key)
			return m->vals[i];
	}
}

static void map_put(struct map *m, uint64_t key, uint32_t val);

static void map_grow(struct map *m)
{
	struct map old = *m;

	m->cap = old.cap ? old.cap * 2 : 256;
	m->n = 0;
	m->keys = gt_xmalloc(m->cap * sizeof(*m->keys));
	m->vals = gt_xmalloc(m->cap * sizeof(*m->vals));
	memset(m->vals, 0xff, m->cap * sizeof(*m->vals));
	for (size_t i = 0; i < old.cap; i++)
		if (old.vals[i] != NONE)
			map_put(m, old.keys[i], old.vals[i]);
	free(old.keys);
	free(old.vals);
}

static void map_put(struct map *m, uint64_t key, uint32_t val)
{
	size_t i;

	if ((m->n + 1) * 2 > m->cap)
		map_grow(m);
	for (i = map_slot(key, m->cap); m->vals[i] != NONE; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == key) {
			m->vals[i] = val;
			return;
		}
	}
	m->keys[i] = key;
	m->vals[i] = val;
	m->n++;
}

static void map_clear(struct map *m)
{
	if (m->cap)
		memset(m->vals, 0xff, m->cap * sizeof(*m->vals));
	m->n = 0;
}

static void map_free(struct map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

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
	struct map str_idx; /* name hash -> chain head; collisions resolved by strcmp */
	uint32_t *str_next; /* chain of names sharing a hash */

	struct fnode *nodes;
	size_t nnodes, nodes_cap;
	struct map child_idx; /* parent << 32 | name -> node */
	uint64_t truncated_ns;

	/* per-result caches (valid while key_* match the result being added) */
	const struct an_result *key_r;
	const void *key_pieces, *key_model;
	size_t key_npieces;
	struct map stack_idx; /* stack id (| kernel << 32) -> index in sf */
	struct stack_frames *sf;
	size_t nsf, sf_cap;
	uint32_t *pool;
	size_t npool, pool_cap;
	struct map sym_idx;    /* symbol name pointer -> string id */
	struct map thread_idx; /* tid -> string id */
	uint32_t *gap_start;   /* pieces by gap (CSR), built for per-gap filters */
	uint32_t *gap_pieces;
	size_t gap_n;

	/* mappings, for [module+0xOFF] */
	const struct capture *maps_cap;
	struct mapping *maps;
	size_t nmaps;
};

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
	return FLAME_FRAME_USER;
}

/*
 * Copies a frame name into out: valid UTF-8 only (bad bytes become '?'),
 * no control characters, ';' as ':' (the folded format's separator), at
 * most FLAME_MAX_NAME bytes with "…" where it was cut.
 */
static void sanitize(const char *in, char *out)
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
static uint32_t intern_clean(struct flame *fl, const char *s, enum flame_frame_kind kind)
{
	uint64_t h = str_hash(s);
	uint32_t id = map_get(&fl->str_idx, h);

	for (uint32_t i = id; i != NONE; i = fl->str_next[i])
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
	map_put(&fl->str_idx, h, (uint32_t)fl->nstr);
	return (uint32_t)fl->nstr++;
}

static uint32_t intern(struct flame *fl, const char *s, enum flame_frame_kind kind)
{
	char clean[FLAME_MAX_NAME];

	sanitize(s, clean);
	return intern_clean(fl, clean, kind);
}

static uint32_t new_node(struct flame *fl, uint32_t parent, uint32_t name, int cat)
{
	struct fnode *nd;

	gt_grow((void **)&fl->nodes, &fl->nodes_cap, fl->nnodes, sizeof(*fl->nodes));
	nd = &fl->nodes[fl->nnodes];
	memset(nd, 0, sizeof(*nd));
	nd->name = name;
	nd->parent = parent;
	nd->child = NONE;
	nd->sibling = NONE;
	nd->cat = (int16_t)cat;
	nd->kind = fl->str_kind[name];
	if (parent != NONE) {
		nd->depth = (uint16_t)(fl->nodes[parent].depth + 1);
		nd->sibling = fl->nodes[parent].child;
		fl->nodes[parent].child = (uint32_t)fl->nnodes;
		map_put(&fl->child_idx, (uint64_t)parent << 32 | name, (uint32_t)fl->nnodes);
	}
	return (uint32_t)fl->nnodes++;
}

struct flame *flame__new(void)
{
	struct flame *fl = gt_xcalloc(1, sizeof(*fl));

	new_node(fl, NONE, intern_clean(fl, "all", FLAME_FRAME_CATEGORY), -1);
	return fl;
}

static void drop_result_caches(struct flame *fl)
{
	map_clear(&fl->stack_idx);
	map_clear(&fl->sym_idx);
	map_clear(&fl->thread_idx);
	fl->nsf = 0;
	fl->npool = 0;
	free(fl->gap_start);
	free(fl->gap_pieces);
	fl->gap_start = NULL;
	fl->gap_pieces = NULL;
	fl->gap_n = 0;
	fl->key_r = NULL;
}

static void drop_mappings(struct flame *fl)
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
	map_clear(&fl->child_idx);
	new_node(fl, NONE, intern_clean(fl, "all", FLAME_FRAME_CATEGORY), -1);
}

void flame__free(struct flame *fl)
{
	if (!fl)
		return;
	drop_result_caches(fl);
	drop_mappings(fl);
	for (size_t i = 0; i < fl->nstr; i++)
		free(fl->str[i]);
	free(fl->str);
	free(fl->str_kind);
	free(fl->str_next);
	map_free(&fl->str_idx);
	free(fl->nodes);
	map_free(&fl->child_idx);
	map_free(&fl->stack_idx);
	map_free(&fl->sym_idx);
	map_free(&fl->thread_idx);
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
static void add_path(struct flame *fl, const uint32_t *path, size_t n, int cat, uint64_t ns,
		     enum flame_side side)
{
	uint32_t cur = 0;

	if (!ns || !n)
		return;
	fl->nodes[0].w[side] += ns;
	for (size_t i = 0; i < n; i++) {
		uint32_t next = map_get(&fl->child_idx, (uint64_t)cur << 32 | path[i]);

		if (next == NONE) {
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

		sanitize(frames[i], clean);
		path[i] = intern_clean(fl, clean, guess_kind(clean, i));
	}
	add_path(fl, path, n, cat, ns, side);
}

/* ---- from analysis results ---- */

void flame_filter__init(struct flame_filter *f)
{
	memset(f, 0, sizeof(*f));
	f->cat = -1;
	f->kind = -1;
	f->unit = -1;
	f->device = -1;
	f->gap = -1;
}

bool flame_filter__match_gap(const struct flame_filter *f, const struct an_gap *g)
{
	if (f->kind >= 0 && (int)g->kind != f->kind)
		return false;
	if (f->device >= 0 && (int64_t)g->device != f->device)
		return false;
	if (f->gap >= 0 && (int64_t)g->index != f->gap)
		return false;
	if (f->unit >= 0 && g->unit_before != f->unit && g->unit_after != f->unit)
		return false;
	return true;
}

static int mapping_cb(const struct capture_mapping *m, void *ctx)
{
	struct flame *fl = ctx;
	struct mapping *mp;

	if (fl->nmaps >= MAX_MAPPINGS || !m->path_len || m->end <= m->start)
		return 0;
	if (!(fl->nmaps & (fl->nmaps + 1)) || !fl->maps)
		fl->maps = gt_xrealloc(fl->maps, (fl->nmaps + 1) * 2 * sizeof(*fl->maps));
	mp = &fl->maps[fl->nmaps++];
	mp->start = m->start;
	mp->end = m->end;
	mp->pgoff = m->pgoff;
	mp->path = strndup(m->path, m->path_len);
	if (!mp->path)
		fl->nmaps--;
	return 0;
}

/* Reads the capture's MAPPINGS once (the reader is rewound; analysis is done with it). */
static void load_mappings(struct flame *fl, struct capture *c)
{
	struct capture_block b;

	if (fl->maps_cap == c)
		return;
	drop_mappings(fl);
	fl->maps_cap = c;
	if (capture__rewind(c))
		return;
	while (capture__next(c, &b) == 1)
		if (b.type == GT_BLK_MAPPINGS)
			capture__mappings(b.body, b.len, mapping_cb, fl);
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s && s[1] ? s + 1 : path;
}

struct resolve_ctx {
	struct flame *fl;
	bool kernel;
	uint32_t ids[FLAME_MAX_DEPTH];
	size_t n;
};

static uint32_t frame_name(struct flame *fl, const char *name, const char *module, uint64_t ip,
			   bool kernel)
{
	char buf[FLAME_MAX_NAME + 64];
	uint64_t key = (uint64_t)(uintptr_t)name ^ (kernel ? 1ULL << 63 : 0);
	uint32_t id;

	if (name) {
		char *d;

		id = map_get(&fl->sym_idx, key);
		if (id != NONE)
			return id;
		d = gt_demangle(name);
		snprintf(buf, sizeof(buf), "%.*s%s", FLAME_MAX_NAME, d ? d : name,
			 kernel ? "_[k]" : "");
		free(d);
		id = intern(fl, buf, kernel ? FLAME_FRAME_KERNEL : FLAME_FRAME_USER);
		map_put(&fl->sym_idx, key, id);
		return id;
	}
	if (module && *module && !kernel) {
		for (size_t i = 0; i < fl->nmaps; i++) {
			const struct mapping *m = &fl->maps[i];

			if (ip >= m->start && ip < m->end && !strcmp(m->path, module)) {
				snprintf(buf, sizeof(buf), "[%.200s+0x%llx]", base_name(module),
					 (unsigned long long)(ip - m->start + m->pgoff));
				return intern(fl, buf, FLAME_FRAME_UNRESOLVED);
			}
		}
		snprintf(buf, sizeof(buf), "[%.200s]", base_name(module));
		return intern(fl, buf, FLAME_FRAME_UNRESOLVED);
	}
	return intern_clean(fl, kernel ? "[unknown]_[k]" : "[unknown]", FLAME_FRAME_UNRESOLVED);
}

/* gaptrace's own BPF programs, on top of every stack taken at sched_switch. */
static bool tracer_frame(const char *name)
{
	static const char *const prefixes[] = {"bpf_prog_", "bpf_trace_run", "__bpf_trace_",
					       "__traceiter_", "bpf_get_stack"};

	for (size_t i = 0; i < GT_ARRAY_SIZE(prefixes); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

static void resolve_cb(const char *name, const char *module, uint64_t ip, void *ctx)
{
	struct resolve_ctx *rc = ctx;

	/* Called leaf first: drop the tracer's frames before the thread's own. */
	if (rc->kernel && !rc->n && name && tracer_frame(name))
		return;
	if (rc->n < FLAME_MAX_DEPTH)
		rc->ids[rc->n++] = frame_name(rc->fl, name, module, ip, rc->kernel);
}

/* Frames of a stack id, root first, from the per-result cache. */
static const struct stack_frames *stack_frames(struct flame *fl, const struct an_result *r,
					       int32_t id, bool kernel)
{
	uint64_t key = (uint64_t)(uint32_t)id | (kernel ? 1ULL << 32 : 0);
	uint32_t idx = map_get(&fl->stack_idx, key);
	struct resolve_ctx rc = {.fl = fl, .kernel = kernel};
	struct stack_frames *s;

	if (idx != NONE)
		return &fl->sf[idx];
	an_result__stack(r, id, resolve_cb, &rc);
	gt_grow((void **)&fl->sf, &fl->sf_cap, fl->nsf, sizeof(*fl->sf));
	if (fl->npool + rc.n > fl->pool_cap) {
		fl->pool_cap = GT_MAX(fl->pool_cap * 2, fl->npool + rc.n + 1024);
		fl->pool = gt_xrealloc(fl->pool, fl->pool_cap * sizeof(*fl->pool));
	}
	s = &fl->sf[fl->nsf];
	s->off = (uint32_t)fl->npool;
	s->n = (uint32_t)rc.n;
	/* an_result__stack walks leaf first; trees read root first. */
	for (size_t i = 0; i < rc.n; i++)
		fl->pool[fl->npool++] = rc.ids[rc.n - 1 - i];
	map_put(&fl->stack_idx, key, (uint32_t)fl->nsf);
	return &fl->sf[fl->nsf++];
}

static uint32_t thread_frame(struct flame *fl, const struct an_result *r, uint32_t tid)
{
	uint32_t id = map_get(&fl->thread_idx, tid);
	const char *comm;
	char buf[64];

	if (id != NONE)
		return id;
	comm = tid ? an_result__thread_name(r, tid) : NULL;
	if (!tid)
		snprintf(buf, sizeof(buf), "[no launch record]");
	else if (!comm || !strcmp(comm, "?"))
		snprintf(buf, sizeof(buf), "[tid %u]", tid);
	else
		snprintf(buf, sizeof(buf), "[%.16s]", comm);
	id = intern(fl, buf, FLAME_FRAME_THREAD);
	map_put(&fl->thread_idx, tid, id);
	return id;
}

static uint32_t kind_frame(struct flame *fl, const struct an_result *r, const struct an_piece *p)
{
	static const char *const names[] = {
	    [GT_PIECE_BLOCKED] = "[blocked]",
	    [GT_PIECE_RUNQUEUE] = "[run queue]",
	    [GT_PIECE_PREEMPTED] = "[preempted]",
	    [GT_PIECE_SAMPLE] = "[on CPU]",
	    [GT_PIECE_CALL] = "[call]",
	    [GT_PIECE_LAUNCH] = "[launch latency]",
	    [GT_PIECE_LOST] = "[lost events]",
	    [GT_PIECE_UNTRACED] = "[untraced thread]",
	    [GT_PIECE_ONCPU] = "[on CPU, not sampled]",
	};
	char buf[160];

	if (p->kind == GT_PIECE_CALL) {
		const char *fn =
		    p->func_id == UINT32_MAX ? NULL : an_result__probe_name(r, p->func_id);

		if (p->func_id == UINT32_MAX)
			snprintf(buf, sizeof(buf), "[CUDA API]");
		else if (fn)
			snprintf(buf, sizeof(buf), "[%.128s]", fn);
		else
			snprintf(buf, sizeof(buf), "[probe %u]", p->func_id);
		return intern(fl, buf, FLAME_FRAME_SYNTHETIC);
	}
	if (p->kind < GT_ARRAY_SIZE(names) && names[p->kind])
		return intern_clean(fl, names[p->kind], FLAME_FRAME_SYNTHETIC);
	return intern_clean(fl, "[other]", FLAME_FRAME_SYNTHETIC);
}

static void add_piece(struct flame *fl, const struct an_result *r, const struct an_piece *p,
		      enum flame_side side)
{
	uint32_t path[FLAME_MAX_DEPTH];
	int cat = p->cat < GT_CAT_MAX ? p->cat : GT_CAT_UNKNOWN;
	size_t n = 0;

	path[n++] = intern_clean(fl, gt_cat_names[cat], FLAME_FRAME_CATEGORY);
	path[n++] = thread_frame(fl, r, p->tid);
	for (int k = 0; k < 2; k++) {
		int32_t id = k ? p->kstack : p->ustack;
		const struct stack_frames *s;

		if (id < 0)
			continue;
		s = stack_frames(fl, r, id, k);
		for (uint32_t i = 0; i < s->n && n < FLAME_MAX_DEPTH - 1; i++)
			path[n++] = fl->pool[s->off + i];
	}
	if (n == 2 || p->kind == GT_PIECE_RUNQUEUE || p->kind == GT_PIECE_PREEMPTED)
		path[n++] = kind_frame(fl, r, p);
	add_path(fl, path, n, cat, p->ns, side);
}

/* Pieces grouped by gap (counting sort), so one gap's tree costs its own pieces. */
static void index_gaps(struct flame *fl, const struct an_result *r)
{
	size_t ng = r->ngaps;

	fl->gap_n = ng;
	fl->gap_start = gt_xcalloc(ng + 1, sizeof(*fl->gap_start));
	fl->gap_pieces = gt_xmalloc((r->npieces ? r->npieces : 1) * sizeof(*fl->gap_pieces));
	for (size_t i = 0; i < r->npieces; i++)
		if (r->pieces[i].gap < ng)
			fl->gap_start[r->pieces[i].gap + 1]++;
	for (size_t g = 0; g < ng; g++)
		fl->gap_start[g + 1] += fl->gap_start[g];
	{
		uint32_t *fill = gt_xmalloc((ng + 1) * sizeof(*fill));

		memcpy(fill, fl->gap_start, (ng + 1) * sizeof(*fill));
		for (size_t i = 0; i < r->npieces; i++)
			if (r->pieces[i].gap < ng)
				fl->gap_pieces[fill[r->pieces[i].gap]++] = (uint32_t)i;
		free(fill);
	}
}

int flame__add_result(struct flame *fl, const struct an_result *r, const struct flame_filter *f,
		      enum flame_side side)
{
	struct flame_filter all;
	bool *ok;

	if (!f) {
		flame_filter__init(&all);
		f = &all;
	}
	if (!r->pieces && r->ngaps)
		return -1;
	if (fl->key_r != r || fl->key_pieces != r->pieces || fl->key_npieces != r->npieces ||
	    fl->key_model != r->model) {
		drop_result_caches(fl);
		fl->key_r = r;
		fl->key_pieces = r->pieces;
		fl->key_npieces = r->npieces;
		fl->key_model = r->model;
	}
	if (f->cap)
		load_mappings(fl, f->cap);
	if (f->gap >= 0) {
		/* One gap (a report's top stacks, once per gap): no pass over all gaps. */
		size_t g = (size_t)f->gap;

		if (!fl->gap_start)
			index_gaps(fl, r);
		if ((uint64_t)f->gap < fl->gap_n && g < r->ngaps && r->gaps[g].index == g &&
		    flame_filter__match_gap(f, &r->gaps[g])) {
			uint32_t from = fl->gap_start[f->gap], to = fl->gap_start[f->gap + 1];

			for (uint32_t i = from; i < to; i++) {
				const struct an_piece *p = &r->pieces[fl->gap_pieces[i]];

				if (f->cat < 0 || p->cat == f->cat)
					add_piece(fl, r, p, side);
			}
		}
	} else {
		/* Gap indexes are positions in r->gaps (an_gap.index == position). */
		ok = gt_xcalloc(r->ngaps + 1, sizeof(*ok));
		for (size_t g = 0; g < r->ngaps; g++)
			ok[g] = r->gaps[g].index == g && flame_filter__match_gap(f, &r->gaps[g]);
		for (size_t i = 0; i < r->npieces; i++) {
			const struct an_piece *p = &r->pieces[i];

			if (p->gap < r->ngaps && ok[p->gap] && (f->cat < 0 || p->cat == f->cat))
				add_piece(fl, r, p, side);
		}
		free(ok);
	}
	return 0;
}

struct flame *flame__from_result(const struct an_result *r, const struct flame_filter *f)
{
	struct flame *fl = flame__new();

	if (flame__add_result(fl, r, f, FLAME_AFTER)) {
		flame__free(fl);
		return NULL;
	}
	return fl;
}

/* ---- walking ---- */

/* Path of node (root excluded) as string ids, root first; returns its length. */
static size_t node_path(const struct flame *fl, uint32_t node, uint32_t *ids)
{
	size_t n = fl->nodes[node].depth, i = n;

	for (uint32_t c = node; c && i; c = fl->nodes[c].parent)
		ids[--i] = c;
	return n;
}

struct line {
	char *text;
	uint64_t a, b;
};

static int cmp_line(const void *x, const void *y)
{
	return strcmp(((const struct line *)x)->text, ((const struct line *)y)->text);
}

static int write_folded(const struct flame *fl, FILE *out, bool both)
{
	struct line *lines = NULL;
	size_t nlines = 0, cap = 0;
	uint32_t ids[FLAME_MAX_DEPTH + 1];
	int ret = 0;

	for (uint32_t i = 1; i < fl->nnodes; i++) {
		const struct fnode *nd = &fl->nodes[i];
		size_t n, len = 0;
		char *t;

		if (!nd->self[FLAME_AFTER] && !(both && nd->self[FLAME_BEFORE]))
			continue;
		n = node_path(fl, i, ids);
		for (size_t k = 0; k < n; k++)
			len += strlen(fl->str[fl->nodes[ids[k]].name]) + 1;
		t = gt_xmalloc(len + 1);
		len = 0;
		for (size_t k = 0; k < n; k++) {
			const char *s = fl->str[fl->nodes[ids[k]].name];
			size_t sl = strlen(s);

			if (k)
				t[len++] = ';';
			memcpy(t + len, s, sl);
			len += sl;
		}
		t[len] = '\0';
		gt_grow((void **)&lines, &cap, nlines, sizeof(*lines));
		lines[nlines++] = (struct line){t, nd->self[FLAME_AFTER], nd->self[FLAME_BEFORE]};
	}
	gt_sort(lines, nlines, sizeof(*lines), cmp_line);
	for (size_t i = 0; i < nlines; i++) {
		if (both)
			fprintf(out, "%s %llu %llu\n", lines[i].text,
				(unsigned long long)lines[i].b, (unsigned long long)lines[i].a);
		else
			fprintf(out, "%s %llu\n", lines[i].text, (unsigned long long)lines[i].a);
		free(lines[i].text);
	}
	free(lines);
	if (fflush(out) || ferror(out))
		ret = -1;
	return ret;
}

int flame__write_folded(const struct flame *fl, FILE *out)
{
	return write_folded(fl, out, false);
}

int flame__write_folded_diff(const struct flame *fl, FILE *out)
{
	return write_folded(fl, out, true);
}

/* ---- top stacks ---- */

struct top_ent {
	uint32_t node;
	uint64_t ns;
};

static const struct flame *top_fl; /* qsort has no context argument */

static int cmp_top(const void *x, const void *y)
{
	const struct top_ent *a = x, *b = y;

	if (a->ns != b->ns)
		return a->ns > b->ns ? -1 : 1;
	return strcmp(top_fl->str[top_fl->nodes[a->node].name],
		      top_fl->str[top_fl->nodes[b->node].name]);
}

size_t flame__top_stacks(const struct flame *fl, int cat, size_t n,
			 void (*cb)(const struct flame_stack *s, void *ctx), void *ctx)
{
	struct top_ent *ents = NULL;
	size_t nents = 0, cap = 0, shown;

	for (uint32_t i = 1; i < fl->nnodes; i++) {
		const struct fnode *nd = &fl->nodes[i];

		if (!nd->self[FLAME_AFTER] || (cat >= 0 && nd->cat != cat))
			continue;
		gt_grow((void **)&ents, &cap, nents, sizeof(*ents));
		ents[nents++] = (struct top_ent){i, nd->self[FLAME_AFTER]};
	}
	top_fl = fl;
	gt_sort(ents, nents, sizeof(*ents), cmp_top);
	shown = GT_MIN(n, nents);
	for (size_t i = 0; i < shown; i++) {
		uint32_t ids[FLAME_MAX_DEPTH + 1];
		const char *frames[FLAME_MAX_DEPTH + 1];
		unsigned char kinds[FLAME_MAX_DEPTH + 1];
		const struct fnode *nd = &fl->nodes[ents[i].node];
		size_t k = node_path(fl, ents[i].node, ids);
		struct flame_stack s = {.cat = nd->cat,
					.ns = nd->self[FLAME_AFTER],
					.before_ns = nd->self[FLAME_BEFORE],
					.frames = frames,
					.kinds = kinds,
					.nframes = k};

		for (size_t j = 0; j < k; j++) {
			frames[j] = fl->str[fl->nodes[ids[j]].name];
			kinds[j] = fl->nodes[ids[j]].kind;
		}
		cb(&s, ctx);
	}
	free(ents);
	return shown;
}

size_t flame_stack__summary(const struct flame_stack *s, const char **out, size_t max)
{
	size_t n = 0, users = 0;

	if (!max || s->nframes < 2)
		return 0;
	for (size_t i = 2; i < s->nframes; i++)
		users += s->kinds[i] == FLAME_FRAME_USER;
	/* A synthetic leaf says what the time was ("[run queue]"): keep it first. */
	if (s->kinds[s->nframes - 1] == FLAME_FRAME_SYNTHETIC)
		out[n++] = s->frames[s->nframes - 1];
	for (size_t i = s->nframes; i-- > 2 && n < max;) {
		unsigned k = s->kinds[i];

		if (k == (users ? FLAME_FRAME_USER : FLAME_FRAME_KERNEL))
			out[n++] = s->frames[i];
	}
	return n;
}

const char *flame_stack__thread(const struct flame_stack *s, char *buf, size_t len)
{
	const char *t;
	size_t n;

	if (s->nframes < 2 || s->kinds[1] != FLAME_FRAME_THREAD)
		return NULL;
	t = s->frames[1];
	n = strlen(t);
	if (n >= 2 && t[0] == '[' && t[n - 1] == ']') {
		t++;
		n -= 2;
	}
	snprintf(buf, len, "%.*s", (int)n, t);
	return buf;
}

/* ---- report helpers ---- */

/* A frame for a one-line summary: at most max_chars characters, "…" when cut. */
static const char *short_frame(const char *s, char *buf, size_t max_chars)
{
	size_t chars = 0, cut = 0;

	for (size_t i = 0; s[i]; i++) {
		if (((unsigned char)s[i] & 0xc0) == 0x80)
			continue;
		if (chars == max_chars - 1)
			cut = i;
		chars++;
	}
	if (chars <= max_chars)
		return s;
	memcpy(buf, s, cut);
	memcpy(buf + cut, "\xe2\x80\xa6", 4);
	return buf;
}

/* One summary line; stacks that summarise alike (differing only in kernel
 * or unresolved frames) are merged so the list shows distinct places. */
struct top_line {
	char *text;
	uint64_t ns;
};

struct top_print {
	struct top_line *lines;
	size_t n, cap;
};

static void top_collect_cb(const struct flame_stack *s, void *ctx)
{
	struct top_print *tp = ctx;
	const char *sum[4];
	size_t n = flame_stack__summary(s, sum, GT_ARRAY_SIZE(sum)), o;
	char thr[64], buf[FLAME_MAX_NAME + 4], line[1024];

	o = (size_t)snprintf(line, sizeof(line),
			     "%s: ", flame_stack__thread(s, thr, sizeof(thr)) ?: "?");
	if (!n)
		snprintf(line + o, sizeof(line) - o, "(no stack)");
	for (size_t i = 0; i < n && o < sizeof(line); i++)
		o += (size_t)snprintf(line + o, sizeof(line) - o, "%s%s", i ? " \xe2\x86\x90 " : "",
				      short_frame(sum[i], buf, 60));
	for (size_t i = 0; i < tp->n; i++) {
		if (!strcmp(tp->lines[i].text, line)) {
			tp->lines[i].ns += s->ns;
			return;
		}
	}
	gt_grow((void **)&tp->lines, &tp->cap, tp->n, sizeof(*tp->lines));
	tp->lines[tp->n++] = (struct top_line){gt_xstrdup(line), s->ns};
}

static int cmp_top_line(const void *x, const void *y)
{
	const struct top_line *a = x, *b = y;

	if (a->ns != b->ns)
		return a->ns > b->ns ? -1 : 1;
	return strcmp(a->text, b->text);
}

void flame__print_top_stacks(FILE *f, const struct an_result *r, size_t per_cat)
{
	struct flame *fl = r->pieces ? flame__from_result(r, NULL) : NULL;
	char d[32];

	if (!fl || !flame__total(fl, FLAME_AFTER)) {
		flame__free(fl);
		return;
	}
	fprintf(f,
		"\nTop stacks by category (heaviest %zu each; leaf first, share of the "
		"category; 'gaptrace flame' draws them all)\n",
		per_cat);
	for (int c = 0; c < GT_CAT_MAX; c++) {
		struct top_print tp = {};

		if (!r->totals[c])
			continue;
		fprintf(f, "  %s %s\n", gt_cat_names[c], gt_fmt_dur(r->totals[c], d, sizeof(d)));
		/* Bounded: the tree holds at most FLAME_MAX_NODES stacks. */
		flame__top_stacks(fl, c, FLAME_MAX_NODES, top_collect_cb, &tp);
		gt_sort(tp.lines, tp.n, sizeof(*tp.lines), cmp_top_line);
		for (size_t i = 0; i < tp.n; i++) {
			if (i < per_cat)
				fprintf(f, "    %10s %5.1f%%  %s\n",
					gt_fmt_dur(tp.lines[i].ns, d, sizeof(d)),
					100.0 * (double)tp.lines[i].ns / (double)r->totals[c],
					tp.lines[i].text);
			free(tp.lines[i].text);
		}
		free(tp.lines);
	}
	flame__free(fl);
}

static void json_top_cb(const struct flame_stack *s, void *ctx)
{
	struct json *j = ctx;
	char thr[64];
	size_t first = s->nframes >= 2 && s->kinds[1] == FLAME_FRAME_THREAD ? 2 : 1;

	json_obj_begin(j);
	json_kstr(j, "category", s->nframes ? s->frames[0] : "unknown");
	json_ku64(j, "ns", s->ns);
	json_kstr(j, "thread_name", flame_stack__thread(s, thr, sizeof(thr)) ?: "");
	json_key(j, "frames");
	json_arr_begin(j);
	for (size_t i = s->nframes; i-- > first;)
		json_str(j, s->frames[i]);
	json_arr_end(j);
	json_obj_end(j);
}

void flame__json_top_stacks(struct json *j, struct flame *scratch, const struct an_result *r,
			    uint32_t gap, size_t n)
{
	struct flame_filter f;

	json_key(j, "top_stacks");
	json_arr_begin(j);
	flame_filter__init(&f);
	f.gap = gap;
	flame__clear(scratch);
	if (r->pieces && !flame__add_result(scratch, r, &f, FLAME_AFTER))
		flame__top_stacks(scratch, -1, n, json_top_cb, j);
	json_arr_end(j);
}

/* ---- SVG ---- */

#define SVG_FRAME_H 16
#define SVG_FONT    12
#define SVG_CHAR_W  (SVG_FONT * 0.62) /* DejaVu Sans / Verdana average advance */
#define SVG_PAD	    10
#define SVG_TOP	    84
#define SVG_BOTTOM  34

/* Label that fits pw pixels: the name, or its start with "..", or nothing. */
static void xml_label(FILE *f, const char *name, double pw)
{
	long fit = (long)((pw - 6) / SVG_CHAR_W);
	size_t chars = 0, bytes = 0, cut = 0;
	char buf[FLAME_MAX_NAME + 4];

	if (fit < 3)
		return;
	for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
		if ((*p & 0xc0) != 0x80) {
			if ((long)chars == fit - 2)
				cut = bytes;
			chars++;
		}
		bytes++;
	}
	if ((long)chars <= fit) {
		gt_xml_puts(f, name);
		return;
	}
	memcpy(buf, name, cut);
	memcpy(buf + cut, "..", 3);
	gt_xml_puts(f, buf);
}

struct rgb {
	int r, g, b;
};

static struct rgb hex_rgb(const char *hex)
{
	unsigned v = (unsigned)strtoul(hex + 1, NULL, 16);

	return (struct rgb){(int)(v >> 16) & 255, (int)(v >> 8) & 255, (int)v & 255};
}

static int clamp255(double v)
{
	return v < 0 ? 0 : v > 255 ? 255 : (int)(v + 0.5);
}

static struct rgb node_fill(const struct flame *fl, const struct fnode *nd,
			    const struct flame_svg_opts *o)
{
	if (o->differential) {
		double a = (double)nd->w[FLAME_AFTER], b = (double)nd->w[FLAME_BEFORE];
		double mx = a > b ? a : b, t = mx > 0 ? (a - b) / mx : 0;
		int fade = clamp255(235 * (1 - (t < 0 ? -t : t)));

		if (t > 0)
			return (struct rgb){255, fade, fade};
		if (t < 0)
			return (struct rgb){fade, fade, 255};
		return (struct rgb){235, 235, 235};
	}
	if (nd->depth == 0 || nd->cat < 0 || nd->cat >= GT_CAT_MAX)
		return (struct rgb){200, 200, 200};
	{
		struct rgb c = hex_rgb(gt_cat_color[nd->cat]);
		const char *name = fl->str[nd->name];
		/* Neighbouring frames differ a little in lightness, stably by name. */
		uint64_t h = gt_hash64(name, strlen(name), 7) % 1000;
		double v = nd->depth <= 1 ? 0 : (double)h / 1000.0 * 0.36 - 0.18;

		if (nd->kind == FLAME_FRAME_THREAD)
			v = -0.12;
		if (v > 0)
			return (struct rgb){clamp255(c.r + (255 - c.r) * v),
					    clamp255(c.g + (255 - c.g) * v),
					    clamp255(c.b + (255 - c.b) * v)};
		return (struct rgb){clamp255(c.r * (1 + v)), clamp255(c.g * (1 + v)),
				    clamp255(c.b * (1 + v))};
	}
}

static const char svg_style[] =
    "<style>\n"
    "text { font-family: Verdana, 'DejaVu Sans', sans-serif; font-size: 12px; fill: #000; }\n"
    ".gtf-title { font-size: 17px; font-weight: bold; }\n"
    ".gtf-sub { font-size: 12px; fill: #555; }\n"
    ".gtf-f { cursor: pointer; }\n"
    ".gtf-f text { pointer-events: none; }\n"
    ".gtf-f:hover rect { stroke: #222; stroke-width: 0.6; }\n"
    ".gtf-anc { opacity: 0.55; }\n"
    ".gtf-hit rect { fill: #e000e0; }\n"
    ".gtf-light text { fill: #fff; }\n"
    ".gtf-btn { cursor: pointer; fill: #1a5fb4; text-decoration: underline; }\n"
    ".gtf-hidden { display: none; }\n"
    "</style>\n";

/*
 * The viewer: frames carry data-x/data-w (weight units) and data-d (depth);
 * zoom rescales the zoomed frame's subtree to the full width and dims its
 * ancestors; search highlights by regex and sums the matched share without
 * counting nested matches twice.
 */
static const char svg_script[] =
    "<script type=\"text/ecmascript\"><![CDATA[\n"
    "(function () {\n"
    "  'use strict';\n"
    "  var cs = document.currentScript;\n"
    "  var svg = (cs && cs.ownerSVGElement) || document.documentElement;\n"
    "  var W = +svg.getAttribute('data-frames-w'), PAD = +svg.getAttribute('data-pad');\n"
    "  var TOTAL = +svg.getAttribute('data-total'), CW = +svg.getAttribute('data-char-w');\n"
    "  var DIFF = svg.getAttribute('data-diff') === '1';\n"
    "  var EMBED = svg.getAttribute('data-embed') === '1';\n"
    "  var q = function (sel) { return svg.querySelector(sel); };\n"
    "  var details = q('.gtf-details'), matched = q('.gtf-matched'), reset = q('.gtf-reset');\n"
    "  var input = q('.gtf-search'), hint = details.textContent, zoomed = null;\n"
    "  var frames = Array.prototype.map.call(svg.querySelectorAll('g.gtf-f'), function (g) {\n"
    "    return { g: g, r: g.querySelector('rect'), t: g.querySelector('text'),\n"
    "      name: g.querySelector('title').textContent, x: +g.getAttribute('data-x'),\n"
    "      w: +g.getAttribute('data-w'), d: +g.getAttribute('data-d'),\n"
    "      a: +(g.getAttribute('data-a') || 0), b: +(g.getAttribute('data-b') || 0) };\n"
    "  });\n"
    "  var byG = new Map(frames.map(function (f) { return [f.g, f]; }));\n"
    "  function fmt(ns) {\n"
    "    if (ns < 1e3) return Math.round(ns) + ' ns';\n"
    "    if (ns < 1e6) return (ns / 1e3).toFixed(2) + ' us';\n"
    "    if (ns < 1e9) return (ns / 1e6).toFixed(2) + ' ms';\n"
    "    return (ns / 1e9).toFixed(2) + ' s';\n"
    "  }\n"
    "  function pct(a, b) { return (b > 0 ? 100 * a / b : 0).toFixed(2) + '%'; }\n"
    "  function label(f, pw) {\n"
    "    var n = Math.floor((pw - 6) / CW);\n"
    "    if (n < 3) return '';\n"
    "    var cps = Array.from(f.name);\n"
    "    return cps.length <= n ? f.name : cps.slice(0, n - 2).join('') + '..';\n"
    "  }\n"
    "  function layout() {\n"
    "    var zx = zoomed ? zoomed.x : 0, zw = zoomed ? zoomed.w : TOTAL;\n"
    "    var zd = zoomed ? zoomed.d : 0;\n"
    "    frames.forEach(function (f) {\n"
    "      var anc = f.d < zd, vis, px, pw;\n"
    "      if (anc) { vis = f.x <= zx && f.x + f.w >= zx + zw; px = PAD; pw = W; }\n"
    "      else {\n"
    "        vis = f.x >= zx && f.x + f.w <= zx + zw;\n"
    "        px = PAD + (f.x - zx) / zw * W; pw = f.w / zw * W;\n"
    "      }\n"
    "      if (vis && pw < 0.1) vis = false;\n"
    "      f.g.classList.toggle('gtf-hidden', !vis);\n"
    "      f.g.classList.toggle('gtf-anc', vis && anc);\n"
    "      if (!vis) return;\n"
    "      f.r.setAttribute('x', px.toFixed(2));\n"
    "      f.r.setAttribute('width', pw.toFixed(2));\n"
    "      f.t.setAttribute('x', (px + 3).toFixed(2));\n"
    "      f.t.textContent = label(f, pw);\n"
    "    });\n"
    "    reset.classList.toggle('gtf-hidden', !zoomed);\n"
    "  }\n"
    "  function describe(f) {\n"
    "    var s = f.name + ' \\u2014 ';\n"
    "    if (DIFF) {\n"
    "      var c = f.a - f.b;\n"
    "      s += 'before ' + fmt(f.b) + ', after ' + fmt(f.a) + ', change ' +\n"
    "        (c >= 0 ? '+' : '-') + fmt(Math.abs(c)) +\n"
    "        (f.b > 0 ? ' (' + (c >= 0 ? '+' : '') + (100 * c / f.b).toFixed(1) + '%)' : '');\n"
    "    } else {\n"
    "      s += fmt(f.w) + ', ' + pct(f.w, TOTAL) + ' of all';\n"
    "      if (zoomed && zoomed !== f && f.d > zoomed.d) s += ', ' + pct(f.w, zoomed.w) +\n"
    "        ' of ' + zoomed.name;\n"
    "    }\n"
    "    return s;\n"
    "  }\n"
    "  function frameOf(ev) {\n"
    "    var g = ev.target.closest ? ev.target.closest('g.gtf-f') : null;\n"
    "    return g ? byG.get(g) : null;\n"
    "  }\n"
    "  svg.addEventListener('mouseover', function (ev) {\n"
    "    var f = frameOf(ev);\n"
    "    if (f) details.textContent = describe(f);\n"
    "  });\n"
    "  svg.addEventListener('mouseout', function (ev) {\n"
    "    if (frameOf(ev)) details.textContent = hint;\n"
    "  });\n"
    "  svg.addEventListener('click', function (ev) {\n"
    "    var f = frameOf(ev);\n"
    "    if (ev.target === reset || (f && f.d === 0)) { zoomed = null; layout(); return; }\n"
    "    if (f) { zoomed = f; layout(); details.textContent = describe(f); }\n"
    "  });\n"
    "  function search(term) {\n"
    "    var re = null, hits = [], sum = 0, end = -1;\n"
    "    if (term) {\n"
    "      try { re = new RegExp(term); }\n"
    "      catch (e) { re = new RegExp(term.replace(/[.*+?^${}()|[\\]\\\\]/g, '\\\\$&')); }\n"
    "    }\n"
    "    frames.forEach(function (f) {\n"
    "      var hit = !!re && f.d > 0 && re.test(f.name);\n"
    "      f.g.classList.toggle('gtf-hit', hit);\n"
    "      if (hit) hits.push(f);\n"
    "    });\n"
    "    hits.sort(function (a, b) { return a.x - b.x || b.w - a.w; });\n"
    "    hits.forEach(function (f) {\n"
    "      if (f.x >= end) { sum += f.w; end = f.x + f.w; }\n"
    "      else if (f.x + f.w > end) { sum += f.x + f.w - end; end = f.x + f.w; }\n"
    "    });\n"
    "    matched.textContent = re ? 'Matched: ' + pct(sum, TOTAL) + ' (' + fmt(sum) + ', ' +\n"
    "      hits.length + ' frames)' : '';\n"
    "  }\n"
    "  input.addEventListener('input', function () { search(input.value); });\n"
    "  input.addEventListener('keydown', function (ev) {\n"
    "    if (ev.key === 'Escape') { input.value = ''; search(''); }\n"
    "  });\n"
    "  if (!EMBED) document.addEventListener('keydown', function (ev) {\n"
    "    if ((ev.ctrlKey || ev.metaKey) && ev.key === 'f') {\n"
    "      ev.preventDefault(); input.focus();\n"
    "    }\n"
    "  });\n"
    "  layout();\n"
    "})();\n"
    "]]></script>\n";

struct svg_ctx {
	const struct flame *fl;
	const struct flame_svg_opts *o;
	FILE *out;
	uint64_t total;
	int height;
	unsigned dropped;
};

static const struct flame *sort_fl;

static int cmp_child(const void *x, const void *y)
{
	const struct fnode *a = &sort_fl->nodes[*(const uint32_t *)x];
	const struct fnode *b = &sort_fl->nodes[*(const uint32_t *)y];

	/* Under the root, categories in report order; elsewhere alphabetical. */
	if (a->depth == 1 && a->cat != b->cat)
		return a->cat < b->cat ? -1 : 1;
	return strcmp(sort_fl->str[a->name], sort_fl->str[b->name]);
}

static void svg_node(struct svg_ctx *c, uint32_t node, uint64_t x)
{
	const struct flame *fl = c->fl;
	const struct fnode *nd = &fl->nodes[node];
	enum flame_side side = c->o->differential ? c->o->width_side : FLAME_AFTER;
	uint64_t w = nd->w[side];
	double W = c->o->width - 2 * SVG_PAD;
	double px = SVG_PAD + (double)x / (double)c->total * W;
	double pw = (double)w / (double)c->total * W;
	int y = c->height - SVG_BOTTOM - (nd->depth + 1) * SVG_FRAME_H;
	struct rgb fill = node_fill(fl, nd, c->o);
	size_t nk = 0;
	uint32_t *kids;

	if (!w)
		return;
	if (pw < c->o->min_width_px) {
		c->dropped++;
		return;
	}
	/* Dark fills (strong diff colours) get white labels. */
	fprintf(c->out, "<g class=\"gtf-f%s\" data-x=\"%llu\" data-w=\"%llu\" data-d=\"%u\"",
		0.299 * fill.r + 0.587 * fill.g + 0.114 * fill.b < 120 ? " gtf-light" : "",
		(unsigned long long)x, (unsigned long long)w, nd->depth);
	if (c->o->differential)
		fprintf(c->out, " data-a=\"%llu\" data-b=\"%llu\"",
			(unsigned long long)nd->w[FLAME_AFTER],
			(unsigned long long)nd->w[FLAME_BEFORE]);
	fputs("><title>", c->out);
	gt_xml_puts(c->out, fl->str[nd->name]);
	fprintf(c->out,
		"</title><rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" rx=\"2\" "
		"fill=\"rgb(%d,%d,%d)\"/><text x=\"%.2f\" y=\"%d\">",
		px, y, pw, SVG_FRAME_H - 1, fill.r, fill.g, fill.b, px + 3, y + SVG_FRAME_H - 4);
	xml_label(c->out, fl->str[nd->name], pw);
	fputs("</text></g>\n", c->out);

	/* Children sorted, laid out left to right inside this frame. */
	for (uint32_t k = nd->child; k != NONE; k = fl->nodes[k].sibling)
		nk++;
	if (!nk)
		return;
	kids = gt_xmalloc(nk * sizeof(*kids));
	nk = 0;
	for (uint32_t k = nd->child; k != NONE; k = fl->nodes[k].sibling)
		kids[nk++] = k;
	sort_fl = fl;
	gt_sort(kids, nk, sizeof(*kids), cmp_child);
	for (size_t i = 0; i < nk; i++) {
		svg_node(c, kids[i], x);
		x += fl->nodes[kids[i]].w[side];
	}
	free(kids);
}

static unsigned max_depth(const struct flame *fl, enum flame_side side)
{
	unsigned d = 0;

	for (size_t i = 0; i < fl->nnodes; i++)
		if (fl->nodes[i].w[side] && fl->nodes[i].depth > d)
			d = fl->nodes[i].depth;
	return d;
}

int flame__write_svg(const struct flame *fl, FILE *out, const struct flame_svg_opts *opts)
{
	struct flame_svg_opts o = {};
	struct svg_ctx c = {.fl = fl, .out = out};
	enum flame_side side;
	char d1[32], d2[32], sub[FLAME_MAX_NAME + 96], clean[FLAME_MAX_NAME];
	int W;

	if (opts)
		o = *opts;
	if (!o.title)
		o.title = "gaptrace: where GPU idle time went";
	if (o.width < 200 || o.width > 20000)
		o.width = 1200;
	if (!(o.min_width_px > 0))
		o.min_width_px = 0.1;
	side = o.differential ? o.width_side : FLAME_AFTER;
	c.o = &o;
	c.total = flame__total(fl, side);
	c.height = SVG_TOP + ((int)max_depth(fl, side) + 1) * SVG_FRAME_H + SVG_BOTTOM;
	W = (int)o.width;

	if (!o.embed)
		fputs("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n", out);
	fprintf(out,
		"<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
		"height=\"%d\" viewBox=\"0 0 %d %d\" data-frames-w=\"%d\" data-pad=\"%d\" "
		"data-total=\"%llu\" data-char-w=\"%.2f\" data-diff=\"%d\" data-embed=\"%d\">\n",
		W, c.height, W, c.height, W - 2 * SVG_PAD, SVG_PAD, (unsigned long long)c.total,
		SVG_CHAR_W, o.differential, o.embed);
	fputs("<title>", out);
	gt_xml_puts(out, o.title);
	fputs("</title>\n", out);
	fputs(svg_style, out);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#fbfbf8\"/>\n", W,
		c.height);
	fprintf(out, "<text class=\"gtf-title\" x=\"%d\" y=\"24\">", SVG_PAD);
	gt_xml_puts(out, o.title);
	fputs("</text>\n", out);
	/* The totals first, then the caller's subtitle, cut to the width. */
	if (o.differential)
		snprintf(sub, sizeof(sub), "total: before %s, after %s%s%.*s",
			 gt_fmt_dur(flame__total(fl, FLAME_BEFORE), d1, sizeof(d1)),
			 gt_fmt_dur(flame__total(fl, FLAME_AFTER), d2, sizeof(d2)),
			 o.subtitle ? " \xc2\xb7 " : "", FLAME_MAX_NAME,
			 o.subtitle ? o.subtitle : "");
	else
		snprintf(sub, sizeof(sub), "total: %s%s%.*s", gt_fmt_dur(c.total, d1, sizeof(d1)),
			 o.subtitle ? " \xc2\xb7 " : "", FLAME_MAX_NAME,
			 o.subtitle ? o.subtitle : "");
	sanitize(sub, clean);
	fprintf(out, "<text class=\"gtf-sub\" x=\"%d\" y=\"44\">", SVG_PAD);
	xml_label(out, clean, W - 2 * SVG_PAD);
	fputs("</text>\n", out);
	fprintf(out,
		"<text class=\"gtf-btn gtf-reset gtf-hidden\" x=\"%d\" y=\"66\" "
		"text-anchor=\"end\">Reset zoom</text>\n",
		W - SVG_PAD);
	fprintf(out,
		"<foreignObject x=\"%d\" y=\"8\" width=\"270\" height=\"30\">"
		"<div xmlns=\"http://www.w3.org/1999/xhtml\">"
		"<input class=\"gtf-search\" type=\"search\" placeholder=\"Search frames (regex)\" "
		"aria-label=\"Search frames\" style=\"width:255px;font:12px sans-serif;"
		"padding:3px 5px;border:1px solid #999;border-radius:3px\"/>"
		"</div></foreignObject>\n",
		W - SVG_PAD - 270);
	/* A legend in the report's category colours (or the diff's two). */
	{
		static const char *const diff_names[] = {"grew", "shrank"};
		static const char *const diff_colors[] = {"#ff4040", "#4040ff"};
		int n = o.differential ? 2 : GT_CAT_MAX, lx = SVG_PAD;

		for (int k = 0; k < n; k++) {
			const char *name = o.differential ? diff_names[k] : gt_cat_names[k];

			fprintf(out,
				"<rect x=\"%d\" y=\"57\" width=\"10\" height=\"10\" rx=\"2\" "
				"fill=\"%s\"/>"
				"<text class=\"gtf-sub\" x=\"%d\" y=\"66\">%s</text>\n",
				lx, o.differential ? diff_colors[k] : gt_cat_color[k], lx + 14,
				name);
			lx += 14 + (int)(strlen(name) * 7.5) + 16;
		}
	}
	if (c.total)
		svg_node(&c, 0, 0);
	else
		fprintf(out,
			"<text x=\"%d\" y=\"%d\">No gap time matched: nothing to draw.</text>\n",
			SVG_PAD, SVG_TOP + 12);
	fprintf(out, "<text class=\"gtf-details\" x=\"%d\" y=\"%d\">", SVG_PAD, c.height - 12);
	if (c.dropped)
		fprintf(out,
			"Hover a frame for details, click to zoom, type to search (%u frames "
			"narrower than %.1f px left out)",
			c.dropped, o.min_width_px);
	else
		fputs("Hover a frame for details, click to zoom, type to search", out);
	fputs("</text>\n", out);
	fprintf(out, "<text class=\"gtf-matched\" x=\"%d\" y=\"%d\" text-anchor=\"end\"></text>\n",
		W - SVG_PAD, c.height - 12);
	fputs(svg_script, out);
	fputs("</svg>\n", out);
	if (fflush(out) || ferror(out))
		return -1;
	return 0;
}

/* ---- gaptrace flame ---- */

static void usage(FILE *f)
{
	fprintf(f, "Usage: gaptrace flame FILE [options]\n"
		   "\n"
		   "Flame graph of GPU idle time: every gap's attributed time, merged by stack.\n"
		   "Each stack reads, root first:\n"
		   "  category;[thread];user frames...;kernel frames_[k];[what it was]\n"
		   "so the widest towers are where the GPU waited longest, split first by\n"
		   "category (scheduler, lock, allocator, wait, io, sleep, cuda, cpu, unknown)\n"
		   "and then by the thread whose time it was: on a critical path that is the\n"
		   "thread that kept the GPU's launcher waiting.  Time without a stack gets\n"
		   "one frame saying what it was: [run queue], [preempted], [lost events],\n"
		   "[launch latency], [CUDA API], [malloc_trim] (a traced call), ...\n"
		   "Frames are demangled (C++, Rust legacy and v0); unresolved ones read\n"
		   "[module+0xOFFSET] (file offset, for addr2line) or [unknown].\n"
		   "\n"
		   "Options:\n"
		   "  -f, --format folded|svg   folded stacks, one 'stack ns' line each, for\n"
		   "                            flamegraph.pl, speedscope or inferno (default);\n"
		   "                            svg: an interactive flame graph (hover, click to\n"
		   "                            zoom, search) that opens in any browser\n"
		   "  -c, --category NAME       only this category's time (e.g. lock)\n"
		   "  -k, --kind KIND           only gaps of this kind: inter-unit, intra-unit,\n"
		   "                            unscoped\n"
		   "      --unit ID             only gaps inside work unit ID or at its edges\n"
		   "      --device N            only gaps of GPU N\n"
		   "      --gap N               only gap N (its index in 'gaptrace report')\n"
		   "  -o, --output FILE         write to FILE instead of stdout\n"
		   "      --title TEXT          SVG title\n"
		   "      --width PX            SVG width (default 1200)\n"
		   "  -m, --min-gap DUR         shortest idle time that is a gap (default 1ms)\n"
		   "  -u, --units SPEC          how work units are found, as report --unit:\n"
		   "                            usdt, func:FUNC, nvtx:GLOB, burst:DUR\n"
		   "      --depth N             critical-path hops to follow (default 4)\n"
		   "  -h, --help                this help\n"
		   "\n"
		   "Examples:\n"
		   "  gaptrace flame run.gtcap --format svg -o run.svg   # then open run.svg\n"
		   "  gaptrace flame run.gtcap --category lock --kind inter-unit\n"
		   "  gaptrace flame run.gtcap > run.folded && flamegraph.pl run.folded > fg.svg\n"
		   "\n"
		   "Weights are nanoseconds of gap time; they add up to the report's totals\n"
		   "(less what a filter leaves out).  Exit codes: 0 ok, 1 the capture cannot\n"
		   "be read or the output written, 2 bad usage.\n");
}

static int parse_i64(const char *s, int64_t *v)
{
	char *end;
	long long x;

	errno = 0;
	x = strtoll(s, &end, 10);
	if (errno || *end || !*s || x < 0)
		return -1;
	*v = x;
	return 0;
}

/* "lock, inter-unit gaps, unit 3" for the SVG subtitle. */
static void describe_filter(const struct flame_filter *f, const char *path, char *buf, size_t len)
{
	size_t o = (size_t)snprintf(buf, len, "%s", path);

	if (f->cat >= 0 && o < len)
		o += (size_t)snprintf(buf + o, len - o, ", %s only", gt_cat_names[f->cat]);
	if (f->kind >= 0 && o < len)
		o += (size_t)snprintf(buf + o, len - o, ", %s gaps", gt_gap_kind_names[f->kind]);
	if (f->unit >= 0 && o < len)
		o += (size_t)snprintf(buf + o, len - o, ", unit %lld", (long long)f->unit);
	if (f->device >= 0 && o < len)
		o += (size_t)snprintf(buf + o, len - o, ", GPU %lld", (long long)f->device);
	if (f->gap >= 0 && o < len)
		snprintf(buf + o, len - o, ", gap %lld", (long long)f->gap);
}

int cmd_flame(int argc, char **argv)
{
	enum { OPT_UNIT = 256, OPT_DEVICE, OPT_GAP, OPT_TITLE, OPT_WIDTH, OPT_DEPTH };
	static const struct option longopts[] = {
	    {"format", required_argument, NULL, 'f'},
	    {"category", required_argument, NULL, 'c'},
	    {"kind", required_argument, NULL, 'k'},
	    {"unit", required_argument, NULL, OPT_UNIT},
	    {"device", required_argument, NULL, OPT_DEVICE},
	    {"gap", required_argument, NULL, OPT_GAP},
	    {"output", required_argument, NULL, 'o'},
	    {"title", required_argument, NULL, OPT_TITLE},
	    {"width", required_argument, NULL, OPT_WIDTH},
	    {"min-gap", required_argument, NULL, 'm'},
	    {"units", required_argument, NULL, 'u'},
	    {"depth", required_argument, NULL, OPT_DEPTH},
	    {"verbose", no_argument, NULL, 'v'},
	    {"help", no_argument, NULL, 'h'},
	    {},
	};
	struct flame_filter filt;
	struct flame_svg_opts so = {};
	struct an_opts an;
	const char *format = "folded", *outpath = NULL;
	struct capture *cap = NULL;
	struct an_result *res = NULL;
	struct flame *fl = NULL;
	struct gt_out go = {.dfd = -1};
	FILE *out = stdout;
	int c, ret = GT_EXIT_FAIL;
	char sub[512];
	int64_t v;

	flame_filter__init(&filt);
	an_opts__defaults(&an);
	an.pieces = true;
	optind = 1;
	while ((c = getopt_long(argc, argv, "f:c:k:o:m:u:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (strcmp(optarg, "folded") && strcmp(optarg, "svg")) {
				gt_err("bad --format '%s': use folded or svg", optarg);
				return GT_EXIT_USAGE;
			}
			format = optarg;
			break;
		case 'c':
			filt.cat = gt_cat_parse(optarg);
			if (filt.cat < 0) {
				gt_err("bad --category '%s': use scheduler, lock, allocator, wait, "
				       "io, sleep, cuda, cpu or unknown",
				       optarg);
				return GT_EXIT_USAGE;
			}
			break;
		case 'k':
			filt.kind = -1;
			for (int k = 0; k < 3; k++)
				if (!strcmp(optarg, gt_gap_kind_names[k]))
					filt.kind = k;
			if (filt.kind < 0) {
				gt_err("bad --kind '%s': use inter-unit, intra-unit or unscoped",
				       optarg);
				return GT_EXIT_USAGE;
			}
			break;
		case OPT_UNIT:
			if (parse_i64(optarg, &filt.unit)) {
				gt_err("bad --unit '%s': give a work unit id (see 'gaptrace report "
				       "--format json', unit_before/unit_after)",
				       optarg);
				return GT_EXIT_USAGE;
			}
			break;
		case OPT_DEVICE:
			if (parse_i64(optarg, &filt.device)) {
				gt_err("bad --device '%s': give a GPU number", optarg);
				return GT_EXIT_USAGE;
			}
			break;
		case OPT_GAP:
			if (parse_i64(optarg, &filt.gap)) {
				gt_err("bad --gap '%s': give a gap index from 'gaptrace report'",
				       optarg);
				return GT_EXIT_USAGE;
			}
			break;
		case 'o':
			outpath = optarg;
			break;
		case OPT_TITLE:
			so.title = optarg;
			break;
		case OPT_WIDTH:
			if (parse_i64(optarg, &v) || v < 200 || v > 20000) {
				gt_err("bad --width '%s': give 200 to 20000 pixels", optarg);
				return GT_EXIT_USAGE;
			}
			so.width = (unsigned)v;
			break;
		case 'm':
			if (report__opt_min_gap(optarg, &an))
				return GT_EXIT_USAGE;
			break;
		case 'u':
			if (report__opt_units("--units", optarg, &an))
				return GT_EXIT_USAGE;
			break;
		case OPT_DEPTH:
			if (report__opt_depth(optarg, &an))
				return GT_EXIT_USAGE;
			break;
		case 'v':
			gt_verbose++;
			break;
		case 'h':
			usage(stdout);
			return GT_EXIT_OK;
		default:
			gt_err("bad option; see 'gaptrace flame --help'");
			return GT_EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		gt_err(optind >= argc ? "no capture given: gaptrace flame FILE (see --help)"
				      : "give one capture file (see --help)");
		return GT_EXIT_USAGE;
	}
	if (report__open_analyse(argv[optind], &an, &cap, &res))
		goto cleanup;
	filt.cap = cap;
	fl = flame__from_result(res, &filt);
	if (!fl) {
		gt_err("the analysis kept no pieces of gap time: this is a bug, please report it");
		goto cleanup;
	}
	if (!flame__total(fl, FLAME_AFTER))
		gt_warn("no gap time matches (%zu gaps in the capture): the output is empty",
			res->ngaps);
	if (flame__truncated_ns(fl))
		gt_warn("the stack tree hit its %u-node limit: %llu ns are shown at a shallower "
			"frame",
			FLAME_MAX_NODES, (unsigned long long)flame__truncated_ns(fl));
	if (gt_out__open(&go, outpath))
		goto cleanup;
	out = go.f;
	if (!strcmp(format, "svg")) {
		describe_filter(&filt, res->path, sub, sizeof(sub));
		so.subtitle = sub;
		if (flame__write_svg(fl, out, &so))
			goto write_err;
	} else if (flame__write_folded(fl, out)) {
		goto write_err;
	}
	if (!gt_out__close(&go))
		ret = GT_EXIT_OK;
	goto cleanup;
write_err:
	gt_err("writing %s failed: %s", outpath ? outpath : "the flame graph", strerror(errno));
cleanup:
	gt_out__abort(&go);
	flame__free(fl);
	an_result__free(res);
	capture__close(cap);
	return ret;
}
