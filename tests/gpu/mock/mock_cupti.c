// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * mock_cupti.c: a stand-in libcupti.so.13 with a fake GPU, so that
 * libgaptrace-cupti.so's data path runs on machines without one.
 *
 * It implements the CUPTI calls the library makes, with the real headers'
 * record layouts, and a tiny fake CUDA for tests/gpu/mock/mock_app.c: each
 * mock_launch() writes a runtime and a driver API record and a kernel record
 * (optionally a memcpy) queued behind the previous one; mock_sync() sleeps to
 * the device's end and writes a synchronisation record; mock_host_alloc() and
 * mock_free_host() run the mock libcuda's cuMemHostAlloc/cuMemFreeHost and
 * write cudaHostAlloc/cudaFreeHost runtime records around the driver records,
 * by their real call ids and names; mock_marker() writes
 * NVTX-style start/end markers.  Records go into the buffers the library
 * hands out and come back through its completion callback on flush.
 *
 * Knobs (environment): MOCK_SUBSCRIBE_FAIL (another subscriber holds CUPTI),
 * MOCK_ENABLE_FAIL (kernel activity refused), MOCK_DRIVER_OWN_ID (device
 * records carry the nested driver call's own id), MOCK_NO_API_CALLS (no per-call
 * API enabling: the library enables the whole kinds), MOCK_NO_TSCB (no timestamp
 * callback: records on CLOCK_REALTIME), MOCK_FOREIGN (the callback is accepted
 * but ignored), MOCK_TRACE (log enables and flushes), MOCK_EVENTS=FILE (append
 * one line per subscribe, unsubscribe and finalize, and per other client's try
 * (mock_other_client), saying where it happened).
 *
 * API callbacks: with a domain enabled (cuptiEnableDomain), each fake API call
 * calls the subscriber at its exit, as CUPTI does.  cuptiFinalize forgets the
 * subscriber, the callbacks and the enabled kinds, as CUPTI does.
 */
#include <cupti.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_FULL 256

struct buf {
	uint8_t *p;
	size_t size, used;
	uint64_t max_end; /* latest end of a record in it: complete after that */
};

static CUpti_BuffersCallbackRequestFunc req_fn;
static CUpti_BuffersCallbackCompleteFunc comp_fn;
static CUpti_TimestampCallbackFunc ts_fn;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int enabled[64];
/* Per-call switches, as CUPTI >= 12 has them: 0 follow the kind, 1 on, 2 off. */
static unsigned char api_on[2][1024];
static struct buf cur, full[MAX_FULL];
static int nfull;
static uint32_t next_corr = 1, next_marker = 1;
static uint64_t dev_free, dropped;
static int subscribed;
static char holder[64];
static CUpti_CallbackFunc sub_fn;
static void *sub_ud;
static int dom_on[CUPTI_CB_DOMAIN_SIZE];
static __thread int in_api_cb; /* this thread is in the subscriber's API exit callback */

static void event(const char *fmt, const char *arg)
{
	const char *path = getenv("MOCK_EVENTS");
	FILE *f = path ? fopen(path, "a") : NULL;

	if (!f)
		return;
	fprintf(f, fmt, arg);
	fputc('\n', f);
	fclose(f);
}

