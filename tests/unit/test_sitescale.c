// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of the scaling of sampled handler sites' rows: what a window's calls per iteration
 * add for the iterations of the gap after it, less what the rows counted themselves, row by row;
 * never shrinking; a reset ending it; the table of what is added, by row; the windows' lengths
 * and periods past the limit.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "session/sitescale.h"

static struct jw_stats_key key(uint32_t pid, uint64_t handler)
{
	return (struct jw_stats_key){ .pid = pid, .tid = pid, .probe_id = 3, .inner = 1,
				      .handler = handler };
}

static struct jw_row_count row(uint32_t pid, uint64_t handler, uint64_t count)
{
	return (struct jw_row_count){ .key = key(pid, handler), .count = count };
}

static uint64_t added(const struct jw_row_extras *x, uint64_t handler)
{
	struct jw_stats_key k = key(100, handler);

	return jw_row_extras_get(x, &k);
}

static void test_extras_table(void **state)
{
	struct jw_row_extras x = { 0 };
	struct jw_stats_key a = key(100, 1), b = key(200, 1), c = key(100, 2);
	uint64_t i;

	(void)state;
	assert_int_equal(jw_row_extras_get(&x, &a), 0);
	assert_int_equal(jw_row_extras_add(&x, &a, 5), 0);
	assert_int_equal(jw_row_extras_add(&x, &a, 7), 0);
	assert_int_equal(jw_row_extras_add(&x, &b, 1), 0);
	assert_int_equal(jw_row_extras_add(&x, &c, 2), 0);
	assert_int_equal(jw_row_extras_get(&x, &a), 12);
	assert_int_equal(jw_row_extras_get(&x, &b), 1);
	assert_int_equal(jw_row_extras_get(&x, &c), 2);
	/* Many rows: the index grows, each row keeps its own. */
	for (i = 10; i < 1000; i++) {
		struct jw_stats_key k = key(300, i);

		assert_int_equal(jw_row_extras_add(&x, &k, i), 0);
	}
	for (i = 10; i < 1000; i++) {
		struct jw_stats_key k = key(300, i);

		assert_int_equal(jw_row_extras_get(&x, &k), i);
	}
	/* A reset of one process forgets its rows alone. */
	jw_row_extras_forget(&x, 100);
	assert_int_equal(jw_row_extras_get(&x, &a), 0);
	assert_int_equal(jw_row_extras_get(&x, &c), 0);
	assert_int_equal(jw_row_extras_get(&x, &b), 1);
	{
		struct jw_stats_key k = key(300, 999);

		assert_int_equal(jw_row_extras_get(&x, &k), 999);
	}
	jw_row_extras_forget(&x, 0);
	assert_int_equal(jw_row_extras_get(&x, &b), 0);
	jw_row_extras_free(&x);
}

/*
 * A window from 1000 to 1100 iterations: row 1 from 100 to 150 calls, row 2 new with 20. While
 * the probes come off, row 1 counts 10 more. Its gap grows to 1500 iterations, then 1600; the
 * next window opens at 1700, row 1 having counted 10 more as the probes went in.
 */
