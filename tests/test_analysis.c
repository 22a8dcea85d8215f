// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_analysis.c: gap finding and attribution on synthetic event streams
 * whose exact answer is known: each category, the sum property, preempted vs
 * blocked, the critical-thread choice, the critical path, units, and lost
 * data becoming unknown.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "analysis/analysis.h"
#include "capture/capture.h"
#include "gaptrace/gaptrace.h"
#include "support/u64map.h"
#include "support/util.h"

#include "synth_capture.h" /* MS, US, T0, PID, GT_NR_* */

static void ev_op(struct synth *s, uint32_t dev, uint64_t op, uint64_t start, uint64_t end)
{
	struct gt_gpu_op g = {};

	synth_hdr(&g.hdr, GT_REC_GPU_OP, sizeof(g), end);
	g.pid = PID;
	g.tid = 99;
	g.rec.start_ns = start;
	g.rec.end_ns = end;
	g.rec.op_id = op;
	g.rec.device = dev;
	g.rec.kind = GAPTRACE_GPU_KERNEL;
	assert_int_equal(capture_writer__event(s->w, &g, sizeof(g)), 0);
}

static void ev_launch(struct synth *s, uint32_t tid, uint64_t op, uint64_t ts)
{
	struct gt_gpu_launch l = {};

	synth_hdr(&l.hdr, GT_REC_GPU_LAUNCH, sizeof(l), ts);
	l.pid = PID;
	l.tid = tid;
	l.op_id = op;
	assert_int_equal(capture_writer__event(s->w, &l, sizeof(l)), 0);
}

/* GPU op with its launch: the usual pair. */
static void op(struct synth *s, uint32_t tid, uint64_t id, uint64_t launch, uint64_t start,
	       uint64_t end)
{
	ev_launch(s, tid, id, launch);
	ev_op(s, 0, id, start, end);
}

static void ev_off(struct synth *s, uint32_t tid, uint64_t off, uint64_t wake, uint64_t on,
		   uint32_t flags, int32_t sys, uint64_t a1, uint64_t a2, uint32_t waker,
		   int32_t ustack)
{
	/* A waker of a futex wait is in futex_wake; of a read, in a write. */
	synth_off_w(s, tid, off, wake, on, flags, sys, a1, a2, waker,
		    !waker		? -1
		    : sys == GT_NR_read ? GT_NR_write
					: GT_NR_futex,
		    ustack, -1);
}

static void ev_loss(struct synth *s, uint64_t from, uint64_t to)
{
	struct gt_loss l = {};

	synth_hdr(&l.hdr, GT_REC_LOSS, sizeof(l), to);
	l.from_ns = from;
	l.to_ns = to;
	l.count = 3;
	l.kind = GT_LOSS_RINGBUF;
	assert_int_equal(capture_writer__event(s->w, &l, sizeof(l)), 0);
}

/* A one-frame user stack whose frame is the named function. */
static void stack(struct synth *s, int32_t id, uint64_t ip, const char *fn, const char *module)
{
	capture_buf__stack(&s->stacks, id, PID, false, &ip, 1);
	capture_buf__symbol(&s->syms, ip, PID, 4, fn, module);
}

/* Two GPU ops on device 0 around a 20 ms gap [T0+10ms, T0+30ms); worker 10 launches op 2. */
static void base_gap(struct synth *s, uint64_t launch)
{
	synth_thread(s, 10, "gpu-worker");
	op(s, 10, 1, T0 + 1 * MS, T0 + 2 * MS, T0 + 10 * MS);
	op(s, 10, 2, launch, T0 + 30 * MS, T0 + 40 * MS);
}

static void assert_cat(const struct an_gap *g, int cat, uint64_t ns)
{
	if (g->by_cat[cat] != ns)
		fail_msg("gap %u: %s = %llu, expected %llu", g->index, gt_cat_names[cat],
			 (unsigned long long)g->by_cat[cat], (unsigned long long)ns);
}

static void test_gap_sleep(void **state)
{
	struct synth s;
	struct an_result *r;

	synth_open(&s);
	base_gap(&s, T0 + 29500 * US);
	/* Sleeps 18 ms, then waits 0.2 ms for a CPU. */
	ev_off(&s, 10, T0 + 11 * MS, T0 + 29 * MS, T0 + 29200 * US, 0, GT_NR_clock_nanosleep, 0, 0,
	       0, -1);
	r = synth_run(&s, NULL);
	assert_int_equal(r->ngaps, 1);
	assert_int_equal(r->gaps[0].start_ns, T0 + 10 * MS);
	assert_int_equal(r->gaps[0].end_ns, T0 + 30 * MS);
	assert_int_equal(r->gaps[0].tid, 10);
	assert_cat(&r->gaps[0], GT_CAT_SLEEP, 18 * MS);
	assert_cat(&r->gaps[0], GT_CAT_SCHED, 200 * US);
	/* on-CPU [10, 11) and [29.2, 29.5) without samples: cpu; launch latency: cuda */
	assert_cat(&r->gaps[0], GT_CAT_CPU, 1 * MS + 300 * US);
	assert_cat(&r->gaps[0], GT_CAT_CUDA, 500 * US);
	assert_int_equal(r->devices[0].busy_ns, 18 * MS);
	assert_int_equal(r->devices[0].span_ns, 38 * MS);
	an_result__free(r);
}

static void test_gap_preempted_vs_blocked(void **state)
{
	struct synth s;
	struct an_result *r;

	synth_open(&s);
	base_gap(&s, T0 + 30 * MS);
	/* Preempted for 5 ms: all scheduler, whatever the syscall fields say. */
	ev_off(&s, 10, T0 + 11 * MS, 0, T0 + 16 * MS, GT_OFF_PREEMPTED, -1, 0, 0, 0, -1);
	/* Blocked in fdatasync 8 ms, then 3 ms on the run queue. */
	ev_off(&s, 10, T0 + 17 * MS, T0 + 25 * MS, T0 + 28 * MS, 0, GT_NR_fdatasync, 0, 0, 0, -1);
	r = synth_run(&s, NULL);
	assert_int_equal(r->ngaps, 1);
	assert_cat(&r->gaps[0], GT_CAT_SCHED, 5 * MS + 3 * MS);
	assert_cat(&r->gaps[0], GT_CAT_IO, 8 * MS);
	assert_cat(&r->gaps[0], GT_CAT_CPU, 1 * MS + 1 * MS + 2 * MS);
	assert_cat(&r->gaps[0], GT_CAT_CUDA, 0);
	an_result__free(r);
}

static void test_gap_lock_by_futex_value(void **state)
{
	struct synth s;
	struct an_result *r;

	synth_open(&s);
	base_gap(&s, T0 + 30 * MS);
	synth_thread(&s, 11, "lock-holder");
	stack(&s, 9, 0x400900, "holder_main", "/usr/bin/app");
	ev_off(&s, 11, T0 + 9 * MS, T0 + 22 * MS, T0 + 22 * MS, 0, GT_NR_clock_nanosleep, 0, 0, 0,
	       9);
	/* FUTEX_WAIT_PRIVATE (128) on the contended value 2: a mutex. */
	ev_off(&s, 10, T0 + 10 * MS, T0 + 28 * MS, T0 + 29 * MS, 0, GT_NR_futex, 128, 2, 11, -1);
	r = synth_run(&s, NULL);
	assert_cat(&r->gaps[0], GT_CAT_LOCK, 18 * MS);
	assert_cat(&r->gaps[0], GT_CAT_SCHED, 1 * MS);
	assert_cat(&r->gaps[0], GT_CAT_CPU, 1 * MS);
	assert_int_equal(r->gaps[0].nholders, 1);
	assert_int_equal(r->gaps[0].holders[0].tid, 11);
	assert_int_equal(r->gaps[0].holders[0].wait_ns, 18 * MS);
	/* Meanwhile the holder slept 12 ms in holder_main, then ran 6 ms. */
	assert_int_equal(r->gaps[0].holders[0].by_cat[GT_CAT_SLEEP], 12 * MS);
	assert_int_equal(r->gaps[0].holders[0].by_cat[GT_CAT_CPU], 6 * MS);
	assert_int_equal(r->gaps[0].holders[0].ustack, 9);
	assert_int_equal(r->gaps[0].holders[0].stack_ns, 12 * MS);
	an_result__free(r);
}

static void test_gap_lock_by_stack(void **state)
{
	struct synth s;
	struct an_result *r;

	synth_open(&s);
	base_gap(&s, T0 + 30 * MS);
	synth_thread(&s, 11, "holder");
	/* The value is not 2 but the frame is glibc's lock slow path. */
	stack(&s, 7, 0x7f0000001000, "__lll_lock_wait", "/lib/libc.so.6");
	ev_off(&s, 10, T0 + 10 * MS, T0 + 30 * MS, T0 + 30 * MS, 0, GT_NR_futex, 128, 7, 11, 7);
	r = synth_run(&s, NULL);
	assert_cat(&r->gaps[0], GT_CAT_LOCK, 20 * MS);
	an_result__free(r);
}

