/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One slow task in, its report out: the policy's verdict, the samples thinned and named, the
 * stack log written, and the event line printed and appended.
 */
#ifndef JW_REPORT_H
#define JW_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/clocks.h"
#include "config/options.h"
#include "jankwatch/abi.h"
#include "output/logdir.h"
#include "policy/policy.h"
#include "report/proc.h"
#include "stacks/ksyms.h"
#include "stacks/stacks.h"

struct jw_event;

struct jw_tracer;

struct jw_report_counts {
	uint64_t janks;		/* jank event lines */
	uint64_t by_cause[4];	/* of them, by cause: cpu, runqueue, blocked, io */
	uint64_t hangs;		/* hang event lines */
	uint64_t traces;	/* janks decided for a trace report */
	uint64_t stack_logs;	/* files written */
	uint64_t profiles;	/* pprof profiles written (--format pprof) */
	uint64_t flamegraphs;	/* flame graphs written (--format svg) */
	uint64_t withheld;	/* janks whose files a budget or the quota withheld */
	uint64_t withheld_budget, withheld_back_off;	/* of them, by the budgets, the back-off */
	uint64_t early;		/* tasks over the threshold in their process's start-up window */
	uint64_t write_errors;
};

struct jw_reporter_opts {
	const struct jw_params *params;	/* sample_count; read at each report (SIGHUP changes it) */
	enum jw_format format;		/* of the stack logs */
	bool pprof;			/* a profile beside each jank's stack log or trace */
	bool svg;			/* a flame graph beside each jank's stack log */
	bool say_defaults;		/* a person at a terminal: what the defaults withhold is said
					 * once (report/defaults_said.c) */
	struct jw_policy *policy;
	struct jw_logdir *logdir;
	const struct jw_ksyms *ksyms;	/* may be NULL: kernel frames by address */
	struct jw_stacks *stacks;	/* names the samples' frames */
	FILE *out;			/* event lines, flushed one by one; NULL: none (top) */
	FILE *raw;			/* --raw: the capture, header written; or NULL */
	/* The offsets times convert with: the session's, read again as it runs, or a capture's
	 * recorded ones; NULL: those of the reporter's start. */
	const struct jw_clocks *clocks;
	/* Called with each event as written (its line bounded), the line's @len bytes. */
	void (*on_event)(void *ctx, const struct jw_event *e, const char *line, size_t len);
	void *on_event_ctx;
};

struct jw_reporter;

struct jw_reporter *jw_reporter__new(const struct jw_reporter_opts *opts);
void jw_reporter__free(struct jw_reporter *r);	/* NULL-safe */

/*
 * Reports task @t of @proc with its @n samples (the records, in time order). When naming its
 * stacks asked debuginfod for a debug file not there yet, the report is held (a copy of the
 * samples) until jw_reporter__flush() finds the fetches done or 5 s gone. Returns 0, or
 * -errno when the event could not be written at all.
 */
int jw_reporter__task(struct jw_reporter *r, struct jw_proc *proc, const struct jw_task_rec *t,
		      void *const *samples, size_t n);

/*
 * Writes the held reports whose debug files came, or whose wait is over; with @proc, every one
 * of that process's (it is going, with its symbols); with @all, every one.
 */
void jw_reporter__flush(struct jw_reporter *r, const struct jw_proc *proc, bool all);

/*
 * Reports task @t, still running past hang_ms (JW_TASK_HANG; end_ns: now), with the samples so
 * far, as a MAIN_THREAD_HANG event. Returns 0 or -errno.
 */
int jw_reporter__hang(struct jw_reporter *r, struct jw_proc *proc, const struct jw_task_rec *t,
		      void *const *samples, size_t n);

/*
 * Reports task @t again from a raw capture: @verdict and @time_ms as recorded live, @samples
 * the kept ones with their recorded weights. Returns 0 or -errno.
 */
int jw_reporter__replay(struct jw_reporter *r, struct jw_proc *proc, const struct jw_task_rec *t,
			void *const *samples, size_t n, enum jw_verdict verdict, uint64_t time_ms);

/* Trace verdicts keep their windows in @t from now on (NULL: no trace logs). */
void jw_reporter__set_tracer(struct jw_reporter *r, struct jw_tracer *t);

/*
 * Names kernel frames with @ks from now on, in the stacks too (a raw capture carries its own per
 * report).
 */
void jw_reporter__set_ksyms(struct jw_reporter *r, const struct jw_ksyms *ks);

const struct jw_report_counts *jw_reporter__counts(const struct jw_reporter *r);

/* The process's name as events give it (bundle_name): its executable's, or its comm. */
const char *jw_report_bundle_name(const struct jw_proc *proc);

#endif
