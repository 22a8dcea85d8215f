/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * syms.h: address-to-symbol resolution on the recording host (ELF .symtab and
 * .dynsym of every mapped object, /proc/kallsyms for the kernel), mappings
 * with build ids, and ELF queries the attacher needs (USDT notes, symbols).
 * The module: syms.c and symtab.c (resolution), live.c (a running process's
 * mappings and symbol addresses), usdt.c (USDT notes), elf.c (ELF primitives).
 */
#ifndef GT_SYMS_H
#define GT_SYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct syms_cache;

struct syms_cache *syms_cache__new(void);
void syms_cache__free(struct syms_cache *c); /* NULL-safe */

/*
 * Resolves ip in the address space of pid (pid 0: the kernel).  On success
 * returns 0 and sets *name (symbol), *off (ip - symbol start) and *module
 * (object path; "[kernel]" or the module name for pid 0).  Returns -1 when
 * no symbol covers ip; *module is then still set when a mapping covers it
 * (else NULL) and *name is NULL.  Strings stay valid until the cache is freed.
 * When ip lies outside every cached mapping of pid, the maps are read again
 * once (objects loaded after the first read).  Objects are opened through
 * /proc/PID/map_files or /proc/PID/root so deleted files and other mount
 * namespaces work.
 */
int syms_cache__resolve(struct syms_cache *c, uint32_t pid, uint64_t ip, const char **name,
			uint32_t *off, const char **module);

/* Forgets pid's mappings (call when a process execs or exits). */
void syms_cache__forget(struct syms_cache *c, uint32_t pid);

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
 * Lists the USDT probes of provider in the ELF file at path (.note.stapsdt):
 * cb(name) once per distinct probe name.  Returns the number of probes found
 * (0: none or not an ELF file), or -errno if the file cannot be opened.
 */
int syms_elf_usdt_probes(const char *path, const char *provider,
			 int (*cb)(const char *name, void *ctx), void *ctx);

/* True if the ELF file at path defines a function symbol named name. */
bool syms_elf_has_func(const char *path, const char *name);

/* Reads the GNU build id of an ELF file. Returns its length (0 if none) or -errno. */
int syms_elf_build_id(const char *path, uint8_t *buf, size_t len);

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

#endif /* GT_SYMS_H */
