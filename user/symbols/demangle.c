// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * demangle.c: gt_demangle, the entry point: C++ names through libstdc++'s
 * __cxa_demangle, Rust names handed to demangle_legacy.c and demangle_v0*.c,
 * and the bounded output buffer and small helpers those decoders share.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/demangle.h"
#include "symbols/demangle_priv.h"

/* libstdc++ (cxxabi.h is C++ only, so declare it here). */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/* Longest symbol we try to decode; real ones stay far below. */
#define SYM_MAX 16384

static const char ellipsis[] = "\xe2\x80\xa6"; /* "…" */

bool db_init(struct dbuf *b)
{
	b->p = malloc(GT_DEMANGLE_MAX + 1);
	b->len = 0;
	b->cut = false;
	return b->p != NULL;
}

void db_putn(struct dbuf *b, const char *s, size_t n)
{
	size_t room = GT_DEMANGLE_MAX - sizeof(ellipsis) + 1 - b->len;

	if (b->cut)
		return;
	if (n > room) {
		n = room;
		b->cut = true;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

void db_puts(struct dbuf *b, const char *s)
{
	db_putn(b, s, strlen(s));
}

void db_putc(struct dbuf *b, char c)
{
	db_putn(b, &c, 1);
}

void db_utf8(struct dbuf *b, uint32_t c)
{
	char u[4];
	size_t n;

	if (c < 0x80) {
		u[0] = (char)c;
		n = 1;
	} else if (c < 0x800) {
		u[0] = (char)(0xc0 | (c >> 6));
		u[1] = (char)(0x80 | (c & 0x3f));
		n = 2;
	} else if (c < 0x10000) {
		u[0] = (char)(0xe0 | (c >> 12));
		u[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		u[2] = (char)(0x80 | (c & 0x3f));
		n = 3;
	} else {
		u[0] = (char)(0xf0 | (c >> 18));
		u[1] = (char)(0x80 | ((c >> 12) & 0x3f));
		u[2] = (char)(0x80 | ((c >> 6) & 0x3f));
		u[3] = (char)(0x80 | (c & 0x3f));
		n = 4;
	}
	db_putn(b, u, n);
}

/* Finishes the buffer: NUL-terminated, "…" where it was cut (never mid-UTF-8). */
char *db_finish(struct dbuf *b)
{
	if (b->cut) {
		while (b->len && ((unsigned char)b->p[b->len - 1] & 0xc0) == 0x80)
			b->len--;
		if (b->len && (unsigned char)b->p[b->len - 1] >= 0xc0)
			b->len--;
		memcpy(b->p + b->len, ellipsis, sizeof(ellipsis) - 1);
		b->len += sizeof(ellipsis) - 1;
	}
	b->p[b->len] = '\0';
	return b->p;
}

/* ---- C++ ---- */

static char *cxx(const char *s)
{
	int status = 0;
	char *d = __cxa_demangle(s, NULL, NULL, &status);
	size_t n;

	if (status || !d) {
		free(d);
		return NULL;
	}
	n = strlen(d);
	if (n > GT_DEMANGLE_MAX) {
		struct dbuf b;

		if (!db_init(&b)) {
			free(d);
			return NULL;
		}
		db_putn(&b, d, n);
		free(d);
		return db_finish(&b);
	}
	return d;
}

/* Length of sym without an LTO ".llvm.<hex>" suffix. */
static size_t strip_llvm_suffix(const char *sym, size_t n)
{
	const char *p = strstr(sym, ".llvm.");

	if (!p)
		return n;
	for (const char *q = p + 6; *q; q++)
		if (!((*q >= '0' && *q <= '9') || (*q >= 'A' && *q <= 'F') || *q == '@'))
			return n;
	return (size_t)(p - sym);
}

char *gt_demangle(const char *sym)
{
	size_t n;
	char *copy, *d;

	if (!sym)
		return NULL;
	n = strnlen(sym, SYM_MAX + 1);
	if (n > SYM_MAX || n < 3)
		return NULL;
	n = strip_llvm_suffix(sym, n);
	if (sym[0] != '_' || (sym[1] != 'Z' && sym[1] != 'R'))
		return NULL;
	if (sym[1] == 'R')
		return demangle__rust_v0(sym, n);
	/* Rust legacy symbols are valid Itanium names too; recognise them first. */
	d = demangle__rust_legacy(sym, n);
	if (d)
		return d;
	copy = strndup(sym, n);
	if (!copy)
		return NULL;
	d = cxx(copy);
	free(copy);
	return d;
}
