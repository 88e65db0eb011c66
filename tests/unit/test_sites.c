// SPDX-License-Identifier: GPL-2.0-only
/*
 * Handler sites (loops/sites.c) and what they stand on: the instruction decoder's lengths and
 * calls (arch.h), PLT stubs, and the libraries' struct layouts. On x86-64 they are held to
 * objdump and to Debian's own libglib, libuv, libevent and nginx.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "arch/arch.h"
#include "process/elfsym.h"
#include "loops/preset_gtk.h"
#include "loops/preset_pipewire.h"
#include "loops/sites.h"

#ifdef JW_LOOP_HEADERS
#include <glib.h>
#include <uv.h>
#endif

/* Calls @fn saw: up to 8. */
struct seen {
	struct jw_arch_call calls[8];
	size_t n;
};

static int keep_call(const struct jw_arch_call *c, void *ctx)
{
	struct seen *s = ctx;

	if (s->n < 8)
		s->calls[s->n++] = *c;
	return 0;
}

#if defined(__x86_64__)
/* Encodings the decoder must size, each a whole instruction: legacy, REX, VEX, EVEX, x87. */
static void test_lengths(void **state)
{
	static const struct {
		uint8_t bytes[15];
		size_t len;
	} cases[] = {
		{ { 0x90 }, 1 },						/* nop */
		{ { 0x66, 0x05, 0x34, 0x12 }, 4 },				/* add $0x1234,%ax */
		{ { 0x05, 0x78, 0x56, 0x34, 0x12 }, 5 },			/* add $imm32,%eax */
		{ { 0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8 }, 10 },			/* movabs $imm64,%rax */
		{ { 0x66, 0xb8, 0x34, 0x12 }, 4 },				/* mov $0x1234,%ax */
		{ { 0xf6, 0x07, 0x01 }, 3 },					/* testb $1,(%rdi) */
		{ { 0xf7, 0xd8 }, 2 },						/* neg %eax */
		{ { 0x66, 0xf7, 0x07, 0x01, 0x00 }, 5 },			/* testw $1,(%rdi) */
		{ { 0xa1, 1, 2, 3, 4, 5, 6, 7, 8 }, 9 },			/* movabs moffs,%eax */
		{ { 0x8b, 0x04, 0x25, 0x28, 0, 0, 0 }, 7 },			/* mov 0x28,%eax (SIB, no base) */
		{ { 0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0, 0, 0 }, 9 },	/* mov %fs:0x28,%rax */
		{ { 0x48, 0x8b, 0x05, 1, 2, 3, 4 }, 7 },			/* mov rel(%rip),%rax */
		{ { 0x0f, 0x84, 1, 2, 3, 4 }, 6 },				/* je rel32 */
		{ { 0x66, 0x0f, 0x3a, 0x0f, 0xc1, 0x08 }, 6 },			/* palignr $8,%xmm1,%xmm0 */
		{ { 0xc5, 0xf9, 0x6f, 0x07 }, 4 },				/* vmovdqa (%rdi),%xmm0 */
		{ { 0xc4, 0xe3, 0x7d, 0x39, 0xc1, 0x01 }, 6 },			/* vextracti128 */
		{ { 0xc5, 0xf8, 0x77 }, 3 },					/* vzeroupper */
		{ { 0x62, 0xf1, 0xfe, 0x48, 0x6f, 0x47, 0x01 }, 7 },		/* vmovdqu64 0x40(%rdi),%zmm0 */
		{ { 0xd9, 0x7c, 0x24, 0x02 }, 4 },				/* fnstcw 0x2(%rsp) */
		{ { 0xc8, 0x10, 0x00, 0x00 }, 4 },				/* enter $0x10,$0 */
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(jw_arch_insn_len(cases[i].bytes, cases[i].len), cases[i].len);
		/* Cut short, it is not decoded. */
		assert_int_equal(jw_arch_insn_len(cases[i].bytes, cases[i].len - 1), 0);
	}
	assert_int_equal(jw_arch_insn_len((const uint8_t[]){ 0x06 }, 1), 0);	/* invalid here */
}

