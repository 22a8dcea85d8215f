// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * record_meta.c: what a capture says about its recording: the HEADER keys,
 * the COUNTERS and END blocks (losses, BPF and dwarf counters, why it
 * stopped), the live status line and the recorder's own CPU cost printed at the end.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "capture/capture.h"
#include "gaptrace/gaptrace.h"
#include "gaptrace.skel.h"
#include "record/cfimap.h"
#include "record/record_priv.h"
#include "record/unwind.h"
#include "support/procfs.h"
#include "support/term.h"
#include "support/util.h"
#include "symbols/bounds.h"
#include "symbols/elf.h"

/* len bytes as lowercase hex in out (2 * len + 1 bytes). */
static const char *hex(const uint8_t *b, size_t len, char *out)
{
	for (size_t i = 0; i < len; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
	out[2 * len] = '\0';
	return out;
}

void record__header_kv(struct recorder *r, struct capture_buf *kv, int argc, char **argv)
{
	char buf[4096], exe[PATH_MAX], path[64];
	uint8_t id[20];
	struct utsname u;
	size_t off = 0;
	long n;

	uname(&u);
	capture_buf__key(kv, CK_GAPTRACE_VERSION, "%s", GT_VERSION);
	capture_buf__key(kv, CK_HOST, "%s", u.nodename);
	capture_buf__key(kv, CK_KERNEL, "%s %s", u.sysname, u.release);
	capture_buf__key(kv, CK_ARCH, "%s", u.machine);
	for (int i = 0; i < argc && off < sizeof(buf) - 1; i++)
		off +=
		    (size_t)snprintf(buf + off, sizeof(buf) - off, "%s%s", i ? " " : "", argv[i]);
	capture_buf__key(kv, CK_CMDLINE, "%s", buf);
	capture_buf__key(kv, CK_MODE, "%s", r->child ? "launch" : "attach");
	capture_buf__key(kv, CK_PID, "%d", r->pid);
	if (r->o->cmd) {
		/* Still gaptrace's fork before exec: name it as exec will. */
		const char *base = strrchr(r->o->cmd[0], '/');

		capture_buf__key(kv, CK_COMM, "%.15s", base ? base + 1 : r->o->cmd[0]);
	} else if (procfs_comm(r->pid, 0, buf, sizeof(buf))) {
		capture_buf__key(kv, CK_COMM, "%s", buf);
	}
	procfs_path(path, sizeof(path), r->pid, 0, "exe");
	n = r->exe ? -1 : readlink(path, exe, sizeof(exe) - 1);
	if (r->exe) {
		capture_buf__key(kv, CK_EXE, "%s", r->exe);
	} else if (n > 0) {
		exe[n] = '\0';
		capture_buf__key(kv, CK_EXE, "%s", exe);
	}
	/* `diff` warns when two captures are of different programs. */
	if ((r->exe || n > 0) && (n = syms_elf_build_id(r->exe ? r->exe : exe, id, sizeof(id))) > 0)
		capture_buf__key(kv, CK_EXE_BUILD_ID, "%s", hex(id, (size_t)n, buf));
	if (r->o->cmd) {
		off = 0;
		for (int i = 0; r->o->cmd[i] && off < sizeof(buf) - 1; i++)
			off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s%s", i ? " " : "",
						r->o->cmd[i]);
		capture_buf__key(kv, CK_TARGET_CMDLINE, "%s", buf);
	}
	capture_buf__key(kv, CK_START_MONO_NS, "%llu", (unsigned long long)r->start_ns);
	capture_buf__key(kv, CK_START_REAL_NS, "%llu", (unsigned long long)gt_now_real_ns());
	if (gt_read_file("/proc/sys/kernel/random/boot_id", buf, sizeof(buf)) > 0) {
		buf[strcspn(buf, "\n")] = '\0';
		capture_buf__key(kv, CK_BOOT_ID, "%s", buf);
	}
	capture_buf__key(kv, CK_NCPUS, "%d", r->ncpus);
	capture_buf__key(kv, CK_CLOCK, "CLOCK_MONOTONIC");
	capture_buf__key(kv, CK_SCHED_ATTACH, "%s", "tp_btf");
	capture_buf__key(kv, CK_SAMPLE_PERIOD_NS, "%llu",
			 (unsigned long long)r->o->sample_period_ns);
	capture_buf__key(kv, CK_SAMPLER, "%s", r->o->cpu_samplers ? "cpu" : "thread");
	capture_buf__key(kv, CK_RINGBUF_BYTES, "%llu", (unsigned long long)r->o->ringbuf_bytes);
	capture_buf__key(kv, CK_STACKS, "%s",
			 r->o->dwarf	  ? "dwarf"
			 : r->o->cfi_walk ? "cfi"
			 : r->o->stacks	  ? "fp"
					  : "none");
	if (r->o->dwarf) {
		capture_buf__key(kv, CK_STACK_BYTES, "%u", r->o->stack_bytes);
		capture_buf__key(kv, CK_DWARF_MIN_NS, "%llu",
				 (unsigned long long)r->o->dwarf_min_ns);
		capture_buf__key(kv, CK_DWARF_SAMPLE_BYTES, "%u", r->o->dwarf_sample_bytes);
	}
	capture_buf__key(kv, CK_GPU_SOURCE, "%s", r->o->gpu.source[0] ? r->o->gpu.source : "usdt");
	if (r->o->gpu.cupti_lib)
		capture_buf__key(kv, CK_CUPTI_LIB, "%s", r->o->gpu.cupti_lib);
}

