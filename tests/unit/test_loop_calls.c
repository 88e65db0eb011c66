// SPDX-License-Identifier: GPL-2.0-only
/*
 * What the libev, sd-event, PipeWire and GTK presets find their handler sites by
 * (loops/preset_ev.c, preset_sdevent.c, preset_pipewire.c, preset_gtk.c), held to the bytes of
 * Debian 12's libev.so.4, libsystemd.so.0, libspa-support.so and libgtk-4.so.1 on both
 * architectures: a call's function read through an object's field (via_reg, via_disp), what the
 * argument registers hold at it, the field a getter loads first, a tail call through an
 * argument's field, a signal emitted by a fixed id; and libev's event masks.
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
#include "loops/preset_ev.h"
#include "loops/preset_pipewire.h"
#include "report/loopnames.h"

/* The last indirect call jw_arch_scan_calls() saw. */
static int last_call(const struct jw_arch_call *call, void *ctx)
{
	if (call->indirect)
		*(struct jw_arch_call *)ctx = *call;
	return 0;
}

static struct jw_arch_call scan(const void *code, size_t len)
{
	struct jw_arch_call c;

	memset(&c, 0, sizeof(c));
	c.via_reg = -2;
	jw_arch_scan_calls(code, len, last_call, &c);
	return c;
}

#if defined(__x86_64__)
/*
 * libev 4.33, ev_invoke_pending at 0x5608: ... mov (%rax),%rcx; mov 0x8(%rax),%edx;
 * movl $0,0x4(%rcx); mov %rcx,%rsi; call *0x18(%rcx): w->cb(loop, w, revents)
 */
static const uint8_t ev_invoke[] = {
	0x83, 0xe8, 0x01, 0x48, 0x8b, 0x54, 0xcb, 0x30, 0x48, 0x89, 0xdf, 0x89, 0x44, 0x8b, 0x6c,
	0x48, 0x98, 0x48, 0xc1, 0xe0, 0x04, 0x48, 0x01, 0xd0, 0x48, 0x8b, 0x08, 0x8b, 0x50, 0x08,
	0xc7, 0x41, 0x04, 0x00, 0x00, 0x00, 0x00, 0x48, 0x89, 0xce, 0xff, 0x51, 0x18,
};
/* systemd 252's source_dispatch at 0x78940: mov 0x10(%rbx),%rsi; mov %rbx,%rdi; call *0x90(%rbx) */
static const uint8_t sd_dispatch[] = {
	0x48, 0x8b, 0x73, 0x10, 0x48, 0x89, 0xdf, 0xff, 0x93, 0x90, 0x00, 0x00, 0x00,
};
/* sd_event_source_get_description: sub $8,%rsp; test %rdi,%rdi; je; test %rsi,%rsi; je;
 * mov 0x20(%rdi),%rax */
static const uint8_t get_description[] = {
	0x48, 0x83, 0xec, 0x08, 0x48, 0x85, 0xff, 0x74, 0x1f, 0x48, 0x85, 0xf6, 0x74, 0x42, 0x48,
	0x8b, 0x47, 0x20, 0x48, 0x85, 0xc0, 0x74, 0x5a, 0x48, 0x89, 0x06,
};
/*
 * PipeWire 0.3.65's libspa-support.so: loop_iterate's "mov %rax,%rdi; call *0x8(%rax)"
 * (source->func(source)); source_timer_func's "mov 0x10(%rbx),%rdi; mov (%rsp),%esi;
 * call *0x48(%rbx)" (the callback, its data the first argument); source_io_func at 0x6280:
 * "mov 0x10(%rdi),%rcx; mov 0x20(%rdi),%edx; mov 0x18(%rdi),%esi; mov 0x48(%rdi),%rax;
 * mov %rcx,%rdi; jmp *%rax"
 */
