// SPDX-License-Identifier: GPL-2.0-only
/*
 * The statistics socket: a running jankwatch answers `jankwatch stats` on a unix socket, so that
 * the instance that knows the processes (their symbols, even after they exit) names the rows.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/log.h"
#include "base/places.h"
#include "config/cli.h"
#include "report/report_stats.h"
#include "session/statsock.h"

#define SERVER_TIMEOUT_S 2	/* a client that does not send or read its answer is let go */
#define CLIENT_TIMEOUT_S 10	/* an instance that does not answer is passed over */

static const char *const cmd_names[] = { "dump", "reset", "hist", "targets", "lost", "hooks" };

const char *jw_statsock_dir(void)
{
	static char dir[PATH_MAX];
	const char *env = getenv("JANKWATCH_RUN_DIR");

	if (env && *env)
		return env;
	if (!dir[0])
		jw_place_default(JW_PLACE_RUN, NULL, dir, sizeof(dir));
	return dir;
}

static int sock_addr(const char *dir, pid_t pid, struct sockaddr_un *sa)
{
	int n;

	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	n = snprintf(sa->sun_path, sizeof(sa->sun_path), "%s/%d.sock", dir, (int)pid);
	return n > 0 && (size_t)n < sizeof(sa->sun_path) ? 0 : -ENAMETOOLONG;
}

static void set_timeouts(int fd, int seconds)
{
	struct timeval tv = { .tv_sec = seconds };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

int jw_statsock_listen(char *path, size_t len, char *err, size_t errlen)
{
	const char *dir = jw_statsock_dir();
	struct sockaddr_un sa;
	struct stat st;
	int fd, ret;

	if (mkdir(dir, 0700) && errno != EEXIST) {
		ret = -errno;
		jw_set_err(err, errlen, "cannot create %s: %s", dir, strerror(errno));
		return ret;
	}
	/*
	 * Whoever can write there could answer for us: it must be root's, or this user's (the
	 * service's own, RuntimeDirectory=), and no one else may write it.
	 */
	if (lstat(dir, &st) || !S_ISDIR(st.st_mode) ||
	    (st.st_uid != 0 && st.st_uid != geteuid()) || (st.st_mode & 0022)) {
		jw_set_err(err, errlen, "%s is not a directory that only root%s can write", dir,
			   geteuid() ? " or this user" : "");
		return -EPERM;
	}
	ret = sock_addr(dir, getpid(), &sa);
	if (ret) {
		jw_set_err(err, errlen, "%s: path too long for a socket", dir);
		return ret;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		ret = -errno;
		jw_set_err(err, errlen, "cannot make the stats socket: %s", strerror(errno));
		return ret;
	}
	/* A socket of this pid is left by a killed instance that had it before. */
	unlink(sa.sun_path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || chmod(sa.sun_path, 0600) ||
	    listen(fd, 8)) {
		ret = -errno;
		jw_set_err(err, errlen, "cannot listen on %s: %s", sa.sun_path, strerror(errno));
		close(fd);
		unlink(sa.sun_path);
		return ret;
	}
	snprintf(path, len, "%s", sa.sun_path);
	return fd;
}

int jw_stats_req_parse(const char *line, struct jw_stats_req *req)
{
	char cmd[16], extra;
	int pid = 0, n;
	size_t i;

	n = sscanf(line, "%15s %d %c", cmd, &pid, &extra);
	if (n < 1 || n > 2 || pid < 0)
		return -EINVAL;
	for (i = 0; i < sizeof(cmd_names) / sizeof(cmd_names[0]); i++) {
		if (!strcmp(cmd, cmd_names[i])) {
			req->cmd = (enum jw_stats_cmd)i;
			req->pid = pid;
			return 0;
		}
	}
	return -EINVAL;
}

int jw_statsock_accept(int lfd, struct jw_stats_req *req)
{
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	char line[128];
	size_t got = 0;
	int fd, ret;

	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	set_timeouts(fd, SERVER_TIMEOUT_S);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) || cred.uid != 0) {
		dprintf(fd, "error: only root may read the statistics\n");
		close(fd);
		return -EACCES;
	}
	while (got < sizeof(line) - 1 && !memchr(line, '\n', got)) {
		ssize_t n = recv(fd, line + got, sizeof(line) - 1 - got, 0);

		if (n <= 0)
			break;
		got += n;
	}
	line[got] = 0;
	ret = jw_stats_req_parse(line, req);
	if (ret) {
		dprintf(fd, "error: bad request\n");
		close(fd);
		return ret;
	}
	return fd;
}

