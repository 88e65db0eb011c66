// SPDX-License-Identifier: GPL-2.0-only
/*
 * The default log and run directories (base/places.c) in trees shaped as a server, an Android
 * device, a board with only /tmp, and one with nothing to write in.
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

#include "base/places.h"

struct fixture {
	char root[64];		/* a mkdtemp directory standing for / */
	char dir[PATH_MAX];
	char *old_tmpdir;
};

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	const char *t = getenv("TMPDIR");

	if (!fx)
		return -1;
	snprintf(fx->root, sizeof(fx->root), "/tmp/jw-places-XXXXXX");
	if (!mkdtemp(fx->root)) {
		free(fx);
		return -1;
	}
	fx->old_tmpdir = t ? strdup(t) : NULL;
	unsetenv("TMPDIR");
	*state = fx;
	return 0;
}

/* Makes directories @rel (under the root), each level with @mode. */
static void make(struct fixture *fx, const char *rel, mode_t mode)
{
	char path[PATH_MAX], *p;

	snprintf(path, sizeof(path), "%s%s", fx->root, rel);
	for (p = path + strlen(fx->root) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	assert_int_equal(mkdir(path, mode), 0);
	assert_int_equal(chmod(path, mode), 0);
}

static int teardown(void **state)
{
	struct fixture *fx = *state;
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "chmod -R u+w %s && rm -rf %s", fx->root, fx->root);
	if (system(cmd))
		return -1;
	if (fx->old_tmpdir)
		setenv("TMPDIR", fx->old_tmpdir, 1);
	free(fx->old_tmpdir);
	free(fx);
	return 0;
}

static int place(struct fixture *fx, enum jw_place what)
{
	return jw_place_default(what, fx->root, fx->dir, sizeof(fx->dir));
}

static void test_server(void **state)
{
	struct fixture *fx = *state;

	make(fx, "/var/log", 0755);
	make(fx, "/run", 0755);
	make(fx, "/tmp", 01777);
	assert_int_equal(place(fx, JW_PLACE_LOG), 0);
	assert_string_equal(fx->dir, "/var/log/jankwatch");
	assert_true(jw_place_is_usual(JW_PLACE_LOG, fx->dir));
	assert_int_equal(place(fx, JW_PLACE_RUN), 0);
	assert_string_equal(fx->dir, "/run/jankwatch");
	assert_true(jw_place_is_usual(JW_PLACE_RUN, fx->dir));
}

static void test_android(void **state)
{
	struct fixture *fx = *state;

	/* No /var, no /run, no /tmp: /data/local/tmp, as adb's shell has it. */
	make(fx, "/data/local/tmp", 0771);
	make(fx, "/system/bin", 0755);
	assert_int_equal(place(fx, JW_PLACE_LOG), 0);
	assert_string_equal(fx->dir, "/data/local/tmp/jankwatch");
	assert_false(jw_place_is_usual(JW_PLACE_LOG, fx->dir));
	assert_int_equal(place(fx, JW_PLACE_RUN), 0);
	assert_string_equal(fx->dir, "/data/local/tmp/jankwatch-run");
}

static void test_read_only_root(void **state)
{
	struct fixture *fx = *state;

	/* A /var/log that cannot be written in (root can write in a 0555 one: none for root). */
	if (geteuid())
		make(fx, "/var/log", 0555);
	make(fx, "/tmp", 01777);
	assert_int_equal(place(fx, JW_PLACE_LOG), 0);
	assert_string_equal(fx->dir, "/tmp/jankwatch");
	assert_int_equal(place(fx, JW_PLACE_RUN), 0);
	assert_string_equal(fx->dir, "/tmp/jankwatch-run");
	/* $TMPDIR comes before /tmp, an absolute one only, its trailing '/' dropped. */
	make(fx, "/scratch", 0700);
	setenv("TMPDIR", "/scratch/", 1);
	assert_int_equal(place(fx, JW_PLACE_LOG), 0);
	assert_string_equal(fx->dir, "/scratch/jankwatch");
	setenv("TMPDIR", "scratch", 1);
	assert_int_equal(place(fx, JW_PLACE_LOG), 0);
	assert_string_equal(fx->dir, "/tmp/jankwatch");
	setenv("TMPDIR", "/nonexistent", 1);
	assert_int_equal(place(fx, JW_PLACE_LOG), 0);
	assert_string_equal(fx->dir, "/tmp/jankwatch");
}

static void test_nowhere(void **state)
{
	struct fixture *fx = *state;

	/* Nothing to write in: the usual place is named, and the caller told. */
	assert_int_equal(place(fx, JW_PLACE_LOG), -ENOENT);
	assert_string_equal(fx->dir, "/var/log/jankwatch");
	assert_int_equal(place(fx, JW_PLACE_RUN), -ENOENT);
	assert_string_equal(fx->dir, "/run/jankwatch");
	assert_false(jw_place_is_usual(JW_PLACE_RUN, "/var/log/jankwatch"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_server, setup, teardown),
		cmocka_unit_test_setup_teardown(test_android, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_only_root, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nowhere, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
