// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_cupti_convert.c: cmocka tests of the CUPTI library's conversion
 * (cupti/gaptrace_cupti_convert.c): hand-built CUPTI activity records go
 * through process_buffer and each struct gaptrace_gpu_rec that comes out is
 * checked field by field against values worked out by hand.
 *
 * No CUPTI at run time: this file stands in for the three CUPTI calls the
 * conversion and the name table make (records, drop count, callback names),
 * takes the records where they would reach the tracer (-Wl,--wrap=batch_fire)
 * and fixes the conversion's "now" (-Wl,--wrap=mono_now).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "gaptrace_cupti_priv.h"

#define NOW	 1000000000000ULL /* the conversion's CLOCK_MONOTONIC "now": 1000 s */
#define MAX_OUT	 256
#define DRV	 0x8000 /* subkind bit of a driver API record */
#define TID	 4242
#define WALL_OFF 1700000000000000000LL /* CLOCK_REALTIME - CLOCK_MONOTONIC, about 2023 */

/* ---- stand-ins for CUPTI ---- */

/* The "buffer" handed to process_buffer: an array of record pointers. */
static const CUpti_Activity *const *feed;
static size_t feed_n, feed_at;
static size_t feed_dropped;

CUptiResult cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid, CUpti_Activity **record)
{
	(void)buffer;
	(void)valid;
	if (!*record)
		feed_at = 0;
	if (feed_at >= feed_n)
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	*record = (CUpti_Activity *)feed[feed_at++];
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext ctx, uint32_t stream, size_t *dropped)
{
	(void)ctx;
	(void)stream;
	*dropped = feed_dropped;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid, const char **name)
{
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API &&
	    cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000)
		*name = "cudaLaunchKernel_v7000";
	else if (domain == CUPTI_CB_DOMAIN_DRIVER_API &&
		 cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel)
		*name = "cuLaunchKernel";
	else if (domain == CUPTI_CB_DOMAIN_DRIVER_API &&
		 cbid == CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2)
		*name = "cuMemcpyHtoDAsync_v2";
	else
		return CUPTI_ERROR_INVALID_PARAMETER;
	return CUPTI_SUCCESS;
}

/* Only calibrate() calls it, and no test does. */
CUptiResult cuptiGetTimestamp(uint64_t *t)
{
	*t = 0;
	return CUPTI_ERROR_NOT_INITIALIZED;
}

/* ---- the seams: what reaches the tracer, and the clock ---- */

static struct gaptrace_gpu_rec out[MAX_OUT];
static unsigned int n_out, n_fires;

void __real_batch_fire(struct batch *b);

void __wrap_batch_fire(struct batch *b)
{
	if (b->n)
		n_fires++;
	for (unsigned int i = 0; i < b->n && n_out < MAX_OUT; i++)
		out[n_out++] = b->r[i];
	__real_batch_fire(b);
}

uint64_t __wrap_mono_now(void)
{
	return NOW;
}

/* Converts one buffer of these records; CUPTI reports `dropped` lost ones. */
static void convert(const CUpti_Activity *const *recs, size_t n, size_t dropped)
{
	feed = recs;
	feed_n = n;
	feed_dropped = dropped;
	process_buffer((uint8_t *)recs, n * sizeof(*recs), NULL, 0);
}

static int fx_setup(void **state)
{
	(void)state;
	memset(out, 0, sizeof(out));
	n_out = n_fires = 0;
	memset(&g_clock, 0, sizeof(g_clock));
	g_clock.mode = CLK_CALLBACK;
	memset(&g_stats, 0, sizeof(g_stats));
	return 0;
}

/* Every field of one record. */
struct want {
	uint16_t kind, subkind;
	uint64_t start, end, op, bytes;
	uint32_t device, stream, context, name, tid;
	uint32_t grid[3], block[3];
};

static void check_rec(const struct gaptrace_gpu_rec *r, const struct want *w)
{
	assert_int_equal(r->kind, w->kind);
	assert_int_equal(r->subkind, w->subkind);
	assert_int_equal(r->start_ns, w->start);
	assert_int_equal(r->end_ns, w->end);
	assert_int_equal(r->op_id, w->op);
	assert_int_equal(r->bytes, w->bytes);
	assert_int_equal(r->device, w->device);
	assert_int_equal(r->stream, w->stream);
	assert_int_equal(r->context, w->context);
	assert_int_equal(r->name_id, w->name);
	assert_int_equal(r->tid, w->tid);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(r->grid[i], w->grid[i]);
		assert_int_equal(r->block[i], w->block[i]);
	}
}

