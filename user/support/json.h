/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * json.h: a small streaming JSON writer (objects, arrays, escaped strings)
 * that keeps track of commas and indentation, for every --format json.
 */
#ifndef GT_JSON_H
#define GT_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 32

struct json {
	FILE *f;
	int depth;
	bool first[JSON_MAX_DEPTH];
	bool after_key;
	bool pretty;
};

void json_init(struct json *j, FILE *f, bool pretty);
void json_obj_begin(struct json *j);
void json_obj_end(struct json *j);
void json_arr_begin(struct json *j);
void json_arr_end(struct json *j);
void json_key(struct json *j, const char *key);
void json_str(struct json *j, const char *s);
void json_u64(struct json *j, uint64_t v);
void json_i64(struct json *j, int64_t v);
void json_double(struct json *j, double v);
void json_bool(struct json *j, bool v);
void json_null(struct json *j);
/* A number already formatted by the caller (e.g. exact fixed-point). */
void json_raw(struct json *j, const char *number);

/* key + value shorthands */
void json_kstr(struct json *j, const char *key, const char *s);
void json_ku64(struct json *j, const char *key, uint64_t v);
void json_ki64(struct json *j, const char *key, int64_t v);
void json_kdouble(struct json *j, const char *key, double v);
void json_kbool(struct json *j, const char *key, bool v);
void json_kraw(struct json *j, const char *key, const char *number);

#endif /* GT_JSON_H */
