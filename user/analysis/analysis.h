/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * analysis.h: from a capture to explained gaps.  Pass 1 reads GPU activity,
 * units, threads, stacks and losses and finds the gaps; pass 2 keeps only the
 * CPU-side records that fall inside gap windows; attribution then splits each
 * gap into categories that sum exactly to its length.
 */
#ifndef GT_ANALYSIS_H
#define GT_ANALYSIS_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/result.h"

struct capture;

/*
 * Runs the whole analysis.  Returns 0 and *out, or -1 with a one-line
 * message in err (e.g. a capture without GPU activity is not an error: it
 * yields zero devices and a warning).
 */
int analysis__run(struct capture *c, const struct an_opts *o, struct an_result **out, char *err,
		  size_t errlen);
void an_result__free(struct an_result *r);
const char *an_result__thread_name(const struct an_result *r, uint32_t tid);
/*
 * Frames of a stack id, leaf first: cb(name, module) per frame; name is NULL
 * when unresolved (module may still be known).  A function inlined at a
 * frame's address is a frame of its own (inlined true, the same ip), ahead
 * of the function it was inlined into.  Returns the frame count.
 */
int an_result__stack(const struct an_result *r, int32_t stack_id,
		     void (*cb)(const char *name, const char *module, uint64_t ip, bool inlined,
				void *ctx),
		     void *ctx);
/* Name of a probe id ("malloc_trim"), or NULL. */
const char *an_result__probe_name(const struct an_result *r, uint32_t func_id);

#endif /* GT_ANALYSIS_H */
