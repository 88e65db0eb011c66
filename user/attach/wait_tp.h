/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Syscall mode's kernel side of the waits, on the BPF object (object.h): fexit programs on the
 * wait system calls' functions where the kernel has BPF trampolines, so that only the machine's
 * waits run a program; else the wait system calls' own exit events (sysevents.h), so that no
 * other system call runs a program though every one takes the tracing path; else raw_syscalls'
 * sys_exit, which runs one on every system call of the machine. No entry: a wait that sleeps
 * ends its task at the switch (bpf/wait.bpf.h, wait_slept()).
 */
#ifndef JW_ATTACH_WAIT_TP_H
#define JW_ATTACH_WAIT_TP_H

#include <stdbool.h>
#include <stddef.h>

#include "attach/links.h"
#include "attach/sysevents.h"

struct jw_attach;

/* The most links the waits' kernel hooks take: an exit per wait system call. */
#define JW_WAIT_TP_LINKS JW_WAIT_SYSCALLS

/* Which of the three the waits' kernel hooks are. */
enum jw_wait_tp_kind {
	JW_WAIT_TP_FEXIT,	/* fexit on the wait system calls' functions */
	JW_WAIT_TP_OWN,		/* the wait system calls' own exit tracepoints */
	JW_WAIT_TP_RAW,		/* raw_syscalls' sys_exit */
};

/*
 * Before the object is loaded: the fexit programs (bpf/wait.bpf.h's wait_fexit_*) each set on
 * its wait system call's function, where the plan has fexit and the kernel's BTF has the
 * function, the others left unloaded.
 */
void jw_wait_tp_prepare(struct jw_attach *a);

/* Whether the waits' kernel hooks can be fexit (loaded, and not refused at an attach yet). */
bool jw_wait_tp_fexit(const struct jw_attach *a);

/* fexit alone into @out, as jw_wait_tp_attach() takes it: 0, or -errno with none attached. */
int jw_wait_tp_attach_fexit(struct jw_attach *a, struct jw_link *out, size_t *n);

/*
 * Attaches the waits' kernel hooks into @out (JW_WAIT_TP_LINKS), their number in @n, their
 * kind in @kind: fexit where loaded (one the kernel refuses to attach is said at -v, and the
 * tracepoints taken from then on), else the tracepoints. The tracepoints' ids are read once and
 * kept in @a; a kernel that has none, or a tracefs that cannot be read, takes raw_syscalls,
 * said once at -v. With @cost_only, the tracepoints, only the exit of one, epoll_pwait's: what
 * any other system call pays is the same with one as with all, and a wait's exit runs the same
 * program on any of them (wait_tracepoints=2's measurement times an epoll_pwait); each link
 * takes a grace period to go. 0, or -errno with nothing attached.
 */
int jw_wait_tp_attach(struct jw_attach *a, struct jw_link *out, size_t *n,
		      enum jw_wait_tp_kind *kind, bool cost_only);

#endif
