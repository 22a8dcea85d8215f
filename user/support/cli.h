/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * cli.h: the command line every command shares: getopt_long with the short
 * options taken from the long-option table, the options several commands
 * take (durations, --min-gap, --color, -v, -h) with one validation, one
 * message and one help text each, and did-you-mean hints.
 */
#ifndef GT_CLI_H
#define GT_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * An entry of a long-option table whose val is a printable ASCII character
 * is also that short option; long-only options use a val >= GT_OPT_LONG.
 */
#define GT_OPT_LONG 256
enum {
	GT_OPT_COLOR = 0x1000, /* above every command's own long-only values */
	GT_OPT_DEPTH,
};

/* clang-format off */
#define GT_LONGOPT_MIN_GAP {"min-gap", required_argument, NULL, 'm'}
#define GT_LONGOPT_COLOR   {"color", required_argument, NULL, GT_OPT_COLOR}
#define GT_LONGOPT_VERBOSE {"verbose", no_argument, NULL, 'v'}
#define GT_LONGOPT_HELP    {"help", no_argument, NULL, 'h'}
/* clang-format on */

/*
 * The getopt_long short-option string of opts (ended by {}): "+" first when
 * in_order (stop at the first operand: record's COMMAND), then ":" so that a
 * missing argument is told apart from an unknown option.
 */
void gt_optstring(const struct option *opts, bool in_order, char *buf, size_t len);

/*
 * getopt_long over opts with gt_optstring's short options and getopt's own
 * messages off: gt_opt_common says what was wrong, with a did-you-mean.
 */
int gt_getopt(int argc, char **argv, const struct option *opts, bool in_order);

/*
 * The index of arg in names (NULL-ended), or -1 after "bad FLAG 'ARG': use
 * A, B or C" (with a did-you-mean when one name is close).
 */
int gt_opt_choice(const char *flag, const char *arg, const char *const names[]);

/* What gt_opt_common returns when the option loop goes on. */
#define GT_OPT_NEXT (-1)
/*
 * The end of every command's option switch, for what gt_getopt returned
 * (c): -v counts (GT_OPT_NEXT), --color sets the colour mode, -h prints
 * usage on stdout (GT_EXIT_OK); an unknown option or a missing argument is
 * a one-line error naming it (and the nearest option of the command), then
 * GT_EXIT_USAGE.
 */
int gt_opt_common(int c, const char *cmd, void (*usage)(FILE *f));

/*
 * A duration option: a number with a unit (ns, us, ms, s, m, h) or a bare
 * number of seconds, within [min_ns, max_ns].  Returns 0, or -1 after the
 * error naming flag, the units and the range.
 */
int gt_opt_duration(const char *flag, const char *arg, uint64_t min_ns, uint64_t max_ns,
		    uint64_t *ns);

/*
 * --min-gap, the same rule, default and help (GT_HELP_MIN_GAP) for record
 * and the analysing commands (an_opts__defaults).
 */
#define GT_MIN_GAP_DEFAULT_NS 1000000ULL
int gt_opt_min_gap(const char *arg, uint64_t *ns);

/*
 * One option's help: "  OPT" then TEXT from column col (on the next line
 * when OPT reaches it); each '\n' of TEXT starts a line at col.
 */
void gt_help_opt(FILE *f, int col, const char *opt, const char *text);

/* The shared options' help, as gt_help_opt arguments. */
#define GT_HELP_MIN_GAP \
	"-m, --min-gap DUR", "shortest GPU idle time that is a gap\n(default 1ms; 1us to 1h)"
#define GT_HELP_DEPTH "    --depth N", "critical-path hops to follow (default 4)"
#define GT_HELP_COLOR                    \
	"    --color auto|always|never", \
	    "colour (default auto: on a terminal, unless\nNO_COLOR is set)"
#define GT_HELP_VERBOSE "-v, --verbose", "more detail on stderr"
#define GT_HELP_HELP	"-h, --help", "this help"
/* Every help that takes a DUR says how it is read. */
#define GT_HELP_DUR                                                                      \
	"DUR is a number with a unit: ns, us, ms, s, m or h (500us, 2.5s, 2m); a bare\n" \
	"number is seconds.\n"

/* Levenshtein distance of a and b (each cut at 64 characters). */
size_t gt_edit_distance(const char *a, const char *b);
/*
 * The candidate nearest to word when it is near enough to be a likely typo
 * (distance at most 1 for short words, a third of the length for long
 * ones), else NULL.
 */
const char *gt_suggest(const char *word, const char *const *cands, size_t n);

#endif /* GT_CLI_H */