/* The calls a site is made of, and what each calls. */
static void test_calls(void **state)
{
	static const uint8_t code[] = {
		0x48, 0x89, 0xef,			/* mov %rbp,%rdi */
		0xe8, 0x10, 0x00, 0x00, 0x00,		/* call .+0x10 */
		0xff, 0x53, 0xf8,			/* call *-0x8(%rbx) */
		0x41, 0xff, 0xd6,			/* call *%r14 */
		0xff, 0x15, 0x00, 0x01, 0x00, 0x00,	/* call *0x100(%rip) */
		0xff, 0x14, 0xc5, 0, 0, 0, 0,		/* call *0x0(,%rax,8) */
		0x41, 0xff, 0x94, 0x24, 0x00, 0x01, 0x00, 0x00,	/* call *0x100(%r12) */
		0xff, 0xe0,				/* jmp *%rax: no call */
	};
	struct seen s = { 0 };

	(void)state;
	jw_arch_scan_calls(code, sizeof(code), keep_call, &s);
	assert_int_equal(s.n, 6);
	assert_false(s.calls[0].indirect);
	assert_int_equal(s.calls[0].at, 3);
	assert_int_equal(s.calls[0].target, 8 + 0x10);
	assert_true(s.calls[1].indirect && s.calls[1].mem);
	assert_int_equal(s.calls[1].reg, 3);	/* rbx */
	assert_int_equal(s.calls[1].disp, -8);
	assert_true(s.calls[2].indirect && !s.calls[2].mem);
	assert_int_equal(s.calls[2].reg, 14);	/* r14 */
	assert_int_equal(s.calls[2].len, 3);
	assert_int_equal(s.calls[3].reg, -1);	/* RIP-relative */
	assert_int_equal(s.calls[4].reg, -1);	/* indexed */
	assert_int_equal(s.calls[5].reg, 12);	/* r12 through a SIB byte */
	assert_int_equal(s.calls[5].disp, 0x100);
}

/*
 * Calls through a global table (the function, or its address, read from a fixed place just
 * before) against an object's callback; what a write to the register in between undoes.
 */
static void test_global_calls(void **state)
{
	static const uint8_t code[] = {
		0x48, 0x8b, 0x05, 0x00, 0x01, 0, 0,	/* mov 0x100(%rip),%rax: a GOT slot */
		0x31, 0xff,				/* xor %edi,%edi */
		0xff, 0x50, 0x20,			/* call *0x20(%rax): a table's entry */
		0x48, 0x8b, 0x44, 0x24, 0x10,		/* mov 0x10(%rsp),%rax */
		0xff, 0xd0,				/* call *%rax: a callback */
		0x48, 0x8b, 0x2d, 0x00, 0x01, 0, 0,	/* mov 0x100(%rip),%rbp */
		0xff, 0x55, 0x18,			/* call *0x18(%rbp) */
		0xff, 0x55, 0x20,			/* call *0x20(%rbp): rbp outlives a call */
		0x48, 0x8b, 0x05, 0x00, 0x01, 0, 0,	/* mov 0x100(%rip),%rax */
		0x4c, 0x8b, 0x40, 0x08,			/* mov 0x8(%rax),%r8: through it */
		0xff, 0x50, 0x20,			/* call *0x20(%rax) */
		0x41, 0xff, 0xd0,			/* call *%r8: a call clobbered it */
		0x4c, 0x8b, 0x47, 0x18,			/* mov 0x18(%rdi),%r8: an object's field */
		0x41, 0xff, 0xd0,			/* call *%r8 */
	};
	struct seen s = { 0 };

	(void)state;
	jw_arch_scan_calls(code, sizeof(code), keep_call, &s);
	assert_int_equal(s.n, 7);
	assert_true(s.calls[0].via_global);
	assert_false(s.calls[1].via_global);
	assert_true(s.calls[2].via_global);
	assert_true(s.calls[3].via_global);
	assert_true(s.calls[4].via_global);
	assert_false(s.calls[5].via_global);
	assert_false(s.calls[6].via_global);
}

