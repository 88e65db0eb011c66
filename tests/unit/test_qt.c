// SPDX-License-Identifier: GPL-2.0-only
/*
 * The qt preset's pure parts: the slot object calls found in Qt's code (held to the bytes of
 * Debian 12's libQt5Core, QMetaObject::activate's slot call and the release after it), the
 * return site moved past the locked instruction a uprobe cannot sit on, and QEvent's type names.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "arch/arch.h"
#include "self_memory.h"
#include "loops/preset_qt.h"
#include "report/qtnames.h"

#if defined(__x86_64__)
/*
 * libQt5Core.so.5.15.8 at 0x2e87d0, doActivate<false>:
 *   mov -0x84(%rbp),%esi; mov 0x38(%rbx),%rdx; movq $0,-0x58(%rbp); mov %r12,-0x50(%rbp);
 *   mov %esi,-0x48(%rbp); test $0x40,%al; je ...; lock addl $1,(%rdx); xor %r8d,%r8d;
 *   mov $1,%edi; mov 0x38(%rbx),%r14; mov -0x80(%rbp),%rcx; mov -0x78(%rbp),%rdx;
 *   mov %r14,%rsi; call *0x8(%r14)              <- m_impl(Call, slotObj, receiver, args, 0)
 *   lock subl $1,(%r14); jne ...;              <- its return site, then the instruction after
 *   xor %r8d,%r8d; xor %ecx,%ecx; xor %edx,%edx; mov %r14,%rsi; xor %edi,%edi;
 *   call *0x8(%r14)                             <- m_impl(Destroy, ...): no slot
 */
static const uint8_t do_activate[] = {
	0x8b, 0xb5, 0x7c, 0xff, 0xff, 0xff, 0x48, 0x8b, 0x53, 0x38, 0x48, 0xc7, 0x45, 0xa8, 0x00,
	0x00, 0x00, 0x00, 0x4c, 0x89, 0x65, 0xb0, 0x89, 0x75, 0xb8, 0xa8, 0x40, 0x0f, 0x84, 0xb3,
	0xfc, 0xff, 0xff, 0xf0, 0x83, 0x02, 0x01, 0x45, 0x31, 0xc0, 0xbf, 0x01, 0x00, 0x00, 0x00,
	0x4c, 0x8b, 0x73, 0x38, 0x48, 0x8b, 0x4d, 0x80, 0x48, 0x8b, 0x55, 0x88, 0x4c, 0x89, 0xf6,
	0x41, 0xff, 0x56, 0x08, 0xf0, 0x41, 0x83, 0x2e, 0x01, 0x0f, 0x85, 0x15, 0xfd, 0xff, 0xff,
	0x45, 0x31, 0xc0, 0x31, 0xc9, 0x31, 0xd2, 0x4c, 0x89, 0xf6, 0x31, 0xff, 0x41, 0xff, 0x56,
	0x08,
};

#define CALL_AT 0x3c	/* the slot call, from the bytes' start */

static void test_slot_calls(void **state)
{
	struct jw_preset_probe site[4];
	size_t n;

	(void)state;
	n = jw_qt_slot_calls(do_activate, sizeof(do_activate), 0x2e87d0, site, 4);
	/* The Destroy call (edi 0) is no slot call. */
	assert_int_equal(n, 1);
	assert_int_equal(site[0].offset, 0x2e87d0 + CALL_AT);
	/* The return site is "lock subl" (5 bytes), refused by uprobes: the exit is the jne after. */
	assert_int_equal(site[0].exit_offset, 0x2e87d0 + CALL_AT + 4 + 5);
	assert_true(site[0].exact && site[0].name_arg);
	/* r14 (DWARF 14): the impl at 8 names it, the slot's function at 16 with it */
	assert_int_equal(site[0].chain.handler.reg, 14);
	assert_int_equal(site[0].chain.handler.n_offsets, 1);
	assert_int_equal(site[0].chain.handler.offsets[0], JW_QT_SLOT_IMPL);
	assert_int_equal(site[0].chain.detail.reg, 14);
	assert_int_equal(site[0].chain.detail.offsets[0], JW_QT_SLOT_FUNC);
	/* the receiver: the third argument (rdx, DWARF 1), its vtable */
	assert_int_equal(site[0].chain.klass.reg, 1);
	assert_int_equal(site[0].chain.klass.n_offsets, 1);
	assert_int_equal(site[0].chain.klass.offsets[0], 0);
	assert_int_equal(site[0].chain.flags, JW_CHAIN_CLASS | JW_CHAIN_DETAIL | JW_CHAIN_FIRST);
	assert_true(site[0].callee & JW_COOKIE_CALLEE);
	/* Room for none: none taken. */
	assert_int_equal(jw_qt_slot_calls(do_activate, sizeof(do_activate), 0, site, 0), 0);
}

