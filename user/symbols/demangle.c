// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * demangle.c: gt_demangle: C++ (Itanium) and Rust (legacy and v0) names
 * through libiberty, the demangler of binutils and gdb (as cplus_demangle
 * with DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO would call it), with the input
 * and the output bounded: names come from the traced program's files.
 */
#include <setjmp.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <libiberty/demangle.h>

#include "symbols/demangle.h"

/*
 * Longest symbol we try to decode; real ones stay far below.  The C++
 * demangler keeps ~100 bytes of stack per input byte (its component and
 * substitution tables are arrays on the stack): 8K stays under 1 MiB.
 */
#define SYM_MAX 8192

static const char ellipsis[] = "\xe2\x80\xa6"; /* "…" */

/*
 * The demanglers' output, taken through their callbacks.  libiberty's
 * Rust v0 demangler re-prints a back-reference each time it meets one, so
 * a name of 2 KiB can unfold to 2^40 bytes (it took 20 GB here before it
 * was stopped); C++ names can grow the same way.  Once the output passes
 * GT_DEMANGLE_MAX the demangling is abandoned by longjmp: the demanglers
 * keep their state on the stack (a punycode identifier being printed at
 * that moment leaks its small buffer, once for that symbol).
 */
struct out {
	char buf[GT_DEMANGLE_MAX + 1];
	size_t len;
	bool cut;
	jmp_buf stop;
};

static void out_put(const char *s, size_t n, void *opaque)
{
	struct out *o = opaque;
	size_t room = GT_DEMANGLE_MAX - (sizeof(ellipsis) - 1) - o->len;

	/* libiberty prints empty identifiers as (NULL, 0). */
	if (!n)
		return;
	if (n > room) {
		memcpy(o->buf + o->len, s, room);
		o->len += room;
		o->cut = true;
		longjmp(o->stop, 1);
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
}

/* Appends outside a demangler run: cut where out_put would stop. */
static void out_put_bounded(struct out *o, const char *s, size_t n)
{
	if (!setjmp(o->stop))
		out_put(s, n, o);
}

/* Runs one demangler into o: true when it demangled sym or was cut. */
static bool out_run(struct out *o, const char *sym,
		    int (*fn)(const char *, int, demangle_callbackref, void *))
{
	o->len = 0;
	o->cut = false;
	if (setjmp(o->stop))
		return true;
	return fn(sym, DMGL_PARAMS | DMGL_ANSI, out_put, o) != 0;
}

/* The result as a malloc'd string: "…" where it was cut, never inside a UTF-8 character. */
static char *out_finish(struct out *o)
{
	if (o->cut) {
		while (o->len && ((unsigned char)o->buf[o->len - 1] & 0xc0) == 0x80)
			o->len--;
		if (o->len && (unsigned char)o->buf[o->len - 1] >= 0xc0)
			o->len--;
		memcpy(o->buf + o->len, ellipsis, sizeof(ellipsis) - 1);
		o->len += sizeof(ellipsis) - 1;
	}
	o->buf[o->len] = '\0';
	return strdup(o->buf);
}

/* Length of sym without an LTO ".llvm.<digits>" suffix (the same function). */
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
	struct out *o;
	size_t n;
	char *copy, *d = NULL;
	bool ok;

	if (!sym)
		return NULL;
	n = strnlen(sym, SYM_MAX + 1);
	if (n > SYM_MAX || n < 3 || sym[0] != '_' || (sym[1] != 'Z' && sym[1] != 'R'))
		return NULL;
	n = strip_llvm_suffix(sym, n);
	copy = strndup(sym, n);
	o = malloc(sizeof(*o));
	if (!copy || !o)
		goto out;
	/* Rust first: legacy Rust names are valid Itanium names too (hash dropped here). */
	ok = out_run(o, copy, rust_demangle_callback);
	if (!ok && sym[1] == 'Z')
		ok = out_run(o, copy, cplus_demangle_v3_callback);
	if (!ok)
		goto out;
	/*
	 * libiberty drops a v0 name's "." suffix (".cold", a static's ".0"):
	 * kept, as C++'s "[clone .cold]" is, since it names other code.
	 */
	if (sym[1] == 'R' && !o->cut && memchr(copy, '.', n)) {
		const char *dot = memchr(copy, '.', n);

		out_put_bounded(o, dot, (size_t)(copy + n - dot));
	}
	d = out_finish(o);
out:
	free(copy);
	free(o);
	return d;
}
