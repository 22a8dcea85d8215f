// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * gaptrace_cupti_convert.c: CUPTI activity records -> struct gaptrace_gpu_rec
 * (gaptrace-usdt.h): timestamps onto CLOCK_MONOTONIC, records with missing
 * or reversed times skipped and counted, driver API calls folded into their
 * runtime calls, NVTX start/end markers paired into ranges, CUPTI's drops
 * reported.  tests/test_cupti_convert.c checks it field by field.
 */
#include <stdlib.h>
#include <string.h>

#include "gaptrace_cupti_priv.h"

/* A timestamp this far past CLOCK_MONOTONIC's "now" is on another clock. */
#define FOREIGN_NS (10 * NSEC_PER_SEC)

#define RANGES_SLOTS 4096

/* gaptrace_gpu_rec.subkind of DROPPED records */
#define DROP_CUPTI   0 /* cuptiActivityGetNumDroppedRecords */
#define DROP_INVALID 1 /* records with missing or reversed timestamps, skipped here */
/* gaptrace_gpu_rec.subkind of API records: cbid, with this bit for the driver domain */
#define API_DRIVER_BIT 0x8000

/*
 * Fields read from the newest record versions that CUDA 13.0 defines.  Newer
 * CUPTI versions only append fields, so these offsets are what we rely on.
 */
_Static_assert(offsetof(CUpti_ActivityKernel10, start) == 16, "CUPTI kernel record layout");
_Static_assert(offsetof(CUpti_ActivityKernel10, deviceId) == 40, "CUPTI kernel record layout");
_Static_assert(offsetof(CUpti_ActivityKernel10, correlationId) == 92, "CUPTI kernel record layout");
_Static_assert(offsetof(CUpti_ActivityKernel10, name) == 104, "CUPTI kernel record layout");
_Static_assert(offsetof(CUpti_ActivityMemcpy6, correlationId) == 44, "CUPTI memcpy record layout");
_Static_assert(offsetof(CUpti_ActivityMemset4, correlationId) == 44, "CUPTI memset record layout");
_Static_assert(offsetof(CUpti_ActivityAPI, correlationId) == 32, "CUPTI API record layout");
_Static_assert(offsetof(CUpti_ActivitySynchronization2, streamId) == 32,
	       "CUPTI synchronization record layout");
_Static_assert(offsetof(CUpti_ActivityMarker2, name) == 40, "CUPTI marker record layout");

struct gt_stats g_stats;
static int g_drop_reported;

/* ---- NVTX ranges: start and end markers, paired by marker id ---- */

struct open_range {
	uint64_t start_ns;
	uint32_t marker_id;
	uint32_t tid;
	uint32_t name_id;
	bool used;
};

static pthread_mutex_t g_ranges_mu = PTHREAD_MUTEX_INITIALIZER;
static struct open_range g_ranges[RANGES_SLOTS];

/* ---- one completed buffer, converted and fired in chunks ---- */

static struct gaptrace_gpu_rec *batch_add(struct batch *b)
{
	struct gaptrace_gpu_rec *r;

	if (b->n == GAPTRACE_GPU_BATCH_MAX)
		batch_fire(b);
	r = &b->r[b->n++];
	memset(r, 0, sizeof(*r));
	return r;
}

static uint64_t to_mono(struct batch *b, uint64_t t)
{
	if (g_clock.mode == CLK_OFFSET)
		return (uint64_t)((int64_t)t + b->off);
	/*
	 * Seen on some CUDA 12.6-13.0 setups: records that ignore the timestamp
	 * callback and carry CUPTI's default wall-clock time.  Those lie decades
	 * past the monotonic "now"; bring them back instead of dropping them.
	 */
	if (t > b->now + FOREIGN_NS) {
		b->foreign++;
		return (uint64_t)((int64_t)t + b->off_foreign);
	}
	return t;
}

