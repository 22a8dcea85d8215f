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
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "support/util.h"

int gt_verbose;
static bool progress_active;

void gt_log_set_progress_active(bool active)
{
	progress_active = active;
}

static void vlog(const char *prefix, const char *fmt, va_list ap)
{
	char msg[4096];

	/* Messages quote target names and paths: the whole line is sanitised. */
	vsnprintf(msg, sizeof(msg), fmt, ap);
	/* Erase the progress line so the message is not glued to it. */
	if (progress_active)
		fputs("\r\033[K", stderr);
	fputs(prefix, stderr);
	gt_fputs_clean(stderr, msg);
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

	if (parse_scaled(s, units, scale, GT_ARRAY_SIZE(units), 3, &v) || v > 1e19)
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

size_t gt_utf8_len(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len;

	if (!*p)
		return 0;
	if (*p < 0x80)
		return 1;
	if (*p >= 0xc2 && *p <= 0xdf)
		len = 2;
	else if (*p >= 0xe0 && *p <= 0xef)
		len = 3;
	else if (*p >= 0xf0 && *p <= 0xf4)
		len = 4;
	else
		return 0;
	/* A NUL is not a continuation byte, so this never reads past the string. */
	for (size_t k = 1; k < len; k++)
		if ((p[k] & 0xc0) != 0x80)
			return 0;
	/* Overlong, surrogate and beyond-U+10FFFF forms are not UTF-8. */
	if (len == 3 && ((*p == 0xe0 && p[1] < 0xa0) || (*p == 0xed && p[1] >= 0xa0)))
		return 0;
	if (len == 4 && ((*p == 0xf0 && p[1] < 0x90) || (*p == 0xf4 && p[1] >= 0x90)))
		return 0;
	return len;
}

bool gt_char_unsafe(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;

	if (len == 1)
		return *p < 0x20 || *p == 0x7f;
	/* U+0080-U+009F: C1 controls (U+009B is CSI). */
	return len == 0 || (len == 2 && *p == 0xc2 && p[1] < 0xa0);
}

/*
 * Renders the character at *sp into out (at most 16 bytes, not terminated)
 * and advances *sp; returns the rendered length.
 */
static size_t clean_step(const char **sp, char out[16])
{
	const char *p = *sp;
	size_t len = gt_utf8_len(p), n = 0;

	if (!gt_char_unsafe(p, len)) {
		memcpy(out, p, len);
		*sp = p + len;
		return len;
	}
	if (!len)
		len = 1;
	for (size_t i = 0; i < len; i++, n += 4)
		snprintf(out + n, 5, "\\x%02x", (unsigned char)p[i]);
	*sp = p + len;
	return n;
}

static bool is_clean(const char *s)
{
	while (*s) {
		size_t len = gt_utf8_len(s);

		if (gt_char_unsafe(s, len))
			return false;
		s += len;
	}
	return true;
}

size_t gt_sanitize(char *dst, size_t dstlen, const char *s)
{
	size_t o = 0;
	char piece[16];

	if (!dstlen)
		return 0;
	while (s && *s) {
		size_t n = clean_step(&s, piece);

		if (o + n >= dstlen)
			break;
		memcpy(dst + o, piece, n);
		o += n;
	}
	dst[o] = '\0';
	return o;
}

void gt_fputs_clean(FILE *f, const char *s)
{
	char piece[16];

	while (s && *s) {
		size_t n = clean_step(&s, piece);

		fwrite(piece, 1, n, f);
	}
}

const char *gt_clean(const char *s)
{
	static __thread char *bufs[8];
	static __thread size_t caps[8];
	static __thread unsigned next;
	unsigned i;
	size_t need;

	if (!s)
		return "";
	if (is_clean(s))
		return s;
	/* Every byte renders as at most 4. */
	need = strlen(s) * 4 + 1;
	i = next++ % GT_ARRAY_SIZE(bufs);
	if (caps[i] < need) {
		bufs[i] = gt_xrealloc(bufs[i], need);
		caps[i] = need;
	}
	gt_sanitize(bufs[i], need, s);
	return bufs[i];
}

void gt_xml_puts(FILE *f, const char *s)
{
	while (s && *s) {
		size_t len = gt_utf8_len(s);
		char piece[16];

		/* XML 1.0 allows no control characters but tab and newlines; none are kept. */
		if (gt_char_unsafe(s, len)) {
			fwrite(piece, 1, clean_step(&s, piece), f);
			continue;
		}
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
			fwrite(s, 1, len, f);
		}
		s += len;
	}
}

int gt_parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	/* strtoull would accept spaces, a sign and "-1" as 2^64-1. */
	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
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

char *gt_xstrndup(const char *s, size_t n)
{
	char *p = strndup(s, n);

	if (!p)
		oom(n + 1);
	return p;
}

char *gt_xvasprintf(const char *fmt, va_list ap)
{
	va_list aq;
	char *s;
	int n;

	va_copy(aq, ap);
	n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	if (n < 0)
		n = 0;
	s = gt_xmalloc((size_t)n + 1);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	return s;
}

char *gt_xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = gt_xvasprintf(fmt, ap);
	va_end(ap);
	return s;
}

void gt_set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
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

size_t gt_count_le(const void *base, size_t n, size_t size, size_t key_off, uint64_t key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t k;

		memcpy(&k, (const char *)base + mid * size + key_off, sizeof(k));
		if (k <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
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
