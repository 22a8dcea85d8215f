/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * term.h: what the terminal a text output goes to can show: colour
 * (--color, NO_COLOR), its width ($COLUMNS, the tty's), and whether the
 * locale's character set is UTF-8; and the filter that fits a text to them.
 */
#ifndef GT_TERM_H
#define GT_TERM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* --color WHEN: auto, always or never.  Returns 0, or -1 after the error. */
int term__set_color(const char *when);
/*
 * Whether text written to f gets ANSI colours: --color always/never, else
 * (auto) when f is a terminal, TERM is not "dumb" and NO_COLOR is unset or
 * empty.
 */
bool term__color(FILE *f);

/*
 * Columns a text written to f may use: $COLUMNS when set (a number >= 20),
 * else the terminal's width when f is a tty, else 0: no limit (a pipe or a
 * file keeps full lines).
 */
unsigned term__width(FILE *f);

/* Whether the locale (LC_ALL, LC_CTYPE, LANG) uses UTF-8; checked once. */
bool term__utf8(void);

/* Display columns of s[0..len): escape sequences take none, a UTF-8 character one. */
size_t term__columns(const char *s, size_t len);

/*
 * Writes text[0..len) to f: lines wider than width (0: no limit) wrapped at
 * a space, continued 4 columns deeper than they started; when ascii, UTF-8
 * characters become ASCII ("->" for an arrow, "#" for a block, "..." for an
 * ellipsis, "\u{XXXX}" for others).  Returns 0, or -1 on a write error.
 */
int term__write(FILE *f, const char *text, size_t len, unsigned width, bool ascii);

/*
 * For a command that prints its text with printf: between begin and end,
 * stdout goes to a temporary file that end writes through term__write to
 * the real stdout, wrapped to its width and in ASCII as its locale needs
 * (nothing is redirected when neither is needed).  Both return 0 or -1.
 */
struct term_redirect {
	FILE *tmp; /* NULL: not redirected */
	int saved_fd;
	unsigned width;
	bool ascii;
};
int term__stdout_begin(struct term_redirect *t);
int term__stdout_end(struct term_redirect *t);

/* "\033[38;5;Nm" when on, else "": a 256-colour foreground. */
const char *term__fg(bool on, unsigned code, char *buf, size_t len);
/* "\033[0m" when on, else "". */
const char *term__reset(bool on);

#endif /* GT_TERM_H */
