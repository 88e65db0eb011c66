/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A return probe replaces the return address of the function it hooks with the uprobes
 * trampoline's for as long as the function runs. A sample taken meanwhile carries the real ones
 * (jw_sample_rec's pending returns); this puts them back into its copied stack and registers
 * before DWARF unwinding, which would stop at the trampoline.
 */
#ifndef JW_RETURNS_H
#define JW_RETURNS_H

#include <stdint.h>

#include "jankwatch/abi.h"
#include "stacks/regs.h"

/*
 * Puts sample @s's pending return addresses back into @stack (its copy, from address @base,
 * s->stack_size bytes) and @regs (its registers, laid out as @l says). Pending return i
 * (innermost first) belongs to a function entered with the stack pointer at ret_sp[i]: the
 * trampoline's address is the word at ret_sp[i] on x86-64 (pushed by the call), and on arm64
 * the link register or the slot below ret_sp[i] where the function saved it: the highest word
 * holding the trampoline's address between ret_sp[i] and the one inside it. A capture without
 * the trampoline's address (an older jankwatch's, x86-64 only) gets the slot at ret_sp[i].
 */
void jw_put_back_returns(const struct jw_ureg_layout *l, const struct jw_sample_rec *s,
			 uint64_t base, uint8_t *stack, uint64_t *regs);

#endif
