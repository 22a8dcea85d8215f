// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_capture_zstd.c: cmocka tests of compressed captures (ZSTD blocks,
 * format 1.3): the same blocks come back as from a plain capture, a cut file
 * keeps every whole batch, hostile sizes are refused with one line, and the
 * captures committed before 1.3 still read.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "capture/capture.h"
#include "gaptrace/gaptrace.h"
#include "support/util.h"

#define NBATCH	4   /* flushes, each a ZSTD block */
#define PER	500 /* records per batch */
#define CORPUS	"tests/fuzz/corpus"
#define MAXBLKS 64

struct blk {
	uint32_t type, len;
	uint8_t *body;
};

struct blocks {
	struct blk b[MAXBLKS];
	size_t n;
};

static uint8_t *slurp(const char *path, size_t *len)
{
	struct stat st;
	uint8_t *buf;
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	buf = malloc((size_t)st.st_size + 1);
	assert_non_null(buf);
	assert_int_equal(read(fd, buf, (size_t)st.st_size), st.st_size);
	close(fd);
	*len = (size_t)st.st_size;
	return buf;
}

/* NBATCH flushes of PER off-CPU records, a STACKS block and COUNTERS each, then END. */
static void write_sample(const char *path, int level)
{
	const char *kv[] = {"pid=7", "comm=zt"};
	struct capture_writer *w;
	char err[256];

	unlink(path);
	w = capture_writer__open(path, kv, 2, err, sizeof(err));
	assert_non_null(w);
	assert_int_equal(capture_writer__compress(w, level), 0);
	for (int f = 0; f < NBATCH; f++) {
		struct capture_buf st = {}, cnt = {};
		uint64_t ips[3] = {0x1000u + (unsigned)f, 0x2000, 0x3000};

		for (int i = 0; i < PER; i++) {
			struct gt_offcpu o = {.pid = 7, .tid = 8 + (uint32_t)(i % 3)};

			o.hdr.type = GT_REC_OFFCPU;
			o.hdr.size = sizeof(o);
			o.hdr.ts_ns = 1000000ULL * (uint64_t)(f * PER + i);
			o.off_ns = o.hdr.ts_ns;
			o.on_ns = o.hdr.ts_ns + 500 + (uint64_t)(i * 37 % 101);
			o.ustack_id = f;
			assert_int_equal(capture_writer__event(w, &o, sizeof(o)), 0);
		}
		capture_buf__stack(&st, f, 7, false, ips, 3);
		assert_int_equal(capture_writer__block(w, GT_BLK_STACKS, st.data, st.len), 0);
		capture_buf__kv(&cnt, "flush", "%d", f);
		assert_int_equal(capture_writer__block(w, GT_BLK_COUNTERS, cnt.data, cnt.len), 0);
		assert_int_equal(capture_writer__flush(w), 0);
		capture_buf__free(&st);
		capture_buf__free(&cnt);
	}
	{
		struct capture_buf end = {};

		capture_buf__kv(&end, "end_mono_ns", "%d", 42);
		assert_int_equal(capture_writer__block(w, GT_BLK_END, end.data, end.len), 0);
		capture_buf__free(&end);
	}
	assert_int_equal(capture_writer__close(w), 0);
}

static void read_all(struct capture *c, struct blocks *out)
{
	struct capture_block b;

	out->n = 0;
	while (capture__next(c, &b) == 1) {
		assert_true(out->n < MAXBLKS);
		out->b[out->n].type = b.type;
		out->b[out->n].len = b.len;
		out->b[out->n].body = malloc(b.len + 1);
		memcpy(out->b[out->n].body, b.body, b.len);
		out->n++;
	}
}

static void free_all(struct blocks *bl)
{
	for (size_t i = 0; i < bl->n; i++)
		free(bl->b[i].body);
	bl->n = 0;
}

