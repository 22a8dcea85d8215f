// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * syms.c: the symbolizer: address-to-symbol resolution for user processes
 * (their /proc/PID/maps; each mapped object opened once through libdwfl,
 * dwmod.c, and shared by all processes) and the kernel (kallsyms).
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "support/procfs.h"
#include "support/safeopen.h"
#include "support/u64map.h"
#include "support/util.h"
#include "symbols/bounds.h"
#include "symbols/dwmod.h"
#include "symbols/elf.h"
#include "symbols/syms.h"
#include "symbols/syms_priv.h"

/* A miss re-reads maps at once, later misses at most this often (bad unwinds). */
#define MAPS_REREAD_NS (100 * NSEC_PER_MSEC)

/* Hard caps: every input here comes from a traced process (and bounds.h). */
#define VDSO_MAX (1u << 20)

#define VDSO_DEV UINT64_MAX

/*
 * Parsed objects kept open (each holds a dwfl, one or two fds and its
 * symbol table): past either bound the least recently used is closed and
 * reopened if a process still maps it.  21,000 mapped memfds took the
 * recorder to its fd limit at 594 MB.
 */
#define MAX_OPEN_OBJECTS 256u
#define MAX_OPEN_BYTES	 (256ull << 20)

/* End of an index chain (entries whose keys hash alike, newest first). */
#define NONE SIZE_MAX

/* File offset range of a PT_LOAD segment and where it lies in the ELF image. */
struct seg {
	uint64_t off, vaddr, filesz;
};

struct elf_file {
	size_t next; /* index of the next file with the same dev/inode hash, NONE: the last */
	/* Key: maps dev/inode, plus size/mtime so a reused inode is not mistaken. */
	uint64_t dev, inode, size, mtime_ns;
	struct seg *segs;
	size_t nsegs;
	struct dwmod *dw; /* symbols and DWARF through libdwfl; NULL while closed */
	bool bad;	  /* opened but unusable: never retried */
	bool vdso;	  /* read from memory: never closed */
	/* The open objects, most recently used first; bytes: dwmod__bytes when last used. */
	struct elf_file *lru_prev, *lru_next;
	size_t bytes;
	/* The last mapping it was found through, to reopen it once closed. */
	uint32_t pid;
	uint64_t start, end;
	const char *module;
};

enum map_kind {
	MAP_ANON,
	MAP_FILE,
	MAP_VDSO,
};

struct map {
	uint64_t start, end, pgoff, inode;
	uint32_t dev_major, dev_minor;
	const char *module; /* interned path, "[vdso]", ... or NULL */
	struct elf_file *elf;
	uint8_t kind;
	bool tried; /* elf looked up (it may still be NULL) */
};

struct proc {
	uint32_t pid;
	struct map *maps;
	size_t nmaps;
	uint64_t reread_ns;   /* last re-read caused by a miss, 0: none yet */
	uint64_t reread_cost; /* how long it took */
	bool cut;	      /* mappings left out by the caps (counted once) */
};

struct istr {
	size_t next; /* index of the next string with the same hash, NONE: the last */
	char s[];
};

/*
 * The lookups go through u64maps: pid -> its slot in procs (NULL once
 * forgotten, reused if the pid comes back); the hash of dev/inode and of a
 * string -> the newest entry of that hash in elfs and strs, whose next
 * fields chain the older ones, compared exactly.
 */
struct syms_cache {
	struct u64map proc_index, elf_index, str_index;
	struct proc **procs;
	size_t nprocs, procs_cap;
	struct elf_file **elfs;
	size_t nelfs, elfs_cap;
	struct istr **strs;
	size_t nstrs, strs_cap;
	size_t strs_bytes; /* interned bytes (BOUND_PATH_BYTES) */
	size_t nmaps_all;  /* mappings of all processes (BOUND_MAPPINGS_ALL) */
	struct ksyms ksyms;
	char *debuginfo_path; /* DWMOD_PATH_ENV at creation, NULL: unset */
	struct elf_file *lru_head, *lru_tail;
	size_t nopen, open_bytes;
};

/* First index of key's chain in m, or NONE. */
static size_t chain_head(const struct u64map *m, uint64_t key)
{
	uint64_t i;

	return u64map_get(m, key, &i) ? (size_t)i : NONE;
}

