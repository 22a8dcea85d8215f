// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * demangle_v0.c: Rust v0 names (RFC 2603), the lexical part: the parser's
 * bounds, base-62 numbers, identifiers (punycode), lifetimes and constants.
 * Paths and types are in demangle_v0_type.c.
 *
 * The decoder prints what rustc-demangle prints in its alternate form ({:#}:
 * no crate hashes, no const type suffixes).  Every input is treated as
 * hostile: lengths are checked, recursion is bounded and a step budget stops
 * back-reference bombs.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/demangle.h"
#include "symbols/demangle_priv.h"

/* v0: nesting allowed (paths in types in paths ...) and total work per symbol. */
#define V0_MAX_DEPTH 128
#define V0_MAX_STEPS 200000
/* Punycode identifiers decode to at most this many code points. */
#define PUNY_MAX 128

bool v0_enter(struct v0 *v)
{
	if (v->err || ++v->depth > V0_MAX_DEPTH || ++v->steps > V0_MAX_STEPS) {
		v->err = true;
		return false;
	}
	return true;
}

void v0_leave(struct v0 *v)
{
	v->depth--;
}

bool v0_eat(struct v0 *v, char c)
{
	if (v->pos < v->n && v->s[v->pos] == c) {
		v->pos++;
		return true;
	}
	return false;
}

char v0_next(struct v0 *v)
{
	if (v->pos >= v->n) {
		v->err = true;
		return 0;
	}
	return v->s[v->pos++];
}

void v0_puts(struct v0 *v, const char *s)
{
	if (v->out && !v->err)
		db_puts(v->out, s);
}

void v0_putn(struct v0 *v, const char *s, size_t n)
{
	if (v->out && !v->err)
		db_putn(v->out, s, n);
}

/* <base-62-number> = {0-9a-zA-Z} "_": "_" is 0, "0_" is 1, ... */
uint64_t v0_b62(struct v0 *v)
{
	uint64_t x = 0;

	if (v0_eat(v, '_'))
		return 0;
	for (;;) {
		char c = v0_next(v);
		unsigned d;

		if (v->err)
			return 0;
		if (c == '_')
			break;
		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'z')
			d = 10 + (unsigned)(c - 'a');
		else if (c >= 'A' && c <= 'Z')
			d = 36 + (unsigned)(c - 'A');
		else {
			v->err = true;
			return 0;
		}
		if (x > (UINT64_MAX - d) / 62) {
			v->err = true;
			return 0;
		}
		x = x * 62 + d;
	}
	if (x == UINT64_MAX) {
		v->err = true;
		return 0;
	}
	return x + 1;
}

/* [tag <base-62-number>]: absent is 0, present is the number + 1. */
uint64_t v0_opt_b62(struct v0 *v, char tag)
{
	uint64_t x;

	if (!v0_eat(v, tag))
		return 0;
	x = v0_b62(v);
	if (x == UINT64_MAX) {
		v->err = true;
		return 0;
	}
	return x + 1;
}

uint64_t v0_disambiguator(struct v0 *v)
{
	return v0_opt_b62(v, 's');
}

/* <undisambiguated-identifier> = ["u"] <decimal-number> ["_"] <bytes> */
struct v0_ident v0_ident(struct v0 *v)
{
	struct v0_ident id = {.puny = v0_eat(v, 'u')};
	size_t len = 0;
	char c = v0_next(v);

	if (v->err || c < '0' || c > '9') {
		v->err = true;
		return id;
	}
	len = (size_t)(c - '0');
	if (len)
		while (v->pos < v->n && v->s[v->pos] >= '0' && v->s[v->pos] <= '9') {
			len = len * 10 + (size_t)(v->s[v->pos++] - '0');
			if (len > v->n) {
				v->err = true;
				return id;
			}
		}
	v0_eat(v, '_');
	if (len > v->n - v->pos) {
		v->err = true;
		return id;
	}
	id.p = v->s + v->pos;
	id.n = len;
	v->pos += len;
	if (id.puny && !len)
		v->err = true;
	return id;
}

