// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fuzz_analysis.c: structure-aware libFuzzer target for the analysis and every
 * output built on it.
 *
 * The custom mutator parses an input capture into its blocks and the EVENTS
 * blocks into records, then mutates records the way a hostile traced program
 * or a broken producer would: valid types and sizes, but extreme, colliding,
 * wrapping or out-of-order field values, hostile names; it inserts, deletes
 * and duplicates records and rewrites strings in the STACKS/SYMBOLS/PROBES/
 * MAPPINGS blocks.  It then rebuilds every block with correct lengths and
 * CRCs, so each mutant gets past the reader and into the analysis.
 *
 * The target runs, in-process, the commands' own entry points (cmd_report
 * text/json/csv/html, cmd_flame folded/svg, cmd_export, cmd_info text/json,
 * cmd_diff of the input against itself and against the first half of its
 * records) with stdout swapped for a memory stream.  It also checks what the
 * analysis promises and abort()s when a promise breaks:
 *   sums    each gap's categories sum exactly to its length, and the totals
 *           to the sum over gaps
 *   window  every gap lies inside the capture's window, start <= end
 *   json    every JSON output (report, info, export, diff) parses
 * GT_FUZZ_SKIP=sums,window,json turns single checks off (for a false
 * positive); GT_FUZZ_VERBOSE=1 keeps the commands' stderr.
 *
 * -DGT_FUZZ_REPLAY leaves out the mutator and the libFuzzer entry points:
 * tests/test_fuzz_replay.c includes this file to replay the regression inputs
 * and the corpus through fuzz_analysis_one() in `make test`.
 * -DGT_FUZZ_SEED_MAIN builds instead the writer of the synthetic seeds.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include "analysis/analysis.h"
#include "capture/capture.h"
#include "cli/cmds.h"
#include "gaptrace/gaptrace.h"
#include "support/util.h"

#ifndef GT_FUZZ_SEED_MAIN
#include "../minijson.h"

/* ---- the capture as blocks and records ---- */

#define FZ_MAX_BLOCKS 4096

struct fz_block {
	uint32_t type;
	uint8_t *body; /* EVENTS: NULL, the records are in recs */
	size_t len;
	uint8_t **recs; /* each a malloc'ed record, gt_hdr first, hdr.size bytes */
	size_t nrecs, cap;
};

struct fz_cap {
	uint8_t *header; /* HEADER body */
	size_t header_len;
	struct fz_block *blocks;
	size_t nblocks;
};

static uint16_t rec_size(const uint8_t *r)
{
	return ((const struct gt_hdr *)r)->size;
}

static void fz_free(struct fz_cap *c)
{
	for (size_t i = 0; i < c->nblocks; i++) {
		free(c->blocks[i].body);
		for (size_t k = 0; k < c->blocks[i].nrecs; k++)
			free(c->blocks[i].recs[k]);
		free(c->blocks[i].recs);
	}
	free(c->blocks);
	free(c->header);
	memset(c, 0, sizeof(*c));
}

static uint8_t *memdup(const void *p, size_t n)
{
	uint8_t *d = malloc(n ? n : 1);

	if (d && n)
		memcpy(d, p, n);
	return d;
}

static struct fz_block *fz_add_block(struct fz_cap *c, uint32_t type)
{
	struct fz_block *b;

	if (c->nblocks >= FZ_MAX_BLOCKS)
		return NULL;
	b = realloc(c->blocks, (c->nblocks + 1) * sizeof(*b));
	if (!b)
		return NULL;
	c->blocks = b;
	b = &c->blocks[c->nblocks++];
	memset(b, 0, sizeof(*b));
	b->type = type;
	return b;
}

/* Inserts rec (taken over) at index at of block b; frees it on failure. */
static int fz_insert_rec(struct fz_block *b, size_t at, uint8_t *rec)
{
	if (!rec)
		return -1;
	if (b->nrecs == b->cap) {
		size_t ncap = b->cap ? 2 * b->cap : 16;
		uint8_t **n = realloc(b->recs, ncap * sizeof(*n));

		if (!n) {
			free(rec);
			return -1;
		}
		b->recs = n;
		b->cap = ncap;
	}
	if (at > b->nrecs)
		at = b->nrecs;
	memmove(b->recs + at + 1, b->recs + at, (b->nrecs - at) * sizeof(*b->recs));
	b->recs[at] = rec;
	b->nrecs++;
	return 0;
}

static int parse_rec_cb(const void *rec, size_t size, void *ctx)
{
	struct fz_block *b = ctx;

	/* The reader accepts any size >= 16; keep only those the header states. */
	if (size != ((const struct gt_hdr *)rec)->size)
		return 0;
	return fz_insert_rec(b, b->nrecs, memdup(rec, size)) ? 1 : 0;
}

/*
 * Splits a capture into blocks (lengths checked, CRCs ignored: a mutant of
 * a damaged file is repaired).  Returns 0, or -1 when it is not a capture.
 */
static int fz_parse(const uint8_t *p, size_t size, struct fz_cap *c)
{
	size_t off = 0;

	memset(c, 0, sizeof(*c));
	while (size - off >= GT_CAP_BLOCK_HEAD + GT_CAP_BLOCK_TAIL) {
		uint32_t type, total, blen;
		struct fz_block *b;

		memcpy(&type, p + off, 4);
		memcpy(&total, p + off + 4, 4);
		memcpy(&blen, p + off + 8, 4);
		if (total < GT_CAP_BLOCK_HEAD + GT_CAP_BLOCK_TAIL || total > size - off ||
		    blen > total - GT_CAP_BLOCK_HEAD - GT_CAP_BLOCK_TAIL)
			break;
		if (off == 0) {
			if (type != GT_BLK_HEADER || blen < 8)
				return -1;
			c->header = memdup(p + off + GT_CAP_BLOCK_HEAD, blen);
			c->header_len = blen;
			if (!c->header)
				return -1;
		} else if ((b = fz_add_block(c, type))) {
			if (type == GT_BLK_EVENTS)
				capture__events(p + off + GT_CAP_BLOCK_HEAD, blen, parse_rec_cb, b);
			else {
				b->body = memdup(p + off + GT_CAP_BLOCK_HEAD, blen);
				b->len = b->body ? blen : 0;
			}
		}
		off += total;
	}
	if (!c->header) {
		fz_free(c);
		return -1;
	}
	return 0;
}

