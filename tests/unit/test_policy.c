// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests of the jank policy: thresholds per log_type, the startup window, the budgets. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config/options.h"
#include "policy/policy.h"

#define MS 1000000ULL
#define SEC 1000000000ULL
#define DAY_S 86400
#define HOUR_S 3600

/* A process started 100 s after boot; the default startup window (10 s) is long over. */
#define PROC_START_NS (100 * SEC)
#define NOW_S 1700000000ULL

struct fixture {
	struct jw_params params;
	struct jw_policy *policy;
};

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	jw_params_defaults(&fx->params);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	jw_policy__free(fx->policy);
	free(fx);
	return 0;
}

/* Sets each "key=value" of the NULL-terminated list on the defaults, then finishes them. */
static void params_from(struct jw_params *params, const char *const *kv)
{
	char err[512] = "";

	jw_params_defaults(params);
	for (; *kv; kv++) {
		if (jw_params_set(params, *kv, err, sizeof(err)))
			fail_msg("%s: %s", *kv, err);
	}
	if (jw_params_finish(params, err, sizeof(err)))
		fail_msg("jw_params_finish: %s", err);
}

#define PARAMS(fx, ...) params_from(&(fx)->params, (const char *const[]){ __VA_ARGS__, NULL })

/* (Re)creates the fixture's policy from its params. */
static struct jw_policy *make_policy(struct fixture *fx, bool all, bool dev)
{
	jw_policy__free(fx->policy);
	fx->policy = jw_policy__new(&fx->params, all, dev);
	assert_non_null(fx->policy);
	return fx->policy;
}

/* A task of @wall_ns by @pid/@uid, at @now_s, well after its process's startup window. */
static struct jw_task_facts task(uint32_t pid, uint32_t uid, uint64_t wall_ns, uint64_t now_s)
{
	return (struct jw_task_facts){
		.pid = pid,
		.uid = uid,
		.wall_ns = wall_ns,
		.begin_boot_ns = PROC_START_NS + 3600 * SEC,
		.proc_start_boot_ns = PROC_START_NS,
		.now_s = now_s,
	};
}

/* A decision whose file is written, as the reporter does when it writes one. */
static enum jw_verdict decide_written(struct jw_policy *p, struct jw_task_facts *t)
{
	enum jw_verdict v = jw_policy__decide(p, t);

	if (v == JW_VERDICT_STACK || v == JW_VERDICT_TRACE)
		jw_policy__written(p, t);
	return v;
}

static enum jw_verdict hang_written(struct jw_policy *p, struct jw_task_facts *t)
{
	enum jw_verdict v = jw_policy__decide_hang(p, t);

	if (v == JW_VERDICT_STACK)
		jw_policy__written(p, t);
	return v;
}

static enum jw_verdict decide_wall(struct jw_policy *p, uint64_t wall_ns)
{
	struct jw_task_facts t = task(1000, 1000, wall_ns, NOW_S);

	return decide_written(p, &t);
}

static enum jw_verdict decide_at(struct jw_policy *p, uint32_t pid, uint32_t uid,
				 uint64_t wall_ns, uint64_t now_s)
{
	struct jw_task_facts t = task(pid, uid, wall_ns, now_s);

	return decide_written(p, &t);
}

static void test_new_and_free(void **state)
{
	struct fixture *fx = *state;

	jw_policy__free(NULL);
	PARAMS(fx, "log_type=0");
	make_policy(fx, false, false);
	make_policy(fx, true, true);
}

/* The rule is threshold < wall: a task of exactly the threshold is not a jank. */
static void test_threshold_boundary(void **state)
{
	struct fixture *fx = *state;
	struct jw_policy *p;

	PARAMS(fx, "threshold_ms=150");
	p = make_policy(fx, true, false);
	assert_int_equal(decide_wall(p, 0), JW_VERDICT_NONE);
	assert_int_equal(decide_wall(p, 149 * MS), JW_VERDICT_NONE);
	assert_int_equal(decide_wall(p, 150 * MS - 1), JW_VERDICT_NONE);
	assert_int_equal(decide_wall(p, 150 * MS), JW_VERDICT_NONE);
	assert_int_equal(decide_wall(p, 150 * MS + 1), JW_VERDICT_STACK);
	assert_int_equal(decide_wall(p, 151 * MS), JW_VERDICT_STACK);
}

static void test_threshold_custom(void **state)
{
	struct fixture *fx = *state;
	struct jw_policy *p;

	PARAMS(fx, "threshold_ms=20", "trace_threshold_ms=40");
	p = make_policy(fx, true, false);
	assert_int_equal(decide_wall(p, 20 * MS), JW_VERDICT_NONE);
	assert_int_equal(decide_wall(p, 20 * MS + 1), JW_VERDICT_STACK);
	assert_int_equal(decide_wall(p, 40 * MS), JW_VERDICT_STACK);
	assert_int_equal(decide_wall(p, 40 * MS + 1), JW_VERDICT_TRACE);
}

