// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_cli.c: the shared command line (durations in seconds when bare, one
 * --min-gap rule, short options from the long table, did-you-mean) and the
 * terminal filter (width, colour, ASCII).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cmocka.h>

#include "analysis/result.h"
#include "cli/cmds.h"
#include "support/cli.h"
#include "support/term.h"
#include "support/util.h"

#define S NSEC_PER_SEC

/* A bare number is seconds, as offcputime 5 and nsys --duration 5 read it. */
static void test_duration_bare_is_seconds(void **state)
{
	uint64_t ns;

	(void)state;
	assert_int_equal(gt_parse_duration("5", &ns), 0);
	assert_true(ns == 5 * S);
	assert_int_equal(gt_parse_duration("2.5", &ns), 0);
	assert_true(ns == 2500 * NSEC_PER_MSEC);
	assert_int_equal(gt_parse_duration("0", &ns), 0);
	assert_true(ns == 0);
	assert_int_equal(gt_parse_duration("250us", &ns), 0);
	assert_true(ns == 250 * NSEC_PER_USEC);
	assert_int_equal(gt_parse_duration("1500000ns", &ns), 0);
	assert_true(ns == 1500 * NSEC_PER_USEC);
	assert_int_equal(gt_parse_duration("3m", &ns), 0);
	assert_true(ns == 180 * S);
	assert_int_equal(gt_parse_duration("1h", &ns), 0);
	assert_true(ns == 3600 * S);
	assert_int_equal(gt_parse_duration("5x", &ns), -1);
	assert_int_equal(gt_parse_duration("-1", &ns), -1);
	assert_int_equal(gt_parse_duration("", &ns), -1);
}

static void test_duration_option_bounds(void **state)
{
	uint64_t ns = 7;

	(void)state;
	assert_int_equal(gt_opt_duration("--duration", "5", NSEC_PER_MSEC, 3600 * S, &ns), 0);
	assert_true(ns == 5 * S);
	ns = 7;
	assert_int_equal(gt_opt_duration("--duration", "2h", NSEC_PER_MSEC, 3600 * S, &ns), -1);
	assert_int_equal(gt_opt_duration("--duration", "0", NSEC_PER_MSEC, 3600 * S, &ns), -1);
	assert_int_equal(gt_opt_duration("--duration", "5 s", NSEC_PER_MSEC, 3600 * S, &ns), -1);
	assert_true(ns == 7);
}

/* One rule for record and report: 0 is refused, a bare 2 is 2 s. */
static void test_min_gap_one_rule(void **state)
{
	uint64_t ns = 0;

	(void)state;
	assert_int_equal(gt_opt_min_gap("2", &ns), 0);
	assert_true(ns == 2 * S);
	assert_int_equal(gt_opt_min_gap("1ms", &ns), 0);
	assert_true(ns == NSEC_PER_MSEC);
	assert_int_equal(gt_opt_min_gap("0", &ns), -1);
	/* An old nanosecond count is no longer silently read as one. */
	assert_int_equal(gt_opt_min_gap("1000000", &ns), -1);
}

/* One default for record and the analyses, the one the shared help states. */
static void test_min_gap_one_default(void **state)
{
	const char *help[] = {GT_HELP_MIN_GAP};
	struct an_opts o;

	(void)state;
	an_opts__defaults(&o);
	assert_true(o.min_gap_ns == GT_MIN_GAP_DEFAULT_NS);
	assert_true(GT_MIN_GAP_DEFAULT_NS == NSEC_PER_MSEC);
	assert_non_null(strstr(help[1], "(default 1ms; 1us to 1h)"));
}

static void test_optstring_from_table(void **state)
{
	static const struct option opts[] = {
	    {"pid", required_argument, NULL, 'p'},
	    {"stacks", required_argument, NULL, GT_OPT_LONG + 1},
	    {"level", optional_argument, NULL, 'l'},
	    GT_LONGOPT_MIN_GAP,
	    GT_LONGOPT_COLOR,
	    GT_LONGOPT_VERBOSE,
	    GT_LONGOPT_HELP,
	    {},
	};
	char buf[64];

	(void)state;
	gt_optstring(opts, false, buf, sizeof(buf));
	assert_string_equal(buf, ":p:l::m:vh");
	gt_optstring(opts, true, buf, sizeof(buf));
	assert_string_equal(buf, "+:p:l::m:vh");
}