/*
 * The share of a CPU the unwinding of CPU samples' snapshots may take
 * (--cfi-rate's default: 4000/s at ~9 us each); GAPTRACE_CFI_CPU_SHARE
 * (0 < x <= 1) sets another, for tests.
 */
static double cfi_cpu_share(void)
{
	static double share;
	const char *e;

	if (share == 0) {
		e = getenv("GAPTRACE_CFI_CPU_SHARE");
		share = e ? strtod(e, NULL) : 0;
		if (!(share > 0 && share <= 1))
			share = 0.036;
	}
	return share;
}

/* Splits a kv body into the string array capture_writer__open wants. */
size_t record__kv_strings(const struct capture_buf *kv, const char **out, size_t max)
{
	size_t n = 0;

	for (size_t off = 0; off < kv->len && n < max;) {
		const char *s = (const char *)kv->data + off;

		out[n++] = s;
		off += strlen(s) + 1;
	}
	return n;
}

/* A COUNTERS key and the BPF statistic it shows. */
struct stat_key {
	enum capture_key key;
	int stat;
};

static const struct stat_key ringbuf_keys[] = {
    {CK_LOST_RINGBUF, GT_STAT_RB_LOST},
    {CK_LOST_RINGBUF_OFFCPU, GT_STAT_RB_LOST_OFFCPU},
    {CK_LOST_RINGBUF_SAMPLE, GT_STAT_RB_LOST_SAMPLE},
    {CK_LOST_RINGBUF_CALL, GT_STAT_RB_LOST_CALL},
    {CK_LOST_RINGBUF_GPU, GT_STAT_RB_LOST_GPU},
    {CK_LOST_RINGBUF_OTHER, GT_STAT_RB_LOST_OTHER},
};

static const struct stat_key bpf_keys[] = {
    {CK_LOST_STACK, GT_STAT_STACK_LOST},	  {CK_LOST_MAP_FULL, GT_STAT_MAP_FULL},
    {CK_LOST_GPU_TRUNCATED, GT_STAT_GPU_TRUNC},	  {CK_BPF_EVENTS, GT_STAT_EVENTS},
    {CK_BPF_SWITCHES, GT_STAT_SWITCHES},	  {CK_BPF_SWITCHIN_MISSED, GT_STAT_SWITCHIN_MISSED},
    {CK_BPF_STACKS_REUSED, GT_STAT_STACK_REUSED},
};

static const struct stat_key dwarf_keys[] = {
    {CK_DWARF_SNAPSHOTS, GT_STAT_USTACK_SENT},
    {CK_DWARF_BYTES, GT_STAT_USTACK_BYTES},
    {CK_DWARF_DROPPED, GT_STAT_USTACK_LOST},
    {CK_DWARF_NO_SLOT, GT_STAT_USTACK_FULL},
    {CK_DWARF_FPLESS_SAMPLES, GT_STAT_FPLESS_SAMPLES},
    {CK_DWARF_FPLESS_OVER_BUDGET, GT_STAT_FPLESS_OVER},
};

/* --stacks cfi: the kernel walks and why each ended (enum gt_unw_end). */
static const struct stat_key unw_keys[] = {
    {CK_UNWIND_WALKS, GT_STAT_UNW_WALKS},
    {CK_UNWIND_FRAMES, GT_STAT_UNW_FRAMES},
    {CK_UNWIND_END_ROOT, GT_STAT_UNW_ROOT},
    {CK_UNWIND_END_NO_MAPPING, GT_STAT_UNW_NO_MAPPING},
    {CK_UNWIND_END_NO_TABLE, GT_STAT_UNW_NO_TABLE},
    {CK_UNWIND_END_NO_ROW, GT_STAT_UNW_NO_ROW},
    {CK_UNWIND_END_UNSUPPORTED, GT_STAT_UNW_UNSUPPORTED},
    {CK_UNWIND_END_BAD_READ, GT_STAT_UNW_BAD_READ},
    {CK_UNWIND_END_DEPTH, GT_STAT_UNW_DEPTH},
};