struct fz_out {
	uint8_t *p;
	size_t len, max;
	bool full;
};

static void out_put(struct fz_out *o, const void *d, size_t n)
{
	if (o->full || n > o->max - o->len) {
		o->full = true;
		return;
	}
	memcpy(o->p + o->len, d, n);
	o->len += n;
}

/* One block with its padding, CRC and tail, or nothing when it does not fit. */
static void out_block(struct fz_out *o, uint32_t type, const uint8_t *const *parts,
		      const size_t *lens, size_t nparts)
{
	static const uint8_t zero[8];
	size_t blen = 0, start = o->len;
	uint32_t head[4], total, crc;

	for (size_t i = 0; i < nparts; i++)
		blen += lens[i];
	total = (uint32_t)(GT_CAP_BLOCK_HEAD + ((blen + 7) & ~(size_t)7) + GT_CAP_BLOCK_TAIL);
	if (o->full || total > o->max - o->len) {
		o->full = true;
		return;
	}
	head[0] = type;
	head[1] = total;
	head[2] = (uint32_t)blen;
	head[3] = 0;
	out_put(o, head, sizeof(head));
	for (size_t i = 0; i < nparts; i++)
		out_put(o, parts[i], lens[i]);
	out_put(o, zero, ((blen + 7) & ~(size_t)7) - blen);
	crc = (uint32_t)crc32(0, o->p + start, (uInt)(o->len - start));
	out_put(o, &crc, 4);
	out_put(o, &total, 4);
}

/*
 * Writes c as a capture into out (at most max bytes).  nrec_limit caps the
 * EVENTS records written (SIZE_MAX: all).  Returns the length, 0 if the
 * HEADER alone does not fit; *dropped: a block was left out for lack of room.
 */
static size_t fz_build(const struct fz_cap *c, uint8_t *out, size_t max, size_t nrec_limit,
		       bool *dropped)
{
	struct fz_out o = {.p = out, .max = max};
	size_t written = 0;
	const uint8_t *hp = c->header;

	out_block(&o, GT_BLK_HEADER, &hp, &c->header_len, 1);
	if (o.full)
		return 0;
	for (size_t i = 0; i < c->nblocks; i++) {
		const struct fz_block *b = &c->blocks[i];
		size_t before = o.len;

		if (b->type != GT_BLK_EVENTS) {
			const uint8_t *bp = b->body;

			out_block(&o, b->type, &bp, &b->len, 1);
		} else {
			size_t n = b->nrecs;
			size_t *lens;

			if (n > nrec_limit - written)
				n = nrec_limit - written;
			if (!n)
				continue;
			lens = malloc(n * sizeof(*lens));
			if (!lens)
				break;
			for (size_t k = 0; k < n; k++)
				lens[k] = rec_size(b->recs[k]);
			out_block(&o, b->type, (const uint8_t *const *)b->recs, lens, n);
			free(lens);
			written += n;
		}
		/* A block that does not fit is left out; smaller ones after it may fit. */
		if (o.full) {
			o.len = before;
			o.full = false;
			*dropped = true;
		}
	}
	return o.len;
}

static size_t fz_nrecs(const struct fz_cap *c)
{
	size_t n = 0;

	for (size_t i = 0; i < c->nblocks; i++)
		n += c->blocks[i].nrecs;
	return n;
}

/* ---- the target ---- */

enum { CHECK_SUMS = 1, CHECK_WINDOW = 2, CHECK_JSON = 4 };

static unsigned checks = CHECK_SUMS | CHECK_WINDOW | CHECK_JSON;
static FILE *quiet_err;

static void fz_violation(const char *what, const struct an_result *r, size_t gap)
{
	const struct an_gap *g = r ? &r->gaps[gap] : NULL;

	fprintf(quiet_err ? quiet_err : stderr, "fuzz_analysis: invariant broken: %s", what);
	if (g)
		fprintf(quiet_err ? quiet_err : stderr,
			" (gap %zu: %llu..%llu, %llu ns; capture %llu..%llu)", gap,
			(unsigned long long)g->start_ns, (unsigned long long)g->end_ns,
			(unsigned long long)g->duration_ns, (unsigned long long)r->start_ns,
			(unsigned long long)r->end_ns);
	fprintf(quiet_err ? quiet_err : stderr, "; GT_FUZZ_SKIP turns this check off\n");
	fflush(NULL);
	abort();
}

static void fz_init_env(void)
{
	static bool done;
	const char *skip = getenv("GT_FUZZ_SKIP");

	if (done)
		return;
	done = true;
	if (skip) {
		if (strstr(skip, "sums"))
			checks &= ~(unsigned)CHECK_SUMS;
		if (strstr(skip, "window"))
			checks &= ~(unsigned)CHECK_WINDOW;
		if (strstr(skip, "json"))
			checks &= ~(unsigned)CHECK_JSON;
	}
	/*
	 * The commands' one-line warnings would flood the fuzzer's log: stderr
	 * (the FILE, not fd 2 where the sanitizers report) goes to /dev/null.
	 */
	if (!getenv("GT_FUZZ_VERBOSE")) {
		FILE *n = fopen("/dev/null", "w");

		if (n) {
			quiet_err = stderr;
			stderr = n;
		}
	}
}

