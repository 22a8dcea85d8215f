// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * attach.c: puts gaptrace's uprobes, USDT probes and sampling events on a
 * traced process.  Every uprobe is attached with the target's pid, never -1,
 * so untraced processes never pay for them.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "record/attach.h"
#include "record/attach_priv.h"
#include "capture/capture.h"
#include "gaptrace.skel.h"
#include "symbols/elf.h"
#include "symbols/live.h"
#include "symbols/usdt.h"
#include "support/procfs.h"
#include "support/safeopen.h"
#include "support/util.h"

static const char *const usdt_names[] = {
    "unit_begin", "unit_end", "gpu_launch", "gpu_op", "gpu_batch", "gpu_name",
};

uint32_t probe_table__add(struct probe_table *t, const char *name, const char *module,
			  const char *category)
{
	struct probe_func *f;

	gt_grow((void **)&t->funcs, &t->cap, t->n, sizeof(*t->funcs));
	f = &t->funcs[t->n];
	f->id = (uint32_t)t->n;
	f->name = gt_xstrdup(name);
	f->module = gt_xstrdup(module ? module : "");
	f->category = gt_xstrdup(category);
	return (uint32_t)t->n++;
}

void probe_table__add_defaults(struct probe_table *t)
{
	/* Rare and heavy: called per partition, not per allocation. */
	static const char *const libc_alloc[] = {"malloc_trim", "munmap"};
	static const char *const libc_io[] = {"fsync", "fdatasync"};
	/*
	 * The driver's allocation calls (absent ones are skipped): pinned, device,
	 * managed, stream-ordered (and their per-thread-stream _ptsz entries),
	 * and the virtual memory management calls.  The runtime's
	 * cudaMalloc, cudaFree and cudaHost calls end in these.
	 */
	static const char *const cuda_alloc[] = {
	    "cuMemHostAlloc",
	    "cuMemFreeHost",
	    "cuMemHostRegister",
	    "cuMemHostRegister_v2",
	    "cuMemHostUnregister",
	    "cuMemAlloc_v2",
	    "cuMemFree_v2",
	    "cuMemAllocHost_v2",
	    "cuMemAllocManaged",
	    "cuMemAllocPitch_v2",
	    "cuMemAllocAsync",
	    "cuMemAllocAsync_ptsz",
	    "cuMemFreeAsync",
	    "cuMemFreeAsync_ptsz",
	    "cuMemAllocFromPoolAsync",
	    "cuMemAllocFromPoolAsync_ptsz",
	    "cuMemPoolTrimTo",
	    "cuMemCreate",
	    "cuMemRelease",
	    "cuMemMap",
	    "cuMemUnmap",
	    "cuMemSetAccess",
	    "cuMemAddressReserve",
	    "cuMemAddressFree",
	};
	static const char *const cuda_sync[] = {
	    "cuStreamSynchronize",
	    "cuCtxSynchronize",
	    "cuEventSynchronize",
	};
	size_t i;

	for (i = 0; i < GT_ARRAY_SIZE(libc_alloc); i++)
		probe_table__add(t, libc_alloc[i], "libc.so", "allocator");
	for (i = 0; i < GT_ARRAY_SIZE(libc_io); i++)
		probe_table__add(t, libc_io[i], "libc.so", "io");
	for (i = 0; i < GT_ARRAY_SIZE(cuda_alloc); i++)
		probe_table__add(t, cuda_alloc[i], "libcuda.so", "allocator");
	/* "sync": CUDA time, and the end of GPU busy time in the host-side view. */
	for (i = 0; i < GT_ARRAY_SIZE(cuda_sync); i++)
		probe_table__add(t, cuda_sync[i], "libcuda.so", "sync");
}

static bool valid_category(const char *c)
{
	static const char *const cats[] = {"scheduler", "lock", "allocator", "wait", "io",
					   "sleep",	"cuda", "cpu",	     "unit"};

	for (size_t i = 0; i < GT_ARRAY_SIZE(cats); i++)
		if (!strcmp(c, cats[i]))
			return true;
	return false;
}

