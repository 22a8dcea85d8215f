// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * syms.c: address-to-symbol resolution for user processes (ELF symbol tables,
 * parsed once per file) and the kernel (kallsyms), plus ELF note queries.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbols/syms.h"
#include "support/util.h"

#define PROC_BUCKETS 1024
#define ELF_BUCKETS  1024
#define STR_BUCKETS  1024
#define BID_SLOTS    1024

/* A miss re-reads maps at once, later misses at most this often (bad unwinds). */
#define MAPS_REREAD_NS (100 * NSEC_PER_MSEC)

/* Hard caps: every input here comes from a traced process. */
#define MAX_MAPPINGS   (1u << 20)
#define MAX_PHDRS      4096u
#define MAX_SECTIONS   (1u << 20)
#define MAX_SYMS       (16u << 20)
#define MAX_NOTES      65536u
#define MAX_USDT_NAMES 65536u
#define VDSO_MAX       (1u << 20)
/* How far a symbol without a size may reach: to the next symbol, within limits. */
#define SYM_SPAN_MAX (1u << 20)
#define SYM_TAIL_MAX 4096u

#define NT_STAPSDT   3
#define BUILD_ID_MAX sizeof(((struct syms_mapping *)0)->build_id)
#define VDSO_DEV     UINT64_MAX

struct sym {
	uint64_t addr;
	uint64_t size;	   /* 0: reaches the next symbol */
	uint32_t name;	   /* offset in symtab.strs */
	uint32_t mod : 24; /* kernel: index in ksyms.mods */
	uint32_t rank : 8; /* among aliases the highest wins */
};

struct symtab {
	struct sym *syms;
	size_t nsyms, cap;
	char *strs;
	size_t strs_len, strs_cap;
};

/* File offset range of a PT_LOAD segment and where it lies in the ELF image. */
struct seg {
	uint64_t off, vaddr, filesz;
};

struct elf_file {
	struct elf_file *next;
	/* Key: maps dev/inode, plus size/mtime so a reused inode is not mistaken. */
	uint64_t dev, inode, size, mtime_ns;
	struct seg *segs;
	size_t nsegs;
	struct symtab tab;
	bool bad; /* opened but unusable: never retried */
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
	struct proc *next;
	uint32_t pid;
	struct map *maps;
	size_t nmaps;
	uint64_t reread_ns; /* last re-read caused by a miss, 0: none yet */
};

struct istr {
	struct istr *next;
	char s[];
};

struct ksyms {
	bool loaded;
	struct symtab tab;
	const char **mods; /* [0] is "[kernel]" */
	size_t nmods, mods_cap;
};

struct syms_cache {
	struct proc *procs[PROC_BUCKETS];
	struct elf_file *elfs[ELF_BUCKETS];
	struct istr *strs[STR_BUCKETS];
	struct ksyms ksyms;
};

/* One line of /proc/PID/maps; path points into the line ("" if anonymous). */
struct raw_map {
	uint64_t start, end, pgoff, inode;
	uint32_t dev_major, dev_minor;
	bool exec;
	const char *path;
};

/* An ELF file opened for reading; size bounds every offset the file claims. */
struct elf_handle {
	int fd;
	Elf *elf;
	uint64_t size;
};

/* ---- helpers ---- */

static void elf__init(void)
{
	/* Idempotent and cheap; every entry point may be the first libelf user. */
	elf_version(EV_CURRENT);
}

