// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_gpuops.c: the GPU_OPS block (capture 1.1): records come back byte for
 * byte whatever their values, a launch-bound loop costs under 32 bytes per
 * operation, damaged bodies are refused, and analysis and `info` read a
 * compact capture exactly as the same capture written the 1.0 way.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "analysis/analysis.h"
#include "capture/capture.h"
#include "capture/count.h"
#include "cli/cmds.h"
#include "gaptrace/gaptrace.h"
#include "support/util.h"

#include "synth_capture.h"

struct recs {
	struct gt_gpu_op *v;
	size_t n, cap;
	size_t other; /* records that are not 104-byte GPU_OPs */
};

static int collect(const void *rec, size_t size, void *ctx)
{
	struct recs *r = ctx;

	if (size != sizeof(struct gt_gpu_op)) {
		r->other++;
		return 0;
	}
	gt_grow((void **)&r->v, &r->cap, r->n, sizeof(*r->v));
	memcpy(&r->v[r->n++], rec, size);
	return 0;
}

static uint64_t rng_state = 0x243F6A8885A308D3ULL;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* A value from the edges of its range as often as from the middle. */
static uint64_t hostile(void)
{
	static const uint64_t edge[] = {
	    0, 1, UINT64_MAX, UINT64_MAX - 1, 1ULL << 63, (1ULL << 63) - 1, UINT32_MAX, 0x80, 0x7f};
	uint64_t k = rnd() % 4;

	if (k == 0)
		return edge[rnd() % GT_ARRAY_SIZE(edge)];
	if (k == 1)
		return rnd() >> (rnd() % 64);
	return rnd();
}

static void fill_hostile(struct gt_gpu_op *g, size_t i, uint32_t nstreams)
{
	memset(g, 0, sizeof(*g));
	g->hdr.type = GT_REC_GPU_OP;
	g->hdr.size = sizeof(*g);
	g->hdr.cpu = (uint32_t)hostile();
	g->hdr.ts_ns = hostile();
	g->pid = (uint32_t)hostile();
	g->tid = (uint32_t)hostile();
	/* Times that go backwards, wrap and end before they start. */
	g->rec.start_ns = hostile();
	g->rec.end_ns = (i % 3) ? g->rec.start_ns - (rnd() % 1000) : hostile();
	g->rec.op_id = hostile();
	g->rec.bytes = hostile();
	g->rec.device = (uint32_t)(rnd() % 4 ? rnd() % 4 : hostile());
	g->rec.stream = (uint32_t)(rnd() % nstreams);
	g->rec.context = (uint32_t)hostile();
	g->rec.name_id = (uint32_t)hostile();
	g->rec.kind = (uint16_t)hostile();
	g->rec.subkind = (uint16_t)hostile();
	g->rec.tid = (uint32_t)hostile();
	for (int k = 0; k < 3; k++) {
		g->rec.grid[k] = (uint32_t)hostile();
		g->rec.block[k] = (uint32_t)hostile();
	}
}

static uint64_t file_size(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return (uint64_t)st.st_size;
}

static char *tmp_path(void)
{
	char *p = gt_xstrdup("/tmp/gt_test_gpuops_XXXXXX");
	int fd = mkstemp(p);

	assert_true(fd >= 0);
	close(fd);
	/* The writer would keep the empty file as .old. */
	unlink(p);
	return p;
}

static struct capture_writer *open_writer(const char *path)
{
	const char *kv[] = {"pid=100", "comm=synth", "start_mono_ns=1000000000"};
	struct capture_writer *w;
	char err[256];

	w = capture_writer__open(path, kv, GT_ARRAY_SIZE(kv), err, sizeof(err));
	assert_non_null(w);
	return w;
}

