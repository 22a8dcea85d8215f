// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cmd_info.c: `gaptrace info` — options and help; the capture is counted
 * (capture/count.c) and analysed, output/info.c writes the summary.
 */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include "analysis/analysis.h"
#include "capture/capture.h"
#include "capture/count.h"
#include "cli/cmds.h"
#include "output/info.h"
#include "support/cli.h"
#include "support/util.h"

static void usage(FILE *f)
{
	fprintf(f, "Usage: gaptrace info FILE [options]\n"
		   "\n"
		   "Shows what a capture holds: where and how it was recorded, its blocks and\n"
		   "records, threads, every lost-event counter (ring buffer, stacks, tracking\n"
		   "map, GPU records), damage found while reading, and the clock check: each\n"
		   "GPU operation must start after the host call that launched it.\n"
		   "\n"
		   "Options:\n"
		   "  -f, --format text|json  output format (default text)\n"
		   "  -h, --help              this help\n"
		   "\n"
		   "Exit codes: 0 readable (warnings for damage), 1 unreadable, 2 bad usage.\n");
}

const struct option info_options[] = {
    {"format", required_argument, NULL, 'f'},
    GT_LONGOPT_HELP,
    {},
};

int cmd_info(int argc, char **argv)
{
	static const char *const formats[] = {"text", "json", NULL};
	struct info_stats s = {};
	struct capture *c = NULL;
	struct an_result *r = NULL;
	struct an_opts ao;
	bool json = false;
	char err[512];
	int opt, k, ret = GT_EXIT_FAIL;

	optind = 1;
	while ((opt = gt_getopt(argc, argv, info_options, false)) != -1) {
		switch (opt) {
		case 'f':
			k = gt_opt_choice("--format", optarg, formats);
			if (k < 0)
				return GT_EXIT_USAGE;
			json = k == 1;
			break;
		default:
			k = gt_opt_common(opt, "info", usage);
			if (k != GT_OPT_NEXT)
				return k;
		}
	}
	if (optind != argc - 1) {
		gt_err("give one capture file: gaptrace info FILE");
		return GT_EXIT_USAGE;
	}
	c = capture__open(argv[optind], err, sizeof(err));
	if (!c) {
		gt_err("%s", err);
		return GT_EXIT_FAIL;
	}
	capture__count(c, &s.n, info__counter, &s);
	an_opts__defaults(&ao);
	if (analysis__run(c, &ao, &r, err, sizeof(err))) {
		gt_err("%s", err);
		goto cleanup;
	}
	if (json)
		info__json(stdout, c, &s, r);
	else if (info__text(c, &s, r))
		goto cleanup;
	for (size_t i = 0; i < capture__nwarnings(c); i++)
		gt_warn("%s", capture__warning(c, i));
	ret = GT_EXIT_OK;
cleanup:
	an_result__free(r);
	capture__close(c);
	return ret;
}
