// SPDX-License-Identifier: GPL-2.0-only
/* The architecture layer (user/arch/): what it reads from machine code, on the machine built for. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <string.h>

#include <cmocka.h>

#include "arch/arch.h"

/* The jumps jw_arch_scan_jumps() reports: the targets, from the code's start. */
struct jumps_seen {
	int64_t t[8];
	size_t n;
};

static int note_jump(int64_t target, void *ctx)
{
	struct jumps_seen *j = ctx;

	if (j->n < 8)
		j->t[j->n++] = target;
	return 0;
}

/* Saved register @reg at @at in frame @f. */
static void assert_saved(const struct jw_arch_frame *f, unsigned int reg, uint64_t at)
{
	unsigned int i;

	for (i = 0; i < f->n_saved; i++)
		if (f->saved[i].dwarf_reg == reg) {
			assert_int_equal(f->saved[i].at, at);
			return;
		}
	fail_msg("register %u not saved", reg);
}

/* The entries jw_arch_scan_entries() gives, the first 8. */
struct entries_seen {
	uint64_t a[8];
	size_t n;
};

static int collect_entry(uint64_t entry, void *ctx)
{
	struct entries_seen *got = ctx;

	if (got->n < 8)
		got->a[got->n++] = entry;
	return 0;
}

#if defined(__x86_64__)
/* The start of call() in Debian's redis 7.0 (build-id a50d6825...), cut down. */
static const uint8_t debian_call[] = {
	0x41, 0x57,			/* push %r15 */
	0x41, 0x56,			/* push %r14 */
	0x49, 0x89, 0xfe,		/* mov %rdi,%r14 */
	0x41, 0x55,			/* push %r13 */
	0x48, 0x83, 0xec, 0x48,		/* sub $0x48,%rsp */
	0x4c, 0x8b, 0x67, 0x08,		/* mov 0x8(%rdi),%r12 */
	0x49, 0x8b, 0x46, 0x70,		/* mov 0x70(%r14),%rax */
	0x48, 0x89, 0x44, 0x24, 0x18,	/* mov %rax,0x18(%rsp) */
	0x4c, 0x89, 0xf7,		/* mov %r14,%rdi */
	0xff, 0x50, 0x50,		/* call *0x50(%rax) */
	0xc3,
};

static void test_debian_build(void **state)
{
	struct jw_arg_chain c = { 0 };

	(void)state;
	assert_int_equal(jw_arch_derive_call_chain(debian_call, sizeof(debian_call), &c), 0);
	assert_int_equal(c.handler.reg, jw_arch_arg_reg(0));
	assert_int_equal(c.handler.n_offsets, 2);
	assert_int_equal(c.handler.offsets[0], 0x70);
	assert_int_equal(c.handler.offsets[1], 0x50);
	assert_int_equal(c.kind, JW_HANDLER_CODE);
}

/* Another register to keep c in (rbx: no REX.B) and other offsets. */
static void test_other_register(void **state)
{
	static const uint8_t code[] = {
		0x53,				/* push %rbx */
		0x48, 0x89, 0xfb,		/* mov %rdi,%rbx */
		0x48, 0x8b, 0x43, 0x68,		/* mov 0x68(%rbx),%rax */
		0x48, 0x89, 0xdf,		/* mov %rbx,%rdi */
		0xff, 0x50, 0x48,		/* call *0x48(%rax) */
		0x5b, 0xc3,
	};
	struct jw_arg_chain c = { 0 };

	(void)state;
	assert_int_equal(jw_arch_derive_call_chain(code, sizeof(code), &c), 0);
	assert_int_equal(c.handler.offsets[0], 0x68);
	assert_int_equal(c.handler.offsets[1], 0x48);
}

/* Code that does not follow the pattern is not guessed at. */
static void test_not_understood(void **state)
{
	static const uint8_t no_save[] = { 0x55, 0x48, 0x89, 0xe5, 0xff, 0x50, 0x50, 0xc3 };
	static const uint8_t no_call[] = { 0x49, 0x89, 0xfe, 0x49, 0x8b, 0x46, 0x70, 0xc3 };
	struct jw_arg_chain c = { 0 };

	(void)state;
	assert_int_equal(jw_arch_derive_call_chain(no_save, sizeof(no_save), &c), -ENOENT);
	assert_int_equal(jw_arch_derive_call_chain(no_call, sizeof(no_call), &c), -ENOENT);
	assert_int_equal(jw_arch_derive_call_chain(debian_call, 3, &c), -ENOENT);
	assert_int_equal(jw_arch_derive_call_chain(debian_call, 0, &c), -ENOENT);
}


