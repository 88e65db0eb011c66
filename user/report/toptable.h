/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * jankwatch top's table: the statistics rows of a run (report_stats.h) by their share of the
 * loop thread's time, with their rate, mean, p99 and max, CPU, delay and janks, and the last
 * janks under them. Pure: rows and janks in, text out.
 */
#ifndef JW_TOPTABLE_H
#define JW_TOPTABLE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "report/report_stats.h"

struct jw_top;

/* A jank (or hang) as the table lists it and counts it against its row. */
struct jw_top_jank {
	uint64_t end_ms;		/* when it ended, ms since the epoch */
	uint32_t pid;
	const char *handler_class;	/* NULL: none */
	const char *handler;
	double wall_ms;
	const char *cause;
	bool hang;
};

/* How the table is drawn. */
struct jw_top_view {
	uint64_t elapsed_ns;	/* since the rows began */
	int width, height;	/* the screen's; 0: unbounded (printed once, every row) */
	const char *title;	/* its first line's start: "jankwatch top: 1 process" */
};

struct jw_top *jw_top__new(void);
void jw_top__free(struct jw_top *t);

/* Forgets the rows of the last frame (the janks are kept). */
void jw_top__clear(struct jw_top *t);

/* Adds statistics row @r (copied) to this frame. 0 or -ENOMEM. */
int jw_top__row(struct jw_top *t, const struct jw_stats_row *r);

/* Counts jank @j against its row, and keeps it among the last ones. 0 or -ENOMEM. */
int jw_top__jank(struct jw_top *t, const struct jw_top_jank *j);

/*
 * The p99 of row value @v's recorded wall times, in ms, from its log2 histogram: the upper bound
 * of the slot the 99th percentile falls in, at most the row's max. 0 with nothing recorded.
 */
double jw_top_p99_ms(const struct jw_stats_val *v);

/* Draws the frame into @f: a title line, the header, the rows by share, the last janks. */
void jw_top__render(struct jw_top *t, FILE *f, const struct jw_top_view *view);

#endif