/* Reads every record back; counts the blocks of each record-holding type. */
static void read_all(const char *path, struct recs *out, unsigned *nevents, unsigned *ngpu)
{
	struct capture_block b;
	struct capture *c;
	char err[256];
	unsigned maj, min;

	c = capture__open(path, err, sizeof(err));
	assert_non_null(c);
	capture__version(c, &maj, &min);
	assert_int_equal(maj, 1);
	assert_int_equal(min, GT_CAP_MINOR);
	*nevents = *ngpu = 0;
	while (capture__next(c, &b) == 1) {
		if (b.type == GT_BLK_EVENTS)
			(*nevents)++;
		else if (b.type == GT_BLK_GPU_OPS)
			(*ngpu)++;
		assert_int_equal(capture__records(b.type, b.body, b.len, collect, out), 0);
	}
	assert_int_equal(capture__nwarnings(c), 0);
	capture__close(c);
}

/* Hostile values and more streams than a block holds contexts: every byte comes back. */
static void test_gpuops_roundtrip_hostile(void **state)
{
	const size_t n = 20000;
	struct gt_gpu_op *in = gt_xcalloc(n, sizeof(*in));
	struct recs out = {};
	char *path = tmp_path();
	struct capture_writer *w = open_writer(path);
	unsigned nev, ngpu;

	(void)state;
	for (size_t i = 0; i < n; i++) {
		/* First half: few streams; second half: more than GT_CAP_GPU_MAX_CTX. */
		fill_hostile(&in[i], i, i < n / 2 ? 8 : 3 * GT_CAP_GPU_MAX_CTX);
		assert_int_equal(capture_writer__event(w, &in[i], sizeof(in[i])), 0);
	}
	assert_int_equal(capture_writer__events(w), n);
	assert_int_equal(capture_writer__close(w), 0);
	read_all(path, &out, &nev, &ngpu);
	assert_int_equal(out.n, n);
	assert_int_equal(out.other, 0);
	assert_int_equal(nev, 0);
	/* The context cap closed blocks early. */
	assert_true(ngpu >= 2);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(out.v[i].rec.start_ns, in[i].rec.start_ns);
		assert_int_equal(out.v[i].rec.end_ns, in[i].rec.end_ns);
		assert_int_equal(out.v[i].rec.op_id, in[i].rec.op_id);
		assert_int_equal(out.v[i].rec.stream, in[i].rec.stream);
		assert_int_equal(out.v[i].hdr.ts_ns, in[i].hdr.ts_ns);
		/* The struct has no padding: equal bytes are equal fields, all of them. */
		assert_memory_equal(&out.v[i], &in[i], sizeof(in[i]));
	}
	unlink(path);
	free(path);
	free(out.v);
	free(in);
}

/* Only exact-size GPU_OP records are coded; the rest stay EVENTS records. */
static void test_gpuops_other_records(void **state)
{
	uint8_t big[sizeof(struct gt_gpu_op) + 8] = {};
	struct gt_gpu_op g;
	struct gt_unit u = {};
	struct recs out = {};
	char *path = tmp_path();
	struct capture_writer *w = open_writer(path);
	unsigned nev, ngpu;

	(void)state;
	fill_hostile(&g, 0, 4);
	/* A future, longer GPU_OP record: the reader must see its extra bytes. */
	memcpy(big, &g, sizeof(g));
	((struct gt_hdr *)big)->size = sizeof(big);
	big[sizeof(big) - 1] = 0xAB;
	synth_hdr(&u.hdr, GT_REC_UNIT, sizeof(u), 5);
	assert_int_equal(capture_writer__event(w, &g, sizeof(g)), 0);
	assert_int_equal(capture_writer__event(w, big, sizeof(big)), 0);
	assert_int_equal(capture_writer__event(w, &u, sizeof(u)), 0);
	assert_int_equal(capture_writer__close(w), 0);
	read_all(path, &out, &nev, &ngpu);
	assert_int_equal(nev, 1);
	assert_int_equal(ngpu, 1);
	assert_int_equal(out.n, 1);
	assert_int_equal(out.other, 2);
	assert_memory_equal(&out.v[0], &g, sizeof(g));
	unlink(path);
	free(path);
	free(out.v);
}

