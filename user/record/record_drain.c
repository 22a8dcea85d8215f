// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * record_drain.c: what is still open when `gaptrace record` stops: off-CPU
 * intervals and probed calls left in the BPF maps are closed at the
 * capture's end (GT_OFF_PARTIAL_END, GT_CALL_OPEN), with their stacks.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "gaptrace/gaptrace.h"
#include "gaptrace.skel.h"
#include "record/record_priv.h"
#include "support/procfs.h"
#include "support/util.h"

/* An interval still open at the end: its snapshot is still in the thread's slot. */
static void dwarf_open_interval(struct recorder *r, struct gt_offcpu *o)
{
	struct gt_ustack *u = gt_xmalloc(offsetof(struct gt_ustack, data) + r->o->stack_bytes);
	int32_t id;

	if (!bpf_map_lookup_elem(bpf_map__fd(r->skel->maps.ustack_slots), &o->tid, u) &&
	    u->off_ns == o->off_ns) {
		id = record_sink__dwarf_stack(&r->sink, o->pid, o->tid, u->regs, u->data,
					      GT_MIN(u->stack_size, r->o->stack_bytes));
		if (id >= 0) {
			o->ustack_id = id;
			r->sink.dwarf_used++;
		}
	}
	free(u);
}

/* Closes intervals still open when tracing stops, at the capture's end. */
void record__drain_open_intervals(struct recorder *r)
{
	int fd = bpf_map__fd(r->skel->maps.offcpu);
	uint32_t key, next, *prev = NULL;
	struct gt_offcpu_start si; /* gaptrace/gaptrace.h: the map's value, size-checked */

	/*
	 * The lookups below write the map's value size into si and cs: both
	 * sides take these layouts from gaptrace/gaptrace.h, and test_record_sink
	 * checks the embedded object's value sizes against them.
	 */
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		struct gt_offcpu o = {.hdr = {GT_REC_OFFCPU, sizeof(o), 0, r->end_ns}};
		char buf[512];

		key = next;
		prev = &key;
		/* off_ns 0: the thread's entry is closed (it was running). */
		if (bpf_map_lookup_elem(fd, &key, &si) || !si.off_ns)
			continue;
		/* The tid's thread group: from /proc, as the map is keyed by tid only. */
		o.pid = (uint32_t)r->pid;
		if (procfs_status_read((pid_t)key, 0, buf, sizeof(buf)) > 0)
			o.pid = (uint32_t)procfs_status_long(buf, "Tgid", r->pid);
		o.tid = key;
		gt_offcpu_from_start(&o, &si);
		o.on_ns = r->end_ns;
		o.flags |= GT_OFF_PARTIAL_END;
		if (r->o->dwarf && r->unw && o.off_ns && r->end_ns - o.off_ns >= r->o->dwarf_min_ns)
			dwarf_open_interval(r, &o);
		o.ustack_id = record_sink__stack_id(&r->sink, o.ustack_id);
		o.kstack_id = record_sink__stack_id(&r->sink, o.kstack_id);
		record_sink__put(&r->sink, &o, sizeof(o));
	}

	fd = bpf_map__fd(r->skel->maps.calls);
	uint64_t ckey, cnext, *cprev = NULL;
	struct gt_call_start cs;

	while (bpf_map_get_next_key(fd, cprev, &cnext) == 0) {
		struct gt_call c = {.hdr = {GT_REC_CALL, sizeof(c), 0, r->end_ns}};

		ckey = cnext;
		cprev = &ckey;
		if (bpf_map_lookup_elem(fd, &ckey, &cs))
			continue;
		c.pid = (uint32_t)r->pid;
		c.tid = (uint32_t)(ckey >> 32);
		c.enter_ns = cs.enter_ns;
		c.exit_ns = r->end_ns;
		c.func_id = (uint32_t)ckey;
		c.flags = GT_CALL_OPEN;
		c.arg0 = cs.arg0;
		record_sink__put(&r->sink, &c, sizeof(c));
	}
}
