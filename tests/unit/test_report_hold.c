// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests of the reports held for debug files: copies that outlive the originals, in order. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "report/report_hold.h"

/* A sample record with @stack bytes of stack after it, marked with @mark. */
static struct jw_sample_rec *sample(uint32_t stack, uint8_t mark)
{
	size_t size = sizeof(struct jw_sample_rec) + stack;
	struct jw_sample_rec *s = calloc(1, size);

	assert_non_null(s);
	s->hdr.size = (uint32_t)size;
	s->stack_size = stack;
	s->weight = mark;
	memset(s->stack, mark, stack);
	return s;
}

static void test_copies(void **state)
{
	struct jw_hold h = { 0 };
	struct jw_proc proc = { 0 };
	struct jw_task_rec t = { .seq = 7, .start_ns = 100, .end_ns = 400 };
	struct jw_task_facts facts = { .pid = 42, .group = "busy<-main", .triaged = true };
	void *samples[2] = { sample(64, 1), sample(4096, 2) };
	struct jw_held out;
	const struct jw_sample_rec *s;

	(void)state;
	assert_int_equal(jw_hold_add(&h, &proc, &t, samples, 2, &facts, 5000, 99), 0);
	/* The originals go (the sample buffer is cleared after each task). */
	memset(samples[1], 0, sizeof(struct jw_sample_rec));
	free(samples[0]);
	free(samples[1]);
	t.seq = 0;
	assert_int_equal(h.n, 1);
	jw_hold_take(&h, 0, &out);
	assert_int_equal(h.n, 0);
	assert_ptr_equal(out.proc, &proc);
	assert_int_equal(out.task.seq, 7);
	assert_int_equal(out.time_ms, 5000);
	assert_int_equal(out.deadline_ns, 99);
	assert_int_equal(out.facts.pid, 42);
	assert_true(out.facts.triaged);
	/* The group is named again when it is written. */
	assert_null(out.facts.group);
	assert_int_equal(out.n, 2);
	s = out.samples[1];
	assert_int_equal(s->stack_size, 4096);
	assert_int_equal(s->weight, 2);
	assert_int_equal(s->stack[4095], 2);
	jw_held_free(&out);
	assert_null(out.samples);
}

static void test_full_and_order(void **state)
{
	struct jw_hold h = { 0 };
	struct jw_proc proc = { 0 };
	struct jw_task_facts facts = { 0 };
	struct jw_held out;
	size_t i;

	(void)state;
	for (i = 0; i < JW_HOLD_MAX; i++) {
		struct jw_task_rec t = { .seq = i };

		assert_int_equal(jw_hold_add(&h, &proc, &t, NULL, 0, &facts, i, i), 0);
	}
	{
		struct jw_task_rec t = { .seq = 999 };

		assert_int_equal(jw_hold_add(&h, &proc, &t, NULL, 0, &facts, 0, 0), -ENOSPC);
	}
	/* Taken from the middle, the rest keep their order. */
	jw_hold_take(&h, 3, &out);
	assert_int_equal(out.task.seq, 3);
	jw_held_free(&out);
	for (i = 0; h.n; i++) {
		jw_hold_take(&h, 0, &out);
		assert_int_equal(out.task.seq, i < 3 ? i : i + 1);
		jw_held_free(&out);
	}
	assert_int_equal(i, JW_HOLD_MAX - 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_copies),
		cmocka_unit_test(test_full_and_order),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
