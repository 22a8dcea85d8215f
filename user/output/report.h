/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * report.h: the gap report's writers: a table for people (text), a stable
 * machine interface (json, schema gaptrace.report/1) or one row per gap (csv).
 */
#ifndef GT_REPORT_H
#define GT_REPORT_H

#include <stdbool.h>
#include <stdio.h>

struct an_result;

/* What the command asked for beyond the analysis (which r->opts holds). */
struct report_opts {
	const char *path;
	const char *format;
	unsigned top; /* largest gaps listed in text */
	/* How the text is shown (cmdopts__run decides for the output). */
	bool color, ascii;
	unsigned width; /* 0: no limit */
};

void report__text(FILE *f, const struct an_result *r, const struct report_opts *o);
void report__json(FILE *f, const struct an_result *r, const struct report_opts *o);
void report__csv(FILE *f, const struct an_result *r);

#endif /* GT_REPORT_H */
