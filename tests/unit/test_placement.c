// SPDX-License-Identifier: GPL-2.0-only
/* Where a uprobe on a function's entry goes: past what would be single-stepped, when safe. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "loops/placement.h"

/* Where the probe goes on @code when it reads the arguments (a preset naming the handler). */
static uint32_t skip_of(const uint8_t *code, size_t len, struct jw_placement *p)
{
	jw_probe_place(code, len, true, p);
	return p->skip;
}

/* Where it goes when no probe on the function reads them (a plain --probe, a wait function). */
static uint32_t skip_free(const uint8_t *code, size_t len, struct jw_placement *p)
{
	jw_probe_place(code, len, false, p);
	return p->skip;
}

#if defined(__x86_64__)
/* -fcf-protection: endbr64, then the frame pointer's push; or a callee-saved push. */
static void test_past_endbr64(void **state)
{
	const uint8_t fp[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x55, 0x48, 0x89, 0xe5 };
	const uint8_t r15[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x41, 0x57, 0x41, 0x56 };
	struct jw_placement p;

	(void)state;
	assert_int_equal(skip_of(fp, sizeof(fp), &p), 4);
	assert_non_null(strstr(p.why, "endbr64"));
	assert_non_null(strstr(p.why, "push %rbp"));
	assert_int_equal(skip_of(r15, sizeof(r15), &p), 4);
	assert_non_null(strstr(p.why, "push %r15"));
	assert_true(p.emulated);
}

/* An emulated first instruction: the entry. */
static void test_emulated_entry(void **state)
{
	const uint8_t push[] = { 0x55, 0x48, 0x89, 0xe5 };
	const uint8_t r12[] = { 0x41, 0x54, 0x55 };
	const uint8_t jmp[] = { 0xe9, 0x10, 0x00, 0x00, 0x00 };
	struct jw_placement p;

	(void)state;
	assert_int_equal(skip_of(push, sizeof(push), &p), 0);
	assert_non_null(strstr(p.why, "push %rbp is emulated"));
	assert_int_equal(skip_of(r12, sizeof(r12), &p), 0);
	assert_int_equal(skip_of(jmp, sizeof(jmp), &p), 0);
	assert_true(p.emulated);
}

/*
 * Register moves into scratch registers are passed; into argument registers only where no probe
 * reads them; into rsp or rbp, or to memory, never.
 */
static void test_moves(void **state)
{
	const uint8_t to_rax[] = { 0x48, 0x89, 0xf8, 0x53 };		/* mov %rdi,%rax; push %rbx */
	const uint8_t to_r10[] = { 0x49, 0x89, 0xfa, 0x41, 0x54 };	/* mov %rdi,%r10; push %r12 */
	const uint8_t to_rsi[] = { 0x48, 0x89, 0xfe, 0x53 };		/* mov %rdi,%rsi: an argument */
	const uint8_t to_rdi[] = { 0x48, 0x8b, 0xf8, 0x53 };		/* mov %rax,%rdi */
	const uint8_t to_rbp[] = { 0x48, 0x89, 0xe5, 0x53 };		/* mov %rsp,%rbp */
	const uint8_t to_r9d[] = { 0x41, 0x89, 0xc1, 0x53 };		/* mov %eax,%r9d */
	const uint8_t mem[] = { 0x48, 0x89, 0x07, 0x53 };		/* mov %rax,(%rdi) */
	struct jw_placement p;

	(void)state;
	assert_int_equal(skip_of(to_rax, sizeof(to_rax), &p), 3);
	assert_non_null(strstr(p.why, "mov %rdi,%rax"));
	assert_int_equal(skip_of(to_r10, sizeof(to_r10), &p), 3);
	assert_non_null(strstr(p.why, "push %r12"));
	assert_int_equal(skip_of(to_rsi, sizeof(to_rsi), &p), 0);
	assert_int_equal(skip_of(to_rdi, sizeof(to_rdi), &p), 0);
	assert_int_equal(skip_of(to_rbp, sizeof(to_rbp), &p), 0);
	assert_int_equal(skip_of(to_r9d, sizeof(to_r9d), &p), 0);
	assert_non_null(strstr(p.why, "mov %rax,%r9 is single-stepped; it writes an argument "
				      "register the probe reads"));
	assert_int_equal(skip_of(mem, sizeof(mem), &p), 0);

	assert_int_equal(skip_free(to_rsi, sizeof(to_rsi), &p), 3);
	assert_non_null(strstr(p.why, "past mov %rdi,%rsi to push %rbx"));
	assert_int_equal(skip_free(to_rdi, sizeof(to_rdi), &p), 3);
	assert_int_equal(skip_free(to_r9d, sizeof(to_r9d), &p), 3);
	assert_int_equal(skip_free(to_rax, sizeof(to_rax), &p), 3);
	assert_int_equal(skip_free(to_rbp, sizeof(to_rbp), &p), 0);
	assert_int_equal(skip_free(mem, sizeof(mem), &p), 0);
}

