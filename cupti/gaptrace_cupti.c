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
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cupti.h>

#include "gaptrace/gaptrace-cupti-api.h"
#include "gaptrace/gaptrace-cupti-status.h"
#include "gaptrace/gaptrace-usdt.h"

#define GT_EXPORT __attribute__((visibility("default")))

#define NSEC_PER_MSEC 1000000ULL
#define NSEC_PER_SEC  1000000000ULL

#define POLL_NS	     (50 * NSEC_PER_MSEC)   /* semaphore check period */
#define FLUSH_NS     (100 * NSEC_PER_MSEC)  /* cuptiActivityFlushAll period while traced */
#define RECAL_NS     (1000 * NSEC_PER_MSEC) /* offset re-measurement, offset mode only */
#define WAIT_MS_MAX  60000		    /* cap on GAPTRACE_CUPTI_WAIT_MS */
#define EXIT_LOCK_NS (500 * NSEC_PER_MSEC)  /* atexit waits at most this for the control lock */
#define CAL_TRIES    200
/* A timestamp this far past CLOCK_MONOTONIC's "now" is on another clock. */
#define FOREIGN_NS (10 * NSEC_PER_SEC)

/* Activity buffers: recycled so that CUPTI's requests on application threads stay cheap. */
#define BUF_SIZE     (1u << 20)
#define BUF_ALIGN    8
#define BUF_MAX	     64 /* at most 64 MiB in flight; past that CUPTI drops and counts */
#define BUF_PREALLOC 8

#define NAME_MAX_LEN 4096
#define NAMES_MAX    (1u << 16)
#define API_CBID_MAX 1024
#define RANGES_SLOTS 4096
#define KCACHE_SLOTS 32

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

static int g_state; /* enum gt_state, __atomic */
static bool g_verbose;
static CUpti_SubscriberHandle g_sub;
static bool g_zeroed; /* CUPTI expects zeroed buffers from us */

/* Serialises every CUPTI control call: enable, disable, flush, teardown. */
static pthread_mutex_t g_ctl = PTHREAD_MUTEX_INITIALIZER;
static bool g_active;  /* activity kinds enabled; written under g_ctl, read __atomic */
static bool g_held;    /* subscribed and callbacks registered; under g_ctl */
static int g_release;  /* detached: cuptiFinalize at the next API exit; __atomic */
static bool g_refused; /* CUPTI refused this tracer: wait for the next one; under g_ctl */
static bool g_exiting; /* the process is exiting: no more CUPTI calls; __atomic */
static uint32_t g_enabled_mask;
static uint32_t g_epoch;   /* bumped at each attach; names are re-sent once per epoch */
static int g_fail_pending; /* a CUPTI callback hit a failure; the control thread steps aside */
static int g_reported;	   /* the one failure line was printed */
static int g_drop_reported;

static int g_clock_mode;
static int64_t g_off_cupti; /* CLOCK_MONOTONIC - cuptiGetTimestamp() */
static int64_t g_off_real;  /* CLOCK_MONOTONIC - CLOCK_REALTIME, CUPTI's own default clock */
static uint64_t g_next_recal;

/* Statistics for the verbose detach line. */
static uint64_t g_n_sent, g_n_invalid, g_n_dropped, g_n_foreign;

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

/* ---- small helpers ---- */

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