static void test_gap_handoff_follows_waker(void **state)
{
	struct synth s;
	struct an_result *r;

	synth_open(&s);
	base_gap(&s, T0 + 30 * MS);
	synth_thread(&s, 12, "synth-0");
	/* Worker waits on a condvar (value 5, condvar frame) for the producer. */
	stack(&s, 3, 0x7f0000002000, "pthread_cond_wait", "/lib/libc.so.6");
	stack(&s, 4, 0x7f0000003000, "malloc_trim", "/lib/libc.so.6");
	ev_off(&s, 10, T0 + 10 * MS, T0 + 29 * MS, T0 + 29 * MS, 0, GT_NR_futex, 128, 5, 12, 3);
	/* The producer: blocked on a lock 4 ms (held by 13), then on CPU in the allocator. */
	synth_thread(&s, 13, "other");
	ev_off(&s, 12, T0 + 9 * MS, T0 + 14 * MS, T0 + 15 * MS, 0, GT_NR_futex, 128, 2, 13, -1);
	for (int i = 16; i <= 29; i++)
		synth_sample_f(&s, 12, T0 + (uint64_t)i * MS, -1, 0, 4);
	r = synth_run(&s, NULL);
	/* [10,14) lock, [14,15) run queue, [15,29) allocator (sampled), [29,30) cpu */
	assert_cat(&r->gaps[0], GT_CAT_LOCK, 4 * MS);
	assert_cat(&r->gaps[0], GT_CAT_SCHED, 1 * MS);
	assert_cat(&r->gaps[0], GT_CAT_ALLOC, 14 * MS);
	assert_cat(&r->gaps[0], GT_CAT_CPU, 1 * MS);
	assert_cat(&r->gaps[0], GT_CAT_WAIT, 0);
	assert_int_equal(r->gaps[0].nchain, 2);
	assert_int_equal(r->gaps[0].chain[0].tid, 10);
	assert_int_equal(r->gaps[0].chain[1].tid, 12);
	assert_int_equal(r->gaps[0].chain[1].waker_of, 10);
	assert_int_equal(r->gaps[0].chain[1].by_cat[GT_CAT_ALLOC], 14 * MS);
	an_result__free(r);
}

static void test_gap_handoff_unfollowable_is_wait(void **state)
{
	struct synth s;
	struct an_result *r;

	synth_open(&s);
	base_gap(&s, T0 + 30 * MS);
	/* epoll woken by an interrupt: nothing to follow. */
	ev_off(&s, 10, T0 + 10 * MS, T0 + 30 * MS, T0 + 30 * MS, GT_OFF_WAKER_IRQ, GT_NR_epoll_wait,
	       0, 0, 0, -1);
	r = synth_run(&s, NULL);
	assert_cat(&r->gaps[0], GT_CAT_WAIT, 20 * MS);
	assert_int_equal(r->gaps[0].nchain, 1);
	an_result__free(r);
}

/* A hand-off from a process gaptrace does not trace: wait, and the hop names the waker. */
static void test_gap_untraced_waker_named(void **state)
{
	struct synth s;
	struct an_result *r;

	synth_open(&s);
	base_gap(&s, T0 + 30 * MS);
	synth_peer(&s, 539, 540, "pt_data_worker", T0 + 5 * MS);
	synth_off_w(&s, 10, T0 + 10 * MS, T0 + 30 * MS, T0 + 30 * MS, 0, GT_NR_epoll_wait, 0, 0,
		    540, GT_NR_write, -1, -1);
	r = synth_run(&s, NULL);
	assert_cat(&r->gaps[0], GT_CAT_WAIT, 20 * MS);
	assert_int_equal(r->gaps[0].nchain, 1);
	assert_int_equal(r->gaps[0].chain[0].untraced_pid, 539);
	assert_int_equal(r->gaps[0].chain[0].untraced_tid, 540);
	assert_int_equal(r->gaps[0].chain[0].untraced_ns, 20 * MS);
	assert_string_equal(r->gaps[0].chain[0].untraced_comm, "pt_data_worker");
	an_result__free(r);
}

static void test_gap_waker_must_be_a_real_hand_off(void **state)
{
	struct synth s;
	struct an_result *r;
	struct gt_offcpu o = {};

	synth_open(&s);
	base_gap(&s, T0 + 30 * MS);
	synth_thread(&s, 12, "other");
	/* fdatasync "woken" by a thread of ours (an I/O interrupt landed on it): io. */
	ev_off(&s, 10, T0 + 10 * MS, T0 + 20 * MS, T0 + 20 * MS, 0, GT_NR_fdatasync, 0, 0, 12, -1);
	/* A condvar wait whose waker was caught in read(): an interrupt, not followed. */
	synth_hdr(&o.hdr, GT_REC_OFFCPU, sizeof(o), T0 + 30 * MS);
	o.pid = PID;
	o.tid = 10;
	o.off_ns = T0 + 20 * MS;
	o.wake_ns = o.on_ns = T0 + 30 * MS;
	o.state = 1;
	o.waker_tid = 12;
	o.waker_syscall = GT_NR_read;
	o.syscall_nr = GT_NR_futex;
	o.args[1] = 128;
	o.args[2] = 5;
	o.ustack_id = o.kstack_id = -1;
	assert_int_equal(capture_writer__event(s.w, &o, sizeof(o)), 0);
	synth_sample_f(&s, 12, T0 + 25 * MS, -1, 0, -1);
	r = synth_run(&s, NULL);
	assert_cat(&r->gaps[0], GT_CAT_IO, 10 * MS);
	assert_cat(&r->gaps[0], GT_CAT_WAIT, 10 * MS);
	assert_int_equal(r->gaps[0].nchain, 1);
	an_result__free(r);
}

/* A blocked interval with every syscall argument: futex word, op, value, timeout. */
static void ev_wait(struct synth *s, uint32_t pid, uint32_t tid, uint64_t off, uint64_t wake,
		    uint32_t flags, int32_t sys, const uint64_t args[4], uint32_t waker,
		    int32_t waker_sys)
{
	struct gt_offcpu o = {};

	synth_hdr(&o.hdr, GT_REC_OFFCPU, sizeof(o), wake);
	o.pid = pid;
	o.tid = tid;
	o.off_ns = off;
	o.wake_ns = o.on_ns = wake;
	o.state = 1;
	o.flags = flags;
	o.waker_pid = waker ? pid : 0;
	o.waker_tid = waker;
	o.waker_syscall = waker_sys;
	o.syscall_nr = sys;
	memcpy(o.args, args, sizeof(o.args));
	o.ustack_id = o.kstack_id = -1;
	assert_int_equal(capture_writer__event(s->w, &o, sizeof(o)), 0);
}

/* An epoll_wait of thread 10 whose wakeup and switch-in were not traced. */
static void ev_wait_missed(struct synth *s, uint64_t off, uint64_t on_est, const uint64_t args[4])
{
	struct gt_offcpu o = {};

	synth_hdr(&o.hdr, GT_REC_OFFCPU, sizeof(o), on_est);
	o.pid = PID;
	o.tid = 10;
	o.off_ns = off;
	o.on_ns = on_est;
	o.state = 1;
	o.flags = GT_OFF_SWITCHIN_EST;
	o.syscall_nr = GT_NR_epoll_wait;
	o.waker_syscall = -1;
	memcpy(o.args, args, sizeof(o.args));
	o.ustack_id = o.kstack_id = -1;
	assert_int_equal(capture_writer__event(s->w, &o, sizeof(o)), 0);
}

#define FUTEX_WAIT_PRIV	       128
#define FUTEX_WAIT_BITSET_PRIV (9 | 128)
#define TIMEOUT_PTR	       0x7ffd1000ULL /* a struct timespec on the waiter's stack */

/* #13: an event loop's timer (epoll_wait's timeout, 4th argument) running out is sleep. */
static void test_gap_epoll_timeout_is_sleep(void **state)
{
	struct synth s;
	struct an_result *r;

	synth_open(&s);
	base_gap(&s, T0 + 30 * MS);
	/* epoll_wait(ep, ev, 64, 15): 15 ms later a timer interrupt wakes it. */
	ev_wait(&s, PID, 10, T0 + 11 * MS, T0 + 26 * MS, GT_OFF_WAKER_IRQ, GT_NR_epoll_wait,
		(uint64_t[4]){3, 0x1000, 64, 15}, 0, -1);
	r = synth_run(&s, NULL);
	assert_cat(&r->gaps[0], GT_CAT_SLEEP, 15 * MS);
	assert_cat(&r->gaps[0], GT_CAT_WAIT, 0);
	an_result__free(r);

	/* The same wait cut short by an interrupt (a packet): not its timer, a wait. */
	synth_open(&s);
	base_gap(&s, T0 + 30 * MS);
	ev_wait(&s, PID, 10, T0 + 11 * MS, T0 + 26 * MS, GT_OFF_WAKER_IRQ, GT_NR_epoll_wait,
		(uint64_t[4]){3, 0x1000, 64, 200}, 0, -1);
	r = synth_run(&s, NULL);
	assert_cat(&r->gaps[0], GT_CAT_WAIT, 15 * MS);
	assert_cat(&r->gaps[0], GT_CAT_SLEEP, 0);
	an_result__free(r);

	/*
	 * Wakeup and switch-in both untraced (a Firecracker guest, seen under
	 * tokio_prover): no wake time, the switch-in estimated 16 ms on.
	 */
	synth_open(&s);
	base_gap(&s, T0 + 30 * MS);
	ev_wait_missed(&s, T0 + 11 * MS, T0 + 27 * MS, (uint64_t[4]){3, 0x1000, 64, 16});
	r = synth_run(&s, NULL);
	assert_cat(&r->gaps[0], GT_CAT_SLEEP, 16 * MS);
	assert_cat(&r->gaps[0], GT_CAT_WAIT, 0);
	an_result__free(r);

	/* poll(fds, 1, 12) keeps its timeout in the 3rd argument. */
	synth_open(&s);
	base_gap(&s, T0 + 30 * MS);
	ev_wait(&s, PID, 10, T0 + 11 * MS, T0 + 23 * MS, GT_OFF_WAKER_IRQ, GT_NR_poll,
		(uint64_t[4]){0x2000, 1, 12, 0}, 0, -1);
	r = synth_run(&s, NULL);
	assert_cat(&r->gaps[0], GT_CAT_SLEEP, 12 * MS);
	an_result__free(r);
}

