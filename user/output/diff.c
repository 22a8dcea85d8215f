// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * diff.c: the comparison behind `gaptrace diff BEFORE AFTER` — per-gap
 * observations of both captures, their distributions, the tests (Mann-Whitney,
 * bootstrap interval, Holm, Wilcoxon over paired units), the verdict per
 * category, and the stacks whose gap time moved most.  Printing: diff_cmd.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "capture/capture.h"
#include "output/diff.h"
#include "output/flame.h"
#include "analysis/stats.h"
#include "analysis/timeline.h"
#include "support/util.h"

#define BOOT_SEED 0x67617074726163ULL /* fixed: the same captures give the same interval */

void df_rule__defaults(struct df_rule *rule)
{
	rule->alpha = 0.01;
	rule->min_effect_ns = NSEC_PER_MSEC / 2;
	rule->min_effect_frac = 0.10;
	rule->boot_iters = 2000;
}

const char *diff__value_name(int k)
{
	return k == DF_TOTAL ? "total" : gt_cat_names[k];
}

/* ---- observations ---- */

static void obs_add(struct df_side *s, size_t *cap, const double *v)
{
	if (s->nobs == *cap) {
		*cap = *cap ? *cap * 2 : 64;
		for (int k = 0; k < DF_NVAL; k++)
			s->v[k] = gt_xrealloc(s->v[k], sizeof(double) * *cap);
	}
	for (int k = 0; k < DF_NVAL; k++)
		s->v[k][s->nobs] = v[k];
	s->nobs++;
}

static size_t trans_slot(const struct df_side *s, int64_t ub, int64_t ua)
{
	uint64_t h =
	    ((uint64_t)ub * 0x9E3779B97F4A7C15ULL) ^ ((uint64_t)ua * 0xC2B2AE3D27D4EB4FULL);

	return (size_t)(h ^ (h >> 31)) & (s->tidx_cap - 1);
}

/* Transitions are unique by (ub, ua): a hash index, not a scan per gap. */
static struct df_trans *trans_find(struct df_side *s, int64_t ub, int64_t ua)
{
	if (!s->tidx_cap)
		return NULL;
	for (size_t i = trans_slot(s, ub, ua);; i = (i + 1) & (s->tidx_cap - 1)) {
		struct df_trans *t;

		if (!s->tidx[i])
			return NULL;
		t = &s->trans[s->tidx[i] - 1];
		if (t->ub == ub && t->ua == ua)
			return t;
	}
}

static void tidx_put(struct df_side *s, size_t idx)
{
	const struct df_trans *t = &s->trans[idx];
	size_t i = trans_slot(s, t->ub, t->ua);

	while (s->tidx[i])
		i = (i + 1) & (s->tidx_cap - 1);
	s->tidx[i] = idx + 1;
}

static struct df_trans *trans_add(struct df_side *s, size_t *cap, int64_t ub, int64_t ua)
{
	struct df_trans *t;

	gt_grow((void **)&s->trans, cap, s->ntrans, sizeof(*s->trans));
	t = &s->trans[s->ntrans++];
	memset(t, 0, sizeof(*t));
	t->ub = ub;
	t->ua = ua;
	if (s->ntrans * 2 > s->tidx_cap) {
		free(s->tidx);
		s->tidx_cap = s->tidx_cap ? s->tidx_cap * 2 : 64;
		s->tidx = gt_xcalloc(s->tidx_cap, sizeof(*s->tidx));
		for (size_t i = 0; i < s->ntrans; i++)
			tidx_put(s, i);
	} else {
		tidx_put(s, s->ntrans - 1);
	}
	return t;
}

static void gap_values(const struct an_gap *g, double *v)
{
	for (int c = 0; c < GT_CAT_MAX; c++)
		v[c] = (double)g->by_cat[c];
	v[DF_TOTAL] = (double)g->duration_ns;
}

/*
 * Every gap is an observation.  A unit-to-unit transition with no gap at all
 * (the GPU went straight on) is one more observation of zero: a fix that
 * removes a gap shrinks it to nothing rather than dropping it from the
 * sample, which would leave nothing to compare.
 */
