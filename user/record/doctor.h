/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * doctor.h: whether this host can record, checked (privileges, BTF,
 * tracepoints, uprobes, sampling, the BPF programs, debug symbols, the GPU
 * side), each check with how to fix what is missing.
 */
#ifndef GT_DOCTOR_H
#define GT_DOCTOR_H

#include <stdbool.h>

/*
 * Runs every check and prints them as text or JSON (schema
 * gaptrace.doctor/1) on stdout.  GT_EXIT_OK when recording will work,
 * else GT_EXIT_FAIL.
 */
int doctor__run(bool json);

#endif /* GT_DOCTOR_H */
