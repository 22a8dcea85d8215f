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
#include "symbols/func_offsets.h"
#include "symbols/live.h"
#include "support/procfs.h"
#include "support/safeopen.h"
#include "support/util.h"

struct attacher *attacher__new(struct gaptrace_bpf *skel, const struct probe_table *probes)
{
	struct attacher *a = gt_xcalloc(1, sizeof(*a));

	a->skel = skel;
	a->probes = probes;
	a->multi = bpf_program__autoload(skel->progs.call_enter_multi);
	pthread_mutex_init(&a->usdt_lock, NULL);
	pthread_mutex_init(&a->reap_lock, NULL);
	pthread_cond_init(&a->reap_cond, NULL);
	attach__reapers_start(a);
	return a;
}

/*
 * Keeps l, made for the process being attached (a->link_pid), so that it is
 * released when that process exits.
 */
void attach__add_link(struct attacher *a, struct bpf_link *l, unsigned spec_ids, bool usdt)
{
	struct gt_link g = {l, a->link_pid, spec_ids, usdt};

	/* A process followed during the final drain: the detacher owns the list. */
	if (a->detached) {
		attach__destroy_link(a, &g);
		return;
	}
	__atomic_store_n(&a->last_attach_ns, gt_now_mono_ns(), __ATOMIC_RELAXED);
	pthread_mutex_lock(&a->reap_lock);
	gt_grow((void **)&a->links, &a->links_cap, a->nlinks, sizeof(*a->links));
	a->links[a->nlinks++] = g;
	pthread_mutex_unlock(&a->reap_lock);
}

static void add_link(struct attacher *a, struct bpf_link *l)
{
	attach__add_link(a, l, 0, false);
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
bool attach__target_gone(struct attacher *a, pid_t pid)
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
void attach__note_slow(const char *what, const char *name, pid_t pid, uint64_t t0)
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

	attach__note_slow("uprobe", o->func_name, pid, t0);
	if (!l && err == ESRCH && (alt = procfs_live_thread(pid, pid)) > 0) {
		gt_dbg("pid %d refused a uprobe (exiting leader): attaching through thread %d", pid,
		       alt);
		l = bpf_program__attach_uprobe_opts(prog, alt, path, 0, o);
		err = l ? 0 : errno;
	}
	if (!l && err == ESRCH)
		attach__target_gone(a, pid);
	errno = err;
	return l;
}

/* Said once: everything not attached yet is missing, and why. */
void attach__warn_gone(struct attacher *a, pid_t pid, const char *what, const char *name)
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

/* A limit (fds) refused an attach: said once, counted for the summary. */
void attach__note_refused(struct attacher *a, pid_t pid, int err)
{
	if (err != EMFILE && err != ENFILE)
		return;
	if (!a->fd_refused++)
		gt_warn("out of file descriptors attaching to pid %d (%s): its probes and those of "
			"later processes are missing; raise 'ulimit -n' (counted in the summary)",
			pid, strerror(err));
}

bool attach__room(struct attacher *a, pid_t pid)
{
	size_t held;

	pthread_mutex_lock(&a->reap_lock);
	held = a->nlinks + a->nreap;
	pthread_mutex_unlock(&a->reap_lock);
	/* An object adds at most ~10 links (6 USDT probes, uprobes, the loader hook). */
	if (held + 16 <= GT_MAX_LINKS)
		return true;
	if (!a->link_capped++)
		gt_warn(
		    "%zu probe links held (gaptrace's limit): objects of pid %d and others wait "
		    "for processes to exit before they are probed (counted in the summary)",
		    held, pid);
	return false;
}

static void mark_attached(struct attacher *a, size_t i)
{
	size_t old = a->attached_cap;

	gt_grow((void **)&a->attached, &a->attached_cap, i, sizeof(*a->attached));
	memset(a->attached + old, 0, (a->attached_cap - old) * sizeof(*a->attached));
	a->attached[i] = true;
}

/*
 * name: the object's own path (matched against probe modules); path: where to
 * open it.  Probes from table index first on.
 */
static void note_attached(struct attacher *a, pid_t pid, const char *path, size_t i)
{
	const struct probe_func *f = &a->probes->funcs[i];

	a->uprobe_links++;
	mark_attached(a, i);
	gt_dbg("uprobe %s (%s) in %s (pid %d)", f->name, f->category, path, pid);
}

