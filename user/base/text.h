/* SPDX-License-Identifier: GPL-2.0-only */
/* Text that comes from a target's memory or a file, made safe to print, and read. */
#ifndef JW_TEXT_H
#define JW_TEXT_H

#include <stddef.h>

/*
 * Copies the string at @src (at most @srclen bytes; it need not be terminated) into @dst of
 * @dstlen bytes, always terminated, with control characters replaced by '?'. UTF-8 is kept.
 * Returns the length written.
 */
size_t jw_printable_copy(char *dst, size_t dstlen, const char *src, size_t srclen);

/* The value of hex digit @c (either case), or -1 when it is none. */
int jw_hex_digit(char c);

#endif
