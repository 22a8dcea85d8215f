// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cli.c: the options every command shares and how they are parsed and
 * explained: short options from the long table, durations, did-you-mean.
 */
#include <ctype.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "support/cli.h"
#include "support/term.h"
#include "support/util.h"

/* The table and arguments of the option loop under way, for gt_opt_common's messages. */
static const struct option *cur_opts;
static char **cur_argv;

void gt_optstring(const struct option *opts, bool in_order, char *buf, size_t len)
{
	size_t o = 0;

	if (len < 3)
		return;
	if (in_order)
		buf[o++] = '+';
	buf[o++] = ':';
	for (; opts && opts->name && o + 3 < len; opts++) {
		if (opts->flag || opts->val <= ' ' || opts->val >= 127)
			continue;
		buf[o++] = (char)opts->val;
		if (opts->has_arg == required_argument)
			buf[o++] = ':';
		else if (opts->has_arg == optional_argument) {
			buf[o++] = ':';
			buf[o++] = ':';
		}
	}
	buf[o] = '\0';
}

int gt_getopt(int argc, char **argv, const struct option *opts, bool in_order)
{
	char shorts[128];

	gt_optstring(opts, in_order, shorts, sizeof(shorts));
	cur_opts = opts;
	cur_argv = argv;
	opterr = 0;
	return getopt_long(argc, argv, shorts, opts, NULL);
}

size_t gt_edit_distance(const char *a, const char *b)
{
	size_t la = GT_MIN(strlen(a), 64), lb = GT_MIN(strlen(b), 64);
	size_t rows[3][65], *prev2 = rows[0], *prev = rows[1], *cur = rows[2];

	/* Levenshtein with adjacent transpositions ("jsno" is one step from "json"). */
	for (size_t j = 0; j <= lb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t *t;

		cur[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			int ca = tolower((unsigned char)a[i - 1]),
			    cb = tolower((unsigned char)b[j - 1]);
			size_t v =
			    GT_MIN(GT_MIN(cur[j - 1] + 1, prev[j] + 1), prev[j - 1] + (ca != cb));

			if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
			    cb == tolower((unsigned char)a[i - 2]))
				v = GT_MIN(v, prev2[j - 2] + 1);
			cur[j] = v;
		}
		t = prev2;
		prev2 = prev;
		prev = cur;
		cur = t;
	}
	return prev[lb];
}

const char *gt_suggest(const char *word, const char *const *cands, size_t n)
{
	size_t best = SIZE_MAX, limit = GT_MAX(strlen(word) / 3, 1);
	const char *pick = NULL;

	for (size_t i = 0; i < n; i++) {
		size_t d = gt_edit_distance(word, cands[i]);

		if (d < best) {
			best = d;
			pick = cands[i];
		}
	}
	return best <= limit ? pick : NULL;
}

int gt_opt_choice(const char *flag, const char *arg, const char *const names[])
{
	char hint[256], more[96] = "";
	size_t n = 0, len = 0;
	const char *near;

	for (; names[n]; n++)
		if (!strcmp(arg, names[n]))
			return (int)n;
	hint[0] = '\0';
	for (size_t i = 0; i < n && len < sizeof(hint); i++) {
		const char *sep = i == n - 1 ? " or " : ", ";

		len += (size_t)snprintf(hint + len, sizeof(hint) - len, "%s%s", i ? sep : "",
					names[i]);
	}
	near = gt_suggest(arg, names, n);
	if (near)
		snprintf(more, sizeof(more), " (did you mean '%s'?)", near);
	gt_err("bad %s '%s': use %s%s", flag, arg, hint, more);
	return -1;
}

/* The option that getopt stopped at, as the user wrote it: "--min-gpa", "-x". */
static void bad_option_name(char *buf, size_t len)
{
	const char *arg = cur_argv && optind > 0 ? cur_argv[optind - 1] : NULL;

	if (arg && !strncmp(arg, "--", 2)) {
		snprintf(buf, len, "%.*s", (int)strcspn(arg, "="), arg);
		return;
	}
	if (optopt > ' ' && optopt < 127)
		snprintf(buf, len, "-%c", optopt);
	else
		snprintf(buf, len, "%s", arg ? arg : "?");
}

