// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cupti_cost.cu: where CUPTI's cost lies on a launch-bound loop (issue #14),
 * with nothing of gaptrace in the process.  One process launches a tiny
 * kernel on one stream (synchronising every 256 launches, as
 * tests/gpu/launch_loop.cu) and measures the launch rate under one CUPTI
 * configuration after another, each phase between two untraced phases so
 * that drift shows: activity kinds alone and together, API records for every
 * call or only the launch, an API callback instead of API records, and the
 * set libgaptrace-cupti.so enables.  Records are counted and dropped in the
 * buffer callback, so the figures are CUPTI's own cost.
 *
 * Attributes CUPTI reads only before CUDA starts are tried in separate
 * processes: --pre pinned (profiling buffers in pinned host memory),
 * --pre no-per-thread (one activity buffer for all threads).
 *
 * Build: make gpu-workload (.output/gpu/cupti_cost), or by hand:
 *        nvcc -O2 -arch=sm_90 tests/gpu/cupti_cost.cu -lcupti -o cupti_cost
 *        (-L and -Xlinker -rpath to the toolkit's CUPTI lib64)
 * Usage: cupti_cost [--secs S] [--pre pinned|no-per-thread] [--only NAME]
 * Prints "| config | launches/s | ratio | records |" rows (markdown).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime.h>
#include <cupti.h>

#include "launch_rate.cuh"

static unsigned long long g_records;

static void CUPTIAPI buf_req(uint8_t **buf, size_t *size, size_t *max)
{
	*size = 8 << 20;
	*buf = (uint8_t *)aligned_alloc(8, *size);
	*max = 0;
}

static void CUPTIAPI buf_done(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size,
			      size_t valid)
{
	CUpti_Activity *rec = NULL;

	(void)ctx;
	(void)stream;
	(void)size;
	while (cuptiActivityGetNextRecord(buf, valid, &rec) == CUPTI_SUCCESS)
		__atomic_add_fetch(&g_records, 1, __ATOMIC_RELAXED);
	free(buf);
}

static unsigned long long g_cb;

static void CUPTIAPI on_cb(void *ud, CUpti_CallbackDomain dom, CUpti_CallbackId cbid,
			   const void *data)
{
	const CUpti_CallbackData *cb = (const CUpti_CallbackData *)data;

	(void)ud;
	(void)dom;
	(void)cbid;
	if (cb->callbackSite == CUPTI_API_EXIT)
		g_cb += cb->correlationId != 0;
}

static float *g_x;
static cudaStream_t g_s;

static const CUpti_ActivityKind gaptrace_kinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
    CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_RUNTIME,
    CUPTI_ACTIVITY_KIND_DRIVER,
    CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
    CUPTI_ACTIVITY_KIND_MEMCPY2,
    CUPTI_ACTIVITY_KIND_MARKER,
};

/* Switches every call id of a domain off but the launch ones (gaptrace keeps a few more). */
static void api_only_launch(bool driver)
{
	uint32_t size = driver ? (uint32_t)CUPTI_DRIVER_TRACE_CBID_SIZE
			       : (uint32_t)CUPTI_RUNTIME_TRACE_CBID_SIZE;
	CUpti_CallbackDomain dom =
	    driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API;

	for (uint32_t cbid = 1; cbid < size; cbid++) {
		const char *name = NULL;
		bool keep;

		if (cuptiGetCallbackName(dom, cbid, &name) != CUPTI_SUCCESS || !name)
			continue;
		keep = !strncmp(name, driver ? "cuLaunch" : "cudaLaunch", driver ? 8 : 10) ||
		       strstr(name, "Synchronize");
		if (driver)
			cuptiActivityEnableDriverApi(cbid, keep);
		else
			cuptiActivityEnableRuntimeApi(cbid, keep);
	}
}

/* Driver launch ids switched off (the runtime's records name the launching thread). */
static void mute_driver_launch(void)
{
	for (uint32_t cbid = 1; cbid < CUPTI_DRIVER_TRACE_CBID_SIZE; cbid++) {
		const char *name = NULL;

		if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, cbid, &name) ==
			CUPTI_SUCCESS &&
		    name && !strncmp(name, "cuLaunch", 8))
			cuptiActivityEnableDriverApi(cbid, 0);
	}
}

