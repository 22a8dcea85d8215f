/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * inject.h: live attach, i.e. making an already running x86-64 glibc process
 * load a shared library (gaptrace's CUPTI library) through ptrace.
 */
#ifndef GT_INJECT_H
#define GT_INJECT_H

/* The injected copy's memfd name: its mapping shows as "/memfd:NAME (deleted)". */
#define GT_INJECT_MEMFD_NAME "gaptrace-inject"

#include <stddef.h>
#include <sys/types.h>

/*
 * Makes process pid load the shared object at lib_path (a file on our side).
 * Returns 0 when the library is loaded (or was already), -errno with a
 * one-line message in err (naming the problem and the fix) otherwise.
 * The target sees no signal, no errno change, no output change.
 *
 * One thread (the main one unless it exited, waits in epoll_wait & co, or
 * blocks a handled SIGSEGV) is stopped for about a millisecond (PTRACE_SEIZE +
 * INTERRUPT, never SIGSTOP), caught outside libc and ld.so, and made to call
 * memfd_create, dlopen("/proc/self/fd/N", RTLD_NOW) and close.  Its
 * registers, FPU state, signal mask and errno are put back exactly, and a
 * system call it was blocked in restarts as if nothing happened.  Every wait
 * is bounded (2 s to stop, 20 s for dlopen); on any error the process is left
 * running with its own state.  Runs the ptrace session on a thread of its
 * own, so it may be called from any thread; it blocks meanwhile.
 *
 * The library's constructor runs on the borrowed thread inside dlopen, with
 * the loader lock held: it must be quick and must not wait for other threads.
 */
int inject_library(pid_t pid, const char *lib_path, char *err, size_t errlen);

#endif /* GT_INJECT_H */
