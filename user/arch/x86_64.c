// SPDX-License-Identifier: GPL-2.0-only
/* x86-64 (see arch.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "arch/arch.h"
#include "arch/x86_64_insn.h"

/* The wait system calls (bpf/arch/x86.h has them too). */
const long jw_arch_wait_syscalls[] = { 7, 23, 232, 270, 271, 281, 441 };
const char *const jw_arch_wait_syscall_names[] = {
	"poll", "select", "epoll_wait", "pselect6", "ppoll", "epoll_pwait", "epoll_pwait2",
};
const size_t jw_arch_n_wait_syscalls =
	sizeof(jw_arch_wait_syscalls) / sizeof(jw_arch_wait_syscalls[0]);
_Static_assert(sizeof(jw_arch_wait_syscall_names) / sizeof(jw_arch_wait_syscall_names[0]) ==
	       sizeof(jw_arch_wait_syscalls) / sizeof(jw_arch_wait_syscalls[0]),
	       "a name for each wait system call's number");

/* ---- Probe placement: the instructions at a function's entry ---- */

static const char *const regs64[16] = {
	"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
};

/*
 * Sets what a write to register @reg means for placement: never passed when it is rsp or rbp
 * (the stack and its frame chain); passed only where no probe reads the arguments when it is
 * one of their registers (rdi, rsi, rdx, rcx, r8, r9); else passed.
 */
static void set_dest(unsigned int reg, struct jw_arch_insn *in)
{
	in->kind = reg == 4 || reg == 5 ? JW_INSN_UNKNOWN : JW_INSN_SKIPPABLE;
	in->writes_arg = reg == 1 || reg == 2 || reg == 6 || reg == 7 || reg == 8 || reg == 9;
}

enum writes {
	WRITES_FLAGS,	/* cmp, test: only the flags */
	WRITES_REG,	/* the ModRM reg field's register */
	WRITES_RM,	/* the ModRM r/m operand, when it is a register (never memory) */
	WRITES_MEM,	/* the ModRM r/m operand, when it is memory (never a register) */
};

/* The instructions that read and write only the flags or one register, by opcode. */
static const struct {
	unsigned int op;	/* 0x0f xx as 0x1xx */
	const char *name;
	enum writes writes;
	int digit;		/* the ModRM reg field it needs (an opcode extension), or -1 */
	int imm;		/* immediate bytes; 4 means 2 under the operand-size prefix */
	bool reg_only;		/* its r/m must be a register */
} alu_ops[] = {
	{ 0x8b, "mov", WRITES_REG, -1, 0, false },
	{ 0x89, "mov", WRITES_RM, -1, 0, true },
	{ 0x8d, "lea", WRITES_REG, -1, 0, false },
	{ 0x1b6, "movzb", WRITES_REG, -1, 0, false },
	{ 0x1b7, "movzw", WRITES_REG, -1, 0, false },
	{ 0x1be, "movsb", WRITES_REG, -1, 0, false },
	{ 0x1bf, "movsw", WRITES_REG, -1, 0, false },
	{ 0x63, "movslq", WRITES_REG, -1, 0, false },
	{ 0x31, "xor", WRITES_RM, -1, 0, true },
	{ 0x33, "xor", WRITES_REG, -1, 0, true },
	{ 0x38, "cmp", WRITES_FLAGS, -1, 0, false },
	{ 0x39, "cmp", WRITES_FLAGS, -1, 0, false },
	{ 0x3a, "cmp", WRITES_FLAGS, -1, 0, false },
	{ 0x3b, "cmp", WRITES_FLAGS, -1, 0, false },
	{ 0x84, "test", WRITES_FLAGS, -1, 0, false },
	{ 0x85, "test", WRITES_FLAGS, -1, 0, false },
	{ 0x80, "cmp", WRITES_FLAGS, 7, 1, false },
	{ 0x83, "cmp", WRITES_FLAGS, 7, 1, false },
	{ 0x81, "cmp", WRITES_FLAGS, 7, 4, false },
	{ 0xf6, "test", WRITES_FLAGS, 0, 1, false },
	{ 0xf7, "test", WRITES_FLAGS, 0, 4, false },
	{ 0x83, "add", WRITES_RM, 0, 1, true },
	{ 0x83, "sub", WRITES_RM, 5, 1, true },
	{ 0x81, "add", WRITES_RM, 0, 4, true },
	{ 0x81, "sub", WRITES_RM, 5, 4, true },
	/* stores: passed only at a return site (JW_INSN_STORES) */
	{ 0x89, "mov", WRITES_MEM, -1, 0, false },
	{ 0x88, "mov", WRITES_MEM, -1, 0, false },
	{ 0x83, "add", WRITES_MEM, 0, 1, false },
	{ 0x83, "sub", WRITES_MEM, 5, 1, false },
	{ 0x81, "add", WRITES_MEM, 0, 4, false },
	{ 0x81, "sub", WRITES_MEM, 5, 4, false },
	{ 0xc7, "mov", WRITES_MEM, 0, 4, false },
	{ 0xc6, "mov", WRITES_MEM, 0, 1, false },
};