int probe_table__parse(struct probe_table *t, const char *spec, char *err, size_t errlen)
{
	char buf[512], *eq, *colon, *func, *lib = NULL;
	const char *cat = "cpu";

	if (strlen(spec) >= sizeof(buf) || !*spec) {
		snprintf(err, errlen, "bad --probe '%s': expected [LIB:]FUNC[=CATEGORY]", spec);
		return -1;
	}
	strcpy(buf, spec);
	eq = strchr(buf, '=');
	if (eq) {
		*eq = '\0';
		cat = eq + 1;
		if (!valid_category(cat)) {
			snprintf(err, errlen,
				 "bad --probe '%s': unknown category '%s' (use scheduler, lock, "
				 "allocator, wait, io, sleep, cuda or cpu)",
				 spec, cat);
			return -1;
		}
	}
	colon = strrchr(buf, ':');
	func = buf;
	if (colon) {
		*colon = '\0';
		lib = buf;
		func = colon + 1;
	}
	if (!*func || (lib && !*lib)) {
		snprintf(err, errlen, "bad --probe '%s': expected [LIB:]FUNC[=CATEGORY]", spec);
		return -1;
	}
	probe_table__add(t, func, lib ? lib : "", cat);
	return 0;
}

void probe_table__emit(const struct probe_table *t, size_t first, struct capture_buf *b)
{
	for (size_t i = first; i < t->n; i++)
		capture_buf__probe(b, t->funcs[i].id, t->funcs[i].name, t->funcs[i].module,
				   t->funcs[i].category);
}

void probe_table__free(struct probe_table *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->funcs[i].name);
		free(t->funcs[i].module);
		free(t->funcs[i].category);
	}
	free(t->funcs);
	memset(t, 0, sizeof(*t));
}

struct attacher *attacher__new(struct gaptrace_bpf *skel, const struct probe_table *probes)
{
	struct attacher *a = gt_xcalloc(1, sizeof(*a));

	a->skel = skel;
	a->probes = probes;
	return a;
}

static void add_link(struct attacher *a, struct bpf_link *l)
{
	/* A process followed during the final drain: the detacher owns the list. */
	if (a->detached) {
		bpf_link__destroy(l);
		return;
	}
	gt_grow((void **)&a->links, &a->links_cap, a->nlinks, sizeof(*a->links));
	a->links[a->nlinks++] = l;
}

static struct bpf_program *usdt_prog(struct attacher *a, size_t i)
{
	struct gaptrace_bpf *s = a->skel;
	struct bpf_program *progs[] = {
	    s->progs.usdt_unit_begin, s->progs.usdt_unit_end,  s->progs.usdt_gpu_launch,
	    s->progs.usdt_gpu_op,     s->progs.usdt_gpu_batch, s->progs.usdt_gpu_name,
	};

	return progs[i];
}

static int usdt_cb(const char *name, void *ctx)
{
	unsigned *mask = ctx;

	for (size_t i = 0; i < GT_ARRAY_SIZE(usdt_names); i++)
		if (!strcmp(name, usdt_names[i]))
			*mask |= 1U << i;
	return 0;
}

static bool module_matches(const char *pattern, const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !*pattern || !strncmp(base, pattern, strlen(pattern));
}

/*
 * The process has no thread left that runs: it exited (maybe still a zombie).
 * Marks the attacher so no further probe waits in the kernel for nothing.
 */
static bool target_gone(struct attacher *a, pid_t pid)
{
	if (a->gone_pid != pid) {
		a->gone_pid = pid;
		a->gone = a->gone_said = false;
	}
	if (!a->gone && procfs_live_thread(pid, 0) <= 0)
		a->gone = true;
	return a->gone;
}

/*
 * A uprobe registration can block in the kernel for seconds under load:
 * behind 32 busy threads on 2 CPUs the first one took 0.15-2.8 s here (the
 * later ones milliseconds), asleep in register_for_each_vma -> rcu_sync_enter
 * -> synchronize_rcu_expedited (/proc/PID/stack).  Said under -v.
 */
