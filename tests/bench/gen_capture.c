// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * gen_capture.c: writes a large synthetic capture shaped like a prover's
 * (GPU units with launches, worker and helper threads switching, samples,
 * uprobe calls) for measuring `gaptrace report` throughput, or with
 * --units N, N small USDT-marked units (2 kernels, a 2-6 ms gap with a few
 * records) for measuring `gaptrace diff`, or with --empty-units N, 30 kernels
 * in 30 units and N more units without GPU work (a hostile producer's cheap
 * input: the analysis must not do or write work in proportion to N).
 * --zstd LEVEL writes ZSTD blocks as `record` does (default: plain blocks),
 * flushing every 100k records as the recorder does every 100 ms (--flush N:
 * every N records, the batch size of a less busy recording).
 * Usage: gen_capture [--units N | --empty-units N] [--seed S] [--zstd LEVEL] [--flush N]
 *        FILE [NRECORDS]
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/capture.h"
#include "gaptrace/gaptrace.h"
#include "support/util.h"

#define NTHREADS 8
#define PID	 4242

static struct capture_writer *w;
static uint64_t nrec;
static bool zstd;
static uint64_t flush_every = 100000;

static void put(void *rec, uint16_t type, uint16_t size, uint64_t ts)
{
	struct gt_hdr *h = rec;

	h->type = type;
	h->size = size;
	h->cpu = (uint32_t)(nrec & 1);
	h->ts_ns = ts;
	if (capture_writer__event(w, rec, size)) {
		fprintf(stderr, "gen_capture: write failed\n");
		exit(1);
	}
	nrec++;
	/* A busy recorder writes ~100k records in the 100 ms between its flushes. */
	if (zstd && !(nrec % flush_every) && capture_writer__flush(w)) {
		fprintf(stderr, "gen_capture: write failed\n");
		exit(1);
	}
}

static void usage(void)
{
	fprintf(stderr,
		"usage: gen_capture [--units N | --empty-units N] [--seed S] [--zstd LEVEL] "
		"[--flush N] FILE "
		"[NRECORDS]: "
		"give NRECORDS, --units N or --empty-units N\n");
	exit(2);
}

static void put_unit(uint64_t id, uint64_t ts, bool begin)
{
	struct gt_unit u = {.pid = PID, .tid = PID, .unit_id = id, .begin = begin};

	put(&u, GT_REC_UNIT, sizeof(u), ts);
}

/* One small unit: begin, 2 kernels of 1 ms, end, then a 2-6 ms gap with activity. */
static void small_unit(uint64_t id, uint64_t *t, uint64_t *op, unsigned *seed)
{
	uint64_t gap_end;

	put_unit(id, *t, true);
	for (int k = 0; k < 2; k++) {
		struct gt_gpu_launch l = {.pid = PID, .tid = PID, .op_id = *op};
		struct gt_gpu_op g = {.pid = PID, .tid = PID + 1};

		put(&l, GT_REC_GPU_LAUNCH, sizeof(l), *t);
		g.rec.start_ns = *t + 20000;
		g.rec.end_ns = *t + 1000000;
		g.rec.op_id = (*op)++;
		g.rec.kind = 1;
		put(&g, GT_REC_GPU_OP, sizeof(g), g.rec.end_ns);
		*t += 1000000;
	}
	put_unit(id, *t, false);
	gap_end = *t + 2000000 + (rand_r(seed) % 5) * 1000000ULL;
	while (*t < gap_end) {
		struct gt_offcpu o = {.pid = PID, .tid = PID};
		struct gt_sample s = {.pid = PID, .tid = PID, .syscall_nr = -1};

		o.off_ns = *t;
		o.wake_ns = *t + 300000 + (rand_r(seed) % 200) * 1000;
		o.on_ns = o.wake_ns + 20000;
		o.syscall_nr = (rand_r(seed) % 2) ? 202 : 230;
		o.args[1] = 128;
		o.args[2] = rand_r(seed) % 3;
		o.waker_tid = PID + 1 + (uint32_t)(rand_r(seed) % (NTHREADS - 1));
		o.ustack_id = o.kstack_id = -1;
		put(&o, GT_REC_OFFCPU, sizeof(o), o.on_ns);
		s.ustack_id = s.kstack_id = -1;
		put(&s, GT_REC_SAMPLE, sizeof(s), o.on_ns + 500000);
		*t += 1000000;
	}
}

