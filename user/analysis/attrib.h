/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * attrib.h: splits each gap into categories (attrib.c).  Private to the
 * analysis files.
 */
#ifndef GT_ATTRIB_H
#define GT_ATTRIB_H

struct model;
struct an_result;

#include <stddef.h>

/* Explains every gap of r from the model's CPU-side records (pass 2). */
void attrib__explain_all(struct model *m, struct an_result *r);
/*
 * Explains gap i alone, once pass 2 holds every record of its window, and
 * adds it to r's totals; pieces_cap is r->pieces' capacity, kept by the
 * caller across calls.  Gaps may be explained in any order: then
 * attrib__finish puts the pieces back in gap order.
 */
void attrib__explain(struct model *m, struct an_result *r, size_t i, size_t *pieces_cap);
void attrib__finish(struct an_result *r);

#endif /* GT_ATTRIB_H */
