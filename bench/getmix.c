// SPDX-License-Identifier: GPL-2.0-only
/*
 * One client of several redis servers at once, in turns: a batch of GETs to each, one after the
 * other (the order rotated each round), timed apart. What the servers' watchers add shows as
 * the difference between their batches in the same round: whatever slows the machine for a
 * while (the host, another guest) slows every server's batch of that round alike.
 *
 * Usage: jw_bench_getmix [-c CONNS] [--http PATH] WARMUP_S SECONDS BATCH PORT[:TID]|cpu...
 * With -c, CONNS connections to each server: each of a batch's BATCH steps sends a GET on every
 * connection, then reads every reply (the server finds CONNS of them ready at once, as under
 * as many clients); figures stay per GET. With --http, the servers are HTTP servers (nginx):
 * each GET asks for PATH on a kept-alive HTTP/1.1 connection, its reply read to the end of
 * its body (Content-Length) and required to be a 200.
 * Prints, per round after the warm-up, "round <n> <begin> <end>" (ns of CLOCK_MONOTONIC), then
 * for each server in the order given its ns a GET by the wall clock, then each one's thread's
 * CPU ns a GET (its schedstat; TID is the server's thread, 0 when not given), then the client's
 * own CPU ns a GET of each. A running thread's schedstat is brought up to date only at a tick
 * or a switch, so a batch's end is read once the server's thread no longer runs: with many
 * connections the server runs on past the last reply, and read at once it lagged by
 * microseconds a GET, by unlike amounts for two alike servers (nginx under 50 clients: -3.7 us
 * a GET for one against the other, +1.3 where their wall clocks said +9.4). "cpu" stands for
 * a server: a fixed piece of arithmetic per GET, which no system call or switch slows, only the
 * host.
 * The key GET asks for, "key:__rand_int__", must be set on each server (3 bytes, as
 * bench/servers.sh sets it).
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "window.h"

#define MAX_SERVERS 8
#define MAX_CONNS 256
/* Reads of a server's state, a few us each, waiting for it to stop running after a batch. */
#define WAIT_READS 2000

/* The connections to each server (-c): a batch sends a GET on each, then reads the replies. */
static int conns = 1;

static const char redis_request[] = "*2\r\n$3\r\nGET\r\n$16\r\nkey:__rand_int__\r\n";
static const char reply[] = "$3\r\nxxx\r\n";

/* What a GET sends: redis's, or the HTTP request for --http's path. */
static const char *request = redis_request;
static size_t request_len = sizeof(redis_request) - 1;
static bool http;

static uint64_t now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static int connect_port(int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Sends one GET on @fd; 0, or -1 with errno. */
static int send_get(int fd)
{
	return write(fd, request, request_len) == (ssize_t)request_len ? 0 : -1;
}

/* Reads what @fd has into @buf at @got, up to @size; the new length, or -1 with errno. */
static ssize_t read_more(int fd, char *buf, size_t got, size_t size)
{
	ssize_t n;

	if (got == size) {
		errno = EMSGSIZE;
		return -1;
	}
	n = read(fd, buf + got, size - got);
	if (n == 0)
		errno = ECONNRESET;
	return n <= 0 ? -1 : (ssize_t)got + n;
}

/*
 * Reads one HTTP reply on @fd to the end of its body; 0, or -1 with errno (EPROTO: not a 200 or
 * no Content-Length). Nothing follows it on the connection: one request is in flight on each.
 */
static int read_http_reply(int fd)
{
	static const char field[] = "\r\ncontent-length:";
	char buf[4096], *end = NULL, *p;
	size_t got = 0, total;
	ssize_t n;

	while (!end) {
		n = read_more(fd, buf, got, sizeof(buf) - 1);
		if (n < 0)
			return -1;
		got = (size_t)n;
		buf[got] = '\0';
		end = strstr(buf, "\r\n\r\n");
	}
	if (strncmp(buf, "HTTP/1.1 200 ", 13)) {
		errno = EPROTO;
		return -1;
	}
	for (p = buf; p < end && strncasecmp(p, field, sizeof(field) - 1); p++)
		;
	if (p >= end) {
		errno = EPROTO;
		return -1;
	}
	total = (size_t)(end + 4 - buf) + strtoul(p + sizeof(field) - 1, NULL, 10);
	while (got < total) {
		n = read_more(fd, buf, got, sizeof(buf) - 1);
		if (n < 0)
			return -1;
		got = (size_t)n;
	}
	if (got > total) {
		errno = EPROTO;
		return -1;
	}
	return 0;
}

/* Reads one GET's whole reply on @fd and checks it; 0, or -1 with errno (EPROTO: not the key). */
static int read_reply(int fd)
{
	char buf[64];
	size_t got = 0;
	ssize_t n;

	if (http)
		return read_http_reply(fd);
	while (got < sizeof(reply) - 1) {
		n = read(fd, buf + got, sizeof(reply) - 1 - got);
		if (n <= 0) {
			if (n == 0)
				errno = ECONNRESET;
			return -1;
		}
		/* Checked as it comes: a shorter reply ("$-1", no such key) must not wait for more. */
		if (memcmp(buf + got, reply + got, (size_t)n)) {
			errno = EPROTO;
			return -1;
		}
		got += (size_t)n;
	}
	return 0;
}

/* A GET's stand-in that makes no system call: the host's pace alone (port "cpu"). */
static int work(void)
{
	static volatile uint64_t sink;
	uint64_t x = sink;

	for (int i = 0; i < 20000; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	sink = x;
	return 0;
}

static long number(const char *s, long lo, long hi, const char *what)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi) {
		fprintf(stderr, "jw_bench_getmix: %s: '%s' is not a number from %ld to %ld\n", what,
			s, lo, hi);
		exit(2);
	}
	return v;
}