static const uint8_t pw_iterate[] = { 0x48, 0x89, 0xc7, 0xff, 0x50, 0x08 };
static const uint8_t pw_timer[] = { 0x48, 0x8b, 0x7b, 0x10, 0x8b, 0x34, 0x24, 0xff, 0x53, 0x48 };
static const uint8_t pw_io[] = {
	0x48, 0x8b, 0x4f, 0x10, 0x8b, 0x57, 0x20, 0x8b, 0x77, 0x18, 0x48, 0x8b, 0x47, 0x48, 0x48,
	0x89, 0xcf, 0xff, 0xe0,
};
/* the same with the callback's register changed before the jump: no tail call through a field */
static const uint8_t pw_io_clobbered[] = {
	0x48, 0x8b, 0x47, 0x48, 0x48, 0x89, 0xc8, 0xff, 0xe0,
};
/*
 * GTK 4.8's libgtk-4.so.1: the frame clock's before-paint emitter at 0x478bf0,
 * "mov 0x3d928e(%rip),%esi; xor %edx,%edx; xor %eax,%eax; jmp g_signal_emit@plt" (0xa9d20), its
 * id at 0x851e84; the layout emitter's end from 0x478cbe: "call clock_gettime@plt;
 * mov 0x3d91c3(%rip),%esi; xor %edx,%edx; mov %rbx,%rdi; imul ...; add ...; mov %rax,%rbp;
 * xor %eax,%eax; call g_signal_emit@plt", its id at 0x851e8c
 */
static const uint8_t gtk_before_paint[] = {
	0x8b, 0x35, 0x8e, 0x92, 0x3d, 0x00, 0x31, 0xd2, 0x31, 0xc0, 0xe9, 0x21, 0x11, 0xc3, 0xff,
};
static const uint8_t gtk_layout[] = {
	0xe8, 0x2d, 0x24, 0xc3, 0xff, 0x8b, 0x35, 0xc3, 0x91, 0x3d, 0x00, 0x31, 0xd2, 0x48,
	0x89, 0xdf, 0x48, 0x69, 0x04, 0x24, 0x00, 0xca, 0x9a, 0x3b, 0x48, 0x03, 0x44, 0x24,
	0x08, 0x48, 0x89, 0xc5, 0x31, 0xc0, 0xe8, 0x3b, 0x10, 0xc3, 0xff,
};
/* before-paint's with "xor %esi,%esi" for the xor of %edx: the id no longer the argument */
static const uint8_t gtk_clobbered[] = {
	0x8b, 0x35, 0x8e, 0x92, 0x3d, 0x00, 0x31, 0xf6, 0x31, 0xc0, 0xe9, 0x21, 0x11, 0xc3, 0xff,
};
#define GTK_BEFORE_PAINT 0x478bf0
#define GTK_BEFORE_PAINT_ID 0x851e84
#define GTK_LAYOUT_AT 0x478cbe
#define GTK_LAYOUT_ID 0x851e8c
#define GTK_EMIT_STUB 0xa9d20
#define PW_SRC 0	/* rax */
#define PW_TIMER 3	/* rbx */
#define EV_W 2		/* rcx */
#define SD_S 3		/* rbx */
#elif defined(__aarch64__)
/* ev_invoke_pending at 0x4930: ldr x1, [x4, x3]; ldr w2, [x2, #8]; ldr x3, [x1, #24]; ...; blr x3 */
static const uint32_t ev_invoke[] = {
	0x8b000a62, 0xaa1303e0, 0x937c7c23, 0xf8647a64, 0xb9006c41, 0x8b030082, 0xf8636881,
	0xb9400842, 0xf9400c23, 0xb900043f, 0xd63f0060,
};
/* source_dispatch at 0x7acb8: ldp x3, x1, [x19, #144]; mov x0, x19; ldr x2, [x19, #16]; blr x3 */
static const uint32_t sd_dispatch[] = { 0xa9490663, 0xaa1303e0, 0xf9400a62, 0xd63f0060 };
/* stp x29, x30, [sp, #-16]!; mov x29, sp; cbz x0; cbz x1; ldr x2, [x0, #32] */
static const uint32_t get_description[] = {
	0xa9bf7bfd, 0x910003fd, 0xb4000100, 0xb4000241, 0xf9401002, 0xb4000362,
};
/*
 * loop_iterate at 0x8760: "ldr w1, [x0, #32]; cbz w1; ldr x1, [x0, #8]; blr x1";
 * source_timer_func at 0x5d9c: "ldr x0, [x19, #16]; ldr x2, [x19, #72]; ldr w1, [sp, #80];
 * blr x2"; source_io_func at 0x5b40: "mov x3, x0; ldr w1, [x0, #24]; ldr w2, [x0, #32];
 * ldr x0, [x0, #16]; ldr x3, [x3, #72]; mov x16, x3; br x16"
 */
