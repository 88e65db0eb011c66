// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests of the JSON reader: events.jsonl's lines, escapes, nesting, and what it refuses. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/jsonbuf.h"
#include "base/jsonread.h"

struct seen {
	char text[2048];	/* "key=type:value;" for each field */
	size_t len;
	int stop_at;		/* the field number at which the callback returns 7; 0: never */
	int n;
};

static int record(void *ctx, const struct jw_json_field *f)
{
	struct seen *s = ctx;
	const char *p;
	char v[512];
	size_t i;
	int n;

	switch (f->type) {
	case JW_JSON_NULL: snprintf(v, sizeof(v), "null"); break;
	case JW_JSON_BOOL: snprintf(v, sizeof(v), "b:%d", f->b); break;
	case JW_JSON_NUM: snprintf(v, sizeof(v), "n:%g", f->num); break;
	case JW_JSON_STR: snprintf(v, sizeof(v), "s:%s", f->str); break;
	case JW_JSON_ARRAY:
		n = snprintf(v, sizeof(v), "a:%zu", f->n_items);
		/* its strings, when it holds only strings */
		for (i = 0, p = f->items; p && i < f->n_items; i++, p += strlen(p) + 1)
			n += snprintf(v + n, sizeof(v) - n, "%s'%s'", i ? "," : "[", p);
		if (f->items)
			snprintf(v + n, sizeof(v) - n, "]");
		break;
	case JW_JSON_OBJECT: snprintf(v, sizeof(v), "o:%zu", f->n_items); break;
	}
	s->len += snprintf(s->text + s->len, sizeof(s->text) - s->len, "%s=%s;", f->key, v);
	return ++s->n == s->stop_at ? 7 : 0;
}

static int parse(const char *text, struct seen *s)
{
	memset(s, 0, sizeof(*s));
	return jw_json_fields(text, strlen(text), record, s);
}

static void test_event_line(void **state)
{
	struct seen s;

	(void)state;
	assert_int_equal(parse("{\"event\":\"MAIN_THREAD_JANK\",\"time\":1764032523456,"
			       "\"external_log\":[\"/var/log/jankwatch/stack-1.txt\",\"b\"],"
			       "\"log_over_limit\":false,\"waker\":null,\"wall_ms\":310.25,"
			       "\"delay_ms\":-1.5e2}\n",
			       &s),
			 0);
	assert_string_equal(s.text, "event=s:MAIN_THREAD_JANK;time=n:1.76403e+12;"
				    "external_log=a:2['/var/log/jankwatch/stack-1.txt','b'];"
				    "log_over_limit=b:0;waker=null;wall_ms=n:310.25;"
				    "delay_ms=n:-150;");
	assert_int_equal(parse("  { }  ", &s), 0);
	assert_int_equal(s.n, 0);
	assert_int_equal(parse("{\"a\":{\"b\":[1,{\"c\":[]}],\"d\":\"x\"},\"e\":true}", &s), 0);
	assert_string_equal(s.text, "a=o:2;e=b:1;");
	/* An array's strings are kept only when it holds nothing else; escapes undone. */
	assert_int_equal(parse("{\"a\":[\"x\\\"y\",\"\"],\"b\":[\"p\",1],\"c\":[[\"q\"]],"
			       "\"d\":[],\"e\":[\"r\"]}", &s), 0);
	assert_string_equal(s.text, "a=a:2['x\"y',''];b=a:2;c=a:1;d=a:0;e=a:1['r'];");
}

/* What jankwatch writes, it reads back: control bytes, quotes, non-UTF-8 (as U+FFFD). */
static void test_round_trip(void **state)
{
	static const char nasty[] = "a\"b\\c\n\t\x01 \xc3\xa9 \xff end";
	struct jw_buf b;
	struct seen s;

	(void)state;
	jw_buf_init(&b);
	jw_buf_puts(&b, "{\"handler\":");
	jw_json_str(&b, nasty);
	jw_buf_putc(&b, '}');
	assert_int_equal(parse(b.data, &s), 0);
	assert_string_equal(s.text, "handler=s:a\"b\\c\n\t\x01 \xc3\xa9 \xef\xbf\xbd end;");
	jw_buf_free(&b);
}

static void test_escapes(void **state)
{
	struct seen s;

	(void)state;
	assert_int_equal(parse("{\"k\":\"\\u00e9\\ud83d\\ude00\\/\\b\\f\\r\"}", &s), 0);
	assert_string_equal(s.text, "k=s:\xc3\xa9\xf0\x9f\x98\x80/\b\f\r;");
	/* A lone surrogate is not a character. */
	assert_int_equal(parse("{\"k\":\"\\udc00x\"}", &s), 0);
	assert_string_equal(s.text, "k=s:\xef\xbf\xbdx;");
	/* Escaped keys too. */
	assert_int_equal(parse("{\"\\u0041\":1}", &s), 0);
	assert_string_equal(s.text, "A=n:1;");
}

static void test_refused(void **state)
{
	static const char *const bad[] = {
		"", "[]", "\"x\"", "{", "{\"a\"}", "{\"a\":}", "{\"a\":1,}", "{\"a\":1 \"b\":2}",
		"{\"a\":tru}", "{\"a\":nul}", "{\"a\":\"x}", "{\"a\":\"\\x\"}", "{\"a\":\"\\u12\"}",
		"{\"a\":\"tab\there\"}", "{\"a\":1}{", "{\"a\":1} x", "{\"a\":-}", "{\"a\":[1,2}",
		"{\"a\":{\"b\"}}", "{a:1}", "{\"a\":01x}",
	};
	char deep[300];
	struct seen s;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (parse(bad[i], &s) != -EINVAL)
			fail_msg("accepted %s", bad[i]);
	/* Nested past 64 levels. */
	strcpy(deep, "{\"a\":");
	for (i = 0; i < 100; i++)
		strcat(deep, "[");
	for (i = 0; i < 100; i++)
		strcat(deep, "]");
	strcat(deep, "}");
	assert_int_equal(parse(deep, &s), -EINVAL);
}

/* The callback's non-zero return stops the reading there. */
static void test_stop(void **state)
{
	struct seen s;

	(void)state;
	memset(&s, 0, sizeof(s));
	s.stop_at = 2;
	assert_int_equal(jw_json_fields("{\"a\":1,\"b\":2,\"c\":3}", 19, record, &s), 7);
	assert_string_equal(s.text, "a=n:1;b=n:2;");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_event_line),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_escapes),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_stop),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
