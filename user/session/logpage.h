/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * `jankwatch report LOGDIR --html FILE`: what the page needs from a log directory, gathered as
 * the events are read (their times, causes, groups, files), then the groups' stack logs merged
 * into their flame graphs and stats.csv read; the page written whole, or not at all.
 */
#ifndef JW_LOGPAGE_H
#define JW_LOGPAGE_H

#include <stddef.h>

#include "report/summary.h"

struct jw_logpage;

/* For log directory @dir (its path as given). NULL on ENOMEM. */
struct jw_logpage *jw_logpage__new(const char *dir);
void jw_logpage__free(struct jw_logpage *lp);	/* NULL-safe */

/*
 * Keeps @e, which the summary counted in its group @id, with the files its event lists
 * (@files: @n_files strings one after the other, each NUL-terminated). 0 or -ENOMEM.
 */
int jw_logpage__add(struct jw_logpage *lp, const struct jw_summary_event *e, size_t id,
		    const char *files, size_t n_files);

/*
 * Writes the page of @sum's @top groups (0: all) to @path: the timeline, each group's flame
 * graph merged from its stack logs in the directory, stats.csv's rows (of process @pid only,
 * unless 0); @range says what the options kept (NULL: all). 0, or -errno said on stderr.
 */
int jw_logpage__write(struct jw_logpage *lp, struct jw_summary *sum, size_t top, long pid,
		      const char *range, const char *path);

#endif