/*
 * The probed functions of the object (from table index first on) as two
 * multi-uprobe links, entries and returns; done[i] says which.  Returns the
 * number attached; those left (refused for another reason than the
 * process's exit, or not placed by offset) get single uprobes.
 */
static int attach_uprobes_multi(struct attacher *a, pid_t pid, const char *name, const char *path,
				size_t first, bool *done)
{
	size_t max = a->probes->n - first, cnt = 0;
	const char **names = gt_xcalloc(max, sizeof(*names));
	unsigned long *offs = gt_xcalloc(max, sizeof(*offs));
	uint64_t *cookies = gt_xcalloc(max, sizeof(*cookies));
	size_t *idx = gt_xcalloc(max, sizeof(*idx));
	struct bpf_link *enter = NULL, *ret = NULL;
	int n = 0;

	for (size_t i = first; i < a->probes->n; i++) {
		const struct probe_func *f = &a->probes->funcs[i];

		if (module_matches(f->module, name) && syms_elf_has_func(path, f->name)) {
			names[cnt] = f->name;
			idx[cnt++] = i;
		}
	}
	if (!cnt || a->gone || syms_elf_func_offsets(path, names, cnt, offs) <= 0)
		goto cleanup;
	/* Placed ones first, in table order. */
	for (size_t k = 0, m = 0; k < cnt; k++) {
		if (!offs[k])
			continue;
		names[m] = names[k];
		offs[m] = offs[k];
		cookies[m] = a->probes->funcs[idx[k]].id;
		idx[m++] = idx[k];
		n = (int)m;
	}
	cnt = (size_t)n;
	n = 0;
	enter = attach__multi_link(a, a->skel->progs.call_enter_multi, pid, path, names[0], offs,
				   cookies, cnt, false);
	if (enter)
		ret = attach__multi_link(a, a->skel->progs.call_exit_multi, pid, path, names[0],
					 offs, cookies, cnt, true);
	if (!ret && a->gone) {
		attach__warn_gone(a, pid, enter ? "uretprobe" : "uprobe", names[0]);
		goto cleanup;
	}
	if (!ret) {
		attach__note_refused(a, pid, errno);
		gt_dbg("multi-uprobe links on %s (pid %d) refused: %s; trying single uprobes", name,
		       pid, strerror(errno));
		goto cleanup;
	}
	add_link(a, enter);
	add_link(a, ret);
	enter = ret = NULL;
	for (size_t k = 0; k < cnt; k++) {
		done[idx[k]] = true;
		note_attached(a, pid, name, idx[k]);
	}
	n = (int)cnt;
cleanup:
	bpf_link__destroy(enter);
	free(names);
	free(offs);
	free(cookies);
	free(idx);
	return n;
}