/* Every command's table gives the short options its help documents. */
static void test_command_tables(void **state)
{
	char buf[128];

	(void)state;
	gt_optstring(record_options, true, buf, sizeof(buf));
	assert_string_equal(buf, "+:p:o:d:F:m:vh");
	gt_optstring(report_options, false, buf, sizeof(buf));
	assert_string_equal(buf, ":f:n:o:m:u:vh");
	gt_optstring(diff_options, false, buf, sizeof(buf));
	assert_string_equal(buf, ":f:n:a:e:o:m:u:vh");
	gt_optstring(flame_options, false, buf, sizeof(buf));
	assert_string_equal(buf, ":f:c:k:o:m:u:vh");
}

static void test_getopt_messages(void **state)
{
	char *argv[] = {"report", "--min-gpa", "2", "x.gtcap", NULL};
	int c;

	(void)state;
	optind = 1;
	c = gt_getopt(4, argv, report_options, false);
	assert_int_equal(c, '?');
	assert_int_equal(gt_opt_common(c, "report", NULL), GT_EXIT_USAGE);
	{
		char *a2[] = {"report", "-m", NULL};

		optind = 1;
		c = gt_getopt(2, a2, report_options, false);
		assert_int_equal(c, ':');
	}
	{
		char *a3[] = {"report", "--min-gap=2", "--depth", "3", NULL};

		optind = 1;
		assert_int_equal(gt_getopt(4, a3, report_options, false), 'm');
		assert_string_equal(optarg, "2");
		assert_int_equal(gt_getopt(4, a3, report_options, false), GT_OPT_DEPTH);
		assert_int_equal(gt_getopt(4, a3, report_options, false), -1);
	}
}

static void test_suggest(void **state)
{
	static const char *const cmds[] = {"record", "report", "flame", "diff", "export"};
	static const char *const fmts[] = {"text", "json", "csv", "html"};

	(void)state;
	assert_int_equal(gt_edit_distance("recrod", "record"), 1);
	assert_int_equal(gt_edit_distance("jsno", "json"), 1);
	assert_int_equal(gt_edit_distance("min-gpa", "min-gap"), 1);
	assert_int_equal(gt_edit_distance("", "abc"), 3);
	assert_string_equal(gt_suggest("recrod", cmds, 5), "record");
	assert_string_equal(gt_suggest("repot", cmds, 5), "report");
	assert_string_equal(gt_suggest("flam", cmds, 5), "flame");
	assert_null(gt_suggest("zzzzzz", cmds, 5));
	assert_string_equal(gt_suggest("jsno", fmts, 4), "json");
}

/* Each line of out is at most width columns. */
static void assert_lines_fit(const char *out, unsigned width)
{
	for (const char *p = out; *p;) {
		size_t n = strcspn(p, "\n");

		if (term__columns(p, n) > width)
			fail_msg("line of %zu columns > %u: '%.*s'", term__columns(p, n), width,
				 (int)n, p);
		p += n + (p[n] == '\n');
	}
}

static char *filtered(const char *in, unsigned width, bool ascii)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	assert_non_null(f);
	assert_int_equal(term__write(f, in, strlen(in), width, ascii), 0);
	fclose(f);
	return out;
}

