/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * result.h: the analysis's vocabulary (categories, gap kinds, options) and
 * what it produces (gaps, their pieces and holders, devices, threads).  Plain
 * types that the model and the pipeline (analysis.h) both use; result.c holds
 * the names and the option defaults.
 */
#ifndef GT_RESULT_H
#define GT_RESULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum gt_cat {
	GT_CAT_SCHED = 0,
	GT_CAT_LOCK,
	GT_CAT_ALLOC,
	GT_CAT_WAIT,
	GT_CAT_IO,
	GT_CAT_SLEEP,
	GT_CAT_CUDA,
	GT_CAT_CPU,
	GT_CAT_UNKNOWN,
	GT_CAT_MAX
};

/* "scheduler", "lock", "allocator", "wait", "io", "sleep", "cuda", "cpu", "unknown" */
extern const char *const gt_cat_names[GT_CAT_MAX];
/* Returns the category for a name, or -1. */
int gt_cat_parse(const char *name);

enum gt_gap_kind {
	GT_GAP_INTER = 0, /* between two work units */
	GT_GAP_INTRA,	  /* inside one work unit */
	GT_GAP_UNSCOPED,  /* a side of the gap is outside every unit */
};
extern const char *const gt_gap_kind_names[3];

enum gt_unit_mode {
	GT_UNITS_AUTO = 0, /* USDT units if any, else function units, else GPU bursts */
	GT_UNITS_USDT,
	GT_UNITS_FUNC,
	GT_UNITS_BURST,
	GT_UNITS_NVTX, /* NVTX ranges whose name matches unit_glob */
};

struct an_opts {
	uint64_t min_gap_ns;   /* default 1 ms */
	uint64_t burst_gap_ns; /* bursts: idle >= this separates units (default 10 ms) */
	enum gt_unit_mode units;
	const char *unit_func; /* GT_UNITS_FUNC: function name, NULL = any "unit" probe */
	const char *unit_glob; /* GT_UNITS_NVTX: fnmatch pattern on range names */
	unsigned max_depth;    /* critical-path hops followed (default 4) */
	bool pieces;	       /* keep every attributed piece (flame graphs, top stacks) */
	/*
	 * Also keep every off-CPU interval and call of the whole capture (not
	 * only those inside gaps) for exporters that draw per-thread state;
	 * memory then grows with the capture, so only `export` sets it.
	 * Attribution never reads those records: results are identical.
	 */
	bool keep_all;
	/*
	 * Pass 2 explains the gaps whose records are all read once it holds
	 * this many new records (0: the default, 128k); SIZE_MAX explains every
	 * gap at the end, holding all their records at once.  Results are the
	 * same either way; tests compare them.
	 */
	size_t stream_batch;
};

void an_opts__defaults(struct an_opts *o);

/* One step of a gap's critical path: thread tid explained [from_ns, to_ns). */
struct an_hop {
	uint32_t tid;
	uint32_t waker_of; /* the thread this one woke (previous hop), 0 for the first */
	uint64_t from_ns, to_ns;
	uint32_t depth;
	uint64_t by_cat[GT_CAT_MAX]; /* what this hop's own time was spent on */
	/*
	 * A thread outside the trace that woke this one (a process not
	 * followed): the path stops there.  The one behind the most waiting
	 * time; untraced_tid 0: none.  comm "" when the recorder could not
	 * name it.
	 */
	uint32_t untraced_pid, untraced_tid;
	uint64_t untraced_ns;
	char untraced_comm[16];
};

/* What an attributed piece of gap time was, for flame graphs and top stacks. */
enum an_piece_kind {
	GT_PIECE_BLOCKED = 0, /* off-CPU, blocked (stack at switch-out) */
	GT_PIECE_RUNQUEUE,    /* runnable after a wakeup */
	GT_PIECE_PREEMPTED,   /* runnable after preemption */
	GT_PIECE_SAMPLE,      /* on-CPU, split by a CPU sample (its stacks) */
	GT_PIECE_CALL,	      /* inside a uprobed function or CUDA API call */
	GT_PIECE_LAUNCH,      /* launch call to GPU start */
	GT_PIECE_LOST,	      /* a window with lost records */
	GT_PIECE_UNTRACED,    /* no records for the thread, or no launch record */
	GT_PIECE_ONCPU,	      /* on-CPU without a sample to split it */
};

