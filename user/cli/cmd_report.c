// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cmd_report.c: `gaptrace report` — its options and help; the analysis
 * runs through cmdopts, the writers are output/report.c and output/html.c.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "analysis/analysis.h"
#include "cli/cmdopts.h"
#include "cli/cmds.h"
#include "output/html.h"
#include "output/report.h"
#include "support/util.h"

static void usage(FILE *f)
{
	fprintf(f, "Usage: gaptrace report FILE [options]\n"
		   "\n"
		   "Finds every GPU idle gap in a capture and splits it into the time its\n"
		   "critical thread (the one that launched the work ending the gap) spent:\n"
		   "  scheduler  runnable but waiting for a CPU (run queue, preemption)\n"
		   "  lock       blocked on a mutex/rwlock (futex on a contended lock)\n"
		   "  allocator  in malloc/free/malloc_trim, mmap/munmap/madvise/brk, page\n"
		   "             faults, CUDA host/device alloc and free\n"
		   "  wait       blocked on a hand-off (condvar, channel, epoll) whose waker\n"
		   "             could not be followed further\n"
		   "  io         blocked in or running file/socket I/O\n"
		   "  sleep      voluntary timed sleep\n"
		   "  cuda       in CUDA API calls (sync, launch) and launch latency\n"
		   "  cpu        other on-CPU work of the application\n"
		   "  unknown    time the data cannot explain (lost events, untraced thread)\n"
		   "Hand-off waits are followed to the thread that woke the waiter (the\n"
		   "critical path), so a worker waiting on a producer stuck in malloc_trim\n"
		   "counts as allocator time.  Each gap's categories sum to its length.\n"
		   "\n"
		   "Options:\n"
		   "  -f, --format text|json|csv|html\n"
		   "                              output format (default text; json follows\n"
		   "                              schema gaptrace.report/1, see docs/; html is\n"
		   "                              one offline page: GPU timeline, tables and\n"
		   "                              the flame graph)\n"
		   "  -n, --top N                 largest gaps listed in text (default 10)\n"
		   "  -o, --output FILE           write to FILE instead of stdout ('-': stdout)\n");
	cmdopts__help(f, 30);
	fprintf(f, "\n"
		   "Text is wrapped to $COLUMNS or the terminal's width (full lines into a\n"
		   "pipe or a file), coloured per --color, and ASCII when the locale's\n"
		   "character set is not UTF-8.\n"
		   "Exit codes: 0 ok (also for a truncated capture, with a warning), 1 the\n"
		   "file cannot be read, 2 bad usage.\n");
}

static int report_write(struct cmd_job *job, FILE *out)
{
	struct report_opts *o = job->ctx;

	o->color = job->color;
	o->ascii = job->ascii;
	o->width = job->width;
	if (!strcmp(o->format, "json"))
		report__json(out, job->res[0], o);
	else if (!strcmp(o->format, "csv"))
		report__csv(out, job->res[0]);
	else if (!strcmp(o->format, "html"))
		html__report(out, job->res[0], o->top, job->cap[0]);
	else
		report__text(out, job->res[0], o);
	return 0;
}

const struct option report_options[] = {
    {"format", required_argument, NULL, 'f'},
    {"top", required_argument, NULL, 'n'},
    CMDOPTS_LONGOPTS,
    {},
};

int cmd_report(int argc, char **argv)
{
	static const char *const formats[] = {"text", "json", "csv", "html", NULL};
	struct report_opts o = {.format = "text", .top = 10};
	struct an_opts an;
	struct cmd_job job = {
	    .an = &an, .formats = formats, .format = &o.format, .write = report_write, .ctx = &o};
	int c, ret;

	an_opts__defaults(&an);
	an.pieces = true; /* top stacks */
	optind = 1;
	while ((c = gt_getopt(argc, argv, report_options, false)) != -1) {
		switch (c) {
		case 'n':
			if (cmdopts__top(optarg, "gaps", &o.top))
				return GT_EXIT_USAGE;
			break;
		default:
			ret = cmdopts__option(c, "report", usage, &job, &an);
			if (ret != GT_OPT_NEXT)
				return ret;
		}
	}
	o.path = cmdopts__one_capture(argc, argv, "report");
	if (!o.path)
		return GT_EXIT_USAGE;
	/* The page embeds the flame graph, which is built from the pieces. */
	if (!strcmp(o.format, "html"))
		an.pieces = true;
	job.paths[0] = o.path;
	job.text = !strcmp(o.format, "text");
	ret = cmdopts__run(&job);
	return ret;
}
