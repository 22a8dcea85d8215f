// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cfitab_elf.c: finds an object's CFI sections and PLT sections with libelf
 * and hands them to the compiler (cfitab.c).
 */
#include <errno.h>
#include <string.h>

#include <gelf.h>
#include <libelf.h>

#include "record/cfitab.h"
#include "support/util.h"

/* The section named name, its data and ELF address; false if absent or empty. */
static bool elf_section(Elf *elf, size_t shstrndx, const char *name, Elf_Data **data,
			GElf_Shdr *out)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		n = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!n || strcmp(n, name))
			continue;
		/* Compressed .debug_frame: its claimed size is not worth trusting here. */
		if (sh.sh_flags & SHF_COMPRESSED)
			return false;
		*data = elf_getdata(scn, NULL);
		*out = sh;
		return *data && (*data)->d_buf && (*data)->d_size;
	}
	return false;
}

static int from_elf(struct cfitab *t, int fd, void *mem, size_t size, struct cfitab_load *loads,
		    unsigned *nloads, unsigned max_loads)
{
	static const char *const plts[] = {".plt", ".plt.sec", ".plt.got"};
	size_t shstrndx, nph;
	GElf_Ehdr eh;
	GElf_Shdr sh;
	Elf_Data *d;
	Elf *elf;
	int err = -ENOEXEC;

	elf_version(EV_CURRENT);
	elf = mem ? elf_memory(mem, size) : elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64 ||
	    elf_getshdrstrndx(elf, &shstrndx) || elf_getphdrnum(elf, &nph))
		goto out;
	*nloads = 0;
	for (size_t i = 0; i < nph && *nloads < max_loads; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD)
			loads[(*nloads)++] = (struct cfitab_load){ph.p_vaddr, ph.p_offset,
								  ph.p_filesz, ph.p_flags & PF_X};
	}
	/* The segments alone (cfitab__loads_fd): the rows are built elsewhere, later. */
	if (!t) {
		err = 0;
		goto out;
	}
	if (elf_section(elf, shstrndx, ".eh_frame", &d, &sh))
		cfitab__add_section(t, d->d_buf, d->d_size, sh.sh_addr, true);
	else if (elf_section(elf, shstrndx, ".debug_frame", &d, &sh))
		cfitab__add_section(t, d->d_buf, d->d_size, sh.sh_addr, false);
	/* PLT stubs without an FDE of their own: .plt pushes once, the others only jump. */
	for (size_t i = 0; i < GT_ARRAY_SIZE(plts); i++)
		if (elf_section(elf, shstrndx, plts[i], &d, &sh))
			cfitab__add_fallback(t, sh.sh_addr, sh.sh_addr + sh.sh_size,
					     i ? GT_CFI_RSP : GT_CFI_PLT, i ? 1 : 11);
	cfitab__finish(t);
	err = t->nr ? 0 : -ENOEXEC;
out:
	elf_end(elf);
	return err;
}

int cfitab__from_elf_fd(struct cfitab *t, int fd, struct cfitab_load *loads, unsigned *nloads,
			unsigned max_loads)
{
	return from_elf(t, fd, NULL, 0, loads, nloads, max_loads);
}

int cfitab__loads_fd(int fd, struct cfitab_load *loads, unsigned *nloads, unsigned max_loads)
{
	return from_elf(NULL, fd, NULL, 0, loads, nloads, max_loads);
}

int cfitab__from_elf_mem(struct cfitab *t, void *mem, size_t size, struct cfitab_load *loads,
			 unsigned *nloads, unsigned max_loads)
{
	return from_elf(t, -1, mem, size, loads, nloads, max_loads);
}
