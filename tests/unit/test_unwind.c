// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests of DWARF unwinding (unwind.c through symbolize.c) on the test's own stack copied inside chain1() -> ... -> chain5() (no frame pointers): whole, cut short, cut mid-word, bounded in frames. */
#include "unwind_fixture.h"

/*
 * The whole copy: chain5 .. chain1, this test, cmocka's runner, main(), then glibc's start
 * code and _start, where the CFI marks the outermost frame.
 */
static void test_unwind_full_chain(void **state)
{
	struct fixture *fx = *state;
	struct jw_frame fr;
	size_t i, main_at;

	CAPTURE_FULL(fx);
	/* The stack ends before the bound: it is walked up to its outermost frame. */
	assert_true(fx->ref.n < MAX_FRAMES);
	main_at = find_frame(fx, &fx->ref, 6, "main", fx->exe);
	assert_true(main_at != SIZE_MAX);
	/* cmocka's runner is in between: its frames are in libcmocka. */
	assert_true(main_at > 6);
	for (i = 6; i < main_at; i++) {
		frame_at(fx, &fx->ref, i, &fr);
		assert_non_null(fr.module);
		assert_non_null(strstr(fr.module, "libcmocka.so"));
	}
	/*
	 * main() was called by glibc's __libc_start_call_main (a local symbol: named only with
	 * libc's debug symbols, libc6-dbg), itself called by __libc_start_main from _start.
	 */
	assert_true(main_at + 1 < fx->ref.n);
	frame_at(fx, &fx->ref, main_at + 1, &fr);
	assert_true(is_libc(fr.module));
	if (fr.symbol)
		assert_string_equal(fr.symbol, "__libc_start_call_main");
	assert_int_equal(fx->ref.n, main_at + 4);
	frame_at(fx, &fx->ref, main_at + 2, &fr);
	assert_true(is_libc(fr.module));
	assert_non_null(fr.symbol);
	assert_string_equal(fr.symbol, "__libc_start_main");
	assert_frame(fx, &fx->ref, main_at + 3, "_start");
}

/*
 * The chain has no frame pointer to follow: with rbp poisoned, CFI still walks the five chain
 * frames (none saves or uses rbp) and finds the return address into this test.
 */
static void test_unwind_needs_no_frame_pointer(void **state)
{
	struct fixture *fx = *state;
	struct trace t;

	CAPTURE_FULL(fx);
	fx->full.regs[UREG_RBP] = 0xdead0000beef0000ULL;
	unwind(fx, &fx->full, fx->full.stack_size, MAX_FRAMES, &t);
	assert_prefix(&t, &fx->ref, 6);
	assert_chain(fx, &t, __func__);
}

/*
 * Where frame @i's pc (a return address, i >= 1) is stored in @c's copy: the first word
 * holding it past the slot of frame i - 1 (@from). SIZE_MAX when none does.
 */
static size_t return_slot(const struct capture *c, uint64_t pc, size_t from)
{
	uint64_t word;
	size_t off;

	for (off = from; off + sizeof(word) <= c->stack_size; off += sizeof(word)) {
		memcpy(&word, c->stack + off, sizeof(word));
		if (word == pc)
			return off;
	}
	return SIZE_MAX;
}

/*
 * A copy that ends mid-chain, at the return address of each chain frame in turn: ending just
 * past the slot, the caller is found and the unwind stops there; ending before it, or with
 * the slot cut mid-word (sizes that are no multiple of 8), the frame's caller is unknown.
 * Every result is a prefix of the whole one.
 */
static void test_unwind_cut_at_each_return_address(void **state)
{
	struct fixture *fx = *state;
	size_t i, cut, slot = 0;
	struct trace t;

	CAPTURE_FULL(fx);
	for (i = 1; i <= 5; i++) {
		slot = return_slot(&fx->full, fx->ref.pcs[i], slot);
		assert_true(slot != SIZE_MAX);
		/* The slot whole: frames 0..i, and the next return address is out of reach. */
		unwind(fx, &fx->full, slot + 8, MAX_FRAMES, &t);
		assert_int_equal(t.n, i + 1);
		assert_prefix(&t, &fx->ref, t.n);
		/* The slot missing, wholly or partly: frames 0..i-1. */
		for (cut = slot; cut < slot + 8; cut++) {
			unwind(fx, &fx->full, cut, MAX_FRAMES, &t);
			assert_int_equal(t.n, i);
			assert_prefix(&t, &fx->ref, t.n);
		}
		slot += 8;
	}
}

