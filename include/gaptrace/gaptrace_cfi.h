/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * gaptrace_cfi.h: the unwind tables the recorder compiles from each
 * object's CFI (user/record/cfitab.c) and the BPF walk reads (bpf/unwind.bpf.h).
 * Plain fixed-width structs shared by both sides, like gaptrace.h.
 */
#ifndef GAPTRACE_CFI_H
#define GAPTRACE_CFI_H

/* How the frame at a row's addresses finds its caller (gt_cfi_row.kind). */
enum gt_cfi_kind {
	GT_CFI_NONE = 0,   /* no CFI covers these addresses */
	GT_CFI_RSP = 1,	   /* CFA = %rsp + cfa8 * 8 */
	GT_CFI_RBP = 2,	   /* CFA = %rbp + cfa8 * 8 */
	GT_CFI_PLT = 3,	   /* a PLT entry: CFA = %rsp + 8, + 8 more from byte cfa8 of its 16 */
	GT_CFI_SIGNAL = 4, /* a signal trampoline: the registers are in the ucontext at %rsp */
	GT_CFI_ROOT = 5,   /* return address undefined: the thread's outermost frame */
	GT_CFI_EXPR = 6, /* a rule the walk cannot follow (a DWARF expression, another register) */
};

/*
 * One row: from pc (the object's ELF virtual address) up to the next row's,
 * CFA by kind; the return address at CFA - 8 (x86-64); the caller's %rbp at
 * CFA + rbp8 * 8, or unchanged when rbp8 is 0.  Sorted by pc per object.
 */
struct gt_cfi_row {
	__u32 pc;
	__u8 kind; /* enum gt_cfi_kind */
	__s8 rbp8;
	__s16 cfa8;
};

/*
 * Rows are found by page: (object id, pc >> GT_CFI_PAGE_SHIFT) names the
 * rows [lo, hi] of the object's table that cover that page of code, lo
 * being the last row at or before the page's first byte, so that the walk
 * searches a few hundred rows at most.
 */
#define GT_CFI_PAGE_SHIFT 12

struct gt_cfi_page_key {
	__u32 obj;
	__u32 page;
};

struct gt_cfi_page {
	__u32 lo;
	__u32 hi;
};

/*
 * The executable mappings of a traced process (map cfi_procs, keyed by
 * tgid): a PyTorch process maps over 100 objects with code.
 */
#define GT_CFI_MAPS_SHIFT 8
#define GT_CFI_MAPS_MAX	  (1 << GT_CFI_MAPS_SHIFT)

/* gt_cfi_map.obj: the object has frame pointers: walk them. */
#define GT_CFI_OBJ_FP 0

struct gt_cfi_map {
	__u64 start, end; /* run-time addresses, end exclusive */
	__u64 bias;	  /* run-time address - ELF virtual address */
	__u32 obj;	  /* table id (> 0), or GT_CFI_OBJ_FP */
	__u32 _pad;
};

struct gt_cfi_proc {
	__u32 nr; /* maps used, sorted by start */
	__u32 _pad;
	struct gt_cfi_map maps[GT_CFI_MAPS_MAX];
};

/* Why a walk ended (counted in the stats map from GT_STAT_UNW_ROOT on). */
enum gt_unw_end {
	GT_UNW_ROOT = 0,	/* reached the thread's root: undefined or zero return address */
	GT_UNW_NO_MAPPING = 1,	/* an address in no traced object (JIT, vDSO, garbage) */
	GT_UNW_NO_TABLE = 2,	/* in an object whose table is not (yet) loaded */
	GT_UNW_NO_ROW = 3,	/* in an object, but no CFI row covers the address */
	GT_UNW_UNSUPPORTED = 4, /* a row the walk cannot follow (GT_CFI_EXPR) */
	GT_UNW_BAD_READ = 5,	/* a stack read failed, or the stack did not move up */
	GT_UNW_DEPTH = 6,	/* GT_STACK_DEPTH frames and more to go */
	GT_UNW_END_MAX
};

#endif /* GAPTRACE_CFI_H */
