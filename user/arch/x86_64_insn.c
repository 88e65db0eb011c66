// SPDX-License-Identifier: GPL-2.0-only
/* x86-64 instruction lengths (see x86_64_insn.h). */
#include <stdbool.h>
#include <string.h>

#include "arch/arch.h"
#include "arch/x86_64_insn.h"

size_t jw_x86_modrm_len(const uint8_t *p, size_t len)
{
	unsigned int mod, rm;
	size_t n = 1;

	if (len < 1)
		return 0;
	mod = p[0] >> 6;
	rm = p[0] & 7;
	if (mod == 3)
		return 1;
	if (rm == 4) {
		/* A SIB byte; its base 101 under mod 00 means a disp32 and no base. */
		n = 2;
		if (len >= 2 && mod == 0 && (p[1] & 7) == 5)
			n += 4;
	} else if (mod == 0 && rm == 5) {
		n += 4;		/* RIP-relative */
	}
	n += mod == 1 ? 1 : mod == 2 ? 4 : 0;
	return n <= len ? n : 0;
}

/* Immediate sizes beyond a byte count. */
#define IMM_Z 16	/* 4, or 2 under the operand-size prefix */
#define IMM_V 17	/* mov $imm,%reg: 8 with REX.W, else as IMM_Z */
#define IMM_MOFFS 18	/* an absolute address: 8, or 4 under the address-size prefix */
#define IMM_GRP3 19	/* test $imm (f6/f7 /0 and /1): 1 for f6, IMM_Z for f7; else none */

/* The one-byte opcode @op: whether it has a ModRM byte, its immediate; false if invalid. */
static bool one_byte_op(unsigned int op, bool *modrm, int *imm)
{
	*modrm = false;
	*imm = 0;
	if (op < 0x40) {
		switch (op & 7) {
		case 0: case 1: case 2: case 3:
			*modrm = true;
			return true;
		case 4:
			*imm = 1;
			return true;
		case 5:
			*imm = IMM_Z;
			return true;
		default:
			return false;	/* prefixes were taken before; the rest is invalid */
		}
	}
	switch (op) {
	case 0x50 ... 0x5f: case 0x6c ... 0x6f: case 0x90 ... 0x99: case 0x9b ... 0x9f:
	case 0xa4 ... 0xa7: case 0xaa ... 0xaf: case 0xc3: case 0xc9: case 0xcb: case 0xcc:
	case 0xcf: case 0xd7: case 0xec ... 0xef: case 0xf1: case 0xf4: case 0xf5:
	case 0xf8 ... 0xfd:
		return true;
	case 0x63: case 0x84 ... 0x8f: case 0xd0 ... 0xd3: case 0xd8 ... 0xdf: case 0xfe:
	case 0xff:
		*modrm = true;
		return true;
	case 0x6a: case 0x70 ... 0x7f: case 0xa8: case 0xb0 ... 0xb7: case 0xcd:
	case 0xe0 ... 0xe7: case 0xeb:
		*imm = 1;
		return true;
	case 0x68: case 0xa9:
		*imm = IMM_Z;
		return true;
	case 0x69: case 0x81: case 0xc7:
		*modrm = true;
		*imm = IMM_Z;
		return true;
	case 0x6b: case 0x80: case 0x83: case 0xc0: case 0xc1: case 0xc6:
		*modrm = true;
		*imm = 1;
		return true;
	case 0xa0 ... 0xa3:
		*imm = IMM_MOFFS;
		return true;
	case 0xb8 ... 0xbf:
		*imm = IMM_V;
		return true;
	case 0xc2: case 0xca:
		*imm = 2;
		return true;
	case 0xc8:
		*imm = 3;
		return true;
	case 0xe8: case 0xe9:
		*imm = 4;
		return true;
	case 0xf6: case 0xf7:
		*modrm = true;
		*imm = IMM_GRP3;
		return true;
	default:
		return false;
	}
}

/* The same for 0f @op (0f 38 and 0f 3a are taken before). */
static bool two_byte_op(unsigned int op, bool *modrm, int *imm)
{
	*modrm = true;
	*imm = 0;
	switch (op) {
	case 0x04: case 0x0a: case 0x0c: case 0x24 ... 0x27: case 0x36: case 0x39:
	case 0x3b ... 0x3f:
		return false;
	case 0x05 ... 0x09: case 0x0b: case 0x0e: case 0x30 ... 0x35: case 0x37: case 0x77:
	case 0xa0 ... 0xa2: case 0xa8 ... 0xaa: case 0xc8 ... 0xcf:
		*modrm = false;
		return true;
	case 0x80 ... 0x8f:
		*modrm = false;
		*imm = 4;
		return true;
	case 0x0f: case 0x70 ... 0x73: case 0xa4: case 0xac: case 0xba: case 0xc2:
	case 0xc4 ... 0xc6:
		*imm = 1;
		return true;
	default:
		return true;
	}
}

