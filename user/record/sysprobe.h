/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * sysprobe.h: what this kernel and this process can do (privileges, BTF,
 * tp_btf, uprobe PMU, tracefs), shared by `record` and `doctor`.
 */
#ifndef GT_SYSPROBE_H
#define GT_SYSPROBE_H

#include <stdbool.h>
#include <stddef.h>

/* Routes libbpf's messages through gaptrace's logging (-v shows them). */
void gt_libbpf_logging(void);

/*
 * 0 when this process may load tracing BPF programs and open perf events;
 * -1 with "needs CAP_BPF and CAP_PERFMON: run as root" (or similar) in err.
 */
int gt_check_privileges(char *err, size_t errlen);
/* 0 in the host PID namespace; -1 with a message in a child one (nothing would be recorded). */
int gt_check_pid_namespace(char *err, size_t errlen);

bool gt_have_vmlinux_btf(void);
/* Loads a minimal tp_btf program on tracepoint tp: true when the kernel accepts it. */
bool gt_probe_tp_btf(const char *tp);
/* True when uprobes can be created through the perf PMU (no tracefs needed). */
bool gt_have_uprobe_pmu(void);
/*
 * Makes sure tracefs is mounted at /sys/kernel/tracing (libbpf's legacy
 * uprobe path needs it when the uprobe PMU is missing).  Returns 0 when it is
 * (setting *mounted_now if this call mounted it), -errno otherwise.
 */
int gt_ensure_tracefs(bool *mounted_now);
bool gt_tracefs_mounted(void);
/*
 * True when the kernel takes multi-uprobe links (BPF_TRACE_UPROBE_MULTI,
 * 6.6+): a set of uprobes registered and removed in one call.
 */
bool gt_probe_uprobe_multi(void);
/* Creates and frees a small BPF ring buffer: true when the kernel has them. */
bool gt_probe_ringbuf(void);

#endif /* GT_SYSPROBE_H */
