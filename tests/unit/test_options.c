// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests of options.c: every parameter range, the cross checks, the config file, argv. */
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

#define ERR_LEN 1024
#define MAX_ARGS 80

/* Each test owns one of these; teardown frees the config and removes the temp file. */
struct fixture {
	struct jw_config cfg;
	struct jw_params params;
	char err[ERR_LEN];
	char path[64];		/* a temp config file, "" when none */
	char *argv[MAX_ARGS];
	int argc;
};

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	jw_params_defaults(&fx->params);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	jw_config_free(&fx->cfg);
	if (fx->path[0])
		unlink(fx->path);
	free(fx);
	return 0;
}

static void assert_contains(const char *hay, const char *needle)
{
	if (!strstr(hay, needle))
		fail_msg("\"%s\" does not contain \"%s\"", hay, needle);
}

/* Every message is a single line with no "jankwatch: " prefix (the caller adds it). */
static void assert_one_line(const char *msg)
{
	assert_true(msg[0] != '\0');
	assert_null(strchr(msg, '\n'));
	assert_null(strstr(msg, "jankwatch:"));
}

static void set_ok(struct fixture *fx, const char *kv)
{
	int ret = jw_params_set(&fx->params, kv, fx->err, sizeof(fx->err));

	if (ret)
		fail_msg("%s: expected success, got %d: %s", kv, ret, fx->err);
}

/* Asserts that @kv is refused with a one-line message containing @want, and changes nothing. */
static void set_fails(struct fixture *fx, const char *kv, const char *want)
{
	struct jw_params before = fx->params;

	fx->err[0] = '\0';
	if (jw_params_set(&fx->params, kv, fx->err, sizeof(fx->err)) != -EINVAL)
		fail_msg("%s: expected -EINVAL", kv);
	assert_one_line(fx->err);
	assert_contains(fx->err, want);
	assert_memory_equal(&before, &fx->params, sizeof(before));
}

/* Builds argv from "jankwatch" and the NULL-terminated arguments, then parses it. */
static int parse(struct fixture *fx, ...)
{
	const char *a;
	va_list ap;

	jw_config_free(&fx->cfg);
	fx->argc = 0;
	fx->argv[fx->argc++] = "jankwatch";
	va_start(ap, fx);
	while ((a = va_arg(ap, const char *)) && fx->argc < MAX_ARGS - 1)
		fx->argv[fx->argc++] = (char *)a;
	va_end(ap);
	fx->argv[fx->argc] = NULL;
	fx->err[0] = '\0';
	return jw_options_parse(&fx->cfg, fx->argc, fx->argv, fx->err, sizeof(fx->err));
}

#define PARSE(fx, ...) parse(fx, __VA_ARGS__, (const char *)NULL)

static void parse_ok(struct fixture *fx, int ret)
{
	if (ret)
		fail_msg("expected success, got %d: %s", ret, fx->err);
}

static void parse_fails(struct fixture *fx, int ret, const char *want)
{
	if (ret != -EINVAL)
		fail_msg("expected -EINVAL, got %d (err \"%s\")", ret, fx->err);
	assert_one_line(fx->err);
	assert_contains(fx->err, want);
}

