/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wait_tracepoints=2: measures, on this machine and at this moment, the figures waitmode.h
 * chooses from. The tracepoints' cost per system call: getppid() timed without and with syscall
 * mode's sys_enter/sys_exit programs. The uprobes' cost per wait: a function of this process
 * timed without and with the wait programs' uprobe pair on it, on the kind of instruction the
 * watched wait functions' probes sit on (emulated, or single-stepped). The rates: the machine's
 * system calls and the watched threads' waits, counted for JW_WAIT_RATE_MS. About 0.35 s in all,
 * before any thread is watched.
 */
#ifndef JW_WAITCOST_H
#define JW_WAITCOST_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "attach/attach.h"
#include "attach/waitmode.h"

#define JW_WAIT_RATE_MS 300

/*
 * Fills @out for threads @tids (at most JW_MAX_RATE_TIDS count) whose wait functions' probes sit
 * on an emulated instruction when @emulated. A cost that cannot be measured is left < 0, and
 * rates that cannot be counted leave an empty window. Returns 0; the reasons go to stderr.
 */
int jw_wait_costs_measure(struct jw_attach *a, const pid_t *tids, size_t n, bool emulated,
			  struct jw_wait_costs *out);

#endif
