/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * cfitab.h: compiles an object's call frame information (.eh_frame,
 * .debug_frame) into the sorted rows the BPF unwinder walks with.
 */
#ifndef GT_CFITAB_H
#define GT_CFITAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/types.h>

#include "gaptrace/gaptrace_cfi.h"

/* What compiling one object met; hostile or odd input is counted here, never trusted. */
struct cfitab_stats {
	uint32_t cies, fdes;
	uint32_t bad_entries; /* CIEs/FDEs skipped: lengths past the section, bad pointers, ... */
	uint32_t bad_ops;     /* FDEs cut short by an unknown or malformed instruction */
	uint32_t expr_rows;   /* rows the walk cannot follow (GT_CFI_EXPR) */
	uint32_t far_pcs;     /* FDEs above 4 GiB of ELF address (rows hold 32 bits) */
	bool truncated;	      /* the row or work cap was reached: the table is partial */
	uint64_t ops;	      /* CFA instructions run */
};

struct cfitab_raw;

struct cfitab {
	struct gt_cfi_row *rows; /* after cfitab__finish: sorted, merged */
	size_t nr;
	struct cfitab_stats st;
	/* Building: */
	struct cfitab_raw *raw;
	size_t nraw, raw_cap, max_rows;
	uint64_t max_ops;
	uint32_t seq;
};

/* max_rows: the most rows kept before merging (the table's memory bound). */
void cfitab__init(struct cfitab *t, size_t max_rows);
void cfitab__free(struct cfitab *t); /* NULL-safe; leaves t empty */

/*
 * Adds the rows of one CFI section: data/size its bytes, addr its ELF
 * virtual address (pc-relative pointers), eh: .eh_frame (else .debug_frame).
 * Returns 0, or -E2BIG when the row cap cut it short (counted in st).
 */
int cfitab__add_section(struct cfitab *t, const uint8_t *data, size_t size, uint64_t addr, bool eh);

/*
 * Covers [start, end) with one row of kind (cfa8 as in gt_cfi_row) where
 * no CFI section says otherwise: PLT sections, which often have no FDE.
 */
void cfitab__add_fallback(struct cfitab *t, uint64_t start, uint64_t end, uint8_t kind,
			  int16_t cfa8);

/* Sorts, closes the gaps between FDEs and merges equal neighbours into t->rows. */
int cfitab__finish(struct cfitab *t);

/* The row covering ELF address pc (GT_CFI_NONE if none): what the BPF walk would find. */
struct gt_cfi_row cfitab__find(const struct cfitab *t, uint32_t pc);

/* A PT_LOAD segment: how the object's file offsets map to its ELF addresses. */
struct cfitab_load {
	uint64_t vaddr, offset, filesz;
	bool exec; /* PF_X */
};

/*
 * Compiles the x86-64 ELF object open on fd: its .eh_frame, else its
 * .debug_frame, and its PLT sections; finishes t.  Its first max_loads
 * PT_LOAD segments go to loads (*nloads of them).  0, or -ENOEXEC (not an
 * x86-64 ELF object, or no row at all).
 */
int cfitab__from_elf_fd(struct cfitab *t, int fd, struct cfitab_load *loads, unsigned *nloads,
			unsigned max_loads);
/* The PT_LOAD segments alone, as cfitab__from_elf_fd gives them (cheap: no CFI read). */
int cfitab__loads_fd(int fd, struct cfitab_load *loads, unsigned *nloads, unsigned max_loads);
/* The same for an image in memory (the vDSO: every process of this kernel maps the same). */
int cfitab__from_elf_mem(struct cfitab *t, void *mem, size_t size, struct cfitab_load *loads,
			 unsigned *nloads, unsigned max_loads);

#endif /* GT_CFITAB_H */
