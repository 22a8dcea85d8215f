// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_capture.c: cmocka tests of the capture writer, reader and body parsers,
 * including truncated, damaged and foreign files with their exact messages.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "capture/capture.h"
#include "gaptrace/gaptrace.h"
#include "gaptrace/gaptrace_cfi.h"
#include "support/util.h"

#define MEM	   "mem.gtcap"
#define MAX_BLOCKS 300

struct fx {
	char dir[64];
};

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	strcpy(f->dir, "/tmp/gaptrace-test-XXXXXX");
	if (!mkdtemp(f->dir)) {
		free(f);
		return -1;
	}
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	struct dirent *de;
	char path[PATH_MAX];
	DIR *d = opendir(f->dir);

	/* The tests only create plain files and empty directories directly in it. */
	while (d && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", f->dir, de->d_name);
		if (unlink(path))
			rmdir(path);
	}
	if (d)
		closedir(d);
	rmdir(f->dir);
	free(f);
	return 0;
}

static const char *fx_path(void **state, const char *name)
{
	static char path[8][PATH_MAX];
	static unsigned next;
	struct fx *f = *state;
	char *p = path[next++ % 8];

	snprintf(p, PATH_MAX, "%s/%s", f->dir, name);
	return p;
}

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

static void spit(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	close(fd);
}

static void put32(uint8_t *p, uint32_t v, bool swap)
{
	if (swap)
		v = __builtin_bswap32(v);
	memcpy(p, &v, 4);
}

