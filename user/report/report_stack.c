// SPDX-License-Identifier: GPL-2.0-only
/* The stack log: a key: value header, a blank line, then the tree (or folded lines, or wchan). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <time.h>

#include "report/report_stack.h"

/* "YYYY-mm-dd HH:MM:SS.mmm" in local time; the raw ms if the time cannot be broken down. */
static void local_time_ms(uint64_t ms, char *buf, size_t len)
{
	time_t sec = (time_t)(ms / 1000);
	char date[32];
	struct tm tm;

	if (!localtime_r(&sec, &tm) || !strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S", &tm)) {
		snprintf(buf, len, "%" PRIu64, ms);
		return;
	}
	snprintf(buf, len, "%s.%03u", date, (unsigned int)(ms % 1000));
}

/*
 * Writes "key: value\n" with control bytes of @value as '?': an exe path with a newline must
 * not forge header lines. NULL or "" values are written as @none.
 */
static void header_str(FILE *f, const char *key, const char *value, const char *none)
{
	const char *p;

	if (!value || !*value)
		value = none;
	fprintf(f, "%s: ", key);
	for (p = value; *p; p++)
		fputc((unsigned char)*p < 0x20 || *p == 0x7f ? '?' : *p, f);
	fputc('\n', f);
}

static void header_write(const struct jw_stack_report *r, FILE *f)
{
	char begin[48], end[48];

	local_time_ms(r->begin_time_ms, begin, sizeof(begin));
	local_time_ms(r->end_time_ms, end, sizeof(end));
	fprintf(f, "pid: %" PRIu32 "\n", r->pid);
	fprintf(f, "tid: %" PRIu32 "\n", r->tid);
	header_str(f, "exe", r->exe, "unknown");
	header_str(f, "build_id", r->build_id, "none");
	fprintf(f, "begin_time: %s\n", begin);
	fprintf(f, "end_time: %s\n", end);
	fprintf(f, "wall_ms: %.3f\n", r->wall_ms);
	fprintf(f, "cpu_ms: %.3f\n", r->cpu_ms);
	fprintf(f, "runq_ms: %.3f\n", r->runq_ms);
	fprintf(f, "blocked_ms: %.3f\n", r->blocked_ms);
	if (r->has_delay)
		fprintf(f, "delay_ms: %.3f\n", r->delay_ms);
	fprintf(f, "samples: %" PRIu32 "\n", r->samples);
	header_str(f, "heaviest_stack", r->heaviest_stack, "none");
	/* What ended the longest block, when the task slept. */
	if (r->waker)
		header_str(f, "waker", r->waker, "unknown");
	if (r->waker_stack)
		header_str(f, "waker_stack", r->waker_stack, "none");
	/* Named before some debug files came: their modules' frames have their own symbols. */
	if (r->debug_pending)
		fprintf(f, "symbols: %zu debug files were still being fetched from debuginfod; "
			"frames of their modules are named from their own symbols\n",
			r->debug_pending);
	fputc('\n', f);
}

int jw_stack_report_write(const struct jw_stack_report *r, FILE *f)
{
	int err = 0;

	errno = 0;
	header_write(r, f);
	if (!r->tree || !jw_stacktree__total(r->tree))
		header_str(f, "wchan", r->wchan, "unknown");
	else if (r->format == JW_FORMAT_FOLDED)
		err = jw_stacktree__write_folded(r->tree, f);
	else
		err = jw_stacktree__write_tree(r->tree, f);
	if (!err && ferror(f))
		err = errno ? -errno : -EIO;
	return err;
}

void jw_report_file_name(const char *kind, uint32_t pid, uint64_t time_ms, const char *suffix,
			 char *buf, size_t len)
{
	time_t sec = (time_t)(time_ms / 1000);
	char stamp[32];
	struct tm tm;

	if (!localtime_r(&sec, &tm) || !strftime(stamp, sizeof(stamp), "%Y%m%d%H%M%S", &tm))
		snprintf(stamp, sizeof(stamp), "%" PRIu64, (uint64_t)sec);
	snprintf(buf, len, "%s%s%" PRIu32 "-%s-%03u%s", kind ? kind : "", kind ? "-" : "", pid,
		 stamp, (unsigned int)(time_ms % 1000), suffix ? suffix : "");
}

void jw_stack_report_name(uint32_t pid, uint64_t time_ms, char *buf, size_t len)
{
	jw_report_file_name("stack", pid, time_ms, ".txt", buf, len);
}
