// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_diff.c: `gaptrace diff` on synthetic provers whose difference is
 * known: a removed lock is a significant drop, the same workload twice is
 * not, a tiny or one-off change is not sold as a win; the command's JSON,
 * differential flame graph and exit codes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>

#include <cmocka.h>

#include "cli/cmds.h"
#include "output/diff.h"
#include "synth_capture.h"

#define WORKER 10
#define HOLDER 11
#define UNITS  10

enum cause { C_NONE = 0, C_LOCK, C_SLEEP };

struct shape {
	enum cause cause;
	unsigned seed;		/* jitter of the gap lengths, as run-to-run noise */
	uint64_t small_lock_ns; /* a short lock wait at the start of every gap */
	int outlier_gap;	/* this gap gets 30 ms more lock (-1: none) */
};

static uint64_t jitter(unsigned *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	return (*seed >> 16) % (200 * US);
}

/*
 * UNITS units of 4 back-to-back 1 ms kernels launched by the worker; between
 * units the worker spends 15, 20 or 25 ms (plus jitter) on the cause, or,
 * with C_NONE, goes straight on after 0.2 ms (no gap).
 */
static void prover(struct synth *s, const struct shape *sh)
{
	unsigned seed = sh->seed;
	uint64_t t = T0 + 1 * MS, op = 1;

	synth_thread(s, WORKER, "gpu-worker");
	synth_thread(s, HOLDER, "lock-holder");
	for (int u = 0; u < UNITS; u++) {
		uint64_t gap, g0, a;

		synth_unit(s, WORKER, (uint64_t)u, t, true);
		for (int k = 0; k < 4; k++, op++)
			synth_op(s, WORKER, op, t + 10 * US * (uint64_t)(k + 1),
				 t + 100 * US + (uint64_t)k * MS,
				 t + 100 * US + (uint64_t)(k + 1) * MS);
		g0 = t + 100 * US + 4 * MS;
		synth_unit(s, WORKER, (uint64_t)u, g0, false);
		if (u == UNITS - 1)
			break;
		gap = sh->cause == C_NONE ? 200 * US
					  : (15 + 5 * (uint64_t)(u % 3)) * MS + jitter(&seed);
		a = g0 + 50 * US;
		if (sh->small_lock_ns) {
			synth_lock_wait(s, WORKER, a, a + sh->small_lock_ns, a + sh->small_lock_ns,
					HOLDER);
			a += sh->small_lock_ns + 10 * US;
		}
		if (u == sh->outlier_gap) {
			synth_lock_wait(s, WORKER, a, a + 30 * MS, a + 30 * MS, HOLDER);
			a += 30 * MS + 10 * US;
			gap += 30 * MS;
		}
		if (sh->cause == C_LOCK)
			synth_lock_wait(s, WORKER, a, g0 + gap - 200 * US, g0 + gap - 180 * US,
					HOLDER);
		else if (sh->cause == C_SLEEP)
			synth_off(s, WORKER, a, g0 + gap - 200 * US, g0 + gap - 180 * US, 0,
				  GT_NR_clock_nanosleep, 0, 0, 0, -1);
		/* The next unit starts 100 us before its first kernel. */
		t = g0 + gap - 100 * US;
	}
	s->end = t + 10 * MS;
}

static struct an_result *analyse_shape(const struct shape *sh, char *keep_path)
{
	struct synth s;
	struct an_opts o;

	an_opts__defaults(&o);
	o.pieces = true;
	synth_open(&s);
	prover(&s, sh);
	if (keep_path) {
		synth_close(&s);
		strcpy(keep_path, s.path);
		return synth_analyse(s.path, &o);
	}
	return synth_run(&s, &o);
}

