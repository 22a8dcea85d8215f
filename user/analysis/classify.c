// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * classify.c: what a blocked interval or a CPU sample was doing, from the
 * syscall at switch-out (x86-64 numbers), the futex operation and value, and
 * the frames of its stacks.  The rules are DESIGN.md's "Gaps and their
 * attribution"; each table says why an entry is there.
 */
#include <string.h>

#include "gaptrace/gaptrace.h"
#include "gaptrace/gaptrace_syscalls.h"
#include "gaptrace/gaptrace_waits.h"
#include "analysis/classify.h"
#include "analysis/model.h"
#include "support/util.h"

/* Futex commands (op & FUTEX_CMD_MASK). */
#define FUTEX_WAIT	      0
#define FUTEX_LOCK_PI	      6
#define FUTEX_TRYLOCK_PI      8
#define FUTEX_WAIT_BITSET     9
#define FUTEX_WAIT_REQUEUE_PI 11
#define FUTEX_LOCK_PI2	      13
#define FUTEX_CMD_MASK	      0x7f
/* glibc's low-level lock and Rust's std mutex wait on the contended value 2. */
#define FUTEX_CONTENDED 2

/* model.futex_seen: the values a futex word was waited on with. */
#define FUTEX_SEEN_LOCK	 0x1 /* 0, 1 or 2: the states of a lock word */
#define FUTEX_SEEN_COUNT 0x2 /* any other: the word counts (condvar sequence, parker) */

static bool is_read(int32_t nr)
{
	return nr == GT_NR_read || nr == GT_NR_readv || nr == GT_NR_recvfrom ||
	       nr == GT_NR_recvmsg || nr == GT_NR_recvmmsg;
}

static bool is_write(int32_t nr)
{
	return nr == GT_NR_write || nr == GT_NR_writev || nr == GT_NR_sendto ||
	       nr == GT_NR_sendmsg || nr == GT_NR_sendmmsg || nr == GT_NR_splice ||
	       nr == GT_NR_sendfile || nr == GT_NR_close;
}

/*
 * A futex wait is ended by futex_wake (or a thread exiting, for join); a
 * waker caught in any other syscall was an interrupt landing on it.
 */
static bool futex_waker(const struct m_off *o)
{
	int32_t w = o->waker_syscall;

	return w == GT_NR_futex || w == GT_NR_exit || w == GT_NR_exit_group ||
	       w == GT_NR_futex_wake;
}

static bool futex_is_wait(const struct m_off *o)
{
	uint32_t cmd = (uint32_t)o->args[1] & FUTEX_CMD_MASK;

	return cmd == FUTEX_WAIT || cmd == FUTEX_WAIT_BITSET;
}

static uint64_t futex_key(uint32_t pid, uint64_t uaddr)
{
	return gt_hash64(&uaddr, sizeof(uaddr), pid);
}

void classify__note_futex(struct model *m, const struct gt_offcpu *o)
{
	struct m_off mo = {.args = {o->args[0], o->args[1], o->args[2]}};
	uint64_t key, seen = 0;

	/* Address 0 is no futex word (EFAULT): a record without arguments. */
	if (o->syscall_nr != GT_NR_futex || (o->flags & GT_OFF_PREEMPTED) || !o->args[0] ||
	    !futex_is_wait(&mo))
		return;
	key = futex_key(o->pid, o->args[0]);
	u64map_get(&m->futex_seen, key, &seen);
	seen |= (uint32_t)o->args[2] <= FUTEX_CONTENDED ? FUTEX_SEEN_LOCK : FUTEX_SEEN_COUNT;
	u64map_put(&m->futex_seen, key, seen);
}

/*
 * A futex wait on the contended value 2 is a lock wait, unless the same word
 * was waited on with a value a lock word never takes: then it is a counter
 * (Rust's futex Condvar, a sequence number) that happened to pass through 2.
 */
static bool futex_lock_word(const struct model *m, uint32_t pid, const struct m_off *o)
{
	uint64_t seen = 0;

	if ((uint32_t)o->args[2] != FUTEX_CONTENDED)
		return false;
	if (!o->args[0])
		return true;
	u64map_get(&m->futex_seen, futex_key(pid, o->args[0]), &seen);
	return !(seen & FUTEX_SEEN_COUNT);
}