/*
 * A dispatcher without frame pointer that passes its argument on, narrowed:
 * movslq %edi,%r8; mov %r8d,%edi; call handler. Where no probe reads the arguments the probe
 * goes on the call, which the kernel emulates; where one does, it stays on the entry; and an
 * argument write after something passable stops there too.
 */
static void test_argument_writes(void **state)
{
	const uint8_t narrow[] = { 0x4c, 0x63, 0xc7, 0x44, 0x89, 0xc7, 0xe8, 0x10, 0x00, 0x00, 0x00 };
	/* endbr64; mov %rdi,%rsi; push %rbx */
	const uint8_t cet[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x48, 0x89, 0xfe, 0x53 };
	/* xor %esi,%esi; xor %edi,%edi; mov $0,%edx; call */
	const uint8_t zero[] = { 0x31, 0xf6, 0x31, 0xff, 0xba, 0x00, 0x00, 0x00, 0x00,
				 0xe8, 0x00, 0x00, 0x00, 0x00 };
	/* mov %rdi,%rsi; mov %rsp,%rbp: the frame chain stops it still */
	const uint8_t rbp[] = { 0x48, 0x89, 0xfe, 0x48, 0x89, 0xe5, 0x53 };
	struct jw_placement p;

	(void)state;
	assert_int_equal(skip_free(narrow, sizeof(narrow), &p), 6);
	assert_true(p.emulated);
	assert_non_null(strstr(p.why, "past movslq %rdi,%r8 and what follows to call"));
	assert_int_equal(skip_of(narrow, sizeof(narrow), &p), 0);
	assert_false(p.emulated);
	assert_int_equal(skip_free(cet, sizeof(cet), &p), 7);
	assert_int_equal(skip_of(cet, sizeof(cet), &p), 0);
	assert_non_null(strstr(p.why, "endbr64 is single-stepped, and mov %rdi,%rsi after it "
				      "writes an argument register the probe reads"));
	assert_int_equal(skip_free(zero, sizeof(zero), &p), 9);
	assert_int_equal(skip_of(zero, sizeof(zero), &p), 0);
	assert_int_equal(skip_free(rbp, sizeof(rbp), &p), 0);
}

/* Never past a change of rsp, nor past anything unknown; nor onto something single-stepped. */
static void test_stops(void **state)
{
	const uint8_t sub[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x48, 0x83, 0xec, 0x18, 0x55 };
	const uint8_t tls[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x64, 0x8b, 0x04, 0x25, 0x18, 0x00 };
	const uint8_t mov_first[] = { 0x48, 0x83, 0xec, 0x08, 0x55 };	/* sub $8,%rsp */
	const uint8_t short_code[] = { 0xf3, 0x0f, 0x1e };
	struct jw_placement p;

	(void)state;
	assert_int_equal(skip_of(sub, sizeof(sub), &p), 0);
	assert_non_null(strstr(p.why, "single-stepped"));
	assert_false(p.emulated);
	assert_int_equal(skip_of(tls, sizeof(tls), &p), 0);
	assert_int_equal(skip_of(mov_first, sizeof(mov_first), &p), 0);
	assert_non_null(strstr(p.why, "on the entry: sub $imm,%rsp is single-stepped"));
	assert_int_equal(skip_of(short_code, sizeof(short_code), &p), 0);
	assert_false(p.emulated);
	assert_int_equal(skip_of(NULL, 0, &p), 0);
}

