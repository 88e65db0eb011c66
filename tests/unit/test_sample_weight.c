// SPDX-License-Identifier: GPL-2.0-only
/* sample_weight.h: the sampling periods an on-CPU sample stands for, played through tasks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "jankwatch/sample_weight.h"

#define MS 1000000ULL
#define PERIOD (10 * MS)

/* What the BPF programs do to the thread's state as a task begins (begin_task()). */
static void task_begins(struct jw_task_state *s)
{
	s->samples = 0;
	s->switches = 0;
	jw_sample_task_begins(s);
}

/* A thread never seen before, beginning its first task. */
static void first_task(struct jw_task_state *s)
{
	memset(s, 0, sizeof(*s));
	task_begins(s);
}

/* An on-CPU sample at @now (on_sample()): its weight. */
static uint32_t on_cpu(struct jw_task_state *s, uint64_t now)
{
	uint32_t w = jw_sample_periods(s, now, PERIOD);

	s->samples++;
	return w;
}

/* The thread leaves the CPU and sleeps; the record of its sleep is sent as it wakes. */
static void sleeps(struct jw_task_state *s)
{
	s->switches++;
	s->samples++;
}

static void test_on_time_samples_count_one(void **state)
{
	struct jw_task_state s;
	uint64_t t;

	(void)state;
	first_task(&s);
	for (t = 1000 * MS; t < 1300 * MS; t += PERIOD)
		assert_int_equal(on_cpu(&s, t), 1);
	/* Early or on the same clock reading: still one. */
	assert_int_equal(on_cpu(&s, t - PERIOD / 2), 1);
	assert_int_equal(on_cpu(&s, t - PERIOD / 2), 1);
}

/* A vCPU stopped 95 ms while the thread ran: the sample after it stands for the periods missed. */
static void test_late_sample_counts_the_missed_periods(void **state)
{
	struct jw_task_state s;

	(void)state;
	first_task(&s);
	assert_int_equal(on_cpu(&s, 1000 * MS), 1);
	assert_int_equal(on_cpu(&s, 1010 * MS), 1);
	assert_int_equal(on_cpu(&s, 1105 * MS), 10);	/* 95 ms: rounded to 10 periods */
	assert_int_equal(on_cpu(&s, 1114 * MS), 1);
}

/* Off the CPU between two samples: the time is the sleep's record's, never the sample's. */
static void test_switch_between_counts_one(void **state)
{
	struct jw_task_state s;

	(void)state;
	first_task(&s);
	assert_int_equal(on_cpu(&s, 1000 * MS), 1);
	sleeps(&s);
	assert_int_equal(on_cpu(&s, 1300 * MS), 1);
	assert_int_equal(on_cpu(&s, 1310 * MS), 1);
}

/*
 * A task that sleeps first (a pipe's read), its first on-CPU sample as it wakes: one period,
 * not the time since the last on-CPU sample of an earlier task that switched as often. Each
 * task's one sample here came right as it woke, as a thread's own sampler may fire when the
 * thread is switched in: the weight once was the 2.7 s since three tasks before (arm64 6.12).
 */
static void test_first_sample_after_a_sleep_counts_one(void **state)
{
	struct jw_task_state s;
	uint64_t t = 1000 * MS;
	int task;

	(void)state;
	memset(&s, 0, sizeof(s));
	for (task = 0; task < 4; task++, t += 900 * MS) {
		task_begins(&s);
		sleeps(&s);
		assert_int_equal(on_cpu(&s, t + 300 * MS), 1);
	}
	/* The same with a sample before the sleep: the switch makes the one after it count one. */
	task_begins(&s);
	assert_int_equal(on_cpu(&s, t), 1);
	sleeps(&s);
	assert_int_equal(on_cpu(&s, t + 300 * MS), 1);
	assert_int_equal(on_cpu(&s, t + 340 * MS), 4);
}

/* No period (sampling off): one. */
static void test_no_period(void **state)
{
	struct jw_task_state s;

	(void)state;
	first_task(&s);
	assert_int_equal(jw_sample_periods(&s, 1000 * MS, 0), 1);
	assert_int_equal(jw_sample_periods(&s, 2000 * MS, 0), 1);
}

#define REPORT_MIN (150 * MS)

/* An on-CPU sample at @now, taken unless the task is younger than a period: its weight, or 0. */
static uint32_t on_cpu_kept(struct jw_task_state *s, uint64_t now, uint64_t report_min)
{
	if (jw_sample_skip_young(s, now, PERIOD, report_min))
		return 0;
	return on_cpu(s, now);
}

static void test_young_sample_skipped_and_carried(void **state)
{
	struct jw_task_state s;

	(void)state;
	first_task(&s);
	s.start_ns = 1000 * MS;
	/* 3 ms into the task: not taken; the next, a period later, stands for both. */
	assert_int_equal(on_cpu_kept(&s, 1003 * MS, REPORT_MIN), 0);
	assert_int_equal(on_cpu_kept(&s, 1013 * MS, REPORT_MIN), 2);
	assert_int_equal(on_cpu_kept(&s, 1023 * MS, REPORT_MIN), 1);
	/* A whole period in: taken. */
	task_begins(&s);
	s.start_ns = 2000 * MS;
	assert_int_equal(on_cpu_kept(&s, 2000 * MS + PERIOD, REPORT_MIN), 1);
}

static void test_young_carried_past_a_switch(void **state)
{
	struct jw_task_state s;

	(void)state;
	first_task(&s);
	s.start_ns = 1000 * MS;
	assert_int_equal(on_cpu_kept(&s, 1005 * MS, REPORT_MIN), 0);
	sleeps(&s);
	/* Back on the CPU 100 ms later: the first sample after the sleep, and the one skipped. */
	assert_int_equal(on_cpu_kept(&s, 1105 * MS, REPORT_MIN), 2);
}

static void test_young_dropped_with_its_task(void **state)
{
	struct jw_task_state s;

	(void)state;
	first_task(&s);
	s.start_ns = 1000 * MS;
	/* A 40 us task, sampled in its middle, ends: the next task owes nothing. */
	assert_int_equal(on_cpu_kept(&s, 1000 * MS + 20000, REPORT_MIN), 0);
	task_begins(&s);
	s.start_ns = 1001 * MS;
	assert_int_equal(on_cpu_kept(&s, 1001 * MS + PERIOD, REPORT_MIN), 1);
}

static void test_young_kept_under_a_low_threshold(void **state)
{
	struct jw_task_state s;

	(void)state;
	first_task(&s);
	s.start_ns = 1000 * MS;
	/* A threshold of one period or less: a task that young may be reported; all taken. */
	assert_int_equal(on_cpu_kept(&s, 1003 * MS, PERIOD), 1);
	assert_int_equal(on_cpu_kept(&s, 1004 * MS, 5 * MS), 1);
	/* A clock read before the task's recorded start (another CPU's): taken. */
	assert_int_equal(on_cpu_kept(&s, 999 * MS, REPORT_MIN), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_on_time_samples_count_one),
		cmocka_unit_test(test_late_sample_counts_the_missed_periods),
		cmocka_unit_test(test_switch_between_counts_one),
		cmocka_unit_test(test_first_sample_after_a_sleep_counts_one),
		cmocka_unit_test(test_no_period),
		cmocka_unit_test(test_young_sample_skipped_and_carried),
		cmocka_unit_test(test_young_carried_past_a_switch),
		cmocka_unit_test(test_young_dropped_with_its_task),
		cmocka_unit_test(test_young_kept_under_a_low_threshold),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
