// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests of stack logs read back (each line kind, whole files) and of their merged graph. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "report/flamegraph.h"
#include "report/flamemerge.h"
#include "report/stacklog.h"
#include "report/stacktree.h"

#define APP "/usr/bin/app"
#define LIBC "/usr/lib/x86_64-linux-gnu/libc.so.6"
#define LIBGLIB "/usr/lib/x86_64-linux-gnu/libglib-2.0.so.0"
#define LIBPY "/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0"
#define GAME "/opt/My Game (x86)/game"
#define CXX_NAME "app::Loop<app::Job>::dispatch(app::Job const&)"
#define OP_PLUS "operator+(Vec const&, Vec const&)"

/* The real stack log's lines (a jank of tests/targets/jw_target). */
#define JWT "/work/main/build/tests/targets/jw_target"
#define JWT_ID "(fade7b6af4a42928d17beee51066032da1717ed0)"
#define LIBC_ID "(93ac61ec5a8eb1396f9fbd350e3169a558528a40)"
#define VDSO_ID "(b0af7178ba47aca58d16966d2c4d17c913589189)"
#define SRC "/work/main/tests/targets/"

#define HEADER								\
	"pid: 8052\n"							\
	"tid: 8052\n"							\
	"exe: " JWT "\n"						\
	"build_id: fade7b6af4a42928d17beee51066032da1717ed0\n"		\
	"begin_time: 2026-11-30 00:32:26.990\n"				\
	"wall_ms: 300.135\n"						\
	"samples: 10\n"							\
	"heaviest_stack: __vdso_clock_gettime<-clock_gettime<-busy_work<-dispatch<-main\n" \
	"\n"

/* Down to dispatch: the path every stack of the example takes, at count @n. */
#define TRUNK(n)								\
	n " #00 pc 00001c91 " JWT "(_start+33)" JWT_ID "\n"			\
	"    " n " #01 pc 00027305 " LIBC "(__libc_start_main+133)" LIBC_ID	\
	" ../csu/libc-start.c:360\n"						\
	"        " n " #02 pc 0002724a " LIBC "(__libc_start_call_main+122)" LIBC_ID \
	" ../sysdeps/nptl/libc_start_call_main.h:58\n"				\
	"            " n " #03 pc 00001828 " JWT "(main+1576)" JWT_ID " " SRC "jw_target.c:419\n" \
	"                " n " #04 pc 000025b4 " JWT "(timed_task+644)" JWT_ID	\
	" " SRC "jw_target.c:294\n"						\
	"                    " n " #05 pc 000022ce " JWT "(run_slow_task+62)" JWT_ID \
	" " SRC "jw_target.c:253\n"						\
	"                        " n " #06 pc 000021f1 " JWT "(dispatch+225)" JWT_ID \
	" " SRC "jw_target.c:210\n"

#define IND7 "                            "
#define BUSY(n, off, line) \
	IND7 n " #07 pc 00001ecf " JWT "(busy_work+" off ")" JWT_ID " " SRC "busy.h:" line "\n"
#define CLOCK(n) \
	IND7 "    " n " #08 pc 000cf439 " LIBC "(clock_gettime+25)" LIBC_ID \
	" ../sysdeps/unix/sysv/linux/clock_gettime.c:42\n"
#define VDSO(n, off) IND7 "        " n " #09 pc 00000b46 [vdso](__vdso_clock_gettime+" off ")" \
	VDSO_ID "\n"

static const char example[] = HEADER TRUNK("10")
	BUSY("6", "95", "22") CLOCK("6") VDSO("5", "86") VDSO("1", "164")
	BUSY("3", "107", "60") BUSY("1", "110", "60");

/* Another jank of the same group: its busy_work lines in the other order. */
static const char example2[] = HEADER TRUNK("5")
	BUSY("1", "107", "60") BUSY("4", "95", "22") CLOCK("4") VDSO("4", "86");

/* One frame read back, its strings copied. */
struct got_frame {
	char *name;
	char *where;
	unsigned int depth;
	uint64_t count;
	enum jw_frame_owner owner;
};

struct got {
	struct got_frame *f;
	size_t n, cap;
	size_t stop_after;	/* non-zero: stop (return 42) after that many frames */
};

static int collect(const struct jw_stacklog_frame *fr, void *ctx)
{
	struct got *g = ctx;
	struct got_frame *gf;

	if (g->n == g->cap) {
		g->cap = g->cap ? g->cap * 2 : 16;
		g->f = realloc(g->f, g->cap * sizeof(*g->f));
		assert_non_null(g->f);
	}
	gf = &g->f[g->n++];
	gf->name = strdup(fr->name);
	gf->where = strdup(fr->where);
	assert_non_null(gf->name);
	assert_non_null(gf->where);
	gf->depth = fr->depth;
	gf->count = fr->count;
	gf->owner = fr->owner;
	return g->stop_after && g->n == g->stop_after ? 42 : 0;
}

static void got_free(struct got *g)
{
	size_t i;

	for (i = 0; i < g->n; i++) {
		free(g->f[i].name);
		free(g->f[i].where);
	}
	free(g->f);
	memset(g, 0, sizeof(*g));
}

/* jw_stacklog_read() of @text: its return; the frames into @g, the samples into *@samples. */
static int read_text(const char *text, struct got *g, uint64_t *samples)
{
	FILE *f = fmemopen((char *)text, strlen(text), "r");
	int ret;

	assert_non_null(f);
	ret = jw_stacklog_read(f, collect, g, samples);
	fclose(f);
	return ret;
}

