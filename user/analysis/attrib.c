// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * attrib.c: splits each gap into categories.  The critical thread's time
 * from the gap's start to its launch call is cut into off-CPU pieces (by the
 * interval record), uprobe/API call pieces (exact) and on-CPU pieces (split
 * by its samples); hand-off waits continue at the waker (the critical path);
 * the launch-to-start latency is cuda.  Every nanosecond goes to exactly one
 * category, so each gap's categories sum to its length.
 */
#include <stdlib.h>
#include <string.h>

#include "gaptrace/gaptrace.h"
#include "analysis/attrib.h"
#include "analysis/classify.h"
#include "analysis/model.h"
#include "support/util.h"

#define MAX_DEPTH_LIMIT 16

struct ex {
	struct model *m;
	struct an_gap *g;
	size_t chain_cap, holders_cap;
	uint32_t path[MAX_DEPTH_LIMIT + 1]; /* threads on the current chain */
	unsigned max_depth;
	struct an_result *r;
	size_t *r_pieces_cap; /* capacity of r->pieces, kept across gaps */
	bool pieces;
	struct holder_probe *hp; /* set while explaining a lock holder's time */
};

/* The holder's activity while a waiter waited: per-stack weights. */
#define HP_STACKS 16
struct holder_probe {
	struct {
		int32_t ustack, kstack;
		uint64_t ns;
	} st[HP_STACKS];
	size_t n;
};

/* Where a piece of time came from (its stacks), for flame graphs. */
struct src {
	uint32_t tid;
	int32_t ustack, kstack;
	uint32_t func;
	uint8_t kind;
	uint8_t depth;
};

#define SRC(t, k, d) \
	((struct src){.tid = (t), .ustack = -1, .kstack = -1, .kind = (k), .depth = (d)})

static void explain(struct ex *x, uint32_t tid, uint64_t a, uint64_t b, unsigned depth,
		    uint64_t *acc);

/* Attributes [from, to) to cat and, when asked, keeps it as a piece. */
static void take(struct ex *x, uint64_t *acc, int cat, uint64_t from, uint64_t to, struct src sc)
{
	struct an_result *r = x->r;
	struct an_piece *p;

	if (to <= from)
		return;
	acc[cat] += to - from;
	if (x->hp) {
		struct holder_probe *hp = x->hp;
		size_t i;

		for (i = 0; i < hp->n; i++)
			if (hp->st[i].ustack == sc.ustack && hp->st[i].kstack == sc.kstack)
				break;
		if (i == hp->n && hp->n < HP_STACKS)
			hp->st[hp->n++] = (typeof(hp->st[0])){sc.ustack, sc.kstack, 0};
		if (i < hp->n)
			hp->st[i].ns += to - from;
		return;
	}
	if (!x->pieces)
		return;
	gt_grow((void **)&r->pieces, x->r_pieces_cap, r->npieces, sizeof(*r->pieces));
	p = &r->pieces[r->npieces++];
	*p = (struct an_piece){.ns = to - from,
			       .gap = x->g->index,
			       .tid = sc.tid,
			       .ustack = sc.ustack,
			       .kstack = sc.kstack,
			       .func_id = sc.func,
			       .cat = (uint16_t)cat,
			       .kind = sc.kind,
			       .depth = sc.depth};
}

/*
 * A lock wait stays `lock`, but the operator wants to know who held the lock
 * and what it did meanwhile: explain the holder's own time over [u, v) into
 * the holder record, without touching the gap's categories or chain.
 */
