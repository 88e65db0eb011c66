// SPDX-License-Identifier: GPL-2.0-only
/*
 * The capabilities a monitor needs (jw_caps_enough): which sets run, and the one line naming
 * what is missing; and this process's own set, against /proc/self/status.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "base/caps.h"

#define CAP(n) (1ULL << (n))

static bool enough(uint64_t effective, int last_cap, bool uprobes_allowed, char *err, size_t len)
{
	struct jw_capset c = { .effective = effective, .last_cap = last_cap };

	err[0] = '\0';
	return jw_caps_enough(&c, uprobes_allowed, err, len);
}

static void test_sets_that_run(void **state)
{
	char err[256];

	(void)state;
	/* Root's full set; CAP_SYS_ADMIN alone stands for CAP_BPF and CAP_PERFMON. */
	assert_true(enough(~0ULL, 40, false, err, sizeof(err)));
	assert_true(enough(CAP(JW_CAP_SYS_ADMIN), 40, false, err, sizeof(err)));
	/* A kernel that makes uprobes for CAP_PERFMON: the two suffice. */
	assert_true(enough(CAP(JW_CAP_BPF) | CAP(JW_CAP_PERFMON), 40, true, err, sizeof(err)));
	/* Before 5.8: CAP_SYS_ADMIN. */
	assert_true(enough(CAP(JW_CAP_SYS_ADMIN), 37, true, err, sizeof(err)));
	assert_string_equal(err, "");
}

static void test_missing_named(void **state)
{
	char err[256];

	(void)state;
	assert_false(enough(0, 40, true, err, sizeof(err)));
	assert_string_equal(err, "needs root or the capabilities CAP_BPF and CAP_PERFMON; missing: "
				 "CAP_BPF, CAP_PERFMON");
	assert_false(enough(CAP(JW_CAP_BPF), 40, true, err, sizeof(err)));
	assert_string_equal(err, "needs root or the capabilities CAP_BPF and CAP_PERFMON; missing: "
				 "CAP_PERFMON");
	assert_false(enough(CAP(JW_CAP_PERFMON) | CAP(JW_CAP_SYS_PTRACE), 40, true, err,
			    sizeof(err)));
	assert_string_equal(err, "needs root or the capabilities CAP_BPF and CAP_PERFMON; missing: "
				 "CAP_BPF");
	/* This kernel's uprobes take CAP_SYS_ADMIN. */
	assert_false(enough(CAP(JW_CAP_BPF) | CAP(JW_CAP_PERFMON), 40, false, err, sizeof(err)));
	assert_string_equal(err, "needs root or the capabilities CAP_BPF and CAP_PERFMON, and "
				 "CAP_SYS_ADMIN for this kernel's uprobes; missing: CAP_SYS_ADMIN");
	assert_false(enough(0, 40, false, err, sizeof(err)));
	assert_non_null(strstr(err, "missing: CAP_BPF, CAP_PERFMON, CAP_SYS_ADMIN"));
	/* Before 5.8 CAP_BPF means nothing. */
	assert_false(enough(CAP(JW_CAP_BPF) | CAP(JW_CAP_PERFMON), 37, true, err, sizeof(err)));
	assert_string_equal(err, "needs root or CAP_SYS_ADMIN (this kernel has no CAP_BPF nor "
				 "CAP_PERFMON)");
	/* Never more than one line, whatever the buffer. */
	assert_false(enough(0, 40, false, err, 16));
	assert_int_equal(strlen(err), 15);
}

/* Another user's process: ptrace's read access and the owner-only /proc files. */
static void test_other_user(void **state)
{
	struct jw_capset c = { .last_cap = 40 };
	char missing[64];

	(void)state;
	jw_caps_for_other_user(&c, missing, sizeof(missing));
	assert_string_equal(missing, "CAP_SYS_PTRACE, CAP_DAC_READ_SEARCH");
	c.effective = CAP(JW_CAP_SYS_PTRACE);
	jw_caps_for_other_user(&c, missing, sizeof(missing));
	assert_string_equal(missing, "CAP_DAC_READ_SEARCH");
	c.effective = CAP(JW_CAP_DAC_OVERRIDE);
	jw_caps_for_other_user(&c, missing, sizeof(missing));
	assert_string_equal(missing, "CAP_SYS_PTRACE");
	c.effective = CAP(JW_CAP_SYS_PTRACE) | CAP(JW_CAP_DAC_READ_SEARCH);
	jw_caps_for_other_user(&c, missing, sizeof(missing));
	assert_string_equal(missing, "");
}

/* The set capget() gives is the CapEff line of /proc/self/status. */
static void test_own_set(void **state)
{
	unsigned long long eff = 0;
	struct jw_capset c;
	char line[256];
	FILE *f;

	(void)state;
	f = fopen("/proc/self/status", "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	fclose(f);
	assert_int_equal(jw_caps_own(&c), 0);
	assert_int_equal(c.effective, eff);
	assert_true(c.last_cap >= JW_CAP_BPF);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sets_that_run),
		cmocka_unit_test(test_missing_named),
		cmocka_unit_test(test_other_user),
		cmocka_unit_test(test_own_set),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