/* @line parses as a frame at @depth of @count samples named @name, in @where, of @owner. */
static void expect_line(const char *line, unsigned int depth, uint64_t count, const char *name,
			const char *where, enum jw_frame_owner owner)
{
	size_t len = JW_STACKLOG_BUF(strlen(line));
	struct jw_stacklog_frame fr;
	char *buf = malloc(len);

	assert_non_null(buf);
	assert_int_equal(jw_stacklog_parse_line(line, &fr, buf, len), 0);
	assert_int_equal(fr.depth, depth);
	assert_int_equal(fr.count, count);
	assert_string_equal(fr.name, name);
	assert_string_equal(fr.where, where);
	assert_int_equal(fr.owner, owner);
	free(buf);
}

static void expect_bad(const char *line)
{
	struct jw_stacklog_frame fr;
	char buf[512];

	assert_int_equal(jw_stacklog_parse_line(line, &fr, buf, sizeof(buf)), -EINVAL);
}

static void test_parse_kernel_lines(void **state)
{
	(void)state;
	expect_line("10 #08 pc ffffffff81000130 [kernel](entry_SYSCALL_64_after_hwframe+0x76)", 8,
		    10, "entry_SYSCALL_64_after_hwframe", "[kernel]", JW_OWNER_KERNEL);
	expect_line("3 #13 pc ffffffff821f94c3 [kernel](schedule+0x23)", 13, 3, "schedule",
		    "[kernel]", JW_OWNER_KERNEL);
	/* kallsyms hidden: named by the address, as jw_frame_name() names it */
	expect_line("2 #09 pc ffffffff816c6736 [kernel]", 9, 2, "[kernel]+0xffffffff816c6736",
		    "[kernel]", JW_OWNER_KERNEL);
}

static void test_parse_native_lines(void **state)
{
	(void)state;
	/* The real log's: symbol, build-id, source line; indented or not; CRLF; a newline. */
	expect_line("    10 #01 pc 00027305 " LIBC "(__libc_start_main+133)" LIBC_ID
		    " ../csu/libc-start.c:360", 1, 10, "__libc_start_main", LIBC, JW_OWNER_LIBC);
	expect_line("10 #00 pc 00001c91 " JWT "(_start+33)" JWT_ID "\r\n", 0, 10, "_start", JWT,
		    JW_OWNER_PROGRAM);
	expect_line("5 #09 pc 00000b46 [vdso](__vdso_clock_gettime+86)" VDSO_ID "\n", 9, 5,
		    "__vdso_clock_gettime", "[vdso]", JW_OWNER_LIBC);
	/* No build-id; no source; the distribution's library; CPython's interpreter */
	expect_line("1 #02 pc 00041234 " LIBGLIB "(g_main_context_dispatch+300) gmain.c:3381", 2, 1,
		    "g_main_context_dispatch", LIBGLIB, JW_OWNER_LIBRARY);
	expect_line("7 #03 pc 001a2b3c /usr/bin/python3.11(_PyEval_EvalFrameDefault+1234)", 3, 7,
		    "_PyEval_EvalFrameDefault", "/usr/bin/python3.11", JW_OWNER_INTERPRETER);
	expect_line("7 #03 pc 001a2b3c " LIBPY "(_PyEval_EvalFrameDefault+1234)(0011aabb)", 3, 7,
		    "_PyEval_EvalFrameDefault", LIBPY, JW_OWNER_INTERPRETER);
	/* No symbol: named module+0xaddress, with or without a build-id or a source line */
	expect_line("4 #05 pc 0009a0f0 " LIBGLIB "(0011aabbccdd)", 5, 4,
		    "libglib-2.0.so.0+0x9a0f0", LIBGLIB, JW_OWNER_LIBRARY);
	expect_line("4 #05 pc 0009a0f0 " LIBC, 5, 4, "libc.so.6+0x9a0f0", LIBC, JW_OWNER_LIBC);
	expect_line("4 #05 pc 00001230 " APP " /src/app.c:12", 5, 4, "app+0x1230", APP,
		    JW_OWNER_PROGRAM);
	/* Spaces and parentheses in the module, spaces in the source */
	expect_line("1 #04 pc 0000abcd " GAME "(main+12)(beef) /home/me/my src/main.c:33", 4, 1,
		    "main", GAME, JW_OWNER_PROGRAM);
	expect_line("1 #04 pc 0000abcd " GAME, 4, 1, "game+0xabcd", GAME, JW_OWNER_PROGRAM);
	expect_line("1 #04 pc 0000abcd /opt/My Game/game /src/g.c:3", 4, 1, "game+0xabcd",
		    "/opt/My Game/game", JW_OWNER_PROGRAM);
	expect_line("1 #04 pc 0000abcd /usr/bin/app (deleted)(main+3)(beef)", 4, 1, "main",
		    "/usr/bin/app (deleted)", JW_OWNER_PROGRAM);
	/* Code in no module */
	expect_line("1 #03 pc 7f0012345678 [unknown]", 3, 1, "0x7f0012345678", "",
		    JW_OWNER_UNKNOWN);
	expect_line("1 #03 pc 7f0012345678 [unknown](mystery+4)", 3, 1, "mystery", "",
		    JW_OWNER_UNKNOWN);
	/* The root of stacks cut short */
	expect_line("5 #00 pc 00000000 [truncated]", 0, 5, "[truncated]", "", JW_OWNER_COUNT);
}

