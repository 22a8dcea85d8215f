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
 *                while the GPU is busy (trim, munmap, mixed)
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
 *
 * Ground truth (--truth): one JSON object, schema gaptrace.truth/1, written at
 * exit.  Every window is bracketed by CLOCK_MONOTONIC reads and by reads of
 * the worker's run_delay from /proc/thread-self/schedstat: the time it spent
 * waiting for a CPU inside a window is scheduler time, so amount_ns is the
 * window minus that delay (for "scheduler", the delay itself).
 *
 * The allocator injections cost more to set up than they take (faulting pages
 * in costs ~2.5x a trim of them and ~4x an munmap on the development VM), and
 * the setup must not fall into a gap, so heap-prep works only while the GPU is
 * busy.  By default the sizes are chosen so that one round fits into one GPU
 * unit; a round that is not ready when its gap comes is skipped, never waited
 * for, and listed under "skipped" in the truth.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <malloc.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "gaptrace-usdt.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#define NSEC_PER_USEC 1000ULL
#define NSEC_PER_MSEC 1000000ULL
#define NSEC_PER_SEC  1000000000ULL

#define SIM_DEVICE	   0
#define SIM_STREAM	   7 /* any fixed stream id; real provers use one per GPU worker */
#define SIM_KERNEL_NAME_ID 1
#define CHAN_CAP	   3
#define SYNTH_SLEEP_NS	   (3 * NSEC_PER_MSEC)
#define SYNTH_CPU_NS	   (200 * NSEC_PER_USEC)
#define POSTPROC_NS	   (100 * NSEC_PER_USEC)
#define IO_CHUNK	   (256 * 1024)
#define IO_WRAP		   (64ULL << 20) /* keeps --io-file bounded however long the run */
#define TRIM_BLOCK	   (64 * 1024)	 /* below glibc's mmap threshold: lands in the heap */
#define PREP_CHUNK	   (256 * 1024)	 /* heap-prep re-checks its deadline this often */
#define PREP_MARGIN_NS	   (2 * NSEC_PER_MSEC)
#define MAX_PER_GAP	   6

/*
 * Costs measured on the 2-core development VM, used only to size the allocator
 * rounds by default: ms per MiB of round for the timed call and for heap-prep's
 * setup of it (trim: refaulting the half that the last trim released; munmap:
 * populating the whole mapping).  Faults on memory the VM never touched cost
 * several times more, so the first round is built before unit 0.
 */
#define TRIM_MS_PER_MB	      0.094
#define TRIM_PREP_MS_PER_MB   0.23
#define MUNMAP_MS_PER_MB      0.107
#define MUNMAP_PREP_MS_PER_MB 0.45
#define PREP_SHARE	      0.6 /* of the GPU time, the rest is slack for a slow round */

enum scenario {
	SC_NONE,
	SC_LOCK,
	SC_TRIM,
	SC_MUNMAP,
	SC_SCHED,
	SC_SLEEP,
	SC_CPU,
	SC_IO,
	SC_MIXED,
	SC_COUNT,
};

static const char *const scenario_names[SC_COUNT] = {
    "none", "lock", "trim", "munmap", "sched", "sleep", "cpu", "io", "mixed",
};

enum inj_kind {
	INJ_LOCK,
	INJ_TRIM,
	INJ_MUNMAP,
	INJ_SCHED,
	INJ_SLEEP,
	INJ_CPU,
	INJ_IO,
};

static const char *const inj_names[] = {"lock", "trim", "munmap", "sched", "sleep", "cpu", "io"};
static const char *const inj_categories[] = {
    "lock", "allocator", "allocator", "scheduler", "sleep", "cpu", "io",
};

static struct {
	enum scenario scenario;
	unsigned int units;
	unsigned int kernels;
	uint64_t kernel_ns;
	uint64_t inject_ns;
	unsigned int trim_mb;	/* 0 = auto */
	unsigned int munmap_mb; /* 0 = auto */
	const char *truth_path;
	const char *io_path;
	bool batch;
	unsigned int synth;
	unsigned long long seed;
	bool quiet;
	bool verbose;
} opt = {
    .scenario = SC_NONE,
    .units = 10,
    .kernels = 8,
    .kernel_ns = 2000 * NSEC_PER_USEC,
    .inject_ns = 20 * NSEC_PER_MSEC,
    .io_path = "./prover_sim.io",
    .synth = 2,
};

struct injection {
	unsigned int gap;
	enum inj_kind kind;
	uint64_t start_ns;
	uint64_t end_ns;
	uint64_t amount_ns;
	uint64_t run_delay_ns;
	uint64_t target_ns; /* what was asked for (0 for the allocator ones) */
	uint64_t bytes;	    /* trim and munmap: the round's size */
};

struct skipped {
	unsigned int gap;
	enum inj_kind kind;
};

struct unit_log {
	uint64_t first_start_ns;
	uint64_t last_end_ns;
};

/* Written by the worker only; read by main after the worker is joined. */
static struct injection *injections;
static unsigned int n_injections;
static struct skipped *skips;
static unsigned int n_skips;
static unsigned int chan_waits; /* pops that found the channel empty, after unit 0 */
/* Written by gpu-sim only; read after it is joined. */
static struct unit_log *units_log;

static bool fifo_granted;
static int last_cpu = -1;
static pid_t worker_tid, gpusim_tid, holder_tid, prep_tid, hog_tid;
static pid_t synth_tids[64];
static unsigned int trim_round_mb, munmap_round_mb;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