static bool range_ok(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

static uint64_t stat_mtime_ns(const struct stat *st)
{
	return (uint64_t)st->st_mtim.tv_sec * NSEC_PER_SEC + (uint64_t)st->st_mtim.tv_nsec;
}

static bool path_is_deleted(const char *path)
{
	static const char suffix[] = " (deleted)";
	size_t len = strlen(path);

	return len >= sizeof(suffix) - 1 && !strcmp(path + len - (sizeof(suffix) - 1), suffix);
}

static const char *cache__intern(struct syms_cache *c, const char *s)
{
	size_t len = strlen(s);
	uint64_t h = gt_hash64(s, len, 0) % STR_BUCKETS;
	struct istr *is;

	for (is = c->strs[h]; is; is = is->next)
		if (!strcmp(is->s, s))
			return is->s;
	is = gt_xmalloc(sizeof(*is) + len + 1);
	memcpy(is->s, s, len + 1);
	is->next = c->strs[h];
	c->strs[h] = is;
	return is->s;
}

/* ---- sorted symbol tables ---- */

static int symtab__add(struct symtab *t, uint64_t addr, uint64_t size, const char *name, size_t len,
		       unsigned int rank, uint32_t mod)
{
	struct sym *s;

	if (t->nsyms >= MAX_SYMS || t->strs_len + len + 1 > UINT32_MAX)
		return -E2BIG;
	gt_grow((void **)&t->syms, &t->cap, t->nsyms, sizeof(*t->syms));
	gt_grow((void **)&t->strs, &t->strs_cap, t->strs_len + len, 1);
	s = &t->syms[t->nsyms++];
	s->addr = addr;
	s->size = size;
	s->name = (uint32_t)t->strs_len;
	s->mod = mod;
	s->rank = rank;
	memcpy(t->strs + t->strs_len, name, len);
	t->strs[t->strs_len + len] = '\0';
	t->strs_len += len + 1;
	return 0;
}

static size_t leading_underscores(const char *s)
{
	size_t n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

/* By address; among aliases the best name first (perf's choice: binding, fewer '_', shorter). */
static int sym_cmp(const void *a, const void *b, void *arg)
{
	const struct sym *x = a, *y = b;
	const char *strs = arg;
	const char *nx = strs + x->name, *ny = strs + y->name;
	size_t ux, uy, lx, ly;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank > y->rank ? -1 : 1;
	ux = leading_underscores(nx);
	uy = leading_underscores(ny);
	if (ux != uy)
		return ux < uy ? -1 : 1;
	lx = strlen(nx);
	ly = strlen(ny);
	if (lx != ly)
		return lx < ly ? -1 : 1;
	return strcmp(nx, ny);
}

static void symtab__finish(struct symtab *t)
{
	size_t i, n = 0;

	if (!t->nsyms)
		return;
	qsort_r(t->syms, t->nsyms, sizeof(*t->syms), sym_cmp, t->strs);
	/* One entry per address (.symtab and .dynsym repeat each other). */
	for (i = 0; i < t->nsyms; i++) {
		if (n && t->syms[n - 1].addr == t->syms[i].addr) {
			t->syms[n - 1].size = GT_MAX(t->syms[n - 1].size, t->syms[i].size);
			continue;
		}
		t->syms[n++] = t->syms[i];
	}
	t->nsyms = n;
	t->syms = gt_xrealloc(t->syms, n * sizeof(*t->syms));
	t->cap = n;
}

static const struct sym *symtab__find(const struct symtab *t, uint64_t addr)
{
	size_t lo = 0, hi = t->nsyms, i, j;
	const struct sym *s;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	i = lo - 1;
	s = &t->syms[i];
	if (!s->size) {
		if (i + 1 < t->nsyms)
			return addr - s->addr < SYM_SPAN_MAX ? s : NULL;
		return addr - s->addr < SYM_TAIL_MAX ? s : NULL;
	}
	if (addr - s->addr < s->size)
		return s;
	/* A nearby earlier symbol may still enclose addr (nested labels with sizes). */
	for (j = i; j-- > 0 && i - j <= 8;) {
		s = &t->syms[j];
		if (s->size && addr - s->addr < s->size)
			return s;
	}
	return NULL;
}

static void symtab__free(struct symtab *t)
{
	free(t->syms);
	free(t->strs);
	memset(t, 0, sizeof(*t));
}

/* ---- ELF reading ---- */

static int elf_handle__open_fd(struct elf_handle *h, int fd)
{
	struct stat st;

	h->fd = fd;
	h->elf = NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		return -EINVAL;
	h->size = (uint64_t)st.st_size;
	h->elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!h->elf || elf_kind(h->elf) != ELF_K_ELF || gelf_getclass(h->elf) == ELFCLASSNONE)
		return -ENOEXEC;
	return 0;
}

static void elf_handle__close(struct elf_handle *h)
{
	if (h->elf)
		elf_end(h->elf);
	if (h->fd >= 0)
		close(h->fd);
	h->elf = NULL;
	h->fd = -1;
}

/* Returns 0, -errno if path cannot be opened, -ENOEXEC if it is no ELF file. */
static int elf_handle__open(struct elf_handle *h, const char *path)
{
	int fd, err;

	elf__init();
	h->fd = -1;
	h->elf = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	err = elf_handle__open_fd(h, fd);
	if (err)
		elf_handle__close(h);
	return err;
}

/*
 * Data of a section of type want, or NULL if it has another type, its header
 * points outside the file or it is compressed.  The type is checked before
 * anything is read: a CUDA library's .nv_fatbin is hundreds of MB (reading
 * every section cost 2.6 s of system time attaching to PyTorch).
 */
static Elf_Data *elf__section_data(Elf *elf, Elf_Scn *scn, uint64_t fsize, GElf_Shdr *sh,
				   uint32_t want)
{
	if (!gelf_getshdr(scn, sh) || sh->sh_type != want || sh->sh_type == SHT_NOBITS ||
	    (sh->sh_flags & SHF_COMPRESSED) || !range_ok(sh->sh_offset, sh->sh_size, fsize))
		return NULL;
	return elf_getdata(scn, NULL);
}

static bool elf__section_exec(Elf *elf, size_t shndx)
{
	Elf_Scn *scn;
	GElf_Shdr sh;

	if (shndx == SHN_UNDEF || shndx >= SHN_LORESERVE)
		return false;
	scn = elf_getscn(elf, shndx);
	return scn && gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_EXECINSTR);
}

static bool elf__sym_is_func(Elf *elf, const GElf_Sym *s)
{
	int type = GELF_ST_TYPE(s->st_info);

	if (s->st_shndx == SHN_UNDEF || !s->st_value)
		return false;
	if (type == STT_FUNC || type == STT_GNU_IFUNC)
		return true;
	/* Hand-written assembly often has no type, but a size in a code section. */
	return type == STT_NOTYPE && s->st_size && elf__section_exec(elf, s->st_shndx);
}

typedef int (*func_cb)(const GElf_Sym *s, const char *name, size_t len, void *ctx);

/*
 * Calls cb for every defined function of .symtab and .dynsym; len excludes a
 * "@VERSION" suffix.  A non-zero cb return stops the walk and is returned.
 */
