// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of DWARF unwinding (unwind.c through symbolize.c): the test copies its own stack
 * inside chain1() -> ... -> chain5(), functions built without frame pointers, exactly as a
 * sample carries a user stack (registers in DWARF numbering, the bytes from rsp up), and unwinds
 * the copy after the chain has returned: whole, cut short, cut mid-word, bounded, and garbage.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/frame.h"
#include "jankwatch/abi.h"
#include "stacks/symbolize.h"
#include "stacks/unwind.h"

#define STACK_COPY_BYTES 16384	/* what the test copies from rsp, at most */
#define MAX_FRAMES 64		/* asked of the unwinder */
#define GUARD_FRAMES 8		/* slots past the bound that must stay untouched */
#define POISON_PC 0x5a5a5a5a5a5a5a5aULL
#define GARBAGE_ROUNDS 400
#define GARBAGE_DEADLINE_NS (30 * 1000000000ULL)	/* all rounds, ASan included */

/* DWARF numbers of the registers chain5() records besides rsp and rip. */
enum { UREG_RBX = 3, UREG_RBP = 6, UREG_R12 = 12, UREG_R13, UREG_R14, UREG_R15 };

/* One stack sample of this thread, as the kernel side would copy it. */
struct capture {
	uint64_t regs[JW_UREG_COUNT];
	uint64_t stack_size;	/* bytes of stack copied from regs[JW_UREG_SP] */
	uint64_t stack_end;	/* where the [stack] mapping ends: the copy stops there */
	uint8_t stack[STACK_COPY_BYTES];
};

/* An unwind result; the guard slots past the bound must keep their poison. */
struct trace {
	uint64_t pcs[MAX_FRAMES + GUARD_FRAMES];
	bool activation[MAX_FRAMES + GUARD_FRAMES];
	size_t n;
};

struct fixture {
	struct jw_symbolizer *sym;
	char exe[PATH_MAX];	/* this test binary, as libdwfl names its module */
	struct capture full;	/* taken through chain1() */
	struct capture shorter;	/* taken through chain3() */
	struct trace ref;	/* full unwound whole: what every other unwind is checked against */
};

/* The end of this (the main) thread's stack mapping, from /proc/self/maps; 0 if not found. */
static uint64_t main_stack_end(void)
{
	unsigned long lo, hi;
	uint64_t end = 0;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f)
		return 0;
	while (!end && fgets(line, sizeof(line), f))
		if (strstr(line, "[stack]") && sscanf(line, "%lx-%lx", &lo, &hi) == 2)
			end = hi;
	fclose(f);
	return end;
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	ssize_t n;

	if (!fx)
		return -1;
	n = readlink("/proc/self/exe", fx->exe, sizeof(fx->exe) - 1);
	if (n <= 0)
		goto err_free;
	fx->exe[n] = '\0';
	fx->full.stack_end = fx->shorter.stack_end = main_stack_end();
	if (!fx->full.stack_end)
		goto err_free;
	fx->sym = jw_symbolizer__new(getpid());
	if (!fx->sym)
		goto err_free;
	*state = fx;
	return 0;

err_free:
	free(fx);
	return -1;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	jw_symbolizer__free(fx->sym);
	free(fx);
	return 0;
}

/*
 * The chain. Not inlined, not cloned, not folded into one another, and every call is followed
 * by work on its result, so each is a real call with a frame of its own. Built without a frame
 * pointer whatever the build's flags (the ASan build adds -fno-omit-frame-pointer): only DWARF
 * CFI can walk it. Each keeps a small array live across its call so that its frame has a size.
 */
#define CHAIN_FN __attribute__((noinline, noclone, no_icf, optimize("omit-frame-pointer")))

/*
 * Records the registers and copies the stack in one asm statement, so that the copy is the
 * stack exactly as the registers describe it: rip is label 1 (rsp is the same there), the
 * callee-saved registers are their values at that point, the caller-saved ones stay 0. The copy
 * runs from rsp for STACK_COPY_BYTES, clamped to the end of the stack mapping, with rep movsb
 * (not memcpy, which ASan would check against the redzones of the frames above).
 */
