// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * debugfind.c: finding an object's separate debug file without trusting
 * the target's directories; see debugfind.h.  By build id in the absolute
 * trees (root's: opened as root), then by .gnu_debuglink in the object's
 * directory, its subfolders and the trees (opened with the target's
 * credentials), each candidate tied to the object before it is taken.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "support/safeopen.h"
#include "support/util.h"
#include "symbols/debugfind.h"
#include "symbols/elf.h"

/* Entries of a debuginfo_path taken (a longer one is cut). */
#define MAX_ENTRIES 16

bool debugfind__link_ok(const char *link)
{
	size_t len;

	if (!link)
		return false;
	len = strnlen(link, DEBUGFIND_MAX_LINK + 1);
	if (!len || len > DEBUGFIND_MAX_LINK || strchr(link, '/') || !strcmp(link, ".") ||
	    strstr(link, ".."))
		return false;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)link[i] < 0x20)
			return false;
	return true;
}

int debugfind__crc(int fd, uint32_t *crc)
{
	const size_t cap = 1 << 16;
	uLong c = crc32(0L, Z_NULL, 0);
	uint64_t off = 0;
	struct stat st;
	uint8_t *buf;
	int err = safeopen_check_fd(fd, &st);

	if (err)
		return err;
	if ((uint64_t)st.st_size > DEBUGFIND_MAX_CRC_SIZE)
		return -EFBIG;
	buf = gt_xmalloc(cap);
	/* Up to the size fstat gave: a file that grows meanwhile is not read forever. */
	while (!err && off < (uint64_t)st.st_size) {
		size_t want = (size_t)GT_MIN((uint64_t)cap, (uint64_t)st.st_size - off);
		ssize_t n = pread(fd, buf, want, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n ? -errno : -EIO;
			break;
		}
		c = crc32(c, buf, (uInt)n);
		off += (uint64_t)n;
	}
	free(buf);
	if (!err)
		*crc = (uint32_t)c;
	return err;
}

/* Whether the file open at fd is r's debug file: same build id, else the link's CRC. */
static bool tied(int fd, const struct debugfind_req *r, bool by_link, bool have_crc)
{
	uint8_t bid[64];
	struct stat st;
	uint32_t crc;
	int n = -1;
	Elf *elf;

	if (safeopen_check_fd(fd, &st))
		return false;
	elf__init();
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		elf_end(elf);
		return false;
	}
	n = elf__build_id(elf, (uint64_t)st.st_size, bid, sizeof(bid));
	elf_end(elf);
	/* Both have one: they decide, a differing CRC or not. */
	if (r->build_id_len && n > 0)
		return (size_t)n == r->build_id_len && !memcmp(bid, r->build_id, (size_t)n);
	if (!by_link || !have_crc)
		return false;
	return !debugfind__crc(fd, &crc) && crc == r->crc;
}

static int take(int fd, const struct debugfind_req *r, bool by_link, bool have_crc,
		const char *name, char **found)
{
	if (!tied(fd, r, by_link, have_crc)) {
		gt_dbg("debug info: %s is not the debug file of %s (no build id or CRC match)",
		       gt_clean(name), gt_clean(r->name));
		close(fd);
		return -ENOENT;
	}
	*found = gt_xstrdup(name);
	return fd;
}

static int by_build_id(const struct debugfind_req *r, char **entries, size_t n, char **found)
{
	char hex[2 * 64 + 1], path[PATH_MAX];

	if (r->build_id_len < 2 || r->build_id_len > 64)
		return -ENOENT;
	for (size_t i = 0; i < r->build_id_len; i++)
		snprintf(hex + 2 * i, 3, "%02x", r->build_id[i]);
	for (size_t i = 0; i < n; i++) {
		int fd;

		if (entries[i][0] != '/')
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", entries[i],
				     hex, hex + 2) >= sizeof(path))
			continue;
		/* The trees are root's (or the operator's): their symlinks are theirs to follow. */
		fd = safeopen_trusted(path, NULL);
		if (fd >= 0 && (fd = take(fd, r, false, false, path, found)) >= 0)
			return fd;
	}
	return -ENOENT;
}

