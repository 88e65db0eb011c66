// SPDX-License-Identifier: GPL-2.0-only
/*
 * Samples to frames: the frame-pointer stack outermost first, the kernel stack after it without
 * jankwatch's own frames above the scheduler for a blocked sample, and what counts as a stack
 * that reaches its thread's root. (DWARF unwinding is tested in test_unwind.c.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "stacks/stacks.h"

struct fixture {
	struct jw_stacks *st;
	struct jw_ksyms *ks;
	struct jw_frame frames[JW_MAX_FRAMES];
};

/* A kernel with a scheduler text at 0x2000..0x3000 and a function on each side. */
static int setup(void **state)
{
	static const uint64_t addrs[] = { 0x1000, 0x2000, 0x2100, 0x3000, 0x4000 };
	static const char *const names[] = { "bpf_trace_run", "__sched_text_start", "__schedule",
					     "__sched_text_end", "do_epoll_wait" };
	struct fixture *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	fx->ks = jw_ksyms__from_list(addrs, names, 5);
	fx->st = jw_stacks__new(fx->ks);
	if (!fx->ks || !fx->st)
		return -1;
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	jw_stacks__free(fx->st);
	jw_ksyms__free(fx->ks);
	free(fx);
	return 0;
}

static struct jw_sample_rec *sample(uint16_t kind, const uint64_t *user, size_t n_user,
				    const uint64_t *kernel, size_t n_kernel)
{
	struct jw_sample_rec *s = calloc(1, sizeof(*s));

	assert_non_null(s);
	s->hdr.size = sizeof(*s);
	s->mode = JW_UNWIND_FP;
	s->kind = kind;
	s->n_user = n_user;
	s->n_kernel = n_kernel;
	if (n_user)
		memcpy(s->user_ips, user, n_user * sizeof(*user));
	if (n_kernel)
		memcpy(s->kernel_ips, kernel, n_kernel * sizeof(*kernel));
	return s;
}

/* Leaf-first pcs come out outermost first, then the kernel's, outermost first too. */
static void test_fp_order(void **state)
{
	struct fixture *fx = *state;
	static const uint64_t user[] = { 0x401010, 0x402020, 0x403030 };
	static const uint64_t kernel[] = { 0x4010, 0x1010 };
	struct jw_sample_rec *s = sample(JW_SAMPLE_ONCPU, user, 3, kernel, 2);
	size_t n = jw_stacks__frames(fx->st, NULL, s, fx->frames);

	assert_int_equal(n, 5);
	assert_int_equal(fx->frames[0].pc, 0x403030);
	assert_int_equal(fx->frames[2].pc, 0x401010);
	assert_int_equal(fx->frames[3].kind, JW_FRAME_KERNEL);
	assert_string_equal(fx->frames[3].symbol, "bpf_trace_run");
	assert_string_equal(fx->frames[4].symbol, "do_epoll_wait");
	/* Nothing names the user frames: not a complete stack. */
	assert_false(jw_stacks_complete(fx->frames, n));
	free(s);
}

/* A blocked sample's frames above the scheduler (the tracepoint, BPF) are jankwatch's own. */
static void test_blocked_drops_own_frames(void **state)
{
	struct fixture *fx = *state;
	static const uint64_t user[] = { 0x401010 };
	static const uint64_t kernel[] = { 0x1010, 0x2110, 0x4010 };
	struct jw_sample_rec *s = sample(JW_SAMPLE_BLOCKED, user, 1, kernel, 3);
	size_t n = jw_stacks__frames(fx->st, NULL, s, fx->frames);

	assert_int_equal(n, 3);
	assert_string_equal(fx->frames[1].symbol, "do_epoll_wait");
	assert_string_equal(fx->frames[2].symbol, "__schedule");
	/* On CPU, every kernel frame is the thread's. */
	s->kind = JW_SAMPLE_ONCPU;
	assert_int_equal(jw_stacks__frames(fx->st, NULL, s, fx->frames), 4);
	free(s);
}

/* Without kallsyms, kernel frames still come, by address. */
static void test_no_ksyms(void **state)
{
	struct fixture *fx = *state;
	static const uint64_t kernel[] = { 0x1010 };
	struct jw_sample_rec *s = sample(JW_SAMPLE_ONCPU, NULL, 0, kernel, 1);

	jw_stacks__set_ksyms(fx->st, NULL);
	assert_int_equal(jw_stacks__frames(fx->st, NULL, s, fx->frames), 1);
	assert_null(fx->frames[0].symbol);
	assert_int_equal(fx->frames[0].pc, 0x1010);
	jw_stacks__set_ksyms(fx->st, fx->ks);
	free(s);
}

/* A DWARF sample whose copy is malformed unwinds to nothing rather than reading past it. */
static void test_dwarf_bad_copy(void **state)
{
	struct fixture *fx = *state;
	struct jw_sample_rec *s = sample(JW_SAMPLE_ONCPU, NULL, 0, NULL, 0);

	s->mode = JW_UNWIND_DWARF;
	s->stack_size = 4096;	/* claimed, but the record holds none */
	assert_int_equal(jw_stacks__frames(fx->st, NULL, s, fx->frames), 0);
	free(s);
}

static void test_complete(void **state)
{
	struct jw_frame f[2] = { { .kind = JW_FRAME_NATIVE, .symbol = "_start" },
				 { .kind = JW_FRAME_NATIVE, .symbol = "main" } };

	(void)state;
	assert_true(jw_stacks_complete(f, 2));
	assert_false(jw_stacks_complete(f, 0));
	f[0].kind = JW_FRAME_KERNEL;
	assert_false(jw_stacks_complete(f, 2));
	f[0].kind = JW_FRAME_NATIVE;
	f[0].symbol = "main";
	assert_false(jw_stacks_complete(f, 2));
}

static void test_thread_root(void **state)
{
	static const char *const yes[] = {
		"_start", "__libc_start_main", "__libc_start_call_main", "__libc_start_main_impl",
		"start_thread", "clone", "clone3", "__clone", "__clone3", "__clone_internal",
		"thread_start",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		assert_true(jw_symbol_is_thread_root(yes[i]));
	assert_false(jw_symbol_is_thread_root(NULL));
	assert_false(jw_symbol_is_thread_root("main"));
	assert_false(jw_symbol_is_thread_root("_start_"));
	assert_false(jw_symbol_is_thread_root(""));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_fp_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_blocked_drops_own_frames, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_ksyms, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dwarf_bad_copy, setup, teardown),
		cmocka_unit_test(test_complete),
		cmocka_unit_test(test_thread_root),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
