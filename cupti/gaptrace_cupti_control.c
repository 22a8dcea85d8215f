// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * gaptrace_cupti_control.c: following the tracer.  The control thread watches
 * the gpu_batch probe's semaphore: a tracer attached, it subscribes to CUPTI
 * and enables the activity kinds; the tracer gone, it disables them and hands
 * CUPTI back at the program's next API exit.  Also the library's entry points:
 * InitializeInjection (launch mode), the constructor (live attach), the exit
 * and fork handlers.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gaptrace/gaptrace-cupti-api.h"
#include "gaptrace_cupti_priv.h"

#define POLL_NS	    (50 * NSEC_PER_MSEC)  /* semaphore check period */
#define FLUSH_NS    (100 * NSEC_PER_MSEC) /* cuptiActivityFlushAll period while traced */
#define WAIT_MS_MAX 60000		  /* cap on GAPTRACE_CUPTI_WAIT_MS */

static CUpti_SubscriberHandle g_sub;

/* Serialises every CUPTI control call: enable, disable, flush, teardown. */
static pthread_mutex_t g_ctl = PTHREAD_MUTEX_INITIALIZER;
static bool g_held;    /* subscribed and callbacks registered; under g_ctl */
static int g_release;  /* detached: cuptiFinalize at the next API exit; __atomic */
static bool g_refused; /* CUPTI refused this tracer: wait for the next one; under g_ctl */
static bool g_exiting; /* the process is exiting: no more CUPTI calls; __atomic */
static uint32_t g_enabled_mask;

static const char *cupti_str(CUptiResult res)
{
	const char *s = NULL;

	if (cuptiGetResultString(res, &s) != CUPTI_SUCCESS || !s)
		return "unknown CUPTI error";
	return s;
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
		if (__atomic_load_n(&g_release, __ATOMIC_ACQUIRE) && !g_lib.active &&
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

static void disable_locked(void)
{
	for (unsigned int i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (g_enabled_mask & (1u << i))
			cuptiActivityDisable(kinds[i].kind);
	}
	g_enabled_mask = 0;
	/* Hands back what is in flight; nobody reads it any more, so it is discarded. */
	__atomic_store_n(&g_lib.active, false, __ATOMIC_RELEASE);
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
	if (g_enabled_mask || __atomic_load_n(&g_lib.active, __ATOMIC_ACQUIRE))
		disable_locked();
	release_locked(false);
	state_set(ST_FAILED);
}

static void enable_locked(void)
{
	pool_prealloc();
	calibrate();
	/* A new tracer missed every name sent before: each is sent again on first use. */
	__atomic_add_fetch(&g_lib.epoch, 1, __ATOMIC_ACQ_REL);
	__atomic_store_n(&g_lib.active, true, __ATOMIC_RELEASE);
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
	     why, (unsigned long long)__atomic_load_n(&g_stats.sent, __ATOMIC_RELAXED),
	     (unsigned long long)__atomic_load_n(&g_stats.invalid, __ATOMIC_RELAXED),
	     (unsigned long long)__atomic_load_n(&g_stats.dropped, __ATOMIC_RELAXED),
	     (unsigned long long)__atomic_load_n(&g_stats.foreign, __ATOMIC_RELAXED));
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
	if (__atomic_load_n(&g_lib.fail_pending, __ATOMIC_ACQUIRE)) {
		teardown_locked();
	} else if (tracer_attached()) {
		if (!g_held && !g_refused)
			acquire_locked();
		if (g_held && !g_lib.active) {
			release_cancel_locked();
			enable_locked();
		} else if (g_lib.active) {
			if (g_clock.mode == CLK_OFFSET && mono_now() >= g_clock.next_recal)
				calibrate();
			if (flush_due)
				cuptiActivityFlushAll(0);
		}
	} else {
		if (g_lib.active) {
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
			__atomic_store_n(&g_lib.reported, 0, __ATOMIC_RELEASE);
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
	rx_start();
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
		if (state_get() == ST_READY && g_lib.active && tracer_attached()) {
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
	__atomic_store_n(&g_lib.active, false, __ATOMIC_RELEASE);
	rx_fork_child();
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
	g_clock.mode = ts_reg && ts_reg(mono_ns) == CUPTI_SUCCESS ? CLK_CALLBACK : CLK_OFFSET;
	/* We hand CUPTI zeroed buffers, so it need not zero them on the program's threads. */
	g_lib.zeroed = cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER,
						 &sz, &one) == CUPTI_SUCCESS;
	res = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
	if (res != CUPTI_SUCCESS) {
		report_failure("cuptiActivityRegisterCallbacks", cupti_str(res));
		teardown_locked();
		return;
	}
	vlog("CUPTI acquired (clock %s)", g_clock.mode == CLK_CALLBACK ? "callback" : "offset");
}

/* 1: done by this call, 0: done or under way elsewhere, -1: stepped aside. */
static int init_once(void)
{
	int expect = ST_IDLE;

	if (!__atomic_compare_exchange_n(&g_lib.state, &expect, ST_STARTING, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return expect == ST_FAILED ? -1 : 0;
	g_lib.verbose = getenv("GAPTRACE_CUPTI_VERBOSE") != NULL;
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
