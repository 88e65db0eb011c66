// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests of the jank event line and its cause. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "report/report_event.h"
#include "buf_fixture.h"

static const char *const logs[] = {
	"/var/log/jankwatch/stack-4242-20240301120000-123.txt",
	"/var/log/jankwatch/trace-4242-20240301120000-123.ftrace",
};

static void test_full_event(void **state)
{
	struct jw_buf *b = *state;
	const struct jw_event e = {
		.event = "MAIN_THREAD_JANK",
		.time_ms = 1709294400456,
		.bundle_name = "redis-server",
		.bundle_version = "0a1b2c3d",
		.pid = 4242,
		.uid = 1000,
		.tid = 4242,
		.begin_time_ms = 1709294400123,
		.end_time_ms = 1709294400423,
		.external_log = logs,
		.n_external_log = 2,
		.log_over_limit = false,
		.app_start_jiffies_time = 123456,
		.heaviest_stack = "sleep<-serverCron<-main",
		.handler = "aeProcessEvents",
		.wall_ms = 300.125,
		.cpu_ms = 12.5,
		.runq_ms = 0.25,
		.blocked_ms = 287.375,
		.io_ms = 1.0 / 3.0,
		.has_offcpu = true,
		.delay_ms = 2.0626,
		.has_delay = true,
		.waker = "redis-bio 4245",
		.cause = "blocked",
		.group = "serverCron;main",
		.samples = 10,
		.dropped = 1,
	};

	jw_event_format(&e, b);
	assert_int_equal(b->err, 0);
	assert_string_equal(b->data,
			    "{\"event\":\"MAIN_THREAD_JANK\",\"time\":1709294400456,"
			    "\"bundle_name\":\"redis-server\",\"bundle_version\":\"0a1b2c3d\","
			    "\"pid\":4242,\"uid\":1000,\"tid\":4242,"
			    "\"begin_time\":1709294400123,\"end_time\":1709294400423,"
			    "\"external_log\":["
			    "\"/var/log/jankwatch/stack-4242-20240301120000-123.txt\","
			    "\"/var/log/jankwatch/trace-4242-20240301120000-123.ftrace\"],"
			    "\"log_over_limit\":false,\"withheld\":null,\"app_start_jiffies_time\":123456,"
			    "\"heaviest_stack\":\"sleep<-serverCron<-main\","
			    "\"handler\":\"aeProcessEvents\",\"wall_ms\":300.125,\"cpu_ms\":12.500,"
			    "\"runq_ms\":0.250,\"blocked_ms\":287.375,\"io_ms\":0.333,"
			    "\"delay_ms\":2.063,\"waker\":\"redis-bio 4245\",\"cause\":\"blocked\","
			    "\"group\":\"serverCron;main\",\"samples\":10,\"dropped\":1}\n");
}

/* A task one of whose context switches reached no program says its split is short. */
static void test_offcpu_partial(void **state)
{
	struct jw_buf *b = *state;
	const struct jw_event e = {
		.event = "MAIN_THREAD_JANK",
		.handler = "dispatch",
		.wall_ms = 300,
		.cpu_ms = 300,
		.has_offcpu = true,
		.offcpu_partial = true,
		.cause = "cpu",
	};

	jw_event_format(&e, b);
	assert_int_equal(b->err, 0);
	assert_non_null(strstr(b->data, "\"runq_ms\":0.000,\"blocked_ms\":0.000,\"io_ms\":0.000,"
				       "\"offcpu_partial\":true,\"delay_ms\":null,"));
}

/* What the event does not know is null; an empty external_log is []. */
static void test_null_fields(void **state)
{
	struct jw_buf *b = *state;
	const struct jw_event e = {
		.event = "MAIN_THREAD_HANG",
		.time_ms = 5,
		.pid = 1,
		.uid = 0,
		.tid = 2,
		.begin_time_ms = 3,
		.end_time_ms = 4,
		.log_over_limit = true,
		.withheld = "quota",
		.wall_ms = 6000,
		.cpu_ms = 1,
		.runq_ms = 2,
		.blocked_ms = 3,
		.io_ms = 4,
		.has_offcpu = false,
		.samples = 0,
		.dropped = 4294967295u,
	};

	jw_event_format(&e, b);
	assert_int_equal(b->err, 0);
	assert_string_equal(b->data,
			    "{\"event\":\"MAIN_THREAD_HANG\",\"time\":5,\"bundle_name\":null,"
			    "\"bundle_version\":null,\"pid\":1,\"uid\":0,\"tid\":2,"
			    "\"begin_time\":3,\"end_time\":4,\"external_log\":[],"
			    "\"log_over_limit\":true,\"withheld\":\"quota\","
			    "\"app_start_jiffies_time\":0,\"heaviest_stack\":null,\"handler\":null,"
			    "\"wall_ms\":6000.000,\"cpu_ms\":null,\"runq_ms\":null,"
			    "\"blocked_ms\":null,\"io_ms\":null,\"delay_ms\":null,\"waker\":null,\"cause\":null,"
			    "\"group\":null,\"samples\":0,\"dropped\":4294967295}\n");
}

