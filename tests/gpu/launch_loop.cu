// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * launch_loop.cu: a launch-bound CUDA loop for tools/gpu-bench.  Launches a
 * tiny kernel on one stream, synchronising every 256 launches, and prints one
 * line per 250 ms window: "W END_MONO_NS LAUNCHES".  Plain CUDA runtime, no
 * USDT probes, so it builds without <sys/sdt.h>.
 *
 * Usage: launch_loop SECONDS
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <cuda_runtime.h>

__global__ void bump(float *x)
{
	x[threadIdx.x] += 1.0f;
}

static unsigned long long mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (unsigned long long)t.tv_sec * 1000000000ull + (unsigned long long)t.tv_nsec;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 10;
	unsigned long long t0, end, next, n = 0;
	cudaStream_t s;
	float *x;

	if (cudaMalloc(&x, 1024 * sizeof(float)) != cudaSuccess ||
	    cudaStreamCreate(&s) != cudaSuccess) {
		fprintf(stderr, "launch_loop: no usable CUDA device\n");
		return 1;
	}
	cudaMemset(x, 0, 1024 * sizeof(float));
	cudaDeviceSynchronize();
	printf("READY %d\n", 1);
	fflush(stdout);
	t0 = mono_ns();
	end = t0 + (unsigned long long)(secs * 1e9);
	next = t0 + 250000000ull;
	for (;;) {
		for (int i = 0; i < 256; i++)
			bump<<<1, 32, 0, s>>>(x);
		cudaStreamSynchronize(s);
		n += 256;
		unsigned long long now = mono_ns();
		if (now >= next) {
			printf("W %llu %llu\n", now, n);
			fflush(stdout);
			n = 0;
			next += 250000000ull;
			if (next < now)
				next = now + 250000000ull;
		}
		if (now >= end)
			break;
	}
	cudaFree(x);
	return 0;
}
