// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_inject.c: live attach against forked children that block in read,
 * clock_nanosleep and epoll_wait, take signals or spin on FP code; error paths.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "record/inject.h"
#include "symbols/live.h"
#include "support/util.h"

/* Every child dies by then, whatever a bug does to the injector. */
#define CHILD_ALARM_S 10
#define IO_TIMEOUT_MS 5000
#define ERR_LEN	      512

static char probe[PATH_MAX + 64];

struct pipes {
	int to_child[2];
	int from_child[2];
};

/* ---- helpers ---- */

static int group_setup(void **state)
{
	const char *env = getenv("GT_INJECT_PROBE");
	char exe[PATH_MAX], *slash;
	ssize_t n;

	if (env) {
		snprintf(probe, sizeof(probe), "%s", env);
		return 0;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return -1;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	/* .output/tests/test_inject and .output/asan/test_inject share the probe. */
	snprintf(probe, sizeof(probe), "%s/libinject_probe.so", exe);
	if (access(probe, R_OK))
		snprintf(probe, sizeof(probe), "%s/../tests/libinject_probe.so", exe);
	return 0;
}

static void need_root(void)
{
	if (geteuid() != 0) {
		print_message("live attach needs root; skipped\n");
		skip();
	}
	if (access(probe, R_OK))
		fail_msg("probe library %s is missing (make .output/tests/libinject_probe.so)",
			 probe);
}

static void marker_path(pid_t pid, char *buf, size_t len)
{
	snprintf(buf, len, "/tmp/gt-inject-%d.log", (int)pid);
}

static void marker_clear(pid_t pid)
{
	char path[64];

	marker_path(pid, path, sizeof(path));
	unlink(path);
}

/* How many times the probe's constructor ran in pid. */
static int marker_count(pid_t pid)
{
	char path[64], line[64], want[64];
	int n = 0;
	FILE *f;

	marker_path(pid, path, sizeof(path));
	snprintf(want, sizeof(want), "loaded %d\n", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		n += !strcmp(line, want);
	fclose(f);
	return n;
}

/* Descriptors of pid that still point at an injection memfd. */
static int count_memfds(pid_t pid)
{
	char dir[64], path[PATH_MAX], target[PATH_MAX];
	struct dirent *de;
	int n = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	d = opendir(dir);
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		ssize_t len;

		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		len = readlink(path, target, sizeof(target) - 1);
		if (len <= 0)
			continue;
		target[len] = '\0';
		n += strstr(target, "memfd:gaptrace-inject") != NULL;
	}
	closedir(d);
	return n;
}

static pid_t fork_child(void (*body)(void *), void *arg)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		alarm(CHILD_ALARM_S);
		body(arg);
		_exit(0);
	}
	marker_clear(pid);
	return pid;
}

static char task_state(pid_t pid, pid_t tid)
{
	char path[64], buf[512], *p;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	if (gt_read_file(path, buf, sizeof(buf)) <= 0)
		return 0;
	p = strrchr(buf, ')');
	return p ? p[2] : 0;
}

static long status_value(pid_t pid, const char *key)
{
	char path[64], buf[8192], *p;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (gt_read_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	p = strstr(buf, key);
	return p ? strtol(p + strlen(key) + 1, NULL, 10) : -1;
}

/* Waits (2 s at most) until pid sleeps in system call nr1 or nr2. */
static bool wait_in_syscall(pid_t pid, long nr1, long nr2)
{
	char path[64], buf[256];
	int i;

	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)pid);
	for (i = 0; i < 2000; i++) {
		if (gt_read_file(path, buf, sizeof(buf)) > 0 && buf[0] >= '0' && buf[0] <= '9') {
			long nr = strtol(buf, NULL, 10);

			if (nr == nr1 || nr == nr2)
				return true;
		}
		usleep(1000);
	}
	return false;
}

