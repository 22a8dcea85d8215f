// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * prover_sim.c: a prover-shaped workload on a simulated GPU that injects known,
 * measured delays into the GPU idle gaps between units and writes the ground truth.
 *
 * Why it exists: gaptrace's integration tests need a process whose GPU idle
 * gaps have a known cause and a known length.  The GPU is a thread that
 * "runs" kernels by sleeping and reports them through the same gaptrace USDT
 * probes as the CUPTI library, so the whole pipeline runs without a GPU.
 *
 * Threads (names matter: the tracer and the tests look them up):
 *   synth-N      partition synthesis: mostly sleeps, ~0.2 ms CPU per partition,
 *                pushes partition tokens into a bounded channel (capacity 3)
 *   gpu-worker   pops a partition, unit_begin, launches K kernels, waits for
 *                the GPU, ~0.1 ms post-processing, unit_end, then the
 *                scenario's injection in the gap before the next unit
 *   gpu-sim      simulated device 0: runs ops back to back, fires gpu_op
 *                (or one gpu_batch per unit with --batch)
 *   lock-holder  holds a mutex into the gap (lock, mixed)
 *   heap-prep    prepares the heap or mapping that the gap releases, only
 *                while the GPU is busy (trim, munmap, mixed, chain)
 *   janitor      takes mutex L and holds it through a malloc_trim (chain)
 *   synth-peer   makes the next partition in the gap, after L (chain)
 *   notifier     CPU work in the gap, then wakes the worker (wakeup, counter)
 *   hog          same-CPU spinner that keeps the worker waiting for a CPU
 *                (sched, mixed)
 *
 * Scenarios (every gap between consecutive units is injected; D = --inject-ms
 * scaled per gap by 0.75, 1.0 or 1.25 so that gaps differ):
 *   none     nothing: the baseline, gaps are the worker's own ~0.2-0.4 ms
 *   lock     worker blocks D ms in pthread_mutex_lock on a mutex held by
 *            lock-holder (futex wait on value 2)                  -> lock
 *   trim     malloc_trim(0) over a heap that heap-prep fragmented -> allocator
 *   munmap   munmap() of a large touched anonymous mapping        -> allocator
 *   sched    worker and hog pinned to the last CPU; the hog spins D ms at
 *            SCHED_FIFO 1 (or nice -20 against the worker's nice 19 when FIFO
 *            is refused) while the worker stays runnable           -> scheduler
 *   sleep    clock_nanosleep D ms                                  -> sleep
 *   cpu      compute loop for D ms, no syscalls                    -> cpu
 *   io       write(256 KiB) + fdatasync() on --io-file for D ms    -> io
 *   mixed    lock, trim or munmap (alternating), sleep, cpu, io, sched in
 *            each gap, D/2 each (the allocator one takes what its size gives)
 *   chain    the worker waits on the (empty) channel for synth-peer, which
 *            waits for mutex L while the janitor holds it in malloc_trim,
 *            then munmaps a mapping and pushes the partition; synth-N make
 *            only partition 0.  Through the critical path: synth-peer's
 *            lock wait -> lock, its munmap -> allocator (the janitor's trim
 *            is recorded with "on_critical_path": false; lock waits are not
 *            followed to the holder).  Round sizes D/4 each by default.
 *   timer    epoll_wait with a D/2 timeout on an eventfd nobody writes, then
 *            a FUTEX_WAIT_BITSET with a D/2 timeout nobody wakes: both end
 *            by their timeouts, no waker                           -> sleep
 *   wakeup   epoll_wait (1 s timeout) ended by the notifier's eventfd write
 *            after D ms of its CPU work: a hand-off, followed       -> cpu
 *   counter  FUTEX_WAIT_BITSET on a sequence word the notifier bumps after
 *            D ms of CPU work; in gap 2 the word is waited on at 2, the
 *            value of a contended lock: still a hand-off            -> cpu
 *   heap     malloc/free churn (thousands of small blocks: _int_free,
 *            unlink_chunk, malloc_consolidate) with an mmap(MAP_POPULATE)
 *            + munmap of 2 MiB every 4 rounds, for D ms, on-CPU inside a
 *            libc without symbols for its internals             -> allocator
 *
 * Ground truth (--truth): one JSON object, schema gaptrace.truth/1, written at
 * exit.  Every window is bracketed by CLOCK_MONOTONIC reads and by reads of
 * the worker's run_delay from /proc/thread-self/schedstat: the time it spent
 * waiting for a CPU inside a window is scheduler time, so amount_ns is the
 * window minus that delay (for "scheduler", the delay itself).  The gap's
 * first injection also carries pre_run_delay_ns: the worker's wait for a CPU
 * between the GPU sync's wakeup and its window, and gpu_late_ns: how late
 * gpu-sim, itself waking from a sleep, released the worker after the unit's
 * last kernel ended.  In chain the
 * measured thread is the janitor or synth-peer, against its own run_delay,
 * and each injection names it ("tid").
 *
 * The allocator delays cost more to set up than they take (faulting pages
 * in costs ~2.5x a trim of them and ~4x an munmap on the development VM), and
 * the setup must not fall into a gap, so heap-prep works only while the GPU is
 * busy.  By default the sizes are chosen so that one round fits into one GPU
 * unit; a round that is not ready when its gap comes is skipped, never waited
 * for, and listed under "skipped" in the truth.
 *
 * The options, synthesis, helper threads, delays and truth file live in
 * delay_common.h, shared with the real-GPU version (tests/gpu/prover_gpu.cu).
 */
