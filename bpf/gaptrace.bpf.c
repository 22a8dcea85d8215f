// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * gaptrace.bpf.c: the kernel half of the recorder.  Pairs each traced
 * thread's switch-out with its wakeup and switch-in and emits one record per
 * off-CPU interval; adds CPU samples, uprobe call pairs and the gaptrace USDT
 * probes.  Everything is filtered to the traced thread groups in the kernel.
 */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/usdt.bpf.h>

#include "gaptrace.h"
#include "core_fixes.bpf.h"
#include "gaptrace_syscalls.bpf.h"
#include "gaptrace_waits.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define ENOSYS	       38
#define MAX_SYSCALL_NR 1024
#define TASK_DEAD_BITS 0x0080 /* TASK_DEAD: the task is exiting, no switch-in follows */

/* Set by the recorder between open and load. */
const volatile bool cfg_ustacks = true;
const volatile bool cfg_kstacks = true;
const volatile __u64 cfg_wakeup_bytes = 1 << 20; /* force a reader wakeup above this */
const volatile bool cfg_follow_children = true;
/* --stacks dwarf: snapshot bytes at switch-out (0: off), at CPU samples (0: off). */
const volatile __u32 cfg_dwarf_bytes = 0;
const volatile __u32 cfg_dwarf_sample_bytes = 0;
const volatile __u64 cfg_dwarf_min_ns = 1000000; /* shorter intervals drop theirs */
/* Snapshot bytes for CPU samples whose user ip lies in code without frame pointers (0: off). */
const volatile __u32 cfg_fpless_bytes = 0;
/* --cfi-rate: snapshots of fp-less samples per 100 ms, all CPUs together (0: no limit) */
const volatile __u32 cfg_fpless_per_window = 0;
/* The recorder's own tgid: never traced, even as a descendant of the target (-p $$). */
const volatile __u32 cfg_self_tgid = 0;

/*
 * The traced thread groups, one bit per tgid (pid_max is at most 2^22):
 * every sched_switch on the machine asks twice, so the answer is one load
 * from .bss instead of two hash lookups (about 40 ns each), which is what
 * untraced processes pay.  The recorder sets bits through the mmapped .bss;
 * both sides use atomic OR.
 */
__u64 target_bits[GT_TGID_LIMIT / 64];

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32); /* tid */
	__type(value, struct gt_offcpu_start);
} offcpu SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64); /* tid << 32 | func_id */
	__type(value, struct gt_call_start);
} calls SEC(".maps");

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
#define STACK_ID_BITS	  30 /* ids stay below the recorder's DWARF ids (1 << 30) */
#define STACK_KEY_PID	  (1ULL << 63)
#define STACK_SLOT_SWITCH 0
#define STACK_SLOT_SAMPLE 1

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

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);
} events SEC(".maps");

/*
 * --stacks dwarf: one snapshot slot per traced thread, filled at switch-out
 * and sent at switch-in only if the interval was long, so short switches cost
 * a copy but no ring buffer space.  The recorder sets value_size to
 * offsetof(struct gt_ustack, data) + cfg_dwarf_bytes (no BTF value type, so
 * it may) and max_entries (1 when dwarf is off).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32)); /* tid */
	__uint(value_size, sizeof(struct gt_ustack));
} ustack_slots SEC(".maps");

/* Per traced process: its code without frame pointers (struct gt_fpless), set by the recorder. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32); /* tgid */
	__type(value, struct gt_fpless);
} fpless SEC(".maps");

/* Per-CPU scratch of the same size: a slot's first value, sample snapshots. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct gt_ustack));
} ustack_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, GT_STAT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

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

/* The CFI walk (--stacks cfi): after stats, before get_stack, which calls it. */
#include "unwind.bpf.h"

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