static void note_holder(struct ex *x, uint32_t tid, uint64_t u, uint64_t v, unsigned depth)
{
	struct an_gap *g = x->g;
	struct holder_probe hp = {};
	struct an_holder *h = NULL;
	uint64_t tmp[GT_CAT_MAX] = {};

	if (!tid || v <= u || x->hp)
		return;
	for (size_t i = 0; i < g->nholders; i++)
		if (g->holders[i].tid == tid)
			h = &g->holders[i];
	if (!h) {
		gt_grow((void **)&g->holders, &x->holders_cap, g->nholders, sizeof(*g->holders));
		h = &g->holders[g->nholders++];
		*h = (struct an_holder){.tid = tid, .ustack = -1, .kstack = -1};
	}
	h->wait_ns += v - u;
	if (!model__thread(x->m, tid, false))
		return;
	x->hp = &hp;
	explain(x, tid, u, v, depth + 1, tmp);
	x->hp = NULL;
	for (int c = 0; c < GT_CAT_MAX; c++)
		h->by_cat[c] += tmp[c];
	for (size_t i = 0; i < hp.n; i++) {
		if (hp.st[i].ns > h->stack_ns && (hp.st[i].ustack >= 0 || hp.st[i].kstack >= 0)) {
			h->stack_ns = hp.st[i].ns;
			h->ustack = hp.st[i].ustack;
			h->kstack = hp.st[i].kstack;
		}
	}
}

static size_t add_hop(struct ex *x, uint32_t tid, uint32_t waker_of, uint64_t from, uint64_t to,
		      unsigned depth)
{
	struct an_gap *g = x->g;

	/* Probing a lock holder records nothing in the gap's chain. */
	if (x->hp)
		return SIZE_MAX;
	gt_grow((void **)&g->chain, &x->chain_cap, g->nchain, sizeof(*g->chain));
	memset(&g->chain[g->nchain], 0, sizeof(g->chain[0]));
	g->chain[g->nchain] = (struct an_hop){
	    .tid = tid, .waker_of = waker_of, .from_ns = from, .to_ns = to, .depth = depth};
	return g->nchain++;
}

/* First index whose key (via get) is >= v in a sorted array of n elements. */
#define LOWER_BOUND(arr, n, field, v)                  \
	({                                             \
		size_t lo_ = 0, hi_ = (n);             \
		while (lo_ < hi_) {                    \
			size_t mid_ = (lo_ + hi_) / 2; \
			if ((arr)[mid_].field < (v))   \
				lo_ = mid_ + 1;        \
			else                           \
				hi_ = mid_;            \
		}                                      \
		lo_;                                   \
	})

/*
 * Calls cb on the pieces of [p, q) that no uprobe/API call of t covers, and
 * attributes covered pieces to the call's category.  The outermost call
 * claims a nested one's time (both are the same kind of work in practice).
 */
static void split_calls(struct ex *x, struct m_thread *t, uint64_t p, uint64_t q, unsigned depth,
			uint64_t *acc,
			void (*cb)(struct ex *x, struct m_thread *t, uint64_t u, uint64_t v,
				   void *arg, uint64_t *acc),
			void *arg)
{
	uint64_t cursor = p;
	/* Calls ending by p are skipped: start at the first one that ends later. */
	size_t i = LOWER_BOUND(t->calls, t->ncalls, max_exit, p + 1);

	for (; i < t->ncalls && t->calls[i].enter < q; i++) {
		const struct m_call *c = &t->calls[i];
		uint64_t s, e;

		if (c->exit <= cursor)
			continue;
		s = GT_MAX(c->enter, cursor);
		e = GT_MIN(c->exit, q);
		struct src sc = SRC(t->tid, GT_PIECE_CALL, depth);

		if (s > cursor)
			cb(x, t, cursor, s, arg, acc);
		sc.func = c->func_id;
		take(x, acc, c->cat, s, e, sc);
		cursor = e;
	}
	if (cursor < q)
		cb(x, t, cursor, q, arg, acc);
}

struct span {
	uint64_t lo, hi;
	unsigned depth;
};

/*
 * A sample taken while the kernel handled one of our uprobes is the probed
 * call's own boundary (and gaptrace's overhead): it counts as that call's
 * category, not as the application's cpu.
 */
