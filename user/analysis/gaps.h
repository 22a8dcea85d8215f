/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * gaps.h: from the model's GPU ops and units to the gaps (gaps.c).  Private
 * to the analysis files.
 */
#ifndef GT_GAPS_H
#define GT_GAPS_H

struct model;
struct an_result;

/* GPU busy intervals, gaps, units, clock check; fills r->devices/gaps. */
int gaps__find(struct model *m, struct an_result *r);

#endif /* GT_GAPS_H */
