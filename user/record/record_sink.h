/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * record_sink.h: the recorder's sink, which turns raw BPF ring-buffer records
 * into capture records.  Its dependencies (the symbolizer,
 * what to do when a process starts or execs) sit behind small callbacks, and
 * it writes through a capture writer it is given, so a test can feed it
 * hand-built records and read the capture back.
 */
#ifndef GT_RECORD_SINK_H
#define GT_RECORD_SINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/types.h>

#include "capture/capture.h"
#include "support/u64map.h"

#define RECORD_SINK_MAX_DEVICES 64 /* GPU devices counted for the live gap count */

struct capture_writer;
struct unwinder;
struct fp_audit;

struct record_sink_ops {
	/* Resolves ip of process pid (0: kernel): 0 with *name, *off, *module set, or -1. */
	int (*resolve)(void *ctx, uint32_t pid, uint64_t ip, const char **name, uint32_t *off,
		       const char **module);
	/*
	 * A TASK record announced a new process, an exec, new code mapped
	 * (a dlopen: GT_TASK_LOADED) or its leader's exit in pid; event is
	 * the record's (enum gt_task_event).
	 */
	void (*task)(void *ctx, uint32_t pid, uint32_t event);
	/*
	 * Optional, both or neither: where frame ip of user process pid lies
	 * (caller: ip is a return address), in two words kept until
	 * record_sink__finish (false: nowhere); then the functions inlined
	 * there, innermost first, into names[max].  Returns how many.
	 */
	bool (*inline_ref)(void *ctx, uint32_t pid, uint64_t ip, bool caller, uint64_t ref[2]);
	int (*inline_names)(void *ctx, const uint64_t ref[2], const char **names, int max);
	/*
	 * Optional: true when process pid is not traced, with thread tid's
	 * name in comm (GT_COMM_LEN bytes, "" if gone).  Asked once per waker.
	 */
	bool (*untraced)(void *ctx, uint32_t pid, uint32_t tid, char *comm);
};

/* A frame whose inline chain is read at the end. */
struct record_sink_inline {
	uint64_t ip;
	uint64_t ref[2];
	uint32_t pid;
	bool caller;
};

struct record_sink_cfg {
	const struct record_sink_ops *ops;
	void *ctx;		  /* passed to every op */
	struct capture_writer *w; /* where EVENTS, STACKS and SYMBOLS go */
	const char *path;	  /* the capture's name, for the write-error message */
	uint64_t min_gap_ns;	  /* gap threshold of the live gap count */
	struct unwinder *unw;	  /* --stacks dwarf, else NULL */
	struct fp_audit *fpa;	  /* --stacks fp, else NULL */
	/*
	 * The monitor's segments: keep every stack's frames so that each
	 * segment (record_sink__segment) writes again the stacks it uses.
	 */
	bool segments;
};

/*
 * An unwound snapshot waiting for its record, which follows it from the same
 * CPU (other CPUs' records may come between): keyed by tid.
 */
struct record_sink_pending {
	uint32_t tid;
	uint32_t sample; /* GT_USTACK_SAMPLE */
	uint64_t ts;	 /* off_ns, or the sample's ts */
	int32_t id;
	uint16_t nr; /* its frames */
	uint32_t pid;
	uint64_t ips[GT_STACK_DEPTH]; /* a sample's frames, for record_sink__stitch */
};

struct record_sink {
	struct record_sink_cfg cfg;
	struct u64map stack_ids;    /* BPF stack id -> capture stack id */
	struct u64map stack_frames; /* hash of (pid, kind, frames) -> capture stack id */
	struct u64map sym_keys;	    /* set: (pid, ip) pairs written */
	struct u64map inl_keys;	    /* set: (pid, ip, caller) looked up for INLINES */
	struct u64map wakers;	    /* set: waker tids asked about (ops->untraced) */
	struct u64map walks;	    /* with cfg.unw: user stack capture id -> offset << 8 | nr */
	uint64_t *walk_ips;	    /* ... in here: the frames, for record_sink__stitch */
	size_t nwalk_ips, walk_ips_cap;
	struct capture_buf stacks_buf, syms_buf, inl_buf;
	struct record_sink_inline *inl_pend; /* frames whose inline chains are read at the end */
	size_t ninl_pend, inl_pend_cap;
	struct record_sink_pending dwarf_pend[64];
	uint64_t dev_last_end[RECORD_SINK_MAX_DEVICES];
	uint64_t events;	    /* records written */
	uint64_t gpu_ops;	    /* GPU operations seen */
	uint64_t gaps;		    /* approximate live count of GPU gaps >= min_gap_ns */
	uint64_t dwarf_used;	    /* records whose ustack_id became a DWARF stack */
	uint64_t stitched;	    /* ... of them samples whose stack joins snapshot and walk */
	uint64_t stacks_resent;	    /* BPF ids made again for frames already written */
	uint64_t stacks_unresolved; /* BPF ids used with no frames seen (written as -1) */
	int write_err;		    /* first write error (-errno), 0 none */
	/* cfg.segments: capture stack id -> offset << 16 | nr in kept_ips (pid word first) */
	struct u64map kept;
	uint64_t *kept_ips;
	size_t nkept_ips, kept_ips_cap;
	struct u64map seg_stacks; /* set: stacks written into the current segment */
};

void record_sink__init(struct record_sink *s, const struct record_sink_cfg *cfg);
/*
 * Takes one raw BPF record (size bytes as read from the ring buffer); drops
 * it when shorter than its type's first layout (gt_rec_min_size).
 */
void record_sink__feed(struct record_sink *s, const void *data, size_t size);
/* Writes one capture record as it is (counted in events). */
void record_sink__put(struct record_sink *s, const void *rec, size_t size);
/* The capture stack id of a BPF stack id (DWARF ids and -1 unchanged), -1 if unknown. */
int32_t record_sink__stack_id(struct record_sink *s, int32_t id);
/* Unwinds a snapshot into a STACKS entry: its id, or -1 (needs cfg.unw). */
int32_t record_sink__dwarf_stack(struct record_sink *s, uint32_t pid, uint32_t tid,
				 const __u64 *uregs, const void *stack, size_t len);
/*
 * Joins a sample's stacks: cfi[0..n), unwound from a stack snapshot with
 * CFI (right through code without frame pointers, but only as deep as the
 * snapshot's bytes), and fp[0..m), the kernel's frame-pointer walk of the
 * same moment (deep, but lost or wrong inside such code).  Where fp's
 * frames, shifted past cfi's frames without frame pointers, agree with
 * cfi's, the result is cfi and then fp's frames beyond it, at most max in
 * out: their number, or 0 when they never agree or fp adds nothing (then
 * cfi is all there is).
 */
int record_sink__stitch(const uint64_t *cfi, int n, const uint64_t *fp, int m, uint64_t *out,
			int max);
/* Writes the pending STACKS and SYMBOLS blocks, then flushes the writer: 0 or -errno. */
int record_sink__flush(struct record_sink *s);
/*
 * Reads the inline chains of the frames noted while recording (after the
 * last record, before the last flush) into the pending INLINES entries.
 */
void record_sink__finish(struct record_sink *s);
/*
 * Continues into another capture writer w (named path), the old one flushed
 * and closed by the caller: stacks, symbols and wakers are written again
 * there as records use them (needs cfg.segments), so it reads alone.
 */
void record_sink__segment(struct record_sink *s, struct capture_writer *w, const char *path);
/* Frees the sink's buffers (safe on a zeroed sink); the writer stays open. */
void record_sink__fini(struct record_sink *s);

#endif /* GT_RECORD_SINK_H */