static void test_parse_cxx_symbols(void **state)
{
	(void)state;
	expect_line("9 #02 pc 00001f20 " APP "(" CXX_NAME "+20)(4f3a) " SRC "loop.cc:12", 2, 9,
		    CXX_NAME, APP, JW_OWNER_PROGRAM);
	expect_line("9 #02 pc 00001f20 " APP "(" OP_PLUS "+7)", 2, 9, OP_PLUS, APP,
		    JW_OWNER_PROGRAM);
	expect_line("9 #02 pc 00001f20 " APP "(operator++3)(4f3a)", 2, 9, "operator+", APP,
		    JW_OWNER_PROGRAM);
	expect_line("1 #01 pc 00000050 " APP "(std::vector<int, std::allocator<int> >::push_back"
		    "(int&&)+0)", 1, 1, "std::vector<int, std::allocator<int> >::push_back(int&&)",
		    APP, JW_OWNER_PROGRAM);
	expect_line("1 #01 pc 00000050 " GAME "(main::{lambda()#1}::operator()() const+16)(ab)"
		    " x.cc:4", 1, 1, "main::{lambda()#1}::operator()() const", GAME,
		    JW_OWNER_PROGRAM);
	/* A stray parenthesis in a symbol: it still ends at its "+OFF)" */
	expect_line("1 #01 pc 00000050 " APP "(odd)name+8)(ab)", 1, 1, "odd)name", APP,
		    JW_OWNER_PROGRAM);
}

static void test_parse_jit_and_python_lines(void **state)
{
	(void)state;
	expect_line("3 #04 at busyWork (/app/index.js:10:18)", 4, 3, "busyWork", "/app/index.js",
		    JW_OWNER_JIT);
	expect_line("3 #04 at listOnTimeout (node:internal/timers:569:17)", 4, 3, "listOnTimeout",
		    "node:internal/timers", JW_OWNER_JIT);
	expect_line("3 #04 at get foo (/my app/a (1).js:1:2)", 4, 3, "get foo", "/my app/a (1).js",
		    JW_OWNER_JIT);
	expect_line("3 #04 at foo [jit]", 4, 3, "foo", "", JW_OWNER_JIT);
	expect_line("3 #04 at 0x7f00dead [jit]", 4, 3, "0x7f00dead", "", JW_OWNER_JIT);
	expect_line("2 #05 at Catalog.reindex (/srv/app.py:42)", 5, 2, "Catalog.reindex",
		    "/srv/app.py", JW_OWNER_PYTHON);
	expect_line("2 #05 at main (/srv/gui.pyw:7)", 5, 2, "main", "/srv/gui.pyw",
		    JW_OWNER_PYTHON);
	expect_line("2 #05 at _find_and_load (<frozen importlib._bootstrap>:1360)", 5, 2,
		    "_find_and_load", "<frozen importlib._bootstrap>", JW_OWNER_PYTHON);
	expect_line("2 #05 at <module> (<string>:1)\r\n", 5, 2, "<module>", "<string>",
		    JW_OWNER_PYTHON);
}

static void test_parse_rejects_garbage(void **state)
{
	struct jw_stacklog_frame fr;
	char small[8];

	(void)state;
	expect_bad("");
	expect_bad("hello");
	expect_bad("pid: 8052");
	expect_bad("wchan: pipe_read");
	expect_bad("main;busy 3");
	expect_bad("10");
	expect_bad("10 #00");
	expect_bad("10 #00 pc");
	expect_bad("x10 #00 pc 1234 " APP);
	expect_bad("-1 #00 pc 1234 " APP);
	expect_bad("10 # 00 pc 1234 " APP);
	expect_bad("10 #x pc 1234 " APP);
	expect_bad("10 #00  pc 1234 " APP);
	expect_bad("10 #00 sp 1234 " APP);
	expect_bad("10 #00 pc zz " APP);
	expect_bad("10 #00 pc 12345678901234567 " APP);
	expect_bad("10 #00 pc 1234");
	expect_bad("10 #00 pc 1234 ");
	expect_bad("99999999999999999999 #00 pc 1234 " APP);
	expect_bad("10 #00 pc ffffffff81000130 [kernel](schedule)");
	expect_bad("10 #00 pc ffffffff81000130 [kernel](schedule+0x)");
	expect_bad("10 #00 pc ffffffff81000130 [kernel] junk");
	expect_bad("10 #00 pc 7f00 [unknown]junk");
	expect_bad("10 #00 at foo");
	expect_bad("10 #00 at  [jit]");
	expect_bad("10 #00 at foo ()");
	expect_bad("10 #00 at (/a.py:1)");
	/* A buffer too small says so */
	assert_int_equal(jw_stacklog_parse_line("1 #00 pc 1234 " APP "(main+1)", &fr, small,
						sizeof(small)), -ERANGE);
}

struct want {
	unsigned int depth;
	uint64_t count;
	const char *name;
	const char *where;
	enum jw_frame_owner owner;
};

static void expect_got(const struct got *g, const struct want *w, size_t n)
{
	size_t i;

	assert_int_equal(g->n, n);
	for (i = 0; i < n; i++) {
		assert_int_equal(g->f[i].depth, w[i].depth);
		assert_int_equal(g->f[i].count, w[i].count);
		assert_string_equal(g->f[i].name, w[i].name);
		assert_string_equal(g->f[i].where, w[i].where);
		assert_int_equal(g->f[i].owner, w[i].owner);
	}
}

