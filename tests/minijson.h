/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * minijson.h: a small strict JSON parser for tests that read gaptrace's
 * output back (export traces); builds a tree, rejects anything malformed.
 */
#ifndef GT_TEST_MINIJSON_H
#define GT_TEST_MINIJSON_H

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

enum mj_type { MJ_NULL = 0, MJ_BOOL, MJ_NUM, MJ_STR, MJ_ARR, MJ_OBJ };

struct mj {
	enum mj_type t;
	bool b;
	double num;
	char *str;
	struct mj *items; /* array items or object values */
	char **keys;	  /* object keys */
	size_t n;
};

struct mj_parser {
	const char *p;
	const char *err;
};

static inline void mj_ws(struct mj_parser *ps)
{
	while (*ps->p == ' ' || *ps->p == '\n' || *ps->p == '\r' || *ps->p == '\t')
		ps->p++;
}

static inline bool mj_value(struct mj_parser *ps, struct mj *v, int depth);

static inline char *mj_string(struct mj_parser *ps)
{
	size_t cap = 16, n = 0;
	char *s = malloc(cap);

	ps->p++; /* opening quote */
	while (*ps->p != '"') {
		unsigned c = (unsigned char)*ps->p++;

		if (n + 4 >= cap)
			s = realloc(s, cap *= 2);
		if (c < 0x20) {
			ps->err = "control character in string";
			free(s);
			return NULL;
		}
		if (c != '\\') {
			s[n++] = (char)c;
			continue;
		}
		c = (unsigned char)*ps->p++;
		switch (c) {
		case '"':
		case '\\':
		case '/':
			s[n++] = (char)c;
			break;
		case 'b':
			s[n++] = '\b';
			break;
		case 'f':
			s[n++] = '\f';
			break;
		case 'n':
			s[n++] = '\n';
			break;
		case 'r':
			s[n++] = '\r';
			break;
		case 't':
			s[n++] = '\t';
			break;
		case 'u': {
			unsigned u = 0;

			for (int i = 0; i < 4; i++) {
				char h = *ps->p++;

				u <<= 4;
				if (h >= '0' && h <= '9')
					u |= (unsigned)(h - '0');
				else if (h >= 'a' && h <= 'f')
					u |= (unsigned)(h - 'a' + 10);
				else if (h >= 'A' && h <= 'F')
					u |= (unsigned)(h - 'A' + 10);
				else {
					ps->err = "bad \\u escape";
					free(s);
					return NULL;
				}
			}
			if (u < 0x80) {
				s[n++] = (char)u;
			} else if (u < 0x800) {
				s[n++] = (char)(0xc0 | (u >> 6));
				s[n++] = (char)(0x80 | (u & 0x3f));
			} else {
				s[n++] = (char)(0xe0 | (u >> 12));
				s[n++] = (char)(0x80 | ((u >> 6) & 0x3f));
				s[n++] = (char)(0x80 | (u & 0x3f));
			}
			break;
		}
		default:
			ps->err = "bad escape";
			free(s);
			return NULL;
		}
	}
	ps->p++;
	s[n] = '\0';
	return s;
}

static inline bool mj_value(struct mj_parser *ps, struct mj *v, int depth)
{
	memset(v, 0, sizeof(*v));
	mj_ws(ps);
	if (depth > 64) {
		ps->err = "too deep";
		return false;
	}
	if (*ps->p == '{' || *ps->p == '[') {
		bool obj = *ps->p == '{';
		size_t cap = 0;

		v->t = obj ? MJ_OBJ : MJ_ARR;
		ps->p++;
		mj_ws(ps);
		if (*ps->p == (obj ? '}' : ']')) {
			ps->p++;
			return true;
		}
		for (;;) {
			if (v->n == cap) {
				cap = cap ? cap * 2 : 8;
				v->items = realloc(v->items, cap * sizeof(*v->items));
				if (obj)
					v->keys = realloc(v->keys, cap * sizeof(*v->keys));
			}
			mj_ws(ps);
			if (obj) {
				if (*ps->p != '"') {
					ps->err = "object key expected";
					return false;
				}
				v->keys[v->n] = mj_string(ps);
				if (!v->keys[v->n])
					return false;
				mj_ws(ps);
				if (*ps->p++ != ':') {
					free(v->keys[v->n]);
					ps->err = "':' expected";
					return false;
				}
			}
			if (!mj_value(ps, &v->items[v->n], depth + 1)) {
				if (obj)
					free(v->keys[v->n]);
				return false;
			}
			v->n++;
			mj_ws(ps);
			if (*ps->p == ',') {
				ps->p++;
				continue;
			}
			if (*ps->p++ == (obj ? '}' : ']'))
				return true;
			ps->err = "',' or end expected";
			return false;
		}
	}
	if (*ps->p == '"') {
		v->t = MJ_STR;
		v->str = mj_string(ps);
		return v->str != NULL;
	}
	if (!strncmp(ps->p, "true", 4) || !strncmp(ps->p, "false", 5)) {
		v->t = MJ_BOOL;
		v->b = *ps->p == 't';
		ps->p += v->b ? 4 : 5;
		return true;
	}
	if (!strncmp(ps->p, "null", 4)) {
		ps->p += 4;
		return true;
	}
	if (*ps->p == '-' || (*ps->p >= '0' && *ps->p <= '9')) {
		char *end;

		v->t = MJ_NUM;
		v->num = strtod(ps->p, &end);
		ps->p = end;
		return true;
	}
	ps->err = "value expected";
	return false;
}

static inline void mj_free_value(struct mj *v)
{
	for (size_t i = 0; i < v->n; i++) {
		mj_free_value(&v->items[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
	free(v->str);
}

/* Parses a whole document; NULL with *err set on any error or trailing text. */
static inline struct mj *mj_parse(const char *text, const char **err)
{
	struct mj_parser ps = {text, NULL};
	struct mj *v = calloc(1, sizeof(*v));

	if (!mj_value(&ps, v, 0) || (mj_ws(&ps), *ps.p != '\0')) {
		*err = ps.err ? ps.err : "trailing text";
		mj_free_value(v);
		free(v);
		return NULL;
	}
	return v;
}

static inline void mj_free(struct mj *v)
{
	if (!v)
		return;
	mj_free_value(v);
	free(v);
}

static inline const struct mj *mj_get(const struct mj *o, const char *key)
{
	if (!o || o->t != MJ_OBJ)
		return NULL;
	for (size_t i = 0; i < o->n; i++)
		if (!strcmp(o->keys[i], key))
			return &o->items[i];
	return NULL;
}

static inline const char *mj_str(const struct mj *o, const char *key)
{
	const struct mj *v = mj_get(o, key);

	return v && v->t == MJ_STR ? v->str : NULL;
}

static inline double mj_num(const struct mj *o, const char *key, double dflt)
{
	const struct mj *v = mj_get(o, key);

	return v && v->t == MJ_NUM ? v->num : dflt;
}

#endif /* GT_TEST_MINIJSON_H */
