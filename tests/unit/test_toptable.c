// SPDX-License-Identifier: GPL-2.0-only
/* jankwatch top's table: order by share (the loop's envelope last), p99 from the histogram,
 * janks counted against their rows, the screen's bounds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "report/toptable.h"

#define MS 1000000ULL

static struct jw_stats_val val(uint64_t count, uint64_t total_ms, uint64_t max_ms)
{
	struct jw_stats_val v = { .count = count, .recorded = count, .total_ns = total_ms * MS,
				  .max_ns = max_ms * MS, .total_cpu_ns = total_ms * MS / 2 };

	return v;
}

static void add(struct jw_top *t, const char *cls, const char *handler, struct jw_stats_val *v)
{
	assert_int_equal(jw_top__row(t, &(struct jw_stats_row){ .pid = 42, .process = "app",
					   .handler_class = cls, .message_name = handler,
					   .val = v }), 0);
}

static char *render(struct jw_top *t, int width, int height)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	jw_top__render(t, f, &(struct jw_top_view){ .elapsed_ns = 10000 * MS, .width = width,
						    .height = height, .title = "jankwatch top: 1 process" });
	assert_int_equal(fclose(f), 0);
	return text;
}

static void test_order_and_janks(void **state)
{
	struct jw_top *t = jw_top__new();
	struct jw_stats_val slow = val(4, 1200, 300), quick = val(1000, 50, 1),
			    loop = val(2000, 2000, 301);
	char *text, *a, *b, *c;

	(void)state;
	assert_non_null(t);
	assert_int_equal(jw_top__jank(t, &(struct jw_top_jank){ .pid = 42, .handler_class = "call",
				.handler = "debugCommand", .wall_ms = 300, .cause = "blocked" }), 0);
	/* A hang is listed, not counted: its task is counted as a jank when it ends. */
	assert_int_equal(jw_top__jank(t, &(struct jw_top_jank){ .pid = 42, .handler_class = "call",
				.handler = "debugCommand", .wall_ms = 6000, .cause = "blocked",
				.hang = true }), 0);
	add(t, "syscall", "syscall", &loop);
	add(t, "call", "getCommand", &quick);
	add(t, "call", "debugCommand", &slow);
	text = render(t, 0, 0);
	a = strstr(text, "debugCommand (call)");
	b = strstr(text, "getCommand (call)");
	c = strstr(text, "syscall (the loop's iterations");
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(c);
	/* debugCommand's 12% before getCommand's 0.5%; the envelope's 20% after both. */
	assert_true(a < b && b < c);
	assert_non_null(strstr(text, "  12.0%        4     0.4   300.000"));
	assert_non_null(strstr(text, "3004 tasks (300/s), 1 janks"));
	/* Its janks column: 1. */
	assert_non_null(strstr(a - 30, "      1       42  debugCommand (call)"));
	assert_non_null(strstr(text, "last janks:"));
	assert_non_null(strstr(text, "hang    6000.0 ms"));
	free(text);
	/* A new frame: the rows again, the janks kept. */
	jw_top__clear(t);
	add(t, "call", "debugCommand", &slow);
	text = render(t, 0, 0);
	assert_null(strstr(text, "getCommand"));
	assert_non_null(strstr(text, "1 janks"));
	free(text);
	jw_top__free(t);
}

static void test_p99(void **state)
{
	struct jw_stats_val v = val(100, 100, 300);

	(void)state;
	assert_true(jw_top_p99_ms(&v) == 0);	/* nothing recorded in the histogram */
	v.hist[9] = 98;		/* [512, 1024) us */
	v.hist[18] = 2;		/* [262144, 524288) us: the 99th is here */
	assert_true(jw_top_p99_ms(&v) == 300.0);	/* its bound, 524.288, past the max */
	v.hist[9] = 99;
	v.hist[18] = 1;
	assert_true(jw_top_p99_ms(&v) == 1.024);
}

/* A screen of 8 lines holds the title, the header and what rows and janks fit. */
static void test_screen_bounds(void **state)
{
	struct jw_top *t = jw_top__new();
	struct jw_stats_val v[6];
	char name[16], *text, *p;
	int i, lines = 0;

	(void)state;
	for (i = 0; i < 6; i++) {
		v[i] = val(10, (uint64_t)(i + 1) * 10, 5);
		snprintf(name, sizeof(name), "h%d", i);
		add(t, "cls", name, &v[i]);
		jw_top__jank(t, &(struct jw_top_jank){ .pid = 42, .handler_class = "cls",
					.handler = "h0", .wall_ms = 200, .cause = "cpu" });
	}
	text = render(t, 40, 8);
	for (p = text; *p; p++)
		lines += *p == '\n';
	assert_true(lines <= 8);
	for (p = strtok(text, "\n"); p; p = strtok(NULL, "\n"))
		assert_true(strlen(p) <= 40);
	free(text);
	text = render(t, 200, 8);
	assert_non_null(strstr(text, "h5 (cls)"));	/* the largest share kept */
	assert_null(strstr(text, "h0 (cls)\n  SHARE"));
	free(text);
	jw_top__free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order_and_janks),
		cmocka_unit_test(test_p99),
		cmocka_unit_test(test_screen_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
