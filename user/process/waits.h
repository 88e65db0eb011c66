/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Syscall mode's hooks: a task is the time between the watched thread's wait (epoll_wait,
 * epoll_pwait, epoll_pwait2, poll, ppoll, select, pselect) returning and its next wait, hooked
 * on the C library's wrappers of those calls. It needs no symbols of the program and fits any
 * loop.
 */
#ifndef JW_WAITS_H
#define JW_WAITS_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define JW_MAX_WAIT_FUNCS 8

/* A wait function found in a process's C library (or its executable, when static). */
struct jw_wait_func {
	char path[PATH_MAX];
	const char *name;
	uint64_t offset;
};

/*
 * Finds the wait functions of process @pid: in the C library it maps, else in its executable
 * @exe. Aliases at one address are found once. Returns the number found (> 0), or -ENOENT with
 * a message in @err.
 */
int jw_find_wait_funcs(pid_t pid, const char *exe, struct jw_wait_func *out, size_t max,
		       char *err, size_t errlen);

#endif