static CUpti_ActivityKernel10 kernel(const char *name, uint64_t start, uint64_t end, uint32_t corr)
{
	CUpti_ActivityKernel10 k;

	memset(&k, 0, sizeof(k));
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.start = start;
	k.end = end;
	k.correlationId = corr;
	k.deviceId = 1;
	k.streamId = 7;
	k.contextId = 3;
	k.name = name;
	k.gridX = 128;
	k.gridY = 2;
	k.gridZ = 1;
	k.blockX = 256;
	k.blockY = 4;
	k.blockZ = 1;
	return k;
}

static CUpti_ActivityAPI api(bool driver, uint32_t cbid, uint64_t start, uint64_t end,
			     uint32_t corr, uint32_t tid)
{
	CUpti_ActivityAPI a;

	memset(&a, 0, sizeof(a));
	a.kind = driver ? CUPTI_ACTIVITY_KIND_DRIVER : CUPTI_ACTIVITY_KIND_RUNTIME;
	a.cbid = cbid;
	a.start = start;
	a.end = end;
	a.processId = 99;
	a.threadId = tid;
	a.correlationId = corr;
	return a;
}

static CUpti_ActivityMarker2 marker(CUpti_ActivityFlag flags, uint64_t ts, uint32_t id,
				    const char *name)
{
	CUpti_ActivityMarker2 m;

	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MARKER;
	m.flags = flags;
	m.timestamp = ts;
	m.id = id;
	m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
	m.objectId.pt.processId = 99;
	m.objectId.pt.threadId = TID;
	m.name = name;
	return m;
}

/* ---- the tests ---- */

/* Two kernels of one name (one string, as CUPTI shares it) and one of another. */
static void test_convert_kernel(void **state)
{
	CUpti_ActivityKernel10 a = kernel("k_alpha", 5000, 9000, 42);
	CUpti_ActivityKernel10 b = kernel("k_beta", 9500, 9700, 43);
	CUpti_ActivityKernel10 c = kernel(a.name, 10000, 10100, 44);
	const CUpti_Activity *recs[] = {(void *)&a, (void *)&b, (void *)&c};
	uint32_t alpha, beta;

	(void)state;
	b.kind = CUPTI_ACTIVITY_KIND_KERNEL; /* the serial kind converts the same way */
	b.deviceId = 2;
	b.streamId = 13;
	b.contextId = 5;
	b.gridX = 1;
	b.blockZ = 64;
	convert(recs, 3, 0);
	alpha = name_use("k_alpha");
	beta = name_use("k_beta");
	assert_true(alpha != 0 && beta != 0 && alpha != beta);
	assert_int_equal(n_out, 3);
	check_rec(&out[0], &(struct want){.kind = GAPTRACE_GPU_KERNEL,
					  .start = 5000,
					  .end = 9000,
					  .op = 42,
					  .device = 1,
					  .stream = 7,
					  .context = 3,
					  .name = alpha,
					  .grid = {128, 2, 1},
					  .block = {256, 4, 1}});
	check_rec(&out[1], &(struct want){.kind = GAPTRACE_GPU_KERNEL,
					  .start = 9500,
					  .end = 9700,
					  .op = 43,
					  .device = 2,
					  .stream = 13,
					  .context = 5,
					  .name = beta,
					  .grid = {1, 2, 1},
					  .block = {256, 4, 64}});
	check_rec(&out[2], &(struct want){.kind = GAPTRACE_GPU_KERNEL,
					  .start = 10000,
					  .end = 10100,
					  .op = 44,
					  .device = 1,
					  .stream = 7,
					  .context = 3,
					  .name = alpha,
					  .grid = {128, 2, 1},
					  .block = {256, 4, 1}});
	assert_int_equal(g_stats.sent, 3);
	assert_int_equal(g_stats.invalid, 0);
}