/* A table's entry loaded through a global, then called. */
static void test_global_through(void **state)
{
	static const uint8_t code[] = {
		0x48, 0x8b, 0x05, 0x00, 0x01, 0, 0,	/* mov 0x100(%rip),%rax */
		0x48, 0x8b, 0x50, 0x18,			/* mov 0x18(%rax),%rdx */
		0xff, 0xd2,				/* call *%rdx */
		0x48, 0x8b, 0x05, 0x00, 0x01, 0, 0,	/* mov 0x100(%rip),%rax */
		0x48, 0x89, 0xf8,			/* mov %rdi,%rax: overwritten */
		0xff, 0x50, 0x20,			/* call *0x20(%rax) */
	};
	struct seen s = { 0 };

	(void)state;
	jw_arch_scan_calls(code, sizeof(code), keep_call, &s);
	assert_int_equal(s.n, 2);
	assert_true(s.calls[0].via_global);
	assert_false(s.calls[1].via_global);
}

/* The PLT stubs of both layouts: .plt's "jmp *rel(%rip)", .plt.sec's "endbr64; bnd jmp". */
static void test_plt_slot(void **state)
{
	static const uint8_t plt[] = { 0xff, 0x25, 0x10, 0x00, 0x00, 0x00, 0x68, 0, 0, 0, 0 };
	static const uint8_t sec[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0xf2, 0xff, 0x25, 0xf0, 0xff, 0xff,
				       0xff };
	uint64_t slot;

	(void)state;
	assert_int_equal(jw_arch_plt_slot(plt, sizeof(plt), 0x1000, &slot), 0);
	assert_int_equal(slot, 0x1000 + 6 + 0x10);
	assert_int_equal(jw_arch_plt_slot(sec, sizeof(sec), 0x2000, &slot), 0);
	assert_int_equal(slot, 0x2000 + 11 - 0x10);
	assert_int_equal(jw_arch_plt_slot(sec + 4, 2, 0x2000, &slot), -ENOENT);
}

/*
 * A linear sweep of a real library's .text, held to objdump's instruction by instruction. fwait
 * (9b) is an instruction of its own here; objdump joins it to the x87 one after it.
 */
static void sweep_like_objdump(const char *lib)
{
	uint64_t off, size, at;
	char cmd[512], line[512];
	size_t checked = 0, want_at = 0;
	uint8_t *code;
	FILE *f;

	assert_int_equal(jw_elf_section(lib, ".text", &off, &size), 0);
	code = malloc(size);
	assert_non_null(code);
	assert_int_equal(jw_file_read_at(lib, off, code, size), 0);
	snprintf(cmd, sizeof(cmd), "objdump -d -j .text --no-show-raw-insn %s", lib);
	f = popen(cmd, "r");
	assert_non_null(f);
	at = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long addr;
		size_t n;

		if (sscanf(line, " %llx:", &addr) != 1 || !strchr(line, '\t'))
			continue;
		want_at = addr - off;
		while (at < want_at && code[at] == 0x9b)
			at++;
		if (at != want_at)
			fail_msg("%s: decoded an instruction at 0x%llx, objdump one at 0x%llx", lib,
				 (unsigned long long)(off + at), addr);
		n = jw_arch_insn_len(code + at, size - at);
		if (!n)
			fail_msg("%s: nothing decoded at 0x%llx", lib, addr);
		at += n;
		checked++;
	}
	pclose(f);
	free(code);
	assert_true(checked > 10000);
}

static void test_sweep_glib(void **state)
{
	(void)state;
	sweep_like_objdump("/usr/lib/x86_64-linux-gnu/libglib-2.0.so.0");
}

static void test_sweep_libuv(void **state)
{
	(void)state;
	sweep_like_objdump("/usr/lib/x86_64-linux-gnu/libuv.so.1");
}

/* The one call @code (at file offset @at of @path) begins with. */
static struct jw_arch_call call_at(const char *path, uint64_t at)
{
	uint8_t code[16];
	struct seen s = { 0 };

	assert_int_equal(jw_file_read_at(path, at, code, sizeof(code)), 0);
	jw_arch_scan_calls(code, jw_arch_insn_len(code, sizeof(code)), keep_call, &s);
	assert_int_equal(s.n, 1);
	return s.calls[0];
}

