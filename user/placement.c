// SPDX-License-Identifier: GPL-2.0-only
/* Where a uprobe on a function's entry costs least: past what would be single-stepped. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "placement.h"

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
};

static const char *const regs64[16] = {
	"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
};

/*
 * A register move may be passed when it writes a scratch register nobody reads at the entry:
 * not rsp or rbp (the stack and its frame chain), not an argument register (rdi, rsi, rdx, rcx,
 * r8, r9), whose value the probe may read.
 */
static bool scratch_dest(unsigned int reg)
{
	return reg == 0 || reg == 3 || reg >= 10;
}

/* A register-to-register mov (89 /r or 8b /r, mod 11), with an optional REX prefix. */
static bool decode_mov(const uint8_t *p, size_t len, struct insn *in)
{
	unsigned int rex = 0, modrm, dst, src;
	size_t i = 0;

	if (len >= 1 && (p[0] & 0xf0) == 0x40)
		rex = p[i++];
	if (len < i + 2 || (p[i] != 0x89 && p[i] != 0x8b) || (p[i + 1] & 0xc0) != 0xc0)
		return false;
	modrm = p[i + 1];
	if (p[i] == 0x89) {	/* mov reg, r/m: the r/m register is written */
		dst = (modrm & 7) | (rex & 1) << 3;
		src = (modrm >> 3 & 7) | (rex & 4) << 1;
	} else {		/* mov r/m, reg: the reg register is written */
		dst = (modrm >> 3 & 7) | (rex & 4) << 1;
		src = (modrm & 7) | (rex & 1) << 3;
	}
	in->len = i + 2;
	snprintf(in->text, sizeof(in->text), "mov %%%s,%%%s", regs64[src], regs64[dst]);
	in->kind = scratch_dest(dst) ? INSN_SKIPPABLE : INSN_UNKNOWN;
	return true;
}

/*
 * Instructions that only set flags or a scratch register: cmp of a RIP-relative byte, word or
 * quad with an immediate (glibc's syscall wrappers begin with one, for
 * __libc_single_threaded), test and xor of two registers, mov of an immediate.
 */
static bool decode_scratch(const uint8_t *p, size_t len, struct insn *in)
{
	unsigned int rex = 0, dst;
	size_t i = 0;

	if (len >= 1 && (p[0] & 0xf0) == 0x40)
		rex = p[i++];
	if (len >= i + 7 && (p[i] == 0x80 || p[i] == 0x83) && p[i + 1] == 0x3d) {
		in->len = i + 7;
		snprintf(in->text, sizeof(in->text), "cmp $0x%x,disp(%%rip)", p[i + 6]);
		in->kind = INSN_SKIPPABLE;
		return true;
	}
	if (len >= i + 2 && (p[i] == 0x85 || p[i] == 0x31 || p[i] == 0x33) &&
	    (p[i + 1] & 0xc0) == 0xc0) {
		dst = p[i] == 0x33 ? (p[i + 1] >> 3 & 7) | (rex & 4) << 1 :
				     (p[i + 1] & 7) | (rex & 1) << 3;
		in->len = i + 2;
		snprintf(in->text, sizeof(in->text), "%s %%%s", p[i] == 0x85 ? "test" : "xor",
			 regs64[dst]);
		/* test writes no register at all */
		in->kind = p[i] == 0x85 || scratch_dest(dst) ? INSN_SKIPPABLE : INSN_UNKNOWN;
		return true;
	}
	if (len >= i + 5 && p[i] >= 0xb8 && p[i] <= 0xbf && !(rex & 8)) {
		dst = (p[i] - 0xb8) | (rex & 1) << 3;
		in->len = i + 5;
		snprintf(in->text, sizeof(in->text), "mov $imm,%%%s", regs64[dst]);
		in->kind = scratch_dest(dst) ? INSN_SKIPPABLE : INSN_UNKNOWN;
		return true;
	}
	return false;
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
		snprintf(in->text, sizeof(in->text), "%s", p[0] == 0xe8 ? "call" : "jmp");
	} else if (len >= 2 && (p[0] == 0xeb || (p[0] >= 0x70 && p[0] <= 0x7f))) {
		in->kind = INSN_EMULATED;
		in->len = 2;
		snprintf(in->text, sizeof(in->text), "%s", p[0] == 0xeb ? "jmp" : "jcc");
	} else if (len >= 6 && p[0] == 0x0f && p[1] >= 0x80 && p[1] <= 0x8f) {
		in->kind = INSN_EMULATED;
		in->len = 6;
		snprintf(in->text, sizeof(in->text), "jcc");
	} else if (!decode_mov(p, len, in)) {
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
		snprintf(out->why, sizeof(out->why), "on the entry: %s is emulated", first.text);
		return;
	}
	in = first;
	for (n = 0; n < MAX_SKIPPED && in.kind == INSN_SKIPPABLE; n++) {
		off += in.len;
		decode(code + off, len - off, &in);
	}
	if (off && in.kind == INSN_EMULATED) {
		out->skip = off;
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