/* A VEX or EVEX instruction's opcode @op in map @map: its immediate (all have a ModRM byte). */
static bool vex_op(unsigned int map, unsigned int op, bool *modrm, int *imm)
{
	*modrm = !(map == 1 && op == 0x77);	/* vzeroupper, vzeroall */
	*imm = map == 3 || (map == 1 && ((op >= 0x70 && op <= 0x73) || op == 0xc2 ||
					 (op >= 0xc4 && op <= 0xc6)));
	return map >= 1 && map <= 6 && map != 4;
}

static bool is_legacy_prefix(uint8_t b)
{
	return b == 0x66 || b == 0x67 || b == 0xf0 || b == 0xf2 || b == 0xf3 || b == 0x2e ||
	       b == 0x36 || b == 0x3e || b == 0x26 || b == 0x64 || b == 0x65;
}

bool jw_x86_decode(const uint8_t *p, size_t len, struct jw_x86_insn *in)
{
	bool opsize = false, addrsize = false, has_modrm;
	size_t i = 0, n;
	int imm;

	memset(in, 0, sizeof(*in));
	for (; i < len && i < 14 && is_legacy_prefix(p[i]); i++) {
		opsize |= p[i] == 0x66;
		addrsize |= p[i] == 0x67;
	}
	if (i < len && (p[i] & 0xf0) == 0x40)
		in->rex = p[i++];
	if (i >= len)
		return false;
	if (p[i] == 0xc5 || p[i] == 0xc4 || p[i] == 0x62) {
		/* c5 RvvvvLpp, c4 RXBmmmmm WvvvvLpp, 62 and three payload bytes; then the opcode */
		size_t payload = p[i] == 0xc5 ? 1 : p[i] == 0xc4 ? 2 : 3;
		unsigned int map;

		if (in->rex || i + payload + 1 >= len)
			return false;
		map = p[i] == 0xc5 ? 1 : p[i + 1] & (p[i] == 0x62 ? 7 : 31);
		if (!vex_op(map, p[i + payload + 1], &has_modrm, &imm))
			return false;
		in->map = map;
		in->map_op = p[i + payload + 1];
		i += payload + 2;
	} else if (p[i] == 0x0f) {
		if (i + 1 >= len)
			return false;
		if (p[i + 1] == 0x38 || p[i + 1] == 0x3a) {
			if (i + 2 >= len)
				return false;
			has_modrm = true;
			imm = p[i + 1] == 0x3a;
			in->map = p[i + 1] == 0x38 ? 2 : 3;
			in->map_op = p[i + 2];
			i += 3;
		} else {
			if (!two_byte_op(p[i + 1], &has_modrm, &imm))
				return false;
			in->map = 1;
			in->map_op = p[i + 1];
			i += 2;
		}
	} else {
		in->op = in->map_op = p[i];
		if (!one_byte_op(p[i], &has_modrm, &imm))
			return false;
		i++;
	}
	if (has_modrm) {
		if (i >= len)
			return false;
		in->modrm = p + i;
		n = jw_x86_modrm_len(p + i, len - i);
		if (!n)
			return false;
		i += n;
	}
	switch (imm) {
	case IMM_Z:
		imm = opsize && !(in->rex & 8) ? 2 : 4;
		break;
	case IMM_V:
		imm = in->rex & 8 ? 8 : opsize ? 2 : 4;
		break;
	case IMM_MOFFS:
		imm = addrsize ? 4 : 8;
		break;
	case IMM_GRP3:
		imm = ((*in->modrm >> 3) & 7) > 1 ? 0 : in->op == 0xf6 ? 1 : opsize ? 2 : 4;
		break;
	}
	in->imm = imm ? p + i : NULL;
	i += imm;
	if (i > 15 || i > len)
		return false;
	in->len = i;
	return true;
}

size_t jw_arch_insn_len(const uint8_t *p, size_t len)
{
	struct jw_x86_insn in;

	return jw_x86_decode(p, len, &in) ? in.len : 0;
}

/* ---- What a decoded instruction does ---- */

const int jw_x86_dwarf_reg[16] = { 0, 2, 1, 3, 7, 6, 4, 5, 8, 9, 10, 11, 12, 13, 14, 15 };

/*
 * Whether @in (at @at) is a call, described in @c, with @global the registers (hardware
 * numbers) last loaded from a fixed address.
 */
bool jw_x86_as_call(const struct jw_x86_insn *in, size_t at, unsigned int global,
		    struct jw_arch_call *c)
{
	unsigned int mod, rm, base, index, sib, hw;
	const uint8_t *d;