static void test_wrap_to_width(void **state)
{
	const char *in =
	    "short line\n"
	    "     12 0  1.234s   26.1 ms  inter-unit  worker:1234   lock 26.1 ms (97%), cpu 0.52 "
	    "ms (3%), scheduler 0.1 ms (0%), allocator 0.05 ms (0%)\n"
	    "        critical path: "
	    "\033[38;5;208m"
	    "coloured"
	    "\033[0m"
	    " a_very_long_identifier_without_any_space_that_must_be_cut_somewhere_"
	    "because_it_is_longer_than_the_terminal\n";
	char *out = filtered(in, 40, false);

	(void)state;
	assert_lines_fit(out, 40);
	assert_non_null(strstr(out, "short line\n"));
	/* Words are kept whole and in order; continuation lines are indented deeper. */
	assert_non_null(strstr(out, "lock 26.1"));
	assert_non_null(strstr(out, "\n         ")); /* 5 + 4 */
	assert_non_null(strstr(out, "\033[38;5;208mcoloured\033[0m"));
	free(out);
	/* A "key:   value" line continues under its value. */
	out =
	    filtered("target:   pid 7964 (prover_sim), launch mode: prover_sim --scenario mixed\n",
		     40, false);
	assert_string_equal(out, "target:   pid 7964 (prover_sim), launch\n"
				 "          mode: prover_sim --scenario\n"
				 "          mixed\n");
	free(out);
	/* No limit: unchanged. */
	out = filtered(in, 0, false);
	assert_string_equal(out, in);
	free(out);
}

static void test_ascii(void **state)
{
	const char *in = "bar \xe2\x96\x88\xe2\x96\x88\xe2\x96\x8c main \xe2\x86\x90 worker "
			 "cut\xe2\x80\xa6 caf\xc3\xa9 \xff\n";
	char *out = filtered(in, 0, true);

	(void)state;
	for (const unsigned char *p = (const unsigned char *)out; *p; p++)
		if (*p >= 0x80)
			fail_msg("non-ASCII byte 0x%02x in '%s'", *p, out);
	assert_string_equal(out, "bar ## main <- worker cut... caf\\u{e9} \\xff\n");
	free(out);
}

static void test_color_rules(void **state)
{
	int m = posix_openpt(O_RDWR | O_NOCTTY);
	struct winsize ws = {.ws_row = 24, .ws_col = 72};
	FILE *tty, *file = tmpfile();

	(void)state;
	unsetenv("NO_COLOR");
	unsetenv("COLUMNS");
	setenv("TERM", "xterm", 1);
	assert_true(m >= 0 && !grantpt(m) && !unlockpt(m));
	tty = fopen(ptsname(m), "w");
	assert_non_null(tty);
	assert_non_null(file);
	assert_int_equal(term__set_color("auto"), 0);
	assert_true(term__color(tty));
	assert_false(term__color(file));
	setenv("NO_COLOR", "1", 1);
	assert_false(term__color(tty));
	/* no-color.org: an empty NO_COLOR does not count. */
	setenv("NO_COLOR", "", 1);
	assert_true(term__color(tty));
	setenv("NO_COLOR", "1", 1);
	/* An explicit --color wins over NO_COLOR. */
	assert_int_equal(term__set_color("always"), 0);
	assert_true(term__color(file));
	assert_true(term__color(tty));
	assert_int_equal(term__set_color("never"), 0);
	assert_false(term__color(tty));
	assert_int_equal(term__set_color("sometimes"), -1);
	term__set_color("auto");
	unsetenv("NO_COLOR");

	/* Width: the tty's, $COLUMNS over it, none for a file. */
	assert_int_equal(ioctl(fileno(tty), TIOCSWINSZ, &ws), 0);
	assert_int_equal(term__width(tty), 72);
	assert_int_equal(term__width(file), 0);
	setenv("COLUMNS", "100", 1);
	assert_int_equal(term__width(tty), 100);
	assert_int_equal(term__width(file), 100);
	setenv("COLUMNS", "abc", 1);
	assert_int_equal(term__width(tty), 72);
	unsetenv("COLUMNS");
	fclose(tty);
	fclose(file);
	close(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_duration_bare_is_seconds),
	    cmocka_unit_test(test_duration_option_bounds),
	    cmocka_unit_test(test_min_gap_one_rule),
	    cmocka_unit_test(test_min_gap_one_default),
	    cmocka_unit_test(test_optstring_from_table),
	    cmocka_unit_test(test_command_tables),
	    cmocka_unit_test(test_getopt_messages),
	    cmocka_unit_test(test_suggest),
	    cmocka_unit_test(test_wrap_to_width),
	    cmocka_unit_test(test_ascii),
	    cmocka_unit_test(test_color_rules),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
