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
	assert_int_equal(c.arg, 0);
	assert_int_equal(c.n_offsets, 2);
	assert_int_equal(c.offsets[0], 0x70);
	assert_int_equal(c.offsets[1], 0x50);
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
	assert_int_equal(c.offsets[0], 0x68);
	assert_int_equal(c.offsets[1], 0x48);
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

/* The CPython version is read from the file's name, whichever form it takes. */

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_debian_build),
		cmocka_unit_test(test_other_register),
		cmocka_unit_test(test_not_understood),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
#else
int main(void)
{
	return 77;	/* skipped: no cases for this architecture yet */
}
#endif