/* log_type 0: stack for threshold < wall <= trace threshold, trace above it. */
static void test_log_type_0_split(void **state)
{
	struct fixture *fx = *state;
	struct jw_policy *p;

	PARAMS(fx, "log_type=0");
	p = make_policy(fx, true, false);
	assert_int_equal(decide_wall(p, 300 * MS), JW_VERDICT_STACK);
	assert_int_equal(decide_wall(p, 449 * MS), JW_VERDICT_STACK);
	assert_int_equal(decide_wall(p, 450 * MS - 1), JW_VERDICT_STACK);
	assert_int_equal(decide_wall(p, 450 * MS), JW_VERDICT_STACK);
	assert_int_equal(decide_wall(p, 450 * MS + 1), JW_VERDICT_TRACE);
	assert_int_equal(decide_wall(p, 451 * MS), JW_VERDICT_TRACE);
	assert_int_equal(decide_wall(p, 10 * SEC), JW_VERDICT_TRACE);
	assert_int_equal(decide_wall(p, UINT64_MAX), JW_VERDICT_TRACE);
}

/* log_type 1: sample_interval is the threshold (threshold_ms does not apply), stacks only. */
static void test_log_type_1_uses_sample_interval(void **state)
{
	struct fixture *fx = *state;
	struct jw_policy *p;

	PARAMS(fx, "log_type=1", "sample_interval=200", "ignore_startup_time=10",
	       "sample_count=5", "report_times_per_app=1", "threshold_ms=100");
	p = make_policy(fx, true, false);
	assert_int_equal(decide_wall(p, 150 * MS), JW_VERDICT_NONE);
	assert_int_equal(decide_wall(p, 200 * MS), JW_VERDICT_NONE);
	assert_int_equal(decide_wall(p, 200 * MS + 1), JW_VERDICT_STACK);
	assert_int_equal(decide_wall(p, 450 * MS + 1), JW_VERDICT_STACK);
	assert_int_equal(decide_wall(p, 60 * SEC), JW_VERDICT_STACK);
}

static void test_log_type_1_interval_below_threshold_ms(void **state)
{
	struct fixture *fx = *state;
	struct jw_policy *p;

	PARAMS(fx, "log_type=1", "sample_interval=60", "ignore_startup_time=3",
	       "sample_count=1", "report_times_per_app=3");
	p = make_policy(fx, true, false);
	assert_int_equal(decide_wall(p, 60 * MS), JW_VERDICT_NONE);
	assert_int_equal(decide_wall(p, 60 * MS + 1), JW_VERDICT_STACK);
	assert_int_equal(decide_wall(p, 100 * MS), JW_VERDICT_STACK);
}

/* log_type 2: every jank gets a trace. */
static void test_log_type_2_trace_only(void **state)
{
	struct fixture *fx = *state;
	struct jw_policy *p;

	PARAMS(fx, "log_type=2");
	p = make_policy(fx, true, false);
	assert_int_equal(decide_wall(p, 150 * MS), JW_VERDICT_NONE);
	assert_int_equal(decide_wall(p, 150 * MS + 1), JW_VERDICT_TRACE);
	assert_int_equal(decide_wall(p, 450 * MS), JW_VERDICT_TRACE);
	assert_int_equal(decide_wall(p, 5 * SEC), JW_VERDICT_TRACE);
}

static enum jw_verdict decide_begin(struct jw_policy *p, uint64_t begin_boot_ns,
				    uint64_t wall_ns)
{
	struct jw_task_facts t = task(1000, 1000, wall_ns, NOW_S);

	t.begin_boot_ns = begin_boot_ns;
	return decide_written(p, &t);
}

/* Tasks that begin before proc_start + ignore_startup_time are ignored; at the boundary not. */
static void test_startup_window(void **state)
{
	struct fixture *fx = *state;
	struct jw_policy *p;

	PARAMS(fx, "ignore_startup_time=10");
	p = make_policy(fx, true, false);
	assert_int_equal(decide_begin(p, PROC_START_NS, 200 * MS), JW_VERDICT_NONE);
	assert_int_equal(decide_begin(p, PROC_START_NS + 5 * SEC, 200 * MS), JW_VERDICT_NONE);
	assert_int_equal(decide_begin(p, PROC_START_NS + 10 * SEC - 1, 200 * MS),
			 JW_VERDICT_NONE);
	assert_int_equal(decide_begin(p, PROC_START_NS + 10 * SEC - 1, 900 * MS),
			 JW_VERDICT_NONE);
	assert_int_equal(decide_begin(p, PROC_START_NS + 10 * SEC, 200 * MS), JW_VERDICT_STACK);
	assert_int_equal(decide_begin(p, PROC_START_NS + 10 * SEC, 900 * MS), JW_VERDICT_TRACE);
	assert_int_equal(decide_begin(p, PROC_START_NS + 11 * SEC, 200 * MS), JW_VERDICT_STACK);
	/* A clock that says the task began before its process did: still in the window. */
	assert_int_equal(decide_begin(p, PROC_START_NS - SEC, 200 * MS), JW_VERDICT_NONE);
}

