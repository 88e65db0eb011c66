// SPDX-License-Identifier: GPL-2.0-only
/* The one rule that names a task's handler (handler.h), step by step. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "process/preset.h"
#include "report/handler.h"

static struct jw_proc proc(void)
{
	struct jw_proc p = { .loop = "redis" };

	p.handlers[0] = "dispatch";
	p.handlers[1] = JW_WAIT_HANDLER;
	p.handlers[2] = "call";
	return p;
}

/* Nothing more known: the function hooked, the preset's inner one first. */
static void test_hooked(void **state)
{
	struct jw_proc p = proc();
	struct jw_handler_facts f = { .probe_id = 1 };
	char buf[64];

	(void)state;
	assert_string_equal(jw_handler_name(&p, &f, buf, sizeof(buf)), "syscall");
	f.inner_probe = 3;
	assert_string_equal(jw_handler_name(&p, &f, buf, sizeof(buf)), "call");
	assert_string_equal(jw_handler_hooked(&p, 1, 3, buf, sizeof(buf)), "call");
	assert_string_equal(jw_handler_hooked(&p, 0, 0, buf, sizeof(buf)), "dispatch");
	assert_string_equal(jw_handler_hooked(&p, 7, 0, buf, sizeof(buf)), "unknown");
	assert_string_equal(jw_handler_hooked(&p, JW_MAX_PROBES, 0, buf, sizeof(buf)), "unknown");
}

/* A C++ dispatch function hooked by its mangled name is named as C++ reads it. */
static void test_hooked_cxx(void **state)
{
	struct jw_proc p = proc();
	struct jw_handler_facts f = { .probe_id = 0 };
	char buf[64];

	(void)state;
	p.handlers[0] = "_ZN3app4LoopINS_3JobEE8dispatchERKS1_";
	assert_string_equal(jw_handler_name(&p, &f, buf, sizeof(buf)),
			    "app::Loop<app::Job>::dispatch(app::Job const&)");
	assert_string_equal(jw_handler_hooked(&p, 0, 0, buf, sizeof(buf)),
			    "app::Loop<app::Job>::dispatch(app::Job const&)");
}

/* The stacks' callback beats the hooked function; a code address beats the stacks. */
static void test_stacks_then_address(void **state)
{
	struct jw_proc p = proc();
	struct jw_handler_facts f = { .probe_id = 1, .from_stacks = "on_tick" };
	char buf[64];

	(void)state;
	assert_string_equal(jw_handler_name(&p, &f, buf, sizeof(buf)), "on_tick");
	/* No symbolizer: an address that cannot be named yields to the stacks' name ... */
	f.handler_addr = 0x4011d0;
	assert_string_equal(jw_handler_name(&p, &f, buf, sizeof(buf)), "on_tick");
	/* ... and with none, is shown as an address rather than the hooked function. */
	f.from_stacks = NULL;
	assert_string_equal(jw_handler_name(&p, &f, buf, sizeof(buf)), "0x4011d0");
	/* A handler address that is no code (a CPython code object) is never symbolized. */
	p.handler_addr_is_data = true;
	assert_string_equal(jw_handler_name(&p, &f, buf, sizeof(buf)), "syscall");
}

/* A name the kernel read from the target beats everything; it is made printable. */
static void test_read_name(void **state)
{
	struct jw_proc p = proc();
	char name[8] = { 'o', 'n', '_', 't', '\n', 'x', 'y', 'z' };	/* not NUL-terminated */
	char file[16] = "app.py";
	struct jw_handler_facts f = {
		.probe_id = 1, .inner_probe = 3, .handler_addr = 0x4011d0, .from_stacks = "cb",
		.name = name, .name_len = sizeof(name), .file = file, .file_len = sizeof(file),
		.line = 26,
	};
	char buf[64], small[8];

	(void)state;
	assert_string_equal(jw_handler_name(&p, &f, buf, sizeof(buf)), "on_t?xyz app.py:26");
	f.file_len = 0;
	assert_string_equal(jw_handler_name(&p, &f, buf, sizeof(buf)), "on_t?xyz");
	f.file_len = sizeof(file);
	/* A buffer too small cuts the name, never overflows. */
	assert_int_equal(strlen(jw_handler_name(&p, &f, small, sizeof(small))), sizeof(small) - 1);
	/* An empty name counts as none: the next rule (no symbolizer here: the stacks' name). */
	name[0] = '\0';
	assert_string_equal(jw_handler_name(&p, &f, buf, sizeof(buf)), "cb");
}

/* node's stacks name the JS handler: it beats the site's C++ callback, which names it else. */
static void test_stacks_over_site(void **state)
{
	struct jw_stack_rule rule = { .dispatch = "uv_run", .jit = true };
	struct jw_proc p = proc();
	struct jw_handler_facts f = { .probe_id = 1, .handler_addr = 0x4011d0,
				      .from_stacks = "onPosted" };
	char buf[64];

	(void)state;
	p.handler_rule = &rule;
	assert_string_equal(jw_handler_name(&p, &f, buf, sizeof(buf)), "onPosted");
	f.from_stacks = NULL;
	assert_string_equal(jw_handler_name(&p, &f, buf, sizeof(buf)), "0x4011d0");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hooked),
		cmocka_unit_test(test_hooked_cxx),
		cmocka_unit_test(test_stacks_then_address),
		cmocka_unit_test(test_stacks_over_site),
		cmocka_unit_test(test_read_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