/* Outer block types of a file, as they lie on disk. */
static size_t outer_types(const uint8_t *buf, size_t len, uint32_t *types, size_t max)
{
	size_t n = 0;

	for (size_t off = 0; off + 16 <= len && n < max;) {
		uint32_t total;

		memcpy(&types[n++], buf + off, 4);
		memcpy(&total, buf + off + 4, 4);
		off += total;
	}
	return n;
}

static void assert_same(const struct blocks *a, const struct blocks *b)
{
	assert_int_equal(a->n, b->n);
	for (size_t i = 0; i < a->n; i++) {
		assert_int_equal(a->b[i].type, b->b[i].type);
		assert_int_equal(a->b[i].len, b->b[i].len);
		assert_memory_equal(a->b[i].body, b->b[i].body, a->b[i].len);
	}
}

/* The compressed capture gives back the plain one's blocks, byte for byte, in both readers. */
static void test_zstd_roundtrip(void **state)
{
	const char *pp = "/tmp/gt_zt_plain.gtcap", *zp = "/tmp/gt_zt_zstd.gtcap";
	struct blocks plain, z, zm;
	uint32_t types[64];
	struct capture *c;
	unsigned major, minor;
	size_t plen, zlen, n, nz = 0;
	uint8_t *pbuf, *zbuf;
	char err[256];

	write_sample(pp, 0);
	write_sample(zp, 3);
	pbuf = slurp(pp, &plen);
	zbuf = slurp(zp, &zlen);
	/* HEADER, then one ZSTD block per flush: nothing else lies in the file. */
	n = outer_types(zbuf, zlen, types, 64);
	for (size_t i = 1; i < n; i++)
		nz += types[i] == GT_BLK_ZSTD;
	assert_int_equal(types[0], GT_BLK_HEADER);
	assert_int_equal(nz, n - 1);
	assert_int_equal(nz, NBATCH + 1);
	assert_true(zlen * 5 < plen);

	c = capture__open(pp, err, sizeof(err));
	assert_non_null(c);
	read_all(c, &plain);
	capture__close(c);
	/* EVENTS, STACKS, COUNTERS per flush, and END. */
	assert_int_equal(plain.n, 3 * NBATCH + 1);

	c = capture__open(zp, err, sizeof(err));
	assert_non_null(c);
	capture__version(c, &major, &minor);
	assert_int_equal(major, 1);
	assert_int_equal(minor, 3);
	read_all(c, &z);
	assert_int_equal(capture__nwarnings(c), 0);
	assert_false(capture__truncated(c));
	/* A second pass (analysis makes two) reads the same. */
	capture__rewind(c);
	read_all(c, &zm);
	assert_same(&z, &zm);
	free_all(&zm);
	capture__close(c);
	assert_same(&plain, &z);

	c = capture__open_mem(zbuf, zlen, "mem", err, sizeof(err));
	assert_non_null(c);
	read_all(c, &zm);
	capture__close(c);
	assert_same(&plain, &zm);

	free_all(&plain);
	free_all(&z);
	free_all(&zm);
	free(pbuf);
	free(zbuf);
	unlink(pp);
	unlink(zp);
}

/* capture__only passes over batches without the wanted type; a plain block still comes. */
static void test_zstd_only(void **state)
{
	const char *zp = "/tmp/gt_zt_only.gtcap";
	struct capture_block b;
	struct capture *c;
	size_t n = 0, ends = 0;
	char err[256];

	write_sample(zp, 1);
	c = capture__open(zp, err, sizeof(err));
	assert_non_null(c);
	capture__only(c, 1U << GT_BLK_END);
	while (capture__next(c, &b) == 1) {
		n++;
		ends += b.type == GT_BLK_END;
	}
	/* Only the last batch holds END; it comes back whole (its 1 block). */
	assert_int_equal(ends, 1);
	assert_int_equal(n, 1);
	capture__rewind(c);
	n = 0;
	while (capture__next(c, &b) == 1)
		n++;
	assert_int_equal(n, 3 * NBATCH + 1);
	capture__close(c);
	unlink(zp);
}

