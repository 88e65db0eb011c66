// SPDX-License-Identifier: GPL-2.0-only
/* A growable text buffer and RFC 8259 JSON strings and numbers written into it. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonbuf.h"

#define JW_BUF_MIN_CAP 64

void jw_buf_init(struct jw_buf *b)
{
	memset(b, 0, sizeof(*b));
}

void jw_buf_free(struct jw_buf *b)
{
	free(b->data);
	jw_buf_init(b);
}

void jw_buf_reset(struct jw_buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

/*
 * Makes room for @extra more bytes plus the NUL. Returns false once the buffer has failed: the
 * first failure is kept in b->err and every later write is dropped, so callers check once at the
 * end instead of after each append.
 */
static bool buf_reserve(struct jw_buf *b, size_t extra)
{
	size_t need, cap;
	char *p;

	if (b->err)
		return false;
	if (extra > SIZE_MAX - 1 - b->len)
		goto err_nomem;
	need = b->len + extra + 1;
	if (need <= b->cap)
		return true;
	cap = b->cap ? b->cap : JW_BUF_MIN_CAP;
	while (cap < need) {
		if (cap > SIZE_MAX / 2) {
			cap = need;
			break;
		}
		cap *= 2;
	}
	p = realloc(b->data, cap);
	if (!p)
		goto err_nomem;
	b->data = p;
	b->cap = cap;
	return true;

err_nomem:
	b->err = -ENOMEM;
	return false;
}

static void buf_append(struct jw_buf *b, const char *s, size_t n)
{
	if (!buf_reserve(b, n))
		return;
	memcpy(b->data + b->len, s, n);
	b->len += n;
	b->data[b->len] = '\0';
}

void jw_buf_putc(struct jw_buf *b, char c)
{
	buf_append(b, &c, 1);
}

void jw_buf_puts(struct jw_buf *b, const char *s)
{
	buf_append(b, s, strlen(s));
}

void jw_buf_printf(struct jw_buf *b, const char *fmt, ...)
{
	va_list ap;
	size_t avail;
	int n;

	/* First try whatever room is left; most writes fit and need one pass. */
	avail = b->err || !b->data ? 0 : b->cap - b->len;
	va_start(ap, fmt);
	n = vsnprintf(avail ? b->data + b->len : NULL, avail, fmt, ap);
	va_end(ap);
	if (n < 0 || b->err)
		return;
	if ((size_t)n >= avail) {
		if (!buf_reserve(b, n)) {
			/* Undo the cut-short first pass so the text ends where len says. */
			if (b->data)
				b->data[b->len] = '\0';
			return;
		}
		va_start(ap, fmt);
		vsnprintf(b->data + b->len, n + 1, fmt, ap);
		va_end(ap);
	}
	b->len += n;
}

/*
 * Overlong forms, surrogates (U+D800..U+DFFF), code points over U+10FFFF and sequences cut short
 * are all rejected by the ranges of the second byte and the continuation checks.
 */
size_t jw_utf8_seq_len(const unsigned char *s)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t n, i;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		if (c == 0xe0)
			lo = 0xa0;	/* below: overlong */
		else if (c == 0xed)
			hi = 0x9f;	/* above: surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		if (c == 0xf0)
			lo = 0x90;	/* below: overlong */
		else if (c == 0xf4)
			hi = 0x8f;	/* above: beyond U+10FFFF */
	} else {
		return 0;	/* continuation byte, C0/C1 (overlong) or F5..FF */
	}
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

/* The escape of an ASCII byte, or NULL when the byte goes out as it is. */
static const char *json_escape(unsigned char c, char tmp[8])
{
	switch (c) {
	case '"':
		return "\\\"";
	case '\\':
		return "\\\\";
	case '\b':
		return "\\b";
	case '\f':
		return "\\f";
	case '\n':
		return "\\n";
	case '\r':
		return "\\r";
	case '\t':
		return "\\t";
	}
	/* DEL is legal JSON, but escaping it keeps terminals and log viewers sane. */
	if (c < 0x20 || c == 0x7f) {
		snprintf(tmp, 8, "\\u%04x", c);
		return tmp;
	}
	return NULL;
}

void jw_json_str(struct jw_buf *b, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	const unsigned char *run;
	const char *esc;
	char tmp[8];
	size_t n;

	if (!s) {
		jw_buf_puts(b, "null");
		return;
	}
	jw_buf_putc(b, '"');
	/* Plain bytes are copied in runs; only escapes and bad bytes break a run. */
	run = p;
	while (*p) {
		n = jw_utf8_seq_len(p);
		esc = n == 1 ? json_escape(*p, tmp) : NULL;
		if (n > 1 || (n == 1 && !esc)) {
			p += n;
			continue;
		}
		buf_append(b, (const char *)run, p - run);
		/* Each byte that starts no valid sequence becomes one U+FFFD. */
		jw_buf_puts(b, esc ? esc : "\xef\xbf\xbd");
		run = ++p;
	}
	buf_append(b, (const char *)run, p - run);
	jw_buf_putc(b, '"');
}

void jw_json_num(struct jw_buf *b, double v, int decimals)
{
	if (!isfinite(v)) {
		jw_buf_puts(b, "null");
		return;
	}
	jw_buf_printf(b, "%.*f", decimals < 0 ? 0 : decimals, v);
}

void jw_json_key(struct jw_buf *b, const char *key, bool first)
{
	if (!first)
		jw_buf_putc(b, ',');
	jw_json_str(b, key);
	jw_buf_putc(b, ':');
}

void jw_json_u64_field(struct jw_buf *b, const char *key, uint64_t v)
{
	jw_json_key(b, key, false);
	jw_buf_printf(b, "%" PRIu64, v);
}
