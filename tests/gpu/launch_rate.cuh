// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * launch_rate.cuh: the tiny-kernel launch loop that cupti_cost.cu and
 * pm_sampling_cost.cu measure their CUPTI configurations on (the shape of
 * tests/gpu/launch_loop.cu: one stream, a synchronise every 256 launches).
 */
#ifndef GAPTRACE_LAUNCH_RATE_CUH
#define GAPTRACE_LAUNCH_RATE_CUH

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

/* Launches of bump(x) on s per second over secs: the median of 100 ms windows. */
static double launch_rate(double secs, float *x, cudaStream_t s)
{
	double w[512];
	int nw = 0;
	unsigned long long t0 = mono_ns(), end = t0 + (unsigned long long)(secs * 1e9);
	unsigned long long ws = t0, n = 0;

	for (;;) {
		for (int i = 0; i < 256; i++)
			bump<<<1, 32, 0, s>>>(x);
		cudaStreamSynchronize(s);
		n += 256;
		unsigned long long now = mono_ns();
		if (now - ws >= 100000000ull) {
			if (nw < 512)
				w[nw++] = n * 1e9 / (double)(now - ws);
			ws = now;
			n = 0;
		}
		if (now >= end)
			break;
	}
	for (int i = 1; i < nw; i++)
		for (int j = i; j > 0 && w[j - 1] > w[j]; j--) {
			double t = w[j];
			w[j] = w[j - 1];
			w[j - 1] = t;
		}
	return nw ? w[nw / 2] : 0;
}

#endif /* GAPTRACE_LAUNCH_RATE_CUH */
