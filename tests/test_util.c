// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_util.c: the text sanitiser, the JSON string writer over every byte,
 * strict number parsing, the shared option helpers and the safe output
 * helpers (.old, links, 0600).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>
#include <dirent.h>

#include <cmocka.h>

#include "support/cli.h"
#include "support/json.h"
#include "support/outfile.h"
#include "support/util.h"

/* No byte a terminal acts on survives: C0, DEL, 0x80-0x9f raw or as U+0080-U+009F. */
static void assert_no_controls(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p < 0x20 || *p == 0x7f || (*p >= 0x80 && *p <= 0x9f && p[-1] == 0xc2))
			fail_msg("control byte 0x%02x at %zu in '%s'", *p,
				 (size_t)(p - (const unsigned char *)s), s);
	}
}

static void test_sanitize_every_byte(void **state)
{
	char in[2], out[32];

	for (int c = 1; c < 256; c++) {
		in[0] = (char)c;
		in[1] = 0;
		gt_sanitize(out, sizeof(out), in);
		assert_no_controls(out);
		if (c >= 0x20 && c < 0x7f) {
			assert_int_equal(out[0], c);
			assert_int_equal(out[1], 0);
		} else {
			char want[8];

			/* Lone bytes >= 0x80 are never valid UTF-8. */
			snprintf(want, sizeof(want), "\\x%02x", c);
			assert_string_equal(out, want);
		}
	}
}

