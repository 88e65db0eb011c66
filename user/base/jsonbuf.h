/* SPDX-License-Identifier: GPL-2.0-only */
/* A growable text buffer and RFC 8259 JSON writing into it. */
#ifndef JW_JSONBUF_H
#define JW_JSONBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct jw_buf {
	char *data;	/* always NUL-terminated once anything was written */
	size_t len;
	size_t cap;
	int err;	/* first -ENOMEM seen; later writes are ignored */
};

void jw_buf_init(struct jw_buf *b);
void jw_buf_free(struct jw_buf *b);
void jw_buf_reset(struct jw_buf *b);	/* len = 0, keeps the memory */
void jw_buf_putc(struct jw_buf *b, char c);
void jw_buf_puts(struct jw_buf *b, const char *s);
void jw_buf_printf(struct jw_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Appends @s as a JSON string, quotes included: '"', '\\' and control bytes escaped, bytes that
 * are not valid UTF-8 replaced by U+FFFD. NULL appends null.
 */
void jw_json_str(struct jw_buf *b, const char *s);

/*
 * Length of the well-formed UTF-8 sequence at @s (Unicode 15, table 3-7), or 0 when the byte at
 * @s does not start one (the NUL ends the string: a sequence cut short is none).
 */
size_t jw_utf8_seq_len(const unsigned char *s);

/* Appends an object member's key and colon, after a comma unless it is the @first. */
void jw_json_key(struct jw_buf *b, const char *key, bool first);

/* Appends a member (not the first) whose value is an unsigned integer. */
void jw_json_u64_field(struct jw_buf *b, const char *key, uint64_t v);

/* Appends a number with @decimals digits after the point ("300.125"); NaN/inf become null. */
void jw_json_num(struct jw_buf *b, double v, int decimals);

#endif
