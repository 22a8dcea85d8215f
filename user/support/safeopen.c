// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * safeopen.c: opening files a traced process points at without giving it
 * the recorder's root rights, blocking it or feeding it devices; see
 * safeopen.h.
 *
 * Every open is in two steps: an O_PATH open, which neither blocks on a
 * FIFO nor runs a device's open, then fstat of that very inode and, only
 * for a regular file of bounded size, a reopen of it through
 * /proc/self/fd/N for reading.  The file checked is the file read: no name
 * is looked up twice, so nothing can be swapped in between.
 *
 * A path the target controls is looked up with the target's credentials:
 * the calling thread's fs uid, fs gid and groups are set to the target's
 * (raw syscalls: glibc's wrappers would change every thread of the
 * recorder), which also drops CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH from
 * the thread while its fs uid is not 0, and are restored before returning.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "support/procfs.h"
#include "support/safeopen.h"
#include "support/util.h"

#define OPEN_FLAGS (O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)

/* Groups the recorder may itself be in (restored after a target's are used). */
#define OWN_MAX_GROUPS 256

int safeopen_check_fd(int fd, struct stat *st)
{
	struct stat tmp;

	if (!st)
		st = &tmp;
	if (fstat(fd, st))
		return -errno;
	if (!S_ISREG(st->st_mode))
		return -EINVAL;
	if ((uint64_t)st->st_size > SAFEOPEN_MAX_SIZE)
		return -EFBIG;
	return 0;
}

/* The second step: the O_PATH fd (consumed) checked, then reopened for reading. */
static int reopen_checked(int pfd, struct stat *st)
{
	char self[64];
	struct stat tmp;
	int fd, err;

	if (!st)
		st = &tmp;
	err = safeopen_check_fd(pfd, st);
	if (err) {
		close(pfd);
		return err;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, OPEN_FLAGS);
	err = fd < 0 ? -errno : 0;
	close(pfd);
	if (err)
		return err;
	/* The same inode by construction; checked again all the same (cheap). */
	err = safeopen_check_fd(fd, st);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

int safeopen_trusted(const char *path, struct stat *st)
{
	int pfd = open(path, O_PATH | O_CLOEXEC);

	return pfd < 0 ? -errno : reopen_checked(pfd, st);
}

int safeopen_map_files(pid_t pid, uint64_t start, uint64_t end, struct stat *st)
{
	char path[96];

	if (!procfs_map_files_path(path, sizeof(path), pid, start, end))
		return -ENAMETOOLONG;
	/* A magic link to the mapped inode: a GPU driver's device mapping is refused by fstat. */
	return safeopen_trusted(path, st);
}

/* ---- the target's credentials ---- */

static int parse_ids(const char *status, const char *key, unsigned long *fs)
{
	unsigned long r, e, s, f;
	char val[128];

	if (!procfs_status_field(status, key, val, sizeof(val)) ||
	    sscanf(val, "%lu %lu %lu %lu", &r, &e, &s, &f) != 4)
		return -EINVAL;
	*fs = f;
	return 0;
}

int safeopen_creds_parse(const char *status, struct safeopen_creds *c)
{
	unsigned long uid, gid;
	const char *p;

	memset(c, 0, sizeof(*c));
	/* The fs ids: what the kernel checks when the target opens a file. */
	if (parse_ids(status, "Uid", &uid) || parse_ids(status, "Gid", &gid))
		return -EINVAL;
	if (uid >= (uid_t)-1 || gid >= (gid_t)-1)
		return -EINVAL;
	c->uid = (uid_t)uid;
	c->gid = (gid_t)gid;
	for (p = status; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		char *end;

		if (strncmp(p, "Groups:", 7))
			continue;
		p += 7;
		while (c->ngroups < SAFEOPEN_MAX_GROUPS) {
			unsigned long g;

			p += strspn(p, " \t");
			if (*p < '0' || *p > '9')
				break;
			g = strtoul(p, &end, 10);
			if (g >= (gid_t)-1)
				return -EINVAL;
			c->groups[c->ngroups++] = (gid_t)g;
			p = end;
		}
		break;
	}
	return 0;
}

int safeopen_creds_read(pid_t pid, struct safeopen_creds *c)
{
	char buf[4096];
	long n = procfs_status_read(pid, 0, buf, sizeof(buf));

	if (n <= 0)
		return n ? (int)n : -ESRCH;
	return safeopen_creds_parse(buf, c);
}

struct saved_creds {
	uid_t fsuid;
	gid_t fsgid;
	int ngroups;
	gid_t groups[OWN_MAX_GROUPS];
	bool switched;
};

static uid_t cur_fsuid(void)
{
	/* An invalid id changes nothing and returns the current one. */
	return (uid_t)syscall(SYS_setfsuid, (uid_t)-1);
}

static gid_t cur_fsgid(void)
{
	return (gid_t)syscall(SYS_setfsgid, (gid_t)-1);
}

static void creds_leave(struct saved_creds *s)
{
	if (!s->switched)
		return;
	/* fs uid first: back to 0, the capabilities it dropped return. */
	syscall(SYS_setfsuid, s->fsuid);
	syscall(SYS_setfsgid, s->fsgid);
	if (syscall(SYS_setgroups, s->ngroups, s->groups) || cur_fsuid() != s->fsuid ||
	    cur_fsgid() != s->fsgid) {
		/* A thread left with a target's rights would misbehave quietly: stop here. */
		gt_err("cannot restore the recorder's credentials after opening a target's file");
		abort();
	}
	s->switched = false;
}

static int creds_enter(const struct safeopen_creds *c, struct saved_creds *s)
{
	s->switched = false;
	s->fsuid = cur_fsuid();
	s->fsgid = cur_fsgid();
	s->ngroups = getgroups(OWN_MAX_GROUPS, s->groups);
	if (s->ngroups < 0)
		return -errno;
	if (syscall(SYS_setgroups, (size_t)c->ngroups, c->groups)) {
		/* Unprivileged (unit tests): only a target with our own ids is opened. */
		if (errno == EPERM && s->fsuid == c->uid && s->fsgid == c->gid)
			return 0;
		return -EPERM;
	}
	s->switched = true;
	syscall(SYS_setfsgid, c->gid);
	syscall(SYS_setfsuid, c->uid);
	if (cur_fsuid() != c->uid || cur_fsgid() != c->gid) {
		creds_leave(s);
		return -EPERM;
	}
	return 0;
}

static int open_path(int dirfd, const char *path, bool in_root, bool nofollow)
{
	struct open_how how = {
	    .flags = O_PATH | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0),
	    /* /proc/N/fd/M, /proc/N/root: links that would escape the target's rights. */
	    .resolve = RESOLVE_NO_MAGICLINKS | (in_root ? RESOLVE_IN_ROOT : 0),
	};
	long fd = syscall(SYS_openat2, dirfd, path, &how, sizeof(how));

	return fd < 0 ? -errno : (int)fd;
}

