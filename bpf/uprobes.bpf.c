// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * uprobes.bpf.c: uprobes on rare heavy functions (entry and return paired
 * here) and on the loader's _dl_debug_state, in single and multi-uprobe forms.
 */
#include "common.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64); /* tid << 32 | func_id */
	__type(value, struct gt_call_start);
} calls SEC(".maps");

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