static void test_diff_lock_drop_is_significant(void **state)
{
	struct shape b = {C_LOCK, 1, 0, -1}, a = {C_NONE, 1, 0, -1};
	struct an_result *rb = analyse_shape(&b, NULL), *ra = analyse_shape(&a, NULL);
	struct df_result *d = diff__compute(rb, ra, NULL, NULL, NULL);

	assert_int_equal(rb->ngaps, UNITS - 1);
	assert_int_equal(ra->ngaps, 0);
	/* Removed gaps are zeros, not missing data. */
	assert_int_equal(d->after.nobs, UNITS - 1);
	assert_int_equal(d->after.nzero_obs, UNITS - 1);
	assert_true(d->val[GT_CAT_LOCK].significant);
	assert_true(d->val[DF_TOTAL].significant);
	assert_true(d->val[GT_CAT_LOCK].d_mean < -14 * MS);
	/* Complete separation of 9 and 9: the exact p is 2 / C(18, 9). */
	assert_true(fabs(d->val[GT_CAT_LOCK].mw.p - 2.0 / 48620) < 1e-12);
	/* Holm: lock and total tie for the smallest p, so both get it times m. */
	assert_true(d->ntests >= 2 && d->ntests <= DF_NVAL);
	assert_true(fabs(d->val[GT_CAT_LOCK].p_adj - (double)d->ntests * 2.0 / 48620) < 1e-12);
	assert_true(fabs(d->val[DF_TOTAL].p_adj - d->val[GT_CAT_LOCK].p_adj) < 1e-12);
	assert_true(d->val[GT_CAT_LOCK].ci_hi < 0);
	assert_false(d->val[GT_CAT_SLEEP].significant);
	/* Paired by unit: 9 transitions, all down. */
	assert_int_equal(d->npairs, UNITS - 1);
	assert_int_equal(d->pairs[0].ub, 0);
	assert_int_equal(d->pairs[0].ua, 1);
	assert_true(fabs(d->val[GT_CAT_LOCK].wx.p - 2.0 / 512) < 1e-12);
	/* The stack that moved most is the lock wait, gone entirely. */
	assert_true(d->nstacks > 0);
	assert_int_equal(d->stacks[0].cat, GT_CAT_LOCK);
	assert_true(d->stacks[0].before_ns > 100 * MS);
	assert_int_equal(d->stacks[0].after_ns, 0);
	assert_non_null(strstr(d->stacks[0].summary, "gpu-worker"));
	diff__free(d);
	an_result__free(rb);
	an_result__free(ra);
}

static void test_diff_same_scenario_not_significant(void **state)
{
	for (unsigned seed = 1; seed <= 5; seed++) {
		struct shape b = {C_SLEEP, seed, 0, -1}, a = {C_SLEEP, seed + 100, 0, -1};
		struct an_result *rb = analyse_shape(&b, NULL), *ra = analyse_shape(&a, NULL);
		struct df_result *d = diff__compute(rb, ra, NULL, NULL, NULL);

		if (d->nsignificant)
			fail_msg(
			    "seed %u: %zu significant changes between two runs of one workload",
			    seed, d->nsignificant);
		assert_true(d->val[GT_CAT_SLEEP].mw.p > 0.05);
		diff__free(d);
		an_result__free(rb);
		an_result__free(ra);
	}
}

static void test_diff_tiny_change_is_not_a_win(void **state)
{
	struct shape b = {C_SLEEP, 1, 200 * US, -1}, a = {C_SLEEP, 1, 400 * US, -1};
	struct an_result *rb = analyse_shape(&b, NULL), *ra = analyse_shape(&a, NULL);
	struct df_result *d = diff__compute(rb, ra, NULL, NULL, NULL);
	const struct df_value *v = &d->val[GT_CAT_LOCK];

	/* Every gap's lock wait grew by 0.2 ms: real, but too small to matter. */
	assert_true(v->mw.p < 0.01);
	assert_false(v->practical);
	assert_false(v->significant);
	assert_int_equal(d->nsignificant, 0);
	diff__free(d);
	an_result__free(rb);
	an_result__free(ra);
}