static void kv_stats(struct capture_buf *kv, const struct recorder *r, const struct stat_key *keys,
		     size_t n)
{
	/* Less stats_base: a monitor segment counts only its own losses. */
	for (size_t i = 0; i < n; i++)
		capture_buf__key(
		    kv, keys[i].key, "%llu",
		    (unsigned long long)(r->stats[keys[i].stat] - r->stats_base[keys[i].stat]));
}

void record__write_counters(struct recorder *r, uint32_t type)
{
	struct capture_buf kv = {};
	char buf[2048];

	kv_stats(&kv, r, ringbuf_keys, GT_ARRAY_SIZE(ringbuf_keys));
	capture_buf__key(&kv, CK_LOST_PROG_MISSES, "%llu",
			 (unsigned long long)(r->misses - r->misses_base));
	kv_stats(&kv, r, bpf_keys, GT_ARRAY_SIZE(bpf_keys));
	if (r->unw) {
		struct unwind_stats us;

		unwinder__stats(r->unw, &us);
		kv_stats(&kv, r, dwarf_keys, GT_ARRAY_SIZE(dwarf_keys));
		capture_buf__key(&kv, CK_DWARF_UNWOUND, "%llu",
				 (unsigned long long)(us.snapshots - us.failed));
		capture_buf__key(&kv, CK_DWARF_FAILED, "%llu", (unsigned long long)us.failed);
		capture_buf__key(&kv, CK_DWARF_USED, "%llu",
				 (unsigned long long)r->sink.dwarf_used);
		capture_buf__key(&kv, CK_DWARF_STITCHED, "%llu",
				 (unsigned long long)r->sink.stitched);
		if (r->cfi_limit_min)
			capture_buf__key(&kv, CK_DWARF_CFI_RATE_MIN, "%u", r->cfi_limit_min * 10);
		capture_buf__key(&kv, CK_DWARF_UNWIND_CPU_NS, "%llu",
				 (unsigned long long)us.cpu_ns);
	}
	/* The symbolizer's cuts (bounds.h), when a traced program's files went past a cap. */
	for (int k = 0; k < BOUND_NKINDS; k++)
		if (bound__count(k))
			capture_buf__kv(&kv, bound__key(k), "%llu",
					(unsigned long long)bound__count(k));
	if (r->cfi) {
		const struct cfimap_stats *cs = cfimap__stats(r->cfi);

		kv_stats(&kv, r, unw_keys, GT_ARRAY_SIZE(unw_keys));
		capture_buf__key(&kv, CK_UNWIND_OBJECTS, "%u", cs->objects);
		capture_buf__key(&kv, CK_UNWIND_OBJECTS_FP, "%u", cs->fp_objects);
		capture_buf__key(&kv, CK_UNWIND_OBJECTS_CFI, "%u", cs->cfi_objects);
		capture_buf__key(&kv, CK_UNWIND_OBJECTS_NONE, "%u", cs->no_cfi);
		capture_buf__key(&kv, CK_UNWIND_OBJECTS_TRUNCATED, "%u", cs->truncated);
		capture_buf__key(&kv, CK_UNWIND_CFI_BAD_ENTRIES, "%u", cs->bad_entries);
		capture_buf__key(&kv, CK_UNWIND_ROWS, "%llu", (unsigned long long)cs->rows);
		capture_buf__key(&kv, CK_UNWIND_TABLE_BYTES, "%llu", (unsigned long long)cs->bytes);
		capture_buf__key(&kv, CK_UNWIND_TABLE_MAX_BYTES, "%llu",
				 (unsigned long long)cs->max_bytes);
		capture_buf__key(&kv, CK_UNWIND_TABLE_MAX_OBJECT, "%s", cs->max_name);
		capture_buf__key(&kv, CK_UNWIND_BUILD_NS, "%llu", (unsigned long long)cs->build_ns);
		capture_buf__key(&kv, CK_UNWIND_TABLE_BUDGET, "%llu",
				 (unsigned long long)cs->budget);
		capture_buf__key(&kv, CK_UNWIND_OBJECTS_OVER_BUDGET, "%u", cs->over_budget);
		capture_buf__key(&kv, CK_UNWIND_RESCAN_MAX_NS, "%llu",
				 (unsigned long long)cs->update_max_ns);
	}
	capture_buf__key(&kv, CK_STACKS_RESENT, "%llu", (unsigned long long)r->sink.stacks_resent);
	capture_buf__key(&kv, CK_STACKS_UNRESOLVED, "%llu",
			 (unsigned long long)r->sink.stacks_unresolved);
	capture_buf__key(&kv, CK_RECORDS, "%llu",
			 (unsigned long long)(r->sink.events - r->events_base));
	capture_buf__key(&kv, CK_USDT_LINKS, "%u", attacher__usdt_links(r->att));
	capture_buf__key(&kv, CK_UPROBE_LINKS, "%u", attacher__uprobe_links(r->att));
	capture_buf__key(&kv, CK_SAMPLE_EVENTS, "%u", attacher__sample_events(r->att));
	attacher__attached_names(r->att, buf, sizeof(buf));
	capture_buf__key(&kv, CK_UPROBES_ATTACHED, "%s", buf);
	capture_buf__key(&kv, CK_SAMPLING_FROM_NS, "%llu", (unsigned long long)r->sampling_from_ns);
	if (type == GT_BLK_END) {
		/* The source may have changed while recording (CUPTI stepped aside). */
		capture_buf__key(&kv, CK_GPU_SOURCE, "%s",
				 r->o->gpu.source[0] ? r->o->gpu.source : "usdt");
		capture_buf__key(&kv, CK_END_MONO_NS, "%llu", (unsigned long long)r->end_ns);
		capture_buf__key(&kv, CK_STOP_REASON, "%s", r->stop_reason ? r->stop_reason : "");
		if (r->target_gone && r->child && WIFEXITED(r->target_status))
			capture_buf__key(&kv, CK_TARGET_EXIT_STATUS, "%d",
					 WEXITSTATUS(r->target_status));
	}
	capture_writer__block(r->w, type, kv.data, kv.len);
	capture_buf__free(&kv);
}

