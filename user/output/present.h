/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * present.h: how every output presents categories and gaps: the category
 * colours, shares, the "lock 26.1 ms (97%), cpu 0.52 ms" breakdowns, the
 * largest-first gap order and the GPU's busy time; shared by report, html,
 * flame and diff so a category looks and reads the same everywhere.
 */
#ifndef GT_PRESENT_H
#define GT_PRESENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/analysis.h"

/*
 * One colour per category ("#rrggbb"), indexed by enum gt_cat: every visual
 * output (flame SVG, HTML report) uses these so a category looks the same
 * everywhere.  gt_cat_ansi[] is the nearest 256-colour SGR code for terminals.
 */
extern const char *const gt_cat_color[GT_CAT_MAX];
extern const unsigned char gt_cat_ansi[GT_CAT_MAX];

/* 100 * part / whole, 0 when whole is 0. */
double present__pct(uint64_t part, uint64_t whole);

/*
 * The categories of by_cat, largest first (ties in category order), as
 * "lock 26.1 ms (97%), cpu 0.52 ms (3%)", shares of total: at most max of
 * them, then ", +N more" for the rest; with min_pct, only those of at least
 * min_pct percent of total.  buf is always NUL-terminated.
 */
void present__breakdown(const uint64_t *by_cat, uint64_t total, char *buf, size_t len, int max,
			unsigned min_pct);

/* The category with the most time (GT_CAT_UNKNOWN when none has more). */
int present__dominant(const uint64_t *by_cat);

/* qsort order of const struct an_gap *: longest first, then by index. */
int present__cmp_gap_len(const void *a, const void *b);

/*
 * A waker outside the trace behind at least a tenth of the gap, on hop h of
 * gap g: "12.0 ms of it woken by pid 539 (pt_data_worker), not traced" in buf
 * and true; false (buf "") when the hop has none worth naming.
 */
bool present__untraced(const struct an_gap *g, const struct an_hop *h, char *buf, size_t len);

struct json;
/*
 * Hop h's waker outside the trace as the JSON key "untraced_waker": {pid,
 * tid, comm, wait_ns} (report's chain hops, export's hop slices); nothing
 * when it has none.
 */
void present__json_untraced(struct json *j, const struct an_hop *h);

/* Busy and span time summed over the result's GPUs. */
void present__gpu_busy(const struct an_result *r, uint64_t *busy, uint64_t *span);

/*
 * The "clock" object (GPU start minus its launch call, over the matched
 * ops) of report and info JSON: one shape for both.
 */
void present__json_clock(struct json *j, const struct an_result *r);

#endif /* GT_PRESENT_H */
