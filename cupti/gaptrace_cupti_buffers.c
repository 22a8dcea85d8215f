// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * gaptrace_cupti_buffers.c: CUPTI's activity buffers.  A pool recycles them so
 * that CUPTI's requests on the program's threads stay cheap; completed ones
 * are queued to the receiver thread, which converts them off those threads.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gaptrace_cupti_priv.h"

/* Activity buffers: recycled so that CUPTI's requests on application threads stay cheap. */
#define BUF_SIZE     (1u << 20)
#define BUF_ALIGN    8
#define BUF_MAX	     64 /* at most 64 MiB in flight; past that CUPTI drops and counts */
#define BUF_PREALLOC 8

static pthread_mutex_t g_pool_mu = PTHREAD_MUTEX_INITIALIZER;
static void *g_pool[BUF_MAX];
static unsigned int g_pool_n;
static unsigned int g_buf_total;

/* Completed buffers waiting for the receiver thread (rx_main). */
struct rx_item {
	uint8_t *buf;
	size_t size, valid;
	CUcontext ctx;
	uint32_t stream_id;
};
static pthread_mutex_t g_rx_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_rx_cv = PTHREAD_COND_INITIALIZER;   /* a buffer was queued */
static pthread_cond_t g_rx_idle = PTHREAD_COND_INITIALIZER; /* the queue ran empty */
static struct rx_item g_rx[BUF_MAX]; /* never more: at most BUF_MAX buffers exist */
static unsigned int g_rx_head, g_rx_n;
static bool g_rx_busy;	  /* the receiver holds a buffer; under g_rx_mu */
static bool g_rx_on;	  /* the receiver runs; __atomic */
static bool g_rx_discard; /* GAPTRACE_CUPTI_DISCARD: buffers handed back unread (cost probe) */

/* ---- CUPTI buffer callbacks (any thread, often the program's own) ---- */

static void pool_put(void *buf)
{
	pthread_mutex_lock(&g_pool_mu);
	if (g_pool_n < BUF_MAX) {
		g_pool[g_pool_n++] = buf;
		buf = NULL;
	} else {
		g_buf_total--;
	}
	pthread_mutex_unlock(&g_pool_mu);
	free(buf);
}

static void *buf_alloc(void)
{
	void *p = aligned_alloc(BUF_ALIGN, BUF_SIZE);

	/* Zeroed here and after each use, off the application's threads. */
	if (p)
		memset(p, 0, BUF_SIZE);
	return p;
}

void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	int saved = errno;
	void *p = NULL;
	bool failed = false;

	pthread_mutex_lock(&g_pool_mu);
	if (g_pool_n) {
		p = g_pool[--g_pool_n];
	} else if (g_buf_total < BUF_MAX &&
		   __atomic_load_n(&g_lib.fail_pending, __ATOMIC_RELAXED) == 0) {
		p = buf_alloc();
		if (p)
			g_buf_total++;
		else
			failed = true;
	}
	pthread_mutex_unlock(&g_pool_mu);
	if (failed) {
		report_failure("cannot allocate a 1 MiB activity buffer", strerror(ENOMEM));
		__atomic_store_n(&g_lib.fail_pending, 1, __ATOMIC_RELEASE);
	}
	/* No buffer: CUPTI drops the records and counts them (we report the count). */
	*buffer = p;
	*size = p ? BUF_SIZE : 0;
	*max_records = 0;
	errno = saved;
}

/*
 * A completed buffer: read (converted, handed to the tracer through
 * gpu_batch), zeroed for its next use and put back in the pool.
 */
static void rx_handle(const struct rx_item *it)
{
	if (state_get() == ST_READY && __atomic_load_n(&g_lib.active, __ATOMIC_ACQUIRE) &&
	    tracer_attached() && !g_rx_discard)
		process_buffer(it->buf, it->valid, it->ctx, it->stream_id);
	if (g_lib.zeroed)
		memset(it->buf, 0, it->size < BUF_SIZE ? it->size : BUF_SIZE);
	pool_put(it->buf);
}

