/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * dump.h: every record of a capture as one text line on stdout, in file
 * order, times in ms from the capture start (`gaptrace dump`).
 */
#ifndef GT_DUMP_H
#define GT_DUMP_H

#include <stdbool.h>
#include <stdint.h>

struct capture;

/* Only thread tid's records (-1: all); frames: each stack's function names. */
void dump__capture(struct capture *c, int64_t tid, bool frames);

#endif /* GT_DUMP_H */
