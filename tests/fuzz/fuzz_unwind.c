// SPDX-License-Identifier: GPL-2.0-only
/*
 * The unwinder fed random registers and stack copies, against this process's own modules: what
 * a sample of a target holds is the target's to choose.
 */
#include "fuzz_common.h"
#include "jankwatch/abi.h"
#include "stacks/symbolize.h"
#include "stacks/unwind.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct jw_symbolizer *sym;
	uint64_t regs[JW_UREG_MAX] = { 0 }, pcs[JW_MAX_USER_FRAMES];
	bool activation[JW_MAX_USER_FRAMES];
	struct jw_unwind_input in = { .regs = regs, .n_regs = JW_UREG_COUNT };
	struct jw_frame fr;
	size_t n, i;

	if (!sym) {
		sym = jw_symbolizer__new(getpid());
		if (!sym)
			abort();
	}
	n = size < sizeof(regs) ? size : sizeof(regs);
	memcpy(regs, data, n);
	/* Half the time, a pc in this process's code, so the unwinder has CFI to follow. */
	if (size && (data[0] & 1))
		regs[JW_UREG_IP] = (uint64_t)(uintptr_t)&LLVMFuzzerTestOneInput + (data[0] >> 1);
	in.tid = getpid();
	in.pc = regs[JW_UREG_IP];
	in.base = regs[JW_UREG_SP];
	in.stack = data + n;
	in.stack_size = size - n;
	n = jw_symbolizer__unwind(sym, &in, pcs, activation, JW_MAX_USER_FRAMES);
	for (i = 0; i < n; i++)
		jw_symbolizer__frame(sym, pcs[i], !activation[i], &fr);
	return 0;
}