/* #13: a timed wait that another thread ends first stays a hand-off, followed to it. */
static void test_gap_epoll_woken_before_timeout_is_handoff(void **state)
{
	struct synth s;
	struct an_result *r;

	synth_open(&s);
	base_gap(&s, T0 + 30 * MS);
	synth_thread(&s, 12, "producer");
	/* Timeout 100 ms, but thread 12 writes to the eventfd after 15 ms. */
	ev_wait(&s, PID, 10, T0 + 11 * MS, T0 + 26 * MS, 0, GT_NR_epoll_wait,
		(uint64_t[4]){3, 0x1000, 64, 100}, 12, GT_NR_write);
	/* Meanwhile the producer slept 6 ms, then ran. */
	synth_off(&s, 12, T0 + 10 * MS, T0 + 17 * MS, T0 + 17 * MS, 0, GT_NR_clock_nanosleep, 0, 0,
		  0, -1);
	r = synth_run(&s, NULL);
	assert_cat(&r->gaps[0], GT_CAT_WAIT, 0);
	assert_cat(&r->gaps[0], GT_CAT_SLEEP, 6 * MS);
	/* [10, 11) and [26, 30) the worker's own, [17, 26) the producer's */
	assert_cat(&r->gaps[0], GT_CAT_CPU, 5 * MS + 9 * MS);
	assert_int_equal(r->gaps[0].nchain, 2);
	assert_int_equal(r->gaps[0].chain[1].tid, 12);
	an_result__free(r);
}

/* #13: futex, ppoll, select: timeouts by pointer run out when no task wakes the wait. */
static void test_gap_timeout_by_pointer_is_sleep(void **state)
{
	struct synth s;
	struct an_result *r;

	synth_open(&s);
	base_gap(&s, T0 + 30 * MS);
	synth_thread(&s, 12, "notifier");
	/* Condvar wait_timeout (a counter at 7): woken by the timer, then by a notify. */
	ev_wait(&s, PID, 10, T0 + 11 * MS, T0 + 19 * MS, GT_OFF_WAKER_IRQ, GT_NR_futex,
		(uint64_t[4]){0x5000, FUTEX_WAIT_BITSET_PRIV, 7, TIMEOUT_PTR}, 0, -1);
	ev_wait(&s, PID, 10, T0 + 19 * MS, T0 + 23 * MS, 0, GT_NR_futex,
		(uint64_t[4]){0x5000, FUTEX_WAIT_BITSET_PRIV, 8, TIMEOUT_PTR}, 12, GT_NR_futex);
	/* ppoll and select with a timeout, each ended by the timer. */
	ev_wait(&s, PID, 10, T0 + 23 * MS, T0 + 25 * MS, GT_OFF_WAKER_IRQ, GT_NR_ppoll,
		(uint64_t[4]){0x2000, 1, TIMEOUT_PTR, 0}, 0, -1);
	ev_wait(&s, PID, 10, T0 + 25 * MS, T0 + 27 * MS, GT_OFF_WAKER_IRQ, GT_NR_select,
		(uint64_t[4]){4, 0x3000, 0, TIMEOUT_PTR}, 0, -1);
	/* A futex wait without a timeout, "woken" by an interrupt: a wait, not a sleep. */
	ev_wait(&s, PID, 10, T0 + 27 * MS, T0 + 29 * MS, GT_OFF_WAKER_IRQ, GT_NR_futex,
		(uint64_t[4]){0x5000, FUTEX_WAIT_BITSET_PRIV, 9, 0}, 0, -1);
	r = synth_run(&s, NULL);
	assert_cat(&r->gaps[0], GT_CAT_SLEEP, 8 * MS + 2 * MS + 2 * MS);
	/* the notifier's own time while the worker waited for it */
	assert_cat(&r->gaps[0], GT_CAT_CPU, 1 * MS + 4 * MS + 1 * MS);
	assert_cat(&r->gaps[0], GT_CAT_WAIT, 2 * MS);
	an_result__free(r);
}

/*
 * #13: a futex word that counts (Rust's Condvar, a sequence) may be waited on
 * at 2; the other values it takes over the capture say it is no lock word.
 */
static void test_gap_futex_counter_at_2_is_handoff(void **state)
{
	struct synth s;
	struct an_result *r;

	synth_open(&s);
	base_gap(&s, T0 + 30 * MS);
	synth_thread(&s, 12, "notifier");
	/* Before the gap the worker waited on the same word at 1, after it at 3. */
	ev_wait(&s, PID, 10, T0 + 3 * MS, T0 + 4 * MS, 0, GT_NR_futex,
		(uint64_t[4]){0x6000, FUTEX_WAIT_BITSET_PRIV, 1, 0}, 12, GT_NR_futex);
	ev_wait(&s, PID, 10, T0 + 41 * MS, T0 + 42 * MS, 0, GT_NR_futex,
		(uint64_t[4]){0x6000, FUTEX_WAIT_BITSET_PRIV, 3, 0}, 12, GT_NR_futex);
	/* In the gap at 2, woken by the notifier 16 ms later; it slept 10 of them. */
	ev_wait(&s, PID, 10, T0 + 11 * MS, T0 + 27 * MS, 0, GT_NR_futex,
		(uint64_t[4]){0x6000, FUTEX_WAIT_BITSET_PRIV, 2, 0}, 12, GT_NR_futex);
	synth_off(&s, 12, T0 + 10 * MS, T0 + 21 * MS, T0 + 21 * MS, 0, GT_NR_clock_nanosleep, 0, 0,
		  0, -1);
	r = synth_run(&s, NULL);
	assert_cat(&r->gaps[0], GT_CAT_LOCK, 0);
	assert_cat(&r->gaps[0], GT_CAT_SLEEP, 10 * MS);
	assert_cat(&r->gaps[0], GT_CAT_CPU, 1 * MS + 6 * MS + 3 * MS);
	assert_int_equal(r->gaps[0].nchain, 2);
	assert_int_equal(r->gaps[0].chain[1].tid, 12);
	assert_int_equal(r->gaps[0].nholders, 0);
	an_result__free(r);
}

/* #13: a word only ever waited on at 2 stays a lock, whatever another process's same address did. */
static void test_gap_futex_lock_word_stays_lock(void **state)
{
	struct synth s;
	struct an_result *r;

	synth_open(&s);
	base_gap(&s, T0 + 30 * MS);
	synth_thread(&s, 12, "holder");
	/* Another process (a forked worker: same layout) counts on the same address. */
	ev_wait(&s, PID + 1, 50, T0 + 3 * MS, T0 + 4 * MS, 0, GT_NR_futex,
		(uint64_t[4]){0x6000, FUTEX_WAIT_BITSET_PRIV, 5, 0}, 51, GT_NR_futex);
	ev_wait(&s, PID, 10, T0 + 3 * MS, T0 + 4 * MS, 0, GT_NR_futex,
		(uint64_t[4]){0x6000, FUTEX_WAIT_BITSET_PRIV, 2, 0}, 12, GT_NR_futex);
	/* A lock wait that timed out (pthread_mutex_timedlock) is still a lock wait. */
	ev_wait(&s, PID, 10, T0 + 11 * MS, T0 + 27 * MS, GT_OFF_WAKER_IRQ, GT_NR_futex,
		(uint64_t[4]){0x6000, FUTEX_WAIT_BITSET_PRIV, 2, TIMEOUT_PTR}, 0, -1);
	r = synth_run(&s, NULL);
	assert_cat(&r->gaps[0], GT_CAT_LOCK, 16 * MS);
	assert_cat(&r->gaps[0], GT_CAT_SLEEP, 0);
	an_result__free(r);
}

/* A capture written before gt_offcpu.args[3] (104-byte records) still reads. */
static void test_offcpu_v1_records(void **state)
{
	struct synth s;
	struct an_result *r;
	struct gt_offcpu o = {};

	synth_open(&s);
	base_gap(&s, T0 + 30 * MS);
	synth_hdr(&o.hdr, GT_REC_OFFCPU, GT_OFFCPU_V1_SIZE, T0 + 26 * MS);
	o.pid = PID;
	o.tid = 10;
	o.off_ns = T0 + 11 * MS;
	o.wake_ns = o.on_ns = T0 + 26 * MS;
	o.state = 1;
	o.flags = GT_OFF_WAKER_IRQ;
	o.syscall_nr = GT_NR_epoll_wait;
	o.waker_syscall = -1;
	o.ustack_id = o.kstack_id = -1;
	assert_int_equal(capture_writer__event(s.w, &o, GT_OFFCPU_V1_SIZE), 0);
	r = synth_run(&s, NULL);
	/* The interval is read; with no 4th argument its timeout is unknown: a wait. */
	assert_cat(&r->gaps[0], GT_CAT_WAIT, 15 * MS);
	an_result__free(r);
}

static void test_gap_allocator_offcpu_and_uprobe(void **state)
{
	struct synth s;
	struct an_result *r;

	synth_open(&s);
	base_gap(&s, T0 + 30 * MS);
	synth_probe(&s, 0, "malloc_trim", "allocator");
	/* malloc_trim on CPU 10 ms (exact from the uprobe pair), then munmap blocked 5 ms. */
	synth_call(&s, 10, 0, T0 + 11 * MS, T0 + 21 * MS);
	ev_off(&s, 10, T0 + 22 * MS, T0 + 27 * MS, T0 + 27 * MS, 0, GT_NR_munmap, 0, 0, 0, -1);
	r = synth_run(&s, NULL);
	assert_cat(&r->gaps[0], GT_CAT_ALLOC, 15 * MS);
	assert_cat(&r->gaps[0], GT_CAT_CPU, 5 * MS);
	an_result__free(r);
}