/* Writes "%reg" or "mem" for ModRM operand @modrm (with @rex) to @buf. */
static const char *rm_text(unsigned int modrm, unsigned int rex, char *buf, size_t size)
{
	if (modrm >> 6 != 3)
		return "mem";
	snprintf(buf, size, "%%%s", regs64[(modrm & 7) | (rex & 1) << 3]);
	return buf;
}

/*
 * Instructions that read registers or memory and write nothing but the flags or one register
 * (set_dest() says which may be passed): mov, movzx/movsx, lea; cmp and test with a register or
 * an immediate; xor of registers; add and sub of an immediate to a register; mov of an
 * immediate. And stores, which write memory and no register (JW_INSN_STORES): mov to memory,
 * add and sub of an immediate there. An optional operand-size prefix, then an optional REX one.
 * False when @p is none of them; a known one that writes rbp or rsp is decoded as
 * JW_INSN_UNKNOWN, so that -v can say what stopped the placement.
 */
static bool decode_scratch(const uint8_t *p, size_t len, struct jw_arch_insn *in)
{
	unsigned int rex = 0, op, modrm, reg, dst = 0;
	bool opsize = false;
	size_t i = 0, m, imm, k;
	char rmbuf[8];

	if (i < len && p[i] == 0x66) {
		opsize = true;
		i++;
	}
	if (i < len && (p[i] & 0xf0) == 0x40)
		rex = p[i++];
	if (i >= len)
		return false;
	op = p[i++];
	if (op >= 0xb8 && op <= 0xbf) {
		imm = rex & 8 ? 8 : opsize ? 2 : 4;
		if (len < i + imm)
			return false;
		dst = (op - 0xb8) | (rex & 1) << 3;
		in->len = i + imm;
		snprintf(in->text, sizeof(in->text), "mov $imm,%%%s", regs64[dst]);
		set_dest(dst, in);
		return true;
	}
	if (op == 0x0f) {
		if (i >= len)
			return false;
		op = 0x100 | p[i++];
	}
	m = i < len ? jw_x86_modrm_len(p + i, len - i) : 0;
	if (!m)
		return false;
	modrm = p[i];
	reg = (modrm >> 3 & 7) | (rex & 4) << 1;
	/* The first row of the opcode, its extension and its operand's kind (register, memory). */
	for (k = 0; k < sizeof(alu_ops) / sizeof(alu_ops[0]); k++)
		if (alu_ops[k].op == op &&
		    (alu_ops[k].digit < 0 || (modrm >> 3 & 7) == (unsigned int)alu_ops[k].digit) &&
		    !((alu_ops[k].reg_only || alu_ops[k].writes == WRITES_RM) && modrm >> 6 != 3) &&
		    !(alu_ops[k].writes == WRITES_MEM && modrm >> 6 == 3))
			break;
	if (k == sizeof(alu_ops) / sizeof(alu_ops[0]))
		return false;
	imm = alu_ops[k].imm == 4 && opsize ? 2 : (size_t)alu_ops[k].imm;
	if (len < i + m + imm)
		return false;
	in->len = i + m + imm;
	if (alu_ops[k].digit >= 0)
		snprintf(in->text, sizeof(in->text), "%s $imm,%s", alu_ops[k].name,
			 rm_text(modrm, rex, rmbuf, sizeof(rmbuf)));
	else if (alu_ops[k].writes == WRITES_RM || alu_ops[k].writes == WRITES_MEM)
		snprintf(in->text, sizeof(in->text), "%s %%%s,%s", alu_ops[k].name, regs64[reg],
			 rm_text(modrm, rex, rmbuf, sizeof(rmbuf)));
	else
		snprintf(in->text, sizeof(in->text), "%s %s,%%%s", alu_ops[k].name,
			 rm_text(modrm, rex, rmbuf, sizeof(rmbuf)), regs64[reg]);
	switch (alu_ops[k].writes) {
	case WRITES_FLAGS:
		in->kind = JW_INSN_SKIPPABLE;
		return true;
	case WRITES_MEM:
		in->kind = JW_INSN_STORES;
		return true;
	case WRITES_REG:
		dst = reg;
		break;
	case WRITES_RM:
		dst = (modrm & 7) | (rex & 1) << 3;
		break;
	}
	set_dest(dst, in);
	return true;
}

