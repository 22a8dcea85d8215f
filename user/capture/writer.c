// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * writer.c: the capture writer (layout in capture.h): the HEADER, blocks with
 * their CRC, buffered EVENTS, batches of blocks compressed as ZSTD blocks.
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
#include "support/outfile.h"
#include "support/util.h"

/* ---- writer ---- */

struct capture_writer {
	int fd;
	bool own_fd;
	int err; /* first write error (-errno): the file has a torn block, so stop there */
	uint64_t bytes;
	uint64_t events;
	struct capture_buf ev; /* pending EVENTS body */
	struct gpuops_enc gpu; /* pending GPU_OPS body */
	bool plain_gpu;	       /* GPU ops into EVENTS, as a 1.0 writer did */
	int level;	       /* zstd level; 0: plain blocks */
	uint32_t ztypes;       /* the batch's types, as its ZSTD block lists them */
	struct capture_buf zb; /* pending inner blocks of the next ZSTD block */
	uint64_t zb_since_ns;  /* when its first block came (CLOCK_MONOTONIC) */
	ZSTD_CCtx *cctx;
	struct capture_buf zout; /* the ZSTD block's body */
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

static int write_raw(struct capture_writer *w, uint32_t type, const void *body, size_t len)
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

/* The longest a compressed batch waits for a flush (the recorder flushes every 100 ms). */
#define ZSTD_BATCH_NS (100 * 1000 * 1000ULL)

/* Compresses the pending inner blocks into one ZSTD block (its own frame). */
static int write_batch(struct capture_writer *w)
{
	size_t bound, n;
	uint8_t *p;
	int err;

	if (!w->zb.len)
		return 0;
	if (!w->cctx)
		w->cctx = ZSTD_createCCtx();
	if (!w->cctx) {
		w->err = -ENOMEM;
		return w->err;
	}
	bound = ZSTD_compressBound(w->zb.len);
	capture_buf__reset(&w->zout);
	p = buf_grow(&w->zout, 8 + bound);
	put_u32(p, (uint32_t)w->zb.len);
	put_u32(p + 4, w->ztypes);
	w->ztypes = 0;
	n = ZSTD_compressCCtx(w->cctx, p + 8, bound, w->zb.data, w->zb.len, w->level);
	capture_buf__reset(&w->zb);
	if (ZSTD_isError(n)) {
		w->err = -EIO;
		return w->err;
	}
	err = write_raw(w, GT_BLK_ZSTD, w->zout.data, 8 + n);
	/* One batch can be large (a big STACKS block): do not keep its memory for good. */
	if (w->zout.cap > 2 * (size_t)GT_CAP_ZSTD_BATCH)
		capture_buf__free(&w->zout);
	return err;
}

/* A block of the file, or of the pending batch when compressing. */
static int write_block(struct capture_writer *w, uint32_t type, const void *body, size_t len)
{
	uint8_t head[8];
	int err;

	if (w->err)
		return w->err;
	if (!w->level || type == GT_BLK_HEADER)
		return write_raw(w, type, body, len);
	/* A plain block's limit is also a batch's: an oversized block is refused, not batched. */
	if (len > GT_CAP_MAX_BLOCK - BLOCK_MIN)
		return -EFBIG;
	/* The reader holds a batch in memory under a cap: a block that does not fit starts the next. */
	if (w->zb.len + 8 + round8(len) > GT_CAP_MAX_ZRAW) {
		err = write_batch(w);
		if (err)
			return err;
	}
	put_u32(head, type);
	put_u32(head + 4, (uint32_t)len);
	if (type < 32)
		w->ztypes |= 1U << type;
	buf_put(&w->zb, head, sizeof(head));
	buf_put(&w->zb, body, len);
	buf_pad8(&w->zb, 0);
	if (w->zb.len == sizeof(head) + round8(len))
		w->zb_since_ns = gt_now_mono_ns();
	/*
	 * A batch is on disk within ZSTD_BATCH_NS of its first block even when
	 * no flush comes (a long drain round while symbols load): a killed
	 * recorder then loses no more than with plain blocks.
	 */
	if (w->zb.len >= GT_CAP_ZSTD_BATCH || gt_now_mono_ns() - w->zb_since_ns >= ZSTD_BATCH_NS)
		return write_batch(w);
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
			gt_set_err(err, errlen, "%s: header entry %zu is not key=value", name, i);
			goto cleanup;
		}
		/* Long values (a command line) are cut so every reader can hold them. */
		len = strnlen(kv[i], STR_MAX);
		buf_put(&hdr, kv[i], len);
		buf_put(&hdr, "", 1);
		if (hdr.len > GT_CAP_MAX_HEADER - BLOCK_MIN) {
			gt_set_err(err, errlen, "%s: header is over the %u-byte limit", name,
				   GT_CAP_MAX_HEADER);
			goto cleanup;
		}
	}
	ret = write_block(w, GT_BLK_HEADER, hdr.data, hdr.len);
	if (ret) {
		gt_set_err(err, errlen, "cannot write %s: %s", name, strerror(-ret));
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

static int flush_pending(struct capture_writer *w);

static int gpu_event(struct capture_writer *w, const void *rec)
{
	const struct gt_gpu_op *op = rec;
	struct gt_gpu_op copy;
	int err;

	/* Records built as structs are read in place; a byte buffer may be unaligned. */
	if ((uintptr_t)rec & (_Alignof(struct gt_gpu_op) - 1)) {
		memcpy(&copy, rec, sizeof(copy));
		op = &copy;
	}
	if (gpuops_enc__add(&w->gpu, op)) {
		/* Out of contexts: this block is done, the next starts afresh. */
		err = flush_pending(w);
		if (err)
			return err;
		gpuops_enc__add(&w->gpu, op);
	}
	w->events++;
	if (w->gpu.body.len >= GT_CAP_EVENTS_FLUSH)
		return flush_pending(w);
	return 0;
}

int capture_writer__compact_gpu(struct capture_writer *w, bool on)
{
	int err = capture_writer__flush(w);

	w->plain_gpu = !on;
	return err;
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
	if (hdr.type == GT_REC_GPU_OP && size == sizeof(struct gt_gpu_op) && !w->plain_gpu)
		return gpu_event(w, rec);
	buf_put(&w->ev, rec, size);
	w->events++;
	if (w->ev.len >= GT_CAP_EVENTS_FLUSH)
		return flush_pending(w);
	return 0;
}

/* Pending EVENTS and GPU_OPS bodies become blocks (of the batch, compressing). */
static int flush_pending(struct capture_writer *w)
{
	int err;

	if (w->err)
		return w->err;
	/* GPU operations first: a GPU batch's loss record follows its operations. */
	if (w->gpu.count) {
		err = write_block(w, GT_BLK_GPU_OPS, w->gpu.body.data, w->gpu.body.len);
		gpuops_enc__reset(&w->gpu);
		if (err)
			return err;
	}
	if (w->ev.len) {
		err = write_block(w, GT_BLK_EVENTS, w->ev.data, w->ev.len);
		capture_buf__reset(&w->ev);
		if (err)
			return err;
	}
	return 0;
}

int capture_writer__flush(struct capture_writer *w)
{
	int err = flush_pending(w);

	return err ? err : write_batch(w);
}

int capture_writer__compress(struct capture_writer *w, int level)
{
	int err;

	if (level < 0 || level > ZSTD_maxCLevel())
		return -EINVAL;
	err = capture_writer__flush(w);
	w->level = level;
	return err;
}

int capture_writer__block(struct capture_writer *w, uint32_t type, const void *body, size_t len)
{
	int err;

	/* Only the writer's own first block may be a HEADER: a second one would start a new file. */
	if (type == GT_BLK_HEADER || type == GT_BLK_ZSTD)
		return -EINVAL;
	err = flush_pending(w);
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
	capture_buf__free(&w->zb);
	capture_buf__free(&w->zout);
	ZSTD_freeCCtx(w->cctx);
	gpuops_enc__free(&w->gpu);
	free(w);
	return err;
}
