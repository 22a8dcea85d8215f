// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * pm_sampling_cost.cu: what CUPTI's PM sampling would give the monitor
 * (issue #27's cost lever), with nothing of gaptrace in the process.
 *
 * PM sampling reads hardware counters at a fixed interval into a hardware
 * buffer: no record per launch, so its cost should not grow with the launch
 * rate the way kernel activity records do (~1.3 us per launch).  Two
 * questions, each answered in one process:
 *
 *  1. cost: the launch rate of a tiny-kernel loop (tests/gpu/launch_loop.cu's
 *     shape) untraced, then with PM sampling at several intervals (the decode
 *     thread running as the monitor's would), then untraced again;
 *  2. resolution: a duty pattern with a known busy share (a spinning kernel of
 *     BUSY_MS then an idle CPU sleep of IDLE_MS) and the busy share PM
 *     sampling reports for it (gr__cycles_active over gr__cycles_elapsed per
 *     sample), beside the share the host timing gives.
 *
 * Build: nvcc -O2 -arch=sm_90 tests/gpu/pm_sampling_cost.cu -lcupti -lcuda -o pm_sampling_cost
 *        (-L and -Xlinker -rpath to the toolkit's CUPTI lib64)
 * Usage: pm_sampling_cost [--secs S] [--metric NAME]...
 * Prints markdown rows.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>
#include <cuda_runtime.h>
#include <cupti.h>

#include "launch_rate.cuh"
#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_target.h>

#define CK(call)                                                                             \
	do {                                                                                 \
		CUptiResult r_ = (call);                                                     \
		if (r_ != CUPTI_SUCCESS) {                                                   \
			const char *s_ = NULL;                                               \
			cuptiGetResultString(r_, &s_);                                       \
			fprintf(stderr, "pm_sampling_cost: %s: %s\n", #call, s_ ? s_ : "?"); \
			return false;                                                        \
		}                                                                            \
	} while (0)

/* Spins for ns of GPU time (globaltimer), one block. */
__global__ void spin(unsigned long long ns)
{
	unsigned long long t0, t;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
	do {
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	} while (t - t0 < ns);
}

/* A CUPTI parameter block: zeroed, its size set (the API checks it). */
#define PARAMS(T, v)              \
	T v;                      \
	memset(&v, 0, sizeof(v)); \
	v.structSize = T##_STRUCT_SIZE

static float *g_x;
static cudaStream_t g_s;

/* A known duty pattern: busy_ms of GPU spin, then idle_ms of CPU sleep. */
static void duty(double secs, double busy_ms, double idle_ms, unsigned long long *busy_ns,
		 unsigned long long *total_ns)
{
	unsigned long long t0 = mono_ns(), end = t0 + (unsigned long long)(secs * 1e9);
	unsigned long long n = 0;

	/* The kernel spins exactly busy_ms of GPU time: that is the truth. */
	while (mono_ns() < end) {
		spin<<<1, 1, 0, g_s>>>((unsigned long long)(busy_ms * 1e6));
		cudaStreamSynchronize(g_s);
		n++;
		usleep((useconds_t)(idle_ms * 1e3));
	}
	*busy_ns = (unsigned long long)(n * busy_ms * 1e6);
	*total_ns = mono_ns() - t0;
}

/* ---- PM sampling ---- */

static const char *g_metrics[8] = {"gr__cycles_active.sum", "gr__cycles_elapsed.max"};
static size_t g_nmetrics = 2;

struct pm {
	CUpti_Profiler_Host_Object *host;
	CUpti_PmSampling_Object *obj;
	uint8_t *config;
	size_t config_size;
	uint8_t *data;
	size_t data_size;
	uint32_t max_samples;
	/* decode thread */
	pthread_t thread;
	volatile int stop;
	unsigned long long samples, overflows, decode_ns, decodes;
	double active, elapsed; /* summed over samples */
	unsigned long long span_ns;
	unsigned long long first_ts, last_ts;
};

static bool pm_host_init(struct pm *p)
{
	PARAMS(CUpti_Device_GetChipName_Params, chip);
	PARAMS(CUpti_PmSampling_GetCounterAvailability_Params, av);
	PARAMS(CUpti_Profiler_Host_Initialize_Params, hi);
	PARAMS(CUpti_Profiler_Host_ConfigAddMetrics_Params, am);
	PARAMS(CUpti_Profiler_Host_GetConfigImageSize_Params, cs);
	PARAMS(CUpti_Profiler_Host_GetConfigImage_Params, ci);
	PARAMS(CUpti_Profiler_Initialize_Params, pi);
	uint8_t *avail;

	CK(cuptiProfilerInitialize(&pi));
	chip.deviceIndex = 0;
	CK(cuptiDeviceGetChipName(&chip));
	av.deviceIndex = 0;
	CK(cuptiPmSamplingGetCounterAvailability(&av));
	avail = (uint8_t *)calloc(1, av.counterAvailabilityImageSize);
	av.pCounterAvailabilityImage = avail;
	CK(cuptiPmSamplingGetCounterAvailability(&av));
	printf("chip %s, counter availability image %zu bytes\n", chip.pChipName,
	       av.counterAvailabilityImageSize);

	hi.profilerType = CUPTI_PROFILER_TYPE_PM_SAMPLING;
	hi.pChipName = chip.pChipName;
	hi.pCounterAvailabilityImage = avail;
	CK(cuptiProfilerHostInitialize(&hi));
	p->host = hi.pHostObject;

	am.pHostObject = p->host;
	am.ppMetricNames = g_metrics;
	am.numMetrics = g_nmetrics;
	if (cuptiProfilerHostConfigAddMetrics(&am) != CUPTI_SUCCESS) {
		/* Name what this chip offers, so the next run can pick. */
		PARAMS(CUpti_Profiler_Host_GetBaseMetrics_Params, bm);

		bm.pHostObject = p->host;
		bm.metricType = CUPTI_METRIC_TYPE_COUNTER;
		if (cuptiProfilerHostGetBaseMetrics(&bm) == CUPTI_SUCCESS)
			for (size_t i = 0; i < bm.numMetrics; i++)
				if (strstr(bm.ppMetricNames[i], "cycles"))
					fprintf(stderr, "  counter metric: %s\n",
						bm.ppMetricNames[i]);
		fprintf(stderr, "pm_sampling_cost: metrics not accepted; pass --metric\n");
		return false;
	}
	cs.pHostObject = p->host;
	CK(cuptiProfilerHostGetConfigImageSize(&cs));
	p->config_size = cs.configImageSize;
	p->config = (uint8_t *)calloc(1, p->config_size);
	ci.pHostObject = p->host;
	ci.configImageSize = p->config_size;
	ci.pConfigImage = p->config;
	CK(cuptiProfilerHostGetConfigImage(&ci));
	free(avail);
	return true;
}

static bool pm_data_init(struct pm *p)
{
	PARAMS(CUpti_PmSampling_CounterDataImage_Initialize_Params, in);

	memset(p->data, 0, p->data_size);
	in.pPmSamplingObject = p->obj;
	in.counterDataSize = p->data_size;
	in.pCounterData = p->data;
	CK(cuptiPmSamplingCounterDataImageInitialize(&in));
	return true;
}

/* Decodes what the hardware buffer holds, sums the samples, re-initialises the image. */
static bool pm_decode(struct pm *p)
{
	PARAMS(CUpti_PmSampling_DecodeData_Params, dd);
	PARAMS(CUpti_PmSampling_GetCounterDataInfo_Params, info);
	unsigned long long t0 = mono_ns();
	double v[8];

	dd.pPmSamplingObject = p->obj;
	dd.pCounterDataImage = p->data;
	dd.counterDataImageSize = p->data_size;
	CK(cuptiPmSamplingDecodeData(&dd));
	p->overflows += dd.overflow;
	info.pCounterDataImage = p->data;
	info.counterDataImageSize = p->data_size;
	CK(cuptiPmSamplingGetCounterDataInfo(&info));
	for (size_t i = 0; i < info.numCompletedSamples; i++) {
		PARAMS(CUpti_PmSampling_CounterData_GetSampleInfo_Params, si);
		PARAMS(CUpti_Profiler_Host_EvaluateToGpuValues_Params, ev);

		si.pPmSamplingObject = p->obj;
		si.pCounterDataImage = p->data;
		si.counterDataImageSize = p->data_size;
		si.sampleIndex = i;
		CK(cuptiPmSamplingCounterDataGetSampleInfo(&si));
		ev.pHostObject = p->host;
		ev.pCounterDataImage = p->data;
		ev.counterDataImageSize = p->data_size;
		ev.rangeIndex = i;
		ev.ppMetricNames = g_metrics;
		ev.numMetrics = g_nmetrics;
		ev.pMetricValues = v;
		CK(cuptiProfilerHostEvaluateToGpuValues(&ev));
		if (!p->first_ts)
			p->first_ts = si.startTimestamp;
		p->last_ts = si.endTimestamp;
		p->span_ns += si.endTimestamp - si.startTimestamp;
		p->active += v[0];
		p->elapsed += g_nmetrics > 1 ? v[1] : 0;
		p->samples++;
	}
	p->decode_ns += mono_ns() - t0;
	p->decodes++;
	return pm_data_init(p);
}

static void *pm_thread(void *arg)
{
	struct pm *p = (struct pm *)arg;

	while (!p->stop) {
		usleep(100000); /* the monitor's drain period */
		if (!pm_decode(p))
			break;
	}
	return NULL;
}

static bool pm_start(struct pm *p, uint64_t interval_ns)
{
	PARAMS(CUpti_PmSampling_Enable_Params, en);
	PARAMS(CUpti_PmSampling_SetConfig_Params, sc);
	PARAMS(CUpti_PmSampling_GetCounterDataSize_Params, ds);
	PARAMS(CUpti_PmSampling_Start_Params, st);

	en.deviceIndex = 0;
	CK(cuptiPmSamplingEnable(&en));
	p->obj = en.pPmSamplingObject;
	sc.pPmSamplingObject = p->obj;
	sc.configSize = p->config_size;
	sc.pConfig = p->config;
	sc.hardwareBufferSize = 512u << 20;
	sc.samplingInterval = interval_ns;
	sc.triggerMode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL;
	sc.hwBufferAppendMode = CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_OLDEST;
	CK(cuptiPmSamplingSetConfig(&sc));
	/* Room for 0.5 s of samples between decodes at this interval. */
	p->max_samples = (uint32_t)(500000000ull / interval_ns) + 64;
	ds.pPmSamplingObject = p->obj;
	ds.pMetricNames = g_metrics;
	ds.numMetrics = g_nmetrics;
	ds.maxSamples = p->max_samples;
	CK(cuptiPmSamplingGetCounterDataSize(&ds));
	p->data_size = ds.counterDataSize;
	p->data = (uint8_t *)malloc(p->data_size);
	if (!pm_data_init(p))
		return false;
	st.pPmSamplingObject = p->obj;
	CK(cuptiPmSamplingStart(&st));
	p->stop = 0;
	p->samples = p->overflows = p->decode_ns = p->decodes = 0;
	p->active = p->elapsed = 0;
	p->span_ns = p->first_ts = p->last_ts = 0;
	pthread_create(&p->thread, NULL, pm_thread, p);
	return true;
}

static bool pm_stop(struct pm *p)
{
	PARAMS(CUpti_PmSampling_Stop_Params, st);
	PARAMS(CUpti_PmSampling_Disable_Params, di);

	p->stop = 1;
	pthread_join(p->thread, NULL);
	st.pPmSamplingObject = p->obj;
	CK(cuptiPmSamplingStop(&st));
	pm_decode(p);
	di.pPmSamplingObject = p->obj;
	CK(cuptiPmSamplingDisable(&di));
	free(p->data);
	p->data = NULL;
	return true;
}

int main(int argc, char **argv)
{
	static const uint64_t intervals[] = {1000000, 100000, 20000};
	double secs = 3;
	size_t user_metrics = 0;
	struct pm p;
	double base0, base1;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--secs") && i + 1 < argc)
			secs = atof(argv[++i]);
		else if (!strcmp(argv[i], "--metric") && i + 1 < argc && user_metrics < 8)
			g_metrics[user_metrics++] = argv[++i];
		else {
			fprintf(stderr, "usage: pm_sampling_cost [--secs S] [--metric NAME]...\n");
			return 2;
		}
	}
	if (user_metrics)
		g_nmetrics = user_metrics;
	memset(&p, 0, sizeof(p));
	cudaSetDevice(0);
	cudaStreamCreate(&g_s);
	cudaMalloc(&g_x, 32 * sizeof(float));
	cudaMemset(g_x, 0, 32 * sizeof(float));
	cudaDeviceSynchronize();
	if (!pm_host_init(&p))
		return 1;

	printf("\n1. cost on a tiny-kernel launch loop (median of 100 ms windows, %.0f s each)\n\n",
	       secs);
	printf("| config | launches/s | ratio to untraced | samples | decode CPU | overflow |\n");
	printf("| --- | --- | --- | --- | --- | --- |\n");
	base0 = launch_rate(secs, g_x, g_s);
	printf("| untraced | %.0f | 1.000 | | | |\n", base0);
	for (size_t k = 0; k < sizeof(intervals) / sizeof(intervals[0]); k++) {
		double r, wall;
		unsigned long long t0;

		if (!pm_start(&p, intervals[k]))
			return 1;
		t0 = mono_ns();
		r = launch_rate(secs, g_x, g_s);
		wall = (mono_ns() - t0) / 1e9;
		if (!pm_stop(&p))
			return 1;
		printf(
		    "| PM sampling every %llu us | %.0f | %.3f | %llu | %.2f%% of a CPU | %llu |\n",
		    (unsigned long long)(intervals[k] / 1000), r, r / base0, p.samples,
		    100.0 * p.decode_ns / 1e9 / wall, p.overflows);
	}
	base1 = launch_rate(secs, g_x, g_s);
	printf("| untraced again | %.0f | %.3f | | | |\n", base1, base1 / base0);

	printf("\n2. resolution: a known duty pattern, PM sampling every 100 us\n\n");
	printf(
	    "| pattern | busy share (spin time x count) | busy share (PM: %s / %s) | samples |\n",
	    g_metrics[0], g_nmetrics > 1 ? g_metrics[1] : "-");
	printf("| --- | --- | --- | --- |\n");
	{
		static const double pat[][2] = {{2, 3}, {0.2, 0.8}, {0.05, 0.45}};

		for (size_t k = 0; k < sizeof(pat) / sizeof(pat[0]); k++) {
			unsigned long long b, t;

			if (!pm_start(&p, 100000))
				return 1;
			duty(secs, pat[k][0], pat[k][1], &b, &t);
			if (!pm_stop(&p))
				return 1;
			printf("| %.2f ms busy / %.2f ms idle | %.3f | %.3f | %llu |\n", pat[k][0],
			       pat[k][1], (double)b / (double)t,
			       p.elapsed > 0 ? p.active / p.elapsed : -1.0, p.samples);
		}
	}
	return 0;
}
