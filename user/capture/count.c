// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * count.c: a capture's blocks and records counted in one pass, with the
 * counter blocks handed to the caller on the way.
 */
#include <string.h>

#include "capture/capture.h"
#include "capture/count.h"

static int block_slot(uint32_t type)
{
	return type == GT_BLK_HEADER ? 0 : (type >= 1 && type <= GT_BLK_INLINES ? (int)type : -1);
}

static int count_rec(const void *rec, size_t size, void *ctx)
{
	struct capture_counts *n = ctx;
	const struct gt_hdr *h = rec;

	if (h->type > 0 && h->type < GT_REC_MAX)
		n->recs[h->type]++;
	else
		n->unknown_recs++;
	(void)size;
	return 0;
}

void capture__count(struct capture *c, struct capture_counts *n,
		    int (*kv)(const char *key, const char *value, void *ctx), void *ctx)
{
	struct capture_block b;

	memset(n, 0, sizeof(*n));
	while (capture__next(c, &b) == 1) {
		int slot = block_slot(b.type);

		if (slot < 0) {
			n->unknown_blocks++;
			capture__note_unknown(c, b.type);
			continue;
		}
		n->blocks[slot]++;
		n->block_bytes[slot] += b.len;
		if (b.type == GT_BLK_GPU_OPS) {
			uint64_t before = n->recs[GT_REC_GPU_OP];

			capture__gpu_ops(b.body, b.len, count_rec, n);
			n->gpu_block_recs += n->recs[GT_REC_GPU_OP] - before;
		} else if (b.type == GT_BLK_EVENTS) {
			capture__events(b.body, b.len, count_rec, n);
		} else if (kv && (b.type == GT_BLK_COUNTERS || b.type == GT_BLK_END))
			capture__kv(b.body, b.len, kv, ctx);
	}
	capture__rewind(c);
}
