// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fpless.c: the executable ranges of a traced process that lie in objects
 * without frame pointers, handed to the BPF sampler (map fpless).
 *
 * Why: the default user stack of a CPU sample is a frame-pointer walk, and
 * code built without them (Debian's libc: malloc's internals) loses the
 * caller, so time inside _int_free showed as [libc.so.6] and counted as
 * cpu.  A sample whose ip lies in such a range gets a small stack snapshot
 * that the recorder unwinds with the object's .eh_frame (unwind.c), which
 * even a stripped libc keeps; samples in frame-pointer code stay as cheap
 * as before.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "gaptrace/gaptrace.h"
#include "record/fpless.h"
#include "record/unwind.h"
#include "support/procfs.h"
#include "support/safeopen.h"
#include "support/util.h"

#define FPLESS_PROCS 64 /* processes whose last ranges are remembered (oldest replaced) */

struct fpless_obj {
	uint64_t dev, ino; /* as /proc/PID/maps gives them: major << 32 | minor, inode */
	bool fpless;
};

struct fpless_proc {
	uint32_t pid;
	uint64_t hash; /* of the ranges last written */
};

struct fpless {
	int map_fd;
	bool all; /* objects outside the system folders too */
	struct fpless_obj *objs;
	size_t nobjs, cap;
	struct fpless_proc procs[FPLESS_PROCS];
	unsigned next_proc;
};

struct fpless *fpless__new(int map_fd, bool all)
{
	struct fpless *f = gt_xcalloc(1, sizeof(*f));

	f->map_fd = map_fd;
	f->all = all;
	return f;
}

void fpless__free(struct fpless *f)
{
	if (!f)
		return;
	free(f->objs);
	free(f);
}

/*
 * Whether the object behind a mapping has no frame pointers: checked once per
 * file, known by the device and inode /proc/PID/maps gives (as the probe
 * scans know objects), so a rescan of known objects stats nothing.
 */
static bool object_fpless(struct fpless *f, pid_t pid, const struct procfs_map *m)
{
	uint64_t dev = (uint64_t)m->dev_major << 32 | m->dev_minor;
	struct fpless_obj *o;
	int fp;

	/*
	 * The program's own objects only when asked: all of a Rust or C++
	 * release build's samples would pay for a snapshot and an unwinding
	 * (~8 us of recorder CPU each: a recorder behind 64 busy threads at
	 * 4 kHz could not keep up), and fp_audit tells the user about them.
	 */
	if (!f->all && !unwind_system_object(m->path))
		return false;
	for (size_t i = 0; i < f->nobjs; i++)
		if (f->objs[i].dev == dev && f->objs[i].ino == m->inode)
			return f->objs[i].fpless;
	/* Unknown (-ENODATA: too few functions to tell, or unreadable) counts as having them. */
	fp = unwind_elf_frame_pointers_fd(
	    safeopen_mapped(pid, m->start, m->end, m->path, m->inode, NULL), NULL, NULL);
	if (fp == -ENOENT || fp == -ESRCH)
		return false; /* gone: not remembered */
	gt_grow((void **)&f->objs, &f->cap, f->nobjs, sizeof(*f->objs));
	o = &f->objs[f->nobjs++];
	o->dev = dev;
	o->ino = m->inode;
	o->fpless = fp == 0;
	gt_dbg("%s: %s", m->path,
	       fp == 0 ? "no frame pointers: its samples are unwound with CFI"
		       : "frame pointers (or too few functions to tell)");
	return o->fpless;
}

void fpless__forget(struct fpless *f, pid_t pid)
{
	uint32_t key = (uint32_t)pid;

	for (unsigned i = 0; f && i < FPLESS_PROCS; i++) {
		if (f->procs[i].pid == key) {
			f->procs[i].pid = 0;
			bpf_map_delete_elem(f->map_fd, &key);
		}
	}
}

int fpless__update(struct fpless *f, pid_t pid)
{
	struct gt_fpless v = {};
	struct procfs_maps it;
	struct procfs_map m;
	struct fpless_proc *p = NULL;
	uint32_t key = (uint32_t)pid;
	uint64_t hash;
	int err;

	if (!f || pid <= 0)
		return -EINVAL;
	err = procfs_maps_open(&it, pid, 0);
	if (err) {
		fpless__forget(f, pid);
		return err;
	}
	while (procfs_maps_next(&it, &m)) {
		if (!m.exec || m.path[0] != '/' || !object_fpless(f, pid, &m))
			continue;
		/* Adjacent ranges of one object (a split mapping) become one. */
		if (v.nr && v.end[v.nr - 1] == m.start) {
			v.end[v.nr - 1] = m.end;
			continue;
		}
		if (v.nr == GT_FPLESS_MAX) {
			gt_dbg("pid %d: more than %d ranges without frame pointers: %s is left "
			       "to the fp walk",
			       pid, GT_FPLESS_MAX, m.path);
			continue;
		}
		v.start[v.nr] = m.start;
		v.end[v.nr] = m.end;
		v.nr++;
	}
	procfs_maps_close(&it);
	hash = gt_hash64(&v, sizeof(v), 0);
	for (unsigned i = 0; i < FPLESS_PROCS; i++)
		if (f->procs[i].pid == key)
			p = &f->procs[i];
	if (p && p->hash == hash)
		return (int)v.nr;
	if (!p) {
		p = &f->procs[f->next_proc++ % FPLESS_PROCS];
		p->pid = key;
	}
	if (bpf_map_update_elem(f->map_fd, &key, &v, BPF_ANY)) {
		err = -errno;
		p->pid = 0;
		gt_dbg("pid %d: cannot set its ranges without frame pointers: %s", pid,
		       strerror(-err));
		return err;
	}
	p->hash = hash;
	return (int)v.nr;
}
