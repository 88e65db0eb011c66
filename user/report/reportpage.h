/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * `jankwatch report LOGDIR --html FILE`: one self-contained HTML page of a log directory. A
 * timeline of its janks and hangs (a lane per process, coloured by cause), the groups as the
 * summary ranks them (each with its figures, its cause split as a bar, its merged flame graph and
 * the files it came from), and the statistics table (stats.csv), sortable. A pure writer over
 * the data the caller gathered; nothing is fetched from elsewhere (no style, script or font).
 */
#ifndef JW_REPORTPAGE_H
#define JW_REPORTPAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "report/flamegraph.h"
#include "report/summary.h"

/* The bounds that keep the page usable at any size of log directory. */
#define JW_PAGE_EVENTS_MAX 10000	/* events drawn on the timeline (the longest) */
#define JW_PAGE_LANES_MAX 48		/* processes with a lane of their own */
#define JW_PAGE_BOXES_MAX 1000		/* boxes of one flame graph (the widest) */
#define JW_PAGE_GRAPHS_MAX 50		/* groups with a flame graph (the first) */
#define JW_PAGE_BOX_PERMILLE 1		/* boxes under 1/1000 of a graph are left out */
#define JW_PAGE_FILES_MAX 20		/* files named per group */
#define JW_PAGE_STATS_ROWS_MAX 2000	/* rows of the statistics table */

enum jw_page_cause { JW_CAUSE_CPU, JW_CAUSE_RUNQUEUE, JW_CAUSE_BLOCKED, JW_CAUSE_IO,
		     JW_CAUSE_UNKNOWN };

/* A lane of the timeline: one process (the last lane may hold all the rest: pid 0). */
struct jw_page_lane {
	const char *process;	/* bundle_name; "other processes" for the rest */
	uint32_t pid;
	size_t events;		/* its events in the range, drawn or not */
};

/* One event of the timeline. */
struct jw_page_event {
	uint64_t begin_ms;	/* ms since the epoch */
	double wall_ms;		/* a hang's: the time so far */
	unsigned int lane;
	enum jw_page_cause cause;
	bool hang;
	size_t rank;		/* its group's place in the summary's order */
};

/* One group, as the summary ranks it, with its flame graph. */
struct jw_page_group {
	struct jw_summary_group g;
	struct jw_flame flame;	/* merged from its stack logs; no nodes: none was read */
	size_t boxes_cut;	/* boxes left out of it (under the bounds) */
	size_t logs;		/* stack logs merged into it */
	size_t logs_unread;	/* listed by its events but missing, unreadable or damaged */
	const char *const *files;	/* the files its events list, base names (at most
					 * JW_PAGE_FILES_MAX) */
	size_t n_files, more_files;
};

/* stats.csv: its header and rows, every cell a string. */
struct jw_page_stats {
	const char *const *header;
	size_t cols;
	const char *const *cells;	/* rows * cols */
	size_t rows, rows_cut;
	const char *written;		/* when the file was written, local time */
};

struct jw_page {
	const char *dir;
	const char *range;		/* what --since, --until and -p kept, in words; NULL: all */
	const char *made;		/* when the page was made, local time */
	struct jw_summary_totals totals;
	const char *const *group_keys;	/* every group's "process: key" by rank (hovering an
					 * event says it) */
	size_t n_group_keys;
	const struct jw_page_lane *lanes;
	size_t n_lanes;
	const struct jw_page_event *events;	/* the ones drawn */
	size_t n_events, events_cut;	/* drawn; left out (shorter than all drawn) */
	const struct jw_page_group *groups;	/* the first n_groups by rank */
	size_t n_groups;
	const struct jw_page_stats *stats;	/* NULL: no stats.csv */
};

/* Writes @p as one HTML document to @f. 0 or -errno of the write. */
int jw_page_write(const struct jw_page *p, FILE *f);

/* The cause as the events say it ("cpu", "runqueue", "blocked", "io"; else unknown). */
enum jw_page_cause jw_page_cause(const char *s);

#endif