static void check_result(const struct an_result *r)
{
	uint64_t totals[GT_CAT_MAX] = {}, gap_ns = 0;

	for (size_t i = 0; i < r->ngaps; i++) {
		const struct an_gap *g = &r->gaps[i];
		uint64_t sum = 0;

		for (int k = 0; k < GT_CAT_MAX; k++) {
			sum += g->by_cat[k];
			totals[k] += g->by_cat[k];
		}
		gap_ns += g->duration_ns;
		if ((checks & CHECK_SUMS) && sum != g->duration_ns)
			fz_violation("a gap's categories do not sum to its length", r, i);
		if ((checks & CHECK_WINDOW) &&
		    (g->end_ns < g->start_ns || g->duration_ns != g->end_ns - g->start_ns ||
		     g->start_ns < r->start_ns || g->end_ns > r->end_ns))
			fz_violation("a gap lies outside the capture or ends before it starts", r,
				     i);
	}
	if (!(checks & CHECK_SUMS))
		return;
	for (int k = 0; k < GT_CAT_MAX; k++)
		if (totals[k] != r->totals[k])
			fz_violation("category totals differ from the sum over gaps", r, 0);
	if (gap_ns != r->gap_ns_total)
		fz_violation("gap_ns_total differs from the sum of gap lengths", r, 0);
}

/* The analysis as the commands run it, checked against its promises. */
static void analyse_direct(const uint8_t *data, size_t size, bool pieces, bool keep_all)
{
	struct an_result *r = NULL;
	struct an_opts o;
	struct capture *c;
	char err[512];

	c = capture__open_mem(data, size, "fuzz", err, sizeof(err));
	if (!c)
		return;
	an_opts__defaults(&o);
	o.pieces = pieces;
	o.keep_all = keep_all;
	if (!analysis__run(c, &o, &r, err, sizeof(err))) {
		check_result(r);
		an_result__free(r);
	}
	capture__close(c);
}

static void check_json(const char *cmd, const char *text, size_t len)
{
	const char *err = NULL;
	struct mj *v;

	if (!(checks & CHECK_JSON) || !len)
		return;
	v = mj_parse(text, &err);
	if (!v) {
		fprintf(quiet_err ? quiet_err : stderr,
			"fuzz_analysis: '%s' wrote invalid JSON (%s); GT_FUZZ_SKIP=json turns this "
			"check off\n",
			cmd, err ? err : "?");
		fflush(NULL);
		abort();
	}
	mj_free(v);
}

/*
 * Runs one command with its stdout in a memory stream; json: the output must
 * parse.  argv is the command line without the program name.
 */
static void run_cmd(int (*fn)(int, char **), bool json, int argc, char **argv)
{
	FILE *saved = stdout, *m;
	char *buf = NULL;
	size_t len = 0;
	int rc;

	m = open_memstream(&buf, &len);
	if (!m)
		return;
	stdout = m;
	rc = fn(argc, argv);
	stdout = saved;
	fclose(m);
	if (rc == GT_EXIT_OK && json)
		check_json(argv[0], buf, len);
	free(buf);
}

static int memfd_path(int *fd, const char *name, const uint8_t *data, size_t size, char *path,
		      size_t plen)
{
	if (*fd < 0)
		*fd = memfd_create(name, MFD_CLOEXEC);
	if (*fd < 0 || ftruncate(*fd, 0) || pwrite(*fd, data, size, 0) != (ssize_t)size)
		return -1;
	snprintf(path, plen, "/proc/self/fd/%d", *fd);
	return 0;
}

/* The input's first half of records (every other block kept), for diff. */
static size_t half_capture(const uint8_t *data, size_t size, uint8_t **out)
{
	struct fz_cap c;
	size_t len = 0;
	bool dropped = false;

	*out = NULL;
	if (fz_parse(data, size, &c))
		return 0;
	*out = malloc(size + 64);
	if (*out)
		len = fz_build(&c, *out, size + 64, fz_nrecs(&c) / 2, &dropped);
	fz_free(&c);
	return len;
}

void fuzz_analysis_one(const uint8_t *data, size_t size);
void fuzz_analysis_one(const uint8_t *data, size_t size)
{
	static int fd_a = -1, fd_b = -1;
	char a[64], b[64];
	uint8_t *half;
	size_t hlen;

	fz_init_env();
	analyse_direct(data, size, true, false);
	analyse_direct(data, size, false, true);
	if (memfd_path(&fd_a, "fuzz_a", data, size, a, sizeof(a)))
		return;
	hlen = half_capture(data, size, &half);
	if (!hlen || memfd_path(&fd_b, "fuzz_b", half, hlen, b, sizeof(b)))
		snprintf(b, sizeof(b), "%s", a);
	free(half);
	{
		char *rt[] = {"report", a, NULL};
		char *rj[] = {"report", a, "-f", "json", NULL};
		char *rc[] = {"report", a, "-f", "csv", "--depth", "16", NULL};
		char *rh[] = {"report", a, "-f", "html", NULL};
		char *ff[] = {"flame", a, NULL};
		char *fs[] = {"flame", a, "-f", "svg", NULL};
		char *ex[] = {"export", a, "-o", "-", NULL};
		char *it[] = {"info", a, NULL};
		char *ij[] = {"info", a, "-f", "json", NULL};
		char *ds[] = {"diff", a, a, NULL};
		char *dj[] = {"diff", a, b, "-f", "json", NULL};
		char *dv[] = {"diff", b, a, "--flame", "svg", NULL};

		run_cmd(cmd_report, false, 2, rt);
		run_cmd(cmd_report, true, 4, rj);
		run_cmd(cmd_report, false, 6, rc);
		run_cmd(cmd_report, false, 4, rh);
		run_cmd(cmd_flame, false, 2, ff);
		run_cmd(cmd_flame, false, 4, fs);
		run_cmd(cmd_export, true, 4, ex);
		run_cmd(cmd_info, false, 2, it);
		run_cmd(cmd_info, true, 4, ij);
		run_cmd(cmd_diff, false, 3, ds);
		run_cmd(cmd_diff, true, 5, dj);
		run_cmd(cmd_diff, false, 5, dv);
	}
}

#ifndef GT_FUZZ_REPLAY

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_analysis_one(data, size);
	return 0;
}

/* ---- the mutator ---- */

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);

static uint64_t rng_state;

static uint64_t rnd(void)
{
	uint64_t x = rng_state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return rng_state = x;
}

static size_t rndn(size_t n)
{
	return n ? (size_t)(rnd() % n) : 0;
}

