/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * export.h: a capture as a Chrome JSON trace (what the Perfetto UI, and
 * speedscope for its slices, open): thread states, GPU streams, gaps, units, flows.
 */
#ifndef GT_EXPORT_H
#define GT_EXPORT_H

#include <stdint.h>
#include <stdio.h>

struct an_result;

/* Synthetic process ids of the tracks that are not threads (above any pid_max). */
#define EXPORT_PID_GPU 0x40000000u /* + device id */
#define EXPORT_PID_GAPTRACE 0x3fffffffu /* work units, lost events */
/* Trace timestamps are multiples of this (1/8 us: exact in binary and in ns). */
#define EXPORT_QUANTUM_NS 125

/*
 * Writes r (analysed with an_opts.keep_all for thread states) as a trace
 * event JSON object.  Returns 0, or -1 if writing failed.
 */
int export__chrome_json(FILE *f, const struct an_result *r);

#endif /* GT_EXPORT_H */
