/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * synth_capture.h: builds small synthetic captures record by record (threads,
 * GPU ops and launches, off-CPU intervals, samples, units, calls, stacks) for
 * the cmocka tests of the analysis outputs (flame, diff, export, html);
 * include after <cmocka.h>.
 */
#ifndef GT_TEST_SYNTH_CAPTURE_H
#define GT_TEST_SYNTH_CAPTURE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "capture/capture.h"
#include "gaptrace/gaptrace.h"
#include "gaptrace/gaptrace_syscalls.h" /* GT_NR_*: x86-64 syscall numbers */
#include "support/util.h"

#define MS  NSEC_PER_MSEC
#define US  NSEC_PER_USEC
#define T0  (1000 * MS) /* capture start: 1 s of CLOCK_MONOTONIC */
#define PID 100

struct synth {
	char path[64];
	struct capture_writer *w;
	struct capture_buf stacks, syms, probes, maps, inl;
	uint64_t end;
	const char *end_gpu_source; /* END's gpu_source, as when the source changed */
};

static inline void synth_open(struct synth *s)
{
	char err[256];
	const char *kv[] = {"pid=100", "comm=synth", "start_mono_ns=1000000000",
			    "sample_period_ns=1000000", "gpu_source=usdt"};
	int fd;

	memset(s, 0, sizeof(*s));
	strcpy(s->path, "/tmp/gt_test_synth_XXXXXX");
	fd = mkstemp(s->path);
	assert_true(fd >= 0);
	close(fd);
	/* The name only: the writer keeps a file it would replace as .old. */
	unlink(s->path);
	s->w = capture_writer__open(s->path, kv, GT_ARRAY_SIZE(kv), err, sizeof(err));
	assert_non_null(s->w);
	s->end = T0 + 1000 * MS;
}

static inline void synth_hdr(struct gt_hdr *h, uint16_t type, uint16_t size, uint64_t ts)
{
	h->type = type;
	h->size = size;
	h->cpu = 0;
	h->ts_ns = ts;
}

/* A thread that existed when tracing began. */
static inline void synth_thread(struct synth *s, uint32_t tid, const char *comm)
{
	struct gt_task t = {};

	synth_hdr(&t.hdr, GT_REC_TASK, sizeof(t), T0);
	t.pid = PID;
	t.tid = tid;
	t.event = GT_TASK_SEEN;
	strncpy(t.comm, comm, sizeof(t.comm) - 1);
	assert_int_equal(capture_writer__event(s->w, &t, sizeof(t)), 0);
}

/* GPU op on device 0 (stream 7) with its launch call on thread tid. */
static inline void synth_op(struct synth *s, uint32_t tid, uint64_t id, uint64_t launch,
			    uint64_t start, uint64_t end)
{
	struct gt_gpu_launch l = {};
	struct gt_gpu_op g = {};

	synth_hdr(&l.hdr, GT_REC_GPU_LAUNCH, sizeof(l), launch);
	l.pid = PID;
	l.tid = tid;
	l.op_id = id;
	assert_int_equal(capture_writer__event(s->w, &l, sizeof(l)), 0);
	synth_hdr(&g.hdr, GT_REC_GPU_OP, sizeof(g), end);
	g.pid = PID;
	g.tid = 99;
	g.rec.start_ns = start;
	g.rec.end_ns = end;
	g.rec.op_id = id;
	g.rec.device = 0;
	g.rec.stream = 7;
	g.rec.kind = GAPTRACE_GPU_KERNEL;
	assert_int_equal(capture_writer__event(s->w, &g, sizeof(g)), 0);
}

/*
 * Off CPU from off to on in syscall sys (args a1, a2), woken at wake by waker
 * while that thread was in syscall waker_sys, with user and kernel stacks.
 */
static inline void synth_off_w(struct synth *s, uint32_t tid, uint64_t off, uint64_t wake,
			       uint64_t on, uint32_t flags, int32_t sys, uint64_t a1, uint64_t a2,
			       uint32_t waker, int32_t waker_sys, int32_t ustack, int32_t kstack)
{
	struct gt_offcpu o = {};

	synth_hdr(&o.hdr, GT_REC_OFFCPU, sizeof(o), on);
	o.pid = PID;
	o.tid = tid;
	o.off_ns = off;
	o.wake_ns = wake;
	o.on_ns = on;
	o.state = (flags & GT_OFF_PREEMPTED) ? 0 : 1;
	o.flags = flags;
	o.waker_pid = waker ? PID : 0;
	o.waker_tid = waker;
	o.waker_syscall = waker_sys;
	o.syscall_nr = sys;
	o.args[1] = a1;
	o.args[2] = a2;
	o.ustack_id = ustack;
	o.kstack_id = kstack;
	assert_int_equal(capture_writer__event(s->w, &o, sizeof(o)), 0);
}

/* The same with the waker's syscall left 0, as the output tests were written. */
static inline void synth_off_k(struct synth *s, uint32_t tid, uint64_t off, uint64_t wake,
			       uint64_t on, uint32_t flags, int32_t sys, uint64_t a1, uint64_t a2,
			       uint32_t waker, int32_t ustack, int32_t kstack)
{
	synth_off_w(s, tid, off, wake, on, flags, sys, a1, a2, waker, 0, ustack, kstack);
}