static void test_startup_window_custom(void **state)
{
	struct fixture *fx = *state;
	struct jw_policy *p;

	PARAMS(fx, "ignore_startup_time=3");
	p = make_policy(fx, true, false);
	assert_int_equal(decide_begin(p, PROC_START_NS + 3 * SEC - 1, 200 * MS),
			 JW_VERDICT_NONE);
	assert_int_equal(decide_begin(p, PROC_START_NS + 3 * SEC, 200 * MS), JW_VERDICT_STACK);

	PARAMS(fx, "ignore_startup_time=600");
	p = make_policy(fx, true, false);
	assert_int_equal(decide_begin(p, PROC_START_NS + 599 * SEC, 200 * MS), JW_VERDICT_NONE);
	assert_int_equal(decide_begin(p, PROC_START_NS + 600 * SEC, 200 * MS), JW_VERDICT_STACK);
}

/* A task ignored in the startup window or under the threshold spends no budget. */
static void test_ignored_tasks_spend_nothing(void **state)
{
	struct fixture *fx = *state;
	struct jw_policy *p;
	int i;

	PARAMS(fx, "report_times_per_app=1");
	p = make_policy(fx, false, false);
	for (i = 0; i < 5; i++) {
		assert_int_equal(decide_begin(p, PROC_START_NS + SEC, 200 * MS), JW_VERDICT_NONE);
		assert_int_equal(decide_begin(p, PROC_START_NS + SEC, 900 * MS), JW_VERDICT_NONE);
		assert_int_equal(decide_wall(p, 100 * MS), JW_VERDICT_NONE);
	}
	assert_int_equal(decide_wall(p, 200 * MS), JW_VERDICT_STACK);
	assert_int_equal(decide_wall(p, 900 * MS), JW_VERDICT_TRACE);
}

static void test_budget_default_one(void **state)
{
	struct fixture *fx = *state;
	struct jw_policy *p;

	PARAMS(fx, "log_type=0");
	assert_int_equal(fx->params.v[JW_P_REPORT_TIMES_PER_APP], 1);
	p = make_policy(fx, false, false);
	assert_int_equal(decide_at(p, 42, 1000, 200 * MS, NOW_S), JW_VERDICT_STACK);
	assert_int_equal(decide_at(p, 42, 1000, 200 * MS, NOW_S), JW_VERDICT_EVENT);
	assert_int_equal(decide_at(p, 42, 1000, 300 * MS, NOW_S + 60), JW_VERDICT_EVENT);
	/* Under the threshold it is still no jank at all. */
	assert_int_equal(decide_at(p, 42, 1000, 100 * MS, NOW_S + 60), JW_VERDICT_NONE);
}

/*
 * A decision whose file is not written (a quota, a trace window already open, no tracer)
 * spends nothing and changes nothing to save: the next jank gets the file. Written spends once,
 * however often it is called; traces and hangs alike.
 */
static void test_unwritten_spends_nothing(void **state)
{
	struct fixture *fx = *state;
	struct jw_task_facts t = task(42, 1000, 200 * MS, NOW_S);
	struct jw_policy *p;
	char buf[256];

	PARAMS(fx, "log_type=0");
	p = make_policy(fx, false, false);
	assert_int_equal(jw_policy__decide(p, &t), JW_VERDICT_STACK);
	assert_false(jw_policy__changed(p));
	assert_int_equal(jw_policy__save(p, buf, sizeof(buf)), 0);
	t = task(42, 1000, 200 * MS, NOW_S);
	assert_int_equal(jw_policy__decide(p, &t), JW_VERDICT_STACK);
	jw_policy__written(p, &t);
	jw_policy__written(p, &t);
	assert_true(jw_policy__changed(p));
	t = task(42, 1000, 250 * MS, NOW_S);
	assert_int_equal(jw_policy__decide(p, &t), JW_VERDICT_EVENT);
	/* An event-only decision has nothing to spend. */
	jw_policy__written(p, &t);
	/* The uid's one trace: declined twice, then written; the next is withheld. */
	t = task(43, 1000, 900 * MS, NOW_S);
	assert_int_equal(jw_policy__decide(p, &t), JW_VERDICT_TRACE);
	t = task(44, 1000, 900 * MS, NOW_S);
	assert_int_equal(jw_policy__decide(p, &t), JW_VERDICT_TRACE);
	jw_policy__written(p, &t);
	t = task(45, 1000, 900 * MS, NOW_S);
	assert_int_equal(jw_policy__decide(p, &t), JW_VERDICT_EVENT);
	/* A hang's stacks: the same. */
	t = task(42, 1000, 6000 * MS, NOW_S);
	assert_int_equal(jw_policy__decide_hang(p, &t), JW_VERDICT_STACK);
	assert_int_equal(jw_policy__decide_hang(p, &t), JW_VERDICT_STACK);
	jw_policy__written(p, &t);
	assert_int_equal(jw_policy__decide_hang(p, &t), JW_VERDICT_EVENT);
}

/*
 * A hang: a task still running at hang_ms or more, outside the startup window, with a budget of
 * its own (report_times_per_app a day) that a jank's report does not spend, and --all lifts.
 */
