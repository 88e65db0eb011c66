// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests of params.c: every parameter range, the cross checks, the config file. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "config/options.h"
#include "options_fixture.h"

struct range_case {
	enum jw_param p;
	const char *name;
	int64_t def;
	int64_t min;
	int64_t max;
	const char *allowed;	/* how the message states the range */
};

/* Written from SPEC's Policy table, independently of options.c's own table. */
static const struct range_case ranges[] = {
	{ JW_P_LOG_TYPE, "log_type", 0, 0, 2, "allowed 0..2" },
	{ JW_P_SAMPLE_INTERVAL, "sample_interval", 150, 50, 500, "allowed 50..500" },
	{ JW_P_IGNORE_STARTUP_TIME, "ignore_startup_time", 10, 3, 31536000, "allowed >= 3" },
	{ JW_P_SAMPLE_COUNT, "sample_count", 10, 1, 46, "allowed 1.." },
	{ JW_P_REPORT_TIMES_PER_APP, "report_times_per_app", 1, 1, 3, "allowed 1..3" },
	{ JW_P_THRESHOLD_MS, "threshold_ms", 150, 1, 3600000, "allowed 1..3600000" },
	{ JW_P_TRACE_THRESHOLD_MS, "trace_threshold_ms", 450, 1, 3600000, "allowed 1..3600000" },
	{ JW_P_HANG_MS, "hang_ms", 6000, 100, 3600000, "allowed 100..3600000" },
	{ JW_P_SAMPLE_PERIOD_MS, "sample_period_ms", 10, 1, 1000, "allowed 1..1000" },
	{ JW_P_STACK_BYTES, "stack_bytes", 16384, 512, 65536, "allowed 512..65536" },
	{ JW_P_LOG_QUOTA_BYTES, "log_quota_bytes", 10485760, 0, 1099511627776LL,
	  "allowed 0..1099511627776" },
	{ JW_P_LOG_MAX_AGE_DAYS, "log_max_age_days", 7, 1, 3650, "allowed 1..3650" },
	{ JW_P_FLIGHT_RECORDER_S, "flight_recorder_s", 0, 0, 60, "allowed 0..60" },
	{ JW_P_STATS_SAMPLING_INTERVAL, "stats_sampling_interval", 1, 1, 1000000,
	  "allowed 1..1000000" },
	{ JW_P_STATS_MAX_ENTRIES, "stats_max_entries", 1500, 1, 1000000, "allowed 1..1000000" },
	{ JW_P_WAIT_TRACEPOINTS, "wait_tracepoints", 2, 0, 3, "allowed 0..3" },
	{ JW_P_HANDLER_SITES, "handler_sites", 100, 0, 1000000, "allowed 0..1000000" },
	/* SPEC's F16 row: the ones for log shippers, the journal and the metrics. */
	{ JW_P_EVENTS_KEEP, "events_keep", 1, 1, 100, "allowed 1..100" },
	{ JW_P_EVENTS_LINE_MAX, "events_line_max", 4096, 2048, 1048576, "allowed 2048..1048576" },
	{ JW_P_JOURNAL, "journal", 0, 0, 1, "allowed 0..1" },
	{ JW_P_METRICS_INTERVAL_S, "metrics_interval_s", 15, 1, 3600, "allowed 1..3600" },
	{ JW_P_METRICS_MAX_HANDLERS, "metrics_max_handlers", 100, 1, 10000, "allowed 1..10000" },
	{ JW_P_SAMPLERS, "samplers", 2, 0, 2, "allowed 0..2" },
	{ JW_P_SCHED_HOOKS, "sched_hooks", 1, 0, 1, "allowed 0..1" },
};

#define N_RANGES (sizeof(ranges) / sizeof(ranges[0]))

static void test_range_table_covers_every_param(void **state)
{
	size_t i;

	(void)state;
	assert_int_equal(N_RANGES, JW_P_COUNT);
	for (i = 0; i < N_RANGES; i++)
		assert_string_equal(jw_param_name(ranges[i].p), ranges[i].name);
	assert_null(jw_param_name(JW_P_COUNT));
}

