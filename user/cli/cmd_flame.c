// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cmd_flame.c: `gaptrace flame`: options, filters, and the folded or SVG
 * output of the capture's flame graph.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/capture.h"
#include "cli/cmds.h"
#include "cli/cmdopts.h"
#include "output/flame.h"
#include "support/util.h"

static void usage(FILE *f)
{
	fprintf(f, "Usage: gaptrace flame FILE [options]\n"
		   "\n"
		   "Flame graph of GPU idle time: every gap's attributed time, merged by stack.\n"
		   "Each stack reads, root first:\n"
		   "  category;[thread];user frames...;kernel frames_[k];[what it was]\n"
		   "so the widest towers are where the GPU waited longest, split first by\n"
		   "category (scheduler, lock, allocator, wait, io, sleep, cuda, cpu, unknown)\n"
		   "and then by the thread whose time it was: on a critical path that is the\n"
		   "thread that kept the GPU's launcher waiting.  Time without a stack gets\n"
		   "one frame saying what it was: [run queue], [preempted], [lost events],\n"
		   "[launch latency], [CUDA API], [malloc_trim] (a traced call), ...\n"
		   "Frames are demangled (C++, Rust legacy and v0); unresolved ones read\n"
		   "[module+0xOFFSET] (file offset, for addr2line) or [unknown].\n"
		   "\n"
		   "Options:\n"
		   "  -f, --format folded|svg   folded stacks, one 'stack ns' line each, for\n"
		   "                            flamegraph.pl, speedscope or inferno (default);\n"
		   "                            svg: an interactive flame graph (hover, click to\n"
		   "                            zoom, search) that opens in any browser\n"
		   "  -c, --category NAME       only this category's time (e.g. lock)\n"
		   "  -k, --kind KIND           only gaps of this kind: inter-unit, intra-unit,\n"
		   "                            unscoped\n"
		   "      --unit-id ID          only gaps inside work unit ID or at its edges\n"
		   "      --device N            only gaps of GPU N\n"
		   "      --gap N               only gap N (its index in 'gaptrace report')\n"
		   "  -o, --output FILE         write to FILE instead of stdout ('-': stdout)\n"
		   "      --title TEXT          SVG title\n"
		   "      --width PX            SVG width (default 1200)\n"
		   "      --units SPEC          deprecated spelling of --unit\n");
	cmdopts__help(f, 28);
	fprintf(f, "\n"
		   "Examples:\n"
		   "  gaptrace flame run.gtcap --format svg -o run.svg   # then open run.svg\n"
		   "  gaptrace flame run.gtcap --category lock --kind inter-unit\n"
		   "  gaptrace flame run.gtcap > run.folded && flamegraph.pl run.folded > fg.svg\n"
		   "\n"
		   "Weights are nanoseconds of gap time; they add up to the report's totals\n"
		   "(less what a filter leaves out).  Exit codes: 0 ok, 1 the capture cannot\n"
		   "be read or the output written, 2 bad usage.\n");
}

static int parse_i64(const char *s, int64_t *v)
{
	char *end;
	long long x;

	errno = 0;
	x = strtoll(s, &end, 10);
	if (errno || *end || !*s || x < 0)
		return -1;
	*v = x;
	return 0;
}

/* "lock, inter-unit gaps, unit 3" for the SVG subtitle. */
static void describe_filter(const struct flame_filter *f, const char *path, char *buf, size_t len)
{
	size_t o = (size_t)snprintf(buf, len, "%s", path);

	if (f->cat >= 0 && o < len)
		o += (size_t)snprintf(buf + o, len - o, ", %s only", gt_cat_names[f->cat]);
	if (f->kind >= 0 && o < len)
		o += (size_t)snprintf(buf + o, len - o, ", %s gaps", gt_gap_kind_names[f->kind]);
	if (f->unit >= 0 && o < len)
		o += (size_t)snprintf(buf + o, len - o, ", unit %lld", (long long)f->unit);
	if (f->device >= 0 && o < len)
		o += (size_t)snprintf(buf + o, len - o, ", GPU %lld", (long long)f->device);
	if (f->gap >= 0 && o < len)
		snprintf(buf + o, len - o, ", gap %lld", (long long)f->gap);
}

struct flame_job {
	struct flame_filter filt;
	struct flame_svg_opts so;
	const char *format;
	struct flame *fl;
};

static int flame_prepare(struct cmd_job *job)
{
	struct flame_job *fj = job->ctx;
	const struct an_result *res = job->res[0];

	fj->filt.cap = job->cap[0];
	fj->fl = flame__from_result(res, &fj->filt);
	if (!fj->fl) {
		gt_err("the analysis kept no pieces of gap time: this is a bug, please report it");
		return -1;
	}
	if (!flame__total(fj->fl, FLAME_AFTER))
		gt_warn("no gap time matches (%zu gaps in the capture): the output is empty",
			res->ngaps);
	if (flame__truncated_ns(fj->fl))
		gt_warn("the stack tree hit its %u-node limit: %llu ns are shown at a shallower "
			"frame",
			FLAME_MAX_NODES, (unsigned long long)flame__truncated_ns(fj->fl));
	return 0;
}

