// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * export_zio.c: compressed export files (.json.zst, .json.gz, .pftrace.zst):
 * a stdio stream (fopencookie) that compresses into the output stream, so
 * the trace writers stay unaware of it.  The Perfetto UI opens gzip traces
 * directly; zstd is the smaller and faster one for large traces.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "output/export.h"
#include "support/util.h"

#define ZIO_CHUNK  (128 * 1024)
#define ZSTD_LEVEL 3
#define GZIP_LEVEL 6

struct zio {
	FILE *under;
	enum export_z kind;
	ZSTD_CCtx *zc;
	z_stream gz;
	bool err;
	uint8_t out[ZIO_CHUNK];
};

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);

	return n > t && !strcmp(s + n - t, tail);
}

enum export_z export__z_of_name(const char *path)
{
	if (!path)
		return EXPORT_Z_NONE;
	if (ends_with(path, ".zst") || ends_with(path, ".zstd"))
		return EXPORT_Z_ZSTD;
	if (ends_with(path, ".gz"))
		return EXPORT_Z_GZIP;
	return EXPORT_Z_NONE;
}

static void put_out(struct zio *z, size_t n)
{
	if (n && fwrite(z->out, 1, n, z->under) != n)
		z->err = true;
}

/* Compresses in; with finish, ends the stream.  false on a compression or write error. */
static bool zio_feed(struct zio *z, const void *in, size_t len, bool finish)
{
	if (z->kind == EXPORT_Z_ZSTD) {
		ZSTD_inBuffer ib = {in, len, 0};
		size_t left;

		do {
			ZSTD_outBuffer ob = {z->out, sizeof(z->out), 0};

			left = ZSTD_compressStream2(z->zc, &ob, &ib,
						    finish ? ZSTD_e_end : ZSTD_e_continue);
			if (ZSTD_isError(left))
				return false;
			put_out(z, ob.pos);
		} while (finish ? left != 0 : ib.pos < ib.size);
		return !z->err;
	}
	z->gz.next_in = (Bytef *)in;
	z->gz.avail_in = (uInt)len;
	for (;;) {
		int ret;

		z->gz.next_out = z->out;
		z->gz.avail_out = sizeof(z->out);
		ret = deflate(&z->gz, finish ? Z_FINISH : Z_NO_FLUSH);
		if (ret == Z_STREAM_ERROR)
			return false;
		put_out(z, sizeof(z->out) - z->gz.avail_out);
		if (finish ? ret == Z_STREAM_END : !z->gz.avail_in && z->gz.avail_out)
			break;
	}
	return !z->err;
}

static ssize_t zio_write(void *cookie, const char *buf, size_t size)
{
	struct zio *z = cookie;

	/* stdio hands at most its buffer at a time: well under deflate's uInt. */
	if (!zio_feed(z, buf, size, false)) {
		errno = EIO;
		return -1;
	}
	return (ssize_t)size;
}

static int zio_close(void *cookie)
{
	struct zio *z = cookie;
	bool ok = zio_feed(z, NULL, 0, true);

	if (z->kind == EXPORT_Z_ZSTD)
		ZSTD_freeCCtx(z->zc);
	else
		deflateEnd(&z->gz);
	free(z);
	return ok ? 0 : EOF;
}

FILE *export__zopen(FILE *under, enum export_z kind)
{
	static const cookie_io_functions_t fns = {.write = zio_write, .close = zio_close};
	struct zio *z = gt_xcalloc(1, sizeof(*z));
	FILE *f;

	z->under = under;
	z->kind = kind;
	if (kind == EXPORT_Z_ZSTD) {
		z->zc = ZSTD_createCCtx();
		if (!z->zc || ZSTD_isError(ZSTD_CCtx_setParameter(z->zc, ZSTD_c_compressionLevel,
								  ZSTD_LEVEL)))
			goto fail;
	} else if (deflateInit2(&z->gz, GZIP_LEVEL, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
		   Z_OK) {
		/* windowBits 15 + 16: a gzip header and trailer, not a zlib one. */
		goto fail;
	}
	f = fopencookie(z, "w", fns);
	if (f)
		return f;
	gt_err("cannot start the compressed output: %s", strerror(errno));
	if (kind == EXPORT_Z_ZSTD)
		ZSTD_freeCCtx(z->zc);
	else
		deflateEnd(&z->gz);
	free(z);
	return NULL;

fail:
	ZSTD_freeCCtx(z->zc);
	free(z);
	gt_err("cannot start the %s compressor: out of memory",
	       kind == EXPORT_Z_ZSTD ? "zstd" : "gzip");
	return NULL;
}

int export__zclose(FILE *zf)
{
	return fclose(zf) ? -1 : 0;
}