/* compact_gpu off writes what a 1.0 reader can read: GPU ops in EVENTS. */
static void test_gpuops_plain_writer(void **state)
{
	struct gt_gpu_op g;
	struct recs out = {};
	char *path = tmp_path();
	struct capture_writer *w = open_writer(path);
	unsigned nev, ngpu;

	(void)state;
	fill_hostile(&g, 1, 4);
	assert_int_equal(capture_writer__event(w, &g, sizeof(g)), 0);
	assert_int_equal(capture_writer__compact_gpu(w, false), 0);
	assert_int_equal(capture_writer__event(w, &g, sizeof(g)), 0);
	assert_int_equal(capture_writer__close(w), 0);
	read_all(path, &out, &nev, &ngpu);
	assert_int_equal(ngpu, 1);
	assert_int_equal(nev, 1);
	assert_int_equal(out.n, 2);
	assert_memory_equal(&out.v[1], &g, sizeof(g));
	unlink(path);
	free(path);
	free(out.v);
}

/*
 * What CUPTI hands over in a launch-bound loop: per operation one kernel on
 * stream 7 and its cudaLaunchKernel API record, in batches of 64 records
 * that share the batch's ring-buffer header.
 */
static void put_launch_loop(struct capture_writer *w, size_t nops)
{
	uint64_t t = 5000000000ULL, batch_ts = t;
	size_t in_batch = 0;

	for (size_t i = 0; i < nops; i++) {
		struct gt_gpu_op k = {}, a = {};
		uint64_t launch = t + i * 6300 + rnd() % 700;

		if (in_batch >= 64) {
			batch_ts = launch;
			in_batch = 0;
		}
		a.hdr = (struct gt_hdr){GT_REC_GPU_OP, sizeof(a), 3, batch_ts};
		a.pid = 100;
		a.tid = 131;
		a.rec.kind = GAPTRACE_GPU_API;
		a.rec.start_ns = launch;
		a.rec.end_ns = launch + 2500 + rnd() % 900;
		a.rec.op_id = 1000 + 2 * i;
		a.rec.tid = 100;
		a.rec.name_id = 4;
		a.rec.subkind = 211;
		k = a;
		k.rec.kind = GAPTRACE_GPU_KERNEL;
		k.rec.start_ns = a.rec.end_ns + 1200 + rnd() % 300;
		k.rec.end_ns = k.rec.start_ns + 1800 + rnd() % 100;
		k.rec.stream = 7;
		k.rec.context = 1;
		k.rec.tid = 0;
		k.rec.subkind = 0;
		k.rec.name_id = 9;
		k.rec.grid[0] = 1;
		k.rec.block[0] = 1024;
		assert_int_equal(capture_writer__event(w, &a, sizeof(a)), 0);
		assert_int_equal(capture_writer__event(w, &k, sizeof(k)), 0);
		in_batch += 2;
	}
}

static void test_gpuops_launch_loop_size(void **state)
{
	const size_t nops = 100000;
	char *path = tmp_path();
	struct capture_writer *w = open_writer(path);
	struct capture_block b;
	struct capture *c;
	struct recs out = {};
	uint64_t gpu_bytes = 0, before;
	char err[256];

	(void)state;
	before = capture_writer__bytes(w);
	put_launch_loop(w, nops);
	assert_int_equal(capture_writer__close(w), 0);
	c = capture__open(path, err, sizeof(err));
	assert_non_null(c);
	while (capture__next(c, &b) == 1) {
		assert_int_equal(b.type, GT_BLK_GPU_OPS);
		gpu_bytes += GT_CAP_BLOCK_HEAD + ((b.len + 7) & ~7U) + GT_CAP_BLOCK_TAIL;
		assert_int_equal(capture__gpu_ops(b.body, b.len, collect, &out), 0);
	}
	capture__close(c);
	assert_int_equal(out.n, 2 * nops);
	/* The whole file past its header, framing included, per operation (2 records). */
	assert_int_equal(gpu_bytes, file_size(path) - before);
	print_message("launch loop: %.2f bytes per operation\n", (double)gpu_bytes / nops);
	assert_true(gpu_bytes <= 32 * nops);
	unlink(path);
	free(path);
	free(out.v);
}

