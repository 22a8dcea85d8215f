// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_record_sink.c: cmocka tests of the recorder's sink (record/record_sink):
 * hand-built BPF ring-buffer records go in, with a fake symbolizer
 * and rescan hook, and the capture that comes out is read back and checked
 * field by field.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture/capture.h"
#include "gaptrace/gaptrace.h"
#include "gaptrace.skel.h"
#include "record/record_sink.h"
#include "record/unwind.h"
#include "support/util.h"

#define MAX_OUT	 32
#define USER_IP0 0x401000ULL
#define USER_IP1 0x401100ULL
#define KERN_IP0 0xffffffff81000000ULL

/* What came back out of the capture. */
struct out_stack {
	int32_t id;
	uint32_t pid;
	bool kernel;
	uint16_t nr, flags;
	uint64_t ips[GT_STACK_DEPTH];
};

struct out_symbol {
	uint64_t ip;
	uint32_t pid, off;
	char name[64], module[64];
};

struct fx {
	char dir[64], path[96];
	struct capture_writer *w;
	struct record_sink sink;
	/* fakes' call log */
	unsigned resolves, tasks, inline_refs, inline_reads;
	uint32_t task_pid;
	bool task_exec;
	unsigned untraced_asked;
	/* the capture read back */
	uint8_t events[MAX_OUT][(GT_CAP_MAX_RECORD + 7) & ~7] __attribute__((aligned(8)));
	size_t event_size[MAX_OUT], nevents;
	struct out_stack stacks[MAX_OUT];
	size_t nstacks;
	struct out_symbol syms[MAX_OUT];
	size_t nsyms;
	struct capture_inline inl[MAX_OUT];
	char inl_names[MAX_OUT][GT_CAP_MAX_INLINE][32];
	size_t ninl;
};

/* Feeds the frames of a BPF stack id, as the kernel sends them when it makes the id. */
static void feed_stack(struct fx *f, int32_t id, uint32_t pid, bool kernel, const uint64_t *ips,
		       uint16_t nr)
{
	struct gt_stack st = {
	    .hdr = {GT_REC_STACK, (uint16_t)(offsetof(struct gt_stack, ips) + nr * 8), 0, 0},
	    .id = id,
	    .pid = pid,
	    .nr = nr,
	    .flags = kernel ? GT_STACK_REC_KERNEL : 0,
	};

	memcpy(st.ips, ips, nr * sizeof(*ips));
	record_sink__feed(&f->sink, &st, st.hdr.size);
}

static const uint64_t user_ips[] = {USER_IP0, USER_IP1}, kern_ips[] = {KERN_IP0};

/* The kernel's first two stacks: id 7 a user stack of two frames, id 9 a kernel one. */
static void feed_stacks_7_9(struct fx *f)
{
	feed_stack(f, 7, 100, false, user_ips, 2);
	feed_stack(f, 9, 0, true, kern_ips, 1);
}

static int fake_resolve(void *ctx, uint32_t pid, uint64_t ip, const char **name, uint32_t *off,
			const char **module)
{
	struct fx *f = ctx;

	f->resolves++;
	if (ip == USER_IP0 || ip == USER_IP1) {
		*name = ip == USER_IP0 ? "leaf" : "caller";
		*off = ip == USER_IP0 ? 0x10 : 0x20;
		*module = "/opt/prog";
		return 0;
	}
	if (ip == KERN_IP0) {
		*name = "schedule";
		*off = 4;
		*module = "[kernel]";
		return 0;
	}
	return -1;
}

static void fake_task(void *ctx, uint32_t pid, uint32_t event)
{
	struct fx *f = ctx;

	f->tasks++;
	f->task_pid = pid;
	f->task_exec = event == GT_TASK_EXEC;
}

/* Where a frame lies: the fake keeps (ip, caller) and knows two chains. */
static bool fake_inline_ref(void *ctx, uint32_t pid, uint64_t ip, bool caller, uint64_t ref[2])
{
	struct fx *f = ctx;

	f->inline_refs++;
	ref[0] = ip;
	ref[1] = caller;
	return pid == 100;
}

static int fake_inline_names(void *ctx, const uint64_t ref[2], const char **names, int max)
{
	struct fx *f = ctx;

	f->inline_reads++;
	assert_true(max >= 2);
	if (ref[0] == USER_IP0 && !ref[1]) {
		names[0] = "inl_a";
		names[1] = "inl_b";
		return 2;
	}
	if (ref[0] == USER_IP1 && ref[1]) {
		names[0] = "inl_c";
		return 1;
	}
	return 0;
}

/* Process 539 is not traced (its threads are called "outsider"); the others are. */
static bool fake_untraced(void *ctx, uint32_t pid, uint32_t tid, char *comm)
{
	struct fx *f = ctx;

	(void)tid;
	f->untraced_asked++;
	if (pid != 539)
		return false;
	memcpy(comm, "outsider", 9);
	return true;
}

