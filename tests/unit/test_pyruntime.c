// SPDX-License-Identifier: GPL-2.0-only
/*
 * CPython's layout from its binary: Debian's python3.11 (its tables checked against its member
 * table), the pyenv builds of 3.12 and 3.13 where the machine has them (3.13 from its
 * _Py_DebugOffsets), a file that is no Python, and debug offsets that must be refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <errno.h>
#include <glob.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "loops/pyruntime.h"

/* The first file @pattern matches, or NULL (the machine has none). */
static const char *first_match(const char *pattern, char *buf, size_t len)
{
	glob_t g;
	const char *found = NULL;

	if (glob(pattern, 0, NULL, &g) == 0 && g.gl_pathc) {
		snprintf(buf, len, "%s", g.gl_pathv[0]);
		found = buf;
	}
	globfree(&g);
	return found;
}

static void test_debian_311(void **state)
{
	struct jw_py_layout l;
	char why[256] = "";

	(void)state;
	assert_int_equal(access("/usr/bin/python3.11", R_OK), 0);	/* setup.sh installs it */
	assert_int_equal(jw_py_layout_read("/usr/bin/python3.11", &l, why, sizeof(why)), 0);
	assert_int_equal(l.minor, 11);
	assert_int_equal(l.hexversion >> 16, 0x030b);
	assert_int_equal(l.tstate_frame, 56);
	assert_int_equal(l.cframe_frame, 8);
	assert_int_equal(l.frame_code, 32);
	assert_int_equal(l.frame_entry, 68);
	assert_false(l.entry_is_own_frame);
	assert_int_equal(l.code_adaptive, 184);
	/* The evaluation function's own code comes first; Debian 12's is in one piece. */
	assert_true(l.n_eval >= 1);
	assert_true(l.eval[0].hi > l.eval[0].lo);
}

static void test_pyenv(void **state)
{
	struct jw_py_layout l;
	char path[4096], why[256] = "";

	(void)state;
	if (first_match("/root/.pyenv/versions/3.12.*/lib/libpython3.12.so.1.0", path,
			sizeof(path))) {
		assert_int_equal(jw_py_layout_read(path, &l, why, sizeof(why)), 0);
		assert_int_equal(l.minor, 12);
		assert_int_equal(l.code_firstlineno, 68);
		assert_int_equal(l.frame_entry, 70);
		assert_true(l.entry_is_own_frame);
		assert_int_equal(l.str_ascii_size, 40);
	} else {
		print_message("note: no pyenv 3.12 here\n");
	}
	if (first_match("/root/.pyenv/versions/3.13.*/lib/libpython3.13.so.1.0", path,
			sizeof(path))) {
		assert_int_equal(jw_py_layout_read(path, &l, why, sizeof(why)), 0);
		assert_int_equal(l.minor, 13);
		assert_int_equal(l.tstate_frame, 72);
		assert_int_equal(l.cframe_frame, JW_PY_NONE);
		assert_int_equal(l.frame_instr, 56);
		assert_int_equal(l.frame_entry, 70);
		assert_int_equal(l.code_adaptive, 200);
		assert_int_equal(l.ref_tag, 0);
	} else {
		print_message("note: no pyenv 3.13 here\n");
	}
}

static void test_not_python(void **state)
{
	struct jw_py_layout l;
	char why[256] = "";

	(void)state;
	assert_int_equal(jw_py_layout_read("/bin/true", &l, why, sizeof(why)), -ENOTSUP);
	assert_non_null(strstr(why, "no Py_Version"));
	assert_int_equal(jw_py_layout_read("/nonexistent/python", &l, why, sizeof(why)), -ENOENT);
	assert_non_null(strstr(why, "cannot be read"));
}

/* 3.13's _Py_DebugOffsets as its pyenv build has them, the parts jankwatch reads filled. */
static void debug_313(uint8_t *d)
{
	const uint64_t ts[] = { 304, 0, 8, 16, 72, 152, 160, 232 }, fr[] = { 80, 8, 0, 56, 72, 70 };
	const uint64_t code[] = { 208, 112, 120, 128, 136, 68 }, adaptive = 200;
	uint64_t version = 0x030d00f0;

	memset(d, 0, JW_PY_DEBUG_READ);
	memcpy(d, "xdebugpy", 8);
	memcpy(d + 8, &version, 8);
	memcpy(d + 152, ts, sizeof(ts));
	memcpy(d + 224, fr, sizeof(fr));
	memcpy(d + 272, code, sizeof(code));
	memcpy(d + 272 + 72, &adaptive, 8);
}

static void test_debug_offsets(void **state)
{
	struct jw_py_layout l = { .minor = 13, .hexversion = 0x030d00f0 };
	uint8_t d[JW_PY_DEBUG_READ];
	uint64_t one = 1, far = 200;
	char why[256] = "";

	(void)state;
	debug_313(d);
	assert_int_equal(jw_py_layout_from_debug(d, &l, why, sizeof(why)), 0);
	assert_int_equal(l.frame_entry, 70);
	assert_int_equal(l.entry_value, 3);
	assert_int_equal(l.code_qualname, 128);
	/* A free-threaded build: refused, by name. */
	memcpy(d + 16, &one, 8);
	assert_int_equal(jw_py_layout_from_debug(d, &l, why, sizeof(why)), -ENOTSUP);
	assert_string_equal(why, "Python 3.13t is free-threaded");
	/* Another version's cookie, and a frame field past what the kernel reads. */
	debug_313(d);
	l.hexversion = 0x030d01f0;
	assert_int_equal(jw_py_layout_from_debug(d, &l, why, sizeof(why)), -ENOTSUP);
	l.hexversion = 0x030d00f0;
	memcpy(d + 224 + 24, &far, 8);
	assert_int_equal(jw_py_layout_from_debug(d, &l, why, sizeof(why)), -ENOTSUP);
	assert_non_null(strstr(why, "frame offsets are not as expected"));
	/* A version whose offsets jankwatch does not know where to find. */
	debug_313(d);
	l.minor = 15;
	assert_int_equal(jw_py_layout_from_debug(d, &l, why, sizeof(why)), -ENOTSUP);
	assert_non_null(strstr(why, "not known"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_debian_311),
		cmocka_unit_test(test_pyenv),
		cmocka_unit_test(test_not_python),
		cmocka_unit_test(test_debug_offsets),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
