// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * leader_exit: the main thread calls pthread_exit, so the thread-group leader
 * stays a zombie while a worker keeps running and calls malloc_trim every
 * 10 ms for --seconds (default 3).  perf_event_open refuses the exiting leader
 * (ESRCH): `record -p` must attach its uprobes through the live worker.
 */
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double seconds = 3;

static void *worker(void *arg)
{
	struct timespec t0, t;

	(void)arg;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		free(malloc(1 << 20));
		malloc_trim(0);
		usleep(10000);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
	exit(0);
}

int main(int argc, char **argv)
{
	pthread_t th;

	if (argc > 1)
		seconds = atof(argv[1]);
	if (pthread_create(&th, NULL, worker, NULL))
		return 1;
	printf("%d\n", getpid());
	fflush(stdout);
	pthread_exit(NULL);
}
