// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * live.c: queries on a running process: its file mappings with their build
 * ids (cached per file) and the run-time address of a symbol in one of its
 * objects.
 */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "support/procfs.h"
#include "support/safeopen.h"
#include "support/u64map.h"
#include "support/util.h"
#include "symbols/elf.h"
#include "symbols/live.h"

#define BUILD_ID_MAX sizeof(((struct syms_mapping *)0)->build_id)

/* ---- public: mappings with build ids ---- */

/*
 * Build ids by file, so one libc is parsed once however many times it is
 * mapped: one entry per dev/inode, found through the hash of both; entries
 * of one hash are chained, compared exactly.  Shared by all threads.
 */
struct bid_entry {
	uint64_t dev, inode, size, mtime_ns;
	uint32_t next; /* next entry of the same hash, BID_NONE: the last */
	uint8_t len;
	uint8_t id[BUILD_ID_MAX];
};

#define BID_NONE UINT32_MAX

static struct {
	struct u64map index; /* hash of dev/inode -> newest entry of that hash */
	struct bid_entry *v;
	size_t n, cap;
} bids;
static pthread_mutex_t bid_lock = PTHREAD_MUTEX_INITIALIZER;

/* The entry of dev/inode, or NULL; under bid_lock. */
static struct bid_entry *bids__find(uint64_t hash, uint64_t dev, uint64_t inode)
{
	uint64_t i;

	if (!u64map_get(&bids.index, hash, &i))
		return NULL;
	for (; i != BID_NONE; i = bids.v[i].next)
		if (bids.v[i].dev == dev && bids.v[i].inode == inode)
			return &bids.v[i];
	return NULL;
}

/* The entry of dev/inode, added if absent; under bid_lock.  NULL when full. */
static struct bid_entry *bids__get(uint64_t hash, uint64_t dev, uint64_t inode)
{
	struct bid_entry *e = bids__find(hash, dev, inode);
	uint64_t head;

	if (e)
		return e;
	if (bids.n >= BID_NONE)
		return NULL;
	gt_grow((void **)&bids.v, &bids.cap, bids.n, sizeof(*bids.v));
	e = &bids.v[bids.n];
	memset(e, 0, sizeof(*e));
	e->dev = dev;
	e->inode = inode;
	e->next = u64map_get(&bids.index, hash, &head) ? (uint32_t)head : BID_NONE;
	u64map_put(&bids.index, hash, bids.n++);
	return e;
}

static void mapping__build_id(uint32_t pid, const struct procfs_map *rm, struct syms_mapping *m)
{
	uint64_t dev = (uint64_t)rm->dev_major << 32 | rm->dev_minor, mtime, hash;
	uint64_t key[2] = {dev, rm->inode};
	char mf[96];
	struct bid_entry *e;
	struct elf_handle h;
	struct stat st;
	int fd = -1, len;

	/*
	 * A known file is recognised by a stat of its mapping (no open: this
	 * runs for every mapping); anything else is opened first, and the fd,
	 * not a name, is the way to the mapped inode (safeopen.h).
	 */
	if (!procfs_map_files_path(mf, sizeof(mf), (pid_t)pid, rm->start, rm->end) ||
	    stat(mf, &st) || !S_ISREG(st.st_mode) || st.st_ino != rm->inode) {
		fd = safeopen_mapped((pid_t)pid, rm->start, rm->end, rm->path, rm->inode, &st);
		if (fd < 0)
			return;
	}
	mtime = elf__stat_mtime_ns(&st);
	hash = gt_hash64(key, sizeof(key), 0);
	pthread_mutex_lock(&bid_lock);
	e = bids__find(hash, dev, rm->inode);
	if (e && e->size == (uint64_t)st.st_size && e->mtime_ns == mtime) {
		m->build_id_len = e->len;
		memcpy(m->build_id, e->id, e->len);
		pthread_mutex_unlock(&bid_lock);
		if (fd >= 0)
			close(fd);
		return;
	}
	pthread_mutex_unlock(&bid_lock);

	if (fd < 0) {
		fd = safeopen_map_files((pid_t)pid, rm->start, rm->end, &st);
		if (fd >= 0 && (st.st_ino != rm->inode || elf__stat_mtime_ns(&st) != mtime)) {
			close(fd);
			return; /* replaced meanwhile: the next read sees it */
		}
	}
	len = elf_handle__open_fd(&h, fd);
	if (len == -ENOEXEC)
		len = 0;
	else if (!len)
		len = elf__build_id(h.elf, h.size, m->build_id, sizeof(m->build_id));
	elf_handle__close(&h);
	if (len < 0 && len != -ENOSPC)
		return; /* unreadable now: do not remember */
	m->build_id_len = len > 0 ? (uint8_t)len : 0;

	pthread_mutex_lock(&bid_lock);
	e = bids__get(hash, dev, rm->inode);
	if (e) {
		e->size = (uint64_t)st.st_size;
		e->mtime_ns = mtime;
		e->len = m->build_id_len;
		memcpy(e->id, m->build_id, m->build_id_len);
	}
	pthread_mutex_unlock(&bid_lock);
}

