// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests of the jank event line and its cause. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "report/report_event.h"

static int setup(void **state)
{
	struct jw_buf *b = malloc(sizeof(*b));

	if (!b)
		return -1;
	jw_buf_init(b);
	*state = b;
	return 0;
}

static int teardown(void **state)
{
	struct jw_buf *b = *state;

	jw_buf_free(b);
	free(b);
	return 0;
}

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
		cmocka_unit_test_setup_teardown(test_full_event, setup, teardown),
		cmocka_unit_test_setup_teardown(test_null_fields, setup, teardown),
		cmocka_unit_test_setup_teardown(test_escaped_strings, setup, teardown),
		cmocka_unit_test_setup_teardown(test_appends, setup, teardown),
		cmocka_unit_test(test_cause),
		cmocka_unit_test(test_cause_ties),
		cmocka_unit_test(test_cause_bad_values),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
