// SPDX-License-Identifier: GPL-2.0-only
/* A jank event as a journal entry. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "report/report_journal.h"

/* Adds field @name = @value (NUL-terminated; NULL: left out). */
static void add(struct jw_journal_field *f, size_t *n, const char *name, const char *value)
{
	if (!value || *n >= JW_JOURNAL_FIELDS)
		return;
	f[(*n)++] = (struct jw_journal_field){ .name = name, .value = value, .len = strlen(value) };
}

size_t jw_event_journal_fields(const struct jw_event *e, const char *line, size_t len,
			       struct jw_journal_field *f, struct jw_journal_text *t)
{
	bool hang = e->event && !strcmp(e->event, "MAIN_THREAD_HANG");
	size_t n = 0;

	snprintf(t->message, sizeof(t->message), "%s: pid %" PRIu32 " (%s) tid %" PRIu32
		 ": %s %s %.1f ms (%s)", hang ? "hang" : "jank", e->pid,
		 e->bundle_name ? e->bundle_name : "?", e->tid, e->handler ? e->handler : "?",
		 hang ? "running for" : "took", e->wall_ms, e->cause ? e->cause : "?");
	snprintf(t->priority, sizeof(t->priority), "%d", hang ? 3 : 4);	/* err : warning */
	snprintf(t->pid, sizeof(t->pid), "%" PRIu32, e->pid);
	snprintf(t->tid, sizeof(t->tid), "%" PRIu32, e->tid);
	/* As the line writes them: 3 decimals, ms since the epoch. */
	snprintf(t->wall_ms, sizeof(t->wall_ms), "%.3f", e->wall_ms);
	snprintf(t->begin_time, sizeof(t->begin_time), "%" PRIu64, e->begin_time_ms);
	snprintf(t->samples, sizeof(t->samples), "%" PRIu32, e->samples);
	add(f, &n, "MESSAGE", t->message);
	add(f, &n, "MESSAGE_ID", hang ? JW_JOURNAL_ID_HANG : JW_JOURNAL_ID_JANK);
	add(f, &n, "PRIORITY", t->priority);
	add(f, &n, "SYSLOG_IDENTIFIER", "jankwatch");
	/* The watched process, which journald describes with OBJECT_COMM, OBJECT_EXE, ... */
	add(f, &n, "OBJECT_PID", t->pid);
	add(f, &n, "JANKWATCH_EVENT", e->event);
	add(f, &n, "JANKWATCH_JANK_ID", e->jank_id);
	add(f, &n, "JANKWATCH_PID", t->pid);
	add(f, &n, "JANKWATCH_TID", t->tid);
	add(f, &n, "JANKWATCH_BUNDLE_NAME", e->bundle_name);
	add(f, &n, "JANKWATCH_HANDLER", e->handler);
	add(f, &n, "JANKWATCH_HANDLER_CLASS", e->handler_class);
	add(f, &n, "JANKWATCH_CAUSE", e->cause);
	add(f, &n, "JANKWATCH_GROUP", e->group);
	add(f, &n, "JANKWATCH_WALL_MS", t->wall_ms);
	add(f, &n, "JANKWATCH_BEGIN_TIME", t->begin_time);
	add(f, &n, "JANKWATCH_SAMPLES", t->samples);
	if (line && n < JW_JOURNAL_FIELDS) {
		if (len && line[len - 1] == '\n')
			len--;
		f[n++] = (struct jw_journal_field){ .name = "JANKWATCH_JSON", .value = line,
						    .len = len };
	}
	return n;
}
