/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * usdt_specs.h: how many sites and distinct argument specs each USDT probe
 * of an ELF file has (usdt_specs.c), checked before libbpf attaches them.
 */
#ifndef GT_USDT_SPECS_H
#define GT_USDT_SPECS_H

#include <stddef.h>

struct usdt_census {
	unsigned sites; /* notes of the probe, saturating */
	unsigned specs; /* distinct argument strings, counted up to the limit + 1 */
};

/*
 * Fills out[i] for names[i] of provider in the ELF file at path (n <= 32).
 * Distinct specs are what libbpf spends one spec id each on; they are
 * counted up to max_specs + 1 (over the limit: no attach).  Returns the
 * number of names with sites, or -errno if the file cannot be opened.
 */
int syms_elf_usdt_census(const char *path, const char *provider, const char *const *names, size_t n,
			 unsigned max_specs, struct usdt_census *out);

#endif /* GT_USDT_SPECS_H */