/* Start and end both known and in order, else the record is skipped and counted. */
static bool times_ok(struct batch *b, uint64_t start, uint64_t end)
{
	if (start == 0 || end == 0 || end < start) {
		b->invalid++;
		return false;
	}
	return true;
}

static uint32_t kernel_name(struct batch *b, const char *p)
{
	unsigned int slot = (unsigned int)(((uintptr_t)p >> 4) % KCACHE_SLOTS);

	/* CUPTI shares one name string among all records of a kernel. */
	if (p && b->kcache[slot].p == p)
		return b->kcache[slot].id;
	b->kcache[slot].p = p;
	b->kcache[slot].id = name_use(p);
	return b->kcache[slot].id;
}

static uint32_t api_name(struct batch *b, bool driver, uint32_t cbid)
{
	uint32_t key = (driver ? API_DRIVER_BIT : 0) | (cbid & 0x7fff), slot;

	if (key == 0)
		return api_name_use(driver, cbid);
	slot = (key * 2654435761u) >> 27;
	if (b->acache[slot].key != key) {
		b->acache[slot].key = key;
		b->acache[slot].id = api_name_use(driver, cbid);
	}
	return b->acache[slot].id;
}

/* Very frequent calls that launch and wait for nothing: not worth a record each. */
static bool api_skipped(bool driver, uint32_t cbid)
{
	if (!driver) {
		switch (cbid) {
		case CUPTI_RUNTIME_TRACE_CBID_cudaGetLastError_v3020:
		case CUPTI_RUNTIME_TRACE_CBID_cudaPeekAtLastError_v3020:
		case CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020:
		case CUPTI_RUNTIME_TRACE_CBID_cudaStreamIsCapturing_v10000:
		case CUPTI_RUNTIME_TRACE_CBID_cudaStreamIsCapturing_ptsz_v10000:
			return true;
		default:
			return false;
		}
	}
	switch (cbid) {
	case CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent:
	case CUPTI_DRIVER_TRACE_CBID_cuCtxSetCurrent:
	case CUPTI_DRIVER_TRACE_CBID_cuCtxGetDevice:
	case CUPTI_DRIVER_TRACE_CBID_cuPointerGetAttribute:
	case CUPTI_DRIVER_TRACE_CBID_cuPointerGetAttributes:
	case CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxGetState:
	case CUPTI_DRIVER_TRACE_CBID_cuKernelGetAttribute:
	case CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress:
	case CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress_v2:
	case CUPTI_DRIVER_TRACE_CBID_cuGetExportTable:
	case CUPTI_DRIVER_TRACE_CBID_cuDriverGetVersion:
	case CUPTI_DRIVER_TRACE_CBID_cuGetErrorString:
	/* Once per launch on the H200 (CUDA 13), beside every cudaLaunchKernel. */
	case CUPTI_DRIVER_TRACE_CBID_cuKernelGetName:
	case CUPTI_DRIVER_TRACE_CBID_cuFuncGetName:
		return true;
	default:
		return false;
	}
}

static void on_kernel(struct batch *b, const CUpti_ActivityKernel10 *k)
{
	struct gaptrace_gpu_rec *r;

	if (!times_ok(b, k->start, k->end))
		return;
	r = batch_add(b);
	r->kind = GAPTRACE_GPU_KERNEL;
	r->start_ns = to_mono(b, k->start);
	r->end_ns = to_mono(b, k->end);
	r->op_id = k->correlationId;
	r->device = k->deviceId;
	r->stream = k->streamId;
	r->context = k->contextId;
	r->name_id = kernel_name(b, k->name);
	r->grid[0] = (uint32_t)k->gridX;
	r->grid[1] = (uint32_t)k->gridY;
	r->grid[2] = (uint32_t)k->gridZ;
	r->block[0] = (uint32_t)k->blockX;
	r->block[1] = (uint32_t)k->blockY;
	r->block[2] = (uint32_t)k->blockZ;
}

