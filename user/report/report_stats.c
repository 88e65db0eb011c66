// SPDX-License-Identifier: GPL-2.0-only
/* The statistics dump: CSV rows and log2 histograms. */
#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

#include "report/report_stats.h"

void jw_stats_csv_header(FILE *f)
{
	fputs("pid,work_source_uid,thread_name,handler_class,message_name,is_interactive,"
	      "message_count,recorded_message_count,total_latency_micros,max_latency_micros,"
	      "total_cpu_micros,max_cpu_micros,recorded_delay_message_count,total_delay_millis,"
	      "max_delay_millis,exception_count\n", f);
}

/* A CSV field: quoted, quotes doubled, when it holds a separator; control bytes as '?'. */
static void csv_field(FILE *f, const char *s)
{
	bool quote = s && strpbrk(s, ",\"\r\n");
	const char *p;

	if (quote)
		fputc('"', f);
	for (p = s; p && *p; p++) {
		if (*p == '"')
			fputc('"', f);
		fputc((unsigned char)*p < 0x20 && *p != '\r' && *p != '\n' ? '?' : *p, f);
	}
	if (quote)
		fputc('"', f);
	fputc(',', f);
}

void jw_stats_csv_row(FILE *f, const struct jw_stats_row *r)
{
	const struct jw_stats_val *v = r->val;

	fprintf(f, "%" PRIu32 ",%" PRIu32 ",", r->pid, r->pid ? v->uid : 0);
	csv_field(f, r->thread_name);
	csv_field(f, r->handler_class);
	csv_field(f, r->message_name);
	fprintf(f, "false,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu\n",
		(unsigned long long)v->count, (unsigned long long)v->recorded,
		(unsigned long long)(v->total_ns / 1000), (unsigned long long)(v->max_ns / 1000),
		(unsigned long long)(v->total_cpu_ns / 1000),
		(unsigned long long)(v->max_cpu_ns / 1000), (unsigned long long)v->delay_count,
		(unsigned long long)(v->total_delay_ns / 1000000),
		(unsigned long long)(v->max_delay_ns / 1000000), (unsigned long long)v->exceptions);
}

#define BAR_WIDTH 40

void jw_stats_hist(FILE *f, const struct jw_stats_row *r)
{
	const struct jw_stats_val *v = r->val;
	int lo = -1, hi = -1, i;
	uint32_t top = 0;

	for (i = 0; i < JW_HIST_SLOTS; i++) {
		if (!v->hist[i])
			continue;
		if (lo < 0)
			lo = i;
		hi = i;
		if (v->hist[i] > top)
			top = v->hist[i];
	}
	fprintf(f, "pid %" PRIu32 " tid %" PRIu32 " (%s) %s %s: %llu recorded of %llu\n", r->pid,
		r->tid, r->thread_name ? r->thread_name : "", r->handler_class ? r->handler_class : "",
		r->message_name ? r->message_name : "", (unsigned long long)v->recorded,
		(unsigned long long)v->count);
	if (lo < 0)
		return;
	fprintf(f, "%24s : count    distribution\n", "usecs");
	for (i = lo; i <= hi; i++) {
		unsigned long long from = i ? 1ULL << i : 0, to = (1ULL << (i + 1)) - 1;
		int stars = (int)((uint64_t)v->hist[i] * BAR_WIDTH / top), k;

		fprintf(f, "%10llu -> %-10llu : %-8" PRIu32 " |", from, to, v->hist[i]);
		for (k = 0; k < BAR_WIDTH; k++)
			fputc(k < stars ? '*' : ' ', f);
		fputs("|\n", f);
	}
}