static void test_gap_samples_split_oncpu(void **state)
{
	struct synth s;
	struct an_result *r;

	synth_open(&s);
	base_gap(&s, T0 + 30 * MS);
	stack(&s, 5, 0x400100, "compute", "/usr/bin/app");
	stack(&s, 6, 0x7f0000004000, "_int_free", "/lib/libc.so.6");
	/* On CPU the whole gap; a sample stands for the time since the one before. */
	for (int i = 11; i <= 30; i++) {
		if (i <= 20)
			synth_sample_f(&s, 10, T0 + (uint64_t)i * MS, -1, 0, 5);
		else if (i <= 25)
			synth_sample_f(&s, 10, T0 + (uint64_t)i * MS, -1, 0, 6);
		else
			synth_sample_f(&s, 10, T0 + (uint64_t)i * MS, GT_NR_munmap,
				       GT_SAMPLE_KERNEL, 5);
	}
	r = synth_run(&s, NULL);
	assert_cat(&r->gaps[0], GT_CAT_CPU, 10 * MS);
	assert_cat(&r->gaps[0], GT_CAT_ALLOC, 10 * MS);
	an_result__free(r);
}

/*
 * A CPU sample unwound out of a libc without symbols for its internals
 * (issue #13): the leaf is unnamed, the allocator's entry point is the frame
 * that says allocator, whatever the allocator and however it is spelt.
 */
static void test_gap_allocator_entry_in_chain(void **state)
{
	static const char *const entries[] = {
	    "_ZnwmRKSt9nothrow_t",
	    "operator delete(void*, unsigned long)",
	    "_ZdaPvSt11align_val_t",
	    "mallocx",
	    "sdallocx",
	    "_rjem_malloc",
	    "__rg_alloc",
	    "tcmalloc::tcmalloc_internal::Sampler",
	    "__libc_pvalloc",
	    "munmap_chunk",
	};
	static const char *const app[] = {NULL, "compute_sum", "main"};
	struct synth s;
	struct an_result *r;

	synth_open(&s);
	base_gap(&s, T0 + 30 * MS);
	for (int i = 0; i < 10; i++) {
		const char *names[] = {NULL, entries[i], "main"};
		uint64_t ips[] = {0x7f0000001000 + (uint64_t)i * 16,
				  0x7f0000100000 + (uint64_t)i * 16, 0x400200};

		synth_stack_n(&s, 20 + i, false, ips, names, "/lib/libc.so.6", 3);
	}
	synth_stack_n(&s, 40, false, (const uint64_t[]){0x7f0000002000, 0x400300, 0x400200}, app,
		      "/usr/bin/app", 3);
	/* 20 samples, 1 ms each: ten through an allocator entry, ten through compute_sum. */
	for (int i = 11; i <= 30; i++)
		synth_sample(&s, 10, T0 + (uint64_t)i * MS, i <= 20 ? 20 + (i - 11) : 40);
	r = synth_run(&s, NULL);
	assert_cat(&r->gaps[0], GT_CAT_ALLOC, 10 * MS);
	assert_cat(&r->gaps[0], GT_CAT_CPU, 10 * MS);
	an_result__free(r);
}

static void test_gap_lost_data_is_unknown(void **state)
{
	struct synth s;
	struct an_result *r;

	synth_open(&s);
	base_gap(&s, T0 + 30 * MS);
	ev_off(&s, 10, T0 + 10 * MS, T0 + 30 * MS, T0 + 30 * MS, 0, GT_NR_clock_nanosleep, 0, 0, 0,
	       -1);
	ev_loss(&s, T0 + 20 * MS, T0 + 25 * MS);
	r = synth_run(&s, NULL);
	assert_cat(&r->gaps[0], GT_CAT_UNKNOWN, 5 * MS);
	assert_cat(&r->gaps[0], GT_CAT_SLEEP, 15 * MS);
	assert_true(r->gaps[0].lossy);
	an_result__free(r);
}

static void test_gap_running_without_samples_is_unknown(void **state)
{
	struct synth s;
	struct an_result *r;

	synth_open(&s);
	base_gap(&s, T0 + 30 * MS);
	/* Sampling is on (another thread has samples), yet the worker shows 20 ms
	 * "running" with a single sample: its records are missing, not its work. */
	synth_thread(&s, 11, "other");
	synth_sample_f(&s, 11, T0 + 500 * MS, -1, 0, -1);
	synth_sample_f(&s, 10, T0 + 29 * MS, -1, 0, -1);
	r = synth_run(&s, NULL);
	assert_cat(&r->gaps[0], GT_CAT_UNKNOWN, 20 * MS);
	an_result__free(r);
}

/*
 * Hypervisor steal delays the sampler's timer: a thread on CPU all along shows
 * milliseconds without samples.  The same pcount at both ends proves no switch
 * happened, so that is cpu; a pcount that moved means an untraced switch.
 */
/* The base gap with samples of the worker at ts[i] ms (from T0) carrying pcount pc[i]. */
static void sparse_pcount_case(const unsigned *ts, const uint64_t *pc, size_t n, int cat)
{
	struct synth s;
	struct an_result *r;

	synth_open(&s);
	base_gap(&s, T0 + 30 * MS);
	for (size_t i = 0; i < n; i++)
		synth_sample_pc(&s, 10, T0 + ts[i] * MS, pc[i]);
	r = synth_run(&s, NULL);
	assert_cat(&r->gaps[0], cat, 20 * MS);
	an_result__free(r);
}

static void test_gap_sparse_samples_same_pcount_is_cpu(void **state)
{
	static const unsigned ts3[] = {11, 19, 29}, ts2[] = {11, 39};

	sparse_pcount_case(ts3, (const uint64_t[]){7, 7, 7}, 3, GT_CAT_CPU);
	sparse_pcount_case(ts3, (const uint64_t[]){7, 8, 8}, 3, GT_CAT_UNKNOWN);
	/* Only one sample inside, 9 ms from the gap's end: bridged by the one after. */
	sparse_pcount_case(ts2, (const uint64_t[]){7, 7}, 2, GT_CAT_CPU);
	/* ... not when the sample after has seen a switch-in. */
	sparse_pcount_case(ts2, (const uint64_t[]){7, 9}, 2, GT_CAT_UNKNOWN);
}

static void test_gap_without_launch_is_unknown(void **state)
{
	struct synth s;
	struct an_result *r;

	synth_open(&s);
	synth_thread(&s, 10, "w");
	ev_op(&s, 0, 1, T0 + 2 * MS, T0 + 10 * MS);
	ev_op(&s, 0, 2, T0 + 30 * MS, T0 + 40 * MS);
	r = synth_run(&s, NULL);
	assert_int_equal(r->ngaps, 1);
	assert_int_equal(r->gaps[0].tid, 0);
	assert_cat(&r->gaps[0], GT_CAT_UNKNOWN, 20 * MS);
	an_result__free(r);
}

static void test_gap_launched_before_gap_is_cuda(void **state)
{
	struct synth s;
	struct an_result *r;

	synth_open(&s);
	base_gap(&s, T0 + 5 * MS);
	r = synth_run(&s, NULL);
	assert_cat(&r->gaps[0], GT_CAT_CUDA, 20 * MS);
	an_result__free(r);
}

static void test_gap_untraced_thread_is_unknown(void **state)
{
	struct synth s;
	struct an_result *r;

	synth_open(&s);
	synth_thread(&s, 10, "w");
	op(&s, 10, 1, T0 + 1 * MS, T0 + 2 * MS, T0 + 10 * MS);
	/* Thread 77 has no record at all: nothing can be said about it. */
	op(&s, 77, 2, T0 + 29 * MS, T0 + 30 * MS, T0 + 40 * MS);
	r = synth_run(&s, NULL);
	assert_int_equal(r->gaps[0].tid, 77);
	assert_cat(&r->gaps[0], GT_CAT_UNKNOWN, 19 * MS);
	assert_cat(&r->gaps[0], GT_CAT_CUDA, 1 * MS);
	an_result__free(r);
}

static void test_critical_thread_is_launcher_of_next_op(void **state)
{
	struct synth s;
	struct an_result *r;

	synth_open(&s);
	synth_thread(&s, 10, "a");
	synth_thread(&s, 20, "b");
	op(&s, 10, 1, T0 + 1 * MS, T0 + 2 * MS, T0 + 10 * MS);
	/* Thread 10 launches later work; thread 20 launches the op that ends the gap. */
	op(&s, 20, 2, T0 + 20 * MS, T0 + 30 * MS, T0 + 40 * MS);
	op(&s, 10, 3, T0 + 25 * MS, T0 + 40 * MS, T0 + 50 * MS);
	ev_off(&s, 20, T0 + 10 * MS, T0 + 20 * MS, T0 + 20 * MS, 0, GT_NR_clock_nanosleep, 0, 0, 0,
	       -1);
	ev_off(&s, 10, T0 + 10 * MS, T0 + 25 * MS, T0 + 25 * MS, 0, GT_NR_read, 0, 0, 0, -1);
	r = synth_run(&s, NULL);
	assert_int_equal(r->ngaps, 1);
	assert_int_equal(r->gaps[0].tid, 20);
	assert_int_equal(r->gaps[0].launch_ns, T0 + 20 * MS);
	assert_cat(&r->gaps[0], GT_CAT_SLEEP, 10 * MS);
	assert_cat(&r->gaps[0], GT_CAT_CUDA, 10 * MS);
	assert_cat(&r->gaps[0], GT_CAT_IO, 0);
	an_result__free(r);
}

