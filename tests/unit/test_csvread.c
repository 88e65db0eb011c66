// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests of the CSV reader: stats.csv as jankwatch writes it, quoting, and what it refuses. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "base/csvread.h"

struct seen {
	char text[1024];	/* "[a|b|c]" for each record */
	size_t len;
	size_t stop_at;		/* the record at which the callback returns 5; 0: never */
	size_t records;
};

static int record(void *ctx, char **fields, size_t n)
{
	struct seen *s = ctx;
	size_t i;

	s->len += snprintf(s->text + s->len, sizeof(s->text) - s->len, "[");
	for (i = 0; i < n; i++)
		s->len += snprintf(s->text + s->len, sizeof(s->text) - s->len, "%s%s", i ? "|" : "",
				   fields[i]);
	s->len += snprintf(s->text + s->len, sizeof(s->text) - s->len, "]");
	return ++s->records == s->stop_at ? 5 : 0;
}

static int parse(const char *text, struct seen *s, size_t stop_at)
{
	memset(s, 0, sizeof(*s));
	s->stop_at = stop_at;
	return jw_csv_records(text, strlen(text), record, s);
}

static void test_stats_csv(void **state)
{
	struct seen s;

	(void)state;
	assert_int_equal(parse("pid,thread_name,handler_class,message_name,message_count\n"
			       "5120,redis-server,call,getCommand,10000\n"
			       "7,jw_qt,\"Catalog<int, long>\",\"say \"\"hi\"\"\",3\n", &s, 0), 0);
	assert_string_equal(s.text, "[pid|thread_name|handler_class|message_name|message_count]"
				    "[5120|redis-server|call|getCommand|10000]"
				    "[7|jw_qt|Catalog<int, long>|say \"hi\"|3]");
}

static void test_edges(void **state)
{
	struct seen s;

	(void)state;
	/* CRLF, a blank line, empty fields, no newline at the end, a quoted line end */
	assert_int_equal(parse("a,b\r\n\r\n,,\n\"x\ny\",\"\"\nlast", &s, 0), 0);
	assert_string_equal(s.text, "[a|b][||][x\ny|][last]");
	assert_int_equal(parse("", &s, 0), 0);
	assert_int_equal(s.records, 0);
	/* refused: a quote never closed, text after a closing quote */
	assert_int_equal(parse("a,\"b\n", &s, 0), -EINVAL);
	assert_int_equal(parse("\"a\"b,c\n", &s, 0), -EINVAL);
	/* the callback stops it */
	assert_int_equal(parse("1\n2\n3\n", &s, 2), 5);
	assert_string_equal(s.text, "[1][2]");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stats_csv),
		cmocka_unit_test(test_edges),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