/* s, interned; NULL when it is new and the strings would pass max bytes. */
static const char *cache__intern(struct syms_cache *c, const char *s, size_t max)
{
	size_t len = strlen(s), head, i;
	uint64_t h = gt_hash64(s, len, 0);
	struct istr *is;

	head = chain_head(&c->str_index, h);
	for (i = head; i != NONE; i = c->strs[i]->next)
		if (!strcmp(c->strs[i]->s, s))
			return c->strs[i]->s;
	if (c->strs_bytes + len + 1 > max)
		return NULL;
	c->strs_bytes += len + 1;
	is = gt_xmalloc(sizeof(*is) + len + 1);
	memcpy(is->s, s, len + 1);
	is->next = head;
	gt_grow((void **)&c->strs, &c->strs_cap, c->nstrs, sizeof(*c->strs));
	c->strs[c->nstrs] = is;
	u64map_put(&c->str_index, h, c->nstrs++);
	return is->s;
}

/* ---- parsed ELF files, shared by all processes ---- */

/* The PT_LOAD segments, to turn a mapping's file offset into an ELF address. */
static int elf_file__load(struct elf_file *e, Elf *elf)
{
	size_t nph, i;
	GElf_Ehdr eh;

	if (!gelf_getehdr(elf, &eh) || (eh.e_type != ET_EXEC && eh.e_type != ET_DYN))
		return -ENOEXEC;
	if (elf_getphdrnum(elf, &nph))
		return -ENOEXEC;
	for (i = 0; i < GT_MIN(nph, (size_t)MAX_PHDRS); i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !ph.p_filesz)
			continue;
		e->segs = gt_xrealloc(e->segs, (e->nsegs + 1) * sizeof(*e->segs));
		e->segs[e->nsegs++] = (struct seg){ph.p_offset, ph.p_vaddr, ph.p_filesz};
	}
	return e->nsegs ? 0 : -ENOEXEC;
}

/* File offset to the address the symbol table uses, through the PT_LOAD covering it. */
static bool elf_file__vaddr(const struct elf_file *e, uint64_t off, uint64_t *vaddr)
{
	size_t i;

	for (i = 0; i < e->nsegs; i++) {
		const struct seg *s = &e->segs[i];

		if (off >= s->off && off - s->off < s->filesz) {
			*vaddr = off - s->off + s->vaddr;
			return true;
		}
	}
	return false;
}

static void elf_file__free(struct elf_file *e)
{
	free(e->segs);
	dwmod__free(e->dw);
	free(e);
}

static uint64_t elf_key(uint64_t dev, uint64_t inode)
{
	uint64_t key[2] = {dev, inode};

	return gt_hash64(key, sizeof(key), 0);
}

/* exact: size and mtime must match too; else the newest file with dev/inode. */
static struct elf_file *cache__find_elf(struct syms_cache *c, uint64_t dev, uint64_t inode,
					uint64_t size, uint64_t mtime_ns, bool exact)
{
	struct elf_file *e;
	size_t i;

	for (i = chain_head(&c->elf_index, elf_key(dev, inode)); i != NONE; i = e->next) {
		e = c->elfs[i];
		if (e->dev == dev && e->inode == inode &&
		    (!exact || (e->size == size && e->mtime_ns == mtime_ns)))
			return e;
	}
	return NULL;
}

static struct elf_file *cache__add_elf(struct syms_cache *c, uint64_t dev, uint64_t inode,
				       uint64_t size, uint64_t mtime_ns)
{
	struct elf_file *e = gt_xcalloc(1, sizeof(*e));
	uint64_t key = elf_key(dev, inode);

	e->dev = dev;
	e->inode = inode;
	e->size = size;
	e->mtime_ns = mtime_ns;
	/* At the head: a file that replaced a reused inode wins inexact lookups. */
	e->next = chain_head(&c->elf_index, key);
	gt_grow((void **)&c->elfs, &c->elfs_cap, c->nelfs, sizeof(*c->elfs));
	c->elfs[c->nelfs] = e;
	u64map_put(&c->elf_index, key, c->nelfs++);
	return e;
}

/* ---- the open objects, least recently used closed first ---- */

