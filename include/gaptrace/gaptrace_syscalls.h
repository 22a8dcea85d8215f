/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * gaptrace_syscalls.h: the one list of the x86-64 syscall numbers gaptrace
 * knows (orig_ax at switch-out, gt_offcpu.syscall_nr), for the BPF program,
 * the analysis and the tests.  Plain preprocessor and an enum, no includes:
 * it compiles with clang -target bpf as well as in user space.
 *
 * Each list is X(name, number); enum gt_syscall_nr holds GT_NR_name for all.
 */
#ifndef GT_SYSCALLS_H
#define GT_SYSCALLS_H

/*
 * The syscalls reports name (tl_syscall_name): the blocking ones a dispatch
 * thread is usually seen in.  The names appear in outputs: keep this set.
 */
#define GT_SYSCALLS_NAMED(X)    \
	X(read, 0)              \
	X(write, 1)             \
	X(close, 3)             \
	X(poll, 7)              \
	X(mmap, 9)              \
	X(mprotect, 10)         \
	X(munmap, 11)           \
	X(brk, 12)              \
	X(ioctl, 16)            \
	X(pread64, 17)          \
	X(pwrite64, 18)         \
	X(readv, 19)            \
	X(writev, 20)           \
	X(select, 23)           \
	X(sched_yield, 24)      \
	X(mremap, 25)           \
	X(msync, 26)            \
	X(madvise, 28)          \
	X(pause, 34)            \
	X(nanosleep, 35)        \
	X(connect, 42)          \
	X(accept, 43)           \
	X(sendto, 44)           \
	X(recvfrom, 45)         \
	X(sendmsg, 46)          \
	X(recvmsg, 47)          \
	X(wait4, 61)            \
	X(fsync, 74)            \
	X(fdatasync, 75)        \
	X(futex, 202)           \
	X(io_getevents, 208)    \
	X(clock_nanosleep, 230) \
	X(epoll_wait, 232)      \
	X(waitid, 247)          \
	X(openat, 257)          \
	X(pselect6, 270)        \
	X(ppoll, 271)           \
	X(epoll_pwait, 281)     \
	X(fallocate, 285)       \
	X(accept4, 288)         \
	X(preadv, 295)          \
	X(pwritev, 296)         \
	X(recvmmsg, 299)        \
	X(syncfs, 306)          \
	X(sendmmsg, 307)        \
	X(io_uring_enter, 426)  \
	X(epoll_pwait2, 441)    \
	X(futex_waitv, 449)

/* The others the classification or the BPF program test for (reported by number). */
#define GT_SYSCALLS_UNNAMED(X)  \
	X(open, 2)              \
	X(stat, 4)              \
	X(fstat, 5)             \
	X(lstat, 6)             \
	X(lseek, 8)             \
	X(sendfile, 40)         \
	X(exit, 60)             \
	X(truncate, 76)         \
	X(ftruncate, 77)        \
	X(getdents, 78)         \
	X(rename, 82)           \
	X(unlink, 87)           \
	X(rt_sigtimedwait, 128) \
	X(rt_sigsuspend, 130)   \
	X(mlock, 149)           \
	X(munlock, 150)         \
	X(mlockall, 151)        \
	X(sync, 162)            \
	X(getdents64, 217)      \
	X(exit_group, 231)      \
	X(newfstatat, 262)      \
	X(unlinkat, 263)        \
	X(splice, 275)          \
	X(sync_file_range, 277) \
	X(mlock2, 325)          \
	X(copy_file_range, 326) \
	X(preadv2, 327)         \
	X(pwritev2, 328)        \
	X(statx, 332)           \
	X(openat2, 437)         \
	X(futex_wake, 454)

#define GT_SYSCALLS(X) GT_SYSCALLS_NAMED(X) GT_SYSCALLS_UNNAMED(X)

#define GT_SYSCALL_ENUM_(name, nr) GT_NR_##name = nr,
enum gt_syscall_nr { GT_SYSCALLS(GT_SYSCALL_ENUM_) };
#undef GT_SYSCALL_ENUM_

#endif /* GT_SYSCALLS_H */