/* Direct jumps, short and near, conditional or not; calls and returns are none. */
static void test_scan_jumps(void **state)
{
	static const uint8_t code[] = {
		0xeb, 0x02,				/* 0: jmp .+4 (to 4) */
		0x90, 0x90,				/* 2: nops */
		0x75, 0xfa,				/* 4: jne 0 */
		0x0f, 0x85, 0x10, 0x00, 0x00, 0x00,	/* 6: jne 0x1c */
		0xe8, 0x00, 0x00, 0x00, 0x00,		/* 12: call 17: no jump */
		0xe9, 0x00, 0xf0, 0xff, 0xff,		/* 17: jmp 22 - 4096 */
		0xc3,					/* 22: ret */
	};
	struct jumps_seen j = { .n = 0 };

	(void)state;
	assert_int_equal(jw_arch_scan_jumps(code, sizeof(code), note_jump, &j), 0);
	assert_int_equal(j.n, 4);
	assert_int_equal(j.t[0], 4);
	assert_int_equal(j.t[1], 0);
	assert_int_equal(j.t[2], 0x1c);
	assert_int_equal(j.t[3], 22 - 4096);
}

/*
 * musl 1.2.3's clock_gettime (Debian's x86-64 libc.so, no CFI): up to its call of the vdso
 * (MUSL_CALL_END bytes), and on past its first return, up to its second system call, in a block
 * only a branch reaches.
 */
static const uint8_t musl_clock_gettime[] = {
	0x55,					/* push %rbp */
	0x48, 0x89, 0xf5,			/* mov %rsi,%rbp */
	0x53,					/* push %rbx */
	0x89, 0xfb,				/* mov %edi,%ebx */
	0x48, 0x83, 0xec, 0x08,			/* sub $0x8,%rsp */
	0x48, 0x8b, 0x05, 0x0e, 0xdf, 0x03, 0x00,	/* mov 0x3df0e(%rip),%rax */
	0x48, 0x85, 0xc0,			/* test %rax,%rax */
	0x74, 0x0b,				/* je 0x22 */
	0xff, 0xd0,				/* call *%rax */
	0x85, 0xc0, 0x74, 0x27,			/* 0x19: test; je 0x44 */
	0x83, 0xf8, 0xea, 0x74, 0x36,		/* cmp; je 0x58 */
	0x48, 0x63, 0xfb, 0xb8, 0xe4, 0x00, 0x00, 0x00, 0x48, 0x89, 0xee, 0x0f, 0x05,
	0x83, 0xf8, 0xda, 0x75, 0x1c,		/* 0x2f: cmp; jne 0x50 */
	0x48, 0xc7, 0xc7, 0xea, 0xff, 0xff, 0xff,
	0x85, 0xdb, 0x74, 0x31,			/* 0x3b: test %ebx,%ebx; je 0x70 */
	0xe8, 0x5c, 0x0d, 0xfb, 0xff,		/* call */
	0x48, 0x83, 0xc4, 0x08,			/* 0x44: add $0x8,%rsp */
	0x5b, 0x5d,				/* pop %rbx; pop %rbp */
	0xc3,					/* 0x4a: ret */
	0x0f, 0x1f, 0x44, 0x00, 0x00,
	0x48, 0x63, 0xf8,			/* 0x50 */
	0xeb, 0xea,				/* jmp 0x3f */
	0x0f, 0x1f, 0x00,
	0x48, 0xc7, 0xc7, 0xea, 0xff, 0xff, 0xff,	/* 0x58 */
	0xe8, 0x3c, 0x0d, 0xfb, 0xff,
	0xeb, 0xde,				/* jmp 0x44 */
	0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00,
	0xb8, 0x60, 0x00, 0x00, 0x00,		/* 0x70 */
	0x31, 0xf6, 0x48, 0x89, 0xef,
	0x0f, 0x05,				/* syscall */
};
#define MUSL_CALL_END 0x19

