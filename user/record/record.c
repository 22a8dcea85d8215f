// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * record.c: `gaptrace record` — loads the BPF side, attaches it to a live
 * process or a command it starts, drains the ring buffer into a capture file
 * (flushed every 250 ms) and stops cleanly on signal, duration or target exit.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "record/attach.h"
#include "capture/capture.h"
#include "cmds.h"
#include "gaptrace.h"
#include "gaptrace.skel.h"
#include "record/gpu.h"
#include "symbols/syms.h"
#include "record/sysprobe.h"
#include "record/unwind.h"
#include "support/util.h"

#define FLUSH_NS	   (250 * NSEC_PER_MSEC)
#define STATS_NS	   (250 * NSEC_PER_MSEC)
#define PROGRESS_NS	   (500 * NSEC_PER_MSEC)
#define RESCAN_NS	   (250 * NSEC_PER_MSEC)
#define MAX_DEVICES	   64
#define KERNEL_ADDR_MIN	   0xffff800000000000ULL
#define DWARF_SLOTS	   1024 /* threads with a snapshot slot at once (--stacks dwarf) */
#define DWARF_SAMPLE_BYTES 4096 /* snapshot per CPU sample with --dwarf-samples */

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
	bool dwarf;		     /* --stacks dwarf */
	uint32_t stack_bytes;	     /* --stack-bytes */
	uint64_t dwarf_min_ns;	     /* --dwarf-min */
	uint32_t dwarf_sample_bytes; /* --dwarf-samples: snapshot size, 0 off */
	bool default_probes;
	bool follow_children;
	int progress;	    /* -1 auto (tty), 0 off, 1 on */
	const char *attach; /* auto, tp_btf, raw_tp */
	struct probe_table probes;
	struct gpu_setup gpu;
	const char *cupti_lib;
};

/*
 * An unwound snapshot waiting for its record, which follows it from the same
 * CPU (other CPUs' records may come between): keyed by tid.
 */
struct dwarf_pending {
	uint32_t tid;
	uint32_t sample; /* GT_USTACK_SAMPLE */
	uint64_t ts;	 /* off_ns, or the sample's ts */
	int32_t id;
};

/* Open-addressing set of 64-bit keys (stack ids, (pid, ip) pairs). */
struct keyset {
	uint64_t *keys;
	size_t cap, n;
};

struct recorder {
	struct record_opts *o;
	struct gaptrace_bpf *skel;
	struct ring_buffer *rb;
	struct attacher *att;
	struct capture_writer *w;
	struct syms_cache *syms;
	const char *attach_kind;
	pid_t pid;
	int pidfd;
	pid_t child; /* launch mode */
	int go_fd;   /* write end: releases the child to exec */
	int ncpus;
	uint64_t start_ns, end_ns;
	struct keyset stack_ids, sym_keys;
	struct capture_buf stacks_buf, syms_buf;
	uint64_t stats[GT_STAT_MAX];
	int nice;		 /* 0, raised to -10 by poll_stats while the ring buffer fills */
	uint64_t slice_start_ns; /* rb_drain: this round's start, records so far */
	uint32_t slice_n;
	bool rb_behind; /* the last round stopped at RB_SLICE_NS with data left */
	uint64_t last_stats_ns, last_flush_ns, last_progress_ns, last_rescan_ns;
	uint64_t events, events_at_progress, gpu_ops, gaps;
	uint64_t lost_loss_records;
	uint64_t misses;	   /* BPF program runs skipped by the kernel */
	uint64_t sampling_from_ns; /* when the samplers were attached */
	uint64_t dev_last_end[MAX_DEVICES];
	bool rescan;
	uint64_t rescan_at_ns;	   /* an extra rescan due then (after an exec), 0 none */
	unsigned cupti_links_seen; /* USDT links when the CUPTI library was last looked for */
	bool progress;
	bool target_gone;
	int target_status; /* launch mode: wait status */
	const char *exe;   /* launch mode: the resolved command */
	int write_err;
	const char *stop_reason;
	struct unwinder *unw; /* --stacks dwarf */
	struct fp_audit *fpa; /* --stacks fp */
	struct dwarf_pending dwarf_pend[64];
	uint64_t dwarf_used; /* records whose ustack_id became a DWARF stack */
};

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static bool keyset_add(struct keyset *s, uint64_t key)
{
	size_t i;

	/* 0 marks an empty slot, so store key + 1 (keys never equal UINT64_MAX). */
	key += 1;
	if ((s->n + 1) * 2 > s->cap) {
		struct keyset ns = {.cap = s->cap ? s->cap * 2 : 1024};

		ns.keys = gt_xcalloc(ns.cap, sizeof(uint64_t));
		for (i = 0; i < s->cap; i++)
			if (s->keys[i])
				keyset_add(&ns, s->keys[i] - 1);
		free(s->keys);
		*s = ns;
	}
	for (i = gt_hash64(&key, sizeof(key), 0) & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
		if (s->keys[i] == key)
			return false;
		if (!s->keys[i]) {
			s->keys[i] = key;
			s->n++;
			return true;
		}
	}
}

static void note_symbol(struct recorder *r, uint32_t pid, uint64_t ip)
{
	const char *name = NULL, *module = NULL;
	uint32_t off = 0;
	uint64_t key = ((uint64_t)pid << 48) ^ ip;

	if (!keyset_add(&r->sym_keys, key))
		return;
	if (syms_cache__resolve(r->syms, pid, ip, &name, &off, &module))
		name = NULL;
	if (r->fpa && pid && module)
		fp_audit__object(r->fpa, pid, module, false);
	capture_buf__symbol(&r->syms_buf, ip, pid, name ? off : 0, name ? name : "",
			    module ? module : "");
}

/* Copies a new stack id out of the stack map and resolves its frames now,
 * while the process and its mappings still exist. */
static void note_stack(struct recorder *r, int32_t id, uint32_t pid)
{
	uint64_t ips[GT_STACK_DEPTH] = {};
	uint16_t nr = 0;
	bool kernel;

	/* DWARF stacks were written when their snapshot was unwound. */
	if (id < 0 || id >= GT_STACK_DWARF_BASE ||
	    !keyset_add(&r->stack_ids, (uint64_t)(uint32_t)id))
		return;
	if (bpf_map_lookup_elem(bpf_map__fd(r->skel->maps.stacks), &id, ips))
		return;
	while (nr < GT_STACK_DEPTH && ips[nr])
		nr++;
	if (!nr)
		return;
	kernel = ips[0] >= KERNEL_ADDR_MIN;
	if (!kernel && r->fpa)
		fp_audit__stack(r->fpa, nr);
	capture_buf__stack(&r->stacks_buf, id, kernel ? 0 : pid, kernel, ips, nr);
	for (uint16_t i = 0; i < nr; i++)
		note_symbol(r, kernel ? 0 : pid, ips[i]);
}

static void put_event(struct recorder *r, const void *rec, size_t size)
{
	int err = capture_writer__event(r->w, rec, size);

	if (err && !r->write_err) {
		r->write_err = err;
		gt_err("cannot write %s: %s; stopping (free disk space or choose another -o)",
		       r->o->output, strerror(-err));
	}
	r->events++;
}

/*
 * Unwinds a stack snapshot into a STACKS entry (with its symbols) and keeps
 * its id for the record it belongs to.  Fewer than two frames is no better
 * than the frame-pointer stack that record already has.
 */
static int32_t dwarf_stack(struct recorder *r, uint32_t pid, uint32_t tid, const __u64 *uregs,
			   const void *stack, size_t len)
{
	uint64_t ips[GT_STACK_DEPTH], regs[GT_UREGS_NR];
	bool fresh;
	int32_t id;
	int n;

	for (int i = 0; i < GT_UREGS_NR; i++)
		regs[i] = uregs[i];
	n = unwinder__unwind(r->unw, pid, tid, regs, stack, len, ips, GT_STACK_DEPTH);
	if (n < 2)
		return -1;
	id = unwinder__intern(r->unw, pid, ips, (uint16_t)n, &fresh);
	if (id >= 0 && fresh) {
		capture_buf__stack_flags(&r->stacks_buf, id, pid, GT_STACK_DWARF, ips, (uint16_t)n);
		for (int i = 0; i < n; i++)
			note_symbol(r, pid, ips[i]);
	}
	return id;
}

static void note_ustack(struct recorder *r, const struct gt_ustack *u, size_t size)
{
	size_t len;
	int32_t id;

	if (!r->unw || size < offsetof(struct gt_ustack, data))
		return;
	len = GT_MIN((size_t)u->stack_size, size - offsetof(struct gt_ustack, data));
	id = dwarf_stack(r, u->pid, u->tid, u->regs, u->data, len);
	if (id >= 0) {
		struct dwarf_pending *p = &r->dwarf_pend[u->tid % GT_ARRAY_SIZE(r->dwarf_pend)];

		p->tid = u->tid;
		p->sample = u->flags & GT_USTACK_SAMPLE;
		p->ts = u->off_ns;
		p->id = id;
	}
}

/* The DWARF stack id unwound for (tid, ts), or -1. */
static int32_t dwarf_take(struct recorder *r, uint32_t tid, uint64_t ts, bool sample)
{
	struct dwarf_pending *p = &r->dwarf_pend[tid % GT_ARRAY_SIZE(r->dwarf_pend)];

	if (!r->unw || p->tid != tid || p->ts != ts || !p->sample != !sample || p->id < 0)
		return -1;
	p->tid = 0;
	r->dwarf_used++;
	return p->id;
}

