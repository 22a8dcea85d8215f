// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * main.c: gaptrace's entry point — the subcommand table, help, version,
 * and the did-you-mean for a command that does not exist.
 */
#include <stdio.h>
#include <string.h>

#include <bpf/libbpf.h>
#include <elfutils/libdwfl.h>

#include "capture/capture.h"
#include "cli/cmds.h"
#include "support/cli.h"
#include "support/util.h"

static const struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const struct option *opts;
	const char *help;
} cmds[] = {
    {"record", cmd_record, record_options,
     "trace a running process (-p PID) or a command into a capture"},
    {"report", cmd_report, report_options,
     "explain each GPU idle gap of a capture (text, json, csv, html)"},
    {"flame", cmd_flame, flame_options,
     "flame graph of gap time by stack (folded stacks or interactive SVG)"},
    {"diff", cmd_diff, diff_options,
     "compare two captures: what changed, and is it more than noise"},
    {"export", cmd_export, export_options,
     "timeline for the Perfetto UI (Chrome trace JSON): threads, GPU, gaps"},
    {"info", cmd_info, info_options,
     "what a capture holds: header, blocks, lost events, clock check"},
    {"doctor", cmd_doctor, doctor_options,
     "check this host: privileges, BTF, tracepoints, uprobes"},
    {"monitor", cmd_monitor, monitor_options,
     "always on: gap metrics for Prometheus, rolling capture segments"},
    {"dump", cmd_dump, dump_options, "print every record of a capture, one per line (debugging)"},
};

/* Words people try as a command that name an option of one. */
static const struct {
	const char *word, *use;
} aliases[] = {
    {"html", "report --format html"},
    {"json", "report --format json"},
    {"csv", "report --format csv"},
    {"svg", "flame --format svg"},
    {"flamegraph", "flame"},
    {"perfetto", "export"},
    {"trace", "export"},
    {"chrome", "export"},
    {"compare", "diff"},
    {"check", "doctor"},
    {"attach", "record -p PID"},
    {"run", "record -- COMMAND"},
    {"show", "report"},
    {"analyze", "report"},
    {"analyse", "report"},
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
		   "Options:\n"
		   "  -h, --help               this help\n"
		   "  -V, --version            version, and the libraries built in\n\n"
		   "'gaptrace help COMMAND' (or 'gaptrace COMMAND --help') describes each\n"
		   "command; 'gaptrace help --options COMMAND' lists its options, one per\n"
		   "line, for scripts.  Exit codes: 0 ok, 1 runtime failure, 2 bad usage.\n");
}

static void version(void)
{
	printf("gaptrace %s\n", GT_VERSION);
	printf("libbpf %u.%u, libdw (elfutils) %s; capture format %d.%d\n", libbpf_major_version(),
	       libbpf_minor_version(), dwfl_version(NULL), GT_CAP_MAJOR, GT_CAP_MINOR);
	printf("built with cc " __VERSION__ "\n");
}

static const struct cmd *cmd_find(const char *name)
{
	for (size_t i = 0; i < GT_ARRAY_SIZE(cmds); i++)
		if (!strcmp(name, cmds[i].name))
			return &cmds[i];
	return NULL;
}

/* "unknown command 'x'", with the command meant when one is likely. */
static int unknown_command(const char *name)
{
	const char *names[GT_ARRAY_SIZE(cmds) + GT_ARRAY_SIZE(aliases)];
	const char *near;
	size_t n = 0;

	if (name[0] == '-') {
		gt_err("unknown option '%s': options follow the command, e.g. 'gaptrace report "
		       "--help' (commands: 'gaptrace --help')",
		       name);
		return GT_EXIT_USAGE;
	}
	for (size_t i = 0; i < GT_ARRAY_SIZE(aliases); i++)
		if (!strcmp(name, aliases[i].word)) {
			gt_err("unknown command '%s'; did you mean '%s'?", name, aliases[i].use);
			return GT_EXIT_USAGE;
		}
	for (size_t i = 0; i < GT_ARRAY_SIZE(cmds); i++)
		names[n++] = cmds[i].name;
	for (size_t i = 0; i < GT_ARRAY_SIZE(aliases); i++)
		names[n++] = aliases[i].word;
	near = gt_suggest(name, names, n);
	for (size_t i = 0; near && i < GT_ARRAY_SIZE(aliases); i++)
		if (!strcmp(near, aliases[i].word))
			near = aliases[i].use;
	if (near)
		gt_err("unknown command '%s'; did you mean '%s'? (see 'gaptrace --help')", name,
		       near);
	else
		gt_err("unknown command '%s': run 'gaptrace --help' for the list", name);
	return GT_EXIT_USAGE;
}

/* `help --options CMD`: "--long[ ARG]" and "-s" lines, for completion scripts. */
static int list_options(const char *name)
{
	const struct cmd *c = cmd_find(name);

	if (!c)
		return unknown_command(name);
	for (const struct option *o = c->opts; o->name; o++) {
		const char *arg = o->has_arg == required_argument ? " ARG" : "";

		printf("--%s%s\n", o->name, arg);
		if (o->val > ' ' && o->val < 127)
			printf("-%c%s\n", o->val, arg);
	}
	return GT_EXIT_OK;
}

/* gaptrace help [COMMAND | --commands | --options COMMAND] */
static int help(int argc, char **argv)
{
	const struct cmd *c;

	if (argc < 2) {
		usage(stdout);
		return GT_EXIT_OK;
	}
	if (!strcmp(argv[1], "--commands")) {
		for (size_t i = 0; i < GT_ARRAY_SIZE(cmds); i++)
			printf("%s\n", cmds[i].name);
		return GT_EXIT_OK;
	}
	if (!strcmp(argv[1], "--options")) {
		if (argc == 3)
			return list_options(argv[2]);
		gt_err("give one command: gaptrace help --options COMMAND");
		return GT_EXIT_USAGE;
	}
	if (argc > 2) {
		gt_err("help takes one command: gaptrace help COMMAND");
		return GT_EXIT_USAGE;
	}
	c = cmd_find(argv[1]);
	if (!c)
		return unknown_command(argv[1]);
	/* Each command owns its help: ask it, as 'gaptrace COMMAND --help' does. */
	{
		char *args[] = {(char *)c->name, "--help", NULL};

		return c->fn(2, args);
	}
}

int main(int argc, char **argv)
{
	const struct cmd *c;

	if (argc < 2) {
		usage(stderr);
		return GT_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help"))
		return help(argc - 1, argv + 1);
	if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version") ||
	    !strcmp(argv[1], "version")) {
		version();
		return GT_EXIT_OK;
	}
	c = cmd_find(argv[1]);
	if (!c)
		return unknown_command(argv[1]);
	return c->fn(argc - 1, argv + 1);
}
