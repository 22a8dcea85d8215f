// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * demangle_legacy.c: Rust legacy names (_ZN...17h<hash>E), the crate hash left
 * out and the $..$ escapes decoded.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/demangle.h"
#include "symbols/demangle_priv.h"

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

char *demangle__rust_legacy(const char *s, size_t n)
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