/* Debian's GLib: the dispatch calls, both "call *%r14", with the callback in rsi. */
static void test_glib_sites(void **state)
{
	struct jw_preset p = { 0 };
	char note[256];
	size_t i;

	(void)state;
	snprintf(p.where, sizeof(p.where), "/usr/lib/x86_64-linux-gnu/libglib-2.0.so.0");
	assert_int_equal(jw_sites_glib(&p, note, sizeof(note)), 0);
	assert_int_equal(p.n_probes, 2);
	for (i = 0; i < p.n_probes; i++) {
		const struct jw_preset_probe *pp = &p.probes[i];
		struct jw_arch_call c = call_at(p.where, pp->offset);

		assert_true(c.indirect && !c.mem);
		assert_int_equal(pp->exit_offset, pp->offset + c.len);
		assert_true(pp->exact && pp->name_arg);
		assert_int_equal(pp->chain.handler.reg, jw_arch_arg_reg(1));
		assert_int_equal(pp->chain.handler.n_offsets, 0);
		assert_int_equal(pp->chain.handler_else, (uint32_t)c.reg + 1);
		assert_int_equal(pp->chain.due.reg, jw_arch_arg_reg(0));
		assert_int_equal(pp->chain.due_unit_ns, 1000);
	}
	assert_non_null(strstr(note, "2 sites"));
}

/* Debian's libuv: from the call of uv_timer_stop (through its PLT stub) to the callback's return. */
static void test_libuv_site(void **state)
{
	struct jw_preset p = { 0 };
	struct jw_arch_call c;
	uint64_t stub;
	char note[256];
	uint8_t code[3];

	(void)state;
	snprintf(p.where, sizeof(p.where), "/usr/lib/x86_64-linux-gnu/libuv.so.1");
	assert_int_equal(jw_sites_libuv(&p, note, sizeof(note)), 0);
	assert_int_equal(p.n_probes, 1);
	assert_int_equal(jw_elf_plt_stub(p.where, "uv_timer_stop", &stub), 0);
	c = call_at(p.where, p.probes[0].offset);
	assert_false(c.indirect);
	assert_int_equal(p.probes[0].offset + (uint64_t)c.target, stub);
	/* The return site follows "call *-0x8(%rbx)", the callback of the heap node's handle. */
	assert_int_equal(jw_file_read_at(p.where, p.probes[0].exit_offset - 3, code, 3), 0);
	assert_memory_equal(code, ((const uint8_t[]){ 0xff, 0x53, 0xf8 }), 3);
	assert_int_equal(p.probes[0].chain.handler.offsets[0], JW_UV_TIMER_CB);
	assert_int_equal(p.probes[0].chain.due.offsets[0], JW_UV_TIMER_TIMEOUT);
	assert_int_equal(p.probes[0].chain.due_unit_ns, 1000000);
	assert_non_null(strstr(note, "the others at"));

	/*
	 * The other callbacks: each site an indirect call, its callee where the cookie says; the
	 * timers' own call is the timer site's, not one of them.
	 */
	assert_true(p.n_callbacks >= 20 && p.n_callbacks <= JW_MAX_CALLBACK_SITES);
	assert_string_equal(p.callbacks_named, "uv callback");
	for (size_t i = 0; i < p.n_callbacks; i++) {
		const struct jw_callback_site *cb = &p.callbacks[i];
		uint64_t bits;

		c = call_at(p.where, cb->call);
		assert_true(c.indirect && c.reg >= 0);
		assert_int_equal(cb->ret, cb->call + c.len);
		bits = JW_COOKIE_CALLEE | (uint64_t)(c.reg + 1) << JW_CALLEE_REG_SHIFT |
		       (c.mem ? JW_CALLEE_MEM | (uint64_t)(uint16_t)c.disp << JW_CALLEE_DISP_SHIFT : 0);
		assert_int_equal(cb->callee, bits);
		assert_int_not_equal(cb->ret, p.probes[0].exit_offset);
	}
}

/*
 * Debian's PipeWire (libspa-support.so, stripped): the loop's one call of a source's func with the
 * source as its argument; the wrappers' calls of the program's callback (event, timer, signal)
 * at the field the two jumping wrappers (I/O, idle) read it from, which name it first; the
 * jumping wrappers' entries, found among the unwind table's functions.
 */
