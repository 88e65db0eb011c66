// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of the followed processes' table: lookups through collisions and deletions, the
 * look schedule of a pending process, the counts, a full table, a storm of short processes.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "process/proctree.h"

#define MS 1000000ULL

static int setup(void **state)
{
	*state = jw_proctree__new(64);
	return *state ? 0 : -1;
}

static int teardown(void **state)
{
	jw_proctree__free(*state);
	return 0;
}

static size_t due(struct jw_proctree *t, uint64_t now, pid_t *pids, uint64_t *next)
{
	return jw_proctree__due(t, now, pids, 64, next);
}

/*
 * A forked child is looked at at once, then every 50 ms for its first 5 s, every 250 ms up to
 * 30 s, then once a second.
 */
static void test_look_schedule(void **state)
{
	struct jw_proctree *t = *state;
	uint64_t next, born = 1000 * MS, now = born;
	struct jw_pentry *e = jw_proctree__add(t, 100, 7, JW_PWHY_FORKED, 99, born);
	pid_t pids[64];
	uint32_t looks = 0;

	assert_non_null(e);
	assert_int_equal(e->parent, 99);
	assert_int_equal(e->start_boot_ns, 7);
	assert_int_equal(due(t, now, pids, &next), 1);
	assert_int_equal(pids[0], 100);
	while (now < born + 40000 * MS) {
		uint64_t age = now - born, want = age < 5000 * MS ? 50 : age < 30000 * MS ? 250 : 1000;

		jw_proctree__later(t, e, false, now);
		looks++;
		assert_int_equal(due(t, now + want * MS - 1, pids, &next), 0);
		assert_int_equal(next, now + want * MS);
		now += want * MS;
		assert_int_equal(due(t, now, pids, &next), 1);
	}
	/* 100 looks in the first 5 s, 100 more up to 30 s, 10 in the last 10 s. */
	assert_int_equal(e->looks, looks);
	assert_int_equal(looks, 210);
	assert_int_equal(e->failures, 0);
	jw_proctree__later(t, e, true, now);
	assert_int_equal(e->failures, 1);
}

/* Watched or parked: never due. An exec makes a watched process pending again, at once. */
static void test_watched_then_exec(void **state)
{
	struct jw_proctree *t = *state;
	struct jw_pentry *a = jw_proctree__add(t, 10, 1, JW_PWHY_FOUND, 0, 0);
	struct jw_pentry *b = jw_proctree__add(t, 11, 1, JW_PWHY_FOUND, 0, 0);
	uint64_t next;
	pid_t pids[64];

	jw_proctree__watched(t, a);
	jw_proctree__parked(t, b);
	assert_int_equal(due(t, 5 * MS, pids, &next), 0);
	assert_int_equal(next, UINT64_MAX);
	jw_proctree__later(t, a, false, 0);	/* looks counted before: reset by the exec */
	jw_proctree__exec(t, a, 9 * MS);
	assert_false(a->watched);
	assert_int_equal(a->why, JW_PWHY_EXECED);
	assert_int_equal(a->looks, 0);
	assert_int_equal(due(t, 9 * MS, pids, &next), 1);
	assert_int_equal(pids[0], 10);
	assert_int_equal(jw_proctree__counts(t)->execs, 1);
	assert_int_equal(jw_proctree__counts(t)->watched, 1);
}

/* Exits: counted, and those never watched apart. A pid not followed is ignored. */
/*
 * --name: a process that takes a watched name is followed by it; one parked for its children
 * (it ran no loop) is looked at again, one watched already stays watched; both counted.
 */
static void test_named(void **state)
{
	struct jw_proctree *t = *state;
	struct jw_pentry *a = jw_proctree__add(t, 10, 0, JW_PWHY_NAMED, 0, 0);
	struct jw_pentry *b, *c;
	uint64_t next;
	pid_t pids[64];

	assert_non_null(a);
	assert_int_equal(jw_proctree__counts(t)->named, 1);
	b = jw_proctree__add(t, 11, 0, JW_PWHY_FOUND, 0, 0);
	c = jw_proctree__add(t, 12, 0, JW_PWHY_FOUND, 0, 0);
	a = jw_proctree__get(t, 10);
	jw_proctree__watched(t, a);
	jw_proctree__parked(t, b);
	jw_proctree__watched(t, c);
	assert_int_equal(due(t, 5 * MS, pids, &next), 0);
	jw_proctree__named(t, b, 7 * MS);
	jw_proctree__named(t, c, 7 * MS);
	assert_int_equal(b->why, JW_PWHY_NAMED);
	assert_false(b->watched);
	assert_true(c->watched);
	assert_int_equal(due(t, 7 * MS, pids, &next), 1);
	assert_int_equal(pids[0], 11);
	assert_int_equal(jw_proctree__counts(t)->named, 3);
}