static void test_window_and_gap(void **state)
{
	struct jw_row_count begin[] = { row(100, 1, 100), row(100, 9, 7) };
	struct jw_row_count end[] = { row(100, 1, 150), row(100, 2, 20), row(100, 9, 7) };
	struct jw_row_count next[] = { row(100, 1, 170), row(100, 2, 20), row(100, 9, 7) };
	struct jw_row_extras x = { 0 };
	struct jw_sitescale sc = { 0 };
	uint64_t counts[2];

	(void)state;
	assert_int_equal(jw_sitescale_open(&sc, begin, 2, 1000, &x), 0);
	assert_true(sc.open);
	assert_int_equal(jw_sitescale_close(&sc, end, 3, 1100), 0);
	assert_false(sc.open);
	/* The rows that counted in the window; row 9 counted none. */
	assert_int_equal(sc.n, 2);
	assert_int_equal(sc.iters_window, 100);
	assert_int_equal(sc.rows[0].in_window, 50);
	assert_int_equal(sc.rows[1].in_window, 20);

	/* 400 iterations off: row 1 50 x 4 less the 10 it counted, row 2 20 x 4. */
	counts[0] = 160;
	counts[1] = 20;
	jw_sitescale_gap(&sc, counts, 1500, &x);
	assert_int_equal(added(&x, 1), 190);
	assert_int_equal(added(&x, 2), 80);
	assert_int_equal(added(&x, 9), 0);
	/* 500: grows. */
	jw_sitescale_gap(&sc, counts, 1600, &x);
	assert_int_equal(added(&x, 1), 240);
	assert_int_equal(added(&x, 2), 100);
	/* Read again with no iteration more: the same. */
	jw_sitescale_gap(&sc, counts, 1600, &x);
	assert_int_equal(added(&x, 1), 240);

	/* Settled as the next window opens: 600 iterations, 20 counted by row 1 itself. */
	assert_int_equal(jw_sitescale_open(&sc, next, 3, 1700, &x), 0);
	assert_int_equal(added(&x, 1), 280);
	assert_int_equal(added(&x, 2), 120);
	assert_int_equal(sc.n, 0);
	assert_true(sc.open);
	/* Its begin is what the rows counted then: a close with no more adds nothing. */
	assert_int_equal(jw_sitescale_close(&sc, next, 3, 1800), 0);
	assert_int_equal(sc.n, 0);
	jw_sitescale_free(&sc);
	jw_row_extras_free(&x);
}

/* Never less than given: rows that counted more in the gap than the estimate keep what they got. */
static void test_never_shrinks(void **state)
{
	struct jw_row_count begin[] = { row(100, 1, 0) };
	struct jw_row_count end[] = { row(100, 1, 10) };
	struct jw_row_extras x = { 0 };
	struct jw_sitescale sc = { 0 };
	uint64_t counts[1];

	(void)state;
	assert_int_equal(jw_sitescale_open(&sc, begin, 1, 0, &x), 0);
	assert_int_equal(jw_sitescale_close(&sc, end, 1, 10), 0);
	counts[0] = 10;
	jw_sitescale_gap(&sc, counts, 30, &x);
	assert_int_equal(added(&x, 1), 20);
	/* 15 counted in the gap by the row itself: the estimate (20) less those is 5, not less. */
	counts[0] = 25;
	jw_sitescale_gap(&sc, counts, 30, &x);
	assert_int_equal(added(&x, 1), 20);
	/* More than the estimate counted: nothing added, and nothing taken back. */
	counts[0] = 60;
	jw_sitescale_gap(&sc, counts, 40, &x);
	assert_int_equal(added(&x, 1), 20);
	jw_sitescale_free(&sc);
	jw_row_extras_free(&x);
}

/* Counts or iterations that went back (a reset) end the window: nothing more is added. */
static void test_reset_ends_it(void **state)
{
	struct jw_row_count begin[] = { row(100, 1, 50) };
	struct jw_row_count end[] = { row(100, 1, 60) };
	struct jw_row_count fewer[] = { row(100, 1, 40) };
	struct jw_row_extras x = { 0 };
	struct jw_sitescale sc = { 0 };
	uint64_t counts[1] = { 0 };

	(void)state;
	assert_int_equal(jw_sitescale_open(&sc, begin, 1, 100, &x), 0);
	assert_int_equal(jw_sitescale_close(&sc, end, 1, 110), 0);
	assert_int_equal(sc.n, 1);
	/* The row emptied: its count 0 now. */
	jw_sitescale_gap(&sc, counts, 200, &x);
	assert_int_equal(sc.n, 0);
	assert_int_equal(added(&x, 1), 0);

	/* Iterations that went back. */
	assert_int_equal(jw_sitescale_open(&sc, begin, 1, 100, &x), 0);
	assert_int_equal(jw_sitescale_close(&sc, end, 1, 110), 0);
	counts[0] = 60;
	jw_sitescale_gap(&sc, counts, 5, &x);
	assert_int_equal(sc.n, 0);
	assert_int_equal(added(&x, 1), 0);

	/* A window over which a row went back: none. */
	assert_int_equal(jw_sitescale_open(&sc, begin, 1, 100, &x), 0);
	assert_int_equal(jw_sitescale_close(&sc, fewer, 1, 110), 0);
	assert_int_equal(sc.n, 0);
	/* A window with no iteration: nothing to scale by. */
	assert_int_equal(jw_sitescale_open(&sc, begin, 1, 100, &x), 0);
	assert_int_equal(jw_sitescale_close(&sc, end, 1, 100), 0);
	assert_int_equal(sc.n, 0);
	/* A reset forgets what is open. */
	assert_int_equal(jw_sitescale_open(&sc, begin, 1, 100, &x), 0);
	jw_sitescale_reset(&sc);
	assert_false(sc.open);
	assert_int_equal(jw_sitescale_close(&sc, end, 1, 200), 0);
	assert_int_equal(sc.n, 0);
	jw_sitescale_free(&sc);
	jw_row_extras_free(&x);
}

