// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of the log directory's page (report --html): the timeline's events at their times,
 * the groups in their order with their flame graphs, the statistics table, what the bounds cut,
 * and names that are markup (C++ templates, lambdas, Python qualnames) escaped everywhere.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "report/reportpage.h"

#define T0 1795998746990ULL
#define CXX "std::vector<int, std::allocator<int> >::push_back(int&&)"
#define LAMBDA "main::{lambda()#1}::operator()() const"
#define QUALNAME "Catalog.reindex.<locals>.<lambda>"
#define EVIL "\"><script>alert('x')</script>"

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (; (hay = strstr(hay, needle)); hay++)
		n++;
	return n;
}

/* A page of two processes: three events (one a hang), two groups, stats.csv's rows. */
struct fixture {
	struct jw_page page;
	struct jw_page_lane lanes[2];
	struct jw_page_event events[3];
	struct jw_page_group groups[2];
	const char *keys[3];
	const char *files[2];
	const char *cells[16 * 3];
	struct jw_page_stats stats;
	char *out;
	size_t len;
};

static const char *const header[16] = {
	"pid", "work_source_uid", "thread_name", "handler_class", "message_name", "is_interactive",
	"message_count", "recorded_message_count", "total_latency_micros", "max_latency_micros",
	"total_cpu_micros", "max_cpu_micros", "recorded_delay_message_count", "total_delay_millis",
	"max_delay_millis", "exception_count",
};

static void fill_stats(struct fixture *fx)
{
	static const char *const rows[2][16] = {
		{ "812", "0", "redis-server", "call", "getCommand", "false", "100", "100", "900",
		  "40", "800", "30", "0", "0", "0", "0" },
		{ "812", "0", "redis-server", "call", EVIL, "false", "5", "5", "12000", "3000",
		  "11000", "2900", "0", "0", "0", "0" },
	};
	size_t r;

	fx->stats.header = header;
	fx->stats.cols = 16;
	for (r = 0; r < 2; r++)
		memcpy(&fx->cells[r * 16], rows[r], sizeof(rows[r]));
	fx->stats.cells = fx->cells;
	fx->stats.rows = 2;
	fx->stats.written = "2026-11-30 00:40:00";
	fx->page.stats = &fx->stats;
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	struct jw_flame *fl;

	if (!fx)
		return -1;
	fx->lanes[0] = (struct jw_page_lane){ "jw_target", 8052, 2 };
	fx->lanes[1] = (struct jw_page_lane){ "python3", 9000, 1 };
	fx->events[0] = (struct jw_page_event){ T0, 300.0, 0, JW_CAUSE_CPU, false, 0 };
	fx->events[1] = (struct jw_page_event){ T0 + 700, 300.0, 1, JW_CAUSE_BLOCKED, false, 1 };
	fx->events[2] = (struct jw_page_event){ T0 + 1000, 6000.0, 0, JW_CAUSE_CPU, true, 2 };
	fx->keys[0] = "jw_target: busy_work<-dispatch";
	fx->keys[1] = "python3: " QUALNAME;
	fx->keys[2] = "jw_target: " EVIL;
	fx->page.dir = "/var/log/jank & <co>";
	fx->page.made = "2026-11-30 00:41:00";
	fx->page.range = "pid 8052";
	fx->page.totals = (struct jw_summary_totals){ .janks = 2, .hangs = 1, .groups = 3,
						       .written = 3, .first_ms = T0,
						       .last_ms = T0 + 1000 };
	fx->page.group_keys = fx->keys;
	fx->page.n_group_keys = 3;
	fx->page.lanes = fx->lanes;
	fx->page.n_lanes = 2;
	fx->page.events = fx->events;
	fx->page.n_events = 3;
	fx->groups[0].g = (struct jw_summary_group){ .process = "jw_target",
		.key = "busy_work<-dispatch", .handler = CXX, .janks = 1, .p50_ms = 300,
		.p95_ms = 300, .max_ms = 300, .total_ms = 300, .cause = { 1, 0, 0, 0 },
		.split_ms = { 225.5, 74.5, 0, 0 },
		.written = 1 };
	fl = &fx->groups[0].flame;
	assert_int_equal(jw_flame__push(fl, "main", "main in /bin/t", JW_OWNER_PROGRAM, 0, 10, 0),
			 0);
	assert_int_equal(jw_flame__push(fl, CXX, CXX " in /bin/t", JW_OWNER_PROGRAM, 1, 7, 0), 0);
	assert_int_equal(jw_flame__push(fl, LAMBDA, LAMBDA, JW_OWNER_PROGRAM, 1, 3, 0), 0);
	fx->groups[0].logs = 1;
	fx->files[0] = "stack-8052-20261130003227-291.txt";
	fx->groups[0].files = fx->files;
	fx->groups[0].n_files = 1;
	fx->groups[1].g = (struct jw_summary_group){ .process = "python3", .key = QUALNAME,
		.by_handler = true, .janks = 1, .cause = { 0, 0, 1, 0 }, .withheld = 1 };
	fx->page.groups = fx->groups;
	fx->page.n_groups = 2;
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	jw_flame__free(&fx->groups[0].flame);
	free(fx->out);
	free(fx);
	return 0;
}