static int elf__for_each_func(Elf *elf, uint64_t fsize, func_cb cb, void *ctx)
{
	Elf_Scn *scn = NULL;
	size_t nscn = 0;

	while ((scn = elf_nextscn(elf, scn)) && nscn++ < MAX_SECTIONS) {
		GElf_Shdr sh, strsh;
		Elf_Scn *strscn;
		Elf_Data *d;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		strscn = elf_getscn(elf, sh.sh_link);
		if (!strscn || !elf__section_data(elf, strscn, fsize, &strsh, SHT_STRTAB))
			continue;
		d = elf__section_data(elf, scn, fsize, &sh, sh.sh_type);
		if (!d || !d->d_buf)
			continue;
		n = d->d_size /
		    (gelf_getclass(elf) == ELFCLASS64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym));
		/* Entry 0 is the reserved null symbol. */
		for (i = 1; i < n && i <= INT_MAX; i++) {
			const char *name;
			GElf_Sym s;
			size_t len;
			int err;

			if (!gelf_getsym(d, (int)i, &s))
				break;
			if (!elf__sym_is_func(elf, &s))
				continue;
			name = elf_strptr(elf, sh.sh_link, s.st_name);
			if (!name)
				continue;
			len = strcspn(name, "@");
			if (!len)
				continue;
			err = cb(&s, name, len, ctx);
			if (err)
				return err;
		}
	}
	return 0;
}

/* gelf_getnote checks most bounds; these close the rest (alignment padding). */
static bool note_ok(const Elf_Data *d, const GElf_Nhdr *nh, size_t name_off, size_t desc_off)
{
	return range_ok(name_off, nh->n_namesz, d->d_size) &&
	       range_ok(desc_off, nh->n_descsz, d->d_size);
}

typedef int (*note_cb)(const GElf_Nhdr *nh, const char *name, const uint8_t *desc, void *ctx);

/* Walks the notes of d; a non-zero cb return stops the walk and is returned. */
static int notes__walk(Elf_Data *d, note_cb cb, void *ctx)
{
	size_t off = 0, next, name_off, desc_off;
	unsigned int n = 0;
	GElf_Nhdr nh;
	int err;

	if (!d || !d->d_buf)
		return 0;
	while (off < d->d_size && n++ < MAX_NOTES) {
		next = gelf_getnote(d, off, &nh, &name_off, &desc_off);
		if (next <= off || !note_ok(d, &nh, name_off, desc_off))
			break;
		off = next;
		err = cb(&nh, (const char *)d->d_buf + name_off,
			 (const uint8_t *)d->d_buf + desc_off, ctx);
		if (err)
			return err;
	}
	return 0;
}

struct bid_ctx {
	uint8_t *buf;
	size_t len;
};

static int build_id_note(const GElf_Nhdr *nh, const char *name, const uint8_t *desc, void *ctx)
{
	struct bid_ctx *b = ctx;

	if (nh->n_type != NT_GNU_BUILD_ID || nh->n_namesz != 4 || memcmp(name, "GNU", 4) ||
	    !nh->n_descsz)
		return 0;
	if (nh->n_descsz > b->len)
		return -ENOSPC;
	memcpy(b->buf, desc, nh->n_descsz);
	return (int)nh->n_descsz;
}

/* Returns the build id length, 0 if none, -ENOSPC if it does not fit in buf. */
static int elf__build_id(Elf *elf, uint64_t fsize, uint8_t *buf, size_t len)
{
	struct bid_ctx b = {.buf = buf, .len = len};
	Elf_Scn *scn = NULL;
	size_t nscn = 0, nph, i;
	int ret;

	while ((scn = elf_nextscn(elf, scn)) && nscn++ < MAX_SECTIONS) {
		GElf_Shdr sh;
		Elf_Data *d = elf__section_data(elf, scn, fsize, &sh, SHT_NOTE);

		if (!d)
			continue;
		ret = notes__walk(d, build_id_note, &b);
		if (ret)
			return ret;
	}
	/* Objects stripped of section headers still carry PT_NOTE. */
	if (elf_getphdrnum(elf, &nph))
		return 0;
	for (i = 0; i < GT_MIN(nph, (size_t)MAX_PHDRS); i++) {
		GElf_Phdr ph;
		Elf_Data *d;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE ||
		    !range_ok(ph.p_offset, ph.p_filesz, fsize))
			continue;
		d = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz,
					 ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
		ret = notes__walk(d, build_id_note, &b);
		if (ret)
			return ret;
	}
	return 0;
}

/* ---- parsed ELF files, shared by all processes ---- */

static int elf_file__add_sym(const GElf_Sym *s, const char *name, size_t len, void *ctx)
{
	struct symtab *t = ctx;
	int bind = GELF_ST_BIND(s->st_info);
	unsigned int rank = bind == STB_GLOBAL || bind == STB_GNU_UNIQUE ? 2 : bind == STB_WEAK;

	return symtab__add(t, s->st_value, s->st_size, name, len, rank, 0);
}

static int elf_file__load(struct elf_file *e, Elf *elf, uint64_t fsize)
{
	size_t nph, i;
	GElf_Ehdr eh;
	int err;

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
	if (!e->nsegs)
		return -ENOEXEC;
	err = elf__for_each_func(elf, fsize, elf_file__add_sym, &e->tab);
	if (err && err != -E2BIG)
		return err;
	symtab__finish(&e->tab);
	return 0;
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
	symtab__free(&e->tab);
	free(e);
}