static void test_hang(void **state)
{
	struct fixture *fx = *state;
	struct jw_task_facts t = task(42, 1000, 5999 * MS, NOW_S);
	struct jw_policy *p;

	PARAMS(fx, "log_type=0");
	p = make_policy(fx, false, false);
	assert_int_equal(hang_written(p, &t), JW_VERDICT_NONE);
	assert_int_equal(decide_at(p, 42, 1000, 200 * MS, NOW_S), JW_VERDICT_STACK);
	t.wall_ns = 6000 * MS;
	assert_int_equal(hang_written(p, &t), JW_VERDICT_STACK);
	assert_int_equal(hang_written(p, &t), JW_VERDICT_EVENT);
	t.now_s = NOW_S + 86400;
	assert_int_equal(hang_written(p, &t), JW_VERDICT_STACK);
	/* Inside the startup window: nothing. */
	t = task(43, 1000, 7000 * MS, NOW_S);
	t.begin_boot_ns = t.proc_start_boot_ns + SEC;
	assert_int_equal(hang_written(p, &t), JW_VERDICT_NONE);
	/* hang_ms as set; --all: every hang gets its stacks. */
	PARAMS(fx, "hang_ms=1000");
	p = make_policy(fx, true, false);
	t = task(42, 1000, 1000 * MS, NOW_S);
	assert_int_equal(hang_written(p, &t), JW_VERDICT_STACK);
	assert_int_equal(hang_written(p, &t), JW_VERDICT_STACK);
}

static enum jw_verdict decide_group(struct jw_policy *p, uint32_t pid, const char *group,
				   uint64_t now_s)
{
	struct jw_task_facts t = task(pid, 1000, 200 * MS, now_s);

	t.group = group;
	return decide_written(p, &t);
}

/*
 * Repeats of one group in one process write files at occurrences 1, 2, 3, 5, 8, 13 (within the
 * budget); every other one is an event. A skipped repeat spends no budget.
 */
static void test_fibonacci_back_off(void **state)
{
	struct fixture *fx = *state;
	static const bool files[] = { 0, 1, 1, 1, 0, 1, 0, 0, 1, 0, 0, 0, 0, 1, 0 };
	struct jw_policy *p;
	int i;

	PARAMS(fx, "report_times_per_app=3");
	p = make_policy(fx, false, true);
	for (i = 1; i <= 14; i++) {
		/* A new hour each time: the budget (3 an hour) never runs out here. */
		enum jw_verdict v = decide_group(p, 42, "parse<-run", NOW_S + i * 3600);

		assert_int_equal(v, files[i] ? JW_VERDICT_STACK : JW_VERDICT_EVENT);
	}
	/* Another group, another process: counted apart. */
	assert_int_equal(decide_group(p, 42, "tick<-main", NOW_S + 20 * 3600), JW_VERDICT_STACK);
	assert_int_equal(decide_group(p, 43, "parse<-run", NOW_S + 20 * 3600), JW_VERDICT_STACK);
	/*
	 * No group (no stack): no back-off, the budget alone. A new hour each time: had the empty
	 * group backed off, its 4th, 6th and 7th would get no files.
	 */
	for (i = 0; i < 8; i++)
		assert_int_equal(decide_group(p, 44, i % 2 ? "" : NULL, NOW_S + (30 + i) * 3600),
				 JW_VERDICT_STACK);
	/* Within one hour, the budget: 3. */
	assert_int_equal(decide_group(p, 46, NULL, NOW_S), JW_VERDICT_STACK);
	assert_int_equal(decide_group(p, 46, "", NOW_S), JW_VERDICT_STACK);
	assert_int_equal(decide_group(p, 46, NULL, NOW_S), JW_VERDICT_STACK);
	assert_int_equal(decide_group(p, 46, NULL, NOW_S), JW_VERDICT_EVENT);
	/*
	 * A repeat the back-off skips spends no budget. The 1st to 3rd of a group spend the hour's
	 * 3; in the next hour the 4th is skipped, and the 5th and two other groups still get their
	 * files, the 3 of that hour: had the 4th spent one, the last of them would not.
	 */
	p = make_policy(fx, false, true);
	for (i = 0; i < 3; i++)
		assert_int_equal(decide_group(p, 45, "g", NOW_S), JW_VERDICT_STACK);
	assert_int_equal(decide_group(p, 45, "h", NOW_S), JW_VERDICT_EVENT);
	assert_int_equal(decide_group(p, 45, "g", NOW_S + 3600), JW_VERDICT_EVENT);
	assert_int_equal(decide_group(p, 45, "g", NOW_S + 3600), JW_VERDICT_STACK);
	assert_int_equal(decide_group(p, 45, "h", NOW_S + 3600), JW_VERDICT_STACK);
	assert_int_equal(decide_group(p, 45, "i", NOW_S + 3600), JW_VERDICT_STACK);
	assert_int_equal(decide_group(p, 45, "j", NOW_S + 3600), JW_VERDICT_EVENT);
	/* --all: every jank gets its files. */
	p = make_policy(fx, true, false);
	for (i = 0; i < 6; i++)
		assert_int_equal(decide_group(p, 45, "g", NOW_S), JW_VERDICT_STACK);
}