static void test_pipewire_sites(void **state)
{
	const char *lib = "/usr/lib/x86_64-linux-gnu/spa-0.2/support/libspa-support.so";
	struct jw_preset p = { 0 };
	uint64_t starts[4096], start, end;
	size_t i, n, loop = 0, wrapped = 0, entries = 0;
	uint8_t code[64];
	int32_t field;

	(void)state;
	/* the unwind table's functions, sorted, each bounded by the next */
	assert_int_equal(jw_elf_function_starts(lib, starts, 4096, &n), 0);
	assert_true(n > 100);
	for (i = 1; i < n; i++)
		assert_true(starts[i] > starts[i - 1]);
	assert_int_equal(jw_elf_function_bounds(lib, starts[n / 2] + 1, &start, &end), 0);
	assert_int_equal(start, starts[n / 2]);
	assert_int_equal(end, starts[n / 2 + 1]);
	assert_int_equal(jw_elf_function_starts(lib, starts, 10, &n), -E2BIG);
	assert_int_equal(n, 10);

	snprintf(p.where, sizeof(p.where), "%s", lib);
	assert_true(jw_pipewire_hook(0, "/usr/bin/true", &p));
	assert_string_equal(p.detail, "");
	for (i = 0; i < p.n_probes; i++) {
		const struct jw_preset_probe *pp = &p.probes[i];

		assert_string_equal(pp->path, lib);
		assert_true(pp->name_arg);
		if (pp->per_callback) {
			/* an entry that jumps through its source's field: a return probe ends it */
			assert_int_equal(jw_file_read_at(lib, pp->offset, code, sizeof(code)), 0);
			assert_int_equal(jw_arch_tail_call_field(code, sizeof(code), &field), 0);
			assert_int_equal(pp->exit_offset, 0);
			assert_int_equal(pp->chain.handler.offsets[0], field);
			assert_int_equal(pp->chain.flags, JW_CHAIN_FIRST);
			entries++;
			continue;
		}
		struct jw_arch_call c = call_at(lib, pp->offset);

		assert_true(pp->exact && c.indirect && c.mem);
		assert_true(pp->exit_offset >= pp->offset + c.len);
		assert_int_equal(pp->chain.handler.offsets[0], c.disp);
		if (c.disp == JW_PW_SOURCE_FUNC) {
			assert_int_equal(pp->chain.flags, 0);
			loop++;
		} else {
			assert_int_equal(c.disp, 0x48);
			assert_int_equal(pp->chain.flags, JW_CHAIN_FIRST);
			wrapped++;
		}
	}
	assert_int_equal(loop, 1);
	assert_int_equal(wrapped, 3);
	assert_int_equal(entries, 2);
}

/*
 * Debian's GTK 4 (libgtk-4.so.1, stripped): the frame clock's seven phase emitters, each emitting
 * the id of one of seven consecutive slots; the preset hooks them after GLib's sites (this
 * process maps GLib), names them by their ranges, the longest phase naming the frame.
 */
static void test_gtk_phases(void **state)
{
	const char *lib = "/usr/lib/x86_64-linux-gnu/libgtk-4.so.1";
	struct jw_preset p = { 0 };
	struct jw_elf_range at[JW_GTK_PHASES];
	uint64_t stub, slot, prev = 0, start, end;
	uint8_t code[512];
	size_t k, glib;

	(void)state;
	assert_int_equal(jw_gtk_find_phases(lib, at), 0);
	assert_int_equal(jw_elf_plt_stub(lib, "g_signal_emit", &stub), 0);
	for (k = 0; k < JW_GTK_PHASES; k++) {
		/* each a whole function of the unwind table */
		assert_int_equal(jw_elf_function_bounds(lib, at[k].lo, &start, &end), 0);
		assert_int_equal(start, at[k].lo);
		assert_int_equal(end, at[k].hi);
		assert_true(end - start <= sizeof(code));
		assert_int_equal(jw_file_read_at(lib, start, code, end - start), 0);
		assert_int_equal(jw_arch_signal_emitter(code, end - start, start, stub, &slot), 0);
		assert_true(!k || slot == prev + 4);
		prev = slot;
	}

	snprintf(p.where, sizeof(p.where), "%s", lib);
	assert_true(jw_gtk_hook(getpid(), "/usr/bin/true", &p));
	assert_string_equal(p.where, lib);
	assert_int_equal(p.code_names.n, JW_GTK_PHASES);
	glib = p.n_probes - JW_GTK_PHASES;
	assert_true(glib >= 1 && glib <= 2);
	assert_non_null(strstr(p.probes[0].path, "libglib-2.0.so"));
	for (k = 0; k < JW_GTK_PHASES; k++) {
		const struct jw_preset_probe *pp = &p.probes[glib + k];

		assert_string_equal(pp->path, lib);
		assert_int_equal(pp->offset, at[k].lo);
		assert_int_equal(pp->exit_offset, 0);
		assert_true(pp->exact && pp->name_arg);
		assert_int_equal(pp->chain.handler.reg, JW_UREG_IP);
		assert_int_equal(pp->chain.handler.n_offsets, 0);
		assert_int_equal(pp->chain.flags, JW_CHAIN_LONGEST);
		assert_string_equal(pp->entry, p.code_names.names[k].name);
		assert_true(p.code_names.names[k].lo < p.code_names.names[k].hi);
		assert_true(!k || p.code_names.names[k].lo >= p.code_names.names[k - 1].hi);
	}
	assert_string_equal(p.code_names.names[4].name, "GdkFrameClock::paint");
}