/* Writes @text to a new temp file and remembers it for teardown. */
static void write_config(struct fixture *fx, const char *text)
{
	int fd;

	strcpy(fx->path, "/tmp/jw_test_options_XXXXXX");
	fd = mkstemp(fx->path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	assert_int_equal(close(fd), 0);
}

/* --- parameter ranges --- */

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
	{ JW_P_WAIT_TRACEPOINTS, "wait_tracepoints", 2, 0, 2, "allowed 0..2" },
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
	assert_contains(fx->err, "wait_tracepoints, burst");
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

static void test_parse_defaults(void **state)
{
	struct fixture *fx = *state;
	size_t i;

	parse_ok(fx, PARSE(fx, "-p", "42"));
	assert_int_equal(fx->cfg.n_pids, 1);
	assert_int_equal(fx->cfg.pids[0], 42);
	assert_string_equal(fx->cfg.log_dir, "/var/log/jankwatch");
	assert_int_equal(fx->cfg.format, JW_FORMAT_TREE);
	assert_int_equal(fx->cfg.n_probes, 0);
	assert_null(fx->cfg.thread);
	assert_false(fx->cfg.follow);
	assert_null(fx->cfg.config_file);
	assert_true(fx->cfg.duration_s == 0);
	assert_false(fx->cfg.all);
	assert_false(fx->cfg.dev);
	assert_false(fx->cfg.help);
	assert_int_equal(fx->cfg.verbosity, 0);
	for (i = 0; i < N_RANGES; i++)
		assert_int_equal(fx->cfg.params.v[ranges[i].p], ranges[i].def);
}

static void test_parse_pid_list(void **state)
{
	struct fixture *fx = *state;

	parse_ok(fx, PARSE(fx, "-p", "1,22,333"));
	assert_int_equal(fx->cfg.n_pids, 3);
	assert_int_equal(fx->cfg.pids[0], 1);
	assert_int_equal(fx->cfg.pids[1], 22);
	assert_int_equal(fx->cfg.pids[2], 333);

	parse_ok(fx, PARSE(fx, "-p", "7", "--all", "-p", "8,9", "-p10"));
	assert_int_equal(fx->cfg.n_pids, 4);
	assert_int_equal(fx->cfg.pids[0], 7);
	assert_int_equal(fx->cfg.pids[3], 10);

	/* A PID given twice is watched once. */
	parse_ok(fx, PARSE(fx, "-p", "5", "-p", "5,6"));
	assert_int_equal(fx->cfg.n_pids, 2);

	parse_ok(fx, PARSE(fx, "-p", "4194304"));
	assert_int_equal(fx->cfg.pids[0], 4194304);
}

static void test_parse_bad_pid(void **state)
{
	static const char *const bad[] = {
		"abc", "0", "-1", "1,", ",1", "1,,2", "12x", "+5", " 5", "", "4194305",
		"99999999999999999999",
	};
	struct fixture *fx = *state;
	char want[64];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(want, sizeof(want), "-p %s: bad PID", bad[i]);
		parse_fails(fx, PARSE(fx, "-p", bad[i]), want);
		assert_contains(fx->err, "allowed 1..4194304");
		/* A failed parse leaves nothing allocated. */
		assert_null(fx->cfg.log_dir);
	}
	parse_fails(fx, PARSE(fx, "-p", "1,x,3"), "-p 1,x,3: bad PID 'x'");
}

static void test_parse_too_many_pids(void **state)
{
	struct fixture *fx = *state;
	char list[JW_MAX_PIDS * 4 + 8];
	size_t off = 0;
	int i;

	for (i = 1; i <= JW_MAX_PIDS; i++)
		off += snprintf(list + off, sizeof(list) - off, "%s%d", i > 1 ? "," : "", i);
	parse_ok(fx, PARSE(fx, "-p", list));
	assert_int_equal(fx->cfg.n_pids, JW_MAX_PIDS);
	parse_fails(fx, PARSE(fx, "-p", list, "-p", "999"), "too many PIDs, at most 64");
}

static void test_parse_probe(void **state)
{
	struct fixture *fx = *state;

	parse_ok(fx, PARSE(fx, "-p", "1", "--probe", "/usr/bin/app:dispatch"));
	assert_int_equal(fx->cfg.n_probes, 1);
	assert_string_equal(fx->cfg.probes[0].bin, "/usr/bin/app");
	assert_string_equal(fx->cfg.probes[0].entry, "dispatch");
	assert_null(fx->cfg.probes[0].exit);

	parse_ok(fx, PARSE(fx, "--probe", "/lib/libx.so:begin_task:end_task", "-p", "1",
			   "--probe=/bin/y:run"));
	assert_int_equal(fx->cfg.n_probes, 2);
	assert_string_equal(fx->cfg.probes[0].bin, "/lib/libx.so");
	assert_string_equal(fx->cfg.probes[0].entry, "begin_task");
	assert_string_equal(fx->cfg.probes[0].exit, "end_task");
	assert_string_equal(fx->cfg.probes[1].bin, "/bin/y");
	assert_null(fx->cfg.probes[1].exit);
}