static inline void synth_off(struct synth *s, uint32_t tid, uint64_t off, uint64_t wake,
			     uint64_t on, uint32_t flags, int32_t sys, uint64_t a1, uint64_t a2,
			     uint32_t waker, int32_t ustack)
{
	synth_off_k(s, tid, off, wake, on, flags, sys, a1, a2, waker, ustack, -1);
}

/* The recorder's note that tid of process pid (comm), which it does not trace, woke a traced thread. */
static inline void synth_peer(struct synth *s, uint32_t pid, uint32_t tid, const char *comm,
			      uint64_t ts)
{
	struct gt_peer p = {};

	synth_hdr(&p.hdr, GT_REC_PEER, sizeof(p), ts);
	p.pid = pid;
	p.tid = tid;
	strncpy(p.comm, comm, sizeof(p.comm) - 1);
	assert_int_equal(capture_writer__event(s->w, &p, sizeof(p)), 0);
}

/* A CPU sample of tid, in syscall sys (-1: none), user stack ustack, no kernel stack. */
static inline void synth_sample_f(struct synth *s, uint32_t tid, uint64_t ts, int32_t sys,
				  uint32_t flags, int32_t ustack)
{
	struct gt_sample x = {};

	synth_hdr(&x.hdr, GT_REC_SAMPLE, sizeof(x), ts);
	x.pid = PID;
	x.tid = tid;
	x.syscall_nr = sys;
	x.flags = flags;
	x.ustack_id = ustack;
	x.kstack_id = -1;
	assert_int_equal(capture_writer__event(s->w, &x, sizeof(x)), 0);
}

/* A user-mode sample that also carries the thread's sched_info.pcount. */
static inline void synth_sample_pc(struct synth *s, uint32_t tid, uint64_t ts, uint64_t pcount)
{
	struct gt_sample x = {};

	synth_hdr(&x.hdr, GT_REC_SAMPLE, sizeof(x), ts);
	x.pid = PID;
	x.tid = tid;
	x.syscall_nr = -1;
	x.ustack_id = -1;
	x.kstack_id = -1;
	x.pcount = pcount;
	assert_int_equal(capture_writer__event(s->w, &x, sizeof(x)), 0);
}

static inline void synth_sample(struct synth *s, uint32_t tid, uint64_t ts, int32_t ustack)
{
	synth_sample_f(s, tid, ts, -1, 0, ustack);
}

/* Blocked on a contended mutex (futex value 2) until holder wakes it. */
static inline void synth_lock_wait(struct synth *s, uint32_t tid, uint64_t off, uint64_t wake,
				   uint64_t on, uint32_t holder)
{
	synth_off(s, tid, off, wake, on, 0, GT_NR_futex, 128, 2, holder, -1);
}

static inline void synth_call(struct synth *s, uint32_t tid, uint32_t func, uint64_t enter,
			      uint64_t exit)
{
	struct gt_call c = {};

	synth_hdr(&c.hdr, GT_REC_CALL, sizeof(c), exit);
	c.pid = PID;
	c.tid = tid;
	c.enter_ns = enter;
	c.exit_ns = exit;
	c.func_id = func;
	assert_int_equal(capture_writer__event(s->w, &c, sizeof(c)), 0);
}

static inline void synth_unit(struct synth *s, uint32_t tid, uint64_t id, uint64_t ts, bool begin)
{
	struct gt_unit u = {};

	synth_hdr(&u.hdr, GT_REC_UNIT, sizeof(u), ts);
	u.pid = PID;
	u.tid = tid;
	u.unit_id = id;
	u.begin = begin;
	assert_int_equal(capture_writer__event(s->w, &u, sizeof(u)), 0);
}

static inline void synth_probe(struct synth *s, uint32_t id, const char *fn, const char *cat)
{
	capture_buf__probe(&s->probes, id, fn, "libc.so.6", cat);
}

/* A one-frame user stack whose frame is the named function. */
static inline void synth_stack(struct synth *s, int32_t id, uint64_t ip, const char *fn)
{
	capture_buf__stack(&s->stacks, id, PID, false, &ip, 1);
	capture_buf__symbol(&s->syms, ip, PID, 4, fn, "/lib/libc.so.6");
}

/*
 * A stack of n frames given leaf first, as the recorder stores them; a NULL
 * name is an unresolved frame inside module.
 */
static inline void synth_stack_n(struct synth *s, int32_t id, bool kernel, const uint64_t *ips,
				 const char *const *names, const char *module, uint16_t n)
{
	uint32_t pid = kernel ? 0 : PID;

	capture_buf__stack(&s->stacks, id, pid, kernel, ips, n);
	for (uint16_t i = 0; i < n; i++)
		capture_buf__symbol(&s->syms, ips[i], pid, names[i] ? 4 : 0,
				    names[i] ? names[i] : "", module);
}

