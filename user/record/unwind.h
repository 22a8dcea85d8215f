/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * unwind.h: DWARF unwinding of user stack snapshots (--stacks dwarf) with
 * elfutils libdw against the live process's mappings, and the check that
 * tells a binary built without frame pointers.
 */
#ifndef GT_UNWIND_H
#define GT_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Stack ids at or above this were unwound by the recorder from a snapshot
 * (STACKS flag GT_STACK_DWARF); below it they are BPF stack map ids.
 */
#define GT_STACK_DWARF_BASE 0x40000000

struct unwinder;

struct unwinder *unwinder__new(void);
void unwinder__free(struct unwinder *u); /* NULL-safe */

/*
 * Unwinds one snapshot of thread tid of process pid: regs are the user
 * registers in x86-64 DWARF order (GT_UREGS_NR of them: ax dx cx bx si di bp
 * sp r8-r15 ip), stack the bytes copied from regs[7] (sp) upward.  Fills ips
 * leaf first (the interrupted ip, then return addresses, as a frame-pointer
 * stack has them) and returns how many, 0 when not even the first frame could
 * be placed, or -errno (-ESRCH: the process is gone).  Stack reads outside
 * the snapshot fail: the live stack has moved on since it was taken.
 */
int unwinder__unwind(struct unwinder *u, uint32_t pid, uint32_t tid, const uint64_t *regs,
		     const void *stack, size_t stack_len, uint64_t *ips, size_t max);

/*
 * Reads pid's mappings now if they are not known yet, so that snapshots that
 * arrive after the process exits can still be unwound.  0 or -ESRCH.
 */
int unwinder__prepare(struct unwinder *u, uint32_t pid);

/* Forgets pid's mappings (it exec'ed). */
void unwinder__forget(struct unwinder *u, uint32_t pid);

/*
 * The synthetic stack id of (pid, ips): the same id for the same frames, a
 * new one (from GT_STACK_DWARF_BASE up) otherwise, with *is_new set.
 * Returns -1 when the id space is exhausted.
 */
int32_t unwinder__intern(struct unwinder *u, uint32_t pid, const uint64_t *ips, uint16_t nr,
			 bool *is_new);

struct unwind_stats {
	uint64_t snapshots; /* unwinder__unwind calls */
	uint64_t frames;    /* frames produced */
	uint64_t failed;    /* snapshots that gave no frame */
	uint64_t shallow;   /* snapshots that gave only 1-2 frames */
	uint64_t cpu_ns;    /* recorder CPU time spent unwinding */
};
void unwinder__stats(const struct unwinder *u, struct unwind_stats *st);

/*
 * Looks at the prologues of up to 2000 functions of an x86-64 ELF file: a
 * binary built with frame pointers sets up %rbp (push %rbp; mov %rsp,%rbp)
 * in almost all of them.  Returns 1 (frame pointers), 0 (none: fp stacks
 * through it are truncated) or -errno (-ENODATA: too few functions to tell,
 * -ENOTSUP: not x86-64).  The counts go to checked and with_fp (either may be NULL).
 */
int unwind_elf_frame_pointers(const char *path, unsigned *checked, unsigned *with_fp);
/* The same on an open file (fd: consumed; a negative errno passes through). */
int unwind_elf_frame_pointers_fd(int fd, unsigned *checked, unsigned *with_fp);

/* Whether a mapped path lies in the system library folders (/lib, /usr/lib, ...). */
bool unwind_system_object(const char *path);

/*
 * Frame-pointer audit of an fp recording: objects seen in user stacks (and
 * the traced executables) are checked once; the stack depths are counted as
 * evidence.  Report prints one warning per object without frame pointers.
 */
struct fp_audit;

struct fp_audit *fp_audit__new(void);
void fp_audit__free(struct fp_audit *a); /* NULL-safe */
/* An object of process pid (path as mapped in it; main: its executable). */
void fp_audit__object(struct fp_audit *a, uint32_t pid, const char *path, bool main);
/* One user stack of nr frames was recorded. */
void fp_audit__stack(struct fp_audit *a, uint16_t nr);
/*
 * Warns (gt_warn) once per object without frame pointers that the user can
 * rebuild (the executables and objects outside the system library folders;
 * the others under -v), naming the cost of --stacks dwarf: bytes_per_interval.
 * Returns the number of warnings printed.
 */
unsigned fp_audit__report(struct fp_audit *a, uint64_t bytes_per_interval);

#endif /* GT_UNWIND_H */