/* Copies and sets share their fields; only the record types differ. */
static void add_transfer(struct batch *b, uint16_t kind, uint16_t subkind, uint64_t start,
			 uint64_t end, uint64_t corr, uint64_t bytes, uint32_t device,
			 uint32_t stream, uint32_t context)
{
	struct gaptrace_gpu_rec *r;

	if (!times_ok(b, start, end))
		return;
	r = batch_add(b);
	r->kind = kind;
	r->subkind = subkind;
	r->start_ns = to_mono(b, start);
	r->end_ns = to_mono(b, end);
	r->op_id = corr;
	r->bytes = bytes;
	r->device = device;
	r->stream = stream;
	r->context = context;
}

static void on_memcpy(struct batch *b, const CUpti_ActivityMemcpy6 *m)
{
	/* The driver call's id; the runtime call's is runtimeCorrelationId. */
	add_transfer(b, GAPTRACE_GPU_MEMCPY, m->copyKind, m->start, m->end, m->correlationId,
		     m->bytes, m->deviceId, m->streamId, m->contextId);
}

static void on_memcpy_p2p(struct batch *b, const CUpti_ActivityMemcpyPtoP4 *m)
{
	add_transfer(b, GAPTRACE_GPU_MEMCPY, m->copyKind, m->start, m->end, m->correlationId,
		     m->bytes, m->deviceId, m->streamId, m->contextId);
}

static void on_memset(struct batch *b, const CUpti_ActivityMemset4 *m)
{
	add_transfer(b, GAPTRACE_GPU_MEMSET, m->memoryKind, m->start, m->end, m->correlationId,
		     m->bytes, m->deviceId, m->streamId, m->contextId);
}

static void on_sync(struct batch *b, const CUpti_ActivitySynchronization2 *s)
{
	struct gaptrace_gpu_rec *r;

	if (!times_ok(b, s->start, s->end))
		return;
	r = batch_add(b);
	r->kind = GAPTRACE_GPU_SYNC;
	r->subkind = (uint16_t)s->type;
	r->start_ns = to_mono(b, s->start);
	r->end_ns = to_mono(b, s->end);
	r->op_id = s->correlationId;
	r->context = s->contextId;
	/* Not valid for context and event synchronisation. */
	r->stream = s->streamId == CUPTI_SYNCHRONIZATION_INVALID_VALUE ? 0 : s->streamId;
}

/*
 * A runtime call makes driver calls (cudaLaunchKernel -> cuLaunchKernel), and
 * CUPTI writes a record for each: one op, two host records.  The driver one
 * is folded into its runtime call (same thread, inside its time), its
 * correlation id kept in the runtime record's bytes field in case the device
 * record names that one.  The pair sits within the last few records.
 */
#define API_FOLD_BACK 8

/*
 * The record an API call goes into: a new one, or that of a driver call it
 * ran around (*inner: that call's id).  NULL when it is a driver call folded
 * into its runtime call.
 */
static struct gaptrace_gpu_rec *api_slot(struct batch *b, const CUpti_ActivityAPI *a, bool driver,
					 uint64_t start, uint64_t end, uint64_t *inner)
{
	unsigned int lo = b->n > API_FOLD_BACK ? b->n - API_FOLD_BACK : 0;

	*inner = 0;
	for (unsigned int i = b->n; i-- > lo;) {
		struct gaptrace_gpu_rec *o = &b->r[i];
		bool o_driver = o->subkind & API_DRIVER_BIT;

		if (o->kind != GAPTRACE_GPU_API || o->tid != a->threadId || o_driver == driver)
			continue;
		if (driver && o->start_ns <= start && end <= o->end_ns) {
			/* This driver call ran inside the runtime call o. */
			if (a->correlationId != o->op_id && !o->bytes)
				o->bytes = a->correlationId;
			return NULL;
		}
		if (!driver && start <= o->start_ns && o->end_ns <= end) {
			/* o was a driver call inside this one: this record takes its place. */
			*inner = o->op_id;
			memset(o, 0, sizeof(*o));
			return o;
		}
	}
	return batch_add(b);
}

