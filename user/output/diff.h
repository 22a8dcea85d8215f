/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * diff.h: comparing two analysed captures (before, after): the numbers
 * behind `gaptrace diff`, exposed so tests can check them without parsing text.
 */
#ifndef GT_DIFF_H
#define GT_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/analysis.h"
#include "analysis/stats.h"

/* Values compared per observation: each category, then the whole gap. */
#define DF_TOTAL GT_CAT_MAX
#define DF_NVAL	 (GT_CAT_MAX + 1)

/* Level of the bootstrap interval of each mean change. */
#define DF_CI_LEVEL 0.99

struct df_rule {
	double alpha;		/* p below this (default 0.01) */
	uint64_t min_effect_ns; /* |mean change| at least this (default 0.5 ms) */
	double min_effect_frac; /* ... and this fraction of the before mean (default 0.10) */
	unsigned boot_iters;	/* bootstrap resamples (default 2000) */
};

void df_rule__defaults(struct df_rule *rule);

/* One side's observations: every gap, plus a zero per unit transition without one. */
struct df_side {
	size_t nobs, ngap_obs, nzero_obs;
	double *v[DF_NVAL]; /* v[k][i]: ns of value k in observation i */
	/* Unit transitions (unit_before -> unit_after) with their summed gap time. */
	struct df_trans {
		int64_t ub, ua;
		double v[DF_NVAL];
		size_t ngaps;
	} * trans;
	size_t ntrans;
	/* Open-addressing index of trans by (ub, ua): slot holds index + 1, 0 = empty. */
	size_t *tidx;
	size_t tidx_cap;
};

struct df_dist {
	double mean, median, p90, p99, sum;
};

struct df_value {
	struct df_dist before, after;
	double d_mean, d_median;
	struct st_test mw;
	double p_adj; /* mw.p after Holm's adjustment over the values tested */
	bool ci_ok;
	double ci_lo, ci_hi; /* bootstrap interval of after mean - before mean */
	bool practical, significant;
	/* Paired over unit transitions found in both captures. */
	double pair_d_median;
	struct st_test wx;
};

struct df_pair {
	int64_t ub, ua;
	double before[DF_NVAL], after[DF_NVAL];
};

struct df_stack {
	char *key;     /* flame graph frames, root (the category) first, ';'-joined */
	char *summary; /* "[thread] leaf <- caller <- ...", for one-line lists */
	int cat;
	uint64_t before_ns, after_ns;
};

struct df_result {
	struct df_rule rule;
	struct df_side before, after;
	struct df_value val[DF_NVAL];
	struct df_pair *pairs;
	size_t npairs;
	struct df_stack *stacks; /* by |change|, largest first */
	size_t nstacks;
	size_t nsignificant;
	size_t ntests; /* values with time on either side: Holm's m */
};

struct capture;

/*
 * Compares two analyses (run with an_opts.pieces for the stacks).  The
 * captures (may be NULL) name unresolved frames by module offset.
 */
struct df_result *diff__compute(const struct an_result *before, const struct an_result *after,
				const struct df_rule *rule, struct capture *cb, struct capture *ca);
void diff__free(struct df_result *d);
/* Test name of value k: a category name or "total". */
const char *diff__value_name(int k);
/* The first value (category or total) whose gap time grew significantly, or NULL. */
const char *diff__regression(const struct df_result *d);

/*
 * The comparison d of before b and after a (d's top rows: top) as text, or
 * as JSON (schema gaptrace.diff/1); both read the analyses' options.
 */
void diff__print_text(FILE *f, const struct an_result *b, const struct an_result *a,
		      const struct df_result *d, unsigned top);
void diff__print_json(FILE *f, const struct an_result *b, const struct an_result *a,
		      const struct df_result *d, unsigned top);
/*
 * AFTER's gap-time stacks red where they grew, blue where they shrank (a
 * differential flame graph); cb, ca (may be NULL) name unresolved frames.
 * Returns 0, or -1 if writing failed.
 */
int diff__flame_svg(FILE *out, const struct an_result *b, const struct an_result *a,
		    struct capture *cb, struct capture *ca);

#endif /* GT_DIFF_H */
