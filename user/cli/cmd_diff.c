// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cmd_diff.c: `gaptrace diff BEFORE AFTER` — options and help; the
 * comparison is output/diff.c, its writers output/diff_print.c.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "capture/capture.h"
#include "cli/cmdopts.h"
#include "cli/cmds.h"
#include "output/diff.h"
#include "support/util.h"

struct diff_opts {
	const char *format;
	const char *flame;
	unsigned top;
	struct an_opts an;
	struct df_rule rule;
	bool fail_on_regression; /* --fail-on-regression */
	const char *regressed;	 /* the first value that grew significantly */
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: gaptrace diff BEFORE AFTER [options]\n"
		"\n"
		"Compares two captures of the same program, taken before and after a change,\n"
		"and says whether the GPU's idle gaps shrank, in which category, and whether\n"
		"that is more than run-to-run noise.\n"
		"\n"
		"Each gap is one observation of its category times (a unit-to-unit transition\n"
		"without any gap counts as a gap of 0, so a removed gap is not a lost data\n"
		"point).  Per category it prints the median, p90 and p99 per gap, the change of\n"
		"the mean with a 99%% bootstrap interval, and a two-sided Mann-Whitney U p-value\n"
		"(exact for up to %d observations), Holm-adjusted for the number of categories\n"
		"tested.  A change is SIGNIFICANT only when that p < alpha, the interval\n"
		"excludes 0 and the change is at least --min-effect and 10%% of the before\n"
		"mean: a one-off fluctuation is not a win.  Inter-unit gaps are also\n"
		"paired by unit id (Wilcoxon signed-rank), and the stacks whose attributed gap\n"
		"time moved most are listed.  Record the same workload (same units, at least\n"
		"8 of them: with fewer gaps no change can reach p < 0.01 after the adjustment)\n"
		"twice for the comparison to mean something.\n"
		"\n"
		"Options:\n"
		"  -f, --format text|json  output format (default text; json follows schema\n"
		"                          gaptrace.diff/1, see docs/report-schema.md)\n"
		"      --flame svg         instead, a differential flame graph: AFTER's gap-time\n"
		"                          stacks, red where they grew, blue where they shrank\n"
		"  -o, --output FILE       write to FILE instead of stdout ('-': stdout)\n"
		"  -n, --top N             transitions and stacks listed (default 10)\n"
		"  -a, --alpha P           p-value threshold (default 0.01)\n"
		"  -e, --min-effect DUR    smallest mean change per gap that matters\n"
		"                          (default 500us)\n"
		"      --fail-on-regression\n"
		"                          exit 3 when a category's (or the total) gap time\n"
		"                          grew SIGNIFICANTLY (the rule above): for CI\n",
		ST_EXACT_MAX);
	cmdopts__help(f, 26);
	fprintf(f, "\n"
		   "Example:\n"
		   "  gaptrace diff before.gtcap after.gtcap\n"
		   "  gaptrace diff before.gtcap after.gtcap --flame svg -o change.svg\n"
		   "\n"
		   "A warning is printed when the captures are of different programs (executable\n"
		   "build id, path or command line differ).\n"
		   "\n"
		   "Exit codes: 0 ok (whatever the verdict, unless --fail-on-regression), 1 a\n"
		   "capture cannot be read, 2 bad usage, 3 a significant regression with\n"
		   "--fail-on-regression.\n");
}

/*
 * Captures of two different programs compare nothing: said, not refused
 * (a renamed or rebuilt binary is a fair before/after).  The executable's
 * build id where both headers have it, else its path, else the command line.
 */
static int diff_same_program(struct cmd_job *job)
{
	static const enum capture_key keys[] = {CK_EXE_BUILD_ID, CK_EXE, CK_TARGET_CMDLINE,
						CK_COMM};

	for (size_t i = 0; i < GT_ARRAY_SIZE(keys); i++) {
		const char *b = capture__header_key(job->cap[0], keys[i]);
		const char *a = capture__header_key(job->cap[1], keys[i]);

		if (!b || !a)
			continue;
		if (strcmp(b, a))
			gt_warn("%s and %s are captures of different programs (%s '%s' and '%s'): "
				"the comparison may mean nothing; compare two runs of one program",
				job->paths[0], job->paths[1], capture_key__name(keys[i]), b, a);
		return 0;
	}
	return 0;
}

