/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * gaptrace-cupti-status.h: the status libgaptrace-cupti.so exports as the
 * symbol gaptrace_cupti_status, and gaptrace reads (and writes `fallback`
 * in) with process_vm_readv/writev, to fall back to libcuda uprobes when
 * CUPTI refuses the library.  Shared by cupti/gaptrace_cupti.c (which
 * defines it) and user/record/gpu.c.
 */
#ifndef GAPTRACE_CUPTI_STATUS_H
#define GAPTRACE_CUPTI_STATUS_H

#include <stdint.h>

#define GT_CUPTI_STATUS_SYMBOL "gaptrace_cupti_status"
#define GT_CUPTI_STATUS_MAGIC  0x47544353u /* "GTCS" */

struct gt_cupti_status {
	uint32_t magic;	   /* GT_CUPTI_STATUS_MAGIC */
	uint32_t failed;   /* set by the library, after reason */
	uint32_t fallback; /* set by the tracer once its libcuda uprobes are in place */
	char reason[180];  /* "what: why", NUL-terminated */
};

_Static_assert(sizeof(struct gt_cupti_status) == 192, "gaptrace_cupti_status layout");

#endif /* GAPTRACE_CUPTI_STATUS_H */
