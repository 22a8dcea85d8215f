// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * model_pass1.c: pass 1 of reading a capture into the model.  It keeps what is
 * small (GPU ops, launches, units, threads, stacks, symbols, probes, NVTX
 * names, losses, header counters) and fixes the capture window, so that the
 * gaps can be found before any CPU-side record is kept.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/capture.h"
#include "gaptrace/gaptrace.h"
#include "gaptrace/gaptrace-cupti-api.h"
#include "analysis/model.h"
#include "support/util.h"

struct pass1 {
	struct model *m;
	struct an_result *r;
	uint64_t min_ts, max_ts;	 /* CPU-side records */
	uint64_t gpu_min_ts, gpu_max_ts; /* GPU ops: only when no CPU-side record says */
	uint64_t lost_gpu;
	uint64_t blk_reach; /* the block being read: earliest time a near record covers */
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

static size_t round_up8(size_t n)
{
	return (n + 7) & ~(size_t)7;
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
#define GPU_DROP_MAX	    (1ULL << 40)
#define GPU_BATCH_CLAIM_MAX (1ULL << 24)

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

/* Far records are kept aside as u64 size, the record, padding to 8. */
static void keep_far(struct model *m, const void *rec, size_t size)
{
	uint64_t n = size;
	size_t need = sizeof(n) + round_up8(size);

	gt_grow((void **)&m->far, &m->far_cap, m->far_len + need, 1);
	memcpy(m->far + m->far_len, &n, sizeof(n));
	memcpy(m->far + m->far_len + sizeof(n), rec, size);
	memset(m->far + m->far_len + sizeof(n) + size, 0, round_up8(size) - size);
	m->far_len += need;
}

static int pass1_record(const void *rec, size_t size, void *ctx)
{
	struct pass1 *p = ctx;
	struct model *m = p->m;
	const struct gt_hdr *h = rec;
	uint64_t from;
	bool far;

	p->r->records++;
	if (model__cpu_reach(rec, size, &from, &far)) {
		if (far)
			keep_far(m, rec, size);
		else if (from < p->blk_reach)
			p->blk_reach = from;
	}
	/* Each record has at least its type's first layout: the reader dropped shorter ones. */
	switch (h->type) {
	case GT_REC_GPU_OP: {
		const struct gt_gpu_op *g = rec;
		const struct gaptrace_gpu_rec *gr = &g->rec;

		switch (gr->kind) {
		case GAPTRACE_GPU_KERNEL:
		case GAPTRACE_GPU_MEMCPY:
		case GAPTRACE_GPU_MEMSET:
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
		case GAPTRACE_GPU_API: /* the launch of op_id on thread tid */
			if (gr->tid) {
				add_launch(m, gr->op_id, gr->start_ns, g->pid, gr->tid);
				/* A driver call folded into this runtime call, by its own id. */
				if (gr->bytes && gr->bytes != gr->op_id)
					add_launch(m, gr->bytes, gr->start_ns, g->pid, gr->tid);
			}
			break;
		case GAPTRACE_GPU_RANGE: /* NVTX: a unit candidate */
			if (gr->end_ns >= gr->start_ns && gr->start_ns) {
				gt_grow((void **)&m->ranges, &m->ranges_cap, m->nranges,
					sizeof(*m->ranges));
				m->ranges[m->nranges++] = (struct m_range){gr->start_ns, gr->end_ns,
									   gr->tid, gr->name_id};
			}
			break;
		case GAPTRACE_GPU_DROPPED:
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

		add_launch(m, l->op_id, l->hdr.ts_ns, l->pid, l->tid);
		break;
	}
	case GT_REC_UNIT: {
		const struct gt_unit *u = rec;

		add_unit_event(m, u->unit_id, u->hdr.ts_ns, u->tid, u->begin != 0);
		break;
	}
	case GT_REC_TASK:
		task_event(p, rec);
		break;
	case GT_REC_OFFCPU: {
		const struct gt_offcpu *o = rec;
		struct m_thread *th = model__thread(m, o->tid, true);

		th->pid = o->pid;
		th->known = true;
		note_ts(p, o->on_ns);
		classify__note_futex(m, o);
		break;
	}
	case GT_REC_SAMPLE: {
		const struct gt_sample *s = rec;

		model__thread(m, s->tid, true)->known = true;
		model__thread(m, s->tid, true)->pid = s->pid;
		m->nsamples_total++;
		note_ts(p, s->hdr.ts_ns);
		break;
	}
	case GT_REC_CALL: {
		const struct gt_call *c = rec;
		const struct m_probe *pr = model__probe(m, c->func_id);

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
	case GT_REC_PEER: {
		const struct gt_peer *pe = rec;
		struct m_peer *mp;

		gt_grow((void **)&m->peers, &m->peers_cap, m->npeers, sizeof(*m->peers));
		mp = &m->peers[m->npeers++];
		*mp = (struct m_peer){.pid = pe->pid, .tid = pe->tid};
		memcpy(mp->comm, pe->comm, sizeof(mp->comm) - 1);
		break;
	}
	case GT_REC_NAME: {
		const struct gt_name *n = rec;
		uint64_t idx;
		size_t len;

		/* Bounded by the record: names come from the traced process. */
		len = GT_MIN((size_t)n->len, size - offsetof(struct gt_name, name));
		len = GT_MIN(len, (size_t)GT_NAME_MAX - 1);
		if (u64map_get(&m->name_idx, n->name_id, &idx))
			break;
		gt_grow((void **)&m->names, &m->names_cap, m->nnames, sizeof(*m->names));
		gt_grow((void **)&m->name_alloc, &m->name_alloc_cap, m->nnames,
			sizeof(*m->name_alloc));
		m->names[m->nnames] = gt_xstrndup(n->name, strnlen(n->name, len));
		m->name_alloc[m->nnames] = api_name_is_alloc(m->names[m->nnames]);
		u64map_put(&m->name_idx, n->name_id, m->nnames++);
		break;
	}
	case GT_REC_LOSS: {
		const struct gt_loss *l = rec;

		if (l->kind == GT_LOSS_RINGBUF || l->kind == GT_LOSS_MAP_FULL)
			add_loss(m, l->from_ns, l->to_ns);
		/*
		 * Records one gpu_batch firing claimed beyond those read: the count is
		 * the producer's word; 2^24 records (1.3 GB of array) is no real batch.
		 */
		if (l->kind == GT_LOSS_GPU && l->count >= GPU_BATCH_CLAIM_MAX)
			p->r->gpu_rejected++;
		else if (l->kind == GT_LOSS_GPU)
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
	uint64_t key = model__sym_key(s->pid, s->ip), idx;
	struct m_sym *sym;

	if (u64map_get(&m->sym_idx, key, &idx))
		return 0;
	gt_grow((void **)&m->syms, &m->syms_cap, m->nsyms, sizeof(*m->syms));
	sym = &m->syms[m->nsyms];
	sym->name = s->name_len ? gt_xstrndup(s->name, s->name_len) : NULL;
	sym->module = gt_xstrndup(s->module, s->module_len);
	sym->off = s->sym_off;
	u64map_put(&m->sym_idx, key, m->nsyms++);
	return 0;
}

static int inline_cb(const struct capture_inline *in, void *ctx)
{
	struct model *m = ctx;
	uint64_t key, idx;
	struct m_inline *mi;

	if (!in->pid)
		return 0;
	key = model__inline_key(in->pid, in->ip, in->flags & GT_INLINE_CALLER);
	if (u64map_get(&m->inl_idx, key, &idx))
		return 0;
	gt_grow((void **)&m->inls, &m->inls_cap, m->ninls, sizeof(*m->inls));
	mi = &m->inls[m->ninls];
	mi->n = in->n;
	mi->names = gt_xmalloc(in->n * sizeof(*mi->names));
	for (uint8_t k = 0; k < in->n; k++)
		mi->names[k] = gt_xstrndup(in->name[k], in->name_len[k]);
	u64map_put(&m->inl_idx, key, m->ninls++);
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
	p->name = gt_xstrndup(pr->name, pr->name_len);
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

	switch (capture_key__find(key)) {
	case CK_LOST_RINGBUF:
		r->lost_ringbuf = v;
		break;
	case CK_LOST_STACK:
		r->lost_stack = v;
		break;
	case CK_LOST_MAP_FULL:
		r->lost_map_full = v;
		break;
	case CK_UNWIND_WALKS:
		r->unw_walks = v;
		break;
	case CK_UNWIND_END_ROOT:
		r->unw_root = v;
		break;
	case CK_LOST_GPU_TRUNCATED:
		r->lost_gpu = GT_MAX(r->lost_gpu, v);
		break;
	case CK_END_MONO_NS:
		r->end_ns = v;
		break;
	case CK_GPU_SOURCE:
		/* END's value: the source at the end, when it changed while recording. */
		free((char *)r->gpu_source);
		r->gpu_source = gt_xstrdup(value);
		break;
	case CK_SAMPLING_FROM_NS:
		((struct model *)r->model)->sampling_from = v;
		break;
	default:
		break;
	}
	return 0;
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
		/*
		 * Work that ended just before the capture began (CUPTI may deliver it
		 * after an attach): clipping would turn it inside out (start > end)
		 * and open a gap before the capture.
		 */
		if (o.end <= m->start && len) {
			r->gpu_clipped++;
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

int model__pass1(struct capture *c, struct model *m, struct an_result *r)
{
	struct pass1 p = {.m = m, .r = r};
	struct capture_block b;
	int ret;

	/* Probes, stacks and symbols may follow the events that use them. */
	capture__only(c, 1U << GT_BLK_PROBES);
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
		p.blk_reach = UINT64_MAX;
		switch (b.type) {
		case GT_BLK_EVENTS:
			if (capture__events(b.body, b.len, pass1_record, &p) < 0)
				model__add_warning(
				    r, "an EVENTS block holds a malformed record: the rest "
				       "of that block was skipped");
			break;
		case GT_BLK_GPU_OPS:
			if (capture__gpu_ops(b.body, b.len, pass1_record, &p) < 0)
				model__add_warning(
				    r, "a GPU_OPS block is malformed: the rest of that block "
				       "was skipped");
			break;
		case GT_BLK_STACKS:
			capture__stacks(b.body, b.len, stack_cb, m);
			break;
		case GT_BLK_SYMBOLS:
			capture__symbols(b.body, b.len, sym_cb, m);
			break;
		case GT_BLK_INLINES:
			capture__inlines(b.body, b.len, inline_cb, m);
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
		/* Pass 2 steps after each block of records (model__pass2). */
		if (capture__has_records(b.type)) {
			gt_grow((void **)&m->reach, &m->reach_cap, m->nreach, sizeof(*m->reach));
			m->reach[m->nreach++] = p.blk_reach;
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
	m->nlosses = model__merge_windows(m->losses, m->nlosses);
	/* Units that never saw their begin or end are closed at the capture's edges. */
	for (size_t i = 0; i < m->nunits; i++) {
		if (!m->units[i].begin)
			m->units[i].begin = m->start;
		if (!m->units[i].end || m->units[i].end < m->units[i].begin)
			m->units[i].end = m->end;
	}
	return 0;
}
