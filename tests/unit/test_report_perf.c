// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests of the trace log's companions: the perf script text of the samples, write errors, the file name. */
#include "report_trace_fixture.h"

/*
 * The perf script grammar importers rely on: "<comm> <tid> <sec>.<usec6>: ..." then frames
 * "\t<hex> <symbol> (<module>)" whose module (from the last '(') is one word, then a blank line.
 */
static void check_perf_text(const char *out, size_t frames)
{
	regex_t sample, frame;
	const char *p = out, *nl;
	size_t n = 0;

	assert_int_equal(regcomp(&sample, "^[^[:space:]]+ [0-9]+ [0-9]+\\.[0-9]{6}: 1 cpu-clock:$",
				 REG_EXTENDED | REG_NOSUB), 0);
	assert_int_equal(regcomp(&frame, "^\t *[0-9a-f]+ [^[:cntrl:]]+ \\([^[:space:]()]+\\)$",
				 REG_EXTENDED | REG_NOSUB), 0);
	for (; *p; p = nl + 1) {
		char text[512];

		nl = strchr(p, '\n');
		assert_non_null(nl);
		assert_true((size_t)(nl - p) < sizeof(text));
		memcpy(text, p, (size_t)(nl - p));
		text[nl - p] = '\0';
		if (p == out) {
			check(!regexec(&sample, text, 0, NULL, 0), text);
		} else if (nl[1]) {
			check(!regexec(&frame, text, 0, NULL, 0), text);
			n++;
		} else {
			check(!text[0], text);
		}
	}
	assert_int_equal(n, frames);
	regfree(&sample);
	regfree(&frame);
}

static char *perf_text(const char *comm, uint32_t pid, uint32_t tid, uint64_t ts_ns,
		       const struct jw_frame *frames, size_t n)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	assert_non_null(f);
	assert_int_equal(jw_trace_write_perf_sample(f, comm, pid, tid, ts_ns, frames, n), 0);
	assert_int_equal(fclose(f), 0);
	check_perf_text(out, n);
	return out;
}

static void test_perf_sample(void **state)
{
	const struct jw_frame frames[] = {
		{ .kind = JW_FRAME_KERNEL, .pc = 0xffffffff81a01234, .symbol = "do_epoll_wait",
		  .sym_off = 0x5f },
		{ .kind = JW_FRAME_KERNEL, .pc = 0xffffffff81000010 },
		{ .kind = JW_FRAME_JIT, .pc = 0x3a1f4c0012a0,
		  .symbol = "LazyCompile:*onTick /app/timer.js:12", .sym_off = 0x1c },
		{ .kind = JW_FRAME_NATIVE, .pc = 0x55d1c0a0b1c2, .rel_pc = 0x4b1c2,
		  .module = "/usr/bin/redis-server", .symbol = "aeProcessEvents", .sym_off = 0x42 },
		{ .kind = JW_FRAME_NATIVE, .pc = 0x7f3c8c029d90, .rel_pc = 0x29d90,
		  .module = "/usr/lib/x86_64-linux-gnu/libc.so.6" },
		{ .kind = JW_FRAME_NATIVE, .pc = 0x1234 },
		{ .kind = JW_FRAME_NATIVE, .pc = 0x7f0000001000, .module = "/opt/my app/lib(x).so",
		  .symbol = "bad\nsym", .sym_off = 0 },
		{ .kind = JW_FRAME_JIT, .pc = 0x3a1f4c001000, .module = "/tmp/perf-99.map",
		  .symbol = "", .sym_off = 3 },
	};
	static const char expected[] =
		"Timer_Thread 4243 1234.567890: 1 cpu-clock:\n"
		"\tffffffff81a01234 do_epoll_wait+0x5f ([kernel.kallsyms])\n"
		"\tffffffff81000010 [unknown] ([kernel.kallsyms])\n"
		"\t    3a1f4c0012a0 LazyCompile:*onTick /app/timer.js:12+0x1c "
		"(/tmp/perf-4242.map)\n"
		"\t    55d1c0a0b1c2 aeProcessEvents+0x42 (/usr/bin/redis-server)\n"
		"\t    7f3c8c029d90 [unknown] (/usr/lib/x86_64-linux-gnu/libc.so.6)\n"
		"\t            1234 [unknown] ([unknown])\n"
		"\t    7f0000001000 bad_sym+0x0 (/opt/my_app/lib_x_.so)\n"
		"\t    3a1f4c001000 [unknown] (/tmp/perf-99.map)\n"
		"\n";
	char *out = perf_text("Timer Thread", 4242, 4243, 1234567890123, frames,
			      ARRAY_SIZE(frames));

	(void)state;
	assert_string_equal(out, expected);
	free(out);

	/* Without a pid, JIT code has no perf map to name. */
	out = perf_text("node", 0, 4243, 999, &frames[2], 1);
	assert_string_equal(out, "node 4243 0.000000: 1 cpu-clock:\n"
				 "\t    3a1f4c0012a0 LazyCompile:*onTick /app/timer.js:12+0x1c "
				 "([jit])\n\n");
	free(out);
}

