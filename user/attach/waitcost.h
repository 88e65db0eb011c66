/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wait_tracepoints=2: measures, on this machine and at this moment, the figures waitmode.h
 * chooses from. The tracepoints' cost per system call: getppid() timed without and with syscall
 * mode's sys_enter/sys_exit programs. The uprobes' cost per wait: a function of this process
 * timed without and with the wait programs' uprobe pair on it, on the kind of instruction the
 * watched wait functions' probes sit on (emulated, or single-stepped), each call right after a
 * sleep, as a wait's return comes. The rates: the machine's system calls and the watched
 * threads' waits, counted for JW_WAIT_RATE_MS. About 0.6 s in all,
 * at start before any thread is watched; the rates again as the loops run, and the tracepoints'
 * rounds again while their reads leave the choice unsure (session_waits.h, waitmode.h).
 */
#ifndef JW_WAITCOST_H
#define JW_WAITCOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
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

/* Only the costs per call (tp_ns, up_ns) of @out: not while the tracepoints are attached. */
void jw_wait_unit_costs(struct jw_attach *a, bool emulated, struct jw_wait_costs *out);

/*
 * A trial more of the tracepoints, its rounds added to @out's reads (jw_wait_tp_unsure()): not
 * while they are attached.
 */
void jw_wait_tp_again(struct jw_attach *a, struct jw_wait_costs *out);

/* The rates, counted while jankwatch's loop goes on: from a start to an end. */
struct jw_wait_count {
	uint64_t before[JW_RATE_COUNT];
	double t0_ns;
	pid_t tids[JW_MAX_RATE_TIDS];
	size_t n_tids;
	bool on;
};

/*
 * Begins counting the machine's system calls and threads @tids' waits into @wc. 0, or -errno
 * with nothing counting.
 */
int jw_wait_count_start(struct jw_attach *a, const pid_t *tids, size_t n,
			struct jw_wait_count *wc);

/* Ends @wc's count: the window and the rates into @out (an empty window if it failed). */
void jw_wait_count_end(struct jw_attach *a, struct jw_wait_count *wc, struct jw_wait_costs *out);

#endif
