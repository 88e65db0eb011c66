// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of the wait system calls' own tracepoints' ids, read from a tracefs events/
 * directory laid out as the kernel's: x86-64's seven wait calls, arm64's four, one whose exit
 * event is missing, a malformed id, and a kernel with no system call events at all.
 */
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "arch/arch.h"
#include "attach/sysevents.h"

/* A scratch events/ directory. */
static char *events_dir(void)
{
	static char dir[64];

	snprintf(dir, sizeof(dir), "/tmp/jw-sysevents-XXXXXX");
	assert_non_null(mkdtemp(dir));
	return dir;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* Removes the scratch directory @dir and everything in it. */
static void remove_tree(const char *dir)
{
	assert_int_equal(nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS), 0);
}

/* events/syscalls/sys_@which_@name/id holding @text. */
static void put_id(const char *events, const char *which, const char *name, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/syscalls", events);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/syscalls/sys_%s_%s", events, which, name);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/syscalls/sys_%s_%s/id", events, which, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* Both events of @name, ids @enter and @enter + 1. */
static void put_pair(const char *events, const char *name, int enter)
{
	char id[16];

	snprintf(id, sizeof(id), "%d\n", enter);
	put_id(events, "enter", name, id);
	snprintf(id, sizeof(id), "%d\n", enter + 1);
	put_id(events, "exit", name, id);
}

static void test_x86_64(void **state)
{
	char *dir = events_dir();
	struct jw_sysevents ev;
	size_t i;

	(void)state;
	for (i = 0; i < JW_WAIT_SYSCALLS; i++)
		put_pair(dir, jw_sysevents_name(i), 1000 + 10 * (int)i);
	/* Another system call's events are not the waits'. */
	put_pair(dir, "getppid", 900);
	assert_int_equal(jw_sysevents_read_dir(dir, &ev), 0);
	assert_int_equal(ev.n, JW_WAIT_SYSCALLS);
	for (i = 0; i < ev.n; i++) {
		assert_string_equal(ev.ev[i].name, jw_sysevents_name(i));
		assert_int_equal(ev.ev[i].enter, 1000 + 10 * (int)i);
		assert_int_equal(ev.ev[i].exit, 1001 + 10 * (int)i);
	}
	assert_string_equal(ev.ev[2].name, "epoll_wait");
	remove_tree(dir);
}

static void test_arm64(void **state)
{
	static const char *const arm64[] = { "pselect6", "ppoll", "epoll_pwait", "epoll_pwait2" };
	char *dir = events_dir();
	struct jw_sysevents ev;
	size_t i;

	(void)state;
	for (i = 0; i < 4; i++)
		put_pair(dir, arm64[i], 500 + 2 * (int)i);
	assert_int_equal(jw_sysevents_read_dir(dir, &ev), 0);
	assert_int_equal(ev.n, 4);
	for (i = 0; i < 4; i++) {
		assert_string_equal(ev.ev[i].name, arm64[i]);
		assert_int_equal(ev.ev[i].enter, 500 + 2 * (int)i);
		assert_int_equal(ev.ev[i].exit, 501 + 2 * (int)i);
	}
	remove_tree(dir);
}

/* A call whose entry or exit cannot be read is not hooked at all: half a wait is no bound. */
static void test_half_and_malformed(void **state)
{
	char *dir = events_dir();
	struct jw_sysevents ev;

	(void)state;
	put_pair(dir, "epoll_wait", 70);
	put_id(dir, "enter", "poll", "71\n");		/* no exit */
	put_id(dir, "enter", "ppoll", "x\n");		/* not a number */
	put_id(dir, "exit", "ppoll", "73\n");
	put_id(dir, "enter", "select", "0\n");		/* not an id */
	put_id(dir, "exit", "select", "75\n");
	assert_int_equal(jw_sysevents_read_dir(dir, &ev), 0);
	assert_int_equal(ev.n, 1);
	assert_string_equal(ev.ev[0].name, "epoll_wait");
	remove_tree(dir);
}

/* A kernel without CONFIG_FTRACE_SYSCALLS: events/ with no syscalls/ in it. */
static void test_none(void **state)
{
	char *dir = events_dir();
	struct jw_sysevents ev;

	(void)state;
	assert_int_equal(jw_sysevents_read_dir(dir, &ev), -ENOENT);
	assert_int_equal(ev.n, 0);
	assert_int_equal(jw_sysevents_read_dir("/nonexistent/events", &ev), -ENOENT);
	remove_tree(dir);
	assert_null(jw_sysevents_name(JW_WAIT_SYSCALLS));
}

/*
 * The wait system calls this architecture's table has, by name (fexit's functions are named
 * after them): x86-64 all seven; arm64 not poll, select or epoll_wait, though its kernel's BTF
 * has their functions. Each of the architecture's names is one of the seven.
 */
static void test_on_arch(void **state)
{
	size_t i, k, n = 0;

	(void)state;
	for (i = 0; i < JW_WAIT_SYSCALLS; i++) {
		bool listed = false;

		for (k = 0; k < jw_arch_n_wait_syscalls; k++)
			listed |= !strcmp(jw_arch_wait_syscall_names[k], jw_sysevents_name(i));
		assert_int_equal(jw_sysevents_on_arch(i), listed);
		n += listed;
	}
	assert_int_equal(n, jw_arch_n_wait_syscalls);
#if defined(__aarch64__)
	assert_int_equal(n, 4);
	assert_false(jw_sysevents_on_arch(0));	/* poll */
	assert_true(jw_sysevents_on_arch(4));	/* ppoll */
#elif defined(__x86_64__)
	assert_int_equal(n, 7);
#endif
	assert_false(jw_sysevents_on_arch(JW_WAIT_SYSCALLS));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_x86_64),
		cmocka_unit_test(test_arm64),
		cmocka_unit_test(test_half_and_malformed),
		cmocka_unit_test(test_none),
		cmocka_unit_test(test_on_arch),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
