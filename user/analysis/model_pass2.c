// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * model_pass2.c: pass 2 of reading a capture into the model.  With the gaps
 * known, it keeps only the CPU-side records (off-CPU intervals, samples,
 * probe and CUDA API calls) that overlap a gap window, so memory follows the
 * time spent in gaps, not the length of the capture; then sorts them per
 * thread for attribution.
 */
#include <stdlib.h>
#include <string.h>

#include "capture/capture.h"
#include "gaptrace/gaptrace.h"
#include "analysis/model.h"
#include "support/util.h"

#define SAMPLE_REACH_NS M_SAMPLE_REACH_NS
/* Records kept between two explain steps: bounds memory, each step sorts what is kept. */
#define PASS2_BATCH (1U << 17)

struct pass2 {
	struct model *m;
	bool replay; /* reading the far records pass 1 kept aside */
};

static bool in_windows(const struct model *m, uint64_t from, uint64_t to)
{
	/* The first window that ends at or after from overlaps if it starts <= to. */
	size_t i = model__window_after(m, from);

	return i < m->nwindows && m->windows[i].from <= to;
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
	struct pass2 *p2 = ctx;
	struct model *m = p2->m;
	const struct gt_hdr *h = rec;
	struct m_thread *t;
	uint64_t from;
	bool far;

	/* Far records were read from pass 1's copy before this pass began. */
	if (!p2->replay && model__cpu_reach(rec, size, &from, &far) && far)
		return 0;

	/* Each record has at least its type's first layout: the reader dropped shorter ones. */
	switch (h->type) {
	case GT_REC_OFFCPU: {
		const struct gt_offcpu *o = rec;
		struct m_off mo;
		uint64_t off, on;

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
		    .waker_pid = o->waker_pid,
		    .waker_syscall = o->waker_syscall,
		    .syscall = o->syscall_nr,
		    .ustack = o->ustack_id,
		    .kstack = o->kstack_id,
		    .args = {o->args[0], o->args[1], o->args[2],
			     size >= sizeof(*o) ? o->args[3] : 0},
		};
		keep_off(m, o->tid, &mo);
		if (!in_windows(m, off, on))
			break;
		t = model__thread(m, o->tid, true);
		gt_grow((void **)&t->offs, &t->offs_cap, t->noffs, sizeof(*t->offs));
		t->offs[t->noffs++] = mo;
		m->pass2_new++;
		m->pass2_held++;
		break;
	}
	case GT_REC_SAMPLE: {
		const struct gt_sample *s = rec;

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
		m->pass2_new++;
		m->pass2_held++;
		break;
	}
	case GT_REC_CALL: {
		const struct gt_call *c = rec;
		const struct m_probe *pr;
		struct m_call mc;

		if (c->exit_ns < c->enter_ns)
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
		m->pass2_new++;
		m->pass2_held++;
		break;
	}
	case GT_REC_GPU_OP: {
		const struct gt_gpu_op *g = rec;
		const struct gaptrace_gpu_rec *gr = &g->rec;
		uint64_t idx;
		int cat;

		/* Host-side CUDA time: API calls and synchronisations. */
		if ((gr->kind != GAPTRACE_GPU_SYNC && gr->kind != GAPTRACE_GPU_API) || !gr->tid ||
		    gr->end_ns < gr->start_ns)
			break;
		cat = GT_CAT_CUDA;
		if (gr->kind == GAPTRACE_GPU_API && gr->name_id &&
		    u64map_get(&m->name_idx, gr->name_id, &idx) && m->name_alloc[idx])
			cat = GT_CAT_ALLOC;
		keep_call(m, gr->tid,
			  &(struct m_call){gr->start_ns, gr->end_ns, 0, cat, UINT32_MAX});
		if (!in_windows(m, gr->start_ns, gr->end_ns))
			break;
		t = model__thread(m, gr->tid, true);
		gt_grow((void **)&t->calls, &t->calls_cap, t->ncalls, sizeof(*t->calls));
		t->calls[t->ncalls++] =
		    (struct m_call){gr->start_ns, gr->end_ns, 0, cat, UINT32_MAX};
		m->pass2_new++;
		m->pass2_held++;
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

static void sort_threads(struct model *m, bool all)
{
	for (size_t i = 0; i < m->nthreads; i++) {
		struct m_thread *t = &m->threads[i];

		gt_sort(t->offs, t->noffs, sizeof(*t->offs), cmp_off);
		gt_sort(t->samples, t->nsamples, sizeof(*t->samples), cmp_sample);
		gt_sort(t->calls, t->ncalls, sizeof(*t->calls), cmp_call);
		model__calls_index(t->calls, t->ncalls);
		if (!all)
			continue;
		gt_sort(t->all_offs, t->nall_offs, sizeof(*t->all_offs), cmp_off);
		gt_sort(t->all_calls, t->nall_calls, sizeof(*t->all_calls), cmp_call);
	}
}

/*
 * Attribution of a window reads the records that overlap it, the calls
 * ending up to a sample period and 200 us before it (a sample's uprobe
 * call) and the last sample before it (whether the thread ran throughout):
 * records ending before t are dropped, but each thread keeps its latest
 * sample.  The arrays are sorted (pass 2 sorts them before each step).
 */
void model__drop_before(struct model *m, uint64_t t)
{
	m->pass2_held = 0;
	for (size_t i = 0; i < m->nthreads; i++) {
		struct m_thread *th = &m->threads[i];
		size_t n = 0, k = 0;

		for (size_t j = 0; j < th->noffs; j++)
			if (th->offs[j].on >= t)
				th->offs[n++] = th->offs[j];
		th->noffs = n;
		n = 0;
		for (size_t j = 0; j < th->ncalls; j++)
			if (th->calls[j].exit >= t)
				th->calls[n++] = th->calls[j];
		th->ncalls = n;
		model__calls_index(th->calls, th->ncalls);
		while (k < th->nsamples && th->samples[k].ts < t)
			k++;
		if (k > 1) {
			memmove(th->samples, th->samples + k - 1,
				(th->nsamples - (k - 1)) * sizeof(*th->samples));
			th->nsamples -= k - 1;
		}
		m->pass2_held += th->noffs + th->ncalls + th->nsamples;
	}
}

/*
 * With the gaps known, reads the CPU-side records and keeps those that
 * overlap a gap window.  Memory follows what lies in gaps not yet explained:
 * after a block, every window that ends before the earliest time any later
 * block reaches back to (pass 1 noted it per block; far records were read
 * first) has all its records, so ready explains it and drops them.
 */
void model__pass2(struct capture *c, struct model *m, struct an_result *r,
		  void (*ready)(struct model *m, struct an_result *r, uint64_t horizon, void *ctx),
		  void *ctx)
{
	struct pass2 p2 = {.m = m, .replay = true};
	size_t batch = m->opts.stream_batch ? m->opts.stream_batch : PASS2_BATCH;
	struct capture_block b;
	size_t blk = 0;

	m->nwindows = 0;
	for (size_t i = 0; i < r->ngaps; i++) {
		gt_grow((void **)&m->windows, &m->windows_cap, m->nwindows, sizeof(*m->windows));
		m->windows[m->nwindows++] =
		    (struct m_window){r->gaps[i].start_ns, r->gaps[i].end_ns};
	}
	m->nwindows = model__merge_windows(m->windows, m->nwindows);
	if (!m->nwindows && !m->opts.keep_all)
		return;
	/* reach[i] becomes the earliest reach of block i and every block after it. */
	for (size_t i = m->nreach; i-- > 1;)
		m->reach[i - 1] = GT_MIN(m->reach[i - 1], m->reach[i]);
	for (size_t off = 0; off + sizeof(uint64_t) <= m->far_len;) {
		uint64_t n;

		memcpy(&n, m->far + off, sizeof(n));
		pass2_record(m->far + off + sizeof(n), (size_t)n, &p2);
		off += sizeof(n) + ((n + 7) & ~7ULL);
	}
	free(m->far);
	m->far = NULL;
	m->far_len = m->far_cap = 0;
	p2.replay = false;
	capture__rewind(c);
	while (capture__next(c, &b) == 1) {
		if (!capture__has_records(b.type))
			continue;
		capture__records(b.type, b.body, b.len, pass2_record, &p2);
		blk++;
		if (!ready || m->pass2_new < batch)
			continue;
		r->stream_peak = GT_MAX(r->stream_peak, (uint64_t)m->pass2_held);
		r->stream_steps++;
		sort_threads(m, false);
		ready(m, r, blk < m->nreach ? m->reach[blk] : 0, ctx);
		m->pass2_new = 0;
	}
	r->stream_peak = GT_MAX(r->stream_peak, (uint64_t)m->pass2_held);
	sort_threads(m, true);
}
