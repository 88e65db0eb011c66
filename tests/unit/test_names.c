// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of --name's matching: the kernel names a name may show as (itself; past 15 bytes
 * its first 15, as the kernel cuts a longer one, and its last 15, as Android's zygote children
 * take theirs), a process's comm and first argument against them, and the names refused.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "process/names.h"

static void test_comms_short(void **state)
{
	char comms[JW_NAME_COMMS][JW_NAME_COMM_LEN];

	(void)state;
	assert_int_equal(jw_name_comms("redis-server", comms), 1);
	assert_string_equal(comms[0], "redis-server");
	/* Exactly 15 bytes: whole, one name. */
	assert_int_equal(jw_name_comms("com.android.foo", comms), 1);
	assert_string_equal(comms[0], "com.android.foo");
	/* NUL-padded: the BPF map's key is all 16 bytes. */
	assert_int_equal(jw_name_comms("ab", comms), 1);
	assert_memory_equal(comms[0], "ab\0\0\0\0\0\0\0\0\0\0\0\0\0\0", JW_NAME_COMM_LEN);
}

static void test_comms_long(void **state)
{
	char comms[JW_NAME_COMMS][JW_NAME_COMM_LEN];

	(void)state;
	assert_int_equal(jw_name_comms("com.google.android.apps.maps", comms), 2);
	assert_string_equal(comms[0], "com.google.andr");
	assert_string_equal(comms[1], "droid.apps.maps");
	/* 16 bytes: one past the kernel's; both cut to 15. */
	assert_int_equal(jw_name_comms("0123456789abcdef", comms), 2);
	assert_string_equal(comms[0], "0123456789abcde");
	assert_string_equal(comms[1], "123456789abcdef");
}

/* A name of 15 bytes or less: the comm decides, whatever the arguments. */
static void test_is_short(void **state)
{
	(void)state;
	assert_true(jw_name_is("redis-server", "redis-server", "/usr/bin/redis-server *:6379"));
	assert_true(jw_name_is("redis-server", "redis-server", ""));
	assert_false(jw_name_is("redis-server", "redis-check-rdb", "/usr/bin/redis-server"));
	assert_false(jw_name_is("redis", "redis-server", "redis"));
}

/*
 * Past 15 bytes: the comm must be its first or last 15, and the first argument the name or a
 * path to a file of that name.
 */
static void test_is_long(void **state)
{
	const char *app = "org.jankwatch.zygote.looper", *other = "com.jankwatch.zygote.looper";
	const char *daemon = "gnome-settings-daemon";

	(void)state;
	/* Android: the comm is the last 15 bytes, argv[0] the package. */
	assert_true(jw_name_is(app, "h.zygote.looper", app));
	/* The same comm, another package: not it. */
	assert_false(jw_name_is(app, "h.zygote.looper", other));
	/* Its argv not rewritten yet (zygote's child renames its thread first). */
	assert_false(jw_name_is(app, "h.zygote.looper", "zygote64"));
	/* Linux: the kernel kept the first 15 of the file's name; argv[0] a path to it. */
	assert_true(jw_name_is(daemon, "gnome-settings-", "/usr/libexec/gnome-settings-daemon"));
	assert_true(jw_name_is(daemon, "gnome-settings-", daemon));
	assert_false(jw_name_is(daemon, "gnome-settings-", "/usr/libexec/gnome-settings-daemon2"));
	assert_false(jw_name_is(daemon, "gnome-settings-", "/usr/libexec/xgnome-settings-daemon"));
	/* The name in the arguments, another comm: not it (renames are seen by the comm). */
	assert_false(jw_name_is(app, "app_process64", app));
	assert_false(jw_name_is(app, "h.zygote.looper", NULL));
}

static void test_find(void **state)
{
	char *names[] = { (char *)"nginx", (char *)"org.jankwatch.zygote.looper" };

	(void)state;
	assert_string_equal(jw_name_find(names, 2, "nginx", "nginx: worker process"), "nginx");
	assert_string_equal(jw_name_find(names, 2, "h.zygote.looper",
					 "org.jankwatch.zygote.looper"),
			    "org.jankwatch.zygote.looper");
	assert_null(jw_name_find(names, 2, "h.zygote.looper", "com.jankwatch.zygote.looper"));
	/* No argument read: a candidate by its comm alone. */
	assert_string_equal(jw_name_find(names, 2, "org.jankwatch.z", NULL),
			    "org.jankwatch.zygote.looper");
	assert_null(jw_name_find(names, 2, "redis-server", NULL));
	assert_null(jw_name_find(names, 0, "nginx", "nginx"));
}

static void test_check(void **state)
{
	char err[256], longer[300];

	(void)state;
	assert_int_equal(jw_name_check("com.example.app", err, sizeof(err)), 0);
	assert_int_equal(jw_name_check("a b/c:d", err, sizeof(err)), 0);
	assert_int_equal(jw_name_check("", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "an empty name");
	assert_int_equal(jw_name_check("tab\there", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "a control character in the name");
	memset(longer, 'x', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	assert_int_equal(jw_name_check(longer, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "longer than 255 bytes"));
	longer[JW_NAME_MAX] = '\0';
	assert_int_equal(jw_name_check(longer, err, sizeof(err)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_comms_short),
		cmocka_unit_test(test_comms_long),
		cmocka_unit_test(test_is_short),
		cmocka_unit_test(test_is_long),
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_check),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
