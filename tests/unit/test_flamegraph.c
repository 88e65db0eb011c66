// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests of the flame graph: its boxes from the tree, the SVG's boxes, and escaping. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "output/markup.h"
#include "report/flamegraph.h"
#include "report/stacktree.h"

#define APP "/usr/bin/app"
#define LIBC "/usr/lib/x86_64-linux-gnu/libc.so.6"
#define LIBPY "/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0"
#define CXX_NAME "std::vector<int, std::allocator<int> >::push_back(int&&)"

/* Text written by @fn into a memstream, NUL-terminated; the caller frees it. */
static char *captured(size_t (*fn)(FILE *, const char *, size_t), const char *s, size_t max)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	assert_non_null(f);
	fn(f, s, max);
	assert_int_equal(fclose(f), 0);
	return out;
}

static size_t put_whole(FILE *f, const char *s, size_t max)
{
	(void)max;
	return jw_markup_put(f, s);
}

static void expect_put(const char *in, const char *want)
{
	char *got = captured(put_whole, in, 0);

	assert_string_equal(got, want);
	free(got);
}

static void expect_cut(const char *in, size_t max, const char *want)
{
	char *got = captured(jw_markup_put_cut, in, max);

	assert_string_equal(got, want);
	free(got);
}

static void test_markup_escapes_what_markup_reads(void **state)
{
	(void)state;
	expect_put("a<b>&\"c\"'d", "a&lt;b&gt;&amp;&quot;c&quot;&#39;d");
	expect_put(CXX_NAME,
		   "std::vector&lt;int, std::allocator&lt;int&gt; &gt;::push_back(int&amp;&amp;)");
	expect_put("main::{lambda()#1}::operator()", "main::{lambda()#1}::operator()");
	expect_put("Greeter.<locals>.<lambda>", "Greeter.&lt;locals&gt;.&lt;lambda&gt;");
	expect_put("<module> app.py:3", "&lt;module&gt; app.py:3");
	/* Control bytes and bytes that are not UTF-8 become '?'; UTF-8 stays. */
	expect_put("a\nb\x01" "c", "a?b?c");
	expect_put("caf\xc3\xa9 \xff\xfe x\xe2\x82", "caf\xc3\xa9 ?? x??");
	assert_int_equal(jw_markup_chars("caf\xc3\xa9"), 4);
	assert_int_equal(jw_markup_chars("\xff" "a"), 2);
}

