// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * zelf.c: MiniDebugInfo inflated under a cap, and compressed DWARF measured
 * before libdw inflates it: both grow from a few KiB in a file a traced
 * program maps to GiB in the root recorder (a 610 KiB xz bomb took 4.36 GB).
 */
#include <errno.h>
#include <gelf.h>
#include <lzma.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "support/util.h"
#include "symbols/bounds.h"
#include "symbols/elf.h"
#include "symbols/zelf.h"

/* The xz decoder's own memory (its dictionary): xz -9 needs 65 MiB. */
#define XZ_MEMLIMIT (96ull << 20)
/* What zelf__pin copies at most: section names, and DWARF sections' headers. */
#define PIN_NAMES_MAX	 (1u << 20)
#define PIN_SECTIONS_MAX 256u

int zelf__unxz(const void *in, size_t len, size_t max, void **out, size_t *outlen)
{
	lzma_stream s = LZMA_STREAM_INIT;
	size_t cap = GT_MIN(GT_MAX(len * 4, (size_t)4096), max + 1);
	uint8_t *buf = NULL;
	lzma_ret ret;
	int err = -EINVAL;

	*out = NULL;
	*outlen = 0;
	if (!in || !len || lzma_stream_decoder(&s, XZ_MEMLIMIT, 0) != LZMA_OK)
		return -EINVAL;
	buf = gt_xmalloc(cap);
	s.next_in = in;
	s.avail_in = len;
	s.next_out = buf;
	s.avail_out = cap;
	for (;;) {
		ret = lzma_code(&s, LZMA_FINISH);
		if (ret == LZMA_STREAM_END)
			break;
		if (ret != LZMA_OK && ret != LZMA_BUF_ERROR)
			goto fail;
		if (s.avail_out)
			goto fail; /* LZMA_BUF_ERROR with room left: the input is cut short */
		/* One byte past max is room enough to see that it goes past. */
		if (s.total_out > max) {
			err = -E2BIG;
			goto fail;
		}
		cap = GT_MIN(cap * 2, max + 1);
		buf = gt_xrealloc(buf, cap);
		s.next_out = buf + s.total_out;
		s.avail_out = cap - s.total_out;
	}
	if (s.total_out > max) {
		err = -E2BIG;
		goto fail;
	}
	*outlen = s.total_out;
	*out = buf;
	lzma_end(&s);
	return 0;
fail:
	lzma_end(&s);
	free(buf);
	return err;
}

int zelf__take_minidebug(Elf *elf, void **img, size_t *len)
{
	Elf_Scn *scn = NULL, *first = NULL;
	size_t shstrndx, nscn = 0;
	Elf_Data *raw;

	*img = NULL;
	*len = 0;
	if (elf_getshdrstrndx(elf, &shstrndx))
		return -ENOENT;
	while ((scn = elf_nextscn(elf, scn)) && nscn++ < MAX_SECTIONS) {
		const char *name;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)) ||
		    strcmp(name, ".gnu_debugdata"))
			continue;
		if (!first)
			first = scn;
		/*
		 * A name offset past the string table: libdwfl's search by name
		 * stops there and finds none (the Elf is a private copy).
		 */
		sh.sh_name = UINT32_MAX;
		if (!gelf_update_shdr(scn, &sh))
			return -EINVAL;
	}
	if (!first)
		return -ENOENT;
	raw = elf_rawdata(first, NULL);
	if (!raw || !raw->d_buf || !raw->d_size)
		return -EINVAL;
	return zelf__unxz(raw->d_buf, raw->d_size, BOUND_MINIDEBUG_BYTES, img, len);
}

