// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * attach_multi.c: uprobes as multi-uprobe links, one per object and process
 * for all its probed functions, where the kernel has them (6.6+).
 */
#include <errno.h>

#include <bpf/libbpf.h>

#include "record/attach.h"
#include "record/attach_priv.h"
#include "record/sysprobe.h"
#include "gaptrace.skel.h"
#include "support/procfs.h"
#include "support/util.h"

/*
 * A single uprobe costs a perf event (2 fds) and its first registration
 * in a new process took 0.26-0.31 s here, so a child living 300 ms was
 * over before its probes were on; a multi-uprobe link registered a
 * USDT probe's 2,000 sites in 10-20 ms and removes them in one close.
 */
bool attacher__choose_programs(struct gaptrace_bpf *skel)
{
	bool multi = gt_probe_uprobe_multi();

	/*
	 * The single ones load everywhere and stay: an object whose symbols
	 * libbpf's multi-uprobe resolver refuses gets them instead.
	 */
	bpf_program__set_autoload(skel->progs.call_enter_multi, multi);
	bpf_program__set_autoload(skel->progs.call_exit_multi, multi);
	bpf_program__set_autoload(skel->progs.loader_state_multi, multi);
	gt_dbg("uprobes: %s", multi ? "multi-uprobe links, one per object and process"
				    : "single uprobes (this kernel has no multi-uprobe links)");
	return multi;
}

/* As uprobe_link (attach.c): a refused pid is retried through a live thread. */
struct bpf_link *attach__multi_link(struct attacher *a, const struct bpf_program *prog, pid_t pid,
				    const char *path, const char *what,
				    const unsigned long *offsets, const uint64_t *cookies,
				    size_t cnt, bool ret)
{
	LIBBPF_OPTS(bpf_uprobe_multi_opts, o, .offsets = offsets, .cookies = (const __u64 *)cookies,
		    .cnt = cnt, .retprobe = ret);
	uint64_t t0 = gt_now_mono_ns();
	struct bpf_link *l = bpf_program__attach_uprobe_multi(prog, pid, path, NULL, &o);
	int err = l ? 0 : errno;
	pid_t alt;

	attach__note_slow(ret ? "uretprobes" : "uprobes", what, pid, t0);
	if (!l && err == ESRCH && (alt = procfs_live_thread(pid, pid)) > 0) {
		gt_dbg("pid %d refused uprobes (exiting leader): attaching through thread %d", pid,
		       alt);
		l = bpf_program__attach_uprobe_multi(prog, alt, path, NULL, &o);
		err = l ? 0 : errno;
	}
	if (!l && err == ESRCH)
		attach__target_gone(a, pid);
	errno = err;
	return l;
}
