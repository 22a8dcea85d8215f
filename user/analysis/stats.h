/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * stats.h: the statistics `gaptrace diff` uses to tell a real change from
 * run-to-run noise: quantiles, Mann-Whitney U, Wilcoxon signed-rank, bootstrap.
 */
#ifndef GT_STATS_H
#define GT_STATS_H

#include <stddef.h>
#include <stdint.h>

/* Samples up to this size (both together) get exact p-values. */
#define ST_EXACT_MAX 50

/* Quantile q in [0, 1] of an ascending array, linear interpolation (R type 7); 0 if n == 0. */
double st_quantile(const double *sorted, size_t n, double q);
double st_mean(const double *x, size_t n);
/* Sorts a copy-free array of doubles ascending. */
void st_sort(double *x, size_t n);

struct st_test {
	double stat; /* U of the first sample, or W+ */
	double z;    /* normal approximation's z (also computed when exact) */
	double p;    /* two-sided p-value; 1 when a sample is empty or all values tie */
	int exact;   /* p from the exact permutation distribution (ties included) */
	size_t n;    /* Wilcoxon: non-zero differences used */
};

/*
 * Two-sided Mann-Whitney U test of x against y.  Exact (the permutation
 * distribution of the midrank sum, so ties are handled) when nx + ny <=
 * ST_EXACT_MAX, else the normal approximation with tie and continuity
 * corrections.
 */
struct st_test st_mann_whitney(const double *x, size_t nx, const double *y, size_t ny);

/*
 * Two-sided Wilcoxon signed-rank test of paired differences d (zeros are
 * dropped, Wilcoxon's rule); exact for up to ST_EXACT_MAX non-zero
 * differences, else normal with tie and continuity corrections.
 */
struct st_test st_wilcoxon(const double *d, size_t n);

/*
 * Percentile bootstrap interval at level (e.g. 0.99) of mean(y) - mean(x),
 * from iters resamples drawn with a fixed seed so that output repeats.
 * Returns -1 (lo = hi = 0) when a sample is empty.
 */
int st_bootstrap_mean_diff(const double *x, size_t nx, const double *y, size_t ny, unsigned iters,
			   double level, uint64_t seed, double *lo, double *hi);
/*
 * The same for dim values at once: x and y hold rows of dim values
 * (row-major) and each resample draws whole rows, so one draw serves every
 * value (the per-value intervals come from the same resamples); lo and hi
 * receive dim bounds.  Cost: iters * (nx + ny) draws, not dim times that.
 */
int st_bootstrap_mean_diff_rows(const double *x, size_t nx, const double *y, size_t ny, size_t dim,
				unsigned iters, double level, uint64_t seed, double *lo,
				double *hi);

#endif /* GT_STATS_H */