/*
 * Debian's libevent: the callbacks' calls in the function that runs its queues, each through a
 * register or a field of the event, none through the lock table; all in one function.
 */
static void test_libevent_sites(void **state)
{
	const char *lib = "/usr/lib/x86_64-linux-gnu/libevent-2.1.so.7";
	struct jw_preset p = { 0 };
	uint64_t loop, size, start, end, lo = UINT64_MAX, hi = 0;
	char note[256], err[256];

	(void)state;
	snprintf(p.where, sizeof(p.where), "%s", lib);
	assert_int_equal(jw_sites_libevent(&p, note, sizeof(note)), 0);
	assert_string_equal(p.callbacks_named, "libevent callback");
	assert_int_equal(p.n_probes, 0);
	/* event, persistent event, signal, self, finalizer: 4 to 8 calls */
	assert_true(p.n_callbacks >= 4 && p.n_callbacks <= 8);
	for (size_t i = 0; i < p.n_callbacks; i++) {
		const struct jw_callback_site *cb = &p.callbacks[i];
		struct jw_arch_call c = call_at(lib, cb->call);

		assert_true(c.indirect && c.reg >= 0 && !c.via_global);
		assert_int_equal(cb->ret, cb->call + c.len);
		lo = cb->call < lo ? cb->call : lo;
		hi = cb->call > hi ? cb->call : hi;
	}
	assert_true(hi - lo < 0x1000);
	assert_non_null(strstr(note, "sites"));

	/* The unwind table bounds the exported event_base_loop where its symbol does. */
	assert_int_equal(jw_elf_func_offset(lib, "event_base_loop", &loop, &size, err, sizeof(err)), 0);
	assert_int_equal(jw_elf_function_bounds(lib, loop + size / 2, &start, &end), 0);
	assert_int_equal(start, loop);
	assert_true(end >= loop + size && end < loop + size + 64);
	assert_true(lo < loop && lo > loop - 0x2000);
}

/*
 * Debian's nginx: the timer handler's call in ngx_event_expire_timers, from the
 * ngx_rbtree_delete before it, through the timer node the loop holds (the handler lies
 * JW_NGX_EVENT_TIMER - JW_NGX_EVENT_HANDLER before the node: the layout the site reads); the other handlers' calls as callback sites, named by
 * nginx's own code.
 */