static void test_units_inter_and_intra(void **state)
{
	struct synth s;
	struct an_result *r;

	synth_open(&s);
	synth_thread(&s, 10, "w");
	synth_unit(&s, 10, 7, T0 + 1 * MS, true);
	op(&s, 10, 1, T0 + 1 * MS, T0 + 2 * MS, T0 + 10 * MS);
	op(&s, 10, 2, T0 + 14 * MS, T0 + 15 * MS, T0 + 20 * MS); /* intra: 5 ms */
	synth_unit(&s, 10, 7, T0 + 21 * MS, false);
	synth_unit(&s, 10, 8, T0 + 29 * MS, true);
	op(&s, 10, 3, T0 + 29 * MS, T0 + 30 * MS, T0 + 35 * MS); /* inter: 10 ms */
	synth_unit(&s, 10, 8, T0 + 36 * MS, false);
	op(&s, 10, 4, T0 + 36500 * US, T0 + 37 * MS, T0 + 38 * MS); /* outside units: unscoped */
	r = synth_run(&s, NULL);
	assert_int_equal(r->ngaps, 3);
	assert_int_equal(r->gaps[0].kind, GT_GAP_INTRA);
	assert_int_equal(r->gaps[0].unit_before, 7);
	assert_int_equal(r->gaps[0].unit_after, 7);
	assert_int_equal(r->gaps[1].kind, GT_GAP_INTER);
	assert_int_equal(r->gaps[1].unit_before, 7);
	assert_int_equal(r->gaps[1].unit_after, 8);
	assert_int_equal(r->gaps[2].kind, GT_GAP_UNSCOPED);
	assert_int_equal(r->gaps_kind[GT_GAP_INTER], 1);
	assert_string_equal(r->unit_source, "usdt");
	an_result__free(r);
}

/* A host-side GPU record of thread tid (kind 5: API call, 6: NVTX range). */
static void ev_host(struct synth *s, uint16_t kind, uint32_t tid, uint32_t name_id, uint64_t op_id,
		    uint64_t start, uint64_t end)
{
	struct gt_gpu_op g = {};

	synth_hdr(&g.hdr, GT_REC_GPU_OP, sizeof(g), end);
	g.pid = PID;
	g.tid = tid;
	g.rec.start_ns = start;
	g.rec.end_ns = end;
	g.rec.op_id = op_id;
	g.rec.name_id = name_id;
	g.rec.tid = tid;
	g.rec.kind = kind;
	assert_int_equal(capture_writer__event(s->w, &g, sizeof(g)), 0);
}

static void ev_range(struct synth *s, uint32_t tid, uint32_t name_id, uint64_t start, uint64_t end)
{
	ev_host(s, 6, tid, name_id, 0, start, end);
}

static void ev_name(struct synth *s, uint32_t id, const char *name)
{
	struct gt_name n = {};

	synth_hdr(&n.hdr, GT_REC_NAME,
		  (uint16_t)(offsetof(struct gt_name, name) + strlen(name) + 1), T0);
	n.pid = PID;
	n.name_id = id;
	n.len = (uint32_t)strlen(name);
	strcpy(n.name, name);
	assert_int_equal(capture_writer__event(s->w, &n, n.hdr.size), 0);
}

/* A CUPTI API record: tid in API call name_id from start to end. */
static void ev_api(struct synth *s, uint32_t tid, uint32_t name_id, uint64_t start, uint64_t end)
{
	ev_host(s, 5, tid, name_id, 1000 + name_id, start, end);
}

/* Pinned and device allocations through the CUDA API are allocator time (#13). */
static void test_gap_cuda_alloc_api_is_allocator(void **state)
{
	struct synth s;
	struct an_result *r;

	synth_open(&s);
	base_gap(&s, T0 + 30 * MS);
	ev_name(&s, 1, "cudaHostAlloc_v3020");
	ev_name(&s, 2, "cudaStreamSynchronize_v3020");
	ev_name(&s, 3, "cudaFreeHost_v3020");
	ev_api(&s, 10, 1, T0 + 11 * MS, T0 + 19 * MS);
	ev_api(&s, 10, 2, T0 + 20 * MS, T0 + 25 * MS);
	ev_api(&s, 10, 3, T0 + 26 * MS, T0 + 28 * MS);
	r = synth_run(&s, NULL);
	assert_int_equal(r->ngaps, 1);
	assert_cat(&r->gaps[0], GT_CAT_ALLOC, 10 * MS);
	assert_cat(&r->gaps[0], GT_CAT_CUDA, 5 * MS);
	assert_cat(&r->gaps[0], GT_CAT_CPU, 5 * MS);
	an_result__free(r);
}

static void test_units_from_nvtx_ranges(void **state)
{
	struct synth s;
	struct an_result *r;
	struct an_opts o;

	synth_open(&s);
	synth_thread(&s, 10, "w");
	ev_name(&s, 1, "partition");
	ev_name(&s, 2, "msm");
	ev_range(&s, 10, 1, T0, T0 + 21 * MS);
	ev_range(&s, 10, 2, T0 + 1 * MS, T0 + 5 * MS);
	ev_range(&s, 10, 1, T0 + 29 * MS, T0 + 50 * MS);
	op(&s, 10, 1, T0 + 1 * MS, T0 + 2 * MS, T0 + 10 * MS);
	op(&s, 10, 2, T0 + 14 * MS, T0 + 15 * MS, T0 + 20 * MS); /* intra */
	op(&s, 10, 3, T0 + 29 * MS, T0 + 30 * MS, T0 + 35 * MS); /* inter */
	an_opts__defaults(&o);
	o.units = GT_UNITS_NVTX;
	o.unit_glob = "part*";
	r = synth_run(&s, &o);
	assert_int_equal(r->ngaps, 2);
	assert_int_equal(r->gaps[0].kind, GT_GAP_INTRA);
	assert_int_equal(r->gaps[1].kind, GT_GAP_INTER);
	assert_int_equal(r->units, 2);
	assert_string_equal(r->unit_source, "nvtx:part*");
	an_result__free(r);
}

/* The result carries the options it was computed with: its printers read them there. */
static void test_result_carries_opts(void **state)
{
	struct synth s;
	struct an_result *r;
	struct an_opts o;

	(void)state;
	synth_open(&s);
	synth_thread(&s, 10, "w");
	op(&s, 10, 1, T0 + 1 * MS, T0 + 2 * MS, T0 + 10 * MS);
	op(&s, 10, 2, T0 + 20 * MS, T0 + 21 * MS, T0 + 30 * MS);
	an_opts__defaults(&o);
	o.min_gap_ns = 7 * MS;
	o.max_depth = 2;
	o.burst_gap_ns = 3 * MS;
	r = synth_run(&s, &o);
	assert_int_equal(r->opts.min_gap_ns, 7 * MS);
	assert_int_equal(r->opts.max_depth, 2);
	assert_int_equal(r->opts.burst_gap_ns, 3 * MS);
	/* 10 ms idle between the ops: a gap at 7 ms. */
	assert_int_equal(r->ngaps, 1);
	an_result__free(r);
}

static void test_bursts_without_units(void **state)
{
	struct synth s;
	struct an_result *r;

	synth_open(&s);
	synth_thread(&s, 10, "w");
	op(&s, 10, 1, T0 + 1 * MS, T0 + 2 * MS, T0 + 10 * MS);
	op(&s, 10, 2, T0 + 12 * MS, T0 + 13 * MS, T0 + 20 * MS);    /* 3 ms: intra-burst */
	op(&s, 10, 3, T0 + 40 * MS, T0 + 41 * MS, T0 + 50 * MS);    /* 21 ms: new burst */
	op(&s, 10, 4, T0 + 50 * MS, T0 + 50500 * US, T0 + 55 * MS); /* 0.5 ms: not a gap */
	r = synth_run(&s, NULL);
	assert_int_equal(r->ngaps, 2);
	assert_int_equal(r->gaps[0].kind, GT_GAP_INTRA);
	assert_int_equal(r->gaps[1].kind, GT_GAP_INTER);
	assert_int_equal(r->units, 2);
	an_result__free(r);
}

static void test_min_gap_and_overlap(void **state)
{
	struct synth s;
	struct an_result *r;
	struct an_opts o;

	synth_open(&s);
	synth_thread(&s, 10, "w");
	/* Overlapping ops merge into one busy interval; a 2 ms hole is a gap at 1 ms, not at 5. */
	op(&s, 10, 1, T0, T0 + 1 * MS, T0 + 10 * MS);
	op(&s, 10, 2, T0, T0 + 5 * MS, T0 + 12 * MS);
	op(&s, 10, 3, T0 + 13 * MS, T0 + 14 * MS, T0 + 20 * MS);
	an_opts__defaults(&o);
	o.min_gap_ns = 5 * MS;
	r = synth_run(&s, &o);
	assert_int_equal(r->ngaps, 0);
	assert_int_equal(r->devices[0].busy_ns, 17 * MS);
	an_result__free(r);

	synth_open(&s);
	synth_thread(&s, 10, "w");
	op(&s, 10, 1, T0, T0 + 1 * MS, T0 + 10 * MS);
	op(&s, 10, 2, T0, T0 + 5 * MS, T0 + 12 * MS);
	op(&s, 10, 3, T0 + 13 * MS, T0 + 14 * MS, T0 + 20 * MS);
	r = synth_run(&s, NULL);
	assert_int_equal(r->ngaps, 1);
	assert_int_equal(r->gaps[0].start_ns, T0 + 12 * MS);
	assert_int_equal(r->gaps[0].end_ns, T0 + 14 * MS);
	an_result__free(r);
}

static void test_partial_interval_at_start(void **state)
{
	struct synth s;
	struct an_result *r;

	synth_open(&s);
	base_gap(&s, T0 + 30 * MS);
	/* Off-CPU since before tracing began (off_ns 0), in clock_nanosleep. */
	ev_off(&s, 10, 0, 0, T0 + 29 * MS, GT_OFF_PARTIAL_START, GT_NR_clock_nanosleep, 0, 0, 0,
	       -1);
	r = synth_run(&s, NULL);
	assert_cat(&r->gaps[0], GT_CAT_SLEEP, 19 * MS);
	assert_cat(&r->gaps[0], GT_CAT_CPU, 1 * MS);
	an_result__free(r);
}