/* A task of @wall_ns ending @end_ms after a moment past the process's startup window. */
static struct jw_task_facts burst_task(uint32_t pid, uint64_t wall_ns, uint64_t end_ms)
{
	struct jw_task_facts t = task(pid, 1000, wall_ns, NOW_S);

	t.begin_boot_ns = PROC_START_NS + 11 * SEC + end_ms * MS - wall_ns;
	return t;
}

/*
 * burst=3/50/2: the third task over 50 ms within 2 s of one process is reported (a stack log)
 * though under the jank threshold; then the count starts again. Older tasks fall out of the
 * window; other processes count apart; tasks in the startup window do not count.
 */
static void test_burst(void **state)
{
	struct fixture *fx = *state;
	struct jw_task_facts t;
	struct jw_policy *p;

	PARAMS(fx, "burst=3/50/2", "report_times_per_app=3");
	p = make_policy(fx, false, false);
	assert_int_equal(jw_policy__min_threshold_ns(&fx->params), 50 * MS);
	t = burst_task(42, 60 * MS, 0);
	assert_false(jw_policy__triage(p, &t));
	t = burst_task(42, 40 * MS, 100);	/* not over T: does not count */
	assert_false(jw_policy__triage(p, &t));
	t = burst_task(43, 60 * MS, 200);	/* another process */
	assert_false(jw_policy__triage(p, &t));
	t = burst_task(42, 60 * MS, 500);
	assert_false(jw_policy__triage(p, &t));
	t = burst_task(42, 60 * MS, 1900);
	assert_int_equal(decide_written(p, &t), JW_VERDICT_STACK);
	assert_int_equal(t.burst, 3);
	assert_false(t.jank);
	/* Counted once: deciding again does not count it again. */
	assert_true(jw_policy__triage(p, &t));
	/* Starts again; the first of these falls out of the window before the third. */
	t = burst_task(42, 60 * MS, 2000);
	assert_false(jw_policy__triage(p, &t));
	t = burst_task(42, 60 * MS, 4100);
	assert_false(jw_policy__triage(p, &t));
	t = burst_task(42, 60 * MS, 4200);
	assert_false(jw_policy__triage(p, &t));
	t = burst_task(42, 60 * MS, 4300);
	assert_true(jw_policy__triage(p, &t));
	assert_int_equal(t.burst, 3);
	/* A jank that completes a burst is both. */
	t = burst_task(43, 60 * MS, 2100);
	assert_false(jw_policy__triage(p, &t));
	t = burst_task(43, 200 * MS, 2200);
	assert_true(jw_policy__triage(p, &t));
	assert_true(t.jank);
	assert_int_equal(t.burst, 3);
	/* In the startup window: nothing counts. */
	t = task(44, 1000, 60 * MS, NOW_S);
	t.begin_boot_ns = PROC_START_NS + SEC;
	assert_false(jw_policy__triage(p, &t));
	assert_int_equal(t.burst, 0);
	/* Off: no burst. */
	PARAMS(fx, "log_type=0");
	p = make_policy(fx, false, false);
	for (int i = 0; i < 5; i++) {
		t = burst_task(42, 60 * MS, i * 10);
		assert_false(jw_policy__triage(p, &t));
	}
}

/* The budgets spent are saved as text and loaded by a new policy: a restart keeps them. */
static void test_budgets_saved_and_loaded(void **state)
{
	struct fixture *fx = *state;
	char buf[1024];
	struct jw_policy *p;
	struct jw_task_facts t = task(7, 1000, 7000 * MS, NOW_S);
	size_t need;

	PARAMS(fx, "log_type=0");
	p = make_policy(fx, false, false);
	assert_false(jw_policy__changed(p));
	assert_int_equal(decide_at(p, 42, 1000, 200 * MS, NOW_S), JW_VERDICT_STACK);
	assert_int_equal(decide_at(p, 43, 1001, 600 * MS, NOW_S), JW_VERDICT_TRACE);
	assert_int_equal(hang_written(p, &t), JW_VERDICT_STACK);
	assert_true(jw_policy__changed(p));
	need = jw_policy__save(p, NULL, 0);
	assert_int_equal(jw_policy__save(p, buf, sizeof(buf)), need);
	assert_false(jw_policy__changed(p));
	assert_non_null(strstr(buf, "stack 42 "));
	assert_non_null(strstr(buf, "trace 1001 0 1 "));
	assert_non_null(strstr(buf, "hang 7 "));

	p = make_policy(fx, false, false);
	assert_int_equal(jw_policy__load(p, "junk\nstack x\nfoo 1 2 3 4\n"), 0);
	assert_int_equal(jw_policy__load(p, buf), 3);
	assert_int_equal(decide_at(p, 42, 1000, 200 * MS, NOW_S + 60), JW_VERDICT_EVENT);
	assert_int_equal(decide_at(p, 44, 1001, 600 * MS, NOW_S + 60), JW_VERDICT_EVENT);
	assert_int_equal(hang_written(p, &t), JW_VERDICT_EVENT);
	/* Another process with the same pid (another start time) has its own budget. */
	t = task(42, 1000, 200 * MS, NOW_S + 60);
	t.proc_start_boot_ns += SEC;
	t.begin_boot_ns += SEC;
	assert_int_equal(decide_written(p, &t), JW_VERDICT_STACK);
	/* The saved windows still end a day after they began. */
	assert_int_equal(decide_at(p, 42, 1000, 200 * MS, NOW_S + 86400), JW_VERDICT_STACK);
}