static void note_slow(const char *what, const char *name, pid_t pid, uint64_t t0)
{
	uint64_t ns = gt_now_mono_ns() - t0;

	if (ns >= 100 * NSEC_PER_MSEC)
		gt_dbg("the kernel took %.2f s to register %s %s (pid %d)", (double)ns / 1e9, what,
		       name, pid);
}

/*
 * A uprobe's pid filter is the process's mm, so any live thread of it serves;
 * but perf_event_open refuses (ESRCH) a thread that is exiting, and a
 * leader that called pthread_exit stays a zombie while the others run: a
 * refused attach is retried through another live thread (procfs_live_thread).
 * errno is the attach's, not the retry's /proc lookup's.
 */
static struct bpf_link *uprobe_link(struct attacher *a, const struct bpf_program *prog, pid_t pid,
				    const char *path, const struct bpf_uprobe_opts *o)
{
	uint64_t t0 = gt_now_mono_ns();
	struct bpf_link *l = bpf_program__attach_uprobe_opts(prog, pid, path, 0, o);
	int err = l ? 0 : errno;
	pid_t alt;

	note_slow("uprobe", o->func_name, pid, t0);
	if (!l && err == ESRCH && (alt = procfs_live_thread(pid, pid)) > 0) {
		gt_dbg("pid %d refused a uprobe (exiting leader): attaching through thread %d", pid,
		       alt);
		l = bpf_program__attach_uprobe_opts(prog, alt, path, 0, o);
		err = l ? 0 : errno;
	}
	if (!l && err == ESRCH)
		target_gone(a, pid);
	errno = err;
	return l;
}

static struct bpf_link *usdt_link(struct attacher *a, const struct bpf_program *prog, pid_t pid,
				  const char *path, const char *name)
{
	uint64_t t0 = gt_now_mono_ns();
	struct bpf_link *l = bpf_program__attach_usdt(prog, pid, path, "gaptrace", name, NULL);
	int err = l ? 0 : errno;
	pid_t alt;

	note_slow("USDT probe", name, pid, t0);
	if (!l && err == ESRCH && (alt = procfs_live_thread(pid, pid)) > 0) {
		l = bpf_program__attach_usdt(prog, alt, path, "gaptrace", name, NULL);
		err = l ? 0 : errno;
	}
	if (!l && err == ESRCH)
		target_gone(a, pid);
	errno = err;
	return l;
}

/* Said once: everything not attached yet is missing, and why. */
static void warn_gone(struct attacher *a, pid_t pid, const char *what, const char *name)
{
	if (a->gone_said)
		return;
	a->gone_said = true;
	if (pid != a->target) {
		gt_dbg("followed pid %d exited while gaptrace was attaching %s %s", pid, what,
		       name);
		return;
	}
	gt_warn("pid %d exited while gaptrace was attaching %s %s: it and the probes not yet "
		"attached are missing from the capture",
		pid, what, name);
}

static void mark_attached(struct attacher *a, size_t i)
{
	size_t old = a->attached_cap;

	gt_grow((void **)&a->attached, &a->attached_cap, i, sizeof(*a->attached));
	memset(a->attached + old, 0, (a->attached_cap - old) * sizeof(*a->attached));
	a->attached[i] = true;
}

static int attach_usdt(struct attacher *a, pid_t pid, const char *path)
{
	unsigned mask = 0;
	int n = 0;

	if (a->gone || syms_elf_usdt_probes(path, "gaptrace", usdt_cb, &mask) <= 0)
		return 0;
	for (size_t i = 0; i < GT_ARRAY_SIZE(usdt_names); i++) {
		struct bpf_link *l;

		if (!(mask & (1U << i)))
			continue;
		l = usdt_link(a, usdt_prog(a, i), pid, path, usdt_names[i]);
		if (!l && a->gone) {
			warn_gone(a, pid, "USDT probe", usdt_names[i]);
			break;
		}
		if (!l) {
			gt_warn("cannot attach USDT gaptrace:%s in %s (pid %d): %s; its records "
				"will be missing",
				usdt_names[i], path, pid, strerror(errno));
			continue;
		}
		add_link(a, l);
		a->usdt_links++;
		a->usdt_seen |= 1U << i;
		n++;
	}
	if (n)
		gt_dbg("attached %d USDT probes in %s (pid %d)", n, path, pid);
	return n;
}

