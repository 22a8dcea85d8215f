// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_export.c: `gaptrace export` read back as JSON: thread states over the
 * whole capture with blocked reasons, calls above the states they contain,
 * GPU kernels, the explained gap, units, waker and launch flows, proper
 * nesting and exact 1/8 us timestamps; keep_all leaves attribution unchanged.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <math.h>

#include <cmocka.h>

#include "cli/cmds.h"
#include "output/export.h"
#include "minijson.h"
#include "synth_capture.h"
#include "analysis/timeline.h"

#define WORKER	   10
#define HOLDER	   11
#define GPU_PID	   export__gpu_pid(0)
#define STREAM_TID (GPU_PID + EXPORT_TID_STREAM)

/* synth_capture.h's lock-gap scene (the JSON and protobuf exports see the same one). */
static void scene(struct synth *s)
{
	synth_scene_lock_gap(s, WORKER, HOLDER);
}

struct xtrace {
	struct mj *doc;
	const struct mj *ev; /* traceEvents */
	char *text;
	uint64_t base;
};

/* Gap [10, 30) ms: the worker's epoll_wait ended by thread 540 of process 539, not traced. */
static void scene_untraced(struct synth *s)
{
	synth_thread(s, WORKER, "gpu-worker");
	synth_op(s, WORKER, 1, T0 + 1 * MS, T0 + 2 * MS, T0 + 10 * MS);
	synth_peer(s, 539, 540, "pt_data_worker", T0 + 5 * MS);
	synth_off_w(s, WORKER, T0 + 10 * MS, T0 + 30 * MS, T0 + 30 * MS, 0, GT_NR_epoll_wait, 0, 0,
		    540, GT_NR_write, -1, -1);
	synth_op(s, WORKER, 2, T0 + 30 * MS, T0 + 30 * MS, T0 + 40 * MS);
	s->end = T0 + 50 * MS;
}

static void export_of(struct xtrace *x, bool keep_all, void (*scene_fn)(struct synth *))
{
	struct synth s;
	struct an_opts o;
	struct an_result *r;
	const char *err = NULL;
	size_t len = 0;
	FILE *f;

	an_opts__defaults(&o);
	o.keep_all = keep_all;
	synth_open(&s);
	scene_fn(&s);
	r = synth_run(&s, &o);
	f = open_memstream(&x->text, &len);
	assert_int_equal(export__chrome_json(f, r), 0);
	fclose(f);
	an_result__free(r);
	x->doc = mj_parse(x->text, &err);
	if (!x->doc)
		fail_msg("export is not JSON: %s", err);
	x->ev = mj_get(x->doc, "traceEvents");
	assert_non_null(x->ev);
	assert_int_equal(x->ev->t, MJ_ARR);
	x->base = (uint64_t)mj_num(mj_get(x->doc, "otherData"), "base_mono_ns", 0);
}

static void export_scene(struct xtrace *x, bool keep_all)
{
	export_of(x, keep_all, scene);
}

static void xtrace_free(struct xtrace *x)
{
	mj_free(x->doc);
	free(x->text);
}

/* Trace time (us) back to CLOCK_MONOTONIC ns. */
static uint64_t mono(const struct xtrace *x, double us)
{
	return x->base + (uint64_t)llround(us * 1000);
}

static const struct mj *find(const struct xtrace *x, const char *ph, double pid, double tid,
			     const char *name, uint64_t at)
{
	for (size_t i = 0; i < x->ev->n; i++) {
		const struct mj *e = &x->ev->items[i];
		const char *p = mj_str(e, "ph"), *n = mj_str(e, "name");

		if (strcmp(p, ph) || (pid >= 0 && mj_num(e, "pid", -1) != pid) ||
		    (tid >= 0 && mj_num(e, "tid", -1) != tid) || (name && (!n || strcmp(n, name))))
			continue;
		if (at && mono(x, mj_num(e, "ts", 0)) != at)
			continue;
		return e;
	}
	return NULL;
}

static size_t count(const struct xtrace *x, const char *ph, const char *cat)
{
	size_t n = 0;

	for (size_t i = 0; i < x->ev->n; i++) {
		const struct mj *e = &x->ev->items[i];
		const char *c = mj_str(e, "cat");

		n += !strcmp(mj_str(e, "ph"), ph) && (!cat || (c && !strcmp(c, cat)));
	}
	return n;
}