int main(int argc, char **argv)
{
	const char *kv[] = {"pid=4242", "comm=bench", "start_mono_ns=1000000000",
			    "sample_period_ns=1000000", "gpu_source=usdt"};
	static const struct option lopts[] = {
	    {"units", required_argument, NULL, 'u'}, {"empty-units", required_argument, NULL, 'e'},
	    {"seed", required_argument, NULL, 's'},  {"zstd", required_argument, NULL, 'z'},
	    {"flush", required_argument, NULL, 'f'}, {}};
	struct capture_buf probes = {}, end = {};
	uint64_t target = 0, units = 0, empty = 0, t = 1000000000ULL, op = 1;
	unsigned seed = 1;
	int level = 0;
	char err[256];
	int c;

	while ((c = getopt_long(argc, argv, "u:e:s:z:f:", lopts, NULL)) != -1) {
		if (c == 'u')
			units = strtoull(optarg, NULL, 10);
		else if (c == 'e')
			empty = strtoull(optarg, NULL, 10);
		else if (c == 's')
			seed = (unsigned)strtoul(optarg, NULL, 10);
		else if (c == 'z')
			level = atoi(optarg);
		else if (c == 'f')
			flush_every = strtoull(optarg, NULL, 10);
		else
			usage();
	}
	if (!flush_every || optind < argc - 2 || optind >= argc)
		usage();
	if (optind == argc - 2 && !(target = strtoull(argv[optind + 1], NULL, 10)))
		usage();
	if (!target && !units && !empty)
		usage();
	if (empty)
		units = 30;
	w = capture_writer__open(argv[optind], kv, GT_ARRAY_SIZE(kv), err, sizeof(err));
	if (!w) {
		fprintf(stderr, "gen_capture: %s\n", err);
		return 1;
	}
	if (capture_writer__compress(w, level)) {
		fprintf(stderr, "gen_capture: bad --zstd %d: use 0-19\n", level);
		return 2;
	}
	zstd = level > 0;
	capture_buf__probe(&probes, 0, "malloc_trim", "libc.so.6", "allocator");
	capture_writer__block(w, GT_BLK_PROBES, probes.data, probes.len);
	for (uint32_t i = 0; i < NTHREADS; i++) {
		struct gt_task task = {.pid = PID, .tid = PID + i, .event = GT_TASK_SEEN};

		snprintf(task.comm, sizeof(task.comm), "worker-%u", i);
		put(&task, GT_REC_TASK, sizeof(task), t);
	}
	for (uint64_t u = 0; u < units; u++)
		small_unit(u + 1, &t, &op, &seed);
	/* 1 us units 1 us apart after the GPU work: no kernel in any of them. */
	for (uint64_t u = 0; u < empty; u++) {
		put_unit(1000 + u, t, true);
		put_unit(1000 + u, t + 1000, false);
		t += 2000;
	}
	while (nrec < target) {
		uint64_t unit_start = t;

		/* One unit: 16 kernels of 1 ms, then a 5-20 ms gap full of CPU activity. */
		for (int k = 0; k < 16; k++) {
			struct gt_gpu_launch l = {.pid = PID, .tid = PID, .op_id = op};
			struct gt_gpu_op g = {.pid = PID, .tid = PID + 1};

			put(&l, GT_REC_GPU_LAUNCH, sizeof(l), t);
			g.rec.start_ns = t + 20000;
			g.rec.end_ns = t + 1000000;
			g.rec.op_id = op++;
			g.rec.kind = 1;
			put(&g, GT_REC_GPU_OP, sizeof(g), g.rec.end_ns);
			t += 1000000;
		}
		uint64_t gap_end = t + 5000000 + (rand_r(&seed) % 15) * 1000000ULL;

		while (t < gap_end) {
			uint32_t tid = PID + (uint32_t)(rand_r(&seed) % NTHREADS);
			struct gt_offcpu o = {.pid = PID, .tid = tid};
			struct gt_sample s = {.pid = PID, .tid = tid, .syscall_nr = -1};

			o.off_ns = t;
			o.wake_ns = t + 50000;
			o.on_ns = t + 60000;
			o.syscall_nr = (rand_r(&seed) % 2) ? 202 : 230;
			o.args[1] = 128;
			o.args[2] = rand_r(&seed) % 3;
			o.waker_tid = PID + (uint32_t)(rand_r(&seed) % NTHREADS);
			o.ustack_id = o.kstack_id = -1;
			put(&o, GT_REC_OFFCPU, sizeof(o), o.on_ns);
			s.ustack_id = s.kstack_id = -1;
			put(&s, GT_REC_SAMPLE, sizeof(s), t + 80000);
			if (rand_r(&seed) % 50 == 0) {
				struct gt_call c = {.pid = PID,
						    .tid = tid,
						    .enter_ns = t + 61000,
						    .exit_ns = t + 90000};

				put(&c, GT_REC_CALL, sizeof(c), c.exit_ns);
			}
			t += 100000;
		}
		(void)unit_start;
	}
	capture_buf__key(&end, CK_END_MONO_NS, "%llu", (unsigned long long)t);
	capture_writer__block(w, GT_BLK_END, end.data, end.len);
	if (capture_writer__close(w)) {
		fprintf(stderr, "gen_capture: close failed\n");
		return 1;
	}
	capture_buf__free(&probes);
	capture_buf__free(&end);
	printf("%llu\n", (unsigned long long)nrec);
	return 0;
}