/* A host-to-device copy, a peer copy and a set: direction or memory kind in subkind. */
static void test_convert_memcpy_memset(void **state)
{
	CUpti_ActivityMemcpy6 m;
	CUpti_ActivityMemcpyPtoP4 p;
	CUpti_ActivityMemset4 s;
	const CUpti_Activity *recs[] = {(void *)&m, (void *)&p, (void *)&s};

	(void)state;
	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD; /* 1 */
	m.bytes = 4096;
	m.start = 11000;
	m.end = 12500;
	m.deviceId = 1;
	m.contextId = 3;
	m.streamId = 7;
	m.correlationId = 60;
	m.runtimeCorrelationId = 59; /* not the one kept: the driver call's is */
	memset(&p, 0, sizeof(p));
	p.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
	p.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP; /* 10 */
	p.bytes = 1 << 20;
	p.start = 13000;
	p.end = 14000;
	p.deviceId = 2;
	p.contextId = 4;
	p.streamId = 8;
	p.srcDeviceId = 1;
	p.dstDeviceId = 2;
	p.correlationId = 61;
	memset(&s, 0, sizeof(s));
	s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
	s.value = 0xab;
	s.bytes = 512;
	s.start = 15000;
	s.end = 15010;
	s.deviceId = 1;
	s.contextId = 3;
	s.streamId = 9;
	s.correlationId = 62;
	s.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE; /* 3 */
	convert(recs, 3, 0);
	assert_int_equal(n_out, 3);
	check_rec(&out[0], &(struct want){.kind = GAPTRACE_GPU_MEMCPY,
					  .subkind = 1,
					  .start = 11000,
					  .end = 12500,
					  .op = 60,
					  .bytes = 4096,
					  .device = 1,
					  .stream = 7,
					  .context = 3});
	check_rec(&out[1], &(struct want){.kind = GAPTRACE_GPU_MEMCPY,
					  .subkind = 10,
					  .start = 13000,
					  .end = 14000,
					  .op = 61,
					  .bytes = 1048576,
					  .device = 2,
					  .stream = 8,
					  .context = 4});
	check_rec(&out[2], &(struct want){.kind = GAPTRACE_GPU_MEMSET,
					  .subkind = 3,
					  .start = 15000,
					  .end = 15010,
					  .op = 62,
					  .bytes = 512,
					  .device = 1,
					  .stream = 9,
					  .context = 3});
}

/* A stream synchronisation keeps its stream; a context one has none (0). */
static void test_convert_sync(void **state)
{
	CUpti_ActivitySynchronization2 a, b;
	const CUpti_Activity *recs[] = {(void *)&a, (void *)&b};

	(void)state;
	memset(&a, 0, sizeof(a));
	a.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
	a.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE; /* 3 */
	a.start = 20000;
	a.end = 26000;
	a.correlationId = 70;
	a.contextId = 3;
	a.streamId = 7;
	b = a;
	b.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE; /* 4 */
	b.start = 27000;
	b.end = 27500;
	b.correlationId = 71;
	b.streamId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
	convert(recs, 2, 0);
	assert_int_equal(n_out, 2);
	check_rec(&out[0], &(struct want){.kind = GAPTRACE_GPU_SYNC,
					  .subkind = 3,
					  .start = 20000,
					  .end = 26000,
					  .op = 70,
					  .stream = 7,
					  .context = 3});
	check_rec(&out[1], &(struct want){.kind = GAPTRACE_GPU_SYNC,
					  .subkind = 4,
					  .start = 27000,
					  .end = 27500,
					  .op = 71,
					  .context = 3});
}

/*
 * A runtime call and the driver call it made become one record, whichever
 * comes first; the driver call's id goes in bytes when it differs.  A driver
 * call on its own stays one; cudaGetLastError is skipped.
 */
