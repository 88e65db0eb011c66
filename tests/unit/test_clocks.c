// SPDX-License-Identifier: GPL-2.0-only
/*
 * The clocks' offsets through their steps: a monotonic time converts with the offset of its own
 * moment, reading noise is not a step, a step of one clock leaves the other's offset, and the last
 * JW_CLOCKS_STEPS steps are kept.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "base/clocks.h"

#define S 1000000000LL
#define MS 1000000LL

static struct jw_clocks at(int64_t real, int64_t boot)
{
	return (struct jw_clocks){ .realtime_ns = real, .boottime_ns = boot };
}

static void test_no_step(void **state)
{
	struct jw_clocks c = at(1000 * S, 5 * S);

	(void)state;
	/* Tens of ns either way, as two readings differ: nothing kept, nothing moved. */
	assert_int_equal(jw_clocks_note(&c, 10 * S, 1000 * S + 40, 5 * S - 30), 0);
	assert_int_equal(c.n_was, 0);
	assert_int_equal(c.realtime_ns, 1000 * S);
	assert_int_equal(jw_clocks_epoch_ms(&c, 3 * S), 1003 * 1000);
}

static void test_wall_step(void **state)
{
	struct jw_clocks c = at(1000 * S, 5 * S);

	(void)state;
	/* A VM's restore moved the wall clock 40 ms ahead, seen at 20 s. */
	assert_int_equal(jw_clocks_note(&c, 20 * S, 1000 * S + 40 * MS, 5 * S), 40 * MS);
	assert_int_equal(c.n_was, 1);
	assert_int_equal(jw_clocks_realtime_at(&c, 19 * S), 1000 * S);
	assert_int_equal(jw_clocks_realtime_at(&c, 20 * S), 1000 * S + 40 * MS);
	assert_int_equal(jw_clocks_epoch_ms(&c, 19 * S), 1019 * 1000);
	assert_int_equal(jw_clocks_epoch_ms(&c, 21 * S), 1021 * 1000 + 40);
	/* The boot clock did not move. */
	assert_int_equal(jw_clocks_boottime_at(&c, 19 * S), 5 * S);
	assert_int_equal(jw_clocks_boottime_at(&c, 21 * S), 5 * S);
	/* Back by 5 s at 30 s: three offsets, each for its own times. */
	assert_int_equal(jw_clocks_note(&c, 30 * S, 995 * S, 5 * S), -5 * S - 40 * MS);
	assert_int_equal(jw_clocks_epoch_ms(&c, 10 * S), 1010 * 1000);
	assert_int_equal(jw_clocks_epoch_ms(&c, 25 * S), 1025 * 1000 + 40);
	assert_int_equal(jw_clocks_epoch_ms(&c, 31 * S), 1026 * 1000);
}

static void test_suspend(void **state)
{
	struct jw_clocks c = at(1000 * S, 5 * S);

	(void)state;
	/* 60 s asleep: the boot clock ran on, the wall clock too; both against the monotonic one. */
	assert_int_equal(jw_clocks_note(&c, 20 * S, 1060 * S, 65 * S), 60 * S);
	assert_int_equal(jw_clocks_boottime_at(&c, 19 * S), 5 * S);
	assert_int_equal(jw_clocks_boottime_at(&c, 20 * S), 65 * S);
	/* A boot clock step alone is one too. */
	assert_int_equal(jw_clocks_note(&c, 30 * S, 1060 * S, 70 * S), 0);
	assert_int_equal(c.n_was, 2);
	assert_int_equal(jw_clocks_boottime_at(&c, 25 * S), 65 * S);
	assert_int_equal(jw_clocks_realtime_at(&c, 25 * S), 1060 * S);
}

static void test_other_clock_kept(void **state)
{
	struct jw_clocks c = at(1000 * S, 5 * S);
	int64_t i;

	(void)state;
	/*
	 * A machine paused again and again (the boot clock 2 ms on each time), the wall clock's
	 * reading off by a few hundred us of drift each time: more steps than are kept, and a time
	 * before all of them still converts as it did before the first.
	 */
	for (i = 1; i <= JW_CLOCKS_STEPS + 2; i++) {
		assert_int_equal(jw_clocks_note(&c, (uint64_t)(i * S), 1000 * S + (i % 2) * 300000,
						5 * S + i * 2 * MS), 0);
		assert_int_equal(c.realtime_ns, 1000 * S);
	}
	assert_int_equal(c.n_was, JW_CLOCKS_STEPS);
	assert_int_equal(jw_clocks_epoch_ms(&c, S / 2 + 999999), 1000500);
	assert_int_equal(c.boottime_ns, 5 * S + (JW_CLOCKS_STEPS + 2) * 2 * MS);
	/* A wall step keeps the boot clock's offset where its reading is only noise. */
	assert_int_equal(jw_clocks_note(&c, 20 * S, 1001 * S, c.boottime_ns + 500000), S);
	assert_int_equal(c.boottime_ns, 5 * S + (JW_CLOCKS_STEPS + 2) * 2 * MS);
}

static void test_last_steps_kept(void **state)
{
	struct jw_clocks c = at(0, 0);
	int64_t i;

	(void)state;
	/* A step every second, each 1 s more: the oldest are dropped, the times before the ones
	 * kept take the oldest offset kept. */
	for (i = 1; i <= JW_CLOCKS_STEPS + 3; i++)
		jw_clocks_note(&c, (uint64_t)(i * S), i * S, 0);
	assert_int_equal(c.n_was, JW_CLOCKS_STEPS);
	assert_int_equal(c.realtime_ns, (JW_CLOCKS_STEPS + 3) * S);
	/* Kept: the offsets before the steps at 4 .. 11 s, i.e. 3 .. 10 s. */
	assert_int_equal(jw_clocks_realtime_at(&c, S / 2), 3 * S);
	assert_int_equal(jw_clocks_realtime_at(&c, 6 * S + 1), 6 * S);
	assert_int_equal(jw_clocks_realtime_at(&c, 20 * S), (JW_CLOCKS_STEPS + 3) * S);
}

static void test_read(void **state)
{
	struct jw_clocks c;

	(void)state;
	jw_clocks_init(&c);
	assert_int_equal(c.n_was, 0);
	/* This machine's clocks, read twice a moment apart: no step between. */
	assert_int_equal(jw_clocks_update(&c), 0);
	assert_int_equal(jw_clocks_update(&c), 0);
	assert_int_equal(c.n_was, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_step),
		cmocka_unit_test(test_wall_step),
		cmocka_unit_test(test_suspend),
		cmocka_unit_test(test_other_clock_kept),
		cmocka_unit_test(test_last_steps_kept),
		cmocka_unit_test(test_read),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
