// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * mmap.bpf.c: tells the recorder at once when a traced process maps
 * a file executable (dlopen, the loader at start-up), so that the CFI walk's
 * ranges and tables and the symbolizer's maps follow before its threads
 * block in the new code.
 */
#include "common.bpf.h"

#define GT_VM_EXEC 0x4 /* VM_EXEC: stable since the first kernels with BPF */

/* bpf_find_vma's callback: is the mapping at the address file-backed code? */
static long maps_exec_file(struct task_struct *task, struct vm_area_struct *vma, void *arg)
{
	bool *exec = arg;

	*exec = (BPF_CORE_READ(vma, vm_flags) & GT_VM_EXEC) && BPF_CORE_READ(vma, vm_file);
	return 0;
}

/*
 * At mmap's return, not its entry: the recorder reads the maps as soon as
 * the notice arrives, and the mapping must be there by then.  Anonymous
 * code (JITs) is left out: it has no CFI and no file to name it by.
 */
SEC("tracepoint/syscalls/sys_exit_mmap")
int maps_mmap_exit(struct trace_event_raw_sys_exit *ctx)
{
	struct task_struct *t = bpf_get_current_task_btf();
	__u64 addr = (__u64)ctx->ret;
	bool exec = false;

	/* Errors are -4095..-1; a user address has the top bit clear. */
	if (addr >> 63 || !is_target(BPF_CORE_READ(t, tgid)))
		return 0;
	if (bpf_find_vma(t, addr, maps_exec_file, &exec, 0) || !exec)
		return 0;
	emit_task(t, GT_TASK_LOADED, 0, NULL, true);
	return 0;
}