/* Another register than the slot object as the second argument: no slot call. */
static void test_slot_calls_need_the_object(void **state)
{
	uint8_t code[sizeof(do_activate)];
	struct jw_preset_probe site[2];

	(void)state;
	memcpy(code, do_activate, sizeof(code));
	code[CALL_AT - 2] = 0xfe;	/* mov %r15,%rsi instead of %r14 */
	assert_int_equal(jw_qt_slot_calls(code, sizeof(code), 0, site, 2), 0);
	memcpy(code, do_activate, sizeof(code));
	code[0x29] = 0x02;		/* mov $2,%edi: not Call */
	assert_int_equal(jw_qt_slot_calls(code, sizeof(code), 0, site, 2), 0);
}

/*
 * libQt5Core.so.5.15.8's QMetaCallEvent::placeMetaCall(QObject *): push %r12; push %rbp;
 * mov %rsi,%rbp; push %rbx; mov 0x28(%rdi),%rsi; mov %rdi,%rbx; test %rsi,%rsi; je; pop %rbx;
 * mov 0x30(%rdi),%rcx; mov %rbp,%rdx; xor %r8d,%r8d; pop %rbp; mov 0x8(%rsi),%rax;
 * mov $1,%edi; pop %r12; jmp *%rax: the slot object at 0x28.
 */
static const uint8_t place_meta_call[] = {
	0x41, 0x54, 0x55, 0x48, 0x89, 0xf5, 0x53, 0x48, 0x8b, 0x77, 0x28, 0x48, 0x89, 0xfb, 0x48,
	0x85, 0xf6, 0x74, 0x1d, 0x5b, 0x48, 0x8b, 0x4f, 0x30, 0x48, 0x89, 0xea, 0x45, 0x31, 0xc0,
	0x5d, 0x48, 0x8b, 0x46, 0x08, 0xbf, 0x01, 0x00, 0x00, 0x00, 0x41, 0x5c, 0xff, 0xe0,
};

static void test_member_call(void **state)
{
	uint8_t code[sizeof(place_meta_call)];
	int32_t field = -1;

	(void)state;
	assert_int_equal(jw_arch_derive_member_call(place_meta_call, sizeof(place_meta_call),
						    JW_QT_SLOT_IMPL, &field), 0);
	assert_int_equal(field, 0x28);
	/* Through another field of it than the ImplFn: not the pattern. */
	assert_int_equal(jw_arch_derive_member_call(place_meta_call, sizeof(place_meta_call), 0x10,
						    &field), -ENOENT);
	/* %rsi overwritten between the two loads (mov %rbp,%rsi instead of %rbp,%rdx). */
	memcpy(code, place_meta_call, sizeof(code));
	code[26] = 0xee;
	assert_int_equal(jw_arch_derive_member_call(code, sizeof(code), JW_QT_SLOT_IMPL, &field),
			 -ENOENT);
}

static void test_unprobeable(void **state)
{
	static const uint8_t lock_sub[] = { 0xf0, 0x41, 0x83, 0x2e, 0x01 };
	static const uint8_t data16_lock[] = { 0x66, 0xf0, 0x0f, 0xb1, 0x0a };
	static const uint8_t mov[] = { 0x4c, 0x89, 0xf6 };
	static const uint8_t fs_load[] = { 0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0x00, 0x00, 0x00 };

	(void)state;
	assert_true(jw_arch_unprobeable(lock_sub, sizeof(lock_sub)));
	assert_true(jw_arch_unprobeable(data16_lock, sizeof(data16_lock)));
	assert_false(jw_arch_unprobeable(mov, sizeof(mov)));
	assert_false(jw_arch_unprobeable(fs_load, sizeof(fs_load)));
}
#endif

#if defined(__aarch64__)
/*
 * The same calls in Debian 12's arm64 libQt5Core.so.5.15.8: doActivate's slot call at 0x2f5e78,
 *   mov w0, #1; bl <atomic add>; ldr x21, [x19, #56]; mov x2, x20; mov x3, x23; mov x4, #0;
 *   mov x1, x21; mov w0, #1; ldr x5, [x21, #8]; blr x5; mov x1, x21
 * and placeMetaCall at 0x2e5950 (its slot object at 40, jumped to through x16).
 */
static const uint32_t do_activate[] = {
	0x52800020, 0x9402d9e1, 0xf9401e75, 0xaa1403e2, 0xaa1703e3, 0xd2800004, 0xaa1503e1,
	0x52800020, 0xf94006a5, 0xd63f00a0, 0xaa1503e1,
};
static const uint32_t place_meta_call[] = {
	0xa9bd7bfd, 0x910003fd, 0xa90153f3, 0xaa0103f4, 0xaa0003f3, 0xf9401401, 0xb4000141,
	0xf9401a63, 0xaa1403e2, 0xa94153f3, 0xd2800004, 0xa8c37bfd, 0x52800020, 0xf9400425,
	0xaa0503f0, 0xd61f0200,
};