/*
 * name: the object's own path (matched against probe modules); path: where to
 * open it.  Probes from table index first on.
 */
static int attach_uprobes(struct attacher *a, pid_t pid, const char *name, const char *path,
			  size_t first)
{
	int n = 0;

	for (size_t i = first; i < a->probes->n && !a->gone; i++) {
		const struct probe_func *f = &a->probes->funcs[i];
		struct bpf_link *enter, *ret;

		/* A probe without a library looks in every object that defines it. */
		if (!module_matches(f->module, name))
			continue;
		if (!syms_elf_has_func(path, f->name))
			continue;
		LIBBPF_OPTS(bpf_uprobe_opts, eo, .func_name = f->name, .bpf_cookie = f->id);
		LIBBPF_OPTS(bpf_uprobe_opts, ro, .func_name = f->name, .bpf_cookie = f->id,
			    .retprobe = true);
		enter = uprobe_link(a, a->skel->progs.call_enter, pid, path, &eo);
		if (!enter && a->gone) {
			warn_gone(a, pid, "uprobe", f->name);
			break;
		}
		if (!enter) {
			gt_warn("cannot attach uprobe %s in %s (pid %d): %s", f->name, path, pid,
				strerror(errno));
			continue;
		}
		ret = uprobe_link(a, a->skel->progs.call_exit, pid, path, &ro);
		if (!ret && a->gone) {
			warn_gone(a, pid, "uretprobe", f->name);
			bpf_link__destroy(enter);
			break;
		}
		if (!ret) {
			gt_warn("cannot attach uretprobe %s in %s (pid %d): %s", f->name, path, pid,
				strerror(errno));
			bpf_link__destroy(enter);
			continue;
		}
		add_link(a, enter);
		add_link(a, ret);
		a->uprobe_links++;
		mark_attached(a, i);
		n++;
		gt_dbg("uprobe %s (%s) in %s (pid %d)", f->name, f->category, path, pid);
	}
	return n;
}

/*
 * The dynamic loader (ld-linux-x86-64.so.2, ld-linux-aarch64.so.1): a uprobe
 * on its _dl_debug_state, which it calls around every dlopen and dlclose,
 * tells the recorder when to look for new probe sites (see loader_state in
 * bpf/gaptrace.bpf.c).  One link per process, like every uprobe here.
 */
static int attach_loader(struct attacher *a, pid_t pid, const char *name, const char *path)
{
	const char *base = strrchr(name, '/');
	struct bpf_link *l;

	base = base ? base + 1 : name;
	if (a->gone || strncmp(base, "ld-", 3) || !strstr(base, ".so") ||
	    !syms_elf_has_func(path, "_dl_debug_state"))
		return 0;
	LIBBPF_OPTS(bpf_uprobe_opts, o, .func_name = "_dl_debug_state");
	l = uprobe_link(a, a->skel->progs.loader_state, pid, path, &o);
	if (!l) {
		if (!a->gone)
			gt_warn("cannot attach a uprobe to the loader %s (pid %d): %s; probes of "
				"libraries it dlopens are found only by the periodic rescan",
				path, pid, strerror(errno));
		return 0;
	}
	add_link(a, l);
	a->loader_links++;
	gt_dbg("loader hook _dl_debug_state in %s (pid %d)", path, pid);
	return 0;
}

static bool seen_before(struct attacher *a, pid_t pid, const struct syms_mapping *m);

