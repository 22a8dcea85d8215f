/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * timeline.h: a capture laid out for looking at: per-thread state spans,
 * calls, GPU operations with their launches, work units and loss windows.
 */
#ifndef GT_TIMELINE_H
#define GT_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct an_result;

enum tl_state {
	TL_RUNNING = 0, /* on a CPU */
	TL_RUNNABLE,	/* woken, waiting for a CPU */
	TL_PREEMPTED,	/* runnable after losing its CPU */
	TL_BLOCKED,	/* asleep in the kernel */
	TL_UNKNOWN,	/* off-CPU since before tracing began: why is not known */
	TL_STATE_MAX
};
/* "running", "runnable", "preempted", "blocked", "unknown" */
extern const char *const tl_state_names[TL_STATE_MAX];

struct tl_span {
	uint64_t from, to;
	uint8_t state;	 /* enum tl_state */
	int8_t cat;	 /* blocked: its gt_cat; runnable/preempted: scheduler; running: -1 */
	bool handoff;	 /* blocked on a hand-off whose waker explains it */
	int32_t syscall; /* blocked: syscall at switch-out, -1: none */
	uint32_t waker;	 /* blocked/runnable: the thread whose wakeup ended it, 0: none */
	int32_t ustack, kstack;
};

struct tl_call {
	uint64_t enter, exit;
	int cat;	  /* gt_cat */
	const char *name; /* probe name, "CUDA API" (static or owned by the result) */
};

struct tl_thread {
	uint32_t pid, tid;
	char comm[16];
	uint64_t born, died; /* 0: before / after the capture */
	struct tl_span *spans;
	size_t nspans;
	struct tl_call *calls;
	size_t ncalls;
};

struct tl_op {
	uint64_t start, end, op_id;
	uint64_t launch_ns; /* 0: no launch record */
	uint32_t device, stream, launch_tid;
	uint16_t kind; /* 1 kernel, 2 memcpy, 3 memset */
};

struct tl_unit {
	uint64_t id, begin, end;
	uint32_t tid;
};

struct tl_window {
	uint64_t from, to;
};

struct timeline {
	uint64_t start, end;
	bool full; /* thread spans cover the whole capture (an_opts.keep_all) */
	struct tl_thread *threads;
	size_t nthreads;
	struct tl_op *ops; /* by device, then start */
	size_t nops;
	struct tl_unit *units; /* by begin */
	size_t nunits;
	struct tl_window *losses;
	size_t nlosses;
};

/*
 * Builds the timeline of an analysed capture.  GPU ops, units and losses are
 * always there; thread spans and calls only when the analysis ran with
 * an_opts.keep_all (else every thread has none and full is false).
 */
struct timeline *timeline__new(const struct an_result *r);
void timeline__free(struct timeline *tl);

/* x86-64 syscall name ("futex"), or NULL when not one the tracer names. */
const char *tl_syscall_name(int32_t nr);
/* "kernel", "memcpy", "memset" or "gpu op". */
const char *tl_op_kind_name(uint16_t kind);

#endif /* GT_TIMELINE_H */