static uint64_t clock_ns(clockid_t c)
{
	struct timespec t;

	clock_gettime(c, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static uint64_t mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

/* What CUPTI would stamp for a monotonic time: the callback's clock, else wall time. */
/*
 * CUPTI's own clock: CLOCK_REALTIME at one fixed offset, measured once, as a
 * real clock would be.  Measured per call, the two reads jittered by more
 * than a short record lasts on a loaded VM and made end < start (the library
 * counted it invalid: 1 run in ~7).
 */
static uint64_t stamp(uint64_t m)
{
	static int64_t off;
	static int have;

	if (ts_fn && !getenv("MOCK_FOREIGN"))
		return m;
	if (!__atomic_load_n(&have, __ATOMIC_ACQUIRE)) {
		off = (int64_t)clock_ns(CLOCK_REALTIME) - (int64_t)mono_ns();
		__atomic_store_n(&have, 1, __ATOMIC_RELEASE);
	}
	return (uint64_t)((int64_t)m + off);
}

static size_t rec_size(CUpti_ActivityKind k)
{
	switch (k) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		return sizeof(CUpti_ActivityKernel10);
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER:
		return sizeof(CUpti_ActivityAPI);
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		return sizeof(CUpti_ActivityMemcpy6);
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
		return sizeof(CUpti_ActivitySynchronization2);
	case CUPTI_ACTIVITY_KIND_MARKER:
		return sizeof(CUpti_ActivityMarker2);
	default:
		return 0;
	}
}

static size_t rec_step(CUpti_ActivityKind k)
{
	return (rec_size(k) + 7) & ~(size_t)7;
}

/* Caller holds mu.  NULL when the kind is off or no buffer was given (dropped). */
static void *rec_alloc(CUpti_ActivityKind k, uint64_t end)
{
	size_t sz = rec_step(k);
	void *r;

	if (!enabled[k])
		return NULL;
	if (!cur.p || cur.used + sz > cur.size) {
		size_t max = 0;

		if (cur.p && nfull < MAX_FULL)
			full[nfull++] = cur;
		memset(&cur, 0, sizeof(cur));
		if (req_fn)
			req_fn(&cur.p, &cur.size, &max);
		if (!cur.p) {
			dropped++;
			return NULL;
		}
	}
	r = cur.p + cur.used;
	cur.used += sz;
	if (end > cur.max_end)
		cur.max_end = end;
	memset(r, 0, sz);
	((CUpti_Activity *)r)->kind = k;
	return r;
}

CUptiResult cuptiGetResultString(CUptiResult r, const char **s)
{
	static char b[64];

	switch (r) {
	case CUPTI_SUCCESS:
		*s = "CUPTI_SUCCESS";
		break;
	case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
		*s = "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED";
		break;
	case CUPTI_ERROR_NOT_SUPPORTED:
		*s = "CUPTI_ERROR_NOT_SUPPORTED";
		break;
	default:
		snprintf(b, sizeof(b), "CUPTI_ERROR_%d", (int)r);
		*s = b;
	}
	return CUPTI_SUCCESS;
}

CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *s, CUpti_CallbackFunc cb, void *u)
{
	if (getenv("MOCK_SUBSCRIBE_FAIL") || subscribed) {
		event("subscribe refused", NULL);
		return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
	}
	subscribed = 1;
	sub_fn = cb;
	sub_ud = u;
	memset(dom_on, 0, sizeof(dom_on));
	*s = (CUpti_SubscriberHandle)0x1;
	event("subscribe", NULL);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiEnableDomain(uint32_t on, CUpti_SubscriberHandle s, CUpti_CallbackDomain d)
{
	if (!subscribed || s != (CUpti_SubscriberHandle)0x1 || d <= 0 || d >= CUPTI_CB_DOMAIN_SIZE)
		return CUPTI_ERROR_INVALID_PARAMETER;
	__atomic_store_n(&dom_on[d], (int)on, __ATOMIC_RELEASE);
	return CUPTI_SUCCESS;
}

/* CUPTI's state goes: the subscriber, the callbacks, the kinds, what is unflushed. */
CUptiResult cuptiFinalize(void)
{
	event("finalize %s", in_api_cb ? "at an API exit" : "outside any API call");
	pthread_mutex_lock(&mu);
	memset(enabled, 0, sizeof(enabled));
	memset(api_on, 0, sizeof(api_on));
	memset(&cur, 0, sizeof(cur));
	nfull = 0;
	pthread_mutex_unlock(&mu);
	memset(dom_on, 0, sizeof(dom_on));
	subscribed = 0;
	holder[0] = '\0';
	sub_fn = NULL;
	req_fn = NULL;
	comp_fn = NULL;
	ts_fn = NULL;
	return CUPTI_SUCCESS;
}

/* What CUPTI does at the exit of an API call when the subscriber enabled its domain. */
static void api_exit(CUpti_CallbackDomain d, uint32_t cbid)
{
	CUpti_CallbackData cb;

	if (!sub_fn || !__atomic_load_n(&dom_on[d], __ATOMIC_ACQUIRE))
		return;
	memset(&cb, 0, sizeof(cb));
	cb.callbackSite = CUPTI_API_EXIT;
	cb.functionName = "mockApi";
	in_api_cb = 1;
	sub_fn(sub_ud, d, cbid, &cb);
	in_api_cb = 0;
}

/* Another CUPTI client (torch.profiler, say) tries to subscribe, and leaves at once. */
void mock_other_client(void)
{
	CUpti_SubscriberHandle s;

	if (cuptiSubscribe(&s, NULL, NULL) == CUPTI_SUCCESS) {
		event("other client subscribed", NULL);
		cuptiUnsubscribe(s);
	} else {
		event("other client refused", NULL);
	}
}

CUptiResult cuptiSubscribe_v2(CUpti_SubscriberHandle *s, CUpti_CallbackFunc cb, void *u,
			      CUpti_SubscriberParams *p)
{
	CUptiResult r = cuptiSubscribe(s, cb, u);

	if (r != CUPTI_SUCCESS && p && p->oldSubscriberName)
		snprintf(p->oldSubscriberName, p->oldSubscriberSize, "%s",
			 holder[0] ? holder : "CUPTI for Nsight Systems");
	if (r == CUPTI_SUCCESS && p && p->subscriberName)
		snprintf(holder, sizeof(holder), "CUPTI for %s", p->subscriberName);
	return r;
}

CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle s)
{
	(void)s;
	subscribed = 0;
	sub_fn = NULL;
	holder[0] = '\0';
	event("unsubscribe %s", in_api_cb ? "at an API exit" : "outside any API call");
	if (getenv("MOCK_TRACE"))
		fprintf(stderr, "mock: unsubscribed\n");
	return CUPTI_SUCCESS;
}

