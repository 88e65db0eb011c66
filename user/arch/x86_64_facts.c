// SPDX-License-Identifier: GPL-2.0-only
/*
 * x86-64: what the presets read from a library's code (arch.h): where a function keeps its first
 * argument and the chain of loads to a member it calls, the field a wrapper tail-jumps through,
 * the signal a function emits, the first field a function loads from its argument.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "arch/arch.h"
#include "arch/x86_64_insn.h"

/* The callee-saved register a function keeps its first argument in, as a ModRM reg number. */
static int saved_reg_of_rdi(const uint8_t *c)
{
	/* mov %rdi,%REG: 48/49 89 (11 111 rrr) */
	if ((c[0] == 0x48 || c[0] == 0x49) && c[1] == 0x89 && (c[2] & 0xf8) == 0xf8)
		return (c[2] & 7) | (c[0] == 0x49 ? 8 : 0);
	return -1;
}

int jw_arch_derive_call_chain(const uint8_t *code, size_t len, struct jw_arg_chain *chain)
{
	size_t i, j;
	int reg = -1;

	for (i = 0; i + 3 <= len && i < 96 && reg < 0; i++)
		reg = saved_reg_of_rdi(code + i);
	if (reg < 0 || (reg & 7) == 4)	/* rsp/r12 need a SIB byte: not this pattern */
		return -ENOENT;
	for (j = i; j + 4 <= len; j++) {
		const uint8_t *c = code + j;
		size_t k;

		/* mov D1(%REG),%rax: 48/49 8b (01 000 rrr) D1 */
		if (c[0] != (reg & 8 ? 0x49 : 0x48) || c[1] != 0x8b || c[2] != (0x40 | (reg & 7)))
			continue;
		/* then, within a few instructions, call *D2(%rax): ff 50 D2 */
		for (k = j + 4; k + 3 <= len && k < j + 4 + 32; k++) {
			if (code[k] == 0xff && code[k + 1] == 0x50) {
				memset(chain, 0, sizeof(*chain));
				chain->handler.reg = jw_arch_arg_reg(0);
				chain->handler.n_offsets = 2;
				chain->handler.offsets[0] = c[3];
				chain->handler.offsets[1] = code[k + 2];
				chain->kind = JW_HANDLER_CODE;
				return 0;
			}
		}
	}
	return -ENOENT;
}

/*
 * "mov D(%base),%reg" (64-bit, no index): true with its registers (hardware numbers) and D.
 */
static bool load_disp(const struct jw_x86_insn *in, int *reg, int *base, int32_t *disp)
{
	unsigned int m;
	const uint8_t *d;

	if (in->op != 0x8b || !(in->rex & 8) || !in->modrm)
		return false;
	m = *in->modrm;
	if (m >> 6 == 0 || m >> 6 == 3 || (m & 7) == 4)
		return false;
	*reg = (int)(((m >> 3) & 7) | (in->rex & 4 ? 8 : 0));
	*base = (int)((m & 7) | (in->rex & 1 ? 8 : 0));
	d = in->modrm + 1;
	*disp = m >> 6 == 1 ? (int8_t)d[0] :
			      (int32_t)((uint32_t)d[0] | (uint32_t)d[1] << 8 | (uint32_t)d[2] << 16 |
					(uint32_t)d[3] << 24);
	return true;
}

/* jw_x86_may_write(), but for the compares and tests, which write no register. */
static unsigned int writes(const struct jw_x86_insn *in)
{
	unsigned int op = in->op;

	if (op == 0x84 || op == 0x85 || (op >= 0x38 && op <= 0x3b))
		return 0;
	return jw_x86_may_write(in);
}

int jw_arch_derive_member_call(const uint8_t *code, size_t len, int32_t call_disp, int32_t *field)
{
	int obj = -1, reg, base, steps = 0;
	struct jw_x86_insn in;
	struct jw_arch_call c;
	int32_t disp, f = 0;
	size_t at = 0;

	while (at < len && steps++ < 48) {
		if (!jw_x86_decode(code + at, len - at, &in))
			return -ENOENT;
		if (load_disp(&in, &reg, &base, &disp) && obj < 0 && base == 7) {
			obj = reg;				/* mov F(%rdi),%R */
			f = disp;
			at += in.len;
			continue;
		}
		if (obj >= 0 && ((load_disp(&in, &reg, &base, &disp) && base == obj &&
				  disp == call_disp) ||			/* mov 8(%R),%X */
				 (jw_x86_as_call(&in, at, 0, &c) && c.mem && c.disp == call_disp &&
				  c.reg == jw_x86_dwarf_reg[obj]))) {		/* call *8(%R) */
			*field = f;
			return 0;
		}
		if (obj < 0 && (writes(&in) >> 7 & 1))
			return -ENOENT;				/* rdi changed before */
		if (obj >= 0 && (writes(&in) >> obj & 1))
			obj = -1;
		at += in.len;
	}
	return -ENOENT;
}