/* Cut anywhere, a compressed capture keeps every whole batch and says where it was cut. */
static void test_zstd_truncated(void **state)
{
	const char *zp = "/tmp/gt_zt_cut.gtcap";
	uint32_t types[64];
	size_t zlen, n, ends[64], off = 0;
	uint8_t *zbuf;

	write_sample(zp, 3);
	zbuf = slurp(zp, &zlen);
	n = outer_types(zbuf, zlen, types, 64);
	for (size_t i = 0; i < n; i++) {
		uint32_t total;

		memcpy(&total, zbuf + off + 4, 4);
		off += total;
		ends[i] = off;
	}
	assert_int_equal(off, zlen);
	for (size_t cut = ends[0]; cut < zlen; cut += 7) {
		struct blocks got;
		struct capture *c;
		size_t whole = 0;
		char err[256], want[256];

		while (whole + 1 < n && ends[whole + 1] <= cut)
			whole++;
		c = capture__open_mem(zbuf, cut, "cut", err, sizeof(err));
		assert_non_null(c);
		read_all(c, &got);
		/* 3 inner blocks per whole flush batch (the last batch, END, is never whole here). */
		assert_int_equal(got.n, 3 * whole);
		if (cut == ends[whole]) {
			assert_int_equal(capture__nwarnings(c), 0);
		} else {
			snprintf(want, sizeof(want),
				 "cut: capture truncated at byte %zu: kept %zu whole blocks; the "
				 "recording was cut short, the data up to there is usable",
				 cut, whole + 1);
			assert_int_equal(capture__nwarnings(c), 1);
			assert_string_equal(capture__warning(c, 0), want);
		}
		free_all(&got);
		capture__close(c);
	}
	free(zbuf);
	unlink(zp);
}

/* One ZSTD block by hand: raw_len as stated, types, the frame; CRC made right. */
static size_t hand_zstd(uint8_t *out, uint32_t raw_len, const void *frame, size_t flen)
{
	uint32_t len = (uint32_t)(8 + flen), total = 16 + ((len + 7) & ~7U) + 8, v, crc;

	memset(out, 0, total);
	v = GT_BLK_ZSTD;
	memcpy(out, &v, 4);
	memcpy(out + 4, &total, 4);
	memcpy(out + 8, &len, 4);
	memcpy(out + 16, &raw_len, 4);
	v = 1U << GT_BLK_EVENTS;
	memcpy(out + 20, &v, 4);
	memcpy(out + 24, frame, flen);
	crc = (uint32_t)crc32(0, out, total - 8);
	memcpy(out + total - 8, &crc, 4);
	memcpy(out + total - 4, &total, 4);
	return total;
}

/*
 * A bomb: a block stating 1 GiB is refused before any memory is taken, and a
 * block stating 64 bytes whose frame gives 32 MiB of zeros stops at 64.  Each
 * is one warning line; the good block after them still reads.
 */
