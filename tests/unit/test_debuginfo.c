// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of the debug file store: by build-id under a debug directory, by .gnu_debuglink
 * beside the file, a file of another build-id refused, the reasons given when there is none, and
 * a debuginfod that does not answer (nothing listens on the port) ending in MISSING with why.
 */
#include <errno.h>
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

#include "process/elfsym.h"
#include "stacks/debuginfo.h"

struct fixture {
	char dir[64];
	char self[PATH_MAX];	/* this test's own executable: an ELF file with a build-id */
	char id[129];
};

static void copy(const char *from, const char *to)
{
	char buf[65536];
	FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
	size_t n;

	assert_non_null(in);
	assert_non_null(out);
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		assert_int_equal(fwrite(buf, 1, n, out), n);
	fclose(in);
	fclose(out);
}

static void mkdirs(const char *path)
{
	char buf[PATH_MAX], *p;

	snprintf(buf, sizeof(buf), "%s", path);
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		mkdir(buf, 0755);
		*p = '/';
	}
	mkdir(buf, 0755);
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	ssize_t n;

	if (!fx)
		return -1;
	snprintf(fx->dir, sizeof(fx->dir), "/tmp/jw-debuginfo-XXXXXX");
	if (!mkdtemp(fx->dir))
		return -1;
	n = readlink("/proc/self/exe", fx->self, sizeof(fx->self) - 1);
	if (n <= 0)
		return -1;
	fx->self[n] = '\0';
	if (jw_elf_build_id(fx->self, fx->id, sizeof(fx->id)))
		return -1;
	unsetenv("DEBUGINFOD_URLS");
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fx->dir);
	if (system(cmd))
		return -1;
	free(fx);
	return 0;
}

/* DIR/.build-id/xx/rest.debug, holding a copy of @file. */
static void place_by_id(struct fixture *fx, const char *file, char *path, size_t len)
{
	char dir[256];

	snprintf(dir, sizeof(dir), "%s/debug/.build-id/%.2s", fx->dir, fx->id);
	mkdirs(dir);
	snprintf(path, len, "%s/%s.debug", dir, fx->id + 2);
	copy(file, path);
}

static void test_by_build_id(void **state)
{
	struct fixture *fx = *state;
	char debug_dir[PATH_MAX], want[PATH_MAX], path[PATH_MAX];
	struct jw_debuginfo *d;

	snprintf(debug_dir, sizeof(debug_dir), "%s/debug", fx->dir);
	d = jw_debuginfo__new(debug_dir, 1 << 20);
	assert_non_null(d);
	assert_false(jw_debuginfo__remote(d));
	assert_int_equal(jw_debuginfo__lookup(d, fx->id, fx->self, NULL, true, path, sizeof(path)),
			 JW_DEBUG_MISSING);
	place_by_id(fx, fx->self, want, sizeof(want));
	assert_int_equal(jw_debuginfo__lookup(d, fx->id, fx->self, NULL, true, path, sizeof(path)),
			 JW_DEBUG_FOUND);
	assert_string_equal(path, want);
	/* A file there of another build-id is not the debug file. */
	copy("/bin/sh", want);
	assert_int_equal(jw_debuginfo__lookup(d, fx->id, fx->self, NULL, true, path, sizeof(path)),
			 JW_DEBUG_MISSING);
	assert_int_equal(jw_debuginfo__generation(d), 0);
	assert_int_equal(jw_debuginfo__pending(d), 0);
	jw_debuginfo__free(d);
}

static void test_by_debuglink(void **state)
{
	struct fixture *fx = *state;
	char bin[PATH_MAX], elf[PATH_MAX], want[PATH_MAX], path[PATH_MAX];
	struct jw_debuginfo *d = jw_debuginfo__new(NULL, 1 << 20);

	assert_non_null(d);
	snprintf(bin, sizeof(bin), "%s/bin/.debug", fx->dir);
	mkdirs(bin);
	snprintf(elf, sizeof(elf), "%s/bin/app", fx->dir);
	copy(fx->self, elf);
	snprintf(want, sizeof(want), "%s/bin/.debug/app.debug", fx->dir);
	copy(fx->self, want);
	assert_int_equal(jw_debuginfo__lookup(d, fx->id, elf, "app.debug", true, path,
					      sizeof(path)),
			 JW_DEBUG_FOUND);
	assert_string_equal(path, want);
	/* A link may not name a path, nor the file itself. */
	assert_int_equal(jw_debuginfo__lookup(d, fx->id, elf, "../app", true, path, sizeof(path)),
			 JW_DEBUG_MISSING);
	assert_int_equal(jw_debuginfo__lookup(d, fx->id, elf, "app", true, path, sizeof(path)),
			 JW_DEBUG_MISSING);
	/* No store at all: the same places. */
	assert_int_equal(jw_debuginfo__lookup(NULL, fx->id, elf, "app.debug", true, path,
					      sizeof(path)),
			 JW_DEBUG_FOUND);
	jw_debuginfo__free(d);
}

