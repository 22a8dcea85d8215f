/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * func_offsets.h: where in an ELF file functions start, as file offsets
 * (what a uprobe is placed by), for multi-uprobe links (func_offsets.c).
 */
#ifndef GT_FUNC_OFFSETS_H
#define GT_FUNC_OFFSETS_H

#include <stddef.h>

/*
 * Sets offsets[i] to the file offset of function names[i] in the ELF file
 * at path (its default-version definition), 0 when it defines none or it
 * lies in no loaded segment.  Returns how many were found, or -errno.
 */
int syms_elf_func_offsets(const char *path, const char *const *names, size_t n,
			  unsigned long *offsets);

#endif /* GT_FUNC_OFFSETS_H */