/* A frame read from its prologue: where the return address and the saved registers are. */
static void test_prologue_frame(void **state)
{
	static const uint8_t alloca_[] = { 0x55, 0x48, 0x29, 0xc4 };	/* push; sub %rax,%rsp */
	static const uint8_t aligned[] = { 0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xe4, 0xf0 };

	static const size_t body[] = { MUSL_CALL_END, 0x50, 0x58, sizeof(musl_clock_gettime) };
	/* In its epilogue, each instruction followed: where the return address is, what is saved. */
	static const struct {
		size_t at;
		uint64_t ra_at;
		unsigned int n_saved;
		uint64_t rbp_at;	/* where rbp is saved, when it is */
	} epilogue[] = { { 0x48, 16, 2, 8 }, { 0x49, 8, 1, 0 }, { 0x4a, 0, 0, 0 } };
	static const size_t unknown[] = { 0x4b, 0x4f };
	struct jw_arch_frame guesses[4];
	static const uint8_t early_out[] = {
		0x48, 0x85, 0xff, 0x74, 0x03,	/* test %rdi,%rdi; je 0x8 */
		0x53, 0x5b, 0xc3,		/* push %rbx; pop %rbx; ret */
		0x31, 0xc0,			/* 0x8: xor %eax,%eax */
	};
	/* musl's memcpy (src/string/x86_64/memcpy.s): a leaf of string moves, no CFI. */
	static const uint8_t musl_memcpy[] = {
		0x48, 0x89, 0xf8, 0x48, 0x83, 0xfa, 0x08, 0x72, 0x14,	/* mov; cmp $8,%rdx; jb */
		0xf7, 0xc7, 0x07, 0x00, 0x00, 0x00, 0x74, 0x0c,		/* test $7,%edi; je */
		0xa4, 0x48, 0xff, 0xca, 0xf7, 0xc7, 0x07, 0x00, 0x00, 0x00, 0x75, 0xf4, /* movsb */
		0x48, 0x89, 0xd1, 0x48, 0xc1, 0xe9, 0x03,		/* mov %rdx,%rcx; shr */
		0xf3, 0x48, 0xa5,					/* 0x24: rep movsq */
		0x83, 0xe2, 0x07, 0x74, 0x05, 0xa4, 0xff, 0xca, 0x75, 0xfb, 0xc3,
	};
	static const size_t in_memcpy[] = { 0x11, 0x1d, 0x24, 0x27, 0x2c, 0x31 };
	struct jw_arch_frame f;
	size_t i;

	(void)state;
	/* Wherever a sample stands in it, the return address is at the stack pointer. */
	for (i = 0; i < sizeof(in_memcpy) / sizeof(in_memcpy[0]); i++) {
		assert_int_equal(jw_arch_prologue_frame(musl_memcpy, in_memcpy[i], &f), 0);
		assert_int_equal(f.ra_at, 0);
		assert_int_equal(f.cfa_at, 8);
		assert_int_equal(f.n_saved, 0);
	}
	/* At the call, and in the blocks past the return that branches from the body reach. */
	for (i = 0; i < sizeof(body) / sizeof(body[0]); i++) {
		assert_int_equal(jw_arch_prologue_frame(musl_clock_gettime, body[i], &f), 0);
		assert_int_equal(f.ra_reg, -1);
		assert_int_equal(f.ra_at, 24);
		assert_int_equal(f.cfa_at, 32);
		assert_int_equal(f.n_saved, 2);
		assert_saved(&f, 6, 16);	/* rbp, its caller's: before musl used it */
		assert_saved(&f, 3, 8);		/* rbx */
	}
	for (i = 0; i < sizeof(epilogue) / sizeof(epilogue[0]); i++) {
		assert_int_equal(jw_arch_prologue_frame(musl_clock_gettime, epilogue[i].at, &f), 0);
		assert_int_equal(f.ra_at, epilogue[i].ra_at);
		assert_int_equal(f.cfa_at, epilogue[i].ra_at + 8);
		assert_int_equal(f.n_saved, epilogue[i].n_saved);
		if (f.n_saved)
			assert_saved(&f, 6, epilogue[i].rbp_at);
	}
	/* Past the return where no branch leads: the body's frame, a guess; inside an insn. */
	assert_int_equal(jw_arch_prologue_frame(musl_clock_gettime, unknown[0], &f), -EAGAIN);
	assert_int_equal(jw_arch_prologue_guesses(musl_clock_gettime, unknown[0], guesses, 4), 1);
	assert_true(guesses[0].ra_at == 24 && guesses[0].cfa_at == 32 && guesses[0].n_saved == 2);
	assert_int_equal(jw_arch_prologue_frame(musl_clock_gettime, unknown[1], &f), -ENOENT);
	assert_int_equal(jw_arch_prologue_guesses(musl_clock_gettime, unknown[1], guesses, 4), 0);
	/* A return taken before the frame is made (shrink-wrapping): the return address at sp. */
	assert_int_equal(jw_arch_prologue_frame(early_out, sizeof(early_out), &f), 0);
	assert_true(f.ra_at == 0 && f.cfa_at == 8 && f.n_saved == 0);
	/* At the entry: the return address at sp. */
	assert_int_equal(jw_arch_prologue_frame(musl_clock_gettime, 0, &f), 0);
	assert_true(f.ra_at == 0 && f.cfa_at == 8 && f.n_saved == 0);
	/* redis's call(), up to its call: three pushes and 0x48 bytes. */
	assert_int_equal(jw_arch_prologue_frame(debian_call, sizeof(debian_call) - 1, &f), 0);
	assert_true(f.ra_at == 96 && f.cfa_at == 104);
	assert_saved(&f, 15, 88);
	assert_saved(&f, 14, 80);
	assert_saved(&f, 13, 72);
	/*
	 * Past a return: in no branch's block; after an alloca, an alignment of rsp: not known,
	 * and with no branch before, nothing to guess from.
	 */
	assert_int_equal(jw_arch_prologue_frame(debian_call, sizeof(debian_call), &f), -EAGAIN);
	assert_int_equal(jw_arch_prologue_frame(alloca_, sizeof(alloca_), &f), -EAGAIN);
	assert_int_equal(jw_arch_prologue_frame(aligned, sizeof(aligned), &f), -EAGAIN);
	assert_int_equal(jw_arch_prologue_guesses(alloca_, sizeof(alloca_), guesses, 4), 0);
}

/*
 * Code musl (Debian's x86-64 libc.so) has no CFI for: snprintf's entry, which spills the vector
 * argument registers with movaps (xmm4 is no rsp); and printf_core's first loop, whose body
 * (0x20) only its test below jumps back to: the frame the code had at its branches.
 */