static int flame_write(struct cmd_job *job, FILE *out)
{
	struct flame_job *fj = job->ctx;
	char sub[512];

	if (!strcmp(fj->format, "svg")) {
		describe_filter(&fj->filt, job->res[0]->path, sub, sizeof(sub));
		fj->so.subtitle = sub;
		return flame__write_svg(fj->fl, out, &fj->so);
	}
	return flame__write_folded(fj->fl, out);
}

/* Every digit: a unit id, which --unit took before it meant SPEC as everywhere else. */
static bool unit_id_like(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

enum { OPT_UNIT_ID = GT_OPT_LONG, OPT_DEVICE, OPT_GAP, OPT_TITLE, OPT_WIDTH, OPT_UNITS };
const struct option flame_options[] = {
    {"format", required_argument, NULL, 'f'},
    {"category", required_argument, NULL, 'c'},
    {"kind", required_argument, NULL, 'k'},
    {"unit-id", required_argument, NULL, OPT_UNIT_ID},
    {"device", required_argument, NULL, OPT_DEVICE},
    {"gap", required_argument, NULL, OPT_GAP},
    {"title", required_argument, NULL, OPT_TITLE},
    {"width", required_argument, NULL, OPT_WIDTH},
    CMDOPTS_LONGOPTS,
    {"units", required_argument, NULL, OPT_UNITS},
    {},
};

int cmd_flame(int argc, char **argv)
{
	static const char *const formats[] = {"folded", "svg", NULL};
	struct flame_job fj = {.format = "folded"};
	struct an_opts an;
	struct cmd_job job = {.an = &an,
			      .what = "the flame graph",
			      .formats = formats,
			      .format = &fj.format,
			      .prepare = flame_prepare,
			      .write = flame_write,
			      .ctx = &fj};
	struct flame_filter *filt = &fj.filt;
	int c, ret;
	int64_t v;

	flame_filter__init(filt);
	an_opts__defaults(&an);
	an.pieces = true;
	optind = 1;
	while ((c = gt_getopt(argc, argv, flame_options, false)) != -1) {
		switch (c) {
		case 'c':
			filt->cat = gt_cat_parse(optarg);
			if (filt->cat < 0) {
				gt_err("bad --category '%s': use scheduler, lock, allocator, wait, "
				       "io, sleep, cuda, cpu or unknown",
				       optarg);
				return GT_EXIT_USAGE;
			}
			break;
		case 'k':
			filt->kind = -1;
			for (int k = 0; k < 3; k++)
				if (!strcmp(optarg, gt_gap_kind_names[k]))
					filt->kind = k;
			if (filt->kind < 0) {
				gt_err("bad --kind '%s': use inter-unit, intra-unit or unscoped",
				       optarg);
				return GT_EXIT_USAGE;
			}
			break;
		case OPT_UNIT_ID:
			if (parse_i64(optarg, &filt->unit)) {
				gt_err(
				    "bad --unit-id '%s': give a work unit id (see 'gaptrace report "
				    "--format json', unit_before/unit_after)",
				    optarg);
				return GT_EXIT_USAGE;
			}
			break;
		case OPT_DEVICE:
			if (parse_i64(optarg, &filt->device)) {
				gt_err("bad --device '%s': give a GPU number", optarg);
				return GT_EXIT_USAGE;
			}
			break;
		case OPT_GAP:
			if (parse_i64(optarg, &filt->gap)) {
				gt_err("bad --gap '%s': give a gap index from 'gaptrace report'",
				       optarg);
				return GT_EXIT_USAGE;
			}
			break;
		case OPT_TITLE:
			fj.so.title = optarg;
			break;
		case OPT_WIDTH:
			if (parse_i64(optarg, &v) || v < 200 || v > 20000) {
				gt_err("bad --width '%s': give 200 to 20000 pixels", optarg);
				return GT_EXIT_USAGE;
			}
			fj.so.width = (unsigned)v;
			break;
		case 'u':
			if (unit_id_like(optarg)) {
				gt_err("bad --unit '%s': --unit takes a SPEC (usdt, func:FUNC, "
				       "nvtx:GLOB, burst:DUR); for the gaps of unit %s use "
				       "--unit-id %s",
				       optarg, optarg, optarg);
				return GT_EXIT_USAGE;
			}
			if (cmdopts__unit("--unit", optarg, &an))
				return GT_EXIT_USAGE;
			break;
		case OPT_UNITS:
			gt_warn("--units is deprecated: use --unit SPEC");
			if (cmdopts__unit("--units", optarg, &an))
				return GT_EXIT_USAGE;
			break;
		default:
			ret = cmdopts__option(c, "flame", usage, &job, &an);
			if (ret != GT_OPT_NEXT)
				return ret;
		}
	}
	job.paths[0] = cmdopts__one_capture(argc, argv, "flame");
	if (!job.paths[0])
		return GT_EXIT_USAGE;
	ret = cmdopts__run(&job);
	flame__free(fj.fl);
	return ret;
}