int safeopen_as_creds(pid_t pid, const struct safeopen_creds *c, const char *path, bool in_root,
		      bool nofollow, struct stat *st)
{
	struct saved_creds s;
	int rootfd = AT_FDCWD, pfd, ret;
	char root[64];

	if (!path || path[0] != '/')
		return -EINVAL;
	if (in_root) {
		/* The target's root is reached with ours (its /proc entry is root's to read). */
		if (!procfs_path(root, sizeof(root), pid, 0, "root"))
			return -ENAMETOOLONG;
		rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (rootfd < 0)
			return -errno;
	}
	ret = creds_enter(c, &s);
	if (!ret) {
		pfd = open_path(rootfd, in_root ? path + 1 : path, in_root, nofollow);
		/* Reopened with the target's rights too: the file's own mode is checked as its. */
		ret = pfd < 0 ? pfd : reopen_checked(pfd, st);
		creds_leave(&s);
	}
	if (rootfd >= 0)
		close(rootfd);
	return ret;
}

int safeopen_as_target(pid_t pid, const char *path, bool in_root, bool nofollow, struct stat *st)
{
	struct safeopen_creds c;
	int err = safeopen_creds_read(pid, &c);

	return err ? err : safeopen_as_creds(pid, &c, path, in_root, nofollow, st);
}

/* ---- mapped objects ---- */

bool safeopen_path_plain(const char *maps_path)
{
	if (!maps_path || maps_path[0] != '/' || procfs_path_is_deleted(maps_path))
		return false;
	for (const char *p = maps_path; *p; p++)
		if (*p == '\\' || (unsigned char)*p < 0x20 || *p == 0x7f)
			return false;
	return true;
}

bool safeopen_path_unescape(const char *maps_path, char *out, size_t len)
{
	size_t o = 0;

	if (!len)
		return false;
	for (const char *p = maps_path; *p; p++) {
		char c = *p;

		if (c == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7' &&
		    p[3] >= '0' && p[3] <= '7') {
			c = (char)((p[1] - '0') << 6 | (p[2] - '0') << 3 | (p[3] - '0'));
			p += 3;
		}
		if (o + 1 >= len) {
			out[o] = '\0';
			return false;
		}
		out[o++] = c;
	}
	out[o] = '\0';
	return true;
}

int safeopen_mapped(pid_t pid, uint64_t start, uint64_t end, const char *maps_path, uint64_t inode,
		    struct stat *st)
{
	struct stat tmp;
	int fd;

	if (!st)
		st = &tmp;
	fd = safeopen_map_files(pid, start, end, st);
	/* Found but refused (a device, a huge file): the name would give the same. */
	if (fd >= 0 || fd == -EINVAL || fd == -EFBIG)
		return fd;
	if (!safeopen_path_plain(maps_path))
		return -ENOENT;
	fd = safeopen_as_target(pid, maps_path, true, false, st);
	if (fd >= 0 && inode && st->st_ino != inode) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

/* The maps text is the name, or the name with " (deleted)" (libdwfl's reports cut it). */
static bool names_mapping(const char *text, const char *name)
{
	size_t len = strlen(name);

	return !strncmp(text, name, len) &&
	       (!text[len] || (procfs_path_is_deleted(text) && !strcmp(text + len, " (deleted)")));
}

int safeopen_mapped_name(pid_t pid, const char *maps_path, struct stat *st)
{
	struct procfs_maps it;
	struct procfs_map m;
	bool found = false;

	if (!maps_path || maps_path[0] != '/')
		return -EINVAL;
	if (!procfs_maps_open(&it, pid, 0)) {
		while (procfs_maps_next(&it, &m)) {
			if (m.inode && names_mapping(m.path, maps_path)) {
				found = true;
				break;
			}
		}
		if (found) {
			int fd = safeopen_mapped(pid, m.start, m.end, m.path, m.inode, st);

			procfs_maps_close(&it);
			return fd;
		}
		procfs_maps_close(&it);
	}
	if (!safeopen_path_plain(maps_path))
		return -ENOENT;
	return safeopen_as_target(pid, maps_path, true, false, st);
}
