// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests of DWARF unwinding on copies that stress it: one Dwfl across samples, a loop stopped at the bound, the red zone below the stack pointer, garbage. */
#include "unwind_fixture.h"

static __attribute__((noinline, noclone, no_icf)) void rbp_framed_callee(void)
{
	asm volatile("" ::: "memory");
}

/*
 * A point inside a function that keeps a frame pointer, where its CFI reads: CFA = rbp + 16,
 * the return address at CFA - 8, the caller's rbp at CFA - 16. gcc keeps no frame pointer in a
 * leaf, hence the call; nor before the prologue it may move past the asm, hence no shrink-wrap.
 */
static __attribute__((noinline, noclone, no_icf,
		      optimize("no-omit-frame-pointer", "no-shrink-wrap"))) uint64_t
rbp_framed_pc(void)
{
	uint64_t pc;

	asm volatile("nop\n\t"
		     "lea 1f(%%rip), %0\n\t"
		     "1:\n\t"
		     "nop"
		     : "=r"(pc));
	rbp_framed_callee();
	return pc;
}

/*
 * One symbolizer unwinds sample after sample: a second capture, taken through chain3() only,
 * then the first again, each with its own frames.
 */
static void test_unwind_reused_across_samples(void **state)
{
	struct fixture *fx = *state;
	struct trace t;

	CAPTURE_FULL(fx);
	assert_int_equal(chain3(&fx->shorter), CHAIN3_RET);
	check_capture(&fx->shorter);
	assert_true(fx->shorter.regs[JW_UREG_SP] > fx->full.regs[JW_UREG_SP]);

	unwind(fx, &fx->shorter, fx->shorter.stack_size, MAX_FRAMES, &t);
	assert_activations(&fx->shorter, &t);
	assert_true(t.n > 4);
	assert_frame(fx, &t, 0, "chain5");
	assert_frame(fx, &t, 1, "chain4");
	assert_frame(fx, &t, 2, "chain3");
	assert_frame(fx, &t, 3, __func__);
	/* The same callers above this test: two frames fewer than through chain1(). */
	assert_int_equal(t.n, fx->ref.n - 2);
	assert_true(t.pcs[t.n - 1] == fx->ref.pcs[fx->ref.n - 1]);

	unwind(fx, &fx->full, fx->full.stack_size, MAX_FRAMES, &t);
	assert_int_equal(t.n, fx->ref.n);
	assert_prefix(&t, &fx->ref, t.n);
}

/*
 * A stack that loops, as a corrupt one can: at rbp_framed_pc(), with rbp pointing at itself and
 * that same pc above it, each frame unwinds to itself with the same CFA. Only the bound ends
 * the walk, at exactly @max frames, and afterwards a real copy unwinds right.
 */
static void test_unwind_loop_stops_at_the_bound(void **state)
{
	static const size_t maxes[] = { 1, 2, 3, 17, MAX_FRAMES };
	struct fixture *fx = *state;
	struct capture *loop = &fx->shorter;
	uint64_t fp, pc;
	struct trace t;
	size_t i;

	CAPTURE_FULL(fx);
	pc = rbp_framed_pc();
	memset(loop, 0, sizeof(*loop));
	loop->regs[JW_UREG_IP] = pc;
	loop->regs[JW_UREG_SP] = fx->full.regs[JW_UREG_SP];
	fp = loop->regs[JW_UREG_SP] + 64;
	loop->regs[UREG_RBP] = fp;
	memcpy(loop->stack + 64, &fp, sizeof(fp));
	memcpy(loop->stack + 72, &pc, sizeof(pc));
	loop->stack_size = 128;
	for (i = 0; i < sizeof(maxes) / sizeof(maxes[0]); i++) {
		unwind(fx, loop, loop->stack_size, maxes[i], &t);
		assert_int_equal(t.n, maxes[i]);
		assert_frame(fx, &t, t.n - 1, "rbp_framed_pc");
	}

	unwind(fx, &fx->full, fx->full.stack_size, MAX_FRAMES, &t);
	assert_int_equal(t.n, fx->ref.n);
	assert_prefix(&t, &fx->ref, t.n);
}

/*
 * The end of an epilogue as gcc leaves its CFI: the callee-saved registers popped, the CFA back
 * on rsp, but no restore rule, so at the `ret` the CFI still reads rbp and rbx from their slots,
 * now below rsp. Never called: only its code and CFI are used.
 */
asm(".pushsection .text\n"
    ".type stale_epilogue, @function\n"
    "stale_epilogue:\n"
    ".cfi_startproc\n"
    "push %rbp\n"
    ".cfi_def_cfa_offset 16\n"
    ".cfi_offset %rbp, -16\n"
    "mov %rsp, %rbp\n"
    ".cfi_def_cfa_register %rbp\n"
    "push %rbx\n"
    ".cfi_offset %rbx, -24\n"
    "pop %rbx\n"
    "pop %rbp\n"
    ".cfi_def_cfa %rsp, 8\n"
    "stale_epilogue_ret:\n"
    "ret\n"
    ".cfi_endproc\n"
    ".size stale_epilogue, .-stale_epilogue\n"
    ".popsection\n");
extern const char stale_epilogue_ret[];

