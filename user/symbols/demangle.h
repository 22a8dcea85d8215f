/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * demangle.h: symbol names for people — C++ (Itanium ABI), Rust legacy
 * (_ZN...17h<hash>E) and Rust v0 (_R...), hashes left out, by libiberty.
 */
#ifndef GT_DEMANGLE_H
#define GT_DEMANGLE_H

/* Longest name gt_demangle produces; longer results are refused (NULL). */
#define GT_DEMANGLE_MAX 4096

/*
 * Returns the demangled form of sym as a malloc'd string, or NULL when sym
 * is not mangled, is malformed, or would demangle to more than
 * GT_DEMANGLE_MAX bytes: callers then show sym as it is.  Never crashes on
 * garbage (symbol names come from the traced program's files).
 *
 *   _ZN3foo3barEv                          -> foo::bar()
 *   _ZN3std6thread4park17h0123456789abcdefE -> std::thread::park
 *   _RNvNtCs1234_3std6thread4park           -> std::thread::park
 *
 * A trailing ".llvm.NNNN" (LTO) is dropped; other '.' suffixes (".cold")
 * are kept.  Names over 8 KiB are not tried.
 */
char *gt_demangle(const char *sym);

#endif /* GT_DEMANGLE_H */
