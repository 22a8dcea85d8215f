/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * gaptrace.h: records shared by the BPF programs, the recorder and the capture
 * file.  Plain fixed-width structs, no pointers; every record starts with
 * struct gt_hdr so a reader can skip types it does not know.
 *
 * These layouts are the payload of capture EVENTS blocks: change them only by
 * appending fields (readers accept a size >= the size they know) or by
 * bumping the capture's major version.
 */
#ifndef GAPTRACE_H
#define GAPTRACE_H

#ifndef __BPF__
#include <linux/types.h>
#include <stddef.h>
#endif

/* The producer-facing contract: struct gaptrace_gpu_rec, enum gaptrace_gpu_kind. */
#include "gaptrace-usdt.h"

#define GT_COMM_LEN	 16
#define GT_TGID_LIMIT	 (1u << 22) /* PID_MAX_LIMIT on 64-bit: target_bits covers every tgid */
#define GT_STACK_DEPTH	 128	    /* frames kept per stack */
#define GT_NAME_MAX	 256	    /* interned GPU/API names, bytes incl. NUL */
#define GT_GPU_REC_SIZE	 80	    /* sizeof(struct gaptrace_gpu_rec) */
#define GT_GPU_BATCH_MAX GAPTRACE_GPU_BATCH_MAX /* records read per gpu_batch firing */

enum gt_rec_type {
	GT_REC_OFFCPU = 1,     /* struct gt_offcpu */
	GT_REC_SAMPLE = 2,     /* struct gt_sample */
	GT_REC_CALL = 3,       /* struct gt_call: uprobe entry/return pair */
	GT_REC_UNIT = 4,       /* struct gt_unit */
	GT_REC_GPU_LAUNCH = 5, /* struct gt_gpu_launch */
	GT_REC_GPU_OP = 6,     /* struct gt_gpu_op (capture: one per GPU record) */
	GT_REC_GPU_BATCH = 7,  /* struct gt_gpu_batch (ring buffer only) */
	GT_REC_TASK = 8,       /* struct gt_task */
	GT_REC_NAME = 9,       /* struct gt_name */
	GT_REC_LOSS = 10,      /* struct gt_loss (written by the recorder) */
	GT_REC_USTACK = 11,    /* struct gt_ustack (ring buffer only: --stacks dwarf) */
	GT_REC_STACK = 12,     /* struct gt_stack (ring buffer only: a stack id's frames) */
	GT_REC_PEER = 13,      /* struct gt_peer (written by the recorder) */
	GT_REC_MAX
};

struct gt_hdr {
	__u16 type;  /* enum gt_rec_type */
	__u16 size;  /* whole record, header included */
	__u32 cpu;   /* CPU that emitted it */
	__u64 ts_ns; /* CLOCK_MONOTONIC when emitted */
};

/* gt_offcpu.flags */
#define GT_OFF_PREEMPTED     0x1  /* switched out while runnable */
#define GT_OFF_PARTIAL_START 0x2  /* already off-CPU when tracing began: off_ns = 0 */
#define GT_OFF_PARTIAL_END   0x4  /* still off-CPU when tracing ended: on_ns = end */
#define GT_OFF_WAKER_IRQ     0x8  /* woken from interrupt context: waker is not a cause */
#define GT_OFF_NEW_TASK	     0x10 /* first run of a new thread: off_ns = creation */
#define GT_OFF_ENQUEUED	     0x40 /* wake_ns is the enqueue (sched_wakeup), not sched_waking */
#define GT_OFF_SWITCHIN_EST \
	0x20 /* switch-in not traced: on_ns from the scheduler's
				  * sched_info.last_arrival (or the wakeup) */

/*
 * One off-CPU interval of a traced thread, paired in the kernel and emitted at
 * switch-in.  Blocked: [off, wake) blocked, [wake, on) run queue.  Preempted:
 * [off, on) run queue, wake_ns = 0.
 */