static void sleep_until(uint64_t t)
{
	struct timespec ts = {.tv_sec = t / NSEC_PER_SEC, .tv_nsec = t % NSEC_PER_SEC};

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* Busy wait on the wall clock: CPU work that makes no syscall (vDSO clock). */
static void spin_for(uint64_t ns)
{
	uint64_t end = now_ns() + ns;

	while (now_ns() < end)
		__asm__ __volatile__("" ::: "memory");
}

static _Noreturn void die(const char *what)
{
	fprintf(stderr, "prover_sim: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void must(int err, const char *what)
{
	if (err) {
		errno = err;
		die(what);
	}
}

static void name_self(const char *name, pid_t *tid)
{
	pthread_setname_np(pthread_self(), name);
	if (tid)
		*tid = gettid();
}

/* Per-gap scale so that consecutive gaps differ but runs repeat exactly. */
static uint64_t gap_target(unsigned int gap)
{
	static const unsigned int pct[3] = {75, 100, 125};

	return opt.inject_ns * pct[(gap + opt.seed) % 3] / 100;
}

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

/* ---- run-queue delay of the worker ---- */

static int schedstat_fd = -1;

/*
 * Second field of /proc/thread-self/schedstat: ns this thread spent runnable
 * but not running.  The kernel folds a wait in when the thread gets the CPU
 * back, so a read by the running thread covers every wait before it.
 */
static uint64_t run_delay(void)
{
	char buf[128];
	unsigned long long run, delay;
	ssize_t n;

	if (schedstat_fd < 0)
		return 0;
	n = pread(schedstat_fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	if (sscanf(buf, "%llu %llu", &run, &delay) != 2)
		return 0;
	return delay;
}

static void record(unsigned int gap, enum inj_kind kind, uint64_t start, uint64_t end, uint64_t rd0,
		   uint64_t rd1, uint64_t target, uint64_t bytes)
{
	struct injection *in = &injections[n_injections++];
	uint64_t win = end - start, rd = rd1 - rd0;

	in->gap = gap;
	in->kind = kind;
	in->start_ns = start;
	in->end_ns = end;
	in->run_delay_ns = rd;
	in->target_ns = target;
	in->bytes = bytes;
	if (kind == INJ_SCHED)
		in->amount_ns = rd;
	else
		in->amount_ns = win > rd ? win - rd : 0;
}

/* ---- channel: synth-N -> gpu-worker ---- */

static struct {
	pthread_mutex_t mu;
	pthread_cond_t not_empty;
	pthread_cond_t not_full;
	unsigned int buf[CHAN_CAP];
	unsigned int head;
	unsigned int count;
} chan = {
    .mu = PTHREAD_MUTEX_INITIALIZER,
    .not_empty = PTHREAD_COND_INITIALIZER,
    .not_full = PTHREAD_COND_INITIALIZER,
};

static atomic_uint next_partition;

static void chan_push(unsigned int v)
{
	pthread_mutex_lock(&chan.mu);
	while (chan.count == CHAN_CAP)
		pthread_cond_wait(&chan.not_full, &chan.mu);
	chan.buf[(chan.head + chan.count) % CHAN_CAP] = v;
	chan.count++;
	pthread_cond_signal(&chan.not_empty);
	pthread_mutex_unlock(&chan.mu);
}

static unsigned int chan_pop(bool *waited)
{
	unsigned int v;

	pthread_mutex_lock(&chan.mu);
	*waited = chan.count == 0;
	while (chan.count == 0)
		pthread_cond_wait(&chan.not_empty, &chan.mu);
	v = chan.buf[chan.head];
	chan.head = (chan.head + 1) % CHAN_CAP;
	chan.count--;
	pthread_cond_signal(&chan.not_full);
	pthread_mutex_unlock(&chan.mu);
	return v;
}

static void *synth_main(void *arg)
{
	unsigned int id = (unsigned int)(uintptr_t)arg;
	uint64_t unit_ns = opt.kernels * opt.kernel_ns;
	uint64_t nap = unit_ns / 4 < SYNTH_SLEEP_NS ? unit_ns / 4 : SYNTH_SLEEP_NS;
	char name[16];

	snprintf(name, sizeof(name), "synth-%u", id);
	name_self(name, &synth_tids[id]);
	for (;;) {
		unsigned int p = atomic_fetch_add(&next_partition, 1);

		if (p >= opt.units)
			break;
		/*
		 * Mostly sleeping, and a token takes at most a quarter of a unit:
		 * the channel stays full and the worker never waits on it.  The
		 * CPU cost is per token (the channel bounds the production), so
		 * the 2-core machine's CPUs stay with the worker either way.
		 */
		sleep_until(now_ns() + nap + mix64(opt.seed ^ p) % (nap / 3 + 1));
		spin_for(SYNTH_CPU_NS);
		chan_push(p);
	}
	return NULL;
}

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
		if (--gpu.outstanding == 0)
			pthread_cond_broadcast(&gpu.done);
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

/* ---- lock-holder ---- */

static pthread_mutex_t contended = PTHREAD_MUTEX_INITIALIZER; /* plain: no spinning */

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint64_t req_seq;
	uint64_t release_ns;
	uint64_t acquired_seq;
	bool stop;
} holder = {
    .mu = PTHREAD_MUTEX_INITIALIZER,
    .cv = PTHREAD_COND_INITIALIZER,
};

static void *holder_main(void *arg)
{
	uint64_t seen = 0;

	(void)arg;
	name_self("lock-holder", &holder_tid);
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0); /* release on time, not 50 us late */
	for (;;) {
		uint64_t release;

		pthread_mutex_lock(&holder.mu);
		while (holder.req_seq == seen && !holder.stop)
			pthread_cond_wait(&holder.cv, &holder.mu);
		if (holder.stop) {
			pthread_mutex_unlock(&holder.mu);
			break;
		}
		seen = holder.req_seq;
		release = holder.release_ns;
		pthread_mutex_unlock(&holder.mu);

		pthread_mutex_lock(&contended);
		pthread_mutex_lock(&holder.mu);
		holder.acquired_seq = seen;
		pthread_cond_broadcast(&holder.cv);
		pthread_mutex_unlock(&holder.mu);
		sleep_until(release);
		pthread_mutex_unlock(&contended);
	}
	return NULL;
}

/* Called at launch: the holder takes the mutex while the GPU runs. */
static void holder_request(uint64_t release_ns)
{
	pthread_mutex_lock(&holder.mu);
	holder.release_ns = release_ns;
	holder.req_seq++;
	pthread_cond_broadcast(&holder.cv);
	pthread_mutex_unlock(&holder.mu);
}

static void inject_lock(unsigned int gap, uint64_t target)
{
	uint64_t rd0, rd1, start, end;

	/* The holder had the whole unit to take it; make sure, outside the window. */
	pthread_mutex_lock(&holder.mu);
	while (holder.acquired_seq != holder.req_seq)
		pthread_cond_wait(&holder.cv, &holder.mu);
	pthread_mutex_unlock(&holder.mu);

	rd0 = run_delay();
	start = now_ns();
	pthread_mutex_lock(&contended);
	end = now_ns();
	rd1 = run_delay();
	pthread_mutex_unlock(&contended);
	record(gap, INJ_LOCK, start, end, rd0, rd1, target, 0);
}

/* ---- heap-prep ---- */

enum prep_state {
	PREP_BUSY,  /* building a round (or waiting for GPU time to do so) */
	PREP_READY, /* a round waits for its gap; heap-prep is idle */
};

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	enum prep_state state;
	enum inj_kind kind; /* of the ready round, or of the one being built */
	char *region;	    /* munmap round */
	size_t region_len;
	size_t round_bytes;
	_Atomic uint64_t gate_until; /* heap-prep may work while now < this */
	uint64_t gate_seq;
	bool stop;
	/* statistics, read after join */
	unsigned int rounds;
	unsigned int overruns; /* chunks that ended after the GPU went idle */
	uint64_t overrun_max_ns;
	uint64_t chunk_gate; /* gate_until of the chunk in progress, 0 = none */
	struct prep_log {
		enum inj_kind kind;
		uint64_t cpu_ns;  /* heap-prep's work on the round */
		uint64_t wall_ns; /* start to ready, waits for GPU time included */
	} * log;		  /* one per round, opt.units + 1 */
} prep = {
    .mu = PTHREAD_MUTEX_INITIALIZER,
    .cv = PTHREAD_COND_INITIALIZER,
};

/*
 * Waits until heap-prep may run: only while the GPU is busy, so that its page
 * faults, malloc/free and arena lock never overlap a gap.  Returns false when
 * told to stop.
 */
static void prep_chunk_done(void)
{
	uint64_t idle_at = prep.chunk_gate + PREP_MARGIN_NS, t = now_ns();

	/* Counted so that a slow machine shows up, not silently as noise. */
	if (prep.chunk_gate && t > idle_at) {
		prep.overruns++;
		if (t - idle_at > prep.overrun_max_ns)
			prep.overrun_max_ns = t - idle_at;
	}
	prep.chunk_gate = 0;
}

static bool prep_gate(uint64_t *seen)
{
	prep_chunk_done();
	for (;;) {
		uint64_t until = atomic_load(&prep.gate_until);

		if (now_ns() < until) {
			prep.chunk_gate = until == UINT64_MAX ? 0 : until;
			return true;
		}
		pthread_mutex_lock(&prep.mu);
		while (!prep.stop && prep.gate_seq == *seen)
			pthread_cond_wait(&prep.cv, &prep.mu);
		*seen = prep.gate_seq;
		if (prep.stop) {
			pthread_mutex_unlock(&prep.mu);
			return false;
		}
		pthread_mutex_unlock(&prep.mu);
	}
}

static void prep_open_gate(uint64_t until)
{
	pthread_mutex_lock(&prep.mu);
	atomic_store(&prep.gate_until, until);
	prep.gate_seq++;
	pthread_cond_broadcast(&prep.cv);
	pthread_mutex_unlock(&prep.mu);
}

static void touch_pages(char *p, size_t len)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	/* Residency is what trim and munmap pay for; a full memset buys nothing. */
	for (size_t o = 0; o < len; o += pg)
		((volatile char *)p)[o] = 1;
}

