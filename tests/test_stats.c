// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_stats.c: the statistics behind `gaptrace diff` against reference
 * values (SciPy 1.10, and brute-force enumeration where ties make it exact).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "analysis/stats.h"
#include "support/util.h"

#define assert_close(a, b, rel)                                             \
	do {                                                                \
		double a_ = (a), b_ = (b);                                  \
		if (fabs(a_ - b_) > (rel)*fabs(b_))                         \
			fail_msg("%s = %.10g, expected %.10g", #a, a_, b_); \
	} while (0)

static void test_quantile_linear(void **state)
{
	double x[] = {1, 2, 3, 4}, y[] = {5, 1, 9, 3, 7};

	assert_close(st_quantile(x, 4, 0.5), 2.5, 1e-12);
	assert_close(st_quantile(x, 4, 0.9), 3.7, 1e-12);
	st_sort(y, 5);
	assert_close(st_quantile(y, 5, 0.99), 8.92, 1e-12);
	assert_close(st_quantile(y, 5, 0), 1, 0);
	assert_close(st_quantile(y, 0, 0.5), 0, 0);
	assert_close(st_mean(y, 5), 5, 1e-12);
}

static void test_mann_whitney_exact_small(void **state)
{
	double x[] = {1, 2, 3}, y[] = {4, 5, 6};
	struct st_test t = st_mann_whitney(x, 3, y, 3);

	assert_true(t.exact);
	assert_close(t.stat, 0, 0);
	assert_close(t.p, 0.1, 1e-12);
}

static void test_mann_whitney_separated_nine(void **state)
{
	double b[9], a[9];
	struct st_test t;

	/* A lock of 15-25 ms in every gap, then none: the acceptance case. */
	for (int i = 0; i < 9; i++) {
		b[i] = 15e6 + 1e6 * i;
		a[i] = 0;
	}
	t = st_mann_whitney(b, 9, a, 9);
	assert_true(t.exact);
	assert_close(t.p, 2.0 / 48620, 1e-9);
	assert_close(t.stat, 81, 0);
}

static void test_mann_whitney_exact_with_ties(void **state)
{
	double z[7] = {}, y[] = {1, 2, 3, 4, 5, 6, 7};
	double x2[] = {1, 1, 2, 3, 3, 4}, y2[] = {2, 3, 5, 5, 6, 7, 7};

	/* Enumerated: only one of C(14,7) splits is as extreme. */
	assert_close(st_mann_whitney(z, 7, y, 7).p, 2.0 / 3432, 1e-9);
	assert_close(st_mann_whitney(x2, 6, y2, 7).p, 0.02564102564102564, 1e-9);
}

static void test_mann_whitney_normal(void **state)
{
	double x[30], y[30];
	double x2[] = {1,  2,  2,  3,  5,  8,  8,  8,  9,  11, 12, 13, 14,
		       15, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30};
	double y2[] = {3,  4,  5,  5,  6,  9,  10, 12, 14, 16, 18, 20, 22,
		       24, 26, 28, 30, 32, 34, 36, 38, 40, 41, 42, 43, 44};
	struct st_test t;

	for (int i = 0; i < 30; i++) {
		x[i] = i;
		y[i] = 10 + i;
	}
	t = st_mann_whitney(x, 30, y, 30);
	assert_false(t.exact);
	assert_close(t.stat, 200, 0);
	assert_close(t.p, 0.00022448380595775603, 1e-6);
	t = st_mann_whitney(x2, 25, y2, 26);
	assert_false(t.exact);
	assert_close(t.stat, 218, 0);
	assert_close(t.p, 0.044690012340881456, 1e-6);
}

static void test_mann_whitney_degenerate(void **state)
{
	double z[5] = {}, one = 3;

	/* All tied, or a sample empty: no evidence at all. */
	assert_close(st_mann_whitney(z, 5, z, 5).p, 1, 0);
	assert_close(st_mann_whitney(&one, 1, z, 0).p, 1, 0);
	assert_close(st_mann_whitney(z, 0, z, 0).p, 1, 0);
}

static void test_wilcoxon(void **state)
{
	double d9[] = {-1, -2, -3, -4, -5, -6, -7, -8, -9};
	double dt[] = {1, -2, 2, 3, -3, 3, 4, 5, 0, 6};
	double d65[65];
	struct st_test t;

	t = st_wilcoxon(d9, 9);
	assert_true(t.exact);
	assert_close(t.p, 0.00390625, 1e-12);
	assert_int_equal(t.n, 9);
	/* Ties and a zero (dropped): enumerated over all 2^9 sign patterns. */
	t = st_wilcoxon(dt, 10);
	assert_int_equal(t.n, 9);
	assert_close(t.p, 0.08203125, 1e-9);
	for (int i = 0; i < 60; i++)
		d65[i] = (i % 2 ? -1 : 1) * (i % 7 + 1) * (i % 3 ? 1 : 2);
	for (int i = 60; i < 65; i++)
		d65[i] = 3;
	t = st_wilcoxon(d65, 65);
	assert_false(t.exact);
	assert_close(t.p, 0.8648508792526874, 1e-6);
	assert_close(st_wilcoxon(d65, 0).p, 1, 0);
}

static void test_bootstrap(void **state)
{
	double a[9], b[9], lo, hi, lo2, hi2;

	for (int i = 0; i < 9; i++) {
		a[i] = 20e6 + 1e5 * (i % 3);
		b[i] = 1e5 * (i % 2);
	}
	assert_int_equal(st_bootstrap_mean_diff(a, 9, b, 9, 2000, 0.99, 7, &lo, &hi), 0);
	assert_true(lo < hi && hi < -19e6);
	/* A fixed seed repeats exactly. */
	st_bootstrap_mean_diff(a, 9, b, 9, 2000, 0.99, 7, &lo2, &hi2);
	assert_true(lo == lo2 && hi == hi2);
	/* The same sample against itself: the interval holds 0. */
	st_bootstrap_mean_diff(a, 9, a, 9, 2000, 0.99, 7, &lo, &hi);
	assert_true(lo <= 0 && hi >= 0);
	assert_int_equal(st_bootstrap_mean_diff(a, 9, b, 0, 2000, 0.99, 7, &lo, &hi), -1);
}

/*
 * The joint bootstrap draws the same observations for every value: each
 * column's interval is exactly the one-value bootstrap of that column with
 * the same seed, and a column that is twice another gets twice its bounds.
 */
static void test_bootstrap_rows(void **state)
{
	double a[40][3], b[30][3], ca[40], cb[30], lo[3], hi[3], lo1, hi1;

	for (int i = 0; i < 40; i++) {
		a[i][0] = 1e6 + 1e5 * (i % 7);
		a[i][1] = 2 * a[i][0];
		a[i][2] = (i % 5) ? 0 : 3e6;
		ca[i] = a[i][2];
	}
	for (int i = 0; i < 30; i++) {
		b[i][0] = 5e5 + 3e4 * (i % 4);
		b[i][1] = 2 * b[i][0];
		b[i][2] = (i % 3) ? 1e5 : 0;
		cb[i] = b[i][2];
	}
	assert_int_equal(
	    st_bootstrap_mean_diff_rows(&a[0][0], 40, &b[0][0], 30, 3, 500, 0.99, 11, lo, hi), 0);
	assert_true(lo[0] < hi[0] && hi[0] < 0);
	assert_true(lo[1] == 2 * lo[0] && hi[1] == 2 * hi[0]);
	assert_int_equal(st_bootstrap_mean_diff(ca, 40, cb, 30, 500, 0.99, 11, &lo1, &hi1), 0);
	assert_true(lo[2] == lo1 && hi[2] == hi1);
	assert_int_equal(
	    st_bootstrap_mean_diff_rows(&a[0][0], 40, &b[0][0], 0, 3, 500, 0.99, 11, lo, hi), -1);
	assert_true(lo[2] == 0 && hi[2] == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_quantile_linear),
	    cmocka_unit_test(test_mann_whitney_exact_small),
	    cmocka_unit_test(test_mann_whitney_separated_nine),
	    cmocka_unit_test(test_mann_whitney_exact_with_ties),
	    cmocka_unit_test(test_mann_whitney_normal),
	    cmocka_unit_test(test_mann_whitney_degenerate),
	    cmocka_unit_test(test_wilcoxon),
	    cmocka_unit_test(test_bootstrap),
	    cmocka_unit_test(test_bootstrap_rows),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
