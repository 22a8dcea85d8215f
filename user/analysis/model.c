// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * model.c: the analysis model's lookups (threads, symbols, stacks, probes,
 * launches), its lifetime, and the small helpers both passes of the loader
 * share (model_pass1.c, model_pass2.c).
 */
#include <stdlib.h>
#include <string.h>

#include "gaptrace/gaptrace.h"
#include "analysis/model.h"
#include "support/util.h"

struct m_thread *model__thread(struct model *m, uint32_t tid, bool create)
{
	uint64_t idx;
	struct m_thread *t;

	if (u64map_get(&m->thread_idx, tid, &idx))
		return &m->threads[idx];
	if (!create)
		return NULL;
	gt_grow((void **)&m->threads, &m->threads_cap, m->nthreads, sizeof(*m->threads));
	t = &m->threads[m->nthreads];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	u64map_put(&m->thread_idx, tid, m->nthreads++);
	return t;
}

uint64_t model__sym_key(uint32_t pid, uint64_t ip)
{
	return gt_hash64(&ip, sizeof(ip), pid);
}

const struct m_sym *model__sym(const struct model *m, uint32_t pid, uint64_t ip)
{
	uint64_t idx;

	if (!u64map_get(&m->sym_idx, model__sym_key(pid, ip), &idx))
		return NULL;
	return &m->syms[idx];
}

uint64_t model__inline_key(uint32_t pid, uint64_t ip, bool caller)
{
	return gt_hash64(&ip, sizeof(ip), (uint64_t)pid | (caller ? 3ULL << 32 : 2ULL << 32));
}

const struct m_inline *model__inline(const struct model *m, uint32_t pid, uint64_t ip, bool caller)
{
	uint64_t idx;

	if (!m->ninls || !u64map_get(&m->inl_idx, model__inline_key(pid, ip, caller), &idx))
		return NULL;
	return &m->inls[idx];
}

const struct m_stack *model__stack(const struct model *m, int32_t id)
{
	uint64_t idx;

	if (id < 0 || !u64map_get(&m->stack_idx, (uint64_t)(uint32_t)id, &idx))
		return NULL;
	return &m->stacks[idx];
}

const struct m_probe *model__probe(const struct model *m, uint32_t func_id)
{
	for (size_t i = 0; i < m->nprobes; i++)
		if (m->probes[i].func_id == func_id)
			return &m->probes[i];
	return NULL;
}

const struct m_launch *model__launch(const struct model *m, uint64_t op_id)
{
	uint64_t idx;

	return u64map_get(&m->launch_idx, op_id, &idx) ? &m->launches[idx] : NULL;
}

void model__free(struct model *m)
{
	if (!m)
		return;
	free(m->ops);
	free(m->launches);
	u64map_free(&m->launch_idx);
	free(m->units);
	u64map_free(&m->unit_idx);
	free(m->losses);
	free(m->windows);
	for (size_t i = 0; i < m->nthreads; i++) {
		free(m->threads[i].offs);
		free(m->threads[i].samples);
		free(m->threads[i].calls);
		free(m->threads[i].all_offs);
		free(m->threads[i].all_calls);
	}
	free(m->threads);
	u64map_free(&m->thread_idx);
	for (size_t i = 0; i < m->nstacks; i++)
		free(m->stacks[i].ips);
	free(m->stacks);
	u64map_free(&m->stack_idx);
	for (size_t i = 0; i < m->nsyms; i++) {
		free(m->syms[i].name);
		free(m->syms[i].module);
	}
	free(m->syms);
	u64map_free(&m->sym_idx);
	for (size_t i = 0; i < m->ninls; i++) {
		for (uint8_t k = 0; k < m->inls[i].n; k++)
			free(m->inls[i].names[k]);
		free(m->inls[i].names);
	}
	free(m->inls);
	u64map_free(&m->inl_idx);
	for (size_t i = 0; i < m->nprobes; i++)
		free(m->probes[i].name);
	free(m->probes);
	free(m->reach);
	free(m->far);
	free(m->hostcalls);
	free(m->ranges);
	for (size_t i = 0; i < m->nnames; i++)
		free(m->names[i]);
	free(m->names);
	free(m->peers);
	free(m->name_alloc);
	u64map_free(&m->name_idx);
	u64map_free(&m->futex_seen);
	free(m);
}

void model__add_warning(struct an_result *r, const char *msg)
{
	r->warnings = gt_xrealloc(r->warnings, sizeof(char *) * (r->nwarnings + 1));
	r->warnings[r->nwarnings++] = gt_xstrdup(msg);
}

static int by_from(const void *a, const void *b)
{
	const struct m_window *x = a, *y = b;

	return x->from < y->from ? -1 : x->from > y->from;
}

/* Sorts and merges overlapping windows in place. */
size_t model__merge_windows(struct m_window *w, size_t n)
{
	size_t out = 0;

	if (!n)
		return 0;
	gt_sort(w, n, sizeof(*w), by_from);
	for (size_t i = 1; i < n; i++) {
		if (w[i].from <= w[out].to) {
			if (w[i].to > w[out].to)
				w[out].to = w[i].to;
		} else {
			w[++out] = w[i];
		}
	}
	return out + 1;
}

size_t model__window_after(const struct model *m, uint64_t t)
{
	size_t lo = 0, hi = m->nwindows;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (m->windows[mid].to < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void model__calls_index(struct m_call *c, size_t n)
{
	uint64_t mx = 0;

	for (size_t i = 0; i < n; i++) {
		mx = GT_MAX(mx, c[i].exit);
		c[i].max_exit = mx;
	}
}

/* Whether a record that covers from and was stamped ts reaches back more than M_FAR_NS. */
static bool is_far(uint64_t from, uint64_t ts)
{
	return ts > M_FAR_NS && from < ts - M_FAR_NS;
}

bool model__cpu_reach(const void *rec, size_t size, uint64_t *from, bool *far)
{
	const struct gt_hdr *h = rec;

	switch (h->type) {
	case GT_REC_OFFCPU: {
		const struct gt_offcpu *o = rec;

		/* A partial interval starts at the capture's start, not known in pass 1. */
		*from = (o->flags & GT_OFF_PARTIAL_START) ? 0 : o->off_ns;
		*far = !*from || is_far(*from, h->ts_ns);
		return true;
	}
	case GT_REC_SAMPLE:
		*from = h->ts_ns > M_SAMPLE_REACH_NS ? h->ts_ns - M_SAMPLE_REACH_NS : 0;
		*far = false;
		return true;
	case GT_REC_CALL: {
		const struct gt_call *c = rec;

		*from = c->enter_ns;
		*far = is_far(*from, h->ts_ns);
		return true;
	}
	case GT_REC_GPU_OP: {
		const struct gt_gpu_op *g = rec;

		if (g->rec.kind != GAPTRACE_GPU_SYNC && g->rec.kind != GAPTRACE_GPU_API)
			return false;
		*from = g->rec.start_ns;
		*far = is_far(*from, h->ts_ns);
		return true;
	}
	default:
		return false;
	}
}