static void test_defaults(void **state)
{
	struct fixture *fx = *state;
	size_t i;

	for (i = 0; i < N_RANGES; i++)
		assert_int_equal(fx->params.v[ranges[i].p], ranges[i].def);
	assert_int_equal(fx->params.given, 0);
	assert_false(fx->params.burst.on);
	assert_int_equal(jw_params_finish(&fx->params, fx->err, sizeof(fx->err)), 0);
	assert_int_equal(fx->params.v[JW_P_SAMPLE_COUNT], 10);
}

static void set_value(struct fixture *fx, const struct range_case *rc, int64_t v, bool ok)
{
	char kv[96], value[32];

	snprintf(value, sizeof(value), "%lld", (long long)v);
	snprintf(kv, sizeof(kv), "%s=%s", rc->name, value);
	if (ok) {
		set_ok(fx, kv);
		assert_int_equal(fx->params.v[rc->p], v);
		assert_true(fx->params.given & (1u << rc->p));
		return;
	}
	set_fails(fx, kv, kv);			/* names the parameter and the value */
	assert_contains(fx->err, rc->allowed);	/* and the allowed range */
}

static void test_every_range_bound(void **state)
{
	struct fixture *fx = *state;
	size_t i;

	for (i = 0; i < N_RANGES; i++) {
		const struct range_case *rc = &ranges[i];

		jw_params_defaults(&fx->params);
		set_value(fx, rc, rc->min, true);
		set_value(fx, rc, rc->max, true);
		set_value(fx, rc, rc->min - 1, false);
		set_value(fx, rc, rc->max + 1, false);
	}
}

static void test_range_message_exact(void **state)
{
	struct fixture *fx = *state;

	set_fails(fx, "sample_interval=40", "sample_interval=40");
	assert_string_equal(fx->err, "sample_interval=40: out of range, allowed 50..500");
	set_fails(fx, "ignore_startup_time=2", "ignore_startup_time=2: out of range, allowed >= 3");
}

static void test_stack_bytes_multiple_of_8(void **state)
{
	struct fixture *fx = *state;

	set_ok(fx, "stack_bytes=16392");
	assert_int_equal(fx->params.v[JW_P_STACK_BYTES], 16392);
	set_fails(fx, "stack_bytes=1001", "multiple of 8");
	set_fails(fx, "stack_bytes=65532", "stack_bytes=65532");
	/* Multiples of 8 past either end: the range refuses them, not the step. */
	set_fails(fx, "stack_bytes=504", "stack_bytes=504: out of range");
	set_fails(fx, "stack_bytes=65544", "stack_bytes=65544: out of range");
}

static void test_bad_numbers(void **state)
{
	struct fixture *fx = *state;

	set_fails(fx, "sample_interval=abc", "sample_interval=abc: not a decimal integer");
	set_fails(fx, "sample_interval=", "sample_interval=: empty value, allowed 50..500");
	set_fails(fx, "sample_interval=100ms", "sample_interval=100ms: not a decimal integer");
	set_fails(fx, "sample_interval= 100", "not a decimal integer");
	set_fails(fx, "sample_interval=100 ", "not a decimal integer");
	set_fails(fx, "sample_interval=+100", "not a decimal integer");
	set_fails(fx, "sample_interval=0x64", "not a decimal integer");
	set_fails(fx, "sample_interval=1.5e2", "not a decimal integer");
	set_fails(fx, "sample_interval=--100", "not a decimal integer");
	set_fails(fx, "hang_ms=99999999999999999999",
		  "hang_ms=99999999999999999999: out of range, allowed 100..3600000");
	set_fails(fx, "log_quota_bytes=99999999999999999999", "out of range");
	set_fails(fx, "log_quota_bytes=-99999999999999999999", "out of range");
	set_fails(fx, "log_quota_bytes=-1", "log_quota_bytes=-1: out of range, allowed 0..");
	set_fails(fx, "flight_recorder_s=-5", "flight_recorder_s=-5: out of range, allowed 0..60");
}

