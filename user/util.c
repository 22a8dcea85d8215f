// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * util.c: logging, clocks, duration/size parsing and allocation helpers.
 * Logging is the only place that writes diagnostics, so -v and the progress
 * line interact correctly.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

int gt_verbose;
static bool progress_active;

void gt_log_set_progress_active(bool active)
{
	progress_active = active;
}

static void vlog(const char *prefix, const char *fmt, va_list ap)
{
	/* Erase the progress line so the message is not glued to it. */
	if (progress_active)
		fputs("\r\033[K", stderr);
	fputs(prefix, stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void gt_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("gaptrace: error: ", fmt, ap);
	va_end(ap);
}

void gt_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("gaptrace: warning: ", fmt, ap);
	va_end(ap);
}

void gt_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("gaptrace: ", fmt, ap);
	va_end(ap);
}

void gt_dbg(const char *fmt, ...)
{
	va_list ap;

	if (!gt_verbose)
		return;
	va_start(ap, fmt);
	vlog("gaptrace: debug: ", fmt, ap);
	va_end(ap);
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

uint64_t gt_now_mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

uint64_t gt_now_real_ns(void)
{
	return clock_ns(CLOCK_REALTIME);
}

static int parse_scaled(const char *s, const char *const *units, const double *scale, size_t nunits,
			size_t default_unit, double *out)
{
	char *end;
	double v;

	if (!s || !*s || isspace((unsigned char)*s) || *s == '-')
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !isfinite(v) || v < 0)
		return -1;
	if (!*end) {
		*out = v * scale[default_unit];
		return 0;
	}
	for (size_t i = 0; i < nunits; i++) {
		if (!strcmp(end, units[i])) {
			*out = v * scale[i];
			return 0;
		}
	}
	return -1;
}

int gt_parse_duration(const char *s, uint64_t *ns)
{
	static const char *const units[] = {"ns", "us", "ms", "s", "m", "h"};
	static const double scale[] = {1, 1e3, 1e6, 1e9, 60e9, 3600e9};
	double v;

	if (parse_scaled(s, units, scale, GT_ARRAY_SIZE(units), 0, &v) || v > 1e19)
		return -1;
	*ns = (uint64_t)llround(v);
	return 0;
}

int gt_parse_size(const char *s, uint64_t *bytes)
{
	static const char *const units[] = {"B", "K", "KiB", "M", "MiB", "G", "GiB"};
	static const double scale[] = {1,	  1024.0,	1024.0,	     1048576.0,
				       1048576.0, 1073741824.0, 1073741824.0};
	double v;

	if (parse_scaled(s, units, scale, GT_ARRAY_SIZE(units), 0, &v) || v > 1e18)
		return -1;
	*bytes = (uint64_t)llround(v);
	return 0;
}

const char *gt_fmt_dur(uint64_t ns, char *buf, size_t len)
{
	if (ns < NSEC_PER_USEC)
		snprintf(buf, len, "%llu ns", (unsigned long long)ns);
	else if (ns < NSEC_PER_MSEC)
		snprintf(buf, len, "%.2f us", ns / 1e3);
	else if (ns < NSEC_PER_SEC)
		snprintf(buf, len, "%.2f ms", ns / 1e6);
	else
		snprintf(buf, len, "%.2f s", ns / 1e9);
	return buf;
}

void gt_xml_puts(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '&':
			fputs("&amp;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&#39;", f);
			break;
		default:
			fputc(*s, f);
		}
	}
}

const char *gt_fmt_bytes(uint64_t bytes, char *buf, size_t len)
{
	if (bytes < 1024)
		snprintf(buf, len, "%llu B", (unsigned long long)bytes);
	else if (bytes < 1024 * 1024)
		snprintf(buf, len, "%.1f KiB", bytes / 1024.0);
	else if (bytes < 1024ULL * 1024 * 1024)
		snprintf(buf, len, "%.1f MiB", bytes / 1048576.0);
	else
		snprintf(buf, len, "%.2f GiB", bytes / 1073741824.0);
	return buf;
}

long gt_read_file(const char *path, char *buf, size_t len)
{
	size_t off = 0;
	int fd;

	if (len == 0)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (off + 1 < len) {
		ssize_t n = read(fd, buf + off, len - 1 - off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			n = -errno;
			close(fd);
			return n;
		}
		if (n == 0)
			break;
		off += (size_t)n;
	}
	buf[off] = '\0';
	close(fd);
	return (long)off;
}

static void oom(size_t n)
{
	fprintf(stderr, "gaptrace: error: out of memory allocating %zu bytes\n", n);
	abort();
}

void *gt_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		oom(n);
	return p;
}

void *gt_xcalloc(size_t n, size_t sz)
{
	void *p = calloc(n ? n : 1, sz ? sz : 1);

	if (!p)
		oom(n * sz);
	return p;
}

void *gt_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q)
		oom(n);
	return q;
}

char *gt_xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p)
		oom(strlen(s) + 1);
	return p;
}

void gt_grow(void **arr, size_t *cap, size_t need, size_t sz)
{
	size_t ncap;

	if (need < *cap)
		return;
	ncap = *cap ? *cap : 16;
	while (ncap <= need)
		ncap *= 2;
	*arr = gt_xrealloc(*arr, ncap * sz);
	*cap = ncap;
}

void gt_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

uint64_t gt_hash64(const void *data, size_t len, uint64_t seed)
{
	const unsigned char *p = data;
	uint64_t h = 0xcbf29ce484222325ULL ^ seed;

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}