static uint64_t mono_now(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static uint64_t real_now(void)
{
	return clock_ns(CLOCK_REALTIME);
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = {.tv_sec = (time_t)(ns / NSEC_PER_SEC),
			      .tv_nsec = (long)(ns % NSEC_PER_SEC)};

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static int state_get(void)
{
	return __atomic_load_n(&g_state, __ATOMIC_ACQUIRE);
}

static void state_set(int s)
{
	__atomic_store_n(&g_state, s, __ATOMIC_RELEASE);
}

/* One write(2) per line so that lines from several threads never interleave. */
static __attribute__((format(printf, 1, 2))) void say(const char *fmt, ...)
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

#define vlog(...)                         \
	do {                              \
		if (g_verbose)            \
			say(__VA_ARGS__); \
	} while (0)

static const char *cupti_str(CUptiResult res)
{
	const char *s = NULL;

	if (cuptiGetResultString(res, &s) != CUPTI_SUCCESS || !s)
		return "unknown CUPTI error";
	return s;
}

/*
 * What a tracer reads (process_vm_readv at the symbol's address) to learn that
 * the library stepped aside, so that it can fall back to libcuda uprobes:
 * gaptrace checks it every 250 ms while recording.  reason is complete before
 * failed is set.
 */
GT_EXPORT struct gt_cupti_status gaptrace_cupti_status = {.magic = GT_CUPTI_STATUS_MAGIC};

/* The single line the library ever prints about a failure, then it steps aside. */
static void report_failure(const char *what, const char *why)
{
	if (__atomic_exchange_n(&g_reported, 1, __ATOMIC_ACQ_REL))
		return;
	snprintf(gaptrace_cupti_status.reason, sizeof(gaptrace_cupti_status.reason), "%s: %s", what,
		 why);
	__atomic_store_n(&gaptrace_cupti_status.failed, 1, __ATOMIC_RELEASE);
	say("%s: %s; GPU activity will not be recorded", what, why);
}

/* A symbol of the libcupti we are linked with, also when we were dlopen'ed RTLD_LOCAL. */
static void *cupti_sym(const char *name)
{
	Dl_info info;
	void *h, *sym = NULL;

	if (!dladdr((void *)cuptiSubscribe, &info) || !info.dli_fname)
		return NULL;
	h = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		return NULL;
	sym = dlsym(h, name);
	dlclose(h);
	return sym;
}

static bool tracer_attached(void)
{
	return __atomic_load_n(&gaptrace_gpu_batch_semaphore, __ATOMIC_RELAXED) != 0;
}

/* Our threads take no signals: process-directed ones stay with the program's threads. */
static int start_thread(void *(*fn)(void *))
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

/* ---- clocks ---- */

static uint64_t CUPTIAPI mono_ns(void)
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

static void calibrate(void)
{
	uint64_t wc = 0, wr = 0;
	int64_t oc = bracket_offset(cupti_now, &wc);
	int64_t orl = bracket_offset(real_now, &wr);

	__atomic_store_n(&g_off_cupti, oc, __ATOMIC_RELAXED);
	__atomic_store_n(&g_off_real, orl, __ATOMIC_RELAXED);
	g_next_recal = mono_now() + RECAL_NS;
	vlog("clock: %s; cuptiGetTimestamp offset %lld ns (bracket %llu ns)",
	     g_clock_mode == CLK_CALLBACK ? "CLOCK_MONOTONIC timestamp callback"
					  : "no timestamp callback, adding the measured offset",
	     (long long)oc, (unsigned long long)wc);
}

/* ---- interned names: kernel, API and NVTX range names ---- */

struct name_slot {
	uint32_t hash;
	uint32_t id; /* 0 = empty */
};

static pthread_mutex_t g_names_mu = PTHREAD_MUTEX_INITIALIZER;
static struct name_slot *g_slots; /* open addressing, g_slots_cap entries */
static uint32_t g_slots_cap;
static char **g_name_str;      /* by id */
static uint32_t *g_name_epoch; /* by id: announced in this tracer epoch */
static uint32_t g_nnames, g_names_cap;
static uint32_t g_api_ids[2][API_CBID_MAX]; /* [driver][cbid] -> id; UINT32_MAX = none */

static uint32_t hash_str(const char *s, size_t *len)
{
	uint32_t h = 2166136261u;
	size_t n = 0;

	for (; s[n] && n < NAME_MAX_LEN; n++)
		h = (h ^ (uint8_t)s[n]) * 16777619u;
	*len = n;
	return h;
}

static bool slots_grow(void)
{
	uint32_t cap = g_slots_cap ? g_slots_cap * 2 : 1024;
	struct name_slot *n = calloc(cap, sizeof(*n));

	if (!n)
		return false;
	for (uint32_t i = 0; i < g_slots_cap; i++) {
		uint32_t j;

		if (!g_slots[i].id)
			continue;
		for (j = g_slots[i].hash & (cap - 1); n[j].id; j = (j + 1) & (cap - 1))
			;
		n[j] = g_slots[i];
	}
	free(g_slots);
	g_slots = n;
	g_slots_cap = cap;
	return true;
}

/* Caller holds g_names_mu.  0 when the table is full or memory is short. */
static uint32_t names_get(const char *s)
{
	size_t len;
	uint32_t h = hash_str(s, &len), j;
	char *copy;

	if (!g_slots_cap && !slots_grow())
		return 0;
	for (j = h & (g_slots_cap - 1); g_slots[j].id; j = (j + 1) & (g_slots_cap - 1)) {
		const char *t = g_name_str[g_slots[j].id];

		if (g_slots[j].hash == h && strncmp(t, s, len) == 0 && t[len] == '\0')
			return g_slots[j].id;
	}
	if (g_nnames >= NAMES_MAX)
		return 0;
	if (g_nnames + 2 > g_names_cap) {
		uint32_t cap = g_names_cap ? g_names_cap * 2 : 256;
		char **str = realloc(g_name_str, cap * sizeof(*str));
		uint32_t *ep;

		if (!str)
			return 0;
		g_name_str = str;
		ep = realloc(g_name_epoch, cap * sizeof(*ep));
		if (!ep)
			return 0;
		g_name_epoch = ep;
		g_names_cap = cap;
	}
	if ((g_nnames + 1) * 2 > g_slots_cap) {
		if (!slots_grow())
			return 0;
		for (j = h & (g_slots_cap - 1); g_slots[j].id; j = (j + 1) & (g_slots_cap - 1))
			;
	}
	copy = malloc(len + 1);
	if (!copy)
		return 0;
	memcpy(copy, s, len);
	copy[len] = '\0';
	g_nnames++;
	g_name_str[g_nnames] = copy;
	g_name_epoch[g_nnames] = 0;
	g_slots[j].hash = h;
	g_slots[j].id = g_nnames;
	return g_nnames;
}

/* Caller holds g_names_mu: the tracer hears a name before the first record using it. */
static uint32_t name_announce(uint32_t id)
{
	uint32_t epoch = __atomic_load_n(&g_epoch, __ATOMIC_ACQUIRE);

	if (id && g_name_epoch[id] != epoch && GAPTRACE_ENABLED(gpu_name)) {
		const char *s = g_name_str[id];

		/* A plain register operand: libbpf 1.1 cannot read base+index*scale ones. */
		__asm__ __volatile__("" : "+r"(s));
		GAPTRACE_GPU_NAME(id, s);
		g_name_epoch[id] = epoch;
	}
	return id;
}

static uint32_t name_use(const char *s)
{
	uint32_t id;

	if (!s || !*s)
		return 0;
	pthread_mutex_lock(&g_names_mu);
	id = name_announce(names_get(s));
	pthread_mutex_unlock(&g_names_mu);
	return id;
}

static uint32_t api_name_use(bool driver, uint32_t cbid)
{
	uint32_t id;

	if (cbid >= API_CBID_MAX)
		return 0;
	pthread_mutex_lock(&g_names_mu);
	id = g_api_ids[driver][cbid];
	if (id == 0) {
		const char *s = NULL;

		/* Once per call kind: a name lookup is not free. */
		if (cuptiGetCallbackName(driver ? CUPTI_CB_DOMAIN_DRIVER_API
						: CUPTI_CB_DOMAIN_RUNTIME_API,
					 cbid, &s) == CUPTI_SUCCESS &&
		    s)
			id = names_get(s);
		if (!id)
			id = UINT32_MAX;
		g_api_ids[driver][cbid] = id;
	}
	id = id == UINT32_MAX ? 0 : name_announce(id);
	pthread_mutex_unlock(&g_names_mu);
	return id;
}

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

static void batch_fire(struct batch *b)
{
	if (b->n && GAPTRACE_ENABLED(gpu_batch))
		GAPTRACE_GPU_BATCH(b->r, b->n);
	b->sent += b->n;
	b->n = 0;
}

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
	if (g_clock_mode == CLK_OFFSET)
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

static void process_buffer(uint8_t *buf, size_t valid, CUcontext ctx, uint32_t stream_id)
{
	struct batch *b;
	CUpti_Activity *rec = NULL;
	size_t dropped = 0;

	/* ~6 KiB: off the stack of whichever thread CUPTI delivers on. */
	b = calloc(1, sizeof(*b));
	if (!b)
		return;
	b->now = mono_now();
	b->off = __atomic_load_n(&g_off_cupti, __ATOMIC_RELAXED);
	b->off_foreign = b->off > (int64_t)FOREIGN_NS || b->off < -(int64_t)FOREIGN_NS
			     ? b->off
			     : __atomic_load_n(&g_off_real, __ATOMIC_RELAXED);
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
	__atomic_fetch_add(&g_n_sent, b->sent, __ATOMIC_RELAXED);
	__atomic_fetch_add(&g_n_invalid, b->invalid, __ATOMIC_RELAXED);
	__atomic_fetch_add(&g_n_dropped, dropped, __ATOMIC_RELAXED);
	if (b->foreign && !__atomic_fetch_add(&g_n_foreign, b->foreign, __ATOMIC_RELAXED))
		vlog("records ignore the timestamp callback; converting them with a measured "
		     "offset of %lld ns",
		     (long long)b->off_foreign);
	free(b);
}

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

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	int saved = errno;
	void *p = NULL;
	bool failed = false;

	pthread_mutex_lock(&g_pool_mu);
	if (g_pool_n) {
		p = g_pool[--g_pool_n];
	} else if (g_buf_total < BUF_MAX &&
		   __atomic_load_n(&g_fail_pending, __ATOMIC_RELAXED) == 0) {
		p = buf_alloc();
		if (p)
			g_buf_total++;
		else
			failed = true;
	}
	pthread_mutex_unlock(&g_pool_mu);
	if (failed) {
		report_failure("cannot allocate a 1 MiB activity buffer", strerror(ENOMEM));
		__atomic_store_n(&g_fail_pending, 1, __ATOMIC_RELEASE);
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
	if (state_get() == ST_READY && __atomic_load_n(&g_active, __ATOMIC_ACQUIRE) &&
	    tracer_attached() && !g_rx_discard)
		process_buffer(it->buf, it->valid, it->ctx, it->stream_id);
	if (g_zeroed)
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
static void rx_drain(uint64_t max_ns)
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

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream_id, uint8_t *buf, size_t size,
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

static void release_locked(bool finalize);

/*
 * API callbacks are enabled only after a detach, until the next API exit:
 * there CUPTI is handed back (release_request_locked).  Never waits for the
 * control thread; the next call tries again.
 */
static void CUPTIAPI on_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
				 const void *data)
{
	const CUpti_CallbackData *cb = data;
	int saved = errno;

	(void)userdata;
	(void)cbid;
	if (!__atomic_load_n(&g_release, __ATOMIC_ACQUIRE) ||
	    (domain != CUPTI_CB_DOMAIN_RUNTIME_API && domain != CUPTI_CB_DOMAIN_DRIVER_API) ||
	    !cb || cb->callbackSite != CUPTI_API_EXIT)
		return;
	if (pthread_mutex_trylock(&g_ctl) == 0) {
		if (__atomic_load_n(&g_release, __ATOMIC_ACQUIRE) && !g_active &&
		    !__atomic_load_n(&g_exiting, __ATOMIC_ACQUIRE))
			release_locked(true);
		pthread_mutex_unlock(&g_ctl);
	}
	errno = saved;
}

/* ---- control: follow the tracer (caller holds g_ctl) ---- */

static const struct {
	CUpti_ActivityKind kind;
	bool required; /* without it the capture would mislead: step aside */
	const char *name;
} kinds[] = {
    {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, true, "CONCURRENT_KERNEL"},
    {CUPTI_ACTIVITY_KIND_MEMCPY, true, "MEMCPY"},
    {CUPTI_ACTIVITY_KIND_MEMSET, true, "MEMSET"},
    {CUPTI_ACTIVITY_KIND_RUNTIME, true, "RUNTIME"},
    {CUPTI_ACTIVITY_KIND_DRIVER, true, "DRIVER"},
    {CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, false, "SYNCHRONIZATION"},
    {CUPTI_ACTIVITY_KIND_MEMCPY2, false, "MEMCPY2"},
    {CUPTI_ACTIVITY_KIND_MARKER, false, "MARKER"},
};

/*
 * API records gap analysis uses: launches (the launching thread by
 * correlation id), copies and sets, synchronisation, allocation, context and
 * module set-up.  Everything else (cudaGetDevice, cudaEventRecord,
 * cudaStreamIsCapturing, cuCtxGetCurrent, ... : most of a PyTorch program's
 * calls) costs CUPTI a record for nothing, so after the whole kind is
 * enabled the other call ids are switched off (cuptiActivityEnable{Runtime,
 * Driver}Api).  Measured on CUPTI 13 / H200: enabling only the wanted ids
 * without the kind, as its header also allows, gave no API record at all.
 * GAPTRACE_CUPTI_ALL_API=1 keeps every call.
 */
/* Besides allocation (GT_CUDA_ALLOC_PREFIXES, kept in both domains' lists). */
static const char *const api_prefixes[2][24] = {
    {"cudaLaunch", "cudaGraphLaunch", "cudaGraphInstantiate", "cudaMemcpy", "cudaMemset",
     "cudaMemPrefetch", "cudaDeviceSynchronize", "cudaThreadSynchronize", "cudaStreamSynchronize",
     "cudaEventSynchronize", "cudaStreamWaitEvent", "cudaSetDevice", "cudaInitDevice",
     "cudaDeviceReset", NULL},
    {"cuLaunch", "cuGraphLaunch", "cuGraphInstantiate", "cuMemcpy", "cuMemset", "cuMemPrefetch",
     "cuCtxSynchronize", "cuStreamSynchronize", "cuEventSynchronize", "cuStreamWaitEvent",
     "cuCtxCreate", "cuDevicePrimaryCtxRetain", "cuModuleLoad", "cuLibraryLoad", NULL},
};
static const char *const api_alloc_prefixes[] = {GT_CUDA_ALLOC_PREFIXES};

static bool prefixed(const char *name, const char *const *p, size_t n)
{
	for (size_t i = 0; i < n && p[i]; i++)
		if (!strncmp(name, p[i], strlen(p[i])))
			return true;
	return false;
}

static bool api_wanted(bool driver, const char *name)
{
	return prefixed(name, api_prefixes[driver], sizeof(api_prefixes[0]) / sizeof(char *)) ||
	       prefixed(name, api_alloc_prefixes,
			sizeof(api_alloc_prefixes) / sizeof(api_alloc_prefixes[0]));
}

/* After the kind is enabled: switches off the unwanted call ids, returns how many. */
static int mute_api_calls(bool driver)
{
	uint32_t size = driver ? CUPTI_DRIVER_TRACE_CBID_SIZE : CUPTI_RUNTIME_TRACE_CBID_SIZE;
	CUpti_CallbackDomain dom =
	    driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API;
	int n = 0;

	for (uint32_t cbid = 1; cbid < size; cbid++) {
		const char *name = NULL;

		if (cuptiGetCallbackName(dom, cbid, &name) != CUPTI_SUCCESS || !name ||
		    api_wanted(driver, name))
			continue;
		if ((driver ? cuptiActivityEnableDriverApi(cbid, 0)
			    : cuptiActivityEnableRuntimeApi(cbid, 0)) == CUPTI_SUCCESS)
			n++;
	}
	return n;
}

static bool env_on(const char *name)
{
	const char *e = getenv(name);

	return e && *e && strcmp(e, "0");
}

static bool all_api(void)
{
	return env_on("GAPTRACE_CUPTI_ALL_API");
}

/*
 * GAPTRACE_CUPTI_KINDS=NAME,...: only these activity kinds (names as in
 * kinds[] below), to measure what each costs.  Not for captures: without the
 * required kinds the report misleads.
 */
static bool kind_wanted(const char *name)
{
	const char *e = getenv("GAPTRACE_CUPTI_KINDS");
	size_t n = strlen(name);

	if (!e || !*e)
		return true;
	for (const char *p = e; *p;) {
		const char *c = strchr(p, ',');
		size_t len = c ? (size_t)(c - p) : strlen(p);

		if (len == n && !strncmp(p, name, n))
			return true;
		p += len + (c != NULL);
	}
	return false;
}

static void pool_prealloc(void)
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
static void pool_release(void)
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

static void disable_locked(void)
{
	for (unsigned int i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (g_enabled_mask & (1u << i))
			cuptiActivityDisable(kinds[i].kind);
	}
	g_enabled_mask = 0;
	/* Hands back what is in flight; nobody reads it any more, so it is discarded. */
	__atomic_store_n(&g_active, false, __ATOMIC_RELEASE);
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	/* The receiver puts the queued buffers back in the pool (pool_release frees them). */
	rx_drain(EXIT_LOCK_NS);
}

/* Hands CUPTI back: no subscription, no callbacks, CUPTI's state destroyed. */
static void release_locked(bool finalize)
{
	if (!g_held)
		return;
	/* cuptiFinalize ends the subscription too; without it, unsubscribe. */
	if (!finalize && g_sub)
		cuptiUnsubscribe(g_sub);
	g_sub = NULL;
	if (finalize)
		cuptiFinalize();
	g_held = false;
	__atomic_store_n(&g_release, 0, __ATOMIC_RELEASE);
	vlog("CUPTI released (%s)", finalize ? "cuptiFinalize" : "cuptiUnsubscribe");
}

/*
 * After a detach: cuptiFinalize where CUPTI's documentation wants it, at the
 * exit of a CUDA API call (on_callback), so that no call is half through
 * CUPTI when its state goes.  The API callbacks cost something only until
 * the program's next CUDA call returns.
 */
static void release_request_locked(void)
{
	if (!g_held)
		return;
	__atomic_store_n(&g_release, 1, __ATOMIC_RELEASE);
	if (cuptiEnableDomain(1, g_sub, CUPTI_CB_DOMAIN_RUNTIME_API) != CUPTI_SUCCESS ||
	    cuptiEnableDomain(1, g_sub, CUPTI_CB_DOMAIN_DRIVER_API) != CUPTI_SUCCESS) {
		/* No API callbacks here: at least free CUPTI for other clients. */
		cuptiEnableDomain(0, g_sub, CUPTI_CB_DOMAIN_RUNTIME_API);
		release_locked(false);
	}
}

/* A tracer came back before the program made another CUDA call: keep CUPTI. */
static void release_cancel_locked(void)
{
	if (!__atomic_exchange_n(&g_release, 0, __ATOMIC_ACQ_REL))
		return;
	cuptiEnableDomain(0, g_sub, CUPTI_CB_DOMAIN_RUNTIME_API);
	cuptiEnableDomain(0, g_sub, CUPTI_CB_DOMAIN_DRIVER_API);
}

/* Steps aside for good: no kinds, no subscription, the control thread ends. */
static void teardown_locked(void)
{
	if (g_enabled_mask || __atomic_load_n(&g_active, __ATOMIC_ACQUIRE))
		disable_locked();
	release_locked(false);
	state_set(ST_FAILED);
}

static void enable_locked(void)
{
	pool_prealloc();
	calibrate();
	/* A new tracer missed every name sent before: each is sent again on first use. */
	__atomic_add_fetch(&g_epoch, 1, __ATOMIC_ACQ_REL);
	__atomic_store_n(&g_active, true, __ATOMIC_RELEASE);
	for (unsigned int i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		bool api = kinds[i].kind == CUPTI_ACTIVITY_KIND_RUNTIME ||
			   kinds[i].kind == CUPTI_ACTIVITY_KIND_DRIVER;
		CUptiResult res;
		char what[96];

		if (!kind_wanted(kinds[i].name))
			continue;
		res = cuptiActivityEnable(kinds[i].kind);

		if (res == CUPTI_SUCCESS) {
			g_enabled_mask |= 1u << i;
			if (api && !all_api()) {
				bool driver = kinds[i].kind == CUPTI_ACTIVITY_KIND_DRIVER;

				vlog("%s API: %d uninteresting call kinds switched off",
				     driver ? "driver" : "runtime", mute_api_calls(driver));
			}
			continue;
		}
		if (!kinds[i].required) {
			vlog("activity kind %s unavailable (%s); continuing without it",
			     kinds[i].name, cupti_str(res));
			continue;
		}
		snprintf(what, sizeof(what), "cuptiActivityEnable(%s)", kinds[i].name);
		report_failure(what, cupti_str(res));
		teardown_locked();
		return;
	}
	vlog("tracer attached: %u activity kinds enabled", __builtin_popcount(g_enabled_mask));
}

static void stats_line(const char *why)
{
	vlog("%s: %llu records sent, %llu invalid skipped, %llu dropped by CUPTI, %llu "
	     "converted from another clock",
	     why, (unsigned long long)__atomic_load_n(&g_n_sent, __ATOMIC_RELAXED),
	     (unsigned long long)__atomic_load_n(&g_n_invalid, __ATOMIC_RELAXED),
	     (unsigned long long)__atomic_load_n(&g_n_dropped, __ATOMIC_RELAXED),
	     (unsigned long long)__atomic_load_n(&g_n_foreign, __ATOMIC_RELAXED));
}

static void acquire_locked(void);

/* One control step: follow the semaphore, flush when due.  False once stepped aside. */
static bool ctl_step(bool flush_due)
{
	bool alive;

	pthread_mutex_lock(&g_ctl);
	if (__atomic_load_n(&g_exiting, __ATOMIC_ACQUIRE) || state_get() != ST_READY) {
		pthread_mutex_unlock(&g_ctl);
		return false;
	}
	if (__atomic_load_n(&g_fail_pending, __ATOMIC_ACQUIRE)) {
		teardown_locked();
	} else if (tracer_attached()) {
		if (!g_held && !g_refused)
			acquire_locked();
		if (g_held && !g_active) {
			release_cancel_locked();
			enable_locked();
		} else if (g_active) {
			if (g_clock_mode == CLK_OFFSET && mono_now() >= g_next_recal)
				calibrate();
			if (flush_due)
				cuptiActivityFlushAll(0);
		}
	} else {
		if (g_active) {
			disable_locked();
			pool_release();
			stats_line("tracer detached");
		}
		if (g_held && !__atomic_load_n(&g_release, __ATOMIC_ACQUIRE))
			release_request_locked();
		if (g_refused) {
			/* The next tracer finds a clean status, and may find CUPTI free. */
			g_refused = false;
			__atomic_store_n(&gaptrace_cupti_status.failed, 0, __ATOMIC_RELEASE);
			__atomic_store_n(&gaptrace_cupti_status.fallback, 0, __ATOMIC_RELEASE);
			__atomic_store_n(&g_reported, 0, __ATOMIC_RELEASE);
		}
	}
	alive = state_get() == ST_READY;
	pthread_mutex_unlock(&g_ctl);
	return alive;
}

static void *ctl_main(void *arg)
{
	uint64_t next_flush = 0;

	(void)arg;
	pthread_setname_np(pthread_self(), "gaptrace-cupti");
	/* Before the receiver starts, which reads it. */
	g_rx_discard = env_on("GAPTRACE_CUPTI_DISCARD");
	/* GAPTRACE_CUPTI_INLINE=1: read buffers where CUPTI completes them (cost probe). */
	if (!env_on("GAPTRACE_CUPTI_INLINE") && start_thread(rx_main) == 0)
		__atomic_store_n(&g_rx_on, true, __ATOMIC_RELEASE);
	for (;;) {
		uint64_t now = mono_now();
		bool due = now >= next_flush;

		if (!ctl_step(due))
			break;
		if (due)
			next_flush = now + FLUSH_NS;
		sleep_ns(POLL_NS);
	}
	return NULL;
}

/* ---- initialisation ---- */

static void at_exit(void)
{
	int saved = errno;
	struct timespec ts;
	uint64_t t = real_now() + EXIT_LOCK_NS;

	ts.tv_sec = (time_t)(t / NSEC_PER_SEC);
	ts.tv_nsec = (long)(t % NSEC_PER_SEC);
	/* Bounded: a control call stuck elsewhere must not hold up the exit. */
	if (pthread_mutex_timedlock(&g_ctl, &ts) == 0) {
		/* The last unit's records are still in CUPTI's buffers. */
		if (state_get() == ST_READY && g_active && tracer_attached()) {
			cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
			/* ... and reach the tracer only once the receiver has read them. */
			rx_drain(EXIT_LOCK_NS);
		}
		__atomic_store_n(&g_exiting, true, __ATOMIC_RELEASE);
		pthread_mutex_unlock(&g_ctl);
	} else {
		/* The control thread makes no CUPTI call after its current one. */
		__atomic_store_n(&g_exiting, true, __ATOMIC_RELEASE);
	}
	errno = saved;
}

/* A forked child has none of our threads and must not touch CUPTI's state. */
static void at_fork_child(void)
{
	state_set(ST_FAILED);
	__atomic_store_n(&g_active, false, __ATOMIC_RELEASE);
	__atomic_store_n(&g_rx_on, false, __ATOMIC_RELEASE); /* not in this process */
}

static CUptiResult subscribe(char *holder, size_t holder_len)
{
	typedef CUptiResult (*sub2_t)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *,
				      CUpti_SubscriberParams *);
	sub2_t sub2 = (sub2_t)cupti_sym("cuptiSubscribe_v2");
	CUpti_SubscriberParams p;

	holder[0] = '\0';
	if (!sub2)
		return cuptiSubscribe(&g_sub, on_callback, NULL);
	memset(&p, 0, sizeof(p));
	p.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
	p.subscriberName = "gaptrace";
	p.oldSubscriberName = holder;
	p.oldSubscriberSize = holder_len;
	return sub2(&g_sub, on_callback, NULL, &p);
}

/*
 * Subscribes and registers the callbacks, for a tracer that just attached
 * (caller holds g_ctl).  Refused by CUPTI (another subscriber): reported
 * through the status, and tried again for the next tracer.  Anything else
 * that fails steps aside for good.
 */
static void acquire_locked(void)
{
	typedef CUptiResult (*ts_reg_t)(CUpti_TimestampCallbackFunc);
	char holder[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1];
	const char *clock_env;
	ts_reg_t ts_reg;
	CUptiResult res;
	uint8_t one = 1;
	size_t sz = sizeof(one);

	res = subscribe(holder, sizeof(holder) - 1);
	if (res != CUPTI_SUCCESS) {
		char what[160];

		g_sub = NULL;
		holder[sizeof(holder) - 1] = '\0';
		/* Injected again into a program that loaded us at launch: that copy serves. */
		if (res == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED &&
		    strstr(holder, "gaptrace")) {
			vlog("another copy of this library holds CUPTI; this one steps aside");
			state_set(ST_FAILED);
			return;
		}
		if (res == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED && holder[0])
			snprintf(what, sizeof(what), "cuptiSubscribe (CUPTI is in use by %s)",
				 holder);
		else
			snprintf(what, sizeof(what), "cuptiSubscribe");
		report_failure(what, cupti_str(res));
		g_refused = true;
		return;
	}
	g_held = true;
	res = cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
	if (res != CUPTI_SUCCESS) {
		report_failure("cuptiSetThreadIdType(SYSTEM)", cupti_str(res));
		teardown_locked();
		return;
	}
	/*
	 * Before any kind is enabled, as CUPTI requires; absent before CUDA 12.x.
	 * GAPTRACE_CUPTI_CLOCK=offset skips it, for CUPTI versions whose callback
	 * timestamps are wrong (the report's clock check shows violations then).
	 * Registered again after each cuptiFinalize, which forgets it.
	 */
	ts_reg = (ts_reg_t)cupti_sym("cuptiActivityRegisterTimestampCallback");
	clock_env = getenv("GAPTRACE_CUPTI_CLOCK");
	if (clock_env && strcmp(clock_env, "offset") == 0)
		ts_reg = NULL;
	g_clock_mode = ts_reg && ts_reg(mono_ns) == CUPTI_SUCCESS ? CLK_CALLBACK : CLK_OFFSET;
	/* We hand CUPTI zeroed buffers, so it need not zero them on the program's threads. */
	g_zeroed = cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &sz,
					     &one) == CUPTI_SUCCESS;
	res = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
	if (res != CUPTI_SUCCESS) {
		report_failure("cuptiActivityRegisterCallbacks", cupti_str(res));
		teardown_locked();
		return;
	}
	vlog("CUPTI acquired (clock %s)", g_clock_mode == CLK_CALLBACK ? "callback" : "offset");
}