void jw_arch_decode_entry(const uint8_t *p, size_t len, struct jw_arch_insn *in)
{
	static const struct {
		uint8_t bytes[6];
		size_t len;
		const char *text;
	} nops[] = {
		{ { 0xf3, 0x0f, 0x1e, 0xfa }, 4, "endbr64" },
		{ { 0x90 }, 1, "nop" },
		{ { 0x66, 0x90 }, 2, "xchg %ax,%ax" },
		{ { 0x0f, 0x1f, 0x00 }, 3, "nopl (%rax)" },
		{ { 0x0f, 0x1f, 0x40, 0x00 }, 4, "nopl 0x0(%rax)" },
		{ { 0x0f, 0x1f, 0x44, 0x00, 0x00 }, 5, "nopl 0x0(%rax,%rax,1)" },
		{ { 0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00 }, 6, "nopw 0x0(%rax,%rax,1)" },
	};
	size_t i, o;

	memset(in, 0, sizeof(*in));
	/* What the decoder does not know is shown as its first bytes. */
	snprintf(in->text, sizeof(in->text), "nothing");
	for (i = 0, o = 0; i < len && i < 4; i++)
		o += snprintf(in->text + o, sizeof(in->text) - o, "%s%02x", i ? " " : "", p[i]);
	if (len > 4)
		snprintf(in->text + o, sizeof(in->text) - o, " ...");
	for (i = 0; i < sizeof(nops) / sizeof(nops[0]); i++) {
		if (len >= nops[i].len && !memcmp(p, nops[i].bytes, nops[i].len)) {
			in->kind = JW_INSN_SKIPPABLE;
			in->len = nops[i].len;
			snprintf(in->text, sizeof(in->text), "%s", nops[i].text);
			return;
		}
	}
	if (len >= 1 && p[0] >= 0x50 && p[0] <= 0x57) {
		in->kind = JW_INSN_EMULATED;
		in->len = 1;
		snprintf(in->text, sizeof(in->text), "push %%%s", regs64[p[0] - 0x50]);
	} else if (len >= 2 && p[0] == 0x41 && p[1] >= 0x50 && p[1] <= 0x57) {
		in->kind = JW_INSN_EMULATED;
		in->len = 2;
		snprintf(in->text, sizeof(in->text), "push %%%s", regs64[8 + p[1] - 0x50]);
	} else if (len >= 5 && (p[0] == 0xe8 || p[0] == 0xe9)) {
		in->kind = JW_INSN_EMULATED;
		in->len = 5;
		in->jumps = p[0] == 0xe9;
		in->rel = (int32_t)((uint32_t)p[1] | (uint32_t)p[2] << 8 | (uint32_t)p[3] << 16 |
				    (uint32_t)p[4] << 24);
		snprintf(in->text, sizeof(in->text), "%s", p[0] == 0xe8 ? "call" : "jmp");
	} else if (len >= 2 && (p[0] == 0xeb || (p[0] >= 0x70 && p[0] <= 0x7f))) {
		in->kind = JW_INSN_EMULATED;
		in->len = 2;
		in->jumps = true;
		in->rel = (int8_t)p[1];
		snprintf(in->text, sizeof(in->text), "%s", p[0] == 0xeb ? "jmp" : "jcc");
	} else if (len >= 6 && p[0] == 0x0f && p[1] >= 0x80 && p[1] <= 0x8f) {
		in->kind = JW_INSN_EMULATED;
		in->len = 6;
		in->jumps = true;
		in->rel = (int32_t)((uint32_t)p[2] | (uint32_t)p[3] << 8 | (uint32_t)p[4] << 16 |
				    (uint32_t)p[5] << 24);
		snprintf(in->text, sizeof(in->text), "jcc");
	} else {
		decode_scratch(p, len, in);
	}
}