static int reap(pid_t pid)
{
	int st = 0, i;

	for (i = 0; i < (CHILD_ALARM_S + 2) * 1000; i++) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return st;
		usleep(1000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	fail_msg("child %d did not exit", (int)pid);
	return st;
}

static void assert_exit_ok(pid_t pid)
{
	int st = reap(pid);

	if (!WIFEXITED(st))
		fail_msg("child %d died of signal %d", (int)pid,
			 WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	if (WEXITSTATUS(st))
		fail_msg("child %d exited with %d", (int)pid, WEXITSTATUS(st));
	marker_clear(pid);
}

static void inject_ok(pid_t pid, const char *lib)
{
	char err[ERR_LEN];
	int ret = inject_library(pid, lib, err, sizeof(err));

	if (ret) {
		kill(pid, SIGKILL);
		fail_msg("inject_library(%d, %s) = %d: %s", (int)pid, lib, ret, err);
	}
	assert_string_equal(err, "");
}

/* Reads exactly len bytes within IO_TIMEOUT_MS; returns how many arrived. */
static size_t read_timeout(int fd, void *buf, size_t len)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	size_t got = 0;

	while (got < len && poll(&pfd, 1, IO_TIMEOUT_MS) == 1) {
		ssize_t n = read(fd, (char *)buf + got, len - got);

		if (n <= 0)
			break;
		got += (size_t)n;
	}
	return got;
}

static bool readable_now(int fd)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};

	return poll(&pfd, 1, 0) == 1;
}

static void open_pipes(struct pipes *p)
{
	assert_int_equal(pipe2(p->to_child, O_CLOEXEC), 0);
	assert_int_equal(pipe2(p->from_child, O_CLOEXEC), 0);
}

/* The parent keeps the write end towards the child and the read end back. */
static void parent_ends(struct pipes *p)
{
	close(p->to_child[0]);
	close(p->from_child[1]);
}

static void child_ends(struct pipes *p)
{
	close(p->to_child[1]);
	close(p->from_child[0]);
}

static void close_parent_ends(struct pipes *p)
{
	close(p->to_child[1]);
	close(p->from_child[0]);
}

/* Sends "hello", expects it back, and a clean exit. */
static void hello_roundtrip(pid_t pid, struct pipes *p)
{
	char buf[8] = {0};

	assert_int_equal(write(p->to_child[1], "hello", 5), 5);
	assert_int_equal(read_timeout(p->from_child[0], buf, 5), 5);
	assert_memory_equal(buf, "hello", 5);
	assert_exit_ok(pid);
	close_parent_ends(p);
}

/* A copy of the probe with a distinct tail, so it counts as another library. */
static void probe_copy(char *path, size_t len, int tag, size_t truncate_to)
{
	char buf[65536], tail[32];
	int in, out, n;
	size_t total = 0;
	ssize_t r;

	snprintf(path, len, "/tmp/gt-inject-probe-XXXXXX");
	out = mkstemp(path);
	assert_true(out >= 0);
	in = open(probe, O_RDONLY | O_CLOEXEC);
	assert_true(in >= 0);
	while ((r = read(in, buf, sizeof(buf))) > 0) {
		size_t w = (size_t)r;

		if (truncate_to && total + w > truncate_to)
			w = truncate_to - total;
		assert_int_equal(write(out, buf, w), (ssize_t)w);
		total += w;
		if (truncate_to && total == truncate_to)
			break;
	}
	if (!truncate_to) {
		n = snprintf(tail, sizeof(tail), "gaptrace-copy-%d", tag);
		assert_int_equal(write(out, tail, (size_t)n), n);
	}
	close(in);
	close(out);
}

/*
 * Compiles src into dir/name with the host compiler; false (the caller skips)
 * when there is none or it lacks what flags need (static libc).
 */
static bool build_c(const char *dir, const char *name, const char *src, const char *flags,
		    char *out, size_t len)
{
	const char *cc = getenv("CC");
	char csrc[PATH_MAX], cmd[PATH_MAX * 3];
	bool ok;
	FILE *f;

	snprintf(csrc, sizeof(csrc), "%s/%s.c", dir, name);
	snprintf(out, len, "%s/%s", dir, name);
	f = fopen(csrc, "we");
	assert_non_null(f);
	fputs(src, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "%s %s -o %s %s >/dev/null 2>&1", cc ? cc : "cc", flags, out,
		 csrc);
	ok = system(cmd) == 0;
	unlink(csrc);
	return ok;
}

/* ---- children ---- */

/* Blocks in read until the parent sends "hello", echoes it; errno must survive. */
static void child_read_echo(void *arg)
{
	struct pipes *p = arg;
	char buf[16];
	ssize_t n;
	int e;

	child_ends(p);
	errno = EXDEV;
	n = read(p->to_child[0], buf, sizeof(buf));
	e = errno;
	if (n < 0)
		_exit(100 + e); /* 104: EINTR */
	if (n != 5 || memcmp(buf, "hello", 5))
		_exit(2);
	if (e != EXDEV)
		_exit(3);
	if (write(p->from_child[1], buf, 5) != 5)
		_exit(4);
	_exit(0);
}

