// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests of the per-task sample buffer: rounding, a new task clearing it, the thinning. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "stacks/samplebuf.h"

static int setup(void **state)
{
	struct jw_samplebuf *b = calloc(1, sizeof(*b));

	if (!b)
		return -1;
	if (jw_samplebuf_init(b, 8)) {
		free(b);
		return -1;
	}
	*state = b;
	return 0;
}

static int teardown(void **state)
{
	struct jw_samplebuf *b = *state;

	jw_samplebuf_free(b);
	free(b);
	return 0;
}

static int value_at(const struct jw_samplebuf *b, size_t i)
{
	int v;

	assert_true(i < b->n);
	assert_non_null(b->items[i]);
	memcpy(&v, b->items[i], sizeof(v));
	return v;
}

static void add_int(struct jw_samplebuf *b, uint64_t seq, int v)
{
	assert_int_equal(jw_samplebuf_add(b, seq, &v, sizeof(v)), 0);
}

/* Initialised with @max_kept: checks what it rounds to and that it starts empty. */
static void check_init(size_t max_kept, size_t want)
{
	struct jw_samplebuf b;

	memset(&b, 0xa5, sizeof(b));
	assert_int_equal(jw_samplebuf_init(&b, max_kept), 0);
	assert_int_equal(b.max_kept, want);
	assert_int_equal(b.n, 0);
	assert_int_equal(b.offered, 0);
	assert_int_equal(b.stride, 1);
	assert_non_null(b.items);
	jw_samplebuf_free(&b);
	assert_null(b.items);
}

static void test_init_rounding(void **state)
{
	(void)state;
	check_init(0, 2);
	check_init(1, 2);
	check_init(2, 2);
	check_init(3, 4);
	check_init(4, 4);
	check_init(7, 8);
	check_init(8, 8);
	check_init(9, 10);
	check_init(101, 102);
}

static void test_add_keeps_copies_in_order(void **state)
{
	struct jw_samplebuf *b = *state;
	int v, x;

	/* The buffer holds copies: the one variable offered five times is reused. */
	for (v = 1; v <= 5; v++) {
		x = v * 10;
		assert_int_equal(jw_samplebuf_add(b, 1, &x, sizeof(x)), 0);
	}
	x = -1;
	assert_int_equal(b->n, 5);
	assert_int_equal(b->seq, 1);
	assert_int_equal(b->offered, 5);
	assert_int_equal(b->stride, 1);
	assert_int_equal(value_at(b, 0), 10);
	assert_int_equal(value_at(b, 1), 20);
	assert_int_equal(value_at(b, 2), 30);
	assert_int_equal(value_at(b, 3), 40);
	assert_int_equal(value_at(b, 4), 50);
}

static void test_add_sizes(void **state)
{
	struct jw_samplebuf *b = *state;
	char big[4096];

	memset(big, 'x', sizeof(big));
	assert_int_equal(jw_samplebuf_add(b, 3, "a", 2), 0);
	assert_int_equal(jw_samplebuf_add(b, 3, big, sizeof(big)), 0);
	assert_int_equal(b->n, 2);
	assert_string_equal(b->items[0], "a");
	assert_memory_equal(b->items[1], big, sizeof(big));
}

static void test_clear(void **state)
{
	struct jw_samplebuf *b = *state;
	int v;

	jw_samplebuf_clear(b);
	assert_int_equal(b->n, 0);
	for (v = 1; v <= 20; v++)
		add_int(b, 1, v);
	assert_true(b->stride > 1);
	jw_samplebuf_clear(b);
	assert_int_equal(b->n, 0);
	assert_int_equal(b->offered, 0);
	assert_int_equal(b->stride, 1);
	assert_int_equal(b->max_kept, 8);
	/* It starts afresh: every sample is kept again. */
	add_int(b, 1, 100);
	add_int(b, 1, 101);
	assert_int_equal(b->n, 2);
	assert_int_equal(value_at(b, 0), 100);
	assert_int_equal(value_at(b, 1), 101);
	jw_samplebuf_clear(b);
	jw_samplebuf_clear(b);
	assert_int_equal(b->n, 0);
}

