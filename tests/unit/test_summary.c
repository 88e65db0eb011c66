// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of `jankwatch report`'s arithmetic: groups, percentiles, causes, withheld counts,
 * the ranking, text and JSON; and the times --since and --until take.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "base/jsonbuf.h"
#include "base/jsonread.h"
#include "base/when.h"
#include "report/summary.h"

#define T0 1764032523000ULL

/* 100 janks of redis's busy group, 1..100 ms; 2 sleeping janks of python; a hang of redis. */
static struct jw_summary *sample_summary(void)
{
	struct jw_summary *s = jw_summary__new();
	int i;

	assert_non_null(s);
	for (i = 1; i <= 100; i++) {
		struct jw_summary_event e = {
			.begin_ms = T0 + i * 1000,
			.pid = i % 2 ? 100 : 101,
			.process = "redis-server",
			.handler = i == 50 ? "serverCron" : "processCommand",
			.group = "busy<-processCommand",
			.heaviest_stack = i > 90 ? "busy<-processCommand<-call" : "busy<-other",
			.cause = i % 10 ? "cpu" : "runqueue",
			.withheld = i <= 5 ? NULL : i % 3 ? "back_off" : "budget",
			.wall_ms = i,
			.files = i <= 5 ? 1 : 0,
		};

		assert_int_equal(jw_summary__add(s, &e, NULL), 0);
	}
	for (i = 0; i < 2; i++) {
		struct jw_summary_event e = {
			.begin_ms = T0 + 500 + i,
			.pid = 200,
			.process = "python3",
			.handler = "on_timer app.py:46",
			.cause = "blocked",
			.wall_ms = 3000,
			.over_limit = true,
		};

		assert_int_equal(jw_summary__add(s, &e, NULL), 0);
	}
	assert_int_equal(jw_summary__add(s, &(struct jw_summary_event){
		.hang = true, .begin_ms = T0 + 200000, .pid = 100, .process = "redis-server",
		.group = "busy<-processCommand", .wall_ms = 6000, .files = 1 }, NULL), 0);
	jw_summary__bad_line(s);
	return s;
}

static char *text_of(struct jw_summary *s, size_t top)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(jw_summary__write_text(s, "/var/log/jankwatch", top, f), 0);
	fclose(f);
	return buf;
}

static void test_text(void **state)
{
	struct jw_summary *s = sample_summary();
	char *t = text_of(s, 0);

	(void)state;
	/* Totals over both groups. */
	assert_non_null(strstr(t, "/var/log/jankwatch: 102 janks, 1 hangs in 2 groups, from "));
	assert_non_null(strstr(t, "files written for 6, withheld for 97, back-off 63, budget 32, "
				  "quota 2\n"));
	assert_non_null(strstr(t, "1 lines were not events"));
	/* python's two 3 s janks (6 s) outrank redis's hundred (5.05 s). */
	assert_true(strstr(t, "#1 python3: on_timer app.py:46 (handler)") <
		    strstr(t, "#2 redis-server: busy<-processCommand\n"));
	assert_non_null(strstr(t, "    janks 2, hangs 0; wall p50 3000.0 ms, p95 3000.0 ms, max "
				  "3000.0 ms, total 6.0 s\n    cause cpu 0, runqueue 0, blocked 2, "
				  "io 0\n    handler on_timer app.py:46\n    files written 0, "
				  "withheld 2, quota 2\n    pid 200\n"));
	/* Nearest rank over 1..100 ms: p50 50, p95 95. */
	assert_non_null(strstr(t, "    janks 100, hangs 1; wall p50 50.0 ms, p95 95.0 ms, max "
				  "100.0 ms, total "));
	assert_non_null(strstr(t, "    cause cpu 90, runqueue 10, blocked 0, io 0\n"));
	assert_non_null(strstr(t, "    handler processCommand\n"));
	/* The hang's file counts; 95 janks withheld: 32 budget (multiples of 3), 63 back-off. */
	assert_non_null(strstr(t, "    files written 6, withheld 95, back-off 63, budget 32\n"));
	assert_non_null(strstr(t, "    pid 100, 101\n"));
	/* Ninety janks have the other stack: the most often seen wins. */
	assert_non_null(strstr(t, "    heaviest busy<-other\n"));
	free(t);
	/* --top 1 */
	t = text_of(s, 1);
	assert_non_null(strstr(t, "the 1 groups that took the most time:"));
	assert_null(strstr(t, "#2 "));
	free(t);
	jw_summary__free(s);
}

