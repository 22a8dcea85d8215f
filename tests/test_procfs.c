// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_procfs.c: the /proc reader: this process's maps (the mapping of one of
 * its functions), a hand-written maps file with odd lines, status and stat
 * fields, comm and the thread list.
 */
#include <setjmp.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "support/procfs.h"
#include "support/safeopen.h"

static __attribute__((noinline)) int probe_fn(int x)
{
	return x * 3 + 1;
}

static void test_self_maps(void **state)
{
	uint64_t addr = (uint64_t)(uintptr_t)&probe_fn;
	char exe[4096];
	struct procfs_maps it;
	struct procfs_map m;
	struct stat st, est;
	bool found = false;
	uint64_t prev = 0;
	ssize_t n;
	int fd;

	assert_int_equal(probe_fn(1), 4);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = '\0';
	assert_int_equal(procfs_maps_open(&it, 0, 0), 0);
	while (procfs_maps_next(&it, &m)) {
		assert_true(m.start < m.end);
		assert_true(m.start >= prev); /* the kernel lists them sorted */
		prev = m.start;
		if (addr < m.start || addr >= m.end)
			continue;
		found = true;
		assert_string_equal(m.path, exe);
		assert_string_equal(m.perms, "r-xp");
		assert_true(m.exec);
		assert_true(m.inode != 0);
		fd = safeopen_mapped(getpid(), m.start, m.end, m.path, m.inode, &st);
		assert_true(fd >= 0);
		close(fd);
		assert_int_equal(stat(exe, &est), 0);
		assert_true(st.st_ino == est.st_ino);
		assert_true(m.inode == (uint64_t)est.st_ino);
	}
	procfs_maps_close(&it);
	procfs_maps_close(&it); /* twice is safe */
	assert_true(found);
	assert_int_equal(procfs_maps_open(&it, getpid(), getpid()), 0);
	assert_true(procfs_maps_next(&it, &m));
	procfs_maps_close(&it);
}

static const char odd_maps[] =
    "00400000-00452000 r-xp 00000000 08:02 173521      /usr/bin/dbus-daemon\n"
    "not a maps line\n"
    "7f0000000000-7f0000001000 rw-p 00001000 fd:01 1234 /tmp/my lib.so (deleted)\n"
    "\n"
    "7ffd00000000-7ffd00002000 r-xp 00000000 00:00 0                          [vdso]\n"
    "7f1000000000-7f1000021000 rw-p 00000000 00:00 0 \n"
    "3000-2000 r--p 00000000 00:00 0 /backwards\n"
    "7f2000000000-7f2000001000 ---p 00000000 00:00 0\n"
    "7f3000000000-7f3000001000 r--s 00002000 00:05 99 /memfd:gaptrace x (deleted)\n"
    "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]";