static void on_api(struct batch *b, const CUpti_ActivityAPI *a, bool driver)
{
	struct gaptrace_gpu_rec *r;
	uint64_t start, end, inner;

	if (api_skipped(driver, a->cbid))
		return;
	if (!times_ok(b, a->start, a->end))
		return;
	start = to_mono(b, a->start);
	end = to_mono(b, a->end);
	r = api_slot(b, a, driver, start, end, &inner);
	if (!r)
		return;
	r->kind = GAPTRACE_GPU_API;
	r->subkind = (uint16_t)((a->cbid & 0x7fff) | (driver ? API_DRIVER_BIT : 0));
	r->start_ns = start;
	r->end_ns = end;
	r->op_id = a->correlationId;
	r->bytes = inner != a->correlationId ? inner : 0;
	r->tid = a->threadId; /* gettid(): CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM */
	r->name_id = api_name(b, driver, a->cbid);
}

static void on_marker(struct batch *b, const CUpti_ActivityMarker2 *m)
{
	unsigned int slot = m->id % RANGES_SLOTS;
	uint32_t tid = m->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ? m->objectId.pt.threadId : 0;
	struct open_range o;

	if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
		uint32_t name_id = name_use(m->name);

		pthread_mutex_lock(&g_ranges_mu);
		/* More than RANGES_SLOTS open ranges: the oldest colliding one is lost. */
		g_ranges[slot] = (struct open_range){.start_ns = m->timestamp,
						     .marker_id = m->id,
						     .tid = tid,
						     .name_id = name_id,
						     .used = true};
		pthread_mutex_unlock(&g_ranges_mu);
		return;
	}
	if (!(m->flags & CUPTI_ACTIVITY_FLAG_MARKER_END))
		return; /* instantaneous markers and sync events carry no duration */
	pthread_mutex_lock(&g_ranges_mu);
	o = g_ranges[slot];
	if (o.used && o.marker_id == m->id)
		g_ranges[slot].used = false;
	pthread_mutex_unlock(&g_ranges_mu);
	if (!o.used || o.marker_id != m->id)
		return; /* began before the tracer attached */
	if (!times_ok(b, o.start_ns, m->timestamp))
		return;
	{
		struct gaptrace_gpu_rec *r = batch_add(b);

		r->kind = GAPTRACE_GPU_RANGE;
		r->start_ns = to_mono(b, o.start_ns);
		r->end_ns = to_mono(b, m->timestamp);
		r->op_id = m->id;
		r->tid = o.tid;
		r->name_id = o.name_id;
	}
}

static void add_dropped(struct batch *b, uint16_t why, uint64_t count)
{
	struct gaptrace_gpu_rec *r = batch_add(b);

	r->kind = GAPTRACE_GPU_DROPPED;
	r->subkind = why;
	r->start_ns = r->end_ns = b->now;
	r->bytes = count;
}

/*
 * GAPTRACE_CUPTI_TRACE=N: the first N API and kernel records as CUPTI gave
 * them, on stderr (order, thread, raw times, correlation): how the records
 * of one operation arrive, for whoever changes how they are merged.
 */
static void trace_record(const CUpti_Activity *rec)
{
	static long left = -1;
	const CUpti_ActivityAPI *a = (const CUpti_ActivityAPI *)rec;
	const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)rec;

	if (left < 0) {
		const char *e = getenv("GAPTRACE_CUPTI_TRACE");

		left = e ? strtol(e, NULL, 10) : 0;
	}
	if (left <= 0)
		return;
	if (rec->kind == CUPTI_ACTIVITY_KIND_RUNTIME || rec->kind == CUPTI_ACTIVITY_KIND_DRIVER) {
		left--;
		say("trace: %s cbid %u tid %u start %llu end %llu corr %u",
		    rec->kind == CUPTI_ACTIVITY_KIND_DRIVER ? "driver" : "runtime", a->cbid,
		    a->threadId, (unsigned long long)a->start, (unsigned long long)a->end,
		    a->correlationId);
	} else if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ||
		   rec->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
		left--;
		say("trace: kernel start %llu end %llu corr %u", (unsigned long long)k->start,
		    (unsigned long long)k->end, k->correlationId);
	}
}

