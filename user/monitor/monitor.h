/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * monitor.h: `gaptrace monitor`, always on: the recorder attached to a
 * matched process across its restarts, one analysis window per capture
 * segment, Prometheus metrics and a flight recorder of the segments.
 * monitor_opts.c parses the command line; monitor.c is the engine.
 */
#ifndef GT_MONITOR_H
#define GT_MONITOR_H

#include <stdbool.h>
#include <stdint.h>

#include "monitor/match.h"

struct monitor_opts {
	struct matcher match;
	uint64_t window_ns;
	uint64_t gpu_on_ns, gpu_period_ns; /* --gpu-duty; period 0: always on */
	const char *listen;		   /* HOST:PORT, NULL: no endpoint */
	const char *textfile;		   /* folder for gaptrace.prom, NULL: none */
	const char *dir;		   /* the flight recorder's segments */
	uint64_t keep_ns, keep_bytes;
	double snapshot_below; /* snapshot when a window's efficiency is below; < 0 off */
	char **record_opts;    /* extra `gaptrace record` options */
	int nrecord_opts;
	bool ask_snapshot; /* --snapshot: signal the running monitor of dir */
	int argc;
	char **argv;
};

/* The exit code: 0 after SIGINT/SIGTERM (or -p's target exit), 1 on failure, 2 bad usage. */
int monitor__run(struct monitor_opts *o);
/* `monitor --snapshot`: SIGUSR1 to the monitor writing into dir; the exit code. */
int monitor__ask_snapshot(const char *dir);

#endif /* GT_MONITOR_H */
