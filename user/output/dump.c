// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * dump.c: the writer of `gaptrace dump` — every record of a capture as one
 * text line, in file order, with times relative to the capture start (like
 * `perf script`), for checking what the recorder saw.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/capture.h"
#include "output/dump.h"
#include "gaptrace/gaptrace.h"
#include "support/util.h"

struct dump_sym {
	uint64_t ip;
	uint32_t pid;
	char *name;
};

struct dump_stack {
	int32_t id;
	uint16_t nr, flags;
	uint32_t pid;
	uint64_t *ips;
};

struct dump_ctx {
	uint64_t t0;
	int64_t tid; /* -1: all */
	bool frames; /* -s: print each stack's function names */
	struct dump_stack *stacks;
	size_t nstacks, stacks_cap;
	struct dump_sym *syms;
	size_t nsyms, syms_cap;
};

static int stack_cmp(const void *a, const void *b)
{
	const struct dump_stack *x = a, *y = b;

	return (x->id > y->id) - (x->id < y->id);
}

static int sym_cmp(const void *a, const void *b)
{
	const struct dump_sym *x = a, *y = b;

	if (x->pid != y->pid)
		return (x->pid > y->pid) - (x->pid < y->pid);
	return (x->ip > y->ip) - (x->ip < y->ip);
}

static int collect_stack(const struct capture_stack *s, void *ctx)
{
	struct dump_ctx *d = ctx;
	struct dump_stack *st;

	gt_grow((void **)&d->stacks, &d->stacks_cap, d->nstacks, sizeof(*d->stacks));
	st = &d->stacks[d->nstacks++];
	st->id = s->stack_id;
	st->nr = s->nr;
	st->flags = s->flags;
	st->pid = s->pid;
	st->ips = gt_xmalloc((size_t)s->nr * sizeof(uint64_t) + 1);
	memcpy(st->ips, s->ips, (size_t)s->nr * sizeof(uint64_t));
	return 0;
}

static int collect_sym(const struct capture_symbol *s, void *ctx)
{
	struct dump_ctx *d = ctx;
	struct dump_sym *sy;

	gt_grow((void **)&d->syms, &d->syms_cap, d->nsyms, sizeof(*d->syms));
	sy = &d->syms[d->nsyms++];
	sy->ip = s->ip;
	sy->pid = s->pid;
	sy->name = gt_xmalloc((size_t)s->name_len + 1);
	memcpy(sy->name, s->name, s->name_len);
	sy->name[s->name_len] = '\0';
	return 0;
}

/*
 * " ustack_frames=leaf;...;root" (dwarf: "ustack_dwarf="), "?" for unresolved
 * frames, then " ustack_root=1" when the kernel's CFI walk ended at the
 * thread's outermost frame (named or not).
 */
static void print_frames(const struct dump_ctx *d, const char *what, int32_t id)
{
	struct dump_stack key = {.id = id}, *st;

	if (!d->frames || id < 0)
		return;
	st = bsearch(&key, d->stacks, d->nstacks, sizeof(*d->stacks), stack_cmp);
	if (!st)
		return;
	printf(" %s_%s=", what, (st->flags & GT_STACK_DWARF) ? "dwarf" : "frames");
	for (uint16_t i = 0; i < st->nr; i++) {
		struct dump_sym skey = {.ip = st->ips[i], .pid = st->pid}, *sy;

		sy = bsearch(&skey, d->syms, d->nsyms, sizeof(*d->syms), sym_cmp);
		printf("%s%s", i ? ";" : "", sy && sy->name[0] ? gt_clean(sy->name) : "?");
	}
	if (st->flags & GT_STACK_ROOT)
		printf(" %s_root=1", what);
}

static double rel(const struct dump_ctx *d, uint64_t ts)
{
	return ts ? (double)((int64_t)(ts - d->t0)) / 1e6 : 0.0;
}

