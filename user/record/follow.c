// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * follow.c: the processes `gaptrace record` traces besides the target — its
 * descendants, those alive at the attach and those it forks later — and
 * the probe rescans that the BPF side's fork, exec and loader records start.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gaptrace/gaptrace.h"
#include "gaptrace.skel.h"
#include "record/cfimap.h"
#include "record/fpless.h"
#include "record/record_priv.h"
#include "record/unwind.h"
#include "support/procfs.h"
#include "support/util.h"
#include "symbols/syms.h"

struct follow_proc {
	pid_t pid;
	bool pending; /* a fork, exec or dlopen since its last scan */
	bool exited;  /* links released; symbols and unwind state at the next full rescan */
};

static struct follow_proc *find(struct recorder *r, pid_t pid)
{
	for (size_t i = 0; i < r->nprocs; i++)
		if (r->procs[i].pid == pid)
			return &r->procs[i];
	return NULL;
}

static struct follow_proc *add(struct recorder *r, pid_t pid)
{
	struct follow_proc *p = find(r, pid);

	if (p)
		return p;
	gt_grow((void **)&r->procs, &r->procs_cap, r->nprocs, sizeof(*r->procs));
	p = &r->procs[r->nprocs++];
	*p = (struct follow_proc){.pid = pid};
	return p;
}

/* What the recorder holds for a process that exited: its mappings, parsed and open. */
static void release(struct recorder *r, struct follow_proc *p)
{
	if (r->unw)
		unwinder__forget(r->unw, (uint32_t)p->pid);
	syms_cache__forget(r->syms, (uint32_t)p->pid);
	p->exited = false;
}

void record__follow_note(struct recorder *r, pid_t pid)
{
	struct follow_proc *p = add(r, pid);

	/* The pid came back as another process. */
	if (p->exited)
		release(r, p);
	p->pending = true;
	r->rescan = true;
}

/*
 * The BPF side traces pid's threads from now on, or no more (its bit in
 * target_bits; BPF sets bits too, for followed forks: atomic, like its side).
 */
bool record__follow_set_traced(struct recorder *r, pid_t pid, bool on)
{
	__u64 *word;

	if ((uint32_t)pid >= GT_TGID_LIMIT)
		return false;
	word = &r->skel->bss->target_bits[(uint32_t)pid / 64];
	if (on)
		__atomic_fetch_or(word, 1ull << (pid & 63), __ATOMIC_SEQ_CST);
	else
		__atomic_fetch_and(word, ~(1ull << (pid & 63)), __ATOMIC_SEQ_CST);
	return true;
}

bool record__follow_traced(struct recorder *r, pid_t pid)
{
	uint64_t word;

	if ((uint32_t)pid >= GT_TGID_LIMIT)
		return false;
	word = __atomic_load_n(&r->skel->bss->target_bits[(uint32_t)pid / 64], __ATOMIC_RELAXED);
	return (word >> (pid & 63)) & 1;
}

/*
 * Adds the children of every thread of pid (/proc/PID/task/TID/children) to
 * the list, each traced before its own children are read, so that one it
 * forks after that is followed by the BPF side instead.
 */
static void add_children(struct recorder *r, pid_t pid)
{
	struct procfs_tasks it;
	char buf[16384];
	pid_t tid;

	if (procfs_tasks_open(&it, pid))
		return;
	while ((tid = procfs_tasks_next(&it))) {
		char *s, *end;

		if (procfs_read(pid, tid, "children", buf, sizeof(buf)) <= 0)
			continue;
		for (s = buf;; s = end) {
			long c = strtol(s, &end, 10);

			if (end == s)
				break;
			/* gaptrace run from the target's shell (-p $$) does not trace itself. */
			if (c > 0 && c != getpid() && !find(r, (pid_t)c) &&
			    record__follow_set_traced(r, (pid_t)c, true))
				add(r, (pid_t)c);
		}
	}
	procfs_tasks_close(&it);
}