struct gt_offcpu {
	struct gt_hdr hdr;
	__u32 pid; /* thread group id */
	__u32 tid;
	__u64 off_ns;
	__u64 wake_ns; /* 0: never woken (preempted or partial) */
	__u64 on_ns;
	__u32 state; /* prev_state at switch-out (TASK_* bits) */
	__u32 flags; /* GT_OFF_* */
	__u32 waker_pid;
	__u32 waker_tid;  /* 0: unknown */
	__s32 syscall_nr; /* syscall blocked in, -1: none */
	__s32 ustack_id;  /* stack id (struct gt_stack), < 0: none */
	__s32 kstack_id;
	__s32 waker_syscall; /* syscall the waker was in, -1: none/interrupt */
	/*
	 * First syscall arguments.  args[3] is where a timed wait keeps its
	 * timeout: the 4th argument (r10: epoll_wait's ms, futex's timespec),
	 * for select and pselect6 their 5th (r8).  Appended: absent in captures
	 * written before it (records of GT_OFFCPU_V1_SIZE bytes).
	 */
	__u64 args[4];
};
/* An off-CPU record from a capture written before gt_offcpu.args[3]. */
#define GT_OFFCPU_V1_SIZE 104

/* gt_sample.flags */
#define GT_SAMPLE_KERNEL 0x1 /* interrupted in kernel mode */

/* One CPU-clock sample of a traced thread. */
struct gt_sample {
	struct gt_hdr hdr;
	__u32 pid;
	__u32 tid;
	__s32 syscall_nr; /* syscall in progress, -1: none */
	__s32 ustack_id;
	__s32 kstack_id;
	__u32 flags;
	__u64 ip;
	/*
	 * The thread's sched_info.pcount (switch-ins so far; 0: kernel without
	 * CONFIG_SCHED_INFO).  Two samples whose pcounts differ by exactly the
	 * switch-ins traced between them prove no switch went untraced: the
	 * thread ran between, however few samples the hypervisor let through.
	 * Absent in captures before it (records of offsetof(pcount) bytes).
	 */
	__u64 pcount;
};
/* A sample record from a capture written before gt_sample.pcount. */
#define GT_SAMPLE_V1_SIZE 48

/* gt_call.flags */
#define GT_CALL_OPEN 0x1 /* no return seen: exit_ns = end of tracing */

/* One call of a uprobed function, entry and return paired in the kernel. */
struct gt_call {
	struct gt_hdr hdr;
	__u32 pid;
	__u32 tid;
	__u64 enter_ns;
	__u64 exit_ns;
	__u32 func_id; /* index into the capture's PROBES block */
	__u32 flags;
	__u64 arg0;
	__u64 ret;
};

/* A work unit boundary from the unit_begin/unit_end USDT probes. */
struct gt_unit {
	struct gt_hdr hdr; /* ts_ns = probe time */
	__u32 pid;
	__u32 tid;
	__u64 unit_id;
	__u32 begin; /* 1 begin, 0 end */
	__u32 _pad;
};

/* gpu_launch USDT probe: a host thread launched op_id (ts_ns = call time). */
struct gt_gpu_launch {
	struct gt_hdr hdr;
	__u32 pid;
	__u32 tid;
	__u32 device;
	__u32 stream;
	__u64 op_id;
};

struct gt_gpu_op {
	struct gt_hdr hdr;
	__u32 pid;
	__u32 tid;		     /* thread that fired the probe */
	struct gaptrace_gpu_rec rec; /* as the producer wrote it */
};

/*
 * gpu_batch in the ring buffer: count records follow, each GT_GPU_REC_SIZE
 * bytes (the first GT_GPU_REC_SIZE of each producer record; bytes past the
 * producer's rec_size are not its data and are zeroed by the recorder).
 */
struct gt_gpu_batch {
	struct gt_hdr hdr;
	__u32 pid;
	__u32 tid;
	__u32 count;	/* records copied */
	__u32 rec_size; /* producer's record size */
	__u32 dropped;	/* records beyond GT_GPU_BATCH_MAX that were not copied */
	__u32 _pad;
	__u8 data[GT_GPU_BATCH_MAX * GT_GPU_REC_SIZE];
};

enum gt_task_event {
	GT_TASK_NEW_THREAD = 1,
	GT_TASK_NEW_PROCESS = 2,
	GT_TASK_EXIT = 3,
	GT_TASK_RENAME = 4,
	GT_TASK_EXEC = 5,
	GT_TASK_SEEN = 6, /* recorder: thread existed when tracing began */
	/*
	 * The loader changed its link map (a dlopen/dlclose, the start-up
	 * libraries): the recorder looks for new probe sites at once.  Ring
	 * buffer only, never written to a capture.
	 */
	GT_TASK_LOADED = 7,
};

