/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * attrib.h: splits each gap into categories (attrib.c).  Private to the
 * analysis files.
 */
#ifndef GT_ATTRIB_H
#define GT_ATTRIB_H

struct model;
struct an_result;

/* Explains every gap of r from the model's CPU-side records (pass 2). */
void attrib__explain_all(struct model *m, struct an_result *r);

#endif /* GT_ATTRIB_H */
