// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * json.c: streaming JSON writer.  Strings from the traced process (thread
 * names, symbols) are escaped here, so no output can be broken by them.
 */
#include <math.h>
#include <string.h>

#include "support/json.h"
#include "support/util.h"

void json_init(struct json *j, FILE *f, bool pretty)
{
	j->f = f;
	j->depth = 0;
	j->first[0] = true;
	j->after_key = false;
	j->pretty = pretty;
}

static void newline(struct json *j)
{
	if (!j->pretty)
		return;
	char line[1 + 2 * JSON_MAX_DEPTH];

	/* One write per line, not one per level: a big report has millions of lines. */
	line[0] = '\n';
	memset(line + 1, ' ', 2 * (size_t)j->depth);
	fwrite(line, 1, 1 + 2 * (size_t)j->depth, j->f);
}

/* Separator before a value (or a key) at the current level. */
static void sep(struct json *j)
{
	if (j->after_key) {
		j->after_key = false;
		return;
	}
	if (!j->first[j->depth])
		fputc(',', j->f);
	j->first[j->depth] = false;
	if (j->depth)
		newline(j);
}

static void open(struct json *j, char c)
{
	sep(j);
	fputc(c, j->f);
	if (j->depth < JSON_MAX_DEPTH - 1)
		j->depth++;
	j->first[j->depth] = true;
}

static void close_(struct json *j, char c)
{
	bool empty = j->first[j->depth];

	if (j->depth)
		j->depth--;
	if (!empty)
		newline(j);
	fputc(c, j->f);
	if (!j->depth && j->pretty)
		fputc('\n', j->f);
}

void json_obj_begin(struct json *j)
{
	open(j, '{');
}

void json_obj_end(struct json *j)
{
	close_(j, '}');
}

void json_arr_begin(struct json *j)
{
	open(j, '[');
}

void json_arr_end(struct json *j)
{
	close_(j, ']');
}

/* Bytes that a JSON string holds as they are. */
static bool plain_byte(unsigned char c)
{
	return c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
}

static void put_escaped(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");

	fputc('"', f);
	while (*p) {
		size_t run = 0;

		/*
		 * Runs of plain bytes go out in one write: fputc takes the stream's
		 * lock per byte once the process has a second thread (the capture
		 * reader's), 13% of a JSON report.
		 */
		while (plain_byte(p[run]))
			run++;
		if (run) {
			fwrite(p, 1, run, f);
			p += run;
			continue;
		}
		switch (*p) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		default:
			if (*p < 0x20 || *p == 0x7f) {
				fprintf(f, "\\u%04x", *p);
			} else {
				size_t len = gt_utf8_len((const char *)p);

				/* Not UTF-8: U+FFFD, so the file stays valid UTF-8 (RFC 8259). */
				if (!len) {
					fputs("\\ufffd", f);
				} else {
					fwrite(p, 1, len, f);
					p += len - 1;
				}
			}
		}
		p++;
	}
	fputc('"', f);
}

void json_key(struct json *j, const char *key)
{
	sep(j);
	put_escaped(j->f, key);
	fputs(j->pretty ? ": " : ":", j->f);
	j->after_key = true;
}

void json_str(struct json *j, const char *s)
{
	sep(j);
	put_escaped(j->f, s);
}

void json_u64(struct json *j, uint64_t v)
{
	sep(j);
	fprintf(j->f, "%llu", (unsigned long long)v);
}

void json_i64(struct json *j, int64_t v)
{
	sep(j);
	fprintf(j->f, "%lld", (long long)v);
}

void json_double(struct json *j, double v)
{
	sep(j);
	if (!isfinite(v))
		fputs("null", j->f);
	else
		fprintf(j->f, "%.6g", v);
}

void json_bool(struct json *j, bool v)
{
	sep(j);
	fputs(v ? "true" : "false", j->f);
}

void json_null(struct json *j)
{
	sep(j);
	fputs("null", j->f);
}

void json_kstr(struct json *j, const char *key, const char *s)
{
	json_key(j, key);
	json_str(j, s);
}

void json_ku64(struct json *j, const char *key, uint64_t v)
{
	json_key(j, key);
	json_u64(j, v);
}

void json_ki64(struct json *j, const char *key, int64_t v)
{
	json_key(j, key);
	json_i64(j, v);
}

void json_kdouble(struct json *j, const char *key, double v)
{
	json_key(j, key);
	json_double(j, v);
}

void json_kbool(struct json *j, const char *key, bool v)
{
	json_key(j, key);
	json_bool(j, v);
}

void json_raw(struct json *j, const char *number)
{
	sep(j);
	fputs(number, j->f);
}

void json_kraw(struct json *j, const char *key, const char *number)
{
	json_key(j, key);
	json_raw(j, number);
}
