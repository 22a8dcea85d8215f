// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cfimap.c: loads the BPF unwinder's tables (--stacks cfi).  Each object a
 * traced process maps is checked once (known by device and inode, as
 * fpless.c knows them): one whose every function keeps frame pointers is
 * walked with them; any other gets its CFI compiled (cfitab.c) into an
 * array map of rows, one per object, shared by all processes, plus a page
 * index; each process gets its executable ranges with their object ids.
 *
 * Tables are compiled by a worker thread: libLLVM's takes ~0.9 s, CUDA's
 * and libtorch's more, and the run loop must keep draining meanwhile.  The
 * run loop reads each new object's segments (its ranges need them), gives
 * the process its ranges at once, and the walk finds the table as soon as
 * the worker puts it in cfi_tables; only an object found to keep frame
 * pointers has its ranges written again (cfimap__poll).
 *
 * Why not frame pointers for any object "with" them: a Rust binary built
 * with them links Debian's std, built without, and a walk through std's
 * frames would be lost; only objects where every function checked has them
 * skip the table.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "gaptrace/gaptrace.h"
#include "record/cfimap.h"
#include "record/cfitab.h"
#include "record/unwind.h"
#include "support/procfs.h"
#include "support/safeopen.h"
#include "support/util.h"
#include "symbols/bounds.h"

#define CFI_PROCS      64	  /* processes whose last ranges are remembered (oldest replaced) */
#define CFI_OBJ_ROWS   (8u << 20) /* rows one object may have (64 MiB of raw rows) */
#define CFI_LOADS      16	  /* PT_LOAD segments kept per object */
#define CFI_PAGE_BYTES 64	  /* kernel memory per page index entry, hash overhead included */
#define CFI_PAGES_MAX  (1u << 20) /* cfi_pages max_entries */

enum obj_kind { OBJ_NONE, OBJ_FP, OBJ_TABLE, OBJ_PENDING };

/* A table for the worker to compile: the object open on fd (-1: the vDSO, ours). */
struct cfi_job {
	uint32_t id;
	int fd;
	size_t size; /* the vDSO's */
	char *path;  /* for messages */
};

/* What the worker found, for the run loop (cfimap__poll). */
struct cfi_done {
	uint32_t id;
	enum obj_kind kind;
};

struct cfi_obj {
	uint64_t dev, ino;
	uint32_t id; /* table id when kind is OBJ_TABLE, else one with no table */
	enum obj_kind kind;
	unsigned nloads;
	struct cfitab_load loads[CFI_LOADS];
};

struct cfi_proc {
	uint32_t pid;
	bool overflow; /* more executable mappings than GT_CFI_MAPS_MAX (counted) */
	uint64_t hash;
};

struct cfimap {
	int tables_fd, pages_fd, procs_fd;
	uint64_t budget;
	struct cfi_obj *objs;
	size_t nobjs, cap;
	uint32_t next_id;
	struct cfi_proc procs[CFI_PROCS];
	unsigned next_proc;
	/* The worker's: st (but for update_max_ns) and the budget; under mu. */
	pthread_mutex_t mu;
	pthread_cond_t cv, idle;
	pthread_t worker;
	bool has_worker, quit, busy;
	struct cfi_job *jobs;
	size_t njobs, jobs_cap;
	struct cfi_done *done;
	size_t ndone, done_cap;
	struct cfimap_stats st, st_copy;
	uint64_t update_max_ns; /* the run loop's longest cfimap__update */
};

static void *worker_main(void *arg);

struct cfimap *cfimap__new(int tables_fd, int pages_fd, int procs_fd, uint64_t budget)
{
	struct cfimap *c = gt_xcalloc(1, sizeof(*c));
	const char *env;

	c->tables_fd = tables_fd;
	c->pages_fd = pages_fd;
	c->procs_fd = procs_fd;
	c->budget = budget;
	c->next_id = 1;
	c->st.budget = budget;
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->cv, NULL);
	pthread_cond_init(&c->idle, NULL);
	/* Without the thread (or GAPTRACE_CFI_WORKER=0, to compare), in the run loop. */
	env = getenv("GAPTRACE_CFI_WORKER");
	c->has_worker =
	    !(env && !strcmp(env, "0")) && !pthread_create(&c->worker, NULL, worker_main, c);
	if (!c->has_worker)
		gt_dbg("cfi: no worker thread: tables are compiled in the run loop");
	return c;
}

