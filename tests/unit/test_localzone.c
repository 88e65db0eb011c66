// SPDX-License-Identifier: GPL-2.0-only
/* Whether local time has a zone here (base/localzone.c): TZ's forms, /etc/localtime, neither. */
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

#include "base/localzone.h"

struct fixture {
	char root[64];		/* a mkdtemp directory standing for / */
	char why[PATH_MAX + 64];
	char *old_tz, *old_tzdir;
};

static char *saved(const char *name)
{
	const char *v = getenv(name);

	return v ? strdup(v) : NULL;
}

static void restore(const char *name, char *v)
{
	if (v)
		setenv(name, v, 1);
	else
		unsetenv(name);
	free(v);
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	snprintf(fx->root, sizeof(fx->root), "/tmp/jw-zone-XXXXXX");
	if (!mkdtemp(fx->root)) {
		free(fx);
		return -1;
	}
	fx->old_tz = saved("TZ");
	fx->old_tzdir = saved("TZDIR");
	unsetenv("TZ");
	unsetenv("TZDIR");
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", fx->root);
	restore("TZ", fx->old_tz);
	restore("TZDIR", fx->old_tzdir);
	free(fx);
	return system(cmd) ? -1 : 0;
}

/* Creates the file @rel under the root, its directories too. */
static void touch(struct fixture *fx, const char *rel)
{
	char path[PATH_MAX], *p;
	FILE *f;

	snprintf(path, sizeof(path), "%s%s", fx->root, rel);
	for (p = path + strlen(fx->root) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("TZif2", f);
	fclose(f);
}

static bool known(struct fixture *fx)
{
	fx->why[0] = '\0';
	return jw_local_zone_known(fx->root, fx->why, sizeof(fx->why));
}

static void test_no_zone(void **state)
{
	struct fixture *fx = *state;

	/* Android, or a board without /etc/localtime: UTC, and why. */
	assert_false(known(fx));
	assert_string_equal(fx->why, "no TZ and no /etc/localtime");
	touch(fx, "/etc/localtime");
	assert_true(known(fx));
}

static void test_tz_rules(void **state)
{
	struct fixture *fx = *state;
	static const char *const rules[] = { "CST-8", "EST5EDT,M3.2.0,M11.1.0", "<+08>-8", "UTC0",
					     "UTC", "GMT", ":CST-8", "" };
	size_t i;

	/* Rules the C library reads with no file, and TZ="" (UTC by choice). */
	for (i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		setenv("TZ", rules[i], 1);
		assert_true(known(fx));
	}
}

static void test_tz_names(void **state)
{
	struct fixture *fx = *state;

	setenv("TZ", "Asia/Shanghai", 1);
	assert_false(known(fx));
	assert_string_equal(fx->why, "TZ=Asia/Shanghai names no zone file here "
			    "(/usr/share/zoneinfo/Asia/Shanghai)");
	touch(fx, "/usr/share/zoneinfo/Asia/Shanghai");
	assert_true(known(fx));
	setenv("TZ", ":Europe/Paris", 1);
	assert_false(known(fx));
	setenv("TZDIR", "/zones", 1);
	touch(fx, "/zones/Europe/Paris");
	assert_true(known(fx));
	setenv("TZ", "/etc/mytz", 1);
	assert_false(known(fx));
	touch(fx, "/etc/mytz");
	assert_true(known(fx));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_no_zone, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tz_rules, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tz_names, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