/* Strings from the target (paths, symbols) are escaped; lines stay one line. */
static void test_escaped_strings(void **state)
{
	struct jw_buf *b = *state;
	static const char *const paths[] = { "/tmp/a\"b", NULL };
	const struct jw_event e = {
		.event = "MAIN_THREAD_JANK",
		.bundle_name = "we\nird\xff",
		.external_log = paths,
		.n_external_log = 2,
		.heaviest_stack = "f\\g",
		.wall_ms = NAN,
	};

	jw_event_format(&e, b);
	assert_string_equal(b->data,
			    "{\"event\":\"MAIN_THREAD_JANK\",\"time\":0,"
			    "\"bundle_name\":\"we\\nird\xef\xbf\xbd\",\"bundle_version\":null,"
			    "\"pid\":0,\"uid\":0,\"tid\":0,\"begin_time\":0,\"end_time\":0,"
			    "\"external_log\":[\"/tmp/a\\\"b\",null],\"log_over_limit\":false,"
			    "\"withheld\":null,"
			    "\"app_start_jiffies_time\":0,\"heaviest_stack\":\"f\\\\g\","
			    "\"handler\":null,\"wall_ms\":null,\"cpu_ms\":null,\"runq_ms\":null,"
			    "\"blocked_ms\":null,\"io_ms\":null,\"delay_ms\":null,\"waker\":null,\"cause\":null,"
			    "\"group\":null,\"samples\":0,\"dropped\":0}\n");
}

/* Two events appended to one buffer are two lines. */
static void test_appends(void **state)
{
	struct jw_buf *b = *state;
	const struct jw_event e = { .event = "MAIN_THREAD_JANK" };
	size_t one;

	jw_event_format(&e, b);
	one = b->len;
	jw_event_format(&e, b);
	assert_int_equal(b->len, 2 * one);
	assert_memory_equal(b->data, b->data + one, one);
	assert_int_equal(b->data[one - 1], '\n');
}

/* A C++-like frame @i of a deep stack: a long demangled name, a multi-byte character. */
static void deep_stack(char *buf, size_t len, int frames)
{
	size_t n = 0;
	int i;

	buf[0] = 0;
	for (i = 0; i < frames && n < len; i++)
		n += snprintf(buf + n, len - n,
			      "%sstd::_Function_handler<void (int), ns::Widget<std::vector<int>>::"
			      "on_event_\xc3\xa9%d(int)>::_M_invoke(std::_Any_data const&, int&&)",
			      i ? "<-" : "", i);
}

/* Whether @line (one JSON line) has a "heaviest_stack" that starts with @prefix. */
static const char *stack_in(const char *line)
{
	const char *p = strstr(line, "\"heaviest_stack\":\"");

	return p ? p + strlen("\"heaviest_stack\":\"") : NULL;
}

/*
 * A 200-frame C++ stack: the line stays within the bound; heaviest_stack keeps its innermost
 * frames whole, in order, and ends with a marker of how many it left out; the other fields are
 * untouched; the unbounded line holds every frame.
 */
static void test_bounded_stack(void **state)
{
	struct jw_buf *b = *state;
	static char stack[200 * 200];
	char marker[32];
	const char *st, *end;
	size_t kept = 0;
	struct jw_event e = {
		.event = "MAIN_THREAD_JANK",
		.bundle_name = "qtapp",
		.pid = 7,
		.handler = "Widget::paint",
		.group = "a<-b",
		.wall_ms = 300,
		.jank_id = "00112233aabbccdd",
	};

	deep_stack(stack, sizeof(stack), 200);
	e.heaviest_stack = stack;
	jw_event_format(&e, b);
	assert_true(b->len > 20000);
	jw_buf_reset(b);
	assert_false(jw_event_format_bounded(&e, b, 0));
	assert_true(b->len > 20000);

	jw_buf_reset(b);
	assert_true(jw_event_format_bounded(&e, b, 4096));
	assert_int_equal(b->err, 0);
	assert_true(b->len <= 4096);
	assert_true(b->len > 3500);	/* as many frames as fit, not a few */
	assert_int_equal(b->data[b->len - 1], '\n');
	assert_null(memchr(b->data, '\n', b->len - 1));
	st = stack_in(b->data);
	assert_non_null(st);
	end = strchr(st, '"');
	assert_non_null(end);
	/* Whole frames of the original, from its innermost. */
	for (const char *p = st; p < end; p++)
		kept += !strncmp(p, "<-", 2);
	assert_true(kept >= 10);
	assert_memory_equal(st, stack, (size_t)(strstr(st, "<-[+") - st));
	snprintf(marker, sizeof(marker), "<-[+%zu frames]\"", 200 - kept);
	assert_memory_equal(strstr(st, "<-[+"), marker, strlen(marker));
	assert_non_null(strstr(b->data, "\"handler\":\"Widget::paint\""));
	assert_non_null(strstr(b->data, "\"group\":\"a<-b\""));
	assert_non_null(strstr(b->data, "\"jank_id\":\"00112233aabbccdd\"}\n"));

	/* A short stack is not cut at all. */
	jw_buf_reset(b);
	e.heaviest_stack = "f<-g";
	assert_false(jw_event_format_bounded(&e, b, 4096));
	assert_non_null(strstr(b->data, "\"heaviest_stack\":\"f<-g\""));
}