void cfimap__free(struct cfimap *c)
{
	if (!c)
		return;
	if (c->has_worker) {
		pthread_mutex_lock(&c->mu);
		__atomic_store_n(&c->quit, true, __ATOMIC_RELAXED);
		pthread_cond_signal(&c->cv);
		pthread_mutex_unlock(&c->mu);
		pthread_join(c->worker, NULL);
	}
	for (size_t i = 0; i < c->njobs; i++) {
		if (c->jobs[i].fd >= 0)
			close(c->jobs[i].fd);
		free(c->jobs[i].path);
	}
	pthread_mutex_destroy(&c->mu);
	pthread_cond_destroy(&c->cv);
	pthread_cond_destroy(&c->idle);
	free(c->jobs);
	free(c->done);
	free(c->objs);
	free(c);
}

const struct cfimap_stats *cfimap__stats(const struct cfimap *c)
{
	struct cfimap *w = (struct cfimap *)c;

	pthread_mutex_lock(&w->mu);
	w->st_copy = c->st;
	pthread_mutex_unlock(&w->mu);
	w->st_copy.update_max_ns = c->update_max_ns;
	return &c->st_copy;
}

static size_t page_up(size_t n)
{
	size_t pg = (size_t)getpagesize();

	return (n + pg - 1) / pg * pg;
}

/* Loads t's rows as table o->id: an array map (filled through mmap) and its page index. */
static int table_load(struct cfimap *c, struct cfi_obj *o, const struct cfitab *t,
		      uint64_t *pages_out)
{
	LIBBPF_OPTS(bpf_map_create_opts, mo, .map_flags = BPF_F_INNER_MAP | BPF_F_MMAPABLE);
	struct gt_cfi_page_key *keys = NULL;
	struct gt_cfi_page *vals = NULL;
	uint32_t first = t->rows[0].pc >> GT_CFI_PAGE_SHIFT;
	uint32_t last = t->rows[t->nr - 1].pc >> GT_CFI_PAGE_SHIFT;
	uint32_t npages = last - first + 1, count;
	size_t len = page_up(t->nr * sizeof(*t->rows));
	void *mem;
	int fd, err = 0;

	if ((uint64_t)npages + c->st.pages > CFI_PAGES_MAX)
		return -E2BIG;
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "cfi_rows", sizeof(uint32_t), sizeof(*t->rows),
			    (uint32_t)t->nr, &mo);
	if (fd < 0)
		return -errno;
	mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (mem == MAP_FAILED) {
		err = -errno;
		goto out;
	}
	memcpy(mem, t->rows, t->nr * sizeof(*t->rows));
	munmap(mem, len);
	keys = gt_xcalloc(npages, sizeof(*keys));
	vals = gt_xcalloc(npages, sizeof(*vals));
	/* lo: the last row at or before the page's first byte; hi: the last row inside it. */
	for (size_t p = 0, r = 0; p < npages; p++) {
		uint64_t start = (uint64_t)(first + p) << GT_CFI_PAGE_SHIFT;

		while (r + 1 < t->nr && t->rows[r + 1].pc <= start)
			r++;
		keys[p] = (struct gt_cfi_page_key){o->id, first + (uint32_t)p};
		vals[p].lo = (uint32_t)r;
		vals[p].hi = (uint32_t)r;
		while (vals[p].hi + 1 < t->nr &&
		       t->rows[vals[p].hi + 1].pc < start + (1u << GT_CFI_PAGE_SHIFT))
			vals[p].hi++;
	}
	count = npages;
	if (bpf_map_update_batch(c->pages_fd, keys, vals, &count, NULL)) {
		err = -errno;
		goto out;
	}
	/* Rows and index in place: only now may the walk find the table. */
	if (bpf_map_update_elem(c->tables_fd, &o->id, &fd, BPF_ANY)) {
		err = -errno;
		goto out;
	}
	*pages_out = npages;
out:
	free(keys);
	free(vals);
	close(fd);
	return err;
}

/*
 * Checks and, where it needs one, compiles the object of job j (closing its
 * fd): the worker's, or the run loop's without one.  Returns its kind.  The
 * budget and st.bytes are only ever changed here, by one thread.
 */
static enum obj_kind obj_build(struct cfimap *c, const struct cfi_job *j)
{
	uint64_t t0 = gt_now_mono_ns(), left, bytes, pages = 0;
	unsigned checked = 0, with_fp = 0, nloads = 0;
	struct cfitab_load loads[CFI_LOADS];
	struct cfi_obj o = {.id = j->id};
	enum obj_kind kind = OBJ_NONE;
	bool cut = false;
	struct cfitab t;
	int fp, err;

