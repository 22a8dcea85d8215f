// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cmd_export.c: `gaptrace export`: options, the default output name, and
 * the trace (export.c) written there.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "cli/cmds.h"
#include "cli/cmdopts.h"
#include "output/export.h"
#include "support/util.h"

static void usage(FILE *f)
{
	fprintf(f, "Usage: gaptrace export FILE [-f perfetto|perfetto-proto] [-o OUT] [-z ALG]\n"
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
		   "With --format perfetto-proto the same tracks and slices (no flows) are\n"
		   "written as a Perfetto protobuf trace (TrackEvent), which the Perfetto UI\n"
		   "loads far faster than JSON on large captures.\n"
		   "\n"
		   "Options:\n"
		   "  -f, --format FMT       perfetto (Chrome JSON trace events, the default) or\n"
		   "                         perfetto-proto (Perfetto protobuf)\n"
		   "  -o, --output OUT       where to write (default: FILE without .gtcap, plus\n"
		   "                         .trace.json or .pftrace; '-' for stdout); a name\n"
		   "                         ending .zst or .gz is compressed so\n"
		   "  -z, --compress ALG     zstd, gzip or none (default: from OUT's name; a\n"
		   "                         default OUT then gets .zst or .gz)\n");
	cmdopts__help(f, 25);
	fprintf(f, "\n"
		   "Memory grows with the capture (every thread state is kept), unlike report.\n"
		   "Exit codes: 0 ok, 1 the capture cannot be read or OUT written, 2 bad usage.\n");
}

struct export_opts {
	bool proto;
	int z; /* enum export_z, or -1: from the output's name */
};

static char *default_out(const char *path, const struct export_opts *eo)
{
	size_t n = strlen(path);
	char *out = gt_xmalloc(n + 24);

	memcpy(out, path, n + 1);
	if (n > 6 && !strcmp(path + n - 6, ".gtcap"))
		out[n - 6] = '\0';
	strcat(out, eo->proto ? ".pftrace" : ".trace.json");
	if (eo->z == EXPORT_Z_ZSTD)
		strcat(out, ".zst");
	else if (eo->z == EXPORT_Z_GZIP)
		strcat(out, ".gz");
	return out;
}

static int export_write(struct cmd_job *job, FILE *out)
{
	const struct export_opts *eo = job->ctx;
	FILE *f = out;
	int ret;

	if (eo->z != EXPORT_Z_NONE) {
		f = export__zopen(out, (enum export_z)eo->z);
		if (!f)
			return -1;
	}
	ret = eo->proto ? export__perfetto_proto(f, job->res[0])
			: export__chrome_json(f, job->res[0]);
	if (f != out && export__zclose(f))
		ret = -1;
	return ret;
}

const struct option export_options[] = {
    {"format", required_argument, NULL, 'f'},
    {"compress", required_argument, NULL, 'z'},
    CMDOPTS_LONGOPTS,
    {},
};

int cmd_export(int argc, char **argv)
{
	struct an_opts an;
	struct export_opts eo = {.z = -1};
	struct cmd_job job = {.an = &an, .what = "the trace", .write = export_write, .ctx = &eo};
	char *defout = NULL;
	int c, ret;

	an_opts__defaults(&an);
	an.keep_all = true;
	optind = 1;
	while ((c = gt_getopt(argc, argv, export_options, false)) != -1) {
		switch (c) {
		case 'f':
			if (!strcmp(optarg, "perfetto-proto") || !strcmp(optarg, "proto")) {
				eo.proto = true;
			} else if (!strcmp(optarg, "perfetto") || !strcmp(optarg, "chrome")) {
				eo.proto = false;
			} else {
				gt_err(
				    "bad --format '%s': use perfetto (Chrome JSON trace events) or "
				    "perfetto-proto (Perfetto protobuf)",
				    optarg);
				return GT_EXIT_USAGE;
			}
			break;
		case 'z':
			if (!strcmp(optarg, "zstd")) {
				eo.z = EXPORT_Z_ZSTD;
			} else if (!strcmp(optarg, "gzip")) {
				eo.z = EXPORT_Z_GZIP;
			} else if (!strcmp(optarg, "none")) {
				eo.z = EXPORT_Z_NONE;
			} else {
				gt_err("bad --compress '%s': use zstd, gzip or none", optarg);
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
		job.outpath = defout = default_out(job.paths[0], &eo);
	if (eo.z < 0)
		eo.z = export__z_of_name(job.outpath);
	ret = cmdopts__run(&job);
	if (ret == GT_EXIT_OK && strcmp(job.outpath, "-"))
		gt_info("wrote %s: open it in the Perfetto UI (Open trace file)%s", job.outpath,
			eo.proto ? "" : " or speedscope");
	free(defout);
	return ret;
}
