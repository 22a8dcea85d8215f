// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* symtab.c: sorted symbol tables (address -> name) of the symbolizer, for ELF files and kallsyms. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "support/u64map.h"
#include "support/util.h"
#include "symbols/bounds.h"
#include "symbols/syms_priv.h"

/* 96 MiB of entries; a Chromium build with symbols has about 1M functions. */
#define MAX_SYMS (4u << 20)
/* How far a symbol without a size may reach: to the next symbol, within limits. */
#define SYM_SPAN_MAX (1u << 20)
#define SYM_TAIL_MAX 4096u

int symtab__add(struct symtab *t, uint64_t addr, uint64_t size, const char *name, size_t len,
		unsigned int rank, uint32_t mod)
{
	uint64_t h, off;
	struct sym *s;

	/* A traced program's names: long ones are cut, and the table holds a bounded total. */
	if (len > BOUND_NAME_LEN) {
		len = BOUND_NAME_LEN;
		t->names_cut++;
	}
	if (t->nsyms >= MAX_SYMS) {
		t->names_cut++;
		return -E2BIG;
	}
	/* A name already held is shared (aliases often repeat one: 65,535 did, of 64 KiB). */
	h = gt_hash64(name, len, 0);
	if (!u64map_get(&t->names, h, &off) || memcmp(t->strs + off, name, len) ||
	    t->strs[off + len]) {
		if (t->strs_len + len + 1 > BOUND_NAME_BYTES) {
			t->names_cut++;
			return -E2BIG;
		}
		gt_grow((void **)&t->strs, &t->strs_cap, t->strs_len + len, 1);
		off = t->strs_len;
		memcpy(t->strs + off, name, len);
		t->strs[off + len] = '\0';
		t->strs_len += len + 1;
		u64map_put(&t->names, h, off);
	}
	gt_grow((void **)&t->syms, &t->cap, t->nsyms, sizeof(*t->syms));
	s = &t->syms[t->nsyms++];
	s->addr = addr;
	s->size = size;
	s->name = (uint32_t)off;
	s->mod = mod;
	s->rank = rank;
	return 0;
}

static size_t leading_underscores(const char *s)
{
	size_t n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

static int addr_cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* An alias's sort key, computed once per symbol. */
struct alias_key {
	const char *name;
	size_t under, len;
	unsigned int rank;
};

static struct alias_key alias_key(const struct symtab *t, const struct sym *s)
{
	const char *n = t->strs + s->name;

	return (struct alias_key){n, leading_underscores(n), strlen(n), s->rank};
}

/* Among aliases the best name wins (perf's choice: binding, fewer '_', shorter, then by name). */
static bool alias_better(const struct alias_key *x, const struct alias_key *y)
{
	if (x->rank != y->rank)
		return x->rank > y->rank;
	if (x->under != y->under)
		return x->under < y->under;
	if (x->len != y->len)
		return x->len < y->len;
	return strcmp(x->name, y->name) < 0;
}

/*
 * Sorted by address alone, then one pass picks each address's best alias:
 * sorting with names in the comparison cost a strlen per comparison, 44 s
 * for 65,535 aliases of one 64 KiB name.
 */
void symtab__finish(struct symtab *t)
{
	size_t i, n = 0;

	u64map_free(&t->names);
	if (!t->nsyms)
		return;
	gt_sort(t->syms, t->nsyms, sizeof(*t->syms), addr_cmp);
	/* One entry per address (.symtab and .dynsym repeat each other). */
	for (i = 0; i < t->nsyms;) {
		struct sym best = t->syms[i];
		struct alias_key bk = alias_key(t, &best);
		size_t j;

		for (j = i + 1; j < t->nsyms && t->syms[j].addr == best.addr; j++) {
			struct alias_key k = alias_key(t, &t->syms[j]);
			uint64_t size = GT_MAX(best.size, t->syms[j].size);

			if (alias_better(&k, &bk)) {
				best = t->syms[j];
				bk = k;
			}
			best.size = size;
		}
		t->syms[n++] = best;
		i = j;
	}
	t->nsyms = n;
	t->syms = gt_xrealloc(t->syms, n * sizeof(*t->syms));
	t->cap = n;
}

const struct sym *symtab__find(const struct symtab *t, uint64_t addr)
{
	size_t lo = gt_count_le(t->syms, t->nsyms, sizeof(*t->syms), offsetof(struct sym, addr),
				addr),
	       i, j;
	const struct sym *s;

	if (!lo)
		return NULL;
	i = lo - 1;
	s = &t->syms[i];
	if (!s->size) {
		if (i + 1 < t->nsyms)
			return addr - s->addr < SYM_SPAN_MAX ? s : NULL;
		return addr - s->addr < SYM_TAIL_MAX ? s : NULL;
	}
	if (addr - s->addr < s->size)
		return s;
	/* A nearby earlier symbol may still enclose addr (nested labels with sizes). */
	for (j = i; j-- > 0 && i - j <= 8;) {
		s = &t->syms[j];
		if (s->size && addr - s->addr < s->size)
			return s;
	}
	return NULL;
}

void symtab__free(struct symtab *t)
{
	u64map_free(&t->names);
	free(t->syms);
	free(t->strs);
	memset(t, 0, sizeof(*t));
}