static void put16(uint8_t *p, uint16_t v, bool swap)
{
	if (swap)
		v = __builtin_bswap16(v);
	memcpy(p, &v, 2);
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/* Lays out one block by hand, independently of the writer; returns its total length. */
static size_t hand_block(uint8_t *out, uint32_t type, const void *body, uint32_t len, bool swap)
{
	uint32_t total = 16 + ((len + 7) & ~7U) + 8;

	memset(out, 0, total);
	put32(out, type, swap);
	put32(out + 4, total, swap);
	put32(out + 8, len, swap);
	if (len)
		memcpy(out + 16, body, len);
	put32(out + total - 8, (uint32_t)crc32(0, out, total - 8), swap);
	put32(out + total - 4, total, swap);
	return total;
}

static size_t hand_header(uint8_t *out, uint16_t major, uint16_t minor, const char *kv,
			  size_t kvlen, bool swap)
{
	uint8_t body[256];

	put32(body, GT_CAP_BOM, swap);
	put16(body + 4, major, swap);
	put16(body + 6, minor, swap);
	memcpy(body + 8, kv, kvlen);
	return hand_block(out, GT_BLK_HEADER, body, (uint32_t)(8 + kvlen), swap);
}

/* Recomputes the CRC of the block at off after a test edited it on purpose. */
static void fix_crc(uint8_t *buf, size_t off)
{
	uint32_t total = get32(buf + off + 4), crc = (uint32_t)crc32(0, buf + off, total - 8);

	memcpy(buf + off + total - 8, &crc, 4);
}

/* ---- the sample capture: every block kind, records of every type ---- */

struct rec {
	uint8_t bytes[512];
	size_t size;
};

static struct rec recs[9];

static void *rec_init(struct rec *r, uint16_t type, size_t size, uint64_t ts)
{
	struct gt_hdr h = {.type = type, .size = (uint16_t)size, .cpu = 3, .ts_ns = ts};

	memset(r->bytes, 0, sizeof(r->bytes));
	/* Filler so a misplaced byte shows up in the comparison. */
	for (size_t i = 0; i < size; i++)
		r->bytes[i] = (uint8_t)(i * 7 + type);
	memcpy(r->bytes, &h, sizeof(h));
	r->size = size;
	return r->bytes;
}

static void make_records(void)
{
	struct gt_name *nm;

	rec_init(&recs[0], GT_REC_OFFCPU, sizeof(struct gt_offcpu), 100);
	rec_init(&recs[1], GT_REC_SAMPLE, sizeof(struct gt_sample), 200);
	nm = rec_init(&recs[2], GT_REC_NAME, offsetof(struct gt_name, name) + 11, 300);
	memcpy(nm->name, "kernel_fft", 11);
	rec_init(&recs[3], GT_REC_CALL, sizeof(struct gt_call), 400);
	rec_init(&recs[4], GT_REC_UNIT, sizeof(struct gt_unit), 500);
	rec_init(&recs[5], GT_REC_GPU_OP, sizeof(struct gt_gpu_op), 600);
	rec_init(&recs[6], GT_REC_TASK, sizeof(struct gt_task), 700);
	rec_init(&recs[7], GT_REC_LOSS, sizeof(struct gt_loss), 800);
	/* A bare header: the smallest legal record, of a type this reader does not know. */
	rec_init(&recs[8], 99, sizeof(struct gt_hdr), 900);
}

static const uint64_t stack_ips[] = {0x401000, 0x401234, 0x7f0000001000};
static const uint64_t kstack_ips[] = {0xffffffff81000000ULL};
/* Exactly 20 bytes: the string's NUL is not part of the array. */
static const uint8_t build_id[20] = "0123456789abcdefghij";
static const char *const sample_kv[] = {"host=test-host", "kernel=6.18.0", "cmdline=prover --x",
					"empty=", "eq=a=b"};

#define BLK_UNKNOWN 0x77

struct layout {
	size_t n;	  /* blocks, HEADER included */
	uint64_t end[16]; /* offset just past each block */
	uint32_t type[16];
	size_t first_rec[16]; /* EVENTS blocks: recs[first_rec..first_rec+nrec) */
	size_t nrec[16];
};

static void note(struct layout *lo, struct capture_writer *w, uint32_t type)
{
	lo->type[lo->n] = type;
	lo->end[lo->n++] = capture_writer__bytes(w);
}

static void put_events(struct capture_writer *w, struct layout *lo, size_t from, size_t n)
{
	for (size_t i = from; i < from + n; i++)
		assert_int_equal(capture_writer__event(w, recs[i].bytes, recs[i].size), 0);
	assert_int_equal(capture_writer__flush(w), 0);
	lo->first_rec[lo->n] = from;
	lo->nrec[lo->n] = n;
	note(lo, w, GT_BLK_EVENTS);
}

static void put_body(struct capture_writer *w, struct layout *lo, uint32_t type,
		     struct capture_buf *b)
{
	assert_int_equal(capture_writer__block(w, type, b->data, b->len), 0);
	capture_buf__reset(b);
	note(lo, w, type);
}

static void write_sample(const char *path, struct layout *lo)
{
	struct capture_buf b = {};
	struct capture_writer *w;
	char err[256] = "";

	make_records();
	memset(lo, 0, sizeof(*lo));
	w = capture_writer__open(path, sample_kv, 5, err, sizeof(err));
	assert_non_null(w);
	assert_string_equal(err, "");
	/* This sample pins the EVENTS layout: its GPU_OP record stays an EVENTS record. */
	assert_int_equal(capture_writer__compact_gpu(w, false), 0);
	note(lo, w, GT_BLK_HEADER);
	put_events(w, lo, 0, 3);
	put_events(w, lo, 3, 3);

	capture_buf__stack(&b, 7, 1234, false, stack_ips, 3);
	capture_buf__stack(&b, 8, 0, true, kstack_ips, 1);
	capture_buf__stack(&b, 9, 1234, false, NULL, 0);
	put_body(w, lo, GT_BLK_STACKS, &b);

	capture_buf__symbol(&b, 0x401234, 1234, 0x34, "main", "/usr/bin/prover");
	capture_buf__symbol(&b, 0x7f0000001000, 1234, 0, NULL, "/lib/libc.so.6");
	capture_buf__symbol(&b, 0xffffffff81000000ULL, 0, 0x10, "schedule", "[kernel]");
	put_body(w, lo, GT_BLK_SYMBOLS, &b);

	capture_buf__mapping(&b, 1234, 0x400000, 0x500000, 0x1000, build_id, 20, "/usr/bin/prover");
	capture_buf__mapping(&b, 1234, 0x7f0000000000, 0x7f0000200000, 0, NULL, 0,
			     "/lib/libc.so.6");
	put_body(w, lo, GT_BLK_MAPPINGS, &b);

	capture_buf__probe(&b, 0, "malloc_trim", "/lib/libc.so.6", "allocator");
	capture_buf__probe(&b, 1, "cuMemHostAlloc", "/usr/lib/libcuda.so.1", "cuda");
	put_body(w, lo, GT_BLK_PROBES, &b);

	/* A block kind from a later minor version: readers must skip it. */
	capture_buf__kv(&b, "future", "%s", "something");
	put_body(w, lo, BLK_UNKNOWN, &b);

	put_events(w, lo, 6, 3);

	capture_buf__kv(&b, "lost.ringbuf", "%d", 3);
	capture_buf__kv(&b, "lost.gpu", "%d", 0);
	capture_buf__kv(&b, "lost.ringbuf", "%d", 5);
	put_body(w, lo, GT_BLK_COUNTERS, &b);

	capture_buf__kv(&b, "reason", "%s", "duration");
	put_body(w, lo, GT_BLK_END, &b);

	assert_int_equal(capture_writer__events(w), 9);
	assert_int_equal(capture_writer__close(w), 0);
	capture_buf__free(&b);
}

struct seen {
	size_t n;
	uint32_t index[MAX_BLOCKS];
	uint32_t type[MAX_BLOCKS];
	uint32_t len[MAX_BLOCKS];
	uint64_t offset[MAX_BLOCKS];
};

static void read_all(struct capture *c, struct seen *s)
{
	struct capture_block blk;

	memset(s, 0, sizeof(*s));
	while (capture__next(c, &blk) == 1) {
		assert_true(s->n < MAX_BLOCKS);
		s->index[s->n] = blk.index;
		s->type[s->n] = blk.type;
		s->len[s->n] = blk.len;
		s->offset[s->n++] = blk.offset;
	}
	/* At the end (or after damage) it stays at the end. */
	assert_int_equal(capture__next(c, &blk), 0);
}

/* Exactly the sample's blocks that end by cut, in order. */
static void assert_kept(const struct seen *s, const struct layout *lo, uint64_t cut)
{
	size_t m = 0;

	for (size_t i = 1; i < lo->n; i++) {
		if (lo->end[i] <= cut)
			m = i;
	}
	assert_int_equal(s->n, m);
	for (size_t j = 0; j < s->n; j++) {
		assert_int_equal(s->index[j], j + 1);
		assert_int_equal(s->offset[j], lo->end[j]);
		assert_int_equal(s->type[j], lo->type[j + 1]);
	}
}

struct ev_ctx {
	size_t next, end;
};

static int check_event(const void *rec, size_t size, void *ctx)
{
	struct ev_ctx *e = ctx;

	assert_true(e->next < e->end);
	assert_int_equal(size, recs[e->next].size);
	assert_memory_equal(rec, recs[e->next].bytes, size);
	e->next++;
	return 0;
}

struct kvs {
	size_t n;
	char key[8][64];
	char val[8][64];
};

static int collect_kv(const char *key, const char *value, void *ctx)
{
	struct kvs *k = ctx;

	assert_true(k->n < 8);
	snprintf(k->key[k->n], 64, "%s", key);
	snprintf(k->val[k->n++], 64, "%s", value);
	return 0;
}

struct stacks {
	size_t n;
	struct capture_stack s[4];
	uint64_t ips[4][4];
};

static int collect_stack(const struct capture_stack *st, void *ctx)
{
	struct stacks *k = ctx;

	assert_true(k->n < 4 && st->nr <= 4);
	/* ips must be usable as an array: the callers index it directly. */
	assert_int_equal((uintptr_t)st->ips & 7, 0);
	k->s[k->n] = *st;
	for (uint16_t i = 0; i < st->nr; i++)
		k->ips[k->n][i] = st->ips[i];
	k->n++;
	return 0;
}

struct strs {
	size_t n;
	struct capture_symbol sym[4];
	struct capture_mapping map[4];
	struct capture_probe pr[4];
	char a[4][64], b[4][64], c[4][64];
};

static void copy_str(char *dst, const char *s, uint16_t len)
{
	assert_true(len < 64);
	memcpy(dst, s, len);
	dst[len] = '\0';
}

static int collect_symbol(const struct capture_symbol *sym, void *ctx)
{
	struct strs *k = ctx;

	assert_true(k->n < 4);
	k->sym[k->n] = *sym;
	copy_str(k->a[k->n], sym->name, sym->name_len);
	copy_str(k->b[k->n++], sym->module, sym->module_len);
	return 0;
}

static int collect_mapping(const struct capture_mapping *m, void *ctx)
{
	struct strs *k = ctx;

	assert_true(k->n < 4);
	k->map[k->n] = *m;
	copy_str(k->a[k->n++], m->path, m->path_len);
	return 0;
}

static int collect_probe(const struct capture_probe *p, void *ctx)
{
	struct strs *k = ctx;

	assert_true(k->n < 4);
	k->pr[k->n] = *p;
	copy_str(k->a[k->n], p->name, p->name_len);
	copy_str(k->b[k->n], p->module, p->module_len);
	copy_str(k->c[k->n++], p->category, p->category_len);
	return 0;
}

static void check_body(const struct capture_block *blk, const struct layout *lo)
{
	struct ev_ctx e;
	struct kvs kv = {};
	struct stacks st = {};
	struct strs ss = {};

	switch (blk->type) {
	case GT_BLK_EVENTS:
		e.next = lo->first_rec[blk->index];
		e.end = e.next + lo->nrec[blk->index];
		assert_int_equal(capture__events(blk->body, blk->len, check_event, &e), 0);
		assert_int_equal(e.next, e.end);
		break;
	case GT_BLK_STACKS:
		assert_int_equal(capture__stacks(blk->body, blk->len, collect_stack, &st), 0);
		assert_int_equal(st.n, 3);
		assert_int_equal(st.s[0].stack_id, 7);
		assert_int_equal(st.s[0].pid, 1234);
		assert_false(st.s[0].kernel);
		assert_int_equal(st.s[0].nr, 3);
		assert_memory_equal(st.ips[0], stack_ips, sizeof(stack_ips));
		assert_int_equal(st.s[1].stack_id, 8);
		assert_int_equal(st.s[1].pid, 0);
		assert_true(st.s[1].kernel);
		assert_int_equal(st.s[1].nr, 1);
		assert_int_equal(st.ips[1][0], kstack_ips[0]);
		assert_int_equal(st.s[2].stack_id, 9);
		assert_int_equal(st.s[2].nr, 0);
		break;
	case GT_BLK_SYMBOLS:
		assert_int_equal(capture__symbols(blk->body, blk->len, collect_symbol, &ss), 0);
		assert_int_equal(ss.n, 3);
		assert_int_equal(ss.sym[0].ip, 0x401234);
		assert_int_equal(ss.sym[0].pid, 1234);
		assert_int_equal(ss.sym[0].sym_off, 0x34);
		assert_string_equal(ss.a[0], "main");
		assert_string_equal(ss.b[0], "/usr/bin/prover");
		assert_int_equal(ss.sym[1].name_len, 0);
		assert_string_equal(ss.b[1], "/lib/libc.so.6");
		assert_int_equal(ss.sym[2].ip, 0xffffffff81000000ULL);
		assert_int_equal(ss.sym[2].pid, 0);
		assert_int_equal(ss.sym[2].sym_off, 0x10);
		assert_string_equal(ss.a[2], "schedule");
		assert_string_equal(ss.b[2], "[kernel]");
		break;
	case GT_BLK_MAPPINGS:
		assert_int_equal(capture__mappings(blk->body, blk->len, collect_mapping, &ss), 0);
		assert_int_equal(ss.n, 2);
		assert_int_equal(ss.map[0].pid, 1234);
		assert_int_equal(ss.map[0].start, 0x400000);
		assert_int_equal(ss.map[0].end, 0x500000);
		assert_int_equal(ss.map[0].pgoff, 0x1000);
		assert_int_equal(ss.map[0].build_id_len, 20);
		assert_memory_equal(ss.map[0].build_id, build_id, 20);
		assert_string_equal(ss.a[0], "/usr/bin/prover");
		assert_int_equal(ss.map[1].start, 0x7f0000000000);
		assert_int_equal(ss.map[1].end, 0x7f0000200000);
		assert_int_equal(ss.map[1].build_id_len, 0);
		assert_string_equal(ss.a[1], "/lib/libc.so.6");
		break;
	case GT_BLK_PROBES:
		assert_int_equal(capture__probes(blk->body, blk->len, collect_probe, &ss), 0);
		assert_int_equal(ss.n, 2);
		assert_int_equal(ss.pr[0].func_id, 0);
		assert_string_equal(ss.a[0], "malloc_trim");
		assert_string_equal(ss.b[0], "/lib/libc.so.6");
		assert_string_equal(ss.c[0], "allocator");
		assert_int_equal(ss.pr[1].func_id, 1);
		assert_string_equal(ss.a[1], "cuMemHostAlloc");
		assert_string_equal(ss.b[1], "/usr/lib/libcuda.so.1");
		assert_string_equal(ss.c[1], "cuda");
		break;
	case GT_BLK_COUNTERS:
		assert_int_equal(capture__kv(blk->body, blk->len, collect_kv, &kv), 0);
		assert_int_equal(kv.n, 3);
		assert_string_equal(kv.key[0], "lost.ringbuf");
		assert_string_equal(kv.val[0], "3");
		assert_string_equal(kv.key[1], "lost.gpu");
		assert_string_equal(kv.val[1], "0");
		assert_string_equal(kv.key[2], "lost.ringbuf");
		assert_string_equal(kv.val[2], "5");
		break;
	case GT_BLK_END:
		assert_int_equal(capture__kv(blk->body, blk->len, collect_kv, &kv), 0);
		assert_int_equal(kv.n, 1);
		assert_string_equal(kv.key[0], "reason");
		assert_string_equal(kv.val[0], "duration");
		break;
	default:
		assert_int_equal(blk->type, BLK_UNKNOWN);
		break;
	}
}

/* Reads the whole sample, checking every body; returns the number of blocks after HEADER. */
static size_t check_sample(struct capture *c, const struct layout *lo)
{
	struct capture_block blk;
	size_t n = 0;

	while (capture__next(c, &blk) == 1) {
		n++;
		assert_true(n < lo->n);
		assert_int_equal(blk.index, n);
		assert_int_equal(blk.offset, lo->end[n - 1]);
		assert_int_equal(blk.type, lo->type[n]);
		assert_int_equal(blk.offset + 24 + ((blk.len + 7) & ~7U), lo->end[n]);
		check_body(&blk, lo);
		if (!strcmp(capture__block_name(blk.type), "unknown"))
			capture__note_unknown(c, blk.type);
	}
	return n;
}

/* ---- writer ---- */

static void test_writer_roundtrip(void **state)
{
	const char *path = fx_path(state, "rt.gtcap");
	struct capture *c;
	struct layout lo;
	unsigned major, minor;
	char err[256] = "";
	size_t len;
	uint8_t *buf;

	write_sample(path, &lo);
	c = capture__open(path, err, sizeof(err));
	assert_non_null(c);
	assert_string_equal(err, "");
	capture__version(c, &major, &minor);
	assert_int_equal(major, GT_CAP_MAJOR);
	assert_int_equal(minor, GT_CAP_MINOR);
	assert_string_equal(capture__header(c, "host"), "test-host");
	assert_string_equal(capture__header(c, "kernel"), "6.18.0");
	assert_string_equal(capture__header(c, "cmdline"), "prover --x");
	assert_string_equal(capture__header(c, "empty"), "");
	assert_string_equal(capture__header(c, "eq"), "a=b");
	assert_null(capture__header(c, "missing"));
	assert_string_equal(capture__path(c), path);
	assert_int_equal(capture__size(c), lo.end[lo.n - 1]);

	assert_int_equal(check_sample(c, &lo), lo.n - 1);
	assert_int_equal(capture__nwarnings(c), 0);
	assert_null(capture__warning(c, 0));
	assert_false(capture__truncated(c));
	assert_int_equal(capture__crc_errors(c), 0);
	assert_int_equal(capture__unknown_blocks(c), 1);
	capture__close(c);

	/* The memory reader sees the same file. */
	buf = slurp(path, &len);
	c = capture__open_mem(buf, len, MEM, err, sizeof(err));
	assert_non_null(c);
	assert_int_equal(check_sample(c, &lo), lo.n - 1);
	assert_int_equal(capture__nwarnings(c), 0);
	assert_string_equal(capture__path(c), MEM);
	capture__close(c);
	free(buf);
}

/* The writer's bytes are exactly the layout capture.h describes. */
static void test_writer_layout(void **state)
{
	const char *path = fx_path(state, "layout.gtcap");
	const char *kv[] = {"host=a"};
	uint8_t want[256];
	struct capture_writer *w;
	struct rec rec;
	char err[256];
	size_t len, off;
	uint8_t *buf;

	w = capture_writer__open(path, kv, 1, err, sizeof(err));
	assert_non_null(w);
	rec_init(&rec, 5, 16, 42);
	assert_int_equal(capture_writer__event(w, rec.bytes, 16), 0);
	assert_int_equal(capture_writer__block(w, GT_BLK_END, "r=1", 4), 0);
	assert_int_equal(capture_writer__close(w), 0);

	off = hand_header(want, 1, GT_CAP_MINOR, "host=a", 7, false);
	assert_int_equal(off, 40);
	off += hand_block(want + off, GT_BLK_EVENTS, rec.bytes, 16, false);
	off += hand_block(want + off, GT_BLK_END, "r=1", 4, false);
	buf = slurp(path, &len);
	assert_int_equal(len, off);
	assert_memory_equal(buf, want, off);
	free(buf);
}

static void test_writer_mode_0600(void **state)
{
	const char *path = fx_path(state, "mode.gtcap");
	struct capture_writer *w;
	mode_t old = umask(0);
	struct stat st;
	char err[256];

	w = capture_writer__open(path, NULL, 0, err, sizeof(err));
	umask(old);
	assert_non_null(w);
	assert_int_equal(capture_writer__close(w), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);

	/* A file that already exists with loose permissions is replaced, not reused. */
	unlink(path);
	spit(path, "x", 1);
	chmod(path, 0666);
	w = capture_writer__open(path, NULL, 0, err, sizeof(err));
	assert_non_null(w);
	assert_int_equal(capture_writer__close(w), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
}

static void test_writer_renames_old(void **state)
{
	const char *path = fx_path(state, "old.gtcap");
	const char *old = fx_path(state, "old.gtcap.old");
	const char *kv1[] = {"run=1"}, *kv2[] = {"run=2"}, *kv3[] = {"run=3"};
	struct capture_writer *w;
	struct capture *c;
	char err[256];

	w = capture_writer__open(path, kv1, 1, err, sizeof(err));
	assert_int_equal(capture_writer__close(w), 0);
	assert_int_equal(access(old, F_OK), -1);
	w = capture_writer__open(path, kv2, 1, err, sizeof(err));
	assert_int_equal(capture_writer__close(w), 0);

	c = capture__open(old, err, sizeof(err));
	assert_non_null(c);
	assert_string_equal(capture__header(c, "run"), "1");
	capture__close(c);
	c = capture__open(path, err, sizeof(err));
	assert_non_null(c);
	assert_string_equal(capture__header(c, "run"), "2");
	capture__close(c);

	/* Only one generation is kept. */
	w = capture_writer__open(path, kv3, 1, err, sizeof(err));
	assert_int_equal(capture_writer__close(w), 0);
	c = capture__open(old, err, sizeof(err));
	assert_string_equal(capture__header(c, "run"), "2");
	capture__close(c);
}

static void test_writer_rename_error(void **state)
{
	const char *path = fx_path(state, "busy.gtcap");
	const char *old = fx_path(state, "busy.gtcap.old");
	char err[256], want[2 * PATH_MAX + 128];
	size_t len;
	uint8_t *buf;

	/* A directory in the way of path.old: the existing capture is left as it was. */
	spit(path, "keep", 4);
	assert_int_equal(mkdir(old, 0700), 0);
	assert_null(capture_writer__open(path, NULL, 0, err, sizeof(err)));
	snprintf(want, sizeof(want), "cannot rename %s to %s: Is a directory", path, old);
	assert_string_equal(err, want);
	buf = slurp(path, &len);
	assert_int_equal(len, 4);
	assert_memory_equal(buf, "keep", 4);
	free(buf);
}

static void test_writer_open_errors(void **state)
{
	const char *path = fx_path(state, "no/such/dir.gtcap");
	const char *ok = fx_path(state, "e.gtcap");
	const char *bad[] = {"a=1", "novalue"}, *nokey[] = {"=1"};
	char err[256], want[PATH_MAX + 128];
	static char big[3000];
	const char *many[400];

	assert_null(capture_writer__open(path, NULL, 0, err, sizeof(err)));
	snprintf(want, sizeof(want), "cannot create %s: No such file or directory", path);
	assert_string_equal(err, want);

	assert_null(capture_writer__open(ok, bad, 2, err, sizeof(err)));
	snprintf(want, sizeof(want), "%s: header entry 1 is not key=value", ok);
	assert_string_equal(err, want);
	assert_null(capture_writer__open(ok, nokey, 1, err, sizeof(err)));
	snprintf(want, sizeof(want), "%s: header entry 0 is not key=value", ok);
	assert_string_equal(err, want);

	memset(big, 'v', sizeof(big) - 1);
	memcpy(big, "k=", 2);
	for (size_t i = 0; i < 400; i++)
		many[i] = big;
	assert_null(capture_writer__open(ok, many, 400, err, sizeof(err)));
	snprintf(want, sizeof(want), "%s: header is over the 1048576-byte limit", ok);
	assert_string_equal(err, want);

	/* A NULL or short error buffer is allowed. */
	assert_null(capture_writer__open(path, NULL, 0, NULL, 0));
	assert_null(capture_writer__open(path, NULL, 0, err, 4));
	assert_string_equal(err, "can");
}

static void test_writer_event_invalid(void **state)
{
	struct capture_writer *w;
	uint8_t rec[GT_CAP_MAX_RECORD + 8] = {};
	struct gt_hdr *h = (struct gt_hdr *)rec;
	char err[256];
	int fd = open(fx_path(state, "inv.gtcap"), O_RDWR | O_CREAT, 0600);

	w = capture_writer__open_fd(fd, NULL, 0, err, sizeof(err));
	assert_non_null(w);
	h->size = 8;
	assert_int_equal(capture_writer__event(w, rec, 8), -EINVAL);
	h->size = 32;
	assert_int_equal(capture_writer__event(w, rec, 24), -EINVAL);
	h->size = GT_CAP_MAX_RECORD + 8;
	assert_int_equal(capture_writer__event(w, rec, GT_CAP_MAX_RECORD + 8), -EINVAL);
	h->size = GT_CAP_MAX_RECORD;
	assert_int_equal(capture_writer__event(w, rec, GT_CAP_MAX_RECORD), 0);
	assert_int_equal(capture_writer__events(w), 1);

	/* Over the block cap (the body is never read), and a second HEADER. */
	assert_int_equal(capture_writer__block(w, GT_BLK_SYMBOLS, rec, GT_CAP_MAX_BLOCK), -EFBIG);
	assert_int_equal(capture_writer__block(w, GT_BLK_HEADER, rec, 8), -EINVAL);
	assert_int_equal(capture_writer__block(w, GT_BLK_END, NULL, 0), 0);
	assert_int_equal(capture_writer__close(w), 0);
	/* open_fd leaves the descriptor to its owner. */
	assert_int_equal(fcntl(fd, F_GETFD), 0);
	close(fd);
}

struct count_ctx {
	size_t n;
	uint64_t next_ts;
};

static int count_event(const void *rec, size_t size, void *ctx)
{
	struct count_ctx *k = ctx;
	struct gt_hdr h;

	memcpy(&h, rec, sizeof(h));
	assert_int_equal(h.size, size);
	assert_int_equal(h.ts_ns, k->next_ts);
	k->next_ts++;
	k->n++;
	return 0;
}

static void test_writer_autoflush(void **state)
{
	const char *path = fx_path(state, "flush.gtcap");
	struct capture_writer *w;
	struct capture_block blk;
	struct count_ctx k = {};
	struct capture *c;
	uint8_t rec[100] = {};
	struct gt_hdr h = {.type = GT_REC_SAMPLE, .size = sizeof(rec)};
	size_t blocks = 0, n = 3 * GT_CAP_EVENTS_FLUSH / sizeof(rec);
	char err[256];

	w = capture_writer__open(path, NULL, 0, err, sizeof(err));
	assert_non_null(w);
	for (size_t i = 0; i < n; i++) {
		h.ts_ns = i;
		memcpy(rec, &h, sizeof(h));
		assert_int_equal(capture_writer__event(w, rec, sizeof(rec)), 0);
	}
	/* Two full buffers went out on their own, the rest waits for a flush. */
	assert_int_equal(capture_writer__bytes(w), 32 + 2 * (24 + GT_CAP_EVENTS_FLUSH + 24));
	assert_int_equal(capture_writer__events(w), n);
	assert_int_equal(capture_writer__close(w), 0);

	c = capture__open(path, err, sizeof(err));
	assert_non_null(c);
	while (capture__next(c, &blk) == 1) {
		assert_int_equal(blk.type, GT_BLK_EVENTS);
		assert_true(blk.len < GT_CAP_EVENTS_FLUSH + sizeof(rec));
		assert_int_equal(capture__events(blk.body, blk.len, count_event, &k), 0);
		blocks++;
	}
	assert_int_equal(blocks, 3);
	assert_int_equal(k.n, n);
	assert_int_equal(capture__nwarnings(c), 0);
	capture__close(c);
}

static void test_writer_write_errors(void **state)
{
	struct capture_writer *w;
	char err[256], want[64];
	uint8_t rec[16] = {};
	struct gt_hdr h = {.type = 1, .size = 16};
	int fd = open("/dev/full", O_WRONLY), p[2];

	assert_true(fd >= 0);
	assert_null(capture_writer__open_fd(fd, NULL, 0, err, sizeof(err)));
	snprintf(want, sizeof(want), "cannot write fd %d: No space left on device", fd);
	assert_string_equal(err, want);
	close(fd);

	/* After a failed write the file ends in a torn block: every later call fails the same. */
	signal(SIGPIPE, SIG_IGN);
	assert_int_equal(pipe(p), 0);
	w = capture_writer__open_fd(p[1], NULL, 0, err, sizeof(err));
	assert_non_null(w);
	close(p[0]);
	memcpy(rec, &h, sizeof(h));
	assert_int_equal(capture_writer__event(w, rec, 16), 0);
	assert_int_equal(capture_writer__flush(w), -EPIPE);
	assert_int_equal(capture_writer__event(w, rec, 16), -EPIPE);
	assert_int_equal(capture_writer__block(w, GT_BLK_END, NULL, 0), -EPIPE);
	assert_int_equal(capture_writer__bytes(w), 32);
	assert_int_equal(capture_writer__close(w), -EPIPE);
	close(p[1]);
	signal(SIGPIPE, SIG_DFL);
	assert_int_equal(capture_writer__close(NULL), 0);
}

static volatile sig_atomic_t alarms;

static void on_alarm(int sig)
{
	alarms++;
}

struct drain {
	int fd;
	pthread_t writer;
	int kicks;
	uint8_t *buf;
	size_t len, cap;
};

/*
 * Reads the pipe slowly so the writer blocks in it, and before each read
 * signals the writer (a bounded number of times, so a slow host such as
 * valgrind cannot livelock) to cut its write short or fail it with EINTR.
 */
static void *drain_pipe(void *arg)
{
	struct drain *d = arg;
	ssize_t n;

	for (;;) {
		if (d->cap - d->len < 4096) {
			d->cap = d->cap ? d->cap * 2 : 1 << 20;
			d->buf = realloc(d->buf, d->cap);
			if (!d->buf)
				return NULL;
		}
		/* Signalled while the pipe is full, the writer has written nothing yet: EINTR. */
		if (d->kicks < 500) {
			pthread_kill(d->writer, SIGALRM);
			d->kicks++;
		}
		usleep(20);
		n = read(d->fd, d->buf + d->len, 4096);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return NULL;
		d->len += (size_t)n;
	}
}

static void test_writer_short_writes(void **state)
{
	struct sigaction sa = {.sa_handler = on_alarm}, old_sa;
	struct drain d = {};
	struct count_ctx k = {};
	struct capture_writer *w;
	struct capture_block blk;
	struct capture *c;
	uint8_t rec[64] = {};
	struct gt_hdr h = {.type = GT_REC_SAMPLE, .size = sizeof(rec)};
	size_t n = 3 * GT_CAP_EVENTS_FLUSH / sizeof(rec) + 17;
	pthread_t th;
	char err[256];
	int p[2];

	assert_int_equal(pipe(p), 0);
	d.fd = p[0];
	d.writer = pthread_self();
	/* No SA_RESTART: a blocked pipe write returns early (short) or fails with EINTR. */
	sigaction(SIGALRM, &sa, &old_sa);
	alarms = 0;
	assert_int_equal(pthread_create(&th, NULL, drain_pipe, &d), 0);

	w = capture_writer__open_fd(p[1], NULL, 0, err, sizeof(err));
	assert_non_null(w);
	for (size_t i = 0; i < n; i++) {
		h.ts_ns = i;
		memcpy(rec, &h, sizeof(h));
		assert_int_equal(capture_writer__event(w, rec, sizeof(rec)), 0);
	}
	assert_int_equal(capture_writer__close(w), 0);
	close(p[1]);
	pthread_join(th, NULL);
	sigaction(SIGALRM, &old_sa, NULL);
	close(p[0]);
	assert_true(alarms > 0);

	assert_non_null(d.buf);
	c = capture__open_mem(d.buf, d.len, MEM, err, sizeof(err));
	assert_non_null(c);
	while (capture__next(c, &blk) == 1)
		assert_int_equal(capture__events(blk.body, blk.len, count_event, &k), 0);
	assert_int_equal(k.n, n);
	assert_int_equal(capture__nwarnings(c), 0);
	capture__close(c);
	free(d.buf);
}

/* ---- body buffers ---- */

static void test_buf_kv_format(void **state)
{
	struct capture_buf b = {};
	struct kvs kv = {};
	static char longv[GT_CAP_MAX_STRING * 2];

	capture_buf__kv(&b, "pid", "%d", 1234);
	capture_buf__kv(&b, "comm", "%s-%u", "prover", 7u);
	capture_buf__kv(&b, "none", "%s", "");
	assert_int_equal(b.len, strlen("pid=1234") + 1 + strlen("comm=prover-7") + 1 + 6);
	assert_int_equal(capture__kv(b.data, b.len, collect_kv, &kv), 0);
	assert_int_equal(kv.n, 3);
	assert_string_equal(kv.val[0], "1234");
	assert_string_equal(kv.key[1], "comm");
	assert_string_equal(kv.val[1], "prover-7");
	assert_string_equal(kv.val[2], "");

	/* Too long for any reader: cut to the string cap, still one valid entry. */
	capture_buf__reset(&b);
	memset(longv, 'x', sizeof(longv) - 1);
	capture_buf__kv(&b, "cmdline", "%s", longv);
	assert_int_equal(b.len, GT_CAP_MAX_STRING);
	assert_int_equal(capture__kv(b.data, b.len, NULL, NULL), 0);
	capture_buf__free(&b);
	assert_null(b.data);
	capture_buf__free(NULL);
}

/* One table of HEADER/COUNTERS/END keys: each name once, found back by name. */
static void test_keys_table(void **state)
{
	struct capture_buf b = {};
	struct kvs kv = {};

	for (unsigned k = 0; k < CK_MAX; k++) {
		const char *name = capture_key__name((enum capture_key)k);

		assert_true(name[0] != '\0' && !strchr(name, '='));
		assert_int_equal(capture_key__find(name), k);
	}
	assert_string_equal(capture_key__name(CK_LOST_RINGBUF), "lost.ringbuf");
	assert_string_equal(capture_key__name(CK_START_MONO_NS), "start_mono_ns");
	assert_string_equal(capture_key__name(CK_MAX), "");
	assert_int_equal(capture_key__find("lost.ringbufx"), CK_MAX);
	assert_int_equal(capture_key__find(""), CK_MAX);
	/* The unwind.end.* keys in enum gt_unw_end order: info relies on it. */
	assert_int_equal(CK_UNWIND_END_DEPTH - CK_UNWIND_END_ROOT, GT_UNW_DEPTH - GT_UNW_ROOT);
	assert_string_equal(capture_key__name(CK_UNWIND_END_ROOT + GT_UNW_NO_ROW),
			    "unwind.end.no_row");

	/* The writer spells a key as the table does. */
	capture_buf__key(&b, CK_PID, "%d", 1234);
	capture_buf__key(&b, CK_STOP_REASON, "%s", "signal");
	assert_int_equal(capture__kv(b.data, b.len, collect_kv, &kv), 0);
	assert_int_equal(kv.n, 2);
	assert_string_equal(kv.key[0], "pid");
	assert_string_equal(kv.val[0], "1234");
	assert_string_equal(kv.key[1], "stop_reason");
	assert_string_equal(kv.val[1], "signal");
	capture_buf__free(&b);
}

static int count_probe(const struct capture_probe *p, void *ctx)
{
	++*(int *)ctx;
	return 0;
}

static void test_buf_long_strings(void **state)
{
	static char longs[GT_CAP_MAX_STRING + 100];
	struct capture_buf b = {};
	uint16_t lens[3];
	int calls = 0;

	memset(longs, 'n', sizeof(longs) - 1);
	capture_buf__symbol(&b, 1, 2, 3, longs, "m");
	assert_int_equal(b.len % 8, 0);
	assert_int_equal(b.len, (20 + GT_CAP_MAX_STRING - 1 + 1 + 7) & ~7U);
	memcpy(&lens[0], b.data + 16, 2);
	assert_int_equal(lens[0], GT_CAP_MAX_STRING - 1);
	assert_int_equal(capture__symbols(b.data, b.len, NULL, NULL), 0);

	capture_buf__reset(&b);
	capture_buf__mapping(&b, 1, 2, 3, 4, build_id, 200, longs);
	assert_int_equal(b.data[30], 20);
	assert_int_equal(capture__mappings(b.data, b.len, NULL, NULL), 0);

	capture_buf__reset(&b);
	capture_buf__probe(&b, 5, longs, NULL, "c");
	capture_buf__probe(&b, 6, "p", "m", "cat");
	memcpy(lens, b.data + 4, 6);
	assert_int_equal(lens[0], GT_CAP_MAX_STRING - 1);
	assert_int_equal(lens[1], 0);
	assert_int_equal(lens[2], 1);
	assert_int_equal(capture__probes(b.data, b.len, count_probe, &calls), 0);
	assert_int_equal(calls, 2);
	capture_buf__free(&b);
}

/* ---- reader: header and file errors ---- */

static void open_mem_err(const void *buf, size_t len, const char *want)
{
	char err[256] = "";

	assert_null(capture__open_mem(buf, len, MEM, err, sizeof(err)));
	assert_string_equal(err, want);
}

static void test_reader_open_errors(void **state)
{
	const char *missing = fx_path(state, "missing.gtcap");
	struct fx *f = *state;
	char err[256], want[PATH_MAX + 128];

	assert_null(capture__open(missing, err, sizeof(err)));
	snprintf(want, sizeof(want), "cannot open %s: No such file or directory", missing);
	assert_string_equal(err, want);

	assert_null(capture__open(f->dir, err, sizeof(err)));
	snprintf(want, sizeof(want), "cannot open %s: Is a directory", f->dir);
	assert_string_equal(err, want);

	assert_null(capture__open("/dev/null", err, sizeof(err)));
	assert_string_equal(err, "cannot open /dev/null: not a regular file");
}

static void test_reader_empty(void **state)
{
	const char *path = fx_path(state, "empty.gtcap");
	char err[256], want[PATH_MAX + 128];

	spit(path, "", 0);
	assert_null(capture__open(path, err, sizeof(err)));
	snprintf(want, sizeof(want),
		 "%s is not a gaptrace capture (file is empty): pass a file written by 'gaptrace "
		 "record'",
		 path);
	assert_string_equal(err, want);
	open_mem_err(
	    "", 0,
	    MEM
	    " is not a gaptrace capture (file is empty): pass a file written by 'gaptrace record'");
}

static void test_reader_bad_magic(void **state)
{
	const char *path = fx_path(state, "text.gtcap");
	uint8_t hdr[64], pad[4] = {};
	char err[256], want[PATH_MAX + 128];
	uint32_t magic;

	spit(path, "hello world\n", 12);
	assert_null(capture__open(path, err, sizeof(err)));
	memcpy(&magic, "hell", 4);
	snprintf(want, sizeof(want),
		 "%s is not a gaptrace capture (bad magic 0x%08x): pass a file written by "
		 "'gaptrace record'",
		 path, magic);
	assert_string_equal(err, want);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	assert_string_equal(err + strlen(path),
			    " is not a gaptrace capture (bad magic 0x6c6c6568): pass a file "
			    "written by 'gaptrace record'");
#endif

	/* Shorter than a magic: what there is, padded with zeros. */
	hand_header(hdr, 1, 0, "", 0, false);
	for (size_t n = 1; n < 4; n++) {
		memset(pad, 0, sizeof(pad));
		memcpy(pad, hdr, n);
		memcpy(&magic, pad, 4);
		snprintf(want, sizeof(want),
			 MEM " is not a gaptrace capture (bad magic 0x%08x): pass a file written "
			     "by 'gaptrace record'",
			 magic);
		open_mem_err(hdr, n, want);
	}
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	open_mem_err(hdr, 3,
		     MEM " is not a gaptrace capture (bad magic 0x000d0d0a): pass a file written "
			 "by 'gaptrace record'");
#endif

	/* The right block type but no byte-order mark (a pcapng file looks like this). */
	memset(hdr + 16, 0xff, 4);
	open_mem_err(hdr, 40,
		     MEM " is not a gaptrace capture (bad magic 0xffffffff): pass a file written "
			 "by 'gaptrace record'");
}

static void test_reader_version(void **state)
{
	const char *path = fx_path(state, "v2.gtcap");
	char err[256], want[PATH_MAX + 128];
	uint8_t buf[256];
	struct capture *c;
	unsigned major, minor;
	size_t len;

	len = hand_header(buf, 2, 0, "host=a", 7, false);
	spit(path, buf, len);
	assert_null(capture__open(path, err, sizeof(err)));
	snprintf(want, sizeof(want),
		 "%s has capture version 2.0; this gaptrace reads version 1.x: upgrade gaptrace",
		 path);
	assert_string_equal(err, want);
	/* Refused even if the rest of its header is not laid out as 1.x lays it out. */
	put32(buf + 4, 12345, false);
	open_mem_err(buf, 24,
		     MEM
		     " has capture version 2.0; this gaptrace reads version 1.x: upgrade gaptrace");
	len = hand_header(buf, 0, 3, "", 0, false);
	open_mem_err(buf, len,
		     MEM
		     " has capture version 0.3; this gaptrace reads version 1.x: upgrade gaptrace");

	/* A newer minor is read. */
	len = hand_header(buf, 1, 9, "host=a", 7, false);
	len += hand_block(buf + len, GT_BLK_END, NULL, 0, false);
	c = capture__open_mem(buf, len, MEM, err, sizeof(err));
	assert_non_null(c);
	capture__version(c, &major, &minor);
	assert_int_equal(major, 1);
	assert_int_equal(minor, 9);
	assert_string_equal(capture__header(c, "host"), "a");
	capture__close(c);
}

static void test_reader_byte_order(void **state)
{
	const char *path = fx_path(state, "be.gtcap");
	char err[256], want[PATH_MAX + 128];
	uint8_t buf[256];
	size_t len;
	const char *other =
	    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? "big-endian" : "little-endian";

	len = hand_header(buf, 1, 0, "host=a", 7, true);
	len += hand_block(buf + len, GT_BLK_END, NULL, 0, true);
	/* The type reads the same both ways round; only the BOM tells. */
	assert_int_equal(get32(buf), GT_BLK_HEADER);
	spit(path, buf, len);
	assert_null(capture__open(path, err, sizeof(err)));
	snprintf(want, sizeof(want),
		 "%s was written on a host of the other byte order: read it on a %s host", path,
		 other);
	assert_string_equal(err, want);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	open_mem_err(
	    buf, len,
	    MEM " was written on a host of the other byte order: read it on a big-endian host");
#endif
}

static void test_reader_header_damage(void **state)
{
	uint8_t buf[256], copy[256];
	size_t len;
	uint32_t v;

	len = hand_header(buf, 1, 0, "host=a", 7, false);
	assert_int_equal(len, 40);

	memcpy(copy, buf, len);
	copy[30] ^= 0x20;
	open_mem_err(copy, len,
		     MEM ": capture header is damaged (CRC mismatch): the file cannot be read");

	memcpy(copy, buf, len);
	put32(copy + 36, 48, false);
	open_mem_err(copy, len,
		     MEM
		     ": capture header is damaged (inconsistent lengths): the file cannot be read");

	memcpy(copy, buf, len);
	put32(copy + 4, 44, false);
	open_mem_err(copy, len,
		     MEM
		     ": capture header is damaged (inconsistent lengths): the file cannot be read");

	/* body_len too small to hold the BOM and the version. */
	memcpy(copy, buf, len);
	put32(copy + 8, 4, false);
	fix_crc(copy, 0);
	open_mem_err(copy, len,
		     MEM
		     ": capture header is damaged (inconsistent lengths): the file cannot be read");

	memcpy(copy, buf, len);
	put32(copy + 8, 17, false);
	open_mem_err(copy, len,
		     MEM
		     ": capture header is damaged (inconsistent lengths): the file cannot be read");

	memcpy(copy, buf, len);
	v = 2U << 20;
	put32(copy + 4, v, false);
	open_mem_err(copy, len,
		     MEM ": capture header is damaged (claims 2097152 bytes, over the 1048576 "
			 "limit): the file cannot be read");

	/* Cut anywhere inside the HEADER after its magic. */
	for (size_t n = 4; n < len; n++)
		open_mem_err(buf, n, MEM ": capture header is truncated: the file cannot be read");
}

static void test_reader_header_entries(void **state)
{
	static const char kv[] = "a=1\0a=2\0b=\0novalue\0c=3";
	char err[256];
	uint8_t buf[256];
	struct capture *c;
	size_t len;

	len = hand_header(buf, 1, 0, kv, sizeof(kv), false);
	c = capture__open_mem(buf, len, MEM, err, sizeof(err));
	assert_non_null(c);
	/* The last of repeated keys wins; entries after a malformed one are dropped. */
	assert_string_equal(capture__header(c, "a"), "2");
	assert_string_equal(capture__header(c, "b"), "");
	assert_null(capture__header(c, "c"));
	assert_null(capture__header(c, "novalue"));
	assert_int_equal(capture__nwarnings(c), 1);
	assert_string_equal(capture__warning(c, 0),
			    MEM ": capture header holds a malformed key=value entry: ignored it "
				"and the entries after it");
	assert_false(capture__truncated(c));
	capture__close(c);

	/* No entries at all is fine. */
	len = hand_header(buf, 1, 0, "", 0, false);
	c = capture__open_mem(buf, len, NULL, err, sizeof(err));
	assert_non_null(c);
	assert_string_equal(capture__path(c), "<memory>");
	assert_null(capture__header(c, "a"));
	assert_int_equal(capture__nwarnings(c), 0);
	capture__close(c);
}

/* ---- reader: damage after the HEADER ---- */

/*
 * HEADER [0,40), then three EVENTS blocks of one 16-byte record each at 40,
 * 80 and 120: offsets easy to state in literal messages.
 */
static size_t small_file(uint8_t *buf)
{
	uint8_t rec[16] = {};
	struct gt_hdr h = {.type = 5, .size = 16};
	size_t len = hand_header(buf, 1, 0, "host=a", 7, false);

	for (int i = 0; i < 3; i++) {
		h.ts_ns = (uint64_t)i;
		memcpy(rec, &h, sizeof(h));
		len += hand_block(buf + len, GT_BLK_EVENTS, rec, 16, false);
	}
	assert_int_equal(len, 160);
	return len;
}

static struct capture *open_ok(const void *buf, size_t len)
{
	char err[256] = "";
	struct capture *c = capture__open_mem(buf, len, MEM, err, sizeof(err));

	assert_non_null(c);
	assert_string_equal(err, "");
	return c;
}

static void test_reader_truncated_literal(void **state)
{
	uint8_t buf[256];
	struct capture *c;
	struct seen s;
	size_t len = small_file(buf);

	c = open_ok(buf, 100);
	read_all(c, &s);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.offset[0], 40);
	assert_true(capture__truncated(c));
	assert_int_equal(capture__nwarnings(c), 1);
	assert_string_equal(capture__warning(c, 0),
			    MEM ": capture truncated at byte 100: kept 2 whole blocks; the "
				"recording was cut short, the data up to there is usable");
	capture__close(c);

	/* Only the tail's last byte is missing. */
	c = open_ok(buf, len - 1);
	read_all(c, &s);
	assert_int_equal(s.n, 2);
	assert_string_equal(capture__warning(c, 0),
			    MEM ": capture truncated at byte 159: kept 3 whole blocks; the "
				"recording was cut short, the data up to there is usable");
	capture__close(c);

	/* Fewer bytes than a block head. */
	c = open_ok(buf, 45);
	read_all(c, &s);
	assert_int_equal(s.n, 0);
	assert_string_equal(capture__warning(c, 0),
			    MEM ": capture truncated at byte 45: kept 1 whole blocks; the "
				"recording was cut short, the data up to there is usable");
	capture__close(c);
}

static void test_reader_truncated_every_boundary(void **state)
{
	const char *path = fx_path(state, "full.gtcap"), *cut_path = fx_path(state, "cut.gtcap");
	char err[256], want[PATH_MAX + 256];
	uint64_t cuts[16 * 8];
	size_t len, ncuts = 0;
	struct layout lo;
	struct capture *c;
	struct seen s;
	uint8_t *buf;

	write_sample(path, &lo);
	buf = slurp(path, &len);
	for (size_t k = 0; k < lo.n; k++) {
		uint64_t b = lo.end[k], next = k + 1 < lo.n ? lo.end[k + 1] : b;
		const uint64_t mid[] = {1, 8, 15, 16, 17, 24};

		cuts[ncuts++] = b;
		/* Inside the next block's head, after it, and short of its tail. */
		for (size_t i = 0; i < GT_ARRAY_SIZE(mid); i++) {
			if (b + mid[i] < next)
				cuts[ncuts++] = b + mid[i];
		}
		if (next > b + 24) {
			cuts[ncuts++] = next - 8;
			cuts[ncuts++] = next - 1;
		}
	}
	for (size_t i = 0; i < ncuts; i++) {
		bool boundary = false;
		size_t kept = 0;

		for (size_t k = 0; k < lo.n; k++) {
			boundary |= lo.end[k] == cuts[i];
			kept += lo.end[k] <= cuts[i];
		}
		spit(cut_path, buf, cuts[i]);
		c = capture__open(cut_path, err, sizeof(err));
		assert_non_null(c);
		read_all(c, &s);
		assert_kept(&s, &lo, cuts[i]);
		assert_int_equal(capture__size(c), cuts[i]);
		if (boundary) {
			/* A cut between blocks looks like a shorter file; the missing END tells. */
			assert_false(capture__truncated(c));
			assert_int_equal(capture__nwarnings(c), 0);
		} else {
			assert_true(capture__truncated(c));
			assert_int_equal(capture__nwarnings(c), 1);
			snprintf(want, sizeof(want),
				 "%s: capture truncated at byte %llu: kept %zu whole blocks; the "
				 "recording was cut short, the data up to there is usable",
				 cut_path, (unsigned long long)cuts[i], kept);
			assert_string_equal(capture__warning(c, 0), want);
		}
		capture__close(c);
	}
	free(buf);
}

/* Every length from 0 to the whole file, through the memory reader. */
static void test_reader_truncated_sweep(void **state)
{
	const char *path = fx_path(state, "sweep.gtcap");
	char err[256], want[512];
	struct layout lo;
	struct capture *c;
	struct seen s;
	uint8_t *buf;
	size_t len;

	write_sample(path, &lo);
	buf = slurp(path, &len);
	for (size_t cut = 0; cut <= len; cut++) {
		bool boundary = false;
		size_t kept = 0;

		c = capture__open_mem(buf, cut, MEM, err, sizeof(err));
		if (cut < lo.end[0]) {
			assert_null(c);
			if (cut == 0)
				assert_string_equal(err, MEM
						    " is not a gaptrace capture (file is empty): "
						    "pass a file written by 'gaptrace record'");
			else if (cut < 4)
				assert_non_null(strstr(err, "(bad magic 0x"));
			else
				assert_string_equal(
				    err,
				    MEM ": capture header is truncated: the file cannot be read");
			continue;
		}
		assert_non_null(c);
		for (size_t k = 0; k < lo.n; k++) {
			boundary |= lo.end[k] == cut;
			kept += lo.end[k] <= cut;
		}
		read_all(c, &s);
		assert_kept(&s, &lo, cut);
		assert_int_equal(capture__truncated(c), !boundary);
		assert_int_equal(capture__nwarnings(c), !boundary);
		if (!boundary) {
			snprintf(want, sizeof(want),
				 MEM ": capture truncated at byte %zu: kept %zu whole blocks; the "
				     "recording was cut short, the data up to there is usable",
				 cut, kept);
			assert_string_equal(capture__warning(c, 0), want);
		}
		capture__close(c);
	}
	free(buf);
}

static void test_reader_crc_damage(void **state)
{
	const char *path = fx_path(state, "crc.gtcap");
	char err[256], want[PATH_MAX + 256];
	uint8_t buf[256];
	struct capture *c;
	struct seen s;
	size_t len = small_file(buf);

	/* A flipped bit in block 2's body: skipped, block 3 still read. */
	buf[80 + 20] ^= 0x01;
	c = open_ok(buf, len);
	read_all(c, &s);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.index[0], 1);
	assert_int_equal(s.offset[0], 40);
	assert_int_equal(s.index[1], 3);
	assert_int_equal(s.offset[1], 120);
	assert_int_equal(capture__crc_errors(c), 1);
	assert_false(capture__truncated(c));
	assert_int_equal(capture__nwarnings(c), 1);
	assert_string_equal(
	    capture__warning(c, 0),
	    MEM ": block 2 at byte 80 fails its CRC check: skipped it; the file is damaged");

	/* A second pass neither repeats the warning nor counts the block again. */
	assert_int_equal(capture__rewind(c), 0);
	read_all(c, &s);
	assert_int_equal(s.n, 2);
	assert_int_equal(capture__crc_errors(c), 1);
	assert_int_equal(capture__nwarnings(c), 1);
	capture__close(c);

	/* Damage in the stored CRC itself and in the head's type: same verdict, from a file. */
	buf[80 + 20] ^= 0x01;
	buf[120 + 32] ^= 0xff;
	buf[40] ^= 0x04;
	spit(path, buf, len);
	c = capture__open(path, err, sizeof(err));
	assert_non_null(c);
	read_all(c, &s);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.index[0], 2);
	assert_int_equal(capture__crc_errors(c), 2);
	assert_int_equal(capture__nwarnings(c), 2);
	snprintf(want, sizeof(want),
		 "%s: block 1 at byte 40 fails its CRC check: skipped it; the file is damaged",
		 path);
	assert_string_equal(capture__warning(c, 0), want);
	snprintf(want, sizeof(want),
		 "%s: block 3 at byte 120 fails its CRC check: skipped it; the file is damaged",
		 path);
	assert_string_equal(capture__warning(c, 1), want);
	capture__close(c);
}

