/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The processes a session follows, by pid: watched, or waiting to be looked at until they run a
 * loop of their own (forked by a followed process, or exec'd a new program). A process is looked
 * at as soon as it appears, often while it is young, then less and less often; what came and
 * went is counted. Pure: the caller says what it saw and when.
 */
#ifndef JW_PROCTREE_H
#define JW_PROCTREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Why a process is followed and not watched (yet). */
enum jw_pwhy {
	JW_PWHY_FORKED,		/* a followed process forked it */
	JW_PWHY_EXECED,		/* it exec'd a new program: the old one's hooks are gone */
	JW_PWHY_FOUND,		/* it ran an --exe file when jankwatch started */
	JW_PWHY_FOLLOWED,	/* followed for its children only (nginx's master) */
	JW_PWHY_NAMED,		/* it took a --name name */
	JW_PWHY_NAME_FOUND,	/* it had a --name name when jankwatch started */
};

struct jw_pentry {
	pid_t pid;
	pid_t parent;		/* JW_PWHY_FORKED: who forked it */
	uint64_t start_boot_ns;	/* its start, CLOCK_BOOTTIME: a pid reused is another process */
	uint64_t since_ns;	/* followed, or pending, since (CLOCK_MONOTONIC) */
	uint64_t next_ns;	/* pending: when to look at it next */
	uint32_t looks;		/* pending: times it was looked at and ran no loop yet */
	uint32_t failures;	/* pending: times watching it failed */
	bool watched;
	bool counted;		/* it was ever watched (the summary's "watched") */
	bool by_name;		/* followed for a --name name: checked again before it is watched */
	enum jw_pwhy why;
};

struct jw_proctree_counts {
	uint64_t forked;	/* new processes seen */
	uint64_t execs;		/* execs seen */
	uint64_t named;		/* processes that took a --name name */
	uint64_t watched;	/* processes watched (a process exec'd and watched again: once more) */
	uint64_t exited;	/* followed processes that exited */
	uint64_t exited_unwatched;	/* of them, never watched: no loop of their own */
	uint64_t full;		/* not followed: the table was full */
};

struct jw_proctree;

/* A table for up to @cap processes. NULL with errno set. */
struct jw_proctree *jw_proctree__new(size_t cap);
void jw_proctree__free(struct jw_proctree *t);	/* NULL-safe */

/* The entry of process @pid, or NULL. Valid until the next add or remove. */
struct jw_pentry *jw_proctree__get(struct jw_proctree *t, pid_t pid);

/*
 * Follows process @pid (started at @start_boot_ns), pending since @now: to be looked at from the
 * next call to jw_proctree__due(). An entry already there is replaced (a pid reused). Returns
 * the entry, or NULL when the table is full (counted).
 */
struct jw_pentry *jw_proctree__add(struct jw_proctree *t, pid_t pid, uint64_t start_boot_ns,
				   enum jw_pwhy why, pid_t parent, uint64_t now);

/*
 * @e's process exec'd at @now: pending again, looked at from the next jw_proctree__due(). @e
 * NULL: an exec of a process forgotten already, only counted.
 */
void jw_proctree__exec(struct jw_proctree *t, struct jw_pentry *e, uint64_t now);

/*
 * @e's process took a --name name at @now: pending again, unless it is watched already (a process
 * parked for its children runs a loop of its own now, maybe). The caller sets by_name.
 */
void jw_proctree__named(struct jw_proctree *t, struct jw_pentry *e, uint64_t now);

/* @e was looked at @now and runs no loop yet (@failed: watching it failed): look later. */
void jw_proctree__later(struct jw_proctree *t, struct jw_pentry *e, bool failed, uint64_t now);

/* @e is watched from now on. */
void jw_proctree__watched(struct jw_proctree *t, struct jw_pentry *e);

/* @e is followed for its children only: looked at never again. */
void jw_proctree__parked(struct jw_proctree *t, struct jw_pentry *e);

/* Process @pid is gone: it exited (@exited, counted) or is no longer followed. */
void jw_proctree__remove(struct jw_proctree *t, pid_t pid, bool exited);

/*
 * Puts into @pids (at most @max) the pending processes due for a look at @now, and returns how
 * many. *@next_ns: the earliest look after those (UINT64_MAX: none).
 */
size_t jw_proctree__due(const struct jw_proctree *t, uint64_t now, pid_t *pids, size_t max,
			uint64_t *next_ns);

/* Processes followed now (watched or pending). */
size_t jw_proctree__size(const struct jw_proctree *t);

/* Calls @fn for every followed process. */
void jw_proctree__each(struct jw_proctree *t, void (*fn)(struct jw_pentry *e, void *ctx),
		       void *ctx);

const struct jw_proctree_counts *jw_proctree__counts(const struct jw_proctree *t);

/* The delay before the next look at a process pending for @age_ns (since its fork or exec). */
uint64_t jw_proctree_look_delay_ns(uint64_t age_ns);

#endif