static const struct want example_want[] = {
	{ 0, 10, "_start", JWT, JW_OWNER_PROGRAM },
	{ 1, 10, "__libc_start_main", LIBC, JW_OWNER_LIBC },
	{ 2, 10, "__libc_start_call_main", LIBC, JW_OWNER_LIBC },
	{ 3, 10, "main", JWT, JW_OWNER_PROGRAM },
	{ 4, 10, "timed_task", JWT, JW_OWNER_PROGRAM },
	{ 5, 10, "run_slow_task", JWT, JW_OWNER_PROGRAM },
	{ 6, 10, "dispatch", JWT, JW_OWNER_PROGRAM },
	{ 7, 6, "busy_work", JWT, JW_OWNER_PROGRAM },
	{ 8, 6, "clock_gettime", LIBC, JW_OWNER_LIBC },
	{ 9, 5, "__vdso_clock_gettime", "[vdso]", JW_OWNER_LIBC },
	{ 9, 1, "__vdso_clock_gettime", "[vdso]", JW_OWNER_LIBC },
	{ 7, 3, "busy_work", JWT, JW_OWNER_PROGRAM },
	{ 7, 1, "busy_work", JWT, JW_OWNER_PROGRAM },
};

#define N_EXAMPLE (sizeof(example_want) / sizeof(example_want[0]))

static void test_read_tree_log(void **state)
{
	struct got g = { 0 };
	uint64_t samples = 99;
	char *crlf, *p;
	size_t i, len;

	(void)state;
	assert_int_equal(read_text(example, &g, &samples), 0);
	expect_got(&g, example_want, N_EXAMPLE);
	assert_int_equal(samples, 10);
	got_free(&g);

	/* CRLF line ends, no newline at the end, samples not asked for */
	len = strlen(example);
	crlf = malloc(2 * len + 1);
	assert_non_null(crlf);
	for (i = 0, p = crlf; i < len; i++) {
		if (example[i] == '\n')
			*p++ = '\r';
		*p++ = example[i];
	}
	p[-2] = '\0';
	assert_int_equal(read_text(crlf, &g, NULL), 0);
	expect_got(&g, example_want, N_EXAMPLE);
	got_free(&g);
	free(crlf);

	/* No header at all */
	assert_int_equal(read_text(strstr(example, "\n\n") + 2, &g, &samples), 0);
	expect_got(&g, example_want, N_EXAMPLE);
	assert_int_equal(samples, 10);
	got_free(&g);

	/* The callback stops the read */
	g.stop_after = 3;
	assert_int_equal(read_text(example, &g, &samples), 42);
	assert_int_equal(g.n, 3);
	got_free(&g);
}

static void test_read_folded_log(void **state)
{
	static const char text[] = HEADER
		"main;run;busy 7\n"
		"main;run;read;operator new(unsigned long) 2\n"
		"[truncated];_PyEval_EvalFrameDefault 1";
	static const struct want want[] = {
		{ 0, 7, "main", "", JW_OWNER_UNKNOWN },
		{ 1, 7, "run", "", JW_OWNER_UNKNOWN },
		{ 2, 7, "busy", "", JW_OWNER_UNKNOWN },
		{ 0, 2, "main", "", JW_OWNER_UNKNOWN },
		{ 1, 2, "run", "", JW_OWNER_UNKNOWN },
		{ 2, 2, "read", "", JW_OWNER_UNKNOWN },
		{ 3, 2, "operator new(unsigned long)", "", JW_OWNER_UNKNOWN },
		{ 0, 1, "[truncated]", "", JW_OWNER_COUNT },
		{ 1, 1, "_PyEval_EvalFrameDefault", "", JW_OWNER_UNKNOWN },
	};
	struct got g = { 0 };
	uint64_t samples = 0;

	(void)state;
	assert_int_equal(read_text(text, &g, &samples), 0);
	expect_got(&g, want, sizeof(want) / sizeof(want[0]));
	assert_int_equal(samples, 10);
	got_free(&g);
}

static void test_read_wchan_log(void **state)
{
	struct got g = { 0 };
	uint64_t samples = 99;

	(void)state;
	assert_int_equal(read_text(HEADER "wchan: pipe_read\n", &g, &samples), 0);
	assert_int_equal(g.n, 0);
	assert_int_equal(samples, 0);
	assert_int_equal(read_text(HEADER, &g, &samples), 0);
	assert_int_equal(g.n, 0);
	assert_int_equal(samples, 0);
}

static void test_read_damaged_logs(void **state)
{
	struct got g = { 0 };
	uint64_t samples = 0;

	(void)state;
	/* A line that is no frame: the file is damaged, whatever came before it */
	assert_int_equal(read_text(HEADER "10 #00 pc 1234 " APP "(main+1)\ngarbage\n", &g,
				   &samples), -EINVAL);
	assert_int_equal(samples, 10);
	got_free(&g);
	/* A depth that jumps, a first line that is no root */
	assert_int_equal(read_text(HEADER "10 #00 pc 1234 " APP "(main+1)\n"
				   "        10 #02 pc 1234 " APP "(run+1)\n", &g, NULL), -EINVAL);
	got_free(&g);
	assert_int_equal(read_text(HEADER "    10 #01 pc 1234 " APP "(run+1)\n", &g, NULL),
			 -EINVAL);
	got_free(&g);
	/* Tree and folded lines mixed */
	assert_int_equal(read_text(HEADER "10 #00 pc 1234 " APP "(main+1)\nmain;run 3\n", &g,
				   NULL), -EINVAL);
	got_free(&g);
	assert_int_equal(read_text(HEADER "main;run 3\n10 #00 pc 1234 " APP "(main+1)\n", &g,
				   NULL), -EINVAL);
	got_free(&g);
	/* Folded lines without a count, or with an empty frame: no frame of theirs is given */
	assert_int_equal(read_text(HEADER "main;run\n", &g, NULL), -EINVAL);
	assert_int_equal(read_text(HEADER "main;;run 3\n", &g, NULL), -EINVAL);
	assert_int_equal(g.n, 0);
}

