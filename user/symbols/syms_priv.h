/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * syms_priv.h: the symbolizer's sorted symbol tables (symtab.c), used by
 * ksyms.c for kallsyms and by dwmod.c for the table libdwfl chose for a user
 * object, and the kernel's symbols (ksyms.c) syms.c holds.  Included only by user/symbols/ files.
 */
#ifndef GT_SYMS_PRIV_H
#define GT_SYMS_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "support/u64map.h"

struct sym {
	uint64_t addr;
	uint64_t size;	   /* 0: reaches the next symbol */
	uint32_t name;	   /* offset in symtab.strs */
	uint32_t mod : 24; /* kernel: index in ksyms.mods */
	uint32_t rank : 8; /* among aliases the highest wins */
};

struct symtab {
	struct sym *syms;
	size_t nsyms, cap;
	char *strs;
	size_t strs_len, strs_cap;
	size_t names_cut;    /* names cut or dropped by the caps (bounds.h) */
	struct u64map names; /* name hash -> its offset in strs, until finished */
};

/*
 * Adds a symbol, its name cut at BOUND_NAME_LEN; -E2BIG past the limits
 * (BOUND_NAME_BYTES of names; the table stays usable).
 */
int symtab__add(struct symtab *t, uint64_t addr, uint64_t size, const char *name, size_t len,
		unsigned int rank, uint32_t mod);
/*
 * Sorts by address and keeps one entry per address, the best-named alias.
 * The caller reports names_cut (bound__cut), naming the object.
 */
void symtab__finish(struct symtab *t);
/* The symbol covering addr, or NULL. */
const struct sym *symtab__find(const struct symtab *t, uint64_t addr);
void symtab__free(struct symtab *t);

/* The kernel's symbols (ksyms.c), read at the first kernel address. */
struct ksyms {
	bool loaded;
	struct symtab tab;
	const char **mods; /* [0] is "[kernel]"; each owned */
	size_t nmods, mods_cap;
};

void ksyms__load(struct ksyms *k);
/* As syms_cache__resolve for pid 0: 0, or -1 when no symbol covers ip. */
int ksyms__resolve(struct ksyms *k, uint64_t ip, const char **name, uint32_t *off,
		   const char **module);
void ksyms__free(struct ksyms *k);

#endif /* GT_SYMS_PRIV_H */