static const struct record_sink_ops fake_ops = {
    .resolve = fake_resolve,
    .task = fake_task,
    .inline_ref = fake_inline_ref,
    .inline_names = fake_inline_names,
    .untraced = fake_untraced,
};

static int fx_setup(void **state)
{
	static const char *const kv[] = {"host=test"};
	struct fx *f = calloc(1, sizeof(*f));
	char err[256];

	if (!f)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "/tmp/gt-sink-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->path, sizeof(f->path), "%s/t.gtcap", f->dir);
	f->w = capture_writer__open(f->path, kv, 1, err, sizeof(err));
	if (!f->w)
		return -1;
	record_sink__init(&f->sink, &(struct record_sink_cfg){
					.ops = &fake_ops,
					.ctx = f,
					.w = f->w,
					.path = f->path,
					.min_gap_ns = NSEC_PER_MSEC,
				    });
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;

	record_sink__fini(&f->sink);
	capture_writer__close(f->w);
	unlink(f->path);
	rmdir(f->dir);
	free(f);
	return 0;
}

static int on_event(const void *rec, size_t size, void *ctx)
{
	struct fx *f = ctx;

	assert_true(f->nevents < MAX_OUT);
	memcpy(f->events[f->nevents], rec, size);
	f->event_size[f->nevents++] = size;
	return 0;
}

static int on_stack(const struct capture_stack *s, void *ctx)
{
	struct fx *f = ctx;
	struct out_stack *o = &f->stacks[f->nstacks++];

	o->id = s->stack_id;
	o->pid = s->pid;
	o->kernel = s->kernel;
	o->nr = s->nr;
	o->flags = s->flags;
	memcpy(o->ips, s->ips, s->nr * sizeof(uint64_t));
	return 0;
}

static int on_symbol(const struct capture_symbol *s, void *ctx)
{
	struct fx *f = ctx;
	struct out_symbol *o = &f->syms[f->nsyms++];

	o->ip = s->ip;
	o->pid = s->pid;
	o->off = s->sym_off;
	snprintf(o->name, sizeof(o->name), "%.*s", s->name_len, s->name);
	snprintf(o->module, sizeof(o->module), "%.*s", s->module_len, s->module);
	return 0;
}

static int on_inline(const struct capture_inline *in, void *ctx)
{
	struct fx *f = ctx;

	assert_true(f->ninl < MAX_OUT);
	f->inl[f->ninl] = *in;
	for (uint8_t k = 0; k < in->n; k++)
		snprintf(f->inl_names[f->ninl][k], 32, "%.*s", in->name_len[k], in->name[k]);
	f->ninl++;
	return 0;
}

/* Flushes the sink, closes the writer and reads everything back. */
static void read_back(struct fx *f)
{
	struct capture_block b;
	struct capture *c;
	char err[256];

	assert_int_equal(record_sink__flush(&f->sink), 0);
	assert_int_equal(capture_writer__close(f->w), 0);
	f->w = NULL;
	c = capture__open(f->path, err, sizeof(err));
	assert_non_null(c);
	while (capture__next(c, &b) == 1) {
		if (capture__has_records(b.type))
			assert_int_equal(capture__records(b.type, b.body, b.len, on_event, f), 0);
		else if (b.type == GT_BLK_STACKS)
			assert_int_equal(capture__stacks(b.body, b.len, on_stack, f), 0);
		else if (b.type == GT_BLK_SYMBOLS)
			assert_int_equal(capture__symbols(b.body, b.len, on_symbol, f), 0);
		else if (b.type == GT_BLK_INLINES)
			assert_int_equal(capture__inlines(b.body, b.len, on_inline, f), 0);
	}
	assert_int_equal(capture__nwarnings(c), 0);
	capture__close(c);
}

static const struct out_symbol *find_symbol(struct fx *f, uint64_t ip, uint32_t pid)
{
	for (size_t i = 0; i < f->nsyms; i++)
		if (f->syms[i].ip == ip && f->syms[i].pid == pid)
			return &f->syms[i];
	return NULL;
}

static struct gt_offcpu offcpu_rec(void)
{
	struct gt_offcpu o = {
	    .hdr = {GT_REC_OFFCPU, sizeof(o), 1, 5000},
	    .pid = 100,
	    .tid = 101,
	    .off_ns = 1000,
	    .wake_ns = 3000,
	    .on_ns = 4000,
	    .state = 1,
	    .flags = 0,
	    .waker_pid = 100,
	    .waker_tid = 102,
	    .syscall_nr = 202,
	    .ustack_id = 7,
	    .kstack_id = 9,
	    .waker_syscall = 202,
	    .args = {1, 2, 3},
	};

	return o;
}