/*
 * The fragmented heap that malloc_trim releases: "live" 64 KiB blocks with a
 * freed, resident block between each two of them.
 */
struct trim_heap {
	void **live; /* n/2 blocks kept allocated, the holes' neighbours */
	void **next; /* the next round's live blocks, being allocated */
	size_t half; /* n/2 */
	size_t n_next;
	bool primed; /* the first round is done */
};

static void trim_heap_free(struct trim_heap *h)
{
	for (size_t i = 0; i < h->n_next; i++)
		free(h->next[i]);
	if (h->primed)
		for (size_t i = 0; i < h->half; i++)
			free(h->live[i]);
	free(h->live);
	free(h->next);
}

static void *trim_block(void)
{
	void *p = malloc(TRIM_BLOCK);

	if (!p)
		die("heap-prep: malloc");
	touch_pages(p, TRIM_BLOCK);
	return p;
}

/*
 * One trim round.  The first allocates n blocks, touches them and frees every
 * other one.  Later rounds flip: malloc_trim left the holes free but no longer
 * resident, so n/2 new blocks are allocated into them (an exact fit, glibc
 * hands the holes back) and touched, then the old live half is freed and
 * becomes the new holes; that frees "the remaining blocks during the next
 * unit's GPU time" while faulting in only half the round again.  Freeing all
 * of them first would coalesce the holes into the heap top, let glibc shrink
 * the heap and double the faults.
 */