static void test_zstd_bomb(void **state)
{
	const char *zp = "/tmp/gt_zt_bomb.gtcap";
	size_t hlen, zlen, flen, glen, off;
	uint8_t *head, *file, *zeros, *frame, good[64];
	struct blocks got;
	struct capture *c;
	uint32_t total;
	char err[256];

	/* The header block of a real capture, then hand-made blocks. */
	write_sample(zp, 0);
	head = slurp(zp, &zlen);
	memcpy(&total, head + 4, 4);
	hlen = total;
	zeros = calloc(1, 32U << 20);
	frame = malloc(ZSTD_compressBound(32U << 20));
	flen = ZSTD_compress(frame, ZSTD_compressBound(32U << 20), zeros, 32U << 20, 19);
	assert_false(ZSTD_isError(flen));
	/* 32 MiB of zeros is a few KiB of frame: the bomb's whole point. */
	assert_true(flen < 4096);
	file = calloc(1, hlen + 3 * (flen + 64) + 256);
	memcpy(file, head, hlen);
	off = hlen;
	off += hand_zstd(file + off, 1U << 30, frame, flen);
	off += hand_zstd(file + off, 64, frame, flen);
	{
		/* A good batch: one COUNTERS block "a=1". */
		uint8_t inner[24] = {};
		uint32_t v = GT_BLK_COUNTERS, l = 4;

		memcpy(inner, &v, 4);
		memcpy(inner + 4, &l, 4);
		memcpy(inner + 8, "a=1", 4);
		glen = ZSTD_compress(good, sizeof(good), inner, 16, 3);
		assert_false(ZSTD_isError(glen));
		off += hand_zstd(file + off, 16, good, glen);
	}
	c = capture__open_mem(file, off, "bomb", err, sizeof(err));
	assert_non_null(c);
	read_all(c, &got);
	assert_int_equal(got.n, 1);
	assert_int_equal(got.b[0].type, GT_BLK_COUNTERS);
	assert_string_equal((char *)got.b[0].body, "a=1");
	assert_int_equal(capture__nwarnings(c), 2);
	snprintf(err, sizeof(err),
		 "bomb: compressed block 1 at byte %zu claims 1073741824 bytes uncompressed, over "
		 "the 67108864 limit: skipped it; the file is damaged or hostile",
		 hlen);
	assert_string_equal(capture__warning(c, 0), err);
	assert_non_null(strstr(capture__warning(c, 1), "bomb: compressed block 2 at byte "));
	assert_non_null(strstr(capture__warning(c, 1), "does not decompress to its 64 bytes ("));
	assert_null(strchr(capture__warning(c, 1), '\n'));
	assert_false(capture__truncated(c));
	free_all(&got);
	capture__close(c);
	free(head);
	free(file);
	free(zeros);
	free(frame);
	unlink(zp);
}

/* Inner blocks that overrun their batch, or nest a HEADER or ZSTD, are refused. */
static void test_zstd_inner_malformed(void **state)
{
	static const uint32_t bad_types[] = {GT_BLK_HEADER, GT_BLK_ZSTD};
	const char *zp = "/tmp/gt_zt_inner.gtcap";
	uint8_t *head, file[4096], frame[256], inner[32];
	size_t hlen, zlen, flen, off;
	uint32_t total, v, l;

	write_sample(zp, 0);
	head = slurp(zp, &zlen);
	memcpy(&total, head + 4, 4);
	hlen = total;
	for (int k = 0; k < 3; k++) {
		struct blocks got;
		struct capture *c;
		char err[256];

		memset(inner, 0, sizeof(inner));
		/* A good COUNTERS block, then the bad one. */
		v = GT_BLK_COUNTERS;
		l = 4;
		memcpy(inner, &v, 4);
		memcpy(inner + 4, &l, 4);
		memcpy(inner + 8, "a=1", 4);
		v = k < 2 ? bad_types[k] : GT_BLK_EVENTS;
		l = k < 2 ? 0 : 4096;
		memcpy(inner + 16, &v, 4);
		memcpy(inner + 20, &l, 4);
		flen = ZSTD_compress(frame, sizeof(frame), inner, 24, 3);
		assert_false(ZSTD_isError(flen));
		memcpy(file, head, hlen);
		off = hlen + hand_zstd(file + hlen, 24, frame, flen);
		c = capture__open_mem(file, off, "inner", err, sizeof(err));
		assert_non_null(c);
		read_all(c, &got);
		assert_int_equal(got.n, 1);
		assert_int_equal(capture__nwarnings(c), 1);
		snprintf(err, sizeof(err),
			 "inner: compressed block 1 at byte %zu holds a malformed inner block at "
			 "offset 16: kept the blocks before it; the file is damaged",
			 hlen);
		assert_string_equal(capture__warning(c, 0), err);
		free_all(&got);
		capture__close(c);
	}
	free(head);
	unlink(zp);
}

