// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sink_bench.c: the recorder's CPU per GPU record on the path ring buffer ->
 * sink -> capture, without BPF: full gpu_batch records of a launch-bound loop
 * (a kernel and its launch API record per operation) fed to record_sink__feed,
 * written to a real capture file.  Prints ns of CPU per GPU record and the
 * capture bytes per operation.
 *
 * Usage: sink_bench [BATCHES] [FILE]   (default 20000 batches, a file in /tmp)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "capture/capture.h"
#include "gaptrace/gaptrace.h"
#include "record/record_sink.h"

static int no_stack(void *ctx, int32_t id, uint64_t *ips)
{
	(void)ctx;
	(void)id;
	(void)ips;
	return -1;
}

static int no_resolve(void *ctx, uint32_t pid, uint64_t ip, const char **name, uint32_t *off,
		      const char **module)
{
	(void)ctx;
	(void)pid;
	(void)ip;
	(void)name;
	(void)off;
	(void)module;
	return -1;
}

static void no_task(void *ctx, uint32_t pid, bool exec)
{
	(void)ctx;
	(void)pid;
	(void)exec;
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* One full batch: 32 operations, each an API record then its kernel. */
static void fill_batch(struct gt_gpu_batch *b, uint64_t *t, uint64_t *corr, uint64_t seq)
{
	struct gaptrace_gpu_rec *r = (struct gaptrace_gpu_rec *)b->data;

	b->hdr = (struct gt_hdr){GT_REC_GPU_BATCH, sizeof(*b), 1, *t};
	b->pid = 100;
	b->tid = 120;
	b->count = GT_GPU_BATCH_MAX;
	b->rec_size = GT_GPU_REC_SIZE;
	for (uint32_t i = 0; i < GT_GPU_BATCH_MAX; i += 2, (*corr)++) {
		uint64_t jitter = (seq * 2654435761U + i) % 900;

		memset(&r[i], 0, 2 * sizeof(*r));
		r[i].kind = GAPTRACE_GPU_API;
		r[i].start_ns = *t;
		r[i].end_ns = *t + 2500 + jitter;
		r[i].op_id = *corr;
		r[i].tid = 100;
		r[i].subkind = 211;
		r[i].name_id = 3;
		r[i + 1].kind = GAPTRACE_GPU_KERNEL;
		r[i + 1].start_ns = r[i].end_ns + 1500;
		r[i + 1].end_ns = r[i + 1].start_ns + 2000 + jitter / 3;
		r[i + 1].op_id = *corr;
		r[i + 1].stream = 13;
		r[i + 1].context = 1;
		r[i + 1].name_id = 5;
		r[i + 1].grid[0] = 132;
		r[i + 1].block[0] = 128;
		*t += 6300 + jitter;
	}
}

int main(int argc, char **argv)
{
	static const struct record_sink_ops ops = {no_stack, no_resolve, no_task};
	long batches = argc > 1 ? atol(argv[1]) : 20000;
	char path[64] = "/tmp/gt_sink_bench_XXXXXX";
	const char *kv[] = {"pid=100"};
	struct gt_gpu_batch *b = calloc(1, sizeof(*b));
	struct record_sink s;
	struct capture_writer *w;
	uint64_t t = 1000000000ULL, corr = 1, c0, c1;
	char err[256];
	struct stat st;

	if (argc > 2) {
		snprintf(path, sizeof(path), "%s", argv[2]);
	} else {
		int fd = mkstemp(path);

		if (fd < 0)
			return 1;
		close(fd);
		unlink(path);
	}
	w = capture_writer__open(path, kv, 1, err, sizeof(err));
	if (!w || !b) {
		fprintf(stderr, "sink_bench: %s\n", err);
		return 1;
	}
	record_sink__init(&s, &(struct record_sink_cfg){
				  .ops = &ops, .w = w, .path = path, .min_gap_ns = 1000000});
	c0 = cpu_ns();
	for (long i = 0; i < batches; i++) {
		fill_batch(b, &t, &corr, (uint64_t)i);
		record_sink__feed(&s, b, sizeof(*b));
		/* The recorder flushes every 250 ms; at ~150k ops/s that is every ~1200 batches. */
		if (i % 1200 == 1199)
			record_sink__flush(&s);
	}
	record_sink__flush(&s);
	capture_writer__close(w);
	c1 = cpu_ns();
	record_sink__fini(&s);
	if (stat(path, &st))
		return 1;
	printf("sink_bench: %ld batches, %llu GPU records: %.1f ns of CPU per GPU record "
	       "(filling the batches included), %.2f capture bytes per operation\n",
	       batches, (unsigned long long)s.gpu_ops * 2,
	       (double)(c1 - c0) / (double)(s.gpu_ops * 2), (double)st.st_size / (double)s.gpu_ops);
	if (argc <= 2)
		unlink(path);
	free(b);
	return 0;
}
