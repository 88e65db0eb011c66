/* SPDX-License-Identifier: GPL-2.0-only */
/* A stack frame as the symbolizer names it; the unit every writer works on. */
#ifndef JW_FRAME_H
#define JW_FRAME_H

#include <stdbool.h>
#include <stdint.h>

enum jw_frame_kind {
	JW_FRAME_NATIVE = 0,	/* user code in an ELF module (or unknown) */
	JW_FRAME_KERNEL,	/* kernel code */
	JW_FRAME_JIT,		/* a JIT frame named by a perf map */
	JW_FRAME_PYTHON,	/* a CPython frame: pc its code object, rel_pc the line, module the file */
};

/*
 * The strings are owned by whoever made the frame (the symbolizer) and must outlive every
 * tree or buffer the frame is added to.
 */
struct jw_frame {
	enum jw_frame_kind kind;
	uint64_t pc;		/* the runtime address */
	uint64_t rel_pc;	/* the module's ELF virtual address (what addr2line takes) */
	const char *module;	/* the module's path; NULL when the address is in no module */
	const char *build_id;	/* lowercase hex; NULL when the module has none */
	const char *symbol;	/* function name; NULL when unknown */
	uint64_t sym_off;	/* pc - the symbol's start, when symbol is set */
	const char *src;	/* "file:line[:col]" when known: JIT maps, or DWARF line tables */
};

/*
 * Code a loop preset found in a stripped file and names itself (GTK's frame clock phases): the
 * ELF addresses [@lo, @hi) of one function of that file.
 */
struct jw_code_name {
	uint64_t lo, hi;
	const char *name;
};

/*
 * A frame's name, as folded lines, heaviest_stack, groups and profiles show it. In order of
 * preference: the symbol; for a kernel frame without one "[kernel]+0x<pc>" (the kernel has no
 * module path to name); for a JIT frame without one "0x<pc>"; the module's base name and the
 * ELF address ("libc.so.6+0x27a4f", which addr2line takes back); the bare runtime address. A
 * name never depends on the process's load address when it can avoid it, so stacks compare
 * across processes. Writes at most @len bytes (NUL included) and returns @buf.
 */
char *jw_frame_name(const struct jw_frame *fr, char *buf, size_t len);

/* The same into @buf (may be NULL when @len is 0); returns the full name's length. */
int jw_frame_name_n(const struct jw_frame *fr, char *buf, size_t len);

#endif