static void side_build(struct df_side *s, const struct an_result *r)
{
	struct timeline *tl = timeline__new(r);
	size_t cap = 0, tcap = 0;
	double v[DF_NVAL];

	for (size_t i = 0; i + 1 < tl->nunits; i++)
		if (!trans_find(s, (int64_t)tl->units[i].id, (int64_t)tl->units[i + 1].id))
			trans_add(s, &tcap, (int64_t)tl->units[i].id, (int64_t)tl->units[i + 1].id);
	for (size_t i = 0; i < r->ngaps; i++) {
		const struct an_gap *g = &r->gaps[i];
		struct df_trans *t;

		gap_values(g, v);
		obs_add(s, &cap, v);
		s->ngap_obs++;
		if (g->kind != GT_GAP_INTER || g->unit_before < 0 || g->unit_after < 0 ||
		    !tl->nunits)
			continue;
		t = trans_find(s, g->unit_before, g->unit_after);
		if (!t)
			t = trans_add(s, &tcap, g->unit_before, g->unit_after);
		for (int k = 0; k < DF_NVAL; k++)
			t->v[k] += v[k];
		t->ngaps++;
	}
	memset(v, 0, sizeof(v));
	for (size_t i = 0; i < s->ntrans; i++) {
		if (s->trans[i].ngaps)
			continue;
		obs_add(s, &cap, v);
		s->nzero_obs++;
	}
	/* An empty side still gets arrays, so callers never see NULL. */
	if (!cap)
		for (int k = 0; k < DF_NVAL; k++)
			s->v[k] = gt_xcalloc(1, sizeof(double));
	timeline__free(tl);
}

static struct df_dist dist_of(const double *x, size_t n)
{
	double *s = gt_xmalloc(sizeof(double) * (n ? n : 1));
	struct df_dist d = {};

	memcpy(s, x, sizeof(double) * n);
	st_sort(s, n);
	d.mean = st_mean(s, n);
	d.median = st_quantile(s, n, 0.5);
	d.p90 = st_quantile(s, n, 0.9);
	d.p99 = st_quantile(s, n, 0.99);
	for (size_t i = 0; i < n; i++)
		d.sum += s[i];
	free(s);
	return d;
}

/*
 * Significant = the rank test says the two samples differ (Holm-adjusted p
 * < alpha, see decide()), the bootstrap interval of the mean change excludes
 * zero, and the mean change is large enough to matter: at least
 * min_effect_ns and min_effect_frac of the before mean.  The mean, not the
 * median: mean times gap count is the idle time paid for, and a cause that
 * hits only some gaps moves the mean but leaves the median at zero.  The rank
 * test keeps one outlier from making a mean change "significant".
 */
static void value_compare(struct df_result *d, int k)
{
	const struct df_side *b = &d->before, *a = &d->after;
	struct df_value *val = &d->val[k];
	double need;

	val->before = dist_of(b->v[k], b->nobs);
	val->after = dist_of(a->v[k], a->nobs);
	val->d_mean = val->after.mean - val->before.mean;
	val->d_median = val->after.median - val->before.median;
	val->mw = st_mann_whitney(b->v[k], b->nobs, a->v[k], a->nobs);
	val->p_adj = val->mw.p;
	need = GT_MAX((double)d->rule.min_effect_ns, d->rule.min_effect_frac * val->before.mean);
	val->practical = fabs(val->d_mean) >= need;
}

/* One side's observations as rows of the values listed in col, for the joint bootstrap. */
static double *side_rows(const struct df_side *s, const int *col, size_t ncol)
{
	double *rows = gt_xmalloc(sizeof(*rows) * (ncol ? ncol : 1) * (s->nobs ? s->nobs : 1));

	for (size_t i = 0; i < s->nobs; i++)
		for (size_t c = 0; c < ncol; c++)
			rows[i * ncol + c] = s->v[col[c]][i];
	return rows;
}

static bool any_time(const struct df_side *s, int k)
{
	for (size_t i = 0; i < s->nobs; i++)
		if (s->v[k][i] != 0)
			return true;
	return false;
}

/*
 * The bootstrap intervals of every value's mean change.  Each resample draws
 * whole observations and serves all values at once: a diff of two 100k-unit
 * captures made DF_NVAL separate bootstraps of 2000 x 200k random reads each
 * (~170 s).  A value with no time on either side changes by exactly 0 in
 * every resample: it is left out of the rows, its interval is [0, 0].
 */
