/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The defaults that keep a jank from being reported, or its files from being written, said once
 * in a run to a person at a terminal, with the setting that changes them: the start-up window
 * (ignore_startup_time), the stack logs' budget (report_times_per_app) and the back-off of a
 * group's repeats. The service's log (no terminal) is spared them; the summary counts them all.
 */
#ifndef JW_DEFAULTS_SAID_H
#define JW_DEFAULTS_SAID_H

#include <stdbool.h>
#include <stdint.h>

#include "config/params.h"
#include "policy/policy.h"

/* What was said already in this run. */
struct jw_defaults_said {
	bool early, budget, back_off;
};

/*
 * A task of @wall_ms, over the threshold, not reported: it began @after_s seconds after its
 * process (@name, @pid) started, inside ignore_startup_time. Said the first time only.
 */
void jw_say_early(struct jw_defaults_said *s, const struct jw_params *params, const char *name,
		  uint32_t pid, double wall_ms, double after_s);

/*
 * A jank of @name (@pid, its group @group, may be NULL) whose files @why withheld (the budget or
 * the back-off; other reasons are said elsewhere); @window_s the budgets' window (a day, or an
 * hour with --dev). Said the first time of each reason only.
 */
void jw_say_withheld(struct jw_defaults_said *s, const struct jw_params *params,
		     enum jw_withheld why, uint64_t window_s, const char *name, uint32_t pid,
		     const char *group);

#endif
