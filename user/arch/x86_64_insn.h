/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * x86-64 instruction lengths (private to user/arch/x86_64*.c): legacy prefixes, REX, the one-
 * and two-byte maps, 0f38/0f3a, VEX and EVEX; enough to walk a function's code from its entry
 * and to find its calls; and what little of an instruction's effect the callers need (a call's
 * target, the registers it may write), not everything it does.
 */
#ifndef JW_ARCH_X86_64_INSN_H
#define JW_ARCH_X86_64_INSN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What the decoder learns of one instruction. */
struct jw_x86_insn {
	size_t len;
	unsigned int op;	/* its one-byte opcode (0: another map) */
	unsigned int map;	/* its opcode map: 0 one-byte, 1 0f, 2 0f38, 3 0f3a (VEX's too) */
	unsigned int map_op;	/* its opcode in that map */
	unsigned int rex;
	const uint8_t *modrm;	/* its ModRM byte, or NULL */
	const uint8_t *imm;	/* its immediate, or NULL */
};

/*
 * The length of the ModRM operand at @p (the ModRM byte, a SIB byte, a displacement), of which
 * @len bytes are there; 0 when they are not all there.
 */
size_t jw_x86_modrm_len(const uint8_t *p, size_t len);

/* Decodes the instruction at @p (@len bytes there) into @in; false when it cannot. */
bool jw_x86_decode(const uint8_t *p, size_t len, struct jw_x86_insn *in);

struct jw_arch_call;

/* DWARF's number of each register, by its hardware number. */
extern const int jw_x86_dwarf_reg[16];

/* The registers a call may change: rax, rcx, rdx, rsi, rdi, r8-r11 (hardware numbers). */
#define JW_X86_CALL_CLOBBERED 0x0fc7u

/*
 * Whether @in (at @at) is a call, described in @c, with @global the registers (hardware
 * numbers) last loaded from a fixed address.
 */
bool jw_x86_as_call(const struct jw_x86_insn *in, size_t at, unsigned int global,
		    struct jw_arch_call *c);

/*
 * The registers (hardware numbers) instruction @in may write, over-counted: whatever its ModRM
 * names as a register, the one in its opcode, and the implicit ones of the few that have them.
 */
unsigned int jw_x86_may_write(const struct jw_x86_insn *in);

#endif
