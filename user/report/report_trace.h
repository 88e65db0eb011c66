/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The trace log: ftrace text as Perfetto's systrace importer reads it, and beside it the window's
 * stack samples as perf script text.
 */
#ifndef JW_REPORT_TRACE_H
#define JW_REPORT_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/frame.h"

#define JW_TRACE_FTRACE_SUFFIX	".ftrace"
#define JW_TRACE_PERF_SUFFIX	".perf.txt"

/* TASK_REPORT_MAX: sched_switch's prev_state bit for a task switched out while runnable. */
#define JW_TRACE_PREEMPTED	0x100

enum jw_trace_kind {
	JW_TRACE_BEGIN,		/* tracing_mark_write: B|<tgid>|H:<name> (a task slice begins) */
	JW_TRACE_END,		/* tracing_mark_write: E|<tgid>| */
	JW_TRACE_COUNTER,	/* tracing_mark_write: C|<tgid>|H:<name>|<value> */
	JW_TRACE_SWITCH,	/* sched_switch: prev is the line's thread */
	JW_TRACE_WAKING,	/* sched_waking: the line's thread is the waker; target the woken */
};

/*
 * One line of the ftrace log. Comms are at most 16 bytes (TASK_COMM_LEN) and need no NUL when
 * they fill all 16.
 */
struct jw_trace_event {
	uint64_t ts_ns;			/* CLOCK_MONOTONIC ns */
	enum jw_trace_kind kind;
	uint32_t cpu;			/* the CPU the line's thread runs on */
	uint32_t tid;			/* the line's thread: its <comm>-<tid> */
	uint32_t tgid;			/* the line thread's process; 0: unknown, written (-----) */
	char comm[16];			/* the line thread's comm; "": written <...> */
	const char *name;		/* BEGIN, COUNTER: the slice or counter; NULL: "" */
	int64_t value;			/* COUNTER */
	int32_t prio;			/* SWITCH: prev_prio; WAKING: the woken's (kernel prio) */
	/*
	 * SWITCH: TASK_REPORT bits as sched_switch's TP_printk takes them: 0 R, 0x01 S, 0x02 D,
	 * 0x04 T, 0x08 t, 0x10 X, 0x20 Z, 0x40 P, 0x80 I (bits joined by '|'), and
	 * JW_TRACE_PREEMPTED, written "R+" whatever other bits are set.
	 */
	uint32_t prev_state;
	uint32_t other_tid;		/* SWITCH: next_pid; WAKING: pid, the woken */
	char other_comm[16];		/* SWITCH: next_comm; WAKING: comm, the woken's */
	int32_t other_prio;		/* SWITCH: next_prio */
	uint32_t target_cpu;		/* WAKING: the CPU the woken will run on */
};

/*
 * Writes the "# tracer: nop" header and its column legend (lines that begin with '#'), then one
 * line per event in the order given (the caller sorts by ts_ns). A byte of a comm or a name that
 * would break the line grammar is written as '_'. Returns 0, -EINVAL for an unknown kind (before
 * anything is written) or -errno when the stream fails.
 */
int jw_trace_write_ftrace(FILE *f, const struct jw_trace_event *ev, size_t n);

/*
 * Writes one stack sample as perf script prints it: "<comm> <tid> <sec>.<usec>: 1 cpu-clock:",
 * one "\t<pc> <symbol>+0x<off> (<module>)" line per frame (leaf first), then a blank line. At
 * most 16 bytes of @comm are read. A JIT frame without a module is named, as perf names it,
 * /tmp/perf-<pid>.map ([jit] when @pid is 0). Returns 0 or -errno.
 */
int jw_trace_write_perf_sample(FILE *f, const char *comm, uint32_t pid, uint32_t tid,
			       uint64_t ts_ns, const struct jw_frame *frames, size_t n);

/*
 * The file name "trace-<pid>-<YYYYmmddHHMMSS>-<ms><suffix>" (local time) for a trace raised at
 * @time_ms, ms since the epoch; @suffix is JW_TRACE_FTRACE_SUFFIX or JW_TRACE_PERF_SUFFIX.
 */
void jw_trace_name(uint32_t pid, uint64_t time_ms, const char *suffix, char *buf, size_t len);

#endif