/*
 * What recording cost gaptrace itself.  The snapshot accounting of the
 * default --cfi-samples (and its budget, cut at times) is nothing a user can
 * act on: shown under -v only; --stacks dwarf, asked for, shows it always.
 */
void record__report_cpu(struct recorder *r)
{
	struct rusage ru;
	double user, sys, secs = (double)(r->end_ns - r->start_ns) / 1e9;
	void (*say)(const char *fmt, ...) = r->o->dwarf ? gt_info : gt_dbg;
	struct unwind_stats us;
	char size[32];
	uint64_t n;

	if (getrusage(RUSAGE_SELF, &ru))
		return;
	user = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
	sys = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	gt_info("recorder CPU %.2f s user + %.2f s system (%.1f%% of one CPU)", user, sys,
		secs > 0 ? 100.0 * (user + sys) / secs : 0.0);
	if (r->cfi)
		record__report_unwind(r);
	if (!r->unw)
		return;
	unwinder__stats(r->unw, &us);
	n = r->stats[GT_STAT_USTACK_SENT];
	say("%s: %llu snapshots (%s, %llu B each in the ring buffer), %llu unwound (%.0f us "
	    "each), %llu dropped, %llu without a slot",
	    r->o->dwarf ? "dwarf" : "samples in code without frame pointers", (unsigned long long)n,
	    gt_fmt_bytes(r->stats[GT_STAT_USTACK_BYTES], size, sizeof(size)),
	    (unsigned long long)(n ? offsetof(struct gt_ustack, data) +
					 r->stats[GT_STAT_USTACK_BYTES] / n
				   : 0),
	    (unsigned long long)(us.snapshots - us.failed),
	    us.snapshots ? (double)us.cpu_ns / 1e3 / (double)us.snapshots : 0.0,
	    (unsigned long long)r->stats[GT_STAT_USTACK_LOST],
	    (unsigned long long)r->stats[GT_STAT_USTACK_FULL]);
	if (r->cfi_limit_min)
		gt_dbg("unwinding took over %.1f%% of a CPU at times: CPU samples' stack snapshots "
		       "were cut to as few as %u/s (--cfi-rate %u/s; %llu samples took the fp walk "
		       "instead)",
		       100 * cfi_cpu_share(), r->cfi_limit_min * 10,
		       r->skel->rodata->cfg_fpless_per_window * 10,
		       (unsigned long long)r->stats[GT_STAT_FPLESS_OVER]);
}