static void expect_stop(const uint8_t *buf, size_t len, size_t nblocks, const char *want)
{
	struct capture *c = open_ok(buf, len);
	struct seen s;

	read_all(c, &s);
	assert_int_equal(s.n, nblocks);
	assert_true(capture__truncated(c));
	assert_int_equal(capture__nwarnings(c), 1);
	assert_string_equal(capture__warning(c, 0), want);
	/* The second pass stops at the same place without a second warning. */
	capture__rewind(c);
	read_all(c, &s);
	assert_int_equal(s.n, nblocks);
	assert_int_equal(capture__nwarnings(c), 1);
	capture__close(c);
}

static void test_reader_inconsistent(void **state)
{
	uint8_t buf[256], copy[256];
	size_t len = small_file(buf);

	memcpy(copy, buf, len);
	put32(copy + 80 + 36, 48, false);
	expect_stop(copy, len, 1,
		    MEM ": block 2 at byte 80 has inconsistent lengths (head 40, tail 48): stopped "
			"reading there, kept 2 blocks; the file is damaged");

	/* A head length that is not a multiple of 8: the "tail" is read where it points (block 3's type). */
	memcpy(copy, buf, len);
	put32(copy + 80 + 4, 44, false);
	expect_stop(copy, len, 1,
		    MEM ": block 2 at byte 80 has inconsistent lengths (head 44, tail 1): stopped "
			"reading there, kept 2 blocks; the file is damaged");

	/* Smaller than head and tail: there is no tail to show. */
	memcpy(copy, buf, len);
	put32(copy + 80 + 4, 16, false);
	expect_stop(copy, len, 1,
		    MEM ": block 2 at byte 80 has inconsistent lengths (head 16, tail 0): stopped "
			"reading there, kept 2 blocks; the file is damaged");
	memcpy(copy, buf, len);
	put32(copy + 40 + 4, 0, false);
	expect_stop(copy, len, 0,
		    MEM ": block 1 at byte 40 has inconsistent lengths (head 0, tail 0): stopped "
			"reading there, kept 1 blocks; the file is damaged");

	/* body_len larger than the block holds. */
	memcpy(copy, buf, len);
	put32(copy + 120 + 8, 17, false);
	expect_stop(copy, len, 2,
		    MEM ": block 3 at byte 120 has inconsistent lengths (head 40, tail 40): "
			"stopped reading there, kept 3 blocks; the file is damaged");

	/* A longer head, consistent on its own, lands the tail inside the next block. */
	memcpy(copy, buf, len);
	put32(copy + 40 + 4, 80, false);
	expect_stop(copy, len, 0,
		    MEM ": block 1 at byte 40 has inconsistent lengths (head 80, tail 40): stopped "
			"reading there, kept 1 blocks; the file is damaged");
}

