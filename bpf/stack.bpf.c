// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * stack.bpf.c: stack ids for switch-outs and CPU samples (get_stack), walked
 * by the CFI unwinder (unwind.bpf.h, whose maps live here) or frame pointers.
 */
#include "common.bpf.h"

/*
 * Stack ids that last (issue #12).  A stack trace map never frees a bucket
 * and refuses a stack whose bucket another holds (16384 buckets lost 456816
 * stacks in a minute of switch_stress --mode stacks), and deleting ids the
 * recorder has copied would let a late record (off-CPU records leave at
 * switch-in, the memo reuses ids) name a bucket refilled with another stack.
 * So: walk into a per-CPU buffer, look the frames up in an LRU hash (frames
 * -> id), and on a miss make a new id, never reused in this recording, whose
 * frames go into the ring buffer ahead of the record that carries it.  An
 * eviction costs a resend of the frames, never a lost or wrong stack.  Per
 * walk this hashes a 512-byte key where the trace map hashed the frames; no
 * lookup is added where no walk is.
 */
#define STACK_ID_BITS 30 /* ids stay below the recorder's DWARF ids (1 << 30) */
#define STACK_KEY_PID (1ULL << 63)

/* Set by the recorder: the low bits of an id that name its CPU and slot. */
const volatile __u32 cfg_stack_id_shift = 16;

/*
 * stack_ids' key: the first 64 frames; a deeper stack's last slot holds a
 * hash of the rest (STACK_KEY_DEEP), so that the common stack hashes 512
 * bytes, not GT_STACK_DEPTH's 1 KiB (+0.3-0.7 us per switch measured).
 */
#define STACK_KEY_FRAMES 64
#define STACK_KEY_DEEP	 (1ULL << 62) /* no user address, tgid tag or kernel address */

struct stack_buf {
	struct gt_stack rec;
	__u64 key[STACK_KEY_FRAMES]; /* the key of a stack deeper than that */
	__u32 next;		     /* ids this CPU and slot made so far */
};

/* A slot for switches and one for samples, so a sample that interrupts a walk cannot clobber it. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct stack_buf);
} stack_bufs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__uint(key_size, STACK_KEY_FRAMES * sizeof(__u64)); /* frames, 0-padded (+ tgid) */
	__uint(value_size, sizeof(__s32));
} stack_ids SEC(".maps");

/* The CFI walk (--stacks cfi): after stats, before get_stack, which calls it. */
#include "unwind.bpf.h"

/* The id of the current stack (see stack_ids), its frames sent if the id is new; -1 if none. */
__hidden __s32 get_stack(void *ctx, __u64 flags, bool want, __u32 slot)
{
	struct stack_buf *b;
	__u64 *key;
	bool root = false;
	__s32 *known, id;
	__u32 nr, size;
	long n;

	if (!want)
		return -1;
	b = bpf_map_lookup_elem(&stack_bufs, &slot);
	if (!b)
		return -1;
	n = -1;
	if (cfg_cfi_walk && (flags & BPF_F_USER_STACK))
		n = unw_walk(b->rec.ips, &root);
	/* No mappings known for this process yet (just forked or exec'ed): frame pointers. */
	if (n < 0)
		n = bpf_get_stack(ctx, b->rec.ips, sizeof(b->rec.ips), flags);
	else
		n *= sizeof(__u64);
	if (n <= 0) {
		/* -EFAULT: no user stack to walk (a kernel thread), nothing lost. */
		if (n < 0 && n != -EFAULT)
			stat_inc(GT_STAT_STACK_LOST);
		return -1;
	}
	nr = (__u32)n / sizeof(__u64);
	if (nr > GT_STACK_DEPTH)
		nr = GT_STACK_DEPTH;
	/* Keeps clang from using the unclamped copy later (the CFI walk's count), out of the verifier's sight. */
	barrier_var(nr);
	b->rec.pid = 0;
	b->rec.flags = GT_STACK_REC_KERNEL;
	if (flags & BPF_F_USER_STACK) {
		b->rec.pid = bpf_get_current_pid_tgid() >> 32;
		b->rec.flags = root ? GT_STACK_REC_ROOT : 0;
		/* Same addresses in two processes are two stacks: the key ends with the tgid. */
		/* The mask restates the bound for the verifier, which loses it through the CFI walk. */
		if (nr < GT_STACK_DEPTH)
			b->rec.ips[nr & (GT_STACK_DEPTH - 1)] = STACK_KEY_PID | b->rec.pid;
	}
	key = b->rec.ips;
	if (nr >= STACK_KEY_FRAMES - 1) {
		__u64 h = 0;

		/* Frames 63 on (and the tgid tag) folded into the key's last slot. */
		for (__u32 i = 0; i < STACK_KEY_FRAMES - 1; i++)
			b->key[i] = b->rec.ips[i];
		for (__u32 i = STACK_KEY_FRAMES - 1; i < GT_STACK_DEPTH; i++)
			h = (h ^ b->rec.ips[i]) * 0x100000001b3ULL;
		b->key[STACK_KEY_FRAMES - 1] = (h & (STACK_KEY_DEEP - 1)) | STACK_KEY_DEEP;
		key = b->key;
	}
	known = bpf_map_lookup_elem(&stack_ids, key);
	if (known)
		return *known;
	if (b->next >= (1U << (STACK_ID_BITS - cfg_stack_id_shift))) {
		stat_inc(GT_STAT_STACK_LOST);
		return -1;
	}
	id = (__s32)(b->next++ << cfg_stack_id_shift | bpf_get_smp_processor_id() << 1 | slot);
	size = offsetof(struct gt_stack, ips) + nr * sizeof(__u64);
	b->rec.hdr.type = GT_REC_STACK;
	b->rec.hdr.size = (__u16)size;
	b->rec.hdr.cpu = 0;
	b->rec.hdr.ts_ns = 0;
	b->rec.id = id;
	b->rec.nr = (__u16)nr;
	/* Frames first, id known second: no record can carry an id without them. */
	if (bpf_ringbuf_output(&events, &b->rec, size, BPF_RB_NO_WAKEUP)) {
		stat_inc(GT_STAT_RB_LOST);
		stat_inc(GT_STAT_STACK_LOST);
		return -1;
	}
	bpf_map_update_elem(&stack_ids, key, &id, BPF_NOEXIST);
	return id;
}

/* A fork maps what its parent maps: the CFI walk works before the recorder's rescan. */
__hidden void stack_cfi_fork(__u32 ptgid, __u32 ctgid)
{
	struct gt_cfi_proc *pp;

	if (!cfg_cfi_walk)
		return;
	pp = bpf_map_lookup_elem(&cfi_procs, &ptgid);
	if (pp)
		bpf_map_update_elem(&cfi_procs, &ctgid, pp, BPF_ANY);
}

/* The old image's ranges would misread the new one's stacks: fp walk until the rescan. */
__hidden void stack_cfi_exec(__u32 tgid)
{
	if (cfg_cfi_walk)
		bpf_map_delete_elem(&cfi_procs, &tgid);
}
