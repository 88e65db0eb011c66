/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Where functions begin in code that neither names them nor has CFI for them: a stripped
 * library's static functions (musl's printf_core, Debian's musl has neither for most of its
 * code). Their entries are the targets of the module's direct calls and the code addresses it
 * takes (a callback's: musl's sn_write), found by a linear sweep of its executable code
 * (jw_arch_scan_entries()); the prologue reader (unwind.c) starts there. A function reached
 * only by a jump is not among them: the code from the entry before it crosses a return, where
 * the prologue sweep knows no frame, and a guess is kept only where its return address follows
 * a call, so a frame is missed rather than made up.
 */
#ifndef JW_ENTRIES_H
#define JW_ENTRIES_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>

/* The most executable code a module's calls are read in: past it, no entries (a browser's). */
#define JW_ENTRIES_MAX_CODE (64u << 20)

/*
 * The targets of the direct calls, and the code addresses taken, in @elf's executable sections (its executable segments when
 * it has no section headers, the vdso read from memory), as the ELF's own addresses, sorted
 * without repeats, into a new array *@entries (NULL when none) of *@n. 0, -ENOMEM, or -E2BIG
 * past JW_ENTRIES_MAX_CODE.
 */
int jw_entries_scan(Elf *elf, GElf_Addr **entries, size_t *n);

/* The highest of the @n sorted @entries at most @addr, into *@entry; false when none is. */
bool jw_entries_below(const GElf_Addr *entries, size_t n, GElf_Addr addr, GElf_Addr *entry);

#endif
