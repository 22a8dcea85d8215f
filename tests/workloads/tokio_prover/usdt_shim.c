// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * usdt_shim.c: gaptrace's USDT probes (include/gaptrace/gaptrace-usdt.h) and a few libc
 * helpers for tokio_prover, which calls them through extern "C".
 *
 * Rust has no <sys/sdt.h>; the probe sites live here, one per function, so
 * the notes and semaphores are this object's and gaptrace finds them in the
 * executable it is linked into.
 */
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <pthread.h>
#include <unistd.h>
#include <sys/prctl.h>

#include "gaptrace-usdt.h"

void gt_unit_begin(uint64_t unit)
{
	GAPTRACE_UNIT_BEGIN(unit);
}

void gt_unit_end(uint64_t unit)
{
	GAPTRACE_UNIT_END(unit);
}

void gt_gpu_launch(uint32_t device, uint32_t stream, uint64_t op)
{
	GAPTRACE_GPU_LAUNCH(device, stream, op);
}

void gt_gpu_op(uint32_t device, uint32_t stream, uint64_t op, uint64_t start_ns, uint64_t end_ns)
{
	GAPTRACE_GPU_OP(device, stream, op, start_ns, end_ns);
}

void gt_gpu_name(uint32_t id, const char *name)
{
	GAPTRACE_GPU_NAME(id, name);
}

uint64_t gt_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The simulated device ends each kernel at an exact CLOCK_MONOTONIC time. */
void gt_sleep_until(uint64_t ns)
{
	struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000ULL),
			      .tv_nsec = (long)(ns % 1000000000ULL)};

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0)
		;
}

int gt_gettid(void)
{
	return (int)gettid();
}

/* Names the calling thread (15 bytes at most, as the kernel keeps them). */
void gt_name_self(const char *name)
{
	pthread_setname_np(pthread_self(), name);
}

/* Default 50 us timer slack would stretch every simulated kernel and gap. */
void gt_timerslack_min(void)
{
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
}

/*
 * Pins the calling thread to the last CPU (last != 0) or to CPU 0, on a
 * machine with two or more; returns whether it did.
 */
int gt_pin(int last)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;

	if (n < 2)
		return 0;
	CPU_ZERO(&set);
	CPU_SET(last ? (int)n - 1 : 0, &set);
	return sched_setaffinity(0, sizeof(set), &set) == 0;
}
