/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A /metrics endpoint: HTTP/1.1 GET and HEAD of one path, each answer whole with
 * "Connection: close", every socket non-blocking and driven by the caller's epoll, so that a
 * slow or stuck scraper never holds the caller's loop: at most JW_HTTP_MAX_CONNS connections,
 * each closed after JW_HTTP_TIMEOUT_S, a request of at most JW_HTTP_MAX_REQUEST bytes.
 */
#ifndef JW_HTTPSERVE_H
#define JW_HTTPSERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "base/jsonbuf.h"

#define JW_HTTP_MAX_CONNS 16
#define JW_HTTP_TIMEOUT_S 10
#define JW_HTTP_MAX_REQUEST 8192

/*
 * ADDR:PORT as metrics_listen takes it: 127.0.0.1:9464, [::1]:9464, 0.0.0.0:9464, or PORT / :PORT
 * alone for the loopback (127.0.0.1). 0 or -EINVAL with the reason in @err.
 */
int jw_http_parse_addr(const char *s, struct sockaddr_storage *ss, socklen_t *len, char *err,
		       size_t errlen);

/* What a request asks. */
enum jw_http_req {
	JW_HTTP_INCOMPLETE = 0,	/* its header has not ended yet */
	JW_HTTP_GET,
	JW_HTTP_HEAD,
	JW_HTTP_BAD,		/* not HTTP/1.x: 400 */
	JW_HTTP_METHOD,		/* another method: 405 */
};

/* Reads the request line of @buf (@len bytes); the path asked for into @path. */
enum jw_http_req jw_http_parse_request(const char *buf, size_t len, char *path, size_t pathlen);

/* Renders the body of a GET or HEAD of the served path into @b. */
typedef void (*jw_http_render_fn)(void *ctx, struct jw_buf *b);

struct jw_http;

/*
 * Listens on @addr (jw_http_parse_addr()) for @path. NULL with the reason in @err (a bad address,
 * a port in use).
 */
struct jw_http *jw_http__listen(const char *addr, const char *path, jw_http_render_fn render,
				void *ctx, char *err, size_t errlen);

/* Serves from now on: its sockets are added to @epoll_fd. 0 or -errno. */
int jw_http__watch(struct jw_http *h, int epoll_fd);
void jw_http__free(struct jw_http *h);	/* NULL-safe; closes every socket */

/* Handles epoll's @events on @fd if the fd is one of @h's; returns whether it was. */
bool jw_http__on_fd(struct jw_http *h, int fd, uint32_t events);

/* Closes the connections older than JW_HTTP_TIMEOUT_S at @now_ns (CLOCK_MONOTONIC). */
void jw_http__expire(struct jw_http *h, uint64_t now_ns);

/* The address it listens on, as "127.0.0.1:9464" (the port the kernel chose for port 0). */
const char *jw_http__where(const struct jw_http *h);

#endif
