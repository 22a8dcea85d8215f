// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* result.c: category and gap-kind names, and the analysis options' defaults. */
#include <string.h>

#include "analysis/result.h"
#include "support/cli.h"
#include "support/util.h"

const char *const gt_cat_names[GT_CAT_MAX] = {
    "scheduler", "lock", "allocator", "wait", "io", "sleep", "cuda", "cpu", "unknown",
};

const char *const gt_gap_kind_names[3] = {"inter-unit", "intra-unit", "unscoped"};

int gt_cat_parse(const char *name)
{
	for (int i = 0; i < GT_CAT_MAX; i++)
		if (!strcmp(name, gt_cat_names[i]))
			return i;
	return -1;
}

void an_opts__defaults(struct an_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->min_gap_ns = GT_MIN_GAP_DEFAULT_NS; /* record's default too */
	o->burst_gap_ns = 10 * NSEC_PER_MSEC;
	o->units = GT_UNITS_AUTO;
	o->max_depth = 4;
}