static int diff_write(struct cmd_job *job, FILE *out)
{
	struct diff_opts *o = job->ctx;
	struct an_result *rb = job->res[0], *ra = job->res[1];
	struct df_result *d;
	int ret = 0;

	d = o->flame && !o->fail_on_regression
		? NULL
		: diff__compute(rb, ra, &o->rule, job->cap[0], job->cap[1]);
	if (d)
		o->regressed = diff__regression(d);
	if (o->flame) {
		ret = diff__flame_svg(out, rb, ra, job->cap[0], job->cap[1]);
		diff__free(d);
		return ret;
	}
	if (!strcmp(o->format, "json"))
		diff__print_json(out, rb, ra, d, o->top);
	else
		diff__print_text(out, rb, ra, d, o->top);
	diff__free(d);
	return 0;
}

enum { OPT_FLAME = GT_OPT_LONG, OPT_FAIL_ON_REGRESSION };
const struct option diff_options[] = {
    {"format", required_argument, NULL, 'f'},
    {"flame", required_argument, NULL, OPT_FLAME},
    {"top", required_argument, NULL, 'n'},
    {"alpha", required_argument, NULL, 'a'},
    {"min-effect", required_argument, NULL, 'e'},
    {"fail-on-regression", no_argument, NULL, OPT_FAIL_ON_REGRESSION},
    CMDOPTS_LONGOPTS,
    {},
};

int cmd_diff(int argc, char **argv)
{
	static const char *const formats[] = {"text", "json", NULL};
	static const char *const flames[] = {"svg", NULL};
	struct diff_opts o = {.format = "text", .top = 10};
	/* No .what: a failed --flame write gets no message of its own. */
	struct cmd_job job = {.an = &o.an,
			      .formats = formats,
			      .format = &o.format,
			      .prepare = diff_same_program,
			      .write = diff_write,
			      .ctx = &o};
	int c, ret;
	char *end;

	an_opts__defaults(&o.an);
	o.an.pieces = true;
	df_rule__defaults(&o.rule);
	optind = 1;
	while ((c = gt_getopt(argc, argv, diff_options, false)) != -1) {
		switch (c) {
		case OPT_FLAME:
			if (gt_opt_choice("--flame", optarg, flames) < 0)
				return GT_EXIT_USAGE;
			o.flame = optarg;
			break;
		case OPT_FAIL_ON_REGRESSION:
			o.fail_on_regression = true;
			break;
		case 'n':
			if (cmdopts__top(optarg, "rows", &o.top))
				return GT_EXIT_USAGE;
			break;
		case 'a':
			o.rule.alpha = strtod(optarg, &end);
			if (*end || !*optarg || !(o.rule.alpha > 0 && o.rule.alpha < 1)) {
				gt_err("bad --alpha '%s': give a p-value threshold such as 0.01",
				       optarg);
				return GT_EXIT_USAGE;
			}
			break;
		case 'e':
			if (gt_opt_duration("--min-effect", optarg, 0, 3600 * NSEC_PER_SEC,
					    &o.rule.min_effect_ns))
				return GT_EXIT_USAGE;
			break;
		default:
			ret = cmdopts__option(c, "diff", usage, &job, &o.an);
			if (ret != GT_OPT_NEXT)
				return ret;
		}
	}
	if (argc - optind != 2) {
		gt_err("give two captures: gaptrace diff BEFORE AFTER (see --help)");
		return GT_EXIT_USAGE;
	}
	job.paths[0] = argv[optind];
	job.paths[1] = argv[optind + 1];
	job.text = !o.flame && !strcmp(o.format, "text");
	ret = cmdopts__run(&job);
	if (ret == GT_EXIT_OK && o.fail_on_regression && o.regressed) {
		gt_warn("regression: %s gap time grew significantly from %s to %s "
			"(--fail-on-regression: exit %d)",
			o.regressed, job.paths[0], job.paths[1], GT_EXIT_REGRESSION);
		ret = GT_EXIT_REGRESSION;
	}
	return ret;
}