	memset(c, 0, sizeof(*c));
	c->at = at;
	c->len = in->len;
	if (in->op == 0xe8) {
		c->target = (int64_t)(at + in->len) +
			    (int32_t)((uint32_t)in->imm[0] | (uint32_t)in->imm[1] << 8 |
				      (uint32_t)in->imm[2] << 16 | (uint32_t)in->imm[3] << 24);
		return true;
	}
	if (in->op != 0xff || ((*in->modrm >> 3) & 7) != 2)
		return false;
	c->indirect = true;
	mod = *in->modrm >> 6;
	rm = *in->modrm & 7;
	c->reg = -1;
	if (mod == 3) {
		hw = rm | (in->rex & 1 ? 8 : 0);
		c->reg = jw_x86_dwarf_reg[hw];
		c->via_global = global >> hw & 1;
		return true;
	}
	c->mem = true;
	sib = rm == 4;
	if (sib) {
		base = in->modrm[1] & 7;
		index = (in->modrm[1] >> 3) & 7;
		if (index != 4 || (in->rex & 2) || (base == 5 && mod == 0))
			return true;	/* indexed, or no base */
		rm = base;
	} else if (rm == 5 && mod == 0) {
		c->via_global = true;	/* RIP-relative: a GOT slot, a global */
		return true;
	}
	hw = rm | (in->rex & 1 ? 8 : 0);
	c->reg = jw_x86_dwarf_reg[hw];
	c->via_global = global >> hw & 1;
	d = in->modrm + 1 + sib;
	if (mod == 1)
		c->disp = (int8_t)d[0];
	else if (mod == 2)
		c->disp = (int32_t)((uint32_t)d[0] | (uint32_t)d[1] << 8 | (uint32_t)d[2] << 16 |
				    (uint32_t)d[3] << 24);
	return true;
}

/* Registers as masks by hardware number. */
#define REG_AX 0x0001u
#define REG_CX 0x0002u
#define REG_DX 0x0004u
#define REG_SI 0x0040u
#define REG_DI 0x0080u

/*
 * The registers (hardware numbers) instruction @in may write, over-counted: whatever its ModRM
 * names as a register, the one in its opcode, and the implicit ones of the few that have them.
 */
unsigned int jw_x86_may_write(const struct jw_x86_insn *in)
{
	unsigned int op = in->op, mask = 0;

	if (in->modrm) {
		unsigned int m = *in->modrm;

		/* the reg field, unless it is an opcode extension or the source of a store/compare */
		if (!(op == 0x88 || op == 0x89 || op == 0x38 || op == 0x39 || op == 0x84 ||
		      op == 0x85 || (op >= 0x80 && op <= 0x83) || op == 0xc0 || op == 0xc1 ||
		      (op >= 0xd0 && op <= 0xd3) || op == 0xc6 || op == 0xc7 || op == 0xf6 ||
		      op == 0xf7 || op == 0xfe || op == 0xff))
			mask |= 1u << (((m >> 3) & 7) | (in->rex & 4 ? 8 : 0));
		if (m >> 6 == 3)
			mask |= 1u << ((m & 7) | (in->rex & 1 ? 8 : 0));
		if (op == 0xf6 || op == 0xf7 || !op)	/* mul, div; cmpxchg and the like */
			mask |= REG_AX | REG_DX;
		return mask;
	}
	if ((op >= 0x58 && op <= 0x5f) || (op >= 0x90 && op <= 0x97) || (op >= 0xb0 && op <= 0xbf))
		mask |= 1u << ((op & 7) | (in->rex & 1 ? 8 : 0));	/* pop, xchg, mov $imm */
	if (op >= 0x90 && op <= 0x97)
		mask |= REG_AX;
	if (op == 0x90 && !(in->rex & 1))
		mask = 0;					/* nop */
	if (op >= 0xa0 && op <= 0xa3)
		mask |= REG_AX;					/* mov moffs */
	if (op == 0xa8 || op == 0xa9)
		return 0;					/* test $imm,%al/%eax */
	/* movs, cmps, stos, lods, scas (a rep prefix counts rcx down): musl's memcpy is one */
	if (op >= 0xa4 && op <= 0xaf)
		return REG_SI | REG_DI | REG_CX | (op == 0xac || op == 0xad ? REG_AX : 0);
	if (op == 0x98)
		mask |= REG_AX;		/* cbw, cwde, cdqe (cltq) */
	if (op == 0x99)
		mask |= REG_DX;		/* cwd, cdq, cqo */
	if (op == 0xc9 || !op)
		mask = 0xffffu;		/* leave, 0f-map ops: anything */
	return mask;
}