static bool prep_trim(struct trim_heap *h, size_t bytes, uint64_t *seen)
{
	size_t per_chunk = PREP_CHUNK / TRIM_BLOCK;

	if (!h->live) {
		h->half = bytes / TRIM_BLOCK / 2;
		h->live = calloc(h->half, sizeof(void *));
		h->next = calloc(h->half * 2, sizeof(void *));
		if (!h->live || !h->next)
			die("heap-prep: calloc");
	}
	if (!h->primed) {
		/* next[] holds all n blocks here; the even ones become holes. */
		while (h->n_next < 2 * h->half) {
			if (!prep_gate(seen))
				return false;
			for (size_t j = 0; j < per_chunk && h->n_next < 2 * h->half; j++)
				h->next[h->n_next++] = trim_block();
		}
		if (!prep_gate(seen))
			return false;
		for (size_t i = 0; i < h->half; i++) {
			free(h->next[2 * i]);
			h->live[i] = h->next[2 * i + 1];
		}
		h->n_next = 0;
		h->primed = true;
		return true;
	}
	while (h->n_next < h->half) {
		if (!prep_gate(seen))
			return false;
		for (size_t j = 0; j < per_chunk && h->n_next < h->half; j++)
			h->next[h->n_next++] = trim_block();
	}
	for (size_t i = 0; i < h->half; i += 8 * per_chunk) {
		if (!prep_gate(seen))
			return false;
		for (size_t j = i; j < h->half && j < i + 8 * per_chunk; j++) {
			free(h->live[j]);
			h->live[j] = h->next[j];
			h->next[j] = NULL; /* owned by live[] now */
		}
	}
	h->n_next = 0;
	return true;
}

static bool prep_munmap(size_t bytes, uint64_t *seen)
{
	char *p;
	bool populate = true;

	if (!prep_gate(seen))
		return false;
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		die("heap-prep: mmap");
	/* 4 KiB pages as a prover's big vectors get them, even where THP is "always". */
	madvise(p, bytes, MADV_NOHUGEPAGE);
	prep.region = p;
	prep.region_len = bytes;
	for (size_t o = 0; o < bytes; o += PREP_CHUNK) {
		size_t len = bytes - o < PREP_CHUNK ? bytes - o : PREP_CHUNK;

		if (!prep_gate(seen))
			return false;
		/* One syscall per chunk instead of a fault per page; older kernels: touch. */
		if (populate && madvise(p + o, len, MADV_POPULATE_WRITE) != 0)
			populate = false;
		if (!populate)
			touch_pages(p + o, len);
	}
	return true;
}

static void *prep_main(void *arg)
{
	struct trim_heap heap = {0};
	uint64_t seen = 0;

	(void)arg;
	name_self("heap-prep", &prep_tid);
	for (unsigned int r = 0;; r++) {
		enum inj_kind kind;
		size_t bytes;
		uint64_t c0 = thread_cpu_ns(), w0 = now_ns();
		bool ok;

		if (opt.scenario == SC_MIXED)
			kind = r % 2 ? INJ_MUNMAP : INJ_TRIM;
		else
			kind = opt.scenario == SC_TRIM ? INJ_TRIM : INJ_MUNMAP;
		bytes = (size_t)(kind == INJ_TRIM ? trim_round_mb : munmap_round_mb) << 20;
		pthread_mutex_lock(&prep.mu);
		prep.kind = kind;
		pthread_mutex_unlock(&prep.mu);
		if (kind == INJ_TRIM)
			ok = prep_trim(&heap, bytes, &seen);
		else
			ok = prep_munmap(bytes, &seen);
		if (!ok)
			break;
		prep_chunk_done();
		if (r <= opt.units)
			prep.log[r] = (struct prep_log){
			    .kind = kind, .cpu_ns = thread_cpu_ns() - c0, .wall_ns = now_ns() - w0};

		pthread_mutex_lock(&prep.mu);
		prep.rounds++;
		prep.round_bytes = bytes;
		prep.state = PREP_READY;
		pthread_cond_broadcast(&prep.cv);
		while (prep.state == PREP_READY && !prep.stop)
			pthread_cond_wait(&prep.cv, &prep.mu);
		ok = !prep.stop;
		pthread_mutex_unlock(&prep.mu);
		if (!ok)
			break;
	}
	/* The run is over: nothing here can fall into a gap any more. */
	trim_heap_free(&heap);
	if (prep.region)
		munmap(prep.region, prep.region_len);
	return NULL;
}

