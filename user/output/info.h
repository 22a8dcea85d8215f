/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * info.h: the writers of `gaptrace info`: what a capture holds (blocks,
 * records, header, counters) and what its analysis found (threads, GPU,
 * the clock check), as text or JSON (schema gaptrace.info/1).
 */
#ifndef GT_INFO_H
#define GT_INFO_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "capture/count.h"
#include "capture/keys.h"

/* unwind.end.root to .depth, in enum gt_unw_end order (capture/keys.h) */
#define UNW_ENDS (CK_UNWIND_END_DEPTH - CK_UNWIND_END_ROOT + 1)

struct an_result;
struct capture;

/* What the capture holds: its blocks and records, and its recorder's counters. */
struct info_stats {
	struct capture_counts n;
	uint64_t counters_lost_ringbuf, counters_lost_stack, counters_lost_map, counters_gpu_trunc;
	char stop_reason[32];
	uint64_t end_ns;
	/* the uprobes the recorder attached (newer captures say; else absent) */
	bool have_uprobes;
	char uprobes[1024];
	/* --stacks dwarf: the recorder's unwinding counters (present only then) */
	bool dwarf;
	uint64_t dwarf_snapshots, dwarf_bytes, dwarf_dropped, dwarf_no_slot, dwarf_unwound,
	    dwarf_failed, dwarf_used, dwarf_stitched, dwarf_rate_min, dwarf_cpu_ns, dwarf_fpless,
	    dwarf_fpless_over;
	/* --stacks cfi: the kernel walks, how they ended (unwind.end.*), the tables */
	bool unw;
	uint64_t unw_walks, unw_frames, unw_end[UNW_ENDS], unw_objects, unw_objects_fp, unw_rows,
	    unw_bytes, unw_max_bytes;
	char unw_max_object[64];
};

/* capture__count's kv callback (ctx: struct info_stats): the counters read. */
int info__counter(const char *key, const char *value, void *ctx);

/* The summary of c (its counts in s, its analysis r) as JSON on f. */
void info__json(FILE *f, struct capture *c, struct info_stats *s, const struct an_result *r);
/* The same as text on stdout (fitted to the terminal): 0, or -1 on a write error. */
int info__text(struct capture *c, struct info_stats *s, const struct an_result *r);

#endif /* GT_INFO_H */
