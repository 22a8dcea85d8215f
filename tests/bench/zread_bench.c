// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * zread_bench.c: what reading compressed captures costs over the plain one,
 * without the analysis around it: each variant reads its capture as `report`
 * does (a pass for PROBES, then two whole passes decoding every record), each
 * compressed capture once decompressed inline and once by the read-ahead
 * thread, the variants taking turns so that load hits them alike.  "main
 * CPU" is the calling thread's: with a CPU to spare, what wall time tends to.
 * Usage: zread_bench [-r ROUNDS] PLAIN.gtcap ZSTD.gtcap...
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "capture/capture.h"
#include "gaptrace/gaptrace.h"
#include "support/util.h"

#define MAX_ROUNDS 64

struct variant {
	const char *path;
	bool ahead;
	double wall[MAX_ROUNDS], cpu[MAX_ROUNDS], main[MAX_ROUNDS];
	uint64_t sum;
};

static int sum_cb(const void *rec, size_t size, void *ctx)
{
	const struct gt_hdr *h = rec;

	*(uint64_t *)ctx += h->ts_ns + size;
	return 0;
}

static double now(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int read_like_report(struct variant *v, int round)
{
	double w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
	double m0 = now(CLOCK_THREAD_CPUTIME_ID);
	struct capture_block b;
	struct capture *c;
	char err[256];
	uint64_t sum = 0;

	c = capture__open(v->path, err, sizeof(err));
	if (!c) {
		fprintf(stderr, "zread_bench: %s\n", err);
		return -1;
	}
	capture__read_ahead(c, v->ahead);
	capture__only(c, 1U << GT_BLK_PROBES);
	/* Plain blocks of other types still come here: only the PROBES count. */
	while (capture__next(c, &b) == 1)
		sum += b.type == GT_BLK_PROBES ? b.len : 0;
	for (int pass = 0; pass < 2; pass++) {
		capture__rewind(c);
		while (capture__next(c, &b) == 1)
			capture__records(b.type, b.body, b.len, sum_cb, &sum);
	}
	capture__close(c);
	v->wall[round] = now(CLOCK_MONOTONIC) - w0;
	v->cpu[round] = now(CLOCK_PROCESS_CPUTIME_ID) - c0;
	v->main[round] = now(CLOCK_THREAD_CPUTIME_ID) - m0;
	v->sum = sum;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Sorts v: v[0] is then the least. */
static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
	struct variant *vs;
	double pw, pc, load[1];
	int rounds = 5, nv, opt;

	while ((opt = getopt(argc, argv, "r:")) != -1) {
		rounds = opt == 'r' ? atoi(optarg) : 0;
		if (rounds < 1 || rounds > MAX_ROUNDS) {
			fprintf(stderr,
				"usage: zread_bench [-r ROUNDS (1-%d)] PLAIN.gtcap "
				"ZSTD.gtcap...\n",
				MAX_ROUNDS);
			return 2;
		}
	}
	if (argc - optind < 2) {
		fprintf(stderr, "usage: zread_bench [-r ROUNDS] PLAIN.gtcap ZSTD.gtcap...\n");
		return 2;
	}
	nv = 1 + 2 * (argc - optind - 1);
	vs = gt_xcalloc((size_t)nv, sizeof(*vs));
	vs[0].path = argv[optind];
	for (int i = 1; i < nv; i++) {
		vs[i].path = argv[optind + 1 + (i - 1) / 2];
		vs[i].ahead = !(i & 1);
	}
	for (int r = 0; r < rounds; r++) {
		for (int i = 0; i < nv; i++) {
			if (read_like_report(&vs[i], r))
				return 1;
		}
	}
	if (getloadavg(load, 1) != 1)
		load[0] = -1;
	printf("%d rounds, %ld CPUs, load %.1f; ratio: plain's median time / the variant's "
	       "(>= 1: no slower)\n",
	       rounds, sysconf(_SC_NPROCESSORS_ONLN), load[0]);
	printf("%-32s %8s %8s %8s %8s %8s %7s %7s %7s\n", "capture, decompression", "wall min",
	       "wall med", "cpu min", "cpu med", "main med", "r(wall)", "r(cpu)", "r(main)");
	pw = median(vs[0].wall, rounds);
	pc = median(vs[0].cpu, rounds);
	for (int i = 0; i < nv; i++) {
		const char *base = strrchr(vs[i].path, '/');
		double wm = median(vs[i].wall, rounds), cm = median(vs[i].cpu, rounds);
		double mm = median(vs[i].main, rounds);
		const char *how = !i ? "-" : "inline";
		char name[64];

		if (i && vs[i].ahead)
			how = "read-ahead";
		snprintf(name, sizeof(name), "%s, %s", base ? base + 1 : vs[i].path, how);
		if (vs[i].sum != vs[0].sum) {
			fprintf(stderr, "zread_bench: %s holds other records than %s\n", vs[i].path,
				vs[0].path);
			return 1;
		}
		printf("%-32s %8.3f %8.3f %8.3f %8.3f %8.3f %7.2f %7.2f %7.2f\n", name,
		       vs[i].wall[0], wm, vs[i].cpu[0], cm, mm, pw / wm, pc / cm, pc / mm);
	}
	free(vs);
	return 0;
}
