/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * fpless.h: tells the BPF sampler which code of each traced process has no
 * frame pointers, so that only samples there pay for a stack snapshot.
 */
#ifndef GT_FPLESS_H
#define GT_FPLESS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct fpless;

/*
 * map_fd: the BPF map fpless (tgid -> struct gt_fpless).  all: every
 * object without frame pointers, else only the system libraries' (libc,
 * libstdc++, ld.so: what a user cannot rebuild, and where the allocator is).
 */
struct fpless *fpless__new(int map_fd, bool all);
void fpless__free(struct fpless *f); /* NULL-safe */
/*
 * Reads pid's mappings and puts the executable ranges of its objects
 * without frame pointers into the map (written only when they changed).
 * Returns how many ranges pid has, or -errno.
 */
int fpless__update(struct fpless *f, pid_t pid);
/* Removes pid's ranges (it exited). */
void fpless__forget(struct fpless *f, pid_t pid);

#endif /* GT_FPLESS_H */