static void test_key_errors(void **state)
{
	struct fixture *fx = *state;

	set_fails(fx, "sample_intervl=100", "sample_intervl=100: unknown parameter, did you mean "
		  "sample_interval?");
	set_fails(fx, "threshold=100", "did you mean threshold_ms?");
	set_fails(fx, "brust=off", "did you mean burst?");
	set_fails(fx, "foo=1", "foo=1: unknown parameter, valid: log_type, sample_interval, ");
	assert_contains(fx->err, "handler_sites, events_keep, events_line_max, journal, metrics_interval_s, "
			"metrics_max_handlers, samplers, sched_hooks, burst");
	set_fails(fx, "sample_interval", "sample_interval: missing '='");
	set_fails(fx, "=5", "missing parameter name");
	set_fails(fx, "", "missing '='");
}

/* --- sample_count and the cross checks of jw_params_finish() --- */

static void finish_ok(struct fixture *fx)
{
	int ret = jw_params_finish(&fx->params, fx->err, sizeof(fx->err));

	if (ret)
		fail_msg("finish: expected success, got %d: %s", ret, fx->err);
}

static void finish_fails(struct fixture *fx, const char *want)
{
	fx->err[0] = '\0';
	assert_int_equal(jw_params_finish(&fx->params, fx->err, sizeof(fx->err)), -EINVAL);
	assert_one_line(fx->err);
	assert_contains(fx->err, want);
}

static void test_sample_count_formula(void **state)
{
	static const struct {
		const char *interval;
		int64_t max;
		int64_t def;	/* min(10, max) */
	} cases[] = {
		{ "sample_interval=50", 46, 10 },
		{ "sample_interval=100", 21, 10 },
		{ "sample_interval=150", 12, 10 },
		{ "sample_interval=200", 8, 8 },
		{ "sample_interval=357", 3, 3 },
		{ "sample_interval=500", 1, 1 },
	};
	struct fixture *fx = *state;
	char kv[64], want[128];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		/* Not given: the default is min(10, max). */
		jw_params_defaults(&fx->params);
		set_ok(fx, cases[i].interval);
		finish_ok(fx);
		assert_int_equal(fx->params.v[JW_P_SAMPLE_COUNT], cases[i].def);

		/* Given: max is accepted, max + 1 is refused with the computed max. */
		jw_params_defaults(&fx->params);
		set_ok(fx, cases[i].interval);
		snprintf(kv, sizeof(kv), "sample_count=%lld", (long long)cases[i].max);
		set_ok(fx, kv);
		finish_ok(fx);
		assert_int_equal(fx->params.v[JW_P_SAMPLE_COUNT], cases[i].max);

		if (cases[i].max == 46)
			continue;	/* 47 is already refused by jw_params_set() */
		snprintf(kv, sizeof(kv), "sample_count=%lld", (long long)cases[i].max + 1);
		set_ok(fx, kv);
		snprintf(want, sizeof(want), "%s: out of range, allowed 1..%lld", kv,
			 (long long)cases[i].max);
		finish_fails(fx, want);
		assert_contains(fx->err, "sample_interval");
	}
}

static void test_sample_count_order_independent(void **state)
{
	struct fixture *fx = *state;

	/* sample_count before sample_interval: checked at finish, once both are known. */
	set_ok(fx, "sample_count=20");
	set_ok(fx, "sample_interval=100");
	finish_ok(fx);
	assert_int_equal(fx->params.v[JW_P_SAMPLE_COUNT], 20);
}