/*
 * Whether a timed wait ended by its own timeout: a voluntary timed sleep
 * (async runtimes park their threads this way for their timers).  A timeout
 * given in ms (poll, epoll_wait, epoll_pwait) ran out when the wait lasted
 * that long, less a tenth and 0.2 ms: the clock started at the syscall's
 * entry, a little before the switch-out.  One given by pointer (ppoll,
 * select, pselect6, epoll_pwait2, futex_waitv; its value is not recorded) ran
 * out when no task woke the wait, only an interrupt (the timer).  Captures
 * without args[3] have no 4th argument: only poll's timeout is known there.
 */
static bool timed_out(const struct m_off *o)
{
	int64_t ms = -1;
	uint64_t ptr = 0, want, end = o->wake;

	/*
	 * Wakeup and switch-in both unseen (the Firecracker guests' untraced
	 * switches): the wait lasted at most until the estimated switch-in,
	 * which is enough to tell that a timeout in ms ran out.
	 */
	if (!end && (o->flags & GT_OFF_SWITCHIN_EST) && !(o->flags & GT_OFF_PREEMPTED))
		end = o->on;
	if (!end)
		return false;
	switch (o->syscall) {
	case GT_NR_poll:
		ms = (int32_t)o->args[2];
		break;
	case GT_NR_epoll_wait:
	case GT_NR_epoll_pwait:
		ms = (int32_t)o->args[3];
		break;
	case GT_NR_ppoll:
		ptr = o->args[2];
		break;
	case GT_NR_select:
	case GT_NR_pselect6:
	case GT_NR_epoll_pwait2:
	case GT_NR_futex_waitv:
		ptr = o->args[3];
		break;
	default:
		return false;
	}
	if (ms > 0) {
		want = (uint64_t)ms * NSEC_PER_MSEC;
		return end - o->off + want / 10 + 200 * NSEC_PER_USEC >= want;
	}
	return ptr && o->wake && ((o->flags & GT_OFF_WAKER_IRQ) || !o->waker_tid);
}

/*
 * A futex wait with a timeout (args[3]) that no futex_wake or exiting thread
 * ended: its timer did.
 */
static bool futex_timed_out(const struct m_off *o)
{
	return o->wake && o->args[3] && futex_is_wait(o) && !futex_waker(o);
}

enum sys_class {
	SC_OTHER = 0,
	SC_SLEEP,
	SC_ALLOC,
	SC_IO,
	SC_HANDOFF,
	SC_FUTEX,
	SC_IOCTL,
	SC_YIELD
};

static enum sys_class syscall_class(int32_t nr)
{
	if (gt_nr_is_handoff(nr))
		return SC_HANDOFF;
	switch (nr) {
	case GT_NR_nanosleep:
	case GT_NR_clock_nanosleep:
	case GT_NR_pause:
		return SC_SLEEP;
	case GT_NR_mmap:
	case GT_NR_mprotect:
	case GT_NR_munmap:
	case GT_NR_brk:
	case GT_NR_mremap:
	case GT_NR_madvise:
	case GT_NR_mlock:
	case GT_NR_munlock:
	case GT_NR_mlockall:
	case GT_NR_mlock2:
		return SC_ALLOC;
	case GT_NR_read:
	case GT_NR_write:
	case GT_NR_open:
	case GT_NR_close:
	case GT_NR_stat:
	case GT_NR_fstat:
	case GT_NR_lstat:
	case GT_NR_lseek:
	case GT_NR_pread64:
	case GT_NR_pwrite64:
	case GT_NR_readv:
	case GT_NR_writev:
	case GT_NR_msync:
	case GT_NR_sendfile:
	case GT_NR_connect:
	case GT_NR_accept:
	case GT_NR_sendto:
	case GT_NR_recvfrom:
	case GT_NR_sendmsg:
	case GT_NR_recvmsg:
	case GT_NR_fsync:
	case GT_NR_fdatasync:
	case GT_NR_truncate:
	case GT_NR_ftruncate:
	case GT_NR_getdents:
	case GT_NR_rename:
	case GT_NR_unlink:
	case GT_NR_sync:
	case GT_NR_io_getevents:
	case GT_NR_getdents64:
	case GT_NR_openat:
	case GT_NR_newfstatat:
	case GT_NR_unlinkat:
	case GT_NR_splice:
	case GT_NR_sync_file_range:
	case GT_NR_fallocate:
	case GT_NR_accept4:
	case GT_NR_preadv:
	case GT_NR_pwritev:
	case GT_NR_recvmmsg:
	case GT_NR_syncfs:
	case GT_NR_sendmmsg:
	case GT_NR_copy_file_range:
	case GT_NR_preadv2:
	case GT_NR_pwritev2:
	case GT_NR_statx:
	case GT_NR_io_uring_enter:
	case GT_NR_openat2:
		return SC_IO;
	case GT_NR_futex:
		return SC_FUTEX;
	case GT_NR_ioctl:
		return SC_IOCTL;
	case GT_NR_sched_yield:
		return SC_YIELD;
	default:
		return SC_OTHER;
	}
}

