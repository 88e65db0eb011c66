/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The parts a compiler split a function of a stripped ELF file into: a PGO build's hot and cold
 * parts (GCC's .cold), which only the function's jumps lead to. Where the file names the
 * function but not its parts (Debian's CPython 3.13 and 3.14 keep most of
 * _PyEval_EvalFrameDefault in its cold part), its frames' addresses are in either.
 */
#ifndef JW_ELFPARTS_H
#define JW_ELFPARTS_H

#include <stddef.h>
#include <stdint.h>

/* A range of ELF addresses, [lo, hi). */
struct jw_elf_range {
	uint64_t lo;
	uint64_t hi;
};

/*
 * The parts of function @name of ELF file @path into @out (room for @max): the function itself
 * first, then each function-sized range of its unwind table that its jumps lead into the middle
 * of, or that jumps back into the middle of it (not a tail call's target, entered at its start
 * only). ELF addresses. How many; 0 when the function is not there.
 */
size_t jw_elf_function_parts(const char *path, const char *name, struct jw_elf_range *out,
			     size_t max);

#endif