static void test_convert_api(void **state)
{
	const uint32_t rt = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;   /* 211 */
	const uint32_t drv = CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel;	       /* 307 */
	const uint32_t cpy = CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2;     /* 277 */
	const uint32_t skip = CUPTI_RUNTIME_TRACE_CBID_cudaGetLastError_v3020; /* 10 */
	/* driver first, its own id 81 inside runtime 80 */
	CUpti_ActivityAPI d1 = api(true, drv, 31000, 33000, 81, TID);
	CUpti_ActivityAPI r1 = api(false, rt, 30000, 34000, 80, TID);
	/* runtime first, one id for both */
	CUpti_ActivityAPI r2 = api(false, rt, 40000, 44000, 90, TID);
	CUpti_ActivityAPI d2 = api(true, drv, 41000, 43000, 90, TID);
	/* a driver call on another thread, and a skipped call */
	CUpti_ActivityAPI d3 = api(true, cpy, 50000, 50700, 95, TID + 1);
	CUpti_ActivityAPI s = api(false, skip, 51000, 51010, 96, TID);
	const CUpti_Activity *recs[] = {(void *)&d1, (void *)&r1, (void *)&r2,
					(void *)&d2, (void *)&d3, (void *)&s};
	uint32_t launch = name_use("cudaLaunchKernel_v7000");
	uint32_t copy = name_use("cuMemcpyHtoDAsync_v2");

	(void)state;
	assert_true(launch != 0 && copy != 0 && launch != copy);
	convert(recs, 6, 0);
	assert_int_equal(n_out, 3);
	check_rec(&out[0], &(struct want){.kind = GAPTRACE_GPU_API,
					  .subkind = 211,
					  .start = 30000,
					  .end = 34000,
					  .op = 80,
					  .bytes = 81,
					  .name = launch,
					  .tid = TID});
	check_rec(&out[1], &(struct want){.kind = GAPTRACE_GPU_API,
					  .subkind = 211,
					  .start = 40000,
					  .end = 44000,
					  .op = 90,
					  .name = launch,
					  .tid = TID});
	check_rec(&out[2], &(struct want){.kind = GAPTRACE_GPU_API,
					  .subkind = DRV | 277,
					  .start = 50000,
					  .end = 50700,
					  .op = 95,
					  .name = copy,
					  .tid = TID + 1});
}

/*
 * NVTX: a start and an end marker of one id make a range; an end whose start
 * came before the tracer, and an instantaneous marker, make nothing.
 */
static void test_convert_marker(void **state)
{
	CUpti_ActivityMarker2 a = marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 60000, 501, "step");
	CUpti_ActivityMarker2 i = marker(CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, 61000, 502, "x");
	CUpti_ActivityMarker2 o = marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 62000, 503, NULL);
	CUpti_ActivityMarker2 b = marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 68000, 501, NULL);
	const CUpti_Activity *recs[] = {(void *)&a, (void *)&i, (void *)&o, (void *)&b};

	(void)state;
	convert(recs, 4, 0);
	assert_int_equal(n_out, 1);
	check_rec(&out[0], &(struct want){.kind = GAPTRACE_GPU_RANGE,
					  .start = 60000,
					  .end = 68000,
					  .op = 501,
					  .name = name_use("step"),
					  .tid = TID});
	assert_true(out[0].name_id != 0);
	/* The range was closed: a second end of the same id makes nothing. */
	n_out = 0;
	convert(recs + 3, 1, 0);
	assert_int_equal(n_out, 0);
}

/*
 * Reversed and missing times are skipped and counted in one DROPPED record
 * (subkind 1) after CUPTI's own count (subkind 0), both stamped "now".
 */
static void test_convert_invalid_and_dropped(void **state)
{
	CUpti_ActivityKernel10 ok = kernel("k_alpha", 70000, 71000, 110);
	CUpti_ActivityKernel10 rev = kernel("k_alpha", 73000, 72000, 111); /* end < start */
	CUpti_ActivityKernel10 nostart = kernel("k_alpha", 0, 74000, 112);
	CUpti_ActivityAPI rev_api =
	    api(false, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 76000, 75000, 113, TID);
	const CUpti_Activity *recs[] = {(void *)&rev, (void *)&ok, (void *)&nostart,
					(void *)&rev_api};

	(void)state;
	convert(recs, 4, 17);
	assert_int_equal(n_out, 3);
	assert_int_equal(out[0].kind, GAPTRACE_GPU_KERNEL);
	assert_int_equal(out[0].op_id, 110);
	check_rec(
	    &out[1],
	    &(struct want){
		.kind = GAPTRACE_GPU_DROPPED, .subkind = 0, .start = NOW, .end = NOW, .bytes = 17});
	check_rec(
	    &out[2],
	    &(struct want){
		.kind = GAPTRACE_GPU_DROPPED, .subkind = 1, .start = NOW, .end = NOW, .bytes = 3});
	assert_int_equal(g_stats.sent, 3);
	assert_int_equal(g_stats.invalid, 3);
	assert_int_equal(g_stats.dropped, 17);
}

