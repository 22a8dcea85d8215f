// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * record_sink.c: the ring-buffer record -> capture translation of `gaptrace
 * record`.  Each BPF record is checked, stack frames the kernel sends are
 * symbolized while the process still exists and their ids mapped to capture
 * ids, DWARF snapshots unwound into STACKS entries and patched into the
 * record they belong to, GPU batches split into one GPU_OP each, and the
 * result written as capture EVENTS.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "capture/capture.h"
#include "gaptrace/gaptrace.h"
#include "record/record_sink.h"
#include "record/unwind.h"
#include "support/util.h"

#define KERNEL_ADDR_MIN 0xffff800000000000ULL

/*
 * Frame ip (a return address when caller) for an INLINES entry: where it
 * lies is noted now, while the process exists; its DWARF is read by
 * record_sink__finish, when reading it (~0.1 s for a libc with debug info)
 * no longer takes CPU time from the traced program.
 */
static void note_inlines(struct record_sink *s, uint32_t pid, uint64_t ip, bool caller)
{
	uint64_t key = gt_hash64(&ip, sizeof(ip), (uint64_t)pid | (uint64_t)caller << 32);
	struct record_sink_inline *p;
	uint64_t ref[2];

	if (!pid || !s->cfg.ops->inline_ref || !u64map_add(&s->inl_keys, key, 0) ||
	    !s->cfg.ops->inline_ref(s->cfg.ctx, pid, ip, caller, ref))
		return;
	gt_grow((void **)&s->inl_pend, &s->inl_pend_cap, s->ninl_pend, sizeof(*s->inl_pend));
	p = &s->inl_pend[s->ninl_pend++];
	p->ip = ip;
	p->pid = pid;
	p->caller = caller;
	memcpy(p->ref, ref, sizeof(ref));
}

void record_sink__finish(struct record_sink *s)
{
	const char *names[GT_CAP_MAX_INLINE];

	for (size_t i = 0; i < s->ninl_pend && s->cfg.ops->inline_names; i++) {
		const struct record_sink_inline *p = &s->inl_pend[i];
		int n = s->cfg.ops->inline_names(s->cfg.ctx, p->ref, names, GT_CAP_MAX_INLINE);

		if (n > 0)
			capture_buf__inline(&s->inl_buf, p->ip, p->pid,
					    p->caller ? GT_INLINE_CALLER : 0, names, (size_t)n);
	}
	s->ninl_pend = 0;
}

/* Frame i of a stack: its symbol (once per pid and ip) and its inline chain. */
static void note_symbol(struct record_sink *s, uint32_t pid, uint64_t ip, uint16_t i)
{
	const char *name = NULL, *module = NULL;
	uint32_t off = 0;
	uint64_t key = ((uint64_t)pid << 48) ^ ip;

	if (!u64map_add(&s->sym_keys, key, 0)) {
		note_inlines(s, pid, ip, i > 0);
		return;
	}
	if (s->cfg.ops->resolve(s->cfg.ctx, pid, ip, &name, &off, &module))
		name = NULL;
	if (s->cfg.fpa && pid && module)
		fp_audit__object(s->cfg.fpa, pid, module, false);
	capture_buf__symbol(&s->syms_buf, ip, pid, name ? off : 0, name ? name : "",
			    module ? module : "");
	if (name)
		note_inlines(s, pid, ip, i > 0);
}

/* cfg.segments: a new stack's frames, kept for the segments after this one. */
static void keep_stack(struct record_sink *s, int32_t id, uint32_t pid, uint16_t flags,
		       const uint64_t *ips, uint16_t nr)
{
	gt_grow((void **)&s->kept_ips, &s->kept_ips_cap, s->nkept_ips + nr, sizeof(*s->kept_ips));
	s->kept_ips[s->nkept_ips] = (uint64_t)pid | (uint64_t)flags << 32;
	memcpy(s->kept_ips + s->nkept_ips + 1, ips, nr * sizeof(*ips));
	u64map_put(&s->kept, (uint32_t)id, (uint64_t)s->nkept_ips << 16 | nr);
	u64map_add(&s->seg_stacks, (uint32_t)id, 0);
	s->nkept_ips += (size_t)nr + 1;
}

/* cfg.segments: writes capture stack id into this segment if it is not there yet. */
static void segment_stack(struct record_sink *s, uint32_t id)
{
	uint64_t v, *p;
	uint16_t nr;
	uint32_t pid;

	if (!s->cfg.segments || !u64map_add(&s->seg_stacks, id, 0) || !u64map_get(&s->kept, id, &v))
		return;
	p = s->kept_ips + (v >> 16);
	nr = (uint16_t)(v & 0xffff);
	pid = (uint32_t)p[0];
	capture_buf__stack_flags(&s->stacks_buf, (int32_t)id, pid, (uint16_t)(p[0] >> 32), p + 1,
				 nr);
	for (uint16_t i = 0; i < nr; i++)
		note_symbol(s, pid, p[1 + i], i);
}

void record_sink__segment(struct record_sink *s, struct capture_writer *w, const char *path)
{
	s->cfg.w = w;
	s->cfg.path = path;
	u64map_clear(&s->seg_stacks);
	u64map_clear(&s->sym_keys);
	u64map_clear(&s->inl_keys);
	u64map_clear(&s->wakers);
}

/*
 * A stack id's frames (GT_REC_STACK), sent by the kernel when it made the
 * id, ahead of every record that carries it.  The first id for some frames
 * becomes their capture id: the frames are written and symbolized now,
 * while the process and its mappings exist.  An id made again for the same
 * frames (the kernel's LRU forgot them) maps to that capture id, so the
 * capture holds each stack once.  Frames are told apart by a 64-bit hash
 * of (pid, kind, frames): two stacks collide with odds ~n^2 / 2^65.
 */
static void note_bpf_stack(struct record_sink *s, const struct gt_stack *st, size_t size)
{
	bool kernel = st->flags & GT_STACK_REC_KERNEL;
	uint32_t pid = kernel ? 0 : st->pid;
	uint16_t flags = kernel				   ? GT_STACK_KERNEL
			 : (st->flags & GT_STACK_REC_ROOT) ? GT_STACK_ROOT
							   : 0;
	uint64_t h, cap;
	uint16_t nr;

	if (st->id < 0 || st->id >= GT_STACK_DWARF_BASE)
		return;
	nr = (uint16_t)GT_MIN((size_t)st->nr, (size - offsetof(struct gt_stack, ips)) / 8);
	nr = GT_MIN(nr, GT_STACK_DEPTH);
	if (!nr)
		return;
	h = gt_hash64(&pid, sizeof(pid), 0xcbf29ce484222325ULL);
	h = gt_hash64(&st->flags, sizeof(st->flags), h);
	h = gt_hash64(st->ips, nr * sizeof(st->ips[0]), h);
	if (u64map_get(&s->stack_frames, h, &cap)) {
		u64map_put(&s->stack_ids, (uint32_t)st->id, cap);
		s->stacks_resent++;
		return;
	}
	u64map_put(&s->stack_frames, h, (uint32_t)st->id);
	u64map_put(&s->stack_ids, (uint32_t)st->id, (uint32_t)st->id);
	if (!kernel && s->cfg.fpa)
		fp_audit__stack(s->cfg.fpa, nr);
	/* A user walk may be joined to a snapshot's frames later (record_sink__stitch). */
	if (!kernel && s->cfg.unw) {
		gt_grow((void **)&s->walk_ips, &s->walk_ips_cap, s->nwalk_ips + nr - 1,
			sizeof(*s->walk_ips));
		memcpy(s->walk_ips + s->nwalk_ips, st->ips, nr * sizeof(*s->walk_ips));
		u64map_put(&s->walks, (uint32_t)st->id, (uint64_t)s->nwalk_ips << 8 | nr);
		s->nwalk_ips += nr;
	}
	capture_buf__stack_flags(&s->stacks_buf, st->id, pid, flags, (const uint64_t *)st->ips, nr);
	for (uint16_t i = 0; i < nr; i++)
		note_symbol(s, pid, st->ips[i], i);
	if (s->cfg.segments)
		keep_stack(s, st->id, pid, flags, (const uint64_t *)st->ips, nr);
}

int32_t record_sink__stack_id(struct record_sink *s, int32_t id)
{
	uint64_t cap;

	/* None, or a DWARF stack (written when its snapshot was unwound). */
	if (id < 0 || id >= GT_STACK_DWARF_BASE)
		return id;
	if (u64map_get(&s->stack_ids, (uint32_t)id, &cap)) {
		segment_stack(s, (uint32_t)cap);
		return (int32_t)cap;
	}
	/* The kernel sends the frames before the id can be used: not expected. */
	s->stacks_unresolved++;
	return -1;
}

void record_sink__put(struct record_sink *s, const void *rec, size_t size)
{
	int err = capture_writer__event(s->cfg.w, rec, size);

	if (err && !s->write_err) {
		s->write_err = err;
		gt_err("cannot write %s: %s; stopping (free disk space or choose another -o)",
		       s->cfg.path, strerror(-err));
	}
	s->events++;
}

/* The id of a DWARF stack of these frames, written (with its symbols) if new; or -1. */
static int32_t dwarf_intern(struct record_sink *s, uint32_t pid, const uint64_t *ips, uint16_t n)
{
	bool fresh;
	int32_t id = unwinder__intern(s->cfg.unw, pid, ips, n, &fresh);

	if (id >= 0 && fresh) {
		capture_buf__stack_flags(&s->stacks_buf, id, pid, GT_STACK_DWARF, ips, n);
		for (uint16_t i = 0; i < n; i++)
			note_symbol(s, pid, ips[i], i);
	}
	return id;
}

/*
 * Unwinds a snapshot into a STACKS entry of at least min frames: its id, or
 * -1; the frames in ips (GT_STACK_DEPTH of room), their number in *nr.
 */
static int32_t dwarf_stack(struct record_sink *s, uint32_t pid, uint32_t tid, const __u64 *uregs,
			   const void *stack, size_t len, int min, uint64_t *ips, uint16_t *nr)
{
	uint64_t regs[GT_UREGS_NR];
	int n;

	for (int i = 0; i < GT_UREGS_NR; i++)
		regs[i] = uregs[i];
	n = unwinder__unwind(s->cfg.unw, pid, tid, regs, stack, len, ips, GT_STACK_DEPTH);
	if (n < min || n < 1)
		return -1;
	*nr = (uint16_t)n;
	return dwarf_intern(s, pid, ips, (uint16_t)n);
}

int record_sink__stitch(const uint64_t *cfi, int n, const uint64_t *fp, int m, uint64_t *out,
			int max)
{
	/*
	 * fp[1] is the return address the sample's %rbp frame holds: the first
	 * frame with a frame pointer, below o frames without one, so fp[j] is
	 * cfi[o + j].  The smallest o where every frame both have agrees (at
	 * least one) aligns them; by value alone a recursion would match too
	 * early and repeat frames.  The leaf (0) is no evidence.
	 */
	for (int o = 0; o + 1 < n; o++) {
		int j, len = 0;

		for (j = 1; o + j < n && j < m; j++)
			if (cfi[o + j] != fp[j])
				break;
		if (o + j < n && j < m)
			continue; /* disagree */
		if (m <= n - o)
			return 0; /* the walk ends where the snapshot does: nothing to add */
		for (int i = 0; i < n && len < max; i++)
			out[len++] = cfi[i];
		for (int i = n - o; i < m && len < max; i++)
			out[len++] = fp[i];
		return len;
	}
	return 0;
}

/*
 * Unwinds a stack snapshot into a STACKS entry (with its symbols) and keeps
 * its id for the record it belongs to.  Fewer than two frames is no better
 * than the frame-pointer stack that record already has.
 */
int32_t record_sink__dwarf_stack(struct record_sink *s, uint32_t pid, uint32_t tid,
				 const __u64 *uregs, const void *stack, size_t len)
{
	uint64_t ips[GT_STACK_DEPTH];
	uint16_t nr;

	return dwarf_stack(s, pid, tid, uregs, stack, len, 2, ips, &nr);
}

static void note_ustack(struct record_sink *s, const struct gt_ustack *u, size_t size)
{
	struct record_sink_pending *p = &s->dwarf_pend[u->tid % GT_ARRAY_SIZE(s->dwarf_pend)];
	uint64_t ips[GT_STACK_DEPTH];
	uint16_t nr = 0;
	size_t len;
	int32_t id;

	if (!s->cfg.unw)
		return;
	len = GT_MIN((size_t)u->stack_size, size - offsetof(struct gt_ustack, data));
	/*
	 * A sample's one-frame unwinding is kept too: feed_stacks joins it to
	 * the walk or prefers the walk to it.
	 */
	id = dwarf_stack(s, u->pid, u->tid, u->regs, u->data, len,
			 (u->flags & GT_USTACK_SAMPLE) ? 1 : 2, ips, &nr);
	/* Only a success takes the slot: another thread's snapshot may be waiting in it. */
	if (id >= 0) {
		memcpy(p->ips, ips, nr * sizeof(ips[0]));
		p->tid = u->tid;
		p->pid = u->pid;
		p->sample = u->flags & GT_USTACK_SAMPLE;
		p->ts = u->off_ns;
		p->id = id;
		p->nr = nr;
	}
}

/*
 * A sample's snapshot frames joined to the walk the kernel made for it (BPF
 * walks too where %rbp may be a frame pointer): the id of the joined stack,
 * or -1 when the two do not meet or the walk adds nothing.
 */
static int32_t stitch_walk(struct record_sink *s, const struct record_sink_pending *p,
			   int32_t walked)
{
	uint64_t out[GT_STACK_DEPTH], at;
	int32_t cap = record_sink__stack_id(s, walked);
	int n;

	if (cap < 0 || !u64map_get(&s->walks, (uint32_t)cap, &at))
		return -1;
	n = record_sink__stitch(p->ips, p->nr, s->walk_ips + (at >> 8), (int)(at & 0xff), out,
				GT_STACK_DEPTH);
	if (n <= p->nr)
		return -1;
	s->stitched++;
	return dwarf_intern(s, p->pid, out, (uint16_t)n);
}

/* The DWARF stack id unwound for (tid, ts), or -1; a one-frame one only where BPF walked none. */
static int32_t dwarf_take(struct record_sink *s, uint32_t tid, uint64_t ts, bool sample,
			  int32_t walked)
{
	struct record_sink_pending *p = &s->dwarf_pend[tid % GT_ARRAY_SIZE(s->dwarf_pend)];

	int32_t id;

	if (!s->cfg.unw || p->tid != tid || p->ts != ts || !p->sample != !sample || p->id < 0)
		return -1;
	id = sample && walked >= 0 ? stitch_walk(s, p, walked) : -1;
	if (id < 0 && p->nr < 2 && walked >= 0)
		return -1;
	p->tid = 0;
	s->dwarf_used++;
	return id >= 0 ? id : p->id;
}

/* Writes a copy of rec with its two s32 stack ids at uoff, koff set (ring buffer data is read-only). */
static void put_patched(struct record_sink *s, const void *rec, size_t size, size_t uoff,
			int32_t uid, size_t koff, int32_t kid)
{
	uint8_t buf[GT_CAP_MAX_RECORD];

	size = GT_MIN(size, sizeof(buf));
	memcpy(buf, rec, size);
	memcpy(buf + uoff, &uid, sizeof(uid));
	memcpy(buf + koff, &kid, sizeof(kid));
	record_sink__put(s, buf, size);
}

static void count_gpu_op(struct record_sink *s, const struct gaptrace_gpu_rec *g)
{
	uint64_t *last;

	if (g->kind < 1 || g->kind > 3 || g->device >= RECORD_SINK_MAX_DEVICES ||
	    g->end_ns < g->start_ns)
		return;
	s->gpu_ops++;
	last = &s->dev_last_end[g->device];
	/* Approximate live count for the progress line; `report` does it exactly. */
	if (*last && g->start_ns > *last && g->start_ns - *last >= s->cfg.min_gap_ns)
		s->gaps++;
	if (g->end_ns > *last)
		*last = g->end_ns;
}

static void split_batch(struct record_sink *s, const struct gt_gpu_batch *b)
{
	struct gt_gpu_op op = {};
	uint32_t n = b->count, keep = GT_MIN(b->rec_size, (uint32_t)GT_GPU_REC_SIZE);

	if (n > GT_GPU_BATCH_MAX)
		n = GT_GPU_BATCH_MAX;
	op.hdr = b->hdr;
	op.hdr.type = GT_REC_GPU_OP;
	op.hdr.size = sizeof(op);
	op.pid = b->pid;
	op.tid = b->tid;
	for (uint32_t i = 0; i < n; i++) {
		/* Bytes past the producer's record size are not its data. */
		if (keep < GT_GPU_REC_SIZE)
			memset(&op.rec, 0, sizeof(op.rec));
		memcpy(&op.rec, b->data + (size_t)i * GT_GPU_REC_SIZE, keep);
		record_sink__put(s, &op, sizeof(op));
		count_gpu_op(s, &op.rec);
	}
	if (b->dropped) {
		struct gt_loss l = {
		    .hdr = {GT_REC_LOSS, sizeof(l), b->hdr.cpu, b->hdr.ts_ns},
		    .from_ns = b->hdr.ts_ns,
		    .to_ns = b->hdr.ts_ns,
		    .count = b->dropped,
		    .kind = GT_LOSS_GPU,
		};

		record_sink__put(s, &l, sizeof(l));
	}
}

/*
 * Puts an off-CPU interval or a sample with its stack ids made capture ids
 * (the DWARF stack unwound for it, if any, in place of the BPF user stack);
 * the ids sit at uoff and koff.  True if it was put (patched).
 */
static bool feed_stacks(struct record_sink *s, const struct gt_hdr *h, uint32_t tid, uint64_t ts,
			bool sample, int32_t ustack_id, int32_t kstack_id, size_t uoff, size_t koff)
{
	int32_t dw = dwarf_take(s, tid, ts, sample, ustack_id);
	int32_t uid = dw >= 0 ? dw : record_sink__stack_id(s, ustack_id);
	int32_t kid = record_sink__stack_id(s, kstack_id);

	if (uid == ustack_id && kid == kstack_id)
		return false;
	put_patched(s, h, h->size, uoff, uid, koff, kid);
	return true;
}

/*
 * A waker from a syscall in a process not traced: a PEER record names it
 * once, so the report can say whom the critical path could not follow.
 */
static void note_waker(struct record_sink *s, const struct gt_offcpu *o)
{
	struct gt_peer p = {.hdr = {GT_REC_PEER, sizeof(p), 0, o->hdr.ts_ns}};

	if (!s->cfg.ops->untraced || !o->waker_tid || o->waker_tid == o->tid ||
	    o->waker_syscall < 0 || (o->flags & GT_OFF_WAKER_IRQ) ||
	    !u64map_add(&s->wakers, o->waker_tid, 1))
		return;
	if (!s->cfg.ops->untraced(s->cfg.ctx, o->waker_pid, o->waker_tid, p.comm))
		return;
	p.pid = o->waker_pid;
	p.tid = o->waker_tid;
	record_sink__put(s, &p, sizeof(p));
}

void record_sink__feed(struct record_sink *s, const void *data, size_t size)
{
	const struct gt_hdr *h = data;

	/* The capture reader's rule too: a record shorter than its type's first layout is dropped. */
	if (size < sizeof(*h) || h->size > size || h->size < gt_rec_min_size(h->type))
		return;
	switch (h->type) {
	case GT_REC_OFFCPU: {
		const struct gt_offcpu *o = data;

		note_waker(s, o);
		if (feed_stacks(s, h, o->tid, o->off_ns, false, o->ustack_id, o->kstack_id,
				offsetof(struct gt_offcpu, ustack_id),
				offsetof(struct gt_offcpu, kstack_id)))
			return;
		break;
	}
	case GT_REC_SAMPLE: {
		const struct gt_sample *smp = data;

		if (feed_stacks(s, h, smp->tid, h->ts_ns, true, smp->ustack_id, smp->kstack_id,
				offsetof(struct gt_sample, ustack_id),
				offsetof(struct gt_sample, kstack_id)))
			return;
		break;
	}
	case GT_REC_STACK:
		/* Becomes a STACKS entry. */
		note_bpf_stack(s, data, h->size);
		return;
	case GT_REC_USTACK:
		/* Becomes a STACKS entry: the snapshot itself is not kept. */
		note_ustack(s, data, h->size);
		return;
	case GT_REC_GPU_OP:
		count_gpu_op(s, &((const struct gt_gpu_op *)data)->rec);
		break;
	case GT_REC_GPU_BATCH:
		split_batch(s, data);
		return;
	case GT_REC_NAME: {
		const struct gt_name *n = data;
		size_t len = offsetof(struct gt_name, name) + GT_MIN(n->len, GT_NAME_MAX - 1) + 1;
		struct gt_name copy;

		/* Store only the used part of the name buffer. */
		memcpy(&copy, n, GT_MIN(sizeof(copy), h->size));
		copy.hdr.size = (uint16_t)((len + 7) & ~7UL);
		record_sink__put(s, &copy, copy.hdr.size);
		return;
	}
	case GT_REC_TASK: {
		const struct gt_task *t = data;

		/* The loader's hook: a rescan of that process, nothing to keep. */
		if (t->event == GT_TASK_LOADED) {
			s->cfg.ops->task(s->cfg.ctx, t->pid, t->event);
			return;
		}
		/*
		 * A leader's exit: the rescan sees whether the process is gone
		 * and releases its links (a parent that never waits keeps its
		 * children zombies: their maps read empty, not missing).
		 */
		if (t->event == GT_TASK_EXIT && t->tid == t->pid)
			s->cfg.ops->task(s->cfg.ctx, t->pid, t->event);
		if (t->event == GT_TASK_NEW_PROCESS || t->event == GT_TASK_EXEC) {
			if (t->event == GT_TASK_EXEC && s->cfg.unw)
				unwinder__forget(s->cfg.unw, t->pid);
			/* The recorder forgets the symbols of an exec and rescans. */
			s->cfg.ops->task(s->cfg.ctx, t->pid, t->event);
		}
		break;
	}
	default:
		break;
	}
	record_sink__put(s, data, h->size);
}

void record_sink__init(struct record_sink *s, const struct record_sink_cfg *cfg)
{
	memset(s, 0, sizeof(*s));
	s->cfg = *cfg;
}

int record_sink__flush(struct record_sink *s)
{
	int err = 0;

	/* Stacks and symbols first, so every flushed event can be resolved. */
	if (s->stacks_buf.len) {
		err = capture_writer__block(s->cfg.w, GT_BLK_STACKS, s->stacks_buf.data,
					    s->stacks_buf.len);
		capture_buf__reset(&s->stacks_buf);
	}
	if (!err && s->syms_buf.len) {
		err = capture_writer__block(s->cfg.w, GT_BLK_SYMBOLS, s->syms_buf.data,
					    s->syms_buf.len);
		capture_buf__reset(&s->syms_buf);
	}
	if (!err && s->inl_buf.len) {
		err = capture_writer__block(s->cfg.w, GT_BLK_INLINES, s->inl_buf.data,
					    s->inl_buf.len);
		capture_buf__reset(&s->inl_buf);
	}
	if (!err)
		err = capture_writer__flush(s->cfg.w);
	if (err && !s->write_err) {
		s->write_err = err;
		gt_err("cannot write %s: %s; stopping (free disk space or choose another -o)",
		       s->cfg.path, strerror(-err));
	}
	return err;
}

void record_sink__fini(struct record_sink *s)
{
	capture_buf__free(&s->stacks_buf);
	capture_buf__free(&s->syms_buf);
	capture_buf__free(&s->inl_buf);
	free(s->inl_pend);
	u64map_free(&s->inl_keys);
	u64map_free(&s->stack_ids);
	u64map_free(&s->stack_frames);
	u64map_free(&s->sym_keys);
	u64map_free(&s->wakers);
	u64map_free(&s->walks);
	free(s->walk_ips);
	u64map_free(&s->kept);
	u64map_free(&s->seg_stacks);
	free(s->kept_ips);
}