/* 1: done by this call, 0: done or under way elsewhere, -1: stepped aside. */
static int init_once(void)
{
	int expect = ST_IDLE;

	if (!__atomic_compare_exchange_n(&g_state, &expect, ST_STARTING, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE))
		return expect == ST_FAILED ? -1 : 0;
	g_verbose = getenv("GAPTRACE_CUPTI_VERBOSE") != NULL;
	pthread_atfork(NULL, NULL, at_fork_child);
	atexit(at_exit);
	state_set(ST_READY);
	vlog("ready (pid %d); waiting for a tracer", (int)getpid());
	return 1;
}

static void step_aside_no_thread(int err)
{
	char what[96];

	snprintf(what, sizeof(what), "cannot start its control thread");
	report_failure(what, strerror(err));
	pthread_mutex_lock(&g_ctl);
	teardown_locked();
	pthread_mutex_unlock(&g_ctl);
}

static unsigned long wait_ms_env(void)
{
	const char *s = getenv("GAPTRACE_CUPTI_WAIT_MS");
	unsigned long v;
	char *end;

	if (!s || !*s)
		return 0;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end)
		return 0;
	return v > WAIT_MS_MAX ? WAIT_MS_MAX : v;
}

/*
 * Called by the CUDA driver from cuInit when CUDA_INJECTION64_PATH names this
 * library.  Launch mode sets GAPTRACE_CUPTI_WAIT_MS: the tracer attaches to
 * our probes once it sees us mapped, and waiting for it here (bounded) keeps
 * the program's first kernels in the capture.
 */