/* Writes a copy of rec with the s32 at field_off set to id (ring buffer data is read-only). */
static void put_patched(struct recorder *r, const void *rec, size_t size, size_t field_off,
			int32_t id)
{
	uint8_t buf[GT_CAP_MAX_RECORD];

	size = GT_MIN(size, sizeof(buf));
	memcpy(buf, rec, size);
	memcpy(buf + field_off, &id, sizeof(id));
	put_event(r, buf, size);
}

static void count_gpu_op(struct recorder *r, const struct gt_gpu_rec *g)
{
	uint64_t *last;

	if (g->kind < 1 || g->kind > 3 || g->device >= MAX_DEVICES || g->end_ns < g->start_ns)
		return;
	r->gpu_ops++;
	last = &r->dev_last_end[g->device];
	/* Approximate live count for the progress line; `report` does it exactly. */
	if (*last && g->start_ns > *last && g->start_ns - *last >= r->o->min_gap_ns)
		r->gaps++;
	if (g->end_ns > *last)
		*last = g->end_ns;
}

static void split_batch(struct recorder *r, const struct gt_gpu_batch *b, size_t size)
{
	struct gt_gpu_op op = {};
	uint32_t n = b->count, keep = GT_MIN(b->rec_size, (uint32_t)GT_GPU_REC_SIZE);

	if (size < sizeof(*b))
		return;
	if (n > GT_GPU_BATCH_MAX)
		n = GT_GPU_BATCH_MAX;
	op.hdr = b->hdr;
	op.hdr.type = GT_REC_GPU_OP;
	op.hdr.size = sizeof(op);
	op.pid = b->pid;
	op.tid = b->tid;
	for (uint32_t i = 0; i < n; i++) {
		memset(&op.rec, 0, sizeof(op.rec));
		memcpy(&op.rec, b->data + (size_t)i * GT_GPU_REC_SIZE, keep);
		put_event(r, &op, sizeof(op));
		count_gpu_op(r, &op.rec);
	}
	if (b->dropped) {
		struct gt_loss l = {
		    .hdr = {GT_REC_LOSS, sizeof(l), b->hdr.cpu, b->hdr.ts_ns},
		    .from_ns = b->hdr.ts_ns,
		    .to_ns = b->hdr.ts_ns,
		    .count = b->dropped,
		    .kind = GT_LOSS_GPU,
		};

		put_event(r, &l, sizeof(l));
	}
}

/*
 * ring_buffer__consume returns only when the ring is empty: behind producers
 * as fast as the reader (64 busy threads) it never does, and the run loop
 * (stats, lost-event records, the stop) stalls with it.  on_record ends a
 * round after RB_SLICE_NS with this code, the record itself consumed.
 */
#define RB_SLICE_OVER (-EOVERFLOW)
#define RB_SLICE_NS   (50 * NSEC_PER_MSEC)

static int rb_drain(struct recorder *r, int timeout_ms)
{
	int err;

	r->slice_start_ns = gt_now_mono_ns();
	r->slice_n = 0;
	err = timeout_ms < 0 ? ring_buffer__consume(r->rb) : ring_buffer__poll(r->rb, timeout_ms);
	if (err == RB_SLICE_OVER)
		r->rb_behind = true;
	return err == RB_SLICE_OVER ? 0 : err;
}

static void take_record(struct recorder *r, void *data, size_t size)
{
	const struct gt_hdr *h = data;

	if (size < sizeof(*h) || h->size > size || h->size < sizeof(*h))
		return;
	switch (h->type) {
	case GT_REC_OFFCPU: {
		const struct gt_offcpu *o = data;
		int32_t dw = dwarf_take(r, o->tid, o->off_ns, false);

		note_stack(r, dw >= 0 ? dw : o->ustack_id, o->pid);
		note_stack(r, o->kstack_id, 0);
		if (dw >= 0) {
			put_patched(r, data, h->size, offsetof(struct gt_offcpu, ustack_id), dw);
			return;
		}
		break;
	}
	case GT_REC_SAMPLE: {
		const struct gt_sample *s = data;
		int32_t dw = dwarf_take(r, s->tid, h->ts_ns, true);

		note_stack(r, dw >= 0 ? dw : s->ustack_id, s->pid);
		note_stack(r, s->kstack_id, 0);
		if (dw >= 0) {
			put_patched(r, data, h->size, offsetof(struct gt_sample, ustack_id), dw);
			return;
		}
		break;
	}
	case GT_REC_USTACK:
		/* Becomes a STACKS entry: the snapshot itself is not kept. */
		note_ustack(r, data, h->size);
		return;
	case GT_REC_GPU_OP:
		count_gpu_op(r, &((const struct gt_gpu_op *)data)->rec);
		break;
	case GT_REC_GPU_BATCH:
		split_batch(r, data, h->size);
		return;
	case GT_REC_NAME: {
		const struct gt_name *n = data;
		size_t len = offsetof(struct gt_name, name) + GT_MIN(n->len, GT_NAME_MAX - 1) + 1;
		struct gt_name copy;

		/* Store only the used part of the name buffer. */
		memcpy(&copy, n, GT_MIN(sizeof(copy), h->size));
		copy.hdr.size = (uint16_t)((len + 7) & ~7UL);
		put_event(r, &copy, copy.hdr.size);
		return;
	}
	case GT_REC_TASK: {
		const struct gt_task *t = data;

		if (t->event == GT_TASK_NEW_PROCESS || t->event == GT_TASK_EXEC) {
			if (t->event == GT_TASK_EXEC) {
				syms_cache__forget(r->syms, t->pid);
				if (r->unw)
					unwinder__forget(r->unw, t->pid);
			}
			r->rescan = true;
			/* The loader maps the libraries just after exec: look again soon. */
			r->rescan_at_ns = gt_now_mono_ns() + 20 * NSEC_PER_MSEC;
		}
		break;
	}
	default:
		break;
	}
	put_event(r, data, h->size);
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct recorder *r = ctx;

	take_record(r, data, size);
	if ((++r->slice_n & 255) == 0 && gt_now_mono_ns() - r->slice_start_ns >= RB_SLICE_NS)
		return RB_SLICE_OVER;
	return 0;
}

/*
 * Program runs the kernel skipped (its recursion guard, e.g. a tracepoint
 * program already running on that CPU): events that were never seen.
 */
static uint64_t read_misses(struct recorder *r)
{
	struct bpf_program *p;
	uint64_t total = 0;

	bpf_object__for_each_program(p, r->skel->obj)
	{
		struct bpf_prog_info info = {};
		uint32_t len = sizeof(info);
		int fd = bpf_program__fd(p);

		if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len))
			total += info.recursion_misses;
	}
	return total;
}

static void read_stats(struct recorder *r, uint64_t *out)
{
	uint64_t vals[r->ncpus];

	memset(out, 0, sizeof(uint64_t) * GT_STAT_MAX);
	for (uint32_t i = 0; i < GT_STAT_MAX; i++) {
		if (bpf_map_lookup_elem(bpf_map__fd(r->skel->maps.stats), &i, vals))
			continue;
		for (int c = 0; c < r->ncpus; c++)
			out[i] += vals[c];
	}
}

static void emit_loss(struct recorder *r, uint32_t kind, uint64_t count, uint64_t from, uint64_t to)
{
	struct gt_loss l = {
	    .hdr = {GT_REC_LOSS, sizeof(l), 0, to},
	    .from_ns = from,
	    .to_ns = to,
	    .count = count,
	    .kind = kind,
	};

	put_event(r, &l, sizeof(l));
	r->lost_loss_records++;
}

/* Turns counter increases into LOSS records bounded by the polling window. */
static void poll_stats(struct recorder *r, uint64_t now)
{
	uint64_t cur[GT_STAT_MAX], misses;

	read_stats(r, cur);
	if (cur[GT_STAT_RB_LOST] > r->stats[GT_STAT_RB_LOST])
		emit_loss(r, GT_LOSS_RINGBUF, cur[GT_STAT_RB_LOST] - r->stats[GT_STAT_RB_LOST],
			  r->last_stats_ns, now);
	if (cur[GT_STAT_STACK_LOST] > r->stats[GT_STAT_STACK_LOST])
		emit_loss(r, GT_LOSS_STACK, cur[GT_STAT_STACK_LOST] - r->stats[GT_STAT_STACK_LOST],
			  r->last_stats_ns, now);
	if (cur[GT_STAT_MAP_FULL] > r->stats[GT_STAT_MAP_FULL])
		emit_loss(r, GT_LOSS_MAP_FULL, cur[GT_STAT_MAP_FULL] - r->stats[GT_STAT_MAP_FULL],
			  r->last_stats_ns, now);
	/*
	 * Behind dozens of busy threads the reader's fair share is too small
	 * (64 runnable threads on 2 CPUs: 3% of a CPU at nice 0).  Once the
	 * ring fills past a quarter or loses anything, losing data is worse than
	 * taking CPU: step to nice 0, then to -10.
	 */
	if (r->nice > -10 && (cur[GT_STAT_RB_PRESSURE] > r->stats[GT_STAT_RB_PRESSURE] ||
			      cur[GT_STAT_RB_LOST] > r->stats[GT_STAT_RB_LOST])) {
		int to = r->nice > 0 ? 0 : -10;

		if (setpriority(PRIO_PROCESS, 0, to) == 0) {
			r->nice = to;
			gt_info("the ring buffer was filling behind busy threads: the recorder now "
				"runs at nice %d",
				to);
		} else {
			r->nice = -10; /* not allowed: stop trying */
		}
	}
	misses = read_misses(r);
	if (misses > r->misses)
		emit_loss(r, GT_LOSS_RINGBUF, misses - r->misses, r->last_stats_ns, now);
	r->misses = misses;
	memcpy(r->stats, cur, sizeof(cur));
	r->last_stats_ns = now;
}

