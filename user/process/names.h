/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * --name: processes by the name they take. A process is named NAME when its kernel name (comm,
 * at most 15 bytes) is NAME; for a NAME past 15 bytes, when its comm is NAME's first 15 bytes
 * (what the kernel keeps of a longer name) or its last 15 (what Android's zygote children take:
 * AndroidRuntime::setArgv0) and its first argument (/proc/PID/cmdline), or that argument's file
 * name, is NAME. Pure: the caller reads comm and cmdline.
 */
#ifndef JW_PROCESS_NAMES_H
#define JW_PROCESS_NAMES_H

#include <stdbool.h>
#include <stddef.h>

#define JW_NAME_COMM_LEN 16	/* the kernel's TASK_COMM_LEN, its NUL included */
#define JW_NAME_MAX 255		/* the longest NAME taken */
#define JW_NAME_COMMS 2		/* kernel names a NAME may show as, at most */

/* Whether @name can name a process; if not, -EINVAL with one line in @err. */
int jw_name_check(const char *name, char *err, size_t errlen);

/*
 * The kernel names a process named @name (checked) may carry, NUL-padded to JW_NAME_COMM_LEN:
 * @name itself, or past 15 bytes its first 15 and its last 15. Returns how many (1 or 2).
 */
unsigned int jw_name_comms(const char *name, char comms[JW_NAME_COMMS][JW_NAME_COMM_LEN]);

/* Whether a process whose comm is @comm and first argument @argv0 ("" if none) is @name. */
bool jw_name_is(const char *name, const char *comm, const char *argv0);

/*
 * The first of @names (@n of them) that a process of @comm and @argv0 is, or NULL. @argv0 NULL:
 * not read yet, matched by comm alone (a candidate, to be checked once it is read).
 */
const char *jw_name_find(char *const *names, size_t n, const char *comm, const char *argv0);

#endif