static size_t elf_bucket(uint64_t dev, uint64_t inode)
{
	uint64_t key[2] = {dev, inode};

	return gt_hash64(key, sizeof(key), 0) % ELF_BUCKETS;
}

/* exact: size and mtime must match too; else the newest file with dev/inode. */
static struct elf_file *cache__find_elf(struct syms_cache *c, uint64_t dev, uint64_t inode,
					uint64_t size, uint64_t mtime_ns, bool exact)
{
	struct elf_file *e;

	for (e = c->elfs[elf_bucket(dev, inode)]; e; e = e->next)
		if (e->dev == dev && e->inode == inode &&
		    (!exact || (e->size == size && e->mtime_ns == mtime_ns)))
			return e;
	return NULL;
}

static struct elf_file *cache__add_elf(struct syms_cache *c, uint64_t dev, uint64_t inode,
				       uint64_t size, uint64_t mtime_ns)
{
	struct elf_file *e = gt_xcalloc(1, sizeof(*e));
	size_t b = elf_bucket(dev, inode);

	e->dev = dev;
	e->inode = inode;
	e->size = size;
	e->mtime_ns = mtime_ns;
	/* At the head: a file that replaced a reused inode wins inexact lookups. */
	e->next = c->elfs[b];
	c->elfs[b] = e;
	return e;
}

static bool stat_regular(const char *path, uint64_t inode, struct stat *st)
{
	return !stat(path, st) && S_ISREG(st->st_mode) && (!inode || st->st_ino == inode);
}

/*
 * Finds a path to the object behind a mapping: map_files (deleted files, other
 * mount namespaces), then the process's root, then the path as we see it; the
 * fallbacks must show the mapped inode.  Device mappings (GPU drivers) are
 * refused: opening them has side effects.
 */
static int mapped_path(uint32_t pid, uint64_t start, uint64_t end, const char *path, uint64_t inode,
		       char *buf, size_t len, struct stat *st)
{
	snprintf(buf, len, "/proc/%u/map_files/%llx-%llx", pid, (unsigned long long)start,
		 (unsigned long long)end);
	if (!stat(buf, st))
		return S_ISREG(st->st_mode) ? 0 : -EINVAL;
	if (path[0] != '/' || path_is_deleted(path))
		return -ENOENT;
	if ((size_t)snprintf(buf, len, "/proc/%u/root%s", pid, path) < len &&
	    stat_regular(buf, inode, st))
		return 0;
	if ((size_t)snprintf(buf, len, "%s", path) < len && stat_regular(buf, inode, st))
		return 0;
	return -ENOENT;
}

/* Opens what mapped_path found, checking it is still the file that was stat'ed. */
static int elf_handle__open_checked(struct elf_handle *h, const char *path, const struct stat *st)
{
	struct stat fst;
	int err = elf_handle__open(h, path);

	if (err)
		return err;
	if (fstat(h->fd, &fst) || fst.st_ino != st->st_ino || fst.st_dev != st->st_dev) {
		elf_handle__close(h);
		return -ESTALE;
	}
	return 0;
}

static struct elf_file *map__file_elf(struct syms_cache *c, uint32_t pid, const struct map *m)
{
	uint64_t dev = (uint64_t)m->dev_major << 32 | m->dev_minor;
	char path[PATH_MAX + 64];
	struct elf_handle h;
	struct elf_file *e;
	struct stat st;
	int err;

	err = mapped_path(pid, m->start, m->end, m->module, m->inode, path, sizeof(path), &st);
	if (err) {
		/* The process may be gone; another one may have had the file parsed. */
		e = cache__find_elf(c, dev, m->inode, 0, 0, false);
		return e && !e->bad ? e : NULL;
	}
	e = cache__find_elf(c, dev, m->inode, (uint64_t)st.st_size, stat_mtime_ns(&st), true);
	if (e)
		return e->bad ? NULL : e;
	err = elf_handle__open_checked(&h, path, &st);
	if (err && err != -ENOEXEC) {
		/* Not remembered: it may open through another process later. */
		gt_dbg("syms: cannot open %s (%s): %s", m->module, path, strerror(-err));
		return NULL;
	}
	e = cache__add_elf(c, dev, m->inode, (uint64_t)st.st_size, stat_mtime_ns(&st));
	if (err || elf_file__load(e, h.elf, h.size)) {
		gt_dbg("syms: no symbols from %s", m->module);
		e->bad = true;
	}
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
	elf = elf_memory(buf, (size_t)n);
	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_file__load(e, elf, (uint64_t)n))
		e->bad = true;
	if (elf)
		elf_end(elf);
out:
	free(buf);
	return e && !e->bad ? e : NULL;
}

/* ---- process mappings ---- */

static bool maps_line__parse(char *line, struct raw_map *m)
{
	unsigned long long start, end, pgoff, inode;
	unsigned int maj, min;
	char perms[8];
	int n = -1;
	char *path;
	size_t len;

	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &pgoff, &maj,
		   &min, &inode, &n) != 7)
		return false;
	if (start >= end || strlen(perms) < 4)
		return false;
	m->start = start;
	m->end = end;
	m->pgoff = pgoff;
	m->inode = inode;
	m->dev_major = maj;
	m->dev_minor = min;
	m->exec = perms[2] == 'x';
	m->path = "";
	if (n < 0)
		return true;
	path = line + n;
	len = strlen(path);
	if (len && path[len - 1] == '\n')
		path[len - 1] = '\0';
	m->path = path;
	return true;
}