static void flush_all(struct recorder *r)
{
	int err = 0;

	/* Stacks and symbols first, so every flushed event can be resolved. */
	if (r->stacks_buf.len) {
		err = capture_writer__block(r->w, GT_BLK_STACKS, r->stacks_buf.data,
					    r->stacks_buf.len);
		capture_buf__reset(&r->stacks_buf);
	}
	if (!err && r->syms_buf.len) {
		err =
		    capture_writer__block(r->w, GT_BLK_SYMBOLS, r->syms_buf.data, r->syms_buf.len);
		capture_buf__reset(&r->syms_buf);
	}
	if (!err)
		err = capture_writer__flush(r->w);
	if (err && !r->write_err) {
		r->write_err = err;
		gt_err("cannot write %s: %s; stopping (free disk space or choose another -o)",
		       r->o->output, strerror(-err));
	}
}

static void progress_line(struct recorder *r, uint64_t now, bool final)
{
	char ev[32], size[32];
	double secs = (now - r->start_ns) / 1e9;
	double dt = (now - r->last_progress_ns) / 1e9;
	double rate = dt > 0 ? (r->events - r->events_at_progress) / dt : 0;
	uint64_t lost = r->stats[GT_STAT_RB_LOST];

	if (rate >= 1e6)
		snprintf(ev, sizeof(ev), "%.1fM", rate / 1e6);
	else if (rate >= 1e3)
		snprintf(ev, sizeof(ev), "%.1fk", rate / 1e3);
	else
		snprintf(ev, sizeof(ev), "%.0f", rate);
	fprintf(stderr, "\r\033[K[gaptrace] pid %d  %.1f s  %s ev/s  lost %s%llu%s  gaps %llu  %s",
		r->pid, secs, ev, lost ? "\033[1;31m" : "", (unsigned long long)lost,
		lost ? "\033[0m" : "", (unsigned long long)r->gaps,
		gt_fmt_bytes(capture_writer__bytes(r->w), size, sizeof(size)));
	if (final)
		fputc('\n', stderr);
	fflush(stderr);
	gt_log_set_progress_active(!final);
	r->events_at_progress = r->events;
	r->last_progress_ns = now;
}

static void header_kv(struct recorder *r, struct capture_buf *kv, int argc, char **argv)
{
	char buf[4096], exe[PATH_MAX], path[64];
	struct utsname u;
	size_t off = 0;
	long n;

	uname(&u);
	capture_buf__kv(kv, "gaptrace_version", "%s", GT_VERSION);
	capture_buf__kv(kv, "host", "%s", u.nodename);
	capture_buf__kv(kv, "kernel", "%s %s", u.sysname, u.release);
	capture_buf__kv(kv, "arch", "%s", u.machine);
	for (int i = 0; i < argc && off < sizeof(buf) - 1; i++)
		off +=
		    (size_t)snprintf(buf + off, sizeof(buf) - off, "%s%s", i ? " " : "", argv[i]);
	capture_buf__kv(kv, "cmdline", "%s", buf);
	capture_buf__kv(kv, "mode", "%s", r->child ? "launch" : "attach");
	capture_buf__kv(kv, "pid", "%d", r->pid);
	snprintf(path, sizeof(path), "/proc/%d/comm", r->pid);
	if (r->o->cmd) {
		/* Still gaptrace's fork before exec: name it as exec will. */
		const char *base = strrchr(r->o->cmd[0], '/');

		capture_buf__kv(kv, "comm", "%.15s", base ? base + 1 : r->o->cmd[0]);
	} else if (gt_read_file(path, buf, sizeof(buf)) > 0) {
		buf[strcspn(buf, "\n")] = '\0';
		capture_buf__kv(kv, "comm", "%s", buf);
	}
	snprintf(path, sizeof(path), "/proc/%d/exe", r->pid);
	n = r->exe ? -1 : readlink(path, exe, sizeof(exe) - 1);
	if (r->exe) {
		capture_buf__kv(kv, "exe", "%s", r->exe);
	} else if (n > 0) {
		exe[n] = '\0';
		capture_buf__kv(kv, "exe", "%s", exe);
	}
	if (r->o->cmd) {
		off = 0;
		for (int i = 0; r->o->cmd[i] && off < sizeof(buf) - 1; i++)
			off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s%s", i ? " " : "",
						r->o->cmd[i]);
		capture_buf__kv(kv, "target_cmdline", "%s", buf);
	}
	capture_buf__kv(kv, "start_mono_ns", "%llu", (unsigned long long)r->start_ns);
	capture_buf__kv(kv, "start_real_ns", "%llu", (unsigned long long)gt_now_real_ns());
	if (gt_read_file("/proc/sys/kernel/random/boot_id", buf, sizeof(buf)) > 0) {
		buf[strcspn(buf, "\n")] = '\0';
		capture_buf__kv(kv, "boot_id", "%s", buf);
	}
	capture_buf__kv(kv, "ncpus", "%d", r->ncpus);
	capture_buf__kv(kv, "clock", "CLOCK_MONOTONIC");
	capture_buf__kv(kv, "sched_attach", "%s", r->attach_kind);
	capture_buf__kv(kv, "sample_period_ns", "%llu", (unsigned long long)r->o->sample_period_ns);
	capture_buf__kv(kv, "sampler", "%s", r->o->cpu_samplers ? "cpu" : "thread");
	capture_buf__kv(kv, "ringbuf_bytes", "%llu", (unsigned long long)r->o->ringbuf_bytes);
	capture_buf__kv(kv, "stacks", "%s", r->o->dwarf ? "dwarf" : r->o->stacks ? "fp" : "none");
	if (r->o->dwarf) {
		capture_buf__kv(kv, "stack_bytes", "%u", r->o->stack_bytes);
		capture_buf__kv(kv, "dwarf_min_ns", "%llu", (unsigned long long)r->o->dwarf_min_ns);
		capture_buf__kv(kv, "dwarf_sample_bytes", "%u", r->o->dwarf_sample_bytes);
	}
	capture_buf__kv(kv, "gpu_source", "%s", r->o->gpu.source[0] ? r->o->gpu.source : "usdt");
	if (r->o->gpu.cupti_lib)
		capture_buf__kv(kv, "cupti_lib", "%s", r->o->gpu.cupti_lib);
}

/* Splits a kv body into the string array capture_writer__open wants. */
static size_t kv_strings(const struct capture_buf *kv, const char **out, size_t max)
{
	size_t n = 0;

	for (size_t off = 0; off < kv->len && n < max;) {
		const char *s = (const char *)kv->data + off;

		out[n++] = s;
		off += strlen(s) + 1;
	}
	return n;
}

static int open_pidfd(pid_t pid);

/*
 * A thread id names its whole process; a kernel thread cannot be traced
 * (no user space, no GPU work).
 */
static int resolve_tgid(struct recorder *r, pid_t pid)
{
	char path[64], buf[4096], stat[1024], *t;
	pid_t tgid;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (gt_read_file(path, buf, sizeof(buf)) <= 0)
		return 0;
	t = strstr(buf, "\nTgid:");
	tgid = t ? (pid_t)strtol(t + 6, NULL, 10) : pid;
	/* PF_KTHREAD (0x00200000) in the 9th field of /proc/PID/stat. */
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (gt_read_file(path, stat, sizeof(stat)) > 0 && (t = strrchr(stat, ')'))) {
		unsigned long flags = 0;

		if (sscanf(t + 1, " %*c %*d %*d %*d %*d %*d %lu", &flags) == 1 &&
		    (flags & 0x00200000)) {
			gt_err("pid %d is a kernel thread: give the pid of a user-space program",
			       pid);
			return -1;
		}
	}
	if (tgid > 0 && tgid != pid) {
		gt_info("%d is a thread of process %d: tracing the whole process", pid, tgid);
		r->pid = tgid;
		r->o->pid = tgid;
	}
	return 0;
}

static int open_pidfd(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

/* Resolves a command name the way execvp would, for attaching before exec. */
static int resolve_cmd(const char *cmd, char *out, size_t len)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];

	if (strchr(cmd, '/')) {
		if (!realpath(cmd, out))
			return -errno;
		return access(out, X_OK) ? -errno : 0;
	}
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		size_t n = strcspn(path, ":");

		snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, n ? path : ".", cmd);
		if (access(buf, X_OK) == 0 && realpath(buf, out))
			return 0;
		path += n;
		if (*path == ':')
			path++;
	}
	(void)len;
	return -ENOENT;
}

/*
 * Forks the command but holds it before exec until everything is attached,
 * so its first instructions are already traced.
 */
