// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * http.c: /metrics over libmicrohttpd's own thread.  The handler only
 * compares the method and the path and copies the published text: no
 * request body, header or query is read.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <microhttpd.h>

#include "monitor/http.h"
#include "support/util.h"

#define HTTP_CONN_LIMIT	  16
#define HTTP_TIMEOUT_S	  10
#define HTTP_MEMORY_LIMIT (32 * 1024)

struct http {
	struct MHD_Daemon *d;
	pthread_mutex_t lock;
	char *text;
	size_t len;
};

static const char not_found[] = "not found: the metrics are at /metrics\n";
static const char not_allowed[] = "method not allowed: use GET\n";

static enum MHD_Result reply(struct MHD_Connection *c, unsigned code, const char *body, size_t len,
			     const char *type)
{
	struct MHD_Response *r =
	    MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (code == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **con_cls)
{
	struct http *h = cls;
	enum MHD_Result ret;

	(void)version;
	(void)upload;
	(void)con_cls;
	/* A body sent with the request is not read: the request is answered at its head. */
	*upload_size = 0;
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, not_allowed, sizeof(not_allowed) - 1,
			     "text/plain; charset=utf-8");
	if (strcmp(url, "/metrics"))
		return reply(c, MHD_HTTP_NOT_FOUND, not_found, sizeof(not_found) - 1,
			     "text/plain; charset=utf-8");
	pthread_mutex_lock(&h->lock);
	ret = reply(c, MHD_HTTP_OK, h->text ? h->text : "", h->text ? h->len : 0,
		    "text/plain; version=0.0.4; charset=utf-8");
	pthread_mutex_unlock(&h->lock);
	return ret;
}

/* HOST:PORT into a socket address (IPv4 or [IPv6]); 0 or -1. */
static int parse_addr(const char *addr, struct sockaddr_storage *ss, bool *v6)
{
	char host[64] = "127.0.0.1";
	const char *colon = strrchr(addr, ':');
	uint64_t port;

	if (colon) {
		size_t n = (size_t)(colon - addr);

		if (n >= sizeof(host))
			return -1;
		if (n) {
			memcpy(host, addr, n);
			host[n] = '\0';
		}
	}
	if (gt_parse_uint(colon ? colon + 1 : addr, 1, 65535, &port))
		return -1;
	memset(ss, 0, sizeof(*ss));
	*v6 = host[0] == '[';
	if (*v6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;
		size_t n = strlen(host);

		if (n < 3 || host[n - 1] != ']')
			return -1;
		host[n - 1] = '\0';
		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)port);
		return inet_pton(AF_INET6, host + 1, &a->sin6_addr) == 1 ? 0 : -1;
	}
	struct sockaddr_in *a = (struct sockaddr_in *)ss;

	a->sin_family = AF_INET;
	a->sin_port = htons((uint16_t)port);
	return inet_pton(AF_INET, host, &a->sin_addr) == 1 ? 0 : -1;
}

int http__check_addr(const char *addr)
{
	struct sockaddr_storage ss;
	bool v6;

	return parse_addr(addr, &ss, &v6);
}

struct http *http__start(const char *addr, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	struct http *h;
	sigset_t block, old;
	bool v6;

	if (parse_addr(addr, &ss, &v6)) {
		snprintf(err, errlen,
			 "bad --listen '%s': give HOST:PORT with a numeric address, e.g. "
			 "127.0.0.1:9464",
			 addr);
		return NULL;
	}
	h = gt_xcalloc(1, sizeof(*h));
	pthread_mutex_init(&h->lock, NULL);
	/* Signals are the monitor's main thread's business, not the server thread's. */
	sigfillset(&block);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	h->d = MHD_start_daemon(
	    MHD_USE_INTERNAL_POLLING_THREAD | (v6 ? MHD_USE_IPv6 : 0), 0, NULL, NULL, on_request, h,
	    MHD_OPTION_SOCK_ADDR, &ss, MHD_OPTION_CONNECTION_LIMIT, (unsigned)HTTP_CONN_LIMIT,
	    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)HTTP_TIMEOUT_S,
	    MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)HTTP_MEMORY_LIMIT, MHD_OPTION_END);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!h->d) {
		snprintf(err, errlen,
			 "cannot listen on %s: the port may be in use or the address not local: "
			 "choose another --listen",
			 addr);
		pthread_mutex_destroy(&h->lock);
		free(h);
		return NULL;
	}
	return h;
}

void http__publish(struct http *h, const char *text, size_t len)
{
	char *copy = gt_xmalloc(len + 1);

	memcpy(copy, text, len);
	copy[len] = '\0';
	pthread_mutex_lock(&h->lock);
	free(h->text);
	h->text = copy;
	h->len = len;
	pthread_mutex_unlock(&h->lock);
}

void http__stop(struct http *h)
{
	if (!h)
		return;
	MHD_stop_daemon(h->d);
	pthread_mutex_destroy(&h->lock);
	free(h->text);
	free(h);
}
