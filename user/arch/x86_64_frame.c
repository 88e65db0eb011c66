// SPDX-License-Identifier: GPL-2.0-only
/* x86-64: the frame of a function without CFI, from its prologue (see arch.h). */
#include <errno.h>
#include <string.h>

#include "arch/arch.h"
#include "arch/sweep.h"
#include "arch/x86_64_insn.h"

#define RSP 4

/*
 * Whether @in is one of the 0f map's SSE and AVX instructions whose ModRM names vector registers
 * (or a general one it only reads): movaps, movdqa, pxor and the like, not movmskps, pextrw,
 * cvttss2si or movd to a general register. Compiled code spills and clears with them.
 */
static bool vector_only(const struct jw_x86_insn *in)
{
	unsigned int o = in->map_op;

	if (in->map != 1)
		return false;
	return (o >= 0x10 && o <= 0x17) || (o >= 0x28 && o <= 0x2b) || o == 0x2e || o == 0x2f ||
	       (o >= 0x51 && o <= 0x7f && o != 0x7e) || o == 0xc2 || o == 0xc4 || o == 0xc6 ||
	       (o >= 0xd0 && o <= 0xfe && o != 0xd7);
}

/* Whether @in may write rsp: for the other maps, only when its ModRM names rsp. */
static bool writes_rsp(const struct jw_x86_insn *in)
{
	unsigned int m;

	if (in->op)
		return jw_x86_may_write(in) & (1u << RSP);
	if (!in->modrm || vector_only(in))
		return false;
	m = *in->modrm;
	return (((m >> 3) & 7) == RSP && !(in->rex & 4)) ||
	       (m >> 6 == 3 && (m & 7) == RSP && !(in->rex & 1));
}

/*
 * The immediate of "sub $imm, %rsp" (@modrm 0xec: 83 /5 ib, 81 /5 id with REX.W) or of
 * "add $imm, %rsp" (@modrm 0xc4), or -1: not one.
 */
static int64_t imm_to_rsp(const struct jw_x86_insn *in, uint8_t modrm)
{
	if (!(in->rex & 8) || !in->modrm || *in->modrm != modrm || !in->imm)
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

/* Where @in (at @at) goes: a return, a jump or a trap ends the way on; a jump's target. */
static enum jw_sweep_flow flow(const struct jw_x86_insn *in, const uint8_t *p, size_t at,
			       bool *branches, int64_t *target)
{
	const uint8_t *end = p + in->len;
	unsigned int op = in->op, reg = in->modrm ? (*in->modrm >> 3) & 7 : 0;
	int32_t rel;

	*branches = true;
	if (op == 0xeb || (op >= 0x70 && op <= 0x7f)) {			/* jmp, jcc rel8 */
		*target = (int64_t)(at + in->len) + (int8_t)end[-1];
		return op == 0xeb ? JW_SWEEP_END : JW_SWEEP_NEXT;
	}
	if (op == 0xe9 || (!op && in->len >= 6 && end[-6] == 0x0f &&	/* jmp, jcc rel32 */
			   (end[-5] & 0xf0) == 0x80)) {
		memcpy(&rel, end - 4, sizeof(rel));
		*target = (int64_t)(at + in->len) + rel;
		return op == 0xe9 ? JW_SWEEP_END : JW_SWEEP_NEXT;
	}
	*branches = false;
	/* ret, jmp *x, ud2, hlt */
	if (op == 0xc3 || op == 0xc2 || (op == 0xff && (reg == 4 || reg == 5)) || op == 0xf4 ||
	    (!op && in->len >= 2 && end[-2] == 0x0f && end[-1] == 0x0b))
		return JW_SWEEP_END;
	return JW_SWEEP_NEXT;
}

/* One instruction's effect on the frame: false for one the sweep does not follow. */
static bool effect(struct jw_sweep *w, const struct jw_x86_insn *in)
{
	unsigned int op = in->op;
	int64_t imm;

	if (op >= 0x50 && op <= 0x57) {				/* push reg */
		w->sp -= 8;
		jw_sweep_save(w, (op & 7) | (in->rex & 1 ? 8 : 0), w->sp);
	} else if (op == 0x68 || op == 0x6a) {			/* push imm */
		w->sp -= 8;
	} else if ((imm = imm_to_rsp(in, 0xec)) >= 0 && (op == 0x83 || op == 0x81)) {
		w->sp -= imm;
	} else if (op >= 0x58 && op <= 0x5f) {			/* pop reg: an epilogue's */
		jw_sweep_restore(w, (op & 7) | (in->rex & 1 ? 8 : 0), w->sp);
		w->sp += 8;
	} else if ((imm = imm_to_rsp(in, 0xc4)) >= 0 && (op == 0x83 || op == 0x81)) {
		w->sp += imm;
	} else if (writes_rsp(in)) {
		return false;	/* leave, an alloca, rsp from a register */
	}
	return true;
}

static bool sweep_step(struct jw_sweep *w, const uint8_t *code, size_t at, size_t len,
		       struct jw_sweep_insn *out)
{
	struct jw_x86_insn in;

	if (!jw_x86_decode(code + at, len - at, &in) || !in.len)
		return false;
	out->len = in.len;
	out->flow = flow(&in, code + at, at, &out->branches, &out->target);
	if (out->flow == JW_SWEEP_NEXT && !effect(w, &in))
		out->flow = JW_SWEEP_LOST;
	return true;
}

/* The frame a sweep's state says: where the return address and the saved registers are. */
static int to_frame(const struct jw_sweep *w, struct jw_arch_frame *frame)
{
	unsigned int i;

	if (w->sp > 0)
		return -ENOENT;
	memset(frame, 0, sizeof(*frame));
	frame->ra_reg = -1;
	frame->ra_at = -w->sp;
	frame->cfa_at = -w->sp + 8;
	for (i = 0; i < w->n_saved; i++) {
		frame->saved[frame->n_saved].dwarf_reg = jw_x86_dwarf_reg[w->saved[i].reg];
		frame->saved[frame->n_saved++].at = w->saved[i].at - w->sp;
	}
	return 0;
}

int jw_arch_prologue_frame(const uint8_t *code, size_t len, struct jw_arch_frame *frame)
{
	struct jw_sweep w;
	int ret = jw_sweep_code(code, len, sweep_step, &w, NULL);

	return ret ? ret : to_frame(&w, frame);
}

size_t jw_arch_prologue_guesses(const uint8_t *code, size_t len, struct jw_arch_frame *frames,
				size_t max)
{
	return jw_sweep_guesses(code, len, sweep_step, to_frame, frames, max);
}

bool jw_arch_after_call(const uint8_t *code, size_t len)
{
	size_t k;

	/* call rel32 (5 bytes), call *reg/mem (2 to 7 with a prefix): one that ends here. */
	for (k = 2; k <= 8 && k <= len; k++) {
		struct jw_arch_call c;
		struct jw_x86_insn in;

		if (jw_x86_decode(code + len - k, k, &in) && in.len == k &&
		    jw_x86_as_call(&in, 0, 0, &c))
			return true;
	}
	return false;
}