static int launch_child(struct recorder *r, char **cmd, const struct gpu_setup *gpu)
{
	int go[2], status[2];
	pid_t pid;

	if (pipe2(go, O_CLOEXEC) || pipe2(status, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		char c;
		int e;

		close(go[1]);
		close(status[0]);
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		gpu_child_env(gpu);
		execvp(cmd[0], cmd);
		e = errno;
		if (write(status[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(status[1]);
	r->child = pid;
	r->go_fd = go[1];
	r->pid = pid;
	/* Keep the status pipe: a failed exec is reported after release. */
	return status[0];
}

static int release_child(struct recorder *r, int status_fd, const char *cmd)
{
	int e = 0;
	ssize_t n;

	if (write(r->go_fd, "g", 1) != 1)
		return -errno;
	close(r->go_fd);
	r->go_fd = -1;
	n = read(status_fd, &e, sizeof(e));
	close(status_fd);
	if (n == sizeof(e)) {
		gt_err("cannot run '%s': %s; check the command name and PATH", cmd, strerror(e));
		waitpid(r->child, NULL, 0);
		r->child = 0;
		return -e;
	}
	return 0;
}

/* The scheduler programs, each in its tp_btf and raw_tp flavour. */
struct sched_prog {
	struct bpf_program *btf, *raw;
	struct bpf_link **btf_link, **raw_link;
};

#define SCHED_PROG(s, name)                                                           \
	{                                                                             \
		(s)->progs.btf_##name, (s)->progs.raw_##name, &(s)->links.btf_##name, \
		    &(s)->links.raw_##name                                            \
	}

static size_t sched_progs(struct gaptrace_bpf *s, struct sched_prog *out)
{
	const struct sched_prog progs[] = {
	    SCHED_PROG(s, sched_switch), SCHED_PROG(s, sched_waking), SCHED_PROG(s, sched_wakeup),
	    SCHED_PROG(s, sched_fork),	 SCHED_PROG(s, sched_exit),   SCHED_PROG(s, sched_exec),
	    SCHED_PROG(s, task_rename),
	};

	memcpy(out, progs, sizeof(progs));
	return GT_ARRAY_SIZE(progs);
}

#define MAX_SCHED_PROGS 8

static int choose_sched_attach(struct recorder *r)
{
	struct sched_prog p[MAX_SCHED_PROGS];
	size_t n = sched_progs(r->skel, p);
	bool use_btf;

	if (!strcmp(r->o->attach, "tp_btf"))
		use_btf = true;
	else if (!strcmp(r->o->attach, "raw_tp"))
		use_btf = false;
	else
		use_btf = gt_have_vmlinux_btf() && gt_probe_tp_btf("sched_switch");
	for (size_t i = 0; i < n; i++) {
		bpf_program__set_autoload(p[i].btf, use_btf);
		bpf_program__set_autoload(p[i].raw, !use_btf);
	}
	r->attach_kind = use_btf ? "tp_btf" : "raw_tp";
	gt_dbg("scheduler tracepoints: %s", r->attach_kind);
	return 0;
}

static int attach_sched(struct recorder *r)
{
	bool btf = !strcmp(r->attach_kind, "tp_btf");
	struct sched_prog p[MAX_SCHED_PROGS];
	size_t n = sched_progs(r->skel, p);

	for (size_t i = 0; i < n; i++) {
		struct bpf_program *prog = btf ? p[i].btf : p[i].raw;
		struct bpf_link **link = btf ? p[i].btf_link : p[i].raw_link;

		*link = bpf_program__attach(prog);
		if (!*link) {
			int err = -errno;

			gt_err("cannot attach %s: %s; run 'gaptrace doctor'",
			       bpf_program__name(prog), strerror(errno));
			return err;
		}
	}
	return 0;
}

static void detach_sched(struct recorder *r)
{
	struct sched_prog p[MAX_SCHED_PROGS];
	size_t n = sched_progs(r->skel, p);

	for (size_t i = 0; i < n; i++) {
		bpf_link__destroy(*p[i].btf_link);
		bpf_link__destroy(*p[i].raw_link);
		*p[i].btf_link = *p[i].raw_link = NULL;
	}
}

/* Thread names as they are now; later renames arrive as TASK records. */
static void emit_threads(struct recorder *r, pid_t pid)
{
	char path[64], comm[64];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d))) {
		struct gt_task t = {.hdr = {GT_REC_TASK, sizeof(t), 0, gt_now_mono_ns()}};
		pid_t tid = (pid_t)atoi(de->d_name);
		char p2[96];

		if (tid <= 0)
			continue;
		snprintf(p2, sizeof(p2), "/proc/%d/task/%d/comm", pid, tid);
		if (gt_read_file(p2, comm, sizeof(comm)) <= 0)
			continue;
		comm[strcspn(comm, "\n")] = '\0';
		t.pid = (uint32_t)pid;
		t.tid = (uint32_t)tid;
		t.event = GT_TASK_SEEN;
		memcpy(t.comm, comm, GT_MIN(strlen(comm), sizeof(t.comm) - 1));
		put_event(r, &t, sizeof(t));
	}
	closedir(d);
}

struct mappings_ctx {
	struct capture_buf *b;
	uint32_t pid;
};

static int emit_mappings_cb(const struct syms_mapping *m, void *ctx)
{
	struct mappings_ctx *mc = ctx;

	if (m->exec)
		capture_buf__mapping(mc->b, mc->pid, m->start, m->end, m->pgoff, m->build_id,
				     m->build_id_len, m->path);
	return 0;
}

static void emit_mappings(struct recorder *r, pid_t pid)
{
	struct capture_buf b = {};
	struct mappings_ctx mc = {&b, (uint32_t)pid};

	syms_read_mappings((uint32_t)pid, emit_mappings_cb, &mc);
	if (b.len)
		capture_writer__block(r->w, GT_BLK_MAPPINGS, b.data, b.len);
	capture_buf__free(&b);
}

/* An interval still open at the end: its snapshot is still in the thread's slot. */
static void dwarf_open_interval(struct recorder *r, struct gt_offcpu *o)
{
	struct gt_ustack *u = gt_xmalloc(offsetof(struct gt_ustack, data) + r->o->stack_bytes);
	int32_t id;

	if (!bpf_map_lookup_elem(bpf_map__fd(r->skel->maps.ustack_slots), &o->tid, u) &&
	    u->off_ns == o->off_ns) {
		id = dwarf_stack(r, o->pid, o->tid, u->regs, u->data,
				 GT_MIN(u->stack_size, r->o->stack_bytes));
		if (id >= 0) {
			o->ustack_id = id;
			r->dwarf_used++;
		}
	}
	free(u);
}

/* Closes intervals still open when tracing stops, at the capture's end. */
static void drain_open_intervals(struct recorder *r)
{
	int fd = bpf_map__fd(r->skel->maps.offcpu);
	uint32_t key, next, *prev = NULL;
	struct {
		uint64_t off_ns, wake_ns;
		uint32_t state, flags, waker_pid, waker_tid;
		int32_t syscall_nr, ustack_id, kstack_id;
		int32_t waker_syscall;
		uint64_t args[3];
	} si;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		struct gt_offcpu o = {.hdr = {GT_REC_OFFCPU, sizeof(o), 0, r->end_ns}};
		char path[64], buf[512];

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &si))
			continue;
		/* The tid's thread group: from /proc, as the map is keyed by tid only. */
		snprintf(path, sizeof(path), "/proc/%u/status", key);
		o.pid = (uint32_t)r->pid;
		if (gt_read_file(path, buf, sizeof(buf)) > 0) {
			char *t = strstr(buf, "\nTgid:");

			if (t)
				o.pid = (uint32_t)strtoul(t + 6, NULL, 10);
		}
		o.tid = key;
		o.off_ns = si.off_ns;
		o.wake_ns = si.wake_ns;
		o.on_ns = r->end_ns;
		o.state = si.state;
		o.flags = si.flags | GT_OFF_PARTIAL_END;
		o.waker_pid = si.waker_pid;
		o.waker_tid = si.waker_tid;
		o.syscall_nr = si.syscall_nr;
		o.ustack_id = si.ustack_id;
		o.kstack_id = si.kstack_id;
		o.waker_syscall = si.waker_syscall;
		memcpy(o.args, si.args, sizeof(o.args));
		if (r->unw && o.off_ns && r->end_ns - o.off_ns >= r->o->dwarf_min_ns)
			dwarf_open_interval(r, &o);
		note_stack(r, o.ustack_id, o.pid);
		note_stack(r, o.kstack_id, 0);
		put_event(r, &o, sizeof(o));
	}

	fd = bpf_map__fd(r->skel->maps.calls);
	uint64_t ckey, cnext, *cprev = NULL;
	struct {
		uint64_t enter_ns, arg0;
	} cs;

	while (bpf_map_get_next_key(fd, cprev, &cnext) == 0) {
		struct gt_call c = {.hdr = {GT_REC_CALL, sizeof(c), 0, r->end_ns}};

		ckey = cnext;
		cprev = &ckey;
		if (bpf_map_lookup_elem(fd, &ckey, &cs))
			continue;
		c.pid = (uint32_t)r->pid;
		c.tid = (uint32_t)(ckey >> 32);
		c.enter_ns = cs.enter_ns;
		c.exit_ns = r->end_ns;
		c.func_id = (uint32_t)ckey;
		c.flags = GT_CALL_OPEN;
		c.arg0 = cs.arg0;
		put_event(r, &c, sizeof(c));
	}
}

