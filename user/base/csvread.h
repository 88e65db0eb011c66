/* SPDX-License-Identifier: GPL-2.0-only */
/* Reading CSV (RFC 4180) as jankwatch writes stats.csv: fields quoted when they hold a separator. */
#ifndef JW_CSVREAD_H
#define JW_CSVREAD_H

#include <stddef.h>

/*
 * Calls @cb(@ctx, fields, n) for each record of @text (@len bytes; CRLF or LF line ends, a quoted
 * field may hold commas, quotes doubled and line ends; a blank line is no record). The fields
 * are NUL-terminated, unquoted, and live until @cb returns. Stops at @cb's first non-zero
 * return and returns it; else 0, -EINVAL for a quote that is never closed or text after a
 * closing quote, -ENOMEM.
 */
int jw_csv_records(const char *text, size_t len,
		   int (*cb)(void *ctx, char **fields, size_t n), void *ctx);

#endif
