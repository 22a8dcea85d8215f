/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * record_priv.h: what the files of `gaptrace record` share: its options, the
 * recorder's state and the functions that cross files (record.c opens,
 * attaches and runs the recording, record_stop.c ends it, record_opts.c
 * parses the command line, target.c finds and launches the target,
 * record_drain.c closes what is open at the end,
 * record_sink.c (public) translates records, record_meta.c writes what the
 * capture says about the recording and turns BPF counters into LOSS records,
 * follow.c follows the target's descendants, record_summary.c tells the
 * operator how it went).  Included only by user/record/record*.c and target.c.
 */
#ifndef GT_RECORD_PRIV_H
#define GT_RECORD_PRIV_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "capture/capture.h"
#include "record/attach.h"
#include "record/gpu.h"
#include "record/record.h"
#include "record/record_sink.h"

struct gaptrace_bpf;
struct ring_buffer;
struct syms_cache;
struct fpless;
struct cfimap;

struct record_opts {
	pid_t pid;
	char **cmd;
	const char *output;
	uint64_t duration_ns;
	uint64_t sample_period_ns;
	bool cpu_samplers; /* --sampler cpu (default): one event per CPU, not per thread */
	uint64_t ringbuf_bytes;
	uint64_t min_gap_ns;
	bool stacks;
	bool dwarf;	       /* --stacks dwarf */
	bool cfi_walk;	       /* --stacks cfi (the default): the kernel walks with CFI rows */
	uint32_t stack_bytes;  /* --stack-bytes */
	uint64_t dwarf_min_ns; /* --dwarf-min */
	uint32_t dwarf_sample_bytes; /* --dwarf-samples: snapshot size, 0 off */
	uint32_t cfi_sample_bytes;   /* --cfi-samples: snapshot size in fp-less code, 0 off */
	uint32_t cfi_rate;	     /* --cfi-rate: such snapshots per second at most, 0 no limit */
	uint64_t cfi_budget;	     /* --cfi-budget: bytes of kernel memory for all CFI tables */
	bool cfi_all;		     /* --cfi-objects all: not only the system libraries */
	bool default_probes;
	bool follow_children;
	int progress; /* -1 auto (tty), 0 off, 1 on */
	struct probe_table probes;
	struct gpu_setup gpu;
	const char *cupti_lib;
	const char *summary_json; /* --summary-json FILE: the closing summary as JSON */
};

struct recorder {
	struct record_opts *o;
	struct gaptrace_bpf *skel;
	struct ring_buffer *rb;
	struct attacher *att;
	struct capture_writer *w;
	struct syms_cache *syms;
	pid_t pid;
	int pidfd;
	pid_t child; /* launch mode */
	int go_fd;   /* write end: releases the child to exec */
	int ncpus;
	uint64_t start_ns, end_ns;
	struct record_sink sink; /* BPF record -> capture translation */
	uint64_t stats[GT_STAT_MAX];
	int nice;		 /* 0, raised to -10 by poll_stats while the ring buffer fills */
	int user_nice;		 /* gaptrace's nice when started (a launched command's) */
	uint64_t slice_start_ns; /* rb_drain: this round's start, records so far */
	uint32_t slice_n;
	bool rb_behind; /* the last round stopped at RB_SLICE_NS with data left */
	uint64_t last_stats_ns, last_flush_ns, last_progress_ns, last_rescan_ns;
	uint64_t events_at_progress;
	uint64_t last_step_ns; /* record__step: the last attach/detach status line */
	uint64_t lost_loss_records;
	uint64_t misses;	   /* BPF program runs skipped by the kernel */
	uint64_t sampling_from_ns; /* when the samplers were attached */
	bool rescan;
	uint64_t rescan_at_ns;	   /* an extra rescan due then (after an exec), 0 none */
	unsigned cupti_links_seen; /* USDT links when the CUPTI library was last looked for */
	bool progress;
	bool target_gone;
	uint64_t
	    target_gone_ns; /* when the target was seen gone (its followed processes may run on) */
	int target_status;  /* launch mode: wait status */
	const char *exe;    /* launch mode: the resolved command */
	const char *stop_reason;
	struct follow_proc *procs; /* follow.c: the target and the descendants followed */
	size_t nprocs, procs_cap;
	struct unwinder *unw;	/* --stacks dwarf, --cfi-samples */
	struct fpless *fpless;	/* --cfi-samples */
	struct cfimap *cfi;	/* --stacks cfi */
	struct fp_audit *fpa;	/* --stacks fp */
	uint64_t unw_cpu_ns;	/* unwinding CPU time at the last stats poll */
	uint32_t cfi_limit_min; /* the lowest per-window budget the recorder set (0: never cut) */
	bool cfi_adapting;	/* past the first stats poll (record_meta.c: cfi_adapt) */
	int status_fd;		/* launch mode: the child's exec status, until released */
	char exe_buf[PATH_MAX]; /* launch mode: the resolved command (exe) */
	uint64_t rb_bytes;	/* bytes read from the ring buffer */
	/*
	 * Called once per run-loop round (record_seg.c, for the monitor): true
	 * stops the loop.  NULL for `gaptrace record`.
	 */
	bool (*tick)(struct recorder *r, uint64_t now, void *ctx);
	void *tick_ctx;
	/* Counters at the current segment's start (record_seg.c; 0 for `record`). */
	uint64_t stats_base[GT_STAT_MAX];
	uint64_t misses_base, events_base;
};