struct pattern {
	const char *s;
	int flag;
};

/*
 * Frame names that reveal what a waiting or running thread is in.  Substring
 * matches catch glibc's __GI_ aliases and C++/Rust mangling.  A lock frame
 * anywhere wins over a hand-off frame: lock slow paths park through the same
 * hand-off primitives (parking_lot's lock_slow calls park).
 */
static const struct pattern sync_patterns[] = {
    /* condvar paths re-take their mutex through these: a lock wait */
    {"lll_lock_wait", STK_LOCK},
    {"pthread_mutex_lock", STK_LOCK},
    {"pthread_mutex_timedlock", STK_LOCK},
    {"pthread_mutex_clocklock", STK_LOCK},
    {"mutex_cond_lock", STK_LOCK},
    {"pthread_rwlock_rdlock", STK_LOCK},
    {"pthread_rwlock_wrlock", STK_LOCK},
    {"pthread_rwlock_timed", STK_LOCK},
    {"pthread_rwlock_clock", STK_LOCK},
    {"rwlock_rdlock", STK_LOCK},
    {"rwlock_wrlock", STK_LOCK},
    {"lock_contended", STK_LOCK}, /* Rust std Mutex */
    {"read_contended", STK_LOCK}, /* Rust std RwLock */
    {"write_contended", STK_LOCK},
    {"lock_slow", STK_LOCK},  /* parking_lot RawMutex */
    {"mutex4lock", STK_LOCK}, /* std::mutex::lock */
    {"futex_lock_pi", STK_LOCK},
    {"pthread_cond_wait", STK_HANDOFF},
    {"pthread_cond_timedwait", STK_HANDOFF},
    {"pthread_cond_clockwait", STK_HANDOFF},
    {"sem_wait", STK_HANDOFF},
    {"sem_timedwait", STK_HANDOFF},
    {"sem_clockwait", STK_HANDOFF},
    {"pthread_join", STK_HANDOFF},
    {"clockjoin", STK_HANDOFF},
    {"futex_abstimed_wait", STK_HANDOFF}, /* shared by condvar, sem, join */
    {"Condvar", STK_HANDOFF},
    {"condition_variable", STK_HANDOFF},
    {"4park", STK_HANDOFF}, /* Rust std::thread::park, parking_lot_core::park */
    {"park_timeout", STK_HANDOFF},
};

