// SPDX-License-Identifier: GPL-2.0-only
/* The jank event: one JSON object a line, in the order of SPEC's field table. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	if (e->offcpu_partial) {
		jw_json_key(b, "offcpu_partial", false);
		jw_buf_puts(b, "true");
	}
	ms_field(b, "delay_ms", e->delay_ms, e->has_delay);
	str_field(b, "waker", e->waker);
	str_field(b, "cause", e->cause);
	str_field(b, "group", e->group);
	if (e->burst)
		jw_json_u64_field(b, "burst", e->burst);
	jw_json_u64_field(b, "samples", e->samples);
	jw_json_u64_field(b, "dropped", e->dropped);
	if (e->jank_id)
		str_field(b, "jank_id", e->jank_id);
	jw_buf_puts(b, "}\n");
}

#define FRAME_SEP "<-"
#define TEXT_MARK "[...]"

/* The frames of a heaviest_stack: its separators plus one; 0 when empty. */
static size_t count_frames(const char *s)
{
	size_t n = 1;

	if (!s || !*s)
		return 0;
	while ((s = strstr(s, FRAME_SEP))) {
		n++;
		s += strlen(FRAME_SEP);
	}
	return n;
}

/* Stack @s (@n frames) with its first @keep frames and a marker of the rest, into @b. */
static void cut_stack(const char *s, size_t n, size_t keep, struct jw_buf *b)
{
	const char *end = s;
	size_t i;

	for (i = 0; i < keep; i++) {
		end = strstr(end, FRAME_SEP);
		end = end ? end + strlen(FRAME_SEP) : s + strlen(s);
	}
	jw_buf_reset(b);
	jw_buf_printf(b, "%.*s[+%zu frame%s]", (int)(end - s), s, n - keep, n - keep == 1 ? "" : "s");
}

/* @s cut to JW_EVENT_TEXT_CUT bytes, on a UTF-8 character's start, ending in TEXT_MARK. */
static const char *cut_text(const char *s, char *buf, size_t len)
{
	size_t n;

	if (!s || strlen(s) <= JW_EVENT_TEXT_CUT)
		return s;
	n = JW_EVENT_TEXT_CUT - strlen(TEXT_MARK);
	while (n && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	snprintf(buf, len, "%.*s%s", (int)n, s, TEXT_MARK);
	return buf;
}

/* A path longer than JW_EVENT_TEXT_CUT as its file name alone. */
static const char *cut_path(const char *s)
{
	const char *slash;

	if (!s || strlen(s) <= JW_EVENT_TEXT_CUT || !(slash = strrchr(s, '/')))
		return s;
	return slash + 1;
}

/* Formats @e after @start of @b; returns the line's length. */
static size_t format_at(const struct jw_event *e, struct jw_buf *b, size_t start)
{
	b->len = start;
	if (b->data)
		b->data[start] = 0;
	jw_event_format(e, b);
	return b->len - start;
}

bool jw_event_format_bounded(const struct jw_event *e, struct jw_buf *b, size_t max)
{
	char text[6][JW_EVENT_TEXT_CUT + 1];
	const char *paths[8], *const *old_paths;
	size_t start = b->len, n, lo, hi, i;
	struct jw_event c = *e;
	struct jw_buf stack;
	bool cut = false;

	if (!max)
		max = SIZE_MAX;
	if (format_at(e, b, start) <= max || b->err)
		return false;
	jw_buf_init(&stack);
	/* The most innermost frames that fit: lo fits (or is 0), hi does not. */
	n = count_frames(e->heaviest_stack);
	lo = 0;
	hi = n;
	while (lo + 1 < hi) {
		size_t mid = lo + (hi - lo) / 2;

		cut_stack(e->heaviest_stack, n, mid, &stack);
		c.heaviest_stack = stack.data;
		if (!stack.err && format_at(&c, b, start) <= max)
			lo = mid;
		else
			hi = mid;
	}
	if (n) {
		cut_stack(e->heaviest_stack, n, lo, &stack);
		c.heaviest_stack = stack.err ? "" : stack.data;
		cut = true;
	}
	if (format_at(&c, b, start) > max && !b->err) {
		c.handler = cut_text(e->handler, text[0], sizeof(text[0]));
		c.handler_class = cut_text(e->handler_class, text[1], sizeof(text[1]));
		c.group = cut_text(e->group, text[2], sizeof(text[2]));
		c.waker = cut_text(e->waker, text[3], sizeof(text[3]));
		c.bundle_name = cut_text(e->bundle_name, text[4], sizeof(text[4]));
		c.loop = cut_text(e->loop, text[5], sizeof(text[5]));
		old_paths = e->external_log;
		if (old_paths && e->n_external_log <= sizeof(paths) / sizeof(paths[0])) {
			for (i = 0; i < e->n_external_log; i++)
				paths[i] = cut_path(old_paths[i]);
			c.external_log = paths;
		}
		format_at(&c, b, start);
		cut = true;
	}
	jw_buf_free(&stack);
	return cut;
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
