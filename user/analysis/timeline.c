// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * timeline.c: turns the analysis model into plain per-thread state spans and
 * GPU/unit lists, so outputs (export, html) never need the model's internals.
 */
#include <stdlib.h>
#include <string.h>

#include "gaptrace/gaptrace.h"
#include "gaptrace/gaptrace_syscalls.h"
#include "analysis/classify.h"
#include "analysis/model.h"
#include "analysis/timeline.h"
#include "support/util.h"

const char *const tl_state_names[TL_STATE_MAX] = {"running", "runnable", "preempted", "blocked",
						  "unknown"};

const char *tl_syscall_name(int32_t nr)
{
	/* The blocking syscalls a dispatch thread is usually seen in (x86-64). */
	static const struct {
		int32_t nr;
		const char *name;
	} names[] = {
#define GT_SYSCALL_NAME_(name, nr) {nr, #name},
	    GT_SYSCALLS_NAMED(GT_SYSCALL_NAME_)
#undef GT_SYSCALL_NAME_
	};

	for (size_t i = 0; i < GT_ARRAY_SIZE(names); i++)
		if (names[i].nr == nr)
			return names[i].name;
	return NULL;
}

const char *tl_op_kind_name(uint16_t kind)
{
	switch (kind) {
	case GAPTRACE_GPU_KERNEL:
		return "kernel";
	case GAPTRACE_GPU_MEMCPY:
		return "memcpy";
	case GAPTRACE_GPU_MEMSET:
		return "memset";
	default:
		return "gpu op";
	}
}

static void add_span(struct tl_thread *t, size_t *cap, struct tl_span s)
{
	if (s.to <= s.from)
		return;
	gt_grow((void **)&t->spans, cap, t->nspans, sizeof(*t->spans));
	t->spans[t->nspans++] = s;
}

#define SPAN(f, t, st)                   \
	((struct tl_span){.from = (f),   \
			  .to = (t),     \
			  .state = (st), \
			  .cat = -1,     \
			  .syscall = -1, \
			  .ustack = -1,  \
			  .kstack = -1})

/*
 * Running between intervals, then each interval as preempted, or blocked up
 * to its wakeup and runnable from there to its switch-in.  Overlapping
 * records (never expected) are clipped so the spans stay in order.
 */
static void thread_spans(struct model *m, const struct m_thread *mt, struct tl_thread *t)
{
	uint64_t cursor = mt->born ? mt->born : m->start;
	uint64_t end = mt->died ? mt->died : m->end;
	size_t cap = 0;

	if (!mt->nall_offs)
		return;
	for (size_t i = 0; i < mt->nall_offs; i++) {
		const struct m_off *o = &mt->all_offs[i];
		uint64_t off = GT_MAX(o->off, cursor), on = GT_MAX(o->on, off);
		struct tl_span s;
		bool handoff = false;

		add_span(t, &cap, SPAN(cursor, off, TL_RUNNING));
		if ((o->flags & GT_OFF_NEW_TASK) ||
		    ((o->flags & GT_OFF_PARTIAL_START) && mt->born)) {
			/* Created, then waiting for its first CPU. */
			s = SPAN(off, on, TL_RUNNABLE);
			s.cat = GT_CAT_SCHED;
			add_span(t, &cap, s);
		} else if ((o->flags & GT_OFF_PARTIAL_START) && !o->wake) {
			/* Asleep when tracing began: the syscall it sleeps in was not seen. */
			add_span(t, &cap, SPAN(off, on, TL_UNKNOWN));
		} else if (o->flags & GT_OFF_PREEMPTED) {
			s = SPAN(off, on, TL_PREEMPTED);
			s.cat = GT_CAT_SCHED;
			s.ustack = o->ustack;
			s.kstack = o->kstack;
			add_span(t, &cap, s);
		} else {
			uint64_t wake = o->wake ? GT_MAX(GT_MIN(o->wake, on), off) : on;

			s = SPAN(off, wake, TL_BLOCKED);
			s.cat = (int8_t)classify_blocked(m, mt->pid, o, &handoff);
			s.handoff = handoff;
			s.syscall = o->syscall;
			s.waker = (o->flags & GT_OFF_WAKER_IRQ) ? 0 : o->waker_tid;
			s.ustack = o->ustack;
			s.kstack = o->kstack;
			add_span(t, &cap, s);
			s = SPAN(wake, on, TL_RUNNABLE);
			s.cat = GT_CAT_SCHED;
			s.waker = (o->flags & GT_OFF_WAKER_IRQ) ? 0 : o->waker_tid;
			add_span(t, &cap, s);
		}
		cursor = GT_MAX(cursor, on);
	}
	add_span(t, &cap, SPAN(cursor, GT_MAX(end, cursor), TL_RUNNING));
}

