/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * u64map.h: the program's one hash table, u64 -> u64 with open addressing.
 * Every key value is allowed (ids come from the traced program), so
 * occupancy is a flag per slot, not a reserved key.  Values are usually an
 * index into an array the caller owns; a set ignores them.
 */
#ifndef GT_U64MAP_H
#define GT_U64MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct u64map {
	uint64_t *keys, *vals;
	bool *used; /* slot occupied */
	size_t cap, n;
};

bool u64map_get(const struct u64map *m, uint64_t key, uint64_t *val);
/* Inserts or replaces. */
void u64map_put(struct u64map *m, uint64_t key, uint64_t val);
/* Inserts key -> val when key is absent: true if it was inserted (a set's add). */
bool u64map_add(struct u64map *m, uint64_t key, uint64_t val);
/* Empties the map and keeps its memory. */
void u64map_clear(struct u64map *m);
void u64map_free(struct u64map *m);

#endif