/* RFC 3492 decoding, with '_' as the delimiter (v0 replaces '-'). */
static bool puny_decode(const char *p, size_t n, uint32_t *out, size_t *outn)
{
	const char *delim = NULL, *q;
	size_t len = 0, i = 0;
	uint64_t cp = 0x80, bias = 72, damp = 700;

	for (q = p; q < p + n; q++)
		if (*q == '_')
			delim = q;
	if (delim) {
		for (q = p; q < delim; q++) {
			if (len >= PUNY_MAX)
				return false;
			out[len++] = (unsigned char)*q;
		}
		q = delim + 1;
	} else {
		q = p;
	}
	if (q >= p + n)
		return false;
	while (q < p + n) {
		uint64_t delta = 0, w = 1;

		for (uint64_t k = 36;; k += 36) {
			uint64_t t = k <= bias ? 1 : k >= bias + 26 ? 26 : k - bias, d;

			if (q >= p + n)
				return false;
			if (*q >= 'a' && *q <= 'z')
				d = (uint64_t)(*q - 'a');
			else if (*q >= '0' && *q <= '9')
				d = 26 + (uint64_t)(*q - '0');
			else
				return false;
			q++;
			if (d > (UINT32_MAX - delta) / w)
				return false;
			delta += d * w;
			if (d < t)
				break;
			w *= 36 - t;
			if (w > UINT32_MAX)
				return false;
		}
		if (len >= PUNY_MAX)
			return false;
		len++;
		i += delta;
		cp += i / len;
		i %= len;
		/* C1 controls are no identifier characters: show those as mangled. */
		if (!valid_scalar(cp) || cp < 0xa0)
			return false;
		memmove(out + i + 1, out + i, (len - 1 - i) * sizeof(*out));
		out[i++] = (uint32_t)cp;
		/* Bias adaptation (RFC 3492 section 6.1). */
		delta = damp == 700 ? delta / 700 : delta / 2;
		damp = 2;
		delta += delta / len;
		{
			uint64_t k = 0;

			while (delta > 455) {
				delta /= 35;
				k += 36;
			}
			bias = k + 36 * delta / (delta + 38);
		}
	}
	*outn = len;
	return true;
}

void v0_print_ident(struct v0 *v, const struct v0_ident *id)
{
	uint32_t cps[PUNY_MAX];
	size_t n;

	if (!v->out || v->err)
		return;
	if (!id->puny) {
		v0_putn(v, id->p, id->n);
		return;
	}
	if (puny_decode(id->p, id->n, cps, &n)) {
		for (size_t i = 0; i < n; i++)
			db_utf8(v->out, cps[i]);
		return;
	}
	/* Undecodable: show it as mangled, as rustc-demangle does. */
	v0_puts(v, "punycode{");
	v0_putn(v, id->p, id->n);
	v0_puts(v, "}");
}

void v0_print_u64(struct v0 *v, uint64_t x)
{
	char num[24];

	snprintf(num, sizeof(num), "%llu", (unsigned long long)x);
	v0_puts(v, num);
}

void v0_lifetime(struct v0 *v, uint64_t lt)
{
	v0_puts(v, "'");
	if (!lt) {
		v0_puts(v, "_");
		return;
	}
	if (!v->out)
		return;
	if (lt > v->bound) {
		v->err = true;
		return;
	}
	if (v->bound - lt < 26) {
		char c = (char)('a' + (v->bound - lt));

		v0_putn(v, &c, 1);
	} else {
		v0_puts(v, "_");
		v0_print_u64(v, v->bound - lt);
	}
}

static void v0_const_uint(struct v0 *v)
{
	size_t start = v->pos, end;
	uint64_t x = 0;
	bool big = false;

	while (v->pos < v->n && is_hex_lower(v->s[v->pos]))
		v->pos++;
	end = v->pos;
	if (!v0_eat(v, '_')) {
		v->err = true;
		return;
	}
	while (start < end && v->s[start] == '0')
		start++;
	if (end - start > 16)
		big = true;
	for (size_t i = start; i < end && !big; i++)
		x = x * 16 + (uint64_t)hexval(v->s[i]);
	if (big) {
		v0_puts(v, "0x");
		v0_putn(v, v->s + start, end - start);
	} else {
		v0_print_u64(v, x);
	}
}

/* Hex nibbles up to '_' as a u64; false when too long or malformed. */
static bool v0_hex_u64(struct v0 *v, uint64_t *x)
{
	size_t digits = 0;

	*x = 0;
	while (v->pos < v->n && is_hex_lower(v->s[v->pos])) {
		if (*x || v->s[v->pos] != '0')
			digits++;
		*x = *x * 16 + (uint64_t)hexval(v->s[v->pos++]);
	}
	if (!v0_eat(v, '_') || digits > 16) {
		v->err = true;
		return false;
	}
	return true;
}

static void v0_put_char_escaped(struct v0 *v, uint32_t c, char quote)
{
	char e[16];

	if (c == (uint32_t)quote || c == '\\') {
		e[0] = '\\';
		e[1] = (char)c;
		v0_putn(v, e, 2);
	} else if (c == '\n') {
		v0_puts(v, "\\n");
	} else if (c == '\t') {
		v0_puts(v, "\\t");
	} else if (c == '\r') {
		v0_puts(v, "\\r");
	} else if (c < 0x20 || c == 0x7f) {
		snprintf(e, sizeof(e), "\\u{%x}", c);
		v0_puts(v, e);
	} else if (v->out && !v->err) {
		db_utf8(v->out, c);
	}
}