static void map__init(struct syms_cache *c, struct map *m, const struct raw_map *rm)
{
	memset(m, 0, sizeof(*m));
	m->start = rm->start;
	m->end = rm->end;
	m->pgoff = rm->pgoff;
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
		m->kind = MAP_FILE;
		m->module = cache__intern(c, rm->path);
	}
	/* [heap], [stack], [anon:*], anon_inode:*: anonymous memory, no module. */
}

static int map_cmp(const void *a, const void *b)
{
	const struct map *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static struct map *proc__find(struct proc *p, uint64_t ip)
{
	size_t lo = 0, hi = p->nmaps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->maps[mid].start <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || ip >= p->maps[lo - 1].end)
		return NULL;
	return &p->maps[lo - 1];
}

/* Replaces p's mappings with a fresh read; on failure the old ones stay. */
static int proc__read_maps(struct syms_cache *c, struct proc *p)
{
	struct map *maps = NULL;
	size_t n = 0, cap = 0, lcap = 0, i;
	char path[64], *line = NULL;
	bool sorted = true;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/maps", p->pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (n < MAX_MAPPINGS && getline(&line, &lcap, f) > 0) {
		struct raw_map rm;

		if (!maps_line__parse(line, &rm))
			continue;
		gt_grow((void **)&maps, &cap, n, sizeof(*maps));
		map__init(c, &maps[n++], &rm);
	}
	free(line);
	fclose(f);
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
	if (p->reread_ns && now - p->reread_ns < MAPS_REREAD_NS)
		return false;
	p->reread_ns = now;
	return true;
}

static struct proc *cache__proc(struct syms_cache *c, uint32_t pid)
{
	struct proc **head = &c->procs[pid % PROC_BUCKETS];
	struct proc *p;

	for (p = *head; p; p = p->next)
		if (p->pid == pid)
			return p;
	p = gt_xcalloc(1, sizeof(*p));
	p->pid = pid;
	p->next = *head;
	*head = p;
	proc__read_maps(c, p);
	return p;
}

static void proc__free(struct proc *p)
{
	free(p->maps);
	free(p);
}

/* ---- kernel ---- */

static uint32_t ksyms__mod(struct ksyms *k, struct syms_cache *c, const char *name)
{
	size_t i;

	/* Symbols of one module come in a run: try the latest first. */
	for (i = k->nmods; i-- > 0;)
		if (!strcmp(k->mods[i], name))
			return (uint32_t)i;
	if (k->nmods >= (1u << 24))
		return 0;
	gt_grow((void **)&k->mods, &k->mods_cap, k->nmods, sizeof(*k->mods));
	k->mods[k->nmods] = cache__intern(c, name);
	return (uint32_t)k->nmods++;
}

static void ksyms__load(struct ksyms *k, struct syms_cache *c)
{
	size_t lcap = 0;
	bool nonzero = false;
	char *line = NULL;
	FILE *f;

	k->loaded = true;
	ksyms__mod(k, c, "[kernel]");
	f = fopen("/proc/kallsyms", "re");
	if (!f) {
		gt_dbg("syms: cannot open /proc/kallsyms: %s", strerror(errno));
		return;
	}
	while (getline(&line, &lcap, f) > 0) {
		char *p, *end, *name, type;
		unsigned int rank;
		uint32_t mod = 0;
		uint64_t addr;
		size_t len;

		addr = strtoull(line, &end, 16);
		if (end == line || *end != ' ')
			continue;
		p = end + 1;
		type = *p;
		if (!type || p[1] != ' ' || !strchr("tTwW", type))
			continue;
		p += 2;
		name = p;
		len = strcspn(p, " \t\n");
		if (!len)
			continue;
		p += len;
		p += strspn(p, " \t");
		if (*p == '[') {
			size_t mlen = strcspn(p, "]\n");

			if (p[mlen] == ']') {
				p[mlen + 1] = '\0';
				mod = ksyms__mod(k, c, p);
			}
		}
		nonzero |= addr != 0;
		rank = type == 'T' ? 2 : (type == 'W' || type == 'w');
		if (symtab__add(&k->tab, addr, 0, name, len, rank, mod))
			break;
	}
	free(line);
	fclose(f);
	/* kptr_restrict hides every address: nothing can be resolved. */
	if (!nonzero) {
		gt_dbg("syms: /proc/kallsyms shows no addresses (kptr_restrict)");
		symtab__free(&k->tab);
		return;
	}
	symtab__finish(&k->tab);
}

static int ksyms__resolve(struct syms_cache *c, uint64_t ip, const char **name, uint32_t *off,
			  const char **module)
{
	struct ksyms *k = &c->ksyms;
	const struct sym *s;

	if (!k->loaded)
		ksyms__load(k, c);
	*module = "[kernel]";
	s = symtab__find(&k->tab, ip);
	if (!s || ip - s->addr > UINT32_MAX)
		return -1;
	*name = k->tab.strs + s->name;
	*off = (uint32_t)(ip - s->addr);
	*module = s->mod < k->nmods ? k->mods[s->mod] : "[kernel]";
	return 0;
}

