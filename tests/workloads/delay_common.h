/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * delay_common.h: the prover-shaped skeleton and the measured gap delays
 * shared by the ground-truth workloads (prover_sim.c, tests/gpu/prover_gpu.cu).
 *
 * Everything here is static and compiles as C (gnu11) and as C++ (nvcc): the
 * options, the synthesis threads and their channel, the helper threads that
 * set up each injection (lock-holder, heap-prep, hog, janitor, synth-peer),
 * the delays themselves with their CLOCK_MONOTONIC windows and run_delay
 * bracketing, and the ground-truth JSON (schema gaptrace.truth/1).  A
 * workload supplies its GPU and its gpu-worker loop, and calls:
 *
 *   delay_defaults(prog, io_path)     before parsing options
 *   delay_finish_options()            after them (allocator round sizes)
 *   delay_setup() / delay_start_helpers() / delay_stop_helpers()
 *   delay_worker_begin()              first thing on the gpu-worker thread
 *   holder_request(), prep_open_gate() while the GPU runs a unit
 *   delay_gap(u)                   in the gap after unit u
 *   write_truth(), print_verbose(), delay_report_warnings() at the end
 */
#ifndef DELAY_COMMON_H
#define DELAY_COMMON_H

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <malloc.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "gaptrace-usdt.h"

/* Every workload uses only part of this header. */
#define DELAY_STATIC static __attribute__((unused))

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#define NSEC_PER_USEC 1000ULL
#define NSEC_PER_MSEC 1000000ULL
#define NSEC_PER_SEC  1000000000ULL

#define CHAN_CAP       3
#define SYNTH_SLEEP_NS (3 * NSEC_PER_MSEC)
#define SYNTH_CPU_NS   (200 * NSEC_PER_USEC)
#define POSTPROC_NS    (100 * NSEC_PER_USEC)
/*
 * Large writes, so each injected I/O wait spans few wakeups: every wakeup
 * costs ~20 us of run-queue time that gaptrace counts (sched_wakeup ->
 * switch-in, confirmed with perf) but the kernel's schedstat run_delay,
 * which the truth subtracts, mostly misses.
 */
#define IO_CHUNK       (2 * 1024 * 1024)
#define IO_WRAP	       (64ULL << 20) /* keeps --io-file bounded however long the run */
#define TRIM_BLOCK     (64 * 1024)   /* below glibc's mmap threshold: lands in the heap */
#define PREP_CHUNK     (256 * 1024)  /* heap-prep re-checks its deadline this often */
#define PREP_MARGIN_NS (2 * NSEC_PER_MSEC)
#define MAX_PER_GAP    6

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
	SC_CHAIN,
	SC_TIMER,
	SC_WAKEUP,
	SC_COUNTER,
	SC_HEAP,
	SC_COUNT,
};

DELAY_STATIC const char *const scenario_names[SC_COUNT] = {
    "none", "lock",  "trim",  "munmap", "sched",  "sleep",   "cpu",
    "io",   "mixed", "chain", "timer",	"wakeup", "counter", "heap",
};

enum delay_kind {
	DELAY_LOCK,
	DELAY_TRIM,
	DELAY_MUNMAP,
	DELAY_SCHED,
	DELAY_SLEEP,
	DELAY_CPU,
	DELAY_IO,
	DELAY_EPOLL_TIMER,
	DELAY_FUTEX_TIMER,
	DELAY_EPOLL_WAKEUP,
	DELAY_COUNTER_WAKEUP,
	DELAY_PINNED, /* prover_gpu --pinned-gap-mib: cudaHostAlloc + cudaFreeHost */
	DELAY_HEAP,   /* malloc/free churn and mmap(MAP_POPULATE)/munmap rounds */
};

DELAY_STATIC const char *const delay_names[] = {
    "lock",	   "trim",	  "munmap",	  "sched",	    "sleep",  "cpu",  "io",
    "epoll-timer", "futex-timer", "epoll-wakeup", "counter-wakeup", "pinned", "heap",
};
/* The wakeups: the notifier's CPU time, which the waiting worker's gap is. */
DELAY_STATIC const char *const delay_categories[] = {
    "lock",  "allocator", "allocator", "scheduler", "sleep",	 "cpu",	      "io",
    "sleep", "sleep",	  "cpu",       "cpu",	    "allocator", "allocator",
};

struct delay_opts {
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
};

DELAY_STATIC struct delay_opts opt;
DELAY_STATIC const char *delay_prog = "workload"; /* prefix of every message */

struct planned_delay {
	unsigned int gap;
	enum delay_kind kind;
	uint64_t start_ns;
	uint64_t end_ns;
	uint64_t amount_ns;
	uint64_t run_delay_ns;
	uint64_t pre_run_delay_ns; /* the worker's, from the sync's wakeup to start_ns */
	uint64_t gpu_late_ns;	   /* the simulated GPU's late wakeup of the worker */
	uint64_t target_ns;	   /* what was asked for (0 for the allocator ones) */
	uint64_t bytes;		   /* trim and munmap: the round's size */
	pid_t tid;		   /* the thread measured (chain: not the worker) */
	bool off_path;		   /* chain: a window the gap is not expected to show */
};

struct skipped {
	unsigned int gap;
	enum delay_kind kind;
};

struct unit_log {
	uint64_t first_start_ns;
	uint64_t last_end_ns;
	uint64_t done_late_ns; /* prover_sim: gpu-sim woke the worker this long after last_end_ns */
};

/* Written by the worker only; read by main after the worker is joined. */
DELAY_STATIC struct planned_delay *delays;
DELAY_STATIC unsigned int n_delays;
DELAY_STATIC struct skipped *skips;
DELAY_STATIC unsigned int n_skips;
DELAY_STATIC unsigned int chan_waits; /* pops that found the channel empty, after unit 0 */
/* GPU time of each unit, written by whoever knows it; read after the run. */
DELAY_STATIC struct unit_log *units_log;

DELAY_STATIC bool fifo_granted;
DELAY_STATIC int last_cpu = -1;
DELAY_STATIC bool worker_cpu_reserved; /* the worker has last_cpu to itself */
DELAY_STATIC pid_t worker_tid, holder_tid, prep_tid, hog_tid, janitor_tid, peer_tid;
DELAY_STATIC pid_t synth_tids[64];
DELAY_STATIC unsigned int trim_round_mb, munmap_round_mb;

DELAY_STATIC uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

DELAY_STATIC uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

