/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A jank event as a journal entry: a fixed MESSAGE_ID per kind, its PRIORITY, a MESSAGE for
 * people, a small fixed set of JANKWATCH_* fields equal to the line's, the line itself, and
 * OBJECT_PID, by which journald adds the watched process's own unit, command and executable.
 */
#ifndef JW_REPORT_JOURNAL_H
#define JW_REPORT_JOURNAL_H

#include <stddef.h>

#include "output/journal.h"
#include "report/report_event.h"

/* journalctl MESSAGE_ID=... finds every jank, or every hang, of every jankwatch. */
#define JW_JOURNAL_ID_JANK "bb3435124ce041ce9bc73d84c2ccbf9c"
#define JW_JOURNAL_ID_HANG "4948db0f47a24052a5f489d600e3f243"

#define JW_JOURNAL_FIELDS 20

/* The text of the fields that are not the event's own strings. */
struct jw_journal_text {
	char message[512];
	char pid[16], tid[16], priority[4];
	char wall_ms[32], begin_time[24], samples[16];
};

/*
 * Fills @f (room for JW_JOURNAL_FIELDS) with the entry of event @e written as @line (@len bytes;
 * a trailing newline is left out); the fields point into @e, @line and @t. Returns how many.
 */
size_t jw_event_journal_fields(const struct jw_event *e, const char *line, size_t len,
			       struct jw_journal_field *f, struct jw_journal_text *t);

#endif
