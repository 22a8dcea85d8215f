// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_safeopen.c: opening files a traced process points at (safeopen.c)
 * and tying separate debug files to their object (debugfind.c): FIFOs and
 * devices refused without blocking, a symlink to a root-only file refused
 * under the target's credentials, maps texts that are not names, debuglink
 * names, the CRC and build-id ties.  An alarm turns a blocking open into a
 * failure instead of a hung test.
 */
#include <setjmp.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "support/safeopen.h"
#include "symbols/debugfind.h"
#include "symbols/elf.h"

static char tmp[64]; /* "/tmp/gt_test_safeopen_XXXXXX" */

static void on_alarm(int sig)
{
	(void)sig;
	/* Only async-signal-safe calls: say it and end the run as failed. */
	static const char msg[] = "test_safeopen: an open blocked (alarm)\n";
	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(3);
	_exit(2);
}

static int group_setup(void **state)
{
	snprintf(tmp, sizeof(tmp), "/tmp/gt_test_safeopen_XXXXXX");
	if (!mkdtemp(tmp))
		return -1;
	chmod(tmp, 0755);
	signal(SIGALRM, on_alarm);
	return 0;
}

static int group_teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	return system(cmd) ? -1 : 0;
}

static void path_in(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", tmp, name);
}

static void write_file(const char *path, const void *data, size_t len, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
	chmod(path, mode);
}

static void test_safeopen_regular(void **state)
{
	char path[PATH_MAX];
	struct stat st;
	int fd;

	path_in(path, sizeof(path), "plain");
	write_file(path, "hello", 5, 0644);
	fd = safeopen_trusted(path, &st);
	assert_true(fd >= 0);
	assert_int_equal(st.st_size, 5);
	assert_true(fcntl(fd, F_GETFL) & O_NONBLOCK);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	close(fd);
	assert_int_equal(safeopen_trusted("/nonexistent/gt", NULL), -ENOENT);
}

static void test_safeopen_fifo_refused(void **state)
{
	char path[PATH_MAX], *found = NULL;
	struct debugfind_req r = {.link = "obj.debug"};
	int fd;

	path_in(path, sizeof(path), "fifo");
	assert_int_equal(mkfifo(path, 0644), 0);
	alarm(5);
	assert_int_equal(safeopen_trusted(path, NULL), -EINVAL);
	assert_int_equal(safeopen_as_target(getpid(), path, true, false, NULL), -EINVAL);
	/* A debuglink candidate that is a FIFO: skipped, not waited on. */
	path_in(path, sizeof(path), "obj.debug");
	assert_int_equal(mkfifo(path, 0644), 0);
	path_in(path, sizeof(path), "obj.so");
	r.pid = getpid();
	r.name = path;
	r.path = "";
	fd = debugfind__open(&r, &found);
	assert_int_equal(fd, -ENOENT);
	assert_null(found);
	alarm(0);
}