static void test_host_view_from_libcuda_uprobes(void **state)
{
	struct synth s;
	struct an_result *r;

	synth_open(&s);
	synth_thread(&s, 10, "w");
	synth_probe(&s, 0, "cuLaunchKernel", "launch");
	synth_probe(&s, 1, "cuStreamSynchronize", "sync");
	/* No GPU records: busy from the first launch to the synchronize return. */
	synth_call(&s, 10, 0, T0 + 1 * MS, T0 + 1010 * US);
	synth_call(&s, 10, 0, T0 + 2 * MS, T0 + 2010 * US);
	synth_call(&s, 10, 1, T0 + 3 * MS, T0 + 10 * MS);
	ev_off(&s, 10, T0 + 11 * MS, T0 + 19 * MS, T0 + 19 * MS, 0, GT_NR_clock_nanosleep, 0, 0, 0,
	       -1);
	synth_call(&s, 10, 0, T0 + 20 * MS, T0 + 20010 * US);
	synth_call(&s, 10, 1, T0 + 21 * MS, T0 + 30 * MS);
	r = synth_run(&s, NULL);
	assert_int_equal(r->ndevices, 1);
	assert_int_equal(r->ngaps, 1);
	assert_int_equal(r->gaps[0].start_ns, T0 + 10 * MS);
	assert_int_equal(r->gaps[0].end_ns, T0 + 20 * MS);
	assert_int_equal(r->gaps[0].tid, 10);
	assert_cat(&r->gaps[0], GT_CAT_SLEEP, 8 * MS);
	assert_cat(&r->gaps[0], GT_CAT_CPU, 2 * MS);
	assert_true(r->nwarnings > 0);
	/* Host-side ops start at their launch by construction: no clock to check. */
	assert_true(r->host_view);
	assert_int_equal(r->clock.pairs, 0);
	an_result__free(r);
}

/*
 * The CUPTI library stepped aside while recording: the recorder added the
 * launch probes in a second PROBES block and wrote the new source in END.
 */
static void test_fallback_after_cupti_stepped_aside(void **state)
{
	struct capture_buf late = {};
	struct synth s;
	struct an_result *r;

	synth_open(&s);
	synth_thread(&s, 10, "w");
	synth_probe(&s, 0, "cuStreamSynchronize", "sync");
	synth_call(&s, 10, 0, T0 + 1 * MS, T0 + 2 * MS); /* before the fallback: no launch seen */
	capture_buf__probe(&late, 1, "cuLaunchKernel", "libcuda.so", "launch");
	assert_int_equal(capture_writer__block(s.w, GT_BLK_PROBES, late.data, late.len), 0);
	capture_buf__free(&late);
	synth_call(&s, 10, 1, T0 + 5 * MS, T0 + 5010 * US);
	synth_call(&s, 10, 0, T0 + 6 * MS, T0 + 12 * MS);
	ev_off(&s, 10, T0 + 12 * MS, T0 + 20 * MS, T0 + 20 * MS, 0, GT_NR_clock_nanosleep, 0, 0, 0,
	       -1);
	synth_call(&s, 10, 1, T0 + 20 * MS, T0 + 20010 * US);
	synth_call(&s, 10, 0, T0 + 21 * MS, T0 + 30 * MS);
	s.end_gpu_source = "uprobe (host-side view; CUPTI library stepped aside: why)";
	r = synth_run(&s, NULL);
	assert_string_equal(r->gpu_source, s.end_gpu_source);
	assert_true(r->host_view);
	assert_int_equal(r->ndevices, 1);
	assert_int_equal(r->devices[0].ops, 2);
	assert_int_equal(r->ngaps, 1);
	assert_int_equal(r->gaps[0].start_ns, T0 + 12 * MS);
	assert_int_equal(r->gaps[0].end_ns, T0 + 20 * MS);
	assert_cat(&r->gaps[0], GT_CAT_SLEEP, 8 * MS);
	an_result__free(r);
}

/*
 * GPU records until the library stepped aside at 30 ms, libcuda uprobes after:
 * gaps in both parts, the clock check over the GPU records only.
 */
static void test_host_view_after_gpu_records(void **state)
{
	struct synth s;
	struct an_result *r;

	synth_open(&s);
	synth_thread(&s, 10, "w");
	synth_probe(&s, 0, "cuStreamSynchronize", "sync");
	synth_probe(&s, 1, "cuLaunchKernel", "launch");
	op(&s, 10, 1, T0 + 1 * MS, T0 + 1 * MS + 10 * US, T0 + 10 * MS);
	synth_call(&s, 10, 0, T0 + 2 * MS, T0 + 10 * MS); /* a sync while CUPTI works: no op */
	op(&s, 10, 2, T0 + 20 * MS, T0 + 20 * MS + 10 * US, T0 + 30 * MS);
	/* Stepped aside: launches are probed from here on. */
	synth_call(&s, 10, 1, T0 + 40 * MS, T0 + 40010 * US);
	synth_call(&s, 10, 0, T0 + 41 * MS, T0 + 50 * MS);
	ev_off(&s, 10, T0 + 50 * MS, T0 + 58 * MS, T0 + 58 * MS, 0, GT_NR_clock_nanosleep, 0, 0, 0,
	       -1);
	synth_call(&s, 10, 1, T0 + 60 * MS, T0 + 60010 * US);
	synth_call(&s, 10, 0, T0 + 61 * MS, T0 + 70 * MS);
	s.end_gpu_source = "uprobe (host-side view; CUPTI library stepped aside: why)";
	r = synth_run(&s, NULL);
	assert_true(r->host_view);
	assert_int_equal(r->devices[0].ops, 4);
	assert_int_equal(r->clock.pairs, 2);
	assert_int_equal(r->clock.violations, 0);
	/* [10, 20) and [30, 40) from GPU records, [50, 60) from the host-side view. */
	assert_int_equal(r->ngaps, 3);
	assert_int_equal(r->gaps[1].start_ns, T0 + 30 * MS);
	assert_int_equal(r->gaps[1].end_ns, T0 + 40 * MS);
	assert_int_equal(r->gaps[2].start_ns, T0 + 50 * MS);
	assert_int_equal(r->gaps[2].end_ns, T0 + 60 * MS);
	assert_cat(&r->gaps[2], GT_CAT_SLEEP, 8 * MS);
	bool told = false;
	for (size_t i = 0; i < r->nwarnings; i++)
		told |=
		    strstr(r->warnings[i], "GPU records stop 30.00 ms into the capture") != NULL;
	assert_true(told);
	an_result__free(r);
}

static void test_two_devices(void **state)
{
	struct synth s;
	struct an_result *r;

	synth_open(&s);
	synth_thread(&s, 10, "w0");
	synth_thread(&s, 11, "w1");
	op(&s, 10, 1, T0, T0 + 1 * MS, T0 + 10 * MS);
	op(&s, 10, 2, T0 + 20 * MS, T0 + 20 * MS, T0 + 30 * MS);
	ev_launch(&s, 11, 3, T0 + 1 * MS);
	ev_op(&s, 1, 3, T0 + 1 * MS, T0 + 5 * MS);
	ev_launch(&s, 11, 4, T0 + 15 * MS);
	ev_op(&s, 1, 4, T0 + 15 * MS, T0 + 25 * MS);
	r = synth_run(&s, NULL);
	assert_int_equal(r->ndevices, 2);
	assert_int_equal(r->ngaps, 2);
	assert_int_equal(r->gaps[0].device, 0);
	assert_int_equal(r->gaps[0].tid, 10);
	assert_int_equal(r->gaps[1].device, 1);
	assert_int_equal(r->gaps[1].tid, 11);
	assert_int_equal(r->gaps[1].duration_ns, 10 * MS);
	an_result__free(r);
}

/* Random streams: whatever the records say, each gap's categories sum to its length. */
static void test_sum_property_random(void **state)
{
	unsigned seed = 12345;

	for (int round = 0; round < 20; round++) {
		struct synth s;
		struct an_result *r;
		uint64_t t = T0;

		synth_open(&s);
		synth_thread(&s, 10, "w");
		synth_thread(&s, 11, "x");
		for (uint64_t id = 1; id < 30; id++) {
			uint64_t gap = (uint64_t)(rand_r(&seed) % 20) * MS + rand_r(&seed) % 1000;
			uint64_t len = (uint64_t)(rand_r(&seed) % 5 + 1) * MS;
			uint32_t tid = 10 + (uint32_t)(rand_r(&seed) % 2);
			uint64_t launch = t + gap - (uint64_t)(rand_r(&seed) % 3) * MS;

			op(&s, tid, id, launch, t + gap, t + gap + len);
			for (int k = 0; k < 3; k++) {
				uint64_t off = t + (uint64_t)(rand_r(&seed) % (gap + 1));
				uint64_t wake = off + (uint64_t)(rand_r(&seed) % 4) * MS;
				uint64_t on = wake + rand_r(&seed) % 500000;
				int32_t sys = (int32_t)(rand_r(&seed) % 300) - 1;

				ev_off(&s, tid, off, rand_r(&seed) % 2 ? wake : 0, on,
				       rand_r(&seed) % 3 ? 0 : GT_OFF_PREEMPTED, sys, 128,
				       rand_r(&seed) % 4, 21 - tid, -1);
				synth_sample_f(&s, tid, on + 100000, sys, rand_r(&seed) % 2, -1);
			}
			if (rand_r(&seed) % 5 == 0)
				ev_loss(&s, t, t + gap / 2);
			t += gap + len;
		}
		struct an_opts o;

		an_opts__defaults(&o);
		o.pieces = true;
		r = synth_run(&s, &o); /* asserts the sum property */
		assert_true(r->ngaps > 0);
		/* The kept pieces add up to each gap's categories, exactly. */
		for (size_t g = 0; g < r->ngaps; g++) {
			uint64_t by_cat[GT_CAT_MAX] = {};

			for (size_t p = 0; p < r->npieces; p++)
				if (r->pieces[p].gap == g)
					by_cat[r->pieces[p].cat] += r->pieces[p].ns;
			for (int c = 0; c < GT_CAT_MAX; c++)
				assert_int_equal(by_cat[c], r->gaps[g].by_cat[c]);
		}
		an_result__free(r);
	}
}

