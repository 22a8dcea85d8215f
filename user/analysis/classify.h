/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * classify.h: what a blocked interval, a CPU sample or a stack was doing
 * (classify.c).  Private to the analysis files.
 */
#ifndef GT_CLASSIFY_H
#define GT_CLASSIFY_H

#include <stdbool.h>
#include <stdint.h>

struct model;
struct m_off;
struct m_sample;

/* Classification bits of a stack, computed once per stack id. */
#define STK_LOCK    0x01 /* leaf-most sync frame is a lock */
#define STK_HANDOFF 0x02 /* leaf-most sync frame is a condvar/park/join */
#define STK_ALLOC   0x04 /* an allocator frame */
#define STK_CUDA    0x08 /* a CUDA driver/runtime frame */
#define STK_FAULT   0x10 /* kernel: page fault or mm syscall */
#define STK_UPROBE  0x20 /* kernel: handling one of our uprobes (tracer overhead) */

/* STK_* bits of stack id (0: none or unknown), cached in its m_stack.cls. */
int model__stack_class(struct model *m, int32_t id);
/* The gt_cat of a blocked interval of a thread of process pid; *handoff: a wait another thread ends. */
int classify_blocked(struct model *m, uint32_t pid, const struct m_off *o, bool *handoff);
/* The gt_cat of a CPU sample. */
int classify_sample(struct model *m, const struct m_sample *s);

#endif /* GT_CLASSIFY_H */