/* The GPU_OPS body the writer makes of in[n] (one block). */
static uint8_t *gpu_body(const struct gt_gpu_op *in, size_t n, size_t *len)
{
	char *path = tmp_path();
	struct capture_writer *w = open_writer(path);
	struct capture_block b;
	struct capture *c;
	uint8_t *body = NULL;
	char err[256];

	for (size_t i = 0; i < n; i++)
		assert_int_equal(capture_writer__event(w, &in[i], sizeof(in[i])), 0);
	assert_int_equal(capture_writer__close(w), 0);
	c = capture__open(path, err, sizeof(err));
	assert_non_null(c);
	assert_int_equal(capture__next(c, &b), 1);
	assert_int_equal(b.type, GT_BLK_GPU_OPS);
	body = gt_xmalloc(b.len);
	memcpy(body, b.body, b.len);
	*len = b.len;
	assert_int_equal(capture__next(c, &b), 0);
	capture__close(c);
	unlink(path);
	free(path);
	return body;
}

/* Every cut of a body is refused, after handing back exactly the records before the cut. */
static void test_gpuops_truncated_every_byte(void **state)
{
	const size_t n = 300;
	struct gt_gpu_op *in = gt_xcalloc(n, sizeof(*in));
	size_t len;
	uint8_t *body;

	(void)state;
	for (size_t i = 0; i < n; i++)
		fill_hostile(&in[i], i, 5);
	body = gpu_body(in, n, &len);
	for (size_t cut = 0; cut < len; cut++) {
		struct recs out = {};
		uint8_t *copy = gt_xmalloc(cut + 1);

		/* A copy of exactly cut bytes, so ASan sees any read past it. */
		memcpy(copy, body, cut);
		assert_int_equal(capture__gpu_ops(copy, cut, collect, &out), -1);
		assert_true(out.n < n);
		for (size_t i = 0; i < out.n; i++)
			assert_memory_equal(&out.v[i], &in[i], sizeof(in[i]));
		free(copy);
		free(out.v);
	}
	/* A NULL callback walks the whole body. */
	assert_int_equal(capture__gpu_ops(body, len, NULL, NULL), 0);
	free(body);
	free(in);
}

static int stop_at_third(const void *rec, size_t size, void *ctx)
{
	(void)rec;
	(void)size;
	return ++*(int *)ctx == 3 ? 42 : 0;
}