static void test_parse_probe_malformed(void **state)
{
	static const char *const bad[] = {
		"/bin/x", ":entry", "/bin/x:", "/bin/x::exit", "/bin/x:entry:", "/bin/x:a:b:c", ":",
		"", "::",
	};
	struct fixture *fx = *state;
	char want[64];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(want, sizeof(want), "--probe %s: expected BIN:ENTRY[:EXIT]", bad[i]);
		parse_fails(fx, PARSE(fx, "-p", "1", "--probe", bad[i]), want);
	}
}

static void test_parse_too_many_probes(void **state)
{
	struct fixture *fx = *state;
	const char *args[2 * JW_MAX_PROBE_SPECS + 8];
	int n = 0, i, ret;

	args[n++] = "jankwatch";
	args[n++] = "-p";
	args[n++] = "1";
	for (i = 0; i <= JW_MAX_PROBE_SPECS; i++) {
		args[n++] = "--probe";
		args[n++] = "/bin/x:f";
	}
	args[n] = NULL;
	ret = jw_options_parse(&fx->cfg, n, (char **)args, fx->err, sizeof(fx->err));
	parse_fails(fx, ret, "too many probes, at most 16");
	ret = jw_options_parse(&fx->cfg, n - 2, (char **)args, fx->err, sizeof(fx->err));
	parse_ok(fx, ret);
	assert_int_equal(fx->cfg.n_probes, JW_MAX_PROBE_SPECS);
}

static void test_parse_duration(void **state)
{
	static const char *const bad_syntax[] = { "abc", "", "1e3", "-1", "1.2.3", ".", "5s",
						  "inf", " 5", "0x10" };
	struct fixture *fx = *state;
	size_t i;

	parse_ok(fx, PARSE(fx, "-p", "1", "--duration", "0.5"));
	assert_true(fx->cfg.duration_s == 0.5);
	parse_ok(fx, PARSE(fx, "-p", "1", "--duration", "10"));
	assert_true(fx->cfg.duration_s == 10.0);
	parse_ok(fx, PARSE(fx, "-p", "1", "--duration", ".25"));
	assert_true(fx->cfg.duration_s == 0.25);
	parse_ok(fx, PARSE(fx, "-p", "1", "--duration", "31536000"));
	assert_true(fx->cfg.duration_s == 31536000.0);

	parse_fails(fx, PARSE(fx, "-p", "1", "--duration", "31536000.5"),
		    "--duration 31536000.5: out of range, allowed > 0 up to 31536000");
	parse_fails(fx, PARSE(fx, "-p", "1", "--duration", "0"), "--duration 0: out of range");
	parse_fails(fx, PARSE(fx, "-p", "1", "--duration", "0.000"), "out of range");
	for (i = 0; i < sizeof(bad_syntax) / sizeof(bad_syntax[0]); i++)
		parse_fails(fx, PARSE(fx, "-p", "1", "--duration", bad_syntax[i]),
			    "not a number of seconds");
}

static void test_parse_format(void **state)
{
	struct fixture *fx = *state;

	parse_ok(fx, PARSE(fx, "-p", "1", "--format", "folded"));
	assert_int_equal(fx->cfg.format, JW_FORMAT_FOLDED);
	parse_ok(fx, PARSE(fx, "-p", "1", "--format=tree"));
	assert_int_equal(fx->cfg.format, JW_FORMAT_TREE);
	parse_fails(fx, PARSE(fx, "-p", "1", "--format", "json"),
		    "--format json: unknown format, allowed tree or folded");
}

