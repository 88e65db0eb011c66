// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests of perf map reading: line parsing, names, lookups, incremental refresh, re-JIT. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "stacks/perfmap.h"

struct fixture {
	char dir[64];		/* a temporary directory, removed with what is in it */
	char path[96];		/* the perf map in it */
	struct jw_perfmap *map;
};

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	snprintf(fx->dir, sizeof(fx->dir), "/tmp/jw-perfmap-XXXXXX");
	if (!mkdtemp(fx->dir)) {
		free(fx);
		return -1;
	}
	snprintf(fx->path, sizeof(fx->path), "%s/perf-1234.map", fx->dir);
	fx->map = jw_perfmap__open_file(fx->path, JW_PERFMAP_MAX_ENTRIES);
	if (!fx->map) {
		rmdir(fx->dir);
		free(fx);
		return -1;
	}
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	jw_perfmap__free(fx->map);
	unlink(fx->path);
	rmdir(fx->dir);
	free(fx);
	return 0;
}

/* Appends @text to the fixture's map file, creating it. */
static void append(struct fixture *fx, const char *text)
{
	int fd = open(fx->path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static void refresh(struct fixture *fx)
{
	assert_int_equal(jw_perfmap__refresh(fx->map), 0);
}

/* The function the map names at @addr, or NULL. */
static const char *func_at(struct fixture *fx, uint64_t addr)
{
	const struct jw_perfmap_entry *e = jw_perfmap__lookup(fx->map, addr);

	return e ? e->func : NULL;
}

static void assert_func_at(struct fixture *fx, uint64_t addr, const char *func)
{
	const char *got = func_at(fx, addr);

	if (!func)
		assert_null(got);
	else
		assert_string_equal(got ? got : "(none)", func);
}

/* ---- parsing ---- */

static void assert_parses(const char *line, uint64_t start, uint64_t size, const char *name)
{
	struct jw_perfmap_line l;

	assert_int_equal(jw_perfmap_parse_line(line, strlen(line), &l), 0);
	assert_true(l.start == start);
	assert_true(l.size == size);
	assert_int_equal(l.name_len, strlen(name));
	assert_memory_equal(l.name, name, l.name_len);
}

static void assert_broken(const char *line)
{
	struct jw_perfmap_line l;

	if (jw_perfmap_parse_line(line, strlen(line), &l) != -EINVAL)
		fail_msg("parsed a broken line: \"%s\"", line);
}

static void test_parse_line_fields(void **state)
{
	(void)state;
	assert_parses("7fcf34029c40 218 JS:*busyWork /tmp/x.js:3:18", 0x7fcf34029c40, 0x218,
		      "JS:*busyWork /tmp/x.js:3:18");
	assert_parses("0x7fcf34029c40 0x218 LazyCompile:~f file.js:1", 0x7fcf34029c40, 0x218,
		      "LazyCompile:~f file.js:1");
	assert_parses("0X10 0Xff Builtin:ArgumentsAdaptorTrampoline", 0x10, 0xff,
		      "Builtin:ArgumentsAdaptorTrampoline");
	assert_parses("DeadBeef 1 BytecodeHandler:Ldar", 0xdeadbeef, 1, "BytecodeHandler:Ldar");
	/* Blanks around fields, a CRLF ending; the name keeps its inner spaces. */
	assert_parses("  10\t\t20   a  b \r", 0x10, 0x20, "a  b");
	/* The largest values: 16 digits, leading zeros, the end of the address space. */
	assert_parses("00000000000000000010 1 x", 0x10, 1, "x");
	assert_parses("fffffffffffffffe 1 x", 0xfffffffffffffffe, 1, "x");
	assert_parses("0 10000000 huge", 0, 0x10000000, "huge");
}

static void test_parse_line_broken(void **state)
{
	(void)state;
	assert_broken("");
	assert_broken("   ");
	assert_broken("7f00");
	assert_broken("7f00 10");
	assert_broken("7f00 10 \t \r");			/* empty name */
	assert_broken("zz 10 name");			/* bad hex */
	assert_broken("7f00 1g name");
	assert_broken("7f00x 10 name");
	assert_broken("0x 10 name");			/* a prefix without digits */
	assert_broken("7f00 0x name");
	assert_broken("-10 10 name");
	assert_broken("10000000000000000 1 name");	/* over 64 bits */
	assert_broken("1 10000000000000000 name");
	assert_broken("7f00 0 name");			/* empty code */
	assert_broken("7f00 10000001 name");		/* over JW_PERFMAP_SIZE_MAX */
	assert_broken("ffffffffffffffff 1 name");	/* past the address space */
	assert_broken("fffffffffffffff0 11 name");
}

static void test_parse_line_not_terminated(void **state)
{
	const char text[] = "10 20 name and more";
	struct jw_perfmap_line l;

	(void)state;
	/* Only @len bytes count: the name ends there, and a cut inside SIZE keeps no name. */
	assert_int_equal(jw_perfmap_parse_line(text, 10, &l), 0);
	assert_int_equal(l.name_len, 4);
	assert_memory_equal(l.name, "name", 4);
	assert_int_equal(jw_perfmap_parse_line(text, 5, &l), -EINVAL);
}

static void assert_split(const char *name, const char *func, const char *src)
{
	struct jw_perfmap_name nm;

	jw_perfmap_split_name(name, strlen(name), &nm);
	assert_int_equal(nm.func_len, strlen(func));
	assert_memory_equal(nm.func, func, nm.func_len);
	if (!src) {
		assert_null(nm.src);
		assert_int_equal(nm.src_len, 0);
		return;
	}
	assert_non_null(nm.src);
	assert_int_equal(nm.src_len, strlen(src));
	assert_memory_equal(nm.src, src, nm.src_len);
}

static void test_split_name(void **state)
{
	(void)state;
	assert_split("JS:*busyWork /tmp/x.js:3:18", "busyWork", "/tmp/x.js:3:18");
	assert_split("LazyCompile:~f file.js:1", "f", "file.js:1");
	assert_split("Builtin:ArgumentsAdaptorTrampoline", "ArgumentsAdaptorTrampoline", NULL);
	assert_split("BytecodeHandler:Ldar", "Ldar", NULL);
	/* Sparkplug and Maglev marks; no mark at all. */
	assert_split("JS:^busyWork /tmp/x.js:3:18", "busyWork", "/tmp/x.js:3:18");
	assert_split("JS:+busyWork /tmp/x.js:3:18", "busyWork", "/tmp/x.js:3:18");
	assert_split("Function:busyWork x.js:3", "busyWork", "x.js:3");
	/* Getters hold a space; node's own modules have a scheme. */
	assert_split("JS:~get foo /tmp/x.js:2:18", "get foo", "/tmp/x.js:2:18");
	assert_split("JS:~prepareExecution node:internal/process/pre_execution:96:26",
		     "prepareExecution", "node:internal/process/pre_execution:96:26");
	/* Anonymous functions: no name, a source. */
	assert_split("JS:~ /tmp/x.js:1:1", "", "/tmp/x.js:1:1");
	assert_split("Eval:~ node:internal/main/run_main_module:1:1", "",
		     "node:internal/main/run_main_module:1:1");
	/* A last word that is no position is part of the name. */
	assert_split("RegExp:a b", "a b", NULL);
	assert_split("JS:*f /tmp/x.js", "f /tmp/x.js", NULL);
	assert_split("JS:*f :12", "f :12", NULL);
	/* No type prefix; a colon after a blank is no type. */
	assert_split("busyWork", "busyWork", NULL);
	assert_split("a b:c", "a b:c", NULL);
	assert_split("Builtin:", "", NULL);
	assert_split("*", "", NULL);
}

static void test_parse_nspid(void **state)
{
	pid_t pid = 0;

	(void)state;
	assert_int_equal(jw_perfmap_parse_nspid("Name:\tnode\nPid:\t4242\nNSpid:\t4242\n", &pid),
			 0);
	assert_int_equal(pid, 4242);
	/* In a container: the last field is the pid the process itself sees. */
	assert_int_equal(jw_perfmap_parse_nspid("Pid:\t4242\nNSpid:\t4242\t17\t1\n", &pid), 0);
	assert_int_equal(pid, 1);
	/* Kernels without NSpid; PPid and TracerPid are no Pid. */
	assert_int_equal(jw_perfmap_parse_nspid("PPid:\t1\nTracerPid:\t0\nPid:\t99\n", &pid), 0);
	assert_int_equal(pid, 99);
	assert_int_equal(jw_perfmap_parse_nspid("Name:\tx\nPPid:\t1\n", &pid), -EINVAL);
	assert_int_equal(jw_perfmap_parse_nspid("NSpid:\n", &pid), -EINVAL);
	assert_int_equal(jw_perfmap_parse_nspid("NSpid:\t0\n", &pid), -EINVAL);
}

static void test_open_own_process(void **state)
{
	struct jw_perfmap *map;
	char want[96];

	(void)state;
	map = jw_perfmap__open(getpid());
	assert_non_null(map);
	snprintf(want, sizeof(want), "/proc/%d/root/tmp/perf-%d.map", getpid(), getpid());
	assert_string_equal(jw_perfmap__path(map), want);
	jw_perfmap__free(map);
	jw_perfmap__free(NULL);
	errno = 0;
	assert_null(jw_perfmap__open(-5));
	assert_int_not_equal(errno, 0);
}

/* ---- the map ---- */

static void test_missing_file_then_created(void **state)
{
	struct fixture *fx = *state;

	refresh(fx);
	assert_int_equal(jw_perfmap__count(fx->map), 0);
	assert_null(jw_perfmap__lookup(fx->map, 0x1000));
	append(fx, "1000 10 JS:*f /a.js:1:1\n");
	refresh(fx);
	assert_int_equal(jw_perfmap__count(fx->map), 1);
	assert_func_at(fx, 0x1000, "f");
}

static void test_lookup_boundaries(void **state)
{
	struct fixture *fx = *state;
	const struct jw_perfmap_entry *e;

	append(fx, "2000 100 JS:*b /a.js:2:1\n"
		   "1000 100 JS:*a /a.js:1:1\n"
		   "2100 1 Builtin:c\n");
	refresh(fx);
	assert_int_equal(jw_perfmap__count(fx->map), 3);
	assert_func_at(fx, 0xfff, NULL);
	assert_func_at(fx, 0x1000, "a");	/* start inclusive */
	assert_func_at(fx, 0x10ff, "a");
	assert_func_at(fx, 0x1100, NULL);	/* start + size exclusive */
	assert_func_at(fx, 0x1fff, NULL);
	assert_func_at(fx, 0x2000, "b");
	assert_func_at(fx, 0x20ff, "b");
	assert_func_at(fx, 0x2100, "c");	/* adjacent: the next one */
	assert_func_at(fx, 0x2101, NULL);
	assert_func_at(fx, 0, NULL);
	assert_func_at(fx, UINT64_MAX, NULL);
	e = jw_perfmap__lookup(fx->map, 0x2080);
	assert_non_null(e);
	assert_true(e->start == 0x2000 && e->size == 0x100);
	assert_string_equal(e->name, "JS:*b /a.js:2:1");
	assert_string_equal(e->src, "/a.js:2:1");
	e = jw_perfmap__lookup(fx->map, 0x2100);
	assert_non_null(e);
	assert_null(e->src);
	assert_int_equal(jw_perfmap__bad_lines(fx->map), 0);
}

static void test_entry_names(void **state)
{
	struct fixture *fx = *state;
	const struct jw_perfmap_entry *e;

	append(fx, "1000 10 JS:~ /tmp/x.js:1:1\n"
		   "2000 10 Builtin:\n"
		   "3000 10 JS:~get foo /tmp/x.js:2:18\n");
	refresh(fx);
	e = jw_perfmap__lookup(fx->map, 0x1000);
	assert_string_equal(e->func, "(anonymous)");
	assert_string_equal(e->src, "/tmp/x.js:1:1");
	/* Nothing left after the prefix: the raw name, not an empty one. */
	e = jw_perfmap__lookup(fx->map, 0x2000);
	assert_string_equal(e->func, "Builtin:");
	assert_null(e->src);
	e = jw_perfmap__lookup(fx->map, 0x3000);
	assert_string_equal(e->func, "get foo");
}

static void test_refresh_reads_appends(void **state)
{
	struct fixture *fx = *state;

	append(fx, "1000 10 JS:*a /a.js:1:1\n");
	refresh(fx);
	assert_int_equal(jw_perfmap__count(fx->map), 1);
	/* Nothing new: nothing changes. */
	refresh(fx);
	assert_int_equal(jw_perfmap__count(fx->map), 1);
	append(fx, "3000 10 JS:*c /a.js:3:1\n500 10 JS:*z /a.js:9:1\n");
	refresh(fx);
	assert_int_equal(jw_perfmap__count(fx->map), 3);
	assert_func_at(fx, 0x1005, "a");
	assert_func_at(fx, 0x3005, "c");
	assert_func_at(fx, 0x505, "z");
	append(fx, "2000 10 JS:*b /a.js:2:1\n");
	refresh(fx);
	assert_int_equal(jw_perfmap__count(fx->map), 4);
	assert_func_at(fx, 0x2000, "b");
	assert_func_at(fx, 0x1000, "a");
}

static void test_partial_last_line(void **state)
{
	struct fixture *fx = *state;

	append(fx, "1000 10 JS:*a /a.js:1:1\n2000 10 JS:*bu");
	refresh(fx);
	assert_int_equal(jw_perfmap__count(fx->map), 1);
	assert_func_at(fx, 0x2000, NULL);
	assert_int_equal(jw_perfmap__bad_lines(fx->map), 0);
	/* The rest of the line arrives in two writes. */
	append(fx, "syWork /a.js:2");
	refresh(fx);
	assert_func_at(fx, 0x2000, NULL);
	append(fx, ":5\n3000 1");
	refresh(fx);
	assert_int_equal(jw_perfmap__count(fx->map), 2);
	assert_func_at(fx, 0x2000, "busyWork");
	assert_string_equal(jw_perfmap__lookup(fx->map, 0x2000)->src, "/a.js:2:5");
	append(fx, "0 Builtin:c\n");
	refresh(fx);
	assert_func_at(fx, 0x3005, "c");
	assert_int_equal(jw_perfmap__count(fx->map), 3);
	assert_int_equal(jw_perfmap__bad_lines(fx->map), 0);
}

static void test_bad_lines_counted(void **state)
{
	struct fixture *fx = *state;

	append(fx, "1000 10 JS:*a /a.js:1:1\n"
		   "\n"
		   "garbage\n"
		   "2000 10\n"
		   "2000 zz JS:*b\n"
		   "10000000000000000 10 JS:*c\n"
		   "2000 7fffffffffffffff JS:*d\n"
		   "fffffffffffffff0 20 JS:*e\n"
		   "3000 10 JS:*f /a.js:3:1\n");
	refresh(fx);
	assert_int_equal(jw_perfmap__bad_lines(fx->map), 7);
	assert_int_equal(jw_perfmap__count(fx->map), 2);
	assert_func_at(fx, 0x1000, "a");
	assert_func_at(fx, 0x3000, "f");
	assert_func_at(fx, 0x2000, NULL);
	/* A NUL in a line (a hole in the file): broken. */
	{
		int fd = open(fx->path, O_WRONLY | O_APPEND | O_CLOEXEC);

		assert_true(fd >= 0);
		assert_int_equal(write(fd, "4000 10 J\0S\n", 12), 12);
		close(fd);
	}
	refresh(fx);
	assert_int_equal(jw_perfmap__bad_lines(fx->map), 8);
	assert_func_at(fx, 0x4000, NULL);
}

static void test_overlong_line(void **state)
{
	struct fixture *fx = *state;
	size_t len = 3 * JW_PERFMAP_LINE_MAX;
	char *big = malloc(len + 1);

	assert_non_null(big);
	memset(big, 'x', len);
	big[len] = '\0';
	memcpy(big, "5000 10 JS:*", 12);
	append(fx, "1000 10 JS:*a /a.js:1:1\n");
	append(fx, big);
	refresh(fx);
	/* Still no newline, but already too long: broken once, however it goes on. */
	assert_int_equal(jw_perfmap__bad_lines(fx->map), 1);
	append(fx, big);
	refresh(fx);
	assert_int_equal(jw_perfmap__bad_lines(fx->map), 1);
	append(fx, "tail\n2000 10 JS:*b /a.js:2:1\n");
	refresh(fx);
	assert_int_equal(jw_perfmap__bad_lines(fx->map), 1);
	assert_int_equal(jw_perfmap__count(fx->map), 2);
	assert_func_at(fx, 0x5000, NULL);
	assert_func_at(fx, 0x2000, "b");
	free(big);
}

static void test_many_lines_across_reads(void **state)
{
	struct fixture *fx = *state;
	size_t i, slot, slots = 40000, n = 70000;
	char want[32];
	FILE *f = fopen(fx->path, "w");

	assert_non_null(f);
	/*
	 * Descending addresses, so that sorting is needed; more lines than one read and one merge
	 * take, and the last 30000 re-JIT the first 30000 ranges across those boundaries.
	 */
	for (i = 0; i < n; i++)
		fprintf(f, "%zx 10 JS:*fn%zu /app/f.js:%zu:1\n", 0x1000000 - (i % slots) * 0x10, i, i);
	fclose(f);
	refresh(fx);
	assert_int_equal(jw_perfmap__count(fx->map), slots);
	for (slot = 0; slot < slots; slot += 997) {
		snprintf(want, sizeof(want), "fn%zu", slot + (slot < n - slots ? slots : 0));
		assert_func_at(fx, 0x1000000 - slot * 0x10 + 0xf, want);
	}
	assert_int_equal(jw_perfmap__bad_lines(fx->map), 0);
	assert_int_equal(jw_perfmap__dropped(fx->map), 0);
}

static void test_truncated_file_restarts(void **state)
{
	struct fixture *fx = *state;
	int fd;

	append(fx, "1000 10 JS:*a /a.js:1:1\n2000 10 JS:*b /a.js:2:1\n");
	refresh(fx);
	assert_int_equal(jw_perfmap__count(fx->map), 2);
	/* Rewritten in place, shorter: the old entries are gone. */
	fd = open(fx->path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "3000 10 JS:*c\n", 14), 14);
	close(fd);
	refresh(fx);
	assert_int_equal(jw_perfmap__count(fx->map), 1);
	assert_func_at(fx, 0x1000, NULL);
	assert_func_at(fx, 0x3000, "c");
}

static void test_recreated_file_restarts(void **state)
{
	struct fixture *fx = *state;

	append(fx, "1000 10 JS:*a /a.js:1:1\n2000 10 JS:*b /a.js:2:1\n");
	refresh(fx);
	assert_int_equal(jw_perfmap__count(fx->map), 2);
	/* A new file (a new process with the same pid), longer than the old one. */
	assert_int_equal(unlink(fx->path), 0);
	append(fx, "4000 10 JS:*d /b.js:1:1\n5000 10 JS:*e /b.js:2:1\n6000 10 JS:*f /b.js:3:1\n");
	refresh(fx);
	assert_int_equal(jw_perfmap__count(fx->map), 3);
	assert_func_at(fx, 0x1000, NULL);
	assert_func_at(fx, 0x4000, "d");
	assert_func_at(fx, 0x6000, "f");
}

static void test_removed_file_still_read(void **state)
{
	struct fixture *fx = *state;
	int fd;

	append(fx, "1000 10 JS:*a /a.js:1:1\n");
	fd = open(fx->path, O_WRONLY | O_APPEND | O_CLOEXEC);
	assert_true(fd >= 0);
	refresh(fx);
	/* The process exited and its /tmp is gone from our view: the open file still reads. */
	assert_int_equal(unlink(fx->path), 0);
	assert_int_equal(write(fd, "2000 10 JS:*b\n", 14), 14);
	close(fd);
	refresh(fx);
	assert_int_equal(jw_perfmap__count(fx->map), 2);
	assert_func_at(fx, 0x2000, "b");
}

static void test_rejit_same_range(void **state)
{
	struct fixture *fx = *state;

	/* Within one read and across reads, the later line for a range wins. */
	append(fx, "1000 100 JS:~f /a.js:1:1\n1000 100 JS:*f2 /a.js:1:1\n");
	refresh(fx);
	assert_int_equal(jw_perfmap__count(fx->map), 1);
	assert_func_at(fx, 0x1050, "f2");
	append(fx, "1000 100 JS:*f3 /a.js:1:1\n");
	refresh(fx);
	assert_int_equal(jw_perfmap__count(fx->map), 1);
	assert_func_at(fx, 0x1050, "f3");
}

static void test_rejit_overlaps(void **state)
{
	struct fixture *fx = *state;

	append(fx, "1000 100 JS:*a /a.js:1:1\n"
		   "1100 100 JS:*b /a.js:2:1\n"
		   "1200 100 JS:*c /a.js:3:1\n");
	refresh(fx);
	/* New code over the end of a and the start of b: both were freed for it. */
	append(fx, "1080 100 JS:*n /a.js:4:1\n");
	refresh(fx);
	assert_func_at(fx, 0x1000, NULL);
	assert_func_at(fx, 0x1080, "n");
	assert_func_at(fx, 0x117f, "n");
	assert_func_at(fx, 0x1180, NULL);
	assert_func_at(fx, 0x1200, "c");
	assert_int_equal(jw_perfmap__count(fx->map), 2);
	/* In one read: small code inside a large one replaces it, and a later large one both. */
	append(fx, "2000 400 JS:*big /a.js:5:1\n"
		   "2100 10 JS:*small /a.js:6:1\n");
	refresh(fx);
	assert_func_at(fx, 0x2000, NULL);
	assert_func_at(fx, 0x2105, "small");
	append(fx, "3000 10 JS:*s1 /a.js:7:1\n"
		   "3020 10 JS:*s2 /a.js:8:1\n"
		   "3000 100 JS:*whole /a.js:9:1\n");
	refresh(fx);
	assert_func_at(fx, 0x3005, "whole");
	assert_func_at(fx, 0x3025, "whole");
	/* Replaced code stays replaced even when what replaced it is replaced in turn. */
	append(fx, "4000 100 JS:*x /a.js:1:1\n");
	refresh(fx);
	append(fx, "40f0 100 JS:*y /a.js:2:1\n4180 10 JS:*z /a.js:3:1\n");
	refresh(fx);
	assert_func_at(fx, 0x4000, NULL);
	assert_func_at(fx, 0x40f0, NULL);
	assert_func_at(fx, 0x4185, "z");
	assert_int_equal(jw_perfmap__count(fx->map), 5);
}

static void test_full_map_drops(void **state)
{
	struct fixture *fx = *state;

	jw_perfmap__free(fx->map);
	fx->map = jw_perfmap__open_file(fx->path, 3);
	assert_non_null(fx->map);
	append(fx, "1000 10 a\n2000 10 b\n3000 10 c\n4000 10 d\n5000 10 e\n");
	refresh(fx);
	assert_int_equal(jw_perfmap__count(fx->map), 3);
	assert_int_equal(jw_perfmap__dropped(fx->map), 2);
	assert_int_equal(jw_perfmap__bad_lines(fx->map), 0);
	assert_func_at(fx, 0x3000, "c");
	assert_func_at(fx, 0x4000, NULL);
}

/* A small deterministic generator, so that a failure can be replayed. */
static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/*
 * Random overlapping lines in random reads against the rule itself: a line stays unless a
 * later line overlaps it; an address names the line that stays there.
 */
static void test_rejit_random_against_model(void **state)
{
	struct fixture *fx = *state;
	enum { N = 600, SPACE = 0x4000 };
	uint64_t seed = 0x9e3779b97f4a7c15ULL, start[N], size[N];
	size_t i, j, written = 0;
	char line[96];

	while (written < N) {
		size_t batch = 1 + next_rand(&seed) % 40;

		for (i = written; i < N && i < written + batch; i++) {
			start[i] = 0x10000 + next_rand(&seed) % SPACE;
			size[i] = 1 + next_rand(&seed) % (next_rand(&seed) % 8 ? 0x40 : 0x400);
			snprintf(line, sizeof(line), "%" PRIx64 " %" PRIx64 " JS:*f%zu /m.js:1:1\n",
				 start[i], size[i], i);
			append(fx, line);
		}
		written = i;
		refresh(fx);
	}
	for (uint64_t addr = 0x10000 - 8; addr < 0x10000 + SPACE + 0x408; addr++) {
		const char *want = NULL;

		for (i = 0; i < N && !want; i++) {
			bool alive = addr >= start[i] && addr - start[i] < size[i];

			for (j = i + 1; j < N && alive; j++)
				if (start[j] < start[i] + size[i] && start[i] < start[j] + size[j])
					alive = false;
			if (alive) {
				snprintf(line, sizeof(line), "f%zu", i);
				want = line;
			}
		}
		assert_func_at(fx, addr, want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_line_fields),
		cmocka_unit_test(test_parse_line_broken),
		cmocka_unit_test(test_parse_line_not_terminated),
		cmocka_unit_test(test_split_name),
		cmocka_unit_test(test_parse_nspid),
		cmocka_unit_test(test_open_own_process),
		cmocka_unit_test_setup_teardown(test_missing_file_then_created, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lookup_boundaries, setup, teardown),
		cmocka_unit_test_setup_teardown(test_entry_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refresh_reads_appends, setup, teardown),
		cmocka_unit_test_setup_teardown(test_partial_last_line, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_lines_counted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_overlong_line, setup, teardown),
		cmocka_unit_test_setup_teardown(test_many_lines_across_reads, setup, teardown),
		cmocka_unit_test_setup_teardown(test_truncated_file_restarts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_recreated_file_restarts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_removed_file_still_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rejit_same_range, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rejit_overlaps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_full_map_drops, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rejit_random_against_model, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
