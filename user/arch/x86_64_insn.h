/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * x86-64 instruction lengths (private to user/arch/x86_64*.c): legacy prefixes, REX, the one-
 * and two-byte maps, 0f38/0f3a, VEX and EVEX; enough to walk a function's code from its entry
 * and to find its calls, not to tell what every instruction does.
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

#endif
