/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * unwind.bpf.h: the user stack walk of --stacks cfi (the default): frame by
 * frame, with the rows the recorder compiled from each object's CFI
 * (user/record/cfimap.c) where it has them, frame pointers where the object
 * has those instead.
 *
 * A header included by gaptrace.bpf.c, not an object of its own linked with
 * `bpftool gen object`: the walk uses that file's stats map and fills its
 * per-CPU stack buffers, and the static linker would need every shared map
 * declared in both halves, extern, which this libbpf does not merge for maps
 * of map-in-map type.  One skeleton, one definition of each map.
 */
#ifndef UNWIND_BPF_H
#define UNWIND_BPF_H

#include "gaptrace/gaptrace_cfi.h"

/* Set by the recorder: walk user stacks here instead of bpf_get_stack's frame pointers. */
const volatile bool cfg_cfi_walk = false;

/* One object's rows, sorted by pc: an array the recorder sizes and fills. */
struct cfi_rows {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_INNER_MAP | BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct gt_cfi_row));
};

/* Object id -> its rows; shared by every process mapping the same file. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH_OF_MAPS);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__array(values, struct cfi_rows);
} cfi_tables SEC(".maps");

/* (object id, page of code) -> the rows covering it (gaptrace/gaptrace_cfi.h). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1 << 20);
	__type(key, struct gt_cfi_page_key);
	__type(value, struct gt_cfi_page);
} cfi_pages SEC(".maps");

/* tgid -> its executable mappings and their objects. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct gt_cfi_proc);
} cfi_procs SEC(".maps");

struct unw_ctx {
	__u64 *ips;
	struct gt_cfi_proc *proc;
	__u64 ip, sp, bp;
	__u64 ra_at; /* where the last return address was read (uretprobe fix-up) */
	__u32 n;
	__u32 end;  /* enum gt_unw_end + 1, 0 while walking */
	bool exact; /* ip is the interrupted instruction, not a return address */
};

/*
 * 1 if a <= b, else 0, without a branch: a verifier explores both sides of
 * every branch in a bounded loop, so a branchy binary search of k steps
 * costs it 2^k paths.  Both values are below 2^63 (user addresses, pcs).
 */
static __always_inline __u64 le_bit(__u64 a, __u64 b)
{
	return ((b - a) >> 63) ^ 1;
}

/* The mapping holding ip, by a branchless binary search over the sorted ranges. */
static __always_inline struct gt_cfi_map *unw_map(struct gt_cfi_proc *p, __u64 ip)
{
	__u32 base = 0, len = p->nr, half;
	struct gt_cfi_map *m;

	if (!len)
		return NULL;
	if (len > GT_CFI_MAPS_MAX)
		len = GT_CFI_MAPS_MAX;
	/* base: the last range starting at or before ip (or 0). */
	for (int k = 0; k <= GT_CFI_MAPS_SHIFT; k++) {
		half = len / 2;
		base +=
		    half & -(__u32)le_bit(p->maps[(base + half) & (GT_CFI_MAPS_MAX - 1)].start, ip);
		len -= half;
	}
	m = &p->maps[base & (GT_CFI_MAPS_MAX - 1)];
	return ip >= m->start && ip < m->end ? m : NULL;
}

/*
 * A return address the uprobes trampoline took over (a uretprobe pending on
 * the function, as the default probes on munmap or malloc_trim are): the
 * kernel keeps the original and the stack slot it came from.
 */
static __always_inline bool unw_uretprobe(struct unw_ctx *u)
{
	struct return_instance *ri = gt_uretprobe_returns(bpf_get_current_task_btf());

	for (int i = 0; i < 8 && ri; i++) {
		if (BPF_CORE_READ(ri, stack) == u->ra_at) {
			u->ip = BPF_CORE_READ(ri, orig_ret_vaddr);
			return true;
		}
		ri = BPF_CORE_READ(ri, next);
	}
	return false;
}

/* The row covering pc (an ELF address) in object obj's table; NULL with *end set if none. */
static __always_inline struct gt_cfi_row *unw_row(__u32 obj, __u32 pc, __u32 *end)
{
	struct gt_cfi_page_key pk = {.obj = obj, .page = pc >> GT_CFI_PAGE_SHIFT};
	struct gt_cfi_page *pg;
	struct gt_cfi_row *r;
	__u32 lo, len, half, mid;
	void *rows;

	rows = bpf_map_lookup_elem(&cfi_tables, &obj);
	if (!rows) {
		*end = GT_UNW_NO_TABLE + 1;
		return NULL;
	}
	pg = bpf_map_lookup_elem(&cfi_pages, &pk);
	if (!pg) {
		*end = GT_UNW_NO_ROW + 1;
		return NULL;
	}
	lo = pg->lo;
	len = pg->hi - pg->lo + 1;
	/* The last row at or before pc, branchless as unw_map; a page holds at most 4097 rows. */
	for (int k = 0; k < 13; k++) {
		half = len / 2;
		mid = lo + half;
		r = bpf_map_lookup_elem(rows, &mid);
		if (!r)
			break;
		lo += half & -(__u32)le_bit(r->pc, pc);
		len -= half;
	}
	r = bpf_map_lookup_elem(rows, &lo);
	if (!r || r->pc > pc || r->kind == GT_CFI_NONE) {
		*end = GT_UNW_NO_ROW + 1;
		return NULL;
	}
	return r;
}

