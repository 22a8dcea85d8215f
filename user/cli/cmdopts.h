/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * cmdopts.h: what the analysing commands (report, flame, diff, export)
 * share on the command line: the long options they all take, one parser
 * and one message per analysis option (--min-gap, --unit SPEC, --depth),
 * the capture argument checks, and one tail that analyses the captures,
 * writes the output and closes it.
 */
#ifndef GT_CMDOPTS_H
#define GT_CMDOPTS_H

#include <stdbool.h>
#include <stdio.h>

#include "support/cli.h"

struct an_opts;
struct an_result;
struct capture;

/*
 * The long options every analysing command takes, in this order, at the
 * end of its table (before any deprecated spelling and the {} that ends it).
 */
/* clang-format off */
#define CMDOPTS_LONGOPTS					\
	{"output", required_argument, NULL, 'o'},		\
	GT_LONGOPT_MIN_GAP,					\
	{"unit", required_argument, NULL, 'u'},			\
	{"depth", required_argument, NULL, GT_OPT_DEPTH},	\
	GT_LONGOPT_COLOR,					\
	GT_LONGOPT_VERBOSE,					\
	GT_LONGOPT_HELP
/* clang-format on */

/*
 * The help of the CMDOPTS_LONGOPTS options but -o (each command says where
 * its output goes), option text from column col, then what a DUR is.
 */
void cmdopts__help(FILE *f, int col);

/*
 * Each parses its argument into an, or prints the one-line error and
 * returns -1.  flag is the option's name as the command spells it ("--unit").
 */
int cmdopts__min_gap(const char *arg, struct an_opts *an);
/* SPEC: usdt, func:FUNC, nvtx:GLOB, burst[:DUR]. */
int cmdopts__unit(const char *flag, const char *arg, struct an_opts *an);
int cmdopts__depth(const char *arg, struct an_opts *an);

/* --top N: a number of WHAT ("gaps", "rows") to list. */
int cmdopts__top(const char *arg, const char *what, unsigned *top);

/*
 * The one capture after the options of cmd: its path, or NULL after the
 * usage error (none given, or more than one).
 */
const char *cmdopts__one_capture(int argc, char **argv, const char *cmd);

/* Opens path and analyses it; on failure prints the one-line error, returns -1. */
int cmdopts__open_analyse(const char *path, const struct an_opts *an, struct capture **cap,
			  struct an_result **res);

/* One command run: its captures, how to analyse them and what to write. */
struct cmd_job {
	const char *paths[2];	  /* the capture, or BEFORE and AFTER; paths[1] may be NULL */
	const struct an_opts *an; /* for every capture */
	const char *outpath;	  /* NULL or "-": stdout */
	/*
	 * -f/--format: one of formats (NULL-ended), stored in *format (which
	 * holds the default).  formats NULL: the command parses -f itself.
	 */
	const char *const *formats;
	const char **format;
	/*
	 * On a write error (write returned -1): "writing WHAT failed: <errno>",
	 * WHAT being outpath, or what when writing to stdout.  NULL: no message.
	 */
	const char *what;
	/*
	 * The output is text for people (not json, csv or a graph): coloured
	 * per --color, wrapped to the terminal's width, ASCII in a locale
	 * that is not UTF-8.
	 */
	bool text;
	/* Optional, after the analysis and before the output is opened: 0 or -1 (said why). */
	int (*prepare)(struct cmd_job *job);
	/* Writes the output: 0, or -1 on a write error. */
	int (*write)(struct cmd_job *job, FILE *out);
	void *ctx; /* the command's own */
	/* Filled by cmdopts__run, valid in prepare and write. */
	bool color;	/* text: ANSI colours wanted */
	unsigned width; /* text: columns available, 0 for no limit */
	bool ascii;	/* text: no UTF-8 (the filter transliterates what is left) */
	struct capture *cap[2];
	struct an_result *res[2];
};

/*
 * The end of an analysing command's option switch, for what getopt_long
 * returned (c): -f when job->formats is set, the CMDOPTS_LONGOPTS options (-o
 * sets job->outpath; -m, -u and --depth fill an), then -v, -h and unknown
 * options (gt_opt_common).
 * Returns GT_OPT_NEXT to go on, or the exit code.
 */
int cmdopts__option(int c, const char *cmd, void (*usage)(FILE *f), struct cmd_job *job,
		    struct an_opts *an);

/*
 * Analyses the captures, opens the output, writes and closes it (a file
 * appears only when all of that worked), then frees the captures and
 * results.  Returns GT_EXIT_OK or GT_EXIT_FAIL after a one-line error.
 */
int cmdopts__run(struct cmd_job *job);

#endif /* GT_CMDOPTS_H */