#include <getopt.h>

#include "delay_common.h"

#define SIM_DEVICE	   0
#define SIM_STREAM	   7 /* any fixed stream id; real provers use one per GPU worker */
#define SIM_KERNEL_NAME_ID 1

static pid_t gpusim_tid;

/* ---- simulated GPU ---- */

struct sim_op {
	uint64_t op_id;
	uint64_t launch_ns;
	unsigned int unit;
};

static struct {
	pthread_mutex_t mu;
	pthread_cond_t work;
	pthread_cond_t done;
	struct sim_op *q;
	unsigned int head;
	unsigned int count;
	unsigned int outstanding;
	bool stop;
} gpu = {
    .mu = PTHREAD_MUTEX_INITIALIZER,
    .work = PTHREAD_COND_INITIALIZER,
    .done = PTHREAD_COND_INITIALIZER,
};

static void *gpusim_main(void *arg)
{
	struct gaptrace_gpu_rec recs[GAPTRACE_GPU_BATCH_MAX];
	unsigned int nrec = 0;
	uint64_t prev_end = 0;

	(void)arg;
	name_self("gpu-sim", &gpusim_tid);
	/* Default 50 us timer slack would stretch every kernel and every gap. */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	memset(recs, 0, sizeof(recs));
	GAPTRACE_GPU_NAME(SIM_KERNEL_NAME_ID, "sim_kernel");
	for (;;) {
		struct sim_op op;
		uint64_t start, end;
		bool empty;

		pthread_mutex_lock(&gpu.mu);
		while (gpu.count == 0 && !gpu.stop)
			pthread_cond_wait(&gpu.work, &gpu.mu);
		if (gpu.count == 0) {
			pthread_mutex_unlock(&gpu.mu);
			break;
		}
		op = gpu.q[gpu.head];
		gpu.head = (gpu.head + 1) % opt.kernels;
		gpu.count--;
		pthread_mutex_unlock(&gpu.mu);

		/*
		 * A device starts a queued kernel when it is launched or when the
		 * previous one ends, not when this thread gets around to it: the
		 * launch time keeps the simulator's own wake-up latency out of
		 * the gaps (and every op still starts after its launch probe).
		 */
		start = op.launch_ns > prev_end ? op.launch_ns : prev_end;
		end = start + opt.kernel_ns;
		sleep_until(end);
		prev_end = end;

		if (units_log[op.unit].first_start_ns == 0)
			units_log[op.unit].first_start_ns = start;
		units_log[op.unit].last_end_ns = end;

		if (opt.batch) {
			struct gaptrace_gpu_rec *r = &recs[nrec++];

			r->start_ns = start;
			r->end_ns = end;
			r->op_id = op.op_id;
			r->device = SIM_DEVICE;
			r->stream = SIM_STREAM;
			r->context = 1;
			r->name_id = SIM_KERNEL_NAME_ID;
			r->kind = GAPTRACE_GPU_KERNEL;
			r->grid[0] = 256;
			r->grid[1] = r->grid[2] = 1;
			r->block[0] = 128;
			r->block[1] = r->block[2] = 1;
			pthread_mutex_lock(&gpu.mu);
			empty = gpu.count == 0;
			pthread_mutex_unlock(&gpu.mu);
			if (empty || nrec == GAPTRACE_GPU_BATCH_MAX) {
				GAPTRACE_GPU_BATCH(recs, nrec);
				nrec = 0;
			}
		} else {
			GAPTRACE_GPU_OP(SIM_DEVICE, SIM_STREAM, op.op_id, start, end);
		}

		/* Report first, then release the worker: unit_end follows its ops. */
		pthread_mutex_lock(&gpu.mu);
		if (--gpu.outstanding == 0) {
			/*
			 * A real GPU ends a kernel on time; this thread may wake
			 * late (a busy CPU, once 9.6 ms in make test), and the
			 * gap shows that wait on the critical path: the truth
			 * owns it (gpu_late_ns).
			 */
			uint64_t t = now_ns();

			units_log[op.unit].done_late_ns = t > end ? t - end : 0;
			pthread_cond_broadcast(&gpu.done);
		}
		pthread_mutex_unlock(&gpu.mu);
	}
	return NULL;
}