static void test_nginx_sites(void **state)
{
	const char *exe = "/usr/sbin/nginx";
	struct jw_preset p = { 0 };
	struct jw_arch_call c;
	uint64_t del, size;
	char note[256], err[256];

	(void)state;
	snprintf(p.where, sizeof(p.where), "%s", exe);
	assert_int_equal(jw_sites_nginx(&p, note, sizeof(note)), 0);
	assert_int_equal(p.n_probes, 1);
	assert_int_equal(jw_elf_func_offset(exe, "ngx_rbtree_delete", &del, &size, err,
					    sizeof(err)), 0);
	c = call_at(exe, p.probes[0].offset);
	assert_false(c.indirect);
	assert_int_equal(p.probes[0].offset + (uint64_t)c.target, del);
	/* ... to the return of the handler's call, through the node: its field before the key */
	c = call_at(exe, p.probes[0].exit_offset - 3);
	assert_true(c.indirect && c.mem && !c.via_global && c.len == 3);
	assert_int_equal(c.disp, JW_NGX_EVENT_HANDLER - JW_NGX_EVENT_TIMER);
	assert_int_equal(p.probes[0].chain.handler.reg, jw_arch_arg_reg(1));
	assert_int_equal(p.probes[0].chain.handler.offsets[0],
			 JW_NGX_EVENT_HANDLER - JW_NGX_EVENT_TIMER);
	assert_int_equal(p.probes[0].chain.due.offsets[0], 0);
	assert_true(p.own_handlers);
	assert_string_equal(p.callbacks_named, "ngx event handler");
	/* ngx_event_process_posted's and epoll's: read and write events, with and without debug */
	assert_true(p.n_callbacks >= 3 && p.n_callbacks <= 8);
	for (size_t i = 0; i < p.n_callbacks; i++) {
		c = call_at(exe, p.callbacks[i].call);
		assert_true(c.indirect && c.mem && !c.via_global && c.reg >= 0);
	}
	assert_non_null(strstr(note, "ngx_event_expire_timers"));
}

/*
 * Return sites moved where a probe costs least: each to an instruction the kernel emulates a
 * few instructions on, past ones that leave the stack pointer alone; most of libuv's move; none
 * onto a site's call.
 */
static void test_place_exits(void **state)
{
	const char *lib = "/usr/lib/x86_64-linux-gnu/libuv.so.1";
	struct jw_preset p = { 0 }, q;
	size_t k, j, moved = 0;
	char note[256];

	(void)state;
	snprintf(p.where, sizeof(p.where), "%s", lib);
	assert_int_equal(jw_sites_libuv(&p, note, sizeof(note)), 0);
	q = p;
	jw_sites_place_exits(&q);
	for (k = 0; k < p.n_callbacks; k++) {
		uint64_t was = p.callbacks[k].ret, now = q.callbacks[k].ret;
		uint8_t code[16];
		struct jw_arch_insn in;

		assert_int_equal(q.callbacks[k].call, p.callbacks[k].call);
		if (now == was)
			continue;
		moved++;
		assert_true(now > was && now - was <= 64);
		assert_int_equal(jw_file_read_at(lib, now, code, sizeof(code)), 0);
		jw_arch_decode_entry(code, sizeof(code), &in);
		assert_int_equal(in.kind, JW_INSN_EMULATED);
		for (j = 0; j < p.n_callbacks; j++)
			assert_int_not_equal(now, p.callbacks[j].call);
		assert_int_not_equal(now, p.probes[0].offset);
	}
	assert_true(moved >= p.n_callbacks / 3);
}

/* A library without the functions: no site, and the note says why. */
static void test_no_sites(void **state)
{
	struct jw_preset p = { 0 };
	char note[256];

	(void)state;
	snprintf(p.where, sizeof(p.where), "/usr/lib/x86_64-linux-gnu/libc.so.6");
	assert_int_not_equal(jw_sites_glib(&p, note, sizeof(note)), 0);
	assert_int_not_equal(jw_sites_libuv(&p, note, sizeof(note)), 0);
	assert_int_equal(p.n_probes, 0);
	assert_non_null(strstr(note, "uv_timer_stop"));
	assert_int_not_equal(jw_sites_libevent(&p, note, sizeof(note)), 0);
	assert_int_equal(p.n_callbacks, 0);
	assert_non_null(strstr(note, "event_base_loop"));
}
#endif

#if defined(__aarch64__)
/* Calls through a global table (adrp, a GOT entry, the table's entry) or an object's field. */
static void test_arm64_global_calls(void **state)
{
	static const uint32_t code[] = {
		0x90000000,	/* adrp x0, . */
		0xf9400400,	/* ldr x0, [x0, #8]: a GOT entry */
		0xf9400c01,	/* ldr x1, [x0, #24]: the table's entry */
		0xd63f0020,	/* blr x1: through a global */
		0xf9400e61,	/* ldr x1, [x19, #24]: an object's field */
		0xd63f0020,	/* blr x1: a callback */
		0x90000002,	/* adrp x2, . */
		0xf9400442,	/* ldr x2, [x2, #8] */
		0xaa1303e2,	/* mov x2, x19: overwritten */
		0xd63f0040,	/* blr x2 */
	};
	struct seen s = { 0 };

	(void)state;
	jw_arch_scan_calls((const uint8_t *)code, sizeof(code), keep_call, &s);
	assert_int_equal(s.n, 3);
	assert_true(s.calls[0].via_global);
	assert_false(s.calls[1].via_global);
	assert_false(s.calls[2].via_global);
}

