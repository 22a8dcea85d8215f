// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * record.c: `gaptrace record` — loads the BPF side, attaches it to a live
 * process or a command it starts, drains the ring buffer into a capture file
 * (flushed every 100 ms) and stops cleanly on signal, duration or target exit.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "record/attach.h"
#include "capture/capture.h"
#include "record/record.h"
#include "gaptrace/gaptrace.h"
#include "gaptrace.skel.h"
#include "record/gpu.h"
#include "record/record_priv.h"
#include "record/sysprobe.h"
#include "record/cfimap.h"
#include "record/fpless.h"
#include "record/unwind.h"
#include "support/procfs.h"
#include "support/term.h"
#include "support/util.h"
#include "symbols/syms.h"

#define FLUSH_NS    (100 * NSEC_PER_MSEC)
#define STATS_NS    (250 * NSEC_PER_MSEC)
#define PROGRESS_NS (500 * NSEC_PER_MSEC)
#define RESCAN_NS   (250 * NSEC_PER_MSEC)
#define DWARF_SLOTS 1024 /* threads with a snapshot slot at once (--stacks dwarf) */

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

/*
 * ring_buffer__consume returns only when the ring is empty: behind producers
 * as fast as the reader (64 busy threads) it never does, and the run loop
 * (stats, lost-event records, the stop) stalls with it.  on_record ends a
 * round after RB_SLICE_NS with this code, the record itself consumed.
 */
#define RB_SLICE_OVER (-EOVERFLOW)
#define RB_SLICE_NS   (50 * NSEC_PER_MSEC)

int record__rb_drain(struct recorder *r, int timeout_ms)
{
	int err;

	r->slice_start_ns = gt_now_mono_ns();
	r->slice_n = 0;
	err = timeout_ms < 0 ? ring_buffer__consume(r->rb) : ring_buffer__poll(r->rb, timeout_ms);
	if (err == RB_SLICE_OVER)
		r->rb_behind = true;
	return err == RB_SLICE_OVER ? 0 : err;
}

void record__drain_all(struct recorder *r)
{
	do
		r->rb_behind = false;
	while (record__rb_drain(r, -1) >= 0 && r->rb_behind);
}

/* The sink's view of the symbolizer and the rescan. */
static int sink_resolve(void *ctx, uint32_t pid, uint64_t ip, const char **name, uint32_t *off,
			const char **module)
{
	struct recorder *r = ctx;

	return syms_cache__resolve(r->syms, pid, ip, name, off, module) ? -1 : 0;
}

static void sink_task(void *ctx, uint32_t pid, uint32_t event)
{
	struct recorder *r = ctx;

	/* New code (a dlopen): read the maps at its first frame, not after MAPS_REREAD_NS. */
	if (event == GT_TASK_EXEC || event == GT_TASK_LOADED)
		syms_cache__forget(r->syms, pid);
	/* The loader maps the libraries just after exec (its hook says so too). */
	if (event == GT_TASK_EXEC)
		r->rescan_at_ns = gt_now_mono_ns() + 20 * NSEC_PER_MSEC;
	/* Scanned as soon as this drain round ends (probes, CFI ranges): new process or code. */
	record__follow_note(r, (pid_t)pid);
}

static bool sink_untraced(void *ctx, uint32_t pid, uint32_t tid, char *comm)
{
	struct recorder *r = ctx;

	if (record__follow_traced(r, (pid_t)pid))
		return false;
	/* comm is the record's, zeroed: "" stays when the thread is gone. */
	procfs_comm((pid_t)pid, (pid_t)tid, comm, GT_COMM_LEN);
	return true;
}

static bool sink_inline_ref(void *ctx, uint32_t pid, uint64_t ip, bool caller, uint64_t ref[2])
{
	struct recorder *r = ctx;

	return syms_cache__locate(r->syms, pid, ip, caller, ref);
}

static int sink_inline_names(void *ctx, const uint64_t ref[2], const char **names, int max)
{
	struct recorder *r = ctx;

	return syms_cache__inlines_at(r->syms, ref, names, max);
}