static void test_log_type_1_needs_the_four(void **state)
{
	struct fixture *fx = *state;

	set_ok(fx, "log_type=1");
	finish_fails(fx, "missing: sample_interval, ignore_startup_time, sample_count, "
		     "report_times_per_app");

	jw_params_defaults(&fx->params);
	set_ok(fx, "log_type=1");
	set_ok(fx, "sample_interval=200");
	set_ok(fx, "report_times_per_app=2");
	finish_fails(fx, "missing: ignore_startup_time, sample_count");
	assert_null(strstr(fx->err, "missing: sample_interval"));

	set_ok(fx, "ignore_startup_time=5");
	set_ok(fx, "sample_count=8");
	finish_ok(fx);
	assert_int_equal(fx->params.v[JW_P_SAMPLE_COUNT], 8);

	/* Defaults that happen to equal the given values still count as given. */
	jw_params_defaults(&fx->params);
	set_ok(fx, "log_type=1");
	set_ok(fx, "sample_interval=150");
	set_ok(fx, "ignore_startup_time=10");
	set_ok(fx, "sample_count=10");
	set_ok(fx, "report_times_per_app=1");
	finish_ok(fx);
}

static void test_log_type_0_and_2_need_nothing(void **state)
{
	struct fixture *fx = *state;

	set_ok(fx, "log_type=2");
	finish_ok(fx);
	set_ok(fx, "log_type=0");
	finish_ok(fx);
}

static void test_threshold_below_trace_threshold(void **state)
{
	struct fixture *fx = *state;

	set_ok(fx, "threshold_ms=450");
	finish_fails(fx, "threshold_ms=450: must be below trace_threshold_ms=450");
	set_ok(fx, "threshold_ms=449");
	finish_ok(fx);
	set_ok(fx, "trace_threshold_ms=300");
	finish_fails(fx, "trace_threshold_ms=300");

	/* Only log_type 0 has both kinds of report. */
	set_ok(fx, "log_type=2");
	finish_ok(fx);
}

/* --- burst --- */

static void test_burst(void **state)
{
	struct fixture *fx = *state;

	set_ok(fx, "burst=3/100/10");
	assert_true(fx->params.burst.on);
	assert_int_equal(fx->params.burst.count, 3);
	assert_int_equal(fx->params.burst.over_ms, 100);
	assert_int_equal(fx->params.burst.within_s, 10);

	set_ok(fx, "burst=1000/3600000/86400");
	assert_int_equal(fx->params.burst.count, 1000);
	assert_int_equal(fx->params.burst.over_ms, 3600000);
	assert_int_equal(fx->params.burst.within_s, 86400);

	set_ok(fx, "burst=2/1/1");
	assert_int_equal(fx->params.burst.count, 2);

	set_ok(fx, "burst=off");
	assert_false(fx->params.burst.on);
	assert_int_equal(fx->params.burst.count, 0);
}

static void test_burst_refused(void **state)
{
	struct fixture *fx = *state;

	set_fails(fx, "burst=1/100/10", "burst=1/100/10: bad N, allowed off or N/T/W");
	set_fails(fx, "burst=1001/100/10", "bad N");
	set_fails(fx, "burst=2/0/10", "bad T");
	set_fails(fx, "burst=2/3600001/10", "bad T");
	set_fails(fx, "burst=2/100/0", "bad W");
	set_fails(fx, "burst=2/100/86401", "bad W");
	set_fails(fx, "burst=2/100", "burst=2/100: not off or N/T/W");
	set_fails(fx, "burst=2/100/10/5", "not off or N/T/W");
	set_fails(fx, "burst=on", "not off or N/T/W");
	set_fails(fx, "burst=", "not off or N/T/W");
	set_fails(fx, "burst=2//10", "bad T");
	set_fails(fx, "burst=a/b/c", "bad N");
	set_fails(fx, "burst=2/100/10x", "bad W");
	set_fails(fx, "burst=2/99999999999999999999/10", "bad T");
}

/* --- config file --- */