DELAY_STATIC void sleep_until(uint64_t t)
{
	struct timespec ts;

	ts.tv_sec = (time_t)(t / NSEC_PER_SEC);
	ts.tv_nsec = (long)(t % NSEC_PER_SEC);
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* Busy wait on the wall clock: CPU work that makes no syscall (vDSO clock). */
DELAY_STATIC void spin_for(uint64_t ns)
{
	uint64_t end = now_ns() + ns;

	while (now_ns() < end)
		__asm__ __volatile__("" ::: "memory");
}

DELAY_STATIC __attribute__((noreturn)) void die(const char *what)
{
	fprintf(stderr, "%s: %s: %s\n", delay_prog, what, strerror(errno));
	exit(1);
}

DELAY_STATIC void must(int err, const char *what)
{
	if (err) {
		errno = err;
		die(what);
	}
}

DELAY_STATIC void name_self(const char *name, pid_t *tid)
{
	pthread_setname_np(pthread_self(), name);
	if (tid)
		*tid = gettid();
}

/* Per-gap scale so that consecutive gaps differ but runs repeat exactly. */
DELAY_STATIC uint64_t gap_target(unsigned int gap)
{
	static const unsigned int pct[3] = {75, 100, 125};

	return opt.inject_ns * pct[(gap + opt.seed) % 3] / 100;
}

DELAY_STATIC uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

DELAY_STATIC bool uses_lock(void)
{
	return opt.scenario == SC_LOCK || opt.scenario == SC_MIXED;
}

DELAY_STATIC bool uses_prep(void)
{
	return opt.scenario == SC_TRIM || opt.scenario == SC_MUNMAP || opt.scenario == SC_MIXED ||
	       opt.scenario == SC_CHAIN;
}

DELAY_STATIC bool uses_hog(void)
{
	return opt.scenario == SC_SCHED || opt.scenario == SC_MIXED;
}

/* ---- run-queue delay of the worker ---- */

DELAY_STATIC int schedstat_fd = -1;

/*
 * Second field of /proc/thread-self/schedstat: ns this thread spent runnable
 * but not running.  The kernel folds a wait in when the thread gets the CPU
 * back, so a read by the running thread covers every wait before it.
 */
DELAY_STATIC uint64_t run_delay_of(int fd)
{
	char buf[128];
	unsigned long long run, delay;
	ssize_t n;

	if (fd < 0)
		return 0;
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	if (sscanf(buf, "%llu %llu", &run, &delay) != 2)
		return 0;
	return delay;
}

/* The worker's: schedstat_fd was opened on the worker's thread-self. */
DELAY_STATIC uint64_t run_delay(void)
{
	return run_delay_of(schedstat_fd);
}

/*
 * The worker's run_delay just before it waits for the GPU (delay_sync_mark):
 * its wait for a CPU after that wakeup falls into the gap, before the first
 * injection's window, and is scheduler time the truth must own too
 * (pre_run_delay_ns).  Worker-thread only.
 */
DELAY_STATIC uint64_t sync_rd;
DELAY_STATIC bool sync_rd_set;

DELAY_STATIC void delay_sync_mark(void)
{
	sync_rd = run_delay();
	sync_rd_set = true;
}

DELAY_STATIC struct planned_delay *record(unsigned int gap, enum delay_kind kind, uint64_t start,
					  uint64_t end, uint64_t rd0, uint64_t rd1, uint64_t target,
					  uint64_t bytes)
{
	struct planned_delay *in = &delays[n_delays++];
	uint64_t win = end - start, rd = rd1 - rd0;

	in->gap = gap;
	in->tid = worker_tid;
	in->kind = kind;
	if (sync_rd_set && gettid() == worker_tid) {
		in->pre_run_delay_ns = rd0 > sync_rd ? rd0 - sync_rd : 0;
		in->gpu_late_ns = units_log ? units_log[gap].done_late_ns : 0;
		sync_rd_set = false;
	}
	in->start_ns = start;
	in->end_ns = end;
	in->run_delay_ns = rd;
	in->target_ns = target;
	in->bytes = bytes;
	/*
	 * Scheduler: the run-queue time schedstat counted.  Others: the window
	 * less that run-queue time (preemptions, the wait for a CPU after the
	 * wakeup).  For io schedstat misses most of the ~20 us sched_wakeup ->
	 * switch-in latency of each fdatasync wakeup (large writes keep them
	 * few), but on a loaded 2-vCPU guest the worker also waits milliseconds
	 * for a CPU inside the window (CI saw 5 ms), which is scheduler time.
	 */
	if (kind == DELAY_SCHED)
		in->amount_ns = rd;
	else
		in->amount_ns = win > rd ? win - rd : 0;
	return in;
}

/* ---- channel: synth-N -> gpu-worker ---- */

DELAY_STATIC struct {
	pthread_mutex_t mu;
	pthread_cond_t not_empty;
	pthread_cond_t not_full;
	unsigned int buf[CHAN_CAP];
	unsigned int head;
	unsigned int count;
	bool stop; /* a run that ends early (--duration-s) releases its producers */
} chan;

DELAY_STATIC unsigned int next_partition; /* __atomic */

DELAY_STATIC void chan_push(unsigned int v)
{
	pthread_mutex_lock(&chan.mu);
	while (chan.count == CHAN_CAP && !chan.stop)
		pthread_cond_wait(&chan.not_full, &chan.mu);
	if (!chan.stop) {
		chan.buf[(chan.head + chan.count) % CHAN_CAP] = v;
		chan.count++;
		pthread_cond_signal(&chan.not_empty);
	}
	pthread_mutex_unlock(&chan.mu);
}

DELAY_STATIC unsigned int chan_pop(bool *waited)
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

DELAY_STATIC void chan_close(void)
{
	pthread_mutex_lock(&chan.mu);
	chan.stop = true;
	pthread_cond_broadcast(&chan.not_full);
	pthread_mutex_unlock(&chan.mu);
}

DELAY_STATIC void *synth_main(void *arg)
{
	unsigned int id = (unsigned int)(uintptr_t)arg;
	uint64_t unit_ns = opt.kernels * opt.kernel_ns;
	uint64_t nap = unit_ns / 4 < SYNTH_SLEEP_NS ? unit_ns / 4 : SYNTH_SLEEP_NS;
	char name[16];

	snprintf(name, sizeof(name), "synth-%u", id);
	name_self(name, &synth_tids[id]);
	for (;;) {
		unsigned int p = __atomic_fetch_add(&next_partition, 1, __ATOMIC_SEQ_CST);

		/*
		 * chain: synth-peer makes every partition after the first inside
		 * the gap before it; one made here would let the worker skip the
		 * wait that the scenario is about.
		 */
		if (p >= opt.units || (opt.scenario == SC_CHAIN && p > 0))
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
		if (__atomic_load_n(&chan.stop, __ATOMIC_SEQ_CST))
			break;
	}
	return NULL;
}

/* ---- lock-holder ---- */

DELAY_STATIC pthread_mutex_t contended; /* plain: no spinning */

DELAY_STATIC struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint64_t req_seq;
	uint64_t release_ns; /* 0: not known yet, holder_set_release() will tell */
	uint64_t acquired_seq;
	bool stop;
} holder;

DELAY_STATIC void *holder_main(void *arg)
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
		/* A real GPU's end is known only when it comes: wait to be told. */
		while (!release && !holder.stop && holder.req_seq == seen) {
			pthread_cond_wait(&holder.cv, &holder.mu);
			release = holder.release_ns;
		}
		pthread_mutex_unlock(&holder.mu);
		if (release)
			sleep_until(release);
		pthread_mutex_unlock(&contended);
	}
	return NULL;
}

/*
 * Called at launch: the holder takes the mutex while the GPU runs and lets it
 * go at release_ns, or (release_ns 0) at the time holder_set_release() gives.
 */
DELAY_STATIC void holder_request(uint64_t release_ns)
{
	pthread_mutex_lock(&holder.mu);
	holder.release_ns = release_ns;
	holder.req_seq++;
	pthread_cond_broadcast(&holder.cv);
	pthread_mutex_unlock(&holder.mu);
}

DELAY_STATIC void holder_set_release(uint64_t release_ns)
{
	pthread_mutex_lock(&holder.mu);
	holder.release_ns = release_ns ? release_ns : 1;
	pthread_cond_broadcast(&holder.cv);
	pthread_mutex_unlock(&holder.mu);
}

DELAY_STATIC void delay_lock(unsigned int gap, uint64_t target)
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
	record(gap, DELAY_LOCK, start, end, rd0, rd1, target, 0);
}

/* ---- heap-prep ---- */

enum prep_state {
	PREP_BUSY,  /* building a round (or waiting for GPU time to do so) */
	PREP_READY, /* a round waits for its gap; heap-prep is idle */
};

struct prep_log {
	enum delay_kind kind;
	uint64_t cpu_ns;  /* heap-prep's work on the round */
	uint64_t wall_ns; /* start to ready, waits for GPU time included */
};

DELAY_STATIC struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	enum prep_state state;
	enum delay_kind kind; /* of the ready round, or of the one being built */
	char *region;	      /* munmap round */
	size_t region_len;
	size_t round_bytes;
	uint64_t gate_until; /* heap-prep may work while now < this; __atomic */
	uint64_t gate_seq;
	bool stop;
	/* statistics, read after join */
	unsigned int rounds;
	unsigned int overruns; /* chunks that ended after the GPU went idle */
	uint64_t overrun_max_ns;
	uint64_t chunk_gate;  /* gate_until of the chunk in progress, 0 = none */
	struct prep_log *log; /* one per round, opt.units + 1 */
} prep;

