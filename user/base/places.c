// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/places.h"

/* A parent directory and the name jankwatch's directory takes under it; NULL parent: $TMPDIR. */
struct place {
	const char *parent;
	const char *name;
};

#define N_PARENTS 4

static const struct place places[][N_PARENTS] = {
	[JW_PLACE_LOG] = { { "/var/log", "jankwatch" }, { "/data/local/tmp", "jankwatch" },
			   { NULL, "jankwatch" }, { "/tmp", "jankwatch" } },
	[JW_PLACE_RUN] = { { "/run", "jankwatch" }, { "/data/local/tmp", "jankwatch-run" },
			   { NULL, "jankwatch-run" }, { "/tmp", "jankwatch-run" } },
};

/* Whether @dir (under @root) is a directory this process can create entries in. */
static bool can_write_in(const char *root, const char *dir)
{
	char path[PATH_MAX];
	struct stat st;
	int n = snprintf(path, sizeof(path), "%s%s", root ? root : "", dir);

	if (n < 0 || (size_t)n >= sizeof(path))
		return false;
	return !stat(path, &st) && S_ISDIR(st.st_mode) && !access(path, W_OK | X_OK);
}

static int name_under(const char *parent, const char *name, char *buf, size_t len)
{
	size_t plen = strlen(parent);
	int n;

	while (plen > 1 && parent[plen - 1] == '/')
		plen--;
	n = snprintf(buf, len, "%.*s/%s", (int)plen, parent, name);

	return n > 0 && (size_t)n < len ? 0 : -ENAMETOOLONG;
}

int jw_place_default(enum jw_place what, const char *root, char *buf, size_t len)
{
	const struct place *p = places[what];
	const char *tmpdir = getenv("TMPDIR");
	size_t i;

	for (i = 0; i < N_PARENTS; i++) {
		const char *parent = p[i].parent ? p[i].parent : tmpdir;

		/* $TMPDIR only as an absolute path: a relative one would move with the cwd. */
		if (!parent || parent[0] != '/')
			continue;
		if (can_write_in(root, parent))
			return name_under(parent, p[i].name, buf, len);
	}
	return name_under(p[0].parent, p[0].name, buf, len) ?: -ENOENT;
}

bool jw_place_is_usual(enum jw_place what, const char *dir)
{
	char usual[64];

	return !name_under(places[what][0].parent, places[what][0].name, usual, sizeof(usual)) &&
	       !strcmp(dir, usual);
}