struct sleep_result {
	int rc;
	int err;
	uint64_t ns;
};

static void child_sleep(void *arg)
{
	struct pipes *p = arg;
	struct timespec req = {0, 300 * 1000 * 1000}, t0, t1;
	struct sleep_result r;

	child_ends(p);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	errno = EXDEV;
	r.rc = clock_nanosleep(CLOCK_MONOTONIC, 0, &req, NULL);
	r.err = errno;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	r.ns = (uint64_t)(t1.tv_sec - t0.tv_sec) * NSEC_PER_SEC + (uint64_t)t1.tv_nsec -
	       (uint64_t)t0.tv_nsec;
	if (write(p->from_child[1], &r, sizeof(r)) != sizeof(r))
		_exit(4);
	_exit(0);
}

static void child_epoll(void *arg)
{
	struct epoll_event ev = {.events = EPOLLIN}, out;
	struct pipes *p = arg;
	char buf[16];
	int epfd, n, e;

	child_ends(p);
	epfd = epoll_create1(EPOLL_CLOEXEC);
	if (epfd < 0 || epoll_ctl(epfd, EPOLL_CTL_ADD, p->to_child[0], &ev))
		_exit(5);
	errno = EXDEV;
	n = epoll_wait(epfd, &out, 1, -1);
	e = errno;
	if (n < 0)
		_exit(100 + e);
	if (n != 1)
		_exit(2);
	if (e != EXDEV)
		_exit(3);
	if (read(p->to_child[0], buf, sizeof(buf)) != 5 || write(p->from_child[1], buf, 5) != 5)
		_exit(4);
	_exit(0);
}

static volatile sig_atomic_t usr1_count;

static void on_usr1(int sig)
{
	/* A handler that clobbers errno, as real ones do. */
	errno = ENOTTY;
	usr1_count++;
}

/* Like child_read_echo, under a 200 us SIGUSR1 timer (SA_RESTART). */
static void child_read_signals(void *arg)
{
	struct sigevent sev = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGUSR1};
	struct itimerspec its = {{0, 200 * 1000}, {0, 200 * 1000}};
	struct sigaction sa = {.sa_handler = on_usr1, .sa_flags = SA_RESTART};
	struct pipes *p = arg;
	char buf[16];
	int count;
	timer_t t;
	ssize_t n;

	child_ends(p);
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL) || timer_create(CLOCK_MONOTONIC, &sev, &t) ||
	    timer_settime(t, 0, &its, NULL))
		_exit(5);
	n = read(p->to_child[0], buf, sizeof(buf));
	if (n < 0)
		_exit(100 + errno);
	timer_delete(t);
	count = (int)usr1_count;
	if (n != 5 || memcmp(buf, "hello", 5))
		_exit(2);
	if (write(p->from_child[1], buf, 5) != 5 ||
	    write(p->from_child[1], &count, sizeof(count)) != sizeof(count))
		_exit(4);
	_exit(0);
}

static void *reader_thread(void *arg)
{
	child_read_echo(arg);
	return NULL;
}

/* The main thread leaves (a zombie leader); another thread blocks in read. */
static void child_main_exits(void *arg)
{
	pthread_t t;

	if (pthread_create(&t, NULL, reader_thread, arg))
		_exit(5);
	pthread_exit(NULL);
}

/* Parent of a vfork child that sleeps 3 s: an uninterruptible wait. */
static void child_vfork(void *arg)
{
	struct timespec ts = {3, 0};
	pid_t c = vfork();

	if (c == 0) {
		/* Only raw system calls here: the stack is the parent's. */
		syscall(SYS_nanosleep, &ts, NULL);
		_exit(0);
	}
	if (c < 0 || waitpid(c, NULL, 0) != c)
		_exit(5);
	child_read_echo(arg);
}

enum sig_mode {
	SIG_HANDLED,	     /* a SIGSEGV handler (a crash reporter), SIGUSR2 blocked */
	SIG_BLOCKED_DFL,     /* SIGSEGV blocked, default action */
	SIG_BLOCKED_HANDLED, /* both: our trap would reset the handler */
};

struct sig_ctx {
	struct pipes p;
	enum sig_mode mode;
};

static void on_segv(int sig)
{
	_exit(66);
}

