// SPDX-License-Identifier: GPL-2.0-only
#include "base/log.h"
#include "report/defaults_said.h"

void jw_say_early(struct jw_defaults_said *s, const struct jw_params *params, const char *name,
		  uint32_t pid, double wall_ms, double after_s)
{
	if (s->early)
		return;
	s->early = true;
	jw_log(JW_LOG_INFO, "%s (pid %u): a %.0f ms task is not reported: it began %.1f s after "
	       "the process started, inside the start-up window (ignore_startup_time=%lld; "
	       "--set ignore_startup_time=3 is the least); said once", name, pid, wall_ms, after_s,
	       (long long)params->v[JW_P_IGNORE_STARTUP_TIME]);
}

void jw_say_withheld(struct jw_defaults_said *s, const struct jw_params *params,
		     enum jw_withheld why, uint64_t window_s, const char *name, uint32_t pid,
		     const char *group)
{
	const char *per = window_s <= 3600 ? "an hour (--dev)" : "a day";

	if (why == JW_WITHHELD_BUDGET && !s->budget) {
		s->budget = true;
		jw_log(JW_LOG_INFO, "%s (pid %u): a jank's files are withheld, its event line "
		       "written: a process gets report_times_per_app=%lld stack logs %s, and its "
		       "uid one trace (--all lifts the budgets and the back-off); said once", name,
		       pid, (long long)params->v[JW_P_REPORT_TIMES_PER_APP], per);
	} else if (why == JW_WITHHELD_BACK_OFF && !s->back_off) {
		s->back_off = true;
		jw_log(JW_LOG_INFO, "%s (pid %u): a jank's files are withheld, its event line "
		       "written: a repeat of group %s, whose files go to its 1st, 2nd, 3rd, 5th, 8th, "
		       "13th... occurrence (--all lifts the budgets and the back-off); said once",
		       name, pid, group && *group ? group : "(none)");
	}
}