/* One frame: record ip, find the caller's ip, sp and bp.  1 stops the loop. */
static long unw_step(__u64 i, void *arg)
{
	struct unw_ctx *u = arg;
	struct gt_cfi_map *m;
	struct gt_cfi_row *r;
	__u64 cfa, ra = 0, bp, pc;
	__u32 n = u->n;

	if (n >= GT_STACK_DEPTH) {
		u->end = GT_UNW_DEPTH + 1;
		return 1;
	}
	m = unw_map(u->proc, u->ip);
	if (!m && !u->exact && u->ra_at && unw_uretprobe(u))
		m = unw_map(u->proc, u->ip);
	u->ips[n & (GT_STACK_DEPTH - 1)] = u->ip;
	u->n = n + 1;
	if (!m) {
		u->end = GT_UNW_NO_MAPPING + 1;
		return 1;
	}
	if (m->obj == GT_CFI_OBJ_FP) {
		/* Frame pointers: the caller's bp at bp, its return address above. */
		if (u->bp < u->sp || (u->bp & 7) ||
		    bpf_probe_read_user(&ra, sizeof(ra), (void *)(u->bp + 8)) ||
		    bpf_probe_read_user(&bp, sizeof(bp), (void *)u->bp)) {
			u->end = GT_UNW_BAD_READ + 1;
			return 1;
		}
		u->ra_at = u->bp + 8;
		u->sp = u->bp + 16;
		u->bp = bp;
		goto next;
	}
	/* A return address is the instruction after the call: its row is the call's. */
	pc = u->ip - m->bias - (u->exact ? 0 : 1);
	if (pc >> 32) {
		u->end = GT_UNW_NO_ROW + 1;
		return 1;
	}
	r = unw_row(m->obj, (__u32)pc, &u->end);
	if (!r)
		return 1;
	switch (r->kind) {
	case GT_CFI_RSP:
		cfa = u->sp + (__s64)r->cfa8 * 8;
		break;
	case GT_CFI_RBP:
		cfa = u->bp + (__s64)r->cfa8 * 8;
		break;
	case GT_CFI_PLT:
		cfa = u->sp + 8 + ((pc & 15) >= (__u64)r->cfa8 ? 8 : 0);
		break;
	case GT_CFI_SIGNAL:
		/* rt_sigframe: the ucontext at sp, its mcontext's rbp, rsp, rip at 120, 160, 168. */
		if (bpf_probe_read_user(&bp, sizeof(bp), (void *)(u->sp + 120)) ||
		    bpf_probe_read_user(&cfa, sizeof(cfa), (void *)(u->sp + 160)) ||
		    bpf_probe_read_user(&ra, sizeof(ra), (void *)(u->sp + 168))) {
			u->end = GT_UNW_BAD_READ + 1;
			return 1;
		}
		u->ip = ra;
		u->sp = cfa;
		u->bp = bp;
		u->ra_at = 0;
		u->exact = true;
		return 0;
	case GT_CFI_ROOT:
		u->end = GT_UNW_ROOT + 1;
		return 1;
	default:
		u->end = GT_UNW_UNSUPPORTED + 1;
		return 1;
	}
	/* The stack only grows down: a caller's frame lies above, or the rows lie. */
	if (cfa <= u->sp || bpf_probe_read_user(&ra, sizeof(ra), (void *)(cfa - 8))) {
		u->end = GT_UNW_BAD_READ + 1;
		return 1;
	}
	if (r->rbp8 &&
	    bpf_probe_read_user(&u->bp, sizeof(u->bp), (void *)(cfa + (__s64)r->rbp8 * 8))) {
		u->end = GT_UNW_BAD_READ + 1;
		return 1;
	}
	u->ra_at = cfa - 8;
	u->sp = cfa;
next:
	u->exact = false;
	u->ip = ra;
	if (!ra) {
		u->end = GT_UNW_ROOT + 1;
		return 1;
	}
	return 0;
}

/*
 * Walks the current task's user stack into ips (GT_STACK_DEPTH of room):
 * returns the frames, 0 if there is no user stack to walk or no mappings of
 * the process are known (a process too new: the fp walk does it instead, -1).
 * *root: the walk ended at the frame the CFI marks outermost (or a zero
 * return address), the thread's root.
 */
static __always_inline int unw_walk(__u64 *ips, bool *root)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct unw_ctx u = {.ips = ips, .exact = true};

	if (!regs)
		return 0;
	u.proc = bpf_map_lookup_elem(&cfi_procs, &tgid);
	if (!u.proc)
		return -1;
	u.ip = regs->ip;
	u.sp = regs->sp;
	u.bp = regs->bp;
	if (!u.ip)
		return 0;
	/* The frames are a hash key (stack_ids): zeros after the last, as bpf_get_stack leaves. */
	__builtin_memset(ips, 0, GT_STACK_DEPTH * sizeof(__u64));
	bpf_loop(GT_STACK_DEPTH + 1, unw_step, &u, 0);
	stat_inc(GT_STAT_UNW_WALKS);
	stat_add(GT_STAT_UNW_FRAMES, u.n);
	if (u.end)
		stat_inc(GT_STAT_UNW_ROOT + u.end - 1);
	*root = u.end == GT_UNW_ROOT + 1;
	return (int)u.n;
}

#endif /* UNWIND_BPF_H */