/* " (did you mean '--min-gap'?)" for a mistyped long option, else "". */
static void option_hint(const char *name, char *buf, size_t len)
{
	const char *names[128];
	const char *near;
	size_t n = 0;

	buf[0] = '\0';
	if (strncmp(name, "--", 2) || !cur_opts)
		return;
	for (const struct option *o = cur_opts; o->name && n < GT_ARRAY_SIZE(names); o++)
		names[n++] = o->name;
	near = gt_suggest(name + 2, names, n);
	if (near)
		snprintf(buf, len, "; did you mean '--%s'?", near);
}

int gt_opt_common(int c, const char *cmd, void (*usage)(FILE *f))
{
	char name[64], hint[96];

	switch (c) {
	case 'v':
		gt_verbose++;
		return GT_OPT_NEXT;
	case 'h':
		usage(stdout);
		return GT_EXIT_OK;
	case GT_OPT_COLOR:
		return term__set_color(optarg) ? GT_EXIT_USAGE : GT_OPT_NEXT;
	case ':':
		bad_option_name(name, sizeof(name));
		gt_err("option '%s' needs a value; see 'gaptrace %s --help'", name, cmd);
		return GT_EXIT_USAGE;
	default:
		bad_option_name(name, sizeof(name));
		option_hint(name, hint, sizeof(hint));
		gt_err("unknown option '%s' for %s%s (see 'gaptrace %s --help')", name, cmd, hint,
		       cmd);
		return GT_EXIT_USAGE;
	}
}

/* A bound as the user would write it: "1h", "100us", "1ms". */
static const char *fmt_bound(uint64_t ns, char *buf, size_t len)
{
	static const struct {
		uint64_t ns;
		const char *unit;
	} units[] = {{3600 * NSEC_PER_SEC, "h"}, {60 * NSEC_PER_SEC, "m"}, {NSEC_PER_SEC, "s"},
		     {NSEC_PER_MSEC, "ms"},	 {NSEC_PER_USEC, "us"},	   {1, "ns"}};
	size_t i = 0;

	while (ns % units[i].ns)
		i++;
	snprintf(buf, len, "%llu%s", (unsigned long long)(ns / units[i].ns), units[i].unit);
	return buf;
}

int gt_opt_duration(const char *flag, const char *arg, uint64_t min_ns, uint64_t max_ns,
		    uint64_t *ns)
{
	char lo[32], hi[32];
	uint64_t v;

	if (gt_parse_duration(arg, &v)) {
		gt_err("bad %s '%s': give a number with a unit ns, us, ms, s, m or h "
		       "(e.g. 500ms, 2.5s), or a bare number of seconds",
		       flag, arg);
		return -1;
	}
	if (v < min_ns || v > max_ns) {
		fmt_bound(min_ns, lo, sizeof(lo));
		fmt_bound(max_ns, hi, sizeof(hi));
		if (min_ns)
			gt_err("bad %s '%s': give %s to %s (a bare number is seconds)", flag, arg,
			       lo, hi);
		else
			gt_err("bad %s '%s': give at most %s (a bare number is seconds)", flag, arg,
			       hi);
		return -1;
	}
	*ns = v;
	return 0;
}

int gt_opt_min_gap(const char *arg, uint64_t *ns)
{
	/* A 0 gap would make every pair of adjacent GPU operations a gap; an
	 * hour bounds what a slip to old nanosecond counts ("1000000") gives. */
	return gt_opt_duration("--min-gap", arg, NSEC_PER_USEC, 3600 * NSEC_PER_SEC, ns);
}

void gt_help_opt(FILE *f, int col, const char *opt, const char *text)
{
	int w = fprintf(f, "  %s", opt);

	if (w >= col) {
		fputc('\n', f);
		w = 0;
	}
	while (*text) {
		size_t n = strcspn(text, "\n");

		fprintf(f, "%*s%.*s\n", col - w, "", (int)n, text);
		w = 0;
		text += n + (text[n] == '\n');
	}
}
