// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * model.c: reads a capture in two passes.  Pass 1 keeps what is small (GPU
 * ops, launches, units, threads, stacks, symbols, losses) and finds the gaps;
 * pass 2 keeps only CPU-side records that overlap a gap, so memory follows
 * the time spent in gaps, not the length of the capture.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "capture/capture.h"
#include "gaptrace.h"
#include "gaptrace-cupti-api.h"
#include "analysis/model.h"
#include "support/util.h"

const char *const gt_cat_names[GT_CAT_MAX] = {
    "scheduler", "lock", "allocator", "wait", "io", "sleep", "cuda", "cpu", "unknown",
};

const char *const gt_gap_kind_names[3] = {"inter-unit", "intra-unit", "unscoped"};

int gt_cat_parse(const char *name)
{
	for (int i = 0; i < GT_CAT_MAX; i++)
		if (!strcmp(name, gt_cat_names[i]))
			return i;
	return -1;
}

void an_opts__defaults(struct an_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->min_gap_ns = NSEC_PER_MSEC;
	o->burst_gap_ns = 10 * NSEC_PER_MSEC;
	o->units = GT_UNITS_AUTO;
	o->max_depth = 4;
}

/* ---- lookups ---- */

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

static uint64_t sym_key(uint32_t pid, uint64_t ip)
{
	return gt_hash64(&ip, sizeof(ip), pid);
}

const struct m_sym *model__sym(const struct model *m, uint32_t pid, uint64_t ip)
{
	uint64_t idx;

	if (!u64map_get(&m->sym_idx, sym_key(pid, ip), &idx))
		return NULL;
	return &m->syms[idx];
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
	for (size_t i = 0; i < m->nprobes; i++)
		free(m->probes[i].name);
	free(m->probes);
	free(m->hostcalls);
	free(m->ranges);
	for (size_t i = 0; i < m->nnames; i++)
		free(m->names[i]);
	free(m->names);
	free(m->name_alloc);
	u64map_free(&m->name_idx);
	free(m);
}

/* ---- pass 1 ---- */

