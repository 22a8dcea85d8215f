// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* u64map.c: see u64map.h. */
#include <stdlib.h>
#include <string.h>

#include "support/u64map.h"
#include "support/util.h"

static size_t slot(const struct u64map *m, uint64_t key)
{
	uint64_t h = key * 0x9E3779B97F4A7C15ULL;

	return (size_t)(h ^ (h >> 29)) & (m->cap - 1);
}

bool u64map_get(const struct u64map *m, uint64_t key, uint64_t *val)
{
	if (!m->cap)
		return false;
	for (size_t i = slot(m, key);; i = (i + 1) & (m->cap - 1)) {
		if (!m->used[i])
			return false;
		if (m->keys[i] == key) {
			*val = m->vals[i];
			return true;
		}
	}
}

void u64map_put(struct u64map *m, uint64_t key, uint64_t val)
{
	size_t i;

	if ((m->n + 1) * 2 > m->cap) {
		struct u64map n = {.cap = m->cap ? m->cap * 2 : 256};

		n.keys = gt_xmalloc(n.cap * sizeof(uint64_t));
		n.vals = gt_xmalloc(n.cap * sizeof(uint64_t));
		n.used = gt_xcalloc(n.cap, sizeof(*n.used));
		for (i = 0; i < m->cap; i++)
			if (m->used[i])
				u64map_put(&n, m->keys[i], m->vals[i]);
		u64map_free(m);
		*m = n;
	}
	for (i = slot(m, key);; i = (i + 1) & (m->cap - 1)) {
		if (!m->used[i]) {
			m->used[i] = true;
			m->keys[i] = key;
			m->vals[i] = val;
			m->n++;
			return;
		}
		if (m->keys[i] == key) {
			m->vals[i] = val;
			return;
		}
	}
}

void u64map_free(struct u64map *m)
{
	free(m->keys);
	free(m->vals);
	free(m->used);
	memset(m, 0, sizeof(*m));
}

bool u64map_add(struct u64map *m, uint64_t key, uint64_t val)
{
	uint64_t old;

	if (u64map_get(m, key, &old))
		return false;
	u64map_put(m, key, val);
	return true;
}

void u64map_clear(struct u64map *m)
{
	if (m->cap)
		memset(m->used, 0, m->cap * sizeof(*m->used));
	m->n = 0;
}