/*
 * A scan of pid starts: gone, gone_said and a failed uprobe's ESRCH are
 * about that process (a followed child may exit while the target lives).
 */
static void scan_begins(struct attacher *a, pid_t pid)
{
	if (!a->target)
		a->target = pid;
	if (a->gone_pid != pid) {
		a->gone_pid = pid;
		a->gone_said = false;
	}
	/*
	 * Judged again each scan: a child caught in exec looks gone for a
	 * moment (libbpf finds its binary in no mapping: ESRCH) and is not.
	 */
	a->gone = false;
}

int attacher__attach_object(struct attacher *a, pid_t pid, const char *path)
{
	struct syms_mapping m = {.path = path};
	struct stat st;

	scan_begins(a, pid);
	/* Remember the object so a later maps scan does not attach it twice. */
	if (stat(path, &st) == 0) {
		m.inode = st.st_ino;
		m.dev_major = major(st.st_dev);
		m.dev_minor = minor(st.st_dev);
		if (seen_before(a, pid, &m))
			return 0;
	}
	return attach_usdt(a, pid, path) + attach_uprobes(a, pid, path, path, 0);
}

struct scan_ctx {
	struct attacher *a;
	pid_t pid; /* the process (seen objects are keyed by it) */
	pid_t via; /* the thread whose maps, root and probes serve (maps_thread) */
	int attached;
};

/*
 * The thread to read a process's maps through: the leader, unless it called
 * pthread_exit (a zombie leader has no maps while its threads run).
 */
static pid_t maps_thread(pid_t pid)
{
	struct procfs_stat st;
	pid_t alt;

	if (!procfs_stat_read(pid, 0, &st) && st.state == 'Z' &&
	    (alt = procfs_live_thread(pid, pid)) > 0)
		return alt;
	return pid;
}

static bool seen_before(struct attacher *a, pid_t pid, const struct syms_mapping *m)
{
	for (size_t i = 0; i < a->nseen; i++) {
		const struct seen_obj *s = &a->seen[i];

		if (s->pid == pid && s->inode == m->inode && s->dev_major == m->dev_major &&
		    s->dev_minor == m->dev_minor)
			return true;
	}
	gt_grow((void **)&a->seen, &a->seen_cap, a->nseen, sizeof(*a->seen));
	a->seen[a->nseen++] = (struct seen_obj){pid, m->inode, m->dev_major, m->dev_minor};
	return false;
}

/* Where to open a mapped object of pid: through its root, else the mapping itself. */
static void mapping_path(pid_t pid, const struct syms_mapping *m, char *path, size_t len)
{
	/* Through the target's root, so a container's files resolve to its inodes. */
	procfs_root_path(path, len, pid, m->path);
	/* A maps text that is not the file's name (escaped, deleted) is never opened by name. */
	if (!safeopen_path_plain(m->path) || access(path, R_OK)) {
		/*
		 * Deleted files and memfds (an injected library is one) exist only
		 * as the mapping: map_files names that very inode.
		 */
		procfs_map_files_path(path, len, pid, m->start, m->end);
		if (access(path, R_OK))
			snprintf(path, len, "%s", m->path);
	}
}

static int scan_cb(const struct syms_mapping *m, void *ctx)
{
	struct scan_ctx *sc = ctx;
	char path[4096 + 32];

	if (sc->a->gone)
		return 1; /* the rest waits for the next scan */
	if (!m->exec || !m->inode || m->path[0] != '/')
		return 0;
	if (seen_before(sc->a, sc->pid, m))
		return 0;
	mapping_path(sc->via, m, path, sizeof(path));
	sc->attached +=
	    attach_usdt(sc->a, sc->via, path) + attach_uprobes(sc->a, sc->via, m->path, path, 0);
	attach_loader(sc->a, sc->via, m->path, path);
	/* Cut short (the process exited or was exec'ing): the next scan tries it again. */
	if (sc->a->gone)
		sc->a->nseen--;
	if (sc->a->progress)
		sc->a->progress(sc->a->progress_ctx, sc->a->nseen,
				sc->a->usdt_links + sc->a->uprobe_links);
	return 0;
}

