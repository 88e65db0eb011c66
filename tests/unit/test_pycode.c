// SPDX-License-Identifier: GPL-2.0-only
/*
 * Python frames: lines from CPython's location tables (real ones, made by 3.11 and 3.13 from the
 * same function, with what co_lines() says of each instruction), and the splicing of a sample's
 * Python frames into its native stack for both ways a version marks its calls.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "stacks/pycode.h"
#include "stacks/stacks.h"

static size_t unhex(const char *hex, uint8_t *out)
{
	size_t n = 0;
	unsigned int b;

	while (hex[0] && hex[1] && sscanf(hex, "%2x", &b) == 1) {
		out[n++] = b;
		hex += 2;
	}
	return n;
}

struct range {
	unsigned int start, end, line;	/* code units [start, end) on line */
};

static void check_table(const char *hex, uint32_t first, const struct range *r, size_t n)
{
	uint8_t t[256];
	size_t len = unhex(hex, t), i;
	unsigned int u;

	for (i = 0; i < n; i++)
		for (u = r[i].start; u < r[i].end; u++)
			assert_int_equal(jw_py_line(t, len, first, u), r[i].line);
	/* Past the table, and an empty one: the first line. */
	assert_int_equal(jw_py_line(t, len, first, 10000), first);
	assert_int_equal(jw_py_line(t, 0, first, 0), first);
}

/* def f(a): on line 2, eight lines of assignments, a comprehension, a tuple over two lines. */
static void test_line_311(void **state)
{
	static const struct range r[] = {
		{ 0, 1, 2 }, { 1, 5, 3 }, { 5, 6, 3 }, { 6, 12, 5 }, { 12, 14, 6 }, { 14, 28, 7 },
		{ 28, 37, 6 }, { 37, 38, 8 }, { 38, 39, 9 }, { 39, 41, 8 }, { 41, 43, 10 },
	};

	(void)state;
	check_table("8000d80809884189058041e00708883182758075f002011023f000011023dd191e987199189c18f0"
		    "03011023f100011023f400011023f000010923e0090ad8090af00301090c8041e00b0c8048",
		    2, r, sizeof(r) / sizeof(r[0]));
}

static void test_line_313(void **state)
{
	/* 48-50 has no location in 3.13's table: it keeps the line before it (10). */
	static const struct range r[] = {
		{ 0, 1, 2 }, { 1, 6, 3 }, { 6, 12, 5 }, { 12, 23, 7 }, { 23, 27, 6 }, { 27, 30, 7 },
		{ 30, 37, 6 }, { 37, 39, 7 }, { 39, 42, 6 }, { 42, 43, 8 }, { 43, 44, 9 },
		{ 44, 46, 8 }, { 46, 50, 10 }, { 50, 53, 6 },
	};

	(void)state;
	check_table("8000d80809884189058041e0070888318375e4191e98719c18f303011023d919219041f00300111"
		    "290419405d91921f103011023f000010923e0090ad8090af00301090c8041e00b0c8048f9f2090110"
		    "23", 2, r, sizeof(r) / sizeof(r[0]));
}

/* A table cut short or full of junk stops where it can: never past its end. */
static void test_line_damaged(void **state)
{
	uint8_t t[] = { 0xf0, 0x7f, 0x7f, 0x7f, 0x7f };	/* a long form whose varints never end */
	uint8_t junk[64];
	size_t i;

	(void)state;
	assert_int_equal(jw_py_line(t, sizeof(t), 7, 3), 7);
	for (i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)(i * 37 + 11);
	(void)jw_py_line(junk, sizeof(junk), 1, 5);
}

/* The namer of the splice tests: code k names "pyK"; code 99 cannot be named. */
static bool fake_name(void *ctx, const struct jw_py_frame *f, struct jw_frame *out)
{
	static char names[8][8];

	(void)ctx;
	if (f->code >= 8 * 16 || f->code / 16 == 99 / 16 + 10)
		return false;
	snprintf(names[f->code / 16], sizeof(names[0]), "py%u", (unsigned int)(f->code / 16));
	*out = (struct jw_frame){ .kind = JW_FRAME_PYTHON, .pc = f->code, .rel_pc = f->instr,
				  .symbol = names[f->code / 16] };
	return true;
}

/* The evaluation frames of the splice tests: by name, or ELF address 0x500-0x5ff of "/py". */
static bool fake_is_eval(void *ctx, const struct jw_frame *fr)
{
	(void)ctx;
	return (fr->symbol && !strcmp(fr->symbol, JW_PY_EVAL_FUNCTION)) ||
	       (fr->module && !strcmp(fr->module, "/py") && fr->rel_pc >= 0x500 &&
		fr->rel_pc < 0x600);
}

static const struct jw_py_splice splice_311 = { false, fake_is_eval, fake_name, NULL };
static const struct jw_py_splice splice_own = { true, fake_is_eval, fake_name, NULL };

static void check_names(const struct jw_frame *fr, size_t n, const char *const *want)
{
	size_t i;

	for (i = 0; i < n; i++)
		assert_string_equal(fr[i].symbol, want[i]);
	assert_null(want[n]);
}

#define CODE(k) ((uint64_t)(k) * 16)

