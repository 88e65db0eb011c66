// SPDX-License-Identifier: GPL-2.0-only
/* Where a uprobe on a function's entry costs least: past what would be single-stepped. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "process/placement.h"

#define CODE_BYTES 32	/* enough for a few skippable instructions and the one after */
#define MAX_SKIPPED 4

enum insn_kind {
	INSN_UNKNOWN = 0,	/* not decoded: single-stepped, and nothing past it is known */
	INSN_SKIPPABLE,		/* leaves rsp, memory and the argument registers alone */
	INSN_EMULATED,		/* the kernel emulates it at a probe */
};

struct insn {
	enum insn_kind kind;
	size_t len;
	char text[32];
	bool jumps;		/* a jmp or jcc: @rel is its displacement */
	int32_t rel;
};

static const char *const regs64[16] = {
	"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
};

/*
 * A write may be passed when it goes to a scratch register nobody reads at the entry: not rsp
 * or rbp (the stack and its frame chain), not an argument register (rdi, rsi, rdx, rcx, r8,
 * r9), whose value the probe may read.
 */
static bool scratch_dest(unsigned int reg)
{
	return reg == 0 || reg == 3 || reg >= 10;
}

/*
 * The length of the ModRM operand at @p (the ModRM byte, a SIB byte, a displacement), of which
 * @len bytes are there; 0 when they are not all there.
 */
static size_t modrm_len(const uint8_t *p, size_t len)
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

enum writes {
	WRITES_FLAGS,	/* cmp, test: only the flags */
	WRITES_REG,	/* the ModRM reg field's register */
	WRITES_RM,	/* the ModRM r/m operand, when it is a register (never memory) */
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
 * Instructions that read registers or memory and write nothing but the flags or a scratch
 * register: mov, movzx/movsx, lea; cmp and test with a register or an immediate; xor of
 * registers; mov of an immediate. An optional operand-size prefix, then an optional REX one.
 * False when @p is none of them; a known one that writes an argument register, rbp or rsp is
 * decoded as INSN_UNKNOWN, so that -v can say what stopped the placement.
 */
static bool decode_scratch(const uint8_t *p, size_t len, struct insn *in)
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
		in->kind = scratch_dest(dst) ? INSN_SKIPPABLE : INSN_UNKNOWN;
		return true;
	}
	if (op == 0x0f) {
		if (i >= len)
			return false;
		op = 0x100 | p[i++];
	}
	for (k = 0; k < sizeof(alu_ops) / sizeof(alu_ops[0]); k++)
		if (alu_ops[k].op == op)
			break;
	if (k == sizeof(alu_ops) / sizeof(alu_ops[0]))
		return false;
	m = modrm_len(p + i, len - i);
	if (!m)
		return false;
	modrm = p[i];
	reg = (modrm >> 3 & 7) | (rex & 4) << 1;
	if (alu_ops[k].digit >= 0 && (modrm >> 3 & 7) != (unsigned int)alu_ops[k].digit)
		return false;
	if ((alu_ops[k].reg_only || alu_ops[k].writes == WRITES_RM) && modrm >> 6 != 3)
		return false;
	imm = alu_ops[k].imm == 4 && opsize ? 2 : (size_t)alu_ops[k].imm;
	if (len < i + m + imm)
		return false;
	in->len = i + m + imm;
	if (alu_ops[k].digit >= 0)
		snprintf(in->text, sizeof(in->text), "%s $imm,%s", alu_ops[k].name,
			 rm_text(modrm, rex, rmbuf, sizeof(rmbuf)));
	else if (alu_ops[k].writes == WRITES_RM)
		snprintf(in->text, sizeof(in->text), "%s %%%s,%s", alu_ops[k].name, regs64[reg],
			 rm_text(modrm, rex, rmbuf, sizeof(rmbuf)));
	else
		snprintf(in->text, sizeof(in->text), "%s %s,%%%s", alu_ops[k].name,
			 rm_text(modrm, rex, rmbuf, sizeof(rmbuf)), regs64[reg]);
	switch (alu_ops[k].writes) {
	case WRITES_FLAGS:
		in->kind = INSN_SKIPPABLE;
		return true;
	case WRITES_REG:
		dst = reg;
		break;
	case WRITES_RM:
		dst = (modrm & 7) | (rex & 1) << 3;
		break;
	}
	in->kind = scratch_dest(dst) ? INSN_SKIPPABLE : INSN_UNKNOWN;
	return true;
}

