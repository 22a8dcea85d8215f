// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * follow_lib.c: the library follow_sim dlopens; its own USDT probes (and
 * semaphores) fire the ops, so they exist only once the library is mapped.
 */
#include <stdint.h>
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

void follow_lib_fire(int n, int delay_ms);

void follow_lib_fire(int n, int delay_ms)
{
	uint64_t t0 = now_ns(), k = 0;

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