DELAY_STATIC void prep_chunk_done(void)
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

/*
 * Waits until heap-prep may run: only while the GPU is busy, so that its page
 * faults, malloc/free and arena lock never overlap a gap.  Returns false when
 * told to stop.
 */
DELAY_STATIC bool prep_gate(uint64_t *seen)
{
	prep_chunk_done();
	for (;;) {
		uint64_t until = __atomic_load_n(&prep.gate_until, __ATOMIC_SEQ_CST);

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

DELAY_STATIC void prep_open_gate(uint64_t until)
{
	pthread_mutex_lock(&prep.mu);
	__atomic_store_n(&prep.gate_until, until, __ATOMIC_SEQ_CST);
	prep.gate_seq++;
	pthread_cond_broadcast(&prep.cv);
	pthread_mutex_unlock(&prep.mu);
}

/* The GPU went idle earlier than predicted: no new chunk starts (no syscall here). */
DELAY_STATIC void prep_close_gate(void)
{
	__atomic_store_n(&prep.gate_until, 0, __ATOMIC_SEQ_CST);
}

DELAY_STATIC void touch_pages(char *p, size_t len)
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

DELAY_STATIC void trim_heap_free(struct trim_heap *h)
{
	for (size_t i = 0; i < h->n_next; i++)
		free(h->next[i]);
	if (h->primed)
		for (size_t i = 0; i < h->half; i++)
			free(h->live[i]);
	free(h->live);
	free(h->next);
}

DELAY_STATIC void *trim_block(void)
{
	void *p = malloc(TRIM_BLOCK);

	if (!p)
		die("heap-prep: malloc");
	touch_pages((char *)p, TRIM_BLOCK);
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
DELAY_STATIC bool prep_trim(struct trim_heap *h, size_t bytes, uint64_t *seen)
{
	size_t per_chunk = PREP_CHUNK / TRIM_BLOCK;

	if (!h->live) {
		h->half = bytes / TRIM_BLOCK / 2;
		h->live = (void **)calloc(h->half, sizeof(void *));
		h->next = (void **)calloc(h->half * 2, sizeof(void *));
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

DELAY_STATIC bool prep_munmap(size_t bytes, uint64_t *seen)
{
	char *p;
	bool populate = true;

	if (!prep_gate(seen))
		return false;
	p = (char *)mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
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

DELAY_STATIC void *prep_main(void *arg)
{
	struct trim_heap heap;
	uint64_t seen = 0;

	(void)arg;
	memset(&heap, 0, sizeof(heap));
	name_self("heap-prep", &prep_tid);
	for (unsigned int r = 0;; r++) {
		enum delay_kind kind;
		size_t bytes;
		uint64_t c0 = thread_cpu_ns(), w0 = now_ns();
		bool ok;

		if (opt.scenario == SC_MIXED)
			kind = r % 2 ? DELAY_MUNMAP : DELAY_TRIM;
		else
			kind = opt.scenario == SC_TRIM || opt.scenario == SC_CHAIN ? DELAY_TRIM
										   : DELAY_MUNMAP;
		bytes = (size_t)(kind == DELAY_TRIM ? trim_round_mb : munmap_round_mb) << 20;
		pthread_mutex_lock(&prep.mu);
		prep.kind = kind;
		pthread_mutex_unlock(&prep.mu);
		if (kind == DELAY_TRIM)
			ok = prep_trim(&heap, bytes, &seen);
		else
			ok = prep_munmap(bytes, &seen);
		/* chain: one round is both, the janitor's heap and synth-peer's mapping. */
		if (ok && opt.scenario == SC_CHAIN) {
			bytes = (size_t)munmap_round_mb << 20;
			pthread_mutex_lock(&prep.mu);
			prep.kind = DELAY_MUNMAP;
			pthread_mutex_unlock(&prep.mu);
			ok = prep_munmap(bytes, &seen);
		}
		if (!ok)
			break;
		prep_chunk_done();
		if (r <= opt.units) {
			prep.log[r].kind = kind;
			prep.log[r].cpu_ns = thread_cpu_ns() - c0;
			prep.log[r].wall_ns = now_ns() - w0;
		}

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

DELAY_STATIC void delay_alloc(unsigned int gap)
{
	uint64_t rd0, rd1, start, end;
	enum delay_kind kind;
	size_t bytes;

	pthread_mutex_lock(&prep.mu);
	if (prep.state != PREP_READY) {
		skips[n_skips].gap = gap;
		skips[n_skips].kind = prep.kind;
		n_skips++;
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
	if (kind == DELAY_TRIM)
		malloc_trim(0);
	else
		munmap(prep.region, prep.region_len);
	end = now_ns();
	rd1 = run_delay();
	if (kind == DELAY_MUNMAP)
		prep.region = NULL;
	record(gap, kind, start, end, rd0, rd1, 0, bytes);

	pthread_mutex_lock(&prep.mu);
	prep.state = PREP_BUSY;
	pthread_cond_broadcast(&prep.cv);
	pthread_mutex_unlock(&prep.mu);
}

/* ---- hog ---- */

DELAY_STATIC struct {
	sem_t go;
	sem_t ready;
	uint64_t spin_ns; /* __atomic, like done and stop */
	bool done;
	bool stop;
} hog;

DELAY_STATIC void pin_to(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	must(pthread_setaffinity_np(pthread_self(), sizeof(set), &set), "pin to last CPU");
}

DELAY_STATIC void *hog_main(void *arg)
{
	struct sched_param sp;
	int err;

	(void)arg;
	memset(&sp, 0, sizeof(sp));
	sp.sched_priority = 1;
	name_self("hog", &hog_tid);
	pin_to(last_cpu);
	err = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	if (err == 0) {
		fifo_granted = true;
	} else if (err == EPERM) {
		/* Containers often refuse RT; a nice gap only approximates the window. */
		if (setpriority(PRIO_PROCESS, (id_t)gettid(), -20) != 0)
			fprintf(stderr,
				"%s: warning: hog: SCHED_FIFO and nice -20 both "
				"refused; the sched windows will be short\n",
				delay_prog);
	} else {
		errno = err;
		die("hog: pthread_setschedparam");
	}
	sem_post(&hog.ready);
	for (;;) {
		uint64_t end;

		while (sem_wait(&hog.go) != 0)
			;
		if (__atomic_load_n(&hog.stop, __ATOMIC_SEQ_CST))
			break;
		end = now_ns() + __atomic_load_n(&hog.spin_ns, __ATOMIC_SEQ_CST);
		while (now_ns() < end)
			__asm__ __volatile__("" ::: "memory");
		__atomic_store_n(&hog.done, true, __ATOMIC_SEQ_CST);
	}
	return NULL;
}

DELAY_STATIC void delay_sched(unsigned int gap, uint64_t target)
{
	static bool warned;
	uint64_t rd0, rd1, start, end;
	int nice0 = 0;

	if (!fifo_granted) {
		nice0 = getpriority(PRIO_PROCESS, (id_t)gettid());
		setpriority(PRIO_PROCESS, (id_t)gettid(), 19);
	}
	__atomic_store_n(&hog.spin_ns, target, __ATOMIC_SEQ_CST);
	__atomic_store_n(&hog.done, false, __ATOMIC_SEQ_CST);
	rd0 = run_delay();
	start = now_ns();
	sem_post(&hog.go);
	/*
	 * Stay runnable: every ns the hog holds the CPU is run-queue delay.
	 * Yielding hands the CPU over at once where the hog only has a better
	 * nice level (EEVDF would otherwise let the worker finish its slice,
	 * up to a tick); under SCHED_FIFO the hog has preempted it already.
	 */
	while (!__atomic_load_n(&hog.done, __ATOMIC_SEQ_CST))
		sched_yield();
	end = now_ns();
	rd1 = run_delay();
	if (!fifo_granted && setpriority(PRIO_PROCESS, (id_t)gettid(), nice0) != 0 && !warned) {
		warned = true;
		fprintf(stderr, "%s: warning: cannot restore the worker's nice %d\n", delay_prog,
			nice0);
	}
	record(gap, DELAY_SCHED, start, end, rd0, rd1, target, 0);
}

/* ---- chain: gpu-worker <- synth-peer <- (lock L) janitor in malloc_trim ---- */

/*
 * The critical path through another thread.  In the gap the worker waits on
 * the channel for the next partition, which synth-peer makes right then;
 * synth-peer first needs mutex L, held by the janitor through a
 * malloc_trim(0) of heap-prep's fragmented heap, and then unmaps heap-prep's
 * mapping before it pushes.  Hand-off waits are followed to the waker, lock
 * waits are not followed to the holder: the gap should read as synth-peer's
 * lock wait plus its munmap, not as the worker's wait, and the janitor's
 * trim shows only as the lock's holder.  The windows are measured by the
 * thread that spends them, against its own run_delay.
 */
DELAY_STATIC pthread_mutex_t chain_l; /* L: plain, no spinning */

DELAY_STATIC struct {
	pthread_mutex_t mu;
	pthread_cond_t jan_cv;	/* worker -> janitor: take L and trim */
	pthread_cond_t held_cv; /* janitor -> worker: L is taken */
	pthread_cond_t peer_cv; /* worker -> synth-peer: make the partition */
	uint64_t jan_req, jan_held, peer_req;
	unsigned int gap; /* of the latest request */
	bool stop;
	pthread_mutex_t rec_mu; /* janitor and synth-peer record at the same time */
} chain;

DELAY_STATIC bool uses_chain(void)
{
	return opt.scenario == SC_CHAIN;
}

DELAY_STATIC void chain_record(unsigned int gap, enum delay_kind kind, uint64_t start, uint64_t end,
			       uint64_t rd0, uint64_t rd1, uint64_t bytes, pid_t tid, bool off_path)
{
	struct planned_delay *in;

	pthread_mutex_lock(&chain.rec_mu);
	in = record(gap, kind, start, end, rd0, rd1, 0, bytes);
	in->tid = tid;
	in->off_path = off_path;
	pthread_mutex_unlock(&chain.rec_mu);
}

/* Waits for request number *seen + 1 on cv; false when told to stop. */
DELAY_STATIC bool chain_wait(pthread_cond_t *cv, uint64_t *req, uint64_t *seen, unsigned int *gap)
{
	bool go;

	pthread_mutex_lock(&chain.mu);
	while (*req == *seen && !chain.stop)
		pthread_cond_wait(cv, &chain.mu);
	go = !chain.stop;
	*seen = *req;
	*gap = chain.gap;
	pthread_mutex_unlock(&chain.mu);
	return go;
}

DELAY_STATIC void *janitor_main(void *arg)
{
	uint64_t seen = 0;
	unsigned int gap;
	int fd;

	(void)arg;
	name_self("janitor", &janitor_tid);
	fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	while (chain_wait(&chain.jan_cv, &chain.jan_req, &seen, &gap)) {
		uint64_t rd0, rd1, start, end;

		pthread_mutex_lock(&chain_l);
		pthread_mutex_lock(&chain.mu);
		chain.jan_held = seen;
		pthread_mutex_unlock(&chain.mu);
		pthread_cond_signal(&chain.held_cv);

		/* heap-prep is parked until synth-peer hands the round back. */
		rd0 = run_delay_of(fd);
		start = now_ns();
		malloc_trim(0);
		end = now_ns();
		rd1 = run_delay_of(fd);
		pthread_mutex_unlock(&chain_l);
		chain_record(gap, DELAY_TRIM, start, end, rd0, rd1, (uint64_t)trim_round_mb << 20,
			     janitor_tid, true);
	}
	if (fd >= 0)
		close(fd);
	return NULL;
}

DELAY_STATIC void *peer_main(void *arg)
{
	uint64_t seen = 0;
	unsigned int gap;
	int fd;

	(void)arg;
	name_self("synth-peer", &peer_tid);
	fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	/*
	 * The worker's CPU, which the worker leaves idle while it waits for
	 * this thread: next to the trimming janitor, synth-peer would queue
	 * for the CPU instead of blocking on L, and the lock wait would turn
	 * into run-queue time.
	 */
	if (worker_cpu_reserved)
		pin_to(last_cpu);
	while (chain_wait(&chain.peer_cv, &chain.peer_req, &seen, &gap)) {
		uint64_t rd0, rd1, rd2, rd3, s0, e0, s1, e1;

		rd0 = run_delay_of(fd);
		s0 = now_ns();
		pthread_mutex_lock(&chain_l);
		e0 = now_ns();
		rd1 = run_delay_of(fd);
		/* Only the wait matters here: L guards nothing in this program. */
		pthread_mutex_unlock(&chain_l);

		/* heap-prep is parked until the round is handed back below. */
		rd2 = run_delay_of(fd);
		s1 = now_ns();
		munmap(prep.region, prep.region_len);
		e1 = now_ns();
		rd3 = run_delay_of(fd);
		prep.region = NULL;
		chan_push(gap + 1);

		/* The worker runs again: the bookkeeping stays out of the gap's path. */
		chain_record(gap, DELAY_LOCK, s0, e0, rd0, rd1, 0, peer_tid, false);
		chain_record(gap, DELAY_MUNMAP, s1, e1, rd2, rd3, (uint64_t)munmap_round_mb << 20,
			     peer_tid, false);
		pthread_mutex_lock(&prep.mu);
		prep.state = PREP_BUSY;
		pthread_cond_broadcast(&prep.cv);
		pthread_mutex_unlock(&prep.mu);
	}
	if (fd >= 0)
		close(fd);
	return NULL;
}

/*
 * The worker's part, right after unit_end: start the janitor, let it take L,
 * start synth-peer.  The worker's next chan_pop() then finds the channel
 * empty and waits on its condvar until synth-peer pushes.
 */
DELAY_STATIC void delay_chain(unsigned int gap)
{
	bool ready, empty;

	pthread_mutex_lock(&chan.mu);
	empty = chan.count == 0;
	pthread_mutex_unlock(&chan.mu);
	if (!empty) {
		/* A partition waiting would let the worker skip the chain. */
		fprintf(stderr, "%s: chain: the channel holds a partition in gap %u\n", delay_prog,
			gap);
		exit(1);
	}
	pthread_mutex_lock(&prep.mu);
	ready = prep.state == PREP_READY;
	if (!ready) {
		skips[n_skips].gap = gap;
		skips[n_skips].kind = prep.kind;
		n_skips++;
	}
	pthread_mutex_unlock(&prep.mu);
	if (!ready) {
		/* Nothing to release: the partition comes without the chain. */
		chan_push(gap + 1);
		return;
	}

	pthread_mutex_lock(&chain.mu);
	chain.gap = gap;
	chain.jan_req++;
	pthread_mutex_unlock(&chain.mu);
	pthread_cond_signal(&chain.jan_cv);

	/* Before synth-peer starts: its lock window must find L taken. */
	pthread_mutex_lock(&chain.mu);
	while (chain.jan_held != chain.jan_req)
		pthread_cond_wait(&chain.held_cv, &chain.mu);
	chain.peer_req++;
	pthread_mutex_unlock(&chain.mu);
	pthread_cond_signal(&chain.peer_cv);
}

/* ---- the plain delays ---- */

DELAY_STATIC void delay_sleep(unsigned int gap, uint64_t target)
{
	struct timespec ts;
	uint64_t rd0, rd1, start, end;

	ts.tv_sec = (time_t)(target / NSEC_PER_SEC);
	ts.tv_nsec = (long)(target % NSEC_PER_SEC);
	rd0 = run_delay();
	start = now_ns();
	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
		;
	end = now_ns();
	rd1 = run_delay();
	record(gap, DELAY_SLEEP, start, end, rd0, rd1, target, 0);
}

DELAY_STATIC uint32_t cpu_work[1024];
DELAY_STATIC volatile double cpu_sink;

/*
 * One round of the cpu scenario's work, always inlined: the integration
 * tests find it by name as an inline frame (DWARF), not as a symbol.
 */
static inline __attribute__((always_inline)) double cpu_crunch(double acc)
{
	for (unsigned int i = 0; i < 1024; i++) {
		uint32_t x = cpu_work[i] * 1664525u + 1013904223u;

		cpu_work[i] = x ^ (cpu_work[(i + 7) & 1023] >> 3);
		acc = acc * 0.999999 + (double)(x & 0xffff) * 1e-9;
	}
	return acc;
}

DELAY_STATIC void delay_cpu(unsigned int gap, uint64_t target)
{
	uint64_t rd0, rd1, start, end;
	double acc = 1.0;

	rd0 = run_delay();
	start = now_ns();
	end = start;
	/* Application work: no syscalls (vDSO clock), no allocation, no faults. */
	while (end - start < target) {
		acc = cpu_crunch(acc);
		end = now_ns();
	}
	rd1 = run_delay();
	cpu_sink = sqrt(acc);
	record(gap, DELAY_CPU, start, end, rd0, rd1, target, 0);
}

DELAY_STATIC int io_fd = -1;
DELAY_STATIC char *io_buf;
DELAY_STATIC uint64_t io_off;

DELAY_STATIC void delay_io(unsigned int gap, uint64_t target)
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
	record(gap, DELAY_IO, start, end, rd0, rd1, target, 0);
}

/* ---- timed waits and wakeups: timer, wakeup, counter (#13) ---- */

/*
 * timer: an event loop's timer.  The worker waits in epoll_wait with a
 * timeout on an eventfd nobody writes (tokio::time::sleep parks its thread
 * so), then in a futex wait with an absolute timeout on a word nobody wakes
 * (a Condvar::wait_timeout that runs out): both end by their timeouts, with
 * no waker, and are sleep.
 * wakeup: the counter-case.  The same epoll_wait with a long timeout, ended
 * by the notifier's eventfd write after D ms of its CPU work: a hand-off, so
 * the gap is the notifier's cpu, reached through the critical path.
 * counter: the worker waits with FUTEX_WAIT_BITSET on a sequence word the
 * notifier bumps after D ms of CPU work (as Rust's futex Condvar does); the
 * word takes the values 0, 1, 2, 3... so in gap 2 it is waited on at 2, the
 * value a contended lock waits on: still a hand-off, the notifier's cpu.
 * The notifier measures its CPU window against its own run_delay; the
 * run-queue time around it (the notifier's after the worker's signal, the
 * worker's after the wakeup) is in the injection's run_delay_ns too.
 */
DELAY_STATIC int timer_ep = -1, timer_efd = -1; /* epoll over the eventfd */
DELAY_STATIC uint32_t timer_word;		/* nobody wakes it */
DELAY_STATIC uint32_t seq_word;			/* counter: bumped per wakeup */
DELAY_STATIC pid_t notifier_tid;

DELAY_STATIC struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint64_t req;
	unsigned int gap;
	uint64_t spin_ns;
	bool stop;
	uint64_t *worker_rd; /* per gap: the worker's run_delay while it waited */
} notif;

DELAY_STATIC bool uses_notifier(void)
{
	return opt.scenario == SC_WAKEUP || opt.scenario == SC_COUNTER;
}

DELAY_STATIC long futex_op(uint32_t *word, int op, uint32_t val, const struct timespec *ts)
{
	return syscall(SYS_futex, word, op, val, ts, NULL, FUTEX_BITSET_MATCH_ANY);
}

DELAY_STATIC void delay_epoll_timer(unsigned int gap, uint64_t target)
{
	int ms = (int)((target + NSEC_PER_MSEC / 2) / NSEC_PER_MSEC);
	struct epoll_event ev;
	uint64_t rd0, rd1, start, end, until;
	int n;

	rd0 = run_delay();
	start = now_ns();
	until = start + (uint64_t)ms * NSEC_PER_MSEC;
	do {
		uint64_t t = now_ns();

		n = epoll_wait(timer_ep, &ev, 1,
			       t < until ? (int)((until - t) / NSEC_PER_MSEC) : 0);
	} while ((n < 0 && errno == EINTR) || (n == 0 && now_ns() + NSEC_PER_MSEC <= until));
	end = now_ns();
	rd1 = run_delay();
	if (n != 0)
		die("timer: epoll_wait on an eventfd nobody writes");
	record(gap, DELAY_EPOLL_TIMER, start, end, rd0, rd1, (uint64_t)ms * NSEC_PER_MSEC, 0);
}

DELAY_STATIC void delay_futex_timer(unsigned int gap, uint64_t target)
{
	struct timespec ts;
	uint64_t rd0, rd1, start, end, until;
	long rc;

	rd0 = run_delay();
	start = now_ns();
	until = start + target;
	ts.tv_sec = (time_t)(until / NSEC_PER_SEC);
	ts.tv_nsec = (long)(until % NSEC_PER_SEC);
	do
		rc = futex_op(&timer_word, FUTEX_WAIT_BITSET_PRIVATE, 0, &ts);
	while (rc != 0 && errno != ETIMEDOUT);
	end = now_ns();
	rd1 = run_delay();
	record(gap, DELAY_FUTEX_TIMER, start, end, rd0, rd1, target, 0);
}

/* wakeup, counter: the worker's side. */
DELAY_STATIC void delay_wakeup(unsigned int gap, uint64_t target)
{
	uint32_t seq = __atomic_load_n(&seq_word, __ATOMIC_SEQ_CST);
	struct epoll_event ev;
	uint64_t v, rd0 = run_delay();

	pthread_mutex_lock(&notif.mu);
	notif.gap = gap;
	notif.spin_ns = target;
	notif.req++;
	pthread_cond_signal(&notif.cv);
	pthread_mutex_unlock(&notif.mu);
	if (opt.scenario == SC_COUNTER) {
		while (__atomic_load_n(&seq_word, __ATOMIC_SEQ_CST) == seq)
			futex_op(&seq_word, FUTEX_WAIT_BITSET_PRIVATE, seq, NULL);
	} else {
		/* A timeout far beyond the notifier's work: the write ends the wait. */
		while (epoll_wait(timer_ep, &ev, 1, 1000) != 1)
			;
	}
	/* Added to the notifier's injection once both threads are done. */
	notif.worker_rd[gap] = run_delay() - rd0;
	if (opt.scenario == SC_WAKEUP && read(timer_efd, &v, sizeof(v)) != (ssize_t)sizeof(v))
		die("wakeup: read the eventfd");
}

/*
 * Sharing the worker's CPU, the woken notifier would preempt the worker
 * before it reaches its wait: yield until the worker sleeps (its
 * /proc/.../stat state), at most 50 ms.
 */
DELAY_STATIC void until_worker_sleeps(int stat_fd)
{
	uint64_t give_up = now_ns() + 50 * NSEC_PER_MSEC;
	char buf[512];

	while (stat_fd >= 0 && now_ns() < give_up) {
		ssize_t n = pread(stat_fd, buf, sizeof(buf) - 1, 0);
		const char *p;

		if (n <= 0)
			return;
		buf[n] = '\0';
		p = strrchr(buf, ')');
		if (!p || (p[1] == ' ' && p[2] == 'S'))
			return;
		sched_yield();
	}
}

DELAY_STATIC void *notifier_main(void *arg)
{
	uint64_t seen = 0;
	char path[64];
	int fd, stat_fd;

	(void)arg;
	name_self("notifier", &notifier_tid);
	fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	stat_fd = -1;
	/* The worker's CPU, which it leaves idle while it waits for this thread. */
	if (worker_cpu_reserved)
		pin_to(last_cpu);
	for (;;) {
		uint64_t rd_before, rd0, rd1, start, end, spin, one = 1;
		struct planned_delay *in;
		unsigned int gap;

		/* From here: the wait for a CPU after the worker's signal counts too. */
		rd_before = run_delay_of(fd);
		pthread_mutex_lock(&notif.mu);
		while (notif.req == seen && !notif.stop)
			pthread_cond_wait(&notif.cv, &notif.mu);
		if (notif.stop) {
			pthread_mutex_unlock(&notif.mu);
			break;
		}
		seen = notif.req;
		gap = notif.gap;
		spin = notif.spin_ns;
		pthread_mutex_unlock(&notif.mu);
		/* The worker (started after this thread) has by its first request. */
		if (stat_fd < 0) {
			snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)worker_tid);
			stat_fd = open(path, O_RDONLY | O_CLOEXEC);
			if (stat_fd < 0)
				die("notifier: open the worker's stat");
		}
		until_worker_sleeps(stat_fd);

		rd0 = run_delay_of(fd);
		start = now_ns();
		spin_for(spin);
		end = now_ns();
		rd1 = run_delay_of(fd);
		if (opt.scenario == SC_COUNTER) {
			__atomic_add_fetch(&seq_word, 1, __ATOMIC_SEQ_CST);
			futex_op(&seq_word, FUTEX_WAKE_PRIVATE, 1, NULL);
		} else if (write(timer_efd, &one, sizeof(one)) != (ssize_t)sizeof(one)) {
			die("wakeup: write the eventfd");
		}
		/* The worker runs again: the bookkeeping stays out of its gap. */
		pthread_mutex_lock(&chain.rec_mu);
		in = record(gap,
			    opt.scenario == SC_COUNTER ? DELAY_COUNTER_WAKEUP : DELAY_EPOLL_WAKEUP,
			    start, end, rd0, rd1, 0, 0);
		in->tid = notifier_tid;
		in->run_delay_ns = rd1 - rd_before;
		pthread_mutex_unlock(&chain.rec_mu);
	}
	if (fd >= 0)
		close(fd);
	if (stat_fd >= 0)
		close(stat_fd);
	return NULL;
}

/* ---- heap: on-CPU allocator work inside libc ---- */

#define HEAP_SLOTS	 4096
#define HEAP_MAP_BYTES	 (2u << 20) /* each round's mmap(MAP_POPULATE) + munmap */
#define HEAP_MAP_ROUNDS	 4	    /* a mapping every this many churn rounds */
#define HEAP_CONSOLIDATE 200000	    /* a largebin request: consolidates the fastbins */

DELAY_STATIC void *heap_slots[HEAP_SLOTS];

/*
 * One churn round: blocks of 16 B to 1 KiB, far more per size than the
 * tcache keeps (7), freed in a scattered order so that neighbours merge
 * (_int_free, unlink_chunk), then a large request that consolidates the
 * fastbins (malloc_consolidate).  The loop itself is a few instructions per
 * call: the time is libc's.
 */
DELAY_STATIC void heap_churn_round(unsigned int round)
{
	void *big;

	for (unsigned int i = 0; i < HEAP_SLOTS; i++)
		heap_slots[i] = malloc(16 + ((i * 40503u + round) & 1008));
	for (unsigned int i = 0; i < HEAP_SLOTS; i++)
		free(heap_slots[(i * 1021u) & (HEAP_SLOTS - 1)]);
	big = malloc(HEAP_CONSOLIDATE);
	free(big);
}

/*
 * heap: malloc/free churn for target ns, with an mmap(MAP_POPULATE) and
 * munmap of HEAP_MAP_BYTES every HEAP_MAP_ROUNDS rounds: on-CPU allocator
 * time in a libc without symbols for its internals, the case issue #13 found
 * counted as cpu.
 */
DELAY_STATIC void delay_heap(unsigned int gap, uint64_t target)
{
	uint64_t rd0, rd1, start, end, bytes = 0;
	unsigned int round = 0;
	void *p;

	rd0 = run_delay();
	start = now_ns();
	end = start;
	while (end - start < target) {
		if (round % HEAP_MAP_ROUNDS == 0) {
			p = mmap(NULL, HEAP_MAP_BYTES, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
			if (p == MAP_FAILED)
				die("mmap");
			munmap(p, HEAP_MAP_BYTES);
			bytes += HEAP_MAP_BYTES;
		}
		heap_churn_round(round++);
		end = now_ns();
	}
	rd1 = run_delay();
	record(gap, DELAY_HEAP, start, end, rd0, rd1, target, bytes);
}

DELAY_STATIC void delay_gap(unsigned int gap)
{
	uint64_t d = gap_target(gap);

	switch (opt.scenario) {
	case SC_NONE:
		break;
	case SC_LOCK:
		delay_lock(gap, d);
		break;
	case SC_TRIM:
	case SC_MUNMAP:
		delay_alloc(gap);
		break;
	case SC_SCHED:
		delay_sched(gap, d);
		break;
	case SC_SLEEP:
		delay_sleep(gap, d);
		break;
	case SC_CPU:
		delay_cpu(gap, d);
		break;
	case SC_IO:
		delay_io(gap, d);
		break;
	case SC_MIXED:
		delay_lock(gap, d / 2);
		delay_alloc(gap);
		delay_sleep(gap, d / 2);
		delay_cpu(gap, d / 2);
		delay_io(gap, d / 2);
		delay_sched(gap, d / 2);
		break;
	case SC_CHAIN:
		delay_chain(gap);
		break;
	case SC_TIMER:
		delay_epoll_timer(gap, d / 2);
		delay_futex_timer(gap, d / 2);
		break;
	case SC_WAKEUP:
	case SC_COUNTER:
		delay_wakeup(gap, d);
		break;
	case SC_HEAP:
		delay_heap(gap, d);
		break;
	case SC_COUNT:
		break;
	}
}

/* How long the lock-holder keeps the mutex past the GPU's end of unit u. */
DELAY_STATIC uint64_t lock_hold_ns(unsigned int u)
{
	return opt.scenario == SC_MIXED ? gap_target(u) / 2 : gap_target(u);
}

/* ---- the gpu-worker's start, the helper threads and the run's set-up ---- */

/* First thing on the gpu-worker thread. */
DELAY_STATIC void delay_worker_begin(void)
{
	name_self("gpu-worker", &worker_tid);
	schedstat_fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	if (schedstat_fd < 0)
		fprintf(stderr,
			"%s: warning: no /proc/thread-self/schedstat "
			"(CONFIG_SCHED_INFO off?): run_delay_ns will read 0\n",
			delay_prog);
	if (uses_hog() || worker_cpu_reserved)
		pin_to(last_cpu);

	if (uses_prep()) {
		/* The first round is built before unit 0, on memory not yet faulted in. */
		pthread_mutex_lock(&prep.mu);
		while (prep.state != PREP_READY)
			pthread_cond_wait(&prep.cv, &prep.mu);
		pthread_mutex_unlock(&prep.mu);
	}
}

/* Defaults of the options both workloads share; mutexes set up here too. */
DELAY_STATIC void delay_defaults(const char *prog, const char *io_path)
{
	delay_prog = prog;
	memset(&opt, 0, sizeof(opt));
	opt.scenario = SC_NONE;
	opt.units = 10;
	opt.kernels = 8;
	opt.kernel_ns = 2000 * NSEC_PER_USEC;
	opt.inject_ns = 20 * NSEC_PER_MSEC;
	opt.io_path = io_path;
	opt.synth = 2;
	pthread_mutex_init(&chan.mu, NULL);
	pthread_cond_init(&chan.not_empty, NULL);
	pthread_cond_init(&chan.not_full, NULL);
	pthread_mutex_init(&contended, NULL);
	pthread_mutex_init(&holder.mu, NULL);
	pthread_cond_init(&holder.cv, NULL);
	pthread_mutex_init(&prep.mu, NULL);
	pthread_cond_init(&prep.cv, NULL);
	pthread_mutex_init(&chain_l, NULL);
	pthread_mutex_init(&chain.mu, NULL);
	pthread_mutex_init(&chain.rec_mu, NULL);
	pthread_cond_init(&chain.jan_cv, NULL);
	pthread_cond_init(&chain.held_cv, NULL);
	pthread_cond_init(&chain.peer_cv, NULL);
	pthread_mutex_init(&notif.mu, NULL);
	pthread_cond_init(&notif.cv, NULL);
}

/* One line naming the problem and the way out, exit 2 (bad usage). */
DELAY_STATIC __attribute__((noreturn, format(printf, 1, 2))) void bad_usage(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", delay_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "; see %s --help\n", delay_prog);
	exit(2);
}

DELAY_STATIC unsigned long long parse_num(const char *opt_name, const char *s,
					  unsigned long long lo, unsigned long long hi,
					  const char *msg)
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

DELAY_STATIC unsigned int parse_mb(const char *opt_name, const char *s)
{
	if (strcmp(s, "auto") == 0)
		return 0;
	return (unsigned int)parse_num(opt_name, s, 1, 65536, "'auto' or an integer 1..65536");
}

DELAY_STATIC enum scenario parse_scenario(const char *s)
{
	int i;

	for (i = 0; i < SC_COUNT; i++)
		if (strcmp(s, scenario_names[i]) == 0)
			break;
	if (i == SC_COUNT)
		bad_usage("unknown --scenario '%s': use none, lock, trim, "
			  "munmap, sched, sleep, cpu, io, mixed, chain, timer, wakeup, counter "
			  "or heap",
			  s);
	return (enum scenario)i;
}

/*
 * Round sizes: see the costs above; never below 4 MiB so a round means
 * something.  chain: a trim and an munmap of D/4 each (a few ms, as a
 * producer's stall would be), and each gets half of heap-prep's budget.
 */
DELAY_STATIC unsigned int auto_mb(double ms_per_mb, double prep_ms_per_mb)
{
	double unit_ms = (double)opt.kernels * (double)opt.kernel_ns / 1e6;
	double share = opt.scenario == SC_MIXED ? 0.5 : opt.scenario == SC_CHAIN ? 0.25 : 1.0;
	double d_ms = (double)opt.inject_ns / 1e6 * share;
	double budget =
	    (unit_ms - PREP_MARGIN_NS / 1e6) * PREP_SHARE * (opt.scenario == SC_CHAIN ? 0.5 : 1.0);
	double mb = d_ms / ms_per_mb;

	if (budget / prep_ms_per_mb < mb)
		mb = budget / prep_ms_per_mb;
	return mb < 4 ? 4 : (unsigned int)mb;
}

DELAY_STATIC void delay_finish_options(void)
{
	trim_round_mb = opt.trim_mb ? opt.trim_mb : auto_mb(TRIM_MS_PER_MB, TRIM_PREP_MS_PER_MB);
	munmap_round_mb =
	    opt.munmap_mb ? opt.munmap_mb : auto_mb(MUNMAP_MS_PER_MB, MUNMAP_PREP_MS_PER_MB);
}

/* --io-file, the CPU work array and the per-run tables; 1 with a message on failure. */
DELAY_STATIC int delay_setup(void)
{
	size_t max_inj = (size_t)opt.units * MAX_PER_GAP;

	if (opt.scenario == SC_IO || opt.scenario == SC_MIXED) {
		io_fd = open(opt.io_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (io_fd < 0) {
			fprintf(stderr, "%s: cannot create --io-file %s: %s\n", delay_prog,
				opt.io_path, strerror(errno));
			return 1;
		}
		io_buf = (char *)aligned_alloc(4096, IO_CHUNK);
		if (!io_buf)
			die("malloc");
		memset(io_buf, 0x5a, IO_CHUNK); /* faulted in now, not inside a window */
	}
	if (opt.scenario == SC_TIMER || opt.scenario == SC_WAKEUP) {
		struct epoll_event ev;

		memset(&ev, 0, sizeof(ev));
		ev.events = EPOLLIN;
		timer_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		timer_ep = epoll_create1(EPOLL_CLOEXEC);
		if (timer_efd < 0 || timer_ep < 0 ||
		    epoll_ctl(timer_ep, EPOLL_CTL_ADD, timer_efd, &ev) != 0)
			die("epoll over an eventfd");
	}
	for (unsigned int i = 0; i < 1024; i++)
		cpu_work[i] = (uint32_t)mix64(opt.seed + i);

	delays = (struct planned_delay *)calloc(max_inj, sizeof(*delays));
	skips = (struct skipped *)calloc(opt.units, sizeof(*skips));
	units_log = (struct unit_log *)calloc(opt.units, sizeof(*units_log));
	prep.log = (struct prep_log *)calloc(opt.units + 1, sizeof(*prep.log));
	notif.worker_rd = (uint64_t *)calloc(opt.units, sizeof(*notif.worker_rd));
	if (!delays || !skips || !units_log || !prep.log || !notif.worker_rd)
		die("calloc");
	return 0;
}

DELAY_STATIC void spawn(pthread_t *t, void *(*fn)(void *), void *arg, const char *what)
{
	must(pthread_create(t, NULL, fn, arg), what);
}

struct delay_helpers {
	pthread_t holder, prep, hog, janitor, peer, notifier;
};

/* The threads that prepare the delays, before the worker starts. */
DELAY_STATIC void delay_start_helpers(struct delay_helpers *h)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		die("sched_getaffinity");
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set))
			last_cpu = c;
	/*
	 * The gpu-worker gets the last CPU to itself (the hog joins it only in
	 * the scheduler injection): every thread started from here on inherits
	 * the other CPUs.  Otherwise, on a small machine, synth/heap-prep/
	 * lock-holder work queues the worker for milliseconds the truth cannot
	 * account for.
	 */
	if (CPU_COUNT(&set) >= 2) {
		CPU_CLR(last_cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set) == 0)
			worker_cpu_reserved = true;
	}
	if (uses_hog()) {
		if (sem_init(&hog.go, 0, 0) || sem_init(&hog.ready, 0, 0))
			die("sem_init");
		spawn(&h->hog, hog_main, NULL, "start hog thread");
		while (sem_wait(&hog.ready) != 0) /* its policy decides the worker's */
			;
	}
	if (uses_lock())
		spawn(&h->holder, holder_main, NULL, "start lock-holder thread");
	if (uses_prep()) {
		__atomic_store_n(&prep.gate_until, UINT64_MAX,
				 __ATOMIC_SEQ_CST); /* warm-up round: no deadline */
		spawn(&h->prep, prep_main, NULL, "start heap-prep thread");
	}
	if (uses_chain()) {
		spawn(&h->janitor, janitor_main, NULL, "start janitor thread");
		spawn(&h->peer, peer_main, NULL, "start synth-peer thread");
	}
	if (uses_notifier())
		spawn(&h->notifier, notifier_main, NULL, "start notifier thread");
}

DELAY_STATIC void delay_stop_helpers(struct delay_helpers *h)
{
	if (uses_notifier()) {
		pthread_mutex_lock(&notif.mu);
		notif.stop = true;
		pthread_cond_signal(&notif.cv);
		pthread_mutex_unlock(&notif.mu);
		pthread_join(h->notifier, NULL);
		for (unsigned int i = 0; i < n_delays; i++)
			delays[i].run_delay_ns += notif.worker_rd[delays[i].gap];
	}
	/* Before heap-prep: synth-peer may still be handing it the last round. */
	if (uses_chain()) {
		pthread_mutex_lock(&chain.mu);
		chain.stop = true;
		pthread_mutex_unlock(&chain.mu);
		pthread_cond_broadcast(&chain.jan_cv);
		pthread_cond_broadcast(&chain.peer_cv);
		pthread_join(h->janitor, NULL);
		pthread_join(h->peer, NULL);
	}
	if (uses_lock()) {
		pthread_mutex_lock(&holder.mu);
		holder.stop = true;
		pthread_cond_broadcast(&holder.cv);
		pthread_mutex_unlock(&holder.mu);
		pthread_join(h->holder, NULL);
	}
	if (uses_prep()) {
		pthread_mutex_lock(&prep.mu);
		prep.stop = true;
		pthread_cond_broadcast(&prep.cv);
		pthread_mutex_unlock(&prep.mu);
		pthread_join(h->prep, NULL);
	}
	if (uses_hog()) {
		__atomic_store_n(&hog.stop, true, __ATOMIC_SEQ_CST);
		sem_post(&hog.go);
		pthread_join(h->hog, NULL);
	}
	if (io_fd >= 0) {
		close(io_fd);
		unlink(opt.io_path);
	}
}

/* ---- ground truth ---- */

/*
 * The truth file (schema gaptrace.truth/1).  gpu_thread names the thread that
 * plays the device, if any; extra() may add top-level "key":value, pairs.
 */
DELAY_STATIC void write_truth(FILE *f, uint64_t start_ns, uint64_t end_ns, const char *gpu_thread,
			      pid_t gpu_tid, void (*extra)(FILE *))
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
	if (extra)
		extra(f);

	fprintf(f, "\"threads\":[{\"name\":\"gpu-worker\",\"tid\":%d}", (int)worker_tid);
	if (gpu_thread)
		fprintf(f, ",{\"name\":\"%s\",\"tid\":%d}", gpu_thread, (int)gpu_tid);
	for (unsigned int i = 0; i < opt.synth; i++)
		fprintf(f, ",{\"name\":\"synth-%u\",\"tid\":%d}", i, (int)synth_tids[i]);
	if (uses_lock())
		fprintf(f, ",{\"name\":\"lock-holder\",\"tid\":%d}", (int)holder_tid);
	if (uses_prep())
		fprintf(f, ",{\"name\":\"heap-prep\",\"tid\":%d}", (int)prep_tid);
	if (uses_hog())
		fprintf(f, ",{\"name\":\"hog\",\"tid\":%d}", (int)hog_tid);
	if (uses_chain())
		fprintf(f,
			",{\"name\":\"janitor\",\"tid\":%d},{\"name\":\"synth-peer\",\"tid\":%d}",
			(int)janitor_tid, (int)peer_tid);
	if (uses_notifier())
		fprintf(f, ",{\"name\":\"notifier\",\"tid\":%d}", (int)notifier_tid);
	fprintf(f, "],");

	fprintf(f, "\"injections\":[");
	for (unsigned int i = 0; i < n_delays; i++) {
		const struct planned_delay *in = &delays[i];

		fprintf(f,
			"%s{\"gap_after_unit\":%u,\"category\":\"%s\",\"kind\":\"%s\","
			"\"start_ns\":%" PRIu64 ",\"end_ns\":%" PRIu64 ",\"amount_ns\":%" PRIu64
			",\"run_delay_ns\":%" PRIu64,
			i ? "," : "", in->gap, delay_categories[in->kind], delay_names[in->kind],
			in->start_ns, in->end_ns, in->amount_ns, in->run_delay_ns);
		if (in->pre_run_delay_ns)
			fprintf(f, ",\"pre_run_delay_ns\":%" PRIu64, in->pre_run_delay_ns);
		if (in->gpu_late_ns)
			fprintf(f, ",\"gpu_late_ns\":%" PRIu64, in->gpu_late_ns);
		if (in->target_ns)
			fprintf(f, ",\"target_ns\":%" PRIu64, in->target_ns);
		if (in->bytes)
			fprintf(f, ",\"bytes\":%" PRIu64, in->bytes);
		/* Other scenarios measure only the worker (worker_tid above). */
		if (uses_chain() || uses_notifier())
			fprintf(f, ",\"tid\":%d,\"on_critical_path\":%s", (int)in->tid,
				in->off_path ? "false" : "true");
		fprintf(f, "}");
	}
	fprintf(f, "],\"skipped\":[");
	for (unsigned int i = 0; i < n_skips; i++)
		fprintf(f,
			"%s{\"gap_after_unit\":%u,\"kind\":\"%s\",\"reason\":\"heap-prep not "
			"ready\"}",
			i ? "," : "", skips[i].gap, delay_names[skips[i].kind]);
	fprintf(f, "],\"units_log\":[");
	for (unsigned int u = 0; u < opt.units; u++)
		fprintf(f,
			"%s{\"unit\":%u,\"gpu_first_start_ns\":%" PRIu64
			",\"gpu_last_end_ns\":%" PRIu64 "}",
			u ? "," : "", u, units_log[u].first_start_ns, units_log[u].last_end_ns);
	fprintf(f, "]}\n");
}

DELAY_STATIC void print_verbose(void)
{
	uint64_t max_gap = 0, sum_gap = 0;
	unsigned int plain = 0;

	for (unsigned int i = 0; i < n_delays; i++) {
		const struct planned_delay *in = &delays[i];

		fprintf(stderr,
			"%s: gap %u %-6s window %7.3f ms amount %7.3f ms "
			"run_delay %6.3f ms",
			delay_prog, in->gap, delay_names[in->kind],
			(in->end_ns - in->start_ns) / 1e6, in->amount_ns / 1e6,
			in->run_delay_ns / 1e6);
		if (in->target_ns)
			fprintf(stderr, " target %.3f ms", in->target_ns / 1e6);
		if (in->bytes)
			fprintf(stderr, " (%" PRIu64 " MiB round)", in->bytes >> 20);
		if (uses_chain())
			fprintf(stderr, " tid %d%s", (int)in->tid,
				in->off_path ? " (off path)" : "");
		fprintf(stderr, "\n");
	}
	for (unsigned int u = 0; u + 1 < opt.units; u++) {
		uint64_t g = units_log[u + 1].first_start_ns - units_log[u].last_end_ns;

		fprintf(stderr, "%s: gap %u: GPU idle %.3f ms\n", delay_prog, u, g / 1e6);
		if (g > max_gap)
			max_gap = g;
		sum_gap += g;
		plain++;
	}
	if (plain)
		fprintf(stderr, "%s: GPU idle between units: mean %.3f ms, max %.3f ms\n",
			delay_prog, sum_gap / 1e6 / plain, max_gap / 1e6);
	if (uses_prep())
		fprintf(stderr, "%s: heap-prep: %u chunks ran past the GPU's end (max %.3f ms)\n",
			delay_prog, prep.overruns, prep.overrun_max_ns / 1e6);
	for (unsigned int r = 0; uses_prep() && r < prep.rounds && r <= opt.units; r++) {
		if (uses_chain())
			fprintf(stderr,
				"%s: heap-prep round %u trim+munmap %u+%u MiB: CPU %.1f ms over "
				"%.1f ms%s\n",
				delay_prog, r, trim_round_mb, munmap_round_mb,
				prep.log[r].cpu_ns / 1e6, prep.log[r].wall_ns / 1e6,
				r == 0 ? " (before unit 0)" : "");
		else
			fprintf(stderr,
				"%s: heap-prep round %u %-6s %u MiB: CPU %.1f ms over %.1f ms%s\n",
				delay_prog, r, delay_names[prep.log[r].kind],
				prep.log[r].kind == DELAY_TRIM ? trim_round_mb : munmap_round_mb,
				prep.log[r].cpu_ns / 1e6, prep.log[r].wall_ns / 1e6,
				r == 0 ? " (before unit 0)" : "");
	}
	fprintf(stderr, "%s: channel waits after unit 0: %u\n", delay_prog, chan_waits);
}

DELAY_STATIC void delay_report_warnings(void)
{
	if (n_skips)
		fprintf(stderr,
			"%s: warning: %u allocator delays skipped: heap-prep "
			"could not prepare a round within the GPU time before their gap; "
			"lower --trim-mb/--munmap-mb or lengthen units (--kernel-us)\n",
			delay_prog, n_skips);
	/* chain: every gap waits on the channel, by design. */
	if (chan_waits && !uses_chain())
		fprintf(stderr,
			"%s: warning: the worker waited on the channel %u times: "
			"synthesis fell behind and those gaps hold a wait\n",
			delay_prog, chan_waits);
}

#endif /* DELAY_COMMON_H */
