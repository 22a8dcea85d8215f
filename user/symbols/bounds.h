/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * bounds.h: the caps on what the symbolizer parses and holds from objects a
 * traced program maps (bounds.c).  Each cut is counted, warned about once
 * and stored in the capture's counters ("bounds.KIND").
 */
#ifndef GT_SYMBOLS_BOUNDS_H
#define GT_SYMBOLS_BOUNDS_H

#include <stdint.h>

/* .gnu_debugdata (MiniDebugInfo) decompressed, per object. */
#define BOUND_MINIDEBUG_BYTES (64ull << 20)
/* One compressed section (SHF_COMPRESSED .debug_*) decompressed. */
#define BOUND_ZSECTION_BYTES (256ull << 20)
/* All compressed DWARF sections of one object (or its debug file) together. */
#define BOUND_ZDWARF_BYTES (512ull << 20)
/* Symbol name bytes kept per object, and per name (longer ones are cut). */
#define BOUND_NAME_BYTES (64u << 20)
#define BOUND_NAME_LEN	 4096u
/* DWARF scope nesting followed for an inline chain, and DIEs visited per lookup. */
#define BOUND_SCOPE_DEPTH 1024u
#define BOUND_SCOPE_DIES  (1u << 20)
/*
 * Mappings the symbolizer keeps of one process (past the kernel's default
 * vm.max_map_count) and of all, the bytes of one's paths, paths in all.
 */
#define BOUND_PROC_MAPPINGS   65536u
#define BOUND_MAPPINGS_ALL    (1u << 20)
#define BOUND_PROC_PATH_BYTES (8u << 20)
#define BOUND_PATH_BYTES      (64u << 20)
/* .note.stapsdt: notes and distinct probe names read per object. */
#define BOUND_USDT_NOTES (1u << 16)
#define BOUND_USDT_NAMES 4096u

enum bound_kind {
	BOUND_MINIDEBUG,    /* .gnu_debugdata over its cap: .dynsym only */
	BOUND_ZDWARF,	    /* compressed DWARF over its cap: no inline chains */
	BOUND_NAMES,	    /* symbol names cut or dropped */
	BOUND_SCOPES,	    /* DWARF scope walk cut */
	BOUND_USDT,	    /* USDT notes or names past their caps */
	BOUND_OBJECTS,	    /* parsed objects closed to stay under the cap */
	BOUND_INLINES_LOST, /* inline chains of objects closed before the stop */
	BOUND_CFI_MAPS,	    /* a process past the CFI walk's ranges */
	BOUND_MAPPINGS,	    /* a process's mappings past their caps: left out */
	BOUND_NKINDS,
};

/* Counts one cut of kind in object (a path, or NULL) and warns the first time. */
void bound__cut(enum bound_kind kind, const char *object);
uint64_t bound__count(enum bound_kind kind);
/* The capture counter key of kind ("bounds.minidebuginfo", ...). */
const char *bound__key(enum bound_kind kind);

#endif /* GT_SYMBOLS_BOUNDS_H */
