// SPDX-License-Identifier: GPL-2.0-only
#include <string.h>

#include "base/jsonbuf.h"
#include "output/markup.h"

/* Writes the character at @s (its bytes, or an entity, or '?'); returns the bytes it took. */
static size_t put_char(FILE *f, const unsigned char *s)
{
	size_t n;

	switch (*s) {
	case '&':
		fputs("&amp;", f);
		return 1;
	case '<':
		fputs("&lt;", f);
		return 1;
	case '>':
		fputs("&gt;", f);
		return 1;
	case '"':
		fputs("&quot;", f);
		return 1;
	case '\'':
		fputs("&#39;", f);
		return 1;
	}
	if (*s < 0x20 || *s == 0x7f) {
		fputc('?', f);
		return 1;
	}
	n = jw_utf8_seq_len(s);
	if (!n) {
		fputc('?', f);
		return 1;
	}
	fwrite(s, 1, n, f);
	return n;
}

/* The bytes of the character at @s, as put_char() takes it. */
static size_t char_len(const unsigned char *s)
{
	size_t n = *s < 0x80 ? 1 : jw_utf8_seq_len(s);

	return n ? n : 1;
}

size_t jw_markup_chars(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = 0;

	while (*p) {
		p += char_len(p);
		n++;
	}
	return n;
}

size_t jw_markup_put(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = 0;

	while (*p) {
		p += put_char(f, p);
		n++;
	}
	return n;
}

size_t jw_markup_put_cut(FILE *f, const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = 0, keep;

	if (max < 3)
		return 0;
	if (jw_markup_chars(s) <= max)
		return jw_markup_put(f, s);
	keep = max - 2;
	while (*p && n < keep) {
		p += put_char(f, p);
		n++;
	}
	fputs("..", f);
	return n + 2;
}
