// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * present.c: the presentation every output shares: category colours,
 * shares and breakdowns, the largest-gaps order, the GPU's busy time.
 */
#include <stdio.h>

#include "support/json.h"
#include "output/present.h"
#include "support/util.h"

/* Tableau 10: distinct for the common colour-vision deficiencies, calm on white. */
const char *const gt_cat_color[GT_CAT_MAX] = {
    [GT_CAT_SCHED] = "#e15759",	  /* red */
    [GT_CAT_LOCK] = "#f28e2b",	  /* orange */
    [GT_CAT_ALLOC] = "#edc948",	  /* yellow */
    [GT_CAT_WAIT] = "#76b7b2",	  /* teal */
    [GT_CAT_IO] = "#4e79a7",	  /* blue */
    [GT_CAT_SLEEP] = "#9c755f",	  /* brown */
    [GT_CAT_CUDA] = "#59a14f",	  /* green */
    [GT_CAT_CPU] = "#b07aa1",	  /* purple */
    [GT_CAT_UNKNOWN] = "#bab0ac", /* grey */
};

const unsigned char gt_cat_ansi[GT_CAT_MAX] = {
    [GT_CAT_SCHED] = 167, [GT_CAT_LOCK] = 208, [GT_CAT_ALLOC] = 221,
    [GT_CAT_WAIT] = 109,  [GT_CAT_IO] = 67,    [GT_CAT_SLEEP] = 137,
    [GT_CAT_CUDA] = 71,	  [GT_CAT_CPU] = 139,  [GT_CAT_UNKNOWN] = 248,
};

double present__pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

void present__breakdown(const uint64_t *by_cat, uint64_t total, char *buf, size_t len, int max,
			unsigned min_pct)
{
	int order[GT_CAT_MAX], n = 0;
	size_t off = 0;

	for (int c = 0; c < GT_CAT_MAX; c++)
		if (by_cat[c] && !(min_pct && by_cat[c] * 100 < total * min_pct))
			order[n++] = c;
	for (int i = 1; i < n; i++)
		for (int k = i; k > 0 && by_cat[order[k]] > by_cat[order[k - 1]]; k--) {
			int t = order[k];

			order[k] = order[k - 1];
			order[k - 1] = t;
		}
	buf[0] = '\0';
	for (int i = 0; i < n && i < max && off < len; i++) {
		char d[32];

		off += (size_t)snprintf(buf + off, len - off, "%s%s %s (%.0f%%)", i ? ", " : "",
					gt_cat_names[order[i]],
					gt_fmt_dur(by_cat[order[i]], d, sizeof(d)),
					present__pct(by_cat[order[i]], total));
	}
	if (n > max && off < len)
		snprintf(buf + off, len - off, ", +%d more", n - max);
}

int present__dominant(const uint64_t *by_cat)
{
	int best = GT_CAT_UNKNOWN;

	for (int c = 0; c < GT_CAT_MAX; c++)
		if (by_cat[c] > by_cat[best])
			best = c;
	return best;
}

bool present__untraced(const struct an_gap *g, const struct an_hop *h, char *buf, size_t len)
{
	char d[32];

	buf[0] = '\0';
	if (!h->untraced_tid || h->untraced_ns * 10 < g->duration_ns)
		return false;
	snprintf(buf, len, "%s of it woken by pid %u (%s), not traced",
		 gt_fmt_dur(h->untraced_ns, d, sizeof(d)), h->untraced_pid,
		 h->untraced_comm[0] ? gt_clean(h->untraced_comm) : "?");
	return true;
}

void present__json_untraced(struct json *j, const struct an_hop *h)
{
	if (!h->untraced_tid)
		return;
	json_key(j, "untraced_waker");
	json_obj_begin(j);
	json_ku64(j, "pid", h->untraced_pid);
	json_ku64(j, "tid", h->untraced_tid);
	json_kstr(j, "comm", h->untraced_comm);
	json_ku64(j, "wait_ns", h->untraced_ns);
	json_obj_end(j);
}

int present__cmp_gap_len(const void *a, const void *b)
{
	const struct an_gap *const *x = a, *const *y = b;

	if ((*x)->duration_ns != (*y)->duration_ns)
		return (*x)->duration_ns > (*y)->duration_ns ? -1 : 1;
	return (*x)->index < (*y)->index ? -1 : 1;
}

void present__gpu_busy(const struct an_result *r, uint64_t *busy, uint64_t *span)
{
	*busy = 0;
	*span = 0;
	for (size_t i = 0; i < r->ndevices; i++) {
		*busy += r->devices[i].busy_ns;
		*span += r->devices[i].span_ns;
	}
}

void present__json_clock(struct json *j, const struct an_result *r)
{
	json_key(j, "clock");
	json_obj_begin(j);
	json_ku64(j, "pairs", r->clock.pairs);
	json_kbool(j, "host_view", r->host_view);
	json_ku64(j, "violations", r->clock.violations);
	json_ki64(j, "offset_min_ns", r->clock.min_ns);
	json_ki64(j, "offset_p50_ns", r->clock.p50_ns);
	json_ki64(j, "offset_p99_ns", r->clock.p99_ns);
	json_ki64(j, "offset_max_ns", r->clock.max_ns);
	json_obj_end(j);
}
