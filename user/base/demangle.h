/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * C++ names as their authors wrote them: symbols mangled by the Itanium C++ ABI (`_Z...`, what
 * g++ and clang emit on Linux) demangled with the demangler of GCC's support library
 * (libsupc++, linked in statically: the binary needs no C++ runtime).
 */
#ifndef JW_DEMANGLE_H
#define JW_DEMANGLE_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Demangles @name into @buf of @size bytes (cut to fit, always terminated). Returns true when
 * @buf holds the demangled name; false, leaving @buf alone, when @name is not a mangled C++
 * name (a C symbol, a truncated or invalid mangling) or memory ran out.
 */
bool jw_demangle(const char *name, char *buf, size_t size);

#endif
