// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * tick_cost: what a per-CPU cpu-clock sampling event costs the thread it
 * interrupts, with no BPF program and no ring buffer: the floor under
 * gaptrace's per-CPU samplers on this machine (tools/bench prints it).
 *
 * A thread pinned to --cpu spins in half-second windows, alternately with
 * and without a cpu-clock event of the given period open on its CPU, and
 * counts its work per second of its own CPU time (CLOCK_THREAD_CPUTIME_ID,
 * which includes the interrupts it takes, so load from other processes
 * does not bias the ratio).  Prints period_ns=, ratio= (with/without).
 * Usage: tick_cost [--period-ns N] [--cpu C] [--windows W]   (root or
 * perf_event_paranoid <= 0)
 */
#include <linux/perf_event.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Spin chunks for half a second of this thread's CPU time. */
static double work_per_cpu_s(void)
{
	uint64_t c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID), n = 0;

	while (clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0 < 500000000ull) {
		for (volatile int i = 0; i < 10000; i++)
			;
		n++;
	}
	return (double)n / 0.5;
}

int main(int argc, char **argv)
{
	long period = 250000, windows = 12;
	int cpu = 0;
	double on = 0, off = 0;
	cpu_set_t set;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--period-ns"))
			period = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "--cpu"))
			cpu = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--windows"))
			windows = atol(argv[i + 1]);
	}
	if (period < 10000 || windows < 2 || cpu < 0) {
		fprintf(stderr,
			"usage: tick_cost [--period-ns N>=10000] [--cpu C] [--windows W>=2]\n");
		return 2;
	}
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		perror("tick_cost: sched_setaffinity");
		return 1;
	}
	for (long w = 0; w < windows; w++) {
		struct perf_event_attr a = {
		    .type = PERF_TYPE_SOFTWARE,
		    .size = sizeof(a),
		    .config = PERF_COUNT_SW_CPU_CLOCK,
		    .sample_period = (uint64_t)period,
		};
		int fd = -1;

		if (w & 1) {
			fd = (int)syscall(SYS_perf_event_open, &a, -1, cpu, -1, 0);
			if (fd < 0) {
				perror("tick_cost: perf_event_open (needs root)");
				return 1;
			}
		}
		if (fd >= 0) {
			on += work_per_cpu_s();
			close(fd);
		} else {
			off += work_per_cpu_s();
		}
	}
	printf("period_ns=%ld\nratio=%.4f\n", period, on / off);
	return 0;
}
