/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * zelf.h: the compressed parts of an ELF file, inflated or measured under
 * the caps of bounds.h before anything else reads them (zelf.c):
 * MiniDebugInfo (.gnu_debugdata, xz) and compressed DWARF sections.
 */
#ifndef GT_SYMBOLS_ZELF_H
#define GT_SYMBOLS_ZELF_H

#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * Inflates the xz data in[0..len) into *out (malloc'd, *outlen bytes).
 * Returns 0, -E2BIG when it would inflate past max bytes, -EINVAL when it
 * is no valid xz stream.  Memory used stays under max plus the decoder's
 * dictionary (itself capped).
 */
int zelf__unxz(const void *in, size_t len, size_t max, void **out, size_t *outlen);

/*
 * Takes .gnu_debugdata out of elf: every section of that name is hidden
 * from later readers of this Elf handle (libdwfl would inflate it with no
 * cap), and the first is inflated under BOUND_MINIDEBUG_BYTES into *img
 * (malloc'd, *len bytes).  Returns 0, -ENOENT when there is none, -E2BIG
 * over the cap, -EINVAL when it does not inflate.
 */
int zelf__take_minidebug(Elf *elf, void **img, size_t *len);

/*
 * True when elf's compressed sections (SHF_COMPRESSED, or .zdebug with a
 * "ZLIB" header) inflate to at most BOUND_ZSECTION_BYTES each and
 * BOUND_ZDWARF_BYTES in all, as their headers declare (libelf inflates to
 * exactly that size or fails).
 */
bool zelf__dwarf_fits(Elf *elf);
/*
 * Fixes what zelf__dwarf_fits reads in an Elf handle that maps its file
 * (libdwfl's: ELF_C_READ_MMAP_PRIVATE): the ELF and section headers,
 * section names and DWARF sections' compression headers are made private
 * pages, so a traced program that rewrites the file later (it may own it)
 * cannot change what libdw inflates at the stop.  False when that cannot
 * be done (over 256 DWARF sections, 1 MiB of names): refuse the DWARF.
 */
bool zelf__pin(Elf *elf);
/* The same for the ELF file open as fd (true when it is no ELF file). */
bool zelf__fd_dwarf_fits(int fd);

#endif /* GT_SYMBOLS_ZELF_H */
