/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * capture_priv.h: what the capture writer, reader and record codecs share:
 * limits of the layout, unaligned integer access, the block CRC and error
 * text helpers.  Included only by user/capture/ files.
 */
#ifndef GT_CAPTURE_PRIV_H
#define GT_CAPTURE_PRIV_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>

#include "capture/capture.h"
#include "gaptrace/gaptrace.h"
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
#define SYM_FIXED    20
#define INLINE_FIXED 16
#define MAP_FIXED    56
#define PROBE_FIXED  16
#define STACK_FIXED  16

static inline uint64_t round8(uint64_t n)
{
	return (n + 7) & ~7ULL;
}

/* The file's integers are read and written through memcpy: nothing in it is aligned for us. */
static inline uint16_t get_u16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint32_t get_u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint64_t get_u64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline void put_u16(uint8_t *p, uint16_t v)
{
	memcpy(p, &v, sizeof(v));
}

static inline void put_u32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
}

static inline void put_u64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, sizeof(v));
}

static inline uint32_t crc_update(uint32_t crc, const void *p, size_t len)
{
	/* zlib treats a NULL buffer as "return the initial value", losing crc. */
	if (!len)
		return crc;
	return (uint32_t)crc32(crc, p, (uInt)len);
}

/* ---- body buffers ---- */

static inline uint8_t *buf_grow(struct capture_buf *b, size_t n)
{
	uint8_t *p;

	gt_grow((void **)&b->data, &b->cap, b->len + n, 1);
	p = b->data + b->len;
	b->len += n;
	return p;
}

static inline void buf_put(struct capture_buf *b, const void *src, size_t n)
{
	if (n)
		memcpy(buf_grow(b, n), src, n);
}

/* Entries of the length-prefixed kinds are padded to 8 bytes, counted from their start. */
static inline void buf_pad8(struct capture_buf *b, size_t start)
{
	size_t pad = (size_t)(round8(b->len - start) - (b->len - start));

	if (pad)
		memset(buf_grow(b, pad), 0, pad);
}

/*
 * GPU_OPS body being built (gpuops.c): each GT_REC_GPU_OP record is coded
 * against the previous one of its (kind, device, stream) context.
 */
struct gpuops_enc {
	struct capture_buf body;
	uint32_t count;
	uint32_t nctx;
	uint32_t *slots;	/* hash of contexts: index + 1, 0 = free */
	struct gt_gpu_op *prev; /* previous record of each context */
};
/* 0, or 1 when the block has GT_CAP_GPU_MAX_CTX contexts: write it and add again. */
int gpuops_enc__add(struct gpuops_enc *e, const struct gt_gpu_op *op);
void gpuops_enc__reset(struct gpuops_enc *e);
void gpuops_enc__free(struct gpuops_enc *e);

/* ---- ZSTD blocks (zread.c) ---- */

typedef struct ZSTD_DCtx_s ZSTD_DCtx;

enum { ZB_OK = 0, ZB_OVER_CAP = -1, ZB_BAD = -2 };
/*
 * Decompresses a ZSTD block's body into *buf (grown to its stated size):
 * ZB_OK; ZB_OVER_CAP when the stated size *raw is 0 or over
 * GT_CAP_MAX_ZRAW; ZB_BAD when the frame does not give exactly *raw bytes
 * (*why says how).  *dctx is created on first use.
 */
int zbatch__decode(ZSTD_DCtx **dctx, const uint8_t *body, uint32_t len, uint8_t **buf, size_t *cap,
		   uint32_t *raw, const char **why);

/* The next ZSTD block, checked and decompressed by a helper thread. */
struct zpf;
struct zpf_result {
	bool loaded;	    /* lengths held and every byte was there; else nothing below */
	bool crc_good;	    /* else nothing below */
	const uint8_t *blk; /* the whole block, valid until the next request */
	uint32_t total;
	int status; /* zbatch__decode's */
	uint32_t raw;
	const char *why;
};
/* NULL when no thread can be started: the reader then decompresses inline. */
struct zpf *zpf__new(int fd, const void *mem, uint64_t size);
/*
 * Starts work on the block at off (after the one asked for before is done);
 * nothing when off is the one asked for, not taken yet.
 */
void zpf__request(struct zpf *z, uint64_t off);
/*
 * When the block at off was the one asked for: waits for it, fills r and
 * swaps *zbuf (its decompressed bytes on ZB_OK) with the helper's buffer.
 */
bool zpf__take(struct zpf *z, uint64_t off, struct zpf_result *r, uint8_t **zbuf, size_t *zcap);
void zpf__free(struct zpf *z); /* NULL-safe */

static inline uint16_t str_len(const char *s)
{
	return s ? (uint16_t)strnlen(s, STR_MAX) : 0;
}

#endif /* GT_CAPTURE_PRIV_H */
