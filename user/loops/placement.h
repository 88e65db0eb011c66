/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Where a uprobe on a function's entry costs least. The kernel emulates a few instructions at a
 * probe (push of a register, call, jmp, jcc) and single-steps every other one out of line, which
 * costs some fifteen times more here (endbr64 ~18 us, push ~1 us per hit). When a function
 * starts with instructions that leave the stack pointer and memory alone (endbr64, nops, moves
 * into registers, compares) followed by an emulated one, the probe goes on that one: [rsp]
 * still holds the return address, so a return probe placed there works. Where a probe reads
 * the function's arguments (a preset naming the handler from one), the instructions passed must
 * also leave the argument registers alone. Anything the small decoder does not know stops it,
 * and the probe stays on the entry. The decoder is the architecture's (arch.h).
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

/*
 * Decides from the function's first @len bytes, @code (@len 0: unknown, the entry); @args_read:
 * a probe there reads the arguments. Every probe on one function must be placed with the same
 * @args_read, or they land apart and each costs its own trap.
 */
void jw_probe_place(const uint8_t *code, size_t len, bool args_read, struct jw_placement *out);

/*
 * The same for a return site (a handler site's, sites.h): only the stack pointer must be as it
 * was, so stores (JW_INSN_STORES) are passed too, and a few more instructions.
 */
void jw_probe_place_return(const uint8_t *code, size_t len, struct jw_placement *out);

/*
 * Reads the instructions at file offset @offset of ELF file @path and decides. Returns 0, or
 * -errno when they cannot be read (@out then says the entry).
 */
int jw_probe_place_file(const char *path, uint64_t offset, bool args_read,
			struct jw_placement *out);
int jw_probe_place_return_file(const char *path, uint64_t offset, struct jw_placement *out);

#endif
