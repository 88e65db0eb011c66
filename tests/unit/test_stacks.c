// SPDX-License-Identifier: GPL-2.0-only
/*
 * Samples to frames: the frame-pointer stack outermost first, the kernel stack after it without
 * jankwatch's own frames above the scheduler for a blocked sample, and what counts as a stack
 * that reaches its thread's root. (DWARF unwinding is tested in test_unwind.c.)
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "stacks/regs.h"
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

/*
 * Where the kernel's programs could not put the pending returns back (the compatible build has
 * no bpf_loop), the frame-pointer walk's trampoline addresses are the pending returns, in order.
 */
static void test_fp_trampolines_put_back(void **state)
{
	struct fixture *fx = *state;
	static const uint64_t tramp = 0x7fff0000;
	static const uint64_t user[] = { 0x401010, tramp, 0x403030, tramp, 0x405050 };
	struct jw_sample_rec *s = sample(JW_SAMPLE_ONCPU, user, 5, NULL, 0);
	size_t n;

	s->tramp = tramp;
	s->n_rets = 2;
	s->ret_addr[0] = 0x402020;
	s->ret_addr[1] = 0x404040;
	n = jw_stacks__frames(fx->st, NULL, s, fx->frames);
	assert_int_equal(n, 5);
	assert_int_equal(fx->frames[0].pc, 0x405050);
	assert_int_equal(fx->frames[1].pc, 0x404040);
	assert_int_equal(fx->frames[3].pc, 0x402020);
	/* Put back already (the full build did it): nothing left to replace. */
	s->user_ips[1] = 0x402020;
	s->user_ips[3] = 0x404040;
	n = jw_stacks__frames(fx->st, NULL, s, fx->frames);
	assert_int_equal(fx->frames[1].pc, 0x404040);
	assert_int_equal(fx->frames[3].pc, 0x402020);
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

/* A record claiming more kernel frames than it holds gives those it holds, no more. */
static void test_kernel_count_bounded(void **state)
{
	struct fixture *fx = *state;
	static const uint64_t user[] = { 0x401010 };
	static const uint64_t kernel[] = { 0x4010, 0x1010 };
	struct jw_sample_rec *s = sample(JW_SAMPLE_ONCPU, user, 1, kernel, 2);

	s->n_kernel = 1000;
	assert_int_equal(jw_stacks__frames(fx->st, NULL, s, fx->frames), 1 + JW_MAX_KERNEL_FRAMES);
	assert_int_equal(fx->frames[1 + JW_MAX_KERNEL_FRAMES - 1].pc, 0x4010);
	free(s);
}

/* DWARF mode shows the DWARF stack, even none; auto mode falls back to the frame pointers'. */
static void test_mode_picks_the_stack(void **state)
{
	struct fixture *fx = *state;
	static const uint64_t user[] = { 0x401010, 0x402020 };
	struct jw_sample_rec *s = sample(JW_SAMPLE_ONCPU, user, 2, NULL, 0);

	s->mode = JW_UNWIND_DWARF;
	assert_int_equal(jw_stacks__frames(fx->st, NULL, s, fx->frames), 0);
	s->mode = JW_UNWIND_AUTO;
	assert_int_equal(jw_stacks__frames(fx->st, NULL, s, fx->frames), 2);
	assert_int_equal(fx->frames[0].pc, 0x402020);
	assert_int_equal(fx->frames[1].pc, 0x401010);
	free(s);
}

/* A machine jankwatch does not know is refused, and the one before it kept. */
static void test_set_machine(void **state)
{
	struct fixture *fx = *state;
	static const uint64_t user[] = { 0x401010 };
	struct jw_sample_rec *s = sample(JW_SAMPLE_ONCPU, user, 1, NULL, 0);

	assert_int_equal(jw_stacks__set_machine(fx->st, 3 /* EM_386 */), -ENOTSUP);
	s->mode = JW_UNWIND_AUTO;
	assert_int_equal(jw_stacks__frames(fx->st, NULL, s, fx->frames), 1);
	assert_int_equal(jw_stacks__set_machine(fx->st, JW_ARM64_MACHINE), 0);
	assert_int_equal(jw_stacks__set_machine(fx->st, JW_X86_64_MACHINE), 0);
	assert_int_equal(jw_stacks__frames(fx->st, NULL, s, fx->frames), 1);
	free(s);
}

/* Functions of this binary for the samples below to be in: real calls, bodies of their own. */
static __attribute__((noinline, used)) int lr_leaf(int x)
{
	return x * 7 + 3;
}

static __attribute__((noinline, used)) int lr_caller(int x)
{
	return lr_leaf(x) * 5 - 1;
}

static __attribute__((noinline, used)) int lr_outer(int x)
{
	return lr_caller(x + 11) ^ 0x55;
}

#define FN(f) ((uint64_t)(uintptr_t)&(f))

/*
 * arm64: a leaf whose caller is only in the link register (no frame record saved yet) gets it
 * between itself and the walk's next frame; not when the walk has it next already, nor when the
 * link register points into the leaf's own function, nor where there is no link register.
 */
static void test_link_register_caller(void **state)
{
	struct fixture *fx = *state;
	uint64_t user[] = { FN(lr_leaf) + 1, FN(lr_outer) + 4 };
	struct jw_symbolizer *sym;
	struct jw_sample_rec *s;

	/* Its process's maps name its functions: not so under an emulator (the arm64 build's). */
	if (JW_MACHINE != JW_X86_64_MACHINE)
		skip();
	sym = jw_symbolizer__new(getpid());
	s = sample(JW_SAMPLE_ONCPU, user, 2, NULL, 0);
	assert_non_null(sym);
	assert_int_equal(jw_stacks__set_machine(fx->st, JW_ARM64_MACHINE), 0);
	s->regs[JW_ARM64_UREG_LR] = FN(lr_caller) + 4;
	assert_int_equal(jw_stacks__frames(fx->st, sym, s, fx->frames), 3);
	assert_int_equal(fx->frames[0].pc, FN(lr_outer) + 4);
	assert_int_equal(fx->frames[1].pc, FN(lr_caller) + 4);
	assert_non_null(fx->frames[1].symbol);
	assert_string_equal(fx->frames[1].symbol, "lr_caller");
	assert_int_equal(fx->frames[2].pc, FN(lr_leaf) + 1);

	s->regs[JW_ARM64_UREG_LR] = FN(lr_outer) + 4;	/* the walk's next frame already */
	assert_int_equal(jw_stacks__frames(fx->st, sym, s, fx->frames), 2);
	s->regs[JW_ARM64_UREG_LR] = FN(lr_leaf) + 2;	/* the leaf called something that returned */
	assert_int_equal(jw_stacks__frames(fx->st, sym, s, fx->frames), 2);
	s->regs[JW_ARM64_UREG_LR] = 0;
	assert_int_equal(jw_stacks__frames(fx->st, sym, s, fx->frames), 2);

	s->regs[JW_ARM64_UREG_LR] = FN(lr_caller) + 4;
	assert_int_equal(jw_stacks__set_machine(fx->st, JW_X86_64_MACHINE), 0);
	assert_int_equal(jw_stacks__frames(fx->st, sym, s, fx->frames), 2);
	free(s);
	jw_symbolizer__free(sym);
}

#define COPY_BYTES 256
#define TRAMP 0x7fff1000ULL
#define SP 0x7ffc0000ULL

/*
 * x86-64, DWARF: a leaf at its entry whose return address (the word at sp) a pending return
 * probe replaced: its caller comes from the real one put back; in auto mode the frame pointers'
 * continue it. The same sample whose record does not hold the copy it claims unwinds to nothing.
 */
static void test_dwarf_pending_return(void **state)
{
	struct fixture *fx = *state;
	struct jw_symbolizer *sym;
	struct jw_sample_rec *s;
	size_t n;

	if (JW_MACHINE != JW_X86_64_MACHINE)
		skip();
	sym = jw_symbolizer__new(getpid());
	assert_non_null(sym);
	s = calloc(1, sizeof(*s) + COPY_BYTES);
	assert_non_null(s);
	s->hdr.size = sizeof(*s) + COPY_BYTES;
	s->mode = JW_UNWIND_DWARF;
	s->kind = JW_SAMPLE_ONCPU;
	s->stack_size = COPY_BYTES;
	s->regs[JW_X86_64_UREG_IP] = FN(lr_leaf);
	s->regs[JW_X86_64_UREG_SP] = SP;
	s->tramp = TRAMP;
	s->n_rets = 1;
	s->ret_sp[0] = SP;
	s->ret_addr[0] = FN(lr_caller) + 4;
	memcpy(s->stack, &s->tramp, sizeof(s->tramp));

	/* The copy above the return address is zeros: the unwind ends at the caller. */
	n = jw_stacks__frames(fx->st, sym, s, fx->frames);
	assert_int_equal(n, 2);
	assert_int_equal(fx->frames[1].pc, FN(lr_leaf));
	assert_int_equal(fx->frames[0].pc, FN(lr_caller) + 4);
	assert_non_null(fx->frames[0].symbol);
	assert_string_equal(fx->frames[0].symbol, "lr_caller");

	/* Auto mode: the DWARF stack, short of the root, continued by the frame pointers'. */
	s->mode = JW_UNWIND_AUTO;
	s->n_user = 3;
	s->user_ips[0] = FN(lr_leaf);
	s->user_ips[1] = FN(lr_caller) + 4;
	s->user_ips[2] = FN(lr_outer) + 4;
	assert_int_equal(jw_stacks__frames(fx->st, sym, s, fx->frames), 3);
	assert_int_equal(fx->frames[0].pc, FN(lr_outer) + 4);
	assert_int_equal(fx->frames[1].pc, FN(lr_caller) + 4);
	assert_int_equal(fx->frames[2].pc, FN(lr_leaf));
	s->mode = JW_UNWIND_DWARF;

	s->hdr.size = sizeof(*s) + COPY_BYTES - 1;
	assert_int_equal(jw_stacks__frames(fx->st, sym, s, fx->frames), 0);
	free(s);
	jw_symbolizer__free(sym);
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
		cmocka_unit_test_setup_teardown(test_fp_trampolines_put_back, setup, teardown),
		cmocka_unit_test_setup_teardown(test_blocked_drops_own_frames, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_ksyms, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dwarf_bad_copy, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kernel_count_bounded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mode_picks_the_stack, setup, teardown),
		cmocka_unit_test_setup_teardown(test_set_machine, setup, teardown),
		cmocka_unit_test_setup_teardown(test_link_register_caller, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dwarf_pending_return, setup, teardown),
		cmocka_unit_test(test_complete),
		cmocka_unit_test(test_thread_root),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
