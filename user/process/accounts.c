// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "process/accounts.h"

#define PASSWD_FILE "/etc/passwd"
#define GROUP_FILE "/etc/group"
/* name:password:uid:gid:... (passwd) and name:password:gid:members (group). */
#define MAX_FIELDS 7

/* An id as written in the files or on the command line: digits only, below (id_t)-1. */
static bool parse_id(const char *s, unsigned int *id)
{
	unsigned long v;
	char *end;

	if (!*s || strspn(s, "0123456789") != strlen(s))
		return false;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || v >= 0xffffffffUL)
		return false;
	*id = v;
	return true;
}

/* Splits @line (its newline removed) at ':' into at most MAX_FIELDS fields; returns how many. */
static int split_fields(char *line, char **field)
{
	int n = 0;

	line[strcspn(line, "\n")] = '\0';
	field[n++] = line;
	while (n < MAX_FIELDS && (line = strchr(line, ':'))) {
		*line++ = '\0';
		field[n++] = line;
	}
	return n;
}

/*
 * Calls @fn with the fields of each entry of @path (comments and short lines skipped) until it
 * returns true. Returns whether it did; a file that cannot be read has no entries.
 */
static bool each_entry(const char *path, int min_fields, bool (*fn)(char **field, void *arg),
		       void *arg)
{
	char *line = NULL, *field[MAX_FIELDS];
	size_t cap = 0;
	bool found = false;
	FILE *f = fopen(path, "re");

	if (!f)
		return false;
	while (!found && getline(&line, &cap, f) > 0) {
		if (line[0] == '#' || split_fields(line, field) < min_fields)
			continue;
		found = fn(field, arg);
	}
	free(line);
	fclose(f);
	return found;
}

struct user_query {
	const char *name;	/* by name, or */
	unsigned int uid;	/* by uid when name is NULL */
	struct jw_account *a;
};

static bool match_user(char **field, void *arg)
{
	struct user_query *q = arg;
	unsigned int uid, gid;

	if (!parse_id(field[2], &uid) || !parse_id(field[3], &gid))
		return false;
	if (q->name ? strcmp(field[0], q->name) : uid != q->uid)
		return false;
	q->a->uid = uid;
	q->a->gid = gid;
	snprintf(q->a->name, sizeof(q->a->name), "%s", field[0]);
	return true;
}

struct group_query {
	const char *name;	/* the group by name, or */
	unsigned int gid;	/* set when found */
};

static bool match_group(char **field, void *arg)
{
	struct group_query *q = arg;

	if (strcmp(field[0], q->name) || !parse_id(field[2], &q->gid))
		return false;
	return true;
}

static void add_group(struct jw_account *a, gid_t gid)
{
	int i;

	for (i = 0; i < a->ngroups; i++)
		if (a->groups[i] == gid)
			return;
	if (a->ngroups < JW_ACCOUNT_MAX_GROUPS)
		a->groups[a->ngroups++] = gid;
	else
		a->groups_left_out++;
}

/* A group entry that lists the account's name among its members gives it that group. */
static bool member_of(char **field, void *arg)
{
	struct jw_account *a = arg;
	char *member, *save;
	unsigned int gid;

	if (!parse_id(field[2], &gid))
		return false;
	for (member = strtok_r(field[3], ",", &save); member; member = strtok_r(NULL, ",", &save))
		if (!strcmp(member, a->name)) {
			add_group(a, gid);
			break;
		}
	return false;
}

static int resolve_user(const char *user, const char *passwd, struct jw_account *a)
{
	struct user_query q = { .name = user, .a = a };
	unsigned int uid;

	if (each_entry(passwd, 4, match_user, &q))
		return 0;
	if (!parse_id(user, &uid))
		return -ESRCH;
	q.name = NULL;
	q.uid = uid;
	if (each_entry(passwd, 4, match_user, &q))
		return 0;
	a->uid = a->gid = uid;
	return 0;
}

int jw_account_resolve(const char *spec, const struct jw_account_files *files,
		       struct jw_account *a, char *err, size_t errlen)
{
	const char *passwd = files && files->passwd ? files->passwd : PASSWD_FILE;
	const char *group_file = files && files->group ? files->group : GROUP_FILE;
	char user[256];
	const char *colon = strchr(spec, ':'), *group = colon ? colon + 1 : NULL;
	size_t ulen = colon ? (size_t)(colon - spec) : strlen(spec);

	memset(a, 0, sizeof(*a));
	if (!ulen || ulen >= sizeof(user) || (group && !*group)) {
		snprintf(err, errlen, "--user %s: give USER or USER:GROUP (a name or a number each)",
			 spec);
		return -EINVAL;
	}
	memcpy(user, spec, ulen);
	user[ulen] = '\0';
	if (resolve_user(user, passwd, a)) {
		snprintf(err, errlen, "--user %s: no user %s in %s, and not a number", spec, user,
			 passwd);
		return -ESRCH;
	}
	if (group) {
		struct group_query q = { .name = group };
		unsigned int gid;

		if (each_entry(group_file, 3, match_group, &q))
			gid = q.gid;
		else if (!parse_id(group, &gid)) {
			snprintf(err, errlen, "--user %s: no group %s in %s, and not a number", spec,
				 group, group_file);
			return -ESRCH;
		}
		a->gid = gid;
		add_group(a, gid);
		return 0;
	}
	add_group(a, a->gid);
	if (a->name[0])
		each_entry(group_file, 4, member_of, a);
	return 0;
}
