/* SPDX-License-Identifier: GPL-2.0-only */
/* The fixture test_unwind.c and test_unwind_bounds.c share: the chain whose stack the test copies, and the unwinding of a copy. */
#ifndef JW_TEST_UNWIND_FIXTURE_H
#define JW_TEST_UNWIND_FIXTURE_H
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
	uint64_t regs[JW_UREG_MAX];
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
static inline uint64_t main_stack_end(void)
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

static inline int setup(void **state)
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

static inline int teardown(void **state)
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
static __attribute__((unused)) CHAIN_FN int chain5(struct capture *c)
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

static __attribute__((unused)) CHAIN_FN int chain4(struct capture *c)
{
	volatile uint64_t live[4] = { 4 };
	int ret = chain5(c);

	asm volatile("" ::: "memory");
	return ret * 3 + (int)live[0];
}

static __attribute__((unused)) CHAIN_FN int chain3(struct capture *c)
{
	volatile uint64_t live[6] = { 3 };
	int ret = chain4(c);

	asm volatile("" ::: "memory");
	return ret * 5 + (int)live[0];
}

static __attribute__((unused)) CHAIN_FN int chain2(struct capture *c)
{
	volatile uint64_t live[8] = { 2 };
	int ret = chain3(c);

	asm volatile("" ::: "memory");
	return ret * 7 + (int)live[0];
}

static __attribute__((unused)) CHAIN_FN int chain1(struct capture *c)
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
static inline void check_capture(const struct capture *c)
{
	assert_int_equal(c->stack_size % 8, 0);
	assert_true(c->stack_size >= 256);
	assert_true(c->stack_size <= STACK_COPY_BYTES);
	assert_true(c->regs[JW_UREG_SP] + c->stack_size <= c->stack_end);
	assert_true(c->regs[JW_UREG_IP] != 0);
}

/*
 * Unwinds the first @size bytes of @c's copy into @t, at most @max frames, its registers laid
 * out as @layout says (NULL: not said).
 */
static inline void unwind_as(struct fixture *fx, const struct capture *c, size_t size,
			     size_t max, const struct jw_ureg_layout *layout, struct trace *t)
{
	struct jw_unwind_input in = {
		.tid = gettid(),
		.regs = c->regs,
		.n_regs = JW_UREG_COUNT,
		.pc = c->regs[JW_UREG_IP],
		.layout = layout,
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

/* Unwinds the first @size bytes of @c's copy into @t, at most @max frames. */
static inline void unwind(struct fixture *fx, const struct capture *c, size_t size, size_t max,
			  struct trace *t)
{
	unwind_as(fx, c, size, max, NULL, t);
}

/* Names frame @i of @t as the symbolizer names it for a report. */
static inline void frame_at(struct fixture *fx, const struct trace *t, size_t i, struct jw_frame *fr)
{
	assert_true(i < t->n);
	jw_symbolizer__frame(fx->sym, t->pcs[i], !t->activation[i], fr);
}

/* Asserts that frame @i of @t is function @name of this test binary. */
static inline void assert_frame(struct fixture *fx, const struct trace *t, size_t i, const char *name)
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
static inline void assert_prefix(const struct trace *t, const struct trace *ref, size_t n)
{
	size_t i;

	assert_true(n <= t->n && n <= ref->n);
	for (i = 0; i < n; i++) {
		assert_true(t->pcs[i] == ref->pcs[i]);
		assert_int_equal(t->activation[i], ref->activation[i]);
	}
}

/* The leaf is the captured rip, an activation frame; the callers are return addresses. */
static inline void assert_activations(const struct capture *c, const struct trace *t)
{
	size_t i;

	assert_true(t->n >= 1);
	assert_true(t->pcs[0] == c->regs[JW_UREG_IP]);
	assert_true(t->activation[0]);
	for (i = 1; i < t->n; i++)
		assert_false(t->activation[i]);
}

/* chain5 .. chain1, then @caller: the frames every capture through chain1() starts with. */
static inline void assert_chain(struct fixture *fx, const struct trace *t, const char *caller)
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
static inline size_t find_frame(struct fixture *fx, const struct trace *t, size_t from, const char *name,
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
static inline bool is_libc(const char *module)
{
	const char *base = module ? strrchr(module, '/') : NULL;

	return base && !strcmp(base, "/libc.so.6");
}

#endif
