// SPDX-License-Identifier: GPL-2.0-only
/* x86-64: the frame of a function without CFI, from its prologue (see arch.h). */
#include <errno.h>
#include <string.h>

#include "arch/arch.h"
#include "arch/x86_64_insn.h"

#define RSP 4

/* Whether @in may write rsp: for the two-byte map, only when its ModRM names rsp. */
static bool writes_rsp(const struct jw_x86_insn *in)
{
	unsigned int m;

	if (in->op)
		return jw_x86_may_write(in) & (1u << RSP);
	if (!in->modrm)
		return false;
	m = *in->modrm;
	return (((m >> 3) & 7) == RSP && !(in->rex & 4)) ||
	       (m >> 6 == 3 && (m & 7) == RSP && !(in->rex & 1));
}

/* The signed immediate of "sub $imm, %rsp" (83 /5 ib, 81 /5 id with REX.W), or -1: not one. */
static int64_t sub_rsp(const struct jw_x86_insn *in)
{
	if (!(in->rex & 8) || !in->modrm || *in->modrm != 0xec || !in->imm)
		return -1;
	if (in->op == 0x83)
		return (int8_t)in->imm[0];
	if (in->op == 0x81) {
		int32_t v;

		memcpy(&v, in->imm, sizeof(v));
		return v;
	}
	return -1;
}

int jw_arch_prologue_frame(const uint8_t *code, size_t len, struct jw_arch_frame *frame)
{
	struct {
		unsigned int reg;	/* hardware number */
		uint64_t depth;		/* below the entry's rsp, once pushed */
	} pushed[JW_ARCH_MAX_SAVED];
	unsigned int n_pushed = 0, i;
	uint64_t depth = 0;
	size_t at = 0;

	while (at < len) {
		struct jw_x86_insn in;
		unsigned int op;
		int64_t imm;

		if (!jw_x86_decode(code + at, len - at, &in) || !in.len)
			return -ENOENT;
		op = in.op;
		if (op >= 0x50 && op <= 0x57) {		/* push reg */
			depth += 8;
			if (n_pushed < JW_ARCH_MAX_SAVED) {
				pushed[n_pushed].reg = (op & 7) | (in.rex & 1 ? 8 : 0);
				pushed[n_pushed++].depth = depth;
			}
		} else if (op == 0x68 || op == 0x6a) {		/* push imm */
			depth += 8;
		} else if ((imm = sub_rsp(&in)) >= 0 && (op == 0x83 || op == 0x81)) {
			depth += imm;
		} else if ((op >= 0x58 && op <= 0x5f) || op == 0xc3 || op == 0xc2 ||
			   writes_rsp(&in)) {
			return -ENOENT;	/* a pop, a return, leave, add or alloca: off the line */
		}
		at += in.len;
	}
	if (at != len)
		return -ENOENT;
	memset(frame, 0, sizeof(*frame));
	frame->ra_reg = -1;
	frame->ra_at = depth;
	frame->cfa_at = depth + 8;
	for (i = 0; i < n_pushed; i++) {
		/* Saved once: a second push of one register is not its caller's value. */
		unsigned int j, reg = jw_x86_dwarf_reg[pushed[i].reg];
		bool again = false;

		for (j = 0; j < frame->n_saved; j++)
			again |= frame->saved[j].dwarf_reg == reg;
		if (again)
			continue;
		frame->saved[frame->n_saved].dwarf_reg = reg;
		frame->saved[frame->n_saved++].at = depth - pushed[i].depth;
	}
	return 0;
}