/*
 * The steps of record.h for record_seg.c: start is record__open then
 * record__attach (0 or -1 after a one-line error); finish is record__stop,
 * record__summary and record__detach_wait (the exit code); cleanup frees
 * everything start made, after any failure (record_stop.c).
 */
int record__start(struct recorder *r, int argc, char **argv);
int record__finish(struct recorder *r, int e);
void record__cleanup(struct recorder *r);
/* Reads the ring buffer until it is empty. */
void record__drain_all(struct recorder *r);
/* record.c, for record_stop.c: one drain round (waiting timeout_ms); the scheduler detach. */
int record__rb_drain(struct recorder *r, int timeout_ms);
void record__detach_sched(struct recorder *r);

/* record_opts.c: parses argv into o (defaults first): 0 or -1 after a one-line error. */
int record__parse_opts(int argc, char **argv, struct record_opts *o);

/* target.c */
int record__resolve_tgid(struct recorder *r, pid_t pid);
int record__open_pidfd(pid_t pid);
int record__resolve_cmd(const char *cmd, char *out, size_t len);
int record__launch_child(struct recorder *r, char **cmd, const struct gpu_setup *gpu);
int record__release_child(struct recorder *r, int status_fd, const char *cmd);
void record__emit_threads(struct recorder *r, pid_t pid);
void record__emit_mappings(struct recorder *r, pid_t pid);
bool record__target_exited(struct recorder *r);
/* Starts the frame-pointer audit (--stacks fp) with the traced executable. */
void record__audit_exe(struct recorder *r);

/*
 * follow.c: note marks pid (the target, a child it forked, a process that
 * exec'd or dlopened) for a probe rescan at once, adding it to the list;
 * existing traces and scans the target's live descendants (record -p),
 * returning how many; rescan scans the marked processes (all: every one);
 * emit_mappings writes the followed processes' mappings; traced tells whether
 * the BPF side traces pid now.
 */
void record__follow_note(struct recorder *r, pid_t pid);
int record__follow_existing(struct recorder *r);
void record__follow_rescan(struct recorder *r, bool all);
/* Attaches the BPF notice of new executable mappings (a dlopen): a rescan at once. */
void record__follow_attach_hook(struct recorder *r);
void record__follow_emit_mappings(struct recorder *r);
bool record__follow_traced(struct recorder *r, pid_t pid);
/* How many followed processes other than the target still have a live thread. */
size_t record__follow_alive(struct recorder *r);
/* Sets or clears pid's bit in the BPF side's traced set; false when pid is out of its range. */
bool record__follow_set_traced(struct recorder *r, pid_t pid, bool on);

/* record_drain.c: closes the intervals and calls still open at r->end_ns. */
void record__drain_open_intervals(struct recorder *r);

/* record_meta.c */
void record__header_kv(struct recorder *r, struct capture_buf *kv, int argc, char **argv);
size_t record__kv_strings(const struct capture_buf *kv, const char **out, size_t max);
void record__write_counters(struct recorder *r, uint32_t type);
void record__report_cpu(struct recorder *r);
void record__report_unwind(struct recorder *r);
/* BPF counter increases since the last poll become LOSS records; raises the reader's nice. */
void record__poll_stats(struct recorder *r, uint64_t now);

/*
 * record_summary.c: the live status line (final: the whole recording's
 * rate); step writes a status line while attaching or detaching (at most 4/s
 * unless force; only with the status line on), step_done clears it;
 * summary prints the closing lines, writes --summary-json and returns the
 * exit status (exit_code: record's failure 1, else a launched command's
 * status, 128 + signal when killed).
 */
void record__progress(struct recorder *r, uint64_t now, bool final);
void record__step(struct recorder *r, bool force, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void record__step_done(struct recorder *r);
int record__exit_code(const struct recorder *r, int err);
int record__summary(struct recorder *r, int err);

#endif /* GT_RECORD_PRIV_H */