/* Nops and several passable instructions in a row; at most a few. */
static void test_runs(void **state)
{
	const uint8_t nops[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x66, 0x90, 0x0f, 0x1f, 0x40, 0x00,
				 0x48, 0x89, 0xfb, 0xe8, 0, 0, 0, 0 };
	const uint8_t many[] = { 0x90, 0x90, 0x90, 0x90, 0x90, 0x55 };
	struct jw_placement p;

	(void)state;
	assert_int_equal(skip_of(nops, sizeof(nops), &p), 13);
	assert_non_null(strstr(p.why, "call"));
	assert_int_equal(skip_of(many, sizeof(many), &p), 0);
}

/* glibc's syscall wrappers: a compare of __libc_single_threaded, then the branch. */
static void test_syscall_wrappers(void **state)
{
	/* epoll_wait: cmpb $0x0,0xd26f1(%rip); mov %ecx,%r10d; je */
	const uint8_t epoll_wait[] = { 0x80, 0x3d, 0xf1, 0x26, 0x0d, 0x00, 0x00, 0x41, 0x89, 0xca,
				       0x74, 0x14, 0xb8, 0xe8, 0x00, 0x00, 0x00 };
	/* poll: cmpb $0x0,...(%rip); je */
	const uint8_t poll[] = { 0x80, 0x3d, 0xb1, 0xf3, 0x0d, 0x00, 0x00, 0x74, 0x17 };
	/* mov $0x7,%eax; syscall: nothing emulated after */
	const uint8_t raw[] = { 0xb8, 0x07, 0x00, 0x00, 0x00, 0x0f, 0x05 };
	/* xor %edi,%edi writes an argument register */
	const uint8_t xor_arg[] = { 0x31, 0xff, 0x55 };
	/* test %eax,%eax; xor %eax,%eax; push %rbx */
	const uint8_t flags[] = { 0x85, 0xc0, 0x31, 0xc0, 0x53 };
	struct jw_placement p;

	(void)state;
	assert_int_equal(skip_of(epoll_wait, sizeof(epoll_wait), &p), 10);
	assert_non_null(strstr(p.why, "jcc"));
	assert_int_equal(skip_of(poll, sizeof(poll), &p), 7);
	assert_int_equal(skip_of(raw, sizeof(raw), &p), 0);
	assert_int_equal(skip_of(xor_arg, sizeof(xor_arg), &p), 0);
	assert_int_equal(skip_of(flags, sizeof(flags), &p), 4);
}

/*
 * Shrink-wrapped entries (no frame pointer, or endbr64 first): a load and a test of the
 * argument, then the branch of an early return, before any register is saved.
 */
static void test_loads_and_compares(void **state)
{
	/* mov 0x8(%rdi),%eax; test %eax,%eax; jne; push %rbp */
	const uint8_t nofp[] = { 0x8b, 0x47, 0x08, 0x85, 0xc0, 0x75, 0x29, 0x55 };
	/* endbr64; the same */
	const uint8_t cet[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x8b, 0x47, 0x08, 0x85, 0xc0, 0x75, 0x25 };
	/* cmpl $0x0,0x8(%rdi); jne */
	const uint8_t cmp_mem[] = { 0x83, 0x7f, 0x08, 0x00, 0x75, 0x10 };
	/* cmpb $0x0,(%rdi,%rsi,1); je: a SIB byte */
	const uint8_t cmp_sib[] = { 0x80, 0x3c, 0x37, 0x00, 0x74, 0x05 };
	/* movzbl 0x10(%rdi),%eax; test %al,%al; je */
	const uint8_t movzx[] = { 0x0f, 0xb6, 0x47, 0x10, 0x84, 0xc0, 0x74, 0x03 };
	/* lea 0x8(%rdi),%rax; push %rbx */
	const uint8_t lea[] = { 0x48, 0x8d, 0x47, 0x08, 0x53 };
	/* testb $0x1,0x8(%rdi); jne */
	const uint8_t test_imm[] = { 0xf6, 0x47, 0x08, 0x01, 0x75, 0x02 };
	/* cmpw $0x0,0x8(%rdi); je: the operand-size prefix */
	const uint8_t cmpw[] = { 0x66, 0x83, 0x7f, 0x08, 0x00, 0x74, 0x02 };
	/* cmpl $0x100,0x8(%rdi); je: a 4-byte immediate */
	const uint8_t cmp_imm32[] = { 0x81, 0x7f, 0x08, 0x00, 0x01, 0x00, 0x00, 0x74, 0x02 };
	struct jw_placement p;

	(void)state;
	assert_int_equal(skip_of(nofp, sizeof(nofp), &p), 5);
	assert_non_null(strstr(p.why, "past mov mem,%rax and what follows to jcc"));
	assert_int_equal(skip_of(cet, sizeof(cet), &p), 9);
	assert_int_equal(skip_of(cmp_mem, sizeof(cmp_mem), &p), 4);
	assert_int_equal(skip_of(cmp_sib, sizeof(cmp_sib), &p), 4);
	assert_int_equal(skip_of(movzx, sizeof(movzx), &p), 6);
	assert_int_equal(skip_of(lea, sizeof(lea), &p), 4);
	assert_int_equal(skip_of(test_imm, sizeof(test_imm), &p), 4);
	assert_int_equal(skip_of(cmpw, sizeof(cmpw), &p), 5);
	assert_int_equal(skip_of(cmp_imm32, sizeof(cmp_imm32), &p), 7);
}

