/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The sweep both architectures' frame readers (<arch>_frame.c) run over a function's code, private
 * to user/arch/: the stack pointer and the saved registers followed instruction by instruction
 * from the entry, and across the blocks a return or a jump leaves, which only a branch reaches:
 * there the state is the one the code had at the branches that lead there.
 */
#ifndef JW_ARCH_SWEEP_H
#define JW_ARCH_SWEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/arch.h"

/* What the code did to the frame so far, relative to the entry's stack pointer. */
struct jw_sweep {
	int64_t sp;		/* the stack pointer (negative: lowered) */
	int64_t fp;		/* the frame pointer, when fp_known (arm64's x29 = sp + n) */
	bool fp_known;
	unsigned int n_saved;
	struct {
		unsigned int reg;	/* the architecture's register number */
		int64_t at;		/* its slot */
	} saved[JW_ARCH_MAX_SAVED];
};

/* Where the code goes after an instruction. */
enum jw_sweep_flow {
	JW_SWEEP_NEXT,		/* on, its effect followed */
	JW_SWEEP_LOST,		/* on, with an effect on the frame the sweep does not follow (an
				 * alloca, sp from a register): not known until a return ends it */
	JW_SWEEP_END,		/* nowhere next: a return, a jump, a trap */
};

struct jw_sweep_insn {
	size_t len;
	enum jw_sweep_flow flow;
	bool branches;		/* to @target too (an offset in the code), conditionally or not */
	int64_t target;
};

/*
 * Decodes the instruction at @code + @at (@len bytes there) into @in and applies its effect to
 * @w; false when it cannot be decoded.
 */
typedef bool (*jw_sweep_step_fn)(struct jw_sweep *w, const uint8_t *code, size_t at, size_t len,
				 struct jw_sweep_insn *in);

/* A register saved at @at, the first time only: a later store is not the caller's value. */
void jw_sweep_save(struct jw_sweep *w, unsigned int reg, int64_t at);

/* A register loaded back from @at (an epilogue's): no longer to be read from its slot. */
void jw_sweep_restore(struct jw_sweep *w, unsigned int reg, int64_t at);

/* The distinct frames a sweep knew at the branches on its way, the most recent first. */
#define JW_SWEEP_SEEN 4

struct jw_sweep_seen {
	struct jw_sweep s[JW_SWEEP_SEEN];
	size_t n;
};

/*
 * Sweeps @code (@len bytes, up to the point wanted) with @step into @w: 0; -ENOENT for code not
 * decoded; -EAGAIN when the state at the end is not known for sure: in a block no forward branch
 * reaches (a loop's body only its test below jumps back to, a jump table's case, or one only
 * such blocks branch to), after an effect not followed (an alloca), where two branches into one
 * place disagree. Then @seen (NULL: not wanted) holds the frames the code had at the branches
 * before it, for a caller that can check them.
 */
int jw_sweep_code(const uint8_t *code, size_t len, jw_sweep_step_fn step, struct jw_sweep *w,
		  struct jw_sweep_seen *seen);

/* An architecture's frame from a sweep's state: 0, or -ENOENT when it makes none. */
typedef int (*jw_sweep_frame_fn)(const struct jw_sweep *w, struct jw_arch_frame *frame);

/* jw_arch_prologue_guesses() for an architecture's @step and @to_frame. */
size_t jw_sweep_guesses(const uint8_t *code, size_t len, jw_sweep_step_fn step,
			jw_sweep_frame_fn to_frame, struct jw_arch_frame *frames, size_t max);

#endif
