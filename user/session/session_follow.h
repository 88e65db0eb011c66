/* SPDX-License-Identifier: GPL-2.0-only */
/* The processes followed: forks, execs, exits, and when each is watched. */
#ifndef JW_SESSION_FOLLOW_H
#define JW_SESSION_FOLLOW_H

#include <stdint.h>

#include "session/state.h"

/*
 * Follows process @pid, watched already or to be watched once it runs a loop (@why): its execs,
 * its exit and (@flags, enum jw_follow_flags) its children. 0 or -errno.
 */
int session_follow(struct session *s, pid_t pid, uint32_t flags, enum jw_pwhy why);

/* Process @pid is followed no longer: its hooks, if watched, and its entry go (@exited: counted). */
void session_forget(struct session *s, pid_t pid, bool exited);

/*
 * Watched process @pid runs another program than the one it was read as (an exec seen by no
 * record: it came before the process was followed): it is watched again once it runs a loop.
 */
void session_check_exec(struct session *s, pid_t pid);

/* A FORK, EXEC, EXIT or RENAME record. */
void session_on_proc(struct session *s, const struct jw_proc_rec *r);

/*
 * Looks at the followed processes due for it: watches those that run a loop now. Returns when
 * the next is due (CLOCK_MONOTONIC ns; UINT64_MAX: none).
 */
uint64_t session_look(struct session *s, uint64_t now);

/* Forgets followed processes that are gone without a word from the kernel (a record lost). */
void session_follow_prune(struct session *s);

/* The summary's line of the processes that came and went. */
void session_follow_summary(struct session *s);

/* --exe: checks the files before anything is attached. 0 or -errno. */
int session_resolve_exes(struct session *s);

/*
 * --exe and --name: hooks the files' execs and the names' renames, and follows the processes that
 * run the files or have the names already, each watched once it runs a loop (nginx's master,
 * which runs none, is followed for its workers). 0 or -errno.
 */
int session_watch_found(struct session *s);


/*
 * The processes that run an --exe file or have a --name name now, as the watch's start finds
 * them (--dry-run's): into @out, at most @max. Returns how many.
 */
size_t session_found_now(const struct session *s, pid_t *out, size_t max);

#endif