static void test_reader_oversized(void **state)
{
	uint8_t buf[256], copy[256];
	size_t len = small_file(buf);

	memcpy(copy, buf, len);
	put32(copy + 80 + 4, 1U << 28, false);
	expect_stop(copy, len, 1,
		    MEM ": block 2 at byte 80 claims 268435456 bytes, over the 67108864 limit: "
			"stopped reading there, kept 2 blocks; the file is damaged");
	memcpy(copy, buf, len);
	put32(copy + 40 + 4, 0xffffffff, false);
	expect_stop(copy, len, 0,
		    MEM ": block 1 at byte 40 claims 4294967295 bytes, over the 67108864 limit: "
			"stopped reading there, kept 1 blocks; the file is damaged");
	/* Exactly at the cap is a length like any other: here, past the end of the file. */
	memcpy(copy, buf, len);
	put32(copy + 40 + 4, GT_CAP_MAX_BLOCK, false);
	expect_stop(copy, len, 0,
		    MEM ": capture truncated at byte 160: kept 1 whole blocks; the recording was "
			"cut short, the data up to there is usable");
}

static void test_reader_unknown_block(void **state)
{
	uint8_t buf[512];
	struct capture_block blk;
	struct capture *c;
	size_t len = hand_header(buf, 1, 0, "", 0, false);

	len += hand_block(buf + len, 0x1234, "future data", 11, false);
	len += hand_block(buf + len, GT_BLK_END, "reason=ok", 10, false);
	c = open_ok(buf, len);
	for (int pass = 0; pass < 2; pass++) {
		assert_int_equal(capture__next(c, &blk), 1);
		assert_int_equal(blk.type, 0x1234);
		assert_int_equal(blk.len, 11);
		assert_memory_equal(blk.body, "future data", 11);
		assert_string_equal(capture__block_name(blk.type), "unknown");
		capture__note_unknown(c, blk.type);
		capture__note_unknown(c, blk.type);
		assert_int_equal(capture__next(c, &blk), 1);
		assert_int_equal(blk.type, GT_BLK_END);
		assert_int_equal(blk.index, 2);
		assert_int_equal(capture__next(c, &blk), 0);
		assert_int_equal(capture__unknown_blocks(c), 1);
		capture__rewind(c);
	}
	assert_int_equal(capture__nwarnings(c), 0);
	capture__close(c);
}