struct gt_task {
	struct gt_hdr hdr;
	__u32 pid;
	__u32 tid;
	__u32 event;	  /* enum gt_task_event */
	__u32 parent_tid; /* creator for NEW_*, else 0 */
	char comm[GT_COMM_LEN];
};

/*
 * A thread outside the trace that woke a traced one from a syscall (a child
 * not followed, another program): named once by the recorder from /proc, so
 * the report can say who the critical path could not follow.
 */
struct gt_peer {
	struct gt_hdr hdr;
	__u32 pid;
	__u32 tid;
	char comm[GT_COMM_LEN];
};

/* gpu_name USDT probe: interns a name; size = offsetof(name) + len + 1. */
struct gt_name {
	struct gt_hdr hdr;
	__u32 pid;
	__u32 name_id;
	__u32 len; /* bytes before the NUL */
	__u32 _pad;
	char name[GT_NAME_MAX];
};

enum gt_loss_kind {
	GT_LOSS_RINGBUF = 1,  /* BPF ring buffer reserve failures */
	GT_LOSS_STACK = 2,    /* stack ids that could not be stored */
	GT_LOSS_GPU = 3,      /* GPU records truncated from batches */
	GT_LOSS_PRODUCER = 4, /* records the GPU producer (CUPTI) dropped */
	GT_LOSS_MAP_FULL = 5, /* intervals not paired: tracking map full */
};

/*
 * Written by the recorder: count records of kind were lost between from_ns and
 * to_ns (the drain interval in which the counter rose).  Analysis treats time
 * in that window as unknown.
 */
struct gt_loss {
	struct gt_hdr hdr;
	__u64 from_ns;
	__u64 to_ns;
	__u64 count;
	__u32 kind; /* enum gt_loss_kind */
	__u32 _pad;
};

/* --stacks dwarf: user register file and stack bytes kept per snapshot. */
#define GT_UREGS_NR	 17    /* x86-64 DWARF registers 0-16: ax dx cx bx si di bp sp r8-r15 ip */
#define GT_USTACK_MAX	 16384 /* most stack bytes one snapshot may hold (--stack-bytes) */
#define GT_USTACK_SAMPLE 0x1   /* gt_ustack.flags: taken by a CPU sample, not at switch-out */

/*
 * The executable ranges of a traced process that lie in objects without
 * frame pointers (Debian's libc, libstdc++, ld.so), map fpless keyed by
 * tgid, kept by the recorder: a CPU sample whose user ip falls in one gets a
 * stack snapshot (GT_USTACK_SAMPLE) for the recorder to unwind with the
 * object's CFI, as the frame-pointer walk loses the caller there.
 */
#define GT_FPLESS_MAX 24

struct gt_fpless {
	__u32 nr;
	__u32 pad;
	__u64 start[GT_FPLESS_MAX];
	__u64 end[GT_FPLESS_MAX]; /* exclusive */
};

/*
 * A copy of a traced thread's user registers and the top of its user stack
 * (from sp upward), for unwinding with DWARF CFI in the recorder.  Taken at
 * switch-out and sent at switch-in, just before the gt_offcpu record it
 * belongs to (same tid, off_ns), only when the interval lasted at least
 * --dwarf-min; or taken by a CPU sample (GT_USTACK_SAMPLE, off_ns = the
 * sample's hdr.ts_ns) just before that gt_sample.  Variable length:
 * hdr.size = offsetof(struct gt_ustack, data) + stack_size.  The recorder
 * turns it into a STACKS entry and patches the ustack_id of the record that
 * follows; it never reaches a capture file.
 */
struct gt_ustack {
	struct gt_hdr hdr;
	__u32 pid;
	__u32 tid;
	__u64 off_ns;
	__u64 regs[GT_UREGS_NR];
	__u32 stack_size; /* bytes of data valid, copied from regs[7] (sp) upward */
	__u32 flags;	  /* GT_USTACK_* */
	__u64 stack_end;  /* end of the stack mapping if the copy met it, else 0 */
	__u8 data[GT_USTACK_MAX];
};

