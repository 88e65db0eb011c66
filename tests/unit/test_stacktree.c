// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests of the stack tree: merging, order, counts, line formats, folded, heaviest. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "report/stacktree.h"

#define APP "/usr/bin/app"
#define LIBC "/usr/lib/x86_64-linux-gnu/libc.so.6"
#define LOAD 0x555555554000ull

struct fixture {
	struct jw_stacktree *tree;
	char *out;		/* the last render(), freed by the next one or teardown */
	char *heavy;
};

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
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	jw_stacktree__free(fx->tree);
	free(fx->out);
	free(fx->heavy);
	free(fx);
	return 0;
}

/* A native frame of APP at ELF address @rel, named @sym (NULL: unknown) at @off. */
static struct jw_frame fn(const char *sym, uint64_t rel, uint64_t off)
{
	struct jw_frame fr = {
		.kind = JW_FRAME_NATIVE,
		.pc = LOAD + rel,
		.rel_pc = rel,
		.module = APP,
		.symbol = sym,
		.sym_off = off,
	};

	return fr;
}

static const char *render(struct fixture *fx, bool folded)
{
	size_t len = 0;
	FILE *f;
	int err;

	free(fx->out);
	fx->out = NULL;
	f = open_memstream(&fx->out, &len);
	assert_non_null(f);
	if (folded)
		err = jw_stacktree__write_folded(fx->tree, f);
	else
		err = jw_stacktree__write_tree(fx->tree, f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(err, 0);
	return fx->out;
}

static const char *heaviest(struct fixture *fx)
{
	free(fx->heavy);
	fx->heavy = jw_stacktree__heaviest(fx->tree);
	assert_non_null(fx->heavy);
	return fx->heavy;
}

static void add(struct fixture *fx, const struct jw_frame *frames, size_t n, bool complete,
		uint32_t weight)
{
	assert_int_equal(jw_stacktree__add(fx->tree, frames, n, complete, weight, false), 0);
}

static void test_empty_tree(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(jw_stacktree__total(fx->tree), 0);
	assert_string_equal(render(fx, false), "");
	assert_string_equal(render(fx, true), "");
	assert_string_equal(heaviest(fx), "");
}

static void test_merge_shared_prefix(void **state)
{
	struct fixture *fx = *state;
	struct jw_frame abx[] = { fn("main", 0x1000, 16), fn("a", 0x2000, 4), fn("b", 0x3000, 8) };
	struct jw_frame acx[] = { fn("main", 0x1000, 16), fn("a", 0x2000, 4), fn("c", 0x3100, 1) };
	struct jw_frame d[] = { fn("main", 0x1000, 16), fn("d", 0x4000, 0) };

	add(fx, abx, 3, true, 1);
	add(fx, acx, 3, true, 1);
	add(fx, abx, 3, true, 1);
	add(fx, d, 2, true, 1);
	assert_int_equal(jw_stacktree__total(fx->tree), 4);
	assert_string_equal(render(fx, false),
			    "4 #00 pc 00001000 " APP "(main+16)\n"
			    "    3 #01 pc 00002000 " APP "(a+4)\n"
			    "        2 #02 pc 00003000 " APP "(b+8)\n"
			    "        1 #02 pc 00003100 " APP "(c+1)\n"
			    "    1 #01 pc 00004000 " APP "(d+0)\n");
}

/* Same rel_pc in two modules, or same module at two addresses: not the same frame. */
static void test_merge_by_module_and_address(void **state)
{
	struct fixture *fx = *state;
	struct jw_frame a[] = { fn("main", 0x1000, 0) };
	struct jw_frame b[] = { fn("main", 0x1000, 0) };
	struct jw_frame c[] = { fn("main", 0x1004, 4) };
	struct jw_frame u1 = { .kind = JW_FRAME_NATIVE, .pc = 0x7000, .rel_pc = 0x1000 };
	struct jw_frame u2 = { .kind = JW_FRAME_NATIVE, .pc = 0x7000, .rel_pc = 0x2000 };

	b[0].module = LIBC;
	add(fx, a, 1, true, 1);
	add(fx, b, 1, true, 1);
	add(fx, c, 1, true, 1);
	/* Frames in no module merge by pc: rel_pc means nothing there. */
	add(fx, &u1, 1, true, 1);
	add(fx, &u2, 1, true, 1);
	assert_string_equal(render(fx, false),
			    "2 #00 pc 00007000 [unknown]\n"
			    "1 #00 pc 00001000 " APP "(main+0)\n"
			    "1 #00 pc 00001000 " LIBC "(main+0)\n"
			    "1 #00 pc 00001004 " APP "(main+4)\n");
}

static void test_siblings_sorted_stable(void **state)
{
	struct fixture *fx = *state;
	struct jw_frame a[] = { fn("main", 0x1000, 0), fn("a", 0x2000, 0) };
	struct jw_frame b[] = { fn("main", 0x1000, 0), fn("b", 0x3000, 0) };
	struct jw_frame c[] = { fn("main", 0x1000, 0), fn("c", 0x4000, 0) };

	/* a, b, c first seen in that order; c overtakes, then a and b tie. */
	add(fx, a, 2, true, 1);
	add(fx, b, 2, true, 1);
	add(fx, c, 2, true, 3);
	add(fx, b, 2, true, 1);
	add(fx, a, 2, true, 1);
	assert_string_equal(render(fx, false),
			    "7 #00 pc 00001000 " APP "(main+0)\n"
			    "    3 #01 pc 00004000 " APP "(c+0)\n"
			    "    2 #01 pc 00002000 " APP "(a+0)\n"
			    "    2 #01 pc 00003000 " APP "(b+0)\n");
}

/* The #00 counts sum to the total, and no child count exceeds its parent's. */
static void test_counts_sum(void **state)
{
	struct fixture *fx = *state;
	struct jw_frame x[] = { fn("main", 0x1000, 0), fn("a", 0x2000, 0), fn("b", 0x3000, 0) };
	struct jw_frame y[] = { fn("start", 0x900, 0), fn("z", 0x5000, 0) };

	add(fx, x, 3, true, 2);
	add(fx, x, 2, true, 5);
	add(fx, y, 2, true, 1);
	add(fx, x, 1, false, 4);
	assert_int_equal(jw_stacktree__total(fx->tree), 12);
	assert_string_equal(render(fx, false),
			    "7 #00 pc 00001000 " APP "(main+0)\n"
			    "    7 #01 pc 00002000 " APP "(a+0)\n"
			    "        2 #02 pc 00003000 " APP "(b+0)\n"
			    "4 #00 pc 00000000 [truncated]\n"
			    "    4 #01 pc 00001000 " APP "(main+0)\n"
			    "1 #00 pc 00000900 " APP "(start+0)\n"
			    "    1 #01 pc 00005000 " APP "(z+0)\n");
}

static void test_truncated_root(void **state)
{
	struct fixture *fx = *state;
	struct jw_frame cut[] = { fn("a", 0x2000, 2), fn("b", 0x3000, 3) };
	struct jw_frame cut2[] = { fn("a", 0x2000, 2), fn("c", 0x3300, 3) };
	struct jw_frame whole[] = { fn("a", 0x2000, 2) };

	add(fx, cut, 2, false, 1);
	add(fx, cut2, 2, false, 2);
	/* The same frame in a complete stack stays apart from the truncated ones. */
	add(fx, whole, 1, true, 1);
	assert_int_equal(jw_stacktree__total(fx->tree), 4);
	assert_string_equal(render(fx, false),
			    "3 #00 pc 00000000 [truncated]\n"
			    "    3 #01 pc 00002000 " APP "(a+2)\n"
			    "        2 #02 pc 00003300 " APP "(c+3)\n"
			    "        1 #02 pc 00003000 " APP "(b+3)\n"
			    "1 #00 pc 00002000 " APP "(a+2)\n");
}

/* A stack with no frame at all still counts, as a truncated one. */
static void test_empty_stack_and_zero_weight(void **state)
{
	struct fixture *fx = *state;
	struct jw_frame a[] = { fn("a", 0x2000, 0) };

	add(fx, NULL, 0, true, 2);
	add(fx, a, 1, true, 0);
	assert_int_equal(jw_stacktree__total(fx->tree), 2);
	assert_string_equal(render(fx, false), "2 #00 pc 00000000 [truncated]\n");
	assert_string_equal(render(fx, true), "[truncated] 2\n");
	assert_string_equal(heaviest(fx), "");
}

static void test_weights(void **state)
{
	struct fixture *fx = *state;
	struct jw_frame blk[] = { fn("main", 0x1000, 0), fn("read", 0x6000, 0) };
	struct jw_frame cpu[] = { fn("main", 0x1000, 0), fn("work", 0x7000, 0) };

	add(fx, cpu, 2, true, 1);
	add(fx, blk, 2, true, 30);	/* a block that spanned 30 sampling periods */
	add(fx, cpu, 2, true, 1);
	assert_int_equal(jw_stacktree__total(fx->tree), 32);
	assert_string_equal(render(fx, false),
			    "32 #00 pc 00001000 " APP "(main+0)\n"
			    "    30 #01 pc 00006000 " APP "(read+0)\n"
			    "    2 #01 pc 00007000 " APP "(work+0)\n");
}

static void test_line_native(void **state)
{
	struct jw_frame fr = fn("main", 0x90a9, 396);
	char buf[256];

	(void)state;
	fr.module = "/system/bin/appspawn";
	fr.build_id = "55679d09bcdea35bb1e0d4e1d9a3e58f";
	assert_string_equal(jw_frame_line(&fr, 9, 2, buf, sizeof(buf)),
			    "9 #02 pc 000090a9 /system/bin/appspawn(main+396)"
			    "(55679d09bcdea35bb1e0d4e1d9a3e58f)");
	fr.symbol = NULL;
	assert_string_equal(jw_frame_line(&fr, 9, 2, buf, sizeof(buf)),
			    "9 #02 pc 000090a9 /system/bin/appspawn"
			    "(55679d09bcdea35bb1e0d4e1d9a3e58f)");
	fr.build_id = NULL;
	assert_string_equal(jw_frame_line(&fr, 9, 2, buf, sizeof(buf)),
			    "9 #02 pc 000090a9 /system/bin/appspawn");
	fr.symbol = "main";
	assert_string_equal(jw_frame_line(&fr, 9, 2, buf, sizeof(buf)),
			    "9 #02 pc 000090a9 /system/bin/appspawn(main+396)");
	/* Addresses beyond 8 digits are written whole, lowercase. */
	fr.rel_pc = 0x1234ABCDEFull;
	assert_string_equal(jw_frame_line(&fr, 1, 0, buf, sizeof(buf)),
			    "1 #00 pc 1234abcdef /system/bin/appspawn(main+396)");
	/* With line tables, the source line last. */
	fr.build_id = "55679d09bcdea35bb1e0d4e1d9a3e58f";
	fr.src = "src/main.c:47";
	assert_string_equal(jw_frame_line(&fr, 1, 0, buf, sizeof(buf)),
			    "1 #00 pc 1234abcdef /system/bin/appspawn(main+396)"
			    "(55679d09bcdea35bb1e0d4e1d9a3e58f) src/main.c:47");
}

static void test_line_unknown_module(void **state)
{
	struct jw_frame fr = { .kind = JW_FRAME_NATIVE, .pc = 0x7f00dead0010, .rel_pc = 0x10 };
	char buf[256];

	(void)state;
	assert_string_equal(jw_frame_line(&fr, 3, 4, buf, sizeof(buf)),
			    "3 #04 pc 7f00dead0010 [unknown]");
	fr.pc = 0x42;
	assert_string_equal(jw_frame_line(&fr, 3, 4, buf, sizeof(buf)),
			    "3 #04 pc 00000042 [unknown]");
}

static void test_line_kernel(void **state)
{
	struct jw_frame fr = {
		.kind = JW_FRAME_KERNEL,
		.pc = 0xffffffff81234567ull,
		.symbol = "schedule",
		.sym_off = 0x3c,
	};
	char buf[256];

	(void)state;
	assert_string_equal(jw_frame_line(&fr, 5, 7, buf, sizeof(buf)),
			    "5 #07 pc ffffffff81234567 [kernel](schedule+0x3c)");
	fr.symbol = NULL;
	assert_string_equal(jw_frame_line(&fr, 5, 7, buf, sizeof(buf)),
			    "5 #07 pc ffffffff81234567 [kernel]");
}

static void test_line_jit(void **state)
{
	struct jw_frame fr = {
		.kind = JW_FRAME_JIT,
		.pc = 0x3e8a1c004b2e,
		.symbol = "wait2",
		.src = "/app/index.js:16:12",
	};
	char buf[256];

	(void)state;
	assert_string_equal(jw_frame_line(&fr, 1, 23, buf, sizeof(buf)),
			    "1 #23 at wait2 (/app/index.js:16:12)");
	fr.src = NULL;
	assert_string_equal(jw_frame_line(&fr, 1, 23, buf, sizeof(buf)), "1 #23 at wait2 [jit]");
}

static void test_line_depth_and_truncation(void **state)
{
	struct jw_frame fr = fn("f", 0x10, 1);
	char buf[24];
	char big[64];

	(void)state;
	assert_string_equal(jw_frame_line(&fr, 1, 100, big, sizeof(big)),
			    "1 #100 pc 00000010 " APP "(f+1)");
	/* A short buffer gets a NUL-terminated prefix. */
	assert_string_equal(jw_frame_line(&fr, 1, 5, buf, sizeof(buf)), "1 #05 pc 00000010 /usr/");
}

/* Lines longer than the writer's first buffer (C++ symbols) are written whole. */
static void test_tree_long_symbol(void **state)
{
	struct fixture *fx = *state;
	char sym[1001], expect[1100];
	struct jw_frame fr;

	memset(sym, 'x', sizeof(sym) - 1);
	sym[sizeof(sym) - 1] = '\0';
	fr = fn(sym, 0x10, 1);
	add(fx, &fr, 1, true, 1);
	snprintf(expect, sizeof(expect), "1 #00 pc 00000010 " APP "(%s+1)\n", sym);
	assert_string_equal(render(fx, false), expect);
}

/* A newline in a name must not start a line of its own in the log. */
static void test_tree_control_bytes(void **state)
{
	struct fixture *fx = *state;
	struct jw_frame fr = fn("bad\nname", 0x10, 1);

	add(fx, &fr, 1, true, 1);
	assert_string_equal(render(fx, false), "1 #00 pc 00000010 " APP "(bad?name+1)\n");
	assert_string_equal(render(fx, true), "bad?name 1\n");
}

static void test_mixed_kinds_tree(void **state)
{
	struct fixture *fx = *state;
	struct jw_frame s[] = {
		fn("main", 0x1000, 0),
		{ .kind = JW_FRAME_JIT, .pc = 0x3e00, .symbol = "tick", .src = "/a.js:1:2" },
		{ .kind = JW_FRAME_KERNEL, .pc = 0xffffffff81000010ull, .symbol = "do_sys_poll",
		  .sym_off = 0x10 },
	};

	add(fx, s, 3, true, 1);
	assert_string_equal(render(fx, false),
			    "1 #00 pc 00001000 " APP "(main+0)\n"
			    "    1 #01 at tick (/a.js:1:2)\n"
			    "        1 #02 pc ffffffff81000010 [kernel](do_sys_poll+0x10)\n");
	assert_string_equal(render(fx, true), "main;tick;do_sys_poll 1\n");
}

static void test_folded(void **state)
{
	struct fixture *fx = *state;
	struct jw_frame ab[] = { fn("main", 0x1000, 0), fn("a", 0x2000, 0), fn("b", 0x3000, 0) };
	struct jw_frame c[] = { fn("main", 0x1000, 0), fn(NULL, 0x4abc, 0) };

	add(fx, ab, 3, true, 2);
	add(fx, ab, 2, true, 3);	/* ends at a: a is an inner node and an end point */
	add(fx, c, 2, true, 1);
	add(fx, ab + 1, 2, false, 4);
	assert_string_equal(render(fx, true),
			    "main;a 3\n"
			    "main;a;b 2\n"
			    "main;app+0x4abc 1\n"
			    "[truncated];a;b 4\n");
}

static void test_heaviest(void **state)
{
	struct fixture *fx = *state;
	struct jw_frame ab[] = { fn("main", 0x1000, 0), fn("a", 0x2000, 0), fn("b", 0x3000, 0) };
	struct jw_frame c[] = { fn("main", 0x1000, 0), fn("c", 0x4000, 0) };

	add(fx, ab, 3, true, 1);
	add(fx, c, 2, true, 1);
	add(fx, ab, 3, true, 1);
	assert_string_equal(heaviest(fx), "b<-a<-main");
	add(fx, c, 2, true, 2);
	assert_string_equal(heaviest(fx), "c<-main");
}

static void test_heaviest_tie_goes_to_recent(void **state)
{
	struct fixture *fx = *state;
	struct jw_frame x[] = { fn("main", 0x1000, 0), fn("x", 0x2000, 0) };
	struct jw_frame y[] = { fn("main", 0x1000, 0), fn("y", 0x3000, 0) };

	add(fx, x, 2, true, 2);
	add(fx, y, 2, true, 1);
	add(fx, y, 2, true, 1);
	assert_string_equal(heaviest(fx), "y<-main");
	add(fx, x, 2, true, 1);
	add(fx, y, 2, true, 1);
	add(fx, x, 2, true, 0);		/* weight 0 adds nothing and is not "recent" */
	assert_string_equal(heaviest(fx), "y<-main");
	add(fx, x, 2, true, 1);
	assert_string_equal(heaviest(fx), "x<-main");
}

/* Two stacks with the same symbols at different addresses are one stack for heaviest. */
static void test_heaviest_by_symbol(void **state)
{
	struct fixture *fx = *state;
	struct jw_frame p1[] = { fn("main", 0x1000, 0), fn("loop", 0x2000, 0) };
	struct jw_frame p2[] = { fn("main", 0x1000, 0), fn("loop", 0x2040, 0x40) };
	struct jw_frame p3[] = { fn("main", 0x1008, 8), fn("loop", 0x2080, 0x80) };
	struct jw_frame q[] = { fn("main", 0x1000, 0), fn("other", 0x5000, 0) };

	add(fx, q, 2, true, 2);
	add(fx, p1, 2, true, 1);
	add(fx, p2, 2, true, 1);
	add(fx, q, 2, true, 1);
	add(fx, p3, 2, true, 1);
	assert_string_equal(heaviest(fx), "loop<-main");
}

/* The truncated root is no frame: a cut stack is named by its frames alone. */
static void test_heaviest_truncated(void **state)
{
	struct fixture *fx = *state;
	struct jw_frame ab[] = { fn("a", 0x2000, 0), fn("b", 0x3000, 0) };
	struct jw_frame m[] = { fn("main", 0x1000, 0) };

	add(fx, m, 1, true, 2);
	add(fx, ab, 2, false, 3);
	assert_string_equal(heaviest(fx), "b<-a");
}

/* The group key: the heaviest stack's two innermost frames of the application's own. */
static void test_group(void **state)
{
	struct fixture *fx = *state;
	struct jw_frame libc = { .kind = JW_FRAME_NATIVE, .pc = 0x7f0000001000, .rel_pc = 0x1000,
				 .module = LIBC, .symbol = "memcpy" };
	struct jw_frame vdso = { .kind = JW_FRAME_NATIVE, .pc = 0x7fff00000900, .rel_pc = 0x900,
				 .module = "[vdso]", .symbol = "__vdso_clock_gettime" };
	struct jw_frame k = { .kind = JW_FRAME_KERNEL, .pc = 0xffffffff81000000ull,
			      .symbol = "schedule" };
	struct jw_frame jit = { .kind = JW_FRAME_JIT, .pc = 0x3e00, .symbol = "busyWork" };
	struct jw_frame s1[] = { fn("main", 0x1000, 0), fn("run", 0x2000, 0), fn("parse", 0x3000, 0),
				 libc, k };
	struct jw_frame s2[] = { fn("main", 0x1000, 0), fn("tick", 0x4000, 0), jit, vdso };
	struct jw_frame s3[] = { libc, vdso };
	char *g;

	g = jw_stacktree__group(fx->tree);
	assert_string_equal(g, "");
	free(g);
	add(fx, s1, 5, true, 2);
	add(fx, s2, 4, true, 1);
	g = jw_stacktree__group(fx->tree);
	assert_string_equal(g, "parse<-run");
	free(g);
	/* A JIT frame is the application's. */
	add(fx, s2, 4, true, 2);
	g = jw_stacktree__group(fx->tree);
	assert_string_equal(g, "busyWork<-tick");
	free(g);
	/* Only system frames: no group. */
	jw_stacktree__free(fx->tree);
	fx->tree = jw_stacktree__new();
	add(fx, s3, 2, false, 1);
	g = jw_stacktree__group(fx->tree);
	assert_string_equal(g, "");
	free(g);
	assert_true(jw_frame_is_system(&libc) && jw_frame_is_system(&vdso) &&
		    jw_frame_is_system(&k) && !jw_frame_is_system(&jit) &&
		    !jw_frame_is_system(&s1[0]));
}

/* The C libraries and loaders of glibc, musl and bionic, and Android's platform libraries. */
static void test_system_modules(void **state)
{
	static const char *const system[] = {
		"/usr/lib/x86_64-linux-gnu/libc.so.6", "/lib/ld-musl-x86_64.so.1",
		"/usr/lib/x86_64-linux-musl/libc.so", "/lib/ld-musl-aarch64.so.1",
		"/apex/com.android.runtime/lib64/bionic/libc.so",
		"/apex/com.android.runtime/bin/linker64", "/system/bin/linker64",
		"/system/lib64/libutils.so", "/vendor/lib64/libgpu.so",
		"/apex/com.android.runtime/lib64/bionic/libm.so",
	};
	static const char *const own[] = {
		"/data/app/~~x==/com.example-y==/lib/arm64/libgame.so", "/data/local/tmp/prog",
		"/usr/bin/redis-server", "/opt/app/lib/libapp.so", "/system-like/prog",
	};
	struct jw_frame fr = { .kind = JW_FRAME_NATIVE, .pc = 0x1000, .rel_pc = 0x1000 };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(system) / sizeof(system[0]); i++) {
		fr.module = system[i];
		if (!jw_frame_is_system(&fr))
			fail_msg("%s: not the system's", system[i]);
	}
	for (i = 0; i < sizeof(own) / sizeof(own[0]); i++) {
		fr.module = own[i];
		if (jw_frame_is_system(&fr))
			fail_msg("%s: not the program's own", own[i]);
	}
}

