// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <string.h>

#include "base/log.h"
#include "process/names.h"

#define COMM_MAX (JW_NAME_COMM_LEN - 1)

int jw_name_check(const char *name, char *err, size_t errlen)
{
	size_t n = strlen(name), i;

	if (!n) {
		jw_set_err(err, errlen, "an empty name");
		return -EINVAL;
	}
	if (n > JW_NAME_MAX) {
		jw_set_err(err, errlen, "longer than %d bytes (%.32s...)", JW_NAME_MAX, name);
		return -EINVAL;
	}
	for (i = 0; i < n; i++)
		if ((unsigned char)name[i] < 0x20 || name[i] == 0x7f) {
			jw_set_err(err, errlen, "a control character in the name");
			return -EINVAL;
		}
	return 0;
}

unsigned int jw_name_comms(const char *name, char comms[JW_NAME_COMMS][JW_NAME_COMM_LEN])
{
	size_t n = strlen(name);

	memset(comms, 0, JW_NAME_COMMS * JW_NAME_COMM_LEN);
	if (n <= COMM_MAX) {
		memcpy(comms[0], name, n);
		return 1;
	}
	memcpy(comms[0], name, COMM_MAX);
	memcpy(comms[1], name + n - COMM_MAX, COMM_MAX);
	return 2;
}

/* Whether @comm is one of the kernel names of @name. */
static bool comm_of_name(const char *name, const char *comm)
{
	char comms[JW_NAME_COMMS][JW_NAME_COMM_LEN];
	unsigned int i, n = jw_name_comms(name, comms);

	for (i = 0; i < n; i++)
		if (!strncmp(comms[i], comm, JW_NAME_COMM_LEN))
			return true;
	return false;
}

/* Whether first argument @argv0 is @name, or a path to a file of that name. */
static bool argv0_is(const char *name, const char *argv0)
{
	const char *slash = strrchr(argv0, '/');

	return !strcmp(argv0, name) || (slash && !strcmp(slash + 1, name));
}

bool jw_name_is(const char *name, const char *comm, const char *argv0)
{
	if (!comm_of_name(name, comm))
		return false;
	return strlen(name) <= COMM_MAX || argv0_is(name, argv0 ? argv0 : "");
}

const char *jw_name_find(char *const *names, size_t n, const char *comm, const char *argv0)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (argv0 ? jw_name_is(names[i], comm, argv0) : comm_of_name(names[i], comm))
			return names[i];
	return NULL;
}
