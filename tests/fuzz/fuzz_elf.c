// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fuzz_elf.c: libFuzzer target for the symbolizer's parsers of what a traced
 * program maps: the input is an ELF file (read as dwfl reads one) whose
 * headers are pinned and compressed DWARF measured, whose MiniDebugInfo is inflated under its
 * cap and indexed with its functions, whose USDT notes are listed; and raw
 * bytes for the xz decoder.  Memory and time stay bounded whatever the input.
 */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "symbols/bounds.h"
#include "symbols/elf.h"
#include "symbols/syms_priv.h"
#include "symbols/usdt.h"
#include "symbols/zelf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int add_func(const GElf_Sym *s, const char *name, size_t len, void *ctx)
{
	return symtab__add(ctx, s->st_value, s->st_size, name, len, 1, 0) ? 1 : 0;
}

static int count_probe(const char *name, void *ctx)
{
	(*(size_t *)ctx)++;
	return 0;
}

/* The functions of elf into a table, then a lookup in it: symtab's caps and sort. */
static void index_funcs(Elf *elf, uint64_t size)
{
	struct symtab t = {};

	elf__for_each_func(elf, size, add_func, &t);
	symtab__finish(&t);
	if (t.nsyms && !symtab__find(&t, t.syms[0].addr))
		abort();
	symtab__free(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	size_t len, probes = 0;
	void *out, *img;
	Elf *elf, *mini;

	if (zelf__unxz(data, size, 1u << 20, &out, &len) == 0) {
		if (len > 1u << 20)
			abort();
		free(out);
	}
	if (fd < 0) {
		fd = memfd_create("fuzz-elf", MFD_CLOEXEC);
		if (fd < 0)
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		elf__init();
	}
	if (ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	/* As libdwfl opens an object: a private, writable mapping. */
	elf = elf_begin(fd, ELF_C_READ_MMAP_PRIVATE, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF) {
		if (zelf__pin(elf))
			zelf__dwarf_fits(elf);
		if (!zelf__take_minidebug(elf, &img, &len)) {
			if (len > BOUND_MINIDEBUG_BYTES)
				abort();
			mini = elf_memory(img, len);
			if (mini && elf_kind(mini) == ELF_K_ELF) {
				zelf__dwarf_fits(mini);
				index_funcs(mini, len);
			}
			if (mini)
				elf_end(mini);
			free(img);
		}
		index_funcs(elf, size);
	}
	if (elf)
		elf_end(elf);
	zelf__fd_dwarf_fits(fd);
	if (syms_elf_usdt_probes(path, "gaptrace", count_probe, &probes) > (int)BOUND_USDT_NAMES)
		abort();
	return 0;
}
