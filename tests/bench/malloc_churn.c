// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * malloc_churn: a malloc-heavy target for tools/bench: one thread that
 * mallocs and frees small blocks in a scattered order (glibc's _int_free,
 * unlink_chunk, malloc_consolidate: libc code without frame pointers, where
 * gaptrace's CPU samples take a stack snapshot by default) and counts its
 * calls per second of its own CPU time (CLOCK_THREAD_CPUTIME_ID, which the
 * sampling interrupts are charged to, so other load on the machine does
 * not bias a traced/untraced ratio).  After --warmup seconds it measures for
 * --seconds and prints calls_per_cpu_s= and cpu_s=.  --depth N runs each
 * round N frames (of ~100 bytes, frame pointers) below main, deeper than a
 * default 1 KiB stack snapshot reaches (run-all's stitch check).
 * Usage: malloc_churn [--seconds S] [--warmup S] [--depth N]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SLOTS 4096

static void *slots[SLOTS];

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* One round: SLOTS mallocs of 16 B to 1 KiB, SLOTS frees, one consolidating request. */
static void round_once(unsigned int round)
{
	void *big;

	for (unsigned int i = 0; i < SLOTS; i++)
		slots[i] = malloc(16 + ((i * 40503u + round) & 1008));
	for (unsigned int i = 0; i < SLOTS; i++)
		free(slots[(i * 1021u) & (SLOTS - 1)]);
	big = malloc(200000);
	free(big);
}

/* round_once n frames down; the pad used after the call keeps every frame (no tail call). */
__attribute__((noinline)) static void descend(unsigned int n, unsigned int round)
{
	volatile char pad[64];

	pad[0] = (char)n;
	if (n)
		descend(n - 1, round);
	else
		round_once(round);
	pad[1] = pad[0];
}

int main(int argc, char **argv)
{
	double seconds = 2.0, warmup = 0.5;
	unsigned int depth = 0;
	uint64_t t0, c0, c1, rounds = 0;
	unsigned int round = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seconds") && i + 1 < argc) {
			seconds = atof(argv[++i]);
		} else if (!strcmp(argv[i], "--warmup") && i + 1 < argc) {
			warmup = atof(argv[++i]);
		} else if (!strcmp(argv[i], "--depth") && i + 1 < argc) {
			depth = (unsigned int)atoi(argv[++i]);
		} else {
			fprintf(stderr,
				"usage: malloc_churn [--seconds S] [--warmup S] [--depth N]\n");
			return 2;
		}
	}
	/* Warm-up: the heap reaches its steady shape, a tracer has read our maps. */
	t0 = clock_ns(CLOCK_MONOTONIC);
	while (clock_ns(CLOCK_MONOTONIC) - t0 < (uint64_t)(warmup * 1e9))
		descend(depth, round++);
	c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	do {
		descend(depth, round++);
		rounds++;
		c1 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	} while (c1 - c0 < (uint64_t)(seconds * 1e9));
	printf("calls_per_cpu_s=%.0f\ncpu_s=%.3f\n",
	       (double)rounds * (2 * SLOTS + 2) / ((double)(c1 - c0) / 1e9),
	       (double)(c1 - c0) / 1e9);
	return 0;
}