/* A server: its connection (or the stand-in), and its thread's schedstat when given. */
struct server {
	const char *name;
	int fd[MAX_CONNS];	/* fd[0] -2: the stand-in, work() */
	int stat_fd;	/* /proc/TID/schedstat, or -1 */
	int state_fd;	/* /proc/TID/stat, with it */
	uint64_t wall, cpu, client_cpu;	/* the round's batch, ns */
};

/* The CPU time the server's thread has run so far (its schedstat), in ns; 0 when not known. */
static uint64_t server_cpu(const struct server *s)
{
	char buf[128];
	ssize_t n;

	if (s->stat_fd < 0)
		return 0;
	n = pread(s->stat_fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return strtoull(buf, NULL, 10);
}

/* Opens server @s given as PORT[:TID] or "cpu"; exits with a message when it cannot. */
static void open_server(struct server *s, const char *arg)
{
	char port[16], path[64];
	const char *colon = strchr(arg, ':');
	int port_nr;
	long tid;

	s->name = arg;
	s->stat_fd = -1;
	s->state_fd = -1;
	if (!strcmp(arg, "cpu")) {
		s->fd[0] = -2;
		return;
	}
	snprintf(port, sizeof(port), "%.*s", colon ? (int)(colon - arg) : (int)strlen(arg), arg);
	port_nr = (int)number(port, 1, 65535, "PORT");
	for (int c = 0; c < conns; c++) {
		s->fd[c] = connect_port(port_nr);
		if (s->fd[c] < 0) {
			fprintf(stderr, "jw_bench_getmix: port %s: %s\n", port, strerror(errno));
			exit(1);
		}
	}
	if (!colon)
		return;
	tid = number(colon + 1, 1, 1L << 30, "TID");
	snprintf(path, sizeof(path), "/proc/%ld/schedstat", tid);
	s->stat_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (s->stat_fd >= 0) {
		snprintf(path, sizeof(path), "/proc/%ld/stat", tid);
		s->state_fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	if (s->stat_fd < 0 || s->state_fd < 0) {
		fprintf(stderr, "jw_bench_getmix: %s: %s\n", path, strerror(errno));
		exit(1);
	}
}

static void failed(const struct server *s)
{
	fprintf(stderr, "jw_bench_getmix: %s: GET: %s\n", s->name, strerror(errno));
	exit(1);
}

/*
 * Waits (at most WAIT_READS reads of its state) for server @s's thread to be off its CPU, its
 * schedstat then up to date: its last reply sent, it goes on to its next wait.
 */
static void wait_not_running(const struct server *s)
{
	char buf[512];

	for (int i = 0; i < WAIT_READS; i++) {
		ssize_t n = pread(s->state_fd, buf, sizeof(buf) - 1, 0);
		const char *paren;

		if (n <= 0)
			return;
		buf[n] = '\0';
		/* "TID (comm) S ...": the state follows the last parenthesis. */
		paren = strrchr(buf, ')');
		if (!paren || paren[1] != ' ' || paren[2] != 'R')
			return;
	}
}

/*
 * One batch of @batch GETs on each of @s's connections (a GET sent on each, then the replies
 * read), timed by the wall, its thread's CPU and the client's.
 */
static void run_batch(struct server *s, int batch)
{
	uint64_t wall = now_ns(), cpu = server_cpu(s), client = clock_ns(CLOCK_THREAD_CPUTIME_ID);

	for (int j = 0; j < batch; j++) {
		if (s->fd[0] == -2) {
			work();
			continue;
		}
		for (int c = 0; c < conns; c++)
			if (send_get(s->fd[c]))
				failed(s);
		for (int c = 0; c < conns; c++)
			if (read_reply(s->fd[c]))
				failed(s);
	}
	s->client_cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID) - client;
	s->wall = now_ns() - wall;
	s->cpu = 0;
	if (s->stat_fd >= 0) {
		wait_not_running(s);
		s->cpu = server_cpu(s) - cpu;
	}
}

/* The GETs (or stand-ins) in one of @s's batches. */
static int gets_a_batch(const struct server *s, int batch)
{
	return s->fd[0] == -2 ? batch : batch * conns;
}

int main(int argc, char **argv)
{
	struct server sv[MAX_SERVERS];
	uint64_t end, warm_end, t;
	long warmup, seconds, round;
	int n, i, k, batch;

	static char http_request[1024];

	while (argc > 2 && (!strcmp(argv[1], "-c") || !strcmp(argv[1], "--http"))) {
		if (!strcmp(argv[1], "-c")) {
			conns = (int)number(argv[2], 1, MAX_CONNS, "CONNS");
		} else {
			int len = snprintf(http_request, sizeof(http_request), "GET %s HTTP/1.1\r\n"
					   "Host: 127.0.0.1\r\n\r\n", argv[2]);

			if (argv[2][0] != '/' || len >= (int)sizeof(http_request) ||
			    strpbrk(argv[2], " \r\n")) {
				fprintf(stderr, "jw_bench_getmix: --http: '%s' is not a path\n",
					argv[2]);
				return 2;
			}
			http = true;
			request = http_request;
			request_len = (size_t)len;
		}
		argc -= 2;
		argv += 2;
	}
	if (argc < 5 || argc - 4 > MAX_SERVERS) {
		fprintf(stderr, "usage: jw_bench_getmix [-c CONNS] [--http PATH] WARMUP_S SECONDS "
			"BATCH PORT[:TID]|cpu... (1 to %d)\n", MAX_SERVERS);
		return 2;
	}
	warmup = number(argv[1], 0, 3600, "WARMUP_S");
	seconds = number(argv[2], 1, 36000, "SECONDS");
	batch = (int)number(argv[3], 1, 1000000, "BATCH");
	n = argc - 4;
	for (i = 0; i < n; i++)
		open_server(&sv[i], argv[4 + i]);
	warm_end = now_ns() + (uint64_t)warmup * 1000000000ULL;
	end = warm_end + (uint64_t)seconds * 1000000000ULL;
	for (round = 0; (t = now_ns()) < end; round++) {
		for (k = 0; k < n; k++)
			run_batch(&sv[(round + k) % n], batch);
		if (t < warm_end)
			continue;
		printf("round %ld %llu %llu", round, (unsigned long long)t,
		       (unsigned long long)now_ns());
		for (i = 0; i < n; i++)
			printf(" %.1f", (double)sv[i].wall / gets_a_batch(&sv[i], batch));
		for (i = 0; i < n; i++)
			printf(" %.1f", (double)sv[i].cpu / gets_a_batch(&sv[i], batch));
		for (i = 0; i < n; i++)
			printf(" %.1f", (double)sv[i].client_cpu / gets_a_batch(&sv[i], batch));
		printf("\n");
	}
	return fflush(stdout) ? 1 : 0;
}
