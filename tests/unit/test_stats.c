// SPDX-License-Identifier: GPL-2.0-only
/*
 * The statistics: how a stream of tasks is counted in a row (jw_stats_add, the code the BPF
 * programs run), the CSV and histogram dumps, and the stats socket's requests.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "jankwatch/stats_add.h"
#include "report/report_stats.h"
#include "session/statsock.h"

/* floor(log2(@v)) the slow way: the reference for the branchless jw_log2(). */
static uint32_t log2_by_shifts(uint64_t v)
{
	uint32_t r = 0;

	while (v >>= 1)
		r++;
	return r;
}

static void test_log2(void **state)
{
	uint64_t x = 0x2545f4914f6cdd1dULL;

	(void)state;
	assert_int_equal(jw_log2(0), 0);
	assert_int_equal(jw_log2(~0ULL), 63);
	for (int i = 0; i < 64; i++) {
		uint64_t p = 1ULL << i;

		assert_int_equal(jw_log2(p), i);
		assert_int_equal(jw_log2(p - 1), log2_by_shifts(p - 1));
		assert_int_equal(jw_log2(p + 1), log2_by_shifts(p + 1));
		assert_int_equal(jw_log2(p | (p - 1)), i);
	}
	for (int i = 0; i < 1000000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		assert_int_equal(jw_log2(x >> (x & 63)), log2_by_shifts(x >> (x & 63)));
	}
}

static void test_slots(void **state)
{
	(void)state;
	assert_int_equal(jw_stats_slot(0), 0);
	assert_int_equal(jw_stats_slot(1), 0);
	assert_int_equal(jw_stats_slot(2), 1);
	assert_int_equal(jw_stats_slot(3), 1);
	assert_int_equal(jw_stats_slot(4), 2);
	assert_int_equal(jw_stats_slot(1023), 9);
	assert_int_equal(jw_stats_slot(1024), 10);
	assert_int_equal(jw_stats_slot(1ULL << 31), 31);
	assert_int_equal(jw_stats_slot(~0ULL), JW_HIST_SLOTS - 1);
}

/* The kernel's slot from ns, without a division, is the slot of the us: at every boundary too. */
static void test_slots_from_ns(void **state)
{
	uint64_t x = 0x9e3779b97f4a7c15ULL;

	(void)state;
	assert_int_equal(jw_stats_slot_ns(0), 0);
	assert_int_equal(jw_stats_slot_ns(1999), 0);
	assert_int_equal(jw_stats_slot_ns(2000), 1);
	assert_int_equal(jw_stats_slot_ns(~0ULL), jw_stats_slot(~0ULL / 1000));
	for (int i = 0; i < 55; i++) {
		uint64_t edge = 1000ULL << i;

		for (int d = -2; d <= 2; d++)
			assert_int_equal(jw_stats_slot_ns(edge + d), jw_stats_slot((edge + d) / 1000));
		assert_int_equal(jw_stats_slot_ns((1ULL << (i + 9)) - 1),
				 jw_stats_slot(((1ULL << (i + 9)) - 1) / 1000));
	}
	for (int i = 0; i < 1000000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		uint64_t ns = x >> (x & 63);

		assert_int_equal(jw_stats_slot_ns(ns), jw_stats_slot(ns / 1000));
	}
}

/*
 * Every task counted; with interval 1 every one timed; max and the histogram follow. The delay
 * is summed over the tasks that know it (every third does not).
 */
static void test_stream_every_task(void **state)
{
	struct jw_stats_val v = { 0 };
	uint64_t total = 0, hist = 0, delays = 0, n_delays = 0;
	int i;

	(void)state;
	for (i = 1; i <= 1000; i++) {
		uint64_t wall = (uint64_t)i * 1000;	/* 1..1000 us */
		uint64_t delay = i % 3 ? (uint64_t)(1000 - i) * 2000 : JW_DELAY_UNKNOWN;

		jw_stats_add(&v, wall, wall / 2, delay, i % 100 == 0, 1, false);
		total += wall;
		if (delay != JW_DELAY_UNKNOWN) {
			delays += delay;
			n_delays++;
		}
	}
	assert_int_equal(v.delay_count, n_delays);
	assert_int_equal(v.delay_count, 667);
	assert_int_equal(v.total_delay_ns, delays);
	assert_int_equal(v.max_delay_ns, 999 * 2000);	/* task 1 waited the longest */
	assert_int_equal(v.count, 1000);
	assert_int_equal(v.recorded, 1000);
	assert_int_equal(v.total_ns, total);
	assert_int_equal(v.max_ns, 1000000);
	assert_int_equal(v.max_cpu_ns, 500000);
	assert_int_equal(v.total_cpu_ns, total / 2);
	assert_int_equal(v.exceptions, 10);
	for (i = 0; i < JW_HIST_SLOTS; i++)
		hist += v.hist[i];
	assert_int_equal(hist, 1000);
	assert_int_equal(v.hist[0], 1);		/* 1 us */
	assert_int_equal(v.hist[9], 1000 - 511);	/* 512..1000 us */
}

/* 1 in N: the first, then every N-th is timed; all are counted. */
static void test_stream_sampled(void **state)
{
	struct jw_stats_val v = { 0 };
	int i;

	(void)state;
	for (i = 0; i < 10; i++)
		jw_stats_add(&v, i == 5 ? 9000000 : 1000, 0, i == 5 ? 7000000 : (uint64_t)i * 10,
			     false, 4, i & 1);
	assert_int_equal(v.count, 10);
	assert_int_equal(v.recorded, 3);	/* tasks 0, 4, 8 */
	assert_int_equal(v.total_ns, 3000);
	assert_int_equal(v.max_ns, 1000);	/* the slow task 5 was not timed */
	/* Nor its delay: only the recorded tasks' delays count. */
	assert_int_equal(v.delay_count, 3);
	assert_int_equal(v.total_delay_ns, 0 + 40 + 80);
	assert_int_equal(v.max_delay_ns, 80);
	assert_int_equal(v.hist[0], 3);
}

