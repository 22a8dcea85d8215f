/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * prom.h: the monitor's metrics, added up window by window from the
 * analysis's results, and written in the Prometheus text exposition format
 * (base units, _total counters, HELP and TYPE lines, bounded label sets).
 */
#ifndef GT_PROM_H
#define GT_PROM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/result.h"

#define PROM_DEVICES 16 /* devices with labels of their own; more share device="other" */
#define PROM_BUCKETS 14 /* gap-length histogram buckets, +Inf apart */

/* How much of a window had GPU collection on (monitor --gpu-duty). */
enum prom_cov {
	PROM_COV_FULL,	  /* all of it */
	PROM_COV_PARTIAL, /* from some point on (the first window after an attach) */
	PROM_COV_NONE,	  /* none: its GPU data, if any, is not counted */
	PROM_COV_MAX,
};

extern const char *const prom_cov_names[PROM_COV_MAX];

struct prom_dev {
	bool used;
	uint32_t id;
	double busy_s;
	double gap_s[3][GT_CAT_MAX]; /* by gap kind, then category */
	uint64_t gaps[3];
	uint64_t bucket[PROM_BUCKETS]; /* gaps no longer than prom_bounds[i] (not cumulative) */
	double gap_sum_s;
	uint64_t gap_count;
	double efficiency; /* the last window's busy / span; < 0: no GPU work in it */
	double boundary_s; /* idle between two windows' GPU work: in neither window's gaps */
	uint64_t last_end_ns;
};

struct prom {
	struct prom_dev dev[PROM_DEVICES + 1];
	uint64_t windows;
	uint64_t lost;	   /* events lost, all recorders together */
	uint64_t restarts; /* attaches after the first */
	bool attached;
	double cpu_s;	   /* the monitor's own CPU time */
	uint64_t rss;	   /* its resident memory */
	uint64_t rb_bytes; /* ring-buffer bytes read, all recorders together */
	uint64_t disk_bytes, segments, snapshots;
	double window_end_s;		    /* UNIX time of the last window's end, 0 none */
	double analysis_s;		    /* how long the last window's analysis took */
	char gpu_source[32];		    /* the last window's GPU source, a label value */
	enum prom_cov coverage;		    /* the last window's */
	uint64_t gpu_windows[PROM_COV_MAX]; /* windows by coverage */
	double covered_s;		    /* window time with GPU collection on */
	double duty;			    /* configured share of windows with it on (1: always) */
};

extern const double prom_bounds[PROM_BUCKETS];

/*
 * Adds one window's analysis, whose GPU collection covered covered_s of it
 * (cov): an uncovered window adds nothing to the busy and gap counters and
 * leaves the efficiency of the last covered one.  A new target process
 * (restart) forgets where GPU work ended.
 */
void prom__add_window(struct prom *p, const struct an_result *res, enum prom_cov cov,
		      double covered_s);
void prom__new_target(struct prom *p);
/* Writes the exposition text into a malloc'd NUL-terminated buffer (*len bytes); NULL on failure. */
char *prom__render(const struct prom *p, size_t *len);

#endif /* GT_PROM_H */