static void test_odd_maps_file(void **state)
{
	char path[] = "/tmp/test_procfs.XXXXXX";
	struct procfs_maps it;
	struct procfs_map m;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, odd_maps, sizeof(odd_maps) - 1), (ssize_t)sizeof(odd_maps) - 1);
	close(fd);
	assert_int_equal(procfs_maps_open_path(&it, path), 0);

	assert_true(procfs_maps_next(&it, &m));
	assert_true(m.start == 0x400000 && m.end == 0x452000 && m.offset == 0);
	assert_int_equal(m.dev_major, 8);
	assert_int_equal(m.dev_minor, 2);
	assert_true(m.inode == 173521);
	assert_string_equal(m.perms, "r-xp");
	assert_true(m.exec);
	assert_string_equal(m.path, "/usr/bin/dbus-daemon");
	assert_false(procfs_path_is_deleted(m.path));

	/* A path with a space, of a deleted file; the malformed line before it is skipped. */
	assert_true(procfs_maps_next(&it, &m));
	assert_true(m.start == 0x7f0000000000ULL && m.offset == 0x1000);
	assert_int_equal(m.dev_major, 0xfd);
	assert_int_equal(m.dev_minor, 1);
	assert_string_equal(m.perms, "rw-p");
	assert_false(m.exec);
	assert_string_equal(m.path, "/tmp/my lib.so (deleted)");
	assert_true(procfs_path_is_deleted(m.path));

	assert_true(procfs_maps_next(&it, &m));
	assert_string_equal(m.path, "[vdso]");
	assert_true(m.exec);
	assert_true(m.inode == 0);

	/* Anonymous, with and without the blank after the inode; start >= end is skipped. */
	assert_true(procfs_maps_next(&it, &m));
	assert_true(m.start == 0x7f1000000000ULL && m.end == 0x7f1000021000ULL);
	assert_string_equal(m.path, "");
	assert_true(procfs_maps_next(&it, &m));
	assert_true(m.start == 0x7f2000000000ULL);
	assert_string_equal(m.perms, "---p");
	assert_string_equal(m.path, "");

	assert_true(procfs_maps_next(&it, &m));
	assert_string_equal(m.perms, "r--s");
	assert_true(m.offset == 0x2000 && m.inode == 99);
	assert_string_equal(m.path, "/memfd:gaptrace x (deleted)");

	/* The last line has no newline. */
	assert_true(procfs_maps_next(&it, &m));
	assert_true(m.start == 0xffffffffff600000ULL);
	assert_string_equal(m.path, "[vsyscall]");
	assert_false(procfs_maps_next(&it, &m));
	assert_false(procfs_maps_next(&it, &m));
	procfs_maps_close(&it);
	unlink(path);

	assert_int_equal(procfs_maps_open_path(&it, "/nonexistent/maps"), -ENOENT);
	assert_false(procfs_maps_next(&it, &m));
	procfs_maps_close(&it);
	assert_false(procfs_path_is_deleted(""));
	assert_false(procfs_path_is_deleted("(deleted)"));
}

static void test_status_self(void **state)
{
	char buf[8192], name[64], comm[64], val[16];

	assert_true(procfs_status_read(0, 0, buf, sizeof(buf)) > 0);
	assert_true(procfs_status_field(buf, "Name", name, sizeof(name)));
	assert_true(procfs_comm(0, 0, comm, sizeof(comm)));
	assert_string_equal(name, comm);
	assert_int_equal(procfs_status_long(buf, "Tgid", -1), getpid());
	assert_int_equal(procfs_status_long(buf, "Pid", -1), getpid());
	assert_int_equal(procfs_status_long(buf, "PPid", -1), getppid());
	assert_int_equal(procfs_status_long(buf, "NoSuchKey", -7), -7);
	assert_true(procfs_status_hex(buf, "NoSuchKey") == 0);
	/* "Pid" must not match "PPid" or "TracerPid": keys start a line. */
	assert_int_equal(procfs_status_long("TracerPid:\t5\nPPid:\t6\nPid:\t7\n", "Pid", 0), 7);
	assert_true(procfs_status_hex("SigBlk:\t0000000000010000\n", "SigBlk") == 0x10000);
	/* Values are cut to the buffer. */
	assert_true(procfs_status_field("Name:\tabcdefgh\n", "Name", val, 4));
	assert_string_equal(val, "abc");

	/* The same through the thread's own directory and through the pid. */
	assert_true(procfs_status_read(getpid(), gettid(), buf, sizeof(buf)) > 0);
	assert_int_equal(procfs_status_long(buf, "Pid", -1), gettid());
	assert_true(procfs_status_read(getpid(), 0, buf, sizeof(buf)) > 0);
	assert_int_equal(procfs_status_long(buf, "Tgid", -1), getpid());
	assert_true(procfs_status_read(0x7fffffff, 0, buf, sizeof(buf)) < 0);
	assert_false(procfs_comm(0x7fffffff, 0, comm, sizeof(comm)));
	assert_string_equal(comm, "");
}

static void test_stat_self(void **state)
{
	struct procfs_stat st;

	assert_int_equal(procfs_stat_read(0, 0, &st), 0);
	assert_int_equal(st.state, 'R');
	assert_int_equal(st.ppid, getppid());
	assert_false(st.flags & 0x00200000); /* not a kernel thread */
	assert_int_equal(procfs_stat_read(getpid(), gettid(), &st), 0);
	assert_int_equal(st.state, 'R');
	assert_true(procfs_stat_read(0x7fffffff, 0, &st) < 0);
}