static void test_diff_one_outlier_is_not_significant(void **state)
{
	struct shape b = {C_SLEEP, 1, 0, -1}, a = {C_SLEEP, 2, 0, 4};
	struct an_result *rb = analyse_shape(&b, NULL), *ra = analyse_shape(&a, NULL);
	struct df_result *d = diff__compute(rb, ra, NULL, NULL, NULL);
	const struct df_value *v = &d->val[GT_CAT_LOCK];

	/* One gap with 30 ms of lock moves the mean by 3.3 ms, but only one gap. */
	assert_true(v->practical);
	assert_true(v->mw.p > 0.1);
	assert_false(v->significant);
	assert_int_equal(d->nsignificant, 0);
	diff__free(d);
	an_result__free(rb);
	an_result__free(ra);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static int run_diff(int argc, char **argv)
{
	/* getopt keeps state across calls; cmd_diff resets optind itself. */
	return cmd_diff(argc, argv);
}

static void test_diff_command(void **state)
{
	struct shape b = {C_LOCK, 1, 0, -1}, a = {C_NONE, 1, 0, -1};
	char pb[64], pa[64], out[] = "/tmp/gt_test_diff_out_XXXXXX", *text;
	struct an_result *rb = analyse_shape(&b, pb), *ra = analyse_shape(&a, pa);
	int fd = mkstemp(out);

	assert_true(fd >= 0);
	close(fd);
	{
		char *argv[] = {"diff", pb, pa, "--format", "json", "-o", out, NULL};

		assert_int_equal(run_diff(7, argv), GT_EXIT_OK);
	}
	text = slurp(out);
	assert_non_null(strstr(text, "\"schema\": \"gaptrace.diff/1\""));
	assert_non_null(strstr(text, "\"significant\": [\n    \"lock\",\n    \"total\"\n  ]"));
	assert_non_null(strstr(text, "\"gap_free_transitions\": 9"));
	free(text);
	{
		char *argv[] = {"diff", pb, pa, "-o", out, NULL};

		assert_int_equal(run_diff(5, argv), GT_EXIT_OK);
	}
	text = slurp(out);
	assert_non_null(strstr(text, "SIGNIFICANT drop"));
	assert_non_null(strstr(text, "Significant changes: total -"));
	assert_non_null(strstr(text, "Paired by unit (9 transitions in both)"));
	free(text);
	{
		char *argv[] = {"diff", pb, pa, "--flame", "svg", "-o", out, NULL};

		assert_int_equal(run_diff(7, argv), GT_EXIT_OK);
	}
	text = slurp(out);
	assert_non_null(strstr(text, "<svg"));
	assert_non_null(strstr(text, "gaptrace diff"));
	assert_non_null(strstr(text, "lock"));
	free(text);
	{
		char *one[] = {"diff", pb, NULL};
		char *missing[] = {"diff", pb, "/nonexistent/x.gtcap", NULL};
		char *alpha[] = {"diff", "--alpha", "2", pb, pa, NULL};
		char *flame[] = {"diff", "--flame", "png", pb, pa, NULL};

		assert_int_equal(run_diff(2, one), GT_EXIT_USAGE);
		assert_int_equal(run_diff(3, missing), GT_EXIT_FAIL);
		assert_int_equal(run_diff(5, alpha), GT_EXIT_USAGE);
		assert_int_equal(run_diff(5, flame), GT_EXIT_USAGE);
	}
	unlink(out);
	unlink(pb);
	unlink(pa);
	an_result__free(rb);
	an_result__free(ra);
}

/*
 * --fail-on-regression (#28): exit 3 when a value grew significantly (lock
 * added), 0 when it dropped or nothing changed, 0 without the option; the
 * flame graph output fails the same way.
 */
static void test_diff_fail_on_regression(void **state)
{
	struct shape lock = {C_LOCK, 1, 0, -1}, none = {C_NONE, 1, 0, -1},
		     lock2 = {C_LOCK, 7, 0, -1};
	char pl[64], pn[64], pl2[64], out[] = "/tmp/gt_test_diff_reg_XXXXXX";
	struct an_result *rl = analyse_shape(&lock, pl), *rn = analyse_shape(&none, pn),
			 *rl2 = analyse_shape(&lock2, pl2);
	int fd = mkstemp(out);

	assert_true(fd >= 0);
	close(fd);
	{
		char *rise[] = {"diff", pn, pl, "--fail-on-regression", "-o", out, NULL};
		char *drop[] = {"diff", pl, pn, "--fail-on-regression", "-o", out, NULL};
		char *plain[] = {"diff", pn, pl, "-o", out, NULL};
		char *noise[] = {"diff", pl, pl2, "--fail-on-regression", "-o", out, NULL};
		char *flame[] = {"diff", pn,  pl,  "--fail-on-regression", "--flame", "svg",
				 "-o",	 out, NULL};

		assert_int_equal(run_diff(6, rise), GT_EXIT_REGRESSION);
		assert_int_equal(run_diff(6, drop), GT_EXIT_OK);
		assert_int_equal(run_diff(5, plain), GT_EXIT_OK);
		assert_int_equal(run_diff(6, noise), GT_EXIT_OK);
		assert_int_equal(run_diff(8, flame), GT_EXIT_REGRESSION);
	}
	assert_int_equal(GT_EXIT_REGRESSION, 3);
	unlink(out);
	unlink(pl);
	unlink(pn);
	unlink(pl2);
	an_result__free(rl);
	an_result__free(rn);
	an_result__free(rl2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_diff_lock_drop_is_significant),
	    cmocka_unit_test(test_diff_same_scenario_not_significant),
	    cmocka_unit_test(test_diff_tiny_change_is_not_a_win),
	    cmocka_unit_test(test_diff_one_outlier_is_not_significant),
	    cmocka_unit_test(test_diff_command),
	    cmocka_unit_test(test_diff_fail_on_regression),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
