/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Syscall mode's hooks: a task is the time between the watched thread's wait (epoll_wait,
 * epoll_pwait, epoll_pwait2, poll, ppoll, select, pselect) returning and its next wait, hooked
 * on the C library's wrappers of those calls: glibc's, musl's or bionic's, or a static
 * program's own. It needs no symbols of the program and fits any loop.
 */
#ifndef JW_WAITS_H
#define JW_WAITS_H

#include <limits.h>
#include <stdbool.h>
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
 * Finds the wait functions of process @pid: in the C library it maps (glibc's libc.so.6, musl's
 * or bionic's libc.so), else in its executable @exe. @pid 0: a program not started yet (held
 * before its exec): in the C library its interpreter names (musl's loader itself; glibc's beside
 * its loader; bionic's beside linker64), paths read under @root (NULL: /), else in @exe. Aliases
 * at one address are found once. Returns the number found (> 0), or -ENOENT with a message in
 * @err.
 */
int jw_find_wait_funcs(pid_t pid, const char *root, const char *exe, struct jw_wait_func *out,
		       size_t max, char *err, size_t errlen);

/* The C library process @pid maps, as jw_find_wait_funcs() looks for it: 0, or -ENOENT. */
int jw_waits_mapped_libc(pid_t pid, char *path, size_t len);

#endif
