/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * User addresses of one process named with elfutils: module path, GNU build-id, the module's
 * ELF address, function+offset. One Dwfl per process, refreshed when an address falls in no
 * module it knows (the process mapped something new, or exec'd).
 */
#ifndef JW_SYMBOLIZE_H
#define JW_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "frame.h"

struct jw_unwind_input;

struct jw_symbolizer;

/*
 * Reads process @pid's mappings and opens every mapped ELF file now, so that addresses can
 * still be named after the process exits. NULL with errno set on failure.
 */
struct jw_symbolizer *jw_symbolizer__new(pid_t pid);

/* NULL-safe. */
void jw_symbolizer__free(struct jw_symbolizer *s);

/*
 * Names user address @pc. @return_address: @pc is a caller's return address, so the call
 * instruction is looked up (pc - 1). Never fails: an unknown module leaves fr->module NULL, an
 * unknown function fr->symbol NULL. The strings live as long as @s.
 */
void jw_symbolizer__frame(struct jw_symbolizer *s, uint64_t pc, bool return_address,
			  struct jw_frame *fr);

/* The build-id of the process's main executable as hex, or NULL. Lives as long as @s. */
const char *jw_symbolizer__exe_build_id(struct jw_symbolizer *s);

/*
 * Unwinds a copied user stack with DWARF CFI (see unwind.h) into @pcs, leaf first; @activation
 * says which pcs are not return addresses. Returns the number of frames (0 when it cannot).
 */
size_t jw_symbolizer__unwind(struct jw_symbolizer *s, const struct jw_unwind_input *in,
			     uint64_t *pcs, bool *activation, size_t max);

#endif
