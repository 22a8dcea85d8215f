// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cfi_stacks.c: a thread that blocks at known depths, built twice, with and
 * without frame pointers (cfi_stacks, cfi_stacks_nofp), so that the two
 * recordings' stacks can be compared (tests/integration/cfi_stacks_check.py).
 * The worker runs worker_main -> level1 -> level2 -> level3 -> level4, which
 * blocks alternately in a pipe read and in a condition variable wait; the
 * main thread releases each.  Prints "worker TID" first.
 * Usage: cfi_stacks [ITERATIONS] [PERIOD_US]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static int pipefd[2];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int turn, done;

/* noipa: each function keeps its own frame and name; the locals give each frame a size. */
__attribute__((noipa)) static int level4(int i)
{
	volatile char pad[40];
	char c;

	pad[1] = (char)i;
	if (i & 1)
		return (int)read(pipefd[0], &c, 1) + pad[1];
	pthread_mutex_lock(&mu);
	while (turn == i / 2 && !done)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	return pad[1];
}

__attribute__((noipa)) static int level3(int i)
{
	volatile long spill[5];

	spill[2] = i;
	return level4((int)spill[2]) + 1;
}

__attribute__((noipa)) static int level2(int i)
{
	volatile int area[33];

	area[9] = i;
	return level3(area[9]) * 2;
}

__attribute__((noipa)) static int level1(int i)
{
	volatile long x[3];

	x[0] = i;
	return level2((int)x[0]) - 1;
}

__attribute__((noipa)) static void *worker_main(void *arg)
{
	long n = (long)arg, sum = 0;

	printf("worker %ld\n", (long)syscall(SYS_gettid));
	fflush(stdout);
	for (long i = 0; i < 2 * n; i++)
		sum += level1((int)i);
	return (void *)sum;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200;
	long period_us = argc > 2 ? atol(argv[2]) : 2000;
	pthread_t t;

	if (pipe(pipefd) || pthread_create(&t, NULL, worker_main, (void *)n))
		return 1;
	for (long i = 0; i < n; i++) {
		usleep((useconds_t)period_us);
		pthread_mutex_lock(&mu);
		turn++;
		pthread_cond_signal(&cv);
		pthread_mutex_unlock(&mu);
		usleep((useconds_t)period_us);
		if (write(pipefd[1], "x", 1) != 1)
			return 1;
	}
	pthread_mutex_lock(&mu);
	done = 1;
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&mu);
	pthread_join(t, NULL);
	return 0;
}