static void test_export_thread_states(void **state)
{
	struct xtrace x;
	const struct mj *e, *args;

	export_scene(&x, true);
	e = find(&x, "M", PID, WORKER, "thread_name", 0);
	assert_non_null(e);
	assert_string_equal(mj_str(mj_get(e, "args"), "name"), "gpu-worker");
	/* The lock wait, with its reason and its waker. */
	e = find(&x, "X", PID, WORKER, "blocked: futex (lock)", T0 + 11 * MS);
	assert_non_null(e);
	assert_int_equal(llround(mj_num(e, "dur", 0) * 1000), 16 * MS);
	args = mj_get(e, "args");
	assert_string_equal(mj_str(args, "category"), "lock");
	assert_string_equal(mj_str(args, "woken_by"), "lock-holder:11");
	assert_non_null(find(&x, "X", PID, WORKER, "runnable", T0 + 27 * MS));
	assert_non_null(find(&x, "X", PID, WORKER, "running", T0 + 27200 * US));
	/* malloc_trim above the running slice it contains. */
	e = find(&x, "X", PID, WORKER, "malloc_trim", T0 + 27500 * US);
	assert_non_null(e);
	assert_string_equal(mj_str(mj_get(e, "args"), "category"), "allocator");
	e = find(&x, "X", PID, WORKER, "running", T0 + 27500 * US);
	assert_non_null(e);
	assert_int_equal(llround(mj_num(e, "dur", 0) * 1000), 1 * MS);
	/* Outside every gap: there only because export keeps the whole capture. */
	assert_non_null(
	    find(&x, "X", PID, WORKER, "blocked: clock_nanosleep (sleep)", T0 + 50 * MS));
	assert_string_equal(mj_str(mj_get(x.doc, "otherData"), "thread_states"), "whole capture");
	xtrace_free(&x);
}

static void test_export_gpu_gaps_units(void **state)
{
	struct xtrace x;
	const struct mj *e, *by;
	uint64_t sum = 0;

	export_scene(&x, true);
	assert_int_equal(count(&x, "X", "gpu"), 2);
	e = find(&x, "X", GPU_PID, STREAM_TID, "kernel", T0 + 30 * MS);
	assert_non_null(e);
	assert_string_equal(mj_str(mj_get(e, "args"), "launched_by"), "gpu-worker:10");
	e = find(&x, "M", GPU_PID, STREAM_TID, "thread_name", 0);
	assert_string_equal(mj_str(mj_get(e, "args"), "name"), "stream 7");
	e = find(&x, "M", GPU_PID, 0, "process_name", 0);
	assert_string_equal(mj_str(mj_get(e, "args"), "name"), "GPU 0");
	/* One gap, named by its largest cause, its breakdown summing to its length. */
	assert_int_equal(count(&x, "X", "gap") >= 1, 1);
	e = NULL;
	for (size_t i = 0; i < x.ev->n && !e; i++) {
		const char *n = mj_str(&x.ev->items[i], "name");

		if (n && !strncmp(n, "gap: lock", 9))
			e = &x.ev->items[i];
	}
	assert_non_null(e);
	assert_int_equal(mono(&x, mj_num(e, "ts", 0)), T0 + 10 * MS);
	by = mj_get(mj_get(e, "args"), "by_category_ns");
	for (size_t i = 0; i < by->n; i++)
		sum += (uint64_t)by->items[i].num;
	assert_int_equal(sum, 20 * MS);
	assert_int_equal(llround(mj_num(by, "lock", 0)), 16 * MS);
	assert_non_null(
	    find(&x, "X", GPU_PID, GPU_PID + EXPORT_TID_GAPS, "critical thread gpu-worker:10", 0));
	assert_int_equal(count(&x, "X", "unit"), 2);
	assert_non_null(find(&x, "X", EXPORT_PID_GAPTRACE, EXPORT_PID_GAPTRACE + EXPORT_TID_UNITS,
			     "unit 1", T0 + 29 * MS));
	xtrace_free(&x);
}

