/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Trace windows: what the trace log of a long jank holds, gathered while it happens. A window
 * opens when a task still running crosses the trace threshold (or, when that was missed, at
 * its end) and covers the next 3 s: the kernel then sends the process's context switches,
 * wakeups and task slices, and the samples of its loop thread are kept. With the flight
 * recorder on, those events are kept for the last N seconds at all times, so the window starts
 * N seconds earlier. A window is written (trace-*.ftrace and trace-*.perf.txt) once it closed
 * and its task was decided for a trace; otherwise it is dropped.
 */
#ifndef JW_TRACE_H
#define JW_TRACE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sys/types.h>

#include "base/clocks.h"
#include "jankwatch/abi.h"
#include "output/logdir.h"
#include "report/proc.h"
#include "stacks/stacks.h"

struct jw_tracer_opts {
	uint64_t window_ns;		/* how long a window lasts from its opening */
	uint64_t flight_ns;		/* flight_recorder_s; 0: off */
	struct jw_logdir *logdir;	/* may be NULL: nothing is written */
	/* Starts (@on) or stops the kernel's trace events of process @pid; 0 or -errno. NULL: none. */
	int (*kernel_events)(void *ctx, pid_t pid, bool on);
	void *ctx;			/* kernel_events' */
	struct jw_stacks *stacks;	/* names the samples */
	const struct jw_clocks *clocks;	/* names the files after the wall clock */
};

/* Every function takes a NULL tracer (traces are off: log_type 1) and does nothing. */
struct jw_tracer;

struct jw_tracer *jw_tracer__new(const struct jw_tracer_opts *opts);

/*
 * Writes the windows decided for a trace, even unfinished, drops the rest, and stops every
 * process's events (the session is ending).
 */
void jw_tracer__flush(struct jw_tracer *t);

/* jw_tracer__flush(), then frees. NULL-safe. */
void jw_tracer__free(struct jw_tracer *t);

/*
 * A reload's flight_recorder_s (0: off). On: the processes the tracer knows keep their events
 * from now on (jw_tracer__watch() adds the others). Off: the events kept outside a window are
 * dropped and stop; a window under way ends as it would have. Longer or shorter: the next
 * window reaches back that far, as far as what is kept goes.
 */
void jw_tracer__set_flight(struct jw_tracer *t, uint64_t flight_ns);

/* A process is watched: with the flight recorder on, its events are kept from now on. */
void jw_tracer__watch(struct jw_tracer *t, struct jw_proc *proc);

/* A process is forgotten: its window is written if decided, and its events stop. */
void jw_tracer__forget(struct jw_tracer *t, pid_t pid);

/* Records from the kernel. */
void jw_tracer__sched(struct jw_tracer *t, const struct jw_sched_rec *rec);
void jw_tracer__slice(struct jw_tracer *t, const struct jw_slice_rec *rec);
void jw_tracer__sample(struct jw_tracer *t, const struct jw_sample_rec *rec);

/*
 * Task @seq of @proc's thread @tid, begun at @start_ns, crossed the trace threshold at @now_ns
 * and still runs: opens a window, with the task's samples so far (@held, @n). No-op when the
 * process has a window already. 0 or -errno.
 */
int jw_tracer__open(struct jw_tracer *t, struct jw_proc *proc, uint32_t tid, uint64_t seq,
		    uint64_t start_ns, uint64_t now_ns, void *const *held, size_t n);

/*
 * Task @task of @proc was decided for a trace: its window is kept (opened now, from its end,
 * if none was), with @handler naming its slice and @samples its samples. The files' paths go
 * into @paths; returns how many (0 when nothing can be written).
 */
size_t jw_tracer__keep(struct jw_tracer *t, struct jw_proc *proc, const struct jw_task_rec *task,
		       const char *handler, void *const *samples, size_t n,
		       char paths[2][PATH_MAX]);

/* Task @seq of process @pid ended without being kept: a window opened for it is dropped. */
void jw_tracer__settle(struct jw_tracer *t, pid_t pid, uint64_t seq);

/* Closes the windows due at @now_ns and writes the ones kept. */
void jw_tracer__tick(struct jw_tracer *t, uint64_t now_ns);

/* Trace files written, and events lost to a full buffer. */
uint64_t jw_tracer__written(const struct jw_tracer *t);
uint64_t jw_tracer__lost(const struct jw_tracer *t);

#endif