int jw_arch_tail_call_field(const uint8_t *code, size_t len, int32_t *field)
{
	/*
	 * Per register: holding the first argument (@arg's bit), or loaded from its field
	 * @from[reg] (@loaded's bit).
	 */
	unsigned int arg = 1u << 7, loaded = 0, w, m;
	int32_t from[16] = { 0 }, disp;
	int reg, base, src, steps = 0;
	struct jw_x86_insn in;
	size_t at = 0;

	while (at < len && steps++ < 12) {
		if (!jw_x86_decode(code + at, len - at, &in))
			return -ENOENT;
		m = in.modrm ? *in.modrm : 0;
		if (in.op == 0xff && in.modrm && m >> 6 == 3 && (m >> 3 & 7) == 4) {
			reg = (int)((m & 7) | (in.rex & 1 ? 8 : 0));	/* jmp *%reg */
			if (!(loaded >> reg & 1))
				return -ENOENT;
			*field = from[reg];
			return 0;
		}
		/* Any other way out of the straight line ends it: calls, jumps, returns. */
		if (in.op == 0xe8 || in.op == 0xe9 || in.op == 0xeb || in.op == 0xc3 ||
		    in.op == 0xc2 || in.op == 0xff || (in.op >= 0x70 && in.op <= 0x7f))
			return -ENOENT;
		w = writes(&in);
		if (load_disp(&in, &reg, &base, &disp) && (arg >> base & 1)) {
			arg &= ~w;				/* mov F(%arg),%reg */
			loaded = (loaded & ~w) | 1u << reg;
			from[reg] = disp;
		} else if (in.modrm && m >> 6 == 3 && (in.rex & 8) &&
			   (in.op == 0x89 || in.op == 0x8b)) {		/* mov %src,%reg */
			src = (int)(((m >> 3) & 7) | (in.rex & 4 ? 8 : 0));
			reg = (int)((m & 7) | (in.rex & 1 ? 8 : 0));
			if (in.op == 0x8b) {
				int t = src;

				src = reg;
				reg = t;
			}
			arg = (arg & ~w) | (arg >> src & 1) << reg;
			loaded = (loaded & ~w) | (loaded >> src & 1) << reg;
			from[reg] = from[src];
		} else {
			arg &= ~w;
			loaded &= ~w;
		}
		at += in.len;
	}
	return -ENOENT;
}

int jw_arch_signal_emitter(const uint8_t *code, size_t len, uint64_t addr, uint64_t stub,
			   uint64_t *slot)
{
	uint64_t pending = 0, target;
	struct jw_x86_insn in;
	size_t at = 0;
	int32_t rel;
	bool loaded = false;

	while (at < len) {
		if (!jw_x86_decode(code + at, len - at, &in))
			return -ENOENT;
		if ((in.op == 0xe8 || in.op == 0xe9) && in.imm) {		/* call, jmp rel32 */
			memcpy(&rel, in.imm, sizeof(rel));
			target = addr + at + in.len + (uint64_t)(int64_t)rel;
			if (loaded && target == stub) {
				*slot = pending;
				return 0;
			}
			loaded = false;	/* a call clobbers %esi; after a jump, another path */
		} else if (in.op == 0x8b && in.modrm && !(in.rex & 0xc) && *in.modrm == 0x35) {
			memcpy(&rel, in.modrm + 1, sizeof(rel));	/* mov slot(%rip),%esi */
			pending = addr + at + in.len + (uint64_t)(int64_t)rel;
			loaded = true;
		} else if ((writes(&in) >> 6 & 1) || in.op == 0xc3 || in.op == 0xff ||
			   in.op == 0xeb || (in.op >= 0x70 && in.op <= 0x7f)) {
			loaded = false;
		}
		at += in.len;
	}
	return -ENOENT;
}

int jw_arch_first_field_load(const uint8_t *code, size_t len, int32_t *field)
{
	struct jw_x86_insn in;
	int reg, base, steps = 0;
	int32_t disp;
	size_t at = 0;

	while (at < len && steps++ < 32) {
		if (!jw_x86_decode(code + at, len - at, &in))
			return -ENOENT;
		if (load_disp(&in, &reg, &base, &disp) && base == 7) {
			*field = disp;
			return 0;
		}
		if ((writes(&in) >> 7 & 1) || in.op == 0xc3)
			return -ENOENT;
		at += in.len;
	}
	return -ENOENT;
}

