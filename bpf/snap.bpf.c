// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * snap.bpf.c: user stack snapshots for --stacks dwarf and for CPU samples in
 * code without frame pointers: registers and stack bytes the recorder unwinds.
 */
#include "common.bpf.h"

/* Per-CPU scratch of ustack_slots' size: a slot's first value, sample snapshots. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct gt_ustack));
} ustack_scratch SEC(".maps");

/* The user register file in x86-64 DWARF order, as libdw's unwinder wants it. */
static __always_inline void copy_uregs(__u64 *r, struct pt_regs *regs)
{
	r[0] = BPF_CORE_READ(regs, ax);
	r[1] = BPF_CORE_READ(regs, dx);
	r[2] = BPF_CORE_READ(regs, cx);
	r[3] = BPF_CORE_READ(regs, bx);
	r[4] = BPF_CORE_READ(regs, si);
	r[5] = BPF_CORE_READ(regs, di);
	r[6] = BPF_CORE_READ(regs, bp);
	r[7] = BPF_CORE_READ(regs, sp);
	r[8] = BPF_CORE_READ(regs, r8);
	r[9] = BPF_CORE_READ(regs, r9);
	r[10] = BPF_CORE_READ(regs, r10);
	r[11] = BPF_CORE_READ(regs, r11);
	r[12] = BPF_CORE_READ(regs, r12);
	r[13] = BPF_CORE_READ(regs, r13);
	r[14] = BPF_CORE_READ(regs, r14);
	r[15] = BPF_CORE_READ(regs, r15);
	r[16] = BPF_CORE_READ(regs, ip);
}

/*
 * Copies up to max bytes of the current task's user stack from sp upward.
 * One read does it unless the stack mapping ends sooner (the main thread's
 * top, a thread stack's end): then keep whole pages up to that end, which
 * hold the outermost frames, and remember the end in *end so that the
 * thread's next copy stops there at once instead of faulting first.  max is
 * a load-time constant (frozen rodata), so the verifier bounds every length
 * by it.
 */
static __always_inline __u32 copy_ustack(__u8 *dst, __u64 sp, __u32 max, __u64 *end)
{
	__u32 head = 4096 - (__u32)(sp & 4095), len = max;

	if (!max || !sp)
		return 0;
	if (*end > sp && *end - sp < max)
		len = (__u32)(*end - sp);
	if (len > max)
		len = max;
	if (!bpf_probe_read_user(dst, len, (const void *)sp))
		return len;
	*end = 0;
	for (int k = GT_USTACK_MAX / 4096; k >= 0; k--) {
		len = head + (__u32)k * 4096;
		if (len >= max)
			continue;
		if (!bpf_probe_read_user(dst, len, (const void *)sp)) {
			*end = sp + len;
			return len;
		}
	}
	return 0;
}

/*
 * A function under a uretprobe (the default probes: munmap, malloc_trim,
 * ...) has its return address on the user stack replaced by the uprobes
 * trampoline until it returns: put the original back into the copy, or the
 * unwinder stops there.  The kernel keeps each hijacked slot's address
 * (return_instance::stack, sp at function entry) and original value.
 */
static __always_inline void fix_uretprobes(__u8 *data, __u64 sp, __u32 len, __u32 max)
{
	struct return_instance *ri = gt_uretprobe_returns(bpf_get_current_task_btf());
	__u64 slot, off;

	for (int i = 0; i < 8 && ri; i++) {
		slot = BPF_CORE_READ(ri, stack);
		off = slot - sp;
		if (slot >= sp && off + 8 <= len && off <= max - 8 && !(off & 7))
			*(__u64 *)(data + off) = BPF_CORE_READ(ri, orig_ret_vaddr);
		ri = BPF_CORE_READ(ri, next);
	}
}

/* Fills the thread's snapshot slot at switch-out (prev is still current). */
__hidden void snap_ustack(__u32 tgid, __u32 tid, __u64 now, struct pt_regs *regs)
{
	struct gt_ustack *s;
	__u32 zero = 0;

	if (!regs)
		return;
	s = bpf_map_lookup_elem(&ustack_slots, &tid);
	if (!s) {
		void *init = bpf_map_lookup_elem(&ustack_scratch, &zero);

		if (!init)
			return;
		bpf_map_update_elem(&ustack_slots, &tid, init, BPF_NOEXIST);
		s = bpf_map_lookup_elem(&ustack_slots, &tid);
		if (!s) {
			stat_inc(GT_STAT_USTACK_FULL);
			return;
		}
		/* The scratch it was made from is another thread's. */
		s->stack_end = 0;
	}
	s->pid = tgid;
	s->tid = tid;
	s->off_ns = now;
	s->flags = 0;
	copy_uregs(s->regs, regs);
	s->stack_size = copy_ustack(s->data, s->regs[7], cfg_dwarf_bytes, &s->stack_end);
	fix_uretprobes(s->data, s->regs[7], s->stack_size, cfg_dwarf_bytes);
}

/* Sends the snapshot of the interval that began at off_ns, ahead of its record. */
__hidden void send_ustack(__u32 tid, __u64 off_ns, __u64 now)
{
	struct gt_ustack *s = bpf_map_lookup_elem(&ustack_slots, &tid);
	__u32 n;

	if (!s || s->off_ns != off_ns)
		return;
	n = s->stack_size;
	if (n > cfg_dwarf_bytes)
		n = cfg_dwarf_bytes;
	fill_hdr(&s->hdr, GT_REC_USTACK, (__u16)(offsetof(struct gt_ustack, data) + n), now);
	if (bpf_ringbuf_output(&events, s, offsetof(struct gt_ustack, data) + n,
			       BPF_RB_NO_WAKEUP)) {
		stat_inc(GT_STAT_USTACK_LOST);
		return;
	}
	stat_inc(GT_STAT_USTACK_SENT);
	stat_add(GT_STAT_USTACK_BYTES, n);
}

/*
 * --dwarf-samples: a snapshot for every sample, sent just before it.  The
 * interrupted task's user registers are its pt_regs whether the sample hit
 * user or kernel mode.
 */
__hidden bool sample_ustack(__u64 id, __u64 now, __u32 max)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	struct gt_ustack *s;
	__u32 zero = 0, n;

	s = bpf_map_lookup_elem(&ustack_scratch, &zero);
	if (!s || !regs)
		return false;
	s->pid = id >> 32;
	s->tid = (__u32)id;
	s->off_ns = now;
	s->flags = GT_USTACK_SAMPLE;
	copy_uregs(s->regs, regs);
	/* The scratch is per CPU, not per thread: no end to remember. */
	s->stack_end = 0;
	n = copy_ustack(s->data, s->regs[7], max, &s->stack_end);
	if (n > max)
		n = max;
	fix_uretprobes(s->data, s->regs[7], n, max);
	s->stack_size = n;
	fill_hdr(&s->hdr, GT_REC_USTACK, (__u16)(offsetof(struct gt_ustack, data) + n), now);
	if (bpf_ringbuf_output(&events, s, offsetof(struct gt_ustack, data) + n,
			       BPF_RB_NO_WAKEUP)) {
		stat_inc(GT_STAT_USTACK_LOST);
		return false;
	}
	stat_inc(GT_STAT_USTACK_SENT);
	stat_add(GT_STAT_USTACK_BYTES, n);
	return true;
}
