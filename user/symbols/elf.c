// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * elf.c: ELF primitives on top of libelf, every offset checked against the
 * file size: opening a file, section data, function symbols of .symtab and
 * .dynsym, notes, the GNU build id, one symbol by name and the load bias of a
 * mapping.  The symbolizer (syms.c), USDT (usdt.c) and the live queries
 * (live.c) build on them.
 */
#include <errno.h>
#include <fcntl.h>
#include <elfutils/libdwelf.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "support/safeopen.h"
#include "support/util.h"
#include "symbols/elf.h"

#define MAX_NOTES 65536u

void elf__init(void)
{
	elf_version(EV_CURRENT);
}

static bool range_ok(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

uint64_t elf__stat_mtime_ns(const struct stat *st)
{
	return (uint64_t)st->st_mtim.tv_sec * NSEC_PER_SEC + (uint64_t)st->st_mtim.tv_nsec;
}

/* ---- ELF reading ---- */

static int elf_handle__take_fd(struct elf_handle *h, int fd)
{
	struct stat st;
	int err;

	h->fd = fd;
	h->elf = NULL;
	err = safeopen_check_fd(fd, &st);
	if (err)
		return err;
	h->size = (uint64_t)st.st_size;
	h->elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!h->elf || elf_kind(h->elf) != ELF_K_ELF || gelf_getclass(h->elf) == ELFCLASSNONE)
		return -ENOEXEC;
	return 0;
}

void elf_handle__close(struct elf_handle *h)
{
	if (h->elf)
		elf_end(h->elf);
	if (h->fd >= 0)
		close(h->fd);
	h->elf = NULL;
	h->fd = -1;
}

int elf_handle__open_fd(struct elf_handle *h, int fd)
{
	int err;

	elf__init();
	h->fd = -1;
	h->elf = NULL;
	if (fd < 0)
		return fd;
	err = elf_handle__take_fd(h, fd);
	if (err)
		elf_handle__close(h);
	return err;
}

int elf_handle__open(struct elf_handle *h, const char *path)
{
	return elf_handle__open_fd(h, safeopen_trusted(path, NULL));
}

int elf_handle__open_mapped(struct elf_handle *h, pid_t pid, uint64_t start, uint64_t end,
			    const char *path, uint64_t inode, struct stat *st)
{
	return elf_handle__open_fd(h, safeopen_mapped(pid, start, end, path, inode, st));
}

/*
 * Data of a section of type want, or NULL if it has another type, its header
 * points outside the file or it is compressed.  The type is checked before
 * anything is read: a CUDA library's .nv_fatbin is hundreds of MB (reading
 * every section cost 2.6 s of system time attaching to PyTorch).
 */
Elf_Data *elf__section_data(Elf *elf, Elf_Scn *scn, uint64_t fsize, GElf_Shdr *sh, uint32_t want)
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

/*
 * The walk over .symtab and .dynsym: the next one after *scn (NULL: the
 * first) with a readable string table, of at most MAX_SECTIONS sections
 * (counted in *nscn, 0 at the start).  Returns its symbols, its header in
 * *sh and its number of entries in *n; NULL at the end.
 */
static Elf_Data *next_symtab(Elf *elf, uint64_t fsize, Elf_Scn **scn, size_t *nscn, GElf_Shdr *sh,
			     size_t *n)
{
	while ((*scn = elf_nextscn(elf, *scn)) && (*nscn)++ < MAX_SECTIONS) {
		GElf_Shdr strsh;
		Elf_Scn *strscn;
		Elf_Data *d;

		if (!gelf_getshdr(*scn, sh) ||
		    (sh->sh_type != SHT_SYMTAB && sh->sh_type != SHT_DYNSYM))
			continue;
		strscn = elf_getscn(elf, sh->sh_link);
		if (!strscn || !elf__section_data(elf, strscn, fsize, &strsh, SHT_STRTAB))
			continue;
		d = elf__section_data(elf, *scn, fsize, sh, sh->sh_type);
		if (!d || !d->d_buf)
			continue;
		*n = d->d_size /
		     (gelf_getclass(elf) == ELFCLASS64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym));
		return d;
	}
	return NULL;
}

/*
 * Calls cb for every defined function of .symtab and .dynsym; len excludes a
 * "@VERSION" suffix.  A non-zero cb return stops the walk and is returned.
 */
int elf__for_each_func(Elf *elf, uint64_t fsize, func_cb cb, void *ctx)
{
	Elf_Scn *scn = NULL;
	size_t nscn = 0, n;
	GElf_Shdr sh;
	Elf_Data *d;

	while ((d = next_symtab(elf, fsize, &scn, &nscn, &sh, &n))) {
		/* Entry 0 is the reserved null symbol. */
		for (size_t i = 1; i < n && i <= INT_MAX; i++) {
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

/* Walks the notes of d; a non-zero cb return stops the walk and is returned. */
int notes__walk(Elf_Data *d, note_cb cb, void *ctx)
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

/*
 * Returns the build id length, 0 if none, -ENOSPC if it does not fit in buf.
 * libdw finds the NT_GNU_BUILD_ID note in the note sections, or the PT_NOTE
 * segments of an object stripped of section headers.
 */
int elf__build_id(Elf *elf, uint64_t fsize, uint8_t *buf, size_t len)
{
	const void *id;
	ssize_t n = dwelf_elf_gnu_build_id(elf, &id);

	if (n <= 0)
		return 0;
	if ((size_t)n > len)
		return -ENOSPC;
	memcpy(buf, id, (size_t)n);
	return (int)n;
}

/* ---- public: ELF queries on a file ---- */

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

/* ---- a symbol by name ---- */

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
void elf__find_sym(Elf *elf, uint64_t fsize, struct sym_pick *p)
{
	Elf_Data *versym = NULL, *d;
	size_t versym_link = 0, nscn = 0, n;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn)) && nscn++ < MAX_SECTIONS) {
		d = elf__section_data(elf, scn, fsize, &sh, SHT_GNU_versym);
		if (d) {
			versym = d;
			versym_link = sh.sh_link;
		}
	}
	scn = NULL;
	nscn = 0;
	while (p->rank < 3 && (d = next_symtab(elf, fsize, &scn, &nscn, &sh, &n))) {
		bool dyn = sh.sh_type == SHT_DYNSYM;
		bool use_ver = dyn && versym && versym_link == elf_ndxscn(scn);

		for (size_t i = 1; i < n && i <= INT_MAX; i++) {
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
int elf__load_bias(Elf *elf, uint64_t start, uint64_t pgoff, uint64_t *bias)
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
