// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests of the string pool: one copy per distinct string, stable across growth. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/strpool.h"

#define MANY 10000

static int setup(void **state)
{
	struct jw_strpool *p = jw_strpool__new();

	if (!p)
		return -1;
	*state = p;
	return 0;
}

static int teardown(void **state)
{
	jw_strpool__free(*state);
	return 0;
}

static void test_new_empty_and_free_null(void **state)
{
	struct jw_strpool *p = *state;

	assert_int_equal(jw_strpool__count(p), 0);
	jw_strpool__free(NULL);
}

static void test_same_string_same_pointer(void **state)
{
	struct jw_strpool *p = *state;
	char a[] = "aeProcessEvents", b[] = "aeProcessEvents";
	const char *x, *y;

	x = jw_strpool__intern(p, a);
	assert_non_null(x);
	assert_string_equal(x, "aeProcessEvents");
	/* The pool's copy, not the caller's buffer. */
	assert_ptr_not_equal(x, a);
	y = jw_strpool__intern(p, b);
	assert_ptr_equal(x, y);
	assert_ptr_equal(x, jw_strpool__intern(p, "aeProcessEvents"));
	assert_int_equal(jw_strpool__count(p), 1);
	/* The caller's buffer may change; the pool's copy does not. */
	a[0] = 'X';
	assert_string_equal(x, "aeProcessEvents");
	assert_ptr_not_equal(jw_strpool__intern(p, a), x);
	assert_int_equal(jw_strpool__count(p), 2);
}

static void test_different_strings(void **state)
{
	struct jw_strpool *p = *state;
	const char *a, *b, *c, *e;

	a = jw_strpool__intern(p, "main");
	b = jw_strpool__intern(p, "mai");
	c = jw_strpool__intern(p, "main ");
	e = jw_strpool__intern(p, "");
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(c);
	assert_non_null(e);
	assert_ptr_not_equal(a, b);
	assert_ptr_not_equal(a, c);
	assert_ptr_not_equal(b, c);
	assert_string_equal(a, "main");
	assert_string_equal(b, "mai");
	assert_string_equal(c, "main ");
	assert_string_equal(e, "");
	assert_ptr_equal(jw_strpool__intern(p, ""), e);
	assert_int_equal(jw_strpool__count(p), 4);
}

static void test_null(void **state)
{
	struct jw_strpool *p = *state;

	assert_null(jw_strpool__intern(p, NULL));
	assert_int_equal(jw_strpool__count(p), 0);
	jw_strpool__intern(p, "x");
	assert_null(jw_strpool__intern(p, NULL));
	assert_int_equal(jw_strpool__count(p), 1);
}

/* Many strings force the table to grow several times; every pointer handed out stays valid. */
static void test_survives_growth(void **state)
{
	struct jw_strpool *p = *state;
	static const char *first[MANY];
	char buf[64];
	size_t i;

	for (i = 0; i < MANY; i++) {
		snprintf(buf, sizeof(buf), "sym_%zu", i);
		first[i] = jw_strpool__intern(p, buf);
		assert_non_null(first[i]);
		assert_int_equal(jw_strpool__count(p), i + 1);
	}
	for (i = 0; i < MANY; i++) {
		snprintf(buf, sizeof(buf), "sym_%zu", i);
		assert_string_equal(first[i], buf);
		assert_ptr_equal(jw_strpool__intern(p, buf), first[i]);
	}
	assert_int_equal(jw_strpool__count(p), MANY);
	for (i = 1; i < MANY; i++)
		assert_ptr_not_equal(first[i], first[i - 1]);
}

/* Long strings and strings that differ only at the end. */
static void test_long_strings(void **state)
{
	struct jw_strpool *p = *state;
	char a[5000], b[5000];
	const char *x, *y;

	memset(a, 'q', sizeof(a) - 1);
	a[sizeof(a) - 1] = '\0';
	memcpy(b, a, sizeof(b));
	b[sizeof(b) - 2] = 'r';
	x = jw_strpool__intern(p, a);
	y = jw_strpool__intern(p, b);
	assert_non_null(x);
	assert_non_null(y);
	assert_ptr_not_equal(x, y);
	assert_string_equal(x, a);
	assert_string_equal(y, b);
	assert_ptr_equal(jw_strpool__intern(p, a), x);
	assert_int_equal(jw_strpool__count(p), 2);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_new_empty_and_free_null),
		T(test_same_string_same_pointer),
		T(test_different_strings),
		T(test_null),
		T(test_survives_growth),
		T(test_long_strings),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
