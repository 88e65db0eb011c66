// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests of the trace log: every ftrace line must pass Perfetto's systrace line grammar and parse as its line parser parses it. */
#include "report_trace_fixture.h"

static void test_recorded_trace(void **state)
{
	static const char *const event_names[] = {
		[JW_TRACE_BEGIN] = "tracing_mark_write", [JW_TRACE_END] = "tracing_mark_write",
		[JW_TRACE_COUNTER] = "tracing_mark_write", [JW_TRACE_SWITCH] = "sched_switch",
		[JW_TRACE_WAKING] = "sched_waking",
	};
	static const char expected[] =
		"    redis-server-4243  ( 4242) [003] ....  1234.567890: tracing_mark_write: "
		"B|4242|H:aeProcessEvents\n"
		"    redis-server-4243  ( 4242) [003] ....  1234.567900: tracing_mark_write: "
		"C|4242|H:ready_fds|17\n"
		"    redis-server-4243  ( 4242) [003] ....  1234.568000: sched_switch: "
		"prev_comm=redis-server prev_pid=4243 prev_prio=120 prev_state=R+ ==> "
		"next_comm=kworker/3:1 next_pid=77 next_prio=120\n"
		"     kworker/3:1-77    (-----) [003] ....  1234.568100: sched_switch: "
		"prev_comm=kworker/3:1 prev_pid=77 prev_prio=120 prev_state=I ==> "
		"next_comm=redis-server next_pid=4243 next_prio=120\n"
		"    redis-server-4243  ( 4242) [003] ....  1234.569000: sched_switch: "
		"prev_comm=redis-server prev_pid=4243 prev_prio=120 prev_state=S ==> "
		"next_comm=swapper/3 next_pid=0 next_prio=120\n"
		"  bio_close_file-4250  ( 4242) [001] ....  1234.570000: sched_waking: "
		"comm=redis-server pid=4243 prio=120 target_cpu=003\n"
		"       swapper/3-0     (-----) [003] ....  1234.570000: sched_switch: "
		"prev_comm=swapper/3 prev_pid=0 prev_prio=120 prev_state=R ==> "
		"next_comm=redis-server next_pid=4243 next_prio=120\n"
		"  bio_close_file-4250  ( 4242) [001] ....  1234.571000: sched_switch: "
		"prev_comm=bio_close_file prev_pid=4250 prev_prio=120 prev_state=D ==> "
		"next_comm=swapper/1 next_pid=0 next_prio=120\n"
		"    redis-server-4243  ( 4242) [003] ....  1234.572000: tracing_mark_write: "
		"E|4242|\n";
	struct line lines[MAX_LINES];
	char *out = ftrace_text(recorded, ARRAY_SIZE(recorded));
	size_t i;

	(void)state;
	assert_int_equal(check_ftrace(out, lines, MAX_LINES), ARRAY_SIZE(recorded));
	assert_true(!strncmp(out, header, strlen(header)));
	assert_string_equal(out + strlen(header), expected);
	/* What Perfetto reads back: the line's thread, process, CPU, time and event. */
	for (i = 0; i < ARRAY_SIZE(recorded); i++) {
		const struct jw_trace_event *e = &recorded[i];
		char tgid[16], ts[32];

		if (e->tgid)
			snprintf(tgid, sizeof(tgid), "%" PRIu32, e->tgid);
		else
			strcpy(tgid, "-----");
		snprintf(ts, sizeof(ts), "%" PRIu64 ".%06" PRIu64, e->ts_ns / 1000000000,
			 e->ts_ns % 1000000000 / 1000);
		assert_int_equal(lines[i].pid, e->tid);
		assert_int_equal(lines[i].cpu, e->cpu);
		assert_string_equal(lines[i].tgid, tgid);
		assert_string_equal(lines[i].ts, ts);
		assert_string_equal(lines[i].event, event_names[e->kind]);
	}
	assert_string_equal(lines[0].task, "redis-server");
	assert_string_equal(lines[0].args, "B|4242|H:aeProcessEvents");
	assert_string_equal(lines[5].task, "bio_close_file");
	free(out);
}

static void test_empty_trace(void **state)
{
	struct line lines[1];
	char *out = ftrace_text(NULL, 0);

	(void)state;
	assert_int_equal(check_ftrace(out, lines, ARRAY_SIZE(lines)), 0);
	assert_string_equal(out, header);
	free(out);
}