/* --loop: auto, syscall, or one preset by name; a preset and --probe do not mix. */
static void test_parse_loop(void **state)
{
	struct fixture *fx = *state;

	parse_ok(fx, PARSE(fx, "-p", "1"));
	assert_int_equal(fx->cfg.loop, JW_LOOP_AUTO);
	assert_false(fx->cfg.loop_given);
	parse_ok(fx, PARSE(fx, "-p", "1", "--loop", "nginx"));
	assert_int_equal(fx->cfg.loop, JW_LOOP_NGINX);
	assert_true(fx->cfg.loop_given);
	assert_string_equal(jw_loop_name(fx->cfg.loop), "nginx");
	parse_ok(fx, PARSE(fx, "-p", "1", "--loop=python"));
	assert_string_equal(jw_loop_name(fx->cfg.loop), "python");
	parse_ok(fx, PARSE(fx, "-p", "1", "--loop", "syscall", "--probe", "a:f"));
	assert_int_equal(fx->cfg.loop, JW_LOOP_SYSCALL);
	parse_fails(fx, PARSE(fx, "-p", "1", "--loop", "qt"),
		    "--loop qt: unknown loop, allowed auto, syscall, glib, libuv");
	parse_fails(fx, PARSE(fx, "-p", "1", "--loop", "glib", "--probe", "a:f"),
		    "--loop glib and --probe: give one way to hook the loop");
	assert_string_equal(jw_loop_name(JW_LOOP_COUNT), "?");
}

static void test_parse_flags_and_strings(void **state)
{
	struct fixture *fx = *state;

	parse_ok(fx, PARSE(fx, "--all", "--dev", "-p", "1", "--log-dir", "/tmp/a", "--log-dir",
			   "/tmp/b", "--thread", "worker", "-v", "-vv"));
	assert_true(fx->cfg.all);
	assert_true(fx->cfg.dev);
	assert_string_equal(fx->cfg.log_dir, "/tmp/b");
	assert_string_equal(fx->cfg.thread, "worker");
	assert_int_equal(fx->cfg.verbosity, 3);
	/* The strings are copies, not pointers into argv. */
	assert_ptr_not_equal(fx->cfg.thread, fx->argv[10]);

	parse_ok(fx, PARSE(fx, "-p", "1", "-q", "--thread", "1234"));
	assert_int_equal(fx->cfg.verbosity, -1);
	assert_string_equal(fx->cfg.thread, "1234");

	parse_fails(fx, PARSE(fx, "-p", "1", "--thread", "0"), "--thread 0: bad TID");
	parse_fails(fx, PARSE(fx, "-p", "1", "--thread", ""), "--thread '': empty value");
	parse_fails(fx, PARSE(fx, "-p", "1", "--log-dir", ""), "--log-dir '': empty value");
}

static void test_parse_unknown_option(void **state)
{
	struct fixture *fx = *state;

	parse_fails(fx, PARSE(fx, "-p", "1", "--bogus"), "unknown or ambiguous option --bogus");
	parse_fails(fx, PARSE(fx, "-p", "1", "-x"), "unknown option -x");
	parse_fails(fx, PARSE(fx, "-p", "1", "-vx"), "unknown option -x");
	parse_fails(fx, PARSE(fx, "-p", "1", "--all=yes"), "option --all takes no argument");
	parse_fails(fx, PARSE(fx, "-p"), "option -p needs an argument");
	parse_fails(fx, PARSE(fx, "-p", "1", "--probe"), "option --probe needs an argument");
	parse_fails(fx, PARSE(fx, "-p", "1", "--d"), "--d");

	/* Stopped inside "-xq": the next parse must start afresh, not resume at the 'q'. */
	parse_fails(fx, PARSE(fx, "-p", "1", "-xq"), "unknown option -x");
	parse_ok(fx, PARSE(fx, "-p", "2"));
	assert_int_equal(fx->cfg.verbosity, 0);
	assert_int_equal(fx->cfg.pids[0], 2);
}

static void test_parse_positional_refused(void **state)
{
	struct fixture *fx = *state;

	parse_fails(fx, PARSE(fx, "-p", "1", "extra"), "unexpected argument 'extra'");
	parse_fails(fx, PARSE(fx, "extra", "-p", "1"), "unexpected argument 'extra'");
	parse_fails(fx, PARSE(fx, "-p", "1", "--", "sleep", "1"), "give -p PID or -- CMD, not both");
	parse_fails(fx, PARSE(fx, "-p", "1", "--user", "nobody"), "--user nobody: only for");
	parse_fails(fx, PARSE(fx, "--follow", "--", "sleep", "1"), "--follow: only with -p PID");
	parse_fails(fx, PARSE(fx, "--follow", "--exe", "/bin/sh"), "--follow: only with -p PID");
}