static int sample_cat(struct ex *x, const struct m_thread *t, const struct m_sample *s)
{
	const uint64_t near = 200 * NSEC_PER_USEC;

	if (model__stack_class(x->m, s->kstack) & STK_UPROBE) {
		/* The first call (by enter) ending at most near before the sample. */
		uint64_t from = s->ts > near ? s->ts - near : 0;
		size_t i = LOWER_BOUND(t->calls, t->ncalls, max_exit, from);

		if (i < t->ncalls && t->calls[i].enter <= s->ts + near)
			return t->calls[i].cat;
	}
	return classify_sample(x->m, s);
}

static struct src sample_src(const struct m_thread *t, const struct m_sample *s, unsigned depth)
{
	struct src sc = SRC(t->tid, GT_PIECE_SAMPLE, depth);

	sc.ustack = s->ustack;
	sc.kstack = s->kstack;
	return sc;
}

/*
 * Whether thread t certainly ran all of [u, v]: two of its samples with the
 * same sched_info.pcount (switch-ins so far) saw no switch-in between them,
 * so it stayed on its CPU from one to the other.  The samples bracketing
 * [u, v] are used, the nearest outside it where they agree, else the first and
 * last inside it, which must then lie within 4 periods of u and v.  False
 * when pcount was not recorded (older captures) or changed.
 */
static bool ran_throughout(const struct m_thread *t, uint64_t u, uint64_t v, uint64_t period)
{
	size_t i = LOWER_BOUND(t->samples, t->nsamples, ts, u);
	size_t j = LOWER_BOUND(t->samples, t->nsamples, ts, v + 1);
	const struct m_sample *a, *c;

	if (i > 0 && (i == j || t->samples[i - 1].pcount == t->samples[i].pcount))
		i--;
	if (j < t->nsamples && (j == i || t->samples[j].pcount == t->samples[j - 1].pcount))
		j++;
	if (i >= j)
		return false;
	a = &t->samples[i];
	c = &t->samples[j - 1];
	return a->pcount && a->pcount == c->pcount && a->ts < u + 4 * period &&
	       c->ts + 4 * period > v;
}

/* On-CPU time not inside a call: split among the samples of the span. */
static void oncpu_samples(struct ex *x, struct m_thread *t, uint64_t u, uint64_t v, void *arg,
			  uint64_t *acc)
{
	const struct span *sp = arg;
	uint64_t period = x->m->sample_period, cursor = u;
	size_t i;

	/*
	 * A running thread is sampled every period of its CPU time.  A long
	 * "running" span with far fewer samples than that means records of
	 * this thread are missing (it was not running): say unknown, not cpu.
	 * Unless the switch counts prove it ran: a hypervisor that takes the
	 * vCPU away (steal time) delays the sampler's timer by milliseconds
	 * while the thread stays on its CPU as far as the guest can tell.
	 */
	if (x->m->nsamples_total && u >= x->m->sampling_from && v - u >= 4 * period) {
		size_t j = LOWER_BOUND(t->samples, t->nsamples, ts, u), n = 0;

		for (; j < t->nsamples && t->samples[j].ts <= v + period; j++)
			n++;
		if (n * 2 < (v - u) / period && !ran_throughout(t, u, v, period)) {
			take(x, acc, GT_CAT_UNKNOWN, u, v, SRC(t->tid, GT_PIECE_LOST, sp->depth));
			return;
		}
	}
	/*
	 * Per-thread cpu-clock samples fire every period of the thread's own CPU
	 * time: a sample stands for the CPU time just before it.  Inside the
	 * piece, each stretch goes to the sample that ends it; the tail (or a
	 * piece with no sample) goes to the next sample if it comes within a
	 * period, else the previous one if that is within a period, else to cpu
	 * as unsampled.  Farther samples say little about short fragments.
	 */
	i = LOWER_BOUND(t->samples, t->nsamples, ts, u);
	for (; i < t->nsamples && t->samples[i].ts <= v; i++) {
		const struct m_sample *s = &t->samples[i];

		take(x, acc, sample_cat(x, t, s), cursor, s->ts, sample_src(t, s, sp->depth));
		cursor = GT_MAX(cursor, s->ts);
	}
	if (cursor < v) {
		const struct m_sample *s = NULL;

		if (i < t->nsamples && t->samples[i].ts - v <= period)
			s = &t->samples[i];
		else if (i > 0 && cursor - GT_MIN(cursor, t->samples[i - 1].ts) <= period)
			s = &t->samples[i - 1];
		if (s)
			take(x, acc, sample_cat(x, t, s), cursor, v, sample_src(t, s, sp->depth));
		else
			take(x, acc, GT_CAT_CPU, cursor, v, SRC(t->tid, GT_PIECE_ONCPU, sp->depth));
	}
}

