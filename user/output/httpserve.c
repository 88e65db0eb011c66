// SPDX-License-Identifier: GPL-2.0-only
/* A /metrics endpoint on the caller's epoll, never blocking it. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "output/httpserve.h"

struct conn {
	int fd;			/* -1: a free slot */
	uint64_t since_ns;
	size_t got;
	char req[JW_HTTP_MAX_REQUEST];
	struct jw_buf out;	/* the answer, once the request is read */
	size_t sent;
};

struct jw_http {
	int lfd, epoll_fd;
	char *path;
	char where[64];
	jw_http_render_fn render;
	void *ctx;
	struct conn conns[JW_HTTP_MAX_CONNS];
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* A port number, 0..65535, all of @s. */
static int parse_port(const char *s, in_port_t *port)
{
	char *end;
	unsigned long v;

	if (!*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > 65535)
		return -EINVAL;
	*port = htons((uint16_t)v);
	return 0;
}

int jw_http_parse_addr(const char *s, struct sockaddr_storage *ss, socklen_t *len, char *err,
		       size_t errlen)
{
	struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
	char host[64];
	const char *colon, *port;
	size_t n;

	memset(ss, 0, sizeof(*ss));
	if (s[0] == '[') {
		const char *close = strchr(s, ']');

		if (!close || close[1] != ':' || (n = (size_t)(close - s - 1)) >= sizeof(host))
			goto bad;
		memcpy(host, s + 1, n);
		host[n] = 0;
		in6->sin6_family = AF_INET6;
		if (inet_pton(AF_INET6, host, &in6->sin6_addr) != 1 ||
		    parse_port(close + 2, &in6->sin6_port))
			goto bad;
		*len = sizeof(*in6);
		return 0;
	}
	colon = strrchr(s, ':');
	in4->sin_family = AF_INET;
	*len = sizeof(*in4);
	if (!colon) {
		host[0] = 0;
		port = s;
	} else {
		n = (size_t)(colon - s);
		if (n >= sizeof(host))
			goto bad;
		memcpy(host, s, n);
		host[n] = 0;
		port = colon + 1;
	}
	if (parse_port(port, &in4->sin_port))
		goto bad;
	/* No address: the loopback, never every interface unless asked. */
	if (!host[0] || !strcmp(host, "localhost")) {
		in4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		return 0;
	}
	if (inet_pton(AF_INET, host, &in4->sin_addr) == 1)
		return 0;
bad:
	jw_set_err(err, errlen, "metrics_listen=%s: expected ADDR:PORT (127.0.0.1:9464, "
		   "[::1]:9464, 0.0.0.0:9464) or PORT for the loopback", s);
	return -EINVAL;
}

enum jw_http_req jw_http_parse_request(const char *buf, size_t len, char *path, size_t pathlen)
{
	const char *eol, *sp1, *sp2;
	bool head;
	size_t n;

	/* The header ends with an empty line; only the request line matters. */
	if (!memmem(buf, len, "\r\n\r\n", 4) && !memmem(buf, len, "\n\n", 2))
		return JW_HTTP_INCOMPLETE;
	eol = memchr(buf, '\n', len);
	sp1 = memchr(buf, ' ', (size_t)(eol - buf));
	sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(eol - sp1 - 1)) : NULL;
	if (!sp1 || !sp2 || strncmp(sp2 + 1, "HTTP/1.", 7))
		return JW_HTTP_BAD;
	if (sp1 - buf == 3 && !memcmp(buf, "GET", 3))
		head = false;
	else if (sp1 - buf == 4 && !memcmp(buf, "HEAD", 4))
		head = true;
	else
		return JW_HTTP_METHOD;
	n = (size_t)(sp2 - sp1 - 1);
	if (n >= pathlen)
		n = pathlen - 1;
	memcpy(path, sp1 + 1, n);
	path[n] = 0;
	/* The query is not looked at: /metrics?x=1 is /metrics. */
	path[strcspn(path, "?")] = 0;
	return head ? JW_HTTP_HEAD : JW_HTTP_GET;
}

