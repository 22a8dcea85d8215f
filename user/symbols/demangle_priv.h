/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * demangle_priv.h: what the demangler's files share: the bounded output
 * buffer, the Rust v0 parser state and the functions that cross files.
 * Included only by user/symbols/demangle*.c.
 */
#ifndef GT_DEMANGLE_PRIV_H
#define GT_DEMANGLE_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Output bounded to GT_DEMANGLE_MAX bytes; the rest is cut and marked. */
struct dbuf {
	char *p;
	size_t len;
	bool cut;
};

static inline bool valid_scalar(uint64_t c)
{
	return c <= 0x10ffff && (c < 0xd800 || c > 0xdfff);
}

static inline bool is_hex_lower(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

static inline int hexval(char c)
{
	return c <= '9' ? c - '0' : c - 'a' + 10;
}

/* demangle.c: the output buffer */
bool db_init(struct dbuf *b);
void db_putn(struct dbuf *b, const char *s, size_t n);
void db_puts(struct dbuf *b, const char *s);
void db_putc(struct dbuf *b, char c);
void db_utf8(struct dbuf *b, uint32_t c);
char *db_finish(struct dbuf *b);

/* demangle_legacy.c */
char *demangle__rust_legacy(const char *s, size_t n);

/* ---- Rust v0: _R <path> [<instantiating-crate>] [<vendor-suffix>] ---- */

struct v0 {
	const char *s; /* the symbol after "_R": back-references index into it */
	size_t n, pos;
	struct dbuf *out; /* NULL while skipping (impl paths) */
	unsigned depth;
	unsigned steps;
	uint64_t bound; /* lifetimes bound by enclosing for<...> */
	bool err;
};

struct v0_ident {
	const char *p; /* bytes as mangled */
	size_t n;
	bool puny;
};

/* demangle_v0.c: bounds, numbers, identifiers, lifetimes, constants */
bool v0_enter(struct v0 *v);
void v0_leave(struct v0 *v);
bool v0_eat(struct v0 *v, char c);
char v0_next(struct v0 *v);
void v0_puts(struct v0 *v, const char *s);
void v0_putn(struct v0 *v, const char *s, size_t n);
uint64_t v0_b62(struct v0 *v);
uint64_t v0_opt_b62(struct v0 *v, char tag);
uint64_t v0_disambiguator(struct v0 *v);
struct v0_ident v0_ident(struct v0 *v);
void v0_print_ident(struct v0 *v, const struct v0_ident *id);
void v0_print_u64(struct v0 *v, uint64_t x);
void v0_lifetime(struct v0 *v, uint64_t lt);
void v0_const(struct v0 *v, bool in_value);

/* demangle_v0_type.c: paths and types */
void v0_backref(struct v0 *v, void (*fn)(struct v0 *v, bool arg), bool arg);
void v0_path(struct v0 *v, bool in_value);
char *demangle__rust_v0(const char *s, size_t n);

#endif /* GT_DEMANGLE_PRIV_H */