static void oncpu(struct ex *x, struct m_thread *t, uint64_t p, uint64_t q, uint64_t span_lo,
		  uint64_t span_hi, unsigned depth, uint64_t *acc)
{
	struct span sp = {span_lo, span_hi, depth};

	split_calls(x, t, p, q, depth, acc, oncpu_samples, &sp);
}

static bool on_path(const struct ex *x, unsigned depth, uint32_t tid)
{
	for (unsigned i = 0; i <= depth; i++)
		if (x->path[i] == tid)
			return true;
	return false;
}

struct blocked_arg {
	const struct m_off *o;
	unsigned depth;
};

static struct src off_src(const struct m_thread *t, const struct m_off *o, uint8_t kind,
			  unsigned depth)
{
	struct src sc = SRC(t->tid, kind, depth);

	sc.ustack = o->ustack;
	sc.kstack = o->kstack;
	return sc;
}

/* A waker with no records: outside the trace (not followed, another program). */
static bool untraced(struct model *m, uint32_t tid)
{
	const struct m_thread *t = model__thread(m, tid, false);

	return !t || !t->known;
}

/*
 * Blocked from u to v until a thread outside the trace woke t: the hop of t
 * at depth names it, so the report can say whom it could not follow.
 */
static void note_untraced(struct ex *x, const struct m_thread *t, const struct m_off *o,
			  unsigned depth, uint64_t ns)
{
	struct an_hop *h = NULL;

	if (x->hp)
		return;
	for (size_t i = x->g->nchain; i-- > 0;)
		if (x->g->chain[i].tid == t->tid && x->g->chain[i].depth == depth) {
			h = &x->g->chain[i];
			break;
		}
	if (!h)
		return;
	if (h->untraced_tid == o->waker_tid) {
		h->untraced_ns += ns;
		return;
	}
	if (h->untraced_tid && h->untraced_ns >= ns)
		return;
	h->untraced_tid = o->waker_tid;
	h->untraced_pid = o->waker_pid;
	h->untraced_ns = ns;
	h->untraced_comm[0] = '\0';
	for (size_t i = 0; i < x->m->npeers; i++)
		if (x->m->peers[i].tid == o->waker_tid) {
			h->untraced_pid = x->m->peers[i].pid;
			memcpy(h->untraced_comm, x->m->peers[i].comm, sizeof(h->untraced_comm));
			break;
		}
}

static void blocked_piece(struct ex *x, struct m_thread *t, uint64_t u, uint64_t v, void *arg,
			  uint64_t *acc)
{
	const struct blocked_arg *ba = arg;
	const struct m_off *o = ba->o;
	bool handoff;
	int cat = classify_blocked(x->m, t->pid, o, &handoff);
	uint32_t w = o->waker_tid;

	if (cat == GT_CAT_LOCK && w != t->tid && !on_path(x, ba->depth, w))
		note_holder(x, w, u, v, ba->depth);
	if (handoff && w && w != t->tid && !(o->flags & GT_OFF_WAKER_IRQ) &&
	    ba->depth < x->max_depth && !on_path(x, ba->depth, w) &&
	    model__thread(x->m, w, false)) {
		uint64_t tmp[GT_CAT_MAX] = {};
		size_t hop = add_hop(x, w, t->tid, u, v, ba->depth + 1);

		/* The wait lasted as long as the waker took: explain the waker. */
		x->path[ba->depth + 1] = w;
		explain(x, w, u, v, ba->depth + 1, tmp);
		for (int c = 0; c < GT_CAT_MAX; c++) {
			acc[c] += tmp[c];
			if (hop != SIZE_MAX)
				x->g->chain[hop].by_cat[c] = tmp[c];
		}
		return;
	}
	/* A hand-off from a syscall of a process gaptrace does not trace. */
	if ((cat == GT_CAT_WAIT || cat == GT_CAT_IO || cat == GT_CAT_LOCK) && w && w != t->tid &&
	    !(o->flags & GT_OFF_WAKER_IRQ) && o->waker_syscall >= 0 && untraced(x->m, w))
		note_untraced(x, t, o, ba->depth, v - u);
	take(x, acc, cat, u, v, off_src(t, o, GT_PIECE_BLOCKED, ba->depth));
}