static char *dup_n(const char *s, size_t n)
{
	char *d = gt_xmalloc(n + 1);

	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

struct pass1 {
	struct model *m;
	struct an_result *r;
	uint64_t min_ts, max_ts;	 /* CPU-side records */
	uint64_t gpu_min_ts, gpu_max_ts; /* GPU ops: only when no CPU-side record says */
	uint64_t lost_gpu;
};

/* Counters from the file add up without wrapping: a hostile count stops at UINT64_MAX. */
static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static void note_range(uint64_t *lo, uint64_t *hi, uint64_t ts)
{
	if (!ts)
		return;
	if (!*lo || ts < *lo)
		*lo = ts;
	if (ts > *hi)
		*hi = ts;
}

static void note_ts(struct pass1 *p, uint64_t ts)
{
	note_range(&p->min_ts, &p->max_ts, ts);
}

/*
 * A GPU op that started this long before the capture did is not one that ran
 * while tracing began (those end soon after it): its clock is garbage.
 */
#define GPU_EARLY_NS (100 * NSEC_PER_MSEC)
/* No producer drops this many records in one report: the count is garbage. */
#define GPU_DROP_MAX (1ULL << 40)

/*
 * CUDA API calls that allocate or free device, pinned or managed memory:
 * their host time is allocator time (issue #13: cudaHostAlloc of 256 MiB in
 * a gap came out ~85% cuda), like the libcuda uprobes on the same calls.
 */
static bool api_name_is_alloc(const char *name)
{
	static const char *const prefixes[] = {GT_CUDA_ALLOC_PREFIXES};

	for (size_t i = 0; i < GT_ARRAY_SIZE(prefixes); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

static void add_launch(struct model *m, uint64_t op_id, uint64_t ts, uint32_t pid, uint32_t tid)
{
	uint64_t idx;

	/* The first launch of an op id wins (ids are unique per producer). */
	if (u64map_get(&m->launch_idx, op_id, &idx))
		return;
	gt_grow((void **)&m->launches, &m->launches_cap, m->nlaunches, sizeof(*m->launches));
	m->launches[m->nlaunches] = (struct m_launch){ts, pid, tid};
	u64map_put(&m->launch_idx, op_id, m->nlaunches++);
}

static void add_unit_event(struct model *m, uint64_t id, uint64_t ts, uint32_t tid, bool begin)
{
	uint64_t idx;
	struct m_unit *u;

	m->have_usdt_units = true;
	if (!u64map_get(&m->unit_idx, id, &idx)) {
		gt_grow((void **)&m->units, &m->units_cap, m->nunits, sizeof(*m->units));
		idx = m->nunits++;
		m->units[idx] = (struct m_unit){.id = id, .tid = tid, .source = UNIT_USDT};
		u64map_put(&m->unit_idx, id, idx);
	}
	u = &m->units[idx];
	if (begin) {
		if (!u->begin || ts < u->begin)
			u->begin = ts;
		u->tid = tid;
	} else if (ts > u->end) {
		u->end = ts;
	}
}

static void add_loss(struct model *m, uint64_t from, uint64_t to)
{
	gt_grow((void **)&m->losses, &m->losses_cap, m->nlosses, sizeof(*m->losses));
	m->losses[m->nlosses++] = (struct m_window){from, to};
}

static void task_event(struct pass1 *p, const struct gt_task *t)
{
	struct m_thread *th = model__thread(p->m, t->tid, true);

	th->pid = t->pid;
	th->known = true;
	switch (t->event) {
	case GT_TASK_NEW_THREAD:
	case GT_TASK_NEW_PROCESS:
		th->born = t->hdr.ts_ns;
		memcpy(th->comm, t->comm, sizeof(th->comm));
		break;
	case GT_TASK_EXIT:
		th->died = t->hdr.ts_ns;
		break;
	case GT_TASK_SEEN:
		/* The name read from /proc at the end must not hide a rename record. */
		if (!th->comm[0])
			memcpy(th->comm, t->comm, sizeof(th->comm));
		break;
	default:
		memcpy(th->comm, t->comm, sizeof(th->comm));
		break;
	}
	th->comm[sizeof(th->comm) - 1] = '\0';
}

static int pass1_record(const void *rec, size_t size, void *ctx)
{
	struct pass1 *p = ctx;
	struct model *m = p->m;
	const struct gt_hdr *h = rec;

	p->r->records++;
	switch (h->type) {
	case GT_REC_GPU_OP: {
		const struct gt_gpu_op *g = rec;
		const struct gt_gpu_rec *gr = &g->rec;

		if (size < sizeof(*g))
			break;
		switch (gr->kind) {
		case 1: /* kernel */
		case 2: /* memcpy */
		case 3: /* memset */
			/* Untrusted: a record ending before it starts is rejected and counted. */
			if (!gr->start_ns || gr->end_ns < gr->start_ns) {
				p->r->gpu_rejected++;
				break;
			}
			gt_grow((void **)&m->ops, &m->ops_cap, m->nops, sizeof(*m->ops));
			m->ops[m->nops++] =
			    (struct m_op){gr->start_ns, gr->end_ns, gr->op_id, gr->device,
					  gr->stream,	g->pid,	    g->tid,    gr->kind};
			/* Not note_ts: GPU clocks must not stretch the capture window. */
			note_range(&p->gpu_min_ts, &p->gpu_max_ts, gr->start_ns);
			note_range(&p->gpu_min_ts, &p->gpu_max_ts, gr->end_ns);
			break;
		case 5: /* API call: the launch of op_id on thread tid */
			if (gr->tid) {
				add_launch(m, gr->op_id, gr->start_ns, g->pid, gr->tid);
				/* A driver call folded into this runtime call, by its own id. */
				if (gr->bytes && gr->bytes != gr->op_id)
					add_launch(m, gr->bytes, gr->start_ns, g->pid, gr->tid);
			}
			break;
		case 6: /* NVTX range: a unit candidate */
			if (gr->end_ns >= gr->start_ns && gr->start_ns) {
				gt_grow((void **)&m->ranges, &m->ranges_cap, m->nranges,
					sizeof(*m->ranges));
				m->ranges[m->nranges++] = (struct m_range){gr->start_ns, gr->end_ns,
									   gr->tid, gr->name_id};
			}
			break;
		case 7: /* producer dropped records */
			if (gr->bytes >= GPU_DROP_MAX)
				p->r->gpu_rejected++;
			else
				p->r->lost_producer = sat_add(p->r->lost_producer, gr->bytes);
			break;
		default:
			break;
		}
		break;
	}
	case GT_REC_GPU_LAUNCH: {
		const struct gt_gpu_launch *l = rec;

		if (size >= sizeof(*l))
			add_launch(m, l->op_id, l->hdr.ts_ns, l->pid, l->tid);
		break;
	}
	case GT_REC_UNIT: {
		const struct gt_unit *u = rec;

		if (size >= sizeof(*u))
			add_unit_event(m, u->unit_id, u->hdr.ts_ns, u->tid, u->begin != 0);
		break;
	}
	case GT_REC_TASK:
		if (size >= sizeof(struct gt_task))
			task_event(p, rec);
		break;
	case GT_REC_OFFCPU: {
		const struct gt_offcpu *o = rec;
		struct m_thread *th;

		if (size < sizeof(*o))
			break;
		th = model__thread(m, o->tid, true);
		th->pid = o->pid;
		th->known = true;
		note_ts(p, o->on_ns);
		break;
	}
	case GT_REC_SAMPLE: {
		const struct gt_sample *s = rec;

		if (size < GT_SAMPLE_V1_SIZE)
			break;
		model__thread(m, s->tid, true)->known = true;
		model__thread(m, s->tid, true)->pid = s->pid;
		m->nsamples_total++;
		note_ts(p, s->hdr.ts_ns);
		break;
	}
	case GT_REC_CALL: {
		const struct gt_call *c = rec;
		const struct m_probe *pr;

		if (size < sizeof(*c))
			break;
		pr = model__probe(m, c->func_id);
		if (pr && (pr->launch || pr->sync) && c->exit_ns >= c->enter_ns) {
			gt_grow((void **)&m->hostcalls, &m->hostcalls_cap, m->nhostcalls,
				sizeof(*m->hostcalls));
			m->hostcalls[m->nhostcalls++] =
			    (struct m_hostcall){c->enter_ns, c->exit_ns, c->pid, c->tid, pr->sync};
		}
		if (pr && pr->unit && c->exit_ns >= c->enter_ns &&
		    (!m->opts.unit_func || !strcmp(m->opts.unit_func, pr->name))) {
			/* Function units: each call is one unit, numbered in order. */
			gt_grow((void **)&m->units, &m->units_cap, m->nunits, sizeof(*m->units));
			m->units[m->nunits] = (struct m_unit){.id = m->nunits,
							      .begin = c->enter_ns,
							      .end = c->exit_ns,
							      .tid = c->tid,
							      .source = UNIT_FUNC};
			m->nunits++;
		}
		break;
	}
	case GT_REC_NAME: {
		const struct gt_name *n = rec;
		uint64_t idx;
		size_t len;

		if (size < offsetof(struct gt_name, name) + 1)
			break;
		/* Bounded by the record: names come from the traced process. */
		len = GT_MIN((size_t)n->len, size - offsetof(struct gt_name, name));
		len = GT_MIN(len, (size_t)GT_NAME_MAX - 1);
		if (u64map_get(&m->name_idx, n->name_id, &idx))
			break;
		gt_grow((void **)&m->names, &m->names_cap, m->nnames, sizeof(*m->names));
		gt_grow((void **)&m->name_alloc, &m->name_alloc_cap, m->nnames,
			sizeof(*m->name_alloc));
		m->names[m->nnames] = dup_n(n->name, strnlen(n->name, len));
		m->name_alloc[m->nnames] = api_name_is_alloc(m->names[m->nnames]);
		u64map_put(&m->name_idx, n->name_id, m->nnames++);
		break;
	}
	case GT_REC_LOSS: {
		const struct gt_loss *l = rec;

		if (size < sizeof(*l))
			break;
		if (l->kind == GT_LOSS_RINGBUF || l->kind == GT_LOSS_MAP_FULL)
			add_loss(m, l->from_ns, l->to_ns);
		if (l->kind == GT_LOSS_GPU)
			p->lost_gpu = sat_add(p->lost_gpu, l->count);
		break;
	}
	default:
		break;
	}
	return 0;
}

static int stack_cb(const struct capture_stack *s, void *ctx)
{
	struct model *m = ctx;
	struct m_stack *st;
	uint64_t idx;

	if (u64map_get(&m->stack_idx, (uint64_t)(uint32_t)s->stack_id, &idx))
		return 0;
	gt_grow((void **)&m->stacks, &m->stacks_cap, m->nstacks, sizeof(*m->stacks));
	st = &m->stacks[m->nstacks];
	st->id = s->stack_id;
	st->pid = s->pid;
	st->kernel = s->kernel;
	st->nr = s->nr;
	st->ips = gt_xmalloc(sizeof(uint64_t) * (s->nr ? s->nr : 1));
	memcpy(st->ips, s->ips, sizeof(uint64_t) * s->nr);
	st->cls = -1;
	u64map_put(&m->stack_idx, (uint64_t)(uint32_t)s->stack_id, m->nstacks++);
	return 0;
}

static int sym_cb(const struct capture_symbol *s, void *ctx)
{
	struct model *m = ctx;
	uint64_t key = sym_key(s->pid, s->ip), idx;
	struct m_sym *sym;

	if (u64map_get(&m->sym_idx, key, &idx))
		return 0;
	gt_grow((void **)&m->syms, &m->syms_cap, m->nsyms, sizeof(*m->syms));
	sym = &m->syms[m->nsyms];
	sym->name = s->name_len ? dup_n(s->name, s->name_len) : NULL;
	sym->module = dup_n(s->module, s->module_len);
	sym->off = s->sym_off;
	u64map_put(&m->sym_idx, key, m->nsyms++);
	return 0;
}

static int probe_cb(const struct capture_probe *pr, void *ctx)
{
	struct model *m = ctx;
	struct m_probe *p;
	char cat[32];

	gt_grow((void **)&m->probes, &m->probes_cap, m->nprobes, sizeof(*m->probes));
	p = &m->probes[m->nprobes++];
	p->func_id = pr->func_id;
	p->name = dup_n(pr->name, pr->name_len);
	snprintf(cat, sizeof(cat), "%.*s", (int)GT_MIN(pr->category_len, 31), pr->category);
	p->unit = !strcmp(cat, "unit");
	p->launch = !strcmp(cat, "launch");
	p->sync = !strcmp(cat, "sync");
	p->cat = (p->launch || p->sync) ? GT_CAT_CUDA : gt_cat_parse(cat);
	return 0;
}

static int counters_cb(const char *key, const char *value, void *ctx)
{
	struct an_result *r = ctx;
	uint64_t v = strtoull(value, NULL, 10);

	if (!strcmp(key, "lost.ringbuf"))
		r->lost_ringbuf = v;
	else if (!strcmp(key, "lost.stack"))
		r->lost_stack = v;
	else if (!strcmp(key, "lost.map_full"))
		r->lost_map_full = v;
	else if (!strcmp(key, "lost.gpu_truncated"))
		r->lost_gpu = GT_MAX(r->lost_gpu, v);
	else if (!strcmp(key, "end_mono_ns"))
		r->end_ns = v;
	else if (!strcmp(key, "gpu_source")) {
		/* END's value: the source at the end, when it changed while recording. */
		free((char *)r->gpu_source);
		r->gpu_source = gt_xstrdup(value);
	} else if (!strcmp(key, "sampling_from_ns"))
		((struct model *)r->model)->sampling_from = v;
	return 0;
}

static void add_warning(struct an_result *r, const char *msg)
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
static size_t merge_windows(struct m_window *w, size_t n)
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

static int cmp_hostcall(const void *a, const void *b)
{
	const struct m_hostcall *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->enter < y->enter ? -1 : x->enter > y->enter;
}

/*
 * Without GPU records (no CUPTI), libcuda uprobes give a host-side view: the
 * GPU counts as busy from a thread's first launch until its next synchronize
 * call returns.  Coarser than CUPTI, but the gaps between are real host time.
 * Launch calls are probed only in that case, or from the moment the CUPTI
 * library stepped aside: the view starts after the last GPU record, so the
 * two never describe the same time twice.
 */
static void host_view_ops(struct model *m)
{
	uint64_t busy_from = 0, id = M_HOST_OP_ID0, after = 0;
	size_t n0 = m->nops;
	uint32_t tid = 0;

	for (size_t i = 0; i < m->nops; i++)
		after = GT_MAX(after, m->ops[i].end);

	gt_sort(m->hostcalls, m->nhostcalls, sizeof(*m->hostcalls), cmp_hostcall);
	for (size_t i = 0; i < m->nhostcalls; i++) {
		const struct m_hostcall *h = &m->hostcalls[i];

		if (h->tid != tid) {
			tid = h->tid;
			busy_from = 0;
		}
		if (!h->sync) {
			if (!busy_from && h->enter >= after)
				busy_from = h->enter;
			continue;
		}
		if (!busy_from)
			continue;
		gt_grow((void **)&m->ops, &m->ops_cap, m->nops, sizeof(*m->ops));
		m->ops[m->nops++] =
		    (struct m_op){busy_from, h->exit, id, 0, 0, h->pid, h->tid, 1, true};
		add_launch(m, id, busy_from, h->pid, h->tid);
		id++;
		busy_from = 0;
	}
	m->host_view = m->nops > n0;
	m->host_view_from = n0 ? after : 0;
}

/*
 * GPU ops are untrusted input: one lasting longer than the capture, or
 * starting long before it, is rejected (it would make the device busy or idle
 * for time nobody recorded); the others are clipped to the capture window, so
 * no gap or busy time lies outside it.  Both are counted and warned about.
 */
static void clip_ops(struct model *m, struct an_result *r)
{
	uint64_t len = m->end - m->start;
	size_t n = 0;

	for (size_t i = 0; i < m->nops; i++) {
		struct m_op o = m->ops[i];

		if (o.host) {
			m->ops[n++] = o;
			continue;
		}
		/* Work after the end has no CPU data to explain it (as with an END block). */
		if (o.start >= m->end && len)
			continue;
		if (o.end - o.start > len || o.start + GPU_EARLY_NS < m->start) {
			r->gpu_rejected++;
			continue;
		}
		if (o.start < m->start || o.end > m->end) {
			o.start = GT_MAX(o.start, m->start);
			o.end = GT_MIN(o.end, m->end);
			r->gpu_clipped++;
		}
		m->ops[n++] = o;
	}
	m->nops = n;
}

static int pass1(struct capture *c, struct model *m, struct an_result *r)
{
	struct pass1 p = {.m = m, .r = r};
	struct capture_block b;
	int ret;

	/* Probes, stacks and symbols may follow the events that use them. */
	while ((ret = capture__next(c, &b)) == 1) {
		switch (b.type) {
		case GT_BLK_PROBES:
			capture__probes(b.body, b.len, probe_cb, m);
			break;
		default:
			break;
		}
	}
	capture__rewind(c);
	while ((ret = capture__next(c, &b)) == 1) {
		switch (b.type) {
		case GT_BLK_EVENTS:
			if (capture__events(b.body, b.len, pass1_record, &p) < 0)
				add_warning(r, "an EVENTS block holds a malformed record: the rest "
					       "of that block was skipped");
			break;
		case GT_BLK_STACKS:
			capture__stacks(b.body, b.len, stack_cb, m);
			break;
		case GT_BLK_SYMBOLS:
			capture__symbols(b.body, b.len, sym_cb, m);
			break;
		case GT_BLK_COUNTERS:
			capture__kv(b.body, b.len, counters_cb, r);
			break;
		case GT_BLK_END:
			r->clean_end = true;
			capture__kv(b.body, b.len, counters_cb, r);
			break;
		case GT_BLK_HEADER:
		case GT_BLK_MAPPINGS:
		case GT_BLK_PROBES:
			break;
		default:
			capture__note_unknown(c, b.type);
			break;
		}
	}
	r->lost_gpu = sat_add(r->lost_gpu, p.lost_gpu);
	if (m->nhostcalls)
		host_view_ops(m);
	if (r->clean_end && r->end_ns) {
		/* GPU records keep arriving after the CPU side stopped: work that
		 * started after the end has no CPU data to explain it. */
		size_t n = 0;

		for (size_t i = 0; i < m->nops; i++)
			if (m->ops[i].start < r->end_ns)
				m->ops[n++] = m->ops[i];
		m->nops = n;
	} else if (!r->end_ns || r->end_ns < p.max_ts) {
		r->end_ns = p.max_ts;
	}
	if (!r->start_ns)
		r->start_ns = p.min_ts;
	/* A capture with GPU records only: they are all there is to say when it ran. */
	if (!p.max_ts && !r->clean_end && p.gpu_max_ts > r->end_ns)
		r->end_ns = p.gpu_max_ts;
	if (!r->start_ns)
		r->start_ns = p.gpu_min_ts;
	if (r->end_ns < r->start_ns)
		r->end_ns = r->start_ns;
	m->start = r->start_ns;
	m->end = r->end_ns;
	clip_ops(m, r);
	m->nlosses = merge_windows(m->losses, m->nlosses);
	/* Units that never saw their begin or end are closed at the capture's edges. */
	for (size_t i = 0; i < m->nunits; i++) {
		if (!m->units[i].begin)
			m->units[i].begin = m->start;
		if (!m->units[i].end || m->units[i].end < m->units[i].begin)
			m->units[i].end = m->end;
	}
	return 0;
}

/* ---- pass 2 ---- */

#define SAMPLE_REACH_NS (200 * NSEC_PER_MSEC)

static bool in_windows(const struct model *m, uint64_t from, uint64_t to)
{
	size_t lo = 0, hi = m->nwindows;

	/* First window whose end is >= from; it overlaps if it starts <= to. */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (m->windows[mid].to < from)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < m->nwindows && m->windows[lo].from <= to;
}

/* an_opts.keep_all: every interval and call, whether or not it touches a gap. */
static void keep_off(struct model *m, uint32_t tid, const struct m_off *o)
{
	struct m_thread *t;

	if (!m->opts.keep_all)
		return;
	t = model__thread(m, tid, true);
	gt_grow((void **)&t->all_offs, &t->all_offs_cap, t->nall_offs, sizeof(*t->all_offs));
	t->all_offs[t->nall_offs++] = *o;
}

static void keep_call(struct model *m, uint32_t tid, const struct m_call *c)
{
	struct m_thread *t;

	if (!m->opts.keep_all)
		return;
	t = model__thread(m, tid, true);
	gt_grow((void **)&t->all_calls, &t->all_calls_cap, t->nall_calls, sizeof(*t->all_calls));
	t->all_calls[t->nall_calls++] = *c;
}

static int pass2_record(const void *rec, size_t size, void *ctx)
{
	struct model *m = ctx;
	const struct gt_hdr *h = rec;
	struct m_thread *t;

	switch (h->type) {
	case GT_REC_OFFCPU: {
		const struct gt_offcpu *o = rec;
		struct m_off mo;
		uint64_t off, on;

		if (size < sizeof(*o))
			break;
		off = (o->flags & GT_OFF_PARTIAL_START) || !o->off_ns ? m->start : o->off_ns;
		on = o->on_ns;
		if (on < off)
			break;
		mo = (struct m_off){
		    .off = off,
		    .wake = o->wake_ns && o->wake_ns >= off && o->wake_ns <= on ? o->wake_ns : 0,
		    .on = on,
		    .flags = o->flags,
		    .state = o->state,
		    .waker_tid = o->waker_tid,
		    .waker_syscall = o->waker_syscall,
		    .syscall = o->syscall_nr,
		    .ustack = o->ustack_id,
		    .kstack = o->kstack_id,
		    .args = {o->args[0], o->args[1], o->args[2]},
		};
		keep_off(m, o->tid, &mo);
		if (!in_windows(m, off, on))
			break;
		t = model__thread(m, o->tid, true);
		gt_grow((void **)&t->offs, &t->offs_cap, t->noffs, sizeof(*t->offs));
		t->offs[t->noffs++] = mo;
		break;
	}
	case GT_REC_SAMPLE: {
		const struct gt_sample *s = rec;

		if (size < GT_SAMPLE_V1_SIZE)
			break;
		/*
		 * A sample covers the thread CPU time before it, which may lie well
		 * before in wall time when the thread blocked in between: keep
		 * samples up to SAMPLE_REACH after a window.
		 */
		if (!in_windows(m,
				s->hdr.ts_ns > SAMPLE_REACH_NS ? s->hdr.ts_ns - SAMPLE_REACH_NS : 0,
				s->hdr.ts_ns + m->sample_period))
			break;
		t = model__thread(m, s->tid, true);
		gt_grow((void **)&t->samples, &t->samples_cap, t->nsamples, sizeof(*t->samples));
		t->samples[t->nsamples++] = (struct m_sample){
		    .ts = s->hdr.ts_ns,
		    .syscall = s->syscall_nr,
		    .ustack = s->ustack_id,
		    .kstack = s->kstack_id,
		    .flags = s->flags,
		    .pcount = size >= sizeof(*s) ? s->pcount : 0,
		};
		break;
	}
	case GT_REC_CALL: {
		const struct gt_call *c = rec;
		const struct m_probe *pr;
		struct m_call mc;

		if (size < sizeof(*c) || c->exit_ns < c->enter_ns)
			break;
		pr = model__probe(m, c->func_id);
		if (!pr || pr->cat < 0)
			break;
		mc = (struct m_call){c->enter_ns, c->exit_ns, 0, pr->cat, c->func_id};
		keep_call(m, c->tid, &mc);
		if (!in_windows(m, c->enter_ns, c->exit_ns))
			break;
		t = model__thread(m, c->tid, true);
		gt_grow((void **)&t->calls, &t->calls_cap, t->ncalls, sizeof(*t->calls));
		t->calls[t->ncalls++] = mc;
		break;
	}
	case GT_REC_GPU_OP: {
		const struct gt_gpu_op *g = rec;
		const struct gt_gpu_rec *gr = &g->rec;
		uint64_t idx;
		int cat;

		/* Host-side CUDA time: API calls and synchronisations. */
		if (size < sizeof(*g) || (gr->kind != 4 && gr->kind != 5) || !gr->tid ||
		    gr->end_ns < gr->start_ns)
			break;
		cat = GT_CAT_CUDA;
		if (gr->kind == 5 && gr->name_id && u64map_get(&m->name_idx, gr->name_id, &idx) &&
		    m->name_alloc[idx])
			cat = GT_CAT_ALLOC;
		keep_call(m, gr->tid,
			  &(struct m_call){gr->start_ns, gr->end_ns, 0, cat, UINT32_MAX});
		if (!in_windows(m, gr->start_ns, gr->end_ns))
			break;
		t = model__thread(m, gr->tid, true);
		gt_grow((void **)&t->calls, &t->calls_cap, t->ncalls, sizeof(*t->calls));
		t->calls[t->ncalls++] =
		    (struct m_call){gr->start_ns, gr->end_ns, 0, cat, UINT32_MAX};
		break;
	}
	default:
		break;
	}
	return 0;
}

static int cmp_off(const void *a, const void *b)
{
	const struct m_off *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

static int cmp_sample(const void *a, const void *b)
{
	const struct m_sample *x = a, *y = b;

	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

static int cmp_call(const void *a, const void *b)
{
	const struct m_call *x = a, *y = b;

	return x->enter < y->enter ? -1 : x->enter > y->enter;
}

void model__calls_index(struct m_call *c, size_t n)
{
	uint64_t mx = 0;

	for (size_t i = 0; i < n; i++) {
		mx = GT_MAX(mx, c[i].exit);
		c[i].max_exit = mx;
	}
}

static void pass2(struct capture *c, struct model *m, struct an_result *r)
{
	struct capture_block b;

	m->nwindows = 0;
	for (size_t i = 0; i < r->ngaps; i++) {
		gt_grow((void **)&m->windows, &m->windows_cap, m->nwindows, sizeof(*m->windows));
		m->windows[m->nwindows++] =
		    (struct m_window){r->gaps[i].start_ns, r->gaps[i].end_ns};
	}
	m->nwindows = merge_windows(m->windows, m->nwindows);
	if (!m->nwindows && !m->opts.keep_all)
		return;
	capture__rewind(c);
	while (capture__next(c, &b) == 1)
		if (b.type == GT_BLK_EVENTS)
			capture__events(b.body, b.len, pass2_record, m);
	for (size_t i = 0; i < m->nthreads; i++) {
		struct m_thread *t = &m->threads[i];

		gt_sort(t->offs, t->noffs, sizeof(*t->offs), cmp_off);
		gt_sort(t->samples, t->nsamples, sizeof(*t->samples), cmp_sample);
		gt_sort(t->calls, t->ncalls, sizeof(*t->calls), cmp_call);
		model__calls_index(t->calls, t->ncalls);
		gt_sort(t->all_offs, t->nall_offs, sizeof(*t->all_offs), cmp_off);
		gt_sort(t->all_calls, t->nall_calls, sizeof(*t->all_calls), cmp_call);
	}
}

static void fill_threads(struct model *m, struct an_result *r)
{
	r->threads = gt_xcalloc(m->nthreads ? m->nthreads : 1, sizeof(*r->threads));
	for (size_t i = 0; i < m->nthreads; i++) {
		r->threads[i].pid = m->threads[i].pid;
		r->threads[i].tid = m->threads[i].tid;
		memcpy(r->threads[i].comm, m->threads[i].comm, sizeof(r->threads[i].comm));
	}
	r->nthreads = m->nthreads;
}

int an_result__stack(const struct an_result *r, int32_t stack_id,
		     void (*cb)(const char *name, const char *module, uint64_t ip, void *ctx),
		     void *ctx)
{
	const struct model *m = r->model;
	const struct m_stack *st = m ? model__stack(m, stack_id) : NULL;

	if (!st)
		return 0;
	for (uint16_t i = 0; i < st->nr; i++) {
		const struct m_sym *s = model__sym(m, st->pid, st->ips[i]);

		cb(s ? s->name : NULL, s ? s->module : NULL, st->ips[i], ctx);
	}
	return st->nr;
}

const char *an_result__probe_name(const struct an_result *r, uint32_t func_id)
{
	const struct m_probe *p = r->model ? model__probe(r->model, func_id) : NULL;

	return p ? p->name : NULL;
}

const char *an_result__thread_name(const struct an_result *r, uint32_t tid)
{
	for (size_t i = 0; i < r->nthreads; i++)
		if (r->threads[i].tid == tid)
			return r->threads[i].comm[0] ? r->threads[i].comm : "?";
	return "?";
}

int analysis__run(struct capture *c, const struct an_opts *o, struct an_result **out, char *err,
		  size_t errlen)
{
	struct an_result *r = gt_xcalloc(1, sizeof(*r));
	struct model *m = gt_xcalloc(1, sizeof(*m));
	const char *v;

	m->opts = *o;
	/* Owned by r from here: counters read in pass 1 land in the model too. */
	r->model = m;
	r->path = gt_xstrdup(capture__path(c));
	v = capture__header(c, "comm");
	r->comm = gt_xstrdup(v ? v : "?");
	v = capture__header(c, "pid");
	r->pid = v ? (uint32_t)strtoul(v, NULL, 10) : 0;
	v = capture__header(c, "start_mono_ns");
	r->start_ns = v ? strtoull(v, NULL, 10) : 0;
	v = capture__header(c, "sample_period_ns");
	r->sample_period_ns = v ? strtoull(v, NULL, 10) : 0;
	m->sample_period = r->sample_period_ns ? r->sample_period_ns : NSEC_PER_MSEC;
	v = capture__header(c, "gpu_source");
	/* A copy: the result outlives the capture it came from. */
	r->gpu_source = gt_xstrdup(v ? v : "usdt");

	if (pass1(c, m, r)) {
		snprintf(err, errlen, "cannot analyse %s", capture__path(c));
		an_result__free(r);
		return -1;
	}
	r->duration_ns = r->end_ns - r->start_ns;
	gaps__find(m, r);
	pass2(c, m, r);
	attrib__explain_all(m, r);
	fill_threads(m, r);
	for (size_t i = 0; i < capture__nwarnings(c); i++)
		add_warning(r, capture__warning(c, i));
	r->truncated = capture__truncated(c);
	if (!r->clean_end && !r->truncated)
		add_warning(r, "the capture has no END block: the recorder was stopped abruptly; "
			       "the data up to its last flush is used");
	if (!m->nops)
		add_warning(r, "no GPU activity in this capture: was the GPU producer (CUPTI "
			       "library or USDT probes) attached? see 'gaptrace info'");
	if (r->gpu_rejected || r->gpu_clipped) {
		char msg[384];

		snprintf(msg, sizeof(msg),
			 "%llu GPU records rejected as impossible (ending before they start, "
			 "starting long before the capture, lasting longer than it, or claiming "
			 "an impossible drop count) and %llu GPU operations clipped to the "
			 "capture window: the GPU producer sent bad timestamps",
			 (unsigned long long)r->gpu_rejected, (unsigned long long)r->gpu_clipped);
		add_warning(r, msg);
	}
	if (r->lost_producer || r->lost_gpu) {
		char msg[256];

		snprintf(msg, sizeof(msg),
			 "%llu GPU activity records dropped by CUPTI and %llu lost on the way to "
			 "gaptrace: GPU busy time is missing there, so gaps near them may be too "
			 "long",
			 (unsigned long long)r->lost_producer, (unsigned long long)r->lost_gpu);
		add_warning(r, msg);
	}
	if (m->host_view && m->host_view_from) {
		char msg[256], d[32];

		snprintf(
		    msg, sizeof(msg),
		    "GPU records stop %s into the capture (the CUPTI library stepped aside): "
		    "after that GPU busy time is the host-side view (from a launch call to the "
		    "next synchronize return)",
		    gt_fmt_dur(m->host_view_from > r->start_ns ? m->host_view_from - r->start_ns
							       : 0,
			       d, sizeof(d)));
		add_warning(r, msg);
	} else if (m->host_view) {
		add_warning(r, "no GPU records: GPU busy time is the host-side view (from a "
			       "launch call to the next synchronize return); gaps are host time");
	}
	*out = r;
	return 0;
}

void an_result__free(struct an_result *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->ngaps; i++) {
		free(r->gaps[i].chain);
		free(r->gaps[i].holders);
	}
	free(r->gaps);
	free(r->pieces);
	free(r->devices);
	free(r->threads);
	for (size_t i = 0; i < r->nwarnings; i++)
		free(r->warnings[i]);
	free(r->warnings);
	free(r->path);
	free(r->comm);
	free((char *)r->gpu_source);
	model__free(r->model);
	free(r);
}
