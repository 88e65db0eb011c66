/* SPDX-License-Identifier: GPL-2.0-only */
/* The stack log: a key: value header, a blank line, then the tree (or folded lines, or wchan). */
#ifndef JW_REPORT_STACK_H
#define JW_REPORT_STACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "config/options.h"
#include "report/stacktree.h"

struct jw_stack_report {
	uint32_t pid;
	uint32_t tid;
	const char *exe;
	const char *build_id;		/* NULL: none */
	uint64_t begin_time_ms;		/* ms since the epoch */
	uint64_t end_time_ms;
	double wall_ms;
	double cpu_ms;
	double runq_ms;
	double blocked_ms;
	double delay_ms;		/* the queueing delay, when has_delay (else no line) */
	bool has_delay;
	uint32_t samples;
	const char *heaviest_stack;
	const char *waker;		/* what ended the longest block; NULL: no line */
	const char *waker_stack;	/* its kernel stack, leaf first, "<-"-joined; NULL: no line */
	const struct jw_stacktree *tree;	/* may be empty */
	const char *wchan;		/* written instead of an empty tree; NULL: "unknown" */
	size_t debug_pending;		/* debuginfod fetches under way as it was named */
	enum jw_format format;
};

/*
 * Writes @r to @f. The header's times are written as local "YYYY-mm-dd HH:MM:SS.mmm".
 * Returns 0 or -errno.
 */
int jw_stack_report_write(const struct jw_stack_report *r, FILE *f);

/*
 * A report file's name, "<kind>-<pid>-<YYYYmmddHHMMSS>-<ms><suffix>" (local time), for a report
 * raised at @time_ms, ms since the epoch; @suffix may be NULL. With @kind NULL, the jank's id
 * its files share: "<pid>-<YYYYmmddHHMMSS>-<ms>" (the profiles' jank label).
 */
void jw_report_file_name(const char *kind, uint32_t pid, uint64_t time_ms, const char *suffix,
			 char *buf, size_t len);

/* The file name "stack-<pid>-<YYYYmmddHHMMSS>-<ms>.txt" for a report raised at @time_ms. */
void jw_stack_report_name(uint32_t pid, uint64_t time_ms, char *buf, size_t len);

#endif