static void inject_alloc(unsigned int gap)
{
	uint64_t rd0, rd1, start, end;
	enum inj_kind kind;
	size_t bytes;

	pthread_mutex_lock(&prep.mu);
	if (prep.state != PREP_READY) {
		skips[n_skips++] = (struct skipped){.gap = gap, .kind = prep.kind};
		pthread_mutex_unlock(&prep.mu);
		/* Waiting would put heap-prep's page faults into this gap. */
		return;
	}
	kind = prep.kind;
	bytes = prep.round_bytes;
	pthread_mutex_unlock(&prep.mu);

	/* heap-prep is parked until state changes: the heap and mappings are ours. */
	rd0 = run_delay();
	start = now_ns();
	if (kind == INJ_TRIM)
		malloc_trim(0);
	else
		munmap(prep.region, prep.region_len);
	end = now_ns();
	rd1 = run_delay();
	if (kind == INJ_MUNMAP)
		prep.region = NULL;
	record(gap, kind, start, end, rd0, rd1, 0, bytes);

	pthread_mutex_lock(&prep.mu);
	prep.state = PREP_BUSY;
	pthread_cond_broadcast(&prep.cv);
	pthread_mutex_unlock(&prep.mu);
}

/* ---- hog ---- */

static struct {
	sem_t go;
	sem_t ready;
	_Atomic uint64_t spin_ns;
	atomic_bool done;
	atomic_bool stop;
} hog;

static void pin_to(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	must(pthread_setaffinity_np(pthread_self(), sizeof(set), &set), "pin to last CPU");
}

static void *hog_main(void *arg)
{
	struct sched_param sp = {.sched_priority = 1};
	int err;

	(void)arg;
	name_self("hog", &hog_tid);
	pin_to(last_cpu);
	err = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	if (err == 0) {
		fifo_granted = true;
	} else if (err == EPERM) {
		/* Containers often refuse RT; a nice gap only approximates the window. */
		if (setpriority(PRIO_PROCESS, (id_t)gettid(), -20) != 0)
			fprintf(stderr, "prover_sim: warning: hog: SCHED_FIFO and nice -20 both "
					"refused; the sched windows will be short\n");
	} else {
		errno = err;
		die("hog: pthread_setschedparam");
	}
	sem_post(&hog.ready);
	for (;;) {
		uint64_t end;

		while (sem_wait(&hog.go) != 0)
			;
		if (atomic_load(&hog.stop))
			break;
		end = now_ns() + atomic_load(&hog.spin_ns);
		while (now_ns() < end)
			__asm__ __volatile__("" ::: "memory");
		atomic_store(&hog.done, true);
	}
	return NULL;
}

static void inject_sched(unsigned int gap, uint64_t target)
{
	static bool warned;
	uint64_t rd0, rd1, start, end;
	int nice0 = 0;

	if (!fifo_granted) {
		nice0 = getpriority(PRIO_PROCESS, (id_t)gettid());
		setpriority(PRIO_PROCESS, (id_t)gettid(), 19);
	}
	atomic_store(&hog.spin_ns, target);
	atomic_store(&hog.done, false);
	rd0 = run_delay();
	start = now_ns();
	sem_post(&hog.go);
	/*
	 * Stay runnable: every ns the hog holds the CPU is run-queue delay.
	 * Yielding hands the CPU over at once where the hog only has a better
	 * nice level (EEVDF would otherwise let the worker finish its slice,
	 * up to a tick); under SCHED_FIFO the hog has preempted it already.
	 */
	while (!atomic_load(&hog.done))
		sched_yield();
	end = now_ns();
	rd1 = run_delay();
	if (!fifo_granted && setpriority(PRIO_PROCESS, (id_t)gettid(), nice0) != 0 && !warned) {
		warned = true;
		fprintf(stderr, "prover_sim: warning: cannot restore the worker's nice %d\n",
			nice0);
	}
	record(gap, INJ_SCHED, start, end, rd0, rd1, target, 0);
}

/* ---- the plain injections ---- */

static void inject_sleep(unsigned int gap, uint64_t target)
{
	struct timespec ts = {.tv_sec = target / NSEC_PER_SEC, .tv_nsec = target % NSEC_PER_SEC};
	uint64_t rd0, rd1, start, end;

	rd0 = run_delay();
	start = now_ns();
	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
		;
	end = now_ns();
	rd1 = run_delay();
	record(gap, INJ_SLEEP, start, end, rd0, rd1, target, 0);
}

static uint32_t cpu_work[1024];
static volatile double cpu_sink;

static void inject_cpu(unsigned int gap, uint64_t target)
{
	uint64_t rd0, rd1, start, end;
	double acc = 1.0;

	rd0 = run_delay();
	start = now_ns();
	end = start;
	/* Application work: no syscalls (vDSO clock), no allocation, no faults. */
	while (end - start < target) {
		for (unsigned int i = 0; i < 1024; i++) {
			uint32_t x = cpu_work[i] * 1664525u + 1013904223u;

			cpu_work[i] = x ^ (cpu_work[(i + 7) & 1023] >> 3);
			acc = acc * 0.999999 + (double)(x & 0xffff) * 1e-9;
		}
		end = now_ns();
	}
	rd1 = run_delay();
	cpu_sink = sqrt(acc);
	record(gap, INJ_CPU, start, end, rd0, rd1, target, 0);
}

static int io_fd = -1;
static char *io_buf;
static uint64_t io_off;