/* --follow: -p's processes' children too; off unless given. */
static void test_parse_follow(void **state)
{
	struct fixture *fx = *state;

	parse_ok(fx, PARSE(fx, "-p", "1", "--follow", "--exe", "/bin/sh"));
	assert_true(fx->cfg.follow);
	assert_int_equal(fx->cfg.n_pids, 1);
}

/* "--" ends the options: what follows is the program to start, kept as given. */
static void test_parse_command(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(PARSE(fx, "--set", "ignore_startup_time=3", "--user", "nobody", "--",
			       "python3", "-u", "app.py", "--all"), 0);
	assert_non_null(fx->cfg.cmd);
	assert_string_equal(fx->cfg.cmd[0], "python3");
	assert_string_equal(fx->cfg.cmd[1], "-u");
	assert_string_equal(fx->cfg.cmd[2], "app.py");
	/* An option after the command is the command's. */
	assert_string_equal(fx->cfg.cmd[3], "--all");
	assert_null(fx->cfg.cmd[4]);
	assert_false(fx->cfg.all);
	assert_string_equal(fx->cfg.user, "nobody");
	assert_int_equal(fx->cfg.n_pids, 0);
}

static void test_parse_needs_target(void **state)
{
	struct fixture *fx = *state;

	parse_fails(fx, PARSE(fx, "--all"), "no target: give -p PID");
	assert_string_equal(fx->err, "no target: give -p PID, --exe PATH, or -- CMD [ARGS...]");
	parse_fails(fx, parse(fx, (const char *)NULL), "no target: give -p PID");
}

static void test_parse_set(void **state)
{
	struct fixture *fx = *state;

	parse_ok(fx, PARSE(fx, "-p", "1", "--set", "sample_interval=200", "--set=hang_ms=9000",
			   "--set", "burst=2/100/5"));
	assert_int_equal(fx->cfg.params.v[JW_P_SAMPLE_INTERVAL], 200);
	assert_int_equal(fx->cfg.params.v[JW_P_HANG_MS], 9000);
	assert_int_equal(fx->cfg.params.v[JW_P_SAMPLE_COUNT], 8);	/* derived */
	assert_true(fx->cfg.params.burst.on);

	parse_fails(fx, PARSE(fx, "-p", "1", "--set", "sample_interval=40"), "--set");
	assert_string_equal(fx->err, "--set sample_interval=40: out of range, allowed 50..500");
	parse_fails(fx, PARSE(fx, "-p", "1", "--set", "nope=1"), "--set nope=1: unknown parameter");
}

static void test_parse_runs_finish(void **state)
{
	struct fixture *fx = *state;

	parse_fails(fx, PARSE(fx, "-p", "1", "--set", "log_type=1"), "log_type=1 needs");
	parse_fails(fx, PARSE(fx, "-p", "1", "--set", "threshold_ms=500"),
		    "must be below trace_threshold_ms=450");
	parse_fails(fx, PARSE(fx, "-p", "1", "--set", "sample_interval=500", "--set",
			      "sample_count=2"), "allowed 1..1");
	parse_ok(fx, PARSE(fx, "-p", "1", "--set", "log_type=1", "--set", "sample_interval=100",
			   "--set", "ignore_startup_time=3", "--set", "sample_count=21", "--set",
			   "report_times_per_app=3"));
	assert_int_equal(fx->cfg.params.v[JW_P_LOG_TYPE], 1);
	assert_int_equal(fx->cfg.params.v[JW_P_SAMPLE_COUNT], 21);
}