enum fz_role {
	R_TS,	 /* a timestamp */
	R_ID,	 /* pid, tid, cpu, device, stream */
	R_KEY,	 /* op_id, unit_id, func_id, name_id: looked up in maps */
	R_STACK, /* s32 stack id */
	R_SYS,	 /* s32 syscall number */
	R_FLAGS, /* bit flags */
	R_ENUM,	 /* small enumerations */
	R_COUNT, /* counts, bytes, sizes */
	R_VAL,	 /* arguments, ips: anything */
};

struct fz_field {
	uint16_t type;
	uint16_t off;
	uint8_t width;
	uint8_t role;
};

#define F(t, s, m, r)                                                   \
	{                                                               \
		t, offsetof(struct s, m), sizeof(((struct s *)0)->m), r \
	}
#define G(m, r)                                                                             \
	{                                                                                   \
		GT_REC_GPU_OP,                                                              \
		    offsetof(struct gt_gpu_op, rec) + offsetof(struct gaptrace_gpu_rec, m), \
		    sizeof(((struct gaptrace_gpu_rec *)0)->m), r                            \
	}

static const struct fz_field fields[] = {
    F(GT_REC_OFFCPU, gt_offcpu, pid, R_ID),
    F(GT_REC_OFFCPU, gt_offcpu, tid, R_ID),
    F(GT_REC_OFFCPU, gt_offcpu, off_ns, R_TS),
    F(GT_REC_OFFCPU, gt_offcpu, wake_ns, R_TS),
    F(GT_REC_OFFCPU, gt_offcpu, on_ns, R_TS),
    F(GT_REC_OFFCPU, gt_offcpu, state, R_FLAGS),
    F(GT_REC_OFFCPU, gt_offcpu, flags, R_FLAGS),
    F(GT_REC_OFFCPU, gt_offcpu, waker_pid, R_ID),
    F(GT_REC_OFFCPU, gt_offcpu, waker_tid, R_ID),
    F(GT_REC_OFFCPU, gt_offcpu, syscall_nr, R_SYS),
    F(GT_REC_OFFCPU, gt_offcpu, ustack_id, R_STACK),
    F(GT_REC_OFFCPU, gt_offcpu, kstack_id, R_STACK),
    F(GT_REC_OFFCPU, gt_offcpu, waker_syscall, R_SYS),
    {GT_REC_OFFCPU, offsetof(struct gt_offcpu, args), 8, R_VAL},
    {GT_REC_OFFCPU, offsetof(struct gt_offcpu, args) + 8, 8, R_VAL},
    {GT_REC_OFFCPU, offsetof(struct gt_offcpu, args) + 16, 8, R_VAL},
    {GT_REC_OFFCPU, offsetof(struct gt_offcpu, args) + 24, 8, R_VAL},
    F(GT_REC_SAMPLE, gt_sample, pid, R_ID),
    F(GT_REC_SAMPLE, gt_sample, tid, R_ID),
    F(GT_REC_SAMPLE, gt_sample, syscall_nr, R_SYS),
    F(GT_REC_SAMPLE, gt_sample, ustack_id, R_STACK),
    F(GT_REC_SAMPLE, gt_sample, kstack_id, R_STACK),
    F(GT_REC_SAMPLE, gt_sample, flags, R_FLAGS),
    F(GT_REC_SAMPLE, gt_sample, ip, R_VAL),
    F(GT_REC_SAMPLE, gt_sample, pcount, R_VAL),
    F(GT_REC_CALL, gt_call, pid, R_ID),
    F(GT_REC_CALL, gt_call, tid, R_ID),
    F(GT_REC_CALL, gt_call, enter_ns, R_TS),
    F(GT_REC_CALL, gt_call, exit_ns, R_TS),
    F(GT_REC_CALL, gt_call, func_id, R_KEY),
    F(GT_REC_CALL, gt_call, flags, R_FLAGS),
    F(GT_REC_CALL, gt_call, arg0, R_VAL),
    F(GT_REC_CALL, gt_call, ret, R_VAL),
    F(GT_REC_UNIT, gt_unit, pid, R_ID),
    F(GT_REC_UNIT, gt_unit, tid, R_ID),
    F(GT_REC_UNIT, gt_unit, unit_id, R_KEY),
    F(GT_REC_UNIT, gt_unit, begin, R_ENUM),
    F(GT_REC_GPU_LAUNCH, gt_gpu_launch, pid, R_ID),
    F(GT_REC_GPU_LAUNCH, gt_gpu_launch, tid, R_ID),
    F(GT_REC_GPU_LAUNCH, gt_gpu_launch, device, R_ID),
    F(GT_REC_GPU_LAUNCH, gt_gpu_launch, stream, R_ID),
    F(GT_REC_GPU_LAUNCH, gt_gpu_launch, op_id, R_KEY),
    F(GT_REC_GPU_OP, gt_gpu_op, pid, R_ID),
    F(GT_REC_GPU_OP, gt_gpu_op, tid, R_ID),
    G(start_ns, R_TS),
    G(end_ns, R_TS),
    G(op_id, R_KEY),
    G(bytes, R_COUNT),
    G(device, R_ID),
    G(stream, R_ID),
    G(context, R_ID),
    G(name_id, R_KEY),
    G(kind, R_ENUM),
    G(subkind, R_ENUM),
    G(tid, R_ID),
    G(grid, R_COUNT),
    G(block, R_COUNT),
    F(GT_REC_TASK, gt_task, pid, R_ID),
    F(GT_REC_TASK, gt_task, tid, R_ID),
    F(GT_REC_TASK, gt_task, event, R_ENUM),
    F(GT_REC_TASK, gt_task, parent_tid, R_ID),
    F(GT_REC_NAME, gt_name, pid, R_ID),
    F(GT_REC_NAME, gt_name, name_id, R_KEY),
    F(GT_REC_NAME, gt_name, len, R_COUNT),
    F(GT_REC_LOSS, gt_loss, from_ns, R_TS),
    F(GT_REC_LOSS, gt_loss, to_ns, R_TS),
    F(GT_REC_LOSS, gt_loss, count, R_COUNT),
    F(GT_REC_LOSS, gt_loss, kind, R_ENUM),
};

/* Values seen in the input, by role: a mutant reuses them to make ids and times collide. */
#define POOL 64
struct pool {
	uint64_t v[R_VAL + 1][POOL];
	size_t n[R_VAL + 1];
};