/* --stacks cfi: how the kernel's walks ended, and what the tables cost. */
void record__report_unwind(struct recorder *r)
{
	const struct cfimap_stats *cs = cfimap__stats(r->cfi);
	uint64_t walks = r->stats[GT_STAT_UNW_WALKS];
	char size[32], max[32], bud[32];

	gt_info("cfi: %llu user stacks walked, %.1f%% to the thread's root (%.1f frames each); "
		"ended: %llu in no mapping, %llu no table, %llu no row, %llu unsupported rule, "
		"%llu bad read, %llu at %d frames; tables: %u objects (%u frame pointers), "
		"%llu rows, %s of %s (largest %s, %s), %u cut by the budget, built in %.0f ms "
		"(longest rescan %.0f ms)",
		(unsigned long long)walks,
		walks ? 100.0 * (double)r->stats[GT_STAT_UNW_ROOT] / (double)walks : 0.0,
		walks ? (double)r->stats[GT_STAT_UNW_FRAMES] / (double)walks : 0.0,
		(unsigned long long)r->stats[GT_STAT_UNW_NO_MAPPING],
		(unsigned long long)r->stats[GT_STAT_UNW_NO_TABLE],
		(unsigned long long)r->stats[GT_STAT_UNW_NO_ROW],
		(unsigned long long)r->stats[GT_STAT_UNW_UNSUPPORTED],
		(unsigned long long)r->stats[GT_STAT_UNW_BAD_READ],
		(unsigned long long)r->stats[GT_STAT_UNW_DEPTH], GT_STACK_DEPTH, cs->cfi_objects,
		cs->fp_objects, (unsigned long long)cs->rows,
		gt_fmt_bytes(cs->bytes, size, sizeof(size)),
		gt_fmt_bytes(cs->budget, bud, sizeof(bud)), cs->max_name[0] ? cs->max_name : "-",
		gt_fmt_bytes(cs->max_bytes, max, sizeof(max)), cs->over_budget,
		(double)cs->build_ns / 1e6, (double)cs->update_max_ns / 1e6);
}

/* ---- BPF counters: LOSS records and the reader's nice ---- */

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

	record_sink__put(&r->sink, &l, sizeof(l));
	r->lost_loss_records++;
}

/*
 * --cfi-rate's budget assumes ~9 us per unwinding; objects with larger CFI
 * tables or deeper stacks cost more.  Every stats poll, when the recorder's
 * unwinding took more than cfi_cpu_share() of the time since the last poll,
 * BPF's per-window budget shrinks to fit; it grows back, at most to
 * --cfi-rate's, while under half of that.  Not with --stacks dwarf, whose
 * switch-out snapshots the user asked for and which share the unwinder.
 */
static void cfi_adapt(struct recorder *r, uint64_t now)
{
	uint32_t base = r->skel->rodata->cfg_fpless_per_window, lim = r->skel->bss->fpless_limit;
	double spent, allowed = cfi_cpu_share() * (double)(now - r->last_stats_ns);
	struct unwind_stats us;
	uint32_t next = lim;

	if (!r->unw || !base || r->o->dwarf || now <= r->last_stats_ns)
		return;
	unwinder__stats(r->unw, &us);
	spent = (double)(us.cpu_ns - r->unw_cpu_ns);
	r->unw_cpu_ns = us.cpu_ns;
	/* The first poll's unwinding includes reading each object's CFI once. */
	if (!r->cfi_adapting) {
		r->cfi_adapting = true;
		return;
	}
	if (spent > allowed)
		next = (uint32_t)GT_MAX(1.0, (double)lim * allowed / spent);
	else if (spent * 2 < allowed && lim < base)
		next = GT_MIN(base, lim * 2);
	if (next == lim)
		return;
	gt_dbg("unwinding took %.1f%% of a CPU: stack snapshots of CPU samples now %u/s "
	       "(--cfi-rate %u/s)",
	       100.0 * spent / (double)(now - r->last_stats_ns), next * 10, base * 10);
	if (!r->cfi_limit_min || next < r->cfi_limit_min)
		r->cfi_limit_min = next;
	r->skel->bss->fpless_limit = next;
}

/* Turns counter increases into LOSS records bounded by the polling window. */
void record__poll_stats(struct recorder *r, uint64_t now)
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
	cfi_adapt(r, now);
	misses = read_misses(r);
	if (misses > r->misses)
		emit_loss(r, GT_LOSS_RINGBUF, misses - r->misses, r->last_stats_ns, now);
	r->misses = misses;
	memcpy(r->stats, cur, sizeof(cur));
	r->last_stats_ns = now;
}
