// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * prover_gpu.cu: the ground-truth workload of tests/workloads/prover_sim.c on a
 * real NVIDIA GPU: same scenarios, options and truth file, real kernels.
 *
 * Threads and delays are prover_sim's (tests/workloads/delay_common.h):
 * synth-N feed a bounded channel; gpu-worker pops a partition, fires
 * unit_begin, launches the unit's work on one stream, waits for it with
 * cudaStreamSynchronize, post-processes ~0.1 ms, fires unit_end and then
 * injects the scenario's delay into the gap before the next unit.  The GPU
 * activity reaches gaptrace through libgaptrace-cupti.so (CUPTI), not through
 * this program, so a run without the library is the untraced baseline.
 *
 * One unit on the device, in stream order:
 *   cudaMemsetAsync of a 64 KiB output buffer              (a memset record)
 *   --kernels launches of spin_kernel, each sized at startup with cudaEvents
 *     to take --kernel-us of GPU time; halfway through the launches the
 *     worker frees the previous unit's pinned buffer (cudaFreeHost, which may
 *     wait for the device: an intra-unit gap) and allocates this unit's
 *     (cudaHostAlloc), as provers do per partition
 *   cudaMemcpyAsync of the output into the pinned buffer   (a memcpy record)
 *
 * What differs from the simulation, because a real device's timing is only
 * known afterwards:
 *   - the lock-holder takes the mutex during the unit and lets it go the
 *     injection's length after cudaStreamSynchronize returned;
 *   - heap-prep works until the calibrated end of the unit's GPU time (minus
 *     the usual margin) and stops as soon as the worker sees the GPU idle;
 *   - units_log holds GPU times from cudaEvents placed on CLOCK_MONOTONIC
 *     through an anchor event (about +-10 us), for the verbose summary only;
 *   - --duration-s runs until a deadline instead of a fixed --units, for the
 *     live-attach test (the truth's "units" is then the number that ran).
 */
#include <getopt.h>

#include <cuda_runtime.h>

#include "delay_common.h"

#define OUT_BYTES    (64 * 1024)
#define BLOCK	     128
#define CAL_ROUNDS   4
#define WARMUP_NS    (200 * NSEC_PER_MSEC) /* let the clocks ramp up before calibrating */
#define ANCHOR_TRIES 8

static struct {
	int device;
	unsigned int pinned_kb;
	uint64_t duration_ns;
	bool blocking_sync;
	unsigned int pinned_gap_mib; /* --pinned-gap-mib: pinned alloc+free in each gap */
} gopt = {0, 1024, 0, false, 0};

static struct {
	cudaStream_t stream;
	unsigned int *d_out;
	int sms;
	char name[256];
	unsigned long long iters; /* spin_kernel loop count for --kernel-us */
	uint64_t kernel_ns;	  /* measured with those iterations */
	uint64_t unit_ns;	  /* a whole unit's GPU time, measured */
	cudaEvent_t ev_start[2], ev_end[2];
	cudaEvent_t anchor;
	uint64_t anchor_ns;   /* CLOCK_MONOTONIC of the anchor event */
	uint64_t anchor_err;  /* +- of anchor_ns */
	unsigned int *pinned; /* this unit's pinned buffer */
	unsigned long long checksum;
} gpu;

static unsigned int units_requested, units_run;

#define CU(call)                                                              \
	do {                                                                  \
		cudaError_t e_ = (call);                                      \
		if (e_ != cudaSuccess) {                                      \
			fprintf(stderr, "prover_gpu: %s failed: %s\n", #call, \
				cudaGetErrorString(e_));                      \
			exit(1);                                              \
		}                                                             \
	} while (0)

/* A dependent integer chain: its time scales with iters and nothing folds it away. */
__global__ void spin_kernel(unsigned long long iters, unsigned int *out)
{
	unsigned int x = blockIdx.x * blockDim.x + threadIdx.x;

	for (unsigned long long i = 0; i < iters; i++)
		x = x * 1664525u + 1013904223u;
	if (threadIdx.x == 0)
		out[blockIdx.x] = x;
}

static void launch_spin(unsigned long long iters)
{
	spin_kernel<<<gpu.sms, BLOCK, 0, gpu.stream>>>(iters, gpu.d_out);
	CU(cudaGetLastError());
}

/* ns of GPU time per kernel for n back-to-back launches of iters. */
static uint64_t time_kernels(unsigned long long iters, int n)
{
	cudaEvent_t a, b;
	float ms = 0;

	CU(cudaEventCreate(&a));
	CU(cudaEventCreate(&b));
	CU(cudaEventRecord(a, gpu.stream));
	for (int i = 0; i < n; i++)
		launch_spin(iters);
	CU(cudaEventRecord(b, gpu.stream));
	CU(cudaEventSynchronize(b));
	CU(cudaEventElapsedTime(&ms, a, b));
	CU(cudaEventDestroy(a));
	CU(cudaEventDestroy(b));
	return (uint64_t)((double)ms * 1e6 / n);
}

static void unit_device_work(unsigned int mid, bool pinned_cycle);

/* Sizes spin_kernel to --kernel-us and measures a whole unit's GPU time. */
static void calibrate(void)
{
	uint64_t t_end = now_ns() + WARMUP_NS, best = UINT64_MAX;
	unsigned long long iters = 100000;

	while (now_ns() < t_end)
		time_kernels(iters, 4);
	for (int r = 0; r < CAL_ROUNDS; r++) {
		uint64_t ns = time_kernels(iters, 5);
		double scale = ns ? (double)opt.kernel_ns / (double)ns : 10.0;

		iters = (unsigned long long)((double)iters * scale);
		if (iters < 1)
			iters = 1;
	}
	gpu.iters = iters;
	gpu.kernel_ns = time_kernels(iters, 10);
	for (int r = 0; r < 3; r++) {
		cudaEvent_t a, b;
		float ms = 0;

		CU(cudaEventCreate(&a));
		CU(cudaEventCreate(&b));
		CU(cudaEventRecord(a, gpu.stream));
		unit_device_work(opt.kernels, false);
		CU(cudaEventRecord(b, gpu.stream));
		CU(cudaEventSynchronize(b));
		CU(cudaEventElapsedTime(&ms, a, b));
		CU(cudaEventDestroy(a));
		CU(cudaEventDestroy(b));
		if ((uint64_t)(ms * 1e6) < best)
			best = (uint64_t)(ms * 1e6);
	}
	gpu.unit_ns = best;
}

/*
 * Ties cudaEvent times to CLOCK_MONOTONIC: an event recorded on an idle
 * stream completes within microseconds, between the two host reads.
 */
static void set_anchor(void)
{
	cudaEvent_t ev[ANCHOR_TRIES];
	uint64_t best = UINT64_MAX;
	int keep = 0;

	for (int i = 0; i < ANCHOR_TRIES; i++) {
		uint64_t a, b;

		CU(cudaEventCreate(&ev[i]));
		CU(cudaStreamSynchronize(gpu.stream));
		a = now_ns();
		CU(cudaEventRecord(ev[i], gpu.stream));
		CU(cudaEventSynchronize(ev[i]));
		b = now_ns();
		if (b - a < best) {
			best = b - a;
			keep = i;
			gpu.anchor_ns = a + (b - a) / 2;
		}
	}
	gpu.anchor = ev[keep];
	gpu.anchor_err = best / 2;
	for (int i = 0; i < ANCHOR_TRIES; i++)
		if (i != keep)
			CU(cudaEventDestroy(ev[i]));
}

static uint64_t event_mono(cudaEvent_t ev)
{
	float ms = 0;

	if (cudaEventElapsedTime(&ms, gpu.anchor, ev) != cudaSuccess)
		return 0;
	return gpu.anchor_ns + (uint64_t)((double)ms * 1e6);
}

static void log_unit(unsigned int u)
{
	units_log[u].first_start_ns = event_mono(gpu.ev_start[u & 1]);
	units_log[u].last_end_ns = event_mono(gpu.ev_end[u & 1]);
}

/*
 * A partition's pinned staging buffer, as provers allocate per partition:
 * the previous one is freed (cudaFreeHost may wait for the device) and a
 * fresh one allocated, halfway through the unit's launches.
 */
static void pinned_cycle(void)
{
	if (!gopt.pinned_kb)
		return;
	if (gpu.pinned)
		CU(cudaFreeHost(gpu.pinned));
	gpu.pinned = NULL;
	CU(cudaHostAlloc((void **)&gpu.pinned, (size_t)gopt.pinned_kb << 10, cudaHostAllocDefault));
}

/*
 * --pinned-gap-mib: the allocator cost a prover pays between partitions when
 * it pins a fresh staging buffer (cudaHostAlloc) and releases it
 * (cudaFreeHost), inside the gap on the worker thread: truth category
 * allocator (issue #13: it came out ~85% cuda before).
 */
static void pinned_gap(unsigned int gap)
{
	size_t bytes = (size_t)gopt.pinned_gap_mib << 20;
	uint64_t start, end, rd0, rd1;
	void *p = NULL;

	rd0 = run_delay();
	start = now_ns();
	CU(cudaHostAlloc(&p, bytes, cudaHostAllocDefault));
	CU(cudaFreeHost(p));
	end = now_ns();
	rd1 = run_delay();
	record(gap, DELAY_PINNED, start, end, rd0, rd1, end - start, bytes);
}

/* The unit's device work; mid = launches before the pinned-buffer cycle. */
static void unit_device_work(unsigned int mid, bool do_pinned)
{
	size_t copy = (size_t)gopt.pinned_kb << 10;

	CU(cudaMemsetAsync(gpu.d_out, 0, OUT_BYTES, gpu.stream));
	for (unsigned int k = 0; k < opt.kernels; k++) {
		if (k == mid && do_pinned)
			pinned_cycle();
		launch_spin(gpu.iters);
	}
	if (mid >= opt.kernels && do_pinned)
		pinned_cycle();
	if (copy > OUT_BYTES)
		copy = OUT_BYTES;
	if (copy && gpu.pinned)
		CU(cudaMemcpyAsync(gpu.pinned, gpu.d_out, copy, cudaMemcpyDeviceToHost,
				   gpu.stream));
}

static void gpu_init(void)
{
	cudaDeviceProp prop;
	int n = 0;
	cudaError_t e = cudaGetDeviceCount(&n);

	if (e != cudaSuccess || n == 0) {
		fprintf(stderr,
			"prover_gpu: no CUDA device (%s): run it on a host with an NVIDIA GPU\n",
			e != cudaSuccess ? cudaGetErrorString(e) : "none found");
		exit(1);
	}
	if (gopt.device >= n)
		bad_usage("--device %d: this host has %d CUDA device(s)", gopt.device, n);
	CU(cudaSetDevice(gopt.device));
	if (gopt.blocking_sync)
		CU(cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync));
	CU(cudaFree(0)); /* creates the context now, not inside unit 0 */
	CU(cudaGetDeviceProperties(&prop, gopt.device));
	gpu.sms = prop.multiProcessorCount;
	snprintf(gpu.name, sizeof(gpu.name), "%s", prop.name);
	for (char *p = gpu.name; *p; p++)
		if (*p == '"' || *p == '\\')
			*p = ' ';
	CU(cudaStreamCreateWithFlags(&gpu.stream, cudaStreamNonBlocking));
	CU(cudaMalloc((void **)&gpu.d_out, OUT_BYTES));
	for (int i = 0; i < 2; i++) {
		CU(cudaEventCreate(&gpu.ev_start[i]));
		CU(cudaEventCreate(&gpu.ev_end[i]));
	}
}

