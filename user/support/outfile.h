/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* outfile.h: creating output files safely as root (outfile.c). */
#ifndef GT_OUTFILE_H
#define GT_OUTFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

/*
 * Output files: gaptrace runs as root, so a user-named output path is
 * opened relative to its directory, never through a symbolic link at the
 * last component (unless only root or we can write that directory), always
 * created new (O_EXCL) and mode 0600 (command lines and symbols are private),
 * owned by the invoking user under sudo (gt_out__invoker).
 *
 * gt_out__create_keep_old creates path for writing as it is written (a
 * capture): an existing regular file is first renamed to path.old, with a
 * warning. A device or FIFO (/dev/null, /dev/stdout) is opened as it is.
 * Returns an fd, or -1 with a one-line message in err.
 */
/*
 * The user sudo ran gaptrace for (SUDO_UID, SUDO_GID), when running as root:
 * every file created here is given to them.  False when not under sudo.
 */
bool gt_out__invoker(uid_t *uid, gid_t *gid);

int gt_out__create_keep_old(const char *path, char *err, size_t errlen);

/*
 * gt_out__open writes to a temporary file in path's directory, made the
 * same safe way, that gt_out__close renames over path (a reader never sees
 * half a file). "-" or NULL is stdout. A device or FIFO is written directly.
 * The temporary file is unnamed (O_TMPFILE) until the close links it, so a
 * killed gaptrace leaves nothing behind; where the file system lacks
 * O_TMPFILE it is a hidden name from the start.
 */
struct gt_out {
	FILE *f;
	int dfd;    /* path's directory (O_PATH), -1 when writing directly */
	char *base; /* last component of path */
	char *tmp;  /* temporary name in dfd (once linked, for O_TMPFILE) */
	bool anon;  /* O_TMPFILE: no name until gt_out__close */
	const char *path;
};
/* Returns 0 and sets o->f, or -1 after printing a one-line error. */
int gt_out__open(struct gt_out *o, const char *path);
/* Flushes, checks, renames into place; returns 0 or -1 after printing an error. */
int gt_out__close(struct gt_out *o);
/* Closes and removes the temporary file (after a failure); safe to call twice. */
void gt_out__abort(struct gt_out *o);

#endif /* GT_OUTFILE_H */
