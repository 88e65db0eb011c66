// SPDX-License-Identifier: GPL-2.0-only
/* samplermode.c: one sampler per watched thread or one per CPU, by the threads' switch rate. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "attach/samplermode.h"

static struct jw_sampler_rates rates(double switches, unsigned int cpus)
{
	return (struct jw_sampler_rates){ .switches = switches, .cpus = cpus, .period_ms = 10 };
}

static void test_firings(void **state)
{
	struct jw_sampler_rates r = rates(0, 8);

	(void)state;
	assert_true(jw_samplers_cpu_firings(&r) == 800.0);
	r.period_ms = 1;
	assert_true(jw_samplers_cpu_firings(&r) == 8000.0);
	r.period_ms = 0;
	assert_true(jw_samplers_cpu_firings(&r) == 0.0);
}

/* A server loop serving one client (redis: two switches a request): the CPUs', with the figures. */
static void test_busy_loop_takes_cpu_samplers(void **state)
{
	struct jw_sampler_rates r = rates(34000, 2);
	char why[192];

	(void)state;
	assert_true(jw_samplers_per_cpu(&r, false, why, sizeof(why)));
	assert_non_null(strstr(why, "34000 switches a second"));
	assert_non_null(strstr(why, "200 firings"));
	assert_non_null(strstr(why, "2 CPUs, every 10 ms"));
}

/* An idle UI loop, or one rendering frames, on a device's 8 CPUs: its own sampler. */
static void test_idle_loop_keeps_its_own(void **state)
{
	struct jw_sampler_rates idle = rates(3, 8), frames = rates(600, 8);
	char why[192];

	(void)state;
	assert_false(jw_samplers_per_cpu(&idle, false, why, sizeof(why)));
	assert_false(jw_samplers_per_cpu(&frames, false, why, sizeof(why)));
	assert_non_null(strstr(why, "800 firings"));
}

/* The margins: between half and twice the firings, the kind in force stays, either way. */
static void test_margins(void **state)
{
	char why[192];
	/* 2 CPUs every 10 ms: 200 firings a second. */
	struct jw_sampler_rates under = rates(99, 2), half = rates(100, 2), mid = rates(250, 2),
				twice = rates(400, 2), below_twice = rates(399, 2);

	(void)state;
	assert_false(jw_samplers_per_cpu(&below_twice, false, why, sizeof(why)));
	assert_true(jw_samplers_per_cpu(&twice, false, why, sizeof(why)));
	assert_false(jw_samplers_per_cpu(&mid, false, why, sizeof(why)));
	assert_true(jw_samplers_per_cpu(&mid, true, why, sizeof(why)));
	assert_true(jw_samplers_per_cpu(&half, true, why, sizeof(why)));
	assert_false(jw_samplers_per_cpu(&under, true, why, sizeof(why)));
}

/* No period, no firings: never the CPUs'. A short buffer is cut, not overrun. */
static void test_edges(void **state)
{
	struct jw_sampler_rates r = rates(100000, 2);
	char why[16];

	(void)state;
	r.period_ms = 0;
	assert_false(jw_samplers_per_cpu(&r, false, why, sizeof(why)));
	assert_int_equal(strlen(why), sizeof(why) - 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_firings),
		cmocka_unit_test(test_busy_loop_takes_cpu_samplers),
		cmocka_unit_test(test_idle_loop_keeps_its_own),
		cmocka_unit_test(test_margins),
		cmocka_unit_test(test_edges),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
