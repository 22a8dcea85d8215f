/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * dwmod.h: one ELF object seen through elfutils' libdwfl (dwmod.c): its
 * function symbols from the best source dwfl finds (the file's .symtab, its
 * separate debug file by build id or .gnu_debuglink as debugfind.h finds it,
 * MiniDebugInfo, else .dynsym) and the inline chain of an
 * address from DWARF.  Addresses are the object's own (ELF p_vaddr), so one
 * dwmod serves every process that maps the file.
 */
#ifndef GT_DWMOD_H
#define GT_DWMOD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Most inlined calls reported for one address (deeper ones are cut, innermost kept). */
#define DWMOD_MAX_INLINE 16

struct dwmod;

/*
 * Opens the object read through fd (consumed, also on failure); name is its
 * path as process pid maps it: debug-link lookups are made from it, in
 * pid's root with pid's credentials (read now; pid 0: no such lookups).
 * debuginfo_path: where separate debug info is looked for, in dwfl's
 * debuginfo_path syntax (":.debug:/usr/lib/debug"); NULL: that default;
 * "none": nowhere.  The search is debugfind's (debugfind.h).  NULL when it
 * is no ELF executable or shared object.
 */
struct dwmod *dwmod__open(pid_t pid, const char *name, int fd, const char *debuginfo_path);
/* Same for an image in memory (the vDSO): copied. */
struct dwmod *dwmod__open_mem(pid_t pid, const char *name, const void *image, size_t len,
			      const char *debuginfo_path);
void dwmod__free(struct dwmod *d); /* NULL-safe */
/* Memory d holds of its own (symbol table, MiniDebugInfo), for the symbolizer's bounds. */
size_t dwmod__bytes(const struct dwmod *d);

/*
 * The function covering vaddr: its name ("@VERSION" cut) and *start, or
 * NULL.  The string lives as long as d.
 */
const char *dwmod__symbol(struct dwmod *d, uint64_t vaddr, uint64_t *start);

/*
 * The functions inlined at vaddr, innermost first, the function they were
 * inlined into left out: up to max names into names[] (strings live as long
 * as d).  Returns how many; 0 when vaddr is in no inlined call or the object
 * has no DWARF.
 */
int dwmod__inlines(struct dwmod *d, uint64_t vaddr, const char **names, int max);

/* True when the symbols came from more than .dynsym (a .symtab or debug info was found). */
bool dwmod__has_symtab(struct dwmod *d);
/* True when DWARF was found (in the file or a separate debug file). */
bool dwmod__has_dwarf(struct dwmod *d);
/* The separate debug file found (after dwmod__has_symtab or __has_dwarf), or NULL. */
const char *dwmod__debug_file(struct dwmod *d);

/* The environment variable that sets debuginfo_path for the recorder and doctor. */
#define DWMOD_PATH_ENV "GAPTRACE_DEBUGINFO_PATH"

#endif /* GT_DWMOD_H */