/* Like child_read_echo; afterwards its signal mask and SIGSEGV action must be intact. */
static void child_signal_state(void *arg)
{
	struct sig_ctx *c = arg;
	struct sigaction sa = {.sa_handler = on_segv}, cur;
	sigset_t set, now;
	char buf[16];

	child_ends(&c->p);
	if (c->mode == SIG_BLOCKED_DFL)
		sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	sigemptyset(&set);
	sigaddset(&set, c->mode == SIG_HANDLED ? SIGUSR2 : SIGSEGV);
	if (sigaction(SIGSEGV, &sa, NULL) || sigprocmask(SIG_SETMASK, &set, NULL))
		_exit(5);
	if (read(c->p.to_child[0], buf, sizeof(buf)) != 5)
		_exit(2);
	if (sigprocmask(SIG_BLOCK, NULL, &now) || sigaction(SIGSEGV, NULL, &cur))
		_exit(5);
	if (sigismember(&now, SIGSEGV) != sigismember(&set, SIGSEGV) ||
	    sigismember(&now, SIGUSR2) != sigismember(&set, SIGUSR2))
		_exit(6);
	if (cur.sa_handler != sa.sa_handler)
		_exit(7);
	if (write(c->p.from_child[1], buf, 5) != 5)
		_exit(4);
	_exit(0);
}

/* Register- and FP-heavy state a stop must not disturb. */
struct spin {
	double a, b, c, d;
	long double x;
	uint64_t h, k, m;
	uint64_t rounds;
};

static void spin_init(struct spin *s)
{
	memset(s, 0, sizeof(*s));
	s->a = 1.25;
	s->b = -0.5;
	s->c = 3.0;
	s->d = 0.125;
	s->x = 1.0L;
	s->h = 0xcbf29ce484222325ULL;
	s->k = 0x9e3779b97f4a7c15ULL;
	s->m = 7;
}

static __attribute__((noinline)) void spin_round(struct spin *s)
{
	double a = s->a, b = s->b, c = s->c, d = s->d;
	uint64_t h = s->h, k = s->k, m = s->m;
	long double x = s->x;
	int i;

	for (i = 0; i < 1000; i++) {
		a = a * 1.0000001 + b * 1e-9;
		b = b * 0.9999999 + c * 1e-9;
		c = c + d * 1e-7;
		d = d - a * 1e-7;
		x = x * 1.000000001L + (long double)a * 1e-12L;
		h ^= (uint64_t)(int64_t)(a * 1e6) + k;
		h *= 0x100000001b3ULL;
		k = (k << 7 | k >> 57) + m;
		m += h >> 3;
	}
	s->a = a;
	s->b = b;
	s->c = c;
	s->d = d;
	s->x = x;
	s->h = h;
	s->k = k;
	s->m = m;
	s->rounds++;
}

struct spin_ctx {
	struct pipes p;
	volatile int *stop;
};

static void child_spin(void *arg)
{
	struct spin_ctx *c = arg;
	struct spin s;

	child_ends(&c->p);
	spin_init(&s);
	if (write(c->p.from_child[1], "s", 1) != 1)
		_exit(4);
	while (!*c->stop)
		spin_round(&s);
	if (write(c->p.from_child[1], &s, sizeof(s)) != sizeof(s))
		_exit(4);
	_exit(0);
}

/* ---- tests: the target keeps running as if nothing happened ---- */

static void test_inject_blocked_read(void **state)
{
	struct pipes p;
	pid_t pid;

	need_root();
	open_pipes(&p);
	pid = fork_child(child_read_echo, &p);
	parent_ends(&p);
	assert_true(wait_in_syscall(pid, SYS_read, -1));
	inject_ok(pid, probe);
	assert_int_equal(marker_count(pid), 1);
	assert_int_equal(count_memfds(pid), 0);
	/* Still (again) blocked in the same read: it was restarted, not failed. */
	assert_true(wait_in_syscall(pid, SYS_read, -1));
	hello_roundtrip(pid, &p);
}

static void test_inject_nanosleep(void **state)
{
	struct sleep_result r;
	struct pipes p;
	pid_t pid;

	need_root();
	open_pipes(&p);
	pid = fork_child(child_sleep, &p);
	parent_ends(&p);
	assert_true(wait_in_syscall(pid, SYS_clock_nanosleep, SYS_nanosleep));
	inject_ok(pid, probe);
	assert_int_equal(marker_count(pid), 1);
	/* The injection happened mid-sleep: no result yet. */
	assert_false(readable_now(p.from_child[0]));
	assert_int_equal(read_timeout(p.from_child[0], &r, sizeof(r)), sizeof(r));
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.err, EXDEV);
	if (r.ns < 300 * NSEC_PER_MSEC)
		fail_msg("slept %llu ns, less than the 300 ms asked", (unsigned long long)r.ns);
	assert_exit_ok(pid);
	close_parent_ends(&p);
}