/* An off-CPU interval is written as it came; the frames of its stacks are written and symbolized. */
static void test_offcpu_with_stacks(void **state)
{
	struct fx *f = *state;
	struct gt_offcpu o = offcpu_rec();
	const struct out_symbol *s;

	feed_stacks_7_9(f);
	record_sink__feed(&f->sink, &o, sizeof(o));
	/* The same stacks again: already written, not resolved again. */
	o.hdr.ts_ns = 6000;
	record_sink__feed(&f->sink, &o, sizeof(o));
	assert_int_equal(f->resolves, 3);
	assert_int_equal(f->sink.stacks_unresolved, 0);
	assert_int_equal(f->sink.events, 2);
	read_back(f);

	assert_int_equal(f->nevents, 2);
	assert_int_equal(f->event_size[0], sizeof(o));
	o.hdr.ts_ns = 5000;
	assert_memory_equal(f->events[0], &o, sizeof(o));
	assert_int_equal(((struct gt_offcpu *)f->events[1])->hdr.ts_ns, 6000);

	assert_int_equal(f->nstacks, 2);
	assert_int_equal(f->stacks[0].id, 7);
	assert_int_equal(f->stacks[0].pid, 100);
	assert_false(f->stacks[0].kernel);
	assert_int_equal(f->stacks[0].nr, 2);
	assert_int_equal(f->stacks[0].ips[0], USER_IP0);
	assert_int_equal(f->stacks[0].ips[1], USER_IP1);
	assert_int_equal(f->stacks[1].id, 9);
	assert_int_equal(f->stacks[1].pid, 0); /* kernel stacks belong to no process */
	assert_true(f->stacks[1].kernel);
	assert_int_equal(f->stacks[1].nr, 1);
	assert_int_equal(f->stacks[1].ips[0], KERN_IP0);

	assert_int_equal(f->nsyms, 3);
	s = find_symbol(f, USER_IP0, 100);
	assert_non_null(s);
	assert_string_equal(s->name, "leaf");
	assert_int_equal(s->off, 0x10);
	assert_string_equal(s->module, "/opt/prog");
	s = find_symbol(f, USER_IP1, 100);
	assert_non_null(s);
	assert_string_equal(s->name, "caller");
	assert_int_equal(s->off, 0x20);
	s = find_symbol(f, KERN_IP0, 0);
	assert_non_null(s);
	assert_string_equal(s->name, "schedule");
	assert_string_equal(s->module, "[kernel]");
}

/* A sample's missing user stack passes through; an id whose frames never came becomes -1. */
/*
 * Inline chains: each user frame located once per (pid, ip, position) while
 * recording, its DWARF read only by record_sink__finish; the first frame as
 * itself, later ones as return addresses (GT_INLINE_CALLER); kernel frames never.
 */
static void test_inlines_deferred(void **state)
{
	static const uint64_t swapped[] = {USER_IP1, USER_IP0};
	struct fx *f = *state;

	feed_stacks_7_9(f);
	feed_stack(f, 8, 100, false, swapped, 2);
	feed_stack(f, 10, 100, false, user_ips, 2); /* frames seen before: noted already */
	assert_int_equal(f->inline_refs, 4);
	assert_int_equal(f->inline_reads, 0);
	record_sink__finish(&f->sink);
	assert_int_equal(f->inline_reads, 4);
	read_back(f);
	assert_int_equal(f->ninl, 2);
	assert_int_equal(f->inl[0].ip, USER_IP0);
	assert_int_equal(f->inl[0].pid, 100);
	assert_int_equal(f->inl[0].flags, 0);
	assert_int_equal(f->inl[0].n, 2);
	assert_string_equal(f->inl_names[0][0], "inl_a");
	assert_string_equal(f->inl_names[0][1], "inl_b");
	assert_int_equal(f->inl[1].ip, USER_IP1);
	assert_int_equal(f->inl[1].flags, GT_INLINE_CALLER);
	assert_int_equal(f->inl[1].n, 1);
	assert_string_equal(f->inl_names[1][0], "inl_c");
}

static void test_sample(void **state)
{
	struct fx *f = *state;
	struct gt_sample s = {
	    .hdr = {GT_REC_SAMPLE, sizeof(s), 0, 7000},
	    .pid = 100,
	    .tid = 103,
	    .syscall_nr = -1,
	    .ustack_id = -14, /* -EFAULT from bpf_get_stackid */
	    .kstack_id = 33,  /* no frames sent for it */
	    .flags = GT_SAMPLE_KERNEL,
	    .ip = 0x401234,
	    .pcount = 17,
	};

	record_sink__feed(&f->sink, &s, sizeof(s));
	assert_int_equal(f->sink.stacks_unresolved, 1);
	read_back(f);
	assert_int_equal(f->nevents, 1);
	assert_int_equal(f->event_size[0], sizeof(s));
	s.kstack_id = -1;
	assert_memory_equal(f->events[0], &s, sizeof(s));
	assert_int_equal(f->nstacks, 0);
	assert_int_equal(f->nsyms, 0);
}

/*
 * A CPU sample in code without frame pointers sends a snapshot and no
 * walked stack (ustack_id -1): even a one-frame unwinding is its user
 * stack.  Where BPF did walk (--dwarf-samples), a one-frame unwinding does
 * not replace the walked stack.  The snapshots are of this process, with
 * an ip in no mapping and no stack bytes: the unwinding stops at the leaf.
 */
