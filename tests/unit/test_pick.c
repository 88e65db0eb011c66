// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests of the policy's choice of samples: evenly spaced, and weighted by sleep periods. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "policy/policy.h"

/* Fills @idx with a marker, so that what a call does not write can be checked. */
static void poison(size_t *idx, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		idx[i] = SIZE_MAX;
}

static void test_pick_evenly_fewer_than_k(void **state)
{
	size_t idx[16];

	(void)state;
	poison(idx, 16);
	assert_int_equal(jw_pick_evenly(3, 10, idx), 3);
	assert_int_equal(idx[0], 0);
	assert_int_equal(idx[1], 1);
	assert_int_equal(idx[2], 2);
	assert_true(idx[3] == SIZE_MAX);

	poison(idx, 16);
	assert_int_equal(jw_pick_evenly(0, 10, idx), 0);
	assert_true(idx[0] == SIZE_MAX);
	assert_int_equal(jw_pick_evenly(1, 10, idx), 1);
	assert_int_equal(idx[0], 0);
}

static void test_pick_evenly_equal(void **state)
{
	size_t idx[16], i;

	(void)state;
	poison(idx, 16);
	assert_int_equal(jw_pick_evenly(10, 10, idx), 10);
	for (i = 0; i < 10; i++)
		assert_int_equal(idx[i], i);
	assert_true(idx[10] == SIZE_MAX);
}

static void test_pick_evenly_more_than_k(void **state)
{
	static const size_t want30[] = { 1, 4, 7, 10, 13, 16, 19, 22, 25, 28 };
	static const size_t want1000[] = { 50, 150, 250, 350, 450, 550, 650, 750, 850, 950 };
	size_t idx[16], i;

	(void)state;
	poison(idx, 16);
	assert_int_equal(jw_pick_evenly(30, 10, idx), 10);
	for (i = 0; i < 10; i++)
		assert_int_equal(idx[i], want30[i]);
	assert_true(idx[10] == SIZE_MAX);

	assert_int_equal(jw_pick_evenly(1000, 10, idx), 10);
	for (i = 0; i < 10; i++)
		assert_int_equal(idx[i], want1000[i]);

	/* One of many: the middle one. */
	assert_int_equal(jw_pick_evenly(9, 1, idx), 1);
	assert_int_equal(idx[0], 4);
	assert_int_equal(jw_pick_evenly(2, 1, idx), 1);
	assert_int_equal(idx[0], 1);
	assert_int_equal(jw_pick_evenly(7, 3, idx), 3);
	assert_int_equal(idx[0], 1);
	assert_int_equal(idx[1], 3);
	assert_int_equal(idx[2], 5);

	poison(idx, 16);
	assert_int_equal(jw_pick_evenly(5, 0, idx), 0);
	assert_true(idx[0] == SIZE_MAX);
}

/* For every n and k: increasing, in range, one pick in each of the k equal spans. */
static void test_pick_evenly_properties(void **state)
{
	size_t idx[64], n, k, i, got;

	(void)state;
	for (n = 0; n <= 300; n++) {
		for (k = 1; k <= 64; k++) {
			got = jw_pick_evenly(n, k, idx);
			assert_int_equal(got, n < k ? n : k);
			for (i = 0; i < got; i++) {
				assert_true(idx[i] < n);
				if (i)
					assert_true(idx[i] > idx[i - 1]);
				if (n > k) {
					/* In [i * n / k, (i + 1) * n / k), in rationals. */
					assert_true(idx[i] >= i * n / k);
					assert_true(idx[i] * k < (i + 1) * n);
				}
			}
		}
	}
}

/* Fewer periods than wanted: every period is kept. */
static void test_pick_weighted_keeps_all(void **state)
{
	const uint32_t w[] = { 1, 3, 1 };
	uint32_t c[3];

	(void)state;
	assert_int_equal(jw_pick_weighted(w, 3, 10, c), 5);
	assert_int_equal(c[0], 1);
	assert_int_equal(c[1], 3);
	assert_int_equal(c[2], 1);
}

/* A task that slept 300 ms (one blocked sample of 30 periods): it holds all 10 picks. */
static void test_pick_weighted_one_block(void **state)
{
	const uint32_t w[] = { 30 };
	uint32_t c[1];

	(void)state;
	assert_int_equal(jw_pick_weighted(w, 1, 10, c), 10);
	assert_int_equal(c[0], 10);
}

/* 15 on-CPU samples then a 15-period block: the picks split in proportion, 5 and 5. */
static void test_pick_weighted_proportions(void **state)
{
	uint32_t w[16], c[16], cpu = 0;
	size_t i;

	(void)state;
	for (i = 0; i < 15; i++)
		w[i] = 1;
	w[15] = 15;
	assert_int_equal(jw_pick_weighted(w, 16, 10, c), 10);
	for (i = 0; i < 15; i++) {
		assert_true(c[i] <= 1);
		cpu += c[i];
	}
	assert_int_equal(cpu, 5);
	assert_int_equal(c[15], 5);
}

/* Equal weights reduce to the evenly spaced pick. */
static void test_pick_weighted_matches_evenly(void **state)
{
	uint32_t w[30], c[30];
	size_t idx[10], i, k = 0;

	(void)state;
	for (i = 0; i < 30; i++)
		w[i] = 1;
	assert_int_equal(jw_pick_weighted(w, 30, 10, c), 10);
	assert_int_equal(jw_pick_evenly(30, 10, idx), 10);
	for (i = 0; i < 30; i++) {
		if (!c[i])
			continue;
		assert_int_equal(c[i], 1);
		assert_int_equal(idx[k++], i);
	}
	assert_int_equal(k, 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pick_evenly_fewer_than_k),
		cmocka_unit_test(test_pick_evenly_equal),
		cmocka_unit_test(test_pick_evenly_more_than_k),
		cmocka_unit_test(test_pick_evenly_properties),
		cmocka_unit_test(test_pick_weighted_keeps_all),
		cmocka_unit_test(test_pick_weighted_one_block),
		cmocka_unit_test(test_pick_weighted_proportions),
		cmocka_unit_test(test_pick_weighted_matches_evenly),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
