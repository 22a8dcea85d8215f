/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * cfimap.h: the BPF unwinder's tables (--stacks cfi): each traced process's
 * executable mappings, and for each object mapped a table compiled from its
 * CFI (cfitab.h) once, shared by every process that maps the same file.
 */
#ifndef GT_CFIMAP_H
#define GT_CFIMAP_H

#include <stdint.h>
#include <sys/types.h>

struct cfimap;

struct cfimap_stats {
	uint32_t objects;	/* objects seen */
	uint32_t fp_objects;	/* walked with frame pointers (every function keeps them) */
	uint32_t cfi_objects;	/* with a table */
	uint32_t no_cfi;	/* neither: no CFI, unreadable, over the budget */
	uint32_t truncated;	/* tables cut at the row cap or the budget */
	uint32_t bad_entries;	/* CIEs/FDEs skipped as malformed, all objects */
	uint64_t rows, pages;	/* in the BPF maps */
	uint64_t bytes;		/* table memory in the kernel (rows + page index), estimated */
	uint64_t max_bytes;	/* the largest object's */
	char max_name[64];	/* its file name */
	uint64_t build_ns;	/* recorder time spent compiling (its worker thread's) */
	uint32_t over_budget;	/* objects cut or left without a table by the budget */
	uint64_t budget;	/* bytes all tables may take */
	uint64_t update_max_ns; /* the run loop's longest cfimap__update (a drain stall) */
};

/*
 * tables_fd, pages_fd, procs_fd: the maps cfi_tables, cfi_pages, cfi_procs;
 * budget: the most bytes of kernel memory all tables may take.
 */
struct cfimap *cfimap__new(int tables_fd, int pages_fd, int procs_fd, uint64_t budget);
void cfimap__free(struct cfimap *c); /* NULL-safe */
/*
 * Reads pid's mappings, compiles the tables of objects not seen before and
 * writes pid's ranges (only when they changed).  Returns the ranges, or -errno.
 */
int cfimap__update(struct cfimap *c, pid_t pid);
/*
 * Launch mode, before the command runs: compiles the tables of the recorder's
 * own libraries and of exe, so that the target's first switches after its
 * exec are walked with CFI as soon as the recorder writes its ranges, not
 * after a build of every object (~100-200 ms of fp walks on this VM).
 */
void cfimap__preload(struct cfimap *c, const char *exe);
/*
 * Takes what the worker thread finished: objects found to keep frame
 * pointers get their processes' ranges written again.  Call once per round
 * of the run loop.
 */
void cfimap__poll(struct cfimap *c);
/* Removes pid's ranges (it exited). */
void cfimap__forget(struct cfimap *c, pid_t pid);
const struct cfimap_stats *cfimap__stats(const struct cfimap *c);

#endif /* GT_CFIMAP_H */
