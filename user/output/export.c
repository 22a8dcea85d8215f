// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * export.c: the capture as a timeline to look at in the Perfetto UI (what
 * `gaptrace export` writes): thread states, GPU streams, explained gaps,
 * units, flows.
 *
 * The Chrome JSON trace format carries all of it: ph X slices (states,
 * calls, kernels, gaps, units), v1 flow events s/f (waker -> wakee, launch ->
 * kernel) and M metadata for names.  Viewers rebuild nesting from times, so
 * every timestamp is a multiple of 1/8 us: exact as a double and as integer
 * ns, a child never ends past its parent after either viewer's arithmetic.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "output/export.h"
#include "support/json.h"
#include "output/present.h"
#include "analysis/timeline.h"
#include "support/util.h"

enum ev_kind {
	EV_SPAN = 0, /* a: thread, b: span */
	EV_CALL,     /* a: thread, b: call */
	EV_OP,	     /* a: op */
	EV_GAP,	     /* a: gap */
	EV_HOP,	     /* a: gap, b: hop */
	EV_LAUNCH,   /* a: gap (launch call -> GPU start) */
	EV_UNIT,     /* a: unit */
	EV_LOSS,     /* a: loss window */
	EV_FLOW_S,   /* a: flow id, b: 0 wakeup, 1 launch */
	EV_FLOW_F,
};

struct ev {
	uint64_t ts, dur; /* quanta since the base */
	uint32_t pid, tid;
	uint32_t a, b;
	uint16_t depth; /* nesting order among slices that start together */
	uint8_t kind;
};

struct xb {
	const struct an_result *r;
	const struct timeline *tl;
	uint64_t base;
	struct ev *ev;
	size_t n, cap;
	uint32_t next_flow;
	uint32_t unit_lanes;
};

static uint64_t q(const struct xb *x, uint64_t ns)
{
	return ns <= x->base ? 0 : (ns - x->base + EXPORT_QUANTUM_NS / 2) / EXPORT_QUANTUM_NS;
}

static struct ev *push(struct xb *x, uint8_t kind, uint64_t qts, uint64_t qdur, uint32_t pid,
		       uint32_t tid, uint32_t a, uint32_t b, uint16_t depth)
{
	struct ev *e;

	gt_grow((void **)&x->ev, &x->cap, x->n, sizeof(*x->ev));
	e = &x->ev[x->n++];
	*e = (struct ev){.ts = qts,
			 .dur = qdur,
			 .pid = pid,
			 .tid = tid,
			 .a = a,
			 .b = b,
			 .depth = depth,
			 .kind = kind};
	return e;
}

/* A slice [from, to) in ns; nothing when it rounds to zero length. */
static void slice(struct xb *x, uint8_t kind, uint64_t from, uint64_t to, uint32_t pid,
		  uint32_t tid, uint32_t a, uint32_t b, uint16_t depth)
{
	uint64_t s = q(x, from), e = q(x, to);

	if (e > s)
		push(x, kind, s, e - s, pid, tid, a, b, depth);
}

static const struct tl_thread *thread_of(const struct timeline *tl, uint32_t tid)
{
	for (size_t i = 0; i < tl->nthreads; i++)
		if (tl->threads[i].tid == tid)
			return &tl->threads[i];
	return NULL;
}

static bool has_track(const struct tl_thread *t)
{
	return t && (t->nspans || t->ncalls);
}