/* Hand-made bodies: each malformation on its own is refused; the edge values are read. */
static void test_gpuops_malformed(void **state)
{
	/* count 1, flags 0 | new context kernel dev 0 stream 7 | mask 0, +1, +2, +3 */
	static const uint8_t good[] = {1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 7, 0, 2, 4, 6};
	uint8_t b[64];
	struct recs out = {};
	int calls = 0;

	(void)state;
	assert_int_equal(capture__gpu_ops(good, sizeof(good), collect, &out), 0);
	assert_int_equal(out.n, 1);
	assert_int_equal(out.v[0].hdr.type, GT_REC_GPU_OP);
	assert_int_equal(out.v[0].hdr.size, sizeof(struct gt_gpu_op));
	assert_int_equal(out.v[0].rec.kind, GAPTRACE_GPU_KERNEL);
	assert_int_equal(out.v[0].rec.stream, 7);
	assert_int_equal(out.v[0].rec.start_ns, 1);
	assert_int_equal(out.v[0].rec.end_ns, 3);
	assert_int_equal(out.v[0].rec.op_id, 3);
	out.n = 0;

	/* Unknown flags. */
	memcpy(b, good, sizeof(good));
	b[4] = 1;
	assert_int_equal(capture__gpu_ops(b, sizeof(good), NULL, NULL), -1);
	/* A count the body cannot hold, a count one too many, none at all. */
	memcpy(b, good, sizeof(good));
	b[3] = 0x80;
	assert_int_equal(capture__gpu_ops(b, sizeof(good), NULL, NULL), -1);
	b[3] = 0;
	b[0] = 2;
	assert_int_equal(capture__gpu_ops(b, sizeof(good), NULL, NULL), -1);
	b[0] = 0;
	assert_int_equal(capture__gpu_ops(b, sizeof(good), NULL, NULL), -1);
	assert_int_equal(capture__gpu_ops(b, 8, NULL, NULL), 0);
	assert_int_equal(capture__gpu_ops(b, 7, NULL, NULL), -1);
	/* A context index never defined. */
	memcpy(b, good, sizeof(good));
	b[8] = 1;
	assert_int_equal(capture__gpu_ops(b, sizeof(good), NULL, NULL), -1);
	/* A kind over 16 bits. */
	memcpy(b, good, 9);
	memcpy(b + 9, (const uint8_t[]){0x80, 0x80, 0x04, 0, 7, 0, 2, 4, 6}, 9);
	assert_int_equal(capture__gpu_ops(b, 18, NULL, NULL), -1);
	/* A mask bit nobody defined. */
	memcpy(b, good, sizeof(good));
	memcpy(b + 12, (const uint8_t[]){0x80, 0x08, 2, 4, 6}, 5);
	assert_int_equal(capture__gpu_ops(b, 17, NULL, NULL), -1);
	/* A 32-bit field (cpu) over 32 bits. */
	memcpy(b + 12, (const uint8_t[]){1, 2, 4, 6, 0xff, 0xff, 0xff, 0xff, 0x10}, 9);
	assert_int_equal(capture__gpu_ops(b, 21, NULL, NULL), -1);
	b[20] = 0x0f;
	assert_int_equal(capture__gpu_ops(b, 21, collect, &out), 0);
	assert_int_equal(out.v[0].hdr.cpu, UINT32_MAX);
	out.n = 0;
	/* A byte after the last entry. */
	memcpy(b, good, sizeof(good));
	b[sizeof(good)] = 0;
	assert_int_equal(capture__gpu_ops(b, sizeof(good) + 1, NULL, NULL), -1);
	/* The largest varint (zigzag 2^64-1 is -2^63) is read; one bit more is not. */
	memcpy(b, good, 13);
	memcpy(b + 13, (const uint8_t[]){0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1},
	       10);
	b[23] = 0;
	b[24] = 0;
	assert_int_equal(capture__gpu_ops(b, 25, collect, &out), 0);
	assert_int_equal(out.v[0].rec.start_ns, 1ULL << 63);
	assert_int_equal(out.v[0].rec.end_ns, 1ULL << 63);
	out.n = 0;
	b[22] = 2;
	assert_int_equal(capture__gpu_ops(b, 25, NULL, NULL), -1);
	b[22] = 0x81; /* an eleventh byte */
	assert_int_equal(capture__gpu_ops(b, 25, NULL, NULL), -1);
	/* The callback's value stops the walk. */
	{
		struct gt_gpu_op in[5];
		size_t len;
		uint8_t *body;

		for (size_t i = 0; i < 5; i++)
			fill_hostile(&in[i], i, 2);
		body = gpu_body(in, 5, &len);
		assert_int_equal(capture__gpu_ops(body, len, stop_at_third, &calls), 42);
		assert_int_equal(calls, 3);
		free(body);
	}
	assert_string_equal(capture__block_name(GT_BLK_GPU_OPS), "GPU_OPS");
	assert_true(capture__has_records(GT_BLK_GPU_OPS));
	assert_false(capture__has_records(GT_BLK_STACKS));
	assert_int_equal(capture__records(GT_BLK_STACKS, b, 3, NULL, NULL), 0);
	free(out.v);
}

/* A small prover-shaped capture: a lock wait and a sleep in two gaps, a launch loop between. */
static void synth_scenario(struct synth *s, bool compact)
{
	synth_open(s);
	assert_int_equal(capture_writer__compact_gpu(s->w, compact), 0);
	synth_thread(s, 200, "worker");
	synth_thread(s, 201, "holder");
	for (uint64_t i = 0; i < 50; i++)
		synth_op(s, 200, 10 + i, T0 + 10 * MS + i * 100 * US,
			 T0 + 10 * MS + i * 100 * US + 20 * US,
			 T0 + 10 * MS + i * 100 * US + 90 * US);
	synth_lock_wait(s, 200, T0 + 20 * MS, T0 + 60 * MS, T0 + 61 * MS, 201);
	synth_op(s, 200, 100, T0 + 62 * MS, T0 + 62 * MS + 50 * US, T0 + 70 * MS);
	synth_off(s, 200, T0 + 71 * MS, T0 + 120 * MS, T0 + 120 * MS, 0, GT_NR_clock_nanosleep, 0,
		  0, 0, -1);
	synth_op(s, 200, 101, T0 + 121 * MS, T0 + 121 * MS + 50 * US, T0 + 130 * MS);
}

