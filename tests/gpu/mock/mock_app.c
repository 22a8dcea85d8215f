// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * mock_app.c: a prover-shaped program on mock_cupti.c's fake CUDA: six kernels
 * per unit, a sync, then a measured sleep in the gap (ground truth written).
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
#include <unistd.h>
#include <sys/stat.h>

#include "gaptrace-usdt.h"

void mock_cuda_init(void);
void mock_launch(const char *name, uint64_t dur_ns, int memcpy_too);
void mock_sync(void);
void mock_marker(const char *name, int start);
void mock_drop(uint64_t n);
void mock_other_client(void);
/* mock_cuda.c (libcuda.so.1): what gaptrace's host-side view probes. */
int cuLaunchKernel(void);
int cuStreamSynchronize(void);

#define MAX_INJ 100000

static struct {
	unsigned int gap;
	uint64_t start, end;
} inj[MAX_INJ];

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
			inj[n].start = now();
			nanosleep(&ts, NULL);
			inj[n].end = now();
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
			"{\"schema\":\"gaptrace.truth/1\",\"scenario\":\"sleep\",\"units\":%d,"
			"\"injections\":[",
			u);
		/* With a deadline the last sleep has no unit after it: no gap holds it. */
		for (int i = 0; i < n - (deadline ? 1 : 0); i++)
			fprintf(
			    f,
			    "%s{\"gap_after_unit\":%u,\"category\":\"sleep\",\"kind\":\"sleep\","
			    "\"start_ns\":%" PRIu64 ",\"end_ns\":%" PRIu64 ",\"amount_ns\":%" PRIu64
			    "}",
			    i ? "," : "", inj[i].gap, inj[i].start, inj[i].end,
			    inj[i].end - inj[i].start);
		fprintf(f, "]}\n");
		fclose(f);
	}
	printf("mock_app: units=%d wall=%.3fs\n", u, (now() - t0) / 1e9);
	return 0;
}