static void gpu_fini(void)
{
	CU(cudaStreamSynchronize(gpu.stream));
	if (gpu.pinned)
		CU(cudaFreeHost(gpu.pinned));
	gpu.pinned = NULL;
	CU(cudaFree(gpu.d_out));
	CU(cudaStreamDestroy(gpu.stream));
}

static void *worker_main(void *arg)
{
	uint64_t deadline = 0;
	/* A real unit may run a little faster than calibrated: stop heap-prep early. */
	uint64_t unit_est = gpu.unit_ns - gpu.unit_ns / 20;
	unsigned int u;

	(void)arg;
	delay_worker_begin();
	CU(cudaSetDevice(gopt.device));
	if (gopt.duration_ns)
		deadline = now_ns() + gopt.duration_ns;
	for (u = 0; u < opt.units; u++) {
		bool last = u + 1 == opt.units || (deadline && now_ns() >= deadline);
		bool inject = opt.scenario != SC_NONE && !last;
		uint64_t first_launch, expected_end, idle;
		bool waited;

		(void)chan_pop(&waited);
		if (waited && u > 0)
			chan_waits++;
		GAPTRACE_UNIT_BEGIN(u);
		first_launch = now_ns();
		CU(cudaEventRecord(gpu.ev_start[u & 1], gpu.stream));
		unit_device_work(opt.kernels / 2, true);
		CU(cudaEventRecord(gpu.ev_end[u & 1], gpu.stream));
		/* The previous unit's events are done: reading them now costs no gap time. */
		if (u > 0)
			log_unit(u - 1);
		expected_end = first_launch + unit_est;
		if (inject && uses_lock())
			holder_request(0);
		if (uses_prep())
			prep_open_gate(expected_end - PREP_MARGIN_NS);
		delay_sync_mark();
		CU(cudaStreamSynchronize(gpu.stream));
		idle = now_ns();
		if (uses_prep())
			prep_close_gate();
		if (inject && uses_lock())
			holder_set_release(idle + lock_hold_ns(u));
		if (gpu.pinned)
			gpu.checksum += gpu.pinned[0];
		spin_for(POSTPROC_NS);
		GAPTRACE_UNIT_END(u);
		if (inject)
			delay_gap(u);
		if (gopt.pinned_gap_mib && !last)
			pinned_gap(u);
		if (last) {
			u++;
			break;
		}
	}
	units_run = u;
	if (u)
		log_unit(u - 1);
	/* Synthesis may be blocked on a full channel when a deadline ends the run. */
	chan_close();
	return NULL;
}