static CHAIN_FN int chain5(struct capture *c)
{
	uint8_t *dst = c->stack;

	memset(c->regs, 0, sizeof(c->regs));
	asm volatile("lea 1f(%%rip), %%rax\n\t"
		     "mov %%rax, %c[ip](%[regs])\n\t"
		     "mov %%rsp, %c[sp](%[regs])\n\t"
		     "mov %%rbx, %c[bx](%[regs])\n\t"
		     "mov %%rbp, %c[bp](%[regs])\n\t"
		     "mov %%r12, %c[r12](%[regs])\n\t"
		     "mov %%r13, %c[r13](%[regs])\n\t"
		     "mov %%r14, %c[r14](%[regs])\n\t"
		     "mov %%r15, %c[r15](%[regs])\n\t"
		     "mov %[end], %%rcx\n\t"
		     "sub %%rsp, %%rcx\n\t"
		     "cmp %[max], %%rcx\n\t"
		     "cmova %[max], %%rcx\n\t"
		     "mov %%rcx, (%[size])\n\t"
		     "mov %%rsp, %%rsi\n\t"
		     "rep movsb\n\t"
		     "1:\n\t"
		     : "+D"(dst)
		     : [regs] "r"(c->regs), [size] "r"(&c->stack_size), [end] "r"(c->stack_end),
		       [max] "r"((uint64_t)STACK_COPY_BYTES), [ip] "i"(JW_UREG_IP * 8),
		       [sp] "i"(JW_UREG_SP * 8), [bx] "i"(UREG_RBX * 8), [bp] "i"(UREG_RBP * 8),
		       [r12] "i"(UREG_R12 * 8), [r13] "i"(UREG_R13 * 8), [r14] "i"(UREG_R14 * 8),
		       [r15] "i"(UREG_R15 * 8)
		     : "rax", "rcx", "rsi", "memory", "cc");
	return (int)(c->stack_size & 7) + 5;
}

static CHAIN_FN int chain4(struct capture *c)
{
	volatile uint64_t live[4] = { 4 };
	int ret = chain5(c);

	asm volatile("" ::: "memory");
	return ret * 3 + (int)live[0];
}

static CHAIN_FN int chain3(struct capture *c)
{
	volatile uint64_t live[6] = { 3 };
	int ret = chain4(c);

	asm volatile("" ::: "memory");
	return ret * 5 + (int)live[0];
}

static CHAIN_FN int chain2(struct capture *c)
{
	volatile uint64_t live[8] = { 2 };
	int ret = chain3(c);

	asm volatile("" ::: "memory");
	return ret * 7 + (int)live[0];
}

static CHAIN_FN int chain1(struct capture *c)
{
	volatile uint64_t live[10] = { 1 };
	int ret = chain2(c);

	asm volatile("" ::: "memory");
	return ret * 11 + (int)live[0];
}

/* What chain1() and chain3() return (chain5() returns 5: the copy size is a multiple of 8). */
#define CHAIN3_RET ((5 * 3 + 4) * 5 + 3)
#define CHAIN1_RET ((CHAIN3_RET * 7 + 2) * 11 + 1)

/* A capture as chain5() takes it: whole words, inside the stack mapping, the chain's frames. */
static void check_capture(const struct capture *c)
{
	assert_int_equal(c->stack_size % 8, 0);
	assert_true(c->stack_size >= 256);
	assert_true(c->stack_size <= STACK_COPY_BYTES);
	assert_true(c->regs[JW_UREG_SP] + c->stack_size <= c->stack_end);
	assert_true(c->regs[JW_UREG_IP] != 0);
}

/* Unwinds the first @size bytes of @c's copy into @t, at most @max frames. */
static void unwind(struct fixture *fx, const struct capture *c, size_t size, size_t max,
		   struct trace *t)
{
	struct jw_unwind_input in = {
		.tid = gettid(),
		.regs = c->regs,
		.n_regs = JW_UREG_COUNT,
		.base = c->regs[JW_UREG_SP],
		.stack = c->stack,
		.stack_size = size,
	};
	size_t i;

	assert_true(max <= MAX_FRAMES);
	for (i = 0; i < MAX_FRAMES + GUARD_FRAMES; i++) {
		t->pcs[i] = POISON_PC;
		t->activation[i] = false;
	}
	t->n = jw_symbolizer__unwind(fx->sym, &in, t->pcs, t->activation, max);
	assert_true(t->n <= max);
	for (i = t->n; i < MAX_FRAMES + GUARD_FRAMES; i++)
		assert_true(t->pcs[i] == POISON_PC);
}