static void test_budget_three(void **state)
{
	struct fixture *fx = *state;
	struct jw_policy *p;

	PARAMS(fx, "report_times_per_app=3");
	p = make_policy(fx, false, false);
	assert_int_equal(decide_at(p, 42, 1000, 200 * MS, NOW_S), JW_VERDICT_STACK);
	assert_int_equal(decide_at(p, 42, 1000, 200 * MS, NOW_S + 1), JW_VERDICT_STACK);
	assert_int_equal(decide_at(p, 42, 1000, 200 * MS, NOW_S + 2), JW_VERDICT_STACK);
	assert_int_equal(decide_at(p, 42, 1000, 200 * MS, NOW_S + 3), JW_VERDICT_EVENT);
	assert_int_equal(decide_at(p, 42, 1000, 200 * MS, NOW_S + 4), JW_VERDICT_EVENT);
}

/* The window is a day, from the first report: a new one opens 86400 s later. */
static void test_budget_day_window(void **state)
{
	struct fixture *fx = *state;
	struct jw_policy *p;

	PARAMS(fx, "report_times_per_app=1");
	p = make_policy(fx, false, false);
	assert_int_equal(decide_at(p, 42, 1000, 200 * MS, NOW_S), JW_VERDICT_STACK);
	assert_int_equal(decide_at(p, 42, 1000, 200 * MS, NOW_S + HOUR_S), JW_VERDICT_EVENT);
	assert_int_equal(decide_at(p, 42, 1000, 200 * MS, NOW_S + DAY_S - 1), JW_VERDICT_EVENT);
	assert_int_equal(decide_at(p, 42, 1000, 200 * MS, NOW_S + DAY_S), JW_VERDICT_STACK);
	assert_int_equal(decide_at(p, 42, 1000, 200 * MS, NOW_S + DAY_S + 1), JW_VERDICT_EVENT);
	assert_int_equal(decide_at(p, 42, 1000, 200 * MS, NOW_S + 2 * DAY_S - 1),
			 JW_VERDICT_EVENT);
	assert_int_equal(decide_at(p, 42, 1000, 200 * MS, NOW_S + 2 * DAY_S), JW_VERDICT_STACK);
}

/* Developer mode: the window is an hour. */
static void test_budget_dev_hour_window(void **state)
{
	struct fixture *fx = *state;
	struct jw_policy *p;

	PARAMS(fx, "report_times_per_app=2");
	p = make_policy(fx, false, true);
	assert_int_equal(decide_at(p, 42, 1000, 200 * MS, NOW_S), JW_VERDICT_STACK);
	assert_int_equal(decide_at(p, 42, 1000, 200 * MS, NOW_S + 10), JW_VERDICT_STACK);
	assert_int_equal(decide_at(p, 42, 1000, 200 * MS, NOW_S + 20), JW_VERDICT_EVENT);
	assert_int_equal(decide_at(p, 42, 1000, 200 * MS, NOW_S + HOUR_S - 1), JW_VERDICT_EVENT);
	assert_int_equal(decide_at(p, 42, 1000, 200 * MS, NOW_S + HOUR_S), JW_VERDICT_STACK);
	assert_int_equal(decide_at(p, 42, 1000, 200 * MS, NOW_S + HOUR_S + 1), JW_VERDICT_STACK);
	assert_int_equal(decide_at(p, 42, 1000, 200 * MS, NOW_S + HOUR_S + 2), JW_VERDICT_EVENT);
}

static void test_budget_per_pid(void **state)
{
	struct fixture *fx = *state;
	struct jw_policy *p;

	PARAMS(fx, "report_times_per_app=1");
	p = make_policy(fx, false, false);
	/* Same uid, different processes: each has its own stack budget. */
	assert_int_equal(decide_at(p, 1, 1000, 200 * MS, NOW_S), JW_VERDICT_STACK);
	assert_int_equal(decide_at(p, 2, 1000, 200 * MS, NOW_S), JW_VERDICT_STACK);
	assert_int_equal(decide_at(p, 3, 0, 200 * MS, NOW_S), JW_VERDICT_STACK);
	assert_int_equal(decide_at(p, 1, 1000, 200 * MS, NOW_S), JW_VERDICT_EVENT);
	assert_int_equal(decide_at(p, 2, 1000, 200 * MS, NOW_S), JW_VERDICT_EVENT);
	assert_int_equal(decide_at(p, 3, 0, 200 * MS, NOW_S), JW_VERDICT_EVENT);
	assert_int_equal(decide_at(p, 4, 1000, 200 * MS, NOW_S), JW_VERDICT_STACK);
}

