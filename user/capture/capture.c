// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * capture.c: writer and defensive reader of the gaptrace capture file (layout
 * in capture.h).  The reader trusts no length in the file: it may be fuzzed.
 *
 * Block numbers in messages count from the HEADER (block 0) in file order, and
 * "kept N blocks" counts the whole blocks read before the damage, HEADER
 * included, so in an undamaged prefix N is the number of the cut block.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include <zlib.h>

#include "capture/capture.h"
#include "gaptrace.h"
#include "support/util.h"

/* What GT_CAP_BOM reads as when the writer had the other byte order. */
#define GT_CAP_BOM_SWAPPED 0x4D3C2B1AU
/* HEADER body before its strings: u32 BOM, u16 major, u16 minor. */
#define HDR_FIXED 8
/* Smallest block: head and tail around an empty body. */
#define BLOCK_MIN (GT_CAP_BLOCK_HEAD + GT_CAP_BLOCK_TAIL)
/* Longest text of a string field, so it always fits a GT_CAP_MAX_STRING buffer with its NUL. */
#define STR_MAX (GT_CAP_MAX_STRING - 1)
/* A file damaged block after block must not grow memory without bound. */
#define MAX_WARNINGS 100

/* Messages for a bad HEADER, each reached by several checks. */
#define HDR_TRUNCATED "%s: capture header is truncated: the file cannot be read"
#define HDR_LENGTHS   "%s: capture header is damaged (inconsistent lengths): the file cannot be read"

/* Fixed bytes at the start of each entry kind (capture.h). */
#define SYM_FIXED   20
#define MAP_FIXED   56
#define PROBE_FIXED 16
#define STACK_FIXED 16

static uint64_t round8(uint64_t n)
{
	return (n + 7) & ~7ULL;
}

/* The file's integers are read and written through memcpy: nothing in it is aligned for us. */
static uint16_t get_u16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint32_t get_u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t get_u64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static void put_u16(uint8_t *p, uint16_t v)
{
	memcpy(p, &v, sizeof(v));
}

static void put_u32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
}

static void put_u64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, sizeof(v));
}

static uint32_t crc_update(uint32_t crc, const void *p, size_t len)
{
	/* zlib treats a NULL buffer as "return the initial value", losing crc. */
	if (!len)
		return crc;
	return (uint32_t)crc32(crc, p, (uInt)len);
}

static void set_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static char *xvasprintf(const char *fmt, va_list ap)
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