static void test_parse_set_overrides_config(void **state)
{
	struct fixture *fx = *state;

	write_config(fx, "sample_interval=200\nthreshold_ms=100\n");
	/* --set before --config on the command line still wins. */
	parse_ok(fx, PARSE(fx, "--set", "sample_interval=300", "--config", fx->path, "-p", "1"));
	assert_string_equal(fx->cfg.config_file, fx->path);
	assert_int_equal(fx->cfg.params.v[JW_P_SAMPLE_INTERVAL], 300);
	assert_int_equal(fx->cfg.params.v[JW_P_THRESHOLD_MS], 100);

	parse_ok(fx, PARSE(fx, "--config", fx->path, "-p", "1", "--set", "threshold_ms=160"));
	assert_int_equal(fx->cfg.params.v[JW_P_SAMPLE_INTERVAL], 200);
	assert_int_equal(fx->cfg.params.v[JW_P_THRESHOLD_MS], 160);
}

/* A reload reads the config file again with the command line's --set on top; a bad one is refused. */
static void test_reload(void **state)
{
	struct fixture *fx = *state;
	struct jw_params p;

	write_config(fx, "threshold_ms=200\nhang_ms=7000\n");
	parse_ok(fx, PARSE(fx, "--config", fx->path, "-p", "1", "--set", "hang_ms=8000"));
	write_config(fx, "threshold_ms=300\nhang_ms=7000\nlog_quota_bytes=1000\n");
	assert_int_equal(jw_options_reload(&fx->cfg, &p, fx->err, sizeof(fx->err)), 0);
	assert_int_equal(p.v[JW_P_THRESHOLD_MS], 300);
	assert_int_equal(p.v[JW_P_HANG_MS], 8000);
	assert_int_equal(p.v[JW_P_LOG_QUOTA_BYTES], 1000);
	/* What was parsed at start is untouched by the reload itself. */
	assert_int_equal(fx->cfg.params.v[JW_P_THRESHOLD_MS], 200);

	write_config(fx, "threshold_ms=abc\n");
	p.v[JW_P_THRESHOLD_MS] = 12345;
	assert_int_equal(jw_options_reload(&fx->cfg, &p, fx->err, sizeof(fx->err)), -EINVAL);
	assert_contains(fx->err, "threshold_ms=abc");
	assert_int_equal(p.v[JW_P_THRESHOLD_MS], 12345);
}

/*
 * A config file can name the targets: exe= lines add executables as --exe does, log_dir= sets
 * the log directory unless --log-dir was given; a config with no target at all is refused.
 */
static void test_config_targets(void **state)
{
	struct fixture *fx = *state;
	struct jw_params p;

	write_config(fx, "# always on\nexe=/usr/bin/redis-check-rdb\nexe = /usr/sbin/nginx\n"
			 "log_dir=/var/log/jw-test\nthreshold_ms=200\n");
	parse_ok(fx, PARSE(fx, "--config", fx->path));
	assert_int_equal(fx->cfg.n_exes, 2);
	assert_string_equal(fx->cfg.exes[0], "/usr/bin/redis-check-rdb");
	assert_string_equal(fx->cfg.exes[1], "/usr/sbin/nginx");
	assert_string_equal(fx->cfg.log_dir, "/var/log/jw-test");
	assert_int_equal(fx->cfg.params.v[JW_P_THRESHOLD_MS], 200);
	/* The command line's --exe come first; --log-dir wins over log_dir=. */
	parse_ok(fx, PARSE(fx, "--exe", "/bin/true", "--log-dir", "/tmp/x", "--config", fx->path));
	assert_int_equal(fx->cfg.n_exes, 3);
	assert_string_equal(fx->cfg.exes[0], "/bin/true");
	assert_string_equal(fx->cfg.log_dir, "/tmp/x");
	/* Parameters alone read such a file as a parameter file. */
	jw_params_defaults(&p);
	assert_int_equal(jw_params_load_file(&p, fx->path, fx->err, sizeof(fx->err)), 0);
	assert_int_equal(p.v[JW_P_THRESHOLD_MS], 200);

	write_config(fx, "threshold_ms=200\n");
	parse_fails(fx, PARSE(fx, "--config", fx->path), "or exe=PATH lines in");
	parse_ok(fx, PARSE(fx, "--config", fx->path, "-p", "1"));
	write_config(fx, "exe=\n");
	parse_fails(fx, PARSE(fx, "--config", fx->path), "exe='': empty value");
}

