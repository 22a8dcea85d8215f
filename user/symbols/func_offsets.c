// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * func_offsets.c: file offsets of named functions, for multi-uprobe links
 * (libbpf 1.4.6's own lookup by name finds none of libc's versioned ones).
 */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>

#include "symbols/elf.h"
#include "symbols/func_offsets.h"

/* The file offset of address vaddr: through the loaded segment holding it, 0 if none. */
static unsigned long vaddr_offset(Elf *elf, uint64_t vaddr)
{
	size_t nph;

	if (elf_getphdrnum(elf, &nph))
		return 0;
	for (size_t i = 0; i < nph && i < MAX_PHDRS; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		if (vaddr >= ph.p_vaddr && vaddr - ph.p_vaddr < ph.p_filesz)
			return (unsigned long)(vaddr - ph.p_vaddr + ph.p_offset);
	}
	return 0;
}

int syms_elf_func_offsets(const char *path, const char *const *names, size_t n,
			  unsigned long *offsets)
{
	struct elf_handle h;
	int found = 0, err;

	if (!path || !names || !offsets)
		return -EINVAL;
	memset(offsets, 0, n * sizeof(*offsets));
	err = elf_handle__open(&h, path);
	if (err)
		return err;
	for (size_t i = 0; i < n; i++) {
		struct sym_pick p = {.want = names[i], .want_len = strlen(names[i])};

		elf__find_sym(h.elf, h.size, &p);
		/* An IFUNC's symbol is its resolver, not the function called. */
		if (!p.rank || GELF_ST_TYPE(p.sym.st_info) != STT_FUNC)
			continue;
		offsets[i] = vaddr_offset(h.elf, p.sym.st_value);
		found += offsets[i] != 0;
	}
	elf_handle__close(&h);
	return found;
}