static void lru__unlink(struct syms_cache *c, struct elf_file *e)
{
	if (e->lru_prev)
		e->lru_prev->lru_next = e->lru_next;
	else
		c->lru_head = e->lru_next;
	if (e->lru_next)
		e->lru_next->lru_prev = e->lru_prev;
	else
		c->lru_tail = e->lru_prev;
	e->lru_prev = e->lru_next = NULL;
	c->nopen--;
	c->open_bytes -= e->bytes;
	e->bytes = 0;
}

static void lru__push(struct syms_cache *c, struct elf_file *e)
{
	e->lru_next = c->lru_head;
	if (c->lru_head)
		c->lru_head->lru_prev = e;
	c->lru_head = e;
	if (!c->lru_tail)
		c->lru_tail = e;
	c->nopen++;
	e->bytes = dwmod__bytes(e->dw);
	c->open_bytes += e->bytes;
}

/* e was used (its table may have grown): to the front, then close the oldest past the bounds. */
static void cache__touch(struct syms_cache *c, struct elf_file *e)
{
	if (!e->dw || e->vdso)
		return;
	if (c->lru_head == e && e->bytes == dwmod__bytes(e->dw))
		return;
	if (e->lru_prev || e->lru_next || c->lru_head == e)
		lru__unlink(c, e);
	lru__push(c, e);
	while (c->lru_tail && c->lru_tail != e &&
	       (c->nopen > MAX_OPEN_OBJECTS || c->open_bytes > MAX_OPEN_BYTES)) {
		struct elf_file *old = c->lru_tail;

		lru__unlink(c, old);
		dwmod__free(old->dw);
		old->dw = NULL;
		bound__cut(BOUND_OBJECTS, old->module);
	}
}

/* Parses the object behind h (the file path names) into e; e->bad when it is unusable. */
static void elf_file__open_dw(struct syms_cache *c, struct elf_file *e, struct elf_handle *h,
			      const char *module, uint32_t pid)
{
	if (!e->nsegs && elf_file__load(e, h->elf))
		e->bad = true;
	else
		e->dw = dwmod__open((pid_t)pid, module, fcntl(h->fd, F_DUPFD_CLOEXEC, 0),
				    c->debuginfo_path);
	if (!e->dw) {
		gt_dbg("syms: no symbols from %s", gt_clean(module));
		e->bad = true;
	}
}

/* A closed object, opened again through the mapping it was last found in (if it still exists). */
static bool elf_file__reopen(struct syms_cache *c, struct elf_file *e, uint32_t pid,
			     const struct map *m)
{
	struct map last = {
	    .start = e->start, .end = e->end, .module = e->module, .inode = e->inode};
	struct elf_handle h;
	struct stat st;
	int fd;

	if (e->bad || e->vdso)
		return false;
	if (!m) {
		pid = e->pid;
		m = &last;
	}
	if (!pid)
		return false;
	fd = safeopen_mapped((pid_t)pid, m->start, m->end, m->module, m->inode, &st);
	if (fd < 0)
		return false;
	if ((uint64_t)st.st_size != e->size || elf__stat_mtime_ns(&st) != e->mtime_ns) {
		close(fd);
		return false;
	}
	if (elf_handle__open_fd(&h, fd))
		return false;
	elf_file__open_dw(c, e, &h, e->module, pid);
	elf_handle__close(&h);
	if (!e->dw)
		return false;
	cache__touch(c, e);
	return true;
}

static struct elf_file *map__file_elf(struct syms_cache *c, uint32_t pid, const struct map *m)
{
	uint64_t dev = (uint64_t)m->dev_major << 32 | m->dev_minor;
	struct elf_handle h;
	struct elf_file *e;
	struct stat st;
	int fd, err;

	/* Opened before the cache is asked: the fd is the one way to the mapped inode. */
	fd = safeopen_mapped((pid_t)pid, m->start, m->end, m->module, m->inode, &st);
	if (fd < 0) {
		/* The process may be gone; another one may have had the file parsed. */
		e = cache__find_elf(c, dev, m->inode, 0, 0, false);
		return e && !e->bad ? e : NULL;
	}
	e = cache__find_elf(c, dev, m->inode, (uint64_t)st.st_size, elf__stat_mtime_ns(&st), true);
	if (e) {
		close(fd);
		return e->bad ? NULL : e;
	}
	err = elf_handle__open_fd(&h, fd);
	if (err && err != -ENOEXEC) {
		/* Not remembered: it may open through another process later. */
		gt_dbg("syms: cannot open %s: %s", gt_clean(m->module), strerror(-err));
		return NULL;
	}
	e = cache__add_elf(c, dev, m->inode, (uint64_t)st.st_size, elf__stat_mtime_ns(&st));
	e->module = m->module;
	if (err)
		e->bad = true;
	else
		elf_file__open_dw(c, e, &h, m->module, pid);
	elf_handle__close(&h);
	return e->bad ? NULL : e;
}

