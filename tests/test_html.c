// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_html.c: `gaptrace report --format html` is one self-contained page:
 * no external resource, timeline data that parses and matches the gaps, the
 * flame graph inline, and names from the traced process escaped.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <math.h>

#include <cmocka.h>

#include "output/html.h"
#include "minijson.h"
#include "synth_capture.h"

#define WORKER 10

/*
 * Gap [10, 30) ms of WORKER (named comm): a 16 ms lock wait released by
 * traced thread 11, or with untraced_waker an epoll_wait that thread 540 of process
 * 539, which gaptrace did not trace, ended.
 */
static char *page_of(bool pieces, const char *comm, bool untraced_waker)
{
	struct synth s;
	struct an_opts o;
	struct an_result *r;
	struct capture *cap;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	an_opts__defaults(&o);
	o.pieces = pieces;
	synth_open(&s);
	synth_thread(&s, WORKER, comm);
	synth_unit(&s, WORKER, 0, T0 + 500 * US, true);
	synth_op(&s, WORKER, 1, T0 + 1 * MS, T0 + 2 * MS, T0 + 10 * MS);
	synth_unit(&s, WORKER, 0, T0 + 10500 * US, false);
	if (untraced_waker) {
		synth_peer(&s, 539, 540, "pt_data_worker", T0 + 5 * MS);
		synth_off_w(&s, WORKER, T0 + 11 * MS, T0 + 27 * MS, T0 + 27 * MS, 0,
			    GT_NR_epoll_wait, 0, 0, 540, GT_NR_write, -1, -1);
	} else {
		synth_thread(&s, 11, "lock-holder");
		synth_lock_wait(&s, WORKER, T0 + 11 * MS, T0 + 27 * MS, T0 + 27200 * US, 11);
	}
	synth_unit(&s, WORKER, 1, T0 + 29 * MS, true);
	synth_op(&s, WORKER, 2, T0 + 29500 * US, T0 + 30 * MS, T0 + 40 * MS);
	synth_unit(&s, WORKER, 1, T0 + 41 * MS, false);
	s.end = T0 + 50 * MS;
	r = synth_run_open(&s, &o, &cap);
	f = open_memstream(&text, &len);
	assert_int_equal(html__report(f, r, 10, cap), 0);
	fclose(f);
	an_result__free(r);
	capture__close(cap);
	return text;
}

static char *page(bool pieces, const char *comm)
{
	return page_of(pieces, comm, false);
}

static void test_html_self_contained(void **state)
{
	char *t = page(true, "gpu-worker"), *a, *b, *json;
	struct mj *d;
	const char *err = NULL;
	const struct mj *gaps;

	assert_true(!strncmp(t, "<!DOCTYPE html>", 15));
	assert_non_null(strstr(t, "</html>"));
	/* Nothing to fetch: no src/href to another place, no external stylesheet or script. */
	assert_null(strstr(t, "src=\"http"));
	assert_null(strstr(t, "href=\"http"));
	assert_null(strstr(t, "<link"));
	assert_null(strstr(t, "@import"));
	assert_non_null(strstr(t, "<canvas id=\"gt-timeline\""));
	assert_non_null(strstr(t, "<div class=\"flame\">"));
	assert_non_null(strstr(t, "<svg"));
	assert_non_null(strstr(t, "id=\"gap-0\""));
	assert_non_null(strstr(t, "Where the gap time went"));
	/* The timeline's data: one gap, lock-coloured, 20 ms long. */
	a = strstr(t, "<script type=\"application/json\" id=\"gt-data\">");
	assert_non_null(a);
	a = strchr(a, '>') + 1;
	b = strstr(a, "</script>");
	json = strndup(a, (size_t)(b - a));
	d = mj_parse(json, &err);
	if (!d)
		fail_msg("timeline data is not JSON: %s", err);
	gaps = mj_get(&mj_get(d, "devices")->items[0], "gaps");
	assert_int_equal(gaps->n, 1);
	assert_int_equal(llround(gaps->items[0].items[1].num - gaps->items[0].items[0].num),
			 20 * MS);
	assert_int_equal(llround(gaps->items[0].items[2].num), GT_CAT_LOCK);
	assert_int_equal(mj_get(d, "units")->n, 2);
	mj_free(d);
	free(json);
	free(t);
}

static void test_html_escapes_names(void **state)
{
	char *t = page(false, "</script><b>");

	/* A thread name cannot close the data element or inject markup. */
	assert_null(strstr(t, "</script><b>"));
	assert_non_null(strstr(t, "&lt;/script&gt;&lt;b&gt;"));
	/* Without pieces the page says the flame graph is missing. */
	assert_non_null(strstr(t, "No attributed gap time to draw."));
	free(t);
}

/* The gap's row names the waker gaptrace could not follow, as the text report does. */
static void test_html_names_untraced_waker(void **state)
{
	char *t = page_of(false, "gpu-worker", true);

	assert_non_null(strstr(t, "16.00 ms of it woken by pid 539 (pt_data_worker), not traced"));
	free(t);
	t = page(false, "gpu-worker");
	assert_null(strstr(t, "woken by pid"));
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_html_self_contained),
	    cmocka_unit_test(test_html_escapes_names),
	    cmocka_unit_test(test_html_names_untraced_waker),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
