// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cmd_record.c: `gaptrace record` — the recorder's steps in order (its
 * options and help are record/record_opts.c: the monitor's --record-opt
 * takes the same ones).
 */
#include "cli/cmds.h"
#include "record/record.h"
#include "support/util.h"

int cmd_record(int argc, char **argv)
{
	struct recorder *r = record__new(argc, argv);
	int ret = GT_EXIT_FAIL;

	if (!r)
		return GT_EXIT_USAGE;
	if (!record__open(r, argc, argv) && !record__attach(r)) {
		/* The summary comes before the wait: closing links took 13 s on big targets. */
		ret = record__summary(r, record__stop(r, record__run(r)));
		record__detach_wait(r);
	}
	record__free(r);
	return ret;
}
