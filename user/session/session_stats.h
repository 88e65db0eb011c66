/* SPDX-License-Identifier: GPL-2.0-only */
/* The statistics: `jankwatch stats` served, stats.csv written. */
#ifndef JW_SESSION_STATS_H
#define JW_SESSION_STATS_H

#include "report/report_stats.h"
#include "session/state.h"

/* Listens for `jankwatch stats`, and says which targets another jankwatch watches too. */
void session_stats_start(struct session *s);

/* Answers the `jankwatch stats` clients waiting. */
void session_stats_serve(struct session *s);

/* Names the statistics rows of @pid while it is still watched: it is about to be forgotten. */
void session_stats_keep_names(struct session *s, pid_t pid);

/* Calls @fn with every statistics row, named (its process too) and merged, OVERFLOW last. */
void session_stats_each(struct session *s, void (*fn)(void *ctx, const struct jw_stats_row *r),
			void *ctx);

/* What the run counted: as it is now, or as it was read at its end once frozen. */
void session_tally(const struct session *s, struct session_tally *t);

/*
 * The run's end, before anything is written at exit: what the programs sent is reported, then
 * the kernel's counts and statistics rows are read once. The summary, stats.csv and the metrics
 * all come from that one read.
 */
void session_stats_freeze(struct session *s);

/* Stops listening and writes the statistics into the log directory (stats.csv). */
void session_stats_finish(struct session *s);

#endif