/* 3.11: each call's first Python frame is marked; the k-th call from the leaf, the k-th eval. */
static void test_splice_311(void **state)
{
	struct jw_frame fr[32] = {
		{ .symbol = "main" }, { .symbol = JW_PY_EVAL_FUNCTION },
		{ .symbol = "context_run" }, { .symbol = JW_PY_EVAL_FUNCTION },
		{ .symbol = "time_sleep" },
	};
	/* innermost first: py3 <- py2 (first of the inner call), py1 <- py0 (first of the outer) */
	const struct jw_py_frame py[] = {
		{ CODE(3), 0 }, { CODE(2) | JW_PY_FRAME_ENTRY, 0 },
		{ CODE(1), 0 }, { CODE(0) | JW_PY_FRAME_ENTRY, 0 },
	};
	static const char *const want[] = { "main", "py0", "py1", "context_run", "py2", "py3",
					    "time_sleep", NULL };
	size_t n;

	(void)state;
	n = jw_stacks_splice_python(fr, 5, py, 4, &splice_311);
	assert_int_equal(n, 7);
	check_names(fr, n, want);
}

/* 3.12 on: a call's own entry frame (no code) marks where the frames of the call above begin. */
static void test_splice_own_entry(void **state)
{
	/* The inner call's frame is in the function's cold part, with no name of its own. */
	struct jw_frame fr[32] = {
		{ .symbol = "main" }, { .symbol = JW_PY_EVAL_FUNCTION },
		{ .symbol = "context_run" }, { .symbol = "cold", .module = "/py", .rel_pc = 0x5f0 },
		{ .symbol = "clock_gettime", .module = "/py", .rel_pc = 0x700 },
	};
	const struct jw_py_frame py[] = {
		{ CODE(4), 0 }, { CODE(3), 0 }, { CODE(7) | JW_PY_FRAME_ENTRY, 0 },
		{ CODE(1), 0 }, { CODE(7) | JW_PY_FRAME_ENTRY, 0 },
	};
	static const char *const want[] = { "main", "py1", "context_run", "py3", "py4",
					    "clock_gettime", NULL };
	size_t n;

	(void)state;
	n = jw_stacks_splice_python(fr, 5, py, 5, &splice_own);
	assert_int_equal(n, 6);
	check_names(fr, n, want);
}

/*
 * More evaluation frames than calls (the deepest ones' Python frames past JW_MAX_PY_FRAMES): the
 * outer ones stay native. A call none of whose frames can be named keeps its native frame.
 */
static void test_splice_short(void **state)
{
	struct jw_frame fr[32] = {
		{ .symbol = "main" }, { .symbol = JW_PY_EVAL_FUNCTION },
		{ .symbol = JW_PY_EVAL_FUNCTION }, { .symbol = "leaf" },
	};
	const struct jw_py_frame py[] = { { CODE(2), 0 }, { CODE(1), 0 } };
	const struct jw_py_frame unnamed[] = { { CODE(200), 0 } };
	static const char *const want[] = { "main", JW_PY_EVAL_FUNCTION, "py1", "py2", "leaf", NULL };
	static const char *const want2[] = { "main", JW_PY_EVAL_FUNCTION, "py1", "py2", "leaf",
					     NULL };
	size_t n;

	(void)state;
	n = jw_stacks_splice_python(fr, 4, py, 2, &splice_own);
	assert_int_equal(n, 5);
	check_names(fr, n, want);
	n = jw_stacks_splice_python(fr, n, unnamed, 1, &splice_own);
	check_names(fr, n, want2);
	/* No Python frames, no evaluation frames: nothing changes. */
	assert_int_equal(jw_stacks_splice_python(fr, n, NULL, 0, &splice_own), n);
}

/* A raw capture's names: by code object and instruction, exactly. */
static void test_names(void **state)
{
	const struct jw_raw_pyname names[] = {
		{ .code = 0x2000, .instr = 0x2100, .name = "on_timer", .file = "/a.py", .line = 7 },
		{ .code = 0x1000, .instr = 0x1080, .name = "slow", .file = "/a.py", .line = 3 },
	};
	const struct jw_raw_range eval[] = { { 0x500, 0x600 }, { 0x9000, 0x9100 } };
	struct jw_pycode *p = jw_pycode__new_names(names, 2, "/usr/bin/python3.14", true, eval, 2);
	struct jw_frame fr, native = { .module = "/usr/bin/python3.14", .rel_pc = 0x9100 };

	(void)state;
	assert_non_null(p);
	assert_true(jw_pycode__entry_own(p));
	assert_true(jw_pycode__frame(p, 0x1000, 0x1080, &fr));
	assert_int_equal(fr.kind, JW_FRAME_PYTHON);
	assert_string_equal(fr.symbol, "slow");
	assert_string_equal(fr.module, "/a.py");
	assert_string_equal(fr.src, "/a.py:3");
	assert_int_equal(fr.rel_pc, 3);
	assert_true(jw_pycode__frame(p, 0x2000, 0x2100, &fr));
	assert_string_equal(fr.src, "/a.py:7");
	assert_false(jw_pycode__frame(p, 0x1000, 0x1082, &fr));
	assert_false(jw_pycode__frame(NULL, 0x1000, 0x1080, &fr));
	/* Its evaluation frames: in a part (a return address just past its end too), or by name. */
	assert_true(jw_pycode__is_eval(p, &native));
	native.rel_pc = 0x9101;
	assert_false(jw_pycode__is_eval(p, &native));
	native.module = "/usr/lib/libc.so.6";
	native.rel_pc = 0x550;
	assert_false(jw_pycode__is_eval(p, &native));
	native.symbol = JW_PY_EVAL_FUNCTION;
	assert_true(jw_pycode__is_eval(p, &native));
	assert_string_equal(jw_pycode__module(p), "/usr/bin/python3.14");
	jw_pycode__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_line_311),
		cmocka_unit_test(test_line_313),
		cmocka_unit_test(test_line_damaged),
		cmocka_unit_test(test_splice_311),
		cmocka_unit_test(test_splice_own_entry),
		cmocka_unit_test(test_splice_short),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