/*
 * The frames of a stack id, sent once when the id is made, ahead of every
 * record that carries it (issue #12: stacks that last).  Ids are never
 * reused within a recording, so an id means one stack for good; the kernel
 * side forgets stacks (an LRU map of frames -> id) and makes a new id when an
 * evicted one comes back, which the recorder maps to the capture id it first
 * wrote for those frames.  Variable length: hdr.size = offsetof(struct
 * gt_stack, ips) + nr * 8.  The recorder turns it into a STACKS entry.
 */
#define GT_STACK_REC_KERNEL 0x1 /* gt_stack.flags: kernel frames (pid 0) */
/* gt_stack.flags: the CFI walk ended where the code's CFI marks the thread's outermost frame */
#define GT_STACK_REC_ROOT 0x2

struct gt_stack {
	struct gt_hdr hdr;
	__s32 id;
	__u32 pid; /* tgid the user frames belong to, 0 for kernel frames */
	__u16 nr;  /* frames in ips */
	__u16 flags;
	__u32 _pad;
	__u64 ips[GT_STACK_DEPTH];
};

/* Per-CPU counters in the BPF "stats" array, summed by the recorder. */
enum gt_stat {
	GT_STAT_RB_LOST = 0, /* ring buffer reserve failures, all types */
	GT_STAT_RB_LOST_OFFCPU,
	GT_STAT_RB_LOST_SAMPLE,
	GT_STAT_RB_LOST_CALL,
	GT_STAT_RB_LOST_GPU,
	GT_STAT_RB_LOST_OTHER,
	GT_STAT_STACK_LOST,	 /* stacks not recorded (walk failed, no ring buffer room) */
	GT_STAT_MAP_FULL,	 /* offcpu/call tracking map full */
	GT_STAT_GPU_TRUNC,	 /* batch records beyond GT_GPU_BATCH_MAX */
	GT_STAT_EVENTS,		 /* records submitted */
	GT_STAT_SWITCHES,	 /* traced switch-outs seen */
	GT_STAT_SWITCHIN_MISSED, /* switch-ins the kernel never traced */
	GT_STAT_USTACK_SENT,	 /* --stacks dwarf: snapshots sent */
	GT_STAT_USTACK_BYTES,	 /* their stack bytes */
	GT_STAT_USTACK_LOST,	 /* snapshots the ring buffer had no room for */
	GT_STAT_USTACK_FULL,	 /* switch-outs with no snapshot slot (slot map full) */
	GT_STAT_STACK_REUSED,	 /* switch-outs that reused their last stacks (no walk) */
	GT_STAT_RB_PRESSURE,	 /* submits that found the ring buffer over cfg_wakeup_bytes */
	GT_STAT_FPLESS_SAMPLES, /* CPU samples snapshotted: user ip in code without frame pointers */
	GT_STAT_FPLESS_OVER,	/* such samples past --cfi-rate's budget: fp walk instead */
	GT_STAT_UNW_WALKS,	/* --stacks cfi: user stacks walked in the kernel */
	GT_STAT_UNW_FRAMES,	/* their frames */
	GT_STAT_UNW_ROOT,	/* walks that ended as enum gt_unw_end says, from GT_UNW_ROOT on */
	GT_STAT_UNW_NO_MAPPING,
	GT_STAT_UNW_NO_TABLE,
	GT_STAT_UNW_NO_ROW,
	GT_STAT_UNW_UNSUPPORTED,
	GT_STAT_UNW_BAD_READ,
	GT_STAT_UNW_DEPTH,
	GT_STAT_MAX
};

/*
 * Values of the BPF maps the recorder reads back (offcpu: by tid, calls: by
 * tid << 32 | func_id), for the intervals still open when tracing stops.
 */
struct gt_offcpu_start {
	__u64 off_ns;
	__u64 wake_ns;
	__u32 state;
	__u32 flags;
	__u32 waker_pid;
	__u32 waker_tid;
	__s32 syscall_nr;
	__s32 ustack_id;
	__s32 kstack_id;
	__s32 waker_syscall;
	__u64 args[4];
};

/*
 * The interval's record from its switch-out state: every field but the
 * header, pid, tid and on_ns (switch-in, a missed switch-in and the
 * recorder's final drain each close it their own way).
 */