/*
 * Copies of up to a few hundred bytes, of every size, odd ones too: fewer frames, each right,
 * and never fewer with more stack. 256 bytes end mid-chain (the chain frames carry arrays).
 */
static void test_unwind_short_copies(void **state)
{
	struct fixture *fx = *state;
	size_t size, prev = 1;
	struct trace t;

	CAPTURE_FULL(fx);
	for (size = 0; size <= 512; size++) {
		unwind(fx, &fx->full, size, MAX_FRAMES, &t);
		/* The leaf needs no stack: its pc is rip. */
		assert_true(t.n >= 1);
		assert_true(t.n < fx->ref.n);
		assert_prefix(&t, &fx->ref, t.n);
		assert_activations(&fx->full, &t);
		assert_true(t.n >= prev);
		prev = t.n;
		if (size == 256) {
			assert_true(t.n >= 2);
			assert_true(t.n < 6);
		}
	}
}

/* The bound: max = 1 gives the leaf, max = 3 the three innermost, nothing written past them. */
static void test_unwind_max_frames(void **state)
{
	struct fixture *fx = *state;
	struct trace t;

	CAPTURE_FULL(fx);
	unwind(fx, &fx->full, fx->full.stack_size, 1, &t);
	assert_int_equal(t.n, 1);
	assert_prefix(&t, &fx->ref, 1);
	assert_frame(fx, &t, 0, "chain5");

	unwind(fx, &fx->full, fx->full.stack_size, 3, &t);
	assert_int_equal(t.n, 3);
	assert_prefix(&t, &fx->ref, 3);
	assert_frame(fx, &t, 2, "chain3");

	unwind(fx, &fx->full, fx->full.stack_size, 0, &t);
	assert_int_equal(t.n, 0);
}

/*
 * A function without CFI (the compiler gives top-level asm none) whose frame its code cannot
 * tell past its first instruction: a pop, which the prologue's sweep does not follow.
 */
asm(".text\n"
    ".globl jw_test_no_cfi\n"
    ".type jw_test_no_cfi, @function\n"
    "jw_test_no_cfi:\n"
    "\tpop %rax\n\tnop\n\tnop\n\tret\n"
    ".size jw_test_no_cfi, .-jw_test_no_cfi\n");
void jw_test_no_cfi(void);

/* x86-64's registers as if r12 were a link register: what arm64 unwinds like, on this machine. */
static const struct jw_ureg_layout with_lr = {
	.machine = JW_X86_64_MACHINE, .count = JW_X86_64_UREG_COUNT, .sp = JW_X86_64_UREG_SP,
	.ip = JW_X86_64_UREG_IP, .fp = JW_X86_64_UREG_FP, .lr = UREG_R12,
	.red_zone = JW_X86_64_RED_ZONE,
};

/*
 * A leaf without CFI whose code cannot say where its frame is, and whose caller is in the link
 * register: the leaf, then the whole stack from the caller on, as if the leaf had been called
 * there and saved nothing. Not so when no link register is known, nor when the link register
 * points into the leaf's own function (it called something that returned): libdwfl's own
 * fallback (the frame record at rbp) never gives the caller that only the link register holds.
 */
