// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sched.bpf.c: the scheduler side of the recorder.  Pairs each traced
 * thread's switch-out with its wakeup and switch-in and emits one record per
 * off-CPU interval; follows forks, exits, execs and renames.
 */
#include "common.bpf.h"
#include "gaptrace/gaptrace_waits.h"

#define TASK_DEAD_BITS 0x0080 /* TASK_DEAD: the task is exiting, no switch-in follows */

/* Set by the recorder between open and load. */
const volatile bool cfg_follow_children = true;
const volatile __u64 cfg_dwarf_min_ns = 1000000; /* shorter intervals drop theirs */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32); /* tid */
	__type(value, struct gt_offcpu_start);
} offcpu SEC(".maps");

/*
 * The stacks a thread blocked with last time, and where: a thread that blocks
 * again at the same user frame (same ip, sp, bp and the two words bp points
 * at: the caller's frame and return address) in the same syscall on the same
 * first argument gets the same ids without a walk.  Dispatch loops and
 * ping-pong threads block at a handful of sites; every 64th reuse walks
 * anyway, so a deeper difference the key misses does not last.
 */
#define STACK_REUSE_MAX 64

struct stack_memo {
	__u64 ip, sp, bp, frame[2], arg0;
	__s32 nr;
	__s32 ustack_id, kstack_id;
	__u32 reuses;
	__u8 kwant;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct stack_memo);
} stack_memos SEC(".maps");

/*
 * A wakeup is a hand-off from the current task only if that task is inside a
 * syscall (futex_wake, a pipe write, ...).  Interrupts (timers, devices) run
 * on whatever task they hit, usually in user mode: those wakers are not causes.
 * (The preempt count that would tell directly is not visible to BPF on
 * kernels without CONFIG_KALLSYMS_ALL.)
 */
static __always_inline __s32 waker_syscall(void)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());

	return regs_syscall(regs, NULL);
}

/*
 * When the task went on CPU, for an interval whose switch-in tracepoint never
 * fired (seen on Firecracker guests: switches away from some host-agent
 * threads are not traced).  The scheduler's own bookkeeping still knows:
 * sched_info.last_arrival is the rq clock at switch-in, rq->clock is the rq
 * clock now, so the switch-in happened (rq->clock - last_arrival) ago.
 * 0 where the kernel keeps neither (core_fixes.bpf.h): emit_missed then ends
 * the interval at its wakeup.
 */
static __always_inline __u64 estimate_switch_in(struct task_struct *prev, __u64 now)
{
	struct rq *rq = gt_task_rq(prev);
	__u64 arrival = gt_task_last_arrival(prev);
	__u64 clock;

	if (!rq || !arrival)
		return 0;
	clock = BPF_CORE_READ(rq, clock);
	if (clock < arrival || clock - arrival > now)
		return 0;
	return now - (clock - arrival);
}

/* Emits the interval left open by a switch-in that was never seen. */
static __always_inline void emit_missed(struct task_struct *prev, struct gt_offcpu_start *old,
					__u32 tid, __u64 now)
{
	struct gt_offcpu *rec;
	__u64 on = estimate_switch_in(prev, now);

	stat_inc(GT_STAT_SWITCHIN_MISSED);
	if (cfg_dwarf_bytes && on > old->off_ns && on <= now &&
	    on - old->off_ns >= cfg_dwarf_min_ns)
		send_ustack(tid, old->off_ns, now);
	rec = reserve(sizeof(*rec), GT_STAT_RB_LOST_OFFCPU);
	if (!rec)
		return;
	/* Without a usable estimate the run-queue part is unknown: end at the wakeup. */
	if (on < old->off_ns || on > now)
		on = old->wake_ns ? old->wake_ns : old->off_ns;
	fill_hdr(&rec->hdr, GT_REC_OFFCPU, sizeof(*rec), now);
	rec->pid = prev->tgid;
	rec->tid = tid;
	gt_offcpu_from_start(rec, old);
	rec->on_ns = on;
	rec->flags |= GT_OFF_SWITCHIN_EST;
	submit(rec, false);
}

