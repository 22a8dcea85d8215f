// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * stats.c: rank tests and a bootstrap for `gaptrace diff`.  Gap times are
 * skewed and often tied at zero, so the tests are rank-based and exact for
 * the small samples that a few units of a prover give.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/stats.h"
#include "support/util.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

void st_sort(double *x, size_t n)
{
	gt_sort(x, n, sizeof(*x), cmp_double);
}

double st_quantile(const double *sorted, size_t n, double q)
{
	double h;
	size_t i;

	if (!n)
		return 0;
	if (q <= 0)
		return sorted[0];
	if (q >= 1)
		return sorted[n - 1];
	h = (double)(n - 1) * q;
	i = (size_t)h;
	if (i + 1 >= n)
		return sorted[n - 1];
	return sorted[i] + (h - (double)i) * (sorted[i + 1] - sorted[i]);
}

double st_mean(const double *x, size_t n)
{
	double s = 0;

	for (size_t i = 0; i < n; i++)
		s += x[i];
	return n ? s / (double)n : 0;
}

struct ranked {
	double v;
	size_t idx;
};

static int cmp_ranked(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	if (x->v != y->v)
		return x->v < y->v ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/*
 * Doubled midranks (integers: ties share the mean of their ranks, times two)
 * of v[0..n) into r2[], indexed like v.  Returns sum over tie groups of t^3 - t.
 */
static double midranks2(const double *v, size_t n, long *r2)
{
	struct ranked *s = gt_xmalloc(sizeof(*s) * (n ? n : 1));
	double ties = 0;
	size_t i = 0;

	for (size_t k = 0; k < n; k++)
		s[k] = (struct ranked){v[k], k};
	gt_sort(s, n, sizeof(*s), cmp_ranked);
	while (i < n) {
		size_t j = i;

		while (j + 1 < n && s[j + 1].v == s[i].v)
			j++;
		/* ranks i+1 .. j+1 (1-based): their mean times two is i + j + 2 */
		for (size_t k = i; k <= j; k++)
			r2[s[k].idx] = (long)(i + j + 2);
		ties += pow((double)(j - i + 1), 3) - (double)(j - i + 1);
		i = j + 1;
	}
	free(s);
	return ties;
}

static double two_sided(double below_or_at, double above_or_at)
{
	double p = 2 * (below_or_at < above_or_at ? below_or_at : above_or_at);

	return p > 1 ? 1 : p;
}

static double normal_p(double dev, double var)
{
	double z;

	if (var <= 0)
		return 1;
	/* Continuity correction: the statistic moves in steps of at least 1/2. */
	z = fabs(dev) - 0.5;
	if (z < 0)
		z = 0;
	return erfc(z / sqrt(var) / M_SQRT2);
}

struct st_test st_mann_whitney(const double *x, size_t nx, const double *y, size_t ny)
{
	struct st_test t = {.p = 1};
	size_t n = nx + ny;
	double *all, ties, r1 = 0, mu, var;
	long *r2, obs2 = 0;

	if (!nx || !ny)
		return t;
	all = gt_xmalloc(sizeof(*all) * n);
	r2 = gt_xmalloc(sizeof(*r2) * n);
	memcpy(all, x, sizeof(*x) * nx);
	memcpy(all + nx, y, sizeof(*y) * ny);
	ties = midranks2(all, n, r2);
	for (size_t i = 0; i < nx; i++)
		obs2 += r2[i];
	r1 = (double)obs2 / 2;
	t.stat = r1 - (double)nx * (double)(nx + 1) / 2;
	mu = (double)nx * (double)ny / 2;
	var =
	    (double)nx * (double)ny / 12 * ((double)(n + 1) - ties / ((double)n * (double)(n - 1)));
	t.z = var > 0 ? (t.stat - mu) / sqrt(var) : 0;
	if (var <= 0) {
		/* Every value ties: no evidence of any difference. */
		t.p = 1;
	} else if (n <= ST_EXACT_MAX) {
		/* cnt[k][s]: subsets of k of the scores seen so far with doubled sum s. */
		long smax = (long)(n * (n + 1));
		double *cnt = gt_xcalloc((nx + 1) * (size_t)(smax + 1), sizeof(double));
		double below = 0, above = 0, total = 0;

		cnt[0] = 1;
		for (size_t i = 0; i < n; i++)
			for (size_t k = (i + 1 < nx ? i + 1 : nx); k >= 1; k--)
				for (long s = smax; s >= r2[i]; s--)
					cnt[k * (size_t)(smax + 1) + (size_t)s] +=
					    cnt[(k - 1) * (size_t)(smax + 1) + (size_t)(s - r2[i])];
		for (long s = 0; s <= smax; s++) {
			double c = cnt[nx * (size_t)(smax + 1) + (size_t)s];

			total += c;
			if (s <= obs2)
				below += c;
			if (s >= obs2)
				above += c;
		}
		t.p = two_sided(below / total, above / total);
		t.exact = 1;
		free(cnt);
	} else {
		t.p = normal_p(t.stat - mu, var);
	}
	free(all);
	free(r2);
	return t;
}

struct st_test st_wilcoxon(const double *d, size_t n)
{
	struct st_test t = {.p = 1};
	double *a = gt_xmalloc(sizeof(*a) * (n ? n : 1)), ties, mu, var;
	long *r2 = gt_xmalloc(sizeof(*r2) * (n ? n : 1)), w2 = 0;
	int *pos = gt_xmalloc(sizeof(*pos) * (n ? n : 1));
	size_t m = 0;

	for (size_t i = 0; i < n; i++) {
		if (d[i] == 0)
			continue;
		pos[m] = d[i] > 0;
		a[m++] = fabs(d[i]);
	}
	t.n = m;
	if (!m)
		goto out;
	ties = midranks2(a, m, r2);
	for (size_t i = 0; i < m; i++)
		if (pos[i])
			w2 += r2[i];
	t.stat = (double)w2 / 2;
	mu = (double)m * (double)(m + 1) / 4;
	var = (double)m * (double)(m + 1) * (double)(2 * m + 1) / 24 - ties / 48;
	t.z = var > 0 ? (t.stat - mu) / sqrt(var) : 0;
	if (m <= ST_EXACT_MAX) {
		/* Every sign pattern is equally likely: cnt[s] counts doubled sums s. */
		long smax = (long)(m * (m + 1));
		double *cnt = gt_xcalloc((size_t)smax + 1, sizeof(double));
		double below = 0, above = 0, total = 0;

		cnt[0] = 1;
		for (size_t i = 0; i < m; i++)
			for (long s = smax; s >= r2[i]; s--)
				cnt[s] += cnt[s - r2[i]];
		for (long s = 0; s <= smax; s++) {
			total += cnt[s];
			if (s <= w2)
				below += cnt[s];
			if (s >= w2)
				above += cnt[s];
		}
		t.p = two_sided(below / total, above / total);
		t.exact = 1;
		free(cnt);
	} else {
		t.p = normal_p(t.stat - mu, var);
	}
out:
	free(a);
	free(r2);
	free(pos);
	return t;
}

static uint64_t next_rand(uint64_t *s)
{
	/* xorshift64*: fast, and a fixed seed makes every diff repeatable. */
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

/* An index below n from one draw: multiply and shift, no division per draw. */
static size_t pick(uint64_t *s, size_t n)
{
	return (size_t)(((unsigned __int128)next_rand(s) * n) >> 64);
}

/* Sum of w[i] * x[i]: four running sums, so the multiplies overlap. */
static double dot(const double *w, const double *x, size_t n)
{
	double a0 = 0, a1 = 0, a2 = 0, a3 = 0;
	size_t i = 0;

	for (; i + 4 <= n; i += 4) {
		a0 += w[i] * x[i];
		a1 += w[i + 1] * x[i + 1];
		a2 += w[i + 2] * x[i + 2];
		a3 += w[i + 3] * x[i + 3];
	}
	for (; i < n; i++)
		a0 += w[i] * x[i];
	return (a0 + a1) + (a2 + a3);
}

/*
 * Adds the values of n observations drawn with replacement from col (dim
 * columns of n) to sum.  The draws only count how often each observation is
 * drawn (w, n entries: small enough to stay in cache), then each column is
 * weighed in one sequential pass: n random reads of data bigger than the
 * caches cost several times more.  The draws are the same, in the same
 * order, whatever dim is.
 */
static void resample_sum(const double *col, size_t n, size_t dim, uint64_t *s, double *w,
			 double *sum)
{
	memset(w, 0, sizeof(*w) * n);
	for (size_t i = 0; i < n; i++)
		w[pick(s, n)] += 1;
	for (size_t k = 0; k < dim; k++)
		sum[k] = dot(w, col + k * n, n);
}

/* Rows of dim values (row-major) as dim columns of n. */
static double *columns(const double *x, size_t n, size_t dim)
{
	double *col = gt_xmalloc(sizeof(*col) * n * dim);

	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < dim; k++)
			col[k * n + i] = x[i * dim + k];
	return col;
}

int st_bootstrap_mean_diff_rows(const double *x, size_t nx, const double *y, size_t ny, size_t dim,
				unsigned iters, double level, uint64_t seed, double *lo, double *hi)
{
	double *d, *sx, *sy, *w, *cx, *cy;
	uint64_t s = seed ? seed : 0x9E3779B97F4A7C15ULL;

	for (size_t k = 0; k < dim; k++)
		lo[k] = hi[k] = 0;
	if (!nx || !ny || !iters || !dim)
		return -1;
	d = gt_xmalloc(sizeof(*d) * iters * dim);
	sx = gt_xmalloc(sizeof(*sx) * dim);
	sy = gt_xmalloc(sizeof(*sy) * dim);
	w = gt_xmalloc(sizeof(*w) * GT_MAX(nx, ny));
	cx = columns(x, nx, dim);
	cy = columns(y, ny, dim);
	for (unsigned b = 0; b < iters; b++) {
		resample_sum(cy, ny, dim, &s, w, sy);
		resample_sum(cx, nx, dim, &s, w, sx);
		for (size_t k = 0; k < dim; k++)
			d[k * iters + b] = sy[k] / (double)ny - sx[k] / (double)nx;
	}
	for (size_t k = 0; k < dim; k++) {
		double *dk = d + k * iters;

		st_sort(dk, iters);
		lo[k] = st_quantile(dk, iters, (1 - level) / 2);
		hi[k] = st_quantile(dk, iters, 1 - (1 - level) / 2);
	}
	free(d);
	free(sx);
	free(sy);
	free(w);
	free(cx);
	free(cy);
	return 0;
}

int st_bootstrap_mean_diff(const double *x, size_t nx, const double *y, size_t ny, unsigned iters,
			   double level, uint64_t seed, double *lo, double *hi)
{
	return st_bootstrap_mean_diff_rows(x, nx, y, ny, 1, iters, level, seed, lo, hi);
}