static void test_new_seq_clears(void **state)
{
	struct jw_samplebuf *b = *state;
	int v;

	for (v = 1; v <= 3; v++)
		add_int(b, 7, v);
	assert_int_equal(b->n, 3);
	add_int(b, 8, 99);
	assert_int_equal(b->seq, 8);
	assert_int_equal(b->n, 1);
	assert_int_equal(b->offered, 1);
	assert_int_equal(value_at(b, 0), 99);

	/* Thinned by a long task, then a new task: the stride starts again at 1. */
	for (v = 1; v <= 100; v++)
		add_int(b, 9, v);
	assert_int_equal(b->stride, 16);
	add_int(b, 10, 1);
	add_int(b, 10, 2);
	add_int(b, 10, 3);
	assert_int_equal(b->stride, 1);
	assert_int_equal(b->n, 3);
	assert_int_equal(value_at(b, 0), 1);
	assert_int_equal(value_at(b, 1), 2);
	assert_int_equal(value_at(b, 2), 3);

	/* An older seq is another task too. */
	add_int(b, 4, 5);
	assert_int_equal(b->seq, 4);
	assert_int_equal(b->n, 1);
	assert_int_equal(value_at(b, 0), 5);
}

/* The smallest power of two @s for which ceil(@offered / s) <= @max_kept. */
static uint64_t expected_stride(uint64_t offered, size_t max_kept)
{
	uint64_t s = 1;

	while ((offered + s - 1) / s > max_kept)
		s *= 2;
	return s;
}

/*
 * Offers 1..@count to a buffer of @max_kept and checks, after each offer, that it holds every
 * stride-th sample from the first one, oldest first, no more than @max_kept of them, with the
 * smallest power-of-two stride that fits.
 */
static void check_thinning(size_t max_kept, int count)
{
	struct jw_samplebuf b;
	uint64_t stride;
	size_t i, want_n;
	int v;

	assert_int_equal(jw_samplebuf_init(&b, max_kept), 0);
	for (v = 1; v <= count; v++) {
		add_int(&b, 42, v);
		stride = expected_stride(v, b.max_kept);
		want_n = (v + stride - 1) / stride;
		assert_int_equal(b.offered, v);
		assert_int_equal(b.stride, stride);
		assert_int_equal(b.n, want_n);
		assert_true(b.n <= b.max_kept);
		for (i = 0; i < b.n; i++)
			assert_int_equal(value_at(&b, i), 1 + i * stride);
	}
	jw_samplebuf_free(&b);
}

static void test_thinning_max_8(void **state)
{
	(void)state;
	check_thinning(8, 1000);
}

static void test_thinning_exact_points(void **state)
{
	struct jw_samplebuf *b = *state;
	int v;

	/* 8 fit whole. */
	for (v = 1; v <= 8; v++)
		add_int(b, 1, v);
	assert_int_equal(b->n, 8);
	assert_int_equal(b->stride, 1);
	/* The 9th halves: 1 3 5 7 9. */
	add_int(b, 1, 9);
	assert_int_equal(b->stride, 2);
	assert_int_equal(b->n, 5);
	assert_int_equal(value_at(b, 0), 1);
	assert_int_equal(value_at(b, 1), 3);
	assert_int_equal(value_at(b, 4), 9);
	/* The 10th is skipped. */
	add_int(b, 1, 10);
	assert_int_equal(b->n, 5);
	for (v = 11; v <= 17; v++)
		add_int(b, 1, v);
	/* 17 halves again: 1 5 9 13 17. */
	assert_int_equal(b->stride, 4);
	assert_int_equal(b->n, 5);
	assert_int_equal(value_at(b, 0), 1);
	assert_int_equal(value_at(b, 1), 5);
	assert_int_equal(value_at(b, 2), 9);
	assert_int_equal(value_at(b, 3), 13);
	assert_int_equal(value_at(b, 4), 17);
}

static void test_thinning_other_sizes(void **state)
{
	(void)state;
	check_thinning(2, 300);
	check_thinning(3, 300);
	check_thinning(6, 300);
	check_thinning(10, 500);
	check_thinning(46, 2000);
}

static void test_free_twice(void **state)
{
	struct jw_samplebuf b;
	int v;

	(void)state;
	assert_int_equal(jw_samplebuf_init(&b, 4), 0);
	for (v = 0; v < 10; v++)
		add_int(&b, 1, v);
	jw_samplebuf_free(&b);
	assert_null(b.items);
	assert_int_equal(b.n, 0);
	jw_samplebuf_free(&b);
	assert_null(b.items);
	/* Re-initialising after free works. */
	assert_int_equal(jw_samplebuf_init(&b, 4), 0);
	add_int(&b, 1, 1);
	assert_int_equal(b.n, 1);
	jw_samplebuf_free(&b);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_init_rounding),
		T(test_add_keeps_copies_in_order),
		T(test_add_sizes),
		T(test_clear),
		T(test_new_seq_clears),
		T(test_thinning_max_8),
		T(test_thinning_exact_points),
		T(test_thinning_other_sizes),
		T(test_free_twice),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