static void test_inject_epoll_no_eintr(void **state)
{
	struct pipes p;
	pid_t pid;

	need_root();
	open_pipes(&p);
	pid = fork_child(child_epoll, &p);
	parent_ends(&p);
	assert_true(wait_in_syscall(pid, SYS_epoll_wait, SYS_epoll_pwait));
	inject_ok(pid, probe);
	assert_int_equal(marker_count(pid), 1);
	/* epoll_wait fails with EINTR after a stop; the injector re-issues it. */
	assert_true(wait_in_syscall(pid, SYS_epoll_wait, SYS_epoll_pwait));
	hello_roundtrip(pid, &p);
}

static void test_inject_signals_during_call(void **state)
{
	struct pipes p;
	char buf[8] = {0};
	int count = 0;
	pid_t pid;

	need_root();
	open_pipes(&p);
	pid = fork_child(child_read_signals, &p);
	parent_ends(&p);
	assert_true(wait_in_syscall(pid, SYS_read, -1));
	inject_ok(pid, probe);
	assert_int_equal(marker_count(pid), 1);
	assert_int_equal(write(p.to_child[1], "hello", 5), 5);
	assert_int_equal(read_timeout(p.from_child[0], buf, 5), 5);
	assert_memory_equal(buf, "hello", 5);
	assert_int_equal(read_timeout(p.from_child[0], &count, sizeof(count)), sizeof(count));
	assert_true(count > 0);
	assert_exit_ok(pid);
	close_parent_ends(&p);
}

static void test_inject_spin_registers(void **state)
{
	char copies[3][64];
	struct spin got, want;
	struct spin_ctx c;
	char start;
	pid_t pid;
	int i;

	need_root();
	for (i = 0; i < 3; i++)
		probe_copy(copies[i], sizeof(copies[i]), i, 0);
	c.stop = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(c.stop != MAP_FAILED);
	*c.stop = 0;
	open_pipes(&c.p);
	pid = fork_child(child_spin, &c);
	parent_ends(&c.p);
	assert_int_equal(read_timeout(c.p.from_child[0], &start, 1), 1);
	/* Three distinct copies: three full injections into the running loop. */
	for (i = 0; i < 3; i++) {
		usleep(20 * 1000);
		inject_ok(pid, copies[i]);
	}
	assert_int_equal(marker_count(pid), 3);
	usleep(20 * 1000);
	*c.stop = 1;
	assert_int_equal(read_timeout(c.p.from_child[0], &got, sizeof(got)), sizeof(got));
	assert_exit_ok(pid);
	close_parent_ends(&c.p);
	munmap((void *)c.stop, 4096);
	for (i = 0; i < 3; i++)
		unlink(copies[i]);

	/* The same rounds, untraced, here. */
	assert_true(got.rounds > 0);
	spin_init(&want);
	while (want.rounds < got.rounds)
		spin_round(&want);
	assert_memory_equal(&got.a, &want.a, 4 * sizeof(double));
	assert_true(got.x == want.x);
	assert_true(got.h == want.h);
	assert_true(got.k == want.k);
	assert_true(got.m == want.m);
}

static void test_inject_twice_loads_once(void **state)
{
	struct pipes p;
	pid_t pid;

	need_root();
	open_pipes(&p);
	pid = fork_child(child_read_echo, &p);
	parent_ends(&p);
	assert_true(wait_in_syscall(pid, SYS_read, -1));
	inject_ok(pid, probe);
	inject_ok(pid, probe);
	assert_int_equal(marker_count(pid), 1);
	hello_roundtrip(pid, &p);
}

static void test_inject_main_thread_exited(void **state)
{
	char path[64], buf[256];
	bool ready = false;
	struct pipes p;
	pid_t pid;
	int i;

	need_root();
	open_pipes(&p);
	pid = fork_child(child_main_exits, &p);
	parent_ends(&p);
	/* The zombie leader, and the reader (pid + 1 unless pids wrapped) in read. */
	for (i = 0; i < 2000 && !ready; i++) {
		snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)pid, (int)pid + 1);
		ready = task_state(pid, pid) == 'Z' && gt_read_file(path, buf, sizeof(buf)) > 0 &&
			strtol(buf, NULL, 10) == SYS_read;
		usleep(1000);
	}
	if (!ready) {
		kill(pid, SIGKILL);
		reap(pid);
		skip();
	}
	inject_ok(pid, probe);
	assert_int_equal(marker_count(pid), 1);
	hello_roundtrip(pid, &p);
}

