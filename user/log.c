// SPDX-License-Identifier: GPL-2.0-only
#include <stdarg.h>
#include <stdio.h>

#include "log.h"

static enum jw_log_level shown = JW_LOG_INFO;

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
	/* One write per message, so lines from jankwatch never interleave mid-line. */
	fprintf(stderr, "jankwatch: %s\n", line);
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