static void test_sample_snapshot_alone(void **state)
{
	struct fx *f = *state;
	struct gt_ustack *u = calloc(1, sizeof(*u));
	struct gt_sample smp = {
	    .hdr = {GT_REC_SAMPLE, sizeof(smp), 0, 7000},
	    .pid = (uint32_t)getpid(),
	    .tid = (uint32_t)gettid(),
	    .syscall_nr = -1,
	    .ustack_id = -1,
	    .kstack_id = -1,
	    .ip = 0x1000,
	};
	struct gt_sample got;

	assert_non_null(u);
	f->sink.cfg.unw = unwinder__new();
	u->hdr = (struct gt_hdr){GT_REC_USTACK, offsetof(struct gt_ustack, data), 0, 7000};
	u->pid = smp.pid;
	u->tid = smp.tid;
	u->off_ns = 7000;
	u->flags = GT_USTACK_SAMPLE;
	u->regs[7] = 0x7ff000000000;
	u->regs[16] = 0x1000;
	record_sink__feed(&f->sink, u, u->hdr.size);
	record_sink__feed(&f->sink, &smp, sizeof(smp));
	/* The same with a walked stack (id 7): the walk stays. */
	u->hdr.ts_ns = u->off_ns = smp.hdr.ts_ns = 8000;
	feed_stack(f, 7, smp.pid, false, user_ips, 2);
	smp.ustack_id = 7;
	record_sink__feed(&f->sink, u, u->hdr.size);
	record_sink__feed(&f->sink, &smp, sizeof(smp));
	read_back(f);
	assert_int_equal(f->nevents, 2);
	memcpy(&got, f->events[0], sizeof(got));
	assert_true(got.ustack_id >= GT_STACK_DWARF_BASE);
	assert_int_equal(f->nstacks, 2);
	assert_int_equal(f->stacks[0].id, got.ustack_id);
	assert_int_equal(f->stacks[0].nr, 1);
	assert_true(f->stacks[0].ips[0] == 0x1000);
	memcpy(&got, f->events[1], sizeof(got));
	assert_int_equal(got.ustack_id, 7);
	unwinder__free(f->sink.cfg.unw);
	f->sink.cfg.unw = NULL;
	free(u);
}

/*
 * Stacks that last (#12): the kernel forgets stacks (LRU) and makes a new id
 * when one comes back, never reusing an id.  An off-CPU record leaves at
 * switch-in, long after its switch-out took the id: a late record must still
 * get its own frames, a resent stack the capture id first written for it,
 * and the same addresses in another process a stack of their own.
 */
static void test_stack_ids_resent_and_late(void **state)
{
	static const uint64_t other_ips[] = {USER_IP1, USER_IP0, USER_IP0 + 8};
	struct fx *f = *state;
	struct gt_offcpu o = offcpu_rec();
	struct gt_sample smp = {
	    .hdr = {GT_REC_SAMPLE, sizeof(smp), 0, 9000},
	    .pid = 100,
	    .tid = 103,
	    .syscall_nr = -1,
	    .ustack_id = 11,
	    .kstack_id = -1,
	};
	const struct gt_offcpu *e;

	feed_stacks_7_9(f);
	/* Stack 7 was evicted; its bucket took another stack under a new id ... */
	feed_stack(f, 11, 100, false, other_ips, 3);
	/* ... and stack 7's frames came back under id 1031, pid 200's under 1035. */
	feed_stack(f, 1031, 100, false, user_ips, 2);
	feed_stack(f, 1035, 200, false, user_ips, 2);
	/* The switch-out that took id 7 before all that ends only now. */
	record_sink__feed(&f->sink, &o, sizeof(o));
	o.ustack_id = 1031;
	o.hdr.ts_ns = 6000;
	record_sink__feed(&f->sink, &o, sizeof(o));
	o.pid = 200;
	o.ustack_id = 1035;
	o.hdr.ts_ns = 7000;
	record_sink__feed(&f->sink, &o, sizeof(o));
	record_sink__feed(&f->sink, &smp, sizeof(smp));
	assert_int_equal(f->sink.stacks_resent, 1);
	assert_int_equal(f->sink.stacks_unresolved, 0);
	assert_int_equal(record_sink__stack_id(&f->sink, 1031), 7);
	assert_int_equal(record_sink__stack_id(&f->sink, 7), 7);
	assert_int_equal(record_sink__stack_id(&f->sink, 11), 11);
	assert_int_equal(record_sink__stack_id(&f->sink, GT_STACK_DWARF_BASE + 3),
			 GT_STACK_DWARF_BASE + 3);
	read_back(f);

	assert_int_equal(f->nevents, 4);
	e = (const struct gt_offcpu *)f->events[0];
	assert_int_equal(e->ustack_id, 7);
	assert_int_equal(e->kstack_id, 9);
	e = (const struct gt_offcpu *)f->events[1];
	assert_int_equal(e->hdr.ts_ns, 6000);
	assert_int_equal(e->ustack_id, 7); /* the resent stack: its first capture id */
	assert_int_equal(e->kstack_id, 9);
	e = (const struct gt_offcpu *)f->events[2];
	assert_int_equal(e->ustack_id, 1035); /* pid 200's own stack */
	assert_int_equal(((const struct gt_sample *)f->events[3])->ustack_id, 11);

	/* One STACKS entry per (process, frames): 7, 9, 11 and pid 200's 1035. */
	assert_int_equal(f->nstacks, 4);
	assert_int_equal(f->stacks[0].id, 7);
	assert_int_equal(f->stacks[0].nr, 2);
	assert_int_equal(f->stacks[0].ips[0], USER_IP0);
	assert_int_equal(f->stacks[2].id, 11);
	assert_int_equal(f->stacks[2].pid, 100);
	assert_int_equal(f->stacks[2].nr, 3);
	assert_int_equal(f->stacks[2].ips[0], USER_IP1);
	assert_int_equal(f->stacks[2].ips[2], USER_IP0 + 8);
	assert_int_equal(f->stacks[3].id, 1035);
	assert_int_equal(f->stacks[3].pid, 200);
	assert_int_equal(f->stacks[3].ips[1], USER_IP1);
}

