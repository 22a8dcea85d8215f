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
#include "output/export_priv.h"
#include "support/json.h"
#include "output/present.h"
#include "analysis/timeline.h"
#include "support/util.h"

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

const struct tl_thread *export__thread_of(const struct timeline *tl, uint32_t tid)
{
	for (size_t i = 0; i < tl->nthreads; i++)
		if (tl->threads[i].tid == tid)
			return &tl->threads[i];
	return NULL;
}

bool export__has_track(const struct tl_thread *t)
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
		w = export__thread_of(x->tl, s->waker);
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
		    covered(x, export__thread_of(tl, o->launch_tid), q(x, o->launch_ns))) {
			const struct tl_thread *lt = export__thread_of(tl, o->launch_tid);
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

void export__thread_label(const struct an_result *r, uint32_t tid, char *buf, size_t len)
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

void export__event_name(const struct xb *x, const struct ev *e, char *name, size_t len,
			const char **cat)
{
	const struct an_result *r = x->r;
	const struct timeline *tl = x->tl;
	char who[64];

	switch (e->kind) {
	case EV_SPAN:
		span_name(&tl->threads[e->a].spans[e->b], name, len);
		*cat = "state";
		break;
	case EV_CALL:
		snprintf(name, len, "%s", tl->threads[e->a].calls[e->b].name);
		*cat = "call";
		break;
	case EV_OP:
		snprintf(name, len, "%s", tl_op_kind_name(tl->ops[e->a].kind));
		*cat = "gpu";
		break;
	case EV_GAP:
		gap_label(&r->gaps[e->a], name, len);
		*cat = "gap";
		break;
	case EV_HOP: {
		const struct an_hop *h = &r->gaps[e->a].chain[e->b];

		export__thread_label(r, h->tid, who, sizeof(who));
		snprintf(name, len, "%s %s", h->depth ? "waited for" : "critical thread", who);
		*cat = "gap";
		break;
	}
	case EV_LAUNCH:
		snprintf(name, len, "launch call -> GPU start");
		*cat = "gap";
		break;
	case EV_UNIT:
		snprintf(name, len, "unit %llu", (unsigned long long)tl->units[e->a].id);
		*cat = "unit";
		break;
	case EV_LOSS:
		snprintf(name, len, "lost events");
		*cat = "loss";
		break;
	default:
		snprintf(name, len, "?");
		*cat = "?";
		break;
	}
}

static void write_event(struct json *j, const struct xb *x, const struct ev *e)
{
	const struct an_result *r = x->r;
	const struct timeline *tl = x->tl;
	char num[40], name[160], who[64];
	const char *cat;

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
	export__event_name(x, e, name, sizeof(name), &cat);
	json_kstr(j, "name", name);
	json_kstr(j, "cat", cat);
	switch (e->kind) {
	case EV_SPAN: {
		const struct tl_span *s = &tl->threads[e->a].spans[e->b];

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
			export__thread_label(r, s->waker, who, sizeof(who));
			json_kstr(j, "woken_by", who);
		}
		json_obj_end(j);
		break;
	}
	case EV_CALL: {
		const struct tl_call *c = &tl->threads[e->a].calls[e->b];

		json_key(j, "args");
		json_obj_begin(j);
		json_kstr(j, "category", gt_cat_names[c->cat]);
		json_obj_end(j);
		break;
	}
	case EV_OP: {
		const struct tl_op *o = &tl->ops[e->a];

		json_key(j, "args");
		json_obj_begin(j);
		json_ku64(j, "op_id", o->op_id);
		json_ku64(j, "stream", o->stream);
		if (o->launch_tid) {
			export__thread_label(r, o->launch_tid, who, sizeof(who));
			json_kstr(j, "launched_by", who);
			json_ki64(j, "launch_to_start_ns", (int64_t)(o->start - o->launch_ns));
		}
		json_obj_end(j);
		break;
	}
	case EV_GAP: {
		const struct an_gap *g = &r->gaps[e->a];
		char d[32];

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
			export__thread_label(r, g->tid, who, sizeof(who));
			json_kstr(j, "critical_thread", who);
		}
		cats_arg(j, "by_category_ns", g->by_cat);
		json_obj_end(j);
		break;
	}
	case EV_HOP: {
		const struct an_hop *h = &r->gaps[e->a].chain[e->b];

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
		break;
	case EV_UNIT: {
		const struct tl_unit *u = &tl->units[e->a];

		json_key(j, "args");
		json_obj_begin(j);
		json_ku64(j, "id", u->id);
		if (u->tid) {
			export__thread_label(r, u->tid, who, sizeof(who));
			json_kstr(j, "thread", who);
		}
		json_obj_end(j);
		break;
	}
	case EV_LOSS:
		break;
	default:
		break;
	}
	json_obj_end(j);
}