	pthread_mutex_lock(&c->mu);
	left = c->budget > c->st.bytes ? c->budget - c->st.bytes : 0;
	pthread_mutex_unlock(&c->mu);
	/* An eighth for the page index (libLLVM's: 0.8 MiB beside 7.6 MiB of rows). */
	cfitab__init(&t, GT_MIN((uint64_t)CFI_OBJ_ROWS, left / 8 * 7 / sizeof(struct gt_cfi_row)));
	if (j->fd < 0) {
		/* Ours: the kernel maps the same image into every process (clock_gettime's callers). */
		void *vdso = (void *)getauxval(AT_SYSINFO_EHDR);

		fp = -ENODATA;
		err = vdso ? cfitab__from_elf_mem(&t, vdso, j->size, loads, &nloads, CFI_LOADS)
			   : -ENOENT;
	} else {
		fp = unwind_elf_frame_pointers_fd(fcntl(j->fd, F_DUPFD_CLOEXEC, 0), &checked,
						  &with_fp);
		err = cfitab__from_elf_fd(&t, j->fd, loads, &nloads, CFI_LOADS);
		close(j->fd);
	}
	/* Every function keeps frame pointers: they are cheaper than any table. */
	if (fp == 1 && with_fp == checked)
		kind = OBJ_FP;
	else if (__atomic_load_n(&c->quit, __ATOMIC_RELAXED)) /* the recording is over */
		err = -ECANCELED;
	else if (!err && !(err = table_load(c, &o, &t, &pages)))
		kind = OBJ_TABLE;
	/* Outside table_load (a 25 MiB copy): the run loop takes mu for its stats. */
	pthread_mutex_lock(&c->mu);
	c->st.bad_entries += t.st.bad_entries;
	if (kind == OBJ_FP) {
		c->st.fp_objects++;
	} else if (kind == OBJ_TABLE) {
		const char *base = strrchr(j->path, '/');

		bytes = page_up(t.nr * sizeof(struct gt_cfi_row)) + pages * CFI_PAGE_BYTES;
		cut = t.st.truncated && t.nr < CFI_OBJ_ROWS;
		c->st.cfi_objects++;
		c->st.truncated += t.st.truncated;
		c->st.over_budget += cut;
		c->st.rows += t.nr;
		c->st.pages += pages;
		c->st.bytes += bytes;
		if (bytes > c->st.max_bytes) {
			c->st.max_bytes = bytes;
			snprintf(c->st.max_name, sizeof(c->st.max_name), "%s",
				 base ? base + 1 : j->path);
		}
		gt_dbg("cfi: %s: %zu rows, %" PRIu64 " pages, %" PRIu64 " KiB, %u FDEs, %u bad, "
		       "%u rows unsupported%s",
		       j->path, t.nr, pages, bytes >> 10, t.st.fdes, t.st.bad_entries,
		       t.st.expr_rows, t.st.truncated ? ", truncated at the budget" : "");
	} else {
		c->st.no_cfi++;
		/* Rows it had but no room for: the budget cut it (E2BIG: the page index). */
		c->st.over_budget += (!left || err == -E2BIG) && fp != 1;
		gt_dbg("cfi: %s: no table (%s)%s", j->path, strerror(-err),
		       fp == 1 ? ": frame pointers" : "");
		if (fp == 1)
			kind = OBJ_FP;
	}
	c->st.build_ns += gt_now_mono_ns() - t0;
	pthread_mutex_unlock(&c->mu);
	cfitab__free(&t);
	return kind;
}

/* Compiles queued objects, oldest first, until cfimap__free. */
static void *worker_main(void *arg)
{
	struct cfimap *c = arg;
	struct cfi_job j;
	enum obj_kind kind;

	pthread_mutex_lock(&c->mu);
	for (;;) {
		while (!c->njobs && !c->quit) {
			c->busy = false;
			pthread_cond_broadcast(&c->idle);
			pthread_cond_wait(&c->cv, &c->mu);
		}
		if (c->quit)
			break;
		c->busy = true;
		j = c->jobs[0];
		memmove(c->jobs, c->jobs + 1, --c->njobs * sizeof(*c->jobs));
		pthread_mutex_unlock(&c->mu);
		kind = obj_build(c, &j);
		free(j.path);
		pthread_mutex_lock(&c->mu);
		gt_grow((void **)&c->done, &c->done_cap, c->ndone, sizeof(*c->done));
		c->done[c->ndone++] = (struct cfi_done){j.id, kind};
	}
	pthread_mutex_unlock(&c->mu);
	return NULL;
}