struct late_ctx {
	struct attacher *a;
	pid_t pid, via; /* as in struct scan_ctx */
	size_t first;
	int attached;
	struct seen_obj last; /* the previous mapping's object */
};

static int late_cb(const struct syms_mapping *m, void *ctx)
{
	struct late_ctx *lc = ctx;
	char path[4096 + 32];

	if (!m->exec || !m->inode || m->path[0] != '/')
		return 0;
	/* An object's executable mappings are adjacent: it is handled once. */
	if (lc->last.inode == m->inode && lc->last.dev_major == m->dev_major &&
	    lc->last.dev_minor == m->dev_minor)
		return 0;
	lc->last = (struct seen_obj){lc->pid, m->inode, m->dev_major, m->dev_minor};
	mapping_path(lc->via, m, path, sizeof(path));
	if (seen_before(lc->a, lc->pid, m)) {
		lc->attached += attach_uprobes(lc->a, lc->via, m->path, path, lc->first);
	} else {
		/* Mapped since the last scan: everything, as that scan would have. */
		attach_usdt(lc->a, lc->via, path);
		lc->attached += attach_uprobes(lc->a, lc->via, m->path, path, 0);
		attach_loader(lc->a, lc->via, m->path, path);
	}
	return 0;
}

int attacher__attach_probes_from(struct attacher *a, pid_t pid, size_t first)
{
	struct late_ctx lc = {.a = a, .pid = pid, .via = maps_thread(pid), .first = first};
	int err;

	scan_begins(a, lc.via);
	err = syms_read_exec_mappings((uint32_t)lc.via, late_cb, &lc);

	return err < 0 ? err : lc.attached;
}

struct self_ctx {
	const char *prefix;
	char path[4096];
};

static int self_cb(const struct syms_mapping *m, void *ctx)
{
	struct self_ctx *sc = ctx;
	const char *base = strrchr(m->path, '/');

	if (!m->exec || !base || strncmp(base + 1, sc->prefix, strlen(sc->prefix)))
		return 0;
	snprintf(sc->path, sizeof(sc->path), "%s", m->path);
	return 1;
}

int attacher__attach_like_self(struct attacher *a, pid_t pid, const char *prefix)
{
	struct self_ctx sc = {.prefix = prefix};

	syms_read_exec_mappings((uint32_t)getpid(), self_cb, &sc);
	return sc.path[0] ? attacher__attach_object(a, pid, sc.path) : 0;
}

int attacher__scan(struct attacher *a, pid_t pid)
{
	struct scan_ctx sc = {a, pid, maps_thread(pid), 0};
	int err;

	scan_begins(a, sc.via);
	err = syms_read_exec_mappings((uint32_t)sc.via, scan_cb, &sc);

	return err < 0 ? err : sc.attached;
}

