// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * mock_cuda.c: built as libcuda.so.1 for cupti-mock-check: driver entry points
 * gaptrace's host-side view (libcuda uprobes) probes, so that the fallback
 * after a CUPTI refusal can be tested without a GPU.  mock_app calls
 * cuLaunchKernel before each fake kernel and cuStreamSynchronize after the
 * fake device is idle; with MOCK_PINNED, cuMemFreeHost and cuMemHostAlloc in
 * the gap, which spin here as long as the real driver takes to pin or unpin
 * that many pages (its time is on the CPU, in libcuda's frames).
 */
#include <stddef.h>
#include <stdint.h>
#include <time.h>

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

/* ns per MiB pinned or unpinned: of the order of a real driver's cost. */
#define PIN_NS_PER_MIB	 100000ULL
#define UNPIN_NS_PER_MIB 40000ULL

static uint64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void spin(uint64_t ns)
{
	uint64_t end = mono_ns() + ns;

	while (mono_ns() < end)
		calls++;
}

static char pinned_dummy[64];

int cuMemHostAlloc(void **pp, size_t bytes, unsigned int flags)
{
	(void)flags;
	spin((bytes >> 20) * PIN_NS_PER_MIB);
	*pp = pinned_dummy;
	return 0;
}

/* The size is the mock's own convention (the real call finds it itself). */
int cuMemFreeHost(void *p, size_t bytes)
{
	(void)p;
	spin((bytes >> 20) * UNPIN_NS_PER_MIB);
	return 0;
}
