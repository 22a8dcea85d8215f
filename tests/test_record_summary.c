// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_record_summary.c: record's exit status (the launched command's, 128 +
 * signal, 1 for its own failure) and its status line (the final rate is the
 * recording's; no "gaps 0" before any GPU operation arrived).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "capture/capture.h"
#include "gaptrace/gaptrace.h"
#include "record/record_priv.h"
#include "support/util.h"

static void test_exit_code(void **state)
{
	struct record_opts o = {};
	struct recorder r = {.o = &o, .child = 1234, .target_gone = true};

	(void)state;
	r.target_status = 3 << 8; /* exited with 3 */
	assert_true(WIFEXITED(r.target_status));
	assert_int_equal(record__exit_code(&r, 0), 3);
	assert_int_equal(record__exit_code(&r, -EIO), GT_EXIT_FAIL);
	r.target_status = SIGSEGV; /* killed by SIGSEGV */
	assert_true(WIFSIGNALED(r.target_status));
	assert_int_equal(record__exit_code(&r, 0), 128 + SIGSEGV);
	r.target_status = SIGKILL;
	assert_int_equal(record__exit_code(&r, 0), 128 + SIGKILL);
	/* Stopped by -d or Ctrl-C before the command ended; or -p. */
	r.target_gone = false;
	assert_int_equal(record__exit_code(&r, 0), GT_EXIT_OK);
	r.target_gone = true;
	r.child = 0;
	r.target_status = 3 << 8;
	assert_int_equal(record__exit_code(&r, 0), GT_EXIT_OK);
}

/* The status line record__progress writes, read back from stderr. */
static void status_line(struct recorder *r, uint64_t now, bool final, char *out, size_t len)
{
	FILE *tmp = tmpfile();
	int saved = dup(STDERR_FILENO);
	size_t n;

	assert_non_null(tmp);
	fflush(stderr);
	dup2(fileno(tmp), STDERR_FILENO);
	record__progress(r, now, final);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(tmp);
	n = fread(out, 1, len - 1, tmp);
	out[n] = '\0';
	fclose(tmp);
}

/*
 * -d stops in the loop round that printed a status line: the final line
 * came microseconds later, and the records drained at the stop over that
 * read "77.2M ev/s".  The final line shows the whole recording's rate.
 */
static void test_final_rate(void **state)
{
	struct record_opts o = {};
	struct recorder r = {.o = &o, .pid = 42};
	char err[256], line[512];
	uint64_t now = 3 * NSEC_PER_SEC;

	(void)state;
	r.w = capture_writer__open("/dev/null", NULL, 0, err, sizeof(err));
	assert_non_null(r.w);
	r.start_ns = NSEC_PER_SEC;
	r.sink.events = 3000;
	r.events_at_progress = 1000;
	r.last_progress_ns = now - 1000; /* 1 us before the stop */
	status_line(&r, now, true, line, sizeof(line));
	assert_non_null(strstr(line, " 1.5k ev/s"));
	/* A line in the run: the rate since the last one (0.5 s, 500 records). */
	r.events_at_progress = 2500;
	r.last_progress_ns = now - NSEC_PER_SEC / 2;
	status_line(&r, now, false, line, sizeof(line));
	assert_non_null(strstr(line, " 1.0k ev/s"));
	gt_log_set_progress_active(false);
	capture_writer__close(r.w);
}

/* "gaps 0" with no GPU record at all read as a GPU never idle. */
static void test_no_gpu_yet(void **state)
{
	struct record_opts o = {};
	struct recorder r = {.o = &o, .pid = 42};
	char err[256], line[512];

	(void)state;
	r.w = capture_writer__open("/dev/null", NULL, 0, err, sizeof(err));
	assert_non_null(r.w);
	status_line(&r, NSEC_PER_SEC, true, line, sizeof(line));
	assert_non_null(strstr(line, "no GPU ops yet"));
	assert_null(strstr(line, "gaps"));
	r.sink.gpu_ops = 5;
	status_line(&r, NSEC_PER_SEC, true, line, sizeof(line));
	assert_non_null(strstr(line, "GPU ops 5  gaps 0"));
	capture_writer__close(r.w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_exit_code),
	    cmocka_unit_test(test_final_rate),
	    cmocka_unit_test(test_no_gpu_yet),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
