/* SPDX-License-Identifier: GPL-2.0-only */
/* ELF files on disk: a function symbol's file offset (what a uprobe takes), the GNU build-id. */
#ifndef JW_ELFSYM_H
#define JW_ELFSYM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Finds function @name in the ELF file @path (.symtab first, then .dynsym; "name@VERSION"
 * matches "name") and returns its file offset in @offset and its size in @size (0 when
 * unknown). Returns 0, -ENOEXEC when @path is not ELF, -ENOENT when the symbol is not there (the
 * message in @err then lists up to five close matches), or -errno when the file cannot be read.
 */
int jw_elf_func_offset(const char *path, const char *name, uint64_t *offset, uint64_t *size,
		       char *err, size_t errlen);

/*
 * The same for a stripped @path whose symbols are in @debug_path, its debug file (same
 * build-id): the symbol is looked up there, its offset taken from @path's segments. A NULL
 * @debug_path is jw_elf_func_offset().
 */
int jw_elf_func_offset_debug(const char *path, const char *debug_path, const char *name,
			     uint64_t *offset, uint64_t *size, char *err, size_t errlen);

/*
 * Whether @path is a Go program (it has a .go.buildinfo or .note.go.buildid section): return
 * probes break the goroutine stacks Go switches between, so jankwatch does not hook Go.
 */
bool jw_elf_is_go(const char *path);

/* Writes the GNU build-id of @path in lowercase hex into @hex. 0, or -ENOENT when it has none. */
int jw_elf_build_id(const char *path, char *hex, size_t len);

/*
 * Whether @path is a regular file whose GNU build-id is @hex (lowercase; any regular file when
 * @hex is NULL): a file found by name is the one meant.
 */
bool jw_elf_file_is(const char *path, const char *hex);

/* Hex of @n bytes at @id into @hex (NUL-terminated, truncated to @len). */
void jw_hex(const uint8_t *id, size_t n, char *hex, size_t len);

/*
 * How far apart two names are, for "did you mean": the edit distance, capped at @cap + 1.
 */
unsigned int jw_edit_distance(const char *a, const char *b, unsigned int cap);

/* Whether @path has a function of every name in @names (NULL-terminated). */
bool jw_elf_has_functions(const char *path, const char *const *names);

/*
 * Whether the ELF file @path calls one of @names (NULL-terminated) from another file: an
 * undefined symbol of its .dynsym ("name@VERSION" matches "name").
 */
bool jw_elf_imports_any(const char *path, const char *const *names);

/*
 * The program interpreter (PT_INTERP) @path asks for: its dynamic loader, which for musl is its
 * whole C library. 0; -ENOENT for a static executable (or a library), -ENOEXEC, -errno.
 */
int jw_elf_interpreter(const char *path, char *interp, size_t len);

/* The file range of section @name (".text") of @path. 0, or -ENOENT, -ENOEXEC, -errno. */
int jw_elf_section(const char *path, const char *name, uint64_t *offset, uint64_t *size);

/*
 * The file offset of the PLT stub through which @path calls function @name (found by the GOT
 * slot .rela.plt gives it). 0, or -ENOENT when it calls it directly or not at all.
 */
int jw_elf_plt_stub(const char *path, const char *name, uint64_t *offset);

/*
 * The function of @path that file offset @at is in, for a stripped file whose symbols do not
 * say: from the last function its unwind table (.eh_frame_hdr) knows to begin at or before @at,
 * to where the next one begins. 0, or -ENOENT when it has no such table or no such functions.
 */
int jw_elf_function_bounds(const char *path, uint64_t at, uint64_t *start, uint64_t *end);

/*
 * The file offsets where the functions of @path's unwind table begin, at most @max into @out
 * (@n of them), sorted: a stripped library's static functions too. 0; -E2BIG when it has more
 * (the first @max are there), -ENOENT when it has no table, or -errno.
 */
int jw_elf_function_starts(const char *path, uint64_t *out, size_t max, size_t *n);

/* The ELF virtual address of file offset @offset of @path's code. 0, or -ENOENT, -errno. */
int jw_elf_code_vaddr(const char *path, uint64_t offset, uint64_t *vaddr);

/* Reads @len bytes of @path at file offset @off into @buf. 0, or -errno (-EIO when short). */
int jw_file_read_at(const char *path, uint64_t off, uint8_t *buf, size_t len);

#endif