/* Loads into what the probe reads, writes to memory, other arithmetic, loops, cut code. */
/*
 * A return site (GLib's, after a source's dispatch): stores and register moves are passed to the
 * jmp, which an entry probe may not pass; a change of the stack pointer stops both.
 */
static void test_return_site(void **state)
{
	const uint8_t glib[] = {
		0x48, 0x8b, 0x0c, 0x24,		/* mov (%rsp),%rcx */
		0x83, 0x6d, 0x00, 0x01,		/* subl $0x1,0x0(%rbp) */
		0x41, 0x89, 0xc6,		/* mov %eax,%r14d */
		0x48, 0x89, 0x4d, 0x08,		/* mov %rcx,0x8(%rbp) */
		0xe9, 0xdf, 0xfe, 0xff, 0xff,	/* jmp */
	};
	const uint8_t pop[] = {
		0x48, 0x89, 0x4d, 0x08,		/* mov %rcx,0x8(%rbp) */
		0x48, 0x83, 0xc4, 0x08,		/* add $0x8,%rsp */
		0xeb, 0x10,			/* jmp */
	};
	struct jw_placement p;

	(void)state;
	jw_probe_place_return(glib, sizeof(glib), &p);
	assert_int_equal(p.skip, 15);
	assert_true(p.emulated);
	assert_int_equal(skip_free(glib, sizeof(glib), &p), 0);
	assert_non_null(strstr(p.why, "single-stepped"));
	jw_probe_place_return(pop, sizeof(pop), &p);
	assert_int_equal(p.skip, 0);
	assert_false(p.emulated);
}

static void test_loads_that_stop(void **state)
{
	/* mov 0x8(%rdi),%rdi: an argument register */
	const uint8_t to_arg[] = { 0x48, 0x8b, 0x7f, 0x08, 0x55 };
	/* mov 0x8(%rdi),%rbp: the frame chain */
	const uint8_t to_rbp[] = { 0x48, 0x8b, 0x6f, 0x08, 0x55 };
	/* mov %rax,0x8(%rdi): a store */
	const uint8_t store[] = { 0x48, 0x89, 0x47, 0x08, 0x55 };
	/* addl $0x1,0x8(%rdi): 83 /0 writes memory */
	const uint8_t add_mem[] = { 0x83, 0x47, 0x08, 0x01, 0x55 };
	/* xor %eax,(%rdi): writes memory */
	const uint8_t xor_mem[] = { 0x31, 0x07, 0x55 };
	/* test %eax,%eax; jne back to the entry: the probe would be hit again */
	const uint8_t loop[] = { 0x85, 0xc0, 0x75, 0xfc };
	/* mov 0x8(%rdi),%eax; test; jne forward to the same place: fine */
	const uint8_t forward[] = { 0x8b, 0x47, 0x08, 0x85, 0xc0, 0x75, 0x00 };
	/* a load whose displacement is cut */
	const uint8_t cut[] = { 0x8b, 0x87, 0x08, 0x00 };
	/* a SIB byte cut */
	const uint8_t cut_sib[] = { 0x80, 0x3c };
	struct jw_placement p;

	(void)state;
	assert_int_equal(skip_of(to_arg, sizeof(to_arg), &p), 0);
	assert_non_null(strstr(p.why, "mov mem,%rdi is single-stepped"));
	assert_int_equal(skip_of(to_rbp, sizeof(to_rbp), &p), 0);
	assert_int_equal(skip_of(store, sizeof(store), &p), 0);
	assert_int_equal(skip_of(add_mem, sizeof(add_mem), &p), 0);
	assert_int_equal(skip_of(xor_mem, sizeof(xor_mem), &p), 0);
	assert_int_equal(skip_of(loop, sizeof(loop), &p), 0);
	assert_non_null(strstr(p.why, "jumps back"));
	assert_int_equal(skip_of(forward, sizeof(forward), &p), 5);
	assert_int_equal(skip_of(cut, sizeof(cut), &p), 0);
	assert_int_equal(skip_of(cut_sib, sizeof(cut_sib), &p), 0);
}