/*
 * Comms: spaces, '=', control bytes, a leading '#' and "</" go; 16 bytes without a NUL are read
 * to the 16th and no further; an empty comm is "<...>" on the line, empty in the fields.
 */
static void test_comms(void **state)
{
	struct jw_trace_event ev[4] = {
		{ .ts_ns = 5000000, .kind = JW_TRACE_SWITCH, .tid = 10, .tgid = 10,
		  .comm = "Timer Thread", .prio = 120, .prev_state = 0x01, .other_tid = 11,
		  .other_comm = "a=b\tc\nd e", .other_prio = 100 },
		{ .ts_ns = 5000001, .kind = JW_TRACE_WAKING, .tid = 12, .tgid = 10,
		  .comm = "#x</script>", .prio = 120, .other_tid = 13,
		  .other_comm = "k=v x", .target_cpu = 1 },
		{ .ts_ns = 5000002, .kind = JW_TRACE_BEGIN, .tid = 13, .tgid = 10, .name = "f" },
		{ .ts_ns = 5000003, .kind = JW_TRACE_SWITCH, .tid = 14, .tgid = 10,
		  .prio = 120, .prev_state = 0x01, .other_tid = 15, .other_prio = 120 },
	};
	struct line lines[MAX_LINES];
	struct args a;
	char *out;

	(void)state;
	/* 16 bytes then, in the next field, bytes that must not show. */
	memcpy(ev[3].comm, "ThreadPoolForegr", 16);
	memcpy(ev[3].other_comm, "0123456789abcdef", 16);
	out = ftrace_text(ev, ARRAY_SIZE(ev));
	assert_int_equal(check_ftrace(out, lines, MAX_LINES), ARRAY_SIZE(ev));

	assert_string_equal(lines[0].task, "Timer_Thread");
	parse_args(lines[0].args, &a);
	assert_string_equal(arg(&a, "prev_comm"), "Timer_Thread");
	assert_string_equal(arg(&a, "next_comm"), "a_b_c_d_e");
	assert_string_equal(arg(&a, "next_pid"), "11");
	assert_string_equal(arg(&a, "next_prio"), "100");

	assert_string_equal(lines[1].task, "_x<_script>");
	assert_null(strstr(out, "</"));
	parse_args(lines[1].args, &a);
	assert_string_equal(arg(&a, "comm"), "k_v_x");
	assert_string_equal(arg(&a, "pid"), "13");

	assert_string_equal(lines[2].task, "<...>");
	assert_non_null(strstr(out, "\n           <...>-13    (   10) [000] ....     0.005000: "
				    "tracing_mark_write: B|10|H:f\n"));

	assert_string_equal(lines[3].task, "ThreadPoolForegr");
	assert_non_null(strstr(out, "\nThreadPoolForegr-14    (   10) [000] ....     0.005000: "
				    "sched_switch: prev_comm=ThreadPoolForegr prev_pid=14 "
				    "prev_prio=120 prev_state=S ==> next_comm=0123456789abcdef "
				    "next_pid=15 next_prio=120\n"));
	free(out);

	/* A 16-byte comm that begins with '#' would begin its line. */
	memcpy(ev[3].comm, "#hreadPoolForegr", 16);
	ev[0].comm[0] = '\0';
	ev[0].other_comm[0] = '\0';
	out = ftrace_text(ev, ARRAY_SIZE(ev));
	assert_int_equal(check_ftrace(out, lines, MAX_LINES), ARRAY_SIZE(ev));
	assert_string_equal(lines[3].task, "_hreadPoolForegr");
	assert_string_equal(lines[0].task, "<...>");
	assert_non_null(strstr(out, "prev_comm= prev_pid=10 "));
	assert_non_null(strstr(out, "==> next_comm= next_pid=11 "));
	free(out);
}