/* bl, blr and blraaz; an adrp/ldr PLT stub. */
static void test_arm64_calls(void **state)
{
	static const uint32_t code[] = {
		0x94000004,	/* bl .+16 */
		0xd63f0020,	/* blr x1 */
		0xd63f0a7f,	/* blraaz x19 */
		0xd61f0220,	/* br x17: no call */
	};
	static const uint32_t plt[] = { 0x90000090, 0xf9400611, 0x91002210, 0xd61f0220 };
	struct seen s = { 0 };
	uint64_t slot;

	(void)state;
	jw_arch_scan_calls((const uint8_t *)code, sizeof(code), keep_call, &s);
	assert_int_equal(s.n, 3);
	assert_int_equal(s.calls[0].target, 16);
	assert_int_equal(s.calls[1].reg, 1);
	assert_int_equal(s.calls[2].reg, 19);
	/* adrp x16, .+0x10000; ldr x17, [x16, #8] */
	assert_int_equal(jw_arch_plt_slot((const uint8_t *)plt, sizeof(plt), 0x4010, &slot), 0);
	assert_int_equal(slot, 0x4000 + 0x10000 + 8);
}
#endif

#ifdef JW_LOOP_HEADERS
static void timer_cb(uv_timer_t *t)
{
	(void)t;
}

/* The layouts the sites read, from the headers and the libraries themselves. */
static void test_layouts(void **state)
{
	uv_timer_t t;
	GSource *src;

	(void)state;
	assert_int_equal(offsetof(uv_timer_t, timer_cb), JW_UV_TIMER_CB);
	assert_int_equal(offsetof(uv_timer_t, timeout), JW_UV_TIMER_TIMEOUT);
	assert_int_equal(uv_timer_init(uv_default_loop(), &t), 0);
	assert_int_equal(uv_timer_start(&t, timer_cb, 1234, 0), 0);
	assert_int_equal(*(uint64_t *)((char *)&t + JW_UV_TIMER_TIMEOUT), uv_now(uv_default_loop()) + 1234);
	assert_ptr_equal(*(void **)((char *)&t + JW_UV_TIMER_CB), (void *)timer_cb);
	uv_close((uv_handle_t *)&t, NULL);
	uv_run(uv_default_loop(), UV_RUN_NOWAIT);

	assert_int_equal(offsetof(GSource, priv), JW_G_SOURCE_PRIV);
	src = g_timeout_source_new(5000);
	g_source_set_ready_time(src, 987654321);
	assert_int_equal(*(gint64 *)((char *)src->priv + JW_G_SOURCE_PRIV_READY_TIME), 987654321);
	g_source_unref(src);
}
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
#if defined(__x86_64__)
		cmocka_unit_test(test_lengths),
		cmocka_unit_test(test_calls),
		cmocka_unit_test(test_global_calls),
		cmocka_unit_test(test_global_through),
		cmocka_unit_test(test_plt_slot),
		cmocka_unit_test(test_sweep_glib),
		cmocka_unit_test(test_sweep_libuv),
		cmocka_unit_test(test_glib_sites),
		cmocka_unit_test(test_libuv_site),
		cmocka_unit_test(test_libevent_sites),
		cmocka_unit_test(test_pipewire_sites),
		cmocka_unit_test(test_gtk_phases),
		cmocka_unit_test(test_nginx_sites),
		cmocka_unit_test(test_place_exits),
		cmocka_unit_test(test_no_sites),
#endif
#if defined(__aarch64__)
		cmocka_unit_test(test_arm64_calls),
		cmocka_unit_test(test_arm64_global_calls),
#endif
#ifdef JW_LOOP_HEADERS
		cmocka_unit_test(test_layouts),
#endif
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