/* Writes the trailing blocks and closes the file; s->path stays for the caller. */
/*
 * The export tests' scene: gap [10, 30) ms, in which worker waits 16 ms for
 * a lock that holder releases, then runs malloc_trim (probe 0); later,
 * outside any gap, worker sleeps [50, 60) ms.  Two units around the GPU ops.
 */
static inline void synth_scene_lock_gap(struct synth *s, uint32_t worker, uint32_t holder)
{
	synth_thread(s, worker, "gpu-worker");
	synth_thread(s, holder, "lock-holder");
	synth_probe(s, 0, "malloc_trim", "allocator");
	synth_unit(s, worker, 0, T0 + 500 * US, true);
	synth_op(s, worker, 1, T0 + 1 * MS, T0 + 2 * MS, T0 + 10 * MS);
	synth_unit(s, worker, 0, T0 + 10500 * US, false);
	synth_off(s, holder, T0 + 5 * MS, T0 + 6 * MS, T0 + 6500 * US, 0, GT_NR_clock_nanosleep, 0,
		  0, 0, -1);
	synth_lock_wait(s, worker, T0 + 11 * MS, T0 + 27 * MS, T0 + 27200 * US, holder);
	synth_call(s, worker, 0, T0 + 27500 * US, T0 + 28500 * US);
	synth_unit(s, worker, 1, T0 + 29 * MS, true);
	synth_op(s, worker, 2, T0 + 29500 * US, T0 + 30 * MS, T0 + 40 * MS);
	synth_unit(s, worker, 1, T0 + 41 * MS, false);
	synth_off(s, worker, T0 + 50 * MS, T0 + 60 * MS, T0 + 61 * MS, 0, GT_NR_clock_nanosleep, 0,
		  0, 0, -1);
	s->end = T0 + 100 * MS;
}

static inline void synth_close(struct synth *s)
{
	struct capture_buf end = {};

	if (s->probes.len)
		assert_int_equal(
		    capture_writer__block(s->w, GT_BLK_PROBES, s->probes.data, s->probes.len), 0);
	if (s->maps.len)
		assert_int_equal(
		    capture_writer__block(s->w, GT_BLK_MAPPINGS, s->maps.data, s->maps.len), 0);
	if (s->stacks.len)
		assert_int_equal(
		    capture_writer__block(s->w, GT_BLK_STACKS, s->stacks.data, s->stacks.len), 0);
	if (s->syms.len)
		assert_int_equal(
		    capture_writer__block(s->w, GT_BLK_SYMBOLS, s->syms.data, s->syms.len), 0);
	if (s->inl.len)
		assert_int_equal(
		    capture_writer__block(s->w, GT_BLK_INLINES, s->inl.data, s->inl.len), 0);
	if (s->end_gpu_source)
		capture_buf__key(&end, CK_GPU_SOURCE, "%s", s->end_gpu_source);
	capture_buf__key(&end, CK_END_MONO_NS, "%llu", (unsigned long long)s->end);
	assert_int_equal(capture_writer__block(s->w, GT_BLK_END, end.data, end.len), 0);
	assert_int_equal(capture_writer__close(s->w), 0);
	capture_buf__free(&end);
	capture_buf__free(&s->stacks);
	capture_buf__free(&s->syms);
	capture_buf__free(&s->probes);
	capture_buf__free(&s->maps);
	capture_buf__free(&s->inl);
}

/* The sum property, checked on every analysis: a gap's categories add up to it. */
static inline void synth_check_sums(const struct an_result *r)
{
	for (size_t i = 0; i < r->ngaps; i++) {
		uint64_t sum = 0;

		for (int k = 0; k < GT_CAT_MAX; k++)
			sum += r->gaps[i].by_cat[k];
		assert_int_equal(sum, r->gaps[i].duration_ns);
	}
}

/* Analyses a closed capture file (opts NULL: the defaults). */
static inline struct an_result *synth_analyse(const char *path, const struct an_opts *opts)
{
	struct an_result *r = NULL;
	struct an_opts o;
	struct capture *c;
	char err[256];

	if (!opts) {
		an_opts__defaults(&o);
		opts = &o;
	}
	c = capture__open(path, err, sizeof(err));
	assert_non_null(c);
	assert_int_equal(analysis__run(c, opts, &r, err, sizeof(err)), 0);
	capture__close(c);
	synth_check_sums(r);
	return r;
}

/*
 * Closes and analyses the capture, leaving it open in *cap: some result
 * fields (gpu_source) borrow the capture's header strings.
 */
static inline struct an_result *synth_run_open(struct synth *s, const struct an_opts *opts,
					       struct capture **cap)
{
	struct an_result *r = NULL;
	char err[256];

	synth_close(s);
	*cap = capture__open(s->path, err, sizeof(err));
	assert_non_null(*cap);
	assert_int_equal(analysis__run(*cap, opts, &r, err, sizeof(err)), 0);
	unlink(s->path);
	synth_check_sums(r);
	return r;
}

/* Closes, analyses and removes the capture. */
static inline struct an_result *synth_run(struct synth *s, const struct an_opts *opts)
{
	struct an_result *r;

	synth_close(s);
	r = synth_analyse(s->path, opts);
	unlink(s->path);
	return r;
}

#endif /* GT_TEST_SYNTH_CAPTURE_H */