/* The captures committed before 1.3 (the fuzz seeds, formats 1.1 and 1.2) read as before. */
static void test_zstd_old_captures(void **state)
{
	DIR *d = opendir(CORPUS);
	struct dirent *de;
	size_t files = 0;

	assert_non_null(d);
	while ((de = readdir(d))) {
		struct capture_block b;
		struct capture *c;
		unsigned major, minor;
		size_t nblk = 0;
		char path[512], err[256];

		if (!strstr(de->d_name, ".gtcap"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", CORPUS, de->d_name);
		c = capture__open(path, err, sizeof(err));
		assert_non_null(c);
		capture__version(c, &major, &minor);
		assert_int_equal(major, 1);
		assert_true(minor < 3);
		while (capture__next(c, &b) == 1) {
			assert_int_not_equal(b.type, GT_BLK_ZSTD);
			nblk++;
		}
		assert_true(nblk > 0);
		assert_int_equal(capture__nwarnings(c), 0);
		capture__close(c);
		files++;
	}
	closedir(d);
	assert_true(files >= 5);
}

/* A block that does not fit the pending batch starts the next; an oversized one is refused. */
static void test_zstd_big_block(void **state)
{
	const char *zp = "/tmp/gt_zt_big.gtcap", *kv[] = {"pid=1"};
	size_t big = GT_CAP_MAX_BLOCK - 24, zlen, n;
	struct capture_writer *w;
	struct capture_block b;
	struct capture *c;
	uint32_t types[8];
	uint8_t *body = calloc(1, big + 1), *zbuf;
	char err[256];

	unlink(zp);
	w = capture_writer__open(zp, kv, 1, err, sizeof(err));
	assert_non_null(w);
	assert_int_equal(capture_writer__compress(w, 99), -EINVAL);
	assert_int_equal(capture_writer__compress(w, 1), 0);
	assert_int_equal(capture_writer__block(w, GT_BLK_COUNTERS, "a=1", 4), 0);
	assert_int_equal(capture_writer__block(w, GT_BLK_COUNTERS, "b=2", 4), 0);
	assert_int_equal(capture_writer__block(w, GT_BLK_ZSTD, "x", 1), -EINVAL);
	assert_int_equal(capture_writer__block(w, 77, body, big + 1), -EFBIG);
	assert_int_equal(capture_writer__block(w, 77, body, big), 0);
	assert_int_equal(capture_writer__close(w), 0);
	zbuf = slurp(zp, &zlen);
	n = outer_types(zbuf, zlen, types, 8);
	assert_int_equal(n, 3);
	assert_int_equal(types[1], GT_BLK_ZSTD);
	assert_int_equal(types[2], GT_BLK_ZSTD);
	c = capture__open(zp, err, sizeof(err));
	assert_non_null(c);
	assert_int_equal(capture__next(c, &b), 1);
	assert_int_equal(b.type, GT_BLK_COUNTERS);
	assert_int_equal(capture__next(c, &b), 1);
	assert_int_equal(b.type, GT_BLK_COUNTERS);
	assert_int_equal(capture__next(c, &b), 1);
	assert_int_equal(b.type, 77);
	assert_int_equal(b.len, big);
	assert_int_equal(capture__next(c, &b), 0);
	assert_int_equal(capture__nwarnings(c), 0);
	capture__close(c);
	free(body);
	free(zbuf);
	unlink(zp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_zstd_roundtrip),	 cmocka_unit_test(test_zstd_only),
	    cmocka_unit_test(test_zstd_truncated),	 cmocka_unit_test(test_zstd_bomb),
	    cmocka_unit_test(test_zstd_inner_malformed), cmocka_unit_test(test_zstd_old_captures),
	    cmocka_unit_test(test_zstd_big_block),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
