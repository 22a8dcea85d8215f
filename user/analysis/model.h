/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * model.h: the analysis's internal picture of a capture (GPU ops, launches,
 * units, threads with their in-gap intervals, stacks and symbols).  Private to
 * the analysis files: model_pass1.c and model_pass2.c load it, model.c looks
 * things up in it, gaps.c finds gaps, attrib.c explains them.
 */
#ifndef GT_MODEL_H
#define GT_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/result.h"
#include "support/u64map.h"
#include "support/util.h"

struct capture;

struct m_op {
	uint64_t start, end, op_id;
	uint32_t device, stream, pid, tid;
	uint16_t kind;
	bool host; /* synthesised from libcuda calls (host-side view), not a GPU record */
};

struct m_launch {
	uint64_t ts;
	uint32_t pid, tid;
};

enum m_unit_source { UNIT_USDT = 0, UNIT_FUNC, UNIT_NVTX };

struct m_unit {
	uint64_t id;
	uint64_t begin, end;
	uint32_t tid;
	uint8_t source; /* enum m_unit_source */
};

/* An NVTX range (CUPTI marker) and the interned names. */
struct m_range {
	uint64_t start, end;
	uint32_t tid, name_id;
};

struct m_peer {
	uint32_t pid, tid;
	char comm[16];
};

struct m_window {
	uint64_t from, to;
};

struct m_off {
	uint64_t off, wake, on;
	uint32_t flags, state, waker_tid;
	uint32_t waker_pid; /* the waker's process (0: none or unknown) */
	int32_t syscall, ustack, kstack;
	int32_t waker_syscall; /* -1: none (interrupt or unknown) */
	uint64_t args[4];      /* gt_offcpu.args; args[3] is 0 in older captures */
};

struct m_sample {
	uint64_t ts;
	int32_t syscall, ustack, kstack;
	uint32_t flags;
	uint64_t pcount; /* gt_sample.pcount; 0: not recorded */
};

struct m_call {
	uint64_t enter, exit;
	/* Largest exit of this call and the ones before it (sorted by enter):
	 * nested calls make exit unsorted, this is what a binary search can use. */
	uint64_t max_exit;
	int cat;
	uint32_t func_id;
};

/* Sets max_exit over calls sorted by enter. */
void model__calls_index(struct m_call *c, size_t n);

struct m_thread {
	uint32_t pid, tid;
	char comm[16];
	uint64_t born; /* 0: existed when tracing began */
	uint64_t died; /* 0: alive at the end */
	bool known;    /* any record names it */
	struct m_off *offs;
	size_t noffs, offs_cap;
	struct m_sample *samples;
	size_t nsamples, samples_cap;
	struct m_call *calls;
	size_t ncalls, calls_cap;
	/* an_opts.keep_all: every interval and call of the capture, for exporters. */
	struct m_off *all_offs;
	size_t nall_offs, all_offs_cap;
	struct m_call *all_calls;
	size_t nall_calls, all_calls_cap;
};

struct m_stack {
	int32_t id;
	uint32_t pid;
	bool kernel;
	uint16_t nr;
	uint64_t *ips;
	int cls; /* STK_* bits (analysis/classify.h), -1: not computed */
};

struct m_sym {
	char *name;
	char *module;
	uint32_t off;
};

/* The calls inlined at an address (INLINES), innermost first. */
struct m_inline {
	char **names;
	uint8_t n;
};

struct m_probe {
	uint32_t func_id;
	char *name;
	int cat;     /* gt_cat, or -1 */
	bool unit;   /* category "unit" */
	bool launch; /* libcuda launch/copy entry point (host-side GPU view) */
	bool sync;   /* libcuda synchronize: GPU work done when it returns */
};

/* A libcuda launch or sync call, for the host-side GPU view. */
struct m_hostcall {
	uint64_t enter, exit;
	uint32_t pid, tid;
	bool sync;
};

struct model {
	struct an_opts opts;
	uint64_t start, end;
	uint64_t sample_period;
	uint64_t nsamples_total; /* sample records in the whole capture */
	uint64_t sampling_from;	 /* samplers attached (before: no samples expected) */

	struct m_op *ops;
	size_t nops, ops_cap;
	struct u64map launch_idx; /* op_id -> index in launches */
	struct m_launch *launches;
	size_t nlaunches, launches_cap;

	struct m_unit *units;
	size_t nunits, units_cap;
	struct u64map unit_idx; /* USDT unit_id -> index */
	bool have_usdt_units;

	struct m_window *losses; /* merged windows with lost timing records */
	size_t nlosses, losses_cap;
	struct m_window *windows; /* merged gap windows (pass 2 filter) */
	size_t nwindows, windows_cap;

	struct m_thread *threads;
	size_t nthreads, threads_cap;
	struct u64map thread_idx; /* tid -> index */

	struct m_stack *stacks;
	size_t nstacks, stacks_cap;
	struct u64map stack_idx; /* id -> index */
	struct m_sym *syms;
	size_t nsyms, syms_cap;
	struct u64map sym_idx; /* hash(pid, ip) -> index */
	struct m_inline *inls;
	size_t ninls, inls_cap;
	struct u64map inl_idx; /* model__inline_key -> index */