GT_EXPORT int InitializeInjection(void)
{
	unsigned long wait_ms = wait_ms_env();
	int saved = errno, err;

	if (init_once() != 1)
		goto failed;
	err = start_thread(ctl_main);
	if (err) {
		step_aside_no_thread(err);
		goto failed;
	}
	for (unsigned long i = 0; i < wait_ms && !tracer_attached(); i++)
		sleep_ns(NSEC_PER_MSEC);
	if (tracer_attached())
		ctl_step(true);
	if (state_get() == ST_FAILED ||
	    __atomic_load_n(&gaptrace_cupti_status.failed, __ATOMIC_ACQUIRE))
		goto failed;
	errno = saved;
	return 1;

failed:
	/*
	 * A tracer that launched us falls back to libcuda uprobes when it sees
	 * the failure (it reads gaptrace_cupti_status): give it the time to, so
	 * the program's first launches are in its host-side view.
	 */
	for (unsigned long i = 0;
	     i < wait_ms && !__atomic_load_n(&gaptrace_cupti_status.fallback, __ATOMIC_ACQUIRE);
	     i++)
		sleep_ns(NSEC_PER_MSEC);
	errno = saved;
	return 1; /* CUDA carries on without us either way */
}

static void *init_thread_main(void *arg)
{
	(void)arg;
	if (init_once() == 1)
		ctl_main(NULL);
	return NULL;
}