/*
 * kptr_restrict hides kallsyms: the kernel's frames have addresses only. A run of them is one
 * "[kernel]" in the heaviest stack, and stacks that differ only there are one; the tree keeps
 * the addresses.
 */
static void test_heaviest_unnamed_kernel(void **state)
{
	struct fixture *fx = *state;
	struct jw_frame k1 = { .kind = JW_FRAME_KERNEL, .pc = 0xffffffffc00376adull,
			       .rel_pc = 0xffffffffc00376adull, .module = "[kernel]" };
	struct jw_frame k2 = k1, k3 = k1, named = k1;
	struct jw_frame a[] = { fn("main", 0x1000, 0), fn("nap", 0x2000, 0),
				fn("clock_nanosleep", 0x3000, 0), k1, k2 };
	struct jw_frame b[] = { fn("main", 0x1000, 0), fn("nap", 0x2000, 0),
				fn("clock_nanosleep", 0x3000, 0), k1, named, k3 };
	const char *out;

	k2.pc = k2.rel_pc = 0xffffffff814b896cull;
	k3.pc = k3.rel_pc = 0xffffffff81000123ull;
	named.pc = named.rel_pc = 0xffffffff81234567ull;
	named.symbol = "do_nanosleep";
	/* The arrays took copies: what was set since goes in. */
	a[4] = k2;
	b[4] = named;
	b[5] = k3;
	/* b weighs 2 alone; a's two pcs (3 in all) beat it once their unnamed runs are one. */
	add(fx, a, 5, true, 2);
	a[4] = k3;
	add(fx, a, 5, true, 1);
	add(fx, b, 6, true, 2);
	assert_string_equal(heaviest(fx), "[kernel]<-clock_nanosleep<-nap<-main");
	/* A named frame splits the runs. */
	jw_stacktree__free(fx->tree);
	fx->tree = jw_stacktree__new();
	add(fx, b, 6, true, 1);
	assert_string_equal(heaviest(fx),
			    "[kernel]<-do_nanosleep<-[kernel]<-clock_nanosleep<-nap<-main");
	out = render(fx, false);
	assert_non_null(strstr(out, "pc ffffffff81000123 [kernel]"));
}

