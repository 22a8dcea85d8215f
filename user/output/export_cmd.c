// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * export_cmd.c: `gaptrace export`: options, the default output name, and
 * the trace (export.c) written there.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "cmds.h"
#include "output/cmdopts.h"
#include "output/export.h"
#include "support/util.h"

static void usage(FILE *f)
{
	fprintf(f, "Usage: gaptrace export FILE [--format perfetto] [-o OUT]\n"
		   "\n"
		   "Writes the capture as a timeline to look at, in the Chrome JSON trace format\n"
		   "that the Perfetto UI opens (Open trace file) and speedscope imports:\n"
		   "  - one track per traced thread: running, runnable (woken or preempted) and\n"
		   "    blocked slices, each blocked one named by its syscall and category\n"
		   "    (\"blocked: futex (lock)\"), with probed calls (malloc_trim, CUDA API)\n"
		   "    above the states they contain\n"
		   "  - per GPU: one track per stream with kernels and copies, and an \"idle\n"
		   "    gaps\" track whose slices carry each gap's breakdown and critical path\n"
		   "  - work units and lost-event windows\n"
		   "  - flows (arrows) from a waker to the thread it woke, and from each launch\n"
		   "    call to its kernel\n"
		   "Times are CLOCK_MONOTONIC, shifted so the trace starts near 0 (otherData\n"
		   "base_mono_ns holds the shift), in steps of 125 ns.\n"
		   "\n"
		   "Options:\n"
		   "  -f, --format perfetto  the only format (Chrome JSON trace events)\n"
		   "  -o, --output OUT       where to write (default: FILE without .gtcap, plus\n"
		   "                         .trace.json; '-' for stdout)\n");
	cmdopts__help(f, 25);
	fprintf(f, "\n"
		   "Memory grows with the capture (every thread state is kept), unlike report.\n"
		   "Exit codes: 0 ok, 1 the capture cannot be read or OUT written, 2 bad usage.\n");
}

static char *default_out(const char *path)
{
	size_t n = strlen(path);
	char *out = gt_xmalloc(n + 16);

	memcpy(out, path, n + 1);
	if (n > 6 && !strcmp(path + n - 6, ".gtcap"))
		out[n - 6] = '\0';
	strcat(out, ".trace.json");
	return out;
}

static int export_write(struct cmd_job *job, FILE *out)
{
	return export__chrome_json(out, job->res[0]);
}

const struct option export_options[] = {
    {"format", required_argument, NULL, 'f'},
    CMDOPTS_LONGOPTS,
    {},
};

int cmd_export(int argc, char **argv)
{
	struct an_opts an;
	struct cmd_job job = {.an = &an, .what = "the trace", .write = export_write};
	char *defout = NULL;
	int c, ret;

	an_opts__defaults(&an);
	an.keep_all = true;
	optind = 1;
	while ((c = gt_getopt(argc, argv, export_options, false)) != -1) {
		switch (c) {
		case 'f':
			if (strcmp(optarg, "perfetto") && strcmp(optarg, "chrome")) {
				gt_err("bad --format '%s': use perfetto (Chrome JSON trace events)",
				       optarg);
				return GT_EXIT_USAGE;
			}
			break;
		default:
			ret = cmdopts__option(c, "export", usage, &job, &an);
			if (ret != GT_OPT_NEXT)
				return ret;
		}
	}
	job.paths[0] = cmdopts__one_capture(argc, argv, "export");
	if (!job.paths[0])
		return GT_EXIT_USAGE;
	if (!job.outpath)
		job.outpath = defout = default_out(job.paths[0]);
	ret = cmdopts__run(&job);
	if (ret == GT_EXIT_OK && strcmp(job.outpath, "-"))
		gt_info("wrote %s: open it in the Perfetto UI (Open trace file) or speedscope",
			job.outpath);
	free(defout);
	return ret;
}