static const char *const alloc_exact[] = {
    "malloc",
    "free",
    "calloc",
    "realloc",
    "reallocarray",
    "memalign",
    "posix_memalign",
    "aligned_alloc",
    "valloc",
    "pvalloc",
    "cfree",
    "malloc_trim",
    "malloc_consolidate",
    "_int_malloc",
    "_int_free",
    "_int_realloc",
    "_int_memalign",
    "sysmalloc",
    "systrim",
    "mtrim",
    "heap_trim",
    "shrink_heap",
    "new_heap",
    "arena_get2",
    "unlink_chunk",
    "_int_free_merge_chunk",
    "_int_free_create_chunk",
    "_int_free_maybe_consolidate",
    /* glibc's other internals, named when its debug symbols are there */
    "munmap_chunk",
    "mremap_chunk",
    "_int_new_arena",
    "reused_arena",
    "get_free_list",
    "arena_get_retry",
    "alloc_new_heap",
    "grow_heap",
    "ptmalloc_init",
    "_mid_memalign",
    "__posix_memalign",
    "mmap",
    "mmap64",
    "__mmap",
    "munmap",
    "__munmap",
    "madvise",
    "__madvise",
    "sbrk",
    "__sbrk",
    "brk",
    "__brk",
    "mremap",
    "__mremap",
    /* jemalloc's non-standard API, unprefixed */
    "mallocx",
    "rallocx",
    "xallocx",
    "sallocx",
    "dallocx",
    "sdallocx",
    "nallocx",
    "__rust_alloc",
    "__rust_dealloc",
    "__rust_realloc",
    "__rust_alloc_zeroed",
    "__rdl_alloc",
    "__rdl_dealloc",
    "__rdl_realloc",
    "__rdl_alloc_zeroed",
    /* the #[global_allocator] shims */
    "__rg_alloc",
    "__rg_dealloc",
    "__rg_realloc",
    "__rg_alloc_zeroed",
};

static const char *const alloc_prefix[] = {
    "__libc_malloc",
    "__libc_free",
    "__libc_calloc",
    "__libc_realloc",
    "__libc_memalign",
    "__libc_valloc",
    "__libc_pvalloc",
    /* operator new, new[], delete, delete[] in every overload (nothrow, sized, aligned) */
    "_Znw",
    "_Zna",
    "_Zdl",
    "_Zda",
    "operator new",
    "operator delete",
    "tcache_",
    "je_",
    "mi_",
    "_mi_",
    "tc_",
    "tcmalloc::",
    "_ZN8tcmalloc",
    "_rjem_", /* tikv-jemallocator (Rust) */
    "__GI___libc_malloc",
    "__GI___libc_free",
    "__malloc_",
    "__GI___munmap",
    "__GI___mmap",
    "__GI___madvise",
};

/* Kernel frames of page faults and memory-management syscalls. */
static const char *const kernel_mm[] = {
    "page_fault",	 "do_user_addr_fault", "handle_mm_fault",
    "do_anonymous_page", "filemap_fault",      "do_fault",
    "sys_munmap",	 "vm_munmap",	       "vmi_munmap",
    "sys_madvise",	 "do_madvise",	       "sys_brk",
    "sys_mmap",		 "mmap_pgoff",	       "sys_mremap",
    "sys_mprotect",	 "unmap_vmas",	       "unmap_region",
    "zap_pte_range",	 "tlb_finish_mmu",     "lock_mm_and_find_vma",
};

static bool match_alloc(const char *name)
{
	for (size_t i = 0; i < sizeof(alloc_exact) / sizeof(alloc_exact[0]); i++)
		if (!strcmp(name, alloc_exact[i]))
			return true;
	for (size_t i = 0; i < sizeof(alloc_prefix) / sizeof(alloc_prefix[0]); i++)
		if (!strncmp(name, alloc_prefix[i], strlen(alloc_prefix[i])))
			return true;
	return false;
}

static bool match_cuda_module(const char *module)
{
	const char *base = module ? strrchr(module, '/') : NULL;

	base = base ? base + 1 : module;
	return base && (!strncmp(base, "libcuda.so", 10) || !strncmp(base, "libcudart", 9) ||
			!strncmp(base, "libnvidia", 9));
}

static int classify_stack(struct model *m, struct m_stack *st)
{
	int cls = 0, sync = 0;

	for (uint16_t i = 0; i < st->nr; i++) {
		const struct m_sym *s = model__sym(m, st->pid, st->ips[i]);

		if (!s)
			continue;
		if (st->kernel) {
			for (size_t k = 0; s->name && k < sizeof(kernel_mm) / sizeof(kernel_mm[0]);
			     k++)
				if (strstr(s->name, kernel_mm[k]))
					cls |= STK_FAULT;
			/* int3 entry, single-step and return trampoline of a uprobe */
			if (s->name && (strstr(s->name, "uprobe") || strstr(s->name, "exc_int3") ||
					strstr(s->name, "exc_debug")))
				cls |= STK_UPROBE;
			continue;
		}
		if (match_cuda_module(s->module))
			cls |= STK_CUDA;
		if (!s->name)
			continue;
		if (match_alloc(s->name))
			cls |= STK_ALLOC;
		for (size_t k = 0; k < sizeof(sync_patterns) / sizeof(sync_patterns[0]); k++)
			if (strstr(s->name, sync_patterns[k].s))
				sync |= sync_patterns[k].flag;
	}
	return cls | ((sync & STK_LOCK) ? STK_LOCK : sync);
}