/*
 * Whether a switch-out's kernel stack says more than its syscall does.  A
 * preempted task's is the preemption path, and these syscalls always block
 * the same way (entry -> the wait primitive -> schedule): for them the kernel
 * walk, most of the switch's cost (tools/bench: ~4.3 of 4.9 us per
 * sched_switch with stacks, 0.7 without), buys nothing attribution or a
 * flame graph uses.  Faults, reads, writes, ioctls and the rest keep theirs.
 * x86-64 numbers, like regs_syscall's orig_ax.
 */
static __always_inline bool kstack_tells(bool preempted, __s32 nr)
{
	if (preempted || gt_nr_is_handoff(nr))
		return false;
	switch (nr) {
	case GT_NR_sched_yield:
	case GT_NR_pause:
	case GT_NR_nanosleep:
	case GT_NR_rt_sigtimedwait:
	case GT_NR_rt_sigsuspend:
	case GT_NR_futex:
	case GT_NR_clock_nanosleep:
		return false;
	default:
		return true;
	}
}

/* The switch-out's stack ids: from the memo when the thread blocks where it did. */
static __always_inline void switch_stacks(void *ctx, struct pt_regs *regs,
					  struct gt_offcpu_start *si)
{
	bool kwant = cfg_kstacks && kstack_tells(si->flags & GT_OFF_PREEMPTED, si->syscall_nr);
	struct stack_memo *mm = NULL;
	__u64 ip = 0, sp = 0, bp = 0, frame[2] = {};

	if (!cfg_ustacks && !kwant) {
		si->ustack_id = -1;
		si->kstack_id = -1;
		return;
	}
	if (cfg_ustacks) {
		mm = bpf_task_storage_get(&stack_memos, bpf_get_current_task_btf(), NULL,
					  BPF_LOCAL_STORAGE_GET_F_CREATE);
		ip = regs->ip;
		sp = regs->sp;
		bp = regs->bp;
		if (bpf_probe_read_user(frame, sizeof(frame), (void *)bp))
			frame[0] = frame[1] = 0;
	}
	if (mm && mm->reuses < STACK_REUSE_MAX && mm->ustack_id >= 0 && mm->ip == ip &&
	    mm->sp == sp && mm->bp == bp && mm->frame[0] == frame[0] && mm->frame[1] == frame[1] &&
	    mm->nr == si->syscall_nr && mm->arg0 == si->args[0] && mm->kwant == kwant) {
		mm->reuses++;
		si->ustack_id = mm->ustack_id;
		si->kstack_id = mm->kstack_id;
		stat_inc(GT_STAT_STACK_REUSED);
		return;
	}
	si->ustack_id = get_stack(ctx, BPF_F_USER_STACK, cfg_ustacks, STACK_SLOT_SWITCH);
	si->kstack_id = get_stack(ctx, 0, kwant, STACK_SLOT_SWITCH);
	if (!mm)
		return;
	mm->ip = ip;
	mm->sp = sp;
	mm->bp = bp;
	mm->frame[0] = frame[0];
	mm->frame[1] = frame[1];
	mm->arg0 = si->args[0];
	mm->nr = si->syscall_nr;
	mm->kwant = kwant;
	mm->ustack_id = si->ustack_id;
	/* A failed kernel walk is not worth repeating 63 times either way. */
	mm->kstack_id = si->kstack_id;
	mm->reuses = 0;
}

/*
 * A traced thread's offcpu entry lives as long as the thread: switch-in
 * closes it (off_ns = 0) instead of deleting it, and the next switch-out
 * fills it in place, so a switch costs two hash lookups instead of a
 * lookup, an update (element allocation, bucket lock) and a delete.
 * Wakeups and the recorder's final drain take an entry with off_ns == 0 as
 * absent.
 */