static void gpu_rec(struct gt_gpu_batch *b, uint32_t i, uint64_t start, uint64_t end)
{
	struct gaptrace_gpu_rec g = {
	    .start_ns = start,
	    .end_ns = end,
	    .op_id = 40 + i,
	    .bytes = 0,
	    .device = 0,
	    .stream = 7,
	    .context = 1,
	    .name_id = 5,
	    .kind = GAPTRACE_GPU_KERNEL,
	    .subkind = 0,
	    .tid = 101,
	    .grid = {1, 2, 3},
	    .block = {4, 5, 6},
	};

	memcpy(b->data + (size_t)i * GT_GPU_REC_SIZE, &g, sizeof(g));
}

/*
 * A GPU batch becomes one GPU_OP per record (bytes past the producer's
 * rec_size zeroed) and a GPU LOSS record for the ones it dropped.
 */
static void test_gpu_batch_split(void **state)
{
	struct fx *f = *state;
	struct gt_gpu_batch *b = calloc(1, sizeof(*b));
	const uint32_t rec_size = offsetof(struct gaptrace_gpu_rec, grid);
	const uint64_t ms = NSEC_PER_MSEC;

	b->hdr = (struct gt_hdr){GT_REC_GPU_BATCH, sizeof(*b), 3, 9000};
	b->pid = 100;
	b->tid = 104;
	b->count = 3;
	b->rec_size = rec_size;
	b->dropped = 2;
	/* Gaps of 2 ms (counted at --min-gap 1ms) and 0.5 ms (not counted). */
	gpu_rec(b, 0, 1 * ms, 2 * ms);
	gpu_rec(b, 1, 4 * ms, 5 * ms);
	gpu_rec(b, 2, 5 * ms + ms / 2, 6 * ms);
	record_sink__feed(&f->sink, b, sizeof(*b));
	assert_int_equal(f->sink.gpu_ops, 3);
	assert_int_equal(f->sink.gaps, 1);
	assert_int_equal(f->sink.events, 4);
	read_back(f);

	assert_int_equal(f->nevents, 4);
	for (uint32_t i = 0; i < 3; i++) {
		const struct gt_gpu_op *op = (const void *)f->events[i];
		struct gaptrace_gpu_rec want = {};

		memcpy(&want, b->data + (size_t)i * GT_GPU_REC_SIZE, rec_size);
		assert_int_equal(f->event_size[i], sizeof(*op));
		assert_int_equal(op->hdr.type, GT_REC_GPU_OP);
		assert_int_equal(op->hdr.size, sizeof(*op));
		assert_int_equal(op->hdr.cpu, 3);
		assert_int_equal(op->hdr.ts_ns, 9000);
		assert_int_equal(op->pid, 100);
		assert_int_equal(op->tid, 104);
		assert_int_equal(op->rec.op_id, 40 + i);
		assert_int_equal(op->rec.grid[0], 0); /* past rec_size */
		assert_memory_equal(&op->rec, &want, sizeof(want));
	}
	{
		const struct gt_loss *l = (const void *)f->events[3];

		assert_int_equal(f->event_size[3], sizeof(*l));
		assert_int_equal(l->hdr.type, GT_REC_LOSS);
		assert_int_equal(l->hdr.cpu, 3);
		assert_int_equal(l->from_ns, 9000);
		assert_int_equal(l->to_ns, 9000);
		assert_int_equal(l->count, 2);
		assert_int_equal(l->kind, GT_LOSS_GPU);
	}
	free(b);
}