static void test_markup_cut(void **state)
{
	(void)state;
	expect_cut("abcdef", 6, "abcdef");
	expect_cut("abcdefg", 6, "abcd..");
	expect_cut("abcdefg", 3, "a..");
	expect_cut("abcdefg", 2, "");
	/* Cut by characters, never inside one, escaped after the cut. */
	expect_cut("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 3, "\xc3\xa9..");
	expect_cut("<<<<<", 4, "&lt;&lt;..");
}

static struct jw_frame native(const char *module, const char *sym, uint64_t rel)
{
	return (struct jw_frame){ .kind = JW_FRAME_NATIVE, .pc = 0x1000 + rel, .rel_pc = rel,
				  .module = module, .symbol = sym };
}

static struct jw_frame kernel(const char *sym, uint64_t pc)
{
	return (struct jw_frame){ .kind = JW_FRAME_KERNEL, .pc = pc, .symbol = sym };
}

/*
 * A jank's tree: main -> run -> busy (7, on the CPU), main -> run -> read -> schedule (2, asleep:
 * one sample standing for 2 periods), main -> CXX_NAME (1), and a stack cut short (1).
 */
static struct jw_stacktree *jank_tree(void)
{
	struct jw_stacktree *t = jw_stacktree__new();
	struct jw_frame busy[] = { native(APP, "main", 0x10), native(APP, "run", 0x20),
				   native(APP, "busy", 0x30) };
	struct jw_frame slept[] = { native(APP, "main", 0x10), native(APP, "run", 0x20),
				    native(LIBC, "read", 0x40), kernel("schedule", 0xffff1000) };
	struct jw_frame cxx[] = { native(APP, "main", 0x10), native(APP, CXX_NAME, 0x50) };
	struct jw_frame cut[] = { native(LIBPY, "_PyEval_EvalFrameDefault", 0x60) };
	int i;

	assert_non_null(t);
	for (i = 0; i < 7; i++)
		assert_int_equal(jw_stacktree__add(t, busy, 3, true, 1, false), 0);
	assert_int_equal(jw_stacktree__add(t, slept, 4, true, 2, true), 0);
	assert_int_equal(jw_stacktree__add(t, cxx, 2, true, 1, false), 0);
	assert_int_equal(jw_stacktree__add(t, cut, 1, false, 1, false), 0);
	return t;
}

static void test_boxes_follow_the_tree(void **state)
{
	struct jw_stacktree *t = jank_tree();
	struct jw_flame fl = { 0 };
	static const struct {
		const char *name;
		unsigned int depth;
		uint64_t count, asleep;
		enum jw_frame_owner owner;
	} want[] = {
		{ "main", 0, 10, 2, JW_OWNER_PROGRAM },
		{ "run", 1, 9, 2, JW_OWNER_PROGRAM },
		{ "busy", 2, 7, 0, JW_OWNER_PROGRAM },
		{ "read", 2, 2, 2, JW_OWNER_LIBC },
		{ "schedule", 3, 2, 2, JW_OWNER_KERNEL },
		{ CXX_NAME, 1, 1, 0, JW_OWNER_PROGRAM },
		{ "[truncated]", 0, 1, 0, JW_OWNER_COUNT },
		{ "_PyEval_EvalFrameDefault", 1, 1, 0, JW_OWNER_INTERPRETER },
	};
	size_t i;

	(void)state;
	assert_int_equal(jw_flame__from_tree(&fl, t), 0);
	assert_int_equal(fl.n, sizeof(want) / sizeof(want[0]));
	assert_int_equal(fl.total, 11);
	assert_int_equal(fl.levels, 4);
	for (i = 0; i < fl.n; i++) {
		assert_string_equal(fl.nodes[i].name, want[i].name);
		assert_int_equal(fl.nodes[i].depth, want[i].depth);
		assert_int_equal(fl.nodes[i].count, want[i].count);
		assert_int_equal(fl.nodes[i].asleep, want[i].asleep);
		assert_int_equal(fl.nodes[i].owner, want[i].owner);
	}
	/* Each box's line is the stack log's, as jw_stacktree__write_tree() writes it. */
	assert_string_equal(fl.nodes[0].line, "10 #00 pc 00000010 /usr/bin/app(main+0)");
	assert_string_equal(fl.nodes[6].line, "1 #00 pc 00000000 [truncated]");
	jw_flame__free(&fl);
	assert_int_equal(fl.n, 0);
	jw_stacktree__free(t);
}

static void test_push_keeps_the_tree_shape(void **state)
{
	struct jw_flame fl = { 0 };

	(void)state;
	assert_int_equal(jw_flame__push(&fl, "a", "1 #00 a", JW_OWNER_PROGRAM, 1, 1, 0), -EINVAL);
	assert_int_equal(jw_flame__push(&fl, "a", "1 #00 a", JW_OWNER_PROGRAM, 0, 3, 0), 0);
	assert_int_equal(jw_flame__push(&fl, "b", "1 #01 b", JW_OWNER_PROGRAM, 1, 2, 0), 0);
	assert_int_equal(jw_flame__push(&fl, "c", "1 #03 c", JW_OWNER_PROGRAM, 3, 2, 0), -EINVAL);
	assert_int_equal(jw_flame__push(&fl, "d", "1 #00 d", JW_OWNER_PROGRAM, 0, 4, 0), 0);
	assert_int_equal(fl.total, 7);
	assert_int_equal(fl.levels, 2);
	jw_flame__free(&fl);
}

static char *svg_of(const struct jw_flame *fl, const struct jw_flame_head *head)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	assert_non_null(f);
	assert_int_equal(jw_flame_svg_write(fl, head, f), 0);
	assert_int_equal(fclose(f), 0);
	return out;
}

