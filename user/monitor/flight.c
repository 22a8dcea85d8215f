// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * flight.c: the flight recorder's folder: segment names in time order,
 * retention by age and size (the segment being written is never deleted),
 * and snapshots as hard links that outlive retention.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "monitor/flight.h"
#include "support/util.h"

#define SEG_PREFIX "seg-"
#define SEG_SUFFIX ".gtcap"

static bool seg_name(const char *n)
{
	size_t len = strlen(n), pl = strlen(SEG_PREFIX), sl = strlen(SEG_SUFFIX);

	return len > pl + sl && len < sizeof(((struct flight_seg *)0)->name) &&
	       !strncmp(n, SEG_PREFIX, pl) && !strcmp(n + len - sl, SEG_SUFFIX);
}

static int cmp_seg(const void *a, const void *b)
{
	return strcmp(((const struct flight_seg *)a)->name, ((const struct flight_seg *)b)->name);
}

void flight__path(const struct flight *f, size_t i, char *out, size_t len)
{
	snprintf(out, len, "%s/%s", f->dir, f->segs[i].name);
}

static struct flight_seg *add(struct flight *f, const char *name)
{
	struct flight_seg *s;

	gt_grow((void **)&f->segs, &f->cap, f->n, sizeof(*f->segs));
	s = &f->segs[f->n++];
	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%s", name);
	return s;
}

int flight__open(struct flight *f, const char *dir, uint64_t keep_ns, uint64_t keep_bytes,
		 char *err, size_t errlen)
{
	struct dirent *de;
	struct stat st;
	DIR *d;

	memset(f, 0, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "%s", dir);
	f->keep_ns = keep_ns;
	f->keep_bytes = keep_bytes;
	if (mkdir(dir, 0700) && errno != EEXIST) {
		snprintf(err, errlen, "cannot create --dir %s: %s; give a writable folder", dir,
			 strerror(errno));
		return -1;
	}
	if (lstat(dir, &st) || !S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "--dir %s is not a folder: give a folder for the segments",
			 dir);
		return -1;
	}
	d = opendir(dir);
	if (!d) {
		snprintf(err, errlen, "cannot read --dir %s: %s", dir, strerror(errno));
		return -1;
	}
	/* An earlier run's segments count against the bounds too. */
	while ((de = readdir(d))) {
		struct stat ss;

		if (!seg_name(de->d_name) ||
		    fstatat(dirfd(d), de->d_name, &ss, AT_SYMLINK_NOFOLLOW) || !S_ISREG(ss.st_mode))
			continue;
		add(f, de->d_name)->bytes = (uint64_t)ss.st_size;
	}
	closedir(d);
	if (f->n)
		qsort(f->segs, f->n, sizeof(*f->segs), cmp_seg);
	return 0;
}

const char *flight__next(struct flight *f)
{
	char stamp[32];
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	/* The time first, so names sort in time order across runs; seq within a second. */
	snprintf(f->next, sizeof(f->next), SEG_PREFIX "%s-%06llu" SEG_SUFFIX, stamp,
		 (unsigned long long)(f->seq++ % 1000000));
	snprintf(f->cur, sizeof(f->cur), "%s/%s", f->dir, f->next);
	return f->cur;
}

void flight__begin(struct flight *f)
{
	add(f, f->next);
	f->writing = true;
}

uint64_t flight__bytes(const struct flight *f)
{
	uint64_t sum = 0;

	for (size_t i = 0; i + (f->writing ? 1 : 0) < f->n; i++)
		sum += f->segs[i].bytes;
	return sum;
}

static void drop_oldest(struct flight *f)
{
	char path[PATH_MAX + 64];

	flight__path(f, 0, path, sizeof(path));
	if (unlink(path) && errno != ENOENT)
		gt_warn("cannot delete the old segment %s: %s", path, strerror(errno));
	memmove(f->segs, f->segs + 1, (f->n - 1) * sizeof(*f->segs));
	f->n--;
}

void flight__closed(struct flight *f, uint64_t end_ns)
{
	char path[PATH_MAX + 64];
	struct flight_seg *s;
	struct stat st;

	if (!f->writing || !f->n)
		return;
	f->writing = false;
	s = &f->segs[f->n - 1];
	s->end_ns = end_ns;
	flight__path(f, f->n - 1, path, sizeof(path));
	if (!stat(path, &st))
		s->bytes = (uint64_t)st.st_size;
	/* The newest closed segment always stays: it is the one a snapshot wants. */
	while (f->n > 1) {
		bool old =
		    f->keep_ns && (!f->segs[0].end_ns || f->segs[0].end_ns + f->keep_ns < end_ns);
		bool big = f->keep_bytes && flight__bytes(f) > f->keep_bytes;

		if (!old && !big)
			break;
		drop_oldest(f);
	}
}

int flight__snapshot(struct flight *f, const char *name, size_t n, char *out, size_t outlen)
{
	char stamp[32], src[PATH_MAX + 64], dst[PATH_MAX + 128];
	size_t closed = f->n - (f->writing ? 1 : 0), first;
	time_t t = time(NULL);
	struct tm tm;
	int kept = 0;

	gmtime_r(&t, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	snprintf(dst, sizeof(dst), "%s/snapshots", f->dir);
	if (mkdir(dst, 0700) && errno != EEXIST) {
		gt_warn("cannot create %s: %s: no snapshot taken", dst, strerror(errno));
		return -1;
	}
	snprintf(out, outlen, "%s/snapshots/%s-%s", f->dir, name, stamp);
	for (int i = 1; mkdir(out, 0700); i++) {
		if (errno != EEXIST || i > 99) {
			gt_warn("cannot create %s: %s: no snapshot taken", out, strerror(errno));
			return -1;
		}
		snprintf(out, outlen, "%s/snapshots/%s-%s.%d", f->dir, name, stamp, i);
	}
	first = closed > n ? closed - n : 0;
	for (size_t i = first; i < closed; i++) {
		flight__path(f, i, src, sizeof(src));
		snprintf(dst, sizeof(dst), "%s/%s", out, f->segs[i].name);
		if (link(src, dst))
			gt_warn("cannot keep %s in the snapshot: %s", src, strerror(errno));
		else
			kept++;
	}
	return kept ? 0 : -1;
}

void flight__close(struct flight *f)
{
	free(f->segs);
	f->segs = NULL;
	f->n = f->cap = 0;
}
