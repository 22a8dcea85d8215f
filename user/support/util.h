/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * util.h: logging, time and small helpers shared by every part of gaptrace.
 * Every message to the user goes through gt_err/gt_warn/gt_info/gt_dbg.
 */
#ifndef GT_UTIL_H
#define GT_UTIL_H

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
 * Parses a duration such as "1ms", "250us", "2.5s", "1500000" (ns), "3m".
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

/*
 * Command-line helpers every command's option loop shares.
 *
 * gt_opt_choice returns the index of arg in names (NULL-ended), or -1 after
 * "bad FLAG 'ARG': use A, B or C".
 */
int gt_opt_choice(const char *flag, const char *arg, const char *const names[]);

/* What gt_opt_common returns when the option loop goes on. */
#define GT_OPT_NEXT (-1)
/*
 * The end of every command's option switch, for what getopt_long returned
 * (c): -v counts (GT_OPT_NEXT), -h prints usage on stdout (GT_EXIT_OK), any
 * other c is an option cmd does not take ("bad option; see 'gaptrace CMD
 * --help'", GT_EXIT_USAGE).
 */
int gt_opt_common(int c, const char *cmd, void (*usage)(FILE *f));

/*
 * Output files: gaptrace runs as root, so a user-named output path is
 * opened relative to its directory, never through a symbolic link at the
 * last component (unless only root or we can write that directory), always
 * created new (O_EXCL) and mode 0600 (command lines and symbols are private).
 *
 * gt_out__create_keep_old creates path for writing as it is written (a
 * capture): an existing regular file is first renamed to path.old, with a
 * warning. A device or FIFO (/dev/null, /dev/stdout) is opened as it is.
 * Returns an fd, or -1 with a one-line message in err.
 */
int gt_out__create_keep_old(const char *path, char *err, size_t errlen);

/*
 * gt_out__open writes to a temporary file in path's directory, made the
 * same safe way, that gt_out__close renames over path (a reader never sees
 * half a file). "-" or NULL is stdout. A device or FIFO is written directly.
 * The temporary file is unnamed (O_TMPFILE) until the close links it, so a
 * killed gaptrace leaves nothing behind; where the file system lacks
 * O_TMPFILE it is a hidden name from the start.
 */
struct gt_out {
	FILE *f;
	int dfd;    /* path's directory (O_PATH), -1 when writing directly */
	char *base; /* last component of path */
	char *tmp;  /* temporary name in dfd (once linked, for O_TMPFILE) */
	bool anon;  /* O_TMPFILE: no name until gt_out__close */
	const char *path;
};
/* Returns 0 and sets o->f, or -1 after printing a one-line error. */
int gt_out__open(struct gt_out *o, const char *path);
/* Flushes, checks, renames into place; returns 0 or -1 after printing an error. */
int gt_out__close(struct gt_out *o);
/* Closes and removes the temporary file (after a failure); safe to call twice. */
void gt_out__abort(struct gt_out *o);

/* Reads a whole small file (procfs) into buf, NUL-terminated. Returns length or -errno. */
long gt_read_file(const char *path, char *buf, size_t len);

/* malloc/calloc/realloc that abort with a message on failure. */
void *gt_xmalloc(size_t n);
void *gt_xcalloc(size_t n, size_t sz);
void *gt_xrealloc(void *p, size_t n);
char *gt_xstrdup(const char *s);

/* Grows *arr (element size sz) so that index need fits; doubles capacity. */
void gt_grow(void **arr, size_t *cap, size_t need, size_t sz);

/* qsort that accepts an empty (NULL) array: qsort's arguments must be non-null. */
void gt_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));

/* FNV-1a 64 hash. */
uint64_t gt_hash64(const void *data, size_t len, uint64_t seed);

#endif /* GT_UTIL_H */