static void test_reader_rewind(void **state)
{
	const char *path = fx_path(state, "rewind.gtcap");
	struct layout lo;
	struct capture *c;
	char err[256];

	write_sample(path, &lo);
	c = capture__open(path, err, sizeof(err));
	assert_non_null(c);
	for (int pass = 0; pass < 3; pass++) {
		assert_int_equal(check_sample(c, &lo), lo.n - 1);
		assert_int_equal(capture__rewind(c), 0);
	}
	assert_int_equal(capture__unknown_blocks(c), 1);
	assert_int_equal(capture__nwarnings(c), 0);
	capture__close(c);
}

/* Bodies handed out of a buffer that is not 8-aligned are still aligned for STACKS. */
static void test_reader_misaligned_mem(void **state)
{
	const char *path = fx_path(state, "align.gtcap");
	struct layout lo;
	struct capture *c;
	uint8_t *buf, *odd;
	size_t len;

	write_sample(path, &lo);
	buf = slurp(path, &len);
	odd = malloc(len + 1);
	assert_non_null(odd);
	memcpy(odd + 1, buf, len);
	c = open_ok(odd + 1, len);
	assert_int_equal(check_sample(c, &lo), lo.n - 1);
	assert_int_equal(capture__nwarnings(c), 0);
	capture__close(c);
	free(odd);
	free(buf);
}

