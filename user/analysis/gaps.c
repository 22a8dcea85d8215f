// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * gaps.c: GPU busy time per device (the union of kernel, copy and set
 * intervals), the idle gaps between them, their work-unit kind, the critical
 * thread that launched the work ending each gap, and the launch clock check.
 */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/gaps.h"
#include "analysis/model.h"
#include "support/util.h"

static int cmp_op(const void *a, const void *b)
{
	const struct m_op *x = a, *y = b;

	if (x->device != y->device)
		return x->device < y->device ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->op_id < y->op_id ? -1 : x->op_id > y->op_id;
}

static int cmp_unit(const void *a, const void *b)
{
	const struct m_unit *x = a, *y = b;

	return x->begin < y->begin ? -1 : x->begin > y->begin;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Units are marked by the traced program, GPU operations by the GPU: a broken
 * or hostile producer can mark millions of units around a handful of
 * kernels, and every output lists units (the HTML timeline, the trace
 * export, diff's pairing).  So their number follows the GPU work: past
 * UNITS_PER_OP per operation (+ UNITS_SLACK), units in which no operation was
 * launched are left out, and past that bound the earliest are kept; a
 * warning says how many.  Captures of real programs stay far below it.
 */
#define UNITS_PER_OP 4
#define UNITS_SLACK  1024

static void bound_units(struct model *m, struct an_result *r)
{
	size_t cap = UNITS_PER_OP * m->nops + UNITS_SLACK, n = 0, total = m->nunits;
	uint64_t *t;
	char msg[256];

	if (m->nunits <= cap)
		return;
	/* Launch (else start) times of every operation, sorted. */
	t = gt_xmalloc((m->nops ? m->nops : 1) * sizeof(*t));
	for (size_t i = 0; i < m->nops; i++) {
		const struct m_launch *l = model__launch(m, m->ops[i].op_id);

		t[i] = l ? l->ts : m->ops[i].start;
	}
	gt_sort(t, m->nops, sizeof(*t), cmp_u64);
	for (size_t u = 0; u < m->nunits && n < cap; u++) {
		const struct m_unit *un = &m->units[u];
		size_t lo = 0, hi = m->nops;

		while (lo < hi) { /* first time >= begin */
			size_t mid = (lo + hi) / 2;

			if (t[mid] < un->begin)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < m->nops && t[lo] <= un->end)
			m->units[n++] = *un;
	}
	free(t);
	m->nunits = n;
	snprintf(msg, sizeof(msg),
		 "%zu of %zu units left out: more units than %u per GPU operation, and these "
		 "hold no GPU operation (or exceed that bound); the producer marks units "
		 "without GPU work",
		 total - n, total, UNITS_PER_OP);
	model__add_warning(r, msg);
}

/*
 * The unit an op belongs to: the unit open at its launch (or start) time,
 * preferring one begun on the launching thread, else the latest begun.
 */
static int64_t unit_of(const struct model *m, const struct m_op *op)
{
	const struct m_launch *l = model__launch(m, op->op_id);
	uint64_t t = l ? l->ts : op->start;
	int64_t best = -1;
	size_t lo = 0, hi = m->nunits;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (m->units[mid].begin <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i-- > 0;) {
		const struct m_unit *u = &m->units[i];

		if (u->end < t)
			continue;
		if (l && u->tid == l->tid)
			return (int64_t)i;
		if (best < 0)
			best = (int64_t)i;
	}
	return best;
}

static void clock_check(struct model *m, struct an_result *r)
{
	int64_t *d;
	size_t n = 0;

	/* Host-side ops start at their launch call by construction: nothing to check. */
	r->host_view = m->host_view;
	d = gt_xmalloc(sizeof(int64_t) * (m->nops ? m->nops : 1));

	for (size_t i = 0; i < m->nops; i++) {
		const struct m_launch *l;

		if (m->ops[i].host)
			continue;
		l = model__launch(m, m->ops[i].op_id);
		if (!l)
			continue;
		d[n] = (int64_t)(m->ops[i].start - l->ts);
		if (d[n] < 0)
			r->clock.violations++;
		n++;
	}
	r->clock.pairs = n;
	if (n) {
		gt_sort(d, n, sizeof(*d), cmp_i64);
		r->clock.min_ns = d[0];
		r->clock.p50_ns = d[n / 2];
		r->clock.p99_ns = d[(n * 99) / 100 < n ? (n * 99) / 100 : n - 1];
		r->clock.max_ns = d[n - 1];
	}
	free(d);
}

static void add_gap(struct model *m, struct an_result *r, size_t *cap, const struct m_op *before,
		    const struct m_op *after, uint64_t gs, uint64_t ge)
{
	const struct m_launch *l = model__launch(m, after->op_id);
	struct an_gap *g;

	gt_grow((void **)&r->gaps, cap, r->ngaps, sizeof(*r->gaps));
	g = &r->gaps[r->ngaps];
	memset(g, 0, sizeof(*g));
	g->index = (uint32_t)r->ngaps;
	g->device = after->device;
	g->start_ns = gs;
	g->end_ns = ge;
	g->duration_ns = ge - gs;
	g->op_after = after->op_id;
	g->unit_before = g->unit_after = -1;
	if (l) {
		g->pid = l->pid;
		g->tid = l->tid;
		g->launch_ns = l->ts;
	}
	if (m->nunits) {
		g->unit_before = unit_of(m, before);
		g->unit_after = unit_of(m, after);
		if (g->unit_before < 0 || g->unit_after < 0)
			g->kind = GT_GAP_UNSCOPED;
		else if (g->unit_before == g->unit_after)
			g->kind = GT_GAP_INTRA;
		else
			g->kind = GT_GAP_INTER;
		/* Report the producer's unit ids, not our indexes. */
		if (g->unit_before >= 0)
			g->unit_before = (int64_t)m->units[g->unit_before].id;
		if (g->unit_after >= 0)
			g->unit_after = (int64_t)m->units[g->unit_after].id;
	} else {
		g->kind = g->duration_ns >= m->opts.burst_gap_ns ? GT_GAP_INTER : GT_GAP_INTRA;
	}
	r->ngaps++;
}

static bool keep_unit(const struct model *m, const struct m_unit *u, int source)
{
	return u->source == source;
}

/* NVTX ranges whose names match the glob become units. */
static void nvtx_units(struct model *m)
{
	const char *glob = m->opts.unit_glob ? m->opts.unit_glob : "*";

	for (size_t i = 0; i < m->nranges; i++) {
		const struct m_range *rg = &m->ranges[i];
		uint64_t idx;
		const char *name = u64map_get(&m->name_idx, rg->name_id, &idx) ? m->names[idx] : "";

		if (fnmatch(glob, name, 0))
			continue;
		gt_grow((void **)&m->units, &m->units_cap, m->nunits, sizeof(*m->units));
		m->units[m->nunits] = (struct m_unit){.id = i,
						      .begin = rg->start,
						      .end = rg->end,
						      .tid = rg->tid,
						      .source = UNIT_NVTX};
		m->nunits++;
	}
}

/*
 * One kind of unit at a time: the one asked for, or (auto) USDT units, then
 * function units, then NVTX ranges, then GPU bursts.
 */
static void select_units(struct model *m)
{
	int want = -1;
	size_t n = 0;
	bool have[3] = {};

	for (size_t i = 0; i < m->nunits; i++)
		have[m->units[i].source] = true;
	switch (m->opts.units) {
	case GT_UNITS_USDT:
		want = UNIT_USDT;
		break;
	case GT_UNITS_FUNC:
		want = UNIT_FUNC;
		break;
	case GT_UNITS_NVTX:
		want = UNIT_NVTX;
		break;
	case GT_UNITS_BURST:
		want = -1;
		break;
	case GT_UNITS_AUTO:
		want = have[UNIT_USDT] ? UNIT_USDT : have[UNIT_FUNC] ? UNIT_FUNC : UNIT_NVTX;
		break;
	}
	if (want == UNIT_NVTX)
		nvtx_units(m);
	for (size_t i = 0; i < m->nunits; i++)
		if (want >= 0 && keep_unit(m, &m->units[i], want))
			m->units[n++] = m->units[i];
	m->nunits = n;
}

int gaps__find(struct model *m, struct an_result *r)
{
	size_t gaps_cap = 0, i = 0;
	uint64_t bursts = 0;

	select_units(m);
	gt_sort(m->ops, m->nops, sizeof(*m->ops), cmp_op);
	gt_sort(m->units, m->nunits, sizeof(*m->units), cmp_unit);
	bound_units(m, r);
	if (m->nunits && m->units[0].source == UNIT_USDT)
		r->unit_source = "usdt";
	else if (m->nunits && m->units[0].source == UNIT_NVTX) {
		snprintf(r->unit_source_buf, sizeof(r->unit_source_buf), "nvtx:%s",
			 m->opts.unit_glob ? m->opts.unit_glob : "*");
		r->unit_source = r->unit_source_buf;
	} else if (m->nunits) {
		snprintf(r->unit_source_buf, sizeof(r->unit_source_buf), "func:%s",
			 m->opts.unit_func ? m->opts.unit_func : "(probe)");
		r->unit_source = r->unit_source_buf;
	} else {
		snprintf(r->unit_source_buf, sizeof(r->unit_source_buf),
			 "GPU bursts (idle >= %.3g ms splits units)", m->opts.burst_gap_ns / 1e6);
		r->unit_source = r->unit_source_buf;
	}
	/* Re-index unit ids after sorting. */
	u64map_free(&m->unit_idx);
	for (size_t u = 0; u < m->nunits; u++)
		u64map_put(&m->unit_idx, m->units[u].id, u);

	while (i < m->nops) {
		uint32_t dev = m->ops[i].device;
		struct an_device *d;
		size_t first = i;
		const struct m_op *last_op = &m->ops[i];
		uint64_t busy_start = m->ops[i].start, busy_end = m->ops[i].end;

		r->devices = gt_xrealloc(r->devices, sizeof(*r->devices) * (r->ndevices + 1));
		d = &r->devices[r->ndevices++];
		memset(d, 0, sizeof(*d));
		d->id = dev;
		d->first_ns = m->ops[i].start;
		bursts++;
		for (i++; i < m->nops && m->ops[i].device == dev; i++) {
			const struct m_op *op = &m->ops[i];

			if (op->start > busy_end) {
				uint64_t idle = op->start - busy_end;

				d->busy_ns += busy_end - busy_start;
				if (idle >= m->opts.min_gap_ns) {
					add_gap(m, r, &gaps_cap, last_op, op, busy_end, op->start);
					d->gaps++;
					d->gap_ns += idle;
				}
				if (idle >= m->opts.burst_gap_ns)
					bursts++;
				busy_start = op->start;
				busy_end = op->end;
				last_op = op;
			} else if (op->end > busy_end) {
				busy_end = op->end;
				last_op = op;
			}
		}
		d->busy_ns += busy_end - busy_start;
		d->last_ns = busy_end;
		d->span_ns = d->last_ns - d->first_ns;
		d->ops = i - first;
	}
	r->units = m->nunits ? m->nunits : bursts;
	clock_check(m, r);
	return 0;
}