static void inject_io(unsigned int gap, uint64_t target)
{
	uint64_t rd0, rd1, start, end;

	rd0 = run_delay();
	start = now_ns();
	end = start;
	while (end - start < target) {
		if (pwrite(io_fd, io_buf, IO_CHUNK, (off_t)io_off) != IO_CHUNK)
			die("io injection: write to --io-file");
		if (fdatasync(io_fd) != 0)
			die("io injection: fdatasync --io-file");
		io_off = (io_off + IO_CHUNK) % IO_WRAP;
		end = now_ns();
	}
	rd1 = run_delay();
	record(gap, INJ_IO, start, end, rd0, rd1, target, 0);
}

/* ---- gpu-worker ---- */

static bool uses_lock(void)
{
	return opt.scenario == SC_LOCK || opt.scenario == SC_MIXED;
}

static bool uses_prep(void)
{
	return opt.scenario == SC_TRIM || opt.scenario == SC_MUNMAP || opt.scenario == SC_MIXED;
}

static bool uses_hog(void)
{
	return opt.scenario == SC_SCHED || opt.scenario == SC_MIXED;
}

static void inject_gap(unsigned int gap)
{
	uint64_t d = gap_target(gap);

	switch (opt.scenario) {
	case SC_NONE:
		break;
	case SC_LOCK:
		inject_lock(gap, d);
		break;
	case SC_TRIM:
	case SC_MUNMAP:
		inject_alloc(gap);
		break;
	case SC_SCHED:
		inject_sched(gap, d);
		break;
	case SC_SLEEP:
		inject_sleep(gap, d);
		break;
	case SC_CPU:
		inject_cpu(gap, d);
		break;
	case SC_IO:
		inject_io(gap, d);
		break;
	case SC_MIXED:
		inject_lock(gap, d / 2);
		inject_alloc(gap);
		inject_sleep(gap, d / 2);
		inject_cpu(gap, d / 2);
		inject_io(gap, d / 2);
		inject_sched(gap, d / 2);
		break;
	case SC_COUNT:
		break;
	}
}

static void *worker_main(void *arg)
{
	uint64_t op_id = 0;

	(void)arg;
	name_self("gpu-worker", &worker_tid);
	schedstat_fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	if (schedstat_fd < 0)
		fprintf(stderr, "prover_sim: warning: no /proc/thread-self/schedstat "
				"(CONFIG_SCHED_INFO off?): run_delay_ns will read 0\n");
	if (uses_hog())
		pin_to(last_cpu);

	if (uses_prep()) {
		/* The first round is built before unit 0, on memory not yet faulted in. */
		pthread_mutex_lock(&prep.mu);
		while (prep.state != PREP_READY)
			pthread_cond_wait(&prep.cv, &prep.mu);
		pthread_mutex_unlock(&prep.mu);
	}

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
			holder_request(expected_end + (opt.scenario == SC_MIXED ? gap_target(u) / 2
										: gap_target(u)));
		if (uses_prep())
			prep_open_gate(expected_end - PREP_MARGIN_NS);
		gpu_wait();
		spin_for(POSTPROC_NS);
		GAPTRACE_UNIT_END(u);
		if (inject)
			inject_gap(u);
	}
	return NULL;
}

/* ---- ground truth ---- */

static void write_truth(FILE *f, uint64_t start_ns, uint64_t end_ns)
{
	const char *policy = !uses_hog() ? "none" : fifo_granted ? "fifo" : "nice";

	fprintf(f,
		"{\"schema\":\"gaptrace.truth/1\",\"scenario\":\"%s\",\"pid\":%d,"
		"\"worker_tid\":%d,\"units\":%u,\"kernels\":%u,\"kernel_ns\":%" PRIu64 ",",
		scenario_names[opt.scenario], (int)getpid(), (int)worker_tid, opt.units,
		opt.kernels, opt.kernel_ns);
	fprintf(f, "\"inject_ns\":%" PRIu64 ",\"batch\":%s,\"seed\":%llu,", opt.inject_ns,
		opt.batch ? "true" : "false", opt.seed);
	fprintf(f, "\"start_ns\":%" PRIu64 ",\"end_ns\":%" PRIu64 ",\"wall_ns\":%" PRIu64 ",",
		start_ns, end_ns, end_ns - start_ns);
	fprintf(f, "\"sched_policy\":\"%s\",", policy);

	fprintf(f,
		"\"threads\":[{\"name\":\"gpu-worker\",\"tid\":%d},"
		"{\"name\":\"gpu-sim\",\"tid\":%d}",
		(int)worker_tid, (int)gpusim_tid);
	for (unsigned int i = 0; i < opt.synth; i++)
		fprintf(f, ",{\"name\":\"synth-%u\",\"tid\":%d}", i, (int)synth_tids[i]);
	if (uses_lock())
		fprintf(f, ",{\"name\":\"lock-holder\",\"tid\":%d}", (int)holder_tid);
	if (uses_prep())
		fprintf(f, ",{\"name\":\"heap-prep\",\"tid\":%d}", (int)prep_tid);
	if (uses_hog())
		fprintf(f, ",{\"name\":\"hog\",\"tid\":%d}", (int)hog_tid);
	fprintf(f, "],");

	fprintf(f, "\"injections\":[");
	for (unsigned int i = 0; i < n_injections; i++) {
		const struct injection *in = &injections[i];

		fprintf(f,
			"%s{\"gap_after_unit\":%u,\"category\":\"%s\",\"kind\":\"%s\","
			"\"start_ns\":%" PRIu64 ",\"end_ns\":%" PRIu64 ",\"amount_ns\":%" PRIu64
			",\"run_delay_ns\":%" PRIu64,
			i ? "," : "", in->gap, inj_categories[in->kind], inj_names[in->kind],
			in->start_ns, in->end_ns, in->amount_ns, in->run_delay_ns);
		if (in->target_ns)
			fprintf(f, ",\"target_ns\":%" PRIu64, in->target_ns);
		if (in->bytes)
			fprintf(f, ",\"bytes\":%" PRIu64, in->bytes);
		fprintf(f, "}");
	}
	fprintf(f, "],\"skipped\":[");
	for (unsigned int i = 0; i < n_skips; i++)
		fprintf(f,
			"%s{\"gap_after_unit\":%u,\"kind\":\"%s\",\"reason\":\"heap-prep not "
			"ready\"}",
			i ? "," : "", skips[i].gap, inj_names[skips[i].kind]);
	fprintf(f, "],\"units_log\":[");
	for (unsigned int u = 0; u < opt.units; u++)
		fprintf(f,
			"%s{\"unit\":%u,\"gpu_first_start_ns\":%" PRIu64
			",\"gpu_last_end_ns\":%" PRIu64 "}",
			u ? "," : "", u, units_log[u].first_start_ns, units_log[u].last_end_ns);
	fprintf(f, "]}\n");
}

