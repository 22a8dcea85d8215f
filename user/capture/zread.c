// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * zread.c: ZSTD blocks for the reader: decoding one under its caps, and a
 * helper thread that checks and decompresses the next ZSTD block while the
 * caller works on the current one (analysis reads a capture twice).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "capture/capture.h"
#include "capture/capture_priv.h"
#include "support/util.h"

int zbatch__decode(ZSTD_DCtx **dctx, const uint8_t *body, uint32_t len, uint8_t **buf, size_t *cap,
		   uint32_t *raw, const char **why)
{
	size_t n;

	*raw = len < 8 ? 0 : get_u32(body);
	/* The stated size is checked before any memory is taken for it. */
	if (!*raw || *raw > GT_CAP_MAX_ZRAW)
		return ZB_OVER_CAP;
	if (!*dctx)
		*dctx = ZSTD_createDCtx();
	if (!*dctx) {
		*why = "out of memory";
		return ZB_BAD;
	}
	/*
	 * Batches differ by a few bytes: growing to each new largest one would
	 * map and fault in a fresh buffer again and again (8% of a report).
	 */
	if (*cap < *raw) {
		free(*buf);
		*cap = GT_MIN((size_t)*raw + *raw / 4, (size_t)GT_CAP_MAX_ZRAW);
		*buf = gt_xmalloc(*cap);
	}
	/* A frame that would give more than raw stops at the buffer's end (a bomb). */
	n = ZSTD_decompressDCtx(*dctx, *buf, *raw, body + 8, len - 8);
	if (ZSTD_isError(n)) {
		*why = ZSTD_getErrorName(n);
		return ZB_BAD;
	}
	if (n != *raw) {
		*why = "short";
		return ZB_BAD;
	}
	return ZB_OK;
}

struct zpf {
	int fd;
	const uint8_t *mem;
	uint64_t size;

	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool quit, want, busy;
	uint64_t off; /* the block asked for; UINT64_MAX: none */

	/* The result, the helper's until done. */
	bool done;
	struct zpf_result res;
	uint8_t *blk; /* the block's bytes (file readers) */
	size_t blk_cap;
	uint8_t *zbuf;
	size_t zcap;
	ZSTD_DCtx *dctx;
};

