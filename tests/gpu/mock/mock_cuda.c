// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * mock_cuda.c: built as libcuda.so.1 for cupti-mock-check: two of the driver
 * entry points gaptrace's host-side view (libcuda uprobes) probes, so that the
 * fallback after a CUPTI refusal can be tested without a GPU.  mock_app calls
 * cuLaunchKernel before each fake kernel and cuStreamSynchronize after the
 * fake device is idle.
 */
#include <stdint.h>

/* Not inlined away: each call is a real entry into this object. */
static volatile uint64_t calls;

int cuLaunchKernel(void)
{
	calls++;
	return 0;
}

int cuStreamSynchronize(void)
{
	calls++;
	return 0;
}
