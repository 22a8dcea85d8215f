// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * outfile.c: output files created as root without following a link swapped
 * in by someone else, mode 0600, all or nothing (see outfile.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "support/outfile.h"
#include "support/util.h"

/* Opens path's directory (O_PATH) and sets *base to its last component; -1 on error. */
static int out_dir(const char *path, char **base, char *err, size_t errlen)
{
	const char *slash = strrchr(path, '/');
	char *dir;
	int dfd;

	*base = gt_xstrdup(slash ? slash + 1 : path);
	if (!**base || !strcmp(*base, ".") || !strcmp(*base, "..")) {
		gt_set_err(err, errlen, "cannot write %s: it names a directory; give a file name",
			   path);
		goto fail;
	}
	if (!slash)
		dir = gt_xstrdup(".");
	else if (slash == path)
		dir = gt_xstrdup("/");
	else
		dir = gt_xstrndup(path, (size_t)(slash - path));
	dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		gt_set_err(err, errlen, "cannot create %s: %s", path, strerror(errno));
	free(dir);
	if (dfd >= 0)
		return dfd;
fail:
	free(*base);
	*base = NULL;
	return -1;
}

/* Only root or we can change the directory: a link in it cannot be swapped by someone else. */
static bool dir_private(int dfd)
{
	struct stat st;

	if (fstat(dfd, &st))
		return false;
	return (st.st_uid == 0 || st.st_uid == geteuid()) && !(st.st_mode & (S_IWGRP | S_IWOTH));
}

enum out_kind {
	OUT_NEW,    /* nothing there yet */
	OUT_FILE,   /* a regular file (or a link in a private directory): replaced */
	OUT_DIRECT, /* a device or FIFO (/dev/null, /dev/stdout): written as it is */
};

/* What is at base in dfd now; -1 with err set when it must not be written. */
static int out_kind(int dfd, const char *base, const char *path, bool *link, char *err,
		    size_t errlen)
{
	struct stat st;

	*link = false;
	if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW)) {
		if (errno == ENOENT)
			return OUT_NEW;
		gt_set_err(err, errlen, "cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	if (S_ISLNK(st.st_mode)) {
		if (!dir_private(dfd)) {
			gt_set_err(
			    err, errlen,
			    "refusing to write %s: it is a symbolic link in a directory that "
			    "others can write; remove the link or write elsewhere with -o",
			    path);
			return -1;
		}
		*link = true;
		if (fstatat(dfd, base, &st, 0) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
			return OUT_DIRECT;
		return OUT_FILE;
	}
	if (S_ISDIR(st.st_mode)) {
		gt_set_err(err, errlen, "cannot write %s: it is a directory; give a file name",
			   path);
		return -1;
	}
	return S_ISREG(st.st_mode) ? OUT_FILE : OUT_DIRECT;
}

/* Opens an existing device or FIFO; a regular file found there (a race) is refused. */
static int open_direct(int dfd, const char *base, bool link, const char *path, char *err,
		       size_t errlen)
{
	struct stat st;
	int fd;

	fd = openat(dfd, base, O_WRONLY | O_NOCTTY | O_CLOEXEC | (link ? 0 : O_NOFOLLOW));
	if (fd < 0) {
		gt_set_err(err, errlen, "cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) || S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) {
		close(fd);
		gt_set_err(
		    err, errlen,
		    "refusing to write %s: it changed while being opened; is another process "
		    "writing there? Write elsewhere with -o",
		    path);
		return -1;
	}
	return fd;
}

/* A new file, never through a link, exactly 0600 whatever the umask. */
static char *tmp_name(const char *base, int i)
{
	return gt_xasprintf(".%.200s.%d.%llx.tmp", base, (int)getpid(),
			    (unsigned long long)(gt_now_mono_ns() + (uint64_t)i));
}

/* Gives an O_TMPFILE file a temporary name in dfd, to be renamed over the output. */
static int link_anon(struct gt_out *o)
{
	char proc[64];

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fileno(o->f));
	for (int i = 0; i < 100; i++) {
		free(o->tmp);
		o->tmp = tmp_name(o->base, i);
		if (!linkat(AT_FDCWD, proc, o->dfd, o->tmp, AT_SYMLINK_FOLLOW))
			return 0;
		if (errno != EEXIST)
			break;
	}
	free(o->tmp);
	o->tmp = NULL;
	return -1;
}

/*
 * Under sudo the outputs go to the user who ran it (SUDO_UID, SUDO_GID), so
 * the next step, `gaptrace report` without sudo, can read them; mode stays
 * 0600.  Anything but a plain non-zero id leaves the file root's.
 */
bool gt_out__invoker(uid_t *uid, gid_t *gid)
{
	const char *u = getenv("SUDO_UID"), *g = getenv("SUDO_GID");
	uint64_t v;

	if (geteuid() != 0 || !u || gt_parse_uint(u, 1, UINT32_MAX - 1, &v))
		return false;
	*uid = (uid_t)v;
	*gid = (gid_t)-1;
	if (g && !gt_parse_uint(g, 0, UINT32_MAX - 1, &v))
		*gid = (gid_t)v;
	return true;
}

static void give_to_invoker(int fd)
{
	uid_t uid;
	gid_t gid;

	if (gt_out__invoker(&uid, &gid) && fchown(fd, uid, gid))
		gt_dbg("cannot give an output file to uid %u: %s", (unsigned)uid, strerror(errno));
}

static int create_excl(int dfd, const char *name)
{
	int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC,
			0600);
	int e;

	if (fd >= 0)
		give_to_invoker(fd);
	if (fd < 0 || !fchmod(fd, 0600))
		return fd;
	e = errno;
	close(fd);
	unlinkat(dfd, name, 0);
	errno = e;
	return -1;
}