static void test_inject_keeps_signal_state(void **state)
{
	static const enum sig_mode modes[] = {SIG_HANDLED, SIG_BLOCKED_DFL};
	struct sig_ctx c;
	size_t i;
	pid_t pid;

	need_root();
	for (i = 0; i < GT_ARRAY_SIZE(modes); i++) {
		c.mode = modes[i];
		open_pipes(&c.p);
		pid = fork_child(child_signal_state, &c);
		parent_ends(&c.p);
		assert_true(wait_in_syscall(pid, SYS_read, -1));
		inject_ok(pid, probe);
		assert_int_equal(marker_count(pid), 1);
		hello_roundtrip(pid, &c.p);
	}
}

/* ---- tests: errors ---- */

static void test_inject_uninterruptible_times_out(void **state)
{
	char err[ERR_LEN];
	struct pipes p;
	uint64_t t0, took;
	pid_t pid;
	int i, ret;

	need_root();
	open_pipes(&p);
	pid = fork_child(child_vfork, &p);
	parent_ends(&p);
	for (i = 0; i < 1000 && task_state(pid, pid) != 'D'; i++)
		usleep(1000);
	assert_int_equal(task_state(pid, pid), 'D');
	t0 = gt_now_mono_ns();
	ret = inject_library(pid, probe, err, sizeof(err));
	took = gt_now_mono_ns() - t0;
	assert_int_equal(ret, -ETIMEDOUT);
	assert_non_null(strstr(err, "did not stop within 2 s"));
	assert_true(took < 3 * NSEC_PER_SEC);
	/* Left untouched: no tracer, and once vfork returns it runs on normally. */
	assert_int_equal(status_value(pid, "TracerPid:"), 0);
	assert_true(wait_in_syscall(pid, SYS_read, -1));
	assert_int_equal(marker_count(pid), 0);
	hello_roundtrip(pid, &p);
}

/* The child of pid, found through /proc (no /proc/PID/task/TID/children here). */
static pid_t child_of(pid_t pid)
{
	struct dirent *de;
	pid_t found = 0;
	DIR *d = opendir("/proc");

	while (d && !found && (de = readdir(d))) {
		pid_t cand = (pid_t)strtol(de->d_name, NULL, 10);

		if (cand > 0 && status_value(cand, "PPid:") == pid)
			found = cand;
	}
	if (d)
		closedir(d);
	return found;
}

static void test_inject_refuses_vfork_child(void **state)
{
	char err[ERR_LEN];
	struct pipes p;
	pid_t pid, vchild = 0;
	int i;

	need_root();
	open_pipes(&p);
	pid = fork_child(child_vfork, &p);
	parent_ends(&p);
	for (i = 0; i < 1000 && (task_state(pid, pid) != 'D' || !vchild); i++) {
		vchild = child_of(pid);
		usleep(1000);
	}
	assert_true(vchild > 0);
	assert_int_equal(inject_library(vchild, probe, err, sizeof(err)), -EBUSY);
	assert_non_null(strstr(err, "vfork"));
	/* Its parent goes on as soon as it is gone. */
	kill(vchild, SIGKILL);
	assert_true(wait_in_syscall(pid, SYS_read, -1));
	hello_roundtrip(pid, &p);
}

static void test_inject_refuses_blocked_segv_handler(void **state)
{
	char err[ERR_LEN];
	struct sig_ctx c = {.mode = SIG_BLOCKED_HANDLED};
	pid_t pid;

	need_root();
	open_pipes(&c.p);
	pid = fork_child(child_signal_state, &c);
	parent_ends(&c.p);
	assert_true(wait_in_syscall(pid, SYS_read, -1));
	assert_int_equal(inject_library(pid, probe, err, sizeof(err)), -EAGAIN);
	assert_non_null(strstr(err, "blocks SIGSEGV"));
	assert_int_equal(marker_count(pid), 0);
	hello_roundtrip(pid, &c.p);
}