/* The vDSO has no file: read its image from the process and key it by content. */
static struct elf_file *map__vdso_elf(struct syms_cache *c, uint32_t pid, const struct map *m)
{
	size_t len = (size_t)GT_MIN(m->end - m->start, (uint64_t)VDSO_MAX);
	struct elf_file *e = NULL;
	char path[64];
	uint64_t hash;
	ssize_t n;
	char *buf;
	Elf *elf;
	int fd;

	if (m->start > INT64_MAX)
		return NULL;
	snprintf(path, sizeof(path), "/proc/%u/mem", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	buf = gt_xmalloc(len);
	n = pread(fd, buf, len, (off_t)m->start);
	close(fd);
	if (n <= 0)
		goto out;
	hash = gt_hash64(buf, (size_t)n, 0);
	e = cache__find_elf(c, VDSO_DEV, hash, (uint64_t)n, 0, true);
	if (e)
		goto out;
	elf__init();
	e = cache__add_elf(c, VDSO_DEV, hash, (uint64_t)n, 0);
	e->vdso = true;
	elf = elf_memory(buf, (size_t)n);
	if (elf && elf_kind(elf) == ELF_K_ELF && !elf_file__load(e, elf))
		e->dw = dwmod__open_mem((pid_t)pid, m->module, buf, (size_t)n, c->debuginfo_path);
	if (!e->dw)
		e->bad = true;
	if (elf)
		elf_end(elf);
out:
	free(buf);
	return e && !e->bad ? e : NULL;
}

/* ---- process mappings ---- */

/*
 * Fills m from rm; false when rm's path does not fit: past path_bytes of
 * the process's paths (counted here) or the paths kept in all.
 */
static bool map__init(struct syms_cache *c, struct map *m, const struct procfs_map *rm,
		      size_t *path_bytes)
{
	memset(m, 0, sizeof(*m));
	m->start = rm->start;
	m->end = rm->end;
	m->pgoff = rm->offset;
	m->inode = rm->inode;
	m->dev_major = rm->dev_major;
	m->dev_minor = rm->dev_minor;
	m->kind = MAP_ANON;
	if (!strcmp(rm->path, "[vdso]")) {
		m->kind = MAP_VDSO;
		m->module = "[vdso]";
	} else if (!strcmp(rm->path, "[vsyscall]")) {
		m->module = "[vsyscall]";
	} else if (!strcmp(rm->path, "[uprobes]")) {
		m->module = "[uprobes]";
	} else if (rm->path[0] == '/' && rm->inode) {
		*path_bytes += strlen(rm->path) + 1;
		if (*path_bytes > BOUND_PROC_PATH_BYTES)
			return false;
		m->kind = MAP_FILE;
		m->module = cache__intern(c, rm->path, BOUND_PATH_BYTES);
		if (!m->module)
			return false;
	}
	/* [heap], [stack], [anon:*], anon_inode:*: anonymous memory, no module. */
	return true;
}

static int map_cmp(const void *a, const void *b)
{
	const struct map *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static struct map *proc__find(struct proc *p, uint64_t ip)
{
	size_t lo =
	    gt_count_le(p->maps, p->nmaps, sizeof(*p->maps), offsetof(struct map, start), ip);

	if (!lo || ip >= p->maps[lo - 1].end)
		return NULL;
	return &p->maps[lo - 1];
}

/* Replaces p's mappings with a fresh read; on failure the old ones stay. */
static int proc__read_maps(struct syms_cache *c, struct proc *p)
{
	size_t n = 0, cap = 0, i, path_bytes = 0, left;
	struct map *maps = NULL;
	struct procfs_maps it;
	struct procfs_map rm;
	bool sorted = true, cut = false;
	int err;

	err = procfs_maps_open(&it, (pid_t)p->pid, 0);
	if (err)
		return err;
	/*
	 * A process may map hundreds of thousands of files (each kept was 64
	 * bytes and its path, interned for as long as the recording), and
	 * processes many: the tables of all are capped too.
	 */
	left = BOUND_MAPPINGS_ALL - GT_MIN(c->nmaps_all - p->nmaps, (size_t)BOUND_MAPPINGS_ALL);
	while (procfs_maps_next(&it, &rm)) {
		if (n == GT_MIN((size_t)BOUND_PROC_MAPPINGS, left)) {
			cut = true;
			break;
		}
		gt_grow((void **)&maps, &cap, n, sizeof(*maps));
		if (map__init(c, &maps[n], &rm, &path_bytes))
			n++;
		else
			cut = true;
	}
	procfs_maps_close(&it);
	if (cut && !p->cut) {
		char what[32];

		snprintf(what, sizeof(what), "pid %u", p->pid);
		bound__cut(BOUND_MAPPINGS, what);
	}
	p->cut = cut;
	if (!n) {
		/* Kernel threads and zombies: keep what was known. */
		free(maps);
		return -ENOENT;
	}
	for (i = 1; i < n; i++)
		sorted &= maps[i - 1].start <= maps[i].start;
	if (!sorted)
		qsort(maps, n, sizeof(*maps), map_cmp);
	/* Unchanged mappings keep their object: no new stat, no new vDSO read. */
	for (i = 0; i < n; i++) {
		struct map *m = &maps[i], *old = proc__find(p, m->start);

		if (old && old->start == m->start && old->end == m->end && old->pgoff == m->pgoff &&
		    old->inode == m->inode && old->dev_major == m->dev_major &&
		    old->dev_minor == m->dev_minor && old->module == m->module) {
			m->elf = old->elf;
			m->tried = old->tried;
		}
	}
	free(p->maps);
	c->nmaps_all += n - p->nmaps;
	p->maps = maps;
	p->nmaps = n;
	return 0;
}

static bool proc__may_reread(struct proc *p, uint64_t ip)
{
	uint64_t now;

	/* The upper half is the kernel's: no mapping will ever appear there. */
	if (ip >> 63)
		return false;
	now = gt_now_mono_ns();
	/* At most a tenth of the time on re-reads: 20,000 long paths took 1 s each. */
	if (p->reread_ns && now - p->reread_ns < GT_MAX(MAPS_REREAD_NS, 10 * p->reread_cost))
		return false;
	p->reread_ns = now;
	return true;
}

static struct proc *cache__proc(struct syms_cache *c, uint32_t pid)
{
	struct proc *p;
	uint64_t i;

	if (u64map_get(&c->proc_index, pid, &i) && c->procs[i])
		return c->procs[i];
	if (!u64map_get(&c->proc_index, pid, &i)) {
		gt_grow((void **)&c->procs, &c->procs_cap, c->nprocs, sizeof(*c->procs));
		i = c->nprocs++;
		u64map_put(&c->proc_index, pid, i);
	}
	p = gt_xcalloc(1, sizeof(*p));
	p->pid = pid;
	c->procs[i] = p;
	proc__read_maps(c, p);
	return p;
}

static void proc__free(struct proc *p)
{
	free(p->maps);
	free(p);
}

/* ---- kernel ---- */

void syms_cache__load_kernel(struct syms_cache *c)
{
	if (!c->ksyms.loaded)
		ksyms__load(&c->ksyms);
}

/* ---- public: cache ---- */

struct syms_cache *syms_cache__new(void)
{
	struct syms_cache *c = gt_xcalloc(1, sizeof(*c));
	const char *path = getenv(DWMOD_PATH_ENV);

	elf__init();
	if (path && *path)
		c->debuginfo_path = gt_xstrdup(path);
	return c;
}

void syms_cache__free(struct syms_cache *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->nprocs; i++)
		if (c->procs[i])
			proc__free(c->procs[i]);
	for (i = 0; i < c->nelfs; i++)
		elf_file__free(c->elfs[i]);
	for (i = 0; i < c->nstrs; i++)
		free(c->strs[i]);
	free(c->procs);
	free(c->elfs);
	free(c->strs);
	u64map_free(&c->proc_index);
	u64map_free(&c->elf_index);
	u64map_free(&c->str_index);
	ksyms__free(&c->ksyms);
	free(c->debuginfo_path);
	free(c);
}

/* The parsed object behind ip in pid and ip's ELF address there, or NULL. */
static struct elf_file *cache__object(struct syms_cache *c, uint32_t pid, uint64_t ip, bool reread,
				      const char **module, uint64_t *va)
{
	struct proc *p = cache__proc(c, pid);
	struct map *m = proc__find(p, ip);

	if (!m && reread && proc__may_reread(p, ip)) {
		if (!proc__read_maps(c, p))
			m = proc__find(p, ip);
		p->reread_cost = gt_now_mono_ns() - p->reread_ns;
	}
	if (!m)
		return NULL;
	*module = m->module;
	if (m->kind == MAP_ANON)
		return NULL;
	if (!m->tried) {
		m->tried = true;
		m->elf = m->kind == MAP_VDSO ? map__vdso_elf(c, pid, m) : map__file_elf(c, pid, m);
	}
	if (!m->elf || !elf_file__vaddr(m->elf, ip - m->start + m->pgoff, va))
		return NULL;
	if (!m->elf->dw && !elf_file__reopen(c, m->elf, pid, m))
		return NULL;
	if (!m->elf->vdso) {
		m->elf->pid = pid;
		m->elf->start = m->start;
		m->elf->end = m->end;
	}
	cache__touch(c, m->elf);
	return m->elf;
}

int syms_cache__resolve(struct syms_cache *c, uint32_t pid, uint64_t ip, const char **name,
			uint32_t *off, const char **module)
{
	struct elf_file *e;
	uint64_t va, start;

	*name = NULL;
	*off = 0;
	*module = NULL;
	if (!c)
		return -1;
	if (!pid)
		return ksyms__resolve(&c->ksyms, ip, name, off, module);
	e = cache__object(c, pid, ip, true, module, &va);
	if (!e)
		return -1;
	*name = dwmod__symbol(e->dw, va, &start);
	/* The symbol table was read just now, perhaps: its size counts. */
	cache__touch(c, e);
	if (!*name || va - start > UINT32_MAX) {
		*name = NULL;
		return -1;
	}
	*off = (uint32_t)(va - start);
	return 0;
}

bool syms_cache__locate(struct syms_cache *c, uint32_t pid, uint64_t ip, bool caller,
			uint64_t ref[2])
{
	const char *module;
	struct elf_file *e;
	uint64_t va;

	if (!c || !pid || (caller && !ip))
		return false;
	/* A return address: the call lies just before it. */
	e = cache__object(c, pid, caller ? ip - 1 : ip, false, &module, &va);
	if (!e)
		return false;
	/* Parsed objects live as long as the cache. */
	ref[0] = (uint64_t)(uintptr_t)e;
	ref[1] = va;
	return true;
}

int syms_cache__inlines_at(struct syms_cache *c, const uint64_t ref[2], const char **names, int max)
{
	struct elf_file *e = (struct elf_file *)(uintptr_t)ref[0];

	if (!c || !e || max <= 0)
		return 0;
	if (!e->dw && !elf_file__reopen(c, e, 0, NULL)) {
		bound__cut(BOUND_INLINES_LOST, e->module);
		return 0;
	}
	cache__touch(c, e);
	return dwmod__inlines(e->dw, ref[1], names, GT_MIN(max, DWMOD_MAX_INLINE));
}

int syms_cache__inlines(struct syms_cache *c, uint32_t pid, uint64_t ip, bool caller,
			const char **names, int max)
{
	uint64_t ref[2];

	if (!syms_cache__locate(c, pid, ip, caller, ref))
		return 0;
	return syms_cache__inlines_at(c, ref, names, max);
}

void syms_cache__forget(struct syms_cache *c, uint32_t pid)
{
	uint64_t i;

	if (!c)
		return;
	/* Parsed files and interned paths stay: returned strings must remain valid. */
	if (u64map_get(&c->proc_index, pid, &i) && c->procs[i]) {
		c->nmaps_all -= c->procs[i]->nmaps;
		proc__free(c->procs[i]);
		c->procs[i] = NULL; /* the slot stays pid's */
	}
}