static void test_reader_warning_cap(void **state)
{
	size_t n = 150, len;
	uint8_t *buf = malloc(64 + n * 24);
	struct capture *c;
	struct seen s;

	assert_non_null(buf);
	len = hand_header(buf, 1, 0, "", 0, false);
	for (size_t i = 0; i < n; i++) {
		hand_block(buf + len, GT_BLK_END, NULL, 0, false);
		buf[len + 16] ^= 0xff;
		len += 24;
	}
	c = open_ok(buf, len);
	read_all(c, &s);
	assert_int_equal(s.n, 0);
	assert_int_equal(capture__crc_errors(c), n);
	assert_int_equal(capture__nwarnings(c), 101);
	assert_string_equal(
	    capture__warning(c, 99),
	    MEM ": block 100 at byte 2408 fails its CRC check: skipped it; the file is damaged");
	assert_string_equal(capture__warning(c, 100),
			    MEM ": more than 100 warnings: not listing the rest");
	assert_false(capture__truncated(c));
	capture__close(c);
	free(buf);
}

/* ---- body parsers on malformed input ---- */

static int stop_at_second(const void *rec, size_t size, void *ctx)
{
	return ++*(int *)ctx == 2 ? 7 : 0;
}

static void test_events_malformed(void **state)
{
	uint8_t body[64] = {};
	/* A type this reader does not know: its header is a whole record. */
	struct gt_hdr h = {.type = 200, .size = 16};
	int calls = 0;

	memcpy(body, &h, sizeof(h));
	memcpy(body + 16, &h, sizeof(h));
	assert_int_equal(capture__events(body, 32, NULL, NULL), 0);
	assert_int_equal(capture__events(body, 0, NULL, NULL), 0);
	/* cb's non-zero value stops the walk and comes back. */
	assert_int_equal(capture__events(body, 32, stop_at_second, &calls), 7);
	assert_int_equal(calls, 2);
	/* A partial header after a good record. */
	assert_int_equal(capture__events(body, 30, NULL, NULL), -1);
	assert_int_equal(capture__events(body, 10, NULL, NULL), -1);

	h.size = 8;
	memcpy(body + 16, &h, sizeof(h));
	calls = 0;
	assert_int_equal(capture__events(body, 32, stop_at_second, &calls), -1);
	assert_int_equal(calls, 1);
	h.size = 0;
	memcpy(body, &h, sizeof(h));
	assert_int_equal(capture__events(body, 32, NULL, NULL), -1);
	h.size = 40;
	memcpy(body, &h, sizeof(h));
	assert_int_equal(capture__events(body, 32, NULL, NULL), -1);
	h.size = GT_CAP_MAX_RECORD + 1;
	memcpy(body, &h, sizeof(h));
	assert_int_equal(capture__events(body, 64, NULL, NULL), -1);
}

