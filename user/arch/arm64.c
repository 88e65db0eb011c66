// SPDX-License-Identifier: GPL-2.0-only
/* arm64 (see arch.h). Instructions are 4 bytes, little-endian. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "arch/arch.h"

/* The wait system calls: no poll, select or epoll_wait (bpf/arch/arm64.h has them too). */
const long jw_arch_wait_syscalls[] = { 22, 72, 73, 441 };
const char *const jw_arch_wait_syscall_names[] = {
	"epoll_pwait", "pselect6", "ppoll", "epoll_pwait2",
};
const size_t jw_arch_n_wait_syscalls =
	sizeof(jw_arch_wait_syscalls) / sizeof(jw_arch_wait_syscalls[0]);
_Static_assert(sizeof(jw_arch_wait_syscall_names) / sizeof(jw_arch_wait_syscall_names[0]) ==
	       sizeof(jw_arch_wait_syscalls) / sizeof(jw_arch_wait_syscalls[0]),
	       "a name for each wait system call's number");

static uint32_t insn_at(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* mov Xd, Xm (orr Xd, xzr, Xm): @d, or -1 when @w is not one with Xm == @m. */
static int mov_from(uint32_t w, unsigned int m)
{
	return (w & 0xffe0ffe0) == 0xaa0003e0 && (w >> 16 & 31) == m ? (int)(w & 31) : -1;
}

/* ldr Xt, [Xn, #imm] (64-bit, unsigned offset): true with its fields. */
static bool ldr_imm(uint32_t w, unsigned int *t, unsigned int *n, uint32_t *off)
{
	if ((w & 0xffc00000) != 0xf9400000)
		return false;
	*t = w & 31;
	*n = w >> 5 & 31;
	*off = (w >> 10 & 0xfff) * 8;
	return true;
}

/*
 * redis's call(client *c): "mov xR, x0 ... ldr xA, [xR, #D1] ... ldr xB, [xA, #D2] ... blr xB"
 * gives c->cmd at D1 and cmd->proc at D2.
 */
int jw_arch_derive_call_chain(const uint8_t *code, size_t len, struct jw_arg_chain *chain)
{
	size_t n = len / 4, i, j, k;
	int reg = -1;

	for (i = 0; i < n && i < 24 && reg < 0; i++) {
		reg = mov_from(insn_at(code + 4 * i), 0);
		if (reg < 19 || reg > 28)	/* only a callee-saved register keeps c */
			reg = -1;
	}
	if (reg < 0)
		return -ENOENT;
	for (j = i; j < n; j++) {
		unsigned int a, an, b, bn;
		uint32_t d1, d2;

		if (!ldr_imm(insn_at(code + 4 * j), &a, &an, &d1) || an != (unsigned int)reg)
			continue;
		for (k = j + 1; k < n && k <= j + 8; k++) {
			uint32_t w = insn_at(code + 4 * k);

			if (!ldr_imm(w, &b, &bn, &d2) || bn != a)
				continue;
			for (k++; k < n && k <= j + 16; k++) {
				if (insn_at(code + 4 * k) != (0xd63f0000 | b << 5))
					continue;
				memset(chain, 0, sizeof(*chain));
				chain->handler.reg = jw_arch_arg_reg(0);
				chain->handler.n_offsets = 2;
				chain->handler.offsets[0] = d1;
				chain->handler.offsets[1] = d2;
				chain->kind = JW_HANDLER_CODE;
				return 0;
			}
			break;
		}
	}
	return -ENOENT;
}

int jw_arch_derive_member_call(const uint8_t *code, size_t len, int32_t call_disp, int32_t *field)
{
	size_t n = len / 4, i, j;
	unsigned int t, base, t2, base2;
	uint32_t off, off2;

	for (i = 0; i < n && i < 32; i++) {
		if (!ldr_imm(insn_at(code + 4 * i), &t, &base, &off) || base != 0 || t == 0)
			continue;
		for (j = i + 1; j < n && j <= i + 12; j++)
			if (ldr_imm(insn_at(code + 4 * j), &t2, &base2, &off2) && base2 == t &&
			    off2 == (uint32_t)call_disp) {
				*field = (int32_t)off;
				return 0;
			}
		return -ENOENT;
	}
	return -ENOENT;
}

int jw_arch_tail_call_field(const uint8_t *code, size_t len, int32_t *field)
{
	/* Per register: holding x0 as the function got it (@arg), or loaded from its field. */
	uint32_t arg = 1, loaded = 0, w, off, bit;
	size_t n = len / 4, i;
	int32_t from[32] = { 0 };
	unsigned int t, base, d;

	for (i = 0; i < n && i < 12; i++) {
		w = insn_at(code + 4 * i);
		if ((w & 0xfffffc1f) == 0xd61f0000) {			/* br xR */
			t = w >> 5 & 31;
			if (!(loaded >> t & 1))
				return -ENOENT;
			*field = from[t];
			return 0;
		}
		/* b, bl, b.cond, cbz/cbnz, tbz/tbnz, blr, ret: the straight line ends */
		if ((w & 0x7c000000) == 0x14000000 || (w & 0xff000010) == 0x54000000 ||
		    (w & 0x7e000000) == 0x34000000 || (w & 0x7e000000) == 0x36000000 ||
		    (w & 0xfe000000) == 0xd6000000)
			return -ENOENT;
		/* a store writes no register; anything else is taken to write its Rd */
		if ((w & 0x3b000000) == 0x39000000 && !(w >> 22 & 3))
			continue;
		d = w & 31;
		bit = 1u << d;
		if (ldr_imm(w, &t, &base, &off) && (arg >> base & 1)) {
			arg &= ~bit;					/* ldr xT, [xA, #F] */
			loaded |= bit;
			from[d] = (int32_t)off;
		} else if ((w & 0xffe0ffe0) == 0xaa0003e0) {		/* mov xD, xS */
			t = w >> 16 & 31;
			arg = (arg & ~bit) | (arg >> t & 1) << d;
			loaded = (loaded & ~bit) | (loaded >> t & 1) << d;
			from[d] = from[t];
		} else {
			arg &= ~bit;
			loaded &= ~bit;
		}
	}
	return -ENOENT;
}

int jw_arch_signal_emitter(const uint8_t *code, size_t len, uint64_t addr, uint64_t stub,
			   uint64_t *slot)
{
	uint64_t page[31] = { 0 }, pending = 0, pc, target;
	uint32_t has_page = 0, w;
	size_t n = len / 4, i;
	bool loaded = false;
	int64_t imm;

	for (i = 0; i < n; i++) {
		w = insn_at(code + 4 * i);
		pc = addr + 4 * i;
		if ((w & 0x7c000000) == 0x14000000) {				/* b, bl */
			imm = (int64_t)((uint64_t)(w & 0x3ffffff) << 38) >> 36;
			target = pc + (uint64_t)imm;
			if (loaded && target == stub) {
				*slot = pending;
				return 0;
			}
			loaded = false;
			has_page &= w >> 31 ? ~0x7ffffu : ~0u;	/* bl: x0-x18 clobbered */
			continue;
		}
		if ((w & 0x9f000000) == 0x90000000 && (w & 31) < 31) {		/* adrp xN, page */
			imm = (int64_t)((uint64_t)(((w >> 5) & 0x7ffff) << 2 | (w >> 29 & 3)) << 43) >>
			      31;
			page[w & 31] = (pc & ~0xfffULL) + (uint64_t)imm;
			has_page |= 1u << (w & 31);
			if ((w & 31) == 1)
				loaded = false;
			continue;
		}
		if ((w & 0xffc0001f) == 0xb9400001 && (has_page >> (w >> 5 & 31) & 1)) {
			/* ldr w1, [xN, #off] */
			pending = page[w >> 5 & 31] + ((w >> 10) & 0xfff) * 4;
			loaded = true;
			continue;
		}
		/* a store writes no register; anything else is taken to write its Rd */
		if ((w & 0x3b000000) == 0x39000000 && !(w >> 22 & 3))
			continue;
		if ((w & 31) < 31)
			has_page &= ~(1u << (w & 31));
		if ((w & 31) == 1 || (w & 0xfffffc1f) == 0xd65f0000 ||
		    (w & 0xfe000000) == 0xd6000000)
			loaded = false;
	}
	return -ENOENT;
}

int jw_arch_first_field_load(const uint8_t *code, size_t len, int32_t *field)
{
	size_t n = len / 4, i;
	unsigned int t, base;
	uint32_t w, off;

	for (i = 0; i < n && i < 32; i++) {
		w = insn_at(code + 4 * i);
		if (ldr_imm(w, &t, &base, &off) && base == 0) {
			*field = (int32_t)off;
			return 0;
		}
		/* x0 written (any Rd), or a return */
		if ((w & 31) == 0 && !((w & 0x3b000000) == 0x39000000 && !(w >> 22 & 3)) &&
		    (w & 0xfc000000) != 0x14000000 && (w & 0xff000010) != 0x54000000 &&
		    (w & 0x7e000000) != 0x34000000 && (w & 0x7e000000) != 0x36000000)
			return -ENOENT;
		if ((w & 0xfffffc1f) == 0xd65f0000)
			return -ENOENT;
	}
	return -ENOENT;
}

/* ---- Instruction lengths, and the calls among them (handler sites) ---- */

unsigned int jw_arch_arg_reg(unsigned int i)
{
	return i < 4 ? i : 0;	/* x0, x1, x2, x3 */
}

size_t jw_arch_insn_len(const uint8_t *p, size_t len)
{
	(void)p;
	return len >= 4 ? 4 : 0;
}

bool jw_arch_unprobeable(const uint8_t *p, size_t len)
{
	(void)p;
	(void)len;
	return false;
}

int jw_arch_plt_slot(const uint8_t *stub, size_t len, uint64_t addr, uint64_t *slot)
{
	uint32_t adrp, ldr;
	int64_t page;

	if (len < 8)
		return -ENOENT;
	adrp = insn_at(stub);
	ldr = insn_at(stub + 4);
	/* adrp x16, page; ldr x17, [x16, #lo] */
	if ((adrp & 0x9f00001f) != 0x90000010 || (ldr & 0xffc003ff) != 0xf9400211)
		return -ENOENT;
	page = (int64_t)((uint64_t)(((adrp >> 5) & 0x7ffff) << 2 | (adrp >> 29 & 3)) << 43) >> 31;
	*slot = (addr & ~0xfffULL) + (uint64_t)page + ((ldr >> 10) & 0xfff) * 8;
	return 0;
}

/*
 * How a register's value came from a fixed place, as the instructions before tell: the page of
 * adrp, an address in it (add), a value loaded from there (a GOT entry: a global's address; or a
 * global), and one loaded through that (an entry of a global table).
 */
enum fixed { NOT_FIXED, FIXED_PAGE, FIXED_ADDR, FIXED_LOADED, FIXED_TABLE };

/* What instruction @w, no call, makes of the registers' states @st. */
static void track_fixed(uint32_t w, uint8_t st[32])
{
	unsigned int d = w & 31, n = w >> 5 & 31, t;
	uint32_t off;
	uint8_t from = st[n];

	if ((w & 0x9f000000) == 0x90000000) {		/* adrp */
		st[d] = FIXED_PAGE;
	} else if ((w & 0xffc00000) == 0x91000000) {	/* add Xd, Xn, #imm */
		st[d] = from == FIXED_PAGE ? FIXED_ADDR : NOT_FIXED;
	} else if (ldr_imm(w, &t, &n, &off)) {
		st[t] = from == FIXED_PAGE || from == FIXED_ADDR ? FIXED_LOADED :
			from == FIXED_LOADED ? FIXED_TABLE : NOT_FIXED;
	} else {
		/* Anything else may write the register in its low bits; a pair, the second too. */
		st[d] = NOT_FIXED;
		if ((w & 0x3a000000) == 0x28000000)
			st[w >> 10 & 31] = NOT_FIXED;
	}
}

/* The signed field of @bits bits at bit @lo of @w, in instructions: a branch's offset in bytes. */
static int64_t branch_offset(uint32_t w, unsigned int lo, unsigned int bits)
{
	int64_t v = (w >> lo) & ((1u << bits) - 1);

	if (v & (1LL << (bits - 1)))
		v -= 1LL << bits;
	return v * 4;
}

int jw_arch_scan_jumps(const uint8_t *code, size_t len, int (*fn)(int64_t target, void *ctx),
		       void *ctx)
{
	size_t at;
	int ret;

	for (at = 0; at + 4 <= len; at += 4) {
		uint32_t w = insn_at(code + at);
		int64_t off;

		if ((w & 0xfc000000) == 0x14000000)		/* b */
			off = branch_offset(w, 0, 26);
		else if ((w & 0xff000010) == 0x54000000 ||	/* b.cond */
			 (w & 0x7e000000) == 0x34000000)	/* cbz, cbnz */
			off = branch_offset(w, 5, 19);
		else if ((w & 0x7e000000) == 0x36000000)	/* tbz, tbnz */
			off = branch_offset(w, 5, 14);
		else
			continue;
		ret = fn((int64_t)at + off, ctx);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * What the registers hold as the instructions before a call tell (jw_arch_call): a copy of
 * another (@copy), a constant (@known, @imm), or a value loaded from base + displacement
 * (@ld_base, @ld_off); -1 and false when not known.
 */
struct reg_facts {
	int8_t copy[32];
	bool known[32];
	int64_t imm[32];
	int8_t ld_base[32];
	int32_t ld_off[32];
};

static void facts_forget_all(struct reg_facts *f)
{
	memset(f->copy, -1, sizeof(f->copy));
	memset(f->known, 0, sizeof(f->known));
	memset(f->ld_base, -1, sizeof(f->ld_base));
}

/* Register @r is written: what was known of it, and of what copied or loaded through it, goes. */
static void facts_write(struct reg_facts *f, unsigned int r)
{
	unsigned int i;

	if (r >= 31)
		return;		/* xzr or sp */
	f->copy[r] = -1;
	f->known[r] = false;
	f->ld_base[r] = -1;
	for (i = 0; i < 31; i++) {
		if (f->copy[i] == (int)r)
			f->copy[i] = -1;
		if (f->ld_base[i] == (int)r)
			f->ld_base[i] = -1;
	}
}

/* What instruction @w, no call, makes of @f. */
static void facts_track(uint32_t w, struct reg_facts *f)
{
	unsigned int d = w & 31, t, n;
	uint32_t off;
	int m;

	if ((w & 0x7f800000) == 0x52800000) {		/* movz w/x, #imm16, lsl #hw */
		facts_write(f, d);
		f->known[d] = true;
		f->imm[d] = (int64_t)((uint64_t)(w >> 5 & 0xffff) << ((w >> 21 & 3) * 16));
	} else if ((w & 0x7fe0ffe0) == 0x2a0003e0 && (w >> 16 & 31) == 31) {
		/* mov xD, xzr (or wD, wzr): 0 */
		facts_write(f, d);
		f->known[d] = true;
		f->imm[d] = 0;
	} else if ((w & 0xffe0ffe0) == 0xaa0003e0) {	/* mov xD, xM */
		m = (int)(w >> 16 & 31);
		facts_write(f, d);
		f->copy[d] = (int8_t)(m < 31 ? m : -1);
	} else if (ldr_imm(w, &t, &n, &off)) {
		facts_write(f, t);
		if (n != t && n < 31) {
			f->ld_base[t] = (int8_t)n;
			f->ld_off[t] = (int32_t)off;
		}
	} else if ((w & 0xffc00000) == 0xa9400000) {	/* ldp xT1, xT2, [xN, #imm] */
		unsigned int t2 = w >> 10 & 31;
		int32_t imm = ((int32_t)(w << 10) >> 25) * 8;

		n = w >> 5 & 31;
		facts_write(f, d);
		facts_write(f, t2);
		if (n < 31 && n != d && n != t2) {
			f->ld_base[d] = (int8_t)n;
			f->ld_off[d] = imm;
			f->ld_base[t2] = (int8_t)n;
			f->ld_off[t2] = imm + 8;
		}
	} else if ((w & 0x3a000000) == 0x28000000) {	/* ldp, stp */
		if (w & (1u << 22)) {
			facts_write(f, d);
			facts_write(f, w >> 10 & 31);
		}
		if (w & (1u << 23))				/* pre- or post-indexed */
			facts_write(f, w >> 5 & 31);
	} else if ((w & 0x3b000000) == 0x39000000) {	/* ldr/str, unsigned offset */
		if (w >> 22 & 3)
			facts_write(f, d);
	} else if ((w & 0x3b200000) == 0x38000000 || (w & 0x3b200c00) == 0x38200800) {
		/* ldr/str with a 9-bit offset (pre- or post-indexed too), or a register offset */
		if (w >> 22 & 3)
			facts_write(f, d);
		if (!(w & (1u << 21)) && (w >> 10 & 1))		/* pre- or post-indexed */
			facts_write(f, w >> 5 & 31);
	} else {
		/* Anything else may write its Rd: forgotten, a pair's second too. */
		facts_write(f, d);
	}
}

/* How long an adrp's page stays in its register for the add that takes an address from it. */
#define ADRP_WINDOW 8

int jw_arch_scan_entries(const uint8_t *code, size_t len, uint64_t addr,
			 int (*fn)(uint64_t entry, void *ctx), void *ctx)
{
	uint64_t page[32];
	size_t at, left[32] = { 0 };	/* instructions the page in each register holds for */
	unsigned int r;
	int ret;

	for (at = 0; at + 4 <= len; at += 4) {
		uint32_t w = insn_at(code + at);
		uint64_t target = 0;
		bool found = false;

		for (r = 0; r < 32; r++)
			left[r] -= left[r] > 0;
		if ((w & 0xfc000000) == 0x94000000) {			/* bl */
			target = addr + at + (uint64_t)((int64_t)((int32_t)(w << 6) >> 6) * 4);
			found = true;
		} else if ((w & 0x9f000000) == 0x90000000) {		/* adrp xD */
			uint64_t imm = (uint64_t)(((w >> 5) & 0x7ffff) << 2 | ((w >> 29) & 3));

			/* 21 bits of pages, signed: 33 bits of bytes */
			page[w & 31] = ((addr + at) & ~(uint64_t)0xfff) +
				       (uint64_t)((int64_t)(imm << 43) >> 31);
			left[w & 31] = ADRP_WINDOW;
			continue;
		} else if ((w & 0xffc00000) == 0x91000000 && left[(w >> 5) & 31]) {
			/* add xD, xN, #imm12 (no shift), xN an adrp's page */
			target = page[(w >> 5) & 31] + ((w >> 10) & 0xfff);
			found = true;
		}
		/*
		 * What the instruction may write ends a page: its Rd, and a load or store's Rt2
		 * and base (a pair, a write-back); a call or a branch, every one.
		 */
		left[w & 31] = 0;
		if ((w & 0x0a000000) == 0x08000000)
			left[(w >> 10) & 31] = left[(w >> 5) & 31] = 0;
		if ((w & 0x7c000000) == 0x14000000 || (w & 0xfe000000) == 0xd6000000 ||
		    (w & 0x7e000000) == 0x34000000 || (w & 0x7e000000) == 0x36000000 ||
		    (w & 0xff000010) == 0x54000000)
			memset(left, 0, sizeof(left));
		if (!found)
			continue;
		ret = fn(target, ctx);
		if (ret)
			return ret;
	}
	return 0;
}

int jw_arch_scan_calls(const uint8_t *code, size_t len,
		       int (*fn)(const struct jw_arch_call *call, void *ctx), void *ctx)
{
	uint8_t st[32] = { 0 };
	struct reg_facts facts;
	struct jw_arch_call c;
	size_t at;
	unsigned int i;
	int ret;

	facts_forget_all(&facts);
	for (at = 0; at + 4 <= len; at += 4) {
		uint32_t w = insn_at(code + at);

		memset(&c, 0, sizeof(c));
		c.at = at;
		c.len = 4;
		c.via_reg = -1;
		for (i = 0; i < JW_ARCH_CALL_ARGS; i++) {
			c.arg_copy[i] = facts.copy[i];
			c.arg_known[i] = facts.known[i];
			c.arg_imm[i] = facts.imm[i];
		}
		if ((w & 0xfc000000) == 0x94000000) {		/* bl */
			c.target = (int64_t)at + (int64_t)((int32_t)(w << 6) >> 6) * 4;
		} else if ((w & 0xfffffc1f) == 0xd63f0000 ||	/* blr */
			   (w & 0xfffff81f) == 0xd63f081f) {	/* blraaz, blrabz */
			c.indirect = true;
			c.reg = w >> 5 & 31;
			c.via_global = st[c.reg] >= FIXED_LOADED;
			if (facts.ld_base[c.reg] >= 0) {
				c.via_reg = facts.ld_base[c.reg];
				c.via_disp = facts.ld_off[c.reg];
			}
		} else {
			track_fixed(w, st);
			facts_track(w, &facts);
			/* After a branch or a return, what follows is reached from elsewhere. */
			if ((w & 0xfc000000) == 0x14000000 || (w & 0xfffffc1f) == 0xd65f0000 ||
			    (w & 0xfffffc1f) == 0xd61f0000)
				facts_forget_all(&facts);
			continue;
		}
		ret = fn(&c, ctx);
		if (ret)
			return ret;
		/* A call may change x0-x18 and the link register. */
		memset(st, NOT_FIXED, 19);
		st[30] = NOT_FIXED;
		for (i = 0; i <= 18; i++)
			facts_write(&facts, i);
		facts_write(&facts, 30);
	}
	return 0;
}

/* ---- Probe placement: the instructions at a function's entry ---- */

/*
 * What the arm64 kernel does at a uprobe (arch/arm64/kernel/probes/decode-insn.c): it simulates
 * branches (b, bl, b.cond, cbz/cbnz, tbz/tbnz, br, blr, ret) and adr/adrp, and single-steps
 * everything else out of line, the prologue's stp and sub included; nop only from 6.13. A
 * return probe replaces the link register at the probe, so the probe may pass only what leaves
 * x30 and sp alone, and the argument registers a probe may read: nop and bti. Never paciasp: the
 * function would then authenticate the trampoline's address, signed with its own.
 */
static int32_t sign_extend(uint32_t v, unsigned int bits)
{
	return (int32_t)(v << (32 - bits)) >> (32 - bits);
}

void jw_arch_decode_entry(const uint8_t *p, size_t len, struct jw_arch_insn *in)
{
	uint32_t w;

	memset(in, 0, sizeof(*in));
	if (len < 4) {
		snprintf(in->text, sizeof(in->text), "nothing");
		return;
	}
	w = insn_at(p);
	in->len = 4;
	snprintf(in->text, sizeof(in->text), "%08x", w);
	if (w == 0xd503201f) {
		in->kind = JW_INSN_SKIPPABLE;
		snprintf(in->text, sizeof(in->text), "nop");
	} else if ((w & 0xffffff3f) == 0xd503241f) {
		in->kind = JW_INSN_SKIPPABLE;
		snprintf(in->text, sizeof(in->text), "bti");
	} else if ((w & 0x7c000000) == 0x14000000) {
		/* b / bl imm26 */
		in->kind = JW_INSN_EMULATED;
		in->jumps = !(w >> 31);
		in->rel = sign_extend(w & 0x3ffffff, 26) * 4 - 4;
		snprintf(in->text, sizeof(in->text), "%s", w >> 31 ? "bl" : "b");
	} else if ((w & 0xff000010) == 0x54000000) {
		/* b.cond imm19 */
		in->kind = JW_INSN_EMULATED;
		in->jumps = true;
		in->rel = sign_extend(w >> 5 & 0x7ffff, 19) * 4 - 4;
		snprintf(in->text, sizeof(in->text), "b.cond");
	} else if ((w & 0x7e000000) == 0x34000000) {
		/* cbz / cbnz imm19 */
		in->kind = JW_INSN_EMULATED;
		in->jumps = true;
		in->rel = sign_extend(w >> 5 & 0x7ffff, 19) * 4 - 4;
		snprintf(in->text, sizeof(in->text), "%s", w >> 24 & 1 ? "cbnz" : "cbz");
	} else if ((w & 0x7e000000) == 0x36000000) {
		/* tbz / tbnz imm14 */
		in->kind = JW_INSN_EMULATED;
		in->jumps = true;
		in->rel = sign_extend(w >> 5 & 0x3fff, 14) * 4 - 4;
		snprintf(in->text, sizeof(in->text), "%s", w >> 24 & 1 ? "tbnz" : "tbz");
	} else if ((w & 0x1f000000) == 0x10000000) {
		in->kind = JW_INSN_EMULATED;
		snprintf(in->text, sizeof(in->text), "%s", w >> 31 ? "adrp" : "adr");
	} else if (w == 0xd503233f) {
		snprintf(in->text, sizeof(in->text), "paciasp");
	} else if ((w & 0xffc003e0) == 0xa98003e0) {
		snprintf(in->text, sizeof(in->text), "stp ..., [sp, #-N]!");
	} else if ((w & 0xff0003ff) == 0xd10003ff) {
		snprintf(in->text, sizeof(in->text), "sub sp, sp, #N");
	}
}

/* ---- The wait-cost measurement's functions (waitcost.h) ---- */

/*
 * Two functions to put the uprobe pair on, each beginning with the kind of instruction whose
 * cost is wanted: a branch, which the kernel simulates at a probe, and a register move, which
 * it single-steps out of line. In assembly, so that no compiler changes their first instruction.
 */
__asm__(".pushsection .text\n"
	".globl jw_arch_cost_emulated\n"
	".globl jw_arch_cost_stepped\n"
	".type jw_arch_cost_emulated, %function\n"
	"jw_arch_cost_emulated:\n"
	"	b 1f\n"
	"1:	ret\n"
	".size jw_arch_cost_emulated, .-jw_arch_cost_emulated\n"
	".type jw_arch_cost_stepped, %function\n"
	"jw_arch_cost_stepped:\n"
	"	mov x1, x0\n"
	"	ret\n"
	".size jw_arch_cost_stepped, .-jw_arch_cost_stepped\n"
	".popsection\n");

/* arm64: 1 << (14 + KASAN_THREAD_SHIFT), or a page where pages are larger (64 KiB). */
uint32_t jw_arch_thread_size(long page_size, bool kasan)
{
	uint32_t size = kasan ? 32768 : 16384;

	return page_size > (long)size ? (uint32_t)page_size : size;
}

const char *jw_arch_syscall_prefix(void)
{
	return "__arm64_sys_";
}