static void write_counters(struct recorder *r, uint32_t type)
{
	struct capture_buf kv = {};

	capture_buf__kv(&kv, "lost.ringbuf", "%llu", (unsigned long long)r->stats[GT_STAT_RB_LOST]);
	capture_buf__kv(&kv, "lost.ringbuf.offcpu", "%llu",
			(unsigned long long)r->stats[GT_STAT_RB_LOST_OFFCPU]);
	capture_buf__kv(&kv, "lost.ringbuf.sample", "%llu",
			(unsigned long long)r->stats[GT_STAT_RB_LOST_SAMPLE]);
	capture_buf__kv(&kv, "lost.ringbuf.call", "%llu",
			(unsigned long long)r->stats[GT_STAT_RB_LOST_CALL]);
	capture_buf__kv(&kv, "lost.ringbuf.gpu", "%llu",
			(unsigned long long)r->stats[GT_STAT_RB_LOST_GPU]);
	capture_buf__kv(&kv, "lost.ringbuf.other", "%llu",
			(unsigned long long)r->stats[GT_STAT_RB_LOST_OTHER]);
	capture_buf__kv(&kv, "lost.prog_misses", "%llu", (unsigned long long)r->misses);
	capture_buf__kv(&kv, "lost.stack", "%llu",
			(unsigned long long)r->stats[GT_STAT_STACK_LOST]);
	capture_buf__kv(&kv, "lost.map_full", "%llu",
			(unsigned long long)r->stats[GT_STAT_MAP_FULL]);
	capture_buf__kv(&kv, "lost.gpu_truncated", "%llu",
			(unsigned long long)r->stats[GT_STAT_GPU_TRUNC]);
	capture_buf__kv(&kv, "bpf.events", "%llu", (unsigned long long)r->stats[GT_STAT_EVENTS]);
	capture_buf__kv(&kv, "bpf.switches", "%llu",
			(unsigned long long)r->stats[GT_STAT_SWITCHES]);
	capture_buf__kv(&kv, "bpf.switchin_missed", "%llu",
			(unsigned long long)r->stats[GT_STAT_SWITCHIN_MISSED]);
	capture_buf__kv(&kv, "bpf.stacks_reused", "%llu",
			(unsigned long long)r->stats[GT_STAT_STACK_REUSED]);
	if (r->unw) {
		struct unwind_stats us;

		unwinder__stats(r->unw, &us);
		capture_buf__kv(&kv, "dwarf.snapshots", "%llu",
				(unsigned long long)r->stats[GT_STAT_USTACK_SENT]);
		capture_buf__kv(&kv, "dwarf.bytes", "%llu",
				(unsigned long long)r->stats[GT_STAT_USTACK_BYTES]);
		capture_buf__kv(&kv, "dwarf.dropped", "%llu",
				(unsigned long long)r->stats[GT_STAT_USTACK_LOST]);
		capture_buf__kv(&kv, "dwarf.no_slot", "%llu",
				(unsigned long long)r->stats[GT_STAT_USTACK_FULL]);
		capture_buf__kv(&kv, "dwarf.unwound", "%llu",
				(unsigned long long)(us.snapshots - us.failed));
		capture_buf__kv(&kv, "dwarf.failed", "%llu", (unsigned long long)us.failed);
		capture_buf__kv(&kv, "dwarf.used", "%llu", (unsigned long long)r->dwarf_used);
		capture_buf__kv(&kv, "dwarf.unwind_cpu_ns", "%llu", (unsigned long long)us.cpu_ns);
	}
	capture_buf__kv(&kv, "records", "%llu", (unsigned long long)r->events);
	capture_buf__kv(&kv, "usdt_links", "%u", attacher__usdt_links(r->att));
	capture_buf__kv(&kv, "uprobe_links", "%u", attacher__uprobe_links(r->att));
	capture_buf__kv(&kv, "sample_events", "%u", attacher__sample_events(r->att));
	capture_buf__kv(&kv, "sampling_from_ns", "%llu", (unsigned long long)r->sampling_from_ns);
	if (type == GT_BLK_END) {
		/* The source may have changed while recording (CUPTI stepped aside). */
		capture_buf__kv(&kv, "gpu_source", "%s",
				r->o->gpu.source[0] ? r->o->gpu.source : "usdt");
		capture_buf__kv(&kv, "end_mono_ns", "%llu", (unsigned long long)r->end_ns);
		capture_buf__kv(&kv, "stop_reason", "%s", r->stop_reason ? r->stop_reason : "");
		if (r->target_gone && r->child && WIFEXITED(r->target_status))
			capture_buf__kv(&kv, "target_exit_status", "%d",
					WEXITSTATUS(r->target_status));
	}
	capture_writer__block(r->w, type, kv.data, kv.len);
	capture_buf__free(&kv);
}

static bool target_exited(struct recorder *r)
{
	struct pollfd p = {.fd = r->pidfd, .events = POLLIN};

	if (r->pidfd < 0 || poll(&p, 1, 0) <= 0)
		return false;
	if (r->child) {
		if (waitpid(r->child, &r->target_status, WNOHANG) != r->child)
			return false;
	}
	return true;
}

/*
 * The CUPTI library steps aside when CUPTI refuses it (another subscriber such
 * as Nsight, an unsupported device, no memory for buffers).  Seen through its
 * exported status: from then on GPU activity comes from libcuda uprobes, and
 * the capture says so (a second PROBES block, gpu_source in END).
 */
static void check_cupti(struct recorder *r)
{
	struct capture_buf b = {};
	size_t first = r->o->probes.n;
	unsigned links = attacher__usdt_links(r->att);
	char why[200];
	int n;

	/*
	 * Until the library is found, look only when new USDT probes were
	 * attached (its gpu_batch among them): not a maps walk every round.
	 */
	if (!r->o->gpu.status_addr && links == r->cupti_links_seen)
		return;
	r->cupti_links_seen = links;
	if (gpu_cupti_refused(&r->o->gpu, r->pid, why, sizeof(why)) != 1)
		return;
	gpu_fall_back(&r->o->gpu, &r->o->probes, why);
	n = attacher__attach_probes_from(r->att, r->pid, first);
	gpu_fallback_ready(&r->o->gpu, r->pid);
	probe_table__emit(&r->o->probes, first, &b);
	if (b.len)
		capture_writer__block(r->w, GT_BLK_PROBES, b.data, b.len);
	capture_buf__free(&b);
	if (n > 0)
		gt_warn("the CUPTI library in pid %d stepped aside (%s): from now on GPU busy time "
			"is the host-side view from %d libcuda uprobes",
			r->pid, why, n);
	else
		gt_warn("the CUPTI library in pid %d stepped aside (%s), and no libcuda launch "
			"entry point could be probed: no GPU activity will be recorded",
			r->pid, why);
}

static int run_loop(struct recorder *r)
{
	uint64_t now;
	bool due;

	for (;;) {
		int timeout_ms = 100, err;

		if (r->rescan_at_ns) {
			uint64_t t = gt_now_mono_ns();

			timeout_ms =
			    t >= r->rescan_at_ns
				? 0
				: (int)GT_MIN((r->rescan_at_ns - t) / NSEC_PER_MSEC + 1, 100);
		}
		if (r->rb_behind)
			timeout_ms = 0; /* the last round was cut short: more is waiting */
		r->rb_behind = false;
		err = rb_drain(r, timeout_ms);

		/*
		 * Records sent without a wakeup are not announced to epoll: take
		 * them every round too, so they are written (and dwarf snapshots
		 * unwound, while the process lives) within ~100 ms.
		 */
		if (err >= 0)
			err = r->rb_behind ? 0 : rb_drain(r, -1);
		if (err < 0 && err != -EINTR) {
			gt_err("reading the ring buffer failed: %s", strerror(-err));
			return err;
		}
		now = gt_now_mono_ns();
		if (now - r->last_stats_ns >= STATS_NS)
			poll_stats(r, now);
		if (now - r->last_flush_ns >= FLUSH_NS) {
			flush_all(r);
			r->last_flush_ns = now;
		}
		due = r->rescan_at_ns && now >= r->rescan_at_ns;
		if (r->rescan || due || now - r->last_rescan_ns >= RESCAN_NS) {
			if (due)
				r->rescan_at_ns = 0;
			if (attacher__scan(r->att, r->pid) < 0 && !r->target_gone)
				gt_dbg("rescan of pid %d failed", r->pid);
			if (r->unw && !r->target_gone)
				unwinder__prepare(r->unw, (uint32_t)r->pid);
			if (r->o->gpu.injected && !r->o->gpu.uprobes && !r->target_gone)
				check_cupti(r);
			r->rescan = false;
			r->last_rescan_ns = now;
		}
		if (r->progress && now - r->last_progress_ns >= PROGRESS_NS)
			progress_line(r, now, false);
		if (r->write_err) {
			r->stop_reason = "write-error";
			return r->write_err;
		}
		if (stop_signal) {
			r->stop_reason = stop_signal == SIGINT ? "SIGINT" : "SIGTERM";
			return 0;
		}
		if (r->o->duration_ns && now - r->start_ns >= r->o->duration_ns) {
			r->stop_reason = "duration";
			return 0;
		}
		if (target_exited(r)) {
			r->target_gone = true;
			r->stop_reason = "target-exit";
			return 0;
		}
	}
}

/* Frame-pointer audit of an fp recording starts with the traced executable. */
static void audit_exe(struct recorder *r)
{
	char path[64], exe[PATH_MAX];
	ssize_t n;

	r->fpa = fp_audit__new();
	if (r->exe) {
		fp_audit__object(r->fpa, (uint32_t)r->pid, r->exe, true);
		return;
	}
	snprintf(path, sizeof(path), "/proc/%d/exe", r->pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		fp_audit__object(r->fpa, (uint32_t)r->pid, exe, true);
	}
}

