// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cmdopts.c: the analysing commands' shared options (--output, --min-gap,
 * --unit, --depth, --top, the capture arguments) and their shared tail
 * (analyse, open the output, write, close).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "capture/capture.h"
#include "cli/cmdopts.h"
#include "support/cli.h"
#include "support/outfile.h"
#include "support/term.h"
#include "support/util.h"

static int parse_unit(const char *spec, struct an_opts *an)
{
	if (!strcmp(spec, "usdt")) {
		an->units = GT_UNITS_USDT;
		return 0;
	}
	if (!strncmp(spec, "func:", 5) && spec[5]) {
		an->units = GT_UNITS_FUNC;
		an->unit_func = spec + 5;
		return 0;
	}
	if (!strncmp(spec, "burst:", 6) && !gt_parse_duration(spec + 6, &an->burst_gap_ns) &&
	    an->burst_gap_ns) {
		an->units = GT_UNITS_BURST;
		return 0;
	}
	if (!strncmp(spec, "nvtx:", 5) && spec[5]) {
		an->units = GT_UNITS_NVTX;
		an->unit_glob = spec + 5;
		return 0;
	}
	if (!strcmp(spec, "burst")) {
		an->units = GT_UNITS_BURST;
		return 0;
	}
	return -1;
}

int cmdopts__min_gap(const char *arg, struct an_opts *an)
{
	return gt_opt_min_gap(arg, &an->min_gap_ns);
}

void cmdopts__help(FILE *f, int col)
{
	gt_help_opt(f, col, GT_HELP_MIN_GAP);
	gt_help_opt(f, col, "-u, --unit SPEC",
		    "work units: usdt (gaptrace:unit_begin/end),\n"
		    "func:FUNC (recorded with record --unit),\n"
		    "nvtx:GLOB (NVTX ranges named like GLOB, from\n"
		    "the CUPTI library), burst:DUR (GPU bursts split\n"
		    "by idle >= DUR, default 10ms; used when nothing\n"
		    "else exists)");
	gt_help_opt(f, col, GT_HELP_DEPTH);
	gt_help_opt(f, col, GT_HELP_COLOR);
	gt_help_opt(f, col, GT_HELP_VERBOSE);
	gt_help_opt(f, col, GT_HELP_HELP);
	fprintf(f, "\n%s", GT_HELP_DUR);
}

int cmdopts__unit(const char *flag, const char *arg, struct an_opts *an)
{
	if (parse_unit(arg, an)) {
		gt_err("bad %s '%s': use usdt, func:FUNC, nvtx:GLOB or burst:DUR", flag, arg);
		return -1;
	}
	return 0;
}

int cmdopts__depth(const char *arg, struct an_opts *an)
{
	uint64_t v;

	if (gt_parse_uint(arg, 0, 16, &v)) {
		gt_err("bad --depth '%s': give 0 to 16", arg);
		return -1;
	}
	an->max_depth = (unsigned)v;
	return 0;
}

int cmdopts__top(const char *arg, const char *what, unsigned *top)
{
	uint64_t v;

	if (gt_parse_uint(arg, 0, UINT32_MAX, &v)) {
		gt_err("bad --top '%s': give a number of %s (0 to %u)", arg, what, UINT32_MAX);
		return -1;
	}
	*top = (unsigned)v;
	return 0;
}

const char *cmdopts__one_capture(int argc, char **argv, const char *cmd)
{
	if (optind != argc - 1) {
		if (optind >= argc)
			gt_err("no capture given: gaptrace %s FILE (see --help)", cmd);
		else
			gt_err("give one capture file (see --help)");
		return NULL;
	}
	return argv[optind];
}

int cmdopts__option(int c, const char *cmd, void (*usage)(FILE *f), struct cmd_job *job,
		    struct an_opts *an)
{
	switch (c) {
	case 'f':
		if (!job->formats)
			break;
		if (gt_opt_choice("--format", optarg, job->formats) < 0)
			return GT_EXIT_USAGE;
		*job->format = optarg;
		return GT_OPT_NEXT;
	case 'o':
		job->outpath = optarg;
		return GT_OPT_NEXT;
	case 'm':
		return cmdopts__min_gap(optarg, an) ? GT_EXIT_USAGE : GT_OPT_NEXT;
	case 'u':
		return cmdopts__unit("--unit", optarg, an) ? GT_EXIT_USAGE : GT_OPT_NEXT;
	case GT_OPT_DEPTH:
		return cmdopts__depth(optarg, an) ? GT_EXIT_USAGE : GT_OPT_NEXT;
	}
	return gt_opt_common(c, cmd, usage);
}

int cmdopts__open_analyse(const char *path, const struct an_opts *an, struct capture **cap,
			  struct an_result **res)
{
	char err[512];

	*cap = capture__open(path, err, sizeof(err));
	if (!*cap) {
		gt_err("%s", err);
		return -1;
	}
	if (analysis__run(*cap, an, res, err, sizeof(err))) {
		gt_err("%s", err);
		capture__close(*cap);
		*cap = NULL;
		return -1;
	}
	/* Damage is worth a line on stderr even when the report goes to a file. */
	for (size_t i = 0; i < capture__nwarnings(*cap); i++)
		gt_warn("%s", capture__warning(*cap, i));
	return 0;
}

/*
 * job->write into memory, then through the terminal filter (wrapping,
 * ASCII) to out.  Returns what job->write returned, or -1 on a write error.
 */
static int write_filtered(struct cmd_job *job, FILE *out)
{
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);
	int ret;

	if (!mem)
		return -1;
	ret = job->write(job, mem);
	if (fclose(mem))
		ret = -1;
	if (!ret)
		ret = term__write(out, text, len, job->width, job->ascii);
	free(text);
	return ret;
}

int cmdopts__run(struct cmd_job *job)
{
	struct gt_out go = {.dfd = -1};
	int ret = GT_EXIT_FAIL;
	int wret;

	for (int i = 0; i < 2 && job->paths[i]; i++)
		if (cmdopts__open_analyse(job->paths[i], job->an, &job->cap[i], &job->res[i]))
			goto cleanup;
	if (job->prepare && job->prepare(job))
		goto cleanup;
	if (gt_out__open(&go, job->outpath))
		goto cleanup;
	if (job->text) {
		job->color = term__color(go.f);
		/* A file keeps full lines, whatever the terminal it was named from. */
		job->width = go.f == stdout ? term__width(stdout) : 0;
		job->ascii = !term__utf8();
	}
	if (job->text && (job->width || job->ascii))
		wret = write_filtered(job, go.f);
	else
		wret = job->write(job, go.f);
	if (wret) {
		if (job->what)
			gt_err("writing %s failed: %s", go.f == stdout ? job->what : job->outpath,
			       strerror(errno));
		goto cleanup;
	}
	if (gt_out__close(&go))
		goto cleanup;
	ret = GT_EXIT_OK;
cleanup:
	gt_out__abort(&go);
	for (int i = 0; i < 2; i++) {
		an_result__free(job->res[i]);
		capture__close(job->cap[i]);
		job->res[i] = NULL;
		job->cap[i] = NULL;
	}
	return ret;
}
