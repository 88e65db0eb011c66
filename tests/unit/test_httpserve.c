// SPDX-License-Identifier: GPL-2.0-only
/*
 * The /metrics endpoint: metrics_listen's addresses, request lines, and a live exchange on the
 * loopback driven by an epoll as the session drives it (GET, HEAD, 404, 405, a request too long,
 * a client that never reads, connections past the cap).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "output/httpserve.h"

static void test_parse_addr(void **state)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *in4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
	socklen_t len;
	char err[256];

	(void)state;
	assert_int_equal(jw_http_parse_addr("9464", &ss, &len, err, sizeof(err)), 0);
	assert_int_equal(in4->sin_family, AF_INET);
	assert_int_equal(ntohl(in4->sin_addr.s_addr), INADDR_LOOPBACK);
	assert_int_equal(ntohs(in4->sin_port), 9464);
	assert_int_equal(jw_http_parse_addr(":9464", &ss, &len, err, sizeof(err)), 0);
	assert_int_equal(ntohl(in4->sin_addr.s_addr), INADDR_LOOPBACK);
	assert_int_equal(jw_http_parse_addr("localhost:1", &ss, &len, err, sizeof(err)), 0);
	assert_int_equal(ntohl(in4->sin_addr.s_addr), INADDR_LOOPBACK);
	assert_int_equal(jw_http_parse_addr("0.0.0.0:80", &ss, &len, err, sizeof(err)), 0);
	assert_int_equal(in4->sin_addr.s_addr, htonl(INADDR_ANY));
	assert_int_equal(len, sizeof(*in4));
	assert_int_equal(jw_http_parse_addr("[::1]:9464", &ss, &len, err, sizeof(err)), 0);
	assert_int_equal(in6->sin6_family, AF_INET6);
	assert_int_equal(ntohs(in6->sin6_port), 9464);
	assert_int_equal(len, sizeof(*in6));
	assert_int_equal(jw_http_parse_addr("0", &ss, &len, err, sizeof(err)), 0);
	static const char *const bad[] = { "", "x", "65536", "-1", "+5", "1.2.3:80", "[::1]9464",
					   "[::1", "host.example:80", "127.0.0.1:", "9464 " };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		assert_int_equal(jw_http_parse_addr(bad[i], &ss, &len, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "metrics_listen="));
	}
}

static void test_parse_request(void **state)
{
	char path[64];

	(void)state;
	assert_int_equal(jw_http_parse_request("GET /metrics HTTP/1.1\r\nHost: x\r\n", 33, path,
					       sizeof(path)), JW_HTTP_INCOMPLETE);
#define REQ(s) jw_http_parse_request(s, strlen(s), path, sizeof(path))
	assert_int_equal(REQ("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"), JW_HTTP_GET);
	assert_string_equal(path, "/metrics");
	assert_int_equal(REQ("HEAD /metrics?x=1 HTTP/1.0\n\n"), JW_HTTP_HEAD);
	assert_string_equal(path, "/metrics");
	assert_int_equal(REQ("POST /metrics HTTP/1.1\r\n\r\n"), JW_HTTP_METHOD);
	assert_int_equal(REQ("GET /metrics\r\n\r\n"), JW_HTTP_BAD);
	assert_int_equal(REQ("GET /metrics SPDY/3\r\n\r\n"), JW_HTTP_BAD);
	assert_int_equal(REQ("\r\n\r\n"), JW_HTTP_BAD);
	/* A path longer than the room is cut, never overrun. */
	assert_int_equal(jw_http_parse_request("GET /aaaaaaaaaaaaaaaaaaaa HTTP/1.1\r\n\r\n", 38,
					       path, 8), JW_HTTP_GET);
	assert_string_equal(path, "/aaaaaa");
}

static void render(void *ctx, struct jw_buf *b)
{
	(*(int *)ctx)++;
	jw_buf_puts(b, "jankwatch_up 1\n");
}

struct server {
	struct jw_http *h;
	int epfd;
	int renders;
	in_port_t port;
};

/* Runs the server's epoll until nothing is ready for @ms. */
static void pump(struct server *sv, int ms)
{
	struct epoll_event ev[8];
	int n, i;

	while ((n = epoll_wait(sv->epfd, ev, 8, ms)) > 0)
		for (i = 0; i < n; i++)
			assert_true(jw_http__on_fd(sv->h, ev[i].data.fd, ev[i].events));
}