/* The object's table to be compiled: by the worker, or at once without one. */
static void obj_queue(struct cfimap *c, struct cfi_obj *o, int fd, size_t size, const char *path)
{
	struct cfi_job j = {o->id, fd, size, gt_xstrdup(path)};

	if (!c->has_worker) {
		o->kind = obj_build(c, &j);
		free(j.path);
		return;
	}
	o->kind = OBJ_PENDING;
	pthread_mutex_lock(&c->mu);
	gt_grow((void **)&c->jobs, &c->jobs_cap, c->njobs, sizeof(*c->jobs));
	c->jobs[c->njobs++] = j;
	c->busy = true;
	pthread_cond_signal(&c->cv);
	pthread_mutex_unlock(&c->mu);
}

/* Reads the object's segments (its ranges' bias) here, and queues its table. */
static void obj_build_start(struct cfimap *c, pid_t pid, const struct procfs_map *m,
			    struct cfi_obj *o)
{
	struct stat st;
	int fd;

	if (!strcmp(m->path, "[vdso]")) {
		void *vdso = (void *)getauxval(AT_SYSINFO_EHDR);
		struct cfitab t;

		/* A page or two: its segments and rows at once, the table by the worker. */
		cfitab__init(&t, 1);
		if (vdso)
			cfitab__from_elf_mem(&t, vdso, m->end - m->start, o->loads, &o->nloads,
					     CFI_LOADS);
		cfitab__free(&t);
		obj_queue(c, o, -1, m->end - m->start, m->path);
		return;
	}
	/* Through the mapping, never by the name the target chose (safeopen.h). */
	fd = safeopen_mapped(pid, m->start, m->end, m->path, m->inode, &st);
	if (fd < 0) {
		o->kind = OBJ_NONE;
		return;
	}
	cfitab__loads_fd(fd, o->loads, &o->nloads, CFI_LOADS);
	obj_queue(c, o, fd, 0, m->path);
}

static struct cfi_obj *obj_get(struct cfimap *c, pid_t pid, const struct procfs_map *m)
{
	uint64_t dev = (uint64_t)m->dev_major << 32 | m->dev_minor;
	struct cfi_obj *o;

	for (size_t i = 0; i < c->nobjs; i++)
		if (c->objs[i].dev == dev && c->objs[i].ino == m->inode)
			return &c->objs[i];
	gt_grow((void **)&c->objs, &c->cap, c->nobjs, sizeof(*c->objs));
	o = &c->objs[c->nobjs++];
	*o = (struct cfi_obj){.dev = dev, .ino = m->inode, .id = c->next_id++};
	pthread_mutex_lock(&c->mu);
	c->st.objects++;
	pthread_mutex_unlock(&c->mu);
	obj_build_start(c, pid, m, o);
	return o;
}

/*
 * Run-time address minus ELF address for executable mapping m of object o:
 * by its executable segment, whose file offset the mapping's (page-aligned)
 * offset rounds down to; a segment's vaddr and offset differ by a constant
 * that need not be 0 (lld puts code one page above its file offset).
 */
static uint64_t map_bias(const struct cfi_obj *o, const struct procfs_map *m)
{
	for (unsigned i = 0; i < o->nloads; i++) {
		const struct cfitab_load *l = &o->loads[i];

		if (l->exec && m->offset <= l->offset + l->filesz &&
		    m->offset + (m->end - m->start) > (l->offset & ~4095ULL))
			return m->start - m->offset + l->offset - l->vaddr;
	}
	return m->start - m->offset;
}

void cfimap__forget(struct cfimap *c, pid_t pid)
{
	uint32_t key = (uint32_t)pid;

	if (!c)
		return;
	for (unsigned i = 0; i < CFI_PROCS; i++)
		if (c->procs[i].pid == key)
			c->procs[i].pid = 0;
	/* Also when the BPF side made it (a fork copies its parent's ranges). */
	bpf_map_delete_elem(c->procs_fd, &key);
}