int gt_out__create_keep_old(const char *path, char *err, size_t errlen)
{
	char *base = NULL, *old = NULL;
	int dfd, kind, fd = -1;
	bool link, had_old;
	struct stat st;

	dfd = out_dir(path, &base, err, errlen);
	if (dfd < 0)
		return -1;
	kind = out_kind(dfd, base, path, &link, err, errlen);
	if (kind == OUT_DIRECT)
		fd = open_direct(dfd, base, link, path, err, errlen);
	if (kind != OUT_NEW && kind != OUT_FILE)
		goto cleanup;
	if (kind == OUT_FILE) {
		/* rename moves whatever is there now, even a link swapped in: never follows it. */
		old = gt_xasprintf("%s.old", base);
		had_old = fstatat(dfd, old, &st, AT_SYMLINK_NOFOLLOW) == 0;
		if (!renameat(dfd, base, dfd, old)) {
			gt_warn("%s existed: kept it as %s.old%s", path, path,
				had_old ? " (the older .old is replaced)" : "");
		} else if (errno != ENOENT) {
			gt_set_err(err, errlen, "cannot rename %s to %s.old: %s", path, path,
				   strerror(errno));
			goto cleanup;
		}
	}
	fd = create_excl(dfd, base);
	if (fd < 0)
		gt_set_err(err, errlen, "cannot create %s: %s%s", path, strerror(errno),
			   errno == EEXIST ? " (created by another process meanwhile); write "
					     "elsewhere with -o"
					   : "");
cleanup:
	close(dfd);
	free(base);
	free(old);
	return fd;
}

int gt_out__open(struct gt_out *o, const char *path)
{
	char err[512];
	int kind, fd = -1;
	bool link;

	memset(o, 0, sizeof(*o));
	o->dfd = -1;
	o->path = path;
	if (!path || !strcmp(path, "-")) {
		o->f = stdout;
		return 0;
	}
	o->dfd = out_dir(path, &o->base, err, sizeof(err));
	if (o->dfd < 0)
		goto fail;
	kind = out_kind(o->dfd, o->base, path, &link, err, sizeof(err));
	if (kind < 0)
		goto fail;
	if (kind == OUT_DIRECT) {
		fd = open_direct(o->dfd, o->base, link, path, err, sizeof(err));
		close(o->dfd);
		o->dfd = -1;
	} else {
		fd = openat(o->dfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
		o->anon = fd >= 0;
		if (fd >= 0)
			give_to_invoker(fd);
		/* A leading dot hides it; the base is cut so the name stays under NAME_MAX. */
		for (int i = 0; i < 100 && fd < 0; i++) {
			free(o->tmp);
			o->tmp = tmp_name(o->base, i);
			fd = create_excl(o->dfd, o->tmp);
			if (fd < 0 && errno != EEXIST)
				break;
		}
		if (fd < 0)
			snprintf(err, sizeof(err), "cannot create a temporary file next to %s: %s",
				 path, strerror(errno));
	}
	if (fd < 0)
		goto fail;
	o->f = fdopen(fd, "w");
	if (!o->f) {
		snprintf(err, sizeof(err), "cannot write %s: %s", path, strerror(errno));
		close(fd);
		goto fail;
	}
	return 0;
fail:
	gt_err("%s", err);
	gt_out__abort(o);
	return -1;
}

int gt_out__close(struct gt_out *o)
{
	int bad, e = 0;

	if (!o->f)
		return 0;
	bad = fflush(o->f) || ferror(o->f);
	if (bad)
		e = errno;
	if (o->f == stdout) {
		o->f = NULL;
		if (bad)
			gt_err("writing the output failed: %s", strerror(e ? e : EIO));
		return bad ? -1 : 0;
	}
	if (!bad && o->anon && link_anon(o)) {
		bad = 1;
		e = errno;
	}
	if (fclose(o->f) && !bad) {
		bad = 1;
		e = errno;
	}
	o->f = NULL;
	if (!bad && o->tmp && renameat(o->dfd, o->tmp, o->dfd, o->base)) {
		bad = 1;
		e = errno;
	}
	if (!bad) {
		free(o->tmp);
		o->tmp = NULL;
	} else {
		gt_err("writing %s failed: %s", o->path, strerror(e ? e : EIO));
	}
	gt_out__abort(o);
	return bad ? -1 : 0;
}

void gt_out__abort(struct gt_out *o)
{
	if (o->f && o->f != stdout)
		fclose(o->f);
	o->f = NULL;
	if (o->tmp && o->dfd >= 0)
		unlinkat(o->dfd, o->tmp, 0);
	if (o->dfd >= 0)
		close(o->dfd);
	o->dfd = -1;
	free(o->tmp);
	o->tmp = NULL;
	free(o->base);
	o->base = NULL;
}