static void intervals(struct df_result *d)
{
	const struct df_side *b = &d->before, *a = &d->after;
	double lo[DF_NVAL] = {}, hi[DF_NVAL] = {}, *rb, *ra;
	int col[DF_NVAL];
	size_t ncol = 0;
	bool ok = b->nobs && a->nobs && d->rule.boot_iters;

	for (int k = 0; k < DF_NVAL; k++)
		if (any_time(b, k) || any_time(a, k))
			col[ncol++] = k;
	rb = side_rows(b, col, ncol);
	ra = side_rows(a, col, ncol);
	if (ok && ncol)
		ok =
		    !st_bootstrap_mean_diff_rows(rb, b->nobs, ra, a->nobs, ncol, d->rule.boot_iters,
						 DF_CI_LEVEL, BOOT_SEED, lo, hi);
	for (int k = 0; k < DF_NVAL; k++)
		d->val[k].ci_ok = ok;
	/* lo and hi hold the listed values first: spread them to their places. */
	for (size_t c = ncol; c-- > 0;) {
		d->val[col[c]].ci_lo = lo[c];
		d->val[col[c]].ci_hi = hi[c];
	}
	free(rb);
	free(ra);
}

static int cmp_by_p(const void *x, const void *y)
{
	const struct df_value *a = *(const struct df_value *const *)x;
	const struct df_value *b = *(const struct df_value *const *)y;

	return a->mw.p < b->mw.p ? -1 : a->mw.p > b->mw.p;
}

/*
 * One diff runs a test per category and for the whole gap, and its verdict
 * is "something changed" if any fires: Holm's step-down adjustment keeps the
 * chance of a false alarm per diff at alpha, not alpha times the number of
 * tests.  Values with no time on either side test nothing and are left out.
 */
static void decide(struct df_result *d)
{
	struct df_value *order[DF_NVAL];
	double run = 0;
	size_t m = 0;

	for (int k = 0; k < DF_NVAL; k++)
		if (d->val[k].before.sum || d->val[k].after.sum)
			order[m++] = &d->val[k];
	gt_sort(order, m, sizeof(*order), cmp_by_p);
	for (size_t i = 0; i < m; i++) {
		double p = (double)(m - i) * order[i]->mw.p;

		run = GT_MAX(run, GT_MIN(p, 1.0));
		order[i]->p_adj = run;
	}
	d->ntests = m;
	for (int k = 0; k < DF_NVAL; k++) {
		struct df_value *v = &d->val[k];

		v->significant = v->p_adj < d->rule.alpha && v->practical && v->ci_ok &&
				 (v->ci_lo > 0 || v->ci_hi < 0);
		d->nsignificant += v->significant;
	}
}

static void pairs_build(struct df_result *d)
{
	const struct df_side *b = &d->before, *a = &d->after;
	double *diffs;

	for (size_t i = 0; i < b->ntrans; i++) {
		const struct df_trans *tb = &b->trans[i];
		const struct df_trans *ta = trans_find((struct df_side *)a, tb->ub, tb->ua);
		struct df_pair *p;

		if (!ta)
			continue;
		d->pairs = gt_xrealloc(d->pairs, sizeof(*d->pairs) * (d->npairs + 1));
		p = &d->pairs[d->npairs++];
		p->ub = tb->ub;
		p->ua = tb->ua;
		memcpy(p->before, tb->v, sizeof(p->before));
		memcpy(p->after, ta->v, sizeof(p->after));
	}
	diffs = gt_xmalloc(sizeof(double) * (d->npairs ? d->npairs : 1));
	for (int k = 0; k < DF_NVAL; k++) {
		for (size_t i = 0; i < d->npairs; i++)
			diffs[i] = d->pairs[i].after[k] - d->pairs[i].before[k];
		d->val[k].wx = st_wilcoxon(diffs, d->npairs);
		st_sort(diffs, d->npairs);
		d->val[k].pair_d_median = st_quantile(diffs, d->npairs, 0.5);
	}
	free(diffs);
}

/* ---- stacks ---- */

/*
 * The stacks come from the flame graph's tree, so they read exactly as in
 * `gaptrace flame` (same frames, demangling, thread frame).  The tree only
 * lists stacks that have "after" time, so a second tree with the sides
 * swapped finds those that vanished.
 */
struct stack_ctx {
	struct df_result *d;
	size_t cap;
	bool swapped;
};

