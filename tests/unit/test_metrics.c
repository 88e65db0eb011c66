// SPDX-License-Identifier: GPL-2.0-only
/*
 * The metrics: series from statistics rows (a bound, "other", counters that never go back when
 * rows go or start again), the kernel's buckets as a cumulative histogram, events by cause,
 * files and reasons, the runs the kernel skipped, and the text format's escaping.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "report/metrics.h"

struct fixture {
	struct jw_metrics *m;
	struct jw_buf b;
	struct jw_metrics_info info;
};

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	fx->m = jw_metrics__new(3);
	jw_buf_init(&fx->b);
	fx->info.version = "0.1.0";
	fx->info.bpf = "core";
	*state = fx;
	return fx->m ? 0 : -1;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	jw_metrics__free(fx->m);
	jw_buf_free(&fx->b);
	free(fx);
	return 0;
}

static const char *render(struct fixture *fx)
{
	jw_buf_reset(&fx->b);
	jw_metrics__render(fx->m, &fx->info, &fx->b);
	assert_int_equal(fx->b.err, 0);
	return fx->b.data;
}

/* The value of the sample line that starts with @series (name and labels, then a space). */
static double value_of(struct fixture *fx, const char *series)
{
	const char *text = render(fx), *p = text;
	size_t n = strlen(series);

	while ((p = strstr(p, series))) {
		if ((p == text || p[-1] == '\n') && p[n] == ' ')
			return strtod(p + n + 1, NULL);
		p += n;
	}
	fail_msg("no series %s in:\n%s", series, text);
	return -1;
}

static bool has_series(struct fixture *fx, const char *series)
{
	const char *text = render(fx);
	const char *p = strstr(text, series);

	return p && (p == text || p[-1] == '\n');
}

static void row(struct fixture *fx, uint32_t pid, uint32_t tid, const char *proc,
		const char *cls, const char *handler, const struct jw_stats_val *v)
{
	assert_int_equal(jw_metrics__row(fx->m, &(struct jw_metrics_row){
		.pid = pid, .tid = tid, .process = proc, .handler_class = cls,
		.handler = handler, .val = v }), 0);
}

#define TASKS(h) "jankwatch_tasks_total{process=\"redis\",handler_class=\"ae\",handler=\"" h "\"}"

/* Counts, times in seconds exactly, the histogram cumulative with le the slot's upper bound. */
static void test_row_series(void **state)
{
	struct fixture *fx = *state;
	struct jw_stats_val v = {
		.count = 10, .recorded = 5, .total_ns = 1500000000ULL, .total_cpu_ns = 250000,
		.delay_count = 2, .total_delay_ns = 3000000, .exceptions = 1,
	};

	v.hist[0] = 1;		/* [0, 2) us */
	v.hist[10] = 3;		/* [1024, 2048) us */
	v.hist[20] = 1;		/* about 1-2 s */
	jw_metrics__rows_begin(fx->m);
	row(fx, 100, 100, "redis", "ae", "serverCron", &v);
	assert_int_equal(jw_metrics__rows_end(fx->m), 0);
	assert_true(value_of(fx, TASKS("serverCron")) == 10);
	assert_true(value_of(fx, "jankwatch_task_cpu_seconds_total{process=\"redis\","
			     "handler_class=\"ae\",handler=\"serverCron\"}") == 0.00025);
	assert_non_null(strstr(render(fx), "handler=\"serverCron\"} 0.000250000\n"));
	assert_true(value_of(fx, "jankwatch_task_delays_total{process=\"redis\","
			     "handler_class=\"ae\",handler=\"serverCron\"}") == 2);
	assert_true(value_of(fx, "jankwatch_task_exceptions_total{process=\"redis\","
			     "handler_class=\"ae\",handler=\"serverCron\"}") == 1);
#define BUCKET(le) "jankwatch_task_duration_seconds_bucket{process=\"redis\"," \
		   "handler_class=\"ae\",handler=\"serverCron\",le=\"" le "\"}"
	assert_true(value_of(fx, BUCKET("0.000002")) == 1);
	assert_true(value_of(fx, BUCKET("0.001024")) == 1);
	assert_true(value_of(fx, BUCKET("0.002048")) == 4);
	assert_true(value_of(fx, BUCKET("2.097152")) == 5);
	assert_true(value_of(fx, BUCKET("4294.967296")) == 5);
	assert_true(value_of(fx, BUCKET("+Inf")) == 5);
	assert_true(value_of(fx, "jankwatch_task_duration_seconds_sum{process=\"redis\","
			     "handler_class=\"ae\",handler=\"serverCron\"}") == 1.5);
	assert_true(value_of(fx, "jankwatch_task_duration_seconds_count{process=\"redis\","
			     "handler_class=\"ae\",handler=\"serverCron\"}") == 5);
	/* No pid label anywhere. */
	assert_null(strstr(render(fx), "pid="));
}