static void test_unreached_blocks(void **state)
{
	static const uint8_t musl_snprintf[] = {
		0x48, 0x81, 0xec, 0xd8, 0x00, 0x00, 0x00,	/* sub $0xd8,%rsp */
		0x48, 0x89, 0x4c, 0x24, 0x38,			/* mov %rcx,0x38(%rsp) */
		0x84, 0xc0, 0x74, 0x10,				/* test %al,%al; je 0x20 */
		0x0f, 0x29, 0x44, 0x24, 0x50,			/* movaps %xmm0,0x50(%rsp) */
		0x0f, 0x29, 0xa4, 0x24, 0x90, 0x00, 0x00, 0x00,	/* movaps %xmm4,0x90(%rsp) */
		0x0f, 0x57, 0xe4,				/* xorps %xmm4,%xmm4 */
		0x48, 0x89, 0xe1,				/* 0x20: mov %rsp,%rcx */
	};
	static const uint8_t musl_printf_core[] = {
		0x41, 0x57,					/* push %r15 */
		0x41, 0x56,					/* push %r14 */
		0x53,						/* push %rbx */
		0x48, 0x81, 0xec, 0xc8, 0x00, 0x00, 0x00,	/* sub $0xc8,%rsp */
		0x41, 0x0f, 0xb6, 0x03,				/* movzbl (%r11),%eax */
		0x84, 0xc0, 0x0f, 0x84, 0x72, 0x05, 0x00, 0x00,	/* test %al,%al; je +0x572 */
		0x4d, 0x89, 0xdd,				/* mov %r11,%r13 */
		0xeb, 0x08,					/* jmp 0x25 */
		0x0f, 0x1f, 0x00,				/* nop */
		0x41, 0x0f, 0xb6, 0x45, 0x01,			/* 0x20: movzbl 0x1(%r13),%eax */
	};
	static const uint8_t extend[] = { 0x53, 0x48, 0x98, 0x48, 0x99 };	/* push; cltq; cqto */
	struct jw_arch_frame f, guesses[4];

	(void)state;
	assert_int_equal(jw_arch_prologue_frame(musl_snprintf, sizeof(musl_snprintf), &f), 0);
	assert_true(f.ra_at == 0xd8 && f.cfa_at == 0xe0 && f.n_saved == 0);
	/* cltq and cqto write rax and rdx only (printf_core sign-extends a count with cltq). */
	assert_int_equal(jw_arch_prologue_frame(extend, sizeof(extend), &f), 0);
	assert_true(f.ra_at == 8 && f.cfa_at == 16 && f.n_saved == 1);
	assert_int_equal(jw_arch_prologue_frame(musl_printf_core, 0x20, &f), -EAGAIN);
	assert_int_equal(jw_arch_prologue_guesses(musl_printf_core, 0x20, guesses, 4), 1);
	assert_true(guesses[0].ra_at == 0xe0 && guesses[0].cfa_at == 0xe8);
	assert_saved(&guesses[0], 15, 0xd8);
	assert_saved(&guesses[0], 14, 0xd0);
	assert_saved(&guesses[0], 3, 0xc8);
	/* Where the frame is known, or the point inside an instruction: no guesses. */
	assert_int_equal(jw_arch_prologue_guesses(musl_printf_core, 0x1b, guesses, 4), 0);
	assert_int_equal(jw_arch_prologue_guesses(musl_printf_core, 0x21, guesses, 4), 0);
}

/* Where code calls and which code addresses it takes: call rel32, lea rel32(%rip); no other. */
static void test_scan_entries(void **state)
{
	static const uint8_t code[] = {
		0xe8, 0x0b, 0x00, 0x00, 0x00,			/* call 0x1010 */
		0x48, 0x8d, 0x05, 0xf0, 0xff, 0xff, 0xff,	/* lea -0x10(%rip),%rax: 0xffc */
		0x48, 0x8d, 0x44, 0x24, 0x08,			/* lea 0x8(%rsp),%rax */
		0xff, 0xd0,					/* call *%rax */
	};
	struct entries_seen got = { .n = 0 };

	(void)state;
	assert_int_equal(jw_arch_scan_entries(code, sizeof(code), 0x1000, collect_entry, &got), 0);
	assert_int_equal(got.n, 2);
	assert_int_equal(got.a[0], 0x1010);
	assert_int_equal(got.a[1], 0xffc);
}

