// SPDX-License-Identifier: GPL-2.0-only
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/when.h"

#define NS_PER_S 1000000000LL

/* "N<unit>" before now: s, m, h, d. */
static int relative(const char *s, int64_t now_ns, int64_t *out)
{
	static const struct {
		char unit;
		int64_t s;
	} units[] = { { 's', 1 }, { 'm', 60 }, { 'h', 3600 }, { 'd', 86400 } };
	char *end;
	long long n;
	size_t i;

	if (!isdigit((unsigned char)s[0]))
		return -EINVAL;
	errno = 0;
	n = strtoll(s, &end, 10);
	if (errno || end[0] == '\0' || end[1] != '\0' || n > 100LL * 365 * 86400)
		return -EINVAL;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (units[i].unit == end[0]) {
			*out = now_ns - n * units[i].s * NS_PER_S;
			return 0;
		}
	}
	return -EINVAL;
}

/* Local date and time: "Y-m-d", "Y-m-d H:M[:S]" (a space or T), "H:M[:S]" today. */
static int absolute(const char *s, int64_t now_ns, int64_t *out)
{
	static const char *const forms[] = { "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S",
					     "%Y-%m-%d %H:%M", "%Y-%m-%dT%H:%M", "%Y-%m-%d",
					     "%H:%M:%S", "%H:%M" };
	time_t now = (time_t)(now_ns / NS_PER_S), t;
	struct tm tm, today;
	const char *end;
	size_t i;

	if (!localtime_r(&now, &today))
		return -EINVAL;
	for (i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		memset(&tm, 0, sizeof(tm));
		end = strptime(s, forms[i], &tm);
		if (!end || *end)
			continue;
		if (forms[i][1] == 'H') {
			tm.tm_year = today.tm_year;
			tm.tm_mon = today.tm_mon;
			tm.tm_mday = today.tm_mday;
		}
		tm.tm_isdst = -1;
		t = mktime(&tm);
		if (t == (time_t)-1)
			return -EINVAL;
		*out = (int64_t)t * NS_PER_S;
		return 0;
	}
	return -EINVAL;
}

int jw_parse_when(const char *s, int64_t now_ns, int64_t *out_ns, char *err, size_t errlen)
{
	char *end;
	long long n;

	if (!strcmp(s, "now")) {
		*out_ns = now_ns;
		return 0;
	}
	if (s[0] == '@') {
		errno = 0;
		n = strtoll(s + 1, &end, 10);
		if (!errno && end != s + 1 && !*end && n >= 0 && n < (1LL << 33)) {
			*out_ns = n * NS_PER_S;
			return 0;
		}
	} else if (!relative(s, now_ns, out_ns) || !absolute(s, now_ns, out_ns)) {
		return 0;
	}
	snprintf(err, errlen, "'%s' is not a time: give 'YYYY-mm-dd[ HH:MM[:SS]]', 'HH:MM[:SS]' "
		 "(today), a time ago as N followed by s, m, h or d ('2h'), '@EPOCH' or 'now'", s);
	return -EINVAL;
}

void jw_when_text(uint64_t ms, char *buf, size_t len)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;

	if (!ms || !localtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(buf, len, "-");
}