/* Decodes the one instruction at @p: only what the placement needs to know. */
static void decode(const uint8_t *p, size_t len, struct insn *in)
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
			in->kind = INSN_SKIPPABLE;
			in->len = nops[i].len;
			snprintf(in->text, sizeof(in->text), "%s", nops[i].text);
			return;
		}
	}
	if (len >= 1 && p[0] >= 0x50 && p[0] <= 0x57) {
		in->kind = INSN_EMULATED;
		in->len = 1;
		snprintf(in->text, sizeof(in->text), "push %%%s", regs64[p[0] - 0x50]);
	} else if (len >= 2 && p[0] == 0x41 && p[1] >= 0x50 && p[1] <= 0x57) {
		in->kind = INSN_EMULATED;
		in->len = 2;
		snprintf(in->text, sizeof(in->text), "push %%%s", regs64[8 + p[1] - 0x50]);
	} else if (len >= 5 && (p[0] == 0xe8 || p[0] == 0xe9)) {
		in->kind = INSN_EMULATED;
		in->len = 5;
		in->jumps = p[0] == 0xe9;
		in->rel = (int32_t)((uint32_t)p[1] | (uint32_t)p[2] << 8 | (uint32_t)p[3] << 16 |
				    (uint32_t)p[4] << 24);
		snprintf(in->text, sizeof(in->text), "%s", p[0] == 0xe8 ? "call" : "jmp");
	} else if (len >= 2 && (p[0] == 0xeb || (p[0] >= 0x70 && p[0] <= 0x7f))) {
		in->kind = INSN_EMULATED;
		in->len = 2;
		in->jumps = true;
		in->rel = (int8_t)p[1];
		snprintf(in->text, sizeof(in->text), "%s", p[0] == 0xeb ? "jmp" : "jcc");
	} else if (len >= 6 && p[0] == 0x0f && p[1] >= 0x80 && p[1] <= 0x8f) {
		in->kind = INSN_EMULATED;
		in->len = 6;
		in->jumps = true;
		in->rel = (int32_t)((uint32_t)p[2] | (uint32_t)p[3] << 8 | (uint32_t)p[4] << 16 |
				    (uint32_t)p[5] << 24);
		snprintf(in->text, sizeof(in->text), "jcc");
	} else {
		decode_scratch(p, len, in);
	}
}

void jw_probe_place(const uint8_t *code, size_t len, struct jw_placement *out)
{
	struct insn first, in;
	size_t off = 0;
	int n;

	memset(out, 0, sizeof(*out));
#if defined(__x86_64__)
	decode(code, len, &first);
	if (first.kind == INSN_EMULATED) {
		out->emulated = true;
		snprintf(out->why, sizeof(out->why), "on the entry: %s is emulated", first.text);
		return;
	}
	in = first;
	for (n = 0; n < MAX_SKIPPED && in.kind == INSN_SKIPPABLE; n++) {
		off += in.len;
		decode(code + off, len - off, &in);
	}
	if (off && in.kind == INSN_EMULATED && in.jumps &&
	    (int64_t)off + (int64_t)in.len + in.rel >= 0 &&
	    (int64_t)off + (int64_t)in.len + in.rel <= (int64_t)off) {
		/* A loop back over the probe would hit it again in the same call. */
		snprintf(out->why, sizeof(out->why), "on the entry: %s is single-stepped, and the "
			 "%s after it jumps back to the entry", first.text, in.text);
		return;
	}
	if (off && in.kind == INSN_EMULATED) {
		out->skip = off;
		out->emulated = true;
		snprintf(out->why, sizeof(out->why), "+%zu: past %s%s to %s, which is emulated "
			 "(%s is single-stepped)", off, first.text, n > 1 ? " and what follows" : "",
			 in.text, first.text);
		return;
	}
	snprintf(out->why, sizeof(out->why), "on the entry: %s is single-stepped, and no emulated "
		 "instruction follows what can be passed", first.text);
#else
	(void)code;
	(void)len;
	(void)first;
	(void)in;
	(void)off;
	(void)n;
	snprintf(out->why, sizeof(out->why), "on the entry");
#endif
}

int jw_probe_place_file(const char *path, uint64_t offset, struct jw_placement *out)
{
	uint8_t code[CODE_BYTES];
	ssize_t n = -1;
	int fd, ret = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = pread(fd, code, sizeof(code), (off_t)offset);
		if (n < 0)
			ret = -errno;
		close(fd);
	} else {
		ret = -errno;
	}
	jw_probe_place(code, n > 0 ? (size_t)n : 0, out);
	return ret;
}
