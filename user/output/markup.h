/* SPDX-License-Identifier: GPL-2.0-only */
/* Text put into SVG and HTML: escaped, and always well-formed whatever bytes it came as. */
#ifndef JW_MARKUP_H
#define JW_MARKUP_H

#include <stddef.h>
#include <stdio.h>

/*
 * Writes @s to @f as the text of an element or an attribute's value (quoted with either quote):
 * & < > " ' as entities, control characters and bytes that are not UTF-8 as '?' (a name read
 * from a target's memory must not make the file one a browser refuses). Returns the characters
 * written, entities counting one.
 */
size_t jw_markup_put(FILE *f, const char *s);

/*
 * The same, at most @max characters: a longer @s is cut to @max - 2 and ends in "..". With @max
 * under 3, nothing is written. Returns the characters written.
 */
size_t jw_markup_put_cut(FILE *f, const char *s, size_t max);

/* The characters (UTF-8 sequences; a byte that is not one counts one) of @s. */
size_t jw_markup_chars(const char *s);

#endif