static void test_inject_no_such_process(void **state)
{
	char err[ERR_LEN], want[ERR_LEN];
	pid_t pid;
	int st;

	need_root();
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_int_equal(inject_library(pid, probe, err, sizeof(err)), -ESRCH);
	snprintf(want, sizeof(want),
		 "no process with pid %d: check the pid (the process may have exited)", (int)pid);
	assert_string_equal(err, want);
}

static void test_inject_self(void **state)
{
	char err[ERR_LEN];

	assert_int_equal(inject_library(getpid(), probe, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "gaptrace itself"));
}

static void test_inject_static_target(void **state)
{
	static const char src[] = "#include <unistd.h>\n"
				  "int main(void) { char c; return read(0, &c, 1) != 1; }\n";
	char dir[] = "/tmp/gt-inject-static-XXXXXX", bin[PATH_MAX], err[ERR_LEN];
	int fds[2], ret;
	pid_t pid;

	need_root();
	assert_non_null(mkdtemp(dir));
	if (!build_c(dir, "static", src, "-static -O1", bin, sizeof(bin))) {
		unlink(bin);
		rmdir(dir);
		print_message("no static libc to build a static target; skipped\n");
		skip();
	}
	assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		alarm(CHILD_ALARM_S);
		dup2(fds[0], 0);
		execl(bin, bin, (char *)NULL);
		_exit(127);
	}
	close(fds[0]);
	assert_true(wait_in_syscall(pid, SYS_read, -1));
	ret = inject_library(pid, probe, err, sizeof(err));
	assert_int_equal(ret, -ENOEXEC);
	assert_non_null(strstr(err, "statically linked"));
	/* Untouched: it still reads its byte and exits 0. */
	assert_int_equal(write(fds[1], "x", 1), 1);
	assert_exit_ok(pid);
	close(fds[1]);
	unlink(bin);
	rmdir(dir);
}

static void test_inject_already_traced(void **state)
{
	char err[ERR_LEN], want[64];
	struct pipes p;
	pid_t pid;

	need_root();
	open_pipes(&p);
	pid = fork_child(child_read_echo, &p);
	parent_ends(&p);
	assert_true(wait_in_syscall(pid, SYS_read, -1));
	/* We are the other tracer; SEIZE alone never stops the child. */
	assert_int_equal(ptrace(PTRACE_SEIZE, pid, NULL, NULL), 0);
	assert_int_equal(inject_library(pid, probe, err, sizeof(err)), -EPERM);
	snprintf(want, sizeof(want), "already traced by process %d", (int)getpid());
	if (!strstr(err, want))
		fail_msg("error \"%s\" does not name the tracer (%s)", err, want);
	assert_int_equal(marker_count(pid), 0);
	hello_roundtrip(pid, &p);
}

static void test_inject_dlopen_failure(void **state)
{
	static const char src[] = "void gaptrace_no_such_function(void);\n"
				  "__attribute__((constructor)) static void init(void)\n"
				  "{ gaptrace_no_such_function(); }\n";
	char dir[] = "/tmp/gt-inject-undef-XXXXXX", lib[PATH_MAX], err[ERR_LEN];
	struct pipes p;
	pid_t pid;

	need_root();
	assert_non_null(mkdtemp(dir));
	/* RTLD_NOW fails on the undefined symbol: dlerror has a precise text. */
	if (!build_c(dir, "libundef.so", src, "-shared -fPIC", lib, sizeof(lib))) {
		rmdir(dir);
		print_message("no compiler to build a broken library; skipped\n");
		skip();
	}
	open_pipes(&p);
	pid = fork_child(child_read_echo, &p);
	parent_ends(&p);
	assert_true(wait_in_syscall(pid, SYS_read, -1));
	assert_int_equal(inject_library(pid, lib, err, sizeof(err)), -ELIBBAD);
	if (!strstr(err, "dlopen of") ||
	    !strstr(err, "undefined symbol: gaptrace_no_such_function"))
		fail_msg("error \"%s\" lacks dlerror's text", err);
	/* The memfd was closed in the target despite the failure. */
	assert_int_equal(count_memfds(pid), 0);
	assert_true(wait_in_syscall(pid, SYS_read, -1));
	hello_roundtrip(pid, &p);
	unlink(lib);
	rmdir(dir);
}

