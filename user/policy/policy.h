/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The jank policy, pure: a finished task in, a decision out. Thresholds per log_type, the
 * startup window, the Fibonacci back-off of repeated groups, the report budgets (saved and
 * loaded as text, so that they outlive a restart); and the choice of evenly spaced samples.
 */
#ifndef JW_POLICY_H
#define JW_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/params.h"

enum jw_verdict {
	JW_VERDICT_NONE = 0,	/* not a jank, or inside the startup window: nothing */
	JW_VERDICT_EVENT,	/* a jank whose files a budget withholds: the event line only */
	JW_VERDICT_STACK,	/* a jank that gets a stack log */
	JW_VERDICT_TRACE,	/* a jank over the trace threshold that gets a trace */
};

/* Why a jank's files were not written. */
enum jw_withheld {
	JW_WITHHELD_NONE = 0,
	JW_WITHHELD_BACK_OFF,	/* a repeat of its group between two Fibonacci occurrences */
	JW_WITHHELD_BUDGET,	/* its process's stack logs (or its uid's traces) spent */
	JW_WITHHELD_QUOTA,	/* the log directory's quota reached */
	JW_WITHHELD_TRACE_WINDOW,	/* a trace decided while another trace's window was open */
};

/* The event's name of @w ("back_off", "budget", "quota", "trace_window"), or NULL for none. */
const char *jw_withheld_name(enum jw_withheld w);

struct jw_task_facts {
	uint32_t pid;
	uint32_t uid;
	uint64_t wall_ns;
	uint64_t begin_boot_ns;		/* the task's start, CLOCK_BOOTTIME */
	uint64_t proc_start_boot_ns;	/* the process's start, CLOCK_BOOTTIME */
	uint64_t now_s;			/* wall clock, seconds, for the budget windows */
	const char *group;		/* the group key (SPEC F13); NULL or "": no back-off */
	/* Filled by jw_policy__triage() (decide() calls it when it was not): */
	bool triaged;
	bool jank;			/* over the jank threshold, past the startup window */
	bool early;			/* over the jank threshold, inside the startup window */
	uint32_t burst;			/* it completed a burst (burst=N/T/W) of this many */
	/* Filled by the decisions: the budget a file for it spends once written (0: none). */
	uint8_t budget;
	/* And why a jank gets its event only (JW_VERDICT_EVENT). */
	enum jw_withheld withheld;
};

struct jw_policy;

/* The budgets' window, in seconds: a day, or an hour with --dev. */
uint64_t jw_policy__window_s(const struct jw_policy *p);

/* NULL with errno set. @params must have been through jw_params_finish(). */
struct jw_policy *jw_policy__new(const struct jw_params *params, bool all, bool dev);
void jw_policy__free(struct jw_policy *p);	/* NULL-safe */

/* New parameters (a reload); the budgets and back-off counts spent so far are kept. */
void jw_policy__set_params(struct jw_policy *p, const struct jw_params *params);

/* The lowest threshold in force, ns: tasks under it never need to leave the kernel. */
uint64_t jw_policy__min_threshold_ns(const struct jw_params *params);

/*
 * Whether @t is a jank at all: over the jank threshold, past its process's startup window; or
 * the task that completes a burst (N tasks over T ms within W s in one process, burst=N/T/W),
 * after which the burst's count starts again. Counts @t toward its process's burst once, and
 * notes the answer in @t. Returns whether @t is reported.
 */
bool jw_policy__triage(struct jw_policy *p, struct jw_task_facts *t);

/*
 * Decides what @t gets. Files (a stack log or a trace) are for the 1st, 2nd, 3rd, 5th, 8th, ...
 * jank of a group in a process, within the budgets: report_times_per_app stack logs per process
 * and one trace per uid, a day (an hour with --dev). Otherwise the event only. --all lifts
 * back-off and budgets. A budget is spent only by jw_policy__written(), once the file is.
 */
enum jw_verdict jw_policy__decide(struct jw_policy *p, struct jw_task_facts *t);

/*
 * The file decided for @t was written (or, for a trace, taken into a window that writes it):
 * spends the budget the decision found room in. Nothing for a file that was not, nor twice.
 */
void jw_policy__written(struct jw_policy *p, struct jw_task_facts *t);

/* Whether a budget was spent since the last jw_policy__save(). */
bool jw_policy__changed(const struct jw_policy *p);

/*
 * Writes the budgets spent, one "KIND ID START USED WINDOW_START" line each (stack, hang: by
 * pid and process start; trace: by uid), into @buf as snprintf does. Returns the length the
 * whole text needs.
 */
size_t jw_policy__save(struct jw_policy *p, char *buf, size_t len);

/* Loads budgets saved by jw_policy__save(); bad lines are skipped. Returns the lines loaded. */
int jw_policy__load(struct jw_policy *p, const char *text);

/*
 * The wall time past which a task still running opens a trace window: trace_threshold_ms under
 * log_type 0, threshold_ms under 2; 0 under log_type 1, which writes no traces.
 */
uint64_t jw_policy__trace_from_ns(const struct jw_params *params);

/*
 * Whether a task of @t's process (pid, uid, begin, process start, now) might still be decided
 * for a trace: traces are on, it is past the startup window, and the uid's trace budget is not
 * spent (or --all). Spends nothing: the decision is jw_policy__decide()'s, at the task's end.
 */
bool jw_policy__trace_possible(const struct jw_policy *p, const struct jw_task_facts *t);

/*
 * A task still running (@t's wall_ns so far): a hang once past hang_ms, outside the startup
 * window. It gets the stacks so far (JW_VERDICT_STACK) within a budget of its own,
 * report_times_per_app hangs per process per day (hour with --dev); past it, the event only.
 * The budget is spent by jw_policy__written(), as for jw_policy__decide().
 */
enum jw_verdict jw_policy__decide_hang(struct jw_policy *p, struct jw_task_facts *t);

/*
 * Picks @k of @n items evenly spaced (the middle of each of @k equal spans) into @idx, in
 * increasing order. Returns how many were picked: min(n, k).
 */
size_t jw_pick_evenly(size_t n, size_t k, size_t *idx);

/*
 * Picks @k sampling periods evenly spaced over @n samples in time order, sample i standing for
 * @weights[i] periods; @counts[i] receives how many picked periods fall in sample i. When the
 * samples hold @k periods or fewer, every period is kept (counts = weights). Returns the total.
 */
uint64_t jw_pick_weighted(const uint32_t *weights, size_t n, size_t k, uint32_t *counts);

#endif