/* What recording cost gaptrace itself, and --stacks dwarf's share of it. */
static void report_cpu(struct recorder *r)
{
	struct rusage ru;
	double user, sys, secs = (double)(r->end_ns - r->start_ns) / 1e9;

	if (getrusage(RUSAGE_SELF, &ru))
		return;
	user = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
	sys = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	if (r->unw) {
		struct unwind_stats us;
		char size[32];
		uint64_t n;

		unwinder__stats(r->unw, &us);
		n = r->stats[GT_STAT_USTACK_SENT];
		gt_info("recorder CPU %.2f s user + %.2f s system (%.1f%% of one CPU); dwarf: "
			"%llu snapshots (%s, %llu B each in the ring buffer), %llu unwound (%.0f "
			"us each), %llu dropped, %llu without a slot",
			user, sys, secs > 0 ? 100.0 * (user + sys) / secs : 0.0,
			(unsigned long long)n,
			gt_fmt_bytes(r->stats[GT_STAT_USTACK_BYTES], size, sizeof(size)),
			(unsigned long long)(n ? offsetof(struct gt_ustack, data) +
						     r->stats[GT_STAT_USTACK_BYTES] / n
					       : 0),
			(unsigned long long)(us.snapshots - us.failed),
			us.snapshots ? (double)us.cpu_ns / 1e3 / (double)us.snapshots : 0.0,
			(unsigned long long)r->stats[GT_STAT_USTACK_LOST],
			(unsigned long long)r->stats[GT_STAT_USTACK_FULL]);
		return;
	}
	gt_info("recorder CPU %.2f s user + %.2f s system (%.1f%% of one CPU)", user, sys,
		secs > 0 ? 100.0 * (user + sys) / secs : 0.0);
}

/*
 * CUPTI hands over activity records in buffers, up to about a second after
 * the kernels ran: keep the USDT probes a little longer after the CPU side
 * stopped, so the last gaps are closed by real GPU records.  The analysis
 * ignores GPU work that started after end_ns.
 */
#define GPU_GRACE_NS (1200 * NSEC_PER_MSEC)

static void gpu_grace(struct recorder *r)
{
	uint64_t t0 = gt_now_mono_ns();

	while (gt_now_mono_ns() - t0 < GPU_GRACE_NS && !target_exited(r))
		if (rb_drain(r, 50) < 0 && errno != EINTR)
			break;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: gaptrace record (-p PID | -- COMMAND [ARG...]) [options]\n"
		"\n"
		"Records why a GPU program's threads were not running: off-CPU intervals\n"
		"(blocked, run-queue, preempted, with syscall and waker), CPU samples,\n"
		"uprobes on rare heavy functions and the gaptrace USDT probes (GPU activity,\n"
		"work units).  Stops on Ctrl-C, SIGTERM, --duration or when the target exits.\n"
		"\n"
		"Target:\n"
		"  -p, --pid PID           attach to a running process (and its threads)\n"
		"  -- COMMAND [ARG...]     start COMMAND and trace it from its first instruction\n"
		"\n"
		"Options:\n"
		"  -o, --output FILE       capture file (default gaptrace.gtcap; an existing\n"
		"                          file is kept as FILE.old)\n"
		"  -d, --duration DUR      stop after DUR (e.g. 30s, 2m)\n"
		"  -F, --sample-period DUR CPU sample period while a traced thread runs\n"
		"                          (default 250us: 4 kHz splits millisecond gaps;\n"
		"                          0 = off)\n"
		"      --sampler cpu|thread\n"
		"                          cpu (default): one cpu-clock event per CPU, kept\n"
		"                          for the target in BPF: nothing added to its context\n"
		"                          switches, but every CPU ticks at -F while recording;\n"
		"                          thread: one event per target thread (inherited),\n"
		"                          no ticks elsewhere, ~8 us more per context switch\n"
		"      --probe [LIB:]FUNC[=CATEGORY]\n"
		"                          also time FUNC with a uprobe pair (category default\n"
		"                          cpu); repeatable.  Keep it off hot paths: each call\n"
		"                          costs ~5 us.\n"
		"      --unit func:FUNC    treat each call of FUNC as a work unit\n"
		"      --no-default-probes skip the default probes (malloc_trim, munmap, fsync,\n"
		"                          fdatasync, CUDA alloc/free/synchronize)\n"
		"      --stacks fp|dwarf|none\n"
		"                          user stacks (default fp: frame pointers, walked in\n"
		"                          the kernel; dwarf: for binaries built without frame\n"
		"                          pointers: registers and --stack-bytes of stack are\n"
		"                          copied at each switch-out and unwound with DWARF CFI\n"
		"                          by gaptrace for intervals >= --dwarf-min; none)\n"
		"      --no-stacks         same as --stacks none\n"
		"      --stack-bytes SIZE  stack copied per dwarf snapshot (default 8K, at most\n"
		"                          16K); deeper frames are lost\n"
		"      --dwarf-min DUR     unwind only off-CPU intervals this long (default 1ms)\n"
		"      --dwarf-samples     dwarf stacks for CPU samples too (4K snapshot each)\n"
		"      --no-follow         do not trace processes the target forks\n"
		"      --ringbuf-size SIZE BPF ring buffer size (power of 2; default 64M when\n"
		"                          the CUPTI library may be used, else 16M)\n"
		"      --min-gap DUR       gap threshold for the live gap count (default 1ms)\n"
		"      --gpu auto|inject|uprobe|none\n"
		"                          GPU activity source (default auto): inject = the\n"
		"                          CUPTI library (launch: CUDA_INJECTION64_PATH; -p:\n"
		"                          loaded into the running process); uprobe = libcuda\n"
		"                          launch/sync uprobes, a host-side view; none = only\n"
		"                          the program's own gaptrace USDT probes.  auto and\n"
		"                          inject fall back to uprobe when the library is\n"
		"                          missing, cannot be injected, or CUPTI refuses it\n"
		"                          (Nsight attached): the report says which was used\n"
		"      --cupti-lib PATH    libgaptrace-cupti.so to use (default: next to the\n"
		"                          gaptrace binary, then /usr/local/lib/gaptrace)\n"
		"      --attach auto|tp_btf|raw_tp\n"
		"                          scheduler tracepoint flavour (default auto)\n"
		"      --progress, --no-progress\n"
		"                          force the live status line on/off (default: on when\n"
		"                          stderr is a terminal)\n"
		"  -v, --verbose           more detail (twice: libbpf debug output)\n"
		"  -h, --help              this help\n"
		"\n"
		"Needs root (CAP_BPF + CAP_PERFMON).  Example:\n"
		"  sudo gaptrace record -p $(pidof prover) -d 60s -o prover.gtcap\n"
		"  gaptrace report prover.gtcap\n");
}

enum {
	OPT_PROBE = 256,
	OPT_UNIT,
	OPT_NO_DEFAULT,
	OPT_NO_STACKS,
	OPT_STACKS,
	OPT_STACK_BYTES,
	OPT_DWARF_MIN,
	OPT_DWARF_SAMPLES,
	OPT_NO_FOLLOW,
	OPT_RINGBUF,
	OPT_MIN_GAP,
	OPT_ATTACH,
	OPT_GPU,
	OPT_CUPTI_LIB,
	OPT_PROGRESS,
	OPT_NO_PROGRESS,
	OPT_SAMPLER,
};

