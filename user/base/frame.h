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

#endif
