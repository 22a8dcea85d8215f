// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * demangle.c: C++ names through libstdc++'s __cxa_demangle, Rust legacy and
 * Rust v0 names with our own decoders, so flame graphs and reports read well.
 *
 * The Rust v0 decoder follows the grammar of RFC 2603 ("Rust Symbol Name
 * Mangling v0") and prints what rustc-demangle prints in its alternate form
 * ({:#}: no crate hashes, no const type suffixes).  Every input is treated
 * as hostile: lengths are checked, recursion is bounded and a step budget
 * stops back-reference bombs.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/demangle.h"

/* libstdc++ (cxxabi.h is C++ only, so declare it here). */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/* Longest symbol we try to decode; real ones stay far below. */
#define SYM_MAX 16384
/* v0: nesting allowed (paths in types in paths ...) and total work per symbol. */
#define V0_MAX_DEPTH 128
#define V0_MAX_STEPS 200000
/* Punycode identifiers decode to at most this many code points. */
#define PUNY_MAX 128

static const char ellipsis[] = "\xe2\x80\xa6"; /* "…" */

/* Output bounded to GT_DEMANGLE_MAX bytes; the rest is cut and marked. */
struct dbuf {
	char *p;
	size_t len;
	bool cut;
};

static bool db_init(struct dbuf *b)
{
	b->p = malloc(GT_DEMANGLE_MAX + 1);
	b->len = 0;
	b->cut = false;
	return b->p != NULL;
}

static void db_putn(struct dbuf *b, const char *s, size_t n)
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

static void db_puts(struct dbuf *b, const char *s)
{
	db_putn(b, s, strlen(s));
}

static void db_putc(struct dbuf *b, char c)
{
	db_putn(b, &c, 1);
}

static void db_utf8(struct dbuf *b, uint32_t c)
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

static bool valid_scalar(uint64_t c)
{
	return c <= 0x10ffff && (c < 0xd800 || c > 0xdfff);
}

/* Finishes the buffer: NUL-terminated, "…" where it was cut (never mid-UTF-8). */
static char *db_finish(struct dbuf *b)
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

static bool is_hex_lower(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

static int hexval(char c)
{
	return c <= '9' ? c - '0' : c - 'a' + 10;
}

/* ---- Rust legacy: _ZN <len><ident>... 17h<16 hex> E ---- */

/*
 * True if sym[0..n) is _ZN{<len><bytes>}E whose last element is the 17-byte
 * "h" + 16 hex digits hash rustc appends; C++ names never end that way.
 */
static bool rust_legacy_shape(const char *s, size_t n, size_t *first, size_t *nelem)
{
	size_t i = 3, last = 0, count = 0;

	if (n < 4 || memcmp(s, "_ZN", 3))
		return false;
	*first = i;
	while (i < n && s[i] != 'E') {
		size_t len = 0, start = i;

		if (s[i] < '1' || s[i] > '9')
			return false;
		while (i < n && s[i] >= '0' && s[i] <= '9') {
			len = len * 10 + (size_t)(s[i++] - '0');
			if (len > n)
				return false;
		}
		if (len > n - i)
			return false;
		for (size_t k = i; k < i + len; k++) {
			char c = s[k];

			if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			      (c >= '0' && c <= '9') || c == '_' || c == '$' || c == '.'))
				return false;
		}
		last = start;
		i += len;
		count++;
	}
	if (i != n - 1 || count < 2)
		return false;
	/* last points at the length digits of the final element: "17h" + 16 hex. */
	if (n - 1 - last != 2 + 17 || memcmp(s + last, "17h", 3))
		return false;
	for (size_t k = last + 3; k < n - 1; k++)
		if (!is_hex_lower(s[k]))
			return false;
	*nelem = count;
	return true;
}

static void legacy_elem(struct dbuf *b, const char *r, size_t n)
{
	static const struct {
		const char *esc;
		char c;
	} map[] = {{"SP", '@'}, {"BP", '*'}, {"RF", '&'}, {"LT", '<'},
		   {"GT", '>'}, {"LP", '('}, {"RP", ')'}, {"C", ','}};

	/* rustc prefixes an element starting with '$' with '_'. */
	if (n >= 2 && r[0] == '_' && r[1] == '$') {
		r++;
		n--;
	}
	while (n) {
		if (r[0] == '.') {
			if (n >= 2 && r[1] == '.') {
				db_puts(b, "::");
				r += 2;
				n -= 2;
			} else {
				db_putc(b, '.');
				r++;
				n--;
			}
		} else if (r[0] == '$') {
			const char *end = memchr(r + 1, '$', n - 1);
			size_t elen, k;
			bool done = false;

			if (!end)
				break;
			elen = (size_t)(end - r - 1);
			for (k = 0; k < sizeof(map) / sizeof(map[0]); k++) {
				if (strlen(map[k].esc) == elen &&
				    !memcmp(r + 1, map[k].esc, elen)) {
					db_putc(b, map[k].c);
					done = true;
					break;
				}
			}
			if (!done && elen >= 2 && elen <= 9 && r[1] == 'u') {
				uint64_t c = 0;
				bool ok = true;

				for (k = 2; k <= elen; k++) {
					if (!is_hex_lower(r[k])) {
						ok = false;
						break;
					}
					c = c * 16 + (uint64_t)hexval(r[k]);
				}
				/* Control characters are left escaped, as rustc-demangle does. */
				if (ok && valid_scalar(c) && c >= 0x20 &&
				    !(c >= 0x7f && c < 0xa0)) {
					db_utf8(b, (uint32_t)c);
					done = true;
				}
			}
			if (!done)
				break;
			n -= elen + 2;
			r += elen + 2;
		} else {
			size_t k = 0;

			while (k < n && r[k] != '$' && r[k] != '.')
				k++;
			db_putn(b, r, k);
			r += k;
			n -= k;
		}
	}
	db_putn(b, r, n);
}

static char *rust_legacy(const char *s, size_t n)
{
	size_t i, nelem, e = 0;
	struct dbuf b;

	if (!rust_legacy_shape(s, n, &i, &nelem) || !db_init(&b))
		return NULL;
	/* Every element but the hash, joined by "::". */
	for (e = 0; e + 1 < nelem; e++) {
		size_t len = 0;

		while (s[i] >= '0' && s[i] <= '9')
			len = len * 10 + (size_t)(s[i++] - '0');
		if (e)
			db_puts(&b, "::");
		legacy_elem(&b, s + i, len);
		i += len;
	}
	return db_finish(&b);
}

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

static bool v0_enter(struct v0 *v)
{
	if (v->err || ++v->depth > V0_MAX_DEPTH || ++v->steps > V0_MAX_STEPS) {
		v->err = true;
		return false;
	}
	return true;
}

static void v0_leave(struct v0 *v)
{
	v->depth--;
}

static bool v0_eat(struct v0 *v, char c)
{
	if (v->pos < v->n && v->s[v->pos] == c) {
		v->pos++;
		return true;
	}
	return false;
}

static char v0_next(struct v0 *v)
{
	if (v->pos >= v->n) {
		v->err = true;
		return 0;
	}
	return v->s[v->pos++];
}

static void v0_puts(struct v0 *v, const char *s)
{
	if (v->out && !v->err)
		db_puts(v->out, s);
}

static void v0_putn(struct v0 *v, const char *s, size_t n)
{
	if (v->out && !v->err)
		db_putn(v->out, s, n);
}

/* <base-62-number> = {0-9a-zA-Z} "_": "_" is 0, "0_" is 1, ... */
static uint64_t v0_b62(struct v0 *v)
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
static uint64_t v0_opt_b62(struct v0 *v, char tag)
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

static uint64_t v0_disambiguator(struct v0 *v)
{
	return v0_opt_b62(v, 's');
}

/* <undisambiguated-identifier> = ["u"] <decimal-number> ["_"] <bytes> */
static struct v0_ident v0_ident(struct v0 *v)
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

static void v0_print_ident(struct v0 *v, const struct v0_ident *id)
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

static void v0_print_u64(struct v0 *v, uint64_t x)
{
	char num[24];

	snprintf(num, sizeof(num), "%llu", (unsigned long long)x);
	v0_puts(v, num);
}

static void v0_lifetime(struct v0 *v, uint64_t lt)
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

static void v0_path(struct v0 *v, bool in_value);
static void v0_type(struct v0 *v);
static void v0_const(struct v0 *v, bool in_value);

/* <backref> = "B" <base-62-number>: parse again at an earlier position. */
static void v0_backref(struct v0 *v, void (*fn)(struct v0 *v, bool arg), bool arg)
{
	size_t at = v->pos - 1; /* the 'B' */
	uint64_t target = v0_b62(v);
	size_t saved;

	if (v->err || target >= at) {
		v->err = true;
		return;
	}
	saved = v->pos;
	v->pos = (size_t)target;
	fn(v, arg);
	v->pos = saved;
}

static void v0_type_arg(struct v0 *v, bool unused)
{
	v0_type(v);
}

static void v0_generic_arg(struct v0 *v)
{
	if (v0_eat(v, 'L'))
		v0_lifetime(v, v0_b62(v));
	else if (v0_eat(v, 'K'))
		v0_const(v, false);
	else
		v0_type(v);
}

/* {<generic-arg>} "E", printed "a, b, c"; returns how many. */
static size_t v0_generic_args(struct v0 *v)
{
	size_t n = 0;

	while (!v->err && !v0_eat(v, 'E')) {
		if (n++)
			v0_puts(v, ", ");
		v0_generic_arg(v);
	}
	return n;
}

static void v0_path_arg(struct v0 *v, bool in_value)
{
	v0_path(v, in_value);
}

static void v0_path(struct v0 *v, bool in_value)
{
	char tag;

	if (!v0_enter(v))
		return;
	tag = v0_next(v);
	switch (tag) {
	case 'C': { /* crate root */
		struct v0_ident id;

		v0_disambiguator(v);
		id = v0_ident(v);
		v0_print_ident(v, &id);
		break;
	}
	case 'N': { /* nested: <namespace> <path> <identifier> */
		char ns = v0_next(v);
		struct v0_ident id;
		uint64_t dis;

		if (!((ns >= 'a' && ns <= 'z') || (ns >= 'A' && ns <= 'Z'))) {
			v->err = true;
			break;
		}
		v0_path(v, in_value);
		dis = v0_disambiguator(v);
		id = v0_ident(v);
		if (v->err)
			break;
		if (ns >= 'A' && ns <= 'Z') {
			/* Closures and shims: "::{closure#0}", "::{shim:vtable#0}". */
			v0_puts(v, "::{");
			if (ns == 'C')
				v0_puts(v, "closure");
			else if (ns == 'S')
				v0_puts(v, "shim");
			else
				v0_putn(v, &ns, 1);
			if (id.n) {
				v0_puts(v, ":");
				v0_print_ident(v, &id);
			}
			v0_puts(v, "#");
			v0_print_u64(v, dis);
			v0_puts(v, "}");
		} else if (id.n) {
			v0_puts(v, "::");
			v0_print_ident(v, &id);
		}
		break;
	}
	case 'M':   /* <T> (inherent impl) */
	case 'X':   /* <T as Trait> (trait impl) */
	case 'Y': { /* <T as Trait> (trait definition) */
		if (tag != 'Y') {
			/* The impl's own path says where it was written: not shown. */
			struct dbuf *out = v->out;

			v0_disambiguator(v);
			v->out = NULL;
			v0_path(v, false);
			v->out = out;
		}
		v0_puts(v, "<");
		v0_type(v);
		if (tag != 'M') {
			v0_puts(v, " as ");
			v0_path(v, false);
		}
		v0_puts(v, ">");
		break;
	}
	case 'I': /* generic arguments */
		v0_path(v, in_value);
		/* In expressions Rust writes path::<T>, in types path<T>. */
		v0_puts(v, in_value ? "::<" : "<");
		v0_generic_args(v);
		v0_puts(v, ">");
		break;
	case 'B':
		v0_backref(v, v0_path_arg, in_value);
		break;
	default:
		v->err = true;
	}
	v0_leave(v);
}

static const char *v0_basic(char c)
{
	switch (c) {
	case 'a':
		return "i8";
	case 'b':
		return "bool";
	case 'c':
		return "char";
	case 'd':
		return "f64";
	case 'e':
		return "str";
	case 'f':
		return "f32";
	case 'h':
		return "u8";
	case 'i':
		return "isize";
	case 'j':
		return "usize";
	case 'l':
		return "i32";
	case 'm':
		return "u32";
	case 'n':
		return "i128";
	case 'o':
		return "u128";
	case 's':
		return "i16";
	case 't':
		return "u16";
	case 'u':
		return "()";
	case 'v':
		return "...";
	case 'x':
		return "i64";
	case 'y':
		return "u64";
	case 'z':
		return "!";
	case 'p':
		return "_";
	default:
		return NULL;
	}
}

/* <binder> = "G" <base-62-number>: "for<'a, 'b> " around fn types and dyn bounds. */
static uint64_t v0_binder_open(struct v0 *v)
{
	uint64_t count = v0_opt_b62(v, 'G');

	if (v->err || !v->out)
		return 0;
	/* Bounded: a lifetime name per bound lifetime must stay printable. */
	if (count > 1024 || v->bound + count > 4096) {
		v->err = true;
		return 0;
	}
	if (count) {
		v0_puts(v, "for<");
		for (uint64_t i = 0; i < count; i++) {
			if (i)
				v0_puts(v, ", ");
			v->bound++;
			v0_lifetime(v, 1);
		}
		v0_puts(v, "> ");
	}
	return count;
}

static void v0_fn_sig(struct v0 *v)
{
	uint64_t bound = v0_binder_open(v);
	bool is_unsafe = v0_eat(v, 'U');
	struct v0_ident abi = {0};
	bool has_abi = false, abi_c = false;
	size_t n = 0;

	if (v0_eat(v, 'K')) {
		has_abi = true;
		if (v0_eat(v, 'C')) {
			abi_c = true;
		} else {
			abi = v0_ident(v);
			if (!v->err && (abi.puny || !abi.n))
				v->err = true;
		}
	}
	if (is_unsafe)
		v0_puts(v, "unsafe ");
	if (has_abi && !v->err) {
		v0_puts(v, "extern \"");
		if (abi_c) {
			v0_puts(v, "C");
		} else {
			/* "C_unwind" is extern "C-unwind". */
			for (size_t i = 0; i < abi.n; i++)
				v0_putn(v, abi.p[i] == '_' ? "-" : &abi.p[i], 1);
		}
		v0_puts(v, "\" ");
	}
	v0_puts(v, "fn(");
	while (!v->err && !v0_eat(v, 'E')) {
		if (n++)
			v0_puts(v, ", ");
		v0_type(v);
	}
	v0_puts(v, ")");
	if (!v0_eat(v, 'u')) {
		v0_puts(v, " -> ");
		v0_type(v);
	}
	v->bound -= bound;
}

/*
 * A trait path whose generic list is left open ("Iterator<"), so associated
 * type bindings can follow inside it; returns true when it is open.
 */
static bool v0_path_open_generics(struct v0 *v)
{
	bool open = false;

	if (!v0_enter(v))
		return false;
	if (v0_eat(v, 'B')) {
		size_t at = v->pos - 1, saved;
		uint64_t target = v0_b62(v);

		if (v->err || target >= at) {
			v->err = true;
		} else {
			saved = v->pos;
			v->pos = (size_t)target;
			open = v0_path_open_generics(v);
			v->pos = saved;
		}
	} else if (v0_eat(v, 'I')) {
		v0_path(v, false);
		v0_puts(v, "<");
		v0_generic_args(v);
		open = true;
	} else {
		v0_path(v, false);
	}
	v0_leave(v);
	return open;
}

/* <dyn-trait> = <path> {"p" <undisambiguated-identifier> <type>} */
static void v0_dyn_trait(struct v0 *v)
{
	bool open = v0_path_open_generics(v);

	while (!v->err && v0_eat(v, 'p')) {
		struct v0_ident id;

		v0_puts(v, open ? ", " : "<");
		open = true;
		id = v0_ident(v);
		v0_print_ident(v, &id);
		v0_puts(v, " = ");
		v0_type(v);
	}
	if (open)
		v0_puts(v, ">");
}

static void v0_type(struct v0 *v)
{
	const char *basic;
	char tag;

	if (!v0_enter(v))
		return;
	tag = v0_next(v);
	if (v->err) {
		v0_leave(v);
		return;
	}
	basic = v0_basic(tag);
	if (basic) {
		v0_puts(v, basic);
		v0_leave(v);
		return;
	}
	switch (tag) {
	case 'R': /* &T, &'a T */
	case 'Q': /* &mut T */
		v0_puts(v, "&");
		if (v0_eat(v, 'L')) {
			uint64_t lt = v0_b62(v);

			if (lt) {
				v0_lifetime(v, lt);
				v0_puts(v, " ");
			}
		}
		if (tag == 'Q')
			v0_puts(v, "mut ");
		v0_type(v);
		break;
	case 'P':
		v0_puts(v, "*const ");
		v0_type(v);
		break;
	case 'O':
		v0_puts(v, "*mut ");
		v0_type(v);
		break;
	case 'A': /* [T; N] */
		v0_puts(v, "[");
		v0_type(v);
		v0_puts(v, "; ");
		v0_const(v, true);
		v0_puts(v, "]");
		break;
	case 'S': /* [T] */
		v0_puts(v, "[");
		v0_type(v);
		v0_puts(v, "]");
		break;
	case 'T': { /* (A, B), (A,) */
		size_t n = 0;

		v0_puts(v, "(");
		while (!v->err && !v0_eat(v, 'E')) {
			if (n++)
				v0_puts(v, ", ");
			v0_type(v);
		}
		if (n == 1)
			v0_puts(v, ",");
		v0_puts(v, ")");
		break;
	}
	case 'F':
		v0_fn_sig(v);
		break;
	case 'D': { /* dyn A + B + 'a */
		uint64_t bound, lt;
		size_t n = 0;

		v0_puts(v, "dyn ");
		bound = v0_binder_open(v);
		while (!v->err && !v0_eat(v, 'E')) {
			if (n++)
				v0_puts(v, " + ");
			v0_dyn_trait(v);
		}
		v->bound -= bound;
		if (!v0_eat(v, 'L')) {
			v->err = true;
			break;
		}
		lt = v0_b62(v);
		if (lt) {
			v0_puts(v, " + ");
			v0_lifetime(v, lt);
		}
		break;
	}
	case 'B':
		v0_backref(v, v0_type_arg, false);
		break;
	default:
		/* Anything else is a path used as a type (an ADT). */
		v->pos--;
		v0_path(v, false);
	}
	v0_leave(v);
}

/* <const-data> = ["n"] {<hex-digit>} "_" as an unsigned value. */
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

static void v0_const(struct v0 *v, bool in_value)
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

static char *rust_v0(const char *s, size_t n)
{
	struct v0 v = {0};
	struct dbuf b;
	size_t i;

	if (n < 3 || s[0] != '_' || s[1] != 'R')
		return NULL;
	/* Paths start upper-case; a leading digit is an encoding version we do not know. */
	if (s[2] < 'A' || s[2] > 'Z')
		return NULL;
	for (i = 2; i < n; i++)
		if ((unsigned char)s[i] >= 0x80 || (unsigned char)s[i] < 0x20)
			return NULL;
	if (!db_init(&b))
		return NULL;
	v.s = s + 2;
	v.n = n - 2;
	v.out = &b;
	v0_path(&v, true);
	/* The instantiating crate: parsed for validity, not shown. */
	if (!v.err && v.pos < v.n && v.s[v.pos] >= 'A' && v.s[v.pos] <= 'Z') {
		v.out = NULL;
		v0_path(&v, false);
		v.out = &b;
	}
	/* A vendor suffix (".cold", "$...") stays as it is. */
	if (!v.err && v.pos < v.n) {
		if (v.s[v.pos] != '.' && v.s[v.pos] != '$')
			v.err = true;
		else
			db_putn(&b, v.s + v.pos, v.n - v.pos);
	}
	if (v.err) {
		free(b.p);
		return NULL;
	}
	return db_finish(&b);
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
		return rust_v0(sym, n);
	/* Rust legacy symbols are valid Itanium names too; recognise them first. */
	d = rust_legacy(sym, n);
	if (d)
		return d;
	copy = strndup(sym, n);
	if (!copy)
		return NULL;
	d = cxx(copy);
	free(copy);
	return d;
}
