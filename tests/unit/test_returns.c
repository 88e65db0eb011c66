// SPDX-License-Identifier: GPL-2.0-only
/*
 * Pending return probes' addresses put back into a sample's stack copy and registers: on
 * x86-64 at the slot each call pushed, on arm64 in the link register and the frame slots the
 * hooked functions saved it in, in an old capture without the trampoline's address at the
 * recorded slots; never outside the copy.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "stacks/returns.h"

#define BASE 0x7ffc0000ULL
#define TRAMP 0x7fff1000ULL
#define COPY 512

struct fixture {
	struct jw_sample_rec s;
	uint8_t stack[COPY];
	uint64_t regs[JW_UREG_MAX];
};

static void put(struct fixture *fx, uint64_t addr, uint64_t value)
{
	memcpy(fx->stack + (addr - BASE), &value, sizeof(value));
}

static uint64_t get(const struct fixture *fx, uint64_t addr)
{
	uint64_t v;

	memcpy(&v, fx->stack + (addr - BASE), sizeof(v));
	return v;
}

/* Two pending returns, innermost first: entered with the stack pointer at @sp0, then @sp1. */
static void pending(struct fixture *fx, uint64_t tramp, uint64_t sp0, uint64_t sp1)
{
	memset(fx, 0, sizeof(*fx));
	fx->s.stack_size = COPY;
	fx->s.tramp = tramp;
	fx->s.n_rets = 2;
	fx->s.ret_sp[0] = sp0;
	fx->s.ret_addr[0] = 0x401111;
	fx->s.ret_sp[1] = sp1;
	fx->s.ret_addr[1] = 0x402222;
}

static void test_x86_64_slots(void **state)
{
	const struct jw_ureg_layout *l = jw_ureg_layout(JW_X86_64_MACHINE);
	struct fixture *fx = *state;

	assert_non_null(l);
	pending(fx, TRAMP, BASE + 0x40, BASE + 0x100);
	put(fx, BASE + 0x40, TRAMP);
	put(fx, BASE + 0x100, TRAMP);
	put(fx, BASE + 0x20, 0x1234);	/* a local: left alone */
	jw_put_back_returns(l, &fx->s, BASE, fx->stack, fx->regs);
	assert_int_equal(get(fx, BASE + 0x40), 0x401111);
	assert_int_equal(get(fx, BASE + 0x100), 0x402222);
	assert_int_equal(get(fx, BASE + 0x20), 0x1234);
}

/*
 * arm64: the trampoline's address went to the link register; the inner function already saved
 * it in its frame (stp x29, x30, [sp, #-0x20]!), the outer one too, further up.
 */
static void test_arm64_link_register_and_frames(void **state)
{
	const struct jw_ureg_layout *l = jw_ureg_layout(JW_ARM64_MACHINE);
	struct fixture *fx = *state;

	assert_non_null(l);
	pending(fx, TRAMP, BASE + 0x80, BASE + 0x180);
	fx->regs[JW_ARM64_UREG_LR] = TRAMP;
	put(fx, BASE + 0x80 - 0x20 + 8, TRAMP);
	put(fx, BASE + 0x180 - 0x40 + 8, TRAMP);
	put(fx, BASE + 0x180, 0x5555);	/* the outer caller's frame record: left alone */
	jw_put_back_returns(l, &fx->s, BASE, fx->stack, fx->regs);
	assert_int_equal(fx->regs[JW_ARM64_UREG_LR], 0x401111);
	assert_int_equal(get(fx, BASE + 0x68), 0x401111);
	assert_int_equal(get(fx, BASE + 0x148), 0x402222);
	assert_int_equal(get(fx, BASE + 0x180), 0x5555);
}

