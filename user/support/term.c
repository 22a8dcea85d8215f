// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * term.c: colour, width and character set of the terminal a text output
 * goes to, and the filter that wraps and transliterates a text for it.
 */
#include <langinfo.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "support/term.h"
#include "support/util.h"

static enum { COLOR_AUTO, COLOR_ALWAYS, COLOR_NEVER } color_mode;

int term__set_color(const char *when)
{
	if (!strcmp(when, "auto"))
		color_mode = COLOR_AUTO;
	else if (!strcmp(when, "always"))
		color_mode = COLOR_ALWAYS;
	else if (!strcmp(when, "never"))
		color_mode = COLOR_NEVER;
	else {
		gt_err("bad --color '%s': use auto, always or never", when);
		return -1;
	}
	return 0;
}

bool term__color(FILE *f)
{
	const char *no = getenv("NO_COLOR"), *term = getenv("TERM");

	if (color_mode != COLOR_AUTO)
		return color_mode == COLOR_ALWAYS;
	/* no-color.org: set to anything but the empty string turns colour off. */
	if (no && *no)
		return false;
	if (term && !strcmp(term, "dumb"))
		return false;
	return isatty(fileno(f));
}

unsigned term__width(FILE *f)
{
	const char *env = getenv("COLUMNS");
	struct winsize ws;
	uint64_t v;

	if (env && !gt_parse_uint(env, 20, 100000, &v))
		return (unsigned)v;
	if (isatty(fileno(f)) && !ioctl(fileno(f), TIOCGWINSZ, &ws) && ws.ws_col >= 20)
		return ws.ws_col;
	return 0;
}

static bool name_says_utf8(const char *s)
{
	return s && (strcasestr(s, "utf-8") || strcasestr(s, "utf8"));
}

bool term__utf8(void)
{
	static int utf8 = -1;
	const char *cur;
	char saved[128];

	if (utf8 >= 0)
		return utf8;
	/* The rest of gaptrace runs in the C locale: look, then put it back. */
	cur = setlocale(LC_CTYPE, NULL);
	snprintf(saved, sizeof(saved), "%s", cur ? cur : "C");
	if (setlocale(LC_CTYPE, "")) {
		utf8 = name_says_utf8(nl_langinfo(CODESET));
	} else {
		/* A locale that is named but not installed: go by its name. */
		const char *lc = getenv("LC_ALL");

		if (!lc || !*lc)
			lc = getenv("LC_CTYPE");
		if (!lc || !*lc)
			lc = getenv("LANG");
		utf8 = name_says_utf8(lc);
	}
	setlocale(LC_CTYPE, saved);
	return utf8;
}

/* Length of the escape sequence at s (ESC [ ... final byte), 0 when none is there. */
static size_t esc_len(const char *s, size_t len)
{
	size_t i = 2;

	if (len < 2 || s[0] != '\033' || s[1] != '[')
		return 0;
	while (i < len && !((unsigned char)s[i] >= 0x40 && (unsigned char)s[i] <= 0x7e))
		i++;
	return i < len ? i + 1 : len;
}

/* Bytes of the character at s[0..len) (an escape sequence counts as one). */
static size_t char_len(const char *s, size_t len, bool *zero_width)
{
	size_t n = esc_len(s, len);

	*zero_width = n > 0;
	if (n)
		return n;
	n = (unsigned char)*s >= 0x80 ? gt_utf8_len(s) : 1;
	return n && n <= len ? n : 1;
}

size_t term__columns(const char *s, size_t len)
{
	size_t cols = 0;

	for (size_t i = 0; i < len;) {
		bool zw;

		i += char_len(s + i, len - i, &zw);
		cols += !zw;
	}
	return cols;
}

static uint32_t codepoint(const unsigned char *p, size_t n)
{
	static const unsigned char lead_mask[] = {0, 0x7f, 0x1f, 0x0f, 0x07};
	uint32_t cp = p[0] & lead_mask[n];

	for (size_t k = 1; k < n; k++)
		cp = (cp << 6) | (p[k] & 0x3f);
	return cp;
}

/* The ASCII stand-in of the character cp. */
static const char *ascii_of(uint32_t cp, char *buf, size_t len)
{
	static const struct {
		uint32_t cp;
		const char *s;
	} map[] = {
	    {0x2190, "<-"}, {0x2192, "->"}, {0x2191, "^"}, {0x2193, "v"}, {0x2026, "..."},
	    {0x00b7, "."},  {0x2014, "-"},  {0x2013, "-"}, {0x00b5, "u"}, {0x2264, "<="},
	    {0x2265, ">="}, {0x00d7, "x"},  {0x2588, "#"}, {0x2022, "*"}, {0x2019, "'"},
	};

	for (size_t i = 0; i < GT_ARRAY_SIZE(map); i++)
		if (map[i].cp == cp)
			return map[i].s;
	/* The eighth blocks of a bar's last cell: the cell is dropped. */
	if (cp >= 0x2589 && cp <= 0x258f)
		return "";
	snprintf(buf, len, "\\u{%x}", cp);
	return buf;
}

struct tbuf {
	char *p;
	size_t len, cap;
};