/* Every 64-bit value is a key: 0, UINT64_MAX and keys that collide on a slot. */
static void test_u64map_any_key(void **state)
{
	struct u64map m = {};
	uint64_t v = 0;

	/* A lookup of UINT64_MAX in a map without it finds nothing (an empty slot is no key). */
	u64map_put(&m, 1, 11);
	assert_false(u64map_get(&m, UINT64_MAX, &v));
	assert_false(u64map_get(&m, 0, &v));
	u64map_put(&m, UINT64_MAX, 42);
	u64map_put(&m, 0, 7);
	assert_true(u64map_get(&m, UINT64_MAX, &v));
	assert_int_equal(v, 42);
	assert_true(u64map_get(&m, 0, &v));
	assert_int_equal(v, 7);
	/* 3000 keys in a map that starts at 256 slots: collisions and regrowth. */
	for (uint64_t k = 0; k < 3000; k++)
		u64map_put(&m, UINT64_MAX - 1 - k * 256, k);
	for (uint64_t k = 0; k < 3000; k++) {
		assert_true(u64map_get(&m, UINT64_MAX - 1 - k * 256, &v));
		assert_int_equal(v, k);
	}
	assert_true(u64map_get(&m, UINT64_MAX, &v));
	assert_int_equal(v, 42);
	assert_true(u64map_get(&m, 0, &v));
	assert_int_equal(v, 7);
	assert_true(u64map_get(&m, 1, &v));
	assert_int_equal(v, 11);
	assert_false(u64map_get(&m, 2, &v));
	assert_int_equal(m.n, 3003);
	/* add: a set's insert; it never replaces. */
	assert_false(u64map_add(&m, UINT64_MAX, 1));
	assert_true(u64map_get(&m, UINT64_MAX, &v));
	assert_int_equal(v, 42);
	assert_true(u64map_add(&m, 2, 22));
	assert_int_equal(m.n, 3004);
	/* clear empties the map and it works again. */
	u64map_clear(&m);
	assert_int_equal(m.n, 0);
	assert_false(u64map_get(&m, 0, &v));
	assert_false(u64map_get(&m, UINT64_MAX, &v));
	assert_true(u64map_add(&m, 0, 5));
	assert_true(u64map_get(&m, 0, &v));
	assert_int_equal(v, 5);
	u64map_free(&m);
}

/* Unit and op ids of 0 and 2^64-1 from the traced program are ordinary ids. */
static void test_extreme_unit_and_op_ids(void **state)
{
	struct synth s;
	struct an_result *r;

	synth_open(&s);
	synth_thread(&s, 10, "w");
	synth_unit(&s, 10, 0, T0 + 1 * MS, true);
	op(&s, 10, UINT64_MAX, T0 + 1 * MS, T0 + 2 * MS, T0 + 10 * MS);
	synth_unit(&s, 10, 0, T0 + 11 * MS, false);
	synth_unit(&s, 10, UINT64_MAX, T0 + 19 * MS, true);
	op(&s, 10, 0, T0 + 19 * MS, T0 + 20 * MS, T0 + 30 * MS);
	synth_unit(&s, 10, UINT64_MAX, T0 + 31 * MS, false);
	r = synth_run(&s, NULL);
	assert_int_equal(r->units, 2);
	assert_int_equal(r->ngaps, 1);
	assert_int_equal(r->gaps[0].kind, GT_GAP_INTER);
	assert_int_equal(r->gaps[0].unit_before, 0);
	assert_int_equal(r->gaps[0].tid, 10);
	assert_int_equal(r->gaps[0].launch_ns, T0 + 19 * MS);
	assert_int_equal(r->clock.pairs, 2);
	an_result__free(r);
}

/*
 * Units follow the GPU work (#10 item 7): 3 units with kernels and 5000
 * workless units marked around them keep the 3 (and the gap between them),
 * with a warning; the same 3 with 100 workless units (below the bound of 4
 * per operation + 1024) keep all 103, as before.
 */
static void test_workless_units_are_bounded(void **state)
{
	for (int hostile = 0; hostile < 2; hostile++) {
		unsigned extra = hostile ? 5000 : 100;
		struct synth s;
		struct an_result *r;
		bool warned = false;

		synth_open(&s);
		synth_thread(&s, 10, "w");
		for (uint64_t u = 0; u < 3; u++) {
			uint64_t t = T0 + (1 + 20 * u) * MS;

			synth_unit(&s, 10, u, t, true);
			op(&s, 10, 100 + u, t, t + 1 * MS, t + 10 * MS);
			synth_unit(&s, 10, u, t + 11 * MS, false);
		}
		/* 1 us units after the last kernel: none holds a GPU operation. */
		for (uint64_t u = 0; u < extra; u++) {
			synth_unit(&s, 11, 1000 + u, T0 + 70 * MS + u * 2000, true);
			synth_unit(&s, 11, 1000 + u, T0 + 70 * MS + u * 2000 + 1000, false);
		}
		r = synth_run(&s, NULL);
		assert_int_equal(r->units, hostile ? 3 : 3 + extra);
		assert_int_equal(r->ngaps, 2);
		assert_int_equal(r->gaps[0].kind, GT_GAP_INTER);
		assert_int_equal(r->gaps[0].unit_before, 0);
		assert_int_equal(r->gaps[1].unit_after, 2);
		for (size_t i = 0; i < r->nwarnings; i++)
			warned |= strstr(r->warnings[i], "5000 of 5003 units left out") != NULL;
		assert_int_equal(warned, hostile);
		an_result__free(r);
	}
}

static void ev_gpu(struct synth *s, uint32_t dev, uint16_t kind, uint64_t op, uint64_t start,
		   uint64_t end, uint64_t bytes)
{
	struct gt_gpu_op g = {};

	synth_hdr(&g.hdr, GT_REC_GPU_OP, sizeof(g), T0 + 500 * MS);
	g.pid = PID;
	g.tid = 99;
	g.rec.start_ns = start;
	g.rec.end_ns = end;
	g.rec.op_id = op;
	g.rec.device = dev;
	g.rec.kind = kind;
	g.rec.bytes = bytes;
	assert_int_equal(capture_writer__event(s->w, &g, sizeof(g)), 0);
}

static void ev_gpu_loss(struct synth *s, uint64_t count)
{
	struct gt_loss l = {};

	synth_hdr(&l.hdr, GT_REC_LOSS, sizeof(l), T0 + 500 * MS);
	l.count = count;
	l.kind = GT_LOSS_GPU;
	assert_int_equal(capture_writer__event(s->w, &l, sizeof(l)), 0);
}

/*
 * Garbage GPU records (a year-long op, one at 1-2 ns, one ending before it
 * starts, an impossible drop count) are rejected and counted; ops overhanging
 * the capture window are clipped to it; counters saturate instead of wrapping.
 */
static void test_garbage_gpu_records(void **state)
{
	const uint64_t year = 365ULL * 24 * 3600 * 1000 * MS;
	struct synth s;
	struct an_result *r;
	bool warned = false;

	synth_open(&s);
	base_gap(&s, T0 + 29 * MS); /* dev 0: gap [10, 30) ms */
	ev_gpu(&s, 0, 1, 50, T0 + 5 * MS, T0 + year, 0);
	ev_gpu(&s, 0, 1, 51, 1, 2, 0);
	ev_gpu(&s, 0, 1, 52, T0 + 20 * MS, T0 + 15 * MS, 0);
	ev_gpu(&s, 0, 7, 0, 0, 0, 18446744073709550716ULL);
	ev_gpu(&s, 0, 7, 0, 0, 0, 5);
	/* dev 1: overhangs both edges of the capture [T0, T0 + 1 s) */
	ev_gpu(&s, 1, 1, 60, T0 - 50 * MS, T0 + 1 * MS, 0);
	ev_gpu(&s, 1, 1, 61, T0 + 999 * MS, T0 + 1200 * MS, 0);
	/* A batch claiming 2^64-6 records beyond those read is no batch: rejected. */
	ev_gpu_loss(&s, UINT64_MAX - 5);
	ev_gpu_loss(&s, 10);
	/* dev 1: a kernel that ended 1 ms before the capture began is left out. */
	ev_gpu(&s, 1, 1, 62, T0 - 5 * MS, T0 - 1 * MS, 0);
	r = synth_run(&s, NULL);
	assert_int_equal(r->duration_ns, 1000 * MS);
	assert_int_equal(r->gpu_rejected, 5);
	assert_int_equal(r->gpu_clipped, 3);
	assert_int_equal(r->lost_producer, 5);
	assert_int_equal(r->lost_gpu, 10);
	assert_int_equal(r->ndevices, 2);
	assert_int_equal(r->devices[0].busy_ns, 18 * MS);
	assert_int_equal(r->devices[0].gaps, 1);
	assert_int_equal(r->devices[1].first_ns, T0);
	assert_int_equal(r->devices[1].last_ns, T0 + 1000 * MS);
	assert_int_equal(r->devices[1].busy_ns, 2 * MS);
	assert_int_equal(r->ngaps, 2);
	assert_int_equal(r->gaps[0].duration_ns, 20 * MS);
	assert_int_equal(r->gaps[1].duration_ns, 998 * MS);
	for (size_t i = 0; i < r->nwarnings; i++) {
		assert_null(strstr(r->warnings[i], "18446744073709550716"));
		if (strstr(r->warnings[i], "5 GPU records rejected") &&
		    strstr(r->warnings[i], "3 GPU operations clipped"))
			warned = true;
	}
	assert_true(warned);
	an_result__free(r);
}