/*
 * Two processes of one name, and two threads, are one series; a row that goes, or starts again,
 * leaves its count in the series: the counter never goes back.
 */
static void test_counters_never_go_back(void **state)
{
	struct fixture *fx = *state;
	struct jw_stats_val a = { .count = 10 }, b = { .count = 7 };

	jw_metrics__rows_begin(fx->m);
	row(fx, 100, 100, "redis", "ae", "h", &a);
	row(fx, 200, 200, "redis", "ae", "h", &b);
	assert_int_equal(jw_metrics__rows_end(fx->m), 0);
	assert_true(value_of(fx, TASKS("h")) == 17);

	/* pid 200 is gone; pid 100 goes on. */
	a.count = 12;
	jw_metrics__rows_begin(fx->m);
	row(fx, 100, 100, "redis", "ae", "h", &a);
	assert_int_equal(jw_metrics__rows_end(fx->m), 0);
	assert_true(value_of(fx, TASKS("h")) == 19);

	/* pid 100's row was reset (stats --reset) and counted 3 since. */
	a.count = 3;
	jw_metrics__rows_begin(fx->m);
	row(fx, 100, 100, "redis", "ae", "h", &a);
	assert_int_equal(jw_metrics__rows_end(fx->m), 0);
	assert_true(value_of(fx, TASKS("h")) == 22);

	/* An unchanged pass changes nothing. */
	jw_metrics__rows_begin(fx->m);
	row(fx, 100, 100, "redis", "ae", "h", &a);
	assert_int_equal(jw_metrics__rows_end(fx->m), 0);
	assert_true(value_of(fx, TASKS("h")) == 22);
}

/*
 * max_handlers 3: the three busiest new keys get series, the rest are summed in "other" (per
 * process), and stay there when room seems to come; a key admitted keeps its series.
 */
static void test_bound_and_other(void **state)
{
	struct fixture *fx = *state;
	struct jw_stats_val v[5] = { { .count = 1 }, { .count = 50 }, { .count = 30 },
				     { .count = 40 }, { .count = 2 } };
	static const char *const names[5] = { "h1", "h50", "h30", "h40", "h2" };
	int i;

	jw_metrics__rows_begin(fx->m);
	for (i = 0; i < 5; i++)
		row(fx, 100, 100, "redis", "ae", names[i], &v[i]);
	assert_int_equal(jw_metrics__rows_end(fx->m), 0);
	assert_int_equal(jw_metrics__handlers(fx->m), 3);
	assert_int_equal(jw_metrics__folded(fx->m), 2);
	assert_true(value_of(fx, TASKS("h50")) == 50);
	assert_true(value_of(fx, TASKS("h40")) == 40);
	assert_true(value_of(fx, TASKS("h30")) == 30);
	assert_false(has_series(fx, TASKS("h1")));
	assert_true(value_of(fx, "jankwatch_tasks_total{process=\"redis\",handler_class=\"other\","
			     "handler=\"other\"}") == 3);

	/* h2 grows busier than all: it stays in "other", which only grows. */
	v[4].count = 1000;
	jw_metrics__rows_begin(fx->m);
	for (i = 0; i < 5; i++)
		row(fx, 100, 100, "redis", "ae", names[i], &v[i]);
	assert_int_equal(jw_metrics__rows_end(fx->m), 0);
	assert_true(value_of(fx, "jankwatch_tasks_total{process=\"redis\",handler_class=\"other\","
			     "handler=\"other\"}") == 1001);
	/* The same handler in another thread or process of that name: its series. */
	jw_metrics__rows_begin(fx->m);
	row(fx, 300, 300, "redis", "ae", "h50", &v[1]);
	assert_int_equal(jw_metrics__rows_end(fx->m), 0);
	assert_true(value_of(fx, TASKS("h50")) == 100);
	assert_int_equal(jw_metrics__handlers(fx->m), 3);
}

