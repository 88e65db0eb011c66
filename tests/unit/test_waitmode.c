// SPDX-License-Identifier: GPL-2.0-only
/* waitmode.c: syscall mode's choice between the tracepoints and the uprobes, by measured cost. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "attach/waitmode.h"

/*
 * Figures of this machine: 180 ns per system call with the tracepoints, a wait's as much, and
 * 1400 ns per wait with the uprobes; the watched threads' are the machine's only waits.
 */
static struct jw_wait_costs costs(uint64_t syscalls, uint64_t waits)
{
	return (struct jw_wait_costs){ .window_s = 0.5, .syscalls = syscalls,
				       .machine_waits = waits, .waits = waits, .tp_ns = 180,
				       .tpw_ns = 180, .up_ns = 1400 };
}

/* A busy loop making most of the machine's system calls: the tracepoints, with the figures. */
static void test_busy_loop_takes_tracepoints(void **state)
{
	struct jw_wait_costs c = costs(800000, 780000);
	char why[512];

	(void)state;
	assert_true(jw_wait_choose_tracepoints(&c, why, sizeof(why)));
	/* 1.6M/s x 180 ns = 288 ms/s against 1.56M/s x 1400 ns = 2184 ms/s. */
	assert_non_null(strstr(why, "1600000 system calls/s on the machine, 1560000 of them waits: "
				    "40000 x 180 ns + 1560000 x 180 ns with the tracepoints"));
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

/* Cheaper, but by less than half, or by less than 2 ms of CPU per s: the uprobes still. */
static void test_margins(void **state)
{
	/* 100k/s x 180 = 18 ms/s against 20k/s x 1400 = 28 ms/s: under half is not reached. */
	struct jw_wait_costs under_half = costs(50000, 10000);
	/* 2000/s x 180 = 0.36 ms/s against 1600/s x 1400 = 2.24 ms/s: 1.88 ms/s saved. */
	struct jw_wait_costs small = costs(1000, 800);
	/* 2000/s x 180 = 0.36 ms/s against 1800/s x 1400 = 2.52 ms/s: 2.16 ms/s saved. */
	struct jw_wait_costs just = costs(1000, 900);
	/* 10000/s x 180 = 1.8 ms/s against 8000/s x 1400 = 11.2 ms/s: both margins met. */
	struct jw_wait_costs enough = costs(5000, 4000);
	char why[512];

	(void)state;
	assert_false(jw_wait_choose_tracepoints(&under_half, why, sizeof(why)));
	assert_non_null(strstr(why, "not enough saved"));
	assert_false(jw_wait_choose_tracepoints(&small, why, sizeof(why)));
	assert_non_null(strstr(why, "not enough saved"));
	assert_true(jw_wait_choose_tracepoints(&just, why, sizeof(why)));
	assert_true(jw_wait_choose_tracepoints(&enough, why, sizeof(why)));
}

/*
 * Other processes' waits run the tracepoints' exit program too: a client waiting twice for each
 * of the watched loop's waits makes the tracepoints cost three times the loop's waits. 100k
 * system calls/s, 40k of them waits, 10k the loop's, at 20 ns a call, 150 a wait and 500 for
 * the uprobes: 60k x 20 + 40k x 150 = 7.2 ms/s against 5 ms/s: the uprobes. The same with the
 * loop's waits the only ones: 90k x 20 + 10k x 150 = 3.3 against 5: by less than half, kept.
 * And a count of the machine's waits under the loop's (counted apart): the loop's are taken.
 */
static void test_other_waits(void **state)
{
	struct jw_wait_costs c = { .window_s = 1, .syscalls = 100000, .machine_waits = 40000,
				   .waits = 10000, .tp_ns = 20, .tpw_ns = 150, .up_ns = 500 };
	char why[512];

	(void)state;
	assert_false(jw_wait_choose_tracepoints(&c, why, sizeof(why)));
	assert_non_null(strstr(why, "100000 system calls/s on the machine, 40000 of them waits: "
				    "60000 x 20 ns + 40000 x 150 ns with the tracepoints = 7.20 ms/s"));
	c.machine_waits = 10000;
	assert_false(jw_wait_choose_tracepoints(&c, why, sizeof(why)));
	assert_non_null(strstr(why, "= 3.30 ms/s"));
	assert_non_null(strstr(why, "not enough saved"));
	c.up_ns = 1000;	/* 3.3 against 10 ms/s */
	assert_true(jw_wait_choose_tracepoints(&c, why, sizeof(why)));
	c.machine_waits = 9000;
	assert_true(jw_wait_choose_tracepoints(&c, why, sizeof(why)));
	assert_non_null(strstr(why, "10000 of them waits: 90000 x 20 ns + 10000 x 150 ns"));
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

/*
 * On the tracepoints, they stay while they save 1 ms of CPU a second, even by less than the
 * margins that chose them (no switching back and forth between the two), and go once they save
 * less: the loop went idle.
 */
static void test_keep_tracepoints(void **state)
{
	/* 18 ms/s against 28 ms/s: not enough to choose them, enough to keep them. */
	struct jw_wait_costs between = costs(50000, 10000);
	/* 1.6M/s x 180 = 288 ms/s against 2184 ms/s. */
	struct jw_wait_costs busy = costs(800000, 780000);
	/* 1000 system calls/s x 180 = 0.18 ms/s against 10 waits/s x 1400 = 0.014 ms/s. */
	struct jw_wait_costs idle = costs(500, 5);
	/* 0.18 ms/s against 1.12 ms/s: 0.94 ms/s saved, under 1. */
	struct jw_wait_costs small = costs(500, 400);
	struct jw_wait_costs none = costs(500, 0);
	struct jw_wait_costs no_window = costs(500, 5);
	struct jw_wait_costs no_up = costs(500, 5);
	char why[512];

	(void)state;
	assert_false(jw_wait_choose_tracepoints(&between, why, sizeof(why)));
	assert_true(jw_wait_keep_tracepoints(&between, why, sizeof(why)));
	assert_non_null(strstr(why, "= 18.00 ms/s"));
	assert_non_null(strstr(why, "the tracepoints stay while they save 1 ms/s"));
	assert_true(jw_wait_keep_tracepoints(&busy, why, sizeof(why)));
	assert_null(strstr(why, "stay until"));
	assert_false(jw_wait_keep_tracepoints(&idle, why, sizeof(why)));
	assert_non_null(strstr(why, "10 watched waits/s x 1400 ns with uprobes = 0.01 ms/s"));
	assert_false(jw_wait_keep_tracepoints(&none, why, sizeof(why)));
	assert_false(jw_wait_keep_tracepoints(&small, why, sizeof(why)));
	/* Nothing to go by: they stay. */
	no_window.window_s = 0;
	no_up.up_ns = -1;
	assert_true(jw_wait_keep_tracepoints(&no_window, why, sizeof(why)));
	assert_string_equal(why, "the machine's system calls could not be counted");
	assert_true(jw_wait_keep_tracepoints(&no_up, why, sizeof(why)));
	assert_string_equal(why, "what the uprobes cost could not be measured");
}

/* A move of 4 times either way is one; under 100 waits/s all rates are alike. */
static void test_rate_moved(void **state)
{
	(void)state;
	assert_true(jw_wait_rate_moved(10, 17000));
	assert_true(jw_wait_rate_moved(17000, 10));
	assert_true(jw_wait_rate_moved(1000, 4000));
	assert_true(jw_wait_rate_moved(4000, 1000));
	assert_false(jw_wait_rate_moved(1000, 3900));
	assert_false(jw_wait_rate_moved(1000, 260));
	/* 1 and 90 a second are both idle; 399 is under 4 x the floor. */
	assert_false(jw_wait_rate_moved(1, 90));
	assert_false(jw_wait_rate_moved(0, 399));
	assert_true(jw_wait_rate_moved(0, 400));
	assert_true(jw_wait_rate_moved(400, 0));
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

/* The nearest rank: the least value with at least pct percent of them at or below it. */
static void test_percentile(void **state)
{
	double v[20], one[] = { 7 };
	int i;

	(void)state;
	for (i = 0; i < 20; i++)
		v[i] = 20 - i;	/* 20 .. 1: sorted by the call */
	assert_true(jw_percentile(v, 20, 10) == 2);
	assert_true(jw_percentile(v, 20, 11) == 3);
	assert_true(jw_percentile(v, 20, 0) == 1);
	assert_true(jw_percentile(v, 20, 100) == 20);
	assert_true(jw_percentile(v, 20, 250) == 20);
	assert_true(v[0] == 1 && v[19] == 20);
	assert_true(jw_percentile(one, 1, 10) == 7);
}

/* Every trial's rounds are kept, tp_ns their median, never under 0; past the room, dropped. */
static void test_tp_reads(void **state)
{
	struct jw_wait_costs c = costs(1000, 10);
	double first[] = { 0, 80, 51, 30, 20 };
	int i;

	(void)state;
	for (i = 0; i < 5; i++)
		jw_wait_tp_read(&c, first[i], 100);
	assert_int_equal(c.n_tp_reads, 5);
	assert_true(c.tp_ns == 30);
	/* The reads stay in their order: the median sorted a copy. */
	assert_true(c.tp_reads[1] == 80);
	jw_wait_tp_read(&c, 10, 100);
	jw_wait_tp_read(&c, 10, 100);
	assert_true(c.tp_ns == 20);	/* 0 10 10 20 30 51 80 */
	jw_wait_tp_read(&c, -40, -40);
	assert_true(c.tp_ns == 15);	/* -40 0 10 10 20 30 51 80 */
	for (i = 0; i < JW_WAIT_TP_READS; i++)
		jw_wait_tp_read(&c, -90, -90);
	assert_int_equal(c.n_tp_reads, JW_WAIT_TP_READS);
	assert_true(c.tp_ns == 0);	/* a median under 0 reads as nothing added */
	assert_true(c.tpw_ns == 0);
}

/*
 * nginx under 50 clients on this VM: 166742 system calls/s and 1222 watched waits/s, a uprobe
 * session 6917 ns. A median of 30 ns keeps the uprobes (5.00 ms/s against 8.45: under half not
 * reached); the reads' lower quartile, 20, would take the tracepoints: unsure, read again. Reads
 * that all say the uprobes, a choice already the tracepoints, or no room left: sure.
 */
static void test_tp_unsure(void **state)
{
	struct jw_wait_costs c = { .window_s = 1, .syscalls = 166742, .machine_waits = 1222,
				   .waits = 1222, .up_ns = 6917 };
	struct jw_wait_costs high, low, full;
	double first[] = { 0, 80, 51, 30, 20 };
	char why[512];
	int i;

	(void)state;
	high = low = c;
	for (i = 0; i < 5; i++) {
		jw_wait_tp_read(&c, first[i], 100);
		jw_wait_tp_read(&high, 60 + first[i], 100);
		jw_wait_tp_read(&low, first[i] / 4, 100);
	}
	assert_false(jw_wait_choose_tracepoints(&c, why, sizeof(why)));
	assert_true(jw_wait_tp_unsure(&c));
	assert_false(jw_wait_tp_unsure(&high));
	assert_true(jw_wait_choose_tracepoints(&low, why, sizeof(why)));
	assert_false(jw_wait_tp_unsure(&low));
	/* Read again, lower: the median follows, and the tracepoints are chosen. */
	for (i = 0; i < 5; i++)
		jw_wait_tp_read(&c, 8 + i, 100);
	assert_true(c.tp_ns == 11.5);	/* 0 8 9 10 11 12 20 30 51 80 */
	assert_true(jw_wait_choose_tracepoints(&c, why, sizeof(why)));
	assert_false(jw_wait_tp_unsure(&c));
	/* No room for more: the choice stands. */
	full = high;
	full.n_tp_reads = 0;
	for (i = 0; i < JW_WAIT_TP_READS; i++)
		jw_wait_tp_read(&full, i % 2 ? 0 : 60, 100);
	assert_false(jw_wait_tp_unsure(&full));
	/* Nothing read, or the uprobes' cost unknown: nothing to read again for. */
	full.n_tp_reads = 0;
	assert_false(jw_wait_tp_unsure(&full));
	c.up_ns = -1;
	assert_false(jw_wait_tp_unsure(&c));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_busy_loop_takes_tracepoints),
		cmocka_unit_test(test_busy_machine_keeps_uprobes),
		cmocka_unit_test(test_margins),
		cmocka_unit_test(test_other_waits),
		cmocka_unit_test(test_unknowns_keep_uprobes),
		cmocka_unit_test(test_short_buffer),
		cmocka_unit_test(test_keep_tracepoints),
		cmocka_unit_test(test_rate_moved),
		cmocka_unit_test(test_median),
		cmocka_unit_test(test_percentile),
		cmocka_unit_test(test_tp_reads),
		cmocka_unit_test(test_tp_unsure),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
