// SPDX-License-Identifier: GPL-2.0-only
/*
 * What a run lost, said: nothing when nothing was lost, one line per kind otherwise, the runs the
 * kernel skipped named by program, and what a skipped scheduler run means for the off-CPU split.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "report/lost.h"
#include "buf_fixture.h"

static void miss(struct jw_lost *l, const char *prog, uint64_t runs)
{
	struct jw_prog_misses *m = &l->misses;

	snprintf(m->prog[m->n].name, sizeof(m->prog[0].name), "%s", prog);
	m->prog[m->n++].runs = runs;
	m->total += runs;
	m->counted = true;
}

static void test_nothing_lost(void **state)
{
	struct jw_buf *b = *state;
	struct jw_lost l = { 0 };

	miss(&l, "on_sched_switch", 0);
	assert_int_equal(jw_lost_lines(&l, b), 0);
	assert_int_equal(b->len, 0);
}

static void test_skipped_runs(void **state)
{
	struct jw_buf *b = *state;
	struct jw_lost l = { 0 };

	miss(&l, "dispatch_session", 0);
	miss(&l, "on_sched_waking", 3);
	miss(&l, "on_sample", 1);
	assert_int_equal(jw_lost_lines(&l, b), 1);
	assert_string_equal(b->data, "the kernel skipped 4 runs of jankwatch's programs (one was "
			    "already running on that CPU: on_sched_waking 3, on_sample 1): a task's "
			    "off-CPU split may have missed a context switch\n");
}

static void test_one_line_each(void **state)
{
	struct jw_buf *b = *state;
	struct jw_lost l = { 0 };

	l.drops[JW_DROP_TRACE] = 2;
	l.drops[JW_DROP_SAMPLE] = 5;
	miss(&l, "dispatch_session", 1);
	assert_int_equal(jw_lost_lines(&l, b), 3);
	assert_string_equal(b->data,
			    "trace logs might be incomplete: lost 2 scheduler events (ring buffer "
			    "full), 0 (trace buffers full)\n"
			    "output might be incomplete: lost 0 task records, 5 samples (ring buffer "
			    "full), 0 thread states, 0 samples (memory), 0 file writes\n"
			    "the kernel skipped 1 run of jankwatch's programs (one was already running "
			    "on that CPU: dispatch_session 1)\n");
}

/* Switches the kernel kept from the scheduler's program: the tasks' events say so. */
static void test_switches_unseen(void **state)
{
	struct jw_buf *b = *state;
	struct jw_lost l = { 0 };

	l.drops[JW_DROP_SWITCH] = 2;
	assert_int_equal(jw_lost_lines(&l, b), 1);
	assert_string_equal(b->data, "the kernel kept 2 context switches of watched threads inside "
			    "tasks from jankwatch: a jank's time off the CPU then comes from the "
			    "kernel's counts, where it slept only from a switch out seen "
			    "(offcpu_partial in its event)\n");
}

/* Sleeps that ended with no wakeup seen: their events' waker is null, the summary says why. */
static void test_wakings_unseen(void **state)
{
	struct jw_buf *b = *state;
	struct jw_lost l = { 0 };

	l.drops[JW_DROP_WAKING] = 1;
	assert_int_equal(jw_lost_lines(&l, b), 1);
	assert_string_equal(b->data, "1 sleep of watched threads inside tasks ended with no wakeup "
			    "seen (a program's run skipped, or the kernel kept it from tracing): what "
			    "woke it is not known (waker null in its event)\n");
	jw_buf_reset(b);
	l.drops[JW_DROP_WAKING] = 3;
	assert_int_equal(jw_lost_lines(&l, b), 1);
	assert_non_null(strstr(b->data, "3 sleeps of watched threads"));
	assert_non_null(strstr(b->data, "what woke them is not known"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_nothing_lost, buf_setup, buf_teardown),
		cmocka_unit_test_setup_teardown(test_skipped_runs, buf_setup, buf_teardown),
		cmocka_unit_test_setup_teardown(test_one_line_each, buf_setup, buf_teardown),
		cmocka_unit_test_setup_teardown(test_switches_unseen, buf_setup, buf_teardown),
		cmocka_unit_test_setup_teardown(test_wakings_unseen, buf_setup, buf_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
