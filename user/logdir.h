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

struct jw_logdir;

/* A report file being written. */
struct jw_logfile {
	FILE *f;
	char tmp[NAME_MAX + 1];
	char name[NAME_MAX + 1];
};

/*
 * Creates @path (and its parents, 0750) when missing and opens it. Counts the bytes already in
 * it against @quota_bytes. NULL with errno set and a one-line message in @err.
 */
struct jw_logdir *jw_logdir__open(const char *path, uint64_t quota_bytes, char *err,
				  size_t errlen);
void jw_logdir__free(struct jw_logdir *d);	/* NULL-safe */

const char *jw_logdir__path(const struct jw_logdir *d);

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

/* Appends one event line to events.jsonl. 0, -EDQUOT over the quota, or -errno. */
int jw_logdir__append_event(struct jw_logdir *d, const char *line, size_t len);

#endif