CUptiResult cuptiSetThreadIdType(CUpti_ActivityThreadIdType t)
{
	(void)t;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc f)
{
	if (getenv("MOCK_NO_TSCB"))
		return CUPTI_ERROR_NOT_SUPPORTED;
	ts_fn = f;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivitySetAttribute(CUpti_ActivityAttribute a, size_t *sz, void *v)
{
	(void)a;
	(void)sz;
	(void)v;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc r,
					   CUpti_BuffersCallbackCompleteFunc c)
{
	req_fn = r;
	comp_fn = c;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityEnable(CUpti_ActivityKind k)
{
	if (getenv("MOCK_ENABLE_FAIL") && k == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
		return CUPTI_ERROR_NOT_SUPPORTED;
	if (k == CUPTI_ACTIVITY_KIND_MEMCPY2) /* an optional kind this "device" lacks */
		return CUPTI_ERROR_NOT_SUPPORTED;
	pthread_mutex_lock(&mu);
	enabled[k] = 1;
	/* Enabling a whole API kind overrides earlier per-call switches. */
	if (k == CUPTI_ACTIVITY_KIND_RUNTIME || k == CUPTI_ACTIVITY_KIND_DRIVER)
		memset(api_on[k == CUPTI_ACTIVITY_KIND_DRIVER], 0, sizeof(api_on[0]));
	pthread_mutex_unlock(&mu);
	if (getenv("MOCK_TRACE"))
		fprintf(stderr, "mock: enable %d\n", (int)k);
	return CUPTI_SUCCESS;
}

static CUptiResult api_enable(int drv, CUpti_CallbackId cbid, uint8_t enable)
{
	if (getenv("MOCK_NO_API_CALLS"))
		return CUPTI_ERROR_NOT_SUPPORTED;
	pthread_mutex_lock(&mu);
	api_on[drv][cbid % 1024] = enable ? 1 : 2;
	pthread_mutex_unlock(&mu);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t enable)
{
	return api_enable(0, cbid, enable);
}

CUptiResult cuptiActivityEnableDriverApi(CUpti_CallbackId cbid, uint8_t enable)
{
	return api_enable(1, cbid, enable);
}

CUptiResult cuptiActivityDisable(CUpti_ActivityKind k)
{
	pthread_mutex_lock(&mu);
	enabled[k] = 0;
	pthread_mutex_unlock(&mu);
	if (getenv("MOCK_TRACE"))
		fprintf(stderr, "mock: disable %d\n", (int)k);
	return CUPTI_SUCCESS;
}

/* Full buffers always; the current one when forced or when all its records are done. */
CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
	struct buf out[MAX_FULL + 1];
	uint64_t now = mono_ns();
	int n = 0;

	pthread_mutex_lock(&mu);
	for (int i = 0; i < nfull; i++)
		out[n++] = full[i];
	nfull = 0;
	if (cur.p && cur.used &&
	    ((flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) || cur.max_end <= now)) {
		out[n++] = cur;
		memset(&cur, 0, sizeof(cur));
	}
	pthread_mutex_unlock(&mu);
	if (getenv("MOCK_TRACE"))
		fprintf(stderr, "mock: flush %u: %d buffers\n", flag, n);
	for (int i = 0; i < n; i++)
		if (comp_fn)
			comp_fn(NULL, 0, out[i].p, out[i].size, out[i].used);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityGetNextRecord(uint8_t *buf, size_t valid, CUpti_Activity **rec)
{
	uint8_t *p = *rec ? (uint8_t *)*rec + rec_step((*rec)->kind) : buf;

	if ((size_t)(p - buf) >= valid)
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	*rec = (CUpti_Activity *)p;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext c, uint32_t s, size_t *d)
{
	(void)c;
	(void)s;
	pthread_mutex_lock(&mu);
	*d = dropped;
	dropped = 0;
	pthread_mutex_unlock(&mu);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain d, uint32_t cbid, const char **name)
{
	static char b[2][1024][48];
	int drv = d == CUPTI_CB_DOMAIN_DRIVER_API;
	const char *base = drv		 ? (cbid == 312 ? "cuLaunchKernel" : "cuMock")
			   : cbid == 211 ? "cudaLaunchKernel_v7000"
			   : cbid == 131 ? "cudaStreamSynchronize_v3020"
			   : cbid == 10	 ? "cudaGetLastError_v3020"
					 : "cudaMock";

	/* The pinned-memory calls by their real ids and names. */
	if (!drv && (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaHostAlloc_v3020 ||
		     cbid == CUPTI_RUNTIME_TRACE_CBID_cudaFreeHost_v3020)) {
		*name = cbid == CUPTI_RUNTIME_TRACE_CBID_cudaHostAlloc_v3020 ? "cudaHostAlloc_v3020"
									     : "cudaFreeHost_v3020";
		return CUPTI_SUCCESS;
	}
	if (drv && (cbid == CUPTI_DRIVER_TRACE_CBID_cuMemHostAlloc ||
		    cbid == CUPTI_DRIVER_TRACE_CBID_cuMemFreeHost)) {
		*name = cbid == CUPTI_DRIVER_TRACE_CBID_cuMemHostAlloc ? "cuMemHostAlloc"
								       : "cuMemFreeHost";
		return CUPTI_SUCCESS;
	}
	snprintf(b[drv][cbid % 1024], sizeof(b[0][0]), "%s_%u", base, cbid);
	*name = b[drv][cbid % 1024];
	return CUPTI_SUCCESS;
}

CUptiResult cuptiGetTimestamp(uint64_t *t)
{
	*t = ts_fn && !getenv("MOCK_FOREIGN") ? ts_fn() : clock_ns(CLOCK_REALTIME);
	return CUPTI_SUCCESS;
}

int InitializeInjectionNvtx2(const void *x)
{
	(void)x;
	return 1;
}

/* ---- the fake CUDA that mock_app calls ---- */

/* Caller holds mu. */
static void api(uint32_t cbid, uint64_t s, uint64_t e, uint32_t corr, int driver)
{
	CUpti_ActivityKind k = driver ? CUPTI_ACTIVITY_KIND_DRIVER : CUPTI_ACTIVITY_KIND_RUNTIME;
	CUpti_ActivityAPI *a;

	if (enabled[k] ? api_on[driver][cbid % 1024] == 2 : api_on[driver][cbid % 1024] != 1)
		return;
	enabled[k]++; /* rec_alloc writes only enabled kinds */
	a = rec_alloc(k, e);
	enabled[k]--;
	if (!a)
		return;
	a->cbid = cbid;
	a->start = stamp(s);
	a->end = stamp(e);
	a->processId = (uint32_t)getpid();
	a->threadId = (uint32_t)syscall(SYS_gettid);
	a->correlationId = corr;
}

/* What the CUDA driver does in cuInit with CUDA_INJECTION64_PATH. */
void mock_cuda_init(void)
{
	const char *p = getenv("CUDA_INJECTION64_PATH");
	void *h = p ? dlopen(p, RTLD_NOW | RTLD_LOCAL) : NULL;
	int (*init)(void) = h ? (int (*)(void))dlsym(h, "InitializeInjection") : NULL;

	if (init)
		init();
}

void mock_launch(const char *name, uint64_t dur_ns, int memcpy_too)
{
	uint64_t s = mono_ns(), ks, e;
	CUpti_ActivityKernel10 *k;
	uint32_t corr, dcorr;

	pthread_mutex_lock(&mu);
	corr = next_corr++;
	/* MOCK_DRIVER_OWN_ID: the nested driver call has its own id, and the device
	 * records name that one, not the runtime call's. */
	dcorr = getenv("MOCK_DRIVER_OWN_ID") ? next_corr++ : corr;
	ks = s + 8000 > dev_free ? s + 8000 : dev_free;
	dev_free = ks + dur_ns;
	k = rec_alloc(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, dev_free);
	if (k) {
		k->start = stamp(ks);
		k->end = stamp(dev_free);
		k->contextId = 1;
		k->streamId = 13;
		k->gridX = 132;
		k->gridY = k->gridZ = 1;
		k->blockX = 128;
		k->blockY = k->blockZ = 1;
		k->correlationId = dcorr;
		k->name = name;
	}
	if (memcpy_too) {
		uint64_t ms = dev_free;
		CUpti_ActivityMemcpy6 *m;

		dev_free += 20000;
		m = rec_alloc(CUPTI_ACTIVITY_KIND_MEMCPY, dev_free);
		if (m) {
			m->copyKind = 2;
			m->bytes = 65536;
			m->start = stamp(ms);
			m->end = stamp(dev_free);
			m->contextId = 1;
			m->streamId = 13;
			m->correlationId = dcorr;
		}
	}
	e = mono_ns() + 3000;
	api(211, s, e, corr, 0);	      /* cudaLaunchKernel */
	api(312, s + 500, e - 500, dcorr, 1); /* the driver call inside it */
	api(10, s, s + 100, next_corr++, 0);  /* cudaGetLastError: the library skips it */
	pthread_mutex_unlock(&mu);
	while (mono_ns() < e)
		;
	api_exit(CUPTI_CB_DOMAIN_DRIVER_API, 312);
	api_exit(CUPTI_CB_DOMAIN_RUNTIME_API, 211);
}

void mock_sync(void)
{
	uint64_t s = mono_ns(), until;
	CUpti_ActivitySynchronization2 *y;
	struct timespec ts;
	uint32_t corr;

	pthread_mutex_lock(&mu);
	until = dev_free;
	corr = next_corr++;
	pthread_mutex_unlock(&mu);
	if (until > s) {
		ts.tv_sec = (time_t)(until / 1000000000ull);
		ts.tv_nsec = (long)(until % 1000000000ull);
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	}
	pthread_mutex_lock(&mu);
	api(131, s, mono_ns(), corr, 0); /* cudaStreamSynchronize */
	y = rec_alloc(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, mono_ns());
	if (y) {
		y->type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
		y->start = stamp(s);
		y->end = stamp(mono_ns());
		y->correlationId = corr;
		y->contextId = 1;
		y->streamId = 13;
	}
	pthread_mutex_unlock(&mu);
	api_exit(CUPTI_CB_DOMAIN_RUNTIME_API, 131);
}

/*
 * cudaHostAlloc / cudaFreeHost: the runtime call runs the driver's
 * (mock_cuda.c's libcuda, found in the program's global scope), and CUPTI
 * writes a runtime API record around a driver API record, one id for both.
 */
static void pinned_call(uint32_t rt_cbid, uint32_t drv_cbid, void **pp, void *p, size_t bytes)
{
	int (*alloc)(void **, size_t, unsigned int) =
	    (int (*)(void **, size_t, unsigned int))dlsym(RTLD_DEFAULT, "cuMemHostAlloc");
	int (*release)(void *, size_t) =
	    (int (*)(void *, size_t))dlsym(RTLD_DEFAULT, "cuMemFreeHost");
	uint64_t s = mono_ns(), ds, de, e;
	uint32_t corr;

	ds = mono_ns();
	if (pp && alloc)
		alloc(pp, bytes, 0);
	else if (!pp && release)
		release(p, bytes);
	de = mono_ns();
	e = mono_ns() + 1000;
	while (mono_ns() < e)
		;
	pthread_mutex_lock(&mu);
	corr = next_corr++;
	api(rt_cbid, s, e, corr, 0);
	api(drv_cbid, ds, de, corr, 1);
	pthread_mutex_unlock(&mu);
	api_exit(CUPTI_CB_DOMAIN_DRIVER_API, drv_cbid);
	api_exit(CUPTI_CB_DOMAIN_RUNTIME_API, rt_cbid);
}

void mock_host_alloc(void **pp, size_t bytes)
{
	pinned_call(CUPTI_RUNTIME_TRACE_CBID_cudaHostAlloc_v3020,
		    CUPTI_DRIVER_TRACE_CBID_cuMemHostAlloc, pp, NULL, bytes);
}

void mock_free_host(void *p, size_t bytes)
{
	pinned_call(CUPTI_RUNTIME_TRACE_CBID_cudaFreeHost_v3020,
		    CUPTI_DRIVER_TRACE_CBID_cuMemFreeHost, NULL, p, bytes);
}

void mock_marker(const char *name, int start)
{
	static uint32_t open_id;
	CUpti_ActivityMarker2 *m;

	pthread_mutex_lock(&mu);
	m = rec_alloc(CUPTI_ACTIVITY_KIND_MARKER, 0);
	if (m) {
		if (start)
			open_id = next_marker++;
		m->flags =
		    start ? CUPTI_ACTIVITY_FLAG_MARKER_START : CUPTI_ACTIVITY_FLAG_MARKER_END;
		m->timestamp = stamp(mono_ns());
		m->id = open_id;
		m->objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
		m->objectId.pt.processId = (uint32_t)getpid();
		m->objectId.pt.threadId = (uint32_t)syscall(SYS_gettid);
		m->name = start ? name : NULL;
	}
	pthread_mutex_unlock(&mu);
}

void mock_drop(uint64_t n)
{
	pthread_mutex_lock(&mu);
	dropped += n;
	pthread_mutex_unlock(&mu);
}