static uint64_t get_field(const uint8_t *r, const struct fz_field *f)
{
	uint64_t v = 0;

	if (f->width == 8) {
		memcpy(&v, r + f->off, 8);
	} else if (f->width == 4) {
		uint32_t x;

		memcpy(&x, r + f->off, 4);
		v = x;
	} else {
		uint16_t x;

		memcpy(&x, r + f->off, 2);
		v = x;
	}
	return v;
}

static void set_field(uint8_t *r, const struct fz_field *f, uint64_t v)
{
	if (f->width == 8) {
		memcpy(r + f->off, &v, 8);
	} else if (f->width == 4) {
		uint32_t x = (uint32_t)v;

		memcpy(r + f->off, &x, 4);
	} else {
		uint16_t x = (uint16_t)v;

		memcpy(r + f->off, &x, 2);
	}
}

static void pool_add(struct pool *p, int role, uint64_t v)
{
	if (p->n[role] < POOL)
		p->v[role][p->n[role]++] = v;
	else
		p->v[role][rndn(POOL)] = v;
}

static void pool_fill(struct pool *p, const struct fz_cap *c)
{
	memset(p, 0, sizeof(*p));
	for (size_t i = 0; i < c->nblocks; i++)
		for (size_t k = 0; k < c->blocks[i].nrecs; k++) {
			const uint8_t *r = c->blocks[i].recs[k];
			const struct gt_hdr *h = (const void *)r;

			pool_add(p, R_TS, h->ts_ns);
			for (size_t f = 0; f < GT_ARRAY_SIZE(fields); f++)
				if (fields[f].type == h->type &&
				    fields[f].off + fields[f].width <= h->size)
					pool_add(p, fields[f].role, get_field(r, &fields[f]));
		}
}

static uint64_t pool_pick(const struct pool *p, int role)
{
	if (!p->n[role])
		return 0;
	return p->v[role][rndn(p->n[role])];
}

/* A value for a field of role: boundary values, reused ones, nearby ones. */
static uint64_t pick_value(const struct pool *p, int role, uint64_t cur, unsigned width)
{
	static const uint64_t bounds[] = {
	    0,
	    1,
	    2,
	    UINT64_MAX,
	    UINT64_MAX - 1,
	    UINT32_MAX,
	    (uint64_t)UINT32_MAX + 1,
	    INT32_MAX,
	    (uint64_t)INT32_MIN,
	    (uint64_t)INT64_MAX,
	    (uint64_t)INT64_MIN,
	    (uint64_t)INT64_MAX + 1,
	    0x40000000,
	    0xffff,
	    0x10000,
	};
	uint64_t big = width == 8 ? UINT64_MAX : width == 4 ? UINT32_MAX : UINT16_MAX;

	switch (rndn(role == R_TS ? 9 : 7)) {
	case 0:
	case 1:
		return bounds[rndn(GT_ARRAY_SIZE(bounds))];
	case 2:
		/* Collide with a value of any role: an op id equal to a unit id, a tid... */
		return pool_pick(p, (int)rndn(R_VAL + 1));
	case 3:
	case 4:
		return pool_pick(p, role);
	case 5:
		return cur + (uint64_t)(int64_t)((int)rndn(5) - 2);
	case 6:
		switch (role) {
		case R_SYS:
			return rndn(2) ? (uint64_t)(int64_t)-1 : rndn(335);
		case R_STACK:
			return rndn(2) ? (uint64_t)(int64_t) - (int64_t)rndn(30)
				       : 0x40000000 + rndn(4);
		case R_ENUM:
		case R_FLAGS:
			return rndn(2) ? rndn(16) : 1ULL << rndn(width * 8);
		default:
			return big - rndn(3);
		}
	case 7:
		/* Out of order: back in time. */
		return cur - (uint64_t)rndn(3) * (1ULL << rndn(40));
	default:
		/* A huge duration: far in the future, or wrapping. */
		return cur + (1ULL << (40 + rndn(24)));
	}
}

static struct fz_block *pick_events(struct fz_cap *c, bool nonempty)
{
	size_t n = 0, want;

	for (size_t i = 0; i < c->nblocks; i++)
		if (c->blocks[i].type == GT_BLK_EVENTS && (!nonempty || c->blocks[i].nrecs))
			n++;
	if (!n)
		return NULL;
	want = rndn(n);
	for (size_t i = 0; i < c->nblocks; i++)
		if (c->blocks[i].type == GT_BLK_EVENTS && (!nonempty || c->blocks[i].nrecs) &&
		    !want--)
			return &c->blocks[i];
	return NULL;
}

static const uint8_t hostile_bytes[] = {0x1b, 0x07, '\r', '\n', 0x9b, 0xff, 0xc3, 0x00, ';',
					'"',  '\\', '<',  '&',	'\'', 0x7f, 0xe2, 0x80};

static void hostile_string(uint8_t *s, size_t len)
{
	static const char *const words[] = {
	    "\x1b[6n", "\x1b]0;pwn\x07", "\xc3\x28", "\xe2\x82", "\xf0\x9f\x98\x80",
	    "a;b",     "</script>",	 "%s%n"};
	size_t i = 0;

	if (!len)
		return;
	if (rndn(2)) {
		const char *w = words[rndn(GT_ARRAY_SIZE(words))];

		while (i < len && *w)
			s[i++] = (uint8_t)*w++;
	}
	for (; i < len; i++)
		s[i] = rndn(3) ? hostile_bytes[rndn(sizeof(hostile_bytes))]
			       : (uint8_t)('a' + rndn(26));
}