static void gpu_launch(uint64_t op_id, unsigned int unit, uint64_t *launch_ns)
{
	uint64_t t;

	GAPTRACE_GPU_LAUNCH(SIM_DEVICE, SIM_STREAM, op_id);
	t = now_ns();
	pthread_mutex_lock(&gpu.mu);
	gpu.q[(gpu.head + gpu.count) % opt.kernels] =
	    (struct sim_op){.op_id = op_id, .launch_ns = t, .unit = unit};
	gpu.count++;
	gpu.outstanding++;
	pthread_cond_signal(&gpu.work);
	pthread_mutex_unlock(&gpu.mu);
	*launch_ns = t;
}

static void gpu_wait(void)
{
	pthread_mutex_lock(&gpu.mu);
	while (gpu.outstanding)
		pthread_cond_wait(&gpu.done, &gpu.mu);
	pthread_mutex_unlock(&gpu.mu);
}

static void *worker_main(void *arg)
{
	uint64_t op_id = 0;

	(void)arg;
	delay_worker_begin();
	for (unsigned int u = 0; u < opt.units; u++) {
		bool inject = opt.scenario != SC_NONE && u + 1 < opt.units;
		uint64_t first_launch = 0, expected_end;
		bool waited;

		(void)chan_pop(&waited);
		if (waited && u > 0)
			chan_waits++;
		GAPTRACE_UNIT_BEGIN(u);
		for (unsigned int k = 0; k < opt.kernels; k++) {
			uint64_t t;

			gpu_launch(++op_id, u, &t);
			if (k == 0)
				first_launch = t;
		}
		/* Ops run back to back from the first launch: this is exact. */
		expected_end = first_launch + opt.kernels * opt.kernel_ns;
		if (inject && uses_lock())
			holder_request(expected_end + lock_hold_ns(u));
		if (uses_prep())
			prep_open_gate(expected_end - PREP_MARGIN_NS);
		delay_sync_mark();
		gpu_wait();
		spin_for(POSTPROC_NS);
		GAPTRACE_UNIT_END(u);
		if (inject)
			delay_gap(u);
	}
	return NULL;
}

/* ---- options ---- */

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: prover_sim [OPTION]...\n"
		"A prover-shaped workload on a simulated GPU that injects measured delays\n"
		"into the GPU idle gaps between units and writes the ground truth.\n"
		"\n"
		"  -s, --scenario NAME   none, lock, trim, munmap, sched, sleep, cpu, io, mixed,\n"
		"                        chain, timer, wakeup, counter, heap (default: none)\n"
		"  -n, --units N         work units (partitions) (default: 10)\n"
		"  -k, --kernels K       kernels per unit (default: 8)\n"
		"  -u, --kernel-us U     duration of each kernel in us (default: 2000)\n"
		"  -d, --inject-ms D     injected delay per gap in ms, scaled by 0.75/1.0/1.25\n"
		"                        from gap to gap; D/2 per part in mixed (default: 20)\n"
		"      --trim-mb M       heap fragmented for each malloc_trim, MiB\n"
		"                        (default: auto, currently %u)\n"
		"      --munmap-mb M     mapping released by each munmap, MiB\n"
		"                        (default: auto, currently %u)\n"
		"                        auto = what heap-prep can prepare inside one GPU unit,\n"
		"                        at most what D ms needs; longer units give bigger rounds\n"
		"  -t, --truth FILE      write the ground truth JSON here at exit (default: none)\n"
		"      --io-file PATH    file for the io injection, removed at exit\n"
		"                        (default: ./prover_sim.io)\n"
		"      --batch           report kernels with gpu_batch, once per unit, instead\n"
		"                        of one gpu_op each (default: off)\n"
		"      --synth N         synthesis threads (default: 2)\n"
		"      --seed S          rotates the per-gap scale and jitters synthesis\n"
		"                        (default: 0)\n"
		"  -q, --quiet           no summary line\n"
		"  -v, --verbose         per-injection and per-gap numbers on stderr at exit\n"
		"  -h, --help            this text\n",
		trim_round_mb, munmap_round_mb);
}

