// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests of the growable buffer and RFC 8259 strings and numbers. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/jsonbuf.h"
#include "buf_fixture.h"

/* U+FFFD, the replacement character, as UTF-8. */
#define R "\xef\xbf\xbd"

/* Returns the JSON text of @s, written into a reset @b. */
static const char *js(struct jw_buf *b, const char *s)
{
	jw_buf_reset(b);
	jw_json_str(b, s);
	assert_int_equal(b->err, 0);
	assert_non_null(b->data);
	assert_int_equal(strlen(b->data), b->len);
	return b->data;
}

static void test_buf_grows(void **state)
{
	struct jw_buf *b = *state;
	char expect[1001];
	int i;

	for (i = 0; i < 1000; i++)
		jw_buf_putc(b, 'a' + i % 26);
	for (i = 0; i < 1000; i++)
		expect[i] = 'a' + i % 26;
	expect[1000] = '\0';
	assert_int_equal(b->err, 0);
	assert_int_equal(b->len, 1000);
	assert_true(b->cap > 1000);
	assert_string_equal(b->data, expect);
}

static void test_buf_printf(void **state)
{
	struct jw_buf *b = *state;
	char big[5000];

	jw_buf_puts(b, "x=");
	jw_buf_printf(b, "%d,%s", 42, "y");
	assert_string_equal(b->data, "x=42,y");
	/* A write that does not fit in the room left is redone after growing. */
	memset(big, 'z', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	jw_buf_printf(b, "[%s]", big);
	assert_int_equal(b->len, 6 + 2 + 4999);
	assert_memory_equal(b->data, "x=42,y[zzz", 10);
	assert_string_equal(b->data + b->len - 3, "zz]");
	assert_int_equal(b->err, 0);
}

static void test_buf_reset_keeps_memory(void **state)
{
	struct jw_buf *b = *state;
	size_t cap;
	char *data;

	jw_buf_puts(b, "hello");
	cap = b->cap;
	data = b->data;
	jw_buf_reset(b);
	assert_int_equal(b->len, 0);
	assert_string_equal(b->data, "");
	assert_ptr_equal(b->data, data);
	assert_int_equal(b->cap, cap);
	jw_buf_puts(b, "bye");
	assert_string_equal(b->data, "bye");
}

/* Once a write failed, the buffer keeps the error and drops every later write. */
static void test_buf_error_sticks(void **state)
{
	struct jw_buf *b = *state;

	jw_buf_puts(b, "ok");
	b->err = -ENOMEM;
	jw_buf_puts(b, "lost");
	jw_buf_putc(b, '!');
	jw_buf_printf(b, "%d", 12345);
	jw_json_str(b, "s");
	jw_json_num(b, 1.5, 1);
	assert_int_equal(b->len, 2);
	assert_string_equal(b->data, "ok");
	assert_int_equal(b->err, -ENOMEM);
}

static void test_str_plain_and_null(void **state)
{
	struct jw_buf *b = *state;

	assert_string_equal(js(b, "abc def/<>"), "\"abc def/<>\"");
	assert_string_equal(js(b, ""), "\"\"");
	assert_string_equal(js(b, NULL), "null");
}

static void test_str_quote_backslash(void **state)
{
	struct jw_buf *b = *state;

	assert_string_equal(js(b, "a\"b\\c"), "\"a\\\"b\\\\c\"");
	assert_string_equal(js(b, "\"\\"), "\"\\\"\\\\\"");
}

static void test_str_control_short_forms(void **state)
{
	struct jw_buf *b = *state;

	assert_string_equal(js(b, "\b\f\n\r\t"), "\"\\b\\f\\n\\r\\t\"");
	assert_string_equal(js(b, "a\nb"), "\"a\\nb\"");
}

/* Every byte below 0x20 is escaped: five in short form, the others as \u00XX; DEL too. */
static void test_str_every_control_byte(void **state)
{
	struct jw_buf *b = *state;
	char in[2] = { 0 }, expect[16];
	int c;

	for (c = 1; c < 0x20; c++) {
		in[0] = (char)c;
		switch (c) {
		case '\b':
			strcpy(expect, "\"\\b\"");
			break;
		case '\f':
			strcpy(expect, "\"\\f\"");
			break;
		case '\n':
			strcpy(expect, "\"\\n\"");
			break;
		case '\r':
			strcpy(expect, "\"\\r\"");
			break;
		case '\t':
			strcpy(expect, "\"\\t\"");
			break;
		default:
			snprintf(expect, sizeof(expect), "\"\\u%04x\"", c);
		}
		assert_string_equal(js(b, in), expect);
	}
	assert_string_equal(js(b, "\x01"), "\"\\u0001\"");
	assert_string_equal(js(b, "\x1b[0m"), "\"\\u001b[0m\"");
	assert_string_equal(js(b, "\x1f"), "\"\\u001f\"");
	assert_string_equal(js(b, "a\x7f" "b"), "\"a\\u007fb\"");
	assert_string_equal(js(b, " ~"), "\" ~\"");
}

static void test_str_valid_utf8_kept(void **state)
{
	struct jw_buf *b = *state;
	static const char *const ok[] = {
		"\xc2\x80",			/* U+0080, the smallest two-byte */
		"\xc3\xa9t\xc3\xa9",		/* été */
		"\xdf\xbf",			/* U+07FF */
		"\xe0\xa0\x80",			/* U+0800, the smallest three-byte */
		"\xe2\x82\xac",			/* € */
		"\xed\x9f\xbf",			/* U+D7FF, just below the surrogates */
		"\xee\x80\x80",			/* U+E000, just above them */
		"\xef\xbf\xbd",			/* U+FFFD itself */
		"\xf0\x90\x80\x80",		/* U+10000, the smallest four-byte */
		"\xf0\x9f\x98\x80",		/* 😀 */
		"\xf4\x8f\xbf\xbf",		/* U+10FFFF, the largest */
		"\xe6\x97\xa5\xe6\x9c\xac",	/* 日本 */
	};
	char expect[64];
	size_t i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		snprintf(expect, sizeof(expect), "\"%s\"", ok[i]);
		assert_string_equal(js(b, ok[i]), expect);
	}
}

