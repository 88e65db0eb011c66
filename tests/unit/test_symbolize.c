// SPDX-License-Identifier: GPL-2.0-only
/*
 * The symbolizer on this very process (no privileges needed): it names its own code, learns of
 * a library loaded after it was made, and does not make its Dwfl anew for anonymous memory (a
 * heap, JIT code) that comes and goes: libdwfl 0.188 keeps mappings and file descriptors of an
 * ended Dwfl, so every needless remake would leak them.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "stacks/symbolize.h"

/* Longer than the symbolizer's pause between two reads of the mappings. */
#define PAST_REFRESH_NS (250 * 1000000L)

/* This process's mappings of files (anonymous ones come and go with any allocator). */
static size_t count_file_mappings(void)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[4352];
	size_t n = 0;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		n += strchr(line, '/') != NULL;
	fclose(f);
	return n;
}

static size_t count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	size_t n = 0;

	assert_non_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

static void pause_past_refresh(void)
{
	struct timespec ts = { .tv_nsec = PAST_REFRESH_NS };

	nanosleep(&ts, NULL);
}

__attribute__((noinline)) int jw_test_marker(void)
{
	return 42;
}

static void test_names_own_code(void **state)
{
	struct jw_symbolizer *s = jw_symbolizer__new(getpid());
	struct jw_frame fr;

	(void)state;
	assert_non_null(s);
	jw_symbolizer__frame(s, (uint64_t)(uintptr_t)&jw_test_marker + 1, false, &fr);
	assert_non_null(fr.symbol);
	assert_string_equal(fr.symbol, "jw_test_marker");
	assert_int_equal(fr.sym_off, 1);
	jw_symbolizer__free(s);
}

/*
 * Anonymous mappings made and unmade between lookups of addresses in no module (each of which
 * looks at the mappings again): the process's mappings and descriptors stay as they were.
 */
static void test_anonymous_churn_keeps_dwfl(void **state)
{
	struct jw_symbolizer *s = jw_symbolizer__new(getpid());
	size_t maps, fds;
	struct jw_frame fr;
	int i;

	(void)state;
	assert_non_null(s);
	jw_symbolizer__frame(s, 0x10, false, &fr);
	maps = count_file_mappings();
	fds = count_fds();
	for (i = 0; i < 4; i++) {
		void *p = mmap(NULL, 4096 * (i + 1), PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		assert_true(p != MAP_FAILED);
		pause_past_refresh();
		jw_symbolizer__frame(s, 0x10, false, &fr);
		assert_null(fr.symbol);
		munmap(p, 4096 * (i + 1));
	}
	/* A remade Dwfl would have left tens of file mappings (debug files) each time. */
	assert_int_equal(count_file_mappings(), maps);
	assert_int_equal(count_fds(), fds);
	jw_symbolizer__free(s);
}

/* A library loaded after the symbolizer was made is named once the mappings are read again. */
static void test_learns_new_library(void **state)
{
	struct jw_symbolizer *s = jw_symbolizer__new(getpid());
	struct jw_frame fr;
	void *lib, *fn;

	(void)state;
	assert_non_null(s);
	lib = dlopen("libresolv.so.2", RTLD_NOW | RTLD_LOCAL);
	assert_non_null(lib);
	fn = dlsym(lib, "__b64_ntop");
	assert_non_null(fn);
	pause_past_refresh();
	jw_symbolizer__frame(s, (uint64_t)(uintptr_t)fn, false, &fr);
	assert_non_null(fr.module);
	assert_non_null(strstr(fr.module, "libresolv"));
	assert_non_null(fr.symbol);
	assert_non_null(strstr(fr.symbol, "b64_ntop"));
	jw_symbolizer__free(s);
	dlclose(lib);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names_own_code),
		cmocka_unit_test(test_anonymous_churn_keeps_dwfl),
		cmocka_unit_test(test_learns_new_library),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
