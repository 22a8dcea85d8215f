/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * html.h: `gaptrace report --format html` — one self-contained page (summary,
 * GPU timeline, category table, largest gaps, flame graph) that opens offline.
 */
#ifndef GT_HTML_H
#define GT_HTML_H

#include <stdio.h>

struct an_result;
struct capture;

/*
 * Writes the page for r (analysed with its opts.pieces for the flame graph;
 * without pieces the page says the graph is missing).  top: largest gaps
 * listed.  cap (may be NULL) names unresolved frames by module offset.
 * Returns 0, or -1 if writing failed.
 */
int html__report(FILE *f, const struct an_result *r, unsigned top, struct capture *cap);

#endif /* GT_HTML_H */
