/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * elf.h: ELF primitives of the symbols module (elf.c), on top of libelf.
 * Every offset a file claims is checked against its size: the files come
 * from traced processes.  The primitives serve syms.c, usdt.c and live.c;
 * the by-path queries at the end also serve the attacher.
 */
#ifndef GT_SYMBOLS_ELF_H
#define GT_SYMBOLS_ELF_H

#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/* Hard caps: every input here comes from a traced process. */
#define MAX_PHDRS    4096u
#define MAX_SECTIONS (1u << 20)

/* An ELF file opened for reading; size bounds every offset the file claims. */
struct elf_handle {
	int fd;
	Elf *elf;
	uint64_t size;
};

/* Idempotent and cheap; every entry point may be the first libelf user. */
void elf__init(void);

/* st_mtim in ns: with dev, inode and size, the identity of a file version. */
uint64_t elf__stat_mtime_ns(const struct stat *st);

/*
 * Opening returns 0, -errno if the file cannot be opened (or is no regular
 * file: safeopen.h), -ENOEXEC if it is no ELF file.  The handle is closed
 * on failure.
 */
/* Takes fd (an fd or -errno from safeopen: consumed either way). */
int elf_handle__open_fd(struct elf_handle *h, int fd);
/* A path the recorder chose or that names a mapped object (/proc/PID/map_files/..., /proc/PID/root/...). */
int elf_handle__open(struct elf_handle *h, const char *path);
/* The object behind a mapping of pid, through safeopen_mapped; *st is filled (may be NULL). */
int elf_handle__open_mapped(struct elf_handle *h, pid_t pid, uint64_t start, uint64_t end,
			    const char *path, uint64_t inode, struct stat *st);
void elf_handle__close(struct elf_handle *h);

/*
 * Data of a section of type want, or NULL if it has another type, its header
 * points outside the file or it is compressed.
 */
Elf_Data *elf__section_data(Elf *elf, Elf_Scn *scn, uint64_t fsize, GElf_Shdr *sh, uint32_t want);

typedef int (*func_cb)(const GElf_Sym *s, const char *name, size_t len, void *ctx);

/*
 * Calls cb for every defined function of .symtab and .dynsym; len excludes a
 * "@VERSION" suffix.  A non-zero cb return stops the walk and is returned.
 */
int elf__for_each_func(Elf *elf, uint64_t fsize, func_cb cb, void *ctx);

typedef int (*note_cb)(const GElf_Nhdr *nh, const char *name, const uint8_t *desc, void *ctx);

/* Walks the notes of d; a non-zero cb return stops the walk and is returned. */
int notes__walk(Elf_Data *d, note_cb cb, void *ctx);

/* Returns the build id length, 0 if none, -ENOSPC if it does not fit in buf. */
int elf__build_id(Elf *elf, uint64_t fsize, uint8_t *buf, size_t len);

/* The best definition of one name seen so far. */
struct sym_pick {
	const char *want;
	size_t want_len;
	GElf_Sym sym;
	int rank; /* 0: none; 1: local; 2: non-default version; 3: default */
};

/* Looks p->want up in .dynsym (with its .gnu.version) and .symtab. */
void elf__find_sym(Elf *elf, uint64_t fsize, struct sym_pick *p);

/* Run-time address minus ELF address for the mapping of file offset pgoff at start. */
int elf__load_bias(Elf *elf, uint64_t start, uint64_t pgoff, uint64_t *bias);

/* Queries the attacher makes on an ELF file by path. */
/* True if the ELF file at path defines a function symbol named name. */
bool syms_elf_has_func(const char *path, const char *name);

/* Reads the GNU build id of an ELF file. Returns its length (0 if none) or -errno. */
int syms_elf_build_id(const char *path, uint8_t *buf, size_t len);

#endif /* GT_SYMBOLS_ELF_H */