static void test_why_missing(void **state)
{
	struct fixture *fx = *state;
	struct jw_debuginfo *d = jw_debuginfo__new("/nonexistent", 1 << 20);
	char path[PATH_MAX], why[512];

	assert_non_null(d);
	assert_int_equal(jw_debuginfo__wait(d, fx->id, fx->self, 1000, path, sizeof(path), why,
					    sizeof(why)),
			 JW_DEBUG_MISSING);
	assert_non_null(strstr(why, fx->id));
	assert_non_null(strstr(why, "/nonexistent, /usr/lib/debug"));
	assert_non_null(strstr(why, "DEBUGINFOD_URLS is not set"));
	jw_debuginfo__free(d);
}

/* debuginfod at a port nothing listens on: the fetch fails, the wait says how. */
static void test_server_down(void **state)
{
	struct fixture *fx = *state;
	char path[PATH_MAX], why[512], cache[PATH_MAX];
	struct jw_debuginfo *d;

	snprintf(cache, sizeof(cache), "%s/cache", fx->dir);
	setenv("DEBUGINFOD_URLS", "http://127.0.0.1:1", 1);
	setenv("DEBUGINFOD_CACHE_PATH", cache, 1);
	d = jw_debuginfo__new(NULL, 1 << 20);
	unsetenv("DEBUGINFOD_URLS");
	assert_non_null(d);
	if (!jw_debuginfo__remote(d)) {
		jw_debuginfo__free(d);
		skip();	/* no libdebuginfod.so.1 on this machine */
	}
	/* During a Dwfl's warm-up nothing is fetched. */
	assert_int_equal(jw_debuginfo__lookup(d, fx->id, fx->self, NULL, false, path,
					      sizeof(path)),
			 JW_DEBUG_MISSING);
	assert_int_equal(jw_debuginfo__wait(d, fx->id, fx->self, 30000, path, sizeof(path), why,
					    sizeof(why)),
			 JW_DEBUG_MISSING);
	assert_non_null(strstr(why, "and debuginfod: "));
	/* Asked once: the answer is remembered. */
	assert_int_equal(jw_debuginfo__lookup(d, fx->id, fx->self, NULL, true, path, sizeof(path)),
			 JW_DEBUG_MISSING);
	assert_int_equal(jw_debuginfo__pending(d), 0);
	jw_debuginfo__free(d);
	unsetenv("DEBUGINFOD_CACHE_PATH");
}

/* A failed fetch is tried again: "none" after libdebuginfod's 10 min, "unreached" backing off. */
static void test_retry_schedule(void **state)
{
	const uint64_t s = 1000000000ULL;

	(void)state;
	assert_true(jw_debuginfo_retry_ns(-ENOENT, 1) == 600 * s);
	assert_true(jw_debuginfo_retry_ns(-ENOENT, 9) == 600 * s);
	assert_true(jw_debuginfo_retry_ns(-ECONNREFUSED, 1) == 30 * s);
	assert_true(jw_debuginfo_retry_ns(-ECONNREFUSED, 2) == 60 * s);
	assert_true(jw_debuginfo_retry_ns(-ETIMEDOUT, 4) == 240 * s);
	assert_true(jw_debuginfo_retry_ns(-EHOSTUNREACH, 7) == 1800 * s);
	assert_true(jw_debuginfo_retry_ns(-EHOSTUNREACH, 4000000000U) == 1800 * s);
	assert_true(jw_debuginfo_retry_ns(-ENOSYS, 1) == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_by_build_id, setup, teardown),
		cmocka_unit_test_setup_teardown(test_by_debuglink, setup, teardown),
		cmocka_unit_test_setup_teardown(test_why_missing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_server_down, setup, teardown),
		cmocka_unit_test(test_retry_schedule),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