int record__follow_existing(struct recorder *r)
{
	size_t first;

	add(r, r->pid);
	first = r->nprocs;
	/* Breadth first: the list grows behind i. */
	for (size_t i = 0; i < r->nprocs; i++)
		add_children(r, r->procs[i].pid);
	for (size_t i = first; i < r->nprocs; i++) {
		pid_t pid = r->procs[i].pid;

		record__emit_threads(r, pid);
		record__emit_mappings(r, pid);
		attacher__scan(r->att, pid);
		if (!r->o->cpu_samplers)
			attacher__sample_threads(r->att, pid, r->o->sample_period_ns);
		gt_dbg("following pid %d, a descendant of pid %d alive at the attach", pid, r->pid);
	}
	return (int)(r->nprocs - first);
}

void record__follow_rescan(struct recorder *r, bool all)
{
	for (size_t i = 0; i < r->nprocs;) {
		struct follow_proc *p = &r->procs[i];
		bool target = p->pid == r->pid;

		/*
		 * A full rescan after its exit was seen: the records it sent
		 * before it were drained and named by then.  A fork storm kept
		 * two files open per exited child until the stop.
		 */
		if (p->exited && all) {
			release(r, p);
			r->procs[i] = r->procs[--r->nprocs];
			continue;
		}
		if (p->exited || (!all && !p->pending)) {
			i++;
			continue;
		}
		p->pending = false;
		if (target && r->target_gone) {
			i++;
			continue;
		}
		/*
		 * New code gets its CFI ranges first (tables: exec, dlopen, once
		 * per file, by a worker): attaching probes in CUDA's libraries
		 * takes seconds, and walks in them are lost meanwhile.
		 */
		if (r->cfi)
			cfimap__update(r->cfi, p->pid);
		/* A zombie (a parent that does not wait) reads as no mappings, not an error. */
		if (attacher__scan(r->att, p->pid) <= 0 && !target &&
		    procfs_live_thread(p->pid, 0) <= 0) {
			/* Exited: its pid may come back as another process, not ours. */
			attacher__forget(r->att, p->pid);
			fpless__forget(r->fpless, p->pid);
			cfimap__forget(r->cfi, p->pid);
			record__follow_set_traced(r, p->pid, false);
			p->exited = true;
			i++;
			continue;
		}
		if (r->unw)
			unwinder__prepare(r->unw, (uint32_t)p->pid);
		/* Code without frame pointers it maps now: its CPU samples copy stack (alloc). */
		if (r->fpless)
			fpless__update(r->fpless, p->pid);
		i++;
	}
}

void record__follow_emit_mappings(struct recorder *r)
{
	for (size_t i = 0; i < r->nprocs; i++)
		if (r->procs[i].pid != r->pid && !r->procs[i].exited &&
		    procfs_live_thread(r->procs[i].pid, 0) > 0)
			record__emit_mappings(r, r->procs[i].pid);
}

size_t record__follow_alive(struct recorder *r)
{
	size_t n = 0;

	for (size_t i = 0; i < r->nprocs; i++)
		n += r->procs[i].pid != r->pid && !r->procs[i].exited &&
		     procfs_live_thread(r->procs[i].pid, 0) > 0;
	return n;
}

/*
 * The notice of new executable mappings (bpf/mmap.bpf.c): without it a
 * dlopen is seen by the loader's uprobe, when that could be attached, or by
 * the next periodic rescan; so a failure here costs promptness only.
 */
void record__follow_attach_hook(struct recorder *r)
{
	r->skel->links.maps_mmap_exit = bpf_program__attach(r->skel->progs.maps_mmap_exit);
	if (!r->skel->links.maps_mmap_exit)
		gt_dbg("no notice of new executable mappings (syscalls/sys_exit_mmap): %s; "
		       "dlopen'ed code is found by the loader hook or the rescan",
		       strerror(errno));
}
