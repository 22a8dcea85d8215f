// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * hostile_producer: fires every gaptrace USDT probe with the values a broken
 * or hostile program could send (issue #10): ids of 0 and 2^64-1, colliding
 * and unmatched unit ids, GPU operations that end before they start, last a
 * year, sit at 1-2 ns or on device 2^32-1, batches with a NULL or unmapped
 * pointer, 0 or 1000 records, record sizes of 0, 1, 7 and 100000, unknown
 * kinds, a producer loss counter of 2^64-1, names that are NULL, unterminated
 * past a page or full of terminal control bytes, and a thread name that
 * tries to retitle the terminal.  Among them, ordinary units with kernels, so
 * the capture has real gaps to explain.  Runs for --seconds S (default 1.5).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "gaptrace-usdt.h"

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

static void pause_us(unsigned us)
{
	struct timespec t = {0, (long)us * 1000};

	nanosleep(&t, NULL);
}

/* An ordinary unit: two kernels of 1 ms, launched from this thread. */
static void ordinary_unit(uint64_t id, uint64_t *op)
{
	GAPTRACE_UNIT_BEGIN(id);
	for (int k = 0; k < 2; k++) {
		uint64_t t = now_ns();

		GAPTRACE_GPU_LAUNCH(0, 7, *op);
		pause_us(1000);
		GAPTRACE_GPU_OP(0, 7, *op, t + 10000, now_ns());
		(*op)++;
	}
	GAPTRACE_UNIT_END(id);
}

static void hostile_units(void)
{
	GAPTRACE_UNIT_BEGIN(UINT64_MAX);
	GAPTRACE_UNIT_BEGIN(UINT64_MAX); /* the same id twice */
	GAPTRACE_UNIT_END(0);		 /* never begun */
	GAPTRACE_UNIT_END(UINT64_MAX);
	GAPTRACE_UNIT_END(UINT64_MAX); /* ended twice */
	GAPTRACE_UNIT_BEGIN(0);	       /* never ended */
}

static void hostile_ops(uint64_t *op)
{
	uint64_t t = now_ns();

	GAPTRACE_GPU_OP(0, 7, (*op)++, t, t - 1000000); /* ends before it starts */
	GAPTRACE_GPU_OP(0, 7, (*op)++, t, t + 365ULL * 86400 * 1000000000); /* a year */
	GAPTRACE_GPU_OP(0, 7, (*op)++, 1, 2);				    /* at 1-2 ns */
	GAPTRACE_GPU_OP(0, 7, (*op)++, 0, 0);
	GAPTRACE_GPU_OP(UINT32_MAX, UINT32_MAX, UINT64_MAX, t, t + 1000);
	GAPTRACE_GPU_OP(0, 7, UINT64_MAX, UINT64_MAX - 10, UINT64_MAX); /* wraps */
	GAPTRACE_GPU_LAUNCH(0, 7, UINT64_MAX);
	GAPTRACE_GPU_LAUNCH(0, 7, UINT64_MAX); /* colliding launch ids */
	GAPTRACE_GPU_LAUNCH(UINT32_MAX, 0, 0);
}

static void hostile_batches(void *unmapped)
{
	struct gaptrace_gpu_rec r[4];
	static struct gaptrace_gpu_rec many[1000];
	uint64_t t = now_ns();

	memset(r, 0, sizeof(r));
	r[0] =
	    (struct gaptrace_gpu_rec){.start_ns = t, .end_ns = t - 5, .kind = GAPTRACE_GPU_KERNEL};
	r[1] = (struct gaptrace_gpu_rec){.kind = 0}; /* no kind */
	r[2] = (struct gaptrace_gpu_rec){.start_ns = t, .end_ns = t + 10, .kind = 99};
	r[3] = (struct gaptrace_gpu_rec){.bytes = UINT64_MAX, .kind = GAPTRACE_GPU_DROPPED};
	GAPTRACE_GPU_BATCH(r, 4);
	GAPTRACE_GPU_BATCH(r, 0);
	GAPTRACE_GPU_BATCH(NULL, 5);
	GAPTRACE_GPU_BATCH(unmapped, 3);
	for (size_t i = 0; i < 1000; i++)
		many[i] = (struct gaptrace_gpu_rec){.start_ns = 1,
						    .end_ns = UINT64_MAX,
						    .op_id = i,
						    .kind = GAPTRACE_GPU_API,
						    .tid = UINT32_MAX};
	GAPTRACE_GPU_BATCH(many, 1000); /* more than one firing carries */
	GAPTRACE_GPU_BATCH(many, UINT32_MAX);
	/* Record sizes the header does not allow: written with the raw probe. */
	STAP_PROBE3(gaptrace, gpu_batch, (const void *)r, (uint32_t)4, (uint32_t)0);
	STAP_PROBE3(gaptrace, gpu_batch, (const void *)r, (uint32_t)4, (uint32_t)1);
	STAP_PROBE3(gaptrace, gpu_batch, (const void *)r, (uint32_t)4, (uint32_t)7);
	STAP_PROBE3(gaptrace, gpu_batch, (const void *)r, (uint32_t)4, (uint32_t)100000);
}

static void hostile_names(const char *unterminated, void *unmapped)
{
	GAPTRACE_GPU_NAME(0, "\x1b]0;pwned\x07\x1b[2J\x1b[6n\r\n\x9b"
			     "31m");
	GAPTRACE_GPU_NAME(UINT32_MAX, "\xff\xfe\xc3(\xe2\x82");
	GAPTRACE_GPU_NAME(1, (const char *)NULL);
	GAPTRACE_GPU_NAME(2, (const char *)unmapped);
	GAPTRACE_GPU_NAME(3, unterminated);
	GAPTRACE_GPU_NAME(3, "a second name for the same id");
}

int main(int argc, char **argv)
{
	double seconds = argc > 2 && !strcmp(argv[1], "--seconds") ? atof(argv[2]) : 1.5;
	long page = sysconf(_SC_PAGESIZE);
	/* A page of 'A' with no NUL, then an unmapped page. */
	char *two = mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t op = 1, unit = 1, end;

	if (two == MAP_FAILED)
		return 1;
	memset(two, 'A', (size_t)page);
	munmap(two + page, (size_t)page);
	prctl(PR_SET_NAME, "\x1b]0;pwn\x07\x9b", 0, 0, 0);
	/* Wait for the tracer (semaphores) up to 2 s, then fire for `seconds`. */
	for (int i = 0; i < 2000 && !GAPTRACE_ENABLED(unit_begin); i++)
		pause_us(1000);
	end = now_ns() + (uint64_t)(seconds * 1e9);
	while (now_ns() < end) {
		ordinary_unit(unit++, &op);
		hostile_units();
		hostile_ops(&op);
		hostile_batches(two + page);
		hostile_names(two, two + page);
		pause_us(3000); /* a gap */
	}
	return 0;
}
