// SPDX-License-Identifier: GPL-2.0-only
/*
 * Syscall mode's wait functions (loops/waits.c) found for a program not started yet, from the
 * interpreter it names, in trees laid out as glibc's, musl's and bionic's (Android 10's runtime
 * APEX, and /system before it; 64- and 32-bit), in a static program itself, and nowhere; a wait
 * function that only jumps into another (musl's and bionic's epoll_wait) left to the other's
 * probe, through the PLT or not; and the thread roots of the three C libraries
 * (stacks/stacks.c), from a symbol-table fixture.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "process/elfsym.h"
#include "loops/waits.h"
#include "stacks/stacks.h"

#define FIXTURE(name) JW_FIXTURES "/" name

/* The fixture's epoll_wait only jumps to epoll_pwait: left to epoll_pwait's probe. */
static const char *const wait_names[] = { "epoll_pwait", "epoll_pwait2", "poll", "ppoll",
					  "select", "pselect" };
#define N_WAITS (sizeof(wait_names) / sizeof(wait_names[0]))

struct fixture {
	char root[64];
	char real[PATH_MAX];	/* the root's real path, as found paths begin */
	struct jw_wait_func found[JW_MAX_WAIT_FUNCS];
	char err[512];
	char path[PATH_MAX];	/* in_root()'s */
};

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	snprintf(fx->root, sizeof(fx->root), "/tmp/jw-waits-XXXXXX");
	if (!mkdtemp(fx->root) || !realpath(fx->root, fx->real)) {
		free(fx);
		return -1;
	}
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", fx->root);
	free(fx);
	return system(cmd) ? -1 : 0;
}

