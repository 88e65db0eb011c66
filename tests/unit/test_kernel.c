// SPDX-License-Identifier: GPL-2.0-only
/* The kernel floor: the first feature missing is named with the release that has it. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "attach/kernel.h"

static int answer(const struct jw_kernel_feature *f)
{
	return f->id;
}

static void test_first_missing_named(void **state)
{
	static const struct jw_kernel_feature table[] = {
		{ "BPF ring buffer maps", "5.8", answer, 1 },
		{ "BPF helper bpf_find_vma", "5.17", answer, 0 },
		{ "BPF helper bpf_loop", "5.17", answer, 0 },
	};
	char err[256];

	(void)state;
	assert_int_equal(jw_kernel_check_table(table, 3, "5.15.0-91-generic", err, sizeof(err)),
			 -EOPNOTSUPP);
	assert_string_equal(err, "this kernel (5.15.0-91-generic) lacks BPF helper bpf_find_vma, "
			    "which jankwatch needs: Linux 5.17 or newer has it");
}

/* Present, or a probe that cannot tell (not root: the load will say why): no refusal. */
static void test_present_or_unknown(void **state)
{
	static const struct jw_kernel_feature table[] = {
		{ "BPF ring buffer maps", "5.8", answer, 1 },
		{ "BPF helper bpf_find_vma", "5.17", answer, -EPERM },
	};
	char err[256] = "";

	(void)state;
	assert_int_equal(jw_kernel_check_table(table, 2, "6.1.0-56-amd64", err, sizeof(err)), 0);
	assert_string_equal(err, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_missing_named),
		cmocka_unit_test(test_present_or_unknown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