static int client(struct server *sv)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = sv->port,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		fail_msg("connect: %s", strerror(errno));
	return fd;
}

/* Sends @req, serves, and reads the whole answer into @out. */
static void exchange(struct server *sv, const char *req, char *out, size_t len)
{
	int fd = client(sv);
	size_t got = 0;
	ssize_t n;

	assert_int_equal(send(fd, req, strlen(req), 0), (ssize_t)strlen(req));
	pump(sv, 50);
	while (got + 1 < len && (n = recv(fd, out + got, len - 1 - got, MSG_DONTWAIT)) > 0)
		got += (size_t)n;
	out[got] = 0;
	close(fd);
}

static void test_serve(void **state)
{
	struct server sv = { .epfd = epoll_create1(EPOLL_CLOEXEC) };
	char err[256], out[4096], where[64];
	static char big[JW_HTTP_MAX_REQUEST + 100];
	int fds[JW_HTTP_MAX_CONNS + 2], i, quiet;

	(void)state;
	sv.h = jw_http__listen("127.0.0.1:0", "/metrics", render, &sv.renders, err, sizeof(err));
	assert_non_null(sv.h);
	assert_int_equal(jw_http__watch(sv.h, sv.epfd), 0);
	snprintf(where, sizeof(where), "%s", jw_http__where(sv.h));
	assert_int_equal(strncmp(where, "127.0.0.1:", 10), 0);
	sv.port = htons((uint16_t)atoi(where + 10));

	exchange(&sv, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", out, sizeof(out));
	assert_non_null(strstr(out, "HTTP/1.1 200 OK\r\n"));
	assert_non_null(strstr(out, "Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"));
	assert_non_null(strstr(out, "Content-Length: 15\r\n"));
	assert_non_null(strstr(out, "\r\n\r\njankwatch_up 1\n"));
	assert_int_equal(sv.renders, 1);
	exchange(&sv, "HEAD /metrics HTTP/1.1\r\n\r\n", out, sizeof(out));
	assert_non_null(strstr(out, "Content-Length: 15\r\n"));
	assert_null(strstr(out, "jankwatch_up"));
	exchange(&sv, "GET / HTTP/1.1\r\n\r\n", out, sizeof(out));
	assert_non_null(strstr(out, "HTTP/1.1 404 Not Found\r\n"));
	exchange(&sv, "DELETE /metrics HTTP/1.1\r\n\r\n", out, sizeof(out));
	assert_non_null(strstr(out, "HTTP/1.1 405 Method Not Allowed\r\nContent-Type"));
	assert_non_null(strstr(out, "Allow: GET, HEAD\r\n"));
	memset(big, 'a', sizeof(big) - 1);
	memcpy(big, "GET /", 5);
	exchange(&sv, big, out, sizeof(out));
	assert_non_null(strstr(out, "HTTP/1.1 400 Bad Request\r\n"));

	/* Clients that hold their connections: the cap's worth are kept, the rest refused, the
	 * server goes on answering once they expire. */
	for (i = 0; i < JW_HTTP_MAX_CONNS + 2; i++) {
		fds[i] = client(&sv);
		pump(&sv, 10);
	}
	quiet = 0;
	for (i = 0; i < JW_HTTP_MAX_CONNS + 2; i++) {
		char c;

		quiet += recv(fds[i], &c, 1, MSG_DONTWAIT) < 0 && errno == EAGAIN;
	}
	assert_int_equal(quiet, JW_HTTP_MAX_CONNS);
	jw_http__expire(sv.h, UINT64_MAX);
	for (i = 0; i < JW_HTTP_MAX_CONNS + 2; i++)
		close(fds[i]);
	exchange(&sv, "GET /metrics HTTP/1.0\r\n\r\n", out, sizeof(out));
	assert_non_null(strstr(out, "200 OK"));

	/* A port in use: said. */
	assert_null(jw_http__listen(where, "/metrics", render, &sv.renders, err, sizeof(err)));
	assert_non_null(strstr(err, "Address already in use"));
	jw_http__free(sv.h);
	close(sv.epfd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_addr),
		cmocka_unit_test(test_parse_request),
		cmocka_unit_test(test_serve),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