/* Frame makers for the writer's side. */
static struct jw_frame native(const char *module, const char *sym, uint64_t rel,
			      const char *build_id, const char *src)
{
	return (struct jw_frame){ .kind = JW_FRAME_NATIVE, .pc = 0x555500000000 + rel,
				  .rel_pc = rel, .module = module, .symbol = sym, .sym_off = 7,
				  .build_id = build_id, .src = src };
}

static struct jw_frame kernel(const char *sym, uint64_t pc)
{
	return (struct jw_frame){ .kind = JW_FRAME_KERNEL, .pc = pc, .module = "[kernel]",
				  .symbol = sym, .sym_off = sym ? 0x3c : 0 };
}

static struct jw_frame python(const char *name, const char *file, const char *src,
			      uint64_t code)
{
	return (struct jw_frame){ .kind = JW_FRAME_PYTHON, .pc = code, .rel_pc = 42,
				  .module = file, .symbol = name, .src = src };
}

static struct jw_frame jit(const char *name, const char *file, const char *src, uint64_t pc)
{
	return (struct jw_frame){ .kind = JW_FRAME_JIT, .pc = pc, .module = file, .symbol = name,
				  .src = src };
}

#define BID "93ac61ec5a8eb1396f9fbd350e3169a558528a40"

/* A tree with every kind of frame the writer writes, each stack at its own weight. */
static struct jw_stacktree *kinds_tree(const char *long_symbol)
{
	struct jw_stacktree *t = jw_stacktree__new();
	struct jw_frame s1[] = {
		native(APP, "_start", 0x1c91, BID, NULL),
		native(LIBC, "__libc_start_main", 0x27305, BID, "../csu/libc-start.c:360"),
		native(GAME, CXX_NAME, 0x2000, BID, "/home/me/my src/loop.cc:12"),
		native(APP, OP_PLUS, 0x3000, NULL, NULL),
		kernel("entry_SYSCALL_64_after_hwframe", 0xffffffff81000130),
		kernel(NULL, 0xffffffff816c6736),
	};
	struct jw_frame s2[] = {
		native(APP, "_start", 0x1c91, BID, NULL),
		native(LIBC, "__libc_start_main", 0x27305, BID, "../csu/libc-start.c:360"),
		native(LIBPY, "_PyEval_EvalFrameDefault", 0x1a2b3c, BID, NULL),
		python("Catalog.reindex", "/srv/app.py", "/srv/app.py:42", 0x7f0000001000),
		python("_find_and_load", "<frozen importlib._bootstrap>",
		       "<frozen importlib._bootstrap>:1360", 0x7f0000002000),
		native(LIBC, NULL, 0x9a0f0, BID, NULL),
	};
	struct jw_frame s3[] = {
		native(APP, "_start", 0x1c91, BID, NULL),
		native(LIBC, "__libc_start_main", 0x27305, BID, "../csu/libc-start.c:360"),
		jit("busyWork", "/app/index.js", "/app/index.js:10:18", 0x7f0000100000),
		jit("get foo", NULL, NULL, 0x7f0000100100),
		jit(NULL, NULL, NULL, 0x7f00dead),
		native(NULL, NULL, 0, NULL, NULL),
		native(NULL, "mystery", 0, NULL, NULL),
	};
	struct jw_frame s4[] = {
		native(APP, long_symbol, 0x4000, BID, "/src/app.c:1"),
		native("[vdso]", "__vdso_clock_gettime", 0xb46, BID, NULL),
		native(LIBGLIB, NULL, 0x41234, NULL, "gmain.c:3381"),
		native("/opt/My Game/game", NULL, 0xabcd, NULL, "/src/g.c:3"),
	};

	assert_non_null(t);
	s3[5].pc = 0x7fff1234;
	s3[6].pc = 0x7fff5678;
	assert_int_equal(jw_stacktree__add(t, s1, 6, true, 5, false), 0);
	assert_int_equal(jw_stacktree__add(t, s1, 4, true, 1, false), 0);
	assert_int_equal(jw_stacktree__add(t, s2, 6, true, 3, false), 0);
	assert_int_equal(jw_stacktree__add(t, s3, 7, true, 2, false), 0);
	assert_int_equal(jw_stacktree__add(t, s3, 6, true, 6, true), 0);
	assert_int_equal(jw_stacktree__add(t, s4, 4, false, 4, false), 0);
	assert_int_equal(jw_stacktree__add(t, s4, 2, false, 1, false), 0);
	return t;
}

/* What jw_stacktree__each() shows, as a reader should find it again. */
static int each_want(const struct jw_stacktree_node *n, void *ctx)
{
	const struct jw_frame *fr = n->fr;
	struct got *g = ctx;

	return collect(&(struct jw_stacklog_frame){
		.depth = n->depth,
		.count = n->count,
		.name = n->name,
		.where = !fr ? "" : fr->kind == JW_FRAME_KERNEL ? "[kernel]" :
			 fr->module ? fr->module : "",
		.owner = fr ? jw_frame_owner(fr) : JW_OWNER_COUNT,
	}, g);
}

