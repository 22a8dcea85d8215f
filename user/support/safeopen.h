/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * safeopen.h: the one way a file a traced process points at is opened
 * (safeopen.c).  The recorder is root; the target may name a FIFO, a device,
 * a symlink to a file only root may read, or a name /proc/PID/maps escapes.
 * So: a mapped object is opened through /proc/PID/map_files (the mapped
 * inode itself, deleted or not); any other path the target controls is
 * opened inside its root with its own credentials; every open is
 * O_RDONLY|O_NONBLOCK|O_NOCTTY|O_CLOEXEC and anything that is not a regular
 * file of at most SAFEOPEN_MAX_SIZE bytes is refused before a byte is read.
 * Each function returns an fd (the caller closes it) or -errno, and fills
 * *st (may be NULL).
 */
#ifndef GT_SAFEOPEN_H
#define GT_SAFEOPEN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/* Largest file opened: well above any real object or debug file (libcudnn's are ~1 GiB). */
#define SAFEOPEN_MAX_SIZE (16ULL << 30)

/* Supplementary groups taken from a target (more are dropped: fewer groups, fewer rights). */
#define SAFEOPEN_MAX_GROUPS 64

/* The credentials a target opens files with (its fs uid/gid and groups). */
struct safeopen_creds {
	uid_t uid;
	gid_t gid;
	int ngroups;
	gid_t groups[SAFEOPEN_MAX_GROUPS];
};

/* Reads the credentials of pid from /proc/PID/status text.  Returns 0 or -errno. */
int safeopen_creds_parse(const char *status, struct safeopen_creds *c);
int safeopen_creds_read(pid_t pid, struct safeopen_creds *c);

/* fstat and the checks every open makes: a regular file, size bounded.  0 or -errno. */
int safeopen_check_fd(int fd, struct stat *st);

/*
 * Opens a path the recorder itself chose (the system's debug tree, a
 * directory the operator named) with the recorder's rights.
 */
int safeopen_trusted(const char *path, struct stat *st);

/* Opens /proc/PID/map_files/START-END: the object behind one mapping of pid. */
int safeopen_map_files(pid_t pid, uint64_t start, uint64_t end, struct stat *st);

/*
 * Opens path with pid's credentials: inside pid's root (as pid sees it, its
 * symlinks kept inside it) when in_root, else in the recorder's.  nofollow
 * refuses a symlink as the last component.  Magic links (/proc/N/fd/...)
 * are never followed.
 */
int safeopen_as_target(pid_t pid, const char *path, bool in_root, bool nofollow, struct stat *st);

/* The same with credentials already read (a lookup of several candidates). */
int safeopen_as_creds(pid_t pid, const struct safeopen_creds *c, const char *path, bool in_root,
		      bool nofollow, struct stat *st);

/*
 * The object behind the mapping start-end of pid, whose maps text is
 * maps_path and inode is inode (0: any): through map_files, else, when the
 * text is a plain path (safeopen_path_plain), by name inside pid's root with
 * pid's credentials, checked to be that inode.
 */
int safeopen_mapped(pid_t pid, uint64_t start, uint64_t end, const char *maps_path, uint64_t inode,
		    struct stat *st);

/*
 * The object pid maps under the maps text maps_path (the first mapping
 * showing it, or it with " (deleted)"), as safeopen_mapped; a text pid does
 * not map is opened by name with pid's credentials when plain.
 */
int safeopen_mapped_name(pid_t pid, const char *maps_path, struct stat *st);

/*
 * True when a path from /proc/PID/maps names its file: absolute, no
 * backslash (the kernel writes a newline in a name as "\012" but leaves a
 * backslash alone, so such a text is ambiguous) and no " (deleted)".
 */
bool safeopen_path_plain(const char *maps_path);

/*
 * Undoes the kernel's escaping of a maps path ("\012" -> newline) into out:
 * the name the text most likely stands for, for messages (never to open:
 * a real backslash followed by "012" reads the same).  False if cut.
 */
bool safeopen_path_unescape(const char *maps_path, char *out, size_t len);

#endif /* GT_SAFEOPEN_H */
