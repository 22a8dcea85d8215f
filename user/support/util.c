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

int gt_opt_choice(const char *flag, const char *arg, const char *const names[])
{
	char hint[256];
	size_t n = 0, len = 0;

	for (; names[n]; n++)
		if (!strcmp(arg, names[n]))
			return (int)n;
	hint[0] = '\0';
	for (size_t i = 0; i < n && len < sizeof(hint); i++) {
		const char *sep = i == n - 1 ? " or " : ", ";

		len += (size_t)snprintf(hint + len, sizeof(hint) - len, "%s%s", i ? sep : "",
					names[i]);
	}
	gt_err("bad %s '%s': use %s", flag, arg, hint);
	return -1;
}

int gt_opt_common(int c, const char *cmd, void (*usage)(FILE *f))
{
	switch (c) {
	case 'v':
		gt_verbose++;
		return GT_OPT_NEXT;
	case 'h':
		usage(stdout);
		return GT_EXIT_OK;
	default:
		gt_err("bad option; see 'gaptrace %s --help'", cmd);
		return GT_EXIT_USAGE;
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

static void out_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void out_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static char *out_fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *out_fmt(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (!s)
		oom(strlen(fmt));
	return s;
}

/* Opens path's directory (O_PATH) and sets *base to its last component; -1 on error. */
static int out_dir(const char *path, char **base, char *err, size_t errlen)
{
	const char *slash = strrchr(path, '/');
	char *dir;
	int dfd;

	*base = gt_xstrdup(slash ? slash + 1 : path);
	if (!**base || !strcmp(*base, ".") || !strcmp(*base, "..")) {
		out_err(err, errlen, "cannot write %s: it names a directory; give a file name",
			path);
		goto fail;
	}
	if (!slash)
		dir = gt_xstrdup(".");
	else if (slash == path)
		dir = gt_xstrdup("/");
	else
		dir = strndup(path, (size_t)(slash - path));
	if (!dir)
		oom(strlen(path));
	dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		out_err(err, errlen, "cannot create %s: %s", path, strerror(errno));
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
		out_err(err, errlen, "cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	if (S_ISLNK(st.st_mode)) {
		if (!dir_private(dfd)) {
			out_err(err, errlen,
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
		out_err(err, errlen, "cannot write %s: it is a directory; give a file name", path);
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
		out_err(err, errlen, "cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) || S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) {
		close(fd);
		out_err(err, errlen,
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
	return out_fmt(".%.200s.%d.%llx.tmp", base, (int)getpid(),
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

static int create_excl(int dfd, const char *name)
{
	int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC,
			0600);
	int e;

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
		old = out_fmt("%s.old", base);
		had_old = fstatat(dfd, old, &st, AT_SYMLINK_NOFOLLOW) == 0;
		if (!renameat(dfd, base, dfd, old)) {
			gt_warn("%s existed: kept it as %s.old%s", path, path,
				had_old ? " (the older .old is replaced)" : "");
		} else if (errno != ENOENT) {
			out_err(err, errlen, "cannot rename %s to %s.old: %s", path, path,
				strerror(errno));
			goto cleanup;
		}
	}
	fd = create_excl(dfd, base);
	if (fd < 0)
		out_err(err, errlen, "cannot create %s: %s%s", path, strerror(errno),
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