/* @t written by @write into memory. */
static char *written(const struct jw_stacktree *t, int (*write)(const struct jw_stacktree *,
								  FILE *))
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	assert_non_null(f);
	fputs(HEADER, f);
	assert_int_equal(write(t, f), 0);
	assert_int_equal(fclose(f), 0);
	return out;
}

static void expect_same_frames(const struct got *a, const struct got *b)
{
	size_t i;

	assert_int_equal(a->n, b->n);
	for (i = 0; i < a->n; i++) {
		assert_int_equal(a->f[i].depth, b->f[i].depth);
		assert_int_equal(a->f[i].count, b->f[i].count);
		assert_string_equal(a->f[i].name, b->f[i].name);
		assert_string_equal(a->f[i].where, b->f[i].where);
		assert_int_equal(a->f[i].owner, b->f[i].owner);
	}
}

/* The writer's lines read back: every node as jw_stacktree__each() gives it. */
static void expect_round_trip(const char *long_symbol)
{
	struct jw_stacktree *t = kinds_tree(long_symbol);
	struct got want = { 0 }, got = { 0 };
	uint64_t samples = 0;
	char *text = written(t, jw_stacktree__write_tree);

	assert_int_equal(jw_stacktree__each(t, each_want, &want), 0);
	assert_int_equal(read_text(text, &got, &samples), 0);
	expect_same_frames(&got, &want);
	assert_int_equal(samples, jw_stacktree__total(t));
	assert_true(want.n >= 20);
	got_free(&want);
	got_free(&got);
	free(text);
	jw_stacktree__free(t);
}

static void test_round_trip_through_the_writer(void **state)
{
	char *longer = malloc(100001);

	(void)state;
	expect_round_trip("busy_work");
	/* A line far longer than any buffer of the writer's or the reader's */
	assert_non_null(longer);
	memset(longer, 'x', 100000);
	memcpy(longer + 100000 - 12, "(int, long)", 12);
	expect_round_trip(longer);
	free(longer);
}

static int merge_add(const struct jw_stacklog_frame *fr, void *ctx)
{
	return jw_flamemerge__add(ctx, fr);
}

/* The stack logs @texts merged. */
static struct jw_flamemerge *merged(const char *const *texts, size_t n)
{
	struct jw_flamemerge *m = jw_flamemerge__new();
	size_t i;

	assert_non_null(m);
	for (i = 0; i < n; i++) {
		FILE *f = fmemopen((char *)texts[i], strlen(texts[i]), "r");

		assert_non_null(f);
		assert_int_equal(jw_stacklog_read(f, merge_add, m, NULL), 0);
		fclose(f);
		jw_flamemerge__next(m);
	}
	return m;
}

static void test_merge_two_logs(void **state)
{
	static const char *const texts[] = { example, example2 };
	static const struct {
		const char *name;
		unsigned int depth;
		uint64_t count;
	} want[] = {
		{ "_start", 0, 15 },
		{ "__libc_start_main", 1, 15 },
		{ "__libc_start_call_main", 2, 15 },
		{ "main", 3, 15 },
		{ "timed_task", 4, 15 },
		{ "run_slow_task", 5, 15 },
		{ "dispatch", 6, 15 },
		{ "busy_work", 7, 15 },		/* +95, +107, +110 of both */
		{ "clock_gettime", 8, 10 },
		{ "__vdso_clock_gettime", 9, 10 },
	};
	struct jw_flamemerge *m = merged(texts, 2);
	struct jw_flame fl = { 0 };
	size_t i, cut = 99;

	(void)state;
	assert_int_equal(jw_flamemerge__total(m), 15);
	assert_int_equal(jw_flamemerge__logs(m), 2);
	assert_int_equal(jw_flamemerge__flame(m, 0, 0, &fl, &cut), 0);
	assert_int_equal(cut, 0);
	assert_int_equal(fl.n, sizeof(want) / sizeof(want[0]));
	assert_int_equal(fl.total, 15);
	assert_int_equal(fl.levels, 10);
	for (i = 0; i < fl.n; i++) {
		assert_string_equal(fl.nodes[i].name, want[i].name);
		assert_int_equal(fl.nodes[i].depth, want[i].depth);
		assert_int_equal(fl.nodes[i].count, want[i].count);
		assert_int_equal(fl.nodes[i].asleep, 0);
	}
	assert_string_equal(fl.nodes[7].line, "busy_work in " JWT);
	assert_string_equal(fl.nodes[9].line, "__vdso_clock_gettime in [vdso]");
	assert_int_equal(fl.nodes[8].owner, JW_OWNER_LIBC);
	assert_int_equal(fl.nodes[7].owner, JW_OWNER_PROGRAM);
	jw_flame__free(&fl);
	jw_flamemerge__free(m);
}

/* Adds a frame of APP. */
static void add(struct jw_flamemerge *m, unsigned int depth, uint64_t count, const char *name)
{
	struct jw_stacklog_frame fr = { depth, count, name, APP, JW_OWNER_PROGRAM };

	assert_int_equal(jw_flamemerge__add(m, &fr), 0);
}

static void expect_names(const struct jw_flame *fl, const char *const *names, size_t n)
{
	size_t i;

	assert_int_equal(fl->n, n);
	for (i = 0; i < n; i++)
		assert_string_equal(fl->nodes[i].name, names[i]);
}