static void offcpu(struct ex *x, struct m_thread *t, const struct m_off *o, uint64_t s, uint64_t e,
		   unsigned depth, uint64_t *acc)
{
	uint64_t bend;
	struct blocked_arg ba = {o, depth};

	if (o->flags & GT_OFF_PREEMPTED) {
		take(x, acc, GT_CAT_SCHED, s, e, off_src(t, o, GT_PIECE_PREEMPTED, depth));
		return;
	}
	/* Blocked until the wakeup, then waiting on a run queue until switch-in. */
	bend = o->wake ? o->wake : o->on;
	if (s < bend)
		split_calls(x, t, s, GT_MIN(e, bend), depth, acc, blocked_piece, &ba);
	take(x, acc, GT_CAT_SCHED, GT_MAX(s, bend), e, off_src(t, o, GT_PIECE_RUNQUEUE, depth));
}

static void explain_thread(struct ex *x, struct m_thread *t, uint64_t a, uint64_t b, unsigned depth,
			   uint64_t *acc)
{
	size_t k = LOWER_BOUND(t->offs, t->noffs, off, a);
	uint64_t cursor = a, prev_on;

	/* The interval starting before a may still cover it. */
	if (k > 0 && t->offs[k - 1].on > a)
		k--;
	prev_on = k > 0 ? t->offs[k - 1].on : (t->born ? t->born : x->m->start);
	for (; k < t->noffs && t->offs[k].off < b; k++) {
		const struct m_off *o = &t->offs[k];
		uint64_t s = GT_MAX(GT_MAX(o->off, a), cursor), e = GT_MIN(o->on, b);

		if (e <= s)
			continue;
		if (cursor < s)
			oncpu(x, t, cursor, s, prev_on, o->off, depth, acc);
		offcpu(x, t, o, s, e, depth, acc);
		cursor = e;
		prev_on = o->on;
	}
	if (cursor < b) {
		uint64_t span_hi = k < t->noffs ? t->offs[k].off : (t->died ? t->died : x->m->end);

		oncpu(x, t, cursor, b, prev_on, span_hi, depth, acc);
	}
}

/* Time the thread did not exist, or the data cannot speak for, is unknown. */
static void explain_alive(struct ex *x, uint32_t tid, uint64_t a, uint64_t b, unsigned depth,
			  uint64_t *acc)
{
	struct m_thread *t = model__thread(x->m, tid, false);
	uint64_t lo, hi;

	if (!t || !t->known) {
		take(x, acc, GT_CAT_UNKNOWN, a, b, SRC(tid, GT_PIECE_UNTRACED, depth));
		return;
	}
	lo = t->born ? t->born : x->m->start;
	hi = t->died ? t->died : x->m->end;
	if (a < lo) {
		take(x, acc, GT_CAT_UNKNOWN, a, GT_MIN(lo, b), SRC(tid, GT_PIECE_UNTRACED, depth));
		a = GT_MIN(lo, b);
	}
	if (b > hi) {
		take(x, acc, GT_CAT_UNKNOWN, GT_MAX(hi, a), b, SRC(tid, GT_PIECE_UNTRACED, depth));
		b = GT_MAX(hi, a);
	}
	if (a < b)
		explain_thread(x, t, a, b, depth, acc);
}