static inline __attribute__((always_inline)) void
gt_offcpu_from_start(struct gt_offcpu *o, const struct gt_offcpu_start *s)
{
	o->off_ns = s->off_ns;
	o->wake_ns = s->wake_ns;
	o->state = s->state;
	o->flags = s->flags;
	o->waker_pid = s->waker_pid;
	o->waker_tid = s->waker_tid;
	o->syscall_nr = s->syscall_nr;
	o->ustack_id = s->ustack_id;
	o->kstack_id = s->kstack_id;
	o->waker_syscall = s->waker_syscall;
	for (int i = 0; i < 4; i++)
		o->args[i] = s->args[i];
}

struct gt_call_start {
	__u64 enter_ns;
	__u64 arg0;
};

/*
 * Sizes are part of the capture format and of the kernel/recorder contract:
 * a field added on one side without the other fails the build here.
 */
_Static_assert(sizeof(struct gt_hdr) == 16, "gt_hdr layout");
_Static_assert(sizeof(struct gt_offcpu) == 112, "gt_offcpu layout");
_Static_assert(sizeof(struct gt_sample) == 56, "gt_sample layout");
_Static_assert(sizeof(struct gt_call) == 64, "gt_call layout");
_Static_assert(sizeof(struct gt_unit) == 40, "gt_unit layout");
_Static_assert(sizeof(struct gt_gpu_launch) == 40, "gt_gpu_launch layout");
_Static_assert(sizeof(struct gaptrace_gpu_rec) == GT_GPU_REC_SIZE, "gpu record layout");
_Static_assert(sizeof(struct gt_gpu_op) == 24 + GT_GPU_REC_SIZE, "gt_gpu_op layout");
_Static_assert(sizeof(struct gt_gpu_batch) == 40 + GT_GPU_BATCH_MAX * GT_GPU_REC_SIZE,
	       "gt_gpu_batch layout");
_Static_assert(sizeof(struct gt_task) == 48, "gt_task layout");
_Static_assert(sizeof(struct gt_peer) == 40, "gt_peer layout");
_Static_assert(sizeof(struct gt_stack) == 32 + GT_STACK_DEPTH * 8, "gt_stack layout");
_Static_assert(sizeof(struct gt_name) == 32 + GT_NAME_MAX, "gt_name layout");
_Static_assert(sizeof(struct gt_loss) == 48, "gt_loss layout");
_Static_assert(sizeof(struct gt_ustack) == 16568, "gt_ustack layout");
_Static_assert(sizeof(struct gt_fpless) == 8 + 16 * GT_FPLESS_MAX, "fpless map value layout");
_Static_assert(sizeof(struct gt_offcpu_start) == 80, "offcpu map value layout");
_Static_assert(sizeof(struct gt_call_start) == 16, "calls map value layout");

#ifndef __BPF__
/*
 * The smallest size a record of each type may have: its first layout
 * (records grow only by appended fields), or the fixed part of a
 * variable-length one.  The readers (the capture reader, the recorder's
 * ring-buffer sink) drop a record smaller than its type's, so that their
 * consumers read every field of the first layout without checking; later
 * fields (gt_offcpu.args[3], gt_sample.pcount) still need size >= sizeof.
 * A type this table does not know needs only its header.
 */
static inline size_t gt_rec_min_size(unsigned type)
{
	switch (type) {
	case GT_REC_OFFCPU:
		return GT_OFFCPU_V1_SIZE;
	case GT_REC_SAMPLE:
		return GT_SAMPLE_V1_SIZE;
	case GT_REC_CALL:
		return sizeof(struct gt_call);
	case GT_REC_UNIT:
		return sizeof(struct gt_unit);
	case GT_REC_GPU_LAUNCH:
		return sizeof(struct gt_gpu_launch);
	case GT_REC_GPU_OP:
		return sizeof(struct gt_gpu_op);
	case GT_REC_GPU_BATCH:
		return sizeof(struct gt_gpu_batch);
	case GT_REC_TASK:
		return sizeof(struct gt_task);
	case GT_REC_NAME:
		return offsetof(struct gt_name, name) + 1; /* the NUL at least */
	case GT_REC_LOSS:
		return sizeof(struct gt_loss);
	case GT_REC_USTACK:
		return offsetof(struct gt_ustack, data);
	case GT_REC_STACK:
		return offsetof(struct gt_stack, ips);
	case GT_REC_PEER:
		return sizeof(struct gt_peer);
	default:
		return sizeof(struct gt_hdr);
	}
}
#endif

#endif /* GAPTRACE_H */