static int collect_types(const void *rec, size_t size, void *ctx)
{
	struct kvs *k = ctx;

	assert_true(k->n < 8);
	snprintf(k->key[k->n++], 64, "%u/%zu", ((const struct gt_hdr *)rec)->type, size);
	return 0;
}

/*
 * A record shorter than its type's first layout is dropped by the reader
 * (gt_rec_min_size), not handed on: consumers read its fields unchecked.
 */
static void test_events_short_for_type(void **state)
{
	uint8_t body[512] = {};
	struct kvs got = {};
	size_t off = 0;
	const struct {
		uint16_t type, size;
	} recs[] = {
	    {GT_REC_OFFCPU, 16},		    /* header only: dropped */
	    {GT_REC_OFFCPU, GT_OFFCPU_V1_SIZE},	    /* a capture before args[3]: kept */
	    {GT_REC_SAMPLE, GT_SAMPLE_V1_SIZE - 8}, /* dropped */
	    {GT_REC_CALL, sizeof(struct gt_call)},  /* kept */
	    {GT_REC_LOSS, sizeof(struct gt_loss) - 1},
	    {GT_REC_NAME, offsetof(struct gt_name, name)},     /* no room for the NUL */
	    {GT_REC_NAME, offsetof(struct gt_name, name) + 1}, /* kept */
	    {200, 16},					       /* unknown type: kept */
	};

	/* Odd sizes put later headers at unaligned offsets: written by memcpy. */
	for (size_t i = 0; i < GT_ARRAY_SIZE(recs); i++) {
		struct gt_hdr hv = {.type = recs[i].type, .size = recs[i].size};

		memcpy(body + off, &hv, sizeof(hv));
		off += recs[i].size;
		assert_true(off <= sizeof(body));
	}
	assert_int_equal(capture__events(body, off, collect_types, &got), 0);
	assert_int_equal(got.n, 4);
	assert_string_equal(got.key[0], "1/104");
	assert_string_equal(got.key[1], "3/64");
	assert_string_equal(got.key[2], "9/33");
	assert_string_equal(got.key[3], "200/16");
	/* The table itself: first layouts, and the header for an unknown type. */
	assert_int_equal(gt_rec_min_size(GT_REC_OFFCPU), GT_OFFCPU_V1_SIZE);
	assert_int_equal(gt_rec_min_size(GT_REC_GPU_OP), sizeof(struct gt_gpu_op));
	assert_int_equal(gt_rec_min_size(GT_REC_STACK), offsetof(struct gt_stack, ips));
	assert_int_equal(gt_rec_min_size(0), sizeof(struct gt_hdr));
	assert_int_equal(gt_rec_min_size(GT_REC_MAX), sizeof(struct gt_hdr));
}

static void test_kv_malformed(void **state)
{
	static char longs[GT_CAP_MAX_STRING + 8];
	struct kvs kv = {};

	assert_int_equal(capture__kv("a=1\0b=x=y", 10, collect_kv, &kv), 0);
	assert_string_equal(kv.key[1], "b");
	assert_string_equal(kv.val[1], "x=y");
	assert_int_equal(capture__kv("", 0, NULL, NULL), 0);
	assert_int_equal(capture__kv("novalue", 8, NULL, NULL), -1);
	assert_int_equal(capture__kv("=1", 3, NULL, NULL), -1);
	assert_int_equal(capture__kv("a=1\0", 4, NULL, NULL), 0);
	/* Unterminated, and an empty string between two entries. */
	assert_int_equal(capture__kv("a=1", 3, NULL, NULL), -1);
	assert_int_equal(capture__kv("a=1\0\0b=2", 9, NULL, NULL), -1);

	/* The longest string is GT_CAP_MAX_STRING bytes with its NUL. */
	memset(longs, 'v', sizeof(longs));
	memcpy(longs, "k=", 2);
	longs[GT_CAP_MAX_STRING - 1] = '\0';
	assert_int_equal(capture__kv(longs, GT_CAP_MAX_STRING, NULL, NULL), 0);
	longs[GT_CAP_MAX_STRING - 1] = 'v';
	longs[GT_CAP_MAX_STRING] = '\0';
	assert_int_equal(capture__kv(longs, GT_CAP_MAX_STRING + 1, NULL, NULL), -1);
}

