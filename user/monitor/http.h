/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * http.h: the monitor's /metrics endpoint (libmicrohttpd: a root process
 * that listens parses no HTTP itself).  GET or HEAD /metrics gets the text
 * last published; other paths 404, other methods 405.
 */
#ifndef GT_HTTP_H
#define GT_HTTP_H

#include <stddef.h>

struct http;

/*
 * Listens on addr, "HOST:PORT", "[IPv6]:PORT" or ":PORT" / "PORT" (then
 * 127.0.0.1).  NULL with a one-line message in err.
 */
struct http *http__start(const char *addr, char *err, size_t errlen);
/* 0 when addr is a HOST:PORT http__start takes, else -1. */
int http__check_addr(const char *addr);
/* Serves a copy of text[0..len) from now on. */
void http__publish(struct http *h, const char *text, size_t len);
/* Stops listening and frees (NULL-safe). */
void http__stop(struct http *h);

#endif /* GT_HTTP_H */