static void thread_calls(const struct model *m, const struct m_thread *mt, struct tl_thread *t)
{
	t->calls = gt_xcalloc(mt->nall_calls ? mt->nall_calls : 1, sizeof(*t->calls));
	for (size_t i = 0; i < mt->nall_calls; i++) {
		const struct m_call *c = &mt->all_calls[i];
		const struct m_probe *p =
		    c->func_id == UINT32_MAX ? NULL : model__probe(m, c->func_id);

		t->calls[t->ncalls++] = (struct tl_call){
		    .enter = c->enter,
		    .exit = c->exit,
		    .cat = c->cat,
		    .name = p ? p->name : "CUDA API",
		};
	}
}

struct timeline *timeline__new(const struct an_result *r)
{
	struct timeline *tl = gt_xcalloc(1, sizeof(*tl));
	struct model *m = r->model;

	tl->start = r->start_ns;
	tl->end = r->end_ns;
	if (!m)
		return tl;
	tl->full = m->opts.keep_all;
	tl->threads = gt_xcalloc(m->nthreads ? m->nthreads : 1, sizeof(*tl->threads));
	for (size_t i = 0; i < m->nthreads; i++) {
		const struct m_thread *mt = &m->threads[i];
		struct tl_thread *t = &tl->threads[tl->nthreads++];

		t->pid = mt->pid;
		t->tid = mt->tid;
		memcpy(t->comm, mt->comm, sizeof(t->comm));
		t->born = mt->born;
		t->died = mt->died;
		thread_spans(m, mt, t);
		thread_calls(m, mt, t);
	}
	tl->ops = gt_xcalloc(m->nops ? m->nops : 1, sizeof(*tl->ops));
	for (size_t i = 0; i < m->nops; i++) {
		const struct m_op *o = &m->ops[i];
		const struct m_launch *l = model__launch(m, o->op_id);

		tl->ops[tl->nops++] = (struct tl_op){
		    .start = o->start,
		    .end = o->end,
		    .op_id = o->op_id,
		    .launch_ns = l ? l->ts : 0,
		    .device = o->device,
		    .stream = o->stream,
		    .launch_tid = l ? l->tid : 0,
		    .kind = o->kind,
		};
	}
	tl->units = gt_xcalloc(m->nunits ? m->nunits : 1, sizeof(*tl->units));
	for (size_t i = 0; i < m->nunits; i++)
		tl->units[tl->nunits++] = (struct tl_unit){m->units[i].id, m->units[i].begin,
							   m->units[i].end, m->units[i].tid};
	tl->losses = gt_xcalloc(m->nlosses ? m->nlosses : 1, sizeof(*tl->losses));
	for (size_t i = 0; i < m->nlosses; i++)
		tl->losses[tl->nlosses++] = (struct tl_window){m->losses[i].from, m->losses[i].to};
	return tl;
}

void timeline__free(struct timeline *tl)
{
	if (!tl)
		return;
	for (size_t i = 0; i < tl->nthreads; i++) {
		free(tl->threads[i].spans);
		free(tl->threads[i].calls);
	}
	free(tl->threads);
	free(tl->ops);
	free(tl->units);
	free(tl->losses);
	free(tl);
}
