// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* procfs.c: reading /proc/PID (maps, mapped objects, status, stat, comm, task); see procfs.h. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "support/procfs.h"
#include "support/util.h"

/* ---- maps ---- */

bool procfs_maps_parse_line(char *line, struct procfs_map *m)
{
	unsigned long long start, end, pgoff, inode;
	unsigned int maj, min;
	char perms[8];
	int n = -1;
	char *path;
	size_t len;

	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &pgoff, &maj,
		   &min, &inode, &n) != 7)
		return false;
	if (start >= end || strlen(perms) < 4)
		return false;
	m->start = start;
	m->end = end;
	m->offset = pgoff;
	m->inode = inode;
	m->dev_major = maj;
	m->dev_minor = min;
	memcpy(m->perms, perms, sizeof(m->perms));
	m->exec = perms[2] == 'x';
	m->path = "";
	if (n < 0)
		return true;
	path = line + n;
	len = strlen(path);
	if (len && path[len - 1] == '\n')
		path[len - 1] = '\0';
	m->path = path;
	return true;
}

int procfs_maps_open_path(struct procfs_maps *it, const char *path)
{
	memset(it, 0, sizeof(*it));
	it->f = fopen(path, "re");
	return it->f ? 0 : -errno;
}

int procfs_maps_open(struct procfs_maps *it, pid_t pid, pid_t tid)
{
	char path[96];

	if (!procfs_path(path, sizeof(path), pid, tid, "maps")) {
		memset(it, 0, sizeof(*it));
		return -ENAMETOOLONG;
	}
	return procfs_maps_open_path(it, path);
}

bool procfs_maps_next(struct procfs_maps *it, struct procfs_map *m)
{
	if (!it->f)
		return false;
	while (it->nlines < PROCFS_MAX_MAPPINGS && getline(&it->line, &it->cap, it->f) > 0) {
		it->nlines++;
		if (procfs_maps_parse_line(it->line, m))
			return true;
	}
	return false;
}

void procfs_maps_close(struct procfs_maps *it)
{
	free(it->line);
	if (it->f)
		fclose(it->f);
	memset(it, 0, sizeof(*it));
}

bool procfs_path_is_deleted(const char *path)
{
	static const char suffix[] = " (deleted)";
	size_t len = strlen(path);

	return len >= sizeof(suffix) - 1 && !strcmp(path + len - (sizeof(suffix) - 1), suffix);
}

/* ---- small files ---- */

bool procfs_path(char *buf, size_t len, pid_t pid, pid_t tid, const char *name)
{
	int n;

	if (!pid)
		n = tid ? snprintf(buf, len, "/proc/self/task/%d/%s", tid, name)
			: snprintf(buf, len, "/proc/self/%s", name);
	else
		n = tid ? snprintf(buf, len, "/proc/%d/task/%d/%s", pid, tid, name)
			: snprintf(buf, len, "/proc/%d/%s", pid, name);
	return n >= 0 && (size_t)n < len;
}

bool procfs_root_path(char *buf, size_t len, pid_t pid, const char *path)
{
	int n = pid ? snprintf(buf, len, "/proc/%d/root%s", pid, path)
		    : snprintf(buf, len, "/proc/self/root%s", path);

	return n >= 0 && (size_t)n < len;
}

bool procfs_map_files_path(char *buf, size_t len, pid_t pid, uint64_t start, uint64_t end)
{
	char name[48];

	snprintf(name, sizeof(name), "map_files/%llx-%llx", (unsigned long long)start,
		 (unsigned long long)end);
	return procfs_path(buf, len, pid, 0, name);
}

long procfs_read(pid_t pid, pid_t tid, const char *name, char *buf, size_t len)
{
	char path[128];

	if (!procfs_path(path, sizeof(path), pid, tid, name))
		return -ENAMETOOLONG;
	return gt_read_file(path, buf, len);
}

bool procfs_comm(pid_t pid, pid_t tid, char *buf, size_t len)
{
	if (procfs_read(pid, tid, "comm", buf, len) <= 0) {
		if (len)
			buf[0] = '\0';
		return false;
	}
	buf[strcspn(buf, "\n")] = '\0';
	return true;
}

/* ---- status ---- */

long procfs_status_read(pid_t pid, pid_t tid, char *buf, size_t len)
{
	return procfs_read(pid, tid, "status", buf, len);
}

bool procfs_status_field(const char *text, const char *key, char *out, size_t len)
{
	size_t klen = strlen(key);
	const char *p = text;

	while (p && *p) {
		if (!strncmp(p, key, klen) && p[klen] == ':') {
			size_t n;

			p += klen + 1;
			p += strspn(p, " \t");
			n = strcspn(p, "\n");
			n = GT_MIN(n, len - 1);
			memcpy(out, p, n);
			out[n] = '\0';
			return true;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return false;
}

long procfs_status_long(const char *text, const char *key, long dflt)
{
	char val[64];

	return procfs_status_field(text, key, val, sizeof(val)) ? strtol(val, NULL, 10) : dflt;
}

uint64_t procfs_status_hex(const char *text, const char *key)
{
	char val[64];

	return procfs_status_field(text, key, val, sizeof(val)) ? strtoull(val, NULL, 16) : 0;
}

/* ---- stat ---- */

int procfs_stat_read(pid_t pid, pid_t tid, struct procfs_stat *st)
{
	char buf[1024], *p;
	long n = procfs_read(pid, tid, "stat", buf, sizeof(buf));

	memset(st, 0, sizeof(*st));
	if (n <= 0)
		return n ? (int)n : -ENOENT;
	/* comm may hold spaces and parentheses: the fields follow the last ')'. */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || !p[2])
		return -EINVAL;
	st->state = p[2];
	if (sscanf(p + 3, " %d %*d %*d %*d %*d %lu", &st->ppid, &st->flags) != 2)
		return -EINVAL;
	return 0;
}

/* ---- task ---- */

int procfs_tasks_open(struct procfs_tasks *it, pid_t pid)
{
	char path[64];

	if (!procfs_path(path, sizeof(path), pid, 0, "task")) {
		it->dir = NULL;
		return -ENAMETOOLONG;
	}
	it->dir = opendir(path);
	return it->dir ? 0 : -errno;
}

pid_t procfs_tasks_next(struct procfs_tasks *it)
{
	struct dirent *de;

	if (!it->dir)
		return 0;
	while ((de = readdir(it->dir))) {
		long tid = strtol(de->d_name, NULL, 10);

		if (tid > 0)
			return (pid_t)tid;
	}
	return 0;
}

void procfs_tasks_close(struct procfs_tasks *it)
{
	if (it->dir)
		closedir(it->dir);
	it->dir = NULL;
}

pid_t procfs_live_thread(pid_t pid, pid_t skip)
{
	struct procfs_tasks it;
	struct procfs_stat st;
	pid_t tid, found = 0;

	if (procfs_tasks_open(&it, pid))
		return 0;
	while (!found && (tid = procfs_tasks_next(&it))) {
		if (tid == skip)
			continue;
		procfs_stat_read(pid, tid, &st);
		if (st.state && st.state != 'Z' && st.state != 'X')
			found = tid;
	}
	procfs_tasks_close(&it);
	return found;
}
