// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * follow_sim: a program that grows new processes and code while traced, for
 * the following tests (issue #13 item 6): probes in a forked child, in a
 * program a child execs, in the target after its own exec and in a library it
 * dlopens; and a parent that waits on a pipe for a child's CPU work.
 *
 *   follow_sim fork N DELAY_MS          a child fires N ops DELAY_MS after fork
 *   follow_sim orphan N DELAY_MS        the same, but the parent exits at once:
 *                                       the child fires them as an orphan
 *   follow_sim exec N DELAY_MS          a child execs "follow_sim fire ..."
 *   follow_sim selfexec N DELAY_MS      the process itself execs "fire"
 *   follow_sim fire N DELAY_MS          fires them (the exec'd program)
 *   follow_sim dlopen LIB N DELAY_MS    dlopens LIB after 333 ms; its code fires
 *   follow_sim pipe SECONDS WORK_MS     a child, forked first, spends WORK_MS
 *                                       of its CPU time per request; the
 *                                       parent polls for the answer
 *
 * Firing: until DELAY_MS after its start, an "early" op every millisecond
 * (device 0, op FOLLOW_EARLY + k: the first one seen tells how long attaching
 * took), then N ops on device 1 with op ids pid << 32 | i, every 0.2 ms.
 * Every mode prints "event NAME PID NS" lines (CLOCK_MONOTONIC) on stdout.
 */
#include <dlfcn.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "follow_sim.h"
#include "gaptrace-usdt.h"

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

static void event(const char *name)
{
	printf("event %s %d %llu\n", name, getpid(), (unsigned long long)now_ns());
	fflush(stdout);
}

static void fire(int n, int delay_ms)
{
	uint64_t t0 = now_ns(), k = 0;

	event("fire");
	while (now_ns() - t0 < (uint64_t)delay_ms * 1000000ULL) {
		uint64_t t = now_ns();

		GAPTRACE_GPU_OP(0, 0, FOLLOW_EARLY + k++, t, t + 1000);
		usleep(1000);
	}
	for (int i = 0; i < n; i++) {
		uint64_t t = now_ns();

		GAPTRACE_GPU_OP(1, 0, ((uint64_t)getpid() << 32) | (uint64_t)i, t, t + 1000);
		usleep(200);
	}
}

static void exec_fire(const char *self, const char *n, const char *delay)
{
	execl(self, self, "fire", n, delay, (char *)NULL);
	perror("follow_sim: exec");
	_exit(1);
}

static int wait_child(pid_t c)
{
	int st;

	return waitpid(c, &st, 0) == c && WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

/* ms of this thread's CPU time: the truth, however long a busy machine makes it. */
static void spin_ms(int ms)
{
	struct timespec t;
	uint64_t end;
	volatile uint64_t x = 0;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	end = (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec + (uint64_t)ms * 1000000ULL;
	do {
		for (int i = 0; i < 1000; i++)
			x++;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	} while ((uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec < end);
}

/*
 * The parent "launches" a 3 ms GPU op (sleeping while it runs), then asks the
 * child for WORK_MS of CPU and polls for the answer: the gap between two ops
 * is the child's CPU time.
 */
static int pipe_mode(int seconds, int work_ms)
{
	int req[2], rep[2];
	uint64_t end, op = 0;
	pid_t c;
	char b = 0;

	if (pipe(req) || pipe(rep))
		return 1;
	c = fork();
	if (c == 0) {
		close(req[1]);
		close(rep[0]);
		while (read(req[0], &b, 1) == 1) {
			spin_ms(work_ms);
			if (write(rep[1], &b, 1) != 1)
				break;
		}
		_exit(0);
	}
	close(req[0]);
	close(rep[1]);
	printf("child %d\n", c);
	event("start");
	end = now_ns() + (uint64_t)seconds * 1000000000ULL;
	while (now_ns() < end) {
		struct pollfd p = {.fd = rep[0], .events = POLLIN};
		uint64_t s;

		GAPTRACE_GPU_LAUNCH(0, 0, op);
		s = now_ns();
		usleep(3000);
		GAPTRACE_GPU_OP(0, 0, op, s, now_ns());
		op++;
		if (write(req[1], &b, 1) != 1 || poll(&p, 1, -1) != 1 || read(rep[0], &b, 1) != 1)
			break;
	}
	close(req[1]);
	return wait_child(c);
}

static int dlopen_mode(const char *lib, int n, int delay_ms)
{
	void (*lib_fire)(int, int);
	void *h;
	uint64_t t;

	/* Mid-run, not at start-up: no start-up rescan may find it by chance. */
	usleep(333000);
	h = dlopen(lib, RTLD_NOW);
	t = now_ns();
	/* In the executable, probed from the start: when the library arrived. */
	GAPTRACE_GPU_OP(2, 0, FOLLOW_DLOPEN_MARK, t, t);
	if (!h) {
		fprintf(stderr, "follow_sim: %s\n", dlerror());
		return 1;
	}
	event("dlopen");
	lib_fire = (void (*)(int, int))dlsym(h, "follow_lib_fire");
	if (!lib_fire)
		return 1;
	lib_fire(n, delay_ms);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	pid_t c;

	if (!strcmp(mode, "dlopen") && argc == 5)
		return dlopen_mode(argv[2], atoi(argv[3]), atoi(argv[4]));
	if (argc != 4) {
		fprintf(stderr, "usage: follow_sim fork|orphan|exec|selfexec|fire N DELAY_MS\n"
				"       follow_sim dlopen LIB N DELAY_MS\n"
				"       follow_sim pipe SECONDS WORK_MS\n");
		return 2;
	}
	if (!strcmp(mode, "pipe"))
		return pipe_mode(atoi(argv[2]), atoi(argv[3]));
	if (!strcmp(mode, "fire")) {
		fire(atoi(argv[2]), atoi(argv[3]));
		return 0;
	}
	if (!strcmp(mode, "selfexec")) {
		event("exec");
		exec_fire("/proc/self/exe", argv[2], argv[3]);
	}
	/* Give the recorder its start before the child appears. */
	usleep(100000);
	event("fork");
	c = fork();
	if (c == 0) {
		if (!strcmp(mode, "exec"))
			exec_fire("/proc/self/exe", argv[2], argv[3]);
		fire(atoi(argv[2]), atoi(argv[3]));
		_exit(0);
	}
	if (!strcmp(mode, "orphan"))
		return c > 0 ? 0 : 1;
	return wait_child(c);
}