static long pf_read(struct zpf *z, uint64_t off, uint8_t *dst, size_t len)
{
	size_t got = 0;

	if (off >= z->size)
		return 0;
	len = (size_t)GT_MIN((uint64_t)len, z->size - off);
	while (got < len) {
		ssize_t n = pread(z->fd, dst + got, len - got, (off_t)(off + got));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	return (long)got;
}

/* The reader's own checks, repeated: a block that fails any is left to the reader. */
static void pf_job(struct zpf *z, uint64_t off)
{
	struct zpf_result *r = &z->res;
	uint8_t head[GT_CAP_BLOCK_HEAD];
	uint32_t total, body_len;
	const uint8_t *p;

	memset(r, 0, sizeof(*r));
	if (off >= z->size || z->size - off < sizeof(head))
		return;
	p = z->mem ? z->mem + off : head;
	if (!z->mem && pf_read(z, off, head, sizeof(head)) != sizeof(head))
		return;
	total = get_u32(p + 4);
	body_len = get_u32(p + 8);
	if (get_u32(p) != GT_BLK_ZSTD || total > GT_CAP_MAX_BLOCK || total < BLOCK_MIN ||
	    (total & 7) || body_len > total - BLOCK_MIN || z->size - off < total)
		return;
	if (!z->mem) {
		if (z->blk_cap < total) {
			free(z->blk);
			z->blk_cap = GT_MIN((size_t)total + total / 4, (size_t)GT_CAP_MAX_BLOCK);
			z->blk = gt_xmalloc(z->blk_cap);
		}
		if (pf_read(z, off, z->blk, total) != (long)total)
			return;
		p = z->blk;
	}
	if (get_u32(p + total - 4) != total)
		return;
	r->loaded = true;
	r->blk = p;
	r->total = total;
	r->crc_good = crc_update(0, p, total - GT_CAP_BLOCK_TAIL) == get_u32(p + total - 8);
	if (r->crc_good)
		r->status = zbatch__decode(&z->dctx, p + GT_CAP_BLOCK_HEAD, body_len, &z->zbuf,
					   &z->zcap, &r->raw, &r->why);
}

static void *pf_main(void *arg)
{
	struct zpf *z = arg;

	pthread_mutex_lock(&z->mu);
	for (;;) {
		uint64_t off;

		while (!z->want && !z->quit)
			pthread_cond_wait(&z->cv, &z->mu);
		if (z->quit)
			break;
		z->want = false;
		z->busy = true;
		off = z->off;
		pthread_mutex_unlock(&z->mu);
		pf_job(z, off);
		pthread_mutex_lock(&z->mu);
		z->busy = false;
		z->done = true;
		pthread_cond_broadcast(&z->cv);
	}
	pthread_mutex_unlock(&z->mu);
	return NULL;
}

struct zpf *zpf__new(int fd, const void *mem, uint64_t size)
{
	struct zpf *z;
	cpu_set_t cpus;

	/* On one CPU the helper only adds switches and locking (stdio's too) to the same work. */
	if (!sched_getaffinity(0, sizeof(cpus), &cpus) && CPU_COUNT(&cpus) < 2)
		return NULL;
	z = gt_xcalloc(1, sizeof(*z));

	z->fd = fd;
	z->mem = mem;
	z->size = size;
	z->off = UINT64_MAX;
	pthread_mutex_init(&z->mu, NULL);
	pthread_cond_init(&z->cv, NULL);
	/* Without a thread the reader decompresses each block itself, as before. */
	if (pthread_create(&z->th, NULL, pf_main, z)) {
		pthread_cond_destroy(&z->cv);
		pthread_mutex_destroy(&z->mu);
		free(z);
		return NULL;
	}
	return z;
}

/* Waits for the helper to be idle: its buffers are then the caller's to swap. */
static void pf_idle(struct zpf *z)
{
	while (z->want || z->busy)
		pthread_cond_wait(&z->cv, &z->mu);
}

void zpf__request(struct zpf *z, uint64_t off)
{
	pthread_mutex_lock(&z->mu);
	/* Asked already and not taken (a pass that skipped it, then a rewind): it stands. */
	if (z->off == off) {
		pthread_mutex_unlock(&z->mu);
		return;
	}
	pf_idle(z);
	z->off = off;
	z->done = false;
	z->want = true;
	pthread_cond_broadcast(&z->cv);
	pthread_mutex_unlock(&z->mu);
}

bool zpf__take(struct zpf *z, uint64_t off, struct zpf_result *r, uint8_t **zbuf, size_t *zcap)
{
	uint8_t *b;
	size_t cap;
	bool ok;

	pthread_mutex_lock(&z->mu);
	ok = z->off == off;
	if (ok) {
		pf_idle(z);
		ok = z->done;
	}
	if (ok) {
		*r = z->res;
		/* The decompressed bytes change hands: the caller's old buffer is the next target. */
		b = z->zbuf;
		cap = z->zcap;
		z->zbuf = *zbuf;
		z->zcap = *zcap;
		*zbuf = b;
		*zcap = cap;
		z->off = UINT64_MAX;
	}
	pthread_mutex_unlock(&z->mu);
	return ok;
}

void zpf__free(struct zpf *z)
{
	if (!z)
		return;
	pthread_mutex_lock(&z->mu);
	z->quit = true;
	pthread_cond_broadcast(&z->cv);
	pthread_mutex_unlock(&z->mu);
	pthread_join(z->th, NULL);
	pthread_cond_destroy(&z->cv);
	pthread_mutex_destroy(&z->mu);
	free(z->blk);
	free(z->zbuf);
	ZSTD_freeDCtx(z->dctx);
	free(z);
}