/* Events by process and cause, hangs apart; files by kind; withheld by reason. */
static void test_events(void **state)
{
	struct fixture *fx = *state;
	static const char *const files[] = { "/var/log/jankwatch/stack-1-2-3.txt",
					     "/var/log/jankwatch/trace-1-2-3.ftrace",
					     "/var/log/jankwatch/trace-1-2-3.perf.txt" };
	struct jw_event e = { .event = "MAIN_THREAD_JANK", .bundle_name = "redis", .cause = "cpu",
			      .external_log = files, .n_external_log = 3 };

	assert_int_equal(jw_metrics__event(fx->m, &e), 0);
	e.cause = "io";
	e.n_external_log = 0;
	e.withheld = "budget";
	assert_int_equal(jw_metrics__event(fx->m, &e), 0);
	e.event = "MAIN_THREAD_HANG";
	e.cause = "blocked";
	e.withheld = NULL;
	assert_int_equal(jw_metrics__event(fx->m, &e), 0);
	assert_true(value_of(fx, "jankwatch_janks_total{process=\"redis\",cause=\"cpu\"}") == 1);
	assert_true(value_of(fx, "jankwatch_janks_total{process=\"redis\",cause=\"io\"}") == 1);
	assert_true(value_of(fx, "jankwatch_janks_total{process=\"redis\",cause=\"blocked\"}") == 0);
	assert_true(value_of(fx, "jankwatch_hangs_total{process=\"redis\",cause=\"blocked\"}") == 1);
	assert_true(value_of(fx, "jankwatch_files_written_total{process=\"redis\","
			     "kind=\"stack_log\"}") == 1);
	assert_true(value_of(fx, "jankwatch_files_written_total{process=\"redis\","
			     "kind=\"trace\"}") == 2);
	assert_true(value_of(fx, "jankwatch_reports_withheld_total{process=\"redis\","
			     "reason=\"budget\"}") == 1);
}

/* Every family has HELP and TYPE once; label values are escaped and made UTF-8. */
static void test_format(void **state)
{
	struct fixture *fx = *state;
	struct jw_stats_val v = { .count = 1 };
	const char *text;

	fx->info.drops[JW_DROP_SAMPLE] = 4;
	fx->info.drops[JW_DROP_WAKING] = 3;
	fx->info.watched = 2;
	jw_metrics__rows_begin(fx->m);
	row(fx, 1, 1, "we\"ird\\", "cls\n", "h\xff", &v);
	assert_int_equal(jw_metrics__rows_end(fx->m), 0);
	text = render(fx);
	assert_non_null(strstr(text, "jankwatch_tasks_total{process=\"we\\\"ird\\\\\","
			       "handler_class=\"cls\\n\",handler=\"h?\"} 1\n"));
	assert_non_null(strstr(text, "# TYPE jankwatch_task_duration_seconds histogram\n"));
	assert_non_null(strstr(text, "# TYPE jankwatch_tasks_total counter\n"));
	assert_non_null(strstr(text, "jankwatch_build_info{version=\"0.1.0\",bpf=\"core\"} 1\n"));
	assert_true(value_of(fx, "jankwatch_drops_total{what=\"sample\"}") == 4);
	assert_true(value_of(fx, "jankwatch_drops_total{what=\"waking_unseen\"}") == 3);
	assert_true(value_of(fx, "jankwatch_watched_processes") == 2);
	/* One TYPE line per family. */
	assert_null(strstr(strstr(text, "# TYPE jankwatch_tasks_total ") + 1,
			   "# TYPE jankwatch_tasks_total "));
	assert_int_equal(text[strlen(text) - 1], '\n');
}

/* The kernel's skipped runs, a series per loaded program; none at all where it counts none. */
static void test_missed_runs(void **state)
{
	struct fixture *fx = *state;
	struct jw_prog_misses m = { .counted = true, .n = 2, .total = 3 };

	snprintf(m.prog[0].name, sizeof(m.prog[0].name), "on_sched_waking");
	m.prog[0].runs = 3;
	snprintf(m.prog[1].name, sizeof(m.prog[1].name), "on_sched_switch");
	assert_false(has_series(fx, "jankwatch_bpf_missed_runs_total"));
	fx->info.misses = &m;
	assert_true(value_of(fx, "jankwatch_bpf_missed_runs_total{program=\"on_sched_waking\"}") ==
		    3);
	assert_true(value_of(fx, "jankwatch_bpf_missed_runs_total{program=\"on_sched_switch\"}") ==
		    0);
	assert_non_null(strstr(render(fx), "# TYPE jankwatch_bpf_missed_runs_total counter\n"));
	/* A pass with no row at all (before any task, as the textfile is first written). */
	jw_metrics__rows_begin(fx->m);
	assert_int_equal(jw_metrics__rows_end(fx->m), 0);
	assert_false(has_series(fx, "jankwatch_tasks_total{"));
	/* A kernel that does not count them (before 5.12): no series, not a false 0. */
	m.counted = false;
	assert_false(has_series(fx, "jankwatch_bpf_missed_runs_total"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_row_series, setup, teardown),
		cmocka_unit_test_setup_teardown(test_counters_never_go_back, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bound_and_other, setup, teardown),
		cmocka_unit_test_setup_teardown(test_events, setup, teardown),
		cmocka_unit_test_setup_teardown(test_format, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missed_runs, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
