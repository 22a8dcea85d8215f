/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * common.bpf.h: what every part of the recorder's BPF object shares.  The
 * parts (sched, samples, snap, stack, uprobes, usdt) are compiled apart and
 * joined by `bpftool gen object` into one object and one skeleton, so a map
 * or variable two parts use is declared here, extern, and defined once, in
 * common.bpf.c; functions one part offers the others are __hidden, which
 * libbpf verifies as static subprograms in the caller's context.
 */
#ifndef GT_COMMON_BPF_H
#define GT_COMMON_BPF_H

#include <vmlinux.h>
#include <linux/errno.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "gaptrace/gaptrace.h"
#include "core_fixes.bpf.h"
#include "gaptrace/gaptrace_syscalls.h"

#define MAX_SYSCALL_NR 1024

/* Set by the recorder between open and load. */
extern const volatile bool cfg_ustacks;
extern const volatile bool cfg_kstacks;
extern const volatile __u64 cfg_wakeup_bytes; /* force a reader wakeup above this */
/* --stacks dwarf: snapshot bytes at switch-out (0: off). */
extern const volatile __u32 cfg_dwarf_bytes;
/* The recorder's own tgid: never traced, even as a descendant of the target (-p $$). */
extern const volatile __u32 cfg_self_tgid;

/* The traced thread groups, one bit per tgid (common.bpf.c says why). */
extern __u64 target_bits[GT_TGID_LIMIT / 64];

struct gt_events_map {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);
};
extern struct gt_events_map events SEC(".maps");

struct gt_stats_map {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, GT_STAT_MAX);
	__type(key, __u32);
	__type(value, __u64);
};
extern struct gt_stats_map stats SEC(".maps");

/*
 * --stacks dwarf: one snapshot slot per traced thread, filled at switch-out
 * and sent at switch-in only if the interval was long, so short switches cost
 * a copy but no ring buffer space.  The recorder sets value_size to
 * offsetof(struct gt_ustack, data) + cfg_dwarf_bytes (no BTF value type, so
 * it may) and max_entries (1 when dwarf is off).
 */
struct gt_ustack_slots_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32)); /* tid */
	__uint(value_size, sizeof(struct gt_ustack));
};
extern struct gt_ustack_slots_map ustack_slots SEC(".maps");

/* get_stack's slots: one for switches and one for samples (stack.bpf.c). */
#define STACK_SLOT_SWITCH 0
#define STACK_SLOT_SAMPLE 1

/* stack.bpf.c: the id of the current stack, its frames sent if the id is new; -1 if none. */
__hidden __s32 get_stack(void *ctx, __u64 flags, bool want, __u32 slot);
/* stack.bpf.c: a fork's child walks with its parent's CFI ranges until the recorder's rescan. */
__hidden void stack_cfi_fork(__u32 ptgid, __u32 ctgid);
/* stack.bpf.c: an exec drops the old image's ranges (frame pointers until the rescan). */
__hidden void stack_cfi_exec(__u32 tgid);

/* snap.bpf.c: fills the thread's snapshot slot at switch-out (prev is still current). */
__hidden void snap_ustack(__u32 tgid, __u32 tid, __u64 now, struct pt_regs *regs);
/* snap.bpf.c: sends the snapshot of the interval that began at off_ns, ahead of its record. */
__hidden void send_ustack(__u32 tid, __u64 off_ns, __u64 now);
/* snap.bpf.c: a snapshot of up to max bytes for a CPU sample, sent just before it. */
__hidden bool sample_ustack(__u64 id, __u64 now, __u32 max);

static __always_inline void stat_inc(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &idx);

	if (v)
		*v += 1;
}

static __always_inline void stat_add(__u32 idx, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &idx);

	if (v)
		*v += n;
}

/* The word of target_bits that holds tgid's bit, bounded where the verifier can see it. */
static __always_inline __u64 *target_word(__u32 tgid)
{
	__u32 i = tgid / 64;

	/* Keeps clang from dropping the mask it proves redundant. */
	barrier_var(i);
	return &target_bits[i & (GT_TGID_LIMIT / 64 - 1)];
}

static __always_inline bool is_target(__u32 tgid)
{
	if (tgid >= GT_TGID_LIMIT || tgid == cfg_self_tgid)
		return false;
	return (*target_word(tgid) >> (tgid & 63)) & 1;
}

/* Reserve with every failure counted: nothing is lost silently. */
static __always_inline void *reserve(__u32 size, __u32 lost_stat)
{
	void *rec = bpf_ringbuf_reserve(&events, size, 0);

	if (!rec) {
		stat_inc(GT_STAT_RB_LOST);
		stat_inc(lost_stat);
	}
	return rec;
}

/* No wakeup per record: the reader polls, and is woken only when data piles up. */
static __always_inline void submit(void *rec, bool urgent)
{
	__u64 flags = BPF_RB_NO_WAKEUP;

	if (bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= cfg_wakeup_bytes) {
		flags = BPF_RB_FORCE_WAKEUP;
		stat_inc(GT_STAT_RB_PRESSURE);
	} else if (urgent) {
		flags = BPF_RB_FORCE_WAKEUP;
	}
	stat_inc(GT_STAT_EVENTS);
	bpf_ringbuf_submit(rec, flags);
}

static __always_inline void fill_hdr(struct gt_hdr *h, __u16 type, __u16 size, __u64 now)
{
	h->type = type;
	h->size = size;
	h->cpu = bpf_get_smp_processor_id();
	h->ts_ns = now;
}

/*
 * The syscall a task is in, from its user register frame: orig_ax holds the
 * number and ax stays -ENOSYS until the syscall returns.  The ax check tells
 * a syscall from a page fault or interrupt, whose orig_ax is an error code.
 */
static __always_inline __s32 regs_syscall(struct pt_regs *regs, __u64 *args)
{
	long ax, nr;

	if (!regs)
		return -1;
	/* Direct loads: regs is a BTF pointer from bpf_task_pt_regs (no helper call each). */
	nr = regs->orig_ax;
	ax = regs->ax;
	if (ax != -ENOSYS || nr < 0 || nr >= MAX_SYSCALL_NR)
		return -1;
	if (args) {
		args[0] = regs->di;
		args[1] = regs->si;
		args[2] = regs->dx;
		/* A timed wait's timeout: select and pselect6 take it 5th. */
		if (nr == GT_NR_select || nr == GT_NR_pselect6)
			args[3] = regs->r8;
		else
			args[3] = regs->r10;
	}
	return (__s32)nr;
}

/* A task event (new thread or process, exit, exec, rename, loader activity). */
static __always_inline void emit_task(struct task_struct *t, __u32 event, __u32 parent_tid,
				      const char *comm, bool urgent)
{
	struct gt_task *rec = reserve(sizeof(*rec), GT_STAT_RB_LOST_OTHER);

	if (!rec)
		return;
	fill_hdr(&rec->hdr, GT_REC_TASK, sizeof(*rec), bpf_ktime_get_ns());
	rec->pid = BPF_CORE_READ(t, tgid);
	rec->tid = BPF_CORE_READ(t, pid);
	rec->event = event;
	rec->parent_tid = parent_tid;
	if (comm)
		bpf_probe_read_kernel_str(rec->comm, sizeof(rec->comm), comm);
	else
		BPF_CORE_READ_STR_INTO(&rec->comm, t, comm);
	submit(rec, urgent);
}

#endif /* GT_COMMON_BPF_H */
