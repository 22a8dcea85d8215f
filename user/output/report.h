/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * report.h: helpers the report-like commands (report, info, and later flame,
 * diff, export) share: open + analyse a capture, parse --unit.
 */
#ifndef GT_REPORT_H
#define GT_REPORT_H

struct an_opts;
struct an_result;
struct capture;

/* Opens path and analyses it; on failure prints the one-line error, returns -1. */
int report__open_analyse(const char *path, const struct an_opts *an, struct capture **cap,
			 struct an_result **res);
/* Parses a report --unit SPEC into an. Returns 0 or -1. */
int report__parse_unit(const char *spec, struct an_opts *an);

/*
 * The analysis options report, diff, flame and export share: each parses
 * its argument into an, or prints the one-line error and returns -1.
 * flag is the option's name as the command spells it ("--unit").
 */
int report__opt_min_gap(const char *arg, struct an_opts *an);
int report__opt_units(const char *flag, const char *arg, struct an_opts *an);
int report__opt_depth(const char *arg, struct an_opts *an);

#endif /* GT_REPORT_H */