/* Extra top-level fields of the truth file. */
static void truth_extra(FILE *f)
{
	fprintf(f,
		"\"gpu\":{\"device\":%d,\"name\":\"%s\",\"sms\":%d,\"kernel_iters\":%llu,"
		"\"kernel_ns_measured\":%" PRIu64 ",\"unit_gpu_ns\":%" PRIu64
		",\"pinned_bytes\":%llu,\"blocking_sync\":%s},",
		gopt.device, gpu.name, gpu.sms, gpu.iters, gpu.kernel_ns, gpu.unit_ns,
		(unsigned long long)gopt.pinned_kb << 10, gopt.blocking_sync ? "true" : "false");
	fprintf(f,
		"\"units_requested\":%u,\"duration_ns\":%" PRIu64 ",\"units_log_source\":"
		"\"cudaEvent\",\"units_log_err_ns\":%" PRIu64 ",",
		units_requested, gopt.duration_ns, gpu.anchor_err);
}

/* ---- options ---- */

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "Usage: prover_gpu [OPTION]...\n"
	    "prover_sim's ground-truth workload on a real NVIDIA GPU: real kernels, pinned\n"
	    "buffers and the same measured delays in the GPU idle gaps between units.\n"
	    "GPU activity reaches gaptrace through libgaptrace-cupti.so.\n"
	    "\n"
	    "  -s, --scenario NAME   none, lock, trim, munmap, sched, sleep, cpu, io, mixed,\n"
	    "                        chain, timer, wakeup, counter, heap (default: none)\n"
	    "  -n, --units N         work units (partitions) (default: 10)\n"
	    "      --duration-s S    run for S seconds instead (--units then only caps the\n"
	    "                        count); the last unit is the one that starts after S\n"
	    "  -k, --kernels K       kernels per unit (default: 8)\n"
	    "  -u, --kernel-us U     GPU time of each kernel in us, calibrated at start\n"
	    "                        (default: 2000)\n"
	    "  -d, --inject-ms D     injected delay per gap in ms, scaled by 0.75/1.0/1.25\n"
	    "                        from gap to gap; D/2 per part in mixed (default: 20)\n"
	    "      --trim-mb M       heap fragmented for each malloc_trim, MiB\n"
	    "                        (default: auto, currently %u)\n"
	    "      --munmap-mb M     mapping released by each munmap, MiB\n"
	    "                        (default: auto, currently %u)\n"
	    "  -t, --truth FILE      write the ground truth JSON here at exit (default: none)\n"
	    "      --io-file PATH    file for the io injection, removed at exit\n"
	    "                        (default: ./prover_gpu.io)\n"
	    "      --synth N         synthesis threads (default: 2)\n"
	    "      --seed S          rotates the per-gap scale and jitters synthesis\n"
	    "                        (default: 0)\n"
	    "      --device N        CUDA device (default: 0)\n"
	    "      --pinned-kb K     pinned buffer allocated and freed per unit, KiB; 0 = none\n"
	    "                        (default: 1024)\n"
	    "      --pinned-gap-mib M  also pin M MiB (cudaHostAlloc) and free it\n"
	    "                        (cudaFreeHost) in every gap: truth allocator (default: 0)\n"
	    "      --blocking-sync   cudaDeviceScheduleBlockingSync (default: CUDA's choice,\n"
	    "                        which spins while it waits when CPUs are plenty)\n"
	    "  -q, --quiet           no summary line\n"
	    "  -v, --verbose         per-injection and per-gap numbers on stderr at exit\n"
	    "  -h, --help            this text\n",
	    trim_round_mb, munmap_round_mb);
}