/* The id of the current stack (see stack_ids), its frames sent if the id is new; -1 if none. */
static __always_inline __s32 get_stack(void *ctx, __u64 flags, bool want, __u32 slot)
{
	struct stack_buf *b;
	__u64 *key;
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
		n = unw_walk(b->rec.ips);
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
		b->rec.flags = 0;
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
/* ---- user stack snapshots (--stacks dwarf) ---- */

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
static __always_inline void snap_ustack(__u32 tgid, __u32 tid, __u64 now, struct pt_regs *regs)
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
static __always_inline void send_ustack(__u32 tid, __u64 off_ns, __u64 now)
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

/* ---- scheduler ---- */

/*
 * When the task went on CPU, for an interval whose switch-in tracepoint never
 * fired (seen on Firecracker guests: switches away from some host-agent
 * threads are not traced).  The scheduler's own bookkeeping still knows:
 * sched_info.last_arrival is the rq clock at switch-in, rq->clock is the rq
 * clock now, so the switch-in happened (rq->clock - last_arrival) ago.
 */
static __always_inline __u64 estimate_switch_in(struct task_struct *prev, __u64 now)
{
	struct rq *rq = BPF_CORE_READ(prev, se.cfs_rq, rq);
	__u64 arrival = BPF_CORE_READ(prev, sched_info.last_arrival);
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
	/* A fork maps what its parent maps: the CFI walk works before the recorder's rescan. */
	if (cfg_cfi_walk) {
		struct gt_cfi_proc *pp = bpf_map_lookup_elem(&cfi_procs, &ptgid);

		if (pp)
			bpf_map_update_elem(&cfi_procs, &ctgid, pp, BPF_ANY);
	}
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
	/* The old image's ranges would misread the new one's stacks: fp walk until the rescan. */
	if (cfg_cfi_walk)
		bpf_map_delete_elem(&cfi_procs, &tgid);
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

/* ---- CPU samples (per-thread cpu-clock events opened by the recorder) ---- */

/*
 * --dwarf-samples: a snapshot for every sample, sent just before it.  The
 * interrupted task's user registers are its pt_regs whether the sample hit
 * user or kernel mode.
 */
static __always_inline bool sample_ustack(__u64 id, __u64 now, __u32 max)
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
	rec->pcount = BPF_CORE_READ(bpf_get_current_task_btf(), sched_info.pcount);
	rec->syscall_nr = kernel ? regs_syscall(regs, NULL) : -1;
	rec->ustack_id = ustack_id;
	rec->kstack_id = kstack_id;
	submit(rec, false);
	return 0;
}

/* ---- uprobes on rare heavy functions: entry and return paired here ---- */

static __always_inline int on_call_enter(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u64 key = (id << 32) | (bpf_get_attach_cookie(ctx) & 0xffffffff);
	struct gt_call_start cs = {
	    .enter_ns = bpf_ktime_get_ns(),
	    .arg0 = PT_REGS_PARM1(ctx),
	};

	if (bpf_map_update_elem(&calls, &key, &cs, BPF_ANY))
		stat_inc(GT_STAT_MAP_FULL);
	return 0;
}

static __always_inline int on_call_exit(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 func = bpf_get_attach_cookie(ctx) & 0xffffffff;
	__u64 key = (id << 32) | func;
	struct gt_call_start *cs;
	struct gt_call *rec;
	__u64 now = bpf_ktime_get_ns();

	cs = bpf_map_lookup_elem(&calls, &key);
	if (!cs)
		return 0;
	rec = reserve(sizeof(*rec), GT_STAT_RB_LOST_CALL);
	if (rec) {
		fill_hdr(&rec->hdr, GT_REC_CALL, sizeof(*rec), now);
		rec->pid = id >> 32;
		rec->tid = (__u32)id;
		rec->enter_ns = cs->enter_ns;
		rec->exit_ns = now;
		rec->func_id = func;
		rec->flags = 0;
		rec->arg0 = cs->arg0;
		rec->ret = PT_REGS_RC(ctx);
		submit(rec, false);
	}
	bpf_map_delete_elem(&calls, &key);
	return 0;
}

/*
 * Two forms of each: single uprobes (a perf event per function and process)
 * and multi-uprobe links (one per object and process, kernel 6.6+); the
 * recorder loads the form the kernel takes (attacher__choose_programs).
 */
SEC("uprobe")
int BPF_KPROBE(call_enter)
{
	return on_call_enter(ctx);
}

SEC("uretprobe")
int BPF_KRETPROBE(call_exit)
{
	return on_call_exit(ctx);
}

SEC("uprobe.multi")
int BPF_KPROBE(call_enter_multi)
{
	return on_call_enter(ctx);
}

SEC("uretprobe.multi")
int BPF_KRETPROBE(call_exit_multi)
{
	return on_call_exit(ctx);
}

/*
 * ---- the loader's _dl_debug_state: called around every change of its link
 * map (twice per dlopen), so rare; it tells the recorder at once that a
 * library may bring new probe sites, where a periodic maps walk took up to
 * its period.
 */
static __always_inline int on_loader_state(void)
{
	struct task_struct *t = bpf_get_current_task_btf();

	if (!is_target(BPF_CORE_READ(t, tgid)))
		return 0;
	emit_task(t, GT_TASK_LOADED, 0, NULL, true);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(loader_state)
{
	return on_loader_state();
}

SEC("uprobe.multi")
int BPF_KPROBE(loader_state_multi)
{
	return on_loader_state();
}

#include "gaptrace_maps.bpf.h" /* new executable mappings: a notice to the recorder */

/* ---- the gaptrace USDT interface (cupti/gaptrace-usdt.h) ---- */

static __always_inline int emit_unit(__u64 unit_id, __u32 begin)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct gt_unit *rec = reserve(sizeof(*rec), GT_STAT_RB_LOST_OTHER);

	if (!rec)
		return 0;
	fill_hdr(&rec->hdr, GT_REC_UNIT, sizeof(*rec), bpf_ktime_get_ns());
	rec->pid = id >> 32;
	rec->tid = (__u32)id;
	rec->unit_id = unit_id;
	rec->begin = begin;
	rec->_pad = 0;
	submit(rec, false);
	return 0;
}

SEC("usdt")
int BPF_USDT(usdt_unit_begin, __u64 unit_id)
{
	return emit_unit(unit_id, 1);
}

SEC("usdt")
int BPF_USDT(usdt_unit_end, __u64 unit_id)
{
	return emit_unit(unit_id, 0);
}

SEC("usdt")
int BPF_USDT(usdt_gpu_launch, __u32 device, __u32 stream, __u64 op_id)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct gt_gpu_launch *rec = reserve(sizeof(*rec), GT_STAT_RB_LOST_GPU);

	if (!rec)
		return 0;
	fill_hdr(&rec->hdr, GT_REC_GPU_LAUNCH, sizeof(*rec), bpf_ktime_get_ns());
	rec->pid = id >> 32;
	rec->tid = (__u32)id;
	rec->device = device;
	rec->stream = stream;
	rec->op_id = op_id;
	submit(rec, false);
	return 0;
}

