// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cmd_doctor.c: `gaptrace doctor` — options and help; the checks are
 * record/doctor.c and record/doctor_gpu.c.
 */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include "cli/cmds.h"
#include "record/doctor.h"
#include "support/cli.h"
#include "support/util.h"

static void usage(FILE *f)
{
	fprintf(f, "Usage: gaptrace doctor [options]\n\n"
		   "Checks whether this host can run 'gaptrace record' (kernel, privileges) and\n"
		   "see GPU activity (the CUPTI library and libcupti, libcuda, ptrace for live\n"
		   "injection), and says how to fix what is missing.\n\n"
		   "Options:\n"
		   "  -f, --format text|json  output format (json: schema gaptrace.doctor/1)\n");
	gt_help_opt(f, 19, GT_HELP_VERBOSE);
	gt_help_opt(f, 19, GT_HELP_HELP);
	fprintf(f, "\nExit codes: 0 when recording will work, 1 otherwise, 2 bad usage.\n");
}

const struct option doctor_options[] = {
    {"format", required_argument, NULL, 'f'},
    GT_LONGOPT_VERBOSE,
    GT_LONGOPT_HELP,
    {},
};

int cmd_doctor(int argc, char **argv)
{
	static const char *const formats[] = {"text", "json", NULL};
	bool json = false;
	int c, k;

	optind = 1;
	while ((c = gt_getopt(argc, argv, doctor_options, false)) != -1) {
		if (c == 'f') {
			k = gt_opt_choice("--format", optarg, formats);
			if (k < 0)
				return GT_EXIT_USAGE;
			json = k == 1;
			continue;
		}
		k = gt_opt_common(c, "doctor", usage);
		if (k != GT_OPT_NEXT)
			return k;
	}
	if (optind < argc) {
		gt_err("doctor takes no arguments; see 'gaptrace doctor --help'");
		return GT_EXIT_USAGE;
	}
	return doctor__run(json);
}