/* A name can neither end its marker's field nor start a line: no forged marker or event. */
static void test_marker_names(void **state)
{
	const struct jw_trace_event ev[] = {
		{ .ts_ns = 1, .kind = JW_TRACE_BEGIN, .tid = 7, .tgid = 7, .comm = "app",
		  .name = "Timer.on_tick|E|7|" },
		{ .ts_ns = 2, .kind = JW_TRACE_BEGIN, .tid = 7, .tgid = 7, .comm = "app",
		  .name = "x\napp-7 (7) [000] .... 0.000002: tracing_mark_write: E|7|" },
		{ .ts_ns = 3, .kind = JW_TRACE_COUNTER, .tid = 7, .tgid = 7, .comm = "app",
		  .name = "q|9", .value = -3 },
		{ .ts_ns = 4, .kind = JW_TRACE_COUNTER, .tid = 7, .tgid = 7, .comm = "app",
		  .name = NULL, .value = INT64_MIN },
		{ .ts_ns = 5, .kind = JW_TRACE_BEGIN, .tid = 7, .tgid = 0, .comm = "app",
		  .name = "operator()(int) const \x7f\r" },
	};
	struct line lines[MAX_LINES];
	char *out = ftrace_text(ev, ARRAY_SIZE(ev));

	(void)state;
	assert_int_equal(check_ftrace(out, lines, MAX_LINES), ARRAY_SIZE(ev));
	assert_string_equal(lines[0].args, "B|7|H:Timer.on_tick_E_7_");
	assert_string_equal(lines[1].args,
			    "B|7|H:x_app-7 (7) [000] .... 0.000002: tracing_mark_write: E_7_");
	assert_string_equal(lines[2].args, "C|7|H:q_9|-3");
	assert_string_equal(lines[3].args, "C|7|H:|-9223372036854775808");
	assert_string_equal(lines[4].args, "B|0|H:operator()(int) const __");
	assert_string_equal(lines[4].tgid, "-----");
	free(out);
}

/* sched_switch's prev_state as the kernel prints it, each one Perfetto parses. */
static void test_prev_states(void **state)
{
	static const struct {
		uint32_t bits;
		const char *text;
	} states[] = {
		{ 0, "R" },	{ JW_TRACE_PREEMPTED, "R+" },
		{ 0x01, "S" },	{ 0x02, "D" },
		{ 0x04, "T" },	{ 0x08, "t" },
		{ 0x10, "X" },	{ 0x20, "Z" },
		{ 0x40, "P" },	{ 0x80, "I" },
		{ 0x03, "S|D" },	{ JW_TRACE_PREEMPTED | 0x01, "R+" },
		{ 0x200, "R" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(states); i++) {
		struct jw_trace_event ev = {
			.ts_ns = 1, .kind = JW_TRACE_SWITCH, .tid = 1, .tgid = 1, .comm = "a",
			.prio = 120, .prev_state = states[i].bits, .other_tid = 2,
			.other_comm = "b", .other_prio = 120,
		};
		struct line lines[1];
		char *out = ftrace_text(&ev, 1);
		struct args a;

		assert_int_equal(check_ftrace(out, lines, ARRAY_SIZE(lines)), 1);
		parse_args(lines[0].args, &a);
		assert_string_equal(arg(&a, "prev_state"), states[i].text);
		free(out);
	}
}

/* tgid padded to five columns or dashes; seconds with exactly six decimals, truncated. */
static void test_tgid_and_time(void **state)
{
	static const struct {
		uint32_t tgid;
		uint64_t ts_ns;
		const char *head;
	} cases[] = {
		{ 0, 1234567890123, "(-----) [002] ....  1234.567890: " },
		{ 1234, 1234567890999, "( 1234) [002] ....  1234.567890: " },
		{ 99999, 0, "(99999) [002] ....     0.000000: " },
		{ 1234567, 999, "(1234567) [002] ....     0.000000: " },
		{ 1, 1000, "(    1) [002] ....     0.000001: " },
		{ 1, 123456789012345678, "(    1) [002] .... 123456789.012345: " },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct jw_trace_event ev = {
			.ts_ns = cases[i].ts_ns, .kind = JW_TRACE_END, .cpu = 2, .tid = 42,
			.tgid = cases[i].tgid, .comm = "app",
		};
		struct line lines[1];
		char *out = ftrace_text(&ev, 1);
		char want[128];

		assert_int_equal(check_ftrace(out, lines, ARRAY_SIZE(lines)), 1);
		snprintf(want, sizeof(want), "%16s-42    %stracing_mark_write: E|%" PRIu32 "|\n",
			 "app", cases[i].head, cases[i].tgid);
		assert_string_equal(out + strlen(header), want);
		free(out);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_recorded_trace),
		cmocka_unit_test(test_empty_trace),
		cmocka_unit_test(test_comms),
		cmocka_unit_test(test_marker_names),
		cmocka_unit_test(test_prev_states),
		cmocka_unit_test(test_tgid_and_time),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