	struct m_probe *probes;
	size_t nprobes, probes_cap;

	struct m_range *ranges;
	size_t nranges, ranges_cap;

	/* Untraced wakers named by the recorder (GT_REC_PEER), by tid. */
	struct m_peer *peers;
	size_t npeers, peers_cap;
	struct u64map name_idx; /* name_id -> index in names */
	char **names;
	bool *name_alloc; /* names[i] is a CUDA allocation call (api_name_is_alloc) */
	size_t nnames, names_cap, name_alloc_cap;

	/*
	 * Streaming pass 2 (model_pass2.c).  reach[i]: the earliest time a
	 * CPU-side record of the i-th block of records (EVENTS, GPU_OPS)
	 * reaches back to, far ones
	 * left out; far: those records (u64 size, the record, padding to 8),
	 * which reach back more than M_FAR_NS before their own timestamp.
	 */
	uint64_t *reach;
	size_t nreach, reach_cap;
	uint8_t *far;
	size_t far_len, far_cap;
	size_t pass2_new;  /* records kept since the last explain step */
	size_t pass2_held; /* records kept now */

	/*
	 * Futex words by (pid, address): the FUTEX_WAIT_* values waited on over
	 * the whole capture, FUTEX_SEEN_* bits (classify.c), so that a counter
	 * passing through 2 is not taken for a contended lock.
	 */
	struct u64map futex_seen;

	struct m_hostcall *hostcalls;
	size_t nhostcalls, hostcalls_cap;
	bool host_view;		 /* GPU ops were synthesised from libcuda calls */
	uint64_t host_view_from; /* ... for launches from then on (after the last GPU record) */
};

/* op_id of the GPU ops synthesised from libcuda calls (host-side view). */
#define M_HOST_OP_ID0 (1ULL << 62)

/*
 * A CPU-side record (off-CPU interval, sample, probe call, CUDA API call)
 * that reaches back more than this before its own timestamp is "far": pass
 * 1 keeps it aside, so that the blocks after it need not hold gaps open.
 */
#define M_FAR_NS (1000 * NSEC_PER_MSEC)
/* Samples stand for CPU time up to this long before them (model_pass2.c). */
#define M_SAMPLE_REACH_NS (200 * NSEC_PER_MSEC)

/*
 * Whether pass 2 may keep rec; if so, the earliest time it covers in *from
 * (0 when unknown) and whether it is far.  Both passes decide with it.  rec
 * comes from the capture reader, which dropped records too short for their
 * type (gt_rec_min_size).
 */
bool model__cpu_reach(const void *rec, size_t size, uint64_t *from, bool *far);

/*
 * Pass 1, every off-CPU record (at least GT_OFFCPU_V1_SIZE bytes): notes in
 * futex_seen the value a futex wait waited on (classify.c, which reads it).
 */
struct gt_offcpu;
void classify__note_futex(struct model *m, const struct gt_offcpu *o);

/* Lookups (model.c). */
struct m_thread *model__thread(struct model *m, uint32_t tid, bool create);
uint64_t model__sym_key(uint32_t pid, uint64_t ip); /* key of sym_idx */
const struct m_sym *model__sym(const struct model *m, uint32_t pid, uint64_t ip);
uint64_t model__inline_key(uint32_t pid, uint64_t ip, bool caller); /* key of inl_idx */
/* The inline chain of ip as a stack's first frame or (caller) a later one, or NULL. */
const struct m_inline *model__inline(const struct model *m, uint32_t pid, uint64_t ip, bool caller);
const struct m_stack *model__stack(const struct model *m, int32_t id);
const struct m_probe *model__probe(const struct model *m, uint32_t func_id);
const struct m_launch *model__launch(const struct model *m, uint64_t op_id);
void model__free(struct model *m);

/* Appends a copy of msg to r->warnings. */
void model__add_warning(struct an_result *r, const char *msg);
/* Sorts and merges overlapping windows in place; returns how many are left. */
size_t model__merge_windows(struct m_window *w, size_t n);
/* Index of the first of m's merged gap windows that ends at or after t (nwindows: none). */
size_t model__window_after(const struct model *m, uint64_t t);

/*
 * The loader.  Pass 1 (model_pass1.c) reads everything but the CPU-side
 * records and sets the capture window in m and r; pass 2 (model_pass2.c)
 * keeps the CPU-side records that overlap r's gaps (all of them with
 * an_opts.keep_all) and sorts them per thread.
 */
int model__pass1(struct capture *c, struct model *m, struct an_result *r);
/*
 * Pass 2 calls ready(horizon) now and then, with the records of every gap
 * window that ends before horizon loaded and sorted: ready explains those
 * gaps and calls model__drop_before.  The caller makes the last call, with
 * UINT64_MAX, after pass 2 returns.  ready may be NULL: everything is kept.
 */
void model__pass2(struct capture *c, struct model *m, struct an_result *r,
		  void (*ready)(struct model *m, struct an_result *r, uint64_t horizon, void *ctx),
		  void *ctx);
/* Forgets the CPU-side records that end before t (no window of a gap left needs them). */
void model__drop_before(struct model *m, uint64_t t);

#endif /* GT_MODEL_H */
