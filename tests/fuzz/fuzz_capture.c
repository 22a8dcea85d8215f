// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fuzz_capture.c: libFuzzer target for the capture reader: opens the input as
 * a capture and walks every block through every body parser; then compresses
 * the input as the inner blocks of a ZSTD block (format 1.3), so that
 * mutations reach the inner-block walk behind a valid frame, once with its
 * true size and once with a size that understates it (a bomb).
 *
 * Built with -DGT_FUZZ_SEED_MAIN (no libFuzzer) it is instead the program that
 * writes the seed corpus with the real writer, so the seeds follow the format.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "capture/capture.h"
#include "gaptrace/gaptrace.h"

#ifndef GT_FUZZ_SEED_MAIN

/* Everything read is summed here so the compiler cannot drop the reads ASan checks. */
static volatile uint64_t sink;

static void touch(const void *p, size_t len)
{
	const uint8_t *b = p;
	uint64_t s = 0;

	for (size_t i = 0; i < len; i++)
		s += b[i];
	sink += s;
}

static int on_event(const void *rec, size_t size, void *ctx)
{
	touch(rec, size);
	return 0;
}

static int on_kv(const char *key, const char *value, void *ctx)
{
	touch(key, strlen(key));
	touch(value, strlen(value));
	return 0;
}

static int on_stack(const struct capture_stack *s, void *ctx)
{
	for (uint16_t i = 0; i < s->nr; i++)
		sink += s->ips[i];
	sink += (uint64_t)s->stack_id + s->pid + s->kernel;
	return 0;
}

static int on_symbol(const struct capture_symbol *s, void *ctx)
{
	touch(s->name, s->name_len);
	touch(s->module, s->module_len);
	sink += s->ip + s->pid + s->sym_off;
	return 0;
}

static int on_mapping(const struct capture_mapping *m, void *ctx)
{
	touch(m->path, m->path_len);
	touch(m->build_id, m->build_id_len);
	sink += m->start + m->end + m->pgoff + m->pid;
	return 0;
}

static int on_probe(const struct capture_probe *p, void *ctx)
{
	touch(p->name, p->name_len);
	touch(p->module, p->module_len);
	touch(p->category, p->category_len);
	sink += p->func_id;
	return 0;
}

static int on_inline(const struct capture_inline *in, void *ctx)
{
	for (uint8_t k = 0; k < in->n; k++)
		touch(in->name[k], in->name_len[k]);
	sink += in->ip + in->pid + in->flags;
	return 0;
}

/* Every parser on every body, whatever its type: the parsers must hold on any bytes. */
static void parse_all(const void *body, size_t len)
{
	sink += (uint64_t)capture__events(body, len, on_event, NULL);
	sink += (uint64_t)capture__kv(body, len, on_kv, NULL);
	sink += (uint64_t)capture__stacks(body, len, on_stack, NULL);
	sink += (uint64_t)capture__symbols(body, len, on_symbol, NULL);
	sink += (uint64_t)capture__mappings(body, len, on_mapping, NULL);
	sink += (uint64_t)capture__probes(body, len, on_probe, NULL);
	sink += (uint64_t)capture__gpu_ops(body, len, on_event, NULL);
	sink += (uint64_t)capture__inlines(body, len, on_inline, NULL);
}

static void walk(struct capture *c)
{
	struct capture_block blk;
	unsigned major, minor;

	capture__version(c, &major, &minor);
	for (const char *k = "host\0kernel\0cmdline\0"; *k; k += strlen(k) + 1) {
		const char *v = capture__header(c, k);

		if (v)
			touch(v, strlen(v));
	}
	/* Two passes: rewind must bring back the same blocks without new warnings. */
	for (int pass = 0; pass < 2; pass++) {
		while (capture__next(c, &blk) == 1) {
			touch(blk.body, blk.len);
			parse_all(blk.body, blk.len);
			if (!strcmp(capture__block_name(blk.type), "unknown"))
				capture__note_unknown(c, blk.type);
		}
		capture__rewind(c);
	}
	for (size_t i = 0; i < capture__nwarnings(c); i++)
		touch(capture__warning(c, i), strlen(capture__warning(c, i)));
	sink += capture__truncated(c) + capture__crc_errors(c) + capture__unknown_blocks(c) +
		capture__size(c) + major + minor;
	touch(capture__path(c), strlen(capture__path(c)));
}