static void test_unwind_frameless_leaf_without_cfi(void **state)
{
	struct fixture *fx = *state;
	uint64_t leaf = (uint64_t)(uintptr_t)jw_test_no_cfi + 1;
	struct capture *c = &fx->full;
	struct jw_frame fr;
	struct trace t;
	size_t i;

	CAPTURE_FULL(fx);
	c->regs[UREG_R12] = c->regs[JW_UREG_IP];
	c->regs[JW_UREG_IP] = leaf;
	unwind_as(fx, c, c->stack_size, MAX_FRAMES, &with_lr, &t);
	assert_int_equal(t.n, fx->ref.n + 1);
	assert_true(t.pcs[0] == leaf && t.activation[0]);
	frame_at(fx, &t, 0, &fr);
	assert_non_null(fr.symbol);
	assert_string_equal(fr.symbol, "jw_test_no_cfi");
	assert_false(t.activation[1]);
	for (i = 0; i < fx->ref.n; i++)
		assert_true(t.pcs[i + 1] == fx->ref.pcs[i]);
	assert_frame(fx, &t, 1, "chain5");

	unwind(fx, c, c->stack_size, MAX_FRAMES, &t);
	assert_true(t.n >= 1 && t.pcs[0] == leaf);
	assert_true(t.n < 2 || t.pcs[1] != fx->ref.pcs[0]);

	c->regs[UREG_R12] = leaf + 2;
	unwind_as(fx, c, c->stack_size, MAX_FRAMES, &with_lr, &t);
	assert_true(t.n >= 1 && t.pcs[0] == leaf);
	assert_true(t.n < 2 || (t.pcs[1] != leaf + 2 && t.pcs[1] != fx->ref.pcs[0]));

	/* A bound of one frame is kept. */
	c->regs[UREG_R12] = fx->ref.pcs[0];
	unwind_as(fx, c, c->stack_size, 1, &with_lr, &t);
	assert_int_equal(t.n, 1);
}

/*
 * A function without CFI between two with it, as musl's clock_gettime is: its prologue pushes
 * rbp and rbx and reserves 24 bytes, then it keeps something else than a frame in rbp (so the
 * frame-pointer chain breaks there) and calls the chain.
 */
asm(".text\n"
    ".globl jw_test_no_cfi_frame\n"
    ".type jw_test_no_cfi_frame, @function\n"
    "jw_test_no_cfi_frame:\n"
    "\tpush %rbp\n"
    "\tmov $0x5a5a5a5a, %ebp\n"
    "\tpush %rbx\n"
    "\tmov %rdi, %rbx\n"
    "\tsub $24, %rsp\n"
    "\tcall jw_test_chain1\n"
    "\tadd $24, %rsp\n"
    "\tpop %rbx\n"
    "\tpop %rbp\n"
    "\tret\n"
    ".size jw_test_no_cfi_frame, .-jw_test_no_cfi_frame\n");
int jw_test_no_cfi_frame(struct capture *c);

/* chain1() under a name the asm above can call. */
int jw_test_chain1(struct capture *c);
__attribute__((noinline)) int jw_test_chain1(struct capture *c)
{
	int ret = chain1(c);

	asm volatile("" ::: "memory");
	return ret;
}

/*
 * Unwound through the function without CFI by its prologue: its caller is this test, with the
 * registers it saved (rbp among them: the ASan build's frames are rbp-based) put back, and on
 * to main. libdwfl's fallback alone would take the garbage in rbp for a frame.
 */
static void test_unwind_through_code_without_cfi(void **state)
{
	struct fixture *fx = *state;
	struct capture *c = &fx->full;
	struct trace t;
	size_t i, middle;

	assert_int_equal(jw_test_no_cfi_frame(c), CHAIN1_RET);
	check_capture(c);
	unwind(fx, c, c->stack_size, MAX_FRAMES, &t);
	assert_activations(c, &t);
	assert_chain(fx, &t, "jw_test_chain1");
	middle = 6;
	assert_frame(fx, &t, middle, "jw_test_no_cfi_frame");
	assert_frame(fx, &t, middle + 1, "test_unwind_through_code_without_cfi");
	i = find_frame(fx, &t, middle + 1, "main", fx->exe);
	assert_true(i != SIZE_MAX);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_unwind_full_chain),
		T(test_unwind_needs_no_frame_pointer),
		T(test_unwind_cut_at_each_return_address),
		T(test_unwind_short_copies),
		T(test_unwind_max_frames),
		T(test_unwind_frameless_leaf_without_cfi),
		T(test_unwind_through_code_without_cfi),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
