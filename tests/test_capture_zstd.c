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
#include <sched.h>
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

#define LONG_BATCHES 40 /* enough for the read-ahead thread to do most of them */
#define LONG_PER     64

/* LONG_BATCHES flushes of LONG_PER records numbered 0, 1, 2... in ts_ns, then END. */
static void write_numbered(const char *path)
{
	const char *kv[] = {"pid=7", "comm=zt"};
	struct capture_buf end = {};
	struct capture_writer *w;
	char err[256];
	uint64_t seq = 0;

	unlink(path);
	w = capture_writer__open(path, kv, 2, err, sizeof(err));
	assert_non_null(w);
	assert_int_equal(capture_writer__compress(w, 1), 0);
	for (int f = 0; f < LONG_BATCHES; f++) {
		for (int i = 0; i < LONG_PER; i++) {
			struct gt_offcpu o = {.pid = 7, .tid = 8};

			o.hdr.type = GT_REC_OFFCPU;
			o.hdr.size = sizeof(o);
			o.hdr.ts_ns = seq++;
			o.off_ns = o.hdr.ts_ns;
			o.on_ns = o.hdr.ts_ns + 1;
			assert_int_equal(capture_writer__event(w, &o, sizeof(o)), 0);
		}
		assert_int_equal(capture_writer__flush(w), 0);
	}
	capture_buf__kv(&end, "end_mono_ns", "%d", 42);
	assert_int_equal(capture_writer__block(w, GT_BLK_END, end.data, end.len), 0);
	capture_buf__free(&end);
	assert_int_equal(capture_writer__close(w), 0);
}

struct numbered {
	uint64_t next; /* the number the next record must carry */
	bool bad;
};

static int numbered_cb(const void *rec, size_t size, void *ctx)
{
	const struct gt_hdr *h = rec;
	struct numbered *n = ctx;

	n->bad |= h->ts_ns != n->next;
	n->next = h->ts_ns + 1;
	return 0;
}

/*
 * One whole pass: the records must come in file order, each once, and END
 * last (a batch delivered out of order or lost, the last one included, fails).
 * Returns how many records came.
 */
static uint64_t read_numbered(struct capture *c)
{
	struct numbered n = {};
	struct capture_block b;
	bool end = false;
	uint64_t count = 0;

	while (capture__next(c, &b) == 1) {
		assert_false(end);
		if (b.type == GT_BLK_END) {
			end = true;
			continue;
		}
		assert_int_equal(b.type, GT_BLK_EVENTS);
		assert_int_equal(capture__events(b.body, b.len, numbered_cb, &n), 0);
		count += b.len / sizeof(struct gt_offcpu);
		assert_false(n.bad);
	}
	assert_true(end);
	return count;
}

static bool two_cpus(void)
{
	cpu_set_t cpus;

	return sched_getaffinity(0, sizeof(cpus), &cpus) || CPU_COUNT(&cpus) >= 2;
}

/*
 * Read as the analysis reads (a PROBES pass, then two whole passes), with the
 * helper thread or without, every pass gives every record in order; with it,
 * each pass after a rewind has every batch decompressed ahead, the first too.
 */
static void test_zstd_read_ahead_order(void **state)
{
	const char *zp = "/tmp/gt_zt_ahead.gtcap";
	const uint64_t all = (uint64_t)LONG_BATCHES * LONG_PER;
	struct capture_block b;
	unsigned n0, a0, n1, a1;
	size_t zlen;
	uint8_t *zbuf;
	char err[256];

	write_numbered(zp);
	zbuf = slurp(zp, &zlen);
	for (int mode = 0; mode < 4; mode++) {
		bool ahead = mode & 1;
		struct capture *c = mode & 2
					? capture__open_mem(zbuf, zlen, "mem", err, sizeof(err))
					: capture__open(zp, err, sizeof(err));

		assert_non_null(c);
		capture__read_ahead(c, ahead);
		capture__only(c, 1U << GT_BLK_PROBES);
		while (capture__next(c, &b) == 1)
			fail_msg("no batch holds PROBES, yet block type %u came", b.type);
		capture__rewind(c);
		assert_int_equal(read_numbered(c), all);
		n0 = capture__zstd_blocks(c, &a0);
		capture__rewind(c);
		assert_int_equal(read_numbered(c), all);
		n1 = capture__zstd_blocks(c, &a1);
		/* The END block has a batch of its own. */
		assert_int_equal(n1 - n0, LONG_BATCHES + 1);
		assert_int_equal(capture__nwarnings(c), 0);
		if (ahead && two_cpus()) {
			assert_true(a0 >= LONG_BATCHES - 1);
			assert_int_equal(a1 - a0, LONG_BATCHES + 1);
		} else {
			assert_int_equal(a1, 0);
		}
		capture__close(c);
	}
	free(zbuf);
	unlink(zp);
}