struct find {
	const char *key;
	char value[256];
};

static int find_field(void *ctx, const struct jw_json_field *f)
{
	struct find *x = ctx;

	if (strcmp(f->key, x->key))
		return 0;
	if (f->type == JW_JSON_NUM)
		snprintf(x->value, sizeof(x->value), "%g", f->num);
	else if (f->type == JW_JSON_ARRAY)
		snprintf(x->value, sizeof(x->value), "[%zu]", f->n_items);
	else if (f->type == JW_JSON_STR)
		snprintf(x->value, sizeof(x->value), "%s", f->str);
	return 0;
}

static void test_json(void **state)
{
	struct jw_summary *s = sample_summary();
	struct find x = { .key = "janks" };
	struct jw_buf b;

	(void)state;
	jw_buf_init(&b);
	jw_summary__write_json(s, "/logs", 0, &b);
	assert_int_equal(b.err, 0);
	assert_int_equal(jw_json_fields(b.data, b.len, find_field, &x), 0);
	assert_string_equal(x.value, "102");
	x.key = "groups";
	assert_int_equal(jw_json_fields(b.data, b.len, find_field, &x), 0);
	assert_string_equal(x.value, "[2]");
	assert_non_null(strstr(b.data, "\"withheld\":{\"back_off\":63,\"budget\":32,\"quota\":2,"
					"\"trace_window\":0,\"other\":0}"));
	assert_non_null(strstr(b.data, "\"wall_ms\":{\"p50\":50.000,\"p95\":95.000,\"max\":100.000,"
					"\"total\":5050.000}"));
	assert_non_null(strstr(b.data, "\"handler_key\":\"on_timer app.py:46\""));
	assert_non_null(strstr(b.data, "\"pids\":[100,101]"));
	jw_buf_free(&b);
	jw_summary__free(s);
}

/* The figures the page draws: the groups in the writers' order, an event's group by its id. */
static void test_groups(void **state)
{
	struct jw_summary *s = jw_summary__new();
	struct jw_summary_event e = { .pid = 7, .process = "p", .cause = "blocked" };
	struct jw_summary_totals t;
	struct jw_summary_group g;
	size_t small, big, again;

	(void)state;
	assert_non_null(s);
	e.group = "a<-b";
	e.wall_ms = 200;
	e.blocked_ms = 150;
	e.io_ms = 50;
	e.cpu_ms = 40;
	e.runq_ms = 10;
	e.begin_ms = T0;
	assert_int_equal(jw_summary__add(s, &e, &small), 0);
	e.group = NULL;
	e.handler = "on_tick";
	e.wall_ms = 900;
	e.begin_ms = T0 + 5;
	e.cause = "cpu";
	e.files = 1;
	assert_int_equal(jw_summary__add(s, &e, &big), 0);
	e.group = "a<-b";
	e.wall_ms = 400;
	assert_int_equal(jw_summary__add(s, &e, &again), 0);
	assert_int_equal(again, small);
	assert_int_not_equal(small, big);
	assert_int_equal(jw_summary__groups(s), 2);
	/* 900 ms beats 600 */
	assert_int_equal(jw_summary__rank(s, big), 0);
	assert_int_equal(jw_summary__rank(s, small), 1);
	jw_summary__group(s, 0, &g);
	assert_string_equal(g.key, "on_tick");
	assert_true(g.by_handler);
	assert_string_equal(g.handler, "on_tick");
	jw_summary__group(s, 1, &g);
	assert_string_equal(g.key, "a<-b");
	assert_false(g.by_handler);
	assert_int_equal(g.janks, 2);
	assert_true(g.max_ms == 400 && g.p50_ms == 200 && g.total_ms == 600);
	assert_int_equal(g.cause[0], 1);
	assert_int_equal(g.cause[2], 1);
	/* each jank's time split summed, blocked less its I/O (the other jank: the same figures) */
	assert_true(g.split_ms[0] == 80 && g.split_ms[1] == 20 && g.split_ms[2] == 200 &&
		    g.split_ms[3] == 100);
	assert_int_equal(g.written, 1);
	assert_int_equal(g.withheld, 1);
	assert_int_equal(g.n_pids, 1);
	assert_int_equal(g.pids[0], 7);
	jw_summary__totals(s, &t);
	assert_int_equal(t.janks, 3);
	assert_int_equal(t.groups, 2);
	assert_int_equal(t.written, 2);
	assert_int_equal(t.withheld, 1);
	assert_int_equal(t.first_ms, T0);
	assert_int_equal(t.last_ms, T0 + 5);
	/* A group made after the order was taken is ordered again. */
	e.group = "c";
	e.wall_ms = 5000;
	assert_int_equal(jw_summary__add(s, &e, &again), 0);
	assert_int_equal(jw_summary__rank(s, again), 0);
	assert_int_equal(jw_summary__rank(s, big), 1);
	jw_summary__free(s);
}

