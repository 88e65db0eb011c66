/* SPDX-License-Identifier: GPL-2.0-only */
/* The jank event: one JSON object a line, SPEC's field table. */
#ifndef JW_REPORT_EVENT_H
#define JW_REPORT_EVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/jsonbuf.h"

/* A value the event does not know yet is written as null: NULL strings, has_* false. */
struct jw_event {
	const char *event;		/* "MAIN_THREAD_JANK" or "MAIN_THREAD_HANG" */
	uint64_t time_ms;		/* when raised, ms since the epoch */
	const char *bundle_name;	/* the executable's name */
	const char *bundle_version;	/* the executable's build-id */
	uint32_t pid;
	uint32_t uid;
	uint32_t tid;
	uint64_t begin_time_ms;
	uint64_t end_time_ms;
	const char *const *external_log;	/* paths written for this event */
	size_t n_external_log;
	bool log_over_limit;
	const char *withheld;		/* why no file was written: jw_withheld_name(); NULL */
	uint64_t app_start_jiffies_time;
	const char *heaviest_stack;
	const char *handler;
	const char *handler_class;	/* what it belongs to (statistics' handler_class); NULL: none */
	const char *loop;		/* how the loop was hooked; NULL: not written */
	double wall_ms;
	double cpu_ms;
	double runq_ms;
	double blocked_ms;
	double io_ms;
	bool has_offcpu;		/* cpu/runq/blocked/io_ms are known */
	bool offcpu_partial;		/* a switch of the thread reached no program: short split */
	double delay_ms;		/* how long the task's work waited before it began */
	bool has_delay;
	const char *waker;
	const char *cause;		/* "cpu", "runqueue", "blocked", "io" */
	const char *group;
	uint32_t burst;			/* the task completed a burst of this many; 0: not written */
	uint32_t samples;
	uint32_t dropped;
	const char *jank_id;		/* the same for the same event sent twice; NULL: not written */
};

/* Appends @e as one JSON line, newline included, to @b. Fields in SPEC's order. */
void jw_event_format(const struct jw_event *e, struct jw_buf *b);

/*
 * The same, at most @max bytes, newline included (0: unbounded), so that a log shipper takes the
 * line whole (rsyslog's default limit is 8 KiB, Fluent Bit's 32 KiB): past it, heaviest_stack
 * keeps as many of its innermost frames as fit and ends with "<-[+N frames]"; past it still, the
 * free-text fields (handler, handler_class, group, waker, bundle_name, loop) are cut to
 * JW_EVENT_TEXT_CUT bytes ending in "[...]" and a long external_log path to its file name (a
 * line of 2 KiB holds every field so cut). Returns whether anything was cut.
 */
bool jw_event_format_bounded(const struct jw_event *e, struct jw_buf *b, size_t max);

#define JW_EVENT_TEXT_CUT 160

/* The largest share of a task's time: "cpu", "runqueue", "blocked" or "io". */
const char *jw_event_cause(double cpu_ms, double runq_ms, double blocked_ms, double io_ms);

#endif