static void test_export_flows(void **state)
{
	struct xtrace x;
	const struct mj *s, *f;

	export_scene(&x, true);
	/* The holder's unlock wakes the worker: holder -> worker. */
	s = find(&x, "s", PID, HOLDER, "wakeup", T0 + 27 * MS);
	assert_non_null(s);
	f = NULL;
	for (size_t i = 0; i < x.ev->n; i++) {
		const struct mj *e = &x.ev->items[i];

		if (!strcmp(mj_str(e, "ph"), "f") && mj_num(e, "id", -1) == mj_num(s, "id", -2))
			f = e;
	}
	assert_non_null(f);
	assert_true(mj_num(f, "tid", 0) == WORKER);
	assert_string_equal(mj_str(f, "bp"), "e");
	/* Each launch call to its kernel. */
	assert_non_null(find(&x, "s", PID, WORKER, "launch", T0 + 29500 * US));
	assert_non_null(find(&x, "f", GPU_PID, STREAM_TID, "launch", 0));
	assert_int_equal(count(&x, "s", "launch"), 2);
	assert_int_equal(count(&x, "s", NULL), count(&x, "f", NULL));
	xtrace_free(&x);
}

/* Viewers rebuild nesting from times: on one track a slice is inside or after the open ones. */
static void test_export_nesting_and_clock(void **state)
{
	struct xtrace x;

	export_scene(&x, true);
	for (size_t i = 0; i < x.ev->n; i++) {
		const struct mj *e = &x.ev->items[i];
		double ts = mj_num(e, "ts", -1);

		assert_true(ts >= 0);
		/* Perfetto reads one tid under two pids as a recycled thread. */
		for (size_t k = 0; k < x.ev->n; k++) {
			const struct mj *o = &x.ev->items[k];

			if (strcmp(mj_str(e, "ph"), "M") && strcmp(mj_str(o, "ph"), "M") &&
			    mj_num(o, "tid", 0) == mj_num(e, "tid", 1) &&
			    mj_num(o, "pid", 0) != mj_num(e, "pid", 0))
				fail_msg("tid %.0f under pids %.0f and %.0f", mj_num(e, "tid", 0),
					 mj_num(e, "pid", 0), mj_num(o, "pid", 0));
		}
		/* Multiples of 1/8 us: exact in binary, so ts + dur never rounds. */
		assert_true(ts * 8 == floor(ts * 8));
		if (strcmp(mj_str(e, "ph"), "X"))
			continue;
		assert_true(mj_num(e, "dur", 0) > 0);
		for (size_t k = 0; k < x.ev->n; k++) {
			const struct mj *o = &x.ev->items[k];
			double a0 = ts, a1 = ts + mj_num(e, "dur", 0), b0, b1;

			if (k == i || strcmp(mj_str(o, "ph"), "X") ||
			    mj_num(o, "pid", 0) != mj_num(e, "pid", 1) ||
			    mj_num(o, "tid", 0) != mj_num(e, "tid", 1))
				continue;
			b0 = mj_num(o, "ts", 0);
			b1 = b0 + mj_num(o, "dur", 0);
			/* Disjoint, or one inside the other. */
			if (!(a1 <= b0 || b1 <= a0 || (a0 <= b0 && b1 <= a1) ||
			      (b0 <= a0 && a1 <= b1)))
				fail_msg("'%s' [%f, %f) and '%s' [%f, %f) overlap on one track",
					 mj_str(e, "name"), a0, a1, mj_str(o, "name"), b0, b1);
		}
	}
	xtrace_free(&x);
}

/* The gap's hop names the waker from a process gaptrace did not trace, with its share. */
static void test_export_untraced_waker(void **state)
{
	struct xtrace x;
	const struct mj *e, *w;

	export_of(&x, false, scene_untraced);
	e = find(&x, "X", -1, -1, "critical thread gpu-worker:10", 0);
	assert_non_null(e);
	w = mj_get(mj_get(e, "args"), "untraced_waker");
	assert_non_null(w);
	assert_int_equal(llround(mj_num(w, "pid", 0)), 539);
	assert_int_equal(llround(mj_num(w, "tid", 0)), 540);
	assert_string_equal(mj_str(w, "comm"), "pt_data_worker");
	assert_int_equal(llround(mj_num(w, "wait_ns", 0)), 20 * MS);
	xtrace_free(&x);
	/* A hop whose waker was traced carries none. */
	export_scene(&x, false);
	for (size_t i = 0; i < x.ev->n; i++)
		assert_null(mj_get(mj_get(&x.ev->items[i], "args"), "untraced_waker"));
	xtrace_free(&x);
}

