// SPDX-License-Identifier: GPL-2.0-only
/* The hooks a dispatch probe or a wait function takes, in the order they are attached. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "attach/hookplan.h"

/* No file there: every hook stays at its offset (placement reads no code). */
#define NOFILE "/nonexistent/jw-hookplan"

static struct jw_dispatch_probe probe(void)
{
	return (struct jw_dispatch_probe){ .path = NOFILE, .entry_name = "dispatch",
					   .entry_offset = 0x1000, .pid = 7 };
}

static void test_session(void **state)
{
	struct jw_dispatch_probe p = probe();
	struct jw_hook h[JW_HOOKS_MAX];

	(void)state;
	assert_int_equal(jw_hookplan_dispatch(true, &p, h), 1);
	assert_int_equal(h[0].kind, JW_HOOK_SESSION);
	assert_int_equal(h[0].offset, 0x1000);
	assert_string_equal(h[0].name, "dispatch");
	assert_string_equal(jw_hook_kind_name(h[0].kind), "uprobe session");
}

/* Without sessions, or for a handler site: the return probe first, then the entry. */
static void test_pair(void **state)
{
	struct jw_dispatch_probe p = probe();
	struct jw_hook h[JW_HOOKS_MAX];

	(void)state;
	assert_int_equal(jw_hookplan_dispatch(false, &p, h), 2);
	assert_int_equal(h[0].kind, JW_HOOK_RETURN);
	assert_int_equal(h[1].kind, JW_HOOK_ENTRY);
	assert_int_equal(h[0].offset, 0x1000);
	assert_int_equal(h[1].offset, 0x1000);
	assert_string_equal(jw_hook_kind_name(h[0].kind), "return probe");
	assert_string_equal(jw_hook_kind_name(h[1].kind), "uprobe");
	p.site = true;
	assert_int_equal(jw_hookplan_dispatch(true, &p, h), 2);
	assert_int_equal(h[0].kind, JW_HOOK_RETURN);
}

/* An exit symbol: a uprobe on its entry ends the task; an exact site is never moved. */
static void test_exit_and_exact(void **state)
{
	struct jw_dispatch_probe p = probe();
	struct jw_hook h[JW_HOOKS_MAX];

	(void)state;
	p.exit_offset = 0x2000;
	p.exit_name = "dispatch_done";
	assert_int_equal(jw_hookplan_dispatch(true, &p, h), 2);
	assert_int_equal(h[0].kind, JW_HOOK_EXIT);
	assert_int_equal(h[0].offset, 0x2000);
	assert_string_equal(h[0].name, "dispatch_done");
	assert_int_equal(h[1].kind, JW_HOOK_ENTRY);
	assert_int_equal(h[1].offset, 0x1000);
	p.exact = p.site = true;
	jw_hookplan_dispatch(true, &p, h);
	assert_string_equal(h[0].why, "a handler site: where it is");
	assert_string_equal(h[1].why, "a handler site: where it is");
}

static void test_wait(void **state)
{
	struct jw_hook h[JW_HOOKS_MAX];

	(void)state;
	assert_int_equal(jw_hookplan_wait(true, NOFILE, "epoll_wait", 0x300, h), 1);
	assert_int_equal(h[0].kind, JW_HOOK_SESSION);
	assert_int_equal(jw_hookplan_wait(false, NOFILE, "epoll_wait", 0x300, h), 2);
	assert_int_equal(h[0].kind, JW_HOOK_ENTRY);
	assert_int_equal(h[1].kind, JW_HOOK_RETURN);
	assert_int_equal(h[1].offset, 0x300);
	assert_string_equal(h[1].path, NOFILE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_session),
		cmocka_unit_test(test_pair),
		cmocka_unit_test(test_exit_and_exact),
		cmocka_unit_test(test_wait),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
