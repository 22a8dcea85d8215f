/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * util.h: logging, time and small helpers shared by every part of gaptrace.
 * Every message to the user goes through gt_err/gt_warn/gt_info/gt_dbg.
 */
#ifndef GT_UTIL_H
#define GT_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define GT_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define GT_MIN(a, b)	 ((a) < (b) ? (a) : (b))
#define GT_MAX(a, b)	 ((a) > (b) ? (a) : (b))

#define NSEC_PER_USEC 1000ULL
#define NSEC_PER_MSEC 1000000ULL
#define NSEC_PER_SEC  1000000000ULL

/* Exit codes (documented in README and --help). */
enum gt_exit {
	GT_EXIT_OK = 0,
	GT_EXIT_FAIL = 1,  /* runtime failure */
	GT_EXIT_USAGE = 2, /* bad usage */
	/* diff --fail-on-regression: a significant rise (distinct from a failure) */
	GT_EXIT_REGRESSION = 3,
};

extern int gt_verbose; /* -v count */

/* One line to stderr, prefixed "gaptrace: error: " / "warning: ". */
void gt_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void gt_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Informational line ("gaptrace: ..."), always shown. */
void gt_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Shown with -v. */
void gt_dbg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Set by the progress line so log lines first clear it. */
void gt_log_set_progress_active(bool active);

uint64_t gt_now_mono_ns(void);
uint64_t gt_now_real_ns(void);

/*
 * Parses a duration such as "1ms", "250us", "2.5s", "3m", "2" (a bare number
 * is seconds, as bcc's tools and nsys read one).
 * Returns 0 and sets *ns, or -1 on bad input.
 */
int gt_parse_duration(const char *s, uint64_t *ns);
/* Parses a size such as "64K", "8M", "4096". Returns 0 or -1. */
int gt_parse_size(const char *s, uint64_t *bytes);

/* Formats ns for people: "812 ns", "3.21 us", "4.10 ms", "12.3 s". */
const char *gt_fmt_dur(uint64_t ns, char *buf, size_t len);
/* Formats a byte count: "512 B", "3.4 KiB", "12.0 MiB". */
const char *gt_fmt_bytes(uint64_t bytes, char *buf, size_t len);
/*
 * Writes s (NULL: nothing) escaped for XML/HTML text and attribute values;
 * characters XML 1.0 forbids (controls, invalid UTF-8) become "\xNN".
 */
void gt_xml_puts(FILE *f, const char *s);

/*
 * Text from the traced process (thread and program names, command lines,
 * paths, symbols) is rendered for a terminal or a text file: C0 controls,
 * DEL, C1 controls (U+0080-U+009F, and raw 0x80-0x9f bytes) and bytes that
 * are not valid UTF-8 become "\xNN" per byte; valid UTF-8 passes unchanged.
 */
/* Length (1-4) of the valid, shortest-form UTF-8 sequence at p, 0 if invalid or at NUL. */
size_t gt_utf8_len(const char *p);
/* True when the character at p (of length len from gt_utf8_len) must be escaped. */
bool gt_char_unsafe(const char *p, size_t len);
/* Writes the sanitised form of s into dst (always NUL-terminated, cut to fit); returns its length. */
size_t gt_sanitize(char *dst, size_t dstlen, const char *s);
/* fputs of the sanitised form of s (NULL: nothing). */
void gt_fputs_clean(FILE *f, const char *s);
/*
 * The sanitised form of s for a printf argument: s itself when it is
 * already clean, else one of 8 rotating buffers (valid until 8 more calls).
 */
const char *gt_clean(const char *s);

/*
 * Parses a whole decimal unsigned integer within [min, max]: no sign, no
 * spaces, no trailing characters, no overflow. Returns 0 or -1.
 */
int gt_parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/* Reads a whole small file (procfs) into buf, NUL-terminated. Returns length or -errno. */
long gt_read_file(const char *path, char *buf, size_t len);

/* malloc/calloc/realloc that abort with a message on failure. */
void *gt_xmalloc(size_t n);
void *gt_xcalloc(size_t n, size_t sz);
void *gt_xrealloc(void *p, size_t n);
char *gt_xstrdup(const char *s);
char *gt_xstrndup(const char *s, size_t n);
/* A newly allocated formatted string (aborts when out of memory). */
char *gt_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *gt_xvasprintf(const char *fmt, va_list ap);
/* Formats a one-line message into err[errlen] (nothing when err is NULL). */
void gt_set_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Grows *arr (element size sz) so that index need fits; doubles capacity. */
void gt_grow(void **arr, size_t *cap, size_t need, size_t sz);

/* qsort that accepts an empty (NULL) array: qsort's arguments must be non-null. */
void gt_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));

/*
 * In an array of n elements of size bytes sorted by the uint64_t at offset
 * key_off of each: how many have that key <= key (the index just past the
 * last such element; 0: none).
 */
size_t gt_count_le(const void *base, size_t n, size_t size, size_t key_off, uint64_t key);

/* FNV-1a 64 hash. */
uint64_t gt_hash64(const void *data, size_t len, uint64_t seed);

#endif /* GT_UTIL_H */