/* A link register that holds something else (the function called another since) stays. */
static void test_arm64_link_register_moved_on(void **state)
{
	const struct jw_ureg_layout *l = jw_ureg_layout(JW_ARM64_MACHINE);
	struct fixture *fx = *state;

	pending(fx, TRAMP, BASE + 0x80, BASE + 0x180);
	fx->regs[JW_ARM64_UREG_LR] = 0x403333;
	put(fx, BASE + 0x68, TRAMP);
	jw_put_back_returns(l, &fx->s, BASE, fx->stack, fx->regs);
	assert_int_equal(fx->regs[JW_ARM64_UREG_LR], 0x403333);
	assert_int_equal(get(fx, BASE + 0x68), 0x401111);
}

/* An old capture (no trampoline address): the recorded slots, whatever they hold. */
static void test_without_trampoline_address(void **state)
{
	const struct jw_ureg_layout *l = jw_ureg_layout(JW_X86_64_MACHINE);
	struct fixture *fx = *state;

	pending(fx, 0, BASE + 0x40, BASE + 0x100);
	put(fx, BASE + 0x40, 0xdead);
	jw_put_back_returns(l, &fx->s, BASE, fx->stack, fx->regs);
	assert_int_equal(get(fx, BASE + 0x40), 0x401111);
	assert_int_equal(get(fx, BASE + 0x100), 0x402222);
}

/* Slots below the copy, past its end, or at its last bytes: nothing written outside it. */
static void test_outside_the_copy(void **state)
{
	const struct jw_ureg_layout *l = jw_ureg_layout(JW_X86_64_MACHINE);
	struct fixture *fx = *state;
	uint8_t before[COPY];

	pending(fx, 0, BASE - 8, BASE + COPY + 64);
	memcpy(before, fx->stack, COPY);
	jw_put_back_returns(l, &fx->s, BASE, fx->stack, fx->regs);
	assert_memory_equal(before, fx->stack, COPY);

	pending(fx, TRAMP, BASE + COPY - 4, BASE + COPY + 64);
	put(fx, BASE + COPY - 8, TRAMP);
	jw_put_back_returns(l, &fx->s, BASE, fx->stack, fx->regs);
	assert_int_equal(get(fx, BASE + COPY - 8), 0x401111);

	pending(fx, TRAMP, BASE + 0x40, BASE + 0x100);
	fx->s.n_rets = 1000;	/* damaged: bounded by JW_MAX_NEST */
	jw_put_back_returns(l, &fx->s, BASE, fx->stack, fx->regs);
}

/*
 * The copy is s->stack_size bytes, whatever lies behind it: a slot past it is not written, nor a
 * trampoline address there; a copy shorter than a word gets nothing.
 */
static void test_within_the_claimed_size(void **state)
{
	const struct jw_ureg_layout *l = jw_ureg_layout(JW_X86_64_MACHINE);
	struct fixture *fx = *state;
	uint8_t before[COPY];

	pending(fx, 0, BASE + COPY / 2 + 64, BASE + COPY / 2 + 128);
	fx->s.stack_size = COPY / 2;
	memcpy(before, fx->stack, COPY);
	jw_put_back_returns(l, &fx->s, BASE, fx->stack, fx->regs);
	assert_memory_equal(before, fx->stack, COPY);

	pending(fx, TRAMP, BASE + COPY / 2 + 64, BASE + COPY / 2 + 128);
	fx->s.stack_size = COPY / 2;
	put(fx, BASE + COPY / 2 + 64, TRAMP);
	put(fx, BASE + COPY / 2 + 128, TRAMP);
	memcpy(before, fx->stack, COPY);
	jw_put_back_returns(l, &fx->s, BASE, fx->stack, fx->regs);
	assert_memory_equal(before, fx->stack, COPY);

	pending(fx, 0, BASE, BASE + 0x40);
	fx->s.stack_size = 4;
	memcpy(before, fx->stack, COPY);
	jw_put_back_returns(l, &fx->s, BASE, fx->stack, fx->regs);
	assert_memory_equal(before, fx->stack, COPY);
}