/* Closing with nothing open, a gap with no window, and an empty window are no-ops. */
static void test_nothing_open(void **state)
{
	struct jw_row_count end[] = { row(100, 1, 60) };
	struct jw_row_extras x = { 0 };
	struct jw_sitescale sc = { 0 };
	uint64_t counts[1] = { 60 };

	(void)state;
	assert_int_equal(jw_sitescale_close(&sc, end, 1, 110), 0);
	assert_int_equal(sc.n, 0);
	jw_sitescale_gap(&sc, counts, 500, &x);
	assert_int_equal(x.n, 0);
	assert_int_equal(jw_sitescale_open(&sc, NULL, 0, 100, &x), 0);
	assert_int_equal(jw_sitescale_close(&sc, NULL, 0, 200), 0);
	assert_int_equal(sc.n, 0);
	jw_sitescale_free(&sc);
	jw_sitescale_free(&sc);
	jw_row_extras_free(&x);
}

/*
 * The windows past handler_sites: a second in every N up to a minute; past it a shorter window
 * each minute, so that the share hooked (window over period) stays one N-th; the shortest
 * window, then the longest period, where N grows past them.
 */
static void test_plan(void **state)
{
	const uint64_t s = 1000000000ULL;
	static const struct {
		double rate, most;
		uint64_t every, window_ns, period_ns;
	} cases[] = {
		{ 1000, 500, 2, 1000000000ULL, 2000000000ULL },
		{ 1500, 500, 3, 1000000000ULL, 3000000000ULL },	/* exact: not rounded up */
		{ 1500.5, 500, 4, 1000000000ULL, 4000000000ULL },
		{ 9368, 500, 19, 1000000000ULL, 19000000000ULL },
		{ 30000, 500, 60, 1000000000ULL, 60000000000ULL },
		{ 34225, 500, 69, 869565217ULL, 869565217ULL * 69 },
		{ 120000, 500, 240, JW_SITES_MIN_WINDOW_NS, JW_SITES_MIN_WINDOW_NS * 240 },
		{ 1000000, 500, 2000, JW_SITES_MIN_WINDOW_NS, JW_SITES_MIN_WINDOW_NS * 2000 },
		{ 1000000, 1, 2400, JW_SITES_MIN_WINDOW_NS, JW_SITES_MAX_PERIOD_NS },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct jw_sites_plan p = jw_sites_plan(cases[i].rate, cases[i].most);

		assert_int_equal(p.every, cases[i].every);
		assert_int_equal(p.window_ns, cases[i].window_ns);
		assert_int_equal(p.period_ns, cases[i].period_ns);
		/* One N-th of the time on; each minute while a window of the shortest fits. */
		assert_int_equal(p.window_ns * p.every, p.period_ns);
		if (p.every * JW_SITES_MIN_WINDOW_NS <= JW_SITES_MAX_EVERY * s)
			assert_true(p.period_ns <= JW_SITES_MAX_EVERY * s);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_extras_table),
		cmocka_unit_test(test_window_and_gap),
		cmocka_unit_test(test_never_shrinks),
		cmocka_unit_test(test_reset_ends_it),
		cmocka_unit_test(test_nothing_open),
		cmocka_unit_test(test_plan),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