static void test_config_file(void **state)
{
	struct fixture *fx = *state;

	write_config(fx, "# jankwatch policy\n"
		     "\n"
		     "sample_interval=200\n"
		     "   threshold_ms = 120   \n"
		     "\t# an indented comment\n"
		     "trace_threshold_ms=600 # after whitespace\n"
		     "burst=3/100/10\r\n"
		     "hang_ms=7000");	/* no final newline */
	assert_int_equal(jw_params_load_file(&fx->params, fx->path, fx->err, sizeof(fx->err)), 0);
	assert_int_equal(fx->params.v[JW_P_SAMPLE_INTERVAL], 200);
	assert_int_equal(fx->params.v[JW_P_THRESHOLD_MS], 120);
	assert_int_equal(fx->params.v[JW_P_TRACE_THRESHOLD_MS], 600);
	assert_int_equal(fx->params.v[JW_P_HANG_MS], 7000);
	assert_true(fx->params.burst.on);
	assert_int_equal(fx->params.burst.within_s, 10);
	assert_int_equal(fx->params.given,
			 (1u << JW_P_SAMPLE_INTERVAL) | (1u << JW_P_THRESHOLD_MS) |
			 (1u << JW_P_TRACE_THRESHOLD_MS) | (1u << JW_P_HANG_MS));
	assert_int_equal(fx->params.v[JW_P_LOG_TYPE], 0);
}

static void load_fails(struct fixture *fx, int want_ret, const char *want)
{
	fx->err[0] = '\0';
	assert_int_equal(jw_params_load_file(&fx->params, fx->path, fx->err, sizeof(fx->err)),
			 want_ret);
	assert_one_line(fx->err);
	assert_contains(fx->err, want);
}

static void test_config_file_bad_line(void **state)
{
	struct fixture *fx = *state;
	char want[128];

	write_config(fx, "# comment\nsample_interval=200\nsample_interval=40\n");
	snprintf(want, sizeof(want), "%s:3: sample_interval=40: out of range, allowed 50..500",
		 fx->path);
	load_fails(fx, -EINVAL, want);
}

static void test_config_file_line_without_equals(void **state)
{
	struct fixture *fx = *state;
	char want[128];

	write_config(fx, "\n\nhang_ms 7000\n");
	snprintf(want, sizeof(want), "%s:3: hang_ms 7000: missing '='", fx->path);
	load_fails(fx, -EINVAL, want);
}

static void test_config_file_hash_inside_value(void **state)
{
	struct fixture *fx = *state;

	/* '#' starts a comment only at the start or after whitespace. */
	write_config(fx, "hang_ms=7000#x\n");
	load_fails(fx, -EINVAL, ":1: hang_ms=7000#x: not a decimal integer");
}

static void test_config_file_missing(void **state)
{
	struct fixture *fx = *state;

	strcpy(fx->path, "/tmp/jw_test_options_XXXXXX");
	assert_true(mkstemp(fx->path) >= 0);
	unlink(fx->path);
	load_fails(fx, -ENOENT, "No such file or directory");
	assert_contains(fx->err, fx->path);
	fx->path[0] = '\0';
}

static void test_config_file_directory(void **state)
{
	struct fixture *fx = *state;

	fx->err[0] = '\0';
	assert_int_equal(jw_params_load_file(&fx->params, "/tmp", fx->err, sizeof(fx->err)),
			 -EISDIR);
	assert_contains(fx->err, "/tmp");
}

/* --- the command line --- */

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_range_table_covers_every_param),
		T(test_defaults),
		T(test_every_range_bound),
		T(test_range_message_exact),
		T(test_stack_bytes_multiple_of_8),
		T(test_bad_numbers),
		T(test_key_errors),
		T(test_sample_count_formula),
		T(test_sample_count_order_independent),
		T(test_log_type_1_needs_the_four),
		T(test_log_type_0_and_2_need_nothing),
		T(test_threshold_below_trace_threshold),
		T(test_burst),
		T(test_burst_refused),
		T(test_config_file),
		T(test_config_file_bad_line),
		T(test_config_file_line_without_equals),
		T(test_config_file_hash_inside_value),
		T(test_config_file_missing),
		T(test_config_file_directory),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