/*
 * Past the bound with no frame left, the free-text fields are cut (on a character's start) and a
 * long path becomes its file name: the line fits in the smallest bound events_line_max takes.
 */
static void test_bounded_text(void **state)
{
	struct jw_buf *b = *state;
	static char name[6000], path[3000];
	const char *paths[] = { path };
	const char *h;
	struct jw_event e = {
		.event = "MAIN_THREAD_JANK",
		.heaviest_stack = "one_frame",
		.external_log = paths,
		.n_external_log = 1,
	};
	size_t i;

	for (i = 0; i + 2 < sizeof(name); i += 2)
		memcpy(name + i, "\xc3\xa9", 2);	/* U+00E9, two bytes each */
	memset(path, 'd', sizeof(path));
	path[0] = '/';
	strcpy(path + sizeof(path) - 13, "/stack-1.txt");
	e.handler = name;
	e.group = name;
	e.waker = name;
	e.handler_class = name;
	e.bundle_name = name;
	e.loop = name;
	assert_true(jw_event_format_bounded(&e, b, 2048));
	assert_int_equal(b->err, 0);
	assert_true(b->len <= 2048);
	h = strstr(b->data, "\"handler\":\"");
	assert_non_null(h);
	h += strlen("\"handler\":\"");
	/* JW_EVENT_TEXT_CUT bytes at most, whole characters, then the marker. */
	assert_true(strstr(h, "[...]\"") - h + 5 <= JW_EVENT_TEXT_CUT);
	assert_true(strstr(h, "[...]\"") - h + 5 > JW_EVENT_TEXT_CUT - 2);
	assert_int_equal((strstr(h, "[...]\"") - h) % 2, 0);
	assert_non_null(strstr(b->data, "\"external_log\":[\"stack-1.txt\"]"));
	assert_non_null(strstr(b->data, "\"heaviest_stack\":\"[+1 frame]\""));
}

static void test_cause(void **state)
{
	(void)state;
	assert_string_equal(jw_event_cause(10, 2, 3, 0), "cpu");
	assert_string_equal(jw_event_cause(1, 20, 3, 0), "runqueue");
	assert_string_equal(jw_event_cause(1, 2, 30, 0), "blocked");
	/* blocked includes io: 30 blocked of which 25 io is mostly io. */
	assert_string_equal(jw_event_cause(1, 2, 30, 25), "io");
	/* 30 blocked of which 14 io: 16 sleeping beats 14 io. */
	assert_string_equal(jw_event_cause(1, 2, 30, 14), "blocked");
	/* The io share is what loses to cpu here, not the whole blocked time. */
	assert_string_equal(jw_event_cause(20, 2, 30, 15), "cpu");
}

static void test_cause_ties(void **state)
{
	(void)state;
	assert_string_equal(jw_event_cause(0, 0, 0, 0), "cpu");
	assert_string_equal(jw_event_cause(5, 5, 5, 0), "cpu");
	assert_string_equal(jw_event_cause(1, 5, 5, 0), "runqueue");
	assert_string_equal(jw_event_cause(1, 2, 10, 5), "blocked");
	assert_string_equal(jw_event_cause(1, 2, 10, 10), "io");
	assert_string_equal(jw_event_cause(10, 2, 20, 10), "cpu");
}

/* Values that make no sense never win: NaN, negative, io larger than blocked. */
static void test_cause_bad_values(void **state)
{
	(void)state;
	assert_string_equal(jw_event_cause(NAN, 1, 0, 0), "runqueue");
	assert_string_equal(jw_event_cause(-5, -1, 0, 0), "cpu");
	assert_string_equal(jw_event_cause(1, 0, 2, 3), "io");
	assert_string_equal(jw_event_cause(1, INFINITY, 0, 0), "cpu");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_full_event, buf_setup, buf_teardown),
		cmocka_unit_test_setup_teardown(test_offcpu_partial, buf_setup, buf_teardown),
		cmocka_unit_test_setup_teardown(test_null_fields, buf_setup, buf_teardown),
		cmocka_unit_test_setup_teardown(test_escaped_strings, buf_setup, buf_teardown),
		cmocka_unit_test_setup_teardown(test_appends, buf_setup, buf_teardown),
		cmocka_unit_test_setup_teardown(test_bounded_stack, buf_setup, buf_teardown),
		cmocka_unit_test_setup_teardown(test_bounded_text, buf_setup, buf_teardown),
		cmocka_unit_test(test_cause),
		cmocka_unit_test(test_cause_ties),
		cmocka_unit_test(test_cause_bad_values),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