static void test_slot_calls(void **state)
{
	uint32_t code[sizeof(do_activate) / 4];
	struct jw_preset_probe site[2];
	int32_t field = -1;

	(void)state;
	memcpy(code, do_activate, sizeof(code));
	assert_int_equal(jw_qt_slot_calls((const uint8_t *)code, sizeof(code), 0x2f5e78, site, 2),
			 1);
	assert_int_equal(site[0].offset, 0x2f5e78 + 9 * 4);
	assert_int_equal(site[0].exit_offset, 0x2f5e78 + 10 * 4);
	/* x21: the slot object the ImplFn was loaded from; x2 the receiver */
	assert_int_equal(site[0].chain.handler.reg, 21);
	assert_int_equal(site[0].chain.handler.offsets[0], JW_QT_SLOT_IMPL);
	assert_int_equal(site[0].chain.detail.offsets[0], JW_QT_SLOT_FUNC);
	assert_int_equal(site[0].chain.klass.reg, 2);
	/* x21 changed between the load and the call: where the callee came from is not known. */
	memcpy(code + 5, (const uint32_t[]){ 0x52800020, 0xaa1503e1, 0xf94006a5, 0xaa1303f5 }, 16);
	assert_int_equal(jw_qt_slot_calls((const uint8_t *)code, sizeof(code), 0, site, 2), 0);
	/* The same without that last move: found again. */
	code[8] = 0xaa1303f6;		/* mov x22, x19 */
	assert_int_equal(jw_qt_slot_calls((const uint8_t *)code, sizeof(code), 0, site, 2), 1);
	assert_int_equal(jw_arch_derive_member_call((const uint8_t *)place_meta_call,
						    sizeof(place_meta_call), JW_QT_SLOT_IMPL,
						    &field), 0);
	assert_int_equal(field, 40);
}
#endif


/* A class's vtable as the Itanium C++ ABI lays it out, read back from this process's memory. */
static void test_class_names(void **state)
{
	static const char plain[] = "7Catalog", nested[] = "N2ns7CatalogE", local[] = "*6Hidden";
	static const char garbage[] = "not a type";
	const void *ti[2] = { NULL, plain };
	const void *vtable[3] = { NULL, ti, NULL };	/* offset to top, type info, functions */
	char buf[64];

	(void)state;
	if (!reads_itself())
		skip();
	assert_true(jw_qt_class_name(getpid(), (uintptr_t)&vtable[2], buf, sizeof(buf)));
	assert_string_equal(buf, "Catalog");
	ti[1] = nested;
	assert_true(jw_qt_class_name(getpid(), (uintptr_t)&vtable[2], buf, sizeof(buf)));
	assert_string_equal(buf, "ns::Catalog");
	ti[1] = local;
	assert_true(jw_qt_class_name(getpid(), (uintptr_t)&vtable[2], buf, sizeof(buf)));
	assert_string_equal(buf, "Hidden");
	/* no name, never a wrong one */
	ti[1] = garbage;
	assert_false(jw_qt_class_name(getpid(), (uintptr_t)&vtable[2], buf, sizeof(buf)));
	ti[1] = NULL;
	assert_false(jw_qt_class_name(getpid(), (uintptr_t)&vtable[2], buf, sizeof(buf)));
	assert_false(jw_qt_class_name(getpid(), 0, buf, sizeof(buf)));
}

static void test_event_names(void **state)
{
	char buf[64];

	(void)state;
	assert_string_equal(jw_qt_event_name(1, buf, sizeof(buf)), "QEvent::Timer");
	assert_string_equal(jw_qt_event_name(2, buf, sizeof(buf)), "QEvent::MouseButtonPress");
	assert_string_equal(jw_qt_event_name(43, buf, sizeof(buf)), "QEvent::MetaCall");
	assert_string_equal(jw_qt_event_name(68, buf, sizeof(buf)), "QEvent::ChildAdded");
	assert_string_equal(jw_qt_event_name(1000, buf, sizeof(buf)), "QEvent::User");
	assert_string_equal(jw_qt_event_name(1005, buf, sizeof(buf)), "QEvent::User+5");
	/* A value Qt gives no name: the number, never a neighbour's name. */
	assert_string_equal(jw_qt_event_name(999, buf, sizeof(buf)), "QEvent(999)");
	assert_string_equal(jw_qt_event_name(0, buf, sizeof(buf)), "QEvent(0)");
	assert_string_equal(jw_qt_event_name(70000, buf, sizeof(buf)), "QEvent(70000)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#if defined(__x86_64__)
		cmocka_unit_test(test_slot_calls),
		cmocka_unit_test(test_slot_calls_need_the_object),
		cmocka_unit_test(test_member_call),
		cmocka_unit_test(test_unprobeable),
#elif defined(__aarch64__)
		cmocka_unit_test(test_slot_calls),
#endif
		cmocka_unit_test(test_event_names),
		cmocka_unit_test(test_class_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
