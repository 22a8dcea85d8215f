/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * gaptrace_cupti_priv.h: what the files of libgaptrace-cupti.so share: the
 * state more than one of them reads, the batch a buffer is converted into,
 * and their functions.  Only cupti/gaptrace_cupti*.c (and the conversion's
 * unit test) include it; nothing here is exported from the library.
 *
 *   gaptrace_cupti.c          helpers, the exported status, clocks
 *   gaptrace_cupti_names.c    interned names; the gpu_name and gpu_batch probes
 *   gaptrace_cupti_convert.c  activity records -> struct gaptrace_gpu_rec
 *   gaptrace_cupti_buffers.c  the buffer pool, CUPTI's buffer callbacks, the receiver
 *   gaptrace_cupti_control.c  following the tracer: subscribe, enable, release; init
 */
#ifndef GAPTRACE_CUPTI_PRIV_H
#define GAPTRACE_CUPTI_PRIV_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cupti.h>

#include "gaptrace/gaptrace-cupti-status.h"
#include "gaptrace/gaptrace-usdt.h"

#define GT_EXPORT __attribute__((visibility("default")))

/*
 * What a tracer reads (process_vm_readv at the symbol's address) to learn that
 * the library stepped aside (gaptrace_cupti.c).
 */
extern GT_EXPORT struct gt_cupti_status gaptrace_cupti_status;

/* Everything below is internal to the library, also for the files' extern symbols. */
#pragma GCC visibility push(hidden)

#define NSEC_PER_MSEC 1000000ULL
#define NSEC_PER_SEC  1000000000ULL

#define EXIT_LOCK_NS (500 * NSEC_PER_MSEC) /* atexit waits at most this for the control lock */
#define KCACHE_SLOTS 32

enum gt_state {
	ST_IDLE,     /* nothing done yet */
	ST_STARTING, /* one caller is initialising */
	ST_READY,    /* control thread running; CUPTI held only while a tracer is attached */
	ST_FAILED,   /* stepped aside for good */
};

enum clock_mode {
	CLK_CALLBACK, /* CUPTI calls mono_ns() for every timestamp */
	CLK_OFFSET,   /* no callback: add a measured offset to every timestamp */
};

/* The library's state that more than one of its files reads. */
struct gt_lib {
	int state;	/* enum gt_state, __atomic */
	bool verbose;	/* GAPTRACE_CUPTI_VERBOSE */
	bool zeroed;	/* CUPTI expects zeroed buffers from us */
	bool active;	/* activity kinds enabled; written under the control lock, read __atomic */
	uint32_t epoch; /* bumped at each attach; names are re-sent once per epoch */
	int fail_pending; /* a CUPTI callback hit a failure; the control thread steps aside */
	int reported;	  /* the one failure line was printed */
};

/* How CUPTI's timestamps become CLOCK_MONOTONIC ones. */
struct gt_clock {
	int mode;	     /* enum clock_mode */
	int64_t off_cupti;   /* CLOCK_MONOTONIC - cuptiGetTimestamp() */
	int64_t off_real;    /* CLOCK_MONOTONIC - CLOCK_REALTIME, CUPTI's own default clock */
	uint64_t next_recal; /* offset mode: when calibrate() measures again */
};

/* Statistics for the verbose detach line. */
struct gt_stats {
	uint64_t sent, invalid, dropped, foreign;
};

extern struct gt_lib g_lib;	/* gaptrace_cupti.c */
extern struct gt_clock g_clock; /* gaptrace_cupti.c */
extern struct gt_stats g_stats; /* gaptrace_cupti_convert.c */

/* One completed buffer, converted and fired in chunks. */
struct batch {
	struct gaptrace_gpu_rec r[GAPTRACE_GPU_BATCH_MAX];
	unsigned int n;
	uint64_t now;	     /* CLOCK_MONOTONIC when the buffer arrived */
	int64_t off;	     /* offset mode: added to every timestamp */
	int64_t off_foreign; /* callback mode: for a record that ignored the callback */
	uint64_t sent, invalid, foreign;
	struct {
		const char *p;
		uint32_t id;
	} kcache[KCACHE_SLOTS];
	struct {
		uint32_t key; /* driver bit | cbid, 0 = empty */
		uint32_t id;
	} acache[KCACHE_SLOTS];
};

/* gaptrace_cupti.c: helpers and clocks */
uint64_t mono_now(void);
uint64_t real_now(void);
void sleep_ns(uint64_t ns);
int state_get(void);
void state_set(int s);
__attribute__((format(printf, 1, 2))) void say(const char *fmt, ...);
#define vlog(...)                         \
	do {                              \
		if (g_lib.verbose)        \
			say(__VA_ARGS__); \
	} while (0)
void report_failure(const char *what, const char *why);
bool tracer_attached(void);
int start_thread(void *(*fn)(void *));
bool env_on(const char *name);
uint64_t CUPTIAPI mono_ns(void);
void calibrate(void);

/* gaptrace_cupti_names.c */
uint32_t name_use(const char *s);
uint32_t api_name_use(bool driver, uint32_t cbid);
void batch_fire(struct batch *b);

/* gaptrace_cupti_convert.c */
void process_buffer(uint8_t *buf, size_t valid, CUcontext ctx, uint32_t stream_id);

/* gaptrace_cupti_buffers.c */
void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records);
void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream_id, uint8_t *buf, size_t size,
			       size_t valid);
void pool_prealloc(void);
void pool_release(void);
void rx_start(void);
void rx_drain(uint64_t max_ns);
void rx_fork_child(void);

#pragma GCC visibility pop

#endif /* GAPTRACE_CUPTI_PRIV_H */