/* A str constant: hex bytes of UTF-8 up to '_', printed "...". */
static void v0_const_str(struct v0 *v)
{
	size_t start = v->pos, end;

	while (v->pos < v->n && is_hex_lower(v->s[v->pos]))
		v->pos++;
	end = v->pos;
	if (!v0_eat(v, '_') || (end - start) % 2) {
		v->err = true;
		return;
	}
	v0_puts(v, "\"");
	for (size_t i = start; i < end && !v->err;) {
		unsigned char b0 = (unsigned char)(hexval(v->s[i]) << 4 | hexval(v->s[i + 1]));
		uint32_t c;
		size_t more;

		i += 2;
		if (b0 < 0x80) {
			c = b0;
			more = 0;
		} else if ((b0 & 0xe0) == 0xc0) {
			c = b0 & 0x1f;
			more = 1;
		} else if ((b0 & 0xf0) == 0xe0) {
			c = b0 & 0x0f;
			more = 2;
		} else if ((b0 & 0xf8) == 0xf0) {
			c = b0 & 0x07;
			more = 3;
		} else {
			v->err = true;
			break;
		}
		for (; more; more--) {
			unsigned char bx;

			if (i + 2 > end) {
				v->err = true;
				break;
			}
			bx = (unsigned char)(hexval(v->s[i]) << 4 | hexval(v->s[i + 1]));
			i += 2;
			if ((bx & 0xc0) != 0x80) {
				v->err = true;
				break;
			}
			c = c << 6 | (bx & 0x3f);
		}
		if (!v->err && !valid_scalar(c))
			v->err = true;
		if (!v->err)
			v0_put_char_escaped(v, c, '"');
	}
	v0_puts(v, "\"");
}

static void v0_const_arg(struct v0 *v, bool in_value)
{
	v0_const(v, in_value);
}

/* {<const>} "E" separated by ", "; returns how many. */
static size_t v0_const_list(struct v0 *v)
{
	size_t n = 0;

	while (!v->err && !v0_eat(v, 'E')) {
		if (n++)
			v0_puts(v, ", ");
		v0_const(v, true);
	}
	return n;
}

void v0_const(struct v0 *v, bool in_value)
{
	uint64_t x;
	char tag;

	if (!v0_enter(v))
		return;
	tag = v0_next(v);
	switch (tag) {
	case 'p':
		v0_puts(v, "_");
		break;
	case 'h':
	case 't':
	case 'm':
	case 'y':
	case 'o':
	case 'j':
		v0_const_uint(v);
		break;
	case 'a':
	case 's':
	case 'l':
	case 'x':
	case 'n':
	case 'i':
		if (v0_eat(v, 'n'))
			v0_puts(v, "-");
		v0_const_uint(v);
		break;
	case 'b':
		if (v0_hex_u64(v, &x)) {
			if (x > 1)
				v->err = true;
			else
				v0_puts(v, x ? "true" : "false");
		}
		break;
	case 'c':
		if (v0_hex_u64(v, &x)) {
			if (!valid_scalar(x)) {
				v->err = true;
				break;
			}
			v0_puts(v, "'");
			v0_put_char_escaped(v, (uint32_t)x, '\'');
			v0_puts(v, "'");
		}
		break;
	case 'e':
		/* A str value: "..." has type &str, so a bare str reads *"...". */
		if (!in_value)
			v0_puts(v, "*");
		v0_const_str(v);
		break;
	case 'R':
	case 'Q':
		if (tag == 'R' && v0_eat(v, 'e')) {
			v0_const_str(v);
			break;
		}
		v0_puts(v, tag == 'R' ? "&" : "&mut ");
		v0_const(v, true);
		break;
	case 'A':
		v0_puts(v, "[");
		v0_const_list(v);
		v0_puts(v, "]");
		break;
	case 'T':
		v0_puts(v, "(");
		if (v0_const_list(v) == 1)
			v0_puts(v, ",");
		v0_puts(v, ")");
		break;
	case 'V': /* enum variant or struct value */
		v0_path(v, true);
		switch (v0_next(v)) {
		case 'U':
			break;
		case 'T':
			v0_puts(v, "(");
			v0_const_list(v);
			v0_puts(v, ")");
			break;
		case 'S': {
			size_t n = 0;

			v0_puts(v, " { ");
			while (!v->err && !v0_eat(v, 'E')) {
				struct v0_ident id;

				if (n++)
					v0_puts(v, ", ");
				v0_disambiguator(v);
				id = v0_ident(v);
				v0_print_ident(v, &id);
				v0_puts(v, ": ");
				v0_const(v, true);
			}
			v0_puts(v, " }");
			break;
		}
		default:
			v->err = true;
		}
		break;
	case 'B':
		v0_backref(v, v0_const_arg, in_value);
		break;
	default:
		v->err = true;
	}
	v0_leave(v);
}