static void test_frame_name(void **state)
{
	struct jw_frame fr = fn("main", 0x1234, 4);
	struct jw_frame k = { .kind = JW_FRAME_KERNEL, .pc = 0xffffffff81000000ull };
	struct jw_frame j = { .kind = JW_FRAME_JIT, .pc = 0x3e00, .symbol = "LazyCompile:~f" };
	struct jw_frame u = { .kind = JW_FRAME_NATIVE, .pc = 0x7fff1234 };
	char buf[64], small[6];

	(void)state;
	assert_string_equal(jw_frame_name(&fr, buf, sizeof(buf)), "main");
	fr.symbol = NULL;
	assert_string_equal(jw_frame_name(&fr, buf, sizeof(buf)), "app+0x1234");
	fr.module = "noslash.so";
	assert_string_equal(jw_frame_name(&fr, buf, sizeof(buf)), "noslash.so+0x1234");
	assert_string_equal(jw_frame_name(&u, buf, sizeof(buf)), "0x7fff1234");
	assert_string_equal(jw_frame_name(&k, buf, sizeof(buf)), "[kernel]+0xffffffff81000000");
	k.symbol = "schedule";
	assert_string_equal(jw_frame_name(&k, buf, sizeof(buf)), "schedule");
	assert_string_equal(jw_frame_name(&j, buf, sizeof(buf)), "LazyCompile:~f");
	j.symbol = NULL;
	assert_string_equal(jw_frame_name(&j, buf, sizeof(buf)), "0x3e00");
	assert_string_equal(jw_frame_name(&u, small, sizeof(small)), "0x7ff");
}

