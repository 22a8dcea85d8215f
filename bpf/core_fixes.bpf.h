/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * core_fixes.bpf.h: every kernel-version difference the BPF side copes with,
 * in one place, each with the reason it exists.
 */
#ifndef GT_CORE_FIXES_BPF_H
#define GT_CORE_FIXES_BPF_H

#include <vmlinux.h>
#include <bpf/bpf_core_read.h>

/* Linux 5.14 renamed task_struct::state to __state (and made it unsigned int). */
struct task_struct___o {
	volatile long int state;
} __attribute__((preserve_access_index));

static __always_inline long gt_task_state(struct task_struct *t)
{
	struct task_struct___o *to = (void *)t;

	/* A direct load: every caller holds a BTF pointer (tp_btf arguments). */
	if (bpf_core_field_exists(t->__state))
		return t->__state;
	return BPF_CORE_READ(to, state);
}

/*
 * The innermost pending uretprobe return of task t (NULL: none).  Only
 * kernels with CONFIG_UPROBES have task_struct::utask; the field names of
 * struct return_instance (stack, orig_ret_vaddr, next) are stable since 3.x.
 */
static __always_inline struct return_instance *gt_uretprobe_returns(struct task_struct *t)
{
	if (!bpf_core_field_exists(t->utask))
		return NULL;
	return BPF_CORE_READ(t, utask, return_instances);
}

/*
 * struct sched_info's fields exist only with CONFIG_SCHED_INFO (selected by
 * SCHEDSTATS and TASK_DELAY_ACCT, so nearly always on, but not required).
 * Without it a read would fail the whole load; these answer 0 instead.
 */

/* When t last went on CPU, in rq clock ns; 0: unknown (no CONFIG_SCHED_INFO). */
static __always_inline __u64 gt_task_last_arrival(struct task_struct *t)
{
	if (!bpf_core_field_exists(t->sched_info.last_arrival))
		return 0;
	return BPF_CORE_READ(t, sched_info.last_arrival);
}

/* How many times t went on CPU; 0: not counted (gt_sample.pcount's "not recorded"). */
static __always_inline __u64 gt_task_pcount(struct task_struct *t)
{
	if (!bpf_core_field_exists(t->sched_info.pcount))
		return 0;
	return BPF_CORE_READ(t, sched_info.pcount);
}

/*
 * The run queue t was last queued on, through its CFS run queue; NULL:
 * unknown.  sched_entity::cfs_rq and cfs_rq::rq exist only with
 * CONFIG_FAIR_GROUP_SCHED (cgroup CPU control; on in distribution kernels).
 */
static __always_inline struct rq *gt_task_rq(struct task_struct *t)
{
	if (!bpf_core_field_exists(t->se.cfs_rq) || !bpf_core_field_exists(struct cfs_rq, rq))
		return NULL;
	return BPF_CORE_READ(t, se.cfs_rq, rq);
}

#endif /* GT_CORE_FIXES_BPF_H */
