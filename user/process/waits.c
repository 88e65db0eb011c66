// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdio.h>

#include "process/elfsym.h"
#include "process/target.h"
#include "process/waits.h"

/* The wait calls of an event loop, by their C library names. */
static const char *const wait_funcs[] = {
	"epoll_wait", "epoll_pwait", "epoll_pwait2", "poll", "ppoll", "select", "pselect",
};

/* Resolves every wait function in @path; aliases (poll and __poll) are kept once. */
static int waits_in(const char *path, struct jw_wait_func *out, size_t max)
{
	size_t i, j, n = 0;

	for (i = 0; i < sizeof(wait_funcs) / sizeof(wait_funcs[0]) && n < max; i++) {
		char msg[512];
		uint64_t off, size;
		bool seen = false;

		if (jw_elf_func_offset(path, wait_funcs[i], &off, &size, msg, sizeof(msg)))
			continue;
		for (j = 0; j < n; j++)
			seen |= out[j].offset == off;
		if (seen)
			continue;
		snprintf(out[n].path, sizeof(out[n].path), "%s", path);
		out[n].name = wait_funcs[i];
		out[n++].offset = off;
	}
	return n;
}

int jw_find_wait_funcs(pid_t pid, const char *exe, struct jw_wait_func *out, size_t max,
		       char *err, size_t errlen)
{
	char libc[PATH_MAX];
	int n = 0;

	if (jw_target_find_mapping(pid, "libc.so.6", libc, sizeof(libc)) == 0)
		n = waits_in(libc, out, max);
	/* A static executable carries its own. */
	if (n == 0)
		n = waits_in(exe, out, max);
	if (n == 0) {
		snprintf(err, errlen, "pid %d: no wait function (epoll_wait, poll, select, ...) in "
			 "its C library or %s: give --probe BIN:ENTRY[:EXIT]", pid, exe);
		return -ENOENT;
	}
	return n;
}