/* A pathological stack is cut to its innermost 1024 frames and hung under [truncated]. */
static void test_deep_stack(void **state)
{
	struct fixture *fx = *state;
	const size_t n = 5000;
	struct jw_frame *s = calloc(n, sizeof(*s));
	const char *deepest = "#1024 pc 00002387 " APP "\n";
	const char *out, *last;
	size_t i, lines = 0;

	assert_non_null(s);
	for (i = 0; i < n; i++)
		s[i] = fn(NULL, 0x1000 + i, 0);
	assert_int_equal(jw_stacktree__add(fx->tree, s, n, true, 1, false), 0);
	free(s);
	out = render(fx, false);
	for (i = 0; out[i]; i++)
		lines += out[i] == '\n';
	assert_int_equal(lines, 1025);
	assert_memory_equal(out, "1 #00 pc 00000000 [truncated]\n", 30);
	last = strstr(out, "#1024 pc");
	assert_non_null(last);
	assert_memory_equal(last, deepest, strlen(deepest));
	render(fx, true);
	free(fx->heavy);
	fx->heavy = jw_stacktree__heaviest(fx->tree);
	assert_non_null(fx->heavy);
	assert_memory_equal(fx->heavy, "app+0x2387<-app+0x2386<-", 24);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_empty_tree, setup, teardown),
		cmocka_unit_test_setup_teardown(test_merge_shared_prefix, setup, teardown),
		cmocka_unit_test_setup_teardown(test_merge_by_module_and_address, setup, teardown),
		cmocka_unit_test_setup_teardown(test_siblings_sorted_stable, setup, teardown),
		cmocka_unit_test_setup_teardown(test_counts_sum, setup, teardown),
		cmocka_unit_test_setup_teardown(test_truncated_root, setup, teardown),
		cmocka_unit_test_setup_teardown(test_empty_stack_and_zero_weight, setup, teardown),
		cmocka_unit_test_setup_teardown(test_weights, setup, teardown),
		cmocka_unit_test(test_line_native),
		cmocka_unit_test(test_line_unknown_module),
		cmocka_unit_test(test_line_kernel),
		cmocka_unit_test(test_line_jit),
		cmocka_unit_test(test_line_depth_and_truncation),
		cmocka_unit_test_setup_teardown(test_tree_long_symbol, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tree_control_bytes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mixed_kinds_tree, setup, teardown),
		cmocka_unit_test_setup_teardown(test_folded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_heaviest, setup, teardown),
		cmocka_unit_test_setup_teardown(test_heaviest_tie_goes_to_recent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_heaviest_by_symbol, setup, teardown),
		cmocka_unit_test_setup_teardown(test_heaviest_truncated, setup, teardown),
		cmocka_unit_test_setup_teardown(test_group, setup, teardown),
		cmocka_unit_test_setup_teardown(test_heaviest_unnamed_kernel, setup, teardown),
		cmocka_unit_test(test_frame_name),
		cmocka_unit_test(test_system_modules),
		cmocka_unit_test_setup_teardown(test_deep_stack, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
