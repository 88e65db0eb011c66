// SPDX-License-Identifier: GPL-2.0-only
/* C++ symbols demangled; everything else left alone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "base/demangle.h"

static void test_cxx_names(void **state)
{
	char buf[256];

	(void)state;
	/* A namespaced class template's method, a free function with arguments, a constructor. */
	assert_true(jw_demangle("_ZN2ns3FooIiE3barEv", buf, sizeof(buf)));
	assert_string_equal(buf, "ns::Foo<int>::bar()");
	assert_true(jw_demangle("_Z7processRKSt6vectorIiSaIiEEi", buf, sizeof(buf)));
	assert_string_equal(buf, "process(std::vector<int, std::allocator<int> > const&, int)");
	assert_true(jw_demangle("_ZN4node11Environment3RunEv", buf, sizeof(buf)));
	assert_string_equal(buf, "node::Environment::Run()");
	/* A clone the compiler made keeps its suffix. */
	assert_true(jw_demangle("_Z4workv.cold", buf, sizeof(buf)));
	assert_string_equal(buf, "work() [clone .cold]");
}

static void test_left_alone(void **state)
{
	char buf[64] = "untouched";

	(void)state;
	assert_false(jw_demangle("busy_work", buf, sizeof(buf)));
	assert_false(jw_demangle("main", buf, sizeof(buf)));
	/* "i" would demangle as a type (int): only _Z names are taken. */
	assert_false(jw_demangle("i", buf, sizeof(buf)));
	assert_false(jw_demangle("_Z", buf, sizeof(buf)));
	assert_false(jw_demangle("_ZN2ns3Foo", buf, sizeof(buf)));	/* cut short */
	assert_false(jw_demangle("_Zgarbage!", buf, sizeof(buf)));
	assert_false(jw_demangle(NULL, buf, sizeof(buf)));
	assert_false(jw_demangle("_ZN2ns3FooIiE3barEv", buf, 0));
	assert_string_equal(buf, "untouched");
}

static void test_cut_to_fit(void **state)
{
	char buf[8];

	(void)state;
	assert_true(jw_demangle("_ZN2ns3FooIiE3barEv", buf, sizeof(buf)));
	assert_string_equal(buf, "ns::Foo");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cxx_names),
		cmocka_unit_test(test_left_alone),
		cmocka_unit_test(test_cut_to_fit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