static void parse_args(int argc, char **argv)
{
	enum {
		O_TRIM = 256,
		O_MUNMAP,
		O_IO,
		O_SYNTH,
		O_SEED,
		O_DURATION,
		O_DEVICE,
		O_PINNED,
		O_BLOCKING,
		O_PINNED_GAP
	};
	static const struct option lo[] = {
	    {"scenario", required_argument, NULL, 's'},
	    {"units", required_argument, NULL, 'n'},
	    {"duration-s", required_argument, NULL, O_DURATION},
	    {"kernels", required_argument, NULL, 'k'},
	    {"kernel-us", required_argument, NULL, 'u'},
	    {"inject-ms", required_argument, NULL, 'd'},
	    {"truth", required_argument, NULL, 't'},
	    {"trim-mb", required_argument, NULL, O_TRIM},
	    {"munmap-mb", required_argument, NULL, O_MUNMAP},
	    {"io-file", required_argument, NULL, O_IO},
	    {"synth", required_argument, NULL, O_SYNTH},
	    {"seed", required_argument, NULL, O_SEED},
	    {"device", required_argument, NULL, O_DEVICE},
	    {"pinned-kb", required_argument, NULL, O_PINNED},
	    {"blocking-sync", no_argument, NULL, O_BLOCKING},
	    {"pinned-gap-mib", required_argument, NULL, O_PINNED_GAP},
	    {"quiet", no_argument, NULL, 'q'},
	    {"verbose", no_argument, NULL, 'v'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	bool help = false, units_set = false;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":s:n:k:u:d:t:qvh", lo, NULL)) != -1) {
		switch (c) {
		case 's':
			opt.scenario = parse_scenario(optarg);
			break;
		case 'n':
			opt.units = (unsigned int)parse_num("--units", optarg, 1, 1000000,
							    "an integer 1..1000000");
			units_set = true;
			break;
		case O_DURATION:
			gopt.duration_ns =
			    parse_num("--duration-s", optarg, 1, 86400, "an integer 1..86400") *
			    NSEC_PER_SEC;
			break;
		case 'k':
			opt.kernels = (unsigned int)parse_num("--kernels", optarg, 1, 4096,
							      "an integer 1..4096");
			break;
		case 'u':
			opt.kernel_ns = parse_num("--kernel-us", optarg, 10, 10000000,
						  "an integer 10..10000000") *
					NSEC_PER_USEC;
			break;
		case 'd':
			opt.inject_ns =
			    parse_num("--inject-ms", optarg, 1, 600000, "an integer 1..600000") *
			    NSEC_PER_MSEC;
			break;
		case 't':
			opt.truth_path = optarg;
			break;
		case O_TRIM:
			opt.trim_mb = parse_mb("--trim-mb", optarg);
			break;
		case O_MUNMAP:
			opt.munmap_mb = parse_mb("--munmap-mb", optarg);
			break;
		case O_IO:
			if (!*optarg)
				bad_usage("--io-file needs a path");
			opt.io_path = optarg;
			break;
		case O_SYNTH:
			opt.synth =
			    (unsigned int)parse_num("--synth", optarg, 1, 64, "an integer 1..64");
			break;
		case O_SEED:
			opt.seed =
			    parse_num("--seed", optarg, 0, ULLONG_MAX, "an unsigned integer");
			break;
		case O_DEVICE:
			gopt.device =
			    (int)parse_num("--device", optarg, 0, 1023, "an integer 0..1023");
			break;
		case O_PINNED:
			gopt.pinned_kb = (unsigned int)parse_num("--pinned-kb", optarg, 0, 4194304,
								 "an integer 0..4194304");
			break;
		case O_BLOCKING:
			gopt.blocking_sync = true;
			break;
		case O_PINNED_GAP:
			gopt.pinned_gap_mib = (unsigned int)parse_num("--pinned-gap-mib", optarg, 0,
								      65536, "an integer 0..65536");
			break;
		case 'q':
			opt.quiet = true;
			break;
		case 'v':
			opt.verbose = true;
			break;
		case 'h':
			help = true;
			break;
		case ':':
			bad_usage("%s needs a value", argv[optind - 1]);
		default:
			bad_usage("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		bad_usage("unexpected argument '%s' (every setting is an option)", argv[optind]);
	/* --duration-s alone: a cap no run reaches (a unit lasts at least its GPU time). */
	if (gopt.duration_ns && !units_set) {
		uint64_t cap = gopt.duration_ns / (opt.kernels * opt.kernel_ns / 2 + 1) + 16;

		opt.units = cap > 1000000 ? 1000000 : (unsigned int)cap;
	}
	units_requested = opt.units;
	delay_finish_options();
	if (help) {
		usage(stdout);
		exit(0);
	}
}

int main(int argc, char **argv)
{
	pthread_t worker, synth[64];
	struct delay_helpers helpers;
	FILE *truth = NULL;
	uint64_t start_ns, end_ns;

	delay_defaults("prover_gpu", "./prover_gpu.io");
	parse_args(argc, argv);

	if (opt.truth_path) {
		/* Opened now so that a bad path fails before the run, not after it. */
		truth = fopen(opt.truth_path, "w");
		if (!truth) {
			fprintf(stderr, "prover_gpu: cannot write --truth %s: %s\n", opt.truth_path,
				strerror(errno));
			return 1;
		}
	}
	gpu_init();
	calibrate();
	if (delay_setup())
		return 1;
	set_anchor();
	/* The run proper: CUDA's start-up and the calibration are not part of it. */
	start_ns = now_ns();

	delay_start_helpers(&helpers);
	for (unsigned int i = 0; i < opt.synth; i++)
		spawn(&synth[i], synth_main, (void *)(uintptr_t)i, "start synth thread");
	spawn(&worker, worker_main, NULL, "start gpu-worker thread");

	pthread_join(worker, NULL);
	end_ns = now_ns();
	for (unsigned int i = 0; i < opt.synth; i++)
		pthread_join(synth[i], NULL);
	delay_stop_helpers(&helpers);
	gpu_fini();
	opt.units = units_run;

	if (truth) {
		write_truth(truth, start_ns, end_ns, NULL, 0, truth_extra);
		if (fclose(truth) != 0) {
			fprintf(stderr, "prover_gpu: cannot write --truth %s: %s\n", opt.truth_path,
				strerror(errno));
			return 1;
		}
	}
	if (opt.verbose) {
		fprintf(
		    stderr,
		    "prover_gpu: %s, %d SMs: spin_kernel %llu iterations = %.3f ms, unit %.3f ms "
		    "of GPU time; event anchor +-%.1f us\n",
		    gpu.name, gpu.sms, gpu.iters, gpu.kernel_ns / 1e6, gpu.unit_ns / 1e6,
		    gpu.anchor_err / 1e3);
		print_verbose();
	}
	delay_report_warnings();
	if (!opt.quiet)
		printf("prover_gpu: scenario=%s units=%u wall=%.3fs delays=%u kernel=%.3fms "
		       "unit_gpu=%.3fms\n",
		       scenario_names[opt.scenario], opt.units, (end_ns - start_ns) / 1e9, n_delays,
		       gpu.kernel_ns / 1e6, gpu.unit_ns / 1e6);
	return 0;
}