/* The value of attribute @attr in the @k-th (0-based) box's <g> of @svg, as a number. */
static double box_attr(const char *svg, size_t k, const char *attr)
{
	const char *g = svg, *end;
	char key[64];

	do {
		g = strstr(g + 1, "<g class=\"f\"");
		assert_non_null(g);
	} while (k--);
	end = strstr(g, "</g>");
	snprintf(key, sizeof(key), " %s=\"", attr);
	g = strstr(g, key);
	assert_non_null(g);
	assert_true(g < end);
	return strtod(g + strlen(key), NULL);
}

static size_t count_of(const char *s, const char *what)
{
	size_t n = 0;

	for (s = strstr(s, what); s; s = strstr(s + 1, what))
		n++;
	return n;
}

static void test_svg_draws_every_box_as_wide_as_its_samples(void **state)
{
	struct jw_stacktree *t = jank_tree();
	struct jw_flame fl = { 0 };
	const struct jw_flame_head head = { "app (pid 7) <tick> & \"more\"", "cause cpu" };
	double unit = (JW_FLAME_WIDTH - 20) / 11.0;
	char *svg;

	(void)state;
	assert_int_equal(jw_flame__from_tree(&fl, t), 0);
	svg = svg_of(&fl, &head);
	assert_int_equal(count_of(svg, "<g class=\"f\""), fl.n);
	assert_int_equal(count_of(svg, "<title>"), fl.n);
	/* Rows: main at the bottom, its callees above it, side by side by count. */
	assert_true(box_attr(svg, 0, "data-n") == 10 && box_attr(svg, 0, "data-x") == 0);
	assert_true(box_attr(svg, 1, "data-x") == 0);		/* run, where main starts */
	assert_true(box_attr(svg, 3, "data-x") == 7);		/* read, after busy's 7 */
	assert_true(box_attr(svg, 5, "data-x") == 9);		/* CXX_NAME, after run's 9 */
	assert_true(box_attr(svg, 6, "data-x") == 10);		/* the cut stacks, after main */
	assert_true(box_attr(svg, 7, "data-x") == 10);
	assert_non_null(strstr(svg, "data-asleep=\"2\" data-depth=\"3\""));
	/* main's box: 10 of the 11 samples' width; the cut root's after it. */
	assert_non_null(strstr(svg, "<rect x=\"10.00\" y=\"112.0\" width=\"1072.73\""));
	assert_true(unit * 10 > 1072.72 && unit * 10 < 1072.74);
	/* The hatch over the asleep share: read's whole box, run's 2 of 9 at its right end. */
	assert_int_equal(count_of(svg, "class=\"zz\""), 4);
	/* Names escaped in the name, the label and the title; the head's too. */
	assert_non_null(strstr(svg, "data-name=\"std::vector&lt;int, std::allocator&lt;int&gt; "
				    "&gt;::push_back(int&amp;&amp;)\""));
	assert_non_null(strstr(svg, "<title>1 #01 pc 00000050 /usr/bin/app(std::vector&lt;int"));
	assert_non_null(strstr(svg, "app (pid 7) &lt;tick&gt; &amp; &quot;more&quot;"));
	assert_null(strstr(svg, "<tick>"));
	/* Owners named for the script and the legend; nothing fetched from elsewhere. */
	assert_non_null(strstr(svg, "data-owner=\"interpreter\""));
	assert_non_null(strstr(svg, "data-owner=\"truncated\""));
	assert_non_null(strstr(svg, "asleep (off the CPU)"));
	assert_int_equal(count_of(svg, "http"), 1);	/* the SVG namespace's name */
	assert_null(strstr(svg, "href"));
	free(svg);
	jw_flame__free(&fl);
	jw_stacktree__free(t);
}

static void test_svg_of_nothing(void **state)
{
	struct jw_flame fl = { 0 };
	char *svg;

	(void)state;
	svg = svg_of(&fl, NULL);
	assert_int_equal(count_of(svg, "<g class=\"f\""), 0);
	assert_non_null(strstr(svg, "data-total=\"0\""));
	assert_non_null(strstr(svg, "</svg>\n"));
	free(svg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_markup_escapes_what_markup_reads),
		cmocka_unit_test(test_markup_cut),
		cmocka_unit_test(test_boxes_follow_the_tree),
		cmocka_unit_test(test_push_keeps_the_tree_shape),
		cmocka_unit_test(test_svg_draws_every_box_as_wide_as_its_samples),
		cmocka_unit_test(test_svg_of_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