static void same_result(const struct an_result *a, const struct an_result *b)
{
	assert_int_equal(a->records, b->records);
	assert_int_equal(a->ngaps, b->ngaps);
	assert_int_equal(a->ndevices, b->ndevices);
	for (size_t i = 0; i < a->ndevices; i++) {
		assert_int_equal(a->devices[i].ops, b->devices[i].ops);
		assert_int_equal(a->devices[i].busy_ns, b->devices[i].busy_ns);
	}
	for (size_t i = 0; i < a->ngaps; i++) {
		assert_int_equal(a->gaps[i].start_ns, b->gaps[i].start_ns);
		assert_int_equal(a->gaps[i].end_ns, b->gaps[i].end_ns);
		assert_int_equal(a->gaps[i].tid, b->gaps[i].tid);
		assert_int_equal(a->gaps[i].launch_ns, b->gaps[i].launch_ns);
		assert_memory_equal(a->gaps[i].by_cat, b->gaps[i].by_cat,
				    sizeof(a->gaps[i].by_cat));
	}
	assert_int_equal(a->clock.pairs, b->clock.pairs);
	assert_int_equal(a->clock.violations, b->clock.violations);
}

/* Analysis reads a compact capture exactly as the same capture written the 1.0 way. */
static void test_gpuops_analysis_same(void **state)
{
	struct synth plain, compact;
	struct an_result *rp, *rc;

	(void)state;
	synth_scenario(&plain, false);
	synth_scenario(&compact, true);
	rp = synth_run(&plain, NULL);
	rc = synth_run(&compact, NULL);
	/* The known answer first, so two equally wrong readers cannot pass. */
	assert_int_equal(rc->devices[0].ops, 52);
	assert_int_equal(rc->ngaps, 2);
	assert_int_equal(rc->gaps[0].tid, 200);
	assert_true(rc->gaps[0].by_cat[GT_CAT_LOCK] >= 39 * MS);
	assert_true(rc->gaps[1].by_cat[GT_CAT_SLEEP] >= 48 * MS);
	assert_int_equal(rc->clock.pairs, 52);
	same_result(rp, rc);
	an_result__free(rp);
	an_result__free(rc);
}

/* `gaptrace info --format json` counts the GPU_OPS records and their bytes. */
static void test_gpuops_info_json(void **state)
{
	char out_path[] = "/tmp/gt_test_gpuops_info_XXXXXX";
	char *argv[] = {"info", "--format", "json", NULL, NULL};
	struct synth s;
	char *text;
	char want[32];
	long n;
	int fd, saved, rc;
	FILE *f;

	(void)state;
	synth_scenario(&s, true);
	synth_close(&s);
	argv[3] = s.path;
	fd = mkstemp(out_path);
	assert_true(fd >= 0);
	fflush(stdout);
	saved = dup(1);
	dup2(fd, 1);
	rc = cmd_info(4, argv);
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	close(fd);
	assert_int_equal(rc, 0);
	f = fopen(out_path, "r");
	assert_non_null(f);
	text = gt_xcalloc(1, 65536);
	n = (long)fread(text, 1, 65535, f);
	fclose(f);
	assert_true(n > 0);
	assert_non_null(strstr(text, "\"gpu_op\": 52"));
	assert_non_null(strstr(text, "\"records\": 52"));
	snprintf(want, sizeof(want), "\"minor\": %d", GT_CAP_MINOR);
	assert_non_null(strstr(text, want));
	unlink(out_path);
	unlink(s.path);
	free(text);
}

