// SPDX-License-Identifier: GPL-2.0-only
/* The preset table (what --loop takes, what each preset says without a process) and CPython's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "arch/arch.h"
#include "loops/preset_nginx.h"
#include "loops/presets.h"

/* --loop's names: auto, syscall, and the table's presets; nothing else. */
static void test_loop_names(void **state)
{
	static const char *const known[] = {
		"auto", "syscall", "qt", "android", "wayland", "pipewire", "gtk", "glib", "node",
		"libuv", "sd-event", "libev", "libevent", "nginx", "redis", "python",
	};
	char names[256];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		assert_true(jw_loop_known(known[i]));
	assert_false(jw_loop_known("qt5"));
	assert_false(jw_loop_known(""));
	assert_false(jw_loop_known("Glib"));
	jw_loop_names(names, sizeof(names));
	/* qt is a preset of two rows (Qt 5, Qt 6), named once */
	assert_string_equal(names, "auto, syscall, qt, android, wayland, pipewire, gtk, glib, node, "
			    "libuv, sd-event, libev, libevent, nginx, redis or python");
	assert_true(jw_loop_is_syscall("syscall"));
	assert_false(jw_loop_is_syscall("auto"));
}

/* What a raw capture's loop name gives back: the rule, the flags, the master's workers. */
static void test_by_name(void **state)
{
	struct jw_preset p;

	(void)state;
	assert_int_equal(jw_preset_by_name("glib", &p), 0);
	assert_non_null(p.handler_rule);
	assert_string_equal(p.handler_rule->dispatch, "g_main_context_dispatch");
	assert_false(p.handler_addr_is_data);
	assert_null(p.workers);
	assert_int_equal(jw_preset_by_name("python", &p), 0);
	assert_null(p.handler_rule);
	assert_true(p.handler_addr_is_data);
	assert_int_equal(jw_preset_by_name("nginx", &p), 0);
	assert_true(p.workers == jw_nginx_workers);
	assert_true(p.handler_rule->same_module);
	assert_int_equal(jw_preset_by_name("probe", &p), -ENOENT);
	assert_null(p.handler_rule);
	assert_string_equal(p.name, "probe");
}

/* This test program is no loop: auto falls back to syscall; a preset asked for says what lacks. */
static void test_detect_self(void **state)
{
	char exe[4096], why[512];
	struct jw_preset p;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	(void)state;
	assert_true(n > 0);
	exe[n] = '\0';
	assert_int_equal(jw_preset_detect(getpid(), exe, "auto", true, &p, why, sizeof(why)), 0);
	assert_string_equal(p.name, "syscall");
	assert_string_equal(why, "auto: no preset for this program");
	assert_int_equal(jw_preset_detect(getpid(), exe, "glib", true, &p, why, sizeof(why)), -ENOENT);
	assert_string_equal(p.name, "syscall");
	assert_non_null(strstr(why, "--loop glib: pid "));
	assert_non_null(strstr(why, " maps no libglib-2.0.so with g_main_context_dispatch"));
	assert_int_equal(jw_preset_detect(getpid(), exe, "redis", true, &p, why, sizeof(why)), -ENOENT);
	assert_non_null(strstr(why, "does not export aeMain, processCommand and call"));
	assert_int_equal(jw_preset_detect(getpid(), exe, "syscall", true, &p, why, sizeof(why)), 0);
	assert_string_equal(why, "as asked");
}

/*
 * The stack rules, on a stack from its root: the handler is the first named frame below the
 * dispatch function past the loop's own; for node, a JS frame its perf map names with its source
 * (not node's own JS, nor V8's builtins), and JS not named (code in no module or unnamed in
 * node's) or a library's code JS called ends the search.
 */
static void test_stack_rule(void **state)
{
	struct jw_preset node, glib;
	struct jw_frame f[] = {
		{ .symbol = "main", .module = "/usr/bin/node" },
		{ .symbol = "uv_run", .module = "/usr/bin/node" },
		{ .symbol = "uv__run_check", .module = "/usr/bin/node" },
		{ .kind = JW_FRAME_JIT, .symbol = "processImmediate", .src = "node:internal/timers:1" },
		{ .symbol = NULL, .module = NULL },			/* JS with no name */
		{ .symbol = "clock_gettime", .module = "/usr/lib/x86_64-linux-gnu/libc.so.6" },
	};
	size_t n = sizeof(f) / sizeof(f[0]);

	(void)state;
	assert_int_equal(jw_preset_by_name("node", &node), 0);
	assert_int_equal(jw_preset_by_name("glib", &glib), 0);
	assert_true(node.handler_rule->jit && !glib.handler_rule->jit);
	/* The unnamed JS ends node's search: clock_gettime is no handler. */
	assert_int_equal(jw_stack_rule_handler(node.handler_rule, f, n), -1);
	/* Named by the perf map, the program's JS is. */
	f[4] = (struct jw_frame){ .kind = JW_FRAME_JIT, .symbol = "onPosted", .src = "/a.js:3:1" };
	assert_int_equal(jw_stack_rule_handler(node.handler_rule, f, n), 4);
	/* V8's builtins, JIT code with no source (Node 22 runs them from copies), are passed. */
	f[3] = (struct jw_frame){ .kind = JW_FRAME_JIT, .symbol = "JSEntry" };
	assert_int_equal(jw_stack_rule_handler(node.handler_rule, f, n), 4);
	/* JS that nothing names, in the span libdwfl gives node's module, ends the search too. */
	f[4] = (struct jw_frame){ .module = "/usr/bin/node" };
	assert_int_equal(jw_stack_rule_handler(node.handler_rule, f, n), -1);
	/* Below JS (here Node 20's builtin, named in node), the C library is what JS called. */
	f[3] = (struct jw_frame){ .symbol = "Builtins_JSEntry", .module = "/usr/bin/node" };
	f[4] = (struct jw_frame){ .symbol = "v8::internal::Runtime_DateCurrentTime",
				  .module = "/usr/bin/node" };
	assert_int_equal(jw_stack_rule_handler(node.handler_rule, f, n), -1);
	/* Above any JS, a library's function is the handler (as an addon's callback would be). */
	f[3] = f[4];
	assert_int_equal(jw_stack_rule_handler(node.handler_rule, f, n), 5);
	/* GLib's rule passes frames it cannot name, to the first in another module. */
	f[1].symbol = "g_main_context_dispatch";
	f[3] = (struct jw_frame){ .symbol = NULL, .module = NULL };
	f[4] = f[3];
	assert_int_equal(jw_stack_rule_handler(glib.handler_rule, f, n), 5);
	/* No dispatch function on the stack: nothing. */
	f[1].symbol = "other";
	assert_int_equal(jw_stack_rule_handler(glib.handler_rule, f, 2), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loop_names),
		cmocka_unit_test(test_by_name),
		cmocka_unit_test(test_detect_self),
		cmocka_unit_test(test_stack_rule),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