void export__tracks(const struct xb *x, const struct lane *lanes, size_t nlanes,
		    void (*cb)(void *ctx, const struct export_track *t), void *ctx)
{
	const struct an_result *r = x->r;
	const struct timeline *tl = x->tl;
	struct export_track t;
	char name[96];

#define TRACK(k, p, th, n, s)                                                        \
	do {                                                                         \
		t = (struct export_track){                                           \
		    .kind = (k), .pid = (p), .tid = (th), .name = (n), .sort = (s)}; \
		cb(ctx, &t);                                                         \
	} while (0)
	for (size_t i = 0; i < tl->nthreads; i++) {
		const struct tl_thread *th = &tl->threads[i];
		bool first = true;

		if (!export__has_track(th))
			continue;
		for (size_t k = 0; k < i && first; k++)
			if (export__has_track(&tl->threads[k]) && tl->threads[k].pid == th->pid)
				first = false;
		if (first) {
			const struct tl_thread *main = export__thread_of(tl, th->pid);

			snprintf(name, sizeof(name), "%s",
				 main && main->comm[0] ? main->comm : r->comm);
			TRACK(XT_PROCESS, th->pid, th->pid, name, 0);
		}
		TRACK(XT_THREAD, th->pid, th->tid, th->comm[0] ? th->comm : "?", 0);
	}
	for (size_t d = 0; d < r->ndevices; d++) {
		uint32_t pid = export__gpu_pid(r->devices[d].id);

		snprintf(name, sizeof(name), "GPU %u", r->devices[d].id);
		TRACK(XT_PROCESS, pid, 0, name, 0);
		TRACK(XT_PROCESS_SORT, pid, 0, NULL, -100 + (long)d);
		TRACK(XT_THREAD, pid, pid + EXPORT_TID_GAPS, "idle gaps (explained)", 0);
		TRACK(XT_THREAD_SORT, pid, pid + EXPORT_TID_GAPS, NULL, 0);
	}
	for (size_t i = 0; i < nlanes; i++) {
		if (lanes[i].lane)
			snprintf(name, sizeof(name), "stream %u #%u", lanes[i].stream,
				 lanes[i].lane + 1);
		else
			snprintf(name, sizeof(name), "stream %u", lanes[i].stream);
		TRACK(XT_THREAD, export__gpu_pid(lanes[i].device), lanes[i].tid, name, 0);
		TRACK(XT_THREAD_SORT, export__gpu_pid(lanes[i].device), lanes[i].tid, NULL,
		      (long)(1 + i));
	}
	TRACK(XT_PROCESS, EXPORT_PID_GAPTRACE, 0, "gaptrace: work units", 0);
	TRACK(XT_PROCESS_SORT, EXPORT_PID_GAPTRACE, 0, NULL, -200);
	for (uint32_t lane = 0; lane < x->unit_lanes; lane++) {
		if (lane)
			snprintf(name, sizeof(name), "work units #%u", lane + 1);
		TRACK(XT_THREAD, EXPORT_PID_GAPTRACE, EXPORT_PID_GAPTRACE + EXPORT_TID_UNITS + lane,
		      lane ? name : "work units", 0);
	}
	if (tl->nlosses)
		TRACK(XT_THREAD, EXPORT_PID_GAPTRACE, EXPORT_PID_GAPTRACE + EXPORT_TID_LOSSES,
		      "lost events", 0);
#undef TRACK
}

static void meta_track(void *ctx, const struct export_track *t)
{
	static const char *const what[] = {"process_name", "thread_name", "process_sort_index",
					   "thread_sort_index"};
	bool sort = t->kind == XT_PROCESS_SORT || t->kind == XT_THREAD_SORT;

	meta(ctx, what[t->kind], t->pid, t->tid, sort ? "sort_index" : "name", t->name, t->sort);
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

void export__build(struct xb *x, const struct an_result *r, struct lane **lanes, size_t *nlanes)
{
	struct timeline *tl = timeline__new(r);

	*x = (struct xb){.r = r, .tl = tl};
	*lanes = NULL;
	*nlanes = 0;
	x->base = base_of(r, tl);
	for (uint32_t i = 0; i < tl->nthreads; i++) {
		thread_events(x, i);
		wake_flows(x, i);
	}
	gpu_events(x, lanes, nlanes);
	gap_events(x);
	unit_events(x);
	gt_sort(x->ev, x->n, sizeof(*x->ev), cmp_ev);
}

void export__done(struct xb *x, struct lane *lanes)
{
	free(lanes);
	free(x->ev);
	timeline__free((struct timeline *)x->tl);
}

int export__chrome_json(FILE *f, const struct an_result *r)
{
	struct lane *lanes;
	size_t nlanes;
	struct json j;
	struct xb x;

	export__build(&x, r, &lanes, &nlanes);
	/* Locked once, not per character (as in report_json). */
	flockfile(f);
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
	json_kstr(&j, "thread_states", x.tl->full ? "whole capture" : "none");
	json_ku64(&j, "gaps", r->ngaps);
	json_obj_end(&j);
	json_key(&j, "traceEvents");
	json_arr_begin(&j);
	export__tracks(&x, lanes, nlanes, meta_track, &j);
	for (size_t i = 0; i < x.n; i++) {
		/* One event per line: greppable, and diffs of exports stay readable. */
		fputc('\n', f);
		write_event(&j, &x, &x.ev[i]);
	}
	json_arr_end(&j);
	json_obj_end(&j);
	fputc('\n', f);
	funlockfile(f);
	export__done(&x, lanes);
	return ferror(f) ? -1 : 0;
}