static void test_keep_all_same_attribution(void **state)
{
	struct synth s1, s2;
	struct an_opts o;
	struct an_result *a, *b;
	struct timeline *tl;

	an_opts__defaults(&o);
	o.pieces = true;
	synth_open(&s1);
	scene(&s1);
	a = synth_run(&s1, &o);
	o.keep_all = true;
	synth_open(&s2);
	scene(&s2);
	b = synth_run(&s2, &o);
	assert_int_equal(a->ngaps, b->ngaps);
	assert_int_equal(a->npieces, b->npieces);
	for (size_t i = 0; i < a->ngaps; i++)
		assert_memory_equal(a->gaps[i].by_cat, b->gaps[i].by_cat,
				    sizeof(a->gaps[i].by_cat));
	/* Without keep_all a timeline has GPU and units but no thread states. */
	tl = timeline__new(a);
	assert_false(tl->full);
	assert_int_equal(tl->nops, 2);
	assert_int_equal(tl->nunits, 2);
	for (size_t i = 0; i < tl->nthreads; i++)
		assert_int_equal(tl->threads[i].nspans, 0);
	timeline__free(tl);
	tl = timeline__new(b);
	assert_true(tl->full);
	timeline__free(tl);
	an_result__free(a);
	an_result__free(b);
}

static void test_export_command(void **state)
{
	struct synth s;
	char out[] = "/tmp/gt_test_export_XXXXXX";
	int fd = mkstemp(out);

	assert_true(fd >= 0);
	close(fd);
	synth_open(&s);
	scene(&s);
	synth_close(&s);
	{
		char *argv[] = {"export", s.path, "--format", "perfetto", "-o", out, NULL};

		assert_int_equal(cmd_export(6, argv), GT_EXIT_OK);
	}
	{
		char *bad[] = {"export", s.path, "--format", "pprof", NULL};
		char *none[] = {"export", NULL};
		char *missing[] = {"export", "/nonexistent/x.gtcap", "-o", out, NULL};

		assert_int_equal(cmd_export(4, bad), GT_EXIT_USAGE);
		assert_int_equal(cmd_export(1, none), GT_EXIT_USAGE);
		assert_int_equal(cmd_export(4, missing), GT_EXIT_FAIL);
	}
	{
		/* --depth as in report, flame and diff. */
		char *depth[] = {"export", s.path, "--depth", "2", "-o", out, NULL};
		char *bad_depth[] = {"export", s.path, "--depth", "17", "-o", out, NULL};

		assert_int_equal(cmd_export(6, depth), GT_EXIT_OK);
		assert_int_equal(cmd_export(6, bad_depth), GT_EXIT_USAGE);
	}
	{
		/* flame: --unit is a SPEC (a bare id is refused), --unit-id the filter. */
		char *spec[] = {"flame", s.path, "--unit", "burst:5ms", "-o", out, NULL};
		char *old[] = {"flame", s.path, "--units", "burst:5ms", "-o", out, NULL};
		char *id[] = {"flame", s.path, "--unit-id", "1", "-o", out, NULL};
		char *bare[] = {"flame", s.path, "--unit", "1", "-o", out, NULL};

		assert_int_equal(cmd_flame(6, spec), GT_EXIT_OK);
		assert_int_equal(cmd_flame(6, old), GT_EXIT_OK);
		assert_int_equal(cmd_flame(6, id), GT_EXIT_OK);
		assert_int_equal(cmd_flame(6, bare), GT_EXIT_USAGE);
	}
	unlink(s.path);
	unlink(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_export_thread_states),
	    cmocka_unit_test(test_export_gpu_gaps_units),
	    cmocka_unit_test(test_export_flows),
	    cmocka_unit_test(test_export_untraced_waker),
	    cmocka_unit_test(test_export_nesting_and_clock),
	    cmocka_unit_test(test_keep_all_same_attribution),
	    cmocka_unit_test(test_export_command),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
