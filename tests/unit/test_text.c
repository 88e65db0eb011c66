// SPDX-License-Identifier: GPL-2.0-only
/* Text read from a target's memory, copied so that it prints safely. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/text.h"

static void test_plain_and_unicode_kept(void **state)
{
	char out[32];

	(void)state;
	assert_int_equal(jw_printable_copy(out, sizeof(out), "Timer.on_tick", 64), 13);
	assert_string_equal(out, "Timer.on_tick");
	assert_int_equal(jw_printable_copy(out, sizeof(out), "caf\xc3\xa9", 5), 5);
	assert_string_equal(out, "caf\xc3\xa9");
}

static void test_controls_replaced(void **state)
{
	char out[32];

	(void)state;
	jw_printable_copy(out, sizeof(out), "a\nb\x1b[31m\x7f", 16);
	assert_string_equal(out, "a?b?[31m?");
}

/* An unterminated source is cut at its length, a long one at the destination's. */
static void test_bounds(void **state)
{
	const char src[4] = { 'a', 'b', 'c', 'd' };
	char out[8], tiny[3];

	(void)state;
	assert_int_equal(jw_printable_copy(out, sizeof(out), src, sizeof(src)), 4);
	assert_string_equal(out, "abcd");
	assert_int_equal(jw_printable_copy(tiny, sizeof(tiny), src, sizeof(src)), 2);
	assert_string_equal(tiny, "ab");
	assert_int_equal(jw_printable_copy(out, 0, src, sizeof(src)), 0);
	assert_int_equal(jw_printable_copy(out, sizeof(out), src, 0), 0);
	assert_string_equal(out, "");
}

static void test_hex_digit(void **state)
{
	(void)state;
	assert_int_equal(jw_hex_digit('0'), 0);
	assert_int_equal(jw_hex_digit('9'), 9);
	assert_int_equal(jw_hex_digit('a'), 10);
	assert_int_equal(jw_hex_digit('F'), 15);
	assert_int_equal(jw_hex_digit('g'), -1);
	assert_int_equal(jw_hex_digit('x'), -1);
	assert_int_equal(jw_hex_digit('\0'), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_and_unicode_kept),
		cmocka_unit_test(test_controls_replaced),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_hex_digit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
