/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Syscall mode's tracepoints, on the BPF object (object.h): the wait system calls' own exit
 * events (sysevents.h) where the kernel has them, so that no other system call runs a program;
 * else raw_syscalls' sys_exit, which runs one on every system call of the machine. No entry:
 * a wait that sleeps ends its task at the switch (bpf/wait.bpf.h, wait_slept()).
 */
#ifndef JW_ATTACH_WAIT_TP_H
#define JW_ATTACH_WAIT_TP_H

#include <stdbool.h>
#include <stddef.h>

#include "attach/links.h"
#include "attach/sysevents.h"

struct jw_attach;

/* The most links the waits' tracepoints take: an exit per wait system call. */
#define JW_WAIT_TP_LINKS JW_WAIT_SYSCALLS

/*
 * Attaches the waits' tracepoints into @out (JW_WAIT_TP_LINKS), their number in @n; @own says
 * whether they are the wait system calls' own events. The ids are read once and kept in @a; a
 * kernel that has none, or a tracefs that cannot be read, takes raw_syscalls, said once at -v.
 * With @cost_only, only the exit of one: what any other system call pays is the same with one
 * as with all (wait_tracepoints=2's measurement), and each link takes a grace period to go.
 * 0, or -errno with nothing attached.
 */
int jw_wait_tp_attach(struct jw_attach *a, struct jw_link *out, size_t *n, bool *own,
		      bool cost_only);

#endif
