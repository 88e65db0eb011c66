// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests of the stack log: header, tree, folded and wchan bodies, the file name. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "report/report_stack.h"

#define APP "/usr/bin/redis-server"

struct fixture {
	struct jw_stacktree *tree;
	struct jw_stack_report r;
	char *out;
	size_t len;
};

/* Every expected time below is UTC; the report writes local time. */
static int group_setup(void **state)
{
	(void)state;
	if (setenv("TZ", "UTC", 1))
		return -1;
	tzset();
	return 0;
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	fx->tree = jw_stacktree__new();
	if (!fx->tree) {
		free(fx);
		return -1;
	}
	fx->r = (struct jw_stack_report){
		.pid = 4242,
		.tid = 4243,
		.exe = APP,
		.build_id = "0a1b2c3d4e5f",
		.begin_time_ms = 1709294400123,
		.end_time_ms = 1709294400423,
		.wall_ms = 300.125,
		.cpu_ms = 12.5,
		.runq_ms = 0.25,
		.blocked_ms = 1.0 / 3.0,
		.samples = 3,
		.heaviest_stack = "b<-a<-main",
		.tree = fx->tree,
		.format = JW_FORMAT_TREE,
	};
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	jw_stacktree__free(fx->tree);
	free(fx->out);
	free(fx);
	/* A test that changed the zone and failed midway must not skew the next ones. */
	setenv("TZ", "UTC", 1);
	tzset();
	return 0;
}