SEC("usdt")
int BPF_USDT(usdt_gpu_op, __u32 device, __u32 stream, __u64 op_id, __u64 start_ns, __u64 end_ns)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct gt_gpu_op *rec = reserve(sizeof(*rec), GT_STAT_RB_LOST_GPU);

	if (!rec)
		return 0;
	__builtin_memset(&rec->rec, 0, sizeof(rec->rec));
	fill_hdr(&rec->hdr, GT_REC_GPU_OP, sizeof(*rec), bpf_ktime_get_ns());
	rec->pid = id >> 32;
	rec->tid = (__u32)id;
	rec->rec.start_ns = start_ns;
	rec->rec.end_ns = end_ns;
	rec->rec.op_id = op_id;
	rec->rec.device = device;
	rec->rec.stream = stream;
	rec->rec.kind = GAPTRACE_GPU_KERNEL;
	submit(rec, false);
	return 0;
}

SEC("usdt")
int BPF_USDT(usdt_gpu_batch, const void *recs, __u32 count, __u32 rec_size)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct gt_gpu_batch *rec;
	__u32 n = count, i, copied = 0;

	/* Records only grow at their end: read the fields we know, skip the rest. */
	if (!recs || !count || rec_size < 48 || rec_size > 4096)
		return 0;
	if (n > GT_GPU_BATCH_MAX)
		n = GT_GPU_BATCH_MAX;
	rec = reserve(sizeof(*rec), GT_STAT_RB_LOST_GPU);
	if (!rec)
		return 0;
	fill_hdr(&rec->hdr, GT_REC_GPU_BATCH, sizeof(*rec), bpf_ktime_get_ns());
	rec->pid = id >> 32;
	rec->tid = (__u32)id;
	rec->rec_size = rec_size;
	rec->dropped = count - n;
	rec->_pad = 0;
	if (count > n)
		stat_inc(GT_STAT_GPU_TRUNC);
	for (i = 0; i < GT_GPU_BATCH_MAX; i++) {
		if (i >= n)
			break;
		if (bpf_probe_read_user(rec->data + i * GT_GPU_REC_SIZE, GT_GPU_REC_SIZE,
					(const char *)recs + (__u64)i * rec_size))
			break;
		copied++;
	}
	rec->count = copied;
	submit(rec, false);
	return 0;
}

SEC("usdt")
int BPF_USDT(usdt_gpu_name, __u32 name_id, const char *name)
{
	struct gt_name *rec = reserve(sizeof(*rec), GT_STAT_RB_LOST_OTHER);
	long len;

	if (!rec)
		return 0;
	fill_hdr(&rec->hdr, GT_REC_NAME, sizeof(*rec), bpf_ktime_get_ns());
	rec->pid = bpf_get_current_pid_tgid() >> 32;
	rec->name_id = name_id;
	rec->_pad = 0;
	len = bpf_probe_read_user_str(rec->name, sizeof(rec->name), name);
	rec->len = len > 0 ? len - 1 : 0;
	if (len <= 0)
		rec->name[0] = '\0';
	submit(rec, false);
	return 0;
}