static void print_verbose(void)
{
	uint64_t max_gap = 0, sum_gap = 0;
	unsigned int plain = 0;

	for (unsigned int i = 0; i < n_injections; i++) {
		const struct injection *in = &injections[i];

		fprintf(stderr,
			"prover_sim: gap %u %-6s window %7.3f ms amount %7.3f ms "
			"run_delay %6.3f ms",
			in->gap, inj_names[in->kind], (in->end_ns - in->start_ns) / 1e6,
			in->amount_ns / 1e6, in->run_delay_ns / 1e6);
		if (in->target_ns)
			fprintf(stderr, " target %.3f ms", in->target_ns / 1e6);
		if (in->bytes)
			fprintf(stderr, " (%" PRIu64 " MiB round)", in->bytes >> 20);
		fprintf(stderr, "\n");
	}
	for (unsigned int u = 0; u + 1 < opt.units; u++) {
		uint64_t g = units_log[u + 1].first_start_ns - units_log[u].last_end_ns;

		fprintf(stderr, "prover_sim: gap %u: GPU idle %.3f ms\n", u, g / 1e6);
		if (g > max_gap)
			max_gap = g;
		sum_gap += g;
		plain++;
	}
	if (plain)
		fprintf(stderr, "prover_sim: GPU idle between units: mean %.3f ms, max %.3f ms\n",
			sum_gap / 1e6 / plain, max_gap / 1e6);
	if (uses_prep())
		fprintf(stderr,
			"prover_sim: heap-prep: %u chunks ran past the GPU's end (max %.3f ms)\n",
			prep.overruns, prep.overrun_max_ns / 1e6);
	for (unsigned int r = 0; uses_prep() && r < prep.rounds && r <= opt.units; r++)
		fprintf(stderr,
			"prover_sim: heap-prep round %u %-6s %u MiB: CPU %.1f ms over %.1f ms%s\n",
			r, inj_names[prep.log[r].kind],
			prep.log[r].kind == INJ_TRIM ? trim_round_mb : munmap_round_mb,
			prep.log[r].cpu_ns / 1e6, prep.log[r].wall_ns / 1e6,
			r == 0 ? " (before unit 0)" : "");
	fprintf(stderr, "prover_sim: channel waits after unit 0: %u\n", chan_waits);
}

/* ---- options ---- */

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: prover_sim [OPTION]...\n"
		"A prover-shaped workload on a simulated GPU that injects measured delays\n"
		"into the GPU idle gaps between units and writes the ground truth.\n"
		"\n"
		"  -s, --scenario NAME   none, lock, trim, munmap, sched, sleep, cpu, io, mixed\n"
		"                        (default: none)\n"
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

/* One line naming the problem and the way out, exit 2 (bad usage). */
static _Noreturn __attribute__((format(printf, 1, 2))) void bad_usage(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "prover_sim: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "; see prover_sim --help\n");
	exit(2);
}

