/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * `jankwatch report`'s arithmetic: jank events in, their groups out (a process's janks with the
 * same group key, or handler when they have none), ranked by the time they took: count,
 * p50/p95/max wall time, the cause split, the usual handler and heaviest stack, and what the
 * budgets, the back-off and the quota withheld. Text for people, JSON for machines.
 */
#ifndef JW_SUMMARY_H
#define JW_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/jsonbuf.h"

/* One event as the summary needs it; strings may be NULL, and are copied. */
struct jw_summary_event {
	bool hang;			/* MAIN_THREAD_HANG (a jank still running) */
	uint64_t begin_ms;		/* the task's start, ms since the epoch */
	uint32_t pid;
	const char *process;		/* bundle_name */
	const char *handler;
	const char *group;
	const char *heaviest_stack;
	const char *cause;		/* "cpu", "runqueue", "blocked", "io" */
	const char *withheld;		/* "back_off", "budget", "quota", "trace_window"; NULL */
	double wall_ms;
	size_t files;			/* external_log's length */
	bool over_limit;		/* log_over_limit */
};

struct jw_summary;

struct jw_summary *jw_summary__new(void);	/* NULL on ENOMEM */
void jw_summary__free(struct jw_summary *s);	/* NULL-safe */

/* Counts @e in its group. 0 or -ENOMEM. */
int jw_summary__add(struct jw_summary *s, const struct jw_summary_event *e);

/* Counts a line that was not an event (damaged, cut short). */
void jw_summary__bad_line(struct jw_summary *s);

/* Writes the @top largest groups (0: all) as text. 0 or -errno of the write. */
int jw_summary__write_text(struct jw_summary *s, const char *dir, size_t top, FILE *f);

/* The same as one JSON object (with a newline). */
void jw_summary__write_json(struct jw_summary *s, const char *dir, size_t top, struct jw_buf *b);

#endif