static int attach_uprobes(struct attacher *a, pid_t pid, const char *name, const char *path,
			  size_t first)
{
	bool *done = gt_xcalloc(a->probes->n + 1, sizeof(*done));
	int n = a->multi && first < a->probes->n
		    ? attach_uprobes_multi(a, pid, name, path, first, done)
		    : 0;

	for (size_t i = first; i < a->probes->n && !a->gone; i++) {
		const struct probe_func *f = &a->probes->funcs[i];
		struct bpf_link *enter, *ret;

		/* A probe without a library looks in every object that defines it. */
		if (done[i] || !module_matches(f->module, name))
			continue;
		if (!syms_elf_has_func(path, f->name))
			continue;
		LIBBPF_OPTS(bpf_uprobe_opts, eo, .func_name = f->name, .bpf_cookie = f->id);
		LIBBPF_OPTS(bpf_uprobe_opts, ro, .func_name = f->name, .bpf_cookie = f->id,
			    .retprobe = true);
		enter = uprobe_link(a, a->skel->progs.call_enter, pid, path, &eo);
		if (!enter && a->gone) {
			attach__warn_gone(a, pid, "uprobe", f->name);
			break;
		}
		if (!enter) {
			attach__note_refused(a, pid, errno);
			gt_warn("cannot attach uprobe %s in %s (pid %d): %s", f->name, name, pid,
				strerror(errno));
			continue;
		}
		ret = uprobe_link(a, a->skel->progs.call_exit, pid, path, &ro);
		if (!ret && a->gone) {
			attach__warn_gone(a, pid, "uretprobe", f->name);
			bpf_link__destroy(enter);
			break;
		}
		if (!ret) {
			attach__note_refused(a, pid, errno);
			gt_warn("cannot attach uretprobe %s in %s (pid %d): %s", f->name, name, pid,
				strerror(errno));
			bpf_link__destroy(enter);
			continue;
		}
		add_link(a, enter);
		add_link(a, ret);
		note_attached(a, pid, name, i);
		n++;
	}
	free(done);
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
	struct bpf_link *l = NULL;

	base = base ? base + 1 : name;
	if (a->gone || strncmp(base, "ld-", 3) || !strstr(base, ".so") ||
	    !syms_elf_has_func(path, "_dl_debug_state"))
		return 0;
	LIBBPF_OPTS(bpf_uprobe_opts, o, .func_name = "_dl_debug_state");
	if (a->multi) {
		const char *sym = "_dl_debug_state";
		unsigned long off = 0;
		uint64_t cookie = 0;

		if (syms_elf_func_offsets(path, &sym, 1, &off) == 1)
			l = attach__multi_link(a, a->skel->progs.loader_state_multi, pid, path, sym,
					       &off, &cookie, 1, false);
	}
	if (!l && !a->gone)
		l = uprobe_link(a, a->skel->progs.loader_state, pid, path, &o);
	if (!l) {
		attach__note_refused(a, pid, errno);
		if (!a->gone)
			gt_warn("cannot attach a uprobe to the loader %s (pid %d): %s; probes of "
				"libraries it dlopens are found only by the periodic rescan",
				name, pid, strerror(errno));
		return 0;
	}
	add_link(a, l);
	a->loader_links++;
	gt_dbg("loader hook _dl_debug_state in %s (pid %d)", name, pid);
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
	char self[64];
	struct stat st;
	int fd, n;

	scan_begins(a, pid);
	a->link_pid = pid;
	/* Opened once, used through /proc/self/fd as a mapping is (mapping_open). */
	fd = safeopen_trusted(path, &st);
	if (fd < 0) {
		gt_dbg("cannot open %s for its probes: %s", path, strerror(-fd));
		return 0;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	/* Remember the object so a later maps scan does not attach it twice. */
	m.inode = st.st_ino;
	m.dev_major = major(st.st_dev);
	m.dev_minor = minor(st.st_dev);
	n = 0;
	if (!seen_before(a, pid, &m) && attach__room(a, pid))
		n = attach__usdt(a, pid, path, self) + attach_uprobes(a, pid, path, self, 0);
	close(fd);
	return n;
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

static uint64_t seen_key(const struct seen_obj *s)
{
	uint64_t k[3] = {(uint64_t)s->pid, s->inode, (uint64_t)s->dev_major << 32 | s->dev_minor};

	return gt_hash64(k, sizeof(k), 0);
}

static bool seen_same(const struct seen_obj *x, const struct seen_obj *y)
{
	return x->pid == y->pid && x->inode == y->inode && x->dev_major == y->dev_major &&
	       x->dev_minor == y->dev_minor;
}

/*
 * Through a hash of the object: scans of a process mapping 21,000 objects
 * compared each with every one before it (4.7% of the recorder's CPU).
 * An object the index lacks is new; where the index points past nseen or
 * at another object (a cut scan, a collision) the list is searched.
 */
static bool seen_before(struct attacher *a, pid_t pid, const struct syms_mapping *m)
{
	struct seen_obj o = {pid, m->inode, m->dev_major, m->dev_minor};
	uint64_t key = seen_key(&o), i;

	if (u64map_get(&a->seen_index, key, &i)) {
		if (i < a->nseen && seen_same(&a->seen[i], &o))
			return true;
		for (i = 0; i < a->nseen; i++)
			if (seen_same(&a->seen[i], &o))
				return true;
	}
	gt_grow((void **)&a->seen, &a->seen_cap, a->nseen, sizeof(*a->seen));
	a->seen[a->nseen] = o;
	u64map_put(&a->seen_index, key, a->nseen++);
	return false;
}

/*
 * Opens the object of mapping m of pid once (safeopen_mapped: the mapped
 * inode through map_files, else its name in pid's root, checked to be that
 * inode) and names that open file for libbpf and the kernel in path:
 * /proc/self/fd/N.  Both look the name they are given up again: a name
 * the target controls, checked here, could be swapped before those opens
 * for a FIFO (libbpf blocks in open) or another ELF (the probes go to an
 * inode that never runs here); the magic link is the checked file itself.
 * Returns the fd (closed after the attach) or -errno.
 */
static int mapping_open(pid_t pid, const struct syms_mapping *m, char *path, size_t len)
{
	int fd = safeopen_mapped(pid, m->start, m->end, m->path, m->inode, NULL);

	if (fd >= 0)
		snprintf(path, len, "/proc/self/fd/%d", fd);
	return fd;
}

static int scan_cb(const struct syms_mapping *m, void *ctx)
{
	struct scan_ctx *sc = ctx;
	char path[64];
	int fd;

	if (sc->a->gone)
		return 1; /* the rest waits for the next scan */
	if (!m->exec || !m->inode || m->path[0] != '/')
		return 0;
	/* Before seen_before: an object put off is tried again by a later scan. */
	if (!attach__room(sc->a, sc->pid) || seen_before(sc->a, sc->pid, m))
		return 0;
	fd = mapping_open(sc->via, m, path, sizeof(path));
	if (fd < 0) {
		gt_dbg("pid %d: cannot open %s for its probes: %s", sc->pid, m->path,
		       strerror(-fd));
		return 0;
	}
	sc->attached += attach__usdt(sc->a, sc->via, m->path, path) +
			attach_uprobes(sc->a, sc->via, m->path, path, 0);
	attach_loader(sc->a, sc->via, m->path, path);
	close(fd);
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
	char path[64];
	int fd;

	if (!m->exec || !m->inode || m->path[0] != '/')
		return 0;
	/* An object's executable mappings are adjacent: it is handled once. */
	if (lc->last.inode == m->inode && lc->last.dev_major == m->dev_major &&
	    lc->last.dev_minor == m->dev_minor)
		return 0;
	lc->last = (struct seen_obj){lc->pid, m->inode, m->dev_major, m->dev_minor};
	if (!attach__room(lc->a, lc->pid))
		return 0;
	fd = mapping_open(lc->via, m, path, sizeof(path));
	if (fd < 0)
		return 0;
	if (seen_before(lc->a, lc->pid, m)) {
		lc->attached += attach_uprobes(lc->a, lc->via, m->path, path, lc->first);
	} else {
		/* Mapped since the last scan: everything, as that scan would have. */
		attach__usdt(lc->a, lc->via, m->path, path);
		lc->attached += attach_uprobes(lc->a, lc->via, m->path, path, 0);
		attach_loader(lc->a, lc->via, m->path, path);
	}
	close(fd);
	return 0;
}

int attacher__attach_probes_from(struct attacher *a, pid_t pid, size_t first)
{
	struct late_ctx lc = {.a = a, .pid = pid, .via = maps_thread(pid), .first = first};
	int err;

	scan_begins(a, lc.via);
	a->link_pid = pid;
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
	a->link_pid = pid;
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
	pid_t pid = a->link_pid;

	if (!l) {
		int err = -errno;

		close(fd);
		return err;
	}
	/* Samplers stay to the stop: attacher__detach closes their fds first. */
	a->link_pid = 0;
	add_link(a, l);
	a->link_pid = pid;
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

	u64map_clear(&a->seen_index);
	for (size_t i = 0; i < a->nseen; i++)
		if (a->seen[i].pid != pid) {
			a->seen[n] = a->seen[i];
			u64map_put(&a->seen_index, seen_key(&a->seen[n]), n);
			n++;
		}
	a->nseen = n;
	attach__gate_forget(a, pid);
	attach__reap(a, pid);
}

bool attacher__target_gone(struct attacher *a, pid_t pid)
{
	return attach__target_gone(a, pid);
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

unsigned attacher__uprobe_links(const struct attacher *a)
{
	return a->uprobe_links;
}

unsigned attacher__sample_events(const struct attacher *a)
{
	return a->samplers;
}