static void watch(struct jw_http *h, int fd, int op, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.fd = fd };

	epoll_ctl(h->epoll_fd, op, fd, &ev);
}

static void close_conn(struct jw_http *h, struct conn *c)
{
	epoll_ctl(h->epoll_fd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	c->fd = -1;
	jw_buf_free(&c->out);
}

struct jw_http *jw_http__listen(const char *addr, const char *path, jw_http_render_fn render,
				void *ctx, char *err, size_t errlen)
{
	struct sockaddr_storage ss, got;
	socklen_t len, glen = sizeof(got);
	char ip[INET6_ADDRSTRLEN];
	struct jw_http *h;
	int one = 1, i;

	if (jw_http_parse_addr(addr, &ss, &len, err, errlen))
		return NULL;
	h = calloc(1, sizeof(*h));
	if (!h || !(h->path = strdup(path))) {
		free(h);
		jw_set_err(err, errlen, "out of memory");
		return NULL;
	}
	h->epoll_fd = -1;
	h->render = render;
	h->ctx = ctx;
	for (i = 0; i < JW_HTTP_MAX_CONNS; i++)
		h->conns[i].fd = -1;
	h->lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (h->lfd < 0 && (errno == EAFNOSUPPORT || errno == EPERM || errno == EACCES)) {
		/* A service's RestrictAddressFamilies= (EAFNOSUPPORT) or a seccomp filter. */
		jw_set_err(err, errlen, "metrics_listen=%s: no %s socket allowed here (%s): a "
			   "service restricted to local sockets needs the unit's drop-in for "
			   "metrics_listen (examples/metrics-listen.conf)", addr,
			   ss.ss_family == AF_INET6 ? "IPv6" : "IPv4", strerror(errno));
		jw_http__free(h);
		return NULL;
	}
	if (h->lfd < 0 || setsockopt(h->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(h->lfd, (struct sockaddr *)&ss, len) || listen(h->lfd, JW_HTTP_MAX_CONNS) ||
	    getsockname(h->lfd, (struct sockaddr *)&got, &glen)) {
		jw_set_err(err, errlen, "metrics_listen=%s: %s", addr, strerror(errno));
		jw_http__free(h);
		return NULL;
	}
	if (got.ss_family == AF_INET6)
		snprintf(h->where, sizeof(h->where), "[%s]:%u",
			 inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&got)->sin6_addr, ip,
				   sizeof(ip)), ntohs(((struct sockaddr_in6 *)&got)->sin6_port));
	else
		snprintf(h->where, sizeof(h->where), "%s:%u",
			 inet_ntop(AF_INET, &((struct sockaddr_in *)&got)->sin_addr, ip, sizeof(ip)),
			 ntohs(((struct sockaddr_in *)&got)->sin_port));
	return h;
}

int jw_http__watch(struct jw_http *h, int epoll_fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = h->lfd };

	h->epoll_fd = epoll_fd;
	return epoll_ctl(epoll_fd, EPOLL_CTL_ADD, h->lfd, &ev) ? -errno : 0;
}

void jw_http__free(struct jw_http *h)
{
	int i;

	if (!h)
		return;
	for (i = 0; i < JW_HTTP_MAX_CONNS; i++)
		if (h->conns[i].fd >= 0)
			close_conn(h, &h->conns[i]);
	if (h->lfd >= 0) {
		if (h->epoll_fd >= 0)
			epoll_ctl(h->epoll_fd, EPOLL_CTL_DEL, h->lfd, NULL);
		close(h->lfd);
	}
	free(h->path);
	free(h);
}

const char *jw_http__where(const struct jw_http *h)
{
	return h->where;
}