/* Whether a state slice of t covers quantum qts (a flow must start inside one). */
static bool covered(const struct xb *x, const struct tl_thread *t, uint64_t qts)
{
	size_t lo = 0, hi = t ? t->nspans : 0;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (q(x, t->spans[mid].to) <= qts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < (t ? t->nspans : 0) && q(x, t->spans[lo].from) <= qts;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Calls are parents of the state spans they cover, so states are cut at
 * call boundaries; a call that overlaps its parent's end (never expected on
 * one thread) is clipped to keep the nesting that viewers require.
 */
static void thread_events(struct xb *x, uint32_t ti)
{
	const struct tl_thread *t = &x->tl->threads[ti];
	uint64_t *stack = gt_xmalloc(sizeof(uint64_t) * (t->ncalls + 1));
	uint64_t *cuts = gt_xmalloc(sizeof(uint64_t) * (2 * t->ncalls + 1));
	size_t depth = 0, ncuts = 0, c = 0;

	for (size_t i = 0; i < t->ncalls; i++) {
		uint64_t s = q(x, t->calls[i].enter), e = q(x, t->calls[i].exit);

		while (depth && stack[depth - 1] <= s)
			depth--;
		if (depth && e > stack[depth - 1])
			e = stack[depth - 1];
		if (e <= s)
			continue;
		push(x, EV_CALL, s, e - s, t->pid, t->tid, ti, (uint32_t)i, (uint16_t)depth);
		stack[depth++] = e;
		cuts[ncuts++] = s;
		cuts[ncuts++] = e;
	}
	gt_sort(cuts, ncuts, sizeof(*cuts), cmp_u64);
	for (size_t i = 0; i < t->nspans; i++) {
		uint64_t s = q(x, t->spans[i].from), e = q(x, t->spans[i].to);

		while (c < ncuts && cuts[c] <= s)
			c++;
		for (size_t k = c; s < e; k++) {
			uint64_t cut = k < ncuts && cuts[k] < e ? cuts[k] : e;

			if (cut > s)
				push(x, EV_SPAN, s, cut - s, t->pid, t->tid, ti, (uint32_t)i, 1000);
			s = cut;
		}
	}
	free(stack);
	free(cuts);
}

/* Flow from the waker's running slice to the slice that starts at the wakeup. */
static void wake_flows(struct xb *x, uint32_t ti)
{
	const struct tl_thread *t = &x->tl->threads[ti];

	for (size_t i = 0; i < t->nspans; i++) {
		const struct tl_span *s = &t->spans[i];
		const struct tl_thread *w;
		uint64_t at;
		uint32_t id;

		if (s->state != TL_BLOCKED || !s->waker || s->waker == t->tid)
			continue;
		w = thread_of(x->tl, s->waker);
		at = q(x, s->to);
		/* A waker outside its traced life (e.g. exit wakeups) has nowhere to start from. */
		if (!covered(x, w, at) || !covered(x, t, at + 1))
			continue;
		id = ++x->next_flow;
		push(x, EV_FLOW_S, at, 0, w->pid, w->tid, id, 0, 0);
		/* One quantum in, so the flow binds to the slice starting at the wakeup. */
		push(x, EV_FLOW_F, at + 1, 0, t->pid, t->tid, id, 0, 0);
	}
}

struct lane {
	uint32_t device, stream, lane, tid;
	uint64_t end;
};

/* Kernels and copies on one track per stream (more if a stream's ops overlap). */
static void gpu_events(struct xb *x, struct lane **lanes, size_t *nlanes)
{
	const struct timeline *tl = x->tl;
	size_t cap = 0;

	for (size_t i = 0; i < tl->nops; i++) {
		const struct tl_op *o = &tl->ops[i];
		uint64_t s = q(x, o->start), e = q(x, o->end);
		struct lane *ln = NULL;
		uint32_t nlane = 0, ntrack = 0;

		if (e <= s)
			e = s + 1; /* a sub-quantum kernel still shows */
		for (size_t k = 0; k < *nlanes; k++) {
			struct lane *l = &(*lanes)[k];

			if (l->device != o->device)
				continue;
			ntrack++;
			if (l->stream != o->stream)
				continue;
			nlane++;
			if (!ln && l->end <= s)
				ln = l;
		}
		if (!ln) {
			gt_grow((void **)lanes, &cap, *nlanes, sizeof(**lanes));
			ln = &(*lanes)[(*nlanes)++];
			*ln = (struct lane){o->device, o->stream, nlane,
					    export__gpu_pid(o->device) + EXPORT_TID_STREAM + ntrack,
					    0};
		}
		ln->end = e;
		push(x, EV_OP, s, e - s, export__gpu_pid(o->device), ln->tid, (uint32_t)i, 0, 0);
		if (o->launch_tid && o->launch_ns &&
		    covered(x, thread_of(tl, o->launch_tid), q(x, o->launch_ns))) {
			const struct tl_thread *lt = thread_of(tl, o->launch_tid);
			uint32_t id = ++x->next_flow;

			push(x, EV_FLOW_S, q(x, o->launch_ns), 0, lt->pid, lt->tid, id, 1, 0);
			push(x, EV_FLOW_F, e - s >= 2 ? s + 1 : s, 0, export__gpu_pid(o->device),
			     ln->tid, id, 1, 0);
		}
	}
}

static void gap_events(struct xb *x)
{
	const struct an_result *r = x->r;

	for (size_t i = 0; i < r->ngaps; i++) {
		const struct an_gap *g = &r->gaps[i];
		uint32_t pid = export__gpu_pid(g->device), tid = pid + EXPORT_TID_GAPS;

		slice(x, EV_GAP, g->start_ns, g->end_ns, pid, tid, (uint32_t)i, 0, 0);
		for (size_t h = 0; h < g->nchain; h++)
			slice(x, EV_HOP, g->chain[h].from_ns, g->chain[h].to_ns, pid, tid,
			      (uint32_t)i, (uint32_t)h, (uint16_t)(1 + g->chain[h].depth));
		if (g->launch_ns > g->start_ns && g->launch_ns < g->end_ns)
			slice(x, EV_LAUNCH, g->launch_ns, g->end_ns, pid, tid, (uint32_t)i, 0, 1);
	}
}

static void unit_events(struct xb *x)
{
	const struct timeline *tl = x->tl;
	uint64_t lane_end[64] = {};

	for (size_t i = 0; i < tl->nunits; i++) {
		uint64_t s = q(x, tl->units[i].begin), e = q(x, tl->units[i].end);
		uint32_t lane = 0;

		if (e <= s)
			continue;
		/* Concurrent units (several workers) each get a lane. */
		while (lane < GT_ARRAY_SIZE(lane_end) - 1 && lane_end[lane] > s)
			lane++;
		lane_end[lane] = e;
		x->unit_lanes = GT_MAX(x->unit_lanes, lane + 1);
		push(x, EV_UNIT, s, e - s, EXPORT_PID_GAPTRACE,
		     EXPORT_PID_GAPTRACE + EXPORT_TID_UNITS + lane, (uint32_t)i, 0, 0);
	}
	for (size_t i = 0; i < tl->nlosses; i++)
		slice(x, EV_LOSS, tl->losses[i].from, tl->losses[i].to, EXPORT_PID_GAPTRACE,
		      EXPORT_PID_GAPTRACE + EXPORT_TID_LOSSES, (uint32_t)i, 0, 0);
}

static int cmp_ev(const void *a, const void *b)
{
	const struct ev *x = a, *y = b;
	int fx = x->kind >= EV_FLOW_S, fy = y->kind >= EV_FLOW_S;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	/* Slices first, so a flow at the same time binds to a slice already open. */
	if (fx != fy)
		return fx - fy;
	/* A parent before the children that start with it. */
	if (x->dur != y->dur)
		return x->dur > y->dur ? -1 : 1;
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	return 0;
}

/* ---- writing ---- */

static void fmt_q(char *buf, size_t len, uint64_t quanta)
{
	/* quanta * 125 ns in us: an integer and eighths, exact in decimal. */
	snprintf(buf, len, "%llu.%03u", (unsigned long long)(quanta / 8),
		 (unsigned)(quanta % 8) * 125);
}

static void thread_label(const struct an_result *r, uint32_t tid, char *buf, size_t len)
{
	snprintf(buf, len, "%s:%u", an_result__thread_name(r, tid), tid);
}

static void meta(struct json *j, const char *what, uint32_t pid, uint32_t tid, const char *key,
		 const char *sval, long ival)
{
	json_obj_begin(j);
	json_kstr(j, "ph", "M");
	json_kstr(j, "name", what);
	json_ku64(j, "pid", pid);
	json_ku64(j, "tid", tid);
	/* speedscope wants a ts on every event. */
	json_ku64(j, "ts", 0);
	json_key(j, "args");
	json_obj_begin(j);
	if (sval)
		json_kstr(j, key, sval);
	else
		json_ki64(j, key, ival);
	json_obj_end(j);
	json_obj_end(j);
}

static void cats_arg(struct json *j, const char *key, const uint64_t *by_cat)
{
	json_key(j, key);
	json_obj_begin(j);
	for (int c = 0; c < GT_CAT_MAX; c++)
		if (by_cat[c])
			json_ku64(j, gt_cat_names[c], by_cat[c]);
	json_obj_end(j);
}

/* "lock 97% · cpu 2%": the categories of at least 1%, largest first (3 at most). */
static void gap_label(const struct an_gap *g, char *buf, size_t len)
{
	bool used[GT_CAT_MAX] = {};
	size_t off = (size_t)snprintf(buf, len, "gap:");

	for (int n = 0; n < 3; n++) {
		int best = -1;

		for (int c = 0; c < GT_CAT_MAX; c++)
			if (!used[c] && (best < 0 || g->by_cat[c] > g->by_cat[best]))
				best = c;
		if (best < 0 || !g->duration_ns || g->by_cat[best] * 100 < g->duration_ns)
			break;
		used[best] = true;
		off += (size_t)snprintf(buf + off, len - off, "%s %s %.0f%%", n ? " ·" : "",
					gt_cat_names[best],
					100.0 * (double)g->by_cat[best] / (double)g->duration_ns);
		if (off >= len)
			break;
	}
}

static void span_name(const struct tl_span *s, char *buf, size_t len)
{
	const char *sys = tl_syscall_name(s->syscall);

	switch (s->state) {
	case TL_BLOCKED:
		if (sys)
			snprintf(buf, len, "blocked: %s (%s)", sys,
				 s->cat >= 0 ? gt_cat_names[s->cat] : "?");
		else if (s->syscall >= 0)
			snprintf(buf, len, "blocked: syscall %d (%s)", s->syscall,
				 s->cat >= 0 ? gt_cat_names[s->cat] : "?");
		else
			snprintf(buf, len, "blocked (%s)",
				 s->cat >= 0 ? gt_cat_names[s->cat] : "?");
		break;
	case TL_PREEMPTED:
		snprintf(buf, len, "runnable (preempted)");
		break;
	case TL_UNKNOWN:
		snprintf(buf, len, "off-CPU since before tracing");
		break;
	default:
		snprintf(buf, len, "%s", tl_state_names[s->state]);
		break;
	}
}

static void write_event(struct json *j, const struct xb *x, const struct ev *e)
{
	const struct an_result *r = x->r;
	const struct timeline *tl = x->tl;
	char num[40], name[160], who[64];

	json_obj_begin(j);
	if (e->kind >= EV_FLOW_S) {
		json_kstr(j, "ph", e->kind == EV_FLOW_S ? "s" : "f");
		json_kstr(j, "cat", e->b ? "launch" : "wakeup");
		json_kstr(j, "name", e->b ? "launch" : "wakeup");
		json_ku64(j, "id", e->a);
		if (e->kind == EV_FLOW_F)
			json_kstr(j, "bp", "e");
	} else {
		json_kstr(j, "ph", "X");
	}
	json_ku64(j, "pid", e->pid);
	json_ku64(j, "tid", e->tid);
	fmt_q(num, sizeof(num), e->ts);
	json_kraw(j, "ts", num);
	if (e->kind >= EV_FLOW_S) {
		json_obj_end(j);
		return;
	}
	fmt_q(num, sizeof(num), e->dur);
	json_kraw(j, "dur", num);
	switch (e->kind) {
	case EV_SPAN: {
		const struct tl_span *s = &tl->threads[e->a].spans[e->b];

		span_name(s, name, sizeof(name));
		json_kstr(j, "name", name);
		json_kstr(j, "cat", "state");
		/* Running slices carry no args, so speedscope merges them into one frame. */
		if (s->state == TL_RUNNING)
			break;
		json_key(j, "args");
		json_obj_begin(j);
		if (s->cat >= 0)
			json_kstr(j, "category", gt_cat_names[s->cat]);
		if (s->state == TL_BLOCKED && s->syscall >= 0)
			json_ki64(j, "syscall", s->syscall);
		if (s->state == TL_BLOCKED && s->handoff)
			json_kbool(j, "handoff", true);
		if (s->waker && s->state != TL_PREEMPTED) {
			thread_label(r, s->waker, who, sizeof(who));
			json_kstr(j, "woken_by", who);
		}
		json_obj_end(j);
		break;
	}
	case EV_CALL: {
		const struct tl_call *c = &tl->threads[e->a].calls[e->b];

		json_kstr(j, "name", c->name);
		json_kstr(j, "cat", "call");
		json_key(j, "args");
		json_obj_begin(j);
		json_kstr(j, "category", gt_cat_names[c->cat]);
		json_obj_end(j);
		break;
	}
	case EV_OP: {
		const struct tl_op *o = &tl->ops[e->a];

		json_kstr(j, "name", tl_op_kind_name(o->kind));
		json_kstr(j, "cat", "gpu");
		json_key(j, "args");
		json_obj_begin(j);
		json_ku64(j, "op_id", o->op_id);
		json_ku64(j, "stream", o->stream);
		if (o->launch_tid) {
			thread_label(r, o->launch_tid, who, sizeof(who));
			json_kstr(j, "launched_by", who);
			json_ki64(j, "launch_to_start_ns", (int64_t)(o->start - o->launch_ns));
		}
		json_obj_end(j);
		break;
	}
	case EV_GAP: {
		const struct an_gap *g = &r->gaps[e->a];
		char d[32];

		gap_label(g, name, sizeof(name));
		json_kstr(j, "name", name);
		json_kstr(j, "cat", "gap");
		json_key(j, "args");
		json_obj_begin(j);
		json_ku64(j, "index", g->index);
		json_kstr(j, "duration", gt_fmt_dur(g->duration_ns, d, sizeof(d)));
		json_ku64(j, "start_ns", g->start_ns);
		json_ku64(j, "duration_ns", g->duration_ns);
		json_kstr(j, "kind", gt_gap_kind_names[g->kind]);
		if (g->unit_before >= 0)
			json_ki64(j, "unit_before", g->unit_before);
		if (g->unit_after >= 0)
			json_ki64(j, "unit_after", g->unit_after);
		if (g->tid) {
			thread_label(r, g->tid, who, sizeof(who));
			json_kstr(j, "critical_thread", who);
		}
		cats_arg(j, "by_category_ns", g->by_cat);
		json_obj_end(j);
		break;
	}
	case EV_HOP: {
		const struct an_hop *h = &r->gaps[e->a].chain[e->b];

		thread_label(r, h->tid, who, sizeof(who));
		snprintf(name, sizeof(name), "%s %s", h->depth ? "waited for" : "critical thread",
			 who);
		json_kstr(j, "name", name);
		json_kstr(j, "cat", "gap");
		json_key(j, "args");
		json_obj_begin(j);
		json_ku64(j, "depth", h->depth);
		cats_arg(j, "by_category_ns", h->by_cat);
		/* The hand-off came from a process gaptrace did not trace. */
		present__json_untraced(j, h);
		json_obj_end(j);
		break;
	}
	case EV_LAUNCH:
		json_kstr(j, "name", "launch call -> GPU start");
		json_kstr(j, "cat", "gap");
		break;
	case EV_UNIT: {
		const struct tl_unit *u = &tl->units[e->a];

		snprintf(name, sizeof(name), "unit %llu", (unsigned long long)u->id);
		json_kstr(j, "name", name);
		json_kstr(j, "cat", "unit");
		json_key(j, "args");
		json_obj_begin(j);
		json_ku64(j, "id", u->id);
		if (u->tid) {
			thread_label(r, u->tid, who, sizeof(who));
			json_kstr(j, "thread", who);
		}
		json_obj_end(j);
		break;
	}
	case EV_LOSS:
		json_kstr(j, "name", "lost events");
		json_kstr(j, "cat", "loss");
		break;
	default:
		break;
	}
	json_obj_end(j);
}

static void write_meta(struct json *j, const struct xb *x, const struct lane *lanes, size_t nlanes)
{
	const struct an_result *r = x->r;
	const struct timeline *tl = x->tl;
	char name[96];

	for (size_t i = 0; i < tl->nthreads; i++) {
		const struct tl_thread *t = &tl->threads[i];
		bool first = true;

		if (!has_track(t))
			continue;
		for (size_t k = 0; k < i && first; k++)
			if (has_track(&tl->threads[k]) && tl->threads[k].pid == t->pid)
				first = false;
		if (first) {
			const struct tl_thread *main = thread_of(tl, t->pid);

			snprintf(name, sizeof(name), "%s",
				 main && main->comm[0] ? main->comm : r->comm);
			meta(j, "process_name", t->pid, t->pid, "name", name, 0);
		}
		meta(j, "thread_name", t->pid, t->tid, "name", t->comm[0] ? t->comm : "?", 0);
	}
	for (size_t d = 0; d < r->ndevices; d++) {
		uint32_t pid = export__gpu_pid(r->devices[d].id);

		snprintf(name, sizeof(name), "GPU %u", r->devices[d].id);
		meta(j, "process_name", pid, 0, "name", name, 0);
		meta(j, "process_sort_index", pid, 0, "sort_index", NULL, -100 + (long)d);
		meta(j, "thread_name", pid, pid + EXPORT_TID_GAPS, "name", "idle gaps (explained)",
		     0);
		meta(j, "thread_sort_index", pid, pid + EXPORT_TID_GAPS, "sort_index", NULL, 0);
	}
	for (size_t i = 0; i < nlanes; i++) {
		if (lanes[i].lane)
			snprintf(name, sizeof(name), "stream %u #%u", lanes[i].stream,
				 lanes[i].lane + 1);
		else
			snprintf(name, sizeof(name), "stream %u", lanes[i].stream);
		meta(j, "thread_name", export__gpu_pid(lanes[i].device), lanes[i].tid, "name", name,
		     0);
		meta(j, "thread_sort_index", export__gpu_pid(lanes[i].device), lanes[i].tid,
		     "sort_index", NULL, (long)(1 + i));
	}
	meta(j, "process_name", EXPORT_PID_GAPTRACE, 0, "name", "gaptrace: work units", 0);
	meta(j, "process_sort_index", EXPORT_PID_GAPTRACE, 0, "sort_index", NULL, -200);
	for (uint32_t lane = 0; lane < x->unit_lanes; lane++) {
		if (lane)
			snprintf(name, sizeof(name), "work units #%u", lane + 1);
		meta(j, "thread_name", EXPORT_PID_GAPTRACE,
		     EXPORT_PID_GAPTRACE + EXPORT_TID_UNITS + lane, "name",
		     lane ? name : "work units", 0);
	}
	if (tl->nlosses)
		meta(j, "thread_name", EXPORT_PID_GAPTRACE, EXPORT_PID_GAPTRACE + EXPORT_TID_LOSSES,
		     "name", "lost events", 0);
}

static uint64_t base_of(const struct an_result *r, const struct timeline *tl)
{
	uint64_t base = r->start_ns;

	for (size_t i = 0; i < tl->nops; i++)
		if (tl->ops[i].start && tl->ops[i].start < base)
			base = tl->ops[i].start;
	for (size_t i = 0; i < tl->nops; i++)
		if (tl->ops[i].launch_ns && tl->ops[i].launch_ns < base)
			base = tl->ops[i].launch_ns;
	for (size_t i = 0; i < tl->nunits; i++)
		if (tl->units[i].begin && tl->units[i].begin < base)
			base = tl->units[i].begin;
	/* Whole quanta, so the absolute time of any ts is base + ts exactly. */
	return base - base % EXPORT_QUANTUM_NS;
}

int export__chrome_json(FILE *f, const struct an_result *r)
{
	struct timeline *tl = timeline__new(r);
	struct xb x = {.r = r, .tl = tl};
	struct lane *lanes = NULL;
	size_t nlanes = 0;
	struct json j;

	x.base = base_of(r, tl);
	for (uint32_t i = 0; i < tl->nthreads; i++) {
		thread_events(&x, i);
		wake_flows(&x, i);
	}
	gpu_events(&x, &lanes, &nlanes);
	gap_events(&x);
	unit_events(&x);
	gt_sort(x.ev, x.n, sizeof(*x.ev), cmp_ev);

	json_init(&j, f, false);
	json_obj_begin(&j);
	json_kstr(&j, "displayTimeUnit", "ns");
	json_key(&j, "otherData");
	json_obj_begin(&j);
	json_kstr(&j, "generator", "gaptrace " GT_VERSION);
	json_kstr(&j, "capture", r->path);
	json_kstr(&j, "comm", r->comm);
	json_ku64(&j, "pid", r->pid);
	json_ku64(&j, "base_mono_ns", x.base);
	json_ku64(&j, "quantum_ns", EXPORT_QUANTUM_NS);
	json_kstr(&j, "thread_states", tl->full ? "whole capture" : "none");
	json_ku64(&j, "gaps", r->ngaps);
	json_obj_end(&j);
	json_key(&j, "traceEvents");
	json_arr_begin(&j);
	write_meta(&j, &x, lanes, nlanes);
	for (size_t i = 0; i < x.n; i++) {
		/* One event per line: greppable, and diffs of exports stay readable. */
		fputc('\n', f);
		write_event(&j, &x, &x.ev[i]);
	}
	json_arr_end(&j);
	json_obj_end(&j);
	fputc('\n', f);
	free(lanes);
	free(x.ev);
	timeline__free(tl);
	return ferror(f) ? -1 : 0;
}
