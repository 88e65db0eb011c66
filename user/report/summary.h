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
	double cpu_ms, runq_ms, blocked_ms, io_ms;	/* blocked_ms includes io_ms */
	size_t files;			/* external_log's length */
	bool over_limit;		/* log_over_limit */
};

struct jw_summary;

struct jw_summary *jw_summary__new(void);	/* NULL on ENOMEM */
void jw_summary__free(struct jw_summary *s);	/* NULL-safe */

/*
 * Counts @e in its group; @id (may be NULL) gets the group's id, which jw_summary__rank() turns
 * into its place in the order. 0 or -ENOMEM.
 */
int jw_summary__add(struct jw_summary *s, const struct jw_summary_event *e, size_t *id);

/* Counts a line that was not an event (damaged, cut short). */
void jw_summary__bad_line(struct jw_summary *s);

/* The whole range's figures. */
struct jw_summary_totals {
	uint64_t janks, hangs, groups, written, withheld, bad_lines;
	uint64_t first_ms, last_ms;	/* the earliest and latest begin_time; 0: no event */
};

void jw_summary__totals(const struct jw_summary *s, struct jw_summary_totals *t);

/* One group's figures, as the text and JSON give them; the strings live as long as @s. */
struct jw_summary_group {
	const char *process;
	const char *key;		/* the group key, or the handler when by_handler */
	bool by_handler;
	const char *handler;		/* the handler seen most often; NULL: none */
	const char *heaviest_stack;	/* the heaviest stack seen most often; NULL: none */
	size_t janks;
	uint64_t hangs;
	double p50_ms, p95_ms, max_ms, total_ms;	/* nearest rank, of the janks */
	uint64_t cause[4];		/* janks by cause: cpu, runqueue, blocked, io */
	double split_ms[4];		/* their time: on CPU, runnable, asleep (not in I/O), in I/O */
	uint64_t written, withheld;	/* events with files; without, whatever the reason */
	const uint32_t *pids;		/* the first 8 seen */
	size_t n_pids;
	bool more_pids;
	uint64_t first_ms, last_ms;
};

/* The number of groups; orders them (largest total time first) as the writers do. */
size_t jw_summary__groups(struct jw_summary *s);

/* Group number @rank (0: the largest) of that order into @g. */
void jw_summary__group(struct jw_summary *s, size_t rank, struct jw_summary_group *g);

/* The rank of the group whose id jw_summary__add() gave. */
size_t jw_summary__rank(struct jw_summary *s, size_t id);

/* Writes the @top largest groups (0: all) as text. 0 or -errno of the write. */
int jw_summary__write_text(struct jw_summary *s, const char *dir, size_t top, FILE *f);

/* The same as one JSON object (with a newline). */
void jw_summary__write_json(struct jw_summary *s, const char *dir, size_t top, struct jw_buf *b);

#endif
