// SPDX-License-Identifier: GPL-2.0-only
/* An array that doubles as it fills: room made only when full, and never past what fits. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "base/grow.h"

static void test_doubles_when_full(void **state)
{
	int *v = NULL;
	size_t cap = 0, n;

	(void)state;
	for (n = 0; n < 100; n++) {
		assert_int_equal(jw_grow((void **)&v, &cap, n, sizeof(*v), 4), 0);
		assert_true(cap > n);
		v[n] = (int)n;
	}
	assert_int_equal(cap, 128);	/* 4, 8, ..., 128 */
	assert_int_equal(v[99], 99);
	/* Not full: nothing moves. */
	assert_int_equal(jw_grow((void **)&v, &cap, 100, sizeof(*v), 4), 0);
	assert_int_equal(cap, 128);
	free(v);
}

static void test_too_large_refused(void **state)
{
	void *v = NULL;
	size_t cap = SIZE_MAX / 4;

	(void)state;
	assert_int_equal(jw_grow(&v, &cap, cap, 8, 4), -ENOMEM);
	assert_null(v);
	cap = 0;
	assert_int_equal(jw_grow(&v, &cap, 0, 8, 0), -ENOMEM);	/* no first size: nothing */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_doubles_when_full),
		cmocka_unit_test(test_too_large_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
