/* SPDX-License-Identifier: GPL-2.0-only */
/* A point in time as a person types it for --since and --until, and as it is shown back. */
#ifndef JW_WHEN_H
#define JW_WHEN_H

#include <stddef.h>
#include <stdint.h>

/* The forms jw_parse_when() takes, for a subcommand's --help. */
#define JW_WHEN_HELP                                                                         \
	"WHEN: 'YYYY-mm-dd[ HH:MM[:SS]]' or 'HH:MM[:SS]' (today), local time; a time ago as\n" \
	"N followed by s, m, h or d ('2h'); '@EPOCH' seconds; 'now'.\n"

/*
 * Parses @s into ns since the epoch, relative to @now_ns (ns since the epoch):
 *   "2026-11-25", "2026-11-25 14:30", "2026-11-25T14:30:05"   local time
 *   "14:30", "14:30:05"                                       today, local time
 *   "90s", "15m", "2h", "7d"                                  that long before now
 *   "@1764072000"                                             seconds since the epoch
 *   "now"
 * Returns 0, or -EINVAL with the accepted forms in @err.
 */
int jw_parse_when(const char *s, int64_t now_ns, int64_t *out_ns, char *err, size_t errlen);

/* @ms since the epoch as local time, "YYYY-mm-dd HH:MM:SS", into @buf; "-" for 0 or a failure. */
void jw_when_text(uint64_t ms, char *buf, size_t len);

#endif