static const uint32_t pw_iterate[] = { 0xb9402001, 0x34000061, 0xf9400401, 0xd63f0020 };
static const uint32_t pw_timer[] = { 0xf9400a60, 0xf9402662, 0xb94053e1, 0xd63f0040 };
static const uint32_t pw_io[] = {
	0xaa0003e3, 0xb9401801, 0xb9402002, 0xf9400800, 0xf9402463, 0xaa0303f0, 0xd61f0200,
};
/* "ldr x3, [x0, #72]; mov x3, x1; br x3": the register changed before the jump */
static const uint32_t pw_io_clobbered[] = { 0xf9402403, 0xaa0103e3, 0xd61f0060 };
/*
 * GTK 4.8's before-paint emitter at 0x4a5e80: "adrp x1, 0x87b000; mov w2, #0;
 * ldr w1, [x1, #948]; b g_signal_emit@plt" (0xadab0), its id at 0x87b3b4
 */
static const uint32_t gtk_before_paint[] = { 0xd0001ea1, 0x52800002, 0xb943b421, 0x17f01f09 };
/* the same with "mov w1, #0" for "mov w2, #0" after the load */
static const uint32_t gtk_clobbered[] = { 0xd0001ea1, 0xb943b421, 0x52800001, 0x17f01f09 };
#define GTK_BEFORE_PAINT 0x4a5e80
#define GTK_BEFORE_PAINT_ID 0x87b3b4
#define GTK_EMIT_STUB 0xadab0
#define PW_SRC 0	/* x0 */
#define PW_TIMER 19	/* x19 */
#define EV_W 1		/* x1 */
#define SD_S 19		/* x19 */
#endif

#if defined(__x86_64__) || defined(__aarch64__)
static void test_ev_site(void **state)
{
	struct jw_arch_call c = scan(ev_invoke, sizeof(ev_invoke));

	(void)state;
	assert_int_equal(c.via_reg, EV_W);
	assert_int_equal(c.via_disp, JW_EV_WATCHER_CB);
	/* the watcher is the second argument: a copy of it, or that register itself */
	assert_true(c.arg_copy[1] == EV_W || jw_arch_arg_reg(1) == EV_W);
}

static void test_sdevent_site(void **state)
{
	struct jw_arch_call c = scan(sd_dispatch, sizeof(sd_dispatch));
	int32_t field = -1;

	(void)state;
	assert_int_equal(c.via_reg, SD_S);
	assert_int_equal(c.via_disp, 0x90);
	assert_int_equal(c.arg_copy[0], SD_S);
	assert_int_equal(jw_arch_first_field_load((const uint8_t *)get_description,
						  sizeof(get_description), &field),
			 0);
	assert_int_equal(field, 0x20);
}

static void test_pipewire_sites(void **state)
{
	struct jw_arch_call c = scan(pw_iterate, sizeof(pw_iterate));
	int32_t field = -1;

	(void)state;
	/* the loop's call: through the source's func, the source its first argument */
	assert_int_equal(c.via_reg, PW_SRC);
	assert_int_equal(c.via_disp, JW_PW_SOURCE_FUNC);
	assert_true(c.arg_copy[0] == PW_SRC || jw_arch_arg_reg(0) == PW_SRC);
	/* a wrapper's call of the program's callback, at the field its jumping siblings read */
	c = scan(pw_timer, sizeof(pw_timer));
	assert_int_equal(c.via_reg, PW_TIMER);
	assert_int_equal(c.via_disp, 0x48);
	assert_int_equal(jw_arch_tail_call_field((const uint8_t *)pw_io, sizeof(pw_io), &field), 0);
	assert_int_equal(field, 0x48);
	/* not a tail call through the argument's field: a call, or the register changed */
	assert_int_equal(jw_arch_tail_call_field((const uint8_t *)pw_io_clobbered,
						 sizeof(pw_io_clobbered), &field),
			 -ENOENT);
	assert_int_equal(jw_arch_tail_call_field((const uint8_t *)pw_timer, sizeof(pw_timer),
						 &field),
			 -ENOENT);
}
#endif