static void test_empty(void **state)
{
	struct jw_summary *s = jw_summary__new();
	char *t;

	(void)state;
	t = text_of(s, 10);
	assert_string_equal(t, "/var/log/jankwatch: 0 janks, 0 hangs in 0 groups, from - to -\n"
			       "files written for 0, withheld for 0\n");
	free(t);
	jw_summary__free(s);
}

static void test_when(void **state)
{
	const int64_t now = 1764032523LL * 1000000000LL;
	struct tm tm = { .tm_year = 126, .tm_mon = 10, .tm_mday = 25, .tm_hour = 14, .tm_min = 30,
			 .tm_isdst = -1 };
	int64_t t, local = (int64_t)mktime(&tm) * 1000000000LL;
	char err[256], shown[32];

	(void)state;
	assert_int_equal(jw_parse_when("2h", now, &t, err, sizeof(err)), 0);
	assert_int_equal(t, now - 7200LL * 1000000000LL);
	assert_int_equal(jw_parse_when("90s", now, &t, err, sizeof(err)), 0);
	assert_int_equal(t, now - 90LL * 1000000000LL);
	assert_int_equal(jw_parse_when("7d", now, &t, err, sizeof(err)), 0);
	assert_int_equal(t, now - 7LL * 86400 * 1000000000LL);
	assert_int_equal(jw_parse_when("now", now, &t, err, sizeof(err)), 0);
	assert_int_equal(t, now);
	assert_int_equal(jw_parse_when("@1764000000", now, &t, err, sizeof(err)), 0);
	assert_int_equal(t, 1764000000LL * 1000000000LL);
	assert_int_equal(jw_parse_when("2026-11-25 14:30", now, &t, err, sizeof(err)), 0);
	assert_int_equal(t, local);
	assert_int_equal(jw_parse_when("2026-11-25T14:30:05", now, &t, err, sizeof(err)), 0);
	assert_int_equal(t, local + 5000000000LL);
	assert_int_equal(jw_parse_when("2026-11-25", now, &t, err, sizeof(err)), 0);
	assert_int_equal(t, local - (14 * 3600 + 30 * 60) * 1000000000LL);
	/* A time alone is today's. */
	assert_int_equal(jw_parse_when("14:30", local + 3600LL * 1000000000LL, &t, err,
				       sizeof(err)),
			 0);
	assert_int_equal(t, local);
	assert_int_equal(jw_parse_when("yesterday", now, &t, err, sizeof(err)), -EINVAL);
	/* And shown back: what was typed, to the second; none as "-". */
	jw_when_text((uint64_t)(local / 1000000) + 5999, shown, sizeof(shown));
	assert_string_equal(shown, "2026-11-25 14:30:05");
	jw_when_text(0, shown, sizeof(shown));
	assert_string_equal(shown, "-");
	assert_non_null(strstr(err, "'yesterday' is not a time"));
	assert_int_equal(jw_parse_when("2x", now, &t, err, sizeof(err)), -EINVAL);
	assert_int_equal(jw_parse_when("2026-13-45", now, &t, err, sizeof(err)), -EINVAL);
	assert_int_equal(jw_parse_when("@", now, &t, err, sizeof(err)), -EINVAL);
	assert_int_equal(jw_parse_when("", now, &t, err, sizeof(err)), -EINVAL);
	assert_int_equal(jw_parse_when("-2h", now, &t, err, sizeof(err)), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_groups),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_when),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