/* The directories of @rel (under the root) made. */
static void make_parents(struct fixture *fx, const char *rel)
{
	char path[PATH_MAX], *p;

	snprintf(path, sizeof(path), "%s%s", fx->root, rel);
	for (p = path + strlen(fx->root) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
}

/* File @rel under the root: a copy of fixture @from, or empty when NULL. */
static void put(struct fixture *fx, const char *rel, const char *from)
{
	char cmd[2 * PATH_MAX];

	make_parents(fx, rel);
	if (from)
		snprintf(cmd, sizeof(cmd), "cp %s %s%s", from, fx->root, rel);
	else
		snprintf(cmd, sizeof(cmd), "touch %s%s", fx->root, rel);
	assert_int_equal(system(cmd), 0);
}

/* The path of @rel under the root. */
static const char *in_root(struct fixture *fx, const char *rel)
{
	snprintf(fx->path, sizeof(fx->path), "%s%s", fx->root, rel);
	return fx->path;
}

/* File @rel under the root holds @text. */
static void write_text(struct fixture *fx, const char *rel, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s%s", fx->root, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/* Symbolic link @rel under the root, to @to. */
static void link_to(struct fixture *fx, const char *rel, const char *to)
{
	char path[PATH_MAX];

	make_parents(fx, rel);
	snprintf(path, sizeof(path), "%s%s", fx->root, rel);
	assert_int_equal(symlink(to, path), 0);
}

static int find(struct fixture *fx, const char *prog)
{
	fx->err[0] = '\0';
	return jw_find_wait_funcs(0, fx->root, prog, fx->found, JW_MAX_WAIT_FUNCS, fx->err,
				  sizeof(fx->err));
}

/*
 * Every wait function found, once each, all in @path (under the root unless a fixture's), and
 * not epoll_wait, the thunk.
 */
static void assert_all_in(struct fixture *fx, int n, const char *path)
{
	char want[PATH_MAX];
	size_t i, j;

	if (path[0] == '/' && strncmp(path, JW_FIXTURES, strlen(JW_FIXTURES)))
		snprintf(want, sizeof(want), "%s%s", fx->real, path);
	else
		snprintf(want, sizeof(want), "%s", path);
	assert_int_equal(n, N_WAITS);
	for (i = 0; i < N_WAITS; i++) {
		bool seen = false;

		for (j = 0; j < (size_t)n; j++)
			seen |= !strcmp(fx->found[j].name, wait_names[i]);
		if (!seen)
			fail_msg("%s not found", wait_names[i]);
		assert_string_equal(fx->found[i].path, want);
		assert_string_not_equal(fx->found[i].name, "epoll_wait");
	}
}

static void test_glibc(void **state)
{
	struct fixture *fx = *state;

	/* /lib/ld-*.so.1 a link into the library directory, libc.so.6 beside the loader. */
	put(fx, "/usr/lib/gnu/ld-fixture.so.1", NULL);
	put(fx, "/usr/lib/gnu/libc.so.6", FIXTURE("libc_waits.so"));
	link_to(fx, "/lib/ld-fixture.so.1", "../usr/lib/gnu/ld-fixture.so.1");
	assert_all_in(fx, find(fx, FIXTURE("prog_gnu")), "/usr/lib/gnu/libc.so.6");
}

static void test_musl(void **state)
{
	struct fixture *fx = *state;

	/* ld-musl-<arch>.so.1 is a link to musl's libc.so: the loader is the C library. */
	put(fx, "/usr/lib/musl/libc.so", FIXTURE("libc_waits.so"));
	link_to(fx, "/lib/ld-musl-fixture.so.1", "../usr/lib/musl/libc.so");
	assert_all_in(fx, find(fx, FIXTURE("prog_musl")), "/usr/lib/musl/libc.so");
	/* A script: the program its "#!" line names (in the root), through a script of scripts. */
	put(fx, "/bin/prog", FIXTURE("prog_musl"));
	put(fx, "/bin/inner", NULL);
	put(fx, "/outer", NULL);
	write_text(fx, "/bin/inner", "#!/bin/prog -x\nprint('hi')\n");
	write_text(fx, "/outer", "#! /bin/inner\n");
	assert_all_in(fx, find(fx, in_root(fx, "/outer")), "/usr/lib/musl/libc.so");
}

static void test_bionic_apex(void **state)
{
	struct fixture *fx = *state;

	/* Android 10 and later: /system/bin/linker64 links to the runtime APEX's. */
	put(fx, "/apex/com.android.runtime/bin/linker64", NULL);
	put(fx, "/apex/com.android.runtime/bin/linker", NULL);
	put(fx, "/apex/com.android.runtime/lib64/bionic/libc.so", FIXTURE("libc_waits.so"));
	put(fx, "/apex/com.android.runtime/lib/bionic/libc.so", FIXTURE("libc_waits.so"));
	link_to(fx, "/system/bin/linker64", "../../apex/com.android.runtime/bin/linker64");
	link_to(fx, "/system/bin/linker", "../../apex/com.android.runtime/bin/linker");
	assert_all_in(fx, find(fx, FIXTURE("prog_bionic")),
		      "/apex/com.android.runtime/lib64/bionic/libc.so");
	/* A 32-bit program's linker: lib/, never lib64/. */
	assert_all_in(fx, find(fx, FIXTURE("prog_bionic32")),
		      "/apex/com.android.runtime/lib/bionic/libc.so");
}

static void test_bionic_system(void **state)
{
	struct fixture *fx = *state;

	/* Before Android 10: the linker and libc in /system itself. */
	put(fx, "/system/bin/linker64", NULL);
	put(fx, "/system/lib64/libc.so", FIXTURE("libc_waits.so"));
	assert_all_in(fx, find(fx, FIXTURE("prog_bionic")), "/system/lib64/libc.so");
}

static void test_static(void **state)
{
	struct fixture *fx = *state;

	/* No interpreter: the program carries its own. */
	assert_all_in(fx, find(fx, FIXTURE("static_waits")), FIXTURE("static_waits"));
}

static void test_none(void **state)
{
	struct fixture *fx = *state;

	/* A C library without them, and a program without them: said, with what to do. */
	put(fx, "/usr/lib/gnu/ld-fixture.so.1", NULL);
	put(fx, "/usr/lib/gnu/libc.so.6", FIXTURE("libc_none.so"));
	link_to(fx, "/lib/ld-fixture.so.1", "../usr/lib/gnu/ld-fixture.so.1");
	assert_int_equal(find(fx, FIXTURE("prog_none")), -ENOENT);
	assert_string_equal(fx->err, FIXTURE("prog_none") ": no wait function (epoll_wait, poll, "
			    "select, ...) in its C library or itself: give --probe "
			    "BIN:ENTRY[:EXIT]");
	/* An interpreter that is not there (another root's program): the same. */
	assert_int_equal(find(fx, FIXTURE("prog_musl")), -ENOENT);
	/* A script whose interpreter is not there, a file that is neither ELF nor a script. */
	write_text(fx, "/script", "#!/no/such/interpreter\n");
	write_text(fx, "/text", "just text\n");
	assert_int_equal(find(fx, in_root(fx, "/script")), -ENOENT);
	assert_int_equal(find(fx, in_root(fx, "/text")), -ENOENT);
}

static void test_thread_roots(void **state)
{
	static const char *const roots[] = {
		"_start", "__libc_start_main", "start_thread", "clone", "clone3",	/* glibc */
		"_start_c",								/* musl */
		"__libc_init", "__start_thread", "__pthread_start",			/* bionic */
	};
	static const char *const in_fixture[] = { "__libc_init", "__start_thread",
						  "__pthread_start", "_start_c",
						  "__libc_start_main", "_start" };
	uint64_t off, size;
	char msg[256];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(roots) / sizeof(roots[0]); i++)
		if (!jw_symbol_is_thread_root(roots[i]))
			fail_msg("%s is not a thread root", roots[i]);
	/* Named so in a C library's symbol table, where the unwinder's frames find them. */
	for (i = 0; i < sizeof(in_fixture) / sizeof(in_fixture[0]); i++)
		if (jw_elf_func_offset(FIXTURE("libc_waits.so"), in_fixture[i], &off, &size, msg,
				       sizeof(msg)))
			fail_msg("%s: %s", in_fixture[i], msg);
	assert_false(jw_symbol_is_thread_root("main"));
	assert_false(jw_symbol_is_thread_root("start"));
	assert_false(jw_symbol_is_thread_root(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_glibc, setup, teardown),
		cmocka_unit_test_setup_teardown(test_musl, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bionic_apex, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bionic_system, setup, teardown),
		cmocka_unit_test_setup_teardown(test_static, setup, teardown),
		cmocka_unit_test_setup_teardown(test_none, setup, teardown),
		cmocka_unit_test(test_thread_roots),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