/* Names are stored trimmed to their used length; an exec asks for a rescan; runts are dropped. */
static void test_name_task_runt(void **state)
{
	struct fx *f = *state;
	struct gt_name n = {.hdr = {GT_REC_NAME, sizeof(n), 0, 100}};
	struct gt_task t = {.hdr = {GT_REC_TASK, sizeof(t), 0, 200}};
	struct gt_hdr runt = {GT_REC_SAMPLE, sizeof(struct gt_sample), 0, 300};

	n.len = 6;
	memcpy(n.name, "kernel", 6);
	record_sink__feed(&f->sink, &n, sizeof(n));
	t.pid = 100;
	t.tid = 100;
	t.event = GT_TASK_EXEC;
	record_sink__feed(&f->sink, &t, sizeof(t));
	/* hdr.size larger than what was read: ignored. */
	record_sink__feed(&f->sink, &runt, sizeof(runt));
	assert_int_equal(f->tasks, 1);
	assert_int_equal(f->task_pid, 100);
	assert_true(f->task_exec);
	read_back(f);

	assert_int_equal(f->nevents, 2);
	assert_int_equal(f->event_size[0],
			 (offsetof(struct gt_name, name) + 6 + 1 + 7) & ~(size_t)7);
	assert_int_equal(((const struct gt_name *)f->events[0])->len, 6);
	assert_memory_equal(((const struct gt_name *)f->events[0])->name, "kernel", 6);
	assert_int_equal(f->event_size[1], sizeof(t));
	assert_memory_equal(f->events[1], &t, sizeof(t));
}

/*
 * A record shorter than its type's first layout (gt_rec_min_size) is
 * dropped, as the capture reader drops it: not written, not acted on.
 */
static void test_short_for_type(void **state)
{
	struct fx *f = *state;
	struct gt_offcpu o = offcpu_rec();
	struct gt_task t = {.hdr = {GT_REC_TASK, sizeof(t) - 8, 0, 200}};
	struct gt_gpu_batch *b = calloc(1, sizeof(*b));

	o.hdr.size = GT_OFFCPU_V1_SIZE - 8;
	record_sink__feed(&f->sink, &o, sizeof(o));
	t.pid = 100;
	t.tid = 100;
	t.event = GT_TASK_EXEC;
	record_sink__feed(&f->sink, &t, sizeof(t));
	b->hdr = (struct gt_hdr){GT_REC_GPU_BATCH, offsetof(struct gt_gpu_batch, data), 3, 9000};
	b->count = 1;
	b->rec_size = GT_GPU_REC_SIZE;
	b->dropped = 1;
	record_sink__feed(&f->sink, b, sizeof(*b));
	assert_int_equal(f->sink.events, 0);
	assert_int_equal(f->sink.gpu_ops, 0);
	assert_int_equal(f->tasks, 0);
	/* An off-CPU interval of the first layout (before args[3]) is whole. */
	o.hdr.size = GT_OFFCPU_V1_SIZE;
	record_sink__feed(&f->sink, &o, GT_OFFCPU_V1_SIZE);
	assert_int_equal(f->sink.events, 1);
	read_back(f);
	assert_int_equal(f->nevents, 1);
	assert_int_equal(f->event_size[0], GT_OFFCPU_V1_SIZE);
	free(b);
}

/*
 * A thread's exit asks nothing of the recorder; its leader's asks for a
 * rescan of the process (which releases its links once it is gone).
 * Both are kept.
 */
static void test_exit_rescan(void **state)
{
	struct fx *f = *state;
	struct gt_task t = {.hdr = {GT_REC_TASK, sizeof(t), 0, 150}};

	t.pid = 300;
	t.tid = 301;
	t.event = GT_TASK_EXIT;
	record_sink__feed(&f->sink, &t, sizeof(t));
	assert_int_equal(f->tasks, 0);
	t.tid = 300;
	record_sink__feed(&f->sink, &t, sizeof(t));
	assert_int_equal(f->tasks, 1);
	assert_int_equal(f->task_pid, 300);
	assert_false(f->task_exec);
	read_back(f);
	assert_int_equal(f->nevents, 2);
}

/*
 * A waker outside the trace is named once by a PEER record ahead of the
 * interval; a traced one, one from an interrupt, and the loader's hook
 * (a rescan, never kept) write nothing.
 */