static void explain(struct ex *x, uint32_t tid, uint64_t a, uint64_t b, unsigned depth,
		    uint64_t *acc)
{
	const struct model *m = x->m;
	size_t i = LOWER_BOUND(m->losses, m->nlosses, to, a);
	uint64_t cursor = a;

	/* Windows in which records were lost are unknown for every thread. */
	for (; i < m->nlosses && m->losses[i].from < b; i++) {
		uint64_t s = GT_MAX(m->losses[i].from, cursor), e = GT_MIN(m->losses[i].to, b);

		if (e <= s)
			continue;
		if (cursor < s)
			explain_alive(x, tid, cursor, s, depth, acc);
		take(x, acc, GT_CAT_UNKNOWN, s, e, SRC(tid, GT_PIECE_LOST, depth));
		cursor = e;
	}
	if (cursor < b)
		explain_alive(x, tid, cursor, b, depth, acc);
}

static bool overlaps_loss(const struct model *m, uint64_t a, uint64_t b)
{
	size_t i = LOWER_BOUND(m->losses, m->nlosses, to, a);

	return i < m->nlosses && m->losses[i].from < b;
}

static void explain_gap(struct model *m, struct an_result *r, struct an_gap *g, unsigned max_depth,
			size_t *pieces_cap)
{
	struct ex x = {.m = m,
		       .g = g,
		       .max_depth = max_depth,
		       .r = r,
		       .r_pieces_cap = pieces_cap,
		       .pieces = m->opts.pieces};
	uint64_t we, sum = 0;
	size_t hop0;

	g->lossy = overlaps_loss(m, g->start_ns, g->end_ns);
	if (!g->tid) {
		/* No launch record ties the next op to a thread. */
		take(&x, g->by_cat, GT_CAT_UNKNOWN, g->start_ns, g->end_ns,
		     SRC(0, GT_PIECE_UNTRACED, 0));
		return;
	}
	if (g->launch_ns <= g->start_ns) {
		/* Launched before the GPU went idle: the device side was late. */
		take(&x, g->by_cat, GT_CAT_CUDA, g->start_ns, g->end_ns,
		     SRC(g->tid, GT_PIECE_LAUNCH, 0));
		return;
	}
	we = GT_MIN(g->launch_ns, g->end_ns);
	x.path[0] = g->tid;
	hop0 = add_hop(&x, g->tid, 0, g->start_ns, we, 0);
	explain(&x, g->tid, g->start_ns, we, 0, g->by_cat);
	memcpy(g->chain[hop0].by_cat, g->by_cat, sizeof(g->by_cat));
	take(&x, g->by_cat, GT_CAT_CUDA, we, g->end_ns, SRC(g->tid, GT_PIECE_LAUNCH, 0));
	for (int c = 0; c < GT_CAT_MAX; c++)
		sum += g->by_cat[c];
	/* Defensive: the pieces partition the gap; any drift is shown, never hidden. */
	if (sum < g->duration_ns)
		g->by_cat[GT_CAT_UNKNOWN] += g->duration_ns - sum;
	else if (sum > g->duration_ns)
		g->by_cat[GT_CAT_UNKNOWN] -=
		    GT_MIN(g->by_cat[GT_CAT_UNKNOWN], sum - g->duration_ns);
}

static int cmp_holder(const void *a, const void *b)
{
	const struct an_holder *x = a, *y = b;

	return x->wait_ns > y->wait_ns ? -1 : x->wait_ns < y->wait_ns;
}

/* The fields that tell pieces apart (all but ns and gap, which are equal within a gap). */
static int piece_key_cmp(const struct an_piece *x, const struct an_piece *y)
{
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->ustack != y->ustack)
		return x->ustack < y->ustack ? -1 : 1;
	if (x->kstack != y->kstack)
		return x->kstack < y->kstack ? -1 : 1;
	if (x->func_id != y->func_id)
		return x->func_id < y->func_id ? -1 : 1;
	if (x->cat != y->cat)
		return x->cat < y->cat ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	return 0;
}