/* ---- The calls among a function's instructions (handler sites; lengths: x86_64_insn.c) ---- */

unsigned int jw_arch_arg_reg(unsigned int i)
{
	static const unsigned int args[] = { 5, 4, 1, 2 };	/* rdi rsi rdx rcx */

	return args[i < 4 ? i : 0];
}

/* ModRM's register numbers (rax rcx rdx rbx rsp rbp rsi rdi r8-r15) in DWARF numbering. */

/*
 * The register a 64-bit "mov rel(%rip),%reg" or "lea rel(%rip),%reg" (@from: -1) or "mov
 * disp(%base),%reg" (@from: base) loads; -1 when @in is no such load.
 */
static int load_of(const struct jw_x86_insn *in, int *from)
{
	unsigned int m;

	if ((in->op != 0x8b && in->op != 0x8d) || !(in->rex & 8) || !in->modrm)
		return -1;
	m = *in->modrm;
	if ((m & 0xc7) == 0x05)
		*from = -1;
	else if (in->op == 0x8b && m >> 6 != 3 && (m & 7) != 4 && (m & 0xc7) != 0x05)
		*from = (int)((m & 7) | (in->rex & 1 ? 8 : 0));
	else
		return -1;
	return (int)(((m >> 3) & 7) | (in->rex & 4 ? 8 : 0));
}

bool jw_arch_unprobeable(const uint8_t *p, size_t len)
{
	size_t i;

	/* The kernel's is_prefix_bad(): lock, and the es, cs, ss and ds overrides. */
	for (i = 0; i < len && i < 15; i++) {
		if (p[i] == 0xf0 || p[i] == 0x26 || p[i] == 0x2e || p[i] == 0x36 || p[i] == 0x3e)
			return true;
		if (!(p[i] == 0x66 || p[i] == 0x67 || p[i] == 0xf2 || p[i] == 0xf3 ||
		      p[i] == 0x64 || p[i] == 0x65))
			return false;
	}
	return false;
}

int jw_arch_plt_slot(const uint8_t *stub, size_t len, uint64_t addr, uint64_t *slot)
{
	static const uint8_t endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };
	size_t i = 0;

	if (len >= 4 && !memcmp(stub, endbr64, 4))
		i = 4;
	if (i < len && stub[i] == 0xf2)		/* bnd */
		i++;
	if (i + 6 > len || stub[i] != 0xff || stub[i + 1] != 0x25)
		return -ENOENT;
	*slot = addr + i + 6 +
		(int64_t)(int32_t)((uint32_t)stub[i + 2] | (uint32_t)stub[i + 3] << 8 |
				   (uint32_t)stub[i + 4] << 16 | (uint32_t)stub[i + 5] << 24);
	return 0;
}

/* The argument registers (rdi rsi rdx rcx), hardware numbers. */
static const unsigned int arg_hw[JW_ARCH_CALL_ARGS] = { 7, 6, 2, 1 };

/* What the argument registers hold, as the instructions before a call tell (jw_arch_call). */
struct arg_facts {
	int copy_hw[JW_ARCH_CALL_ARGS];		/* a copy of this register (hardware); -1 */
	bool known[JW_ARCH_CALL_ARGS];
	int64_t imm[JW_ARCH_CALL_ARGS];
};