/* A return address follows a call: direct, through a register or memory; not another insn. */
static void test_after_call(void **state)
{
	static const uint8_t direct[] = { 0x90, 0xe8, 0xf1, 0x5c, 0x00, 0x00 };
	static const uint8_t reg[] = { 0x48, 0x89, 0xc7, 0xff, 0xd0 };
	static const uint8_t rex_reg[] = { 0x90, 0x41, 0xff, 0xd3 };
	static const uint8_t mem[] = { 0x90, 0xff, 0x50, 0x08 };
	static const uint8_t rip[] = { 0xff, 0x15, 0x10, 0x20, 0x30, 0x00 };
	static const uint8_t mov[] = { 0x90, 0x48, 0x89, 0xc7 };
	static const uint8_t jmp_reg[] = { 0x90, 0xff, 0xe0 };

	(void)state;
	assert_true(jw_arch_after_call(direct, sizeof(direct)));
	assert_true(jw_arch_after_call(reg, sizeof(reg)));
	assert_true(jw_arch_after_call(rex_reg, sizeof(rex_reg)));
	assert_true(jw_arch_after_call(mem, sizeof(mem)));
	assert_true(jw_arch_after_call(rip, sizeof(rip)));
	assert_false(jw_arch_after_call(mov, sizeof(mov)));
	assert_false(jw_arch_after_call(jmp_reg, sizeof(jmp_reg)));
	assert_false(jw_arch_after_call(direct, 1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_debian_build),
		cmocka_unit_test(test_other_register),
		cmocka_unit_test(test_not_understood),
		cmocka_unit_test(test_scan_jumps),
		cmocka_unit_test(test_prologue_frame),
		cmocka_unit_test(test_unreached_blocks),
		cmocka_unit_test(test_after_call),
		cmocka_unit_test(test_scan_entries),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
#elif defined(__aarch64__)
/* call() of Debian's redis 7.0 for arm64 (build-id 69f3d9da...), up to its blr. */
static const uint32_t debian_call[] = {
	0xd10243ff, 0xa9037bfd, 0x9100c3fd, 0xa90873fb, 0xaa0003fc, 0x90000d00, /* mov x28, x0 */
	0xf947ac00, 0xa90453f3, 0xb0000fd3, 0x91244262, 0xa9055bf5, 0x2a0103f4,
	0xf9400795, 0xa90663f7, 0xa9076bf9, 0xb940e859, 0xf9400003, 0xf90017e3,
	0xd2800003, 0x92980000, 0xf2bffce0, 0x8a0002a0, 0xf9000780, 0x121c0020,
	0xf9404397, 0x2a190000, 0x35000060, 0x52800020, 0xb900e840, 0x9124427a,
	0xb0000fd8, 0x911ac302, 0x910063fb, 0xd2800001, 0xaa1b03e0, 0xf9434b43,
	0xf9005843, 0xf945b342, 0xf90007e2, 0x97ffc41d, 0xa94187f6, 0xd2884802,
	0xf9418740, 0xf2a001e2, 0x91000403, 0xf9018743, 0x9b0206d6, 0xb40023a0,
	0x94034e95, 0xf90003ff, 0x7100041f, 0x540000c1, 0x90000d00, 0xf9474800,
	0xf9400000, 0xd63f0000, 0xf90003e0,
	0xf9403b82,	/* ldr x2, [x28, #112] */
	0x9124427a, 0xaa1c03e0,
	0xf9402843,	/* ldr x3, [x2, #80] */
	0xb9431342, 0x11000442, 0xb9031342,
	0xd63f0060,	/* blr x3 */
};

static void test_debian_build(void **state)
{
	struct jw_arg_chain c = { 0 };

	(void)state;
	assert_int_equal(jw_arch_derive_call_chain((const uint8_t *)debian_call, sizeof(debian_call),
						   &c), 0);
	assert_int_equal(c.handler.reg, jw_arch_arg_reg(0));
	assert_int_equal(c.handler.n_offsets, 2);
	assert_int_equal(c.handler.offsets[0], 0x70);
	assert_int_equal(c.handler.offsets[1], 0x50);
	assert_int_equal(c.kind, JW_HANDLER_CODE);
}

/* Code that does not follow the pattern is not guessed at. */
static void test_not_understood(void **state)
{
	/* x0 kept in a scratch register (x9), then the same loads: not callee-saved, not c. */
	static const uint32_t scratch[] = { 0xaa0003e9, 0xf9403922, 0xf9402843, 0xd63f0060 };
	/* The loads, but the call is through another register. */
	static const uint32_t other[] = { 0xaa0003fc, 0xf9403b82, 0xf9402843, 0xd63f0040 };
	struct jw_arg_chain c = { 0 };

	(void)state;
	assert_int_equal(jw_arch_derive_call_chain((const uint8_t *)scratch, sizeof(scratch), &c),
			 -ENOENT);
	assert_int_equal(jw_arch_derive_call_chain((const uint8_t *)other, sizeof(other), &c),
			 -ENOENT);
	assert_int_equal(jw_arch_derive_call_chain((const uint8_t *)debian_call, 3, &c), -ENOENT);
}

static void decode(uint32_t w, struct jw_arch_insn *in)
{
	jw_arch_decode_entry((const uint8_t *)&w, sizeof(w), in);
}

/*
 * What a uprobe costs on each (arch/arm64/kernel/probes/decode-insn.c, 6.1 and 6.12): branches
 * and adr/adrp simulated; nop and bti passed; paciasp, the prologue's stp and sub stop.
 */
static void test_decode(void **state)
{
	struct jw_arch_insn in;

	(void)state;
	decode(0xd503201f, &in);
	assert_int_equal(in.kind, JW_INSN_SKIPPABLE);
	assert_string_equal(in.text, "nop");
	decode(0xd503245f, &in);	/* bti c */
	assert_int_equal(in.kind, JW_INSN_SKIPPABLE);
	decode(0x14000002, &in);	/* b .+8 */
	assert_int_equal(in.kind, JW_INSN_EMULATED);
	assert_true(in.jumps);
	assert_int_equal(in.rel, 4);
	decode(0x97ffc41d, &in);	/* bl, backwards */
	assert_int_equal(in.kind, JW_INSN_EMULATED);
	assert_false(in.jumps);
	decode(0x17ffffff, &in);	/* b .-4 */
	assert_int_equal(in.rel, -8);
	decode(0x540000c1, &in);	/* b.ne .+24 */
	assert_int_equal(in.kind, JW_INSN_EMULATED);
	assert_int_equal(in.rel, 20);
	decode(0xb40023a0, &in);	/* cbz x0 */
	assert_int_equal(in.kind, JW_INSN_EMULATED);
	decode(0x90000d00, &in);	/* adrp x0 */
	assert_int_equal(in.kind, JW_INSN_EMULATED);
	assert_false(in.jumps);
	decode(0xd503233f, &in);
	assert_int_equal(in.kind, JW_INSN_UNKNOWN);
	assert_string_equal(in.text, "paciasp");
	decode(0xa9bf7bfd, &in);	/* stp x29, x30, [sp, #-16]! */
	assert_int_equal(in.kind, JW_INSN_UNKNOWN);
	decode(0xd10243ff, &in);	/* sub sp, sp, #0x90 */
	assert_int_equal(in.kind, JW_INSN_UNKNOWN);
	jw_arch_decode_entry((const uint8_t *)debian_call, 3, &in);
	assert_int_equal(in.kind, JW_INSN_UNKNOWN);
}


/* b, b.cond, cbz/cbnz, tbz/tbnz forwards and back; bl is a call, no jump. */
static void test_scan_jumps(void **state)
{
	static const uint32_t code[] = {
		0x14000002,	/* 0: b .+8 (8) */
		0x97ffc41d,	/* 4: bl: no jump */
		0x540000c1,	/* 8: b.ne .+24 (32) */
		0xb40023a0,	/* 12: cbz x0, .+1140 (1152) */
		0x17ffffff,	/* 16: b .-4 (12) */
		0x36080040,	/* 20: tbz w0, #1, .+8 (28) */
	};
	struct jumps_seen j = { .n = 0 };

	(void)state;
	assert_int_equal(jw_arch_scan_jumps((const uint8_t *)code, sizeof(code), note_jump, &j), 0);
	assert_int_equal(j.n, 5);
	assert_int_equal(j.t[0], 8);
	assert_int_equal(j.t[1], 32);
	assert_int_equal(j.t[2], 12 + 0x11d * 4);
	assert_int_equal(j.t[3], 12);
	assert_int_equal(j.t[4], 28);
}

/* The wait system calls of arm64: none of x86-64's poll, select or epoll_wait. */
static void test_wait_syscalls(void **state)
{
	(void)state;
	assert_int_equal(jw_arch_n_wait_syscalls, 4);
	assert_int_equal(jw_arch_wait_syscalls[0], 22);	/* epoll_pwait */
}

/*
 * musl 1.2.3's clock_gettime (Debian's arm64 libc.so, no CFI): up to its call of the vdso
 * (MUSL_CALL_END bytes), and on past its first return, up to its second system call, in a block
 * only a branch reaches.
 */
static const uint32_t musl_clock_gettime[] = {
	0xa9be7bfd,	/* stp x29, x30, [sp, #-32]! */
	0xd0000262, 0x910003fd,	/* adrp x2; mov x29, sp */
	0xf941d842,	/* ldr x2, [x2, #944] */
	0xa90153f3,	/* stp x19, x20, [sp, #16] */
	0x2a0003f4, 0xaa0103f3, 0xb40000a2,
	0xd63f0040,	/* blr x2 */
	0x34000180, 0x3100581f, 0x540003a0, 0x93407e80, 0xaa1303e1, 0xd2800e28, 0xd4000001,
	0x3100981f, 0x540000e1,	/* 0x40: cmn; b.ne 0x60 */
	0x928002a0,
	0x34000114,	/* 0x4c: cbz w20, 0x6c */
	0x97febc48,	/* bl */
	0xa94153f3,	/* 0x54: ldp x19, x20, [sp, #16] */
	0xa8c27bfd,	/* ldp x29, x30, [sp], #32 */
	0xd65f03c0,	/* 0x5c: ret */
	0x93407c00, 0x97febc43,
	0x17fffffb,	/* 0x68: b 0x54 */
	0xd2801528, 0xaa1303e0, 0xd2800001,	/* 0x6c */
	0xd4000001,	/* svc #0 */
};
#define MUSL_CALL_END 0x24

/*
 * Linux 6.12's vdso __kernel_clock_gettime (Debian's arm64 kernel; no CFI, no frame): a leaf
 * that returns on its fast path, and for a clock the vdso has not, branches past that return
 * to the system call (VDSO_SYSCALL_END bytes, where a sample in the call stands).
 */
static const uint32_t vdso_clock_gettime[] = {
	0x71003c1f, 0x540005a8,	/* cmp w0, #15; b.hi 0xb8 */
	0x52800022, 0x52811064, 0x1ac02042, 0x10fee563, 0x6a040044, 0x54000600, 0xb9400067,
	0x37000507, 0xd50339bf, 0xb9400462, 0x34000442, 0xd5033fdf, 0xd53be042, 0xca020044,
	0x8b2463e4,	/* add x4, sp, x4 */
	0xf940009f, 0x8b20d064, 0xa940a86b, 0xa9422486, 0x29432065, 0xd50339bf, 0xb9400064,
	0x6b0400ff, 0x54fffde1, 0xcb0b0040, 0x2a0503e5, 0x8a0a0000, 0xd2993fe3, 0xf2a77343,
	0x9b052400, 0x9ac82400, 0xeb03001f, 0x54000129, 0x92993fe4, 0x52800002, 0xf2b88ca4,
	0x8b040000, 0x11000442, 0xeb03001f, 0x54ffffa8, 0x8b2240c6, 0xa9000026, 0x52800000,
	0xd65f03c0,	/* 0xb4: ret */
	0xd2800e28, 0xd4000001,	/* 0xb8: mov x8, #113; svc #0 */
};
#define VDSO_SYSCALL_END 0xc0

/* A frame read from its prologue: where the return address and the saved registers are. */
static void test_prologue_frame(void **state)
{
	/* A frame made and unmade: x30 holds the return address again, sp is the entry's. */
	static const uint32_t unmade[][2] = {
		{ 0xa9be7bfd, 0xa8c27bfd },	/* stp x29, x30, [sp, #-32]!; ldp x29, x30, [sp], #32 */
		{ 0xd10083ff, 0x910083ff },	/* sub sp, sp, #32; add sp, sp, #32 */
		{ 0xf81f0ffe, 0xf84107fe },	/* str x30, [sp, #-16]!; ldr x30, [sp], #16 */
	};
	static const uint32_t unreached[] = {
		0xa9be7bfd, 0xd65f03c0,		/* stp x29, x30, [sp, #-32]!; ret */
	};
	static const uint32_t unknowable[] = {
		0xa9be7bfd, 0xcb2063ff,		/* stp x29, x30, [sp, #-32]!; sub sp, sp, x0: alloca */
	};
	/* A return taken before the frame is made (shrink-wrapping): its path keeps x30. */
	static const uint32_t early_out[] = {
		0xb4000080,	/* cbz x0, 0x10 */
		0xa9be7bfd,	/* stp x29, x30, [sp, #-32]! */
		0xa8c27bfd,	/* ldp x29, x30, [sp], #32 */
		0xd65f03c0,	/* ret */
		0x52800000,	/* 0x10: mov w0, #0 */
	};
	static const size_t body[] = { MUSL_CALL_END, 0x60, 0x6c, sizeof(musl_clock_gettime) };
	struct jw_arch_frame f;
	size_t i;

	(void)state;
	/* At the call, and in the blocks past the return that branches from the body reach. */
	for (i = 0; i < sizeof(body) / sizeof(body[0]); i++) {
		assert_int_equal(jw_arch_prologue_frame((const uint8_t *)musl_clock_gettime, body[i],
							&f), 0);
		assert_int_equal(f.ra_reg, -1);
		assert_int_equal(f.ra_at, 8);
		assert_int_equal(f.cfa_at, 32);
		assert_saved(&f, 29, 0);
		assert_saved(&f, 19, 16);
		assert_saved(&f, 20, 24);
	}
	/* In its epilogue: x19 and x20 loaded back, then the frame record with sp freed. */
	assert_int_equal(jw_arch_prologue_frame((const uint8_t *)musl_clock_gettime, 0x58, &f), 0);
	assert_true(f.ra_reg == -1 && f.ra_at == 8 && f.cfa_at == 32 && f.n_saved == 1);
	assert_saved(&f, 29, 0);
	assert_int_equal(jw_arch_prologue_frame((const uint8_t *)musl_clock_gettime, 0x5c, &f), 0);
	assert_true(f.ra_reg == 30 && f.cfa_at == 0 && f.n_saved == 0);
	/* The vdso's leaf in its system call: x30 holds the return address, sp is the caller's. */
	assert_int_equal(jw_arch_prologue_frame((const uint8_t *)vdso_clock_gettime,
						VDSO_SYSCALL_END, &f), 0);
	assert_true(f.ra_reg == 30 && f.cfa_at == 0 && f.n_saved == 0);
	assert_int_equal(jw_arch_prologue_frame((const uint8_t *)early_out, sizeof(early_out), &f),
			 0);
	assert_true(f.ra_reg == 30 && f.cfa_at == 0 && f.n_saved == 0);
	/* A leaf at its entry: the return address is still in x30. */
	assert_int_equal(jw_arch_prologue_frame((const uint8_t *)musl_clock_gettime, 0, &f), 0);
	assert_true(f.ra_reg == 30 && f.cfa_at == 0 && f.n_saved == 0);
	/* redis's call(): sp lowered first, the frame record stored above the locals. */
	assert_int_equal(jw_arch_prologue_frame((const uint8_t *)debian_call, 4 * 4, &f), 0);
	assert_true(f.ra_reg == -1 && f.ra_at == 56 && f.cfa_at == 144);
	assert_saved(&f, 29, 48);
	assert_saved(&f, 27, 128);
	assert_saved(&f, 28, 136);
	for (i = 0; i < sizeof(unmade) / sizeof(unmade[0]); i++) {
		assert_int_equal(jw_arch_prologue_frame((const uint8_t *)unmade[i],
							sizeof(unmade[i]), &f), 0);
		assert_true(f.ra_reg == 30 && f.cfa_at == 0 && f.n_saved == 0);
	}
	/* Past a return, in a block no branch leads to; after an alloca: not known for sure. */
	assert_int_equal(jw_arch_prologue_frame((const uint8_t *)unreached, sizeof(unreached),
						&f), -EAGAIN);
	assert_int_equal(jw_arch_prologue_frame((const uint8_t *)unknowable, sizeof(unknowable),
						&f), -EAGAIN);
}

/*
 * A loop whose body (0xc) only its test below jumps back to: the frame the code had at its
 * branches, a guess (a leaf's or an epilogue's is not one: no branch was taken there).
 */
static void test_unreached_blocks(void **state)
{
	static const uint32_t loop[] = {
		0xa9be7bfd,	/* stp x29, x30, [sp, #-32]! */
		0x910003fd,	/* mov x29, sp */
		0x14000002,	/* b 0x10 */
		0x91000400,	/* 0xc: add x0, x0, #1 */
		0xf100281f,	/* 0x10: cmp x0, #10 */
		0x54ffffcb,	/* b.lt 0xc */
		0xa8c27bfd,	/* ldp x29, x30, [sp], #32 */
		0xd65f03c0,	/* ret */
	};
	struct jw_arch_frame f, guesses[4];

	(void)state;
	assert_int_equal(jw_arch_prologue_frame((const uint8_t *)loop, 0xc, &f), -EAGAIN);
	assert_int_equal(jw_arch_prologue_guesses((const uint8_t *)loop, 0xc, guesses, 4), 1);
	assert_true(guesses[0].ra_reg == -1 && guesses[0].ra_at == 8 && guesses[0].cfa_at == 32);
	assert_saved(&guesses[0], 29, 0);
	/* Where the frame is known: no guesses. */
	assert_int_equal(jw_arch_prologue_guesses((const uint8_t *)loop, 0x14, guesses, 4), 0);
}

/*
 * Where code calls and which code addresses it takes: bl, adrp then an add from its register
 * (vsnprintf's "adrp x7; stp; add x7, x7, #0x380": sn_write); not adr, blr, nor an add from a
 * register written since.
 */
static void test_scan_entries(void **state)
{
	static const uint32_t code[] = {
		0x94000004,	/* 0x10000: bl 0x10010 */
		0xb0000001,	/* adrp x1, 0x11000 */
		0xad020000,	/* stp q0, q0, [x0, #64] */
		0x91010021,	/* add x1, x1, #0x40: 0x11040 */
		0x10000082,	/* adr x2, 0x10020: a jump table's base, not an entry */
		0xd63f0020,	/* blr x1 */
		0x90000003,	/* adrp x3, 0x10000 */
		0xaa0003e3,	/* mov x3, x0 */
		0x91000064,	/* add x4, x3, #0: x3 no longer the page */
	};
	struct entries_seen got = { .n = 0 };

	(void)state;
	assert_int_equal(jw_arch_scan_entries((const uint8_t *)code, sizeof(code), 0x10000,
					      collect_entry, &got), 0);
	assert_int_equal(got.n, 2);
	assert_int_equal(got.a[0], 0x10010);
	assert_int_equal(got.a[1], 0x11040);
}

/* A return address follows a call: bl, blr, blraa; not another instruction. */
static void test_after_call(void **state)
{
	static const uint32_t bl[] = { 0xd503201f, 0x94000010 };
	static const uint32_t blr[] = { 0x910003fd, 0xd63f0040 };
	static const uint32_t blraa[] = { 0xd73f0841 };
	static const uint32_t br[] = { 0xd61f0040 };
	static const uint32_t add[] = { 0x91000400 };

	(void)state;
	assert_true(jw_arch_after_call((const uint8_t *)bl, sizeof(bl)));
	assert_true(jw_arch_after_call((const uint8_t *)blr, sizeof(blr)));
	assert_true(jw_arch_after_call((const uint8_t *)blraa, sizeof(blraa)));
	assert_false(jw_arch_after_call((const uint8_t *)br, sizeof(br)));
	assert_false(jw_arch_after_call((const uint8_t *)add, sizeof(add)));
	assert_false(jw_arch_after_call((const uint8_t *)bl, 2));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_debian_build),
		cmocka_unit_test(test_not_understood),
		cmocka_unit_test(test_decode),
		cmocka_unit_test(test_scan_jumps),
		cmocka_unit_test(test_wait_syscalls),
		cmocka_unit_test(test_prologue_frame),
		cmocka_unit_test(test_unreached_blocks),
		cmocka_unit_test(test_after_call),
		cmocka_unit_test(test_scan_entries),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
#else
#error "tests/unit/test_arch.c: no cases for this architecture yet"
#endif
