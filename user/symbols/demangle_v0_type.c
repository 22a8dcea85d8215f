// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * demangle_v0_type.c: Rust v0 names (RFC 2603), the structure: paths, generic
 * arguments, types, function signatures and dyn traits, and rust_v0, the
 * decoder's entry.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/demangle.h"
#include "symbols/demangle_priv.h"

static void v0_type(struct v0 *v);

/* <backref> = "B" <base-62-number>: parse again at an earlier position. */
void v0_backref(struct v0 *v, void (*fn)(struct v0 *v, bool arg), bool arg)
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

void v0_path(struct v0 *v, bool in_value)
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

char *demangle__rust_v0(const char *s, size_t n)
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
