/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * usdt.h: the USDT probes (.note.stapsdt) of an ELF file (usdt.c).
 */
#ifndef GT_USDT_H
#define GT_USDT_H

#include <stddef.h>

#include "symbols/elf.h"

/*
 * Walks the notes of path's .note.stapsdt sections with cb (elf.h), after
 * setting *addr_size from its ELF class.  0 (also when path is no ELF file),
 * cb's non-zero return, or -errno.
 */
int syms_elf_stapsdt_walk(const char *path, note_cb cb, void *ctx, size_t *addr_size);

/*
 * Lists the USDT probes of provider in the ELF file at path (.note.stapsdt):
 * cb(name) once per distinct probe name.  Returns the number of probes found
 * (0: none or not an ELF file), or -errno if the file cannot be opened.
 */
int syms_elf_usdt_probes(const char *path, const char *provider,
			 int (*cb)(const char *name, void *ctx), void *ctx);

#endif /* GT_USDT_H */