/* A new record of a random known type, its fields from the pool. */
static uint8_t *new_record(const struct pool *p, uint64_t ts)
{
	static const uint16_t sizes[GT_REC_MAX] = {
	    [GT_REC_OFFCPU] = sizeof(struct gt_offcpu),
	    [GT_REC_SAMPLE] = sizeof(struct gt_sample),
	    [GT_REC_CALL] = sizeof(struct gt_call),
	    [GT_REC_UNIT] = sizeof(struct gt_unit),
	    [GT_REC_GPU_LAUNCH] = sizeof(struct gt_gpu_launch),
	    [GT_REC_GPU_OP] = sizeof(struct gt_gpu_op),
	    [GT_REC_TASK] = sizeof(struct gt_task),
	    [GT_REC_NAME] = offsetof(struct gt_name, name) + 8,
	    [GT_REC_LOSS] = sizeof(struct gt_loss),
	};
	uint16_t type;
	struct gt_hdr *h;
	uint8_t *r;

	do
		type = (uint16_t)(1 + rndn(GT_REC_MAX - 1));
	while (!sizes[type]);
	r = calloc(1, sizes[type]);
	if (!r)
		return NULL;
	h = (struct gt_hdr *)r;
	h->type = type;
	h->size = sizes[type];
	h->ts_ns = ts;
	for (size_t f = 0; f < GT_ARRAY_SIZE(fields); f++)
		if (fields[f].type == type)
			set_field(r, &fields[f],
				  rndn(4) ? pool_pick(p, fields[f].role)
					  : pick_value(p, fields[f].role, ts, fields[f].width));
	if (type == GT_REC_TASK)
		hostile_string(r + offsetof(struct gt_task, comm), GT_COMM_LEN - rndn(2));
	if (type == GT_REC_NAME) {
		((struct gt_name *)r)->len = 7;
		hostile_string(r + offsetof(struct gt_name, name), 7);
	}
	return r;
}

struct str_ctx {
	uint8_t *body;
	size_t len;
	size_t target, seen;
	uint8_t *hit;
	size_t hit_len;
	uint8_t *stack_id; /* STACKS: the entry's stack_id field */
	uint64_t *ips;
	uint16_t nr;
};

static void str_candidate(struct str_ctx *x, const char *s, size_t len)
{
	if (len && x->seen++ == x->target) {
		x->hit = (uint8_t *)(uintptr_t)s;
		x->hit_len = len;
	}
}

static int sym_cb(const struct capture_symbol *s, void *ctx)
{
	str_candidate(ctx, s->name, s->name_len);
	str_candidate(ctx, s->module, s->module_len);
	return 0;
}

static int map_cb(const struct capture_mapping *m, void *ctx)
{
	str_candidate(ctx, m->path, m->path_len);
	return 0;
}

static int probe_cb(const struct capture_probe *p, void *ctx)
{
	str_candidate(ctx, p->name, p->name_len);
	str_candidate(ctx, p->module, p->module_len);
	str_candidate(ctx, p->category, p->category_len);
	return 0;
}

static int stack_cb(const struct capture_stack *s, void *ctx)
{
	struct str_ctx *x = ctx;

	if (x->seen++ == x->target) {
		x->ips = (uint64_t *)(uintptr_t)s->ips;
		x->nr = s->nr;
		x->stack_id = (uint8_t *)(uintptr_t)s->ips - 16;
	}
	return 0;
}

/*
 * Rewrites a string of a SYMBOLS/MAPPINGS/PROBES body, or a stack's id or
 * frames, in place (lengths unchanged).  Returns 0 when something changed.
 */
static int mutate_aux(struct fz_block *b, const struct pool *p)
{
	struct str_ctx x = {.body = b->body, .len = b->len};

	/* Count first, then pick one. */
	for (int pass = 0; pass < 2; pass++) {
		x.target = pass ? rndn(x.seen) : SIZE_MAX;
		x.seen = 0;
		if (b->type == GT_BLK_SYMBOLS)
			capture__symbols(b->body, b->len, sym_cb, &x);
		else if (b->type == GT_BLK_MAPPINGS)
			capture__mappings(b->body, b->len, map_cb, &x);
		else if (b->type == GT_BLK_PROBES)
			capture__probes(b->body, b->len, probe_cb, &x);
		else if (b->type == GT_BLK_STACKS)
			capture__stacks(b->body, b->len, stack_cb, &x);
		else
			return -1;
		if (!x.seen)
			return -1;
	}
	if (x.hit) {
		hostile_string(x.hit, x.hit_len);
		return 0;
	}
	if (x.stack_id) {
		if (rndn(2) || !x.nr) {
			int32_t id = (int32_t)pick_value(p, R_STACK, 0, 4);

			memcpy(x.stack_id, &id, 4);
		} else {
			uint64_t ip = pick_value(p, R_VAL, 0, 8);

			memcpy(&x.ips[rndn(x.nr)], &ip, 8);
		}
		return 0;
	}
	return -1;
}

/* Sets a "key=<number>" of a KV body (HEADER, END) to an extreme number. */
static int mutate_kv(uint8_t *body, size_t len, size_t skip)
{
	static const char *const vals[] = {"0",
					   "1",
					   "18446744073709551615",
					   "9223372036854775807",
					   "9223372036854775808",
					   "-1",
					   "4294967296",
					   "x"};
	size_t n = 0, want, i;

	for (i = skip; i < len; i++)
		if (body[i] == '=')
			n++;
	if (!n)
		return -1;
	want = rndn(n);
	for (i = skip; i < len; i++)
		if (body[i] == '=' && !want--)
			break;
	/* Overwrite the value in place, padding with NULs (an empty key=value after). */
	{
		const char *v = vals[rndn(GT_ARRAY_SIZE(vals))];
		size_t k = i + 1, end = k;

		while (end < len && body[end])
			end++;
		while (k < end && *v)
			body[k++] = (uint8_t)*v++;
		while (k < end)
			body[k++] = '0';
	}
	return 0;
}

