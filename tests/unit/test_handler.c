// SPDX-License-Identifier: GPL-2.0-only
/* The one rule that names a task's handler (handler.h), step by step. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "loops/preset.h"
#include "loops/preset_looper.h"
#include "report/handler.h"
#include "self_memory.h"

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

/* A frame of a tally's stacks: interned names, compared by pointer as the symbolizer's are. */
static struct jw_frame fr(const char *symbol, const char *module)
{
	return (struct jw_frame){ .kind = JW_FRAME_NATIVE, .symbol = symbol, .module = module };
}

/*
 * android's Looper: a message by its what (32 bits of the detail), as LooperStats names one; an
 * fd callback by its function (none here: the site hooked) and the fd's events.
 */
static void test_looper_names(void **state)
{
	struct jw_proc p = proc();
	struct jw_handler_facts f = { .probe_id = 1, .inner_probe = 4, .klass = 0x1000,
				      .detail = 0xdeadbeef0000002aULL };
	char buf[96];

	(void)state;
	p.names = JW_NAMES_LOOPER;
	p.handlers[3] = JW_LOOPER_MESSAGE;
	p.handlers[4] = JW_LOOPER_FD;
	assert_string_equal(jw_handler_name(&p, &f, buf, sizeof(buf)), "0x2a");
	f.inner_probe = 5;
	f.detail = 9;
	f.from_stacks = "clock_gettime";
	assert_string_equal(jw_handler_name(&p, &f, buf, sizeof(buf)),
			    "android::LooperCallback::handleEvent (EVENT_INPUT|EVENT_HANGUP)");
	/* No class read: the rule of the others (the stacks' handler). */
	f.klass = 0;
	assert_string_equal(jw_handler_name(&p, &f, buf, sizeof(buf)), "clock_gettime");
}

/* The handler seen in the most periods wins; a stack showing none counts for nothing. */
/*
 * sd-event: a source's description, read from the program's memory (here the test's own), is
 * the class; bytes that are no name (a destroyed source's freed description) are not.
 */
static void test_source_class(void **state)
{
	static const char description[] = "catalog-reindex", utf8[] = "d\xc3\xa9p\xc3\xb4t";
	static const char freed[] = { (char)0xc3, (char)0xa3, 'S', ']', 0x01, 0 };
	struct jw_proc p = proc();
	struct jw_handler_facts f = { .probe_id = 1, .inner_probe = 3 };
	char buf[64];

	(void)state;
	if (!reads_itself())
		skip();
	p.target.pid = getpid();
	p.names = JW_NAMES_SDEVENT;
	f.klass = (uintptr_t)description;
	assert_string_equal(jw_handler_class(&p, &f, buf, sizeof(buf)), "catalog-reindex");
	f.klass = (uintptr_t)utf8;
	assert_string_equal(jw_handler_class(&p, &f, buf, sizeof(buf)), utf8);
	f.klass = (uintptr_t)freed;
	assert_string_equal(jw_handler_class(&p, &f, buf, sizeof(buf)), "call");
	f.klass = 0;
	assert_string_equal(jw_handler_class(&p, &f, buf, sizeof(buf)), "call");
}

static void test_tally(void **state)
{
	static const char *const skip[] = { "g_", NULL };
	struct jw_stack_rule rule = { .dispatch = "g_main_dispatch", .skip = skip };
	const char *glib = "libglib", *app = "app";
	struct jw_frame a[] = { fr("main", app), fr("g_main_dispatch", glib),
				fr("g_timeout_dispatch", glib), fr("on_tick", app),
				fr("busy", app) };
	struct jw_frame b[] = { fr("main", app), fr("g_main_dispatch", glib),
				fr("on_light", app) };
	struct jw_frame none[] = { fr("main", app), fr("poll", "libc") };
	struct jw_handler_tally t = { 0 };

	(void)state;
	assert_null(jw_handler_tally_top(&t));
	jw_handler_tally_add(&t, &rule, none, 2, 50);
	assert_null(jw_handler_tally_top(&t));
	jw_handler_tally_add(&t, &rule, a, 5, 3);
	jw_handler_tally_add(&t, &rule, b, 3, 2);
	assert_string_equal(jw_handler_tally_top(&t), "on_tick");
	jw_handler_tally_add(&t, &rule, b, 3, 2);
	assert_string_equal(jw_handler_tally_top(&t), "on_light");
	assert_int_equal(t.n, 2);
	/* Equal counts: the first seen. */
	jw_handler_tally_add(&t, &rule, a, 5, 1);
	assert_string_equal(jw_handler_tally_top(&t), "on_tick");
}

/* Past JW_HANDLER_TALLY_MAX names, a new one is not counted; the known ones still are. */
static void test_tally_full(void **state)
{
	static char names[JW_HANDLER_TALLY_MAX + 1][16];
	struct jw_stack_rule rule = { .dispatch = "dispatch", .same_module = true };
	struct jw_frame s[2] = { fr("dispatch", "app") };
	struct jw_handler_tally t = { 0 };
	size_t i;

	(void)state;
	for (i = 0; i <= JW_HANDLER_TALLY_MAX; i++) {
		snprintf(names[i], sizeof(names[i]), "cb%zu", i);
		s[1] = fr(names[i], "app");
		jw_handler_tally_add(&t, &rule, s, 2, 1);
	}
	assert_int_equal(t.n, JW_HANDLER_TALLY_MAX);
	s[1] = fr(names[JW_HANDLER_TALLY_MAX], "app");
	jw_handler_tally_add(&t, &rule, s, 2, 100);
	assert_string_equal(jw_handler_tally_top(&t), "cb0");
	s[1] = fr(names[3], "app");
	jw_handler_tally_add(&t, &rule, s, 2, 5);
	assert_string_equal(jw_handler_tally_top(&t), "cb3");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hooked),
		cmocka_unit_test(test_hooked_cxx),
		cmocka_unit_test(test_stacks_then_address),
		cmocka_unit_test(test_stacks_over_site),
		cmocka_unit_test(test_read_name),
		cmocka_unit_test(test_source_class),
		cmocka_unit_test(test_looper_names),
		cmocka_unit_test(test_tally),
		cmocka_unit_test(test_tally_full),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
