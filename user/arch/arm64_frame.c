// SPDX-License-Identifier: GPL-2.0-only
/* arm64: the frame of a function without CFI, from its prologue (see arch.h). */
#include <errno.h>
#include <string.h>

#include "arch/arch.h"
#include "arch/sweep.h"

#define SP 31		/* as a base or destination register of the forms read here */
#define FP 29
#define LR 30

static int64_t sext(uint32_t v, unsigned int bits)
{
	return (int64_t)((uint64_t)v << (64 - bits)) >> (64 - bits);
}

/* A callee-saved register (x19-x30) stored at @at (relative to the entry's sp). */
static void save(struct jw_sweep *w, unsigned int reg, int64_t at)
{
	if (reg >= 19 && reg <= 30)
		jw_sweep_save(w, reg, at);
}

/* The base register @rn's value relative to the entry's sp; false when not known. */
static bool base_of(const struct jw_sweep *w, unsigned int rn, int64_t *base)
{
	if (rn == SP)
		*base = w->sp;
	else if (rn == FP && w->fp_known)
		*base = w->fp;
	else
		return false;
	return true;
}

/*
 * One instruction's effect on the frame: 1 followed (or none), 0 one the sweep does not follow
 * (an alloca, sp or x30 from where it cannot say).
 */
static int effect(struct jw_sweep *w, uint32_t insn)
{
	unsigned int rd = insn & 31, rn = (insn >> 5) & 31, rt2 = (insn >> 10) & 31;
	int64_t base;

	/* stp xT, xT2, [xN, #imm]! (pre-index) and stp xT, xT2, [xN, #imm] (signed offset) */
	if ((insn & 0xffc00000) == 0xa9800000 || (insn & 0xffc00000) == 0xa9000000) {
		int64_t off = sext((insn >> 15) & 0x7f, 7) * 8;

		if (!base_of(w, rn, &base))
			return 1;
		if ((insn & 0xffc00000) == 0xa9800000) {
			if (rn != SP)
				return 0;
			w->sp += off;
			base = w->sp;
		} else {
			base += off;
		}
		save(w, rd, base);
		save(w, rt2, base + 8);
		return 1;
	}
	/* str xT, [xN, #imm] (unsigned offset) */
	if ((insn & 0xffc00000) == 0xf9000000) {
		if (base_of(w, rn, &base))
			save(w, rd, base + ((insn >> 10) & 0xfff) * 8);
		return 1;
	}
	/* str xT, [sp, #imm]! (pre-index) */
	if ((insn & 0xffe00c00) == 0xf8000c00) {
		if (rn != SP)
			return 1;
		w->sp += sext((insn >> 12) & 0x1ff, 9);
		save(w, rd, w->sp);
		return 1;
	}
	/* add/sub xD, xN, #imm{, lsl #12} */
	if ((insn & 0x1f800000) == 0x11000000 && (insn >> 31)) {
		int64_t imm = ((insn >> 10) & 0xfff) << ((insn >> 22) & 1 ? 12 : 0);
		bool sub = (insn >> 30) & 1;

		if (insn & 0x20000000)
			return 1;	/* adds/subs (cmp, cmn): their rd 31 is xzr, not sp */
		if (rd == SP) {
			if (!base_of(w, rn, &base))
				return 0;	/* sp from another register */
			w->sp = base + (sub ? -imm : imm);	/* lowered, freed, or from x29 */
			return 1;
		}
		if (rd == FP) {
			w->fp_known = base_of(w, rn, &base);
			if (w->fp_known)
				w->fp = base + (sub ? -imm : imm);
		}
		return 1;
	}
	/* ldp xT, xT2, [xN], #imm (post-index), [xN, #imm]! (pre-index), [xN, #imm]: an epilogue's */
	if ((insn & 0xffc00000) == 0xa8c00000 || (insn & 0xffc00000) == 0xa9c00000 ||
	    (insn & 0xffc00000) == 0xa9400000) {
		int64_t off = sext((insn >> 15) & 0x7f, 7) * 8;
		bool signed_off = (insn & 0xffc00000) == 0xa9400000;

		if (!base_of(w, rn, &base))
			return rd == LR || rt2 == LR ? 0 : 1;	/* x30 from where the sweep cannot say */
		if (!signed_off && rn != SP)
			return 0;
		if ((insn & 0xffc00000) == 0xa9c00000)
			w->sp = base = base + off;
		else if (signed_off)
			base += off;
		jw_sweep_restore(w, rd, base);
		jw_sweep_restore(w, rt2, base + 8);
		if ((insn & 0xffc00000) == 0xa8c00000)
			w->sp += off;
		if (rd == FP || rt2 == FP)
			w->fp_known = false;
		return 1;
	}
	/* ldr xT, [sp], #imm (post-index) and ldr xT, [sp, #imm]! (pre-index) */
	if ((insn & 0xffe00c00) == 0xf8400400 || (insn & 0xffe00c00) == 0xf8400c00) {
		int64_t off = sext((insn >> 12) & 0x1ff, 9);

		if (rn != SP)
			return rd == LR ? 0 : 1;
		if (insn & 0x800)
			w->sp += off;
		jw_sweep_restore(w, rd, w->sp);
		if (!(insn & 0x800))
			w->sp += off;
		if (rd == FP)
			w->fp_known = false;
		return 1;
	}
	/* add/sub (extended register) writing sp: an alloca */
	if ((insn & 0x7fe00000) == 0x0b200000 || (insn & 0x7fe00000) == 0x4b200000)
		return rd == SP ? 0 : 1;
	/* mov xD, xN (orr xD, xzr, xN) into x29: fp no longer known */
	if ((insn & 0xffe0ffe0) == 0xaa0003e0 && rd == FP)
		w->fp_known = false;
	return 1;
}

