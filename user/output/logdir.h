/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The log directory: files created through its fd without following links (0640), written
 * under a temporary name and renamed whole, a byte quota, and events.jsonl.
 */
#ifndef JW_LOGDIR_H
#define JW_LOGDIR_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

/* The report budgets the policy spent (jw_policy__save()), kept across restarts. */
#define JW_LOGDIR_BUDGETS "budgets"

/* A NULL directory (one that could not be opened) writes nothing, as over its quota. */
struct jw_logdir;

/* A report file being written. */
struct jw_logfile {
	FILE *f;
	char tmp[NAME_MAX + 1];
	char name[NAME_MAX + 1];
};

/*
 * Creates @path (and its parents, 0750) when missing and opens it. Counts the bytes of the
 * report files already in it (stack-*, trace-*, profile-*) against @quota_bytes. NULL with
 * errno set and a one-line message in @err.
 */
struct jw_logdir *jw_logdir__open(const char *path, uint64_t quota_bytes, char *err,
				  size_t errlen);
void jw_logdir__free(struct jw_logdir *d);	/* NULL-safe */

const char *jw_logdir__path(const struct jw_logdir *d);

/* A new quota (a reload): over it at once if the reports already pass it. */
void jw_logdir__set_quota(struct jw_logdir *d, uint64_t quota_bytes);

/* Whether the quota was reached: nothing more is written. */
bool jw_logdir__over_quota(const struct jw_logdir *d);

/* Starts file @name under a temporary name. 0 or -errno. */
int jw_logdir__create(struct jw_logdir *d, const char *name, struct jw_logfile *lf);

/*
 * Closes @lf and gives it its final name (with a "-N" suffix if taken), written into @path as
 * "<dir>/<name>". Returns 0; -EDQUOT when it would pass the quota (the file is removed and the
 * quota marked reached); -errno on a write error (the file is removed).
 */
int jw_logdir__commit(struct jw_logdir *d, struct jw_logfile *lf, char *path, size_t len);

/* Removes an unfinished file. */
void jw_logdir__abort(struct jw_logdir *d, struct jw_logfile *lf);

/*
 * Appends one event line to events.jsonl, which the quota does not count; past 1 MiB it is
 * renamed events.jsonl.1 (the older ones each one number up, the one past events_keep dropped)
 * and a new one begun. 0 or -errno.
 */
int jw_logdir__append_event(struct jw_logdir *d, const char *line, size_t len);

/* How many rotated events files are kept, 1..JW_EVENTS_KEEP_MAX (params.h; 1 until set). */
void jw_logdir__set_events_keep(struct jw_logdir *d, unsigned int keep);

/*
 * Removes jankwatch's report files (stack-*, trace-*, profile-*) last written more than
 * @max_age_s before @now, and nothing else; the space they held counts free again. Returns
 * how many, or -errno.
 */
int jw_logdir__remove_older(struct jw_logdir *d, uint64_t max_age_s, time_t now);

/*
 * Replaces file @name (not a report: the quota does not count it) with @len bytes of @data,
 * written under a temporary name and renamed over it. 0 or -errno.
 */
int jw_logdir__replace(struct jw_logdir *d, const char *name, const char *data, size_t len);

/* Reads at most @len bytes of regular file @name, never through a link. Bytes, or -errno. */
ssize_t jw_logdir__read(struct jw_logdir *d, const char *name, char *buf, size_t len);

#endif