static const struct record_sink_ops sink_ops = {
    .resolve = sink_resolve,
    .task = sink_task,
    .inline_ref = sink_inline_ref,
    .inline_names = sink_inline_names,
    .untraced = sink_untraced,
};

static int on_record(void *ctx, void *data, size_t size)
{
	struct recorder *r = ctx;

	r->rb_bytes += size;
	record_sink__feed(&r->sink, data, size);
	if ((++r->slice_n & 31) == 0 && gt_now_mono_ns() - r->slice_start_ns >= RB_SLICE_NS)
		return RB_SLICE_OVER;
	return 0;
}

static void flush_all(struct recorder *r)
{
	record_sink__flush(&r->sink);
}

static void attach_progress(void *ctx, size_t objects, unsigned links)
{
	struct recorder *r = ctx;

	record__step(
	    r, false, "attaching to pid %d: %zu process%s, %zu objects scanned, %u probes attached",
	    r->pid, GT_MAX(r->nprocs, (size_t)1), r->nprocs > 1 ? "es" : "", objects, links);
}

/* The scheduler programs (tp_btf; the raw_tp flavour was removed). */
struct sched_prog {
	struct bpf_program *prog;
	struct bpf_link **link;
};

#define SCHED_PROG(s, name)                                   \
	{                                                     \
		(s)->progs.btf_##name, &(s)->links.btf_##name \
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

static int attach_sched(struct recorder *r)
{
	struct sched_prog p[MAX_SCHED_PROGS];
	size_t n = sched_progs(r->skel, p);

	for (size_t i = 0; i < n; i++) {
		*p[i].link = bpf_program__attach(p[i].prog);
		if (!*p[i].link) {
			int err = -errno;

			gt_err("cannot attach %s: %s; run 'gaptrace doctor'",
			       bpf_program__name(p[i].prog), strerror(errno));
			return err;
		}
	}
	return 0;
}

void record__detach_sched(struct recorder *r)
{
	struct sched_prog p[MAX_SCHED_PROGS];
	size_t n = sched_progs(r->skel, p);

	for (size_t i = 0; i < n; i++) {
		bpf_link__destroy(*p[i].link);
		*p[i].link = NULL;
	}
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

int record__run(struct recorder *r)
{
	uint64_t now;
	bool due, all;

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
		err = record__rb_drain(r, timeout_ms);

		/*
		 * Records sent without a wakeup are not announced to epoll: take
		 * them every round too, so they are written (and dwarf snapshots
		 * unwound, while the process lives) within ~100 ms.
		 */
		if (err >= 0)
			err = r->rb_behind ? 0 : record__rb_drain(r, -1);
		if (err < 0 && err != -EINTR) {
			gt_err("reading the ring buffer failed: %s", strerror(-err));
			return err;
		}
		now = gt_now_mono_ns();
		if (now - r->last_stats_ns >= STATS_NS)
			record__poll_stats(r, now);
		if (now - r->last_flush_ns >= FLUSH_NS) {
			flush_all(r);
			r->last_flush_ns = now;
		}
		due = r->rescan_at_ns && now >= r->rescan_at_ns;
		all = due || now - r->last_rescan_ns >= RESCAN_NS;
		if (r->rescan || all) {
			if (due)
				r->rescan_at_ns = 0;
			/* An event's rescan looks at the processes it named, the timer at all. */
			record__follow_rescan(r, all);
			if (r->o->gpu.injected && !r->o->gpu.uprobes && !r->target_gone)
				check_cupti(r);
			if (all)
				r->last_rescan_ns = now;
			r->rescan = false;
		}
		cfimap__poll(r->cfi);
		if (r->progress && now - r->last_progress_ns >= PROGRESS_NS)
			record__progress(r, now, false);
		if (r->sink.write_err) {
			r->stop_reason = "write-error";
			return r->sink.write_err;
		}
		if (stop_signal) {
			r->stop_reason = stop_signal == SIGINT ? "SIGINT" : "SIGTERM";
			return 0;
		}
		/* The monitor's window boundaries and signals (record_seg.c). */
		if (r->tick && r->tick(r, now, r->tick_ctx)) {
			r->stop_reason = "monitor";
			return r->sink.write_err;
		}
		if (r->o->duration_ns && now - r->start_ns >= r->o->duration_ns) {
			r->stop_reason = "duration";
			return 0;
		}
		/*
		 * The program is over when the target and every process followed
		 * from it are: a launcher that exits before its workers, or workers
		 * still flushing after the main process, are recorded to their end.
		 */
		if (!r->target_gone && record__target_exited(r)) {
			r->target_gone = true;
			r->target_gone_ns = now;
		}
		if (r->target_gone) {
			size_t n = record__follow_alive(r);

			if (!n) {
				r->stop_reason = "target-exit";
				return 0;
			}
			if (r->target_gone_ns == now)
				gt_info(
				    "pid %d exited; recording the %zu process%s followed from it "
				    "until %s%s",
				    r->pid, n, n == 1 ? "" : "es",
				    n == 1 ? "it exits" : "they exit",
				    r->o->duration_ns ? " or -d ends" : " (Ctrl-C stops)");
		}
	}
}

/* Low bits of a BPF stack id that name the CPU and slot that made it (bpf/gaptrace.bpf.c). */
static uint32_t stack_id_shift(void)
{
	int ncpu = libbpf_num_possible_cpus();
	uint32_t bits = 1;

	while ((1L << (bits - 1)) < ncpu)
		bits++;
	return ncpu > 0 ? bits : 16;
}

static int setup_bpf(struct recorder *r)
{
	struct record_opts *o = r->o;
	uint32_t scratch;
	int err;

	r->skel = gaptrace_bpf__open();
	if (!r->skel) {
		gt_err("cannot open the BPF object: %s", strerror(errno));
		return -errno;
	}
	r->skel->rodata->cfg_ustacks = o->stacks;
	r->skel->rodata->cfg_kstacks = o->stacks;
	r->skel->rodata->cfg_stack_id_shift = stack_id_shift();
	r->skel->rodata->cfg_follow_children = o->follow_children;
	r->skel->rodata->cfg_self_tgid = (uint32_t)getpid();
	r->skel->rodata->cfg_wakeup_bytes = o->ringbuf_bytes / 4;
	bpf_map__set_max_entries(r->skel->maps.events, (uint32_t)o->ringbuf_bytes);
	/* Snapshot maps sized to --stack-bytes; a token size when dwarf is off. */
	r->skel->rodata->cfg_dwarf_bytes = o->dwarf ? o->stack_bytes : 0;
	r->skel->rodata->cfg_dwarf_sample_bytes = o->dwarf ? o->dwarf_sample_bytes : 0;
	r->skel->rodata->cfg_dwarf_min_ns = o->dwarf_min_ns;
	r->skel->rodata->cfg_cfi_walk = o->cfi_walk;
	r->skel->rodata->cfg_fpless_bytes = o->cfi_sample_bytes;
	r->skel->rodata->cfg_fpless_per_window = o->cfi_rate ? GT_MAX(o->cfi_rate / 10, 1) : 0;
	r->skel->bss->fpless_limit = r->skel->rodata->cfg_fpless_per_window;
	/* The per-CPU scratch holds a switch-out's or a sample's snapshot, whichever is larger. */
	scratch = GT_MAX(o->dwarf ? o->stack_bytes : 8, o->cfi_sample_bytes);
	bpf_map__set_value_size(r->skel->maps.ustack_slots,
				offsetof(struct gt_ustack, data) + (o->dwarf ? o->stack_bytes : 8));
	bpf_map__set_value_size(r->skel->maps.ustack_scratch,
				offsetof(struct gt_ustack, data) + scratch);
	bpf_map__set_max_entries(r->skel->maps.ustack_slots, o->dwarf ? DWARF_SLOTS : 1);
	/* libbpf's 256 spec ids ran out at ~128 followed children (issue #24). */
	bpf_map__set_max_entries(r->skel->maps.__bpf_usdt_specs, GT_USDT_SPEC_IDS);
	attacher__choose_programs(r->skel);
	err = gaptrace_bpf__load(r->skel);
	if (err) {
		gt_err("cannot load the BPF programs (%s): run 'gaptrace doctor'%s", strerror(-err),
		       gt_verbose ? "" : ", or -v for the verifier log");
		return err;
	}
	return 0;
}

/*
 * Open: the checks, the target (pid resolved or command launched, held
 * before exec), the BPF side loaded, the capture's first blocks, the ring
 * buffer.  0, or -1 after a one-line error; record__free frees what was
 * made either way.
 */
int record__open(struct recorder *r, int argc, char **argv)
{
	struct record_opts *o = r->o;
	struct capture_buf kv = {}, probes = {};
	const char *kvs[64];
	char err[512];
	int ret = -1, e;
	struct sigaction sa = {.sa_handler = on_signal};

	if (gt_check_privileges(err, sizeof(err)) || gt_check_pid_namespace(err, sizeof(err))) {
		gt_err("%s", err);
		goto out;
	}
	gt_libbpf_logging();
	r->progress = o->progress == 1 || (o->progress == -1 && isatty(STDERR_FILENO));
	/*
	 * Attaching is a burst of CPU work (BPF verification, symbol tables,
	 * /proc): at nice 0 behind a target's 32 busy threads on 2 CPUs it
	 * took seconds, long enough for a short-lived target to exit first.
	 * The run loop goes back to nice 0 (below).
	 */
	r->user_nice = getpriority(PRIO_PROCESS, 0);
	if (r->user_nice > -10)
		setpriority(PRIO_PROCESS, 0, -10);
	if (o->default_probes)
		probe_table__add_defaults(&o->probes);
	r->ncpus = libbpf_num_possible_cpus();
	if (r->ncpus <= 0)
		r->ncpus = 1;

	if (o->pid) {
		r->pid = o->pid;
		if (kill(o->pid, 0) && errno == ESRCH) {
			gt_err("pid %d does not exist: check it with 'ps -p %d'", o->pid, o->pid);
			goto out;
		}
		if (o->pid == getpid()) {
			gt_err("pid %d is gaptrace itself: give the target's pid", o->pid);
			goto out;
		}
		if (record__resolve_tgid(r, o->pid))
			goto out;
		/* A pidfd tells when the process exits (a recycled pid cannot fool it). */
		r->pidfd = record__open_pidfd(r->pid);
		if (r->pidfd < 0) {
			if (errno == ESRCH)
				gt_err("pid %d does not exist: check it with 'ps -p %d'", r->pid,
				       r->pid);
			else
				gt_err("cannot watch pid %d: %s", r->pid, strerror(errno));
			goto out;
		}
	} else {
		e = record__resolve_cmd(o->cmd[0], r->exe_buf, sizeof(r->exe_buf));
		r->exe = r->exe_buf;
		if (e) {
			gt_err("cannot run '%s': %s; check the command name and PATH", o->cmd[0],
			       strerror(-e));
			goto out;
		}
	}

	if (!gt_have_uprobe_pmu()) {
		bool now = false;

		/* libbpf then creates uprobes through tracefs's uprobe_events. */
		if (gt_ensure_tracefs(&now) == 0 && now)
			gt_info("mounted tracefs at /sys/kernel/tracing (needed for uprobes "
				"on this kernel)");
	}
	o->gpu.cupti_lib = gpu_find_cupti_lib(o->cupti_lib);
	if (o->cupti_lib && !o->gpu.cupti_lib) {
		gt_err("cannot use --cupti-lib %s: %s", o->cupti_lib, strerror(errno));
		goto out;
	}
	/*
	 * CUPTI delivers GPU records in bursts of ~100 B per op at up to 150k
	 * ops/s, and the recorder stalls for a second or more while it loads a
	 * large library's symbols (PyTorch: 16k events lost with 16M on the
	 * H200).  64M rides that out; without CUPTI 16M is plenty.
	 */
	if (!o->ringbuf_bytes)
		o->ringbuf_bytes =
		    o->gpu.cupti_lib && o->gpu.mode != GPU_NONE && o->gpu.mode != GPU_UPROBE
			? 64 << 20
			: 16 << 20;
	record__step(r, true, "loading the BPF programs");
	if (setup_bpf(r))
		goto out;
	if (o->cfi_walk) {
		r->cfi = cfimap__new(bpf_map__fd(r->skel->maps.cfi_tables),
				     bpf_map__fd(r->skel->maps.cfi_pages),
				     bpf_map__fd(r->skel->maps.cfi_procs), o->cfi_budget);
		/* Before the child exists: nothing of it waits on the tables. */
		if (o->cmd)
			cfimap__preload(r->cfi, r->exe_buf);
	}
	/* Before the header is written: it records which GPU source was used. */
	if (o->cmd)
		gpu_prepare_launch(&o->gpu, &o->probes);
	else
		gpu_prepare_attach(&o->gpu, r->pid, &o->probes);

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (o->cmd) {
		r->status_fd = record__launch_child(r, o->cmd, &o->gpu);
		if (r->status_fd < 0) {
			gt_err("cannot start '%s': %s", o->cmd[0], strerror(-r->status_fd));
			goto out;
		}
		r->pidfd = record__open_pidfd(r->pid);
	}
	if ((uint32_t)r->pid >= GT_TGID_LIMIT || !r->skel->bss) {
		gt_err("cannot register pid %d with the BPF side: %s", r->pid,
		       r->skel->bss ? "pid above the kernel's limit"
				    : "the .bss map is not mapped");
		goto out;
	}
	record__follow_set_traced(r, r->pid, true);

	/*
	 * The symbolizer keeps each mapped object (and its debug file) open:
	 * allow what the hard limit allows, after the child got the usual one.
	 */
	{
		struct rlimit rl;

		if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
			rl.rlim_cur = rl.rlim_max;
			setrlimit(RLIMIT_NOFILE, &rl);
		}
	}
	r->syms = syms_cache__new();
	if (o->dwarf || o->cfi_sample_bytes)
		r->unw = unwinder__new();
	if (!o->dwarf && !o->cfi_walk && o->stacks)
		record__audit_exe(r);
	if (o->cfi_sample_bytes)
		r->fpless = fpless__new(bpf_map__fd(r->skel->maps.fpless), o->cfi_all);
	r->att = attacher__new(r->skel, &o->probes);
	attacher__on_progress(r->att, attach_progress, r);
	r->start_ns = gt_now_mono_ns();
	record__header_kv(r, &kv, argc, argv);
	r->w = capture_writer__open(
	    o->output, kvs, record__kv_strings(&kv, kvs, GT_ARRAY_SIZE(kvs)), err, sizeof(err));
	if (!r->w) {
		gt_err("%s", err);
		goto out;
	}
	capture_writer__compress(r->w, GT_CAP_ZSTD_LEVEL);
	record_sink__init(&r->sink, &(struct record_sink_cfg){
					.ops = &sink_ops,
					.ctx = r,
					.w = r->w,
					.path = o->output,
					.min_gap_ns = o->min_gap_ns,
					.unw = r->unw,
					.fpa = r->fpa,
				    });
	probe_table__emit(&o->probes, 0, &probes);
	if (probes.len)
		capture_writer__block(r->w, GT_BLK_PROBES, probes.data, probes.len);

	r->rb = ring_buffer__new(bpf_map__fd(r->skel->maps.events), on_record, r, NULL);
	if (!r->rb) {
		gt_err("cannot open the ring buffer: %s", strerror(errno));
		goto out;
	}
	ret = 0;
out:
	capture_buf__free(&kv);
	capture_buf__free(&probes);
	return ret;
}

