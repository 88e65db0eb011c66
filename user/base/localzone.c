// SPDX-License-Identifier: GPL-2.0-only
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/localzone.h"

#define LOCALTIME "/etc/localtime"
#define ZONEINFO "/usr/share/zoneinfo"

static bool readable(const char *root, const char *path)
{
	char full[PATH_MAX];
	int n = snprintf(full, sizeof(full), "%s%s", root ? root : "", path);

	return n > 0 && (size_t)n < sizeof(full) && !access(full, R_OK);
}

/* Whether @tz is a rule the C library reads without a file: "CST-8", "EST5EDT,M3.2.0,M11.1.0". */
static bool is_rule(const char *tz)
{
	const char *p = tz;

	if (*p == '<') {	/* a quoted name: <+08>-8 */
		p = strchr(p, '>');
		if (!p)
			return false;
		p++;
	} else {
		while (isalpha((unsigned char)*p))
			p++;
		if (p - tz < 3)
			return false;
	}
	return *p == '+' || *p == '-' || isdigit((unsigned char)*p);
}

bool jw_local_zone_known(const char *root, char *why, size_t len)
{
	const char *tz = getenv("TZ"), *tzdir = getenv("TZDIR");
	char file[PATH_MAX];

	if (!tz) {
		if (readable(root, LOCALTIME))
			return true;
		snprintf(why, len, "no TZ and no " LOCALTIME);
		return false;
	}
	/* TZ="" is UTC by choice; ":name" is the name, as glibc and musl read it. */
	if (!*tz)
		return true;
	if (*tz == ':')
		tz++;
	if (is_rule(tz) || !strcmp(tz, "UTC") || !strcmp(tz, "GMT"))
		return true;
	if (*tz == '/')
		snprintf(file, sizeof(file), "%s", tz);
	else
		snprintf(file, sizeof(file), "%s/%s", tzdir && *tzdir ? tzdir : ZONEINFO, tz);
	if (readable(root, file))
		return true;
	snprintf(why, len, "TZ=%s names no zone file here (%s)", tz, file);
	return false;
}