static void test_exit_counts(void **state)
{
	struct jw_proctree *t = *state;
	const struct jw_proctree_counts *c = jw_proctree__counts(t);

	jw_proctree__watched(t, jw_proctree__add(t, 20, 1, JW_PWHY_FORKED, 1, 0));
	jw_proctree__add(t, 21, 1, JW_PWHY_FORKED, 1, 0);
	jw_proctree__add(t, 22, 1, JW_PWHY_EXECED, 0, 0);
	jw_proctree__remove(t, 20, true);
	jw_proctree__remove(t, 21, true);
	jw_proctree__remove(t, 22, false);
	jw_proctree__remove(t, 23, true);
	assert_int_equal(c->forked, 2);
	assert_int_equal(c->execs, 1);
	assert_int_equal(c->exited, 2);
	assert_int_equal(c->exited_unwatched, 1);
	assert_int_equal(jw_proctree__size(t), 0);
	assert_null(jw_proctree__get(t, 20));
}

/* Full: the next new pid is counted and refused; a pid already there is replaced in place. */
static void test_full(void **state)
{
	struct jw_proctree *t = *state;
	pid_t pid;

	for (pid = 1; pid <= 64; pid++)
		assert_non_null(jw_proctree__add(t, pid, pid, JW_PWHY_FORKED, 0, 0));
	assert_null(jw_proctree__add(t, 65, 1, JW_PWHY_FORKED, 0, 0));
	assert_int_equal(jw_proctree__counts(t)->full, 1);
	assert_non_null(jw_proctree__add(t, 7, 700, JW_PWHY_FORKED, 0, 0));
	assert_int_equal(jw_proctree__get(t, 7)->start_boot_ns, 700);
	assert_int_equal(jw_proctree__size(t), 64);
	assert_null(jw_proctree__add(t, 0, 1, JW_PWHY_FORKED, 0, 0));
}

/* A full table's clusters, every third pid removed: every remaining one is still found. */
static void test_collisions(void **state)
{
	struct jw_proctree *t = *state;
	pid_t pid;

	for (pid = 1000; pid < 1064; pid++)
		assert_non_null(jw_proctree__add(t, pid, 1, JW_PWHY_FORKED, 0, 0));
	for (pid = 1000; pid < 1064; pid += 3)
		jw_proctree__remove(t, pid, true);
	for (pid = 1000; pid < 1064; pid++) {
		struct jw_pentry *e = jw_proctree__get(t, pid);

		if ((pid - 1000) % 3 == 0)
			assert_null(e);
		else
			assert_true(e && e->pid == pid);
	}
}

/* A storm: 100000 short processes come and go through a table of 64; nothing is lost. */
static void test_storm(void **state)
{
	struct jw_proctree *t = *state;
	const struct jw_proctree_counts *c = jw_proctree__counts(t);
	uint32_t seed = 1;
	pid_t live[32] = { 0 };
	int i, j;

	for (i = 0; i < 100000; i++) {
		size_t k = (seed = seed * 1103515245 + 12345) >> 16 & 31;

		if (live[k])
			jw_proctree__remove(t, live[k], true);
		live[k] = 300 + (seed >> 8) % 4000000;
		while (jw_proctree__get(t, live[k]))
			live[k]++;
		/* Its start time: its own number, to tell the entries apart. */
		assert_non_null(jw_proctree__add(t, live[k], i, JW_PWHY_FORKED, 1, 0));
		/* Every live one is still found, with its own entry. */
		for (j = 0; j < 32; j++) {
			struct jw_pentry *e = jw_proctree__get(t, live[j]);

			if (!live[j])
				continue;
			assert_non_null(e);
			assert_int_equal(e->pid, live[j]);
		}
		assert_int_equal(jw_proctree__get(t, live[k])->start_boot_ns, i);
	}
	assert_int_equal(jw_proctree__size(t), 32);
	for (i = 0; i < 32; i++)
		assert_int_equal(jw_proctree__get(t, live[i])->pid, live[i]);
	assert_int_equal(c->forked, 100000);
	assert_int_equal(c->exited, 100000 - 32);
	assert_int_equal(c->full, 0);
}

static void count_one(struct jw_pentry *e, void *ctx)
{
	(void)e;
	(*(int *)ctx)++;
}

/* Due: at most @max, and the rest shows in next (now or earlier). each() visits all. */
static void test_due_max(void **state)
{
	struct jw_proctree *t = *state;
	pid_t pids[4];
	uint64_t next;
	int n = 0;
	pid_t pid;

	for (pid = 1; pid <= 10; pid++)
		jw_proctree__add(t, pid, 1, JW_PWHY_FORKED, 0, 5 * MS);
	assert_int_equal(jw_proctree__due(t, 5 * MS, pids, 4, &next), 4);
	assert_true(next <= 5 * MS);
	jw_proctree__each(t, count_one, &n);
	assert_int_equal(n, 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_look_schedule, setup, teardown),
		cmocka_unit_test_setup_teardown(test_watched_then_exec, setup, teardown),
		cmocka_unit_test_setup_teardown(test_named, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exit_counts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_full, setup, teardown),
		cmocka_unit_test_setup_teardown(test_collisions, setup, teardown),
		cmocka_unit_test_setup_teardown(test_storm, setup, teardown),
		cmocka_unit_test_setup_teardown(test_due_max, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