static void accept_all(struct jw_http *h)
{
	int fd, i;

	while ((fd = accept4(h->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		for (i = 0; i < JW_HTTP_MAX_CONNS && h->conns[i].fd >= 0; i++)
			;
		if (i == JW_HTTP_MAX_CONNS) {
			close(fd);	/* too many at once: the scraper retries */
			continue;
		}
		h->conns[i].fd = fd;
		h->conns[i].since_ns = now_ns();
		h->conns[i].got = 0;
		h->conns[i].sent = 0;
		jw_buf_init(&h->conns[i].out);
		watch(h, fd, EPOLL_CTL_ADD, EPOLLIN | EPOLLRDHUP);
	}
}

/* The whole answer to request @req into @c->out. */
static void answer(struct jw_http *h, struct conn *c, enum jw_http_req req, const char *path)
{
	struct jw_buf body;
	const char *status = "200 OK", *extra = "";

	jw_buf_init(&body);
	if (req == JW_HTTP_BAD) {
		status = "400 Bad Request";
		jw_buf_puts(&body, "bad request\n");
	} else if (req == JW_HTTP_METHOD) {
		status = "405 Method Not Allowed";
		extra = "Allow: GET, HEAD\r\n";
		jw_buf_puts(&body, "only GET and HEAD\n");
	} else if (strcmp(path, h->path)) {
		status = "404 Not Found";
		jw_buf_printf(&body, "jankwatch serves %s\n", h->path);
	} else {
		h->render(h->ctx, &body);
	}
	jw_buf_printf(&c->out, "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%s"
		      "Connection: close\r\n\r\n", status,
		      status[0] == '2' ? "text/plain; version=0.0.4; charset=utf-8" :
					 "text/plain; charset=utf-8", body.len, extra);
	if (req != JW_HTTP_HEAD && body.len)
		jw_buf_puts(&c->out, body.data);
	jw_buf_free(&body);
}

/* Writes what is left of the answer; closes the connection once all is out, or on an error. */
static void send_some(struct jw_http *h, struct conn *c)
{
	ssize_t n;

	while (c->sent < c->out.len) {
		n = send(c->fd, c->out.data + c->sent, c->out.len - c->sent, MSG_NOSIGNAL);
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0)
			break;
		c->sent += (size_t)n;
	}
	shutdown(c->fd, SHUT_WR);
	close_conn(h, c);
}

static void on_readable(struct jw_http *h, struct conn *c)
{
	char path[256];
	enum jw_http_req req;
	ssize_t n;

	for (;;) {
		n = recv(c->fd, c->req + c->got, sizeof(c->req) - c->got, 0);
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			close_conn(h, c);
			return;
		}
		c->got += (size_t)n;
		req = jw_http_parse_request(c->req, c->got, path, sizeof(path));
		if (req == JW_HTTP_INCOMPLETE && c->got < sizeof(c->req))
			continue;
		if (req == JW_HTTP_INCOMPLETE)
			req = JW_HTTP_BAD;	/* a header past JW_HTTP_MAX_REQUEST */
		answer(h, c, req, path);
		if (c->out.err) {
			close_conn(h, c);
			return;
		}
		watch(h, c->fd, EPOLL_CTL_MOD, EPOLLOUT);
		send_some(h, c);
		return;
	}
}

bool jw_http__on_fd(struct jw_http *h, int fd, uint32_t events)
{
	int i;

	if (!h)
		return false;
	if (fd == h->lfd) {
		accept_all(h);
		return true;
	}
	for (i = 0; i < JW_HTTP_MAX_CONNS; i++) {
		struct conn *c = &h->conns[i];

		if (c->fd != fd)
			continue;
		if (c->out.len)
			send_some(h, c);
		else if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
			on_readable(h, c);
		return true;
	}
	return false;
}

void jw_http__expire(struct jw_http *h, uint64_t now)
{
	int i;

	for (i = 0; h && i < JW_HTTP_MAX_CONNS; i++)
		if (h->conns[i].fd >= 0 &&
		    now - h->conns[i].since_ns > JW_HTTP_TIMEOUT_S * 1000000000ULL)
			close_conn(h, &h->conns[i]);
}