static void parse_args(int argc, char **argv)
{
	enum { O_TRIM = 256, O_MUNMAP, O_IO, O_BATCH, O_SYNTH, O_SEED };
	static const struct option lo[] = {
	    {"scenario", required_argument, NULL, 's'},
	    {"units", required_argument, NULL, 'n'},
	    {"kernels", required_argument, NULL, 'k'},
	    {"kernel-us", required_argument, NULL, 'u'},
	    {"inject-ms", required_argument, NULL, 'd'},
	    {"truth", required_argument, NULL, 't'},
	    {"trim-mb", required_argument, NULL, O_TRIM},
	    {"munmap-mb", required_argument, NULL, O_MUNMAP},
	    {"io-file", required_argument, NULL, O_IO},
	    {"batch", no_argument, NULL, O_BATCH},
	    {"synth", required_argument, NULL, O_SYNTH},
	    {"seed", required_argument, NULL, O_SEED},
	    {"quiet", no_argument, NULL, 'q'},
	    {"verbose", no_argument, NULL, 'v'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	bool help = false;
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
			break;
		case 'k':
			opt.kernels = (unsigned int)parse_num("--kernels", optarg, 1, 4096,
							      "an integer 1..4096");
			break;
		case 'u':
			opt.kernel_ns = parse_num("--kernel-us", optarg, 1, 10000000,
						  "an integer 1..10000000") *
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
		case O_BATCH:
			opt.batch = true;
			break;
		case O_SYNTH:
			opt.synth =
			    (unsigned int)parse_num("--synth", optarg, 1, 64, "an integer 1..64");
			break;
		case O_SEED:
			opt.seed =
			    parse_num("--seed", optarg, 0, ULLONG_MAX, "an unsigned integer");
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

	delay_finish_options();
	if (help) {
		usage(stdout);
		exit(0);
	}
}

int main(int argc, char **argv)
{
	pthread_t worker, gpusim, synth[64];
	struct delay_helpers helpers;
	FILE *truth = NULL;
	uint64_t start_ns, end_ns;

	delay_defaults("prover_sim", "./prover_sim.io");
	parse_args(argc, argv);
	start_ns = now_ns();

	if (opt.truth_path) {
		/* Opened now so that a bad path fails before the run, not after it. */
		truth = fopen(opt.truth_path, "w");
		if (!truth) {
			fprintf(stderr, "prover_sim: cannot write --truth %s: %s\n", opt.truth_path,
				strerror(errno));
			return 1;
		}
	}
	if (delay_setup())
		return 1;
	gpu.q = calloc(opt.kernels, sizeof(*gpu.q));
	if (!gpu.q)
		die("calloc");

	delay_start_helpers(&helpers);
	spawn(&gpusim, gpusim_main, NULL, "start gpu-sim thread");
	for (unsigned int i = 0; i < opt.synth; i++)
		spawn(&synth[i], synth_main, (void *)(uintptr_t)i, "start synth thread");
	spawn(&worker, worker_main, NULL, "start gpu-worker thread");

	pthread_join(worker, NULL);
	end_ns = now_ns();

	pthread_mutex_lock(&gpu.mu);
	gpu.stop = true;
	pthread_cond_broadcast(&gpu.work);
	pthread_mutex_unlock(&gpu.mu);
	pthread_join(gpusim, NULL);
	for (unsigned int i = 0; i < opt.synth; i++)
		pthread_join(synth[i], NULL);
	delay_stop_helpers(&helpers);

	if (truth) {
		write_truth(truth, start_ns, end_ns, "gpu-sim", gpusim_tid, NULL);
		if (fclose(truth) != 0) {
			fprintf(stderr, "prover_sim: cannot write --truth %s: %s\n", opt.truth_path,
				strerror(errno));
			return 1;
		}
	}
	if (opt.verbose)
		print_verbose();
	delay_report_warnings();
	if (!opt.quiet)
		printf("prover_sim: scenario=%s units=%u wall=%.3fs delays=%u\n",
		       scenario_names[opt.scenario], opt.units, (end_ns - start_ns) / 1e9,
		       n_delays);
	return 0;
}
