/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * `--user USER[:GROUP]`: the ids a program started by `-- CMD` runs as, read from the passwd
 * and group files themselves, not through the C library's name service (a static jankwatch has
 * none, and a device may have no such files at all: then only numbers are taken).
 */
#ifndef JW_ACCOUNTS_H
#define JW_ACCOUNTS_H

#include <stddef.h>
#include <sys/types.h>

/* The most groups an account is given; beyond them the rest are left out and said. */
#define JW_ACCOUNT_MAX_GROUPS 64

struct jw_account {
	uid_t uid;
	gid_t gid;
	char name[256];				/* the passwd entry's name; "" without one */
	gid_t groups[JW_ACCOUNT_MAX_GROUPS];	/* the supplementary groups, gid first */
	int ngroups;
	int groups_left_out;			/* groups beyond JW_ACCOUNT_MAX_GROUPS */
};

/* The files read: NULL for /etc/passwd and /etc/group. A missing file has no entries. */
struct jw_account_files {
	const char *passwd;
	const char *group;
};

/*
 * Resolves @spec, `USER[:GROUP]` as chown takes it: USER a name or a uid, GROUP a name or a gid.
 * - USER alone: the passwd entry's uid and gid (a uid without an entry: gid = uid, as Android's
 *   app and system ids are), and as supplementary groups the gid and every group of the group
 *   file that lists the entry's name;
 * - USER:GROUP: that uid and gid, and the gid as the only group.
 * Returns 0, or -ESRCH (no such user or group) or -EINVAL (not a name nor a number) with a
 * one-line message in @err.
 */
int jw_account_resolve(const char *spec, const struct jw_account_files *files,
		       struct jw_account *a, char *err, size_t errlen);

#endif