static const char *written(struct fixture *fx)
{
	FILE *f;

	free(fx->out);
	fx->out = NULL;
	f = open_memstream(&fx->out, &fx->len);
	assert_non_null(f);
	assert_int_equal(jw_page_write(&fx->page, f), 0);
	assert_int_equal(fclose(f), 0);
	return fx->out;
}

static void test_timeline(void **state)
{
	struct fixture *fx = *state;
	const char *s = written(fx);
	char want[256];

	assert_int_equal(count(s, "<rect class=\"ev "), 3);
	/* the range spans the first start to the hang's end: 7000 ms over the plot's 950 px */
	assert_non_null(strstr(s, "data-t0=\"1795998746990\" data-span=\"7000\" data-x0=\"210\" "
				  "data-pw=\"950.0\""));
	snprintf(want, sizeof(want), "<rect class=\"ev blocked\" x=\"%.2f\"", 210 + 700 * 950.0 / 7000);
	assert_non_null(strstr(s, want));
	assert_non_null(strstr(s, "<rect class=\"ev cpu hang\" x=\""));
	assert_non_null(strstr(s, "data-t=\"1795998747690\" data-w=\"300.000\" data-lane=\"1\" "
				  "data-g=\"1\" data-cause=\"blocked\""));
	assert_non_null(strstr(s, "Every event (3)"));
	/* the lanes' names, and every group's key for the hover, escaped */
	assert_non_null(strstr(s, "data-pid=\"9000\">python3 9000 (1)</text>"));
	assert_non_null(strstr(s, "<li>jw_target: &quot;&gt;&lt;script&gt;alert(&#39;x&#39;)"
				  "&lt;/script&gt;</li>"));
	/* the bound said when events were cut */
	fx->page.events_cut = 12345;
	s = written(fx);
	assert_non_null(strstr(s, "The longest 3 of 12348 events"));
	assert_non_null(strstr(s, "the 12345 shorter ones are left out"));
}