/* True when CUDA_INJECTION64_PATH is this very file: the driver will call us. */
static bool named_by_injection_env(void)
{
	const char *env = getenv("CUDA_INJECTION64_PATH");
	struct stat a, b;
	Dl_info info;

	if (!env || !*env)
		return false;
	if (!dladdr((void *)InitializeInjection, &info) || !info.dli_fname)
		return false;
	if (stat(env, &a) == 0 && stat(info.dli_fname, &b) == 0)
		return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
	return false;
}

/*
 * dlopen runs this under the loader lock, where CUPTI must not be called: a
 * dlopen into a running program (live attach) initialises on a new thread.
 */
__attribute__((constructor)) static void gt_ctor(void)
{
	int saved = errno, err;

	if (named_by_injection_env())
		goto out;
	err = start_thread(init_thread_main);
	if (err) {
		report_failure("cannot start its thread", strerror(err));
		state_set(ST_FAILED);
	}
out:
	errno = saved;
}

/*
 * NVTX_INJECTION64_PATH may name this library as well as libcupti: CUPTI
 * records NVTX ranges only through its own NVTX handler, so hand over to it.
 */
GT_EXPORT int InitializeInjectionNvtx2(const void *get_export_table)
{
	typedef int (*nvtx_init_t)(const void *);
	int saved = errno, ret = 0;
	nvtx_init_t fn = (nvtx_init_t)cupti_sym("InitializeInjectionNvtx2");

	if (fn && fn != InitializeInjectionNvtx2)
		ret = fn(get_export_table);
	errno = saved;
	return ret;
}