/* ---- public: cache ---- */

struct syms_cache *syms_cache__new(void)
{
	elf__init();
	return gt_xcalloc(1, sizeof(struct syms_cache));
}

void syms_cache__free(struct syms_cache *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < PROC_BUCKETS; i++) {
		while (c->procs[i]) {
			struct proc *p = c->procs[i];

			c->procs[i] = p->next;
			proc__free(p);
		}
	}
	for (i = 0; i < ELF_BUCKETS; i++) {
		while (c->elfs[i]) {
			struct elf_file *e = c->elfs[i];

			c->elfs[i] = e->next;
			elf_file__free(e);
		}
	}
	for (i = 0; i < STR_BUCKETS; i++) {
		while (c->strs[i]) {
			struct istr *is = c->strs[i];

			c->strs[i] = is->next;
			free(is);
		}
	}
	symtab__free(&c->ksyms.tab);
	free(c->ksyms.mods);
	free(c);
}

int syms_cache__resolve(struct syms_cache *c, uint32_t pid, uint64_t ip, const char **name,
			uint32_t *off, const char **module)
{
	const struct sym *s;
	struct proc *p;
	struct map *m;
	uint64_t va;

	*name = NULL;
	*off = 0;
	*module = NULL;
	if (!c)
		return -1;
	if (!pid)
		return ksyms__resolve(c, ip, name, off, module);
	p = cache__proc(c, pid);
	m = proc__find(p, ip);
	if (!m && proc__may_reread(p, ip) && !proc__read_maps(c, p))
		m = proc__find(p, ip);
	if (!m)
		return -1;
	*module = m->module;
	if (m->kind == MAP_ANON)
		return -1;
	if (!m->tried) {
		m->tried = true;
		m->elf = m->kind == MAP_VDSO ? map__vdso_elf(c, pid, m) : map__file_elf(c, pid, m);
	}
	if (!m->elf || !elf_file__vaddr(m->elf, ip - m->start + m->pgoff, &va))
		return -1;
	s = symtab__find(&m->elf->tab, va);
	if (!s || va - s->addr > UINT32_MAX)
		return -1;
	*name = m->elf->tab.strs + s->name;
	*off = (uint32_t)(va - s->addr);
	return 0;
}

void syms_cache__forget(struct syms_cache *c, uint32_t pid)
{
	struct proc **pp, *p;

	if (!c)
		return;
	/* Parsed files and interned paths stay: returned strings must remain valid. */
	for (pp = &c->procs[pid % PROC_BUCKETS]; (p = *pp); pp = &p->next) {
		if (p->pid == pid) {
			*pp = p->next;
			proc__free(p);
			return;
		}
	}
}

/* ---- public: mappings with build ids ---- */

/* Build ids by file, so one libc is parsed once however many times it is mapped. */
struct bid_slot {
	bool valid;
	uint8_t len;
	uint8_t id[BUILD_ID_MAX];
	uint64_t dev, inode, size, mtime_ns;
};

static struct bid_slot bid_cache[BID_SLOTS];
static pthread_mutex_t bid_lock = PTHREAD_MUTEX_INITIALIZER;

static void mapping__build_id(uint32_t pid, const struct raw_map *rm, struct syms_mapping *m)
{
	uint64_t dev = (uint64_t)rm->dev_major << 32 | rm->dev_minor, mtime;
	uint64_t key[2] = {dev, rm->inode};
	char path[PATH_MAX + 64];
	struct bid_slot *slot;
	struct elf_handle h;
	struct stat st;
	int len;

	if (mapped_path(pid, rm->start, rm->end, rm->path, rm->inode, path, sizeof(path), &st))
		return;
	mtime = stat_mtime_ns(&st);
	slot = &bid_cache[gt_hash64(key, sizeof(key), 0) % BID_SLOTS];
	pthread_mutex_lock(&bid_lock);
	if (slot->valid && slot->dev == dev && slot->inode == rm->inode &&
	    slot->size == (uint64_t)st.st_size && slot->mtime_ns == mtime) {
		m->build_id_len = slot->len;
		memcpy(m->build_id, slot->id, slot->len);
		pthread_mutex_unlock(&bid_lock);
		return;
	}
	pthread_mutex_unlock(&bid_lock);

	len = elf_handle__open_checked(&h, path, &st);
	if (len == -ENOEXEC)
		len = 0;
	else if (!len)
		len = elf__build_id(h.elf, h.size, m->build_id, sizeof(m->build_id));
	elf_handle__close(&h);
	if (len < 0 && len != -ENOSPC)
		return; /* unreadable now: do not remember */
	m->build_id_len = len > 0 ? (uint8_t)len : 0;

	pthread_mutex_lock(&bid_lock);
	slot->valid = true;
	slot->dev = dev;
	slot->inode = rm->inode;
	slot->size = (uint64_t)st.st_size;
	slot->mtime_ns = mtime;
	slot->len = m->build_id_len;
	memcpy(slot->id, m->build_id, m->build_id_len);
	pthread_mutex_unlock(&bid_lock);
}

