/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * DWARF CFI unwinding of a copied user stack with elfutils, as perf's unwind-libdw does: the
 * Dwfl's modules give the CFI, our callbacks give the registers and read the copy.
 */
#ifndef JW_UNWIND_H
#define JW_UNWIND_H

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "stacks/regs.h"

/*
 * One sample to unwind: registers 0..@n_regs-1 in DWARF numbering, the pc, and the stack copied
 * from @base, at or below the stack pointer (its red zone). @layout says which of the registers
 * are the stack and frame pointers and the link register (NULL: not known, the leaf is taken
 * as libdwfl finds it).
 */
struct jw_unwind_input {
	pid_t tid;
	const uint64_t *regs;
	size_t n_regs;
	uint64_t pc;
	const struct jw_ureg_layout *layout;
	uint64_t base;		/* the address of stack[0] */
	const uint8_t *stack;
	size_t stack_size;
};

struct jw_modsyms;

/*
 * Lives as long as the Dwfl it is attached to; points at the sample being unwound. @syms (may
 * be NULL) names the addresses of code without CFI, whose prologue is read from its symbol on.
 */
struct jw_unwinder {
	const struct jw_unwind_input *in;
	bool attached;
	struct jw_modsyms *syms;
};

/*
 * Attaches @u to @dwfl (whose modules are process @pid's). Returns 0, or -EINVAL when libdwfl
 * refuses (the message says why on -v).
 */
int jw_unwind_attach(struct jw_unwinder *u, Dwfl *dwfl, pid_t pid);

/*
 * Unwinds @in into @pcs, leaf first, at most @max frames; @activation[i] is true for a frame
 * whose pc is not a return address (the leaf, signal frames). Returns the frame count.
 *
 * A leaf with no CFI where a link register holds its caller (arm64's vdso is built without any)
 * is taken for a function that has saved nothing on the stack, when it has not saved its frame
 * record there (x29/x30 at the frame pointer): the caller is the link register, in the same
 * registers. libdwfl's own fallback would take the frame record at the frame pointer for the
 * leaf's, which is the caller's, and skip the caller's frame with a wrong stack pointer.
 */
size_t jw_unwind(struct jw_unwinder *u, Dwfl *dwfl, const struct jw_unwind_input *in,
		 uint64_t *pcs, bool *activation, size_t max);

#endif