static int read_mappings(uint32_t pid, bool exec_only,
			 int (*cb)(const struct syms_mapping *m, void *ctx), void *ctx)
{
	struct procfs_maps it;
	struct procfs_map rm;
	int err;

	if (!cb)
		return -EINVAL;
	elf__init();
	err = procfs_maps_open(&it, (pid_t)pid, 0);
	if (err)
		return err;
	while (procfs_maps_next(&it, &rm)) {
		struct syms_mapping m = {};

		if (rm.path[0] != '/' || !rm.inode || (exec_only && !rm.exec))
			continue;
		m.start = rm.start;
		m.end = rm.end;
		m.pgoff = rm.offset;
		m.inode = rm.inode;
		m.dev_major = rm.dev_major;
		m.dev_minor = rm.dev_minor;
		m.exec = rm.exec;
		m.path = rm.path;
		if (!exec_only)
			mapping__build_id(pid, &rm, &m);
		err = cb(&m, ctx);
		if (err)
			break;
	}
	procfs_maps_close(&it);
	return err;
}

int syms_read_mappings(uint32_t pid, int (*cb)(const struct syms_mapping *m, void *ctx), void *ctx)
{
	return read_mappings(pid, false, cb, ctx);
}

int syms_read_exec_mappings(uint32_t pid, int (*cb)(const struct syms_mapping *m, void *ctx),
			    void *ctx)
{
	return read_mappings(pid, true, cb, ctx);
}

/* ---- public: symbol lookup in a live process ---- */

static bool basename_has_prefix(const char *path, const char *prefix)
{
	const char *base = strrchr(path, '/');

	return !strncmp(base ? base + 1 : path, prefix, strlen(prefix));
}

int syms_find_symbol(uint32_t pid, const char *module_prefix, const char *name, uint64_t *addr)
{
	struct sym_pick pick = {.want = name};
	struct procfs_maps it;
	struct procfs_map rm;
	struct elf_handle h;
	bool found = false;
	uint64_t bias;
	int err;

	if (!module_prefix || !*module_prefix || !name || !*name || !addr)
		return -EINVAL;
	pick.want_len = strlen(name);
	elf__init();
	err = procfs_maps_open(&it, (pid_t)pid, 0);
	if (err)
		return err == -ENOENT ? -ESRCH : err;
	/* Maps are sorted: the first line of the object is its lowest mapping. */
	while (procfs_maps_next(&it, &rm)) {
		if (rm.path[0] == '/' && rm.inode && basename_has_prefix(rm.path, module_prefix)) {
			found = true;
			break;
		}
	}
	if (!found) {
		procfs_maps_close(&it);
		return -ENXIO;
	}
	err = elf_handle__open_mapped(&h, (pid_t)pid, rm.start, rm.end, rm.path, rm.inode, NULL);
	procfs_maps_close(&it);
	if (err)
		return err;
	err = elf__load_bias(h.elf, rm.start, rm.offset, &bias);
	if (!err) {
		elf__find_sym(h.elf, h.size, &pick);
		if (!pick.rank)
			err = -ENOENT;
		else if (GELF_ST_TYPE(pick.sym.st_info) == STT_GNU_IFUNC ||
			 GELF_ST_TYPE(pick.sym.st_info) == STT_TLS)
			err = -EOPNOTSUPP;
		else
			*addr = pick.sym.st_shndx == SHN_ABS ? pick.sym.st_value
							     : pick.sym.st_value + bias;
	}
	elf_handle__close(&h);
	return err;
}