int model__stack_class(struct model *m, int32_t id)
{
	uint64_t idx;
	struct m_stack *st;

	if (id < 0 || !u64map_get(&m->stack_idx, (uint64_t)(uint32_t)id, &idx))
		return 0;
	st = &m->stacks[idx];
	if (st->cls < 0)
		st->cls = classify_stack(m, st);
	return st->cls;
}

/*
 * Category of the blocked part of an off-CPU interval.  *handoff is set when
 * the wait ended because another thread handed something over, so the
 * critical path may continue at the waker.
 */
int classify_blocked(struct model *m, uint32_t pid, const struct m_off *o, bool *handoff)
{
	int ucls = model__stack_class(m, o->ustack);
	uint32_t cmd;

	*handoff = false;
	switch (syscall_class(o->syscall)) {
	case SC_SLEEP:
		return GT_CAT_SLEEP;
	case SC_ALLOC:
		return GT_CAT_ALLOC;
	case SC_IO:
		/* A pipe or socket read ended by a write of a thread of ours is a hand-off. */
		if (is_read(o->syscall) && is_write(o->waker_syscall) && o->waker_tid &&
		    !(o->flags & GT_OFF_WAKER_IRQ) && model__thread(m, o->waker_tid, false))
			*handoff = true;
		return GT_CAT_IO;
	case SC_HANDOFF:
		if (timed_out(o))
			return GT_CAT_SLEEP;
		*handoff = true;
		return GT_CAT_WAIT;
	case SC_IOCTL:
		return (ucls & STK_CUDA) ? GT_CAT_CUDA : GT_CAT_IO;
	case SC_YIELD:
		return GT_CAT_SCHED;
	case SC_FUTEX:
		cmd = (uint32_t)o->args[1] & FUTEX_CMD_MASK;
		if (cmd == FUTEX_LOCK_PI || cmd == FUTEX_LOCK_PI2 || cmd == FUTEX_TRYLOCK_PI)
			return GT_CAT_LOCK;
		if (ucls & STK_LOCK)
			return GT_CAT_LOCK;
		if (!(ucls & STK_HANDOFF)) {
			if (ucls & STK_CUDA)
				return GT_CAT_CUDA;
			if (futex_is_wait(o) && futex_lock_word(m, pid, o))
				return GT_CAT_LOCK;
		}
		/* A condvar, park or counter wait: a hand-off, or a sleep if it timed out. */
		if (futex_timed_out(o))
			return GT_CAT_SLEEP;
		*handoff = futex_waker(o);
		return GT_CAT_WAIT;
	case SC_OTHER:
	default:
		break;
	}
	if (o->syscall < 0) {
		/* Blocked outside a syscall: a page fault or an mm lock, or a stop. */
		if (o->state & 0x0c) /* __TASK_STOPPED | __TASK_TRACED */
			return GT_CAT_UNKNOWN;
		return GT_CAT_ALLOC;
	}
	*handoff = true;
	return GT_CAT_WAIT;
}

int classify_sample(struct model *m, const struct m_sample *s)
{
	int ucls = model__stack_class(m, s->ustack);

	if (s->flags & GT_SAMPLE_KERNEL) {
		if (s->syscall >= 0) {
			switch (syscall_class(s->syscall)) {
			case SC_ALLOC:
				return GT_CAT_ALLOC;
			case SC_IO:
				return GT_CAT_IO;
			case SC_IOCTL:
				return (ucls & STK_CUDA) ? GT_CAT_CUDA : GT_CAT_IO;
			default:
				break;
			}
		} else if (model__stack_class(m, s->kstack) & STK_FAULT) {
			return GT_CAT_ALLOC;
		}
	}
	if (ucls & STK_ALLOC)
		return GT_CAT_ALLOC;
	if (ucls & STK_CUDA)
		return GT_CAT_CUDA;
	return GT_CAT_CPU;
}