void process_buffer(uint8_t *buf, size_t valid, CUcontext ctx, uint32_t stream_id)
{
	struct batch *b;
	CUpti_Activity *rec = NULL;
	size_t dropped = 0;

	/* ~6 KiB: off the stack of whichever thread CUPTI delivers on. */
	b = calloc(1, sizeof(*b));
	if (!b)
		return;
	b->now = mono_now();
	b->off = __atomic_load_n(&g_clock.off_cupti, __ATOMIC_RELAXED);
	b->off_foreign = b->off > (int64_t)FOREIGN_NS || b->off < -(int64_t)FOREIGN_NS
			     ? b->off
			     : __atomic_load_n(&g_clock.off_real, __ATOMIC_RELAXED);
	while (valid && cuptiActivityGetNextRecord(buf, valid, &rec) == CUPTI_SUCCESS) {
		trace_record(rec);
		switch (rec->kind) {
		case CUPTI_ACTIVITY_KIND_KERNEL:
		case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
			on_kernel(b, (const CUpti_ActivityKernel10 *)rec);
			break;
		case CUPTI_ACTIVITY_KIND_MEMCPY:
			on_memcpy(b, (const CUpti_ActivityMemcpy6 *)rec);
			break;
		case CUPTI_ACTIVITY_KIND_MEMCPY2:
			on_memcpy_p2p(b, (const CUpti_ActivityMemcpyPtoP4 *)rec);
			break;
		case CUPTI_ACTIVITY_KIND_MEMSET:
			on_memset(b, (const CUpti_ActivityMemset4 *)rec);
			break;
		case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
			on_sync(b, (const CUpti_ActivitySynchronization2 *)rec);
			break;
		case CUPTI_ACTIVITY_KIND_RUNTIME:
			on_api(b, (const CUpti_ActivityAPI *)rec, false);
			break;
		case CUPTI_ACTIVITY_KIND_DRIVER:
			on_api(b, (const CUpti_ActivityAPI *)rec, true);
			break;
		case CUPTI_ACTIVITY_KIND_MARKER:
			on_marker(b, (const CUpti_ActivityMarker2 *)rec);
			break;
		default:
			break;
		}
	}
	if (cuptiActivityGetNumDroppedRecords(ctx, stream_id, &dropped) == CUPTI_SUCCESS &&
	    dropped) {
		add_dropped(b, DROP_CUPTI, dropped);
		if (!__atomic_exchange_n(&g_drop_reported, 1, __ATOMIC_ACQ_REL))
			say("CUPTI dropped %zu activity records (its buffers were full); "
			    "gaptrace counts them as lost",
			    dropped);
	}
	if (b->invalid)
		add_dropped(b, DROP_INVALID, b->invalid);
	batch_fire(b);
	__atomic_fetch_add(&g_stats.sent, b->sent, __ATOMIC_RELAXED);
	__atomic_fetch_add(&g_stats.invalid, b->invalid, __ATOMIC_RELAXED);
	__atomic_fetch_add(&g_stats.dropped, dropped, __ATOMIC_RELAXED);
	if (b->foreign && !__atomic_fetch_add(&g_stats.foreign, b->foreign, __ATOMIC_RELAXED))
		vlog("records ignore the timestamp callback; converting them with a measured "
		     "offset of %lld ns",
		     (long long)b->off_foreign);
	free(b);
}
