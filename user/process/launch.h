/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * `jankwatch -- CMD`: the program is forked and held before exec until jankwatch has attached
 * to it, so it is watched from its first instruction; it runs as --user USER when given, with
 * that user's groups only.
 */
#ifndef JW_LAUNCH_H
#define JW_LAUNCH_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct jw_child {
	pid_t pid;
	int go_fd;	/* written (or closed) to let the child exec */
	int err_fd;	/* the child's errno if its exec fails; EOF when it succeeded */
	char exe[PATH_MAX];	/* the program's path, as exec will find it */
	char output[PATH_MAX];	/* where its stdout and stderr go ("": jankwatch's own) */
	bool reaped;
};

/*
 * Finds @argv[0] (PATH is searched when it has no '/'), resolves @user (a name or a uid; NULL:
 * stay root), and forks a child that waits for jw_child_release(). With @output, the program's
 * stdout and stderr go to that file (created or emptied when it is released, before it becomes
 * @user) and its stdin is /dev/null: a terminal it must not draw on. Returns 0, or -errno with
 * a one-line message in @err.
 */
int jw_child_spawn(char *const *argv, const char *user, const char *output, struct jw_child *c,
		   char *err, size_t errlen);

/* Lets the child exec. Returns 0 once it has, or -errno of the failed exec (message in @err). */
int jw_child_release(struct jw_child *c, char *err, size_t errlen);

/* Kills and reaps a child that was never released (setup failed). NULL-safe, idempotent. */
void jw_child_abort(struct jw_child *c);

/*
 * Reaps the child if it has exited, without blocking (or waiting up to @wait_ms). Returns true
 * with its status as a shell gives it (the exit code, or 128 + the signal) in @status.
 */
bool jw_child_exited(struct jw_child *c, int wait_ms, int *status);

/*
 * Ends a released child that still runs: SIGTERM, up to @grace_ms for it to exit, then SIGKILL,
 * and reaps it. Returns the signal that ended it (0: it had exited; -1: not reaped, as when it
 * is stuck in the kernel), its status in @status when reaped.
 */
int jw_child_end(struct jw_child *c, int grace_ms, int *status);

#endif