static unsigned long long parse_num(const char *opt_name, const char *s, unsigned long long lo,
				    unsigned long long hi, const char *msg)
{
	unsigned long long v;
	char *end;

	errno = 0;
	if (!s || !*s || *s == '-')
		bad_usage("%s needs %s, got '%s'", opt_name, msg, s ? s : "");
	v = strtoull(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		bad_usage("%s needs %s, got '%s'", opt_name, msg, s);
	return v;
}

static unsigned int parse_mb(const char *opt_name, const char *s)
{
	if (strcmp(s, "auto") == 0)
		return 0;
	return (unsigned int)parse_num(opt_name, s, 1, 65536, "'auto' or an integer 1..65536");
}

/* Round sizes: see the costs above; never below 4 MiB so a round means something. */
static unsigned int auto_mb(double ms_per_mb, double prep_ms_per_mb)
{
	double unit_ms = (double)opt.kernels * (double)opt.kernel_ns / 1e6;
	double d_ms = (double)opt.inject_ns / 1e6 * (opt.scenario == SC_MIXED ? 0.5 : 1.0);
	double budget = (unit_ms - PREP_MARGIN_NS / 1e6) * PREP_SHARE;
	double mb = d_ms / ms_per_mb;

	if (budget / prep_ms_per_mb < mb)
		mb = budget / prep_ms_per_mb;
	return mb < 4 ? 4 : (unsigned int)mb;
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
		case 's': {
			int i;

			for (i = 0; i < SC_COUNT; i++)
				if (strcmp(optarg, scenario_names[i]) == 0)
					break;
			if (i == SC_COUNT)
				bad_usage("unknown --scenario '%s': use none, lock, trim, "
					  "munmap, sched, sleep, cpu, io or mixed",
					  optarg);
			opt.scenario = (enum scenario)i;
			break;
		}
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

	trim_round_mb = opt.trim_mb ? opt.trim_mb : auto_mb(TRIM_MS_PER_MB, TRIM_PREP_MS_PER_MB);
	munmap_round_mb =
	    opt.munmap_mb ? opt.munmap_mb : auto_mb(MUNMAP_MS_PER_MB, MUNMAP_PREP_MS_PER_MB);
	if (help) {
		usage(stdout);
		exit(0);
	}
}

static void spawn(pthread_t *t, void *(*fn)(void *), void *arg, const char *what)
{
	must(pthread_create(t, NULL, fn, arg), what);
}

int main(int argc, char **argv)
{
	pthread_t worker, gpusim, holder_t, prep_t, hog_t, synth[64];
	FILE *truth = NULL;
	uint64_t start_ns, end_ns;
	size_t max_inj;

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
	if (opt.scenario == SC_IO || opt.scenario == SC_MIXED) {
		io_fd = open(opt.io_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (io_fd < 0) {
			fprintf(stderr, "prover_sim: cannot create --io-file %s: %s\n", opt.io_path,
				strerror(errno));
			return 1;
		}
		io_buf = aligned_alloc(4096, IO_CHUNK);
		if (!io_buf)
			die("malloc");
		memset(io_buf, 0x5a, IO_CHUNK); /* faulted in now, not inside a window */
	}
	for (unsigned int i = 0; i < 1024; i++)
		cpu_work[i] = (uint32_t)mix64(opt.seed + i);

	max_inj = (size_t)opt.units * MAX_PER_GAP;
	injections = calloc(max_inj, sizeof(*injections));
	skips = calloc(opt.units, sizeof(*skips));
	units_log = calloc(opt.units, sizeof(*units_log));
	gpu.q = calloc(opt.kernels, sizeof(*gpu.q));
	prep.log = calloc(opt.units + 1, sizeof(*prep.log));
	if (!injections || !skips || !units_log || !gpu.q || !prep.log)
		die("calloc");

	if (uses_hog()) {
		cpu_set_t set;

		if (sched_getaffinity(0, sizeof(set), &set) != 0)
			die("sched_getaffinity");
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &set))
				last_cpu = c;
		if (sem_init(&hog.go, 0, 0) || sem_init(&hog.ready, 0, 0))
			die("sem_init");
		spawn(&hog_t, hog_main, NULL, "start hog thread");
		while (sem_wait(&hog.ready) != 0) /* its policy decides the worker's */
			;
	}
	if (uses_lock())
		spawn(&holder_t, holder_main, NULL, "start lock-holder thread");
	if (uses_prep()) {
		atomic_store(&prep.gate_until, UINT64_MAX); /* warm-up round: no deadline */
		spawn(&prep_t, prep_main, NULL, "start heap-prep thread");
	}
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
	if (uses_lock()) {
		pthread_mutex_lock(&holder.mu);
		holder.stop = true;
		pthread_cond_broadcast(&holder.cv);
		pthread_mutex_unlock(&holder.mu);
		pthread_join(holder_t, NULL);
	}
	if (uses_prep()) {
		pthread_mutex_lock(&prep.mu);
		prep.stop = true;
		pthread_cond_broadcast(&prep.cv);
		pthread_mutex_unlock(&prep.mu);
		pthread_join(prep_t, NULL);
	}
	if (uses_hog()) {
		atomic_store(&hog.stop, true);
		sem_post(&hog.go);
		pthread_join(hog_t, NULL);
	}
	if (io_fd >= 0) {
		close(io_fd);
		unlink(opt.io_path);
	}

	if (truth) {
		write_truth(truth, start_ns, end_ns);
		if (fclose(truth) != 0) {
			fprintf(stderr, "prover_sim: cannot write --truth %s: %s\n", opt.truth_path,
				strerror(errno));
			return 1;
		}
	}
	if (opt.verbose)
		print_verbose();
	if (n_skips)
		fprintf(stderr,
			"prover_sim: warning: %u allocator injections skipped: heap-prep "
			"could not prepare a round within the GPU time before their gap; "
			"lower --trim-mb/--munmap-mb or lengthen units (--kernel-us)\n",
			n_skips);
	if (chan_waits)
		fprintf(stderr,
			"prover_sim: warning: the worker waited on the channel %u times: "
			"synthesis fell behind and those gaps hold a wait\n",
			chan_waits);
	if (!opt.quiet)
		printf("prover_sim: scenario=%s units=%u wall=%.3fs injections=%u\n",
		       scenario_names[opt.scenario], opt.units, (end_ns - start_ns) / 1e9,
		       n_injections);
	return 0;
}
