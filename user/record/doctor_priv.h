/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * doctor_priv.h: what the files of `gaptrace doctor` share: doctor.c (the
 * kernel side, the output as text or JSON) and doctor_gpu.c (the GPU side).
 */
#ifndef GT_DOCTOR_PRIV_H
#define GT_DOCTOR_PRIV_H

enum doctor_verdict { DOCTOR_OK, DOCTOR_WARN, DOCTOR_FAIL };

/* One check's result, printed at the end (text) or written as JSON; fix may be NULL. */
void doctor__check(enum doctor_verdict v, const char *what, const char *detail, const char *fix);

/* libgaptrace-cupti.so and the libcupti it needs, libcuda, ptrace for live injection. */
void doctor__check_gpu(void);

#endif /* GT_DOCTOR_PRIV_H */