/* A comm of 16 bytes without a NUL is read to its end and no further (ASan watches). */
static void test_perf_comm_bounds(void **state)
{
	char *comm = malloc(16);
	char *out;

	(void)state;
	assert_non_null(comm);
	memcpy(comm, "ThreadPool\tFore ", 16);
	out = perf_text(comm, 1, 2, 3000000000, NULL, 0);
	assert_string_equal(out, "ThreadPool_Fore_ 2 3.000000: 1 cpu-clock:\n\n");
	free(out);
	/* No comm: perf's name for such a thread. */
	out = perf_text("", 1, 2, 3000000000, NULL, 0);
	assert_string_equal(out, ":2 2 3.000000: 1 cpu-clock:\n\n");
	free(out);
	out = perf_text(NULL, 1, 2, 3000000000, NULL, 0);
	assert_string_equal(out, ":2 2 3.000000: 1 cpu-clock:\n\n");
	free(out);
	free(comm);
}

static void test_errors(void **state)
{
	struct jw_trace_event ev[2] = {
		{ .kind = JW_TRACE_END, .comm = "a" },
		{ .kind = (enum jw_trace_kind)99, .comm = "a" },
	};
	struct jw_frame fr = { .kind = JW_FRAME_NATIVE, .pc = 1 };
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	(void)state;
	assert_non_null(f);
	/* An unknown kind fails before a line is written. */
	assert_int_equal(jw_trace_write_ftrace(f, ev, 2), -EINVAL);
	assert_int_equal(jw_trace_write_ftrace(f, NULL, 1), -EINVAL);
	assert_int_equal(jw_trace_write_ftrace(NULL, ev, 1), -EINVAL);
	assert_int_equal(jw_trace_write_perf_sample(f, "a", 1, 1, 0, NULL, 1), -EINVAL);
	assert_int_equal(jw_trace_write_perf_sample(NULL, "a", 1, 1, 0, &fr, 1), -EINVAL);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(len, 0);
	free(out);

	/* Writes to a stream opened for reading fail with EBADF. */
	f = fopen("/dev/null", "r");
	assert_non_null(f);
	assert_int_equal(jw_trace_write_ftrace(f, ev, 1), -EBADF);
	assert_int_equal(jw_trace_write_perf_sample(f, "a", 1, 1, 0, &fr, 1), -EBADF);
	fclose(f);
}

static void test_name(void **state)
{
	char buf[64], small[12];

	(void)state;
	jw_trace_name(4242, 1709294400123, JW_TRACE_FTRACE_SUFFIX, buf, sizeof(buf));
	assert_string_equal(buf, "trace-4242-20240301120000-123.ftrace");
	jw_trace_name(4242, 1709294400123, JW_TRACE_PERF_SUFFIX, buf, sizeof(buf));
	assert_string_equal(buf, "trace-4242-20240301120000-123.perf.txt");
	jw_trace_name(7, 1704067199005, NULL, buf, sizeof(buf));
	assert_string_equal(buf, "trace-7-20231231235959-005");
	jw_trace_name(4294967295u, 1704067200000, ".ftrace", buf, sizeof(buf));
	assert_string_equal(buf, "trace-4294967295-20240101000000-000.ftrace");
	jw_trace_name(4242, 1709294400123, ".ftrace", small, sizeof(small));
	assert_string_equal(small, "trace-4242-");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_perf_sample),
		cmocka_unit_test(test_perf_comm_bounds),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_name),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