/* tid >= 0: that thread on any CPU (inherited); tid -1: everything on cpu. */
static int open_sampler(pid_t tid, int cpu, uint64_t period_ns)
{
	struct perf_event_attr attr = {
	    .type = PERF_TYPE_SOFTWARE,
	    .size = sizeof(attr),
	    .config = PERF_COUNT_SW_CPU_CLOCK,
	    .sample_period = period_ns,
	    /* Threads and children created later inherit the event (and its program). */
	    .inherit = tid >= 0,
	};

	return (int)syscall(SYS_perf_event_open, &attr, tid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static int add_sampler(struct attacher *a, int fd)
{
	struct bpf_link *l = bpf_program__attach_perf_event(a->skel->progs.on_sample, fd);

	if (!l) {
		int err = -errno;

		close(fd);
		return err;
	}
	add_link(a, l);
	gt_grow((void **)&a->perf_fds, &a->perf_cap, a->nperf, sizeof(*a->perf_fds));
	a->perf_fds[a->nperf++] = fd;
	a->samplers++;
	return 0;
}

/*
 * Opens and attaches the sampler of thread tid (cpu -1) or of cpu (tid -1),
 * warning why not unless the thread has exited or the CPU is offline.
 * Returns 0 or -errno.
 */
static int start_sampler(struct attacher *a, pid_t tid, int cpu, uint64_t period_ns)
{
	const char *what = tid >= 0 ? "thread" : "CPU";
	int id = tid >= 0 ? tid : cpu;
	int fd = open_sampler(tid, cpu, period_ns), err;

	if (fd < 0) {
		err = -errno;
		if (err != (tid >= 0 ? -ESRCH : -ENODEV)) /* ENODEV: an offline CPU */
			gt_warn("cannot open a cpu-clock event on %s %d: %s; %s", what, id,
				strerror(-err),
				tid >= 0
				    ? "its CPU time will not be split"
				    : "CPU time there will not be split (try --sampler thread)");
		return err;
	}
	err = add_sampler(a, fd);
	if (err)
		gt_warn("cannot attach the sampler to %s %d: %s", what, id, strerror(-err));
	return err;
}

int attacher__sample_cpus(struct attacher *a, uint64_t period_ns)
{
	int n = libbpf_num_possible_cpus(), covered = 0, err = 0;

	if (!period_ns)
		return 0;
	if (n < 0)
		return n;
	for (int cpu = 0; cpu < n; cpu++) {
		err = start_sampler(a, -1, cpu, period_ns);
		if (!err)
			covered++;
	}
	return covered ? covered : err;
}

int attacher__sample_threads(struct attacher *a, pid_t pid, uint64_t period_ns)
{
	struct procfs_tasks it;
	int covered = 0, err;
	pid_t tid;

	if (!period_ns)
		return 0;
	err = procfs_tasks_open(&it, pid);
	if (err)
		return err;
	while ((tid = procfs_tasks_next(&it)))
		if (!start_sampler(a, tid, -1, period_ns))
			covered++;
	procfs_tasks_close(&it);
	return covered;
}

void attacher__forget(struct attacher *a, pid_t pid)
{
	size_t n = 0;

	for (size_t i = 0; i < a->nseen; i++)
		if (a->seen[i].pid != pid)
			a->seen[n++] = a->seen[i];
	a->nseen = n;
}

bool attacher__target_gone(struct attacher *a, pid_t pid)
{
	return target_gone(a, pid);
}

size_t attacher__attached_names(const struct attacher *a, char *buf, size_t len)
{
	size_t off = 0;

	if (len)
		buf[0] = '\0';
	for (size_t i = 0; i < a->attached_cap && i < a->probes->n; i++) {
		int n;

		if (!a->attached[i])
			continue;
		n = snprintf(buf + off, len - off, "%s%s", off ? "," : "",
			     a->probes->funcs[i].name);
		if (n < 0 || (size_t)n >= len - off) {
			buf[off] = '\0';
			break;
		}
		off += (size_t)n;
	}
	return off;
}

unsigned attacher__usdt_links(const struct attacher *a)
{
	return a->usdt_links;
}

unsigned attacher__uprobe_links(const struct attacher *a)
{
	return a->uprobe_links;
}

unsigned attacher__sample_events(const struct attacher *a)
{
	return a->samplers;
}

bool attacher__has_usdt(const struct attacher *a, const char *name)
{
	for (size_t i = 0; i < GT_ARRAY_SIZE(usdt_names); i++)
		if (!strcmp(name, usdt_names[i]))
			return a->usdt_seen & (1U << i);
	return false;
}

void attacher__free(struct attacher *a)
{
	if (!a)
		return;
	attacher__detach(a);
	if (a->detaching)
		pthread_join(a->detacher, NULL);
	if (a->ndetach)
		gt_dbg("detached %zu uprobe/USDT links in %.1f ms", a->ndetach,
		       (double)(gt_now_mono_ns() - a->detach_from_ns) / 1e6);
	free(a->links);
	free(a->perf_fds);
	free(a->seen);
	free(a->attached);
	free(a);
}
