/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The statistics dump (LooperStats): one CSV row per (process, thread, handler) with the seed's
 * columns and a leading pid, times in microseconds; and a log2 latency histogram per row, as
 * funclatency prints it.
 */
#ifndef JW_REPORT_STATS_H
#define JW_REPORT_STATS_H

#include <stdint.h>
#include <stdio.h>

#include "jankwatch/abi.h"

/* A row named: what the kernel counted, and the names user space found for it. */
struct jw_stats_row {
	uint32_t pid;			/* 0 for OVERFLOW */
	uint32_t tid;
	const char *thread_name;
	const char *process;		/* the process's name (bundle_name); may be NULL */
	const char *handler_class;	/* the hooked function, or "syscall" */
	const char *message_name;	/* the handler; "OVERFLOW" for the overflow row */
	const struct jw_stats_val *val;
};

/* The CSV header line. */
void jw_stats_csv_header(FILE *f);

/* One CSV line for @r; fields with a comma, a quote or a line break are quoted (RFC 4180). */
void jw_stats_csv_row(FILE *f, const struct jw_stats_row *r);

/*
 * @r's log2 histogram of recorded wall times, funclatency's way: a title line, then one line
 * per slot from the lowest to the highest used, "lo -> hi : count |****|".
 */
void jw_stats_hist(FILE *f, const struct jw_stats_row *r);

#endif
