// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * samples.bpf.c: CPU samples of traced threads (per-thread cpu-clock events
 * opened by the recorder), with their stacks, and snapshots where the user
 * code has no frame pointers.
 */
#include "common.bpf.h"

/* Set by the recorder between open and load. */
/* --stacks dwarf: snapshot bytes at CPU samples (0: off). */
const volatile __u32 cfg_dwarf_sample_bytes = 0;
/* Snapshot bytes for CPU samples whose user ip lies in code without frame pointers (0: off). */
const volatile __u32 cfg_fpless_bytes = 0;
/* --cfi-rate: snapshots of fp-less samples per 100 ms, all CPUs together (0: no limit) */
const volatile __u32 cfg_fpless_per_window = 0;

/* Per traced process: its code without frame pointers (struct gt_fpless), set by the recorder. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32); /* tgid */
	__type(value, struct gt_fpless);
} fpless SEC(".maps");

/* The memory syscalls an allocator's internals make (sysmalloc, munmap_chunk, mtrim). */
static __always_inline bool mem_syscall(__s32 nr)
{
	return nr == GT_NR_mmap || nr == GT_NR_munmap || nr == GT_NR_brk || nr == GT_NR_madvise ||
	       nr == GT_NR_mremap || nr == GT_NR_mprotect;
}

/*
 * Whether the sample's user ip lies in code without frame pointers, where
 * the fp walk loses the caller (malloc's internals in a stripped libc).  A
 * sample inside a system call is left to the walk, libc's wrappers leave
 * %rbp alone, unless it is a memory syscall: those come from inside the
 * allocator, whose code used %rbp for something else.
 */
static __always_inline bool fpless_leaf(__u32 tgid, struct pt_regs *regs, bool kernel)
{
	struct gt_fpless *f;
	__s32 nr;
	__u64 ip;

	if (!regs)
		return false;
	nr = kernel ? regs_syscall(regs, NULL) : -1;
	if (nr >= 0 && !mem_syscall(nr))
		return false;
	f = bpf_map_lookup_elem(&fpless, &tgid);
	if (!f)
		return false;
	ip = BPF_CORE_READ(regs, ip);
	for (int i = 0; i < GT_FPLESS_MAX; i++) {
		if (i >= f->nr)
			break;
		if (ip >= f->start[i] && ip < f->end[i])
			return true;
	}
	return false;
}

/*
 * Whether the user %rbp may be a frame pointer: above %sp, within 8 MiB of
 * it, aligned.  Code without frame pointers (glibc's malloc) mostly holds
 * something else there, and walking that costs ~3 us for nothing.
 */
static __always_inline bool fp_plausible(struct pt_regs *regs)
{
	/* Direct loads, as regs_syscall's: regs is a BTF pointer from bpf_task_pt_regs. */
	__u64 sp = regs->sp, bp = regs->bp;

	return bp > sp && bp - sp < (8u << 20) && !(bp & 7);
}

/*
 * The recorder's unwinding costs ~9 us per snapshot: a budget per 100 ms
 * window bounds it however many threads spin in libc.  The window's reset
 * races between CPUs: the budget is approximate, never unbounded.  The
 * recorder lowers fpless_limit (at most cfg_fpless_per_window, set before
 * the load) when its unwinding takes more than its share of a CPU.
 */
__u64 fpless_window;
__u32 fpless_used;
__u32 fpless_limit;

static __always_inline bool fpless_budget(__u64 now)
{
	__u64 w = now / (100 * 1000000ULL);

	if (!cfg_fpless_per_window)
		return true;
	if (fpless_window != w) {
		fpless_window = w;
		fpless_used = 0;
	}
	/* Read, then add (no fetch: BPF v1/v2 atomics return nothing): CPUs racing overshoot by one each. */
	if (fpless_used < fpless_limit) {
		__sync_fetch_and_add(&fpless_used, 1);
		return true;
	}
	stat_inc(GT_STAT_FPLESS_OVER);
	return false;
}

SEC("perf_event")
int on_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__s32 ustack_id = -1, kstack_id;
	struct gt_sample *rec;
	struct pt_regs *regs;
	bool kernel, walk = true;
	__u64 now;

	if (!is_target(id >> 32))
		return 0;
	now = bpf_ktime_get_ns();
	/* The perf ctx allows only full-width loads of the saved registers. */
	kernel = (*(__u64 *)&ctx->regs.cs & 3) == 0;
	regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	if (cfg_dwarf_sample_bytes) {
		sample_ustack(id, now, cfg_dwarf_sample_bytes);
	} else if (cfg_fpless_bytes && fpless_leaf(id >> 32, regs, kernel) && fpless_budget(now)) {
		stat_inc(GT_STAT_FPLESS_SAMPLES);
		walk = !sample_ustack(id, now, cfg_fpless_bytes) || fp_plausible(regs);
	}
	/*
	 * Walked before the record is reserved: a new id's frames must come
	 * first.  With a snapshot too where %rbp may be a frame pointer: the
	 * snapshot's CFI unwinding gives the frames without frame pointers, but
	 * only as deep as its bytes reach, and the recorder joins the walk's
	 * frames beyond them where the two agree (record_sink__stitch).
	 */
	if (walk)
		ustack_id = get_stack(ctx, BPF_F_USER_STACK, cfg_ustacks, STACK_SLOT_SAMPLE);
	kstack_id = kernel ? get_stack(ctx, 0, cfg_kstacks, STACK_SLOT_SAMPLE) : -1;
	rec = reserve(sizeof(*rec), GT_STAT_RB_LOST_SAMPLE);
	if (!rec)
		return 0;
	fill_hdr(&rec->hdr, GT_REC_SAMPLE, sizeof(*rec), now);
	rec->pid = id >> 32;
	rec->tid = (__u32)id;
	rec->flags = kernel ? GT_SAMPLE_KERNEL : 0;
	rec->ip = ctx->regs.ip;
	rec->pcount = gt_task_pcount(bpf_get_current_task_btf());
	rec->syscall_nr = kernel ? regs_syscall(regs, NULL) : -1;
	rec->ustack_id = ustack_id;
	rec->kstack_id = kstack_id;
	submit(rec, false);
	return 0;
}