/* Each byte that is not part of a well-formed sequence becomes one U+FFFD. */
static void test_str_invalid_utf8_replaced(void **state)
{
	struct jw_buf *b = *state;

	/* Continuation bytes with no lead. */
	assert_string_equal(js(b, "a\x80" "b"), "\"a" R "b\"");
	assert_string_equal(js(b, "\xbf\xbf"), "\"" R R "\"");
	/* Overlong encodings: C0, C1 leads; E0 and F0 with too small a second byte. */
	assert_string_equal(js(b, "\xc0\xaf"), "\"" R R "\"");
	assert_string_equal(js(b, "\xc1\xbf"), "\"" R R "\"");
	assert_string_equal(js(b, "\xe0\x80\xaf"), "\"" R R R "\"");
	assert_string_equal(js(b, "\xe0\x9f\xbf"), "\"" R R R "\"");
	assert_string_equal(js(b, "\xf0\x80\x80\xaf"), "\"" R R R R "\"");
	assert_string_equal(js(b, "\xf0\x8f\xbf\xbf"), "\"" R R R R "\"");
	/* UTF-16 surrogates U+D800 and U+DFFF. */
	assert_string_equal(js(b, "\xed\xa0\x80"), "\"" R R R "\"");
	assert_string_equal(js(b, "\xed\xbf\xbf"), "\"" R R R "\"");
	/* Beyond U+10FFFF, and lead bytes that can never appear. */
	assert_string_equal(js(b, "\xf4\x90\x80\x80"), "\"" R R R R "\"");
	assert_string_equal(js(b, "\xf5\x80\x80\x80"), "\"" R R R R "\"");
	assert_string_equal(js(b, "\xfe\xff"), "\"" R R "\"");
	/* Sequences cut short, at the end and before an ASCII byte. */
	assert_string_equal(js(b, "x\xe2\x82"), "\"x" R R "\"");
	assert_string_equal(js(b, "\xe2\x82" "A"), "\"" R R "A\"");
	assert_string_equal(js(b, "\xf0\x9f\x98"), "\"" R R R "\"");
	assert_string_equal(js(b, "\xc3"), "\"" R "\"");
	/* A bad byte does not swallow the good sequence after it. */
	assert_string_equal(js(b, "\xc3\xc3\xa9"), "\"" R "\xc3\xa9\"");
	/* Escapes and replacements mixed with plain runs. */
	assert_string_equal(js(b, "p\xff\"q\n"), "\"p" R "\\\"q\\n\"");
}

static void test_num(void **state)
{
	struct jw_buf *b = *state;

	jw_json_num(b, 300.125, 3);
	jw_buf_putc(b, ' ');
	jw_json_num(b, 1.0 / 3.0, 3);
	jw_buf_putc(b, ' ');
	jw_json_num(b, 2.5, 0);
	jw_buf_putc(b, ' ');
	jw_json_num(b, -0.5, 2);
	jw_buf_putc(b, ' ');
	jw_json_num(b, 7, -1);
	jw_buf_putc(b, ' ');
	jw_json_num(b, 0, 3);
	assert_string_equal(b->data, "300.125 0.333 2 -0.50 7 0.000");
}

static void test_num_not_finite(void **state)
{
	struct jw_buf *b = *state;

	jw_json_num(b, NAN, 3);
	jw_buf_putc(b, ',');
	jw_json_num(b, INFINITY, 3);
	jw_buf_putc(b, ',');
	jw_json_num(b, -INFINITY, 3);
	assert_string_equal(b->data, "null,null,null");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_buf_grows, buf_setup, buf_teardown),
		cmocka_unit_test_setup_teardown(test_buf_printf, buf_setup, buf_teardown),
		cmocka_unit_test_setup_teardown(test_buf_reset_keeps_memory, buf_setup, buf_teardown),
		cmocka_unit_test_setup_teardown(test_buf_error_sticks, buf_setup, buf_teardown),
		cmocka_unit_test_setup_teardown(test_str_plain_and_null, buf_setup, buf_teardown),
		cmocka_unit_test_setup_teardown(test_str_quote_backslash, buf_setup, buf_teardown),
		cmocka_unit_test_setup_teardown(test_str_control_short_forms, buf_setup, buf_teardown),
		cmocka_unit_test_setup_teardown(test_str_every_control_byte, buf_setup, buf_teardown),
		cmocka_unit_test_setup_teardown(test_str_valid_utf8_kept, buf_setup, buf_teardown),
		cmocka_unit_test_setup_teardown(test_str_invalid_utf8_replaced, buf_setup, buf_teardown),
		cmocka_unit_test_setup_teardown(test_num, buf_setup, buf_teardown),
		cmocka_unit_test_setup_teardown(test_num_not_finite, buf_setup, buf_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