static void stack_cb(const struct flame_stack *fs, void *ctx)
{
	struct stack_ctx *sc = ctx;
	struct df_result *d = sc->d;
	const char *sum[3];
	size_t n, len = 0, off = 0;
	char thr[64], line[320];
	struct df_stack *s;

	/* The swapped tree only adds what the first one cannot see. */
	if (sc->swapped && fs->before_ns)
		return;
	for (size_t i = 0; i < fs->nframes; i++)
		len += strlen(fs->frames[i]) + 1;
	gt_grow((void **)&d->stacks, &sc->cap, d->nstacks, sizeof(*d->stacks));
	s = &d->stacks[d->nstacks++];
	memset(s, 0, sizeof(*s));
	s->key = gt_xmalloc(len + 1);
	s->key[0] = '\0';
	for (size_t i = 0; i < fs->nframes; i++) {
		if (i)
			strcat(s->key, ";");
		strcat(s->key, fs->frames[i]);
	}
	s->cat = fs->cat;
	s->after_ns = sc->swapped ? fs->before_ns : fs->ns;
	s->before_ns = sc->swapped ? fs->ns : fs->before_ns;
	n = flame_stack__summary(fs, sum, GT_ARRAY_SIZE(sum));
	line[0] = '\0';
	if (flame_stack__thread(fs, thr, sizeof(thr)))
		off = (size_t)snprintf(line, sizeof(line), "[%s] ", thr);
	for (size_t i = 0; i < n && off < sizeof(line); i++)
		off += (size_t)snprintf(line + off, sizeof(line) - off, "%s%s", i ? " <- " : "",
					sum[i]);
	if (!n && fs->nframes && off < sizeof(line))
		snprintf(line + off, sizeof(line) - off, "%s", fs->frames[fs->nframes - 1]);
	s->summary = gt_xstrdup(line);
}

static int cmp_stack_change(const void *a, const void *b)
{
	const struct df_stack *x = a, *y = b;
	double dx = fabs((double)x->after_ns - (double)x->before_ns);
	double dy = fabs((double)y->after_ns - (double)y->before_ns);

	if (dx != dy)
		return dx > dy ? -1 : 1;
	return strcmp(x->key, y->key);
}

static void stacks_build(struct df_result *d, const struct an_result *b, const struct an_result *a,
			 struct capture *cb, struct capture *ca)
{
	struct stack_ctx sc = {.d = d};
	struct flame_filter fb, fa;

	flame_filter__init(&fb);
	flame_filter__init(&fa);
	fb.cap = cb;
	fa.cap = ca;
	for (int pass = 0; pass < 2; pass++) {
		struct flame *fl = flame__new();

		sc.swapped = pass;
		flame__add_result(fl, b, &fb, pass ? FLAME_AFTER : FLAME_BEFORE);
		flame__add_result(fl, a, &fa, pass ? FLAME_BEFORE : FLAME_AFTER);
		flame__top_stacks(fl, -1, SIZE_MAX, stack_cb, &sc);
		flame__free(fl);
	}
	gt_sort(d->stacks, d->nstacks, sizeof(*d->stacks), cmp_stack_change);
}

struct df_result *diff__compute(const struct an_result *before, const struct an_result *after,
				const struct df_rule *rule, struct capture *cb, struct capture *ca)
{
	struct df_result *d = gt_xcalloc(1, sizeof(*d));

	if (rule)
		d->rule = *rule;
	else
		df_rule__defaults(&d->rule);
	side_build(&d->before, before);
	side_build(&d->after, after);
	intervals(d);
	for (int k = 0; k < DF_NVAL; k++)
		value_compare(d, k);
	decide(d);
	pairs_build(d);
	stacks_build(d, before, after, cb, ca);
	return d;
}

static void side_free(struct df_side *s)
{
	for (int k = 0; k < DF_NVAL; k++)
		free(s->v[k]);
	free(s->trans);
	free(s->tidx);
}

void diff__free(struct df_result *d)
{
	if (!d)
		return;
	side_free(&d->before);
	side_free(&d->after);
	free(d->pairs);
	for (size_t i = 0; i < d->nstacks; i++) {
		free(d->stacks[i].key);
		free(d->stacks[i].summary);
	}
	free(d->stacks);
	free(d);
}