/*
 * An outer pending return's slot is looked for only above the inner one's: a stale trampoline
 * address below the inner slot (in the inner frame) is not the outer function's. Nor, in a
 * damaged old capture, is a recorded slot below the inner one.
 */
static void test_outer_slot_above_inner(void **state)
{
	const struct jw_ureg_layout *arm64 = jw_ureg_layout(JW_ARM64_MACHINE);
	const struct jw_ureg_layout *x86 = jw_ureg_layout(JW_X86_64_MACHINE);
	struct fixture *fx = *state;

	pending(fx, TRAMP, BASE + 0x80, BASE + 0x180);
	fx->regs[JW_ARM64_UREG_LR] = TRAMP;
	put(fx, BASE + 0x68, TRAMP);	/* the inner function's saved link register */
	put(fx, BASE + 0x50, TRAMP);	/* a stale copy below it */
	jw_put_back_returns(arm64, &fx->s, BASE, fx->stack, fx->regs);
	assert_int_equal(fx->regs[JW_ARM64_UREG_LR], 0x401111);
	assert_int_equal(get(fx, BASE + 0x68), 0x401111);
	assert_int_equal(get(fx, BASE + 0x50), TRAMP);

	pending(fx, 0, BASE + 0x100, BASE + 0x40);
	put(fx, BASE + 0x40, 0x5555);
	jw_put_back_returns(x86, &fx->s, BASE, fx->stack, fx->regs);
	assert_int_equal(get(fx, BASE + 0x100), 0x401111);
	assert_int_equal(get(fx, BASE + 0x40), 0x5555);
}

/*
 * A damaged count reads no more than JW_MAX_NEST entries: the words after ret_sp (ret_addr's,
 * here one that would be a slot in the copy) are not slots.
 */
static void test_damaged_count(void **state)
{
	const struct jw_ureg_layout *l = jw_ureg_layout(JW_X86_64_MACHINE);
	struct fixture *fx = *state;
	uint8_t before[COPY];
	size_t i;

	assert_int_equal(offsetof(struct jw_sample_rec, ret_addr),
			 offsetof(struct jw_sample_rec, ret_sp) + sizeof(fx->s.ret_sp));
	pending(fx, 0, 0, 0);	/* every recorded slot below the copy */
	fx->s.n_rets = 1000;
	for (i = 0; i < JW_MAX_NEST; i++)
		fx->s.ret_addr[i] = BASE + 0x40;
	put(fx, BASE + 0x40, 0x5555);
	memcpy(before, fx->stack, COPY);
	jw_put_back_returns(l, &fx->s, BASE, fx->stack, fx->regs);
	assert_memory_equal(before, fx->stack, COPY);
}

static void test_layouts(void **state)
{
	(void)state;
	assert_non_null(jw_ureg_layout(JW_MACHINE));
	assert_int_equal(jw_ureg_layout(JW_ARM64_MACHINE)->ip, 32);
	assert_int_equal(jw_ureg_layout(JW_X86_64_MACHINE)->count, 17);
	assert_null(jw_ureg_layout(3 /* EM_386 */));
}

static int setup(void **state)
{
	*state = calloc(1, sizeof(struct fixture));
	return *state ? 0 : -1;
}

static int teardown(void **state)
{
	free(*state);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_x86_64_slots, setup, teardown),
		cmocka_unit_test_setup_teardown(test_arm64_link_register_and_frames, setup, teardown),
		cmocka_unit_test_setup_teardown(test_arm64_link_register_moved_on, setup, teardown),
		cmocka_unit_test_setup_teardown(test_without_trampoline_address, setup, teardown),
		cmocka_unit_test_setup_teardown(test_outside_the_copy, setup, teardown),
		cmocka_unit_test_setup_teardown(test_within_the_claimed_size, setup, teardown),
		cmocka_unit_test_setup_teardown(test_outer_slot_above_inner, setup, teardown),
		cmocka_unit_test_setup_teardown(test_damaged_count, setup, teardown),
		cmocka_unit_test(test_layouts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
