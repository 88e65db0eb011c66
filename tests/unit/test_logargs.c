// SPDX-License-Identifier: GPL-2.0-only
/* The range options the commands over a log directory share (logargs.h). */
#include <errno.h>
#include <getopt.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "session/logargs.h"

#define S 1000000000LL
#define NOW (1764072000LL * S)

/* --pid takes a positive process id and nothing else. */
static void test_pid(void **state)
{
	static const char *const bad[] = { "", "0", "-3", "12x", "x", "99999999999999999999" };
	struct jw_range r = { 0 };
	size_t i;

	(void)state;
	assert_int_equal(jw_range_option(&r, "report", 'p', "4242", NOW), 0);
	assert_int_equal(r.pid, 4242);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(jw_range_option(&r, "report", 'p', bad[i], NOW), -EINVAL);
}

/* --since and --until: a time, relative to now; a bad one refused and nothing set. */
static void test_since_until(void **state)
{
	struct jw_range r = { 0 };

	(void)state;
	assert_int_equal(jw_range_option(&r, "export", 's', "2h", NOW), 0);
	assert_true(r.since_ns == NOW - 7200 * S);
	assert_int_equal(jw_range_option(&r, "export", 'u', "@1764072000", NOW), 0);
	assert_true(r.until_ns == NOW);
	assert_int_equal(jw_range_option(&r, "export", 'u', "yesterday", NOW), -EINVAL);
	assert_true(r.until_ns == NOW);
	assert_true(r.since_ns == NOW - 7200 * S);
}

/* A jank is in the range when it began in [since, until) in the process asked for. */
static void test_has(void **state)
{
	struct jw_range all = { 0 }, r = { .since_ns = 10 * S, .until_ns = 20 * S, .pid = 7 };

	(void)state;
	assert_true(jw_range_has(&all, 0, 1));
	assert_true(jw_range_has(&r, 10 * S, 7));
	assert_true(jw_range_has(&r, 20 * S - 1, 7));
	assert_false(jw_range_has(&r, 20 * S, 7));
	assert_false(jw_range_has(&r, 10 * S - 1, 7));
	assert_false(jw_range_has(&r, 15 * S, 8));
	r.pid = 0;
	assert_true(jw_range_has(&r, 15 * S, 8));
	r.since_ns = 0;
	assert_true(jw_range_has(&r, 1, 8));
}

/* After the options: exactly one LOGDIR, and --until after --since. */
static void test_finish(void **state)
{
	char *argv[] = { "report", "/var/log/jankwatch", "extra", NULL };
	struct jw_range r = { 0 };
	const char *dir = NULL;

	(void)state;
	optind = 1;
	assert_int_equal(jw_logargs_finish(&r, "report", 2, argv, &dir), 0);
	assert_string_equal(dir, "/var/log/jankwatch");
	assert_int_equal(jw_logargs_finish(&r, "report", 3, argv, &dir), -EINVAL);
	assert_int_equal(jw_logargs_finish(&r, "report", 1, argv, &dir), -EINVAL);
	r.since_ns = 20 * S;
	r.until_ns = 20 * S;
	assert_int_equal(jw_logargs_finish(&r, "report", 2, argv, &dir), -EINVAL);
	r.until_ns = 21 * S;
	assert_int_equal(jw_logargs_finish(&r, "report", 2, argv, &dir), 0);
	optind = 2;
	assert_int_equal(jw_logargs_bad_option("report", ':', argv), -EINVAL);
	assert_int_equal(jw_logargs_bad_option("report", '?', argv), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pid),
		cmocka_unit_test(test_since_until),
		cmocka_unit_test(test_has),
		cmocka_unit_test(test_finish),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