static void test_groups(void **state)
{
	struct fixture *fx = *state;
	const char *s = written(fx);
	const char *g1 = strstr(s, "<section class=\"group\" id=\"g1\"");
	const char *g2 = strstr(s, "<section class=\"group\" id=\"g2\"");

	assert_non_null(g1);
	assert_non_null(g2);
	assert_true(g1 < g2);
	assert_int_equal(count(s, "<section class=\"group\""), 2);
	assert_non_null(strstr(g1, "data-samples=\"10\" data-logs=\"1\" data-janks=\"1\""));
	assert_non_null(strstr(g1, "data-group=\"busy_work&lt;-dispatch\""));
	assert_non_null(strstr(g2, "data-handler-key=\"Catalog.reindex.&lt;locals&gt;.&lt;lambda&gt;\""));
	/* its flame graph, embedded: the boxes' names escaped, one hatch id of its own */
	assert_non_null(strstr(g1, "<svg version=\"1.1\""));
	assert_non_null(strstr(g1, "id=\"flame1\" class=\"flame\""));
	assert_non_null(strstr(g1, "<pattern id=\"flame1-asleep\""));
	assert_non_null(strstr(g1, "data-name=\"std::vector&lt;int, std::allocator&lt;int&gt; "
				   "&gt;::push_back(int&amp;&amp;)\""));
	assert_non_null(strstr(g1, "data-name=\"main::{lambda()#1}::operator()() const\""));
	assert_null(strstr(s, "<?xml"));
	assert_int_equal(count(s, "<script"), 1);
	assert_non_null(strstr(g1, "handler std::vector&lt;int"));
	assert_non_null(strstr(g1, "<li>stack-8052-20261130003227-291.txt</li>"));
	/* the split: the time's shares as the bar's parts, the janks by cause in words */
	assert_non_null(strstr(g1, "<span class=\"cpu\" style=\"width:75.17%\" data-ms=\"225.500\""));
	assert_non_null(strstr(g1, "<span class=\"runqueue\" style=\"width:24.83%\" "
				   "data-ms=\"74.500\""));
	assert_null(strstr(g1, "<span class=\"blocked\" style"));
	assert_non_null(strstr(g1, "janks by cause: cpu 1, runqueue 0, blocked 0, io 0</p>"));
	/* no stack log read: said, no graph */
	assert_non_null(strstr(g2, "No flame graph"));
	assert_null(strstr(g2, "class=\"flame\""));
	/* one group of three shown: said */
	fx->page.n_groups = 1;
	s = written(fx);
	assert_non_null(strstr(s, "The 1 groups of 3 that took the most time"));
}

static void test_stats(void **state)
{
	struct fixture *fx = *state;
	const char *s = written(fx), *t;

	assert_non_null(strstr(s, "No stats.csv"));
	assert_null(strstr(s, "<table"));
	fill_stats(fx);
	s = written(fx);
	t = strstr(s, "<table id=\"stats\"");
	assert_non_null(t);
	/* sorted at first by total_latency_micros: the 7th column shown (two are not) */
	assert_non_null(strstr(t, "<table id=\"stats\" data-sort=\"6\">"));
	assert_null(strstr(t, "work_source_uid"));
	assert_null(strstr(t, "is_interactive"));
	assert_non_null(strstr(t, "<th data-num=\"1\">pid</th><th data-num=\"0\">thread_name</th>"));
	assert_non_null(strstr(t, "<td>&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"
				  "</td>"));
	assert_int_equal(count(t, "<tr>"), 3);
	assert_null(strstr(s, EVIL));
}

/* The head: the directory's name escaped, the totals, the range, one script, one style. */
static void test_head(void **state)
{
	struct fixture *fx = *state;
	const char *s = written(fx);

	assert_true(!strncmp(s, "<!DOCTYPE html>", 15));
	assert_non_null(strstr(s, "<title>jankwatch: /var/log/jank &amp; &lt;co&gt;</title>"));
	assert_non_null(strstr(s, "data-janks=\"2\" data-hangs=\"1\" data-groups=\"3\""));
	assert_non_null(strstr(s, "(pid 8052)"));
	assert_int_equal(count(s, "<style>"), 1);
	assert_non_null(strstr(s, "function jwFlame(svg)"));
	assert_non_null(strstr(s, "</body>\n</html>\n"));
	/* nothing from elsewhere: the one address is SVG's namespace, which is no request */
	assert_int_equal(count(s, "http"), count(s, "http://www.w3.org/2000/svg"));
	assert_int_equal(count(s, "://"), count(s, "http://www.w3.org/2000/svg"));
	assert_null(strstr(s, " src="));
	assert_null(strstr(s, "<link"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_timeline, setup, teardown),
		cmocka_unit_test_setup_teardown(test_groups, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stats, setup, teardown),
		cmocka_unit_test_setup_teardown(test_head, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
