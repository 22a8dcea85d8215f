/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * live.h: a running process seen through /proc: its file mappings with build
 * ids, and the run-time address of a symbol in one of its objects (live.c).
 */
#ifndef GT_LIVE_H
#define GT_LIVE_H

#include <stdbool.h>
#include <stdint.h>

struct syms_mapping {
	uint64_t start, end, pgoff;
	uint64_t inode;
	uint32_t dev_major, dev_minor;
	bool exec; /* r-xp */
	const char *path;
	uint8_t build_id[20];
	uint8_t build_id_len; /* 0: none found */
};

/*
 * Reads /proc/PID/maps now and calls cb for every file-backed mapping (all
 * permissions; exec says whether it is executable), with the object's GNU
 * build id.  Returns 0, or -errno (e.g. -ENOENT: the process is gone).
 */
int syms_read_mappings(uint32_t pid, int (*cb)(const struct syms_mapping *m, void *ctx), void *ctx);

/*
 * The same for executable mappings only, without build ids (build_id_len 0):
 * no stat or ELF read per mapping.  For the periodic probe scans: a PyTorch
 * process maps thousands of files, and statting each of them every 250 ms
 * was 38% of the recorder's CPU.
 */
int syms_read_exec_mappings(uint32_t pid, int (*cb)(const struct syms_mapping *m, void *ctx),
			    void *ctx);

/*
 * Finds the run-time address of symbol name (.dynsym, else .symtab) in the
 * first object mapped in pid whose file name starts with module_prefix
 * ("libc.so.6" matches "/usr/lib/x86_64-linux-gnu/libc.so.6").  Among
 * versions the default one wins ("dlopen@@GLIBC_2.34").  Returns 0 and sets
 * *addr; -ESRCH if the process is gone, -ENXIO if no such object is mapped,
 * -ENOENT if the object does not define name, -EOPNOTSUPP for an IFUNC or TLS
 * symbol (no callable address), other -errno if the object cannot be read.
 * pid may name any thread (/proc/TID works where a zombie leader has no maps).
 */
int syms_find_symbol(uint32_t pid, const char *module_prefix, const char *name, uint64_t *addr);

#endif /* GT_LIVE_H */