static void test_parse_config_errors(void **state)
{
	struct fixture *fx = *state;
	char want[128];

	parse_fails(fx, PARSE(fx, "-p", "1", "--config", "/nonexistent/jw.conf"),
		    "cannot open config file /nonexistent/jw.conf: No such file or directory");

	write_config(fx, "log_type=7\n");
	snprintf(want, sizeof(want), "%s:1: log_type=7: out of range, allowed 0..2", fx->path);
	parse_fails(fx, PARSE(fx, "-p", "1", "--config", fx->path), want);
}

/* Runs the parser with stdout sent to a file, and returns what it printed. */
static char *parse_capturing_stdout(struct fixture *fx, const char *arg, int *ret)
{
	char path[] = "/tmp/jw_test_stdout_XXXXXX", *out = calloc(1, 16384);
	int fd = mkstemp(path), saved = dup(STDOUT_FILENO);

	assert_non_null(out);
	assert_true(fd >= 0 && saved >= 0);
	fflush(stdout);
	dup2(fd, STDOUT_FILENO);
	*ret = PARSE(fx, arg);
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	assert_true(pread(fd, out, 16383, 0) > 0);
	close(fd);
	unlink(path);
	return out;
}

static void test_parse_help(void **state)
{
	struct fixture *fx = *state;
	const char *const opts[] = { "--help", "-h" };
	size_t i;
	char *out;
	int ret;

	for (i = 0; i < 2; i++) {
		out = parse_capturing_stdout(fx, opts[i], &ret);
		assert_int_equal(ret, 0);	/* no -p needed for --help */
		assert_true(fx->cfg.help);
		assert_contains(out, "Usage: jankwatch");
		free(out);
	}
}

static void test_usage(void **state)
{
	static const char *const want[] = {
		"-p PID[,PID...]", "--probe BIN:ENTRY[:EXIT]", "--thread TID|NAME",
		"--set KEY=VALUE", "--config FILE", "--all", "--dev", "--log-dir DIR",
		"default /var/log/jankwatch", "--format FMT", "tree (default) or folded",
		"--duration SEC", "-v, -q", "--help",
		"sample_interval", "50..500; default 150", ">= 3 (at most 31536000); default 10",
		"default min(10, max)", "512..65536 in multiples of 8; default 16384",
		"0..1099511627776; default 10485760", "burst", "default off",
	};
	char *text = NULL;
	size_t len = 0, i;
	FILE *f = open_memstream(&text, &len);

	(void)state;
	assert_non_null(f);
	jw_options_usage(f);
	assert_int_equal(fclose(f), 0);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		assert_contains(text, want[i]);
	for (i = 0; i < N_RANGES; i++)
		assert_contains(text, ranges[i].name);
	free(text);
}

static void test_config_free_is_safe(void **state)
{
	struct fixture *fx = *state;

	jw_config_free(NULL);
	parse_ok(fx, PARSE(fx, "-p", "1", "--probe", "/bin/x:a:b", "--thread", "t"));
	jw_config_free(&fx->cfg);
	assert_null(fx->cfg.log_dir);
	assert_int_equal(fx->cfg.n_probes, 0);
	jw_config_free(&fx->cfg);	/* twice is harmless; teardown frees a third time */
}

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
		T(test_parse_defaults),
		T(test_parse_pid_list),
		T(test_parse_bad_pid),
		T(test_parse_too_many_pids),
		T(test_parse_probe),
		T(test_parse_probe_malformed),
		T(test_parse_too_many_probes),
		T(test_parse_duration),
		T(test_parse_format),
		T(test_parse_loop),
		T(test_parse_flags_and_strings),
		T(test_parse_unknown_option),
		T(test_parse_positional_refused),
		T(test_parse_follow),
		T(test_parse_command),
		T(test_parse_needs_target),
		T(test_parse_set),
		T(test_parse_runs_finish),
		T(test_parse_set_overrides_config),
		T(test_reload),
		T(test_config_targets),
		T(test_parse_config_errors),
		T(test_parse_help),
		T(test_usage),
		T(test_config_free_is_safe),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