/* On one CPU no helper thread starts: it would only add switches to the same work. */
static void test_zstd_read_ahead_one_cpu(void **state)
{
	const char *zp = "/tmp/gt_zt_1cpu.gtcap";
	cpu_set_t saved, one;
	struct capture *c;
	unsigned ahead;
	char err[256];

	write_numbered(zp);
	assert_int_equal(sched_getaffinity(0, sizeof(saved), &saved), 0);
	CPU_ZERO(&one);
	for (int i = 0; i < CPU_SETSIZE; i++) {
		if (CPU_ISSET(i, &saved)) {
			CPU_SET(i, &one);
			break;
		}
	}
	assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
	c = capture__open(zp, err, sizeof(err));
	assert_non_null(c);
	assert_int_equal(read_numbered(c), (uint64_t)LONG_BATCHES * LONG_PER);
	assert_int_equal(capture__zstd_blocks(c, &ahead), LONG_BATCHES + 1);
	assert_int_equal(ahead, 0);
	capture__close(c);
	assert_int_equal(sched_setaffinity(0, sizeof(saved), &saved), 0);
	unlink(zp);
}

/* Every block and warning of a pass, as one comparable string list. */
static void pass_log(struct capture *c, char ***log, size_t *n)
{
	struct capture_block b;

	*n = 0;
	*log = NULL;
	while (capture__next(c, &b) == 1) {
		*log = realloc(*log, (*n + 1) * sizeof(**log));
		(*log)[(*n)++] = gt_xasprintf("%u %u %u %08x", b.index, b.type, b.len,
					      (unsigned)crc32(0, b.body, b.len));
	}
	for (size_t i = 0; i < capture__nwarnings(c); i++) {
		*log = realloc(*log, (*n + 1) * sizeof(**log));
		(*log)[(*n)++] = gt_xasprintf("%s", capture__warning(c, i));
	}
}

/*
 * A batch failing its CRC late in the file, or the file cut inside a late
 * batch: with the helper thread the reader keeps and says exactly what it does
 * without, on both passes.
 */
static void test_zstd_read_ahead_damage(void **state)
{
	const char *zp = "/tmp/gt_zt_ahead_bad.gtcap";
	size_t zlen, off = 0, ends[LONG_BATCHES + 2], n = 0;
	uint8_t *zbuf;

	write_numbered(zp);
	zbuf = slurp(zp, &zlen);
	while (off < zlen && n < GT_ARRAY_SIZE(ends)) {
		uint32_t total;

		memcpy(&total, zbuf + off + 4, 4);
		off += total;
		ends[n++] = off;
	}
	assert_int_equal(n, LONG_BATCHES + 2);
	for (int damage = 0; damage < 2; damage++) {
		/* Batch 30 (block 31): a flipped byte of its frame, or the file cut in it. */
		size_t len = damage ? ends[30] + 40 : zlen;
		char **log[2][2];
		size_t nlog[2][2];

		if (!damage)
			zbuf[ends[30] + 40] ^= 0x55;
		for (int ahead = 0; ahead < 2; ahead++) {
			char err[256];
			struct capture *c = capture__open_mem(zbuf, len, "bad", err, sizeof(err));

			assert_non_null(c);
			capture__read_ahead(c, ahead);
			for (int pass = 0; pass < 2; pass++) {
				if (pass)
					capture__rewind(c);
				pass_log(c, &log[ahead][pass], &nlog[ahead][pass]);
			}
			if (damage)
				assert_true(capture__truncated(c));
			else
				assert_int_equal(capture__crc_errors(c), 1);
			capture__close(c);
		}
		for (int pass = 0; pass < 2; pass++) {
			/* The batches before, then (CRC) the ones after, then one warning. */
			assert_int_equal(nlog[0][pass], damage ? 30 + 1 : LONG_BATCHES - 1 + 1 + 1);
			assert_int_equal(nlog[1][pass], nlog[0][pass]);
			for (size_t i = 0; i < nlog[0][pass]; i++) {
				assert_string_equal(log[1][pass][i], log[0][pass][i]);
				free(log[0][pass][i]);
				free(log[1][pass][i]);
			}
			free(log[0][pass]);
			free(log[1][pass]);
		}
		if (!damage)
			zbuf[ends[30] + 40] ^= 0x55;
	}
	free(zbuf);
	unlink(zp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_zstd_roundtrip),
	    cmocka_unit_test(test_zstd_only),
	    cmocka_unit_test(test_zstd_truncated),
	    cmocka_unit_test(test_zstd_bomb),
	    cmocka_unit_test(test_zstd_inner_malformed),
	    cmocka_unit_test(test_zstd_old_captures),
	    cmocka_unit_test(test_zstd_big_block),
	    cmocka_unit_test(test_zstd_read_ahead_order),
	    cmocka_unit_test(test_zstd_read_ahead_one_cpu),
	    cmocka_unit_test(test_zstd_read_ahead_damage),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