static int parse_opts(int argc, char **argv, struct record_opts *o)
{
	static const struct option longopts[] = {
	    {"pid", required_argument, NULL, 'p'},
	    {"output", required_argument, NULL, 'o'},
	    {"duration", required_argument, NULL, 'd'},
	    {"sample-period", required_argument, NULL, 'F'},
	    {"sampler", required_argument, NULL, OPT_SAMPLER},
	    {"probe", required_argument, NULL, OPT_PROBE},
	    {"unit", required_argument, NULL, OPT_UNIT},
	    {"no-default-probes", no_argument, NULL, OPT_NO_DEFAULT},
	    {"no-stacks", no_argument, NULL, OPT_NO_STACKS},
	    {"stacks", required_argument, NULL, OPT_STACKS},
	    {"stack-bytes", required_argument, NULL, OPT_STACK_BYTES},
	    {"dwarf-min", required_argument, NULL, OPT_DWARF_MIN},
	    {"dwarf-samples", no_argument, NULL, OPT_DWARF_SAMPLES},
	    {"no-follow", no_argument, NULL, OPT_NO_FOLLOW},
	    {"ringbuf-size", required_argument, NULL, OPT_RINGBUF},
	    {"min-gap", required_argument, NULL, OPT_MIN_GAP},
	    {"attach", required_argument, NULL, OPT_ATTACH},
	    {"gpu", required_argument, NULL, OPT_GPU},
	    {"cupti-lib", required_argument, NULL, OPT_CUPTI_LIB},
	    {"progress", no_argument, NULL, OPT_PROGRESS},
	    {"no-progress", no_argument, NULL, OPT_NO_PROGRESS},
	    {"verbose", no_argument, NULL, 'v'},
	    {"help", no_argument, NULL, 'h'},
	    {},
	};
	char err[256];
	int c;

	o->output = "gaptrace.gtcap";
	/* 4 kHz of each thread's own CPU time: fine enough to split millisecond
	 * gaps; measured cost on the workload 0.3-1.2% (tools/bench). */
	o->sample_period_ns = 250 * NSEC_PER_USEC;
	o->cpu_samplers = true;
	o->ringbuf_bytes = 0; /* auto: 64M when CUPTI may be used, else 16M */
	o->min_gap_ns = NSEC_PER_MSEC;
	o->stacks = true;
	o->stack_bytes = 8192;
	o->dwarf_min_ns = NSEC_PER_MSEC;
	o->default_probes = true;
	o->follow_children = true;
	o->progress = -1;
	o->attach = "auto";
	optind = 1;
	while ((c = getopt_long(argc, argv, "+p:o:d:F:vh", longopts, NULL)) != -1) {
		uint64_t num;

		switch (c) {
		case 'p':
			if (gt_parse_uint(optarg, 1, INT32_MAX, &num)) {
				gt_err("bad pid '%s': give a process id, e.g. -p $(pidof NAME)",
				       optarg);
				return -1;
			}
			o->pid = (pid_t)num;
			break;
		case 'o':
			o->output = optarg;
			break;
		case 'd':
			if (gt_parse_duration(optarg, &o->duration_ns) || !o->duration_ns) {
				gt_err("bad --duration '%s': use e.g. 10s, 500ms, 2m", optarg);
				return -1;
			}
			break;
		case 'F':
			if (gt_parse_duration(optarg, &o->sample_period_ns) ||
			    (o->sample_period_ns && o->sample_period_ns < 100 * NSEC_PER_USEC)) {
				gt_err("bad --sample-period '%s': use 0 (off) or at least 100us, "
				       "e.g. 1ms",
				       optarg);
				return -1;
			}
			break;
		case OPT_SAMPLER:
			if (strcmp(optarg, "cpu") && strcmp(optarg, "thread")) {
				gt_err("bad --sampler '%s': use cpu or thread", optarg);
				return -1;
			}
			o->cpu_samplers = !strcmp(optarg, "cpu");
			break;
		case OPT_PROBE:
			if (probe_table__parse(&o->probes, optarg, err, sizeof(err))) {
				gt_err("%s", err);
				return -1;
			}
			break;
		case OPT_UNIT:
			if (strncmp(optarg, "func:", 5) || !optarg[5]) {
				gt_err("bad --unit '%s': record takes func:FUNC (USDT units are "
				       "always recorded)",
				       optarg);
				return -1;
			}
			probe_table__add(&o->probes, optarg + 5, "", "unit");
			break;
		case OPT_NO_DEFAULT:
			o->default_probes = false;
			break;
		case OPT_NO_STACKS:
			o->stacks = false;
			o->dwarf = false;
			break;
		case OPT_STACKS:
			if (strcmp(optarg, "fp") && strcmp(optarg, "dwarf") &&
			    strcmp(optarg, "none")) {
				gt_err("bad --stacks '%s': use fp, dwarf or none", optarg);
				return -1;
			}
			o->stacks = strcmp(optarg, "none") != 0;
			o->dwarf = !strcmp(optarg, "dwarf");
			break;
		case OPT_STACK_BYTES: {
			uint64_t v;

			if (gt_parse_size(optarg, &v) || v < 512 || v > GT_USTACK_MAX) {
				gt_err("bad --stack-bytes '%s': use 512 to %uK, e.g. 8K", optarg,
				       GT_USTACK_MAX / 1024);
				return -1;
			}
			o->stack_bytes = (uint32_t)v;
			break;
		}
		case OPT_DWARF_MIN:
			if (gt_parse_duration(optarg, &o->dwarf_min_ns)) {
				gt_err("bad --dwarf-min '%s': use e.g. 1ms, 200us", optarg);
				return -1;
			}
			break;
		case OPT_DWARF_SAMPLES:
			o->dwarf_sample_bytes = DWARF_SAMPLE_BYTES;
			break;
		case OPT_NO_FOLLOW:
			o->follow_children = false;
			break;
		case OPT_RINGBUF:
			if (gt_parse_size(optarg, &o->ringbuf_bytes) || o->ringbuf_bytes < 4096 ||
			    (o->ringbuf_bytes & (o->ringbuf_bytes - 1)) ||
			    o->ringbuf_bytes > (1ULL << 30)) {
				gt_err("bad --ringbuf-size '%s': use a power of two from 4K to 1G, "
				       "e.g. 16M",
				       optarg);
				return -1;
			}
			break;
		case OPT_MIN_GAP:
			if (gt_parse_duration(optarg, &o->min_gap_ns)) {
				gt_err("bad --min-gap '%s': use e.g. 1ms", optarg);
				return -1;
			}
			break;
		case OPT_GPU:
			if (gpu_mode_parse(optarg, &o->gpu.mode)) {
				gt_err("bad --gpu '%s': use auto, inject, uprobe or none", optarg);
				return -1;
			}
			break;
		case OPT_CUPTI_LIB:
			o->cupti_lib = optarg;
			break;
		case OPT_ATTACH:
			if (strcmp(optarg, "auto") && strcmp(optarg, "tp_btf") &&
			    strcmp(optarg, "raw_tp")) {
				gt_err("bad --attach '%s': use auto, tp_btf or raw_tp", optarg);
				return -1;
			}
			o->attach = optarg;
			break;
		case OPT_PROGRESS:
			o->progress = 1;
			break;
		case OPT_NO_PROGRESS:
			o->progress = 0;
			break;
		case 'v':
			gt_verbose++;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			gt_err("bad option; see 'gaptrace record --help'");
			return -1;
		}
	}
	if (optind < argc)
		o->cmd = &argv[optind];
	if (o->dwarf_sample_bytes && !o->dwarf) {
		gt_err("--dwarf-samples needs --stacks dwarf");
		return -1;
	}
	o->dwarf_sample_bytes = GT_MIN(o->dwarf_sample_bytes, o->stack_bytes);
	if (!o->pid == !o->cmd) {
		gt_err(o->pid ? "give either -p PID or -- COMMAND, not both"
			      : "nothing to trace: give -p PID or -- COMMAND (see --help)");
		return -1;
	}
	return 0;
}

static int setup_bpf(struct recorder *r)
{
	struct record_opts *o = r->o;
	int err;

	r->skel = gaptrace_bpf__open();
	if (!r->skel) {
		gt_err("cannot open the BPF object: %s", strerror(errno));
		return -errno;
	}
	r->skel->rodata->cfg_ustacks = o->stacks;
	r->skel->rodata->cfg_kstacks = o->stacks;
	r->skel->rodata->cfg_follow_children = o->follow_children;
	r->skel->rodata->cfg_wakeup_bytes = o->ringbuf_bytes / 4;
	bpf_map__set_max_entries(r->skel->maps.events, (uint32_t)o->ringbuf_bytes);
	/* Snapshot maps sized to --stack-bytes; a token size when dwarf is off. */
	r->skel->rodata->cfg_dwarf_bytes = o->dwarf ? o->stack_bytes : 0;
	r->skel->rodata->cfg_dwarf_sample_bytes = o->dwarf ? o->dwarf_sample_bytes : 0;
	r->skel->rodata->cfg_dwarf_min_ns = o->dwarf_min_ns;
	bpf_map__set_value_size(r->skel->maps.ustack_slots,
				offsetof(struct gt_ustack, data) + (o->dwarf ? o->stack_bytes : 8));
	bpf_map__set_value_size(r->skel->maps.ustack_scratch,
				offsetof(struct gt_ustack, data) + (o->dwarf ? o->stack_bytes : 8));
	bpf_map__set_max_entries(r->skel->maps.ustack_slots, o->dwarf ? DWARF_SLOTS : 1);
	choose_sched_attach(r);
	err = gaptrace_bpf__load(r->skel);
	if (err) {
		gt_err("cannot load the BPF programs (%s): run 'gaptrace doctor'%s", strerror(-err),
		       gt_verbose ? "" : ", or -v for the verifier log");
		return err;
	}
	return 0;
}