/*
 * A long capture read in many blocks: 300 units 10 ms apart, each followed
 * by a 6 ms gap in which the worker waits on a hand-off from a helper that
 * samples in the allocator and runs a probed call, and every third gap a
 * lock wait on a holder.  Thread 14 sleeps 2.3 s from gap 50 on (a far
 * record, written when it ends) and wakes the worker in gap 100; thread 15
 * is asleep since before tracing began and wakes it in gap 120.
 */
static void stream_scene(struct synth *s)
{
	const uint64_t far_off = T0 + 50 * 10 * MS + 5 * MS, far_on = far_off + 2300 * MS;
	bool far_written = false;

	synth_thread(s, 10, "gpu-worker");
	synth_thread(s, 11, "helper");
	synth_thread(s, 12, "holder");
	synth_thread(s, 14, "sleeper");
	synth_thread(s, 15, "old-sleeper");
	synth_probe(s, 0, "malloc_trim", "allocator");
	stack(s, 3, 0x7f0000002000, "pthread_cond_wait", "/lib/libc.so.6");
	stack(s, 4, 0x7f0000003000, "malloc_trim", "/lib/libc.so.6");
	for (uint64_t u = 0; u < 300; u++) {
		uint64_t t = T0 + u * 10 * MS, w0 = t + 4 * MS + 500 * US, w1 = t + 8 * MS;
		uint32_t waker = u == 100 ? 14 : u == 120 ? 15 : 11;

		op(s, 10, u + 1, t > 50 * US ? t - 50 * US : t, t, t + 4 * MS);
		for (uint64_t k = 4; k <= 8; k++)
			synth_sample(s, 11, t + k * MS, 4);
		synth_call(s, 11, 0, t + 5 * MS, t + 5 * MS + 500 * US);
		ev_off(s, 10, w0, w1, w1 + 100 * US, 0, GT_NR_futex, 128, 5, waker, 3);
		if (u % 3 == 0) {
			ev_off(s, 12, t + 7 * MS, t + 7 * MS + 200 * US, t + 7 * MS + 300 * US, 0,
			       GT_NR_nanosleep, 0, 0, 0, -1);
			synth_lock_wait(s, 10, t + 8 * MS + 200 * US, t + 9 * MS, t + 9 * MS, 12);
			synth_sample(s, 12, t + 8 * MS + 600 * US, 4);
		}
		if (u == 121) {
			struct gt_offcpu o = {};

			synth_hdr(&o.hdr, GT_REC_OFFCPU, sizeof(o), t);
			o.pid = PID;
			o.tid = 15;
			o.flags = GT_OFF_PARTIAL_START;
			o.on_ns = T0 + 120 * 10 * MS + 8 * MS;
			o.syscall_nr = GT_NR_nanosleep;
			assert_int_equal(capture_writer__event(s->w, &o, sizeof(o)), 0);
		}
		if (!far_written && t > far_on) {
			ev_off(s, 14, far_off, far_on, far_on, 0, GT_NR_nanosleep, 0, 0, 0, -1);
			far_written = true;
		}
		assert_int_equal(capture_writer__flush(s->w), 0);
	}
	assert_true(far_written);
	s->end = T0 + 3010 * MS;
}

/* Explaining each gap as soon as its records are read gives the same result as at the end. */
static void test_stream_same_as_whole(void **state)
{
	struct an_result *r[2];
	struct an_opts o;

	for (int i = 0; i < 2; i++) {
		struct synth s;

		an_opts__defaults(&o);
		o.pieces = true;
		o.stream_batch = i ? SIZE_MAX : 1;
		synth_open(&s);
		stream_scene(&s);
		r[i] = synth_run(&s, &o);
	}
	/* The streaming run held a fraction of the records, in many steps. */
	assert_true(r[0]->stream_steps > 100);
	assert_int_equal(r[1]->stream_steps, 0);
	assert_true(r[0]->stream_peak * 4 < r[1]->stream_peak);
	assert_int_equal(r[0]->ngaps, 299);
	assert_int_equal(r[1]->ngaps, 299);
	/* The far sleep and the partial interval were there for their gaps. */
	assert_int_equal(r[0]->gaps[100].nchain, 2);
	assert_int_equal(r[0]->gaps[100].chain[1].tid, 14);
	assert_int_equal(r[0]->gaps[100].chain[1].by_cat[GT_CAT_SLEEP], 3500 * US);
	assert_int_equal(r[0]->gaps[120].chain[1].tid, 15);
	assert_int_equal(r[0]->gaps[120].chain[1].by_cat[GT_CAT_CPU], 0);
	assert_int_equal(r[0]->gaps[7].chain[1].by_cat[GT_CAT_ALLOC], 3500 * US);
	for (size_t i = 0; i < r[0]->ngaps; i++) {
		const struct an_gap *a = &r[0]->gaps[i], *b = &r[1]->gaps[i];

		assert_memory_equal(a->by_cat, b->by_cat, sizeof(a->by_cat));
		assert_int_equal(a->nchain, b->nchain);
		for (size_t k = 0; k < a->nchain; k++) {
			assert_int_equal(a->chain[k].tid, b->chain[k].tid);
			assert_int_equal(a->chain[k].from_ns, b->chain[k].from_ns);
			assert_int_equal(a->chain[k].to_ns, b->chain[k].to_ns);
			assert_memory_equal(a->chain[k].by_cat, b->chain[k].by_cat,
					    sizeof(a->chain[k].by_cat));
		}
		assert_int_equal(a->nholders, b->nholders);
		for (size_t k = 0; k < a->nholders; k++) {
			assert_int_equal(a->holders[k].tid, b->holders[k].tid);
			assert_int_equal(a->holders[k].wait_ns, b->holders[k].wait_ns);
			assert_int_equal(a->holders[k].ustack, b->holders[k].ustack);
			assert_memory_equal(a->holders[k].by_cat, b->holders[k].by_cat,
					    sizeof(a->holders[k].by_cat));
		}
	}
	assert_int_equal(r[0]->npieces, r[1]->npieces);
	assert_memory_equal(r[0]->pieces, r[1]->pieces, r[0]->npieces * sizeof(*r[0]->pieces));
	assert_memory_equal(r[0]->totals, r[1]->totals, sizeof(r[0]->totals));
	an_result__free(r[0]);
	an_result__free(r[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_gap_sleep),
	    cmocka_unit_test(test_gap_preempted_vs_blocked),
	    cmocka_unit_test(test_gap_lock_by_futex_value),
	    cmocka_unit_test(test_gap_lock_by_stack),
	    cmocka_unit_test(test_gap_handoff_follows_waker),
	    cmocka_unit_test(test_stream_same_as_whole),
	    cmocka_unit_test(test_gap_handoff_unfollowable_is_wait),
	    cmocka_unit_test(test_gap_waker_must_be_a_real_hand_off),
	    cmocka_unit_test(test_gap_untraced_waker_named),
	    cmocka_unit_test(test_gap_epoll_timeout_is_sleep),
	    cmocka_unit_test(test_gap_epoll_woken_before_timeout_is_handoff),
	    cmocka_unit_test(test_gap_timeout_by_pointer_is_sleep),
	    cmocka_unit_test(test_gap_futex_counter_at_2_is_handoff),
	    cmocka_unit_test(test_gap_futex_lock_word_stays_lock),
	    cmocka_unit_test(test_offcpu_v1_records),
	    cmocka_unit_test(test_gap_allocator_offcpu_and_uprobe),
	    cmocka_unit_test(test_gap_cuda_alloc_api_is_allocator),
	    cmocka_unit_test(test_gap_samples_split_oncpu),
	    cmocka_unit_test(test_gap_allocator_entry_in_chain),
	    cmocka_unit_test(test_gap_lost_data_is_unknown),
	    cmocka_unit_test(test_gap_running_without_samples_is_unknown),
	    cmocka_unit_test(test_gap_sparse_samples_same_pcount_is_cpu),
	    cmocka_unit_test(test_gap_without_launch_is_unknown),
	    cmocka_unit_test(test_gap_launched_before_gap_is_cuda),
	    cmocka_unit_test(test_gap_untraced_thread_is_unknown),
	    cmocka_unit_test(test_critical_thread_is_launcher_of_next_op),
	    cmocka_unit_test(test_units_inter_and_intra),
	    cmocka_unit_test(test_units_from_nvtx_ranges),
	    cmocka_unit_test(test_result_carries_opts),
	    cmocka_unit_test(test_bursts_without_units),
	    cmocka_unit_test(test_min_gap_and_overlap),
	    cmocka_unit_test(test_partial_interval_at_start),
	    cmocka_unit_test(test_host_view_from_libcuda_uprobes),
	    cmocka_unit_test(test_fallback_after_cupti_stepped_aside),
	    cmocka_unit_test(test_host_view_after_gpu_records),
	    cmocka_unit_test(test_two_devices),
	    cmocka_unit_test(test_sum_property_random),
	    cmocka_unit_test(test_u64map_any_key),
	    cmocka_unit_test(test_extreme_unit_and_op_ids),
	    cmocka_unit_test(test_workless_units_are_bounded),
	    cmocka_unit_test(test_garbage_gpu_records),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