static int cmp_piece_at(const void *a, const void *b, void *base)
{
	const struct an_piece *p = base;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	int c = piece_key_cmp(&p[i], &p[j]);

	return c ? c : (i < j ? -1 : i > j);
}

/*
 * One piece per distinct (thread, stacks, call, category, kind, depth) in a
 * gap, its ns the sum, in the order each first appeared: every reader sums
 * pieces by those fields, and a gap full of short intervals made hundreds of
 * pieces that say the same (memory grew with the capture, not its gaps).
 */
static void coalesce_pieces(struct an_result *r, size_t from)
{
	size_t n = r->npieces - from, out = 0;
	struct an_piece *p;
	uint32_t *idx;
	bool *dead;

	/* Before the pointer arithmetic: pieces is NULL while no gap has one. */
	if (n < 2)
		return;
	p = r->pieces + from;
	idx = gt_xmalloc(n * sizeof(*idx));
	dead = gt_xcalloc(n, sizeof(*dead));
	for (size_t i = 0; i < n; i++)
		idx[i] = (uint32_t)i;
	qsort_r(idx, n, sizeof(*idx), cmp_piece_at, p);
	/* In each run of equal keys the first in idx is the earliest: it takes the sum. */
	for (size_t i = 1, head = 0; i < n; i++) {
		if (piece_key_cmp(&p[idx[head]], &p[idx[i]])) {
			head = i;
			continue;
		}
		p[idx[head]].ns += p[idx[i]].ns;
		dead[idx[i]] = true;
	}
	for (size_t i = 0; i < n; i++)
		if (!dead[i])
			p[out++] = p[i];
	r->npieces = from + out;
	free(idx);
	free(dead);
}

void attrib__explain(struct model *m, struct an_result *r, size_t i, size_t *pieces_cap)
{
	unsigned depth = m->opts.max_depth > MAX_DEPTH_LIMIT ? MAX_DEPTH_LIMIT : m->opts.max_depth;
	struct an_gap *g = &r->gaps[i];
	size_t first = r->npieces;

	explain_gap(m, r, g, depth, pieces_cap);
	coalesce_pieces(r, first);
	/* Growth leaves room for 16: a report of 100k gaps kept ~300 MB of it. */
	if (g->chain)
		g->chain = gt_xrealloc(g->chain, g->nchain * sizeof(*g->chain));
	if (g->holders)
		g->holders = gt_xrealloc(g->holders, g->nholders * sizeof(*g->holders));
	gt_sort(g->holders, g->nholders, sizeof(*g->holders), cmp_holder);
	for (int c = 0; c < GT_CAT_MAX; c++) {
		r->totals[c] += g->by_cat[c];
		r->totals_kind[g->kind][c] += g->by_cat[c];
	}
	r->gaps_kind[g->kind]++;
	r->gap_ns_total += g->duration_ns;
}

void attrib__finish(struct an_result *r)
{
	struct an_piece *sorted;
	size_t *start;
	bool in_order = true;

	for (size_t i = 0; i < r->npieces; i++) {
		if (r->pieces[i].gap >= r->ngaps)
			return;
		if (i && r->pieces[i - 1].gap > r->pieces[i].gap)
			in_order = false;
	}
	if (in_order)
		return;
	/* Stable counting sort by gap: each gap's pieces keep their order. */
	start = gt_xcalloc(r->ngaps + 1, sizeof(*start));
	for (size_t i = 0; i < r->npieces; i++)
		start[r->pieces[i].gap + 1]++;
	for (size_t g = 0; g < r->ngaps; g++)
		start[g + 1] += start[g];
	sorted = gt_xmalloc(r->npieces * sizeof(*sorted));
	for (size_t i = 0; i < r->npieces; i++)
		sorted[start[r->pieces[i].gap]++] = r->pieces[i];
	free(r->pieces);
	r->pieces = sorted;
	free(start);
}

void attrib__explain_all(struct model *m, struct an_result *r)
{
	size_t pieces_cap = 0;

	for (size_t i = 0; i < r->ngaps; i++)
		attrib__explain(m, r, i, &pieces_cap);
	attrib__finish(r);
}