/*
 * The receiver thread reads the buffers CUPTI completes.  CUPTI completes a
 * buffer on whichever thread filled it (per-thread buffers, CUPTI's default):
 * in a launch-bound program that is the launching thread itself, which then
 * paid for the conversion, the gpu_batch probe's trap and the 1 MiB memset
 * of every buffer.  Now it pays for a queue push.
 */
static void *rx_main(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "gaptrace-rx");
	pthread_mutex_lock(&g_rx_mu);
	for (;;) {
		struct rx_item it;

		while (!g_rx_n) {
			g_rx_busy = false;
			pthread_cond_broadcast(&g_rx_idle);
			pthread_cond_wait(&g_rx_cv, &g_rx_mu);
		}
		it = g_rx[g_rx_head];
		g_rx_head = (g_rx_head + 1) % BUF_MAX;
		g_rx_n--;
		g_rx_busy = true;
		pthread_mutex_unlock(&g_rx_mu);
		rx_handle(&it);
		pthread_mutex_lock(&g_rx_mu);
	}
	return NULL;
}

/* False when the receiver is not running (or, never expected, its queue is full). */
static bool rx_push(const struct rx_item *it)
{
	bool ok = false;

	if (!__atomic_load_n(&g_rx_on, __ATOMIC_ACQUIRE))
		return false;
	pthread_mutex_lock(&g_rx_mu);
	if (g_rx_n < BUF_MAX) {
		g_rx[(g_rx_head + g_rx_n) % BUF_MAX] = *it;
		g_rx_n++;
		g_rx_busy = true;
		ok = true;
		pthread_cond_signal(&g_rx_cv);
	}
	pthread_mutex_unlock(&g_rx_mu);
	return ok;
}

/* Waits, at most max_ns, until the receiver has read every queued buffer. */
void rx_drain(uint64_t max_ns)
{
	uint64_t t = real_now() + max_ns;
	struct timespec ts = {(time_t)(t / NSEC_PER_SEC), (long)(t % NSEC_PER_SEC)};

	if (!__atomic_load_n(&g_rx_on, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&g_rx_mu);
	while ((g_rx_n || g_rx_busy) &&
	       pthread_cond_timedwait(&g_rx_idle, &g_rx_mu, &ts) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&g_rx_mu);
}

void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream_id, uint8_t *buf, size_t size,
			       size_t valid)
{
	int saved = errno;
	struct rx_item it = {buf, size, valid, ctx, stream_id};

	if (!buf) {
		errno = saved;
		return;
	}
	if (it.valid > size)
		it.valid = size;
	if (!rx_push(&it))
		rx_handle(&it);
	errno = saved;
}

/* ---- for the control thread ---- */

void pool_prealloc(void)
{
	pthread_mutex_lock(&g_pool_mu);
	while (g_pool_n < BUF_PREALLOC && g_buf_total < BUF_MAX) {
		void *p = buf_alloc();

		if (!p)
			break;
		g_pool[g_pool_n++] = p;
		g_buf_total++;
	}
	pthread_mutex_unlock(&g_pool_mu);
}

/* After a detach the buffers CUPTI handed back are memory the program may want. */
void pool_release(void)
{
	void *bufs[BUF_MAX];
	unsigned int n;

	pthread_mutex_lock(&g_pool_mu);
	n = g_pool_n;
	memcpy(bufs, g_pool, n * sizeof(bufs[0]));
	g_pool_n = 0;
	g_buf_total -= n;
	pthread_mutex_unlock(&g_pool_mu);
	for (unsigned int i = 0; i < n; i++)
		free(bufs[i]);
}

/* The receiver thread, from the control thread's start. */
void rx_start(void)
{
	/* Before the receiver starts, which reads it. */
	g_rx_discard = env_on("GAPTRACE_CUPTI_DISCARD");
	/* GAPTRACE_CUPTI_INLINE=1: read buffers where CUPTI completes them (cost probe). */
	if (!env_on("GAPTRACE_CUPTI_INLINE") && start_thread(rx_main) == 0)
		__atomic_store_n(&g_rx_on, true, __ATOMIC_RELEASE);
}

/* A forked child has none of our threads. */
void rx_fork_child(void)
{
	__atomic_store_n(&g_rx_on, false, __ATOMIC_RELEASE); /* not in this process */
}
