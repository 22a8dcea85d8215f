/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * gaptrace_waits.h: the one list of the syscalls that wait for a
 * hand-off (poll/select/epoll, wait4/waitid, futex_waitv: another thread, a
 * child or a peer makes them return), for the BPF program (their kernel
 * stack tells nothing more) and the analysis (their time is a hand-off
 * wait).  Header-only, no includes: include gaptrace_syscalls.h first;
 * it compiles with clang -target bpf as well as in user space.
 */
#ifndef GT_WAITS_H
#define GT_WAITS_H

static __always_inline int gt_nr_is_handoff(int nr)
{
	switch (nr) {
	case GT_NR_poll:
	case GT_NR_select:
	case GT_NR_wait4:
	case GT_NR_epoll_wait:
	case GT_NR_waitid:
	case GT_NR_pselect6:
	case GT_NR_ppoll:
	case GT_NR_epoll_pwait:
	case GT_NR_epoll_pwait2:
	case GT_NR_futex_waitv:
		return 1;
	default:
		return 0;
	}
}

#endif /* GT_WAITS_H */