static void args_forget(struct arg_facts *a)
{
	unsigned int i;

	for (i = 0; i < JW_ARCH_CALL_ARGS; i++) {
		a->copy_hw[i] = -1;
		a->known[i] = false;
		a->imm[i] = 0;
	}
}

/*
 * What instruction @in, no call, makes of @a: "mov $imm,%reg" and "xor %reg,%reg" give an
 * argument a constant, "mov %src,%reg" a copy; whatever else it may write forgets what was known
 * of that register, and of the copies of it.
 */
static void args_track(const struct jw_x86_insn *in, struct arg_facts *a)
{
	unsigned int written = jw_x86_may_write(in), i, m = in->modrm ? *in->modrm : 0;
	int dst = -1, src = -1;
	int64_t imm = 0;
	bool is_imm = false;

	if (in->op >= 0xb8 && in->op <= 0xbf && in->imm && !(in->rex & 8)) {
		dst = (int)((in->op & 7) | (in->rex & 1 ? 8 : 0));	/* mov $imm32,%r32 */
		imm = (int64_t)(uint32_t)((uint32_t)in->imm[0] | (uint32_t)in->imm[1] << 8 |
					  (uint32_t)in->imm[2] << 16 | (uint32_t)in->imm[3] << 24);
		is_imm = true;
	} else if (in->modrm && m >> 6 == 3 && (in->op == 0x31 || in->op == 0x33) &&
		   (m & 7) == ((m >> 3) & 7) && !(in->rex & 1) == !(in->rex & 4)) {
		dst = (int)((m & 7) | (in->rex & 1 ? 8 : 0));		/* xor %reg,%reg */
		is_imm = true;
	} else if (in->modrm && m >> 6 == 3 && (in->rex & 8) &&
		   (in->op == 0x89 || in->op == 0x8b)) {			/* mov %src,%dst */
		int r = (int)(((m >> 3) & 7) | (in->rex & 4 ? 8 : 0));
		int rm = (int)((m & 7) | (in->rex & 1 ? 8 : 0));

		dst = in->op == 0x89 ? rm : r;
		src = in->op == 0x89 ? r : rm;
	}
	for (i = 0; i < JW_ARCH_CALL_ARGS; i++) {
		if (written >> arg_hw[i] & 1) {
			a->copy_hw[i] = -1;
			a->known[i] = false;
		}
		if (a->copy_hw[i] >= 0 && (written >> a->copy_hw[i] & 1))
			a->copy_hw[i] = -1;
		if (dst == (int)arg_hw[i]) {
			a->copy_hw[i] = src;
			a->known[i] = is_imm;
			a->imm[i] = imm;
		}
	}
}

static void args_of_call(const struct arg_facts *a, struct jw_arch_call *c)
{
	unsigned int i;

	for (i = 0; i < JW_ARCH_CALL_ARGS; i++) {
		c->arg_copy[i] = a->copy_hw[i] >= 0 ? jw_x86_dwarf_reg[a->copy_hw[i]] : -1;
		c->arg_known[i] = a->known[i];
		c->arg_imm[i] = a->imm[i];
	}
}

int jw_arch_scan_entries(const uint8_t *code, size_t len, uint64_t addr,
			 int (*fn)(uint64_t entry, void *ctx), void *ctx)
{
	struct jw_arch_call c;
	struct jw_x86_insn in;
	size_t at = 0;
	int32_t rel;
	int ret;

	while (at < len) {
		if (!jw_x86_decode(code + at, len - at, &in) || !in.len) {
			at++;
			continue;
		}
		ret = 0;
		if (jw_x86_as_call(&in, at, 0, &c) && !c.indirect) {	/* call rel32 */
			ret = fn(addr + (uint64_t)c.target, ctx);
		} else if (in.op == 0x8d && in.modrm && (*in.modrm & 0xc7) == 0x05) {
			memcpy(&rel, in.modrm + 1, sizeof(rel));	/* lea rel32(%rip), reg */
			ret = fn(addr + at + in.len + (uint64_t)(int64_t)rel, ctx);
		}
		if (ret)
			return ret;
		at += in.len;
	}
	return 0;
}

