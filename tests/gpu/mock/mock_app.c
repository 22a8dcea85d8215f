// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * mock_app.c: a prover-shaped program on mock_cupti.c's fake CUDA: six kernels
 * per unit, a sync, then a measured sleep in the gap (ground truth written).
 * MOCK_PINNED=1: instead of the sleep, the unit's pinned staging buffer is
 * freed and the next one allocated (cudaFreeHost + cudaHostAlloc of 64-128
 * MiB, as provers do per partition): allocator time (issue #13).
 *
 * Usage: mock_app UNITS [TRUTH.json [SECONDS]]   (SECONDS: run that long instead)
 * CUDA_INJECTION64_PATH names libgaptrace-cupti.so as for a real CUDA program;
 * MOCK_DROPS=1 makes "CUPTI" drop 17 records after unit 3.  MOCK_CTL=DIR: once
 * DIR/other exists, another CUPTI client tries to subscribe (mock_other_client,
 * logged in MOCK_EVENTS); once DIR/stop exists, the run ends.  Links mock_cuda.c's
 * libcuda.so.1, whose entry points the host-side view (libcuda uprobes) sees.
 * MOCK_LOOP=N: instead, a launch-bound loop of N 2-us kernels (a sync every
 * 1000), the shape whose capture bytes and recorder CPU issue #14 bounds;
 * it prints the launch rate.  MOCK_LOOP=0 loops until killed and prints what
 * tests/gpu/launch_loop.cu prints, so tools/gpu-bench runs on the mock
 * (GPU_BENCH_LOOP).
 */
#include <inttypes.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>

#include "gaptrace-usdt.h"

void mock_cuda_init(void);
void mock_launch(const char *name, uint64_t dur_ns, int memcpy_too);
void mock_sync(void);
void mock_marker(const char *name, int start);
void mock_drop(uint64_t n);
void mock_other_client(void);
void mock_host_alloc(void **pp, size_t bytes);
void mock_free_host(void *p, size_t bytes);
/* mock_cuda.c (libcuda.so.1): what gaptrace's host-side view probes. */
int cuLaunchKernel(void);
int cuStreamSynchronize(void);

#define MAX_INJ	     100000
#define GT_MIN(a, b) ((a) < (b) ? (a) : (b))

static struct {
	unsigned int gap;
	uint64_t start, end;
	uint64_t run_delay; /* in the gap: from the sync's wakeup (the gap's start) on */
	uint64_t in_window; /* inside [start, end] */
} inj[MAX_INJ];

/*
 * This thread's time waiting for a CPU so far (schedstat's 2nd field): run-queue
 * time inside an injection is scheduler time, not the injection's.
 */
static uint64_t run_delay(void)
{
	static int fd = -2;
	unsigned long long run, delay;
	char buf[128];
	ssize_t n;

	if (fd == -2)
		fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? pread(fd, buf, sizeof(buf) - 1, 0) : -1;
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return sscanf(buf, "%llu %llu", &run, &delay) == 2 ? delay : 0;
}

static uint64_t now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

int main(int argc, char **argv)
{
	int units = argc > 1 ? atoi(argv[1]) : 10;
	const char *truth = argc > 2 ? argv[2] : NULL;
	double secs = argc > 3 ? atof(argv[3]) : 0;
	const char *ctl = getenv("MOCK_CTL");
	bool pinned = getenv("MOCK_PINNED") != NULL;
	void *buf = NULL;
	uint64_t rd_sync = 0;
	size_t buf_bytes = 0;
	char other_path[4096] = "", stop_path[4096] = "";
	bool stop = false;
	uint64_t t0, deadline;
	int n = 0, u;

	pthread_setname_np(pthread_self(), "gpu-worker");
	mock_cuda_init();
	if (ctl) {
		snprintf(other_path, sizeof(other_path), "%s/other", ctl);
		snprintf(stop_path, sizeof(stop_path), "%s/stop", ctl);
	}
	t0 = now();
	if (getenv("MOCK_LOOP")) {
		long loops = atol(getenv("MOCK_LOOP"));
		uint64_t win = now(), in_win = 0;

		/* 0: forever, printing launch_loop.cu's READY and per-250-ms "W" lines (gpu-bench). */
		if (!loops) {
			printf("READY 1\n");
			fflush(stdout);
		}
		for (long i = 0; !loops || i < loops; i++) {
			cuLaunchKernel();
			mock_launch("_Z8fill_kerv", 2000, 0);
			if (i % 1000 == 999)
				mock_sync();
			in_win++;
			if (!loops && now() - win >= 250000000) {
				win = now();
				printf("W %" PRIu64 " %" PRIu64 "\n", win, in_win);
				fflush(stdout);
				in_win = 0;
			}
		}
		mock_sync();
		printf("mock_app: loop=%ld wall=%.3fs rate=%.0f/s\n", loops, (now() - t0) / 1e9,
		       loops / ((now() - t0) / 1e9));
		return 0;
	}
	deadline = secs > 0 ? t0 + (uint64_t)(secs * 1e9) : 0;
	for (u = 0; (u < units || (deadline && now() < deadline)) && n < MAX_INJ; u++) {
		mock_marker("partition", 1);
		GAPTRACE_UNIT_BEGIN(u);
		for (int k = 0; k < 6; k++) {
			cuLaunchKernel();
			mock_launch(k % 2 ? "_Z11spin_kernelyPj" : "_Z8fill_kerv", 2000000, k == 5);
		}
		/* The sync sleeps to the gap's start: its wait for a CPU is in the gap. */
		rd_sync = run_delay();
		mock_sync();
		cuStreamSynchronize();
		GAPTRACE_UNIT_END(u);
		mock_marker(NULL, 0);
		if (u == 3 && getenv("MOCK_DROPS"))
			mock_drop(17);
		if (other_path[0] && access(other_path, F_OK) == 0) {
			mock_other_client();
			other_path[0] = '\0';
		}
		stop = stop_path[0] && access(stop_path, F_OK) == 0;
		if (u + 1 < units || deadline) {
			struct timespec ts = {0, (long)((10 + 5 * (u % 3)) * 1000000)};

			inj[n].gap = (unsigned int)u;
			inj[n].in_window = run_delay();
			inj[n].start = now();
			if (pinned) {
				if (buf)
					mock_free_host(buf, buf_bytes);
				buf_bytes = (size_t)(64 + 32 * (u % 3)) << 20;
				mock_host_alloc(&buf, buf_bytes);
			} else {
				nanosleep(&ts, NULL);
			}
			inj[n].end = now();
			inj[n].run_delay = run_delay();
			inj[n].in_window = inj[n].run_delay - inj[n].in_window;
			inj[n].run_delay -= rd_sync;
			n++;
		}
		if (stop || (deadline && now() >= deadline)) {
			u++;
			break;
		}
	}
	if (truth) {
		FILE *f = fopen(truth, "w");

		if (!f)
			return 1;
		fprintf(f,
			"{\"schema\":\"gaptrace.truth/1\",\"scenario\":\"%s\",\"units\":%d,"
			"\"worker_tid\":%d,\"injections\":[",
			pinned ? "pinned" : "sleep", u, (int)gettid());
		/* With a deadline the last sleep has no unit after it: no gap holds it. */
		for (int i = 0; i < n - (deadline ? 1 : 0); i++)
			fprintf(f,
				"%s{\"gap_after_unit\":%u,\"category\":\"%s\",\"kind\":\"%s\","
				"\"start_ns\":%" PRIu64 ",\"end_ns\":%" PRIu64
				",\"amount_ns\":%" PRIu64 ",\"run_delay_ns\":%" PRIu64 "}",
				i ? "," : "", inj[i].gap, pinned ? "allocator" : "sleep",
				pinned ? "pinned" : "sleep", inj[i].start, inj[i].end,
				inj[i].end - inj[i].start -
				    GT_MIN(inj[i].in_window, inj[i].end - inj[i].start),
				inj[i].run_delay);
		fprintf(f, "]}\n");
		fclose(f);
	}
	printf("mock_app: units=%d wall=%.3fs\n", u, (now() - t0) / 1e9);
	return 0;
}
