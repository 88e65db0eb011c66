// SPDX-License-Identifier: GPL-2.0-only
/* The jank event: one JSON object a line, in the order of SPEC's field table. */
#include <inttypes.h>
#include <math.h>

#include "report/report_event.h"

#define MS_DECIMALS 3

/* Starts a member: the comma before every member but the first, then "key":. */
static void str_field(struct jw_buf *b, const char *name, const char *v)
{
	jw_json_key(b, name, false);
	jw_json_str(b, v);
}

static void ms_field(struct jw_buf *b, const char *name, double v, bool known)
{
	jw_json_key(b, name, false);
	if (known)
		jw_json_num(b, v, MS_DECIMALS);
	else
		jw_buf_puts(b, "null");
}

static void external_log_field(struct jw_buf *b, const struct jw_event *e)
{
	size_t i;

	jw_json_key(b, "external_log", false);
	jw_buf_putc(b, '[');
	for (i = 0; e->external_log && i < e->n_external_log; i++) {
		if (i)
			jw_buf_putc(b, ',');
		jw_json_str(b, e->external_log[i]);
	}
	jw_buf_putc(b, ']');
}

void jw_event_format(const struct jw_event *e, struct jw_buf *b)
{
	jw_buf_putc(b, '{');
	jw_json_key(b, "event", true);
	jw_json_str(b, e->event);
	jw_json_u64_field(b, "time", e->time_ms);
	str_field(b, "bundle_name", e->bundle_name);
	str_field(b, "bundle_version", e->bundle_version);
	jw_json_u64_field(b, "pid", e->pid);
	jw_json_u64_field(b, "uid", e->uid);
	jw_json_u64_field(b, "tid", e->tid);
	jw_json_u64_field(b, "begin_time", e->begin_time_ms);
	jw_json_u64_field(b, "end_time", e->end_time_ms);
	external_log_field(b, e);
	jw_json_key(b, "log_over_limit", false);
	jw_buf_puts(b, e->log_over_limit ? "true" : "false");
	str_field(b, "withheld", e->withheld);
	jw_json_u64_field(b, "app_start_jiffies_time", e->app_start_jiffies_time);
	str_field(b, "heaviest_stack", e->heaviest_stack);
	str_field(b, "handler", e->handler);
	if (e->handler_class)
		str_field(b, "handler_class", e->handler_class);
	if (e->loop)
		str_field(b, "loop", e->loop);
	ms_field(b, "wall_ms", e->wall_ms, true);
	ms_field(b, "cpu_ms", e->cpu_ms, e->has_offcpu);
	ms_field(b, "runq_ms", e->runq_ms, e->has_offcpu);
	ms_field(b, "blocked_ms", e->blocked_ms, e->has_offcpu);
	ms_field(b, "io_ms", e->io_ms, e->has_offcpu);
	ms_field(b, "delay_ms", e->delay_ms, e->has_delay);
	str_field(b, "waker", e->waker);
	str_field(b, "cause", e->cause);
	str_field(b, "group", e->group);
	if (e->burst)
		jw_json_u64_field(b, "burst", e->burst);
	jw_json_u64_field(b, "samples", e->samples);
	jw_json_u64_field(b, "dropped", e->dropped);
	jw_buf_puts(b, "}\n");
}

/* A share that cannot win: NaN, infinities and negative times count as nothing. */
static double share(double v)
{
	return isfinite(v) && v > 0 ? v : 0;
}

const char *jw_event_cause(double cpu_ms, double runq_ms, double blocked_ms, double io_ms)
{
	/* blocked_ms includes the IO wait; the cause "blocked" is the sleeping that is not IO. */
	const double v[] = {
		share(cpu_ms),
		share(runq_ms),
		share(share(blocked_ms) - share(io_ms)),
		share(io_ms),
	};
	static const char *const names[] = { "cpu", "runqueue", "blocked", "io" };
	size_t i, best = 0;

	/* Strictly greater, so a tie keeps the earlier name. */
	for (i = 1; i < sizeof(v) / sizeof(v[0]); i++)
		if (v[i] > v[best])
			best = i;
	return names[best];
}