int syms_read_mappings(uint32_t pid, int (*cb)(const struct syms_mapping *m, void *ctx), void *ctx)
{
	char path[64], *line = NULL;
	size_t lcap = 0, n = 0;
	int err = 0;
	FILE *f;

	if (!cb)
		return -EINVAL;
	elf__init();
	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (n++ < MAX_MAPPINGS && getline(&line, &lcap, f) > 0) {
		struct syms_mapping m = {};
		struct raw_map rm;

		if (!maps_line__parse(line, &rm) || rm.path[0] != '/' || !rm.inode)
			continue;
		m.start = rm.start;
		m.end = rm.end;
		m.pgoff = rm.pgoff;
		m.inode = rm.inode;
		m.dev_major = rm.dev_major;
		m.dev_minor = rm.dev_minor;
		m.exec = rm.exec;
		m.path = rm.path;
		mapping__build_id(pid, &rm, &m);
		err = cb(&m, ctx);
		if (err)
			break;
	}
	free(line);
	fclose(f);
	return err;
}

/* ---- public: ELF queries ---- */

struct usdt_ctx {
	const char *provider;
	size_t addr_size;
	char **names;
	size_t nnames, cap;
	int (*cb)(const char *name, void *ctx);
	void *ctx;
};

/* desc: pc, base, semaphore (addr_size each), then provider\0 name\0 args\0. */
static int usdt_note(const GElf_Nhdr *nh, const char *owner, const uint8_t *desc, void *ctx)
{
	struct usdt_ctx *u = ctx;
	const char *prov, *name, *end;
	size_t rem, i;
	int err;

	if (nh->n_type != NT_STAPSDT || nh->n_namesz != 8 || memcmp(owner, "stapsdt", 8) ||
	    nh->n_descsz <= 3 * u->addr_size)
		return 0;
	prov = (const char *)desc + 3 * u->addr_size;
	rem = nh->n_descsz - 3 * u->addr_size;
	end = memchr(prov, '\0', rem);
	if (!end || strcmp(prov, u->provider))
		return 0;
	name = end + 1;
	rem -= (size_t)(name - prov);
	end = rem ? memchr(name, '\0', rem) : NULL;
	if (!end || end == name)
		return 0;
	for (i = 0; i < u->nnames; i++)
		if (!strcmp(u->names[i], name))
			return 0;
	if (u->nnames >= MAX_USDT_NAMES)
		return 0;
	gt_grow((void **)&u->names, &u->cap, u->nnames, sizeof(*u->names));
	u->names[u->nnames++] = gt_xstrdup(name);
	err = u->cb(name, u->ctx);
	return err < 0 ? err : 0;
}

int syms_elf_usdt_probes(const char *path, const char *provider,
			 int (*cb)(const char *name, void *ctx), void *ctx)
{
	struct usdt_ctx u = {.provider = provider, .cb = cb, .ctx = ctx};
	Elf_Scn *scn = NULL;
	struct elf_handle h;
	size_t shstrndx, nscn = 0, i;
	int err;

	if (!path || !provider || !cb)
		return -EINVAL;
	err = elf_handle__open(&h, path);
	if (err)
		return err == -ENOEXEC ? 0 : err;
	u.addr_size = gelf_getclass(h.elf) == ELFCLASS64 ? 8 : 4;
	if (elf_getshdrstrndx(h.elf, &shstrndx))
		goto out;
	while ((scn = elf_nextscn(h.elf, scn)) && nscn++ < MAX_SECTIONS) {
		GElf_Shdr sh;
		const char *name;
		Elf_Data *d = elf__section_data(h.elf, scn, h.size, &sh, SHT_NOTE);

		if (!d)
			continue;
		name = elf_strptr(h.elf, shstrndx, sh.sh_name);
		if (!name || strcmp(name, ".note.stapsdt"))
			continue;
		err = notes__walk(d, usdt_note, &u);
		if (err)
			break;
	}
out:
	for (i = 0; i < u.nnames; i++)
		free(u.names[i]);
	free(u.names);
	elf_handle__close(&h);
	return err ? err : (int)u.nnames;
}

static int has_func_sym(const GElf_Sym *s, const char *name, size_t len, void *ctx)
{
	const char *want = ctx;

	return strlen(want) == len && !strncmp(name, want, len);
}

bool syms_elf_has_func(const char *path, const char *name)
{
	struct elf_handle h;
	bool found;

	if (!path || !name || !*name || elf_handle__open(&h, path))
		return false;
	found = elf__for_each_func(h.elf, h.size, has_func_sym, (void *)name) > 0;
	elf_handle__close(&h);
	return found;
}

int syms_elf_build_id(const char *path, uint8_t *buf, size_t len)
{
	struct elf_handle h;
	int ret;

	if (!path || !buf)
		return -EINVAL;
	ret = elf_handle__open(&h, path);
	if (ret)
		return ret;
	ret = elf__build_id(h.elf, h.size, buf, len);
	elf_handle__close(&h);
	return ret;
}

/* ---- public: symbol lookup in a live process ---- */

/* The best definition of one name seen so far. */
struct sym_pick {
	const char *want;
	size_t want_len;
	GElf_Sym sym;
	int rank; /* 0: none; 1: local; 2: non-default version; 3: default */
};

