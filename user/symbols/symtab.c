// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* symtab.c: sorted symbol tables (address -> name) of the symbolizer, for ELF files and kallsyms. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "support/util.h"
#include "symbols/syms_priv.h"

#define MAX_SYMS (16u << 20)
/* How far a symbol without a size may reach: to the next symbol, within limits. */
#define SYM_SPAN_MAX (1u << 20)
#define SYM_TAIL_MAX 4096u

int symtab__add(struct symtab *t, uint64_t addr, uint64_t size, const char *name, size_t len,
		unsigned int rank, uint32_t mod)
{
	struct sym *s;

	if (t->nsyms >= MAX_SYMS || t->strs_len + len + 1 > UINT32_MAX)
		return -E2BIG;
	gt_grow((void **)&t->syms, &t->cap, t->nsyms, sizeof(*t->syms));
	gt_grow((void **)&t->strs, &t->strs_cap, t->strs_len + len, 1);
	s = &t->syms[t->nsyms++];
	s->addr = addr;
	s->size = size;
	s->name = (uint32_t)t->strs_len;
	s->mod = mod;
	s->rank = rank;
	memcpy(t->strs + t->strs_len, name, len);
	t->strs[t->strs_len + len] = '\0';
	t->strs_len += len + 1;
	return 0;
}

static size_t leading_underscores(const char *s)
{
	size_t n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

/* By address; among aliases the best name first (perf's choice: binding, fewer '_', shorter). */
static int sym_cmp(const void *a, const void *b, void *arg)
{
	const struct sym *x = a, *y = b;
	const char *strs = arg;
	const char *nx = strs + x->name, *ny = strs + y->name;
	size_t ux, uy, lx, ly;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank > y->rank ? -1 : 1;
	ux = leading_underscores(nx);
	uy = leading_underscores(ny);
	if (ux != uy)
		return ux < uy ? -1 : 1;
	lx = strlen(nx);
	ly = strlen(ny);
	if (lx != ly)
		return lx < ly ? -1 : 1;
	return strcmp(nx, ny);
}

void symtab__finish(struct symtab *t)
{
	size_t i, n = 0;

	if (!t->nsyms)
		return;
	qsort_r(t->syms, t->nsyms, sizeof(*t->syms), sym_cmp, t->strs);
	/* One entry per address (.symtab and .dynsym repeat each other). */
	for (i = 0; i < t->nsyms; i++) {
		if (n && t->syms[n - 1].addr == t->syms[i].addr) {
			t->syms[n - 1].size = GT_MAX(t->syms[n - 1].size, t->syms[i].size);
			continue;
		}
		t->syms[n++] = t->syms[i];
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
	free(t->syms);
	free(t->strs);
	memset(t, 0, sizeof(*t));
}