/* One structural mutation.  Returns 0 when it changed something. */
static int mutate_once(struct fz_cap *c, const struct pool *p)
{
	struct fz_block *b = pick_events(c, true);
	size_t i, nf = 0, cand[16];
	struct gt_hdr *h;
	uint8_t *r;

	switch (rndn(12)) {
	case 0:
	case 1:
	case 2:
	case 3: /* one field of one record */
		if (!b)
			return -1;
		r = b->recs[rndn(b->nrecs)];
		h = (struct gt_hdr *)r;
		for (size_t f = 0; f < GT_ARRAY_SIZE(fields) && nf < GT_ARRAY_SIZE(cand); f++)
			if (fields[f].type == h->type && fields[f].off + fields[f].width <= h->size)
				cand[nf++] = f;
		if (!nf || !rndn(6)) {
			/* The header: its time, or its CPU. */
			if (rndn(4))
				h->ts_ns = pick_value(p, R_TS, h->ts_ns, 8);
			else
				h->cpu = (uint32_t)pick_value(p, R_ID, h->cpu, 4);
			return 0;
		}
		i = cand[rndn(nf)];
		set_field(r, &fields[i],
			  pick_value(p, fields[i].role, get_field(r, &fields[i]), fields[i].width));
		return 0;
	case 4: /* a hostile name */
		if (!b)
			return -1;
		r = b->recs[rndn(b->nrecs)];
		h = (struct gt_hdr *)r;
		if (h->type == GT_REC_TASK && h->size >= sizeof(struct gt_task))
			hostile_string(r + offsetof(struct gt_task, comm), GT_COMM_LEN - rndn(2));
		else if (h->type == GT_REC_NAME && h->size > offsetof(struct gt_name, name))
			hostile_string(r + offsetof(struct gt_name, name),
				       h->size - offsetof(struct gt_name, name) - rndn(2));
		else
			return -1;
		return 0;
	case 5: /* delete */
		if (!b)
			return -1;
		i = rndn(b->nrecs);
		free(b->recs[i]);
		memmove(b->recs + i, b->recs + i + 1, (b->nrecs - i - 1) * sizeof(*b->recs));
		b->nrecs--;
		return 0;
	case 6: /* duplicate, next to it or elsewhere */
	{
		struct fz_block *to = pick_events(c, false);

		if (!b || !to)
			return -1;
		r = b->recs[rndn(b->nrecs)];
		return fz_insert_rec(to, rndn(to->nrecs + 1), memdup(r, rec_size(r)));
	}
	case 7: /* insert a new record */
		if (!b && !(b = pick_events(c, false)) && !(b = fz_add_block(c, GT_BLK_EVENTS)))
			return -1;
		return fz_insert_rec(b, rndn(b->nrecs + 1), new_record(p, pool_pick(p, R_TS)));
	case 8: /* swap two records: timestamps out of order */
		if (!b || b->nrecs < 2)
			return -1;
		{
			size_t x = rndn(b->nrecs), y = rndn(b->nrecs);

			r = b->recs[x];
			b->recs[x] = b->recs[y];
			b->recs[y] = r;
		}
		return 0;
	case 9: /* a string or stack of the other blocks */
		if (!c->nblocks)
			return -1;
		for (int tries = 0; tries < 8; tries++)
			if (!mutate_aux(&c->blocks[rndn(c->nblocks)], p))
				return 0;
		return -1;
	case 10: /* a number in the HEADER or END */
		if (rndn(2))
			return mutate_kv(c->header, c->header_len, 8);
		for (i = 0; i < c->nblocks; i++)
			if (c->blocks[i].type == GT_BLK_END || c->blocks[i].type == GT_BLK_COUNTERS)
				return mutate_kv(c->blocks[i].body, c->blocks[i].len, 0);
		return -1;
	default: /* bytes of one record, its type and size kept */
		if (!b)
			return -1;
		r = b->recs[rndn(b->nrecs)];
		{
			struct gt_hdr keep = *(struct gt_hdr *)r;

			LLVMFuzzerMutate(r + 8, rec_size(r) - 8, rec_size(r) - 8);
			((struct gt_hdr *)r)->type = keep.type;
			((struct gt_hdr *)r)->size = keep.size;
		}
		return 0;
	}
}

/* A minimal capture to start from when the input is not one. */
static void fresh_capture(struct fz_cap *c)
{
	static const char kv[] = "pid=100\0comm=fuzz\0start_mono_ns=1000000000\0";
	uint32_t bom = GT_CAP_BOM;
	uint16_t v[2] = {GT_CAP_MAJOR, GT_CAP_MINOR};

	memset(c, 0, sizeof(*c));
	c->header_len = 8 + sizeof(kv) - 1;
	c->header = malloc(c->header_len);
	if (!c->header)
		return;
	memcpy(c->header, &bom, 4);
	memcpy(c->header + 4, v, 4);
	memcpy(c->header + 8, kv, sizeof(kv) - 1);
	fz_add_block(c, GT_BLK_EVENTS);
}

static size_t emit(struct fz_cap *c, uint8_t *data, size_t max_size)
{
	bool dropped = false;
	size_t len = fz_build(c, data, max_size, SIZE_MAX, &dropped);

	/* Too large: drop records from the end until every block fits. */
	while (dropped) {
		struct fz_block *b = NULL;

		for (size_t i = c->nblocks; i-- > 0;)
			if (c->blocks[i].nrecs) {
				b = &c->blocks[i];
				break;
			}
		if (!b)
			break;
		for (size_t k = (b->nrecs + 7) / 8; k > 0; k--)
			free(b->recs[--b->nrecs]);
		dropped = false;
		len = fz_build(c, data, max_size, SIZE_MAX, &dropped);
	}
	return len;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
	struct fz_cap c;
	struct pool *p;
	size_t len, n;

	rng_state = seed * 0x9e3779b97f4a7c15ULL + 1;
	/* Now and then the plain byte mutator: damage the reader must survive. */
	if (!rndn(32))
		return LLVMFuzzerMutate(data, size, max_size);
	if (fz_parse(data, size, &c))
		fresh_capture(&c);
	if (!c.header)
		return LLVMFuzzerMutate(data, size, max_size);
	p = malloc(sizeof(*p));
	if (!p) {
		fz_free(&c);
		return size;
	}
	pool_fill(p, &c);
	n = 1 + rndn(rndn(4) ? 3 : 12);
	for (size_t i = 0, done = 0; done < n && i < 4 * n; i++)
		done += !mutate_once(&c, p);
	len = emit(&c, data, max_size);
	free(p);
	fz_free(&c);
	return len ? len : size;
}

size_t LLVMFuzzerCustomCrossOver(const uint8_t *d1, size_t s1, const uint8_t *d2, size_t s2,
				 uint8_t *out, size_t max_out_size, unsigned int seed);
