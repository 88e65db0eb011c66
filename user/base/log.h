/* SPDX-License-Identifier: GPL-2.0-only */
/* Diagnostics on stderr, each call with an explicit level. */
#ifndef JW_LOG_H
#define JW_LOG_H

#include <stddef.h>

enum jw_log_level {
	JW_LOG_ERROR = 0,	/* always shown, even with -q */
	JW_LOG_WARN = 1,	/* hidden by -q */
	JW_LOG_INFO = 2,	/* the default */
	JW_LOG_DEBUG = 3,	/* -v; libbpf's own output too */
};

/* Shows messages up to @level; set once by main() from -v / -q. */
void jw_log_set_level(enum jw_log_level level);
enum jw_log_level jw_log_level(void);

/* Prints "jankwatch: <message>\n" on stderr when @level is shown. */
void jw_log(enum jw_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * On a terminal, shows @line as the live status line, rewritten in place; messages are printed
 * above it. NULL or "" removes it. Nothing happens when stderr is not a terminal or with -q.
 */
void jw_log_status(const char *line);

/*
 * While set, messages shown go to @fn (the line without "jankwatch: ") instead of stderr, and no
 * status line is drawn: a full-screen view (jankwatch top) whose screen stderr's lines would be
 * written over. NULL gives them back to stderr.
 */
typedef void (*jw_log_divert_fn)(void *ctx, enum jw_log_level level, const char *line);
void jw_log_divert(jw_log_divert_fn fn, void *ctx);

/* Writes a one-line message into a caller's @err buffer; a NULL or empty buffer is ignored. */
void jw_set_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