static void test_tasks_self(void **state)
{
	struct procfs_tasks it;
	bool found = false;
	pid_t tid;
	int n = 0;

	assert_int_equal(procfs_tasks_open(&it, getpid()), 0);
	while ((tid = procfs_tasks_next(&it))) {
		assert_true(tid > 0);
		found |= tid == gettid();
		n++;
	}
	assert_int_equal(procfs_tasks_next(&it), 0);
	procfs_tasks_close(&it);
	procfs_tasks_close(&it);
	assert_true(found);
	assert_true(n >= 1);
	assert_int_equal(procfs_tasks_open(&it, 0), 0);
	assert_true(procfs_tasks_next(&it) > 0);
	procfs_tasks_close(&it);
	assert_true(procfs_tasks_open(&it, 0x7fffffff) < 0);
	assert_int_equal(procfs_tasks_next(&it), 0);
	procfs_tasks_close(&it);
}

/* Blocks until a byte arrives on the pipe whose fds arg points to. */
static void *park(void *arg)
{
	const int *fd = arg;
	char c;
	ssize_t n = read(fd[0], &c, 1);

	(void)n;
	return NULL;
}

/* The only thread, then a second one: live threads other than the one skipped. */
static void test_live_thread(void **state)
{
	pthread_t th;
	int fd[2];
	pid_t other;

	assert_int_equal(procfs_live_thread(getpid(), 0), gettid());
	assert_int_equal(procfs_live_thread(getpid(), gettid()), 0);
	assert_int_equal(procfs_live_thread(0x7fffffff, 0), 0);
	assert_int_equal(pipe(fd), 0);
	assert_int_equal(pthread_create(&th, NULL, park, fd), 0);
	other = procfs_live_thread(getpid(), gettid());
	assert_true(other > 0 && other != gettid());
	assert_int_equal(write(fd[1], "x", 1), 1);
	pthread_join(th, NULL);
	close(fd[0]);
	close(fd[1]);
}

static void test_paths(void **state)
{
	char buf[64];

	assert_true(procfs_path(buf, sizeof(buf), 0, 0, "maps"));
	assert_string_equal(buf, "/proc/self/maps");
	assert_true(procfs_path(buf, sizeof(buf), 12, 0, "status"));
	assert_string_equal(buf, "/proc/12/status");
	assert_true(procfs_path(buf, sizeof(buf), 12, 34, "comm"));
	assert_string_equal(buf, "/proc/12/task/34/comm");
	assert_true(procfs_path(buf, sizeof(buf), 0, 34, "stat"));
	assert_string_equal(buf, "/proc/self/task/34/stat");
	assert_false(procfs_path(buf, 8, 12, 34, "comm"));

	assert_true(procfs_root_path(buf, sizeof(buf), 12, "/usr/lib/libc.so.6"));
	assert_string_equal(buf, "/proc/12/root/usr/lib/libc.so.6");
	assert_true(procfs_root_path(buf, sizeof(buf), 0, "/bin/sh"));
	assert_string_equal(buf, "/proc/self/root/bin/sh");
	assert_false(procfs_root_path(buf, 16, 12, "/usr/lib/libc.so.6"));
	assert_true(
	    procfs_map_files_path(buf, sizeof(buf), 12, 0x7f0000001000ULL, 0x7f0000002000ULL));
	assert_string_equal(buf, "/proc/12/map_files/7f0000001000-7f0000002000");
	assert_true(procfs_map_files_path(buf, sizeof(buf), 0, 0x1000, 0x2000));
	assert_string_equal(buf, "/proc/self/map_files/1000-2000");
	assert_false(procfs_map_files_path(buf, 20, 12, 0x1000, 0x2000));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_self_maps),	cmocka_unit_test(test_odd_maps_file),
	    cmocka_unit_test(test_status_self), cmocka_unit_test(test_stat_self),
	    cmocka_unit_test(test_tasks_self),	cmocka_unit_test(test_live_thread),
	    cmocka_unit_test(test_paths),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