static void test_merge_orders_siblings_by_count(void **state)
{
	static const char *const order[] = { "m", "y", "z", "w", "x", "n", "<module>",
					     "<module>" };
	struct jw_flamemerge *m = jw_flamemerge__new();
	struct jw_stacklog_frame a = { 1, 1, "<module>", "/srv/a.py", JW_OWNER_PYTHON };
	struct jw_stacklog_frame b = { 1, 1, "<module>", "/srv/b.py", JW_OWNER_PYTHON };
	struct jw_flame fl = { 0 };

	(void)state;
	assert_non_null(m);
	add(m, 0, 1, "m");
	add(m, 1, 1, "x");
	jw_flamemerge__next(m);
	add(m, 0, 5, "m");
	add(m, 1, 5, "y");
	jw_flamemerge__next(m);
	/* Equal counts: in the order first seen */
	add(m, 0, 4, "m");
	add(m, 1, 2, "z");
	add(m, 1, 2, "w");
	jw_flamemerge__next(m);
	/* The same name in two files is two boxes */
	add(m, 0, 2, "n");
	assert_int_equal(jw_flamemerge__add(m, &a), 0);
	assert_int_equal(jw_flamemerge__add(m, &b), 0);
	jw_flamemerge__next(m);
	assert_int_equal(jw_flamemerge__flame(m, 0, 0, &fl, NULL), 0);
	/* m (10) and its callees by count, then n (2) */
	expect_names(&fl, order, sizeof(order) / sizeof(order[0]));
	assert_int_equal(fl.nodes[0].count, 10);
	assert_int_equal(fl.nodes[1].count, 5);
	assert_string_equal(fl.nodes[1].line, "y in " APP);
	assert_string_equal(fl.nodes[6].line, "<module> in /srv/a.py");
	assert_string_equal(fl.nodes[7].line, "<module> in /srv/b.py");
	assert_int_equal(fl.nodes[6].owner, JW_OWNER_PYTHON);
	assert_int_equal(fl.total, 12);
	jw_flame__free(&fl);
	jw_flamemerge__free(m);
}

/*
 * r 99 (a 60 (a1 60), b 30 (b1 5), c 9 (c1 50: more than its caller, as a damaged log could
 * say: its width is its caller's 9)), s 1 (s1 1): total 100, 9 boxes.
 */
static struct jw_flamemerge *cut_graph(void)
{
	struct jw_flamemerge *m = jw_flamemerge__new();

	assert_non_null(m);
	add(m, 0, 99, "r");
	add(m, 1, 60, "a");
	add(m, 2, 60, "a1");
	add(m, 1, 30, "b");
	add(m, 2, 5, "b1");
	add(m, 1, 9, "c");
	add(m, 2, 50, "c1");
	jw_flamemerge__next(m);
	add(m, 0, 1, "s");
	add(m, 1, 1, "s1");
	jw_flamemerge__next(m);
	return m;
}

static void expect_cut(const struct jw_flamemerge *m, unsigned int permille, size_t max_boxes,
		       const char *const *names, size_t n, size_t nr_cut)
{
	struct jw_flame fl = { 0 };
	size_t cut = 99;

	assert_int_equal(jw_flamemerge__flame(m, permille, max_boxes, &fl, &cut), 0);
	expect_names(&fl, names, n);
	assert_int_equal(cut, nr_cut);
	assert_int_equal(fl.total, 100);
	jw_flame__free(&fl);
}

static void test_merge_cuts_narrow_boxes(void **state)
{
	static const char *const all[] = { "r", "a", "a1", "b", "b1", "c", "c1", "s", "s1" };
	static const char *const wide[] = { "r", "a", "a1", "b", "s" };
	static const char *const four[] = { "r", "a", "a1", "s" };
	static const char *const roots[] = { "r", "s" };
	static const char *const five[] = { "r", "a", "a1", "b", "s" };
	struct jw_flamemerge *m = cut_graph();

	(void)state;
	expect_cut(m, 0, 0, all, 9, 0);
	expect_cut(m, 0, 9, all, 9, 0);
	/* Under 10 of 100: b1 (5), c (9) with c1 (at most 9 wide), s1 (1); not the root s */
	expect_cut(m, 100, 0, wide, 5, 4);
	expect_cut(m, 91, 0, wide, 5, 4);
	/* At most 4 boxes: the two roots and the two widest; equal widths go together */
	expect_cut(m, 0, 4, four, 4, 5);
	expect_cut(m, 100, 4, four, 4, 5);
	expect_cut(m, 0, 3, roots, 2, 7);
	/* c1 is no wider than c: 5 boxes keep b (30), not c1 */
	expect_cut(m, 0, 5, five, 5, 4);
	/* Roots are never cut */
	expect_cut(m, 0, 1, roots, 2, 7);
	expect_cut(m, 1000, 0, roots, 2, 7);
	expect_cut(m, 5000, 0, roots, 2, 7);
	jw_flamemerge__free(m);
}

