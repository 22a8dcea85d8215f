/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * follow_sim.h: the op ids follow_sim and its dlopened library share
 * (tests/workloads/follow_sim.c tells what they mean).
 */
#ifndef FOLLOW_SIM_H
#define FOLLOW_SIM_H

/* Device-0 ops fired before the counted ones: the first seen dates the attach. */
#define FOLLOW_EARLY 1000000000ULL
/* Device-2 op the executable fires when dlopen returned. */
#define FOLLOW_DLOPEN_MARK 2000000000ULL

#endif /* FOLLOW_SIM_H */