#elif defined(__aarch64__)
static uint32_t skip_of_words(const uint32_t *words, size_t n, struct jw_placement *p)
{
	return skip_of((const uint8_t *)words, n * sizeof(*words), p);
}

/* A branch at the entry is simulated: the probe stays. */
static void test_emulated_entry(void **state)
{
	static const uint32_t b[] = { 0x14000002, 0xd65f03c0 };
	struct jw_placement p;

	(void)state;
	assert_int_equal(skip_of_words(b, 2, &p), 0);
	assert_true(p.emulated);
}

/* bti and nop are passed to a simulated instruction after them, never past a loop back. */
static void test_past_bti(void **state)
{
	static const uint32_t to_adrp[] = { 0xd503245f, 0xd503201f, 0x90000d00, 0xd65f03c0 };
	static const uint32_t loop[] = { 0xd503245f, 0x17ffffff };
	struct jw_placement p;

	(void)state;
	assert_int_equal(skip_of_words(to_adrp, 4, &p), 8);
	assert_true(p.emulated);
	/* Whether the arguments are read or not: nop and bti write no register. */
	assert_int_equal(skip_free((const uint8_t *)to_adrp, sizeof(to_adrp), &p), 8);
	assert_int_equal(skip_of_words(loop, 2, &p), 0);
	assert_non_null(strstr(p.why, "jumps back"));
}

/*
 * Debian's prologues (stp x29, x30 or sub sp) are single-stepped, and paciasp is never passed:
 * the function would authenticate the trampoline's address in the link register.
 */
static void test_stops(void **state)
{
	static const uint32_t stp[] = { 0xa9bf7bfd, 0x910003fd };
	static const uint32_t pac[] = { 0xd503233f, 0x14000002 };
	struct jw_placement p;

	(void)state;
	assert_int_equal(skip_of_words(stp, 2, &p), 0);
	assert_false(p.emulated);
	assert_int_equal(skip_of_words(pac, 2, &p), 0);
	assert_false(p.emulated);
	assert_non_null(strstr(p.why, "paciasp"));
}
#endif

static void test_file(void **state)
{
	struct jw_placement p;

	(void)state;
	assert_int_equal(jw_probe_place_file("/nonexistent/jw", 0, false, &p), -ENOENT);
	assert_int_equal(p.skip, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#if defined(__x86_64__)
		cmocka_unit_test(test_past_endbr64),
		cmocka_unit_test(test_emulated_entry),
		cmocka_unit_test(test_moves),
		cmocka_unit_test(test_argument_writes),
		cmocka_unit_test(test_stops),
		cmocka_unit_test(test_runs),
		cmocka_unit_test(test_syscall_wrappers),
		cmocka_unit_test(test_loads_and_compares),
		cmocka_unit_test(test_loads_that_stop),
		cmocka_unit_test(test_return_site),
#elif defined(__aarch64__)
		cmocka_unit_test(test_emulated_entry),
		cmocka_unit_test(test_past_bti),
		cmocka_unit_test(test_stops),
#endif
		cmocka_unit_test(test_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