/*
 * The OVERFLOW row's atomic adds (shared) count exactly what the plain ones do: the same stream,
 * every task timed and 1 in 3, with CPU times, exceptions and a spread over the histogram.
 */
static void test_shared_same_sums(void **state)
{
	struct jw_stats_val plain, shared;
	uint32_t every;
	int i;

	(void)state;
	for (every = 1; every <= 3; every += 2) {
		memset(&plain, 0, sizeof(plain));
		memset(&shared, 0, sizeof(shared));
		for (i = 1; i <= 500; i++) {
			uint64_t wall = (uint64_t)(i * 7919 % 1000003) * 1000;
			uint64_t delay = i % 5 ? wall / 7 : JW_DELAY_UNKNOWN;

			jw_stats_add(&plain, wall, wall / 3, delay, i % 7 == 0, every, false);
			jw_stats_add(&shared, wall, wall / 3, delay, i % 7 == 0, every, true);
		}
		assert_int_equal(shared.count, 500);
		assert_int_equal(shared.recorded, every == 1 ? 500 : 167);
		assert_true(shared.total_cpu_ns > 0 && shared.exceptions > 0 && shared.max_ns > 0);
		assert_true(shared.delay_count > 0 && shared.delay_count < shared.recorded &&
			    shared.total_delay_ns > 0 && shared.max_delay_ns > 0);
		assert_memory_equal(&plain, &shared, sizeof(plain));
	}
}

static char *csv_of(const struct jw_stats_row *r)
{
	static char buf[1024];
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	assert_non_null(f);
	jw_stats_csv_row(f, r);
	fclose(f);
	return buf;
}

static void test_csv_row(void **state)
{
	struct jw_stats_val v = { .count = 7, .recorded = 5, .total_ns = 12345678,
				  .max_ns = 9000999, .total_cpu_ns = 2000000, .max_cpu_ns = 1999,
				  .delay_count = 4, .total_delay_ns = 3999999, .max_delay_ns = 2500000,
				  .exceptions = 1, .uid = 1000 };
	struct jw_stats_row r = { .pid = 42, .tid = 43, .thread_name = "redis-server",
				  .handler_class = "call", .message_name = "getCommand", .val = &v };

	(void)state;
	assert_string_equal(csv_of(&r),
			    "42,1000,redis-server,call,getCommand,false,7,5,12345,9000,2000,1,4,3,2,1\n");
	/* A name with separators is quoted, its quotes doubled; control bytes cannot break lines. */
	r.message_name = "on_tick \"a,b\" /app.py:3";
	r.thread_name = "x\x01y";
	assert_string_equal(csv_of(&r), "42,1000,x?y,call,\"on_tick \"\"a,b\"\" /app.py:3\",false,"
			    "7,5,12345,9000,2000,1,4,3,2,1\n");
	/* OVERFLOW has no process. */
	r.pid = 0;
	r.thread_name = "";
	r.handler_class = "";
	r.message_name = "OVERFLOW";
	assert_string_equal(csv_of(&r), "0,0,,,OVERFLOW,false,7,5,12345,9000,2000,1,4,3,2,1\n");
}

static void test_hist(void **state)
{
	struct jw_stats_val v = { .count = 4, .recorded = 4 };
	struct jw_stats_row r = { .pid = 1, .tid = 1, .thread_name = "t", .handler_class = "c",
				  .message_name = "m", .val = &v };
	char buf[4096];
	FILE *f;

	(void)state;
	v.hist[2] = 3;
	v.hist[4] = 1;
	f = fmemopen(buf, sizeof(buf), "w");
	jw_stats_hist(f, &r);
	fclose(f);
	/* From the lowest used slot to the highest, the empty one between shown; 1/3 of the bar. */
	assert_non_null(strstr(buf, "         4 -> 7          : 3        |****************************************|\n"));
	assert_non_null(strstr(buf, "         8 -> 15         : 0        |"));
	assert_non_null(strstr(buf, "        16 -> 31         : 1        |*************                           |\n"));
	assert_null(strstr(buf, "2 -> 3"));
	assert_null(strstr(buf, "32 -> 63"));
}

static void test_requests(void **state)
{
	struct jw_stats_req req;

	(void)state;
	assert_int_equal(jw_stats_req_parse("dump 0\n", &req), 0);
	assert_int_equal(req.cmd, JW_STATS_DUMP);
	assert_int_equal(req.pid, 0);
	assert_int_equal(jw_stats_req_parse("reset 1234\n", &req), 0);
	assert_int_equal(req.cmd, JW_STATS_RESET);
	assert_int_equal(req.pid, 1234);
	assert_int_equal(jw_stats_req_parse("targets", &req), 0);
	assert_int_equal(req.cmd, JW_STATS_TARGETS);
	assert_int_equal(jw_stats_req_parse("", &req), -EINVAL);
	assert_int_equal(jw_stats_req_parse("drop 1", &req), -EINVAL);
	assert_int_equal(jw_stats_req_parse("dump -1", &req), -EINVAL);
	assert_int_equal(jw_stats_req_parse("dump 1 2", &req), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_log2),
		cmocka_unit_test(test_slots),
		cmocka_unit_test(test_slots_from_ns),
		cmocka_unit_test(test_stream_every_task),
		cmocka_unit_test(test_stream_sampled),
		cmocka_unit_test(test_shared_same_sums),
		cmocka_unit_test(test_csv_row),
		cmocka_unit_test(test_hist),
		cmocka_unit_test(test_requests),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