/*
 * Attach: the scheduler tracepoints first, then probes, followed children,
 * samplers and unwinding tables; the launched command let go; the reader
 * back to the operator's nice.  0, or -1 after a one-line error.
 */
int record__attach(struct recorder *r)
{
	struct record_opts *o = r->o;
	int ret = -1, e;

	/*
	 * Kernel symbols now, not at the first kernel stack: reading kallsyms
	 * (120k lines) took 140 ms on a loaded machine inside the first drain
	 * round, and a recorder killed then lost everything since the attach.
	 */
	syms_cache__load_kernel(r->syms);
	/* Scheduler first: from here on every switch of the target is seen. */
	record__step(r, true, "attaching to pid %d: scheduler tracepoints", r->pid);
	if (attach_sched(r))
		goto out;
	record__follow_attach_hook(r);
	if (o->cmd) {
		attacher__attach_object(r->att, r->pid, r->exe_buf);
		attacher__attach_like_self(r->att, r->pid, "libc.so");
	} else if (attacher__scan(r->att, r->pid) < 0 && attacher__target_gone(r->att, r->pid)) {
		gt_warn("pid %d exited while gaptrace was attaching (%.1f s into the attach): no "
			"probe was attached",
			r->pid, (double)(gt_now_mono_ns() - r->start_ns) / 1e9);
	}
	record__follow_note(r, r->pid);
	r->rescan = false;
	/* Children alive now are traced like the target; later ones BPF follows. */
	if (!o->cmd && o->follow_children && (e = record__follow_existing(r)) > 0)
		gt_info("following %d descendant process%s of pid %d alive at the attach", e,
			e == 1 ? "" : "es", r->pid);
	r->sampling_from_ns = gt_now_mono_ns();
	if (o->cpu_samplers) {
		int n = attacher__sample_cpus(r->att, o->sample_period_ns);

		if (n < 0) {
			gt_err("cannot open a cpu-clock event on any CPU: %s; try --sampler thread "
			       "or -F 0",
			       strerror(-n));
			goto out;
		}
	} else if (attacher__sample_threads(r->att, r->pid, o->sample_period_ns) < 0 && o->pid) {
		gt_err("pid %d exited while gaptrace was attaching", r->pid);
		goto out;
	}
	if (r->fpless)
		fpless__update(r->fpless, r->pid);
	/* Launch mode: the child is still our fork until it execs; its ranges come after. */
	if (r->cfi && !o->cmd)
		cfimap__update(r->cfi, r->pid);
	/* Later scans run beside the status line: no step lines from them. */
	attacher__on_progress(r->att, NULL, NULL);
	record__step_done(r);
	if (!o->cmd) {
		record__emit_threads(r, r->pid);
		record__emit_mappings(r, r->pid);
	}
	r->last_stats_ns = r->last_flush_ns = r->last_progress_ns = r->last_rescan_ns = r->start_ns;
	if (o->cmd && record__release_child(r, r->status_fd, o->cmd[0]))
		goto out;
	r->status_fd = -1;
	if (o->cmd) {
		/* Libraries appear only after exec: scan again soon. */
		r->last_rescan_ns = r->start_ns - RESCAN_NS + 20 * NSEC_PER_MSEC;
	}
	gt_info("recording pid %d (%s, %u USDT, %u uprobes, %u samplers; GPU: %s) to %s%s", r->pid,
		"tp_btf", attacher__usdt_links(r->att), attacher__uprobe_links(r->att),
		attacher__sample_events(r->att), o->gpu.source, o->output,
		r->progress ? "" : "; Ctrl-C to stop");

	/*
	 * The drain loop runs at the normal nice 0, not lower: it needs 0.25 us
	 * per record, but a niced reader behind 64 busy threads pinned to 2 CPUs
	 * got ~0.3% of a CPU, never drained, and lost 160k of 310k events in 2 s
	 * (with the run loop, so -d, stalled too).  record__poll_stats goes to nice -10
	 * while the ring buffer still fills.
	 */
	if (setpriority(PRIO_PROCESS, 0, r->user_nice > 0 ? 0 : r->user_nice) == 0)
		r->nice = r->user_nice > 0 ? 0 : r->user_nice;
	else
		r->nice = getpriority(PRIO_PROCESS, 0);
	ret = 0;
out:
	return ret;
}

/* record__open then record__attach (the monitor's recorder, record_seg.c). */
int record__start(struct recorder *r, int argc, char **argv)
{
	return record__open(r, argc, argv) || record__attach(r) ? -1 : 0;
}