static void sym_pick__consider(struct sym_pick *p, const GElf_Sym *s, const char *name, bool hidden)
{
	size_t len = strcspn(name, "@");
	int rank;

	if (len != p->want_len || strncmp(name, p->want, len) || s->st_shndx == SHN_UNDEF)
		return;
	/* "foo@VER" in .symtab and hidden .gnu.version entries are compat aliases. */
	if (GELF_ST_BIND(s->st_info) == STB_LOCAL)
		rank = 1;
	else if (hidden || (name[len] == '@' && name[len + 1] != '@'))
		rank = 2;
	else
		rank = 3;
	if (rank > p->rank) {
		p->rank = rank;
		p->sym = *s;
	}
}

/* Looks name up in .dynsym (with its .gnu.version) and .symtab. */
static void elf__find_sym(Elf *elf, uint64_t fsize, struct sym_pick *p)
{
	Elf_Data *versym = NULL;
	size_t versym_link = 0, nscn = 0;
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn)) && nscn++ < MAX_SECTIONS) {
		GElf_Shdr sh;
		Elf_Data *d = elf__section_data(elf, scn, fsize, &sh, SHT_GNU_versym);

		if (d) {
			versym = d;
			versym_link = sh.sh_link;
		}
	}
	scn = NULL;
	nscn = 0;
	while ((scn = elf_nextscn(elf, scn)) && nscn++ < MAX_SECTIONS && p->rank < 3) {
		bool dyn, use_ver;
		GElf_Shdr sh, strsh;
		Elf_Scn *strscn;
		Elf_Data *d;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		strscn = elf_getscn(elf, sh.sh_link);
		if (!strscn || !elf__section_data(elf, strscn, fsize, &strsh, SHT_STRTAB))
			continue;
		d = elf__section_data(elf, scn, fsize, &sh, sh.sh_type);
		if (!d || !d->d_buf)
			continue;
		dyn = sh.sh_type == SHT_DYNSYM;
		use_ver = dyn && versym && versym_link == elf_ndxscn(scn);
		n = d->d_size /
		    (gelf_getclass(elf) == ELFCLASS64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym));
		for (i = 1; i < n && i <= INT_MAX; i++) {
			GElf_Versym ver = 0;
			const char *name;
			GElf_Sym s;

			if (!gelf_getsym(d, (int)i, &s))
				break;
			name = elf_strptr(elf, sh.sh_link, s.st_name);
			if (!name)
				continue;
			if (use_ver && !gelf_getversym(versym, (int)i, &ver))
				ver = 0;
			sym_pick__consider(p, &s, name, ver & 0x8000);
		}
	}
}

/* Run-time address minus ELF address for the mapping of file offset pgoff at start. */
static int elf__load_bias(Elf *elf, uint64_t start, uint64_t pgoff, uint64_t *bias)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	size_t nph, i;

	if (elf_getphdrnum(elf, &nph))
		return -ENOEXEC;
	for (i = 0; i < GT_MIN(nph, (size_t)MAX_PHDRS); i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		/* The kernel maps a segment from the page holding its first byte. */
		if (pgoff >= (ph.p_offset & ~(page - 1)) &&
		    pgoff < ph.p_offset + GT_MAX(ph.p_filesz, (uint64_t)1)) {
			*bias = start - pgoff - (ph.p_vaddr - ph.p_offset);
			return 0;
		}
	}
	return -ENOEXEC;
}

static bool basename_has_prefix(const char *path, const char *prefix)
{
	const char *base = strrchr(path, '/');

	return !strncmp(base ? base + 1 : path, prefix, strlen(prefix));
}

int syms_find_symbol(uint32_t pid, const char *module_prefix, const char *name, uint64_t *addr)
{
	struct sym_pick pick = {.want = name};
	char path[PATH_MAX + 64], *line = NULL;
	struct raw_map rm = {};
	struct elf_handle h;
	size_t lcap = 0, n = 0;
	bool found = false;
	struct stat st;
	uint64_t bias;
	int err;
	FILE *f;

	if (!module_prefix || !*module_prefix || !name || !*name || !addr)
		return -EINVAL;
	pick.want_len = strlen(name);
	elf__init();
	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	/* Maps are sorted: the first line of the object is its lowest mapping. */
	while (n++ < MAX_MAPPINGS && getline(&line, &lcap, f) > 0) {
		if (maps_line__parse(line, &rm) && rm.path[0] == '/' && rm.inode &&
		    basename_has_prefix(rm.path, module_prefix)) {
			found = true;
			break;
		}
	}
	fclose(f);
	if (!found) {
		free(line);
		return -ENXIO;
	}
	err = mapped_path(pid, rm.start, rm.end, rm.path, rm.inode, path, sizeof(path), &st);
	free(line);
	if (err)
		return err;
	err = elf_handle__open_checked(&h, path, &st);
	if (err)
		return err;
	err = elf__load_bias(h.elf, rm.start, rm.pgoff, &bias);
	if (!err) {
		elf__find_sym(h.elf, h.size, &pick);
		if (!pick.rank)
			err = -ENOENT;
		else if (GELF_ST_TYPE(pick.sym.st_info) == STT_GNU_IFUNC ||
			 GELF_ST_TYPE(pick.sym.st_info) == STT_TLS)
			err = -EOPNOTSUPP;
		else
			*addr = pick.sym.st_shndx == SHN_ABS ? pick.sym.st_value
							     : pick.sym.st_value + bias;
	}
	elf_handle__close(&h);
	return err;
}
