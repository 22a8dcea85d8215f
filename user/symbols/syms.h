/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * syms.h: address-to-symbol resolution on the recording host (every mapped
 * object through libdwfl, dwmod.h: its .symtab, separate debug info,
 * MiniDebugInfo or .dynsym, and DWARF inline chains; /proc/kallsyms for the
 * kernel): syms.c and symtab.c.  The stage's other modules: live.h (a running
 * process's mappings and symbol addresses), usdt.h (USDT notes), elf.h (ELF
 * primitives and queries).
 */
#ifndef GT_SYMS_H
#define GT_SYMS_H

#include <stdbool.h>
#include <stdint.h>

struct syms_cache;

/*
 * GAPTRACE_DEBUGINFO_PATH, read here, says where separate debug info is
 * looked for (dwfl's debuginfo_path syntax; "none": nowhere).
 */
struct syms_cache *syms_cache__new(void);
void syms_cache__free(struct syms_cache *c); /* NULL-safe */

/*
 * Resolves ip in the address space of pid (pid 0: the kernel).  On success
 * returns 0 and sets *name (symbol), *off (ip - symbol start) and *module
 * (object path; "[kernel]" or the module name for pid 0).  Returns -1 when
 * no symbol covers ip; *module is then still set when a mapping covers it
 * (else NULL) and *name is NULL.  *module stays valid until the cache is
 * freed, *name until the next call (its object may be closed, bounds.h).
 * When ip lies outside every cached mapping of pid, the maps are read again
 * once (objects loaded after the first read).  Objects are opened through
 * /proc/PID/map_files or /proc/PID/root so deleted files and other mount
 * namespaces work.
 */
int syms_cache__resolve(struct syms_cache *c, uint32_t pid, uint64_t ip, const char **name,
			uint32_t *off, const char **module);

/*
 * The functions inlined at ip of pid (a user process), innermost first, the
 * function syms_cache__resolve names left out: up to max names into names[]
 * (valid until the next call).  caller: ip is a return address (a stack's
 * frame past the first), the call before it is looked up.  Returns how
 * many; 0 when none, or for the kernel.  Call after syms_cache__resolve
 * (the mappings are not read again here).
 */
int syms_cache__inlines(struct syms_cache *c, uint32_t pid, uint64_t ip, bool caller,
			const char **names, int max);
/*
 * syms_cache__inlines in two steps, so the DWARF is read later (when the
 * recording is over): locate notes where ip lies in ref (cheap; false when
 * in no object), inlines_at reads the chain there, even once pid is gone.
 */
bool syms_cache__locate(struct syms_cache *c, uint32_t pid, uint64_t ip, bool caller,
			uint64_t ref[2]);
int syms_cache__inlines_at(struct syms_cache *c, const uint64_t ref[2], const char **names,
			   int max);

/* Reads the kernel's symbols (/proc/kallsyms) now instead of at the first kernel address. */
void syms_cache__load_kernel(struct syms_cache *c);

/* Forgets pid's mappings (call when a process execs or exits). */
void syms_cache__forget(struct syms_cache *c, uint32_t pid);

#endif /* GT_SYMS_H */