static void open_mem_and_walk(const uint8_t *data, size_t size)
{
	char err[256];
	struct capture *c = capture__open_mem(data, size, "fuzz", err, sizeof(err));

	if (!c) {
		touch(err, strlen(err));
		return;
	}
	walk(c);
	capture__close(c);
}

/* The file reader (pread into its own buffer) is a different path from memory. */
static void open_file_and_walk(const uint8_t *data, size_t size)
{
	static int fd = -1;
	char path[64], err[256];
	struct capture *c;

	if (fd < 0)
		fd = memfd_create("fuzz_capture", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		return;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	c = capture__open(path, err, sizeof(err));
	if (!c)
		return;
	walk(c);
	capture__close(c);
}

/*
 * Rewrites each block's CRC and tail length so that mutations get past the
 * CRC check and reach the header and body parsers behind it.
 */
static void fix_blocks(uint8_t *p, size_t size)
{
	size_t off = 0;
	uint32_t total, crc;

	while (size - off >= GT_CAP_BLOCK_HEAD + GT_CAP_BLOCK_TAIL) {
		memcpy(&total, p + off + 4, 4);
		if (total < GT_CAP_BLOCK_HEAD + GT_CAP_BLOCK_TAIL || total % 8 ||
		    total > size - off)
			break;
		crc = (uint32_t)crc32(0, p + off, total - GT_CAP_BLOCK_TAIL);
		memcpy(p + off + total - 8, &crc, 4);
		memcpy(p + off + total - 4, &total, 4);
		off += total;
	}
}

/* Appends one block (head, body, padding, CRC, tail) at out; returns its total length. */
static size_t put_block(uint8_t *out, uint32_t type, const void *body, uint32_t len)
{
	uint32_t total = GT_CAP_BLOCK_HEAD + ((len + 7) & ~7U) + GT_CAP_BLOCK_TAIL, crc, zero = 0;

	memset(out, 0, total);
	memcpy(out, &type, 4);
	memcpy(out + 4, &total, 4);
	memcpy(out + 8, &len, 4);
	memcpy(out + 12, &zero, 4);
	memcpy(out + 16, body, len);
	crc = (uint32_t)crc32(0, out, total - GT_CAP_BLOCK_TAIL);
	memcpy(out + total - 8, &crc, 4);
	memcpy(out + total - 4, &total, 4);
	return total;
}

/* A 1.3 capture whose one ZSTD block holds data as its inner blocks; raw_len as given. */
static void zstd_walk(const uint8_t *data, size_t size, uint32_t raw_len)
{
	static const uint8_t hdr[] = {0x4d, 0x3c, 0x2b, 0x1a, 1, 0, 3, 0, 'k', '=', 'v', 0};
	size_t bound = ZSTD_compressBound(size), n, off;
	uint8_t *body = malloc(8 + bound), *file;
	uint32_t types = UINT32_MAX;

	if (!body)
		return;
	n = ZSTD_compress(body + 8, bound, data, size, 1);
	file = ZSTD_isError(n) ? NULL : malloc(64 + 8 + n + 32);
	if (file) {
		memcpy(body, &raw_len, 4);
		memcpy(body + 4, &types, 4);
		off = put_block(file, GT_BLK_HEADER, hdr, sizeof(hdr));
		off += put_block(file + off, GT_BLK_ZSTD, body, (uint32_t)(8 + n));
		open_mem_and_walk(file, off);
	}
	free(file);
	free(body);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy = malloc(size + 1);

	if (!copy)
		return 0;
	if (size && size <= GT_CAP_MAX_ZRAW) {
		zstd_walk(data, size, (uint32_t)size);
		zstd_walk(data, size, (uint32_t)(size / 2 + 1));
	}
	open_mem_and_walk(data, size);
	parse_all(data, size);
	memcpy(copy, data, size);
	fix_blocks(copy, size);
	open_mem_and_walk(copy, size);
	open_file_and_walk(copy, size);
	/* At an odd address the reader copies blocks to keep STACKS ips aligned. */
	memmove(copy + 1, copy, size);
	open_mem_and_walk(copy + 1, size);
	parse_all(copy + 1, size);
	free(copy);
	return 0;
}

#else /* GT_FUZZ_SEED_MAIN */

static int write_seed(const char *dir, const char *name, bool full, int level)
{
	static const char *const kv[] = {"host=seed", "kernel=6.18.0", "cmdline=prover -x"};
	static const uint64_t ips[] = {0x401000, 0x401234};
	static const uint8_t bid[20] = {0xde, 0xad, 0xbe, 0xef};
	static const char *const inl[] = {"crunch", "_ZN1a4stepEv"};
	struct capture_buf b = {};
	struct capture_writer *w;
	struct gt_offcpu off = {.hdr = {.type = GT_REC_OFFCPU, .size = sizeof(off)}};
	struct gt_name nm = {.hdr = {.type = GT_REC_NAME}};
	char path[4096], err[512];
	int ret = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	w = capture_writer__open(path, kv, 3, err, sizeof(err));
	if (!w) {
		fprintf(stderr, "fuzz_seed: %s\n", err);
		return -1;
	}
	ret |= capture_writer__compress(w, level);
	nm.hdr.size = (uint16_t)(offsetof(struct gt_name, name) + 4);
	memcpy(nm.name, "fft", 4);
	ret |= capture_writer__event(w, &off, sizeof(off));
	ret |= capture_writer__event(w, &nm, nm.hdr.size);
	/* Three GPU operations, two on one stream: a GPU_OPS block with a delta and two contexts. */
	for (uint32_t i = 0; i < 3; i++) {
		struct gt_gpu_op g = {.hdr = {.type = GT_REC_GPU_OP, .size = sizeof(g)}};

		g.rec.kind = (uint16_t)(1 + i % 2);
		g.rec.stream = i % 2;
		g.rec.start_ns = 1000 + 100 * i;
		g.rec.end_ns = 1050 + 100 * i;
		g.rec.op_id = 7 + i;
		ret |= capture_writer__event(w, &g, sizeof(g));
	}
	ret |= capture_writer__flush(w);
	if (full) {
		capture_buf__stack(&b, 1, 42, false, ips, 2);
		ret |= capture_writer__block(w, GT_BLK_STACKS, b.data, b.len);
		capture_buf__reset(&b);
		capture_buf__symbol(&b, 0x401234, 42, 4, "main", "/bin/p");
		ret |= capture_writer__block(w, GT_BLK_SYMBOLS, b.data, b.len);
		capture_buf__reset(&b);
		capture_buf__inline(&b, 0x401234, 42, GT_INLINE_CALLER, inl, 2);
		ret |= capture_writer__block(w, GT_BLK_INLINES, b.data, b.len);
		capture_buf__reset(&b);
		capture_buf__mapping(&b, 42, 0x400000, 0x500000, 0, bid, 20, "/bin/p");
		ret |= capture_writer__block(w, GT_BLK_MAPPINGS, b.data, b.len);
		capture_buf__reset(&b);
		capture_buf__probe(&b, 0, "malloc_trim", "libc", "allocator");
		ret |= capture_writer__block(w, GT_BLK_PROBES, b.data, b.len);
		capture_buf__reset(&b);
		capture_buf__kv(&b, "lost.ringbuf", "%u", 3);
		ret |= capture_writer__block(w, GT_BLK_COUNTERS, b.data, b.len);
		ret |= capture_writer__block(w, 0x77, "x", 1);
		capture_buf__reset(&b);
		capture_buf__kv(&b, "reason", "%s", "signal");
		ret |= capture_writer__block(w, GT_BLK_END, b.data, b.len);
	}
	ret |= capture_writer__close(w);
	capture_buf__free(&b);
	if (ret)
		fprintf(stderr, "fuzz_seed: cannot write %s\n", path);
	return ret ? -1 : 0;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: fuzz_seed CORPUS_DIR\n");
		return 2;
	}
	/* Compressed seeds: their ZSTD blocks take the decompressing path. */
	if (write_seed(argv[1], "seed-full.gtcap", true, 0) ||
	    write_seed(argv[1], "seed-small.gtcap", false, 0) ||
	    write_seed(argv[1], "seed-full-zstd.gtcap", true, 3) ||
	    write_seed(argv[1], "seed-small-zstd.gtcap", false, 1))
		return 1;
	return 0;
}

#endif /* GT_FUZZ_SEED_MAIN */
