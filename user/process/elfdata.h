/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The data of an ELF file as its program would see it once loaded, read from the file: a symbol's
 * address, bytes at an address (zeros where .bss is), a pointer with its relative relocation
 * applied, a string a pointer leads to. For reading a runtime's own description of itself
 * (CPython's Py_Version, _Py_DebugOffsets, PyCode_Type's member table) before or without its
 * process. Addresses are the file's virtual addresses, before any load bias.
 */
#ifndef JW_ELFDATA_H
#define JW_ELFDATA_H

#include <stddef.h>
#include <stdint.h>

struct jw_elf_data;

/* Opens @path. NULL with errno set (ENOEXEC: not ELF). */
struct jw_elf_data *jw_elf_data__open(const char *path);

/* NULL-safe. */
void jw_elf_data__close(struct jw_elf_data *d);

/*
 * The address and size of symbol @name, of any type but a section's or a file's, defined in the
 * file (.symtab first, then .dynsym). 0, or -ENOENT.
 */
int jw_elf_data__symbol(struct jw_elf_data *d, const char *name, uint64_t *addr, uint64_t *size);

/* The address and size of section @name. 0, or -ENOENT. */
int jw_elf_data__section(struct jw_elf_data *d, const char *name, uint64_t *addr, uint64_t *size);

/*
 * Reads @len bytes at address @addr, as a load segment holds them (zeros past its file bytes).
 * 0, or -EFAULT when some of them are in no load segment, -EIO when the file is short.
 */
int jw_elf_data__read(struct jw_elf_data *d, uint64_t addr, void *buf, size_t len);

/*
 * The pointer at @addr as the dynamic loader leaves it: a relative relocation's addend (plus the
 * symbol's address for an absolute one to a symbol the file defines), else the file's bytes.
 * 0, or -errno of the read.
 */
int jw_elf_data__pointer(struct jw_elf_data *d, uint64_t addr, uint64_t *val);

/* The NUL-terminated string at @addr into @buf (truncated to @len). 0, or -errno of the read. */
int jw_elf_data__string(struct jw_elf_data *d, uint64_t addr, char *buf, size_t len);

#endif