static void tbuf_put(struct tbuf *b, const char *s, size_t n)
{
	gt_grow((void **)&b->p, &b->cap, b->len + n, 1);
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

static void line_ascii(struct tbuf *b, const char *s, size_t len)
{
	for (size_t i = 0; i < len;) {
		bool zw;
		size_t n = char_len(s + i, len - i, &zw);
		char tmp[24];
		const char *a;

		if (zw || (unsigned char)s[i] < 0x80) {
			tbuf_put(b, s + i, n);
			i += n;
			continue;
		}
		if (gt_utf8_len(s + i) != n) {
			snprintf(tmp, sizeof(tmp), "\\x%02x", (unsigned char)s[i]);
			tbuf_put(b, tmp, strlen(tmp));
			i++;
			continue;
		}
		a = ascii_of(codepoint((const unsigned char *)s + i, n), tmp, sizeof(tmp));
		tbuf_put(b, a, strlen(a));
		i += n;
	}
}

/*
 * Where a wrapped line continues: under the value of a "key:   value" line
 * (the text after a first word and two or more spaces), else 4 columns
 * deeper than the line starts; never past half the width.
 */
static size_t hang(const char *s, size_t len, size_t indent, unsigned width)
{
	size_t i = indent, gap;

	while (i < len && s[i] != ' ')
		i++;
	gap = i;
	while (i < len && s[i] == ' ')
		i++;
	if (i - gap >= 2 && i < len && i <= width / 2 && !memchr(s, '\033', i))
		return i;
	return GT_MIN(indent + 4, (size_t)width / 2);
}

/* Writes one line (no '\n') wrapped to width columns. */
static void line_wrap(FILE *f, const char *s, size_t len, unsigned width)
{
	size_t indent = strspn(s, " "), cont, pos = 0, avail = width;
	bool first = true;

	if (!width || term__columns(s, len) <= width) {
		fwrite(s, 1, len, f);
		return;
	}
	cont = hang(s, len, indent, width);
	while (pos < len) {
		size_t i = pos, cols = 0, brk = 0, hard = 0;

		/* Past the indent of the line, a space is a place to break. */
		size_t body = first ? GT_MIN(indent, len) : pos;

		while (i < len) {
			bool zw;
			size_t n = char_len(s + i, len - i, &zw);

			if (!zw && cols + 1 > avail)
				break;
			if (s[i] == ' ' && i > body)
				brk = i;
			cols += !zw;
			i += n;
			hard = i;
		}
		if (i >= len) {
			fwrite(s + pos, 1, len - pos, f);
			return;
		}
		/* A space just past the last character that fits is a clean break too. */
		if (s[i] == ' ')
			brk = i;
		if (!brk || brk <= pos)
			brk = hard > pos ? hard : i + 1;
		{
			size_t end = brk;

			while (end > pos && s[end - 1] == ' ')
				end--;
			fwrite(s + pos, 1, end - pos, f);
		}
		fprintf(f, "\n%*s", (int)cont, "");
		pos = brk;
		while (pos < len && s[pos] == ' ')
			pos++;
		first = false;
		avail = width - cont;
	}
}

int term__write(FILE *f, const char *text, size_t len, unsigned width, bool ascii)
{
	struct tbuf b = {};

	for (size_t pos = 0; pos < len;) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;
		const char *line = text + pos;

		if (ascii) {
			b.len = 0;
			line_ascii(&b, line, n);
			line = b.p ? b.p : "";
			n = b.len;
		}
		line_wrap(f, line, n, width);
		if (nl)
			fputc('\n', f);
		pos += (size_t)((nl ? nl + 1 : text + len) - (text + pos));
	}
	free(b.p);
	return ferror(f) ? -1 : 0;
}

int term__stdout_begin(struct term_redirect *t)
{
	t->tmp = NULL;
	t->width = term__width(stdout);
	t->ascii = !term__utf8();
	if (!t->width && !t->ascii)
		return 0;
	fflush(stdout);
	t->saved_fd = dup(STDOUT_FILENO);
	if (t->saved_fd < 0)
		return -1;
	t->tmp = tmpfile();
	if (!t->tmp || dup2(fileno(t->tmp), STDOUT_FILENO) < 0) {
		if (t->tmp)
			fclose(t->tmp);
		t->tmp = NULL;
		close(t->saved_fd);
		return -1;
	}
	return 0;
}

int term__stdout_end(struct term_redirect *t)
{
	char *text = NULL;
	long len;
	int ret = -1;

	if (!t->tmp)
		return 0;
	fflush(stdout);
	dup2(t->saved_fd, STDOUT_FILENO);
	close(t->saved_fd);
	len = ftell(t->tmp);
	if (len >= 0 && !fseek(t->tmp, 0, SEEK_SET)) {
		text = gt_xmalloc((size_t)len + 1);
		if (fread(text, 1, (size_t)len, t->tmp) == (size_t)len) {
			text[len] = '\0';
			ret = term__write(stdout, text, (size_t)len, t->width, t->ascii);
		}
	}
	free(text);
	fclose(t->tmp);
	t->tmp = NULL;
	return ret;
}

const char *term__fg(bool on, unsigned code, char *buf, size_t len)
{
	if (!on)
		return "";
	snprintf(buf, len, "\033[38;5;%um", code);
	return buf;
}

const char *term__reset(bool on)
{
	return on ? "\033[0m" : "";
}