static void test_inject_crash_in_dlopen(void **state)
{
	char err[ERR_LEN], bad[64];
	struct pipes p;
	pid_t pid;
	int ret;

	need_root();
	/* A valid ELF header whose segments lie past the end of the file: glibc maps them and faults. */
	probe_copy(bad, sizeof(bad), 0, 2048);
	open_pipes(&p);
	pid = fork_child(child_read_echo, &p);
	parent_ends(&p);
	assert_true(wait_in_syscall(pid, SYS_read, -1));
	ret = inject_library(pid, bad, err, sizeof(err));
	/* Some glibc versions check the file size first and fail cleanly. */
	if (ret == -EFAULT)
		assert_non_null(strstr(err, "crashed in process"));
	else
		assert_int_equal(ret, -ELIBBAD);
	assert_int_equal(marker_count(pid), 0);
	/* The fault was swallowed: the program carries on with its read. */
	assert_true(wait_in_syscall(pid, SYS_read, -1));
	hello_roundtrip(pid, &p);
	unlink(bad);
}

static void test_inject_bad_library(void **state)
{
	char err[ERR_LEN], text[64];
	struct pipes p;
	pid_t pid;
	int fd;

	need_root();
	snprintf(text, sizeof(text), "/tmp/gt-inject-text-XXXXXX");
	fd = mkstemp(text);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "not an ELF file\n", 16), 16);
	close(fd);
	open_pipes(&p);
	pid = fork_child(child_read_echo, &p);
	parent_ends(&p);
	assert_int_equal(inject_library(pid, text, err, sizeof(err)), -ENOEXEC);
	assert_non_null(strstr(err, "not an x86-64 shared library"));
	assert_int_equal(inject_library(pid, "/nonexistent/lib.so", err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "cannot open the library /nonexistent/lib.so"));
	hello_roundtrip(pid, &p);
	unlink(text);
}

/* ---- syms_find_symbol ---- */

static void test_syms_find_symbol_libc(void **state)
{
	static const char *const names[] = {"getpid", "dlopen", "memfd_create", "__errno_location",
					    "close"};
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	uint64_t addr;
	size_t i;

	assert_non_null(libc);
	for (i = 0; i < GT_ARRAY_SIZE(names); i++) {
		void *want = dlsym(libc, names[i]);

		assert_non_null(want);
		assert_int_equal(syms_find_symbol((uint32_t)getpid(), "libc.so", names[i], &addr),
				 0);
		if (addr != (uint64_t)(uintptr_t)want)
			fail_msg("%s: %#llx, dlsym says %p", names[i], (unsigned long long)addr,
				 want);
	}
	dlclose(libc);
}

static void test_syms_find_symbol_errors(void **state)
{
	uint64_t addr = 0;
	pid_t pid;
	int st;

	assert_int_equal(
	    syms_find_symbol((uint32_t)getpid(), "libc.so", "no_such_symbol_xyz", &addr), -ENOENT);
	assert_int_equal(syms_find_symbol((uint32_t)getpid(), "libnosuchlib", "close", &addr),
			 -ENXIO);
	/* An IFUNC's address is its resolver's: refused. */
	assert_int_equal(syms_find_symbol((uint32_t)getpid(), "libc.so", "memcpy", &addr),
			 -EOPNOTSUPP);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_int_equal(syms_find_symbol((uint32_t)pid, "libc.so", "close", &addr), -ESRCH);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_syms_find_symbol_libc),
	    cmocka_unit_test(test_syms_find_symbol_errors),
	    cmocka_unit_test(test_inject_blocked_read),
	    cmocka_unit_test(test_inject_nanosleep),
	    cmocka_unit_test(test_inject_epoll_no_eintr),
	    cmocka_unit_test(test_inject_signals_during_call),
	    cmocka_unit_test(test_inject_spin_registers),
	    cmocka_unit_test(test_inject_twice_loads_once),
	    cmocka_unit_test(test_inject_main_thread_exited),
	    cmocka_unit_test(test_inject_keeps_signal_state),
	    cmocka_unit_test(test_inject_refuses_blocked_segv_handler),
	    cmocka_unit_test(test_inject_no_such_process),
	    cmocka_unit_test(test_inject_self),
	    cmocka_unit_test(test_inject_static_target),
	    cmocka_unit_test(test_inject_already_traced),
	    cmocka_unit_test(test_inject_uninterruptible_times_out),
	    cmocka_unit_test(test_inject_refuses_vfork_child),
	    cmocka_unit_test(test_inject_dlopen_failure),
	    cmocka_unit_test(test_inject_crash_in_dlopen),
	    cmocka_unit_test(test_inject_bad_library),
	};

	return cmocka_run_group_tests(tests, group_setup, NULL);
}
