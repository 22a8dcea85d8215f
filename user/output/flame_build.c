// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * flame_build.c: analysis results -> flame graph stacks: which pieces pass a
 * filter, and each piece's frames (category, thread, demangled user and
 * kernel frames, [module+0xOFF] from the capture's mappings, [kind]).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/capture.h"
#include "output/flame_priv.h"
#include "support/util.h"
#include "symbols/demangle.h"

#define MAX_MAPPINGS 65536 /* of a capture, kept for [module+0xOFF] */

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
	mp->path = gt_xstrndup(m->path, m->path_len);
	return 0;
}

/* Reads the capture's MAPPINGS once (the reader is rewound; analysis is done with it). */
static void load_mappings(struct flame *fl, struct capture *c)
{
	struct capture_block b;

	if (fl->maps_cap == c)
		return;
	flame__drop_mappings(fl);
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
			   bool kernel, bool inlined)
{
	char buf[FLAME_MAX_NAME + 64];
	uint64_t key =
	    (uint64_t)(uintptr_t)name ^ (kernel ? 1ULL << 63 : 0) ^ (inlined ? 1ULL << 62 : 0);
	uint32_t id;

	if (name) {
		char *d;

		id = flame__map_get(&fl->sym_idx, key);
		if (id != FLAME_NONE)
			return id;
		d = gt_demangle(name);
		snprintf(buf, sizeof(buf), "%.*s%s", FLAME_MAX_NAME, d ? d : name,
			 kernel	   ? "_[k]"
			 : inlined ? FLAME_INLINED_SUFFIX
				   : "");
		free(d);
		id = flame__intern(fl, buf,
				   kernel    ? FLAME_FRAME_KERNEL
				   : inlined ? FLAME_FRAME_INLINED
					     : FLAME_FRAME_USER);
		u64map_put(&fl->sym_idx, key, id);
		return id;
	}
	if (module && *module && !kernel) {
		for (size_t i = 0; i < fl->nmaps; i++) {
			const struct mapping *m = &fl->maps[i];

			if (ip >= m->start && ip < m->end && !strcmp(m->path, module)) {
				snprintf(buf, sizeof(buf), "[%.200s+0x%llx]", base_name(module),
					 (unsigned long long)(ip - m->start + m->pgoff));
				return flame__intern(fl, buf, FLAME_FRAME_UNRESOLVED);
			}
		}
		snprintf(buf, sizeof(buf), "[%.200s]", base_name(module));
		return flame__intern(fl, buf, FLAME_FRAME_UNRESOLVED);
	}
	return flame__intern_clean(fl, kernel ? "[unknown]_[k]" : "[unknown]",
				   FLAME_FRAME_UNRESOLVED);
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

static void resolve_cb(const char *name, const char *module, uint64_t ip, bool inlined, void *ctx)
{
	struct resolve_ctx *rc = ctx;

	/* Called leaf first: drop the tracer's frames before the thread's own. */
	if (rc->kernel && !rc->n && name && tracer_frame(name))
		return;
	if (rc->n < FLAME_MAX_DEPTH)
		rc->ids[rc->n++] = frame_name(rc->fl, name, module, ip, rc->kernel, inlined);
}

/* Frames of a stack id, root first, from the per-result cache. */
static const struct stack_frames *stack_frames(struct flame *fl, const struct an_result *r,
					       int32_t id, bool kernel)
{
	uint64_t key = (uint64_t)(uint32_t)id | (kernel ? 1ULL << 32 : 0);
	uint32_t idx = flame__map_get(&fl->stack_idx, key);
	struct resolve_ctx rc = {.fl = fl, .kernel = kernel};
	struct stack_frames *s;

	if (idx != FLAME_NONE)
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
	u64map_put(&fl->stack_idx, key, (uint32_t)fl->nsf);
	return &fl->sf[fl->nsf++];
}

static uint32_t thread_frame(struct flame *fl, const struct an_result *r, uint32_t tid)
{
	uint32_t id = flame__map_get(&fl->thread_idx, tid);
	const char *comm;
	char buf[64];

	if (id != FLAME_NONE)
		return id;
	comm = tid ? an_result__thread_name(r, tid) : NULL;
	if (!tid)
		snprintf(buf, sizeof(buf), "[no launch record]");
	else if (!comm || !strcmp(comm, "?"))
		snprintf(buf, sizeof(buf), "[tid %u]", tid);
	else
		snprintf(buf, sizeof(buf), "[%.16s]", comm);
	id = flame__intern(fl, buf, FLAME_FRAME_THREAD);
	u64map_put(&fl->thread_idx, tid, id);
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
		return flame__intern(fl, buf, FLAME_FRAME_SYNTHETIC);
	}
	if (p->kind < GT_ARRAY_SIZE(names) && names[p->kind])
		return flame__intern_clean(fl, names[p->kind], FLAME_FRAME_SYNTHETIC);
	return flame__intern_clean(fl, "[other]", FLAME_FRAME_SYNTHETIC);
}

static void add_piece(struct flame *fl, const struct an_result *r, const struct an_piece *p,
		      enum flame_side side)
{
	uint32_t path[FLAME_MAX_DEPTH];
	int cat = p->cat < GT_CAT_MAX ? p->cat : GT_CAT_UNKNOWN;
	size_t n = 0;

	path[n++] = flame__intern_clean(fl, gt_cat_names[cat], FLAME_FRAME_CATEGORY);
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
	flame__add_path(fl, path, n, cat, p->ns, side);
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
		flame__drop_result_caches(fl);
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