static void test_untraced_waker_and_loader(void **state)
{
	struct fx *f = *state;
	struct gt_offcpu o = {.hdr = {GT_REC_OFFCPU, sizeof(o), 0, 100}};
	struct gt_task t = {.hdr = {GT_REC_TASK, sizeof(t), 0, 150}};
	const struct gt_peer *p;

	o.pid = o.tid = 300;
	o.ustack_id = o.kstack_id = -1;
	o.waker_pid = 539;
	o.waker_tid = 540;
	o.waker_syscall = 1;
	record_sink__feed(&f->sink, &o, sizeof(o));
	record_sink__feed(&f->sink, &o, sizeof(o)); /* the same waker: asked once */
	o.waker_tid = 541;
	o.flags = GT_OFF_WAKER_IRQ;
	record_sink__feed(&f->sink, &o, sizeof(o));
	o.flags = 0;
	o.waker_pid = 300; /* traced */
	o.waker_tid = 302;
	record_sink__feed(&f->sink, &o, sizeof(o));
	t.pid = t.tid = 300;
	t.event = GT_TASK_LOADED;
	record_sink__feed(&f->sink, &t, sizeof(t));
	assert_int_equal(f->untraced_asked, 2);
	assert_int_equal(f->tasks, 1);
	assert_false(f->task_exec);
	read_back(f);

	assert_int_equal(f->nevents, 5);
	assert_int_equal(((const struct gt_hdr *)f->events[0])->type, GT_REC_PEER);
	p = (const struct gt_peer *)f->events[0];
	assert_int_equal(p->pid, 539);
	assert_int_equal(p->tid, 540);
	assert_string_equal(p->comm, "outsider");
	for (size_t i = 1; i < 5; i++)
		assert_int_equal(((const struct gt_hdr *)f->events[i])->type, GT_REC_OFFCPU);
}

/*
 * The recorder reads the offcpu and calls maps back at the stop into
 * struct gt_offcpu_start / gt_call_start: bpf_map_lookup_elem writes the
 * map's value size, so the BPF object's value sizes (from its BTF, no load,
 * no root) must be the recorder's, or the lookup overruns the recorder's
 * stack.  The records the programs emit are checked by _Static_assert in
 * gaptrace.h; the ring buffer's record sizes by the sink tests above.
 */
/*
 * record_sink__stitch: a snapshot's CFI frames joined to the kernel's fp walk
 * where the walk, shifted past the frames without frame pointers, agrees.
 */
static void test_stitch(void **state)
{
	const uint64_t L = 0x1000, a = 0xa0, b = 0xb0, c = 0xc0, d = 0xd0, e = 0xe0, q = 0x99;
	uint64_t out[8];

	(void)state;
	/* libc's internals (a, b) only in the CFI frames; the fp walk lost them and goes deeper. */
	{
		const uint64_t cfi[] = {L, a, b, c}, fp[] = {L, c, d, e};
		const uint64_t want[] = {L, a, b, c, d, e};

		assert_int_equal(record_sink__stitch(cfi, 4, fp, 4, out, 8), 6);
		assert_memory_equal(out, want, sizeof(want));
	}
	/* Every frame both have must agree: two here. */
	{
		const uint64_t cfi[] = {L, a, b, c}, fp[] = {L, b, c, d};
		const uint64_t want[] = {L, a, b, c, d};

		assert_int_equal(record_sink__stitch(cfi, 4, fp, 4, out, 8), 5);
		assert_memory_equal(out, want, sizeof(want));
	}
	/* One that does not (a walk off course for a frame) joins nothing. */
	{
		const uint64_t cfi[] = {L, a, b, c}, fp[] = {L, q, b, c, d};

		assert_int_equal(record_sink__stitch(cfi, 4, fp, 5, out, 8), 0);
	}
	/* A walk that followed a %rbp holding something else meets nothing. */
	{
		const uint64_t cfi[] = {L, a, b}, fp[] = {L, q, q + 1};

		assert_int_equal(record_sink__stitch(cfi, 3, fp, 3, out, 8), 0);
	}
	/* The shared leaf alone is no evidence; a walk no deeper than the snapshot adds nothing. */
	{
		const uint64_t cfi[] = {L, a, b, c}, fp[] = {L, q, d}, fp2[] = {L, b, c};

		assert_int_equal(record_sink__stitch(cfi, 2, fp, 3, out, 8), 0);
		assert_int_equal(record_sink__stitch(cfi, 1, fp, 3, out, 8), 0);
		assert_int_equal(record_sink__stitch(cfi, 4, fp2, 3, out, 8), 0);
	}
	/*
	 * Recursion: five frames of c below a; the snapshot holds three.  The
	 * join keeps five, not three more on top; it stops at max frames.
	 */
	{
		const uint64_t cfi[] = {L, a, c, c, c}, fp[] = {L, c, c, c, c, c, d};
		const uint64_t want[] = {L, a, c, c, c, c, c, d};

		assert_int_equal(record_sink__stitch(cfi, 5, fp, 7, out, 8), 8);
		assert_memory_equal(out, want, sizeof(want));
		assert_int_equal(record_sink__stitch(cfi, 5, fp, 7, out, 4), 4);
		assert_memory_equal(out, want, 4 * sizeof(uint64_t));
	}
}