static char *fmt_alloc(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static char *fmt_alloc(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = xvasprintf(fmt, ap);
	va_end(ap);
	return s;
}

/* ---- body buffers ---- */

static uint8_t *buf_grow(struct capture_buf *b, size_t n)
{
	uint8_t *p;

	gt_grow((void **)&b->data, &b->cap, b->len + n, 1);
	p = b->data + b->len;
	b->len += n;
	return p;
}

static void buf_put(struct capture_buf *b, const void *src, size_t n)
{
	if (n)
		memcpy(buf_grow(b, n), src, n);
}

/* Entries of the length-prefixed kinds are padded to 8 bytes, counted from their start. */
static void buf_pad8(struct capture_buf *b, size_t start)
{
	size_t pad = (size_t)(round8(b->len - start) - (b->len - start));

	if (pad)
		memset(buf_grow(b, pad), 0, pad);
}

static uint16_t str_len(const char *s)
{
	return s ? (uint16_t)strnlen(s, STR_MAX) : 0;
}

void capture_buf__reset(struct capture_buf *b)
{
	b->len = 0;
}

void capture_buf__free(struct capture_buf *b)
{
	if (!b)
		return;
	free(b->data);
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
}

void capture_buf__kv(struct capture_buf *b, const char *key, const char *fmt, ...)
{
	size_t klen = strnlen(key, STR_MAX - 1);
	va_list ap;
	char *val;
	size_t vlen;

	va_start(ap, fmt);
	val = xvasprintf(fmt, ap);
	va_end(ap);
	/* A %c of NUL would end the string early on the reader's side anyway. */
	vlen = GT_MIN(strlen(val), STR_MAX - 1 - klen);
	buf_put(b, key, klen);
	buf_put(b, "=", 1);
	buf_put(b, val, vlen);
	buf_put(b, "", 1);
	free(val);
}

void capture_buf__stack_flags(struct capture_buf *b, int32_t stack_id, uint32_t pid, uint16_t flags,
			      const uint64_t *ips, uint16_t nr)
{
	uint8_t *p = buf_grow(b, STACK_FIXED);

	memcpy(p, &stack_id, 4);
	put_u32(p + 4, pid);
	put_u16(p + 8, nr);
	put_u16(p + 10, flags);
	put_u32(p + 12, 0);
	buf_put(b, ips, (size_t)nr * sizeof(*ips));
}

void capture_buf__stack(struct capture_buf *b, int32_t stack_id, uint32_t pid, bool kernel,
			const uint64_t *ips, uint16_t nr)
{
	capture_buf__stack_flags(b, stack_id, pid, kernel ? GT_STACK_KERNEL : 0, ips, nr);
}

void capture_buf__symbol(struct capture_buf *b, uint64_t ip, uint32_t pid, uint32_t sym_off,
			 const char *name, const char *module)
{
	uint16_t nlen = str_len(name), mlen = str_len(module);
	size_t start = b->len;
	uint8_t *p = buf_grow(b, SYM_FIXED);

	put_u64(p, ip);
	put_u32(p + 8, pid);
	put_u32(p + 12, sym_off);
	put_u16(p + 16, nlen);
	put_u16(p + 18, mlen);
	buf_put(b, name, nlen);
	buf_put(b, module, mlen);
	buf_pad8(b, start);
}

void capture_buf__mapping(struct capture_buf *b, uint32_t pid, uint64_t start, uint64_t end,
			  uint64_t pgoff, const uint8_t *build_id, uint8_t build_id_len,
			  const char *path)
{
	uint16_t plen = str_len(path);
	size_t entry = b->len;
	uint8_t *p;

	if (!build_id)
		build_id_len = 0;
	build_id_len = GT_MIN(build_id_len, 20);
	p = buf_grow(b, MAP_FIXED);
	memset(p, 0, MAP_FIXED);
	put_u64(p, start);
	put_u64(p + 8, end);
	put_u64(p + 16, pgoff);
	put_u32(p + 24, pid);
	put_u16(p + 28, plen);
	p[30] = build_id_len;
	if (build_id_len)
		memcpy(p + 32, build_id, build_id_len);
	buf_put(b, path, plen);
	buf_pad8(b, entry);
}

void capture_buf__probe(struct capture_buf *b, uint32_t func_id, const char *name,
			const char *module, const char *category)
{
	uint16_t nlen = str_len(name), mlen = str_len(module), clen = str_len(category);
	size_t start = b->len;
	uint8_t *p = buf_grow(b, PROBE_FIXED);

	memset(p, 0, PROBE_FIXED);
	put_u32(p, func_id);
	put_u16(p + 4, nlen);
	put_u16(p + 6, mlen);
	put_u16(p + 8, clen);
	buf_put(b, name, nlen);
	buf_put(b, module, mlen);
	buf_put(b, category, clen);
	buf_pad8(b, start);
}

/* ---- writer ---- */

struct capture_writer {
	int fd;
	bool own_fd;
	int err; /* first write error (-errno): the file has a torn block, so stop there */
	uint64_t bytes;
	uint64_t events;
	struct capture_buf ev; /* pending EVENTS body */
};

/* Writes every byte of iov, through short writes and signals. */
static int write_full(int fd, struct iovec *iov, int cnt)
{
	ssize_t n;

	for (;;) {
		while (cnt && !iov->iov_len) {
			iov++;
			cnt--;
		}
		if (!cnt)
			return 0;
		n = writev(fd, iov, cnt);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		/* No progress on a non-empty write: give up rather than spin. */
		if (n == 0)
			return -EIO;
		while (cnt && (size_t)n >= iov->iov_len) {
			n -= (ssize_t)iov->iov_len;
			iov++;
			cnt--;
		}
		if (cnt) {
			iov->iov_base = (uint8_t *)iov->iov_base + n;
			iov->iov_len -= (size_t)n;
		}
	}
}

static int write_block(struct capture_writer *w, uint32_t type, const void *body, size_t len)
{
	uint8_t head[GT_CAP_BLOCK_HEAD], tail[7 + GT_CAP_BLOCK_TAIL] = {};
	size_t pad, total;
	struct iovec iov[3];
	uint32_t crc;
	int err;

	if (w->err)
		return w->err;
	if (len > GT_CAP_MAX_BLOCK - BLOCK_MIN)
		return -EFBIG;
	pad = (size_t)(round8(len) - len);
	total = BLOCK_MIN + len + pad;
	put_u32(head, type);
	put_u32(head + 4, (uint32_t)total);
	put_u32(head + 8, (uint32_t)len);
	put_u32(head + 12, 0);
	crc = crc_update(0, head, sizeof(head));
	crc = crc_update(crc, body, len);
	crc = crc_update(crc, tail, pad);
	put_u32(tail + pad, crc);
	put_u32(tail + pad + 4, (uint32_t)total);

	iov[0] = (struct iovec){.iov_base = head, .iov_len = sizeof(head)};
	iov[1] = (struct iovec){.iov_base = (void *)body, .iov_len = len};
	iov[2] = (struct iovec){.iov_base = tail, .iov_len = pad + GT_CAP_BLOCK_TAIL};
	err = write_full(w->fd, iov, 3);
	if (err) {
		w->err = err;
		return err;
	}
	w->bytes += total;
	return 0;
}

static struct capture_writer *writer_start(int fd, bool own_fd, const char *name,
					   const char *const *kv, size_t n, char *err,
					   size_t errlen)
{
	struct capture_writer *w = gt_xcalloc(1, sizeof(*w));
	struct capture_buf hdr = {};
	uint8_t *p;
	int ret;

	w->fd = fd;
	w->own_fd = own_fd;

	p = buf_grow(&hdr, HDR_FIXED);
	put_u32(p, GT_CAP_BOM);
	put_u16(p + 4, GT_CAP_MAJOR);
	put_u16(p + 6, GT_CAP_MINOR);
	for (size_t i = 0; i < n; i++) {
		const char *eq = kv[i] ? strchr(kv[i], '=') : NULL;
		size_t len;

		if (!eq || eq == kv[i] || eq - kv[i] >= STR_MAX) {
			set_err(err, errlen, "%s: header entry %zu is not key=value", name, i);
			goto cleanup;
		}
		/* Long values (a command line) are cut so every reader can hold them. */
		len = strnlen(kv[i], STR_MAX);
		buf_put(&hdr, kv[i], len);
		buf_put(&hdr, "", 1);
		if (hdr.len > GT_CAP_MAX_HEADER - BLOCK_MIN) {
			set_err(err, errlen, "%s: header is over the %u-byte limit", name,
				GT_CAP_MAX_HEADER);
			goto cleanup;
		}
	}
	ret = write_block(w, GT_BLK_HEADER, hdr.data, hdr.len);
	if (ret) {
		set_err(err, errlen, "cannot write %s: %s", name, strerror(-ret));
		goto cleanup;
	}
	capture_buf__free(&hdr);
	return w;

cleanup:
	capture_buf__free(&hdr);
	free(w);
	return NULL;
}

struct capture_writer *capture_writer__open(const char *path, const char *const *kv, size_t n,
					    char *err, size_t errlen)
{
	struct capture_writer *w = NULL;
	int fd;

	/* Root writes here: no link is followed, the previous capture is kept as .old. */
	fd = gt_out__create_keep_old(path, err, errlen);
	if (fd < 0)
		return NULL;
	w = writer_start(fd, true, path, kv, n, err, errlen);
	if (!w)
		close(fd);
	return w;
}

struct capture_writer *capture_writer__open_fd(int fd, const char *const *kv, size_t n, char *err,
					       size_t errlen)
{
	char name[32];

	snprintf(name, sizeof(name), "fd %d", fd);
	return writer_start(fd, false, name, kv, n, err, errlen);
}

int capture_writer__event(struct capture_writer *w, const void *rec, size_t size)
{
	struct gt_hdr hdr;

	if (w->err)
		return w->err;
	if (size < sizeof(hdr) || size > GT_CAP_MAX_RECORD)
		return -EINVAL;
	memcpy(&hdr, rec, sizeof(hdr));
	if (hdr.size != size)
		return -EINVAL;
	buf_put(&w->ev, rec, size);
	w->events++;
	if (w->ev.len >= GT_CAP_EVENTS_FLUSH)
		return capture_writer__flush(w);
	return 0;
}

int capture_writer__flush(struct capture_writer *w)
{
	int err;

	if (w->err)
		return w->err;
	if (!w->ev.len)
		return 0;
	err = write_block(w, GT_BLK_EVENTS, w->ev.data, w->ev.len);
	capture_buf__reset(&w->ev);
	return err;
}

int capture_writer__block(struct capture_writer *w, uint32_t type, const void *body, size_t len)
{
	int err;

	/* Only the writer's own first block may be a HEADER: a second one would start a new file. */
	if (type == GT_BLK_HEADER)
		return -EINVAL;
	err = capture_writer__flush(w);
	if (err)
		return err;
	return write_block(w, type, body, len);
}

uint64_t capture_writer__bytes(const struct capture_writer *w)
{
	return w->bytes;
}

uint64_t capture_writer__events(const struct capture_writer *w)
{
	return w->events;
}

int capture_writer__close(struct capture_writer *w)
{
	int err;

	if (!w)
		return 0;
	err = capture_writer__flush(w);
	if (w->own_fd && close(w->fd) && !err)
		err = -errno;
	capture_buf__free(&w->ev);
	free(w);
	return err;
}

/* ---- reader ---- */

struct capture {
	char *path;
	int fd;		    /* -1: reading memory */
	const uint8_t *mem; /* memory reader's buffer */
	uint64_t size;	    /* whole file, from fstat */
	uint8_t *buf;	    /* current block (file, or memory that is not 8-aligned) */
	size_t buf_cap;

	unsigned major, minor;
	char **kv; /* HEADER entries, each "key\0value\0" */
	size_t nkv;
	size_t kv_cap;

	uint64_t first; /* offset of the block after HEADER */
	uint64_t pos;	/* offset of the next block */
	uint32_t index; /* number of the next block */
	uint32_t kept;	/* whole blocks of this pass, HEADER included */
	bool stopped;	/* this pass met damage it cannot pass */
	bool truncated; /* any pass did */
	uint64_t cur;	/* offset of the block last returned */
	/*
	 * Blocks before crc_hw had their CRC checked by an earlier pass: a
	 * later pass (analysis reads a capture two or three times) trusts that
	 * check; the ones that failed are listed in bad, by offset.
	 */
	uint64_t crc_hw;
	uint64_t *bad;
	size_t nbad, bad_cap;
	/* A second pass after rewind must not report or count the same problem twice. */
	uint64_t problem_hw;
	uint64_t unknown_hw;
	unsigned crc_errors;
	unsigned unknown;

	char **warn;
	size_t nwarn;
	size_t warn_cap;
};

static void add_warning(struct capture *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void add_warning(struct capture *c, const char *fmt, ...)
{
	va_list ap;
	char *s;

	if (c->nwarn > MAX_WARNINGS)
		return;
	if (c->nwarn == MAX_WARNINGS) {
		s = fmt_alloc("%s: more than %d warnings: not listing the rest", c->path,
			      MAX_WARNINGS);
	} else {
		va_start(ap, fmt);
		s = xvasprintf(fmt, ap);
		va_end(ap);
	}
	gt_grow((void **)&c->warn, &c->warn_cap, c->nwarn, sizeof(*c->warn));
	c->warn[c->nwarn++] = s;
}

static bool new_problem(struct capture *c, uint64_t off)
{
	if (off < c->problem_hw)
		return false;
	c->problem_hw = off + 1;
	return true;
}

/* Bytes of [off, off + len) that exist, copied to dst; or -errno. */
static long read_at(struct capture *c, uint64_t off, void *dst, size_t len)
{
	size_t got = 0;

	if (off >= c->size)
		return 0;
	len = (size_t)GT_MIN((uint64_t)len, c->size - off);
	if (c->fd < 0) {
		memcpy(dst, c->mem + off, len);
		return (long)len;
	}
	while (got < len) {
		ssize_t n = pread(c->fd, (uint8_t *)dst + got, len - got, (off_t)(off + got));

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		/* The file shrank since fstat: the caller sees a short block. */
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (long)got;
}

/*
 * Points *p at the total bytes of the block at off (the caller checked they
 * lie inside size).  Memory is used in place when 8-aligned, because
 * capture_stack.ips is handed out as a uint64_t array.
 */
static long load_block(struct capture *c, uint64_t off, uint32_t total, const uint8_t **p)
{
	if (c->fd < 0 && !((uintptr_t)(c->mem + off) & 7)) {
		*p = c->mem + off;
		return (long)total;
	}
	if (c->buf_cap < total) {
		free(c->buf);
		c->buf = gt_xmalloc(total);
		c->buf_cap = total;
	}
	*p = c->buf;
	return read_at(c, off, c->buf, total);
}

static bool lengths_fit(uint32_t total, uint32_t body_len)
{
	return total >= BLOCK_MIN && !(total & 7) && body_len <= total - BLOCK_MIN;
}

static int header_entry(const char *key, const char *value, void *ctx)
{
	struct capture *c = ctx;
	size_t klen = strlen(key), vlen = strlen(value);
	char *s = gt_xmalloc(klen + vlen + 2);

	/* One allocation holds "key\0value\0". */
	memcpy(s, key, klen + 1);
	memcpy(s + klen + 1, value, vlen + 1);
	gt_grow((void **)&c->kv, &c->kv_cap, c->nkv, sizeof(*c->kv));
	c->kv[c->nkv++] = s;
	return 0;
}

static struct capture *reader_start(struct capture *c, char *err, size_t errlen)
{
	uint8_t head[GT_CAP_BLOCK_HEAD + HDR_FIXED] = {};
	uint32_t magic, bom, total, body_len;
	const uint8_t *p;
	long got;

	got = read_at(c, 0, head, sizeof(head));
	if (got < 0) {
		set_err(err, errlen, "cannot read %s: %s", c->path, strerror((int)-got));
		goto cleanup;
	}
	if (got == 0) {
		set_err(err, errlen,
			"%s is not a gaptrace capture (file is empty): pass a file written by "
			"'gaptrace record'",
			c->path);
		goto cleanup;
	}
	/* head is zeroed, so a file of 1-3 bytes shows its bytes padded with zeros. */
	magic = get_u32(head);
	if (got < 4 || magic != GT_BLK_HEADER) {
		set_err(err, errlen,
			"%s is not a gaptrace capture (bad magic 0x%08x): pass a file written by "
			"'gaptrace record'",
			c->path, magic);
		goto cleanup;
	}
	if (got < GT_CAP_BLOCK_HEAD + 4) {
		set_err(err, errlen, HDR_TRUNCATED, c->path);
		goto cleanup;
	}
	/* The type reads the same in both orders; the BOM is what tells them apart. */
	bom = get_u32(head + GT_CAP_BLOCK_HEAD);
	if (bom == GT_CAP_BOM_SWAPPED) {
		set_err(err, errlen,
			"%s was written on a host of the other byte order: read it on a %s host",
			c->path,
			__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? "big-endian" : "little-endian");
		goto cleanup;
	}
	if (bom != GT_CAP_BOM) {
		set_err(err, errlen,
			"%s is not a gaptrace capture (bad magic 0x%08x): pass a file written by "
			"'gaptrace record'",
			c->path, bom);
		goto cleanup;
	}
	if (got < (long)sizeof(head)) {
		set_err(err, errlen, HDR_TRUNCATED, c->path);
		goto cleanup;
	}
	/* Before any length check: another major may lay out its blocks differently. */
	c->major = get_u16(head + GT_CAP_BLOCK_HEAD + 4);
	c->minor = get_u16(head + GT_CAP_BLOCK_HEAD + 6);
	if (c->major != GT_CAP_MAJOR) {
		set_err(err, errlen,
			"%s has capture version %u.%u; this gaptrace reads version %u.x: upgrade "
			"gaptrace",
			c->path, c->major, c->minor, GT_CAP_MAJOR);
		goto cleanup;
	}
	total = get_u32(head + 4);
	body_len = get_u32(head + 8);
	if (total > GT_CAP_MAX_HEADER) {
		set_err(err, errlen,
			"%s: capture header is damaged (claims %u bytes, over the %u limit): the "
			"file cannot be read",
			c->path, total, GT_CAP_MAX_HEADER);
		goto cleanup;
	}
	if (!lengths_fit(total, body_len) || body_len < HDR_FIXED) {
		set_err(err, errlen, HDR_LENGTHS, c->path);
		goto cleanup;
	}
	if (c->size < total) {
		set_err(err, errlen, HDR_TRUNCATED, c->path);
		goto cleanup;
	}
	got = load_block(c, 0, total, &p);
	if (got < 0) {
		set_err(err, errlen, "cannot read %s: %s", c->path, strerror((int)-got));
		goto cleanup;
	}
	if (got < (long)total) {
		set_err(err, errlen, HDR_TRUNCATED, c->path);
		goto cleanup;
	}
	if (get_u32(p + total - 4) != total) {
		set_err(err, errlen, HDR_LENGTHS, c->path);
		goto cleanup;
	}
	if (crc_update(0, p, total - GT_CAP_BLOCK_TAIL) != get_u32(p + total - 8)) {
		set_err(err, errlen,
			"%s: capture header is damaged (CRC mismatch): the file cannot be read",
			c->path);
		goto cleanup;
	}
	/* The CRC held, so a bad entry is the writer's bug: keep what came before it. */
	if (capture__kv(p + GT_CAP_BLOCK_HEAD + HDR_FIXED, body_len - HDR_FIXED, header_entry, c))
		add_warning(c,
			    "%s: capture header holds a malformed key=value entry: ignored it and "
			    "the entries after it",
			    c->path);
	c->first = total;
	capture__rewind(c);
	return c;

cleanup:
	capture__close(c);
	return NULL;
}

static struct capture *capture_new(const char *name)
{
	struct capture *c = gt_xcalloc(1, sizeof(*c));

	c->path = gt_xstrdup(name);
	c->fd = -1;
	return c;
}

struct capture *capture__open(const char *path, char *err, size_t errlen)
{
	struct capture *c;
	struct stat st;
	int fd;

	/* O_NONBLOCK: a FIFO given by mistake must not hang the open; it is refused below. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		set_err(err, errlen, "cannot open %s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st)) {
		set_err(err, errlen, "cannot open %s: %s", path, strerror(errno));
		close(fd);
		return NULL;
	}
	/* Blocks are read by offset (pread) and a second pass rewinds: a plain file is needed. */
	if (!S_ISREG(st.st_mode)) {
		set_err(err, errlen, "cannot open %s: %s", path,
			S_ISDIR(st.st_mode) ? strerror(EISDIR) : "not a regular file");
		close(fd);
		return NULL;
	}
	c = capture_new(path);
	c->fd = fd;
	c->size = (uint64_t)st.st_size;
	return reader_start(c, err, errlen);
}

struct capture *capture__open_mem(const void *buf, size_t len, const char *name, char *err,
				  size_t errlen)
{
	struct capture *c = capture_new(name ? name : "<memory>");

	c->mem = buf;
	c->size = len;
	return reader_start(c, err, errlen);
}

/* Stops this pass at damage it cannot pass; reported once however many passes meet it. */
static void stop_truncated(struct capture *c, uint64_t off, uint64_t end)
{
	c->stopped = true;
	c->truncated = true;
	if (new_problem(c, off))
		add_warning(c,
			    "%s: capture truncated at byte %llu: kept %u whole blocks; the "
			    "recording was cut short, the data up to there is usable",
			    c->path, (unsigned long long)end, c->kept);
}

static void stop_inconsistent(struct capture *c, uint64_t off, uint32_t head, uint32_t tail)
{
	c->stopped = true;
	c->truncated = true;
	if (new_problem(c, off))
		add_warning(c,
			    "%s: block %u at byte %llu has inconsistent lengths (head %u, tail "
			    "%u): stopped reading there, kept %u blocks; the file is damaged",
			    c->path, c->index, (unsigned long long)off, head, tail, c->kept);
}

static void stop_read_error(struct capture *c, uint64_t off, long err)
{
	c->stopped = true;
	c->truncated = true;
	if (new_problem(c, off))
		add_warning(c,
			    "%s: cannot read block %u at byte %llu: %s: stopped reading there, "
			    "kept %u blocks",
			    c->path, c->index, (unsigned long long)off, strerror((int)-err),
			    c->kept);
}

static bool known_bad(const struct capture *c, uint64_t off)
{
	size_t lo = 0, hi = c->nbad;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (c->bad[mid] < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < c->nbad && c->bad[lo] == off;
}

/* Checks a block's CRC once: passes after the first reuse the verdict. */
static bool crc_ok(struct capture *c, uint64_t off, const uint8_t *p, uint32_t total)
{
	bool ok;

	if (off + total <= c->crc_hw)
		return !known_bad(c, off);
	ok = crc_update(0, p, total - GT_CAP_BLOCK_TAIL) == get_u32(p + total - 8);
	/* Only a forward pass extends what is known, so bad stays sorted. */
	if (off >= c->crc_hw) {
		if (!ok) {
			gt_grow((void **)&c->bad, &c->bad_cap, c->nbad, sizeof(*c->bad));
			c->bad[c->nbad++] = off;
		}
		c->crc_hw = off + total;
	}
	return ok;
}

int capture__next(struct capture *c, struct capture_block *blk)
{
	uint8_t head[GT_CAP_BLOCK_HEAD], tail[4] = {};
	uint32_t type, total, body_len;
	const uint8_t *p;
	uint64_t off;
	long got;

	while (!c->stopped) {
		off = c->pos;
		if (off >= c->size)
			return 0;
		got = read_at(c, off, head, sizeof(head));
		if (got < 0) {
			stop_read_error(c, off, got);
			return 0;
		}
		if (got < (long)sizeof(head)) {
			stop_truncated(c, off, off + (uint64_t)got);
			return 0;
		}
		type = get_u32(head);
		total = get_u32(head + 4);
		body_len = get_u32(head + 8);
		if (total > GT_CAP_MAX_BLOCK) {
			c->stopped = true;
			c->truncated = true;
			if (new_problem(c, off))
				add_warning(
				    c,
				    "%s: block %u at byte %llu claims %u bytes, over the %u limit: "
				    "stopped reading there, kept %u blocks; the file is damaged",
				    c->path, c->index, (unsigned long long)off, total,
				    GT_CAP_MAX_BLOCK, c->kept);
			return 0;
		}
		if (!lengths_fit(total, body_len)) {
			/* Show the tail where the head says it is, when that lies in the file. */
			if (total >= BLOCK_MIN && c->size - off >= total &&
			    read_at(c, off + total - 4, tail, 4) != 4)
				memset(tail, 0, sizeof(tail));
			stop_inconsistent(c, off, total, get_u32(tail));
			return 0;
		}
		if (c->size - off < total) {
			stop_truncated(c, off, c->size);
			return 0;
		}
		got = load_block(c, off, total, &p);
		if (got < 0) {
			stop_read_error(c, off, got);
			return 0;
		}
		if (got < (long)total) {
			stop_truncated(c, off, off + (uint64_t)got);
			return 0;
		}
		if (get_u32(p + total - 4) != total) {
			stop_inconsistent(c, off, total, get_u32(p + total - 4));
			return 0;
		}
		c->pos = off + total;
		c->index++;
		if (!crc_ok(c, off, p, total)) {
			if (new_problem(c, off)) {
				c->crc_errors++;
				add_warning(c,
					    "%s: block %u at byte %llu fails its CRC check: "
					    "skipped it; the file is damaged",
					    c->path, c->index - 1, (unsigned long long)off);
			}
			continue;
		}
		c->kept++;
		c->cur = off;
		blk->type = type;
		blk->len = body_len;
		blk->body = p + GT_CAP_BLOCK_HEAD;
		blk->offset = off;
		blk->index = c->index - 1;
		return 1;
	}
	return 0;
}

int capture__rewind(struct capture *c)
{
	c->pos = c->first;
	c->index = 1;
	c->kept = 1;
	c->stopped = false;
	return 0;
}

const char *capture__header(const struct capture *c, const char *key)
{
	/* The last of repeated keys wins, as for COUNTERS. */
	for (size_t i = c->nkv; i-- > 0;) {
		if (!strcmp(c->kv[i], key))
			return c->kv[i] + strlen(c->kv[i]) + 1;
	}
	return NULL;
}

void capture__version(const struct capture *c, unsigned *major, unsigned *minor)
{
	if (major)
		*major = c->major;
	if (minor)
		*minor = c->minor;
}

size_t capture__nwarnings(const struct capture *c)
{
	return c->nwarn;
}

const char *capture__warning(const struct capture *c, size_t i)
{
	return i < c->nwarn ? c->warn[i] : NULL;
}

bool capture__truncated(const struct capture *c)
{
	return c->truncated;
}

unsigned capture__crc_errors(const struct capture *c)
{
	return c->crc_errors;
}

void capture__note_unknown(struct capture *c, uint32_t type)
{
	/* Counted once per block, whichever pass the caller notes it in. */
	if (c->cur < c->unknown_hw)
		return;
	c->unknown_hw = c->cur + 1;
	c->unknown++;
}

unsigned capture__unknown_blocks(const struct capture *c)
{
	return c->unknown;
}

uint64_t capture__size(const struct capture *c)
{
	return c->size;
}

const char *capture__path(const struct capture *c)
{
	return c->path;
}

void capture__close(struct capture *c)
{
	if (!c)
		return;
	if (c->fd >= 0)
		close(c->fd);
	for (size_t i = 0; i < c->nkv; i++)
		free(c->kv[i]);
	for (size_t i = 0; i < c->nwarn; i++)
		free(c->warn[i]);
	free(c->kv);
	free(c->warn);
	free(c->buf);
	free(c->bad);
	free(c->path);
	free(c);
}

/* ---- body parsers ---- */

int capture__events(const void *body, size_t len,
		    int (*cb)(const void *rec, size_t size, void *ctx), void *ctx)
{
	const uint8_t *p = body;
	size_t off = 0;
	uint16_t size;
	int ret;

	while (off < len) {
		if (len - off < sizeof(struct gt_hdr))
			return -1;
		size = get_u16(p + off + 2);
		if (size < sizeof(struct gt_hdr) || size > GT_CAP_MAX_RECORD || size > len - off)
			return -1;
		if (cb && ((uintptr_t)(p + off) & 7)) {
			/* Records are 8-aligned when sizes are multiples of 8; others are copied
			 * so consumers can read their fields directly. */
			uint64_t aligned[GT_CAP_MAX_RECORD / 8];

			memcpy(aligned, p + off, size);
			if ((ret = cb(aligned, size, ctx)))
				return ret;
		} else if (cb && (ret = cb(p + off, size, ctx))) {
			return ret;
		}
		off += size;
	}
	return 0;
}

int capture__kv(const void *body, size_t len,
		int (*cb)(const char *key, const char *value, void *ctx), void *ctx)
{
	const char *p = body;
	char s[GT_CAP_MAX_STRING];
	size_t off = 0, n;
	const char *nul;
	char *eq;
	int ret;

	while (off < len) {
		/* The NUL must come within GT_CAP_MAX_STRING bytes: that is the string cap. */
		nul = memchr(p + off, '\0', GT_MIN(len - off, (size_t)GT_CAP_MAX_STRING));
		if (!nul)
			return -1;
		n = (size_t)(nul - (p + off));
		memcpy(s, p + off, n + 1);
		eq = strchr(s, '=');
		if (!eq || eq == s)
			return -1;
		*eq = '\0';
		if (cb && (ret = cb(s, eq + 1, ctx)))
			return ret;
		off += n + 1;
	}
	return 0;
}

int capture__stacks(const void *body, size_t len,
		    int (*cb)(const struct capture_stack *s, void *ctx), void *ctx)
{
	const uint8_t *p = body;
	struct capture_stack s;
	uint64_t *copy = NULL;
	size_t off = 0, ips_len, copy_cap = 0;
	int ret = 0;

	while (off < len) {
		if (len - off < STACK_FIXED) {
			ret = -1;
			goto cleanup;
		}
		memcpy(&s.stack_id, p + off, 4);
		s.pid = get_u32(p + off + 4);
		s.nr = get_u16(p + off + 8);
		s.flags = get_u16(p + off + 10);
		s.kernel = s.flags & GT_STACK_KERNEL;
		ips_len = (size_t)s.nr * 8;
		if (ips_len > len - off - STACK_FIXED) {
			ret = -1;
			goto cleanup;
		}
		if ((uintptr_t)(p + off + STACK_FIXED) & 7) {
			/* Callers index ips as an array: hand out an aligned copy. */
			if (copy_cap < ips_len) {
				copy = gt_xrealloc(copy, ips_len);
				copy_cap = ips_len;
			}
			if (ips_len)
				memcpy(copy, p + off + STACK_FIXED, ips_len);
			s.ips = copy;
		} else {
			s.ips = (const uint64_t *)(const void *)(p + off + STACK_FIXED);
		}
		if (cb && (ret = cb(&s, ctx)))
			goto cleanup;
		off += STACK_FIXED + ips_len;
	}

cleanup:
	free(copy);
	return ret;
}

/*
 * Checks that an entry of fixed bytes followed by strings of the given total
 * length, padded to 8, fits in rem; returns its size or 0.
 */
static size_t entry_size(size_t rem, size_t fixed, size_t strs)
{
	size_t size = (size_t)round8(fixed + strs);

	return size <= rem ? size : 0;
}

int capture__symbols(const void *body, size_t len,
		     int (*cb)(const struct capture_symbol *s, void *ctx), void *ctx)
{
	const uint8_t *p = body;
	struct capture_symbol s;
	size_t off = 0, size;
	int ret;

	while (off < len) {
		if (len - off < SYM_FIXED)
			return -1;
		s.ip = get_u64(p + off);
		s.pid = get_u32(p + off + 8);
		s.sym_off = get_u32(p + off + 12);
		s.name_len = get_u16(p + off + 16);
		s.module_len = get_u16(p + off + 18);
		if (s.name_len > STR_MAX || s.module_len > STR_MAX)
			return -1;
		size = entry_size(len - off, SYM_FIXED, (size_t)s.name_len + s.module_len);
		if (!size)
			return -1;
		s.name = (const char *)p + off + SYM_FIXED;
		s.module = s.name + s.name_len;
		if (cb && (ret = cb(&s, ctx)))
			return ret;
		off += size;
	}
	return 0;
}

int capture__mappings(const void *body, size_t len,
		      int (*cb)(const struct capture_mapping *m, void *ctx), void *ctx)
{
	const uint8_t *p = body;
	struct capture_mapping m;
	size_t off = 0, size;
	int ret;

	while (off < len) {
		if (len - off < MAP_FIXED)
			return -1;
		m.start = get_u64(p + off);
		m.end = get_u64(p + off + 8);
		m.pgoff = get_u64(p + off + 16);
		m.pid = get_u32(p + off + 24);
		m.path_len = get_u16(p + off + 28);
		m.build_id_len = p[off + 30];
		if (m.build_id_len > sizeof(m.build_id) || m.path_len > STR_MAX)
			return -1;
		memcpy(m.build_id, p + off + 32, sizeof(m.build_id));
		size = entry_size(len - off, MAP_FIXED, m.path_len);
		if (!size)
			return -1;
		m.path = (const char *)p + off + MAP_FIXED;
		if (cb && (ret = cb(&m, ctx)))
			return ret;
		off += size;
	}
	return 0;
}

int capture__probes(const void *body, size_t len,
		    int (*cb)(const struct capture_probe *pr, void *ctx), void *ctx)
{
	const uint8_t *p = body;
	struct capture_probe pr;
	size_t off = 0, size;
	int ret;

	while (off < len) {
		if (len - off < PROBE_FIXED)
			return -1;
		pr.func_id = get_u32(p + off);
		pr.name_len = get_u16(p + off + 4);
		pr.module_len = get_u16(p + off + 6);
		pr.category_len = get_u16(p + off + 8);
		if (pr.name_len > STR_MAX || pr.module_len > STR_MAX || pr.category_len > STR_MAX)
			return -1;
		size = entry_size(len - off, PROBE_FIXED,
				  (size_t)pr.name_len + pr.module_len + pr.category_len);
		if (!size)
			return -1;
		pr.name = (const char *)p + off + PROBE_FIXED;
		pr.module = pr.name + pr.name_len;
		pr.category = pr.module + pr.module_len;
		if (cb && (ret = cb(&pr, ctx)))
			return ret;
		off += size;
	}
	return 0;
}

const char *capture__block_name(uint32_t type)
{
	switch (type) {
	case GT_BLK_HEADER:
		return "HEADER";
	case GT_BLK_EVENTS:
		return "EVENTS";
	case GT_BLK_STACKS:
		return "STACKS";
	case GT_BLK_SYMBOLS:
		return "SYMBOLS";
	case GT_BLK_MAPPINGS:
		return "MAPPINGS";
	case GT_BLK_COUNTERS:
		return "COUNTERS";
	case GT_BLK_PROBES:
		return "PROBES";
	case GT_BLK_END:
		return "END";
	default:
		return "unknown";
	}
}