static void test_sanitize_utf8(void **state)
{
	char out[64];

	/* Valid UTF-8 passes: é, €, an emoji. */
	gt_sanitize(out, sizeof(out), "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
	assert_string_equal(out, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
	/* U+009B (CSI) as UTF-8, ESC[6n, BEL, CR/LF. */
	gt_sanitize(out, sizeof(out),
		    "a\xc2\x9b"
		    "6n\x1b[6n\x07\r\n");
	assert_string_equal(out, "a\\xc2\\x9b6n\\x1b[6n\\x07\\x0d\\x0a");
	/* Overlong, surrogate, beyond U+10FFFF, truncated. */
	gt_sanitize(out, sizeof(out), "\xc0\xaf\xed\xa0\x80\xf4\x90\x80\x80\xe2\x82");
	assert_string_equal(out, "\\xc0\\xaf\\xed\\xa0\\x80\\xf4\\x90\\x80\\x80\\xe2\\x82");
	/* Cut to fit, never mid-escape. */
	gt_sanitize(out, 6, "\x1b\x1b");
	assert_string_equal(out, "\\x1b");
	assert_string_equal(gt_clean("plain"), "plain");
	assert_string_equal(gt_clean("\x9b"), "\\x9b");
}

static void test_xml_controls(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	gt_xml_puts(f, "<a\x1b\x9b&\xc2\x85>");
	fclose(f);
	assert_string_equal(buf, "&lt;a\\x1b\\x9b&amp;\\xc2\\x85&gt;");
	free(buf);
}

/* Checks s is a JSON string of valid UTF-8 with no raw controls; returns it unquoted. */
static void json_of(const char *s, char **buf)
{
	size_t len = 0;
	FILE *f = open_memstream(buf, &len);
	struct json j;

	json_init(&j, f, false);
	json_str(&j, s);
	fclose(f);
	for (const char *p = *buf; *p;) {
		size_t n = gt_utf8_len(p);

		if (!n || (unsigned char)*p < 0x20)
			fail_msg("JSON output not valid UTF-8 at %zu: '%s'", (size_t)(p - *buf),
				 *buf);
		p += n;
	}
}

static void test_json_every_byte(void **state)
{
	char in[2], *buf = NULL;

	for (int c = 1; c < 256; c++) {
		in[0] = (char)c;
		in[1] = 0;
		json_of(in, &buf);
		if (c == '"')
			assert_string_equal(buf, "\"\\\"\"");
		else if (c == '\\')
			assert_string_equal(buf, "\"\\\\\"");
		else if (c >= 0x80)
			assert_string_equal(buf, "\"\\ufffd\"");
		else if (c < 0x20 || c == 0x7f)
			assert_true(buf[1] == '\\' && strlen(buf) >= 4);
		else
			assert_true(buf[1] == c && buf[2] == '"');
		free(buf);
	}
	json_of("\xc3\xa9\xed\xa0\x80\xe2\x82", &buf);
	assert_string_equal(buf, "\"\xc3\xa9\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\"");
	free(buf);
	/* Plain runs go out whole: each byte between and around the escapes is kept. */
	json_of("ab\"c\\d\ne\x01"
		"f\xc3\xa9g\x80h",
		&buf);
	assert_string_equal(buf, "\"ab\\\"c\\\\d\\ne\\u0001f\xc3\xa9g\\ufffdh\"");
	free(buf);
}

static void test_parse_uint(void **state)
{
	uint64_t v;

	assert_int_equal(gt_parse_uint("42", 0, 100, &v), 0);
	assert_int_equal(v, 42);
	assert_int_equal(gt_parse_uint("-1", 0, UINT32_MAX, &v), -1);
	assert_int_equal(gt_parse_uint(" 1", 0, 10, &v), -1);
	assert_int_equal(gt_parse_uint("1x", 0, 10, &v), -1);
	assert_int_equal(gt_parse_uint("", 0, 10, &v), -1);
	assert_int_equal(gt_parse_uint("abc", 0, 10, &v), -1);
	assert_int_equal(gt_parse_uint("17", 0, 16, &v), -1);
	assert_int_equal(gt_parse_uint("0", 1, 16, &v), -1);
	assert_int_equal(gt_parse_uint("99999999999999999999", 0, UINT64_MAX, &v), -1);
}

static FILE *usage_to;

static void fake_usage(FILE *f)
{
	usage_to = f;
}

static void test_opt_helpers(void **state)
{
	static const char *const fmts[] = {"text", "json", "csv", NULL};
	int v0 = gt_verbose;

	(void)state;
	assert_int_equal(gt_opt_choice("--format", "text", fmts), 0);
	assert_int_equal(gt_opt_choice("--format", "csv", fmts), 2);
	assert_int_equal(gt_opt_choice("--format", "xml", fmts), -1);
	assert_int_equal(gt_opt_choice("--format", "", fmts), -1);
	assert_int_equal(gt_opt_common('v', "test", fake_usage), GT_OPT_NEXT);
	assert_int_equal(gt_verbose, v0 + 1);
	gt_verbose = v0;
	assert_null(usage_to);
	assert_int_equal(gt_opt_common('h', "test", fake_usage), GT_EXIT_OK);
	assert_ptr_equal(usage_to, stdout);
	assert_int_equal(gt_opt_common('?', "test", fake_usage), GT_EXIT_USAGE);
}

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

/*
 * While gt_out writes, its temporary file has no name (O_TMPFILE): a gaptrace
 * killed mid-write leaves nothing in the directory (#10).  The file appears
 * whole, 0600, at gt_out__close; gt_out__abort leaves the directory as it was.
 */
static void test_out_no_leftover(void **state)
{
	char dir[] = "/tmp/gt_test_tmp_XXXXXX", path[128], buf[16] = {};
	struct gt_out o;
	struct stat st;
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/report.json", dir);
	fd = openat(AT_FDCWD, dir, O_TMPFILE | O_WRONLY, 0600);
	if (fd < 0) {
		print_message("no O_TMPFILE in %s: the named temporary file is used\n", dir);
		rmdir(dir);
		skip();
	}
	close(fd);
	assert_int_equal(gt_out__open(&o, path), 0);
	assert_true(o.anon);
	fputs("whole", o.f);
	fflush(o.f);
	assert_int_equal(count_entries(dir), 0);
	assert_int_equal(gt_out__close(&o), 0);
	assert_int_equal(count_entries(dir), 1);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	fd = open(path, O_RDONLY);
	assert_int_equal(read(fd, buf, sizeof(buf)), 5);
	close(fd);
	assert_string_equal(buf, "whole");
	/* An aborted write: the old file stays, no other entry appears. */
	assert_int_equal(gt_out__open(&o, path), 0);
	fputs("half", o.f);
	gt_out__abort(&o);
	assert_int_equal(count_entries(dir), 1);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 5);
	unlink(path);
	rmdir(dir);
}

static void test_out_keep_old_and_links(void **state)
{
	char dir[] = "/tmp/gt_test_out_XXXXXX", path[128], old[128], victim[128], link[128],
	     err[512], buf[16] = {};
	struct stat st;
	int fd;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/cap", dir);
	snprintf(old, sizeof(old), "%s/cap.old", dir);
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	snprintf(link, sizeof(link), "%s/link", dir);

	umask(0);
	fd = gt_out__create_keep_old(path, err, sizeof(err));
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "one", 3), 3);
	close(fd);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	/* An existing file becomes .old; the new one is created fresh. */
	fd = gt_out__create_keep_old(path, err, sizeof(err));
	assert_true(fd >= 0);
	close(fd);
	fd = open(old, O_RDONLY);
	assert_int_equal(read(fd, buf, sizeof(buf)), 3);
	close(fd);
	assert_string_equal(buf, "one");
	umask(022);

	/* A link in a directory others can write is refused; its target is untouched. */
	fd = open(victim, O_WRONLY | O_CREAT, 0644);
	assert_int_equal(write(fd, "keep", 4), 4);
	close(fd);
	assert_int_equal(symlink(victim, link), 0);
	assert_int_equal(chmod(dir, 01777), 0);
	assert_int_equal(gt_out__create_keep_old(link, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "symbolic link"));
	{
		struct gt_out o;

		assert_int_equal(gt_out__open(&o, link), -1);
	}
	assert_int_equal(stat(victim, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	assert_int_equal(st.st_size, 4);

	/* gt_out: all or nothing, 0600, renamed over the name (not through a link). */
	{
		struct gt_out o;

		assert_int_equal(chmod(dir, 0700), 0);
		assert_int_equal(gt_out__open(&o, link), 0);
		fputs("new", o.f);
		assert_int_equal(gt_out__close(&o), 0);
		assert_int_equal(lstat(link, &st), 0);
		assert_true(S_ISREG(st.st_mode));
		assert_int_equal(st.st_mode & 07777, 0600);
		assert_int_equal(stat(victim, &st), 0);
		assert_int_equal(st.st_size, 4);
		assert_int_equal(gt_out__open(&o, path), 0);
		fputs("half", o.f);
		gt_out__abort(&o);
		assert_int_equal(stat(path, &st), 0);
		assert_int_equal(st.st_size, 0);
	}
	unlink(path);
	unlink(old);
	unlink(victim);
	unlink(link);
	assert_int_equal(rmdir(dir), 0);
}

/* gt_count_le: the elements whose key is at most the one asked, in a sorted array. */
/*
 * Under sudo (SUDO_UID, SUDO_GID) every output belongs to the user who ran
 * it, so `gaptrace report` without sudo can read the capture (#28); mode
 * stays 0600.  Without them, or with SUDO_UID=0 or junk, root keeps it.
 */
static void test_out_sudo_owner(void **state)
{
	char dir[] = "/tmp/gt_test_own_XXXXXX", cap[128], rep[128], err[512];
	struct gt_out o;
	struct stat st;
	int fd;

	(void)state;
	if (geteuid() != 0) {
		print_message("not root: files cannot be given away\n");
		skip();
	}
	assert_non_null(mkdtemp(dir));
	snprintf(cap, sizeof(cap), "%s/run.gtcap", dir);
	snprintf(rep, sizeof(rep), "%s/report.json", dir);
	setenv("SUDO_UID", "65534", 1);
	setenv("SUDO_GID", "65533", 1);
	fd = gt_out__create_keep_old(cap, err, sizeof(err));
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(stat(cap, &st), 0);
	assert_int_equal(st.st_uid, 65534);
	assert_int_equal(st.st_gid, 65533);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(gt_out__open(&o, rep), 0);
	fputs("{}", o.f);
	assert_int_equal(gt_out__close(&o), 0);
	assert_int_equal(stat(rep, &st), 0);
	assert_int_equal(st.st_uid, 65534);
	assert_int_equal(st.st_mode & 07777, 0600);
	unlink(rep);
	setenv("SUDO_UID", "0x10", 1);
	assert_int_equal(gt_out__open(&o, rep), 0);
	assert_int_equal(gt_out__close(&o), 0);
	assert_int_equal(stat(rep, &st), 0);
	assert_int_equal(st.st_uid, 0);
	unsetenv("SUDO_UID");
	unsetenv("SUDO_GID");
	unlink(rep);
	unlink(cap);
	rmdir(dir);
}

static void test_count_le(void **state)
{
	struct e {
		uint32_t pad;
		uint64_t key;
	} a[] = {{0, 10}, {0, 20}, {0, 20}, {0, 30}};

	(void)state;
	assert_int_equal(gt_count_le(a, 4, sizeof(a[0]), offsetof(struct e, key), 9), 0);
	assert_int_equal(gt_count_le(a, 4, sizeof(a[0]), offsetof(struct e, key), 10), 1);
	assert_int_equal(gt_count_le(a, 4, sizeof(a[0]), offsetof(struct e, key), 20), 3);
	assert_int_equal(gt_count_le(a, 4, sizeof(a[0]), offsetof(struct e, key), 29), 3);
	assert_int_equal(gt_count_le(a, 4, sizeof(a[0]), offsetof(struct e, key), UINT64_MAX), 4);
	assert_int_equal(gt_count_le(NULL, 0, sizeof(a[0]), offsetof(struct e, key), 5), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_count_le),	    cmocka_unit_test(test_sanitize_every_byte),
	    cmocka_unit_test(test_sanitize_utf8),   cmocka_unit_test(test_xml_controls),
	    cmocka_unit_test(test_json_every_byte), cmocka_unit_test(test_parse_uint),
	    cmocka_unit_test(test_opt_helpers),	    cmocka_unit_test(test_out_keep_old_and_links),
	    cmocka_unit_test(test_out_no_leftover), cmocka_unit_test(test_out_sudo_owner),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
