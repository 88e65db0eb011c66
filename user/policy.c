// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>

#include "policy.h"

#define MAX_BUDGET_PIDS 1024

/* Reports spent by one process (stack logs) or one uid (traces) in the current window. */
struct budget {
	uint32_t id;
	uint32_t used;
	uint64_t window_start_s;
};

struct jw_policy {
	struct jw_params params;
	bool all;
	uint64_t window_s;		/* a day, or an hour in developer mode */
	struct budget stack_budgets[MAX_BUDGET_PIDS];	/* by pid */
	size_t n_stack_budgets;
	struct budget trace_budgets[MAX_BUDGET_PIDS];	/* by uid */
	size_t n_trace_budgets;
	struct budget hang_budgets[MAX_BUDGET_PIDS];	/* by pid */
	size_t n_hang_budgets;
};

struct jw_policy *jw_policy__new(const struct jw_params *params, bool all, bool dev)
{
	struct jw_policy *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->params = *params;
	p->all = all;
	p->window_s = dev ? 3600 : 86400;
	return p;
}

void jw_policy__free(struct jw_policy *p)
{
	free(p);
}

/* The jank threshold: sample_interval under log_type 1, threshold_ms otherwise. */
static uint64_t jank_threshold_ns(const struct jw_params *params)
{
	int64_t ms = params->v[JW_P_LOG_TYPE] == 1 ? params->v[JW_P_SAMPLE_INTERVAL] :
						    params->v[JW_P_THRESHOLD_MS];

	return (uint64_t)ms * 1000000;
}

uint64_t jw_policy__min_threshold_ns(const struct jw_params *params)
{
	uint64_t min = jank_threshold_ns(params);

	if (params->burst.on && (uint64_t)params->burst.over_ms * 1000000 < min)
		min = (uint64_t)params->burst.over_ms * 1000000;
	return min;
}

static struct budget *budget_of(struct budget *budgets, size_t *n, uint32_t id)
{
	size_t i, oldest = 0;

	for (i = 0; i < *n; i++) {
		if (budgets[i].id == id)
			return &budgets[i];
		if (budgets[i].window_start_s < budgets[oldest].window_start_s)
			oldest = i;
	}
	/* Full: reuse the slot whose window started longest ago. */
	i = *n < MAX_BUDGET_PIDS ? (*n)++ : oldest;
	budgets[i] = (struct budget){ .id = id };
	return &budgets[i];
}

/* Spends one report of @b; false when @limit are already spent in this window. */
static bool spend(struct budget *b, uint64_t limit, uint64_t window_s, uint64_t now_s)
{
	/* A clock stepped back (now before the window's start) starts a new window too. */
	if (!b->window_start_s || now_s >= b->window_start_s + window_s ||
	    now_s < b->window_start_s) {
		b->window_start_s = now_s ? now_s : 1;
		b->used = 0;
	}
	if (b->used >= limit)
		return false;
	b->used++;
	return true;
}

enum jw_verdict jw_policy__decide(struct jw_policy *p, const struct jw_task_facts *t)
{
	uint64_t startup_ns = (uint64_t)p->params.v[JW_P_IGNORE_STARTUP_TIME] * 1000000000;
	uint64_t trace_ns = (uint64_t)p->params.v[JW_P_TRACE_THRESHOLD_MS] * 1000000;
	int64_t log_type = p->params.v[JW_P_LOG_TYPE];
	enum jw_verdict want;
	struct budget *b;
	uint64_t limit;

	if (t->wall_ns <= jank_threshold_ns(&p->params))
		return JW_VERDICT_NONE;
	if (t->begin_boot_ns < t->proc_start_boot_ns + startup_ns)
		return JW_VERDICT_NONE;
	if (log_type == 1)
		want = JW_VERDICT_STACK;
	else if (log_type == 2)
		want = JW_VERDICT_TRACE;
	else
		want = t->wall_ns <= trace_ns ? JW_VERDICT_STACK : JW_VERDICT_TRACE;
	if (p->all)
		return want;
	/* Stack logs: report_times_per_app per process; traces: one per uid. */
	if (want == JW_VERDICT_STACK)
		b = budget_of(p->stack_budgets, &p->n_stack_budgets, t->pid);
	else
		b = budget_of(p->trace_budgets, &p->n_trace_budgets, t->uid);
	limit = want == JW_VERDICT_STACK ? p->params.v[JW_P_REPORT_TIMES_PER_APP] : 1;
	return spend(b, limit, p->window_s, t->now_s) ? want : JW_VERDICT_EVENT;
}

enum jw_verdict jw_policy__decide_hang(struct jw_policy *p, const struct jw_task_facts *t)
{
	uint64_t startup_ns = (uint64_t)p->params.v[JW_P_IGNORE_STARTUP_TIME] * 1000000000;
	struct budget *b;

	if (t->wall_ns < (uint64_t)p->params.v[JW_P_HANG_MS] * 1000000)
		return JW_VERDICT_NONE;
	if (t->begin_boot_ns < t->proc_start_boot_ns + startup_ns)
		return JW_VERDICT_NONE;
	if (p->all)
		return JW_VERDICT_STACK;
	b = budget_of(p->hang_budgets, &p->n_hang_budgets, t->pid);
	return spend(b, p->params.v[JW_P_REPORT_TIMES_PER_APP], p->window_s, t->now_s) ?
		       JW_VERDICT_STACK : JW_VERDICT_EVENT;
}

size_t jw_pick_evenly(size_t n, size_t k, size_t *idx)
{
	size_t i;

	if (k >= n) {
		for (i = 0; i < n; i++)
			idx[i] = i;
		return n;
	}
	for (i = 0; i < k; i++)
		idx[i] = (2 * i + 1) * n / (2 * k);
	return k;
}

uint64_t jw_pick_weighted(const uint32_t *weights, size_t n, size_t k, uint32_t *counts)
{
	uint64_t total = 0, below = 0;
	size_t i, j;

	for (i = 0; i < n; i++)
		total += weights[i];
	if (total <= k) {
		for (i = 0; i < n; i++)
			counts[i] = weights[i];
		return total;
	}
	for (i = 0; i < n; i++)
		counts[i] = 0;
	/* The middle of each of k equal spans; i walks forward to the sample holding it. */
	for (i = 0, j = 0; j < k; j++) {
		uint64_t at = ((2 * (uint64_t)j + 1) * total) / (2 * k);

		while (i < n && below + weights[i] <= at)
			below += weights[i++];
		if (i < n)
			counts[i]++;
	}
	return k;
}