#if defined(__x86_64__) || defined(__aarch64__)
/* The GTK preset's frame clock phases: a function emitting a signal by an id from a table. */
static void test_gtk_emitters(void **state)
{
	uint64_t slot = 0;

	(void)state;
	assert_int_equal(jw_arch_signal_emitter((const uint8_t *)gtk_before_paint,
						sizeof(gtk_before_paint), GTK_BEFORE_PAINT,
						GTK_EMIT_STUB, &slot),
			 0);
	assert_int_equal(slot, GTK_BEFORE_PAINT_ID);
	/* another function than g_signal_emit, or the id's register written before the call */
	assert_int_equal(jw_arch_signal_emitter((const uint8_t *)gtk_before_paint,
						sizeof(gtk_before_paint), GTK_BEFORE_PAINT,
						GTK_EMIT_STUB + 16, &slot),
			 -ENOENT);
	assert_int_equal(jw_arch_signal_emitter((const uint8_t *)gtk_clobbered, sizeof(gtk_clobbered),
						GTK_BEFORE_PAINT, GTK_EMIT_STUB, &slot),
			 -ENOENT);
#if defined(__x86_64__)
	/* loaded after another call, which clobbers the argument registers before it */
	assert_int_equal(jw_arch_signal_emitter(gtk_layout, sizeof(gtk_layout), GTK_LAYOUT_AT,
						GTK_EMIT_STUB, &slot),
			 0);
	assert_int_equal(slot, GTK_LAYOUT_ID);
#endif
}
#endif

/* A Wayland interface as wayland-util.h lays it out, read back from this process's memory. */
struct fake_message {
	const char *name;
	const char *signature;
	const void *types;
};
struct fake_interface {
	const char *name;
	int32_t version;
	int32_t method_count;
	const struct fake_message *methods;
	int32_t event_count;
	const struct fake_message *events;
};


static void handler_a(void) {}
static void handler_b(void) {}

static void test_wl_names(void **state)
{
	static const struct fake_message methods[] = {
		{ "destroy", "", NULL }, { "attach", "?oii", NULL }, { "commit", "", NULL },
	};
	static const struct fake_interface iface = { "wl_surface", 4, 3, methods, 0, NULL };
	void (*impl[3])(void) = { handler_b, NULL, handler_a };
	char buf[64];

	(void)state;
	if (!reads_itself())
		skip();
	assert_true(jw_wl_interface_name(getpid(), (uintptr_t)&iface, buf, sizeof(buf)));
	assert_string_equal(buf, "wl_surface");
	assert_true(jw_wl_request_name(getpid(), (uintptr_t)&iface, (uintptr_t)impl,
				       (uintptr_t)handler_a, buf, sizeof(buf)));
	assert_string_equal(buf, "wl_surface.commit");
	assert_true(jw_wl_request_name(getpid(), (uintptr_t)&iface, (uintptr_t)impl,
				       (uintptr_t)handler_b, buf, sizeof(buf)));
	assert_string_equal(buf, "wl_surface.destroy");
	/* a function the implementation does not hold, no implementation, no interface */
	assert_false(jw_wl_request_name(getpid(), (uintptr_t)&iface, (uintptr_t)impl,
					(uintptr_t)test_wl_names, buf, sizeof(buf)));
	assert_false(jw_wl_request_name(getpid(), (uintptr_t)&iface, 0, (uintptr_t)handler_a, buf,
					sizeof(buf)));
	assert_false(jw_wl_interface_name(getpid(), 0, buf, sizeof(buf)));
}

static void test_ev_masks(void **state)
{
	char buf[128];

	(void)state;
	assert_string_equal(jw_ev_mask_name(0x01, buf, sizeof(buf)), "EV_READ");
	assert_string_equal(jw_ev_mask_name(0x03, buf, sizeof(buf)), "EV_READ|EV_WRITE");
	assert_string_equal(jw_ev_mask_name(0x100, buf, sizeof(buf)), "EV_TIMER");
	assert_string_equal(jw_ev_mask_name(0x80000100u, buf, sizeof(buf)), "EV_TIMER|EV_ERROR");
	assert_string_equal(jw_ev_mask_name(0x104, buf, sizeof(buf)), "EV_TIMER|0x4");
	assert_string_equal(jw_ev_mask_name(0, buf, sizeof(buf)), "0");
	/* cut short, NUL-terminated */
	assert_string_equal(jw_ev_mask_name(0x03, buf, 5), "EV_R");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#if defined(__x86_64__) || defined(__aarch64__)
		cmocka_unit_test(test_ev_site),
		cmocka_unit_test(test_sdevent_site),
		cmocka_unit_test(test_pipewire_sites),
		cmocka_unit_test(test_gtk_emitters),
#endif
		cmocka_unit_test(test_ev_masks),
		cmocka_unit_test(test_wl_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
