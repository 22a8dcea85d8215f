/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * debugfind.h: the search for an object's separate debug file (debugfind.c),
 * in place of libdwfl's, which opens whatever the target's directories hold
 * as root, blocking on a FIFO, following a symlink to a file only root may
 * read, and taking any ELF file there when no build id or CRC ties it to
 * the object.  Here a candidate is opened only through safeopen (the system
 * tree as root, the target's own directories with the target's
 * credentials) and accepted only when its build id equals the object's or,
 * without build ids, its CRC32 equals the .gnu_debuglink's.
 */
#ifndef GT_SYMBOLS_DEBUGFIND_H
#define GT_SYMBOLS_DEBUGFIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Where debug files are looked for when the operator says nothing (dwfl's default). */
#define DEBUGFIND_DEFAULT_PATH ":.debug:/usr/lib/debug"

/* Largest debug file whose CRC is computed (a tie by CRC is for old, small builds). */
#define DEBUGFIND_MAX_CRC_SIZE (1ULL << 30)

/* Longest .gnu_debuglink name taken. */
#define DEBUGFIND_MAX_LINK 255

struct safeopen_creds;

struct debugfind_req {
	pid_t pid; /* the process mapping the object (its root, its rights) */
	/* pid's credentials when the object was opened (NULL: read now; unreadable: no link search) */
	const struct safeopen_creds *creds;
	const char *name; /* the object's maps path (its directory is searched) */
	const uint8_t *build_id;
	size_t build_id_len; /* 0: none */
	/* .gnu_debuglink name; NULL: none, then "<object>.debug" if tied by build id */
	const char *link;
	uint32_t crc; /* .gnu_debuglink CRC32 */
	/*
	 * dwfl's debuginfo_path syntax: ':'-separated; "" the object's
	 * directory, a relative entry a folder in it, an absolute one a tree
	 * holding .build-id/ and the objects' directories.  NULL: the default.
	 * A leading '+' or '-' (dwfl's CRC switch) is skipped: a tie is always
	 * required.
	 */
	const char *path;
};

/*
 * Opens the debug file of r's object: an fd (caller closes) and its name in
 * *found (malloc'ed, for dwfl), or -errno (-ENOENT: none found).
 */
int debugfind__open(const struct debugfind_req *r, char **found);

/* True when a .gnu_debuglink name may be looked up: a plain file name. */
bool debugfind__link_ok(const char *link);

/* CRC32 (zlib's, as .gnu_debuglink holds it) of fd's whole contents: 0 or -errno. */
int debugfind__crc(int fd, uint32_t *crc);

#endif /* GT_SYMBOLS_DEBUGFIND_H */
