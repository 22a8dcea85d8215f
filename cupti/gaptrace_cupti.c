// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * gaptrace_cupti.c: libgaptrace-cupti.so, the CUPTI injection library that hands
 * a CUDA program's GPU activity to gaptrace through the gaptrace USDT probes.
 *
 * Loaded two ways: by the CUDA driver through CUDA_INJECTION64_PATH (launch
 * mode: the driver calls InitializeInjection from cuInit), or dlopen'ed into a
 * running process by `gaptrace record -p` (live attach: the constructor starts
 * a thread that initialises, since CUPTI must not be called under the loader
 * lock).  Either way a control thread then follows the gpu_batch probe's
 * semaphore.  When a tracer attaches it subscribes to CUPTI, registers a
 * CLOCK_MONOTONIC timestamp callback and its buffer callbacks and enables the
 * activity kinds.  When the tracer leaves it flushes, disables the kinds and
 * hands CUPTI back: cuptiFinalize at the exit of the program's next CUDA call
 * (where CUPTI's documentation wants it), which also ends the subscription.
 * The program then runs as if CUPTI had never been loaded, another CUPTI
 * client (torch.profiler, Nsight) can subscribe, and the next tracer makes
 * the library subscribe again.
 *
 * Environment: GAPTRACE_CUPTI_WAIT_MS (launch mode: wait that long in
 * InitializeInjection for a tracer), GAPTRACE_CUPTI_VERBOSE (state changes on
 * stderr), GAPTRACE_CUPTI_CLOCK=offset (no timestamp callback; CUPTI's clock
 * plus a measured offset instead).  Cost probes, not for captures:
 * GAPTRACE_CUPTI_KINDS (only these activity kinds), GAPTRACE_CUPTI_INLINE=1
 * (read buffers on the thread CUPTI completes them on, as before the receiver
 * thread), GAPTRACE_CUPTI_DISCARD=1 (hand buffers back unread),
 * GAPTRACE_CUPTI_ALL_API=1 (every API call's record).
 *
 * Rules: the host program must never notice us.  No exit, abort or signal; no
 * output except one line when CUPTI refuses us (then we step aside) and one
 * when CUPTI drops records; errno preserved in every callback; our threads are
 * detached, block all signals and never wait unboundedly on the program.
 *
 * This file: the helpers the library's other files use (messages, the
 * exported status, threads) and its clocks.  gaptrace_cupti_priv.h lists the
 * others: names, conversion, buffers, control.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gaptrace_cupti_priv.h"

#define RECAL_NS  (1000 * NSEC_PER_MSEC) /* offset re-measurement, offset mode only */
#define CAL_TRIES 200

struct gt_lib g_lib;
struct gt_clock g_clock;

/* ---- small helpers ---- */

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

uint64_t mono_now(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

uint64_t real_now(void)
{
	return clock_ns(CLOCK_REALTIME);
}

void sleep_ns(uint64_t ns)
{
	struct timespec ts = {.tv_sec = (time_t)(ns / NSEC_PER_SEC),
			      .tv_nsec = (long)(ns % NSEC_PER_SEC)};

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

int state_get(void)
{
	return __atomic_load_n(&g_lib.state, __ATOMIC_ACQUIRE);
}

void state_set(int s)
{
	__atomic_store_n(&g_lib.state, s, __ATOMIC_RELEASE);
}

/* One write(2) per line so that lines from several threads never interleave. */
__attribute__((format(printf, 1, 2))) void say(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	n = snprintf(buf, sizeof(buf), "gaptrace-cupti: ");
	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof(buf) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 2)
		n = (int)sizeof(buf) - 2;
	buf[n++] = '\n';
	if (write(STDERR_FILENO, buf, (size_t)n) < 0) {
		/* Nowhere left to report it. */
	}
}

/*
 * What a tracer reads (process_vm_readv at the symbol's address) to learn that
 * the library stepped aside, so that it can fall back to libcuda uprobes:
 * gaptrace checks it every 250 ms while recording.  reason is complete before
 * failed is set.
 */
GT_EXPORT struct gt_cupti_status gaptrace_cupti_status = {.magic = GT_CUPTI_STATUS_MAGIC};

/* The single line the library ever prints about a failure, then it steps aside. */
void report_failure(const char *what, const char *why)
{
	if (__atomic_exchange_n(&g_lib.reported, 1, __ATOMIC_ACQ_REL))
		return;
	snprintf(gaptrace_cupti_status.reason, sizeof(gaptrace_cupti_status.reason), "%s: %s", what,
		 why);
	__atomic_store_n(&gaptrace_cupti_status.failed, 1, __ATOMIC_RELEASE);
	say("%s: %s; GPU activity will not be recorded", what, why);
}

bool tracer_attached(void)
{
	return __atomic_load_n(&gaptrace_gpu_batch_semaphore, __ATOMIC_RELAXED) != 0;
}

/* Our threads take no signals: process-directed ones stay with the program's threads. */
int start_thread(void *(*fn)(void *))
{
	sigset_t all, old;
	pthread_attr_t attr;
	pthread_t t;
	int err;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	err = pthread_create(&t, &attr, fn, NULL);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return err;
}

bool env_on(const char *name)
{
	const char *e = getenv(name);

	return e && *e && strcmp(e, "0");
}

/* ---- clocks ---- */

uint64_t CUPTIAPI mono_ns(void)
{
	return mono_now();
}

static uint64_t cupti_now(void)
{
	uint64_t t = 0;

	if (cuptiGetTimestamp(&t) != CUPTI_SUCCESS)
		return 0;
	return t;
}

/*
 * CLOCK_MONOTONIC minus the other clock, read between two monotonic reads:
 * the tightest of many brackets bounds the error by half its width.
 */
static int64_t bracket_offset(uint64_t (*other)(void), uint64_t *width)
{
	uint64_t best = UINT64_MAX;
	int64_t off = 0;

	for (int i = 0; i < CAL_TRIES; i++) {
		uint64_t a = mono_now(), o = other(), b = mono_now();

		if (!o)
			return 0;
		if (b - a < best) {
			best = b - a;
			off = (int64_t)(a + (b - a) / 2) - (int64_t)o;
		}
	}
	if (width)
		*width = best;
	return off;
}

void calibrate(void)
{
	uint64_t wc = 0, wr = 0;
	int64_t oc = bracket_offset(cupti_now, &wc);
	int64_t orl = bracket_offset(real_now, &wr);

	__atomic_store_n(&g_clock.off_cupti, oc, __ATOMIC_RELAXED);
	__atomic_store_n(&g_clock.off_real, orl, __ATOMIC_RELAXED);
	g_clock.next_recal = mono_now() + RECAL_NS;
	vlog("clock: %s; cuptiGetTimestamp offset %lld ns (bracket %llu ns)",
	     g_clock.mode == CLK_CALLBACK ? "CLOCK_MONOTONIC timestamp callback"
					  : "no timestamp callback, adding the measured offset",
	     (long long)oc, (unsigned long long)wc);
}