/*
 * A sample at that `ret`, returning into rbp_framed_pc() (CFA = rbp + 16), whose frame pointer
 * loops as in the test above: rbp is right in the register, and its stale slot 8 bytes below
 * rsp holds the same value, as after a real pop. The caller's CFA needs rbp, which the CFI says
 * to read from the slot: with the red zone copied the walk goes on to the bound, without it it
 * stops at the caller, as it did at the `ret` of ASan's clock_gettime interceptor.
 */
static void test_unwind_reads_the_red_zone(void **state)
{
	struct fixture *fx = *state;
	struct capture *c = &fx->shorter;
	uint64_t sp, fp, pc, word;
	struct jw_unwind_input in = { .tid = gettid(), .regs = c->regs, .n_regs = JW_UREG_COUNT };
	struct trace t;
	size_t below;

	CAPTURE_FULL(fx);
	pc = rbp_framed_pc();
	memset(c, 0, sizeof(*c));
	sp = fx->full.regs[JW_UREG_SP];
	fp = sp + 64;
	c->regs[JW_UREG_IP] = (uint64_t)(uintptr_t)stale_epilogue_ret;
	c->regs[JW_UREG_SP] = sp;
	c->regs[UREG_RBP] = fp;
	c->regs[UREG_RBX] = 0x1234;
	/* The copy runs from sp - JW_RED_ZONE: the red zone, the return address, the frame. */
	memcpy(c->stack + JW_RED_ZONE - 8, &fp, sizeof(fp));
	word = 0x1234;
	memcpy(c->stack + JW_RED_ZONE - 16, &word, sizeof(word));
	memcpy(c->stack + JW_RED_ZONE, &pc, sizeof(pc));
	memcpy(c->stack + JW_RED_ZONE + 64, &fp, sizeof(fp));
	memcpy(c->stack + JW_RED_ZONE + 72, &pc, sizeof(pc));
	in.pc = c->regs[JW_UREG_IP];
	for (below = 0; below <= JW_RED_ZONE; below += JW_RED_ZONE) {
		in.base = sp - below;
		in.stack = c->stack + JW_RED_ZONE - below;
		in.stack_size = 128 + below;
		t.n = jw_symbolizer__unwind(fx->sym, &in, t.pcs, t.activation, 5);
		assert_true(t.n >= 2);
		assert_frame(fx, &t, 1, "rbp_framed_pc");
		assert_int_equal(t.n, below ? 5 : 2);
	}
}

/* A small seeded PRNG (xorshift64*): the same garbage on every run. */
static uint64_t next_random(uint64_t *seed)
{
	*seed ^= *seed >> 12;
	*seed ^= *seed << 25;
	*seed ^= *seed >> 27;
	return *seed * 0x2545f4914f6cdd1dULL;
}

/*
 * Fills @c's copy with garbage that looks like a stack now and then: random words, code
 * addresses from @ref's frames, pointers into the copy, zeros.
 */
static void fill_garbage(struct capture *c, const struct trace *ref, uint64_t *seed)
{
	uint64_t word;
	size_t off;

	for (off = 0; off + 8 <= sizeof(c->stack); off += 8) {
		word = next_random(seed);
		switch (word % 8) {
		case 0:
			word = ref->pcs[(word >> 8) % ref->n] + (int64_t)((word >> 40) % 33) - 16;
			break;
		case 1:
			word = c->regs[JW_UREG_SP] + (word >> 8) % sizeof(c->stack);
			break;
		case 2:
			word = 0;
			break;
		}
		memcpy(c->stack + off, &word, sizeof(word));
	}
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/*
 * Garbage: random stack bytes under the real rip and rsp, then random registers as well, with
 * random sizes (odd ones too) and bounds. Never a crash, never more frames than asked, never
 * a write past them, and done quickly: the unwinder is bounded. Each pc found can be named.
 * The real copy still unwinds right afterwards.
 */
static void test_unwind_garbage(void **state)
{
	struct fixture *fx = *state;
	uint64_t seed = 0x6a616e6b77617463ULL, start;
	struct capture *junk;
	struct jw_frame fr;
	struct trace t;
	size_t round, i, max, size;

	CAPTURE_FULL(fx);
	junk = &fx->shorter;
	start = now_ns();
	for (round = 0; round < GARBAGE_ROUNDS; round++) {
		memcpy(junk->regs, fx->full.regs, sizeof(junk->regs));
		fill_garbage(junk, &fx->ref, &seed);
		if (round >= GARBAGE_ROUNDS / 2)
			for (i = 0; i < JW_UREG_COUNT; i++)
				junk->regs[i] = next_random(&seed);
		size = next_random(&seed) % (sizeof(junk->stack) + 1);
		max = round % 4 ? MAX_FRAMES : 1 + next_random(&seed) % MAX_FRAMES;
		unwind(fx, junk, size, max, &t);
		for (i = 0; i < t.n; i++)
			frame_at(fx, &t, i, &fr);
		assert_true(now_ns() - start < GARBAGE_DEADLINE_NS);
	}

	unwind(fx, &fx->full, fx->full.stack_size, MAX_FRAMES, &t);
	assert_int_equal(t.n, fx->ref.n);
	assert_prefix(&t, &fx->ref, t.n);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_unwind_reused_across_samples),
		T(test_unwind_garbage),
		T(test_unwind_loop_stops_at_the_bound),
		T(test_unwind_reads_the_red_zone),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