int jw_arch_scan_calls(const uint8_t *code, size_t len,
		       int (*fn)(const struct jw_arch_call *call, void *ctx), void *ctx)
{
	/* Registers last loaded from a fixed address, and through one of those (a table's entry). */
	unsigned int fixed = 0, through = 0;
	struct arg_facts args;
	struct jw_arch_call c;
	struct jw_x86_insn in;
	size_t at = 0;
	int ret, dest, from;

	args_forget(&args);
	while (at < len) {
		if (!jw_x86_decode(code + at, len - at, &in)) {
			fixed = through = 0;
			args_forget(&args);
			at++;
			continue;
		}
		if (jw_x86_as_call(&in, at, fixed | through, &c)) {
			args_of_call(&args, &c);
			c.via_reg = c.mem ? c.reg : -1;
			c.via_disp = c.disp;
			ret = fn(&c, ctx);
			if (ret)
				return ret;
			fixed &= ~JW_X86_CALL_CLOBBERED;
			through &= ~JW_X86_CALL_CLOBBERED;
			args_forget(&args);
		} else {
			args_track(&in, &args);
			/* After a jump or a return, what follows is reached from elsewhere. */
			if (in.op == 0xe9 || in.op == 0xeb || in.op == 0xc3 || in.op == 0xc2)
				args_forget(&args);
			dest = load_of(&in, &from);
			if (dest >= 0 && from >= 0 && !(fixed >> from & 1))
				dest = -1;
			fixed &= ~jw_x86_may_write(&in);
			through &= ~jw_x86_may_write(&in);
			if (dest >= 0 && from < 0)
				fixed |= 1u << dest;
			else if (dest >= 0)
				through |= 1u << dest;
		}
		at += in.len;
	}
	return 0;
}

int jw_arch_scan_jumps(const uint8_t *code, size_t len, int (*fn)(int64_t target, void *ctx),
		       void *ctx)
{
	struct jw_x86_insn in;
	const uint8_t *end;
	size_t at = 0;
	int32_t rel;
	int ret;

	while (at < len) {
		if (!jw_x86_decode(code + at, len - at, &in)) {
			at++;
			continue;
		}
		end = code + at + in.len;
		ret = 0;
		if (in.op == 0xeb || (in.op >= 0x70 && in.op <= 0x7f)) {	/* rel8 */
			ret = fn(at + in.len + (int8_t)end[-1], ctx);
		} else if (in.op == 0xe9 ||					/* jmp rel32 */
			   (!in.op && in.len >= 6 && end[-6] == 0x0f &&		/* jcc rel32 */
			    (end[-5] & 0xf0) == 0x80)) {
			memcpy(&rel, end - 4, sizeof(rel));
			ret = fn(at + in.len + rel, ctx);
		}
		if (ret)
			return ret;
		at += in.len;
	}
	return 0;
}

/* ---- The wait-cost measurement's functions (waitcost.h) ---- */

/*
 * Two functions to put the uprobe pair on, each beginning with the kind of instruction whose
 * cost is wanted: a push, which the kernel emulates at a probe, and a register move, which it
 * single-steps out of line. In assembly, so that no compiler changes their first instruction.
 */
__asm__(".pushsection .text\n"
	".globl jw_arch_cost_emulated\n"
	".globl jw_arch_cost_stepped\n"
	".type jw_arch_cost_emulated, @function\n"
	"jw_arch_cost_emulated:\n"
	"	push %rbp\n"
	"	pop %rbp\n"
	"	ret\n"
	".size jw_arch_cost_emulated, .-jw_arch_cost_emulated\n"
	".type jw_arch_cost_stepped, @function\n"
	"jw_arch_cost_stepped:\n"
	"	mov %rdi, %rax\n"
	"	ret\n"
	".size jw_arch_cost_stepped, .-jw_arch_cost_stepped\n"
	".popsection\n");

/* x86-64: PAGE_SIZE << (2 + KASAN_STACK_ORDER), and no padding above the registers. */
uint32_t jw_arch_thread_size(long page_size, bool kasan)
{
	(void)page_size;
	return kasan ? 32768 : 16384;
}

const char *jw_arch_syscall_prefix(void)
{
	return "__x64_sys_";
}
