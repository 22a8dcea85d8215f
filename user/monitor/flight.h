/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * flight.h: the monitor's flight recorder: one capture per window, named in
 * time order in one folder, the oldest deleted beyond --keep / --keep-size,
 * and snapshots that keep the latest segments under a name of their own.
 */
#ifndef GT_FLIGHT_H
#define GT_FLIGHT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct flight_seg {
	char name[64]; /* in the folder */
	uint64_t bytes;
	uint64_t end_ns; /* CLOCK_MONOTONIC end; 0: left by an earlier run */
};

struct flight {
	char dir[PATH_MAX];
	uint64_t keep_ns, keep_bytes; /* 0: no bound of that kind */
	struct flight_seg *segs;      /* oldest first; the last is being written */
	size_t n, cap;
	uint64_t seq;
	bool writing; /* segs[n - 1] is open */
	char cur[PATH_MAX + 64];
	char next[64]; /* name of the last flight__next */
};

/*
 * Makes dir (mode 0700) if needed and counts the segments an earlier run
 * left there.  0, or -1 with a one-line message in err.
 */
int flight__open(struct flight *f, const char *dir, uint64_t keep_ns, uint64_t keep_bytes,
		 char *err, size_t errlen);
/* The path for a new segment (not counted until flight__begin). */
const char *flight__next(struct flight *f);
/* The segment of the last flight__next is being written now. */
void flight__begin(struct flight *f);
/* The segment being written was closed at end_ns: counts it, deletes what is beyond the bounds. */
void flight__closed(struct flight *f, uint64_t end_ns);
/*
 * Keeps the last n closed segments under dir/snapshots/NAME-TIME/ (hard
 * links: retention never deletes them).  The new folder in out; 0 or -1
 * after a one-line warning.
 */
int flight__snapshot(struct flight *f, const char *name, size_t n, char *out, size_t outlen);
/* Bytes of the closed segments kept. */
uint64_t flight__bytes(const struct flight *f);
/* The path of closed segment i (0: oldest). */
void flight__path(const struct flight *f, size_t i, char *out, size_t len);
void flight__close(struct flight *f);

#endif /* GT_FLIGHT_H */
