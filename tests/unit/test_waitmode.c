// SPDX-License-Identifier: GPL-2.0-only
/* waitmode.c: syscall mode's choice between the tracepoints and the uprobes, by measured cost. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "attach/waitmode.h"

/* Figures of this machine: 180 ns per system call with the tracepoints, 1400 ns per wait. */
static struct jw_wait_costs costs(uint64_t syscalls, uint64_t waits)
{
	return (struct jw_wait_costs){ .window_s = 0.5, .syscalls = syscalls, .waits = waits,
				       .tp_ns = 180, .up_ns = 1400 };
}

/* A busy loop making most of the machine's system calls: the tracepoints, with the figures. */
static void test_busy_loop_takes_tracepoints(void **state)
{
	struct jw_wait_costs c = costs(800000, 780000);
	char why[512];

	(void)state;
	assert_true(jw_wait_choose_tracepoints(&c, why, sizeof(why)));
	/* 1.6M/s x 180 ns = 288 ms/s against 1.56M/s x 1400 ns = 2184 ms/s. */
	assert_non_null(strstr(why, "1600000 system calls/s"));
	assert_non_null(strstr(why, "= 288.00 ms/s"));
	assert_non_null(strstr(why, "1560000 watched waits/s"));
	assert_non_null(strstr(why, "= 2184.00 ms/s"));
}

/* A loop among a busy machine's threads: the uprobes, which cost the machine less. */
static void test_busy_machine_keeps_uprobes(void **state)
{
	struct jw_wait_costs c = costs(500000, 5000);
	char why[512];

	(void)state;
	assert_false(jw_wait_choose_tracepoints(&c, why, sizeof(why)));
	assert_null(strstr(why, "not enough saved"));
}

/* Cheaper, but by less than half, or by less than 5 ms of CPU per s: the uprobes still. */
static void test_margins(void **state)
{
	/* 100k/s x 180 = 18 ms/s against 20k/s x 1400 = 28 ms/s: under half is not reached. */
	struct jw_wait_costs under_half = costs(50000, 10000);
	/* 1000/s x 180 = 0.18 ms/s against 800/s x 1400 = 1.12 ms/s: 0.94 ms/s saved. */
	struct jw_wait_costs small = costs(500, 400);
	/* 10000/s x 180 = 1.8 ms/s against 8000/s x 1400 = 11.2 ms/s: both margins met. */
	struct jw_wait_costs enough = costs(5000, 4000);
	char why[512];

	(void)state;
	assert_false(jw_wait_choose_tracepoints(&under_half, why, sizeof(why)));
	assert_non_null(strstr(why, "not enough saved"));
	assert_false(jw_wait_choose_tracepoints(&small, why, sizeof(why)));
	assert_non_null(strstr(why, "not enough saved"));
	assert_true(jw_wait_choose_tracepoints(&enough, why, sizeof(why)));
}

/* Nothing measured: the uprobes, and why. */
static void test_unknowns_keep_uprobes(void **state)
{
	struct jw_wait_costs idle = costs(300, 0);
	struct jw_wait_costs no_window = costs(800000, 780000);
	struct jw_wait_costs no_tp = costs(800000, 780000);
	struct jw_wait_costs no_up = costs(800000, 780000);
	char why[512];

	(void)state;
	no_window.window_s = 0;
	no_tp.tp_ns = -1;
	no_up.up_ns = -1;
	assert_false(jw_wait_choose_tracepoints(&idle, why, sizeof(why)));
	assert_string_equal(why, "the watched threads made no wait system call in 0.5 s");
	assert_false(jw_wait_choose_tracepoints(&no_window, why, sizeof(why)));
	assert_false(jw_wait_choose_tracepoints(&no_tp, why, sizeof(why)));
	assert_string_equal(why, "what the tracepoints cost could not be measured");
	assert_false(jw_wait_choose_tracepoints(&no_up, why, sizeof(why)));
	assert_string_equal(why, "what the uprobes cost could not be measured");
}

/* A short buffer gets a cut, terminated clause. */
static void test_short_buffer(void **state)
{
	struct jw_wait_costs c = costs(800000, 780000);
	char why[16];

	(void)state;
	assert_true(jw_wait_choose_tracepoints(&c, why, sizeof(why)));
	assert_int_equal(strlen(why), sizeof(why) - 1);
}

static void test_median(void **state)
{
	double odd[] = { 5, 1, 9, 3, 7 };
	double even[] = { 4, 1, 3, 2 };
	double one[] = { 42 };

	(void)state;
	assert_true(jw_median(odd, 5) == 5);
	assert_true(jw_median(even, 4) == 2.5);
	assert_true(jw_median(one, 1) == 42);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_busy_loop_takes_tracepoints),
		cmocka_unit_test(test_busy_machine_keeps_uprobes),
		cmocka_unit_test(test_margins),
		cmocka_unit_test(test_unknowns_keep_uprobes),
		cmocka_unit_test(test_short_buffer),
		cmocka_unit_test(test_median),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