static void test_safeopen_devices_refused(void **state)
{
	char path[PATH_MAX];
	uint32_t crc;
	int fd;

	alarm(5);
	assert_int_equal(safeopen_trusted("/dev/zero", NULL), -EINVAL);
	assert_int_equal(safeopen_trusted("/dev/null", NULL), -EINVAL);
	/* The symlink the target made to one: the same. */
	path_in(path, sizeof(path), "zero.debug");
	assert_int_equal(symlink("/dev/zero", path), 0);
	assert_int_equal(safeopen_trusted(path, NULL), -EINVAL);
	/* The CRC never reads a device, even if handed one. */
	fd = open("/dev/zero", O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(debugfind__crc(fd, &crc), -EINVAL);
	close(fd);
	alarm(0);
}

/* A child running as nobody until killed: the target whose rights are taken. */
static pid_t nobody_child(void)
{
	struct passwd *pw = getpwnam("nobody");
	int p[2];
	pid_t pid;
	char c;

	assert_non_null(pw);
	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		/* Gone with the test, even one that failed before killing it. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) || dup2(open("/dev/null", O_RDWR), 1) < 0 ||
		    dup2(1, 2) < 0)
			_exit(1);
		if (setgroups(0, NULL) || setresgid(pw->pw_gid, pw->pw_gid, pw->pw_gid) ||
		    setresuid(pw->pw_uid, pw->pw_uid, pw->pw_uid))
			_exit(1);
		if (write(p[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(p[1]);
	assert_int_equal(read(p[0], &c, 1), 1);
	close(p[0]);
	return pid;
}

static void test_safeopen_target_rights(void **state)
{
	char secret_dir[PATH_MAX], secret[PATH_MAX + 16], nob[PATH_MAX], link[PATH_MAX + 16];
	char open_file[PATH_MAX + 16];
	struct safeopen_creds c;
	gid_t groups[64];
	int fd, ngroups;
	pid_t child;

	if (geteuid() != 0) {
		print_message("skipped: needs root to run a target as nobody\n");
		skip();
	}
	ngroups = getgroups(64, groups);
	/* A root-only file (0600 in a 0700 folder) and a symlink to it where nobody writes. */
	path_in(secret_dir, sizeof(secret_dir), "rootonly");
	assert_int_equal(mkdir(secret_dir, 0700), 0);
	snprintf(secret, sizeof(secret), "%s/real.debug", secret_dir);
	write_file(secret, "secret", 6, 0600);
	path_in(nob, sizeof(nob), "nob");
	assert_int_equal(mkdir(nob, 0755), 0);
	snprintf(link, sizeof(link), "%s/lib.so.debug", nob);
	assert_int_equal(symlink(secret, link), 0);
	snprintf(open_file, sizeof(open_file), "%s/readable", nob);
	write_file(open_file, "open", 4, 0644);

	child = nobody_child();
	assert_int_equal(safeopen_creds_read(child, &c), 0);
	assert_int_equal(c.uid, getpwnam("nobody")->pw_uid);
	assert_int_equal(c.ngroups, 0);
	/* Root follows the link; the target cannot, so neither does its open. */
	fd = safeopen_trusted(link, NULL);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(safeopen_as_target(child, link, true, false, NULL), -EACCES);
	assert_int_equal(safeopen_as_target(child, link, false, false, NULL), -EACCES);
	assert_int_equal(safeopen_as_target(child, secret, true, false, NULL), -EACCES);
	/* What the target may read opens; a symlink with nofollow does not. */
	fd = safeopen_as_target(child, open_file, true, false, NULL);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(safeopen_as_target(child, link, true, true, NULL), -EINVAL);
	/* Magic links are not followed: /proc/self/root would lead anywhere. */
	assert_true(safeopen_as_target(child, "/proc/self/root/etc/passwd", true, false, NULL) < 0);
	/* The recorder's own rights are back. */
	assert_int_equal(syscall(SYS_setfsuid, -1), 0);
	assert_int_equal(syscall(SYS_setfsgid, -1), getegid());
	assert_int_equal(getgroups(64, groups), ngroups);
	fd = safeopen_trusted(secret, NULL);
	assert_true(fd >= 0);
	close(fd);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
}

static void test_safeopen_creds_parse(void **state)
{
	static const char status[] = "Name:\tx\nUid:\t1000\t1001\t1002\t1003\n"
				     "Gid:\t2000\t2001\t2002\t2003\nFDSize:\t64\n"
				     "Groups:\t4 24 27 \nNStgid:\t1\n";
	struct safeopen_creds c;

	assert_int_equal(safeopen_creds_parse(status, &c), 0);
	/* The fs ids (the fourth): what the kernel checks on the target's opens. */
	assert_int_equal(c.uid, 1003);
	assert_int_equal(c.gid, 2003);
	assert_int_equal(c.ngroups, 3);
	assert_int_equal(c.groups[0], 4);
	assert_int_equal(c.groups[2], 27);
	assert_int_equal(safeopen_creds_parse("Name:\tx\nGid:\t1 1 1 1\n", &c), -EINVAL);
	assert_int_equal(safeopen_creds_parse("Uid:\t1 1 1\nGid:\t1 1 1 1\n", &c), -EINVAL);
}

static void test_safeopen_maps_paths(void **state)
{
	char out[64];

	assert_true(safeopen_path_plain("/usr/lib/libc.so.6"));
	assert_true(safeopen_path_plain("/tmp/my lib.so"));
	/* The kernel's \012 for a newline, and a real backslash, read alike. */
	assert_false(safeopen_path_plain("/tmp/lib\\012nl.so"));
	assert_false(safeopen_path_plain("/tmp/lib\\x.so"));
	assert_false(safeopen_path_plain("/tmp/lib\nnl.so"));
	assert_false(safeopen_path_plain("/tmp/lib.so (deleted)"));
	assert_false(safeopen_path_plain("[vdso]"));
	assert_false(safeopen_path_plain("lib.so"));
	assert_false(safeopen_path_plain(""));
	assert_true(safeopen_path_unescape("/tmp/lib\\012nl.so", out, sizeof(out)));
	assert_string_equal(out, "/tmp/lib\nnl.so");
	assert_true(safeopen_path_unescape("/a\\b\\01", out, sizeof(out)));
	assert_string_equal(out, "/a\\b\\01");
	assert_true(safeopen_path_unescape("/plain", out, sizeof(out)));
	assert_string_equal(out, "/plain");
	assert_false(safeopen_path_unescape("/much/too/long/for/eight", out, 8));
	assert_int_equal(strlen(out), 7);
}

static void test_debugfind_link_names(void **state)
{
	char lng[DEBUGFIND_MAX_LINK + 2];

	assert_true(debugfind__link_ok("libc.so.6.debug"));
	assert_true(debugfind__link_ok("a b.debug"));
	assert_false(debugfind__link_ok("../../../../etc/shadow"));
	assert_false(debugfind__link_ok("sub/x.debug"));
	assert_false(debugfind__link_ok(".."));
	assert_false(debugfind__link_ok("x..debug"));
	assert_false(debugfind__link_ok("."));
	assert_false(debugfind__link_ok(""));
	assert_false(debugfind__link_ok("a\nb"));
	assert_false(debugfind__link_ok(NULL));
	memset(lng, 'a', sizeof(lng) - 1);
	lng[sizeof(lng) - 1] = '\0';
	assert_false(debugfind__link_ok(lng));
}

/* Copies this test program (an ELF file with a build id) to dir/name. */
static void copy_self(const char *path)
{
	char cmd[2 * PATH_MAX + 32];

	snprintf(cmd, sizeof(cmd), "cp /proc/%d/exe '%s'", getpid(), path);
	assert_int_equal(system(cmd), 0);
}

static void test_debugfind_ties(void **state)
{
	char obj[PATH_MAX], dbg[PATH_MAX], *found = NULL;
	struct debugfind_req r = {.link = "tie.debug", .path = ""};
	uint8_t bid[64], wrong[64];
	uint32_t crc;
	int fd, len;

	path_in(obj, sizeof(obj), "tie.so");
	path_in(dbg, sizeof(dbg), "tie.debug");
	copy_self(dbg);
	fd = open(dbg, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(debugfind__crc(fd, &crc), 0);
	close(fd);
	len = syms_elf_build_id(dbg, bid, sizeof(bid));
	assert_true(len > 0);
	r.pid = getpid();
	r.name = obj;
	/* No build id on the object: the CRC decides. */
	r.crc = crc ^ 1;
	assert_int_equal(debugfind__open(&r, &found), -ENOENT);
	r.crc = crc;
	fd = debugfind__open(&r, &found);
	assert_true(fd >= 0);
	assert_string_equal(found, dbg);
	close(fd);
	free(found);
	found = NULL;
	/* Both have build ids: they decide, even against a matching CRC. */
	memcpy(wrong, bid, (size_t)len);
	wrong[0] ^= 0xff;
	r.build_id = wrong;
	r.build_id_len = (size_t)len;
	assert_int_equal(debugfind__open(&r, &found), -ENOENT);
	r.build_id = bid;
	fd = debugfind__open(&r, &found);
	assert_true(fd >= 0);
	close(fd);
	free(found);
	found = NULL;
	/* No link: "<object>.debug" is taken only when a build id ties it. */
	r.link = NULL;
	path_in(dbg, sizeof(dbg), "tie.so.debug");
	copy_self(dbg);
	fd = debugfind__open(&r, &found);
	assert_true(fd >= 0);
	close(fd);
	free(found);
	found = NULL;
	r.build_id = NULL;
	r.build_id_len = 0;
	assert_int_equal(debugfind__open(&r, &found), -ENOENT);
	/* A link that leaves the folder is not looked up at all. */
	r.link = "../tie.debug";
	r.crc = crc;
	assert_int_equal(debugfind__open(&r, &found), -ENOENT);
	assert_null(found);
}

/* tree/.build-id/xx/yyyy.debug for the build id bid; its folder is made. */
static void tree_file(char *out, size_t len, const char *tree, const uint8_t *bid, int n)
{
	char hex[129], dir[256];

	for (int i = 0; i < n; i++)
		snprintf(hex + 2 * i, 3, "%02x", bid[i]);
	snprintf(dir, sizeof(dir), "%s/.build-id", tree);
	assert_true(mkdir(dir, 0755) == 0 || errno == EEXIST);
	snprintf(dir, sizeof(dir), "%s/.build-id/%.2s", tree, hex);
	assert_true(mkdir(dir, 0755) == 0 || errno == EEXIST);
	snprintf(out, len, "%s/%s.debug", dir, hex + 2);
}

static void test_debugfind_build_id_tree(void **state)
{
	struct debugfind_req r = {.name = "[vdso]"};
	char tree[128], dbg[512], *found = NULL;
	uint8_t bid[64];
	int fd, len;

	path_in(tree, sizeof(tree), "tree");
	assert_int_equal(mkdir(tree, 0755), 0);
	len = syms_elf_build_id("/proc/self/exe", bid, sizeof(bid));
	assert_true(len > 1);
	tree_file(dbg, sizeof(dbg), tree, bid, len);
	copy_self(dbg);
	r.build_id = bid;
	r.build_id_len = (size_t)len;
	r.path = tree;
	fd = debugfind__open(&r, &found);
	assert_true(fd >= 0);
	assert_string_equal(found, dbg);
	close(fd);
	free(found);
	found = NULL;
	/* The file under another id's name: its own build id says no. */
	bid[len - 1] ^= 1;
	tree_file(dbg, sizeof(dbg), tree, bid, len);
	copy_self(dbg);
	assert_int_equal(debugfind__open(&r, &found), -ENOENT);
	assert_null(found);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_safeopen_regular),
	    cmocka_unit_test(test_safeopen_fifo_refused),
	    cmocka_unit_test(test_safeopen_devices_refused),
	    cmocka_unit_test(test_safeopen_target_rights),
	    cmocka_unit_test(test_safeopen_creds_parse),
	    cmocka_unit_test(test_safeopen_maps_paths),
	    cmocka_unit_test(test_debugfind_link_names),
	    cmocka_unit_test(test_debugfind_ties),
	    cmocka_unit_test(test_debugfind_build_id_tree),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
