/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * How `jankwatch stats` reaches a running jankwatch: each instance listens on a unix socket
 * <dir>/<its pid>.sock in a root-only directory (JANKWATCH_RUN_DIR, else /run/jankwatch, or
 * where there is no /run to write in, the next of base/places.h's), and
 * answers one request a connection: a line "<command>[ <target pid>]", where command is dump,
 * reset (dump, then empty), hist, targets, lost or hooks. The answer is text; the connection's end ends
 * it.
 */
#ifndef JW_STATSOCK_H
#define JW_STATSOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

enum jw_stats_cmd {
	JW_STATS_DUMP = 0,
	JW_STATS_RESET,
	JW_STATS_HIST,
	JW_STATS_TARGETS,
	JW_STATS_LOST,		/* what it lost so far, in the lines its summary would say it */
	JW_STATS_HOOKS,		/* how it hooks what it watches, where that changes as it runs */
};

struct jw_stats_req {
	enum jw_stats_cmd cmd;
	pid_t pid;		/* only this target's rows; 0: every target's */
};

/* The sockets' directory. */
const char *jw_statsock_dir(void);

/*
 * Creates the directory if missing (0700; refused when it is not a root-owned directory) and
 * listens on <dir>/<getpid()>.sock, non-blocking. Returns the fd with the path in @path, or
 * -errno with a one-line message in @err.
 */
int jw_statsock_listen(char *path, size_t len, char *err, size_t errlen);

/*
 * Accepts one waiting client of @lfd and reads its request, refusing one that is not root.
 * Returns the connection (blocking, with send and receive timeouts) for the answer, -EAGAIN
 * when no client waits, or another -errno when the client was turned away.
 */
int jw_statsock_accept(int lfd, struct jw_stats_req *req);

/* Parses request line @line. 0 or -EINVAL. */
int jw_stats_req_parse(const char *line, struct jw_stats_req *req);

/*
 * Asks every other running jankwatch for its targets: @fn(its pid, a target pid) for each.
 * Sockets left by instances that are gone are removed (logged at the info level). Returns how
 * many answered.
 */
int jw_statsock_each_target(void (*fn)(pid_t jankwatch, pid_t target, void *ctx), void *ctx);

/* `jankwatch stats [--reset] [--hist] [-p PID]`: argv[0] is "stats". Exit status. */
int jw_stats_main(int argc, char **argv);

#endif
