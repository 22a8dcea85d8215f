// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cmd_dump.c: `gaptrace dump` — options and help; output/dump.c prints
 * the records.
 */
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "capture/capture.h"
#include "cli/cmds.h"
#include "output/dump.h"
#include "support/cli.h"
#include "support/util.h"

static void usage(FILE *f)
{
	fprintf(f, "Usage: gaptrace dump FILE [options]\n"
		   "\n"
		   "Prints every record, one per line, times in ms from the capture start.\n"
		   "\n"
		   "Options:\n"
		   "  -t, --tid TID    only the records of thread TID\n"
		   "  -s, --stacks     add the function names of each stack, leaf first\n"
		   "                   (ustack_dwarf= for stacks unwound from --stacks dwarf\n"
		   "                   snapshots)\n"
		   "  -h, --help       this help\n");
}

const struct option dump_options[] = {
    {"stacks", no_argument, NULL, 's'},
    {"tid", required_argument, NULL, 't'},
    GT_LONGOPT_HELP,
    {},
};

int cmd_dump(int argc, char **argv)
{
	struct capture *c;
	char err[512];
	int64_t tid_opt = -1; /* -1: all */
	bool frames = false;
	uint64_t tid;
	int opt, k;

	optind = 1;
	while ((opt = gt_getopt(argc, argv, dump_options, false)) != -1) {
		switch (opt) {
		case 's':
			frames = true;
			break;
		case 't':
			if (gt_parse_uint(optarg, 0, UINT32_MAX, &tid)) {
				gt_err("bad -t '%s': give a thread id (0 to %u)", optarg,
				       UINT32_MAX);
				return GT_EXIT_USAGE;
			}
			tid_opt = (int64_t)tid;
			break;
		default:
			k = gt_opt_common(opt, "dump", usage);
			if (k != GT_OPT_NEXT)
				return k;
		}
	}
	if (optind != argc - 1) {
		gt_err("give one capture file: gaptrace dump FILE [-t TID]");
		return GT_EXIT_USAGE;
	}
	c = capture__open(argv[optind], err, sizeof(err));
	if (!c) {
		gt_err("%s", err);
		return GT_EXIT_FAIL;
	}
	dump__capture(c, tid_opt, frames);
	for (size_t i = 0; i < capture__nwarnings(c); i++)
		gt_warn("%s", capture__warning(c, i));
	capture__close(c);
	return GT_EXIT_OK;
}
