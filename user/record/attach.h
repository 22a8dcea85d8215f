/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * attach.h: attaching uprobes, USDT probes and per-thread CPU-sample events
 * to a traced process, object by object as its maps show them.
 */
#ifndef GT_ATTACH_H
#define GT_ATTACH_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct gaptrace_bpf;
struct capture_buf;

/* A function gaptrace times with an entry/return uprobe pair. */
struct probe_func {
	uint32_t id;	/* attach cookie and the capture's PROBES func_id */
	char *name;	/* symbol */
	char *module;	/* basename prefix the object must have ("libc.so"), "" = any */
	char *category; /* what time inside counts as; "unit" marks a work unit */
};

struct probe_table {
	struct probe_func *funcs;
	size_t n, cap;
};

/* Adds a probe; returns its id. */
uint32_t probe_table__add(struct probe_table *t, const char *name, const char *module,
			  const char *category);
/* Adds gaptrace's default rare-heavy-function probes (libc allocator/io, libcuda). */
void probe_table__add_defaults(struct probe_table *t);
/*
 * Parses a --probe SPEC: "FUNC", "LIB:FUNC", either with "=CATEGORY".
 * Returns 0 or -1 with a message in err.
 */
int probe_table__parse(struct probe_table *t, const char *spec, char *err, size_t errlen);
/* Appends the table's entries from index first on as PROBES entries. */
void probe_table__emit(const struct probe_table *t, size_t first, struct capture_buf *b);
void probe_table__free(struct probe_table *t);

struct attacher;

/*
 * Spec ids libbpf may hand out (the size of its __bpf_usdt_specs map, set
 * before the load; libbpf's default is 256): one per distinct argument
 * string of an attached probe, given back when its link is destroyed.
 */
#define GT_USDT_SPEC_IDS 4096u
/* Most sites of one probe in one object attached (one multi-uprobe link). */
#define GT_USDT_MAX_SITES 16384u
/*
 * Most links held at once (live, or released and not yet closed): each is
 * an fd or two, and the stop closes every one (~70 ms each for a single
 * uprobe): an object found past it is not probed (warned, counted).
 */
#define GT_MAX_LINKS 704u

/*
 * Before the BPF load: loads the multi-uprobe programs only where the
 * kernel takes multi-uprobe links (the single-uprobe ones always).  True
 * for multi.
 */
bool attacher__choose_programs(struct gaptrace_bpf *skel);
struct attacher *attacher__new(struct gaptrace_bpf *skel, const struct probe_table *probes);
/*
 * Reads pid's maps and attaches USDT programs and uprobes to every object
 * not seen before for that pid.  Returns the number of new attachments, or
 * -errno (-ENOENT: the process is gone).
 */
int attacher__scan(struct attacher *a, pid_t pid);
/* Attaches to one binary before it runs (launch mode, before exec). */
int attacher__attach_object(struct attacher *a, pid_t pid, const char *path);
/*
 * Launch mode: attaches to the object of gaptrace's own maps whose name
 * starts with prefix ("libc.so"), which the command will map too after exec,
 * so its probes are in place before the command's first call.
 */
int attacher__attach_like_self(struct attacher *a, pid_t pid, const char *prefix);
/*
 * Attaches the probe table's entries from index first on (added after the
 * attacher started) to every object pid maps now, those scanned before
 * included; an object not scanned yet gets everything, as attacher__scan
 * would give it.  Returns the number of uprobes attached, or -errno.
 */
int attacher__attach_probes_from(struct attacher *a, pid_t pid, size_t first);
/*
 * Opens a cpu-clock sampling event (inherit=1, so threads the thread creates
 * are sampled too) on each thread of pid not yet covered.  period_ns 0: off.
 * Returns the number of threads covered, or -errno.
 */
int attacher__sample_threads(struct attacher *a, pid_t pid, uint64_t period_ns);
/*
 * Opens one cpu-clock sampling event per online CPU, for every task there;
 * on_sample keeps the target's.  Nothing is added to the target's context
 * switches (a per-thread event is scheduled in and out with its thread), at
 * the price of period_ns ticks on every CPU, busy or idle, while recording.
 * Returns the number of CPUs covered, or -errno when none.
 */
int attacher__sample_cpus(struct attacher *a, uint64_t period_ns);
/*
 * Forgets the objects scanned in pid, which exited: a process that gets its
 * pid later is scanned afresh.  Its links are released on other threads
 * (their fds and USDT spec ids), so storms of short processes do not pile
 * them up.
 */
void attacher__forget(struct attacher *a, pid_t pid);
/* Counters for the summary. */
unsigned attacher__usdt_links(const struct attacher *a);
unsigned attacher__uprobe_links(const struct attacher *a);
unsigned attacher__sample_events(const struct attacher *a);
/* True once a USDT probe of the given name was attached anywhere. */
bool attacher__has_usdt(const struct attacher *a, const char *name);
/* True once the target has no live thread left (it exited mid-attach). */
bool attacher__target_gone(struct attacher *a, pid_t pid);
/*
 * The uprobes attached (enter and return), comma-separated in table order,
 * as many as fit; returns the length written.
 */
size_t attacher__attached_names(const struct attacher *a, char *buf, size_t len);
/*
 * Removes every probe and sampler: the samplers at once, the links on a
 * thread (the kernel waits a grace period per uprobe link, one after the
 * other, ~50-70 ms each here) while the recorder finishes its capture;
 * attacher__free waits for it.  The counts and the attached list stay
 * readable for the capture's END block.
 */
void attacher__detach(struct attacher *a);
/*
 * While attacher__detach's links close: how many are closed of how many;
 * false once they all are (attacher__free then returns at once).
 */
bool attacher__detach_pending(struct attacher *a, size_t *closed, size_t *total);
/*
 * fn is called after each object a scan attached to, with the objects and
 * the USDT and uprobe links so far: for a status line during a long attach.
 */
void attacher__on_progress(struct attacher *a,
			   void (*fn)(void *ctx, size_t objects, unsigned links), void *ctx);
/*
 * The GPU activity probes (USDT gpu_launch, gpu_op, gpu_batch) off or on,
 * in every object seen so far and those found later; the rest stays.  Off
 * releases their links (on the reapers' threads: no wait here), which
 * zeroes the probes' semaphores, so the CUPTI library disables its activity
 * records and hands CUPTI back; on attaches them again.  Returns the links
 * changed, or -errno when none of several could be attached.
 */
int attacher__gpu_gate(struct attacher *a, bool on);
/* Waits for the detach, frees everything. NULL-safe. */
void attacher__free(struct attacher *a);

#endif /* GT_ATTACH_H */
