// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * reader.c: the defensive capture reader (layout in capture.h).  It trusts no
 * length in the file: it may be fuzzed.
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
#include <zstd.h>

#include "capture/capture.h"
#include "capture/capture_priv.h"
#include "gaptrace/gaptrace.h"
#include "support/util.h"

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
	uint32_t unknown_sub;
	unsigned crc_errors;

	/* The ZSTD block being read: its inner blocks, decompressed. */
	ZSTD_DCtx *dctx;
	uint8_t *zbuf;
	size_t zcap;
	uint32_t zlen;	   /* 0: none */
	uint32_t zpos;	   /* next inner block */
	uint32_t zindex;   /* its block number */
	uint64_t zoff;	   /* its offset */
	uint32_t cur_sub;  /* inner offset + 1 of the block last returned; 0: not inner */
	uint32_t only;	   /* capture__only's mask; 0: every block */
	struct zpf *pf;	   /* the helper decompressing ahead */
	bool no_pf;	   /* it could not be started, or capture__read_ahead said no */
	unsigned nbatches; /* ZSTD blocks opened before the helper started */
	unsigned nopened;  /* ZSTD blocks decompressed (or tried), all passes */
	unsigned nahead;   /* those the helper decompressed */
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
		s = gt_xasprintf("%s: more than %d warnings: not listing the rest", c->path,
				 MAX_WARNINGS);
	} else {
		va_start(ap, fmt);
		s = gt_xvasprintf(fmt, ap);
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
		gt_set_err(err, errlen, "cannot read %s: %s", c->path, strerror((int)-got));
		goto cleanup;
	}
	if (got == 0) {
		gt_set_err(err, errlen,
			   "%s is not a gaptrace capture (file is empty): pass a file written by "
			   "'gaptrace record'",
			   c->path);
		goto cleanup;
	}
	/* head is zeroed, so a file of 1-3 bytes shows its bytes padded with zeros. */
	magic = get_u32(head);
	if (got < 4 || magic != GT_BLK_HEADER) {
		gt_set_err(
		    err, errlen,
		    "%s is not a gaptrace capture (bad magic 0x%08x): pass a file written by "
		    "'gaptrace record'",
		    c->path, magic);
		goto cleanup;
	}
	if (got < GT_CAP_BLOCK_HEAD + 4) {
		gt_set_err(err, errlen, HDR_TRUNCATED, c->path);
		goto cleanup;
	}
	/* The type reads the same in both orders; the BOM is what tells them apart. */
	bom = get_u32(head + GT_CAP_BLOCK_HEAD);
	if (bom == GT_CAP_BOM_SWAPPED) {
		gt_set_err(err, errlen,
			   "%s was written on a host of the other byte order: read it on a %s host",
			   c->path,
			   __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? "big-endian"
								     : "little-endian");
		goto cleanup;
	}
	if (bom != GT_CAP_BOM) {
		gt_set_err(
		    err, errlen,
		    "%s is not a gaptrace capture (bad magic 0x%08x): pass a file written by "
		    "'gaptrace record'",
		    c->path, bom);
		goto cleanup;
	}
	if (got < (long)sizeof(head)) {
		gt_set_err(err, errlen, HDR_TRUNCATED, c->path);
		goto cleanup;
	}
	/* Before any length check: another major may lay out its blocks differently. */
	c->major = get_u16(head + GT_CAP_BLOCK_HEAD + 4);
	c->minor = get_u16(head + GT_CAP_BLOCK_HEAD + 6);
	if (c->major != GT_CAP_MAJOR) {
		gt_set_err(
		    err, errlen,
		    "%s has capture version %u.%u; this gaptrace reads version %u.x: upgrade "
		    "gaptrace",
		    c->path, c->major, c->minor, GT_CAP_MAJOR);
		goto cleanup;
	}
	total = get_u32(head + 4);
	body_len = get_u32(head + 8);
	if (total > GT_CAP_MAX_HEADER) {
		gt_set_err(
		    err, errlen,
		    "%s: capture header is damaged (claims %u bytes, over the %u limit): the "
		    "file cannot be read",
		    c->path, total, GT_CAP_MAX_HEADER);
		goto cleanup;
	}
	if (!lengths_fit(total, body_len) || body_len < HDR_FIXED) {
		gt_set_err(err, errlen, HDR_LENGTHS, c->path);
		goto cleanup;
	}
	if (c->size < total) {
		gt_set_err(err, errlen, HDR_TRUNCATED, c->path);
		goto cleanup;
	}
	got = load_block(c, 0, total, &p);
	if (got < 0) {
		gt_set_err(err, errlen, "cannot read %s: %s", c->path, strerror((int)-got));
		goto cleanup;
	}
	if (got < (long)total) {
		gt_set_err(err, errlen, HDR_TRUNCATED, c->path);
		goto cleanup;
	}
	if (get_u32(p + total - 4) != total) {
		gt_set_err(err, errlen, HDR_LENGTHS, c->path);
		goto cleanup;
	}
	if (crc_update(0, p, total - GT_CAP_BLOCK_TAIL) != get_u32(p + total - 8)) {
		gt_set_err(err, errlen,
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
		gt_set_err(err, errlen, "cannot open %s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st)) {
		gt_set_err(err, errlen, "cannot open %s: %s", path, strerror(errno));
		close(fd);
		return NULL;
	}
	/* Blocks are read by offset (pread) and a second pass rewinds: a plain file is needed. */
	if (!S_ISREG(st.st_mode)) {
		gt_set_err(err, errlen, "cannot open %s: %s", path,
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

/*
 * Checks a block's CRC once: passes after the first reuse the verdict.
 * verdict: the helper thread's (0, 1), or -1 to compute it here.
 */
static bool crc_ok(struct capture *c, uint64_t off, const uint8_t *p, uint32_t total, int verdict)
{
	bool ok;

	if (off + total <= c->crc_hw)
		return !known_bad(c, off);
	if (verdict >= 0)
		ok = verdict;
	else
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

/* Reports a ZSTD block that did not decode (zbatch__decode's status) and skips it. */
static void batch_failed(struct capture *c, uint64_t off, int status, uint32_t raw, const char *why)
{
	if (!new_problem(c, off))
		return;
	if (status == ZB_OVER_CAP)
		add_warning(c,
			    "%s: compressed block %u at byte %llu claims %u bytes uncompressed, "
			    "over the %u limit: skipped it; the file is damaged or hostile",
			    c->path, c->index - 1, (unsigned long long)off, raw, GT_CAP_MAX_ZRAW);
	else
		add_warning(c,
			    "%s: compressed block %u at byte %llu does not decompress to its %u "
			    "bytes (%s): skipped it; the file is damaged",
			    c->path, c->index - 1, (unsigned long long)off, raw, why);
}

/* The ZSTD block at off, decompressed into zbuf (or skipped with a warning). */
static void open_batch(struct capture *c, uint64_t off, const uint8_t *body, uint32_t len,
		       const struct zpf_result *pf)
{
	const char *why = NULL;
	uint32_t raw;
	int status;

	c->zlen = c->zpos = 0;
	c->nopened++;
	if (pf) {
		c->nahead++;
		status = pf->status;
		raw = pf->raw;
		why = pf->why;
	} else {
		status = zbatch__decode(&c->dctx, body, len, &c->zbuf, &c->zcap, &raw, &why);
	}
	if (status != ZB_OK) {
		batch_failed(c, off, status, raw, why);
		return;
	}
	c->zlen = raw;
	c->zoff = off;
	c->zindex = c->index - 1;
}

/* The next inner block of the open ZSTD block: 1, or 0 at its end or damage. */
static int next_inner(struct capture *c, struct capture_block *blk)
{
	uint32_t pos = c->zpos, type, len;

	if (c->zlen - pos < 8)
		goto malformed;
	type = get_u32(c->zbuf + pos);
	len = get_u32(c->zbuf + pos + 4);
	if (len > c->zlen - pos - 8 || round8(len) > c->zlen - pos - 8 || type == GT_BLK_HEADER ||
	    type == GT_BLK_ZSTD)
		goto malformed;
	c->zpos = pos + 8 + (uint32_t)round8(len);
	c->cur = c->zoff;
	c->cur_sub = pos + 1;
	blk->type = type;
	blk->len = len;
	blk->body = c->zbuf + pos + 8;
	blk->offset = c->zoff;
	blk->index = c->zindex;
	return 1;

malformed:
	c->zlen = c->zpos = 0;
	if (new_problem(c, c->zoff))
		add_warning(c,
			    "%s: compressed block %u at byte %llu holds a malformed inner block "
			    "at offset %u: kept the blocks before it; the file is damaged",
			    c->path, c->zindex, (unsigned long long)c->zoff, pos);
	return 0;
}

/* Whether the ZSTD block at off holds none of the types capture__only asked for. */
static bool skip_batch(struct capture *c, uint64_t off)
{
	uint8_t types[4];

	if (read_at(c, off + GT_CAP_BLOCK_HEAD + 4, types, sizeof(types)) != sizeof(types))
		return false;
	return !(get_u32(types) & c->only);
}

int capture__next(struct capture *c, struct capture_block *blk)
{
	uint8_t head[GT_CAP_BLOCK_HEAD], tail[4] = {};
	uint32_t type, total, body_len;
	struct zpf_result pfr;
	const uint8_t *p;
	uint64_t off;
	int verdict;
	long got;

	while (c->zpos < c->zlen) {
		if (next_inner(c, blk))
			return 1;
	}
	c->zlen = c->zpos = 0;
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
		if (type == GT_BLK_ZSTD && c->only && body_len >= 8 && skip_batch(c, off)) {
			c->pos = off + total;
			c->index++;
			c->kept++;
			continue;
		}
		verdict = -1;
		if (type == GT_BLK_ZSTD && c->pf &&
		    zpf__take(c->pf, off, &pfr, &c->zbuf, &c->zcap) && pfr.loaded) {
			p = pfr.blk;
			got = total;
			verdict = pfr.crc_good;
		} else {
			got = load_block(c, off, total, &p);
		}
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
		if (!crc_ok(c, off, p, total, verdict)) {
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
		if (type == GT_BLK_ZSTD) {
			open_batch(c, off, p + GT_CAP_BLOCK_HEAD, body_len,
				   verdict >= 0 ? &pfr : NULL);
			/*
			 * The next block is most likely another batch: decompress it
			 * meanwhile.  Not worth a thread for a file of a batch or two.
			 */
			if (!c->pf && !c->no_pf && ++c->nbatches >= 2) {
				c->pf = zpf__new(c->fd, c->mem, c->size);
				c->no_pf = !c->pf;
			}
			if (c->pf && c->pos < c->size)
				zpf__request(c->pf, c->pos);
			while (c->zpos < c->zlen) {
				if (next_inner(c, blk))
					return 1;
			}
			continue;
		}
		c->cur = off;
		c->cur_sub = 0;
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
	c->zlen = c->zpos = 0;
	c->only = 0;
	/* The next pass starts where the last one did: its first batch too is decompressed ahead. */
	if (c->pf && c->pos < c->size)
		zpf__request(c->pf, c->pos);
	return 0;
}

void capture__read_ahead(struct capture *c, bool on)
{
	if (!on) {
		zpf__free(c->pf);
		c->pf = NULL;
	}
	c->no_pf = !on;
}

void capture__only(struct capture *c, uint32_t mask)
{
	c->only = mask;
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

const char *capture__header_key(const struct capture *c, enum capture_key key)
{
	return capture__header(c, capture_key__name(key));
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

unsigned capture__zstd_blocks(const struct capture *c, unsigned *ahead)
{
	if (ahead)
		*ahead = c->nahead;
	return c->nopened;
}

void capture__note_unknown(struct capture *c, uint32_t type)
{
	/* Counted once per block, whichever pass the caller notes it in. */
	if (c->cur + 1 < c->unknown_hw ||
	    (c->cur + 1 == c->unknown_hw && c->cur_sub <= c->unknown_sub))
		return;
	c->unknown_hw = c->cur + 1;
	c->unknown_sub = c->cur_sub;
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
	zpf__free(c->pf);
	free(c->zbuf);
	ZSTD_freeDCtx(c->dctx);
	free(c->bad);
	free(c->path);
	free(c);
}