/* The size a compressed section declares it inflates to, 0 if it is none. */
static uint64_t inflated_size(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, const char *name)
{
	const uint8_t *p;
	Elf_Data *raw;
	GElf_Chdr ch;
	uint64_t n = 0;

	if (sh->sh_type == SHT_NOBITS)
		return 0;
	if (sh->sh_flags & SHF_COMPRESSED)
		/* An unreadable header counts as over the cap: libelf would not inflate it either. */
		return gelf_getchdr(scn, &ch) ? ch.ch_size : UINT64_MAX;
	if (!name || strncmp(name, ".zdebug", 7))
		return 0;
	/* GNU style: "ZLIB" and the size, 8 bytes big-endian. */
	raw = elf_rawdata(scn, NULL);
	if (!raw || !raw->d_buf || raw->d_size < 12 || memcmp(raw->d_buf, "ZLIB", 4))
		return 0;
	p = (const uint8_t *)raw->d_buf + 4;
	for (int i = 0; i < 8; i++)
		n = n << 8 | p[i];
	return n;
}

bool zelf__dwarf_fits(Elf *elf)
{
	size_t shstrndx = 0, nscn = 0;
	Elf_Scn *scn = NULL;
	uint64_t total = 0;

	if (elf_getshdrstrndx(elf, &shstrndx))
		shstrndx = 0;
	while ((scn = elf_nextscn(elf, scn)) && nscn++ < MAX_SECTIONS) {
		GElf_Shdr sh;
		uint64_t n;

		if (!gelf_getshdr(scn, &sh))
			continue;
		n = inflated_size(elf, scn, &sh,
				  shstrndx ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL);
		if (n > BOUND_ZSECTION_BYTES || n > BOUND_ZDWARF_BYTES - total)
			return false;
		total += n;
	}
	return true;
}

bool zelf__fd_dwarf_fits(int fd)
{
	bool fits = true;
	Elf *elf;

	if (fd < 0)
		return true;
	elf__init();
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF)
		fits = zelf__dwarf_fits(elf);
	if (elf)
		elf_end(elf);
	return fits;
}

/*
 * Makes the pages of p[0..len) private to this process: written once with
 * their own bytes, a file's MAP_PRIVATE pages stop following the file.
 * Pages libelf copied into memory are written the same way, harmlessly.
 */
static bool pin_range(const void *p, size_t len)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), a, end = (uintptr_t)p + len;

	if (!p || !len)
		return true;
	a = (uintptr_t)p & ~(page - 1);
	if (mprotect((void *)a, end - a, PROT_READ | PROT_WRITE))
		return false;
	for (; a < end; a += page) {
		volatile uint8_t *b = (uint8_t *)GT_MAX(a, (uintptr_t)p);

		*b = *b;
	}
	return true;
}

static bool pin_section_start(Elf_Scn *scn, size_t len)
{
	Elf_Data *raw = elf_rawdata(scn, NULL);

	return !raw || !raw->d_buf || pin_range(raw->d_buf, GT_MIN(len, raw->d_size));
}

bool zelf__pin(Elf *elf)
{
	size_t shnum, shstrndx, n = 0;
	Elf_Scn *scn = NULL;
	const void *shdrs;
	bool is64 = gelf_getclass(elf) == ELFCLASS64;
	Elf_Data *names;

	if (elf_getshdrnum(elf, &shnum) || !shnum)
		return true; /* no sections: no DWARF */
	if (elf_getshdrstrndx(elf, &shstrndx) || shnum > MAX_SECTIONS)
		return false;
	shdrs = is64 ? (const void *)elf64_getshdr(elf_getscn(elf, 0))
		     : (const void *)elf32_getshdr(elf_getscn(elf, 0));
	if (!shdrs ||
	    !pin_range(is64 ? (const void *)elf64_getehdr(elf) : (const void *)elf32_getehdr(elf),
		       is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr)) ||
	    !pin_range(shdrs, shnum * (is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr))))
		return false;
	names = elf_rawdata(elf_getscn(elf, shstrndx), NULL);
	if (!names || names->d_size > PIN_NAMES_MAX || !pin_range(names->d_buf, names->d_size))
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!(sh.sh_flags & SHF_COMPRESSED) &&
		    (!name || (strncmp(name, ".debug", 6) && strncmp(name, ".zdebug", 7))))
			continue;
		if (++n > PIN_SECTIONS_MAX || !pin_section_start(scn, sizeof(Elf64_Chdr)))
			return false;
	}
	return true;
}