static const char *write_report(struct fixture *fx)
{
	FILE *f;
	int err;

	free(fx->out);
	fx->out = NULL;
	f = open_memstream(&fx->out, &fx->len);
	assert_non_null(f);
	err = jw_stack_report_write(&fx->r, f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(err, 0);
	return fx->out;
}

static struct jw_frame fn(const char *sym, uint64_t rel, uint64_t off)
{
	struct jw_frame fr = {
		.kind = JW_FRAME_NATIVE,
		.pc = 0x555555554000ull + rel,
		.rel_pc = rel,
		.module = APP,
		.build_id = "0a1b2c3d4e5f",
		.symbol = sym,
		.sym_off = off,
	};

	return fr;
}

static void add_stacks(struct fixture *fx)
{
	struct jw_frame ab[] = { fn("main", 0x1000, 16), fn("a", 0x2000, 4), fn("b", 0x3000, 8) };
	struct jw_frame c[] = { fn("main", 0x1000, 16), fn("c", 0x4000, 0) };

	assert_int_equal(jw_stacktree__add(fx->tree, ab, 3, true, 2, false), 0);
	assert_int_equal(jw_stacktree__add(fx->tree, c, 2, true, 1, false), 0);
}

#define HEADER                                 \
	"pid: 4242\n"                          \
	"tid: 4243\n"                          \
	"exe: " APP "\n"                       \
	"build_id: 0a1b2c3d4e5f\n"             \
	"begin_time: 2024-03-01 12:00:00.123\n" \
	"end_time: 2024-03-01 12:00:00.423\n"  \
	"wall_ms: 300.125\n"                   \
	"cpu_ms: 12.500\n"                     \
	"runq_ms: 0.250\n"                     \
	"blocked_ms: 0.333\n"                  \
	"samples: 3\n"                         \
	"heaviest_stack: b<-a<-main\n"         \
	"\n"

static void test_tree_report(void **state)
{
	struct fixture *fx = *state;

	add_stacks(fx);
	assert_string_equal(write_report(fx),
			    HEADER
			    "3 #00 pc 00001000 " APP "(main+16)(0a1b2c3d4e5f)\n"
			    "    2 #01 pc 00002000 " APP "(a+4)(0a1b2c3d4e5f)\n"
			    "        2 #02 pc 00003000 " APP "(b+8)(0a1b2c3d4e5f)\n"
			    "    1 #01 pc 00004000 " APP "(c+0)(0a1b2c3d4e5f)\n");
}

static void test_folded_report(void **state)
{
	struct fixture *fx = *state;

	add_stacks(fx);
	fx->r.format = JW_FORMAT_FOLDED;
	assert_string_equal(write_report(fx), HEADER "main;a;b 2\nmain;c 1\n");
}

/* No stack could be taken: the blocking kernel function stands in for the tree. */
static void test_wchan(void **state)
{
	struct fixture *fx = *state;

	fx->r.wchan = "do_epoll_wait";
	assert_string_equal(write_report(fx), HEADER "wchan: do_epoll_wait\n");
	fx->r.format = JW_FORMAT_FOLDED;
	assert_string_equal(write_report(fx), HEADER "wchan: do_epoll_wait\n");
	fx->r.wchan = NULL;
	fx->r.tree = NULL;
	assert_string_equal(write_report(fx), HEADER "wchan: unknown\n");
}

static void test_missing_values(void **state)
{
	struct fixture *fx = *state;

	fx->r.build_id = NULL;
	fx->r.exe = NULL;
	fx->r.heaviest_stack = "";
	fx->r.begin_time_ms = 1704067199999;
	fx->r.end_time_ms = 1704067200000;
	fx->r.wall_ms = 1;
	fx->r.cpu_ms = 0;
	fx->r.runq_ms = 0;
	fx->r.blocked_ms = 0;
	fx->r.samples = 0;
	fx->r.wchan = "0";
	assert_string_equal(write_report(fx),
			    "pid: 4242\n"
			    "tid: 4243\n"
			    "exe: unknown\n"
			    "build_id: none\n"
			    "begin_time: 2023-12-31 23:59:59.999\n"
			    "end_time: 2024-01-01 00:00:00.000\n"
			    "wall_ms: 1.000\n"
			    "cpu_ms: 0.000\n"
			    "runq_ms: 0.000\n"
			    "blocked_ms: 0.000\n"
			    "samples: 0\n"
			    "heaviest_stack: none\n"
			    "\n"
			    "wchan: 0\n");
}

/* A newline in a header value must not forge another header line. */
static void test_header_control_bytes(void **state)
{
	struct fixture *fx = *state;
	const char *out;

	fx->r.exe = "/tmp/x\nsamples: 99";
	fx->r.wchan = "a\tb";
	out = write_report(fx);
	assert_non_null(strstr(out, "\nexe: /tmp/x?samples: 99\n"));
	assert_null(strstr(out, "\nsamples: 99\n"));
	assert_non_null(strstr(out, "\n\nwchan: a?b\n"));
}

/* Times are local: the same instant in Tokyo (UTC+9, no DST). */
static void test_local_time(void **state)
{
	struct fixture *fx = *state;
	char name[64];

	assert_int_equal(setenv("TZ", "JST-9", 1), 0);
	tzset();
	fx->r.wchan = "x";
	write_report(fx);
	jw_stack_report_name(1, 1709294400123, name, sizeof(name));
	assert_int_equal(setenv("TZ", "UTC", 1), 0);
	tzset();
	assert_non_null(strstr(fx->out, "\nbegin_time: 2024-03-01 21:00:00.123\n"));
	assert_non_null(strstr(fx->out, "\nend_time: 2024-03-01 21:00:00.423\n"));
	assert_string_equal(name, "stack-1-20240301210000-123.txt");
}

static void test_write_error(void **state)
{
	struct fixture *fx = *state;
	FILE *f = fopen("/dev/null", "r");

	assert_non_null(f);
	add_stacks(fx);
	/* Writes to a stream opened for reading fail with EBADF. */
	assert_int_equal(jw_stack_report_write(&fx->r, f), -EBADF);
	fx->r.tree = NULL;
	assert_int_equal(jw_stack_report_write(&fx->r, f), -EBADF);
	fclose(f);
}

static void test_name(void **state)
{
	char buf[64], small[12];

	(void)state;
	jw_stack_report_name(4242, 1709294400123, buf, sizeof(buf));
	assert_string_equal(buf, "stack-4242-20240301120000-123.txt");
	jw_stack_report_name(7, 1704067199005, buf, sizeof(buf));
	assert_string_equal(buf, "stack-7-20231231235959-005.txt");
	jw_stack_report_name(4294967295u, 1704067200000, buf, sizeof(buf));
	assert_string_equal(buf, "stack-4294967295-20240101000000-000.txt");
	jw_stack_report_name(4242, 1709294400123, small, sizeof(small));
	assert_string_equal(small, "stack-4242-");
	/* The jank's id alone, as the profiles' jank label has it. */
	jw_report_file_name(NULL, 4242, 1709294400123, NULL, buf, sizeof(buf));
	assert_string_equal(buf, "4242-20240301120000-123");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_tree_report, setup, teardown),
		cmocka_unit_test_setup_teardown(test_folded_report, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wchan, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_values, setup, teardown),
		cmocka_unit_test_setup_teardown(test_header_control_bytes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_local_time, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_error, setup, teardown),
		cmocka_unit_test(test_name),
	};

	return cmocka_run_group_tests(tests, group_setup, NULL);
}
