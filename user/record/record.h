/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * record.h: the recorder as a library: `gaptrace record`'s steps
 * (cli/cmd_record.c), and for `gaptrace monitor` the same engine as
 * `gaptrace record -p` writing a sequence of segments (each a complete
 * capture) instead of one file (record_seg.c).
 */
#ifndef GT_RECORD_H
#define GT_RECORD_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct recorder;

/*
 * record's options (record_opts.c; `gaptrace help --options record`), also
 * what the monitor's --record-opt takes.
 */
extern const struct option record_options[];

/*
 * `gaptrace record`, step by step.  new: the options parsed (NULL after a
 * one-line usage error; --help exits).  open: the checks, the target, the
 * BPF side, the capture's first blocks (argv goes into its header).
 * attach: scheduler, probes, samplers; the launched command let go.  Each
 * 0, or -1 after a one-line error.  run: until -d, Ctrl-C or the target's
 * exit (0 or -errno).  stop: detach, drain and the capture's last blocks
 * (returns e, or the write error).  summary: the closing lines, the exit
 * code.  detach_wait: the links still closing.  free: NULL-safe, after any
 * step.
 */
struct recorder *record__new(int argc, char **argv);
int record__open(struct recorder *r, int argc, char **argv);
int record__attach(struct recorder *r);
int record__run(struct recorder *r);
int record__stop(struct recorder *r, int e);
int record__summary(struct recorder *r, int err);
void record__detach_wait(struct recorder *r);
void record__free(struct recorder *r);

struct recorder_info {
	pid_t pid;
	uint64_t lost;		 /* events lost so far (ring buffer, stacks, maps, skipped runs) */
	uint64_t rb_bytes;	 /* bytes read from the ring buffer so far */
	uint64_t records;	 /* capture records written so far */
	const char *gpu_source;	 /* the GPU source now ("usdt", "cupti", ...) */
	const char *stop_reason; /* why the last recorder__run returned, "" while running */
};

/*
 * Attaches to process pid as `gaptrace record -p PID` would, with the extra
 * record options opts[0..nopts) (e.g. "--gpu", "none"), and writes the
 * first segment to path; argv goes into each segment's header.  NULL after
 * a one-line error (2: bad options in *usage).
 */
struct recorder *recorder__attach(pid_t pid, const char *path, char *const *opts, int nopts,
				  int argc, char **argv, bool *usage);
/*
 * The run loop: returns when tick returns true, on SIGINT/SIGTERM, on a
 * write error or when the target and every process followed from it have
 * exited (recorder_info's stop_reason says which).  0 or -errno.
 */
int recorder__run(struct recorder *r, bool (*tick)(struct recorder *r, uint64_t now, void *ctx),
		  void *ctx);
/*
 * Ends the current segment now, complete (intervals still open closed at
 * its end, its own loss counters, END), and continues into a new one at
 * path.  0, or -1 after a one-line error (the old segment then goes on).
 */
int recorder__rotate(struct recorder *r, const char *path);
/*
 * The GPU activity probes off or on (attacher__gpu_gate): with them off the
 * CUPTI library collects nothing and costs nothing.  Returns the links
 * changed or -errno.
 */
int recorder__gpu_gate(struct recorder *r, bool on);
/*
 * What the END of the current segment says its GPU source was, in place of
 * the recorder's own (e.g. "none (GPU collection off in this window)");
 * NULL: the recorder's.  Applies to the segment that the next rotate or the
 * stop ends.
 */
void recorder__gpu_window(struct recorder *r, const char *source);
/* Detaches everything and ends the current segment; the exit code of `record`. */
int recorder__stop(struct recorder *r);
void recorder__info(const struct recorder *r, struct recorder_info *out);
/* Frees the recorder (NULL-safe); after recorder__stop, nothing is left attached. */
void recorder__free(struct recorder *r);

#endif /* GT_RECORD_H */