/* More processes than the policy tracks: a new process still gets its first report. */
static void test_budget_many_pids(void **state)
{
	struct fixture *fx = *state;
	struct jw_policy *p;
	uint32_t pid;

	PARAMS(fx, "report_times_per_app=1");
	p = make_policy(fx, false, false);
	for (pid = 1; pid <= 3000; pid++)
		assert_int_equal(decide_at(p, pid, 1000, 200 * MS, NOW_S + pid), JW_VERDICT_STACK);
	/* The most recent ones are still remembered. */
	assert_int_equal(decide_at(p, 3000, 1000, 200 * MS, NOW_S + 3001), JW_VERDICT_EVENT);
	assert_int_equal(decide_at(p, 2999, 1000, 200 * MS, NOW_S + 3001), JW_VERDICT_EVENT);
}

/* Traces: one per uid per window, apart from the stack budget of each process. */
static void test_trace_budget_per_uid(void **state)
{
	struct fixture *fx = *state;
	struct jw_policy *p;

	PARAMS(fx, "report_times_per_app=3");
	p = make_policy(fx, false, false);
	assert_int_equal(decide_at(p, 1, 1000, 900 * MS, NOW_S), JW_VERDICT_TRACE);
	assert_int_equal(decide_at(p, 1, 1000, 900 * MS, NOW_S), JW_VERDICT_EVENT);
	/* Another process of the same uid: the uid's trace is spent. */
	assert_int_equal(decide_at(p, 2, 1000, 900 * MS, NOW_S), JW_VERDICT_EVENT);
	/* Another uid has its own. */
	assert_int_equal(decide_at(p, 3, 1001, 900 * MS, NOW_S), JW_VERDICT_TRACE);
	assert_int_equal(decide_at(p, 3, 1001, 900 * MS, NOW_S), JW_VERDICT_EVENT);
	/* The stack budget of the process is untouched by its traces. */
	assert_int_equal(decide_at(p, 1, 1000, 200 * MS, NOW_S), JW_VERDICT_STACK);
	assert_int_equal(decide_at(p, 1, 1000, 200 * MS, NOW_S), JW_VERDICT_STACK);
	assert_int_equal(decide_at(p, 1, 1000, 200 * MS, NOW_S), JW_VERDICT_STACK);
	assert_int_equal(decide_at(p, 1, 1000, 200 * MS, NOW_S), JW_VERDICT_EVENT);
	/* And a trace never spends the stack budget. */
	assert_int_equal(decide_at(p, 2, 1000, 200 * MS, NOW_S), JW_VERDICT_STACK);
	/* A day later the uid gets a trace again. */
	assert_int_equal(decide_at(p, 2, 1000, 900 * MS, NOW_S + DAY_S - 1), JW_VERDICT_EVENT);
	assert_int_equal(decide_at(p, 2, 1000, 900 * MS, NOW_S + DAY_S), JW_VERDICT_TRACE);
	assert_int_equal(decide_at(p, 1, 1000, 900 * MS, NOW_S + DAY_S), JW_VERDICT_EVENT);
}

static void test_trace_budget_dev_hour(void **state)
{
	struct fixture *fx = *state;
	struct jw_policy *p;

	PARAMS(fx, "log_type=2");
	p = make_policy(fx, false, true);
	assert_int_equal(decide_at(p, 1, 1000, 200 * MS, NOW_S), JW_VERDICT_TRACE);
	assert_int_equal(decide_at(p, 1, 1000, 200 * MS, NOW_S + HOUR_S - 1), JW_VERDICT_EVENT);
	assert_int_equal(decide_at(p, 1, 1000, 200 * MS, NOW_S + HOUR_S), JW_VERDICT_TRACE);
	assert_int_equal(decide_at(p, 1, 1000, 200 * MS, NOW_S + HOUR_S), JW_VERDICT_EVENT);
}

/* --all lifts both budgets; the thresholds and the startup window still apply. */
static void test_all_lifts_budgets(void **state)
{
	struct fixture *fx = *state;
	struct jw_policy *p;
	int i;

	PARAMS(fx, "report_times_per_app=1");
	p = make_policy(fx, true, false);
	for (i = 0; i < 50; i++) {
		assert_int_equal(decide_at(p, 7, 1000, 200 * MS, NOW_S), JW_VERDICT_STACK);
		assert_int_equal(decide_at(p, 7, 1000, 900 * MS, NOW_S), JW_VERDICT_TRACE);
		assert_int_equal(decide_at(p, 7, 1000, 100 * MS, NOW_S), JW_VERDICT_NONE);
	}
	assert_int_equal(decide_begin(p, PROC_START_NS + SEC, 200 * MS), JW_VERDICT_NONE);
}