/* Names frame @i of @t as the symbolizer names it for a report. */
static void frame_at(struct fixture *fx, const struct trace *t, size_t i, struct jw_frame *fr)
{
	assert_true(i < t->n);
	jw_symbolizer__frame(fx->sym, t->pcs[i], !t->activation[i], fr);
}

/* Asserts that frame @i of @t is function @name of this test binary. */
static void assert_frame(struct fixture *fx, const struct trace *t, size_t i, const char *name)
{
	struct jw_frame fr;

	frame_at(fx, t, i, &fr);
	assert_int_equal(fr.kind, JW_FRAME_NATIVE);
	assert_non_null(fr.symbol);
	assert_string_equal(fr.symbol, name);
	assert_non_null(fr.module);
	assert_string_equal(fr.module, fx->exe);
	/* A return address is past its call; the leaf is past the function's entry too. */
	assert_true(fr.sym_off > 0);
}

/* Asserts that @t starts with the pcs of @ref's first @n frames. */
static void assert_prefix(const struct trace *t, const struct trace *ref, size_t n)
{
	size_t i;

	assert_true(n <= t->n && n <= ref->n);
	for (i = 0; i < n; i++) {
		assert_true(t->pcs[i] == ref->pcs[i]);
		assert_int_equal(t->activation[i], ref->activation[i]);
	}
}

/* The leaf is the captured rip, an activation frame; the callers are return addresses. */
static void assert_activations(const struct capture *c, const struct trace *t)
{
	size_t i;

	assert_true(t->n >= 1);
	assert_true(t->pcs[0] == c->regs[JW_UREG_IP]);
	assert_true(t->activation[0]);
	for (i = 1; i < t->n; i++)
		assert_false(t->activation[i]);
}

/* chain5 .. chain1, then @caller: the frames every capture through chain1() starts with. */
static void assert_chain(struct fixture *fx, const struct trace *t, const char *caller)
{
	static const char *const chain[] = { "chain5", "chain4", "chain3", "chain2", "chain1" };
	size_t i;

	assert_true(t->n > 5);
	for (i = 0; i < 5; i++)
		assert_frame(fx, t, i, chain[i]);
	assert_frame(fx, t, 5, caller);
}

/*
 * Takes a capture through chain1() called from the test this expands in, unwinds it whole into
 * fx->ref, and checks its first frames: chain5 .. chain1, then that test.
 */
#define CAPTURE_FULL(fx)                                                                           \
	do {                                                                                       \
		assert_int_equal(chain1(&(fx)->full), CHAIN1_RET);                                 \
		check_capture(&(fx)->full);                                                        \
		unwind((fx), &(fx)->full, (fx)->full.stack_size, MAX_FRAMES, &(fx)->ref);          \
		assert_activations(&(fx)->full, &(fx)->ref);                                       \
		assert_chain((fx), &(fx)->ref, __func__);                                          \
	} while (0)

/* The index of the first frame of @t from @from on named @name in a module ending in @module. */
static size_t find_frame(struct fixture *fx, const struct trace *t, size_t from, const char *name,
			 const char *module)
{
	struct jw_frame fr;
	size_t i, len;

	for (i = from; i < t->n; i++) {
		frame_at(fx, t, i, &fr);
		if (!fr.symbol || strcmp(fr.symbol, name) || !fr.module)
			continue;
		len = strlen(fr.module);
		if (len >= strlen(module) && !strcmp(fr.module + len - strlen(module), module))
			return i;
	}
	return SIZE_MAX;
}

/* Whether @module (a path) is glibc's libc.so.6. */
static bool is_libc(const char *module)
{
	const char *base = module ? strrchr(module, '/') : NULL;

	return base && !strcmp(base, "/libc.so.6");
}

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
		T(test_unwind_full_chain),
		T(test_unwind_needs_no_frame_pointer),
		T(test_unwind_cut_at_each_return_address),
		T(test_unwind_short_copies),
		T(test_unwind_max_frames),
		T(test_unwind_reused_across_samples),
		T(test_unwind_garbage),
		T(test_unwind_loop_stops_at_the_bound),
		T(test_unwind_reads_the_red_zone),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