/* cmd(argc, argv)'s stdout as a string (freed by the caller); *rc its exit code. */
static char *stdout_of(int (*cmd)(int, char **), int argc, char **argv, int *rc)
{
	char path[] = "/tmp/gt_test_gpuops_out_XXXXXX";
	int fd = mkstemp(path), saved;
	char *text = gt_xcalloc(1, 65536);
	FILE *f;

	assert_true(fd >= 0);
	fflush(stdout);
	saved = dup(1);
	dup2(fd, 1);
	*rc = cmd(argc, argv);
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	close(fd);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_true(fread(text, 1, 65535, f) > 0);
	fclose(f);
	unlink(path);
	return text;
}

/* The "clock" object of a JSON text: from its key to the first closing brace. */
static char *clock_object(const char *json)
{
	const char *a = strstr(json, "\"clock\": {"), *b;

	assert_non_null(a);
	b = strchr(a, '}');
	assert_non_null(b);
	return gt_xstrndup(a, (size_t)(b - a + 1));
}

/* info's JSON clock check has the shape and values of report's (one printer). */
static void test_gpuops_info_clock_as_report(void **state)
{
	char *iargv[] = {"info", "--format", "json", NULL, NULL};
	char *rargv[] = {"report", "--format", "json", NULL, NULL};
	char *info, *report, *ic, *rc_;
	struct synth s;
	int rc;

	(void)state;
	synth_scenario(&s, true);
	synth_close(&s);
	iargv[3] = rargv[3] = s.path;
	info = stdout_of(cmd_info, 4, iargv, &rc);
	assert_int_equal(rc, 0);
	report = stdout_of(cmd_report, 4, rargv, &rc);
	assert_int_equal(rc, 0);
	ic = clock_object(info);
	rc_ = clock_object(report);
	/* The known answer first: 52 ops matched to their launches. */
	assert_non_null(strstr(ic, "\"pairs\": 52,"));
	assert_non_null(strstr(ic, "\"host_view\": false,"));
	assert_non_null(strstr(ic, "\"offset_max_ns\": "));
	assert_string_equal(ic, rc_);
	free(ic);
	free(rc_);
	free(info);
	free(report);
	unlink(s.path);
}

static int count_kv(const char *key, const char *value, void *ctx)
{
	(void)value;
	*(int *)ctx += !strcmp(key, "end_mono_ns");
	return 0;
}

/* capture__count: blocks and records of a known capture, counters handed over, rewound. */
static void test_gpuops_count(void **state)
{
	struct capture_counts n;
	struct capture_block b;
	struct capture *c;
	struct synth s;
	char err[256];
	int kv = 0;

	(void)state;
	synth_scenario(&s, true);
	synth_close(&s);
	c = capture__open(s.path, err, sizeof(err));
	assert_non_null(c);
	capture__count(c, &n, count_kv, &kv);
	assert_int_equal(n.recs[GT_REC_GPU_OP], 52);
	assert_int_equal(n.gpu_block_recs, 52);
	assert_true(n.blocks[GT_BLK_GPU_OPS] >= 1);
	assert_int_equal(n.blocks[GT_BLK_END], 1);
	assert_int_equal(n.unknown_blocks, 0);
	assert_int_equal(n.unknown_recs, 0);
	assert_int_equal(kv, 1); /* END's end_mono_ns */
	/* Rewound: the blocks can be read again. */
	assert_int_equal(capture__next(c, &b), 1);
	capture__close(c);
	unlink(s.path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_gpuops_roundtrip_hostile),
	    cmocka_unit_test(test_gpuops_other_records),
	    cmocka_unit_test(test_gpuops_plain_writer),
	    cmocka_unit_test(test_gpuops_launch_loop_size),
	    cmocka_unit_test(test_gpuops_truncated_every_byte),
	    cmocka_unit_test(test_gpuops_malformed),
	    cmocka_unit_test(test_gpuops_analysis_same),
	    cmocka_unit_test(test_gpuops_info_json),
	    cmocka_unit_test(test_gpuops_info_clock_as_report),
	    cmocka_unit_test(test_gpuops_count),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