/* The pid a socket's file name gives ("123.sock"), or 0. */
static pid_t sock_pid(const char *name)
{
	char *end;
	long pid;

	if (name[0] < '1' || name[0] > '9')
		return 0;
	pid = strtol(name, &end, 10);
	return strcmp(end, ".sock") || pid <= 0 || pid > INT_MAX ? 0 : (pid_t)pid;
}

/*
 * What asking another jankwatch meets: said on stderr by `jankwatch stats` (@client); logged at
 * @level by a monitor, for which it is housekeeping.
 */
static void __attribute__((format(printf, 3, 4)))
say(bool client, enum jw_log_level level, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (client)
		fprintf(stderr, "jankwatch stats: %s\n", msg);
	else
		jw_log(level, "%s", msg);
}

/*
 * Sends @request to the jankwatch of pid @pid and returns its whole answer (malloc'd,
 * NUL-terminated), or NULL after saying why (see say()); a refusal of an @optional request
 * (one an older jankwatch does not know) is not said. A socket whose owner is gone is removed.
 */
static char *ask(const char *dir, pid_t pid, const char *request, bool client, bool optional)
{
	struct sockaddr_un sa;
	size_t len = 0, cap = 0;
	char *out = NULL;
	int fd;

	if (sock_addr(dir, pid, &sa))
		return NULL;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return NULL;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		int err = errno;

		close(fd);
		/* Refused: nothing listens there, the instance that made it was killed. */
		if (err == ECONNREFUSED) {
			if (!unlink(sa.sun_path))
				say(client, JW_LOG_INFO, "removed %s, left by jankwatch pid %d "
				    "which no longer runs", sa.sun_path, (int)pid);
		} else if (err != ENOENT) {
			say(client, JW_LOG_WARN, "cannot reach jankwatch pid %d: %s", (int)pid,
			    strerror(err));
		}
		return NULL;
	}
	set_timeouts(fd, CLIENT_TIMEOUT_S);
	if (send(fd, request, strlen(request), MSG_NOSIGNAL) < 0) {
		say(client, JW_LOG_WARN, "jankwatch pid %d: %s", (int)pid, strerror(errno));
		close(fd);
		return NULL;
	}
	for (;;) {
		ssize_t n;

		if (cap - len < 4096) {
			char *bigger = realloc(out, cap ? cap * 2 : 65536);

			if (!bigger) {
				free(out);
				close(fd);
				return NULL;
			}
			out = bigger;
			cap = cap ? cap * 2 : 65536;
		}
		n = recv(fd, out + len, cap - len - 1, 0);
		if (n < 0) {
			say(client, JW_LOG_WARN, "jankwatch pid %d did not answer: %s", (int)pid,
			    errno == EAGAIN ? "timed out" : strerror(errno));
			free(out);
			close(fd);
			return NULL;
		}
		if (n == 0)
			break;
		len += n;
	}
	close(fd);
	out[len] = 0;
	if (!strncmp(out, "error: ", 7)) {
		if (!optional)
			say(client, JW_LOG_WARN, "jankwatch pid %d: %.*s", (int)pid,
			    (int)strcspn(out + 7, "\n"), out + 7);
		free(out);
		return NULL;
	}
	return out;
}

/*
 * Sends @request to every running jankwatch but this process (ask()); @fn(its pid, answer) for
 * each that answered. Returns how many did, or -ENOENT when none runs.
 */
static int ask_all(const char *request, void (*fn)(pid_t, const char *, void *), void *ctx,
		   bool client, bool optional)
{
	const char *dir = jw_statsock_dir();
	struct dirent *de;
	int answered = 0;
	DIR *d = opendir(dir);

	if (!d)
		return -ENOENT;
	while ((de = readdir(d))) {
		pid_t pid = sock_pid(de->d_name);
		char *answer;

		if (!pid || pid == getpid())
			continue;
		answer = ask(dir, pid, request, client, optional);
		if (!answer)
			continue;
		fn(pid, answer, ctx);
		free(answer);
		answered++;
	}
	closedir(d);
	return answered ? answered : -ENOENT;
}

struct target_walk {
	void (*fn)(pid_t jankwatch, pid_t target, void *ctx);
	void *ctx;
};

static void on_targets(pid_t pid, const char *answer, void *ctx)
{
	struct target_walk *w = ctx;
	const char *p;

	for (p = answer; *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p)) {
		int target = atoi(p);

		if (target > 0)
			w->fn(pid, target, w->ctx);
	}
}