int cfimap__update(struct cfimap *c, pid_t pid)
{
	struct gt_cfi_proc *v;
	struct procfs_maps it;
	struct procfs_map m;
	struct cfi_proc *p = NULL;
	uint32_t key = (uint32_t)pid;
	bool has_loader = false, loader_only = false, overflow = false;
	unsigned others = 0;
	uint64_t hash, t0;
	char what[32];
	int err;

	if (!c || pid <= 0)
		return -EINVAL;
	t0 = gt_now_mono_ns();
	err = procfs_maps_open(&it, pid, 0);
	if (err) {
		cfimap__forget(c, pid);
		return err;
	}
	v = gt_xcalloc(1, sizeof(*v));
	while (procfs_maps_next(&it, &m)) {
		struct gt_cfi_map *r;
		struct cfi_obj *o;

		if (!m.exec || (m.path[0] != '/' && strcmp(m.path, "[vdso]")))
			continue;
		if (strstr(m.path, "/ld-linux"))
			has_loader = true;
		else if (m.path[0] == '/')
			others++;
		loader_only = has_loader && others <= 1;
		/*
		 * The rest are left out of the walk: no object built for them
		 * (21,000 memfds took 19.5 s of builds, 8,192 tables, each rescan).
		 */
		if (v->nr == GT_CFI_MAPS_MAX) {
			overflow = true;
			break;
		}
		o = obj_get(c, pid, &m);
		r = &v->maps[v->nr++];
		r->start = m.start;
		r->end = m.end;
		r->bias = map_bias(o, &m);
		r->obj = o->kind == OBJ_FP ? GT_CFI_OBJ_FP : o->id;
	}
	procfs_maps_close(&it);
	/*
	 * Just exec'ed, the loader not done (the executable and ld.so alone):
	 * the fp walk until the next rescan.  Walks of ld.so's deep frames then
	 * made the symbolizer re-read the maps just before libc was mapped, and
	 * it names nothing new for 100 ms after a re-read: libc's first frames
	 * stayed '?' in a third of launches.
	 */
	if (v->nr && loader_only) {
		free(v);
		return 0;
	}
	hash = gt_hash64(v, sizeof(*v), 0);
	for (unsigned i = 0; i < CFI_PROCS; i++)
		if (c->procs[i].pid == key)
			p = &c->procs[i];
	err = (int)v->nr;
	if (p && p->hash == hash)
		goto out;
	if (!p) {
		p = &c->procs[c->next_proc++ % CFI_PROCS];
		p->pid = key;
		p->overflow = false;
	}
	/* Once a process: its rescans find the same mappings. */
	if (overflow && !p->overflow) {
		snprintf(what, sizeof(what), "pid %d", pid);
		bound__cut(BOUND_CFI_MAPS, what);
	}
	p->overflow = overflow;
	if (bpf_map_update_elem(c->procs_fd, &key, v, BPF_ANY)) {
		err = -errno;
		p->pid = 0;
		gt_dbg("pid %d: cannot set its mappings for the CFI walk: %s", pid, strerror(-err));
		goto out;
	}
	p->hash = hash;
out:
	free(v);
	c->update_max_ns = GT_MAX(c->update_max_ns, gt_now_mono_ns() - t0);
	return err;
}

void cfimap__poll(struct cfimap *c)
{
	struct cfi_done *done;
	size_t n;
	bool fp = false;

	if (!c || !c->has_worker)
		return;
	pthread_mutex_lock(&c->mu);
	done = c->done;
	n = c->ndone;
	c->done = NULL;
	c->ndone = c->done_cap = 0;
	pthread_mutex_unlock(&c->mu);
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < c->nobjs; k++)
			if (c->objs[k].id == done[i].id) {
				c->objs[k].kind = done[i].kind;
				fp |= done[i].kind == OBJ_FP;
				break;
			}
	free(done);
	/* Ranges that named a table for an object with frame pointers: written again. */
	for (unsigned i = 0; fp && i < CFI_PROCS; i++)
		if (c->procs[i].pid)
			cfimap__update(c, (pid_t)c->procs[i].pid);
}

void cfimap__preload(struct cfimap *c, const char *exe)
{
	pid_t self = getpid();
	struct procfs_map m = {.path = exe};
	struct procfs_maps it;
	struct stat st;

	if (!c)
		return;
	/* Our own system libraries are the target's too (libc, ld.so, libstdc++): built now. */
	if (!procfs_maps_open(&it, self, 0)) {
		while (procfs_maps_next(&it, &m))
			if (m.exec && m.path[0] == '/' && unwind_system_object(m.path))
				obj_get(c, self, &m);
		procfs_maps_close(&it);
	}
	m = (struct procfs_map){.path = exe};
	if (!exe || stat(exe, &st) || !S_ISREG(st.st_mode))
		return;
	m.dev_major = major(st.st_dev);
	m.dev_minor = minor(st.st_dev);
	m.inode = st.st_ino;
	obj_get(c, self, &m);
	/* The child runs after this: its first ranges should name finished tables. */
	pthread_mutex_lock(&c->mu);
	while (c->has_worker && c->busy)
		pthread_cond_wait(&c->idle, &c->mu);
	pthread_mutex_unlock(&c->mu);
	cfimap__poll(c);
}
