// SPDX-License-Identifier: GPL-2.0-only
#include <inttypes.h>
#include <string.h>

#include "report/lost.h"

/* The programs that run on the scheduler's events: a skipped run leaves a switch unseen. */
static bool on_scheduler(const char *prog)
{
	return !strncmp(prog, "on_sched_", 9);
}

/* "N runs of its programs the kernel skipped (name N, ...)", and what they mean. */
static void misses_line(const struct jw_prog_misses *m, struct jw_buf *b)
{
	const char *sep = "";
	bool sched = false;
	size_t i;

	jw_buf_printf(b, "the kernel skipped %" PRIu64 " run%s of jankwatch's programs (one was "
		      "already running on that CPU: ", m->total, m->total == 1 ? "" : "s");
	for (i = 0; i < m->n; i++) {
		if (!m->prog[i].runs)
			continue;
		jw_buf_printf(b, "%s%s %" PRIu64, sep, m->prog[i].name, m->prog[i].runs);
		sched |= on_scheduler(m->prog[i].name);
		sep = ", ";
	}
	jw_buf_puts(b, sched ? "): a task's off-CPU split may have missed a context switch\n" :
			       ")\n");
}

size_t jw_lost_lines(const struct jw_lost *l, struct jw_buf *b)
{
	const uint64_t *d = l->drops;
	size_t lines = 0;

	if (d[JW_DROP_TRACE] || l->trace_lost) {
		jw_buf_printf(b, "trace logs might be incomplete: lost %" PRIu64 " scheduler events "
			      "(ring buffer full), %" PRIu64 " (trace buffers full)\n",
			      d[JW_DROP_TRACE], l->trace_lost);
		lines++;
	}
	if (d[JW_DROP_TASK] || d[JW_DROP_SAMPLE] || d[JW_DROP_STATE] || l->lost_samples ||
	    l->write_errors) {
		jw_buf_printf(b, "output might be incomplete: lost %" PRIu64 " task records, %" PRIu64
			      " samples (ring buffer full), %" PRIu64 " thread states, %" PRIu64
			      " samples (memory), %" PRIu64 " file writes\n", d[JW_DROP_TASK],
			      d[JW_DROP_SAMPLE], d[JW_DROP_STATE], l->lost_samples, l->write_errors);
		lines++;
	}
	if (d[JW_DROP_SWITCH]) {
		jw_buf_printf(b, "the kernel kept %" PRIu64 " context switch%s of watched threads "
			      "inside tasks from jankwatch: a jank's time off the CPU then comes from "
			      "the kernel's counts, where it slept only from a switch out seen "
			      "(offcpu_partial in its event)\n", d[JW_DROP_SWITCH],
			      d[JW_DROP_SWITCH] == 1 ? "" : "es");
		lines++;
	}
	if (d[JW_DROP_WAKING]) {
		jw_buf_printf(b, "%" PRIu64 " sleep%s of watched threads inside tasks ended with no "
			      "wakeup seen (a program's run skipped, or the kernel kept it from "
			      "tracing): what woke %s is not known (waker null in its event)\n",
			      d[JW_DROP_WAKING], d[JW_DROP_WAKING] == 1 ? "" : "s",
			      d[JW_DROP_WAKING] == 1 ? "it" : "them");
		lines++;
	}
	if (l->misses.total) {
		misses_line(&l->misses, b);
		lines++;
	}
	return lines;
}
