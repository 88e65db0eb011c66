// SPDX-License-Identifier: GPL-2.0-only
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"

static enum jw_log_level shown = JW_LOG_INFO;
static char status[256];	/* the live status line on a terminal; "" when none */
static jw_log_divert_fn divert;	/* where messages go instead of stderr, while set */
static void *divert_ctx;

/* Erases the status line, so that a message starts at column 0. */
static void erase_status(void)
{
	if (status[0])
		fputs("\r\033[K", stderr);
}

void jw_log_status(const char *line)
{
	if (shown < JW_LOG_INFO || divert || !isatty(STDERR_FILENO))
		return;
	erase_status();
	snprintf(status, sizeof(status), "%s", line ? line : "");
	if (status[0])
		fprintf(stderr, "jankwatch: %s", status);
	fflush(stderr);
}

void jw_log_divert(jw_log_divert_fn fn, void *ctx)
{
	if (fn) {
		erase_status();
		status[0] = '\0';
		fflush(stderr);
	}
	divert = fn;
	divert_ctx = ctx;
}

void jw_log_set_level(enum jw_log_level level)
{
	shown = level;
}

enum jw_log_level jw_log_level(void)
{
	return shown;
}

void jw_log(enum jw_log_level level, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	if (level > shown)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (divert) {
		divert(divert_ctx, level, line);
		return;
	}
	/* One write per message, so lines from jankwatch never interleave mid-line. */
	erase_status();
	fprintf(stderr, "jankwatch: %s\n", line);
	if (status[0])
		fprintf(stderr, "jankwatch: %s", status);
}

void jw_set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}