static void test_stacks_malformed(void **state)
{
	struct capture_buf b = {};
	struct stacks st = {};
	uint8_t *odd;

	capture_buf__stack(&b, 1, 2, false, stack_ips, 3);
	assert_int_equal(capture__stacks(b.data, b.len, NULL, NULL), 0);
	assert_int_equal(capture__stacks(b.data, b.len - 8, NULL, NULL), -1);
	assert_int_equal(capture__stacks(b.data, 12, NULL, NULL), -1);
	/* nr far past the end. */
	b.data[8] = 0xff;
	b.data[9] = 0xff;
	assert_int_equal(capture__stacks(b.data, b.len, NULL, NULL), -1);
	b.data[8] = 3;
	b.data[9] = 0;

	/* A body at an odd address still gives an aligned ips array. */
	odd = malloc(b.len + 1);
	assert_non_null(odd);
	memcpy(odd + 1, b.data, b.len);
	assert_int_equal(capture__stacks(odd + 1, b.len, collect_stack, &st), 0);
	assert_int_equal(st.n, 1);
	assert_memory_equal(st.ips[0], stack_ips, sizeof(stack_ips));
	free(odd);
	capture_buf__free(&b);
}

static void test_symbols_malformed(void **state)
{
	struct capture_buf b = {};
	uint16_t v;

	capture_buf__symbol(&b, 1, 2, 3, "name", "mod");
	assert_int_equal(b.len, 32);
	assert_int_equal(capture__symbols(b.data, b.len, NULL, NULL), 0);
	assert_int_equal(capture__symbols(b.data, 19, NULL, NULL), -1);
	/* The padding belongs to the entry. */
	assert_int_equal(capture__symbols(b.data, 27, NULL, NULL), -1);
	v = 13;
	memcpy(b.data + 16, &v, 2);
	assert_int_equal(capture__symbols(b.data, b.len, NULL, NULL), -1);
	v = 4;
	memcpy(b.data + 16, &v, 2);
	v = 9;
	memcpy(b.data + 18, &v, 2);
	assert_int_equal(capture__symbols(b.data, b.len, NULL, NULL), -1);
	v = 0xffff;
	memcpy(b.data + 18, &v, 2);
	assert_int_equal(capture__symbols(b.data, b.len, NULL, NULL), -1);
	capture_buf__free(&b);
}

struct inl_seen {
	struct capture_inline in[4];
	char names[4][GT_CAP_MAX_INLINE][64];
	int n;
};

static int collect_inline(const struct capture_inline *in, void *ctx)
{
	struct inl_seen *s = ctx;

	if (s->n >= 4)
		return 1;
	s->in[s->n] = *in;
	for (int k = 0; k < in->n; k++)
		snprintf(s->names[s->n][k], 64, "%.*s", (int)in->name_len[k], in->name[k]);
	s->n++;
	return 0;
}

static void test_inlines_roundtrip(void **state)
{
	static const char *const two[] = {"crunch", "", "_ZN1a4stepEv"};
	const char *many[GT_CAP_MAX_INLINE + 4];
	struct capture_buf b = {};
	struct inl_seen seen = {};

	for (size_t i = 0; i < GT_ARRAY_SIZE(many); i++)
		many[i] = "f";
	/* Empty names are left out; no names, no entry. */
	capture_buf__inline(&b, 0x401234, 7, GT_INLINE_CALLER, two, 3);
	capture_buf__inline(&b, 0x401235, 7, 0, two + 1, 1);
	capture_buf__inline(&b, 0x401236, 8, 0, many, GT_ARRAY_SIZE(many));
	assert_int_equal(b.len % 8, 0);
	assert_int_equal(capture__inlines(b.data, b.len, collect_inline, &seen), 0);
	assert_int_equal(seen.n, 2);
	assert_int_equal(seen.in[0].ip, 0x401234);
	assert_int_equal(seen.in[0].pid, 7);
	assert_int_equal(seen.in[0].flags, GT_INLINE_CALLER);
	assert_int_equal(seen.in[0].n, 2);
	assert_string_equal(seen.names[0][0], "crunch");
	assert_string_equal(seen.names[0][1], "_ZN1a4stepEv");
	assert_int_equal(seen.in[1].n, GT_CAP_MAX_INLINE);
	assert_int_equal(seen.in[1].flags, 0);
	assert_string_equal(capture__block_name(GT_BLK_INLINES), "INLINES");
	capture_buf__free(&b);
}

static void test_inlines_malformed(void **state)
{
	static const char *const one[] = {"crunch"};
	struct capture_buf b = {};
	uint16_t v;

	capture_buf__inline(&b, 1, 2, 0, one, 1);
	/* 16 fixed + 2 + 6 = 24: no padding. */
	assert_int_equal(b.len, 24);
	assert_int_equal(capture__inlines(b.data, b.len, NULL, NULL), 0);
	assert_int_equal(capture__inlines(b.data, 15, NULL, NULL), -1);
	assert_int_equal(capture__inlines(b.data, 17, NULL, NULL), -1);
	assert_int_equal(capture__inlines(b.data, 23, NULL, NULL), -1);
	/* A name past the end, an empty one, an oversized one. */
	v = 7;
	memcpy(b.data + 16, &v, 2);
	assert_int_equal(capture__inlines(b.data, b.len, NULL, NULL), -1);
	v = 0;
	memcpy(b.data + 16, &v, 2);
	assert_int_equal(capture__inlines(b.data, b.len, NULL, NULL), -1);
	v = 0xffff;
	memcpy(b.data + 16, &v, 2);
	assert_int_equal(capture__inlines(b.data, b.len, NULL, NULL), -1);
	v = 6;
	memcpy(b.data + 16, &v, 2);
	/* n 0, n over the cap, n claiming a second name that is not there. */
	b.data[12] = 0;
	assert_int_equal(capture__inlines(b.data, b.len, NULL, NULL), -1);
	b.data[12] = GT_CAP_MAX_INLINE + 1;
	assert_int_equal(capture__inlines(b.data, b.len, NULL, NULL), -1);
	b.data[12] = 2;
	assert_int_equal(capture__inlines(b.data, b.len, NULL, NULL), -1);
	b.data[12] = 1;
	assert_int_equal(capture__inlines(b.data, b.len, NULL, NULL), 0);
	capture_buf__free(&b);
}

static void test_mappings_malformed(void **state)
{
	struct capture_buf b = {};
	uint16_t v;

	capture_buf__mapping(&b, 1, 2, 3, 4, build_id, 20, "/bin/x");
	assert_int_equal(b.len, 64);
	assert_int_equal(capture__mappings(b.data, b.len, NULL, NULL), 0);
	assert_int_equal(capture__mappings(b.data, 55, NULL, NULL), -1);
	assert_int_equal(capture__mappings(b.data, 60, NULL, NULL), -1);
	v = 9;
	memcpy(b.data + 28, &v, 2);
	assert_int_equal(capture__mappings(b.data, b.len, NULL, NULL), -1);
	v = 6;
	memcpy(b.data + 28, &v, 2);
	b.data[30] = 21;
	assert_int_equal(capture__mappings(b.data, b.len, NULL, NULL), -1);
	capture_buf__free(&b);
}

static void test_probes_malformed(void **state)
{
	struct capture_buf b = {};
	uint16_t v;

	capture_buf__probe(&b, 1, "fn", "mod", "cat");
	assert_int_equal(b.len, 24);
	assert_int_equal(capture__probes(b.data, b.len, NULL, NULL), 0);
	assert_int_equal(capture__probes(b.data, 15, NULL, NULL), -1);
	v = 20;
	memcpy(b.data + 8, &v, 2);
	assert_int_equal(capture__probes(b.data, b.len, NULL, NULL), -1);
	v = 3;
	memcpy(b.data + 8, &v, 2);
	v = 5;
	memcpy(b.data + 6, &v, 2);
	assert_int_equal(capture__probes(b.data, b.len, NULL, NULL), -1);
	capture_buf__free(&b);
}

static void test_block_name_all(void **state)
{
	assert_string_equal(capture__block_name(GT_BLK_HEADER), "HEADER");
	assert_string_equal(capture__block_name(GT_BLK_EVENTS), "EVENTS");
	assert_string_equal(capture__block_name(GT_BLK_STACKS), "STACKS");
	assert_string_equal(capture__block_name(GT_BLK_SYMBOLS), "SYMBOLS");
	assert_string_equal(capture__block_name(GT_BLK_MAPPINGS), "MAPPINGS");
	assert_string_equal(capture__block_name(GT_BLK_COUNTERS), "COUNTERS");
	assert_string_equal(capture__block_name(GT_BLK_PROBES), "PROBES");
	assert_string_equal(capture__block_name(GT_BLK_END), "END");
	assert_string_equal(capture__block_name(0), "unknown");
	capture__close(NULL);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    T(test_writer_roundtrip),
	    T(test_writer_layout),
	    T(test_writer_mode_0600),
	    T(test_writer_renames_old),
	    T(test_writer_rename_error),
	    T(test_writer_open_errors),
	    T(test_writer_event_invalid),
	    T(test_writer_autoflush),
	    T(test_writer_write_errors),
	    T(test_writer_short_writes),
	    T(test_buf_kv_format),
	    T(test_keys_table),
	    T(test_buf_long_strings),
	    T(test_reader_open_errors),
	    T(test_reader_empty),
	    T(test_reader_bad_magic),
	    T(test_reader_version),
	    T(test_reader_byte_order),
	    T(test_reader_header_damage),
	    T(test_reader_header_entries),
	    T(test_reader_truncated_literal),
	    T(test_reader_truncated_every_boundary),
	    T(test_reader_truncated_sweep),
	    T(test_reader_crc_damage),
	    T(test_reader_inconsistent),
	    T(test_reader_oversized),
	    T(test_reader_unknown_block),
	    T(test_reader_rewind),
	    T(test_reader_misaligned_mem),
	    T(test_reader_warning_cap),
	    T(test_events_malformed),
	    T(test_events_short_for_type),
	    T(test_kv_malformed),
	    T(test_stacks_malformed),
	    T(test_symbols_malformed),
	    T(test_mappings_malformed),
	    T(test_inlines_roundtrip),
	    T(test_inlines_malformed),
	    T(test_probes_malformed),
	    T(test_block_name_all),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