static void test_min_threshold(void **state)
{
	struct fixture *fx = *state;

	PARAMS(fx, "log_type=0");
	assert_int_equal(jw_policy__min_threshold_ns(&fx->params), 150 * MS);
	PARAMS(fx, "threshold_ms=20", "trace_threshold_ms=40");
	assert_int_equal(jw_policy__min_threshold_ns(&fx->params), 20 * MS);
	PARAMS(fx, "log_type=2", "threshold_ms=700");
	assert_int_equal(jw_policy__min_threshold_ns(&fx->params), 700 * MS);
	/* log_type 1: sample_interval, whatever threshold_ms says. */
	PARAMS(fx, "log_type=1", "sample_interval=200", "ignore_startup_time=10",
	       "sample_count=5", "report_times_per_app=1");
	assert_int_equal(jw_policy__min_threshold_ns(&fx->params), 200 * MS);
	PARAMS(fx, "log_type=1", "sample_interval=60", "ignore_startup_time=10",
	       "sample_count=5", "report_times_per_app=1", "threshold_ms=10");
	assert_int_equal(jw_policy__min_threshold_ns(&fx->params), 60 * MS);
}

/* A burst trigger's T lowers the kernel's cut when it is below the jank threshold. */
static void test_min_threshold_burst(void **state)
{
	struct fixture *fx = *state;

	PARAMS(fx, "burst=3/100/10");
	assert_true(fx->params.burst.on);
	assert_int_equal(jw_policy__min_threshold_ns(&fx->params), 100 * MS);
	PARAMS(fx, "burst=3/200/10");
	assert_int_equal(jw_policy__min_threshold_ns(&fx->params), 150 * MS);
	PARAMS(fx, "burst=3/150/10");
	assert_int_equal(jw_policy__min_threshold_ns(&fx->params), 150 * MS);
	PARAMS(fx, "burst=2/1/1");
	assert_int_equal(jw_policy__min_threshold_ns(&fx->params), 1 * MS);
	PARAMS(fx, "log_type=1", "sample_interval=60", "ignore_startup_time=10",
	       "sample_count=5", "report_times_per_app=1", "burst=3/100/10");
	assert_int_equal(jw_policy__min_threshold_ns(&fx->params), 60 * MS);
	PARAMS(fx, "log_type=1", "sample_interval=300", "ignore_startup_time=10",
	       "sample_count=4", "report_times_per_app=1", "burst=3/100/10");
	assert_int_equal(jw_policy__min_threshold_ns(&fx->params), 100 * MS);
	PARAMS(fx, "burst=3/100/10", "burst=off");
	assert_int_equal(jw_policy__min_threshold_ns(&fx->params), 150 * MS);
}

/* The burst T only decides what leaves the kernel, not what a single task's verdict is. */
static void test_burst_does_not_lower_jank_threshold(void **state)
{
	struct fixture *fx = *state;
	struct jw_policy *p;

	PARAMS(fx, "burst=3/100/10");
	p = make_policy(fx, true, false);
	assert_int_equal(decide_wall(p, 120 * MS), JW_VERDICT_NONE);
	assert_int_equal(decide_wall(p, 150 * MS), JW_VERDICT_NONE);
	assert_int_equal(decide_wall(p, 150 * MS + 1), JW_VERDICT_STACK);
}

/*
 * The wall clock stepped back (an RTC that was ahead, corrected by NTP): a window that
 * "started" in the future must not withhold reports until that future comes round again.
 */
static void test_budget_clock_stepped_back(void **state)
{
	struct fixture *fx = *state;
	struct jw_policy *p;

	PARAMS(fx, "report_times_per_app=1");
	p = make_policy(fx, false, false);
	assert_int_equal(decide_at(p, 42, 1000, 200 * MS, NOW_S + 365 * DAY_S), JW_VERDICT_STACK);
	assert_int_equal(decide_at(p, 42, 1000, 900 * MS, NOW_S + 365 * DAY_S), JW_VERDICT_TRACE);
	/* A year back (that jank may or may not get a file), then a window later. */
	assert_int_not_equal(decide_at(p, 42, 1000, 200 * MS, NOW_S), JW_VERDICT_NONE);
	assert_int_equal(decide_at(p, 42, 1000, 200 * MS, NOW_S + DAY_S + 1), JW_VERDICT_STACK);
	assert_int_equal(decide_at(p, 42, 1000, 900 * MS, NOW_S + DAY_S + 1), JW_VERDICT_TRACE);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_new_and_free),
		T(test_threshold_boundary),
		T(test_threshold_custom),
		T(test_log_type_0_split),
		T(test_log_type_1_uses_sample_interval),
		T(test_log_type_1_interval_below_threshold_ms),
		T(test_log_type_2_trace_only),
		T(test_startup_window),
		T(test_startup_window_custom),
		T(test_ignored_tasks_spend_nothing),
		T(test_unwritten_spends_nothing),
		T(test_budget_default_one),
		T(test_hang),
		T(test_fibonacci_back_off),
		T(test_burst),
		T(test_budgets_saved_and_loaded),
		T(test_budget_three),
		T(test_budget_day_window),
		T(test_budget_dev_hour_window),
		T(test_budget_per_pid),
		T(test_budget_many_pids),
		T(test_trace_budget_per_uid),
		T(test_trace_budget_dev_hour),
		T(test_all_lifts_budgets),
		T(test_min_threshold),
		T(test_min_threshold_burst),
		T(test_burst_does_not_lower_jank_threshold),
		T(test_budget_clock_stepped_back),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