static int dump_rec(const void *rec, size_t size, void *ctx)
{
	const struct dump_ctx *d = ctx;
	const struct gt_hdr *h = rec;

	/* Each record has at least its type's first layout: the reader dropped shorter ones. */
	switch (h->type) {
	case GT_REC_OFFCPU: {
		const struct gt_offcpu *o = rec;

		if (d->tid >= 0 && o->tid != d->tid)
			break;
		printf(
		    "%12.3f offcpu  tid %u off %.3f wake %.3f on %.3f state %#x flags %#x sys %d "
		    "args %#llx %#llx %#llx %#llx waker %u ustack %d kstack %d",
		    rel(d, h->ts_ns), o->tid, rel(d, o->off_ns), rel(d, o->wake_ns),
		    rel(d, o->on_ns), o->state, o->flags, o->syscall_nr,
		    (unsigned long long)o->args[0], (unsigned long long)o->args[1],
		    (unsigned long long)o->args[2],
		    (unsigned long long)(size >= sizeof(*o) ? o->args[3] : 0), o->waker_tid,
		    o->ustack_id, o->kstack_id);
		print_frames(d, "ustack", o->ustack_id);
		print_frames(d, "kstack", o->kstack_id);
		putchar('\n');
		break;
	}
	case GT_REC_SAMPLE: {
		const struct gt_sample *s = rec;

		if (d->tid >= 0 && s->tid != d->tid)
			break;
		printf("%12.3f sample  tid %u sys %d %s ip %#llx ustack %d kstack %d",
		       rel(d, h->ts_ns), s->tid, s->syscall_nr,
		       (s->flags & GT_SAMPLE_KERNEL) ? "kernel" : "user", (unsigned long long)s->ip,
		       s->ustack_id, s->kstack_id);
		if (size >= sizeof(*s))
			printf(" pcount %llu", (unsigned long long)s->pcount);
		print_frames(d, "ustack", s->ustack_id);
		print_frames(d, "kstack", s->kstack_id);
		putchar('\n');
		break;
	}
	case GT_REC_CALL: {
		const struct gt_call *c = rec;

		if (d->tid >= 0 && c->tid != d->tid)
			break;
		printf("%12.3f call    tid %u func %u enter %.3f exit %.3f%s\n", rel(d, h->ts_ns),
		       c->tid, c->func_id, rel(d, c->enter_ns), rel(d, c->exit_ns),
		       (c->flags & GT_CALL_OPEN) ? " (open)" : "");
		break;
	}
	case GT_REC_UNIT: {
		const struct gt_unit *u = rec;

		if (d->tid < 0 || u->tid == d->tid)
			printf("%12.3f unit    tid %u %s %llu\n", rel(d, h->ts_ns), u->tid,
			       u->begin ? "begin" : "end", (unsigned long long)u->unit_id);
		break;
	}
	case GT_REC_GPU_LAUNCH: {
		const struct gt_gpu_launch *l = rec;

		if (d->tid < 0 || l->tid == d->tid)
			printf("%12.3f launch  tid %u dev %u stream %u op %llu\n", rel(d, h->ts_ns),
			       l->tid, l->device, l->stream, (unsigned long long)l->op_id);
		break;
	}
	case GT_REC_GPU_OP: {
		const struct gt_gpu_op *g = rec;

		if (d->tid < 0)
			printf(
			    "%12.3f gpu_op  kind %u sub %u dev %u stream %u op %llu start %.3f end "
			    "%.3f tid %u\n",
			    rel(d, h->ts_ns), g->rec.kind, g->rec.subkind, g->rec.device,
			    g->rec.stream, (unsigned long long)g->rec.op_id,
			    rel(d, g->rec.start_ns), rel(d, g->rec.end_ns), g->rec.tid);
		break;
	}
	case GT_REC_TASK: {
		const struct gt_task *t = rec;
		char comm[GT_COMM_LEN + 1] = {};

		if (d->tid >= 0 && t->tid != d->tid)
			break;
		memcpy(comm, t->comm, GT_COMM_LEN);
		printf("%12.3f task    tid %u pid %u event %u parent %u comm %s\n",
		       rel(d, h->ts_ns), t->tid, t->pid, t->event, t->parent_tid, gt_clean(comm));
		break;
	}
	case GT_REC_PEER: {
		const struct gt_peer *p = rec;
		char comm[GT_COMM_LEN + 1] = {};

		if (d->tid >= 0)
			break;
		memcpy(comm, p->comm, GT_COMM_LEN);
		printf("%12.3f peer    tid %u pid %u comm %s (untraced waker)\n", rel(d, h->ts_ns),
		       p->tid, p->pid, gt_clean(comm));
		break;
	}
	case GT_REC_LOSS: {
		const struct gt_loss *l = rec;

		printf("%12.3f loss    kind %u count %llu from %.3f to %.3f\n", rel(d, h->ts_ns),
		       l->kind, (unsigned long long)l->count, rel(d, l->from_ns), rel(d, l->to_ns));
		break;
	}
	default:
		if (d->tid < 0)
			printf("%12.3f type %u size %zu\n", rel(d, h->ts_ns), h->type, size);
		break;
	}
	return 0;
}

void dump__capture(struct capture *c, int64_t tid, bool frames)
{
	struct dump_ctx d = {.tid = tid, .frames = frames};
	struct capture_block b;
	const char *v;

	v = capture__header_key(c, CK_START_MONO_NS);
	d.t0 = v ? strtoull(v, NULL, 10) : 0;
	if (d.frames) {
		/* Stacks and symbols may follow the events that use them: read them first. */
		while (capture__next(c, &b) == 1) {
			if (b.type == GT_BLK_STACKS)
				capture__stacks(b.body, b.len, collect_stack, &d);
			else if (b.type == GT_BLK_SYMBOLS)
				capture__symbols(b.body, b.len, collect_sym, &d);
		}
		gt_sort(d.stacks, d.nstacks, sizeof(*d.stacks), stack_cmp);
		gt_sort(d.syms, d.nsyms, sizeof(*d.syms), sym_cmp);
		capture__rewind(c);
	}
	while (capture__next(c, &b) == 1)
		capture__records(b.type, b.body, b.len, dump_rec, &d);
	for (size_t i = 0; i < d.nstacks; i++)
		free(d.stacks[i].ips);
	for (size_t i = 0; i < d.nsyms; i++)
		free(d.syms[i].name);
	free(d.stacks);
	free(d.syms);
}