static int each_target(void (*fn)(pid_t jankwatch, pid_t target, void *ctx), void *ctx,
		       bool client)
{
	struct target_walk w = { fn, ctx };
	int ret = ask_all("targets\n", on_targets, &w, client, false);

	return ret < 0 ? 0 : ret;
}

int jw_statsock_each_target(void (*fn)(pid_t jankwatch, pid_t target, void *ctx), void *ctx)
{
	return each_target(fn, ctx, false);
}

struct wanted {
	pid_t pid;
	bool found;
};

static void on_target(pid_t jankwatch, pid_t target, void *ctx)
{
	struct wanted *w = ctx;

	(void)jankwatch;
	w->found |= target == w->pid;
}

/* Whether some running jankwatch watches @pid (its rows may just be empty). */
static bool watched_by_any(pid_t pid)
{
	struct wanted w = { .pid = pid };

	each_target(on_target, &w, true);
	return w.found;
}

struct dump {
	bool csv;	/* the header is due before the first answer */
	size_t rows;
};

static void on_dump(pid_t pid, const char *answer, void *ctx)
{
	struct dump *d = ctx;
	const char *p;

	(void)pid;
	if (d->csv) {
		jw_stats_csv_header(stdout);
		d->csv = false;
	}
	fputs(answer, stdout);
	for (p = answer; (p = strchr(p, '\n')); p++)
		d->rows++;
}

/*
 * An instance's losses, and how it hooks what it watches, one line each, said on stderr: the
 * rows above may lack them.
 */
static void on_said(pid_t pid, const char *answer, void *ctx)
{
	const char *line, *end;

	(void)ctx;
	for (line = answer; *line; line = end + 1) {
		end = strchr(line, '\n');
		if (!end)
			end = line + strlen(line);
		fprintf(stderr, "jankwatch stats: jankwatch %d: %.*s\n", (int)pid, (int)(end - line),
			line);
		if (!*end)
			break;
	}
}

int jw_stats_main(int argc, char **argv)
{
	struct jw_stats_req req = { .cmd = JW_STATS_DUMP };
	struct dump d = { 0 };
	struct option opts[8];
	char request[64], shorts[16];
	int c, ret;

	if (jw_cli_getopt(jw_cli_cmd("stats"), ":", opts, 8, shorts, sizeof(shorts)))
		return 2;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, shorts, opts, NULL)) != -1) {
		char *end;
		long pid;

		switch (c) {
		case 'r':
			req.cmd = JW_STATS_RESET;
			break;
		case 'H':
			req.cmd = JW_STATS_HIST;
			break;
		case 'h':
			jw_cli_help(jw_cli_cmd("stats"), stdout);
			return 0;
		case 'p':
			errno = 0;
			pid = strtol(optarg, &end, 10);
			if (!*optarg || *end || errno || pid <= 0 || pid > INT_MAX) {
				fprintf(stderr, "jankwatch stats: -p needs a process id, not '%s'\n",
					optarg);
				return 2;
			}
			req.pid = (pid_t)pid;
			break;
		case ':':
			fprintf(stderr, "jankwatch stats: %s needs a value (--help for usage)\n",
				argv[optind - 1]);
			return 2;
		default:
			fprintf(stderr, "jankwatch stats: unknown argument '%s' (--help for usage)\n",
				argv[optind - 1]);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "jankwatch stats: unknown argument '%s' (--help for usage)\n",
			argv[optind]);
		return 2;
	}
	if (geteuid() != 0) {
		fprintf(stderr, "jankwatch stats: must run as root (only root reaches %s)\n",
			jw_statsock_dir());
		return 1;
	}
	snprintf(request, sizeof(request), "%s %d\n", cmd_names[req.cmd], (int)req.pid);
	d.csv = req.cmd != JW_STATS_HIST;
	ret = ask_all(request, on_dump, &d, true, false);
	fflush(stdout);
	if (ret < 0) {
		fprintf(stderr, "jankwatch stats: no jankwatch is running (none answers in %s)\n",
			jw_statsock_dir());
		return 1;
	}
	/* Newer than the rest: an older jankwatch refuses it, and has nothing more to say. */
	ask_all("lost 0\n", on_said, NULL, true, true);
	ask_all("hooks 0\n", on_said, NULL, true, true);
	if (req.pid && !d.rows && !watched_by_any(req.pid)) {
		fprintf(stderr, "jankwatch stats: no running jankwatch watches pid %d\n",
			(int)req.pid);
		return 1;
	}
	return 0;
}
