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

/*
 * Tracks that are not threads get process and thread ids above any pid_max
 * (2^22), each tid unique across the trace: Perfetto takes a tid seen under
 * two pids for a recycled thread.
 */
#define EXPORT_PID_GPU	    0x40000000u /* + (device << 16): "GPU N" */
#define EXPORT_TID_GAPS	    1		/* + its pid: the device's idle gaps */
#define EXPORT_TID_STREAM   0x100	/* + its pid + n: one per stream (lane) */
#define EXPORT_PID_GAPTRACE 0x3fff0000u /* work units and lost events */
#define EXPORT_TID_UNITS    1		/* + its pid + lane */
#define EXPORT_TID_LOSSES   0xff	/* + its pid */

static inline uint32_t export__gpu_pid(uint32_t device)
{
	return EXPORT_PID_GPU + ((device & 0x3fffu) << 16);
}
/* Trace timestamps are multiples of this (1/8 us: exact in binary and in ns). */
#define EXPORT_QUANTUM_NS 125

/*
 * Writes r (analysed with an_opts.keep_all for thread states) as a trace
 * event JSON object.  Returns 0, or -1 if writing failed.
 */
int export__chrome_json(FILE *f, const struct an_result *r);
/*
 * The same tracks and slices as a Perfetto protobuf trace (TrackEvent;
 * flows are left out).  Returns 0, or -1 if writing failed.
 */
int export__perfetto_proto(FILE *f, const struct an_result *r);

/* Compressed output (export_zio.c): what a name ending .zst or .gz asks for. */
enum export_z { EXPORT_Z_NONE, EXPORT_Z_ZSTD, EXPORT_Z_GZIP };
enum export_z export__z_of_name(const char *path);
/*
 * A stream that compresses what is written to it into under (left open):
 * NULL after a one-line error.  export__zclose finishes the stream and
 * closes it: 0, or -1 when compressing or writing failed.
 */
FILE *export__zopen(FILE *under, enum export_z kind);
int export__zclose(FILE *zf);

#endif /* GT_EXPORT_H */