size_t LLVMFuzzerCustomCrossOver(const uint8_t *d1, size_t s1, const uint8_t *d2, size_t s2,
				 uint8_t *out, size_t max_out_size, unsigned int seed)
{
	struct fz_cap a, b;
	struct fz_block *to, *from;
	size_t len = 0;

	rng_state = seed * 0x9e3779b97f4a7c15ULL + 7;
	if (fz_parse(d1, s1, &a))
		return 0;
	if (fz_parse(d2, s2, &b)) {
		fz_free(&a);
		return 0;
	}
	to = pick_events(&a, false);
	from = pick_events(&b, true);
	if (to && from) {
		/* A run of B's records spliced into A: two programs' ids and times meet. */
		size_t start = rndn(from->nrecs), n = 1 + rndn(from->nrecs - start);
		size_t at = rndn(to->nrecs + 1);

		for (size_t k = 0; k < n; k++)
			fz_insert_rec(
			    to, at + k,
			    memdup(from->recs[start + k], rec_size(from->recs[start + k])));
	}
	/* And sometimes B's stacks, symbols or probes as well. */
	for (size_t i = 0; i < b.nblocks; i++)
		if (b.blocks[i].type != GT_BLK_EVENTS && b.blocks[i].type != GT_BLK_END &&
		    !rndn(3)) {
			struct fz_block *nb = fz_add_block(&a, b.blocks[i].type);

			if (nb) {
				nb->body = memdup(b.blocks[i].body, b.blocks[i].len);
				nb->len = nb->body ? b.blocks[i].len : 0;
			}
		}
	len = emit(&a, out, max_out_size);
	fz_free(&a);
	fz_free(&b);
	return len;
}

#endif /* GT_FUZZ_REPLAY */

#else /* GT_FUZZ_SEED_MAIN */

/* ---- synthetic seeds: hostile values the mutator would take long to reach ---- */

static void die(const char *what)
{
	fprintf(stderr, "fuzz_seed: %s\n", what);
	exit(1);
}

#define assert_true(x)	       ((x) ? (void)0 : die(#x))
#define assert_non_null(x)     assert_true((x) != NULL)
#define assert_int_equal(a, b) assert_true((a) == (b))
#include "../synth_capture.h"

static void finish(struct synth *s, const char *dir, const char *name)
{
	char to[4096];

	synth_close(s);
	snprintf(to, sizeof(to), "%s/%s", dir, name);
	if (rename(s->path, to)) {
		/* Across file systems: copy. */
		char cmd[8300];

		snprintf(cmd, sizeof(cmd), "cp '%s' '%s' && rm -f '%s'", s->path, to, s->path);
		if (system(cmd))
			die("cannot move a seed into the corpus");
	}
}

int main(int argc, char **argv)
{
	struct synth s;

	if (argc != 2)
		die("usage: fuzz_seed CORPUS_DIR");
	/* Two units, a lock wait on the critical path, stacks and a probe. */
	synth_open(&s);
	synth_thread(&s, 101, "worker");
	synth_thread(&s, 102, "holder");
	synth_unit(&s, 101, 1, T0 + 1 * MS, true);
	synth_op(&s, 101, 10, T0 + 2 * MS, T0 + 3 * MS, T0 + 10 * MS);
	synth_unit(&s, 101, 1, T0 + 11 * MS, false);
	synth_lock_wait(&s, 101, T0 + 11 * MS, T0 + 30 * MS, T0 + 31 * MS, 102);
	synth_sample(&s, 102, T0 + 20 * MS, 5);
	synth_call(&s, 102, 0, T0 + 15 * MS, T0 + 29 * MS);
	synth_unit(&s, 101, 2, T0 + 32 * MS, true);
	synth_op(&s, 101, 11, T0 + 33 * MS, T0 + 35 * MS, T0 + 50 * MS);
	synth_unit(&s, 101, 2, T0 + 51 * MS, false);
	synth_probe(&s, 0, "malloc_trim", "allocator");
	synth_stack(&s, 5, 0x401000, "_ZN6prover4trimEv");
	finish(&s, argv[1], "synth-lock.gtcap");

	/* Colliding and extreme ids: unit and op id 2^64-1, a tid of 0, a name with ESC. */
	synth_open(&s);
	synth_thread(&s, 101, "\x1b[6nevil\x9b");
	synth_unit(&s, 101, UINT64_MAX, T0 + 1 * MS, true);
	synth_op(&s, 101, UINT64_MAX, T0 + 2 * MS, T0 + 3 * MS, T0 + 10 * MS);
	synth_op(&s, 0, UINT64_MAX, T0 + 12 * MS, T0 + 20 * MS, T0 + 25 * MS);
	synth_unit(&s, 101, UINT64_MAX, T0 + 30 * MS, false);
	synth_unit(&s, 101, 0, T0 + 31 * MS, true);
	synth_op(&s, 101, 0, T0 + 40 * MS, T0 + 45 * MS, T0 + 46 * MS);
	synth_off(&s, 101, T0 + 26 * MS, T0 + 35 * MS, T0 + 39 * MS, 0, GT_NR_futex, 128, 2, 101,
		  -14);
	finish(&s, argv[1], "synth-collide.gtcap");

	/* Times out of order and an op that lasts forever. */
	synth_open(&s);
	synth_thread(&s, 101, "t");
	synth_op(&s, 101, 1, T0 + 50 * MS, T0 + 60 * MS, T0 + 70 * MS);
	synth_op(&s, 101, 2, T0 + 5 * MS, T0 + 1 * MS, T0 + 2 * MS);
	synth_op(&s, 101, 3, T0 + 80 * MS, T0 + 90 * MS, UINT64_MAX);
	synth_sample_f(&s, 101, T0 + 75 * MS, GT_NR_clock_nanosleep, 1, -1);
	synth_call(&s, 101, UINT32_MAX, T0 + 74 * MS, T0 + 73 * MS);
	finish(&s, argv[1], "synth-order.gtcap");
	return 0;
}

#endif /* GT_FUZZ_SEED_MAIN */