/* Where @insn goes: a return, a jump (its target at + @target) or a trap ends the way on. */
static enum jw_sweep_flow flow(uint32_t insn, bool *branches, int64_t *target)
{
	*branches = true;
	if ((insn & 0xfc000000) == 0x14000000) {		/* b */
		*target = sext(insn & 0x3ffffff, 26) * 4;
		return JW_SWEEP_END;
	}
	if ((insn & 0xff000010) == 0x54000000 ||		/* b.cond */
	    (insn & 0x7e000000) == 0x34000000) {		/* cbz, cbnz */
		*target = sext((insn >> 5) & 0x7ffff, 19) * 4;
		return JW_SWEEP_NEXT;
	}
	if ((insn & 0x7e000000) == 0x36000000) {		/* tbz, tbnz */
		*target = sext((insn >> 5) & 0x3fff, 14) * 4;
		return JW_SWEEP_NEXT;
	}
	*branches = false;
	/* ret, retaa/retab, br, and brk/udf: nothing follows */
	if ((insn & 0xfffffc1f) == 0xd65f0000 || insn == 0xd65f0bff || insn == 0xd65f0fff ||
	    (insn & 0xfffffc1f) == 0xd61f0000 || (insn & 0xffe0001f) == 0xd4200000 ||
	    (insn & 0xffff0000) == 0)
		return JW_SWEEP_END;
	return JW_SWEEP_NEXT;
}

static bool sweep_step(struct jw_sweep *w, const uint8_t *code, size_t at, size_t len,
		       struct jw_sweep_insn *in)
{
	uint32_t insn;

	if (len - at < sizeof(insn))
		return false;
	memcpy(&insn, code + at, sizeof(insn));
	in->len = sizeof(insn);
	in->flow = flow(insn, &in->branches, &in->target);
	in->target += (int64_t)at;
	if (in->flow == JW_SWEEP_NEXT && !effect(w, insn))
		in->flow = JW_SWEEP_LOST;
	return true;
}

/* The frame a sweep's state says: where the return address and the saved registers are. */
static int to_frame(const struct jw_sweep *w, struct jw_arch_frame *frame)
{
	unsigned int i;

	if (w->sp > 0)
		return -ENOENT;
	memset(frame, 0, sizeof(*frame));
	frame->ra_reg = LR;
	frame->cfa_at = -w->sp;
	for (i = 0; i < w->n_saved; i++) {
		if (w->saved[i].at - w->sp < 0)
			continue;	/* below sp: not a frame slot */
		if (w->saved[i].reg == LR) {
			frame->ra_reg = -1;
			frame->ra_at = w->saved[i].at - w->sp;
			continue;
		}
		frame->saved[frame->n_saved].dwarf_reg = w->saved[i].reg;
		frame->saved[frame->n_saved++].at = w->saved[i].at - w->sp;
	}
	return 0;
}

int jw_arch_prologue_frame(const uint8_t *code, size_t len, struct jw_arch_frame *frame)
{
	struct jw_sweep w;
	int ret;

	if (len % 4)
		return -ENOENT;
	ret = jw_sweep_code(code, len, sweep_step, &w, NULL);
	return ret ? ret : to_frame(&w, frame);
}

size_t jw_arch_prologue_guesses(const uint8_t *code, size_t len, struct jw_arch_frame *frames,
				size_t max)
{
	return len % 4 ? 0 : jw_sweep_guesses(code, len, sweep_step, to_frame, frames, max);
}

bool jw_arch_after_call(const uint8_t *code, size_t len)
{
	uint32_t insn;

	if (len < sizeof(insn))
		return false;
	memcpy(&insn, code + len - sizeof(insn), sizeof(insn));
	return (insn & 0xfc000000) == 0x94000000 ||	/* bl */
	       (insn & 0xfffffc1f) == 0xd63f0000 ||	/* blr */
	       (insn & 0xfffff81f) == 0xd63f081f ||	/* blraaz, blrabz */
	       (insn & 0xfffff800) == 0xd73f0800;	/* blraa, blrab */
}
