// SPDX-License-Identifier: GPL-2.0-only
#include <string.h>

#include "stacks/returns.h"

/* The offset in the copy of the highest word in [@lo, @hi] equal to @value, or -1. */
static int64_t find_word_down(const uint8_t *stack, uint64_t lo, uint64_t hi, uint64_t value)
{
	uint64_t at, word;

	for (at = hi & ~(uint64_t)7;; at -= sizeof(word)) {
		if (at < lo)
			return -1;
		memcpy(&word, stack + at, sizeof(word));
		if (word == value)
			return (int64_t)at;
		if (at < sizeof(word))
			return -1;
	}
}

void jw_put_back_returns(const struct jw_ureg_layout *l, const struct jw_sample_rec *s,
			 uint64_t base, uint8_t *stack, uint64_t *regs)
{
	size_t i, n = s->n_rets < JW_MAX_NEST ? s->n_rets : JW_MAX_NEST;
	uint64_t lo = 0;	/* the copy's offsets above the pending return inside */
	int64_t at;

	if (!n || s->stack_size < sizeof(uint64_t))
		return;
	if (s->tramp && l->lr >= 0 && regs[l->lr] == s->tramp)
		regs[l->lr] = s->ret_addr[0];
	for (i = 0; i < n; i++) {
		uint64_t top;

		if (s->ret_sp[i] < base + lo)
			continue;
		top = s->ret_sp[i] - base;
		if (top > s->stack_size - sizeof(uint64_t))
			top = s->stack_size - sizeof(uint64_t);
		if (s->tramp)
			at = find_word_down(stack, lo, top, s->tramp);
		else
			at = s->ret_sp[i] - base == top ? (int64_t)top : -1;
		if (at < 0)
			continue;
		memcpy(stack + at, &s->ret_addr[i], sizeof(uint64_t));
		lo = (uint64_t)at + sizeof(uint64_t);
	}
}