static __always_inline void switch_out(void *ctx, bool preempt, struct task_struct *prev, __u64 now)
{
	struct gt_offcpu_start tmp = {}, *si;
	struct pt_regs *regs;
	long state;
	__u32 tid = prev->pid;

	si = bpf_map_lookup_elem(&offcpu, &tid);
	/* An open entry here means its switch-in was never traced. */
	if (si && si->off_ns)
		emit_missed(prev, si, tid, now);

	state = gt_task_state(prev);
	if (state & TASK_DEAD_BITS) {
		if (si)
			bpf_map_delete_elem(&offcpu, &tid);
		return;
	}
	stat_inc(GT_STAT_SWITCHES);
	if (!si) {
		/* The thread's first switch-out: a full map is the only failure that matters. */
		bpf_map_update_elem(&offcpu, &tid, &tmp, BPF_NOEXIST);
		si = bpf_map_lookup_elem(&offcpu, &tid);
		if (!si) {
			stat_inc(GT_STAT_MAP_FULL);
			return;
		}
	}
	/* Closed while being filled: a concurrent sched_waking (which may run
	 * before the wakee has finished switching out) skips it until off_ns
	 * is set, last. */
	si->off_ns = 0;
	barrier();
	si->wake_ns = 0;
	si->waker_pid = 0;
	si->waker_tid = 0;
	si->waker_syscall = -1;
	si->state = preempt ? 0 : (__u32)state;
	si->flags = (preempt || state == 0) ? GT_OFF_PREEMPTED : 0;
	/* regs_syscall sets them only inside a syscall: none from the last interval. */
	si->args[0] = si->args[1] = si->args[2] = si->args[3] = 0;
	/* prev is still current here, so its pt_regs and stacks are its own. */
	regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	si->syscall_nr = regs_syscall(regs, si->args);
	switch_stacks(ctx, regs, si);
	barrier();
	si->off_ns = now;
	if (cfg_dwarf_bytes)
		snap_ustack(prev->tgid, tid, now, regs);
}

static __always_inline void switch_in(struct task_struct *next, struct pt_regs *next_regs,
				      __u64 now)
{
	__u32 tid = next->pid;
	struct gt_offcpu_start *si;
	struct gt_offcpu *rec;

	si = bpf_map_lookup_elem(&offcpu, &tid);
	if (si && !si->off_ns)
		si = NULL;
	/* Ahead of the interval's record, so the recorder can patch its ustack_id. */
	if (cfg_dwarf_bytes && si && now - si->off_ns >= cfg_dwarf_min_ns)
		send_ustack(tid, si->off_ns, now);
	rec = reserve(sizeof(*rec), GT_STAT_RB_LOST_OFFCPU);
	if (!rec)
		goto out;
	fill_hdr(&rec->hdr, GT_REC_OFFCPU, sizeof(*rec), now);
	rec->pid = next->tgid;
	rec->tid = tid;
	rec->on_ns = now;
	if (si) {
		gt_offcpu_from_start(rec, si);
	} else {
		/* Off-CPU since before tracing began: the start is the capture's edge. */
		rec->off_ns = 0;
		rec->wake_ns = 0;
		rec->state = 0;
		rec->flags = GT_OFF_PARTIAL_START;
		rec->waker_pid = 0;
		rec->waker_tid = 0;
		rec->syscall_nr = regs_syscall(next_regs, rec->args);
		rec->ustack_id = -1;
		rec->kstack_id = -1;
		rec->waker_syscall = -1;
	}
	submit(rec, false);
out:
	if (si)
		si->off_ns = 0;
}

/* Untraced switches, nearly all of the machine's, cost two loads and two tests. */
static __always_inline int handle_switch(void *ctx, bool preempt, struct task_struct *prev,
					 struct task_struct *next)
{
	bool out = is_target(prev->tgid), in = is_target(next->tgid);
	__u64 now;

	if (!out && !in)
		return 0;
	now = bpf_ktime_get_ns();
	if (out)
		switch_out(ctx, preempt, prev, now);
	if (in)
		switch_in(next, (struct pt_regs *)bpf_task_pt_regs(next), now);
	return 0;
}