static void test_map_values_match_bpf_object(void **state)
{
	struct gaptrace_bpf *skel = gaptrace_bpf__open();

	(void)state;
	assert_non_null(skel);
	assert_int_equal(bpf_map__value_size(skel->maps.offcpu), sizeof(struct gt_offcpu_start));
	assert_int_equal(bpf_map__key_size(skel->maps.offcpu), sizeof(uint32_t));
	assert_int_equal(bpf_map__value_size(skel->maps.calls), sizeof(struct gt_call_start));
	assert_int_equal(bpf_map__key_size(skel->maps.calls), sizeof(uint64_t));
	/* The first 64 frames, a deeper stack's rest hashed (STACK_KEY_FRAMES in the BPF side). */
	assert_int_equal(bpf_map__key_size(skel->maps.stack_ids), 64 * sizeof(uint64_t));
	assert_true(GT_STACK_DEPTH >= 128);
	assert_int_equal(bpf_map__value_size(skel->maps.stack_ids), sizeof(int32_t));
	gaptrace_bpf__destroy(skel);
}

/*
 * The monitor's segments: a record in a later segment that uses a stack
 * written into an earlier one gets that stack, and its symbols, written
 * again, so each segment reads alone.
 */
/*
 * A user walk the kernel ended at the thread's outermost frame (its CFI says
 * so) keeps that in the capture as GT_STACK_ROOT: a stripped libc leaves
 * clone3 and start_thread unnamed, and the flag is what still says the
 * stack is whole.
 */
static void test_stack_root_flag(void **state)
{
	struct fx *f = *state;
	struct gt_offcpu o = offcpu_rec();
	struct gt_stack st = {
	    .hdr = {GT_REC_STACK, (uint16_t)(offsetof(struct gt_stack, ips) + 2 * 8), 0, 0},
	    .id = 7,
	    .pid = 100,
	    .nr = 2,
	    .flags = GT_STACK_REC_ROOT,
	};

	st.ips[0] = USER_IP0;
	st.ips[1] = USER_IP1;
	f->sink.cfg.segments = true;
	record_sink__feed(&f->sink, &st, st.hdr.size);
	feed_stack(f, 9, 0, true, kern_ips, 1);
	record_sink__feed(&f->sink, &o, sizeof(o));
	read_back(f);
	assert_int_equal(f->nstacks, 2);
	assert_int_equal(f->stacks[0].id, 7);
	assert_int_equal(f->stacks[0].flags, GT_STACK_ROOT);
	assert_false(f->stacks[0].kernel);
	assert_int_equal(f->stacks[1].flags, GT_STACK_KERNEL);
}

static void test_segment_rewrites_stacks(void **state)
{
	static const char *const kv[] = {"host=test"};
	struct fx *f = *state;
	struct gt_offcpu o = offcpu_rec();
	char path2[128], err[256];
	struct capture_writer *w2;
	unsigned resolves;

	f->sink.cfg.segments = true;
	feed_stacks_7_9(f);
	record_sink__feed(&f->sink, &o, sizeof(o));
	assert_int_equal(record_sink__flush(&f->sink), 0);
	resolves = f->resolves;
	snprintf(path2, sizeof(path2), "%s/t2.gtcap", f->dir);
	w2 = capture_writer__open(path2, kv, 1, err, sizeof(err));
	assert_non_null(w2);
	assert_int_equal(capture_writer__close(f->w), 0);
	record_sink__segment(&f->sink, w2, path2);
	f->w = w2;
	unlink(f->path);
	memcpy(f->path, path2, sizeof(path2) < sizeof(f->path) ? sizeof(path2) : sizeof(f->path));
	o.hdr.ts_ns = 7000;
	record_sink__feed(&f->sink, &o, sizeof(o));
	/* Twice in the segment: written once. */
	record_sink__feed(&f->sink, &o, sizeof(o));
	read_back(f);
	assert_int_equal(f->nevents, 2);
	assert_int_equal(((struct gt_offcpu *)f->events[0])->ustack_id, 7);
	assert_int_equal(((struct gt_offcpu *)f->events[0])->kstack_id, 9);
	assert_int_equal(f->nstacks, 2);
	assert_int_equal(f->stacks[0].id, 7);
	assert_int_equal(f->stacks[0].nr, 2);
	assert_int_equal(f->stacks[0].ips[1], USER_IP1);
	assert_int_equal(f->stacks[0].pid, 100);
	assert_false(f->stacks[0].kernel);
	assert_int_equal(f->stacks[1].id, 9);
	assert_true(f->stacks[1].kernel);
	assert_int_equal(f->nsyms, 3);
	assert_non_null(find_symbol(f, USER_IP0, 100));
	assert_string_equal(find_symbol(f, KERN_IP0, 0)->name, "schedule");
	/* Symbols of the new segment are resolved again (the process may have changed). */
	assert_int_equal(f->resolves, resolves + 3);
	assert_int_equal(f->sink.stacks_unresolved, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_offcpu_with_stacks, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_inlines_deferred, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_sample, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_sample_snapshot_alone, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_stack_ids_resent_and_late, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_gpu_batch_split, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_name_task_runt, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_short_for_type, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_exit_rescan, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_untraced_waker_and_loader, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_segment_rewrites_stacks, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_stack_root_flag, fx_setup, fx_teardown),
	    cmocka_unit_test(test_stitch),
	    cmocka_unit_test(test_map_values_match_bpf_object),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