enum cfg {
	C_CK,
	C_KERNEL,
	C_RT_ALL,
	C_RT_LAUNCH,
	C_DRV_ALL,
	C_CK_RT_LAUNCH,
	C_CB_LAUNCH,
	C_CK_CB_LAUNCH,
	C_GAPTRACE,
	C_GAPTRACE_NODRVLAUNCH,
	C_CK_RT_DRV_LAUNCH,
	C_HWTRACE,
	C_N
};
static const char *cfg_name[C_N] = {
    "CONCURRENT_KERNEL only",
    "KERNEL (serialized) only",
    "RUNTIME, every call",
    "RUNTIME, launch+sync ids only",
    "DRIVER, every call",
    "CONCURRENT_KERNEL + RUNTIME launch+sync",
    "callback on cudaLaunchKernel only (no activity)",
    "CONCURRENT_KERNEL + callback on cudaLaunchKernel",
    "gaptrace's set (8 kinds, RUNTIME and DRIVER every call)",
    "gaptrace's set, driver cuLaunch* muted",
    "CONCURRENT_KERNEL + RUNTIME and DRIVER launch+sync",
    "CONCURRENT_KERNEL + HW trace (Blackwell)",
};

static CUpti_SubscriberHandle g_sub;

static const char *apply(enum cfg c, bool on)
{
	static char err[128];
	CUptiResult r = CUPTI_SUCCESS;

	err[0] = 0;
	switch (c) {
	case C_CK:
		r = on ? cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
		       : cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
		break;
	case C_KERNEL:
		r = on ? cuptiActivityEnable(CUPTI_ACTIVITY_KIND_KERNEL)
		       : cuptiActivityDisable(CUPTI_ACTIVITY_KIND_KERNEL);
		break;
	case C_RT_ALL:
	case C_RT_LAUNCH:
		r = on ? cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME)
		       : cuptiActivityDisable(CUPTI_ACTIVITY_KIND_RUNTIME);
		if (on && c == C_RT_LAUNCH)
			api_only_launch(false);
		break;
	case C_DRV_ALL:
		r = on ? cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER)
		       : cuptiActivityDisable(CUPTI_ACTIVITY_KIND_DRIVER);
		break;
	case C_CK_RT_LAUNCH:
	case C_CK_RT_DRV_LAUNCH:
		if (on) {
			r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
			if (r == CUPTI_SUCCESS)
				r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME);
			api_only_launch(false);
			if (r == CUPTI_SUCCESS && c == C_CK_RT_DRV_LAUNCH) {
				r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER);
				api_only_launch(true);
			}
		} else {
			cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
			cuptiActivityDisable(CUPTI_ACTIVITY_KIND_RUNTIME);
			cuptiActivityDisable(CUPTI_ACTIVITY_KIND_DRIVER);
		}
		break;
	case C_CB_LAUNCH:
	case C_CK_CB_LAUNCH:
		if (on) {
			if (!g_sub)
				r = cuptiSubscribe(&g_sub, on_cb, NULL);
			if (r == CUPTI_SUCCESS)
				r = cuptiEnableCallback(
				    1, g_sub, CUPTI_CB_DOMAIN_RUNTIME_API,
				    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
			if (r == CUPTI_SUCCESS && c == C_CK_CB_LAUNCH)
				r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
		} else {
			cuptiEnableCallback(0, g_sub, CUPTI_CB_DOMAIN_RUNTIME_API,
					    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
			cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
		}
		break;
	case C_GAPTRACE:
	case C_GAPTRACE_NODRVLAUNCH:
		for (unsigned i = 0; i < sizeof(gaptrace_kinds) / sizeof(gaptrace_kinds[0]); i++)
			if (on)
				cuptiActivityEnable(gaptrace_kinds[i]);
			else
				cuptiActivityDisable(gaptrace_kinds[i]);
		if (on && c == C_GAPTRACE_NODRVLAUNCH)
			mute_driver_launch();
		break;
	case C_HWTRACE:
		if (on) {
			r = cuptiActivityEnableHWTrace(1);
			if (r == CUPTI_SUCCESS)
				r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
		} else {
			cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
			cuptiActivityEnableHWTrace(0);
		}
		break;
	default:
		break;
	}
	if (r != CUPTI_SUCCESS) {
		const char *s = NULL;

		cuptiGetResultString(r, &s);
		snprintf(err, sizeof(err), "%s", s ? s : "error");
		return err;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = 1.0;
	const char *pre = NULL, *only = NULL;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--secs") && i + 1 < argc)
			secs = atof(argv[++i]);
		else if (!strcmp(argv[i], "--pre") && i + 1 < argc)
			pre = argv[++i];
		else if (!strcmp(argv[i], "--only") && i + 1 < argc)
			only = argv[++i];
		else {
			fprintf(stderr,
				"usage: cupti_cost [--secs S] [--pre pinned|no-per-thread] [--only "
				"CONFIG-PREFIX]\n");
			return 2;
		}
	}
	if (pre) {
		uint8_t v = !strcmp(pre, "pinned");
		size_t sz = sizeof(v);
		CUpti_ActivityAttribute a =
		    !strcmp(pre, "pinned") ? CUPTI_ACTIVITY_ATTR_MEM_ALLOCATION_TYPE_HOST_PINNED
					   : CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER;

		if (cuptiActivitySetAttribute(a, &sz, &v) != CUPTI_SUCCESS)
			fprintf(stderr, "cupti_cost: attribute for --pre %s refused\n", pre);
	}
	if (cuptiActivityRegisterCallbacks(buf_req, buf_done) != CUPTI_SUCCESS) {
		fprintf(stderr, "cupti_cost: cuptiActivityRegisterCallbacks failed\n");
		return 1;
	}
	if (cudaMalloc(&g_x, 1024 * sizeof(float)) != cudaSuccess ||
	    cudaStreamCreate(&g_s) != cudaSuccess) {
		fprintf(stderr, "cupti_cost: no usable CUDA device\n");
		return 1;
	}
	cudaMemset(g_x, 0, 1024 * sizeof(float));
	cudaDeviceSynchronize();
	launch_rate(0.5, g_x, g_s); /* warm-up */
	printf("| config%s | launches/s | ratio to the untraced phases around it | records |\n",
	       pre ? (!strcmp(pre, "pinned") ? " (pinned profiling buffers)"
					     : " (one activity buffer for all threads)")
		   : "");
	printf("| --- | --- | --- | --- |\n");
	double base0 = launch_rate(secs, g_x, g_s);
	printf("| untraced | %.0f | 1.000 | 0 |\n", base0);
	fflush(stdout);
	for (int c = 0; c < C_N; c++) {
		const char *err;
		double rate, base1;
		unsigned long long rec0;

		if (only && strncmp(cfg_name[c], only, strlen(only)))
			continue;
		if (pre && c != C_CK && c != C_GAPTRACE && c != C_CK_RT_LAUNCH)
			continue;
		rec0 = __atomic_load_n(&g_records, __ATOMIC_RELAXED) + g_cb;
		err = apply((enum cfg)c, true);
		if (err) {
			apply((enum cfg)c, false);
			printf("| %s | refused: %s | | |\n", cfg_name[c], err);
			fflush(stdout);
			continue;
		}
		rate = launch_rate(secs, g_x, g_s);
		apply((enum cfg)c, false);
		cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
		base1 = launch_rate(secs, g_x, g_s);
		printf("| %s | %.0f | %.3f | %llu |\n", cfg_name[c], rate,
		       rate * 2 / (base0 + base1),
		       __atomic_load_n(&g_records, __ATOMIC_RELAXED) + g_cb - rec0);
		fflush(stdout);
		base0 = base1;
	}
	printf("| untraced, at the end | %.0f | | |\n", base0);
	return 0;
}