static __always_inline int handle_waking(struct task_struct *p)
{
	__u32 tid = p->pid;
	struct gt_offcpu_start *si;
	__u64 id;

	if (!is_target(p->tgid))
		return 0;
	si = bpf_map_lookup_elem(&offcpu, &tid);
	/* The first wakeup ends the blocked part; later ones change nothing. */
	if (!si || !si->off_ns || si->wake_ns)
		return 0;
	si->wake_ns = bpf_ktime_get_ns();
	/* The waker's syscall tells a futex_wake or pipe write from an interrupt
	 * that happened to land on a task in some syscall. */
	si->waker_syscall = waker_syscall();
	if (si->waker_syscall < 0) {
		si->flags |= GT_OFF_WAKER_IRQ;
		return 0;
	}
	id = bpf_get_current_pid_tgid();
	si->waker_pid = id >> 32;
	si->waker_tid = (__u32)id;
	return 0;
}

/*
 * sched_wakeup fires when the woken task is on a run queue (after the IPI of
 * a remote wakeup): the run-queue wait starts here, as the scheduler's own
 * run_delay counts it.  sched_waking, earlier and in the waker's context,
 * names the waker.
 */
static __always_inline int handle_wakeup(struct task_struct *p)
{
	__u32 tid = p->pid;
	struct gt_offcpu_start *si;

	if (!is_target(p->tgid))
		return 0;
	si = bpf_map_lookup_elem(&offcpu, &tid);
	if (!si || !si->off_ns || (si->flags & GT_OFF_ENQUEUED))
		return 0;
	si->wake_ns = bpf_ktime_get_ns();
	si->flags |= GT_OFF_ENQUEUED;
	return 0;
}

static __always_inline int handle_fork(struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid);
	__u32 ctgid = BPF_CORE_READ(child, tgid);
	__u32 ptid = BPF_CORE_READ(parent, pid);

	if (!is_target(ptgid))
		return 0;
	if (ctgid == ptgid) {
		emit_task(child, GT_TASK_NEW_THREAD, ptid, NULL, false);
		return 0;
	}
	if (!cfg_follow_children)
		return 0;
	if (ctgid >= GT_TGID_LIMIT || ctgid == cfg_self_tgid)
		return 0;
	__sync_fetch_and_or(target_word(ctgid), 1ULL << (ctgid & 63));
	stack_cfi_fork(ptgid, ctgid);
	/* Urgent: the recorder attaches the new process's uprobes and samples. */
	emit_task(child, GT_TASK_NEW_PROCESS, ptid, NULL, true);
	return 0;
}

static __always_inline int handle_exit(struct task_struct *p)
{
	__u32 tid = BPF_CORE_READ(p, pid);

	if (!is_target(p->tgid))
		return 0;
	bpf_map_delete_elem(&offcpu, &tid);
	if (cfg_dwarf_bytes)
		bpf_map_delete_elem(&ustack_slots, &tid);
	emit_task(p, GT_TASK_EXIT, 0, NULL, false);
	return 0;
}

static __always_inline int handle_exec(struct task_struct *p)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);

	if (!is_target(tgid))
		return 0;
	stack_cfi_exec(tgid);
	emit_task(p, GT_TASK_EXEC, 0, NULL, true);
	return 0;
}

static __always_inline int handle_rename(struct task_struct *t, const char *comm)
{
	if (!is_target(BPF_CORE_READ(t, tgid)))
		return 0;
	emit_task(t, GT_TASK_RENAME, 0, comm, false);
	return 0;
}

/* The scheduler tracepoints, as tp_btf programs (direct BTF access, trusted pointers). */
SEC("tp_btf/sched_switch")
int BPF_PROG(btf_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return handle_switch(ctx, preempt, prev, next);
}

SEC("tp_btf/sched_waking")
int BPF_PROG(btf_sched_waking, struct task_struct *p)
{
	return handle_waking(p);
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(btf_sched_wakeup, struct task_struct *p)
{
	return handle_wakeup(p);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(btf_sched_fork, struct task_struct *parent, struct task_struct *child)
{
	return handle_fork(parent, child);
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(btf_sched_exit, struct task_struct *p)
{
	return handle_exit(p);
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(btf_sched_exec, struct task_struct *p)
{
	return handle_exec(p);
}

SEC("tp_btf/task_rename")
int BPF_PROG(btf_task_rename, struct task_struct *t, const char *comm)
{
	return handle_rename(t, comm);
}
