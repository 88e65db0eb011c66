/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The wait system calls' own tracepoints (syscalls:sys_enter_NAME and sys_exit_NAME): their ids,
 * read from tracefs; where the system has it mounted nowhere (Debian's default, many devices),
 * mounted for the moment on a directory of jankwatch's own and unmounted after. A kernel built
 * without CONFIG_FTRACE_SYSCALLS has none: syscall mode then takes raw_syscalls.
 */
#ifndef JW_ATTACH_SYSEVENTS_H
#define JW_ATTACH_SYSEVENTS_H

#include <stdbool.h>
#include <stddef.h>

/* The wait system calls an event loop blocks in, by name: every architecture's (bpf/arch/). */
#define JW_WAIT_SYSCALLS 7

struct jw_sysevent {
	const char *name;	/* "epoll_wait" */
	int enter;		/* the tracepoint ids of its entry and its exit */
	int exit;
};

struct jw_sysevents {
	size_t n;		/* of the wait system calls, those this kernel has events of */
	struct jw_sysevent ev[JW_WAIT_SYSCALLS];
};

/* The name of wait system call @i (< JW_WAIT_SYSCALLS). */
const char *jw_sysevents_name(size_t i);

/*
 * Whether wait system call @i is this architecture's (user/arch/): arm64's kernel BTF has
 * __arm64_sys_poll and the others it has no number for, never called.
 */
bool jw_sysevents_on_arch(size_t i);

/*
 * Reads the ids of the events of the wait system calls this kernel has from the tracefs at
 * @events (its events/ directory). 0 with @out->n > 0; -ENOENT when it has none of them.
 */
int jw_sysevents_read_dir(const char *events, struct jw_sysevents *out);

/*
 * The same from the system's tracefs (/sys/kernel/tracing, /sys/kernel/debug/tracing), or one
 * mounted for the reading. 0, or -errno with @err (at least 256 bytes) saying what is missing.
 */
int jw_sysevents_read(struct jw_sysevents *out, char *err, size_t len);

#endif
