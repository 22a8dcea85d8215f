/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * count.h: a capture's blocks and records counted in one pass (what
 * `gaptrace info` shows of a file's contents).
 */
#ifndef GT_CAPTURE_COUNT_H
#define GT_CAPTURE_COUNT_H

#include <stdint.h>

#include "gaptrace/gaptrace.h"

struct capture;

/* Block kinds counted: HEADER in slot 0, then the types 1 (EVENTS) to INLINES. */
#define CAPTURE_BLOCK_KINDS 10

struct capture_counts {
	uint64_t blocks[CAPTURE_BLOCK_KINDS], block_bytes[CAPTURE_BLOCK_KINDS];
	uint64_t unknown_blocks; /* also noted on the capture (capture__note_unknown) */
	uint64_t recs[GT_REC_MAX], unknown_recs;
	uint64_t gpu_block_recs; /* GPU operations held in GPU_OPS blocks */
};

/*
 * Reads c from its current block to the end, counting into n (zeroed
 * first); kv (may be NULL) gets each key=value of the COUNTERS and END
 * blocks on the way, so the file is read once.  Rewinds c afterwards.
 */
void capture__count(struct capture *c, struct capture_counts *n,
		    int (*kv)(const char *key, const char *value, void *ctx), void *ctx);

#endif /* GT_CAPTURE_COUNT_H */
