/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Where a uprobe on a function's entry costs least. The kernel emulates a few instructions at a
 * probe (push of a register, call, jmp, jcc) and single-steps every other one out of line, which
 * costs some fifteen times more here (endbr64 ~18 us, push ~1 us per hit). When a function
 * starts with instructions that leave the stack pointer, memory and the argument registers
 * alone (endbr64, nops, moves into scratch registers, compares) followed by an emulated one, the
 * probe goes on that one: [rsp] still holds the return address, so a return probe placed there
 * works, and the arguments are still where the entry had them. Anything the small decoder does
 * not know stops it, and the probe stays on the entry. The decoder is the architecture's
 * (arch.h).
 */
#ifndef JW_PLACEMENT_H
#define JW_PLACEMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct jw_placement {
	uint32_t skip;		/* bytes past the entry the probe goes; 0: the entry */
	bool emulated;		/* the instruction there is one the kernel emulates */
	char why[192];		/* what was there, for -v */
};

/* Decides from the function's first @len bytes, @code (@len 0: unknown, the entry). */
void jw_probe_place(const uint8_t *code, size_t len, struct jw_placement *out);

/*
 * Reads the instructions at file offset @offset of ELF file @path and decides. Returns 0, or
 * -errno when they cannot be read (@out then says the entry).
 */
int jw_probe_place_file(const char *path, uint64_t offset, struct jw_placement *out);

#endif
