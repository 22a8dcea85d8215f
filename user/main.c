// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * main.c: gaptrace's entry point — global options and the subcommand table.
 * Each subcommand lives in its own file and owns its options and --help.
 */
#include <stdio.h>
#include <string.h>

#include "cmds.h"
#include "support/util.h"

static const struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
} cmds[] = {
    {"record", cmd_record, "trace a running process (-p PID) or a command into a capture"},
    {"report", cmd_report, "explain each GPU idle gap of a capture (text, json, csv)"},
    {"flame", cmd_flame, "flame graph of gap time by stack (folded stacks or interactive SVG)"},
    {"diff", cmd_diff, "compare two captures: what changed, and is it more than noise"},
    {"export", cmd_export, "timeline for the Perfetto UI (Chrome trace JSON): threads, GPU, gaps"},
    {"info", cmd_info, "what a capture holds: header, blocks, lost events, clock check"},
    {"doctor", cmd_doctor, "check this host: privileges, BTF, tracepoints, uprobes"},
    {"monitor", cmd_monitor, "always on: gap metrics for Prometheus, rolling capture segments"},
    {"dump", cmd_dump, "print every record of a capture, one per line (debugging)"},
};

static void usage(FILE *f)
{
	fprintf(f, "Usage: gaptrace COMMAND [ARGS]\n\n"
		   "Explains why a GPU sat idle between pieces of work: every gap is split into\n"
		   "scheduler, lock, allocator, wait, io, sleep, cuda, cpu and unknown time.\n\n"
		   "Commands:\n");
	for (size_t i = 0; i < GT_ARRAY_SIZE(cmds); i++)
		fprintf(f, "  %-8s %s\n", cmds[i].name, cmds[i].help);
	fprintf(f, "\nTypical use:\n"
		   "  sudo gaptrace record -p $(pidof prover) -d 60s -o run.gtcap\n"
		   "  gaptrace report run.gtcap\n\n"
		   "'gaptrace COMMAND --help' describes each command.  Exit codes: 0 ok,\n"
		   "1 runtime failure, 2 bad usage.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return GT_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return GT_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("gaptrace %s\n", GT_VERSION);
		return GT_EXIT_OK;
	}
	for (size_t i = 0; i < GT_ARRAY_SIZE(cmds); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].fn(argc - 1, argv + 1);
	gt_err("unknown command '%s': run 'gaptrace --help' for the list", argv[1]);
	return GT_EXIT_USAGE;
}
