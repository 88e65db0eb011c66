/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The jank policy, pure: a finished task in, a decision out. Thresholds per log_type, the
 * startup window, the per-process report budget; and the choice of evenly spaced samples.
 */
#ifndef JW_POLICY_H
#define JW_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "options.h"

enum jw_verdict {
	JW_VERDICT_NONE = 0,	/* not a jank, or inside the startup window: nothing */
	JW_VERDICT_EVENT,	/* a jank whose files a budget withholds: the event line only */
	JW_VERDICT_STACK,	/* a jank that gets a stack log */
	JW_VERDICT_TRACE,	/* a jank over the trace threshold that gets a trace */
};

struct jw_task_facts {
	uint32_t pid;
	uint32_t uid;
	uint64_t wall_ns;
	uint64_t begin_boot_ns;		/* the task's start, CLOCK_BOOTTIME */
	uint64_t proc_start_boot_ns;	/* the process's start, CLOCK_BOOTTIME */
	uint64_t now_s;			/* wall clock, seconds, for the budget windows */
};

struct jw_policy;

/* NULL with errno set. @params must have been through jw_params_finish(). */
struct jw_policy *jw_policy__new(const struct jw_params *params, bool all, bool dev);
void jw_policy__free(struct jw_policy *p);	/* NULL-safe */

/* The lowest threshold in force, ns: tasks under it never need to leave the kernel. */
uint64_t jw_policy__min_threshold_ns(const struct jw_params *params);

/* Decides what @t gets, and spends the budget it uses. */
enum jw_verdict jw_policy__decide(struct jw_policy *p, const struct jw_task_facts *t);

/*
 * A task still running (@t's wall_ns so far): a hang once past hang_ms, outside the startup
 * window. It gets the stacks so far (JW_VERDICT_STACK) within a budget of its own,
 * report_times_per_app hangs per process per day (hour with --dev); past it, the event only.
 */
enum jw_verdict jw_policy__decide_hang(struct jw_policy *p, const struct jw_task_facts *t);

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