static void test_merge_rejects_depth_jumps(void **state)
{
	struct jw_flamemerge *m = jw_flamemerge__new();
	struct jw_stacklog_frame fr = { 1, 3, "x", "", JW_OWNER_UNKNOWN };
	struct jw_flame fl = { 0 };
	size_t cut;

	(void)state;
	assert_non_null(m);
	assert_int_equal(jw_flamemerge__add(m, &fr), -EINVAL);
	add(m, 0, 3, "r");
	fr.depth = 2;
	assert_int_equal(jw_flamemerge__add(m, &fr), -EINVAL);
	fr.depth = 1;
	assert_int_equal(jw_flamemerge__add(m, &fr), 0);
	fr.depth = 2;
	assert_int_equal(jw_flamemerge__add(m, &fr), 0);
	jw_flamemerge__next(m);
	/* After a log's end, only a root */
	fr.depth = 1;
	assert_int_equal(jw_flamemerge__add(m, &fr), -EINVAL);
	fr.name = NULL;
	fr.depth = 0;
	assert_int_equal(jw_flamemerge__add(m, &fr), -EINVAL);
	assert_int_equal(jw_flamemerge__total(m), 3);
	assert_int_equal(jw_flamemerge__flame(m, 0, 0, &fl, &cut), 0);
	assert_int_equal(fl.n, 3);
	assert_int_equal(cut, 0);
	jw_flame__free(&fl);
	jw_flamemerge__free(m);
}

/* The writer's tree and folded lines of one tree merge into the same graph, by name. */
static void test_merge_tree_and_folded_alike(void **state)
{
	struct jw_stacktree *t = kinds_tree("busy_work");
	char *tree = written(t, jw_stacktree__write_tree);
	char *folded = written(t, jw_stacktree__write_folded);
	struct jw_flamemerge *a = merged((const char *const[]){ tree }, 1);
	struct jw_flamemerge *b = merged((const char *const[]){ folded }, 1);
	struct jw_flame fa = { 0 }, fb = { 0 };
	size_t i;

	(void)state;
	assert_int_equal(jw_flamemerge__total(a), jw_stacktree__total(t));
	assert_int_equal(jw_flamemerge__total(b), jw_stacktree__total(t));
	assert_int_equal(jw_flamemerge__flame(a, 0, 0, &fa, NULL), 0);
	assert_int_equal(jw_flamemerge__flame(b, 0, 0, &fb, NULL), 0);
	assert_int_equal(fa.n, fb.n);
	assert_int_equal(fa.total, fb.total);
	for (i = 0; i < fa.n; i++) {
		assert_string_equal(fa.nodes[i].name, fb.nodes[i].name);
		assert_int_equal(fa.nodes[i].depth, fb.nodes[i].depth);
		assert_int_equal(fa.nodes[i].count, fb.nodes[i].count);
	}
	/* Folded lines name frames only */
	assert_int_equal(fb.nodes[1].owner, JW_OWNER_UNKNOWN);
	assert_int_equal(fa.nodes[1].owner, JW_OWNER_LIBC);
	jw_flame__free(&fa);
	jw_flame__free(&fb);
	jw_flamemerge__free(a);
	jw_flamemerge__free(b);
	free(tree);
	free(folded);
	jw_stacktree__free(t);
}

#define DEEP 5000

/* A stack far deeper than the writer keeps, merged and drawn without recursion. */
static void test_merge_deep_stacks(void **state)
{
	char *line = malloc(DEEP * 8 + 16), *p = line;
	struct jw_stacklog_frame fr = { 0 };
	struct jw_flamemerge *m;
	struct jw_flame fl = { 0 };
	char name[16];
	unsigned int i;

	(void)state;
	assert_non_null(line);
	for (i = 0; i < DEEP; i++)
		p += sprintf(p, "%sf%u", i ? ";" : "", i % 7);
	strcpy(p, " 3\n");
	/* One folded log, one added frame by frame: the same path */
	m = merged((const char *const[]){ line }, 1);
	fr.name = name;
	fr.where = "";
	fr.owner = JW_OWNER_UNKNOWN;
	fr.count = 2;
	for (i = 0; i < DEEP; i++) {
		fr.depth = i;
		snprintf(name, sizeof(name), "f%u", i % 7);
		assert_int_equal(jw_flamemerge__add(m, &fr), 0);
	}
	jw_flamemerge__next(m);
	assert_int_equal(jw_flamemerge__logs(m), 2);
	assert_int_equal(jw_flamemerge__flame(m, 0, 0, &fl, NULL), 0);
	assert_int_equal(fl.n, DEEP);
	assert_int_equal(fl.levels, DEEP);
	assert_int_equal(fl.total, 5);
	assert_int_equal(fl.nodes[DEEP - 1].count, 5);
	assert_string_equal(fl.nodes[DEEP - 1].name, "f1");
	jw_flame__free(&fl);
	jw_flamemerge__free(m);
	free(line);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_kernel_lines),
		cmocka_unit_test(test_parse_native_lines),
		cmocka_unit_test(test_parse_cxx_symbols),
		cmocka_unit_test(test_parse_jit_and_python_lines),
		cmocka_unit_test(test_parse_rejects_garbage),
		cmocka_unit_test(test_read_tree_log),
		cmocka_unit_test(test_read_folded_log),
		cmocka_unit_test(test_read_wchan_log),
		cmocka_unit_test(test_read_damaged_logs),
		cmocka_unit_test(test_round_trip_through_the_writer),
		cmocka_unit_test(test_merge_two_logs),
		cmocka_unit_test(test_merge_orders_siblings_by_count),
		cmocka_unit_test(test_merge_cuts_narrow_boxes),
		cmocka_unit_test(test_merge_rejects_depth_jumps),
		cmocka_unit_test(test_merge_tree_and_folded_alike),
		cmocka_unit_test(test_merge_deep_stacks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