static int by_link(const struct debugfind_req *r, char **entries, size_t n, char **found)
{
	char dir[PATH_MAX], path[PATH_MAX], deflink[DEBUGFIND_MAX_LINK + 8];
	const char *slash, *link = r->link;
	struct safeopen_creds c;
	bool have_crc = true;

	if (r->pid <= 0 || !r->name)
		return -ENOENT;
	/* Its directory only from a maps text that names the file. */
	if (!safeopen_path_plain(r->name) || !(slash = strrchr(r->name, '/')) ||
	    (size_t)(slash - r->name) >= sizeof(dir))
		return -ENOENT;
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - r->name), r->name);
	if (!link) {
		/* dwfl's guess without a link: nothing but a build id can tie it. */
		if (!r->build_id_len || (size_t)snprintf(deflink, sizeof(deflink), "%s.debug",
							 slash + 1) >= sizeof(deflink))
			return -ENOENT;
		link = deflink;
		have_crc = false;
	}
	if (!debugfind__link_ok(link)) {
		gt_dbg("debug info: link %s of %s refused (a plain file name is required)",
		       gt_clean(link), gt_clean(r->name));
		return -ENOENT;
	}
	/* Without its credentials (the process is gone), nothing of the target is opened. */
	if (r->creds)
		c = *r->creds;
	else if (safeopen_creds_read(r->pid, &c))
		return -ENOENT;
	for (size_t i = 0; i < n; i++) {
		const char *e = entries[i];
		bool in_root = e[0] != '/';
		int len, fd;

		if (!e[0])
			len = snprintf(path, sizeof(path), "%s/%s", dir, link);
		else if (in_root)
			len = snprintf(path, sizeof(path), "%s/%s/%s", dir, e, link);
		else
			len = snprintf(path, sizeof(path), "%s%s/%s", e, dir, link);
		if (len < 0 || (size_t)len >= sizeof(path))
			continue;
		/*
		 * The target's rights wherever the name comes from it: its folders
		 * as it sees them, the trees' folders named after its directories.
		 */
		fd = safeopen_as_creds(r->pid, &c, path, in_root, false, NULL);
		if (fd >= 0 && (fd = take(fd, r, true, have_crc, path, found)) >= 0)
			return fd;
	}
	return -ENOENT;
}

/*
 * debuginfod (DEBUGINFOD_URLS set), as dwfl's search asked it: by build id
 * only, into root's cache; libdebuginfod is loaded when first needed (the
 * API is declared here: Debian ships the library without its header in
 * the runtime package).
 */
typedef void *(*dfd_begin_fn)(void);
typedef int (*dfd_find_fn)(void *client, const unsigned char *id, int len, char **path);
typedef void (*dfd_end_fn)(void *client);

static int by_debuginfod(const struct debugfind_req *r, char **found)
{
	static void *lib;
	static bool tried;
	dfd_begin_fn begin;
	dfd_find_fn find;
	dfd_end_fn end;
	const char *urls = getenv("DEBUGINFOD_URLS");
	char *path = NULL;
	void *client;
	int fd, ret;

	if (!urls || !*urls || r->build_id_len < 2 || r->build_id_len > 64)
		return -ENOENT;
	if (!tried) {
		tried = true;
		lib = dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_LOCAL);
		if (!lib)
			gt_dbg("debug info: DEBUGINFOD_URLS is set but libdebuginfod.so.1 "
			       "cannot be loaded: %s",
			       dlerror());
	}
	if (!lib)
		return -ENOENT;
	begin = (dfd_begin_fn)dlsym(lib, "debuginfod_begin");
	find = (dfd_find_fn)dlsym(lib, "debuginfod_find_debuginfo");
	end = (dfd_end_fn)dlsym(lib, "debuginfod_end");
	if (!begin || !find || !end || !(client = begin()))
		return -ENOENT;
	ret = find(client, r->build_id, (int)r->build_id_len, &path);
	end(client);
	if (ret < 0 || !path) {
		if (ret >= 0)
			close(ret);
		free(path);
		return -ENOENT;
	}
	close(ret);
	/* Reopened by the name it gave, as any other candidate: checked and tied. */
	fd = safeopen_trusted(path, NULL);
	if (fd >= 0)
		fd = take(fd, r, false, false, path, found);
	free(path);
	return fd;
}

int debugfind__open(const struct debugfind_req *r, char **found)
{
	char *copy, *entries[MAX_ENTRIES], *p;
	size_t n = 0;
	int fd;

	*found = NULL;
	copy = gt_xstrdup(r->path && *r->path ? r->path : DEBUGFIND_DEFAULT_PATH);
	p = copy;
	if (*p == '+' || *p == '-')
		p++;
	while (n < MAX_ENTRIES) {
		entries[n++] = p;
		p = strchr(p, ':');
		if (!p)
			break;
		*p++ = '\0';
	}
	fd = by_build_id(r, entries, n, found);
	if (fd < 0)
		fd = by_link(r, entries, n, found);
	if (fd < 0)
		fd = by_debuginfod(r, found);
	free(copy);
	return fd;
}