struct an_piece {
	uint64_t ns;
	uint32_t gap;
	uint32_t tid;
	int32_t ustack, kstack; /* stack ids (< 0: none) */
	uint32_t func_id;	/* GT_PIECE_CALL: probe id (UINT32_MAX: CUDA API) */
	uint16_t cat;
	uint8_t kind;  /* enum an_piece_kind */
	uint8_t depth; /* critical-path hop depth (0: the critical thread) */
};

struct an_holder {
	uint32_t tid;	  /* thread that released the lock (woke the waiter) */
	uint64_t wait_ns; /* lock-wait time it ended */
	/* What the holder did while the waiter waited (its own categories). */
	uint64_t by_cat[GT_CAT_MAX];
	int32_t ustack, kstack; /* its heaviest stack meanwhile (< 0: none) */
	uint64_t stack_ns;	/* time that stack stands for */
};

struct an_gap {
	uint32_t index;
	uint32_t device;
	uint64_t start_ns, end_ns, duration_ns;
	enum gt_gap_kind kind;
	int64_t unit_before, unit_after; /* -1: none */
	uint32_t pid, tid;		 /* critical thread (0: unknown) */
	uint64_t launch_ns; /* host call that launched the first op after the gap, 0: unknown */
	uint64_t op_after;  /* op_id of that op */
	uint64_t by_cat[GT_CAT_MAX];
	struct an_hop *chain;
	size_t nchain;
	struct an_holder *holders;
	size_t nholders;
	bool lossy; /* overlaps a window with lost records */
};

struct an_device {
	uint32_t id;
	uint64_t first_ns, last_ns; /* first op start, last op end */
	uint64_t busy_ns;
	uint64_t span_ns; /* last_ns - first_ns */
	uint64_t ops;
	uint64_t gaps, gap_ns;
};

struct an_thread {
	uint32_t pid, tid;
	char comm[16];
};

struct an_clock {
	uint64_t pairs;				/* ops with a known launch */
	uint64_t violations;			/* op started before its launch call */
	int64_t min_ns, p50_ns, p99_ns, max_ns; /* start - launch */
};

struct an_result {
	/* The options it was computed with: what its printers say it used. */
	struct an_opts opts;
	char *path;
	char *comm;
	uint32_t pid;
	uint64_t start_ns, end_ns, duration_ns;
	bool clean_end; /* END block present */
	bool host_view; /* GPU busy time from libcuda uprobes: no GPU timestamps */
	bool truncated;
	uint64_t records;
	uint64_t lost_ringbuf, lost_stack, lost_map_full, lost_gpu, lost_producer;
	/* --stacks cfi: user stacks the kernel walked, and those that reached the thread's root */
	uint64_t unw_walks, unw_root;
	uint64_t gpu_rejected; /* GPU records with impossible times or counts, not used */
	uint64_t gpu_clipped;  /* GPU ops cut to the capture window */
	uint64_t sample_period_ns;
	const char *unit_source; /* "usdt", "func:NAME", "bursts >= 10 ms" ... */
	char unit_source_buf[96];
	uint64_t units;
	const char *gpu_source; /* owned */
	struct an_device *devices;
	size_t ndevices;
	struct an_gap *gaps;
	size_t ngaps;
	uint64_t totals[GT_CAT_MAX];
	uint64_t totals_kind[3][GT_CAT_MAX];
	uint64_t gaps_kind[3];
	uint64_t gap_ns_total;
	struct an_thread *threads;
	size_t nthreads;
	struct an_clock clock;
	char **warnings;
	size_t nwarnings;
	/* Pass 2: explain steps taken while reading; most CPU-side records held at once. */
	uint64_t stream_steps, stream_peak;
	struct an_piece *pieces; /* only with an_opts.pieces */
	size_t npieces;
	/* Opaque analysis state kept for outputs that need stacks (flame graphs). */
	void *model;
};

#endif /* GT_RESULT_H */