int cmd_record(int argc, char **argv)
{
	struct record_opts o = {};
	struct recorder r = {.o = &o, .pidfd = -1, .go_fd = -1};
	struct capture_buf kv = {}, probes = {};
	const char *kvs[64];
	char err[512], exe[PATH_MAX];
	int status_fd = -1, ret = GT_EXIT_FAIL, e;
	uint8_t one = 1;
	struct sigaction sa = {.sa_handler = on_signal};

	if (parse_opts(argc, argv, &o)) {
		probe_table__free(&o.probes);
		return GT_EXIT_USAGE;
	}
	if (gt_check_privileges(err, sizeof(err)) || gt_check_pid_namespace(err, sizeof(err))) {
		gt_err("%s", err);
		goto cleanup;
	}
	gt_libbpf_logging();
	if (o.default_probes)
		probe_table__add_defaults(&o.probes);
	r.ncpus = libbpf_num_possible_cpus();
	if (r.ncpus <= 0)
		r.ncpus = 1;

	if (o.pid) {
		r.pid = o.pid;
		if (kill(o.pid, 0) && errno == ESRCH) {
			gt_err("pid %d does not exist: check it with 'ps -p %d'", o.pid, o.pid);
			goto cleanup;
		}
		if (o.pid == getpid()) {
			gt_err("pid %d is gaptrace itself: give the target's pid", o.pid);
			goto cleanup;
		}
		if (resolve_tgid(&r, o.pid))
			goto cleanup;
		/* A pidfd tells when the process exits (a recycled pid cannot fool it). */
		r.pidfd = open_pidfd(r.pid);
		if (r.pidfd < 0) {
			if (errno == ESRCH)
				gt_err("pid %d does not exist: check it with 'ps -p %d'", r.pid,
				       r.pid);
			else
				gt_err("cannot watch pid %d: %s", r.pid, strerror(errno));
			goto cleanup;
		}
	} else {
		e = resolve_cmd(o.cmd[0], exe, sizeof(exe));
		r.exe = exe;
		if (e) {
			gt_err("cannot run '%s': %s; check the command name and PATH", o.cmd[0],
			       strerror(-e));
			goto cleanup;
		}
	}

	if (!gt_have_uprobe_pmu()) {
		bool now = false;

		/* libbpf then creates uprobes through tracefs's uprobe_events. */
		if (gt_ensure_tracefs(&now) == 0 && now)
			gt_info("mounted tracefs at /sys/kernel/tracing (needed for uprobes "
				"on this kernel)");
	}
	o.gpu.cupti_lib = gpu_find_cupti_lib(o.cupti_lib);
	if (o.cupti_lib && !o.gpu.cupti_lib) {
		gt_err("cannot use --cupti-lib %s: %s", o.cupti_lib, strerror(errno));
		goto cleanup;
	}
	/*
	 * CUPTI delivers GPU records in bursts of ~100 B per op at up to 150k
	 * ops/s, and the recorder stalls for a second or more while it loads a
	 * large library's symbols (PyTorch: 16k events lost with 16M on the
	 * H200).  64M rides that out; without CUPTI 16M is plenty.
	 */
	if (!o.ringbuf_bytes)
		o.ringbuf_bytes =
		    o.gpu.cupti_lib && o.gpu.mode != GPU_NONE && o.gpu.mode != GPU_UPROBE
			? 64 << 20
			: 16 << 20;
	if (setup_bpf(&r))
		goto cleanup;
	/* Before the header is written: it records which GPU source was used. */
	if (o.cmd)
		gpu_prepare_launch(&o.gpu, &o.probes);
	else
		gpu_prepare_attach(&o.gpu, r.pid, &o.probes);

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (o.cmd) {
		status_fd = launch_child(&r, o.cmd, &o.gpu);
		if (status_fd < 0) {
			gt_err("cannot start '%s': %s", o.cmd[0], strerror(-status_fd));
			goto cleanup;
		}
		r.pidfd = open_pidfd(r.pid);
	}
	if (bpf_map_update_elem(bpf_map__fd(r.skel->maps.targets), &(uint32_t){(uint32_t)r.pid},
				&one, BPF_ANY)) {
		gt_err("cannot register pid %d with the BPF side: %s", r.pid, strerror(errno));
		goto cleanup;
	}

	r.syms = syms_cache__new();
	if (o.dwarf)
		r.unw = unwinder__new();
	else if (o.stacks)
		audit_exe(&r);
	r.att = attacher__new(r.skel, &o.probes);
	r.start_ns = gt_now_mono_ns();
	header_kv(&r, &kv, argc, argv);
	r.w = capture_writer__open(o.output, kvs, kv_strings(&kv, kvs, GT_ARRAY_SIZE(kvs)), err,
				   sizeof(err));
	if (!r.w) {
		gt_err("%s", err);
		goto cleanup;
	}
	probe_table__emit(&o.probes, 0, &probes);
	if (probes.len)
		capture_writer__block(r.w, GT_BLK_PROBES, probes.data, probes.len);

	r.rb = ring_buffer__new(bpf_map__fd(r.skel->maps.events), on_record, &r, NULL);
	if (!r.rb) {
		gt_err("cannot open the ring buffer: %s", strerror(errno));
		goto cleanup;
	}
	/* Scheduler first: from here on every switch of the target is seen. */
	if (attach_sched(&r))
		goto cleanup;
	if (o.cmd) {
		attacher__attach_object(r.att, r.pid, exe);
		attacher__attach_like_self(r.att, r.pid, "libc.so");
	} else
		attacher__scan(r.att, r.pid);
	r.sampling_from_ns = gt_now_mono_ns();
	if (o.cpu_samplers) {
		int n = attacher__sample_cpus(r.att, o.sample_period_ns);

		if (n < 0) {
			gt_err("cannot open a cpu-clock event on any CPU: %s; try --sampler thread "
			       "or -F 0",
			       strerror(-n));
			goto cleanup;
		}
	} else if (attacher__sample_threads(r.att, r.pid, o.sample_period_ns) < 0 && o.pid) {
		gt_err("pid %d exited while gaptrace was attaching", r.pid);
		goto cleanup;
	}
	if (!o.cmd) {
		emit_threads(&r, r.pid);
		emit_mappings(&r, r.pid);
	}
	r.last_stats_ns = r.last_flush_ns = r.last_progress_ns = r.last_rescan_ns = r.start_ns;
	r.progress = o.progress == 1 || (o.progress == -1 && isatty(STDERR_FILENO));
	if (o.cmd && release_child(&r, status_fd, o.cmd[0]))
		goto cleanup;
	status_fd = -1;
	if (o.cmd) {
		/* Libraries appear only after exec: scan again soon. */
		r.last_rescan_ns = r.start_ns - RESCAN_NS + 20 * NSEC_PER_MSEC;
	}
	gt_info("recording pid %d (%s, %u USDT, %u uprobes, %u samplers; GPU: %s) to %s%s", r.pid,
		r.attach_kind, attacher__usdt_links(r.att), attacher__uprobe_links(r.att),
		attacher__sample_events(r.att), o.gpu.source, o.output,
		r.progress ? "" : "; Ctrl-C to stop");

	/*
	 * The drain loop runs at the normal nice 0, not lower: it needs 0.25 us
	 * per record, but a niced reader behind 64 busy threads pinned to 2 CPUs
	 * got ~0.3% of a CPU, never drained, and lost 160k of 310k events in 2 s
	 * (with the run loop, so -d, stalled too).  poll_stats goes to nice -10
	 * while the ring buffer still fills.
	 */
	r.nice = getpriority(PRIO_PROCESS, 0);
	if (r.nice > 0 && setpriority(PRIO_PROCESS, 0, 0) == 0)
		r.nice = 0;
	e = run_loop(&r);
	r.end_ns = gt_now_mono_ns();
	if (o.cmd && !r.target_gone)
		attacher__scan(r.att, r.pid);
	if (!o.cmd && !r.target_gone)
		emit_mappings(&r, r.pid);
	/* Stop new events, then drain what is left and close open intervals. */
	detach_sched(&r);
	/* Launch mode: a target that never initialised CUDA never loaded the library. */
	if (o.gpu.injected && !o.gpu.uprobes && o.cmd && !gpu_cupti_loaded(&o.gpu, r.pid))
		snprintf(o.gpu.source, sizeof(o.gpu.source),
			 "usdt (CUPTI library offered, never loaded: no CUDA in the target)");
	else if (o.gpu.injected && !r.target_gone)
		gpu_grace(&r);
	attacher__free(r.att);
	r.att = attacher__new(r.skel, &o.probes);
	do
		r.rb_behind = false;
	while (rb_drain(&r, -1) >= 0 && r.rb_behind);
	drain_open_intervals(&r);
	poll_stats(&r, r.end_ns);
	if (o.cmd && r.target_gone)
		emit_threads(&r, r.pid);
	flush_all(&r);
	write_counters(&r, GT_BLK_COUNTERS);
	write_counters(&r, GT_BLK_END);
	if (r.progress)
		progress_line(&r, r.end_ns, true);
	e = e ? e : r.write_err;
	if (capture_writer__close(r.w) && !e) {
		gt_err("cannot finish writing %s: %s", o.output, strerror(errno));
		e = -EIO;
	}
	r.w = NULL;
	if (r.target_gone && !o.cmd)
		gt_warn("pid %d exited after %.1f s: the capture ends there", r.pid,
			(r.end_ns - r.start_ns) / 1e9);
	if (r.target_gone && o.cmd) {
		if (WIFEXITED(r.target_status))
			gt_info("'%s' exited with status %d", o.cmd[0],
				WEXITSTATUS(r.target_status));
		else if (WIFSIGNALED(r.target_status))
			gt_warn("'%s' was killed by signal %d", o.cmd[0],
				WTERMSIG(r.target_status));
	}
	if (r.fpa)
		fp_audit__report(r.fpa, offsetof(struct gt_ustack, data) + 8192);
	if (r.stats[GT_STAT_RB_LOST])
		gt_warn("%llu events were lost (ring buffer full): raise --ringbuf-size; "
			"reports show the affected time as unknown",
			(unsigned long long)r.stats[GT_STAT_RB_LOST]);
	{
		char size[32];
		struct stat st = {};

		stat(o.output, &st);
		gt_info("wrote %s: %s, %llu records, %llu lost, %.1f s; next: gaptrace report %s",
			o.output, gt_fmt_bytes((uint64_t)st.st_size, size, sizeof(size)),
			(unsigned long long)r.events, (unsigned long long)r.stats[GT_STAT_RB_LOST],
			(r.end_ns - r.start_ns) / 1e9, o.output);
	}
	report_cpu(&r);
	ret = e ? GT_EXIT_FAIL : GT_EXIT_OK;

cleanup:
	if (r.go_fd >= 0) {
		/* A child still held before exec: closing the pipe makes it exit. */
		close(r.go_fd);
		waitpid(r.child, NULL, 0);
	}
	if (status_fd >= 0)
		close(status_fd);
	capture_writer__close(r.w);
	ring_buffer__free(r.rb);
	attacher__free(r.att);
	gaptrace_bpf__destroy(r.skel);
	syms_cache__free(r.syms);
	unwinder__free(r.unw);
	fp_audit__free(r.fpa);
	if (r.pidfd >= 0)
		close(r.pidfd);
	capture_buf__free(&kv);
	capture_buf__free(&probes);
	capture_buf__free(&r.stacks_buf);
	capture_buf__free(&r.syms_buf);
	free(r.stack_ids.keys);
	free(r.sym_keys.keys);
	probe_table__free(&o.probes);
	return ret;
}
