/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * gaptrace-usdt.h: the public USDT interface through which any program feeds
 * GPU activity and work units to gaptrace (provider "gaptrace").
 *
 * Names, argument order and the gpu_batch record layout are a stable contract:
 * they may grow (new probes, longer records announced through record_size) but
 * never change meaning.  All timestamps are CLOCK_MONOTONIC nanoseconds.
 *
 *   GAPTRACE_UNIT_BEGIN(unit_id)              a work unit starts (this thread)
 *   GAPTRACE_UNIT_END(unit_id)                a work unit ends
 *   GAPTRACE_GPU_LAUNCH(device, stream, op)   at the host call that launches op
 *   GAPTRACE_GPU_OP(device, stream, op, start_ns, end_ns)
 *                                             after op ran on the device
 *   GAPTRACE_GPU_BATCH(records, count)        many ops at once (struct below)
 *   GAPTRACE_GPU_NAME(name_id, name)          interns a kernel/API name
 *
 * Each probe has a semaphore: GAPTRACE_*_ENABLED() is true only while a tracer
 * is attached, so a program can skip building records nobody reads.
 *
 * Build needs <sys/sdt.h> (Debian: systemtap-sdt-dev).  Define
 * GAPTRACE_USDT_DISABLE to compile every macro to nothing.
 */
#ifndef GAPTRACE_USDT_H
#define GAPTRACE_USDT_H

#ifndef __BPF__
#include <stdint.h> /* BPF programs get uint*_t from vmlinux.h */
#endif

/* gaptrace_gpu_rec.kind */
enum gaptrace_gpu_kind {
	GAPTRACE_GPU_KERNEL = 1,
	GAPTRACE_GPU_MEMCPY = 2,
	GAPTRACE_GPU_MEMSET = 3,
	GAPTRACE_GPU_SYNC = 4,	  /* host waited on the device (start..end) */
	GAPTRACE_GPU_API = 5,	  /* host API call: tid, start..end, op_id = correlation */
	GAPTRACE_GPU_RANGE = 6,	  /* annotation range (NVTX): tid, start..end, name_id */
	GAPTRACE_GPU_DROPPED = 7, /* bytes = records the producer lost */
};

/* Largest number of records gaptrace reads from one gpu_batch firing. */
#define GAPTRACE_GPU_BATCH_MAX 64

/*
 * One GPU activity record of a gpu_batch array.  Producers pass
 * sizeof(struct gaptrace_gpu_rec) as record_size; readers take the fields they
 * know and skip the rest, so the struct may only grow at its end.
 */
struct gaptrace_gpu_rec {
	uint64_t start_ns;
	uint64_t end_ns;
	uint64_t op_id; /* ties an op to its launch (CUPTI correlation id) */
	uint64_t bytes; /* memcpy/memset size, a count for DROPPED; API: the
			 * correlation id of a driver call folded into this
			 * runtime call when it differs (0: none) */
	uint32_t device;
	uint32_t stream;
	uint32_t context;
	uint32_t name_id; /* from GAPTRACE_GPU_NAME, 0 = none */
	uint16_t kind;	  /* enum gaptrace_gpu_kind */
	uint16_t subkind; /* memcpy direction, API callback id, ... */
	uint32_t tid;	  /* host thread for API and RANGE records, else 0 */
	uint32_t grid[3];
	uint32_t block[3];
};

#ifdef __cplusplus
static_assert(sizeof(struct gaptrace_gpu_rec) == 80, "gpu_batch ABI");
#else
_Static_assert(sizeof(struct gaptrace_gpu_rec) == 80, "gpu_batch ABI");
#endif

#if defined(GAPTRACE_USDT_DISABLE) || defined(__BPF__)
#define GAPTRACE_UNIT_BEGIN(id)			     ((void)0)
#define GAPTRACE_UNIT_END(id)			     ((void)0)
#define GAPTRACE_GPU_LAUNCH(dev, stream, op)	     ((void)0)
#define GAPTRACE_GPU_OP(dev, stream, op, start, end) ((void)0)
#define GAPTRACE_GPU_BATCH(recs, count)		     ((void)0)
#define GAPTRACE_GPU_NAME(id, name)		     ((void)0)
#define GAPTRACE_ENABLED(probe)			     0
#else

#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

/*
 * Semaphores live in .probes; the kernel bumps them while a uprobe with a
 * reference counter is attached.  One set per program image (hidden, so each
 * shared object that includes this header owns its own and gaptrace finds it
 * through that object's stapsdt notes).
 */
#define GAPTRACE__SEM(name)                                      \
	__extension__ unsigned short gaptrace_##name##_semaphore \
	    __attribute__((unused, weak, section(".probes"), visibility("hidden")))

#ifndef GAPTRACE_USDT_NO_SEMAPHORE_DEFS
GAPTRACE__SEM(unit_begin);
GAPTRACE__SEM(unit_end);
GAPTRACE__SEM(gpu_launch);
GAPTRACE__SEM(gpu_op);
GAPTRACE__SEM(gpu_batch);
GAPTRACE__SEM(gpu_name);
#endif

#define GAPTRACE_ENABLED(probe) __builtin_expect(gaptrace_##probe##_semaphore != 0, 0)

#define GAPTRACE_UNIT_BEGIN(id) STAP_PROBE1(gaptrace, unit_begin, (uint64_t)(id))
#define GAPTRACE_UNIT_END(id)	STAP_PROBE1(gaptrace, unit_end, (uint64_t)(id))
#define GAPTRACE_GPU_LAUNCH(dev, stream, op) \
	STAP_PROBE3(gaptrace, gpu_launch, (uint32_t)(dev), (uint32_t)(stream), (uint64_t)(op))
#define GAPTRACE_GPU_OP(dev, stream, op, start, end)                                       \
	STAP_PROBE5(gaptrace, gpu_op, (uint32_t)(dev), (uint32_t)(stream), (uint64_t)(op), \
		    (uint64_t)(start), (uint64_t)(end))
#define GAPTRACE_GPU_BATCH(recs, count)                                           \
	STAP_PROBE3(gaptrace, gpu_batch, (const void *)(recs), (uint32_t)(count), \
		    (uint32_t)sizeof(struct gaptrace_gpu_rec))
#define GAPTRACE_GPU_NAME(id, name) \
	STAP_PROBE2(gaptrace, gpu_name, (uint32_t)(id), (const char *)(name))

#endif /* GAPTRACE_USDT_DISABLE */
#endif /* GAPTRACE_USDT_H */