/* No timestamp callback: CUPTI's clock plus the measured offset, for every record kind. */
static void test_convert_offset_clock(void **state)
{
	CUpti_ActivityKernel10 k = kernel("k_beta", 5250000, 5260000, 120);
	CUpti_ActivityAPI r =
	    api(false, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 5240000, 5245000, 120, TID);
	const CUpti_Activity *recs[] = {(void *)&r, (void *)&k};

	(void)state;
	g_clock.mode = CLK_OFFSET;
	g_clock.off_cupti = -250000; /* CUPTI's clock runs 250 us ahead of CLOCK_MONOTONIC */
	convert(recs, 2, 0);
	assert_int_equal(n_out, 2);
	assert_int_equal(out[0].kind, GAPTRACE_GPU_API);
	assert_int_equal(out[0].start_ns, 4990000);
	assert_int_equal(out[0].end_ns, 4995000);
	assert_int_equal(out[1].kind, GAPTRACE_GPU_KERNEL);
	assert_int_equal(out[1].start_ns, 5000000);
	assert_int_equal(out[1].end_ns, 5010000);
	assert_int_equal(g_stats.foreign, 0);
}

/*
 * Timestamp callback in place, but a record carries wall-clock time (more
 * than 10 s past "now"): brought back with the CLOCK_REALTIME offset, or with
 * CUPTI's own offset when that one is itself large.  Others stay as they are.
 */
static void test_convert_foreign_clock(void **state)
{
	CUpti_ActivityKernel10 mono = kernel("k_beta", 80000, 81000, 130);
	CUpti_ActivityKernel10 wall =
	    kernel("k_beta", (uint64_t)WALL_OFF + 82000, (uint64_t)WALL_OFF + 83000, 131);
	/* exactly 10 s past "now": still taken for CLOCK_MONOTONIC */
	CUpti_ActivityKernel10 edge =
	    kernel("k_beta", NOW + 10000000000ULL, NOW + 10000000000ULL, 132);
	const CUpti_Activity *recs[] = {(void *)&mono, (void *)&wall, (void *)&edge};

	(void)state;
	g_clock.off_cupti = 5;	      /* small: CUPTI's clock is the callback's */
	g_clock.off_real = -WALL_OFF; /* CLOCK_MONOTONIC - CLOCK_REALTIME */
	convert(recs, 3, 0);
	assert_int_equal(n_out, 3);
	assert_int_equal(out[0].start_ns, 80000);
	assert_int_equal(out[0].end_ns, 81000);
	assert_int_equal(out[1].start_ns, 82000);
	assert_int_equal(out[1].end_ns, 83000);
	assert_int_equal(out[2].start_ns, 1010000000000ULL);
	assert_int_equal(out[2].end_ns, 1010000000000ULL);
	assert_int_equal(g_stats.foreign, 2);

	/* CUPTI's own offset, when large, is the one used. */
	n_out = 0;
	g_clock.off_cupti = -WALL_OFF + 7;
	g_clock.off_real = 123;
	convert(recs + 1, 1, 0);
	assert_int_equal(n_out, 1);
	assert_int_equal(out[0].start_ns, 82007);
	assert_int_equal(out[0].end_ns, 83007);
}

/* More records than one gpu_batch firing holds: fired in order, 64 at a time. */
static void test_convert_batches(void **state)
{
	static CUpti_ActivityKernel10 k[GAPTRACE_GPU_BATCH_MAX + 6];
	static const CUpti_Activity *recs[GAPTRACE_GPU_BATCH_MAX + 6];
	const size_t n = GAPTRACE_GPU_BATCH_MAX + 6;

	(void)state;
	for (size_t i = 0; i < n; i++) {
		k[i] = kernel("k_alpha", 100000 + i * 10, 100005 + i * 10, (uint32_t)(1000 + i));
		recs[i] = (void *)&k[i];
	}
	convert(recs, n, 0);
	assert_int_equal(n_fires, 2);
	assert_int_equal(n_out, 70);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(out[i].op_id, 1000 + i);
		assert_int_equal(out[i].start_ns, 100000 + i * 10);
	}
	assert_int_equal(g_stats.sent, 70);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup(test_convert_kernel, fx_setup),
	    cmocka_unit_test_setup(test_convert_memcpy_memset, fx_setup),
	    cmocka_unit_test_setup(test_convert_sync, fx_setup),
	    cmocka_unit_test_setup(test_convert_api, fx_setup),
	    cmocka_unit_test_setup(test_convert_marker, fx_setup),
	    cmocka_unit_test_setup(test_convert_invalid_and_dropped, fx_setup),
	    cmocka_unit_test_setup(test_convert_offset_clock, fx_setup),
	    cmocka_unit_test_setup(test_convert_foreign_clock, fx_setup),
	    cmocka_unit_test_setup(test_convert_batches, fx_setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
